//! The simulator's tests: whole rollouts from objects as the cluster shows them.

use super::*;
use crate::policy::drain::{DrainInputs, plan_drain, split_pods};
use serde_json::{Value, json};

fn node(name: &str, memory: &str) -> Node {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name,
        "kubevirt.io/schedulable": "true"}},
        "spec": {}, "status": {"allocatable": {"memory": memory, "pods": "110"},
        "conditions": [{"type": "Ready", "status": "True"}]}}))
    .unwrap()
}

fn vmi(name: &str, node: &str, migratable: bool, memory: &str) -> VirtualMachineInstance {
    serde_json::from_value(json!({"metadata": {"name": name, "namespace": "prod", "uid": format!("uid-{name}"),
        "labels": {"kubevirt.io/nodeName": node}},
        "spec": {"domain": {"memory": {"guest": memory}}},
        "status": {"nodeName": node, "phase": "Running", "conditions": [
            if migratable { json!({"type": "LiveMigratable", "status": "True"}) }
            else { json!({"type": "LiveMigratable", "status": "False", "reason": "DisksNotLiveMigratable",
                "message": "cannot migrate VMI: PVC data-x is not shared"}) }]}}))
    .unwrap()
}

fn with_strategy(mut v: VirtualMachineInstance, strategy: &str) -> VirtualMachineInstance {
    let mut j = serde_json::to_value(&v).unwrap();
    j["spec"]["evictionStrategy"] = json!(strategy);
    v = serde_json::from_value(j).unwrap();
    v
}

fn launcher(vmi: &VirtualMachineInstance) -> Pod {
    let memory = vmi
        .guest_memory()
        .map(|q| q.bytes() + 256 * 1024 * 1024)
        .unwrap_or(0);
    serde_json::from_value(json!({"metadata": {"name": format!("virt-launcher-{}", vmi.name()),
        "namespace": vmi.namespace(), "uid": format!("pod-{}", vmi.name()),
        "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": vmi.uid(), "app": vmi.name()}},
        "spec": {"nodeName": vmi.status.node_name, "containers": [{"name": "compute",
            "resources": {"requests": {"memory": memory.to_string(), "cpu": "1"}}}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}))
    .unwrap()
}

fn kubevirt() -> Option<KubeVirt> {
    Some(
        serde_json::from_value(
            json!({"metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": {"evictionStrategy": "LiveMigrate"}},
            "status": {"observedKubeVirtVersion": "v1.8.4"}}),
        )
        .unwrap(),
    )
}

fn cluster(vmis: Vec<VirtualMachineInstance>, nodes: Vec<Node>) -> MaintenanceInputs {
    MaintenanceInputs {
        pods: vmis.iter().map(launcher).collect(),
        vmis,
        nodes,
        kubevirt: kubevirt(),
        ..Default::default()
    }
}

fn options(
    nodes: &[&str],
    max_unavailable: usize,
    order: Order,
    targets: Targets,
) -> MaintenanceOptions {
    MaintenanceOptions {
        nodes: nodes.iter().map(|n| n.to_string()).collect(),
        max_unavailable,
        order,
        targets,
        upgrade_seconds: 600,
        compare: false,
    }
}

/// The targets of a VMI over the rollout, batch by batch.
fn targets_of(plan: &MaintenancePlan, name: &str) -> Vec<String> {
    plan.batches
        .iter()
        .flat_map(|b| b.vmis.iter())
        .filter(|r| r.name == name && r.action == Action::LiveMigrate)
        .filter_map(|r| r.target.clone())
        .collect()
}

/// node-1 holds a, node-2 holds b, node-3 is empty.
fn three_nodes() -> MaintenanceInputs {
    cluster(
        vec![
            vmi("a", "node-1", true, "8Gi"),
            vmi("b", "node-2", true, "8Gi"),
        ],
        vec![
            node("node-1", "64Gi"),
            node("node-2", "64Gi"),
            node("node-3", "64Gi"),
        ],
    )
}

