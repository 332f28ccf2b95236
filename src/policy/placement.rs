//! Where would the scheduler put a migration target pod? Among the nodes that pass every
//! filter of [`super::scheduling`] (static ones, resources, topology spread), the best scored:
//! fewest untolerated PreferNoSchedule taints, then the highest preferred node affinity
//! weight, then the most free memory (then the first node). Resources are consumed and
//! spread domains filled as VMs are placed.
//!
//! Naively that is every node for every VM: O(VMs × nodes), which is quadratic when a drain
//! (or a rolling maintenance) covers a good part of the fleet. But the static fit and the
//! scores depend on the VMI only through its *scheduling signature* (tolerations, node
//! selector, node affinity, host-model CPU and the source's CPU model, spread constraints),
//! and a fleet has few of those. So the fit of every node is computed once per signature,
//! the fitting nodes are kept ordered by (score, free memory), and a VM's target is the first
//! of them that has the rest of its resources and keeps its spread: nodes short of memory
//! are skipped a score level at a time. Topology spread counts are kept per (selector,
//! domain), only for domains that hold selected pods, and updated as pods are placed. When
//! nothing fits, why each node fails is kept per (signature, spread, requests) and updated
//! with the nodes placed on since. The answers, and the explanations, are exactly the naive
//! ones (tested below).
//!
//! Among fitting nodes the order is lexicographic (PreferNoSchedule, preferred affinity,
//! free memory), not the scheduler's weighted sum of normalised plugin scores (which also
//! has LeastAllocated, BalancedAllocation, ImageLocality, ScheduleAnyway spread): free
//! memory as the last key keeps the "skip the nodes short of memory" step, and memory is
//! what a VM's target pod is nearly always short of. The plan says the choice is a
//! prediction.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::compat::NodeCpu;
use super::index::work;
use super::scheduling::{
    CPU_FEATURE_PREFIX, CPU_MODEL_MIGRATION_PREFIX, HostCpu, NodeUsage, Resources, SelectorIndex,
    SpreadRule, Unfit, allocatable, has_preferred_affinity, insufficient,
    intolerable_prefer_no_schedule, labels, launcher_labels, node_name, preferred_affinity_weight,
    required_node_affinity, show_amount, spread_counts_node, spread_rules, spread_unfit,
    static_fit, unreported, uses_host_model,
};
use crate::model::{Node, VirtualMachineInstance};

/// The migration target pod of a VMI: what the scheduler sees of it.
#[derive(Debug, Clone)]
pub struct TargetPod<'v> {
    pub vmi: &'v VirtualMachineInstance,
    /// Its requests, as the source launcher pod's (see `policy::drain`).
    pub requests: Resources,
    /// A host-model VMI that migrated before: the host CPU its launcher pod's node selector
    /// pins (`policy::compat`), which KubeVirt requires instead of the source node's.
    pub pinned_cpu: Option<HostCpu>,
}

impl TargetPod<'_> {
    fn memory(&self) -> i128 {
        self.requests.get("memory").copied().unwrap_or(0)
    }

    /// "a 2.0 GiB target pod", naming hugepages and extended resources (GPUs) too, and cpu
    /// or ephemeral storage when some node is `short` of them.
    pub fn describe(&self, short: &[String]) -> String {
        let extra: Vec<String> = self
            .requests
            .iter()
            .filter(|(r, q)| {
                **q > 0
                    && r.as_str() != "memory"
                    && (short.contains(r)
                        || !matches!(r.as_str(), "cpu" | "ephemeral-storage" | "pods")
                            && !r.starts_with("devices.kubevirt.io/"))
            })
            .map(|(r, q)| show_amount(r, *q))
            .collect();
        let memory = crate::text::bytes(u64::try_from(self.memory().max(0)).unwrap_or(0));
        if extra.is_empty() {
            format!("a {memory} target pod")
        } else {
            format!("a {memory} target pod with {}", extra.join(", "))
        }
    }
}

/// The chosen node, and what the plan could not check or had to settle for there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub node: String,
    pub notes: Vec<String>,
}

/// The fix when memory, or nothing in particular, is short.
const GENERIC_FIX: &str =
    "free memory or add a node that matches the VMI's selectors, tolerations and CPU model";

/// Why no node can take the pod: the scheduler-like summary and what it rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoFit {
    /// "no node can take a 2.0 GiB target pod: 0/5 nodes fit (...)".
    pub message: String,
    /// Every node failed a filter that evicting pods cannot change (a taint, the node
    /// selector or affinity, the CPU model, a missing topology key, a cordon, the source):
    /// the scheduler then adds "Preemption is not helpful for scheduling".
    pub preemption_useless: bool,
    /// The source's host-model CPU, when some node lacks its migration label.
    pub cpu_model: Option<String>,
    /// The CPU features that host model requires on the source, when it matters.
    pub cpu_features: Vec<String>,
    /// The resources some node is short of.
    pub short: Vec<String>,
}

impl NoFit {
    /// The explanation's core: the summary, and why preemption cannot help when it cannot.
    pub fn explained(&self) -> String {
        let mut text = self.message.clone();
        if self.preemption_useless {
            text.push_str(
                "; preemption cannot help (the scheduler says \"Preemption is not helpful for scheduling\")",
            );
        }
        if let Some(model) = &self.cpu_model {
            text.push_str(&format!(
                "; the VMI uses the host-model CPU, so KubeVirt requires its target node to carry {CPU_MODEL_MIGRATION_PREFIX}{model}=true (the source's model)"
            ));
            if !self.cpu_features.is_empty() {
                let labels: Vec<String> = self
                    .cpu_features
                    .iter()
                    .map(|f| format!("{CPU_FEATURE_PREFIX}{f}=true"))
                    .collect();
                text.push_str(&format!(
                    " and the features that model requires there: {}",
                    labels.join(", ")
                ));
            }
        }
        text
    }

    /// What would make room, from what failed.
    pub fn fix(&self) -> String {
        let mut parts = Vec::new();
        if let Some(model) = &self.cpu_model {
            parts.push(format!(
                "keep a node with CPU model {model} schedulable until this VM has moved (drain the old nodes last), give the VM a named CPU model the other nodes support (spec.domain.cpu.model), or stop it and start it on a new node"
            ));
        }
        for r in &self.short {
            parts.push(match r.as_str() {
                "memory" => GENERIC_FIX.into(),
                "cpu" => format!("free {r} on a fitting node"),
                "pods" => "free pod slots (the pods allocatable) on a fitting node".into(),
                _ => format!("free {r} on a fitting node or add one that advertises it"),
            });
        }
        if parts.is_empty() {
            GENERIC_FIX.into()
        } else {
            parts.join("; or ")
        }
    }
}

