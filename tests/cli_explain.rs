//! `vmctl explain` on the example incidents and the example cluster: every cause, the JSON
//! contract, the rendering (insta), live == files, request counts, and bad input.

mod common;
mod support;

use std::path::{Path, PathBuf};

use common::*;
use serde::Deserialize;
use support::FakeApiServer;

const INCIDENTS: &str = "examples/incidents";
const INCIDENTS_NOW: &str = "2026-12-03T10:00:00Z";

fn incidents() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENTS)
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/explain")
        .join(name)
        .display()
        .to_string()
}

/// The documented `-o json` contract, read the way a consumer would.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Report {
    api_version: String,
    kind: String,
    as_of: String,
    source: String,
    kubevirt_version: Option<String>,
    outcome: String,
    plane: String,
    cause: String,
    summary: String,
    inferred: bool,
    rule: Rule,
    migration: Option<serde_json::Value>,
    vmi: Vmi,
    pods: Vec<PodInfo>,
    attention: Vec<String>,
    evidence: Vec<Fact>,
    timeline: Vec<Step>,
    next_steps: Vec<String>,
    #[serde(default)]
    history: Option<Vec<History>>,
    #[serde(default)]
    notes: Vec<String>,
    confidence: String,
    unexplained: Vec<UnexplainedItem>,
    assumptions: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct UnexplainedItem {
    object: String,
    source: String,
    reason: String,
    message: String,
    #[serde(default)]
    count: Option<i64>,
    #[serde(default)]
    time: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: String,
    plane: String,
    reads: Vec<String>,
    advice: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Vmi {
    namespace: String,
    name: String,
    exists: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodInfo {
    role: String,
    name: Option<String>,
    exists: bool,
    live: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Fact {
    object: String,
    field: String,
    value: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Step {
    time: String,
    object: String,
    what: String,
    offset_seconds: i64,
    since_previous_seconds: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct History {
    name: String,
    outcome: String,
    cause: String,
    backoff_seconds: Option<i64>,
    since_previous_seconds: Option<i64>,
}

fn explain_json(from: &str, target: &str) -> (Report, i32) {
    let out = vmctl(["--from", from, "explain", target, "-o", "json"]);
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "{target}: exit {code}\n{}",
        stderr(&out)
    );
    let report: Report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{target}: {e}\n{}", stdout(&out)));
    (report, code)
}

fn has_fact(r: &Report, object: &str, field: &str, value: &str) -> bool {
    r.evidence
        .iter()
        .any(|f| f.object == object && f.field == field && f.value == value)
}

// ---------------------------------------------------------------- every cause

/// (target, cause, plane, outcome, inferred, exit code)
const INCIDENT_CASES: &[(&str, &str, &str, &str, bool, i32)] = &[
    (
        "mig-unsched-affinity",
        "target-pod-unschedulable",
        "control-plane",
        "failed",
        false,
        1,
    ),
    (
        "mig-target-imagepull",
        "target-pod-not-ready",
        "control-plane",
        "blocked",
        false,
        1,
    ),
    (
        "mig-create-forbidden",
        "target-pod-create-failed",
        "control-plane",
        "blocked",
        false,
        1,
    ),
    (
        "mig-quota",
        "resource-quota-exceeded",
        "control-plane",
        "blocked",
        false,
        1,
    ),
    (
        "mig-cpu-model",
        "no-node-for-cpu-model",
        "control-plane",
        "blocked",
        false,
        1,
    ),
    (
        "mig-utility-volumes",
        "blocked-by-utility-volumes",
        "control-plane",
        "blocked",
        false,
        1,
    ),
    (
        "mig-backup",
        "blocked-by-backup",
        "control-plane",
        "blocked",
        false,
        1,
    ),
    (
        "vm/render-01",
        "not-live-migratable",
        "control-plane",
        "blocked",
        false,
        1,
    ),
    (
        "mig-batch-03",
        "queued-parallel-limit",
        "control-plane",
        "in-progress",
        false,
        0,
    ),
    (
        "mig-search-b",
        "another-migration-in-progress",
        "control-plane",
        "failed",
        false,
        1,
    ),
    (
        "mig-target-lost",
        "target-pod-lost",
        "control-plane",
        "failed",
        false,
        1,
    ),
    (
        "mig-vmi-shutdown",
        "vmi-stopped-during-migration",
        "control-plane",
        "failed",
        false,
        1,
    ),
    (
        "kubevirt-evacuation-pp4wc",
        "migration-backoff",
        "control-plane",
        "blocked",
        false,
        1,
    ),
    (
        "kubevirt-evacuation-5xq8d",
        "connection-failure",
        "data-plane",
        "failed",
        false,
        1,
    ),
    (
        "mig-converge-v18",
        "not-converging",
        "data-plane",
        "failed",
        false,
        1,
    ),
    (
        "mig-converge-v19",
        "not-converging",
        "data-plane",
        "failed",
        true,
        1,
    ),
    (
        "mig-stall-v18",
        "no-progress",
        "data-plane",
        "failed",
        false,
        1,
    ),
    (
        "mig-stall-v19",
        "no-progress",
        "data-plane",
        "failed",
        true,
        1,
    ),
    (
        "mig-postcopy-v18",
        "postcopy-failed",
        "data-plane",
        "failed",
        false,
        1,
    ),
    (
        "mig-postcopy-v19",
        "postcopy-failed",
        "data-plane",
        "failed",
        false,
        1,
    ),
    (
        "mig-conn-v18",
        "connection-failure",
        "data-plane",
        "failed",
        false,
        1,
    ),
    (
        "mig-conn-v19",
        "connection-failure",
        "data-plane",
        "failed",
        false,
        1,
    ),
    (
        "mig-domain-not-seen",
        "target-domain-not-seen",
        "data-plane",
        "failed",
        false,
        1,
    ),
    (
        "mig-volume-v18",
        "destination-volume-too-small",
        "data-plane",
        "failed",
        false,
        1,
    ),
    (
        "mig-volume-v19",
        "destination-volume-too-small",
        "data-plane",
        "failed",
        false,
        1,
    ),
    (
        "mig-libvirt-v18",
        "libvirt-error",
        "data-plane",
        "failed",
        false,
        1,
    ),
    (
        "mig-libvirt-v19",
        "libvirt-error",
        "data-plane",
        "failed",
        false,
        1,
    ),
    (
        "mig-abort-v18",
        "aborted-by-request",
        "none",
        "aborted",
        false,
        1,
    ),
    (
        "vm/desk-02",
        "aborted-by-request",
        "none",
        "aborted",
        false,
        1,
    ),
    ("mig-ok", "succeeded", "none", "succeeded", false, 0),
    (
        "mig-batch-01",
        "in-progress",
        "none",
        "in-progress",
        false,
        0,
    ),
    (
        "mig-search-a",
        "in-progress",
        "none",
        "in-progress",
        false,
        0,
    ),
    ("mig-no-status", "unknown", "unknown", "blocked", false, 1),
];

#[test]
fn every_incident_gets_its_cause() {
    for &(target, cause, plane, outcome, inferred, code) in INCIDENT_CASES {
        let (r, exit) = explain_json(INCIDENTS, target);
        assert_eq!(
            (
                r.cause.as_str(),
                r.plane.as_str(),
                r.outcome.as_str(),
                r.inferred,
                exit
            ),
            (cause, plane, outcome, inferred, code),
            "{target}: {}",
            r.summary
        );
        assert_eq!(r.rule.id, r.cause);
        assert_eq!(r.rule.plane, r.plane);
        assert!(!r.rule.reads.is_empty() && !r.rule.advice.is_empty());
        assert!(!r.summary.is_empty() && !r.evidence.is_empty(), "{target}");
        // Never confidently wrong: no "in progress" next to an unexplained warning.
        assert!(
            r.cause != "in-progress" || r.unexplained.iter().all(|u| u.source != "event"),
            "{target}: {:?}",
            r.unexplained
        );
        assert!(
            ["high", "medium", "low"].contains(&r.confidence.as_str()),
            "{target}"
        );
        assert_eq!(
            r.confidence == "low",
            r.cause == "unknown" || !r.unexplained.is_empty() || !r.assumptions.is_empty(),
            "{target}: {} {:?} {:?}",
            r.confidence,
            r.unexplained,
            r.assumptions
        );
        assert!(
            !r.timeline.is_empty() || target.starts_with("vm/"),
            "{target}"
        );
    }
}

/// (target, cause, outcome) on the example cluster: the incidents its README describes.
const CLUSTER_CASES: &[(&str, &str, &str)] = &[
    ("kubevirt-migrate-vm-5m8qz", "succeeded", "succeeded"),
    ("kubevirt-evacuation-7xk2p", "in-progress", "in-progress"),
    (
        "kubevirt-migrate-vm-h2b6c",
        "target-pod-unschedulable",
        "failed",
    ),
    (
        "kubevirt-migrate-vm-q8tz4",
        "target-pod-unschedulable",
        "blocked",
    ),
    ("kubevirt-migrate-vm-w9c4r", "in-progress", "in-progress"),
    ("kubevirt-migrate-vm-f3l8x", "postcopy-failed", "failed"),
    ("migrate-cache-redis-01", "no-progress", "failed"),
    ("kubevirt-migrate-vm-n4k7t", "not-converging", "failed"),
    ("kubevirt-migrate-vm-d7w4n", "aborted-by-request", "aborted"),
    (
        "kubevirt-migrate-vm-t6j2v",
        "resource-quota-exceeded",
        "blocked",
    ),
    ("vm/legacy-erp-01", "not-live-migratable", "blocked"),
    (
        "vm/analytics-warehouse-01",
        "target-pod-unschedulable",
        "blocked",
    ),
    ("vm/loadgen-01", "no-migration", "no-migration"),
];

#[test]
fn the_example_cluster_migrations_are_explained() {
    for &(target, cause, outcome) in CLUSTER_CASES {
        let (r, code) = explain_json("examples/cluster", target);
        assert_eq!(
            (r.cause.as_str(), r.outcome.as_str()),
            (cause, outcome),
            "{target}: {}",
            r.summary
        );
        let finding = matches!(outcome, "failed" | "blocked" | "aborted");
        assert_eq!(code, i32::from(finding), "{target}");
    }
}

// ---------------------------------------------------------------- JSON contract

#[test]
fn json_is_the_documented_shape() {
    let (r, _) = explain_json("examples/cluster", "kubevirt-migrate-vm-h2b6c");
    assert_eq!(r.api_version, "vmctl/v1alpha1");
    assert_eq!(r.kind, "Diagnosis");
    assert_eq!(r.as_of, EXAMPLE_NOW);
    assert!(r.source.contains("examples/cluster"));
    assert_eq!(r.kubevirt_version.as_deref(), Some("v1.8.4"));
    assert_eq!(
        (r.vmi.namespace.as_str(), r.vmi.name.as_str(), r.vmi.exists),
        ("prod", "analytics-warehouse-01", true)
    );
    assert!(has_fact(
        &r,
        "VirtualMachineInstanceMigration/prod/kubevirt-migrate-vm-h2b6c",
        "status.phase",
        "Failed"
    ));
    assert!(
        r.evidence
            .iter()
            .any(|f| f.object.starts_with("Event/prod/")
                && f.value.contains("3 Insufficient memory"))
    );
    assert!(r.summary.contains("3 Insufficient memory"));
    // Both launcher pods, which one is live, and that the target is gone.
    let source = r.pods.iter().find(|p| p.role == "source").unwrap();
    assert_eq!(
        source.name.as_deref(),
        Some("virt-launcher-analytics-warehouse-01-8mn7v")
    );
    assert!(source.exists && source.live);
    let target = r.pods.iter().find(|p| p.role == "target").unwrap();
    assert_eq!(
        target.name.as_deref(),
        Some("virt-launcher-analytics-warehouse-01-625jp")
    );
    assert!(!target.exists && !target.live);
    // The VMI's migrationState belongs to a migration of 2026-11-12.
    assert!(
        r.attention
            .iter()
            .any(|a| a.contains("describes another migration (migrationUid 2152cfe6"))
    );
    // Timeline: time order, first step has no predecessor, the unschedulable timeout shows.
    let times: Vec<&str> = r.timeline.iter().map(|s| s.time.as_str()).collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(times, sorted);
    assert_eq!(r.timeline[0].since_previous_seconds, None);
    assert_eq!(r.timeline[0].offset_seconds, 0);
    let failed = r
        .timeline
        .iter()
        .find(|s| s.what == "phase Failed")
        .unwrap();
    assert_eq!(failed.offset_seconds, 302);
    assert!(
        r.timeline
            .iter()
            .any(|s| s.object == "pod/virt-launcher-analytics-warehouse-01-625jp")
    );
    assert!(
        r.next_steps
            .iter()
            .any(|s| s.contains("24924Mi") || s.contains("memory"))
    );
    assert!(r.history.is_none() && r.notes.is_empty());
    assert!(r.migration.is_some());
    // Read from status (the pod's PodScheduled condition), every warning accounted for.
    assert_eq!(r.confidence, "high");
    assert!(r.unexplained.is_empty() && r.assumptions.is_empty());
}

/// KubeVirt records when streaming started, not when the monitor switched to post-copy:
/// the time since the start (10m04s) is the migration's, never the post-copy's. The switch
/// is inferred from the 540 s completion budget (database-postcopy allows post-copy), so
/// about 1m04s in post-copy, and said to be inferred.
#[test]
fn post_copy_time_is_not_the_time_since_the_start() {
    let (r, _) = explain_json("examples/cluster", "vm/pg-orders-01");
    assert!(
        !r.summary.contains("post-copy for 10m04s"),
        "the time since the start is not time in post-copy: {}",
        r.summary
    );
    assert!(
        r.summary.contains("the point of no return"),
        "{}",
        r.summary
    );
    assert!(
        r.summary.contains("The migration has run 10m04s"),
        "{}",
        r.summary
    );
    assert!(
        r.summary.contains("KubeVirt records no switch time")
            && r.summary.contains("(9m00s)")
            && r.summary.contains("about 1m04s in post-copy (inferred)"),
        "{}",
        r.summary
    );
    let text = stdout(&vmctl([
        "--from",
        "examples/cluster",
        "explain",
        "vm/pg-orders-01",
    ]));
    assert!(!text.contains("post-copy for 10m04s"), "{text}");
    assert!(
        text.contains("about 1m04s in post-copy (inferred)"),
        "{text}"
    );
}

#[test]
fn json_names_the_log_pod_and_the_point_of_no_return() {
    let (r, code) = explain_json("examples/cluster", "kubevirt-migrate-vm-w9c4r");
    assert_eq!(code, 0);
    let live: Vec<&PodInfo> = r.pods.iter().filter(|p| p.live).collect();
    assert_eq!(live.len(), 1);
    assert_eq!(
        live[0].role, "target",
        "in post-copy the target runs the guest"
    );
    assert!(
        r.attention
            .iter()
            .any(|a| a.starts_with("POINT OF NO RETURN"))
    );

    let (r, _) = explain_json("examples/cluster", "kubevirt-evacuation-7xk2p");
    let live = r.pods.iter().find(|p| p.live).unwrap();
    assert_eq!(live.role, "source");
    let live_name = live.name.clone().unwrap();
    assert!(
        r.next_steps
            .iter()
            .any(|s| s.contains(&format!("kubectl logs -n prod {live_name} -c compute")))
    );
    assert!(
        r.attention
            .iter()
            .any(|a| a.contains("marked for evacuation from node-3"))
    );
}

#[test]
fn yaml_is_the_same_document() {
    let out = stdout(&vmctl([
        "--from",
        INCIDENTS,
        "explain",
        "mig-converge-v19",
        "-o",
        "yaml",
    ]));
    let v: serde_json::Value = serde_saphyr::from_str(&out).unwrap();
    assert_eq!(v["kind"], "Diagnosis");
    assert_eq!(v["cause"], "not-converging");
    assert_eq!(v["inferred"], true);
}

#[test]
fn history_lists_every_migration_with_the_backoff() {
    let out = vmctl([
        "--from",
        INCIDENTS,
        "explain",
        "vm/kafka-01",
        "--history",
        "-o",
        "json",
    ]);
    let r: Report = serde_json::from_slice(&out.stdout).unwrap();
    let h = r.history.unwrap();
    let names: Vec<&str> = h.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "kubevirt-evacuation-5xq8d",
            "kubevirt-evacuation-b7k2n",
            "kubevirt-evacuation-pp4wc"
        ]
    );
    assert_eq!(
        h.iter()
            .map(|e| (e.outcome.as_str(), e.cause.as_str()))
            .collect::<Vec<_>>(),
        [
            ("failed", "connection-failure"),
            ("failed", "connection-failure"),
            ("blocked", "migration-backoff")
        ]
    );
    assert_eq!(
        h.iter().map(|e| e.backoff_seconds).collect::<Vec<_>>(),
        [None, Some(20), Some(40)]
    );
    assert_eq!(h[1].since_previous_seconds, Some(20));
}

// ---------------------------------------------------------------- rendering (insta)

fn table(from: &str, args: &[&str]) -> String {
    let mut all = vec!["--from", from, "explain"];
    all.extend_from_slice(args);
    stdout(&vmctl(all))
}

#[test]
fn rendering_of_a_failed_scheduling() {
    insta::assert_snapshot!(
        "cluster_h2b6c",
        table("examples/cluster", &["kubevirt-migrate-vm-h2b6c"])
    );
}

#[test]
fn rendering_of_a_post_copy_failure() {
    insta::assert_snapshot!(
        "cluster_f3l8x",
        table("examples/cluster", &["kubevirt-migrate-vm-f3l8x"])
    );
}

#[test]
fn rendering_of_an_inferred_v19_abort() {
    insta::assert_snapshot!(
        "incidents_converge_v19",
        table(INCIDENTS, &["mig-converge-v19"])
    );
}

#[test]
fn rendering_of_the_backoff_history() {
    insta::assert_snapshot!(
        "incidents_kafka_history",
        table(INCIDENTS, &["vm/kafka-01", "--history"])
    );
}

#[test]
fn rendering_of_a_migration_known_only_from_the_vmi() {
    insta::assert_snapshot!("incidents_desk02", table(INCIDENTS, &["vm/desk-02"]));
}

#[test]
fn rendering_wide_adds_the_rule_and_full_details() {
    insta::assert_snapshot!(
        "incidents_imagepull_wide",
        table(INCIDENTS, &["mig-target-imagepull", "-o", "wide"])
    );
}

#[test]
fn rendering_of_a_not_migratable_vm() {
    insta::assert_snapshot!(
        "cluster_legacy_erp",
        table("examples/cluster", &["vm/legacy-erp-01"])
    );
}

// ---------------------------------------------------------------- live == files

fn live(server: &FakeApiServer, now: &str, args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let mut all: Vec<String> = vec![
        "--kubeconfig".into(),
        kubeconfig.display().to_string(),
        "--now".into(),
        now.into(),
    ];
    all.extend(args.iter().map(|s| s.to_string()));
    vmctl(all)
}

#[test]
fn live_output_equals_snapshot_output() {
    let server = FakeApiServer::start_from_path_blocking(&incidents());
    for target in [
        "mig-unsched-affinity",
        "mig-batch-03",
        "vm/kafka-01",
        "vm/desk-02",
        "mig-no-status",
    ] {
        for format in ["table", "json"] {
            let mut args = vec!["explain", target, "-A", "-o", format];
            if target == "vm/kafka-01" {
                args.push("--history");
            }
            let from_live = live(&server, INCIDENTS_NOW, &args);
            let mut file_args = vec!["--from", INCIDENTS];
            file_args.extend_from_slice(&args);
            let from_files = vmctl(file_args);
            assert_eq!(
                from_live.status.code(),
                from_files.status.code(),
                "{target}: {}",
                stderr(&from_live)
            );
            assert_eq!(
                normalise_source(&stdout(&from_live)),
                normalise_source(&stdout(&from_files)),
                "{target} -o {format}"
            );
        }
    }
    let cluster = FakeApiServer::start_from_path_blocking(&example_cluster());
    let from_live = live(
        &cluster,
        EXAMPLE_NOW,
        &["explain", "-n", "prod", "kubevirt-migrate-vm-q8tz4"],
    );
    let from_files = vmctl([
        "--from",
        "examples/cluster",
        "explain",
        "-n",
        "prod",
        "kubevirt-migrate-vm-q8tz4",
    ]);
    assert_eq!(
        normalise_source(&stdout(&from_live)),
        normalise_source(&stdout(&from_files))
    );
}

/// A VMI with `n` failed evacuation migrations and as many events.
fn long_history(n: usize) -> Vec<serde_json::Value> {
    use serde_json::json;
    let mut objects = vec![
        json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
               "metadata": {"name": "a", "namespace": "prod", "uid": "vmi-a", "labels": {"kubevirt.io/nodeName": "node-1"}},
               "spec": {"domain": {"memory": {"guest": "2Gi"}}},
               "status": {"nodeName": "node-1", "phase": "Running",
                          "conditions": [{"type": "LiveMigratable", "status": "True"}]}}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}}),
    ];
    for i in 0..n {
        let uid = format!("m-{i}");
        let minute = i % 60;
        objects.push(json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
            "metadata": {"name": format!("kubevirt-evacuation-{i:04}"), "namespace": "prod", "uid": uid,
                         "creationTimestamp": format!("2026-11-29T01:{minute:02}:00Z"),
                         "labels": {"kubevirt.io/vmi-name": "a"},
                         "annotations": {"kubevirt.io/evacuationMigration": "node-1"}},
            "spec": {"vmiName": "a"},
            "status": {"phase": "Failed", "phaseTransitionTimestamps": [
                {"phase": "Pending", "phaseTransitionTimestamp": format!("2026-11-29T01:{minute:02}:00Z")},
                {"phase": "Failed", "phaseTransitionTimestamp": format!("2026-11-29T01:{minute:02}:30Z")}]}}));
        objects.push(json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": format!("e-{i}"), "namespace": "prod"},
            "involvedObject": {"kind": "VirtualMachineInstanceMigration", "name": format!("kubevirt-evacuation-{i:04}"),
                               "namespace": "prod", "uid": uid},
            "reason": "FailedMigration", "message": "source node reported migration failed", "type": "Warning",
            "firstTimestamp": format!("2026-11-29T01:{minute:02}:30Z"), "count": 1}));
    }
    objects
}

