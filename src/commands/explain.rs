//! `vmctl explain NAME`: which plane failed a migration, why, the evidence, and what to do.
//!
//! gather (`evidence`: find the migration or VMI, read everything about it at once) →
//! decide (`triage::diagnose` into `triage::report`, pure) → render (`render::explain`).

use super::explain_journal::{self, Fallback};
use crate::cli::ExplainArgs;
use crate::context::{AnySource, Context};
use crate::error::{Result, exit};
use crate::evidence::{gather, resolve};
use crate::migration::dirty_rate::{self, Handler, MetricsFrom};
use crate::migration::kubevirt::MetricsUnavailable;
use crate::names::Target;
use crate::render::explain::render_table;
use crate::render::{OutputFormat, structured, write_stdout};
use crate::triage::Plane;
use crate::triage::report::ExplainReport;
use crate::triage::report::build_report;

/// `explain`'s target: a bare name is a migration.
pub fn parse_target(text: &str) -> Result<Target> {
    crate::names::parse_target(text, crate::names::Takes::MigrationFirst, "explain")
}

/// `ctx.journal`: `--journal` as given (the fallback when the migration is gone).
pub async fn run(ctx: &Context, args: &ExplainArgs) -> Result<i32> {
    let journal = ctx.journal.as_deref();
    let target = parse_target(&args.target)?;
    let resolved = match resolve(ctx, &target).await {
        Ok(r) => r,
        Err(e) if e.exit_code() == exit::NOT_FOUND => {
            return match explain_journal::fallback(ctx, args, &target, journal, e).await? {
                Fallback::Report(report) => emit(ctx, &report, " (when recorded)"),
                Fallback::Written(code) => Ok(code),
            };
        }
        Err(e) => return Err(e),
    };
    if let Some(note) = &resolved.note {
        crate::say!("note: {note}");
    }
    let mut notes = Vec::new();
    let mut evidence = gather(ctx, resolved, &mut notes).await?;
    evidence.loops = args.loops.thresholds();
    for w in crate::model::unknown::warnings(
        &evidence.vmi,
        evidence.migrations.iter().chain(
            evidence
                .migration
                .iter()
                .filter(|m| !evidence.migrations.iter().any(|o| o.name() == m.name())),
        ),
        &evidence.kubevirt,
    ) {
        ctx.warn(w);
    }
    let mut report = build_report(&evidence, args.history, &ctx.source_description(), notes);
    if let Some(from) = MetricsFrom::from_flags(args.metrics, args.prometheus.as_deref()) {
        dirty_rate_evidence(ctx, &from, &evidence, &mut report).await;
    }
    if let Some(url) = &args.prometheus {
        progress_series(url, &evidence, &mut report).await;
    }
    if report.diagnosis.migration.is_none() {
        explain_journal::mention(journal, &evidence, &mut report).await;
    }
    report.warnings = ctx.warnings();
    emit(ctx, &report, ctx.clock.note())
}

/// Writes the report in the output format; the exit code is the outcome's.
pub fn emit(ctx: &Context, report: &ExplainReport, clock: &str) -> Result<i32> {
    let text = match ctx.output {
        OutputFormat::Json | OutputFormat::Yaml => structured(ctx.output, report)?,
        OutputFormat::Table | OutputFormat::Wide => {
            render_table(report, ctx.style, ctx.output == OutputFormat::Wide, clock)
        }
        OutputFormat::Name => return Err(OutputFormat::name_refused()),
        OutputFormat::Html => {
            let charts =
                crate::render::html::explain::progress_charts(report.progress_series.as_ref());
            crate::render::html::explain::page(report, clock, &charts)
        }
    };
    write_stdout(&text)?;
    Ok(if report.diagnosis.outcome.is_finding() {
        exit::FINDING
    } else {
        exit::OK
    })
}

