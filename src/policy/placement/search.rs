//! [`TargetSearch`]: the nodes, what each holds and the scheduling classes, spread states and
//! explanations built over them; the best node with room for a target pod, or why there is
//! none; and what a rolling maintenance tells it between drains.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap, HashSet};

use super::class::{Class, Rank};
use super::no_fit::{NoFit, no_fit};
use super::spread::{Nodes, Spread};
use super::unplaceable::Failures;
use super::{Target, TargetPod, free_memory};
use crate::model::Node;
use crate::policy::compat::{Labelled, NodeCpu};
use crate::policy::index::work;
use crate::policy::scheduling::{
    HostCpu, NodeUsage, Resources, SelectorIndex, Unfit, allocatable, insufficient,
    launcher_labels, node_name, spread_rules, unreported,
};

/// Target selection over a set of nodes, with resources consumed as VMs are placed.
///
/// One drain borrows the nodes ([`TargetSearch::new`]). A rolling maintenance keeps one
/// search for the whole rollout ([`TargetSearch::owned`]) and tells it what changed between
/// batches: the nodes drained ([`TargetSearch::set_draining`]), a node cordoned, uncordoned
/// or relabelled ([`TargetSearch::update_node`]), what a node holds
/// ([`TargetSearch::set_usage`]); each costs the changed nodes times the scheduling classes,
/// not every node again.
pub struct TargetSearch<'a> {
    nodes: Cow<'a, [Node]>,
    draining: Cow<'a, [String]>,
    /// Node name → its positions (a name should be unique; nothing breaks if it is not).
    positions: HashMap<String, Vec<usize>>,
    allocatable: Vec<Resources>,
    /// What each node holds, by position.
    used: Vec<NodeUsage>,
    selectors: SelectorIndex,
    /// Spread selector key → the nodes with pods it selects.
    selected_on: HashMap<String, Vec<usize>>,
    classes: HashMap<String, Class>,
    spread: Spread,
    /// The node of every placement, other change of what a node holds, or change of its fit
    /// so far, in order.
    changed: Vec<usize>,
    /// A node-selector key a VMI may do without when no node takes it with the key (see
    /// [`TargetSearch::set_fallback`]).
    fallback: Option<String>,
    /// Why each node failed a (class, spread, requests), as of a number of changes.
    failures: Failures,
    /// What the node labeller published on each node, by position (`policy::compat`).
    cpu: Vec<NodeCpu>,
    /// How many nodes publish machine-type labels, and the obsolete-host-model label.
    machine_labelled: usize,
    obsolete_labelled: usize,
}

impl<'a> TargetSearch<'a> {
    /// `usage` gives what each node (by name) already holds, counted for `selectors` (the
    /// spread selectors of the VMIs to place, `scheduling::spread_selectors`).
    pub fn new(
        nodes: &'a [Node],
        draining: &'a [String],
        usage: &BTreeMap<String, NodeUsage>,
        selectors: SelectorIndex,
    ) -> Self {
        Self::build(
            Cow::Borrowed(nodes),
            Cow::Borrowed(draining),
            |name| usage.get(name),
            selectors,
        )
    }

    fn build<'u>(
        nodes: Cow<'a, [Node]>,
        draining: Cow<'a, [String]>,
        usage: impl Fn(&str) -> Option<&'u NodeUsage>,
        selectors: SelectorIndex,
    ) -> Self {
        let mut positions: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            work::step(1);
            positions
                .entry(node_name(n).to_string())
                .or_default()
                .push(i);
        }
        let used: Vec<NodeUsage> = nodes
            .iter()
            .map(|n| usage(node_name(n)).cloned().unwrap_or_default())
            .collect();
        let mut selected_on: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, u) in used.iter().enumerate() {
            for (key, n) in &u.matching {
                work::step(1);
                if *n > 0 {
                    selected_on.entry(key.clone()).or_default().push(i);
                }
            }
        }
        let allocatable = nodes.iter().map(allocatable).collect();
        let cpu: Vec<NodeCpu> = nodes
            .iter()
            .map(|n| {
                work::step(1);
                NodeCpu::of(n)
            })
            .collect();
        let machine_labelled = cpu.iter().filter(|c| !c.machine_types.is_empty()).count();
        let obsolete_labelled = cpu.iter().filter(|c| c.obsolete_host_model).count();
        TargetSearch {
            cpu,
            machine_labelled,
            obsolete_labelled,
            nodes,
            draining,
            positions,
            allocatable,
            used,
            selectors,
            selected_on,
            classes: HashMap::new(),
            spread: Spread::default(),
            changed: Vec::new(),
            failures: Failures::default(),
            fallback: None,
        }
    }
}

