//! The SQLite journal: one file, bundled SQLite.
//!
//! - **WAL** with `synchronous=NORMAL`: a commit is in the WAL file (the OS's page cache) when
//!   `commit` returns, so a `kill -9` of vmctl loses nothing committed; only a power loss can
//!   roll back the last commits, and then records and bookmarks together (they share a
//!   transaction), so the recorder lists and records them again (ids make that a no-op).
//!   `FULL` would add an fsync per commit for the power-loss case only.
//! - **A second writer waits**: a busy timeout of 10 s, and every write is one
//!   `BEGIN IMMEDIATE` transaction (the write lock is taken first, so two writers never
//!   deadlock upgrading a read lock, and a reader never sees half a commit).
//! - **Identity and version in the file's header**: `PRAGMA application_id` says "vmctl
//!   journal" (another SQLite database is refused as not one), `PRAGMA user_version` is the
//!   schema version. A write-open applies the missing [`STEPS`] in one transaction; a version
//!   above [`super::SCHEMA_VERSION`] is refused before anything is written.
//! - **Damage is reported, never repaired**: a damaged file is left byte for byte as it was
//!   (no recreate, no truncate, no `VACUUM`); a write-open runs `PRAGMA quick_check`.
//! - `detail` (a few KB of JSON per record) lives in a table of its own, `details`, keyed by
//!   the record's rowid: history's queries read only the narrow `migrations` rows (one page
//!   holds dozens), not a page per record.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::types::{Type, Value as SqlValue};
use rusqlite::{
    Connection, ErrorCode, OpenFlags, OptionalExtension, Row, TransactionBehavior, params,
    params_from_iter,
};

use super::{Access, Committed, SCHEMA_VERSION};
use crate::error::{Error, JournalFault, Result};
use crate::model::journal::{
    HistoryQuery, MigrationRecord, Platform, Pruned, RecordOutcome, RecordedBy, Retention,
};
use crate::text::printable;

/// `PRAGMA application_id` of a vmctl journal: "vmct" in ASCII.
pub const APPLICATION_ID: i32 = 0x766d_6374;

/// Test hook (not documented for users): a number of pages for `PRAGMA max_page_count` on
/// every write-open, so that SQLite itself answers `SQLITE_FULL` once the journal reaches
/// that size, the way a full disk does. The recorder's full-disk test uses it.
pub const MAX_PAGES_ENV: &str = "VMCTL_JOURNAL_MAX_PAGES";

/// How long a writer waits for another one's lock before `JournalFault::Busy`.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Test hook (not documented for users): the busy timeout in milliseconds instead of
/// [`BUSY_TIMEOUT`], so a test sees `JournalFault::Busy` without waiting 10 s.
pub const BUSY_MS_ENV: &str = "VMCTL_JOURNAL_BUSY_MS";

