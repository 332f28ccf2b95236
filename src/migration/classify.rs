//! Classifies how a libvirt migration job ended (pure), in the triage vocabulary:
//! `succeeded`, `aborted-by-request`, `not-converging`, `no-progress`,
//! `connection-failure`, `postcopy-failed`, else `libvirt-error`.
//!
//! Inputs are plain data: the completed-job statistics libvirt keeps
//! (`virDomainGetJobStats(..., VIR_DOMAIN_JOB_STATS_COMPLETED)`), the error the migrate
//! call returned, and the domain's state.

use serde::Serialize;

use super::sample::Outcome;
use crate::render::fmt::bytes;

/// libvirt's job type of a finished (or running) job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobEnd {
    /// No job statistics kept.
    #[default]
    None,
    /// A job is still running.
    Running,
    Completed,
    Failed,
    Cancelled,
}

/// The operation a job was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobOperation {
    MigrationOut,
    MigrationIn,
    #[default]
    Unknown,
    Other,
}

/// The completed-job statistics, as plain data.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletedJob {
    pub end: JobEnd,
    pub operation: JobOperation,
    pub error_message: Option<String>,
    pub elapsed_ms: Option<u64>,
    pub downtime_ms: Option<u64>,
    pub data_total: Option<u64>,
    pub data_processed: Option<u64>,
    pub data_remaining: Option<u64>,
    pub memory_total: Option<u64>,
    pub memory_remaining: Option<u64>,
    pub memory_bps: Option<u64>,
    pub dirty_rate_bps: Option<u64>,
    pub iteration: Option<u64>,
    pub postcopy_requests: Option<u64>,
    pub throttle_percent: Option<u32>,
}

/// Where the domain is, as far as the classifier cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DomainStatus {
    Running,
    Paused,
    /// Paused because a post-copy migration failed: its memory is split between hosts.
    PostcopyFailed,
    /// Paused in post-copy (the source side of a post-copy migration in flight).
    PostCopy,
    ShutOff,
    #[default]
    Unknown,
}

/// A cause id, the outcome, one sentence, the facts it rests on, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Classification {
    pub cause: &'static str,
    pub outcome: Option<Outcome>,
    pub summary: String,
    pub evidence: Vec<String>,
    pub advice: String,
}

/// The error of a migrate call (or of a job), by what its message says.
pub fn failure_cause(message: &str, in_postcopy: bool) -> &'static str {
    let m = message.to_ascii_lowercase();
    if in_postcopy || m.contains("post-copy") || m.contains("postcopy") {
        return "postcopy-failed";
    }
    if m.contains("canceled by client") || m.contains("cancelled by client") {
        return "aborted-by-request";
    }
    const CONNECTION: &[&str] = &[
        "lost connection",
        "end of file while reading",
        "connection reset",
        "connection refused",
        "connection closed",
        "broken pipe",
        "unable to connect",
        "failed to connect",
        "cannot recv data",
        "cannot write data",
        "socket is closed",
        "keepalive timeout",
        "no route to host",
        "no connection",
        "network is unreachable",
        "unable to read from monitor",
    ];
    if CONNECTION.iter().any(|p| m.contains(p)) {
        return "connection-failure";
    }
    "libvirt-error"
}

