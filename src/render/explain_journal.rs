//! `explain`'s lines from the journal (issue 28): a record that carries no objects to diagnose
//! again (its own outcome, plane, cause and summary), and the line naming a VM's latest record.

use serde::Serialize;

use super::{Style, Tone};
use crate::model::journal::{MigrationRecord, RecordOutcome};
use crate::text::{duration, printable};
use crate::triage::report::JournalOrigin;

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
    out.push_str(&style.paint(&doc.journal.line(), Tone::Warn));
    out.push('\n');
    out.push_str(&printable(&name(r)));
    out.push_str("\n\n");
    let head = format!(
        "{} · {} · {}",
        r.outcome.as_str().to_uppercase(),
        r.plane,
        r.cause
    );
    out.push_str(&style.paint(&head, tone(r.outcome)));
    out.push('\n');
    out.push_str(&printable(&r.summary));
    out.push('\n');
    let mut route = format!(
        "{} → {}",
        r.source_node.as_deref().unwrap_or("?"),
        r.target_node.as_deref().unwrap_or("?")
    );
    route.push_str(&format!(" · phase {}", r.phase));
    if let Some(m) = &r.mode {
        route.push_str(&format!(" · mode {m}"));
    }
    if let Some(d) = r.duration_ms {
        route.push_str(&format!(" · took {}", duration(d / 1000)));
    }
    out.push_str(&style.paint(&route, Tone::Dim));
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
        "the journal has {n} {plural} of vm/{vm}; the last: {} {} ({}, {} → {}, ended {}) — `vmctl history vm/{vm}`",
        last.migration,
        last.outcome.as_str(),
        last.cause,
        last.source_node.as_deref().unwrap_or("?"),
        last.target_node.as_deref().unwrap_or("?"),
        last.ended_at.as_deref().unwrap_or(&last.recorded_at),
    ))
}
