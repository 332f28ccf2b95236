//! The `target-pod-unschedulable` rule: its cause, reads, advice and check, and the hints
//! each clause of the scheduler's message gives.

use super::*;

/// What each clause of a FailedScheduling message asks the operator to do.
pub(super) fn scheduler_hints(v: &View, message: &str) -> Vec<String> {
    let mut hints = Vec::new();
    let need_memory = v
        .target_pod
        .and_then(pod_memory_request)
        .map(|b| format!("{}Mi", b.div_ceil(1 << 20)));
    let lower = message.to_ascii_lowercase();
    if lower.contains("insufficient memory") {
        hints.push(format!(
            "No node has {} of memory free for the target pod: free memory on a node (migrate or stop other VMs), add a node, or lower the VM's memory. See the room a drain needs with: vmctl plan-drain {}",
            need_memory.as_deref().unwrap_or("the requested amount"),
            src_node(v)
        ));
    }
    if lower.contains("insufficient cpu") {
        hints.push(
            "No node has the requested CPU free for the target pod: free CPU or add a node".into(),
        );
    }
    if lower.contains("insufficient devices.kubevirt.io") {
        hints.push("A KubeVirt device (kvm, tun, vhost-net) is exhausted or not advertised on the other nodes: check virt-handler and the device plugins there".into());
    }
    if lower.contains("untolerated taint") {
        hints.push("Some nodes carry taints the VMI does not tolerate (the message lists them): add a toleration to the VM or use other nodes".into());
    }
    if lower.contains("didn't match pod's node affinity/selector") {
        hints.push(format!(
            "The VMI's nodeSelector/affinity (plus the VMIM's addedNodeSelector and any CPU-model labels) excludes nodes: compare kubectl get pod -n {} {} -o jsonpath='{{.spec.nodeSelector}}' with the nodes' labels",
            v.namespace(),
            v.target_pod_name.as_deref().unwrap_or("<target pod>")
        ));
    }
    if lower.contains("didn't match pod anti-affinity rules") {
        hints.push("Pod anti-affinity excludes nodes; one of them is always the source node (KubeVirt keeps source and target apart)".into());
    }
    if lower.contains("were unschedulable") {
        hints.push("Some nodes are cordoned: uncordon one or add capacity".into());
    }
    if lower.contains("volume node affinity conflict") {
        hints.push("A volume is bound to a zone or node the target cannot use: the VM's storage must be reachable from the target node".into());
    }
    if hints.is_empty() {
        hints.push(format!(
            "Read the scheduler's full verdict: kubectl describe pod -n {} {}",
            v.namespace(),
            v.target_pod_name.as_deref().unwrap_or("<target pod>")
        ));
    }
    hints
}

pub(crate) const TARGET_POD_UNSCHEDULABLE: Rule = Rule {
    cause: Cause {
        id: "target-pod-unschedulable",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "Pod status.conditions[type=PodScheduled] of the target pod",
        "Event FailedScheduling on the target pod",
        "Event migrationTargetPodUnschedulable / SuccessfulDelete on the VMIM",
        "status.migrationState.startTimestamp",
    ],
    advice: "The scheduler found no node for the target pod; KubeVirt deletes it after 300 s. Free what the scheduler's message says is missing.",
    blocks: true,
    check: target_pod_unschedulable,
};

