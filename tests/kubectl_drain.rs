//! `vmctl drain` against the real `kubectl drain`: for the pods that are not VMs' launcher
//! pods, given the same flags, both must evict the same pods, refuse the same pods for the
//! same reasons, cordon (or not) alike and agree on success.
//!
//! Each case starts two twin fake API servers (the drain fixture with a bare pod, and the
//! scripted KubeVirt), runs `kubectl drain node-1 FLAGS` against one and `vmctl drain
//! node-1 FLAGS` against the other, and compares what each server saw happen.
//! `--pod-selector '!kubevirt.io'` keeps the launcher pods (and virt-handler) out of every
//! case: kubectl would retry KubeVirt's 429 forever; that side is vmctl's own (tests/cli_drain.rs).
//!
//! The kubectl binary is `$KUBECTL` when set, else `kubectl` on `PATH` (CI installs Debian's
//! `kubernetes-client`, kubectl 1.20). Without one the tests fail: they never pass silently.

mod common;
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use common::*;
use serde_json::{Value, json};
use support::kubevirt_sim::{self, DrainFixture, KubeVirtSim, Script};
use support::{FakeApiServer, Hook, HookReply};
use vmctl::cluster::Kind;

/// Keeps the VMs' launcher pods (label `kubevirt.io=virt-launcher`) and virt-handler out.
const NOT_VMS: &str = "!kubevirt.io";

/// The DaemonSets the fixture's pods name as their controller (`namespace/name`).
const DAEMONSETS: [&str; 2] = ["kube-system/node-exporter", "kubevirt/virt-handler"];

/// One fake API server with the drain fixture (and `debug-shell`, a bare pod), the scripted
/// KubeVirt, and the DaemonSets kubectl's daemonSetFilter GETs.
struct Twin {
    server: Arc<FakeApiServer>,
    _sim: KubeVirtSim,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

/// A twin with `extra` objects added and only the `daemonsets` served.
fn twin(extra: &[Value], daemonsets: &'static [&'static str]) -> Twin {
    let fixture = DrainFixture {
        bare_pod: true,
        ..DrainFixture::default()
    };
    let server = Arc::new(FakeApiServer::start_blocking(
        kubevirt_sim::drain_cluster_with(&fixture),
    ));
    for object in extra {
        server.add_object(object.clone());
    }
    server.add_hook(daemonsets_hook(daemonsets));
    let sim = KubeVirtSim::start(
        &server,
        Script {
            running_ticks: 8,
            ..Script::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    Twin {
        server,
        _sim: sim,
        dir,
        kubeconfig,
    }
}

/// `GET /apis/apps/v1/namespaces/NS/daemonsets/NAME`: the fake server does not serve
/// DaemonSets; kubectl's daemonSetFilter only needs the object to exist (a 404 would make
/// the pod an orphan: refused, or deleted with `--force`).
fn daemonsets_hook(known: &'static [&'static str]) -> Hook {
    Arc::new(move |req| {
        if req.method != support::Method::GET {
            return None;
        }
        let rest = req.path.strip_prefix("/apis/apps/v1/namespaces/")?;
        let (ns, name) = rest.split_once("/daemonsets/")?;
        if !known.contains(&format!("{ns}/{name}").as_str()) {
            return Some(HookReply::Json(
                404,
                json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": format!("daemonsets.apps \"{name}\" not found"), "reason": "NotFound",
                    "details": {"name": name, "group": "apps", "kind": "daemonsets"}, "code": 404}),
            ));
        }
        Some(HookReply::Json(
            200,
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
                "metadata": {"name": name, "namespace": ns, "uid": format!("daemonset-{name}"),
                    "resourceVersion": "1", "generation": 1},
                "spec": {"selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                        "spec": {"containers": [{"name": "main", "image": "registry.example/app:1"}]}}},
                "status": {"currentNumberScheduled": 3, "desiredNumberScheduled": 3,
                    "numberMisscheduled": 0, "numberReady": 3, "observedGeneration": 1}}),
        ))
    })
}

/// kubectl's pod filters that refuse a pod without their flag and warn with it (the
/// wording changed across versions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rule {
    /// daemonSetFilter without `--ignore-daemonsets`.
    DaemonSet,
    /// localStorageFilter without `--delete-emptydir-data`.
    LocalStorage,
    /// unreplicatedFilter without `--force`.
    NoController,
    /// daemonSetFilter on a 404 for the pod's DaemonSet, without `--force` (kubectl says
    /// the API's words, `daemonsets.apps "x" not found`; vmctl names the DaemonSet too).
    Orphan,
}

