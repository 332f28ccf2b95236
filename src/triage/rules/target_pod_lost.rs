//! The `target-pod-lost` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const TARGET_POD_LOST: Rule = Rule {
    cause: Cause {
        id: "target-pod-lost",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "status.migrationState.failureReason (Target pod is down)",
        "Event FailedMigration on the VMIM",
        "Pod status.phase of the target pod",
    ],
    advice: "The target pod died or was deleted during the migration: find out why on the target node, then retry.",
    blocks: true,
    check: target_pod_lost,
};

pub(super) fn target_pod_lost(v: &View) -> Option<Finding> {
    let down = v
        .failure_reason()
        .filter(|r| r.trim() == s::TARGET_POD_DOWN);
    let event = v.vmim_events().find(|e| {
        let m = event_message(e);
        m == s::TARGET_POD_SHUTDOWN || m == s::TARGET_POD_REMOVED || m == s::ATTACHMENT_POD_SHUTDOWN
    });
    let vmi_event = v.vmi_events().find(|e| {
        event_reason(e) == s::REASON_FAILED_MIGRATION
            && event_message(e).contains(s::TARGET_POD_DOWN)
    });
    let target_failed = !v.is_final()
        && v.target_pod.is_some_and(|p| {
            pod_phase(p) == Some("Failed") || p.metadata.deletion_timestamp.is_some()
        });
    if down.is_none() && event.is_none() && vmi_event.is_none() && !target_failed {
        return None;
    }
    let mut f = Finding {
        inferred: down.is_none() && event.is_none() && vmi_event.is_none(),
        ..Default::default()
    };
    f.evidence.extend(down.and_then(|_| failure_fact(v)));
    for e in [event, vmi_event].into_iter().flatten() {
        f.evidence.push(v.event_fact(e));
    }
    let name = v
        .target_pod_name
        .clone()
        .unwrap_or_else(|| "(unknown)".into());
    let pod_state = v.target_pod.map(|p| {
        let reason = p
            .status
            .as_ref()
            .and_then(|st| st.reason.clone())
            .map(|r| format!(", reason {r}"))
            .unwrap_or_default();
        format!("{}{reason}", pod_phase(p).unwrap_or("?"))
    });
    if let Some(st) = &pod_state {
        f.evidence
            .push(v.pod_fact(&name, "status.phase", st.clone()));
    }
    let what = event
        .map(event_message)
        .or(down)
        .unwrap_or("the target pod failed");
    f.summary = format!(
        "The target pod {name} on {} went away during the migration ({what}){}, so virt-controller failed it; the guest stays on {}.",
        tgt_node(v),
        pod_state
            .map(|s| format!("; it is {s}"))
            .unwrap_or_else(|| "; it no longer exists".into()),
        src_node(v)
    );
    let ns = v.namespace();
    if v.target_pod.is_some() {
        f.next_steps.push(format!(
            "See why it stopped: kubectl describe pod -n {ns} {name}"
        ));
    } else {
        f.next_steps.push(format!(
            "It is gone; its events may remain: kubectl get events -n {ns} --field-selector involvedObject.name={name}"
        ));
    }
    f.next_steps.push(format!(
        "Check the target node (evictions, OOM, restarts): kubectl describe node {}",
        tgt_node(v)
    ));
    f.next_steps.push(retry_step(v));
    Some(f)
}
