//! `vmctl plan-drain` on the example cluster, from files and live.

mod common;
mod support;

use common::*;
use serde_json::Value;
use support::FakeApiServer;
use vmctl::cluster::Kind;

fn plan_json(args: &[&str]) -> (Value, Option<i32>) {
    let mut all = vec!["--from", "examples/cluster", "plan-drain", "-o", "json"];
    all.extend_from_slice(args);
    let out = vmctl(all);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    (
        serde_json::from_slice(&out.stdout).unwrap(),
        out.status.code(),
    )
}

fn vmi<'a>(plan: &'a Value, name: &str) -> &'a Value {
    plan["vmis"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap()
}

#[test]
fn node_3_table() {
    let out = vmctl(["--from", "examples/cluster", "plan-drain", "node-3"]);
    assert_eq!(out.status.code(), Some(1), "will-block exits 1");
    insta::assert_snapshot!("plan_drain_node_3", stdout(&out));
}

#[test]
fn node_3_wide() {
    let out = vmctl([
        "--from",
        "examples/cluster",
        "plan-drain",
        "node-3",
        "-o",
        "wide",
    ]);
    insta::assert_snapshot!("plan_drain_node_3_wide", stdout(&out));
}

#[test]
fn node_3_json_contract() {
    let (plan, code) = plan_json(&["node-3"]);
    assert_eq!(code, Some(1));
    assert_eq!(plan["apiVersion"], "vmctl/v1alpha1");
    assert_eq!(plan["kind"], "DrainPlan");
    assert_eq!(plan["nodes"], serde_json::json!(["node-3"]));
    assert_eq!(plan["verdict"], "will-block");
    assert!(plan["estimatedDurationSeconds"].as_u64().is_some());
    for field in [
        "namespace",
        "name",
        "evictionStrategy",
        "evictionStrategySource",
        "liveMigratable",
        "reasons",
        "action",
        "target",
        "wave",
        "estimateSeconds",
        "budgetSeconds",
    ] {
        for v in plan["vmis"].as_array().unwrap() {
            assert!(v.get(field).is_some(), "vmis[].{field} missing in {v}");
        }
    }
    let erp = vmi(&plan, "legacy-erp-01");
    assert_eq!(erp["action"], "blocks-drain");
    assert_eq!(erp["reasons"][0]["reason"], "DisksNotLiveMigratable");
    assert_eq!(
        vmi(&plan, "sip-gateway-01")["action"],
        "shutdown-not-migratable"
    );
    assert_eq!(
        vmi(&plan, "workload-md-0-6dcnf-lz7h4")["action"],
        "external"
    );
    assert_eq!(vmi(&plan, "app-server-02")["action"], "already-migrating");
    assert_eq!(vmi(&plan, "app-server-02")["evacuationNode"], "node-3");
    assert_eq!(vmi(&plan, "analytics-warehouse-01")["action"], "no-target");
    let loadgen = vmi(&plan, "loadgen-01");
    assert_eq!(loadgen["action"], "live-migrate");
    assert_eq!(loadgen["evictionStrategySource"], "cluster-config");
    assert!(loadgen["target"].is_string());
    assert_eq!(loadgen["wave"], 1);
    // 2Gi guest, 150 s/GiB, ceil(2.147 GB) = 3.
    assert_eq!(loadgen["budgetSeconds"], 450);
    // Blocking VMs and PDBs come first.
    let blockers = plan["blockers"].as_array().unwrap();
    assert!(
        blockers
            .iter()
            .any(|b| b["kind"] == "pdb" && b["name"] == "sip-gateway-pdb" && b["blocking"] == true)
    );
    let first_non_blocking = blockers
        .iter()
        .position(|b| b["blocking"] == false)
        .unwrap_or(blockers.len());
    assert!(
        blockers[..first_non_blocking]
            .iter()
            .all(|b| b["blocking"] == true)
    );
    assert_eq!(plan["vmis"][0]["action"], "blocks-drain");
}