impl Rule {
    /// Which rule a `cannot delete …` message is, by the flag it names.
    fn of_refusal(message: &str) -> Option<Rule> {
        if message.contains("not found") {
            Some(Rule::Orphan)
        } else if message.contains("--ignore-daemonsets") {
            Some(Rule::DaemonSet)
        } else if message.contains("--delete-emptydir-data")
            || message.contains("--delete-local-data")
        {
            Some(Rule::LocalStorage)
        } else if message.contains("--force") {
            Some(Rule::NoController)
        } else {
            None
        }
    }

    /// Which rule a warning is (`ignoring DaemonSet-managed Pods`, `deleting Pods with
    /// local storage`, `deleting Pods that declare no controller`, 1.20: `deleting Pods not
    /// managed by ReplicationController, …`).
    fn of_warning(message: &str) -> Option<Rule> {
        if message.contains("DaemonSet-managed") {
            Some(Rule::DaemonSet)
        } else if message.contains("local storage") {
            Some(Rule::LocalStorage)
        } else if message.contains("no controller") || message.contains("not managed by") {
            Some(Rule::NoController)
        } else {
            None
        }
    }
}

/// The refusals in a drain's output, each with the pods (`namespace/name`) it names.
/// kubectl joins them on one line (`cannot delete A (use --x …): ns/p, cannot delete B …`),
/// 1.2x wraps them in `[…]`; vmctl prints one a line.
fn refusals(text: &str) -> BTreeMap<Rule, BTreeSet<String>> {
    let mut out: BTreeMap<Rule, BTreeSet<String>> = BTreeMap::new();
    for chunk in text.split("cannot delete ").skip(1) {
        // `WHY (use --x …): PODS`; kubectl's orphan has no parenthesis: `WHY: PODS`.
        let first_line = chunk.lines().next().unwrap_or_default();
        let Some((what, rest)) = chunk
            .split_once("): ")
            .or_else(|| first_line.rsplit_once(": "))
        else {
            continue;
        };
        let Some(kind) = Rule::of_refusal(what) else {
            continue;
        };
        let pods = out.entry(kind).or_default();
        for token in rest.split([',', ' ', '\n', ']', '[']) {
            let token = token.trim();
            if token.is_empty() {
                continue;
            }
            // The pod list ends at the first word that is not `namespace/name`.
            match token.split_once('/') {
                Some((ns, name)) if is_dns_name(ns) && is_dns_name(name) => {
                    pods.insert(token.to_string());
                }
                _ => break,
            }
        }
    }
    out
}

/// The warnings in a drain's output, each with the pods it names. kubectl prints one line,
/// `Warning: A: ns/p, ns/q; B: ns/r` (1.20: `WARNING: …`); vmctl one line per rule. Other
/// warnings (vmctl names the mirror pods it skips, kubectl skips them silently) are left out.
fn warnings(text: &str) -> BTreeMap<Rule, BTreeSet<String>> {
    let mut out: BTreeMap<Rule, BTreeSet<String>> = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line
            .strip_prefix("Warning: ")
            .or_else(|| line.strip_prefix("WARNING: "))
        else {
            continue;
        };
        for part in rest.split("; ") {
            let Some((what, pods)) = part.rsplit_once(": ") else {
                continue;
            };
            let Some(kind) = Rule::of_warning(what) else {
                continue;
            };
            out.entry(kind)
                .or_default()
                .extend(pods.split(", ").map(|p| p.trim().to_string()));
        }
    }
    out
}

fn is_dns_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
}

/// What one drain did to its server.
#[derive(Debug)]
struct Outcome {
    success: bool,
    /// The pods (`namespace/name`) gone from the server.
    deleted: BTreeSet<String>,
    /// `spec.unschedulable: true` on node-1.
    cordoned: bool,
    refusals: BTreeMap<Rule, BTreeSet<String>>,
    /// The pods (`namespace/name`) an eviction was POSTed for, whatever the answer.
    evicted: BTreeSet<String>,
    /// The pods DELETEd directly (not through the eviction API).
    deleted_directly: BTreeSet<String>,
    /// The `apiVersion`s of the Evictions sent (kubectl 1.20: `policy/v1beta1`).
    eviction_versions: BTreeSet<String>,
    /// Each evicted pod's `deleteOptions.gracePeriodSeconds`, if sent.
    grace: BTreeMap<String, Option<i64>>,
    /// Requests other than GET (and other than the cordon and the evictions).
    other_mutations: Vec<String>,
    warnings: BTreeMap<Rule, BTreeSet<String>>,
    text: String,
}

