//! The simulated cluster between batches: where every VMI and pod runs, what every node
//! holds, which nodes are done or stuck. [`Sim::plan_batch`] turns it into one batch's
//! [`DrainInputs`] (only the batch's VMIs and the pods that matter in full, everything else as
//! per-node [`NodeUsage`]) and [`Sim::apply`] applies that batch's plan to it.
//!
//! One [`DrainInputs`] is kept for the whole run and refilled per batch, and one
//! [`TargetSearch`] holds the nodes for the whole run: between batches it is told only what
//! changed (the nodes drained, cordoned, uncordoned or marked done; what the batch's nodes and
//! its targets hold now). A batch then costs its own VMIs, pods and the nodes it touched, not
//! every node again, and gets only the PDBs that select its pods (or nothing), not every
//! PDB of its namespaces: the rollout is linear in the cluster's size.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::Targets;
use crate::model::{
    Node, Pod, PodDisruptionBudget, ResourceQuota, VirtualMachine, VirtualMachineInstance,
};
use crate::policy::drain::{
    Action, DrainInputs, DrainPlan, NODE_NAME_LABEL, plan_drain_in, pods_of_unsynced_pdbs, vmi_node,
};
use crate::policy::index::work;
use crate::policy::links::CREATED_BY_LABEL;
use crate::policy::pdb::{PdbIndex, PdbSelector, empty_selector_at_eviction};
use crate::policy::placement::TargetSearch;
use crate::policy::pods::pod_labels;
use crate::policy::scheduling::{
    CPU_FEATURE_PREFIX, CPU_MODEL_MIGRATION_PREFIX, HostCpu, NodeUsage, Resources, SelectorIndex,
    holds_resources, node_name, pod_requests, spread_selectors,
};

/// The label the simulation puts on the nodes a `--targets done` migration may go to (done,
/// or outside the rollout), and the node selector it adds to such a migration's VMI: what
/// KubeVirt's `addedNodeSelector` on the VMIM does.
pub const DONE_LABEL: &str = "maintenance.vmctl.io/done";

/// The label of a VMI migrating into a node.
const TARGET_NODE_LABEL: &str = "kubevirt.io/migrationTargetNodeName";

type Id = (String, String);

fn id_of(vmi: &VirtualMachineInstance) -> Id {
    (vmi.namespace().to_string(), vmi.name().to_string())
}

fn pod_node(pod: &Pod) -> Option<&str> {
    pod.spec.as_ref().and_then(|s| s.node_name.as_deref())
}

/// What one batch's plan did to the state.
#[derive(Debug, Default)]
pub struct Applied {
    /// Live migrations that moved a VMI (index of the VMI in the simulation).
    pub moved: Vec<usize>,
    /// VMIs shut down.
    pub shutdowns: u32,
    /// The batch's nodes that stay cordoned: a VMI on them blocks their drain.
    pub stuck: Vec<String>,
    /// The nodes whose VMIs or usage the batch changed: its own and its targets.
    pub touched: Vec<String>,
}

