//! `vmctl history` and `explain`'s journal fallback (issue 28), end to end: journals written
//! through the library (`Journal::open(.., Access::Write)` + `commit`) into real SQLite files,
//! then the binary run on them with a fixed clock.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;
use vmctl::journal::{Access, Journal, JournalSpec};
use vmctl::model::journal::{MigrationRecord, Platform, RecordOutcome, RecordedBy};

const NOW: &str = "2026-12-04T12:00:00Z";

fn now_ms() -> i64 {
    NOW.parse::<Timestamp>().unwrap().as_millisecond()
}

fn rfc(ms: i64) -> String {
    Timestamp::from_millisecond(ms).unwrap().to_string()
}

struct R {
    ns: &'static str,
    vm: &'static str,
    from: &'static str,
    to: &'static str,
    outcome: RecordOutcome,
    cause: &'static str,
    hours_ago: i64,
    seconds: i64,
    evacuating: bool,
}

fn record(i: usize, r: &R) -> MigrationRecord {
    let ended = now_ms() - r.hours_ago * 3_600_000;
    let created = ended - r.seconds * 1000;
    let plane = match r.cause {
        "succeeded" | "aborted-by-request" => "none",
        "target-pod-unschedulable" => "control-plane",
        _ => "data-plane",
    };
    MigrationRecord {
        id: format!("kubevirt:uid-{i:03}"),
        cluster: "prod-cluster".into(),
        recorded_by: if r.evacuating {
            RecordedBy::Drain
        } else {
            RecordedBy::Record
        },
        platform: Platform::KubeVirt,
        namespace: r.ns.into(),
        vm: r.vm.into(),
        migration: format!("{}-mig-{i:02}", r.vm),
        source_node: Some(r.from.into()),
        target_node: (!r.to.is_empty()).then(|| r.to.into()),
        source_pod: Some(format!("virt-launcher-{}-src{i}", r.vm)),
        target_pod: Some(format!("virt-launcher-{}-tgt{i}", r.vm)),
        evacuation_node: r.evacuating.then(|| r.from.into()),
        outcome: r.outcome,
        phase: match r.outcome {
            RecordOutcome::Succeeded => "Succeeded",
            _ => "Failed",
        }
        .into(),
        mode: Some("pre-copy".into()),
        plane: plane.into(),
        cause: r.cause.into(),
        summary: format!("{} ({})", r.cause, r.vm),
        created_at: Some(rfc(created)),
        started_at: Some(rfc(created + 2000)),
        ended_at: Some(rfc(ended)),
        ended_ms: ended,
        recorded_at: rfc(ended + 1000),
        duration_ms: Some(r.seconds * 1000),
        transfer_ms: Some((r.seconds - 2) * 1000),
        data_processed_bytes: Some((r.seconds << 26).min(8 << 30)),
        data_total_bytes: Some(8 << 30),
        data_remaining_bytes: Some(0),
        detail: Value::Null,
    }
}

use RecordOutcome::{Aborted, Failed, Succeeded};

