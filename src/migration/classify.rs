//! Classifies how a libvirt migration job ended (pure), in the triage vocabulary:
//! `succeeded`, `aborted-by-request`, `not-converging`, `no-progress`,
//! `connection-failure`, `postcopy-failed`, else `libvirt-error`.
//!
//! Inputs are plain data: the completed-job statistics libvirt keeps
//! (`virDomainGetJobStats(..., VIR_DOMAIN_JOB_STATS_COMPLETED)`), the error the migrate
//! call returned, and the domain's state.

use serde::Serialize;

use super::sample::Outcome;
use crate::text::bytes;

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
            "no record of a migration of this domain here".to_string(),
            "libvirt keeps completed-job statistics only for jobs that succeeded, in the \
             daemon that ran them (the source), until it restarts; vmctl records the migrations \
             it drives in the domain's metadata. Ask the other host, or migrate with `vmctl \
             migrate` next time."
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

/// vmctl's own record of a migration it drove, kept in the domain's metadata: libvirt keeps
/// completed-job statistics only for jobs that succeeded, so a failed or aborted migration
/// would otherwise leave no trace for `explain --connect`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// When the migration ended (RFC 3339).
    pub at: String,
    pub outcome: String,
    pub cause: String,
    pub message: String,
    pub destination: String,
    pub total_ms: u64,
    pub data_processed: u64,
    pub iterations: Option<u64>,
    pub downtime_ms: Option<u64>,
    pub final_mode: String,
    /// (milliseconds since the start, text)
    pub decisions: Vec<(u64, String)>,
}

/// The XML namespace and prefix of the record in `<metadata>`.
pub const RECORD_NAMESPACE: &str = "http://vmctl.dev/xmlns/migration/1";
pub const RECORD_PREFIX: &str = "vmctl";

fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            c => out.push(c),
        }
    }
    out
}

fn xml_unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(end) = rest.find(';') else {
            break;
        };
        let entity = &rest[1..end];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The attribute lists of every element named `name` (any namespace prefix) in `xml`.
fn elements(xml: &str, name: &str) -> Vec<Vec<(String, String)>> {
    let mut found = Vec::new();
    let mut rest = xml;
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt + 1..];
        let tag_end = rest
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .unwrap_or(rest.len());
        let tag = &rest[..tag_end];
        let local = tag.rsplit(':').next().unwrap_or(tag);
        if local != name {
            continue;
        }
        let Some(close) = rest.find('>') else {
            break;
        };
        if let Some(attrs) = parse_attributes(&rest[tag_end..close]) {
            found.push(attrs);
        }
    }
    found
}

/// `a="1" b='2'` (a trailing `/` ignored); `None` if malformed.
fn parse_attributes(mut body: &str) -> Option<Vec<(String, String)>> {
    let mut attrs = Vec::new();
    while let Some(eq) = body.find('=') {
        let key = body[..eq].trim().to_string();
        let after = body[eq + 1..].trim_start();
        let quote = after.chars().next()?;
        if quote != '"' && quote != '\'' {
            return None;
        }
        let close = after[1..].find(quote)?;
        attrs.push((key, xml_unescape(&after[1..1 + close])));
        body = &after[close + 2..];
    }
    Some(attrs)
}

/// The record as the XML element stored in the domain's metadata.
pub fn record_to_xml(r: &Record) -> String {
    let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    let mut xml = format!(
        "<migration at=\"{}\" outcome=\"{}\" cause=\"{}\" message=\"{}\" destination=\"{}\" totalMs=\"{}\" dataProcessed=\"{}\" iterations=\"{}\" downtimeMs=\"{}\" finalMode=\"{}\">",
        xml_escape(&r.at),
        xml_escape(&r.outcome),
        xml_escape(&r.cause),
        xml_escape(&r.message),
        xml_escape(&r.destination),
        r.total_ms,
        r.data_processed,
        opt(r.iterations),
        opt(r.downtime_ms),
        xml_escape(&r.final_mode),
    );
    for (at, text) in &r.decisions {
        xml.push_str(&format!(
            "<decision atMs=\"{at}\" text=\"{}\"/>",
            xml_escape(text)
        ));
    }
    xml.push_str("</migration>");
    xml
}

