//! `vmctl abort DOMAIN --connect URI`: abort a libvirt domain's migration job and wait until
//! the source reports the guest running again. Refused in post-copy; "nothing to abort" is a
//! finding (exit 1).

use serde::Serialize;

use crate::cli::{AbortArgs, GlobalArgs};
use crate::error::{Error, Result, exit};
use crate::render::{OutputFormat, Style, Tone, structured, write_stdout};

/// How long to wait for the guest to run on the source again, unless `--timeout` says.
const DEFAULT_WAIT_SECS: u64 = 60;

/// The `-o json|yaml` document.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AbortReport {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub domain: String,
    pub uri: String,
    /// `aborted`, `nothing-to-abort`, `refused-postcopy`, `timed-out`, `would-abort`.
    pub result: &'static str,
    pub message: String,
}

pub async fn run(global: &GlobalArgs, args: &AbortArgs) -> Result<i32> {
    let uri = args
        .connect
        .clone()
        .ok_or_else(|| Error::usage("--connect URI is required for a libvirt abort"))?;
    let wait = args
        .timeout
        .unwrap_or(std::time::Duration::from_secs(DEFAULT_WAIT_SECS));
    let ctx = crate::context::LibvirtContext::new(global)?;
    let style = ctx.style;
    let report = if args.dry_run {
        AbortReport {
            api_version: crate::model::VMCTL_API_VERSION,
            kind: "LibvirtAbort",
            domain: args.target.clone(),
            uri: uri.clone(),
            result: "would-abort",
            message: format!(
                "dry run: would call virDomainAbortJob on domain {} at {uri} (refused in post-copy) and wait up to {} s for the guest to run on the source again",
                args.target,
                wait.as_secs()
            ),
        }
    } else {
        abort(args.target.clone(), uri, wait).await?
    };
    render(ctx.output, style, &report)?;
    Ok(match report.result {
        "aborted" | "would-abort" => exit::OK,
        "timed-out" => exit::TIMEOUT,
        _ => exit::FINDING,
    })
}

fn render(output: OutputFormat, style: Style, report: &AbortReport) -> Result<()> {
    if output.is_structured() {
        return crate::render::write_document(&structured(output, report)?);
    }
    let tone = match report.result {
        "aborted" => Tone::Good,
        "would-abort" => Tone::Plain,
        _ => Tone::Warn,
    };
    write_stdout(&format!("{}\n", style.paint(&report.message, tone)))
}

#[cfg(not(feature = "libvirt"))]
async fn abort(_domain: String, _uri: String, _wait: std::time::Duration) -> Result<AbortReport> {
    Err(crate::migration::no_libvirt())
}

#[cfg(feature = "libvirt")]
async fn abort(domain: String, uri: String, wait: std::time::Duration) -> Result<AbortReport> {
    tokio::task::spawn_blocking(move || blocking::abort(&domain, &uri, wait))
        .await
        .map_err(|e| Error::Internal(format!("the abort task failed: {e}")))?
}

#[cfg(feature = "libvirt")]
mod blocking {
    use std::time::Duration;

    use virt::sys;

    use super::AbortReport;
    use crate::error::Result;
    use crate::migration::classify::DomainStatus;
    use crate::migration::libvirt_domain::{
        self as libvirt, Seen, abort_job, connect, domain_status, job_running, job_stats, lookup,
        wait_until,
    };

    pub fn abort(domain: &str, uri: &str, wait: Duration) -> Result<AbortReport> {
        let conn = connect(uri)?;
        let dom = lookup(&conn, uri, domain)?;
        let host = conn.hostname().unwrap_or_else(|_| uri.to_string());
        let report = |result, message: String| AbortReport {
            api_version: crate::model::VMCTL_API_VERSION,
            kind: "LibvirtAbort",
            domain: domain.to_string(),
            uri: uri.to_string(),
            result,
            message,
        };
        let job = job_stats(&dom, 0).ok();
        let running = job
            .as_ref()
            .is_some_and(|j| j.r#type as u32 != sys::VIR_DOMAIN_JOB_NONE);
        if !running {
            return Ok(report(
                "nothing-to-abort",
                format!("nothing to abort: domain {domain} has no job running on {host}"),
            ));
        }
        if job
            .as_ref()
            .and_then(|j| j.operation)
            .is_some_and(|op| op as u32 == sys::VIR_DOMAIN_JOB_OPERATION_MIGRATION_IN)
        {
            return Ok(report(
                "nothing-to-abort",
                format!(
                    "{host} is the destination of {domain}'s migration: abort it on the source host"
                ),
            ));
        }
        if domain_status(&dom) == DomainStatus::PostCopy {
            return Ok(report(
                "refused-postcopy",
                format!(
                    "refusing to abort: the migration of {domain} is in post-copy -- the guest runs on the destination and part of its memory is still on {host}; an abort would lose the guest. Let it finish."
                ),
            ));
        }
        if let Err(e) = abort_job(&dom) {
            // The job may have ended between the look and the abort.
            if !job_running(&dom) {
                return Ok(report(
                    "nothing-to-abort",
                    format!(
                        "nothing to abort: the job of {domain} ended before the abort ({})",
                        e.message()
                    ),
                ));
            }
            return Err(libvirt::api_error(
                "abort the job of",
                &format!("domain {domain}"),
                &e,
            ));
        }
        let seen = wait_until(&dom, wait, |state, busy| {
            !busy && matches!(state, DomainStatus::Running | DomainStatus::ShutOff)
        });
        Ok(match seen {
            Seen {
                settled: true,
                state: DomainStatus::Running,
                ..
            } => report(
                "aborted",
                format!(
                    "aborted the migration of {domain}; the guest runs on the source ({host}) again"
                ),
            ),
            Seen { settled: true, .. } => report(
                "nothing-to-abort",
                format!(
                    "too late: the migration of {domain} completed before the abort took effect; the guest is no longer on {host}"
                ),
            ),
            Seen { state, busy, .. } => report(
                "timed-out",
                format!(
                    "asked libvirt to abort the migration of {domain}, but after {} s the source reports it {state:?}{}",
                    wait.as_secs(),
                    if busy {
                        " with the job still running"
                    } else {
                        ""
                    }
                ),
            ),
        })
    }
}
