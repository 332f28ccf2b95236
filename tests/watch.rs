//! `vmctl status --watch` at fleet scale against the fake API server: it lists each kind
//! once (every page once), draws its first frame, then lives on watch events alone; a 410
//! re-lists that kind once; failing watches back off, say so, and come back; Ctrl-C exits
//! promptly, also in the middle of a list; a VMI caught in a loop is named (escaped). Work
//! is counted in requests, never timed (except the generous Ctrl-C bound).

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::kubevirt_sim;
use support::{FakeApiServer, Fault, RecordedRequest};
use vmctl::cluster::Kind;

/// `n` running VMIs in `prod`, each with its launcher pod, one of them (`vm-0001`)
/// migrating.
fn cluster(n: usize) -> Vec<Value> {
    let mut objects = Vec::with_capacity(2 * n + 1);
    for i in 0..n {
        objects.extend(kubevirt_sim::vmi(
            &format!("vm-{i:04}"),
            None,
            json!({}),
            true,
        ));
    }
    objects.push(vmim("mig-1", "vm-0001", "Running"));
    objects
}

fn vmim(name: &str, vmi: &str, phase: &str) -> Value {
    json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
        "metadata": {"name": name, "namespace": "prod"},
        "spec": {"vmiName": vmi}, "status": {"phase": phase}})
}

/// A running `vmctl status --watch -A`, its output collected line by line.
struct Watcher {
    child: Child,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<String>>>,
    _dir: tempfile::TempDir,
}

fn collect(stream: impl std::io::Read + Send + 'static) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&lines);
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            sink.lock().unwrap().push(line);
        }
    });
    lines
}

impl Watcher {
    fn start(server: &FakeApiServer) -> Watcher {
        Watcher::start_with(server, &[])
    }

