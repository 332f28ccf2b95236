//! The recipe's tests: whole plans from objects as the cluster shows them. Each step has
//! its own tests in its file; the helpers here build their objects.

use super::*;
use serde_json::{Value, json};

const GI: u64 = 1024 * 1024 * 1024;

pub(super) fn node(name: &str, memory: &str) -> Node {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": {
        "kubevirt.io/schedulable": "true",
        "host-model-cpu.node.kubevirt.io/Cascadelake-Server": "true",
        "cpu-model-migration.node.kubevirt.io/Cascadelake-Server": "true"}},
        "spec": {}, "status": {"allocatable": {"memory": memory},
        "conditions": [{"type": "Ready", "status": "True"}]}}))
    .unwrap()
}

pub(super) fn vmi(
    name: &str,
    node: &str,
    strategy: Option<&str>,
    migratable: bool,
    memory: &str,
) -> VirtualMachineInstance {
    let mut v = json!({"metadata": {"name": name, "namespace": "prod", "uid": format!("uid-{name}"),
        "labels": {"kubevirt.io/nodeName": node}},
        "spec": {"domain": {"memory": {"guest": memory}}},
        "status": {"nodeName": node, "phase": "Running", "conditions": [
            if migratable { json!({"type": "LiveMigratable", "status": "True"}) }
            else { json!({"type": "LiveMigratable", "status": "False", "reason": "DisksNotLiveMigratable",
                "message": "cannot migrate VMI: PVC data-x is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)"}) }]}});
    if let Some(s) = strategy {
        v["spec"]["evictionStrategy"] = json!(s);
    }
    serde_json::from_value(v).unwrap()
}

pub(super) fn launcher(vmi: &VirtualMachineInstance, memory: &str) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": format!("virt-launcher-{}", vmi.name()),
        "namespace": vmi.namespace(), "uid": format!("pod-{}", vmi.name()),
        "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": vmi.uid(), "app": vmi.name()}},
        "spec": {"nodeName": vmi.status.node_name, "containers": [{"name": "compute",
            "resources": {"requests": {"memory": memory}}}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}))
    .unwrap()
}

pub(super) fn kubevirt(config: Value) -> Option<KubeVirt> {
    Some(
        serde_json::from_value(
            json!({"metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": config}, "status": {"observedKubeVirtVersion": "v1.8.4"}}),
        )
        .unwrap(),
    )
}

pub(super) fn inputs(vmis: Vec<VirtualMachineInstance>, nodes: Vec<Node>) -> DrainInputs {
    let pods = vmis
        .iter()
        .map(|v| {
            let mem = v
                .guest_memory()
                .map(|q| q.bytes() + 256 * 1024 * 1024)
                .unwrap_or(0);
            launcher(v, &mem.to_string())
        })
        .collect();
    DrainInputs {
        drain: vec!["node-3".into()],
        vmis,
        nodes,
        pods,
        kubevirt: kubevirt(json!({"evictionStrategy": "LiveMigrate"})),
        ..Default::default()
    }
}

/// A row of the given action, with nothing else decided.
pub(super) fn plan_row(name: &str, action: Action) -> VmiPlan {
    VmiPlan {
        namespace: "prod".into(),
        name: name.into(),
        vm: None,
        node: "node-3".into(),
        eviction_strategy: "LiveMigrate".into(),
        eviction_strategy_source: StrategySource::VmiSpec,
        live_migratable: Some(true),
        reasons: Vec::new(),
        action,
        explanation: String::new(),
        fix: None,
        target: None,
        wave: None,
        start_seconds: None,
        end_seconds: None,
        estimate_seconds: None,
        budget_seconds: None,
        memory_bytes: None,
        pod_memory_request_bytes: 0,
        migration_policy: None,
        allow_post_copy: false,
        allow_auto_converge: false,
        bandwidth_bytes_per_second: DEFAULT_BANDWIDTH,
        evacuation_node: None,
        run_strategy: None,
        prediction: None,
        convergence: None,
        cpu: None,
        stuck: None,
    }
}

fn row<'a>(plan: &'a DrainPlan, name: &str) -> &'a VmiPlan {
    plan.vmis.iter().find(|v| v.name == name).unwrap()
}

#[test]
fn a_migratable_vm_live_migrates_to_a_node_with_room() {
    let plan = plan_drain(&inputs(
        vec![vmi("a", "node-3", Some("LiveMigrate"), true, "2Gi")],
        vec![node("node-1", "64Gi"), node("node-3", "64Gi")],
    ));
    let a = row(&plan, "a");
    assert_eq!(a.action, Action::LiveMigrate);
    assert_eq!(a.target.as_deref(), Some("node-1"));
    assert_eq!(a.wave, Some(1));
    assert_eq!(a.budget_seconds, Some(450), "150 s/GiB × ceil(2.147 GB)");
    assert_eq!(plan.verdict, Verdict::WillComplete);
    assert_eq!(
        plan.estimated_duration_seconds,
        SETUP_SECONDS + (2 * GI).div_ceil(DEFAULT_BANDWIDTH)
    );
}

#[test]
fn capacity_is_consumed_as_vms_are_placed() {
    // node-1 has room for one 6 GiB launcher pod, not two.
    let plan = plan_drain(&inputs(
        vec![
            vmi("a", "node-3", Some("LiveMigrate"), true, "6Gi"),
            vmi("b", "node-3", Some("LiveMigrate"), true, "6Gi"),
        ],
        vec![node("node-1", "8Gi"), node("node-3", "64Gi")],
    ));
    let actions: Vec<Action> = ["a", "b"].iter().map(|n| row(&plan, n).action).collect();
    assert!(
        actions.contains(&Action::LiveMigrate) && actions.contains(&Action::NoTarget),
        "{actions:?}"
    );
    assert_eq!(plan.verdict, Verdict::WillBlock);
    let blocked = plan
        .vmis
        .iter()
        .find(|v| v.action == Action::NoTarget)
        .unwrap();
    assert!(
        blocked.explanation.contains("1 insufficient memory"),
        "{}",
        blocked.explanation
    );
}

