//! Step **waves**: KubeVirt's migration queue and the waves the drain's migrations start in,
//! under the per-node and per-cluster limits, with the migrations already in flight.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{Action, Limits, MigrationQueue, QueuedMigration, Rows, SETUP_SECONDS, VmiPlan};
use crate::model::kubevirt::EffectiveMigrationConfig;
use crate::model::vmim::MigrationPriority;
use crate::model::{KubeVirt, VirtualMachineInstance, VirtualMachineInstanceMigration};
use crate::policy::index::work;

/// The VMI a migration moves: (namespace, name).
pub(super) fn vmim_key(m: &VirtualMachineInstanceMigration) -> (String, String) {
    (m.namespace().to_string(), m.spec.vmi_name.clone())
}

/// The parallel limits and the migrations already counting against them (KubeVirt's
/// IsRunning), per drained node by where their VMI runs (`vmi_nodes`: (namespace, name) →
/// node of the drained VMIs).
pub fn limits(
    cluster: &EffectiveMigrationConfig,
    vmims: &[VirtualMachineInstanceMigration],
    vmi_nodes: &BTreeMap<(String, String), String>,
    drain: &[String],
) -> Limits {
    let running: Vec<&VirtualMachineInstanceMigration> = vmims
        .iter()
        .filter(|m| m.phase().counts_as_running())
        .collect();
    let mut in_flight_per_node: BTreeMap<String, u32> = BTreeMap::new();
    for m in &running {
        if let Some(node) = vmi_nodes.get(&vmim_key(m)) {
            *in_flight_per_node.entry(node.clone()).or_default() += 1;
        }
    }
    Limits {
        parallel_migrations_per_cluster: cluster.parallel_migrations_per_cluster,
        parallel_outbound_migrations_per_node: cluster.parallel_outbound_migrations_per_node,
        in_flight_cluster: running.len() as u32,
        in_flight_per_node: drain
            .iter()
            .map(|n| (n.clone(), in_flight_per_node.get(n).copied().unwrap_or(0)))
            .collect(),
    }
}

/// A migration's weight in KubeVirt's queue: its priority's in a priority queue, 0 for all
/// in a FIFO one.
fn queue_weight(priority_queue: bool, priority: Option<&str>) -> u32 {
    if priority_queue {
        priority_weight(priority)
    } else {
        0
    }
}

/// The waves: KubeVirt's queue (pending migrations ahead of the drain's evacuations take
/// slots first; those behind start after them), then list scheduling, longest first, under
/// the per-node and per-cluster limits. Fills the start, end and wave of the rows, adds what
/// the queue means to their explanations; returns the queue and the number of waves.
/// `vmi_nodes` as for [`limits`].
pub fn waves(
    rows: &mut Rows,
    limits: &Limits,
    kubevirt: Option<&KubeVirt>,
    vmims: &[VirtualMachineInstanceMigration],
    vmi_nodes: &BTreeMap<(String, String), String>,
) -> (MigrationQueue, u32) {
    let (queue, ahead, behind) =
        migration_queue(kubevirt, vmims, &|m| vmi_nodes.contains_key(&vmim_key(m)));
    let plans = &mut rows.plans;
    let candidates = &mut rows.candidates;
    let plan_of: HashMap<(String, String), usize> = plans
        .iter()
        .enumerate()
        .map(|(i, p)| ((p.namespace.clone(), p.name.clone()), i))
        .collect();
    let average = if candidates.is_empty() {
        SETUP_SECONDS
    } else {
        candidates.iter().map(|c| c.estimate).sum::<u64>() / candidates.len() as u64
    };
    let priority_mode = queue.mode == "priority";
    let queued = |m: &&VirtualMachineInstanceMigration| -> Option<Queued> {
        let weight = queue_weight(priority_mode, m.spec.priority.as_deref());
        match plan_of.get(&vmim_key(m)) {
            Some(&i) if plans[i].action == Action::AlreadyMigrating => Some(Queued {
                weight,
                plan: Some(i),
                source: Some(plans[i].node.clone()),
                estimate: plans[i].estimate_seconds.unwrap_or(SETUP_SECONDS),
            }),
            Some(_) => None,
            None => held_by(m).is_none().then_some(Queued {
                weight,
                plan: None,
                source: None,
                estimate: average,
            }),
        }
    };
    // In queue order: the ahead, then the behind (which may still take a free cluster slot
    // while the drain's evacuations wait for their node's outbound slots).
    let existing: Vec<Queued> = ahead.iter().chain(&behind).filter_map(queued).collect();
    for (list, words) in [
        (
            &ahead,
            "in KubeVirt's queue it is ahead of the drain's evacuations",
        ),
        (
            &behind,
            "in KubeVirt's queue it waits behind the drain's system-critical evacuations",
        ),
    ] {
        for m in list.iter() {
            if let Some(&i) = plan_of.get(&vmim_key(m))
                && plans[i].action == Action::AlreadyMigrating
            {
                let priority = m.spec.priority.as_deref().unwrap_or("no priority");
                plans[i]
                    .explanation
                    .push_str(&format!("; {words} ({priority})"));
            }
        }
    }
    // The drain's own evacuations: system-critical, unless the descheduler marked the VMI.
    let own_weight: HashMap<usize, u32> = candidates
        .iter()
        .map(|c| {
            let priority = evacuation_priority(rows.vmis[c.index]);
            if priority != EVACUATION_PRIORITY {
                plans[c.index].explanation.push_str(&format!(
                    "; the descheduler marked it, so its evacuation is {priority} and waits behind system-critical and user-triggered migrations in KubeVirt's priority queue"
                ));
            }
            (c.index, priority_weight(Some(priority)))
        })
        .collect();
    let waves = schedule(
        plans,
        candidates,
        limits,
        &rows.in_flight,
        &existing,
        &|index| {
            if priority_mode {
                own_weight.get(&index).copied().unwrap_or(0)
            } else {
                0
            }
        },
    );
    (queue, waves)
}

