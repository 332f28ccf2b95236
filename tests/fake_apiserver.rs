//! Tests of the fake API server itself (tests/support/apiserver.rs): over plain HTTP, and
//! through the kube client vmctl uses.

mod support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::http::{self, RawWatch};
use support::{FakeApiServer, Fault, Method};
use vmctl::cluster::Kind;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apiserver")
}

fn server() -> FakeApiServer {
    FakeApiServer::start_from_path_blocking(&fixtures())
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| {
            format!(
                "{}/{}",
                i["metadata"]["namespace"].as_str().unwrap_or(""),
                i["metadata"]["name"].as_str().unwrap_or("")
            )
        })
        .collect()
}

const VMIS: &str = "/apis/kubevirt.io/v1/virtualmachineinstances";
const PROD_VMIS: &str = "/apis/kubevirt.io/v1/namespaces/prod/virtualmachineinstances";
const PROD_VMIMS: &str = "/apis/kubevirt.io/v1/namespaces/prod/virtualmachineinstancemigrations";

fn vmi(namespace: &str, name: &str, node: &str) -> Value {
    json!({
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "metadata": {"name": name, "namespace": namespace,
                     "labels": {"kubevirt.io/nodeName": node}},
        "spec": {},
        "status": {"phase": "Running", "nodeName": node}
    })
}

#[test]
fn serves_version_and_legacy_discovery() {
    let server = server();
    let version = http::get(&server.url(), "/version").json();
    assert_eq!(version["gitVersion"], "v1.33.1");

    let api = http::get(&server.url(), "/api").json();
    assert_eq!(api["kind"], "APIVersions");
    assert_eq!(api["versions"], json!(["v1"]));

    let apis = http::get(&server.url(), "/apis").json();
    assert_eq!(apis["kind"], "APIGroupList");
    let groups: Vec<&str> = apis["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    for group in ["policy", "kubevirt.io", "migrations.kubevirt.io"] {
        assert!(groups.contains(&group), "{groups:?}");
    }

    let kubevirt = http::get(&server.url(), "/apis/kubevirt.io/v1").json();
    assert_eq!(kubevirt["groupVersion"], "kubevirt.io/v1");
    let vmis = kubevirt["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "virtualmachineinstances")
        .expect("virtualmachineinstances advertised");
    assert_eq!(vmis["kind"], "VirtualMachineInstance");
    assert_eq!(vmis["namespaced"], true);

    let core = http::get(&server.url(), "/api/v1").json();
    assert!(
        core["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "pods/eviction")
    );
    let policies = http::get(&server.url(), "/apis/migrations.kubevirt.io/v1alpha1").json();
    assert_eq!(policies["resources"][0]["namespaced"], false);

    assert_eq!(http::get(&server.url(), "/healthz").text(), "ok");
}

#[test]
fn lists_strip_kind_from_built_in_items_but_not_from_custom_resources() {
    let server = server();
    let pods = http::get(&server.url(), "/api/v1/pods").json();
    assert_eq!(pods["kind"], "PodList");
    assert_eq!(pods["apiVersion"], "v1");
    assert!(pods["metadata"]["resourceVersion"].as_str().is_some());
    assert!(pods["metadata"].get("continue").is_none());
    for item in pods["items"].as_array().unwrap() {
        assert!(item.get("kind").is_none(), "{item}");
        assert!(item.get("apiVersion").is_none(), "{item}");
    }

    let vmis = http::get(&server.url(), VMIS).json();
    assert_eq!(vmis["kind"], "VirtualMachineInstanceList");
    assert_eq!(vmis["apiVersion"], "kubevirt.io/v1");
    for item in vmis["items"].as_array().unwrap() {
        assert_eq!(item["kind"], "VirtualMachineInstance");
        assert_eq!(item["apiVersion"], "kubevirt.io/v1");
    }
    // Sorted by namespace, then name, whatever the order in the file.
    assert_eq!(
        names(&vmis),
        ["prod/db-0", "prod/db-1", "prod/web-0", "staging/test-0"]
    );

    // A single GET keeps kind and apiVersion, and every object has its own resourceVersion.
    let node = http::get(&server.url(), "/api/v1/nodes/node-1").json();
    assert_eq!(node["kind"], "Node");
    assert_eq!(node["apiVersion"], "v1");
    assert!(node["metadata"]["resourceVersion"].as_str().is_some());
    assert!(node["metadata"]["uid"].as_str().is_some());
}

#[test]
fn namespaced_cluster_scoped_and_all_namespace_collections() {
    let server = server();
    assert_eq!(
        names(&http::get(&server.url(), PROD_VMIS).json()),
        ["prod/db-0", "prod/db-1", "prod/web-0"]
    );
    assert_eq!(
        http::get(&server.url(), "/api/v1/namespaces/staging/pods").json()["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        http::get(&server.url(), "/api/v1/namespaces/nowhere/pods").json()["items"],
        json!([])
    );
    let policies = http::get(
        &server.url(),
        "/apis/migrations.kubevirt.io/v1alpha1/migrationpolicies",
    )
    .json();
    assert_eq!(names(&policies), ["/db-policy"]);
    assert_eq!(
        names(
            &http::get(
                &server.url(),
                "/apis/policy/v1/namespaces/prod/poddisruptionbudgets"
            )
            .json()
        ),
        ["prod/kubevirt-disruption-budget-db0"]
    );
    assert_eq!(
        http::get(&server.url(), "/api/v1/namespaces/prod").json()["kind"],
        "Namespace"
    );
    assert_eq!(
        names(&http::get(&server.url(), "/api/v1/namespaces/prod/resourcequotas").json()),
        ["prod/compute"]
    );
    assert_eq!(
        names(&http::get(&server.url(), "/apis/kubevirt.io/v1/kubevirts").json()),
        ["kubevirt/kubevirt"]
    );
    // A namespaced kind has no cluster-scoped item path.
    assert_eq!(
        http::get(&server.url(), "/api/v1/pods/virt-launcher-db-0-x7k2p").status,
        404
    );
}

#[test]
fn label_and_field_selectors_are_evaluated_server_side() {
    let server = server();
    let url = server.url();
    let launchers = http::get(
        &url,
        "/api/v1/pods?labelSelector=kubevirt.io%3Dvirt-launcher",
    )
    .json();
    assert_eq!(launchers["items"].as_array().unwrap().len(), 4);

    let on_node_1 = http::get(
        &url,
        "/api/v1/pods?labelSelector=kubevirt.io%3Dvirt-launcher&fieldSelector=spec.nodeName%3Dnode-1",
    )
    .json();
    assert_eq!(
        names(&on_node_1),
        [
            "prod/virt-launcher-db-0-x7k2p",
            "prod/virt-launcher-db-1-m4qzt"
        ]
    );
    let running = http::get(&url, "/api/v1/pods?fieldSelector=status.phase!%3DRunning").json();
    assert_eq!(running["items"], json!([]));

    let vmis = http::get(
        &url,
        &format!("{VMIS}?labelSelector=kubevirt.io/nodeName%3Dnode-1"),
    )
    .json();
    assert_eq!(names(&vmis), ["prod/db-0", "prod/db-1"]);
    let set = http::get(
        &url,
        &format!("{VMIS}?labelSelector=app+in+(db,web),app!%3Dweb"),
    )
    .json();
    assert_eq!(names(&set), ["prod/db-0", "prod/db-1"]);
    let by_name = http::get(&url, &format!("{VMIS}?fieldSelector=metadata.name%3Ddb-1")).json();
    assert_eq!(names(&by_name), ["prod/db-1"]);

    // Custom resources only support metadata.name / metadata.namespace (FACTS §11).
    let refused = http::get(
        &url,
        &format!("{VMIS}?fieldSelector=status.nodeName%3Dnode-1"),
    );
    assert_eq!(refused.status, 400);
    assert_eq!(
        refused.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "field label not supported: status.nodeName",
               "reason": "BadRequest", "code": 400})
    );
    assert_eq!(
        http::get(&url, "/api/v1/pods?fieldSelector=spec.foo%3Dx").status,
        400
    );

    let events = http::get(
        &url,
        "/api/v1/namespaces/prod/events?fieldSelector=involvedObject.kind%3DVirtualMachineInstanceMigration,type%3DWarning",
    )
    .json();
    assert_eq!(events["items"][0]["reason"], "FailedMigration");
    assert_eq!(events["items"].as_array().unwrap().len(), 1);

    let bad = http::get(&url, "/api/v1/pods?labelSelector=a%3Db,,c");
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["reason"], "BadRequest");
}