fn busy_timeout() -> Duration {
    std::env::var(BUSY_MS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(BUSY_TIMEOUT, Duration::from_millis)
}

/// The schema, one step per version: step `i` takes a journal from version `i` to `i + 1`.
/// Never edit a step that has shipped; add one (and raise `SCHEMA_VERSION`).
pub const STEPS: &[&str] = &[
    // 1: the initial schema.
    "CREATE TABLE migrations (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        cluster TEXT NOT NULL,
        recorded_by TEXT NOT NULL,
        platform TEXT NOT NULL,
        namespace TEXT NOT NULL,
        vm TEXT NOT NULL,
        migration TEXT NOT NULL,
        source_node TEXT,
        target_node TEXT,
        source_pod TEXT,
        target_pod TEXT,
        evacuation_node TEXT,
        outcome TEXT NOT NULL,
        phase TEXT NOT NULL,
        mode TEXT,
        plane TEXT NOT NULL,
        cause TEXT NOT NULL,
        summary TEXT NOT NULL,
        created_at TEXT,
        started_at TEXT,
        ended_at TEXT,
        ended_ms INTEGER NOT NULL,
        recorded_at TEXT NOT NULL,
        duration_ms INTEGER,
        transfer_ms INTEGER,
        data_processed_bytes INTEGER,
        data_total_bytes INTEGER,
        data_remaining_bytes INTEGER
    );
    CREATE TABLE details (
        seq INTEGER PRIMARY KEY,
        detail TEXT NOT NULL
    );
    CREATE TRIGGER migrations_delete_detail AFTER DELETE ON migrations
    BEGIN
        DELETE FROM details WHERE seq = old.seq;
    END;
    CREATE INDEX migrations_ended ON migrations (ended_ms, id);
    CREATE INDEX migrations_vm ON migrations (vm, namespace, ended_ms);
    CREATE INDEX migrations_namespace ON migrations (namespace, ended_ms);
    CREATE INDEX migrations_migration ON migrations (migration, namespace);
    CREATE INDEX migrations_source ON migrations (source_node, ended_ms);
    CREATE INDEX migrations_target ON migrations (target_node, ended_ms);
    CREATE INDEX migrations_evacuation ON migrations (evacuation_node, ended_ms);
    CREATE INDEX migrations_cause ON migrations (cause, ended_ms);
    CREATE TABLE bookmarks (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );",
];

/// The columns of a record, in `MigrationRecord`'s order (`detail` apart).
const COLUMNS: &str = "m.id, m.cluster, m.recorded_by, m.platform, m.namespace, m.vm, \
     m.migration, m.source_node, m.target_node, m.source_pod, m.target_pod, m.evacuation_node, \
     m.outcome, m.phase, m.mode, m.plane, m.cause, m.summary, m.created_at, m.started_at, \
     m.ended_at, m.ended_ms, m.recorded_at, m.duration_ms, m.transfer_ms, \
     m.data_processed_bytes, m.data_total_bytes, m.data_remaining_bytes";

const INSERT: &str = "INSERT INTO migrations (id, cluster, recorded_by, platform, namespace, \
     vm, migration, source_node, target_node, source_pod, target_pod, evacuation_node, outcome, \
     phase, mode, plane, cause, summary, created_at, started_at, ended_at, ended_ms, \
     recorded_at, duration_ms, transfer_ms, data_processed_bytes, data_total_bytes, \
     data_remaining_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, \
     ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28) \
     ON CONFLICT (id) DO NOTHING";

const UPSERT_BOOKMARK: &str = "INSERT INTO bookmarks (name, value, updated_at) \
     VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) \
     ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at";

pub struct SqliteJournal {
    path: PathBuf,
    /// rusqlite's Connection is Send but not Sync: one writer at a time through `&self`.
    conn: Mutex<Connection>,
}

/// What a file's header says it is.
struct Identity {
    application_id: i32,
    version: i64,
    objects: i64,
}

impl Identity {
    /// A new (or zero-length) file: nothing in it yet.
    fn is_empty(&self) -> bool {
        self.application_id == 0 && self.version == 0 && self.objects == 0
    }
}

