//! The journal (issue 28): where migrations' ends are kept after KubeVirt has cleaned them
//! up. One SQLite file by default (`sqlite.rs`: bundled SQLite, WAL, a busy timeout for a
//! second writer), or a PostgreSQL database (`postgres.rs`) for a fleet of clusters and
//! several recorders. Both hold the same schema, versioned (`SCHEMA_VERSION`): a journal
//! written by a newer vmctl is refused, never downgraded; a damaged one is reported, never
//! truncated.
//!
//! This is an I/O layer beside `cluster/`: it stores and returns `model::journal` records
//! and decides nothing about them.

pub mod postgres;
pub mod sqlite;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, JournalFault, Result};
use crate::model::journal::{HistoryQuery, MigrationRecord, Pruned, Retention};

/// The schema version this build writes and reads. A journal at a higher version is refused
/// (`JournalFault::NewerSchema`); a lower one is migrated forward when opened for writing.
pub const SCHEMA_VERSION: i64 = 1;

/// The environment variable that names the journal when `--journal` does not.
pub const JOURNAL_ENV: &str = "VMCTL_JOURNAL";

/// Where the journal is: `--journal`, else `$VMCTL_JOURNAL`, else the default file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JournalSpec {
    /// An SQLite file.
    Sqlite(PathBuf),
    /// `postgres://` or `postgresql://` URL (libpq's keywords in the query: `sslmode`, …).
    Postgres(String),
    /// `--journal off`: nothing is written or read.
    Off,
}

impl JournalSpec {
    /// `off`/`none` → Off; `postgres://…`/`postgresql://…` → Postgres; anything else is a
    /// path (`sqlite://PATH` and `file:PATH` accepted too).
    pub fn parse(s: &str) -> Result<JournalSpec> {
        let t = s.trim();
        if t.is_empty() {
            return Err(Error::usage(
                "--journal: empty (a file path, postgres://…, or off)",
            ));
        }
        if t == "off" || t == "none" {
            return Ok(JournalSpec::Off);
        }
        if t.starts_with("postgres://") || t.starts_with("postgresql://") {
            return Ok(JournalSpec::Postgres(t.to_string()));
        }
        let path = t
            .strip_prefix("sqlite://")
            .or_else(|| t.strip_prefix("file:"))
            .unwrap_or(t);
        Ok(JournalSpec::Sqlite(PathBuf::from(path)))
    }

    /// The flag's value, else `$VMCTL_JOURNAL`, else the default file.
    pub fn resolve(flag: Option<&str>) -> Result<JournalSpec> {
        Ok(JournalSpec::configured(flag)?.unwrap_or_else(|| JournalSpec::Sqlite(default_path())))
    }

    /// The flag's value, else `$VMCTL_JOURNAL`; None when neither names one.
    pub fn configured(flag: Option<&str>) -> Result<Option<JournalSpec>> {
        if let Some(f) = flag {
            return JournalSpec::parse(f).map(Some);
        }
        match std::env::var(JOURNAL_ENV) {
            Ok(v) if !v.trim().is_empty() => JournalSpec::parse(&v).map(Some),
            _ => Ok(None),
        }
    }

    /// Where `migrate`, `drain` and `abort` write their runs: the journal the flag or
    /// `$VMCTL_JOURNAL` names, else the default file when it exists (`vmctl record` made
    /// it), else nowhere: a command run once does not leave a database behind.
    pub fn for_runs(flag: Option<&str>) -> Result<JournalSpec> {
        Ok(match JournalSpec::configured(flag)? {
            Some(spec) => spec,
            None => {
                let path = default_path();
                if path.exists() {
                    JournalSpec::Sqlite(path)
                } else {
                    JournalSpec::Off
                }
            }
        })
    }
}

/// `$XDG_STATE_HOME/vmctl/journal.sqlite`, else `~/.local/state/vmctl/journal.sqlite`,
/// else `./vmctl-journal.sqlite` (no home at all: a container without one).
pub fn default_path() -> PathBuf {
    if let Some(state) = std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        return Path::new(&state).join("vmctl").join("journal.sqlite");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        return Path::new(&home)
            .join(".local")
            .join("state")
            .join("vmctl")
            .join("journal.sqlite");
    }
    PathBuf::from("vmctl-journal.sqlite")
}

