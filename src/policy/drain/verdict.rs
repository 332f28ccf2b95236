//! Step **verdict**: the drain's outcome from its blockers and rows, its duration, the order
//! it is told in, the migrations landing on the drained nodes, and what the plan assumed.

use super::{
    DEFAULT_BANDWIDTH, DEFAULT_GRACE_SECONDS, DrainBlocker, EVACUATION_PRIORITY, Incoming,
    MigrationQueue, SETUP_SECONDS, Verdict, VmiPlan,
};
use crate::model::VirtualMachineInstance;
use crate::model::kubevirt::{
    DEFAULT_COMPLETION_TIMEOUT_PER_GIB, DEFAULT_PARALLEL_MIGRATIONS_PER_CLUSTER,
    DEFAULT_PARALLEL_OUTBOUND_MIGRATIONS_PER_NODE,
};
use crate::model::vmi::MigrationMode;

/// A blocking blocker blocks the drain; else a row that stops its VM makes it complete with
/// shutdowns.
pub fn verdict(blockers: &[DrainBlocker], plans: &[VmiPlan]) -> Verdict {
    if blockers.iter().any(|b| b.blocking) {
        Verdict::WillBlock
    } else if plans.iter().any(|p| p.action.stops_the_vm()) {
        Verdict::WillCompleteWithShutdowns
    } else {
        Verdict::WillComplete
    }
}

/// The drain takes as long as its last row.
pub fn estimated_seconds(plans: &[VmiPlan]) -> u64 {
    plans
        .iter()
        .filter_map(|p| p.end_seconds)
        .max()
        .unwrap_or(0)
}

/// Blocking blockers first, then by kind, namespace and name.
pub fn sort_blockers(blockers: &mut [DrainBlocker]) {
    blockers.sort_by_key(|b| {
        (
            !b.blocking,
            b.kind.clone(),
            b.namespace.clone(),
            b.name.clone(),
        )
    });
}

/// Blocking VMs first, then by action, then by name.
pub fn sort_rows(plans: &mut [VmiPlan]) {
    plans.sort_by(|a, b| {
        (!a.action.blocks(), a.action, &a.namespace, &a.name).cmp(&(
            !b.action.blocks(),
            b.action,
            &b.namespace,
            &b.name,
        ))
    });
}

/// Migrations still landing on a drained node (from `vmis`, those labelled as migrating
/// there): the drain waits for them, then moves them again.
pub fn incoming(vmis: &[VirtualMachineInstance], drain: &[String]) -> Vec<Incoming> {
    vmis.iter()
        .filter_map(|v| {
            let s = v.status.migration_state.as_ref()?;
            if s.completed || !s.target_node.as_ref().is_some_and(|t| drain.contains(t)) {
                return None;
            }
            Some(Incoming {
                namespace: v.namespace().to_string(),
                name: v.name().to_string(),
                source_node: s.source_node.clone(),
                target_node: s.target_node.clone(),
                target_pod: s.target_pod.clone(),
                mode: s.mode.as_ref().map(|m| m.as_str().to_string()),
                point_of_no_return: s.mode == Some(MigrationMode::PostCopy),
            })
        })
        .collect()
}

