//! The SQLite journal on real files (issue 28): round trip, duplicates, bookmarks, queries,
//! a newer schema, damage, another program's database, concurrent writers (threads and
//! processes), retention, a full disk, and read-only opens that create nothing.
//!
//! Some cases run in a child process (this test binary again, one test selected, an
//! environment variable saying what to do): a second OS process writing at the same time,
//! and the full-disk hook (`VMCTL_JOURNAL_MAX_PAGES`), which must not leak into the other
//! tests' opens in this process.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use serde_json::json;
use vmctl::error::JournalFault;
use vmctl::journal::Access;
use vmctl::journal::sqlite::{BUSY_MS_ENV, MAX_PAGES_ENV, SqliteJournal};
use vmctl::journal::{Journal, JournalSpec};
use vmctl::model::journal::{
    HistoryQuery, MigrationRecord, Platform, RecordOutcome, RecordedBy, Retention,
};

const CHILD_ENV: &str = "VMCTL_JOURNAL_TEST_CHILD";

/// A record with every field set and a detail of some KB.
fn record(i: usize, prefix: &str) -> MigrationRecord {
    let ended_ms = 1_800_000_000_000 + (i as i64) * 60_000;
    MigrationRecord {
        id: format!("kubevirt:{prefix}-{i:06}"),
        cluster: "prod".into(),
        recorded_by: if i.is_multiple_of(5) {
            RecordedBy::Drain
        } else {
            RecordedBy::Record
        },
        platform: Platform::KubeVirt,
        namespace: format!("ns-{}", i % 3),
        vm: format!("vm-{}", i % 10),
        migration: format!("vm-{}-mig-{i}", i % 10),
        source_node: Some(format!("node-{}", i % 7)),
        target_node: Some(format!("node-{}", (i + 1) % 7)),
        source_pod: Some(format!("virt-launcher-vm-{}-aaaaa", i % 10)),
        target_pod: Some(format!("virt-launcher-vm-{}-bbbbb", i % 10)),
        evacuation_node: (i.is_multiple_of(4)).then(|| format!("node-{}", (i + 3) % 7)),
        outcome: if i.is_multiple_of(3) {
            RecordOutcome::Failed
        } else {
            RecordOutcome::Succeeded
        },
        phase: if i.is_multiple_of(3) {
            "Failed"
        } else {
            "Succeeded"
        }
        .into(),
        mode: Some("pre-copy".into()),
        plane: if i.is_multiple_of(3) {
            "data-plane"
        } else {
            "none"
        }
        .into(),
        cause: if i.is_multiple_of(3) {
            "dirty-rate-exceeds-bandwidth"
        } else {
            "none"
        }
        .into(),
        summary: format!("summary {i}"),
        created_at: Some("2027-01-15T08:00:00Z".into()),
        started_at: Some("2027-01-15T08:00:05Z".into()),
        ended_at: Some("2027-01-15T08:01:00Z".into()),
        ended_ms,
        recorded_at: "2027-01-15T08:01:02Z".into(),
        duration_ms: Some(60_000),
        transfer_ms: Some(55_000),
        data_processed_bytes: Some(8 << 30),
        data_total_bytes: Some(8 << 30),
        data_remaining_bytes: Some(0),
        detail: json!({
            "evidence": {"vmiName": format!("vm-{}", i % 10), "pad": "x".repeat(2000)},
            "diagnosis": {"cause": "none", "steps": [1, 2, 3]},
        }),
    }
}

fn records(n: usize, prefix: &str) -> Vec<MigrationRecord> {
    (0..n).map(|i| record(i, prefix)).collect()
}

fn fault_of<T>(r: vmctl::error::Result<T>) -> (JournalFault, String) {
    match r {
        Ok(_) => panic!("expected a journal error"),
        Err(e) => (e.journal_fault().expect("a journal error"), e.to_string()),
    }
}

fn all(with_detail: bool) -> HistoryQuery {
    HistoryQuery {
        with_detail,
        ..HistoryQuery::default()
    }
}

fn ino(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().ino()
}

