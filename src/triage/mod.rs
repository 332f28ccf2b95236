//! Failure diagnosis (pure): evidence in, a diagnosis out. A catalogue of rules
//! (`rules/`, one file a rule: its [`Cause`] — stable id and plane —, the fields it reads,
//! its advice and its check together). The causes are the one vocabulary of vmctl: the
//! libvirt classifier (`migration::classify`) and the controller's aborts name the same ones,
//! and `explain --connect` returns the same [`Diagnosis`].
//!
//! Status comes first and events are a bonus: events expire after an hour and KubeVirt keeps
//! only five finished migrations per VMI, so every rule decides from object status when it
//! can and uses events to add the detail (the scheduler's message, the quota numbers).

pub mod cause;
mod decentralized;
pub mod dirty_rate;
mod history;
mod kubevirt19;
pub mod loops;
mod objects;
pub mod record;
pub mod report;
pub mod rules;
pub mod strings;
mod summary;
mod timeline;
mod unexplained;
mod view;

#[cfg(test)]
mod tests;

use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

use crate::model::{
    Event, KubeVirt, MigrationPolicy, Namespace, Pod, PodDisruptionBudget, VirtualMachineInstance,
    VirtualMachineInstanceMigration,
};
use crate::policy::migratability::Blocker;

pub use cause::Cause;
pub use history::{HistoryEntry, backoff as migration_backoff, history};
pub use loops::{Loop, LoopKind, LoopThresholds};
pub use rules::{CATALOGUE, Rule};
pub use summary::{route_words, target_words};
pub use unexplained::{
    BENIGN_POD_CONDITIONS, BENIGN_VMI_CONDITIONS, Confidence, Source, Unexplained, Unread,
};
pub use view::target_pods_named;

/// Everything `explain` read about one migration (or one VMI), as plain objects.
#[derive(Debug, Clone)]
pub struct Evidence {
    /// The as-of clock: elapsed times and deadlines are measured from it.
    pub now: Timestamp,
    /// The migration to explain; None for a VMI that has no migration left.
    pub migration: Option<VirtualMachineInstanceMigration>,
    /// Namespace and name of the VMI, known even when the VMI itself is gone.
    pub vmi_namespace: String,
    pub vmi_name: String,
    /// None when the VMI no longer exists.
    pub vmi: Option<VirtualMachineInstance>,
    /// Every migration of the VMI still present (the explained one included).
    pub migrations: Vec<VirtualMachineInstanceMigration>,
    /// virt-launcher pods of the namespace; triage picks the VMI's own.
    pub pods: Vec<Pod>,
    /// Events of the namespace; triage picks those about the VMI, its migrations and pods.
    pub events: Vec<Event>,
    pub kubevirt: Option<KubeVirt>,
    pub policies: Vec<MigrationPolicy>,
    pub namespace: Option<Namespace>,
    /// The cluster's migration load, read only when the migration is still Pending.
    pub load: Option<MigrationLoad>,
    /// What could not be read (a 403, a kind that is not installed): the diagnosis assumes.
    pub unread: Vec<Unread>,
    /// PodDisruptionBudgets of the namespace: one over the VMI's launcher pod can refuse its
    /// eviction.
    pub pdbs: Vec<PodDisruptionBudget>,
    /// When a retry or a wait counts as a loop that never ends (`--loop-failures`,
    /// `--sync-timeout`, `--handoff-timeout`).
    pub loops: LoopThresholds,
}

/// What competes with a Pending migration for the parallel-migration slots (FACTS §3.2).
#[derive(Debug, Clone, Default)]
pub struct MigrationLoad {
    /// Every migration in the cluster.
    pub migrations: Vec<VirtualMachineInstanceMigration>,
    /// `namespace/name` of every VMI on the same node as the explained VMI.
    pub vmis_on_node: Vec<String>,
}

impl Evidence {
    /// The same evidence, explaining another migration of the VMI.
    pub fn focused_on(&self, migration: &VirtualMachineInstanceMigration) -> Evidence {
        Evidence {
            migration: Some(migration.clone()),
            ..self.clone()
        }
    }
}

