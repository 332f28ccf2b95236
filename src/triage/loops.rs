//! Loops that never end (issue 25 §4), recognised from object status alone so that
//! `explain`, `status` and `drain` name them the same way. Pure: objects and the clock in, a
//! [`Loop`] out.
//!
//! - **evacuation-loop** (harvester/harvester#10698, #5306, #7965): while a VMI stays marked
//!   (`status.evacuationNodeName` equal to its node), KubeVirt's evacuation controller creates
//!   a new `kubevirt-evacuation-*` VMIM each time the previous one ends
//!   (`pkg/virt-controller/watch/drain/evacuation/evacuation.go`: `getMarkedForEvictionVMIs`,
//!   `filterRunningNonMigratingVMIs` skips a VMI only while it has an unfinished VMIM, so
//!   deleting the VMIM just makes room for the next one), and the migration controller only
//!   spaces them out (`handleMigrationBackoff` in `pkg/virt-controller/watch/migration/migration.go`:
//!   20 s, doubling per consecutive failure). Nothing stops it but the mark going:
//!   `evacuate/cancel` (`pkg/virt-api/rest/evacuate_cancel.go`, v1.7+; refused while the node
//!   carries the node-drain taint) or a successful migration (the target virt-handler clears
//!   it, `pkg/virt-handler/migration-target.go`). Uncordoning does not: the controller reads
//!   the mark and the `kubevirt.io/drain` taint, never `spec.unschedulable` (kubevirt#9585).
//! - **decentralized-sync-stuck** (kubevirt/kubevirt#17317, #18259): a VMIM in
//!   `WaitingForSync` (receiver) or `Synchronizing` (sender) moves on only when the
//!   synchronization controller has copied the peer's side into the VMI's
//!   `migrationState.sourceState`/`targetState` (`IsMigrationSourceSynchronized`,
//!   `IsMigrationSynchronized` in `staging/src/kubevirt.io/api/core/v1/types.go`;
//!   `processMigrationPhase`, migration.go ~L780). There is no timeout on main (the 150 s one
//!   proposed in kubevirt#17318 was not merged; #18625 redials a peer whose address changed).
//! - **backend-storage-handoff-stuck** (kubevirt/kubevirt#17203, #14720): the stream completed
//!   but `backendstorage.MigrationHandoff` (`pkg/storage/backend-storage/backend-storage.go`,
//!   called from the Running phase of migration.go) keeps failing on the PVCs, and the VMIM
//!   stays Running with no timeout.

use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

use crate::model::vmi::MigrationState;
use crate::model::vmim::{DecentralizedRole, MigrationPhase};
use crate::model::{VirtualMachineInstance, VirtualMachineInstanceMigration};
use crate::text as fmt;

use super::history::{self, created};

/// Consecutive failed evacuation migrations that make a loop: KubeVirt keeps only the newest
/// five finished VMIMs of a VMI (so more than five can never be counted), and after three
/// the backoff alone is 20 + 40 + 80 s: the retries are not converging on their own. `drain`
/// gave up after three failures before loops were named, and keeps that.
pub const DEFAULT_LOOP_FAILURES: u32 = 3;
/// How long a decentralized migration may wait for its peer before it counts as stuck: twice
/// the 150 s deadline kubevirt#17318 proposed, so a peer created by hand a little later does
/// not trip it.
pub const DEFAULT_SYNC_SECONDS: i64 = 300;
/// After the source finished, virt-controller hands the backend-storage PVC over within
/// seconds; a Running migration whose stream ended longer ago than this is stuck in it.
pub const DEFAULT_HANDOFF_SECONDS: i64 = 120;

/// When a retry or a wait counts as a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopThresholds {
    /// Consecutive failed evacuation migrations of a marked VMI.
    pub failures: u32,
    /// Seconds in WaitingForSync / Synchronizing.
    pub sync_seconds: i64,
    /// Seconds since the stream ended while the migration stays Running with backend storage.
    pub handoff_seconds: i64,
}

impl Default for LoopThresholds {
    fn default() -> Self {
        LoopThresholds {
            failures: DEFAULT_LOOP_FAILURES,
            sync_seconds: DEFAULT_SYNC_SECONDS,
            handoff_seconds: DEFAULT_HANDOFF_SECONDS,
        }
    }
}

impl LoopThresholds {
    /// The same, without the evacuation loop (to diagnose one failed attempt of it).
    pub fn without_evacuation_loop(self) -> Self {
        LoopThresholds {
            failures: u32::MAX,
            ..self
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoopKind {
    EvacuationLoop,
    DecentralizedSyncStuck,
    BackendStorageHandoffStuck,
}

impl LoopKind {
    /// The cause id explain gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            LoopKind::EvacuationLoop => "evacuation-loop",
            LoopKind::DecentralizedSyncStuck => "decentralized-sync-stuck",
            LoopKind::BackendStorageHandoffStuck => "backend-storage-handoff-stuck",
        }
    }
}

/// The object whose state keeps the loop going, and the field that says so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockingObject {
    /// `Kind/namespace/name`.
    pub object: String,
    pub field: String,
    /// What the field holds now (`(absent)` when the loop is that it never arrives).
    pub value: String,
}