#[test]
fn limit_and_continue_paginate_with_a_stable_resource_version() {
    let server = server();
    let url = server.url();
    let first = http::get(&url, &format!("{VMIS}?limit=3")).json();
    assert_eq!(names(&first), ["prod/db-0", "prod/db-1", "prod/web-0"]);
    assert_eq!(first["metadata"]["remainingItemCount"], 1);
    let token = first["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_string();

    server.add_object(vmi("prod", "aaa-new", "node-2"));
    let second = http::get(&url, &format!("{VMIS}?limit=3&continue={token}")).json();
    assert_eq!(names(&second), ["staging/test-0"]);
    assert!(second["metadata"].get("continue").is_none());
    assert_eq!(
        second["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );

    // With a selector: pages of one, no remainingItemCount (as the real server).
    let page = http::get(&url, &format!("{VMIS}?limit=1&labelSelector=app%3Ddb")).json();
    assert_eq!(names(&page), ["prod/db-0"]);
    assert!(page["metadata"].get("remainingItemCount").is_none());
    let token = page["metadata"]["continue"].as_str().unwrap().to_string();
    let page = http::get(
        &url,
        &format!("{VMIS}?limit=1&labelSelector=app%3Ddb&continue={token}"),
    )
    .json();
    assert_eq!(names(&page), ["prod/db-1"]);

    assert_eq!(
        http::get(&url, &format!("{VMIS}?continue=garbage!")).status,
        400
    );
    assert_eq!(http::get(&url, &format!("{VMIS}?limit=many")).status, 400);

    // A token from before a compaction has expired.
    let old = http::get(&url, &format!("{VMIS}?limit=1")).json();
    let token = old["metadata"]["continue"].as_str().unwrap().to_string();
    server.add_object(vmi("prod", "zzz", "node-2"));
    server.compact();
    let expired = http::get(&url, &format!("{VMIS}?limit=1&continue={token}"));
    assert_eq!(expired.status, 410);
    assert_eq!(expired.json()["reason"], "Expired");

    // A namespace's list pages through that namespace's keys only (what vmctl's split lists
    // read, src/cluster/source.rs list_split_by_namespace), and the rest is what
    // `metadata.namespace!=` leaves.
    let prod = "/apis/kubevirt.io/v1/namespaces/prod/virtualmachineinstances";
    let mut seen = Vec::new();
    let mut query = format!("{prod}?limit=2");
    loop {
        let page = http::get(&url, &query).json();
        assert!(names(&page).len() <= 2);
        seen.extend(names(&page));
        match page["metadata"]["continue"].as_str() {
            Some(token) => query = format!("{prod}?limit=2&continue={token}"),
            None => break,
        }
    }
    assert_eq!(
        seen,
        [
            "prod/aaa-new",
            "prod/db-0",
            "prod/db-1",
            "prod/web-0",
            "prod/zzz"
        ]
    );
    let rest = http::get(
        &url,
        &format!("{VMIS}?fieldSelector=metadata.namespace%21%3Dprod"),
    )
    .json();
    assert_eq!(names(&rest), ["staging/test-0"]);
}

#[test]
fn get_answers_the_object_or_a_not_found_status() {
    let server = server();
    let url = server.url();
    let found = http::get(&url, &format!("{PROD_VMIS}/db-0"));
    assert_eq!(found.status, 200);
    assert_eq!(found.header("content-type"), Some("application/json"));
    assert_eq!(found.json()["kind"], "VirtualMachineInstance");
    assert_eq!(found.json()["status"]["nodeName"], "node-1");

    let missing = http::get(&url, &format!("{PROD_VMIS}/x"));
    assert_eq!(missing.status, 404);
    assert_eq!(
        missing.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "virtualmachineinstances.kubevirt.io \"x\" not found",
               "reason": "NotFound",
               "details": {"name": "x", "group": "kubevirt.io", "kind": "virtualmachineinstances"},
               "code": 404})
    );
    let pod = http::get(&url, "/api/v1/namespaces/prod/pods/nope").json();
    assert_eq!(pod["message"], "pods \"nope\" not found");
    assert_eq!(pod["details"], json!({"name": "nope", "kind": "pods"}));

    let unknown = http::get(&url, "/apis/apps/v1/deployments");
    assert_eq!(unknown.status, 404);
    assert_eq!(
        unknown.json()["message"],
        "the server could not find the requested resource"
    );
    assert_eq!(http::get(&url, "/apis/kubevirt.io/v1/widgets").status, 404);
}

#[test]
fn create_fills_in_server_fields_and_refuses_duplicates() {
    let server = server();
    let url = server.url();
    let migration = json!({
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstanceMigration",
        "metadata": {"generateName": "vmctl-migrate-db-1-"},
        "spec": {"vmiName": "db-1"}
    });
    let created = http::send_json(&url, "POST", PROD_VMIMS, "application/json", &migration);
    assert_eq!(created.status, 201, "{}", created.text());
    let created = created.json();
    let name = created["metadata"]["name"].as_str().unwrap().to_string();
    assert!(
        name.starts_with("vmctl-migrate-db-1-") && name.len() == "vmctl-migrate-db-1-".len() + 5
    );
    assert_eq!(created["metadata"]["namespace"], "prod");
    assert!(created["metadata"]["uid"].as_str().is_some());
    assert!(
        created["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
    assert_eq!(
        created["metadata"]["resourceVersion"],
        server.resource_version().to_string()
    );
    assert!(
        server
            .object(Kind::VirtualMachineInstanceMigration, Some("prod"), &name)
            .is_some()
    );

    let mut named = migration.clone();
    named["metadata"] = json!({"name": name});
    let duplicate = http::send_json(&url, "POST", PROD_VMIMS, "application/json", &named);
    assert_eq!(duplicate.status, 409);
    assert_eq!(duplicate.json()["reason"], "AlreadyExists");
    assert_eq!(
        duplicate.json()["message"],
        format!("virtualmachineinstancemigrations.kubevirt.io \"{name}\" already exists")
    );

    let mut elsewhere = migration.clone();
    elsewhere["metadata"]["namespace"] = json!("staging");
    assert_eq!(
        http::send_json(&url, "POST", PROD_VMIMS, "application/json", &elsewhere).status,
        400
    );
    let nameless = json!({"kind": "VirtualMachineInstanceMigration", "metadata": {}});
    let nameless = http::send_json(&url, "POST", PROD_VMIMS, "application/json", &nameless);
    assert_eq!(nameless.status, 422);
    assert_eq!(nameless.json()["reason"], "Invalid");
    let garbage = http::request(&url, "POST", PROD_VMIMS, &[], Some(b"{not json"));
    assert_eq!(garbage.status, 400);
    assert_eq!(garbage.json()["kind"], "Status");

    // Deleting a custom resource answers a Status; then it is gone.
    let deleted = http::request(&url, "DELETE", &format!("{PROD_VMIMS}/{name}"), &[], None);
    assert_eq!(deleted.status, 200);
    let deleted = deleted.json();
    assert_eq!(deleted["kind"], "Status");
    assert_eq!(deleted["status"], "Success");
    assert_eq!(deleted["details"]["name"], name.as_str());
    assert!(
        server
            .object(Kind::VirtualMachineInstanceMigration, Some("prod"), &name)
            .is_none()
    );
    assert_eq!(
        http::request(&url, "DELETE", &format!("{PROD_VMIMS}/{name}"), &[], None).status,
        404
    );
    // A built-in kind answers with the deleted object.
    let pod = http::request(
        &url,
        "DELETE",
        "/api/v1/namespaces/kubevirt/pods/virt-handler-5xk8d",
        &[],
        None,
    );
    assert_eq!(pod.json()["kind"], "Pod");
}

#[test]
fn finalizers_hold_a_deleted_object_until_they_are_removed() {
    let server = server();
    let url = server.url();
    let path = format!("{PROD_VMIMS}/kubevirt-evacuation-q8fnd");
    let marked = http::request(&url, "DELETE", &path, &[], None);
    assert_eq!(marked.status, 200);
    let marked = marked.json();
    assert_eq!(marked["kind"], "VirtualMachineInstanceMigration");
    assert!(marked["metadata"]["deletionTimestamp"].as_str().is_some());
    assert!(http::get(&url, &path).json()["metadata"]["deletionTimestamp"].is_string());

    let released = http::send_json(
        &url,
        "PATCH",
        &path,
        "application/merge-patch+json",
        &json!({"metadata": {"finalizers": null}}),
    );
    assert_eq!(released.status, 200);
    assert_eq!(http::get(&url, &path).status, 404);
}

#[test]
fn merge_and_json_patches() {
    let server = server();
    let url = server.url();
    let path = format!("{PROD_VMIS}/web-0");
    let before = http::get(&url, &path).json();

    let merged = http::send_json(
        &url,
        "PATCH",
        &path,
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"tier": "front", "app": null}}}),
    )
    .json();
    assert_eq!(
        merged["metadata"]["labels"],
        json!({"kubevirt.io/nodeName": "node-2", "tier": "front"})
    );
    assert_eq!(merged["metadata"]["uid"], before["metadata"]["uid"]);
    assert_ne!(
        merged["metadata"]["resourceVersion"],
        before["metadata"]["resourceVersion"]
    );

    let ops = json!([
        {"op": "test", "path": "/status/phase", "value": "Running"},
        {"op": "replace", "path": "/status/phase", "value": "Succeeded"},
        {"op": "add", "path": "/metadata/annotations", "value": {"a": "1"}},
        {"op": "add", "path": "/status/conditions/-", "value": {"type": "Ready", "status": "False"}},
        {"op": "remove", "path": "/metadata/labels/tier"}
    ]);
    let patched = http::send_json(&url, "PATCH", &path, "application/json-patch+json", &ops);
    assert_eq!(patched.status, 200, "{}", patched.text());
    let patched = patched.json();
    assert_eq!(patched["status"]["phase"], "Succeeded");
    assert_eq!(patched["metadata"]["annotations"]["a"], "1");
    assert_eq!(patched["status"]["conditions"][1]["type"], "Ready");
    assert!(patched["metadata"]["labels"].get("tier").is_none());

    // A failed test leaves the object as it was.
    let rv = patched["metadata"]["resourceVersion"].clone();
    let failed = http::send_json(
        &url,
        "PATCH",
        &path,
        "application/json-patch+json",
        &json!([{"op": "replace", "path": "/status/phase", "value": "Failed"},
                {"op": "test", "path": "/status/phase", "value": "Running"}]),
    );
    assert_eq!(failed.status, 422);
    assert_eq!(
        http::get(&url, &path).json()["status"]["phase"],
        "Succeeded"
    );

    // A no-op patch keeps the resourceVersion; a stale one conflicts.
    let noop = http::send_json(
        &url,
        "PATCH",
        &path,
        "application/merge-patch+json",
        &json!({"status": {"phase": "Succeeded"}}),
    );
    assert_eq!(noop.json()["metadata"]["resourceVersion"], rv);
    let stale = http::send_json(
        &url,
        "PATCH",
        &path,
        "application/merge-patch+json",
        &json!({"metadata": {"resourceVersion": "1"}, "spec": {"x": 1}}),
    );
    assert_eq!(stale.status, 409);
    assert_eq!(stale.json()["reason"], "Conflict");
    assert_eq!(
        http::send_json(&url, "PATCH", &path, "text/plain", &json!({})).status,
        415
    );
    assert_eq!(
        http::send_json(
            &url,
            "PATCH",
            &format!("{PROD_VMIS}/nope"),
            "application/merge-patch+json",
            &json!({})
        )
        .status,
        404
    );

    // PUT replaces, keeping what the server owns.
    let mut current = http::get(&url, &path).json();
    current["spec"]["evictionStrategy"] = json!("None");
    let put = http::send_json(&url, "PUT", &path, "application/json", &current);
    assert_eq!(put.status, 200);
    assert_eq!(put.json()["spec"]["evictionStrategy"], "None");
    let stale = http::send_json(&url, "PUT", &path, "application/json", &current);
    assert_eq!(stale.status, 409);
}