#[test]
fn round_trip_of_a_full_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/dir/journal.sqlite");
    let j = SqliteJournal::open(&path, Access::Write).unwrap();
    assert!(path.is_file(), "Write creates the directory and the file");
    let mut r = record(1, "rt");
    r.evacuation_node = Some("node-9".into());
    let mut bare = record(2, "rt");
    bare.source_node = None;
    bare.target_node = None;
    bare.mode = None;
    bare.duration_ms = None;
    bare.detail = serde_json::Value::Null;
    let done = j.commit(&[r.clone(), bare.clone()], &[]).unwrap();
    assert_eq!((done.inserted, done.duplicates), (2, 0));
    assert_eq!(j.query(&all(true)).unwrap(), vec![bare.clone(), r.clone()]);
    let light = j.query(&all(false)).unwrap();
    assert_eq!(light[1].detail, serde_json::Value::Null);
    assert_eq!(light[1].id, r.id);
    assert!(j.contains(&r.id).unwrap());
    assert!(!j.contains("kubevirt:nope").unwrap());
    drop(j);
    // Read-only access sees the same.
    let j = SqliteJournal::open(&path, Access::Read).unwrap();
    assert_eq!(j.query(&all(true)).unwrap(), vec![bare, r]);
}

#[test]
fn duplicates_are_skipped_and_bookmarks_share_the_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.sqlite");
    let j = SqliteJournal::open(&path, Access::Write).unwrap();
    let rs = records(10, "dup");
    let bm = |v: &str| vec![("vmim/prod".to_string(), v.to_string())];
    let done = j.commit(&rs[..6], &bm("100")).unwrap();
    assert_eq!((done.inserted, done.duplicates), (6, 0));
    assert_eq!(j.bookmark("vmim/prod").unwrap().as_deref(), Some("100"));
    // Overlapping batch, with a duplicate inside the batch itself.
    let mut batch = rs[4..].to_vec();
    batch.push(rs[9].clone());
    let mut changed = rs[5].clone();
    changed.summary = "should not replace".into();
    batch.push(changed);
    let done = j.commit(&batch, &bm("200")).unwrap();
    assert_eq!((done.inserted, done.duplicates), (4, 4));
    assert_eq!(j.bookmark("vmim/prod").unwrap().as_deref(), Some("200"));
    assert_eq!(j.bookmark("vmi/prod").unwrap(), None);
    let got = j.query(&all(false)).unwrap();
    assert_eq!(got.len(), 10);
    let five = got.iter().find(|r| r.id == rs[5].id).unwrap();
    assert_eq!(five.summary, rs[5].summary, "the first insert stays");
    // A second handle (another connection) reads the same.
    let k = SqliteJournal::open(&path, Access::Write).unwrap();
    assert_eq!(k.bookmark("vmim/prod").unwrap().as_deref(), Some("200"));
    assert_eq!(k.commit(&rs, &[]).unwrap().duplicates, 10);
}

#[test]
fn query_filters_and_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.sqlite");
    let j = SqliteJournal::open(&path, Access::Write).unwrap();
    let rs = records(100, "q");
    j.commit(&rs, &[]).unwrap();
    // An equal ended_ms: the id breaks the tie, descending.
    let mut tie = record(99, "q");
    tie.id = "kubevirt:q-000099b".into();
    j.commit(std::slice::from_ref(&tie), &[]).unwrap();

    let ids = |q: HistoryQuery| -> Vec<String> {
        j.query(&q).unwrap().into_iter().map(|r| r.id).collect()
    };
    let expect = |f: &dyn Fn(&MigrationRecord) -> bool| -> Vec<String> {
        let mut v: Vec<&MigrationRecord> = rs.iter().chain([&tie]).filter(|r| f(r)).collect();
        v.sort_by(|a, b| (b.ended_ms, &b.id).cmp(&(a.ended_ms, &a.id)));
        v.into_iter().map(|r| r.id.clone()).collect()
    };

    let everything = ids(HistoryQuery::default());
    assert_eq!(everything.len(), 101);
    assert_eq!(everything[0], tie.id);
    assert_eq!(everything[1], rs[99].id);
    assert_eq!(everything, expect(&|_| true));

    let q = HistoryQuery {
        vm: Some("vm-3".into()),
        ..Default::default()
    };
    assert_eq!(ids(q), expect(&|r| r.vm == "vm-3"));
    let q = HistoryQuery {
        vm: Some("vm-3".into()),
        namespace: Some("ns-1".into()),
        ..Default::default()
    };
    let got = ids(q);
    assert!(!got.is_empty());
    assert_eq!(got, expect(&|r| r.vm == "vm-3" && r.namespace == "ns-1"));

    let node = |r: &MigrationRecord| {
        let n = Some("node-2".to_string());
        r.source_node == n || r.target_node == n || r.evacuation_node == n
    };
    let q = HistoryQuery {
        node: Some("node-2".into()),
        ..Default::default()
    };
    let got = ids(q);
    assert!(
        got.len() > 2 * 100 / 7,
        "source, target and evacuation: {got:?}"
    );
    assert_eq!(got, expect(&node));

    let since = rs[80].ended_ms;
    let q = HistoryQuery {
        since_ms: Some(since),
        ..Default::default()
    };
    assert_eq!(ids(q), expect(&|r| r.ended_ms >= since));

    let q = HistoryQuery {
        cause: Some("dirty-rate-exceeds-bandwidth".into()),
        outcome: Some(RecordOutcome::Failed),
        namespace: Some("ns-0".into()),
        ..Default::default()
    };
    assert_eq!(
        ids(q),
        expect(&|r| r.outcome == RecordOutcome::Failed && r.namespace == "ns-0")
    );
    let q = HistoryQuery {
        outcome: Some(RecordOutcome::Aborted),
        ..Default::default()
    };
    assert!(ids(q).is_empty());

    let q = HistoryQuery {
        migration: Some(rs[42].migration.clone()),
        limit: Some(1),
        with_detail: true,
        ..Default::default()
    };
    assert_eq!(j.query(&q).unwrap(), vec![rs[42].clone()]);

    let q = HistoryQuery {
        cluster: Some("other".into()),
        ..Default::default()
    };
    assert!(ids(q).is_empty());

    let q = HistoryQuery {
        node: Some("node-2".into()),
        since_ms: Some(since),
        limit: Some(3),
        ..Default::default()
    };
    let want: Vec<String> = expect(&|r| node(r) && r.ended_ms >= since)
        .into_iter()
        .take(3)
        .collect();
    assert_eq!(ids(q), want);

    // Values are bound, not spliced: a quote is just a name.
    let q = HistoryQuery {
        vm: Some("x' OR '1'='1".into()),
        ..Default::default()
    };
    assert!(ids(q).is_empty());
}

