//! The `queued-parallel-limit` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const QUEUED_PARALLEL_LIMIT: Rule = Rule {
    cause: Cause {
        id: "queued-parallel-limit",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "VirtualMachineInstanceMigration status.phase of every migration in the cluster",
        "KubeVirt spec.configuration.migrations.{parallelMigrationsPerCluster,parallelOutboundMigrationsPerNode}",
        "VirtualMachineInstance status.nodeName",
    ],
    advice: "The migration waits for a free slot: that is normal. Raise the limits only if the network can carry more.",
    blocks: false,
    check: queued_parallel_limit,
};

pub(super) fn queued_parallel_limit(v: &View) -> Option<Finding> {
    if !matches!(v.phase, MigrationPhase::Pending) {
        return None;
    }
    let load = v.ev.load.as_ref()?;
    let me = v.vmim.and_then(|m| m.uid());
    let running: Vec<&crate::model::VirtualMachineInstanceMigration> = load
        .migrations
        .iter()
        .filter(|m| m.uid() != me && m.status.phase.is_some() && m.phase().counts_as_running())
        .collect();
    let from_node: Vec<_> = running
        .iter()
        .filter(|m| {
            load.vmis_on_node
                .iter()
                .any(|q| *q == format!("{}/{}", m.namespace(), m.spec.vmi_name))
        })
        .collect();
    let cluster_limit = v.config.parallel_migrations_per_cluster as usize;
    let node_limit = v.config.parallel_outbound_migrations_per_node as usize;
    let node = v
        .vmi
        .and_then(|x| x.status.node_name.as_deref())
        .unwrap_or("its node");
    let (kv_ns, kv_name) = v.kubevirt_ref();
    let mut f = Finding::default();
    let list = |ms: &[&&crate::model::VirtualMachineInstanceMigration]| {
        ms.iter()
            .map(|m| format!("{}/{} ({})", m.namespace(), m.name(), m.phase()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if running.len() >= cluster_limit {
        f.evidence.push(Fact {
            object: format!("KubeVirt/{kv_ns}/{kv_name}"),
            field: "spec.configuration.migrations.parallelMigrationsPerCluster".into(),
            value: cluster_limit.to_string(),
            note: Some(format!(
                "{} running: {}",
                running.len(),
                list(&running.iter().collect::<Vec<_>>())
            )),
        });
        f.summary = format!(
            "Queued: {} migrations already run in the cluster, the limit (parallelMigrationsPerCluster) is {cluster_limit}; this one starts when a slot frees up.",
            running.len()
        );
        f.next_steps.push(format!(
            "Wait, or allow more at once if the network can carry it: {}",
            v.patch_kubevirt_migrations(
                "parallelMigrationsPerCluster",
                &(cluster_limit + 2).to_string()
            )
        ));
    } else if from_node.len() >= node_limit {
        f.evidence.push(Fact {
            object: format!("KubeVirt/{kv_ns}/{kv_name}"),
            field: "spec.configuration.migrations.parallelOutboundMigrationsPerNode".into(),
            value: node_limit.to_string(),
            note: Some(format!(
                "{} leaving {node}: {}",
                from_node.len(),
                list(&from_node.to_vec())
            )),
        });
        f.summary = format!(
            "Queued: {} migrations are already leaving {node}, the limit (parallelOutboundMigrationsPerNode) is {node_limit}; this one starts when one of them finishes.",
            from_node.len()
        );
        f.next_steps.push(format!(
            "Wait, or allow more from one node if its network can carry it: {}",
            v.patch_kubevirt_migrations(
                "parallelOutboundMigrationsPerNode",
                &(node_limit + 1).to_string()
            )
        ));
    } else {
        return None;
    }
    // Which pending migrations the queue serves first: those competing for the same slot
    // (every one for a cluster slot, the same node's for a node slot).
    if let Some(me) = v.vmim {
        let by_priority = kv19::priority_queue_active(v);
        let node_bound = running.len() < cluster_limit;
        let competing = load.migrations.iter().filter(|m| {
            !node_bound
                || load
                    .vmis_on_node
                    .iter()
                    .any(|q| *q == format!("{}/{}", m.namespace(), m.spec.vmi_name))
        });
        let ahead = kv19::ahead_of(me, competing, by_priority);
        let mut fact = v.vmim_fact(
            "spec.priority",
            me.spec.priority.clone().unwrap_or_else(|| "(unset)".into()),
        );
        fact.note = Some(format!(
            "queue weight {}{}",
            if by_priority {
                me.priority().map(|p| p.queue_weight()).unwrap_or(0)
            } else {
                0
            },
            if by_priority {
                ""
            } else {
                " (priority queue off: KubeVirt before v1.9 without the MigrationPriorityQueue gate)"
            }
        ));
        f.evidence.push(fact);
        f.evidence.extend(kv19::ahead_facts(&ahead));
        f.summary
            .push_str(&kv19::queue_sentence(me, &ahead, by_priority));
    }
    f.next_steps
        .push("See what runs now: vmctl status -A".to_string());
    Some(f)
}
