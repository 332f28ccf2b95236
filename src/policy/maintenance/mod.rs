//! `plan_maintenance`: a rolling drain of many nodes (an OS or KubeVirt upgrade, a
//! MachineConfigPool with maxUnavailable, kured), simulated batch by batch with the same
//! pure policy as `plan-drain` (issue 14). Pure: plain objects in, a plan out.
//!
//! The recipe: batches of `max_unavailable` nodes (in the given order, or chosen by
//! [`order`] for `--order auto`); each batch is **one [`plan_drain`](super::drain::plan_drain) call** on a
//! [`DrainInputs`](super::drain::DrainInputs) built from the simulated state ([`state::Sim`]): the VMIs on the batch's
//! nodes, their VMs, their launcher pods and the pods on those nodes in full, every other pod
//! as its node's [`NodeUsage`](crate::policy::scheduling::NodeUsage). Batch N+1 starts from the
//! state batch N leaves:
//!
//! - a VMI that live-migrates (or was already migrating to a known target) now runs on its
//!   predicted target: `status.nodeName` and the label `kubevirt.io/nodeName` change, its
//!   launcher pod's requests leave the source's usage and join the target's;
//! - a VMI shut down is gone with its pods, except when its VM has runStrategy Always: that
//!   VM starts it again, and the simulation counts it back **on the node it left**, once that
//!   node is done (its capacity stays reserved there; the real scheduler may pick another
//!   node while the node is cordoned; a restart is not a migration);
//! - a VMI stopped for good leaves every PDB (with a status) that selects its pod one healthy
//!   pod short, and the budget is recounted as the disruption controller does
//!   (`currentHealthy − desiredHealthy`): a later batch's eviction under that PDB sees it. A
//!   VM with runStrategy RerunOnFailure counts as stopped (a drain's shutdown is a clean one;
//!   `plan-drain` says that KubeVirt may count it as a failure);
//! - a VMI held by a blocking blocker stays; its node stays **cordoned for the rest of the
//!   rollout** and is never done (the drain waits there forever). The rollout is blocked:
//!   [`MaintenancePlan::first_blocker`] says by what and when the rollout reaches it (the
//!   batch's start). The simulation still plans the other batches, as if the operator let
//!   the rollout go on around the stuck node (OpenShift's MCO keeps using its other
//!   maxUnavailable slots; with max-unavailable 1 it would stop there), so one plan shows
//!   every blocker and where capacity runs out; their times are then "after the blocker";
//! - a VMI left to an external controller (evictionStrategy External) stays where it is: the
//!   drain waits for that controller, which the simulation does not predict;
//! - the batch's other nodes are upgraded (`upgrade_seconds`, 0 unless told), uncordoned and
//!   count as done; non-VM pods on them are counted back there (their controllers recreate
//!   them; where a Deployment's pod lands is not predicted, as `plan-drain` does not);
//! - migrations in flight and pending (the cluster's VMIMs, and migrations into the batch's
//!   nodes) exist for the first batch only: by the next one they are over.
//!
//! `--targets done`: nodes outside the rollout and nodes already done carry
//! [`state::DONE_LABEL`] in the simulated state and each migration gets it as a node
//! selector, as KubeVirt's `addedNodeSelector` on a VMIM would. A VMI that no done node can
//! take (none is done yet in the first batch of `--all`, or the done nodes are full) goes to
//! any node, as a migration without `addedNodeSelector`: `vmctl` would create it so, and the
//! batch lists it in [`Batch::placed_outside_done`].
//!
//! Cost: one [`TargetSearch`](super::placement::TargetSearch) holds the nodes for the whole
//! rollout and is told, after each batch, only what the batch changed (the nodes it drained,
//! cordoned or marked done; what the nodes its VMIs' pods left or joined hold now); the
//! `--order auto` queue re-keys only those nodes; why every node fails a VMI that finds no
//! target is kept across batches and brought up to date with the nodes changed since; a
//! batch gets the PDBs that select its pods (or nothing), found through an index of the
//! pods built once, not every PDB of its namespaces. A batch costs its own VMIs and pods
//! and the nodes it touched times the scheduling classes: the rollout is O(VMIs + pods),
//! linear in the cluster (`work_grows_linearly_with_vms_per_node_and_with_nodes`,
//! `a_rollout_without_room_and_a_pdb_per_node_stays_linear`). One thing is rebuilt per
//! batch over every node: a topology spread constraint's domain table, when a batch's VMIs
//! have one (the table rests on every node's fit). The comparison with the other strategy
//! simulates a copy of the inputs on a second thread.
//!
//! The document: [`MaintenancePlan`] is the body; the command adds `kind: MaintenancePlan`
//! (and the apiVersion) as `plan-drain` does for `DrainPlan`, and exits 1 when `verdict` is
//! `will-block`.
//!
//! Filling [`MaintenanceInputs`] from a live cluster or a snapshot: the lists of
//! `evidence::drain_inputs`, but **every** VMI of the cluster (not those on the drained nodes)
//! and, for the pods, [`split_cluster_pods`] over every pod: the pods on the rollout's nodes,
//! every launcher pod and the pods of PDBs without a fresh status in full, the others as
//! per-node usage.

