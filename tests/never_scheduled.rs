//! Issue 33 (cold trial): a migration whose target pod was never scheduled had no source node
//! in `explain` or in `record` (so `history node/NAME` missed it), and its target read "?" or
//! nothing. The source is the node the VMI ran on (nothing moved it since), the target "not
//! scheduled". Both commands read that from the same evidence; this runs both, live, on the
//! fake API server with the migration simulator, and checks what they print against the
//! server's objects.

mod common;
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{both, stdout, vmctl};
use serde_json::{Value, json};
use support::FakeApiServer;
use support::kubevirt_sim::{self, KubeVirtSim, Script};
use vmctl::cluster::Kind;

const WAIT: Duration = Duration::from_secs(60);

fn fast() -> Script {
    Script {
        phase_ticks: 1,
        running_ticks: 4,
        ..Script::default()
    }
}

#[test]
fn a_target_never_scheduled_still_names_its_source_in_explain_record_and_history() {
    let server = Arc::new(FakeApiServer::start_blocking(kubevirt_sim::cluster(
        "v1.8.4",
    )));
    let sim = KubeVirtSim::start(&server, fast());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let journal = dir.path().join("j.sqlite");

    // The recorder, watching.
    let mut recorder = Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(["--kubeconfig", kubeconfig.to_str().unwrap()])
        .args(["record", "-A", "--journal", journal.to_str().unwrap()])
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .env_remove("VMCTL_JOURNAL")
        .env_remove("VMCTL_CLUSTER_NAME")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    for (stream, sink) in [
        (
            Box::new(recorder.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Arc::clone(&lines),
        ),
        (
            Box::new(recorder.stderr.take().unwrap()),
            Arc::clone(&errors),
        ),
    ] {
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
    }
    let wait = |what: &str, f: &dyn Fn() -> bool| {
        let deadline = Instant::now() + WAIT;
        while !f() {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}\nstdout: {:?}\nstderr: {:?}",
                lines.lock().unwrap(),
                errors.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait("the recorder's start", &|| {
        errors
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("recording migrations"))
    });

    // A migration of batch-01 (on node-1) whose target pod is never scheduled.
    let source = server
        .object(Kind::VirtualMachineInstance, Some("prod"), "batch-01")
        .unwrap()["status"]["nodeName"]
        .as_str()
        .unwrap()
        .to_string();
    sim.set_script(Script {
        unschedulable: true,
        ..fast()
    });
    server.add_object(json!({"apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstanceMigration",
        "metadata": {"name": "mig-never", "namespace": "prod",
            "creationTimestamp": kubevirt_sim::now()},
        "spec": {"vmiName": "batch-01"}}));
    wait("the migration's end", &|| {
        server
            .object(
                Kind::VirtualMachineInstanceMigration,
                Some("prod"),
                "mig-never",
            )
            .and_then(|m| m.pointer("/status/phase").cloned())
            == Some(json!("Failed"))
    });
    wait("the record line", &|| {
        lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains(" mig-never "))
    });
    let _ = recorder.kill();
    let _ = recorder.wait();
    // The VMI never left its node, and no target pod ever had one.
    let vmi = server
        .object(Kind::VirtualMachineInstance, Some("prod"), "batch-01")
        .unwrap();
    assert_eq!(vmi["status"]["nodeName"], json!(source));
    let target_nodes: Vec<Value> = server
        .objects(Kind::Pod)
        .into_iter()
        .filter(|p| {
            p["metadata"]["name"]
                .as_str()
                .unwrap_or("")
                .contains("batch-01")
        })
        .map(|p| p["spec"]["nodeName"].clone())
        .collect();
    assert!(
        target_nodes
            .iter()
            .all(|n| n.is_null() || *n == json!(source)),
        "only the source pod is on a node: {target_nodes:?}"
    );

    // explain, live: the source node in the document and in the words.
    let live = |args: &[&str]| {
        let mut all = vec!["--kubeconfig", kubeconfig.to_str().unwrap(), "-n", "prod"];
        all.extend(args);
        vmctl(all)
    };
    let out = live(&["explain", "migration/mig-never", "-o", "json"]);
    let doc: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", both(&out)));
    assert_eq!(doc["cause"], "target-pod-unschedulable", "{doc:#}");
    assert_eq!(doc["migration"]["sourceNode"], json!(source), "{doc:#}");
    assert_eq!(doc["migration"]["targetNode"], Value::Null, "{doc:#}");
    let text = stdout(&live(&["explain", "migration/mig-never"]));
    let route = format!("{source} → not scheduled · phase Failed");
    assert!(text.contains(&route), "{route:?} in\n{text}");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("source ") && l.contains(&source)),
        "the source launcher pod and its node:\n{text}"
    );

    // record: its line names the route the same way.
    let recorded = lines.lock().unwrap().clone();
    let line = recorded.iter().find(|l| l.contains(" mig-never ")).unwrap();
    assert!(
        line.contains(&format!(
            "cause=target-pod-unschedulable {source} → not scheduled took"
        )),
        "{line}"
    );
    // history: the journal holds the source; the node's history finds the migration.
    let history = |args: &[&str]| {
        let mut all = vec![
            "history",
            "--journal",
            journal.to_str().unwrap(),
            "-o",
            "json",
        ];
        all.extend(args);
        let out = vmctl(all);
        serde_json::from_slice::<Value>(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}\n{}", both(&out)))
    };
    let doc = history(&["-A"]);
    let record = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["migration"] == "mig-never")
        .unwrap_or_else(|| panic!("{doc:#}"))
        .clone();
    assert_eq!(record["sourceNode"], json!(source), "{record:#}");
    let doc = history(&[&format!("node/{source}")]);
    assert!(
        doc["records"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["migration"] == "mig-never"),
        "history node/{source}: {doc:#}"
    );
    drop(sim);
}