fn body(request: &support::RecordedRequest) -> Value {
    serde_json::from_str(&request.body).unwrap_or_default()
}

fn pod_ids(server: &FakeApiServer) -> BTreeSet<String> {
    server
        .objects(Kind::Pod)
        .iter()
        .map(|p| {
            format!(
                "{}/{}",
                p["metadata"]["namespace"].as_str().unwrap_or(""),
                p["metadata"]["name"].as_str().unwrap_or("")
            )
        })
        .collect()
}

fn cordoned(server: &FakeApiServer) -> bool {
    server
        .object(Kind::Node, None, "node-1")
        .is_some_and(|n| n["spec"]["unschedulable"] == Value::Bool(true))
}

impl Twin {
    /// Runs `drain` (the program and its arguments up to the node) and reads the outcome.
    fn drain(&self, run: impl FnOnce(&Path) -> Output) -> Outcome {
        let before = pod_ids(&self.server);
        assert!(!cordoned(&self.server));
        self.server.reset_requests();
        let out = run(&self.kubeconfig);
        let text = format!(
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            out.status.code(),
            stdout(&out),
            stderr(&out)
        );
        let after = pod_ids(&self.server);
        let requests = self.server.requests();
        let pod_of = |r: &support::RecordedRequest| {
            format!(
                "{}/{}",
                r.namespace.as_deref().unwrap_or(""),
                r.name.as_deref().unwrap_or("")
            )
        };
        let evictions = || {
            requests.iter().filter(|r| {
                r.method == support::Method::POST
                    && r.kind == Some(Kind::Pod)
                    && r.subresource.as_deref() == Some("eviction")
            })
        };
        let output = format!("{}\n{}", stdout(&out), stderr(&out));
        Outcome {
            success: out.status.success(),
            deleted: before.difference(&after).cloned().collect(),
            cordoned: cordoned(&self.server),
            refusals: refusals(&output),
            evicted: evictions().map(pod_of).collect(),
            deleted_directly: requests
                .iter()
                .filter(|r| {
                    r.method == support::Method::DELETE
                        && r.kind == Some(Kind::Pod)
                        && r.subresource.is_none()
                })
                .map(pod_of)
                .collect(),
            eviction_versions: evictions()
                .map(|r| body(r)["apiVersion"].as_str().unwrap_or("?").to_string())
                .collect(),
            grace: evictions()
                .filter(|r| (200..300).contains(&r.status))
                .map(|r| {
                    (
                        pod_of(r),
                        body(r)
                            .pointer("/deleteOptions/gracePeriodSeconds")
                            .and_then(Value::as_i64),
                    )
                })
                .collect(),
            other_mutations: requests
                .iter()
                .filter(|r| r.method != support::Method::GET)
                .filter(|r| {
                    !(r.kind == Some(Kind::Node) && r.name.as_deref() == Some("node-1"))
                        && r.subresource.as_deref() != Some("eviction")
                })
                .map(|r| r.line())
                .collect(),
            warnings: warnings(&output),
            text,
        }
    }
}

fn run_kubectl(twin: &Twin, flags: &[&str]) -> Outcome {
    let bin = kubectl_binary();
    let cache = twin.dir.path().join("kube-cache");
    twin.drain(|kubeconfig| {
        Command::new(&bin)
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .arg("--cache-dir")
            .arg(&cache)
            .args(["drain", "node-1", "--timeout", "60s"])
            .args(flags)
            .env_remove("KUBECONFIG")
            .env("HOME", twin.dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("run {}: {e}", bin.display()))
    })
}

fn run_vmctl(twin: &Twin, flags: &[&str]) -> Outcome {
    twin.drain(|kubeconfig| {
        let mut args = vec![
            "--kubeconfig".to_string(),
            kubeconfig.display().to_string(),
            "drain".into(),
            "node-1".into(),
        ];
        args.extend(flags.iter().map(|s| s.to_string()));
        vmctl(args)
    })
}

