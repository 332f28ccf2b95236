//! Drill (issue 33): an incident captured with `vmctl snapshot FILE` and default flags holds
//! the whole cluster, as `--from` reads it, and every read-only command `--from` that file
//! gives the answer it gives live. Checked by program: the file's objects against the fake
//! API server's, and each command's `-o json` document live against `--from`.
//!
//! The cluster is examples/cluster served by the fake API server (tests/support): VMs,
//! VMIs and VMIMs in three namespaces (none in `default`, the kubeconfig context's
//! namespace: the case of issue 33 item 2), migrations in flight (pre-copy, post-copy,
//! pending on a quota, unschedulable), events, PodDisruptionBudgets, ResourceQuotas and a
//! cordoned node.
//!
//! Fields that legitimately differ between the live and the `--from` answer, and only those,
//! are left out of the comparison: `source` (the API server's URL against the snapshot's path).
//! The clock is the same (`--now` live; the snapshot's `capturedAt`, which is that `--now`,
//! replayed), so ages and times are compared too.

mod common;
mod support;

use std::collections::BTreeSet;
use std::path::Path;

use common::*;
use serde_json::Value;
use support::FakeApiServer;
use vmctl::cluster::Kind;

fn live(server: &FakeApiServer, args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    vmctl_live(&server.write_kubeconfig(dir.path()), args)
}

fn from(file: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["--from", file.to_str().unwrap()];
    all.extend_from_slice(args);
    vmctl(all)
}

/// The document, with the fields that legitimately differ removed (see the file's comment).
fn document(o: &std::process::Output, what: &str) -> (Value, Option<i32>) {
    let mut v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {}", both(o)));
    if let Some(map) = v.as_object_mut() {
        map.remove("source");
    }
    (v, o.status.code())
}

fn keys_of(items: &[Value], kind: &str) -> BTreeSet<String> {
    items
        .iter()
        .filter(|i| i["kind"] == kind)
        .map(|i| {
            format!(
                "{}/{}",
                i["metadata"]["namespace"].as_str().unwrap_or(""),
                i["metadata"]["name"].as_str().unwrap_or("")
            )
        })
        .collect()
}

fn server_keys(server: &FakeApiServer, kind: Kind) -> BTreeSet<String> {
    keys_of(&server.objects(kind), kind.name())
}