#[test]
fn subresources_are_answered_and_recorded() {
    let server = server();
    let url = server.url();
    let migrate = http::request(
        &url,
        "PUT",
        "/apis/subresources.kubevirt.io/v1/namespaces/prod/virtualmachines/db-0/migrate",
        &[("Content-Type", "application/json")],
        Some(b"{}"),
    );
    assert_eq!(migrate.status, 202);
    assert!(migrate.body.is_empty());
    let missing = http::request(
        &url,
        "PUT",
        "/apis/subresources.kubevirt.io/v1/namespaces/prod/virtualmachineinstances/nope/pause",
        &[],
        None,
    );
    assert_eq!(missing.status, 404);

    let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction",
                          "metadata": {"name": "virt-launcher-web-0-b9wsd", "namespace": "prod"}});
    let evicted = http::send_json(
        &url,
        "POST",
        "/api/v1/namespaces/prod/pods/virt-launcher-web-0-b9wsd/eviction",
        "application/json",
        &eviction,
    );
    assert_eq!(evicted.status, 201);
    assert_eq!(evicted.json()["status"], "Success");
    assert!(
        server
            .object(Kind::Pod, Some("prod"), "virt-launcher-web-0-b9wsd")
            .is_none()
    );

    let status = http::send_json(
        &url,
        "PATCH",
        &format!("{PROD_VMIS}/db-0/status"),
        "application/merge-patch+json",
        &json!({"status": {"phase": "Failed"}, "spec": {"ignored": true}}),
    )
    .json();
    assert_eq!(status["status"]["phase"], "Failed");
    assert!(status["spec"].get("ignored").is_none());

    let requests = server.requests();
    let put = requests.iter().find(|r| r.method == Method::PUT).unwrap();
    assert_eq!(put.kind, Some(Kind::VirtualMachine));
    assert_eq!(put.subresource.as_deref(), Some("migrate"));
    assert_eq!(put.verb, "update");
    assert_eq!(put.body, "{}");
    assert_eq!(put.status, 202);
    let post = requests.iter().find(|r| r.method == Method::POST).unwrap();
    assert_eq!(post.subresource.as_deref(), Some("eviction"));
    assert_eq!(post.name.as_deref(), Some("virt-launcher-web-0-b9wsd"));
}

