//! `explain`'s lines from the journal (issue 28): a record that carries no objects to diagnose
//! again (its own outcome, plane, cause and summary), and the line naming a VM's latest record.

use serde::Serialize;

use super::{Style, Tone};
use crate::model::journal::{MigrationRecord, RecordOutcome};
use crate::text::{duration, printable};
use crate::triage::report::JournalOrigin;
use crate::triage::route_words;

/// `explain -o json|yaml` of a record without objects: kind Diagnosis, the record's own
/// verdict, the record and where it came from.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordDocument<'a> {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub outcome: &'static str,
    pub plane: &'a str,
    pub cause: &'a str,
    pub summary: &'a str,
    pub record: &'a MigrationRecord,
    pub journal: JournalOrigin,
}

impl<'a> RecordDocument<'a> {
    pub fn new(record: &'a MigrationRecord, journal: JournalOrigin) -> Self {
        RecordDocument {
            api_version: crate::model::VMCTL_API_VERSION,
            kind: "Diagnosis",
            outcome: record.outcome.as_str(),
            plane: &record.plane,
            cause: &record.cause,
            summary: &record.summary,
            record,
            journal,
        }
    }
}

fn tone(o: RecordOutcome) -> Tone {
    match o {
        RecordOutcome::Succeeded => Tone::Good,
        RecordOutcome::Failed => Tone::Bad,
        RecordOutcome::Aborted | RecordOutcome::Vanished => Tone::Warn,
    }
}

fn name(r: &MigrationRecord) -> String {
    let migration = if r.migration.is_empty() {
        String::new()
    } else {
        format!("Migration {}/{} · ", r.namespace, r.migration)
    };
    if r.namespace.is_empty() {
        format!("{migration}{} {}", r.platform.as_str(), r.vm)
    } else {
        format!("{migration}VMI {}/{}", r.namespace, r.vm)
    }
}

/// The text of a record without objects.
pub fn render_record(doc: &RecordDocument, style: Style) -> String {
    let r = doc.record;
    let mut out = String::new();
    // Every field comes from the journal file: escaped like text from a cluster.
    out.push_str(&style.paint(&printable(&doc.journal.line()), Tone::Warn));
    out.push('\n');
    out.push_str(&printable(&name(r)));
    out.push_str("\n\n");
    let head = super::explain_verdict::finding_words(
        &super::explain_verdict::outcome_word(r.outcome.as_str()),
        &r.plane,
        &r.cause,
        "",
    );
    out.push_str(&style.paint(&printable(&head), tone(r.outcome)));
    out.push('\n');
    out.push_str(&printable(&r.summary));
    out.push('\n');
    let mut route = route_words(
        r.source_node.as_deref(),
        r.target_node.as_deref(),
        &r.phase,
        &r.cause,
        r.started_at.is_some(),
    );
    route.push_str(&format!(" · phase {}", r.phase));
    if let Some(m) = &r.mode {
        route.push_str(&format!(" · mode {m}"));
    }
    if let Some(d) = r.duration_ms {
        route.push_str(&format!(" · took {}", duration(d / 1000)));
    }
    out.push_str(&style.paint(&printable(&route), Tone::Dim));
    out.push('\n');
    out.push_str(
        "(the journal kept no objects for this migration: the verdict is the one recorded)\n",
    );
    out
}