#[test]
fn a_snapshot_with_default_flags_is_the_whole_cluster_and_replays_as_live() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("incident.yaml");
    // Default flags: the kubeconfig context's namespace is `default`, where there is no VM.
    let o = live(&server, &["snapshot", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", both(&o));
    assert!(!stderr(&o).contains("warning"), "{}", both(&o));
    let doc: Value = serde_saphyr::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["scope"]["namespace"], Value::Null, "{}", doc["scope"]);
    let items = doc["items"].as_array().unwrap();

    // The file holds every object of every kind the server holds (events: those vmctl
    // reads, every one of them about a VM, a VMI, a migration or a node).
    for kind in [
        Kind::VirtualMachineInstance,
        Kind::VirtualMachine,
        Kind::VirtualMachineInstanceMigration,
        Kind::Pod,
        Kind::Node,
        Kind::Namespace,
        Kind::PodDisruptionBudget,
        Kind::ResourceQuota,
        Kind::KubeVirt,
        Kind::MigrationPolicy,
    ] {
        let want = server_keys(&server, kind);
        assert!(!want.is_empty(), "the drill's cluster has {kind:?}");
        assert_eq!(keys_of(items, kind.name()), want, "{kind:?}");
    }
    let vm_events: BTreeSet<String> = server
        .objects(Kind::Event)
        .iter()
        .filter(|e| {
            matches!(
                e["involvedObject"]["kind"].as_str(),
                Some(
                    "VirtualMachineInstance" | "VirtualMachine" | "VirtualMachineInstanceMigration"
                )
            )
        })
        .map(|e| {
            format!(
                "{}/{}",
                e["metadata"]["namespace"].as_str().unwrap_or(""),
                e["metadata"]["name"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert!(vm_events.len() > 10, "{vm_events:?}");
    assert!(
        vm_events.is_subset(&keys_of(items, "Event")),
        "{:?}",
        vm_events
            .difference(&keys_of(items, "Event"))
            .collect::<Vec<_>>()
    );
    let ns: BTreeSet<&str> = items
        .iter()
        .filter(|i| i["kind"] == "VirtualMachineInstance")
        .filter_map(|i| i["metadata"]["namespace"].as_str())
        .collect();
    assert_eq!(ns, BTreeSet::from(["dev", "prod", "tenant-a"]));

    // Every read-only command `--from` the file answers as live. Live is asked about every
    // namespace (-A: the file holds every namespace, and `--from` reads them all by default).
    let in_flight = "migration/kubevirt-migrate-vm-q8tz4";
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["status", "-A"], vec!["status"]),
        (vec!["status", "-A"], vec!["status", "-A"]),
        (vec!["status", "-n", "prod"], vec!["status", "-n", "prod"]),
        (vec!["plan-drain", "node-3"], vec!["plan-drain", "node-3"]),
        (vec!["plan-drain", "node-2"], vec!["plan-drain", "node-2"]),
        (
            vec!["plan-maintenance", "--all"],
            vec!["plan-maintenance", "--all"],
        ),
        (
            vec!["explain", "-n", "prod", in_flight],
            vec!["explain", "-n", "prod", in_flight],
        ),
        (
            vec!["explain", "-n", "prod", "pg-orders-01"],
            vec!["explain", "-n", "prod", "pg-orders-01"],
        ),
        (vec!["top", "-A"], vec!["top"]),
    ];
    for (live_args, from_args) in &cases {
        let mut l = live_args.clone();
        l.extend(["-o", "json"]);
        let mut f = from_args.clone();
        f.extend(["-o", "json"]);
        let (live_doc, live_code) = document(&live(&server, &l), &format!("live {l:?}"));
        let (from_doc, from_code) = document(&from(&file, &f), &format!("--from {f:?}"));
        assert_eq!(live_code, from_code, "exit code of {l:?} / {f:?}");
        if live_doc != from_doc {
            panic!(
                "live {l:?} and --from {f:?} differ:\n--- live\n{}\n--- from\n{}",
                serde_json::to_string_pretty(&live_doc).unwrap(),
                serde_json::to_string_pretty(&from_doc).unwrap()
            );
        }
    }
    // The tables too (piped: no colour, no chart), but for the line naming the source.
    for (live_args, from_args) in [
        (vec!["status", "-A"], vec!["status"]),
        (vec!["plan-drain", "node-3"], vec!["plan-drain", "node-3"]),
    ] {
        let l = live(&server, &live_args);
        let f = from(&file, &from_args);
        assert_eq!(l.status.code(), f.status.code(), "{live_args:?}");
        assert!(stdout(&l).lines().count() > 10, "{}", both(&l));
        assert_eq!(
            normalise_source(&stdout(&l)),
            normalise_source(&stdout(&f)),
            "{live_args:?}"
        );
    }
    // And the claim of issue 33 itself: `status -A` from the file lists every VMI.
    let (doc, _) = document(&from(&file, &["status", "-A", "-o", "json"]), "status");
    assert_eq!(
        doc["vmis"].as_array().map(Vec::len),
        Some(server.objects(Kind::VirtualMachineInstance).len())
    );
}

/// `-n NS` narrows every namespaced kind alike (nodes and cluster-scoped kinds whole; pods of
/// other namespaces only as node capacity), and says so on stderr and in the file; `--from`
/// the file says it again.
#[test]
fn a_snapshot_narrowed_with_n_is_consistent_and_says_what_it_left_out() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("prod.yaml");
    let o = live(&server, &["snapshot", "-n", "prod", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", both(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning: the snapshot holds only namespace prod"),
        "{err}"
    );
    let doc: Value = serde_saphyr::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["scope"]["namespace"], "prod");
    let left_out = doc["scope"]["leftOut"].as_array().unwrap();
    assert!(!left_out.is_empty(), "{}", doc["scope"]);
    let items = doc["items"].as_array().unwrap();
    for kind in [
        "VirtualMachineInstance",
        "VirtualMachine",
        "VirtualMachineInstanceMigration",
        "PodDisruptionBudget",
        "ResourceQuota",
        "Event",
    ] {
        let namespaces: BTreeSet<&str> = items
            .iter()
            .filter(|i| i["kind"] == kind)
            .filter_map(|i| i["metadata"]["namespace"].as_str())
            .collect();
        assert_eq!(namespaces, BTreeSet::from(["prod"]), "{kind}");
    }
    // Cluster-scoped kinds whole.
    for kind in [Kind::Node, Kind::Namespace, Kind::MigrationPolicy] {
        assert_eq!(
            keys_of(items, kind.name()),
            server_keys(&server, kind),
            "{kind:?}"
        );
    }
    // Pods of other namespaces only as capacity: no environment, no launcher pod whole.
    for pod in items.iter().filter(|i| i["kind"] == "Pod") {
        if pod["metadata"]["namespace"] != "prod" {
            assert!(pod["status"].get("podIP").is_none(), "{pod}");
        }
    }
    // The replay says what the file leaves out, and answers as live within its namespace.
    let o = from(&file, &["status", "-A"]);
    assert!(o.status.success(), "{}", both(&o));
    assert!(
        stderr(&o).contains("holds only namespace prod"),
        "{}",
        both(&o)
    );
    let (live_doc, _) = document(
        &live(&server, &["status", "-n", "prod", "-o", "json"]),
        "live",
    );
    let (from_doc, _) = document(
        &from(&file, &["status", "-n", "prod", "-o", "json"]),
        "from",
    );
    let vmis = |d: &Value| d["vmis"].clone();
    assert_eq!(vmis(&live_doc), vmis(&from_doc));
}