#[test]
fn split_pods_keeps_every_resource_and_spread_match_of_the_pods_it_drops() {
    // node-1 has the most memory and one GPU, taken by a pod that is not inspected in
    // full; node-2 has one free.
    let gpu_node = |name: &str, memory: &str| {
        let mut n: Value = serde_json::to_value(node(name, memory)).unwrap();
        n["status"]["allocatable"]["nvidia.com/gpu"] = json!("1");
        n["status"]["allocatable"]["cpu"] = json!("16");
        n["metadata"]["labels"]["zone"] = json!(name);
        serde_json::from_value::<Node>(n).unwrap()
    };
    let mut v = vmi("a", "node-3", Some("LiveMigrate"), true, "2Gi");
    v.metadata
        .labels
        .get_or_insert_default()
        .insert("app".into(), "a".into());
    v.spec.topology_spread_constraints = vec![
        serde_json::from_value(json!({"maxSkew": 5, "topologyKey": "zone",
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "a"}}}))
        .unwrap(),
    ];
    let mut source: Value = serde_json::to_value(launcher(&v, "2300Mi")).unwrap();
    source["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = json!("1");
    let other: Pod = serde_json::from_value(json!({"metadata": {"name": "trainer",
        "namespace": "prod", "labels": {"app": "a"}},
        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "resources": {"requests":
            {"nvidia.com/gpu": "1", "cpu": "2", "memory": "1Gi"}}}]},
        "status": {"phase": "Running"}}))
    .unwrap();
    let all = DrainInputs {
        pods: vec![serde_json::from_value(source).unwrap(), other],
        ..inputs(
            vec![v],
            vec![
                gpu_node("node-1", "128Gi"),
                gpu_node("node-2", "64Gi"),
                node("node-3", "64Gi"),
            ],
        )
    };
    let uids: HashSet<&str> = all.vmis.iter().filter_map(|v| v.uid()).collect();
    let spread = spread_selectors(&all.vmis);
    let (kept, usage) = split_pods(all.pods.clone(), &all.drain, &uids, &spread);
    assert_eq!(kept.len(), 1, "only the launcher pod is kept in full");
    let node_1 = &usage["node-1"];
    assert_eq!(node_1.requested["nvidia.com/gpu"], 1);
    assert_eq!(node_1.requested["cpu"], 2000);
    assert_eq!(node_1.pods, 1);
    assert_eq!(
        node_1.matching[&spread[0].key], 1,
        "the spread selector selects it"
    );
    let split = DrainInputs {
        pods: kept,
        node_usage: usage,
        ..all.clone()
    };
    for plan in [plan_drain(&all), plan_drain(&split)] {
        assert_eq!(row(&plan, "a").target.as_deref(), Some("node-2"));
    }
}

#[test]
fn strategy_none_shuts_down_and_says_what_the_vm_does() {
    let mut i = inputs(
        vec![vmi("a", "node-3", Some("None"), true, "1Gi")],
        vec![node("node-1", "64Gi")],
    );
    i.vms = vec![
        serde_json::from_value(json!({"metadata": {"name": "a", "namespace": "prod"},
        "spec": {"runStrategy": "Always"}}))
        .unwrap(),
    ];
    let plan = plan_drain(&i);
    let a = row(&plan, "a");
    assert_eq!(a.action, Action::Shutdown);
    assert!(
        a.explanation.contains("runStrategy Always"),
        "{}",
        a.explanation
    );
    assert_eq!(plan.verdict, Verdict::WillCompleteWithShutdowns);
    assert_eq!(a.end_seconds, Some(DEFAULT_GRACE_SECONDS));
}

#[test]
fn live_migrate_if_possible_but_not_migratable_shuts_down() {
    let plan = plan_drain(&inputs(
        vec![vmi(
            "a",
            "node-3",
            Some("LiveMigrateIfPossible"),
            false,
            "1Gi",
        )],
        vec![node("node-1", "64Gi")],
    ));
    let a = row(&plan, "a");
    assert_eq!(a.action, Action::ShutdownNotMigratable);
    assert!(a.explanation.contains("bare VMI"), "{}", a.explanation);
    assert_eq!(a.reasons[0].reason, "DisksNotLiveMigratable");
}

#[test]
fn live_migrate_but_not_migratable_blocks_the_drain() {
    let plan = plan_drain(&inputs(
        vec![vmi("a", "node-3", Some("LiveMigrate"), false, "1Gi")],
        vec![node("node-1", "64Gi")],
    ));
    assert_eq!(row(&plan, "a").action, Action::BlocksDrain);
    assert_eq!(plan.verdict, Verdict::WillBlock);
    assert_eq!(plan.blockers[0].name, "a");
    assert!(
        row(&plan, "a")
            .fix
            .as_deref()
            .unwrap()
            .contains("PVC data-x")
    );
}

#[test]
fn the_cluster_strategy_applies_when_the_vmi_has_none() {
    let plan = plan_drain(&inputs(
        vec![vmi("a", "node-3", None, false, "1Gi")],
        vec![node("node-1", "64Gi")],
    ));
    let a = row(&plan, "a");
    assert_eq!(a.eviction_strategy_source, StrategySource::ClusterConfig);
    assert_eq!(a.action, Action::BlocksDrain);
}