impl SqliteJournal {
    /// Opens the journal at `path`. `Access::Write` creates the directory and the file and
    /// brings the schema up to date; `Access::Read` opens an existing file read-only and
    /// writes nothing.
    pub fn open(path: &Path, access: Access) -> Result<SqliteJournal> {
        let name = path.display().to_string();
        let flags = match access {
            Access::Read => {
                match std::fs::metadata(path) {
                    Ok(m) if m.is_file() => {}
                    Ok(_) => {
                        return Err(fault(&name, JournalFault::Other, "is not a file"));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        return Err(fault(
                            &name,
                            JournalFault::Missing,
                            "does not exist: `vmctl record` (or migrate, drain, abort) creates it",
                        ));
                    }
                    Err(e) => {
                        return Err(fault(
                            &name,
                            JournalFault::Other,
                            format!("cannot be read: {e}"),
                        ));
                    }
                }
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
            }
            Access::Write => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| {
                        fault(
                            &name,
                            JournalFault::Other,
                            format!("cannot create its directory {}: {e}", dir.display()),
                        )
                    })?;
                }
                OpenFlags::SQLITE_OPEN_READ_WRITE
                    | OpenFlags::SQLITE_OPEN_CREATE
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
            }
        };
        let conn = Connection::open_with_flags(path, flags).map_err(|e| sqlite_fault(&name, &e))?;
        conn.busy_timeout(busy_timeout())
            .map_err(|e| sqlite_fault(&name, &e))?;
        let id = identify(&conn).map_err(|e| sqlite_fault(&name, &e))?;
        check_identity(&name, &id)?;
        match access {
            Access::Read => {
                if id.is_empty() {
                    return Err(fault(
                        &name,
                        JournalFault::Missing,
                        "is empty (no journal in it yet): `vmctl record` (or migrate, drain, \
                         abort) creates it",
                    ));
                }
            }
            Access::Write => {
                // Writers racing to create a new file can meet while it is still in
                // rollback mode, where SQLite answers BUSY at once (no busy handler) to the
                // one that would otherwise deadlock: every step is idempotent, try again.
                let started = std::time::Instant::now();
                loop {
                    match prepare_write(&name, &conn, &id) {
                        Err(e)
                            if e.journal_fault() == Some(JournalFault::Busy)
                                && started.elapsed() < busy_timeout() =>
                        {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        other => break other?,
                    }
                }
            }
        }
        Ok(SqliteJournal {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    pub fn describe(&self) -> String {
        self.path.display().to_string()
    }

    fn name(&self) -> String {
        self.describe()
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Inserts `records` (ids already there are skipped) and upserts `bookmarks`, in one
    /// `BEGIN IMMEDIATE` transaction.
    pub fn commit(
        &self,
        records: &[MigrationRecord],
        bookmarks: &[(String, String)],
    ) -> Result<Committed> {
        let name = self.name();
        let mut conn = self.lock();
        commit_locked(&mut conn, records, bookmarks).map_err(|e| sqlite_fault(&name, &e))
    }

    pub fn bookmark(&self, name: &str) -> Result<Option<String>> {
        let conn = self.lock();
        conn.prepare_cached("SELECT value FROM bookmarks WHERE name = ?1")
            .and_then(|mut s| s.query_row([name], |r| r.get(0)).optional())
            .map_err(|e| sqlite_fault(&self.name(), &e))
    }

    pub fn contains(&self, id: &str) -> Result<bool> {
        let conn = self.lock();
        conn.prepare_cached("SELECT 1 FROM migrations WHERE id = ?1")
            .and_then(|mut s| s.exists([id]))
            .map_err(|e| sqlite_fault(&self.name(), &e))
    }

    /// Records matching `query`, newest first (`ended_ms`, then id, descending).
    pub fn query(&self, query: &HistoryQuery) -> Result<Vec<MigrationRecord>> {
        let (sql, args) = query_sql(query);
        let conn = self.lock();
        let run = || -> rusqlite::Result<Vec<MigrationRecord>> {
            let mut stmt = conn.prepare_cached(&sql)?;
            let rows = stmt.query_map(params_from_iter(args.iter()), |r| {
                record_of(r, query.with_detail)
            })?;
            rows.collect()
        };
        run().map_err(|e| sqlite_fault(&self.name(), &e))
    }

    /// Deletes the records that ended before `now_ms - max_age_ms`, then the oldest ones
    /// until the journal's live pages fit in `max_bytes`, in one transaction, and returns the
    /// freed pages to the file system.
    ///
    /// The size is SQLite's own: `(page_count - freelist_count) * page_size`, the pages that
    /// hold data (records, their detail, the indexes), the same measure as the file's size
    /// once `incremental_vacuum` has released the free ones. Deleting from index pages leaves
    /// them partly empty, so a prune can delete somewhat more than the exact excess.
    pub fn prune(&self, retention: &Retention, now_ms: i64) -> Result<Pruned> {
        let name = self.name();
        let mut conn = self.lock();
        prune_locked(&mut conn, retention, now_ms).map_err(|e| sqlite_fault(&name, &e))
    }
}

/// The error for this journal.
fn fault(name: &str, fault: JournalFault, message: impl Into<String>) -> Error {
    super::fault(name, fault, message)
}

/// What SQLite said, as a journal fault.
fn sqlite_fault(name: &str, e: &rusqlite::Error) -> Error {
    let said = printable(&e.to_string());
    let (kind, message) = match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => (
            JournalFault::Corrupt,
            format!(
                "is damaged (SQLite: {said}): it was left as it is; move it aside to start a \
                 new journal"
            ),
        ),
        Some(ErrorCode::DiskFull) => (
            JournalFault::Full,
            format!("is full (SQLite: {said}): nothing more can be written until there is room"),
        ),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => (
            JournalFault::Busy,
            format!(
                "another writer held it locked for longer than {} ms (SQLite: {said})",
                busy_timeout().as_millis()
            ),
        ),
        Some(ErrorCode::ReadOnly) => (
            JournalFault::Other,
            format!(
                "cannot be written (SQLite: {said}): check the file's and its directory's \
                 permissions, and whether the file system is mounted read-only"
            ),
        ),
        Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => (
            JournalFault::Other,
            format!("cannot be opened (SQLite: {said}): check the path and its permissions"),
        ),
        Some(ErrorCode::SystemIoFailure) => {
            (JournalFault::Other, format!("I/O error (SQLite: {said})"))
        }
        Some(_) => (JournalFault::Other, format!("SQLite: {said}")),
        None => match e {
            rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::InvalidColumnType(..)
            | rusqlite::Error::IntegralValueOutOfRange(..)
            | rusqlite::Error::Utf8Error(..) => (
                JournalFault::Corrupt,
                format!(
                    "holds a record this vmctl cannot read ({said}): it was left as it is; \
                     move it aside to start a new journal"
                ),
            ),
            _ => (JournalFault::Other, format!("SQLite: {said}")),
        },
    };
    fault(name, kind, message)
}

/// The header's application id and schema version, and how many schema objects there are:
/// one statement, so one snapshot (another writer may be creating the schema meanwhile).
fn identify(conn: &Connection) -> rusqlite::Result<Identity> {
    conn.query_row(
        "SELECT (SELECT application_id FROM pragma_application_id), \
                (SELECT user_version FROM pragma_user_version), \
                (SELECT count(*) FROM sqlite_schema)",
        [],
        |r| {
            Ok(Identity {
                application_id: r.get(0)?,
                version: r.get(1)?,
                objects: r.get(2)?,
            })
        },
    )
}

/// A vmctl journal at a version this build can use, or an empty file.
fn check_identity(name: &str, id: &Identity) -> Result<()> {
    if id.is_empty() {
        return Ok(());
    }
    if id.application_id != APPLICATION_ID {
        return Err(fault(
            name,
            JournalFault::Corrupt,
            format!(
                "is not a vmctl journal (an SQLite database with application_id {:#x} and {} \
                 schema objects): it was left as it is; use another --journal",
                id.application_id, id.objects
            ),
        ));
    }
    if id.version > SCHEMA_VERSION {
        return Err(fault(
            name,
            JournalFault::NewerSchema,
            format!(
                "was written by a newer vmctl (schema {}; this vmctl knows up to {}): use that \
                 vmctl, or another --journal",
                id.version, SCHEMA_VERSION
            ),
        ));
    }
    if id.version < 1 {
        return Err(fault(
            name,
            JournalFault::Corrupt,
            format!(
                "is damaged (a vmctl journal at schema version {}): it was left as it is; move \
                 it aside to start a new journal",
                id.version
            ),
        ));
    }
    Ok(())
}

/// WAL, the schema up to date, the test hook, and `quick_check`.
fn prepare_write(name: &str, conn: &Connection, id: &Identity) -> Result<()> {
    let sql = |e: rusqlite::Error| sqlite_fault(name, &e);
    if id.is_empty() {
        // Only before the first table: lets a prune hand freed pages back to the file system.
        conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")
            .map_err(sql)?;
    }
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
        .map_err(sql)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(fault(
            name,
            JournalFault::Other,
            format!(
                "SQLite could not switch it to WAL (journal_mode is {}): is it on a network \
                 file system?",
                printable(&mode)
            ),
        ));
    }
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(sql)?;
    // The WAL file is reset at each checkpoint but keeps its size: a recorder's first commit
    // of thousands of migrations would leave as much again beside the journal for good.
    conn.pragma_update(None, "journal_size_limit", 64i64 << 20)
        .map_err(sql)?;
    if id.version < SCHEMA_VERSION {
        migrate(name, conn)?;
    }
    if let Some(pages) = std::env::var(MAX_PAGES_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
    {
        conn.pragma_update_and_check(None, "max_page_count", pages, |r| r.get::<_, i64>(0))
            .map_err(sql)?;
    }
    quick_check(name, conn)
}

/// Applies the steps this journal has not had, in one `BEGIN IMMEDIATE` transaction (its
/// identity read again under the lock: another writer may have done it meanwhile).
fn migrate(name: &str, conn: &Connection) -> Result<()> {
    let sql = |e: rusqlite::Error| sqlite_fault(name, &e);
    let tx =
        rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate).map_err(sql)?;
    let id = identify(&tx).map_err(sql)?;
    check_identity(name, &id)?;
    let from = usize::try_from(id.version).unwrap_or(0);
    if from >= STEPS.len() {
        return Ok(());
    }
    for step in &STEPS[from..] {
        tx.execute_batch(step).map_err(sql)?;
    }
    tx.pragma_update(None, "application_id", APPLICATION_ID)
        .map_err(sql)?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(sql)?;
    tx.commit().map_err(sql)
}

/// `PRAGMA quick_check`: the b-trees' structure and the indexes' consistency, without
/// matching every index entry to its row (what `integrity_check` adds).
fn quick_check(name: &str, conn: &Connection) -> Result<()> {
    let mut stmt = conn
        .prepare("PRAGMA quick_check(5)")
        .map_err(|e| sqlite_fault(name, &e))?;
    let found: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect())
        .map_err(|e| sqlite_fault(name, &e))?;
    if found.len() == 1 && found[0] == "ok" {
        return Ok(());
    }
    Err(fault(
        name,
        JournalFault::Corrupt,
        format!(
            "is damaged (SQLite's quick_check: {}): it was left as it is; move it aside to \
             start a new journal",
            printable(&found.join("; "))
        ),
    ))
}