pub struct Sim {
    /// The inputs of the next `plan_drain_in`; `kubevirt`, `policies`, `bandwidth` and `now`
    /// stay, the rest is refilled per batch (`nodes` and `node_usage` stay empty: the search
    /// holds them).
    pub buffer: DrainInputs,
    /// The nodes as the rollout leaves them and what each holds, for the scheduler's choice.
    search: TargetSearch<'static>,
    node_pos: HashMap<String, usize>,
    pub vmis: Vec<VirtualMachineInstance>,
    vmi_by_id: HashMap<Id, usize>,
    /// VMI indexes by the node they run on.
    vmis_on: HashMap<String, Vec<usize>>,
    /// Migrations of each VMI so far.
    pub migrations: Vec<u32>,
    vms: HashMap<Id, VirtualMachine>,
    /// The cluster's VMIMs: the first batch sees them; by the next one they are over.
    vmims: Vec<crate::model::VirtualMachineInstanceMigration>,
    pods: Vec<Pod>,
    /// Each pod's requests (`scheduling::pod_requests`), parsed once; empty for a pod that
    /// holds no resources.
    requests: Vec<Resources>,
    pod_alive: Vec<bool>,
    /// What the buffer holds of the state during a batch: the VMIs and pods lent to it, by
    /// index, given back after planning.
    lent_vmis: Vec<usize>,
    lent_pods: Vec<usize>,
    pods_on: HashMap<String, Vec<usize>>,
    launchers_of: HashMap<String, Vec<usize>>,
    /// Pods every batch gets whole: those of PDBs without a fresh status.
    always_full: Vec<usize>,
    /// What every node holds (pods in `pods` plus the usage given for the others), counted
    /// for the spread selectors of every VMI.
    usage: HashMap<String, NodeUsage>,
    selectors: SelectorIndex,
    pdbs_by_ns: HashMap<String, Vec<PodDisruptionBudget>>,
    /// Per pod, the PDBs (positions in `pdbs_by_ns` of its namespace) that select it as the
    /// eviction API reads them; pods keep their labels, so this is computed once.
    pdbs_of_pod: Vec<Vec<usize>>,
    /// Per namespace, the PDBs that select nothing at eviction (reported with every drain
    /// of a VMI of the namespace).
    inert_pdbs: HashMap<String, Vec<usize>>,
    quotas_by_ns: HashMap<String, Vec<ResourceQuota>>,
    namespaces: HashMap<String, crate::model::Namespace>,
    /// Per pod, the batch that last took it (dedup without a set).
    stamp: Vec<u32>,
    batches: u32,
    /// Nodes that take `--targets done` migrations (done or outside the rollout).
    done: HashSet<String>,
    targets: Targets,
    /// Nodes whose usage changed since the search was last told.
    dirty: BTreeSet<String>,
}

