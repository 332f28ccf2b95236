//! The PostgreSQL journal (issue 28) against a real server: `tests/support/postgres.sh up DIR
//! PORT` starts a throwaway one and prints its URL; set `VMCTL_TEST_POSTGRES` to it. Without
//! it the cases print `SKIPPED` (and fail when `VMCTL_REQUIRE_POSTGRES=1`, as in `.ci/run`).
//! Each case creates its own database (the URL's role needs CREATEDB) and drops it at the
//! end, so the cases run in parallel.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tokio_postgres::NoTls;
use vmctl::error::JournalFault;
use vmctl::journal::{Access, Journal, JournalSpec};
use vmctl::model::journal::{
    HistoryQuery, MigrationRecord, Platform, RecordOutcome, RecordedBy, Retention,
};

/// The server's URL, or None (the case is skipped) when there is none.
fn server(case: &str) -> Option<String> {
    match std::env::var("VMCTL_TEST_POSTGRES") {
        Ok(url) if !url.trim().is_empty() => Some(url.trim().to_string()),
        _ => {
            assert!(
                std::env::var("VMCTL_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "VMCTL_REQUIRE_POSTGRES=1 but VMCTL_TEST_POSTGRES is not set \
                 (tests/support/postgres.sh up DIR PORT prints it)"
            );
            eprintln!(
                "SKIPPED {case}: VMCTL_TEST_POSTGRES is not set (tests/support/postgres.sh up DIR PORT prints a URL for it)"
            );
            None
        }
    }
}

/// `url` with another database name.
fn with_database(url: &str, db: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[start..];
    let query = rest.find('?').unwrap_or(rest.len());
    let path = rest[..query].find('/').unwrap_or(query);
    format!("{}{}/{db}{}", &url[..start], &rest[..path], &rest[query..])
}

/// `url` without one query parameter.
fn without(url: &str, key: &str) -> String {
    let Some((base, query)) = url.split_once('?') else {
        return url.to_string();
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|kv| kv.split('=').next() != Some(key))
        .collect();
    if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    }
}

/// `url` with one more query parameter.
fn with(url: &str, kv: &str) -> String {
    format!("{url}{}{kv}", if url.contains('?') { '&' } else { '?' })
}