fn commit_locked(
    conn: &mut Connection,
    records: &[MigrationRecord],
    bookmarks: &[(String, String)],
) -> rusqlite::Result<Committed> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut done = Committed::default();
    {
        let mut insert = tx.prepare_cached(INSERT)?;
        let mut detail = tx.prepare_cached("INSERT INTO details (seq, detail) VALUES (?1, ?2)")?;
        for r in records {
            let n = insert.execute(params![
                r.id,
                r.cluster,
                r.recorded_by.as_str(),
                r.platform.as_str(),
                r.namespace,
                r.vm,
                r.migration,
                r.source_node,
                r.target_node,
                r.source_pod,
                r.target_pod,
                r.evacuation_node,
                r.outcome.as_str(),
                r.phase,
                r.mode,
                r.plane,
                r.cause,
                r.summary,
                r.created_at,
                r.started_at,
                r.ended_at,
                r.ended_ms,
                r.recorded_at,
                r.duration_ms,
                r.transfer_ms,
                r.data_processed_bytes,
                r.data_total_bytes,
                r.data_remaining_bytes,
            ])?;
            if n == 0 {
                done.duplicates += 1;
                done.duplicate_ids.push(r.id.clone());
                continue;
            }
            done.inserted += 1;
            if !r.detail.is_null() {
                let json = serde_json::to_string(&r.detail)
                    .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
                detail.execute(params![tx.last_insert_rowid(), json])?;
            }
        }
        let mut bookmark = tx.prepare_cached(UPSERT_BOOKMARK)?;
        for (name, value) in bookmarks {
            bookmark.execute(params![name, value])?;
        }
    }
    tx.commit()?;
    Ok(done)
}