/// A journal at schema version `v` (a real one, its header's user_version raised).
fn journal_at_version(path: &Path, v: i64) {
    let j = SqliteJournal::open(path, Access::Write).unwrap();
    j.commit(&records(20, "v"), &[]).unwrap();
    drop(j);
    let c = rusqlite::Connection::open(path).unwrap();
    c.pragma_update(None, "user_version", v).unwrap();
    drop(c);
}

#[test]
fn a_newer_schema_is_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.sqlite");
    journal_at_version(&path, vmctl::journal::SCHEMA_VERSION + 1);
    let before = std::fs::read(&path).unwrap();
    for access in [Access::Write, Access::Read] {
        let (fault, msg) = fault_of(SqliteJournal::open(&path, access));
        assert_eq!(fault, JournalFault::NewerSchema, "{msg}");
        assert!(
            msg.contains("newer vmctl (schema 2; this vmctl knows up to 1)"),
            "{msg}"
        );
        assert!(msg.contains(&path.display().to_string()), "{msg}");
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "byte for byte");
}

#[test]
fn another_programs_database_is_not_a_journal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.sqlite");
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .unwrap();
    drop(c);
    let before = std::fs::read(&path).unwrap();
    for access in [Access::Write, Access::Read] {
        let (fault, msg) = fault_of(SqliteJournal::open(&path, access));
        assert_eq!(fault, JournalFault::Corrupt, "{msg}");
        assert!(msg.contains("is not a vmctl journal"), "{msg}");
    }
    assert_eq!(std::fs::read(&path).unwrap(), before);

    // Not SQLite at all.
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "x".repeat(10_000)).unwrap();
    for access in [Access::Write, Access::Read] {
        let (fault, msg) = fault_of(SqliteJournal::open(&text, access));
        assert_eq!(fault, JournalFault::Corrupt, "{msg}");
        assert!(msg.contains("left as it is"), "{msg}");
    }
    assert_eq!(std::fs::read(&text).unwrap(), "x".repeat(10_000).as_bytes());
}

/// A closed journal of `n` records (everything checkpointed into the file).
fn full_journal(path: &Path, n: usize) -> Vec<u8> {
    let j = SqliteJournal::open(path, Access::Write).unwrap();
    for chunk in records(n, "c").chunks(100) {
        j.commit(chunk, &[]).unwrap();
    }
    drop(j);
    assert!(!path.with_extension("sqlite-wal").exists());
    std::fs::read(path).unwrap()
}