/// 20 migrations over 4 nodes, 2 namespaces, 5 causes and 10 days (3 older than 7 days).
fn fleet() -> Vec<MigrationRecord> {
    let r = |ns, vm, from, to, outcome, cause, hours_ago, seconds, evacuating| R {
        ns,
        vm,
        from,
        to,
        outcome,
        cause,
        hours_ago,
        seconds,
        evacuating,
    };
    let rows = [
        r(
            "prod",
            "db-01",
            "node-1",
            "node-2",
            Succeeded,
            "succeeded",
            1,
            40,
            false,
        ),
        r(
            "prod",
            "db-01",
            "node-2",
            "node-1",
            Failed,
            "not-converging",
            3,
            300,
            false,
        ),
        r(
            "prod",
            "web-01",
            "node-1",
            "node-3",
            Succeeded,
            "succeeded",
            5,
            20,
            true,
        ),
        r(
            "prod",
            "web-02",
            "node-1",
            "node-3",
            Succeeded,
            "succeeded",
            5,
            25,
            true,
        ),
        r(
            "prod",
            "web-03",
            "node-1",
            "",
            Failed,
            "target-pod-unschedulable",
            6,
            300,
            true,
        ),
        r(
            "prod",
            "cache-01",
            "node-3",
            "node-4",
            Succeeded,
            "succeeded",
            12,
            30,
            false,
        ),
        r(
            "prod",
            "db-02",
            "node-2",
            "node-4",
            Failed,
            "not-converging",
            20,
            600,
            false,
        ),
        r(
            "prod",
            "db-02",
            "node-2",
            "node-4",
            Failed,
            "connection-failure",
            30,
            45,
            false,
        ),
        r(
            "dev",
            "test-01",
            "node-4",
            "node-1",
            Aborted,
            "aborted-by-request",
            36,
            15,
            false,
        ),
        r(
            "dev",
            "test-02",
            "node-4",
            "node-2",
            Succeeded,
            "succeeded",
            40,
            12,
            false,
        ),
        r(
            "dev",
            "test-03",
            "node-3",
            "node-2",
            Succeeded,
            "succeeded",
            48,
            18,
            false,
        ),
        r(
            "prod",
            "web-01",
            "node-3",
            "node-1",
            Succeeded,
            "succeeded",
            60,
            22,
            false,
        ),
        r(
            "prod",
            "db-01",
            "node-1",
            "node-2",
            Failed,
            "not-converging",
            72,
            420,
            false,
        ),
        r(
            "prod",
            "queue-01",
            "node-2",
            "node-3",
            Succeeded,
            "succeeded",
            96,
            35,
            false,
        ),
        r(
            "dev",
            "test-01",
            "node-1",
            "node-4",
            Succeeded,
            "succeeded",
            120,
            10,
            false,
        ),
        r(
            "prod",
            "cache-01",
            "node-4",
            "node-3",
            Succeeded,
            "succeeded",
            150,
            28,
            false,
        ),
        r(
            "prod",
            "db-02",
            "node-4",
            "node-2",
            Succeeded,
            "succeeded",
            160,
            90,
            false,
        ),
        r(
            "prod",
            "db-01",
            "node-2",
            "node-1",
            Failed,
            "not-converging",
            200,
            500,
            false,
        ),
        r(
            "prod",
            "web-02",
            "node-3",
            "node-1",
            Succeeded,
            "succeeded",
            220,
            21,
            false,
        ),
        r(
            "dev",
            "test-02",
            "node-2",
            "node-4",
            Failed,
            "connection-failure",
            240,
            60,
            false,
        ),
    ];
    rows.iter().enumerate().map(|(i, r)| record(i, r)).collect()
}

fn write(path: &Path, records: &[MigrationRecord]) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let j = Journal::open(&JournalSpec::Sqlite(path.to_path_buf()), Access::Write)
            .await
            .unwrap();
        let c = j.commit(records, &[]).await.unwrap();
        assert_eq!(c.inserted, records.len());
    });
}

fn journal_of(records: &[MigrationRecord]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.sqlite");
    write(&path, records);
    (dir, path)
}

fn history(journal: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec![
        "--journal".to_string(),
        journal.display().to_string(),
        "--now".into(),
        NOW.into(),
        "history".into(),
    ];
    all.extend(args.iter().map(|s| s.to_string()));
    vmctl(all)
}

fn json(journal: &Path, args: &[&str]) -> (Value, i32) {
    let mut a = args.to_vec();
    a.extend(["-o", "json"]);
    let o = history(journal, &a);
    let code = o.status.code().unwrap();
    let v: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", both(&o)));
    (v, code)
}