impl Sim {
    pub fn new(inputs: super::MaintenanceInputs, rollout: &[String], targets: Targets) -> Sim {
        let super::MaintenanceInputs {
            mut nodes,
            vmis,
            vms,
            vmims,
            pods,
            node_usage,
            pdbs,
            quotas,
            namespaces,
            kubevirt,
            policies,
            bandwidth,
            now,
            server_version,
            loops,
        } = inputs;
        let in_rollout: HashSet<&str> = rollout.iter().map(String::as_str).collect();
        let mut done = HashSet::new();
        let mut node_pos = HashMap::new();
        for (i, n) in nodes.iter_mut().enumerate() {
            work::step(1);
            let name = node_name(n).to_string();
            if targets == Targets::Done && !in_rollout.contains(name.as_str()) {
                mark_done(n);
                done.insert(name.clone());
            }
            node_pos.insert(name, i);
        }
        let selectors = SelectorIndex::new(spread_selectors(&vmis));
        // Sized once: a Vec of whole pods grown by doubling costs its copies and page faults.
        let count = pods.len();
        let (pdb_pods, mut pods) = pods_of_unsynced_pdbs(pods, &pdbs, |rest| {
            let mut kept = Vec::with_capacity(count);
            kept.extend(rest);
            kept
        });
        let always_full: Vec<usize> = (pods.len()..pods.len() + pdb_pods.len()).collect();
        pods.extend(pdb_pods);
        let mut usage: HashMap<String, NodeUsage> = node_usage.into_iter().collect();
        let mut pods_on: HashMap<String, Vec<usize>> = HashMap::new();
        let mut launchers_of: HashMap<String, Vec<usize>> = HashMap::new();
        let mut requests = Vec::with_capacity(pods.len());
        for (i, pod) in pods.iter().enumerate() {
            work::step(1);
            let held = if holds_resources(pod) {
                pod_requests(pod)
            } else {
                Resources::new()
            };
            if let Some(node) = pod_node(pod) {
                pods_on.entry(node.to_string()).or_default().push(i);
                if holds_resources(pod) {
                    add(
                        usage.entry(node.to_string()).or_default(),
                        &held,
                        pod,
                        &selectors,
                    );
                }
            }
            requests.push(held);
            if let Some(uid) = pod_labels(pod).get(CREATED_BY_LABEL) {
                launchers_of.entry(uid.clone()).or_default().push(i);
            }
        }
        let mut vmi_by_id = HashMap::new();
        let mut vmis_on: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, v) in vmis.iter().enumerate() {
            work::step(1);
            vmi_by_id.insert(id_of(v), i);
            vmis_on.entry(vmi_node(v)).or_default().push(i);
        }
        let mut pdbs_by_ns: HashMap<String, Vec<PodDisruptionBudget>> = HashMap::new();
        for p in pdbs {
            let ns = p.metadata.namespace.clone().unwrap_or_default();
            pdbs_by_ns.entry(ns).or_default().push(p);
        }
        let (pdbs_of_pod, inert_pdbs) = pdbs_of_pods(&pods, &pdbs_by_ns, &server_version);
        let mut quotas_by_ns: HashMap<String, Vec<ResourceQuota>> = HashMap::new();
        for q in quotas {
            let ns = q.metadata.namespace.clone().unwrap_or_default();
            quotas_by_ns.entry(ns).or_default().push(q);
        }
        let pod_count = pods.len();
        let search = TargetSearch::owned(
            nodes,
            &usage,
            SelectorIndex::new(selectors.selectors().to_vec()),
        );
        Sim {
            search,
            buffer: DrainInputs {
                kubevirt,
                policies,
                bandwidth,
                now,
                server_version,
                loops,
                ..Default::default()
            },
            node_pos,
            migrations: vec![0; vmis.len()],
            vmis,
            vmi_by_id,
            vmis_on,
            vms: vms
                .into_iter()
                .map(|v| ((v.namespace().to_string(), v.name().to_string()), v))
                .collect(),
            vmims,
            pods,
            requests,
            pod_alive: vec![true; pod_count],
            lent_vmis: Vec::new(),
            lent_pods: Vec::new(),
            pods_on,
            launchers_of,
            always_full,
            usage,
            selectors,
            pdbs_by_ns,
            pdbs_of_pod,
            inert_pdbs,
            quotas_by_ns,
            namespaces: namespaces
                .into_iter()
                .filter_map(|n| Some((n.metadata.name.clone()?, n)))
                .collect(),
            stamp: vec![0; pod_count],
            batches: 0,
            done,
            targets,
            dirty: BTreeSet::new(),
        }
    }

    pub fn has_node(&self, name: &str) -> bool {
        self.node_pos.contains_key(name)
    }

    /// The VMIs on `node` now (finished ones too: they are rare and cost nothing to move).
    pub fn running_on(&self, node: &str) -> usize {
        self.vmis_on.get(node).map_or(0, Vec::len)
    }

    /// The memory the pods on `node` request now.
    pub fn memory_on(&self, node: &str) -> i128 {
        self.usage
            .get(node)
            .and_then(|u| u.requested.get("memory"))
            .copied()
            .unwrap_or(0)
    }

    /// The VMIs on `node` now.
    pub fn vmis_on(&self, node: &str) -> impl Iterator<Item = &VirtualMachineInstance> {
        self.vmis_on
            .get(node)
            .into_iter()
            .flatten()
            .map(|&i| &self.vmis[i])
    }

    /// Plans the drain of `batch` from the current state. Under `--targets done`, once some
    /// node is done, each VMI's migration gets the done-node selector; a VMI no done node can
    /// take is planned again without it (goes to any node, as a migration without
    /// `addedNodeSelector`). Placement is biggest first and consumes capacity in order, so
    /// the second pass places every done-node VMI exactly as the first did. Returns the plan
    /// and the VMIs that had to go elsewhere.
    pub fn plan_batch(&mut self, batch: &[String]) -> (DrainPlan, Vec<String>) {
        self.fill(batch);
        let planned = self.plan_filled();
        self.give_back();
        planned
    }

    fn plan_filled(&mut self) -> (DrainPlan, Vec<String>) {
        if self.targets == Targets::Any {
            return (plan_drain_in(&self.buffer, &mut self.search), Vec::new());
        }
        // Under `--targets done`, once a node is done each migration gets the done-node
        // selector, which the search drops for a VMI no done node can take.
        let selective = !self.done.is_empty();
        if selective {
            for v in &mut self.buffer.vmis {
                v.spec
                    .node_selector
                    .insert(DONE_LABEL.into(), "true".into());
            }
            self.search.set_fallback(Some(DONE_LABEL.into()));
        }
        let plan = plan_drain_in(&self.buffer, &mut self.search);
        self.search.set_fallback(None);
        // The migrations the simulation placed on a node not done.
        let mut outside: Vec<String> = plan
            .vmis
            .iter()
            .filter(|r| r.action == Action::LiveMigrate)
            .filter(|r| r.target.as_ref().is_some_and(|t| !self.done.contains(t)))
            .map(|r| r.id())
            .collect();
        outside.sort();
        (plan, outside)
    }

    /// Puts the VMIs and pods lent to the buffer back into the state.
    fn give_back(&mut self) {
        for (v, i) in self.buffer.vmis.drain(..).zip(self.lent_vmis.drain(..)) {
            let mut v = v;
            v.spec.node_selector.remove(DONE_LABEL);
            self.vmis[i] = v;
        }
        for (p, i) in self.buffer.pods.drain(..).zip(self.lent_pods.drain(..)) {
            self.pods[i] = p;
        }
        for vm in self.buffer.vms.drain(..) {
            self.vms
                .insert((vm.namespace().to_string(), vm.name().to_string()), vm);
        }
    }

    /// Refills the buffer for `batch`: its VMIs, their VMs, the pods on its nodes and its
    /// VMIs' pods in full (the search already counts every pod on its node), the quotas and
    /// namespaces of its VMIs' namespaces and those of their PDBs that select one of these
    /// pods or nothing; the cluster's VMIMs (and the migrations into its nodes) for the first
    /// batch only.
    fn fill(&mut self, batch: &[String]) {
        self.batches += 1;
        let stamp = self.batches;
        let first = stamp == 1;
        self.search.set_draining(batch.to_vec());
        let b = &mut self.buffer;
        b.drain = batch.to_vec();
        if first {
            b.vmims = self.vmims.clone();
            let into: HashSet<&str> = batch.iter().map(String::as_str).collect();
            b.incoming = self
                .vmis
                .iter()
                .filter(|v| v.label(TARGET_NODE_LABEL).is_some_and(|n| into.contains(n)))
                .cloned()
                .collect();
        } else {
            b.vmims.clear();
            b.incoming.clear();
        }
        self.lent_vmis = batch
            .iter()
            .flat_map(|n| self.vmis_on.get(n).into_iter().flatten().copied())
            .collect();
        // The buffer's vectors keep their room from batch to batch (`give_back` empties
        // them): refilled, not allocated again.
        b.vmis.clear();
        b.vmis.extend(self.lent_vmis.iter().map(|&i| {
            work::step(1);
            std::mem::take(&mut self.vmis[i])
        }));
        let namespaces: BTreeSet<String> =
            b.vmis.iter().map(|v| v.namespace().to_string()).collect();
        b.vms.clear();
        b.vms
            .extend(b.vmis.iter().filter_map(|v| self.vms.remove(&id_of(v))));
        // The pods in full.
        let mut full = Vec::new();
        let uids = b.vmis.iter().filter_map(VirtualMachineInstance::uid);
        let launchers = uids.flat_map(|u| self.launchers_of.get(u).into_iter().flatten());
        let on_batch = batch
            .iter()
            .flat_map(|n| self.pods_on.get(n).into_iter().flatten());
        for &p in launchers.chain(on_batch).chain(&self.always_full) {
            work::step(1);
            if self.pod_alive[p] && self.stamp[p] != stamp {
                self.stamp[p] = stamp;
                full.push(p);
            }
        }
        // The PDBs the drain's answer can rest on: those that select a pod it gets whole
        // (every launcher pod of its VMIs among them), and those that select nothing at
        // eviction (reported per namespace). The others of the namespaces would be judged
        // and dropped (`drain::pdbs::judge_pdbs` reads a PDB only through the launcher pods
        // it selects, or as inert): leaving them out keeps a batch's cost its own.
        let mut selecting: HashMap<&str, Vec<usize>> = HashMap::new();
        for &p in &full {
            work::step(1);
            if !self.pdbs_of_pod[p].is_empty() {
                let ns = self.pods[p].metadata.namespace.as_deref().unwrap_or("");
                selecting
                    .entry(ns)
                    .or_default()
                    .extend(&self.pdbs_of_pod[p]);
            }
        }
        b.pdbs.clear();
        for ns in &namespaces {
            let Some(pdbs) = self.pdbs_by_ns.get(ns) else {
                continue;
            };
            let mut at: Vec<usize> = selecting.remove(ns.as_str()).unwrap_or_default();
            at.extend(self.inert_pdbs.get(ns).into_iter().flatten());
            at.sort_unstable();
            at.dedup();
            b.pdbs
                .extend(at.into_iter().filter_map(|i| pdbs.get(i).cloned()));
        }
        b.pods.clear();
        b.pods
            .extend(full.iter().map(|&p| std::mem::take(&mut self.pods[p])));
        self.lent_pods = full;
        b.quotas.clear();
        b.quotas.extend(
            namespaces
                .iter()
                .flat_map(|ns| self.quotas_by_ns.get(ns).into_iter().flatten().cloned()),
        );
        b.namespaces.clear();
        b.namespaces.extend(
            namespaces
                .iter()
                .filter_map(|ns| self.namespaces.get(ns).cloned()),
        );
    }

    /// Applies a batch's plan: VMIs that live-migrate now run on their target (their
    /// launcher pod with them); VMIs shut down are gone, except a VM with runStrategy Always,
    /// whose VMI is counted back on the node it left, once that node is done (see the module
    /// docs); VMIs held by a blocking blocker stay, and their nodes stay cordoned; the other
    /// nodes of the batch are done and schedulable again.
    pub fn apply(&mut self, plan: &DrainPlan, batch: &[String]) -> Applied {
        let mut applied = Applied::default();
        let held: HashSet<&str> = plan
            .blockers
            .iter()
            .filter(|b| b.blocking)
            .flat_map(|b| b.vmis.iter().map(String::as_str))
            .collect();
        let in_batch: HashSet<&str> = batch.iter().map(String::as_str).collect();
        let mut stuck: BTreeSet<String> = BTreeSet::new();
        for row in &plan.vmis {
            work::step(1);
            let id = (row.namespace.clone(), row.name.clone());
            let Some(&i) = self.vmi_by_id.get(&id) else {
                continue;
            };
            if row.action.blocks() || held.contains(row.id().as_str()) {
                if in_batch.contains(row.node.as_str()) {
                    stuck.insert(row.node.clone());
                }
                continue;
            }
            match row.action {
                Action::LiveMigrate | Action::AlreadyMigrating => {
                    if let Some(target) = &row.target {
                        self.move_vmi(i, target);
                        self.migrations[i] += 1;
                        applied.moved.push(i);
                    }
                }
                Action::Shutdown | Action::ShutdownNotMigratable => {
                    applied.shutdowns += 1;
                    let restarts =
                        row.vm.is_some() && row.run_strategy.as_deref() == Some("Always");
                    if !restarts {
                        self.unhealthy_under_pdbs(i);
                        self.remove_vmi(i);
                    }
                }
                _ => {}
            }
        }
        if plan.verdict == crate::policy::drain::Verdict::WillBlock && stuck.is_empty() {
            stuck.extend(batch.iter().cloned());
        }
        self.search.set_draining(Vec::new());
        let done_too = self.targets == Targets::Done;
        for name in batch {
            if !self.node_pos.contains_key(name) {
                continue;
            }
            let cordon = stuck.contains(name);
            self.search.update_node(name, |node| {
                if cordon {
                    node.spec.get_or_insert_with(Default::default).unschedulable = Some(true);
                } else {
                    if let Some(spec) = node.spec.as_mut() {
                        spec.unschedulable = None;
                    }
                    if done_too {
                        mark_done(node);
                    }
                }
            });
            if !cordon && done_too {
                self.done.insert(name.clone());
            }
        }
        // What every node the batch changed holds now: its own, those its VMIs' pods left or
        // joined, and every target the search placed on (some placements did not happen: a
        // VMI held by a blocker).
        let mut touched = std::mem::take(&mut self.dirty);
        touched.extend(batch.iter().cloned());
        touched.extend(plan.vmis.iter().filter_map(|r| r.target.clone()));
        for name in &touched {
            work::step(1);
            let usage = self.usage.get(name).cloned().unwrap_or_default();
            self.search.set_usage(name, usage);
        }
        applied.touched = touched.into_iter().collect();
        applied.stuck = stuck.into_iter().collect();
        applied
    }

    /// The VMI now runs on `target`; its launcher pod moves with it (a target pod already
    /// there stays and the others go).
    fn move_vmi(&mut self, i: usize, target: &str) {
        let source = vmi_node(&self.vmis[i]);
        // The target pod KubeVirt creates runs the current virt-launcher image, and a
        // host-model VMI's target pod pins the source's host model in its node selector
        // (`policy::compat`): what the next batch's plan reads of the moved VMI.
        let image = self
            .buffer
            .kubevirt
            .as_ref()
            .and_then(crate::policy::compat::launcher_image);
        let pinned = (crate::policy::compat::mode(&self.vmis[i])
            == crate::policy::compat::CpuMode::HostModel)
            .then(|| self.search.node(&source).and_then(HostCpu::of))
            .flatten();
        let vmi = &mut self.vmis[i];
        if let Some(image) = image {
            vmi.status.launcher_container_image_version = Some(image.image);
        }
        vmi.status.node_name = Some(target.to_string());
        vmi.status.evacuation_node_name = None;
        vmi.metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(NODE_NAME_LABEL.into(), target.into());
        if let Some(list) = self.vmis_on.get_mut(&source)
            && let Some(at) = list.iter().position(|&x| x == i)
        {
            list.remove(at);
        }
        self.vmis_on.entry(target.to_string()).or_default().push(i);
        let pods: Vec<usize> = self.launcher_pods(i);
        let on_target = pods
            .iter()
            .any(|&p| pod_node(&self.pods[p]) == Some(target));
        let mut moved = on_target;
        for p in pods {
            work::step(1);
            if pod_node(&self.pods[p]) == Some(target) {
                continue;
            }
            self.unaccount(p);
            if !moved && pod_node(&self.pods[p]) == Some(source.as_str()) {
                moved = true;
                if let Some(spec) = self.pods[p].spec.as_mut() {
                    spec.node_name = Some(target.to_string());
                    if let Some(cpu) = &pinned {
                        let selector = spec.node_selector.get_or_insert_with(Default::default);
                        // Already pinned (any model or feature key, as KubeVirt reads it): kept.
                        if !selector.keys().any(|k| {
                            k.starts_with(CPU_MODEL_MIGRATION_PREFIX)
                                || k.starts_with(CPU_FEATURE_PREFIX)
                        }) {
                            if !cpu.model.is_empty() {
                                selector.insert(
                                    format!("{CPU_MODEL_MIGRATION_PREFIX}{}", cpu.model),
                                    "true".into(),
                                );
                            }
                            for f in &cpu.features {
                                selector.insert(format!("{CPU_FEATURE_PREFIX}{f}"), "true".into());
                            }
                        }
                    }
                }
                self.account(p);
            } else {
                self.pod_alive[p] = false;
            }
        }
    }

    /// The VMI is stopped for good: every PDB with a status that selects its launcher pod
    /// counts one healthy pod fewer, and allows what the disruption controller would then
    /// allow (currentHealthy − desiredHealthy, not below 0), so a later batch's evictions
    /// under that PDB see the smaller budget. (A PDB without a fresh status is computed from
    /// the pods still alive, so it needs nothing.)
    fn unhealthy_under_pdbs(&mut self, i: usize) {
        let pods = self.launcher_pods(i);
        let namespace = self.vmis[i].namespace().to_string();
        let Some(pdbs) = self.pdbs_by_ns.get_mut(&namespace) else {
            return;
        };
        static EMPTY: BTreeMap<String, String> = BTreeMap::new();
        for pdb in pdbs.iter_mut() {
            work::step(1);
            let selector = PdbSelector::of(pdb);
            let selects = pods.iter().any(|&p| {
                selector.matches(self.pods[p].metadata.labels.as_ref().unwrap_or(&EMPTY))
            });
            if !selects {
                continue;
            }
            if let Some(status) = pdb.status.as_mut()
                && let Some(current) = status.current_healthy.as_mut()
            {
                *current = (*current - 1).max(0);
                let allowed = (*current - status.desired_healthy.unwrap_or(0)).max(0);
                status.disruptions_allowed = Some(allowed);
            }
        }
    }

    /// The VMI is gone with its pods.
    fn remove_vmi(&mut self, i: usize) {
        let node = vmi_node(&self.vmis[i]);
        if let Some(list) = self.vmis_on.get_mut(&node)
            && let Some(at) = list.iter().position(|&x| x == i)
        {
            list.remove(at);
        }
        for p in self.launcher_pods(i) {
            self.unaccount(p);
            self.pod_alive[p] = false;
        }
    }

    fn launcher_pods(&self, i: usize) -> Vec<usize> {
        self.vmis[i]
            .uid()
            .and_then(|u| self.launchers_of.get(u))
            .map(|v| v.iter().copied().filter(|&p| self.pod_alive[p]).collect())
            .unwrap_or_default()
    }

    /// Takes pod `p` off its node (usage and index).
    fn unaccount(&mut self, p: usize) {
        let pod = &self.pods[p];
        let Some(node) = pod_node(pod) else { return };
        if holds_resources(pod)
            && let Some(u) = self.usage.get_mut(node)
        {
            subtract(u, &self.requests[p], pod, &self.selectors);
            self.dirty.insert(node.to_string());
        }
        if let Some(list) = self.pods_on.get_mut(node)
            && let Some(at) = list.iter().position(|&x| x == p)
        {
            list.swap_remove(at);
        }
    }

    /// Counts pod `p` on its node (usage and index).
    fn account(&mut self, p: usize) {
        let pod = &self.pods[p];
        let Some(node) = pod_node(pod) else { return };
        if holds_resources(pod) {
            let u = self.usage.entry(node.to_string()).or_default();
            add(u, &self.requests[p], pod, &self.selectors);
            self.dirty.insert(node.to_string());
        }
        self.pods_on.entry(node.to_string()).or_default().push(p);
    }

    /// The VMI's id (`namespace/name`).
    pub fn vmi_id(&self, i: usize) -> (String, String) {
        id_of(&self.vmis[i])
    }
}