/// Runs both drains with `flags` (plus `--pod-selector '!kubevirt.io'`) and asserts they
/// agree on the exit status, the pods deleted (all through the eviction API), the refusals
/// and, for a drain that goes ahead, the warnings. Whether node-1 is cordoned is left to
/// the cases (see [`a_refused_drain_leaves_the_node_cordoned_as_kubectl_does`]). Returns
/// both outcomes for the case's own expectations.
fn compare(flags: &[&str]) -> (Outcome, Outcome) {
    compare_selecting(flags, NOT_VMS)
}

/// [`compare`] with another `--pod-selector` (which must keep the launcher pods out).
fn compare_selecting(flags: &[&str], selector: &str) -> (Outcome, Outcome) {
    compare_in(&[], &DAEMONSETS, flags, selector)
}

/// [`compare_selecting`] on twins with `extra` objects and only `daemonsets` served.
fn compare_in(
    extra: &[Value],
    daemonsets: &'static [&'static str],
    flags: &[&str],
    selector: &str,
) -> (Outcome, Outcome) {
    let mut all = flags.to_vec();
    all.extend(["--pod-selector", selector]);
    let (kt, vm) = (twin(extra, daemonsets), twin(extra, daemonsets));
    let kubectl = run_kubectl(&kt, &all);
    let vmctl = run_vmctl(&vm, &all);
    let both = format!(
        "flags {all:?}\n=== kubectl ({})\n{}\n=== vmctl\n{}",
        kubectl_binary().display(),
        kubectl.text,
        vmctl.text
    );
    assert_eq!(kubectl.success, vmctl.success, "exit status\n{both}");
    assert_eq!(kubectl.deleted, vmctl.deleted, "pods deleted\n{both}");
    assert_eq!(kubectl.evicted, vmctl.evicted, "pods evicted\n{both}");
    assert_eq!(kubectl.evicted, kubectl.deleted, "kubectl evicts\n{both}");
    assert!(
        kubectl.deleted_directly.is_empty() && vmctl.deleted_directly.is_empty(),
        "no pod DELETEd directly\n{both}"
    );
    assert_eq!(kubectl.refusals, vmctl.refusals, "refusals\n{both}");
    assert_eq!(kubectl.grace, vmctl.grace, "gracePeriodSeconds\n{both}");
    if kubectl.success {
        assert_eq!(kubectl.warnings, vmctl.warnings, "warnings\n{both}");
    }
    assert!(
        kubectl.other_mutations.is_empty() && vmctl.other_mutations.is_empty(),
        "only the cordon and evictions: {:?} {:?}\n{both}",
        kubectl.other_mutations,
        vmctl.other_mutations
    );
    // No VM is in it: vmctl asks for no --allow-shutdowns (and evicts no launcher pod).
    assert!(!vmctl.text.contains("--allow-shutdowns"), "{both}");
    assert!(
        vmctl.deleted.iter().all(|p| !p.contains("virt-launcher")),
        "{both}"
    );
    (kubectl, vmctl)
}

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

#[test]
fn without_flags_both_refuse_the_daemonset_the_emptydir_and_the_bare_pod() {
    let (kubectl, vmctl) = compare(&[]);
    assert!(!kubectl.success, "{}", kubectl.text);
    assert!(kubectl.deleted.is_empty(), "{}", kubectl.text);
    let want = BTreeMap::from([
        (Rule::DaemonSet, set(&["kube-system/node-exporter-7xk2p"])),
        (Rule::LocalStorage, set(&["prod/cache-6b8d9c7f4-q9w2e"])),
        (Rule::NoController, set(&["prod/debug-shell"])),
    ]);
    assert_eq!(kubectl.refusals, want, "{}", kubectl.text);
    assert!(kubectl.evicted.is_empty() && vmctl.evicted.is_empty());
}

#[test]
fn with_daemonsets_ignored_and_emptydir_allowed_both_refuse_the_bare_pod() {
    let (kubectl, vmctl) = compare(&["--ignore-daemonsets", "--delete-emptydir-data"]);
    assert!(!kubectl.success, "{}", kubectl.text);
    assert!(kubectl.deleted.is_empty(), "{}", kubectl.text);
    let want = BTreeMap::from([(Rule::NoController, set(&["prod/debug-shell"]))]);
    assert_eq!(kubectl.refusals, want, "{}", kubectl.text);
    assert!(kubectl.evicted.is_empty() && vmctl.evicted.is_empty());
}