#[test]
fn without_a_kubevirt_cr_defaults_apply() {
    let mut i = inputs(
        vec![vmi("a", "node-3", None, true, "1Gi")],
        vec![node("node-1", "64Gi")],
    );
    i.kubevirt = None;
    let plan = plan_drain(&i);
    assert!(plan.defaults_assumed);
    assert_eq!(
        row(&plan, "a").action,
        Action::Shutdown,
        "cluster default None"
    );
    assert!(plan.assumptions[0].contains("no KubeVirt CR"));
}

#[test]
fn external_waits_but_does_not_block() {
    let plan = plan_drain(&inputs(
        vec![vmi("a", "node-3", Some("External"), true, "1Gi")],
        vec![node("node-1", "64Gi")],
    ));
    assert_eq!(row(&plan, "a").action, Action::External);
    assert!(!plan.blockers[0].blocking);
    assert_eq!(plan.verdict, Verdict::WillComplete);
}

#[test]
fn an_unfinished_migration_means_already_migrating() {
    let mut i = inputs(
        vec![vmi("a", "node-3", Some("LiveMigrate"), true, "1Gi")],
        vec![node("node-1", "64Gi")],
    );
    i.vmims = vec![
        serde_json::from_value(
            json!({"metadata": {"name": "m1", "namespace": "prod", "uid": "m1"},
        "spec": {"vmiName": "a"}, "status": {"phase": "Running"}}),
        )
        .unwrap(),
    ];
    i.vmis[0].status.migration_state = Some(
        serde_json::from_value(json!({"migrationUid": "m1", "targetNode": "node-1"})).unwrap(),
    );
    let plan = plan_drain(&i);
    let a = row(&plan, "a");
    assert_eq!(a.action, Action::AlreadyMigrating);
    assert_eq!(a.target.as_deref(), Some("node-1"));
    assert_eq!(plan.limits.in_flight_per_node["node-3"], 1);
    assert!(a.explanation.contains("about"), "{}", a.explanation);

    // A phase vmctl does not know: counted as running (as KubeVirt's IsRunning does),
    // but never given an estimate (issue 11: `Exploded` read as "about 15s left").
    i.vmims[0].status.phase = Some("Exploded".into());
    let plan = plan_drain(&i);
    let a = row(&plan, "a");
    assert_eq!(a.action, Action::AlreadyMigrating);
    assert_eq!(a.estimate_seconds, None);
    assert!(
        a.explanation
            .contains("phase \"Exploded\", which this vmctl does not know"),
        "{}",
        a.explanation
    );
    assert!(!a.explanation.contains("left"), "{}", a.explanation);
    assert_eq!(plan.limits.in_flight_per_node["node-3"], 1);
}

#[test]
fn untolerated_taints_and_cpu_models_leave_no_target() {
    let mut tainted: Value = serde_json::to_value(node("node-1", "64Gi")).unwrap();
    tainted["spec"]["taints"] =
        json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]);
    let mut other_cpu: Value = serde_json::to_value(node("node-2", "64Gi")).unwrap();
    other_cpu["metadata"]["labels"] = json!({"kubevirt.io/schedulable": "true",
        "cpu-model-migration.node.kubevirt.io/Icelake-Server": "true"});
    let plan = plan_drain(&inputs(
        vec![vmi("a", "node-3", Some("LiveMigrate"), true, "1Gi")],
        vec![
            serde_json::from_value(tainted).unwrap(),
            serde_json::from_value(other_cpu).unwrap(),
            node("node-3", "64Gi"),
        ],
    ));
    let a = row(&plan, "a");
    assert_eq!(a.action, Action::NoTarget);
    assert!(
        a.explanation
            .contains("untolerated taint dedicated=gpu:NoSchedule"),
        "{}",
        a.explanation
    );
    assert!(
        a.explanation
            .contains("no host-model CPU Cascadelake-Server support"),
        "{}",
        a.explanation
    );
    // Upgrade drains: every node fails a filter eviction cannot change, and the VM's
    // reason names the model and the label its target needs.
    assert!(
        a.explanation
            .contains("\"Preemption is not helpful for scheduling\"")
            && a.explanation.contains(
                "target node to carry cpu-model-migration.node.kubevirt.io/Cascadelake-Server=true"
            ),
        "{}",
        a.explanation
    );
    assert!(
        a.fix
            .as_deref()
            .unwrap()
            .starts_with("keep a node with CPU model Cascadelake-Server schedulable"),
        "{:?}",
        a.fix
    );
    assert_eq!(a.reasons.last().unwrap().reason, "NoFeasibleTarget");
}

#[test]
fn quota_without_headroom_blocks() {
    let mut i = inputs(
        vec![vmi("a", "node-3", Some("LiveMigrate"), true, "4Gi")],
        vec![node("node-1", "64Gi")],
    );
    i.quotas = vec![
        serde_json::from_value(json!({"metadata": {"name": "q", "namespace": "prod"},
        "status": {"hard": {"requests.memory": "10Gi"}, "used": {"requests.memory": "8Gi"}}}))
        .unwrap(),
    ];
    let plan = plan_drain(&i);
    assert_eq!(row(&plan, "a").action, Action::BlocksDrain);
    let b = &plan.blockers[0];
    assert_eq!((b.kind.as_str(), b.name.as_str()), ("quota", "q"));
    assert!(
        b.message.contains("requests.memory has 2.0 GiB left"),
        "{}",
        b.message
    );
}