#[test]
fn faults_answer_realistic_statuses() {
    let server = server();
    let url = server.url();

    server.inject_fault(Fault::status(403).on(Method::GET, "/api/v1/pods"));
    let forbidden = http::get(&url, "/api/v1/pods?limit=500");
    assert_eq!(forbidden.status, 403);
    assert_eq!(
        forbidden.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "pods is forbidden: User \"system:serviceaccount:default:vmctl\" cannot list resource \"pods\" in API group \"\" at the cluster scope",
               "reason": "Forbidden", "details": {"kind": "pods"}, "code": 403})
    );
    // The fault matches its path only.
    assert_eq!(http::get(&url, "/api/v1/nodes").status, 200);
    server.clear_faults();
    assert_eq!(http::get(&url, "/api/v1/pods").status, 200);

    server.inject_fault(Fault::status(403).path("/virtualmachineinstances").times(1));
    let named = http::get(&url, &format!("{PROD_VMIS}/db-0")).json();
    assert_eq!(
        named["message"],
        "virtualmachineinstances.kubevirt.io \"db-0\" is forbidden: User \"system:serviceaccount:default:vmctl\" cannot get resource \"virtualmachineinstances\" in API group \"kubevirt.io\" in the namespace \"prod\""
    );

    server.inject_fault(Fault::status(401));
    let unauthorized = http::get(&url, "/version");
    assert_eq!(unauthorized.status, 401);
    assert_eq!(unauthorized.json()["reason"], "Unauthorized");
    server.clear_faults();

    server.inject_fault(Fault::status(429).path("/eviction").retry_after(3).times(2));
    for _ in 0..2 {
        let throttled = http::request(
            &url,
            "POST",
            "/api/v1/namespaces/prod/pods/virt-launcher-db-0-x7k2p/eviction",
            &[],
            Some(b"{}"),
        );
        assert_eq!(throttled.status, 429);
        assert_eq!(throttled.header("retry-after"), Some("3"));
        assert_eq!(throttled.json()["details"]["retryAfterSeconds"], 3);
    }
    let evicted = http::request(
        &url,
        "POST",
        "/api/v1/namespaces/prod/pods/virt-launcher-db-0-x7k2p/eviction",
        &[],
        Some(b"{}"),
    );
    assert_eq!(evicted.status, 201);

    server.inject_fault(
        Fault::status(429)
            .path("/eviction")
            .message("admission webhook \"virt-launcher-eviction-interceptor.kubevirt.io\" denied the request: Eviction triggered evacuation of VMI \"prod/db-1\"")
            .times(1),
    );
    let webhook = http::request(
        &url,
        "POST",
        "/api/v1/namespaces/prod/pods/virt-launcher-db-1-m4qzt/eviction",
        &[],
        Some(b"{}"),
    )
    .json();
    assert!(
        webhook["message"]
            .as_str()
            .unwrap()
            .contains("virt-launcher-eviction-interceptor")
    );

    for (code, reason) in [
        (500, "InternalError"),
        (503, "ServiceUnavailable"),
        (404, "NotFound"),
    ] {
        server.inject_fault(Fault::status(code).path("/nodes").times(1));
        let answer = http::get(&url, "/api/v1/nodes");
        assert_eq!(answer.status, code);
        assert_eq!(answer.json()["reason"], reason);
        assert_eq!(answer.json()["code"], code);
    }

    // A query substring matches the decoded query too.
    server.inject_fault(
        Fault::status(500)
            .query("labelSelector=kubevirt.io=virt-launcher")
            .times(1),
    );
    assert_eq!(http::get(&url, "/api/v1/pods").status, 200);
    assert_eq!(
        http::get(
            &url,
            "/api/v1/pods?labelSelector=kubevirt.io%3Dvirt-launcher"
        )
        .status,
        500
    );

    // A scripted body, e.g. a canned success.
    server.inject_fault(
        Fault::status(200)
            .path("/guestosinfo")
            .body(json!({"hostname": "db-0"})),
    );
    assert_eq!(
        http::get(&url, "/apis/subresources.kubevirt.io/v1/namespaces/prod/virtualmachineinstances/db-0/guestosinfo").json()["hostname"],
        "db-0"
    );

    // A delay only.
    server.inject_fault(
        Fault::delayed(Duration::from_millis(300))
            .path("/nodes")
            .times(1),
    );
    let start = Instant::now();
    assert_eq!(http::get(&url, "/api/v1/nodes").status, 200);
    assert!(start.elapsed() >= Duration::from_millis(300));
    let start = Instant::now();
    http::get(&url, "/api/v1/nodes");
    assert!(start.elapsed() < Duration::from_millis(300));

    let statuses: Vec<u16> = server.requests().iter().map(|r| r.status).collect();
    assert!(statuses.contains(&403) && statuses.contains(&429) && statuses.contains(&503));
}