/// Opens and reads everything: the first fault on the way, if any.
fn open_and_read(path: &Path, access: Access) -> Option<(JournalFault, String)> {
    let j = match SqliteJournal::open(path, access) {
        Ok(j) => j,
        Err(e) => return Some((e.journal_fault().unwrap(), e.to_string())),
    };
    match j.query(&all(true)) {
        Ok(_) => None,
        Err(e) => Some((e.journal_fault().unwrap(), e.to_string())),
    }
}

#[test]
fn damage_in_the_middle_is_reported_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.sqlite");
    let mut bytes = full_journal(&path, 2000);
    let mid = bytes.len() / 2 / 4096 * 4096;
    for (k, b) in bytes[mid..mid + 16 * 4096].iter_mut().enumerate() {
        *b = (k * 7 + 13) as u8;
    }
    std::fs::write(&path, &bytes).unwrap();
    let inode = ino(&path);
    for access in [Access::Write, Access::Read] {
        let (fault, msg) = open_and_read(&path, access).expect("damage is noticed");
        assert_eq!(fault, JournalFault::Corrupt, "{msg}");
        assert!(msg.contains("is damaged"), "{msg}");
        assert!(msg.contains("move it aside"), "{msg}");
    }
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "never repaired");
    assert_eq!(ino(&path), inode, "never recreated");
}

#[test]
fn damage_in_the_header_is_reported_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.sqlite");
    let mut bytes = full_journal(&path, 300);
    bytes[..16].copy_from_slice(b"garbage garbage\0");
    std::fs::write(&path, &bytes).unwrap();
    let inode = ino(&path);
    for access in [Access::Write, Access::Read] {
        let (fault, msg) = open_and_read(&path, access).expect("damage is noticed");
        assert_eq!(fault, JournalFault::Corrupt, "{msg}");
        assert!(msg.contains("left as it is"), "{msg}");
    }
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(ino(&path), inode);
}

#[test]
fn read_access_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing/j.sqlite");
    let (fault, msg) = fault_of(SqliteJournal::open(&path, Access::Read));
    assert_eq!(fault, JournalFault::Missing, "{msg}");
    assert!(msg.contains("`vmctl record`"), "{msg}");
    assert!(!dir.path().join("missing").exists());

    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    let (fault, _) = fault_of(SqliteJournal::open(&empty, Access::Read));
    assert_eq!(fault, JournalFault::Missing);
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
}

#[test]
fn retention_by_age_and_by_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.sqlite");
    let j = SqliteJournal::open(&path, Access::Write).unwrap();
    let rs = records(1000, "r");
    for chunk in rs.chunks(200) {
        j.commit(chunk, &[]).unwrap();
    }
    // By age: records 0..=99 ended before now - max_age.
    let now = rs[600].ended_ms;
    let age = now - rs[100].ended_ms;
    let p = j
        .prune(
            &Retention {
                max_age_ms: Some(age),
                max_bytes: None,
            },
            now,
        )
        .unwrap();
    assert_eq!((p.by_age, p.by_size), (100, 0));
    let left = j.query(&all(false)).unwrap();
    assert_eq!(left.len(), 900);
    assert_eq!(left.last().unwrap().id, rs[100].id);

    // By size: a third of the file's size keeps the newest records only.
    let size = std::fs::metadata(&path).unwrap().len();
    let max = size / 3;
    let p = j
        .prune(
            &Retention {
                max_age_ms: None,
                max_bytes: Some(max),
            },
            now,
        )
        .unwrap();
    assert_eq!(p.by_age, 0);
    assert!(p.by_size > 500, "{p:?}");
    let left = j.query(&all(true)).unwrap();
    assert_eq!(left.len(), 900 - p.by_size as usize);
    assert_eq!(left[0].id, rs[999].id, "the newest stay");
    let oldest_kept = &left.last().unwrap().id;
    assert_eq!(
        oldest_kept,
        &rs[1000 - left.len()].id,
        "the oldest go first"
    );
    drop(j);
    // The file shrank (incremental vacuum) to the bound.
    let after = std::fs::metadata(&path).unwrap().len();
    assert!(after <= max, "{after} > {max}");
    // Nothing more to do.
    let j = SqliteJournal::open(&path, Access::Write).unwrap();
    let p = j
        .prune(
            &Retention {
                max_age_ms: Some(age),
                max_bytes: Some(max),
            },
            now,
        )
        .unwrap();
    assert_eq!((p.by_age, p.by_size), (0, 0));
}

