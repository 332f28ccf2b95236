//! The `target-on-source-node` rule (kubevirt#18946: a target pod placed on the source
//! node): its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const TARGET_ON_SOURCE_NODE: Rule = Rule {
    cause: Cause {
        id: "target-on-source-node",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "status.migrationState.{sourceNode,targetNode}",
        "Pod spec.nodeName of the source and target pods",
        "Event FailedMigration on the VMIM",
    ],
    advice: "The target pod landed on the node the VMI already runs on, which never works: find why the scheduler ignored the target pod's anti-affinity (another scheduler, a profile without InterPodAffinity, node topology labels).",
    blocks: true,
    check: target_on_source_node,
};

pub(super) fn target_on_source_node(v: &View) -> Option<Finding> {
    if matches!(v.phase, MigrationPhase::Succeeded) || !v.has_migration() {
        return None;
    }
    let from_state = v.state.and_then(|st| {
        let (src, tgt) = (st.source_node.as_deref()?, st.target_node.as_deref()?);
        Some((src, tgt))
    });
    let from_pods = match (
        v.source_pod.and_then(pod_node),
        v.target_pod.and_then(pod_node),
    ) {
        (Some(src), Some(tgt)) if v.source_pod_name != v.target_pod_name => Some((src, tgt)),
        _ => None,
    };
    let (node, by_state) = match (from_state, from_pods) {
        (Some((a, b)), _) if a == b => (a, true),
        (_, Some((a, b))) if a == b => (a, false),
        _ => return None,
    };
    let mut f = Finding::default();
    if by_state {
        f.evidence
            .push(v.state_fact("sourceNode", node.to_string()));
        f.evidence
            .push(v.state_fact("targetNode", node.to_string()));
    } else {
        for name in [&v.source_pod_name, &v.target_pod_name]
            .into_iter()
            .flatten()
        {
            f.evidence
                .push(v.pod_fact(name, "spec.nodeName", node.to_string()));
        }
    }
    let failed_event = newest_with_reason(v.vmim_events(), s::REASON_FAILED_MIGRATION);
    if let Some(e) = failed_event {
        f.evidence.push(v.event_fact(e));
    }
    let pod = v.target_pod_name.as_deref().unwrap_or("(unknown)");
    let ns = v.namespace();
    f.summary = if v.phase == MigrationPhase::Failed {
        format!(
            "The target pod {pod} was scheduled on {node}, the node the VMI already ran on: a migration cannot work there (both launchers on one node). It stalled until virt-controller gave up{}; that message is the symptom, the placement is the cause.",
            failed_event
                .map(|e| format!(" with \"{}\"", event_message(e)))
                .unwrap_or_default()
        )
    } else {
        format!(
            "The target pod {pod} was scheduled on {node}, the node the VMI runs on: a migration cannot work there (both launchers on one node), so it will stall in {} until it times out and fails.",
            v.phase
        )
    };
    f.next_steps.push(format!(
        "The target pod requires anti-affinity to the source pod, so a conformant scheduler never does this: check which scheduler placed it (kubectl get pod -n {ns} {pod} -o jsonpath='{{.spec.schedulerName}}') and that its profile keeps the InterPodAffinity plugin"
    ));
    f.next_steps.push(format!(
        "Check the anti-affinity's topology label on the node: kubectl get node {node} -L kubernetes.io/hostname"
    ));
    if !v.is_final()
        && let Some(m) = v.vmim
    {
        f.next_steps.push(format!(
            "It cannot succeed: abort it now rather than wait for the timeout: kubectl delete vmim -n {ns} {}",
            m.name()
        ));
    }
    f.next_steps.push(retry_step(v));
    Some(f)
}