#[test]
fn harmful_pdbs_block_shutdowns_but_not_migrations() {
    let mut i = inputs(
        vec![
            vmi("stop", "node-3", Some("None"), true, "1Gi"),
            vmi("move", "node-3", Some("LiveMigrate"), true, "1Gi"),
        ],
        vec![node("node-1", "64Gi")],
    );
    i.pdbs = vec![
        serde_json::from_value(json!({"metadata": {"name": "p-stop", "namespace": "prod"},
            "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "stop"}}},
            "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}})).unwrap(),
        serde_json::from_value(json!({"metadata": {"name": "p-move", "namespace": "prod"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "move"}}},
            "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}})).unwrap(),
    ];
    let plan = plan_drain(&i);
    let stop = plan.blockers.iter().find(|b| b.name == "p-stop").unwrap();
    assert!(stop.blocking && stop.reason == "MaxUnavailablePDB");
    let mv = plan.blockers.iter().find(|b| b.name == "p-move").unwrap();
    assert!(!mv.blocking);
    assert_eq!(plan.verdict, Verdict::WillBlock);
    assert!(
        row(&plan, "stop")
            .explanation
            .contains("PodDisruptionBudget p-stop refuses")
    );
}

#[test]
fn waves_respect_the_per_node_limit_longest_first() {
    let sizes = ["8Gi", "1Gi", "4Gi", "2Gi", "16Gi"];
    let vmis = sizes
        .iter()
        .enumerate()
        .map(|(i, m)| vmi(&format!("v{i}"), "node-3", Some("LiveMigrate"), true, m))
        .collect();
    let plan = plan_drain(&inputs(
        vmis,
        vec![node("node-1", "256Gi"), node("node-2", "256Gi")],
    ));
    // Two at a time from node-3: the 16Gi and 8Gi start first.
    assert_eq!(row(&plan, "v4").wave, Some(1));
    assert_eq!(row(&plan, "v0").wave, Some(1));
    assert_eq!(row(&plan, "v4").start_seconds, Some(0));
    assert!(row(&plan, "v2").start_seconds.unwrap() > 0);
    let max_parallel = (0..plan.estimated_duration_seconds)
        .map(|t| {
            plan.vmis
                .iter()
                .filter(|v| {
                    v.start_seconds.is_some_and(|s| s <= t) && v.end_seconds.is_some_and(|e| e > t)
                })
                .count()
        })
        .max()
        .unwrap();
    assert_eq!(max_parallel, 2);
    let total: u64 = plan.vmis.iter().map(|v| v.estimate_seconds.unwrap()).sum();
    assert!(
        plan.estimated_duration_seconds < total,
        "parallel is faster than serial"
    );
}

#[test]
fn waves_respect_the_cluster_limit_minus_migrations_in_flight() {
    let mut i = inputs(
        vec![
            vmi("a", "node-3", Some("LiveMigrate"), true, "1Gi"),
            vmi("b", "node-3", Some("LiveMigrate"), true, "1Gi"),
        ],
        vec![node("node-1", "64Gi")],
    );
    i.kubevirt = kubevirt(
        json!({"evictionStrategy": "LiveMigrate", "migrations": {"parallelMigrationsPerCluster": 2}}),
    );
    // One migration elsewhere in the cluster takes one of the two slots.
    i.vmims = vec![
        serde_json::from_value(
            json!({"metadata": {"name": "m", "namespace": "prod", "uid": "m"},
        "spec": {"vmiName": "elsewhere"}, "status": {"phase": "Running"}}),
        )
        .unwrap(),
    ];
    let plan = plan_drain(&i);
    assert_eq!(plan.waves, 2);
    assert_ne!(row(&plan, "a").start_seconds, row(&plan, "b").start_seconds);
}

fn vmim(
    name: &str,
    vmi: &str,
    phase: &str,
    priority: Option<&str>,
    created: &str,
) -> VirtualMachineInstanceMigration {
    let mut m = json!({"metadata": {"name": name, "namespace": "prod", "uid": format!("u-{name}"),
        "creationTimestamp": created}, "spec": {"vmiName": vmi}, "status": {"phase": phase}});
    if let Some(p) = priority {
        m["spec"]["priority"] = json!(p);
    }
    serde_json::from_value(m).unwrap()
}

#[test]
fn the_priority_queue_puts_system_critical_first_and_the_rest_behind_the_drain() {
    let mut i = inputs(
        vec![
            vmi("a", "node-3", Some("LiveMigrate"), true, "4Gi"),
            vmi("b", "node-3", Some("LiveMigrate"), true, "4Gi"),
            vmi("c", "node-3", Some("LiveMigrate"), true, "1Gi"),
            vmi("d", "node-3", Some("LiveMigrate"), true, "1Gi"),
        ],
        vec![node("node-1", "256Gi")],
    );
    i.kubevirt
        .as_mut()
        .unwrap()
        .status
        .observed_kube_virt_version = Some("v1.9.0".into());
    i.vmims = vec![
        // c's own evacuation from an earlier attempt: system-critical, created before.
        vmim(
            "evac-c",
            "c",
            "Pending",
            Some("system-critical"),
            "2026-11-29T02:50:00Z",
        ),
        // d's user migration: user-triggered waits behind the drain's system-critical ones.
        vmim(
            "user-d",
            "d",
            "Pending",
            Some("user-triggered"),
            "2026-11-29T02:40:00Z",
        ),
        // Elsewhere in the cluster, behind as well.
        vmim(
            "desched-x",
            "x",
            "Pending",
            Some("system-maintenance"),
            "2026-11-29T02:30:00Z",
        ),
    ];
    let plan = plan_drain(&i);
    assert_eq!(plan.queue.mode, "priority");
    assert!(
        plan.queue.why.contains("GA since v1.9"),
        "{}",
        plan.queue.why
    );
    let names = |q: &[QueuedMigration]| q.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&plan.queue.ahead), ["evac-c"]);
    assert_eq!(names(&plan.queue.behind), ["user-d", "desched-x"]);
    assert!(plan.queue.ahead[0].on_drained_node);
    assert!(!plan.queue.behind[1].on_drained_node);
    // Two outbound slots on node-3: c (ahead) and the longer of a/b start at once.
    assert_eq!(row(&plan, "c").action, Action::AlreadyMigrating);
    assert_eq!(row(&plan, "c").start_seconds, Some(0));
    let (sa, sb) = (
        row(&plan, "a").start_seconds.unwrap(),
        row(&plan, "b").start_seconds.unwrap(),
    );
    assert_eq!(sa.min(sb), 0);
    assert!(sa.max(sb) > 0, "one of a/b waits for a slot");
    // d waits until both a and b have started, though its VMIM is older.
    assert!(row(&plan, "d").start_seconds.unwrap() >= sa.max(sb));
    let last_own = row(&plan, "a").wave.max(row(&plan, "b").wave);
    assert!(
        row(&plan, "d").wave >= last_own,
        "d starts in or after the last wave of a/b"
    );
    assert!(
        plan.assumptions
            .iter()
            .any(|a| a.contains("migration queue priority"))
    );
}

#[test]
fn a_vmi_the_descheduler_marked_is_evacuated_at_system_maintenance_priority() {
    let mut marked = vmi("a", "node-3", Some("LiveMigrate"), true, "4Gi");
    marked.status.evacuation_node_name = Some("node-3".into());
    marked
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(EVICTION_SOURCE_ANNOTATION.into(), "descheduler".into());
    assert_eq!(evacuation_priority(&marked), "system-maintenance");
    let mut i = inputs(
        vec![marked, vmi("d", "node-3", Some("LiveMigrate"), true, "1Gi")],
        vec![node("node-1", "256Gi")],
    );
    i.kubevirt = kubevirt(
        json!({"evictionStrategy": "LiveMigrate", "migrations": {"parallelOutboundMigrationsPerNode": 1}}),
    );
    i.kubevirt
        .as_mut()
        .unwrap()
        .status
        .observed_kube_virt_version = Some("v1.9.1".into());
    i.vmims = vec![vmim(
        "user-d",
        "d",
        "Pending",
        Some("user-triggered"),
        "2026-11-29T02:40:00Z",
    )];
    let plan = plan_drain(&i);
    // user-triggered (50) beats system-maintenance (20): d goes first on the one slot.
    assert_eq!(row(&plan, "d").start_seconds, Some(0));
    assert_eq!(row(&plan, "a").start_seconds, row(&plan, "d").end_seconds);
    assert!(
        row(&plan, "a").explanation.contains("system-maintenance"),
        "{}",
        row(&plan, "a").explanation
    );
    // In FIFO mode the same cluster would run the older VMIM first as well, but a fresh
    // system-critical evacuation would not wait for it under the priority queue:
    let mut critical = i.clone();
    critical.vmis[0].metadata.annotations = None;
    let plan = plan_drain(&critical);
    assert_eq!(row(&plan, "a").start_seconds, Some(0));
    assert!(row(&plan, "d").start_seconds.unwrap() > 0);
}

#[test]
fn before_v1_9_a_vmim_with_spec_priority_shows_the_gate_is_on() {
    let mut i = inputs(
        vec![vmi("a", "node-3", Some("LiveMigrate"), true, "2Gi")],
        vec![node("node-1", "64Gi")],
    );
    // KubeVirt v1.8.4 (the helper): the gate is beta, off unless enabled.
    i.vmims = vec![vmim(
        "maint-x",
        "x",
        "Pending",
        Some("system-maintenance"),
        "2026-11-29T02:40:00Z",
    )];
    let plan = plan_drain(&i);
    assert_eq!(plan.queue.mode, "priority");
    assert!(
        plan.queue.why.contains("carries spec.priority"),
        "{}",
        plan.queue.why
    );
    assert!(plan.queue.ahead.is_empty());
    assert_eq!(plan.queue.behind[0].name, "maint-x");
    assert_eq!(row(&plan, "a").start_seconds, Some(0));
}

#[test]
fn without_priorities_the_queue_is_fifo_and_pending_migrations_elsewhere_go_first() {
    let mut i = inputs(
        vec![vmi("a", "node-3", Some("LiveMigrate"), true, "2Gi")],
        vec![node("node-1", "64Gi")],
    );
    // KubeVirt v1.8.4 (the helper), no VMIM with spec.priority: FIFO by creation.
    i.kubevirt = kubevirt(
        json!({"evictionStrategy": "LiveMigrate", "migrations": {"parallelMigrationsPerCluster": 1}}),
    );
    i.vmims = vec![vmim("user-x", "x", "Pending", None, "2026-11-29T02:40:00Z")];
    let plan = plan_drain(&i);
    assert_eq!(plan.queue.mode, "fifo");
    assert!(
        plan.queue.why.contains("KubeVirt v1.8.4"),
        "{}",
        plan.queue.why
    );
    assert_eq!(plan.queue.ahead.len(), 1);
    assert!(plan.queue.behind.is_empty());
    // The one cluster slot goes to user-x first, for an average migration's time.
    let a = row(&plan, "a");
    assert_eq!(a.start_seconds, a.estimate_seconds);
    assert_eq!(a.wave, Some(1), "waves count the drained VMIs' starts only");
}

#[test]
fn without_pending_migrations_the_queue_changes_nothing() {
    let plan = plan_drain(&inputs(
        vec![vmi("a", "node-3", Some("LiveMigrate"), true, "2Gi")],
        vec![node("node-1", "64Gi")],
    ));
    assert!(plan.queue.ahead.is_empty() && plan.queue.behind.is_empty());
    assert_eq!(row(&plan, "a").start_seconds, Some(0));
    assert!(
        !plan
            .assumptions
            .iter()
            .any(|a| a.contains("migration queue"))
    );
}

fn pdb(v: Value) -> PodDisruptionBudget {
    serde_json::from_value(v).unwrap()
}

#[test]
fn an_empty_selector_covers_every_launcher_pod_of_its_namespace() {
    let mut i = inputs(
        vec![
            vmi("stop", "node-3", Some("None"), true, "1Gi"),
            vmi("move", "node-3", Some("LiveMigrate"), true, "1Gi"),
        ],
        vec![node("node-1", "64Gi")],
    );
    i.pdbs = vec![
        pdb(json!({"metadata": {"name": "all", "namespace": "prod"},
            "spec": {"maxUnavailable": 0, "selector": {}},
            "status": {"disruptionsAllowed": 0, "currentHealthy": 2, "desiredHealthy": 2, "expectedPods": 2}})),
        // Same selector in another namespace: not ours.
        pdb(json!({"metadata": {"name": "all", "namespace": "dev"},
            "spec": {"maxUnavailable": 0, "selector": {}},
            "status": {"disruptionsAllowed": 0}})),
    ];
    let plan = plan_drain(&i);
    assert_eq!(plan.verdict, Verdict::WillBlock);
    let blockers: Vec<&DrainBlocker> = plan.blockers.iter().filter(|b| b.kind == "pdb").collect();
    assert_eq!(blockers.len(), 1);
    assert_eq!(blockers[0].namespace.as_deref(), Some("prod"));
    assert_eq!(blockers[0].vmis, ["prod/move", "prod/stop"]);
    assert!(
        blockers[0]
            .message
            .contains("evicting prod/stop is answered 429"),
        "{}",
        blockers[0].message
    );
    assert!(
        blockers[0]
            .message
            .contains("needs 2 healthy pods and has 2 currently")
    );
    assert_eq!(row(&plan, "move").action, Action::LiveMigrate);
    assert!(row(&plan, "stop").end_seconds.is_none());
}

#[test]
fn two_pdbs_block_a_shutdown_with_the_500_and_an_invalid_one_is_reported() {
    let mut i = inputs(
        vec![vmi("stop", "node-3", Some("None"), true, "1Gi")],
        vec![node("node-1", "64Gi")],
    );
    let allows = json!({"disruptionsAllowed": 5, "currentHealthy": 5, "desiredHealthy": 0, "expectedPods": 5});
    i.pdbs = vec![
        pdb(json!({"metadata": {"name": "by-app", "namespace": "prod"},
            "spec": {"minAvailable": 0, "selector": {"matchLabels": {"app": "stop"}}}, "status": allows})),
        pdb(json!({"metadata": {"name": "by-expr", "namespace": "prod"},
            "spec": {"minAvailable": 0, "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["stop"]}]}},
            "status": allows})),
        pdb(json!({"metadata": {"name": "broken", "namespace": "prod"},
            "spec": {"minAvailable": 1, "selector": {"matchExpressions": [{"key": "app", "operator": "Foo"}]}}})),
    ];
    let plan = plan_drain(&i);
    assert_eq!(plan.verdict, Verdict::WillBlock);
    let two = plan
        .blockers
        .iter()
        .find(|b| b.reason == "MultiplePodDisruptionBudgets")
        .unwrap();
    assert!(two.blocking);
    assert_eq!(two.name, "by-app + by-expr");
    assert!(two.message.contains(crate::policy::pdb::MORE_THAN_ONE_PDB));
    let broken = plan.blockers.iter().find(|b| b.name == "broken").unwrap();
    assert!(!broken.blocking);
    assert_eq!(broken.reason, "InvalidSelector");
    assert!(row(&plan, "stop").explanation.contains("500"));
}

#[test]
fn two_pdbs_over_a_migrating_vmi_matter_only_on_kubevirt_up_to_1_4() {
    let mut i = inputs(
        vec![vmi("move", "node-3", Some("LiveMigrate"), true, "1Gi")],
        vec![node("node-1", "64Gi")],
    );
    let allows = json!({"disruptionsAllowed": 1, "currentHealthy": 1, "desiredHealthy": 0, "expectedPods": 1});
    i.pdbs = vec![
        pdb(json!({"metadata": {"name": "all", "namespace": "prod"},
            "spec": {"minAvailable": 0, "selector": {}}, "status": allows})),
        pdb(
            json!({"metadata": {"name": "kubevirt-disruption-budget-abc", "namespace": "prod"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"kubevirt.io/created-by": "uid-move"}}},
            "status": allows}),
        ),
    ];
    // v1.8.4 (the helper): the webhook answers every eviction of a migrating VMI.
    let plan = plan_drain(&i);
    assert!(
        !plan
            .blockers
            .iter()
            .any(|b| b.reason == "MultiplePodDisruptionBudgets")
    );
    assert_eq!(plan.verdict, Verdict::WillComplete);
    i.kubevirt
        .as_mut()
        .unwrap()
        .status
        .observed_kube_virt_version = Some("v1.4.2".into());
    let plan = plan_drain(&i);
    let b = plan
        .blockers
        .iter()
        .find(|b| b.reason == "MultiplePodDisruptionBudgets")
        .unwrap();
    assert!(!b.blocking, "the migration goes on");
    assert!(b.message.contains("kubectl drain stops"), "{}", b.message);
    assert_eq!(plan.verdict, Verdict::WillComplete);
}

#[test]
fn a_budget_smaller_than_the_shutdowns_warns_without_blocking() {
    let mut i = inputs(
        vec![
            vmi("s1", "node-3", Some("None"), true, "1Gi"),
            vmi("s2", "node-3", Some("None"), true, "1Gi"),
        ],
        vec![node("node-1", "64Gi")],
    );
    // No status: computed from the two Ready launcher pods, minAvailable 1 -> 1 allowed.
    i.pdbs = vec![pdb(
        json!({"metadata": {"name": "one", "namespace": "prod"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"kubevirt.io": "virt-launcher"}}}}),
    )];
    let plan = plan_drain(&i);
    assert_eq!(plan.verdict, Verdict::WillCompleteWithShutdowns);
    let b = plan.blockers.iter().find(|b| b.name == "one").unwrap();
    assert!(!b.blocking);
    assert_eq!(b.reason, "BudgetShorterThanShutdowns");
    assert!(
        b.message
            .contains("allows 1 disruption(s): 2 healthy, 1 desired, 2 expected; computed"),
        "{}",
        b.message
    );
}