fn child(what: &str, path: &Path, extra: &[(&str, &str)]) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["child_entry", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, what)
        .env("VMCTL_JOURNAL_TEST_PATH", path);
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

/// Writes `n` records with ids `prefix-…` in batches of 1 to 40, as a writer would.
fn write_all(path: &Path, prefix: &str, n: usize) {
    let j = SqliteJournal::open(path, Access::Write).unwrap();
    let rs = records(n, prefix);
    let mut i = 0;
    let mut size = 1;
    while i < rs.len() {
        let end = (i + size).min(rs.len());
        let bm = vec![(format!("writer/{prefix}"), end.to_string())];
        let done = j.commit(&rs[i..end], &bm).unwrap();
        assert_eq!(done.inserted, end - i);
        i = end;
        size = size % 40 + 1;
    }
}

/// Not a test by itself: what a child process does (nothing without `CHILD_ENV`).
#[test]
fn child_entry() {
    let Ok(what) = std::env::var(CHILD_ENV) else {
        return;
    };
    let path = PathBuf::from(std::env::var("VMCTL_JOURNAL_TEST_PATH").unwrap());
    match what.split_once(':') {
        Some(("write", prefix)) => write_all(&path, prefix, 2000),
        _ if what == "full" => fill_until_full(&path),
        _ if what == "busy" => {
            let j = SqliteJournal::open(&path, Access::Write).unwrap();
            let (fault, msg) = fault_of(j.commit(&records(1, "busy"), &[]));
            assert_eq!(fault, JournalFault::Busy, "{msg}");
            assert!(msg.contains("another writer held it locked"), "{msg}");
            // Reading is not blocked by a writer (WAL).
            assert_eq!(j.query(&all(false)).unwrap().len(), 5);
        }
        _ => panic!("unknown child job {what}"),
    }
}

#[test]
fn concurrent_writers_in_threads_and_processes() {
    let dir = tempfile::tempdir().unwrap();
    // A fresh path: the writers also race to create the file and its schema.
    let path = dir.path().join("new/j.sqlite");
    let procs = [child("write:p1", &path, &[]), child("write:p2", &path, &[])];
    let threads: Vec<_> = ["t1", "t2"]
        .into_iter()
        .map(|prefix| {
            let path = path.clone();
            std::thread::spawn(move || write_all(&path, prefix, 2000))
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    for mut p in procs {
        assert!(p.wait().unwrap().success());
    }
    let j = SqliteJournal::open(&path, Access::Read).unwrap();
    let got = j.query(&all(false)).unwrap();
    assert_eq!(got.len(), 8000);
    let mut ids: Vec<String> = got.into_iter().map(|r| r.id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 8000);
    for prefix in ["p1", "p2", "t1", "t2"] {
        for i in [0, 999, 1999] {
            assert!(j.contains(&record(i, prefix).id).unwrap());
        }
        assert_eq!(
            j.bookmark(&format!("writer/{prefix}")).unwrap().as_deref(),
            Some("2000")
        );
    }
}

/// In a child with `VMCTL_JOURNAL_MAX_PAGES`: commits batches until SQLite says the journal
/// is full, then checks that what was committed before is intact and the failed batch left
/// nothing (not even its bookmark).
fn fill_until_full(path: &Path) {
    let j = SqliteJournal::open(path, Access::Write).unwrap();
    let rs = records(10_000, "full");
    let mut committed = 0;
    let mut full = None;
    for (k, chunk) in rs.chunks(10).enumerate() {
        match j.commit(chunk, &[("bm".to_string(), k.to_string())]) {
            Ok(_) => committed += chunk.len(),
            Err(e) => {
                full = Some((k, e));
                break;
            }
        }
    }
    let (k, e) = full.expect("the journal fills up");
    assert_eq!(e.journal_fault(), Some(JournalFault::Full), "{e}");
    assert!(e.to_string().contains("is full"), "{e}");
    assert!(committed >= 10, "{committed}");
    assert_eq!(j.bookmark("bm").unwrap(), Some((k - 1).to_string()));
    let got = j.query(&all(true)).unwrap();
    assert_eq!(got.len(), committed);
    // A second failure is the same fault, and reading still works.
    let (fault, _) = fault_of(j.commit(&rs[committed..committed + 10], &[]));
    assert_eq!(fault, JournalFault::Full);
    println!("COMMITTED {committed}");
}

#[test]
fn a_full_disk_is_full_and_keeps_what_was_committed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.sqlite");
    let out = child("full", &path, &[(MAX_PAGES_ENV, "100")])
        .wait_with_output()
        .unwrap();
    assert!(out.status.success());
    // Without the limit: everything is there, intact, and writing goes on.
    let j = SqliteJournal::open(&path, Access::Write).unwrap();
    let got = j.query(&all(true)).unwrap();
    assert!(got.len() >= 10);
    let mut want: Vec<MigrationRecord> = records(got.len(), "full");
    want.reverse();
    assert_eq!(got, want);
    let more = records(got.len() + 10, "full");
    assert_eq!(j.commit(&more, &[]).unwrap().inserted, 10);
}

#[test]
fn a_writer_held_up_too_long_is_busy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.sqlite");
    let j = SqliteJournal::open(&path, Access::Write).unwrap();
    j.commit(&records(5, "b"), &[]).unwrap();
    // Another program holds the write lock for the whole time the child tries.
    let mut other = rusqlite::Connection::open(&path).unwrap();
    let tx = other
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .unwrap();
    let status = child("busy", &path, &[(BUSY_MS_ENV, "300")])
        .wait()
        .unwrap();
    assert!(status.success());
    tx.rollback().unwrap();
    // Once it is released, writing goes on.
    assert_eq!(j.commit(&records(6, "b"), &[]).unwrap().inserted, 1);
}

