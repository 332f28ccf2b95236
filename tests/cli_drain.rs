//! `vmctl drain` against the fake API server driven by the scripted KubeVirt
//! (`support::kubevirt_sim`): its eviction webhook, evacuation controller, PDBs.

mod common;
mod support;

use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};
use support::kubevirt_sim::{self, DrainFixture, KubeVirtSim, Script};
use support::{FakeApiServer, Method, RecordedRequest};
use vmctl::cluster::Kind;

struct Lab {
    server: Arc<FakeApiServer>,
    sim: KubeVirtSim,
    _dir: tempfile::TempDir,
    kubeconfig: String,
}

fn lab_with(fixture: DrainFixture, script: Script) -> Lab {
    let server = Arc::new(FakeApiServer::start_blocking(
        kubevirt_sim::drain_cluster_with(&fixture),
    ));
    let sim = KubeVirtSim::start(&server, script);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path()).display().to_string();
    Lab {
        server,
        sim,
        _dir: dir,
        kubeconfig,
    }
}

fn lab() -> Lab {
    lab_with(DrainFixture::default(), fast())
}

/// Migrations that take a second or two.
fn fast() -> Script {
    Script {
        running_ticks: 8,
        ..Script::default()
    }
}

const FLAGS: [&str; 3] = [
    "--ignore-daemonsets",
    "--delete-emptydir-data",
    "--allow-shutdowns",
];

impl Lab {
    fn args(&self, args: &[&str]) -> Vec<String> {
        let mut all = vec!["--kubeconfig".to_string(), self.kubeconfig.clone()];
        all.extend(args.iter().map(|s| s.to_string()));
        all
    }

    fn run(&self, args: &[&str]) -> Output {
        vmctl(self.args(args))
    }

    fn mutations(&self) -> Vec<RecordedRequest> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.method != Method::GET)
            .collect()
    }

    fn pods_on(&self, node: &str) -> Vec<String> {
        self.server
            .objects(Kind::Pod)
            .into_iter()
            .filter(|p| p["spec"]["nodeName"] == node)
            .map(|p| p["metadata"]["name"].as_str().unwrap_or("").to_string())
            .collect()
    }

    fn vmi_node(&self, name: &str) -> Option<String> {
        self.server
            .object(Kind::VirtualMachineInstance, Some("prod"), name)
            .and_then(|v| v["status"]["nodeName"].as_str().map(str::to_string))
    }
}

