//! The `target-domain-not-seen` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const TARGET_DOMAIN_NOT_SEEN: Rule = Rule {
    cause: Cause {
        id: "target-domain-not-seen",
        plane: Plane::DataPlane,
    },
    reads: &[
        "Event Migrated on the VMI",
        "status.migrationState.{completed,targetNodeDomainDetected}",
        "VirtualMachineInstance status.phase",
    ],
    advice: "The source finished but the target never reported the domain: read the target launcher's and virt-handler's logs on the target node.",
    blocks: true,
    check: target_domain_not_seen,
};

pub(super) fn target_domain_not_seen(v: &View) -> Option<Finding> {
    let event = v.newest_event(|e| {
        event_reason(e) == s::REASON_MIGRATED
            && (event_message(e) == s::DOMAIN_NEVER_OBSERVED
                || event_message(e) == s::MIGRATED_UNKNOWN_HOST)
    });
    // The VMIM turns Succeeded when the source reports completion; virt-handler fails the
    // VMI only afterwards, so a Succeeded phase does not rule this out.
    let inferred_case = event.is_none()
        && v.state.is_some_and(|st| {
            st.completed && !st.failed && st.target_node_domain_detected != Some(true)
        })
        && v.vmi_phase() == Some(&VmiPhase::Failed);
    if event.is_none() && !inferred_case {
        return None;
    }
    let mut f = Finding {
        outcome: Some(Outcome::Failed),
        inferred: inferred_case,
        ..Default::default()
    };
    if let Some(e) = event {
        f.evidence.push(v.event_fact(e));
    }
    if let Some(st) = v.state {
        f.evidence.push(
            v.state_fact(
                "targetNodeDomainDetected",
                st.target_node_domain_detected
                    .map(|b| b.to_string())
                    .unwrap_or_else(|| "(absent)".into()),
            ),
        );
    }
    if let Some(p) = v.vmi_phase() {
        f.evidence.push(v.vmi_fact("status.phase", p.as_str()));
    }
    let unknown_host = event.is_some_and(|e| event_message(e) == s::MIGRATED_UNKNOWN_HOST);
    f.summary = if unknown_host {
        "The source finished streaming but the migration state named no target node, so virt-handler failed the VMI (The VirtualMachineInstance migrated to unknown host.).".to_string()
    } else {
        format!(
            "The source finished streaming{}, but the target node {} never reported the domain within 60 s, so virt-handler on {} failed the VMI.{}",
            v.end.map(|t| format!(" at {t}")).unwrap_or_default(),
            tgt_node(v),
            src_node(v),
            if inferred_case {
                " (Inferred: the migration completed, targetNodeDomainDetected is not true and the VMI is Failed.)"
            } else {
                ""
            }
        )
    };
    let ns = v.namespace();
    if let Some(t) = &v.target_pod_name {
        f.next_steps.push(if v.target_pod.is_some() {
            format!("Read the target launcher's log: kubectl logs -n {ns} {t} -c compute")
        } else {
            format!("The target pod {t} is gone: search your log store for its compute container")
        });
    }
    f.next_steps.push(format!(
        "Read virt-handler's log on {} (kubectl get pods -n kubevirt -l kubevirt.io=virt-handler -o wide)",
        tgt_node(v)
    ));
    f.next_steps.push(match v.vmi.and_then(|x| x.owner_vm()) {
        Some(vm) => format!("Start the VM again if it did not restart: virtctl start {vm} -n {ns}"),
        None => "Recreate the bare VMI from its manifest".to_string(),
    });
    Some(f)
}
