//! Incident drill (issue 33): a drain of node-1 where one VM is in post-copy *into* it
//! (`mail-01`, source node-2), one must be shut down (`scratch-01`, the question answered on
//! the terminal), one fails and KubeVirt retries it after its backoff (`web-01`), one is
//! blocked (`db-01`, not live-migratable), and one only left an old finished pod on the
//! node (`app-01`, never on node-1). It runs on the fake API server with the scripted
//! KubeVirt (`support::kubevirt_sim`), on a real pseudo-terminal (tmux, as a person sees it)
//! and piped (plain and `-o json`). After each run every claim vmctl made (moved, came onto,
//! waiting for, failed, held by the backoff, shut down, blocked, cordoned, the counts and
//! the result) is parsed from its output and compared, by program, with the API server's
//! final state (and its recorded requests).
//!
//! The tmux case is skipped (with a message) when tmux is missing, unless
//! `VMCTL_REQUIRE_TMUX=1` (CI) makes that a failure.

mod common;
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;
use support::kubevirt_sim::{
    self, DrainFixture, INCOMING_TARGET_POD, INCOMING_VMIM, KubeVirtSim, Script,
};
use support::tmux::{self, Tmux};
use support::{FakeApiServer, Method};
use vmctl::cluster::Kind;

const NODE: &str = "node-1";
const FAILING: &str = "web-01";

struct Lab {
    server: Arc<FakeApiServer>,
    _sim: KubeVirtSim,
    _dir: tempfile::TempDir,
    kubeconfig: String,
    /// The pods the drain removes, as the cluster had them before it began: on node-1, not
    /// DaemonSet-managed, not a mirror pod.
    drain_pods: BTreeSet<String>,
    /// The VMIs running on node-1 before the drain (by status.nodeName).
    on_node_at_start: BTreeSet<String>,
}

fn lab() -> Lab {
    let fixture = DrainFixture {
        blocker: true,
        incoming_post_copy: true,
        old_finished_pod: true,
        ..DrainFixture::default()
    };
    let server = Arc::new(FakeApiServer::start_blocking(
        kubevirt_sim::drain_cluster_with(&fixture),
    ));
    let drain_pods = server
        .objects(Kind::Pod)
        .into_iter()
        .filter(|p| p["spec"]["nodeName"] == NODE)
        .filter(|p| {
            !p["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|o| {
                    o.iter()
                        .any(|o| o["kind"] == "DaemonSet" || o["kind"] == "Node")
                })
        })
        .map(|p| name(&p))
        .collect();
    let on_node_at_start = server
        .objects(Kind::VirtualMachineInstance)
        .into_iter()
        .filter(|v| v["status"]["nodeName"] == NODE)
        .map(|v| name(&v))
        .collect();
    let sim = KubeVirtSim::start(
        &server,
        Script {
            phase_ticks: 3,
            running_ticks: 8,
            // web-01's first evacuation fails; KubeVirt holds the next one for its backoff,
            // 20 s as the real one (200 ticks of at least 100 ms: never shorter).
            evacuation_failures: 1,
            evacuation_failures_for: Some(FAILING),
            evacuation_backoff_ticks: 200,
            ..Script::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path()).display().to_string();
    Lab {
        server,
        _sim: sim,
        _dir: dir,
        kubeconfig,
        drain_pods,
        on_node_at_start,
    }
}

fn name(v: &Value) -> String {
    v["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn drain_args(lab: &Lab, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "--kubeconfig",
        &lab.kubeconfig,
        "drain",
        NODE,
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--force-partial",
        "--timeout",
        "180s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Releases the post-copy migration into node-1 once vmctl has asked to evict its target
/// pod (and been told it is one), a second later: the drain has seen it and said so.
fn release_after_the_target_pod_is_asked(lab: &Lab) -> std::thread::JoinHandle<()> {
    let server = Arc::clone(&lab.server);
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline
            && server.count_requests(|r| {
                r.method == Method::POST
                    && r.path
                        .ends_with(&format!("/pods/{INCOMING_TARGET_POD}/eviction"))
            }) == 0
        {
            std::thread::sleep(Duration::from_millis(100));
        }
        std::thread::sleep(Duration::from_secs(2));
        kubevirt_sim::release_incoming(&server);
    })
}