/// The SELECT for a query, and its parameters (every value bound, none spliced in).
fn query_sql(q: &HistoryQuery) -> (String, Vec<SqlValue>) {
    let mut sql = format!(
        "SELECT {COLUMNS}, {} FROM migrations m",
        if q.with_detail { "d.detail" } else { "NULL" }
    );
    if q.with_detail {
        sql.push_str(" LEFT JOIN details d ON d.seq = m.seq");
    }
    let mut clauses: Vec<&str> = Vec::new();
    let mut args: Vec<SqlValue> = Vec::new();
    let text = |s: &String| SqlValue::Text(s.clone());
    for (column, value) in [
        ("m.cluster = ?", &q.cluster),
        ("m.namespace = ?", &q.namespace),
        ("m.vm = ?", &q.vm),
        ("m.migration = ?", &q.migration),
        ("m.cause = ?", &q.cause),
    ] {
        if let Some(v) = value {
            clauses.push(column);
            args.push(text(v));
        }
    }
    if let Some(node) = &q.node {
        clauses.push("(m.source_node = ? OR m.target_node = ? OR m.evacuation_node = ?)");
        args.extend([text(node), text(node), text(node)]);
    }
    if let Some(outcome) = q.outcome {
        clauses.push("m.outcome = ?");
        args.push(SqlValue::Text(outcome.as_str().to_string()));
    }
    if let Some(since) = q.since_ms {
        clauses.push("m.ended_ms >= ?");
        args.push(SqlValue::Integer(since));
    }
    if !clauses.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&clauses.join(" AND "));
    }
    sql.push_str(" ORDER BY m.ended_ms DESC, m.id DESC");
    if let Some(limit) = q.limit {
        sql.push_str(" LIMIT ?");
        args.push(SqlValue::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
    }
    (sql, args)
}