#[test]
fn draining_two_nodes_sees_quota_and_incoming_post_copy() {
    let (plan, _) = plan_json(&["node-1", "node-2"]);
    assert_eq!(plan["nodes"], serde_json::json!(["node-1", "node-2"]));
    let quota = plan["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["kind"] == "quota")
        .unwrap();
    assert_eq!(quota["namespace"], "tenant-a");
    // Targets exclude both drained nodes.
    for v in plan["vmis"].as_array().unwrap() {
        if v["action"] == "live-migrate" {
            assert!(
                !["node-1", "node-2"].contains(&v["target"].as_str().unwrap()),
                "{v}"
            );
        }
    }
    let (plan, _) = plan_json(&["node-1"]);
    let incoming = &plan["incoming"][0];
    assert_eq!(incoming["name"], "pg-orders-01");
    assert_eq!(incoming["pointOfNoReturn"], true);
}

#[test]
fn a_drain_without_blockers_exits_0() {
    let (plan, code) = plan_json(&["node-4"]);
    assert_eq!(plan["verdict"], "will-complete-with-shutdowns");
    assert_eq!(code, Some(0));
    assert_eq!(vmi(&plan, "ml-inference-01")["action"], "shutdown");
}

#[test]
fn bandwidth_changes_the_estimate_only_where_the_cluster_sets_none() {
    // The example cluster sets bandwidthPerMigration 64Mi, which wins over --bandwidth.
    let (slow, _) = plan_json(&["node-3", "--bandwidth", "10Mi"]);
    let (fast, _) = plan_json(&["node-3", "--bandwidth", "10Gi"]);
    assert_eq!(
        vmi(&slow, "loadgen-01")["estimateSeconds"],
        vmi(&fast, "loadgen-01")["estimateSeconds"]
    );
    let out = vmctl([
        "--from",
        "examples/cluster",
        "plan-drain",
        "node-3",
        "--bandwidth",
        "fast",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--bandwidth \"fast\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn yaml_output_parses() {
    let out = vmctl([
        "--from",
        "examples/cluster",
        "plan-drain",
        "node-3",
        "-o",
        "yaml",
    ]);
    let v: serde_yaml::Value = serde_yaml::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "will-block");
}

#[test]
fn an_unknown_node_suggests_close_names() {
    let out = vmctl(["--from", "examples/cluster", "plan-drain", "node-33"]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: node \"node-33\" not found"),
        "{err}"
    );
    assert!(err.contains("did you mean node-3"), "{err}");
}

#[test]
fn missing_kubevirt_cr_and_a_vmi_without_status() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("c.yaml"),
        "apiVersion: v1\nkind: List\nitems:\n\
         - {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {kubevirt.io/schedulable: 'true'}}, status: {allocatable: {memory: 64Gi}}}\n\
         - {apiVersion: v1, kind: Node, metadata: {name: n2, labels: {kubevirt.io/schedulable: 'true'}}, status: {allocatable: {memory: 64Gi}}}\n\
         - {apiVersion: kubevirt.io/v1, kind: VirtualMachineInstance, metadata: {name: fresh, namespace: default, labels: {kubevirt.io/nodeName: n1}}, spec: {domain: {memory: {guest: 1Gi}}}}\n\
         - {apiVersion: kubevirt.io/v1, kind: VirtualMachineInstance, metadata: {name: mover, namespace: default, labels: {kubevirt.io/nodeName: n1}}, spec: {evictionStrategy: LiveMigrate, domain: {memory: {guest: 8Gi}}}, status: {nodeName: n1, phase: Running, conditions: [{type: LiveMigratable, status: 'True'}]}}\n",
    )
    .unwrap();
    let out = vmctl(["--from", dir.path().to_str().unwrap(), "plan-drain", "n1"]);
    let text = stdout(&out);
    assert!(
        text.contains("no KubeVirt CR found: KubeVirt's defaults apply"),
        "{text}"
    );
    assert!(text.contains("fresh"), "{text}");
    assert!(!stderr(&out).contains("panicked"));
    let out = vmctl([
        "--from",
        dir.path().to_str().unwrap(),
        "plan-drain",
        "n1",
        "-o",
        "json",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["defaultsAssumed"], true);
    assert_eq!(
        vmi(&v, "fresh")["action"],
        "shutdown",
        "cluster default None"
    );
    assert_eq!(vmi(&v, "mover")["target"], "n2");
    // No bandwidthPerMigration here, so --bandwidth drives the estimate: 15 s setup + 8Gi / rate.
    let estimate = |rate: &str| {
        let out = vmctl([
            "--from",
            dir.path().to_str().unwrap(),
            "plan-drain",
            "n1",
            "-o",
            "json",
            "--bandwidth",
            rate,
        ]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        vmi(&v, "mover")["estimateSeconds"].as_u64().unwrap()
    };
    assert_eq!(estimate("1Gi"), 15 + 8);
    assert_eq!(estimate("128Mi/s"), 15 + 64);
}

fn live(server: &FakeApiServer, args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    vmctl_live(&server.write_kubeconfig(dir.path()), args)
}

#[test]
fn live_equals_snapshot_and_is_read_only() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    for format in ["table", "json"] {
        let l = live(&server, &["plan-drain", "node-3", "-o", format]);
        let f = vmctl([
            "--from",
            "examples/cluster",
            "plan-drain",
            "node-3",
            "-o",
            format,
        ]);
        assert_eq!(l.status.code(), f.status.code());
        assert_eq!(
            normalise_source(&stdout(&l)),
            normalise_source(&stdout(&f)),
            "-o {format}"
        );
    }
    let writes = server.count_requests(|r| r.method != support::Method::GET);
    assert_eq!(writes, 0, "plan-drain never mutates");
}