/// What vmctl said, in one shape for the text and the JSON output.
#[derive(Debug, Default)]
struct Claims {
    cordoned: Vec<String>,
    /// (vmi, from, to, migration, attempt)
    moved: Vec<(String, String, String, Option<String>, u32)>,
    /// (vmi, from, to) from the summary.
    summary_moved: Vec<(String, String, String)>,
    /// (vmi, node, migration)
    arrived: Vec<(String, String, Option<String>)>,
    /// (vmi, migration, reason)
    failed: Vec<(String, String, String)>,
    /// (vmi, migration, HH:MM:SS)
    backoff: Vec<(String, String, String)>,
    /// (pod, vmi, migration) a target pod of a post-copy migration into node-1.
    waiting_target: Vec<(String, String, String)>,
    /// (pod, vmi, migration) any other wait naming a migration.
    waiting_migration: Vec<(String, String, String)>,
    /// (vmi, back on)
    stopped: Vec<(String, Option<String>)>,
    /// (vmi, reason)
    blocked: Vec<(String, String)>,
    /// The summary's numbers: vms moved, vms total, shut down, blocked, migrations in
    /// flight, evictions accepted, pods gone, pods total.
    counts: Option<[usize; 8]>,
    result: String,
}

fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let rest = &s[s.find(start)? + start.len()..];
    Some(rest.find(end).map_or(rest, |i| &rest[..i]))
}

fn word_after<'a>(s: &'a str, start: &str) -> Option<&'a str> {
    let rest = &s[s.find(start)? + start.len()..];
    rest.split([' ', ',', ')', ':']).next()
}

/// The claims of the plain-text output (a pane's history, or piped stdout).
fn text_claims(text: &str) -> Claims {
    let mut c = Claims::default();
    let mut in_summary_moved = false;
    for raw in text.lines() {
        let line = raw.trim_end();
        // An event line: `[HH:MM:SS] ...`.
        let ev = line
            .strip_prefix('[')
            .and_then(|l| l.get(9..))
            .map(str::trim_start)
            .filter(|_| line.get(9..11) == Some("] "));
        // On a terminal a long event line is wrapped at words under its `[HH:MM:SS] `
        // (render::prose); the pane's history joins the rows indicatif wrote padded to the
        // width, the padding and the indent in the middle: the words are the claim.
        let words = ev.map(|e| e.split_whitespace().collect::<Vec<_>>().join(" "));
        let ev = words.as_deref();
        if let Some(e) = ev {
            if let Some(n) = between(e, "node/", " cordoned").filter(|_| e.ends_with("cordoned")) {
                c.cordoned.push(n.to_string());
            }
            if let Some(rest) = e.strip_prefix("vm prod/") {
                let vmi = rest
                    .split([' ', ':'])
                    .next()
                    .unwrap_or_default()
                    .to_string();
                if let Some(m) = between(rest, " moved ", " (")
                    .or_else(|| rest.split_once(" moved ").map(|x| x.1))
                {
                    let (from, to) = m.split_once(" → ").unwrap_or((m, ""));
                    let migration = word_after(rest, "(migration ").map(str::to_string);
                    let attempt = word_after(rest, "attempt ")
                        .and_then(|a| a.parse().ok())
                        .unwrap_or(1);
                    c.moved.push((
                        vmi.clone(),
                        from.to_string(),
                        to.to_string(),
                        migration,
                        attempt,
                    ));
                }
                if let Some(node) = word_after(rest, " came onto ") {
                    c.arrived.push((
                        vmi.clone(),
                        node.to_string(),
                        word_after(rest, " by migration ").map(str::to_string),
                    ));
                }
                if let Some((m, reason)) = rest
                    .split_once(": migration ")
                    .and_then(|(_, r)| r.split_once(" failed: "))
                    .filter(|(m, _)| !m.contains(' '))
                {
                    c.failed
                        .push((vmi.clone(), m.to_string(), reason.to_string()));
                }
                if let Some(t) = word_after(rest, "held by KubeVirt's backoff until ") {
                    let m = word_after(rest, ": migration ").unwrap_or_default();
                    c.backoff.push((vmi.clone(), m.to_string(), t.to_string()));
                }
                if rest.contains(" shut down") {
                    c.stopped.push((
                        vmi.clone(),
                        word_after(rest, "started it again on ").map(str::to_string),
                    ));
                }
                if let Some(reason) = between(rest, " blocks the drain: ", ":") {
                    c.blocked.push((vmi.clone(), reason.to_string()));
                }
            }
        }
        // A wait, in a progress block or the summary.
        if let Some(w) = ev
            .unwrap_or(line)
            .trim_start()
            .strip_prefix("waiting for pod prod/")
        {
            let pod = w.split(' ').next().unwrap_or_default().to_string();
            let vmi = between(w, "(vm ", ")").unwrap_or_default().to_string();
            if let Some(m) = word_after(w, "target pod of post-copy migration ") {
                assert!(
                    w.contains(&format!("{m} into {NODE} (node-2 → {NODE})")),
                    "{line}"
                );
                c.waiting_target.push((pod, vmi, m.to_string()));
            } else if let Some(m) = [
                ", migration ",
                "target pod of migration ",
                "source pod of migration ",
                "): migration ",
            ]
            .iter()
            .find_map(|p| word_after(w, p))
            {
                c.waiting_migration.push((pod, vmi, m.to_string()));
            }
            continue;
        }
        // The summary.
        if ev.is_none() {
            let t = line.trim_start();
            if t.starts_with("moved (") {
                in_summary_moved = true;
                continue;
            }
            if in_summary_moved && line.starts_with("    prod/") {
                let rest = &t["prod/".len()..];
                let mut parts = rest.split(' ');
                let vmi = parts.next().unwrap_or_default();
                let from = parts.next().unwrap_or_default();
                let to = parts.nth(1).unwrap_or_default();
                c.summary_moved
                    .push((vmi.to_string(), from.to_string(), to.to_string()));
                continue;
            }
            in_summary_moved = false;
            if t.contains(" VMs moved") && t.contains(" pods gone") && line.starts_with("  ") {
                c.counts = Some(counts_of(t));
            }
            for result in ["blocked: ", "node/node-1 drained", "--timeout reached"] {
                if line.starts_with(result) {
                    c.result = line.to_string();
                }
            }
        }
    }
    c
}

