//! The `backend-storage-handoff-stuck` rule (kubevirt#17203: a backend-storage PVC hand-off
//! that never completes): its cause, what it reads, its advice and its check.

use super::*;
use crate::triage::loops::{self, LoopKind};

pub(crate) const BACKEND_STORAGE_HANDOFF: Rule = Rule {
    cause: Cause {
        id: "backend-storage-handoff-stuck",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "VirtualMachineInstanceMigration status.phase",
        "status.migrationState.{completed,failed,endTimestamp,sourcePersistentStatePVCName,targetPersistentStatePVCName}",
    ],
    advice: "The guest has moved, but virt-controller cannot hand the backend-storage PVC (persistent TPM/EFI state) over and retries without a timeout: fix what rejects the PVC update or deletion (finalizer, quota, PVC gone).",
    blocks: true,
    check: backend_storage_handoff,
};

pub(super) fn backend_storage_handoff(v: &View) -> Option<Finding> {
    // One check, shared with `status` and `drain`: `triage::loops` decides whether the
    // hand-off is stuck (past `--handoff-timeout`, default
    // `triage::loops::DEFAULT_HANDOFF_SECONDS`); this rule adds what explain shows with it.
    let m = v.vmim?;
    let l = loops::detect(v.namespace(), v.vmi_name(), v.vmi, &[m], v.now, &v.ev.loops)
        .filter(|l| l.kind == LoopKind::BackendStorageHandoffStuck)?;
    let mut f = Finding::default();
    f.evidence
        .push(v.vmim_fact("status.phase", v.phase.as_str()));
    if let Some(st) = v.state {
        f.evidence.push(v.state_fact("completed", "true"));
        f.evidence
            .push(v.state_fact("endTimestamp", l.since.clone()));
        if let Some(p) = &st.source_persistent_state_pvc_name {
            f.evidence
                .push(v.state_fact("sourcePersistentStatePVCName", p.clone()));
        }
        if let Some(p) = &st.target_persistent_state_pvc_name {
            f.evidence
                .push(v.state_fact("targetPersistentStatePVCName", p.clone()));
        }
    }
    f.evidence.push(Fact {
        object: l.blocking.object.clone(),
        field: l.blocking.field.clone(),
        value: l.blocking.value.clone(),
        note: Some("what keeps MigrationHandoff failing, most likely".into()),
    });
    let target = v
        .state
        .and_then(|st| st.target_node.as_deref())
        .map(|n| format!(" The guest runs on {n}."))
        .unwrap_or_default();
    f.summary = format!("{}{target}", l.summary);
    let ns = v.namespace();
    let mut steps = l.steps().into_iter();
    f.next_steps.extend(steps.next());
    f.next_steps.push(format!(
        "A quota on PVCs or storage can reject the hand-off: kubectl describe resourcequota -n {ns}"
    ));
    f.next_steps.extend(steps);
    Some(f)
}
