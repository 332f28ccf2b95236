//! `explain`'s journal fallback (issue 28): a migration KubeVirt has deleted is explained
//! from the record the journal kept of it: the objects it was diagnosed from are decoded
//! (`triage::record::evidence_from_detail`) and diagnosed again as `explain` always does,
//! with a first line saying where it came from. A missing journal or `--journal off` changes
//! nothing (the original "not found"); a journal that cannot be read adds a hint to it.

use crate::cli::ExplainArgs;
use crate::context::Context;
use crate::error::{Error, JournalFault, Result, exit};
use crate::journal::{Access, Journal, JournalSpec};
use crate::model::journal::{HistoryQuery, MigrationRecord, RecordOutcome};
use crate::names::Target;
use crate::render::explain_journal::{RecordDocument, render_record};
use crate::render::{OutputFormat, structured, write_stdout};
use crate::triage::Evidence;
use crate::triage::record::evidence_from_detail;
use crate::triage::report::{ExplainReport, JournalOrigin, build_report};

/// The journal `--journal`/`$VMCTL_JOURNAL` names, opened for reading; None when there is
/// none to read (off, or the file does not exist); Err: why it cannot be read.
async fn open(flag: Option<&str>) -> Result<Option<Journal>> {
    let spec = JournalSpec::resolve(flag)?;
    if spec == JournalSpec::Off {
        return Ok(None);
    }
    match Journal::open(&spec, Access::Read).await {
        Ok(j) => Ok(Some(j)),
        Err(e) if e.journal_fault() == Some(JournalFault::Missing) => Ok(None),
        Err(e) => Err(e),
    }
}

/// What the fallback found.
pub enum Fallback {
    /// The recorded objects, diagnosed again: `explain` writes the report as always.
    Report(Box<ExplainReport>),
    /// A record without objects, written already; the exit code.
    Written(i32),
}

/// `explain NAME` found nothing in the cluster: the journal's newest record of it, explained;
/// else `not_found` as it was (with a hint when the journal could not be searched).
pub async fn fallback(
    ctx: &Context,
    args: &ExplainArgs,
    target: &Target,
    flag: Option<&str>,
    not_found: Error,
) -> Result<Fallback> {
    let journal = match open(flag).await {
        Ok(Some(j)) => j,
        Ok(None) => return Err(not_found),
        Err(e) => return Err(not_found.with_hint(format!("the journal was not searched: {e}"))),
    };
    // The kubeconfig context's namespace is only a default: a journal is searched in every
    // namespace unless `-n`/`-A` chose one (as `history` reads it whole, issue 33).
    let namespace = match ctx.scope_given {
        true => ctx.scope.namespace().map(str::to_string),
        false => None,
    };
    let mut query = HistoryQuery {
        namespace: namespace.clone(),
        ..HistoryQuery::default()
    };
    match target {
        Target::Migration(n) => query.migration = Some(n.clone()),
        Target::Vmi(n) => query.vm = Some(n.clone()),
    }
    let not_searched = |not_found: Error, e: Error| {
        not_found.with_hint(format!("the journal was not searched: {e}"))
    };
    let found = match journal.query(&query).await {
        Ok(found) => found,
        Err(e) => return Err(not_searched(not_found, e)),
    };
    let mut namespaces: Vec<&str> = found.iter().map(|r| r.namespace.as_str()).collect();
    namespaces.sort_unstable();
    namespaces.dedup();
    let where_ = match &namespace {
        Some(_) => "",
        None => ", in any namespace",
    };
    let ns = match namespaces.as_slice() {
        [] => {
            return Err(not_found.with_hint(format!(
                "the journal {} has no record of it either{where_}",
                journal.describe()
            )));
        }
        [one] => one.to_string(),
        several => {
            return Err(not_found.with_hint(format!(
                "the journal {} has records of it in namespaces {}: name one with -n NAMESPACE",
                journal.describe(),
                several.join(", ")
            )));
        }
    };
    if namespace.is_none()
        && let Some(default) = ctx.scope.namespace()
        && default != ns
    {
        crate::say!(
            "note: not in namespace {default} (the context's); the journal has it in namespace {ns}"
        );
    }
    query.namespace = Some(ns);
    query.limit = Some(1);
    query.with_detail = true;
    let record = match journal.query(&query).await {
        Ok(found) => found.into_iter().next(),
        Err(e) => return Err(not_searched(not_found, e)),
    };
    let Some(record) = record else {
        return Err(not_found.with_hint(format!(
            "the journal {} has no record of it either",
            journal.describe()
        )));
    };
    let origin = JournalOrigin {
        path: journal.describe(),
        // To the second, as vmctl prints every instant (the journal keeps the recorder's
        // clock whole).
        recorded_at: record
            .recorded_at
            .parse::<k8s_openapi::jiff::Timestamp>()
            .map(crate::text::timestamp)
            .unwrap_or_else(|_| record.recorded_at.clone()),
        recorded_by: record.recorded_by.as_str().to_string(),
    };
    match evidence_from_detail(&record.detail, args.loops.thresholds()) {
        Some(evidence) => {
            let source = format!("journal {}", origin.path);
            let mut report = build_report(&evidence, args.history, &source, Vec::new());
            report.journal = Some(origin);
            report.warnings = ctx.warnings();
            Ok(Fallback::Report(Box::new(report)))
        }
        None => record_only(ctx, &record, origin).map(Fallback::Written),
    }
}

/// A record without the objects (a libvirt run, or a detail this build cannot decode): its
/// own outcome, plane, cause and summary.
fn record_only(ctx: &Context, record: &MigrationRecord, origin: JournalOrigin) -> Result<i32> {
    let doc = RecordDocument::new(record, origin);
    let text = match ctx.output {
        OutputFormat::Json | OutputFormat::Yaml => structured(ctx.output, &doc)?,
        _ => render_record(&doc, ctx.style),
    };
    write_stdout(&text)?;
    Ok(match record.outcome {
        RecordOutcome::Succeeded => exit::OK,
        _ => exit::FINDING,
    })
}

/// `explain vm/NAME` with no migration left in the cluster: one next step naming the
/// journal's latest record of the VM. Nothing when there is no journal or no record; a
/// journal that cannot be read is one note.
pub async fn mention(flag: Option<&str>, evidence: &Evidence, report: &mut ExplainReport) {
    let journal = match open(flag).await {
        Ok(Some(j)) => j,
        Ok(None) => return,
        Err(e) => {
            report
                .notes
                .push(format!("the journal was not searched: {e}"));
            return;
        }
    };
    let query = HistoryQuery {
        namespace: Some(evidence.vmi_namespace.clone()),
        vm: Some(evidence.vmi_name.clone()),
        ..HistoryQuery::default()
    };
    match journal.query(&query).await {
        Ok(found) => {
            if let Some(line) =
                crate::render::explain_journal::latest_line(&found, &evidence.vmi_name)
            {
                report.diagnosis.next_steps.push(line);
            }
        }
        Err(e) => report
            .notes
            .push(format!("the journal was not searched: {e}")),
    }
}
