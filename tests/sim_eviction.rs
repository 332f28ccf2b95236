//! Tests of the drain infrastructure itself: KubeVirt's eviction webhook and evacuation
//! controller in the sim (tests/support/kubevirt_sim.rs), PDBs in the fake API server's
//! eviction handler, cordon by PATCH, pods listed and watched by node.

mod common;
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::http::{self, RawWatch};
use support::kubevirt_sim::{self, DrainFixture, KubeVirtSim, Script};
use support::{FakeApiServer, Fault};
use vmctl::cluster::Kind;

const WEBHOOK: &str =
    "admission webhook \"virt-launcher-eviction-interceptor.kubevirt.io\" denied the request: ";

fn start(fixture: DrainFixture, script: Script) -> (Arc<FakeApiServer>, KubeVirtSim) {
    let server = Arc::new(FakeApiServer::start_blocking(
        kubevirt_sim::drain_cluster_with(&fixture),
    ));
    let sim = KubeVirtSim::start(&server, script);
    (server, sim)
}

fn fast() -> Script {
    Script {
        phase_ticks: 1,
        running_ticks: 3,
        ..Script::default()
    }
}

fn evict(server: &FakeApiServer, ns: &str, pod: &str) -> http::HttpResponse {
    http::send_json(
        &server.url(),
        "POST",
        &format!("/api/v1/namespaces/{ns}/pods/{pod}/eviction"),
        "application/json",
        &json!({"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": pod, "namespace": ns}}),
    )
}

