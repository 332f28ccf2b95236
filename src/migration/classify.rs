//! Classifies how a libvirt migration job ended (pure), in the triage vocabulary: the same
//! [`Cause`]s as KubeVirt's `explain` (`succeeded`, `aborted-by-request`, `not-converging`,
//! `no-progress`, `connection-failure`, `postcopy-failed`, else `libvirt-error`), the same
//! list of connection-error signatures (`triage::strings::CONNECTION_ERRORS`), and the same
//! [`Diagnosis`] at the end ([`Classification::diagnosis`]).
//!
//! Inputs are plain data: the completed-job statistics libvirt keeps
//! (`virDomainGetJobStats(..., VIR_DOMAIN_JOB_STATS_COMPLETED)`), the error the migrate
//! call returned, and the domain's state.

use serde::Serialize;

use super::series::{ProgressSeries, SeriesPoint};
use crate::text::bytes;
use crate::triage::cause::{self, Cause};
use crate::triage::strings::{Signature, is_canceled_by_client, is_connection_error, signature};
use crate::triage::{Confidence, Diagnosis, Fact, Outcome, RuleInfo, VmiInfo};

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

/// Where a fact of a classification was read: a typed parameter of the job statistics, the
/// domain's state, or vmctl's record in the domain's metadata.
pub mod field {
    pub const JOB_TYPE: &str = "jobStats.type";
    pub const ELAPSED: &str = "jobStats.time_elapsed";
    pub const ERROR: &str = "jobStats.errmsg";
    pub const DATA: &str = "jobStats.{data_processed,memory_total}";
    pub const ITERATION: &str = "jobStats.memory_iteration";
    pub const RATES: &str = "jobStats.{memory_bps,memory_dirty_rate}";
    pub const MEMORY_REMAINING: &str = "jobStats.memory_remaining";
    pub const THROTTLE: &str = "jobStats.auto_converge_throttle";
    pub const POSTCOPY_REQUESTS: &str = "jobStats.memory_postcopy_requests";
    pub const DOWNTIME: &str = "jobStats.downtime";
    pub const STATE: &str = "state";
    /// vmctl's record (`<vmctl:migration>` in `<metadata>`).
    pub const RECORD: &str = "metadata.vmctl:migration";
}

/// What the classifier reads (a diagnosis's `rule.reads`).
pub const READS: &[&str] = &[
    "virDomainGetJobStats(VIR_DOMAIN_JOB_STATS_COMPLETED) of the source",
    "virDomainGetState",
    "vmctl's record of the migration it drove, in the domain's <metadata>",
];

/// A cause, the outcome, one sentence, the facts it rests on, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    pub cause: Cause,
    pub outcome: Outcome,
    pub summary: String,
    /// (where it was read: a [`field`], the fact as shown)
    pub evidence: Vec<(&'static str, String)>,
    pub advice: &'static str,
    /// The cause is inferred from the statistics (rates, bytes sent) rather than read.
    pub inferred: bool,
}

impl Classification {
    /// The classification as the [`Diagnosis`] KubeVirt's `explain` gives: the domain stands
    /// where the VMI does (`vmi.name` the domain, `vmi.node` the host, `vmi.phase` its state;
    /// no namespace), each fact is read from `Domain/<host>/<domain>`, and the advice is the
    /// one next step.
    pub fn diagnosis(self, domain: &str, host: &str, state: DomainStatus) -> Diagnosis {
        let object = format!("Domain/{host}/{domain}");
        let evidence = self
            .evidence
            .into_iter()
            .map(|(field, value)| Fact {
                object: object.clone(),
                field: field.to_string(),
                value,
                note: None,
            })
            .collect();
        Diagnosis {
            outcome: self.outcome,
            plane: self.cause.plane,
            cause: self.cause,
            summary: self.summary,
            inferred: self.inferred,
            rule: RuleInfo {
                id: self.cause.id,
                plane: self.cause.plane,
                reads: READS,
                advice: self.advice,
            },
            migration: None,
            vmi: VmiInfo {
                namespace: String::new(),
                name: domain.to_string(),
                exists: true,
                phase: Some(state_name(state).to_string()),
                node: Some(host.to_string()),
                evacuation_node: None,
                live_migratable: None,
                not_migratable_because: Vec::new(),
            },
            pods: Vec::new(),
            attention: Vec::new(),
            evidence,
            timeline: Vec::new(),
            next_steps: vec![self.advice.to_string()],
            confidence: if self.inferred {
                Confidence::Medium
            } else {
                Confidence::High
            },
            unexplained: Vec::new(),
            assumptions: Vec::new(),
        }
    }
}

/// QEMU's refusals (lower case) to enable post-copy: with multifd (QEMU 10.0 and older),
/// without userfaultfd.
const POSTCOPY_REFUSED: &[&str] = &[
    "postcopy is not yet compatible with",
    "postcopy is not compatible with",
    "postcopy is not supported",
    "userfaultfd not available",
];