/// The newest failed attempt, and why it failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LastFailure {
    pub migration: String,
    /// `migrationState.failureReason` (or a condition's message), as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// explain's cause of that attempt (filled by [`with_diagnosis`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// A loop that does not end by itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Loop {
    pub kind: LoopKind,
    /// The newest migration in it.
    pub migration: String,
    /// Since when (RFC 3339): the first counted attempt, the phase entered, the stream's end.
    pub since: String,
    pub seconds: i64,
    /// Attempts seen (evacuation: failed migrations still on record; others: 1).
    pub attempts: u32,
    pub blocking: BlockingObject,
    /// The other side, for a decentralized migration: where its VMIM must be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counterpart: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<LastFailure>,
    /// When KubeVirt tries again (evacuation backoff), RFC 3339.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_attempt: Option<String>,
    /// One sentence.
    pub summary: String,
    /// What must stop before anything else helps (an evacuation loop: the drain or the
    /// maintenance that keeps evicting the VM). `drain` leaves it out: it has stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_first: Option<String>,
    /// What ends it once that has stopped, in order.
    pub way_out: Vec<String>,
}

impl Loop {
    /// The loop in one paragraph, as `drain` and `plan-drain` name it: the summary, the object
    /// and field that keep it going, and the way out.
    pub fn message(&self) -> String {
        format!(
            "{} Blocking: {} {} = {}. Way out: {}",
            self.summary,
            self.blocking.object,
            self.blocking.field,
            self.blocking.value,
            self.steps().join(" · ")
        )
    }

    /// Every step of the way out, in order: `stop_first`, then `way_out`.
    pub fn steps(&self) -> Vec<String> {
        self.stop_first
            .iter()
            .chain(&self.way_out)
            .cloned()
            .collect()
    }

    /// A drain cannot finish while it lasts: the VM stays on the drained node (an evacuation
    /// loop, a decentralized migration waiting for its peer). A stuck backend-storage
    /// hand-off does not hold a drain: the guest already runs on the target.
    pub fn blocks_drain(&self) -> bool {
        !matches!(self.kind, LoopKind::BackendStorageHandoffStuck)
    }
}

fn newest_first<'a>(
    migrations: &[&'a VirtualMachineInstanceMigration],
) -> Vec<&'a VirtualMachineInstanceMigration> {
    let mut v = migrations.to_vec();
    v.sort_by_key(|m| std::cmp::Reverse((created(m), m.name().to_string())));
    v
}

/// The loop the VMI (`namespace/name`; `vmi` None when it is gone) is caught in, if any.
/// `migrations` are the VMIMs of that VMI (others are ignored).
pub fn detect(
    namespace: &str,
    name: &str,
    vmi: Option<&VirtualMachineInstance>,
    migrations: &[&VirtualMachineInstanceMigration],
    now: Timestamp,
    t: &LoopThresholds,
) -> Option<Loop> {
    let mine: Vec<&VirtualMachineInstanceMigration> = migrations
        .iter()
        .copied()
        .filter(|m| m.namespace() == namespace && m.spec.vmi_name == name)
        .collect();
    let ordered = newest_first(&mine);
    let newest = *ordered.first()?;
    if let Some(l) = sync_stuck(namespace, name, vmi, newest, now, t) {
        return Some(l);
    }
    if let Some(l) = handoff_stuck(namespace, vmi, newest, now, t) {
        return Some(l);
    }
    evacuation_loop(namespace, name, vmi?, &ordered, now, t)
}

fn state_of<'a>(
    vmi: Option<&'a VirtualMachineInstance>,
    m: &'a VirtualMachineInstanceMigration,
) -> Option<&'a MigrationState> {
    let from_vmi = vmi
        .and_then(|v| v.status.migration_state.as_ref())
        .filter(|s| s.migration_uid.is_some() && s.migration_uid.as_deref() == m.uid());
    from_vmi.or(m.status.migration_state.as_ref())
}

/// Why `m` failed, as written: the VMI's `migrationState.failureReason` when it is `m`'s, else
/// the VMIM's copy of it, else the message of a true condition of the VMIM.
pub fn failure_of(
    vmi: Option<&VirtualMachineInstance>,
    m: &VirtualMachineInstanceMigration,
) -> Option<String> {
    // The VMI's state first (virt-handler writes it), then the VMIM's copy: when the VMIM's
    // watch reports the failure before the VMI's, the VMI still shows the attempt running.
    // A blank text says nothing: skip it and read the next source, as
    // `View::failure_reason` does.
    let written = |r: Option<&String>| {
        r.map(|r| r.trim_end())
            .filter(|r| !r.trim().is_empty())
            .map(str::to_string)
    };
    written(state_of(vmi, m).and_then(|s| s.failure_reason.as_ref()))
        .or_else(|| {
            written(
                m.status
                    .migration_state
                    .as_ref()
                    .and_then(|s| s.failure_reason.as_ref()),
            )
        })
        .or_else(|| {
            m.status
                .conditions
                .iter()
                .filter(|c| c.is_true())
                .find_map(|c| written(c.message.as_ref()))
        })
}

