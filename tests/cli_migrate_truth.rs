//! `vmctl migrate` through KubeVirt (issue 33, i33-k): the summary says where the VM went
//! (from the API) beside where vmctl predicted it would go; a time is either a prediction
//! made before the start or what is left now, labelled, never two bare ETAs.

mod common;
mod support;

use std::sync::Arc;

use common::*;
use serde_json::{Value, json};
use support::FakeApiServer;
use support::kubevirt_sim::{self, KubeVirtSim, Script};
use vmctl::cluster::Kind;

struct Lab {
    server: Arc<FakeApiServer>,
    _sim: KubeVirtSim,
    _dir: tempfile::TempDir,
    kubeconfig: String,
}

/// The sim's cluster plus node-0, too small for vmctl to predict it (1 MiB), where the
/// simulated scheduler puts the target pod anyway (`place_on`).
fn new_lab(script: Script) -> Lab {
    let mut objects = kubevirt_sim::cluster("v1.8.4");
    objects.insert(
        0,
        json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "node-0", "labels": {"kubevirt.io/schedulable": "true", "kubernetes.io/hostname": "node-0"}},
            "spec": {}, "status": {"allocatable": {"memory": "1Mi", "cpu": "1"},
                "conditions": [{"type": "Ready", "status": "True"}]}}),
    );
    let server = Arc::new(FakeApiServer::start_blocking(objects));
    let sim = KubeVirtSim::start(&server, script);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path()).display().to_string();
    Lab {
        server,
        _sim: sim,
        _dir: dir,
        kubeconfig,
    }
}

impl Lab {
    fn run(&self, args: &[&str]) -> std::process::Output {
        let mut all = vec![
            "--kubeconfig".to_string(),
            self.kubeconfig.clone(),
            "-n".into(),
            "prod".into(),
        ];
        all.extend(args.iter().map(|s| s.to_string()));
        vmctl(all)
    }

    fn node_of(&self, vmi: &str) -> String {
        self.server
            .objects(Kind::VirtualMachineInstance)
            .into_iter()
            .find(|v| v["metadata"]["name"] == vmi)
            .and_then(|v| v["status"]["nodeName"].as_str().map(str::to_string))
            .unwrap_or_default()
    }
}

fn elsewhere() -> Script {
    Script {
        running_ticks: 10,
        place_on: Some("node-0"),
        ..Script::default()
    }
}

#[test]
fn the_summary_says_where_the_vm_went_and_where_it_was_predicted_to_go() {
    let lab = new_lab(elsewhere());
    let out = lab.run(&["migrate", "db-01", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("-o json");
    assert_eq!(doc["targetNode"], "node-0", "{doc}");
    assert_eq!(
        doc["targetNode"].as_str(),
        Some(lab.node_of("db-01").as_str())
    );
    assert_eq!(doc["predictedTargetNode"], "node-2", "{doc}");
    assert_eq!(doc["asPredicted"], false, "{doc}");

    let lab = new_lab(elsewhere());
    let out = lab.run(&["migrate", "db-01"]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.contains("runs on node-0 now"))
        .unwrap_or_else(|| panic!("{}", both(&out)));
    assert!(line.contains("went to node-0; predicted node-2"), "{line}");
    assert_eq!(lab.node_of("db-01"), "node-0");

    // As predicted: said as such in -o json, nothing added to the words.
    let lab = new_lab(Script {
        place_on: Some("node-2"),
        ..elsewhere()
    });
    let out = lab.run(&["migrate", "db-01"]);
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.contains("runs on node-2 now"))
        .unwrap_or_else(|| panic!("{}", both(&out)));
    assert!(!line.contains("predicted"), "{line}");
}

/// A bare ETA: the word itself, whatever its case.
fn timings(line: &str) -> bool {
    line.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w == "eta")
}

#[test]
fn one_time_before_the_start_and_one_while_it_runs_each_labelled() {
    let lab = new_lab(Script {
        place_on: None,
        ..elsewhere()
    });
    // Before the start (dry run): the pre-flight names no duration of its own; the one
    // predicted duration is labelled as the prediction it is.
    let out = lab.run(&["migrate", "db-01", "--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let text = stdout(&out);
    let preflight = text
        .lines()
        .find(|l| l.contains("pre-flight passed"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(!preflight.contains("about"), "{preflight}");
    let predicted: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("predicted: about "))
        .collect();
    assert_eq!(predicted.len(), 1, "{text}");
    assert!(predicted[0].contains(" in all ("), "{text}");
    assert!(!text.lines().any(timings), "{text}");

    // While it runs (piped): what is left, labelled as left; no bare ETA.
    let out = lab.run(&["migrate", "db-01"]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let err = stderr(&out);
    let active: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("migration active"))
        .collect();
    assert!(!active.is_empty(), "{err}");
    for l in &active {
        assert!(!timings(l), "{l}");
        assert!(l.contains(" left"), "{l}");
    }
    assert!(!err.lines().any(timings), "{err}");
}

/// `migrate --dry-run` evicts nothing: a refusal says what the migration meets, never a
/// drain's "the eviction is refused" (cold trial: cache-redis-01, app-server-01).
#[test]
fn a_refused_migration_speaks_of_the_migration_not_of_an_eviction() {
    for vm in ["cache-redis-01", "app-server-01"] {
        let out = common::vmctl([
            "--from",
            "examples/cluster",
            "-n",
            "prod",
            "migrate",
            vm,
            "--dry-run",
        ]);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("not migrated"), "{vm}: {text}");
        assert!(!text.contains("eviction"), "{vm}: {text}");
        assert!(
            text.contains("until KubeVirt fails the migration"),
            "{vm}: {text}"
        );
    }
}