#[test]
fn a_vm_moves_twice_in_the_given_order_and_once_in_auto_order() {
    let inputs = three_nodes();
    let nodes = ["node-1", "node-2", "node-3"];

    let given = plan_maintenance(
        inputs.clone(),
        &options(&nodes, 1, Order::Given, Targets::Any),
    );
    // a goes to the emptiest node, node-3, which is drained last: it moves again.
    assert_eq!(targets_of(&given, "a"), ["node-3", "node-2"]);
    assert_eq!(targets_of(&given, "b"), ["node-1"]);
    assert_eq!(given.totals.migrations, 3);
    assert_eq!(given.totals.vms_migrated, 2);
    assert_eq!(given.totals.migrations_per_vm.mean, 1.5);
    assert_eq!(given.totals.migrations_per_vm.max, 2);
    assert_eq!(given.totals.most_migrated.len(), 1);
    assert_eq!(given.totals.most_migrated[0].name, "a");
    assert_eq!(given.verdict, Verdict::WillComplete);

    let auto = plan_maintenance(
        inputs.clone(),
        &options(&nodes, 1, Order::Auto, Targets::Any),
    );
    // The empty node first; then each VM goes to a node already done.
    assert_eq!(auto.nodes, ["node-3", "node-1", "node-2"]);
    assert_eq!(targets_of(&auto, "a"), ["node-3"]);
    assert_eq!(targets_of(&auto, "b"), ["node-1"]);
    assert_eq!(auto.totals.migrations, 2);
    assert_eq!(auto.totals.migrations_per_vm.mean, 1.0);
    assert_eq!(auto.totals.migrations_per_vm.max, 1);
    assert!(auto.totals.most_migrated.is_empty());
    assert!(auto.totals.duration_seconds < given.totals.duration_seconds);
}

#[test]
fn the_state_moves_with_the_vms_between_batches() {
    let inputs = three_nodes();
    let plan = plan_maintenance(
        inputs.clone(),
        &options(
            &["node-1", "node-2", "node-3"],
            1,
            Order::Given,
            Targets::Any,
        ),
    );
    // Batch 3 drains node-3, where a now runs: its row names node-3 as its node.
    let row = plan.batches[2].vmis.iter().find(|r| r.name == "a").unwrap();
    assert_eq!(row.node, "node-3");
    // Batches follow each other, each drain then the upgrade.
    let b = &plan.batches;
    assert_eq!(b[0].start_seconds, 0);
    assert_eq!(b[1].start_seconds, b[0].end_seconds);
    assert_eq!(b[0].duration_seconds, b[0].drain_seconds + 600);
    assert!(b[0].drain_seconds > 0);
    assert_eq!(plan.totals.duration_seconds, b[2].end_seconds);
    // An empty node's batch is only its upgrade.
    let empty = plan_maintenance(
        inputs.clone(),
        &options(&["node-3"], 1, Order::Given, Targets::Any),
    );
    assert_eq!(empty.batches[0].duration_seconds, 600);
    assert!(empty.batches[0].vmis.is_empty());
}

#[test]
fn compare_says_the_default_next_to_auto_order_and_done_targets() {
    let inputs = three_nodes();
    let mut o = options(
        &["node-1", "node-2", "node-3"],
        1,
        Order::Given,
        Targets::Any,
    );
    o.compare = true;
    let plan = plan_maintenance(inputs.clone(), &o);
    let c = plan.compare.as_ref().unwrap();
    assert_eq!(
        (c.default.order, c.default.targets),
        (Order::Given, Targets::Any)
    );
    assert_eq!(
        (c.alternative.order, c.alternative.targets),
        (Order::Auto, Targets::Done)
    );
    assert_eq!(c.default.migrations_per_vm.mean, 1.5);
    assert_eq!(c.alternative.migrations_per_vm.mean, 1.0);
    assert!(c.alternative.duration_seconds < c.default.duration_seconds);
    // Chosen auto: the default is the other one, the chosen one the alternative.
    o.order = Order::Auto;
    let auto = plan_maintenance(inputs.clone(), &o);
    let c = auto.compare.as_ref().unwrap();
    assert_eq!(c.default.migrations, 3);
    assert_eq!(
        (c.alternative.order, c.alternative.targets),
        (Order::Auto, Targets::Any)
    );
    assert_eq!(c.alternative.migrations, 2);
}

