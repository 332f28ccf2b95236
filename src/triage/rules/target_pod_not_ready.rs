//! The `target-pod-not-ready` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const TARGET_POD_NOT_READY: Rule = Rule {
    cause: Cause {
        id: "target-pod-not-ready",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "Pod status.containerStatuses / initContainerStatuses of the target pod",
        "Event on the target pod (FailedMount, Failed, BackOff…)",
        "Event SuccessfulDelete on the VMIM (pending pod … timeout period exceeded)",
    ],
    advice: "The target pod was scheduled but never became ready (image, init, volumes); KubeVirt deletes it after 900 s pending.",
    blocks: true,
    check: target_pod_not_ready,
};

pub(super) fn target_pod_not_ready(v: &View) -> Option<Finding> {
    if !before_streaming(v) {
        return None;
    }
    let deleted = v.vmim_event_starting(s::PENDING_DELETE_PREFIX);
    let pod = v.target_pod;
    let problems = pod.map(pod_container_problems).unwrap_or_default();
    let warnings: Vec<_> = v
        .target_pod_events()
        .filter(|e| event_is_warning(e) && event_reason(e) != s::REASON_FAILED_SCHEDULING)
        .collect();
    let scheduled = pod.is_some_and(|p| {
        pod_node(p).is_some()
            || pod_condition(p, "PodScheduled").is_some_and(|c| c.status == "True")
    });
    let not_ready = pod.is_some_and(|p| {
        pod_phase(p) == Some("Pending")
            || pod_condition(p, "Ready").is_some_and(|c| c.status != "True")
    });
    let applies = match v.phase {
        MigrationPhase::Failed => deleted.is_some(),
        MigrationPhase::Scheduling | MigrationPhase::Pending => {
            scheduled && not_ready && (!problems.is_empty() || !warnings.is_empty())
        }
        _ => false,
    };
    if !applies {
        return None;
    }
    let name = v
        .target_pod_name
        .clone()
        .unwrap_or_else(|| "(unknown)".into());
    let mut f = Finding::default();
    for (container, reason, message) in &problems {
        f.evidence.push(v.pod_fact(
            &name,
            &format!("status.containerStatuses[name={container}].state.waiting.reason"),
            match message {
                Some(m) => format!("{reason}: {m}"),
                None => reason.clone(),
            },
        ));
    }
    for e in warnings.iter().take(3) {
        f.evidence.push(v.event_fact(e));
    }
    if let Some(e) = deleted {
        f.evidence.push(v.event_fact(e));
    }
    let why: Vec<String> = problems
        .iter()
        .map(|(c, r, _)| format!("container {c}: {r}"))
        .chain(
            warnings
                .iter()
                .take(2)
                .map(|e| format!("{}: {}", event_reason(e), event_message(e))),
        )
        .collect();
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(" ({})", why.join("; "))
    };
    let node = pod.and_then(pod_node).unwrap_or("its node");
    let pending = kv19::pending_deadline(v, false);
    let why_timeout = kv19::override_words(&pending);
    f.summary = if v.phase == MigrationPhase::Failed {
        format!(
            "The target pod {name} was scheduled but stayed pending{why}; KubeVirt deleted it {} after its creation{why_timeout} and failed the migration before any memory was copied.",
            dur(pending.timeout)
        )
    } else {
        let deadline = match (pending.deadline, kv19::target_pod_pending(v)) {
            (Some(d), true) => {
                let d = d.as_second();
                let when = if d <= v.now.as_second() {
                    format!(
                        "it was due at {} ({}), and virt-controller has not acted on it yet",
                        ts_string(d),
                        until(v, d)
                    )
                } else {
                    format!("at {}, {}", ts_string(d), until(v, d))
                };
                format!(
                    " KubeVirt deletes a target pod still pending {} after its creation{why_timeout} ({when}).",
                    dur(pending.timeout)
                )
            }
            // Running but not ready: the pending-pod timeout no longer applies.
            (Some(_), false) => " The pod is past Pending, so KubeVirt's pending-pod timeout no longer applies: it waits for readiness without a deadline.".to_string(),
            (None, _) => String::new(),
        };
        format!("The target pod {name} is scheduled on {node} but not ready{why}.{deadline}")
    };
    if let (Some(a), Some(m)) = (pending.overridden_by, v.vmim) {
        f.evidence.push(v.vmim_fact(
            &format!("metadata.annotations[{a}]"),
            m.annotation(a).unwrap_or("").to_string(),
        ));
    }
    let ns = v.namespace();
    let all = why.to_ascii_lowercase();
    if all.contains("imagepull") || all.contains("errimage") {
        f.next_steps.push(format!(
            "{node} cannot pull the launcher image: check registry access and pull secrets from {node}"
        ));
    }
    if all.contains("failedmount") || all.contains("failedattachvolume") {
        f.next_steps.push(format!(
            "A volume cannot be attached on {node}: the VM's PVCs must be ReadWriteMany and reachable from {node} (kubectl get pvc -n {ns})"
        ));
    }
    if pod.is_some() {
        f.next_steps
            .push(format!("kubectl describe pod -n {ns} {name}"));
    }
    if v.is_final() {
        f.next_steps.push(retry_step(v));
    }
    Some(f)
}
