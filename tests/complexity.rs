//! Complexity tests: the work of a command's pure layer (index builds, lookups, candidates a
//! join or a target search examines, counted by `policy::index::work`) grows linearly with
//! the cluster (at most n log n). Work is counted, never timed: these run in CI in about a second and give the
//! same numbers on any machine. A join that scans every pod for every VMI would make the
//! 10× cluster cost 100× and fail here.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};
use vmctl::commands::status::{StatusInputs, build_report};
use vmctl::model::{
    KubeVirt, Namespace, Node, Pod, PodDisruptionBudget, ResourceQuota, Time, VirtualMachine,
    VirtualMachineInstance, VirtualMachineInstanceMigration,
};
use vmctl::policy::drain::{DrainInputs, plan_drain};
use vmctl::policy::index::work;

const VMIS_PER_NODE: usize = 20;
const NAMESPACES: usize = 20;

/// A synthetic cluster of `vmis` VMIs on `vmis / 20` nodes: launcher pods, every 25th VMI
/// migrating (VMIM, target pod, migration state), a PDB per 100 VMIs, a quota per namespace.
struct Cluster {
    vmis: Vec<VirtualMachineInstance>,
    vms: Vec<VirtualMachine>,
    vmims: Vec<VirtualMachineInstanceMigration>,
    pods: Vec<Pod>,
    nodes: Vec<Node>,
    pdbs: Vec<PodDisruptionBudget>,
    quotas: Vec<ResourceQuota>,
    namespaces: Vec<Namespace>,
    kubevirt: KubeVirt,
}

fn decode<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

fn cluster(vmi_count: usize) -> Cluster {
    cluster_with(vmi_count, "512Gi")
}

