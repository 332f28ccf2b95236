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

/// Issue 33: the headline said "3 blocker(s)" over a list of four entries (one was a wait).
/// Each count in the headline is the number of entries under its heading, on every node of
/// both example clusters.
#[test]
fn the_headline_counts_what_the_lists_hold() {
    for (from, nodes) in [
        (
            "examples/cluster",
            &["node-1", "node-2", "node-3", "node-4"][..],
        ),
        (
            "examples/incidents",
            &["node-1", "node-2", "node-3", "node-4"][..],
        ),
    ] {
        for node in nodes {
            let out = vmctl(["--from", from, "plan-drain", node]);
            let text = stdout(&out);
            let count = |needle: &str| -> usize {
                let head = text.lines().next().unwrap_or_default();
                head.split([',', '—'])
                    .map(str::trim)
                    .find_map(|f| f.strip_suffix(needle).and_then(|n| n.trim().parse().ok()))
                    .unwrap_or(0)
            };
            let under = |heading: &str| -> usize {
                text.lines()
                    .skip_while(|l| !l.starts_with(heading))
                    .skip(1)
                    .take_while(|l| l.starts_with("  "))
                    .count()
            };
            assert_eq!(
                count("blocker(s)"),
                under("Blockers:"),
                "{from} {node}:\n{text}"
            );
            assert_eq!(count("wait(s)"), under("Waits"), "{from} {node}:\n{text}");
        }
    }
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
        stderr(&out)
            .contains("invalid value 'fast' for '--bandwidth <RATE>': expected a rate such as 1Gi"),
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
    let v: serde_json::Value = serde_saphyr::from_slice(&out.stdout).unwrap();
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

/// `plan-drain node-1 -o json` on a fixture cluster of tests/fixtures/drain-pdb.
fn pdb_case(case: &str) -> (Value, Option<i32>) {
    let dir = format!("tests/fixtures/drain-pdb/{case}");
    let out = vmctl([
        "--from",
        dir.as_str(),
        "--now",
        EXAMPLE_NOW,
        "plan-drain",
        "node-1",
        "-o",
        "json",
    ]);
    assert!(stderr(&out).is_empty(), "{case}: {}", stderr(&out));
    (
        serde_json::from_slice(&out.stdout).unwrap(),
        out.status.code(),
    )
}

fn pdb_blockers(plan: &Value) -> Vec<&Value> {
    plan["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["kind"] == "pdb")
        .collect()
}

#[test]
fn an_empty_selector_pdb_blocks_the_shutdown_it_covers() {
    let (plan, code) = pdb_case("empty-selector");
    assert_eq!(plan["verdict"], "will-block");
    assert_eq!(code, Some(1));
    let pdbs = pdb_blockers(&plan);
    assert_eq!(pdbs.len(), 1, "{pdbs:?}");
    let b = pdbs[0];
    assert_eq!(b["name"], "prod-everything");
    assert_eq!(b["blocking"], true);
    assert_eq!(b["reason"], "MaxUnavailablePDB");
    // {} selects both launcher pods of the namespace.
    assert_eq!(
        b["vmis"],
        serde_json::json!(["prod/batch-01", "prod/web-01"])
    );
    let message = b["message"].as_str().unwrap();
    for part in [
        "evicting prod/batch-01 is answered 429",
        "needs 0 healthy pods and has 0 currently",
        "selector {} selects every pod of its namespace",
        "older API servers ignore an empty selector",
        "from its status",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
    let batch = vmi(&plan, "batch-01");
    assert!(
        batch["explanation"]
            .as_str()
            .unwrap()
            .contains("PodDisruptionBudget prod-everything refuses the eviction"),
        "{batch}"
    );
    assert!(batch["endSeconds"].is_null());
    // The migrating VM is answered by KubeVirt's webhook, not the PDB.
    assert_eq!(vmi(&plan, "web-01")["action"], "live-migrate");
    assert_eq!(vmi(&plan, "web-01")["wave"], 1);
}

#[test]
fn a_null_selector_pdb_selects_nothing() {
    let (plan, code) = pdb_case("null-selector");
    assert_eq!(plan["verdict"], "will-complete-with-shutdowns");
    assert_eq!(code, Some(0));
    assert!(pdb_blockers(&plan).is_empty(), "{}", plan["blockers"]);
    assert_eq!(vmi(&plan, "batch-01")["endSeconds"], 180);
    // Reported as selecting nothing, with no budget and no eviction answered through it.
    assert_eq!(plan["pdbs"][0]["name"], "no-selector");
    assert_eq!(plan["pdbs"][0]["selects"], "nothing");
    assert!(plan["pdbs"][0]["evictions"].as_array().unwrap().is_empty());
}

#[test]
fn an_invalid_operator_makes_the_pdb_invalid_and_ignored() {
    let (plan, code) = pdb_case("invalid-operator");
    assert_eq!(plan["verdict"], "will-complete-with-shutdowns");
    assert_eq!(code, Some(0));
    let pdbs = pdb_blockers(&plan);
    assert_eq!(pdbs.len(), 1);
    let b = pdbs[0];
    assert_eq!(
        (
            b["name"].as_str(),
            b["reason"].as_str(),
            b["blocking"].as_bool()
        ),
        (Some("bad-operator"), Some("InvalidSelector"), Some(false))
    );
    let message = b["message"].as_str().unwrap();
    assert!(
        message.contains(
            "spec.selector.matchExpressions[0].operator: \"Equals\" is not a valid operator"
        ),
        "{message}"
    );
    assert!(
        message.contains("This object has an invalid selector, it does not match the pod"),
        "{message}"
    );
    assert!(message.contains("protects nothing"), "{message}");
    assert_eq!(plan["pdbs"][0]["selects"], "invalid");
    assert!(plan["pdbs"][0]["budget"].is_null());
}

#[test]
fn a_pod_under_two_pdbs_is_never_evicted_but_a_migrating_one_is_not_held() {
    let (plan, code) = pdb_case("two-pdbs");
    assert_eq!(plan["verdict"], "will-block");
    assert_eq!(code, Some(1));
    let pdbs = pdb_blockers(&plan);
    let two = pdbs
        .iter()
        .find(|b| b["reason"] == "MultiplePodDisruptionBudgets")
        .unwrap();
    assert_eq!(two["name"], "batch-pdb + prod-everything");
    assert_eq!(two["blocking"], true);
    assert_eq!(two["vmis"], serde_json::json!(["prod/batch-01"]));
    let message = two["message"].as_str().unwrap();
    assert!(
        message.contains("500 \"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.\""),
        "{message}"
    );
    // web-01 is under prod-everything and KubeVirt's own PDB, but it migrates: the webhook
    // answers first, so no 500 and nothing blocking for it.
    assert_eq!(vmi(&plan, "web-01")["action"], "live-migrate");
    assert!(
        pdbs.iter()
            .filter(|b| b["blocking"] == true)
            .all(|b| b["vmis"] == serde_json::json!(["prod/batch-01"])
                || b["name"] == "prod-everything"),
        "{pdbs:?}"
    );
    assert!(
        !pdbs
            .iter()
            .any(|b| b["blocking"] == true && b["name"] == "kubevirt-disruption-budget-x7k2q")
    );
    assert_eq!(pdbs.iter().filter(|b| b["blocking"] == true).count(), 1);
    // The structured report: the 500 is recorded under both PDBs, for batch-01 only.
    for report in plan["pdbs"].as_array().unwrap() {
        let evictions = report["evictions"].as_array().unwrap();
        if report["name"] == "kubevirt-disruption-budget-x7k2q" {
            assert!(evictions.is_empty(), "{report}");
        } else {
            assert_eq!(evictions.len(), 1, "{report}");
            assert_eq!(evictions[0]["vmi"], "prod/batch-01");
            assert_eq!(evictions[0]["httpStatus"], 500);
            assert_eq!(evictions[0]["answer"], "more-than-one-pdb");
        }
    }
}

#[test]
fn max_unavailable_over_vmpool_pods_without_status_is_computed_as_sync_failed() {
    let (plan, code) = pdb_case("vmpool-max-unavailable");
    assert_eq!(plan["verdict"], "will-block");
    assert_eq!(code, Some(1));
    let pdbs = pdb_blockers(&plan);
    assert_eq!(pdbs.len(), 1);
    let b = pdbs[0];
    assert_eq!(b["name"], "web-pool-pdb");
    assert_eq!(b["blocking"], true);
    assert_eq!(b["reason"], "StatusNeverSyncs");
    let message = b["message"].as_str().unwrap();
    for part in [
        "allows 0 disruptions for good, DisruptionAllowed=False SyncFailed: virtualmachineinstances.kubevirt.io does not implement the scale subresource",
        // failSafe never advances observedGeneration: a PDB that never synced stays behind.
        "its status never catches up with its spec (observedGeneration 0 < generation 1)",
        "kubevirt#18063",
        "use an integer minAvailable",
        "evicting prod/web-pool-0, prod/web-pool-1 is answered 429",
        "is still being processed by the server.) for good",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
    for name in ["web-pool-0", "web-pool-1"] {
        assert_eq!(vmi(&plan, name)["action"], "shutdown");
        assert!(vmi(&plan, name)["endSeconds"].is_null());
    }
    let budget = &plan["pdbs"][0]["budget"];
    assert_eq!(budget["source"], "computed");
    assert_eq!(budget["disruptionsAllowed"], 0);
    assert_eq!(
        budget["syncFailed"],
        "virtualmachineinstances.kubevirt.io does not implement the scale subresource"
    );
    assert_eq!(plan["pdbs"][0]["evictions"][0]["httpStatus"], 429);
}

#[test]
fn always_allow_lets_a_not_ready_pod_go() {
    let (plan, code) = pdb_case("always-allow");
    assert_eq!(plan["verdict"], "will-complete-with-shutdowns");
    assert_eq!(code, Some(0));
    assert!(
        pdb_blockers(&plan).iter().all(|b| b["blocking"] == false),
        "{}",
        plan["blockers"]
    );
    let batch = vmi(&plan, "batch-01");
    assert_eq!(batch["endSeconds"], 180);
    assert!(
        batch["explanation"]
            .as_str()
            .unwrap()
            .contains("not Ready and unhealthyPodEvictionPolicy is AlwaysAllow"),
        "{batch}"
    );
    let eviction = &plan["pdbs"][0]["evictions"][0];
    assert_eq!(eviction["answer"], "allowed-unhealthy");
    assert_eq!(eviction["httpStatus"], 201);
}

#[test]
fn waves_follow_kubevirts_priority_queue() {
    let (plan, code) = pdb_case("priority-queue");
    assert_eq!(code, Some(0));
    let queue = &plan["queue"];
    assert_eq!(queue["mode"], "priority");
    assert!(
        queue["why"].as_str().unwrap().contains("KubeVirt v1.9.0"),
        "{queue}"
    );
    let names = |list: &Value| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|m| m["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(&queue["ahead"]),
        ["kubevirt-evacuation-c4ch3", "kubevirt-evacuation-r3p0r"]
    );
    assert_eq!(
        names(&queue["behind"]),
        ["kubevirt-migrate-vm-b1d7x", "kubevirt-evacuation-d3sch"]
    );
    assert_eq!(queue["ahead"][0]["onDrainedNode"], true);
    assert_eq!(queue["ahead"][1]["onDrainedNode"], false);
    // node-1 has two outbound slots: cache-01's earlier evacuation (ahead) and db-01 (the
    // longest of the drain's) start at once; app-01 waits; build-01's user-triggered
    // migration, though older, starts after all of the drain's.
    let start = |name: &str| vmi(&plan, name)["startSeconds"].as_u64().unwrap();
    assert_eq!(start("cache-01"), 0);
    assert_eq!(start("db-01"), 0);
    assert!(start("app-01") > 0);
    assert!(start("build-01") >= start("app-01"));
    assert_eq!(vmi(&plan, "build-01")["wave"], 3);
    assert!(
        vmi(&plan, "build-01")["explanation"]
            .as_str()
            .unwrap()
            .contains("waits behind the drain's system-critical evacuations (user-triggered)")
    );
    // The table says which migrations are ahead.
    let out = vmctl([
        "--from",
        "tests/fixtures/drain-pdb/priority-queue",
        "--now",
        EXAMPLE_NOW,
        "plan-drain",
        "node-1",
    ]);
    let text = stdout(&out);
    assert!(
        text.contains("Queue (priority): 2 pending migration(s) ahead of the drain's evacuations: prod/kubevirt-evacuation-c4ch3 (VMI cache-01, system-critical, on a drained node)"),
        "{text}"
    );
}

#[test]
fn an_unsynced_integer_min_available_counts_the_pods_on_other_nodes_too() {
    let (plan, code) = pdb_case("unsynced-min-available");
    assert_eq!(plan["verdict"], "will-complete-with-shutdowns");
    assert_eq!(code, Some(0));
    let report = &plan["pdbs"][0];
    assert_eq!(report["name"], "web-pdb");
    let budget = &report["budget"];
    assert_eq!(budget["source"], "computed");
    assert_eq!(
        (
            &budget["expectedPods"],
            &budget["currentHealthy"],
            &budget["desiredHealthy"],
            &budget["disruptionsAllowed"]
        ),
        (
            &serde_json::json!(3),
            &serde_json::json!(3),
            &serde_json::json!(2),
            &serde_json::json!(1)
        )
    );
    assert_eq!(report["evictions"][0]["answer"], "allowed");
    assert_eq!(vmi(&plan, "web-0")["endSeconds"], 180);
}

#[test]
fn hostile_pdb_text_is_escaped_in_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = std::path::Path::new("tests/fixtures/drain-pdb/empty-selector");
    for entry in std::fs::read_dir(fixture).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    // A SyncFailed message and a name that try to clear the screen and rewrite the line.
    std::fs::write(
        dir.path().join("pdbs.yaml"),
        "apiVersion: v1\nkind: List\nitems:\n\
         - apiVersion: policy/v1\n  kind: PodDisruptionBudget\n  metadata: {name: \"evil\\e[2J\", namespace: prod}\n  \
         spec: {maxUnavailable: 0, selector: {}}\n  \
         status: {disruptionsAllowed: 0, conditions: [{type: DisruptionAllowed, status: \"False\", reason: SyncFailed, \
         message: \"fine\\rgotcha\\e[31m\", lastTransitionTime: \"2026-11-02T00:00:05Z\"}]}\n",
    )
    .unwrap();
    let out = vmctl([
        "--from",
        dir.path().to_str().unwrap(),
        "--now",
        EXAMPLE_NOW,
        "plan-drain",
        "node-1",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(!text.contains('\u{1b}') && !text.contains('\r'), "{text:?}");
    assert!(text.contains("evil\\u{1b}[2J"), "{text}");
    assert!(text.contains("fine\\rgotcha\\u{1b}[31m"), "{text}");
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

// ---------------------------------------------------------------- the guest dirty rate

const MIB: u64 = 1 << 20;

/// node-1 with three 2Gi VMIs under a 64 MiB/s cluster cap: `idle-01`, `busy-01` (dirties
/// twice the cap), `cache-01` (as much, but MigrationPolicy allow-pc allows post-copy);
/// virt-handler on both nodes.
fn dirty_cluster(version: &str) -> Vec<Value> {
    use serde_json::json;
    let mut objects = vec![
        json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": {"evictionStrategy": "LiveMigrate",
                "migrations": {"bandwidthPerMigration": "64Mi"}}},
            "status": {"observedKubeVirtVersion": version, "phase": "Deployed"}}),
        json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "prod", "labels": {"kubernetes.io/metadata.name": "prod"}}}),
        json!({"apiVersion": "migrations.kubevirt.io/v1alpha1", "kind": "MigrationPolicy",
            "metadata": {"name": "allow-pc"},
            "spec": {"allowPostCopy": true, "selectors": {"virtualMachineInstanceSelector": {"tier": "cache"}}}}),
    ];
    for node in ["node-1", "node-2"] {
        objects.push(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node, "labels": {"kubevirt.io/schedulable": "true"}},
            "spec": {}, "status": {"allocatable": {"memory": "64Gi", "cpu": "32", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}]}}));
        objects.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("virt-handler-{}", &node[5..]), "namespace": "kubevirt",
                "labels": {"kubevirt.io": "virt-handler"}},
            "spec": {"nodeName": node, "containers": [{"name": "virt-handler"}]},
            "status": {"phase": "Running"}}));
    }
    for (name, tier) in [("idle-01", "web"), ("busy-01", "db"), ("cache-01", "cache")] {
        let uid = format!("uid-{name}");
        objects.push(
            json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
            "metadata": {"name": name, "namespace": "prod", "uid": uid,
                "labels": {"kubevirt.io/nodeName": "node-1", "tier": tier}},
            "spec": {"domain": {"memory": {"guest": "2Gi"}}},
            "status": {"nodeName": "node-1", "phase": "Running",
                "conditions": [{"type": "LiveMigratable", "status": "True"}]}}),
        );
        objects.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("virt-launcher-{name}"), "namespace": "prod",
                "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": uid}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "compute",
                "resources": {"requests": {"memory": "2300Mi"}}}]},
            "status": {"phase": "Running"}}));
    }
    objects
}