/// Order of the fitting nodes: (minus untolerated PreferNoSchedule taints, preferred node
/// affinity weight, free memory, earlier position first), best last.
type Rank = (i64, i64, i128, Reverse<usize>);

/// Which nodes' pods a spread constraint counts, for one scheduling class and one set of
/// topology keys and policies (PodTopologySpread's PreFilter), and how many domains each
/// topology key then has. Built once, shared by every selector.
struct DomainTable {
    counted: Vec<bool>,
    domains: HashMap<String, usize>,
}

/// One DoNotSchedule constraint (class × selector × key), with its domain counts. Only the
/// domains with matching pods are held; the others count 0.
struct SpreadState {
    rule: SpreadRule,
    table: usize,
    /// Matching pods per counted domain that has any.
    counts: HashMap<String, i64>,
    /// How many of those domains have each count.
    histogram: BTreeMap<i64, usize>,
}

impl SpreadState {
    fn bump(&mut self, domain: &str) {
        self.adjust(domain, 1);
    }

    /// The domain holds `delta` more matching pods; a domain left with none is not held.
    fn adjust(&mut self, domain: &str, delta: i64) {
        if delta == 0 {
            return;
        }
        let old = self.counts.get(domain).copied().unwrap_or(0);
        if let Some(h) = self.histogram.get_mut(&old) {
            *h -= 1;
            if *h == 0 {
                self.histogram.remove(&old);
            }
        }
        let new = old + delta;
        if new > 0 {
            self.counts.insert(domain.to_string(), new);
            *self.histogram.entry(new).or_default() += 1;
        } else {
            self.counts.remove(domain);
        }
    }

    fn unfit(&self, node: &Node, table: &DomainTable) -> Option<Unfit> {
        let domain = labels(node).get(&self.rule.topology_key);
        let matching = domain
            .and_then(|d| self.counts.get(d))
            .copied()
            .unwrap_or(0);
        let domains = table
            .domains
            .get(&self.rule.topology_key)
            .copied()
            .unwrap_or(0);
        // Domains without matching pods hold the minimum, 0.
        let min = if domains == 0 {
            None
        } else if self.counts.len() < domains {
            Some(0)
        } else {
            self.histogram.keys().next().copied()
        };
        spread_unfit(
            &self.rule,
            domain.map(String::as_str),
            matching,
            min,
            domains,
        )
    }
}

/// One scheduling signature's view of the nodes.
struct Class {
    /// A VMI of the signature and its source's CPU model, to judge a changed node again.
    vmi: VirtualMachineInstance,
    source_model: Option<HostCpu>,
    /// Why each node does not fit statically (None: it fits), by node position.
    reasons: Vec<Option<Unfit>>,
    /// (minus PreferNoSchedule taints, preferred affinity weight) by node position.
    score: Vec<(i64, i64)>,
    /// The statically fitting nodes, best last.
    fitting: BTreeSet<Rank>,
    preferred: bool,
}

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
    tables: Vec<DomainTable>,
    table_ids: HashMap<String, usize>,
    spread: Vec<SpreadState>,
    spread_ids: HashMap<String, usize>,
    /// Spread selector key → the states counting it.
    spread_by_selector: HashMap<String, Vec<usize>>,
    /// The node of every placement (or other change of what a node holds) so far, in order.
    placed: Vec<usize>,
    /// A node-selector key a VMI may do without when no node takes it with the key (see
    /// [`TargetSearch::set_fallback`]).
    fallback: Option<String>,
    /// Why each node failed a (class, spread, requests), as of a number of placements.
    failures: HashMap<String, Unplaceable>,
    /// What the node labeller published on each node, by position (`policy::compat`).
    cpu: Vec<NodeCpu>,
    /// How many nodes publish machine-type labels, and the obsolete-host-model label.
    machine_labelled: usize,
    obsolete_labelled: usize,
}

/// Why every node fails one kind of target pod, as of `placed` placements.
struct Unplaceable {
    placed: usize,
    reasons: Vec<Vec<Unfit>>,
    counts: BTreeMap<Unfit, u32>,
}

