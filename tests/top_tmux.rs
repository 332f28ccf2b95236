//! `vmctl top` end to end in a real terminal: tmux runs it against the fake API server and
//! the scripted KubeVirt (`support::kubevirt_sim`); keys are sent with `tmux send-keys`, the
//! screen read with `tmux capture-pane`. The migration appears and moves on, `a` then `y`
//! deletes its VMIM on the server, `q` exits 0 with the terminal restored (the alternate
//! screen left); SIGTERM restores it too, and so does a panic (a key that panics exists in
//! test builds only: `VMCTL_TEST_PANIC_KEY`, see `operate::top`). The terminal is
//! `support::tmux`'s: skipped (with a message) when tmux is missing, unless
//! `VMCTL_REQUIRE_TMUX=1` (CI) makes that a failure. Nothing here is timed beyond
//! generous bounds against a hang.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use support::kubevirt_sim::{self, KubeVirtSim, Script};
use support::tmux::{self, Tmux};
use support::{FakeApiServer, Fault, Method};
use vmctl::cluster::Kind;

/// What `vmctl top` needs of the terminal besides typing: its command line, its pid.
trait TopTerminal {
    fn pid_file(&self) -> PathBuf;
    fn run_top(&self, kubeconfig: &Path);
    fn run_top_with(&self, kubeconfig: &Path, extra: &str);
    fn run_top_env(&self, kubeconfig: &Path, env: &str, extra: &str);
    fn pid(&self) -> String;
}

/// The terminal of these tests: 160×48, colour off.
fn terminal(name: &str) -> Tmux {
    Tmux::start(&format!("top-{name}"), 160, 48, &["NO_COLOR=1"])
}

impl TopTerminal for Tmux {
    fn pid_file(&self) -> PathBuf {
        self.dir().join("pid")
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
    if !tmux::available() {
        return;
    }
    let lab = lab();
    let t = terminal("abort");
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
    if !tmux::available() {
        return;
    }
    let lab = lab();
    migrate(&lab.server, "mig-db", "db-01");
    let t = terminal("term");
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
    if !tmux::available() {
        return;
    }
    // The binary `cargo test` runs is a dev build, where `!` panics when
    // VMCTL_TEST_PANIC_KEY is set (not compiled into a release build).
    let lab = lab();
    let t = terminal("panic");
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
    if !tmux::available() {
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
    let t = terminal("lost");
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
    if !tmux::available() {
        return;
    }
    let lab = lab();
    migrate(&lab.server, "mig-db", "db-01");
    let t = terminal("metrics");
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

/// Issue 33 (tried cold): at 80 columns top cut the VM names to six characters and never
/// showed `q quit`. On a real 80-column terminal, at 30 and 24 rows: every name of the
/// example cluster whole, the keys of the actions and `q quit` on screen, no line wider
/// than the terminal.
#[test]
fn at_80_columns_the_names_are_whole_and_the_keys_shown() {
    if !tmux::available() {
        return;
    }
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/cluster");
    for height in [30u16, 24] {
        let t = Tmux::start(&format!("top-80x{height}"), 80, height, &["NO_COLOR=1"]);
        t.send(&[
            &format!(
                "{} --from {examples} top -A; echo \"ex\"\"it=$?\"",
                env!("CARGO_BIN_EXE_vmctl")
            ),
            "Enter",
        ]);
        let screen = t.wait_for("the first frame", |s| s.contains("Recent failures"));
        assert_eq!(t.alternate_on(), "1", "{screen}");
        // The names as the example cluster has them (examples/cluster/README.md); at 24 rows
        // the sections share the screen, so the first rows of each.
        let mut names = vec![
            "tenant-a/shop-web-01",
            "kubevirt-migrate-vm-t6j2v",
            "prod/pg-orders-01",
            "kubevirt-migrate-vm-w9c4r",
            "prod/analytics-warehouse-01",
            "prod/app-server-02",
            "prod/pg-reporting-01",
            "prod/cache-redis-01",
        ];
        if height == 30 {
            names.extend(["kubevirt-evacuation-7xk2p", "dev/jenkins-agent-01"]);
        }
        for name in names {
            assert!(
                screen.contains(name),
                "80x{height}: {name} is not whole:\n{screen}"
            );
        }
        let keys = screen
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default();
        for key in ["q quit", "a abort", "Enter explain", "/ filter", "? help"] {
            assert!(keys.contains(key), "80x{height}: no {key:?}:\n{screen}");
        }
        for line in screen.lines() {
            assert!(
                line.chars().count() <= 80,
                "80x{height}: wider than 80: {line}"
            );
        }
        // The time and the snapshot's read-only mark are not cut off the header.
        assert!(
            screen.contains("as of 2026-11-29T03:00:00Z")
                && screen.contains("snapshot (read-only)"),
            "{screen}"
        );
        t.send(&["q"]);
        let after = t.wait_for("the exit", |s| s.contains("exit="));
        assert!(after.contains("exit=0"), "{after}");
    }
}

/// Issue 33 (tried cold): at 80 columns both pod columns were cut to `virt-la…`, so the `*`
/// marking the live launcher pod (whose logs to read) was never seen, while an all-`-`
/// DIRTY/ETA column kept its room. Now: for every migration in flight on screen, its live
/// pod's own suffix with its star is there, and the empty DIRTY/ETA column is gone.
#[test]
fn at_80_columns_the_live_pod_and_its_star_are_shown() {
    if !tmux::available() {
        return;
    }
    for example in ["cluster", "incidents"] {
        let dir = format!("{}/examples/{example}", env!("CARGO_MANIFEST_DIR"));
        let out = Command::new(env!("CARGO_BIN_EXE_vmctl"))
            .args(["--from", &dir, "top", "-A", "-o", "json"])
            .output()
            .expect("vmctl runs");
        assert!(out.status.success(), "{out:?}");
        let frame: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        let t = Tmux::start(&format!("top-live-{example}"), 80, 60, &["NO_COLOR=1"]);
        t.send(&[
            &format!("{} --from {dir} top -A", env!("CARGO_BIN_EXE_vmctl")),
            "Enter",
        ]);
        let screen = t.wait_for("the first frame", |s| s.contains("Recent failures"));
        let lines: Vec<&str> = screen.lines().collect();
        let mut checked = 0;
        for m in frame["migrations"].as_array().into_iter().flatten() {
            let vmi = format!(
                "{}/{}",
                m["namespace"].as_str().unwrap_or(""),
                m["vmi"].as_str().unwrap_or("")
            );
            let Some(live) = m["livePod"].as_str() else {
                continue;
            };
            // The row's second line (the pods) follows the line that names the VMI.
            let Some(at) = lines.iter().position(|l| l.contains(&format!(" {vmi} "))) else {
                continue;
            };
            let suffix = &live[live.len().saturating_sub(5)..];
            let pods = lines.get(at + 1).copied().unwrap_or_default();
            assert!(
                pods.contains(&format!("{suffix}*")),
                "{example} at 80: {vmi}'s live pod {live} is not marked:\n{screen}"
            );
            checked += 1;
        }
        assert!(
            checked >= 3,
            "{example}: only {checked} migrations on screen:\n{screen}"
        );
        assert!(
            !screen.contains("DIRTY"),
            "{example} at 80: an all-'-' DIRTY/ETA column kept:\n{screen}"
        );
        t.send(&["q"]);
    }
}
