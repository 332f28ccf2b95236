//! Fleet scale, counted in requests rather than seconds (issue 9): each read-only command
//! costs one paginated LIST per query (exactly `ceil(matching / 500)` pages, at least one),
//! the same queries at 1,000 and 5,000 VMIs, and no per-VMI GETs or watches. `plan-drain`
//! reads VMs and pods with one query per namespace, all at once, rather than one list whose
//! pages wait on each other (issue 26): its queries grow with the namespaces, not the VMIs.
//!
//! The clusters come from the benchmark generator (benches/fleet/gen.rs, lean profile),
//! served by the fake API server; the built `vmctl` runs against it.

mod common;
mod support;

#[path = "../benches/fleet/gen.rs"]
mod fleet;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use support::{FakeApiServer, RecordedRequest, http};

const PAGE_SIZE: usize = 500;

/// What one command asked of the server.
#[derive(Debug, Default, PartialEq)]
struct Work {
    /// LIST requests per query (path + selectors): (pages requested, objects matching).
    lists: BTreeMap<String, (usize, usize)>,
    /// GETs of objects, as `kind namespace/name`.
    gets: Vec<String>,
    /// Anything else (watches, mutations, unknown paths).
    other: Vec<String>,
    /// `GET /version` (the plans read the API server's version once: how its eviction API
    /// reads `selector: {}`).
    version: usize,
    total: usize,
}

impl Work {
    fn pages(&self) -> usize {
        self.lists.values().map(|(pages, _)| pages).sum()
    }
    /// The queries and GETs, without page counts: what must not depend on the fleet's size.
    fn shape(&self) -> (Vec<String>, Vec<String>) {
        (self.lists.keys().cloned().collect(), self.gets.clone())
    }
}

/// The query string without `limit` and `continue`, in a stable form.
fn selectors(r: &RecordedRequest) -> String {
    let mut parts: Vec<&str> = r
        .query
        .split('&')
        .filter(|p| !p.is_empty() && !p.starts_with("limit=") && !p.starts_with("continue="))
        .collect();
    parts.sort_unstable();
    parts.join("&")
}

/// How many objects the server holds for a query (one unpaginated LIST of our own).
fn matching(server: &FakeApiServer, path: &str, query: &str) -> usize {
    let path_and_query = if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{query}")
    };
    let response = http::get(&server.url(), &path_and_query);
    let list: Value = response.json();
    list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("GET {path_and_query}: no items: {list}"))
        .len()
}

fn work_of(server: &FakeApiServer, requests: &[RecordedRequest]) -> Work {
    let mut work = Work {
        total: requests.len(),
        ..Work::default()
    };
    for r in requests {
        match (r.verb, r.kind) {
            ("list", Some(_)) => {
                assert_eq!(
                    r.param("limit"),
                    Some("500"),
                    "every LIST is paginated: {}",
                    r.line()
                );
                let key = format!("{}?{}", r.path, selectors(r));
                work.lists.entry(key).or_insert((0, 0)).0 += 1;
            }
            ("get", Some(kind)) => work.gets.push(format!(
                "{} {}/{}",
                kind.plural(),
                r.namespace.as_deref().unwrap_or(""),
                r.name.as_deref().unwrap_or("")
            )),
            ("get", None) if r.path == "/version" => work.version += 1,
            _ => work.other.push(format!("{} {}", r.verb, r.line())),
        }
    }
    let keys: Vec<String> = work.lists.keys().cloned().collect();
    for key in keys {
        let (path, query) = key.split_once('?').unwrap_or((key.as_str(), ""));
        let n = matching(server, path, query);
        if let Some(entry) = work.lists.get_mut(&key) {
            entry.1 = n;
        }
    }
    work
}

/// Runs vmctl against the server and returns what it asked, checking it succeeded (exit 0,
/// or 1 for a finding such as a drain that would block).
fn run(server: &FakeApiServer, kubeconfig: &Path, args: &[&str]) -> Work {
    server.reset_requests();
    let output = common::vmctl_live(kubeconfig, args);
    let code = output.status.code();
    assert!(
        matches!(code, Some(0) | Some(1)),
        "vmctl {args:?} exited {code:?}\nstderr: {}",
        common::stderr(&output)
    );
    assert!(!output.stdout.is_empty(), "vmctl {args:?} printed nothing");
    if args.contains(&"json") {
        let parsed: Result<Value, _> = serde_json::from_slice(&output.stdout);
        assert!(parsed.is_ok(), "vmctl {args:?}: stdout is not JSON");
    }
    let requests = server.requests();
    work_of(server, &requests)
}