fn free_memory(allocatable: &Resources, used: &NodeUsage) -> i128 {
    allocatable.get("memory").copied().unwrap_or(0)
        - used.requested.get("memory").copied().unwrap_or(0)
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
            tables: Vec::new(),
            table_ids: HashMap::new(),
            spread: Vec::new(),
            spread_ids: HashMap::new(),
            spread_by_selector: HashMap::new(),
            placed: Vec::new(),
            failures: HashMap::new(),
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
    pub fn labelled(&self) -> super::compat::Labelled {
        super::compat::Labelled {
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
        let draining: std::collections::HashSet<&str> =
            self.draining.iter().map(String::as_str).collect();
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
        self.placed.push(i);
        let before = free_memory(&self.allocatable[i], &self.used[i]);
        let after = free_memory(&self.allocatable[i], &usage);
        if before != after {
            for class in self.classes.values_mut() {
                work::step(1);
                let (t, w) = class.score[i];
                if class.fitting.remove(&(t, w, before, Reverse(i))) {
                    class.fitting.insert((t, w, after, Reverse(i)));
                }
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
            for &s in self
                .spread_by_selector
                .get(&key)
                .map_or(&[][..], Vec::as_slice)
            {
                let state = &mut self.spread[s];
                if self.tables[state.table].counted[i]
                    && let Some(d) = labels(&self.nodes[i]).get(&state.rule.topology_key)
                {
                    state.adjust(d, new.max(0) - old.max(0));
                }
            }
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
    /// tables and the explanations kept for unplaceable pods rest on every node's fit: they
    /// are rebuilt on their next use.
    fn refresh(&mut self, changed: &[usize]) {
        if changed.is_empty() {
            return;
        }
        self.tables.clear();
        self.table_ids.clear();
        self.spread.clear();
        self.spread_ids.clear();
        self.spread_by_selector.clear();
        self.failures.clear();
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
                work::step(1);
                let (t, w) = class.score[i];
                let free = free_memory(&allocatable[i], &used[i]);
                if class.reasons[i].is_none() {
                    class.fitting.remove(&(t, w, free, Reverse(i)));
                }
                let node = &nodes[i];
                class.reasons[i] =
                    static_fit(&class.vmi, node, draining, class.source_model.as_ref());
                class.score[i] = (
                    -i64::from(intolerable_prefer_no_schedule(
                        &class.vmi.spec.tolerations,
                        node,
                    )),
                    preferred_affinity_weight(&class.vmi, node),
                );
                if class.reasons[i].is_none() {
                    let (t, w) = class.score[i];
                    class.fitting.insert((t, w, free, Reverse(i)));
                }
            }
        }
    }

    /// What the static fit and the scores depend on (spread constraints are kept apart, per
    /// selector, so that a selector per application does not multiply the classes).
    fn signature(vmi: &VirtualMachineInstance, source_model: Option<&HostCpu>) -> String {
        let required = required_node_affinity(vmi);
        let preferred = vmi
            .spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|a| {
                a.preferred_during_scheduling_ignored_during_execution
                    .as_ref()
            });
        // Serialising plain data cannot fail; an empty key would only merge classes that
        // the fit check then tells apart anyway, so fall back to the VMI's own identity.
        serde_json::to_string(&(
            &vmi.spec.tolerations,
            &vmi.spec.node_selector,
            required,
            preferred,
            uses_host_model(vmi),
            source_model,
        ))
        .unwrap_or_else(|_| format!("{}/{}", vmi.namespace(), vmi.name()))
    }

    fn build_class(&self, vmi: &VirtualMachineInstance, source_model: Option<&HostCpu>) -> Class {
        let nodes = &self.nodes[..];
        work::step(nodes.len());
        let reasons: Vec<Option<Unfit>> = nodes
            .iter()
            .map(|n| static_fit(vmi, n, &self.draining, source_model))
            .collect();
        let score: Vec<(i64, i64)> = nodes
            .iter()
            .map(|n| {
                (
                    -i64::from(intolerable_prefer_no_schedule(&vmi.spec.tolerations, n)),
                    preferred_affinity_weight(vmi, n),
                )
            })
            .collect();
        let mut fitting = BTreeSet::new();
        for (i, reason) in reasons.iter().enumerate() {
            if reason.is_none() {
                let free = free_memory(&self.allocatable[i], &self.used[i]);
                fitting.insert((score[i].0, score[i].1, free, Reverse(i)));
            }
        }
        Class {
            vmi: vmi.clone(),
            source_model: source_model.cloned(),
            reasons,
            score,
            fitting,
            preferred: has_preferred_affinity(vmi),
        }
    }

    /// The spread states of the pod's DoNotSchedule constraints, built on first use: the
    /// domain table once per (class, keys, policies), the counts from the nodes with
    /// selected pods only.
    fn spread_states(
        &mut self,
        class_key: &str,
        vmi: &VirtualMachineInstance,
        source_model: Option<&HostCpu>,
    ) -> Vec<usize> {
        let rules = spread_rules(vmi, "DoNotSchedule");
        let keys: Vec<&str> = rules.iter().map(|r| r.topology_key.as_str()).collect();
        let mut ids = Vec::with_capacity(rules.len());
        for rule in &rules {
            work::step(1);
            let table_key = format!(
                "{class_key}|{keys:?}|{}|{}",
                rule.honor_affinity, rule.honor_taints
            );
            let table = match self.table_ids.get(&table_key) {
                Some(&t) => t,
                None => {
                    work::step(self.nodes.len());
                    let counted: Vec<bool> = self
                        .nodes
                        .iter()
                        .map(|n| {
                            spread_counts_node(rule, vmi, n, &self.draining, source_model, &keys)
                        })
                        .collect();
                    let mut domains = HashMap::new();
                    for key in &keys {
                        let values: std::collections::HashSet<&String> = self
                            .nodes
                            .iter()
                            .zip(&counted)
                            .filter(|(_, c)| **c)
                            .filter_map(|(n, _)| labels(n).get(*key))
                            .collect();
                        domains.insert(key.to_string(), values.len());
                    }
                    self.tables.push(DomainTable { counted, domains });
                    self.table_ids.insert(table_key, self.tables.len() - 1);
                    self.tables.len() - 1
                }
            };
            let state_key = format!(
                "{table}|{}|{}|{}|{}|{}",
                rule.selector.key,
                rule.topology_key,
                rule.max_skew,
                rule.min_domains,
                rule.self_match
            );
            let id = match self.spread_ids.get(&state_key) {
                Some(&id) => id,
                None => {
                    let mut state = SpreadState {
                        rule: rule.clone(),
                        table,
                        counts: HashMap::new(),
                        histogram: BTreeMap::new(),
                    };
                    for &i in self
                        .selected_on
                        .get(&rule.selector.key)
                        .map_or(&[][..], Vec::as_slice)
                    {
                        work::step(1);
                        let here = self.used[i]
                            .matching
                            .get(&rule.selector.key)
                            .copied()
                            .unwrap_or(0);
                        if self.tables[table].counted[i]
                            && here > 0
                            && let Some(d) = labels(&self.nodes[i]).get(&rule.topology_key)
                        {
                            *state.counts.entry(d.clone()).or_insert(0) += here;
                        }
                    }
                    for count in state.counts.values() {
                        *state.histogram.entry(*count).or_default() += 1;
                    }
                    self.spread.push(state);
                    let id = self.spread.len() - 1;
                    self.spread_ids.insert(state_key, id);
                    self.spread_by_selector
                        .entry(rule.selector.key.clone())
                        .or_default()
                        .push(id);
                    id
                }
            };
            ids.push(id);
        }
        ids
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
        spread
            .iter()
            .find_map(|&s| {
                let state = &self.spread[s];
                state.unfit(&self.nodes[i], &self.tables[state.table])
            })
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
        let key = Self::signature(pod.vmi, source_model.as_ref());
        if !self.classes.contains_key(&key) {
            let class = self.build_class(pod.vmi, source_model.as_ref());
            self.classes.insert(key.clone(), class);
        }
        let spread = self.spread_states(&key, pod.vmi, source_model.as_ref());
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
        // up to date with only the nodes placed on since (spread constraints depend on every
        // placement, so those are recounted): a drain that fills the cluster stays linear.
        let memo_key = format!("{key}|{spread:?}|{:?}", pod.requests);
        let placed = self.placed.len();
        let memo = match self.failures.remove(&memo_key) {
            Some(mut memo) if spread.is_empty() => {
                let mut seen = std::collections::HashSet::new();
                for &i in &self.placed[memo.placed..] {
                    work::step(1);
                    if !seen.insert(i) || class.reasons[i].is_some() {
                        continue;
                    }
                    for u in &memo.reasons[i] {
                        if let Some(c) = memo.counts.get_mut(u) {
                            *c -= 1;
                        }
                    }
                    memo.reasons[i] = self.dynamic_unfit(i, pod, &spread);
                    for u in &memo.reasons[i] {
                        *memo.counts.entry(u.clone()).or_default() += 1;
                    }
                }
                memo.counts.retain(|_, c| *c > 0);
                memo.placed = placed;
                memo
            }
            Some(memo) if memo.placed == placed => memo,
            _ => {
                let mut memo = Unplaceable {
                    placed,
                    reasons: Vec::with_capacity(self.nodes.len()),
                    counts: BTreeMap::new(),
                };
                for i in 0..self.nodes.len() {
                    work::step(1);
                    let why = match &class.reasons[i] {
                        Some(u) => vec![u.clone()],
                        None => self.dynamic_unfit(i, pod, &spread),
                    };
                    for u in &why {
                        *memo.counts.entry(u.clone()).or_default() += 1;
                    }
                    memo.reasons.push(why);
                }
                memo
            }
        };
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
        self.failures.insert(memo_key, memo);
        let mut preemption_useless = true;
        let mut cpu_model = None;
        let mut cpu_features = Vec::new();
        let mut short: Vec<String> = Vec::new();
        let mut phrases: BTreeMap<String, u32> = BTreeMap::new();
        if sources > 0 {
            phrases.insert("is the source".into(), sources);
        }
        for (u, n) in &counts {
            match u {
                Unfit::Insufficient(r) => {
                    preemption_useless = false;
                    short.push(r.clone());
                }
                Unfit::TooManyPods => {
                    preemption_useless = false;
                    short.push("pods".into());
                }
                Unfit::Spread => preemption_useless = false,
                // The source's host model or a feature it needs: the same way out.
                Unfit::CpuModel(_) | Unfit::CpuFeature(_) => {
                    if let Some(cpu) = &source_model {
                        cpu_model = (!cpu.model.is_empty()).then(|| cpu.model.clone());
                        cpu_features = cpu.features.clone();
                    }
                }
                _ => {}
            }
            *phrases.entry(u.phrase()).or_default() += n;
        }
        short.sort();
        short.dedup();
        let summary: Vec<String> = phrases
            .iter()
            .map(|(why, n)| format!("{n} {why}"))
            .collect();
        Err(NoFit {
            message: format!(
                "no node can take {}: 0/{} nodes fit ({})",
                pod.describe(&short),
                self.nodes.len(),
                summary.join(", ")
            ),
            preemption_useless,
            cpu_model,
            cpu_features,
            short,
        })
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
        self.placed.push(i);
        let before = free_memory(&self.allocatable[i], &self.used[i]);
        for (r, q) in &pod.requests {
            *self.used[i].requested.entry(r.clone()).or_default() += q;
        }
        self.used[i].pods += 1;
        let after = free_memory(&self.allocatable[i], &self.used[i]);
        for class in self.classes.values_mut() {
            work::step(1);
            let (t, w) = class.score[i];
            if class.fitting.remove(&(t, w, before, Reverse(i))) {
                class.fitting.insert((t, w, after, Reverse(i)));
            }
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
            for &s in self
                .spread_by_selector
                .get(&key)
                .map_or(&[][..], Vec::as_slice)
            {
                work::step(1);
                let state = &mut self.spread[s];
                if self.tables[state.table].counted[i]
                    && let Some(d) = labels(&self.nodes[i]).get(&state.rule.topology_key)
                {
                    state.bump(d);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::scheduling::{SpreadSelector, spread_selectors};
    use serde_json::json;

    /// The naive search the index replaces: every filter on every node for every VM, the
    /// spread domains counted afresh each time, the best node by (score, free memory, first).
    fn naive<'a>(
        pod: &TargetPod,
        source: &str,
        nodes: &'a [Node],
        draining: &[String],
        usage: &[NodeUsage],
    ) -> Result<&'a str, String> {
        let vmi = pod.vmi;
        let source_model = nodes
            .iter()
            .find(|n| node_name(n) == source)
            .and_then(HostCpu::of);
        let source_model = source_model.as_ref();
        let rules = spread_rules(vmi, "DoNotSchedule");
        let keys: Vec<&str> = rules.iter().map(|r| r.topology_key.as_str()).collect();
        let domains: Vec<HashMap<String, i64>> = rules
            .iter()
            .map(|rule| {
                let mut counts: HashMap<String, i64> = HashMap::new();
                for (i, n) in nodes.iter().enumerate() {
                    if spread_counts_node(rule, vmi, n, draining, source_model, &keys)
                        && let Some(d) = labels(n).get(&rule.topology_key)
                    {
                        *counts.entry(d.clone()).or_default() += usage[i]
                            .matching
                            .get(&rule.selector.key)
                            .copied()
                            .unwrap_or(0);
                    }
                }
                counts
            })
            .collect();
        let mut unfit: BTreeMap<String, u32> = BTreeMap::new();
        let mut short: Vec<String> = Vec::new();
        let mut best: Option<(&str, Rank)> = None;
        for (i, n) in nodes.iter().enumerate() {
            let name = node_name(n);
            if name == source {
                *unfit.entry("is the source".into()).or_default() += 1;
                continue;
            }
            let mut why: Vec<Unfit> = static_fit(vmi, n, draining, source_model)
                .into_iter()
                .collect();
            if why.is_empty() {
                why = insufficient(
                    &pod.requests,
                    &allocatable(n),
                    &usage[i].requested,
                    usage[i].pods,
                );
            }
            if why.is_empty() {
                why = rules
                    .iter()
                    .zip(&domains)
                    .find_map(|(rule, counts)| {
                        let d = labels(n).get(&rule.topology_key);
                        let here = d.and_then(|d| counts.get(d)).copied().unwrap_or(0);
                        spread_unfit(
                            rule,
                            d.map(String::as_str),
                            here,
                            counts.values().min().copied(),
                            counts.len(),
                        )
                    })
                    .into_iter()
                    .collect();
            }
            if why.is_empty() {
                let rank = (
                    -i64::from(intolerable_prefer_no_schedule(&vmi.spec.tolerations, n)),
                    preferred_affinity_weight(vmi, n),
                    free_memory(&allocatable(n), &usage[i]),
                    Reverse(i),
                );
                if best.is_none_or(|(_, b)| rank > b) {
                    best = Some((name, rank));
                }
            }
            for u in why {
                if let Unfit::Insufficient(r) = &u
                    && !short.contains(r)
                {
                    short.push(r.clone());
                }
                *unfit.entry(u.phrase()).or_default() += 1;
            }
        }
        match best {
            Some((target, _)) => Ok(target),
            None => {
                let summary: Vec<String> =
                    unfit.iter().map(|(why, n)| format!("{n} {why}")).collect();
                Err(format!(
                    "no node can take {}: 0/{} nodes fit ({})",
                    pod.describe(&short),
                    nodes.len(),
                    summary.join(", ")
                ))
            }
        }
    }

    /// xorshift: deterministic variety without a dependency.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    fn vmi(v: serde_json::Value) -> VirtualMachineInstance {
        serde_json::from_value(v).unwrap()
    }

    fn node(v: serde_json::Value) -> Node {
        serde_json::from_value(v).unwrap()
    }

    fn pod<'v>(vmi: &'v VirtualMachineInstance, requests: &[(&str, i128)]) -> TargetPod<'v> {
        TargetPod {
            vmi,
            requests: requests.iter().map(|(r, q)| (r.to_string(), *q)).collect(),
            pinned_cpu: None,
        }
    }

    /// Places the pod in the naive state too.
    fn consume_naive(usage: &mut NodeUsage, pod: &TargetPod, selectors: &[SpreadSelector]) {
        for (r, q) in &pod.requests {
            *usage.requested.entry(r.clone()).or_default() += q;
        }
        usage.pods += 1;
        let own = launcher_labels(pod.vmi);
        for s in selectors {
            if s.matches(pod.vmi.namespace(), &own) {
                *usage.matching.entry(s.key.clone()).or_default() += 1;
            }
        }
    }

    /// A random case: nodes (models, racks, zones, taints, cordons, resources), one drained,
    /// 30 VMIs (tolerations, selectors, CPU models, affinities, spread constraints) and what
    /// each node holds.
    struct Case {
        nodes: Vec<Node>,
        draining: Vec<String>,
        vmis: Vec<VirtualMachineInstance>,
        selectors: Vec<SpreadSelector>,
        usage: Vec<NodeUsage>,
        by_name: BTreeMap<String, NodeUsage>,
    }

    const GI: i128 = 1 << 30;

    fn random_case(rng: &mut Rng) -> Case {
        let models = ["A", "B"];
        let node_count = 2 + rng.below(12) as usize;
        let nodes: Vec<Node> = (0..node_count)
            .map(|i| {
                let model = models[rng.below(2) as usize];
                let mut labels = json!({
                    "kubevirt.io/schedulable": "true",
                    format!("host-model-cpu.node.kubevirt.io/{model}"): "true",
                    format!("cpu-model-migration.node.kubevirt.io/{model}"): "true",
                    "rack": format!("r{}", rng.below(3)),
                });
                if rng.below(6) != 0 {
                    labels["kubernetes.io/hostname"] = json!(format!("n{i}"));
                }
                if rng.below(5) != 0 {
                    labels["zone"] = json!(format!("z{}", rng.below(3)));
                }
                if rng.below(3) == 0 {
                    labels["cpu-model-migration.node.kubevirt.io/A"] = json!("true");
                }
                if rng.below(3) == 0 {
                    labels["host-model-required-features.node.kubevirt.io/vmx"] = json!("true");
                }
                if rng.below(4) != 0 {
                    labels["cpu-feature.node.kubevirt.io/vmx"] = json!("true");
                }
                if rng.below(2) == 0 {
                    labels["cpu-model.node.kubevirt.io/Haswell"] = json!("true");
                }
                let mut taints = vec![];
                if rng.below(4) == 0 {
                    taints.push(json!({"key": "gpu", "effect": "NoSchedule"}));
                }
                if rng.below(4) == 0 {
                    taints.push(json!({"key": "old", "effect": "PreferNoSchedule"}));
                }
                if rng.below(6) == 0 {
                    taints.push(json!({"key": "evict", "value": "x", "effect": "NoExecute"}));
                }
                let mut allocatable = json!({
                    "memory": format!("{}Gi", 1 + rng.below(12)),
                    "cpu": format!("{}", 1 + rng.below(8)),
                    "pods": format!("{}", 1 + rng.below(8)),
                });
                if rng.below(3) == 0 {
                    allocatable["nvidia.com/gpu"] = json!(format!("{}", rng.below(3)));
                }
                if rng.below(5) == 0 {
                    allocatable.as_object_mut().unwrap().remove("cpu");
                }
                node(json!({
                    "metadata": {"name": format!("n{i}"), "labels": labels},
                    "spec": {"taints": taints, "unschedulable": rng.below(8) == 0},
                    "status": {"allocatable": allocatable}}))
            })
            .collect();
        let draining = vec![format!("n{}", rng.below(node_count as u64))];
        let vmis: Vec<VirtualMachineInstance> = (0..30)
            .map(|v| {
                let mut spec = json!({"domain": {}});
                if rng.below(3) == 0 {
                    spec["tolerations"] = json!([{"key": "gpu", "operator": "Exists"}]);
                }
                if rng.below(5) == 0 {
                    spec["tolerations"] = json!([{"operator": "Exists"}]);
                }
                if rng.below(4) == 0 {
                    spec["nodeSelector"] = json!({"rack": format!("r{}", rng.below(3))});
                }
                if rng.below(4) == 0 {
                    spec["domain"]["cpu"] = json!({"model": "Haswell"});
                }
                if rng.below(3) == 0 {
                    spec["affinity"] = json!({"nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 1 + rng.below(50), "preference": {"matchExpressions": [
                                {"key": "rack", "operator": "In", "values": [format!("r{}", rng.below(3))]}]}}],
                        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "rack", "operator": "NotIn", "values": [format!("r{}", rng.below(3))]}]}]}}});
                }
                if rng.below(2) == 0 {
                    let key = ["zone", "rack", "kubernetes.io/hostname"][rng.below(3) as usize];
                    let mut c = json!({"maxSkew": 1 + rng.below(2), "topologyKey": key,
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {"matchLabels": {"app": format!("a{}", rng.below(2))}}});
                    if rng.below(3) == 0 {
                        c["minDomains"] = json!(3);
                    }
                    if rng.below(4) == 0 {
                        c["nodeTaintsPolicy"] = json!("Honor");
                    }
                    spec["topologySpreadConstraints"] = json!([c]);
                }
                vmi(json!({"metadata": {"name": format!("v{v}"), "namespace": "ns",
                    "uid": format!("u{v}"), "labels": {"app": format!("a{}", rng.below(2))}},
                    "spec": spec}))
            })
            .collect();
        let selectors = spread_selectors(&vmis);
        // Pods already on the nodes: requests, counts and spread matches.
        let usage: Vec<NodeUsage> = nodes
            .iter()
            .map(|_| {
                let mut u = NodeUsage::default();
                u.requested
                    .insert("memory".into(), i128::from(rng.below(3)) * GI);
                u.requested
                    .insert("cpu".into(), i128::from(rng.below(2000)));
                u.pods = i128::from(rng.below(3));
                for s in &selectors {
                    u.matching.insert(s.key.clone(), rng.below(3) as i64);
                }
                u
            })
            .collect();
        let by_name: BTreeMap<String, NodeUsage> = nodes
            .iter()
            .zip(&usage)
            .map(|(n, u)| (node_name(n).to_string(), u.clone()))
            .collect();
        Case {
            nodes,
            draining,
            vmis,
            selectors,
            usage,
            by_name,
        }
    }

    /// A random target pod of `vmi` and its source node.
    fn random_pod<'v>(
        rng: &mut Rng,
        vmi: &'v VirtualMachineInstance,
        node_count: usize,
    ) -> (TargetPod<'v>, String) {
        let source = format!("n{}", rng.below(node_count as u64));
        let mut requests = vec![
            ("memory", (1 + i128::from(rng.below(3))) * GI),
            ("cpu", 100 * i128::from(rng.below(15))),
            ("devices.kubevirt.io/kvm", 0),
        ];
        if rng.below(4) == 0 {
            requests.push(("nvidia.com/gpu", 1));
        }
        (pod(vmi, &requests), source)
    }

    #[test]
    fn the_indexed_search_gives_exactly_the_naive_answers() {
        // How often each path and each rule decided something, over all seeds.
        let (mut placed, mut failed) = (0, 0);
        let mut seen: BTreeMap<&str, u32> = BTreeMap::new();
        for seed in 1..=40u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let Case {
                nodes,
                draining,
                vmis,
                selectors,
                mut usage,
                by_name,
            } = random_case(&mut rng);
            let node_count = nodes.len();
            let mut search = TargetSearch::new(
                &nodes,
                &draining,
                &by_name,
                SelectorIndex::new(selectors.clone()),
            );
            for (v, vmi) in vmis.iter().enumerate() {
                let (target_pod, source) = random_pod(&mut rng, vmi, node_count);
                let expected =
                    naive(&target_pod, &source, &nodes, &draining, &usage).map(str::to_string);
                let got = search
                    .find(&target_pod, &source)
                    .map(|t| t.node)
                    .map_err(|e| e.message);
                assert_eq!(got, expected, "seed {seed}, vmi {v}");
                if let Err(message) = &got {
                    failed += 1;
                    for rule in [
                        "insufficient cpu",
                        "insufficient memory",
                        "insufficient nvidia.com/gpu",
                        "too many pods",
                        "didn't match pod topology spread constraints,",
                        "(missing required label)",
                        "untolerated taint evict=x:NoExecute",
                        "no CPU feature vmx",
                        "required node affinity not matched",
                    ] {
                        if message.contains(rule) {
                            *seen.entry(rule).or_default() += 1;
                        }
                    }
                }
                if let Ok(target) = got {
                    placed += 1;
                    search.consume(&target, &target_pod);
                    let i = nodes.iter().position(|n| node_name(n) == target).unwrap();
                    consume_naive(&mut usage[i], &target_pod, &selectors);
                }
            }
        }
        assert!(
            placed > 200 && failed > 100,
            "{placed} placed, {failed} failed"
        );
        assert_eq!(seen.len(), 9, "every rule decided some search: {seen:?}");
    }

    /// A search kept across changes (another node drained, a node cordoned and relabelled,
    /// what a node holds replaced, a selector it may drop) answers exactly as the naive search
    /// over the changed state.
    #[test]
    fn a_kept_search_told_what_changed_answers_as_the_naive_one() {
        let (mut placed, mut failed, mut fell_back, mut asked_again) = (0, 0, 0, 0);
        for seed in 1..=200u64 {
            let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
            let Case {
                mut nodes,
                mut draining,
                vmis,
                selectors,
                mut usage,
                by_name,
            } = random_case(&mut rng);
            let node_count = nodes.len();
            let hashed: HashMap<String, NodeUsage> = by_name.into_iter().collect();
            let mut kept = TargetSearch::owned(
                nodes.clone(),
                &hashed,
                SelectorIndex::new(selectors.clone()),
            );
            kept.set_draining(draining.clone());
            let mut last: Option<(TargetPod, String)> = None;
            for (v, vmi) in vmis.iter().enumerate() {
                match v {
                    10 => {
                        draining = vec![format!("n{}", rng.below(node_count as u64))];
                        kept.set_draining(draining.clone());
                    }
                    15 | 22 => {
                        let i = rng.below(node_count as u64) as usize;
                        let rack = format!("r{}", rng.below(3));
                        let change = |n: &mut Node| {
                            let spec = n.spec.get_or_insert_with(Default::default);
                            spec.unschedulable = Some(!spec.unschedulable.unwrap_or(false));
                            n.metadata
                                .labels
                                .get_or_insert_with(Default::default)
                                .insert("rack".into(), rack.clone());
                        };
                        change(&mut nodes[i]);
                        kept.update_node(&format!("n{i}"), change);
                    }
                    12 | 18 | 25 | 27 => {
                        let i = rng.below(node_count as u64) as usize;
                        let mut u = NodeUsage::default();
                        u.requested
                            .insert("memory".into(), i128::from(rng.below(4)) * GI);
                        u.pods = i128::from(rng.below(2));
                        for s in &selectors {
                            u.matching.insert(s.key.clone(), rng.below(3) as i64);
                        }
                        usage[i] = u.clone();
                        kept.set_usage(&format!("n{i}"), u);
                        // The VMI before asks again: what the search kept for it (its
                        // spread counts) follows the change.
                        if let Some((pod, source)) = &last {
                            let expected =
                                naive(pod, source, &nodes, &draining, &usage).map(str::to_string);
                            let got = kept
                                .find(pod, source)
                                .map(|t| t.node)
                                .map_err(|e| e.message);
                            assert_eq!(got, expected, "seed {seed}, vmi {} again", v - 1);
                            asked_again += 1;
                        }
                    }
                    _ => {}
                }
                let (target_pod, source) = random_pod(&mut rng, vmi, node_count);
                let expected =
                    naive(&target_pod, &source, &nodes, &draining, &usage).map(str::to_string);
                // Every fifth VMI asks for a label no node has, which the search may drop.
                let mut pooled = vmi.clone();
                let asked = if v % 5 == 4 {
                    pooled
                        .spec
                        .node_selector
                        .insert("pool".into(), "blue".into());
                    kept.set_fallback(Some("pool".into()));
                    fell_back += 1;
                    TargetPod {
                        vmi: &pooled,
                        requests: target_pod.requests.clone(),
                        pinned_cpu: None,
                    }
                } else {
                    target_pod.clone()
                };
                let got = kept
                    .find(&asked, &source)
                    .map(|t| t.node)
                    .map_err(|e| e.message);
                kept.set_fallback(None);
                assert_eq!(got, expected, "seed {seed}, vmi {v}");
                match got {
                    Ok(target) => {
                        placed += 1;
                        kept.consume(&target, &target_pod);
                        let i = nodes.iter().position(|n| node_name(n) == target).unwrap();
                        consume_naive(&mut usage[i], &target_pod, &selectors);
                    }
                    Err(_) => failed += 1,
                }
                last = Some((target_pod, source));
            }
        }
        assert!(asked_again > 500, "{asked_again} asked again");
        assert!(
            placed > 1000 && failed > 500 && fell_back > 1000,
            "{placed} placed, {failed} failed, {fell_back} fell back"
        );
    }

    fn gpu_cluster() -> Vec<Node> {
        let n = |name: &str, extra: serde_json::Value, taints: serde_json::Value| {
            let mut alloc = json!({"memory": "64Gi", "cpu": "16", "pods": "110"});
            for (k, v) in extra.as_object().unwrap() {
                alloc[k] = v.clone();
            }
            node(
                json!({"metadata": {"name": name, "labels": {"kubevirt.io/schedulable": "true",
                "zone": name.trim_start_matches("n").chars().next().map(|c| format!("z{c}")).unwrap()}},
                "spec": {"taints": taints}, "status": {"allocatable": alloc}}),
            )
        };
        vec![
            n("n1", json!({"nvidia.com/gpu": "1"}), json!([])),
            n("n2", json!({}), json!([])),
            n(
                "n3",
                json!({"nvidia.com/gpu": "2"}),
                json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
            ),
            n("n4", json!({"nvidia.com/gpu": "1", "cpu": "1"}), json!([])),
        ]
    }

    #[test]
    fn extended_resources_and_cpu_are_counted_per_node() {
        let nodes = gpu_cluster();
        let v = vmi(json!({"metadata": {"name": "g", "namespace": "ns"}}));
        let mut search = TargetSearch::new(&nodes, &[], &BTreeMap::new(), SelectorIndex::default());
        let gpu = pod(
            &v,
            &[("memory", 1 << 30), ("cpu", 2000), ("nvidia.com/gpu", 1)],
        );
        // n1 is the only untainted node with a GPU and the cpu (n4 has 1 cpu).
        assert_eq!(search.find(&gpu, "n9").map(|t| t.node), Ok("n1".into()));
        search.consume("n1", &gpu);
        let err = search.find(&gpu, "n9").unwrap_err();
        assert!(!err.preemption_useless);
        assert_eq!(err.short, ["cpu", "nvidia.com/gpu"]);
        assert!(
            err.fix()
                .contains("free nvidia.com/gpu on a fitting node or add one")
        );
        let err = err.message;
        assert_eq!(
            err,
            "no node can take a 1.0 GiB target pod with 2 cpu, 1 nvidia.com/gpu: 0/4 nodes fit \
             (1 insufficient cpu, 2 insufficient nvidia.com/gpu, 1 untolerated taint dedicated=gpu:NoSchedule)"
        );
    }

    #[test]
    fn the_pod_count_and_unreported_resources() {
        let nodes = vec![
            node(
                json!({"metadata": {"name": "full", "labels": {"kubevirt.io/schedulable": "true"}},
                "status": {"allocatable": {"memory": "64Gi", "cpu": "8", "pods": "2"}}}),
            ),
            node(
                json!({"metadata": {"name": "bare", "labels": {"kubevirt.io/schedulable": "true"}},
                "status": {"allocatable": {"memory": "8Gi"}}}),
            ),
        ];
        let usage = BTreeMap::from([(
            "full".to_string(),
            NodeUsage {
                pods: 2,
                ..NodeUsage::default()
            },
        )]);
        let v = vmi(json!({"metadata": {"name": "a", "namespace": "ns"}}));
        let mut search = TargetSearch::new(&nodes, &[], &usage, SelectorIndex::default());
        let p = pod(&v, &[("memory", 1 << 30), ("cpu", 500)]);
        let found = search.find(&p, "elsewhere").unwrap();
        assert_eq!(found.node, "bare", "full has 2 of 2 pods");
        assert_eq!(
            found.notes,
            ["bare reports no allocatable cpu, pods, so that was not checked"]
        );
    }

    #[test]
    fn prefer_no_schedule_and_preferred_affinity_only_order_the_nodes() {
        let nodes = vec![
            node(
                json!({"metadata": {"name": "big-tainted", "labels": {"kubevirt.io/schedulable": "true", "ssd": "yes"}},
                "spec": {"taints": [{"key": "maintenance", "effect": "PreferNoSchedule"}]},
                "status": {"allocatable": {"memory": "256Gi", "pods": "110"}}}),
            ),
            node(
                json!({"metadata": {"name": "small", "labels": {"kubevirt.io/schedulable": "true"}},
                "status": {"allocatable": {"memory": "16Gi", "pods": "110"}}}),
            ),
            node(
                json!({"metadata": {"name": "small-ssd", "labels": {"kubevirt.io/schedulable": "true", "ssd": "yes"}},
                "status": {"allocatable": {"memory": "8Gi", "pods": "110"}}}),
            ),
        ];
        let plain = vmi(json!({"metadata": {"name": "a", "namespace": "ns"}}));
        let mut search = TargetSearch::new(&nodes, &[], &BTreeMap::new(), SelectorIndex::default());
        let p = pod(&plain, &[("memory", 4 << 30)]);
        assert_eq!(
            search.find(&p, "x").unwrap().node,
            "small",
            "most free memory untainted"
        );
        let ssd = vmi(
            json!({"metadata": {"name": "b", "namespace": "ns"}, "spec": {"affinity": {"nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]}}]}}}}),
        );
        let p = pod(&ssd, &[("memory", 4 << 30)]);
        let found = search.find(&p, "x").unwrap();
        assert_eq!(found.node, "small-ssd");
        assert_eq!(found.notes, ["preferred node affinity matched (weight 10)"]);
        // Once the untainted nodes are full, the PreferNoSchedule node is used, and said so.
        let huge = pod(&plain, &[("memory", 20 << 30)]);
        let found = search.find(&huge, "x").unwrap();
        assert_eq!(found.node, "big-tainted");
        assert!(
            found.notes[0].contains("1 PreferNoSchedule taint(s)"),
            "{:?}",
            found.notes
        );
        // A toleration of the taint (any effect) makes it the best node again.
        let tolerant = vmi(json!({"metadata": {"name": "c", "namespace": "ns"},
            "spec": {"tolerations": [{"key": "maintenance", "operator": "Exists"}]}}));
        let p = pod(&tolerant, &[("memory", 4 << 30)]);
        assert_eq!(search.find(&p, "x").unwrap().node, "big-tainted");
    }

    #[test]
    fn topology_spread_do_not_schedule_excludes_the_crowded_domain() {
        let zone = |name: &str, z: Option<&str>| {
            let mut l = json!({"kubevirt.io/schedulable": "true"});
            if let Some(z) = z {
                l["zone"] = json!(z);
            }
            node(json!({"metadata": {"name": name, "labels": l},
                "status": {"allocatable": {"memory": if name == "a1" { "128Gi" } else { "64Gi" }}}}))
        };
        let nodes = vec![
            zone("a1", Some("a")),
            zone("b1", Some("b")),
            zone("nolabel", None),
            zone("src", Some("c")),
        ];
        let v = vmi(
            json!({"metadata": {"name": "web-1", "namespace": "ns", "labels": {"app": "web"}},
            "spec": {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}]}}),
        );
        let selectors = spread_selectors([&v]);
        let key = selectors[0].key.clone();
        let count = |n: i64| NodeUsage {
            matching: BTreeMap::from([(key.clone(), n)]),
            ..NodeUsage::default()
        };
        // Zone a already has 2 web pods, b has 1, c (the source) has 1.
        let usage = BTreeMap::from([
            ("a1".to_string(), count(2)),
            ("b1".to_string(), count(1)),
            ("src".to_string(), count(1)),
        ]);
        let mut search = TargetSearch::new(&nodes, &[], &usage, SelectorIndex::new(selectors));
        let p = pod(&v, &[("memory", 1 << 30)]);
        // a1 has the most memory, but 2 + 1 - 1 = 2 > maxSkew 1.
        assert_eq!(search.find(&p, "src").unwrap().node, "b1");
        search.consume("b1", &p);
        let err = search.find(&p, "src").unwrap_err().message;
        assert!(
            err.ends_with(
                "(2 didn't match pod topology spread constraints, \
                 1 didn't match pod topology spread constraints (missing required label), 1 is the source)"
            ) && err.contains("0/4 nodes fit"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_host_model_feature_is_explained_with_its_label() {
        let n = |name: &str, extra: serde_json::Value| {
            let mut l = json!({"kubevirt.io/schedulable": "true",
                "host-model-cpu.node.kubevirt.io/Icelake-Server": "true",
                "cpu-model-migration.node.kubevirt.io/Icelake-Server": "true"});
            for (k, v) in extra.as_object().unwrap() {
                l[k] = v.clone();
            }
            node(json!({"metadata": {"name": name, "labels": l},
                "status": {"allocatable": {"memory": "64Gi", "pods": "110"}}}))
        };
        let nodes = vec![
            n(
                "src",
                json!({"host-model-required-features.node.kubevirt.io/wbnoinvd": "true"}),
            ),
            n("other", json!({})),
        ];
        let v = vmi(json!({"metadata": {"name": "a", "namespace": "ns"}}));
        let mut search = TargetSearch::new(&nodes, &[], &BTreeMap::new(), SelectorIndex::default());
        let err = search
            .find(&pod(&v, &[("memory", 1 << 30)]), "src")
            .unwrap_err();
        assert!(err.preemption_useless);
        assert!(
            err.explained().ends_with(
                "requires its target node to carry cpu-model-migration.node.kubevirt.io/Icelake-Server=true \
                 (the source's model) and the features that model requires there: \
                 cpu-feature.node.kubevirt.io/wbnoinvd=true"
            ),
            "{}",
            err.explained()
        );
        assert!(
            err.message
                .contains("1 no CPU feature wbnoinvd (required by the source's host model)")
        );
        assert!(
            err.fix()
                .starts_with("keep a node with CPU model Icelake-Server schedulable")
        );
    }

    #[test]
    fn schedule_anyway_spread_is_said_not_weighed() {
        let nodes = gpu_cluster();
        let v = vmi(
            json!({"metadata": {"name": "w", "namespace": "ns", "labels": {"app": "w"}},
            "spec": {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "w"}}}]}}),
        );
        let mut search = TargetSearch::new(&nodes, &[], &BTreeMap::new(), SelectorIndex::default());
        let found = search.find(&pod(&v, &[("memory", 1 << 30)]), "x").unwrap();
        assert_eq!(
            found.notes,
            [
                "its ScheduleAnyway topology spread (zone) is not weighed here; the scheduler may prefer a less crowded domain"
            ]
        );
    }

    #[test]
    fn a_search_that_finds_nothing_is_explained_once_until_the_next_placement() {
        let nodes = gpu_cluster();
        let v = vmi(json!({"metadata": {"name": "g", "namespace": "ns"}}));
        let mut search = TargetSearch::new(&nodes, &[], &BTreeMap::new(), SelectorIndex::default());
        let p = pod(&v, &[("memory", 1 << 30), ("nvidia.com/gpu", 5)]);
        let (first, w1) = work::count(|| search.find(&p, "x"));
        let (again, w2) = work::count(|| search.find(&p, "x"));
        assert_eq!(first, again);
        assert!(w2 < w1, "{w2} < {w1}");
    }
}