/// Classifies the last job of a domain from its completed-job statistics.
pub fn classify(job: &CompletedJob, state: DomainStatus) -> Classification {
    let mut evidence = Vec::new();
    evidence.push(format!("job: {}", end_text(job.end)));
    if let Some(ms) = job.elapsed_ms {
        evidence.push(format!("time elapsed: {:.1} s", ms as f64 / 1000.0));
    }
    if let Some(msg) = &job.error_message {
        evidence.push(format!("error: {msg}"));
    }
    if let (Some(total), Some(done)) = (job.memory_total, job.data_processed) {
        evidence.push(format!(
            "data processed: {} (guest memory {})",
            bytes(done),
            bytes(total)
        ));
    }
    if let Some(it) = job.iteration {
        evidence.push(format!("passes: {it}"));
    }
    if let (Some(bps), Some(dirty)) = (job.memory_bps, job.dirty_rate_bps) {
        evidence.push(format!(
            "last transfer rate {}/s, dirty rate {}/s",
            bytes(bps),
            bytes(dirty)
        ));
    }
    if let Some(r) = job.memory_remaining.filter(|r| *r > 0) {
        evidence.push(format!("memory remaining at the end: {}", bytes(r)));
    }
    if let Some(t) = job.throttle_percent.filter(|t| *t > 0) {
        evidence.push(format!("auto-converge throttle: {t}%"));
    }
    let postcopy = job.postcopy_requests.is_some_and(|r| r > 0)
        || matches!(state, DomainStatus::PostcopyFailed | DomainStatus::PostCopy);
    if let Some(r) = job.postcopy_requests.filter(|r| *r > 0) {
        evidence.push(format!("post-copy page requests: {r}"));
    }
    if let Some(d) = job.downtime_ms {
        evidence.push(format!("downtime: {d} ms"));
    }
    evidence.push(format!("domain now: {}", status_text(state)));

    let (cause, outcome, summary, advice) = match job.end {
        JobEnd::None => (
            "no-migration",
            None,
            "libvirt keeps no statistics of a finished job for this domain".to_string(),
            "Completed-job statistics live in the daemon that ran the job (the source) until \
             it restarts; ask that host, or run `vmctl migrate` and read its summary."
                .to_string(),
        ),
        JobEnd::Running => (
            "in-progress",
            None,
            "a job is still running".to_string(),
            "Follow it with `virsh domjobinfo`, or abort it with `vmctl abort --connect`."
                .to_string(),
        ),
        JobEnd::Completed => (
            "succeeded",
            Some(Outcome::Succeeded),
            if postcopy {
                "the migration completed (it finished in post-copy)".to_string()
            } else {
                "the migration completed".to_string()
            },
            "Nothing to do.".to_string(),
        ),
        JobEnd::Cancelled | JobEnd::Failed => {
            let message = job.error_message.clone().unwrap_or_default();
            let mut cause = if job.end == JobEnd::Cancelled {
                "aborted-by-request"
            } else {
                failure_cause(&message, postcopy)
            };
            if state == DomainStatus::PostcopyFailed {
                cause = "postcopy-failed";
            }
            // An abort that ended a pre-copy which could not converge: name the cause.
            let not_converging = job.iteration.is_some_and(|i| i >= 3)
                && matches!((job.memory_bps, job.dirty_rate_bps), (Some(b), Some(d)) if b > 0 && d * 10 >= b * 9);
            let no_progress = job.data_processed.is_some_and(|p| p == 0)
                && job.elapsed_ms.is_some_and(|ms| ms > 10_000);
            if cause == "aborted-by-request" && !postcopy {
                if not_converging {
                    cause = "not-converging";
                } else if no_progress {
                    cause = "no-progress";
                }
            }
            let outcome = if cause == "aborted-by-request" {
                Outcome::Aborted
            } else {
                Outcome::Failed
            };
            let (summary, advice) = match cause {
                "aborted-by-request" => (
                    "the migration was aborted on request".to_string(),
                    "Nothing is wrong with the hosts; migrate again when ready.".to_string(),
                ),
                "not-converging" => (
                    "the migration was aborted while pre-copy could not converge: the guest dirtied memory about as fast as it was sent".to_string(),
                    "Allow post-copy (--allow-postcopy) or auto-converge (--auto-converge), raise --bandwidth or --max-downtime, or migrate when the guest is quieter.".to_string(),
                ),
                "no-progress" => (
                    "the migration was aborted without having sent anything".to_string(),
                    "Check the migration network between the hosts (firewall, migration ports, address).".to_string(),
                ),
                "connection-failure" => (
                    format!("the connection between the hosts broke: {message}"),
                    "Check the destination daemon and the network between the hosts; the guest is still on the source if it was in pre-copy.".to_string(),
                ),
                "postcopy-failed" => (
                    format!("the migration failed in post-copy: {message}"),
                    "The guest's memory is split between the hosts: try `virsh migrate --postcopy-resume` once the link is back; otherwise the guest is lost and must be restarted.".to_string(),
                ),
                _ => (
                    format!("libvirt reported: {message}"),
                    "Read the source daemon's log for the job.".to_string(),
                ),
            };
            (cause, Some(outcome), summary, advice)
        }
    };
    Classification {
        cause,
        outcome,
        summary,
        evidence,
        advice,
    }
}