/// `3 of 5 VMs moved, 1 shut down, 1 blocked · 0 migrations in flight · 7 evictions
/// accepted · 7 of 8 pods gone`.
fn counts_of(t: &str) -> [usize; 8] {
    let num = |s: Option<&str>| {
        s.and_then(|s| s.trim().parse::<usize>().ok())
            .unwrap_or(usize::MAX)
    };
    let moved = num(t.split(" of ").next());
    let total = num(between(t, " of ", " VMs"));
    let stopped = t
        .split(", ")
        .find(|p| p.ends_with("shut down") || p.contains(" shut down"))
        .map_or(0, |p| num(p.split(' ').next()));
    let blocked = t
        .split(", ")
        .find_map(|p| p.split(" · ").next().filter(|p| p.ends_with(" blocked")))
        .map_or(0, |p| num(p.split(' ').next()));
    let parts: Vec<&str> = t.split(" · ").collect();
    let in_flight = num(parts.get(1).and_then(|p| p.split(' ').next()));
    let accepted = num(parts.get(2).and_then(|p| p.split(' ').next()));
    let gone = num(parts.get(3).and_then(|p| p.split(' ').next()));
    let pods = num(parts.get(3).and_then(|p| between(p, " of ", " pods")));
    [
        moved, total, stopped, blocked, in_flight, accepted, gone, pods,
    ]
}