#[test]
fn live_requests_do_not_grow_with_the_number_of_vmis() {
    fn cluster(n: usize) -> Vec<Value> {
        let mut objects = vec![
            serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {"kubevirt.io/schedulable": "true"}}, "status": {"allocatable": {"memory": "100Ti"}}}),
            serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-2", "labels": {"kubevirt.io/schedulable": "true"}}, "status": {"allocatable": {"memory": "100Ti"}}}),
        ];
        for i in 0..n {
            let uid = format!("uid-{i}");
            objects.push(serde_json::json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                "metadata": {"name": format!("vm-{i:05}"), "namespace": "prod", "uid": uid, "labels": {"kubevirt.io/nodeName": "node-1"}},
                "spec": {"evictionStrategy": "LiveMigrate", "domain": {"memory": {"guest": "1Gi"}}},
                "status": {"nodeName": "node-1", "phase": "Running", "conditions": [{"type": "LiveMigratable", "status": "True"}]}}));
            objects.push(serde_json::json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("virt-launcher-vm-{i:05}"), "namespace": "prod",
                             "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": uid}},
                "spec": {"nodeName": "node-1", "containers": [{"name": "compute", "resources": {"requests": {"memory": "1300Mi"}}}]},
                "status": {"phase": "Running"}}));
        }
        objects
    }
    let count = |n: usize| {
        let server = FakeApiServer::start_blocking(cluster(n));
        let out = live(&server, &["plan-drain", "node-1", "-o", "json"]);
        let v: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", stderr(&out)));
        assert_eq!(v["vmis"].as_array().unwrap().len(), n);
        (
            server.request_count(),
            server.list_count(Kind::VirtualMachineInstance),
            server.list_count(Kind::Pod),
        )
    };
    let (small, small_vmi, small_pods) = count(5);
    let (large, large_vmi, large_pods) = count(1100);
    // VMIs are listed twice (on the node, migrating into it): 1+1 pages vs 3+1.
    assert_eq!((small_vmi, small_pods), (2, 1));
    assert_eq!((large_vmi, large_pods), (4, 3));
    assert_eq!(large - small, 4, "only extra pages: {small} vs {large}");
}

// ------------------------------------------------ scheduler rules (tests/fixtures/drain-sched)

const SCHED_NOW: &str = "2026-12-01T00:00:00Z";

fn sched_dir(fixture: &str) -> String {
    format!("tests/fixtures/drain-sched/{fixture}")
}

fn sched_plan_from(dir: &str, node: &str) -> (Value, Option<i32>) {
    let out = vmctl([
        "--from",
        dir,
        "--now",
        SCHED_NOW,
        "plan-drain",
        node,
        "-o",
        "json",
    ]);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    (
        serde_json::from_slice(&out.stdout).unwrap(),
        out.status.code(),
    )
}

fn sched_plan(fixture: &str, node: &str) -> (Value, Option<i32>) {
    sched_plan_from(&sched_dir(fixture), node)
}

fn no_target_message(v: &Value) -> String {
    assert_eq!(v["action"], "no-target", "{v}");
    let last = v["reasons"].as_array().unwrap().last().unwrap();
    assert_eq!(last["reason"], "NoFeasibleTarget");
    last["message"].as_str().unwrap().to_string()
}

#[test]
fn a_gpu_vm_with_no_other_usable_gpu_node_has_no_target() {
    let (plan, code) = sched_plan("gpu", "gpu-1");
    assert_eq!(code, Some(1));
    assert_eq!(plan["verdict"], "will-block");
    let message = no_target_message(vmi(&plan, "trainer"));
    assert_eq!(
        message,
        "no node can take a 16.3 GiB target pod with 1 nvidia.com/GRID_A10-4Q: 0/4 nodes fit \
         (2 insufficient nvidia.com/GRID_A10-4Q, 1 is the source, \
         1 untolerated taint dedicated=gpu:NoSchedule)"
    );
    assert_eq!(
        vmi(&plan, "trainer")["fix"],
        "free nvidia.com/GRID_A10-4Q on a fitting node or add one that advertises it"
    );
    // The passthrough GPU VM is not migratable: it is shut down, never placed.
    let render = vmi(&plan, "render");
    assert_eq!(render["action"], "shutdown-not-migratable");
    assert!(render["target"].is_null());
    let out = vmctl([
        "--from",
        &sched_dir("gpu"),
        "--now",
        SCHED_NOW,
        "plan-drain",
        "gpu-1",
    ]);
    insta::assert_snapshot!("plan_drain_sched_gpu", stdout(&out));
}