/// The page count every query must take, and nothing else.
fn assert_pages_only(size: u64, what: &str, work: &Work) {
    for (query, (pages, matching)) in &work.lists {
        let expected = matching.div_ceil(PAGE_SIZE).max(1);
        assert_eq!(
            *pages, expected,
            "{size} VMIs, {what}: LIST {query} took {pages} request(s) for {matching} matching objects (expected {expected} page(s) of {PAGE_SIZE})"
        );
    }
    assert!(
        work.other.is_empty(),
        "{size} VMIs, {what}: unexpected requests (watches, mutations, discovery): {:?}",
        work.other
    );
    assert!(
        work.version <= 1,
        "{size} VMIs, {what}: /version read {} times",
        work.version
    );
    assert!(
        work.gets.len() <= 2,
        "{size} VMIs, {what}: per-object GETs: {:?}",
        work.gets
    );
    assert_eq!(work.total, work.pages() + work.gets.len() + work.version);
}

struct Fleet {
    size: u64,
    server: FakeApiServer,
    _dir: tempfile::TempDir,
    kubeconfig: std::path::PathBuf,
    explain: (String, String),
}

fn fleet(size: u64) -> Fleet {
    let cfg = fleet::Config::new(size, size / 20, 42).lean();
    // A VMI with a failed migration: explain reads its migration, pods and events.
    let explain = fleet::notable_vmis(&cfg)
        .into_iter()
        .find(|(what, _, _)| *what == "failed-migration")
        .map(|(_, ns, name)| (ns, name))
        .expect("the generator makes a failed migration");
    let server = FakeApiServer::start_blocking(fleet::objects(&cfg));
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = server.write_kubeconfig(dir.path());
    Fleet {
        size,
        server,
        _dir: dir,
        kubeconfig,
        explain,
    }
}

fn commands(f: &Fleet) -> Vec<(&'static str, Work)> {
    let (ns, name) = &f.explain;
    let vm = format!("vm/{name}");
    vec![
        (
            "status -A -o json",
            run(&f.server, &f.kubeconfig, &["status", "-A", "-o", "json"]),
        ),
        (
            "plan-drain node-7 -o json",
            run(
                &f.server,
                &f.kubeconfig,
                &["plan-drain", "node-7", "-o", "json"],
            ),
        ),
        (
            "explain vm/NAME",
            run(&f.server, &f.kubeconfig, &["explain", &vm, "-n", ns]),
        ),
    ]
}

#[test]
fn requests_per_command_are_pages_of_the_same_queries_at_1k_and_5k_vmis() {
    let small = fleet(1_000);
    let small_work = commands(&small);
    drop(small);
    let large = fleet(5_000);
    let large_work = commands(&large);

    for (size, works) in [(1_000, &small_work), (5_000, &large_work)] {
        for (what, work) in works.iter() {
            assert_pages_only(size, what, work);
        }
    }
    for ((what, small), (_, large)) in small_work.iter().zip(large_work.iter()) {
        // The same queries and GETs, whatever the fleet's size: only the pages grow.
        assert_eq!(
            small.shape(),
            large.shape(),
            "{what}: the queries differ between 1,000 and 5,000 VMIs"
        );
        assert_eq!(
            large.total - small.total,
            large.pages() - small.pages(),
            "{what}: requests grew by more than pages"
        );
    }
    // status -A lists every VMI: 1,000 VMIs are 2 pages, 5,000 are 10, so pagination is
    // exercised, not assumed.
    let vmi_pages = |works: &[(&str, Work)]| {
        works[0]
            .1
            .lists
            .iter()
            .filter(|(q, _)| q.starts_with("/apis/kubevirt.io/v1/virtualmachineinstances?"))
            .map(|(_, (pages, _))| *pages)
            .sum::<usize>()
    };
    assert_eq!(vmi_pages(&small_work), 2, "{:?}", small_work[0].1.lists);
    assert_eq!(vmi_pages(&large_work), 10, "{:?}", large_work[0].1.lists);
    assert_eq!(large.size, 5_000);
    let plan_drain = &large_work[1];
    assert_eq!(plan_drain.0, "plan-drain node-7 -o json");
    for (namespaced, cluster_wide) in [
        ("/api/v1/namespaces/{ns}/pods", "/api/v1/pods"),
        (
            "/apis/kubevirt.io/v1/namespaces/{ns}/virtualmachines",
            "/apis/kubevirt.io/v1/virtualmachines",
        ),
    ] {
        assert_split_by_namespace(&large.server, &plan_drain.1, namespaced, cluster_wide);
    }
}

