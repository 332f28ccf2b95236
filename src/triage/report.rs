//! The `explain` document: the diagnosis with its envelope (pure: built from the evidence).

use serde::Serialize;

use crate::migration::classify::{CompletedJob, DomainStatus};
use crate::migration::series::ProgressSeries;
use crate::model::KubeVirt;
use crate::triage::{Diagnosis, Evidence, HistoryEntry, diagnose, history};

/// The `-o json|yaml` document: the diagnosis with its envelope.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExplainReport {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub as_of: String,
    pub source: String,
    /// `status.observedKubeVirtVersion` of the KubeVirt CR, when found.
    pub kubevirt_version: Option<String>,
    #[serde(flatten)]
    pub diagnosis: Diagnosis,
    /// With --prometheus: the migration's remaining memory, dirty rate and transfer rate
    /// over its window (a range query), at most 120 points; drawn as sparklines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress_series: Option<ProgressSeries>,
    /// With --history: every migration of the VMI, oldest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<HistoryEntry>>,
    /// What vmctl could not read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What was said about the input on stderr (unknown values, duplicates …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Made from the journal (the migration no longer exists in the cluster): which journal,
    /// when and by what it was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal: Option<JournalOrigin>,
}

/// Where a diagnosis made from the journal came from (`explain`'s fallback, issue 28).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalOrigin {
    /// The journal (a path, or a URL without its password).
    pub path: String,
    pub recorded_at: String,
    /// record | migrate | drain | abort.
    pub recorded_by: String,
}

impl JournalOrigin {
    /// `from the journal PATH, recorded at T by record (the migration no longer exists in
    /// the cluster)`; the caller escapes it.
    pub fn line(&self) -> String {
        format!(
            "from the journal {}, recorded at {} by {} (the migration no longer exists in the cluster)",
            self.path, self.recorded_at, self.recorded_by
        )
    }
}

pub fn build_report(
    evidence: &Evidence,
    with_history: bool,
    source: &str,
    notes: Vec<String>,
) -> ExplainReport {
    ExplainReport {
        api_version: crate::model::VMCTL_API_VERSION,
        kind: "Diagnosis",
        as_of: evidence.now.to_string(),
        source: source.to_string(),
        kubevirt_version: evidence
            .kubevirt
            .as_ref()
            .and_then(KubeVirt::version)
            .map(str::to_string),
        diagnosis: diagnose(evidence),
        progress_series: None,
        history: with_history.then(|| history(evidence)),
        notes,
        warnings: Vec::new(),
        journal: None,
    }
}

/// `explain DOMAIN --connect`'s `-o json|yaml` document: a libvirt domain's last migration
/// job, classified into the same [`Diagnosis`] as KubeVirt's.
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