#[test]
fn with_force_both_evict_the_same_pods_and_skip_the_daemonset_and_the_mirror_pod() {
    let (kubectl, vmctl) = compare(&["--ignore-daemonsets", "--delete-emptydir-data", "--force"]);
    assert!(kubectl.success, "{}", kubectl.text);
    assert!(
        kubectl.cordoned && vmctl.cordoned,
        "{}\n{}",
        kubectl.text,
        vmctl.text
    );
    assert!(kubectl.refusals.is_empty(), "{}", kubectl.text);
    assert_eq!(
        kubectl.deleted,
        set(&[
            "prod/cache-6b8d9c7f4-q9w2e",
            "prod/debug-shell",
            "prod/frontend-7d9f8b6c5d-x2x9q"
        ]),
        "{}",
        kubectl.text
    );
    let want = BTreeMap::from([
        (Rule::DaemonSet, set(&["kube-system/node-exporter-7xk2p"])),
        (Rule::NoController, set(&["prod/debug-shell"])),
    ]);
    assert_eq!(kubectl.warnings, want, "{}", kubectl.text);
    eprintln!(
        "kubectl {} sent Evictions as {:?}",
        kubectl_binary().display(),
        kubectl.eviction_versions
    );
}

#[test]
fn a_grace_period_is_sent_with_each_eviction_by_both() {
    let (kubectl, _) = compare(&[
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--force",
        "--grace-period",
        "7",
    ]);
    assert!(kubectl.success, "{}", kubectl.text);
    assert_eq!(kubectl.grace.len(), 3, "{}", kubectl.text);
    assert!(
        kubectl.grace.values().all(|g| *g == Some(7)),
        "{:?}\n{}",
        kubectl.grace,
        kubectl.text
    );
}

#[test]
fn without_a_grace_period_neither_sends_one() {
    let (kubectl, _) = compare(&["--ignore-daemonsets", "--delete-emptydir-data", "--force"]);
    assert!(
        kubectl.grace.values().all(Option::is_none),
        "{}",
        kubectl.text
    );
}

#[test]
fn a_selector_that_leaves_the_bare_pod_out_needs_no_force() {
    let (kubectl, _) = compare_selecting(
        &["--ignore-daemonsets", "--delete-emptydir-data"],
        "!kubevirt.io,run!=debug-shell",
    );
    assert!(kubectl.success, "{}", kubectl.text);
    assert_eq!(
        kubectl.deleted,
        set(&[
            "prod/cache-6b8d9c7f4-q9w2e",
            "prod/frontend-7d9f8b6c5d-x2x9q"
        ]),
        "{}",
        kubectl.text
    );
}

#[test]
fn a_selector_of_one_app_evicts_only_its_pod_and_ignores_the_other_refusals() {
    // Neither --ignore-daemonsets nor --delete-emptydir-data nor --force: the selected pod
    // needs none of them.
    let (kubectl, _) = compare_selecting(&[], "!kubevirt.io,app=frontend");
    assert!(kubectl.success, "{}", kubectl.text);
    assert_eq!(
        kubectl.deleted,
        set(&["prod/frontend-7d9f8b6c5d-x2x9q"]),
        "{}",
        kubectl.text
    );
    assert!(kubectl.warnings.is_empty(), "{}", kubectl.text);
}

#[test]
fn without_ignore_daemonsets_only_the_daemonset_pod_is_refused() {
    let (kubectl, _) = compare(&["--delete-emptydir-data", "--force"]);
    assert!(!kubectl.success, "{}", kubectl.text);
    assert!(kubectl.deleted.is_empty(), "{}", kubectl.text);
    let want = BTreeMap::from([(Rule::DaemonSet, set(&["kube-system/node-exporter-7xk2p"]))]);
    assert_eq!(kubectl.refusals, want, "{}", kubectl.text);
}

/// A pod on node-1 in `prod`, labelled `batch=done`, in `phase`, with no controller.
fn finished_pod(name: &str, phase: &str, empty_dir: bool) -> Value {
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "prod", "uid": format!("pod-{name}"),
            "labels": {"batch": "done"}},
        "spec": {"nodeName": "node-1", "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "registry.example/report:1"}]},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "False"}]}});
    if empty_dir {
        pod["spec"]["volumes"] = json!([{"name": "out", "emptyDir": {}}]);
    }
    pod
}

