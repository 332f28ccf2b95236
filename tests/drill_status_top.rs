//! The drill of issue 33 for `status` and `top`: a drain of node-1 on the fake API server
//! with the KubeVirt simulator (a VM whose first evacuation fails and whose retry moves it,
//! a VM migrating at the moment of looking, a VM nothing evacuates), then every claim
//! `status -o json`, the `status` table, `status --watch` and `top` (on a real terminal,
//! tmux) make about the drain is compared with the API server's state, by program: the
//! cordoned node, the VMIs still on it, the evictions accepted, the migrations in flight,
//! the launcher pods left, the VMIs moved, each evacuation chain (attempt n, the last
//! failure) and the live source pod.
//!
//! The tmux part fails (not skips) when tmux is missing and `VMCTL_REQUIRE_TMUX=1` (CI).

mod common;
mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{both, vmctl};
use serde_json::{Value, json};
use support::FakeApiServer;
use support::kubevirt_sim::{self, DrainFixture, KubeVirtSim, Script};
use support::tmux::{self, Tmux};
use vmctl::cluster::Kind;

struct Lab {
    server: Arc<FakeApiServer>,
    sim: KubeVirtSim,
    kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

fn lab() -> Lab {
    let server = Arc::new(FakeApiServer::start_blocking(
        kubevirt_sim::drain_cluster_with(&DrainFixture::default()),
    ));
    let sim = KubeVirtSim::start(
        &server,
        Script {
            running_ticks: 8,
            evacuation_failures: 1,
            evacuation_backoff_ticks: 3,
            ..Script::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    Lab {
        server,
        sim,
        kubeconfig,
        _dir: dir,
    }
}

fn wait_until(what: &str, f: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn s(v: &Value, pointer: &str) -> String {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

impl Lab {
    fn status(&self, args: &[&str]) -> std::process::Output {
        let mut all = vec![
            "--kubeconfig".to_string(),
            self.kubeconfig.display().to_string(),
            "status".into(),
            "-A".into(),
        ];
        all.extend(args.iter().map(|a| a.to_string()));
        vmctl(all)
    }

    fn status_json(&self) -> Value {
        let out = self.status(&["-o", "json"]);
        assert!(out.status.success(), "{}", both(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn vmi(&self, name: &str) -> Value {
        self.server
            .object(Kind::VirtualMachineInstance, Some("prod"), name)
            .unwrap()
    }

    fn mark(&self, name: &str) {
        self.server.patch_object(
            Kind::VirtualMachineInstance,
            Some("prod"),
            name,
            json!({"status": {"evacuationNodeName": "node-1"}}),
        );
    }

    fn evacuations_of(&self, vmi: &str) -> Vec<Value> {
        self.server
            .objects(Kind::VirtualMachineInstanceMigration)
            .into_iter()
            .filter(|m| s(m, "/spec/vmiName") == vmi)
            .filter(|m| !s(m, "/metadata/annotations/kubevirt.io~1evacuationMigration").is_empty())
            .collect()
    }

    /// What the API server says of node-1's drain, computed here from its objects.
    fn truth(&self) -> Truth {
        let vmis = self.server.objects(Kind::VirtualMachineInstance);
        let id = |v: &Value| format!("{}/{}", s(v, "/metadata/namespace"), s(v, "/metadata/name"));
        let on_node: BTreeSet<String> = vmis
            .iter()
            .filter(|v| s(v, "/status/nodeName") == "node-1")
            .map(id)
            .collect();
        let marked = vmis
            .iter()
            .filter(|v| s(v, "/status/evacuationNodeName") == "node-1")
            .count();
        let vmims = self.server.objects(Kind::VirtualMachineInstanceMigration);
        let in_flight = vmims
            .iter()
            .filter(|m| !matches!(s(m, "/status/phase").as_str(), "Succeeded" | "Failed"))
            .count();
        let pods_left = self
            .server
            .objects(Kind::Pod)
            .iter()
            .filter(|p| s(p, "/metadata/labels/kubevirt.io") == "virt-launcher")
            .filter(|p| s(p, "/spec/nodeName") == "node-1")
            .filter(|p| !matches!(s(p, "/status/phase").as_str(), "Succeeded" | "Failed"))
            .count();
        Truth {
            cordoned: self
                .server
                .object(Kind::Node, None, "node-1")
                .and_then(|n| n.pointer("/spec/unschedulable").and_then(Value::as_bool))
                == Some(true),
            on_node,
            marked,
            in_flight,
            pods_left,
        }
    }
}

#[derive(Debug)]
struct Truth {
    cordoned: bool,
    on_node: BTreeSet<String>,
    marked: usize,
    in_flight: usize,
    pods_left: usize,
}

fn names(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// `status -o json`'s node-1 against the server's state.
fn check_node(doc: &Value, truth: &Truth) -> Value {
    let nodes = doc["nodes"].as_array().unwrap();
    let n = nodes
        .iter()
        .find(|n| n["name"] == "node-1")
        .unwrap_or_else(|| panic!("node-1 not in the report: {doc:#}"))
        .clone();
    assert_eq!(n["cordoned"], truth.cordoned, "{n:#}");
    assert_eq!(names(&n["vmisLeft"]), truth.on_node, "{n:#}");
    assert_eq!(n["evictionsAccepted"], truth.marked, "{n:#}");
    assert_eq!(n["migrationsInFlight"], truth.in_flight, "{n:#}");
    assert_eq!(n["launcherPodsLeft"], truth.pods_left, "{n:#}");
    // No other node is said to be drained: node-2 and node-3 are neither cordoned nor
    // evacuated.
    assert_eq!(nodes.len(), 1, "{doc:#}");
    n
}

#[test]
fn status_and_top_show_the_drain_as_the_server_has_it() {
    let lab = lab();

    // 1. A drain that stopped after cordoning (a timed-out drain): node-1 cordoned, its
    // three VMIs still on it, nothing moving. status says so first, and in Attention.
    lab.server.patch_object(
        Kind::Node,
        None,
        "node-1",
        json!({"spec": {"unschedulable": true}}),
    );
    let doc = lab.status_json();
    let n = check_node(&doc, &lab.truth());
    assert_eq!(n["state"], "cordoned", "{n:#}");
    assert_eq!(n["vmisLeft"].as_array().unwrap().len(), 3, "{n:#}");
    let table = common::ok(lab.status(&[]));
    let first = table.lines().nth(3).unwrap_or_default();
    assert!(
        first.starts_with("Nodes cordoned or evacuated:"),
        "the drain comes first:\n{table}"
    );
    assert!(
        table.contains("still on node-1: prod/batch-01, prod/scratch-01, prod/web-01"),
        "{table}"
    );
    assert!(
        table.contains("! node node-1 is cordoned and 3 VMIs are still on it"),
        "{table}"
    );

    // 2. web-01 is evacuated: its first attempt fails, KubeVirt's retry moves it.
    lab.mark("web-01");
    wait_until("web-01 to move off node-1", || {
        let v = lab.vmi("web-01");
        !s(&v, "/status/nodeName").is_empty() && s(&v, "/status/nodeName") != "node-1"
    });
    let chain = lab.evacuations_of("web-01");
    let failed = chain
        .iter()
        .filter(|m| s(m, "/status/phase") == "Failed")
        .count();
    assert!(chain.len() >= 2 && failed >= 1, "{chain:#?}");

    // 3. batch-01 is evacuated and held while streaming: a migration in flight.
    lab.sim.set_script(Script {
        hold_running: true,
        ..Script::default()
    });
    lab.mark("batch-01");
    wait_until("batch-01 streaming", || {
        let v = lab.vmi("batch-01");
        !s(&v, "/status/migrationState/targetNode").is_empty()
            && !s(&v, "/status/migrationState/startTimestamp").is_empty()
    });

    let doc = lab.status_json();
    let truth = lab.truth();
    let n = check_node(&doc, &truth);
    assert_eq!(n["state"], "draining", "{n:#}");
    // A failed attempt then a successful retry: a VM that moved, with its chain.
    assert_eq!(
        names(&n["moved"]),
        BTreeSet::from(["prod/web-01".to_string()])
    );
    let row = |name: &str| -> Value {
        doc["vmis"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .unwrap()
            .clone()
    };
    let web = row("web-01");
    assert_eq!(web["node"], s(&lab.vmi("web-01"), "/status/nodeName"));
    assert_eq!(web["evacuationChain"]["attempt"], chain.len(), "{web:#}");
    assert_eq!(web["evacuationChain"]["failedAttempts"], failed, "{web:#}");
    assert_eq!(web["evacuationChain"]["result"], "succeeded", "{web:#}");
    assert!(
        web["evacuationChain"]["lastFailure"]
            .as_str()
            .unwrap_or_default()
            .contains("Connection reset by peer"),
        "{web:#}"
    );
    // The migration in flight: its source pod is the live one, as the VMI says.
    let batch = lab.vmi("batch-01");
    let m = doc["migrations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["vmi"] == "batch-01")
        .unwrap_or_else(|| panic!("batch-01's migration: {doc:#}"))
        .clone();
    let source_pod = s(&batch, "/status/migrationState/sourcePod");
    let source_pod = if source_pod.is_empty() {
        "virt-launcher-batch-01-abcde".to_string()
    } else {
        source_pod
    };
    assert_eq!(m["sourcePod"], source_pod, "{m:#}");
    assert_eq!(m["livePod"], source_pod, "{m:#}");
    assert_eq!(m["evacuationNode"], "node-1", "{m:#}");
    assert_eq!(
        m["targetNode"],
        s(&batch, "/status/migrationState/targetNode")
    );

    // The table says the same in words (piped: no colour).
    let table = common::ok(lab.status(&[]));
    let nodes_row = table
        .lines()
        .find(|l| l.starts_with("node-1"))
        .unwrap_or_else(|| panic!("{table}"));
    let cells: Vec<&str> = nodes_row
        .split("   ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        cells,
        vec![
            "node-1",
            "cordoned, draining",
            &truth.on_node.len().to_string(),
            &truth.marked.to_string(),
            &truth.in_flight.to_string(),
            &truth.pods_left.to_string(),
            "1"
        ],
        "{table}"
    );
    assert!(table.contains("batch-01 (evacuating)"), "{table}");

    // status --watch, piped: the node's line first, with the same counts.
    let mut watch = Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(["--kubeconfig", &lab.kubeconfig.display().to_string()])
        .args(["status", "-A", "--watch"])
        .env("NO_COLOR", "1")
        .env("VMCTL_JOURNAL", "off")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = watch.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut buf = [0u8; 4096];
        let mut text = String::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline && !text.contains("mode=") {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => text.push_str(&String::from_utf8_lossy(&buf[..n])),
            }
        }
        text
    });
    let lines = reader.join().unwrap();
    let _ = watch.kill();
    let _ = watch.wait();
    let node_line = lines
        .lines()
        .find(|l| l.contains("node node-1"))
        .unwrap_or_else(|| panic!("no node line: {lines}"));
    assert!(
        node_line.contains(&format!(
            "cordoned, draining: {} VMIs left",
            truth.on_node.len()
        )) && node_line.contains(&format!("{} migrating", truth.in_flight))
            && node_line.contains("1 moved"),
        "{node_line}"
    );

    // top, on a terminal: node-1 as cordoned with what is left, no other node named as
    // drained, the VMI nothing evacuates, and the live source pod.
    if !tmux::available() {
        return;
    }
    for width in [200, 80] {
        let t = terminal(&format!("top{width}"), width);
        run_top(&t, &lab.kubeconfig);
        let screen = t.wait_for("the drain in top's header", |s| {
            s.contains("cordoned node-1: ") && s.contains("Migrations in flight (1)")
        });
        let header: Vec<&str> = screen
            .lines()
            .take_while(|l| !l.starts_with('┌') && !l.starts_with('+'))
            .collect();
        let header = header.join("\n");
        assert!(
            header.contains(&format!(
                "cordoned node-1: {} VMIs still on it",
                truth.on_node.len()
            )),
            "{width}: {screen}"
        );
        assert!(
            !header.contains("node-2") && !header.contains("node-3"),
            "{screen}"
        );
        if width == 200 {
            assert!(
                header.contains(&format!("{} evictions accepted", truth.marked))
                    && header.contains(&format!("{} migrating", truth.in_flight))
                    && header.contains(&format!("{} launcher pods left", truth.pods_left))
                    && header.contains("1 moved"),
                "{screen}"
            );
            assert!(
                screen.contains("prod/scratch-01") && screen.contains("not evacuated"),
                "{screen}"
            );
            assert!(screen.contains(&format!("{source_pod}*")), "{screen}");
        }
        t.send(&["q"]);
        let after = t.wait_for("the exit", |s| s.contains("exit="));
        assert!(after.contains("exit=0"), "{after}");
    }
}

#[test]
fn status_tables_fit_a_terminal_with_colour_on() {
    if !tmux::available() {
        return;
    }
    let lab = lab();
    lab.server.patch_object(
        Kind::Node,
        None,
        "node-1",
        json!({"spec": {"unschedulable": true}}),
    );
    for width in [200u16, 80] {
        let t = terminal(&format!("table{width}"), width);
        t.send(&[
            &format!(
                "{} --kubeconfig {} status -A; echo \"ex\"\"it=$?\"",
                env!("CARGO_BIN_EXE_vmctl"),
                lab.kubeconfig.display()
            ),
            "Enter",
        ]);
        let screen = t.wait_for("status", |s| s.contains("exit="));
        assert!(screen.contains("exit=0"), "{screen}");
        let lines: Vec<&str> = screen.lines().collect();
        let head = lines
            .iter()
            .position(|l| l.starts_with("NAMESPACE"))
            .unwrap_or_else(|| panic!("{screen}"));
        // Every row of the VMI table right after the previous one: no blank line left by a
        // padded last column.
        for (i, l) in lines[head..head + 4].iter().enumerate() {
            assert!(!l.trim().is_empty(), "{width}: blank line {i} in\n{screen}");
        }
        if width == 200 {
            let widest = lines[head..head + 4]
                .iter()
                .map(|l| l.trim_end().chars().count())
                .max()
                .unwrap_or(0);
            assert!(widest <= 120, "{widest} columns:\n{screen}");
        }
    }
}

// ---------------------------------------------------------------- tmux

/// The drill's terminal: `width` columns, colour on (no NO_COLOR), no journal.
fn terminal(name: &str, width: u16) -> Tmux {
    Tmux::start(&format!("drill-{name}"), width, 50, &["VMCTL_JOURNAL=off"])
}

/// Types `vmctl top -A` against the live cluster; the shell prints its exit code after.
fn run_top(t: &Tmux, kubeconfig: &Path) {
    let line = format!(
        "{} --kubeconfig {} top -A; echo \"ex\"\"it=$?\"",
        env!("CARGO_BIN_EXE_vmctl"),
        kubeconfig.display()
    );
    t.send(&[&line, "Enter"]);
}

/// Issue 33, item 10: what `status` prints on a live cluster under `LANG=C`, its `-o name`,
/// its empty answer and its clock.
#[test]
fn status_words_ascii_names_empty_scope_and_the_clock() {
    let lab = lab();
    lab.server.patch_object(
        Kind::Node,
        None,
        "node-1",
        json!({"spec": {"unschedulable": true}}),
    );
    let kubeconfig = lab.kubeconfig.display().to_string();
    let run = |lang: &str, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_vmctl"))
            .args(["--kubeconfig", &kubeconfig])
            .args(args)
            .env("NO_COLOR", "1")
            .env("VMCTL_JOURNAL", "off")
            .env_remove("LC_ALL")
            .env_remove("LC_CTYPE")
            .env("LANG", lang)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", both(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    // No UTF-8 locale: every line in ASCII (the cluster's names are).
    let table = run("C", &["status", "-A", "-o", "wide"]);
    for line in table.lines() {
        assert!(line.is_ascii(), "not ASCII under LANG=C: {line:?}\n{table}");
    }
    assert!(table.contains(" | "), "{table}");
    let utf8 = run("C.UTF-8", &["status", "-A"]);
    assert!(utf8.contains('·'), "{utf8}");
    // JSON is data: the same under any locale.
    let json_c: Value = serde_json::from_str(&run("C", &["status", "-A", "-o", "json"])).unwrap();
    // Live timestamps to the second.
    let as_of = json_c["asOf"].as_str().unwrap();
    assert!(
        as_of.len() == "2026-12-06T05:17:41Z".len() && as_of.ends_with('Z'),
        "{as_of}"
    );
    // -o name: one line per VMI, as kubectl, and the server's VMIs exactly.
    let names: BTreeSet<String> = run("C.UTF-8", &["status", "-A", "-o", "name"])
        .lines()
        .map(str::to_string)
        .collect();
    let want: BTreeSet<String> = lab
        .server
        .objects(Kind::VirtualMachineInstance)
        .iter()
        .map(|v| {
            format!(
                "virtualmachineinstance.kubevirt.io/{}",
                s(v, "/metadata/name")
            )
        })
        .collect();
    assert_eq!(names, want);
    // Other commands refuse it in one line.
    let out = vmctl([
        "--kubeconfig",
        &kubeconfig,
        "plan-drain",
        "node-1",
        "-o",
        "name",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", both(&out));
    assert_eq!(common::stderr(&out).lines().count(), 1, "{}", both(&out));
    // An empty namespace names itself and -A.
    let empty = run("C.UTF-8", &["status", "-n", "nothing-here"]);
    assert!(
        empty.contains("No VMIs found in namespace nothing-here (use -A for every namespace)."),
        "{empty}"
    );
}
