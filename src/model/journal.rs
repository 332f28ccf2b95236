//! What the journal keeps of one migration's end (issue 28): plain data, written by
//! `vmctl record`, `migrate`, `drain` and `abort`, read by `history` and `explain`.
//!
//! The columns a query filters or totals on are fields of their own; everything else (the
//! objects the diagnosis was made from, the diagnosis itself, the per-pass samples of a run
//! vmctl drove) is one JSON document, [`MigrationRecord::detail`], so the schema does not
//! change each time the diagnosis gains a field.

use serde::{Deserialize, Serialize};

/// Who wrote the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecordedBy {
    /// `vmctl record`, watching the cluster.
    Record,
    /// `vmctl migrate` (either path), for the run it drove.
    Migrate,
    /// `vmctl drain`, for each migration its evictions started.
    Drain,
    /// `vmctl abort`, for the migration it aborted.
    Abort,
}

impl RecordedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordedBy::Record => "record",
            RecordedBy::Migrate => "migrate",
            RecordedBy::Drain => "drain",
            RecordedBy::Abort => "abort",
        }
    }

    pub fn parse(s: &str) -> Option<RecordedBy> {
        Some(match s {
            "record" => RecordedBy::Record,
            "migrate" => RecordedBy::Migrate,
            "drain" => RecordedBy::Drain,
            "abort" => RecordedBy::Abort,
            _ => return None,
        })
    }
}

/// Which hypervisor stack ran the migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Platform {
    KubeVirt,
    Libvirt,
}

impl Platform {
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::KubeVirt => "kubevirt",
            Platform::Libvirt => "libvirt",
        }
    }

    pub fn parse(s: &str) -> Option<Platform> {
        Some(match s {
            "kubevirt" => Platform::KubeVirt,
            "libvirt" => Platform::Libvirt,
            _ => return None,
        })
    }
}

/// How the migration ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecordOutcome {
    Succeeded,
    Failed,
    /// Aborted on request (`vmctl abort`, a deleted VMIM, vmctl's own controller).
    Aborted,
    /// The object vanished before it reached a final phase (the VMI was deleted, say).
    Vanished,
}

impl RecordOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordOutcome::Succeeded => "succeeded",
            RecordOutcome::Failed => "failed",
            RecordOutcome::Aborted => "aborted",
            RecordOutcome::Vanished => "vanished",
        }
    }

    pub fn parse(s: &str) -> Option<RecordOutcome> {
        Some(match s {
            "succeeded" => RecordOutcome::Succeeded,
            "failed" => RecordOutcome::Failed,
            "aborted" => RecordOutcome::Aborted,
            "vanished" => RecordOutcome::Vanished,
            _ => return None,
        })
    }
}

/// One migration's end. Times are RFC 3339 strings (UTC, as the API server writes them) and
/// unix milliseconds where a query compares them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationRecord {
    /// Unique in the journal; a second insert of the same id is a no-op (the recorder after a
    /// restart, `migrate` and `record` both seeing one migration). KubeVirt: `kubevirt:` and
    /// the VMIM's UID. libvirt: `libvirt:` URI `/` domain UUID `/` start in unix ms.
    pub id: String,
    /// Which cluster (the kubeconfig context's cluster name, or `--cluster-name`); for libvirt
    /// the source host's URI. Lets one PostgreSQL journal hold a fleet of clusters.
    pub cluster: String,
    pub recorded_by: RecordedBy,
    pub platform: Platform,
    /// The VMI's namespace ("" for libvirt).
    pub namespace: String,
    /// The VMI (or libvirt domain) name.
    pub vm: String,
    /// The VMIM's name ("" for libvirt).
    pub migration: String,
    pub source_node: Option<String>,
    pub target_node: Option<String>,
    /// Launcher pods: the source and the target (KubeVirt only).
    pub source_pod: Option<String>,
    pub target_pod: Option<String>,
    /// The node an evacuation drained (`kubevirt.io/evacuationMigration` /
    /// `status.evacuationNodeName`), when the migration was one.
    pub evacuation_node: Option<String>,
    pub outcome: RecordOutcome,
    /// The VMIM phase as KubeVirt wrote it (`Succeeded`, `Failed`, …); libvirt: the job's
    /// end state.
    pub phase: String,
    /// `pre-copy` or `post-copy` (None: never started streaming).
    pub mode: Option<String>,
    /// The diagnosis: plane (`control-plane`, `data-plane`, `none`, `unknown`), cause id (the
    /// catalogue's, `triage::cause`), its one-sentence summary.
    pub plane: String,
    pub cause: String,
    pub summary: String,
    /// When the VMIM was created, the transfer started, and the migration ended (as the
    /// objects say: `migrationState.endTimestamp`, else the VMIM's final phase transition;
    /// None when they do not, never the writer's clock).
    pub created_at: Option<String>,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    /// `ended_at` in unix ms: what `--since`, the order and pruning compare. When the end is
    /// unknown (`ended_at` None: no object said when the migration ended), the last time its
    /// objects show (it ended at or after it), else `recorded_at`.
    pub ended_ms: i64,
    /// When the journal received it (RFC 3339).
    pub recorded_at: String,
    /// Created → ended, and streaming (started → ended), in milliseconds.
    pub duration_ms: Option<i64>,
    pub transfer_ms: Option<i64>,
    /// Memory data: processed (sent), total, remaining at the end, in bytes.
    pub data_processed_bytes: Option<i64>,
    pub data_total_bytes: Option<i64>,
    pub data_remaining_bytes: Option<i64>,
    /// Everything else, as JSON: `evidence` (the objects the diagnosis was made from: the
    /// VMIM, the VMI with its migrationState at the end, the VMI's other migrations, its
    /// launcher pods, the KubeVirt CR), `diagnosis` (explain's document as it was then),
    /// `progressSeries` (the per-pass samples of a run vmctl drove), `summary` (libvirt's).
    /// Not loaded by `history` queries unless asked for.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub detail: serde_json::Value,
}

impl MigrationRecord {
    /// The record's id for a KubeVirt migration.
    pub fn kubevirt_id(vmim_uid: &str) -> String {
        format!("kubevirt:{vmim_uid}")
    }
}

/// What `history` (and `explain`'s fallback) asks the journal for. Every field narrows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryQuery {
    pub cluster: Option<String>,
    /// One namespace (None: all).
    pub namespace: Option<String>,
    /// One VM by name (in `namespace`, when set).
    pub vm: Option<String>,
    /// One VMIM by name (in `namespace`, when set).
    pub migration: Option<String>,
    /// Migrations from or to this node (or evacuating it).
    pub node: Option<String>,
    /// Ended at or after this (unix ms).
    pub since_ms: Option<i64>,
    /// One cause id.
    pub cause: Option<String>,
    /// One outcome.
    pub outcome: Option<RecordOutcome>,
    /// Newest first, at most this many (None: all).
    pub limit: Option<usize>,
    /// Load `detail` too (explain's fallback, `-o json` of one record); history's tables
    /// leave it out.
    pub with_detail: bool,
}

/// How much the journal keeps (`vmctl record --retain 30d --max-size 1GiB`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retention {
    /// Records that ended longer ago than this are deleted (ms).
    pub max_age_ms: Option<i64>,
    /// The oldest records are deleted until the journal's data fits in this many bytes.
    pub max_bytes: Option<u64>,
}

/// What a prune removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pruned {
    pub by_age: u64,
    pub by_size: u64,
}
