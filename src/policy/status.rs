//! The fleet view `status` shows (pure): one row per VMI (node, phase, eviction strategy,
//! migratability, both launcher pods during a migration and which one is live, evacuation),
//! the migrations in flight, and what needs attention. Built from plain objects; `status`
//! and `status --watch` both run it.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::model::vmi::{MigrationMode, MigrationState};
use crate::model::vmim::{DecentralizedRole, MigrationPhase};
use crate::model::{
    KubeVirt, Pod, PodDisruptionBudget, Time, VirtualMachineInstance,
    VirtualMachineInstanceMigration,
};
use crate::names::suggest;
use crate::policy::budget::completion_budget_seconds;
use crate::policy::drain::fate::{DrainFate, FateInputs, fates};
use crate::policy::eviction::{StrategySource, effective_eviction_strategy};
use crate::policy::index::{MigrationIndex, PodIndex};
use crate::policy::migratability::{Blocker, migratability};
use crate::policy::pods::{LauncherPod, launcher_pods};
use crate::triage::loops::{self, Loop, LoopKind, LoopThresholds};
use crate::triage::strings::scheduler_summary;

/// Everything `status` reads.
#[derive(Debug, Default)]
pub struct StatusInputs {
    pub vmis: Vec<VirtualMachineInstance>,
    pub vmims: Vec<VirtualMachineInstanceMigration>,
    pub pods: Vec<Pod>,
    pub kubevirt: Option<KubeVirt>,
    /// When a retry or a wait counts as a loop that never ends.
    pub loops: LoopThresholds,
    /// The cluster's nodes (name, cordoned), when they were read.
    pub nodes: Vec<NodeFacts>,
}

/// A node as `status` reads it: its name and `spec.unschedulable`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeFacts {
    pub name: String,
    pub cordoned: bool,
}

impl NodeFacts {
    pub fn of(node: &crate::model::Node) -> NodeFacts {
        NodeFacts {
            name: node.metadata.name.clone().unwrap_or_default(),
            cordoned: node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true),
        }
    }
}

/// A node cordoned or evacuated, and how far its drain is: every count is of objects in
/// scope, read from the API (VMIs, VMIMs, launcher pods), never from what a drain said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeDrain {
    pub name: String,
    /// `spec.unschedulable` (kubectl cordon, a drain). False for a node VMIs are evacuated
    /// from that is not cordoned.
    pub cordoned: bool,
    /// `draining` (cordoned, VMIs or launcher pods left, evacuations seen), `drained`
    /// (cordoned, nothing left), `cordoned` (VMIs left, none marked for evacuation),
    /// `evacuation-source` (VMIs evacuated from it, the node not cordoned).
    pub state: String,
    /// VMIs still running on it (`status.nodeName`), `namespace/name`.
    pub vmis_left: Vec<String>,
    /// Evictions KubeVirt accepted as evacuations: VMIs marked with
    /// `status.evacuationNodeName` = this node.
    pub evictions_accepted: usize,
    /// Migrations not finished of VMIs leaving it (source node, or evacuation annotation).
    pub migrations_in_flight: usize,
    /// Launcher pods on it not Succeeded/Failed: 0 means the pods are gone.
    pub launcher_pods_left: usize,
    /// VMIs an evacuation from this node moved: the last attempt succeeded and their
    /// `status.nodeName` is another node (a failed attempt then a successful retry counts).
    pub moved: Vec<String>,
}

/// A VMI's successive evacuation migrations from one node, as one chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvacuationChain {
    /// The node evacuated (annotation `kubevirt.io/evacuationMigration`).
    pub node: String,
    /// The evacuation VMIMs from that node so far, the newest included: attempt n.
    pub attempt: usize,
    pub failed_attempts: usize,
    /// The newest VMIM of the chain.
    pub migration: String,
    /// `in-flight`, `succeeded` or `failed`: the newest attempt's outcome.
    pub result: String,
    /// The failure reason of the newest failed attempt, when one failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
}

/// A Failed VMIM the VMI's migrationState does not describe (see [`VmiRow::unrecorded_failure`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FailedAttempt {
    pub name: String,
    /// Since its Failed phase transition (its creation when that is not recorded).
    pub ago_seconds: Option<i64>,
    pub source_node: Option<String>,
    pub failure_reason: Option<String>,
    /// Its place among the VMI's VMIMs since the last one that succeeded, oldest first.
    pub attempt: usize,
    /// The VMI's VMIM in flight, created after it: the retry.
    pub retry: Option<String>,
}