/// The cause of a migrate call's (or a job's) error, by what its message says. The libvirt and
/// QEMU signatures (`triage::strings::signature`) are read first, from the message as libvirt
/// wrote it: the same text is the same cause as in KubeVirt's `failureReason`.
pub fn failure(message: &str, in_postcopy: bool) -> Cause {
    match signature(message) {
        Some(Signature::CpuMismatch { .. }) => return cause::CPU_FEATURE_MISMATCH,
        Some(Signature::DeviceState { .. }) if !in_postcopy => {
            return cause::DEVICE_STATE_INCOMPATIBLE;
        }
        Some(Signature::Unsafe { .. }) => return cause::UNSAFE_MIGRATION,
        Some(Signature::StorageIo { .. }) if !in_postcopy => return cause::STORAGE_IO_ERROR,
        Some(Signature::PostcopyIo) => return cause::POSTCOPY_FAILED,
        _ => {}
    }
    let m = message.to_ascii_lowercase();
    // QEMU refused to enable post-copy as libvirt set the capabilities: nothing was sent.
    if !in_postcopy && POSTCOPY_REFUSED.iter().any(|t| m.contains(t)) {
        return cause::POSTCOPY_UNSUPPORTED;
    }
    if in_postcopy || m.contains("post-copy") || m.contains("postcopy") {
        return cause::POSTCOPY_FAILED;
    }
    if is_canceled_by_client(&m) {
        return cause::ABORTED_BY_REQUEST;
    }
    if is_connection_error(&m) {
        return cause::CONNECTION_FAILURE;
    }
    cause::LIBVIRT_ERROR
}

/// [`failure`]'s id (what `migration::libvirt` records).
pub fn failure_cause(message: &str, in_postcopy: bool) -> &'static str {
    failure(message, in_postcopy).id
}