fn events(out: &Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn summary(out: &Output) -> Value {
    let evs = events(out);
    let last = evs.last().cloned().unwrap_or(Value::Null);
    assert_eq!(last["type"], "summary", "{}", both(out));
    last
}

#[test]
fn a_node_whose_vms_all_migrate_is_drained_and_every_move_is_shown() {
    let lab = lab();
    let mut args = vec!["drain", "node-1", "-o", "json"];
    args.extend(FLAGS);
    let out = lab.run(&args);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let evs = events(&out);
    assert!(
        evs.iter()
            .all(|e| e["kind"] == "DrainEvent" && e["apiVersion"] == "vmctl/v1alpha1")
    );
    let types: Vec<&str> = evs.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(types.first(), Some(&"plan"), "{text}");
    assert!(types.contains(&"cordoned"), "{text}");
    let s = summary(&out);
    assert_eq!(s["result"], "drained", "{text}");
    let moved: Vec<&str> = s["moved"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["vmi"].as_str())
        .collect();
    assert_eq!(moved, ["batch-01", "web-01"], "{text}");
    assert_eq!(
        s["stopped"],
        serde_json::json!(["prod/scratch-01"]),
        "{text}"
    );
    assert_eq!(s["podsLeft"], 0, "{text}");
    // Each migrated VM: the evacuation started, its migration shown with both pods, moved.
    for vmi in ["web-01", "batch-01"] {
        assert!(
            evs.iter()
                .any(|e| e["type"] == "evacuation-started" && e["vmi"] == vmi),
            "{vmi}\n{text}"
        );
        assert!(
            evs.iter().any(|e| e["type"] == "migration"
                && e["vmi"] == vmi
                && e["evacuation"] == true
                && e["sourcePod"].is_string()
                && e["targetPod"].is_string()),
            "{vmi}\n{text}"
        );
        assert_ne!(lab.vmi_node(vmi).as_deref(), Some("node-1"), "{vmi}");
    }
    // The node: cordoned, only the DaemonSet pods, the mirror pod and nothing else left.
    let node = lab.server.object(Kind::Node, None, "node-1").unwrap();
    assert_eq!(node["spec"]["unschedulable"], true);
    let mut left = lab.pods_on("node-1");
    left.sort();
    assert_eq!(
        left,
        ["kube-vip-node-1", "node-exporter-7xk2p", "virt-handler-1"],
        "{text}"
    );
    // vmctl evicts through the Eviction API and never creates a migration or deletes a pod.
    let m = lab.mutations();
    assert!(
        m.iter()
            .any(|r| r.method == Method::PATCH && r.path == "/api/v1/nodes/node-1")
    );
    assert!(m.iter().any(|r| r.path.ends_with("/eviction")));
    assert!(
        !m.iter()
            .any(|r| r.path.contains("virtualmachineinstancemigrations")
                || r.method == Method::DELETE),
        "{:?}",
        m.iter().map(RecordedRequest::line).collect::<Vec<_>>()
    );
}

#[test]
fn plain_output_speaks_kubectls_words() {
    let lab = lab();
    let mut args = vec!["drain", "node-1"];
    args.extend(FLAGS);
    let out = lab.run(&args);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let o = stdout(&out);
    for want in [
        "node/node-1 cordoned",
        "evicting pod prod/frontend-7d9f8b6c5d-x2x9q",
        "pod/frontend-7d9f8b6c5d-x2x9q evicted",
        "vm prod/web-01: KubeVirt is evacuating it",
        "vm prod/web-01 moved node-1 →",
        "vm prod/scratch-01 shut down",
        "node/node-1 drained",
    ] {
        assert!(o.contains(want), "{want}\n{text}");
    }
    assert!(
        stderr(&out).contains("Warning: ignoring DaemonSet-managed Pods"),
        "{text}"
    );
}

#[test]
fn shutdowns_are_refused_without_allow_shutdowns_and_nothing_changes() {
    let lab = lab();
    let out = lab.run(&[
        "drain",
        "node-1",
        "--ignore-daemonsets",
        "--delete-emptydir-data",
    ]);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(stdout(&out).contains("--allow-shutdowns"), "{text}");
    assert!(stdout(&out).contains("prod/scratch-01"), "{text}");
    assert!(lab.mutations().is_empty(), "{:?}", lab.mutations());
}

#[test]
fn kubectls_pod_rules_refuse_before_anything_changes() {
    let lab = lab_with(
        DrainFixture {
            bare_pod: true,
            ..DrainFixture::default()
        },
        fast(),
    );
    let out = lab.run(&["drain", "node-1", "--allow-shutdowns"]);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    for want in [
        "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): kube-system/node-exporter-7xk2p",
        "cannot delete Pods with local storage (use --delete-emptydir-data to override): prod/cache-6b8d9c7f4-q9w2e",
        "cannot delete Pods declare no controller (use --force to override): prod/debug-shell",
    ] {
        assert!(stdout(&out).contains(want), "{want}\n{text}");
    }
    assert!(lab.mutations().is_empty());
}

#[test]
fn a_vm_that_cannot_leave_stops_the_drain_before_the_cordon_or_is_named_with_force_partial() {
    let fixture = DrainFixture {
        blocker: true,
        ..DrainFixture::default()
    };
    let lab = lab_with(fixture.clone(), fast());
    let mut args = vec!["drain", "node-1", "-o", "json"];
    args.extend(FLAGS);
    let out = lab.run(&args);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    assert_eq!(summary(&out)["result"], "refused");
    assert!(lab.mutations().is_empty());

    let lab = lab_with(fixture, fast());
    args.push("--force-partial");
    let out = lab.run(&args);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let s = summary(&out);
    assert_eq!(s["result"], "blocked", "{text}");
    assert_eq!(s["blocked"][0]["vmi"], "db-01", "{text}");
    assert_eq!(s["blocked"][0]["reason"], "not-live-migratable", "{text}");
    // Everything else left.
    assert_eq!(s["moved"].as_array().map(Vec::len), Some(2), "{text}");
    assert!(
        s["resume"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == "give up: kubectl uncordon node-1")
    );
}

#[test]
fn a_failing_evacuation_is_diagnosed_and_kubevirts_retry_followed() {
    let lab = lab_with(
        DrainFixture::default(),
        Script {
            evacuation_failures: 1,
            evacuation_backoff_ticks: 10,
            ..fast()
        },
    );
    let mut args = vec!["drain", "node-1", "-o", "json"];
    args.extend(FLAGS);
    let out = lab.run(&args);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let evs = events(&out);
    let failed: Vec<&Value> = evs
        .iter()
        .filter(|e| e["type"] == "migration-failed")
        .collect();
    assert_eq!(failed.len(), 2, "one per evacuated VM\n{text}");
    for f in failed {
        assert_eq!(f["retry"], true, "{text}");
        // The reason, also when the VMIM's watch reports the failure before the VMI's.
        assert!(
            f["reason"]
                .as_str()
                .is_some_and(|r| r.contains("Connection reset by peer")),
            "{text}"
        );
        assert!(f["diagnosis"]["plane"].is_string(), "{text}");
        assert!(f["diagnosis"]["cause"].is_string(), "{text}");
    }
    assert_eq!(summary(&out)["result"], "drained");
}

/// Issue 25: a failed evacuation is diagnosed with the 2026 signatures, as explain does
/// (the text harvester#5755 quotes: the target's libvirt refuses the guest CPU mid-upgrade).
#[test]
fn a_failed_evacuation_is_diagnosed_as_the_cpu_mismatch_it_was() {
    let lab = lab_with(
        DrainFixture::default(),
        Script {
            evacuation_failures: 1,
            evacuation_failure_reason: Some(
                "Live migration failed error encountered during MigrateToURI3 libvirt api call: virError(Code=9, Domain=31, Message='operation failed: guest CPU doesn't match specification: missing features: waitpkg')",
            ),
            evacuation_backoff_ticks: 10,
            ..fast()
        },
    );
    let mut args = vec!["drain", "node-1", "-o", "json"];
    args.extend(FLAGS);
    let out = lab.run(&args);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let evs = events(&out);
    let failed: Vec<&Value> = evs
        .iter()
        .filter(|e| e["type"] == "migration-failed")
        .collect();
    assert_eq!(failed.len(), 2, "one per evacuated VM\n{text}");
    for f in failed {
        assert_eq!(f["diagnosis"]["cause"], "cpu-feature-mismatch", "{text}");
        assert_eq!(f["diagnosis"]["plane"], "data-plane", "{text}");
        assert!(
            f["diagnosis"]["summary"]
                .as_str()
                .is_some_and(|s| s.contains("waitpkg")),
            "{text}"
        );
    }
    assert_eq!(summary(&out)["result"], "drained");
}

#[test]
fn ctrl_c_leaves_the_node_cordoned_and_a_second_run_finishes() {
    let lab = lab_with(
        DrainFixture::default(),
        Script {
            running_ticks: 60,
            ..Script::default()
        },
    );
    let mut args = vec!["drain", "node-1", "-o", "json"];
    args.extend(FLAGS);
    let child = Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(lab.args(&args))
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until KubeVirt migrates a VM, then interrupt.
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline
        && !lab
            .server
            .objects(Kind::VirtualMachineInstanceMigration)
            .iter()
            .any(|m| m["status"]["phase"] == "Running")
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let out = child.wait_with_output().unwrap();
    let text = both(&out);
    assert_eq!(out.status.code(), Some(130), "{text}");
    let s = summary(&out);
    assert_eq!(s["result"], "interrupted", "{text}");
    assert!(!s["migrating"].as_array().unwrap().is_empty(), "{text}");
    let resume: Vec<&str> = s["resume"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        resume
            .iter()
            .any(|r| r.starts_with("resume: vmctl drain node-1")),
        "{text}"
    );
    assert!(resume.iter().any(|r| r.contains("--evacuation")), "{text}");
    // The migrations go on (vmctl deleted nothing), the node stays cordoned.
    assert!(!lab.mutations().iter().any(|r| r.method == Method::DELETE));
    let node = lab.server.object(Kind::Node, None, "node-1").unwrap();
    assert_eq!(node["spec"]["unschedulable"], true);

    lab.sim.set_script(fast());
    let out = lab.run(&args);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let s = summary(&out);
    assert_eq!(s["result"], "drained", "{text}");
    assert!(
        events(&out)
            .iter()
            .any(|e| e["type"] == "cordoned" && e["alreadyCordoned"] == true)
    );
}

#[test]
fn dry_run_changes_nothing_and_says_what_it_would_do() {
    let lab = lab();
    let mut args = vec!["drain", "node-1", "--dry-run"];
    args.extend(FLAGS);
    let out = lab.run(&args);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(stdout(&out).contains("would cordon node/node-1"), "{text}");
    assert!(
        stdout(&out)
            .contains("would evict pod prod/virt-launcher-web-01-abcde (vm web-01: live-migrate)"),
        "{text}"
    );
    assert!(lab.mutations().is_empty());
}

#[test]
fn a_pdb_without_room_is_waited_for_with_its_numbers_then_the_pod_goes() {
    let lab = lab();
    let mut pdb = lab
        .server
        .object(Kind::PodDisruptionBudget, Some("prod"), "frontend-pdb")
        .unwrap();
    pdb["status"]["disruptionsAllowed"] = serde_json::json!(0);
    pdb["status"]["currentHealthy"] = serde_json::json!(1);
    pdb["status"]["desiredHealthy"] = serde_json::json!(1);
    lab.server.update_object(pdb.clone());
    // The budget frees up a few seconds in (a new replica became ready elsewhere).
    let server = Arc::clone(&lab.server);
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(4));
        pdb["status"]["disruptionsAllowed"] = serde_json::json!(1);
        pdb["status"]["currentHealthy"] = serde_json::json!(2);
        server.update_object(pdb);
    });
    let mut args = vec!["drain", "node-1", "-o", "json"];
    args.extend(FLAGS);
    let out = lab.run(&args);
    release.join().unwrap();
    let text = both(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let waits: Vec<Value> = events(&out)
        .into_iter()
        .filter(|e| e["type"] == "waiting")
        .collect();
    // Shown once, though kubectl's 5 s retry asked again.
    assert_eq!(waits.len(), 1, "{text}");
    assert_eq!(waits[0]["reason"], "pdb");
    assert_eq!(waits[0]["pdb"], "frontend-pdb");
    assert!(
        waits[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("needs 1 healthy pods and has 1 currently")),
        "{text}"
    );
    let evictions = lab
        .server
        .count_requests(|r| r.path.ends_with("/pods/frontend-7d9f8b6c5d-x2x9q/eviction"));
    assert!(evictions >= 2, "{evictions}");
    assert_eq!(summary(&out)["result"], "drained");
}