pub(super) fn target_pod_unschedulable(v: &View) -> Option<Finding> {
    if !before_streaming(v) {
        return None;
    }
    let cond = v
        .target_pod
        .and_then(|p| pod_condition(p, "PodScheduled"))
        .filter(|c| c.status == "False" && c.reason == Some("Unschedulable"));
    let deleted = v.vmim_event_starting(s::UNSCHEDULABLE_DELETE_PREFIX);
    let sched_event = newest_with_reason(v.target_pod_events(), s::REASON_FAILED_SCHEDULING);
    let vmim_event = newest_with_reason(v.vmim_events(), s::REASON_TARGET_UNSCHEDULABLE);
    let applies = match &v.phase {
        MigrationPhase::Failed => {
            deleted.is_some()
                || (sched_event.is_some() || vmim_event.is_some()) && v.target_pod.is_none()
        }
        p if p.is_final() => false,
        _ => cond.is_some() || (v.target_pod.is_none() && vmim_event.is_some()),
    };
    if !applies {
        return None;
    }
    let pod = v
        .target_pod_name
        .clone()
        .unwrap_or_else(|| "(unknown)".into());
    let mut f = Finding::default();
    let message = cond
        .as_ref()
        .and_then(|c| c.message)
        .or_else(|| sched_event.map(event_message));
    if let Some(c) = &cond {
        f.evidence.push(v.pod_fact(
            &pod,
            "status.conditions[type=PodScheduled].reason",
            c.reason.unwrap_or("").to_string(),
        ));
        if let Some(m) = c.message {
            f.evidence.push(v.pod_fact(
                &pod,
                "status.conditions[type=PodScheduled].message",
                m.to_string(),
            ));
        }
    }
    for e in [sched_event, vmim_event, deleted].into_iter().flatten() {
        f.evidence.push(v.event_fact(e));
    }
    if let Some(m) = v.vmim {
        f.evidence.push(
            v.vmim_fact(
                "status.migrationState.startTimestamp",
                m.status
                    .migration_state
                    .as_ref()
                    .and_then(|st| st.start_timestamp.as_ref())
                    .map(|t| t.0.to_string())
                    .unwrap_or_else(|| "(absent: no memory was copied)".into()),
            ),
        );
    }
    let verdict = message
        .map(|m| format!(": {}", s::scheduler_summary(m)))
        .unwrap_or_default();
    let pending = kv19::pending_deadline(v, true);
    let mut created_fact = None;
    let timeout = pending.timeout;
    let why_timeout = kv19::override_words(&pending);
    f.summary = if v.phase == MigrationPhase::Failed {
        format!(
            "The target pod {pod} could not be scheduled{verdict}. KubeVirt deleted it {} after its creation{why_timeout} and failed the migration before any memory was copied.",
            dur(timeout)
        )
    } else {
        // virt-controller measures from the pod's creation (handlePendingPodTimeout).
        let deadline = pending
            .deadline
            .map(|d| d.as_second())
            .or_else(|| cond.as_ref().and_then(|c| c.since).map(|s| s.as_second() + timeout))
            .map(|d| {
                let when = if d <= v.now.as_second() && kv19::target_pod_pending(v) {
                    format!(
                        "it was due at {} ({}), and virt-controller has not acted on it yet (check that virt-controller runs and sees this migration)",
                        ts_string(d),
                        until(v, d)
                    )
                } else {
                    format!("at {} ({})", ts_string(d), until(v, d))
                };
                if let (Some(p), Some(created)) = (
                    v.target_pod,
                    v.target_pod
                        .and_then(|p| p.metadata.creation_timestamp.as_ref()),
                ) {
                    created_fact = Some(v.pod_fact(
                        pod_name(p),
                        "metadata.creationTimestamp",
                        created.0.to_string(),
                    ));
                }
                format!(
                    " KubeVirt deletes an unschedulable target pod {} after its creation{why_timeout}, and the migration then fails: {when}.",
                    dur(timeout)
                )
            })
            .unwrap_or_default();
        format!("The target pod {pod} cannot be scheduled{verdict}.{deadline}")
    };
    if let Some(mut fact) = created_fact {
        fact.note = Some("the pending-pod timeouts count from here".into());
        f.evidence.push(fact);
    }
    if let (Some(a), Some(m)) = (pending.overridden_by, v.vmim) {
        f.evidence.push(v.vmim_fact(
            &format!("metadata.annotations[{a}]"),
            m.annotation(a).unwrap_or("").to_string(),
        ));
    }
    if let Some(m) = message {
        f.next_steps.extend(scheduler_hints(v, m));
    }
    if v.target_pod.is_some() {
        f.next_steps
            .push(format!("kubectl describe pod -n {} {pod}", v.namespace()));
    }
    if v.is_final() {
        f.next_steps.push(retry_step(v));
    }
    Some(f)
}