/// Which side of KubeVirt failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Plane {
    /// Kubernetes and virt-controller: scheduling, pods, quotas, policies, queueing.
    ControlPlane,
    /// virt-handler, virt-launcher, libvirt and QEMU moving the guest's memory and disks.
    DataPlane,
    /// Nothing failed (succeeded, in progress, aborted on request).
    None,
    Unknown,
}

impl Plane {
    pub fn as_str(self) -> &'static str {
        match self {
            Plane::ControlPlane => "control-plane",
            Plane::DataPlane => "data-plane",
            Plane::None => "none",
            Plane::Unknown => "unknown",
        }
    }
}

/// What became of the migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Succeeded,
    /// Not final and nothing is wrong (yet).
    InProgress,
    /// Not final, and something stops it from going further.
    Blocked,
    Failed,
    /// Failed because someone asked for the abort.
    Aborted,
    /// The VMI has no migration to explain.
    NoMigration,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::InProgress => "in-progress",
            Outcome::Blocked => "blocked",
            Outcome::Failed => "failed",
            Outcome::Aborted => "aborted",
            Outcome::NoMigration => "no-migration",
        }
    }

    /// A negative finding (exit code 1): the migration did not and will not happen as is.
    pub fn is_finding(self) -> bool {
        matches!(self, Outcome::Blocked | Outcome::Failed | Outcome::Aborted)
    }
}

/// One fact and where it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fact {
    /// `Kind/namespace/name` (`Kind/name` for cluster-scoped objects).
    pub object: String,
    /// The field path inside the object (`status.phase`, `status.conditions[type=X].message`).
    pub field: String,
    pub value: String,
    /// Context: what an event was about, how often it repeated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One step of the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEntry {
    /// RFC 3339.
    pub time: String,
    #[serde(skip)]
    pub at: Timestamp,
    /// Short `kind/name` of the object (`vmim/x`, `pod/y`, `vmi/z`).
    pub object: String,
    /// What happened, in a few words.
    pub what: String,
    /// A message, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Repeated events: how often and when last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_time: Option<String>,
    /// Where it was read (`status.phaseTransitionTimestamps`, `event`, …).
    pub source: String,
    /// Seconds since the first entry.
    pub offset_seconds: i64,
    /// Seconds since the previous entry (None for the first).
    pub since_previous_seconds: Option<i64>,
}

/// A launcher pod as it concerns this migration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodInfo {
    /// `source`, `target`, or `current` (the guest's pod now, when neither of the others).
    pub role: String,
    pub name: Option<String>,
    pub node: Option<String>,
    pub phase: Option<String>,
    /// False when the pod object is gone: its logs are gone with it.
    pub exists: bool,
    /// The guest runs in this pod now: read its logs.
    pub live: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationInfo {
    pub namespace: String,
    pub name: String,
    pub uid: Option<String>,
    pub phase: String,
    pub created: Option<String>,
    /// False when the VMIM is gone and only the VMI's migrationState tells the story.
    pub object_exists: bool,
    /// The node an evacuation migration drains (annotation kubevirt.io/evacuationMigration).
    pub evacuation_node: Option<String>,
    pub source_node: Option<String>,
    pub target_node: Option<String>,
    pub mode: Option<String>,
    pub start_timestamp: Option<String>,
    pub end_timestamp: Option<String>,
    /// Streaming time so far (or in all, once ended).
    pub elapsed_seconds: Option<i64>,
    /// The completion budget the migration monitor allows (FACTS §5.2).
    pub budget_seconds: Option<u64>,
    pub policy: Option<String>,
    /// Which object's `status.migrationState` describes this migration (None: neither).
    pub state_from: Option<String>,
    /// Where the effective migration configuration (budget, post-copy…) was read.
    pub configuration_from: String,
    /// `migrationState.migrationNetworkType`: `Pod` or `Migration` (dedicated network, v1.6+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_type: Option<String>,
    /// `migrationState.targetMemoryOverhead` (v1.9+), as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_memory_overhead: Option<String>,
    /// `spec.priority` (v1.7+): system-critical, user-triggered, system-maintenance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    /// A decentralized (cross-cluster) migration: its role, peer and sides (v1.6+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decentralized: Option<decentralized::DecentralizedInfo>,
    /// The stall detector (v1.9+, gate MigrationStallDetection), when it applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_detector: Option<kubevirt19::StallDetectorInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VmiInfo {
    pub namespace: String,
    pub name: String,
    pub exists: bool,
    pub phase: Option<String>,
    pub node: Option<String>,
    /// `status.evacuationNodeName`.
    pub evacuation_node: Option<String>,
    /// From the LiveMigratable condition; None when absent.
    pub live_migratable: Option<bool>,
    /// Why it cannot live-migrate now.
    pub not_migratable_because: Vec<Blocker>,
}