#[test]
fn two_pdbs_over_one_pod_are_a_blocker_at_once() {
    let lab = lab_with(
        DrainFixture {
            second_pdb: true,
            ..DrainFixture::default()
        },
        fast(),
    );
    let mut args = vec!["drain", "node-1", "-o", "json", "--force-partial"];
    args.extend(FLAGS);
    let out = lab.run(&args);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let s = summary(&out);
    assert_eq!(s["result"], "blocked", "{text}");
    assert_eq!(
        s["blocked"][0]["pod"], "frontend-7d9f8b6c5d-x2x9q",
        "{text}"
    );
    assert_eq!(s["blocked"][0]["reason"], "more-than-one-pdb", "{text}");
    // Asked once: a 500 that waiting cannot fix is not retried.
    assert_eq!(
        lab.server
            .count_requests(|r| r.path.ends_with("/pods/frontend-7d9f8b6c5d-x2x9q/eviction")),
        1
    );
}

#[test]
fn the_timeout_ends_the_wait_not_the_migrations() {
    let lab = lab_with(
        DrainFixture::default(),
        Script {
            hold_running: true,
            ..Script::default()
        },
    );
    let mut args = vec![
        "drain",
        "node-1",
        "-o",
        "json",
        "--timeout",
        "4s",
        "--grace-period",
        "30",
    ];
    args.extend(FLAGS);
    let out = lab.run(&args);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(6), "{text}");
    let s = summary(&out);
    assert_eq!(s["result"], "timeout", "{text}");
    assert_eq!(s["migrating"].as_array().map(Vec::len), Some(2), "{text}");
    assert!(!lab.mutations().iter().any(|r| r.method == Method::DELETE));
    // The grace period goes into every eviction, as kubectl's.
    let evictions: Vec<RecordedRequest> = lab
        .mutations()
        .into_iter()
        .filter(|r| r.path.ends_with("/eviction"))
        .collect();
    assert!(!evictions.is_empty());
    for e in evictions {
        let body: Value = serde_json::from_str(&e.body).unwrap();
        assert_eq!(body["kind"], "Eviction");
        assert_eq!(body["apiVersion"], "policy/v1");
        assert_eq!(
            body["deleteOptions"]["gracePeriodSeconds"], 30,
            "{}",
            e.body
        );
    }
}