fn evacuation_loop(
    namespace: &str,
    name: &str,
    vmi: &VirtualMachineInstance,
    ordered: &[&VirtualMachineInstanceMigration],
    now: Timestamp,
    t: &LoopThresholds,
) -> Option<Loop> {
    let node = vmi.evacuation_node()?;
    // Moved already (evacuation.go `hasMigratedOnEviction`): nothing retries.
    if vmi.status.node_name.as_deref() != Some(node) {
        return None;
    }
    // Consecutive failed evacuation attempts back to the last success, as
    // `handleMigrationBackoff` counts them (a migration being deleted is skipped).
    let mut failed: Vec<&VirtualMachineInstanceMigration> = Vec::new();
    for m in ordered {
        match m.phase() {
            MigrationPhase::Succeeded => break,
            MigrationPhase::Failed
                if m.metadata.deletion_timestamp.is_none() && m.evacuation_node().is_some() =>
            {
                failed.push(m)
            }
            _ => {}
        }
    }
    let attempts = failed.len() as u32;
    if attempts < t.failures.max(1) {
        return None;
    }
    let last = *failed.first()?;
    let first = *failed.last()?;
    let since = created(first)
        .or_else(|| first.phase_entered("Failed").map(|t| t.0))
        .unwrap_or(now);
    let newest = ordered[0];
    let in_flight = (!newest.is_final()).then_some(newest);
    // KubeVirt's own backoff (history::backoff, handleMigrationBackoff): for the attempt
    // waiting in Pending, or for the one the evacuation controller creates next. An attempt
    // already past Pending has started: no next attempt to announce.
    let next_attempt = match in_flight {
        Some(m) if matches!(m.phase(), MigrationPhase::Pending) => history::backoff(ordered, m),
        Some(_) => None,
        None => history::next_backoff(ordered),
    }
    .map(|b| b.until);
    let reason = failure_of(Some(vmi), last);
    let age = now.as_second() - since.as_second();
    let at_least = if attempts >= 5 { "at least " } else { "" };
    let summary = format!(
        "KubeVirt has tried {at_least}{attempts} times in {} to evacuate {namespace}/{name} from {node} and every attempt failed (last: {}{}); it creates a new evacuation migration after each failure for as long as status.evacuationNodeName stays set, so this never ends by itself.",
        fmt::duration(age),
        last.name(),
        reason
            .as_deref()
            .map(|r| format!(": {}", short(r)))
            .unwrap_or_default()
    );
    let stop_first = format!(
        "Stop what keeps evicting the VM first (Ctrl-C the drain, or take {node} out of maintenance mode): every new eviction marks it again."
    );
    let mut way_out = vec![format!(
        "Cancel the evacuation: vmctl abort --evacuation vm/{name} -n {namespace} (clears status.evacuationNodeName through evacuate/cancel, KubeVirt v1.7+; refused while {node} carries the node-drain taint: kubectl taint node {node} kubevirt.io/drain-)"
    )];
    if let Some(m) = in_flight {
        way_out.push(format!(
            "Then abort the attempt in flight: vmctl abort migration/{} -n {namespace} (before the mark is cleared KubeVirt only creates another)",
            m.name()
        ));
    }
    way_out.push(format!(
        "kubectl uncordon {node} if the drain is called off (uncordoning alone does not stop the retries: KubeVirt reads the mark, not the cordon; kubevirt#9585, harvester#10698)"
    ));
    way_out.push(format!(
        "Or fix why the attempts fail and let the next one succeed: vmctl explain migration/{} -n {namespace}",
        last.name()
    ));
    Some(Loop {
        kind: LoopKind::EvacuationLoop,
        migration: newest.name().to_string(),
        since: since.to_string(),
        seconds: age,
        attempts,
        blocking: BlockingObject {
            object: format!("VirtualMachineInstance/{namespace}/{name}"),
            field: "status.evacuationNodeName".into(),
            value: node.to_string(),
        },
        counterpart: None,
        last_failure: Some(LastFailure {
            migration: last.name().to_string(),
            reason,
            cause: None,
            summary: None,
        }),
        next_attempt: next_attempt.map(|t| t.to_string()),
        summary,
        stop_first: Some(stop_first),
        way_out,
    })
}