/// The VMI's newest Failed VMIM, when `state` (its migrationState) does not describe it and
/// nothing newer has succeeded.
fn unrecorded_failure(
    vmi: &VirtualMachineInstance,
    of_vmi: &[&VirtualMachineInstanceMigration],
    state: Option<&MigrationState>,
    now: Timestamp,
) -> Option<FailedAttempt> {
    use crate::model::vmim::MigrationPhase as P;
    let mut all: Vec<&VirtualMachineInstanceMigration> = of_vmi.to_vec();
    all.sort_by_key(|m| {
        (
            m.metadata.creation_timestamp.as_ref().map(|t| t.0),
            m.name().to_string(),
        )
    });
    let since_success = all
        .iter()
        .rposition(|m| m.phase() == P::Succeeded)
        .map_or(0, |i| i + 1);
    let attempts = &all[since_success..];
    let at = attempts.iter().rposition(|m| m.phase() == P::Failed)?;
    let failed = attempts[at];
    if state.is_some_and(|s| state_belongs_to(s, failed)) {
        return None;
    }
    let failed_at = failed
        .status
        .phase_transition_timestamps
        .iter()
        .rev()
        .find(|t| t.phase == "Failed")
        .and_then(|t| t.phase_transition_timestamp.as_ref())
        .or(failed.metadata.creation_timestamp.as_ref());
    // migrationState describes a newer migration than this one: it is not unrecorded.
    let state_end = state.and_then(|s| s.end_timestamp.as_ref().or(s.start_timestamp.as_ref()));
    if let (Some(end), Some(at)) = (state_end, failed_at)
        && end.0 > at.0
    {
        return None;
    }
    let own = failed.status.migration_state.as_ref();
    Some(FailedAttempt {
        name: failed.name().to_string(),
        ago_seconds: failed_at.map(|t| secs_between(t, now)),
        source_node: own
            .and_then(|s| s.source_node.clone())
            .or_else(|| vmi.status.node_name.clone()),
        failure_reason: own
            .and_then(|s| s.failure_reason.as_ref())
            .map(|r| r.trim_end().to_string()),
        attempt: at + 1,
        retry: attempts[at + 1..]
            .iter()
            .rev()
            .find(|m| !m.is_final())
            .map(|m| m.name().to_string()),
    })
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusReport {
    pub api_version: &'static str,
    pub kind: &'static str,
    /// The instant ages and elapsed times are measured from.
    pub as_of: String,
    pub source: String,
    pub kubevirt: KubeVirtInfo,
    /// Nodes cordoned or evacuated, and how far their drain is: the first thing to see.
    pub nodes: Vec<NodeDrain>,
    pub vmis: Vec<VmiRow>,
    /// VMIMs that are not final (Succeeded/Failed), oldest first.
    pub migrations: Vec<MigrationRow>,
    pub warnings: Vec<Warning>,
    /// Objects that were there but do not decode, each named with the field at fault; the
    /// rest of the report stands without them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// The namespace looked in (none: every namespace), for "No VMIs found in …".
    #[serde(skip)]
    pub namespace: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeVirtInfo {
    /// False when no KubeVirt CR was found: KubeVirt's defaults are assumed.
    pub found: bool,
    pub version: Option<String>,
    pub cluster_eviction_strategy: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VmiRow {
    pub namespace: String,
    pub name: String,
    /// The owning VirtualMachine, or null for a bare VMI.
    pub vm: Option<String>,
    pub node: Option<String>,
    pub phase: String,
    pub eviction_strategy: String,
    pub eviction_strategy_source: StrategySource,
    /// From the LiveMigratable condition; null when it is not reported yet.
    pub live_migratable: Option<bool>,
    pub reasons: Vec<Blocker>,
    pub evacuation: Option<Evacuation>,
    /// Its evacuation migrations from one node as one chain (attempt n, the last failure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evacuation_chain: Option<EvacuationChain>,
    pub pods: Vec<LauncherPod>,
    /// The migration in flight, if any.
    pub migration: Option<InFlight>,
    /// The most recent finished migration, from the VMI's migrationState.
    pub last_migration: Option<LastMigration>,
    /// Its newest Failed VMIM when the VMI's migrationState does not describe it (its target
    /// pod never ran, so migrationState still tells an older migration): `top` lists it as a
    /// failure. Not part of status's output.
    #[serde(skip)]
    pub unrecorded_failure: Option<FailedAttempt>,
    /// v1.6+ migration conditions besides LiveMigratable and EvictionRequested (which
    /// `reasons` and `evacuation` carry): MigrationRequired, DecentralizedLiveMigrationFailure,
    /// StorageLiveMigratable=False.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub migration_conditions: Vec<VmiCondition>,
    /// A loop that never ends by itself (evacuation-loop, decentralized-sync-stuck,
    /// backend-storage-handoff-stuck): since when, how many attempts, the blocking object,
    /// the last failure's cause and the way out.
    #[serde(rename = "loop", skip_serializing_if = "Option::is_none")]
    pub in_loop: Option<Loop>,
    /// What a drain of its node would do to it, as plan-drain decides it
    /// ([`crate::policy::drain::fate`]): only the fates that need no placement (a VMI that
    /// live-migrates has none here: where it goes is plan-drain's to say).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drain: Option<DrainFate>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VmiCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: Option<String>,
    pub message: Option<String>,
}

/// A decentralized (cross-cluster) migration as `status` shows it (v1.6+).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decentralized {
    /// `sender` (spec.sendTo) or `receiver` (spec.receive).
    pub role: String,
    /// The migrationID shared with the peer cluster's VMIM.
    pub migration_id: Option<String>,
    /// `spec.sendTo.connectURL`: the peer's synchronization address (sender only).
    pub connect_url: Option<String>,
    /// `status.synchronizationAddresses` of this side.
    pub synchronization_addresses: Vec<String>,
    /// Which side runs the guest now: `source` or `target`.
    pub live_side: String,
    /// True when the live side is in this cluster.
    pub live_here: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evacuation {
    /// `status.evacuationNodeName`: the node being drained.
    pub node_name: String,
    /// The `EvictionRequested` condition is present (v1.7+).
    pub eviction_requested: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InFlight {
    /// The VMIM, when one exists.
    pub name: Option<String>,
    pub uid: Option<String>,
    pub phase: String,
    pub source_node: Option<String>,
    pub target_node: Option<String>,
    pub source_pod: Option<String>,
    pub target_pod: Option<String>,
    pub mode: Option<String>,
    pub start_timestamp: Option<String>,
    pub elapsed_seconds: Option<i64>,
    /// The completion budget the migration monitor allows.
    pub budget_seconds: Option<u64>,
    /// Post-copy: an abort or a network failure now loses the guest.
    pub point_of_no_return: bool,
    /// `spec.priority` of the VMIM (v1.7+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decentralized: Option<Decentralized>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LastMigration {
    pub name: Option<String>,
    pub uid: Option<String>,
    /// `succeeded`, `failed` or `aborted`.
    pub result: String,
    pub end_timestamp: Option<String>,
    pub ago_seconds: Option<i64>,
    pub source_node: Option<String>,
    pub target_node: Option<String>,
    pub failure_reason: Option<String>,
    /// Where this was read: `vmim` (the VMIM, or the VMI's migrationState naming it) or
    /// `vmi-status` (the VMI's migrationState alone: no VMIM of it is left, so no name).
    pub recorded_in: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationRow {
    pub namespace: String,
    pub name: String,
    pub vmi: String,
    pub phase: String,
    pub age_seconds: Option<i64>,
    pub source_node: Option<String>,
    pub target_node: Option<String>,
    pub source_pod: Option<String>,
    pub target_pod: Option<String>,
    /// Which pod runs the guest now.
    pub live_pod: Option<String>,
    pub mode: Option<String>,
    /// The node this evacuation migration drains (annotation kubevirt.io/evacuationMigration).
    pub evacuation_node: Option<String>,
    pub conditions: Vec<String>,
    /// What the migration is waiting for, in words.
    pub waiting_for: String,
    /// `spec.priority` (v1.7+): the queue serves system-critical, then user-triggered, then
    /// system-maintenance, then unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decentralized: Option<Decentralized>,
    /// The loop its VMI is caught in, copied from the VMI's row for the watch's line (the
    /// JSON says it under `vmis[].loop`).
    #[serde(skip)]
    pub loop_kind: Option<LoopKind>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Warning {
    /// `namespace/name` of the VMI (absent for a warning about the input as a whole).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub vmi: String,
    /// `evacuation`, `post-copy`, `failed`, `blocks-drain`, `not-migratable`, or a loop's
    /// cause (`evacuation-loop`, `decentralized-sync-stuck`, `backend-storage-handoff-stuck`).
    pub kind: String,
    pub message: String,
}

fn ts(t: &Time) -> String {
    crate::text::timestamp(t.0)
}

/// The VMI's evacuation VMIMs from the node of its newest one, oldest first, as one chain.
fn evacuation_chain(
    vmi: &VirtualMachineInstance,
    of_vmi: &[&VirtualMachineInstanceMigration],
) -> Option<EvacuationChain> {
    let created = |m: &VirtualMachineInstanceMigration| {
        (
            m.metadata.creation_timestamp.as_ref().map(|t| t.0),
            m.name().to_string(),
        )
    };
    let mut chain: Vec<&VirtualMachineInstanceMigration> = of_vmi
        .iter()
        .copied()
        .filter(|m| m.evacuation_node().is_some())
        .collect();
    chain.sort_by_key(|m| created(m));
    let node = chain.last()?.evacuation_node()?.to_string();
    chain.retain(|m| m.evacuation_node() == Some(node.as_str()));
    let last = *chain.last()?;
    let failure_of = |m: &VirtualMachineInstanceMigration| {
        m.status
            .migration_state
            .as_ref()
            .and_then(|s| s.failure_reason.clone())
            .or_else(|| {
                vmi.status
                    .migration_state
                    .as_ref()
                    .filter(|s| state_belongs_to(s, m))
                    .and_then(|s| s.failure_reason.clone())
            })
            .map(|r| r.lines().next().unwrap_or_default().trim().to_string())
            .unwrap_or_else(|| "no reason recorded".into())
    };
    use crate::model::vmim::MigrationPhase as P;
    let failed: Vec<&&VirtualMachineInstanceMigration> =
        chain.iter().filter(|m| m.phase() == P::Failed).collect();
    Some(EvacuationChain {
        node,
        attempt: chain.len(),
        failed_attempts: failed.len(),
        migration: last.name().to_string(),
        result: match last.phase() {
            P::Succeeded => "succeeded",
            P::Failed => "failed",
            _ => "in-flight",
        }
        .into(),
        last_failure: failed.last().map(|m| failure_of(m)),
    })
}

/// The nodes to show first: cordoned ones, and those VMIs or migrations evacuate.
fn node_drains(
    inputs: &StatusInputs,
    vmis: &[VmiRow],
    warnings: &mut Vec<Warning>,
) -> Vec<NodeDrain> {
    let mut nodes: BTreeMap<String, bool> = inputs
        .nodes
        .iter()
        .filter(|n| n.cordoned)
        .map(|n| (n.name.clone(), true))
        .collect();
    let shown: std::collections::HashSet<(&str, &str)> = vmis
        .iter()
        .map(|v| (v.namespace.as_str(), v.name.as_str()))
        .collect();
    let evacuated = vmis
        .iter()
        .filter_map(|v| v.evacuation.as_ref().map(|e| e.node_name.clone()))
        .chain(
            // Of the VMIs shown (`-l`, names): the report's other counts are of those.
            inputs
                .vmims
                .iter()
                .filter(|m| !m.is_final())
                .filter(|m| shown.contains(&(m.namespace(), m.spec.vmi_name.as_str())))
                .filter_map(|m| m.evacuation_node().map(str::to_string)),
        );
    for name in evacuated {
        nodes.entry(name).or_insert(false);
    }
    // One pass over each list, counted by node: linear in the fleet (status -A on 10,000
    // VMIs), whatever the number of nodes.
    let id = |v: &VmiRow| format!("{}/{}", v.namespace, v.name);
    let mut left: HashMap<&str, Vec<String>> = HashMap::new();
    let mut accepted: HashMap<&str, usize> = HashMap::new();
    let mut moved_from: HashMap<&str, Vec<String>> = HashMap::new();
    let mut by_vmi: HashMap<(&str, &str), &VmiRow> = HashMap::new();
    for v in vmis {
        by_vmi.insert((v.namespace.as_str(), v.name.as_str()), v);
        if let Some(n) = v.node.as_deref().filter(|n| nodes.contains_key(*n)) {
            left.entry(n).or_default().push(id(v));
        }
        if let Some(e) = &v.evacuation {
            *accepted.entry(e.node_name.as_str()).or_default() += 1;
        }
        if let Some(c) = v
            .evacuation_chain
            .as_ref()
            .filter(|c| c.result == "succeeded" && v.node.as_deref() != Some(c.node.as_str()))
        {
            moved_from.entry(c.node.as_str()).or_default().push(id(v));
        }
    }
    let mut migrating: HashMap<&str, usize> = HashMap::new();
    for m in inputs.vmims.iter().filter(|m| !m.is_final()) {
        let Some(vmi) = by_vmi.get(&(m.namespace(), m.spec.vmi_name.as_str())) else {
            continue;
        };
        let vmi = Some(vmi);
        let mut of: Vec<&str> = [
            m.evacuation_node(),
            vmi.and_then(|v| v.node.as_deref()),
            vmi.and_then(|v| v.migration.as_ref())
                .and_then(|f| f.source_node.as_deref()),
        ]
        .into_iter()
        .flatten()
        .collect();
        of.sort_unstable();
        of.dedup();
        for n in of {
            *migrating.entry(n).or_default() += 1;
        }
    }
    let mut pods_left: HashMap<&str, usize> = HashMap::new();
    for p in &inputs.pods {
        let finished = matches!(
            p.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Succeeded" | "Failed")
        );
        if let Some(n) = p.spec.as_ref().and_then(|s| s.node_name.as_deref())
            && !finished
        {
            *pods_left.entry(n).or_default() += 1;
        }
    }
    let mut out = Vec::new();
    for (name, cordoned) in &nodes {
        let key = name.as_str();
        let vmis_left = left.remove(key).unwrap_or_default();
        let evictions_accepted = accepted.get(key).copied().unwrap_or(0);
        let migrations_in_flight = migrating.get(key).copied().unwrap_or(0);
        let launcher_pods_left = pods_left.get(key).copied().unwrap_or(0);
        let moved = moved_from.remove(key).unwrap_or_default();
        let (name, cordoned) = (name.clone(), *cordoned);
        let busy = !vmis_left.is_empty() || launcher_pods_left > 0;
        let state = match (cordoned, busy) {
            (false, _) => "evacuation-source",
            (true, false) => "drained",
            (true, true) if evictions_accepted + migrations_in_flight + moved.len() > 0 => {
                "draining"
            }
            (true, true) => "cordoned",
        };
        if cordoned && !vmis_left.is_empty() && migrations_in_flight == 0 {
            warnings.push(Warning {
                vmi: String::new(),
                kind: "cordoned-node".into(),
                message: format!(
                    "node {name} is cordoned and {} still on it with no migration in flight ({}): its drain is not finished",
                    plural(vmis_left.len(), "VMI is", "VMIs are"),
                    names_list(&vmis_left)
                ),
            });
        }
        out.push(NodeDrain {
            state: state.into(),
            name,
            cordoned,
            vmis_left,
            evictions_accepted,
            migrations_in_flight,
            launcher_pods_left,
            moved,
        });
    }
    out
}

/// `1 VMI is`, `3 VMIs are`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// At most five names, then how many more.
pub fn names_list(names: &[String]) -> String {
    let mut text = names.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > 5 {
        text.push_str(&format!(" and {} more", names.len() - 5));
    }
    text
}

fn secs_between(from: &Time, now: Timestamp) -> i64 {
    now.as_second() - from.0.as_second()
}

/// When a finished VMIM ended: its Succeeded/Failed phase transition, else its own
/// migrationState's end.
fn vmim_end(m: &VirtualMachineInstanceMigration) -> Option<&Time> {
    m.phase_entered(m.phase().as_str()).or_else(|| {
        m.status
            .migration_state
            .as_ref()
            .and_then(|s| s.end_timestamp.as_ref())
    })
}

fn result_words(s: &MigrationState) -> &'static str {
    if !s.failed {
        "succeeded"
    } else if s.abort_requested && s.abort_status == Some(crate::model::vmi::AbortStatus::Succeeded)
    {
        "aborted"
    } else {
        "failed"
    }
}

/// The VMI's last finished migration: its newest finished VMIM (by the time it ended), or
/// the VMI's `status.migrationState` when that is the same migration (its migrationUid
/// names the VMIM: it has the nodes) or a newer one whose VMIM is gone, or when no finished
/// VMIM exists. A migrationState left from an older migration never stands for the last one.
fn last_migration(
    state: Option<&MigrationState>,
    vmims: &[&VirtualMachineInstanceMigration],
    now: Timestamp,
) -> Option<LastMigration> {
    let state = state.filter(|s| s.completed);
    let newest = vmims
        .iter()
        .filter(|m| m.is_final())
        .max_by_key(|m| {
            vmim_end(m)
                .or(m.metadata.creation_timestamp.as_ref())
                .map(|t| t.0)
        })
        .copied();
    let from_state =
        |s: &MigrationState, vmim: Option<&VirtualMachineInstanceMigration>| LastMigration {
            name: vmim.map(|m| m.name().to_string()),
            uid: s.migration_uid.clone(),
            result: result_words(s).into(),
            end_timestamp: s.end_timestamp.as_ref().map(ts),
            ago_seconds: s.end_timestamp.as_ref().map(|t| secs_between(t, now)),
            source_node: s.source_node.clone(),
            target_node: s.target_node.clone(),
            failure_reason: s.failure_reason.as_ref().map(|r| r.trim_end().to_string()),
            recorded_in: if vmim.is_some() { "vmim" } else { "vmi-status" }.into(),
        };
    let Some(m) = newest else {
        return state.map(|s| from_state(s, None));
    };
    if let Some(s) = state {
        if state_belongs_to(s, m) {
            return Some(from_state(s, Some(m)));
        }
        // A newer migration whose VMIM is gone (deleted after it finished): the VMI's
        // status is its only record.
        let vmim_gone = !vmims.iter().any(|x| state_belongs_to(s, x));
        let newer = match (s.end_timestamp.as_ref(), vmim_end(m)) {
            (Some(a), Some(b)) => a.0 > b.0,
            _ => false,
        };
        if vmim_gone && newer {
            return Some(from_state(s, None));
        }
    }
    let ms = m.status.migration_state.as_ref();
    let end = vmim_end(m);
    let result = match (m.phase(), ms) {
        (MigrationPhase::Succeeded, _) => "succeeded",
        (_, Some(s)) if s.abort_requested => result_words(s),
        _ if m.condition("migrationAbortRequested").is_some() => "aborted",
        _ => "failed",
    };
    Some(LastMigration {
        name: Some(m.name().to_string()),
        uid: m.uid().map(str::to_string),
        result: result.into(),
        end_timestamp: end.map(ts),
        ago_seconds: end.map(|t| secs_between(t, now)),
        source_node: ms.and_then(|s| s.source_node.clone()),
        target_node: ms.and_then(|s| s.target_node.clone()),
        failure_reason: ms
            .and_then(|s| s.failure_reason.as_ref())
            .map(|r| r.trim_end().to_string()),
        recorded_in: "vmim".into(),
    })
}

fn state_belongs_to(state: &MigrationState, vmim: &VirtualMachineInstanceMigration) -> bool {
    state.migration_uid.is_some() && state.migration_uid.as_deref() == vmim.uid()
}

/// The decentralized side of a VMIM, with the side that runs the guest.
fn decentralized_of(
    m: &VirtualMachineInstanceMigration,
    state: Option<&MigrationState>,
) -> Option<Decentralized> {
    let role = m.decentralized_role()?;
    let target_live = m.phase() == crate::model::vmim::MigrationPhase::Succeeded
        || state.is_some_and(|st| {
            st.mode == Some(MigrationMode::PostCopy) || (st.completed && !st.failed)
        });
    let live_here = match role {
        DecentralizedRole::Sender => !target_live,
        DecentralizedRole::Receiver => target_live,
    };
    Some(Decentralized {
        role: role.as_str().to_string(),
        migration_id: m.decentralized_id().map(str::to_string),
        connect_url: m.spec.send_to.as_ref().and_then(|s| s.connect_url.clone()),
        synchronization_addresses: m.status.synchronization_addresses.clone(),
        live_side: if target_live { "target" } else { "source" }.into(),
        live_here,
    })
}

/// The VMI's v1.6+ migration conditions worth showing (FACTS §1.2).
fn migration_conditions(vmi: &VirtualMachineInstance, evacuation_shown: bool) -> Vec<VmiCondition> {
    use crate::model::vmi::{
        COND_DECENTRALIZED_FAILURE, COND_EVICTION_REQUESTED, COND_MIGRATION_REQUIRED,
        COND_STORAGE_LIVE_MIGRATABLE,
    };
    vmi.status
        .conditions
        .iter()
        .filter(|c| match c.type_.as_str() {
            COND_MIGRATION_REQUIRED | COND_DECENTRALIZED_FAILURE => c.is_true(),
            COND_STORAGE_LIVE_MIGRATABLE => c.is_false(),
            // Shown with the evacuation when evacuationNodeName is set.
            COND_EVICTION_REQUESTED => c.is_true() && !evacuation_shown,
            _ => false,
        })
        .map(|c| VmiCondition {
            type_: c.type_.clone(),
            status: c.status.clone(),
            reason: c.reason.clone(),
            message: c.message.clone(),
        })
        .collect()
}

/// Builds the report. Pure: the inputs and the clock in, the report out.
pub fn build_report(inputs: &StatusInputs, now: Timestamp, source: &str) -> StatusReport {
    build_report_with(inputs, None, now, source)
}

/// What `status` reads besides [`StatusInputs`] so that what it says a drain does is
/// plan-drain's decision ([`fates`]): the PodDisruptionBudgets in scope and the API
/// server's version (how the eviction API reads `selector: {}`).
#[derive(Debug, Clone, Default)]
pub struct DrainFacts {
    pub pdbs: Vec<PodDisruptionBudget>,
    pub server_version: Option<crate::model::ServerVersion>,
}

/// [`build_report`] with [`DrainFacts`] (None: not read; a PDB may then still refuse a
/// shutdown status says a drain makes).
pub fn build_report_with(
    inputs: &StatusInputs,
    drain_facts: Option<&DrainFacts>,
    now: Timestamp,
    source: &str,
) -> StatusReport {
    let kubevirt = inputs.kubevirt.as_ref();
    let node_names: Vec<String> = inputs.nodes.iter().map(|n| n.name.clone()).collect();
    let mut drain_fates = fates(&FateInputs {
        vmis: &inputs.vmis,
        nodes: &node_names,
        vmims: &inputs.vmims,
        pods: &inputs.pods,
        pdbs: drain_facts.map(|f| f.pdbs.as_slice()),
        kubevirt,
        server_version: drain_facts.and_then(|f| f.server_version.as_ref()),
        now: Some(Time(now)),
        loops: inputs.loops,
    });
    let cluster_config = kubevirt.map(KubeVirt::migration_config);
    let cluster_per_gib = cluster_config
        .as_ref()
        .map(|c| c.completion_timeout_per_gib)
        .unwrap_or(crate::model::kubevirt::DEFAULT_COMPLETION_TIMEOUT_PER_GIB);
    let mut warnings = Vec::new();
    let mut vmis = Vec::new();
    // Every join below is a lookup: status -A on 10,000 VMIs stays linear.
    let pod_index = PodIndex::new(&inputs.pods);
    let migration_index = MigrationIndex::new(&inputs.vmims);
    for vmi in &inputs.vmis {
        let id = format!("{}/{}", vmi.namespace(), vmi.name());
        let strategy = effective_eviction_strategy(vmi, kubevirt);
        let mig = migratability(vmi);
        let active = migration_index.active_of(vmi.namespace(), vmi.name());
        let state = vmi.status.migration_state.as_ref();
        let state_in_flight = match (state, active) {
            (Some(s), Some(m)) if state_belongs_to(s, m) => Some(s),
            (Some(s), None) if s.is_migrating(&Time(now)) && !s.completed => Some(s),
            _ => None,
        };
        let migration = if active.is_some() || state_in_flight.is_some() {
            let s = state_in_flight;
            let pending_source_pod = active
                .and_then(|m| m.status.migration_state.as_ref())
                .and_then(|ms| ms.source_pod.clone());
            let per_gib = s
                .and_then(|s| s.migration_configuration.as_ref())
                .and_then(|c| c.completion_timeout_per_gib)
                .unwrap_or(cluster_per_gib);
            let start = s.and_then(|s| s.start_timestamp.as_ref());
            let post_copy = s.is_some_and(|s| s.mode == Some(MigrationMode::PostCopy));
            // A decentralized migration's sides are in sourceState/targetState: the local
            // sourceNode/targetNode name only this cluster's half.
            let decentralized = active.and_then(|m| decentralized_of(m, state));
            // Only a state that names this migration on one of its sides.
            let dstate = decentralized.as_ref().and(state).filter(|st| {
                s.is_some()
                    || [st.source_state.as_ref(), st.target_state.as_ref()]
                        .into_iter()
                        .flatten()
                        .any(|x| {
                            x.migration_uid.is_some()
                                && x.migration_uid.as_deref() == active.and_then(|m| m.uid())
                        })
            });
            let src_side = dstate.and_then(|st| st.source_state.as_ref());
            let tgt_side = dstate.and_then(|st| st.target_state.as_ref());
            Some(InFlight {
                name: active.map(|m| m.name().to_string()),
                uid: active.and_then(|m| m.uid().map(str::to_string)),
                phase: active
                    .map(|m| m.phase().as_str().to_string())
                    .unwrap_or_else(|| "Running".into()),
                source_node: src_side
                    .and_then(|x| x.node.clone())
                    .or_else(|| s.and_then(|s| s.source_node.clone()))
                    .or_else(|| {
                        // A receiver's VMI is the target: its node is not the source.
                        (decentralized.as_ref().map(|d| d.role.as_str()) != Some("receiver"))
                            .then(|| vmi.status.node_name.clone())
                            .flatten()
                    }),
                // Before the hand-off migrationState names no target node: the target
                // pod's node, as the migrations table says.
                target_node: tgt_side
                    .and_then(|x| x.node.clone())
                    .or_else(|| s.and_then(|s| s.target_node.clone()))
                    .or_else(|| {
                        pod_index
                            .target_of(active.and_then(|m| m.uid()))
                            .and_then(|p| p.spec.as_ref()?.node_name.clone())
                    }),
                source_pod: src_side
                    .and_then(|x| x.pod.clone())
                    .or_else(|| s.and_then(|s| s.source_pod.clone()))
                    .or(pending_source_pod),
                target_pod: tgt_side
                    .and_then(|x| x.pod.clone())
                    .or_else(|| s.and_then(|s| s.target_pod.clone())),
                mode: s
                    .and_then(|s| s.mode.as_ref())
                    .map(|m| m.as_str().to_string()),
                start_timestamp: start.map(ts),
                elapsed_seconds: start
                    .or_else(|| active.and_then(|m| m.metadata.creation_timestamp.as_ref()))
                    .map(|t| secs_between(t, now)),
                budget_seconds: completion_budget_seconds(vmi, per_gib),
                point_of_no_return: post_copy,
                priority: active.and_then(|m| m.spec.priority.clone()),
                decentralized,
            })
        } else {
            None
        };
        let last_migration = last_migration(
            state.filter(|_| state_in_flight.is_none()),
            migration_index.of_vmi(vmi.namespace(), vmi.name()),
            now,
        );
        let pods = launcher_pods(
            vmi,
            pod_index.candidates_for(vmi),
            state_in_flight,
            active.and_then(|m| m.uid()),
        );
        let evacuation = vmi.evacuation_node().map(|node| Evacuation {
            node_name: node.to_string(),
            eviction_requested: vmi
                .condition("EvictionRequested")
                .is_some_and(|c| c.is_true()),
        });

        let evacuation_chain =
            evacuation_chain(vmi, migration_index.of_vmi(vmi.namespace(), vmi.name()));
        if let Some(c) = evacuation_chain
            .as_ref()
            .filter(|c| c.failed_attempts > 0 && c.result != "succeeded")
        {
            warnings.push(Warning {
                vmi: id.clone(),
                kind: "evacuation-retry".into(),
                message: format!(
                    "evacuation from {}: attempt {} ({}), {} failed before; the last failure: {}",
                    c.node,
                    c.attempt,
                    if c.result == "failed" {
                        "failed"
                    } else {
                        "in flight"
                    },
                    c.failed_attempts,
                    c.last_failure.as_deref().unwrap_or("no reason recorded")
                ),
            });
        }
        let in_loop = vmi_loop(inputs, vmi, &migration_index, &pod_index, now);
        if let Some(l) = &in_loop {
            warnings.push(Warning {
                vmi: id.clone(),
                kind: l.kind.as_str().into(),
                message: loop_message(l),
            });
        }

        let migration_conditions = migration_conditions(vmi, evacuation.is_some());
        for c in &migration_conditions {
            // StorageLiveMigratable=False repeats LiveMigratable's reasons when the VMI cannot
            // live-migrate at all: only news when live migration itself works.
            if c.type_ == "StorageLiveMigratable" && mig.live_migratable != Some(true) {
                continue;
            }
            let words = match (&c.reason, &c.message) {
                (Some(r), Some(m)) => format!("{r}: {m}"),
                (Some(r), None) => r.clone(),
                (None, Some(m)) => m.clone(),
                (None, None) => "no reason given".into(),
            };
            let (kind, message) = match c.type_.as_str() {
                "MigrationRequired" => (
                    "migration-required",
                    format!(
                        "KubeVirt requires a migration to apply a change (MigrationRequired, {words})"
                    ),
                ),
                "DecentralizedLiveMigrationFailure" => (
                    "decentralized-failure",
                    format!(
                        "the cross-cluster migration is blocked (DecentralizedLiveMigrationFailure, {words})"
                    ),
                ),
                "StorageLiveMigratable" => (
                    "storage-not-migratable",
                    format!(
                        "its volumes cannot be moved to other storage (volume migration); live migration still works (StorageLiveMigratable=False, {words})"
                    ),
                ),
                _ => (
                    "eviction-requested",
                    format!(
                        "eviction requested without an evacuation node (EvictionRequested, {words})"
                    ),
                ),
            };
            warnings.push(Warning {
                vmi: id.clone(),
                kind: kind.into(),
                message,
            });
        }
        if let Some(e) = &evacuation {
            warnings.push(Warning {
                vmi: id.clone(),
                kind: "evacuation".into(),
                message: format!(
                    "marked for evacuation from {} (evacuationNodeName{})",
                    e.node_name,
                    if e.eviction_requested {
                        ", EvictionRequested"
                    } else {
                        ""
                    }
                ),
            });
        }
        if let Some(m) = migration.as_ref().filter(|m| m.point_of_no_return) {
            warnings.push(Warning {
                vmi: id.clone(),
                kind: "post-copy".into(),
                message: format!(
                    "in post-copy from {} to {}: the point of no return. The guest's memory is split across both nodes; an abort or a network failure now loses the guest",
                    m.source_node.as_deref().unwrap_or("?"),
                    m.target_node.as_deref().unwrap_or("?")
                ),
            });
        }
        if vmi.status.phase == Some(crate::model::vmi::VmiPhase::Failed) {
            let why = vmi
                .condition("Synchronized")
                .filter(|c| c.is_false())
                .and_then(|c| c.message.clone())
                .or_else(|| vmi.status.reason.clone())
                .unwrap_or_else(|| "no reason recorded".into());
            warnings.push(Warning {
                vmi: id.clone(),
                kind: "failed".into(),
                message: format!("the VMI has failed: {why}"),
            });
        }
        let drain = drain_fates.remove(&(vmi.namespace().to_string(), vmi.name().to_string()));
        if !mig.is_migratable() && mig.live_migratable == Some(false) {
            // What a drain does to it is plan-drain's decision, PDBs included: never guessed
            // from the strategy alone.
            let why = mig.short();
            let said = match &drain {
                Some(f) => drain_warning(f, &strategy.strategy, &why),
                // Its node is not among the cluster's Nodes (or they were not read): what a
                // drain does is plan-drain's to say, not guessed here.
                None if matches!(
                    strategy.strategy,
                    crate::model::EvictionStrategy::LiveMigrate
                        | crate::model::EvictionStrategy::LiveMigrateIfPossible
                ) && vmi.status.node_name.is_some()
                    && !inputs
                        .nodes
                        .iter()
                        .any(|n| Some(&n.name) == vmi.status.node_name.as_ref()) =>
                {
                    Some((
                        "not-migratable",
                        format!(
                            "not live-migratable ({why}); its node {} is not among the Nodes read: vmctl plan-drain says what a drain does to it",
                            vmi.status.node_name.as_deref().unwrap_or("")
                        ),
                    ))
                }
                None => None,
            };
            if let Some((kind, message)) = said {
                warnings.push(Warning {
                    vmi: id.clone(),
                    kind: kind.into(),
                    message,
                });
            }
        }

        vmis.push(VmiRow {
            namespace: vmi.namespace().to_string(),
            name: vmi.name().to_string(),
            vm: vmi.owner_vm().map(str::to_string),
            node: vmi.status.node_name.clone(),
            phase: vmi
                .status
                .phase
                .as_ref()
                .map(|p| p.as_str().to_string())
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| "Unknown".into()),
            eviction_strategy: strategy.strategy.as_str().to_string(),
            eviction_strategy_source: strategy.source,
            live_migratable: mig.live_migratable,
            reasons: mig.reasons,
            evacuation,
            evacuation_chain,
            pods,
            migration,
            last_migration,
            unrecorded_failure: unrecorded_failure(
                vmi,
                migration_index.of_vmi(vmi.namespace(), vmi.name()),
                state,
                now,
            ),
            migration_conditions,
            in_loop,
            drain,
        });
    }

    let shown: BTreeMap<(String, String), &VmiRow> = vmis
        .iter()
        .map(|r| ((r.namespace.clone(), r.name.clone()), r))
        .collect();
    // What a Pending migration waits for, counted as plan-drain counts: the running
    // migrations against parallelMigrationsPerCluster and, from its VMI's node,
    // parallelOutboundMigrationsPerNode. A slot is named only when a limit is full.
    let vmi_nodes: HashMap<(&str, &str), &str> = inputs
        .vmis
        .iter()
        .filter_map(|v| Some(((v.namespace(), v.name()), v.status.node_name.as_deref()?)))
        .collect();
    let node_of = |m: &VirtualMachineInstanceMigration| {
        vmi_nodes
            .get(&(m.namespace(), m.spec.vmi_name.as_str()))
            .copied()
    };
    let running: Vec<&VirtualMachineInstanceMigration> = inputs
        .vmims
        .iter()
        .filter(|m| m.status.phase.is_some() && m.phase().counts_as_running())
        .collect();
    let pending_words = |m: &VirtualMachineInstanceMigration| -> String {
        if let Some(b) = crate::triage::migration_backoff(
            migration_index.of_vmi(m.namespace(), &m.spec.vmi_name),
            m,
        )
        .filter(|b| b.until.as_second() > now.as_second())
        {
            return format!(
                "KubeVirt's backoff until {} ({} failed attempt(s), the last {}), then the target pod",
                crate::text::timestamp(b.until),
                b.failures,
                b.previous
            );
        }
        let others: Vec<_> = running.iter().filter(|r| r.uid() != m.uid()).collect();
        if let Some(c) = cluster_config.as_ref() {
            let cluster_limit = c.parallel_migrations_per_cluster as usize;
            if others.len() >= cluster_limit {
                return format!(
                    "a free migration slot ({} of {cluster_limit} running cluster-wide), then the target pod",
                    others.len()
                );
            }
            let node_limit = c.parallel_outbound_migrations_per_node as usize;
            if let Some(node) = node_of(m) {
                let out = others.iter().filter(|r| node_of(r) == Some(node)).count();
                if out >= node_limit {
                    return format!(
                        "a free migration slot ({out} of {node_limit} outbound from {node}), then the target pod"
                    );
                }
            }
        }
        "the target pod (not created yet)".into()
    };
    let mut migrations: Vec<MigrationRow> = inputs
        .vmims
        .iter()
        .filter(|m| !m.is_final())
        .filter(|m| shown.contains_key(&(m.namespace().to_string(), m.spec.vmi_name.clone())))
        .map(|m| {
            let vmi = shown
                .get(&(m.namespace().to_string(), m.spec.vmi_name.clone()))
                .copied();
            let mut row = migration_row(m, vmi, &pod_index, now, pending_words);
            row.loop_kind = vmi.and_then(|v| v.in_loop.as_ref()).map(|l| l.kind);
            // A Running migration whose stream ended long ago waits for the backend-storage
            // hand-off, not for memory to converge (kubevirt#17203; triage::loops).
            if let Some(l) = vmi
                .and_then(|v| v.in_loop.as_ref())
                .filter(|l| l.kind == LoopKind::BackendStorageHandoffStuck)
                .filter(|l| l.migration == m.name())
            {
                row.waiting_for = format!(
                    "the backend-storage PVC hand-off (the stream ended {} ago; stuck: see Attention)",
                    crate::text::duration(l.seconds)
                );
            }
            row
        })
        .collect();
    migrations.sort_by(|a, b| b.age_seconds.cmp(&a.age_seconds).then(a.name.cmp(&b.name)));
    let nodes = node_drains(inputs, &vmis, &mut warnings);

    StatusReport {
        api_version: crate::model::VMCTL_API_VERSION,
        kind: "StatusReport",
        as_of: crate::text::timestamp(now),
        source: source.to_string(),
        kubevirt: KubeVirtInfo {
            found: kubevirt.is_some(),
            version: kubevirt.and_then(|k| k.version().map(str::to_string)),
            cluster_eviction_strategy: kubevirt
                .and_then(|k| k.spec.configuration.eviction_strategy.as_ref())
                .map(|s| s.as_str().to_string()),
        },
        nodes,
        vmis,
        migrations,
        warnings,
        skipped: Vec::new(),
        namespace: None,
    }
}

/// The Attention line for a VMI that cannot live-migrate, from what a drain of its node does
/// to it ([`DrainFate`], plan-drain's decision): `(kind, message)`; None for a fate that
/// needs no word here (External, a loop has its own line).
fn drain_warning(
    fate: &DrainFate,
    strategy: &crate::model::EvictionStrategy,
    why: &str,
) -> Option<(&'static str, String)> {
    use crate::policy::drain::Action;
    let node = &fate.node;
    let holders: Vec<String> = fate
        .blocked_by
        .iter()
        .filter_map(|b| {
            let (kind, name) = b.split_once(' ')?;
            Some(match kind {
                "pdb" => format!("PodDisruptionBudget {name}"),
                "vmi" => return None,
                _ => format!("{kind} {name}"),
            })
        })
        .collect();
    match fate.action {
        Action::BlocksDrain if *strategy == crate::model::EvictionStrategy::LiveMigrate => Some((
            "blocks-drain",
            format!(
                "evictionStrategy LiveMigrate but not live-migratable ({why}): a drain of {node} is refused until this is fixed"
            ),
        )),
        Action::BlocksDrain => Some((
            "blocks-drain",
            format!(
                "not live-migratable ({why}): a drain of {node} blocks on it (vmctl plan-drain {node})"
            ),
        )),
        Action::Shutdown | Action::ShutdownNotMigratable if !holders.is_empty() => Some((
            "blocks-drain",
            format!(
                "not live-migratable ({why}): a drain of {node} would shut it down, but {} {} the eviction: the drain blocks here (vmctl plan-drain {node})",
                holders.join(" and "),
                if holders.len() == 1 {
                    "refuses"
                } else {
                    "refuse"
                }
            ),
        )),
        Action::Shutdown | Action::ShutdownNotMigratable => Some((
            "not-migratable",
            format!(
                "not live-migratable ({why}): a drain of {node} shuts it down{}",
                if fate.pdbs_read {
                    ""
                } else {
                    " (PodDisruptionBudgets not read: one may refuse the eviction; vmctl plan-drain tells)"
                }
            ),
        )),
        _ => None,
    }
}

/// The loop the VMI is caught in, with explain's cause of an evacuation's last failure
/// (diagnosed from status alone: `status` reads no events). Only VMIs with a migration on
/// record are looked at, and only a loop is diagnosed, so the cost stays linear.
fn vmi_loop(
    inputs: &StatusInputs,
    vmi: &VirtualMachineInstance,
    migrations: &MigrationIndex,
    pods: &PodIndex,
    now: Timestamp,
) -> Option<Loop> {
    let of_vmi = migrations.of_vmi(vmi.namespace(), vmi.name());
    if of_vmi.is_empty() {
        return None;
    }
    let mut l = loops::detect(
        vmi.namespace(),
        vmi.name(),
        Some(vmi),
        of_vmi,
        now,
        &inputs.loops,
    )?;
    if l.kind == LoopKind::EvacuationLoop {
        let evidence = crate::triage::Evidence {
            now,
            migration: None,
            vmi_namespace: vmi.namespace().to_string(),
            vmi_name: vmi.name().to_string(),
            vmi: Some(vmi.clone()),
            migrations: of_vmi.iter().map(|m| (*m).clone()).collect(),
            pods: pods.candidates_for(vmi).into_iter().cloned().collect(),
            events: Vec::new(),
            kubevirt: inputs.kubevirt.clone(),
            policies: Vec::new(),
            namespace: None,
            load: None,
            unread: Vec::new(),
            pdbs: Vec::new(),
            loops: inputs.loops,
        };
        loops::with_diagnosis(&mut l, &evidence);
    }
    Some(l)
}

/// The Attention line of a loop: what, the last failure's cause, and the first way out.
fn loop_message(l: &Loop) -> String {
    // An evacuation's summary already quotes the last failure's text.
    let last = l
        .last_failure
        .as_ref()
        .and_then(|f| {
            let cause = f.cause.as_deref()?;
            Some(match (&f.reason, l.kind) {
                (Some(r), LoopKind::DecentralizedSyncStuck) => {
                    format!(" Last failure: {cause} ({r}).")
                }
                _ => format!(" Last failure: {cause}."),
            })
        })
        .unwrap_or_default();
    // The first step once what keeps the loop going has stopped (an Attention line names
    // the loop's own way out, not "stop the drain").
    let way = l.way_out.first();
    format!(
        "{}{last}{}",
        l.summary,
        way.map(|w| format!(" Way out: {w}")).unwrap_or_default()
    )
}

fn migration_row(
    m: &VirtualMachineInstanceMigration,
    vmi: Option<&VmiRow>,
    pods: &PodIndex,
    now: Timestamp,
    pending_words: impl Fn(&VirtualMachineInstanceMigration) -> String,
) -> MigrationRow {
    let in_flight = vmi
        .and_then(|v| v.migration.as_ref())
        .filter(|f| f.uid.is_some() && f.uid.as_deref() == m.uid());
    let conditions: Vec<String> = m
        .status
        .conditions
        .iter()
        .filter(|c| c.is_true())
        .map(|c| c.type_.clone())
        .collect();
    let has = |t: &str| conditions.iter().any(|c| c == t);
    let target_pod = pods.target_of(m.uid());
    let unschedulable = target_pod.and_then(crate::policy::pods::unschedulable_message);
    let phase = m.phase();
    use crate::model::vmim::MigrationPhase as P;
    let waiting_for = match phase {
        P::Unset => "virt-controller to pick it up".to_string(),
        P::Pending if has("migrationRejectedByResourceQuota") => {
            "resource quota: the target pod was rejected (exceeded quota)".into()
        }
        P::Pending if has("migrationBlockedByUtilityVolumes") => "utility volumes to detach".into(),
        P::Pending if has("migrationBlockedByBackup") => "a backup to finish".into(),
        P::Pending => pending_words(m),
        P::Scheduling => match &unschedulable {
            Some(msg) => format!("target pod unschedulable: {}", scheduler_summary(msg)),
            None => "the target pod to be scheduled and ready".into(),
        },
        P::Scheduled => "hand-off to virt-handler".into(),
        P::PreparingTarget => "the target node to prepare the domain".into(),
        P::TargetReady => "the source to start streaming".into(),
        P::Running => match in_flight.and_then(|f| f.mode.as_deref()) {
            Some("PostCopy") => "post-copy to finish (point of no return)".into(),
            Some("Paused") => "the paused guest's memory to finish copying".into(),
            _ => "memory transfer to converge".into(),
        },
        P::WaitingForSync | P::Synchronizing => match m.decentralized_role() {
            Some(DecentralizedRole::Sender) => format!(
                "the receiving cluster{} (decentralized sender; the guest runs here)",
                m.spec
                    .send_to
                    .as_ref()
                    .and_then(|s| s.connect_url.as_deref())
                    .map(|u| format!(" at {u}"))
                    .unwrap_or_default()
            ),
            Some(DecentralizedRole::Receiver) => format!(
                "the sending cluster to connect{} (decentralized receiver; the guest runs in the other cluster)",
                if m.status.synchronization_addresses.is_empty() {
                    String::new()
                } else {
                    format!(" to {}", m.status.synchronization_addresses.join(", "))
                }
            ),
            None => "the peer cluster (decentralized migration)".into(),
        },
        P::Succeeded | P::Failed => "nothing (finished)".into(),
        P::Other(ref p) => format!("phase {p}"),
    };
    let live_pod = vmi.and_then(|v| v.pods.iter().find(|p| p.live).and_then(|p| p.name.clone()));
    MigrationRow {
        namespace: m.namespace().to_string(),
        name: m.name().to_string(),
        vmi: m.spec.vmi_name.clone(),
        phase: phase.as_str().to_string(),
        age_seconds: m
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| secs_between(t, now)),
        source_node: in_flight.and_then(|f| f.source_node.clone()).or_else(|| {
            // A decentralized receiver's VMI is the target side, not the source.
            (m.decentralized_role() != Some(DecentralizedRole::Receiver))
                .then(|| vmi.and_then(|v| v.node.clone()))
                .flatten()
        }),
        target_node: in_flight
            .and_then(|f| f.target_node.clone())
            .or_else(|| target_pod.and_then(|p| p.spec.as_ref()?.node_name.clone())),
        source_pod: in_flight.and_then(|f| f.source_pod.clone()).or_else(|| {
            // Before the hand-off the source is the pod the guest runs in — except on a
            // decentralized receiver, whose pod is the target.
            (m.decentralized_role() != Some(DecentralizedRole::Receiver))
                .then(|| live_pod.clone())
                .flatten()
        }),
        target_pod: in_flight
            .and_then(|f| f.target_pod.clone())
            .or_else(|| target_pod.and_then(|p| p.metadata.name.clone())),
        live_pod,
        mode: in_flight.and_then(|f| f.mode.clone()),
        evacuation_node: m.evacuation_node().map(str::to_string),
        conditions,
        waiting_for,
        priority: m.spec.priority.clone(),
        decentralized: in_flight
            .and_then(|f| f.decentralized.clone())
            .or_else(|| decentralized_of(m, None)),
        loop_kind: None,
    }
}

/// Keeps only the named VMIs; unknown names are an error with suggestions.
pub fn filter_names(inputs: &mut StatusInputs, names: &[String]) -> Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    for name in names {
        if !inputs.vmis.iter().any(|v| v.name() == name) {
            let mut err = Error::not_found(format!("VM {name:?}"));
            let close = suggest(name, inputs.vmis.iter().map(VirtualMachineInstance::name));
            if !close.is_empty() {
                err = err.with_hint(format!("did you mean {}?", close.join(", ")));
            }
            return Err(
                err.with_hint("VMs that are stopped have no VMI; check the namespace (-n, -A)")
            );
        }
    }
    inputs.vmis.retain(|v| names.iter().any(|n| n == v.name()));
    Ok(())
}

/// The Attention line for a temporary policy vmctl left behind.
pub fn leftover_warning(l: &crate::policy::preflight::LeftoverPolicy) -> Warning {
    let made_for = match &l.vmi {
        Some(vmi) => format!("one migration of {vmi}"),
        None => "one migration".to_string(),
    };
    let allows = if l.allows.is_empty() {
        String::new()
    } else {
        format!(
            " it still allows {} for every VMI it selects;",
            l.allows.join(" and ")
        )
    };
    Warning {
        vmi: l.vmi.clone().unwrap_or_default(),
        kind: "leftover-policy".into(),
        message: format!(
            "MigrationPolicy {} was made by vmctl {} for {made_for}, which is no longer in flight:{allows} remove it: kubectl delete migrationpolicy {}",
            l.name,
            l.age_seconds
                .map(|a| format!("{} ago", crate::text::duration(a)))
                .unwrap_or_else(|| "(when is not recorded)".into()),
            l.name
        ),
    }
}