#[test]
fn done_targets_keep_vms_off_the_nodes_still_to_drain() {
    // The rollout is node-1 and node-2; node-3 and node-4 are not part of it. node-2 is the
    // emptiest, so the scheduler would send a there, and a would move again.
    let inputs = cluster(
        vec![
            vmi("a", "node-1", true, "8Gi"),
            vmi("c", "node-3", true, "16Gi"),
            vmi("d", "node-4", true, "16Gi"),
        ],
        vec![
            node("node-1", "64Gi"),
            node("node-2", "64Gi"),
            node("node-3", "64Gi"),
            node("node-4", "64Gi"),
        ],
    );
    let nodes = ["node-1", "node-2"];
    let any = plan_maintenance(
        inputs.clone(),
        &options(&nodes, 1, Order::Given, Targets::Any),
    );
    assert_eq!(targets_of(&any, "a"), ["node-2", "node-1"]);
    let done = plan_maintenance(
        inputs.clone(),
        &options(&nodes, 1, Order::Given, Targets::Done),
    );
    assert_eq!(targets_of(&done, "a"), ["node-3"]);
    assert_eq!(done.totals.migrations_per_vm.max, 1);
    assert!(done.batches[0].placed_outside_done.is_empty());
}

#[test]
fn done_targets_fall_back_to_any_node_when_no_done_node_has_room() {
    // node-3 (outside the rollout) has room for one 8Gi VM only.
    let inputs = cluster(
        vec![
            vmi("a", "node-1", true, "8Gi"),
            vmi("b", "node-1", true, "8Gi"),
        ],
        vec![
            node("node-1", "64Gi"),
            node("node-2", "64Gi"),
            node("node-3", "12Gi"),
        ],
    );
    let plan = plan_maintenance(
        inputs.clone(),
        &options(&["node-1", "node-2"], 1, Order::Given, Targets::Done),
    );
    let first = &plan.batches[0];
    assert_eq!(first.verdict, Verdict::WillComplete);
    let t: Vec<(String, Option<String>)> = first
        .vmis
        .iter()
        .map(|r| (r.name.clone(), r.target.clone()))
        .collect();
    assert_eq!(
        t,
        [
            ("a".to_string(), Some("node-3".to_string())),
            ("b".to_string(), Some("node-2".to_string()))
        ]
    );
    assert_eq!(first.placed_outside_done, ["prod/b"]);
    // Batch 2: b moves again, to a done node (node-1, empty now).
    assert_eq!(targets_of(&plan, "b"), ["node-2", "node-1"]);
}

#[test]
fn a_batch_that_runs_out_of_capacity_blocks_the_rollout() {
    // 20Gi nodes: node-3 takes one 8Gi VM, not two.
    let inputs = cluster(
        vec![
            vmi("a", "node-1", true, "8Gi"),
            vmi("b", "node-2", true, "8Gi"),
            vmi("c", "node-3", true, "8Gi"),
        ],
        vec![
            node("node-1", "20Gi"),
            node("node-2", "20Gi"),
            node("node-3", "20Gi"),
        ],
    );
    let nodes = ["node-1", "node-2", "node-3"];
    let two = plan_maintenance(
        inputs.clone(),
        &options(&nodes, 2, Order::Given, Targets::Any),
    );
    assert_eq!(two.verdict, Verdict::WillBlock);
    let out = two.capacity_runs_out.as_ref().unwrap();
    assert_eq!((out.batch, out.at_seconds), (1, 0));
    assert_eq!(out.vmis.len(), 1);
    assert!(
        out.message.contains("insufficient memory"),
        "{}",
        out.message
    );
    let blocker = two.first_blocker.as_ref().unwrap();
    assert_eq!(blocker.batch, 1);
    assert_eq!(blocker.blocker.kind, "vmi");
    // One at a time fits.
    let one = plan_maintenance(
        inputs.clone(),
        &options(&nodes, 1, Order::Given, Targets::Any),
    );
    assert_eq!(one.verdict, Verdict::WillComplete);
    assert!(one.capacity_runs_out.is_none());
    assert!(one.first_blocker.is_none());
}