#[test]
fn no_wait_returns_once_everything_is_handed_off() {
    let lab = lab_with(
        DrainFixture::default(),
        Script {
            hold_running: true,
            ..Script::default()
        },
    );
    let mut args = vec!["drain", "node-1", "-o", "json", "--no-wait"];
    args.extend(FLAGS);
    let out = lab.run(&args);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let s = summary(&out);
    assert_eq!(s["result"], "handed-off", "{text}");
    let migrating: Vec<&str> = s["migrating"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["vmi"].as_str())
        .collect();
    assert_eq!(migrating, ["batch-01", "web-01"], "{text}");
    assert!(
        s["resume"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.as_str().is_some_and(|r| r.contains("--evacuation"))),
        "{text}"
    );
}

#[test]
fn a_terminal_gets_one_live_view() {
    let lab = lab_with(
        DrainFixture::default(),
        Script {
            running_ticks: 40,
            ..Script::default()
        },
    );
    let cmd = format!(
        "{} --kubeconfig {} drain node-1 {} --timeout 60s",
        env!("CARGO_BIN_EXE_vmctl"),
        lab.kubeconfig,
        FLAGS.join(" ")
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env_remove("NO_COLOR")
        .env_remove("KUBECONFIG")
        .output()
        .expect("script(1) from bsdutils must be installed");
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{screen}");
    assert!(
        screen.contains("\u{1b}["),
        "no terminal control sequences: {screen}"
    );
    // The totals line (the numbers apart, no ETA it cannot know), and a bar per VM with
    // its data and dirty rate (never a bar of no bytes).
    assert!(screen.contains("VMs moved"), "{screen}");
    assert!(screen.contains("evictions accepted"), "{screen}");
    assert!(!screen.contains("ETA"), "{screen}");
    assert!(!screen.contains("0 B of 0 B"), "{screen}");
    assert!(screen.contains("dirtying"), "no progress bar: {screen}");
    assert!(screen.contains("node/node-1 drained"), "{screen}");
}

/// `vmctl drain` on a terminal, typing `answer` at its question.
fn on_a_terminal(lab: &Lab, flags: &str, answer: &str) -> (std::process::ExitStatus, String) {
    use std::io::Write;
    let cmd = format!(
        "{} --kubeconfig {} drain node-1 {flags} --timeout 60s",
        env!("CARGO_BIN_EXE_vmctl"),
        lab.kubeconfig,
    );
    let mut child = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script(1) from bsdutils must be installed");
    // Answer once the question is on the screen (the plan takes a moment to read).
    std::thread::sleep(Duration::from_millis(1500));
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(answer.as_bytes());
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn on_a_terminal_shutdowns_are_asked_for_and_a_no_changes_nothing() {
    let lab = lab();
    let (status, screen) = on_a_terminal(&lab, "--ignore-daemonsets --delete-emptydir-data", "n\n");
    assert_eq!(status.code(), Some(1), "{screen}");
    assert!(screen.contains("the drain shuts down 1 VM(s)"), "{screen}");
    assert!(
        screen.contains("prod/scratch-01 (shutdown): its VM starts it again elsewhere"),
        "{screen}"
    );
    assert!(screen.contains("shut them down? [y/N]"), "{screen}");
    assert!(lab.mutations().is_empty());

    let (status, screen) = on_a_terminal(&lab, "--ignore-daemonsets --delete-emptydir-data", "y\n");
    assert_eq!(status.code(), Some(0), "{screen}");
    assert!(screen.contains("node/node-1 drained"), "{screen}");
}

#[test]
fn a_pdb_whose_status_never_catches_up_is_a_blocker_at_once_not_a_wait() {
    let lab = lab();
    // frontend-pdb edited (generation 2) into one the disruption controller cannot sync:
    // failSafe wrote SyncFailed and left observedGeneration at 1, so the eviction API
    // answers "still being processed" for good.
    let mut pdb = lab
        .server
        .object(Kind::PodDisruptionBudget, Some("prod"), "frontend-pdb")
        .unwrap();
    pdb["metadata"]["generation"] = serde_json::json!(2);
    pdb["spec"] =
        serde_json::json!({"maxUnavailable": 1, "selector": pdb["spec"]["selector"].clone()});
    pdb["status"] = serde_json::json!({"observedGeneration": 1, "disruptionsAllowed": 0,
        "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2,
        "conditions": [{"type": "DisruptionAllowed", "status": "False", "reason": "SyncFailed",
            "message": "jobs.batch does not implement the scale subresource",
            "lastTransitionTime": "2026-11-02T00:00:05Z", "observedGeneration": 1}]});
    lab.server.update_object(pdb);
    let mut args = vec!["drain", "node-1", "-o", "json", "--force-partial"];
    args.extend(FLAGS);
    let out = lab.run(&args);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let s = summary(&out);
    assert_eq!(s["result"], "blocked", "{text}");
    let blocked = &s["blocked"][0];
    assert_eq!(blocked["pod"], "frontend-7d9f8b6c5d-x2x9q", "{text}");
    assert_eq!(blocked["reason"], "pdb-never-syncs", "{text}");
    assert!(
        blocked["message"]
            .as_str()
            .is_some_and(|m| m.contains("for good") && m.contains("jobs.batch does not implement")),
        "{text}"
    );
    // Asked once: waiting cannot fix it.
    assert_eq!(
        lab.server
            .count_requests(|r| r.path.ends_with("/pods/frontend-7d9f8b6c5d-x2x9q/eviction")),
        1
    );
}

/// What vmctl wrote to the API server, beyond reading: the cordon and the evictions only.
/// vmctl never creates, patches or deletes a migration, never cancels an evacuation by
/// itself and never deletes a pod: the way out is for the operator to take.
fn only_the_drains_own_writes(lab: &Lab) {
    let m = lab.mutations();
    let lines: Vec<String> = m.iter().map(RecordedRequest::line).collect();
    assert!(m.iter().any(|r| r.path.ends_with("/eviction")), "{lines:?}");
    for r in &m {
        let cordon = r.method == Method::PATCH && r.path == "/api/v1/nodes/node-1";
        let eviction = r.method == Method::POST && r.path.ends_with("/eviction");
        assert!(
            cordon || eviction,
            "unexpected write {}\n{lines:?}",
            r.line()
        );
    }
}

/// harvester/harvester#10698: an evacuation whose migrations keep failing. KubeVirt's
/// evacuation controller creates a new `kubevirt-evacuation-*` VMIM after each failure for
/// as long as `status.evacuationNodeName` stays set (`pkg/virt-controller/watch/drain/
/// evacuation/evacuation.go`), spaced only by `handleMigrationBackoff`
/// (`pkg/virt-controller/watch/migration/migration.go`). After `--loop-failures` (3) failed
/// attempts drain stops waiting and names the loop, the VMI field that keeps it going and
/// the way out, in JSON and in plain text.
#[test]
fn an_evacuation_that_keeps_failing_is_named_a_loop_with_its_blocking_field_and_way_out() {
    let looping = || Script {
        // Every evacuation attempt fails (the sim's libvirt job breaks a few ticks in).
        evacuation_failures: u32::MAX,
        evacuation_backoff_ticks: 1,
        ..fast()
    };
    let lab = lab_with(DrainFixture::default(), looping());
    let mut args = vec!["drain", "node-1", "-o", "json", "--timeout", "120s"];
    args.extend(FLAGS);
    let out = lab.run(&args);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let s = summary(&out);
    assert_eq!(s["result"], "blocked", "{text}");
    let blocked: Vec<&Value> = s["blocked"].as_array().unwrap().iter().collect();
    let mut vms: Vec<&str> = blocked.iter().filter_map(|b| b["vmi"].as_str()).collect();
    vms.sort();
    assert_eq!(vms, ["batch-01", "web-01"], "{text}");
    for b in &blocked {
        let vmi = b["vmi"].as_str().unwrap();
        assert_eq!(b["reason"], "evacuation-loop", "{text}");
        let message = b["message"].as_str().unwrap();
        for want in [
            format!("to evacuate prod/{vmi} from node-1 and every attempt failed"),
            "Connection reset by peer".to_string(),
            format!(
                "Blocking: VirtualMachineInstance/prod/{vmi} status.evacuationNodeName = node-1."
            ),
            format!("vmctl abort --evacuation vm/{vmi} -n prod"),
            "kubectl uncordon node-1".to_string(),
        ] {
            assert!(message.contains(&want), "{want}\n{message}");
        }
    }
    // Three failed attempts seen before it gave up (the sim fails every one).
    let evs = events(&out);
    for vmi in ["web-01", "batch-01"] {
        let failed: Vec<&Value> = evs
            .iter()
            .filter(|e| e["type"] == "migration-failed" && e["vmi"] == vmi)
            .collect();
        assert!(!failed.is_empty(), "{vmi}\n{text}");
        assert_eq!(failed.last().unwrap()["retry"], false, "{vmi}\n{text}");
        assert!(
            evs.iter().any(|e| e["type"] == "blocked"
                && e["vmi"] == vmi
                && e["reason"] == "evacuation-loop"),
            "{vmi}\n{text}"
        );
        // Still on node-1, still marked: vmctl did not clear the mark itself.
        assert_eq!(lab.vmi_node(vmi).as_deref(), Some("node-1"), "{vmi}");
    }
    let resume: Vec<&str> = s["resume"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        resume.contains(&"give up: kubectl uncordon node-1"),
        "{text}"
    );
    // What ends the loop comes first, and resuming is offered only after it: resuming
    // as such would only run into the loop again.
    let first = |vmi: &str| {
        resume
            .iter()
            .position(|r| {
                r.starts_with(&format!("first, vm prod/{vmi} (evacuation-loop): Cancel the evacuation: vmctl abort --evacuation vm/{vmi} -n prod"))
            })
            .unwrap_or_else(|| panic!("{vmi}: {resume:#?}"))
    };
    let again = resume
        .iter()
        .position(|r| {
            r.starts_with("then, once the loop(s) above have ended, resume: vmctl drain node-1")
        })
        .unwrap_or_else(|| panic!("{resume:#?}"));
    assert!(
        first("web-01") < again && first("batch-01") < again,
        "{resume:#?}"
    );
    assert!(
        !resume.iter().any(|r| r.starts_with("resume:")),
        "{resume:#?}"
    );
    // The drain has stopped: its way out does not tell to Ctrl-C it.
    assert!(!resume.iter().any(|r| r.contains("Ctrl-C")), "{resume:#?}");
    only_the_drains_own_writes(&lab);

    // The same in plain text: the blocker line and the summary name the field and way out.
    let lab = lab_with(DrainFixture::default(), looping());
    let mut args = vec!["drain", "node-1", "--timeout", "120s"];
    args.extend(FLAGS);
    let out = lab.run(&args);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let o = stdout(&out);
    for want in [
        "vm prod/web-01 blocks the drain: evacuation-loop: KubeVirt has tried",
        "Blocking: VirtualMachineInstance/prod/web-01 status.evacuationNodeName = node-1.",
        "vmctl abort --evacuation vm/web-01 -n prod",
        "blocked: node-1 not drained",
        "    vm prod/web-01: evacuation-loop: ",
        "give up: kubectl uncordon node-1",
    ] {
        assert!(o.contains(want), "{want}\n{text}");
    }
    only_the_drains_own_writes(&lab);
}

/// kubevirt/kubevirt#17317, #18259: a decentralized migration whose peer never synchronizes
/// stays in Synchronizing with no timeout (`processMigrationPhase` in
/// `pkg/virt-controller/watch/migration/migration.go`), and the evacuation controller skips a
/// VMI with an unfinished migration (`evacuation.go`), so nothing will move the VM: drain
/// names it a blocker at once instead of waiting for `--timeout`.
#[test]
fn a_decentralized_migration_stuck_in_synchronizing_blocks_the_drain_at_once() {
    let lab = lab();
    // web-01 is the sending side of a cross-cluster migration that entered Synchronizing
    // ten minutes ago (past the 5 m --sync-timeout); the receiver never showed up, so its
    // targetState was never filled (shape of tests/fixtures/explain-kv19/sync-sender).
    let ten_minutes_ago = Timestamp::now()
        .checked_sub(SignedDuration::from_secs(600))
        .unwrap()
        .to_string();
    let mut vmi = lab
        .server
        .object(Kind::VirtualMachineInstance, Some("prod"), "web-01")
        .unwrap();
    vmi["status"]["migrationState"] = json!({
        "migrationUid": "uid-web-01-send", "sourceNode": "node-1",
        "sourcePod": "virt-launcher-web-01-abcde",
        "sourceState": {"node": "node-1", "pod": "virt-launcher-web-01-abcde",
            "migrationUID": "uid-web-01-send", "syncAddress": "10.20.0.7:9185",
            "domainName": "web-01", "domainNamespace": "prod"}});
    lab.server.update_object(vmi);
    lab.server.add_object(json!({"apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstanceMigration",
        "metadata": {"name": "web-01-send", "namespace": "prod", "uid": "uid-web-01-send",
            "creationTimestamp": ten_minutes_ago, "labels": {"kubevirt.io/vmi-name": "web-01"}},
        "spec": {"vmiName": "web-01", "priority": "user-triggered",
            "sendTo": {"migrationID": "mig-web-01-dc2", "connectURL": "sync.dc2.example.net:9185"}},
        "status": {"phase": "Synchronizing",
            "phaseTransitionTimestamps": [{"phase": "Synchronizing",
                "phaseTransitionTimestamp": ten_minutes_ago}],
            "migrationState": {"sourcePod": "virt-launcher-web-01-abcde"},
            "synchronizationAddresses": ["10.20.0.7:9185"]}}));
    // The plan sees the loop (the same detection): the drain refuses before it changes
    // anything, naming the loop, unless told to drain what can leave.
    let mut args = vec!["drain", "node-1", "-o", "json", "--timeout", "45s"];
    args.extend(FLAGS);
    let out = lab.run(&args);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let s = summary(&out);
    assert_eq!(s["result"], "refused", "{text}");
    assert!(
        s["reasons"][0]
            .as_str()
            .is_some_and(|r| r.contains("will-block") && r.contains("decentralized-sync-stuck")),
        "{text}"
    );
    assert!(lab.mutations().is_empty(), "{text}");

    let started = Instant::now();
    args.push("--force-partial");
    let out = lab.run(&args);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    // At once: well before --timeout (exit 6), not after it.
    assert!(started.elapsed() < Duration::from_secs(40), "{text}");
    let s = summary(&out);
    assert_eq!(s["result"], "blocked", "{text}");
    let blocked = s["blocked"].as_array().unwrap();
    assert_eq!(blocked.len(), 1, "{text}");
    assert_eq!(blocked[0]["vmi"], "web-01", "{text}");
    assert_eq!(blocked[0]["reason"], "decentralized-sync-stuck", "{text}");
    let message = blocked[0]["message"].as_str().unwrap();
    for want in [
        "web-01-send has been in Synchronizing for 10m",
        "migrationID mig-web-01-dc2",
        "Blocking: VirtualMachineInstance/prod/web-01 status.migrationState.targetState.migrationUID = (absent).",
        "spec.receive.migrationID mig-web-01-dc2",
        "To give up: kubectl delete vmim web-01-send -n prod",
    ] {
        assert!(message.contains(want), "{want}\n{message}");
    }
    // The other VM moved; the stuck one stays where it runs, its migration untouched.
    let moved: Vec<&str> = s["moved"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["vmi"].as_str())
        .collect();
    assert_eq!(moved, ["batch-01"], "{text}");
    assert_eq!(lab.vmi_node("web-01").as_deref(), Some("node-1"));
    let vmim = lab
        .server
        .object(
            Kind::VirtualMachineInstanceMigration,
            Some("prod"),
            "web-01-send",
        )
        .unwrap();
    assert_eq!(vmim["status"]["phase"], "Synchronizing");
    // The summary offers the loop's own way out, not an evacuation's abort (this is no
    // evacuation: evacuate/cancel does not touch it), and resuming only after it.
    let resume: Vec<&str> = s["resume"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        resume.iter().any(|r| r.starts_with(
            "first, vm prod/web-01 (decentralized-sync-stuck): To give up: kubectl delete vmim web-01-send -n prod"
        )),
        "{resume:#?}"
    );
    assert!(
        !resume.iter().any(|r| r.contains("--evacuation")),
        "{resume:#?}"
    );
    assert!(
        resume.iter().any(|r| r
            .starts_with("then, once the loop(s) above have ended, resume: vmctl drain node-1")),
        "{resume:#?}"
    );
    only_the_drains_own_writes(&lab);
}

/// Interrupted while a post-copy migration runs *into* the node: the summary lists every
/// migration its totals count, the post-copy one first and marked so, and offers no step
/// that would stop it (stopping a post-copy migration loses the guest).
#[test]
fn ctrl_c_lists_every_migration_it_counts_post_copy_first() {
    let lab = lab_with(
        DrainFixture {
            incoming_post_copy: true,
            ..DrainFixture::default()
        },
        Script {
            running_ticks: 60,
            ..Script::default()
        },
    );
    let mut args = vec!["drain", "node-1", "-o", "json"];
    args.extend(FLAGS);
    let child = Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(lab.args(&args))
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until KubeVirt runs an evacuation besides the post-copy one, then interrupt.
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline
        && !lab
            .server
            .objects(Kind::VirtualMachineInstanceMigration)
            .iter()
            .any(|m| {
                m["status"]["phase"] == "Running"
                    && m["metadata"]["name"] != kubevirt_sim::INCOMING_VMIM
            })
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let out = child.wait_with_output().unwrap();
    let text = both(&out);
    assert_eq!(out.status.code(), Some(130), "{text}");
    let s = summary(&out);
    assert_eq!(s["result"], "interrupted", "{text}");
    let migrating = s["migrating"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        Some(migrating.len() as u64),
        s["migrationsInFlight"].as_u64(),
        "every migration counted is listed\n{text}"
    );
    assert!(migrating.len() >= 2, "{text}");
    assert_eq!(migrating[0]["vmi"], "mail-01", "{text}");
    assert_eq!(migrating[0]["postCopy"], true, "{text}");
    assert_eq!(migrating[0]["into"], "node-1", "{text}");
    let resume = s["resume"].to_string();
    assert!(!resume.contains("vm/mail-01"), "{text}");
}

/// Issue 33 (tried cold): against an API server that serves no DaemonSets (apps/v1
/// `daemonsets` answer 404, as the bare fake server does), `drain --dry-run` printed
/// `cannot delete the server could not find the requested resource: kubevirt/virt-handler-1`
/// (kubectl's words, naming neither the DaemonSet nor what is missing, and "delete" in a dry
/// run). kubectl's daemonSetFilter (pkg/drain/filters.go) takes any 404 for an orphan:
/// refused unless --force, deleted with it. vmctl does the same, on one line naming the pod,
/// the DaemonSet and what is missing, under a header that says the dry run changed nothing.
#[test]
fn a_dry_run_without_daemonsets_served_names_the_pod_and_what_is_missing() {
    let server = FakeApiServer::start_blocking(kubevirt_sim::drain_cluster());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path()).display().to_string();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--kubeconfig",
            kubeconfig.as_str(),
            "drain",
            "node-1",
            "--dry-run",
        ];
        args.extend(FLAGS);
        args.extend(extra);
        vmctl(args)
    };
    let out = run(&[]);
    let text = both(&out);
    assert_ne!(out.status.code(), Some(0), "{text}");
    assert!(
        !text.contains("cannot delete the server could not find"),
        "{text}"
    );
    assert!(!text.contains("\\n"), "a literal \\n: {text}");
    let line = text
        .lines()
        .find(|l| l.contains("kubevirt/virt-handler-1"))
        .unwrap_or_else(|| panic!("no line names the pod\n{text}"));
    assert!(
        line.contains("DaemonSet kubevirt/virt-handler is not found")
            && line.contains("the API server serves no apps/v1 DaemonSets")
            && line.contains("--force"),
        "{line}\n{text}"
    );
    assert!(
        text.contains("dry run: nothing was changed on node-1; the drain would refuse:"),
        "{text}"
    );
    // kubectl's rule: with --force the orphan goes (the dry run refuses nothing for it).
    let out = run(&["--force"]);
    let text = both(&out);
    assert!(!text.contains("is not found"), "{text}");
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        server.requests().iter().all(|r| r.method == Method::GET),
        "a dry run changes nothing: {:?}",
        server
            .requests()
            .iter()
            .filter(|r| r.method != Method::GET)
            .map(|r| r.line())
            .collect::<Vec<_>>()
    );
}
