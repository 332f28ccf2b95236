//! `vmctl top` end to end in a real terminal: tmux runs it against the fake API server and
//! the scripted KubeVirt (`support::kubevirt_sim`); keys are sent with `tmux send-keys`, the
//! screen read with `tmux capture-pane`. The migration appears and moves on, `a` then `y`
//! deletes its VMIM on the server, `q` exits 0 with the terminal restored (the alternate
//! screen left); SIGTERM restores it too, and so does a panic (a key that panics exists in
//! test builds only: `VMCTL_TEST_PANIC_KEY`, see `operate::top`). Skipped (with a message) when tmux is missing,
//! unless `VMCTL_REQUIRE_TMUX=1` (CI) makes that a failure. Nothing here is timed beyond
//! generous bounds against a hang.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use support::kubevirt_sim::{self, KubeVirtSim, Script};
use support::{FakeApiServer, Fault, Method};
use vmctl::cluster::Kind;

fn tmux_available() -> bool {
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

/// A tmux server of its own (its own socket), one session running a shell.
struct Tmux {
    socket: String,
    dir: tempfile::TempDir,
}

impl Tmux {
    fn start(name: &str) -> Tmux {
        let dir = tempfile::tempdir().unwrap();
        let socket = format!("vmctl-top-{name}-{}", std::process::id());
        let t = Tmux { socket, dir };
        let ok = t
            .cmd(&["new-session", "-d", "-s", "top", "-x", "160", "-y", "48"])
            .args(["env", "-i"])
            .arg(format!(
                "PATH={}",
                std::env::var("PATH").unwrap_or_default()
            ))
            .args([
                "TERM=xterm-256color",
                "LANG=C.UTF-8",
                "NO_COLOR=1",
                "PS1=$ ",
            ])
            .args(["sh"])
            .status()
            .unwrap();
        assert!(ok.success());
        // Type only once the shell is ready (its prompt).
        t.wait_for("the shell", |s| s.contains('$'));
        t
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]).args(args);
        c
    }

    fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "top"];
        args.extend_from_slice(keys);
        assert!(self.cmd(&args).status().unwrap().success());
    }

    fn screen(&self) -> String {
        let out = self
            .cmd(&["capture-pane", "-p", "-t", "top"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn alternate_on(&self) -> String {
        let out = self
            .cmd(&["display", "-p", "-t", "top", "#{alternate_on}"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn wait_for(&self, what: &str, f: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let s = self.screen();
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

    fn pid_file(&self) -> PathBuf {
        self.dir.path().join("pid")
    }

    /// Types the command line that runs `vmctl top` (its pid written first, then exec'd;
    /// the shell prints its exit code afterwards).
    fn run_top(&self, kubeconfig: &Path) {
        self.run_top_with(kubeconfig, "");
    }

    fn run_top_with(&self, kubeconfig: &Path, extra: &str) {
        self.run_top_env(kubeconfig, "", extra);
    }

    /// `env` (`NAME=value `) is put before the exec: in that one process's environment.
    fn run_top_env(&self, kubeconfig: &Path, env: &str, extra: &str) {
        let line = format!(
            "sh -c 'echo $$ > {}; {env}exec {} --kubeconfig {} top -A {extra}'; echo \"ex\"\"it=$?\"",
            self.pid_file().display(),
            env!("CARGO_BIN_EXE_vmctl"),
            kubeconfig.display()
        );
        self.send(&[&line, "Enter"]);
    }

    fn pid(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(p) = std::fs::read_to_string(self.pid_file())
                && !p.trim().is_empty()
            {
                return p.trim().to_string();
            }
            assert!(Instant::now() < deadline, "no pid file");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]).status();
    }
}

struct Lab {
    server: Arc<FakeApiServer>,
    _sim: KubeVirtSim,
    kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

fn lab() -> Lab {
    let server = Arc::new(FakeApiServer::start_blocking(kubevirt_sim::cluster(
        "v1.8.4",
    )));
    let sim = KubeVirtSim::start(
        &server,
        Script {
            phase_ticks: 5,
            hold_running: true,
            ..Script::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    Lab {
        server,
        _sim: sim,
        kubeconfig,
        _dir: dir,
    }
}

fn migrate(server: &FakeApiServer, name: &str, vmi: &str) {
    server.add_object(json!({"apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstanceMigration",
        "metadata": {"name": name, "namespace": "prod"},
        "spec": {"vmiName": vmi}}));
}

#[test]
fn top_follows_a_migration_aborts_it_and_restores_the_terminal() {
    if !tmux_available() {
        return;
    }
    let lab = lab();
    let t = Tmux::start("abort");
    t.run_top(&lab.kubeconfig);
    t.wait_for("the first frame", |s| s.contains("0 migrations in flight"));
    assert_eq!(t.alternate_on(), "1", "top runs in the alternate screen");

    // The first frame after one LIST per kind; then only watches.
    let requests = lab.server.requests();
    for kind in [
        Kind::VirtualMachineInstance,
        Kind::VirtualMachineInstanceMigration,
        Kind::Pod,
        Kind::KubeVirt,
    ] {
        let lists = requests
            .iter()
            .filter(|r| r.is_list() && r.kind == Some(kind))
            .count();
        assert_eq!(lists, 1, "{kind:?} listed once: {requests:#?}");
    }
    lab.server.reset_requests();

    migrate(&lab.server, "mig-db", "db-01");
    let first = t.wait_for("the migration", |s| {
        s.contains("prod/db-01") && s.contains("mig-db")
    });
    // It moves on: KubeVirt's phases, then streaming to node-2 with both pods named.
    let running = t.wait_for("the migration running", |s| {
        s.contains("Running") && s.contains("node-2") && s.contains("virt-launcher-db-01-t")
    });
    assert_ne!(first, running);
    assert!(running.contains("virt-launcher-db-01-abcde"), "{running}");
    let lists: Vec<String> = lab
        .server
        .requests()
        .iter()
        .filter(|r| r.is_list())
        .map(|r| r.line())
        .collect();
    assert!(lists.is_empty(), "no LIST while nothing fails: {lists:?}");

    // Abort: the confirmation, then the VMIM deleted on the server.
    t.send(&["a"]);
    t.wait_for("the confirmation", |s| {
        s.contains("Abort migration prod/mig-db of VMI db-01?")
    });
    t.send(&["y"]);
    let done = t.wait_for("the abort line", |s| {
        s.contains("abort requested: deleted prod/mig-db")
    });
    let deletes = lab.server.count_requests(|r| {
        r.method == Method::DELETE && r.path.ends_with("/virtualmachineinstancemigrations/mig-db")
    });
    assert_eq!(deletes, 1, "{done}");

    // Help, then quit: exit 0, the alternate screen left, the shell back.
    t.send(&["?"]);
    t.wait_for("the help", |s| s.contains("Help (any key closes)"));
    t.send(&["Escape"]);
    t.send(&["q"]);
    let after = t.wait_for("the exit", |s| s.contains("exit="));
    assert!(after.contains("exit=0"), "{after}");
    assert_eq!(t.alternate_on(), "0", "the alternate screen is left");
    assert!(!after.contains("Migrations in flight"), "{after}");
}

#[test]
fn sigterm_sigint_and_ctrl_c_end_it_with_the_terminal_restored() {
    if !tmux_available() {
        return;
    }
    let lab = lab();
    migrate(&lab.server, "mig-db", "db-01");
    let t = Tmux::start("term");
    t.run_top(&lab.kubeconfig);
    t.wait_for("the first frame", |s| s.contains("mig-db"));
    let pid = t.pid();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let after = t.wait_for("the exit", |s| s.contains("exit="));
    assert!(after.contains("exit=0"), "{after}");
    assert_eq!(t.alternate_on(), "0");

    // SIGINT from outside (in raw mode Ctrl-C is a key, below): the same.
    std::fs::remove_file(t.pid_file()).unwrap();
    t.send(&["clear", "Enter"]);
    t.run_top(&lab.kubeconfig);
    t.wait_for("the first frame", |s| s.contains("mig-db"));
    let pid = t.pid();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let after = t.wait_for("the exit", |s| s.contains("exit="));
    assert!(after.contains("exit=0"), "{after}");
    assert_eq!(t.alternate_on(), "0");

    // Ctrl-C is a key in raw mode: it quits the same way.
    std::fs::remove_file(t.pid_file()).unwrap();
    t.send(&["clear", "Enter"]);
    t.run_top(&lab.kubeconfig);
    t.wait_for("the first frame", |s| s.contains("mig-db"));
    t.send(&["C-c"]);
    let after = t.wait_for("the exit", |s| s.contains("exit="));
    assert!(after.contains("exit=0"), "{after}");
    assert_eq!(t.alternate_on(), "0");
}

#[test]
fn a_panic_restores_the_terminal_prints_the_message_and_exits_101() {
    if !tmux_available() {
        return;
    }
    // The binary `cargo test` runs is a dev build, where `!` panics when
    // VMCTL_TEST_PANIC_KEY is set (not compiled into a release build).
    let lab = lab();
    let t = Tmux::start("panic");
    t.run_top_env(&lab.kubeconfig, "VMCTL_TEST_PANIC_KEY=1 ", "");
    t.wait_for("the first frame", |s| s.contains("0 migrations in flight"));
    assert_eq!(t.alternate_on(), "1", "top runs in the alternate screen");
    t.send(&["!"]);
    let after = t.wait_for("the exit", |s| s.contains("exit="));
    // A panic's exit code, its message printed where it can be read: on the normal screen,
    // which is back.
    assert!(after.contains("exit=101"), "{after}");
    assert_eq!(
        t.alternate_on(),
        "0",
        "the alternate screen is left: {after}"
    );
    assert!(
        after.contains("panicked at") && after.contains("vmctl top: the test panic"),
        "{after}"
    );
    assert!(!after.contains("Migrations in flight"), "{after}");
    // Raw mode is off: what is typed is echoed, and Enter ends the line (in raw mode neither:
    // no echo, and the shell would get a carriage return it does not take for a newline).
    t.send(&["echo typed-$((6 * 7))", "Enter"]);
    let shell = t.wait_for("the shell running a typed line", |s| s.contains("typed-42"));
    assert!(
        shell.contains("echo typed-$((6 * 7))"),
        "the line is echoed: {shell}"
    );
}

#[test]
fn a_watch_that_gives_up_restores_the_terminal_and_says_so_in_one_line() {
    if !tmux_available() {
        return;
    }
    let lab = lab();
    // Pods refused before anything was listed: the follower gives up at once (an outage
    // would take minutes of retries to get here; the way out is the same).
    lab.server.inject_fault(
        Fault::status(403)
            .path("/pods")
            .message("pods is forbidden"),
    );
    let t = Tmux::start("lost");
    t.run_top(&lab.kubeconfig);
    let after = t.wait_for("the exit", |s| s.contains("exit="));
    assert_eq!(t.alternate_on(), "0", "{after}");
    assert!(!after.contains("exit=0"), "{after}");
    let errors: Vec<&str> = after.lines().filter(|l| l.contains("error:")).collect();
    assert_eq!(errors.len(), 1, "{after}");
    assert!(errors[0].contains("forbidden"), "{after}");
}

#[test]
fn metrics_give_progress_of_the_data_the_dirty_rate_and_an_eta() {
    if !tmux_available() {
        return;
    }
    let lab = lab();
    migrate(&lab.server, "mig-db", "db-01");
    let t = Tmux::start("metrics");
    t.run_top_with(&lab.kubeconfig, "--metrics");
    // Without metrics the progress is against the budget; with them, of the data (a bar).
    let s = t.wait_for("progress of the data", |s| {
        s.contains("mig-db")
            && s.lines()
                .any(|l| l.contains("prod/db-01") && l.contains("█"))
    });
    let row = s.lines().find(|l| l.contains("prod/db-01")).unwrap();
    assert!(row.contains("%") && row.contains("/s"), "{s}");
    assert!(!row.contains("of budget"), "{s}");
    // One GET of virt-handler's page per refresh, through the pod proxy.
    assert!(
        lab.server
            .count_requests(|r| r.path.contains("virt-handler-1") && r.path.contains("/proxy/"))
            >= 1
    );
    t.send(&["q"]);
    let after = t.wait_for("the exit", |s| s.contains("exit="));
    assert!(after.contains("exit=0"), "{after}");
}