#[test]
fn a_node_that_blocks_stays_cordoned_and_auto_order_drains_it_last() {
    // x cannot migrate and its strategy is LiveMigrate: node-1 cannot be drained.
    let inputs = cluster(
        vec![
            with_strategy(vmi("x", "node-1", false, "2Gi"), "LiveMigrate"),
            vmi("y", "node-1", true, "8Gi"),
            vmi("b", "node-2", true, "8Gi"),
        ],
        vec![
            node("node-1", "64Gi"),
            node("node-2", "64Gi"),
            node("node-3", "64Gi"),
        ],
    );
    let nodes = ["node-1", "node-2", "node-3"];
    let given = plan_maintenance(
        inputs.clone(),
        &options(&nodes, 1, Order::Given, Targets::Any),
    );
    assert_eq!(given.verdict, Verdict::WillBlock);
    let first = given.first_blocker.as_ref().unwrap();
    assert_eq!((first.batch, first.at_seconds), (1, 0));
    assert_eq!(first.blocker.vmis, ["prod/x"]);
    assert_eq!(given.batches[0].stuck_nodes, ["node-1"]);
    // y still leaves node-1; node-1 stays cordoned, so b goes to node-3 although node-1 has
    // more room, and in batch 3 both go to node-2, the one done node.
    assert_eq!(targets_of(&given, "y"), ["node-3", "node-2"]);
    assert_eq!(targets_of(&given, "b"), ["node-3", "node-2"]);
    assert_eq!(given.totals.blocked_batches, 1);

    let auto = plan_maintenance(
        inputs.clone(),
        &options(&nodes, 1, Order::Auto, Targets::Any),
    );
    assert_eq!(auto.nodes.last().unwrap(), "node-1");
    let first = auto.first_blocker.as_ref().unwrap();
    assert_eq!(first.batch, 3);
    assert_eq!(first.at_seconds, auto.batches[2].start_seconds);
    assert!(first.at_seconds > 0);
}

#[test]
fn max_unavailable_nodes_are_drained_together_and_never_targets_of_each_other() {
    let vmis = (1..=5)
        .map(|n| vmi(&format!("v{n}"), &format!("node-{n}"), true, "4Gi"))
        .collect();
    let nodes = (1..=5)
        .map(|n| node(&format!("node-{n}"), "64Gi"))
        .collect();
    let inputs = cluster(vmis, nodes);
    let names = ["node-1", "node-2", "node-3", "node-4", "node-5"];
    for order in [Order::Given, Order::Auto] {
        let plan = plan_maintenance(inputs.clone(), &options(&names, 2, order, Targets::Any));
        let sizes: Vec<usize> = plan.batches.iter().map(|b| b.nodes.len()).collect();
        assert_eq!(sizes, [2, 2, 1]);
        for b in &plan.batches {
            for r in &b.vmis {
                let t = r.target.as_deref().unwrap();
                assert!(
                    !b.nodes.iter().any(|n| n == t),
                    "{t} drained with {:?}",
                    b.nodes
                );
            }
        }
        assert_eq!(plan.verdict, Verdict::WillComplete);
    }
    let given = plan_maintenance(
        inputs.clone(),
        &options(&names, 2, Order::Given, Targets::Any),
    );
    assert_eq!(given.batches[0].nodes, ["node-1", "node-2"]);
}

#[test]
fn unknown_and_repeated_nodes_are_said_not_simulated() {
    let inputs = three_nodes();
    let plan = plan_maintenance(
        inputs.clone(),
        &options(
            &["node-1", "node-9", "node-1"],
            1,
            Order::Given,
            Targets::Any,
        ),
    );
    assert_eq!(plan.unknown_nodes, ["node-9"]);
    assert_eq!(plan.nodes, ["node-1"]);
}