/// Per pod, the PDBs of its namespace (positions in `by_ns`) that select it as the eviction
/// API of `version` reads them; per namespace, the PDBs that select nothing there. One
/// [`PdbIndex`] per namespace: the pods' labels, not every PDB.
fn pdbs_of_pods(
    pods: &[Pod],
    by_ns: &HashMap<String, Vec<PodDisruptionBudget>>,
    version: &Option<crate::model::ServerVersion>,
) -> (Vec<Vec<usize>>, HashMap<String, Vec<usize>>) {
    let honours = empty_selector_at_eviction(version.as_ref()).honoured_or_assumed();
    let indexes: HashMap<&str, PdbIndex> = by_ns
        .iter()
        .map(|(ns, pdbs)| (ns.as_str(), PdbIndex::for_eviction(pdbs, honours)))
        .collect();
    let inert = indexes
        .iter()
        .map(|(ns, index)| (ns.to_string(), index.inert_in(ns).to_vec()))
        .filter(|(_, at)| !at.is_empty())
        .collect();
    let of_pod = pods
        .iter()
        .map(|pod| {
            let ns = pod.metadata.namespace.as_deref().unwrap_or("");
            indexes
                .get(ns)
                .map(|index| index.matching(pod))
                .unwrap_or_default()
        })
        .collect();
    (of_pod, inert)
}

