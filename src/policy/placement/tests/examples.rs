//! Hand-written cases: extended resources, the pod count, what only orders the nodes,
//! topology spread, a host model's features, explanations kept.

use std::collections::BTreeMap;

use super::{node, pod, vmi};
use crate::model::Node;
use crate::policy::index::work;
use crate::policy::placement::TargetSearch;
use crate::policy::scheduling::{NodeUsage, SelectorIndex, spread_selectors};
use serde_json::json;

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
