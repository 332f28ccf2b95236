//! The `decentralized-sync-stuck` rule (kubevirt/kubevirt#17317, #18259): a decentralized
//! migration in WaitingForSync or Synchronizing for longer than `--sync-timeout`, with no
//! condition saying why (`decentralized-migration-blocked` takes the case where there is one).

use super::*;
use crate::triage::loops::{self, LoopKind};

pub(crate) const DECENTRALIZED_SYNC_STUCK: Rule = Rule {
    cause: Cause {
        id: "decentralized-sync-stuck",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "VirtualMachineInstanceMigration status.phase, status.phaseTransitionTimestamps[phase=WaitingForSync|Synchronizing]",
        "VirtualMachineInstanceMigration spec.sendTo / spec.receive",
        "VirtualMachineInstance status.migrationState.{sourceState,targetState}",
    ],
    advice: "KubeVirt has no timeout for WaitingForSync/Synchronizing: the phase ends only when the synchronization controller copies the peer's side into the VMI. Find the peer VMIM with the same migrationID (create it, or fix the synchronization controllers' connection), or delete both VMIMs to give up.",
    blocks: true,
    check: decentralized_sync_stuck,
};

pub(super) fn decentralized_sync_stuck(v: &View) -> Option<Finding> {
    let m = v.vmim?;
    let l = loops::detect(v.namespace(), v.vmi_name(), v.vmi, &[m], v.now, &v.ev.loops)
        .filter(|l| l.kind == LoopKind::DecentralizedSyncStuck)?;
    let mut f = Finding::default();
    f.evidence
        .push(v.vmim_fact("status.phase", v.phase.as_str()));
    f.evidence.push(v.vmim_fact(
        &format!("status.phaseTransitionTimestamps[phase={}]", v.phase),
        l.since.clone(),
    ));
    f.evidence.extend(kv19::sync_facts(v));
    f.evidence.push(Fact {
        object: l.blocking.object.clone(),
        field: l.blocking.field.clone(),
        value: l.blocking.value.clone(),
        note: Some("filled by the synchronization controller from the peer".into()),
    });
    f.summary = format!(
        "{} The other side is {}.",
        l.summary,
        l.counterpart.as_deref().unwrap_or("unknown")
    );
    f.next_steps = l.steps();
    f.next_steps.extend(
        kv19::sync_steps(v)
            .into_iter()
            .filter(|s| !s.starts_with("On the peer cluster")),
    );
    Some(f)
}