/// Labels a node as one `--targets done` migrations may go to.
fn mark_done(node: &mut Node) {
    node.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert(DONE_LABEL.into(), "true".into());
}

/// [`NodeUsage::add`] with the pod's requests already parsed.
fn add(u: &mut NodeUsage, requests: &Resources, pod: &Pod, selectors: &SelectorIndex) {
    for (r, q) in requests {
        match u.requested.get_mut(r) {
            Some(v) => *v += q,
            None => {
                u.requested.insert(r.clone(), *q);
            }
        }
    }
    u.pods += 1;
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    let labels = pod.metadata.labels.as_ref().unwrap_or(&EMPTY);
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("");
    for s in selectors.matching(namespace, labels) {
        *u.matching.entry(s.key.clone()).or_default() += 1;
    }
}

/// The inverse of [`add`].
fn subtract(u: &mut NodeUsage, requests: &Resources, pod: &Pod, selectors: &SelectorIndex) {
    for (r, q) in requests {
        match u.requested.get_mut(r) {
            Some(v) => *v -= q,
            None => {
                u.requested.insert(r.clone(), -q);
            }
        }
    }
    u.pods -= 1;
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    let labels = pod.metadata.labels.as_ref().unwrap_or(&EMPTY);
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("");
    for s in selectors.matching(namespace, labels) {
        *u.matching.entry(s.key.clone()).or_default() -= 1;
    }
}