/// virt-handler-1's page: the three guests' rates among other metrics, and lines a parser
/// must survive (tenant-controlled label values, a `}` before the `{`).
fn handler_page() -> String {
    let g = "kubevirt_vmi_dirty_rate_bytes_per_second";
    format!(
        "# HELP {g} Guest dirty-rate in bytes per second.\n# TYPE {g} gauge\n\
         {g}{{kubernetes_vmi_label_tier=\"web\",name=\"idle-01\",namespace=\"prod\",node=\"node-1\"}} 0\n\
         {g}{{kubernetes_vmi_label_tier=\"db\",name=\"busy-01\",namespace=\"prod\",node=\"node-1\"}} {}\n\
         {g}{{kubernetes_vmi_label_tier=\"cache\",name=\"cache-01\",namespace=\"prod\",node=\"node-1\"}} {}\n\
         {g}{{kubernetes_vmi_label_x=\"\u{1b}[2J\u{1b}]8;;http://evil\u{7}\",name=\"ghost\u{1b}[31m\",namespace=\"prod\"}} 5\n\
         x}}y{{z 1\n\
         kubevirt_vmi_memory_resident_bytes{{name=\"idle-01\",namespace=\"prod\"}} 1e9\n",
        128 * MIB,
        128 * MIB
    )
}