/// The same cluster with `node_memory` allocatable on every node.
fn cluster_with(vmi_count: usize, node_memory: &str) -> Cluster {
    let node_count = vmi_count / VMIS_PER_NODE;
    let zones = ["a", "b", "c"];
    let nodes = (0..node_count)
        .map(|n| {
            let model = ["Icelake", "Sapphire"][n % 2];
            let zone = zones[n % 3];
            let spec = if n % 50 == 7 {
                json!({"taints": [{"key": "gpu", "effect": "NoSchedule"}]})
            } else {
                json!({})
            };
            decode(json!({"metadata": {"name": format!("node-{n}"), "labels": {
                    "kubernetes.io/hostname": format!("node-{n}"),
                    "kubevirt.io/schedulable": "true",
                    "zone": zone,
                    format!("host-model-cpu.node.kubevirt.io/{model}"): "true",
                    format!("cpu-model-migration.node.kubevirt.io/{model}"): "true"}},
                "spec": spec,
                "status": {"allocatable": {"memory": node_memory, "cpu": "64", "pods": "250",
                        "devices.kubevirt.io/kvm": "1k"},
                    "conditions": [{"type": "Ready", "status": "True"}]}}))
        })
        .collect();
    let namespaces = (0..NAMESPACES)
        .map(|i| decode(json!({"metadata": {"name": format!("ns-{i}")}})))
        .collect();
    let quotas = (0..NAMESPACES)
        .map(|i| {
            decode(
                json!({"metadata": {"name": "compute", "namespace": format!("ns-{i}")},
                "status": {"hard": {"requests.memory": "100Ti", "pods": "100000"},
                    "used": {"requests.memory": "1Ti", "pods": "500"}}}),
            )
        })
        .collect();
    let (mut vmis, mut vms, mut vmims, mut pods, mut pdbs) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for v in 0..vmi_count {
        let node = format!("node-{}", v % node_count);
        let ns = format!("ns-{}", v % NAMESPACES);
        let name = format!("vm-{v:06}");
        let uid = format!("vmi-{v}");
        let pod_uid = format!("pod-{v}");
        let migrating = v % 25 == 0;
        let (migratable, reason) = if v % 10 == 3 {
            ("False", "DisksNotLiveMigratable")
        } else {
            ("True", "")
        };
        let strategy = ["LiveMigrate", "LiveMigrateIfPossible", "None"][v % 3];
        let zone = zones[v % 3];
        let mut status = json!({"nodeName": node, "phase": "Running",
            "conditions": [{"type": "LiveMigratable", "status": migratable, "reason": reason}],
            "activePods": {pod_uid.clone(): node.clone()}});
        let mut spec = json!({"evictionStrategy": strategy,
            "domain": {"memory": {"guest": "4Gi"}, "resources": {"requests": {"memory": "4Gi"}}}});
        if v % 7 == 0 {
            spec["nodeSelector"] = json!({ "zone": zone });
        }
        if v % 11 == 0 {
            spec["tolerations"] = json!([{"key": "gpu", "operator": "Exists"}]);
        }
        // Every 13th VMI spreads its group over the zones.
        let group = format!("g{}", v % 5);
        if v % 13 == 0 {
            spec["topologySpreadConstraints"] = json!([{"maxSkew": 50, "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"group": group}}}]);
        }
        if migrating {
            status["migrationState"] = json!({"migrationUid": format!("mig-{v}"),
                "sourceNode": node, "targetNode": format!("node-{}", (v + 1) % node_count),
                "sourcePod": format!("virt-launcher-{name}-a"), "targetPod": format!("virt-launcher-{name}-b"),
                "startTimestamp": "2026-11-29T02:59:00Z", "mode": "PreCopy"});
            vmims.push(decode(
                json!({"metadata": {"name": format!("mig-{name}"), "namespace": ns,
                    "uid": format!("mig-{v}"), "creationTimestamp": "2026-11-29T02:58:00Z"},
                "spec": {"vmiName": name}, "status": {"phase": "Running"}}),
            ));
            pods.push(decode(
                json!({"metadata": {"name": format!("virt-launcher-{name}-b"),
                    "namespace": ns, "uid": format!("tpod-{v}"),
                    "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": uid,
                        "kubevirt.io/migrationJobUID": format!("mig-{v}")}},
                "spec": {"nodeName": format!("node-{}", (v + 1) % node_count), "containers": [
                    {"name": "compute", "resources": {"requests": {"memory": "4400Mi"}}}]},
                "status": {"phase": "Running"}}),
            ));
        }
        vmis.push(decode(
            json!({"metadata": {"name": name, "namespace": ns, "uid": uid,
                "labels": {"kubevirt.io/nodeName": node, "group": group}},
            "spec": spec, "status": status}),
        ));
        vms.push(decode(json!({"metadata": {"name": name, "namespace": ns},
            "spec": {"runStrategy": "Always"}})));
        pods.push(decode(
            json!({"metadata": {"name": format!("virt-launcher-{name}-a"),
                "namespace": ns, "uid": pod_uid,
                "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": uid,
                    "vm.kubevirt.io/name": name, "group": group}},
            "spec": {"nodeName": node, "containers": [
                {"name": "compute", "resources": {"requests": {"memory": "4400Mi", "cpu": "1",
                    "devices.kubevirt.io/kvm": "1"}}}]},
            "status": {"phase": "Running"}}),
        ));
        if v % 100 == 0 {
            pdbs.push(decode(json!({"metadata": {"name": format!("{name}-pdb"), "namespace": ns},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"vm.kubevirt.io/name": name}}},
                "status": {"disruptionsAllowed": 0}})));
        }
        // Not synced yet (no status): its budget is computed from every pod it selects, here
        // this VM's and another's of the same namespace and node (an expression-only
        // selector, filed under its In values). It is on a drained node in both cluster
        // sizes, so both pay for the pass over the pods.
        if v % 100 == 1 {
            let (mut a, mut b) = (NAMESPACES, node_count);
            while b != 0 {
                (a, b) = (b, a % b);
            }
            let other = format!("vm-{:06}", v + NAMESPACES / a * node_count);
            pdbs.push(decode(
                json!({"metadata": {"name": format!("{name}-new-pdb"), "namespace": ns},
                "spec": {"minAvailable": 1, "selector": {"matchExpressions": [
                    {"key": "vm.kubevirt.io/name", "operator": "In", "values": [name, other]}]}}}),
            ));
        }
        // `selector: {}` (the whole namespace, a namespace-wide index bucket): one per namespace.
        if v < NAMESPACES {
            pdbs.push(decode(
                json!({"metadata": {"name": "everything", "namespace": ns},
                "spec": {"maxUnavailable": "10%", "selector": {}},
                "status": {"disruptionsAllowed": 0}}),
            ));
        }
    }
    Cluster {
        vmis,
        vms,
        vmims,
        pods,
        nodes,
        pdbs,
        quotas,
        namespaces,
        kubevirt: decode(
            json!({"metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": {"evictionStrategy": "LiveMigrate"}}}),
        ),
    }
}

fn now() -> Timestamp {
    "2026-11-29T03:00:00Z".parse().unwrap()
}

fn status_work(c: &Cluster) -> (usize, u64) {
    let inputs = StatusInputs {
        vmis: c.vmis.clone(),
        vmims: c.vmims.clone(),
        pods: c.pods.clone(),
        kubevirt: Some(c.kubevirt.clone()),
        loops: Default::default(),
        nodes: Vec::new(),
    };
    let (report, steps) = work::count(|| build_report(&inputs, now(), "test"));
    (report.migrations.len(), steps)
}

/// The planner's inputs for draining the first `nodes` nodes, with every pod of the cluster.
fn drain_inputs(c: &Cluster, nodes: usize) -> DrainInputs {
    let drain: Vec<String> = (0..nodes).map(|n| format!("node-{n}")).collect();
    DrainInputs {
        vmis: c
            .vmis
            .iter()
            .filter(|v| {
                v.status
                    .node_name
                    .as_ref()
                    .is_some_and(|n| drain.contains(n))
            })
            .cloned()
            .collect(),
        drain,
        vms: c.vms.clone(),
        vmims: c.vmims.clone(),
        nodes: c.nodes.clone(),
        pods: c.pods.clone(),
        pdbs: c.pdbs.clone(),
        quotas: c.quotas.clone(),
        namespaces: c.namespaces.clone(),
        kubevirt: Some(c.kubevirt.clone()),
        now: Some(Time(now())),
        ..DrainInputs::default()
    }
}