#[test]
fn rows_this_vmctl_cannot_read_are_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.sqlite");
    let j = SqliteJournal::open(&path, Access::Write).unwrap();
    j.commit(&records(3, "u"), &[]).unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute_batch("UPDATE details SET detail = '{broken' WHERE seq = 1;")
        .unwrap();
    let (fault, msg) = fault_of(j.query(&all(true)));
    assert_eq!(fault, JournalFault::Corrupt, "{msg}");
    assert!(msg.contains("cannot read"), "{msg}");
    // Without the detail the rest still reads.
    assert_eq!(j.query(&all(false)).unwrap().len(), 3);
    other
        .execute_batch("UPDATE migrations SET outcome = 'exploded' WHERE seq = 2;")
        .unwrap();
    let (fault, msg) = fault_of(j.query(&all(false)));
    assert_eq!(fault, JournalFault::Corrupt, "{msg}");
    assert!(msg.contains("exploded"), "{msg}");
}

/// Through the `Journal` the commands use (`--journal PATH`).
#[tokio::test]
async fn through_the_journal_enum() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/j.sqlite");
    let spec = JournalSpec::parse(&format!("sqlite://{}", path.display())).unwrap();
    let err = Journal::open(&spec, Access::Read).await.err().unwrap();
    assert_eq!(err.journal_fault(), Some(JournalFault::Missing));
    assert_eq!(err.exit_code(), 7);
    let j = Journal::open(&spec, Access::Write).await.unwrap();
    assert_eq!(j.describe(), path.display().to_string());
    let rs = records(4, "e");
    let done = j
        .commit(&rs, &[("vmim/prod".into(), "42".into())])
        .await
        .unwrap();
    assert_eq!(done.inserted, 4);
    assert!(j.contains(&rs[2].id).await.unwrap());
    assert_eq!(
        j.bookmark("vmim/prod").await.unwrap().as_deref(),
        Some("42")
    );
    let r = Journal::open(&spec, Access::Read).await.unwrap();
    let got = r
        .query(&HistoryQuery {
            limit: Some(2),
            ..HistoryQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].id, rs[3].id);
    let p = j
        .prune(
            &Retention {
                max_age_ms: Some(0),
                max_bytes: None,
            },
            rs[2].ended_ms,
        )
        .await
        .unwrap();
    assert_eq!(p.by_age, 2);
}

/// Writers that open a new file at the same moment: one creates the schema, the others see
/// either nothing or all of it (never a half-made journal taken for another program's
/// database), and none gives up on the lock the creator holds.
#[test]
fn writers_racing_to_create_the_file() {
    let dir = tempfile::tempdir().unwrap();
    for k in 0..40 {
        let path = dir.path().join(format!("j{k}.sqlite"));
        let start = std::sync::Arc::new(std::sync::Barrier::new(4));
        let opens: Vec<_> = (0..4)
            .map(|_| {
                let path = path.clone();
                let start = start.clone();
                std::thread::spawn(move || {
                    start.wait();
                    SqliteJournal::open(&path, Access::Write).map(|_| ())
                })
            })
            .collect();
        for open in opens {
            if let Err(e) = open.join().unwrap() {
                panic!("{e}");
            }
        }
    }
}
