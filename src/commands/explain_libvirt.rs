//! `vmctl explain DOMAIN --connect URI`: the last migration job of a libvirt domain (its
//! completed-job statistics, kept by the daemon that ran it: the source), classified with
//! the causes of KubeVirt's `explain` (succeeded, aborted-by-request, not-converging,
//! no-progress, connection-failure, postcopy-failed, libvirt-error) into the same
//! `triage::Diagnosis`.

use serde::Serialize;

use crate::cli::{ExplainArgs, GlobalArgs};
use crate::error::{Error, Result, exit};
use crate::migration::classify::{CompletedJob, DomainStatus};
use crate::migration::series::ProgressSeries;
use crate::render::{OutputFormat, Style, Tone, explain, structured, write_stdout};
use crate::triage::{Diagnosis, Outcome};

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
    /// The same document as KubeVirt's `explain` (`cause`, `plane`, `rule`, `evidence`…);
    /// `vmi` is the domain: its name, its host as `node`, its state as `phase`.
    #[serde(flatten)]
    pub diagnosis: Diagnosis,
    pub job: CompletedJob,
    /// From vmctl's record: the migration's progress over time (sparklines in the text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress_series: Option<ProgressSeries>,
}

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
        OutputFormat::Html => crate::render::html::explain::libvirt(
            &report.diagnosis,
            &report.job,
            [&report.domain, &report.host, &report.uri],
            &jiff::Timestamp::now().to_string(),
            &[],
        ),
    };
    write_stdout(&text)?;
    Ok(if report.diagnosis.outcome.is_finding() {
        exit::FINDING
    } else {
        exit::OK
    })
}

/// The diagnosis as text. The domain's name, the host's name and libvirt's messages are
/// foreign text: escaped.
pub fn render(r: &LibvirtDiagnosis, style: Style) -> String {
    use crate::text::printable as p;
    // A job that is running, or none at all, is neither good nor bad and shows no outcome.
    let (tone, outcome) = match r.diagnosis.outcome {
        Outcome::Succeeded => (Tone::Good, Outcome::Succeeded.as_str()),
        Outcome::InProgress | Outcome::NoMigration => (Tone::Plain, ""),
        o => (Tone::Bad, o.as_str()),
    };
    let mut out = format!(
        "domain {} on {} ({}): last migration job\n",
        p(&r.domain),
        p(&r.host),
        p(&r.uri)
    );
    out.push_str(&format!(
        "  cause:     {} {}\n",
        style.paint(r.diagnosis.cause.id, tone),
        if outcome.is_empty() {
            String::new()
        } else {
            format!("({outcome})")
        }
    ));
    out.push_str(&format!("  summary:   {}\n", p(&r.diagnosis.summary)));
    out.push_str("  evidence:\n");
    for fact in &r.diagnosis.evidence {
        out.push_str(&format!("    - {}\n", p(&fact.value)));
    }
    out.push_str(&format!("  next:      {}\n", p(r.diagnosis.rule.advice)));
    out.push_str(&explain::progress_section(r.progress_series.as_ref()));
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
        use crate::migration::classify::{JobEnd, classify, classify_record, field};
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migration::classify::{JobEnd, classify};

    fn report(job: CompletedJob, state: DomainStatus) -> LibvirtDiagnosis {
        LibvirtDiagnosis {
            api_version: crate::model::VMCTL_API_VERSION,
            kind: "LibvirtJobDiagnosis",
            domain: "web-01".into(),
            uri: "qemu+ssh://src/system".into(),
            host: "src".into(),
            domain_state: state,
            diagnosis: classify(&job, state).diagnosis("web-01", "src", state),
            job,
            progress_series: None,
        }
    }

    /// The text is what it was when the classifier had its own result type.
    #[test]
    fn the_text_is_unchanged_by_the_shared_diagnosis() {
        let job = CompletedJob {
            end: JobEnd::Failed,
            error_message: Some("operation failed: Lost connection to destination host".into()),
            elapsed_ms: Some(15_600),
            memory_total: Some(256 << 20),
            data_processed: Some(400 << 20),
            memory_bps: Some(32 << 20),
            dirty_rate_bps: Some(4 << 20),
            iteration: Some(5),
            ..Default::default()
        };
        let text = render(&report(job, DomainStatus::Running), Style { color: false });
        assert_eq!(
            text,
            "domain web-01 on src (qemu+ssh://src/system): last migration job\n\
             \x20 cause:     connection-failure (failed)\n\
             \x20 summary:   the connection between the hosts broke: operation failed: Lost connection to destination host\n\
             \x20 evidence:\n\
             \x20   - job: failed\n\
             \x20   - time elapsed: 15.6 s\n\
             \x20   - error: operation failed: Lost connection to destination host\n\
             \x20   - data processed: 400.0 MiB (guest memory 256.0 MiB)\n\
             \x20   - passes: 5\n\
             \x20   - last transfer rate 32.0 MiB/s, dirty rate 4.0 MiB/s\n\
             \x20   - domain now: running\n\
             \x20 next:      Check the destination daemon and the network between the hosts; the guest is still on the source if it was in pre-copy.\n"
        );
        // Nothing on record: no outcome in brackets (the line keeps its trailing space).
        let text = render(
            &report(CompletedJob::default(), DomainStatus::ShutOff),
            Style { color: false },
        );
        assert!(text.contains("\n  cause:     no-migration \n"), "{text}");
    }

    #[test]
    fn the_json_document_keeps_cause_and_gains_the_diagnosis_fields() {
        let r = report(CompletedJob::default(), DomainStatus::ShutOff);
        let json: serde_json::Value = serde_json::to_value(&r).unwrap_or_default();
        assert_eq!(json["cause"], "no-migration");
        assert_eq!(json["outcome"], "no-migration");
        assert_eq!(json["plane"], "none");
        assert_eq!(json["rule"]["id"], "no-migration");
        assert_eq!(json["vmi"]["name"], "web-01");
        assert_eq!(json["domainState"], "shut-off");
        assert_eq!(json["evidence"][0]["field"], "jobStats.type");
        assert_eq!(json["evidence"][0]["value"], "job: none");
    }

    #[test]
    fn foreign_text_reaches_the_terminal_escaped() {
        let job = CompletedJob {
            end: JobEnd::Failed,
            error_message: Some("operation failed: \u{1b}]0;owned\u{7}".into()),
            ..Default::default()
        };
        let mut r = report(job, DomainStatus::Running);
        r.domain = "web\u{1b}[2J".into();
        r.host = "src\u{9b}31m".into();
        let text = render(&r, Style { color: false });
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(
            text.contains("domain web\\u{1b}[2J on src\\u{9b}31m"),
            "{text}"
        );
        assert!(text.contains("\\u{1b}]0;owned\\u{7}"), "{text}");
    }
}