#[test]
fn shut_down_vms_leave_unless_their_vm_always_runs() {
    let vm = |name: &str, run: &str| -> VirtualMachine {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "prod"},
            "spec": {"runStrategy": run, "template": {}}}))
        .unwrap()
    };
    let mut inputs = cluster(
        vec![
            with_strategy(vmi("keep", "node-1", true, "30Gi"), "None"),
            with_strategy(vmi("gone", "node-1", true, "30Gi"), "None"),
        ],
        vec![node("node-1", "64Gi"), node("node-2", "64Gi")],
    );
    inputs.vms = vec![vm("keep", "Always"), vm("gone", "Halted")];
    let plan = plan_maintenance(
        inputs.clone(),
        &options(&["node-1", "node-2"], 1, Order::Given, Targets::Any),
    );
    assert_eq!(plan.verdict, Verdict::WillCompleteWithShutdowns);
    assert_eq!(plan.batches[0].shutdowns, 2);
    assert_eq!(plan.totals.shutdowns, 2);
    assert_eq!(plan.totals.migrations, 0);
    // keep is back on node-1: node-1 (64Gi) holds it, and nothing moves in batch 2.
    assert!(plan.batches[1].vmis.is_empty());
    let drained_again = plan_maintenance(
        inputs.clone(),
        &options(
            &["node-1", "node-2", "node-1"],
            1,
            Order::Given,
            Targets::Any,
        ),
    );
    assert_eq!(drained_again.nodes, ["node-1", "node-2"]);
}

/// A VM shut down for good leaves its PDB one healthy pod short: a later batch's shutdown
/// under the same PDB finds no disruption left, as the disruption controller would recount.
#[test]
fn a_shutdown_spends_its_pdbs_budget_for_the_batches_after() {
    let vm = |name: &str| -> VirtualMachine {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "prod"},
            "spec": {"runStrategy": "Halted", "template": {}}}))
        .unwrap()
    };
    let mut inputs = cluster(
        vec![
            with_strategy(vmi("a1", "node-1", true, "2Gi"), "None"),
            with_strategy(vmi("a2", "node-2", true, "2Gi"), "None"),
            with_strategy(vmi("a3", "node-3", true, "2Gi"), "None"),
        ],
        vec![
            node("node-1", "64Gi"),
            node("node-2", "64Gi"),
            node("node-3", "64Gi"),
        ],
    );
    inputs.vms = vec![vm("a1"), vm("a2"), vm("a3")];
    inputs.pdbs = vec![
        serde_json::from_value(json!({"metadata": {"name": "app-a", "namespace": "prod",
            "generation": 1},
            "spec": {"minAvailable": 2, "selector": {"matchExpressions": [
                {"key": "app", "operator": "In", "values": ["a1", "a2", "a3"]}]}},
            "status": {"observedGeneration": 1, "currentHealthy": 3, "desiredHealthy": 2,
                "disruptionsAllowed": 1, "expectedPods": 3}}))
        .unwrap(),
    ];
    let plan = plan_maintenance(
        inputs,
        &options(&["node-1", "node-2"], 1, Order::Given, Targets::Any),
    );
    assert_eq!(plan.batches[0].verdict, Verdict::WillCompleteWithShutdowns);
    assert_eq!(plan.batches[0].shutdowns, 1);
    assert_eq!(
        plan.batches[1].verdict,
        Verdict::WillBlock,
        "{:#?}",
        plan.batches[1].blockers
    );
    assert!(
        plan.batches[1]
            .blockers
            .iter()
            .any(|b| b.blocking && b.message.contains("app-a")),
        "{:#?}",
        plan.batches[1].blockers
    );
    assert_eq!(plan.first_blocker.map(|b| b.batch), Some(2));
}

