//! Issue 33's drill for `vmctl record` ("The guard"): a night of recording on the fake API
//! server with the migration simulator. Migrations succeed and fail for several causes; some
//! end and are deleted while the recorder is stopped (the restart replays the migration watch
//! from its bookmark). Every claim the journal then makes is checked by program against what
//! the cluster said: `explain -o json`, run live on each migration before it was deleted
//! (cause, plane, confidence, outcome, nodes), and the objects' own times of the end. Then
//! `history -A`, `history node/NAME -A`, `history --cause C -A` and `explain` of the deleted
//! migrations (from the journal) must give exactly those answers.

mod common;
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{both, vmctl};
use serde_json::{Value, json};
use support::FakeApiServer;
use support::kubevirt_sim::{self, KubeVirtSim, Script};
use support::recorder::{Recorder, WAIT, fast};
use vmctl::cluster::Kind;

/// What the cluster said of one migration while it existed, once it was final.
#[derive(Debug, Clone)]
struct Truth {
    /// `explain -o json` live: cause, plane, confidence, outcome.
    verdict: (String, String, String, String),
    source_node: Option<String>,
    target_node: Option<String>,
    /// The end the objects give: the VMI's migrationState.endTimestamp for this migration,
    /// else the VMIM's phaseTransitionTimestamps entry of its final phase.
    end: Option<String>,
    deleted: bool,
}

struct Night {
    server: Arc<FakeApiServer>,
    sim: KubeVirtSim,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    truth: BTreeMap<String, Truth>,
}

fn verdict(doc: &Value) -> (String, String, String, String) {
    let s = |k: &str| doc[k].as_str().unwrap_or("").to_string();
    (s("cause"), s("plane"), s("confidence"), s("outcome"))
}

impl Night {
    fn journal(&self) -> PathBuf {
        self.dir.path().join("night.sqlite")
    }

    fn vmim(&self, name: &str) -> Option<Value> {
        self.server
            .object(Kind::VirtualMachineInstanceMigration, Some("prod"), name)
    }

    /// A migration of `vmi` under `script`, followed to its end; then what explain says of it
    /// live and what its objects say of its end are kept.
    fn migrate(&mut self, name: &str, vmi: &str, script: Script) {
        self.sim.set_script(script);
        self.server
            .add_object(json!({"apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachineInstanceMigration",
            "metadata": {"name": name, "namespace": "prod",
                "creationTimestamp": kubevirt_sim::now()},
            "spec": {"vmiName": vmi}}));
        let deadline = Instant::now() + WAIT;
        let vmim = loop {
            let m = self.vmim(name).unwrap();
            if matches!(
                m.pointer("/status/phase").and_then(Value::as_str),
                Some("Succeeded" | "Failed")
            ) {
                break m;
            }
            assert!(Instant::now() < deadline, "{name} never ended: {m:#}");
            std::thread::sleep(Duration::from_millis(50));
        };
        self.sim.set_script(fast());
        // Let the simulator's last writes (events, the VMI's state) land.
        std::thread::sleep(Duration::from_millis(300));
        let uid = vmim["metadata"]["uid"].as_str().unwrap().to_string();
        let phase = vmim["status"]["phase"].as_str().unwrap().to_string();
        let vmi_obj = self
            .server
            .object(Kind::VirtualMachineInstance, Some("prod"), vmi)
            .unwrap();
        let state = &vmi_obj["status"]["migrationState"];
        let own_state = state["migrationUid"] == json!(uid);
        let end = own_state
            .then(|| state["endTimestamp"].as_str().map(String::from))
            .flatten()
            .or_else(|| {
                vmim["status"]["phaseTransitionTimestamps"]
                    .as_array()?
                    .iter()
                    .rev()
                    .find(|t| t["phase"] == json!(phase))?["phaseTransitionTimestamp"]
                    .as_str()
                    .map(String::from)
            });
        let live = vmctl([
            "--kubeconfig",
            self.kubeconfig.to_str().unwrap(),
            "-n",
            "prod",
            "explain",
            &format!("migration/{name}"),
            "-o",
            "json",
        ]);
        let doc: Value = serde_json::from_slice(&live.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}\n{}", both(&live)));
        let node = |k: &str| doc["migration"][k].as_str().map(String::from);
        // The nodes explain names are the cluster's: the state's, when it has one.
        if own_state {
            assert_eq!(
                node("sourceNode"),
                state["sourceNode"].as_str().map(String::from)
            );
            assert_eq!(
                node("targetNode"),
                state["targetNode"].as_str().map(String::from)
            );
        }
        let truth = Truth {
            verdict: verdict(&doc),
            source_node: node("sourceNode"),
            target_node: node("targetNode"),
            end,
            deleted: false,
        };
        assert_eq!(
            truth.verdict.3,
            if phase == "Succeeded" {
                "succeeded"
            } else {
                "failed"
            },
            "{name}: {doc:#}"
        );
        self.truth.insert(name.to_string(), truth);
    }

