//! The terminal tests' tmux (tests/top_tmux.rs, drill_drain.rs, drill_status_top.rs): a tmux
//! server of its own (its own socket, no config file), one session running `sh` in a clean
//! environment; keys are typed with `send-keys`, the screen read with `capture-pane`.
//!
//! [`available`] says whether tmux is installed; a test without it is skipped (with a
//! message), unless `VMCTL_REQUIRE_TMUX=1` (.ci/run) makes that a failure.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Whether tmux runs here. Without it: a panic under `VMCTL_REQUIRE_TMUX=1` (CI may not skip
/// the terminal tests), else false and a line saying the test is skipped.
pub fn available() -> bool {
    let found = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("VMCTL_REQUIRE_TMUX").as_deref() != Ok("1"),
            "tmux is required (VMCTL_REQUIRE_TMUX=1) but not installed"
        );
        eprintln!("skipped: tmux is not installed (set VMCTL_REQUIRE_TMUX=1 to fail instead)");
    }
    found
}

/// The session's name on its own server.
const SESSION: &str = "t";

/// One tmux server and its session; the server is killed when this is dropped.
pub struct Tmux {
    socket: String,
    dir: tempfile::TempDir,
}

impl Tmux {
    /// A `width`×`height` terminal running `sh` with only PATH, `TERM=xterm-256color`,
    /// `LANG=C.UTF-8`, `PS1=$ ` and `env` (`NAME=value` each: `NO_COLOR=1`,
    /// `VMCTL_JOURNAL=off`…) in its environment; returns once the shell's prompt is shown.
    /// `name` keeps the sockets of tests running at once apart.
    pub fn start(name: &str, width: u16, height: u16, env: &[&str]) -> Tmux {
        let dir = tempfile::tempdir().unwrap();
        let socket = format!("vmctl-{name}-{}", std::process::id());
        let t = Tmux { socket, dir };
        let ok = t
            .cmd(&[
                "new-session",
                "-d",
                "-s",
                SESSION,
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
            ])
            .args(["env", "-i"])
            .arg(format!(
                "PATH={}",
                std::env::var("PATH").unwrap_or_default()
            ))
            .args(["TERM=xterm-256color", "LANG=C.UTF-8", "PS1=$ "])
            .args(env)
            .arg("sh")
            .status()
            .unwrap();
        assert!(ok.success());
        // What scrolled off stays readable for `history`.
        assert!(
            t.cmd(&["set-option", "-t", SESSION, "history-limit", "20000"])
                .status()
                .unwrap()
                .success()
        );
        // Type only once the shell is ready (its prompt).
        t.wait_for("the shell", |s| s.contains('$'));
        t
    }

    /// A tmux command on this server.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]).args(args);
        c
    }

    /// Types `keys` (tmux key names: `Enter`, `Escape`, `C-c`… or text).
    pub fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", SESSION];
        args.extend_from_slice(keys);
        assert!(self.cmd(&args).status().unwrap().success());
    }

    /// The visible screen.
    pub fn screen(&self) -> String {
        let out = self
            .cmd(&["capture-pane", "-p", "-t", SESSION])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The visible screen, wrapped lines joined: a line wider than the terminal is one long
    /// line (what a table that does not fit looks like).
    pub fn joined(&self) -> String {
        let out = self
            .cmd(&["capture-pane", "-p", "-J", "-t", SESSION])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Everything the pane showed, wrapped lines joined.
    pub fn history(&self) -> String {
        let out = self
            .cmd(&["capture-pane", "-p", "-J", "-S", "-", "-t", SESSION])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `1` while the program runs in the alternate screen, `0` once it has left it.
    pub fn alternate_on(&self) -> String {
        let out = self
            .cmd(&["display", "-p", "-t", SESSION, "#{alternate_on}"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The screen once `f` holds for it; fails after 60 s (a bound against a hang, not a
    /// timing) with the screen in the message.
    pub fn wait_for(&self, what: &str, f: impl Fn(&str) -> bool) -> String {
        self.wait_for_within(what, Duration::from_secs(60), f)
    }

    /// [`Tmux::wait_for`] on the [`Tmux::joined`] screen.
    pub fn wait_for_joined(&self, what: &str, f: impl Fn(&str) -> bool) -> String {
        self.wait_on(what, Duration::from_secs(60), Tmux::joined, f)
    }

    /// [`Tmux::wait_for`] with another bound.
    pub fn wait_for_within(&self, what: &str, limit: Duration, f: impl Fn(&str) -> bool) -> String {
        self.wait_on(what, limit, Tmux::screen, f)
    }

    fn wait_on(
        &self,
        what: &str,
        limit: Duration,
        capture: fn(&Tmux) -> String,
        f: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let s = capture(self);
            if f(&s) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A directory of this terminal's own (pid files and the like), removed with it.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]).status();
    }
}