/// The first line of a failure text, cut to a readable length.
fn short(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.chars().count() > 160 {
        let cut: String = line.chars().take(157).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

fn sync_stuck(
    namespace: &str,
    name: &str,
    vmi: Option<&VirtualMachineInstance>,
    m: &VirtualMachineInstanceMigration,
    now: Timestamp,
    t: &LoopThresholds,
) -> Option<Loop> {
    let phase = m.phase();
    if !matches!(
        phase,
        MigrationPhase::WaitingForSync | MigrationPhase::Synchronizing
    ) || m.metadata.deletion_timestamp.is_some()
    {
        return None;
    }
    let since = m
        .phase_entered(phase.as_str())
        .map(|t| t.0)
        .or_else(|| created(m))?;
    let age = now.as_second() - since.as_second();
    if age < t.sync_seconds {
        return None;
    }
    let role = m.decentralized_role();
    let id = m.decentralized_id().unwrap_or("?");
    let state = vmi.and_then(|v| v.status.migration_state.as_ref());
    let side_has_uid = |s: Option<&crate::model::vmi::SideState>| {
        s.and_then(|s| s.migration_uid.as_deref())
            .is_some_and(|u| !u.is_empty())
    };
    let source = state.and_then(|s| s.source_state.as_ref());
    let target = state.and_then(|s| s.target_state.as_ref());
    // What the phase waits for, and which side's data has not arrived.
    let (field, value, counterpart) = match role {
        Some(DecentralizedRole::Receiver) => {
            let missing = if source.is_none() {
                "sourceState"
            } else if !side_has_uid(source) {
                "sourceState.migrationUID"
            } else if source.and_then(|s| s.pod.as_deref()).is_none() {
                "sourceState.pod"
            } else if source.and_then(|s| s.node.as_deref()).is_none() {
                // kubevirt#18259: the source side never sets it, nothing streams.
                "sourceState.node"
            } else {
                "sourceState.nodeSelectors"
            };
            (
                format!("status.migrationState.{missing}"),
                "(absent)".to_string(),
                format!(
                    "the sending VirtualMachineInstanceMigration with spec.sendTo.migrationID {id} in the source cluster or namespace"
                ),
            )
        }
        _ => {
            let (missing, value) = if !side_has_uid(source) {
                ("sourceState.migrationUID", "(absent)".to_string())
            } else if !side_has_uid(target) {
                ("targetState.migrationUID", "(absent)".to_string())
            } else {
                // Synchronized but still in the phase: the controller has not caught up.
                (
                    "targetState.migrationUID",
                    target
                        .and_then(|s| s.migration_uid.clone())
                        .unwrap_or_default(),
                )
            };
            let peer = m
                .spec
                .send_to
                .as_ref()
                .and_then(|s| s.connect_url.as_deref())
                .map(|u| format!(" (its synchronization controller at {u})"))
                .unwrap_or_default();
            (
                format!("status.migrationState.{missing}"),
                value,
                format!(
                    "the receiving VirtualMachineInstanceMigration with spec.receive.migrationID {id} in the target cluster or namespace{peer}"
                ),
            )
        }
    };
    let role_words = match role {
        Some(DecentralizedRole::Receiver) => "the receiving side; the guest runs on the other side",
        Some(DecentralizedRole::Sender) => "the sending side, where the guest runs",
        None => "a decentralized migration (neither spec.sendTo nor spec.receive is set)",
    };
    let blocked = m
        .condition(crate::model::vmim::COND_DECENTRALIZED_BLOCKED)
        .filter(|c| c.is_true())
        .and_then(|c| c.message.clone().or(c.reason.clone()));
    // Both sides' UIDs present (IsMigrationSynchronized holds) yet still in the phase: the
    // field is filled, the migration has not moved on; say so, not that it never arrived.
    let what = if value == "(absent)" {
        format!("the synchronization controller never filled the VMI's {field}")
    } else {
        format!("the VMI's {field} is filled ({value}) but the migration has not moved on from it")
    };
    let summary = format!(
        "{} has been in {phase} for {} ({role_words}, migrationID {id}): {what}, and KubeVirt has no timeout for this phase, so it waits forever.",
        m.name(),
        fmt::duration(age),
    );
    let mut way_out = vec![
        format!(
            "Find {counterpart}: kubectl get vmim -A -o custom-columns=NS:.metadata.namespace,NAME:.metadata.name,PHASE:.status.phase,SEND:.spec.sendTo.migrationID,RECEIVE:.spec.receive.migrationID | grep {id} (on the peer cluster, or here for a cross-namespace migration); create it if it is missing"
        ),
        "Check both virt-synchronization-controllers (kubectl logs -n kubevirt -l kubevirt.io=virt-synchronization-controller): a peer that moved to a new address is still dialled at the old one until the controller restarts (kubevirt#18625)".to_string(),
    ];
    if role == Some(DecentralizedRole::Sender) {
        way_out.push(format!(
            "To give up: kubectl delete vmim {} -n {namespace}, and the peer's VMIM with migrationID {id} (nothing has streamed; the guest keeps running here)",
            m.name()
        ));
    } else {
        way_out.push(format!(
            "To give up: kubectl delete vmim {} -n {namespace}, and the peer's VMIM with migrationID {id} (nothing has streamed; the guest keeps running on the source side)",
            m.name()
        ));
    }
    Some(Loop {
        kind: LoopKind::DecentralizedSyncStuck,
        migration: m.name().to_string(),
        since: since.to_string(),
        seconds: age,
        attempts: 1,
        blocking: BlockingObject {
            object: format!("VirtualMachineInstance/{namespace}/{name}"),
            field,
            value,
        },
        counterpart: Some(counterpart),
        last_failure: blocked.map(|msg| LastFailure {
            migration: m.name().to_string(),
            reason: Some(msg),
            cause: Some("decentralized-migration-blocked".into()),
            summary: None,
        }),
        next_attempt: None,
        summary,
        stop_first: None,
        way_out,
    })
}

fn handoff_stuck(
    namespace: &str,
    vmi: Option<&VirtualMachineInstance>,
    m: &VirtualMachineInstanceMigration,
    now: Timestamp,
    t: &LoopThresholds,
) -> Option<Loop> {
    if m.is_final() || m.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let st = state_of(vmi, m)?;
    if !st.completed || st.failed {
        return None;
    }
    let source = st.source_persistent_state_pvc_name.as_deref();
    let target = st.target_persistent_state_pvc_name.as_deref();
    if source.is_none() && target.is_none() {
        return None;
    }
    let end = st.end_timestamp.as_ref()?.0;
    let age = now.as_second() - end.as_second();
    if age < t.handoff_seconds {
        return None;
    }
    // MigrationHandoff labels the target PVC first, then deletes the source one: the source
    // PVC is what a finalizer or a failing delete keeps (kubevirt#17203, #14720).
    let (pvc, field) = match (source, target) {
        (Some(s), Some(tg)) if s != tg => (s, "metadata.finalizers / metadata.deletionTimestamp"),
        (Some(s), _) => (s, "metadata.labels[persistent-state-for]"),
        (None, Some(tg)) => (tg, "metadata.labels[persistent-state-for]"),
        (None, None) => return None,
    };
    let pvcs: Vec<&str> = [source, target].into_iter().flatten().collect();
    let summary = format!(
        "{} finished streaming {} ago but stays {}: virt-controller must hand the backend-storage PVC over ({}) before it completes, that step keeps failing, and it retries without a timeout.",
        m.name(),
        fmt::duration(age),
        m.phase(),
        pvcs.join(" → ")
    );
    let way_out = vec![
        format!(
            "See what keeps the PVC (finalizers, deletionTimestamp, labels): kubectl get pvc -n {namespace} {} -o yaml",
            pvcs.join(" ")
        ),
        format!(
            "Read virt-controller's error: kubectl logs -n kubevirt -l kubevirt.io=virt-controller --tail=500 | grep -e {} -e persistent-state",
            m.name()
        ),
        "Once the PVC can be updated or deleted, virt-controller completes the migration by itself: do not delete the VMIM (the guest already runs on the target)".to_string(),
    ];
    Some(Loop {
        kind: LoopKind::BackendStorageHandoffStuck,
        migration: m.name().to_string(),
        since: end.to_string(),
        seconds: age,
        attempts: 1,
        blocking: BlockingObject {
            object: format!("PersistentVolumeClaim/{namespace}/{pvc}"),
            field: field.to_string(),
            value: "(not read: vmctl does not read PVCs)".to_string(),
        },
        counterpart: None,
        last_failure: None,
        next_attempt: None,
        summary,
        stop_first: None,
        way_out,
    })
}

/// Fills in explain's cause of the loop's last failed attempt, diagnosed on its own (with the
/// evacuation loop left out, so it names why that attempt failed).
pub fn with_diagnosis(l: &mut Loop, evidence: &super::Evidence) {
    let Some(last) = l.last_failure.as_mut() else {
        return;
    };
    if last.cause.is_some() {
        return;
    }
    let Some(m) = evidence
        .migrations
        .iter()
        .find(|m| m.name() == last.migration)
    else {
        return;
    };
    let mut focused = evidence.focused_on(m);
    focused.loops = evidence.loops.without_evacuation_loop();
    let d = super::diagnose(&focused);
    last.cause = Some(d.cause.id.to_string());
    last.summary = Some(d.summary);
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::jiff::SignedDuration;
    use serde_json::json;

    const NOW: &str = "2026-11-30T05:03:30Z";

    fn now() -> Timestamp {
        NOW.parse().unwrap()
    }

    fn vmi(evacuation: Option<&str>, node: &str) -> VirtualMachineInstance {
        serde_json::from_value(json!({
            "metadata": {"name": "vm", "namespace": "default", "uid": "vmi-uid"},
            "status": {"nodeName": node, "phase": "Running", "evacuationNodeName": evacuation}
        }))
        .unwrap()
    }

    /// An evacuation VMIM created at `created` (HH:MM:SS on the fixture's day), failed
    /// `failed` seconds later when Some, with `reason`.
    fn evac(
        name: &str,
        created: &str,
        failed: Option<i64>,
        reason: &str,
    ) -> VirtualMachineInstanceMigration {
        let c: Timestamp = format!("2026-11-30T{created}Z").parse().unwrap();
        let mut ts = vec![json!({"phase": "Pending", "phaseTransitionTimestamp": c.to_string()})];
        let phase = match failed {
            Some(s) => {
                let f = c.checked_add(SignedDuration::from_secs(s)).unwrap();
                ts.push(json!({"phase": "Failed", "phaseTransitionTimestamp": f.to_string()}));
                "Failed"
            }
            None => "Pending",
        };
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"),
                "creationTimestamp": c.to_string(),
                "annotations": {"kubevirt.io/evacuationMigration": "n2-v15"}},
            "spec": {"vmiName": "vm", "priority": "system-critical"},
            "status": {"phase": phase, "phaseTransitionTimestamps": ts,
                "migrationState": {"failureReason": reason, "completed": failed.is_some(),
                    "failed": failed.is_some()}}
        }))
        .unwrap()
    }

    // harvester#7965's text, as KubeVirt writes it into failureReason.
    const CPU: &str = "Live migration failed error encountered during MigrateToURI3 libvirt api call: virError(Code=9, Domain=31, Message='operation failed: guest CPU doesn't match specification: missing features: vmx-exit-load-perf-global-ctrl,vmx-entry-load-perf-global-ctrl')";

    fn three_failed_and_one_waiting() -> Vec<VirtualMachineInstanceMigration> {
        vec![
            evac("e1", "05:00:00", Some(31), CPU),
            evac("e2", "05:00:51", Some(31), CPU),
            evac("e3", "05:02:02", Some(31), CPU),
            evac("e4", "05:02:38", None, ""),
        ]
    }

    fn detect_on(
        v: &VirtualMachineInstance,
        ms: &[VirtualMachineInstanceMigration],
        t: &LoopThresholds,
    ) -> Option<Loop> {
        let refs: Vec<&VirtualMachineInstanceMigration> = ms.iter().collect();
        detect("default", "vm", Some(v), &refs, now(), t)
    }

    #[test]
    fn three_failed_evacuations_of_a_marked_vmi_are_a_loop_with_its_way_out() {
        let v = vmi(Some("n2-v15"), "n2-v15");
        let l = detect_on(
            &v,
            &three_failed_and_one_waiting(),
            &LoopThresholds::default(),
        )
        .unwrap();
        assert_eq!(l.kind, LoopKind::EvacuationLoop);
        assert_eq!(l.attempts, 3);
        assert_eq!(l.since, "2026-11-30T05:00:00Z");
        assert_eq!(l.seconds, 210);
        assert_eq!(l.migration, "e4");
        assert_eq!(
            (
                l.blocking.object.as_str(),
                l.blocking.field.as_str(),
                l.blocking.value.as_str()
            ),
            (
                "VirtualMachineInstance/default/vm",
                "status.evacuationNodeName",
                "n2-v15"
            )
        );
        let last = l.last_failure.as_ref().unwrap();
        assert_eq!(last.migration, "e3");
        assert_eq!(last.reason.as_deref(), Some(CPU));
        // handleMigrationBackoff: 20 s doubled twice after e3 failed at 05:02:33.
        assert_eq!(l.next_attempt.as_deref(), Some("2026-11-30T05:03:53Z"));
        assert!(
            l.stop_first
                .as_deref()
                .is_some_and(|s| s.starts_with("Stop what keeps evicting the VM first")),
            "{:?}",
            l.stop_first
        );
        let way = l.steps().join("\n");
        assert!(
            way.contains("vmctl abort --evacuation vm/vm -n default"),
            "{way}"
        );
        assert!(way.contains("vmctl abort migration/e4 -n default"), "{way}");
        assert!(way.contains("kubectl uncordon n2-v15"), "{way}");
        // The cancel comes before the abort of the attempt in flight: the other way round,
        // KubeVirt creates another one.
        let cancel = way.find("--evacuation").unwrap();
        let abort = way.find("migration/e4").unwrap();
        assert!(cancel < abort, "{way}");
    }

    #[test]
    fn the_last_failure_is_read_from_the_vmim_while_the_vmis_watch_lags() {
        // The VMI still shows e3 running (its watch behind the VMIM's): the reason comes
        // from the VMIM's copy of the state (migration.go copies it on completion).
        let mut v = vmi(Some("n2-v15"), "n2-v15");
        v.status.migration_state = serde_json::from_value(
            json!({"migrationUid": "uid-e3", "sourceNode": "n2-v15", "completed": false}),
        )
        .unwrap();
        let l = detect_on(
            &v,
            &three_failed_and_one_waiting(),
            &LoopThresholds::default(),
        )
        .unwrap();
        let last = l.last_failure.unwrap();
        assert_eq!(last.migration, "e3");
        assert_eq!(last.reason.as_deref(), Some(CPU));
    }

    #[test]
    fn the_next_attempt_follows_kubevirts_backoff_over_evacuation_and_workload_updates() {
        let v = vmi(Some("n2-v15"), "n2-v15");
        let t = LoopThresholds::default();
        let ms = three_failed_and_one_waiting();
        // No attempt in flight: the one the evacuation controller creates next waits the
        // same 80 s after e3 failed (05:02:33).
        let l = detect_on(&v, &ms[..3], &t).unwrap();
        assert_eq!(l.next_attempt.as_deref(), Some("2026-11-30T05:03:53Z"));
        // handleMigrationBackoff counts workload-update migrations too
        // (listBackoffEligibleMigrations, pkg/virt-controller/watch/migration/migration.go):
        // one more failure before e1 doubles it to 160 s; the loop still counts 3 evacuations.
        let mut w = evac("w0", "04:59:00", Some(10), CPU);
        w.metadata.annotations = Some(
            [(
                crate::model::vmim::WORKLOAD_UPDATE_ANNOTATION.to_string(),
                String::new(),
            )]
            .into(),
        );
        let mut with_update = vec![w];
        with_update.extend(ms.iter().cloned());
        let l = detect_on(&v, &with_update, &t).unwrap();
        assert_eq!(l.attempts, 3);
        assert_eq!(l.next_attempt.as_deref(), Some("2026-11-30T05:05:13Z"));
        // An attempt already Running has started: nothing to announce.
        let mut running = ms.clone();
        running[3].status.phase = Some(MigrationPhase::Running);
        assert_eq!(detect_on(&v, &running, &t).unwrap().next_attempt, None);
    }

    #[test]
    fn a_blank_failure_reason_falls_back_to_the_next_source() {
        // The VMI's state is e1's but holds only blanks: the VMIM's copy is read instead.
        let mut v = vmi(Some("n2-v15"), "n2-v15");
        v.status.migration_state = serde_json::from_value(
            json!({"migrationUid": "uid-e1", "failureReason": " \n", "failed": true}),
        )
        .unwrap();
        let m = evac("e1", "05:00:00", Some(31), CPU);
        assert_eq!(failure_of(Some(&v), &m).as_deref(), Some(CPU));
        // Blank everywhere: a true condition's message with text, e.g. the one
        // pkg/virt-controller/watch/migration/migration.go (kubevirt) sets while utility
        // volumes are attached.
        let mut blank = evac("e1", "05:00:00", Some(31), "");
        assert_eq!(failure_of(Some(&v), &blank), None);
        blank.status.conditions = serde_json::from_value(json!([
            {"type": "Blank", "status": "True", "message": "   "},
            {"type": "migrationBlockedByUtilityVolumes", "status": "True",
                "reason": "UtilityVolumesPresent",
                "message": "Migration is waiting for utility volumes to detach. Will timeout in 42 seconds."}
        ]))
        .unwrap();
        assert_eq!(
            failure_of(Some(&v), &blank).as_deref(),
            Some("Migration is waiting for utility volumes to detach. Will timeout in 42 seconds.")
        );
    }

    #[test]
    fn below_the_threshold_unmarked_moved_or_after_a_success_is_no_loop() {
        let t = LoopThresholds::default();
        let ms = three_failed_and_one_waiting();
        let marked = vmi(Some("n2-v15"), "n2-v15");
        // Two failures: not yet.
        assert!(detect_on(&marked, &ms[1..], &t).is_none());
        // The threshold is the operator's.
        assert!(detect_on(&marked, &ms, &LoopThresholds { failures: 4, ..t }).is_none());
        assert!(detect_on(&marked, &ms[1..], &LoopThresholds { failures: 2, ..t }).is_some());
        // Not marked (evacuation cancelled): nothing creates the next one.
        assert!(detect_on(&vmi(None, "n2-v15"), &ms, &t).is_none());
        // Moved off the node it was evacuated from (hasMigratedOnEviction).
        assert!(detect_on(&vmi(Some("n2-v15"), "n1-v15"), &ms, &t).is_none());
        // A success in between resets the count, as handleMigrationBackoff does.
        let mut ok = evac("e2", "05:00:51", Some(31), "");
        ok.status.phase = Some(MigrationPhase::Succeeded);
        let with_success = vec![ms[0].clone(), ok, ms[2].clone(), ms[3].clone()];
        assert!(detect_on(&marked, &with_success, &t).is_none());
        // Another VMI's migrations do not count.
        let mut other = ms.clone();
        for m in &mut other {
            m.spec.vmi_name = "other".into();
        }
        assert!(detect_on(&marked, &other, &t).is_none());
    }

    #[test]
    fn unknown_failure_text_never_yields_a_specific_last_cause() {
        let v = vmi(Some("n2-v15"), "n2-v15");
        let garbage = "\u{1b}[31m??? 0xdeadbeef";
        let ms = vec![
            evac("e1", "05:00:00", Some(31), garbage),
            evac("e2", "05:00:51", Some(31), garbage),
            evac("e3", "05:02:02", Some(31), garbage),
        ];
        let mut l = detect_on(&v, &ms, &LoopThresholds::default()).unwrap();
        let evidence = crate::triage::Evidence {
            now: now(),
            migration: None,
            vmi_namespace: "default".into(),
            vmi_name: "vm".into(),
            vmi: Some(v),
            migrations: ms,
            pods: Vec::new(),
            events: Vec::new(),
            kubevirt: None,
            policies: Vec::new(),
            namespace: None,
            load: None,
            unread: Vec::new(),
            pdbs: Vec::new(),
            loops: LoopThresholds::default(),
        };
        with_diagnosis(&mut l, &evidence);
        let last = l.last_failure.unwrap();
        // The generic cause explain gives a failureReason it cannot classify (the
        // libvirt-error rule, as src/triage/tests.rs asserts for other unknown texts), the
        // text quoted as read: never a specific cause.
        assert_eq!(
            last.cause.as_deref(),
            Some("libvirt-error"),
            "{:?}",
            last.summary
        );
        assert!(
            last.summary.as_deref().unwrap().contains("0xdeadbeef"),
            "{:?}",
            last.summary
        );
        assert_eq!(last.reason.as_deref(), Some(garbage));
        // The loop itself is read from status, whatever the text says.
        assert_eq!(l.kind, LoopKind::EvacuationLoop);
    }

    fn decentralized(role: &str, phase: &str, entered: &str) -> VirtualMachineInstanceMigration {
        let spec = if role == "sender" {
            json!({"vmiName": "vm", "sendTo": {"migrationID": "mig-1", "connectURL": "sync.peer:9185"}})
        } else {
            json!({"vmiName": "vm", "receive": {"migrationID": "mig-1"}})
        };
        serde_json::from_value(json!({
            "metadata": {"name": format!("vm-{role}"), "namespace": "default", "uid": format!("uid-{role}"),
                "creationTimestamp": entered},
            "spec": spec,
            "status": {"phase": phase, "phaseTransitionTimestamps": [
                {"phase": phase, "phaseTransitionTimestamp": entered}]}
        }))
        .unwrap()
    }

    #[test]
    fn a_sync_phase_past_the_timeout_is_stuck_and_names_the_missing_side() {
        let t = LoopThresholds::default();
        let v = vmi(None, "n2-v15");
        // 4m59s: not yet (default 5m).
        let fresh = decentralized("sender", "Synchronizing", "2026-11-30T04:58:31Z");
        assert!(detect_on(&v, &[fresh], &t).is_none());
        let old = decentralized("sender", "Synchronizing", "2026-11-30T04:23:30Z");
        let l = detect_on(&v, std::slice::from_ref(&old), &t).unwrap();
        assert_eq!(l.kind, LoopKind::DecentralizedSyncStuck);
        assert_eq!(l.seconds, 2400);
        assert_eq!(
            l.blocking.field,
            "status.migrationState.sourceState.migrationUID"
        );
        assert!(
            l.counterpart
                .as_deref()
                .unwrap()
                .contains("spec.receive.migrationID mig-1")
        );
        assert!(l.counterpart.as_deref().unwrap().contains("sync.peer:9185"));
        // A tighter timeout catches the fresh one.
        let fresh = decentralized("sender", "Synchronizing", "2026-11-30T04:58:31Z");
        assert!(
            detect_on(
                &v,
                &[fresh],
                &LoopThresholds {
                    sync_seconds: 60,
                    ..t
                }
            )
            .is_some()
        );
        // The receiver waits for the source side (kubevirt#18259: its node never arrives).
        let mut v2 = vmi(None, "n2-v15");
        v2.status.migration_state = serde_json::from_value(json!({
            "sourceState": {"migrationUID": "peer", "pod": "virt-launcher-vm-x"}}))
        .unwrap();
        let recv = decentralized("receiver", "WaitingForSync", "2026-11-30T04:23:30Z");
        let l = detect_on(&v2, &[recv], &t).unwrap();
        assert_eq!(l.blocking.field, "status.migrationState.sourceState.node");
        assert!(
            l.counterpart
                .as_deref()
                .unwrap()
                .contains("spec.sendTo.migrationID mig-1")
        );
        assert!(
            l.way_out
                .iter()
                .any(|w| w.contains("kubectl delete vmim vm-receiver -n default"))
        );
    }

    #[test]
    fn a_handoff_past_the_timeout_blocks_on_the_source_pvc() {
        let t = LoopThresholds::default();
        let m: VirtualMachineInstanceMigration = serde_json::from_value(json!({
            "metadata": {"name": "m", "namespace": "default", "uid": "uid-m",
                "creationTimestamp": "2026-11-30T05:00:00Z"},
            "spec": {"vmiName": "vm"},
            "status": {"phase": "Running"}
        }))
        .unwrap();
        let with_end = |end: &str| {
            let mut v = vmi(None, "n1-v15");
            v.status.migration_state = serde_json::from_value(json!({
                "migrationUid": "uid-m", "completed": true, "endTimestamp": end,
                "sourcePersistentStatePVCName": "persistent-state-for-vm-a",
                "targetPersistentStatePVCName": "persistent-state-for-vm-b"}))
            .unwrap();
            v
        };
        assert!(
            detect_on(
                &with_end("2026-11-30T05:02:00Z"),
                std::slice::from_ref(&m),
                &t
            )
            .is_none()
        );
        let l = detect_on(
            &with_end("2026-11-30T05:01:00Z"),
            std::slice::from_ref(&m),
            &t,
        )
        .unwrap();
        assert_eq!(l.kind, LoopKind::BackendStorageHandoffStuck);
        assert_eq!(
            l.blocking.object,
            "PersistentVolumeClaim/default/persistent-state-for-vm-a"
        );
        assert_eq!(l.seconds, 150);
    }
}