fn cordon(server: &FakeApiServer, node: &str) {
    let r = http::send_json(
        &server.url(),
        "PATCH",
        &format!("/api/v1/nodes/{node}"),
        "application/strategic-merge-patch+json",
        &json!({"spec": {"unschedulable": true}}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
}

fn vmi(server: &FakeApiServer, name: &str) -> Value {
    server
        .object(Kind::VirtualMachineInstance, Some("prod"), name)
        .unwrap_or_else(|| panic!("no VMI {name}"))
}

/// Polls until `f` holds; the deadline only bounds a hang, nothing is asserted on time.
fn wait_for(what: &str, f: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn evacuations(server: &FakeApiServer, vmi: &str) -> Vec<Value> {
    server
        .objects(Kind::VirtualMachineInstanceMigration)
        .into_iter()
        .filter(|m| m["spec"]["vmiName"] == vmi)
        .filter(|m| {
            m["metadata"]["annotations"]["kubevirt.io/evacuationMigration"].as_str()
                == Some("node-1")
        })
        .collect()
}

fn events(server: &FakeApiServer, object: &str, reason: &str) -> Vec<Value> {
    server
        .objects(Kind::Event)
        .into_iter()
        .filter(|e| e["involvedObject"]["name"] == object && e["reason"] == reason)
        .collect()
}

fn assert_denied(r: &http::HttpResponse, message: &str) {
    assert_eq!(r.status, 429, "{}", r.text());
    let body = r.json();
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["code"], 429);
    assert_eq!(body["message"], format!("{WEBHOOK}{message}"));
}

#[test]
fn webhook_denies_a_non_migratable_live_migrate_vmi_forever() {
    let (server, sim) = start(
        DrainFixture {
            blocker: true,
            ..DrainFixture::default()
        },
        fast(),
    );
    for _ in 0..2 {
        let r = evict(&server, "prod", "virt-launcher-db-01-abcde");
        assert_denied(
            &r,
            "VMI db-01 is configured with an eviction strategy but is not live-migratable",
        );
        assert!(r.json().get("reason").is_none(), "virt-api sets no reason");
    }
    sim.wait_ticks(5);
    assert!(vmi(&server, "db-01")["status"]["evacuationNodeName"].is_null());
    assert!(evacuations(&server, "db-01").is_empty());
    assert!(
        server
            .object(Kind::Pod, Some("prod"), "virt-launcher-db-01-abcde")
            .is_some()
    );
}

#[test]
fn webhook_allows_live_migrate_if_possible_when_not_migratable() {
    let (server, _sim) = start(
        DrainFixture {
            blocker: true,
            ..DrainFixture::default()
        },
        fast(),
    );
    let mut db = vmi(&server, "db-01");
    db["spec"]["evictionStrategy"] = json!("LiveMigrateIfPossible");
    server.update_object(db);
    let r = evict(&server, "prod", "virt-launcher-db-01-abcde");
    assert_eq!(r.status, 201, "{}", r.text());
    assert!(
        server
            .object(Kind::Pod, Some("prod"), "virt-launcher-db-01-abcde")
            .is_none()
    );
    // The VMI stops; its VM (runStrategy Always) restarts it elsewhere with a new uid.
    wait_for("db-01 restarted", || {
        server
            .object(Kind::VirtualMachineInstance, Some("prod"), "db-01")
            .is_some_and(|v| v["metadata"]["uid"] != "uid-db-01")
    });
}

#[test]
fn none_strategy_pod_is_evicted_and_the_vm_restarts_off_the_cordoned_node() {
    let (server, _sim) = start(DrainFixture::default(), fast());
    cordon(&server, "node-1");
    let r = evict(&server, "prod", "virt-launcher-scratch-01-abcde");
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["status"], "Success");
    wait_for("scratch-01 restarted", || {
        server
            .object(Kind::VirtualMachineInstance, Some("prod"), "scratch-01")
            .is_some_and(|v| v["metadata"]["uid"] != "uid-scratch-01")
    });
    let fresh = vmi(&server, "scratch-01");
    assert_eq!(fresh["status"]["phase"], "Running");
    assert_eq!(fresh["status"]["nodeName"], "node-2");
    let uid = fresh["metadata"]["uid"].as_str().unwrap().to_string();
    let launchers: Vec<Value> = server
        .objects(Kind::Pod)
        .into_iter()
        .filter(|p| p["metadata"]["labels"]["kubevirt.io/created-by"] == uid.as_str())
        .collect();
    assert_eq!(launchers.len(), 1);
    assert_eq!(launchers[0]["spec"]["nodeName"], "node-2");
    assert_eq!(events(&server, "scratch-01", "Stopped").len(), 1);
    assert_eq!(events(&server, "scratch-01", "SuccessfulCreate").len(), 1);
}

#[test]
fn webhook_marks_then_reports_evacuation_in_progress() {
    let (server, _sim) = start(
        DrainFixture::default(),
        Script {
            hold_running: true,
            ..fast()
        },
    );
    let r = evict(&server, "prod", "virt-launcher-web-01-abcde");
    assert_denied(&r, "Eviction triggered evacuation of VMI \"prod/web-01\"");
    let web = vmi(&server, "web-01");
    assert_eq!(web["status"]["evacuationNodeName"], "node-1");
    assert!(
        web["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "EvictionRequested" && c["status"] == "True")
    );
    let r = evict(&server, "prod", "virt-launcher-web-01-abcde");
    assert_denied(
        &r,
        "Evacuation in progress: Eviction triggered evacuation of VMI \"prod/web-01\"",
    );
    // The controller starts exactly one evacuation, critical priority (v1.9).
    wait_for("an evacuation VMIM", || {
        !evacuations(&server, "web-01").is_empty()
    });
    let vmims = evacuations(&server, "web-01");
    assert_eq!(vmims.len(), 1);
    assert_eq!(vmims[0]["spec"]["priority"], "system-critical");
    assert!(
        vmims[0]["metadata"]["name"]
            .as_str()
            .unwrap()
            .starts_with("kubevirt-evacuation-")
    );
    assert_eq!(events(&server, "web-01", "SuccessfulCreate").len(), 1);
}

#[test]
fn external_strategy_is_marked_but_never_migrated() {
    let (server, sim) = start(DrainFixture::default(), fast());
    let mut batch = vmi(&server, "batch-01");
    batch["spec"]["evictionStrategy"] = json!("External");
    server.update_object(batch);
    let r = evict(&server, "prod", "virt-launcher-batch-01-abcde");
    assert_denied(&r, "Eviction triggered evacuation of VMI \"prod/batch-01\"");
    sim.wait_ticks(10);
    assert_eq!(
        vmi(&server, "batch-01")["status"]["evacuationNodeName"],
        "node-1"
    );
    assert!(
        server
            .objects(Kind::VirtualMachineInstanceMigration)
            .is_empty()
    );
}

#[test]
fn cluster_wide_strategy_applies_when_the_vmi_has_none() {
    let (server, _sim) = start(DrainFixture::default(), fast());
    let mut scratch = vmi(&server, "scratch-01");
    scratch["spec"]
        .as_object_mut()
        .unwrap()
        .remove("evictionStrategy");
    server.update_object(scratch);
    let mut kv = server.objects(Kind::KubeVirt).remove(0);
    kv["spec"]["configuration"]["evictionStrategy"] = json!("LiveMigrate");
    server.update_object(kv);
    let r = evict(&server, "prod", "virt-launcher-scratch-01-abcde");
    assert_denied(
        &r,
        "Eviction triggered evacuation of VMI \"prod/scratch-01\"",
    );
}

#[test]
fn eviction_of_a_migration_target_pod_is_denied() {
    let (server, _sim) = start(
        DrainFixture::default(),
        Script {
            hold_running: true,
            ..fast()
        },
    );
    let r = http::send_json(
        &server.url(),
        "POST",
        "/apis/kubevirt.io/v1/namespaces/prod/virtualmachineinstancemigrations",
        "application/json",
        &json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
            "metadata": {"generateName": "web-01-"}, "spec": {"vmiName": "web-01"}}),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let target = || {
        server.objects(Kind::Pod).into_iter().find(|p| {
            p["metadata"]["labels"]["kubevirt.io/created-by"] == "uid-web-01"
                && p["spec"]["nodeName"] == "node-2"
        })
    };
    wait_for("the target pod", || target().is_some());
    let name = target().unwrap()["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    assert_denied(
        &evict(&server, "prod", &name),
        "Eviction request for target Pod",
    );
    assert!(vmi(&server, "web-01")["status"]["evacuationNodeName"].is_null());
}

#[test]
fn evacuation_moves_the_vmi_and_the_old_pod_becomes_evictable() {
    let (server, _sim) = start(DrainFixture::default(), fast());
    cordon(&server, "node-1");
    cordon(&server, "node-2");
    let pod = "virt-launcher-web-01-abcde";
    assert_eq!(evict(&server, "prod", pod).status, 429);
    wait_for("the evacuation to succeed", || {
        evacuations(&server, "web-01")
            .iter()
            .any(|m| m["status"]["phase"] == "Succeeded")
    });
    assert_eq!(evacuations(&server, "web-01").len(), 1);
    let web = vmi(&server, "web-01");
    assert_eq!(web["status"]["nodeName"], "node-3", "node-2 is cordoned");
    assert_eq!(web["metadata"]["labels"]["kubevirt.io/nodeName"], "node-3");
    assert!(web["status"]["evacuationNodeName"].is_null());
    assert!(
        !web["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "EvictionRequested")
    );
    let old = server.object(Kind::Pod, Some("prod"), pod).unwrap();
    assert_eq!(old["status"]["phase"], "Succeeded");
    let targets: Vec<Value> = server
        .objects(Kind::Pod)
        .into_iter()
        .filter(|p| {
            p["metadata"]["labels"]["kubevirt.io/created-by"] == "uid-web-01"
                && p["spec"]["nodeName"] == "node-3"
                && p["status"]["phase"] == "Running"
        })
        .collect();
    assert_eq!(targets.len(), 1);
    // A completed launcher pod is not the webhook's business: the eviction deletes it.
    let r = evict(&server, "prod", pod);
    assert_eq!(r.status, 201, "{}", r.text());
    assert!(server.object(Kind::Pod, Some("prod"), pod).is_none());
}

#[test]
fn failed_evacuation_is_retried_after_a_backoff() {
    let (server, _sim) = start(
        DrainFixture::default(),
        Script {
            evacuation_failures: 2,
            evacuation_backoff_ticks: 3,
            ..fast()
        },
    );
    assert_eq!(
        evict(&server, "prod", "virt-launcher-batch-01-abcde").status,
        429
    );
    wait_for("an evacuation to succeed", || {
        evacuations(&server, "batch-01")
            .iter()
            .any(|m| m["status"]["phase"] == "Succeeded")
    });
    let vmims = evacuations(&server, "batch-01");
    let phases: Vec<&str> = vmims
        .iter()
        .map(|m| m["status"]["phase"].as_str().unwrap())
        .collect();
    assert_eq!(vmims.len(), 3, "{phases:?}");
    assert_eq!(phases.iter().filter(|p| **p == "Failed").count(), 2);
    for m in vmims.iter().filter(|m| m["status"]["phase"] == "Failed") {
        assert!(
            m["status"]["migrationState"]["failureReason"]
                .as_str()
                .unwrap()
                .starts_with("virError(")
        );
    }
    let backoffs = events(&server, "batch-01", "MigrationBackoff");
    assert_eq!(backoffs.len(), 2, "one per held VMIM");
    assert!(
        backoffs.iter().all(
            |e| e["type"] == "Warning" && e["message"] == "backoff migrating vmi prod/batch-01"
        )
    );
    assert_eq!(
        events(&server, "batch-01", "Migrated")
            .iter()
            .filter(|e| e["type"] == "Warning")
            .count(),
        2
    );
    assert_eq!(vmi(&server, "batch-01")["status"]["nodeName"], "node-2");
}

#[test]
fn pdb_allows_one_disruption_then_refuses_with_its_cause() {
    let (server, _sim) = start(DrainFixture::default(), fast());
    let r = evict(&server, "prod", "frontend-7d9f8b6c5d-x2x9q");
    assert_eq!(r.status, 201, "{}", r.text());
    let pdb = server
        .object(Kind::PodDisruptionBudget, Some("prod"), "frontend-pdb")
        .unwrap();
    assert_eq!(pdb["status"]["disruptionsAllowed"], 0);
    assert!(pdb["status"]["disruptedPods"]["frontend-7d9f8b6c5d-x2x9q"].is_string());
    let r = evict(&server, "prod", "frontend-7d9f8b6c5d-k8m4p");
    assert_eq!(r.status, 429, "{}", r.text());
    let body = r.json();
    assert_eq!(body["reason"], "TooManyRequests");
    assert_eq!(
        body["message"],
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert_eq!(
        body["details"]["causes"],
        json!([{"reason": "DisruptionBudget",
            "message": "The disruption budget frontend-pdb needs 1 healthy pods and has 2 currently"}])
    );
    assert!(
        server
            .object(Kind::Pod, Some("prod"), "frontend-7d9f8b6c5d-k8m4p")
            .is_some()
    );
}

#[test]
fn terminal_pods_skip_the_pdb() {
    let (server, _sim) = start(DrainFixture::default(), fast());
    let mut pdb = server
        .object(Kind::PodDisruptionBudget, Some("prod"), "frontend-pdb")
        .unwrap();
    pdb["status"]["disruptionsAllowed"] = json!(0);
    server.update_object(pdb);
    let mut pod = server
        .object(Kind::Pod, Some("prod"), "frontend-7d9f8b6c5d-x2x9q")
        .unwrap();
    assert_eq!(
        evict(&server, "prod", "frontend-7d9f8b6c5d-x2x9q").status,
        429
    );
    pod["status"]["phase"] = json!("Failed");
    server.update_object(pod);
    assert_eq!(
        evict(&server, "prod", "frontend-7d9f8b6c5d-x2x9q").status,
        201
    );
}

#[test]
fn two_pdbs_are_a_500_and_faults_take_precedence() {
    let (server, _sim) = start(
        DrainFixture {
            second_pdb: true,
            ..DrainFixture::default()
        },
        fast(),
    );
    let r = evict(&server, "prod", "frontend-7d9f8b6c5d-x2x9q");
    assert_eq!(r.status, 500, "{}", r.text());
    assert_eq!(
        r.json()["message"],
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    );
    // A pod no PDB selects goes at once, unless a fault is injected.
    server.inject_fault(Fault::status(503).path("/eviction").times(1));
    assert_eq!(
        evict(&server, "kube-system", "node-exporter-7xk2p").status,
        503
    );
    assert_eq!(
        evict(&server, "kube-system", "node-exporter-7xk2p").status,
        201
    );
    // A fault wins over the webhook too.
    server.inject_fault(Fault::status(500).path("web-01").times(1));
    assert_eq!(
        evict(&server, "prod", "virt-launcher-web-01-abcde").status,
        500
    );
    assert!(vmi(&server, "web-01")["status"]["evacuationNodeName"].is_null());
}

#[test]
fn cordon_by_patch_is_listed_and_watched_and_pods_select_by_node() {
    let server = FakeApiServer::start_blocking(kubevirt_sim::drain_cluster());
    let mut watch = RawWatch::open(
        &server.url(),
        &format!(
            "/api/v1/nodes?watch=true&resourceVersion={}",
            server.resource_version()
        ),
    );
    cordon(&server, "node-1");
    let event = watch.next_event().expect("a watch event");
    assert_eq!(event["type"], "MODIFIED");
    assert_eq!(event["object"]["metadata"]["name"], "node-1");
    assert_eq!(event["object"]["spec"]["unschedulable"], true);
    let r = http::send_json(
        &server.url(),
        "PATCH",
        "/api/v1/nodes/node-2",
        "application/merge-patch+json",
        &json!({"spec": {"unschedulable": true}}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let nodes = http::get(&server.url(), "/api/v1/nodes").json();
    let cordoned: Vec<&str> = nodes["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["spec"]["unschedulable"] == true)
        .map(|n| n["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(cordoned, ["node-1", "node-2"]);

    let pods = http::get(
        &server.url(),
        "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1",
    )
    .json();
    let mut names: Vec<&str> = pods["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "cache-6b8d9c7f4-q9w2e",
            "frontend-7d9f8b6c5d-x2x9q",
            "kube-vip-node-1",
            "node-exporter-7xk2p",
            "virt-handler-1",
            "virt-launcher-batch-01-abcde",
            "virt-launcher-scratch-01-abcde",
            "virt-launcher-web-01-abcde",
        ]
    );
    let mut pod_watch = RawWatch::open(
        &server.url(),
        &format!(
            "/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dnode-1&resourceVersion={}",
            server.resource_version()
        ),
    );
    server.delete_object(Kind::Pod, Some("prod"), "frontend-7d9f8b6c5d-k8m4p");
    server.delete_object(Kind::Pod, Some("prod"), "frontend-7d9f8b6c5d-x2x9q");
    let event = pod_watch.next_event().expect("a pod event");
    assert_eq!(event["type"], "DELETED");
    assert_eq!(
        event["object"]["metadata"]["name"], "frontend-7d9f8b6c5d-x2x9q",
        "the node-2 pod is not seen"
    );
}

#[test]
fn plan_drain_reads_the_drain_cluster() {
    let server = FakeApiServer::start_blocking(kubevirt_sim::drain_cluster_with(&DrainFixture {
        blocker: true,
        bare_pod: true,
        ..DrainFixture::default()
    }));
    let dir = tempfile::tempdir().unwrap();
    let out = common::vmctl_live(
        &server.write_kubeconfig(dir.path()),
        &["plan-drain", "node-1", "-o", "json"],
    );
    let text = common::stdout(&out);
    let plan: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text}{}", common::stderr(&out)));
    let mut vmis: Vec<&str> = plan["vmis"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    vmis.sort();
    assert_eq!(vmis, ["batch-01", "db-01", "scratch-01", "web-01"]);
    assert_eq!(plan["verdict"], "will-block", "{text}");
}

#[test]
fn an_empty_selector_pdb_guards_evictions_by_version_and_unready_pods_go_free() {
    let (server, _sim) = start(DrainFixture::default(), fast());
    server.add_object(
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "everything", "namespace": "kube-system"},
        "spec": {"minAvailable": 1, "selector": {}},
        "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1}}),
    );
    // 1.29.0, 1.28.3 and 1.27.7 on (kubernetes#119732): `{}` selects every pod of the
    // namespace at eviction too.
    for honours in ["v1.33.1", "v1.28.3", "v1.27.7-eks-4f4795d"] {
        server.set_version(honours);
        let answer = evict(&server, "kube-system", "node-exporter-7xk2p");
        assert_eq!(answer.status, 429, "{honours}");
    }
    // Before: eviction.go skipped a PDB whose selector is empty ("should match nothing").
    server.set_version("v1.28.2");
    assert_eq!(
        evict(&server, "kube-system", "node-exporter-7xk2p").status,
        201
    );
    // A not-Ready pod under a healthy budget is deleted without using a disruption.
    let mut pod = server
        .object(Kind::Pod, Some("prod"), "frontend-7d9f8b6c5d-x2x9q")
        .unwrap();
    pod["status"]["conditions"] = json!([{"type": "Ready", "status": "False"}]);
    server.update_object(pod);
    assert_eq!(
        evict(&server, "prod", "frontend-7d9f8b6c5d-x2x9q").status,
        201
    );
    let pdb = server
        .object(Kind::PodDisruptionBudget, Some("prod"), "frontend-pdb")
        .unwrap();
    assert_eq!(pdb["status"]["disruptionsAllowed"], 1);
}
