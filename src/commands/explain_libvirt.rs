//! `vmctl explain DOMAIN --connect URI`: the last migration job of a libvirt domain (its
//! completed-job statistics, kept by the daemon that ran it: the source), classified with
//! the causes of KubeVirt's `explain` (succeeded, aborted-by-request, not-converging,
//! no-progress, connection-failure, postcopy-failed, libvirt-error) into the same
//! `triage::Diagnosis`.

use crate::cli::{ExplainArgs, GlobalArgs};
use crate::error::{Error, Result, exit};
use crate::render::explain_libvirt::render;
use crate::render::html::explain::progress_charts;
use crate::render::{OutputFormat, structured, write_stdout};
pub use crate::triage::report::LibvirtDiagnosis;

pub async fn run_libvirt(global: &GlobalArgs, args: &ExplainArgs) -> Result<i32> {
    let uri = args
        .connect
        .clone()
        .ok_or_else(|| Error::usage("--connect URI is required to explain a libvirt domain"))?;
    let ctx = crate::context::LibvirtContext::new(global)?;
    let report = diagnose(args.target.clone(), uri).await?;
    let text = match ctx.output {
        OutputFormat::Json | OutputFormat::Yaml => structured(ctx.output, &report)?,
        OutputFormat::Table | OutputFormat::Wide => render(&report, ctx.style),
        OutputFormat::Name => return Err(OutputFormat::name_refused()),
        OutputFormat::Html => crate::render::html::explain::libvirt(
            &report.diagnosis,
            &report.job,
            [&report.domain, &report.host, &report.uri],
            &jiff::Timestamp::now().to_string(),
            &progress_charts(report.progress_series.as_ref()),
        ),
    };
    write_stdout(&text)?;
    Ok(if report.diagnosis.outcome.is_finding() {
        exit::FINDING
    } else {
        exit::OK
    })
}

/// Without libvirt support: the "rebuild with --features libvirt" error.
#[cfg(not(feature = "libvirt"))]
pub async fn diagnose(_domain: String, _uri: String) -> Result<LibvirtDiagnosis> {
    Err(crate::migration::no_libvirt())
}

/// Reads the domain's last job and classifies it (the library entry point of `run_libvirt`).
#[cfg(feature = "libvirt")]
pub async fn diagnose(domain: String, uri: String) -> Result<LibvirtDiagnosis> {
    tokio::task::spawn_blocking(move || {
        use crate::migration::classify::{CompletedJob, JobEnd, classify, classify_record, field};
        use crate::migration::libvirt_domain::{
            connect, domain_status, job_stats, lookup, read_record, to_completed,
        };
        use virt::sys;

        let conn = connect(&uri)?;
        let dom = lookup(&conn, &uri, &domain)?;
        let host = conn.hostname().unwrap_or_else(|_| uri.clone());
        let state = domain_status(&dom);
        let running = job_stats(&dom, 0).is_ok_and(|j| j.r#type as u32 != sys::VIR_DOMAIN_JOB_NONE);
        let job = if running {
            CompletedJob {
                end: JobEnd::Running,
                ..Default::default()
            }
        } else {
            job_stats(
                &dom,
                sys::VIR_DOMAIN_JOB_STATS_COMPLETED | sys::VIR_DOMAIN_JOB_STATS_KEEP_COMPLETED,
            )
            .map(|s| to_completed(&s))
            .unwrap_or_default()
        };
        // libvirt keeps statistics of succeeded jobs only; vmctl's record covers the rest.
        let record = read_record(&dom);
        let classification = match (&record, job.end) {
            (Some(r), JobEnd::None) => classify_record(r, state),
            (Some(r), _) => {
                let mut c = classify(&job, state);
                c.evidence.push((
                    field::RECORD,
                    format!(
                        "vmctl's record of the last migration it drove ({}): {} ({})",
                        r.at, r.cause, r.outcome
                    ),
                ));
                c
            }
            (None, _) => classify(&job, state),
        };
        let diagnosis = classification.diagnosis(&domain, &host, state);
        Ok(LibvirtDiagnosis {
            api_version: crate::model::VMCTL_API_VERSION,
            kind: "LibvirtJobDiagnosis",
            domain,
            uri,
            host,
            domain_state: state,
            diagnosis,
            job,
            progress_series: record.and_then(crate::migration::classify::progress_series),
        })
    })
    .await
    .map_err(|e| Error::Internal(format!("the explain task failed: {e}")))?
}