/// VMIM conditions that keep a migration Pending without taking a parallel slot (FACTS §3.2).
const HOLDING_CONDITIONS: [&str; 4] = [
    "migrationRejectedByResourceQuota",
    "migrationBlockedByUtilityVolumes",
    "migrationBlockedByBackup",
    "decentralizedMigrationBlocked",
];

pub(super) fn held_by(m: &VirtualMachineInstanceMigration) -> Option<&'static str> {
    HOLDING_CONDITIONS
        .into_iter()
        .find(|c| m.condition(c).is_some_and(|c| c.is_true()))
}

/// The priority of the VMIMs the evacuation controller creates for a drain (a descheduler
/// eviction gets `system-maintenance` instead).
pub const EVACUATION_PRIORITY: &str = "system-critical";

/// KubeVirt's queue weight of a VMIM priority ([`MigrationPriority::queue_weight`]; 0 when
/// unset).
pub fn priority_weight(priority: Option<&str>) -> u32 {
    priority
        .map(|p| MigrationPriority::from(p).queue_weight())
        .unwrap_or(0)
}

/// VMI annotation set when the descheduler asked for the eviction (FACTS §2.1).
pub const EVICTION_SOURCE_ANNOTATION: &str = "kubevirt.io/eviction-source";

/// The priority of the evacuation VMIM KubeVirt creates for `vmi`: system-critical, or
/// system-maintenance when the descheduler marked it (it stays marked, so the drain's own
/// eviction does not change that).
pub fn evacuation_priority(vmi: &VirtualMachineInstance) -> &'static str {
    if vmi.evacuation_node().is_some()
        && vmi.annotation(EVICTION_SOURCE_ANNOTATION) == Some("descheduler")
    {
        "system-maintenance"
    } else {
        EVACUATION_PRIORITY
    }
}