pub mod order;
pub mod state;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashSet};
use std::sync::{Mutex, PoisonError};

use serde::Serialize;

use self::state::Sim;
use super::drain::{Action, CompatFinding, DrainBlocker, DrainPlan, Verdict, VmiPlan};
use super::index::work;
use super::scheduling::{NodeUsage, spread_selectors};
use crate::model::{
    KubeVirt, MigrationPolicy, Namespace, Node, Pod, PodDisruptionBudget, ResourceQuota, Time,
    VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration,
};

/// Everything of the cluster the simulation reads: [`DrainInputs`](super::drain::DrainInputs)' types, for the whole
/// cluster.
#[derive(Debug, Clone, Default)]
pub struct MaintenanceInputs {
    pub nodes: Vec<Node>,
    /// Every VMI of the cluster.
    pub vmis: Vec<VirtualMachineInstance>,
    pub vms: Vec<VirtualMachine>,
    /// Every VMIM (those in flight take slots in the first batch).
    pub vmims: Vec<VirtualMachineInstanceMigration>,
    /// The pods in full: at least those on the rollout's nodes and the launcher pods of every
    /// VMI (every pod will do); see [`split_cluster_pods`].
    pub pods: Vec<Pod>,
    /// What the pods not in `pods` hold per node, counted for the spread selectors of every
    /// VMI.
    pub node_usage: BTreeMap<String, NodeUsage>,
    pub pdbs: Vec<PodDisruptionBudget>,
    pub quotas: Vec<ResourceQuota>,
    pub namespaces: Vec<Namespace>,
    pub kubevirt: Option<KubeVirt>,
    pub policies: Vec<MigrationPolicy>,
    /// `--bandwidth`, bytes per second.
    pub bandwidth: Option<u64>,
    pub now: Option<Time>,
    /// The API server's version: how the eviction API reads `selector: {}`.
    pub server_version: Option<crate::model::ServerVersion>,
    /// When a retry or a wait counts as a loop (as plan-drain's `--loop-failures`, …).
    pub loops: crate::triage::LoopThresholds,
}

