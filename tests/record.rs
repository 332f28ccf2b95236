//! `vmctl record` against the fake API server driven by the migration simulator: each
//! migration that ends is in the journal once (outcome, cause, nodes, pods); a restart
//! resumes without duplicates, and records from its bookmark the migrations that ended and
//! were deleted while it was down (or says once that a compacted history could not be
//! replayed); a dropped watch resumes; a full journal stops the writing, not the watching;
//! a kill -9 loses nothing that a restart cannot recover. The journal is read with rusqlite.
//! Nothing is timed: every wait is for a line or a state, with a generous bound.

mod common;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{both, vmctl};
use serde_json::{Value, json};
use support::kubevirt_sim::{self, KubeVirtSim, Script};
use support::recorder::{Recorder, WAIT, fast};
use support::{FakeApiServer, Fault};
use vmctl::cluster::Kind;

struct Lab {
    server: Arc<FakeApiServer>,
    sim: KubeVirtSim,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

fn lab() -> Lab {
    let server = Arc::new(FakeApiServer::start_blocking(kubevirt_sim::cluster(
        "v1.8.4",
    )));
    let sim = KubeVirtSim::start(&server, fast());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    Lab {
        server,
        sim,
        dir,
        kubeconfig,
    }
}

impl Lab {
    fn journal(&self) -> PathBuf {
        self.dir.path().join("j.sqlite")
    }

    fn record(&self, extra_env: &[(&str, &str)]) -> Recorder {
        self.record_into(self.journal().to_str().unwrap(), extra_env)
    }

    fn record_into(&self, journal: &str, extra_env: &[(&str, &str)]) -> Recorder {
        Recorder::start(
            env!("CARGO_BIN_EXE_vmctl"),
            &self.kubeconfig,
            journal,
            extra_env,
        )
    }

    /// A migration of `vmi` (created as a user would, the simulator drives it).
    fn migrate(&self, name: &str, vmi: &str) {
        self.server
            .add_object(json!({"apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachineInstanceMigration",
            "metadata": {"name": name, "namespace": "prod",
                "creationTimestamp": kubevirt_sim::now()},
            "spec": {"vmiName": vmi}}));
    }

    fn phase(&self, name: &str) -> String {
        self.server
            .object(Kind::VirtualMachineInstanceMigration, Some("prod"), name)
            .and_then(|m| {
                m.pointer("/status/phase")
                    .and_then(Value::as_str)
                    .map(String::from)
            })
            .unwrap_or_default()
    }