impl TargetSearch<'static> {
    /// A search that owns its nodes, to be kept across drains (a rolling maintenance): none
    /// is being drained yet; `usage` as for [`TargetSearch::new`].
    pub fn owned(
        nodes: Vec<Node>,
        usage: &HashMap<String, NodeUsage>,
        selectors: SelectorIndex,
    ) -> Self {
        Self::build(
            Cow::Owned(nodes),
            Cow::Owned(Vec::new()),
            |name| usage.get(name),
            selectors,
        )
    }
}

impl<'a> TargetSearch<'a> {
    /// The node named `name`, as the search sees it now.
    pub fn node(&self, name: &str) -> Option<&Node> {
        let &i = self.positions.get(name)?.first()?;
        self.nodes.get(i)
    }

    /// What the node labeller published on node `name`.
    pub fn node_cpu(&self, name: &str) -> Option<&NodeCpu> {
        let &i = self.positions.get(name)?.first()?;
        self.cpu.get(i)
    }

    /// Which of the labeller's cluster-wide labels some node carries (machine types:
    /// KubeVirt ≥ 1.6's labeller).
    pub fn labelled(&self) -> Labelled {
        Labelled {
            machine_types: self.machine_labelled > 0,
            obsolete_host_model: self.obsolete_labelled > 0,
        }
    }