/// Drains the first `nodes` nodes.
fn drain_work(c: &Cluster, nodes: usize) -> (usize, u64) {
    let inputs = drain_inputs(c, nodes);
    let (plan, steps) = work::count(|| plan_drain(&inputs));
    (plan.vmis.len(), steps)
}

/// At most n log n (the bound): 10× the cluster may cost 10 × log(10k)/log(1k) ≈ 13.3×
/// the work; a per-VMI scan would cost 100×. The small cluster must have done real work.
fn assert_linear(what: &str, small: u64, large: u64, objects: usize) {
    eprintln!(
        "{what}: {small} steps at 1k, {large} at 10k ({:.2}×)",
        large as f64 / small as f64
    );
    assert!(
        small as usize >= objects,
        "{what}: only {small} steps counted for {objects} objects"
    );
    assert!(
        large * 3 <= small * 40,
        "{what}: work grew {:.1}× for 10× the cluster ({small} → {large}): worse than n log n",
        large as f64 / small as f64
    );
}

#[test]
fn status_work_is_linear_in_the_cluster() {
    let (small, large) = (cluster(1_000), cluster(10_000));
    let (rows_small, work_small) = status_work(&small);
    let (rows_large, work_large) = status_work(&large);
    // Every migration was joined to its VMI and target pod.
    assert_eq!((rows_small, rows_large), (40, 400));
    assert_linear(
        "status -A",
        work_small,
        work_large,
        small.vmis.len() + small.pods.len(),
    );
}

#[test]
fn plan_drain_work_is_linear_for_one_node_and_for_a_tenth_of_the_fleet() {
    let (small, large) = (cluster(1_000), cluster(10_000));
    let (one_small, work_one_small) = drain_work(&small, 1);
    let (one_large, work_one_large) = drain_work(&large, 1);
    assert_eq!((one_small, one_large), (VMIS_PER_NODE, VMIS_PER_NODE));
    assert_linear(
        "plan-drain 1 node",
        work_one_small,
        work_one_large,
        small.pods.len(),
    );

    // A tenth of the nodes: 10× the VMs to place on 10× the nodes. A per-VM scan of every
    // node would be 100× here.
    let (tenth_small, work_tenth_small) = drain_work(&small, small.nodes.len() / 10);
    let (tenth_large, work_tenth_large) = drain_work(&large, large.nodes.len() / 10);
    assert_eq!((tenth_small, tenth_large), (100, 1_000));
    assert_linear(
        "plan-drain 10% of nodes",
        work_tenth_small,
        work_tenth_large,
        small.pods.len(),
    );
}

#[test]
fn the_plan_from_split_pods_is_the_plan_from_all_pods() {
    use std::collections::HashSet;
    use vmctl::policy::drain::split_pods;
    let c = cluster(2_000);
    for drained in [1, 10] {
        let all = drain_inputs(&c, drained);
        let uids: HashSet<&str> = all.vmis.iter().filter_map(|v| v.uid()).collect();
        let spread = vmctl::policy::scheduling::spread_selectors(&all.vmis);
        let (pods, node_usage) = split_pods(c.pods.clone(), &all.drain, &uids, &spread);
        assert!(pods.len() * 5 < c.pods.len(), "{} pods kept", pods.len());
        let split = DrainInputs {
            pods,
            node_usage,
            ..all.clone()
        };
        let (a, b) = (plan_drain(&all), plan_drain(&split));
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::to_value(&b).unwrap(),
            "{drained} node(s)"
        );
        assert!(
            a.vmis.iter().any(|v| v.target.is_some()),
            "targets were chosen"
        );
    }
}

/// A drain that fills the cluster: every node has room for about one more launcher pod, so
/// about half the VMs of a tenth of the fleet find a target and the rest are explained, with
/// placements and failures interleaved. Explaining a failure must not cost a scan of every
/// node each time.
#[test]
fn plan_drain_work_stays_linear_when_the_cluster_fills_up() {
    let (small, large) = (cluster_with(1_000, "91Gi"), cluster_with(10_000, "91Gi"));
    let count = |c: &Cluster| {
        let inputs = drain_inputs(c, c.nodes.len() / 10);
        let (plan, steps) = work::count(|| plan_drain(&inputs));
        let placed = plan
            .vmis
            .iter()
            .filter(|v| v.action.as_str() == "live-migrate")
            .count();
        let unplaced = plan
            .vmis
            .iter()
            .filter(|v| v.action.as_str() == "no-target")
            .count();
        (placed, unplaced, steps)
    };
    let (placed_small, unplaced_small, work_small) = count(&small);
    let (placed_large, unplaced_large, work_large) = count(&large);
    eprintln!(
        "filling: {placed_small} placed, {unplaced_small} not at 1k; \
         {placed_large} placed, {unplaced_large} not at 10k"
    );
    assert!(placed_small >= 10 && unplaced_small >= 5);
    assert!(placed_large >= 100 && unplaced_large >= 50);
    assert_linear(
        "plan-drain filling the cluster",
        work_small,
        work_large,
        small.pods.len(),
    );
}
