//! The `no-node-for-cpu-model` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const NO_NODE_FOR_CPU_MODEL: Rule = Rule {
    cause: Cause {
        id: "no-node-for-cpu-model",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "Event NoSuitableNodesForHostModelMigration on the VMI",
        "Pod spec.nodeSelector (cpu-model-migration.node.kubevirt.io/*)",
        "Pod status.conditions[type=PodScheduled]",
    ],
    advice: "A host-model CPU only migrates to nodes with the same CPU model and features: use a named CPU model, or add such nodes.",
    blocks: true,
    check: no_node_for_cpu_model,
};

pub(super) fn no_node_for_cpu_model(v: &View) -> Option<Finding> {
    if !before_streaming(v) || (v.is_final() && v.phase != MigrationPhase::Failed) {
        return None;
    }
    let event = newest_with_reason(v.vmi_events(), s::REASON_NO_NODE_FOR_CPU_MODEL);
    let cpu_selectors: Vec<String> = v
        .target_pod
        .and_then(|p| p.spec.as_ref())
        .and_then(|sp| sp.node_selector.as_ref())
        .map(|sel| {
            sel.keys()
                .filter(|k| k.starts_with("cpu-model-migration.node.kubevirt.io/"))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let unsched = v
        .target_pod
        .and_then(|p| pod_condition(p, "PodScheduled"))
        .filter(|c| c.status == "False")
        .and_then(|c| c.message);
    let selector_only = unsched.is_some_and(|m| {
        let lower = m.to_ascii_lowercase();
        lower.contains("didn't match pod's node affinity/selector")
            && !lower.contains("insufficient")
    }) && !cpu_selectors.is_empty();
    if event.is_none() && !selector_only {
        return None;
    }
    let mut f = Finding::on_event(v, event);
    if let (Some(p), false) = (&v.target_pod_name, cpu_selectors.is_empty()) {
        f.evidence
            .push(v.pod_fact(p, "spec.nodeSelector", cpu_selectors.join(", ")));
    }
    if let (Some(p), Some(m)) = (&v.target_pod_name, unsched) {
        f.evidence.push(v.pod_fact(
            p,
            "status.conditions[type=PodScheduled].message",
            m.to_string(),
        ));
    }
    let model = cpu_selectors
        .first()
        .and_then(|k| k.rsplit('/').next())
        .map(|m| format!(" ({m})"))
        .unwrap_or_default();
    f.summary = format!(
        "No other node can run the VMI's host-model CPU{model}: the target pod must land on a node with the same CPU model and features, and none has them.{}",
        event
            .map(|e| format!(" {}", event_message(e)))
            .unwrap_or_default()
    );
    if let Some(k) = cpu_selectors.first() {
        f.next_steps.push(format!(
            "See which nodes qualify: kubectl get nodes -l {k}=true"
        ));
    }
    f.next_steps.push(
        "Give VMs that must migrate a named CPU model common to the nodes (spec.domain.cpu.model), or add nodes with the same CPU"
            .into(),
    );
    Some(f)
}