/// Splits the cluster's pending migrations (phase Pending or unset) into those ahead of
/// the drain's evacuations and those behind them. With the priority queue
/// (MigrationPriorityQueue, GA in v1.9; on when any VMIM carries spec.priority) the
/// evacuations are system-critical: pending system-critical migrations, created earlier,
/// are ahead; user-triggered, system-maintenance and unprioritised ones wait behind.
/// Without it the queue is FIFO by creation: every pending migration is ahead.
/// Returns the queue and, in queue order, the VMIMs ahead and behind.
pub fn migration_queue<'a>(
    kubevirt: Option<&KubeVirt>,
    vmims: &'a [VirtualMachineInstanceMigration],
    on_drained: &dyn Fn(&VirtualMachineInstanceMigration) -> bool,
) -> (
    MigrationQueue,
    Vec<&'a VirtualMachineInstanceMigration>,
    Vec<&'a VirtualMachineInstanceMigration>,
) {
    let version = kubevirt.and_then(KubeVirt::version);
    let with_priority = vmims.iter().find(|m| m.spec.priority.is_some());
    let (priority, why) = if let Some(v) =
        version.filter(|v| crate::model::kubevirt::parse_version(v).is_some_and(|v| v >= (1, 9)))
    {
        (
            true,
            format!("KubeVirt {v}: MigrationPriorityQueue is GA since v1.9"),
        )
    } else if let Some(m) = with_priority {
        (
            true,
            format!(
                "VMIM {}/{} carries spec.priority: the MigrationPriorityQueue gate is on",
                m.namespace(),
                m.name()
            ),
        )
    } else {
        (
            false,
            format!(
                "{}: no VMIM carries spec.priority, so the MigrationPriorityQueue gate (alpha v1.7, beta v1.8, GA v1.9) is taken as off and the queue as FIFO by creation",
                version
                    .map(|v| format!("KubeVirt {v}"))
                    .unwrap_or_else(|| "KubeVirt version unknown".into())
            ),
        )
    };
    let mut pending: Vec<&VirtualMachineInstanceMigration> = vmims
        .iter()
        .filter(|m| {
            work::step(1);
            matches!(
                m.phase(),
                crate::model::vmim::MigrationPhase::Pending
                    | crate::model::vmim::MigrationPhase::Unset
            )
        })
        .collect();
    pending.sort_by(|a, b| {
        let weight = |m: &VirtualMachineInstanceMigration| {
            queue_weight(priority, m.spec.priority.as_deref())
        };
        weight(b)
            .cmp(&weight(a))
            .then_with(|| {
                a.metadata
                    .creation_timestamp
                    .as_ref()
                    .map(|t| t.0)
                    .cmp(&b.metadata.creation_timestamp.as_ref().map(|t| t.0))
            })
            .then_with(|| (a.namespace(), a.name()).cmp(&(b.namespace(), b.name())))
    });
    let evacuation = priority_weight(Some(EVACUATION_PRIORITY));
    let (ahead, behind): (Vec<_>, Vec<_>) = pending
        .into_iter()
        .partition(|m| !priority || priority_weight(m.spec.priority.as_deref()) >= evacuation);
    let describe = |m: &&VirtualMachineInstanceMigration| QueuedMigration {
        namespace: m.namespace().to_string(),
        name: m.name().to_string(),
        vmi: m.spec.vmi_name.clone(),
        priority: m.spec.priority.clone(),
        on_drained_node: on_drained(m),
        held_by: held_by(m).map(str::to_string),
    };
    let queue = MigrationQueue {
        mode: if priority { "priority" } else { "fifo" }.into(),
        why,
        ahead: ahead.iter().map(describe).collect(),
        behind: behind.iter().map(describe).collect(),
    };
    (queue, ahead, behind)
}

/// A migration the wave schedule places before or after the drain's own.
struct Queued {
    /// Queue weight (0 for all in a FIFO queue).
    weight: u32,
    /// The plan row it is, for a VMI on a drained node.
    plan: Option<usize>,
    /// Its source node, when it is a drained one (it then takes that node's slots).
    source: Option<String>,
    estimate: u64,
}

/// A live migration the drain starts: its plan row, its estimate and its source node.
pub struct Candidate {
    pub index: usize,
    pub estimate: u64,
    pub source: String,
}