fn vms(doc: &Value) -> Vec<String> {
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{}/{}",
                r["namespace"].as_str().unwrap(),
                r["vm"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn the_table_lists_the_window_then_per_node_per_cause_and_totals() {
    let (_d, j) = journal_of(&fleet());
    let o = history(&j, &["-A"]);
    assert_eq!(o.status.code(), Some(1), "failures matched: {}", both(&o));
    let text = stdout(&o).replace(&j.display().to_string(), "JOURNAL");
    insta::assert_snapshot!("history_table", text);
    let wide = stdout(&history(&j, &["-A", "-o", "wide", "--limit", "3"]));
    assert!(
        wide.contains("virt-launcher-db-01-src0 → virt-launcher-db-01-tgt0"),
        "{wide}"
    );
    assert!(wide.contains("… 14 more"), "{wide}");
}

#[test]
fn the_document_has_the_records_totals_by_node_and_by_cause() {
    let (_d, j) = journal_of(&fleet());
    let (doc, code) = json(&j, &["-A"]);
    assert_eq!(code, 1);
    assert_eq!(doc["apiVersion"], "vmctl/v1alpha1");
    assert_eq!(doc["kind"], "MigrationHistory");
    assert_eq!(doc["asOf"], NOW);
    assert_eq!(doc["journal"], j.display().to_string());
    assert_eq!(doc["query"]["namespace"], Value::Null);
    assert_eq!(doc["query"]["since"], "2026-11-27T12:00:00Z");
    assert_eq!(doc["query"]["window"], "7d");
    // 17 of the 20 ended in the last 7 days; newest first.
    assert_eq!(doc["matched"], 17);
    let ended: Vec<i64> = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["endedMs"].as_i64().unwrap())
        .collect();
    assert_eq!(ended.len(), 17);
    assert!(ended.windows(2).all(|w| w[0] >= w[1]), "{ended:?}");
    assert_eq!(doc["records"][0]["ageSeconds"], 3600);
    assert!(doc["records"][0].get("detail").is_none());
    let t = &doc["totals"];
    assert_eq!(
        (&t["count"], &t["succeeded"], &t["failed"], &t["aborted"]),
        (&17.into(), &11.into(), &5.into(), &1.into())
    );
    assert!((t["failureRate"].as_f64().unwrap() - 5.0 / 17.0).abs() < 1e-9);
    // The 17 durations (s) sorted: 10 12 15 18 20 22 25 28 30 35 40 45 90 300 300 420 600;
    // nearest rank: the median is the 9th, p95 the 17th.
    assert_eq!(t["medianDurationMs"], 30_000);
    assert_eq!(t["p95DurationMs"], 600_000);
    let nodes: Vec<(&str, u64, u64)> = doc["byNode"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["node"].as_str().unwrap(),
                n["count"].as_u64().unwrap(),
                n["evacuations"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        nodes,
        [
            ("node-1", 6, 3),
            ("node-2", 4, 0),
            ("node-4", 4, 0),
            ("node-3", 3, 0)
        ]
    );
    let causes: Vec<(&str, u64, Vec<&str>)> = doc["byCause"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["cause"].as_str().unwrap(),
                c["count"].as_u64().unwrap(),
                c["nodes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n.as_str().unwrap())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        causes,
        [
            (
                "succeeded",
                11,
                vec!["node-1", "node-2", "node-3", "node-4"]
            ),
            ("not-converging", 3, vec!["node-1", "node-2"]),
            ("aborted-by-request", 1, vec!["node-4"]),
            ("connection-failure", 1, vec!["node-2"]),
            ("target-pod-unschedulable", 1, vec!["node-1"]),
        ]
    );
    // YAML is the same document.
    let y = stdout(&history(&j, &["-A", "-o", "yaml"]));
    assert!(
        y.contains("kind: MigrationHistory") && y.contains("byCause:"),
        "{y}"
    );
}

#[test]
fn filters_narrow_the_window() {
    let (_d, j) = journal_of(&fleet());
    let (doc, _) = json(&j, &["vm/db-01", "-n", "prod"]);
    assert_eq!(vms(&doc), ["prod/db-01"; 3]);
    assert_eq!(doc["query"]["target"], "vm/db-01");
    // node/: from, to or evacuating; the per-node table still counts source nodes.
    let (doc, _) = json(&j, &["node/node-4", "-A"]);
    for r in doc["records"].as_array().unwrap() {
        assert!(
            r["sourceNode"] == "node-4" || r["targetNode"] == "node-4",
            "{r}"
        );
    }
    assert_eq!(doc["matched"], 8);
    let (doc, _) = json(&j, &["-A", "--since", "36h"]);
    assert_eq!(doc["matched"], 9);
    let (doc, _) = json(&j, &["-A", "--since", "30d"]);
    assert_eq!(doc["matched"], 20);
    let (doc, code) = json(&j, &["-A", "--cause", "not-converging"]);
    assert_eq!((doc["matched"].as_u64(), code), (Some(3), 1));
    let (doc, code) = json(&j, &["-A", "--failed"]);
    assert_eq!(
        (
            doc["totals"]["failed"].as_u64(),
            doc["matched"].as_u64(),
            code
        ),
        (Some(5), Some(5), 1)
    );
    // Nothing failed among those matched: exit 0.
    let (doc, code) = json(&j, &["-A", "--outcome", "succeeded"]);
    assert_eq!((doc["matched"].as_u64(), code), (Some(11), 0));
    let (doc, _) = json(&j, &["migration/db-02-mig-06", "-n", "prod"]);
    assert_eq!(doc["matched"], 1);
}

/// Issue 33, item 3: a journal is read whole unless `-n` is given; the kubeconfig's
/// namespace does not narrow it (a node is cluster-scoped, and a journal has no context).
#[test]
fn the_journal_is_read_whole_unless_n_is_given() {
    let (d, j) = journal_of(&fleet());
    // The README's own command, with no kubeconfig at all: node-4's two failures of the last
    // 7 days (prod/db-02, 20 h and 30 h ago; dev/test-02's, 240 h ago, is outside).
    let o = history(&j, &["node/node-4", "--since", "7d", "--failed"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(stdout(&o).contains("prod/db-02"), "{}", both(&o));
    let (doc, code) = json(&j, &["node/node-4", "--since", "7d", "--failed"]);
    assert_eq!((doc["matched"].as_u64(), code), (Some(2), 1), "{doc}");
    assert_eq!(doc["query"]["namespace"], Value::Null);
    // A kubeconfig whose context names a namespace does not narrow the journal either, and
    // it is not even read (a server nobody listens on; a context that does not exist): said.
    let kubeconfig = d.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\ncurrent-context: dev\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: dev\n  context:\n    cluster: c\n    user: u\n    namespace: dev\nusers:\n- name: u\n  user:\n    token: t\n",
    )
    .unwrap();
    let k = kubeconfig.display().to_string();
    let (doc, _) = json(&j, &["--kubeconfig", &k]);
    assert_eq!(doc["query"]["namespace"], Value::Null);
    let o = history(&j, &["--kubeconfig", &k, "--context", "nope"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(
        stderr(&o).contains("warning: history reads the journal only: --kubeconfig and --context narrow nothing there"),
        "{}",
        both(&o)
    );
    // Every record of the last 7 days (3 of the 20 are older), of both namespaces.
    assert_eq!(doc["matched"], 17);
    assert_eq!(doc["namespaces"], serde_json::json!(["dev", "prod"]));
    let (doc, _) = json(&j, &["node/node-1"]);
    assert!(
        vms(&doc).iter().any(|v| v.starts_with("dev/"))
            && vms(&doc).iter().any(|v| v.starts_with("prod/")),
        "{:?}",
        vms(&doc)
    );
    // -n narrows, and so says the empty line.
    let (doc, _) = json(&j, &["--kubeconfig", &k, "-n", "dev"]);
    assert_eq!(doc["query"]["namespace"], "dev");
    assert!(
        vms(&doc).iter().all(|v| v.starts_with("dev/")),
        "{:?}",
        vms(&doc)
    );
    assert_eq!(doc["matched"], 4);
    let o = history(&j, &["-n", "default"]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(
        stdout(&o).starts_with("no migrations in namespace default since"),
        "{}",
        both(&o)
    );
    let o = history(&j, &["node/node-9"]);
    assert!(
        stdout(&o).starts_with("no migrations from or to node/node-9 in any namespace since"),
        "{}",
        both(&o)
    );
    // --from means nothing to history: refused, not ignored.
    let o = history(&j, &["--from", "examples/cluster"]);
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
}

/// A VM's name without -n: every namespace, and the answer says which namespaces matched.
#[test]
fn a_vm_without_n_is_looked_for_in_every_namespace_and_says_where() {
    let mut records = fleet();
    let mut other = record(
        20,
        &R {
            ns: "staging",
            vm: "db-01",
            from: "node-3",
            to: "node-4",
            outcome: Succeeded,
            cause: "succeeded",
            hours_ago: 2,
            seconds: 30,
            evacuating: false,
        },
    );
    other.id = "kubevirt:uid-staging".into();
    records.push(other);
    let (_d, j) = journal_of(&records);
    let (doc, code) = json(&j, &["vm/db-01"]);
    // prod/db-01: 1 h, 3 h (failed) and 72 h ago; staging/db-01: 2 h ago.
    assert_eq!((doc["matched"].as_u64(), code), (Some(4), 1), "{doc}");
    assert_eq!(doc["namespaces"], serde_json::json!(["prod", "staging"]));
    let o = history(&j, &["vm/db-01"]);
    assert!(
        stdout(&o).contains("vm/db-01 is in 2 namespaces: prod, staging (-n NAMESPACE for one)"),
        "{}",
        both(&o)
    );
    // One namespace matched: said too, without the hint.
    let o = history(&j, &["vm/db-02"]);
    assert!(
        stdout(&o).contains("vm/db-02 is in namespace prod"),
        "{}",
        both(&o)
    );
    // -n: only that namespace, and nothing said about others.
    let (doc, _) = json(&j, &["vm/db-01", "-n", "staging"]);
    assert_eq!(doc["matched"], 1);
    let o = history(&j, &["vm/db-01", "-n", "staging"]);
    assert!(!stdout(&o).contains("namespaces:"), "{}", both(&o));
}

#[test]
fn an_empty_result_says_what_was_searched() {
    let (_d, j) = journal_of(&fleet());
    let o = history(&j, &["vm/nope", "-n", "prod", "--cause", "not-converging"]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert_eq!(
        stdout(&o),
        format!(
            "no migrations of vm/nope with cause not-converging in namespace prod since 2026-11-27T12:00:00Z (7d) in journal {}\n",
            j.display()
        )
    );
    let (doc, code) = json(&j, &["vm/nope", "-A"]);
    assert_eq!((doc["matched"].as_u64(), code), (Some(0), 0));
    assert_eq!(doc["records"], Value::Array(vec![]));
}

#[test]
fn a_cause_not_in_the_catalogue_is_a_usage_error_with_the_closest() {
    let (_d, j) = journal_of(&fleet());
    let o = history(&j, &["-A", "--cause", "not-convergng"]);
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
    assert!(
        stderr(&o).contains("did you mean not-converging?"),
        "{}",
        both(&o)
    );
    assert!(stdout(&o).is_empty());
    for bad in [
        &["-A", "--since", "1mo"][..],
        &["pod/x"],
        &["--failed", "--outcome", "aborted"],
    ] {
        assert_eq!(history(&j, bad).status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn a_missing_journal_is_exit_7_and_not_created() {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("none.sqlite");
    let o = history(&j, &["-A"]);
    assert_eq!(o.status.code(), Some(7), "{}", both(&o));
    assert!(
        stderr(&o).contains(&j.display().to_string()),
        "{}",
        both(&o)
    );
    assert!(!j.exists());
    let o = vmctl(["--journal", "off", "history", "-A"]);
    assert_eq!(o.status.code(), Some(2), "{}", both(&o));
}

#[test]
fn a_corrupt_journal_is_exit_7_and_left_as_it_was() {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("journal.sqlite");
    let junk: Vec<u8> = (0..8192u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&j, &junk).unwrap();
    let o = history(&j, &["-A"]);
    assert_eq!(o.status.code(), Some(7), "{}", both(&o));
    assert!(
        stderr(&o).contains(&j.display().to_string()),
        "{}",
        both(&o)
    );
    assert_eq!(std::fs::read(&j).unwrap(), junk);
}

#[test]
fn hostile_strings_from_the_journal_are_escaped() {
    let mut recs = fleet();
    recs[0].vm = "db\u{1b}[2J\u{1b}]0;pwned\u{7}".into();
    recs[0].summary = "line one\nline two\r\u{202e}".into();
    recs[0].source_node = Some("node-\u{1b}[31mred".into());
    let (_d, j) = journal_of(&recs);
    for format in ["table", "wide"] {
        let o = history(&j, &["-A", "-o", format]);
        let out = stdout(&o);
        assert!(
            !out.contains('\u{1b}')
                && !out.contains('\u{7}')
                && !out.contains('\r')
                && !out.contains('\u{202e}'),
            "{format}: {out}"
        );
        assert!(out.contains("db\\u{1b}[2J"), "{format}: {out}");
        if format == "wide" {
            assert!(out.contains("line one\\nline two"), "{out}");
        }
    }
    let (doc, _) = json(&j, &["-A"]);
    assert_eq!(doc["records"][0]["summary"], "line one\nline two\r\u{202e}");
}

// ---------------------------------------------------------------- explain's fallback

const INCIDENTS_NOW: &str = "2026-12-03T10:00:00Z";

/// The record `vmctl record` would write of a migration of examples/incidents, made through
/// the library: evidence → diagnosis → record.
fn recorded(target: &str) -> MigrationRecord {
    use clap::Parser;
    let cli = vmctl::cli::Cli::try_parse_from([
        "vmctl",
        "--from",
        concat!(env!("CARGO_MANIFEST_DIR"), "/examples/incidents"),
        "--now",
        INCIDENTS_NOW,
        "explain",
        target,
    ])
    .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let ctx = vmctl::context::Context::new(&cli.global).await.unwrap();
        let t = vmctl::commands::explain::parse_target(target).unwrap();
        let resolved = vmctl::evidence::resolve(&ctx, &t).await.unwrap();
        let evidence = vmctl::evidence::gather(&ctx, resolved, &mut Vec::new())
            .await
            .unwrap();
        let diagnosis = vmctl::triage::diagnose(&evidence);
        vmctl::triage::record::kubevirt_record(
            &evidence,
            &diagnosis,
            RecordedBy::Record,
            "2026-12-03T10:00:05Z".parse().unwrap(),
            "prod-cluster",
            None,
        )
        .unwrap()
    })
}

#[test]
fn explain_falls_back_to_the_journal_with_the_same_diagnosis() {
    let target = "mig-unsched-affinity";
    let original = vmctl([
        "--from",
        "examples/incidents",
        "--now",
        INCIDENTS_NOW,
        "explain",
        target,
    ]);
    assert_eq!(original.status.code(), Some(1));
    let (_d, j) = journal_of(&[recorded(target)]);
    let js = j.display().to_string();
    // examples/cluster has no such migration: without a journal, not found.
    let gone = vmctl([
        "--from",
        "examples/cluster",
        "--journal",
        "off",
        "explain",
        target,
    ]);
    assert_eq!(gone.status.code(), Some(3), "{}", both(&gone));
    let o = vmctl([
        "--from",
        "examples/cluster",
        "explain",
        target,
        "--journal",
        &js,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let text = stdout(&o);
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            "from the journal {js}, recorded at 2026-12-03T10:00:05Z by record (the migration no longer exists in the cluster)"
        )
    );
    // The header and everything after the "as of" line are the original's.
    let orig = stdout(&original);
    let (o_lines, f_lines): (Vec<&str>, Vec<&str>) =
        (orig.lines().collect(), text.lines().skip(1).collect());
    assert_eq!(o_lines[0], f_lines[0]);
    assert_eq!(
        f_lines[1],
        format!("as of {INCIDENTS_NOW} (when recorded) · journal {js}")
    );
    assert_eq!(o_lines[2..], f_lines[2..]);
    // JSON: the diagnosis plus where it came from.
    let o = vmctl([
        "--from",
        "examples/cluster",
        "explain",
        target,
        "--journal",
        &js,
        "-o",
        "json",
    ]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["cause"], "target-pod-unschedulable");
    assert_eq!(doc["outcome"], "failed");
    assert_eq!(
        doc["journal"],
        serde_json::json!({"path": js, "recordedAt": "2026-12-03T10:00:05Z", "recordedBy": "record"})
    );
    // vm/NAME of a VM gone from the cluster: its newest record, the same way.
    let o = vmctl([
        "--from",
        "examples/cluster",
        "explain",
        "vm/web-01",
        "--journal",
        &js,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert_eq!(stdout(&o), text);
    // A migration the journal does not have either: not found, with a hint saying so.
    let o = vmctl([
        "--from",
        "examples/cluster",
        "explain",
        "mig-nowhere",
        "--journal",
        &js,
    ]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains("has no record of it either"),
        "{}",
        both(&o)
    );
}

#[test]
fn explain_keeps_not_found_when_the_journal_is_missing_or_damaged() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("none.sqlite").display().to_string();
    let o = vmctl([
        "--from",
        "examples/cluster",
        "explain",
        "mig-x",
        "--journal",
        &missing,
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", both(&o));
    assert!(!stderr(&o).contains("journal"), "{}", both(&o));
    let bad = d.path().join("bad.sqlite");
    std::fs::write(&bad, b"not a database at all, not at all, no").unwrap();
    let bs = bad.display().to_string();
    let o = vmctl([
        "--from",
        "examples/cluster",
        "explain",
        "mig-x",
        "--journal",
        &bs,
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", both(&o));
    assert!(
        stderr(&o).contains("the journal was not searched"),
        "{}",
        both(&o)
    );
    assert!(stderr(&o).contains(&bs), "{}", both(&o));
}

#[test]
fn explain_of_a_record_without_objects_shows_its_own_verdict() {
    let mut r = fleet().remove(1);
    r.migration = "old-mig".into();
    let (_d, j) = journal_of(&[r]);
    let js = j.display().to_string();
    let o = vmctl([
        "--from",
        "examples/cluster",
        "explain",
        "old-mig",
        "--journal",
        &js,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let text = stdout(&o);
    assert!(text.starts_with("from the journal "), "{text}");
    assert!(
        text.contains("FAILED · data-plane · not-converging"),
        "{text}"
    );
    assert!(text.contains("node-2 → node-1"), "{text}");
}

#[test]
fn explain_of_a_vm_without_migrations_names_the_journals_latest() {
    let mut recs = fleet();
    for r in recs.iter_mut().take(2) {
        r.namespace = "dev".into();
        r.vm = "loadgen-01".into();
    }
    let (_d, j) = journal_of(&recs);
    let js = j.display().to_string();
    let o = vmctl([
        "--from",
        "examples/cluster",
        "--now",
        EXAMPLE_NOW,
        "explain",
        "vm/loadgen-01",
        "--journal",
        &js,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    assert!(
        stdout(&o).contains("the journal has 2 migrations of vm/loadgen-01; the last: db-01-mig-00 succeeded (succeeded, node-1 → node-2, ended 2026-12-04T11:00:00Z) — `vmctl history vm/loadgen-01`"),
        "{}",
        both(&o)
    );
}

/// One journal for a fleet: `--cluster` keeps one cluster's migrations, and says so when
/// nothing matched.
#[test]
fn cluster_narrows_a_fleets_journal_to_one_cluster() {
    let mut records = fleet();
    let total = records.len();
    for r in records.iter_mut().take(5) {
        r.cluster = "edge-7".into();
    }
    let (_d, j) = journal_of(&records);
    let (all, _) = json(&j, &["-A", "--since", "30d"]);
    assert_eq!(all["matched"], total, "{all:#}");
    let (edge, _) = json(&j, &["-A", "--since", "30d", "--cluster", "edge-7"]);
    assert_eq!(edge["matched"], 5, "{edge:#}");
    assert_eq!(edge["query"]["cluster"], "edge-7");
    assert!(
        edge["records"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["cluster"] == "edge-7"),
        "{edge:#}"
    );
    let none = history(&j, &["-A", "--cluster", "nowhere"]);
    assert_eq!(none.status.code(), Some(0), "{}", both(&none));
    assert!(
        stdout(&none).contains("of cluster nowhere"),
        "{}",
        both(&none)
    );
}