    fn wait_final(&self, name: &str) -> String {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            let p = self.phase(name);
            if p == "Succeeded" || p == "Failed" {
                return p;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{name} never ended (phase {:?})", self.phase(name));
    }

    fn uid(&self, name: &str) -> String {
        self.server
            .object(Kind::VirtualMachineInstanceMigration, Some("prod"), name)
            .and_then(|m| {
                m.pointer("/metadata/uid")
                    .and_then(Value::as_str)
                    .map(String::from)
            })
            .unwrap()
    }
}

/// One row of the journal: (migration, outcome, cause, source node, target node, source pod,
/// target pod, recorded by).
type Row = (
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
);

fn rows(journal: &Path) -> Vec<Row> {
    let conn = rusqlite::Connection::open(journal).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT migration, outcome, cause, source_node, target_node, source_pod, target_pod, \
             recorded_by FROM migrations ORDER BY migration",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
            r.get(7)?,
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn ids(journal: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(journal).unwrap();
    let mut stmt = conn
        .prepare("SELECT id FROM migrations ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn bookmark(journal: &Path) -> Option<(String, String)> {
    let conn = rusqlite::Connection::open(journal).unwrap();
    conn.query_row("SELECT name, value FROM bookmarks", [], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })
    .ok()
}

fn migrations(rows: &[Row]) -> Vec<&str> {
    rows.iter().map(|r| r.0.as_str()).collect()
}

#[test]
fn records_each_end_once_and_a_restart_resumes_from_its_bookmark() {
    let lab = lab();
    let mut rec = lab.record(&[]);

    lab.migrate("mig-ok", "db-01");
    rec.wait_recorded("mig-ok");
    lab.sim.set_script(Script {
        stuck: true,
        ..fast()
    });
    lab.migrate("mig-stuck", "batch-01");
    rec.wait_recorded("mig-stuck");
    lab.sim.set_script(fast());

    assert_eq!(rec.signal("-TERM"), Some(0), "{}", rec.both());
    assert!(
        rec.err().contains(
            "stopped (terminated): recorded 2 migrations (1 succeeded, 1 failed, 0 aborted)"
        ),
        "{}",
        rec.both()
    );
    let first = rows(&lab.journal());
    assert_eq!(migrations(&first), ["mig-ok", "mig-stuck"], "{first:?}");
    let ok = &first[0];
    assert_eq!(
        (
            ok.1.as_str(),
            ok.2.as_str(),
            ok.3.as_deref(),
            ok.4.as_deref(),
            ok.7.as_str()
        ),
        (
            "succeeded",
            "succeeded",
            Some("node-1"),
            Some("node-2"),
            "record"
        ),
        "{ok:?}"
    );
    assert_eq!(ok.5.as_deref(), Some("virt-launcher-db-01-abcde"), "{ok:?}");
    assert!(
        ok.6.as_deref()
            .is_some_and(|p| p.starts_with("virt-launcher-db-01-t")),
        "{ok:?}"
    );
    let stuck = &first[1];
    assert_eq!(stuck.1, "failed", "{stuck:?}");
    assert_ne!(stuck.2, "succeeded", "{stuck:?}");
    let (name, version) = bookmark(&lab.journal()).expect("a bookmark");
    assert!(name.starts_with("vmims@"), "{name}");
    assert!(version.parse::<u64>().is_ok(), "{version}");

    // While it is down: one migration ends and is deleted (only the watch history has it),
    // another ends and stays.
    lab.migrate("mig-gone", "db-01");
    assert_eq!(lab.wait_final("mig-gone"), "Succeeded");
    let gone_uid = lab.uid("mig-gone");
    lab.server.delete_object(
        Kind::VirtualMachineInstanceMigration,
        Some("prod"),
        "mig-gone",
    );
    lab.migrate("mig-down", "batch-01");
    lab.wait_final("mig-down");

    let mut rec = lab.record(&[]);
    rec.wait_recorded("mig-gone");
    rec.wait_recorded("mig-down");
    rec.wait_for("the replay line", |r| {
        r.err().contains("replayed the migration watch")
    });
    lab.migrate("mig-after", "db-01");
    rec.wait_recorded("mig-after");
    assert_eq!(rec.signal("-TERM"), Some(0), "{}", rec.both());
    assert!(
        !rec.out().contains(" mig-ok ") && !rec.out().contains(" mig-stuck "),
        "what was there is not logged again\n{}",
        rec.both()
    );
    assert!(
        rec.err()
            .contains("1 ended migrations not in the journal yet (recorded), 2 already in it"),
        "{}",
        rec.both()
    );
    let all = rows(&lab.journal());
    assert_eq!(
        migrations(&all),
        ["mig-after", "mig-down", "mig-gone", "mig-ok", "mig-stuck"],
        "{all:?}"
    );
    assert!(ids(&lab.journal()).contains(&format!("kubevirt:{gone_uid}")));
    assert_eq!(all[2].1, "succeeded", "{:?}", all[2]);
}

#[test]
fn an_aborted_migration_is_recorded_as_aborted_by_request() {
    let lab = lab();
    let mut rec = lab.record(&[]);
    lab.sim.set_script(Script {
        hold_running: true,
        ..fast()
    });
    // As KubeVirt's admission leaves it: the finalizer holds the VMIM for the abort.
    lab.server.add_object(json!({"apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstanceMigration",
        "metadata": {"name": "mig-abort", "namespace": "prod",
            "creationTimestamp": kubevirt_sim::now(),
            "finalizers": ["kubevirt.io/migrationJobFinalize"]},
        "spec": {"vmiName": "batch-01"}}));
    let deadline = Instant::now() + WAIT;
    while lab.phase("mig-abort") != "Running" {
        assert!(Instant::now() < deadline, "never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    let abort = Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args([
            "--kubeconfig",
            lab.kubeconfig.to_str().unwrap(),
            "-n",
            "prod",
        ])
        .args(["--journal", "off", "abort", "migration/mig-abort"])
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    assert_eq!(
        abort.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&abort.stderr)
    );
    rec.wait_recorded("mig-abort");
    assert_eq!(rec.signal("-TERM"), Some(0), "{}", rec.both());
    assert!(
        rec.out()
            .contains("mig-abort aborted cause=aborted-by-request"),
        "{}",
        rec.both()
    );
    let r = rows(&lab.journal());
    assert_eq!(
        (r.len(), r[0].1.as_str(), r[0].2.as_str()),
        (1, "aborted", "aborted-by-request"),
        "{r:?}"
    );
}

/// A migration the watch shows only once it is final (never in flight here): the full pass
/// after a change finds it.
#[test]
fn a_migration_first_seen_final_is_recorded() {
    let lab = lab();
    let mut rec = lab.record(&[]);
    lab.server.add_object(json!({"apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstanceMigration",
        "metadata": {"name": "mig-done", "namespace": "prod",
            "creationTimestamp": "2026-12-01T00:00:00Z"},
        "spec": {"vmiName": "db-01"},
        "status": {"phase": "Failed", "migrationState": {"sourceNode": "node-1",
            "targetNode": "node-2", "completed": true, "failed": true,
            "startTimestamp": "2026-12-01T00:00:10Z", "endTimestamp": "2026-12-01T00:01:10Z",
            "failureReason": "Live migration failed: some libvirt error"}}}));
    rec.wait_recorded("mig-done");
    assert_eq!(rec.signal("-TERM"), Some(0), "{}", rec.both());
    assert!(rec.out().contains("mig-done failed"), "{}", rec.both());
    assert!(rec.out().contains("took 1m10s"), "{}", rec.both());
    assert_eq!(migrations(&rows(&lab.journal())), ["mig-done"]);
}

#[test]
fn a_compacted_history_is_said_once_and_recording_goes_on() {
    let lab = lab();
    let mut rec = lab.record(&[]);
    lab.migrate("mig-1", "db-01");
    rec.wait_recorded("mig-1");
    assert_eq!(rec.signal("-TERM"), Some(0), "{}", rec.both());

    lab.migrate("mig-lost", "db-01");
    lab.wait_final("mig-lost");
    lab.server.delete_object(
        Kind::VirtualMachineInstanceMigration,
        Some("prod"),
        "mig-lost",
    );
    lab.server.compact();

    let mut rec = lab.record(&[]);
    rec.wait_for("the 410 note", |r| r.err().contains("410 Gone"));
    assert!(
        rec.err().contains("could not be recovered"),
        "{}",
        rec.both()
    );
    lab.migrate("mig-2", "batch-01");
    rec.wait_recorded("mig-2");
    assert_eq!(rec.signal("-TERM"), Some(0), "{}", rec.both());
    assert_eq!(
        rec.err().matches("410 Gone").count(),
        1,
        "said once\n{}",
        rec.both()
    );
    assert_eq!(migrations(&rows(&lab.journal())), ["mig-1", "mig-2"]);
}

#[test]
fn a_dropped_watch_resumes_and_later_migrations_are_recorded() {
    let lab = lab();
    let mut rec = lab.record(&[]);
    lab.migrate("mig-1", "db-01");
    rec.wait_recorded("mig-1");
    lab.server
        .inject_fault(Fault::status(500).query("watch=true").times(4));
    lab.server.close_watches();
    rec.wait_for("reconnecting", |r| r.err().contains("reconnecting"));
    lab.migrate("mig-2", "batch-01");
    rec.wait_recorded("mig-2");
    assert_eq!(rec.signal("-INT"), Some(0), "{}", rec.both());
    assert_eq!(migrations(&rows(&lab.journal())), ["mig-1", "mig-2"]);
    let r = rows(&lab.journal());
    assert!(r.iter().all(|r| r.1 == "succeeded"), "{r:?}");
}

#[test]
fn a_full_journal_stops_the_writing_not_the_watching() {
    let lab = lab();
    // Room for the schema and little more: SQLite answers SQLITE_FULL as a full disk does.
    // (Retried every 5 s here, not every 30.)
    let mut rec = lab.record(&[
        ("VMCTL_JOURNAL_MAX_PAGES", "40"),
        ("VMCTL_RECORD_RETRY_FULL_SECS", "5"),
    ]);
    let mut n = 0;
    while !rec
        .err()
        .contains("journal full: not writing; still watching")
    {
        n += 1;
        assert!(n <= 12, "never full\n{}", rec.both());
        let name = format!("mig-{n:02}");
        lab.migrate(&name, if n % 2 == 0 { "db-01" } else { "batch-01" });
        lab.wait_final(&name);
        rec.wait_for("the record or the fault", |r| {
            r.out().contains(&format!(" {name} ")) || r.err().contains("journal full")
        });
    }
    assert!(
        rec.err().contains("up to 10000 records wait in memory"),
        "{}",
        rec.both()
    );
    // Still watching: the next migration is seen (it waits with the others).
    let next = format!("mig-{:02}", n + 1);
    lab.migrate(&next, "db-01");
    lab.wait_final(&next);
    std::thread::sleep(Duration::from_secs(3));
    assert!(rec.running(), "{}", rec.both());
    assert_eq!(
        rec.err().matches("journal full").count(),
        1,
        "said once\n{}",
        rec.both()
    );
    // What was written is whole.
    let written = rows(&lab.journal());
    assert_eq!(written.len(), n - 1, "{written:?}");

    // Room again (the records written so far deleted, as a prune would): the waiting ones
    // are written at the next retry, oldest first, and said so.
    {
        let conn = rusqlite::Connection::open(lab.journal()).unwrap();
        conn.busy_timeout(Duration::from_secs(10)).unwrap();
        conn.execute("DELETE FROM migrations", []).unwrap();
    }
    rec.wait_for("writing again", |r| {
        r.err().contains("journal writable again")
    });
    rec.wait_recorded(&next);
    assert_eq!(rec.signal("-TERM"), Some(0), "{}", rec.both());
    let after = rows(&lab.journal());
    assert_eq!(
        migrations(&after),
        [format!("mig-{n:02}"), next.clone()],
        "{}",
        rec.both()
    );
}

/// Issue 33: a record another writer (`migrate`, a second recorder) stored while this one
/// waited is not "recorded" by this run: no line for it, and the closing counts say what
/// this run wrote and what was there already, and agree with each other.
#[test]
fn a_record_another_writer_stored_first_is_counted_as_there_already() {
    let lab = lab();
    let mut rec = lab.record(&[("VMCTL_JOURNAL_BUSY_MS", "200")]);
    // Another writer holds the journal: the recorder's write waits.
    let conn = rusqlite::Connection::open(lab.journal()).unwrap();
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    lab.migrate("mig-01", "db-01");
    lab.wait_final("mig-01");
    rec.wait_for("the busy journal", |r| {
        r.err().contains("journal not writable")
    });
    // ... and stores the same migration (as `migrate` does, with the same id).
    let id = format!("kubevirt:{}", lab.uid("mig-01"));
    conn.execute(
        "INSERT INTO migrations (id, cluster, recorded_by, platform, namespace, vm, migration, \
         outcome, phase, plane, cause, summary, ended_ms, recorded_at) VALUES (?1, 'fake', \
         'migrate', 'kubevirt', 'prod', 'db-01', 'mig-01', 'succeeded', 'Succeeded', 'none', \
         'succeeded', 'moved', 0, '2026-01-01T00:00:00Z')",
        [&id],
    )
    .unwrap();
    conn.execute_batch("COMMIT").unwrap();
    rec.wait_for("writing again", |r| {
        r.err().contains("journal writable again")
    });
    assert_eq!(rec.signal("-TERM"), Some(0), "{}", rec.both());
    assert!(
        !rec.out().contains(" mig-01 "),
        "not recorded by this run\n{}",
        rec.both()
    );
    assert!(
        rec.err().contains("wrote 0 waiting records"),
        "{}",
        rec.both()
    );
    assert!(
        rec.err().contains(
            "recorded 0 migrations (0 succeeded, 0 failed, 0 aborted); 1 were in the journal already"
        ),
        "{}",
        rec.both()
    );
    assert_eq!(ids(&lab.journal()), [id]);
}

#[test]
fn a_full_journal_at_stop_says_what_could_not_be_written() {
    let lab = lab();
    let mut rec = lab.record(&[("VMCTL_JOURNAL_MAX_PAGES", "40")]);
    let mut n = 0;
    while !rec.err().contains("journal full") {
        n += 1;
        assert!(n <= 12, "never full\n{}", rec.both());
        let name = format!("mig-{n:02}");
        lab.migrate(&name, if n % 2 == 0 { "db-01" } else { "batch-01" });
        lab.wait_final(&name);
        rec.wait_for("the record or the fault", |r| {
            r.out().contains(&format!(" {name} ")) || r.err().contains("journal full")
        });
    }
    assert_eq!(rec.signal("-TERM"), Some(0), "{}", rec.both());
    assert!(
        rec.err().contains("1 could not be written"),
        "{}",
        rec.both()
    );
}

#[test]
fn a_kill_9_loses_nothing_a_restart_cannot_recover() {
    let lab = lab();
    let mut rec = lab.record(&[]);
    lab.migrate("mig-1", "db-01");
    rec.wait_recorded("mig-1");
    // Killed with a migration in flight.
    lab.sim.set_script(Script {
        running_ticks: 30,
        ..fast()
    });
    lab.migrate("mig-2", "batch-01");
    let deadline = Instant::now() + WAIT;
    while lab.phase("mig-2") != "Running" {
        assert!(Instant::now() < deadline, "mig-2 never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(rec.signal("-KILL"), None);
    lab.sim.set_script(fast());
    lab.wait_final("mig-2");

    let mut rec = lab.record(&[]);
    rec.wait_recorded("mig-2");
    assert_eq!(rec.signal("-TERM"), Some(0), "{}", rec.both());
    assert!(!rec.out().contains(" mig-1 "), "{}", rec.both());
    assert_eq!(migrations(&rows(&lab.journal())), ["mig-1", "mig-2"]);
}

#[test]
fn a_damaged_journal_is_refused_with_exit_7() {
    let lab = lab();
    std::fs::write(
        lab.journal(),
        b"this is not a database, it is a text file\n".repeat(200),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(["--kubeconfig", lab.kubeconfig.to_str().unwrap()])
        .args(["record", "-A", "--journal", lab.journal().to_str().unwrap()])
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{err}");
    assert!(err.contains("j.sqlite"), "{err}");
    // Never truncated.
    assert!(
        std::fs::read(lab.journal())
            .unwrap()
            .starts_with(b"this is not a database")
    );
}

/// The requests the recorder makes, as (verb, resource): what deploy/record.yaml's
/// ClusterRole must grant, and all it grants.
#[test]
fn the_recorders_requests_are_exactly_what_its_cluster_role_grants() {
    let lab = lab();
    let mut rec = lab.record(&[]);
    lab.migrate("mig-1", "db-01");
    rec.wait_recorded("mig-1");
    assert_eq!(rec.signal("-TERM"), Some(0));
    let mut rec = lab.record(&[]);
    rec.wait_for("the replay", |r| r.err().contains("replayed"));
    assert_eq!(rec.signal("-TERM"), Some(0));
    let mut used: Vec<(String, String)> = lab
        .server
        .requests()
        .iter()
        .filter_map(|r| {
            let kind = r.kind?;
            let group = kind.group().to_string();
            Some((format!("{group}/{}", kind.plural()), r.verb.to_string()))
        })
        .collect();
    used.sort();
    used.dedup();
    let granted = granted_by_record_yaml();
    for (resource, verb) in &used {
        assert!(
            granted.contains(&(resource.clone(), verb.clone())),
            "{verb} {resource} is not granted by deploy/record.yaml: {granted:?}"
        );
    }
    for (resource, verb) in &granted {
        assert!(
            used.contains(&(resource.clone(), verb.clone())),
            "deploy/record.yaml grants {verb} {resource}, which the recorder never asks for: {used:?}"
        );
    }
}

/// (group/resource, verb) pairs of the ClusterRole in deploy/record.yaml.
fn granted_by_record_yaml() -> Vec<(String, String)> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/record.yaml"))
            .unwrap();
    let mut out = Vec::new();
    for doc in serde_saphyr::from_multiple::<Value>(&text).unwrap() {
        if doc["kind"] != "ClusterRole" {
            continue;
        }
        for rule in doc["rules"].as_array().unwrap() {
            for group in rule["apiGroups"].as_array().unwrap() {
                for res in rule["resources"].as_array().unwrap() {
                    for verb in rule["verbs"].as_array().unwrap() {
                        out.push((
                            format!("{}/{}", group.as_str().unwrap(), res.as_str().unwrap()),
                            verb.as_str().unwrap().to_string(),
                        ));
                    }
                }
            }
        }
    }
    out.sort();
    out
}

/// The same recorder into PostgreSQL (`VMCTL_TEST_POSTGRES`, a server
/// `tests/support/postgres.sh` starts; `.ci/run` requires it): recorded once, and the
/// server ending the recorder's connection (a restart, a failover) costs a retry, not the
/// recorder. Read back with `vmctl history`.
#[test]
fn records_into_postgresql_and_outlives_a_lost_connection() {
    let server = match std::env::var("VMCTL_TEST_POSTGRES") {
        Ok(url) if !url.trim().is_empty() => url.trim().to_string(),
        _ => {
            assert!(
                std::env::var("VMCTL_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "VMCTL_REQUIRE_POSTGRES=1 but VMCTL_TEST_POSTGRES is not set"
            );
            eprintln!("SKIPPED: VMCTL_TEST_POSTGRES is not set");
            return;
        }
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    // A database of its own: the server's URL with another path; SQL over a plain connection
    // (sslrootcert is libpq's keyword, not tokio-postgres's).
    let db = format!("vmctl_rec_{}", std::process::id());
    let (base, query) = server.split_once('?').unwrap_or((server.as_str(), ""));
    let root = base.rsplit_once('/').map_or(base, |(r, _)| r);
    let url = if query.is_empty() {
        format!("{root}/{db}?application_name={db}")
    } else {
        format!("{root}/{db}?{query}&application_name={db}")
    };
    let admin = rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(base, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client
            .batch_execute(&format!("CREATE DATABASE {db}"))
            .await
            .unwrap();
        client
    });

    let lab = lab();
    let mut rec = lab.record_into(&url, &[]);
    lab.migrate("mig-pg-1", "db-01");
    rec.wait_recorded("mig-pg-1");
    let killed: i64 = rt.block_on(async {
        admin
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1",
                &[&db],
            )
            .await
            .unwrap()
            .get(0)
    });
    assert_eq!(killed, 1, "the recorder's one connection");
    lab.migrate("mig-pg-2", "batch-01");
    rec.wait_recorded("mig-pg-2");
    assert!(rec.running(), "{}", rec.both());
    assert_eq!(rec.signal("-TERM"), Some(0), "{}", rec.both());

    let out = vmctl([
        "history",
        "-A",
        "--journal",
        url.as_str(),
        "-o",
        "json",
        "--now",
        &kubevirt_sim::now(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut names: Vec<&str> = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["migration"].as_str())
        .collect();
    names.sort();
    assert_eq!(names, ["mig-pg-1", "mig-pg-2"], "{doc:#}");
    assert!(
        doc["records"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["recordedBy"] == "record" && r["cluster"] == "fake"),
        "{doc:#}"
    );
    rt.block_on(async {
        let _ = admin
            .batch_execute(&format!("DROP DATABASE {db} WITH (FORCE)"))
            .await;
    });
}

/// A first list with many migrations that ended while no recorder ran: every one is recorded
/// once, a chunk of records at a time (the recorder never holds them all).
#[test]
fn a_first_list_of_many_ended_migrations_is_recorded_in_chunks_once_each() {
    const N: usize = 450;
    let mut objects = kubevirt_sim::cluster("v1.8.4");
    for i in 0..N {
        objects.push(json!({"apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachineInstanceMigration",
            "metadata": {"name": format!("old-{i:03}"), "namespace": "prod",
                "creationTimestamp": "2026-12-01T00:00:00Z"},
            "spec": {"vmiName": if i % 2 == 0 { "db-01" } else { "batch-01" }},
            "status": {"phase": "Succeeded", "migrationState": {"sourceNode": "node-1",
                "targetNode": "node-2", "completed": true,
                "startTimestamp": "2026-12-01T00:00:10Z",
                "endTimestamp": "2026-12-01T00:00:40Z"}}}));
    }
    let server = Arc::new(FakeApiServer::start_blocking(objects));
    let sim = KubeVirtSim::start(&server, fast());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let lab = Lab {
        server,
        sim,
        dir,
        kubeconfig,
    };
    let mut rec = lab.record(&[]);
    rec.wait_for("every old migration", |r| {
        r.out().lines().filter(|l| l.contains(" old-")).count() >= N
    });
    assert_eq!(rec.signal("-TERM"), Some(0), "{}", rec.both());
    let recorded = ids(&lab.journal());
    assert_eq!(recorded.len(), N, "{}", rec.both());
    let unique: std::collections::BTreeSet<&String> = recorded.iter().collect();
    assert_eq!(unique.len(), N);
    // A restart finds them all there: nothing is logged or written again.
    let mut again = lab.record(&[]);
    again.wait_for("the start's count", |r| {
        r.err().contains(&format!("{N} already in it"))
    });
    assert_eq!(again.signal("-TERM"), Some(0), "{}", again.both());
    assert!(!again.out().contains(" old-"), "{}", again.both());
    assert_eq!(ids(&lab.journal()).len(), N);
}

/// Issue 33 item 6: a migration that failed a week ago because its target pod could not be
/// scheduled (the signature `explain` reads: the VMIM's events, the deleted target pod's
/// FailedScheduling; no migrationState, the target pod is gone) is recorded now with the
/// cause, plane and confidence `explain -o json` gives live, and its end is the VMIM's own
/// `phaseTransitionTimestamps` (Failed), not the moment it was recorded: history says a week
/// ago. One without any time of its end is recorded with the end unknown (null in JSON, "end
/// unknown" in the table), never the recorder's clock.
#[test]
fn a_week_old_failure_is_recorded_with_explains_diagnosis_and_the_objects_end() {
    let week =
        k8s_openapi::jiff::Timestamp::now() - k8s_openapi::jiff::SignedDuration::from_hours(7 * 24);
    let at = |s: i64| {
        (week + k8s_openapi::jiff::SignedDuration::from_secs(s))
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string()
    };
    let mut objects = kubevirt_sim::cluster("v1.8.4");
    let pod = "virt-launcher-db-01-tweek";
    objects.push(json!({"apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstanceMigration",
        "metadata": {"name": "mig-week", "namespace": "prod", "uid": "uid-mig-week",
            "creationTimestamp": at(0), "labels": {"kubevirt.io/vmi-name": "db-01"}},
        "spec": {"vmiName": "db-01"},
        "status": {"phase": "Failed", "phaseTransitionTimestamps": [
            {"phase": "Pending", "phaseTransitionTimestamp": at(0)},
            {"phase": "Scheduling", "phaseTransitionTimestamp": at(1)},
            {"phase": "Failed", "phaseTransitionTimestamp": at(301)}]}}));
    // Failed with no time of its end at all (an old KubeVirt kept no phase times).
    objects.push(json!({"apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstanceMigration",
        "metadata": {"name": "mig-untimed", "namespace": "prod", "uid": "uid-mig-untimed",
            "creationTimestamp": at(-3600), "labels": {"kubevirt.io/vmi-name": "batch-01"}},
        "spec": {"vmiName": "batch-01"},
        "status": {"phase": "Failed"}}));
    let event = |n: &str, kind: &str, name: &str, uid: &str, reason: &str, msg: &str, t: i64| {
        json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": n, "namespace": "prod"},
            "involvedObject": {"kind": kind, "name": name, "namespace": "prod", "uid": uid},
            "reason": reason, "message": msg,
            "type": if reason.starts_with("Successful") {"Normal"} else {"Warning"},
            "firstTimestamp": at(t), "lastTimestamp": at(t), "count": 1})
    };
    let vmim = "VirtualMachineInstanceMigration";
    objects.extend([
        event("mig-week.1", vmim, "mig-week", "uid-mig-week", "SuccessfulCreate",
            &format!("Created migration target pod prod/{pod} with uuid x for migration uid-mig-week"), 1),
        event("mig-week.2", vmim, "mig-week", "uid-mig-week", "migrationTargetPodUnschedulable",
            "Migration target pod for VMI [prod/db-01] is currently unschedulable.", 3),
        event(&format!("{pod}.1"), "Pod", pod, "uid-pod-week", "FailedScheduling",
            "0/2 nodes are available: 1 Insufficient memory, 1 node(s) didn't match pod anti-affinity rules.", 2),
        event("mig-week.3", vmim, "mig-week", "uid-mig-week", "SuccessfulDelete",
            &format!("unschedulable pod prod/{pod} timeout period exceeded"), 300),
        event("mig-week.4", vmim, "mig-week", "uid-mig-week", "FailedMigration",
            "Migration target pod was removed during active migration.", 301),
    ]);
    let server = Arc::new(FakeApiServer::start_blocking(objects));
    let sim = KubeVirtSim::start(&server, fast());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let lab = Lab {
        server,
        sim,
        dir,
        kubeconfig,
    };

    // What explain says live.
    let live = vmctl([
        "--kubeconfig",
        lab.kubeconfig.to_str().unwrap(),
        "-n",
        "prod",
        "explain",
        "migration/mig-week",
        "-o",
        "json",
    ]);
    let doc: Value =
        serde_json::from_slice(&live.stdout).unwrap_or_else(|e| panic!("{e}\n{}", both(&live)));
    let verdict = |d: &Value| {
        (
            d["cause"].as_str().unwrap_or("").to_string(),
            d["plane"].as_str().unwrap_or("").to_string(),
            d["confidence"].as_str().unwrap_or("").to_string(),
        )
    };
    let explained = verdict(&doc);
    let live_summary = doc["summary"].as_str().unwrap().to_string();
    // The scheduler's verdict is on the deleted target pod's event, which record reads too.
    assert!(
        live_summary.contains("Insufficient memory"),
        "{live_summary}"
    );
    assert_eq!(
        explained,
        (
            "target-pod-unschedulable".into(),
            "control-plane".into(),
            "high".into()
        ),
        "{doc:#}"
    );

    let mut rec = lab.record(&[]);
    rec.wait_recorded("mig-week");
    rec.wait_recorded("mig-untimed");
    assert_eq!(rec.signal("-TERM"), Some(0), "{}", rec.both());
    assert!(
        rec.out()
            .contains("end-unknown prod/batch-01 mig-untimed failed"),
        "{}",
        rec.both()
    );

    let conn = rusqlite::Connection::open(lab.journal()).unwrap();
    let (cause, plane, ended_at, ended_ms, summary): (String, String, Option<String>, i64, String) = conn
        .query_row(
            "SELECT cause, plane, ended_at, ended_ms, summary FROM migrations WHERE migration = 'mig-week'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap();
    assert_eq!(summary, live_summary);
    assert_eq!(
        (cause.as_str(), plane.as_str()),
        (explained.0.as_str(), explained.1.as_str())
    );
    assert_eq!(ended_at.as_deref(), Some(at(301).as_str()));
    let end: k8s_openapi::jiff::Timestamp = at(301).parse().unwrap();
    assert_eq!(ended_ms, end.as_millisecond());
    let untimed: Option<String> = conn
        .query_row(
            "SELECT ended_at FROM migrations WHERE migration = 'mig-untimed'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(untimed, None, "no object says when it ended");

    // history: the week-old failure a week ago (6d23h, not "3m"), the untimed "end unknown";
    // JSON: its endedAt and ageSeconds null. explain from the journal, once the VMIM is
    // deleted, gives the verdict explain gave live.
    let journal = lab.journal();
    let history = vmctl([
        "history",
        "-A",
        "--since",
        "30d",
        "--journal",
        journal.to_str().unwrap(),
        "-o",
        "json",
    ]);
    let h: Value = serde_json::from_slice(&history.stdout)
        .unwrap_or_else(|e| panic!("{e}\n{}", both(&history)));
    let row = |name: &str| {
        h["records"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["migration"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {h:#}"))
    };
    let age = row("mig-week")["ageSeconds"].as_i64().unwrap();
    assert!((7 * 86400 - 400..7 * 86400 + 120).contains(&age), "{age}");
    assert_eq!(row("mig-untimed")["endedAt"], Value::Null, "{h:#}");
    assert_eq!(row("mig-untimed")["ageSeconds"], Value::Null, "{h:#}");
    let table = vmctl([
        "history",
        "-A",
        "--since",
        "30d",
        "--journal",
        journal.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&table.stdout).to_string();
    let line = |name: &str| {
        text.lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name}\n{text}"))
            .to_string()
    };
    assert!(line("mig-week").starts_with("6d23h ago"), "{text}");
    assert!(line("mig-untimed").starts_with("end unknown"), "{text}");

    lab.server.delete_object(
        Kind::VirtualMachineInstanceMigration,
        Some("prod"),
        "mig-week",
    );
    let from_journal = vmctl([
        "--kubeconfig",
        lab.kubeconfig.to_str().unwrap(),
        "-n",
        "prod",
        "--journal",
        journal.to_str().unwrap(),
        "explain",
        "migration/mig-week",
        "-o",
        "json",
    ]);
    let doc: Value = serde_json::from_slice(&from_journal.stdout)
        .unwrap_or_else(|e| panic!("{e}\n{}", both(&from_journal)));
    assert_eq!(verdict(&doc), explained, "{doc:#}");
    // Every instant to the second, the recorder's clock included.
    let text = doc.to_string();
    let at = text
        .split("\"recordedAt\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("recordedAt in {doc:#}"));
    assert!(at.ends_with('Z') && !at.contains('.'), "{at}");
}

/// What the recorder may not read (a Role without events) is what `explain` may not read:
/// said once on stderr however many migrations end, and in each record's diagnosis (what it
/// assumed, confidence low), never a stop.
#[test]
fn a_refused_events_read_is_said_once_and_assumed_in_the_record() {
    let lab = lab();
    lab.server.inject_fault(
        Fault::status(403)
            .path("/events")
            .message("events is forbidden"),
    );
    let mut rec = lab.record(&[]);
    lab.migrate("mig-1", "db-01");
    rec.wait_recorded("mig-1");
    lab.migrate("mig-2", "batch-01");
    rec.wait_recorded("mig-2");
    assert_eq!(rec.signal("-TERM"), Some(0), "{}", rec.both());
    assert_eq!(
        rec.err().matches("could not read events").count(),
        1,
        "said once\n{}",
        rec.both()
    );
    let conn = rusqlite::Connection::open(lab.journal()).unwrap();
    let details: Vec<String> = conn
        .prepare("SELECT detail FROM details")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(details.len(), 2);
    for d in details {
        let d: Value = serde_json::from_str(&d).unwrap();
        assert_eq!(d["diagnosis"]["confidence"], "low", "{d:#}");
        assert_eq!(d["evidence"]["unread"][0]["status"], 403, "{d:#}");
        assert!(
            d["diagnosis"]["assumptions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a.as_str().unwrap().contains("Could not read events")),
            "{d:#}"
        );
    }
}

/// Many migrations of one namespace ending together (a recorder catching up): their events
/// are read in one LIST of the namespace, not one per object of each (five or so per
/// migration: 50,000 LISTs for 10,000), and the diagnosis is the one `explain` gives, round
/// two included (the deleted target pod the VMIM's events name). A namespace with more events
/// than the recorder holds at once is read object by object, with the same diagnosis.
#[test]
fn a_namespace_of_ended_migrations_has_its_events_read_once_with_explains_diagnosis() {
    for filler_events in [0usize, 1200] {
        let mut objects = kubevirt_sim::cluster("v1.8.4");
        let pod = "virt-launcher-db-01-tgone";
        objects.push(json!({"apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachineInstanceMigration",
            "metadata": {"name": "mig-unsched", "namespace": "prod", "uid": "uid-mig-unsched",
                "creationTimestamp": "2026-12-01T00:00:00Z",
                "labels": {"kubevirt.io/vmi-name": "db-01"}},
            "spec": {"vmiName": "db-01"},
            "status": {"phase": "Failed", "phaseTransitionTimestamps": [
                {"phase": "Pending", "phaseTransitionTimestamp": "2026-12-01T00:00:00Z"},
                {"phase": "Failed", "phaseTransitionTimestamp": "2026-12-01T00:05:01Z"}]}}));
        for i in 0..6 {
            objects.push(json!({"apiVersion": "kubevirt.io/v1",
                "kind": "VirtualMachineInstanceMigration",
                "metadata": {"name": format!("ok-{i}"), "namespace": "prod",
                    "creationTimestamp": "2026-12-01T01:00:00Z"},
                "spec": {"vmiName": "batch-01"},
                "status": {"phase": "Succeeded", "migrationState": {"sourceNode": "node-1",
                    "targetNode": "node-2", "completed": true,
                    "startTimestamp": "2026-12-01T01:00:10Z",
                    "endTimestamp": "2026-12-01T01:00:40Z"}}}));
        }
        let event = |n: &str, kind: &str, name: &str, reason: &str, msg: &str| {
            json!({"apiVersion": "v1", "kind": "Event",
                "metadata": {"name": n, "namespace": "prod"},
                "involvedObject": {"kind": kind, "name": name, "namespace": "prod"},
                "reason": reason, "message": msg, "type": "Warning",
                "firstTimestamp": "2026-12-01T00:00:02Z",
                "lastTimestamp": "2026-12-01T00:00:02Z", "count": 1})
        };
        let vmim = "VirtualMachineInstanceMigration";
        objects.extend([
            event("u.1", vmim, "mig-unsched", "SuccessfulCreate",
                &format!("Created migration target pod prod/{pod} with uuid x for migration uid-mig-unsched")),
            event("u.2", vmim, "mig-unsched", "migrationTargetPodUnschedulable",
                "Migration target pod for VMI [prod/db-01] is currently unschedulable."),
            event("u.3", "Pod", pod, "FailedScheduling",
                "0/2 nodes are available: 2 Insufficient memory."),
        ]);
        for i in 0..filler_events {
            objects.push(event(
                &format!("noise.{i}"),
                "ConfigMap",
                "noise",
                "Noise",
                "noise",
            ));
        }
        let server = Arc::new(FakeApiServer::start_blocking(objects));
        let sim = KubeVirtSim::start(&server, fast());
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = server.write_kubeconfig(dir.path());
        let lab = Lab {
            server,
            sim,
            dir,
            kubeconfig,
        };
        let live = vmctl([
            "--kubeconfig",
            lab.kubeconfig.to_str().unwrap(),
            "-n",
            "prod",
            "explain",
            "migration/mig-unsched",
            "-o",
            "json",
        ]);
        let doc: Value =
            serde_json::from_slice(&live.stdout).unwrap_or_else(|e| panic!("{e}\n{}", both(&live)));
        assert_eq!(doc["cause"], "target-pod-unschedulable", "{doc:#}");
        let summary = doc["summary"].as_str().unwrap().to_string();
        assert!(summary.contains("Insufficient memory"), "{summary}");

        lab.server.reset_requests();
        let mut rec = lab.record(&[]);
        rec.wait_recorded("mig-unsched");
        for i in 0..6 {
            rec.wait_recorded(&format!("ok-{i}"));
        }
        assert_eq!(rec.signal("-TERM"), Some(0), "{}", rec.both());
        let conn = rusqlite::Connection::open(lab.journal()).unwrap();
        let (cause, recorded): (String, String) = conn
            .query_row(
                "SELECT cause, summary FROM migrations WHERE migration = 'mig-unsched'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(
            (cause.as_str(), recorded.as_str()),
            ("target-pod-unschedulable", summary.as_str())
        );

        let event_lists = |selected: bool| {
            lab.server.count_requests(|r| {
                r.is_list()
                    && r.path == "/api/v1/namespaces/prod/events"
                    && r.params.iter().any(|(k, _)| k == "fieldSelector") == selected
            })
        };
        if filler_events == 0 {
            assert!(
                event_lists(false) >= 1,
                "{:#?}",
                lab.server
                    .requests()
                    .iter()
                    .map(|r| r.line())
                    .collect::<Vec<_>>()
            );
            assert_eq!(
                event_lists(true),
                0,
                "one LIST for the namespace, none per object"
            );
        } else {
            // Too many to hold: read object by object (5 or more per migration).
            assert!(event_lists(true) >= 7 * 3, "{}", event_lists(true));
        }
    }
}
