//! Where would the scheduler put a migration target pod? The node with the most free memory
//! among those that fit statically (taints, selectors, affinity, CPU model), with free memory
//! consumed as VMs are placed.
//!
//! Naively that is every node for every VM: O(VMs × nodes), which is quadratic when a drain
//! (or a rolling maintenance) covers a good part of the fleet. But the static fit depends on
//! the VMI only through its *scheduling signature* (tolerations, node selector, required node
//! affinity, host-model CPU and the source's CPU model), and a fleet has few of those. So the
//! fit of every node is computed once per signature, the fitting nodes are kept ordered by
//! free memory, and a VM's target is the first of them: O(signatures × nodes + VMs × log
//! nodes). The answer, and the explanation when no node fits, are exactly the naive ones.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::index::work;
use super::scheduling::{
    Unfit, host_model, node_name, required_node_affinity, static_fit, uses_host_model,
};
use crate::model::{Node, VirtualMachineInstance};

/// One scheduling signature's view of the nodes.
struct Class {
    /// Why each node does not fit statically (None: it fits), by node position.
    reasons: Vec<Option<Unfit>>,
    /// The statically fitting nodes, ordered by free memory (most first), then position.
    fitting: BTreeSet<(i128, Reverse<usize>)>,
    /// How many nodes fail for each reason (the scheduler-like summary).
    counts: BTreeMap<String, u32>,
}

/// Target selection over a set of nodes, with free memory consumed as VMs are placed.
pub struct TargetSearch<'a> {
    nodes: &'a [Node],
    draining: &'a [String],
    /// Node name → its positions (a name should be unique; nothing breaks if it is not).
    positions: HashMap<&'a str, Vec<usize>>,
    /// Free memory by node position.
    free: Vec<i128>,
    classes: HashMap<String, Class>,
}