#[test]
fn the_pods_of_a_pdb_without_status_are_kept_whole() {
    let other = |name: &str, app: &str| -> Pod {
        serde_json::from_value(
            json!({"metadata": {"name": name, "namespace": "prod", "labels": {"app": app}},
            "spec": {"nodeName": "node-1", "containers": []}, "status": {"phase": "Running"}}),
        )
        .unwrap()
    };
    let pdbs = vec![
        pdb(
            json!({"metadata": {"name": "unsynced", "namespace": "prod"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}}),
        ),
        pdb(json!({"metadata": {"name": "synced", "namespace": "prod"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
            "status": {"disruptionsAllowed": 1}})),
    ];
    let (kept, rest) = pods_of_unsynced_pdbs(
        vec![other("db-0", "db"), other("web-0", "web")],
        &pdbs,
        |rest| rest.collect::<Vec<Pod>>(),
    );
    let names =
        |ps: &[Pod]| -> Vec<String> { ps.iter().filter_map(|p| p.metadata.name.clone()).collect() };
    assert_eq!(names(&kept), ["db-0"]);
    assert_eq!(names(&rest), ["web-0"]);
    // The plan computes the unsynced budget from them: with db-0 split away (its node is
    // not drained) the PDB would count one pod fewer.
    let mut i = inputs(
        vec![vmi("db", "node-3", Some("None"), true, "1Gi")],
        vec![node("node-1", "64Gi")],
    );
    i.pods[0]
        .metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert("app".into(), "db".into());
    i.pdbs = pdbs.clone();
    let whole = DrainInputs {
        pods: i.pods.iter().cloned().chain(kept).collect(),
        ..i.clone()
    };
    let plan = plan_drain(&whole);
    let report = plan.pdbs.iter().find(|p| p.name == "unsynced").unwrap();
    let b = report.budget.as_ref().unwrap();
    assert_eq!(
        (b.expected_pods, b.current_healthy),
        (2, 1),
        "db-0 is not Ready"
    );
    assert_eq!(b.disruptions_allowed, 0);
    let plan = plan_drain(&i);
    let b = plan
        .pdbs
        .iter()
        .find(|p| p.name == "unsynced")
        .unwrap()
        .budget
        .clone()
        .unwrap();
    assert_eq!(b.expected_pods, 1);
}

#[test]
fn finished_vmis_are_skipped() {
    let mut failed = vmi("gone", "node-3", Some("LiveMigrate"), true, "1Gi");
    failed.status.phase = Some(crate::model::vmi::VmiPhase::Failed);
    let plan = plan_drain(&inputs(vec![failed], vec![node("node-1", "64Gi")]));
    assert!(plan.vmis.is_empty());
    assert_eq!(plan.skipped[0].reason, "prod/gone");
}

#[test]
fn several_nodes_drained_together_are_not_targets() {
    let mut i = inputs(
        vec![vmi("a", "node-3", Some("LiveMigrate"), true, "1Gi")],
        vec![
            node("node-1", "64Gi"),
            node("node-2", "64Gi"),
            node("node-3", "64Gi"),
        ],
    );
    i.drain = vec!["node-3".into(), "node-1".into()];
    let plan = plan_drain(&i);
    assert_eq!(row(&plan, "a").target.as_deref(), Some("node-2"));
}

#[test]
fn the_recipe_places_running_vmis_biggest_first_and_skips_finished_ones() {
    let mut done = vmi("done", "node-3", None, true, "8Gi");
    done.status.phase = Some("Succeeded".into());
    let small = vmi("small", "node-3", None, true, "1Gi");
    let big = vmi("big", "node-3", None, true, "4Gi");
    let all = [small, done, big];
    let (skipped, running) = running_biggest_first(&all);
    let names: Vec<&str> = running.iter().map(|v| v.name()).collect();
    assert_eq!(names, ["big", "small"]);
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].reason, "prod/done");
    assert_eq!(
        skipped[0].message,
        "phase Succeeded: no running pod, the drain does not touch it"
    );
}