/// Reads a record back from the metadata libvirt returns (it may re-serialise it with
/// another prefix or quote style); `None` if it is not one.
pub fn record_from_xml(xml: &str) -> Option<Record> {
    let attrs = elements(xml, "migration").into_iter().next()?;
    let get = |k: &str| {
        attrs
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let num = |k: &str| get(k).parse::<u64>().ok();
    let decisions = elements(xml, "decision")
        .into_iter()
        .filter_map(|a| {
            let get = |k: &str| a.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
            Some((get("atMs")?.parse().ok()?, get("text")?))
        })
        .collect();
    let outcome = get("outcome");
    if outcome.is_empty() {
        return None;
    }
    Some(Record {
        at: get("at"),
        outcome,
        cause: get("cause"),
        message: get("message"),
        destination: get("destination"),
        total_ms: num("totalMs").unwrap_or(0),
        data_processed: num("dataProcessed").unwrap_or(0),
        iterations: num("iterations"),
        downtime_ms: num("downtimeMs"),
        final_mode: get("finalMode"),
        decisions,
    })
}

/// Classifies the last migration from vmctl's record (when libvirt kept no statistics).
pub fn classify_record(r: &Record, state: DomainStatus) -> Classification {
    let mut evidence = vec![
        format!("vmctl's record of the migration it drove, ended {}", r.at),
        format!("outcome: {} (mode at the end: {})", r.outcome, r.final_mode),
        format!("time: {:.1} s", r.total_ms as f64 / 1000.0),
    ];
    if !r.destination.is_empty() {
        evidence.push(format!("destination: {}", r.destination));
    }
    if r.data_processed > 0 {
        evidence.push(format!("data processed: {}", bytes(r.data_processed)));
    }
    if let Some(it) = r.iterations {
        evidence.push(format!("passes: {it}"));
    }
    if let Some(d) = r.downtime_ms {
        evidence.push(format!("downtime: {d} ms"));
    }
    if !r.message.is_empty() {
        evidence.push(format!("result: {}", r.message));
    }
    for (at, text) in &r.decisions {
        evidence.push(format!("decision at {:.1} s: {text}", *at as f64 / 1000.0));
    }
    evidence.push(format!("domain now: {}", status_text(state)));
    let outcome = match r.outcome.as_str() {
        "succeeded" => Some(Outcome::Succeeded),
        "aborted" => Some(Outcome::Aborted),
        "failed" => Some(Outcome::Failed),
        _ => None,
    };
    let cause = match r.cause.as_str() {
        "succeeded" => "succeeded",
        "aborted-by-request" => "aborted-by-request",
        "not-converging" => "not-converging",
        "no-progress" => "no-progress",
        "connection-failure" => "connection-failure",
        "postcopy-failed" => "postcopy-failed",
        _ => "libvirt-error",
    };
    let (summary, advice) = match cause {
        "succeeded" => ("the migration completed".to_string(), "Nothing to do."),
        "aborted-by-request" => (
            "the migration was aborted on request".to_string(),
            "Nothing is wrong with the hosts; migrate again when ready.",
        ),
        "not-converging" => (
            "vmctl aborted the migration: pre-copy could not converge (the guest dirtied memory about as fast as it was sent)".to_string(),
            "Allow post-copy (--allow-postcopy) or auto-converge (--auto-converge), raise --bandwidth or --max-downtime, or migrate when the guest is quieter.",
        ),
        "no-progress" => (
            "vmctl aborted the migration: remaining data stopped decreasing".to_string(),
            "Check the migration network between the hosts (firewall, migration ports, address).",
        ),
        "connection-failure" => (
            "the connection between the hosts broke during the migration".to_string(),
            "Check the destination daemon and the network between the hosts.",
        ),
        "postcopy-failed" => (
            "the migration failed in post-copy".to_string(),
            "The guest's memory is split between the hosts: try `virsh migrate --postcopy-resume` once the link is back; otherwise restart the guest.",
        ),
        _ => (
            "libvirt reported an error".to_string(),
            "Read the source daemon's log for the job.",
        ),
    };
    Classification {
        cause,
        outcome,
        summary,
        evidence,
        advice: advice.to_string(),
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
    fn records_round_trip_through_libvirt_style_xml() {
        let r = Record {
            at: "2026-11-29T16:33:11Z".into(),
            outcome: "failed".into(),
            cause: "not-converging".into(),
            message: "libvirt: operation aborted: job 'migration out' canceled by client; <&>"
                .into(),
            destination: "qemu+unix:///system?socket=/tmp/x&y".into(),
            total_ms: 13_808,
            data_processed: 400 << 20,
            iterations: Some(3),
            downtime_ms: None,
            final_mode: "pre-copy".into(),
            decisions: vec![(
                12_076,
                "not converging: pass 3 starts with \"150 MiB\" -> abort".into(),
            )],
        };
        let xml = record_to_xml(&r);
        assert_eq!(record_from_xml(&xml), Some(r.clone()));
        // As libvirt gives it back: its own prefix and namespace declaration.
        let back = xml
            .replace(
                "<migration ",
                "<vmctl:migration xmlns:vmctl=\"http://vmctl.dev/xmlns/migration/1\" ",
            )
            .replace("<decision ", "<vmctl:decision ")
            .replace("</migration>", "</vmctl:migration>");
        let parsed = record_from_xml(&back);
        assert_eq!(parsed.as_ref().map(|p| &p.decisions), Some(&r.decisions));
        assert_eq!(parsed.map(|p| p.message), Some(r.message.clone()));
        assert_eq!(record_from_xml("<other/>"), None);
        let c = classify_record(&r, DomainStatus::Running);
        assert_eq!(
            (c.cause, c.outcome),
            ("not-converging", Some(Outcome::Failed))
        );
        assert!(
            c.evidence
                .iter()
                .any(|e| e.starts_with("decision at 12.1 s: not converging"))
        );
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