/// A cluster with a bit of everything plan-drain reads: VMs, a PDB, a quota, a namespace,
/// a non-VM pod, a migration in flight, VMIs that shut down or block.
fn rich() -> MaintenanceInputs {
    let mut vmis = vec![
        vmi("a", "node-3", true, "8Gi"),
        vmi("b", "node-3", true, "4Gi"),
        with_strategy(vmi("c", "node-3", true, "2Gi"), "None"),
        vmi("d", "node-3", false, "2Gi"),
        vmi("e", "node-3", true, "16Gi"),
        vmi("f", "node-1", true, "8Gi"),
        vmi("g", "node-2", true, "8Gi"),
    ];
    let mut e = serde_json::to_value(&vmis[4]).unwrap();
    e["status"]["migrationState"] = json!({"migrationUid": "m-e", "sourceNode": "node-3",
        "targetNode": "node-2", "startTimestamp": "2026-12-01T10:00:00Z"});
    vmis[4] = serde_json::from_value(e).unwrap();
    let mut inputs = cluster(
        vmis,
        vec![
            node("node-1", "48Gi"),
            node("node-2", "64Gi"),
            node("node-3", "64Gi"),
            node("node-4", "20Gi"),
        ],
    );
    let other: Pod = serde_json::from_value(json!({"metadata": {"name": "web", "namespace": "web",
        "uid": "pod-web"}, "spec": {"nodeName": "node-4", "containers": [{"name": "c",
        "resources": {"requests": {"memory": "10Gi"}}}]}, "status": {"phase": "Running"}}))
    .unwrap();
    inputs.pods.push(other);
    inputs.vms = vec![
        serde_json::from_value(json!({"metadata": {"name": "c", "namespace": "prod"},
            "spec": {"runStrategy": "Always", "template": {}}}))
        .unwrap(),
    ];
    inputs.vmims = vec![
        serde_json::from_value(
            json!({"metadata": {"name": "m-e", "namespace": "prod", "uid": "m-e",
            "creationTimestamp": "2026-12-01T10:00:00Z"},
            "spec": {"vmiName": "e"}, "status": {"phase": "Running"}}),
        )
        .unwrap(),
    ];
    inputs.pdbs = vec![
        serde_json::from_value(json!({"metadata": {"name": "c-pdb", "namespace": "prod"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "c"}}},
            "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1,
                "expectedPods": 1, "observedGeneration": 1}}))
        .unwrap(),
    ];
    inputs.quotas = vec![
        serde_json::from_value(json!({"metadata": {"name": "q", "namespace": "prod"},
            "spec": {"hard": {"requests.memory": "200Gi"}},
            "status": {"hard": {"requests.memory": "200Gi"}, "used": {"requests.memory": "60Gi"}}}))
        .unwrap(),
    ];
    inputs.namespaces = vec![
        serde_json::from_value(json!({"metadata": {"name": "prod", "labels": {"tier": "gold"}}}))
            .unwrap(),
    ];
    inputs.now = Some(Time("2026-12-01T10:01:00Z".parse().unwrap()));
    inputs
}

fn json_of<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

#[test]
fn a_single_node_rollout_is_plan_drain_of_that_node() {
    let inputs = rich();
    let drain = vec!["node-3".to_string()];
    // plan-drain of node-3 as `evidence::drain_inputs` fills it: its VMIs, every pod split.
    let on_node: Vec<VirtualMachineInstance> = inputs
        .vmis
        .iter()
        .filter(|v| v.status.node_name.as_deref() == Some("node-3"))
        .cloned()
        .collect();
    let uids: HashSet<&str> = on_node.iter().filter_map(|v| v.uid()).collect();
    let spread = spread_selectors(&on_node);
    let (pods, node_usage) = split_pods(inputs.pods.clone(), &drain, &uids, &spread);
    let expected = plan_drain(&DrainInputs {
        drain: drain.clone(),
        vmis: on_node,
        incoming: vec![],
        vms: inputs.vms.clone(),
        vmims: inputs.vmims.clone(),
        nodes: inputs.nodes.clone(),
        pods,
        node_usage,
        pdbs: inputs.pdbs.clone(),
        quotas: inputs.quotas.clone(),
        namespaces: inputs.namespaces.clone(),
        kubevirt: inputs.kubevirt.clone(),
        policies: vec![],
        bandwidth: None,
        now: inputs.now.clone(),
        server_version: None,
        dirty_rates: None,
        loops: Default::default(),
    });
    // The plan exercises what it should.
    let actions: Vec<Action> = expected.vmis.iter().map(|r| r.action).collect();
    assert!(actions.contains(&Action::LiveMigrate));
    assert!(actions.contains(&Action::Shutdown));
    assert!(actions.contains(&Action::BlocksDrain));
    assert!(actions.contains(&Action::AlreadyMigrating));
    assert!(!expected.pdbs.is_empty());

    let mut o = options(&["node-3"], 1, Order::Given, Targets::Any);
    o.upgrade_seconds = 0;
    let plan = plan_maintenance(inputs.clone(), &o);
    let batch = &plan.batches[0];
    assert_eq!(json_of(&batch.vmis), json_of(&expected.vmis));
    assert_eq!(json_of(&batch.blockers), json_of(&expected.blockers));
    assert_eq!(batch.verdict, expected.verdict);
    assert_eq!(batch.drain_seconds, expected.estimated_duration_seconds);
    assert_eq!(batch.waves, expected.waves);
    assert_eq!(plan.verdict, expected.verdict);
    assert_eq!(
        plan.totals.duration_seconds,
        expected.estimated_duration_seconds
    );
    assert_eq!(
        plan.assumptions[..expected.assumptions.len()],
        expected.assumptions[..]
    );

    // Also when the inputs come split as the lead fills them.
    let (pods, node_usage) =
        split_cluster_pods(inputs.pods.clone(), &drain, &inputs.vmis, &inputs.pdbs);
    let split = MaintenanceInputs {
        pods,
        node_usage,
        ..inputs.clone()
    };
    let plan = plan_maintenance(split.clone(), &o);
    assert_eq!(json_of(&plan.batches[0].vmis), json_of(&expected.vmis));
}