#[test]
fn live_requests_do_not_grow_with_the_history() {
    let count = |n: usize| {
        let server = FakeApiServer::start_blocking(long_history(n));
        let out = live(
            &server,
            EXAMPLE_NOW,
            &["explain", "-n", "prod", "vm/a", "--history", "-o", "json"],
        );
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
        let r: Report = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r.history.map(|h| h.len()), Some(n));
        server.request_count()
    };
    assert_eq!(
        count(3),
        count(40),
        "one list per kind, whatever the history"
    );
}

// ---------------------------------------------------------------- bad input

#[test]
fn an_unknown_migration_suggests_close_names() {
    let out = vmctl([
        "--from",
        "examples/cluster",
        "explain",
        "kubevirt-migrate-vm-h2b6d",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: migration \"kubevirt-migrate-vm-h2b6d\" not found"),
        "{err}"
    );
    assert!(
        err.contains("hint: did you mean kubevirt-migrate-vm-h2b6c"),
        "{err}"
    );
    assert!(!err.contains("panicked"));
}

#[test]
fn an_unknown_vm_suggests_close_names_and_explains_stopped_vms() {
    let out = vmctl(["--from", "examples/cluster", "explain", "vm/app-server"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("did you mean vm/app-server-01, vm/app-server-02?"),
        "{}",
        stderr(&out)
    );

    let out = vmctl([
        "--from",
        &fixture("stopped-vm.yaml"),
        "explain",
        "vm/halted-01",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("exists but is not running (runStrategy Halted)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_name_in_several_namespaces_is_ambiguous() {
    let out = vmctl([
        "--from",
        &fixture("ambiguous.yaml"),
        "explain",
        "migrate-db",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("exists in several namespaces (blue, green)"),
        "{}",
        stderr(&out)
    );
    // -n picks one.
    let out = vmctl([
        "--from",
        &fixture("ambiguous.yaml"),
        "explain",
        "-n",
        "green",
        "migrate-db",
        "-o",
        "json",
    ]);
    let r: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r.vmi.namespace, "green");
}

#[test]
fn a_migration_without_status_is_explained_not_a_crash() {
    let out = vmctl([
        "--from",
        &fixture("no-status.yaml"),
        "explain",
        "bare-vmim",
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r.cause, "unknown");
    assert!(r.summary.contains("no status"), "{}", r.summary);
    assert!(r.kubevirt_version.is_none(), "no KubeVirt CR in the file");
    assert!(has_fact(
        &r,
        "VirtualMachineInstanceMigration/default/bare-vmim",
        "status",
        "(absent)"
    ));
    // And the table renders too.
    let out = vmctl(["--from", &fixture("no-status.yaml"), "explain", "bare-vmim"]);
    assert!(
        stdout(&out).contains("BLOCKED · cause unknown\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_deleted_vmi_is_said_and_the_status_still_diagnosed() {
    let out = vmctl([
        "--from",
        &fixture("vmi-deleted.yaml"),
        "explain",
        "mig-orphan",
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!r.vmi.exists);
    assert_eq!(
        r.cause, "no-progress",
        "diagnosed from the VMIM's own migrationState: {}",
        r.summary
    );
    assert!(r.attention.iter().any(|a| a.contains("no longer exists")));
    assert!(has_fact(
        &r,
        "VirtualMachineInstanceMigration/prod/mig-orphan",
        "status.migrationState.failureReason",
        "Live migration stuck for 150 seconds and has been aborted"
    ));

    let out = vmctl([
        "--from",
        &fixture("vmi-deleted.yaml"),
        "explain",
        "mig-orphan-v19",
        "-o",
        "json",
    ]);
    let r: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        r.cause, "unknown",
        "without the VMI the budget is unknown: {}",
        r.summary
    );
    assert!(r.summary.contains("memory size is unknown"));
}

#[test]
fn malformed_targets_are_usage_errors() {
    for target in ["pod/x", "vm/", "a/b/c"] {
        let out = vmctl(["--from", "examples/cluster", "explain", target]);
        assert_eq!(out.status.code(), Some(2), "{target}: {}", stderr(&out));
        assert!(stderr(&out).starts_with("error: "), "{target}");
    }
}

#[test]
fn a_namespace_scope_is_respected() {
    let out = vmctl([
        "--from",
        "examples/cluster",
        "explain",
        "-n",
        "dev",
        "kubevirt-migrate-vm-h2b6c",
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("in namespace dev"),
        "{}",
        stderr(&out)
    );
    let out = vmctl([
        "--from",
        "examples/cluster",
        "explain",
        "-n",
        "prod",
        "migration/kubevirt-migrate-vm-h2b6c",
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_vm_name_given_as_a_migration_is_explained_as_the_vm() {
    let out = vmctl([
        "--from",
        "examples/cluster",
        "explain",
        "legacy-erp-01",
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no migration is named \"legacy-erp-01\""),
        "{}",
        stderr(&out)
    );
    let r: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r.cause, "not-live-migratable");
}

#[test]
fn a_vmctl_snapshot_explains_like_the_live_cluster() {
    let server = FakeApiServer::start_from_path_blocking(&incidents());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("incident.yaml");
    let out = live(
        &server,
        INCIDENTS_NOW,
        &["snapshot", "-A", file.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    for target in [
        "kubevirt-evacuation-pp4wc",
        "mig-postcopy-v19",
        "vm/desk-02",
    ] {
        let from_live = live(
            &server,
            INCIDENTS_NOW,
            &["explain", "-A", target, "-o", "json"],
        );
        let replay = vmctl([
            "--from",
            file.to_str().unwrap(),
            "explain",
            target,
            "-o",
            "json",
        ]);
        assert_eq!(
            normalise_source(&stdout(&from_live)),
            normalise_source(&stdout(&replay)),
            "{target}"
        );
    }
}

#[test]
fn forbidden_events_and_policies_are_noted_not_fatal() {
    use support::{Fault, Method};
    let server = FakeApiServer::start_from_path_blocking(&incidents());
    server.inject_fault(Fault::status(403).on(Method::GET, "/events"));
    server.inject_fault(Fault::status(403).on(Method::GET, "/migrationpolicies"));
    let out = live(
        &server,
        INCIDENTS_NOW,
        &["explain", "-n", "stall", "mig-stall-v18", "-o", "json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r.cause, "no-progress", "status alone decides");
    assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("could not read events"))
    );
    // The same two reads, as assumptions, and what they cost in confidence.
    assert_eq!(r.assumptions.len(), 2, "{:?}", r.assumptions);
    assert!(
        r.assumptions
            .iter()
            .any(|a| a.starts_with("Could not read events (forbidden (403)")),
        "{:?}",
        r.assumptions
    );
    assert_eq!(r.confidence, "low");
}

// ---------------------------------------------------------------- the catalogue in --help

#[test]
fn the_help_and_the_man_page_list_every_cause() {
    let help = stdout(&vmctl(["explain", "--help"]));
    let man =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("man/vmctl-explain.1"))
            .unwrap()
            .replace("\\-", "-");
    for rule in vmctl::triage::CATALOGUE {
        assert!(
            help.contains(rule.cause.id),
            "explain --help lacks {}",
            rule.cause.id
        );
        assert!(
            man.contains(rule.cause.id),
            "vmctl-explain.1 lacks {}",
            rule.cause.id
        );
    }
    assert!(help.contains("postcopy-unsupported"));
}

// ---------------------------------------------------------------- issue 10: reported failures

fn reported(case: &str) -> String {
    fixture(&format!("reported/{case}"))
}

fn explain_at(from: &str, now: &str, target: &str) -> (Report, i32) {
    let out = vmctl([
        "--from", from, "--now", now, "explain", target, "-o", "json",
    ]);
    let code = out.status.code().unwrap_or(-1);
    let report: Report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{target}: {e}\n{}\n{}", stdout(&out), stderr(&out)));
    (report, code)
}

/// (fixture, migration, as-of, cause, plane, outcome, confidence)
const REPORTED_CASES: &[(&str, &str, &str, &str, &str, &str, &str)] = &[
    // The issue's own case: seven FailedCreate warnings, the VMIM Pending without a condition.
    (
        "create-forbidden-limitrange",
        "kubevirt-migrate-vm-lr7xq",
        "2026-11-30T08:03:00Z",
        "target-pod-create-failed",
        "control-plane",
        "blocked",
        "medium",
    ),
    // A Warning nothing explains, newer than the last phase change: not "in progress".
    (
        "unexplained-warning",
        "kubevirt-migrate-vm-q2w8e",
        "2026-11-30T09:06:00Z",
        "unknown",
        "control-plane",
        "blocked",
        "low",
    ),
    // kubevirt#17780
    (
        "postcopy-unsupported",
        "kubevirt-migrate-vm-pc4kz",
        "2026-11-30T10:05:00Z",
        "postcopy-unsupported",
        "data-plane",
        "failed",
        "high",
    ),
    // kubevirt#18946
    (
        "target-on-source-node",
        "kubevirt-migrate-vm-s0n1c",
        "2026-11-30T11:10:00Z",
        "target-on-source-node",
        "control-plane",
        "failed",
        "high",
    ),
    // kubevirt#17203
    (
        "backend-storage-handoff",
        "kubevirt-migrate-vm-tpm9x",
        "2026-11-30T12:40:00Z",
        "backend-storage-handoff-stuck",
        "control-plane",
        "blocked",
        "high",
    ),
    // harvester#10698 (#7965's text): three failed evacuations of a VMI still marked.
    (
        "evacuation-loop",
        "vm/vm",
        "2026-11-30T05:03:30Z",
        "evacuation-loop",
        "control-plane",
        "blocked",
        "high",
    ),
    // kubevirt#18259 / #17317: both sides of a decentralized migration wait 40 minutes.
    (
        "decentralized-sync-stuck",
        "rhel9-send",
        "2026-11-30T10:40:00Z",
        "decentralized-sync-stuck",
        "control-plane",
        "blocked",
        "high",
    ),
    (
        "decentralized-sync-stuck",
        "rhel9-recv",
        "2026-11-30T10:40:00Z",
        "decentralized-sync-stuck",
        "control-plane",
        "blocked",
        "high",
    ),
    // kubevirt#12773
    (
        "multiple-pods",
        "migration-jobq7r2j",
        "2026-11-30T13:20:00Z",
        "another-migration-in-progress",
        "control-plane",
        "blocked",
        "high",
    ),
    // kubevirt#14957
    (
        "evacuation-quota",
        "kubevirt-evacuation-r8t5w",
        "2026-11-30T14:20:00Z",
        "resource-quota-exceeded",
        "control-plane",
        "blocked",
        "medium",
    ),
    // kubevirt#18063: no migration at all; the drain is refused by the PDB.
    (
        "pdb-max-unavailable",
        "vm/web-pool-0",
        "2026-11-30T06:45:00Z",
        "pdb-blocks-eviction",
        "control-plane",
        "blocked",
        "high",
    ),
    // "Preemption is not helpful" during an upgrade drain.
    (
        "upgrade-cpu-model",
        "kubevirt-evacuation-u9p3d",
        "2026-11-30T15:03:00Z",
        "no-node-for-cpu-model",
        "control-plane",
        "blocked",
        "medium",
    ),
];

#[test]
fn every_reported_failure_gets_its_cause() {
    for &(case, target, now, cause, plane, outcome, confidence) in REPORTED_CASES {
        let (r, code) = explain_at(&reported(case), now, target);
        assert_eq!(
            (
                r.cause.as_str(),
                r.plane.as_str(),
                r.outcome.as_str(),
                r.confidence.as_str()
            ),
            (cause, plane, outcome, confidence),
            "{case}: {}\nunexplained: {:?}\nassumptions: {:?}",
            r.summary,
            r.unexplained,
            r.assumptions
        );
        assert_eq!(code, 1, "{case}: every one of them is a finding");
        assert!(!r.next_steps.is_empty() && !r.evidence.is_empty(), "{case}");
        assert!(r.assumptions.is_empty(), "{case}: {:?}", r.assumptions);
        // Nothing unexplained goes unsaid, and no in-progress next to a warning.
        assert_ne!(r.cause, "in-progress", "{case}");
        if cause != "unknown" {
            assert!(r.unexplained.is_empty(), "{case}: {:?}", r.unexplained);
        }
    }
}

#[test]
fn an_unexplained_warning_is_listed_as_written_in_json() {
    let (r, _) = explain_at(
        &reported("unexplained-warning"),
        "2026-11-30T09:06:00Z",
        "kubevirt-migrate-vm-q2w8e",
    );
    assert_eq!(r.unexplained.len(), 1, "{:?}", r.unexplained);
    let u = &r.unexplained[0];
    assert_eq!(
        u.object,
        "VirtualMachineInstanceMigration/erp/kubevirt-migrate-vm-q2w8e"
    );
    assert_eq!(
        (u.source.as_str(), u.reason.as_str()),
        ("event", "MaintenanceWindowClosed")
    );
    assert_eq!(u.count, Some(6));
    assert_eq!(u.time.as_deref(), Some("2026-11-30T09:05:03Z"));
    // JSON carries the text as written; only the terminal rendering escapes it.
    assert!(u.message.contains("\u{1b}[31m"), "{}", u.message);
    assert!(!r.summary.contains("Nothing blocks it"), "{}", r.summary);
    assert!(r.inferred);
}

#[test]
fn rendering_of_the_reported_failures() {
    let render = |case: &str, now: &str, target: &str| {
        stdout(&vmctl([
            "--from",
            &reported(case),
            "--now",
            now,
            "explain",
            target,
        ]))
        .replace(
            &reported(case),
            &format!("tests/fixtures/explain/reported/{case}"),
        )
    };
    let unexplained = render(
        "unexplained-warning",
        "2026-11-30T09:06:00Z",
        "kubevirt-migrate-vm-q2w8e",
    );
    assert!(
        !unexplained.contains('\u{1b}'),
        "a terminal escape reached the output"
    );
    insta::assert_snapshot!("reported_unexplained_warning", unexplained);
    insta::assert_snapshot!(
        "reported_create_forbidden",
        render(
            "create-forbidden-limitrange",
            "2026-11-30T08:03:00Z",
            "kubevirt-migrate-vm-lr7xq"
        )
    );
    insta::assert_snapshot!(
        "reported_postcopy_unsupported",
        render(
            "postcopy-unsupported",
            "2026-11-30T10:05:00Z",
            "kubevirt-migrate-vm-pc4kz"
        )
    );
}

#[test]
fn a_missing_kind_is_an_assumption_in_the_table_and_lowers_confidence() {
    use support::{Fault, Method};
    let server = FakeApiServer::start_from_path_blocking(&incidents());
    // MigrationPolicies not installed (an old KubeVirt without the CRD): 404 on the list.
    server.inject_fault(Fault::status(404).on(Method::GET, "/migrationpolicies"));
    let out = live(
        &server,
        INCIDENTS_NOW,
        &["explain", "-n", "stall", "mig-stall-v18", "--no-color"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("\nAssumptions (what could not be read):\n"),
        "{text}"
    );
    assert!(
        text.contains("Could not read MigrationPolicies (not found (404)"),
        "{text}"
    );
    assert!(text.contains("confidence low (1 assumption)"), "{text}");
    assert!(
        text.contains("NO-PROGRESS") || text.contains("no-progress"),
        "{text}"
    );
}

// ---------------------------------------------------------------- KubeVirt v1.9 / v1.10

const KV19_NOW: &str = "2026-12-01T12:00:00Z";

/// Relative to the crate (vmctl runs there): the path shows in the table's header.
fn kv19(case: &str) -> String {
    format!("tests/fixtures/explain-kv19/{case}")
}

fn kv19_json(case: &str, target: &str) -> (Report, i32) {
    let out = vmctl([
        "--from",
        &kv19(case),
        "--now",
        KV19_NOW,
        "explain",
        target,
        "-o",
        "json",
    ]);
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "{case}: exit {code}\n{}",
        stderr(&out)
    );
    let report: Report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{case}: {e}\n{}", stdout(&out)));
    (report, code)
}

fn kv19_table(case: &str, target: &str) -> String {
    stdout(&vmctl([
        "--from",
        &kv19(case),
        "--now",
        KV19_NOW,
        "explain",
        target,
    ]))
}

#[test]
fn kv19_fixtures_get_their_causes() {
    // (case, target, cause, outcome, inferred, exit code)
    let cases: &[(&str, &str, &str, &str, bool, i32)] = &[
        (
            "sync-sender",
            "db-01-send",
            "in-progress",
            "in-progress",
            false,
            0,
        ),
        (
            "sync-receiver",
            "db-01-recv",
            "in-progress",
            "in-progress",
            false,
            0,
        ),
        (
            "decentralized-failure",
            "erp-01-send",
            "decentralized-migration-blocked",
            "blocked",
            false,
            1,
        ),
        (
            "queued-priority",
            "report-01-hotplug",
            "queued-parallel-limit",
            "in-progress",
            false,
            0,
        ),
        (
            "stall-abort",
            "kubevirt-migrate-vm-st4ll",
            "no-progress",
            "failed",
            true,
            1,
        ),
        (
            "stall-postcopy",
            "kubevirt-migrate-vm-pc0py",
            "succeeded",
            "succeeded",
            false,
            0,
        ),
        (
            "unschedulable-past-5m",
            "kubevirt-migrate-vm-p3nd1",
            "target-pod-unschedulable",
            "blocked",
            false,
            1,
        ),
        // Three failed evacuations of a VMI still marked: a loop (issue 25 §4), whose
        // summary keeps the backoff's reckoning (below).
        (
            "backoff-third",
            "kubevirt-evacuation-k4",
            "evacuation-loop",
            "blocked",
            false,
            1,
        ),
    ];
    for (case, target, cause, outcome, inferred, code) in cases {
        let (r, got) = kv19_json(case, target);
        assert_eq!(
            (r.cause.as_str(), r.outcome.as_str(), r.inferred, got),
            (*cause, *outcome, *inferred, *code),
            "{case}: {}",
            r.summary
        );
        assert_eq!(r.kubevirt_version.as_deref(), Some("v1.10.0"), "{case}");
    }
}

#[test]
fn kv19_a_decentralized_sender_shows_its_peer_and_live_side() {
    let (r, _) = kv19_json("sync-sender", "db-01-send");
    let m = r.migration.as_ref().unwrap();
    assert_eq!(m["phase"], "Synchronizing");
    assert_eq!(m["priority"], "user-triggered");
    let d = &m["decentralized"];
    assert_eq!(d["role"], "sender");
    assert_eq!(d["migrationId"], "mig-db-01-dc2");
    assert_eq!(d["connectUrl"], "sync.dc2.example.net:9185");
    assert_eq!(d["synchronizationAddresses"][0], "10.20.0.7:9185");
    assert_eq!(d["liveSide"], "source");
    assert_eq!(d["liveHere"], true);
    // The nodes come from sourceState / targetState, the target is in the peer cluster.
    assert_eq!(m["sourceNode"], "node-1");
    assert_eq!(m["targetNode"], "dc2-node-4");
    assert!(r.summary.contains("sending side"), "{}", r.summary);
    assert!(
        r.summary.contains("sync.dc2.example.net:9185"),
        "{}",
        r.summary
    );
    assert!(r.summary.contains("still runs here"), "{}", r.summary);
    let live: Vec<_> = r.pods.iter().filter(|p| p.live).collect();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].role, "source");
    assert!(
        r.next_steps
            .iter()
            .any(|s| s.contains("same migrationID mig-db-01-dc2"))
    );
    insta::assert_snapshot!("kv19_sync_sender", kv19_table("sync-sender", "db-01-send"));
}

#[test]
fn kv19_a_decentralized_receiver_is_not_live_here() {
    let (r, _) = kv19_json("sync-receiver", "db-01-recv");
    let m = r.migration.as_ref().unwrap();
    assert_eq!(m["phase"], "WaitingForSync");
    assert_eq!(m["decentralized"]["role"], "receiver");
    assert_eq!(m["decentralized"]["liveHere"], false);
    // Not the local VMI's node as the source: the sending cluster's node.
    assert_eq!(m["sourceNode"], "dc1-node-2");
    assert_eq!(m["targetNode"], "node-7");
    assert!(m.get("priority").is_none(), "no priority: omitted");
    assert!(r.summary.contains("receiving side"), "{}", r.summary);
    assert!(r.summary.contains("10.30.0.9:9185"), "{}", r.summary);
    assert!(r.pods.iter().all(|p| !p.live), "{:?}", r.pods);
    assert!(r.pods.iter().any(|p| p.role == "target"));
    assert!(!r.pods.iter().any(|p| p.role == "source"));
}

#[test]
fn kv19_a_decentralized_failure_is_blocked_with_its_reason() {
    let (r, _) = kv19_json("decentralized-failure", "erp-01-send");
    assert_eq!(r.plane, "control-plane");
    assert!(
        r.summary.contains("DecentralizedNotLiveMigratable"),
        "{}",
        r.summary
    );
    assert!(r.summary.contains("different memory size"), "{}", r.summary);
    assert!(r.evidence.iter().any(|f| {
        f.field == "status.conditions[type=decentralizedMigrationBlocked]"
            && f.value
                .starts_with("True, reason DecentralizedNotLiveMigratable")
    }));
    assert_eq!(r.rule.id, "decentralized-migration-blocked");
    // The same block whose message carries an escape sequence (status-kv19): it never
    // reaches the terminal.
    let out = stdout(&vmctl([
        "--from",
        "tests/fixtures/status-kv19",
        "--now",
        KV19_NOW,
        "explain",
        "erp-01-send",
        "-n",
        "prod",
    ]));
    assert!(out.contains("peer VMI memory differs"), "{out}");
    assert!(!out.contains('\u{1b}'), "{out}");
}

#[test]
fn kv19_queue_reasoning_follows_the_priority_queue() {
    let (r, _) = kv19_json("queued-priority", "report-01-hotplug");
    assert!(
        r.summary
            .contains("3 pending migration(s) are ahead of this user-triggered (50) one"),
        "{}",
        r.summary
    );
    assert!(
        r.summary
            .contains("2 with a higher priority and 1 with the same priority created earlier"),
        "{}",
        r.summary
    );
    // One fact per migration ahead: highest priority first, then the oldest; the
    // system-maintenance one is behind.
    let ahead: Vec<(&str, &str)> = r
        .evidence
        .iter()
        .filter(|f| f.field == "spec.priority" && !f.object.ends_with("report-01-hotplug"))
        .map(|f| (f.object.as_str(), f.value.as_str()))
        .collect();
    assert_eq!(
        ahead,
        [
            (
                "VirtualMachineInstanceMigration/prod/kubevirt-evacuation-app-01",
                "system-critical"
            ),
            (
                "VirtualMachineInstanceMigration/prod/kubevirt-evacuation-app-02",
                "system-critical"
            ),
            (
                "VirtualMachineInstanceMigration/prod/kubevirt-workload-update-batch-01",
                "user-triggered"
            ),
        ]
    );
    assert!(has_fact(
        &r,
        "VirtualMachineInstanceMigration/prod/report-01-hotplug",
        "spec.priority",
        "user-triggered"
    ));
    insta::assert_snapshot!(
        "kv19_queued_priority",
        kv19_table("queued-priority", "report-01-hotplug")
    );
}

#[test]
fn kv19_the_stall_detector_names_its_abort_and_timings() {
    let (r, _) = kv19_json("stall-abort", "kubevirt-migrate-vm-st4ll");
    assert!(r.summary.starts_with("The stall detector"), "{}", r.summary);
    assert!(
        r.summary.contains("stallProgressTimeout (40 s)"),
        "{}",
        r.summary
    );
    assert!(
        r.summary.contains("maxDowntimeMs (900 ms)"),
        "{}",
        r.summary
    );
    assert!(!r.summary.contains("progressTimeout (150"), "{}", r.summary);
    // The legacy progressTimeout is not offered as the fix.
    assert!(
        !r.next_steps
            .iter()
            .any(|s| s.contains("\"progressTimeout\"")),
        "{:?}",
        r.next_steps
    );
    let sd = &r.migration.as_ref().unwrap()["stallDetector"];
    assert_eq!(sd["action"], "abort");
    assert_eq!(sd["settings"]["stallProgressTimeout"], 40);
    assert_eq!(sd["settings"]["switchoverTimeout"], 60);
    assert!(has_fact(
        &r,
        "KubeVirt/kubevirt/kubevirt",
        "spec.configuration.developerConfiguration.featureGates",
        "MigrationStallDetection"
    ));
    insta::assert_snapshot!(
        "kv19_stall_abort",
        kv19_table("stall-abort", "kubevirt-migrate-vm-st4ll")
    );
}

#[test]
fn kv19_the_stall_detector_post_copy_switch_is_said() {
    let (r, _) = kv19_json("stall-postcopy", "kubevirt-migrate-vm-pc0py");
    let sd = &r.migration.as_ref().unwrap()["stallDetector"];
    assert_eq!(sd["action"], "post-copy");
    assert_eq!(
        sd["settings"]["stallProgressTimeout"], 30,
        "from the recorded configuration"
    );
    assert!(
        r.attention
            .iter()
            .any(|a| a.contains("switched the migration to post-copy")
                && a.contains("stallProgressTimeout 30 s")),
        "{:?}",
        r.attention
    );
}

#[test]
fn kv19_an_unschedulable_target_pod_times_out_5_minutes_after_its_creation() {
    let (r, _) = kv19_json("unschedulable-past-5m", "kubevirt-migrate-vm-p3nd1");
    // Created 11:53:31, unschedulable since 11:55:10: the deadline counts from the creation.
    assert!(
        r.summary.contains("5m00s after its creation")
            && r.summary
                .contains("due at 2026-12-01T11:58:31Z (1m29s ago)"),
        "{}",
        r.summary
    );
    assert!(has_fact(
        &r,
        "Pod/prod/virt-launcher-gpu-01-t5555",
        "metadata.creationTimestamp",
        "2026-12-01T11:53:31Z"
    ));
}

#[test]
fn an_evacuation_loop_says_the_last_failure_the_blocking_field_and_the_way_out() {
    let (r, code) = explain_at(
        &reported("evacuation-loop"),
        "2026-11-30T05:03:30Z",
        "vm/vm",
    );
    assert_eq!(code, 1);
    assert!(
        r.summary.contains("tried 3 times in 3m30s"),
        "{}",
        r.summary
    );
    assert!(
        r.summary
            .contains("The last attempt failed with cpu-feature-mismatch"),
        "{}",
        r.summary
    );
    assert!(
        r.summary
            .contains("lacks vmx-exit-load-perf-global-ctrl, vmx-entry-load-perf-global-ctrl"),
        "{}",
        r.summary
    );
    assert!(
        r.summary
            .contains("next attempt can start at 2026-11-30T05:03:53Z"),
        "{}",
        r.summary
    );
    assert!(has_fact(
        &r,
        "VirtualMachineInstance/default/vm",
        "status.evacuationNodeName",
        "n2-v15"
    ));
    for m in [
        "kubevirt-evacuation-7xk2p",
        "kubevirt-evacuation-m4q9d",
        "kubevirt-evacuation-t8v3n",
    ] {
        assert!(
            r.evidence.iter().any(|f| f.object
                == format!("VirtualMachineInstanceMigration/default/{m}")
                && f.field == "status.phaseTransitionTimestamps[phase=Failed]"),
            "{m}"
        );
    }
    let steps = r.next_steps.join("\n");
    assert!(
        steps.contains("vmctl abort --evacuation vm/vm -n default"),
        "{steps}"
    );
    assert!(
        steps.contains("vmctl abort migration/kubevirt-evacuation-q5w1z -n default"),
        "{steps}"
    );
    assert!(steps.contains("kubectl uncordon n2-v15"), "{steps}");
    // An older attempt explained on its own keeps its own cause.
    let (old, _) = explain_at(
        &reported("evacuation-loop"),
        "2026-11-30T05:03:30Z",
        "kubevirt-evacuation-7xk2p",
    );
    assert_eq!(old.cause, "cpu-feature-mismatch");
    // The threshold is a flag: at 4, the waiting attempt is a backoff again.
    let out = vmctl([
        "--from",
        &kv19("backoff-third"),
        "--now",
        KV19_NOW,
        "explain",
        "kubevirt-evacuation-k4",
        "--loop-failures",
        "4",
        "-o",
        "json",
    ]);
    let r: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r.cause, "migration-backoff");
}

#[test]
fn a_stuck_decentralized_migration_names_the_missing_side_and_the_peer() {
    let (r, _) = explain_at(
        &reported("decentralized-sync-stuck"),
        "2026-11-30T10:40:00Z",
        "rhel9-recv",
    );
    assert!(
        r.summary.contains("in WaitingForSync for 39m59s"),
        "{}",
        r.summary
    );
    assert!(has_fact(
        &r,
        "VirtualMachineInstance/vm-dst/rhel9",
        "status.migrationState.sourceState",
        "(absent)"
    ));
    assert!(
        r.summary.contains("spec.sendTo.migrationID rhel9-xns"),
        "{}",
        r.summary
    );
    assert!(
        r.next_steps
            .iter()
            .any(|s| s.contains("kubectl delete vmim rhel9-recv -n vm-dst"))
    );
    // Within --sync-timeout it is in progress.
    let out = vmctl([
        "--from",
        &reported("decentralized-sync-stuck"),
        "--now",
        "2026-11-30T10:40:00Z",
        "explain",
        "rhel9-recv",
        "--sync-timeout",
        "1h",
        "-o",
        "json",
    ]);
    let r: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r.cause, "in-progress");
}

#[test]
fn kv19_the_third_consecutive_failure_backs_off_80_seconds() {
    let (r, _) = kv19_json("backoff-third", "kubevirt-evacuation-k4");
    assert!(r.summary.contains("3 consecutive failed"), "{}", r.summary);
    assert!(r.summary.contains("waits 1m20s"), "{}", r.summary);
    assert!(
        r.summary
            .contains("next attempt can start at 2026-12-01T12:00:40Z (in 40s)"),
        "{}",
        r.summary
    );
    let out = vmctl([
        "--from",
        &kv19("backoff-third"),
        "--now",
        KV19_NOW,
        "explain",
        "vm/kafka-07",
        "--history",
        "-o",
        "json",
    ]);
    let r: Report = serde_json::from_slice(&out.stdout).unwrap();
    let h = r.history.unwrap();
    assert_eq!(
        h.iter().map(|e| e.backoff_seconds).collect::<Vec<_>>(),
        [None, Some(20), Some(40), Some(80)]
    );
}

// ---------------------------------------------------------------- the guest dirty rate

#[test]
fn metrics_are_read_only_for_a_data_plane_failure_and_a_snapshot_says_why_not() {
    let text = |args: &[&str]| {
        let mut all = vec!["--from", "examples/cluster", "explain"];
        all.extend_from_slice(args);
        stdout(&vmctl(all))
    };
    let control = text(&["kubevirt-migrate-vm-h2b6c", "--metrics"]);
    assert!(
        control.contains(
            "dirty rate not read: the diagnosis is control-plane, not a data-plane failure"
        ),
        "{control}"
    );
    let data = text(&["kubevirt-migrate-vm-n4k7t", "--metrics"]);
    assert!(
        data.contains("dirty rate not read: --metrics reads virt-handler through the API server, and a snapshot (--from) has none"),
        "{data}"
    );
    // Without the flag, the report is as before.
    assert!(!text(&["kubevirt-migrate-vm-n4k7t"]).contains("dirty rate"));

    // A Prometheus needs no API server: one query, the facts.
    let (url, served) = fake_prometheus(
        serde_json::json!({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"__name__": "kubevirt_vmi_dirty_rate_bytes_per_second", "namespace": "dev", "name": "jenkins-agent-01"},
         "value": [1.7e9, "314572800"]}]}}),
    );
    let data = text(&["kubevirt-migrate-vm-n4k7t", "--prometheus", &url]);
    // The instant query, then the range query of the migration's progress (see
    // `prometheus_gives_the_progress_over_the_migrations_window`).
    assert_eq!(served.lock().unwrap().len(), 2);
    assert!(
        data.contains(&format!("Prometheus at {url} kubevirt_vmi_dirty_rate_bytes_per_second{{namespace=\"dev\",name=\"jenkins-agent-01\"}} = 300.0 MiB/s")),
        "{data}"
    );
    assert!(
        data.contains("a hint: reported inaccurate in some releases"),
        "{data}"
    );
}

/// With --prometheus, one range query over the migration's window (start to end) gives its
/// remaining memory, dirty rate and transfer rate over time: sparklines in the text, the
/// points in the document (`progressSeries`).
#[test]
fn prometheus_gives_the_progress_over_the_migrations_window() {
    // kubevirt-migrate-vm-n4k7t ran 02:04:31Z..02:12:01Z (450 s): a step of 4 s.
    let (start, end) = (1_795_917_871i64, 1_795_918_321i64);
    let at = |k: i64| serde_json::json!(start + 4 * k);
    let remaining: Vec<_> = (0..=112)
        .map(|k| {
            // Three passes: 4096 MiB falling to 1024, 2048 to 512, 1024 to 300.
            let mib = match k {
                0..40 => 4096 - k * 77,
                40..80 => 2048 - (k - 40) * 38,
                _ => 1024 - (k - 80) * 22,
            };
            serde_json::json!([at(k), format!("{}", mib << 20)])
        })
        .collect();
    let rate = |mib: i64| -> Vec<_> {
        (0..=112)
            .map(|k| serde_json::json!([at(k), format!("{}", mib << 20)]))
            .collect()
    };
    let series = |name: &str, values: Vec<serde_json::Value>| {
        serde_json::json!({"metric": {"__name__": name, "namespace": "dev", "name": "jenkins-agent-01"},
            "values": values})
    };
    let matrix = serde_json::json!({"status": "success", "data": {"resultType": "matrix", "result": [
        series("kubevirt_vmi_migration_data_remaining_bytes", remaining),
        series("kubevirt_vmi_migration_dirty_memory_rate_bytes", rate(300)),
        series("kubevirt_vmi_migration_memory_transfer_rate_bytes", rate(120)),
        series("kubevirt_vmi_migration_data_remaining_bytes\u{1b}[2J", rate(1)),
    ]}});
    let vector =
        serde_json::json!({"status": "success", "data": {"resultType": "vector", "result": []}});
    let (url, served) = fake_prometheus_routes(vec![("query_range", matrix), ("", vector)]);
    let run = |lang: &str, extra: &[&str]| {
        let mut args = vec![
            "--from",
            "examples/cluster",
            "explain",
            "kubevirt-migrate-vm-n4k7t",
            "--prometheus",
            &url,
        ];
        args.extend_from_slice(extra);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_vmctl"))
            .args(&args)
            .env("NO_COLOR", "1")
            .env_remove("KUBECONFIG")
            .env_remove("VMCTL_NOW")
            .env_remove("LC_ALL")
            .env_remove("LC_CTYPE")
            .env("LANG", lang)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("run vmctl");
        stdout(&out)
    };
    let text = run("C.UTF-8", &[]);
    let asked = served.lock().unwrap().clone();
    let range: Vec<&String> = asked.iter().filter(|l| l.contains("query_range")).collect();
    assert_eq!(range.len(), 1, "{asked:?}");
    assert!(
        range[0].contains(&format!("&start={start}&end={end}&step=4 ")),
        "{}",
        range[0]
    );
    assert!(
        range[0].contains("kubevirt_vmi_migration_data_remaining_bytes"),
        "{}",
        range[0]
    );
    assert!(
        text.contains(&format!(
            "\nProgress (Prometheus at {url}, every 4s: 113 points over 7m28s):\n"
        )),
        "{text}"
    );
    let memory = text
        .lines()
        .find(|l| l.starts_with("  memory left  "))
        .unwrap_or_default();
    // 113 points in 60 cells, by the largest per cell: each pass's start is seen.
    assert!(memory.starts_with("  memory left  █"), "{memory}");
    assert!(
        memory.ends_with("  320.0 MiB now, peak 4.0 GiB"),
        "{memory}"
    );
    assert!(
        !text.contains("\n  pass "),
        "KubeVirt's metrics have no passes:\n{text}"
    );
    // One scale: the transfer rate (120 MiB/s) draws below the dirty rate (300 MiB/s).
    assert!(text.contains("  sending      ▄▄▄▄"), "{text}");
    assert!(text.contains("  dirtying     ████"), "{text}");
    assert!(text.contains("██  300.0 MiB/s\n"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text:?}");
    // Without a UTF-8 locale: the ASCII ramp.
    let ascii = run("C", &[]);
    assert!(ascii.contains("  dirtying     ####"), "{ascii}");
    assert!(!ascii.contains('█'), "{ascii}");
    // The document carries the points.
    let json: serde_json::Value = serde_json::from_str(&run("C", &["-o", "json"])).unwrap();
    let points = json["progressSeries"]["points"].as_array().unwrap();
    assert_eq!(points.len(), 113);
    assert_eq!(points[0]["atMs"], 0);
    assert_eq!(points[0]["remainingBytes"], 4096u64 << 20);
    assert_eq!(points[112]["atMs"], 448_000);
    assert_eq!(points[40]["dirtyRateBps"], 300u64 << 20);
    assert_eq!(points[40]["transferRateBps"], 120u64 << 20);
    assert!(points[40].get("pass").is_none());
}

/// A Prometheus without the metrics, or without the migration's window: a note, no series.
#[test]
fn no_progress_series_is_said() {
    let empty =
        serde_json::json!({"status": "success", "data": {"resultType": "matrix", "result": []}});
    let (url, _) = fake_prometheus(empty);
    let out = vmctl([
        "--from",
        "examples/cluster",
        "explain",
        "kubevirt-migrate-vm-n4k7t",
        "--prometheus",
        &url,
        "-o",
        "json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json.get("progressSeries").is_none(), "{json}");
    let notes = json["notes"].to_string();
    assert!(
        notes.contains("progress over time not read: Prometheus at")
            && notes.contains("has no migration metrics of dev/jenkins-agent-01"),
        "{notes}"
    );
}

// ------------------------------------------------- issue 33: the verdict, the history hint

/// Every VM and every migration of the example cluster, as `explain` targets (namespace,
/// target): the VMs from `status -A`, the migrations from each VM's `--history`.
fn every_example_target() -> Vec<(String, String)> {
    let status: serde_json::Value = serde_json::from_str(&ok(vmctl([
        "--from",
        "examples/cluster",
        "status",
        "-A",
        "-o",
        "json",
    ])))
    .unwrap();
    let mut targets = Vec::new();
    for v in status["vmis"].as_array().unwrap() {
        let (ns, name) = (
            v["namespace"].as_str().unwrap(),
            v["name"].as_str().unwrap(),
        );
        targets.push((ns.to_string(), format!("vm/{name}")));
        let out = vmctl([
            "--from",
            "examples/cluster",
            "explain",
            "-n",
            ns,
            &format!("vm/{name}"),
            "--history",
            "-o",
            "json",
        ]);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for h in doc["history"].as_array().into_iter().flatten() {
            let target = format!("migration/{}", h["name"].as_str().unwrap());
            if !targets.iter().any(|(n, t)| n == ns && *t == target) {
                targets.push((ns.to_string(), target));
            }
        }
    }
    targets
}

/// Issue 33 (cold trial): the verdict line of a migration still running read
/// "IN-PROGRESS · none · in-progress": the outcome three times and a plane of "none". Each
/// part of the verdict now says something of its own; a migration in progress says what it
/// is doing, since when, between the nodes `status` names for it, and that nothing failed.
#[test]
fn the_verdict_line_says_each_fact_once_and_what_is_true() {
    let status: serde_json::Value = serde_json::from_str(&ok(vmctl([
        "--from",
        "examples/cluster",
        "status",
        "-A",
        "-o",
        "json",
    ])))
    .unwrap();
    let targets = every_example_target();
    assert!(targets.len() > 20, "{targets:?}");
    let mut in_progress = 0;
    for (ns, target) in &targets {
        let text = stdout(&vmctl([
            "--from",
            "examples/cluster",
            "explain",
            "-n",
            ns,
            target,
        ]));
        let json = vmctl([
            "--from",
            "examples/cluster",
            "explain",
            "-n",
            ns,
            target,
            "-o",
            "json",
        ]);
        let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        let verdict = text.lines().nth(3).unwrap_or_default();
        let parts: Vec<&str> = verdict.split(" · ").collect();
        let what = format!("explain -n {ns} {target}: {verdict:?}\n{text}");
        for (i, p) in parts.iter().enumerate() {
            assert!(!parts[..i].contains(p), "{what}: {p:?} twice");
            assert!(!matches!(*p, "none" | "unknown"), "{what}: a bare {p:?}");
        }
        let outcome = doc["outcome"].as_str().unwrap();
        assert!(
            !parts[1..]
                .iter()
                .any(|p| p.replace(' ', "-").to_lowercase() == outcome),
            "{what}: the outcome {outcome} again"
        );
        if outcome != "in-progress" {
            continue;
        }
        in_progress += 1;
        let m = &doc["migration"];
        let source = m["sourceNode"].as_str().expect("the source node is known");
        let target_node = m["targetNode"].as_str().unwrap_or("not scheduled");
        assert!(
            verdict.contains(&format!(" · {source} → {target_node} · ")),
            "{what}"
        );
        assert!(verdict.ends_with(" · no failure so far"), "{what}");
        match m["mode"].as_str() {
            Some("PostCopy") => assert!(
                verdict.starts_with("IN PROGRESS · post-copy, past the point of no return · copying since 02:49:56 (10m04s)"),
                "{what}"
            ),
            Some("PreCopy") => assert!(verdict.starts_with("IN PROGRESS · pre-copy · copying since "), "{what}"),
            _ => assert!(verdict.starts_with("PENDING · ") || verdict.starts_with("IN PROGRESS · "), "{what}"),
        }
        // The nodes are status's for the same migration.
        let name = m["name"].as_str().unwrap();
        let listed = status["migrations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name && s["namespace"] == ns.as_str())
            .unwrap_or_else(|| panic!("{what}: status does not list {name}"));
        assert_eq!(
            (listed["sourceNode"].as_str(), listed["targetNode"].as_str()),
            (Some(source), m["targetNode"].as_str()),
            "{what}"
        );
    }
    assert!(
        in_progress >= 4,
        "the post-copy and pre-copy migrations, both by VM and by name"
    );
    // A migration that failed before its target pod was scheduled: the source and "not
    // scheduled", not "?".
    let text = stdout(&vmctl([
        "--from",
        "examples/cluster",
        "explain",
        "-n",
        "prod",
        "kubevirt-migrate-vm-h2b6c",
    ]));
    let route = text.lines().nth(5).unwrap_or_default();
    assert!(
        route.starts_with("node-3 → not scheduled · phase Failed"),
        "{text}"
    );
}

/// Issue 33 (cold trial): the next step that shows every attempt was written out in several
/// rules, as `vmi/NAME`, while the docs say `vm/NAME`. It is one sentence now, and the
/// command it prints runs, pasted as printed into a shell, and shows the history.
#[test]
fn the_history_hint_is_one_command_that_runs_as_printed() {
    let mut seen = 0;
    for (ns, target) in every_example_target() {
        let out = vmctl([
            "--from",
            "examples/cluster",
            "explain",
            "-n",
            &ns,
            &target,
            "-o",
            "json",
        ]);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let vmi = doc["vmi"]["name"].as_str().unwrap();
        let steps: Vec<&str> = doc["nextSteps"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s.as_str())
            .filter(|s| s.contains("--history"))
            .collect();
        if steps.is_empty() {
            continue;
        }
        seen += 1;
        assert_eq!(
            steps,
            [format!(
                "See every attempt and the backoff between them: vmctl explain vm/{vmi} -n {ns} --history"
            )
            .as_str()],
            "{ns} {target}"
        );
        let command = steps[0].split_once(": ").unwrap().1;
        let run = std::process::Command::new("sh")
            .arg("-c")
            .arg(command.replacen(
                "vmctl ",
                &format!("{} --from examples/cluster ", env!("CARGO_BIN_EXE_vmctl")),
                1,
            ))
            .env("NO_COLOR", "1")
            .env("VMCTL_JOURNAL", "off")
            .env_remove("KUBECONFIG")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(
            matches!(run.status.code(), Some(0 | 1)),
            "{command}: {}",
            both(&run)
        );
        assert!(
            stdout(&run).contains(&format!("History of VMI {ns}/{vmi} (")),
            "{command}: {}",
            both(&run)
        );
    }
    assert!(
        seen >= 2,
        "the example cluster has VMs with several migrations"
    );
}

/// Issue 33 (cold trial): explain said of sip-gateway-01 "a drain of node-3 shuts it down"
/// where plan-drain says a PodDisruptionBudget refuses its pod's eviction, so the drain
/// blocks. For every VM plan-drain lists under a PDB blocker of its node, explain names that
/// budget and does not promise a shutdown that cannot happen.
#[test]
fn explain_and_plan_drain_agree_on_a_pdb_that_blocks_a_shutdown() {
    let mut checked = 0;
    for node in ["node-1", "node-2", "node-3", "node-4"] {
        let out = vmctl([
            "--from",
            "examples/cluster",
            "plan-drain",
            node,
            "-o",
            "json",
        ]);
        let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for b in plan["blockers"].as_array().into_iter().flatten() {
            let Some(pdb) = b["name"]
                .as_str()
                .filter(|_| b["kind"] == "pdb" && b["vmis"].is_array())
            else {
                continue;
            };
            for vmi in b["vmis"].as_array().unwrap() {
                let (ns, name) = vmi.as_str().unwrap().split_once('/').unwrap();
                let (r, _) = explain_json("examples/cluster", &format!("vm/{name}"));
                assert!(
                    r.summary
                        .contains(&format!("PodDisruptionBudget {ns}/{pdb}"))
                        || r.summary.contains(&format!("PodDisruptionBudget {pdb}")),
                    "{vmi}: plan-drain {node} says {pdb} blocks it; explain: {}",
                    r.summary
                );
                assert!(
                    !r.summary.contains("shuts it down."),
                    "{vmi}: {}",
                    r.summary
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 1, "sip-gateway-01's budget on node-3");
}
