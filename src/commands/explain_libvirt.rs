//! `vmctl explain DOMAIN --connect URI`: the last migration job of a libvirt domain (its
//! completed-job statistics, kept by the daemon that ran it: the source), classified in the
//! triage vocabulary (succeeded, aborted-by-request, not-converging, no-progress,
//! connection-failure, postcopy-failed).

use serde::Serialize;

use crate::cli::{ExplainArgs, GlobalArgs};
use crate::error::{Error, Result, exit};
use crate::migration::Outcome;
use crate::migration::classify::{Classification, CompletedJob, DomainStatus};
use crate::render::{OutputFormat, Style, Tone, structured, write_stdout};

/// The `-o json|yaml` document.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LibvirtDiagnosis {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub domain: String,
    pub uri: String,
    pub host: String,
    pub domain_state: DomainStatus,
    #[serde(flatten)]
    pub diagnosis: Classification,
    pub job: CompletedJob,
}

pub async fn run_libvirt(global: &GlobalArgs, args: &ExplainArgs) -> Result<i32> {
    let uri = args
        .connect
        .clone()
        .ok_or_else(|| Error::usage("--connect URI is required to explain a libvirt domain"))?;
    let report = diagnose(args.target.clone(), uri).await?;
    let style = Style::detect(global.no_color);
    let text = match global.output {
        OutputFormat::Json | OutputFormat::Yaml => structured(global.output, &report)?,
        OutputFormat::Table | OutputFormat::Wide => render(&report, style),
    };
    write_stdout(&text)?;
    Ok(match report.diagnosis.outcome {
        Some(Outcome::Failed) | Some(Outcome::Aborted) => exit::FINDING,
        _ => exit::OK,
    })
}

/// The diagnosis as text.
pub fn render(r: &LibvirtDiagnosis, style: Style) -> String {
    let tone = match r.diagnosis.outcome {
        Some(Outcome::Succeeded) => Tone::Good,
        Some(_) => Tone::Bad,
        None => Tone::Plain,
    };
    let outcome = r.diagnosis.outcome.map_or("", |o| o.as_str());
    let mut out = format!(
        "domain {} on {} ({}): last migration job\n",
        r.domain, r.host, r.uri
    );
    out.push_str(&format!(
        "  cause:     {} {}\n",
        style.paint(r.diagnosis.cause, tone),
        if outcome.is_empty() {
            String::new()
        } else {
            format!("({outcome})")
        }
    ));
    out.push_str(&format!("  summary:   {}\n", r.diagnosis.summary));
    out.push_str("  evidence:\n");
    for e in &r.diagnosis.evidence {
        out.push_str(&format!("    - {e}\n"));
    }
    out.push_str(&format!("  next:      {}\n", r.diagnosis.advice));
    out
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
        use crate::migration::classify::{JobEnd, classify, classify_record};
        use crate::migration::libvirt::{
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
        let diagnosis = match (&record, job.end) {
            (Some(r), JobEnd::None) => classify_record(r, state),
            (Some(r), _) => {
                let mut d = classify(&job, state);
                d.evidence.push(format!(
                    "vmctl's record of the last migration it drove ({}): {} ({})",
                    r.at, r.cause, r.outcome
                ));
                d
            }
            (None, _) => classify(&job, state),
        };
        Ok(LibvirtDiagnosis {
            api_version: "vmctl/v1alpha1",
            kind: "LibvirtJobDiagnosis",
            domain,
            uri,
            host,
            domain_state: state,
            diagnosis,
            job,
        })
    })
    .await
    .map_err(|e| Error::Internal(format!("the explain task failed: {e}")))?
}