#[test]
fn requests_are_recorded_for_counting() {
    let server = server();
    let url = server.url();
    http::get(
        &url,
        &format!("{VMIS}?labelSelector=kubevirt.io%2FnodeName%3Dnode-1&limit=500"),
    );
    http::get(&url, "/api/v1/namespaces/prod/pods?limit=500");
    http::get(&url, &format!("{PROD_VMIS}/db-0"));
    http::get(&url, "/version");
    assert_eq!(server.request_count(), 4);
    assert_eq!(server.list_count(Kind::VirtualMachineInstance), 1);
    assert_eq!(server.list_count(Kind::Pod), 1);
    let requests = server.requests();
    let first = &requests[0];
    assert_eq!(first.method, Method::GET);
    assert_eq!(first.path, VMIS);
    assert_eq!(
        first.query,
        "labelSelector=kubevirt.io%2FnodeName%3Dnode-1&limit=500"
    );
    assert_eq!(
        first.param("labelSelector"),
        Some("kubevirt.io/nodeName=node-1")
    );
    assert_eq!(first.verb, "list");
    assert_eq!(first.status, 200);
    assert_eq!(requests[1].namespace.as_deref(), Some("prod"));
    assert_eq!(requests[2].verb, "get");
    assert_eq!(requests[2].name.as_deref(), Some("db-0"));
    assert_eq!(requests[3].kind, None);
    assert!(requests[0].at <= requests[3].at);
    server.reset_requests();
    assert_eq!(server.request_count(), 0);
}