/// The rule that decided, as the catalogue describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleInfo {
    pub id: &'static str,
    pub plane: Plane,
    pub reads: &'static [&'static str],
    pub advice: &'static str,
}

/// The answer: what happened, which plane, why, the proof, and what to do.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnosis {
    pub outcome: Outcome,
    pub plane: Plane,
    /// The cause the deciding rule names (written as its stable id).
    pub cause: Cause,
    /// One sentence.
    pub summary: String,
    /// True when the cause is inferred (e.g. from elapsed time) rather than read.
    pub inferred: bool,
    pub rule: RuleInfo,
    pub migration: Option<MigrationInfo>,
    pub vmi: VmiInfo,
    pub pods: Vec<PodInfo>,
    /// What an operator must not miss: evacuation, post-copy, pods that are gone, another
    /// migration's state, why the VM cannot live-migrate.
    pub attention: Vec<String>,
    pub evidence: Vec<Fact>,
    pub timeline: Vec<TimelineEntry>,
    pub next_steps: Vec<String>,
    /// high: read from status, nothing unexplained; medium: inferred or events alone; low:
    /// unknown, something unexplained or assumed.
    pub confidence: Confidence,
    /// Warning events and abnormal conditions in the migration's window that the evidence
    /// does not account for.
    pub unexplained: Vec<Unexplained>,
    /// What could not be read and what was assumed instead (expired events, a 403, a missing kind).
    pub assumptions: Vec<String>,
}

/// Explains the evidence's migration (or, without one, the VMI's migratability).
pub fn diagnose(evidence: &Evidence) -> Diagnosis {
    let view = view::View::new(evidence);
    let (mut rule, mut finding) = rules::decide(&view);
    let mut plane = rule.cause.plane;
    let mut facts = merge_facts(view.base_facts(), &finding.evidence);
    let mut unexplained = unexplained::collect(&view, &facts);
    // Never confidently wrong: "in progress, nothing blocks it" (or "queued") cannot stand
    // next to a Warning newer than the last phase change that nothing explains.
    if rules::outcome(&view, rule, &finding) == Outcome::InProgress
        && let Some((r, f, p)) = unexplained::instead_of_in_progress(&view, &unexplained)
    {
        (rule, finding, plane) = (r, f, p);
        facts = merge_facts(view.base_facts(), &finding.evidence);
        unexplained = unexplained::collect(&view, &facts);
    }
    let outcome = rules::outcome(&view, rule, &finding);
    let assumptions = unexplained::assumptions(&view);
    let confidence = unexplained::confidence(
        rule,
        finding.inferred,
        &finding.evidence,
        &unexplained,
        &assumptions,
    );
    let mut next_steps = finding.next_steps;
    for step in view.common_next_steps(rule) {
        if !next_steps.contains(&step) {
            next_steps.push(step);
        }
    }
    Diagnosis {
        outcome,
        plane,
        cause: rule.cause,
        summary: finding.summary,
        inferred: finding.inferred,
        rule: RuleInfo {
            id: rule.cause.id,
            plane: rule.cause.plane,
            reads: rule.reads,
            advice: rule.advice,
        },
        migration: summary::migration_info(&view),
        vmi: view.vmi_info(),
        pods: view.pod_infos(),
        attention: summary::attention(&view),
        evidence: facts,
        timeline: timeline::build(&view),
        next_steps,
        confidence,
        unexplained,
        assumptions,
    }
}

/// The base facts, then the rule's, without repeats.
fn merge_facts(mut facts: Vec<Fact>, more: &[Fact]) -> Vec<Fact> {
    for f in more {
        if !facts
            .iter()
            .any(|g| g.object == f.object && g.field == f.field && g.value == f.value)
        {
            facts.push(f.clone());
        }
    }
    facts
}
