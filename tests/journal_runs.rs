//! `migrate`, `abort` (and `drain`) write their own runs to the journal (issue 28), against
//! the fake API server driven by the scripted KubeVirt; the journal is a real SQLite file
//! read back through the library.

mod common;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use support::FakeApiServer;
use support::kubevirt_sim::{self, KubeVirtSim, Script};
use vmctl::cluster::Kind;
use vmctl::journal::{Access, Journal, JournalSpec};
use vmctl::model::journal::{HistoryQuery, MigrationRecord, RecordOutcome, RecordedBy};

struct Lab {
    server: Arc<FakeApiServer>,
    _sim: KubeVirtSim,
    dir: tempfile::TempDir,
    kubeconfig: String,
}

fn lab(script: Script) -> Lab {
    let server = Arc::new(FakeApiServer::start_blocking(kubevirt_sim::cluster(
        "v1.8.4",
    )));
    let sim = KubeVirtSim::start(&server, script);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path()).display().to_string();
    Lab {
        server,
        _sim: sim,
        dir,
        kubeconfig,
    }
}

impl Lab {
    fn journal(&self) -> PathBuf {
        self.dir.path().join("journal.sqlite")
    }

    /// vmctl with `env` (VMCTL_JOURNAL unset, HOME and XDG_STATE_HOME in the lab's
    /// directory, so the default journal is the lab's own).
    fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_vmctl"));
        cmd.args(["--kubeconfig", &self.kubeconfig, "-n", "prod"])
            .args(args)
            .env("NO_COLOR", "1")
            .env_remove("KUBECONFIG")
            .env_remove("VMCTL_NOW")
            .env_remove("VMCTL_JOURNAL")
            .env("HOME", self.dir.path().join("home"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"));
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    /// vmctl without `-n`: the kubeconfig context's namespace, `default`.
    fn run_no_namespace(&self, args: &[&str]) -> Output {
        let journal = self.journal().display().to_string();
        Command::new(env!("CARGO_BIN_EXE_vmctl"))
            .args(["--kubeconfig", &self.kubeconfig, "--journal", &journal])
            .args(args)
            .env("NO_COLOR", "1")
            .env_remove("KUBECONFIG")
            .env_remove("VMCTL_NOW")
            .env_remove("VMCTL_JOURNAL")
            .env("HOME", self.dir.path().join("home"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .output()
            .unwrap()
    }

    fn run(&self, args: &[&str]) -> Output {
        let journal = self.journal().display().to_string();
        let mut all = vec!["--journal", journal.as_str()];
        all.extend_from_slice(args);
        self.run_env(&all, &[])
    }
}

fn records(path: &Path) -> Vec<MigrationRecord> {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let j = Journal::open(&JournalSpec::Sqlite(path.to_path_buf()), Access::Read)
            .await
            .unwrap();
        j.query(&HistoryQuery {
            with_detail: true,
            ..HistoryQuery::default()
        })
        .await
        .unwrap()
    })
}

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("timed out waiting for {what}");
}

#[test]
fn a_migration_vmctl_drove_is_journaled_with_its_samples() {
    let lab = lab(Script::default());
    let out = lab.run(&["migrate", "db-01", "--timeout", "60s", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let all = records(&lab.journal());
    assert_eq!(all.len(), 1, "{all:#?}");
    let r = &all[0];
    let vmim = lab.server.objects(Kind::VirtualMachineInstanceMigration);
    let uid = vmim[0]["metadata"]["uid"].as_str().unwrap();
    assert_eq!(r.id, format!("kubevirt:{uid}"));
    assert_eq!(r.recorded_by, RecordedBy::Migrate);
    assert_eq!(r.outcome, RecordOutcome::Succeeded);
    assert_eq!((r.namespace.as_str(), r.vm.as_str()), ("prod", "db-01"));
    assert_eq!(r.migration, result["migration"].as_str().unwrap());
    assert_eq!(r.source_node.as_deref(), Some("node-1"));
    assert_eq!(r.target_node.as_deref(), Some("node-2"));
    assert_eq!(r.source_pod.as_deref(), Some("virt-launcher-db-01-abcde"));
    assert!(r.target_pod.is_some(), "{r:#?}");
    // Named as `vmctl record` names it: the kubeconfig context's cluster.
    assert_eq!(r.cluster, "fake");
    // vmctl drove it: the samples it showed and the data it saw sent.
    let points = r.detail["progressSeries"]["points"].as_array().unwrap();
    assert!(!points.is_empty(), "{:#}", r.detail);
    assert_eq!(
        r.data_processed_bytes,
        result["summary"]["dataProcessed"].as_i64()
    );
    // The objects explain reads, so explain can answer from the journal.
    assert_eq!(r.detail["evidence"]["migration"]["metadata"]["uid"], uid);
}

#[test]
fn a_failed_migration_is_journaled_with_the_diagnosis_it_printed() {
    let lab = lab(Script {
        unschedulable: true,
        running_ticks: 40,
        ..Script::default()
    });
    let out = lab.run(&["migrate", "batch-01", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let all = records(&lab.journal());
    assert_eq!(all.len(), 1, "{all:#?}");
    let r = &all[0];
    assert_eq!(r.outcome, RecordOutcome::Failed);
    assert_eq!(r.cause, result["diagnosis"]["cause"].as_str().unwrap());
    assert_eq!(r.cause, "target-pod-unschedulable");
    assert_eq!(r.plane, result["diagnosis"]["plane"].as_str().unwrap());
    assert_eq!(r.summary, result["diagnosis"]["summary"].as_str().unwrap());

    // KubeVirt cleans it up; explain answers from the journal, with the same verdict.
    let name = result["migration"].as_str().unwrap();
    lab.server
        .delete_object(Kind::VirtualMachineInstanceMigration, Some("prod"), name)
        .expect("the migration existed");
    let out = lab.run(&["explain", name, "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    let explained: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for field in ["cause", "plane", "outcome", "summary"] {
        assert_eq!(
            explained[field], result["diagnosis"][field],
            "{field}: {explained:#}"
        );
    }
    assert_eq!(
        explained["journal"]["recordedBy"], "migrate",
        "{explained:#}"
    );
    let out = lab.run(&["explain", name]);
    assert!(stdout(&out).contains("from the journal"), "{}", both(&out));
}

/// Issue 33: without -n, the context's namespace (default) is only where the cluster is
/// searched; the journal is searched in every namespace. One namespace holds it: explained,
/// saying which; two: both named and -n asked for.
#[test]
fn explain_without_n_finds_a_gone_migration_in_the_journal_in_any_namespace() {
    let lab = lab(Script {
        unschedulable: true,
        running_ticks: 40,
        ..Script::default()
    });
    let out = lab.run(&["migrate", "batch-01", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let name = result["migration"].as_str().unwrap().to_string();
    lab.server
        .delete_object(Kind::VirtualMachineInstanceMigration, Some("prod"), &name)
        .expect("the migration existed");

    let out = lab.run_no_namespace(&["explain", &name, "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    let explained: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        explained["cause"], result["diagnosis"]["cause"],
        "{explained:#}"
    );
    assert_eq!(
        explained["journal"]["recordedBy"], "migrate",
        "{explained:#}"
    );
    assert!(
        stderr(&out).contains("the journal has it in namespace prod"),
        "{}",
        both(&out)
    );
    // With -n default the journal is searched there only: not found, and said so.
    let out = lab.run_no_namespace(&["-n", "default", "explain", &name]);
    assert_eq!(out.status.code(), Some(3), "{}", both(&out));
    assert!(
        stderr(&out).contains("no record of it either"),
        "{}",
        both(&out)
    );
    // The hint names a form explain takes, the documented one.
    assert!(stderr(&out).contains("try vm/NAME"), "{}", both(&out));
    assert!(!stderr(&out).contains("vmi/NAME"), "{}", both(&out));

    // The same name recorded in a second namespace: which one is asked.
    let mut other = records(&lab.journal()).remove(0);
    other.namespace = "staging".into();
    other.id = format!("{}-staging", other.id);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let j = Journal::open(&JournalSpec::Sqlite(lab.journal()), Access::Write)
            .await
            .unwrap();
        j.commit(&[other], &[]).await.unwrap();
    });
    let out = lab.run_no_namespace(&["explain", &name]);
    assert_eq!(out.status.code(), Some(3), "{}", both(&out));
    assert!(
        stderr(&out).contains("in namespaces prod, staging: name one with -n NAMESPACE"),
        "{}",
        both(&out)
    );
    assert!(stdout(&out).is_empty(), "{}", both(&out));
}

#[test]
fn an_abort_is_journaled_once_even_when_migrate_saw_it_too() {
    let lab = lab(Script {
        hold_running: true,
        ..Script::default()
    });
    ok(lab.run(&["migrate", "db-01", "--no-wait"]));
    wait_until("Running", || {
        lab.server
            .objects(Kind::VirtualMachineInstanceMigration)
            .first()
            .and_then(|m| m.pointer("/status/phase")?.as_str().map(str::to_string))
            .as_deref()
            == Some("Running")
    });
    assert!(
        !lab.journal().exists() || records(&lab.journal()).is_empty(),
        "--no-wait ends before the migration does: nothing to record yet"
    );
    let out = lab.run(&["abort", "db-01"]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let again = lab.run(&["abort", "db-01"]);
    assert_ne!(again.status.code(), Some(0), "{}", both(&again));
    let all = records(&lab.journal());
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(all[0].recorded_by, RecordedBy::Abort);
    assert_eq!(all[0].outcome, RecordOutcome::Aborted, "{:#?}", all[0]);
    // Issue 33: the journal says vmctl asked for it (not "someone deleted the VMIM").
    assert!(
        all[0]
            .summary
            .contains("by vmctl abort (vmctl deleted its VMIM)"),
        "{:#?}",
        all[0]
    );
}

#[test]
fn without_a_journal_a_run_leaves_no_database_behind() {
    let lab = lab(Script::default());
    let out = lab.run_env(&["migrate", "db-01", "--timeout", "60s"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let default = lab.dir.path().join("state/vmctl/journal.sqlite");
    assert!(!default.exists(), "no journal was asked for");
    assert!(!stderr(&out).contains("journal"), "{}", both(&out));
}

#[test]
fn a_run_writes_to_the_default_journal_once_it_exists() {
    let lab = lab(Script::default());
    let default = lab.dir.path().join("state/vmctl/journal.sqlite");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        Journal::open(&JournalSpec::Sqlite(default.clone()), Access::Write)
            .await
            .unwrap();
    });
    let out = lab.run_env(&["migrate", "db-01", "--timeout", "60s"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    assert_eq!(records(&default).len(), 1);
}

#[test]
fn a_journal_that_cannot_be_written_is_said_and_changes_no_exit_code() {
    let lab = lab(Script::default());
    // A file where the journal's directory should be.
    let blocker = lab.dir.path().join("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let journal = blocker.join("journal.sqlite").display().to_string();
    let out = lab.run_env(
        &["migrate", "db-01", "--timeout", "60s"],
        &[("VMCTL_JOURNAL", &journal)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let err = stderr(&out);
    assert!(
        err.contains("not-a-dir/journal.sqlite") && err.contains("not recorded"),
        "{}",
        both(&out)
    );
    assert!(
        stdout(&out).contains("migration succeeded"),
        "{}",
        both(&out)
    );
    assert_eq!(std::fs::read(&blocker).unwrap(), b"x");
}

/// `drain` journals every migration it followed: the failed evacuations with the diagnosis
/// it printed, and KubeVirt's retries that succeeded (their evidence from the watches).
#[test]
fn a_drain_journals_each_failed_and_each_successful_evacuation() {
    use support::kubevirt_sim::DrainFixture;
    let server = Arc::new(FakeApiServer::start_blocking(
        kubevirt_sim::drain_cluster_with(&DrainFixture::default()),
    ));
    let _sim = KubeVirtSim::start(
        &server,
        Script {
            running_ticks: 8,
            evacuation_failures: 1,
            evacuation_backoff_ticks: 10,
            ..Script::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path()).display().to_string();
    let journal = dir.path().join("j.sqlite").display().to_string();
    let out = vmctl([
        "--kubeconfig",
        &kubeconfig,
        "--journal",
        &journal,
        "drain",
        "node-1",
        "-o",
        "json",
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--allow-shutdowns",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let failed_events: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == "migration-failed")
        .collect();
    let all = records(Path::new(&journal));
    assert!(
        all.iter().all(|r| r.recorded_by == RecordedBy::Drain),
        "{all:#?}"
    );
    let failed: Vec<&MigrationRecord> = all
        .iter()
        .filter(|r| r.outcome == RecordOutcome::Failed)
        .collect();
    let succeeded: Vec<&MigrationRecord> = all
        .iter()
        .filter(|r| r.outcome == RecordOutcome::Succeeded)
        .collect();
    assert_eq!(failed.len(), failed_events.len(), "{all:#?}");
    assert!(!failed.is_empty());
    for f in &failed_events {
        let r = failed
            .iter()
            .find(|r| r.migration == f["migration"].as_str().unwrap())
            .unwrap_or_else(|| panic!("{f:#} not journaled: {all:#?}"));
        assert_eq!(r.cause, f["diagnosis"]["cause"].as_str().unwrap(), "{f:#}");
        assert_eq!(r.evacuation_node.as_deref(), Some("node-1"), "{r:#?}");
    }
    // Each evacuated VM's retry succeeded and is there once, from node-1.
    let vms: std::collections::BTreeSet<&str> = failed.iter().map(|r| r.vm.as_str()).collect();
    for vm in vms {
        let ok: Vec<_> = succeeded.iter().filter(|r| r.vm == vm).collect();
        assert_eq!(ok.len(), 1, "{vm}: {all:#?}");
        assert_eq!(ok[0].source_node.as_deref(), Some("node-1"), "{:#?}", ok[0]);
    }
    let ids: std::collections::BTreeSet<&str> = all.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids.len(), all.len(), "no record twice");
}