#[test]
fn the_plan_serialises_to_the_contract() {
    let plan = plan_maintenance(
        three_nodes(),
        &MaintenanceOptions {
            nodes: vec!["node-1".into(), "node-2".into()],
            ..Default::default()
        },
    );
    let v = json_of(&plan);
    assert_eq!(v["verdict"], "will-complete");
    assert_eq!(v["batches"][0]["nodes"], json!(["node-1"]));
    assert!(v["batches"][0]["vmis"][0]["target"].is_string());
    assert!(v["batches"][0]["durationSeconds"].is_u64());
    assert!(v["totals"]["migrations"].is_u64());
    assert!(v["totals"]["migrationsPerVm"]["mean"].is_f64());
    assert!(v["totals"]["migrationsPerVm"]["max"].is_u64());
    assert!(v["totals"]["shutdowns"].is_u64());
    assert!(v["totals"]["durationSeconds"].is_u64());
    assert_eq!(v["compare"]["alternative"]["order"], "auto");
    assert_eq!(v["compare"]["alternative"]["targets"], "done");
}

/// `nodes` nodes of 512Gi with `per_node` 2Gi VMIs each, and a few non-VM pods.
fn fleet(nodes: usize, per_node: usize) -> MaintenanceInputs {
    let mut vmis = Vec::new();
    for n in 0..nodes {
        for k in 0..per_node {
            vmis.push(vmi(
                &format!("vm-{n}-{k}"),
                &format!("node-{n}"),
                true,
                "2Gi",
            ));
        }
    }
    let mut inputs = cluster(
        vmis,
        (0..nodes)
            .map(|n| node(&format!("node-{n}"), "512Gi"))
            .collect(),
    );
    for n in 0..nodes {
        inputs.pods.push(
            serde_json::from_value(
                json!({"metadata": {"name": format!("ds-{n}"), "namespace": "infra"},
                "spec": {"nodeName": format!("node-{n}"), "containers": [{"name": "c",
                "resources": {"requests": {"memory": "1Gi"}}}]}, "status": {"phase": "Running"}}),
            )
            .unwrap(),
        );
    }
    inputs
}

fn steps(nodes: usize, per_node: usize, max_unavailable: usize) -> u64 {
    let inputs = fleet(nodes, per_node);
    let names: Vec<String> = (0..nodes).map(|n| format!("node-{n}")).collect();
    let o = MaintenanceOptions {
        nodes: names,
        max_unavailable,
        order: Order::Auto,
        targets: Targets::Done,
        upgrade_seconds: 0,
        compare: false,
    };
    let (plan, work) = work::count(|| plan_maintenance(inputs, &o));
    assert_eq!(plan.verdict, Verdict::WillComplete);
    work
}