    fn delete(&mut self, name: &str) {
        self.server
            .delete_object(Kind::VirtualMachineInstanceMigration, Some("prod"), name);
        assert!(self.vmim(name).is_none());
        self.truth.get_mut(name).unwrap().deleted = true;
    }

    /// A migration of `vmi` held in Running, then deleted without a finalizer: it vanishes
    /// with no end. Returns the nodes its VMI's migrationState named (source, target).
    fn vanish_while_running(&mut self, name: &str, vmi: &str) -> (Option<String>, Option<String>) {
        self.sim.set_script(Script {
            hold_running: true,
            ..fast()
        });
        self.server
            .add_object(json!({"apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachineInstanceMigration",
            "metadata": {"name": name, "namespace": "prod",
                "creationTimestamp": kubevirt_sim::now()},
            "spec": {"vmiName": vmi}}));
        let deadline = Instant::now() + WAIT;
        while self
            .vmim(name)
            .and_then(|m| m.pointer("/status/phase").cloned())
            != Some(json!("Running"))
        {
            assert!(Instant::now() < deadline, "{name} never ran");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        let state = self
            .server
            .object(Kind::VirtualMachineInstance, Some("prod"), vmi)
            .unwrap()["status"]["migrationState"]
            .clone();
        self.server
            .delete_object(Kind::VirtualMachineInstanceMigration, Some("prod"), name);
        self.sim.set_script(fast());
        let node = |k: &str| state[k].as_str().map(String::from);
        (node("sourceNode"), node("targetNode"))
    }

    /// `history … -o json` over the night's journal: the records' migration names.
    fn history(&self, args: &[&str]) -> Value {
        let journal = self.journal();
        let mut all = vec!["history", "--journal", journal.to_str().unwrap()];
        all.extend(["--since", "1d", "-o", "json"]);
        all.extend(args);
        let out = vmctl(&all);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{all:?}\n{}",
            both(&out)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", both(&out)))
    }
}

fn names(doc: &Value) -> BTreeSet<String> {
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["migration"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_night_of_record_then_history_and_explain_say_what_the_cluster_said() {
    let server = Arc::new(FakeApiServer::start_blocking(kubevirt_sim::cluster(
        "v1.8.4",
    )));
    let sim = KubeVirtSim::start(&server, fast());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let mut night = Night {
        server,
        sim,
        dir,
        kubeconfig,
        truth: BTreeMap::new(),
    };
    let unschedulable = Script {
        unschedulable: true,
        ..fast()
    };
    let stuck = Script {
        stuck: true,
        ..fast()
    };

    // Evening: the recorder watches three migrations end (one moves db-01 to node-2).
    let mut rec = Recorder::start(
        env!("CARGO_BIN_EXE_vmctl"),
        &night.kubeconfig,
        &night.journal().to_string_lossy(),
        &[],
    );
    night.migrate("mig-ok-1", "db-01", fast());
    rec.wait_recorded("mig-ok-1");
    night.migrate("mig-unsched-1", "batch-01", unschedulable.clone());
    rec.wait_recorded("mig-unsched-1");
    night.migrate("mig-stuck-1", "db-01", stuck.clone());
    rec.wait_recorded("mig-stuck-1");
    rec.stop();

    // Night: the recorder is down (a rollout); migrations fail and are deleted (KubeVirt
    // keeps five per VMI; an operator cleans up), one ends and stays.
    night.migrate("mig-unsched-2", "db-01", unschedulable);
    night.delete("mig-unsched-2");
    night.migrate("mig-stuck-2", "batch-01", stuck);
    night.delete("mig-stuck-2");
    night.migrate("mig-ok-2", "batch-01", fast());
    night.delete("mig-ok-2");
    // One deleted while it ran (no finalizer holds it): it vanishes before any end.
    let held = night.vanish_while_running("mig-held", "batch-01");
    night.migrate("mig-ok-3", "db-01", fast());

    // Morning: the restart replays the watch from its bookmark.
    let mut rec = Recorder::start(
        env!("CARGO_BIN_EXE_vmctl"),
        &night.kubeconfig,
        &night.journal().to_string_lossy(),
        &[],
    );
    for name in [
        "mig-unsched-2",
        "mig-stuck-2",
        "mig-ok-2",
        "mig-held",
        "mig-ok-3",
    ] {
        rec.wait_recorded(name);
    }
    rec.wait_for("the replay line", |r| {
        r.err().contains("replayed the migration watch")
    });
    rec.stop();
    eprintln!("what explain said live: {:#?}", night.truth);
    let causes: BTreeSet<&str> = night.truth.values().map(|t| t.verdict.0.as_str()).collect();
    assert!(
        causes.len() >= 3,
        "several causes: {causes:?} {:#?}",
        night.truth
    );
    assert!(
        causes.contains("target-pod-unschedulable"),
        "{:#?}",
        night.truth
    );

    // history -A: every migration once, with explain's live verdict, its nodes and the end
    // its objects gave.
    let all = night.history(&["-A"]);
    let mut expected: BTreeSet<String> = night.truth.keys().cloned().collect();
    expected.insert("mig-held".into());
    assert_eq!(names(&all), expected, "{all:#}");
    for r in all["records"].as_array().unwrap() {
        let name = r["migration"].as_str().unwrap();
        if name == "mig-held" {
            // Deleted before its end, unseen: aborted, the nodes it was last seen between,
            // and no end (no object says when): null, never the recorder's clock.
            assert_eq!(r["outcome"], "aborted", "{r:#}");
            assert_eq!(
                (
                    r["sourceNode"].as_str().map(String::from),
                    r["targetNode"].as_str().map(String::from)
                ),
                held,
                "{r:#}"
            );
            assert_eq!(r["endedAt"], Value::Null, "{r:#}");
            assert_eq!(r["ageSeconds"], Value::Null, "{r:#}");
            assert!(
                r["summary"]
                    .as_str()
                    .unwrap()
                    .contains("last seen in phase Running")
                    && r["summary"]
                        .as_str()
                        .unwrap()
                        .contains("its end is unknown"),
                "{r:#}"
            );
            continue;
        }
        let t = &night.truth[name];
        let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
        assert_eq!(
            (s("cause"), s("plane"), s("outcome")),
            (
                t.verdict.0.clone(),
                t.verdict.1.clone(),
                t.verdict.3.clone()
            ),
            "{name}: {r:#}"
        );
        assert_eq!(
            (
                r["sourceNode"].as_str().map(String::from),
                r["targetNode"].as_str().map(String::from)
            ),
            (t.source_node.clone(), t.target_node.clone()),
            "{name}: {r:#}"
        );
        assert_eq!(
            r["endedAt"].as_str().map(String::from),
            t.end,
            "{name}: the end is the objects'\n{r:#}"
        );
        assert!(t.end.is_some(), "{name}: every one here says its end");
    }
    let failed = night
        .truth
        .values()
        .filter(|t| t.verdict.3 == "failed")
        .count();
    assert_eq!(
        all["totals"]["count"],
        json!(night.truth.len() + 1),
        "{all:#}"
    );
    assert_eq!(all["totals"]["aborted"], json!(1), "{all:#}");
    // The table says so in words.
    let table = vmctl([
        "history",
        "--journal",
        night.journal().to_str().unwrap(),
        "--since",
        "1d",
        "-A",
    ]);
    let text = String::from_utf8_lossy(&table.stdout).to_string();
    let held_line = text
        .lines()
        .find(|l| l.contains("mig-held"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(held_line.starts_with("end unknown"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.contains(" ago ")).count(),
        night.truth.len(),
        "{text}"
    );
    assert_eq!(all["totals"]["failed"], json!(failed), "{all:#}");

    // The same table as a person sees it, on a terminal of 200 and of 80 columns.
    for width in ["200", "80"] {
        if let Some(screen) = on_a_terminal(
            width,
            &format!(
                "{} history --journal {} --since 1d -A",
                env!("CARGO_BIN_EXE_vmctl"),
                night.journal().display()
            ),
        ) {
            for name in &expected {
                assert_eq!(
                    screen.lines().filter(|l| l.contains(name.as_str())).count(),
                    1,
                    "{name} once at {width} columns:\n{screen}"
                );
            }
            let held = screen.lines().find(|l| l.contains("mig-held")).unwrap();
            assert!(held.starts_with("end unknown"), "{width}:\n{screen}");
            assert!(
                screen.contains("exit=0") || screen.contains("exit=1"),
                "{screen}"
            );
        }
    }

    // Per node: the migrations explain said left or reached it.
    for node in ["node-1", "node-2"] {
        let doc = night.history(&[&format!("node/{node}"), "-A"]);
        let want: BTreeSet<String> = night
            .truth
            .iter()
            .filter(|(_, t)| {
                t.source_node.as_deref() == Some(node) || t.target_node.as_deref() == Some(node)
            })
            .map(|(n, _)| n.clone())
            .chain(
                (held.0.as_deref() == Some(node) || held.1.as_deref() == Some(node))
                    .then(|| "mig-held".to_string()),
            )
            .collect();
        assert_eq!(names(&doc), want, "node/{node}: {doc:#}");
    }

    // Per cause: exactly the migrations explain gave that cause, and byCause agrees.
    for cause in &causes {
        let doc = night.history(&["--cause", cause, "-A"]);
        let want: BTreeSet<String> = night
            .truth
            .iter()
            .filter(|(_, t)| t.verdict.0 == *cause)
            .map(|(n, _)| n.clone())
            .collect();
        assert_eq!(names(&doc), want, "--cause {cause}: {doc:#}");
        let counted = all["byCause"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["cause"] == json!(cause))
            .map(|c| c["count"].as_u64().unwrap());
        assert_eq!(counted, Some(want.len() as u64), "{all:#}");
    }

    // explain of the deleted ones, from the journal: the verdict explain gave live.
    let journal = night.journal();
    for (name, t) in night.truth.iter().filter(|(_, t)| t.deleted) {
        let out = vmctl([
            "--kubeconfig",
            night.kubeconfig.to_str().unwrap(),
            "-n",
            "prod",
            "--journal",
            journal.to_str().unwrap(),
            "explain",
            &format!("migration/{name}"),
            "-o",
            "json",
        ]);
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}\n{}", both(&out)));
        assert!(
            doc["journal"].is_object(),
            "{name}: from the journal\n{doc:#}"
        );
        assert_eq!(verdict(&doc), t.verdict, "{name}: {doc:#}");
    }
}

/// Runs `command` in a tmux pane `width` columns wide (its own server and socket) and returns
/// the screen, wrapped lines joined; None when tmux is missing (a failure with
/// VMCTL_REQUIRE_TMUX=1, as in CI).
fn on_a_terminal(width: &str, command: &str) -> Option<String> {
    let found = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("VMCTL_REQUIRE_TMUX").as_deref() != Ok("1"),
            "tmux is required (VMCTL_REQUIRE_TMUX=1) but not installed"
        );
        eprintln!("skipped the terminal: tmux is not installed");
        return None;
    }
    let socket = format!("vmctl-drill-record-{width}-{}", std::process::id());
    let tmux = |args: &[&str]| {
        let mut c = Command::new("tmux");
        c.args(["-L", &socket, "-f", "/dev/null"]).args(args);
        c
    };
    let line = format!("{command}; echo \"ex\"\"it=$?\"");
    let ok = tmux(&["new-session", "-d", "-s", "d", "-x", width, "-y", "60"])
        .args(["env", "-i"])
        .arg(format!(
            "PATH={}",
            std::env::var("PATH").unwrap_or_default()
        ))
        .args([
            "TERM=xterm-256color",
            "LANG=C.UTF-8",
            "VMCTL_JOURNAL=off",
            "sh",
            "-c",
        ])
        .arg(format!("{line}; sleep 30"))
        .status()
        .unwrap();
    assert!(ok.success());
    let deadline = Instant::now() + WAIT;
    let screen = loop {
        let out = tmux(&["capture-pane", "-p", "-J", "-t", "d"])
            .output()
            .unwrap();
        let screen = String::from_utf8_lossy(&out.stdout).into_owned();
        if screen.contains("exit=") {
            break screen;
        }
        assert!(Instant::now() < deadline, "never ended:\n{screen}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = tmux(&["kill-server"]).status();
    eprintln!("the screen at {width} columns:\n{screen}");
    Some(screen)
}