/// A plain connection for the cases' own SQL (no TLS; `sslrootcert` is libpq's, not
/// tokio-postgres's).
async fn admin(url: &str) -> tokio_postgres::Client {
    let url = without(url, "sslrootcert");
    let (client, connection) = tokio_postgres::connect(&url, NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

/// A database of its own for one case.
struct Db {
    server: String,
    name: String,
    url: String,
}

impl Db {
    async fn new(server: &str, case: &str) -> Db {
        static N: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "vmctl_t_{case}_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let admin = admin(server).await;
        admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
            .await
            .unwrap();
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap();
        Db {
            server: server.to_string(),
            url: with_database(server, &name),
            name,
        }
    }

    fn spec(&self) -> JournalSpec {
        JournalSpec::parse(&self.url).unwrap()
    }

    async fn open(&self, access: Access) -> Journal {
        Journal::open(&self.spec(), access).await.unwrap()
    }

    /// A plain connection to this case's database.
    async fn sql(&self) -> tokio_postgres::Client {
        admin(&self.url).await
    }

    /// Drops the database (best effort: a leftover on a throwaway server harms no case).
    async fn drop(self) {
        let sql = format!("DROP DATABASE {} WITH (FORCE)", self.name);
        if let Err(e) = admin(&self.server).await.batch_execute(&sql).await {
            eprintln!("{sql}: {e:?}");
        }
    }
}

fn record(id: &str, ended_ms: i64) -> MigrationRecord {
    MigrationRecord {
        id: id.to_string(),
        cluster: "prod-east".into(),
        recorded_by: RecordedBy::Record,
        platform: Platform::KubeVirt,
        namespace: "default".into(),
        vm: "vm-1".into(),
        migration: format!("mig-{id}"),
        source_node: Some("node-1".into()),
        target_node: Some("node-2".into()),
        source_pod: Some("virt-launcher-vm-1-abcde".into()),
        target_pod: Some("virt-launcher-vm-1-fghij".into()),
        evacuation_node: None,
        outcome: RecordOutcome::Failed,
        phase: "Failed".into(),
        mode: Some("pre-copy".into()),
        plane: "data-plane".into(),
        cause: "bandwidth-too-low".into(),
        summary: "the guest dirties memory faster than the link sends it".into(),
        created_at: Some("2026-12-01T10:00:00Z".into()),
        started_at: Some("2026-12-01T10:00:02Z".into()),
        ended_at: Some("2026-12-01T10:05:00Z".into()),
        ended_ms,
        recorded_at: "2026-12-01T10:05:01Z".into(),
        duration_ms: Some(300_000),
        transfer_ms: Some(298_000),
        data_processed_bytes: Some(8 << 30),
        data_total_bytes: Some(4 << 30),
        data_remaining_bytes: Some(1 << 28),
        detail: json!({
            "evidence": {"vmim": {"metadata": {"name": format!("mig-{id}"), "uid": id}},
                          "pods": [{"name": "a", "phase": "Running"}, null, 1.5, true]},
            "diagnosis": {"plane": "data-plane", "cause": "bandwidth-too-low"},
            "progressSeries": [[0, 0], [1000, 1048576]],
        }),
    }
}

fn all() -> HistoryQuery {
    HistoryQuery {
        with_detail: true,
        ..HistoryQuery::default()
    }
}

fn ids(records: &[MigrationRecord]) -> Vec<&str> {
    records.iter().map(|r| r.id.as_str()).collect()
}

#[tokio::test]
async fn the_schema_is_created_once_when_two_writers_start_at_once() {
    let Some(server) = server("schema_once") else {
        return;
    };
    let db = Db::new(&server, "schema_once").await;
    let spec = db.spec();
    let (a, b, c) = tokio::join!(
        Journal::open(&spec, Access::Write),
        Journal::open(&spec, Access::Write),
        Journal::open(&spec, Access::Write),
    );
    let (a, b, c) = (a.unwrap(), b.unwrap(), c.unwrap());
    drop((b, c));
    let again = db.open(Access::Write).await;
    let sql = db.sql().await;
    let row = sql
        .query_one("SELECT count(*), max(version) FROM vmctl_schema", &[])
        .await
        .unwrap();
    assert_eq!((row.get::<_, i64>(0), row.get::<_, i64>(1)), (1, 1));
    // Both handles work on the one schema.
    a.commit(&[record("kubevirt:1", 1)], &[]).await.unwrap();
    assert!(again.contains("kubevirt:1").await.unwrap());
    assert!(a.describe().contains(&db.name), "{}", a.describe());
    db.drop().await;
}

#[tokio::test]
async fn a_full_record_round_trips_with_its_detail() {
    let Some(server) = server("round_trip") else {
        return;
    };
    let db = Db::new(&server, "round_trip").await;
    let j = db.open(Access::Write).await;
    let mut full = record("kubevirt:full", 1_764_583_500_000);
    full.evacuation_node = Some("node-1".into());
    let mut sparse = record("libvirt:qemu+tcp://h/system/u/1", 5);
    sparse.recorded_by = RecordedBy::Migrate;
    sparse.platform = Platform::Libvirt;
    sparse.outcome = RecordOutcome::Vanished;
    sparse.source_node = None;
    sparse.target_node = None;
    sparse.source_pod = None;
    sparse.target_pod = None;
    sparse.mode = None;
    sparse.created_at = None;
    sparse.started_at = None;
    sparse.ended_at = None;
    sparse.duration_ms = None;
    sparse.transfer_ms = None;
    sparse.data_processed_bytes = None;
    sparse.data_total_bytes = None;
    sparse.data_remaining_bytes = None;
    sparse.detail = serde_json::Value::Null;
    let done = j
        .commit(&[full.clone(), sparse.clone()], &[])
        .await
        .unwrap();
    assert_eq!((done.inserted, done.duplicates), (2, 0));

    let reader = db.open(Access::Read).await;
    let got = reader.query(&all()).await.unwrap();
    assert_eq!(got, vec![full.clone(), sparse.clone()]);
    // Without detail: everything else.
    let got = reader.query(&HistoryQuery::default()).await.unwrap();
    let mut bare = full.clone();
    bare.detail = serde_json::Value::Null;
    assert_eq!(got, vec![bare, sparse]);
    assert!(reader.contains("kubevirt:full").await.unwrap());
    assert!(!reader.contains("kubevirt:other").await.unwrap());
    db.drop().await;
}

#[tokio::test]
async fn duplicates_are_skipped_and_the_first_copy_stays() {
    let Some(server) = server("duplicates") else {
        return;
    };
    let db = Db::new(&server, "duplicates").await;
    let j = db.open(Access::Write).await;
    let done = j
        .commit(&[record("a", 1), record("b", 2)], &[])
        .await
        .unwrap();
    assert_eq!((done.inserted, done.duplicates), (2, 0));
    let mut changed = record("b", 2);
    changed.cause = "something-else".into();
    let done = j
        .commit(&[changed, record("c", 3), record("c", 3)], &[])
        .await
        .unwrap();
    assert_eq!((done.inserted, done.duplicates), (1, 2));
    let got = j.query(&all()).await.unwrap();
    assert_eq!(ids(&got), ["c", "b", "a"]);
    assert_eq!(got[1].cause, "bandwidth-too-low");
    db.drop().await;
}

/// An id no btree index can hold (PostgreSQL: index rows are at most ~2.7 kB; random text
/// does not compress): its INSERT fails inside the transaction.
fn unindexable_id() -> String {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut s = String::from("zz-");
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.push(char::from(b'!' + (x % 90) as u8));
    }
    s
}

#[tokio::test]
async fn records_and_bookmarks_commit_together_or_not_at_all() {
    let Some(server) = server("atomic") else {
        return;
    };
    let db = Db::new(&server, "atomic").await;
    let j = db.open(Access::Write).await;
    let bm = |v: &str| vec![("prod-east/vmims".to_string(), v.to_string())];
    j.commit(&[record("a", 1)], &bm("100")).await.unwrap();
    assert_eq!(
        j.bookmark("prod-east/vmims").await.unwrap().as_deref(),
        Some("100")
    );
    assert_eq!(j.bookmark("prod-east/vmis").await.unwrap(), None);

    let err = j
        .commit(&[record("b", 2), record(&unindexable_id(), 3)], &bm("200"))
        .await
        .unwrap_err();
    assert_eq!(err.journal_fault(), Some(JournalFault::Other), "{err}");
    assert!(err.to_string().contains("SQLSTATE 54000"), "{err}");
    assert!(!j.contains("b").await.unwrap());
    assert_eq!(
        j.bookmark("prod-east/vmims").await.unwrap().as_deref(),
        Some("100")
    );
    // The handle is still usable after the rollback; a bookmark alone is updated.
    let done = j.commit(&[], &bm("300")).await.unwrap();
    assert_eq!((done.inserted, done.duplicates), (0, 0));
    assert_eq!(
        j.bookmark("prod-east/vmims").await.unwrap().as_deref(),
        Some("300")
    );
    db.drop().await;
}

#[tokio::test]
async fn queries_filter_and_order_newest_first() {
    let Some(server) = server("query") else {
        return;
    };
    let db = Db::new(&server, "query").await;
    let j = db.open(Access::Write).await;
    let mut rs = Vec::new();
    for (id, ended, cluster, ns, vm, src, dst, evac, cause, outcome) in [
        (
            "r1",
            1000,
            "c1",
            "ns1",
            "vm-a",
            "n1",
            "n2",
            None,
            "x",
            RecordOutcome::Failed,
        ),
        (
            "r2",
            2000,
            "c1",
            "ns1",
            "vm-b",
            "n2",
            "n3",
            None,
            "y",
            RecordOutcome::Succeeded,
        ),
        (
            "r3",
            3000,
            "c2",
            "ns2",
            "vm-a",
            "n3",
            "n4",
            Some("n7"),
            "x",
            RecordOutcome::Failed,
        ),
        (
            "r4",
            3000,
            "c1",
            "ns2",
            "vm-c",
            "n4",
            "n1",
            None,
            "x",
            RecordOutcome::Aborted,
        ),
        (
            "r5",
            5000,
            "c1",
            "ns1",
            "vm-a",
            "n5",
            "n6",
            Some("n5"),
            "z",
            RecordOutcome::Failed,
        ),
    ] {
        let mut r = record(id, ended);
        r.cluster = cluster.into();
        r.namespace = ns.into();
        r.vm = vm.into();
        r.migration = format!("m-{id}");
        r.source_node = Some(src.into());
        r.target_node = Some(dst.into());
        r.evacuation_node = evac.map(Into::into);
        r.cause = cause.into();
        r.outcome = outcome;
        rs.push(r);
    }
    j.commit(&rs, &[]).await.unwrap();
    let q = |f: fn(&mut HistoryQuery)| {
        let mut q = HistoryQuery::default();
        f(&mut q);
        q
    };
    let cases: Vec<(HistoryQuery, Vec<&str>)> = vec![
        (q(|_| {}), vec!["r5", "r4", "r3", "r2", "r1"]),
        (
            q(|q| q.cluster = Some("c1".into())),
            vec!["r5", "r4", "r2", "r1"],
        ),
        (q(|q| q.namespace = Some("ns2".into())), vec!["r4", "r3"]),
        (q(|q| q.vm = Some("vm-a".into())), vec!["r5", "r3", "r1"]),
        (
            q(|q| {
                q.vm = Some("vm-a".into());
                q.namespace = Some("ns1".into());
            }),
            vec!["r5", "r1"],
        ),
        (q(|q| q.migration = Some("m-r2".into())), vec!["r2"]),
        // Source, target or the node an evacuation drained.
        (q(|q| q.node = Some("n1".into())), vec!["r4", "r1"]),
        (q(|q| q.node = Some("n7".into())), vec!["r3"]),
        (q(|q| q.node = Some("n5".into())), vec!["r5"]),
        (q(|q| q.since_ms = Some(3000)), vec!["r5", "r4", "r3"]),
        (q(|q| q.cause = Some("x".into())), vec!["r4", "r3", "r1"]),
        (
            q(|q| q.outcome = Some(RecordOutcome::Failed)),
            vec!["r5", "r3", "r1"],
        ),
        (q(|q| q.limit = Some(2)), vec!["r5", "r4"]),
        (q(|q| q.limit = Some(0)), vec![]),
        (
            q(|q| {
                q.cause = Some("x".into());
                q.since_ms = Some(2000);
                q.limit = Some(1);
            }),
            vec!["r4"],
        ),
        (q(|q| q.node = Some("nowhere".into())), vec![]),
        // A filter is a value, never SQL.
        (q(|q| q.vm = Some("' OR '1'='1".into())), vec![]),
    ];
    for (query, want) in cases {
        let got = j.query(&query).await.unwrap();
        assert_eq!(ids(&got), want, "{query:?}");
        assert!(got.iter().all(|r| r.detail.is_null()));
    }
    db.drop().await;
}

#[tokio::test]
async fn a_newer_schema_is_refused() {
    let Some(server) = server("newer") else {
        return;
    };
    let db = Db::new(&server, "newer").await;
    drop(db.open(Access::Write).await);
    db.sql()
        .await
        .execute("INSERT INTO vmctl_schema (version) VALUES (2)", &[])
        .await
        .unwrap();
    for access in [Access::Write, Access::Read] {
        let err = Journal::open(&db.spec(), access).await.err().unwrap();
        assert_eq!(
            err.journal_fault(),
            Some(JournalFault::NewerSchema),
            "{err}"
        );
        let text = err.to_string();
        assert!(
            text.contains("newer vmctl") && text.contains("version 2"),
            "{text}"
        );
    }
    db.drop().await;
}

#[tokio::test]
async fn another_programs_migrations_table_is_left_alone_and_a_schema_of_its_own_works() {
    let Some(server) = server("foreign") else {
        return;
    };
    let db = Db::new(&server, "foreign").await;
    db.sql()
        .await
        .batch_execute(
            "CREATE TABLE migrations (version text); INSERT INTO migrations VALUES ('x')",
        )
        .await
        .unwrap();
    let err = Journal::open(&db.spec(), Access::Write)
        .await
        .err()
        .unwrap();
    assert_eq!(err.journal_fault(), Some(JournalFault::Other), "{err}");
    assert!(
        err.to_string().contains("tables of another program"),
        "{err}"
    );
    // Nothing of vmctl's was left behind (one transaction), the other table untouched.
    let sql = db.sql().await;
    let row = sql
        .query_one(
            "SELECT to_regclass('vmctl_schema') IS NULL, (SELECT count(*) FROM migrations)",
            &[],
        )
        .await
        .unwrap();
    assert!(row.get::<_, bool>(0));
    assert_eq!(row.get::<_, i64>(1), 1);
    // In a schema of its own, beside it.
    sql.batch_execute("CREATE SCHEMA vmctl").await.unwrap();
    let url = with(&db.url, "options=-csearch_path%3Dvmctl");
    let j = Journal::open(&JournalSpec::parse(&url).unwrap(), Access::Write)
        .await
        .unwrap();
    j.commit(&[record("a", 1)], &[]).await.unwrap();
    let n: i64 = sql
        .query_one("SELECT count(*) FROM vmctl.migrations", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
    drop(j);
    db.drop().await;
}

#[tokio::test]
async fn reading_a_database_without_a_journal_is_missing_and_creates_nothing() {
    let Some(server) = server("missing") else {
        return;
    };
    let db = Db::new(&server, "missing").await;
    let err = Journal::open(&db.spec(), Access::Read).await.err().unwrap();
    assert_eq!(err.journal_fault(), Some(JournalFault::Missing), "{err}");
    assert!(err.to_string().contains("no vmctl journal in"), "{err}");
    let tables: i64 = db
        .sql()
        .await
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(tables, 0);
    // A database that does not exist at all cannot be reached.
    let gone = JournalSpec::parse(&with_database(&server, "vmctl_no_such_db")).unwrap();
    let err = Journal::open(&gone, Access::Read).await.err().unwrap();
    assert_eq!(
        err.journal_fault(),
        Some(JournalFault::Unreachable),
        "{err}"
    );
    assert!(err.to_string().contains("3D000"), "{err}");
    db.drop().await;
}

#[tokio::test]
async fn prune_by_age_then_by_size() {
    let Some(server) = server("prune") else {
        return;
    };
    let db = Db::new(&server, "prune").await;
    let j = db.open(Access::Write).await;
    let records: Vec<_> = (0..100)
        .map(|i| {
            let mut r = record(&format!("r{i:03}"), i * 1000);
            r.detail["evidence"]["pad"] = json!(format!("{i}").repeat(400));
            r
        })
        .collect();
    j.commit(&records, &[]).await.unwrap();

    let by_age = Retention {
        max_age_ms: Some(50_000),
        max_bytes: None,
    };
    let pruned = j.prune(&by_age, 100_000).await.unwrap();
    assert_eq!((pruned.by_age, pruned.by_size), (50, 0));
    let left = j.query(&HistoryQuery::default()).await.unwrap();
    assert_eq!(left.len(), 50);
    assert_eq!(left.last().unwrap().ended_ms, 50_000);

    // The size the ten newest rows take, as the journal counts it.
    let ten: i64 = db
        .sql()
        .await
        .query_one(
            "SELECT sum(s)::bigint FROM (SELECT pg_column_size(m.*) AS s FROM migrations m \
             ORDER BY ended_ms DESC, id DESC LIMIT 10) t",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let by_size = Retention {
        max_age_ms: None,
        max_bytes: Some(ten as u64),
    };
    let pruned = j.prune(&by_size, 100_000).await.unwrap();
    assert_eq!((pruned.by_age, pruned.by_size), (0, 40));
    let left = j.query(&HistoryQuery::default()).await.unwrap();
    assert_eq!(
        ids(&left),
        (90..100)
            .rev()
            .map(|i| format!("r{i:03}"))
            .collect::<Vec<_>>()
    );
    // Nothing more to do: a second prune deletes nothing.
    let both = Retention {
        max_age_ms: Some(50_000),
        max_bytes: Some(ten as u64),
    };
    let pruned = j.prune(&both, 100_000).await.unwrap();
    assert_eq!((pruned.by_age, pruned.by_size), (0, 0));
    db.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writers_at_once_store_every_record_once() {
    let Some(server) = server("writers") else {
        return;
    };
    let db = Db::new(&server, "writers").await;
    let spec = db.spec();
    // Overlapping ids, in different orders: 0..3000 and 4499 down to 1500.
    let writer = |ids: Vec<usize>| {
        let spec = spec.clone();
        tokio::spawn(async move {
            let j = Journal::open(&spec, Access::Write).await.unwrap();
            let (mut inserted, mut duplicates) = (0, 0);
            for batch in ids.chunks(250) {
                let records: Vec<_> = batch
                    .iter()
                    .map(|&i| record(&format!("kubevirt:{i:05}"), i as i64))
                    .collect();
                let done = j
                    .commit(&records, &[("w".to_string(), format!("{}", batch[0]))])
                    .await
                    .unwrap();
                inserted += done.inserted;
                duplicates += done.duplicates;
            }
            (inserted, duplicates)
        })
    };
    let a = writer((0..3000).collect());
    let b = writer((1500..4500).rev().collect());
    let (a, b) = (a.await.unwrap(), b.await.unwrap());
    assert_eq!(a.0 + b.0, 4500, "{a:?} {b:?}");
    assert_eq!(a.1 + b.1, 1500, "{a:?} {b:?}");
    let j = db.open(Access::Read).await;
    let got = j.query(&HistoryQuery::default()).await.unwrap();
    let mut want: Vec<String> = (0..4500).map(|i| format!("kubevirt:{i:05}")).collect();
    want.reverse();
    assert_eq!(ids(&got), want);
    db.drop().await;
}

#[tokio::test]
async fn hostile_strings_are_stored_and_found_as_they_are() {
    let Some(server) = server("hostile") else {
        return;
    };
    let db = Db::new(&server, "hostile").await;
    let j = db.open(Access::Write).await;
    let mut r = record("kubevirt:'; DROP TABLE migrations; --", 7);
    r.vm = "vm\0with\0nul".into();
    r.namespace = "ns\"quoted\"\\back\\slash".into();
    r.source_node = Some("node\0\u{E000}0".into());
    r.target_node = Some("\u{E000}".into());
    r.summary = "\u{1b}[31mred\u{1b}[0m \u{202e}reversed \u{1F600} $1 %s {}".into();
    r.phase = "x".repeat(100_000);
    r.detail = json!({
        "nul\0key": "nul\0value",
        "esc\u{E000}": ["\u{E000}0", "\0", "\\u0000"],
        "deep": {"a": [{"b": "\u{0}\u{1}\u{7f}"}]},
    });
    j.commit(&[r.clone()], &[("bm\0".into(), "rv\0\u{E000}".into())])
        .await
        .unwrap();

    let got = j.query(&all()).await.unwrap();
    assert_eq!(got, vec![r.clone()]);
    assert_eq!(
        j.bookmark("bm\0").await.unwrap().as_deref(),
        Some("rv\0\u{E000}")
    );
    assert_eq!(j.bookmark("bm").await.unwrap(), None);
    assert!(j.contains(&r.id).await.unwrap());
    for query in [
        HistoryQuery {
            vm: Some("vm\0with\0nul".into()),
            ..HistoryQuery::default()
        },
        HistoryQuery {
            node: Some("node\0\u{E000}0".into()),
            ..HistoryQuery::default()
        },
        HistoryQuery {
            node: Some("\u{E000}".into()),
            ..HistoryQuery::default()
        },
    ] {
        assert_eq!(
            ids(&j.query(&query).await.unwrap()),
            [r.id.as_str()],
            "{query:?}"
        );
    }
    // A NUL and the escape character are not confused.
    let not = HistoryQuery {
        node: Some("node\0\0".into()),
        ..HistoryQuery::default()
    };
    assert!(j.query(&not).await.unwrap().is_empty());
    // How it is stored (docs: NUL as U+E000 `0`, U+E000 as U+E000 U+E000).
    let stored: String = db
        .sql()
        .await
        .query_one("SELECT vm FROM migrations", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(stored, "vm\u{E000}0with\u{E000}0nul");
    db.drop().await;
}

#[tokio::test]
async fn a_lost_connection_is_said_and_made_again() {
    let Some(server) = server("lost") else { return };
    let db = Db::new(&server, "lost").await;
    let app = format!("vmctl_lost_{}", std::process::id());
    let url = with(&db.url, &format!("application_name={app}"));
    let j = Journal::open(&JournalSpec::parse(&url).unwrap(), Access::Write)
        .await
        .unwrap();
    j.commit(&[record("a", 1)], &[]).await.unwrap();
    let killed: i64 = db
        .sql()
        .await
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1",
            &[&app],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(killed, 1);
    // The server ended the connection (a restart, a failover): a call that meets the dead
    // connection fails as Unreachable and says why; the journal connects again, so a
    // recorder retrying its commit gets through without being restarted.
    let mut errors = Vec::new();
    let mut committed = false;
    for _ in 0..100 {
        match j.commit(&[record("b", 2)], &[]).await {
            Ok(c) => {
                assert_eq!(c.inserted, 1);
                committed = true;
                break;
            }
            Err(err) => {
                assert_eq!(
                    err.journal_fault(),
                    Some(JournalFault::Unreachable),
                    "{err}"
                );
                errors.push(err.to_string());
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(committed, "never connected again: {errors:#?}");
    assert!(errors.len() <= 1, "one failed call at most: {errors:#?}");
    assert!(j.contains("a").await.unwrap() && j.contains("b").await.unwrap());
    // A database that no longer takes connections: each call says why the connection ended
    // and why a new one failed (from the server's own database: one cannot close the door
    // of the database one is in).
    let sql = admin(&db.server).await;
    sql.batch_execute(&format!(
        "ALTER DATABASE {} ALLOW_CONNECTIONS false",
        db.name
    ))
    .await
    .unwrap();
    sql.query_one(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1",
        &[&app],
    )
    .await
    .unwrap();
    let mut last = String::new();
    for _ in 0..100 {
        let err = j.contains("a").await.unwrap_err();
        assert_eq!(
            err.journal_fault(),
            Some(JournalFault::Unreachable),
            "{err}"
        );
        last = err.to_string();
        if last.contains("accepting connections") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        last.contains(
            "lost the connection to the server: terminating connection due to administrator command"
        ) && last.contains("not currently accepting connections"),
        "{last}"
    );
    sql.batch_execute(&format!(
        "ALTER DATABASE {} ALLOW_CONNECTIONS true",
        db.name
    ))
    .await
    .unwrap();
    drop(sql);
    drop(j);
    db.drop().await;
}

/// Whether the connection named `app` uses TLS, as the server sees it.
async fn uses_tls(db: &Db, app: &str) -> bool {
    db.sql()
        .await
        .query_one(
            "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
             WHERE a.application_name = $1",
            &[&app],
        )
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn tls_verifies_the_server_against_sslrootcert_or_the_system() {
    let Some(server) = server("tls") else { return };
    if !server.contains("sslrootcert=") {
        eprintln!("SKIPPED tls: the server's URL names no CA (sslrootcert=); postgres.sh's does");
        return;
    }
    let db = Db::new(&server, "tls").await;
    // The default (prefer) with the server's CA: TLS, verified.
    let app = format!("vmctl_tls_{}", std::process::id());
    let spec = JournalSpec::parse(&with(&db.url, &format!("application_name={app}"))).unwrap();
    let j = Journal::open(&spec, Access::Write).await.unwrap();
    assert!(uses_tls(&db, &app).await);
    drop(j);
    // libpq's verify-full is understood.
    let j = Journal::open(
        &JournalSpec::parse(&with(&db.url, "sslmode=verify-full")).unwrap(),
        Access::Read,
    )
    .await
    .unwrap();
    drop(j);
    // disable: in the clear.
    let app = format!("vmctl_plain_{}", std::process::id());
    let plain = with(
        &without(&db.url, "sslrootcert"),
        &format!("sslmode=disable&application_name={app}"),
    );
    let j = Journal::open(&JournalSpec::parse(&plain).unwrap(), Access::Read)
        .await
        .unwrap();
    assert!(!uses_tls(&db, &app).await);
    drop(j);
    // The system's roots do not know the test CA: prefer and require refuse the server
    // (stricter than libpq, which verifies nothing under prefer/require).
    for mode in ["prefer", "require"] {
        let url = with(&without(&db.url, "sslrootcert"), &format!("sslmode={mode}"));
        let err = Journal::open(&JournalSpec::parse(&url).unwrap(), Access::Read)
            .await
            .err()
            .unwrap();
        assert_eq!(
            err.journal_fault(),
            Some(JournalFault::Unreachable),
            "{err}"
        );
        assert!(err.to_string().contains("certificate"), "{err}");
        eprintln!("{mode}, unknown CA: {err}");
    }
    // A CA file that is not there.
    let url = with(
        &without(&db.url, "sslrootcert"),
        "sslrootcert=/nonexistent/ca.crt",
    );
    let err = Journal::open(&JournalSpec::parse(&url).unwrap(), Access::Read)
        .await
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("sslrootcert /nonexistent/ca.crt: "),
        "{err}"
    );
    db.drop().await;
}

/// No server needed: a port nobody listens on.
#[tokio::test]
async fn an_unreachable_server_is_reported_without_the_password() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    for mode in ["disable", "prefer"] {
        let url = format!(
            "postgres://vmctl:supersecret@127.0.0.1:{port}/journal?sslmode={mode}&connect_timeout=5"
        );
        let spec = JournalSpec::parse(&url).unwrap();
        assert!(!spec.to_string().contains("supersecret"), "{spec}");
        for access in [Access::Write, Access::Read] {
            let err = Journal::open(&spec, access).await.err().unwrap();
            assert_eq!(
                err.journal_fault(),
                Some(JournalFault::Unreachable),
                "{err}"
            );
            let text = err.to_string();
            assert!(!text.contains("supersecret"), "{text}");
            assert!(text.contains("vmctl:***@127.0.0.1"), "{text}");
            assert!(
                text.contains(&format!("cannot reach 127.0.0.1:{port}: ")),
                "{text}"
            );
            assert_eq!(err.exit_code(), 7);
        }
    }
}