/// A column that holds one of an enum's names.
fn named<T>(row: &Row<'_>, i: usize, parse: fn(&str) -> Option<T>) -> rusqlite::Result<T> {
    let s: String = row.get(i)?;
    parse(&s).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            i,
            Type::Text,
            format!("unknown value {s:?} in column {i}").into(),
        )
    })
}

fn record_of(r: &Row<'_>, with_detail: bool) -> rusqlite::Result<MigrationRecord> {
    let detail = if with_detail {
        match r.get::<_, Option<String>>(28)? {
            Some(text) => serde_json::from_str(&text).map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(28, Type::Text, Box::new(e))
            })?,
            None => serde_json::Value::Null,
        }
    } else {
        serde_json::Value::Null
    };
    Ok(MigrationRecord {
        id: r.get(0)?,
        cluster: r.get(1)?,
        recorded_by: named(r, 2, RecordedBy::parse)?,
        platform: named(r, 3, Platform::parse)?,
        namespace: r.get(4)?,
        vm: r.get(5)?,
        migration: r.get(6)?,
        source_node: r.get(7)?,
        target_node: r.get(8)?,
        source_pod: r.get(9)?,
        target_pod: r.get(10)?,
        evacuation_node: r.get(11)?,
        outcome: named(r, 12, RecordOutcome::parse)?,
        phase: r.get(13)?,
        mode: r.get(14)?,
        plane: r.get(15)?,
        cause: r.get(16)?,
        summary: r.get(17)?,
        created_at: r.get(18)?,
        started_at: r.get(19)?,
        ended_at: r.get(20)?,
        ended_ms: r.get(21)?,
        recorded_at: r.get(22)?,
        duration_ms: r.get(23)?,
        transfer_ms: r.get(24)?,
        data_processed_bytes: r.get(25)?,
        data_total_bytes: r.get(26)?,
        data_remaining_bytes: r.get(27)?,
        detail,
    })
}