/// `the journal has N migrations of vm/NAME; the last: … — vmctl history vm/NAME` for the
/// records of one VM, newest first (None when there are none). The caller's renderer escapes.
pub fn latest_line(records: &[MigrationRecord], vm: &str) -> Option<String> {
    let last = records.first()?;
    let n = records.len();
    let plural = if n == 1 { "migration" } else { "migrations" };
    Some(format!(
        "the journal has {n} {plural} of vm/{vm}; the last: {} {} ({}, {}, {}) — `vmctl history vm/{vm}`",
        last.migration,
        last.outcome.as_str(),
        last.cause,
        route_words(
            last.source_node.as_deref(),
            last.target_node.as_deref(),
            &last.phase,
            &last.cause,
            last.started_at.is_some(),
        ),
        last.ended_at
            .as_deref()
            .map_or_else(|| "end unknown".to_string(), |t| format!("ended {t}")),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::journal::{Platform, RecordedBy};

    fn rec(migration: &str, outcome: RecordOutcome) -> MigrationRecord {
        MigrationRecord {
            id: format!("kubevirt:{migration}"),
            cluster: "c".into(),
            recorded_by: RecordedBy::Migrate,
            platform: Platform::KubeVirt,
            namespace: "ns".into(),
            vm: "db\u{1b}[31m".into(),
            migration: migration.into(),
            source_node: Some("node-1".into()),
            target_node: None,
            source_pod: None,
            target_pod: None,
            evacuation_node: None,
            outcome,
            phase: "Failed".into(),
            mode: Some("post-copy".into()),
            plane: "data-plane".into(),
            cause: "postcopy-failed".into(),
            summary: "lost\nthe guest".into(),
            created_at: None,
            started_at: None,
            ended_at: Some("2026-12-01T00:00:00Z".into()),
            ended_ms: 0,
            recorded_at: "2026-12-01T00:00:02Z".into(),
            duration_ms: Some(125_000),
            transfer_ms: None,
            data_processed_bytes: None,
            data_total_bytes: None,
            data_remaining_bytes: None,
            detail: serde_json::Value::Null,
        }
    }

    fn origin() -> JournalOrigin {
        JournalOrigin {
            path: "/j".into(),
            recorded_at: "2026-12-01T00:00:02Z".into(),
            recorded_by: "migrate".into(),
        }
    }

    #[test]
    fn a_record_alone_shows_its_verdict_escaped() {
        let r = rec("m1", RecordOutcome::Failed);
        let text = render_record(&RecordDocument::new(&r, origin()), Style { color: false });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "from the journal /j, recorded at 2026-12-01T00:00:02Z by migrate (the migration no longer exists in the cluster)"
        );
        assert_eq!(lines[1], "Migration ns/m1 · VMI ns/db\\u{1b}[31m");
        assert_eq!(lines[3], "FAILED · data-plane · postcopy-failed");
        assert_eq!(lines[4], "lost\\nthe guest");
        assert_eq!(
            lines[5],
            "node-1 → ? · phase Failed · mode post-copy · took 2m05s"
        );
        assert!(!text.contains('\u{1b}'));

        // Every column comes from the file: a hostile cause, node, phase or origin is escaped.
        let mut bad = rec("m1", RecordOutcome::Failed);
        bad.cause = "x\u{1b}]0;pwned\u{7}".into();
        bad.source_node = Some("node\u{1b}[2J".into());
        bad.phase = "Failed\r".into();
        let mut o = origin();
        o.recorded_by = "record\u{1b}[31m".into();
        let text = render_record(&RecordDocument::new(&bad, o), Style { color: false });
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\r'),
            "{text:?}"
        );
        assert!(text.contains("x\\u{1b}]0;pwned"), "{text}");
    }

    /// Issue 33: a record's verdict says each fact once ("SUCCEEDED · none · succeeded"
    /// before), and a target pod never scheduled reads "not scheduled", not "?".
    #[test]
    fn a_record_verdict_says_each_fact_once() {
        let verdict = |outcome, plane: &str, cause: &str, phase: &str| {
            let r = MigrationRecord {
                plane: plane.into(),
                cause: cause.into(),
                phase: phase.into(),
                mode: None,
                ..rec("m1", outcome)
            };
            let text = render_record(&RecordDocument::new(&r, origin()), Style { color: false });
            let lines: Vec<String> = text.lines().map(String::from).collect();
            (lines[3].clone(), lines[5].clone())
        };
        assert_eq!(
            verdict(RecordOutcome::Succeeded, "none", "succeeded", "Succeeded").0,
            "SUCCEEDED"
        );
        assert_eq!(
            verdict(
                RecordOutcome::Aborted,
                "none",
                "aborted-by-request",
                "Failed"
            )
            .0,
            "ABORTED · aborted-by-request"
        );
        assert_eq!(
            verdict(RecordOutcome::Failed, "unknown", "unknown", "Failed").0,
            "FAILED · cause unknown"
        );
        assert_eq!(
            verdict(
                RecordOutcome::Failed,
                "control-plane",
                "target-pod-unschedulable",
                "Failed"
            ),
            (
                "FAILED · control-plane · target-pod-unschedulable".to_string(),
                "node-1 → not scheduled · phase Failed · took 2m05s".to_string()
            )
        );
    }

    #[test]
    fn the_latest_line_counts_and_names_the_newest() {
        assert_eq!(latest_line(&[], "db"), None);
        let rs = [
            rec("m2", RecordOutcome::Failed),
            rec("m1", RecordOutcome::Succeeded),
        ];
        assert_eq!(
            latest_line(&rs, "db").as_deref(),
            Some(
                "the journal has 2 migrations of vm/db; the last: m2 failed (postcopy-failed, node-1 → ?, ended 2026-12-01T00:00:00Z) — `vmctl history vm/db`"
            )
        );
        assert!(
            latest_line(&rs[..1], "db")
                .unwrap()
                .contains("has 1 migration of")
        );
    }
}