/// Classifies the last job of a domain from its completed-job statistics.
pub fn classify(job: &CompletedJob, state: DomainStatus) -> Classification {
    use field::*;
    let mut evidence = Vec::new();
    evidence.push((JOB_TYPE, format!("job: {}", end_text(job.end))));
    if let Some(ms) = job.elapsed_ms {
        evidence.push((
            ELAPSED,
            format!("time elapsed: {:.1} s", ms as f64 / 1000.0),
        ));
    }
    if let Some(msg) = &job.error_message {
        evidence.push((ERROR, format!("error: {msg}")));
    }
    if let (Some(total), Some(done)) = (job.memory_total, job.data_processed) {
        evidence.push((
            DATA,
            format!(
                "data processed: {} (guest memory {})",
                bytes(done),
                bytes(total)
            ),
        ));
    }
    if let Some(it) = job.iteration {
        evidence.push((ITERATION, format!("passes: {it}")));
    }
    if let (Some(bps), Some(dirty)) = (job.memory_bps, job.dirty_rate_bps) {
        evidence.push((
            RATES,
            format!(
                "last transfer rate {}/s, dirty rate {}/s",
                bytes(bps),
                bytes(dirty)
            ),
        ));
    }
    if let Some(r) = job.memory_remaining.filter(|r| *r > 0) {
        evidence.push((
            MEMORY_REMAINING,
            format!("memory remaining at the end: {}", bytes(r)),
        ));
    }
    if let Some(t) = job.throttle_percent.filter(|t| *t > 0) {
        evidence.push((THROTTLE, format!("auto-converge throttle: {t}%")));
    }
    let postcopy = job.postcopy_requests.is_some_and(|r| r > 0)
        || matches!(state, DomainStatus::PostcopyFailed | DomainStatus::PostCopy);
    if let Some(r) = job.postcopy_requests.filter(|r| *r > 0) {
        evidence.push((POSTCOPY_REQUESTS, format!("post-copy page requests: {r}")));
    }
    if let Some(d) = job.downtime_ms {
        evidence.push((DOWNTIME, format!("downtime: {d} ms")));
    }
    evidence.push((STATE, format!("domain now: {}", status_text(state))));

    let mut inferred = false;
    let (cause, outcome, summary, advice) = match job.end {
        JobEnd::None => (
            cause::NO_MIGRATION,
            Outcome::NoMigration,
            "no record of a migration of this domain here".to_string(),
            advice(cause::NO_MIGRATION),
        ),
        // A source whose post-copy failed keeps its migration job (for a resume): not "in
        // progress", failed.
        JobEnd::Running if state == DomainStatus::PostcopyFailed => (
            cause::POSTCOPY_FAILED,
            Outcome::Failed,
            "the migration failed in post-copy: the guest's memory is split between the hosts \
             (libvirt keeps the job for `virsh migrate --postcopy-resume`)"
                .to_string(),
            advice(cause::POSTCOPY_FAILED),
        ),
        JobEnd::Running => (
            cause::IN_PROGRESS,
            Outcome::InProgress,
            "a job is still running".to_string(),
            advice(cause::IN_PROGRESS),
        ),
        JobEnd::Completed => (
            cause::SUCCEEDED,
            Outcome::Succeeded,
            if postcopy {
                "the migration completed (it finished in post-copy)".to_string()
            } else {
                "the migration completed".to_string()
            },
            advice(cause::SUCCEEDED),
        ),
        JobEnd::Cancelled | JobEnd::Failed => {
            let message = job.error_message.clone().unwrap_or_default();
            let mut cause = if job.end == JobEnd::Cancelled {
                cause::ABORTED_BY_REQUEST
            } else {
                failure(&message, postcopy)
            };
            if state == DomainStatus::PostcopyFailed {
                cause = cause::POSTCOPY_FAILED;
            }
            // An abort that ended a pre-copy which could not converge: name the cause.
            let not_converging = job.iteration.is_some_and(|i| i >= 3)
                && matches!((job.memory_bps, job.dirty_rate_bps), (Some(b), Some(d)) if b > 0 && d * 10 >= b * 9);
            let no_progress = job.data_processed.is_some_and(|p| p == 0)
                && job.elapsed_ms.is_some_and(|ms| ms > 10_000);
            if cause == cause::ABORTED_BY_REQUEST && !postcopy {
                if not_converging {
                    (cause, inferred) = (cause::NOT_CONVERGING, true);
                } else if no_progress {
                    (cause, inferred) = (cause::NO_PROGRESS, true);
                }
            }
            let outcome = if cause == cause::ABORTED_BY_REQUEST {
                Outcome::Aborted
            } else {
                Outcome::Failed
            };
            let summary = match cause.id {
                "aborted-by-request" => "the migration was aborted on request".to_string(),
                "not-converging" => "the migration was aborted while pre-copy could not converge: the guest dirtied memory about as fast as it was sent".to_string(),
                "no-progress" => "the migration was aborted without having sent anything".to_string(),
                "connection-failure" => format!("the connection between the hosts broke: {message}"),
                "postcopy-failed" => format!("the migration failed in post-copy: {message}"),
                "postcopy-unsupported" => format!("QEMU refused to enable post-copy: {message}"),
                "cpu-feature-mismatch" => format!("the destination refused the guest's CPU: {message}"),
                "device-state-incompatible" => format!("the destination's QEMU refused a device's state: {message}"),
                "unsafe-migration" => format!("libvirt refused the migration as unsafe: {message}"),
                "storage-io-error" => format!("the guest hit a disk I/O error during the migration: {message}"),
                _ => format!("libvirt reported: {message}"),
            };
            (cause, outcome, summary, advice(cause))
        }
    };
    Classification {
        cause,
        outcome,
        summary,
        evidence,
        advice,
        inferred,
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
    /// The migration's progress over time, at most [`RECORD_SERIES_POINTS`] points (merged
    /// as `migration::series` merges them); empty in records written before it existed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub progress_series: Vec<SeriesPoint>,
}

/// The record's progress series as `explain --connect` documents it (`None` without points).
pub fn progress_series(r: Record) -> Option<ProgressSeries> {
    (!r.progress_series.is_empty()).then(|| ProgressSeries {
        source: format!("vmctl's record of the migration, ended {}", r.at),
        points: r.progress_series,
    })
}

/// The most points of `progress_series` a record keeps (written and read).
pub const RECORD_SERIES_POINTS: usize = 120;

/// The XML namespace and prefix of the record in `<metadata>`.
pub const RECORD_NAMESPACE: &str = "http://vmctl.dev/xmlns/migration/1";
pub const RECORD_PREFIX: &str = "vmctl";

/// `text` as an XML attribute value between double quotes. The five markup characters become
/// entities; tab, newline and carriage return become character references (an XML reader
/// turns them into spaces otherwise). Every other control character (C0, DEL, C1) and the
/// non-characters U+FFFE/U+FFFF cannot be carried by XML 1.0 at all, not even as a reference:
/// they are written as the text `\u{..}` (so a libvirt message with an escape sequence comes
/// back as visible text, never as the byte).
fn xml_escape(text: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if c.is_control() || c == '\u{fffe}' || c == '\u{ffff}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// The most XML nodes a record may have when read back: a record is one element, its
/// attributes, one element per controller decision (a handful) and one per point of its
/// progress series (at most [`RECORD_SERIES_POINTS`]).
const RECORD_MAX_NODES: u32 = 10_000;

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
    // Numbers only: nothing foreign to escape.
    for p in r.progress_series.iter().take(RECORD_SERIES_POINTS) {
        xml.push_str(&format!(
            "<point atMs=\"{}\" remaining=\"{}\" dirtyBps=\"{}\" transferBps=\"{}\" pass=\"{}\"/>",
            p.at_ms,
            p.remaining_bytes,
            opt(p.dirty_rate_bps),
            p.transfer_rate_bps,
            opt(p.pass),
        ));
    }
    xml.push_str("</migration>");
    xml
}

/// Reads a record back from the metadata libvirt returns (it re-serialises it with its
/// prefix and namespace declaration, maybe another quote style); `None` if it is not one, or
/// not well-formed XML. Parsed by roxmltree: a DTD is refused (no entity expansion), the tree
/// is bounded by [`RECORD_MAX_NODES`].
pub fn record_from_xml(xml: &str) -> Option<Record> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: false,
        nodes_limit: RECORD_MAX_NODES,
        // No external entity is ever fetched (and with no DTD none can be declared).
        entity_resolver: None,
    };
    let doc = roxmltree::Document::parse_with_options(xml, options).ok()?;
    let ours = |n: &roxmltree::Node, name: &str| {
        n.is_element()
            && n.tag_name().name() == name
            && matches!(n.tag_name().namespace(), None | Some(RECORD_NAMESPACE))
    };
    let migration = doc.descendants().find(|n| ours(n, "migration"))?;
    let get = |k: &str| migration.attribute(k).unwrap_or_default().to_string();
    let num = |k: &str| migration.attribute(k)?.parse::<u64>().ok();
    let decisions = migration
        .children()
        .filter(|n| ours(n, "decision"))
        .filter_map(|d| {
            Some((
                d.attribute("atMs")?.parse().ok()?,
                d.attribute("text")?.to_string(),
            ))
        })
        .collect();
    let number = |n: &roxmltree::Node, k: &str| n.attribute(k)?.parse::<u64>().ok();
    let progress_series = migration
        .children()
        .filter(|n| ours(n, "point"))
        .filter_map(|n| {
            Some(SeriesPoint {
                at_ms: number(&n, "atMs")?,
                remaining_bytes: number(&n, "remaining")?,
                dirty_rate_bps: number(&n, "dirtyBps"),
                transfer_rate_bps: number(&n, "transferBps").unwrap_or(0),
                pass: number(&n, "pass"),
            })
        })
        .take(RECORD_SERIES_POINTS)
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
        progress_series,
    })
}