/// The bytes of the pages that hold data: the file's size less its free pages.
fn used_bytes(conn: &Connection) -> rusqlite::Result<i64> {
    let pages: i64 = conn.pragma_query_value(None, "page_count", |r| r.get(0))?;
    let free: i64 = conn.pragma_query_value(None, "freelist_count", |r| r.get(0))?;
    let size: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
    Ok((pages - free).max(0) * size)
}

fn prune_locked(
    conn: &mut Connection,
    retention: &Retention,
    now_ms: i64,
) -> rusqlite::Result<Pruned> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut pruned = Pruned::default();
    if let Some(age) = retention.max_age_ms {
        let n = tx.execute(
            "DELETE FROM migrations WHERE ended_ms < ?1",
            [now_ms.saturating_sub(age)],
        )?;
        pruned.by_age = n as u64;
    }
    if let Some(max) = retention.max_bytes {
        let max = i64::try_from(max).unwrap_or(i64::MAX);
        loop {
            let used = used_bytes(&tx)?;
            if used <= max {
                break;
            }
            let count: i64 = tx.query_row("SELECT count(*) FROM migrations", [], |r| r.get(0))?;
            if count == 0 {
                break;
            }
            // The excess over the average record (itself an overestimate: the empty
            // journal's pages are in `used`), so a few rounds at most.
            let per_record = (used / count).max(1);
            let n = ((used - max) / per_record).clamp(1, count);
            let deleted = tx.execute(
                "DELETE FROM migrations WHERE seq IN \
                 (SELECT seq FROM migrations ORDER BY ended_ms, id LIMIT ?1)",
                [n],
            )?;
            pruned.by_size += deleted as u64;
        }
    }
    if pruned.by_age + pruned.by_size > 0 {
        // One page per step: run it to the end (execute_batch would free one page).
        let mut vacuum = tx.prepare("PRAGMA incremental_vacuum")?;
        let mut rows = vacuum.query([])?;
        while rows.next()?.is_some() {}
    }
    tx.commit()?;
    Ok(pruned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_step_per_schema_version() {
        assert_eq!(STEPS.len() as i64, SCHEMA_VERSION);
    }

    #[test]
    fn a_query_binds_every_value() {
        let q = HistoryQuery {
            vm: Some("x' OR 1=1 --".into()),
            node: Some("node-1".into()),
            since_ms: Some(5),
            limit: Some(3),
            ..HistoryQuery::default()
        };
        let (sql, args) = query_sql(&q);
        assert!(!sql.contains("x'"), "{sql}");
        assert!(!sql.contains("node-1"), "{sql}");
        assert_eq!(sql.matches('?').count(), args.len());
        assert_eq!(args.len(), 1 + 3 + 1 + 1);
        assert!(
            sql.ends_with("ORDER BY m.ended_ms DESC, m.id DESC LIMIT ?"),
            "{sql}"
        );
        assert!(!sql.contains("details"), "no detail, no join: {sql}");
        let (sql, _) = query_sql(&HistoryQuery {
            with_detail: true,
            ..HistoryQuery::default()
        });
        assert!(sql.contains("LEFT JOIN details"), "{sql}");
    }
}