/// Work is O(VMIs + the nodes each batch touches): the target search is kept for the whole
/// rollout and told only what a batch changed, and `--order auto` re-keys only those nodes.
/// Linear in the VMs per node, and in the nodes with a fixed max-unavailable (twice the
/// batches, each no dearer).
#[test]
fn work_grows_linearly_with_vms_per_node_and_with_nodes() {
    let base = steps(20, 10, 2);
    let more_vms = steps(20, 20, 2);
    let wider = steps(40, 10, 4);
    let longer = steps(40, 10, 2);
    let much_longer = steps(160, 10, 2);
    let ratio = |n: u64| n as f64 / base as f64;
    assert!(
        ratio(more_vms) < 2.1,
        "2× VMs per node: {base} → {more_vms}"
    );
    assert!(
        ratio(wider) < 2.1,
        "2× nodes, 2× max-unavailable: {base} → {wider}"
    );
    assert!(
        ratio(longer) < 2.1,
        "2× nodes, 2× batches: {base} → {longer}"
    );
    assert!(
        ratio(much_longer) < 8.4,
        "8× nodes, 8× batches: {base} → {much_longer}"
    );
    // 1,000 nodes (10,000 VMIs), as benches/maintenance.sh runs.
    let thousand = steps(1000, 10, 2);
    assert!(
        ratio(thousand) < 52.5,
        "50× nodes, 50× batches: {base} → {thousand}"
    );
}

#[test]
fn done_targets_with_every_node_in_the_rollout_start_anywhere() {
    // --all: nothing is done before the first batch, so its VMs go to any node (listed);
    // from the second batch on they go to done nodes.
    let inputs = three_nodes();
    let plan = plan_maintenance(
        inputs,
        &options(
            &["node-1", "node-2", "node-3"],
            1,
            Order::Given,
            Targets::Done,
        ),
    );
    assert_eq!(plan.batches[0].placed_outside_done, ["prod/a"]);
    // a landed on node-3 before anything was done: it moves again, to a done node (node-2,
    // emptier than node-1, which took b).
    assert_eq!(targets_of(&plan, "a"), ["node-3", "node-2"]);
    assert_eq!(targets_of(&plan, "b"), ["node-1"]);
    assert!(plan.batches[1].placed_outside_done.is_empty());
}

/// [`fleet`] with no room anywhere (each node's memory is exactly what its pods request)
/// and a PDB over one VM of each node, all in the VMs' namespace: every batch finds no
/// target for its VMs (their explanation counts every node) and its namespace holds every
/// PDB.
fn full_fleet(nodes: usize, per_node: usize) -> MaintenanceInputs {
    let mut inputs = fleet(nodes, per_node);
    // A launcher pod requests the guest's 2Gi and 256Mi; the DaemonSet pod 1Gi.
    let memory = format!("{}Mi", per_node * (2048 + 256) + 1024);
    inputs.nodes = (0..nodes)
        .map(|n| node(&format!("node-{n}"), &memory))
        .collect();
    inputs.pdbs = (0..nodes)
        .map(|n| {
            serde_json::from_value(json!({
                "metadata": {"name": format!("pdb-{n}"), "namespace": "prod", "generation": 1},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": format!("vm-{n}-0")}}},
                "status": {"observedGeneration": 1, "currentHealthy": 1, "desiredHealthy": 1,
                    "expectedPods": 1, "disruptionsAllowed": 0}}))
            .unwrap()
        })
        .collect();
    inputs
}

fn steps_full(nodes: usize, per_node: usize, max_unavailable: usize) -> u64 {
    let inputs = full_fleet(nodes, per_node);
    let o = MaintenanceOptions {
        nodes: (0..nodes).map(|n| format!("node-{n}")).collect(),
        max_unavailable,
        order: Order::Given,
        targets: Targets::Any,
        upgrade_seconds: 0,
        compare: false,
    };
    let (plan, work) = work::count(|| plan_maintenance(inputs, &o));
    // What the test is about: no room in any batch.
    assert_eq!(plan.capacity_runs_out.as_ref().map(|c| c.batch), Some(1));
    assert!(
        plan.batches
            .iter()
            .all(|b| { b.vmis.iter().any(|r| r.action == Action::NoTarget) })
    );
    work
}

/// A rollout that finds no room in any batch, with a PDB per node in one namespace, costs
/// each batch the same as the cluster grows: why each node fails a VM is kept across batches
/// and brought up to date with the nodes a batch changed (not judged over every node again),
/// and a batch gets only the PDBs that select its pods (or nothing), not every PDB of its
/// namespaces.
#[test]
fn a_rollout_without_room_and_a_pdb_per_node_stays_linear() {
    let base = steps_full(20, 10, 2);
    let much_longer = steps_full(160, 10, 2);
    assert!(
        (much_longer as f64) < 8.4 * base as f64,
        "8× nodes, 8× batches: {base} → {much_longer}"
    );
}