/// Classifies the last migration from vmctl's record (when libvirt kept no statistics).
pub fn classify_record(r: &Record, state: DomainStatus) -> Classification {
    use field::{RECORD, STATE};
    let mut evidence = vec![
        (
            RECORD,
            format!("vmctl's record of the migration it drove, ended {}", r.at),
        ),
        (
            RECORD,
            format!("outcome: {} (mode at the end: {})", r.outcome, r.final_mode),
        ),
        (RECORD, format!("time: {:.1} s", r.total_ms as f64 / 1000.0)),
    ];
    if !r.destination.is_empty() {
        evidence.push((RECORD, format!("destination: {}", r.destination)));
    }
    if r.data_processed > 0 {
        evidence.push((
            RECORD,
            format!("data processed: {}", bytes(r.data_processed)),
        ));
    }
    if let Some(it) = r.iterations {
        evidence.push((RECORD, format!("passes: {it}")));
    }
    if let Some(d) = r.downtime_ms {
        evidence.push((RECORD, format!("downtime: {d} ms")));
    }
    if !r.message.is_empty() {
        evidence.push((RECORD, format!("result: {}", r.message)));
    }
    for (at, text) in &r.decisions {
        evidence.push((
            RECORD,
            format!("decision at {:.1} s: {text}", *at as f64 / 1000.0),
        ));
    }
    evidence.push((STATE, format!("domain now: {}", status_text(state))));
    // The record names a cause of the one catalogue; anything else is libvirt's error.
    let cause = match Cause::by_id(&r.cause) {
        Some(c)
            if [
                cause::SUCCEEDED,
                cause::ABORTED_BY_REQUEST,
                cause::NOT_CONVERGING,
                cause::NO_PROGRESS,
                cause::CONNECTION_FAILURE,
                cause::POSTCOPY_FAILED,
                cause::POSTCOPY_UNSUPPORTED,
                cause::CPU_FEATURE_MISMATCH,
                cause::DEVICE_STATE_INCOMPATIBLE,
                cause::UNSAFE_MIGRATION,
                cause::STORAGE_IO_ERROR,
            ]
            .contains(&c) =>
        {
            c
        }
        _ => cause::LIBVIRT_ERROR,
    };
    // The outcome vmctl wrote; a record from a later vmctl with another word: by the cause.
    let outcome = match r.outcome.as_str() {
        "succeeded" => Outcome::Succeeded,
        "aborted" => Outcome::Aborted,
        "failed" => Outcome::Failed,
        _ if cause == cause::SUCCEEDED => Outcome::Succeeded,
        _ if cause == cause::ABORTED_BY_REQUEST => Outcome::Aborted,
        _ => Outcome::Failed,
    };
    let summary = match cause.id {
        "succeeded" => "the migration completed",
        "aborted-by-request" => "the migration was aborted on request",
        "not-converging" => {
            "vmctl aborted the migration: pre-copy could not converge (the guest dirtied memory about as fast as it was sent)"
        }
        "no-progress" => "vmctl aborted the migration: remaining data stopped decreasing",
        "connection-failure" => "the connection between the hosts broke during the migration",
        "postcopy-failed" => "the migration failed in post-copy",
        "postcopy-unsupported" => {
            "QEMU refused to enable post-copy before anything was sent; the guest stayed on the source"
        }
        "cpu-feature-mismatch" => "the destination refused the guest's CPU",
        "device-state-incompatible" => "the destination's QEMU refused a device's state",
        "unsafe-migration" => "libvirt refused the migration as unsafe",
        "storage-io-error" => "the guest hit a disk I/O error during the migration",
        _ => "libvirt reported an error",
    };
    Classification {
        cause,
        outcome,
        summary: summary.to_string(),
        evidence,
        advice: advice(cause),
        inferred: false,
    }
}