impl<'a> TargetSearch<'a> {
    /// `free` gives each node's free memory by name (nodes it does not name have none).
    pub fn new(nodes: &'a [Node], draining: &'a [String], free: &BTreeMap<String, i128>) -> Self {
        let mut positions: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            work::step(1);
            positions.entry(node_name(n)).or_default().push(i);
        }
        let free = nodes
            .iter()
            .map(|n| free.get(node_name(n)).copied().unwrap_or(0))
            .collect();
        TargetSearch {
            nodes,
            draining,
            positions,
            free,
            classes: HashMap::new(),
        }
    }

    fn signature(vmi: &VirtualMachineInstance, source_model: Option<&str>) -> String {
        let required = required_node_affinity(vmi);
        // Serialising plain data cannot fail; an empty key would only merge classes that
        // the fit check then tells apart anyway, so fall back to the VMI's own identity.
        serde_json::to_string(&(
            &vmi.spec.tolerations,
            &vmi.spec.node_selector,
            required,
            uses_host_model(vmi),
            source_model,
        ))
        .unwrap_or_else(|_| format!("{}/{}", vmi.namespace(), vmi.name()))
    }

    fn class(&mut self, vmi: &VirtualMachineInstance, source_model: Option<&str>) -> &Class {
        let key = Self::signature(vmi, source_model);
        let (nodes, draining, free) = (self.nodes, self.draining, &self.free);
        self.classes.entry(key).or_insert_with(|| {
            work::step(nodes.len());
            let reasons: Vec<Option<Unfit>> = nodes
                .iter()
                .map(|n| static_fit(vmi, n, draining, source_model))
                .collect();
            let mut counts: BTreeMap<String, u32> = BTreeMap::new();
            let mut fitting = BTreeSet::new();
            for (i, reason) in reasons.iter().enumerate() {
                match reason {
                    Some(u) => *counts.entry(u.phrase()).or_default() += 1,
                    None => {
                        fitting.insert((free[i], Reverse(i)));
                    }
                }
            }
            Class {
                reasons,
                fitting,
                counts,
            }
        })
    }

    /// The node a target pod of `vmi` (running on `source`, needing `pod_memory`) would get:
    /// the fitting node with the most free memory (the first such node on a tie), or why
    /// there is none, as the scheduler would summarise it.
    pub fn find(
        &mut self,
        vmi: &VirtualMachineInstance,
        source: &str,
        pod_memory: u64,
    ) -> Result<&'a str, String> {
        let nodes = self.nodes;
        let source_positions: &[usize] = self.positions.get(source).map_or(&[], Vec::as_slice);
        let source_model = source_positions
            .first()
            .and_then(|&i| host_model(&nodes[i]));
        // Borrowed apart from `self.class` below.
        let source_positions = source_positions.to_vec();
        let class = self.class(vmi, source_model);
        let needed = i128::from(pod_memory);
        // The best fitting node that is not a source node (a name may repeat).
        let best = class.fitting.iter().rev().find(|(_, Reverse(i))| {
            work::step(1);
            node_name(&nodes[*i]) != source
        });
        if let Some(&(free, Reverse(i))) = best
            && free >= needed
        {
            return Ok(node_name(&nodes[i]));
        }
        // Nothing fits: every node is the source, statically unfit, or short of memory. The
        // class's counts hold the static reasons; the source nodes count as "is the source"
        // instead, and every other fitting node is short of memory. (No scan of the nodes:
        // when the cluster is full, every VM of a drain ends here.)
        let mut counts = class.counts.clone();
        let mut memory = class.fitting.len() as u32;
        for &i in &source_positions {
            work::step(1);
            *counts.entry("is the source".into()).or_default() += 1;
            match &class.reasons[i] {
                None => memory = memory.saturating_sub(1),
                Some(u) => {
                    if let Some(c) = counts.get_mut(&u.phrase()) {
                        *c -= 1;
                        if *c == 0 {
                            counts.remove(&u.phrase());
                        }
                    }
                }
            }
        }
        if memory > 0 {
            *counts.entry(Unfit::Memory.phrase()).or_default() += memory;
        }
        let summary: Vec<String> = counts.iter().map(|(why, n)| format!("{n} {why}")).collect();
        Err(format!(
            "no node can take a {} target pod: 0/{} nodes fit ({})",
            crate::render::fmt::bytes(pod_memory),
            nodes.len(),
            summary.join(", ")
        ))
    }

    /// Takes `pod_memory` from `target`'s free memory (a target pod was placed there).
    pub fn consume(&mut self, target: &str, pod_memory: u64) {
        let Some(&i) = self.positions.get(target).and_then(|p| p.first()) else {
            return;
        };
        let before = self.free[i];
        let after = before - i128::from(pod_memory);
        self.free[i] = after;
        for class in self.classes.values_mut() {
            work::step(1);
            if class.fitting.remove(&(before, Reverse(i))) {
                class.fitting.insert((after, Reverse(i)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The naive search the index replaces: every node for every VM.
    fn naive<'a>(
        vmi: &VirtualMachineInstance,
        source: &str,
        pod_memory: u64,
        nodes: &'a [Node],
        draining: &[String],
        free_memory: &BTreeMap<String, i128>,
    ) -> Result<&'a str, String> {
        let source_model = nodes
            .iter()
            .find(|n| node_name(n) == source)
            .and_then(host_model);
        let mut unfit: BTreeMap<String, u32> = BTreeMap::new();
        let mut best: Option<(&str, i128)> = None;
        for n in nodes {
            let name = node_name(n);
            if name == source {
                *unfit.entry("is the source".into()).or_default() += 1;
                continue;
            }
            let free = free_memory.get(name).copied().unwrap_or(0);
            let why = static_fit(vmi, n, draining, source_model)
                .or_else(|| (free < i128::from(pod_memory)).then_some(Unfit::Memory));
            match why {
                Some(u) => *unfit.entry(u.phrase()).or_default() += 1,
                None if best.is_none_or(|(_, f)| free > f) => best = Some((name, free)),
                None => {}
            }
        }
        match best {
            Some((target, _)) => Ok(target),
            None => {
                let summary: Vec<String> =
                    unfit.iter().map(|(why, n)| format!("{n} {why}")).collect();
                Err(format!(
                    "no node can take a {} target pod: 0/{} nodes fit ({})",
                    crate::render::fmt::bytes(pod_memory),
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

    #[test]
    fn the_indexed_search_gives_exactly_the_naive_answers() {
        let models = ["A", "B"];
        for seed in 1..=20u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let node_count = 2 + rng.below(12) as usize;
            let nodes: Vec<Node> = (0..node_count)
                .map(|i| {
                    let model = models[rng.below(2) as usize];
                    let mut labels = json!({
                        format!("host-model-cpu.node.kubevirt.io/{model}"): "true",
                        format!("cpu-model-migration.node.kubevirt.io/{model}"): "true",
                        "zone": format!("z{}", rng.below(2)),
                    });
                    if rng.below(3) == 0 {
                        labels["cpu-model-migration.node.kubevirt.io/A"] = json!("true");
                    }
                    let taints = if rng.below(4) == 0 {
                        json!([{"key": "gpu", "effect": "NoSchedule"}])
                    } else {
                        json!([])
                    };
                    serde_json::from_value(json!({
                        "metadata": {"name": format!("n{i}"), "labels": labels},
                        "spec": {"taints": taints, "unschedulable": rng.below(8) == 0}}))
                    .unwrap()
                })
                .collect();
            let draining = vec![format!("n{}", rng.below(node_count as u64))];
            let mut free: BTreeMap<String, i128> = nodes
                .iter()
                .map(|n| (node_name(n).to_string(), (rng.below(6) as i128) << 30))
                .collect();
            let mut search = TargetSearch::new(&nodes, &draining, &free);
            for v in 0..30 {
                let mut spec = json!({"domain": {}});
                if rng.below(3) == 0 {
                    spec["tolerations"] = json!([{"key": "gpu", "operator": "Exists"}]);
                }
                if rng.below(3) == 0 {
                    spec["nodeSelector"] = json!({"zone": format!("z{}", rng.below(2))});
                }
                if rng.below(4) == 0 {
                    spec["domain"]["cpu"] = json!({"model": "Haswell"});
                }
                let vmi: VirtualMachineInstance = serde_json::from_value(json!({
                    "metadata": {"name": format!("v{v}"), "namespace": "ns"}, "spec": spec}))
                .unwrap();
                let source = format!("n{}", rng.below(node_count as u64));
                let memory = (1 + rng.below(3)) << 30;
                let expected = naive(&vmi, &source, memory, &nodes, &draining, &free);
                let got = search.find(&vmi, &source, memory);
                assert_eq!(got, expected, "seed {seed}, vmi {v}");
                if let Ok(target) = got {
                    search.consume(target, memory);
                    if let Some(f) = free.get_mut(target) {
                        *f -= i128::from(memory);
                    }
                }
            }
        }
    }
}