/// What the plan assumed, in words: the transfer model (`bandwidth`: `--bandwidth`), the
/// scheduler model, the waves, shutdowns, the queue, and KubeVirt's defaults when no
/// KubeVirt CR was found.
pub fn assumptions(
    bandwidth: Option<u64>,
    queue: &MigrationQueue,
    defaults_assumed: bool,
) -> Vec<String> {
    let mut assumptions = vec![
        format!(
            "transfer time = {SETUP_SECONDS}s setup + guest memory / bandwidth (bandwidthPerMigration when set, else {} per migration); a guest that dirties memory fast takes longer",
            crate::text::bytes(bandwidth.unwrap_or(DEFAULT_BANDWIDTH)) + "/s"
        ),
        "targets are predicted with the scheduler's filters (taints and tolerations, node selector and affinity, host-model CPU, every requested resource and the pod count, DoNotSchedule topology spread), then fewest untolerated PreferNoSchedule taints, highest preferred node affinity weight and most free memory, biggest VMs placed first; ScheduleAnyway spread and the scheduler's other scores are not weighed, nor pod priority and preemption (a higher-priority target pod may still get room by preempting others), so the scheduler makes the final choice".into(),
        "waves: longest migration first, as slots free up under parallelOutboundMigrationsPerNode and parallelMigrationsPerCluster minus migrations already in flight".into(),
        format!("shutdowns take the VMI's terminationGracePeriodSeconds (default {DEFAULT_GRACE_SECONDS}s)"),
    ];
    if !queue.ahead.is_empty() || !queue.behind.is_empty() {
        assumptions.push(format!(
            "migration queue {}: {}{}; pending migrations elsewhere that are ahead take a cluster slot for as long as the drain's average migration",
            queue.mode,
            queue.why,
            if queue.mode == "priority" {
                format!("; the drain's evacuations are {EVACUATION_PRIORITY}")
            } else {
                String::new()
            }
        ));
    }
    if defaults_assumed {
        assumptions.insert(0, format!(
            "no KubeVirt CR found: KubeVirt's defaults apply (evictionStrategy None, {DEFAULT_PARALLEL_MIGRATIONS_PER_CLUSTER} per cluster, {DEFAULT_PARALLEL_OUTBOUND_MIGRATIONS_PER_NODE} per node, {DEFAULT_COMPLETION_TIMEOUT_PER_GIB} s/GiB)"
        ));
    }
    assumptions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::drain::Action;
    use crate::policy::drain::tests::plan_row;

    fn blocker(name: &str, blocking: bool) -> DrainBlocker {
        DrainBlocker {
            kind: "vmi".into(),
            namespace: Some("prod".into()),
            name: name.into(),
            reason: "R".into(),
            message: "M".into(),
            vmis: vec![format!("prod/{name}")],
            blocking,
        }
    }

    #[test]
    fn a_blocking_blocker_blocks_and_a_shutdown_completes_with_shutdowns() {
        let migrate = plan_row("a", Action::LiveMigrate);
        let shutdown = plan_row("b", Action::Shutdown);
        assert_eq!(
            verdict(&[], std::slice::from_ref(&migrate)),
            Verdict::WillComplete
        );
        assert_eq!(
            verdict(&[blocker("x", false)], &[migrate.clone(), shutdown.clone()]),
            Verdict::WillCompleteWithShutdowns,
            "a waiting blocker does not block"
        );
        assert_eq!(
            verdict(&[blocker("x", false), blocker("y", true)], &[migrate]),
            Verdict::WillBlock
        );
    }

    #[test]
    fn duration_is_the_last_end_and_blocking_comes_first() {
        let mut a = plan_row("a", Action::LiveMigrate);
        a.end_seconds = Some(40);
        let mut b = plan_row("b", Action::Shutdown);
        b.end_seconds = Some(180);
        let c = plan_row("c", Action::NoTarget);
        let mut rows = vec![a, b, c];
        assert_eq!(estimated_seconds(&rows), 180);
        sort_rows(&mut rows);
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["c", "a", "b"]);
        let mut blockers = vec![blocker("z", false), blocker("y", true), blocker("a", false)];
        sort_blockers(&mut blockers);
        let names: Vec<&str> = blockers.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["y", "a", "z"]);
    }

    #[test]
    fn defaults_are_named_only_when_assumed() {
        let queue = MigrationQueue::default();
        let with = assumptions(None, &queue, true);
        assert_eq!(
            with[0],
            "no KubeVirt CR found: KubeVirt's defaults apply (evictionStrategy None, 5 per cluster, 2 per node, 150 s/GiB)"
        );
        assert!(
            with[1].contains("else 256.0 MiB/s per migration"),
            "{}",
            with[1]
        );
        let without = assumptions(Some(1024), &queue, false);
        assert_eq!(without.len(), 4, "no queue words for an empty queue");
        assert!(without[0].contains("else 1.0 KiB/s"), "{}", without[0]);
    }
}