fn s(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// The claims of `-o json` (one DrainEvent per line).
fn json_claims(out: &str) -> Claims {
    let mut c = Claims::default();
    for line in out.lines() {
        let e: Value = serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}"));
        assert_eq!(e["kind"], "DrainEvent", "{line}");
        match e["type"].as_str().unwrap_or_default() {
            "cordoned" => c.cordoned.push(s(&e["node"])),
            "moved" => c.moved.push((
                s(&e["vmi"]),
                s(&e["from"]),
                s(&e["to"]),
                e["migration"].as_str().map(str::to_string),
                e["attempt"].as_u64().unwrap_or(0) as u32,
            )),
            "arrived" => c.arrived.push((
                s(&e["vmi"]),
                s(&e["node"]),
                e["migration"].as_str().map(str::to_string),
            )),
            "migration-failed" => {
                c.failed
                    .push((s(&e["vmi"]), s(&e["migration"]), s(&e["reason"])))
            }
            "migration" => {
                if let Some(t) = e["backoffUntil"].as_str() {
                    c.backoff.push((
                        s(&e["vmi"]),
                        s(&e["migration"]),
                        t.get(11..19).unwrap_or(t).to_string(),
                    ));
                }
            }
            "progress" => {
                for w in e["waitingFor"].as_array().into_iter().flatten() {
                    let Some(m) = w["migration"].as_str() else {
                        continue;
                    };
                    let claim = (s(&w["pod"]), s(&w["vmi"]), m.to_string());
                    if w["reason"] == "target-pod"
                        && s(&w["message"]).starts_with("target pod of post-copy")
                    {
                        assert!(
                            s(&w["message"]).contains(&format!(
                                "post-copy migration {m} into {NODE} (node-2 → {NODE})"
                            )),
                            "{line}"
                        );
                        c.waiting_target.push(claim);
                    } else {
                        c.waiting_migration.push(claim);
                    }
                }
            }
            "stopped" => c
                .stopped
                .push((s(&e["vmi"]), e["backOn"].as_str().map(str::to_string))),
            "blocked" => c.blocked.push((s(&e["vmi"]), s(&e["reason"]))),
            "summary" => {
                for m in e["moved"].as_array().into_iter().flatten() {
                    c.summary_moved
                        .push((s(&m["vmi"]), s(&m["from"]), s(&m["to"])));
                }
                let n = |k: &str| e[k].as_u64().map_or(usize::MAX, |v| v as usize);
                c.counts = Some([
                    n("vmsMoved"),
                    n("vmsTotal"),
                    n("vmsStopped"),
                    n("vmsBlocked"),
                    n("migrationsInFlight"),
                    n("evictionsAccepted"),
                    n("podsGone"),
                    n("podsTotal"),
                ]);
                c.result = s(&e["result"]);
                // Blocked: only the blocker is left, nothing is still waited for.
                assert_eq!(e["waitingFor"], serde_json::json!([]), "{line}");
            }
            _ => {}
        }
    }
    c
}

