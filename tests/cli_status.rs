//! `vmctl status` on the example cluster: from files and, identically, live through the
//! fake API server.

mod common;
mod support;

use common::*;
use support::{FakeApiServer, Fault, Method};
use vmctl::cluster::Kind;

#[test]
fn status_table_on_the_example_cluster() {
    let out = ok(vmctl(["--from", "examples/cluster", "status"]));
    insta::assert_snapshot!("status_table", out);
}

#[test]
fn status_wide_on_the_example_cluster() {
    let out = ok(vmctl([
        "--from",
        "examples/cluster",
        "status",
        "-o",
        "wide",
    ]));
    insta::assert_snapshot!("status_wide", out);
}

#[test]
fn status_json_is_the_documented_shape() {
    let out = ok(vmctl([
        "--from",
        "examples/cluster",
        "status",
        "-o",
        "json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["apiVersion"], "vmctl/v1alpha1");
    assert_eq!(v["kind"], "StatusReport");
    assert_eq!(v["asOf"], EXAMPLE_NOW);
    let vmis = v["vmis"].as_array().unwrap();
    assert_eq!(vmis.len(), 14);
    let find = |name: &str| vmis.iter().find(|r| r["name"] == name).unwrap().clone();

    let erp = find("legacy-erp-01");
    assert_eq!(erp["liveMigratable"], false);
    assert_eq!(erp["reasons"][0]["reason"], "DisksNotLiveMigratable");
    assert_eq!(erp["evictionStrategy"], "LiveMigrate");

    let loadgen = find("loadgen-01");
    assert_eq!(loadgen["evictionStrategySource"], "cluster-config");
    assert_eq!(loadgen["vm"], serde_json::Value::Null, "a bare VMI");

    let evacuating = find("app-server-02");
    assert_eq!(evacuating["evacuation"]["nodeName"], "node-3");
    assert_eq!(evacuating["migration"]["phase"], "Running");
    assert_eq!(evacuating["migration"]["mode"], "PreCopy");
    let pods = evacuating["pods"].as_array().unwrap();
    let source = pods.iter().find(|p| p["role"] == "source").unwrap();
    let target = pods.iter().find(|p| p["role"] == "target").unwrap();
    assert_eq!(source["live"], true);
    assert_eq!(target["live"], false);
    assert_eq!(source["node"], "node-3");

    let postcopy = find("pg-orders-01");
    assert_eq!(postcopy["migration"]["pointOfNoReturn"], true);

    let aborted = find("devbox-alice");
    assert_eq!(aborted["lastMigration"]["result"], "aborted");

    let migrations = v["migrations"].as_array().unwrap();
    let phases: Vec<&str> = migrations
        .iter()
        .map(|m| m["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases.len(), 4, "{phases:?}");
    assert!(phases.contains(&"Pending") && phases.contains(&"Scheduling"));
    let kinds: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    for k in ["evacuation", "post-copy", "blocks-drain", "failed"] {
        assert!(kinds.contains(&k), "no {k} warning in {kinds:?}");
    }
}

/// The last migration is the VMI's newest finished VMIM (h2b6c, Failed at 02:49:12), not
/// the VMI's stale status.migrationState, which describes a 2026-11-12 migration whose VMIM
/// is gone (explain and history agree).
#[test]
fn last_migration_is_the_newest_finished_vmim_not_a_stale_state() {
    let out = ok(vmctl([
        "--from",
        "examples/cluster",
        "status",
        "-A",
        "-o",
        "json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let vmis = v["vmis"].as_array().unwrap();
    let find = |n: &str| vmis.iter().find(|x| x["name"] == n).unwrap();
    let last = &find("analytics-warehouse-01")["lastMigration"];
    assert_eq!(last["name"], "kubevirt-migrate-vm-h2b6c", "{last}");
    assert_eq!(last["result"], "failed", "{last}");
    assert_eq!(last["endTimestamp"], "2026-11-29T02:49:12Z", "{last}");
    assert_eq!(last["recordedIn"], "vmim", "{last}");
    // A migrationState naming its VMIM still gives the nodes.
    let app = &find("app-server-01")["lastMigration"];
    assert_eq!(app["name"], "kubevirt-migrate-vm-5m8qz", "{app}");
    assert_eq!(app["sourceNode"], "node-3");
    assert_eq!(app["targetNode"], "node-1");
    let wide = ok(vmctl([
        "--from",
        "examples/cluster",
        "status",
        "-A",
        "-o",
        "wide",
    ]));
    let line = wide
        .lines()
        .find(|l| l.contains("analytics-warehouse-01"))
        .unwrap();
    assert!(line.contains("failed kubevirt-migrate-vm-h2b6c"), "{line}");
    assert!(!line.contains("succeeded"), "{line}");
}

/// waitingFor names a slot only when a parallel limit is full (counted as plan-drain counts);
/// a backoff is KubeVirt's backoff (as explain computes it); otherwise the target pod, not
/// created yet. The VM table and the migrations table take the target node from the same
/// place (the target pod's node before migrationState names one).
#[test]
fn waiting_for_names_a_slot_only_when_the_limits_are_full() {
    let out = ok(vmctl([
        "--from",
        "examples/incidents",
        "status",
        "-A",
        "-o",
        "json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let migs = v["migrations"].as_array().unwrap();
    let mig = |n: &str| migs.iter().find(|x| x["name"] == n).unwrap();
    let waits = |n: &str| mig(n)["waitingFor"].as_str().unwrap().to_string();
    // 5 of 8 cluster-wide, node-2 and node-3 each 1 of 2 outbound: slots are free.
    assert_eq!(
        waits("mig-create-forbidden"),
        "the target pod (not created yet)"
    );
    let backoff = waits("kubevirt-evacuation-pp4wc");
    assert!(!backoff.contains("slot"), "{backoff}");
    assert!(
        backoff.contains("KubeVirt's backoff until 2026-12-03T10:00:10Z"),
        "{backoff}"
    );
    // node-4 runs 2 of its 2 outbound: this one does wait for a slot.
    let queued = waits("mig-batch-03");
    assert!(
        queued.contains("a free migration slot (2 of 2 outbound from node-4)"),
        "{queued}"
    );

    let vmis = v["vmis"].as_array().unwrap();
    let gw = vmis.iter().find(|x| x["name"] == "api-gw-01").unwrap();
    assert_eq!(gw["migration"]["targetNode"], "node-3", "{gw}");
    assert_eq!(mig("mig-target-imagepull")["targetNode"], "node-3");
    let table = ok(vmctl(["--from", "examples/incidents", "status", "-A"]));
    let line = table.lines().find(|l| l.contains(" api-gw-01 ")).unwrap();
    assert!(line.contains("node-2→node-3"), "{line}");
}

#[test]
fn status_yaml_parses_back() {
    let out = ok(vmctl([
        "--from",
        "examples/cluster",
        "status",
        "-o",
        "yaml",
    ]));
    let v: serde_json::Value = serde_saphyr::from_str(&out).unwrap();
    assert_eq!(v["kind"], "StatusReport");
}

#[test]
fn filters_by_node_namespace_selector_and_name() {
    let v = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["--from", "examples/cluster", "status", "-o", "json"];
        all.extend_from_slice(args);
        let out: serde_json::Value = serde_json::from_str(&ok(vmctl(all))).unwrap();
        out["vmis"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect()
    };
    let on_node_4 = v(&["--node", "node-4"]);
    assert_eq!(on_node_4, ["ml-inference-01"]);
    let dev = v(&["-n", "dev"]);
    assert_eq!(dev, ["devbox-alice", "jenkins-agent-01", "loadgen-01"]);
    assert_eq!(v(&["pg-orders-01"]), ["pg-orders-01"]);
    assert!(v(&["-l", "kubevirt.io/nodeName=node-3"]).len() >= 5);
}

fn live_status(server: &FakeApiServer, args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    vmctl_live(&server.write_kubeconfig(dir.path()), args)
}

#[test]
fn live_output_equals_snapshot_output() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    for format in ["table", "wide", "json"] {
        let live = ok(live_status(&server, &["status", "-A", "-o", format]));
        let from_files = ok(vmctl([
            "--from",
            "examples/cluster",
            "status",
            "-A",
            "-o",
            format,
        ]));
        assert_eq!(
            normalise_source(&live),
            normalise_source(&from_files),
            "-o {format}"
        );
    }
}

#[test]
fn live_requests_do_not_grow_with_the_number_of_vmis() {
    fn cluster(n: usize) -> Vec<serde_json::Value> {
        (0..n)
            .flat_map(|i| {
                let uid = format!("uid-{i}");
                [
                    serde_json::json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                        "metadata": {"name": format!("vm-{i:05}"), "namespace": "prod", "uid": uid,
                                     "labels": {"kubevirt.io/nodeName": "node-1"}},
                        "status": {"nodeName": "node-1", "phase": "Running"}}),
                    serde_json::json!({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": format!("virt-launcher-vm-{i:05}"), "namespace": "prod",
                                     "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": uid}},
                        "spec": {"nodeName": "node-1", "containers": []}, "status": {"phase": "Running"}}),
                ]
            })
            .collect()
    }
    let count = |n: usize| {
        let server = FakeApiServer::start_blocking(cluster(n));
        let out = live_status(&server, &["status", "-A", "-o", "json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["vmis"].as_array().unwrap().len(), n);
        (
            server.request_count(),
            server.list_count(Kind::VirtualMachineInstance),
            server.list_count(Kind::Pod),
        )
    };
    // 10 VMIs: one page of each kind. 1,200 VMIs: three pages of VMIs and of pods, nothing else.
    let (small, small_vmi_pages, small_pod_pages) = count(10);
    let (large, large_vmi_pages, large_pod_pages) = count(1200);
    assert_eq!((small_vmi_pages, small_pod_pages), (1, 1));
    assert_eq!((large_vmi_pages, large_pod_pages), (3, 3));
    assert_eq!(
        large - small,
        4,
        "only the extra pages: {small} vs {large} requests"
    );
}

#[test]
fn snapshot_round_trips_to_the_same_status() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("incident.yaml");
    let out = live_status(&server, &["snapshot", "-A", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("VirtualMachineInstance"),
        "{}",
        stderr(&out)
    );
    for format in ["table", "json"] {
        let live = ok(live_status(&server, &["status", "-A", "-o", format]));
        let replay = ok(vmctl([
            "--from",
            file.to_str().unwrap(),
            "status",
            "-o",
            format,
        ]));
        assert_eq!(
            normalise_source(&live),
            normalise_source(&replay),
            "-o {format}"
        );
    }
    // `-o json`: the same snapshot as one line of JSON (what --from reads fastest), which
    // replays to the same status.
    let json_file = dir.path().join("incident.json");
    let out = live_status(
        &server,
        &["snapshot", "-A", "-o", "json", json_file.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let json_text = std::fs::read_to_string(&json_file).unwrap();
    assert_eq!(json_text.lines().count(), 1);
    let as_json: serde_json::Value = serde_json::from_str(&json_text).unwrap();
    let as_yaml: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(as_json["items"], as_yaml["items"]);
    for from in [&file, &json_file] {
        let replay = ok(vmctl([
            "--from",
            from.to_str().unwrap(),
            "status",
            "-o",
            "json",
        ]));
        let live = ok(live_status(&server, &["status", "-A", "-o", "json"]));
        assert_eq!(
            normalise_source(&live),
            normalise_source(&replay),
            "{from:?}"
        );
    }
    // The file is a vmctl Snapshot whose capture time becomes the replay's clock.
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with(
            "apiVersion: vmctl/v1alpha1\nkind: Snapshot\ncapturedAt: \"2026-11-29T03:00:00Z\""
        ),
        "{}",
        &text[..200]
    );
}

/// One answer of the API server is read up to `--max-input-size` (at most 1Gi), never whole
/// whatever its size: a larger one is refused with the bound named, not read into memory.
#[test]
fn an_answer_larger_than_the_input_bound_is_refused() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    let out = live_status(&server, &["status", "-A", "--max-input-size", "4Ki"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("the answer is larger than 4096 bytes: not read"),
        "{err}"
    );
    assert!(err.contains("--max-input-size raises the bound"), "{err}");
    // The default bound reads the same cluster.
    assert!(live_status(&server, &["status", "-A"]).status.success());
}

#[test]
fn snapshot_to_stdout_and_by_node() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    let out = ok(live_status(
        &server,
        &["snapshot", "-A", "--node", "node-4", "-"],
    ));
    let v: serde_json::Value = serde_saphyr::from_str(&out).unwrap();
    let items = v["items"].as_array().unwrap();
    let vmis: Vec<&str> = items
        .iter()
        .filter(|i| i["kind"] == "VirtualMachineInstance")
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(vmis, ["ml-inference-01"]);
    // Every node stays, for capacity.
    let nodes = items.iter().filter(|i| i["kind"] == "Node").count();
    assert_eq!(nodes, 4);
}

#[test]
fn forbidden_names_verb_and_resource_with_a_hint() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    server.inject_fault(Fault::status(403).on(Method::GET, "/virtualmachineinstances"));
    let out = live_status(&server, &["status", "-A"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let err = stderr(&out);
    let first = err.lines().next().unwrap();
    assert!(
        first.starts_with("error: list virtualmachineinstances.kubevirt.io: "),
        "{err}"
    );
    assert!(first.contains("forbidden"), "{err}");
    assert!(err.contains("hint: ") && err.contains("rbac"), "{err}");
}

#[test]
fn unauthorised_is_a_cluster_error() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    server.inject_fault(Fault::status(401).path("/api/v1/pods"));
    let out = live_status(&server, &["status", "-A"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("hint: the credentials in your kubeconfig were refused"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn transient_server_errors_are_retried() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    server.inject_fault(Fault::status(503).path("/virtualmachineinstances").times(2));
    let out = live_status(&server, &["status", "-A", "-o", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let vmi_lists = server.list_count(Kind::VirtualMachineInstance);
    assert_eq!(vmi_lists, 3, "two 503s then success");
}

#[test]
fn the_context_namespace_is_the_default_scope_live() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    // The fake kubeconfig's context namespace is "default", which holds no VMIs.
    let out = ok(live_status(&server, &["status", "-o", "json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["vmis"].as_array().unwrap().is_empty());
    let out = ok(live_status(&server, &["status", "-n", "dev", "-o", "json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["vmis"].as_array().unwrap().len(), 3);
}

// ---------------------------------------------------------------- KubeVirt v1.9 / v1.10

const KV19: &str = "tests/fixtures/status-kv19";
const KV19_NOW: &str = "2026-12-01T12:00:00Z";

#[test]
fn kv19_status_shows_decentralized_sides_priority_and_conditions() {
    let out = ok(vmctl([
        "--from", KV19, "--now", KV19_NOW, "status", "-A", "-o", "json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let vmis = v["vmis"].as_array().unwrap();
    let find = |ns: &str, name: &str| {
        vmis.iter()
            .find(|r| r["namespace"] == ns && r["name"] == name)
            .unwrap()
            .clone()
    };

    // The sender: the guest runs here, the target is the peer cluster's node.
    let sender = find("prod", "db-01");
    let m = &sender["migration"];
    assert_eq!(m["phase"], "Synchronizing");
    assert_eq!(m["priority"], "user-triggered");
    assert_eq!(m["sourceNode"], "node-1");
    assert_eq!(m["targetNode"], "dc2-node-4");
    assert_eq!(m["targetPod"], "virt-launcher-db-01-zz9kq");
    assert_eq!(m["decentralized"]["role"], "sender");
    assert_eq!(
        m["decentralized"]["connectUrl"],
        "sync.dc2.example.net:9185"
    );
    assert_eq!(m["decentralized"]["liveHere"], true);

    // The receiver: the local VMI is the target; the source is the other cluster's.
    let receiver = find("inbound", "web-09");
    let m = &receiver["migration"];
    assert_eq!(m["phase"], "WaitingForSync");
    assert_eq!(m["sourceNode"], "dc1-node-2", "not the local node");
    assert_eq!(m["targetNode"], "node-7");
    assert_eq!(m["decentralized"]["role"], "receiver");
    assert_eq!(m["decentralized"]["liveHere"], false);
    assert_eq!(
        m["decentralized"]["synchronizationAddresses"][0],
        "10.30.0.9:9185"
    );
    assert!(m.get("priority").is_none(), "unset priority is omitted");

    // Conditions: MigrationRequired, DecentralizedLiveMigrationFailure, StorageLiveMigratable.
    let api = find("prod", "api-03");
    assert_eq!(api["migrationConditions"][0]["type"], "MigrationRequired");
    assert_eq!(
        api["migrationConditions"][0]["reason"],
        "AutoMigrationPending"
    );
    let erp = find("prod", "erp-01");
    assert_eq!(
        erp["migrationConditions"][0]["type"],
        "DecentralizedLiveMigrationFailure"
    );
    let files = find("prod", "files-01");
    assert_eq!(
        files["migrationConditions"][0]["type"],
        "StorageLiveMigratable"
    );
    assert_eq!(files["liveMigratable"], true);
    // Nothing to show: the field is omitted (the JSON of older clusters is unchanged).
    assert!(sender.get("migrationConditions").is_none());

    let kinds: Vec<(&str, &str)> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["vmi"].as_str().unwrap(), w["kind"].as_str().unwrap()))
        .collect();
    assert!(
        kinds.contains(&("prod/api-03", "migration-required")),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&("prod/erp-01", "decentralized-failure")),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&("prod/files-01", "storage-not-migratable")),
        "{kinds:?}"
    );

    let migrations = v["migrations"].as_array().unwrap();
    let row = migrations
        .iter()
        .find(|m| m["name"] == "kubevirt-workload-update-h0t")
        .unwrap();
    assert_eq!(row["priority"], "user-triggered");
    let recv = migrations
        .iter()
        .find(|m| m["name"] == "web-09-recv")
        .unwrap();
    assert_eq!(recv["sourceNode"], "dc1-node-2");
    assert!(
        recv["waitingFor"]
            .as_str()
            .unwrap()
            .contains("sending cluster to connect to 10.30.0.9:9185")
    );
}

#[test]
fn kv19_status_wide_table() {
    let out = ok(vmctl([
        "--from", KV19, "--now", KV19_NOW, "status", "-A", "-o", "wide",
    ]));
    // The escape sequence in a condition message never reaches the terminal.
    assert!(!out.contains('\u{1b}'), "{out}");
    assert!(out.contains("peer VMI memory differs"), "{out}");
    insta::assert_snapshot!("kv19_status_wide", out);
}

// ---------------------------------------------------------------- issue 25 §4: loops

const LOOP_FIXTURES: &str = "tests/fixtures/explain/reported";

fn status_json_at(case: &str, now: &str, extra: &[&str]) -> serde_json::Value {
    let from = format!("{LOOP_FIXTURES}/{case}");
    let mut args = vec![
        "--from",
        from.as_str(),
        "--now",
        now,
        "status",
        "-A",
        "-o",
        "json",
    ];
    args.extend_from_slice(extra);
    serde_json::from_str(&ok(vmctl(args))).unwrap()
}

#[test]
fn status_names_an_evacuation_loop_with_its_blocking_field_cause_and_way_out() {
    // harvester#10698: three evacuations failed on a CPU mismatch, the fourth waits.
    let r = status_json_at("evacuation-loop", "2026-11-30T05:03:30Z", &[]);
    let vmi = &r["vmis"][0];
    let l = &vmi["loop"];
    assert_eq!(l["kind"], "evacuation-loop");
    assert_eq!(l["attempts"], 3);
    assert_eq!(l["since"], "2026-11-30T05:00:00Z");
    assert_eq!(l["migration"], "kubevirt-evacuation-q5w1z");
    assert_eq!(l["blocking"]["object"], "VirtualMachineInstance/default/vm");
    assert_eq!(l["blocking"]["field"], "status.evacuationNodeName");
    assert_eq!(l["blocking"]["value"], "n2-v15");
    assert_eq!(l["lastFailure"]["migration"], "kubevirt-evacuation-t8v3n");
    // explain's cause of the last attempt (the CPU mismatch is a libvirt error today).
    assert_eq!(l["lastFailure"]["cause"], "cpu-feature-mismatch");
    assert_eq!(l["nextAttempt"], "2026-11-30T05:03:53Z");
    // Stopping the drain comes first, on its own; the way out proper follows.
    assert!(
        l["stopFirst"]
            .as_str()
            .unwrap()
            .starts_with("Stop what keeps evicting the VM first"),
        "{l}"
    );
    let way: Vec<&str> = l["wayOut"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert!(
        way.iter()
            .any(|w| w.contains("vmctl abort --evacuation vm/vm -n default")),
        "{way:?}"
    );
    assert!(
        way.iter().any(|w| w.contains("kubectl uncordon n2-v15")),
        "{way:?}"
    );
    let warnings = r["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w["kind"] == "evacuation-loop" && w["vmi"] == "default/vm"),
        "{warnings:?}"
    );
    // The table says it under Attention.
    let table = ok(vmctl([
        "--from",
        &format!("{LOOP_FIXTURES}/evacuation-loop"),
        "--now",
        "2026-11-30T05:03:30Z",
        "status",
        "-A",
    ]));
    assert!(table.contains("KubeVirt has tried 3 times"), "{table}");
    assert!(
        table.contains("vmctl abort --evacuation vm/vm -n default"),
        "{table}"
    );
    // A higher threshold: no loop yet.
    let r = status_json_at(
        "evacuation-loop",
        "2026-11-30T05:03:30Z",
        &["--loop-failures", "4"],
    );
    assert!(r["vmis"][0].get("loop").is_none(), "{}", r["vmis"][0]);
}

#[test]
fn status_names_both_sides_of_a_stuck_decentralized_migration() {
    // kubevirt#18259: 40 minutes in Synchronizing / WaitingForSync.
    let r = status_json_at("decentralized-sync-stuck", "2026-11-30T10:40:00Z", &[]);
    let vmis = r["vmis"].as_array().unwrap();
    let by_ns = |ns: &str| vmis.iter().find(|v| v["namespace"] == ns).unwrap();
    let send = &by_ns("vm-src")["loop"];
    assert_eq!(send["kind"], "decentralized-sync-stuck");
    assert_eq!(send["migration"], "rhel9-send");
    assert_eq!(
        send["blocking"]["field"],
        "status.migrationState.targetState.migrationUID"
    );
    assert!(
        send["counterpart"]
            .as_str()
            .unwrap()
            .contains("spec.receive.migrationID rhel9-xns")
    );
    let recv = &by_ns("vm-dst")["loop"];
    assert_eq!(recv["migration"], "rhel9-recv");
    assert_eq!(
        recv["blocking"]["field"],
        "status.migrationState.sourceState"
    );
    // Within --sync-timeout it is only waiting.
    let r = status_json_at(
        "decentralized-sync-stuck",
        "2026-11-30T10:40:00Z",
        &["--sync-timeout", "1h"],
    );
    assert!(
        r["vmis"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v.get("loop").is_none())
    );
}

#[test]
fn status_names_a_backend_storage_hand_off_stuck_past_the_handoff_timeout() {
    // kubevirt#17203: the stream ended at 12:01:02, the VMIM stays Running 39 minutes later
    // because backendstorage.MigrationHandoff (pkg/storage/backend-storage/backend-storage.go)
    // keeps failing on the persistent-state PVC, with no timeout.
    let case = "backend-storage-handoff";
    let now = "2026-11-30T12:40:00Z";
    let r = status_json_at(case, now, &[]);
    let vmi = &r["vmis"][0];
    assert_eq!(vmi["name"], "win11-07");
    let l = &vmi["loop"];
    assert_eq!(l["kind"], "backend-storage-handoff-stuck");
    assert_eq!(l["migration"], "kubevirt-migrate-vm-tpm9x");
    assert_eq!(l["since"], "2026-11-30T12:01:02Z");
    assert_eq!(l["seconds"], 2338);
    assert_eq!(
        l["blocking"]["object"],
        "PersistentVolumeClaim/desktops/persistent-state-for-win11-07-b7q4w"
    );
    assert_eq!(
        l["blocking"]["field"],
        "metadata.finalizers / metadata.deletionTimestamp"
    );
    let way: Vec<&str> = l["wayOut"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert!(
        way[0].contains(
            "kubectl get pvc -n desktops persistent-state-for-win11-07-b7q4w persistent-state-for-win11-07-m2k8r -o yaml"
        ),
        "{way:?}"
    );
    // The guest already runs on the target: the way out never deletes the VMIM.
    assert!(
        way.iter().any(|w| w.contains("do not delete the VMIM")),
        "{way:?}"
    );
    assert!(
        r["warnings"].as_array().unwrap().iter().any(|w| w["kind"]
            == "backend-storage-handoff-stuck"
            && w["vmi"] == "desktops/win11-07"),
        "{}",
        r["warnings"]
    );
    // The migration row waits for the hand-off, not for memory to converge.
    let row = &r["migrations"][0];
    assert_eq!(row["name"], "kubevirt-migrate-vm-tpm9x");
    assert_eq!(
        row["waitingFor"],
        "the backend-storage PVC hand-off (the stream ended 38m58s ago; stuck: see Attention)"
    );
    // The same in YAML and in the table.
    let from = format!("{LOOP_FIXTURES}/{case}");
    let yaml = ok(vmctl([
        "--from", &from, "--now", now, "status", "-A", "-o", "yaml",
    ]));
    let y: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
    assert_eq!(y["vmis"][0]["loop"], *l);
    // The long WAITING FOR is whole in -o wide (the default clips it to fit the terminal).
    let table = ok(vmctl([
        "--from", &from, "--now", now, "status", "-A", "-o", "wide",
    ]));
    for want in [
        "Attention:",
        "! desktops/win11-07: kubevirt-migrate-vm-tpm9x finished streaming 38m58s ago but stays Running",
        "Way out: See what keeps the PVC",
        "the backend-storage PVC hand-off (the stream ended 38m58s ago",
    ] {
        assert!(table.contains(want), "{want}\n{table}");
    }
    assert!(!table.contains("memory transfer to converge"), "{table}");
    // Within --handoff-timeout it is only a migration in flight.
    let r = status_json_at(case, now, &["--handoff-timeout", "1h"]);
    assert!(r["vmis"][0].get("loop").is_none(), "{}", r["vmis"][0]);
    assert_eq!(
        r["migrations"][0]["waitingFor"],
        "memory transfer to converge"
    );
}

/// Issue 33 (tried cold): the migrations table's PHASE said `PostCopy`, a mode, for a VMIM
/// whose phase is Running. Each row's PHASE starts with the VMIM's own phase (from the
/// objects, through -o json), and a post-copy one says so beside it.
#[test]
fn the_migrations_phase_column_is_the_vmims_phase() {
    let json = vmctl(["--from", "examples/cluster", "status", "-o", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let table = stdout(&vmctl(["--from", "examples/cluster", "status"]));
    let rows: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with("Migrations not finished"))
        .skip(2)
        .take_while(|l| !l.is_empty() && !l.starts_with('('))
        .collect();
    let migrations = report["migrations"].as_array().unwrap();
    assert_eq!(rows.len(), migrations.len(), "{table}");
    for m in migrations {
        let name = m["name"].as_str().unwrap();
        let row = rows.iter().find(|r| r.contains(name)).unwrap();
        let phase = m["phase"].as_str().unwrap();
        let after = row
            .split(m["vmi"].as_str().unwrap())
            .nth(1)
            .unwrap()
            .trim_start();
        assert!(after.starts_with(phase), "{name}: {row}");
        if m["mode"] == "PostCopy" {
            assert!(after.starts_with(&format!("{phase} (post-copy)")), "{row}");
        }
    }
}

/// The clusters status and plan-drain are checked against each other on: the example
/// cluster and every fixture cluster of tests/fixtures (a directory of YAML files, or one
/// file when the directory has no YAML of its own).
fn fixture_clusters() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![root.join("examples/cluster")];
    let mut stack = vec![root.join("tests/fixtures")];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        let yaml = entries
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "yaml" || e == "json"));
        if yaml {
            out.push(dir.clone());
        }
        stack.extend(entries.into_iter().filter(|p| p.is_dir()));
    }
    out
}

/// `kind namespace/name` of the blockers that hold `vmi` (blocking only; a ResourceQuota
/// on a migration's target pod is the placement's, which status does not judge).
fn plan_blockers(plan: &serde_json::Value, vmi: &str) -> Vec<String> {
    let mut b: Vec<String> = plan["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| {
            b["blocking"] == true
                && b["kind"] != "quota"
                && b["reason"] != "migrationRejectedByResourceQuota"
        })
        .filter(|b| b["vmis"].as_array().unwrap().iter().any(|v| v == vmi))
        .map(|b| {
            format!(
                "{} {}/{}",
                b["kind"].as_str().unwrap(),
                b["namespace"].as_str().unwrap_or(""),
                b["name"].as_str().unwrap()
            )
        })
        .collect();
    b.sort();
    b
}

/// Issue 33 (i33-k, 1): what status says a drain does to a VM is what plan-drain says for
/// that VM's node, on every VM of every fixture cluster, by program (both `-o json`).
#[test]
fn status_says_of_a_drain_what_plan_drain_says() {
    let mut checked = 0;
    let mut claims = 0;
    for cluster in fixture_clusters() {
        let from = cluster.display().to_string();
        let out = vmctl(["--from", from.as_str(), "status", "-A", "-o", "json"]);
        if out.status.code() != Some(0) {
            continue;
        }
        let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut plans: std::collections::BTreeMap<String, serde_json::Value> = Default::default();
        for row in status["vmis"].as_array().unwrap() {
            let Some(node) = row["node"].as_str() else {
                continue;
            };
            let id = format!(
                "{}/{}",
                row["namespace"].as_str().unwrap(),
                row["name"].as_str().unwrap()
            );
            let plan = plans.entry(node.to_string()).or_insert_with(|| {
                let out = vmctl(["--from", from.as_str(), "plan-drain", node, "-o", "json"]);
                // A node the snapshot has no Node object for: plan-drain refuses it.
                serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null)
            });
            if plan.is_null() {
                assert!(
                    row["drain"].is_null(),
                    "{from} {id}: status claims {} of node {node}, which plan-drain does not know",
                    row["drain"]
                );
                continue;
            }
            let planned = plan["vmis"]
                .as_array()
                .unwrap()
                .iter()
                .find(|v| v["namespace"] == row["namespace"] && v["name"] == row["name"]);
            let said = &row["drain"];
            checked += 1;
            match (said.is_null(), planned) {
                (false, Some(p)) => {
                    claims += 1;
                    assert_eq!(said["action"], p["action"], "{from} {id}: {said} vs {p}");
                    assert_eq!(said["node"], node, "{from} {id}: {said}");
                    let by: Vec<String> = said["blockedBy"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|b| b.as_str().unwrap().to_string())
                        .collect();
                    assert_eq!(by, plan_blockers(plan, &id), "{from} {id}: {said}");
                }
                (false, None) => panic!("{from} {id}: status says {said}, plan-drain skips it"),
                (true, Some(p)) => {
                    let action = p["action"].as_str().unwrap();
                    let placement =
                        matches!(action, "live-migrate" | "already-migrating" | "no-target")
                            || (action == "blocks-drain" && plan_blockers(plan, &id).is_empty());
                    assert!(
                        placement,
                        "{from} {id}: status says nothing of a drain, plan-drain says {action}: {}",
                        p["explanation"]
                    );
                }
                (true, None) => {}
            }
        }
    }
    eprintln!("{checked} VMs checked, {claims} claims");
    assert!(checked >= 50, "only {checked} VMs checked");
    assert!(claims >= 15, "only {claims} claims checked");
}

/// The example's sip-gateway-01: not live-migratable, LiveMigrateIfPossible, and a PDB
/// that allows no disruption: status says the drain blocks on the PDB, as plan-drain does.
#[test]
fn status_names_the_pdb_that_blocks_a_shutdown() {
    let out = ok(vmctl(["--from", "examples/cluster", "status", "-A"]));
    let line = out
        .lines()
        .find(|l| l.contains("prod/sip-gateway-01: not live-migratable"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(!line.ends_with("a drain shuts it down"), "{line}");
    assert!(
        line.contains("PodDisruptionBudget prod/sip-gateway-pdb refuses the eviction"),
        "{line}"
    );
    assert!(line.contains("vmctl plan-drain node-3"), "{line}");
}

/// Issue 33 (i33-k, 5): under `LANG=C` what vmctl writes on stderr (warnings, errors) is
/// ASCII, as its tables are.
#[test]
fn stderr_is_ascii_without_a_utf8_locale() {
    let dir = tempfile::tempdir().unwrap();
    // A VMI whose creationTimestamp does not parse: a warning (status) and an error
    // (explain), each quoting the value cut with an ellipsis.
    let vmi = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [{
        "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
        "metadata": {"name": "vm-a", "namespace": "prod", "creationTimestamp": "x".repeat(300)},
        "spec": {}, "status": {"phase": "Running", "nodeName": "node-1"}}]});
    std::fs::write(dir.path().join("vmis.json"), vmi.to_string()).unwrap();
    let from = dir.path().display().to_string();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_vmctl"))
            .args(["--from", from.as_str()])
            .args(args)
            .env("NO_COLOR", "1")
            .env("LANG", "C")
            .env("LC_ALL", "C")
            .env_remove("LC_CTYPE")
            .env_remove("KUBECONFIG")
            .env("VMCTL_JOURNAL", "off")
            .output()
            .unwrap()
    };
    for (args, code) in [
        (&["status", "-A"][..], 0),
        (&["status", "-A", "-o", "json"][..], 0),
        (&["explain", "vm/vm-a", "-n", "prod"][..], 4),
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", both(&out));
        let err = stderr(&out);
        assert!(
            err.contains("warning:") || err.contains("error:"),
            "{args:?}: {err}"
        );
        for line in err.lines() {
            assert!(
                line.is_ascii(),
                "{args:?}: not ASCII under LANG=C: {line:?}"
            );
        }
    }
}