/// A fake API server with [`dirty_cluster`] whose pod proxy serves `page` for virt-handler-1.
fn dirty_server(version: &str, page: String) -> std::sync::Arc<FakeApiServer> {
    let server = std::sync::Arc::new(FakeApiServer::start_blocking(dirty_cluster(version)));
    server.add_hook(std::sync::Arc::new(move |r: &support::HookRequest| {
        (r.path == "/api/v1/namespaces/kubevirt/pods/https:virt-handler-1:8443/proxy/metrics")
            .then(|| support::HookReply::Text(200, page.clone()))
    }));
    server
}

fn proxy_requests(server: &FakeApiServer) -> usize {
    server.count_requests(|r| r.path.ends_with("/proxy/metrics"))
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(out), stderr(out)))
}

/// What a plan with predictions must say of the three guests.
fn assert_flags_busy_only(plan: &Value) {
    let c = &plan["convergence"];
    assert_eq!(
        c["willNotComplete"],
        serde_json::json!(["prod/busy-01"]),
        "{c}"
    );
    assert_eq!(
        c["bySwitching"],
        serde_json::json!(["prod/cache-01"]),
        "{c}"
    );
    assert_eq!(
        (c["predicted"].as_u64(), c["withDirtyRate"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(c["metric"], "kubevirt_vmi_dirty_rate_bytes_per_second");
    assert!(c["caveat"].as_str().unwrap().contains("a hint"));
    let busy = vmi(plan, "busy-01");
    assert_eq!(busy["prediction"]["converges"], false);
    assert_eq!(busy["prediction"]["dirtyRateBps"], 128 * MIB);
    assert_eq!(busy["prediction"]["dirtyRateSource"], "kubevirt-metrics");
    assert_eq!(busy["prediction"]["bandwidthSource"], "cap");
    assert_eq!(busy["convergence"]["completes"], false);
    assert_eq!(busy["convergence"]["bandwidthFrom"], "cluster");
    assert_eq!(busy["convergence"]["abortedAfterSeconds"], 450);
    assert!(
        busy["estimateSeconds"].is_null(),
        "not counted as a fast one"
    );
    let alternatives: Vec<&str> = busy["convergence"]["alternatives"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for words in [
        "allowPostCopy: true (",
        "allowWorkloadDisruption: true (",
        "bandwidthPerMigration: ",
    ] {
        assert!(
            alternatives.iter().any(|a| a.starts_with(words)),
            "{words}: {alternatives:?}"
        );
    }
    for name in ["idle-01", "cache-01"] {
        assert_eq!(vmi(plan, name)["convergence"]["completes"], true, "{name}");
    }
    assert_eq!(
        vmi(plan, "cache-01")["convergence"]["completesBy"],
        "post-copy"
    );
    assert_eq!(
        vmi(plan, "cache-01")["convergence"]["under"],
        "MigrationPolicy allow-pc"
    );
    // The post-copy one takes the budget and the rest, not memory over bandwidth.
    assert_eq!(vmi(plan, "cache-01")["estimateSeconds"], 15 + 450 + 32);
    assert_eq!(vmi(plan, "idle-01")["estimateSeconds"], 15 + 32);
    assert_eq!(
        plan["verdict"], "will-complete",
        "a hint does not change the verdict"
    );
}

#[test]
fn metrics_flag_exactly_the_migration_that_cannot_complete() {
    let server = dirty_server("v1.8.4", handler_page());
    let out = live(
        &server,
        &["plan-drain", "node-1", "--metrics", "-o", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let plan = json_of(&out);
    assert_flags_busy_only(&plan);
    assert_eq!(plan["convergence"]["notes"], serde_json::json!([]));
    assert!(
        plan["convergence"]["source"]
            .as_str()
            .unwrap()
            .contains("pod proxy")
    );
    assert_eq!(proxy_requests(&server), 1, "one page for the one node");
    assert_eq!(
        server.count_requests(|r| r.method != support::Method::GET),
        0
    );

    let out = live(&server, &["plan-drain", "node-1", "--metrics"]);
    let text = stdout(&out);
    assert!(!text.contains('\u{1b}'), "{text}");
    insta::assert_snapshot!("plan_drain_metrics", normalise_source(&text));
    assert!(
        text.contains("1 predicted not to complete (a hint)"),
        "{text}"
    );
    assert!(
        text.contains("✗ prod/busy-01: will not converge under the cluster's migration configuration (bandwidthPerMigration 64.0 MiB/s of the KubeVirt CR): the guest dirties 200% of what is sent"),
        "{text}"
    );
    assert!(
        text.contains("; consider allowPostCopy: true (completes by post-copy in ~8m02s"),
        "{text}"
    );
    assert!(
        text.contains("~ prod/cache-01: pre-copy will not converge under MigrationPolicy allow-pc"),
        "{text}"
    );
    assert!(
        !text.contains("prod/idle-01: "),
        "a converging one is listed only with -o wide: {text}"
    );
    let wide = stdout(&live(
        &server,
        &["plan-drain", "node-1", "--metrics", "-o", "wide"],
    ));
    assert!(
        wide.contains("✓ prod/idle-01: converges under the cluster's migration configuration"),
        "{wide}"
    );
}

#[test]
fn without_metrics_flags_nothing_is_read_and_nothing_changes() {
    let server = dirty_server("v1.8.4", handler_page());
    let plain = live(&server, &["plan-drain", "node-1", "-o", "json"]);
    let baseline = server.request_count();
    assert_eq!(proxy_requests(&server), 0);
    let plan = json_of(&plain);
    assert!(plan.get("convergence").is_none());
    assert!(vmi(&plan, "busy-01").get("prediction").is_none());
    assert!(!stdout(&live(&server, &["plan-drain", "node-1"])).contains("converges"));

    server.reset_requests();
    let _ = live(
        &server,
        &["plan-drain", "node-1", "--metrics", "-o", "json"],
    );
    assert_eq!(
        server.request_count(),
        baseline + 1,
        "--metrics costs one page per drained node, nothing else"
    );
}

fn vector(series: &[(&str, u64)]) -> Value {
    let result: Vec<Value> = series
        .iter()
        .map(|(name, v)| {
            serde_json::json!({"metric": {"__name__": "kubevirt_vmi_dirty_rate_bytes_per_second",
            "namespace": "prod", "name": name, "node": "node-1"}, "value": [1.7e9, v.to_string()]})
        })
        .collect();
    serde_json::json!({"status": "success", "data": {"resultType": "vector", "result": result}})
}

#[test]
fn prometheus_flags_the_same_migration_with_one_query() {
    let server = dirty_server("v1.8.4", handler_page());
    let (url, asked) = fake_prometheus(vector(&[
        ("idle-01", 0),
        ("busy-01", 128 * MIB),
        ("cache-01", 128 * MIB),
    ]));
    let out = live(
        &server,
        &["plan-drain", "node-1", "--prometheus", &url, "-o", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let plan = json_of(&out);
    assert_flags_busy_only(&plan);
    assert_eq!(
        plan["convergence"]["source"],
        format!("Prometheus at {url}")
    );
    assert_eq!(proxy_requests(&server), 0, "no pod proxy with --prometheus");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].starts_with("GET /api/v1/query?query=kubevirt_vmi_dirty_rate_bytes_per_second%7Bnode%3D~%22node-1%22%7D "),
        "{asked:?}"
    );
    // With a snapshot too: Prometheus is not the API server.
    let out = vmctl([
        "--from",
        "examples/cluster",
        "plan-drain",
        "node-3",
        "--prometheus",
        &url,
        "-o",
        "json",
    ]);
    assert!(json_of(&out)["convergence"].is_object());
}

#[test]
fn an_oversized_metrics_page_is_not_read_whole() {
    // 64 MiB is the most vmctl reads of one page (kube's request_text has no bound): a
    // page one byte over it is a note, and the plan goes on without dirty rates.
    let mut page = handler_page();
    page.push_str(&"#".repeat((64 << 20) + 1 - page.len()));
    let server = dirty_server("v1.8.4", page);
    let out = live(
        &server,
        &["plan-drain", "node-1", "--metrics", "-o", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let plan = json_of(&out);
    let notes = plan["convergence"]["notes"].to_string();
    assert!(
        notes.contains(
            "virt-handler metrics through the pod proxy: the answer is larger than 64 MiB: not read"
        ),
        "{notes}"
    );
    assert_eq!(plan["convergence"]["withDirtyRate"], 0);
    // Exactly at the bound it is read (and its `#` tail is a comment).
    let mut page = handler_page();
    page.push_str(&"#".repeat((64 << 20) - page.len()));
    let plan = json_of(&live(
        &dirty_server("v1.8.4", page),
        &["plan-drain", "node-1", "--metrics", "-o", "json"],
    ));
    assert!(
        plan["convergence"]["withDirtyRate"].as_u64() > Some(0),
        "{plan}"
    );
}

#[test]
fn metrics_that_cannot_be_read_are_said_once_per_cause_and_the_plan_goes_on() {
    let note = |plan: &Value| -> Vec<String> {
        plan["convergence"]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    };
    // 403 on pods/proxy.
    let server = dirty_server("v1.8.4", handler_page());
    server.inject_fault(support::Fault::status(403).path("/proxy/metrics"));
    let out = live(
        &server,
        &["plan-drain", "node-1", "--metrics", "-o", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let plan = json_of(&out);
    let notes = note(&plan);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("virt-handler metrics through the pod proxy: forbidden: your user may not get pods/proxy"), "{notes:?}");
    assert!(
        notes[0].ends_with("(node node-1): no dirty rates for its VMIs"),
        "{notes:?}"
    );
    assert_eq!(plan["convergence"]["withDirtyRate"], 0);
    assert_eq!(
        vmi(&plan, "busy-01")["estimateSeconds"],
        15 + 32,
        "memory over bandwidth, as before"
    );
    assert_eq!(vmi(&plan, "busy-01")["action"], "live-migrate");
    let text = stdout(&live(&server, &["plan-drain", "node-1", "--metrics"]));
    assert_eq!(text.matches("forbidden").count(), 1, "{text}");
    assert!(
        text.contains("  note: virt-handler metrics through the pod proxy: forbidden"),
        "{text}"
    );

    // No virt-handler on the node: nothing to ask.
    let server = dirty_server("v1.8.4", handler_page());
    server.delete_object(Kind::Pod, Some("kubevirt"), "virt-handler-1");
    let plan = json_of(&live(
        &server,
        &["plan-drain", "node-1", "--metrics", "-o", "json"],
    ));
    assert_eq!(
        note(&plan),
        [
            "no running virt-handler pod (kubevirt.io=virt-handler) on the node (node node-1): no dirty rates for its VMIs"
        ]
    );
    assert_eq!(proxy_requests(&server), 0);

    // A page without the metric (a virt-handler before v1.6).
    let server = dirty_server(
        "v1.8.4",
        "kubevirt_vmi_memory_resident_bytes{name=\"a\",namespace=\"prod\"} 1\n".into(),
    );
    let plan = json_of(&live(
        &server,
        &["plan-drain", "node-1", "--metrics", "-o", "json"],
    ));
    let notes = note(&plan);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("no kubevirt_vmi_dirty_rate_bytes_per_second at all for node-1 (virt-handler-1) (KubeVirt exports it from v1.6"), "{notes:?}");

    // A KubeVirt that predates the metric is not asked.
    let server = dirty_server("v1.5.2", handler_page());
    let plan = json_of(&live(
        &server,
        &["plan-drain", "node-1", "--metrics", "-o", "json"],
    ));
    assert_eq!(
        note(&plan),
        [
            "KubeVirt v1.5.2 does not export kubevirt_vmi_dirty_rate_bytes_per_second (v1.6+): no dirty rates, nothing was read"
        ]
    );
    assert_eq!(proxy_requests(&server), 0);

    // A page that had no sample for one VMI.
    let page = handler_page().replace("name=\"idle-01\"", "name=\"other\"");
    let server = dirty_server("v1.8.4", page);
    let plan = json_of(&live(
        &server,
        &["plan-drain", "node-1", "--metrics", "-o", "json"],
    ));
    let notes = note(&plan);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0]
            .starts_with("no kubevirt_vmi_dirty_rate_bytes_per_second sample for prod/idle-01 "),
        "{notes:?}"
    );

    // A snapshot has no pod proxy.
    let out = vmctl([
        "--from",
        "examples/cluster",
        "plan-drain",
        "node-3",
        "--metrics",
        "-o",
        "json",
    ]);
    let plan = json_of(&out);
    assert!(note(&plan)[0].starts_with(
        "--metrics reads virt-handler through the API server, and a snapshot (--from) has none"
    ));

    // A Prometheus that refuses the query, with hostile words.
    let (url, _) =
        fake_prometheus(serde_json::json!({"status": "error", "error": "bad \u{1b}[31mquery"}));
    let server = dirty_server("v1.8.4", handler_page());
    let out = live(&server, &["plan-drain", "node-1", "--prometheus", &url]);
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "note: Prometheus at {url}: bad \\u{{1b}}[31mquery (node node-1)"
        )),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'), "{text}");
}

// ------------------------------------- compatibility before anything moves (issue 25 §3)

/// tests/fixtures/drain-cpu: node-a still has TSX (hle, rtm); node-b and node-c lost it to a
/// microcode update; node-c's QEMU stops at pc-q35-rhel9.4.0. See the fixture's header.
#[test]
fn cpu_compatibility_blocks_a_pinned_host_model_and_warns_of_the_rest() {
    let (plan, code) = sched_plan_from("tests/fixtures/drain-cpu", "node-a");
    // erp-db's launcher pod pins hle and rtm (it migrated before): no node has them, so it
    // is no-target and the drain blocks; the verdict and the exit code say so.
    assert_eq!(code, Some(1));
    assert_eq!(plan["verdict"], "will-block");
    let erp = vmi(&plan, "erp-db");
    let message = no_target_message(erp);
    assert!(
        message.contains("no node is CPU-compatible: node-b lacks cpu-feature.node.kubevirt.io/hle, rtm; node-c lacks cpu-feature.node.kubevirt.io/hle, rtm; machine-type.node.kubevirt.io/pc-q35-rhel9.6.0"),
        "{message}"
    );
    assert_eq!(erp["cpu"]["status"], "no-compatible-node");
    assert_eq!(erp["cpu"]["hostModelFrom"], "launcher-pod");
    assert_eq!(erp["cpu"]["lacking"][0]["node"], "node-b");
    let blocker = plan["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "erp-db")
        .unwrap();
    assert_eq!(blocker["blocking"], true);
    assert!(blocker["message"].as_str().unwrap().contains("hle, rtm"));
    // web-1 never migrated: KubeVirt requires node-a's listed features only, which node-c
    // has; TSX is in the model, on no label: a risk, not a blocker.
    let web = vmi(&plan, "web-1");
    assert_eq!(web["action"], "live-migrate");
    assert_eq!(web["target"], "node-c");
    assert_eq!(web["cpu"]["status"], "compatible");
    assert_eq!(web["cpu"]["risks"][0]["kind"], "unlisted-features");
    // The named model with a pc-q35-rhel9.6.0 machine goes where that machine type exists
    // (node-b), though node-c has more free memory.
    let report = vmi(&plan, "report");
    assert_eq!(report["target"], "node-b");
    assert_eq!(report["cpu"]["required"], serde_json::json!(["pcid"]));
    assert_eq!(report["cpu"]["forbidden"], serde_json::json!(["hle"]));
    assert_eq!(report["cpu"]["machineType"], "pc-q35-rhel9.6.0");
    // The launcher skew: a risk naming both images.
    let legacy = vmi(&plan, "legacy-vm");
    assert_eq!(legacy["action"], "live-migrate");
    assert_eq!(legacy["cpu"]["risks"][0]["kind"], "launcher-skew");
    let findings: Vec<(&str, &str, &str)> = plan["compatibility"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["vmi"].as_str().unwrap(),
                f["severity"].as_str().unwrap(),
                f["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        findings,
        [
            ("prod/erp-db", "blocks", "no-compatible-node"),
            ("prod/legacy-vm", "risk", "launcher-skew"),
            ("prod/web-1", "risk", "unlisted-features"),
        ]
    );
    let out = vmctl([
        "--from",
        "tests/fixtures/drain-cpu",
        "--now",
        SCHED_NOW,
        "plan-drain",
        "node-a",
    ]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("plan_drain_cpu_compat", stdout(&out));
    let yaml = vmctl([
        "--from",
        "tests/fixtures/drain-cpu",
        "--now",
        SCHED_NOW,
        "plan-drain",
        "node-a",
        "-o",
        "yaml",
    ]);
    let text = stdout(&yaml);
    assert!(text.contains("kind: no-compatible-node"), "{text}");
    assert!(text.contains("hostModelFrom: launcher-pod"), "{text}");
}

// ------------------------------------ PDB status and version (issue 25, tests/fixtures/drain-pdb)

#[test]
fn a_pdb_whose_status_never_catches_up_blocks_for_good() {
    let (plan, code) = pdb_case("never-synced");
    assert_eq!(plan["verdict"], "will-block");
    assert_eq!(code, Some(1));
    let pdbs = pdb_blockers(&plan);
    assert_eq!(pdbs.len(), 1, "{pdbs:?}");
    let b = pdbs[0];
    assert_eq!(
        (
            b["name"].as_str(),
            b["reason"].as_str(),
            b["blocking"].as_bool()
        ),
        (Some("batch-pdb"), Some("StatusNeverSyncs"), Some(true))
    );
    let message = b["message"].as_str().unwrap();
    for part in [
        "allows 0 disruptions for good",
        "its status never catches up with its spec (observedGeneration 1 < generation 2)",
        "failSafe",
        "(The disruption budget batch-pdb is still being processed by the server.) for good",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
    // Never "until the controller catches up": it does not.
    assert!(!message.contains("catches up;"), "{message}");
    let batch = vmi(&plan, "batch-01");
    assert!(batch["endSeconds"].is_null());
    assert!(
        batch["explanation"]
            .as_str()
            .unwrap()
            .contains("refuses the eviction (429 for good"),
        "{batch}"
    );
    let eviction = &plan["pdbs"][0]["evictions"][0];
    assert_eq!(eviction["answer"], "status-stale");
    assert_eq!(eviction["httpStatus"], 429);
    assert!(
        eviction["never_syncs"]
            .as_str()
            .is_some_and(|w| w.contains("does not implement the scale subresource")),
        "{eviction}"
    );
}

#[test]
fn a_pdb_catching_up_is_waited_for_and_does_not_block() {
    let (plan, code) = pdb_case("stale-catching-up");
    assert_eq!(plan["verdict"], "will-complete-with-shutdowns");
    assert_eq!(code, Some(0));
    let pdbs = pdb_blockers(&plan);
    assert_eq!(pdbs.len(), 1, "{pdbs:?}");
    assert_eq!(pdbs[0]["reason"], "StatusStale");
    assert_eq!(pdbs[0]["blocking"], false);
    let message = pdbs[0]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "gets 429 until the disruption controller catches up; then it allows 1 disruption(s)"
        ),
        "{message}"
    );
    assert!(!message.contains("for good"), "{message}");
    let eviction = &plan["pdbs"][0]["evictions"][0];
    assert_eq!(eviction["answer"], "status-stale");
    assert!(eviction.get("never_syncs").is_none(), "{eviction}");
}

#[test]
fn an_empty_selector_on_a_server_that_ignores_it_protects_nothing() {
    // A vmctl snapshot recorded serverVersion v1.28.2: before the fix reached 1.28 (1.28.3).
    let out = vmctl([
        "--from",
        "tests/fixtures/drain-pdb/empty-selector-old-server",
        "plan-drain",
        "node-1",
        "-o",
        "json",
    ]);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["verdict"], "will-complete-with-shutdowns");
    assert_eq!(out.status.code(), Some(0));
    let pdbs = pdb_blockers(&plan);
    assert_eq!(pdbs.len(), 1, "{pdbs:?}");
    assert_eq!(pdbs[0]["reason"], "EmptySelectorIgnored");
    assert_eq!(pdbs[0]["blocking"], false);
    let message = pdbs[0]["message"].as_str().unwrap();
    for part in [
        "v1.28.2 (recorded in the snapshot)",
        "ignores an empty selector",
        "protects nothing during a drain",
        "kubernetes#119732, #121131, #121132",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
    assert_eq!(plan["pdbs"][0]["selects"], "everything");
    assert!(plan["pdbs"][0]["evictions"].as_array().unwrap().is_empty());
    assert_eq!(vmi(&plan, "batch-01")["endSeconds"], 180);
}

#[test]
fn live_plan_reads_the_api_servers_version_for_an_empty_selector() {
    let server = FakeApiServer::start_from_path_blocking(std::path::Path::new(
        "tests/fixtures/drain-pdb/empty-selector",
    ));
    let run = |version: &str| -> (Value, Option<i32>) {
        server.set_version(version);
        let out = live(&server, &["plan-drain", "node-1", "-o", "json"]);
        assert!(stderr(&out).is_empty(), "{}", stderr(&out));
        (
            serde_json::from_slice(&out.stdout).unwrap(),
            out.status.code(),
        )
    };
    let (plan, code) = run("v1.27.6-eks-4f4795d");
    assert_eq!(
        (plan["verdict"].as_str(), code),
        (Some("will-complete-with-shutdowns"), Some(0))
    );
    let b = pdb_blockers(&plan)[0].clone();
    assert_eq!(b["reason"], "EmptySelectorIgnored");
    assert!(
        b["message"]
            .as_str()
            .unwrap()
            .contains("v1.27.6-eks-4f4795d (from /version)"),
        "{b}"
    );
    let (plan, code) = run("v1.27.7");
    assert_eq!(
        (plan["verdict"].as_str(), code),
        (Some("will-block"), Some(1))
    );
    let b = pdb_blockers(&plan)[0].clone();
    assert_eq!(b["blocking"], true);
    assert!(
        b["message"]
            .as_str()
            .unwrap()
            .contains("at eviction too (API server v1.27.7 (from /version)"),
        "{b}"
    );
    assert_eq!(
        server.count_requests(|r| r.path == "/version"),
        2,
        "one /version per plan"
    );
}

#[test]
fn a_snapshot_records_the_servers_version_and_reads_it_back() {
    let server = FakeApiServer::start_from_path_blocking(std::path::Path::new(
        "tests/fixtures/drain-pdb/empty-selector",
    ));
    server.set_version("v1.28.2+k3s1");
    let dir = tempfile::tempdir().unwrap();
    for (format, name) in [("yaml", "snap.yaml"), ("json", "snap.json")] {
        let file = dir.path().join(name);
        let out = live(
            &server,
            &["snapshot", "-A", "-o", format, file.to_str().unwrap()],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("v1.28.2+k3s1"), "{format}");
        let out = vmctl([
            "--from",
            file.to_str().unwrap(),
            "--now",
            EXAMPLE_NOW,
            "plan-drain",
            "node-1",
            "-o",
            "json",
        ]);
        let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(plan["verdict"], "will-complete-with-shutdowns", "{format}");
        assert!(
            pdb_blockers(&plan)[0]["message"]
                .as_str()
                .unwrap()
                .contains("v1.28.2+k3s1 (recorded in the snapshot)"),
            "{format}"
        );
    }
}

/// A fixture of `tests/fixtures/explain…` (which holds no nodes) with two schedulable nodes
/// added, so that plan-drain can read it.
fn with_nodes(fixture: &str, nodes: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        format!("tests/fixtures/{fixture}/cluster.yaml"),
        dir.path().join("cluster.yaml"),
    )
    .unwrap();
    let mut yaml = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for n in nodes {
        yaml.push_str(&format!(
            "- {{apiVersion: v1, kind: Node, metadata: {{name: {n}, labels: {{kubevirt.io/schedulable: 'true'}}}}, status: {{allocatable: {{memory: 64Gi, cpu: '32', pods: '110'}}, conditions: [{{type: Ready, status: 'True'}}]}}}}\n"
        ));
    }
    std::fs::write(dir.path().join("nodes.yaml"), yaml).unwrap();
    dir
}

fn plan_at(dir: &tempfile::TempDir, now: &str, args: &[&str]) -> (Value, Option<i32>, String) {
    let mut all = vec![
        "--from",
        dir.path().to_str().unwrap(),
        "--now",
        now,
        "plan-drain",
        "-o",
        "json",
    ];
    all.extend_from_slice(args);
    let out = vmctl(all);
    let text = both(&out);
    (
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        out.status.code(),
        text,
    )
}

/// kubevirt/kubevirt#17317, #18259: a decentralized migration whose peer never synchronizes
/// stays in Synchronizing with no timeout (`processMigrationPhase`,
/// `pkg/virt-controller/watch/migration/migration.go`), and the evacuation controller skips a
/// VMI with an unfinished migration (`pkg/virt-controller/watch/drain/evacuation/evacuation.go`):
/// the plan holds the VM (blocks-drain, will-block) with the loop's blocking field and way
/// out, and claims no time for it, instead of "already in flight, about 23s left".
#[test]
fn a_decentralized_migration_stuck_in_synchronizing_holds_the_plan() {
    let dir = with_nodes("explain-kv19/sync-sender", &["node-1", "node-2"]);
    // Ten minutes in Synchronizing: past the 5 m --sync-timeout.
    let (plan, code, text) = plan_at(&dir, "2026-12-01T12:08:01Z", &["node-1"]);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(plan["verdict"], "will-block", "{text}");
    let row = vmi(&plan, "db-01");
    assert_eq!(row["action"], "blocks-drain", "{text}");
    assert_eq!(row["loop"]["kind"], "decentralized-sync-stuck", "{text}");
    for field in ["estimateSeconds", "endSeconds", "startSeconds"] {
        assert!(row[field].is_null(), "{field}: {text}");
    }
    let explanation = row["explanation"].as_str().unwrap();
    assert!(!explanation.contains("left"), "{explanation}");
    assert!(!explanation.contains("waits for it"), "{explanation}");
    assert!(
        explanation.contains("db-01-send has been in Synchronizing for 10m"),
        "{explanation}"
    );
    let blockers = plan["blockers"].as_array().unwrap();
    let b = blockers
        .iter()
        .find(|b| b["reason"] == "decentralized-sync-stuck")
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(b["blocking"], true, "{text}");
    let message = b["message"].as_str().unwrap();
    for want in [
        // The fixture's VMI shows both sides synchronized: the field is named with its value.
        "Blocking: VirtualMachineInstance/prod/db-01 status.migrationState.targetState.migrationUID = peer-uid-dc2.",
        "is filled (peer-uid-dc2) but the migration has not moved on",
        "spec.receive.migrationID mig-db-01-dc2",
        "To give up: kubectl delete vmim db-01-send -n prod",
    ] {
        assert!(message.contains(want), "{want}\n{message}");
    }
    // The verdict's total claims no end for it.
    assert!(
        plan["estimatedDurationSeconds"]
            .as_u64()
            .is_some_and(|s| s < 600),
        "{text}"
    );

    // Two minutes in: still waiting within the timeout, the drain waits for it ...
    let (plan, code, text) = plan_at(&dir, "2026-12-01T12:00:00Z", &["node-1"]);
    assert_eq!(vmi(&plan, "db-01")["action"], "already-migrating", "{text}");
    assert!(vmi(&plan, "db-01")["loop"].is_null(), "{text}");
    assert_ne!(plan["verdict"], "will-block", "{text}");
    assert_eq!(code, Some(0), "{text}");
    // ... unless the operator's --sync-timeout is shorter.
    let (plan, code, text) = plan_at(
        &dir,
        "2026-12-01T12:00:00Z",
        &["node-1", "--sync-timeout", "60s"],
    );
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(vmi(&plan, "db-01")["action"], "blocks-drain", "{text}");

    // The table says it too, and plan-maintenance (built on the same plan) holds it.
    let out = vmctl([
        "--from",
        dir.path().to_str().unwrap(),
        "--now",
        "2026-12-01T12:08:01Z",
        "plan-drain",
        "node-1",
    ]);
    let table = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{table}");
    for want in [
        "WILL BLOCK",
        "blocks-drain",
        "has been in Synchronizing for 10m00s",
        "Blocking: VirtualMachineInstance/prod/db-01 status.migrationState.targetState.migrationUID",
        "To give up: kubectl delete vmim db-01-send -n prod",
    ] {
        assert!(table.contains(want), "{want}\n{table}");
    }
    assert!(!table.contains("already in flight"), "{table}");
    let out = vmctl([
        "--from",
        dir.path().to_str().unwrap(),
        "--now",
        "2026-12-01T12:08:01Z",
        "plan-maintenance",
        "node-1",
        "-o",
        "json",
    ]);
    let text = both(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("decentralized-sync-stuck"), "{text}");
    let out = vmctl([
        "--from",
        dir.path().to_str().unwrap(),
        "--now",
        "2026-12-01T12:08:01Z",
        "plan-maintenance",
        "node-1",
        "-o",
        "json",
        "--sync-timeout",
        "1h",
    ]);
    let text = both(&out);
    assert!(!text.contains("decentralized-sync-stuck"), "{text}");
}

/// harvester/harvester#10698 (fixture `explain/reported/evacuation-loop`, harvester#7965's
/// failure text): three evacuation migrations failed and a fourth waits out its backoff.
/// KubeVirt creates the next one for as long as `status.evacuationNodeName` stays set
/// (`evacuation.go`, `handleMigrationBackoff` in `migration.go`): the plan holds the VM,
/// names the field and the way out, and does not say the drain waits for the fourth.
#[test]
fn a_vm_in_an_evacuation_loop_holds_the_plan_with_its_blocking_field_and_way_out() {
    let dir = with_nodes("explain/reported/evacuation-loop", &["n1-v15", "n2-v15"]);
    let (plan, code, text) = plan_at(&dir, "2026-11-30T05:03:30Z", &["n2-v15"]);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(plan["verdict"], "will-block", "{text}");
    let row = vmi(&plan, "vm");
    assert_eq!(row["action"], "blocks-drain", "{text}");
    assert_eq!(row["loop"]["kind"], "evacuation-loop", "{text}");
    assert_eq!(row["loop"]["attempts"], 3, "{text}");
    assert!(row["estimateSeconds"].is_null(), "{text}");
    assert!(
        !row["explanation"]
            .as_str()
            .unwrap()
            .contains("waits for it"),
        "{text}"
    );
    let b = plan["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["reason"] == "evacuation-loop")
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(b["blocking"], true, "{text}");
    let message = b["message"].as_str().unwrap();
    for want in [
        "Blocking: VirtualMachineInstance/default/vm status.evacuationNodeName = n2-v15.",
        "vmctl abort --evacuation vm/vm -n default",
        "guest CPU doesn't match",
    ] {
        assert!(message.contains(want), "{want}\n{message}");
    }
    // With --loop-failures 4, three failures are no loop yet: the fourth attempt is waited for.
    let (plan, _, text) = plan_at(
        &dir,
        "2026-11-30T05:03:30Z",
        &["n2-v15", "--loop-failures", "4"],
    );
    assert_ne!(vmi(&plan, "vm")["action"], "blocks-drain", "{text}");
    assert!(vmi(&plan, "vm")["loop"].is_null(), "{text}");
}

/// vmctl with the chart's environment fixed: a width, a locale (the rest of [`vmctl`]'s).
fn vmctl_chart(columns: &str, lang: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("COLUMNS", columns)
        .env("LANG", lang)
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE")
        .env_remove("KUBECONFIG")
        .env_remove("VMCTL_NOW")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

#[test]
fn node_3_chart_after_the_table() {
    let base = ["--from", "examples/cluster", "plan-drain", "node-3"];
    let plain = vmctl(base);
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        vmctl_chart("100", "C.UTF-8", &args)
    };
    let chart = with(&["--chart", "always"]);
    assert_eq!(
        chart.status.code(),
        Some(1),
        "the verdict's exit code stays"
    );
    let text = stdout(&chart);
    // The table as it was, then the chart.
    let rest = text
        .strip_prefix(&stdout(&plain))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(rest.starts_with("\nDrain of node-3: ETA 1m02s\n"), "{rest}");
    assert!(rest.lines().all(|l| l.chars().count() <= 100), "{rest}");
    assert!(rest.contains('█') && rest.contains('✖'), "{rest}");
    insta::assert_snapshot!("plan_drain_node_3_chart", rest);
    // Off a terminal, auto draws none; --no-chart and never: exactly the old output.
    for extra in [
        &[][..],
        &["--no-chart"],
        &["--chart", "never"],
        &["--chart", "auto"],
    ] {
        assert_eq!(stdout(&with(extra)), stdout(&plain), "{extra:?}");
    }
    // Never in JSON or YAML.
    for format in ["json", "yaml"] {
        let doc = with(&["-o", format]);
        assert_eq!(
            stdout(&with(&["-o", format, "--chart", "always"])),
            stdout(&doc)
        );
    }
    // The wide table takes the chart too.
    let wide = with(&["-o", "wide", "--chart", "always"]);
    assert!(stdout(&wide).ends_with(rest), "{}", stdout(&wide));
}

#[test]
fn node_3_chart_in_ascii_under_lang_c() {
    let out = vmctl_chart(
        "60",
        "C",
        &[
            "--from",
            "examples/cluster",
            "plan-drain",
            "node-3",
            "--chart",
            "always",
        ],
    );
    let text = stdout(&out);
    let chart = &text[text.find("\nDrain of node-3: ETA").unwrap()..];
    assert!(chart.is_ascii(), "{chart}");
    assert!(chart.lines().all(|l| l.len() <= 60), "{chart}");
    insta::assert_snapshot!("plan_drain_node_3_chart_ascii", chart);
}

#[test]
fn chart_flags_are_checked() {
    let out = vmctl([
        "--from",
        "examples/cluster",
        "plan-drain",
        "node-3",
        "--chart",
        "sometimes",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", both(&out));
    assert!(stderr(&out).contains("--chart"), "{}", stderr(&out));
    let out = vmctl([
        "--from",
        "examples/cluster",
        "plan-drain",
        "node-3",
        "--chart",
        "always",
        "--no-chart",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", both(&out));
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
}

/// A VMI name with an OSC title sequence (ESC … BEL) reaches the chart escaped.
#[test]
fn chart_escapes_a_hostile_vmi_name() {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(example_cluster()).unwrap() {
        let path = entry.unwrap().path();
        let mut text = std::fs::read_to_string(&path).unwrap();
        if path.ends_with("vmis.yaml") {
            let plain = "\n    name: loadgen-01\n";
            assert_eq!(text.matches(plain).count(), 1);
            text = text.replace(plain, "\n    name: \"loadgen-01\\e]0;pwned\\a\"\n");
        }
        std::fs::write(dir.path().join(path.file_name().unwrap()), text).unwrap();
    }
    let from = dir.path().display().to_string();
    let out = vmctl_chart(
        "100",
        "C.UTF-8",
        &["--from", &from, "plan-drain", "node-3", "--chart", "always"],
    );
    let text = stdout(&out);
    let chart = &text[text
        .find("\nDrain of node-3: ETA")
        .unwrap_or_else(|| panic!("{}", both(&out)))..];
    assert!(chart.contains("dev/loadgen-01\\u{1b}]0;pwne"), "{chart}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "raw control characters: {text:?}"
    );
}

/// pg-orders-01 (examples/cluster) has been in post-copy node-2 → node-1 for 10m04s at the
/// snapshot's as-of time: plan-drain, drain --dry-run and migrate --dry-run say post-copy,
/// the point of no return and the time it has run, and invent no time left; migrate says
/// no word of a drain.
#[test]
fn a_post_copy_migration_in_flight_is_said_with_no_eta() {
    for args in [
        vec!["--from", "examples/cluster", "plan-drain", "node-2"],
        vec![
            "--from",
            "examples/cluster",
            "drain",
            "node-2",
            "--dry-run",
            "--ignore-daemonsets",
        ],
        vec![
            "--from",
            "examples/cluster",
            "-n",
            "prod",
            "migrate",
            "pg-orders-01",
            "--dry-run",
        ],
    ] {
        let out = vmctl(args.clone());
        let text = stdout(&out);
        let line = text
            .lines()
            .find(|l| l.contains("pg-orders-01") && l.contains("kubevirt-migrate-vm-w9c4r"))
            .unwrap_or_else(|| panic!("{args:?}: no line for pg-orders-01\n{text}"));
        for want in [
            "post-copy",
            "point of no return",
            "network failure",
            "running for 10m04s",
        ] {
            assert!(line.contains(want), "{args:?}: {want:?} missing: {line}");
        }
        assert!(
            !line.contains(" left;") && !line.contains("about"),
            "{line}"
        );
        assert_eq!(
            line.contains("drain"),
            args[2] != "-n",
            "{args:?}: the drain is named only where there is one: {line}"
        );
    }
}

/// A migration in flight that a VMIM condition keeps Pending moves nothing until the
/// condition clears (examples/incidents: mig-quota held by migrationRejectedByResourceQuota,
/// mig-backup by migrationBlockedByBackup). The quota needs someone to act: the drain blocks
/// (explain says `resource-quota-exceeded`, Pending, retried forever); the backup ends by
/// itself: a wait. Neither gets an estimate ("about 47s left" was invented).
#[test]
fn a_migration_held_pending_by_its_condition_is_no_estimate_and_a_quota_blocks() {
    let out = vmctl([
        "--from",
        "examples/incidents",
        "plan-drain",
        "node-3",
        "-o",
        "json",
    ]);
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["verdict"], "will-block", "{plan:#}");
    assert_eq!(out.status.code(), Some(1));
    let quota = vmi(&plan, "cache-02");
    assert_eq!(quota["action"], "blocks-drain", "{quota:#}");
    assert_eq!(quota["estimateSeconds"], Value::Null);
    let backup = vmi(&plan, "ledger-01");
    assert_eq!(backup["action"], "already-migrating", "{backup:#}");
    assert_eq!(backup["estimateSeconds"], Value::Null, "{backup:#}");
    let blockers = plan["blockers"].as_array().unwrap();
    let by = |name: &str| {
        blockers
            .iter()
            .find(|b| b["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {blockers:#?}"))
    };
    assert_eq!(by("cache-02")["reason"], "migrationRejectedByResourceQuota");
    assert_eq!(by("cache-02")["blocking"], true);
    assert_eq!(by("ledger-01")["reason"], "migrationBlockedByBackup");
    assert_eq!(by("ledger-01")["blocking"], false);
    // explain says the same of the quota.
    let explained = vmctl([
        "--from",
        "examples/incidents",
        "-n",
        "quota",
        "explain",
        "mig-quota",
        "-o",
        "json",
    ]);
    let doc: Value = serde_json::from_slice(&explained.stdout).unwrap();
    assert_eq!(doc["cause"], "resource-quota-exceeded", "{doc:#}");
}