/// Every claim against the API server's final state.
fn check(lab: &Lab, c: &Claims, output: &str) {
    let server = &lab.server;
    let vmi = |n: &str| server.object(Kind::VirtualMachineInstance, Some("prod"), n);
    let vmim = |n: &str| server.object(Kind::VirtualMachineInstanceMigration, Some("prod"), n);
    let vmims_of = |v: &str| -> Vec<Value> {
        let mut all: Vec<Value> = server
            .objects(Kind::VirtualMachineInstanceMigration)
            .into_iter()
            .filter(|m| m["spec"]["vmiName"] == v)
            .collect();
        all.sort_by_key(|m| (s(&m["metadata"]["creationTimestamp"]), name(m)));
        all
    };
    let ctx = |what: &str| format!("{what}\n--- claims\n{c:#?}\n--- output\n{output}");

    // Cordoned: node-1 is.
    assert_eq!(c.cordoned, [NODE], "{}", ctx("cordon"));
    let node = server.object(Kind::Node, None, NODE).unwrap();
    assert_eq!(node["spec"]["unschedulable"], true);

    // Came onto node-1: mail-01, by the post-copy migration that was held.
    assert_eq!(
        c.arrived,
        [(
            "mail-01".to_string(),
            NODE.to_string(),
            Some(INCOMING_VMIM.to_string())
        )],
        "{}",
        ctx("arrived")
    );
    let incoming = vmim(INCOMING_VMIM).unwrap();
    assert_eq!(incoming["status"]["phase"], "Succeeded");
    assert_eq!(incoming["status"]["migrationState"]["targetNode"], NODE);

    // Moved: each VMI was on node-1 when the drain began (or came onto it, said before),
    // now runs elsewhere, by the named migration, which succeeded, at the attempt claimed.
    let moved: BTreeSet<&str> = c.moved.iter().map(|m| m.0.as_str()).collect();
    assert_eq!(
        moved,
        BTreeSet::from(["batch-01", "mail-01", "web-01"]),
        "{}",
        ctx("moved")
    );
    for (v, from, to, migration, attempt) in &c.moved {
        let was_there = lab.on_node_at_start.contains(v)
            || c.arrived.iter().any(|(a, n, _)| a == v && n == from);
        assert!(
            was_there && from == NODE,
            "{}",
            ctx(&format!("{v} moved from {from}"))
        );
        let now = vmi(v).unwrap();
        assert_eq!(now["status"]["nodeName"], to.as_str(), "{}", ctx(v));
        assert_ne!(to, NODE);
        let m = migration.as_deref().unwrap_or_else(|| panic!("{}", ctx(v)));
        let obj = vmim(m).unwrap();
        assert_eq!(obj["spec"]["vmiName"], v.as_str());
        assert_eq!(obj["status"]["phase"], "Succeeded", "{}", ctx(m));
        assert_eq!(obj["status"]["migrationState"]["targetNode"], to.as_str());
        // The attempt: its place among the VMI's evacuation migrations, the drain's only.
        let chain: Vec<String> = vmims_of(v)
            .iter()
            .filter(|x| x["metadata"]["annotations"]["kubevirt.io/evacuationMigration"].is_string())
            .map(name)
            .collect();
        let place = chain.iter().position(|x| x == m).map(|i| i as u32 + 1);
        assert_eq!(Some(*attempt), place, "{}", ctx(&format!("{v}: {chain:?}")));
    }
    // app-01 only left an old pod: never said to move, and nothing moved from nowhere.
    assert!(!c.moved.iter().any(|m| m.0 == "app-01" || m.1.is_empty()));
    // The retried VM moved at attempt 2 (its first failed).
    assert!(
        c.moved.iter().any(|m| m.0 == FAILING && m.4 == 2),
        "{}",
        ctx("retry")
    );
    // The summary says the same moves as the events.
    let mut events: Vec<(String, String, String)> = c
        .moved
        .iter()
        .map(|m| (m.0.clone(), m.1.clone(), m.2.clone()))
        .collect();
    let mut summary = c.summary_moved.clone();
    events.sort();
    summary.sort();
    assert_eq!(events, summary, "{}", ctx("summary moves"));

    // Failed: web-01's first evacuation, with the reason the VMIM records.
    assert_eq!(c.failed.len(), 1, "{}", ctx("failed"));
    let (v, m, reason) = &c.failed[0];
    assert_eq!(v, FAILING);
    let obj = vmim(m).unwrap();
    assert_eq!(obj["spec"]["vmiName"], FAILING);
    assert_eq!(obj["status"]["phase"], "Failed");
    assert_eq!(
        obj["status"]["migrationState"]["failureReason"].as_str(),
        Some(reason.as_str()),
        "{}",
        ctx("failure reason")
    );

    // Held by the backoff until T: KubeVirt did not start it before T.
    assert!(!c.backoff.is_empty(), "{}", ctx("backoff claimed"));
    for (v, m, until) in &c.backoff {
        let obj = vmim(m).unwrap();
        assert_eq!(obj["spec"]["vmiName"], v.as_str());
        let left_pending = obj["status"]["phaseTransitionTimestamps"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["phase"] != "Pending")
            .map(|t| s(&t["phaseTransitionTimestamp"]))
            .unwrap_or_else(|| panic!("{}", ctx(m)));
        assert!(
            left_pending.get(11..19).unwrap_or_default() >= until.as_str(),
            "{}",
            ctx(&format!(
                "{m} left Pending at {left_pending}, before {until}"
            ))
        );
    }

    // Waiting for the target pod of the post-copy migration into node-1: it was that.
    assert!(
        c.waiting_target
            .iter()
            .any(|w| w.0 == INCOMING_TARGET_POD && w.1 == "mail-01" && w.2 == INCOMING_VMIM),
        "{}",
        ctx("waiting for the target pod")
    );
    for (pod, v, m) in c.waiting_target.iter().chain(&c.waiting_migration) {
        let obj = vmim(m).unwrap_or_else(|| panic!("{}", ctx(m)));
        assert_eq!(obj["spec"]["vmiName"], v.as_str(), "{}", ctx(m));
        if c.waiting_target.iter().any(|w| &w.2 == m && &w.0 == pod) {
            assert_eq!(obj["status"]["migrationState"]["targetPod"], pod.as_str());
            assert_eq!(obj["status"]["migrationState"]["sourceNode"], "node-2");
            assert_eq!(obj["status"]["migrationState"]["mode"], "PostCopy");
        }
    }

    // Shut down: scratch-01's VMI was replaced by a new one, on the node said.
    assert_eq!(c.stopped.len(), 1, "{}", ctx("stopped"));
    let (v, back_on) = &c.stopped[0];
    assert_eq!(v, "scratch-01");
    let now = vmi(v).unwrap();
    assert_ne!(now["metadata"]["uid"], "uid-scratch-01");
    if let Some(node) = back_on {
        assert_eq!(
            now["status"]["nodeName"],
            node.as_str(),
            "{}",
            ctx("back on")
        );
    }

    // Blocked: db-01, not live-migratable, still on node-1 with its pod.
    assert_eq!(
        c.blocked,
        [("db-01".to_string(), "not-live-migratable".to_string())],
        "{}",
        ctx("blocked")
    );
    assert_eq!(vmi("db-01").unwrap()["status"]["nodeName"], NODE);

    // The numbers.
    let on_node_now: BTreeSet<String> = server
        .objects(Kind::Pod)
        .into_iter()
        .filter(|p| p["spec"]["nodeName"] == NODE)
        .map(|p| name(&p))
        .filter(|p| lab.drain_pods.contains(p))
        .collect();
    assert_eq!(
        on_node_now,
        BTreeSet::from(["virt-launcher-db-01-abcde".to_string()])
    );
    // Every pod that left was evicted by an accepted eviction (the fake API server deletes
    // on acceptance), once each; the blocked one never was.
    let gone = lab.drain_pods.len() - on_node_now.len();
    let vms_total = lab.on_node_at_start.len() + c.arrived.len();
    let want = [
        moved.len(),
        vms_total,
        1,
        1,
        0,
        gone,
        gone,
        lab.drain_pods.len(),
    ];
    assert_eq!(c.counts, Some(want), "{}", ctx("counts"));
    // The result.
    assert!(
        c.result == "blocked"
            || c.result
                .starts_with("blocked: node-1 not drained, 1 pod left"),
        "{}",
        ctx("result")
    );
    // vmctl wrote only the cordon and evictions.
    for r in server.requests().iter().filter(|r| r.method != Method::GET) {
        assert!(
            (r.method == Method::PATCH && r.path == "/api/v1/nodes/node-1")
                || (r.method == Method::POST && r.path.ends_with("/eviction")),
            "unexpected write {}",
            r.line()
        );
    }
}