    /// Every node but the drained ones and `source`, with its labeller facts: where a
    /// target pod could go, CPU-wise.
    pub fn cpu_candidates<'s>(
        &'s self,
        source: &'s str,
    ) -> impl Iterator<Item = (&'s str, &'s NodeCpu)> + 's {
        let draining: HashSet<&str> = self.draining.iter().map(String::as_str).collect();
        self.nodes
            .iter()
            .zip(&self.cpu)
            .map(|(n, c)| (node_name(n), c))
            .filter(move |(name, _)| *name != source && !draining.contains(name))
    }

    /// The nodes being drained now (they take no target pod): only the nodes leaving or
    /// joining the set are judged again.
    pub fn set_draining(&mut self, draining: Vec<String>) {
        let mut changed: Vec<usize> = Vec::new();
        for name in self.draining.iter().chain(&draining) {
            work::step(1);
            changed.extend(self.positions.get(name).into_iter().flatten().copied());
        }
        changed.sort_unstable();
        changed.dedup();
        self.draining = Cow::Owned(draining);
        self.refresh(&changed);
    }

    /// Changes node `name` (a cordon, a label; not its name or allocatable) and judges it
    /// again for every scheduling class.
    pub fn update_node(&mut self, name: &str, change: impl FnOnce(&mut Node)) {
        let Some(positions) = self.positions.get(name).cloned() else {
            return;
        };
        let Some(&first) = positions.first() else {
            return;
        };
        if let Some(node) = self.nodes.to_mut().get_mut(first) {
            change(node);
            let cpu = NodeCpu::of(node);
            let had = !self.cpu[first].machine_types.is_empty();
            let has = !cpu.machine_types.is_empty();
            self.machine_labelled = self.machine_labelled + usize::from(has) - usize::from(had);
            self.obsolete_labelled = self.obsolete_labelled + usize::from(cpu.obsolete_host_model)
                - usize::from(self.cpu[first].obsolete_host_model);
            self.cpu[first] = cpu;
        }
        self.refresh(&positions);
    }

    /// What node `name` holds now (counted for the search's selectors), replacing what the
    /// search had, its own placements there included.
    pub fn set_usage(&mut self, name: &str, usage: NodeUsage) {
        let Some(&i) = self.positions.get(name).and_then(|p| p.first()) else {
            return;
        };
        work::step(1);
        self.changed.push(i);
        let before = free_memory(&self.allocatable[i], &self.used[i]);
        let after = free_memory(&self.allocatable[i], &usage);
        if before != after {
            for class in self.classes.values_mut() {
                class.free_changed(i, before, after);
            }
        }
        let mut keys: Vec<&String> = self.used[i]
            .matching
            .keys()
            .chain(usage.matching.keys())
            .collect();
        keys.sort();
        keys.dedup();
        let deltas: Vec<(String, i64, i64)> = keys
            .into_iter()
            .map(|k| {
                let old = self.used[i].matching.get(k).copied().unwrap_or(0);
                let new = usage.matching.get(k).copied().unwrap_or(0);
                (k.clone(), old, new)
            })
            .filter(|(_, old, new)| old != new)
            .collect();
        for (key, old, new) in deltas {
            work::step(1);
            if old <= 0 && new > 0 {
                self.selected_on.entry(key.clone()).or_default().push(i);
            } else if old > 0
                && new <= 0
                && let Some(list) = self.selected_on.get_mut(&key)
                && let Some(at) = list.iter().position(|&x| x == i)
            {
                list.swap_remove(at);
            }
            self.spread
                .adjust(&key, i, &self.nodes[i], new.max(0) - old.max(0), false);
        }
        self.used[i] = usage;
    }

    /// A node-selector key the search may drop from a VMI no node takes with it: the VMI is
    /// then placed as if it did not have it (a migration's `addedNodeSelector` that vmctl
    /// leaves off when no node matches). None: every selector is kept.
    pub fn set_fallback(&mut self, key: Option<String>) {
        self.fallback = key;
    }

    /// Judges the nodes at `changed` (positions) again for every class. The spread domain
    /// tables rest on every node's fit: they are rebuilt on their next use. The explanations
    /// kept for unplaceable pods are brought up to date with these nodes on theirs.
    fn refresh(&mut self, changed: &[usize]) {
        if changed.is_empty() {
            return;
        }
        self.spread.clear();
        self.failures.drop_spread();
        self.changed.extend_from_slice(changed);
        let TargetSearch {
            nodes,
            draining,
            classes,
            allocatable,
            used,
            ..
        } = self;
        for class in classes.values_mut() {
            for &i in changed {
                let free = free_memory(&allocatable[i], &used[i]);
                class.judge(i, &nodes[i], draining, free);
            }
        }
    }

    /// Why node `i` cannot take the pod beyond the static fit: resources, then spread.
    fn dynamic_unfit(&self, i: usize, pod: &TargetPod, spread: &[usize]) -> Vec<Unfit> {
        let lacking = insufficient(
            &pod.requests,
            &self.allocatable[i],
            &self.used[i].requested,
            self.used[i].pods,
        );
        if !lacking.is_empty() {
            return lacking;
        }
        self.spread
            .unfit(spread, &self.nodes[i])
            .into_iter()
            .collect()
    }

    /// The node a target pod (of a VMI running on `source`) would get, or why there is
    /// none, as the scheduler would summarise it.
    pub fn find(&mut self, pod: &TargetPod, source: &str) -> Result<Target, NoFit> {
        let found = self.find_as_is(pod, source);
        let Err(no_fit) = found else { return found };
        let Some(key) = self.fallback.as_deref() else {
            return Err(no_fit);
        };
        if !pod.vmi.spec.node_selector.contains_key(key) {
            return Err(no_fit);
        }
        let mut without = pod.vmi.clone();
        without.spec.node_selector.remove(key);
        let pod = TargetPod {
            vmi: &without,
            requests: pod.requests.clone(),
            pinned_cpu: pod.pinned_cpu.clone(),
        };
        self.find_as_is(&pod, source)
    }

    fn find_as_is(&mut self, pod: &TargetPod, source: &str) -> Result<Target, NoFit> {
        let source_model = match &pod.pinned_cpu {
            Some(pinned) => Some(pinned.clone()),
            None => self
                .positions
                .get(source)
                .and_then(|p| p.first())
                .and_then(|&i| HostCpu::of(&self.nodes[i])),
        };
        let key = Class::signature(pod.vmi, source_model.as_ref());
        if !self.classes.contains_key(&key) {
            let class = Class::new(
                pod.vmi,
                source_model.as_ref(),
                &self.nodes,
                &self.draining,
                |i| free_memory(&self.allocatable[i], &self.used[i]),
            );
            self.classes.insert(key.clone(), class);
        }
        let at = Nodes {
            nodes: &self.nodes,
            draining: &self.draining,
            used: &self.used,
            selected_on: &self.selected_on,
        };
        let spread = self
            .spread
            .states(&key, pod.vmi, source_model.as_ref(), &at);
        let Some(class) = self.classes.get(&key) else {
            return Err(NoFit {
                message: "internal: no scheduling class".into(),
                preemption_useless: false,
                cpu_model: None,
                cpu_features: vec![],
                short: vec![],
            });
        };
        let needed = pod.memory();
        let mut below: Option<Rank> = None;
        loop {
            let next = match below {
                None => class.fitting.iter().next_back(),
                Some(b) => class.fitting.range(..b).next_back(),
            };
            let Some(&rank) = next else { break };
            work::step(1);
            let (taints, weight, free, Reverse(i)) = rank;
            if free < needed {
                // Every node left at this score level has less memory: go one level down.
                below = Some((taints, weight, i128::MIN, Reverse(usize::MAX)));
                continue;
            }
            below = Some(rank);
            let name = node_name(&self.nodes[i]);
            if name == source || !self.dynamic_unfit(i, pod, &spread).is_empty() {
                continue;
            }
            return Ok(Target {
                node: name.to_string(),
                notes: self.notes(class, i, pod),
            });
        }
        // Nothing fits. Why, node by node, is kept per (class, spread, requests) and brought
        // up to date with only the nodes changed since (spread constraints depend on every
        // placement, so those are recounted): a drain that fills the cluster, and a rollout
        // whose batches keep finding no room, stay linear.
        let memo_key = format!("{key}|{spread:?}|{:?}", pod.requests);
        let mut failures = std::mem::take(&mut self.failures);
        let memo = failures.explain(
            memo_key,
            !spread.is_empty(),
            &self.changed,
            self.nodes.len(),
            |i| match &class.reasons[i] {
                Some(u) => vec![u.clone()],
                None => self.dynamic_unfit(i, pod, &spread),
            },
        );
        // The source nodes count as the source, whatever else they lack.
        let mut counts = memo.counts.clone();
        let mut sources = 0;
        for &i in self.positions.get(source).map_or(&[][..], Vec::as_slice) {
            work::step(1);
            sources += 1;
            for u in &memo.reasons[i] {
                if let Some(c) = counts.get_mut(u) {
                    *c -= 1;
                }
            }
        }
        counts.retain(|_, c| *c > 0);
        self.failures = failures;
        Err(no_fit(
            pod,
            &counts,
            sources,
            source_model.as_ref(),
            self.nodes.len(),
        ))
    }

    /// What the plan cannot vouch for on the chosen node, or had to settle for.
    fn notes(&self, class: &Class, i: usize, pod: &TargetPod) -> Vec<String> {
        let name = node_name(&self.nodes[i]);
        let mut notes = Vec::new();
        let missing = unreported(&pod.requests, &self.allocatable[i]);
        if !missing.is_empty() {
            notes.push(format!(
                "{name} reports no allocatable {}, so that was not checked",
                missing.join(", ")
            ));
        }
        let (taints, weight) = class.score[i];
        if taints < 0 {
            notes.push(format!(
                "{name} has {} PreferNoSchedule taint(s) the VMI does not tolerate; no node with fewer fits",
                -taints
            ));
        }
        if class.preferred {
            if weight > 0 {
                notes.push(format!("preferred node affinity matched (weight {weight})"));
            } else {
                notes.push("no node matching its preferred node affinity fits".into());
            }
        }
        let soft: Vec<String> = spread_rules(pod.vmi, "ScheduleAnyway")
            .into_iter()
            .map(|r| r.topology_key)
            .collect();
        if !soft.is_empty() {
            notes.push(format!(
                "its ScheduleAnyway topology spread ({}) is not weighed here; the scheduler may prefer a less crowded domain",
                soft.join(", ")
            ));
        }
        notes
    }

    /// Takes the pod's requests from `target` and counts it in the spread domains (a target
    /// pod was placed there).
    pub fn consume(&mut self, target: &str, pod: &TargetPod) {
        let Some(&i) = self.positions.get(target).and_then(|p| p.first()) else {
            return;
        };
        self.changed.push(i);
        let before = free_memory(&self.allocatable[i], &self.used[i]);
        for (r, q) in &pod.requests {
            *self.used[i].requested.entry(r.clone()).or_default() += q;
        }
        self.used[i].pods += 1;
        let after = free_memory(&self.allocatable[i], &self.used[i]);
        for class in self.classes.values_mut() {
            class.free_changed(i, before, after);
        }
        let own = launcher_labels(pod.vmi);
        let matched: Vec<String> = self
            .selectors
            .matching(pod.vmi.namespace(), &own)
            .into_iter()
            .map(|s| s.key.clone())
            .collect();
        for key in matched {
            let count = self.used[i].matching.entry(key.clone()).or_insert(0);
            *count += 1;
            if *count == 1 {
                self.selected_on.entry(key.clone()).or_default().push(i);
            }
            self.spread.adjust(&key, i, &self.nodes[i], 1, true);
        }
    }
}
