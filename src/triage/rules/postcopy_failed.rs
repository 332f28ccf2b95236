//! The `postcopy-failed` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const POSTCOPY_FAILED: Rule = Rule {
    cause: Cause {
        id: "postcopy-failed",
        plane: Plane::DataPlane,
    },
    reads: &[
        "status.migrationState.{mode,failed,failureReason} (libvirt `failed in post-copy phase`, QEMU `Detected IO failure for postcopy`)",
        "VirtualMachineInstance status.phase",
        "VirtualMachineInstance status.conditions[type=Synchronized]",
        "Event SyncFailed on the VMI",
    ],
    advice: "Post-copy is the point of no return: when it fails the guest is lost. Restart the VM, find the network fault between the nodes, and disallow post-copy for workloads that cannot be lost.",
    blocks: true,
    check: postcopy_failed,
};

pub(super) fn postcopy_failed(v: &View) -> Option<Finding> {
    // libvirt's `job 'migration out' failed in post-copy phase` and QEMU's `Detected IO failure
    // for postcopy. Migration paused.` say it was in post-copy even when the recorded mode
    // does not (strings::Signature::PostcopyIo).
    let postcopy_text = v
        .failure_reason()
        .is_some_and(|r| s::signature(r) == Some(s::Signature::PostcopyIo));
    if !(v.in_post_copy() || postcopy_text) {
        return None;
    }
    let sync = v.vmi_condition("Synchronized").filter(|c| {
        c.is_false()
            && c.message
                .as_deref()
                .is_some_and(|m| m.contains(s::POSTCOPY_IRRECOVERABLE))
    });
    let sync_event = v.newest_event(|e| {
        event_reason(e) == s::REASON_SYNC_FAILED
            && event_message(e).contains(s::POSTCOPY_IRRECOVERABLE)
    });
    let state_failed = v.state.is_some_and(|st| st.failed) || postcopy_text;
    if !(state_failed || sync.is_some() || sync_event.is_some()) {
        return None;
    }
    let mut f = Finding {
        outcome: Some(Outcome::Failed),
        ..Default::default()
    };
    if v.in_post_copy() {
        f.evidence.push(v.state_fact("mode", "PostCopy"));
    }
    if v.state.is_some_and(|st| st.failed) {
        f.evidence.push(v.state_fact("failed", "true"));
    }
    f.evidence.extend(failure_fact(v));
    if let Some(p) = v.vmi_phase() {
        f.evidence.push(v.vmi_fact("status.phase", p.as_str()));
    }
    if let Some(c) = sync {
        f.evidence.push(v.vmi_fact(
            "status.conditions[type=Synchronized].message",
            c.message.clone().unwrap_or_default(),
        ));
    }
    if let Some(e) = sync_event {
        f.evidence.push(v.event_fact(e));
    }
    let trigger = v
        .failure_reason()
        .map(|r| {
            let msg = s::libvirt_error(r)
                .map(|(_, m)| m)
                .unwrap_or_else(|| r.to_string());
            format!(" What broke it: {msg}.")
        })
        .unwrap_or_default();
    let vmi_state = match v.vmi_phase() {
        Some(VmiPhase::Failed) => "the VMI is Failed",
        Some(_) if sync.is_some() => "the VMI is irrecoverable",
        Some(_) => "the VMI is not recoverable",
        None => "the VMI is gone",
    };
    f.summary = format!(
        "The migration failed after it had switched to post-copy, the point of no return: the guest's memory was split between {} and {}, so it could not fall back to the source and the VM was lost ({vmi_state}).{trigger}",
        src_node(v),
        tgt_node(v)
    );
    let ns = v.namespace();
    f.next_steps.push(match v.vmi.and_then(|x| x.owner_vm()) {
        Some(vm) => format!(
            "Start the VM again (a runStrategy of Always or RerunOnFailure does it by itself): virtctl start {vm} -n {ns}"
        ),
        None => format!(
            "The bare VMI {} cannot restart: recreate it from its manifest",
            v.vmi_name()
        ),
    });
    f.next_steps.push(format!(
        "Find the network fault between {} and {} around {}: read virt-handler's log on both nodes (kubectl get pods -n kubevirt -l kubevirt.io=virt-handler -o wide, then kubectl logs -n kubevirt <pod>)",
        src_node(v),
        tgt_node(v),
        v.end.map(|t| t.to_string()).unwrap_or_else(|| "the failure".into())
    ));
    f.next_steps.push(format!(
        "If this workload cannot afford to be lost, do not allow post-copy for it: {}",
        v.patch_setting("allowPostCopy", "false")
    ));
    Some(f)
}