fn piped(lab: &Lab, extra: &[&str]) -> Output {
    let release = release_after_the_target_pod_is_asked(lab);
    let out = Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(drain_args(lab, extra))
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .env("VMCTL_JOURNAL", "off")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    release.join().unwrap();
    out
}

#[test]
fn drill_piped_plain() {
    let lab = lab();
    // No terminal to ask on: refused, naming the flag, nothing changed.
    let out = Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(drain_args(&lab, &[]))
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .env("VMCTL_JOURNAL", "off")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    let o = stdout(&out);
    assert!(
        o.contains("no terminal to ask on") && o.contains("pass --allow-shutdowns"),
        "{o}"
    );
    assert!(
        !lab.server
            .requests()
            .iter()
            .any(|r| r.method != Method::GET)
    );

    let out = piped(&lab, &["--allow-shutdowns"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    // Off a terminal no control sequence and no ETA.
    assert!(!text.contains('\u{1b}') && !text.contains("ETA"), "{text}");
    // A line per change off a terminal: a pod waited for is said when the wait begins or
    // its reason changes, never the whole list again on every change of the numbers; the
    // 30 s repeat is one short line.
    let events: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with('[') && l.get(9..11) == Some("] "))
        .collect();
    let waits: Vec<&str> = events
        .iter()
        .filter_map(|l| l.get(11..))
        .filter(|l| l.trim_start().starts_with("waiting for pod "))
        .collect();
    let mut said = BTreeMap::<&str, usize>::new();
    for w in &waits {
        *said.entry(w).or_default() += 1;
    }
    let again: Vec<_> = said.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        again.is_empty(),
        "waits said again unchanged: {again:#?}\n{text}"
    );
    assert!(
        waits.len() <= 5 * lab.drain_pods.len(),
        "{} wait lines for {} pods:\n{text}",
        waits.len(),
        lab.drain_pods.len()
    );
    assert!(
        text.lines().count() <= 170,
        "{} lines for {} pods:\n{text}",
        text.lines().count(),
        lab.drain_pods.len()
    );
    for l in events.iter().filter(|l| l.contains("still waiting for ")) {
        assert!(l.chars().count() <= 11 + 160, "{l}");
    }
    eprintln!(
        "piped drain: {} lines, {} event lines, {} wait lines",
        text.lines().count(),
        events.len(),
        waits.len()
    );
    check(&lab, &text_claims(&text), &text);
}