#[test]
fn hugepages_are_a_resource_of_their_own() {
    let (plan, code) = sched_plan("hugepages", "node-a");
    assert_eq!(code, Some(0));
    // node-b (most memory) has no 1Gi hugepages, node-c only 4Gi of them left.
    assert_eq!(vmi(&plan, "db")["target"], "node-d");
}

#[test]
fn a_prefer_no_schedule_node_is_chosen_last_and_said_so() {
    let (plan, _) = sched_plan("prefer", "node-a");
    let first = vmi(&plan, "web-1");
    assert_eq!(
        first["target"], "node-new",
        "untainted first, despite less memory"
    );
    assert!(
        !first["explanation"]
            .as_str()
            .unwrap()
            .contains("PreferNoSchedule")
    );
    let second = vmi(&plan, "web-2");
    assert_eq!(second["target"], "node-old", "node-new is full now");
    assert!(
        second["explanation"].as_str().unwrap().contains(
            "node-old has 1 PreferNoSchedule taint(s) the VMI does not tolerate; no node with fewer fits"
        ),
        "{second}"
    );
}

#[test]
fn a_do_not_schedule_spread_constraint_excludes_the_crowded_zone() {
    let (plan, _) = sched_plan("spread", "node-c1");
    // node-a1 (zone a, 2 kafka pods) would make the skew 2; node-x has no zone label.
    assert_eq!(vmi(&plan, "kafka-3")["target"], "node-b1");
    // With maxSkew 2 zone a is allowed again and wins on memory; node-x stays out.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(format!("{}/cluster.yaml", sched_dir("spread"))).unwrap();
    assert!(text.contains("maxSkew: 1"));
    std::fs::write(
        dir.path().join("cluster.yaml"),
        text.replace("maxSkew: 1", "maxSkew: 2"),
    )
    .unwrap();
    let (plan, _) = sched_plan_from(dir.path().to_str().unwrap(), "node-c1");
    assert_eq!(vmi(&plan, "kafka-3")["target"], "node-a1");
    // With maxSkew 1 and zone b crowded too, nothing fits, and the reason says why.
    std::fs::write(
        dir.path().join("cluster.yaml"),
        text.replace(
            "name: kafka-other-ns\n    namespace: staging",
            "name: kafka-5\n    namespace: prod",
        ),
    )
    .unwrap();
    let (plan, _) = sched_plan_from(dir.path().to_str().unwrap(), "node-c1");
    let message = no_target_message(vmi(&plan, "kafka-3"));
    assert!(
        message.ends_with(
            "0/4 nodes fit (2 didn't match pod topology spread constraints, \
             1 didn't match pod topology spread constraints (missing required label), 1 is the source)"
        ),
        "{message}"
    );
}

#[test]
fn an_exists_toleration_without_a_key_tolerates_every_taint() {
    let (plan, _) = sched_plan("tolerations", "node-a");
    assert_eq!(vmi(&plan, "infra-dns")["target"], "node-infra");
    assert_eq!(vmi(&plan, "app")["target"], "node-plain");
}

#[test]
fn cpu_runs_out_before_memory() {
    let (plan, code) = sched_plan("cpu", "node-a");
    assert_eq!(code, Some(1));
    // node-b has the most memory but 4 of its 32 cpu left.
    assert_eq!(vmi(&plan, "big-cpu")["target"], "node-c");
    let more = vmi(&plan, "more-cpu");
    assert_eq!(
        no_target_message(more),
        "no node can take a 2.4 GiB target pod with 8 cpu: 0/3 nodes fit (2 insufficient cpu, 1 is the source)"
    );
    assert_eq!(more["fix"], "free cpu on a fitting node");
}

#[test]
fn an_upgrade_drain_names_the_host_model_cpu_each_vm_needs() {
    let (plan, code) = sched_plan("cpu-model", "old-1");
    assert_eq!(code, Some(1));
    let erp = vmi(&plan, "erp-app");
    let message = no_target_message(erp);
    assert!(
        message.contains("2 no host-model CPU Cascadelake-Server support")
            && message.contains("\"Preemption is not helpful for scheduling\"")
            && message.contains("cpu-model-migration.node.kubevirt.io/Cascadelake-Server=true"),
        "{message}"
    );
    assert!(
        erp["fix"]
            .as_str()
            .unwrap()
            .starts_with("keep a node with CPU model Cascadelake-Server schedulable"),
        "{erp}"
    );
    // A named CPU model is not bound to the source's host model.
    assert_eq!(vmi(&plan, "pinned-model")["action"], "live-migrate");
    let out = vmctl([
        "--from",
        &sched_dir("cpu-model"),
        "--now",
        SCHED_NOW,
        "plan-drain",
        "old-1",
        "-o",
        "wide",
    ]);
    insta::assert_snapshot!("plan_drain_sched_cpu_model_wide", stdout(&out));
}
