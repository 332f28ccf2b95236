//! The indexed search against the naive one (every filter on every node for every VM) on
//! random clusters, fresh and kept across changes; hand-written cases in [`examples`].

mod examples;

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};

use super::class::Rank;
use super::{TargetPod, TargetSearch, free_memory};
use crate::model::{Node, VirtualMachineInstance};
use crate::policy::scheduling::{
    HostCpu, NodeUsage, SelectorIndex, SpreadSelector, Unfit, allocatable, insufficient,
    intolerable_prefer_no_schedule, labels, launcher_labels, node_name, preferred_affinity_weight,
    spread_counts_node, spread_rules, spread_selectors, spread_unfit, static_fit,
};
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
            let summary: Vec<String> = unfit.iter().map(|(why, n)| format!("{n} {why}")).collect();
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