    fn start_with(server: &FakeApiServer, extra: &[&str]) -> Watcher {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = server.write_kubeconfig(dir.path());
        let mut child = Command::new(env!("CARGO_BIN_EXE_vmctl"))
            .args(["--kubeconfig", kubeconfig.to_str().unwrap()])
            .args(["status", "--watch", "-A"])
            .args(extra)
            .env("NO_COLOR", "1")
            .env_remove("KUBECONFIG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = collect(child.stdout.take().unwrap());
        let stderr = collect(child.stderr.take().unwrap());
        Watcher {
            child,
            stdout,
            stderr,
            _dir: dir,
        }
    }

    fn out(&self) -> String {
        self.stdout.lock().unwrap().join("\n")
    }

    fn err(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    fn both(&self) -> String {
        format!("stdout:\n{}\nstderr:\n{}", self.out(), self.err())
    }

    fn wait_for(&self, what: &str, timeout: Duration, f: impl Fn(&Watcher) -> bool) {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if f(self) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("timed out waiting for {what}\n{}", self.both());
    }

    /// The exit code, once it exited (within `timeout`).
    fn wait_for_exit(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Its output, read to the end by the collecting threads.
                std::thread::sleep(Duration::from_millis(200));
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("still running after {timeout:?}\n{}", self.both());
    }

    fn wait_for_first_frame(&self) {
        self.wait_for("the first frame", Duration::from_secs(60), |w| {
            w.err().contains("watching ")
        });
    }

    /// SIGINT, then the exit; returns the exit code. Promptness is not timed here (a loaded
    /// CI machine makes any bound flaky): the caller checks what was still in flight, and
    /// 10 s only guards against a hang.
    fn interrupt(mut self) -> Option<i32> {
        let ok = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
        let sent = Instant::now();
        while sent.elapsed() < Duration::from_secs(10) {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        panic!("still running 10 s after SIGINT\n{}", self.both());
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn lists_of(requests: &[RecordedRequest], kind: Kind) -> Vec<&RecordedRequest> {
    requests
        .iter()
        .filter(|r| r.is_list() && r.kind == Some(kind))
        .collect()
}

/// A list of `kind` started over (not a next page): no `continue` token.
fn list_starts(requests: &[RecordedRequest], kind: Kind) -> usize {
    lists_of(requests, kind)
        .iter()
        .filter(|r| r.param("continue").is_none_or(str::is_empty))
        .count()
}

#[test]
fn first_frame_after_one_list_per_kind_then_watch_events_only() {
    const VMIS: usize = 2000;
    let server = FakeApiServer::start_blocking(cluster(VMIS));
    // 300 ms a request: each list (4 pages) outlasts the view's 1 s tick, which must not
    // cancel it (it used to restart the list from page 1 on every tick).
    server.inject_fault(Fault::delayed(Duration::from_millis(300)));
    let watcher = Watcher::start(&server);
    watcher.wait_for_first_frame();
    watcher.wait_for("the migration in flight", Duration::from_secs(5), |w| {
        w.out().contains("prod/mig-1 vmi=vm-0001 phase=Running")
    });
    assert!(
        watcher.err().contains(&format!(
            "watching {VMIS} VMIs (all namespaces): 1 migrations"
        )),
        "{}",
        watcher.both()
    );

    // One list per kind, every page once: 2000 VMIs and 2000 pods are 4 pages of 500 each.
    let requests = server.requests();
    let pages = |kind| lists_of(&requests, kind).len();
    assert_eq!(list_starts(&requests, Kind::VirtualMachineInstance), 1);
    assert_eq!(pages(Kind::VirtualMachineInstance), VMIS / 500);
    assert_eq!(list_starts(&requests, Kind::Pod), 1);
    assert_eq!(pages(Kind::Pod), VMIS / 500);
    assert_eq!(pages(Kind::VirtualMachineInstanceMigration), 1);
    assert_eq!(pages(Kind::KubeVirt), 1);
    assert!(
        requests
            .iter()
            .filter(|r| r.is_list())
            .all(|r| r.param("limit") == Some("500")),
        "every list is paginated by 500"
    );

    // Idle, then a migration's changes: they arrive through the watches, with no LIST at all.
    server.reset_requests();
    std::thread::sleep(Duration::from_millis(1200));
    server.add_object(vmim("mig-2", "vm-0002", "Scheduling"));
    watcher.wait_for("mig-2 Scheduling", Duration::from_secs(10), |w| {
        w.out().contains("prod/mig-2 vmi=vm-0002 phase=Scheduling")
    });
    server.add_object(vmim("mig-2", "vm-0002", "Succeeded"));
    watcher.wait_for("mig-2 ended", Duration::from_secs(10), |w| {
        w.out().contains("prod/mig-2 ended: Succeeded")
    });
    std::thread::sleep(Duration::from_millis(1200));
    let requests = server.requests();
    let lists: Vec<String> = requests
        .iter()
        .filter(|r| r.is_list())
        .map(RecordedRequest::line)
        .collect();
    assert!(lists.is_empty(), "LISTs while idle: {lists:?}");
    assert!(
        requests.len() <= 6,
        "an idle watch costs (nearly) nothing: {:?}",
        requests
            .iter()
            .map(RecordedRequest::line)
            .collect::<Vec<_>>()
    );

    assert_eq!(watcher.interrupt(), Some(0));
}

#[test]
fn a_410_relists_that_kind_once() {
    let server = FakeApiServer::start_blocking(cluster(20));
    let watcher = Watcher::start(&server);
    watcher.wait_for_first_frame();
    assert!(server.wait_for_watches(3, Duration::from_secs(10)));
    server.reset_requests();
    server.inject_fault(
        Fault::status(410)
            .query("watch=true")
            .path("/virtualmachineinstancemigrations")
            .in_watch_stream()
            .times(1),
    );
    server.close_watches();
    watcher.wait_for("the re-list", Duration::from_secs(10), |_| {
        list_starts(&server.requests(), Kind::VirtualMachineInstanceMigration) >= 1
            && server.active_watches() >= 3
    });
    std::thread::sleep(Duration::from_millis(1000));
    let requests = server.requests();
    assert_eq!(
        list_starts(&requests, Kind::VirtualMachineInstanceMigration),
        1,
        "{:?}",
        requests
            .iter()
            .map(RecordedRequest::line)
            .collect::<Vec<_>>()
    );
    assert_eq!(list_starts(&requests, Kind::VirtualMachineInstance), 0);
    assert_eq!(list_starts(&requests, Kind::Pod), 0);
    // The other two resumed from their resourceVersion.
    assert!(
        requests
            .iter()
            .filter(|r| r.is_watch() && r.kind == Some(Kind::VirtualMachineInstance))
            .all(|r| r.param("resourceVersion").is_some_and(|v| v != "0")),
    );
    // And the view still follows.
    server.add_object(vmim("mig-1", "vm-0001", "Failed"));
    watcher.wait_for("mig-1 ended", Duration::from_secs(10), |w| {
        w.out().contains("prod/mig-1 ended: Failed")
    });
    assert_eq!(watcher.interrupt(), Some(0));
}

#[test]
fn failing_watches_back_off_say_so_and_recover() {
    let server = FakeApiServer::start_blocking(cluster(20));
    let watcher = Watcher::start(&server);
    watcher.wait_for_first_frame();
    assert!(server.wait_for_watches(3, Duration::from_secs(10)));
    server.reset_requests();
    server.inject_fault(Fault::status(503).query("watch=true"));
    server.close_watches();
    std::thread::sleep(Duration::from_secs(3));
    let failing = server.requests();
    server.clear_faults();
    watcher.wait_for("a reconnecting line", Duration::from_secs(5), |w| {
        w.err().contains("watch reconnecting… (attempt 1: 503")
    });
    // kube's backoff (0.8 s doubling, with jitter): a few attempts per watch in 3 s, no burst.
    for kind in [
        Kind::VirtualMachineInstance,
        Kind::VirtualMachineInstanceMigration,
        Kind::Pod,
    ] {
        let attempts = failing
            .iter()
            .filter(|r| r.is_watch() && r.kind == Some(kind))
            .count();
        assert!(
            (2..=4).contains(&attempts),
            "{attempts} watches of {kind} in 3 s of failures\n{}",
            watcher.both()
        );
    }
    assert!(failing.len() <= 12, "{} requests", failing.len());
    watcher.wait_for("all three watches back", Duration::from_secs(20), |w| {
        w.err().matches("watch reconnected").count() >= 3
    });
    // No re-list: the watches resumed from their resourceVersion.
    let requests = server.requests();
    assert!(
        requests.iter().all(|r| !r.is_list()),
        "{:?}",
        requests
            .iter()
            .map(RecordedRequest::line)
            .collect::<Vec<_>>()
    );
    server.add_object(vmim("mig-1", "vm-0001", "Succeeded"));
    watcher.wait_for("mig-1 ended", Duration::from_secs(10), |w| {
        w.out().contains("prod/mig-1 ended: Succeeded")
    });
    assert_eq!(watcher.interrupt(), Some(0));
}

#[test]
fn ctrl_c_exits_without_waiting_for_the_list_in_flight() {
    let server = FakeApiServer::start_blocking(cluster(1500));
    // Every answer takes 8 s: Ctrl-C must not wait for the one in flight.
    server.inject_fault(Fault::delayed(Duration::from_secs(8)));
    let watcher = Watcher::start(&server);
    let in_flight = |server: &FakeApiServer| {
        server.count_requests(|r| r.is_list() && r.kind == Some(Kind::Pod) && r.status == 0)
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while in_flight(&server) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(in_flight(&server), 1, "{}", watcher.both());
    assert!(!watcher.err().contains("watching "), "{}", watcher.both());
    assert_eq!(watcher.interrupt(), Some(0));
    // vmctl is gone and the page it asked for is still being answered: it did not wait.
    assert_eq!(
        in_flight(&server),
        1,
        "the pod list was answered before vmctl exited"
    );
}

#[test]
fn a_terminal_shows_the_table_and_a_failing_watch_in_the_frame() {
    let server = FakeApiServer::start_blocking(cluster(20));
    server.inject_fault(Fault::status(503).query("watch=true"));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    // SIGINT after 3 s: the first frame, then a reconnecting line at least once.
    let cmd = format!(
        "timeout -s INT 3 {} --kubeconfig {} status --watch -A",
        env!("CARGO_BIN_EXE_vmctl"),
        kubeconfig.display()
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .output()
        .expect("script(1) from bsdutils must be installed");
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(screen.contains("\u{1b}[H"), "redrawn in place: {screen}");
    assert!(
        screen.contains("Migrations in flight (all namespaces)"),
        "{screen}"
    );
    assert!(screen.contains("mig-1"), "{screen}");
    assert!(
        screen.contains("⚠ VirtualMachineInstanceMigration watch reconnecting… (attempt 1: 503"),
        "{screen}"
    );
    // Backoff: a handful of attempts per watch in 3 s, not a loop.
    let watches = server.count_requests(RecordedRequest::is_watch);
    assert!((3..=12).contains(&watches), "{watches} watches");
}

/// A watch event is read up to `--max-input-size` (at most 64 MiB an event), like every answer:
/// kube splits the stream into lines with no bound of its own. An event over it ends the
/// watch at once, with the bound named (it would come again on every retry).
#[test]
fn a_watch_event_over_the_input_bound_ends_the_watch_with_the_bound_named() {
    let server = FakeApiServer::start_blocking(cluster(20));
    let mut watcher = Watcher::start_with(&server, &["--max-input-size", "1Mi"]);
    watcher.wait_for_first_frame();
    assert!(server.wait_for_watches(3, Duration::from_secs(10)));
    server.reset_requests();
    // A tenant's 1.5 MiB annotation (etcd takes objects up to 1.5 MiB by default).
    let blob = |server: &FakeApiServer| {
        server.patch_object(
            Kind::VirtualMachineInstance,
            Some("prod"),
            "vm-0003",
            json!({"metadata": {"annotations": {"tenant/blob": "x".repeat(1536 << 10)}}}),
        )
    };
    blob(&server);
    assert_eq!(
        watcher.wait_for_exit(Duration::from_secs(30)),
        Some(5),
        "{}",
        watcher.both()
    );
    let err = watcher.err();
    assert!(
        err.contains("error: watch virtualmachineinstances.kubevirt.io: the API server at http://")
            && err.contains("answered: a watch event is larger than 1 MiB: not read"),
        "{}",
        watcher.both()
    );
    assert!(
        err.contains("hint: --max-input-size raises the bound (at most 1Gi per answer, 64 MiB per watch event)"),
        "{err}"
    );
    // Given up at once: no watch of VMIs again, no re-list.
    let again = server.count_requests(|r| r.kind == Some(Kind::VirtualMachineInstance));
    assert_eq!(
        again,
        0,
        "{:?}",
        server
            .requests()
            .iter()
            .map(RecordedRequest::line)
            .collect::<Vec<_>>()
    );

    // The default bound reads the same event.
    let server = FakeApiServer::start_blocking(cluster(20));
    let watcher = Watcher::start(&server);
    watcher.wait_for_first_frame();
    assert!(server.wait_for_watches(3, Duration::from_secs(10)));
    blob(&server);
    server.add_object(vmim("mig-1", "vm-0001", "Succeeded"));
    watcher.wait_for("mig-1 ended", Duration::from_secs(10), |w| {
        w.out().contains("prod/mig-1 ended: Succeeded")
    });
    assert_eq!(watcher.interrupt(), Some(0));
}

/// The watch's own lists (kube's watcher reads them, not vmctl) are bounded too.
#[test]
fn a_list_over_the_input_bound_is_refused_by_the_watch_too() {
    let server = FakeApiServer::start_blocking(cluster(20));
    let mut watcher = Watcher::start_with(&server, &["--max-input-size", "4Ki"]);
    assert_eq!(
        watcher.wait_for_exit(Duration::from_secs(30)),
        Some(5),
        "{}",
        watcher.both()
    );
    let err = watcher.err();
    assert!(
        err.contains("the answer is larger than 4096 bytes: not read"),
        "{}",
        watcher.both()
    );
    assert!(err.contains("--max-input-size raises the bound"), "{err}");
}

/// A node name as a hostile API server may send it: an OSC sequence that retitles the
/// terminal.
const HOSTILE_NODE: &str = "node-1\u{1b}]0;owned\u{7}";

/// harvester/harvester#10698: `web-01` is marked for evacuation from its node
/// (`status.evacuationNodeName`) and its last three evacuation migrations failed; KubeVirt's
/// evacuation controller has created a fourth, held in Pending by `handleMigrationBackoff`
/// (`pkg/virt-controller/watch/drain/evacuation/evacuation.go`,
/// `pkg/virt-controller/watch/migration/migration.go`). The failure text is harvester#7965's.
fn evacuation_loop_cluster() -> Vec<Value> {
    let mut objects = kubevirt_sim::vmi("web-01", None, json!({}), true);
    objects[0]["status"]["nodeName"] = json!(HOSTILE_NODE);
    objects[0]["status"]["evacuationNodeName"] = json!(HOSTILE_NODE);
    let reason = "Live migration failed error encountered during MigrateToURI3 libvirt api call: virError(Code=9, Domain=31, Message='operation failed: guest CPU doesn't match specification: missing features: vmx-exit-load-perf-global-ctrl,vmx-entry-load-perf-global-ctrl')";
    for (name, created, phase) in [
        ("kubevirt-evacuation-a1", "2026-11-30T05:00:00Z", "Failed"),
        ("kubevirt-evacuation-b2", "2026-11-30T05:00:51Z", "Failed"),
        ("kubevirt-evacuation-c3", "2026-11-30T05:02:02Z", "Failed"),
        ("kubevirt-evacuation-d4", "2026-11-30T05:02:38Z", "Pending"),
    ] {
        let mut m = vmim(name, "web-01", phase);
        m["metadata"]["creationTimestamp"] = json!(created);
        m["metadata"]["uid"] = json!(format!("uid-{name}"));
        m["metadata"]["annotations"] = json!({"kubevirt.io/evacuationMigration": HOSTILE_NODE});
        if phase == "Failed" {
            m["status"]["migrationState"] =
                json!({"completed": true, "failed": true, "failureReason": reason});
        }
        objects.push(m);
    }
    objects
}

/// `status --watch` lists a VMI caught in an evacuation loop: off a terminal its migration's
/// line says LOOP with the command that explains it; on a terminal the frame lists the loop
/// with its attempts and the blocking field. The node name is hostile: shown escaped, never
/// obeyed.
#[test]
fn a_vmi_whose_evacuation_failed_three_times_shows_its_loop_escaped() {
    let server = FakeApiServer::start_blocking(evacuation_loop_cluster());
    let w = Watcher::start(&server);
    w.wait_for("the loop line", Duration::from_secs(60), |w| {
        w.out().contains("kubevirt-evacuation-d4")
    });
    let out = w.out();
    let line = out
        .lines()
        .find(|l| l.contains("prod/kubevirt-evacuation-d4 vmi=web-01 phase=Pending"))
        .unwrap_or_else(|| panic!("{}", w.both()));
    assert!(
        line.ends_with(" · LOOP evacuation-loop (vmctl explain vm/web-01 -n prod)"),
        "{line}"
    );
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
    // Finished migrations have no row of their own.
    assert!(!out.contains("kubevirt-evacuation-c3"), "{out}");
    drop(w);

    // Below --loop-failures there is no loop.
    let w = Watcher::start_with(&server, &["--loop-failures", "4"]);
    w.wait_for("the migration line", Duration::from_secs(60), |w| {
        w.out().contains("kubevirt-evacuation-d4")
    });
    assert!(!w.out().contains("LOOP"), "{}", w.both());
    drop(w);

    // On a terminal: the frame's loop section, escaped.
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let cmd = format!(
        "timeout -s INT 3 {} --kubeconfig {} status --watch -A",
        env!("CARGO_BIN_EXE_vmctl"),
        kubeconfig.display()
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .output()
        .expect("script(1) from bsdutils must be installed");
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(
        screen.contains("Loops that never end by themselves"),
        "{screen}"
    );
    // Since the first failed attempt (its age depends on the clock: not asserted).
    assert!(
        screen.contains("  ! prod/web-01: evacuation-loop for "),
        "{screen}"
    );
    // The item wraps at words on the 80-column terminal (render::prose): its words, in order.
    let words = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            " (3 attempts; VirtualMachineInstance/prod/web-01 status.evacuationNodeName = node-1\\u{1b}]0;owned\\u{7})"
        ),
        "{screen}"
    );
    assert!(!screen.contains("\u{1b}]0;owned"), "{screen:?}");
}