#[test]
fn watch_streams_matching_changes() {
    let server = server();
    let url = server.url();
    let rv = server.resource_version();
    let mut watch = RawWatch::open(
        &url,
        &format!(
            "{VMIS}?watch=true&labelSelector=kubevirt.io%2FnodeName%3Dnode-1&resourceVersion={rv}&allowWatchBookmarks=true"
        ),
    );
    assert_eq!(watch.status, 200);
    assert!(
        watch
            .headers
            .iter()
            .any(|(k, v)| k == "transfer-encoding" && v == "chunked")
    );
    assert!(server.wait_for_watches(1, Duration::from_secs(5)));

    server.add_object(vmi("prod", "db-2", "node-3")); // not selected
    let added = server.add_object(vmi("prod", "db-3", "node-1"));
    let event = watch.next_event().unwrap();
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["metadata"]["name"], "db-3");
    assert_eq!(event["object"]["kind"], "VirtualMachineInstance");
    assert_eq!(
        event["object"]["metadata"]["resourceVersion"],
        added["metadata"]["resourceVersion"]
    );

    server.patch_object(
        Kind::VirtualMachineInstance,
        Some("prod"),
        "db-3",
        json!({"status": {"phase": "Succeeded"}}),
    );
    let event = watch.next_event().unwrap();
    assert_eq!(event["type"], "MODIFIED");
    assert_eq!(event["object"]["status"]["phase"], "Succeeded");

    // Leaving the selection is a DELETED for this watch; entering it an ADDED.
    server.patch_object(
        Kind::VirtualMachineInstance,
        Some("prod"),
        "db-3",
        json!({"metadata": {"labels": {"kubevirt.io/nodeName": "node-2"}}}),
    );
    assert_eq!(watch.next_event().unwrap()["type"], "DELETED");
    server.patch_object(
        Kind::VirtualMachineInstance,
        Some("prod"),
        "db-2",
        json!({"metadata": {"labels": {"kubevirt.io/nodeName": "node-1"}}}),
    );
    let event = watch.next_event().unwrap();
    assert_eq!(
        (
            event["type"].as_str(),
            event["object"]["metadata"]["name"].as_str()
        ),
        (Some("ADDED"), Some("db-2"))
    );

    server.send_bookmarks();
    let bookmark = watch.next_event().unwrap();
    assert_eq!(bookmark["type"], "BOOKMARK");
    assert_eq!(
        bookmark["object"]["metadata"]["resourceVersion"],
        server.resource_version().to_string()
    );

    // Changes through the API reach the watch too.
    let deleted = http::request(&url, "DELETE", &format!("{PROD_VMIS}/db-2"), &[], None);
    assert_eq!(deleted.status, 200);
    let event = watch.next_event().unwrap();
    assert_eq!(
        (
            event["type"].as_str(),
            event["object"]["metadata"]["name"].as_str()
        ),
        (Some("DELETED"), Some("db-2"))
    );

    server.close_watches();
    assert_eq!(watch.next_event(), None);
    assert_eq!(server.count_requests(|r| r.is_watch()), 1);
}