#[test]
fn a_vmi_without_status_node_is_on_its_labelled_node() {
    let mut v = vmi("a", "node-3", None, true, "1Gi");
    assert_eq!(vmi_node(&v), "node-3");
    v.status.node_name = None;
    assert_eq!(vmi_node(&v), "node-3", "from kubevirt.io/nodeName");
    v.metadata.labels = None;
    assert_eq!(vmi_node(&v), "");
}

#[test]
fn a_pending_migration_without_a_target_does_not_shorten_another_slot() {
    // "a" migrates (running, 1 Gi: a short remainder); "b" has a Pending VMIM whose target
    // pod fits nowhere. Only a migration that counts as running holds a slot, so "b" must not
    // stretch "a"'s slot to the 300 s unschedulable timeout.
    let mut i = inputs(
        vec![
            vmi("a", "node-3", Some("LiveMigrate"), true, "1Gi"),
            vmi("b", "node-3", Some("LiveMigrate"), true, "1Gi"),
            vmi("c", "node-3", Some("LiveMigrate"), true, "1Gi"),
        ],
        vec![node("node-1", "64Gi")],
    );
    // "b" needs a label no node has.
    i.vmis[1].spec.node_selector = [("disk".to_string(), "nvme".to_string())].into();
    i.kubevirt = kubevirt(json!({"evictionStrategy": "LiveMigrate",
        "migrations": {"parallelOutboundMigrationsPerNode": 1}}));
    i.now = Some(crate::model::Time("2026-11-29T03:00:00Z".parse().unwrap()));
    i.vmims = vec![
        vmim("ma", "a", "Running", None, "2026-11-29T02:59:50Z"),
        vmim("mb", "b", "Pending", None, "2026-11-29T02:59:50Z"),
    ];
    i.vmis[0].status.migration_state = Some(
        serde_json::from_value(json!({"migrationUid": "u-ma", "targetNode": "node-1",
            "startTimestamp": "2026-11-29T02:59:50Z"}))
        .unwrap(),
    );
    let plan = plan_drain(&i);
    assert_eq!(row(&plan, "b").action, Action::NoTarget);
    let a_end = row(&plan, "a").end_seconds.unwrap();
    // "c" waits for the one outbound slot, which "a" frees at its own end.
    assert!(a_end < 290, "{a_end}");
    assert_eq!(
        row(&plan, "c").start_seconds,
        Some(a_end),
        "{:#?}",
        row(&plan, "c")
    );
}