/// Issue 33 (tried cold): `vmctl snapshot x.json` wrote YAML (JSON only with `-o json`), so
/// the file could not be served by `fake-apiserver --from`, which took JSON only. Now the
/// extension chooses, and the fake API server loads either with `--from`'s own loader. The
/// round trip, by program: snapshot the live fake server, serve the file with a second fake
/// server, and every read-only command answers the same from both.
#[test]
fn a_snapshot_served_by_a_second_fake_server_answers_as_the_first() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    let dir = tempfile::tempdir().unwrap();
    for name in ["incident.json", "incident.yaml", "incident.yml", "incident"] {
        let file = dir.path().join(name);
        let o = live(&server, &["snapshot", file.to_str().unwrap()]);
        assert!(o.status.success(), "{name}: {}", both(&o));
        let text = std::fs::read_to_string(&file).unwrap();
        let as_json = serde_json::from_str::<Value>(&text);
        if name.ends_with(".json") {
            let doc = as_json.unwrap_or_else(|e| {
                panic!(
                    "{name} is not JSON ({e}): {}",
                    text.lines().next().unwrap_or("")
                )
            });
            assert_eq!(doc["kind"], vmctl::cluster::files::SNAPSHOT_KIND, "{name}");
        } else {
            assert!(as_json.is_err(), "{name} is JSON, not YAML");
            let doc: Value = serde_saphyr::from_str(&text).unwrap();
            assert_eq!(doc["kind"], vmctl::cluster::files::SNAPSHOT_KIND, "{name}");
        }

        let replay = FakeApiServer::start_from_path_blocking(&file);
        for kind in [
            Kind::VirtualMachineInstance,
            Kind::VirtualMachineInstanceMigration,
            Kind::Pod,
            Kind::Node,
            Kind::MigrationPolicy,
        ] {
            assert_eq!(
                server_keys(&replay, kind),
                server_keys(&server, kind),
                "{name}: {kind:?}"
            );
        }
        let in_flight = "migration/kubevirt-migrate-vm-q8tz4";
        for args in [
            &["status", "-A"][..],
            &["plan-drain", "node-3"][..],
            &["plan-drain", "node-2"][..],
            &["explain", "-n", "prod", in_flight][..],
            &["explain", "-n", "prod", "pg-orders-01"][..],
        ] {
            let mut a = args.to_vec();
            a.extend(["-o", "json"]);
            let (first, first_code) = document(&live(&server, &a), &format!("first {a:?}"));
            let (second, second_code) = document(&live(&replay, &a), &format!("second {a:?}"));
            assert_eq!(first_code, second_code, "{name}: exit code of {a:?}");
            if first != second {
                panic!(
                    "{name}: {a:?} differs between the live server and the one serving its snapshot:\n--- first\n{}\n--- second\n{}",
                    serde_json::to_string_pretty(&first).unwrap(),
                    serde_json::to_string_pretty(&second).unwrap()
                );
            }
        }
    }
    // The fake server's loader also reads a must-gather directory, as `--from` does.
    let must_gather = FakeApiServer::start_from_path_blocking(&example_cluster());
    assert_eq!(
        server_keys(&must_gather, Kind::VirtualMachineInstance),
        server_keys(&server, Kind::VirtualMachineInstance)
    );
}