/// Assigns start/end times and waves; returns the number of waves. Migrations already in
/// flight from the drained nodes hold their slots until their estimated end; others in the
/// cluster hold cluster slots for the whole plan (their end is unknown here). KubeVirt's
/// queue order decides who gets a free slot first: by weight (priority queue; all equal
/// when FIFO; `weight_of` a drain candidate's plan index), the pending migrations (`existing`, in queue order; those elsewhere in the
/// cluster take a cluster slot for an average migration's time) before the drain's
/// evacuations of the same weight, and these longest first.
fn schedule(
    plans: &mut [VmiPlan],
    candidates: &mut [Candidate],
    limits: &Limits,
    in_flight_on_drained: &[(String, u64)],
    existing: &[Queued],
    weight_of: &dyn Fn(usize) -> u32,
) -> u32 {
    candidates.sort_by(|a, b| b.estimate.cmp(&a.estimate).then(a.index.cmp(&b.index)));
    let elsewhere = limits
        .in_flight_cluster
        .saturating_sub(in_flight_on_drained.len() as u32);
    // Always leave one slot, or nothing would ever start.
    let cluster_slots = limits
        .parallel_migrations_per_cluster
        .saturating_sub(elsewhere)
        .max(1);
    let node_slots = limits.parallel_outbound_migrations_per_node.max(1);
    // Running: (end time, source node when it is a drained one).
    let mut running: Vec<(u64, Option<String>)> = in_flight_on_drained
        .iter()
        .cloned()
        .map(|(n, e)| (e, Some(n)))
        .collect();
    let own: Vec<Queued> = candidates
        .iter()
        .map(|c| Queued {
            weight: weight_of(c.index),
            plan: Some(c.index),
            source: Some(c.source.clone()),
            estimate: c.estimate,
        })
        .collect();
    // Stable: within a weight, the existing migrations first, in queue order.
    let mut pending: Vec<&Queued> = existing.iter().chain(&own).collect();
    pending.sort_by_key(|q| std::cmp::Reverse(q.weight));
    let mut now = 0u64;
    let mut starts: BTreeSet<u64> = BTreeSet::new();
    let mut scheduled: Vec<usize> = Vec::new();
    while !pending.is_empty() {
        running.retain(|(end, _)| *end > now);
        let mut i = 0;
        while i < pending.len() {
            let c = pending[i];
            let on_node = c.source.as_ref().map_or(0, |s| {
                running
                    .iter()
                    .filter(|(_, n)| n.as_ref() == Some(s))
                    .count() as u32
            });
            if (running.len() as u32) < cluster_slots && on_node < node_slots {
                let end = now + c.estimate;
                if let Some(index) = c.plan {
                    let plan = &mut plans[index];
                    plan.start_seconds = Some(now);
                    plan.end_seconds = Some(end);
                    starts.insert(now);
                    scheduled.push(index);
                }
                running.push((end, c.source.clone()));
                pending.remove(i);
            } else {
                i += 1;
            }
        }
        match running.iter().map(|(e, _)| *e).filter(|e| *e > now).min() {
            Some(next) => now = next,
            None => break,
        }
    }
    let wave_of: BTreeMap<u64, u32> = starts
        .iter()
        .enumerate()
        .map(|(i, s)| (*s, i as u32 + 1))
        .collect();
    for index in scheduled {
        if let Some(start) = plans[index].start_seconds {
            plans[index].wave = wave_of.get(&start).copied();
        }
    }
    starts.len() as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use crate::model::Time;
    use crate::model::vmim::{VmimSpec, VmimStatus};
    use crate::policy::drain::tests::plan_row;
    use crate::policy::migration_policy::effective_config;

    fn migration(
        vmi: &str,
        phase: &str,
        priority: Option<&str>,
    ) -> VirtualMachineInstanceMigration {
        VirtualMachineInstanceMigration {
            metadata: ObjectMeta {
                name: Some(format!("mig-{vmi}")),
                namespace: Some("prod".into()),
                creation_timestamp: Some(Time("2026-11-29T03:00:00Z".parse().unwrap())),
                ..Default::default()
            },
            spec: VmimSpec {
                vmi_name: vmi.into(),
                priority: priority.map(str::to_string),
                ..Default::default()
            },
            status: VmimStatus {
                phase: Some(phase.into()),
                ..Default::default()
            },
        }
    }

    fn limits(cluster: u32, node: u32) -> Limits {
        Limits {
            parallel_migrations_per_cluster: cluster,
            parallel_outbound_migrations_per_node: node,
            in_flight_cluster: 0,
            in_flight_per_node: BTreeMap::new(),
        }
    }

    /// Rows of live migrations from node-3 with these estimates.
    fn rows<'a>(vmi: &'a VirtualMachineInstance, estimates: &[u64]) -> Rows<'a> {
        let mut rows = Rows::default();
        for (i, &estimate) in estimates.iter().enumerate() {
            rows.plans
                .push(plan_row(&format!("vm-{i}"), Action::LiveMigrate));
            rows.vmis.push(vmi);
            rows.candidates.push(Candidate {
                index: i,
                estimate,
                source: "node-3".into(),
            });
        }
        rows
    }

    fn starts(rows: &Rows) -> Vec<(Option<u64>, Option<u32>)> {
        rows.plans
            .iter()
            .map(|p| (p.start_seconds, p.wave))
            .collect()
    }

    #[test]
    fn running_migrations_count_against_the_cluster_and_their_drained_node() {
        let vmims = [
            migration("a", "Running", None),
            migration("b", "Pending", None),
            migration("elsewhere", "Scheduling", None),
        ];
        let vmi_nodes = BTreeMap::from([
            (("prod".to_string(), "a".to_string()), "node-3".to_string()),
            (("prod".to_string(), "b".to_string()), "node-3".to_string()),
        ]);
        let drain = ["node-3".to_string(), "node-4".to_string()];
        let l = super::limits(&effective_config(None, None), &vmims, &vmi_nodes, &drain);
        assert_eq!(
            (
                l.parallel_migrations_per_cluster,
                l.parallel_outbound_migrations_per_node
            ),
            (5, 2),
            "KubeVirt's defaults"
        );
        assert_eq!(l.in_flight_cluster, 2, "a Pending migration takes no slot");
        assert_eq!(
            l.in_flight_per_node,
            BTreeMap::from([("node-3".to_string(), 1), ("node-4".to_string(), 0)])
        );
    }

    #[test]
    fn longest_first_under_the_per_node_limit_and_behind_migrations_in_flight() {
        let vmi = VirtualMachineInstance::default();
        let mut r = rows(&vmi, &[30, 100, 50]);
        let (_, count) = super::waves(&mut r, &limits(5, 2), None, &[], &BTreeMap::new());
        // 100 and 50 start at once (2 per node); 30 when the 50 ends.
        assert_eq!(
            starts(&r),
            [(Some(50), Some(2)), (Some(0), Some(1)), (Some(0), Some(1))]
        );
        assert_eq!(count, 2);
        assert_eq!(r.plans[0].end_seconds, Some(80));

        // A migration in flight from node-3 holds one of its slots for 20 s.
        let mut r = rows(&vmi, &[30, 100, 50]);
        r.in_flight.push(("node-3".into(), 20));
        let (_, count) = super::waves(&mut r, &limits(5, 2), None, &[], &BTreeMap::new());
        assert_eq!(
            starts(&r),
            [(Some(70), Some(3)), (Some(0), Some(1)), (Some(20), Some(2))]
        );
        assert_eq!(count, 3);
    }

    #[test]
    fn the_queue_decides_who_gets_the_one_cluster_slot() {
        let vmi = VirtualMachineInstance::default();
        // A pending system-critical migration elsewhere is ahead of the evacuation: it takes
        // the only cluster slot for an average migration's time.
        let ahead = [migration("other", "Pending", Some("system-critical"))];
        let mut r = rows(&vmi, &[100]);
        let (queue, count) = super::waves(&mut r, &limits(1, 2), None, &ahead, &BTreeMap::new());
        assert_eq!(queue.mode, "priority");
        assert_eq!((queue.ahead.len(), queue.behind.len()), (1, 0));
        assert_eq!(starts(&r), [(Some(100), Some(1))]);
        assert_eq!(count, 1);

        // A user-triggered one waits behind the system-critical evacuation.
        let behind = [migration("other", "Pending", Some("user-triggered"))];
        let mut r = rows(&vmi, &[100]);
        let (queue, _) = super::waves(&mut r, &limits(1, 2), None, &behind, &BTreeMap::new());
        assert_eq!((queue.ahead.len(), queue.behind.len()), (0, 1));
        assert_eq!(starts(&r), [(Some(0), Some(1))]);
    }

    #[test]
    fn weights_are_kubevirts_and_the_descheduler_evacuates_at_maintenance_priority() {
        let weights: Vec<u32> = [
            Some("system-critical"),
            Some("user-triggered"),
            Some("system-maintenance"),
            Some("made-up"),
            None,
        ]
        .into_iter()
        .map(priority_weight)
        .collect();
        assert_eq!(weights, [100, 50, 20, 0, 0]);
        let mut vmi = VirtualMachineInstance::default();
        assert_eq!(evacuation_priority(&vmi), EVACUATION_PRIORITY);
        vmi.status.evacuation_node_name = Some("node-3".into());
        vmi.metadata.annotations = Some(BTreeMap::from([(
            EVICTION_SOURCE_ANNOTATION.to_string(),
            "descheduler".to_string(),
        )]));
        assert_eq!(evacuation_priority(&vmi), "system-maintenance");
    }
}