#[test]
fn watch_start_points_resume_and_expiry() {
    let server = server();
    let url = server.url();

    // resourceVersion=0: the current state as synthetic ADDED events, then changes.
    let mut from_zero = RawWatch::open(
        &url,
        &format!("{PROD_VMIS}?watch=1&resourceVersion=0&timeoutSeconds=1"),
    );
    let initial = from_zero.collect_until_end();
    assert_eq!(initial.len(), 3);
    assert!(initial.iter().all(|e| e["type"] == "ADDED"));

    // From a list's resourceVersion: exactly what happened after it.
    let list = http::get(&url, PROD_VMIS).json();
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    server.add_object(vmi("prod", "db-9", "node-2"));
    server.delete_object(Kind::VirtualMachineInstance, Some("prod"), "web-0");
    server.add_object(vmi("staging", "other", "node-2"));
    let mut resumed = RawWatch::open(
        &url,
        &format!("{PROD_VMIS}?watch=true&resourceVersion={rv}&timeoutSeconds=1"),
    );
    let events: Vec<(String, String)> = resumed
        .collect_until_end()
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_string(),
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        events,
        [
            ("ADDED".into(), "db-9".into()),
            ("DELETED".into(), "web-0".into())
        ]
    );

    // Too old: a 200 carrying one ERROR event with 410 Expired, then the end.
    server.compact();
    let mut expired = RawWatch::open(
        &url,
        &format!("{PROD_VMIS}?watch=true&resourceVersion={rv}"),
    );
    assert_eq!(expired.status, 200);
    let events = expired.collect_until_end();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], "ERROR");
    assert_eq!(events[0]["object"]["code"], 410);
    assert_eq!(events[0]["object"]["reason"], "Expired");

    // The same, scripted, for any resourceVersion.
    server.inject_fault(
        Fault::status(410)
            .query("watch=true")
            .in_watch_stream()
            .times(1),
    );
    let rv = server.resource_version();
    let mut scripted = RawWatch::open(
        &url,
        &format!("{PROD_VMIS}?watch=true&resourceVersion={rv}"),
    );
    assert_eq!(scripted.collect_until_end()[0]["object"]["code"], 410);
    // Or as a plain HTTP 410.
    server.inject_fault(Fault::status(410).query("watch=true").times(1));
    assert_eq!(
        RawWatch::open(
            &url,
            &format!("{PROD_VMIS}?watch=true&resourceVersion={rv}")
        )
        .status,
        410
    );

    // sendInitialEvents: ADDED for everything, then a bookmark marking the end.
    let mut streaming = RawWatch::open(
        &url,
        &format!(
            "{PROD_VMIS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"
        ),
    );
    let events = streaming.collect_until_end();
    let last = events.last().unwrap();
    assert_eq!(last["type"], "BOOKMARK");
    assert_eq!(
        last["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    assert_eq!(events.len(), 4);

    assert_eq!(
        http::get(&url, &format!("{PROD_VMIS}?watch=true&resourceVersion=abc")).status,
        400
    );
}

#[test]
fn bad_requests_never_take_the_server_down() {
    let server = server();
    let url = server.url();
    let raw = {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(server.addr()).unwrap();
        stream.write_all(b"NONSENSE\r\n\r\n").unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer
    };
    assert!(raw.starts_with("HTTP/1.1 400"), "{raw}");
    assert_eq!(
        http::request(&url, "POST", "/version", &[], None).status,
        405
    );
    assert_eq!(
        http::request(&url, "POST", PROD_VMIS, &[], Some(&[0xff, 0xfe])).status,
        400
    );
    assert_eq!(
        http::request(&url, "POST", PROD_VMIS, &[], Some(b"[1,2]")).status,
        400
    );
    assert_eq!(
        http::send_json(
            &url,
            "PATCH",
            &format!("{PROD_VMIS}/db-0"),
            "application/json-patch+json",
            &json!({"op": "add"})
        )
        .status,
        400
    );
    assert_eq!(
        http::send_json(
            &url,
            "PATCH",
            &format!("{PROD_VMIS}/db-0"),
            "application/json-patch+json",
            &json!([{"op": "remove", "path": "/nope/x"}])
        )
        .status,
        422
    );
    assert_eq!(http::request(&url, "DELETE", VMIS, &[], None).status, 405);
    assert_eq!(
        http::get(&url, &format!("{VMIS}?watch=true&timeoutSeconds=soon")).status,
        400
    );
    assert_eq!(http::get(&url, "/version").status, 200);
}

#[test]
fn starts_from_values_and_dies_with_its_handle() {
    let server = FakeApiServer::start_blocking(vec![json!({
        "kind": "Node", "metadata": {"name": "lonely"}
    })]);
    let url = server.url();
    let node = http::get(&url, "/api/v1/nodes/lonely").json();
    assert_eq!(node["apiVersion"], "v1");
    assert_eq!(server.objects(Kind::Node).len(), 1);
    let addr = server.addr();
    drop(server);
    assert!(std::net::TcpStream::connect(addr).is_err());

    let dir = tempfile::tempdir().unwrap();
    let server = FakeApiServer::start_blocking(vec![]);
    let kubeconfig = std::fs::read_to_string(server.write_kubeconfig(dir.path())).unwrap();
    assert!(kubeconfig.contains(&format!("server: {}", server.url())));
    assert!(kubeconfig.contains("current-context: fake"));
    assert!(kubeconfig.contains("namespace: default"));
}

#[test]
fn test_side_changes_keep_identity_and_bump_resource_versions() {
    let server = FakeApiServer::start_blocking(vec![]);
    let first = server.add_object(json!({
        "kind": "Pod", "metadata": {"name": "p"}, "spec": {"nodeName": "node-1"}
    }));
    assert_eq!(first["metadata"]["namespace"], "default");
    assert_eq!(first["apiVersion"], "v1");
    let replaced = server.add_object(json!({
        "kind": "Pod", "metadata": {"name": "p"}, "spec": {"nodeName": "node-2"}
    }));
    assert_eq!(replaced["metadata"]["uid"], first["metadata"]["uid"]);
    assert_eq!(replaced["spec"]["nodeName"], "node-2");
    let updated = server.update_object(json!({
        "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "status": {"phase": "Running"}
    }));
    let rvs: Vec<u64> = [&first, &replaced, &updated]
        .iter()
        .map(|o| {
            o["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert!(rvs[0] < rvs[1] && rvs[1] < rvs[2], "{rvs:?}");
    assert_eq!(server.objects(Kind::Pod).len(), 1);
    assert!(
        server
            .delete_object(Kind::Pod, Some("default"), "p")
            .is_some()
    );
    assert!(server.objects(Kind::Pod).is_empty());
}

/// The pattern CLI tests use: a sync test, the server on its own thread, the real binary as
/// a subprocess pointed at the server by a kubeconfig file.
#[test]
fn the_vmctl_binary_reads_from_it_through_a_kubeconfig() {
    let server = server();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(["status", "-A", "--kubeconfig"])
        .arg(&kubeconfig)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    let requests = server.requests();
    let log: Vec<String> = requests.iter().map(|r| r.line()).collect();
    assert!(
        output.status.success(),
        "{}\n{log:#?}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(requests.iter().any(|r| r.is_list()), "{log:#?}");
    for request in &requests {
        assert_eq!(request.status, 200, "{log:#?}");
        assert_eq!(request.header("authorization"), Some("Bearer fake-token"));
    }
}

// ---- through the kube client vmctl uses ----

mod with_kube {
    use super::*;
    use futures::{StreamExt, TryStreamExt};
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{
        Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, PostParams,
        WatchEvent, WatchParams,
    };
    use kube::runtime::watcher;

    async fn client(server: &FakeApiServer) -> kube::Client {
        // Through the kubeconfig file, as vmctl --kubeconfig reads it.
        let dir = tempfile::tempdir().unwrap();
        let path = server.write_kubeconfig(dir.path());
        let kubeconfig = kube::config::Kubeconfig::read_from(&path).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .unwrap();
        assert_eq!(config.default_namespace, "default");
        kube::Client::try_from(config).unwrap()
    }

    fn vmi_resource() -> ApiResource {
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("kubevirt.io", "v1", "VirtualMachineInstance"),
            "virtualmachineinstances",
        )
    }

    #[tokio::test]
    async fn lists_pods_with_a_selector_page_by_page() {
        let server = FakeApiServer::start_from_path(&fixtures()).await;
        let pods: Api<Pod> = Api::all(client(&server).await);
        let lp = ListParams::default()
            .labels("kubevirt.io=virt-launcher")
            .limit(2);
        let first = pods.list(&lp).await.unwrap();
        assert_eq!(first.items.len(), 2);
        let token = first.metadata.continue_.clone().expect("a continue token");
        // Built-in list items come without kind; k8s-openapi does not mind.
        assert_eq!(
            first.items[0].metadata.name.as_deref(),
            Some("virt-launcher-db-0-x7k2p")
        );
        let second = pods.list(&lp.clone().continue_token(&token)).await.unwrap();
        assert_eq!(second.items.len(), 2);
        assert!(second.metadata.continue_.is_none());
        assert_eq!(
            second.items[1].metadata.name.as_deref(),
            Some("virt-launcher-test-0-h2vnl")
        );

        let requests = server.requests();
        assert_eq!(server.list_count(Kind::Pod), 2);
        assert_eq!(requests[0].path, "/api/v1/pods");
        // kube-rs starts its query with '&' and percent-encodes the selector.
        assert_eq!(
            requests[0].query,
            "&labelSelector=kubevirt.io%3Dvirt-launcher&limit=2"
        );
        assert_eq!(requests[1].param("continue"), Some(token.as_str()));
        assert_eq!(
            requests[0].header("authorization"),
            Some("Bearer fake-token")
        );
    }

    #[tokio::test]
    async fn not_found_and_forbidden_surface_as_api_errors() {
        let server = FakeApiServer::start_from_path(&fixtures()).await;
        let client = client(&server).await;
        let pods: Api<Pod> = Api::namespaced(client.clone(), "prod");
        match pods.get("nope").await {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 404);
                assert_eq!(status.reason, "NotFound");
                assert_eq!(status.message, "pods \"nope\" not found");
            }
            other => panic!("expected a 404, got {other:?}"),
        }
        assert!(pods.get_opt("nope").await.unwrap().is_none());

        server.inject_fault(Fault::status(403).on(Method::GET, "/api/v1/pods"));
        let all: Api<Pod> = Api::all(client.clone());
        match all.list(&ListParams::default()).await {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 403);
                assert!(status.is_forbidden());
                assert!(status.message.contains(
                    "cannot list resource \"pods\" in API group \"\" at the cluster scope"
                ));
            }
            other => panic!("expected a 403, got {other:?}"),
        }

        // VMIs cannot be selected by status.nodeName (FACTS §11).
        let vmis: Api<DynamicObject> = Api::all_with(client.clone(), &vmi_resource());
        match vmis
            .list(&ListParams::default().fields("status.nodeName=node-1"))
            .await
        {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 400);
                assert_eq!(status.message, "field label not supported: status.nodeName");
            }
            other => panic!("expected a 400, got {other:?}"),
        }
        let on_node_1 = vmis
            .list(&ListParams::default().labels("kubevirt.io/nodeName=node-1"))
            .await
            .unwrap();
        assert_eq!(on_node_1.items.len(), 2);
        assert_eq!(
            on_node_1.items[0].types.as_ref().unwrap().kind,
            "VirtualMachineInstance"
        );
    }

    #[tokio::test]
    async fn create_and_delete_a_migration() {
        let server = FakeApiServer::start_from_path(&fixtures()).await;
        let resource = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("kubevirt.io", "v1", "VirtualMachineInstanceMigration"),
            "virtualmachineinstancemigrations",
        );
        let vmims: Api<DynamicObject> =
            Api::namespaced_with(client(&server).await, "prod", &resource);
        let mut migration = DynamicObject::new("", &resource);
        migration.metadata.name = None;
        migration.metadata.generate_name = Some("vmctl-".into());
        migration.data = json!({"spec": {"vmiName": "db-1"}});
        let created = vmims
            .create(&PostParams::default(), &migration)
            .await
            .unwrap();
        let name = created.metadata.name.clone().unwrap();
        assert!(name.starts_with("vmctl-"));
        let status = vmims
            .delete(&name, &DeleteParams::default())
            .await
            .unwrap()
            .right()
            .expect("deleting a custom resource answers a Status");
        assert_eq!(
            status.status,
            Some(kube::core::response::StatusSummary::Success)
        );
        // Held by its finalizer: the object comes back, being deleted.
        let held = vmims
            .delete("kubevirt-evacuation-q8fnd", &DeleteParams::default())
            .await
            .unwrap()
            .left()
            .expect("the object, held by its finalizer");
        assert!(held.metadata.deletion_timestamp.is_some());
        let verbs: Vec<&str> = server.requests().iter().map(|r| r.verb).collect();
        assert_eq!(verbs, ["create", "delete", "delete"]);
    }

    #[tokio::test]
    async fn a_watch_receives_an_added_event() {
        let server = FakeApiServer::start_from_path(&fixtures()).await;
        let pods: Api<Pod> = Api::namespaced(client(&server).await, "prod");
        let list = pods.list(&ListParams::default()).await.unwrap();
        let rv = list.metadata.resource_version.unwrap();
        let wp = WatchParams::default().labels("kubevirt.io=virt-launcher");
        let mut stream = pods.watch(&wp, &rv).await.unwrap().boxed();
        assert!(server.watches_ready(1, Duration::from_secs(5)).await);
        server.add_object(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "virt-launcher-new-abcde", "namespace": "prod",
                         "labels": {"kubevirt.io": "virt-launcher"}},
            "spec": {"nodeName": "node-2", "containers": []}
        }));
        let event = tokio::time::timeout(Duration::from_secs(5), stream.try_next())
            .await
            .expect("an event in time")
            .unwrap()
            .expect("the stream is open");
        match event {
            WatchEvent::Added(pod) => {
                assert_eq!(
                    pod.metadata.name.as_deref(),
                    Some("virt-launcher-new-abcde")
                )
            }
            other => panic!("expected ADDED, got {other:?}"),
        }
        let watch = server
            .requests()
            .into_iter()
            .find(|r| r.is_watch())
            .unwrap();
        assert_eq!(watch.param("resourceVersion"), Some(rv.as_str()));
        assert_eq!(watch.param("allowWatchBookmarks"), Some("true"));
        assert_eq!(watch.param("timeoutSeconds"), Some("290"));
        assert_eq!(watch.header("accept-encoding"), Some("identity"));
    }

    #[tokio::test]
    async fn kube_runtime_watcher_relists_after_an_expired_watch() {
        let server = FakeApiServer::start_from_path(&fixtures()).await;
        let pods: Api<Pod> = Api::all(client(&server).await);
        server.inject_fault(
            Fault::status(410)
                .query("watch=true")
                .in_watch_stream()
                .times(1),
        );
        let config = watcher::Config::default().labels("kubevirt.io=virt-launcher");
        let mut events = watcher(pods, config).boxed();
        let mut init_done = 0;
        let mut expired = 0;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while init_done < 2 {
            let next = tokio::time::timeout_at(deadline, events.next())
                .await
                .expect("watcher events in time")
                .expect("the watcher goes on");
            match next {
                Ok(watcher::Event::InitDone) => init_done += 1,
                Ok(_) => {}
                Err(watcher::Error::WatchError(status)) => {
                    assert_eq!(status.code, 410);
                    expired += 1;
                }
                Err(other) => panic!("unexpected watcher error {other}"),
            }
        }
        assert_eq!(expired, 1);
        assert_eq!(server.list_count(Kind::Pod), 2);
        let first_list = server.requests().into_iter().find(|r| r.is_list()).unwrap();
        // watcher::Config::default() pages by 500 and, with a limit, sends no resourceVersion.
        assert_eq!(
            first_list.query,
            "&labelSelector=kubevirt.io%3Dvirt-launcher&limit=500"
        );
    }
}