/// node-3 with three 2Gi VMs under a 64 MiB/s cluster cap: `idle` dirties nothing, `busy`
/// twice the cap, `pc` as much but a MigrationPolicy allows it post-copy.
fn three_guests() -> DrainInputs {
    let mut pc = vmi("pc", "node-3", Some("LiveMigrate"), true, "2Gi");
    pc.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert("tier".into(), "cache".into());
    let mut i = inputs(
        vec![
            vmi("idle", "node-3", Some("LiveMigrate"), true, "2Gi"),
            vmi("busy", "node-3", Some("LiveMigrate"), true, "2Gi"),
            pc,
        ],
        vec![node("node-1", "64Gi"), node("node-3", "64Gi")],
    );
    i.kubevirt = kubevirt(json!({"evictionStrategy": "LiveMigrate",
        "migrations": {"bandwidthPerMigration": "64Mi"}}));
    i.policies = vec![
        serde_json::from_value(json!({"metadata": {"name": "allow-pc"}, "spec": {
            "allowPostCopy": true,
            "selectors": {"virtualMachineInstanceSelector": {"tier": "cache"}}}}))
        .unwrap(),
    ];
    i
}

fn rates(pairs: &[(&str, u64)]) -> convergence::DirtyRates {
    convergence::DirtyRates {
        source: "test".into(),
        rates: pairs
            .iter()
            .map(|(n, r)| (("prod".to_string(), n.to_string()), *r))
            .collect(),
        nodes_read: ["node-3".to_string()].into(),
        notes: Vec::new(),
    }
}

