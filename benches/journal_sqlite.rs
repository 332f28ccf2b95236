//! The SQLite journal's cost (issue 28): `cargo run --release --example journal-bench [--
//! --records N --runs R --batch B --dir DIR]` writes N realistic migration records (default
//! 10,000; each with a detail of a few KB: the VMIM, the VMI with its migrationState, both
//! launcher pods, explain's diagnosis) into a new journal twice, in batches of B (default
//! 50, as the recorder commits a burst of events) and one per transaction, then times the
//! queries `history` and `explain` make, R times each (default 50), and prints the medians.
//! Target (issue 28): a history query ≤ 50 ms at 10,000 records.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use vmctl::journal::Access;
use vmctl::journal::sqlite::SqliteJournal;
use vmctl::model::journal::{HistoryQuery, MigrationRecord, Platform, RecordOutcome, RecordedBy};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

const NOW_MS: i64 = 1_800_000_000_000;
const DAY_MS: i64 = 86_400_000;
const CAUSES: [&str; 6] = [
    "dirty-rate-exceeds-bandwidth",
    "target-pod-unschedulable",
    "migration-network-unreachable",
    "pdb-blocks-eviction",
    "progress-timeout",
    "post-copy-failed",
];

fn rfc3339(ms: i64) -> String {
    k8s_openapi::jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// Migration `i` of `n`, spread over the last 7 days: 3,000 VMs in 40 namespaces on 100
/// nodes, one in 6 failed (six causes), one in 4 an evacuation.
fn record(i: usize, n: usize) -> MigrationRecord {
    let ns = format!("tenant-{:02}", i % 40);
    let vm = format!("vm-{:05}", i % 3000);
    let src = format!("node-{:03}", i % 100);
    let dst = format!("node-{:03}", (i * 7 + 3) % 100);
    let uid = format!("{:08x}-7d2c-4f1a-9b3e-{:012x}", i, i * 7919);
    let name = format!("{vm}-migration-{:05}", i);
    let failed = i.is_multiple_of(6);
    let cause = if failed { CAUSES[(i / 6) % 6] } else { "none" };
    let ended_ms = NOW_MS - (7 * DAY_MS - 1) + (i as i64) * (7 * DAY_MS - 1) / n as i64;
    let created_ms = ended_ms - 95_000 - (i as i64 % 60) * 1000;
    let started_ms = created_ms + 4_000;
    let (created, started, ended) = (rfc3339(created_ms), rfc3339(started_ms), rfc3339(ended_ms));
    let phase = if failed { "Failed" } else { "Succeeded" };
    let pod = |node: &str, suffix: &str| {
        json!({
            "metadata": {"name": format!("virt-launcher-{vm}-{suffix}"), "namespace": ns,
                "uid": format!("{uid}-{suffix}"), "resourceVersion": format!("{}", 900_000 + i),
                "creationTimestamp": created,
                "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": format!("{uid}-vmi"),
                    "vm.kubevirt.io/name": vm, "kubevirt.io/migrationJobUID": uid},
                "annotations": {"kubevirt.io/domain": vm, "kubectl.kubernetes.io/default-container": "compute"},
                "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                    "name": vm, "uid": format!("{uid}-vmi"), "controller": true}]},
            "spec": {"nodeName": node, "priorityClassName": "vm-standard",
                "containers": [{"name": "compute", "image": "quay.io/kubevirt/virt-launcher:v1.6.0",
                    "resources": {"requests": {"cpu": "4", "memory": "8742Mi"},
                                  "limits": {"cpu": "4", "memory": "8742Mi"}}}],
                "nodeSelector": {"kubevirt.io/schedulable": "true"}},
            "status": {"phase": if suffix == "tgt" && failed { "Failed" } else { "Running" },
                "hostIP": "10.20.1.7", "podIP": "10.244.3.17", "qosClass": "Guaranteed",
                "startTime": created,
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": started},
                               {"type": "PodScheduled", "status": "True", "lastTransitionTime": created}]}
        })
    };
    let vmim = json!({
        "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
        "metadata": {"name": name, "namespace": ns, "uid": uid, "creationTimestamp": created,
            "resourceVersion": format!("{}", 900_100 + i),
            "labels": {"kubevirt.io/vmi-name": vm},
            "annotations": {"kubevirt.io/evacuationMigration": if i.is_multiple_of(4) { src.as_str() } else { "" }}},
        "spec": {"vmiName": vm},
        "status": {"phase": phase, "phaseTransitionTimestamps": [
            {"phase": "Pending", "phaseTransitionTimestamp": created},
            {"phase": "Scheduling", "phaseTransitionTimestamp": created},
            {"phase": "Scheduled", "phaseTransitionTimestamp": started},
            {"phase": "PreparingTarget", "phaseTransitionTimestamp": started},
            {"phase": "TargetReady", "phaseTransitionTimestamp": started},
            {"phase": "Running", "phaseTransitionTimestamp": started},
            {"phase": phase, "phaseTransitionTimestamp": ended}]}
    });
    let state = json!({
        "migrationUid": uid, "sourceNode": src, "targetNode": dst,
        "sourcePod": format!("virt-launcher-{vm}-src"), "targetPod": format!("virt-launcher-{vm}-tgt"),
        "startTimestamp": started, "endTimestamp": ended, "completed": !failed, "failed": failed,
        "mode": "PreCopy", "targetNodeAddress": "10.20.1.9",
        "migrationConfiguration": {"bandwidthPerMigration": "0", "completionTimeoutPerGiB": 150,
            "progressTimeout": 150, "allowPostCopy": false, "parallelMigrationsPerCluster": 5},
        "transferStatus": {"dataProcessed": 8_912_345_678u64, "dataTotal": 9_126_805_504u64,
            "dataRemaining": if failed { 1_234_567_890u64 } else { 0 }, "iteration": 7}
    });
    let vmi = json!({
        "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
        "metadata": {"name": vm, "namespace": ns, "uid": format!("{uid}-vmi"),
            "resourceVersion": format!("{}", 900_200 + i),
            "labels": {"kubevirt.io/nodeName": dst, "vm.kubevirt.io/name": vm}},
        "spec": {"domain": {"cpu": {"cores": 4}, "memory": {"guest": "8Gi"},
            "devices": {"disks": [{"name": "root", "disk": {"bus": "virtio"}}],
                        "interfaces": [{"name": "default", "masquerade": {}}]}},
            "evictionStrategy": "LiveMigrate"},
        "status": {"phase": "Running", "nodeName": if failed { src.as_str() } else { dst.as_str() },
            "migrationMethod": "LiveMigration", "migrationTransport": "Unix",
            "conditions": [{"type": "LiveMigratable", "status": "True"}, {"type": "Ready", "status": "True"}],
            "migrationState": state}
    });
    let diagnosis = json!({
        "outcome": phase.to_lowercase(), "plane": if failed { "data-plane" } else { "none" },
        "cause": {"id": cause, "title": format!("cause {cause}")},
        "summary": format!("migration {name} {}", if failed { "failed: the guest dirtied memory faster than the link sent it" } else { "succeeded" }),
        "timeline": [{"at": created, "what": "created"}, {"at": started, "what": "transfer started"},
                     {"at": ended, "what": phase}],
        "evidence": [{"source": "vmim", "text": format!("status.phase {phase}")},
                     {"source": "vmi", "text": "migrationState.transferStatus: 8.3 GiB of 8.5 GiB in 7 passes"}]
    });
    MigrationRecord {
        id: MigrationRecord::kubevirt_id(&uid),
        cluster: "prod-east".into(),
        recorded_by: RecordedBy::Record,
        platform: Platform::KubeVirt,
        namespace: ns.clone(),
        vm: vm.clone(),
        migration: name,
        source_node: Some(src.clone()),
        target_node: Some(dst),
        source_pod: Some(format!("virt-launcher-{vm}-src")),
        target_pod: Some(format!("virt-launcher-{vm}-tgt")),
        evacuation_node: (i.is_multiple_of(4)).then(|| src.clone()),
        outcome: if failed {
            RecordOutcome::Failed
        } else {
            RecordOutcome::Succeeded
        },
        phase: phase.into(),
        mode: Some("pre-copy".into()),
        plane: if failed { "data-plane" } else { "none" }.into(),
        cause: cause.into(),
        summary: format!("summary of migration {i}"),
        created_at: Some(created.clone()),
        started_at: Some(started.clone()),
        ended_at: Some(ended.clone()),
        ended_ms,
        recorded_at: ended,
        duration_ms: Some(ended_ms - created_ms),
        transfer_ms: Some(ended_ms - started_ms),
        data_processed_bytes: Some(8_912_345_678),
        data_total_bytes: Some(9_126_805_504),
        data_remaining_bytes: Some(if failed { 1_234_567_890 } else { 0 }),
        detail: json!({
            "evidence": {"now": rfc3339(ended_ms), "vmiNamespace": ns, "vmiName": vm,
                "migration": vmim, "vmi": vmi, "pods": [pod(&src, "src"), pod("node-x", "tgt")]},
            "diagnosis": diagnosis,
        }),
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn write(path: &PathBuf, records: &[MigrationRecord], batch: usize) -> Duration {
    let _ = std::fs::remove_file(path);
    let j = SqliteJournal::open(path, Access::Write).expect("open");
    let t = Instant::now();
    for (k, chunk) in records.chunks(batch).enumerate() {
        j.commit(chunk, &[("vmim/prod-east".into(), k.to_string())])
            .expect("commit");
    }
    t.elapsed()
}

fn main() {
    let n = arg("--records", 10_000);
    let runs = arg("--runs", 50);
    let batch = arg("--batch", 50);
    let dir = std::env::args()
        .skip_while(|a| a != "--dir")
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(format!("vmctl-journal-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("bench dir");
    let path = dir.join("journal.sqlite");

    let records: Vec<MigrationRecord> = (0..n).map(|i| record(i, n)).collect();
    let detail_bytes: usize = records
        .iter()
        .map(|r| serde_json::to_string(&r.detail).map_or(0, |s| s.len()))
        .sum();
    println!(
        "{n} records, detail {:.1} KB each on average",
        detail_bytes as f64 / n as f64 / 1024.0
    );

    let one = write(&path, &records, 1);
    println!(
        "write, 1 record per transaction: {:.2} s ({:.0} µs per record)",
        one.as_secs_f64(),
        one.as_secs_f64() * 1e6 / n as f64
    );
    let batched = write(&path, &records, batch);
    println!(
        "write, {batch} records per transaction: {:.2} s ({:.0} µs per record)",
        batched.as_secs_f64(),
        batched.as_secs_f64() * 1e6 / n as f64
    );
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    println!("file: {:.1} MB", size as f64 / 1e6);

    let opens = |access: Access| {
        median(
            (0..runs.min(20))
                .map(|_| {
                    let t = Instant::now();
                    let j = SqliteJournal::open(&path, access).expect("open");
                    let e = t.elapsed();
                    drop(j);
                    e
                })
                .collect(),
        )
    };
    println!(
        "open for writing (with PRAGMA quick_check): {}",
        ms(opens(Access::Write))
    );
    println!("open for reading: {}", ms(opens(Access::Read)));

    let j = SqliteJournal::open(&path, Access::Read).expect("open");
    let week = NOW_MS - 7 * DAY_MS;
    let target = &records[n / 2];
    let queries: Vec<(&str, HistoryQuery)> = vec![
        (
            "history -A --since 7d (every record, no detail)",
            HistoryQuery {
                since_ms: Some(week),
                ..HistoryQuery::default()
            },
        ),
        (
            "history -A --since 1d",
            HistoryQuery {
                since_ms: Some(NOW_MS - DAY_MS),
                ..HistoryQuery::default()
            },
        ),
        (
            "history node/node-042 --since 7d",
            HistoryQuery {
                node: Some("node-042".into()),
                since_ms: Some(week),
                ..HistoryQuery::default()
            },
        ),
        (
            "history vm/NAME -n NS",
            HistoryQuery {
                namespace: Some(target.namespace.clone()),
                vm: Some(target.vm.clone()),
                ..HistoryQuery::default()
            },
        ),
        (
            "history -A --cause progress-timeout --since 7d",
            HistoryQuery {
                cause: Some("progress-timeout".into()),
                since_ms: Some(week),
                ..HistoryQuery::default()
            },
        ),
        (
            "history -A --outcome failed",
            HistoryQuery {
                outcome: Some(RecordOutcome::Failed),
                ..HistoryQuery::default()
            },
        ),
        (
            "explain vmim/NAME -n NS (one record, with detail)",
            HistoryQuery {
                namespace: Some(target.namespace.clone()),
                migration: Some(target.migration.clone()),
                limit: Some(1),
                with_detail: true,
                ..HistoryQuery::default()
            },
        ),
        (
            "explain vm/NAME -n NS (newest, with detail)",
            HistoryQuery {
                namespace: Some(target.namespace.clone()),
                vm: Some(target.vm.clone()),
                limit: Some(1),
                with_detail: true,
                ..HistoryQuery::default()
            },
        ),
    ];
    for (what, q) in &queries {
        let mut rows = 0;
        let times = (0..runs)
            .map(|_| {
                let t = Instant::now();
                rows = j.query(q).expect("query").len();
                t.elapsed()
            })
            .collect();
        println!("{what}: {} rows, median {}", rows, ms(median(times)));
    }
    drop(j);
    let _ = std::fs::remove_dir_all(&dir);
}
