//! `vmctl record`'s lines: one per recorded migration on stdout (a JSON object per line with
//! `-o json`, a YAML document each with `-o yaml`), and its notes on stderr (start, replay,
//! journal full and back, the summary on stop). Every string from the cluster or the journal
//! is escaped here.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::OutputFormat;
use crate::error::Result;
use crate::model::journal::MigrationRecord;
use crate::text::{self as fmt, printable};
use crate::triage::route_words;

fn hms(t: Timestamp) -> String {
    t.strftime("%H:%M:%S").to_string()
}

fn millis(ms: Option<i64>) -> String {
    ms.map(|ms| fmt::duration(ms.max(0) / 1000))
        .unwrap_or_else(|| "-".into())
}

/// The document of one recorded migration (`-o json|yaml`), kind RecordedMigration.
pub fn document(record: &MigrationRecord) -> Value {
    json!({
        "apiVersion": "vmctl/v1alpha1",
        "kind": "RecordedMigration",
        "time": record.recorded_at,
        "id": record.id,
        "cluster": record.cluster,
        "namespace": record.namespace,
        "vm": record.vm,
        "migration": record.migration,
        "outcome": record.outcome.as_str(),
        "phase": record.phase,
        "cause": record.cause,
        "plane": record.plane,
        "summary": record.summary,
        "sourceNode": record.source_node,
        "targetNode": record.target_node,
        "sourcePod": record.source_pod,
        "targetPod": record.target_pod,
        "mode": record.mode,
        "endedAt": record.ended_at,
        "durationMs": record.duration_ms,
        "transferMs": record.transfer_ms,
    })
}

/// One recorded migration, as the output format wants it (with its newline).
pub fn recorded(output: OutputFormat, record: &MigrationRecord) -> Result<String> {
    match output {
        OutputFormat::Json => Ok(format!("{}\n", super::json_line(&document(record))?)),
        OutputFormat::Yaml => Ok(format!(
            "---\n{}",
            super::structured(OutputFormat::Yaml, &document(record))?
        )),
        OutputFormat::Wide => Ok(format!(
            "{} mode={} pods={} → {}\n",
            line(record),
            printable(record.mode.as_deref().unwrap_or("-")),
            printable(record.source_pod.as_deref().unwrap_or("-")),
            printable(record.target_pod.as_deref().unwrap_or("-")),
        )),
        _ => Ok(format!("{}\n", line(record))),
    }
}

/// `2026-12-04T20:41:02Z prod/db-01 kubevirt-migrate-vm-x succeeded cause=succeeded
/// node-1 → node-2 took 1m2s`; `end-unknown` first when the objects did not say when it
/// ended; the route as `explain` says it (`node-3 → not scheduled` for a target pod that
/// never reached a node).
fn line(record: &MigrationRecord) -> String {
    format!(
        "{} {}/{} {} {} cause={} {} took {}",
        printable(record.ended_at.as_deref().unwrap_or("end-unknown")),
        printable(&record.namespace),
        printable(&record.vm),
        printable(&record.migration),
        record.outcome.as_str(),
        printable(&record.cause),
        printable(&route_words(
            record.source_node.as_deref(),
            record.target_node.as_deref(),
            &record.phase,
            &record.cause,
            record.started_at.is_some(),
        )),
        millis(record.duration_ms),
    )
}

/// Once the lists are in: what is watched and where it is written.
pub fn started(
    now: Timestamp,
    cluster: &str,
    journal: &str,
    scope: &str,
    vmis: usize,
    in_flight: usize,
) -> String {
    format!(
        "[{}] recording migrations of cluster {} ({scope}: {vmis} VMIs, {in_flight} migrations in flight) into {}",
        hms(now),
        printable(cluster),
        printable(journal)
    )
}

/// Migrations found ended at start (before the watches): new ones and those already there.
pub fn caught_up(now: Timestamp, new: usize, known: usize) -> String {
    format!(
        "[{}] at start: {new} ended migrations not in the journal yet (recorded), {known} already in it",
        hms(now)
    )
}

/// The replay of the migration watch from the bookmark.
pub fn replayed(now: Timestamp, from: &str, ended: usize, new: usize) -> String {
    format!(
        "[{}] replayed the migration watch from resourceVersion {}: {ended} migrations ended while the recorder was down, {new} of them not in the journal yet",
        hms(now),
        printable(from)
    )
}

/// 410 Gone on the replay: what could not be recovered.
pub fn replay_gone(now: Timestamp, from: &str, bookmarked_at: Option<&str>) -> String {
    format!(
        "[{}] warning: the API server no longer keeps the history from resourceVersion {} (410 Gone): migrations that ended and were deleted while the recorder was down{} could not be recovered; the ones still there are recorded from the list",
        hms(now),
        printable(from),
        bookmarked_at
            .map(|t| format!(" before {}", printable(t)))
            .unwrap_or_default()
    )
}

/// The replay failed otherwise.
pub fn replay_failed(now: Timestamp, message: &str) -> String {
    format!(
        "[{}] warning: could not replay the migration watch ({}): migrations deleted while the recorder was down may be missing",
        hms(now),
        printable(message)
    )
}

/// The journal stopped taking writes.
pub fn journal_full(now: Timestamp, message: &str, bound: usize, retry_seconds: u64) -> String {
    format!(
        "[{}] journal full: not writing; still watching ({}); up to {bound} records wait in memory, retrying every {retry_seconds}s",
        hms(now),
        printable(message)
    )
}