#[test]
fn dirty_rates_flag_exactly_the_migration_that_cannot_complete() {
    const MIB: u64 = 1 << 20;
    let without = plan_drain(&three_guests());
    assert!(without.convergence.is_none());
    assert!(without.vmis.iter().all(|v| v.prediction.is_none()));
    let json = serde_json::to_value(&without).unwrap();
    assert!(json.get("convergence").is_none() && json["vmis"][0].get("prediction").is_none());

    let mut i = three_guests();
    i.dirty_rates = Some(rates(&[
        ("idle", 0),
        ("busy", 128 * MIB),
        ("pc", 128 * MIB),
    ]));
    let plan = plan_drain(&i);
    let report = plan.convergence.as_ref().unwrap();
    assert_eq!(report.will_not_complete, ["prod/busy"]);
    assert_eq!(report.by_switching, ["prod/pc"]);
    assert_eq!((report.predicted, report.with_dirty_rate), (3, 3));

    let busy = row(&plan, "busy");
    let c = busy.convergence.as_ref().unwrap();
    assert_eq!(c.completes, Some(false));
    assert!(
        c.alternatives
            .iter()
            .any(|a| a.starts_with("allowPostCopy: true"))
    );
    assert_eq!(busy.prediction.as_ref().unwrap().converges, Some(false));
    // Not a fast one: no estimate, and its slot is held until KubeVirt aborts it (450 s).
    assert_eq!(busy.estimate_seconds, None);
    let (start, end) = (busy.start_seconds.unwrap(), busy.end_seconds.unwrap());
    assert_eq!(end - start, SETUP_SECONDS + 450);

    let pc = row(&plan, "pc");
    let c = pc.convergence.as_ref().unwrap();
    assert_eq!(c.completes, Some(true));
    assert_eq!(c.under, "MigrationPolicy allow-pc");
    assert_eq!(pc.estimate_seconds, Some(SETUP_SECONDS + 482));

    let idle = row(&plan, "idle");
    assert_eq!(idle.convergence.as_ref().unwrap().completes, Some(true));
    assert_eq!(idle.estimate_seconds, Some(SETUP_SECONDS + 32));
    // Two outbound slots: busy and pc (the longest) first, idle when the first frees up.
    assert_eq!(idle.wave, Some(2));
    assert_eq!(
        plan.estimated_duration_seconds,
        pc.end_seconds.unwrap().max(idle.end_seconds.unwrap())
    );
    assert_eq!(
        plan.verdict,
        Verdict::WillComplete,
        "a hint does not change the verdict"
    );
    assert!(
        plan.assumptions
            .iter()
            .any(|a| a.starts_with("with dirty rates"))
    );

    // A rate missing for one VMI: it keeps memory over bandwidth, and the plan says why.
    i.dirty_rates = Some(rates(&[("busy", 128 * MIB)]));
    let plan = plan_drain(&i);
    assert_eq!(
        row(&plan, "idle").estimate_seconds,
        Some(SETUP_SECONDS + 32)
    );
    let notes = &plan.convergence.as_ref().unwrap().notes;
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("prod/idle, prod/pc") || notes[0].contains("prod/pc, prod/idle"),
        "{notes:?}"
    );
}