/// `--metrics|--prometheus`: for a data-plane failure, the guest's dirty rate against the
/// transfer rate as evidence (one virt-handler pod list and one page, or one query). What
/// cannot be read is one line among the assumptions (and the notes); nothing is read for
/// another plane.
async fn dirty_rate_evidence(
    ctx: &Context,
    from: &MetricsFrom,
    evidence: &crate::triage::Evidence,
    report: &mut ExplainReport,
) {
    let d = &mut report.diagnosis;
    let mut said = |why: String| {
        let line = format!("dirty rate not read: {why}");
        d.assumptions.push(line.clone());
        report.notes.push(line);
    };
    if d.plane != Plane::DataPlane {
        said(format!(
            "the diagnosis is {}, not a data-plane failure",
            d.plane.as_str()
        ));
        return;
    }
    let Some(node) = evidence
        .vmi
        .as_ref()
        .and_then(|v| v.status.node_name.clone())
    else {
        said("the VMI no longer runs on a node".into());
        return;
    };
    let live = match &ctx.source {
        AnySource::Live(l) => Some(l),
        AnySource::Snapshot(_) => None,
    };
    match dirty_rate::for_vmi(
        live,
        from,
        evidence.kubevirt.as_ref(),
        Handler::Node(&node),
        &evidence.vmi_namespace,
        &evidence.vmi_name,
    )
    .await
    {
        Ok(r) if !r.metric_present && r.migration.is_empty() => {
            said(crate::triage::dirty_rate::absent(
                &r.from,
                evidence.kubevirt.as_ref(),
            ));
        }
        Ok(r) => {
            let facts = crate::triage::dirty_rate::facts(
                evidence,
                &crate::triage::dirty_rate::Reading {
                    from: r.from,
                    guest_bps: r.guest_bps,
                    migration_dirty_bps: r.migration.dirty_rate_bytes_per_second,
                    migration_transfer_bps: r.migration.transfer_rate_bytes_per_second,
                },
            );
            d.evidence.extend(facts);
        }
        Err(MetricsUnavailable(why)) => said(why),
    }
}

/// `--prometheus`: the migration's remaining memory, dirty and transfer rates over its
/// window (start to end, or to now while it runs), one range query; drawn as sparklines.
async fn progress_series(
    url: &str,
    evidence: &crate::triage::Evidence,
    report: &mut ExplainReport,
) {
    let Some(m) = &report.diagnosis.migration else {
        return;
    };
    let second = |t: &Option<String>| {
        t.as_deref()
            .and_then(|t| t.parse::<k8s_openapi::jiff::Timestamp>().ok())
            .map(|t| t.as_second())
    };
    let read = match second(&m.start_timestamp) {
        None => Err(MetricsUnavailable("the migration has no start time".into())),
        Some(start) => {
            let end = second(&m.end_timestamp).unwrap_or(evidence.now.as_second());
            let (ns, name) = (&evidence.vmi_namespace, &evidence.vmi_name);
            dirty_rate::progress_series(url, ns, name, start, end).await
        }
    };
    match read {
        Ok(series) => report.progress_series = Some(series),
        Err(MetricsUnavailable(why)) => {
            let line = format!("progress over time not read: {why}");
            report.diagnosis.assumptions.push(line.clone());
            report.notes.push(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse() {
        assert_eq!(parse_target("m1").unwrap(), Target::Migration("m1".into()));
        assert_eq!(
            parse_target("migration/m1").unwrap(),
            Target::Migration("m1".into())
        );
        assert_eq!(
            parse_target("vmim/m1").unwrap(),
            Target::Migration("m1".into())
        );
        assert_eq!(parse_target("vm/a").unwrap(), Target::Vmi("a".into()));
        assert_eq!(parse_target("vmi/a").unwrap(), Target::Vmi("a".into()));
        assert!(parse_target("pod/a").is_err());
        assert!(parse_target("vm/").is_err());
        assert!(parse_target("a/b/c").is_err());
    }
}