#[test]
fn drill_piped_json() {
    let lab = lab();
    let out = piped(&lab, &["--allow-shutdowns", "-o", "json"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    check(&lab, &json_claims(&text), &text);
}

// ---- tmux: the drain on a terminal, the question answered with send-keys

/// The drill's terminal: `width` columns, colour off, no journal.
fn terminal(width: u16) -> Tmux {
    Tmux::start(
        &format!("drill-drain-{width}"),
        width,
        50,
        &["NO_COLOR=1", "VMCTL_JOURNAL=off"],
    )
}

/// The last line of the screen with something on it.
fn last_line(screen: &str) -> &str {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
}

#[test]
fn drill_on_a_terminal_the_question_is_seen_and_answered() {
    if !tmux::available() {
        return;
    }
    let lab = lab();
    let t = terminal(200);
    let args: Vec<String> = drain_args(&lab, &[])
        .into_iter()
        .map(|a| format!("'{a}'"))
        .collect();
    let line = format!(
        "{} {}; echo \"ex\"\"it=$?\"",
        env!("CARGO_BIN_EXE_vmctl"),
        args.join(" ")
    );
    t.send(&[&line, "Enter"]);
    // The question is on the screen, and stays there while vmctl waits for the answer:
    // nothing draws over it (a spinner erased it: issue 33 §1).
    t.wait_for_within("the question", Duration::from_secs(60), |s| {
        last_line(s).starts_with("shut them down? [y/N]")
    });
    for _ in 0..15 {
        std::thread::sleep(Duration::from_millis(100));
        let s = t.screen();
        assert!(
            last_line(&s).starts_with("shut them down? [y/N]"),
            "the question was drawn over:\n{s}"
        );
        assert!(s.contains("prod/scratch-01 (shutdown)"), "{s}");
    }
    // Nothing happened to the cluster while it asked.
    assert!(
        !lab.server
            .requests()
            .iter()
            .any(|r| r.method != Method::GET)
    );
    t.send(&["y", "Enter"]);
    // The drain proceeds; the live view names what it waits for: the target pod.
    let history_has = |what: &str| {
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let h = t.history();
            if h.contains(what) {
                return h;
            }
            assert!(Instant::now() < deadline, "never saw {what}:\n{h}");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    history_has("node/node-1 cordoned");
    history_has(&format!(
        "waiting for pod prod/{INCOMING_TARGET_POD} (vm mail-01): target pod of post-copy migration {INCOMING_VMIM}"
    ));
    // The live line while the drain runs: numbers, what it waits for, no ETA, no empty bar.
    let live = t.screen();
    assert!(
        !live.contains("ETA") && !live.contains("0 B of 0 B"),
        "{live}"
    );
    kubevirt_sim::release_incoming(&lab.server);
    let done = Arc::new(AtomicBool::new(false));
    let mut seen_bad = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(240);
    while !done.load(Ordering::SeqCst) {
        let s = t.screen();
        if s.contains("ETA") || s.contains("0 B of 0 B") {
            seen_bad.push(s.clone());
        }
        if s.contains("exit=") {
            done.store(true, Ordering::SeqCst);
        }
        assert!(
            Instant::now() < deadline,
            "the drain never ended:\n{}",
            t.history()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(seen_bad.is_empty(), "{}", seen_bad.join("\n----\n"));
    let h = t.history();
    assert!(h.contains("exit=1"), "{h}");
    check(&lab, &text_claims(&h), &h);
}

/// The drill's cluster for a person to try `vmctl drain` on by hand:
/// `VMCTL_DRILL_KUBECONFIG=/tmp/drill.kubeconfig cargo test --test drill_drain -- --ignored
/// --nocapture drill_cluster_for_a_person`, then `vmctl --kubeconfig /tmp/drill.kubeconfig
/// drain node-1 --ignore-daemonsets --delete-emptydir-data --force-partial` on a terminal.
/// The post-copy migration into node-1 ends 2 s after its target pod's eviction is asked;
/// the cluster stays up for `VMCTL_DRILL_SECONDS` (600).
#[test]
#[ignore]
fn drill_cluster_for_a_person() {
    let lab = lab();
    let path = std::env::var("VMCTL_DRILL_KUBECONFIG")
        .unwrap_or_else(|_| "/tmp/drill.kubeconfig".to_string());
    std::fs::copy(&lab.kubeconfig, &path).unwrap();
    eprintln!("kubeconfig: {path}");
    let _release = release_after_the_target_pod_is_asked(&lab);
    let secs = std::env::var("VMCTL_DRILL_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    std::thread::sleep(Duration::from_secs(secs));
}