/// What to do, for a libvirt domain, whether the cause came from libvirt's statistics or
/// from vmctl's record (KubeVirt's advice, in the rule, names KubeVirt's knobs).
fn advice(cause: Cause) -> &'static str {
    match cause.id {
        "no-migration" => {
            "libvirt keeps completed-job statistics only for jobs that succeeded, in the \
             daemon that ran them (the source), until it restarts; vmctl records the migrations \
             it drives in the domain's metadata. Ask the other host, or migrate with `vmctl \
             migrate` next time."
        }
        "in-progress" => {
            "Follow it with `virsh domjobinfo`, or abort it with `vmctl abort --connect`."
        }
        "succeeded" => "Nothing to do.",
        "aborted-by-request" => "Nothing is wrong with the hosts; migrate again when ready.",
        "not-converging" => {
            "Allow post-copy (--allow-postcopy) or auto-converge (--auto-converge), raise \
             --bandwidth or --max-downtime, or migrate when the guest is quieter."
        }
        "no-progress" => {
            "Check the migration network between the hosts (firewall, migration ports, address)."
        }
        "connection-failure" => {
            "Check the destination daemon and the network between the hosts; the guest is still \
             on the source if it was in pre-copy."
        }
        "postcopy-failed" => {
            "The guest's memory is split between the hosts: try `virsh migrate \
             --postcopy-resume` once the link is back; otherwise the guest is lost and must be \
             restarted."
        }
        "postcopy-unsupported" => {
            "Nothing was sent: QEMU cannot enable post-copy with these settings (with \
             --parallel: QEMU 10.0 and older refuse multifd with post-copy; without \
             userfaultfd on the destination). Drop --parallel or --allow-postcopy."
        }
        "cpu-feature-mismatch" => {
            "The destination cannot give the guest the CPU it started with (libvirt lists the \
             features): use a CPU model both hosts offer, or restart the guest on the \
             destination after a QEMU/libvirt upgrade; the guest is still on the source."
        }
        "device-state-incompatible" => {
            "The destination's QEMU cannot load a device's state (different QEMU, machine type \
             or kernel features): align the hosts' QEMU or restart the guest; retrying fails the \
             same way. The guest is still on the source."
        }
        "unsafe-migration" => {
            "libvirt refused: the disks are not on shared storage or use a cache mode other \
             than none/directsync. Fix the storage; libvirt's VIR_MIGRATE_UNSAFE flag is a last resort."
        }
        "storage-io-error" => {
            "The guest's storage failed (full, read-only or unreachable) during the migration: \
             fix it first; the guest may be paused on the source."
        }
        _ => "Read the source daemon's log for the job.",
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

/// The state as one word (a diagnosis's `vmi.phase`), as `domainState` spells it.
fn state_name(state: DomainStatus) -> &'static str {
    match state {
        DomainStatus::Running => "running",
        DomainStatus::Paused => "paused",
        DomainStatus::PostcopyFailed => "postcopy-failed",
        DomainStatus::PostCopy => "post-copy",
        DomainStatus::ShutOff => "shut-off",
        DomainStatus::Unknown => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::triage::Plane;

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
            (
                "internal error: unable to execute QEMU command 'migrate-set-capabilities': \
                 Postcopy is not yet compatible with multifd",
                false,
                "postcopy-unsupported",
            ),
            (
                "operation failed: job 'migration in' failed in post-copy phase",
                false,
                "postcopy-failed",
            ),
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
                Outcome::Succeeded,
            ),
            (
                job(JobEnd::Cancelled),
                DomainStatus::Running,
                "aborted-by-request",
                Outcome::Aborted,
            ),
            (
                CompletedJob {
                    dirty_rate_bps: Some(32 * MIB),
                    ..job(JobEnd::Cancelled)
                },
                DomainStatus::Running,
                "not-converging",
                Outcome::Failed,
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
                Outcome::Failed,
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
                Outcome::Failed,
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
                Outcome::Failed,
            ),
            (
                CompletedJob::default(),
                DomainStatus::ShutOff,
                "no-migration",
                Outcome::NoMigration,
            ),
            (
                CompletedJob {
                    end: JobEnd::Running,
                    ..Default::default()
                },
                DomainStatus::PostcopyFailed,
                "postcopy-failed",
                Outcome::Failed,
            ),
            (
                CompletedJob {
                    end: JobEnd::Running,
                    ..Default::default()
                },
                DomainStatus::Running,
                "in-progress",
                Outcome::InProgress,
            ),
        ];
        for (job, state, cause, outcome) in table {
            let c = classify(&job, state);
            assert_eq!((c.cause.id, c.outcome), (cause, outcome), "{job:?}");
            assert!(!c.evidence.is_empty());
        }
    }

    fn hostile_record(message: &str) -> Record {
        Record {
            at: "2026-11-29T16:33:11Z".into(),
            outcome: "failed".into(),
            cause: "connection-failure".into(),
            message: message.into(),
            destination: "qemu+ssh://h/system?a=1&b='2'".into(),
            total_ms: 1,
            data_processed: 2,
            iterations: None,
            downtime_ms: Some(3),
            final_mode: "post-copy".into(),
            decisions: vec![(4, message.into()), (u64::MAX, String::new())],
            progress_series: Vec::new(),
        }
    }

    #[test]
    fn the_progress_series_round_trips_bounded() {
        let point = |i: u64| SeriesPoint {
            at_ms: i * 400,
            remaining_bytes: (1000 - i) << 20,
            dirty_rate_bps: (!i.is_multiple_of(3)).then_some(i << 20),
            transfer_rate_bps: 32 << 20,
            pass: (i > 0).then_some(i / 10 + 1),
        };
        let mut r = hostile_record("x");
        r.progress_series = (0..RECORD_SERIES_POINTS as u64).map(point).collect();
        let xml = record_to_xml(&r);
        assert!(xml.contains("<point atMs=\"0\" remaining=\"1048576000\" dirtyBps=\"\" transferBps=\"33554432\" pass=\"\"/>"), "{xml}");
        assert_eq!(record_from_xml(&xml), Some(r.clone()));
        // As libvirt gives it back (prefixed), the same.
        let prefixed = xml
            .replace(
                "<migration ",
                "<vmctl:migration xmlns:vmctl=\"http://vmctl.dev/xmlns/migration/1\" ",
            )
            .replace("<point ", "<vmctl:point ")
            .replace("<decision ", "<vmctl:decision ")
            .replace("</migration>", "</vmctl:migration>");
        assert_eq!(record_from_xml(&prefixed), Some(r.clone()));
        // More points than the bound are neither written nor read; broken ones are skipped.
        r.progress_series = (0..500).map(point).collect();
        let xml = record_to_xml(&r);
        assert_eq!(xml.matches("<point ").count(), RECORD_SERIES_POINTS);
        let forged =
            xml.replace(
                "</migration>",
                &"<point atMs=\"1\" remaining=\"2\"/>".repeat(300),
            )
            .replace(
                "<point atMs=\"0\" remaining=\"1048576000\"",
                "<point atMs=\"zero\" remaining=\"1048576000\"",
            ) + "</migration>";
        let back = record_from_xml(&forged).unwrap();
        assert_eq!(back.progress_series.len(), RECORD_SERIES_POINTS);
        assert_eq!(back.progress_series[0], point(1));
        // The document carries it under progressSeries.
        let json = serde_json::to_value(&back).unwrap();
        assert_eq!(json["progressSeries"][0]["remainingBytes"], 999u64 << 20);
        assert!(
            serde_json::to_value(hostile_record("x"))
                .unwrap()
                .get("progressSeries")
                .is_none()
        );
    }

    #[test]
    fn explain_documents_the_records_series_with_where_it_came_from() {
        assert_eq!(progress_series(hostile_record("x")), None);
        let mut r = hostile_record("x");
        r.progress_series = vec![SeriesPoint {
            at_ms: 400,
            remaining_bytes: 7,
            ..Default::default()
        }];
        let s = progress_series(r).unwrap();
        assert_eq!(
            s.source,
            "vmctl's record of the migration, ended 2026-11-29T16:33:11Z"
        );
        assert_eq!(s.points.len(), 1);
    }

    #[test]
    fn hostile_strings_round_trip_and_control_bytes_come_back_as_text() {
        // Everything XML 1.0 can carry comes back exactly.
        for message in [
            "<&>\"' ]]> <!-- --> <![CDATA[x]]> &amp; &#10; &unknown;",
            "tab\there, newline\nthere, return\rhere,   three spaces",
            "é ☃ 𝄞 \u{a0}\u{200b}\u{feff}\u{fffd}",
            "</migration><decision atMs=\"1\" text=\"forged\"/>",
            "",
        ] {
            let r = hostile_record(message);
            let xml = record_to_xml(&r);
            assert!(roxmltree::Document::parse(&xml).is_ok(), "{xml}");
            assert_eq!(record_from_xml(&xml), Some(r), "{message:?}");
        }
        // A control byte cannot be in XML 1.0 (not even as &#27;): it is written as text.
        let r = hostile_record("red \u{1b}[31m, nul \u{0}, del \u{7f}, c1 \u{9b}, \u{ffff}");
        let xml = record_to_xml(&r);
        assert!(roxmltree::Document::parse(&xml).is_ok(), "{xml}");
        let back = record_from_xml(&xml).unwrap();
        assert_eq!(
            back.message,
            "red \\u{1b}[31m, nul \\u{0}, del \\u{7f}, c1 \\u{9b}, \\u{ffff}"
        );
        assert!(!back.message.chars().any(char::is_control));
        assert_eq!(back.decisions[0].1, back.message);
    }

    #[test]
    fn records_written_by_the_string_search_version_are_read() {
        // Byte for byte what the previous writer produced, as libvirt gives it back.
        let old = "<vmctl:migration xmlns:vmctl=\"http://vmctl.dev/xmlns/migration/1\" at=\"2026-11-29T16:33:11Z\" outcome=\"aborted\" cause=\"aborted-by-request\" message=\"canceled by client; &lt;&amp;&gt;&#10;line 2\" destination=\"qemu+ssh://b/system\" totalMs=\"13808\" dataProcessed=\"419430400\" iterations=\"\" downtimeMs=\"7\" finalMode=\"pre-copy\"><vmctl:decision atMs=\"12076\" text=\"raise max downtime to &quot;500 ms&quot;\"/></vmctl:migration>";
        let r = record_from_xml(old).unwrap();
        assert_eq!(r.message, "canceled by client; <&>\nline 2");
        assert_eq!(
            (r.total_ms, r.iterations, r.downtime_ms),
            (13_808, None, Some(7))
        );
        assert_eq!(
            r.decisions,
            [(12_076, "raise max downtime to \"500 ms\"".to_string())]
        );
        assert!(r.progress_series.is_empty(), "no series in an old record");
        // Single quotes and another prefix are the same record.
        let requoted = "<m:migration xmlns:m='http://vmctl.dev/xmlns/migration/1' outcome='failed'><m:decision atMs='1' text='x'/></m:migration>";
        let r = record_from_xml(requoted).unwrap();
        assert_eq!((r.outcome.as_str(), r.decisions.len()), ("failed", 1));
    }

    #[test]
    fn records_that_are_not_records_are_none() {
        let bomb = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>
<migration outcome="failed" message="&lol4;"/>"#;
        assert_eq!(
            record_from_xml(bomb),
            None,
            "a DTD is refused, nothing expanded"
        );
        let external = r#"<!DOCTYPE m [<!ENTITY x SYSTEM "file:///etc/passwd">]><migration outcome="failed" message="&x;"/>"#;
        assert_eq!(record_from_xml(external), None);
        for not_one in [
            "",
            "<other/>",
            "<migration/>",
            "<migration outcome=\"failed\">",
            "<migration outcome=\"failed\" outcome=\"x\"/>",
            "<migration outcome=failed/>",
            "<other xmlns=\"urn:someone-else\"><migration outcome=\"failed\"/></other>",
            "<x:migration xmlns:x=\"urn:someone-else\" outcome=\"failed\"/>",
            "<vmctl:migration outcome=\"failed\"/>",
            "<migration outcome=\"a\u{1b}b\"/>",
            "<migration outcome=\"&#27;\"/>",
        ] {
            assert_eq!(record_from_xml(not_one), None, "{not_one}");
        }
        // Past the node limit: refused, not read.
        let many = format!(
            "<migration outcome=\"failed\">{}</migration>",
            "<decision atMs=\"1\" text=\"x\"/>".repeat(RECORD_MAX_NODES as usize)
        );
        assert_eq!(record_from_xml(&many), None);
        let fits = format!(
            "<migration outcome=\"failed\">{}</migration>",
            "<decision atMs=\"1\" text=\"x\"/>".repeat(100)
        );
        assert_eq!(record_from_xml(&fits).map(|r| r.decisions.len()), Some(100));
        // Truncations of a real record never panic.
        let xml = record_to_xml(&hostile_record("<&>\"' \u{1b}"));
        for (at, _) in xml.char_indices() {
            let _ = record_from_xml(&xml[..at]);
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
            progress_series: Vec::new(),
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
        assert_eq!((c.cause.id, c.outcome), ("not-converging", Outcome::Failed));
        assert!(
            c.evidence
                .iter()
                .any(|(_, e)| e.starts_with("decision at 12.1 s: not converging"))
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
            c.evidence
                .contains(&(field::ITERATION, "passes: 5".to_string())),
            "{:?}",
            c.evidence
        );
        assert!(
            c.evidence
                .contains(&(field::STATE, "domain now: running".to_string()))
        );
    }

    #[test]
    fn a_failed_job_is_the_same_diagnosis_as_kubevirt_explain_gives() {
        let c = classify(
            &CompletedJob {
                error_message: Some("operation failed: Lost connection to destination host".into()),
                ..job(JobEnd::Failed)
            },
            DomainStatus::Running,
        );
        let lines: Vec<String> = c.evidence.iter().map(|(_, l)| l.clone()).collect();
        let d = c.diagnosis("web-01", "src-host", DomainStatus::Running);
        assert_eq!(
            (d.cause.id, d.plane, d.outcome, d.confidence),
            (
                "connection-failure",
                Plane::DataPlane,
                Outcome::Failed,
                Confidence::High
            )
        );
        assert_eq!((d.rule.id, d.rule.reads), ("connection-failure", READS));
        assert_eq!(d.next_steps, vec![d.rule.advice.to_string()]);
        assert_eq!(
            (
                d.vmi.name.as_str(),
                d.vmi.node.as_deref(),
                d.vmi.phase.as_deref()
            ),
            ("web-01", Some("src-host"), Some("running"))
        );
        // Every line of the classification is a fact of the domain, in order.
        assert_eq!(
            d.evidence
                .iter()
                .map(|f| f.value.clone())
                .collect::<Vec<_>>(),
            lines
        );
        assert!(
            d.evidence
                .iter()
                .all(|f| f.object == "Domain/src-host/web-01")
        );
        assert!(
            d.evidence
                .iter()
                .any(|f| f.field == field::ERROR && f.value.contains("Lost connection"))
        );
        assert!(d.outcome.is_finding());
    }

    #[test]
    fn an_inferred_cause_is_medium_confidence_and_nothing_to_explain_is_no_finding() {
        let d = classify(
            &CompletedJob {
                dirty_rate_bps: Some(32 * MIB),
                ..job(JobEnd::Cancelled)
            },
            DomainStatus::Running,
        )
        .diagnosis("web-01", "h", DomainStatus::Running);
        assert_eq!(
            (d.cause.id, d.inferred, d.confidence),
            ("not-converging", true, Confidence::Medium)
        );
        for end in [JobEnd::None, JobEnd::Running] {
            let d = classify(
                &CompletedJob {
                    end,
                    ..Default::default()
                },
                DomainStatus::Running,
            )
            .diagnosis("web-01", "h", DomainStatus::Running);
            assert!(!d.outcome.is_finding(), "{end:?}");
            assert_eq!(d.plane, Plane::None, "{end:?}");
        }
    }

    #[test]
    fn a_record_with_a_cause_outside_the_libvirt_causes_is_a_libvirt_error() {
        let r = Record {
            at: "2026-11-29T16:33:11Z".into(),
            outcome: "failed".into(),
            cause: "target-pod-unschedulable".into(),
            ..Default::default()
        };
        assert_eq!(
            classify_record(&r, DomainStatus::Running).cause,
            cause::LIBVIRT_ERROR
        );
        let r = Record {
            outcome: "something-new".into(),
            cause: "aborted-by-request".into(),
            ..r
        };
        let c = classify_record(&r, DomainStatus::Running);
        assert_eq!(
            (c.cause, c.outcome),
            (cause::ABORTED_BY_REQUEST, Outcome::Aborted)
        );
    }

    /// vmctl's own aborts name causes of the one catalogue (what `explain` says afterwards).
    #[test]
    fn the_controllers_abort_causes_are_catalogue_causes() {
        use crate::migration::controller::AbortCause;
        for (abort, want) in [
            (AbortCause::NotConverging, cause::NOT_CONVERGING),
            (AbortCause::BudgetExceeded, cause::NOT_CONVERGING),
            (AbortCause::NoProgress, cause::NO_PROGRESS),
        ] {
            assert_eq!(Cause::by_id(abort.cause_id()), Some(want), "{abort:?}");
        }
    }

    /// One piece of advice per cause, whether the statistics or vmctl's record told it.
    #[test]
    fn the_record_and_the_statistics_give_the_same_advice_for_a_cause() {
        let from_stats = classify(
            &CompletedJob {
                error_message: Some("operation failed: Lost connection to destination host".into()),
                ..job(JobEnd::Failed)
            },
            DomainStatus::Running,
        );
        let from_record = classify_record(
            &Record {
                outcome: "failed".into(),
                cause: "connection-failure".into(),
                ..Default::default()
            },
            DomainStatus::Running,
        );
        assert_eq!(from_record.cause, from_stats.cause);
        assert_eq!(from_record.advice, from_stats.advice);
        assert!(from_record.advice.contains("still on the source"));
    }
}