/// `plan-drain` reads every VM and pod namespace by namespace, the lists at once (issue 26: one
/// list waits a round trip per page of 500, one after the other: at 10k VMIs the 22 pages of
/// pods cost 1.1 s at 50 ms a round trip). One query per Namespace the server holds, plus one
/// cluster-wide query for the objects of every other namespace (`metadata.namespace!=…`; here
/// the generator's virt-handler pods in `kubevirt`, which has no Namespace object), and no
/// plain cluster-wide list: each object is read exactly once.
fn assert_split_by_namespace(
    server: &FakeApiServer,
    work: &Work,
    namespaced: &str,
    cluster_wide: &str,
) {
    let namespaces: Value = http::get(&server.url(), "/api/v1/namespaces").json();
    let names: Vec<&str> = namespaces["items"]
        .as_array()
        .expect("namespaces")
        .iter()
        .filter_map(|n| n["metadata"]["name"].as_str())
        .collect();
    assert!(names.len() >= 20, "{names:?}");
    let mut read = 0;
    for ns in &names {
        let key = format!("{}?", namespaced.replace("{ns}", ns));
        let Some((_, matching)) = work.lists.get(&key) else {
            panic!("no LIST {key}: {:?}", work.lists.keys());
        };
        read += matching;
    }
    let others: Vec<(&String, &(usize, usize))> = work
        .lists
        .iter()
        .filter(|(q, _)| q.starts_with(&format!("{cluster_wide}?")))
        .collect();
    assert_eq!(others.len(), 1, "{others:?}");
    let (query, (_, rest)) = others[0];
    assert!(
        query.contains("fieldSelector=metadata.namespace"),
        "the cluster-wide query reads only the other namespaces: {query}"
    );
    read += rest;
    let prefix = namespaced.split("{ns}").next().unwrap_or_default();
    let resource = cluster_wide.rsplit('/').next().unwrap_or_default();
    let queries = work
        .lists
        .keys()
        .filter(|q| {
            q.starts_with(&format!("{cluster_wide}?"))
                || (q.starts_with(prefix) && q.contains(&format!("/{resource}?")))
        })
        .count();
    assert_eq!(queries, names.len() + 1, "{:?}", work.lists.keys());
    assert_eq!(
        read,
        matching(server, cluster_wide, ""),
        "{cluster_wide}: every object read exactly once"
    );
}

/// `plan-drain --metrics` costs one request more than without, at any fleet size: node-7's
/// virt-handler page (its pod is among the pods the plan lists anyway), whatever the number
/// of VMIs on it.
#[test]
fn plan_drain_metrics_adds_one_page_at_1k_and_5k_vmis() {
    use support::{HookReply, HookRequest};
    use vmctl::cluster::Kind;
    for size in [1_000, 5_000] {
        let f = fleet(size);
        f.server
            .add_object(serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "virt-handler-7", "namespace": "kubevirt", "uid": "vh-7",
                "labels": {"kubevirt.io": "virt-handler"}},
            "spec": {"nodeName": "node-7", "containers": [{"name": "virt-handler"}]},
            "status": {"phase": "Running"}}));
        let mut page = String::from("# TYPE kubevirt_vmi_dirty_rate_bytes_per_second gauge\n");
        let mut on_node = 0;
        for v in f.server.objects(Kind::VirtualMachineInstance) {
            if v["status"]["nodeName"] != "node-7" {
                continue;
            }
            on_node += 1;
            page.push_str(&format!(
                "kubevirt_vmi_dirty_rate_bytes_per_second{{name={},namespace={},node=\"node-7\"}} 1048576\n",
                v["metadata"]["name"], v["metadata"]["namespace"]
            ));
        }
        let path = "/api/v1/namespaces/kubevirt/pods/https:virt-handler-7:8443/proxy/metrics";
        f.server
            .add_hook(std::sync::Arc::new(move |r: &HookRequest| {
                (r.path == path).then(|| HookReply::Text(200, page.clone()))
            }));
        let without = run(
            &f.server,
            &f.kubeconfig,
            &["plan-drain", "node-7", "-o", "json"],
        );
        let with = run(
            &f.server,
            &f.kubeconfig,
            &["plan-drain", "node-7", "--metrics", "-o", "json"],
        );
        assert_eq!(
            with.shape().0,
            without.shape().0,
            "{size} VMIs: the same lists"
        );
        assert_eq!(with.pages(), without.pages(), "{size} VMIs");
        // The pod proxy's GET (the fake server files it under pods).
        assert!(without.gets.is_empty(), "{:?}", without.gets);
        assert_eq!(
            with.gets,
            ["pods kubevirt/https:virt-handler-7:8443"],
            "{size} VMIs"
        );
        assert!(with.other.is_empty(), "{:?}", with.other);
        assert_eq!(with.total, without.total + 1, "{size} VMIs");

        let out = common::vmctl_live(
            &f.kubeconfig,
            &["plan-drain", "node-7", "--metrics", "-o", "json"],
        );
        let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
        let c = &plan["convergence"];
        assert!(
            on_node > 0 && c["withDirtyRate"].as_u64().unwrap() > 0,
            "{c}"
        );
        assert_eq!(c["withDirtyRate"], c["predicted"], "{c}");
        assert_eq!(c["notes"], serde_json::json!([]), "{c}");
    }
}
