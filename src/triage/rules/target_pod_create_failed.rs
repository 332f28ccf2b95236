//! The `target-pod-create-failed` rule: its cause, reads, advice and check (the finding is
//! also used when an unexplained FailedCreate overrides "in progress").

use super::*;
use crate::model::Event;

pub(crate) const TARGET_POD_CREATE_FAILED: Rule = Rule {
    cause: Cause {
        id: "target-pod-create-failed",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "Event FailedCreate on the VMI or the VMIM",
        "VirtualMachineInstanceMigration status.phase",
    ],
    advice: "The API server refused the target pod (Pod Security, a webhook, a LimitRange): fix what the message names.",
    blocks: true,
    check: target_pod_create_failed,
};

pub(super) fn target_pod_create_failed(v: &View) -> Option<Finding> {
    if !before_streaming(v) || v.target_pod.is_some() {
        return None;
    }
    let open = matches!(
        v.phase,
        MigrationPhase::Pending | MigrationPhase::Unset | MigrationPhase::Failed
    );
    let event = v.newest_event(is_target_pod_create_failure)?;
    if !open {
        return None;
    }
    let mut f = create_failed_finding(v, event);
    // On the VMI, a FailedCreate without virt-controller's prefix is taken for the target
    // pod's because nothing else names it.
    f.inferred = event.involved_object.kind.as_deref() != Some("VirtualMachineInstanceMigration")
        && !event_message(event).starts_with(s::ERROR_CREATING_POD);
    Some(f)
}

/// The finding for a refused target pod, from the newest FailedCreate about it.
pub(crate) fn create_failed_finding(v: &View, event: &crate::model::Event) -> Finding {
    let msg = event_message(event);
    let mut f = Finding {
        evidence: vec![v.event_fact(event)],
        ..Default::default()
    };
    let repeated = v
        .events
        .iter()
        .filter(|e| is_target_pod_create_failure(e))
        .map(|e| event_count(e))
        .sum::<i64>();
    f.summary = format!(
        "virt-controller cannot create the target pod{}: {msg}",
        if repeated > 1 {
            format!(" ({repeated} attempts so far, retried with backoff)")
        } else {
            String::new()
        }
    );
    let ns = v.namespace();
    let lower = msg.to_ascii_lowercase();
    // A webhook's message may well talk about privileges: the webhook is what refused.
    if lower.contains("admission webhook") {
        f.next_steps.push(
            "An admission webhook refused the pod: the message names it; check its policy for virt-launcher pods"
                .into(),
        );
    } else if lower.contains("podsecurity") || lower.contains("privileged") {
        f.next_steps.push(format!(
            "virt-launcher pods need the privileged Pod Security level: kubectl label namespace {ns} pod-security.kubernetes.io/enforce=privileged --overwrite"
        ));
    } else if lower.contains("limitrange") || lower.contains("maximum") || lower.contains("minimum")
    {
        f.next_steps.push(format!(
            "A LimitRange rejects the launcher's resources: kubectl describe limitrange -n {ns}"
        ));
    }
    f.next_steps.push(format!(
        "See every attempt: kubectl get events -n {ns} --field-selector reason=FailedCreate"
    ));
    f
}

/// True for a FailedCreate about the target pod: any FailedCreate on the VMIM, or on the VMI
/// unless it names another object (an attachment pod, an evacuation migration) or a quota
/// (which has its own rule).
pub(crate) fn is_target_pod_create_failure(e: &Event) -> bool {
    if event_reason(e) != s::REASON_FAILED_CREATE {
        return false;
    }
    let msg = event_message(e);
    let lower = msg.to_ascii_lowercase();
    if lower.contains(s::EXCEEDED_QUOTA) {
        return false;
    }
    match e.involved_object.kind.as_deref() {
        Some("VirtualMachineInstanceMigration") => true,
        Some("VirtualMachineInstance") => {
            !lower.contains("attachment pod") && !lower.contains("creating a migration")
        }
        _ => false,
    }
}