#[test]
fn finished_pods_need_neither_force_nor_delete_emptydir_data() {
    let extra = [
        finished_pod("report-1", "Succeeded", true),
        finished_pod("report-2", "Failed", false),
    ];
    let (kubectl, _) = compare_in(&extra, &DAEMONSETS, &[], "!kubevirt.io,batch=done");
    assert!(kubectl.success, "{}", kubectl.text);
    assert_eq!(
        kubectl.deleted,
        set(&["prod/report-1", "prod/report-2"]),
        "{}",
        kubectl.text
    );
}

#[test]
fn finished_pods_go_alongside_the_refusals_of_the_running_ones() {
    let extra = [finished_pod("report-1", "Succeeded", true)];
    let (kubectl, _) = compare_in(&extra, &DAEMONSETS, &[], NOT_VMS);
    assert!(!kubectl.success, "{}", kubectl.text);
    assert!(kubectl.deleted.is_empty(), "{}", kubectl.text);
    assert_eq!(kubectl.refusals.len(), 3, "{}", kubectl.text);
    assert!(
        kubectl
            .refusals
            .values()
            .flatten()
            .all(|p| p != "prod/report-1"),
        "{}",
        kubectl.text
    );
}

/// A DaemonSet pod whose DaemonSet is gone. kubectl's `daemonSetFilter`
/// (pkg/drain/filters.go) GETs the DaemonSet; on NotFound it refuses the pod
/// (`daemonsets.apps "node-exporter" not found`) unless `--force`, and with `--force` it
/// evicts the pod, even with `--ignore-daemonsets`. vmctl reads the DaemonSets the same way.
#[test]
fn an_orphaned_daemonset_pod_is_treated_as_kubectl_does() {
    for flags in [
        &["--ignore-daemonsets", "--delete-emptydir-data", "--force"][..],
        &["--ignore-daemonsets", "--delete-emptydir-data"][..],
    ] {
        // Only virt-handler's DaemonSet exists: node-exporter-7xk2p is an orphan.
        compare_in(
            &[],
            &["kubevirt/virt-handler"],
            flags,
            "!kubevirt.io,run!=debug-shell",
        );
    }
}

/// The one difference on purpose: kubectl's `RunDrain` (pkg/cmd/drain/drain.go) calls
/// `RunCordonOrUncordon(true)` before `deleteOrEvictPodsSimple` lists and filters the pods,
/// so a drain its filters refuse leaves the node cordoned (exit 1, `node/node-1 cordoned`);
/// vmctl checks everything first and refuses before changing anything ("not drained:
/// nothing was changed on node-1"). Both refuse the same pods.
#[test]
fn a_refused_drain_cordons_with_kubectl_and_changes_nothing_with_vmctl() {
    for flags in [
        &[][..],
        &["--ignore-daemonsets", "--delete-emptydir-data"][..],
    ] {
        let (kubectl, vmctl) = compare(flags);
        assert!(
            !kubectl.success && !vmctl.success,
            "{}\n{}",
            kubectl.text,
            vmctl.text
        );
        assert!(
            kubectl.cordoned && !vmctl.cordoned,
            "node-1 cordoned\n=== kubectl\n{}\n=== vmctl\n{}",
            kubectl.text,
            vmctl.text
        );
    }
}

/// kubectl's `GetPodsForDeletion` (pkg/drain/drain.go) runs the filters in turn with
/// `status = filter(pod)` while `status.delete` holds, so the `Okay` of
/// `unreplicatedFilter` (the pod has a controller) overwrites the warning
/// `localStorageFilter` gave `prod/cache-6b8d9c7f4-q9w2e`: neither prints "deleting Pods
/// with local storage" for it. Both evict the pod.
#[test]
fn the_emptydir_warning_is_printed_as_kubectl_does() {
    let (kubectl, vmctl) = compare(&["--ignore-daemonsets", "--delete-emptydir-data", "--force"]);
    assert_eq!(
        kubectl.warnings, vmctl.warnings,
        "=== kubectl\n{}\n=== vmctl\n{}",
        kubectl.text, vmctl.text
    );
}