impl fmt::Display for JournalSpec {
    /// The path, or the URL without its password (errors and notes print this).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JournalSpec::Sqlite(p) => write!(f, "{}", p.display()),
            JournalSpec::Postgres(url) => f.write_str(&postgres::redact(url)),
            JournalSpec::Off => f.write_str("off"),
        }
    }
}

/// Whether opening may create the journal and migrate its schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// `history`, `explain`: a missing SQLite file is `JournalFault::Missing`; nothing is
    /// created or migrated (an older schema is read as is when it can be, else refused).
    Read,
    /// `record`, `migrate`, `drain`, `abort`: creates the file (and its directory), migrates
    /// an older schema forward inside one transaction.
    Write,
}

/// What an insert did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Committed {
    /// Records new to the journal.
    pub inserted: usize,
    /// Records whose id was there already (left as they were).
    pub duplicates: usize,
    /// Their ids: a writer says what it wrote, not what another writer had (issue 33).
    pub duplicate_ids: Vec<String>,
}

/// An open journal.
pub enum Journal {
    Sqlite(sqlite::SqliteJournal),
    Postgres(postgres::PostgresJournal),
}

impl Journal {
    /// Opens (and with `Access::Write` creates and migrates) the journal `spec` names.
    /// `JournalSpec::Off` is a usage error: callers check for it first.
    pub async fn open(spec: &JournalSpec, access: Access) -> Result<Journal> {
        match spec {
            JournalSpec::Sqlite(path) => {
                Ok(Journal::Sqlite(sqlite::SqliteJournal::open(path, access)?))
            }
            JournalSpec::Postgres(url) => Ok(Journal::Postgres(
                postgres::PostgresJournal::open(url, access).await?,
            )),
            JournalSpec::Off => Err(Error::usage("the journal is off (--journal off)")),
        }
    }

    /// What errors and notes call it.
    pub fn describe(&self) -> String {
        match self {
            Journal::Sqlite(j) => j.describe(),
            Journal::Postgres(j) => j.describe(),
        }
    }

    /// Stores `records` and the `bookmarks` (name → resourceVersion) in one transaction: a
    /// crash leaves either all of them or none. Ids already present are skipped.
    pub async fn commit(
        &self,
        records: &[MigrationRecord],
        bookmarks: &[(String, String)],
    ) -> Result<Committed> {
        match self {
            Journal::Sqlite(j) => j.commit(records, bookmarks),
            Journal::Postgres(j) => j.commit(records, bookmarks).await,
        }
    }

    /// The bookmark stored under `name` (the recorder's last resourceVersion per kind and
    /// cluster).
    pub async fn bookmark(&self, name: &str) -> Result<Option<String>> {
        match self {
            Journal::Sqlite(j) => j.bookmark(name),
            Journal::Postgres(j) => j.bookmark(name).await,
        }
    }

    /// Whether a record with this id is there (the recorder skips what it already has).
    pub async fn contains(&self, id: &str) -> Result<bool> {
        match self {
            Journal::Sqlite(j) => j.contains(id),
            Journal::Postgres(j) => j.contains(id).await,
        }
    }

    /// Records matching `query`, newest first (by `ended_ms`, then id).
    pub async fn query(&self, query: &HistoryQuery) -> Result<Vec<MigrationRecord>> {
        match self {
            Journal::Sqlite(j) => j.query(query),
            Journal::Postgres(j) => j.query(query).await,
        }
    }

    /// Deletes what `retention` no longer keeps.
    pub async fn prune(&self, retention: &Retention, now_ms: i64) -> Result<Pruned> {
        match self {
            Journal::Sqlite(j) => j.prune(retention, now_ms),
            Journal::Postgres(j) => j.prune(retention, now_ms).await,
        }
    }
}

/// The error for a journal that cannot be used.
pub(crate) fn fault(journal: &str, fault: JournalFault, message: impl Into<String>) -> Error {
    Error::journal(journal, fault, message)
}
