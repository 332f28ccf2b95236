//! The `backend-storage-handoff-stuck` rule (kubevirt#17203: a backend-storage PVC hand-off
//! that never completes): its cause, what it reads, its advice and its check.

use super::*;

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
    let st = v.state?;
    if v.vmim.is_none() || v.is_final() || !st.completed || st.failed {
        return None;
    }
    let pvcs: Vec<&str> = [
        st.source_persistent_state_pvc_name.as_deref(),
        st.target_persistent_state_pvc_name.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect();
    if pvcs.is_empty() {
        return None;
    }
    let end = v.end?;
    let since = v.now.as_second() - end.as_second();
    // After the source finished, virt-controller finalises a migration within seconds: a
    // Running migration whose stream ended longer ago than `--handoff-timeout` (default
    // `triage::loops::DEFAULT_HANDOFF_SECONDS`) is stuck in the hand-off.
    if since < v.ev.loops.handoff_seconds {
        return None;
    }
    let mut f = Finding::default();
    f.evidence
        .push(v.vmim_fact("status.phase", v.phase.as_str()));
    f.evidence.push(v.state_fact("completed", "true"));
    f.evidence
        .push(v.state_fact("endTimestamp", end.to_string()));
    if let Some(p) = &st.source_persistent_state_pvc_name {
        f.evidence
            .push(v.state_fact("sourcePersistentStatePVCName", p.clone()));
    }
    if let Some(p) = &st.target_persistent_state_pvc_name {
        f.evidence
            .push(v.state_fact("targetPersistentStatePVCName", p.clone()));
    }
    let ns = v.namespace();
    let target = st.target_node.as_deref().unwrap_or("the target node");
    f.summary = format!(
        "The guest finished moving to {target} {} ago, but the migration is still {}: virt-controller must hand the backend-storage PVC over ({}) before it completes, that step keeps failing, and it retries without a timeout.",
        fmt::duration(since),
        v.phase,
        pvcs.join(" → ")
    );
    f.next_steps.push(format!(
        "See what blocks the PVC update or deletion (finalizers, deletionTimestamp, labels): kubectl get pvc -n {ns} {} -o yaml",
        pvcs.join(" ")
    ));
    f.next_steps.push(format!(
        "A quota on PVCs or storage can reject the hand-off: kubectl describe resourcequota -n {ns}"
    ));
    f.next_steps.push(format!(
        "Read virt-controller's error: kubectl logs -n kubevirt -l kubevirt.io=virt-controller --tail=500 | grep -i -e {} -e persistent-state",
        v.vmim_name()
    ));
    f.next_steps.push(
        "Once the PVC can be updated, virt-controller completes the migration by itself: do not delete the VMIM (the guest already runs on the target)".into(),
    );
    Some(f)
}