/// Another fault while writing (busy, unreachable): retried.
pub fn journal_failing(now: Timestamp, message: &str, retry_seconds: u64) -> String {
    format!(
        "[{}] journal not writable: {}; still watching, retrying every {retry_seconds}s",
        hms(now),
        printable(message)
    )
}

pub fn journal_back(now: Timestamp, written: usize) -> String {
    format!(
        "[{}] journal writable again: wrote {written} waiting records",
        hms(now)
    )
}

/// The in-memory queue overflowed: the oldest waiting records were dropped.
pub fn queue_dropped(now: Timestamp, dropped: usize, bound: usize) -> String {
    format!(
        "[{}] warning: {dropped} records dropped (more than {bound} waited for the journal); the next start records those whose migrations still exist",
        hms(now)
    )
}

pub fn pruned(now: Timestamp, by_age: u64, by_size: u64) -> String {
    format!(
        "[{}] pruned the journal: {by_age} records past --retain, {by_size} over --max-size",
        hms(now)
    )
}

pub fn prune_failed(now: Timestamp, message: &str) -> String {
    format!(
        "[{}] warning: could not prune the journal: {}",
        hms(now),
        printable(message)
    )
}

/// A migration that ended but whose diagnosis does not see it ended (not recorded).
pub fn not_final(now: Timestamp, namespace: &str, migration: &str, outcome: &str) -> String {
    format!(
        "[{}] warning: {}/{} left the watch but its diagnosis says {outcome}: not recorded",
        hms(now),
        printable(namespace),
        printable(migration)
    )
}

/// What the recorder did, said when it stops.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub recorded: usize,
    pub succeeded: usize,
    pub failed: usize,
    pub aborted: usize,
    /// Ended migrations found already in the journal.
    pub already: usize,
    /// Records still waiting for the journal when it stopped (lost).
    pub unwritten: usize,
}

pub fn summary(now: Timestamp, totals: &Totals, why: &str) -> String {
    let mut s = format!(
        "[{}] stopped ({why}): recorded {} migrations ({} succeeded, {} failed, {} aborted); {} were in the journal already",
        hms(now),
        totals.recorded,
        totals.succeeded,
        totals.failed,
        totals.aborted,
        totals.already
    );
    if totals.unwritten > 0 {
        s.push_str(&format!(
            "; {} could not be written (the next start records those whose migrations still exist)",
            totals.unwritten
        ));
    }
    s
}

/// The summary as a JSON line (`-o json`), kind RecordSummary.
pub fn summary_document(totals: &Totals, why: &str) -> Value {
    json!({
        "apiVersion": "vmctl/v1alpha1",
        "kind": "RecordSummary",
        "stopped": why,
        "recorded": totals.recorded,
        "succeeded": totals.succeeded,
        "failed": totals.failed,
        "aborted": totals.aborted,
        "alreadyInJournal": totals.already,
        "unwritten": totals.unwritten,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::journal::{Platform, RecordOutcome, RecordedBy};

    fn record() -> MigrationRecord {
        MigrationRecord {
            id: "kubevirt:u1".into(),
            cluster: "lab".into(),
            recorded_by: RecordedBy::Record,
            platform: Platform::KubeVirt,
            namespace: "prod".into(),
            vm: "db\u{1b}[31m".into(),
            migration: "mig-1".into(),
            source_node: Some("node-1".into()),
            target_node: Some("node-2".into()),
            source_pod: None,
            target_pod: None,
            evacuation_node: None,
            outcome: RecordOutcome::Failed,
            phase: "Failed".into(),
            mode: None,
            plane: "data-plane".into(),
            cause: "not-converging".into(),
            summary: "s".into(),
            created_at: None,
            started_at: None,
            ended_at: Some("2026-12-04T20:00:00Z".into()),
            ended_ms: 0,
            recorded_at: "2026-12-04T20:00:01Z".into(),
            duration_ms: Some(62_000),
            transfer_ms: None,
            data_processed_bytes: None,
            data_total_bytes: None,
            data_remaining_bytes: None,
            detail: Value::Null,
        }
    }

    #[test]
    fn a_line_per_record_escaped_and_json_per_line() {
        let text = recorded(OutputFormat::Table, &record()).unwrap();
        assert!(!text.contains('\u{1b}'), "{text:?}");
        assert!(
            text.starts_with("2026-12-04T20:00:00Z prod/db")
                && text.contains("mig-1 failed cause=not-converging node-1 → node-2 took 1m02s"),
            "{text}"
        );
        let wide = recorded(OutputFormat::Wide, &record()).unwrap();
        assert!(wide.contains("node-1 → node-2 took 1m02s mode=-"), "{wide}");
        // A target pod that never reached a node: said so, the source still named.
        let never = MigrationRecord {
            target_node: None,
            cause: "target-pod-unschedulable".into(),
            plane: "control-plane".into(),
            ..record()
        };
        let text = recorded(OutputFormat::Table, &never).unwrap();
        assert!(
            text.contains("cause=target-pod-unschedulable node-1 → not scheduled took"),
            "{text}"
        );
        let json = recorded(OutputFormat::Json, &record()).unwrap();
        assert_eq!(json.lines().count(), 1);
        let doc: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            (
                doc["kind"].as_str(),
                doc["outcome"].as_str(),
                doc["durationMs"].as_i64()
            ),
            (Some("RecordedMigration"), Some("failed"), Some(62_000))
        );
    }
}