fn end_text(end: JobEnd) -> &'static str {
    match end {
        JobEnd::None => "none",
        JobEnd::Running => "running",
        JobEnd::Completed => "completed",
        JobEnd::Failed => "failed",
        JobEnd::Cancelled => "cancelled",
    }
}

fn status_text(state: DomainStatus) -> &'static str {
    match state {
        DomainStatus::Running => "running",
        DomainStatus::Paused => "paused",
        DomainStatus::PostcopyFailed => "paused (post-copy failed)",
        DomainStatus::PostCopy => "paused (post-copy in flight)",
        DomainStatus::ShutOff => "shut off (normal on the source after a migration)",
        DomainStatus::Unknown => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn failure_messages() {
        for (message, postcopy, want) in [
            (
                "operation aborted: job 'migration out' canceled by client",
                false,
                "aborted-by-request",
            ),
            (
                "operation failed: Lost connection to destination host",
                false,
                "connection-failure",
            ),
            (
                "internal error: End of file while reading data: Input/output error",
                false,
                "connection-failure",
            ),
            (
                "Unable to read from monitor: Connection reset by peer",
                false,
                "connection-failure",
            ),
            (
                "operation failed: job 'migration out' failed",
                true,
                "postcopy-failed",
            ),
            ("unsupported configuration: foo", false, "libvirt-error"),
        ] {
            assert_eq!(failure_cause(message, postcopy), want, "{message}");
        }
    }

    fn job(end: JobEnd) -> CompletedJob {
        CompletedJob {
            end,
            operation: JobOperation::MigrationOut,
            elapsed_ms: Some(15_600),
            memory_total: Some(256 * MIB),
            data_processed: Some(400 * MIB),
            memory_bps: Some(32 * MIB),
            dirty_rate_bps: Some(4 * MIB),
            iteration: Some(5),
            ..Default::default()
        }
    }

    #[test]
    fn completed_jobs() {
        let table = [
            (
                job(JobEnd::Completed),
                DomainStatus::ShutOff,
                "succeeded",
                Some(Outcome::Succeeded),
            ),
            (
                job(JobEnd::Cancelled),
                DomainStatus::Running,
                "aborted-by-request",
                Some(Outcome::Aborted),
            ),
            (
                CompletedJob {
                    dirty_rate_bps: Some(32 * MIB),
                    ..job(JobEnd::Cancelled)
                },
                DomainStatus::Running,
                "not-converging",
                Some(Outcome::Failed),
            ),
            (
                CompletedJob {
                    data_processed: Some(0),
                    iteration: Some(1),
                    elapsed_ms: Some(30_000),
                    ..job(JobEnd::Cancelled)
                },
                DomainStatus::Running,
                "no-progress",
                Some(Outcome::Failed),
            ),
            (
                CompletedJob {
                    error_message: Some(
                        "operation failed: Lost connection to destination host".into(),
                    ),
                    ..job(JobEnd::Failed)
                },
                DomainStatus::Running,
                "connection-failure",
                Some(Outcome::Failed),
            ),
            (
                CompletedJob {
                    error_message: Some(
                        "operation failed: migration out job: unexpectedly failed".into(),
                    ),
                    postcopy_requests: Some(120),
                    ..job(JobEnd::Failed)
                },
                DomainStatus::PostcopyFailed,
                "postcopy-failed",
                Some(Outcome::Failed),
            ),
            (
                CompletedJob::default(),
                DomainStatus::ShutOff,
                "no-migration",
                None,
            ),
        ];
        for (job, state, cause, outcome) in table {
            let c = classify(&job, state);
            assert_eq!((c.cause, c.outcome), (cause, outcome), "{job:?}");
            assert!(!c.evidence.is_empty());
        }
    }

    #[test]
    fn evidence_names_the_facts() {
        let c = classify(
            &CompletedJob {
                error_message: Some("operation failed: Lost connection to destination host".into()),
                ..job(JobEnd::Failed)
            },
            DomainStatus::Running,
        );
        assert!(c.summary.contains("Lost connection"), "{}", c.summary);
        assert!(
            c.evidence.contains(&"passes: 5".to_string()),
            "{:?}",
            c.evidence
        );
        assert!(c.evidence.contains(&"domain now: running".to_string()));
    }
}