/// Splits the cluster's pods for [`MaintenanceInputs`]: the pods of PDBs without a fresh
/// status, those on `rollout`'s nodes and the launcher pods of `vmis` whole; of the others
/// only what they hold on their node, counted for the spread selectors of every VMI. Linear.
pub fn split_cluster_pods(
    pods: impl IntoIterator<Item = Pod>,
    rollout: &[String],
    vmis: &[VirtualMachineInstance],
    pdbs: &[PodDisruptionBudget],
) -> (Vec<Pod>, BTreeMap<String, NodeUsage>) {
    let uids: HashSet<&str> = vmis
        .iter()
        .filter_map(VirtualMachineInstance::uid)
        .collect();
    let spread = spread_selectors(vmis);
    let (pdb_pods, (mut pods, usage)) = super::drain::pods_of_unsynced_pdbs(pods, pdbs, |rest| {
        super::drain::split_pods(rest, rollout, &uids, &spread)
    });
    pods.extend(pdb_pods);
    (pods, usage)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// The nodes in the order given.
    #[default]
    Given,
    /// [`order`]'s heuristic.
    Auto,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Targets {
    /// Wherever the scheduler puts them.
    #[default]
    Any,
    /// Only nodes already done (or outside the rollout), when one has room.
    Done,
}

#[derive(Debug, Clone)]
pub struct MaintenanceOptions {
    /// The rollout's nodes, in the given order.
    pub nodes: Vec<String>,
    /// Nodes drained together (0 counts as 1).
    pub max_unavailable: usize,
    pub order: Order,
    pub targets: Targets,
    /// Time to upgrade and reboot a drained node before it is uncordoned.
    pub upgrade_seconds: u64,
    /// Also simulate the other strategy (given order and any targets when another one is
    /// chosen; auto order and done targets otherwise) and say both results.
    pub compare: bool,
}

impl Default for MaintenanceOptions {
    fn default() -> Self {
        MaintenanceOptions {
            nodes: Vec::new(),
            max_unavailable: 1,
            order: Order::Given,
            targets: Targets::Any,
            upgrade_seconds: 0,
            compare: true,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MaintenancePlan {
    /// `will-block` when a batch blocks; `will-complete-with-shutdowns` when one shuts VMs
    /// down; else `will-complete`.
    pub verdict: Verdict,
    pub order: Order,
    pub targets: Targets,
    pub max_unavailable: usize,
    /// The nodes in the order they are drained.
    pub nodes: Vec<String>,
    /// Nodes named that the cluster does not have (not simulated).
    pub unknown_nodes: Vec<String>,
    pub batches: Vec<Batch>,
    pub totals: Totals,
    pub first_blocker: Option<FirstBlocker>,
    /// The first batch where a VMI has no target (capacity, selectors, CPU models).
    pub capacity_runs_out: Option<NoTarget>,
    /// This plan next to the other strategy.
    pub compare: Option<Compare>,
    /// From the first batch's plan.
    pub defaults_assumed: bool,
    pub kubevirt_version: Option<String>,
    /// What the plan assumed, in words.
    pub assumptions: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Batch {
    /// 1-based.
    pub index: u32,
    pub nodes: Vec<String>,
    pub verdict: Verdict,
    /// Since the rollout started.
    pub start_seconds: u64,
    /// The drain's predicted duration (the plan-drain estimate).
    pub drain_seconds: u64,
    /// Drain plus upgrade.
    pub duration_seconds: u64,
    pub end_seconds: u64,
    pub waves: u32,
    /// Live migrations that move a VMI (including ones in flight with a known target).
    pub migrations: u32,
    pub shutdowns: u32,
    pub blockers: Vec<DrainBlocker>,
    /// plan-drain's rows, with their `target`.
    pub vmis: Vec<VmiPlan>,
    /// The batch's nodes that stay cordoned: the drain blocks on them.
    pub stuck_nodes: Vec<String>,
    /// `--targets done`: VMIs no done node could take, sent to any node.
    pub placed_outside_done: Vec<String>,
    /// plan-drain's compatibility findings for the batch (`policy::compat`): `blocks` ones
    /// are no-target rows (and blockers) already; `risk` ones do not change the verdict.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compatibility: Vec<CompatFinding>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PerVm {
    /// Over the VMs migrated at least once.
    pub mean: f64,
    pub max: u32,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigratedVm {
    pub namespace: String,
    pub name: String,
    pub migrations: u32,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub batches: u32,
    pub migrations: u32,
    /// VMs migrated at least once.
    pub vms_migrated: u32,
    pub migrations_per_vm: PerVm,
    /// The VMs migrated most (up to 10, most first, then by name), those moved more than
    /// once.
    pub most_migrated: Vec<MigratedVm>,
    pub shutdowns: u32,
    /// Sum of the batches' durations (after the first blocker: as if it were resolved).
    pub duration_seconds: u64,
    pub blocked_batches: u32,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FirstBlocker {
    pub batch: u32,
    pub nodes: Vec<String>,
    /// When the rollout reaches it: the start of its batch.
    pub at_seconds: u64,
    pub blocker: DrainBlocker,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NoTarget {
    pub batch: u32,
    pub at_seconds: u64,
    /// `namespace/name` of the VMIs without a target.
    pub vmis: Vec<String>,
    /// The first one's explanation.
    pub message: String,
}

/// One strategy's numbers.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub order: Order,
    pub targets: Targets,
    pub verdict: Verdict,
    pub migrations: u32,
    pub migrations_per_vm: PerVm,
    pub shutdowns: u32,
    pub duration_seconds: u64,
    pub first_blocker_at_seconds: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Compare {
    /// Given order, any targets.
    pub default: Summary,
    /// The chosen strategy, or auto order and done targets when the default was chosen.
    pub alternative: Summary,
}

/// The plan. Pure. Takes the inputs by value: the simulation moves the VMIs and pods it
/// reads (a second copy is made only for `compare`).
pub fn plan_maintenance(
    inputs: MaintenanceInputs,
    options: &MaintenanceOptions,
) -> MaintenancePlan {
    if !options.compare {
        return simulate(inputs, options, options.order, options.targets);
    }
    let default = (Order::Given, Targets::Any);
    let chosen = (options.order, options.targets);
    let other = if chosen == default {
        (Order::Auto, Targets::Done)
    } else {
        default
    };
    // Only the other strategy's numbers are kept, not its batches. The two runs share
    // nothing but the inputs (the other one simulates a copy), so the other one runs on a
    // second thread when there is one: the plan takes the longer run's time, not the sum
    // (the CPU time is the same). Its work is counted here as if it ran on this thread.
    let copy = Mutex::new(Some(clone_on_two_threads(&inputs)));
    let (helped, mut plan) = std::thread::scope(|scope| {
        let helper = std::thread::Builder::new().spawn_scoped(scope, || {
            let inputs = copy.lock().unwrap_or_else(PoisonError::into_inner).take()?;
            Some(work::count(|| {
                summary(&simulate(inputs, options, other.0, other.1))
            }))
        });
        let plan = simulate(inputs, options, options.order, options.targets);
        let helped = match helper {
            // A panic there goes on here.
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            Err(_) => None,
        };
        (helped, plan)
    });
    let other = match helped {
        Some((other, steps)) => {
            work::step(usize::try_from(steps).unwrap_or(usize::MAX));
            other
        }
        // No second thread could start: the other strategy runs here, on the copy.
        None => {
            let inputs = copy
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner)
                .unwrap_or_default();
            summary(&simulate(inputs, options, other.0, other.1))
        }
    };
    let (default, alternative) = if chosen == default {
        (summary(&plan), other)
    } else {
        (other, summary(&plan))
    };
    plan.compare = Some(Compare {
        default,
        alternative,
    });
    plan
}

/// A copy of the inputs for the other strategy's run, the pods copied on a second thread
/// while this one copies the rest (the copy is made before either run can start: on 1,000
/// nodes it was a tenth of the plan's time, all of it on one core).
fn clone_on_two_threads(inputs: &MaintenanceInputs) -> MaintenanceInputs {
    std::thread::scope(|scope| {
        let pods = std::thread::Builder::new().spawn_scoped(scope, || inputs.pods.clone());
        let rest = MaintenanceInputs {
            nodes: inputs.nodes.clone(),
            vmis: inputs.vmis.clone(),
            vms: inputs.vms.clone(),
            vmims: inputs.vmims.clone(),
            pods: Vec::new(),
            node_usage: inputs.node_usage.clone(),
            pdbs: inputs.pdbs.clone(),
            quotas: inputs.quotas.clone(),
            namespaces: inputs.namespaces.clone(),
            kubevirt: inputs.kubevirt.clone(),
            policies: inputs.policies.clone(),
            bandwidth: inputs.bandwidth,
            now: inputs.now.clone(),
            server_version: inputs.server_version.clone(),
            loops: inputs.loops,
        };
        let pods = match pods {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            Err(_) => inputs.pods.clone(),
        };
        MaintenanceInputs { pods, ..rest }
    })
}

fn summary(plan: &MaintenancePlan) -> Summary {
    Summary {
        order: plan.order,
        targets: plan.targets,
        verdict: plan.verdict,
        migrations: plan.totals.migrations,
        migrations_per_vm: plan.totals.migrations_per_vm.clone(),
        shutdowns: plan.totals.shutdowns,
        duration_seconds: plan.totals.duration_seconds,
        first_blocker_at_seconds: plan.first_blocker.as_ref().map(|b| b.at_seconds),
    }
}

/// One run of the rollout under one strategy.
fn simulate(
    inputs: MaintenanceInputs,
    options: &MaintenanceOptions,
    order: Order,
    targets: Targets,
) -> MaintenancePlan {
    let mut seen = HashSet::new();
    let wanted: Vec<String> = options
        .nodes
        .iter()
        .filter(|n| seen.insert(n.as_str()))
        .cloned()
        .collect();
    let mut sim = Sim::new(inputs, &wanted, targets);
    let kubevirt = sim.buffer.kubevirt.clone();
    let (remaining, unknown_nodes): (Vec<String>, Vec<String>) =
        wanted.into_iter().partition(|n| sim.has_node(n));
    let size = options.max_unavailable.max(1);
    let mut picker = match order {
        Order::Auto => {
            let blocking = order::self_blocking(&sim, &remaining, kubevirt.as_ref());
            Some(order::Picker::new(&sim, remaining.clone(), blocking))
        }
        Order::Given => None,
    };
    let mut given = remaining.chunks(size);

    let mut run = Run::default();
    loop {
        let nodes = match picker.as_mut() {
            Some(p) => p.next(size),
            None => given.next().map(<[String]>::to_vec).unwrap_or_default(),
        };
        if nodes.is_empty() {
            break;
        }
        let (drain, outside) = sim.plan_batch(&nodes);
        let applied = sim.apply(&drain, &nodes);
        if let Some(p) = picker.as_mut() {
            p.update(&sim, &applied.touched);
        }
        run.record(drain, nodes, outside, applied, options.upgrade_seconds);
    }
    run.finish(&sim, order, targets, size, unknown_nodes)
}

/// What the batches add up to, as they are simulated.
#[derive(Default)]
struct Run {
    batches: Vec<Batch>,
    clock: u64,
    first: Option<DrainPlan>,
    first_blocker: Option<FirstBlocker>,
    capacity: Option<NoTarget>,
}

impl Run {
    fn record(
        &mut self,
        mut drain: DrainPlan,
        nodes: Vec<String>,
        outside: Vec<String>,
        applied: state::Applied,
        upgrade_seconds: u64,
    ) {
        let index = u32::try_from(self.batches.len() + 1).unwrap_or(u32::MAX);
        let start = self.clock;
        let duration = drain.estimated_duration_seconds + upgrade_seconds;
        self.clock += duration;
        if self.first_blocker.is_none()
            && drain.verdict == Verdict::WillBlock
            && let Some(b) = drain.blockers.iter().find(|b| b.blocking)
        {
            self.first_blocker = Some(FirstBlocker {
                batch: index,
                nodes: nodes.clone(),
                at_seconds: start,
                blocker: b.clone(),
            });
        }
        if self.capacity.is_none() {
            let vmis: Vec<&VmiPlan> = drain
                .vmis
                .iter()
                .filter(|r| r.action == Action::NoTarget)
                .collect();
            if let Some(first) = vmis.first() {
                self.capacity = Some(NoTarget {
                    batch: index,
                    at_seconds: start,
                    vmis: vmis.iter().map(|r| r.id()).collect(),
                    message: first.explanation.clone(),
                });
            }
        }
        // The first batch's plan is kept whole (its assumptions and version); the others give
        // their rows up.
        let (blockers, vmis) = if self.first.is_none() {
            (drain.blockers.clone(), drain.vmis.clone())
        } else {
            (
                std::mem::take(&mut drain.blockers),
                std::mem::take(&mut drain.vmis),
            )
        };
        self.batches.push(Batch {
            index,
            nodes,
            verdict: drain.verdict,
            start_seconds: start,
            drain_seconds: drain.estimated_duration_seconds,
            duration_seconds: duration,
            end_seconds: self.clock,
            waves: drain.waves,
            migrations: u32::try_from(applied.moved.len()).unwrap_or(u32::MAX),
            shutdowns: applied.shutdowns,
            blockers,
            vmis,
            stuck_nodes: applied.stuck,
            placed_outside_done: outside,
            compatibility: if self.first.is_none() {
                drain.compatibility.clone()
            } else {
                std::mem::take(&mut drain.compatibility)
            },
        });
        if self.first.is_none() {
            self.first = Some(drain);
        }
    }

    fn finish(
        self,
        sim: &Sim,
        order: Order,
        targets: Targets,
        max_unavailable: usize,
        unknown_nodes: Vec<String>,
    ) -> MaintenancePlan {
        let verdict = if self.batches.iter().any(|b| b.verdict == Verdict::WillBlock) {
            Verdict::WillBlock
        } else if self
            .batches
            .iter()
            .any(|b| b.verdict == Verdict::WillCompleteWithShutdowns)
        {
            Verdict::WillCompleteWithShutdowns
        } else {
            Verdict::WillComplete
        };
        let migrations: u32 = self.batches.iter().map(|b| b.migrations).sum();
        let moved: Vec<(usize, u32)> = sim
            .migrations
            .iter()
            .enumerate()
            .filter(|(_, m)| **m > 0)
            .map(|(i, m)| {
                work::step(1);
                (i, *m)
            })
            .collect();
        let vms_migrated = u32::try_from(moved.len()).unwrap_or(u32::MAX);
        let mean = if vms_migrated == 0 {
            0.0
        } else {
            (f64::from(migrations) / f64::from(vms_migrated) * 100.0).round() / 100.0
        };
        let mut most: Vec<MigratedVm> = moved
            .iter()
            .filter(|(_, m)| *m > 1)
            .map(|&(i, m)| {
                let (namespace, name) = sim.vmi_id(i);
                MigratedVm {
                    namespace,
                    name,
                    migrations: m,
                }
            })
            .collect();
        most.sort_by(|a, b| {
            b.migrations
                .cmp(&a.migrations)
                .then_with(|| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)))
        });
        most.truncate(10);
        let totals = Totals {
            batches: u32::try_from(self.batches.len()).unwrap_or(u32::MAX),
            migrations,
            vms_migrated,
            migrations_per_vm: PerVm {
                mean,
                max: moved.iter().map(|m| m.1).max().unwrap_or(0),
            },
            most_migrated: most,
            shutdowns: self.batches.iter().map(|b| b.shutdowns).sum(),
            duration_seconds: self.clock,
            blocked_batches: u32::try_from(
                self.batches
                    .iter()
                    .filter(|b| b.verdict == Verdict::WillBlock)
                    .count(),
            )
            .unwrap_or(u32::MAX),
        };
        let mut assumptions = self
            .first
            .as_ref()
            .map(|p| p.assumptions.clone())
            .unwrap_or_default();
        assumptions.push(
            "each batch is planned as plan-drain plans a drain, from the state the batches before it leave: migrated VMs run on their predicted targets, drained nodes are uncordoned and done".into(),
        );
        if self.first_blocker.is_some() {
            assumptions.push(
                "after the first blocker the rollout is simulated as if it went on around the stuck node, which stays cordoned".into(),
            );
        }
        MaintenancePlan {
            verdict,
            order,
            targets,
            max_unavailable,
            nodes: self.batches.iter().flat_map(|b| b.nodes.clone()).collect(),
            unknown_nodes,
            totals,
            first_blocker: self.first_blocker,
            capacity_runs_out: self.capacity,
            compare: None,
            defaults_assumed: self.first.as_ref().is_some_and(|p| p.defaults_assumed),
            kubevirt_version: self.first.as_ref().and_then(|p| p.kubevirt_version.clone()),
            assumptions,
            batches: self.batches,
        }
    }
}
