//! The PostgreSQL journal: the SQLite journal's schema on a server, for a fleet of clusters
//! and several recorders (issue 28). tokio-postgres over one connection; TLS by rustls.
//!
//! - **TLS**: `sslmode=disable` connects in the clear. `prefer` (the default, as libpq's) and
//!   `require` use TLS through rustls (the `ring` provider), and unlike libpq they *verify* the
//!   server's certificate and name against the system's roots (`rustls-native-certs`:
//!   `/etc/ssl/certs`, or `$SSL_CERT_FILE`/`$SSL_CERT_DIR`), or against the CA certificates of
//!   the file libpq's `sslrootcert=FILE` names. `prefer` goes on in the clear only when the
//!   server has no TLS at all. libpq's `verify-ca`/`verify-full` are accepted (they are what
//!   `require` does here) and `allow` is read as `prefer`.
//! - **Schema**: `vmctl_schema` lists the migration steps applied (one row per version); on a
//!   Write-open the missing steps are applied in one transaction that first takes
//!   `pg_advisory_xact_lock`, so two recorders starting at once do not race. A version above
//!   [`super::SCHEMA_VERSION`] is refused; a Read-open never creates anything. The tables go
//!   in the connection's schema (`?options=-csearch_path%3Dvmctl` for one of vmctl's own in a
//!   shared database); another program's `migrations` table there is refused, not touched.
//! - **NUL**: PostgreSQL's TEXT and JSONB cannot hold U+0000, which a hostile cluster string
//!   may carry. Every stored string (columns, and the strings and keys inside `detail`) is
//!   escaped reversibly: NUL as U+E000 `0`, U+E000 itself as U+E000 U+E000 (nothing else
//!   changes), and read back unescaped; filters are escaped the same way, so they match.
//! - **Size** (`prune` by `max_bytes`): the sum of `pg_column_size` of the rows of
//!   `migrations` (detail as stored, compressed), not `pg_total_relation_size`, which does not
//!   shrink after a DELETE until a VACUUM FULL and would have every prune delete everything.
//! - **The connection**: its task is spawned; when it ends (the server restarted, the backend
//!   was terminated), the reason is kept and the next call fails with it (Unreachable). A
//!   caller that wants to go on opens the journal again.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio_postgres::config::SslMode;
use tokio_postgres::error::{Severity, SqlState};
use tokio_postgres::types::{Json, ToSql};
use tokio_postgres::{Client, Config, NoTls, Row};

use super::{Access, Committed, SCHEMA_VERSION};
use crate::error::{Error, JournalFault, Result};
use crate::model::journal::{
    HistoryQuery, MigrationRecord, Platform, Pruned, RecordOutcome, RecordedBy, Retention,
};

/// The key of the advisory lock a Write-open holds while it checks and migrates the schema
/// (per database; any constant other programs are unlikely to pick: "vmctl-jr" in ASCII).
const SCHEMA_LOCK: i64 = 0x766d_6374_6c2d_6a72;

/// How long a connection attempt may take when the URL sets no `connect_timeout`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The ordered migration steps: step `i` brings the schema to version `i + 1`.
const STEPS: &[&str] = &[
    // 1: the records and the bookmarks.
    "CREATE TABLE migrations (
        id TEXT PRIMARY KEY,
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
        ended_ms BIGINT NOT NULL,
        recorded_at TEXT NOT NULL,
        duration_ms BIGINT,
        transfer_ms BIGINT,
        data_processed_bytes BIGINT,
        data_total_bytes BIGINT,
        data_remaining_bytes BIGINT,
        detail JSONB
    );
    CREATE INDEX migrations_ended ON migrations (ended_ms DESC, id DESC);
    CREATE INDEX migrations_cluster ON migrations (cluster, ended_ms DESC);
    CREATE INDEX migrations_vm ON migrations (vm, namespace, ended_ms DESC);
    CREATE INDEX migrations_migration ON migrations (migration, namespace);
    CREATE INDEX migrations_source_node ON migrations (source_node, ended_ms DESC);
    CREATE INDEX migrations_target_node ON migrations (target_node, ended_ms DESC);
    CREATE INDEX migrations_evacuation_node ON migrations (evacuation_node, ended_ms DESC)
        WHERE evacuation_node IS NOT NULL;
    CREATE INDEX migrations_cause ON migrations (cause, ended_ms DESC);
    CREATE TABLE bookmarks (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );",
];

/// The columns of a record, in `MigrationRecord`'s order (detail last, selected on demand).
const COLUMNS: &str = "id, cluster, recorded_by, platform, namespace, vm, migration, \
    source_node, target_node, source_pod, target_pod, evacuation_node, outcome, phase, mode, \
    plane, cause, summary, created_at, started_at, ended_at, ended_ms, recorded_at, \
    duration_ms, transfer_ms, data_processed_bytes, data_total_bytes, data_remaining_bytes";

pub struct PostgresJournal {
    /// The URL without its password: what every error and `describe()` say.
    name: String,
    // Boxed: a `Client` is ~200 bytes, the other `Journal` variant a few words.
    client: Box<tokio::sync::Mutex<Client>>,
    /// Why the connection's task ended, once it has.
    ended: Arc<Mutex<Option<String>>>,
    /// To connect again after the server ended the connection (a restart, a failover).
    url: String,
}

/// The URL without its password: `postgres://user:***@host/db`, and `password=***` in the
/// query. Never panics; anything unusual is over-redacted rather than shown (a password
/// holding an unescaped `/`, `?` or `@`). Control characters come out escaped.
pub fn redact(url: &str) -> String {
    let (head, rest) = match url.find("://") {
        Some(i) => url.split_at(i + 3),
        None => ("", url),
    };
    // The query (and fragment) start at the first `?`/`#`; the user info ends at the last
    // `@` before them (a password may hold an unescaped `/` or `@`).
    // (No `://`: libpq's `key=value …` form, all of it read as the query.)
    let q = if head.is_empty() {
        0
    } else {
        rest.find(['?', '#']).unwrap_or(rest.len())
    };
    let (before, query) = rest.split_at(q);
    let mut out = String::with_capacity(url.len() + 4);
    out.push_str(head);
    match before.rfind('@') {
        Some(at) if !head.is_empty() => {
            let userinfo = &before[..at];
            match userinfo.find(':') {
                Some(c) => {
                    out.push_str(&userinfo[..c]);
                    out.push_str(":***");
                }
                None => out.push_str(userinfo),
            }
            out.push_str(&before[at..]);
        }
        _ => out.push_str(before),
    }
    // `password=` in the query (or anywhere in a key=value string).
    let mut first = true;
    for part in split_keep(query) {
        if !first || !part.is_empty() {
            let (sep, kv) = part.split_at(part.chars().next().map_or(0, char::len_utf8));
            let (sep, kv) = if first && !sep.starts_with(['?', '#', '&', ' ']) {
                ("", part)
            } else {
                (sep, kv)
            };
            out.push_str(sep);
            match kv.split_once('=') {
                Some((k, _)) if percent_decode(k.trim()).eq_ignore_ascii_case("password") => {
                    out.push_str(k);
                    out.push_str("=***");
                }
                _ => out.push_str(kv),
            }
        }
        first = false;
    }
    crate::text::printable(&out)
}

/// `s` cut before each `?`, `#`, `&` or space (the separators stay at the start of a piece).
fn split_keep(s: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if i > start && matches!(c, '?' | '#' | '&' | ' ') {
            pieces.push(&s[start..i]);
            start = i;
        }
    }
    pieces.push(&s[start..]);
    pieces
}

/// The URL with libpq's TLS parameters tokio-postgres does not know taken out or translated:
/// `sslmode=verify-full`/`verify-ca` → `require` (which verifies here), `allow` → `prefer`,
/// and `sslrootcert=FILE` (the CA certificates to trust instead of the system's; `system`:
/// the system's) returned apart.
fn libpq_compat(url: &str) -> (Cow<'_, str>, Option<String>) {
    let Some((base, query)) = url.split_once('?') else {
        return (Cow::Borrowed(url), None);
    };
    if !query.contains("sslmode=") && !query.contains("sslrootcert=") {
        return (Cow::Borrowed(url), None);
    }
    let mut root = None;
    let mut kept: Vec<Cow<'_, str>> = Vec::new();
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("sslrootcert", v)) => root = Some(percent_decode(v)),
            Some(("sslmode", "verify-full" | "verify-ca")) => kept.push("sslmode=require".into()),
            Some(("sslmode", "allow")) => kept.push("sslmode=prefer".into()),
            _ => kept.push(pair.into()),
        }
    }
    let root = root.filter(|r| r != "system");
    if kept.is_empty() {
        return (Cow::Owned(base.to_string()), root);
    }
    (Cow::Owned(format!("{base}?{}", kept.join("&"))), root)
}

/// `%XX` escapes decoded (a malformed one is kept as it is; invalid UTF-8 replaced).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The URL as a tokio-postgres configuration (with vmctl's defaults), and the
/// `sslrootcert` file when the URL names one.
fn config(url: &str, name: &str) -> Result<(Config, Option<String>)> {
    let (url, root) = libpq_compat(url);
    let mut config = Config::from_str(&url).map_err(|e| {
        super::fault(
            name,
            JournalFault::Other,
            format!("not a PostgreSQL URL this vmctl understands: {}", chain(&e)),
        )
    })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name("vmctl");
    }
    Ok((config, root))
}

/// The CA certificates of an `sslrootcert` file (PEM).
fn root_file(path: &str, name: &str) -> Result<Arc<rustls::RootCertStore>> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let shown = crate::text::printable(path);
    let bad = |why: String| {
        super::fault(
            name,
            JournalFault::Other,
            format!("sslrootcert {shown}: {why}"),
        )
    };
    let pem = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| bad(format!("not PEM certificates: {e}")))?;
        roots
            .add(cert)
            .map_err(|e| bad(format!("not a CA certificate rustls accepts: {e}")))?;
    }
    if roots.is_empty() {
        return Err(bad("no certificate in it".to_string()));
    }
    Ok(Arc::new(roots))
}

/// The system's trust roots, loaded once (a missing or unreadable store gives an empty one:
/// then every TLS connection fails verification, and says so).
fn roots() -> Arc<rustls::RootCertStore> {
    static ROOTS: OnceLock<Arc<rustls::RootCertStore>> = OnceLock::new();
    ROOTS
        .get_or_init(|| {
            let mut roots = rustls::RootCertStore::empty();
            roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
            Arc::new(roots)
        })
        .clone()
}

fn tls(
    name: &str,
    roots: Arc<rustls::RootCertStore>,
) -> Result<tokio_postgres_rustls::MakeRustlsConnect> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| super::fault(name, JournalFault::Other, format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// Spawns the connection's task; what ended it is kept in `ended`.
fn spawn_connection<F>(connection: F, ended: &Arc<Mutex<Option<String>>>)
where
    F: std::future::Future<Output = std::result::Result<(), tokio_postgres::Error>>
        + Send
        + 'static,
{
    let ended = Arc::clone(ended);
    tokio::spawn(async move {
        let why = match connection.await {
            Ok(()) => "the server closed the connection".to_string(),
            Err(e) => message(&e),
        };
        if let Ok(mut slot) = ended.lock() {
            // A call may have seen the server's reason first (see `fail`): it stays.
            slot.get_or_insert(why);
        }
    });
}

/// An error's text and its causes, `a: b: c`.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.ends_with(&text) {
            let _ = write!(out, ": {text}");
        }
        source = s.source();
    }
    out
}

/// What the server (or the client library) said, in one line.
fn message(e: &tokio_postgres::Error) -> String {
    let text = match e.as_db_error() {
        Some(db) => {
            let mut text = format!("{} (SQLSTATE {})", db.message(), db.code().code());
            if let Some(detail) = db.detail() {
                let _ = write!(text, "; {detail}");
            }
            text
        }
        None => chain(e),
    };
    crate::text::printable(&text)
}

/// The servers a configuration names, `host:port, …` (what "cannot reach" names).
fn servers(config: &Config) -> String {
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            // One port for every host, or one each; PostgreSQL's default otherwise.
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            match host {
                tokio_postgres::config::Host::Tcp(h) if h.contains(':') => format!("[{h}]:{port}"),
                tokio_postgres::config::Host::Tcp(h) => format!("{h}:{port}"),
                #[cfg(unix)]
                tokio_postgres::config::Host::Unix(dir) => format!("{}", dir.display()),
            }
        })
        .collect();
    if hosts.is_empty() {
        return "the server".to_string();
    }
    crate::text::printable(&hosts.join(", "))
}

/// Whether an error means the server cannot be reached or refused us.
fn unreachable(e: &tokio_postgres::Error) -> bool {
    let Some(code) = e.code() else {
        // No SQLSTATE: the socket, DNS, TLS, a timeout, a closed connection.
        return true;
    };
    let c = code.code();
    c.starts_with("08") // connection_exception
        || c.starts_with("28") // invalid_authorization_specification (wrong password, …)
        || c.starts_with("57P") // admin_shutdown, crash_shutdown, cannot_connect_now, …
        || *code == SqlState::INVALID_CATALOG_NAME // the database does not exist
        || *code == SqlState::TOO_MANY_CONNECTIONS
}

/// Connects to the server `url` names (TLS as its sslmode says); the connection's task
/// writes why it ended into `ended`.
async fn connect(url: &str, name: &str, ended: &Arc<Mutex<Option<String>>>) -> Result<Client> {
    let (config, root) = config(url, name)?;
    let connected = if config.get_ssl_mode() == SslMode::Disable {
        config.connect(NoTls).await.map(|(client, connection)| {
            spawn_connection(connection, ended);
            client
        })
    } else {
        let roots = match root {
            Some(path) => root_file(&path, name)?,
            None => roots(),
        };
        config
            .connect(tls(name, roots)?)
            .await
            .map(|(client, connection)| {
                spawn_connection(connection, ended);
                client
            })
    };
    connected.map_err(|e| {
        let hint = if message(&e).contains("certificate") {
            " (sslmode prefer and require verify the server's certificate against the \
                 system's CAs, or the CA file sslrootcert= names)"
        } else {
            ""
        };
        let fault = if unreachable(&e) {
            JournalFault::Unreachable
        } else {
            JournalFault::Other
        };
        super::fault(
            name,
            fault,
            format!("cannot reach {}: {}{hint}", servers(&config), message(&e)),
        )
    })
}

impl PostgresJournal {
    pub async fn open(url: &str, access: Access) -> Result<PostgresJournal> {
        let name = redact(url);
        let ended = Arc::new(Mutex::new(None));
        let client = connect(url, &name, &ended).await?;
        let journal = PostgresJournal {
            name,
            url: url.to_string(),
            client: Box::new(tokio::sync::Mutex::new(client)),
            ended,
        };
        match access {
            Access::Write => journal.migrate().await?,
            Access::Read => journal.check_readable().await?,
        }
        Ok(journal)
    }

    pub fn describe(&self) -> String {
        self.name.clone()
    }

    /// The error for a failed call: the connection's end when it has ended, else by SQLSTATE.
    fn fail(&self, doing: &str, e: &tokio_postgres::Error) -> Error {
        // A FATAL error ends the connection: its text is the reason every later call gives
        // (the connection's task itself may only see the socket close).
        if let Some(db) = e.as_db_error()
            && matches!(
                db.parsed_severity(),
                Some(Severity::Fatal | Severity::Panic)
            )
            && let Ok(mut slot) = self.ended.lock()
        {
            *slot = Some(message(e));
        }
        if let Some(why) = self.ended() {
            return super::fault(
                &self.name,
                JournalFault::Unreachable,
                format!("{doing}: lost the connection to the server: {why}"),
            );
        }
        let fault = if e.code() == Some(&SqlState::DISK_FULL) {
            JournalFault::Full
        } else if unreachable(e) {
            JournalFault::Unreachable
        } else {
            JournalFault::Other
        };
        super::fault(&self.name, fault, format!("{doing}: {}", message(e)))
    }

    fn ended(&self) -> Option<String> {
        self.ended.lock().ok().and_then(|slot| slot.clone())
    }

    /// The client; when its connection has ended (the server restarted, an administrator
    /// ended it), a new connection first: a recorder outlives its database's restarts. The
    /// call that finds it cannot connect again fails as Unreachable, with both reasons.
    async fn client(&self, doing: &str) -> Result<tokio::sync::MutexGuard<'_, Client>> {
        let mut client = self.client.lock().await;
        if let Some(why) = self.ended() {
            // The old connection's task is over: the new one's reports into the same slot.
            if let Ok(mut slot) = self.ended.lock() {
                *slot = None;
            }
            match connect(&self.url, &self.name, &self.ended).await {
                Ok(c) => *client = c,
                Err(e) => {
                    if let Ok(mut slot) = self.ended.lock() {
                        *slot = Some(why.clone());
                    }
                    let again = match &e {
                        Error::Journal { message, .. } => message.clone(),
                        other => other.to_string(),
                    };
                    return Err(super::fault(
                        &self.name,
                        JournalFault::Unreachable,
                        format!("{doing}: lost the connection to the server: {why}; {again}"),
                    ));
                }
            }
        }
        Ok(client)
    }

    /// Write-open: creates the schema or brings it forward, under the advisory lock.
    async fn migrate(&self) -> Result<()> {
        const DOING: &str = "preparing the schema";
        let mut client = self.client(DOING).await?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| self.fail(DOING, &e))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
            .await
            .map_err(|e| self.fail(DOING, &e))?;
        // Created only when absent: `IF NOT EXISTS` would need CREATE on the schema even
        // when the table is there (a writer with INSERT rights only).
        let exists: bool = tx
            .query_one("SELECT to_regclass('vmctl_schema') IS NOT NULL", &[])
            .await
            .and_then(|row| row.try_get(0))
            .map_err(|e| self.fail(DOING, &e))?;
        if !exists {
            tx.batch_execute(
                "CREATE TABLE vmctl_schema (
                    version BIGINT PRIMARY KEY,
                    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                )",
            )
            .await
            .map_err(|e| self.fail(DOING, &e))?;
        }
        let version = self.version_in(&tx).await?;
        self.refuse_newer(version)?;
        for (i, step) in STEPS.iter().enumerate() {
            let to = i64::try_from(i + 1).unwrap_or(i64::MAX);
            if to <= version {
                continue;
            }
            let doing = format!("migrating the schema to version {to}");
            tx.batch_execute(step).await.map_err(|e| {
                if e.code() == Some(&SqlState::DUPLICATE_TABLE) {
                    // Another program's table of the same name (`migrations` is a common one).
                    super::fault(
                        &self.name,
                        JournalFault::Other,
                        format!(
                            "{doing}: {}: the database has tables of another program; give \
                             vmctl a database of its own, or a schema (CREATE SCHEMA vmctl, \
                             then ?options=-csearch_path%3Dvmctl in the URL)",
                            message(&e)
                        ),
                    )
                } else {
                    self.fail(&doing, &e)
                }
            })?;
            tx.execute("INSERT INTO vmctl_schema (version) VALUES ($1)", &[&to])
                .await
                .map_err(|e| self.fail(&doing, &e))?;
        }
        tx.commit().await.map_err(|e| self.fail(DOING, &e))
    }

    /// Read-open: the schema must be there, at a version this build reads.
    async fn check_readable(&self) -> Result<()> {
        const DOING: &str = "reading the schema version";
        let client = self.client(DOING).await?;
        let row = client
            .query_one(
                "SELECT to_regclass('vmctl_schema') IS NOT NULL, \
                        to_regclass('migrations') IS NOT NULL, \
                        to_regclass('bookmarks') IS NOT NULL",
                &[],
            )
            .await
            .map_err(|e| self.fail(DOING, &e))?;
        let has = |i| row.try_get::<_, bool>(i).unwrap_or(false);
        if !has(0) {
            return Err(super::fault(
                &self.name,
                JournalFault::Missing,
                format!(
                    "no vmctl journal in {} (no vmctl_schema table; `vmctl record` creates it)",
                    self.name
                ),
            ));
        }
        let version = self.version_in(&*client).await?;
        self.refuse_newer(version)?;
        if version < 1 {
            return Err(super::fault(
                &self.name,
                JournalFault::Missing,
                format!(
                    "no vmctl journal in {} (vmctl_schema is empty: never migrated)",
                    self.name
                ),
            ));
        }
        if !has(1) || !has(2) {
            return Err(super::fault(
                &self.name,
                JournalFault::Corrupt,
                "vmctl_schema is there but the migrations or bookmarks table is not",
            ));
        }
        Ok(())
    }

    async fn version_in<C: tokio_postgres::GenericClient>(&self, c: &C) -> Result<i64> {
        const DOING: &str = "reading the schema version";
        let row = c
            .query_one("SELECT coalesce(max(version), 0) FROM vmctl_schema", &[])
            .await
            .map_err(|e| self.fail(DOING, &e))?;
        row.try_get(0).map_err(|e| self.fail(DOING, &e))
    }

    fn refuse_newer(&self, version: i64) -> Result<()> {
        if version > SCHEMA_VERSION {
            return Err(super::fault(
                &self.name,
                JournalFault::NewerSchema,
                format!(
                    "written by a newer vmctl (schema version {version}; this vmctl knows up \
                     to {SCHEMA_VERSION}): upgrade vmctl to use it"
                ),
            ));
        }
        Ok(())
    }

    pub async fn commit(
        &self,
        records: &[MigrationRecord],
        bookmarks: &[(String, String)],
    ) -> Result<Committed> {
        const DOING: &str = "storing records";
        // The same order in every writer: two transactions inserting overlapping ids do not
        // wait on each other round a circle (a deadlock).
        let mut rows: Vec<(StoredRecord<'_>, &str)> = records
            .iter()
            .map(|r| (StoredRecord::new(r), r.id.as_str()))
            .collect();
        rows.sort_by(|a, b| a.0.id.cmp(&b.0.id));
        let (rows, ids): (Vec<StoredRecord<'_>>, Vec<&str>) = rows.into_iter().unzip();
        let mut marks: Vec<(Cow<'_, str>, Cow<'_, str>)> = bookmarks
            .iter()
            .map(|(k, v)| (escape(k), escape(v)))
            .collect();
        marks.sort();

        let mut client = self.client(DOING).await?;
        // A deadlock with a writer that orders differently (another program) is retried.
        let mut attempt = 0;
        let inserted = loop {
            attempt += 1;
            match store(&mut client, &rows, &marks).await {
                Ok(inserted) => break inserted,
                Err(e)
                    if attempt < 3
                        && matches!(
                            e.code(),
                            Some(&SqlState::T_R_DEADLOCK_DETECTED)
                                | Some(&SqlState::T_R_SERIALIZATION_FAILURE)
                        ) => {}
                Err(e) => return Err(self.fail(DOING, &e)),
            }
        };
        let new = inserted.iter().filter(|&&n| n > 0).count();
        let duplicate_ids = ids
            .iter()
            .zip(&inserted)
            .filter(|&(_, &n)| n == 0)
            .map(|(id, _)| id.to_string())
            .collect();
        Ok(Committed {
            inserted: new,
            duplicates: rows.len() - new,
            duplicate_ids,
        })
    }

    pub async fn bookmark(&self, name: &str) -> Result<Option<String>> {
        const DOING: &str = "reading a bookmark";
        let client = self.client(DOING).await?;
        let row = client
            .query_opt(
                "SELECT value FROM bookmarks WHERE name = $1",
                &[&escape(name)],
            )
            .await
            .map_err(|e| self.fail(DOING, &e))?;
        match row {
            None => Ok(None),
            Some(row) => {
                let value: String = row.try_get(0).map_err(|e| self.fail(DOING, &e))?;
                Ok(Some(unescape(&value).into_owned()))
            }
        }
    }

    pub async fn contains(&self, id: &str) -> Result<bool> {
        const DOING: &str = "looking up a record";
        let client = self.client(DOING).await?;
        let row = client
            .query_opt("SELECT 1 FROM migrations WHERE id = $1", &[&escape(id)])
            .await
            .map_err(|e| self.fail(DOING, &e))?;
        Ok(row.is_some())
    }

    pub async fn query(&self, query: &HistoryQuery) -> Result<Vec<MigrationRecord>> {
        const DOING: &str = "querying records";
        let mut text: Vec<Cow<'_, str>> = Vec::new();
        let mut conditions: Vec<String> = Vec::new();
        let mut equal = |column: &str, value: &Option<String>, text: &mut Vec<Cow<'_, str>>| {
            if let Some(v) = value {
                text.push(Cow::Owned(escape(v).into_owned()));
                conditions.push(format!("{column} = ${}", text.len()));
            }
        };
        equal("cluster", &query.cluster, &mut text);
        equal("namespace", &query.namespace, &mut text);
        equal("vm", &query.vm, &mut text);
        equal("migration", &query.migration, &mut text);
        equal("cause", &query.cause, &mut text);
        equal(
            "outcome",
            &query.outcome.map(|o| o.as_str().to_string()),
            &mut text,
        );
        if let Some(node) = &query.node {
            text.push(Cow::Owned(escape(node).into_owned()));
            let n = text.len();
            conditions.push(format!(
                "(source_node = ${n} OR target_node = ${n} OR evacuation_node = ${n})"
            ));
        }
        let mut numbers: Vec<i64> = Vec::new();
        let mut sql = format!(
            "SELECT {COLUMNS}{} FROM migrations",
            if query.with_detail { ", detail" } else { "" }
        );
        if let Some(since) = query.since_ms {
            numbers.push(since);
            conditions.push(format!("ended_ms >= ${}", text.len() + numbers.len()));
        }
        if !conditions.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&conditions.join(" AND "));
        }
        sql.push_str(" ORDER BY ended_ms DESC, id DESC");
        if let Some(limit) = query.limit {
            numbers.push(i64::try_from(limit).unwrap_or(i64::MAX));
            let _ = write!(sql, " LIMIT ${}", text.len() + numbers.len());
        }
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(text.len() + 2);
        params.extend(text.iter().map(|t| t as &(dyn ToSql + Sync)));
        params.extend(numbers.iter().map(|n| n as &(dyn ToSql + Sync)));

        let client = self.client(DOING).await?;
        let rows = client
            .query(&sql, &params)
            .await
            .map_err(|e| self.fail(DOING, &e))?;
        rows.iter()
            .map(|row| self.record(row, query.with_detail))
            .collect()
    }

    /// A row as a record (strings unescaped); a value this build cannot read is Corrupt.
    fn record(&self, row: &Row, with_detail: bool) -> Result<MigrationRecord> {
        let bad = |what: &str| {
            let id: String = row.try_get(0).unwrap_or_default();
            super::fault(
                &self.name,
                JournalFault::Corrupt,
                format!("record {}: {what}", crate::text::printable(&unescape(&id))),
            )
        };
        let s = |i: usize| -> Result<String> {
            row.try_get::<_, String>(i)
                .map(|v| unescape(&v).into_owned())
                .map_err(|e| bad(&format!("column {i}: {}", chain(&e))))
        };
        let o = |i: usize| -> Result<Option<String>> {
            row.try_get::<_, Option<String>>(i)
                .map(|v| v.map(|v| unescape(&v).into_owned()))
                .map_err(|e| bad(&format!("column {i}: {}", chain(&e))))
        };
        let n = |i: usize| -> Result<Option<i64>> {
            row.try_get::<_, Option<i64>>(i)
                .map_err(|e| bad(&format!("column {i}: {}", chain(&e))))
        };
        let recorded_by = s(2)?;
        let platform = s(3)?;
        let outcome = s(12)?;
        let detail = if with_detail {
            let mut v: Option<serde_json::Value> = row
                .try_get(28)
                .map_err(|e| bad(&format!("detail: {}", chain(&e))))?;
            if let Some(v) = &mut v {
                unescape_json(v);
            }
            v.unwrap_or(serde_json::Value::Null)
        } else {
            serde_json::Value::Null
        };
        Ok(MigrationRecord {
            id: s(0)?,
            cluster: s(1)?,
            recorded_by: RecordedBy::parse(&recorded_by)
                .ok_or_else(|| bad(&format!("unknown recorded_by {recorded_by:?}")))?,
            platform: Platform::parse(&platform)
                .ok_or_else(|| bad(&format!("unknown platform {platform:?}")))?,
            namespace: s(4)?,
            vm: s(5)?,
            migration: s(6)?,
            source_node: o(7)?,
            target_node: o(8)?,
            source_pod: o(9)?,
            target_pod: o(10)?,
            evacuation_node: o(11)?,
            outcome: RecordOutcome::parse(&outcome)
                .ok_or_else(|| bad(&format!("unknown outcome {outcome:?}")))?,
            phase: s(13)?,
            mode: o(14)?,
            plane: s(15)?,
            cause: s(16)?,
            summary: s(17)?,
            created_at: o(18)?,
            started_at: o(19)?,
            ended_at: o(20)?,
            ended_ms: n(21)?.ok_or_else(|| bad("ended_ms is NULL"))?,
            recorded_at: s(22)?,
            duration_ms: n(23)?,
            transfer_ms: n(24)?,
            data_processed_bytes: n(25)?,
            data_total_bytes: n(26)?,
            data_remaining_bytes: n(27)?,
            detail,
        })
    }

    pub async fn prune(&self, retention: &Retention, now_ms: i64) -> Result<Pruned> {
        const DOING: &str = "pruning records";
        let mut pruned = Pruned::default();
        let client = self.client(DOING).await?;
        if let Some(age) = retention.max_age_ms {
            let cutoff = now_ms.saturating_sub(age.max(0));
            pruned.by_age = client
                .execute("DELETE FROM migrations WHERE ended_ms < $1", &[&cutoff])
                .await
                .map_err(|e| self.fail(DOING, &e))?;
        }
        if let Some(max) = retention.max_bytes {
            let max = i64::try_from(max).unwrap_or(i64::MAX);
            // Newest first, the running total of the rows' stored sizes; what is past the
            // bound goes. (One statement: a concurrent insert is newer and stays.)
            pruned.by_size = client
                .execute(
                    "DELETE FROM migrations WHERE id IN (
                        SELECT id FROM (
                            SELECT id, sum(pg_column_size(m.*)) OVER
                                (ORDER BY ended_ms DESC, id DESC) AS running
                            FROM migrations m
                        ) sized WHERE running > $1
                    )",
                    &[&max],
                )
                .await
                .map_err(|e| self.fail(DOING, &e))?;
        }
        Ok(pruned)
    }
}

/// One commit's transaction: the records (rows affected per record: 1 new, 0 a duplicate)
/// and the bookmarks, all or nothing.
async fn store(
    client: &mut Client,
    rows: &[StoredRecord<'_>],
    marks: &[(Cow<'_, str>, Cow<'_, str>)],
) -> std::result::Result<Vec<u64>, tokio_postgres::Error> {
    let tx = client.transaction().await?;
    let insert = tx
        .prepare(&format!(
            "INSERT INTO migrations ({COLUMNS}, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, \
             $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, \
             $24, $25, $26, $27, $28, $29) ON CONFLICT (id) DO NOTHING"
        ))
        .await?;
    // Pipelined: every INSERT is sent before the first answer is awaited.
    let inserted = futures::future::try_join_all(
        rows.iter()
            .map(|row| tx.execute_raw(&insert, row.params()))
            .collect::<Vec<_>>(),
    )
    .await?;
    if !marks.is_empty() {
        let upsert = tx
            .prepare(
                "INSERT INTO bookmarks (name, value, updated_at) VALUES ($1, $2, now()) \
                 ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()",
            )
            .await?;
        futures::future::try_join_all(
            marks
                .iter()
                .map(|(k, v)| tx.execute_raw(&upsert, [k, v]))
                .collect::<Vec<_>>(),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(inserted)
}

/// One record's values as stored (strings escaped, see the module's notes).
struct StoredRecord<'a> {
    id: Cow<'a, str>,
    text: [Cow<'a, str>; 12],
    optional: [Option<Cow<'a, str>>; 9],
    numbers: [Option<i64>; 5],
    ended_ms: i64,
    detail: Option<Json<Cow<'a, serde_json::Value>>>,
}

impl<'a> StoredRecord<'a> {
    fn new(r: &'a MigrationRecord) -> StoredRecord<'a> {
        let opt = |v: &'a Option<String>| v.as_deref().map(escape);
        StoredRecord {
            id: escape(&r.id),
            text: [
                escape(&r.cluster),
                Cow::Borrowed(r.recorded_by.as_str()),
                Cow::Borrowed(r.platform.as_str()),
                escape(&r.namespace),
                escape(&r.vm),
                escape(&r.migration),
                Cow::Borrowed(r.outcome.as_str()),
                escape(&r.phase),
                escape(&r.plane),
                escape(&r.cause),
                escape(&r.summary),
                escape(&r.recorded_at),
            ],
            optional: [
                opt(&r.source_node),
                opt(&r.target_node),
                opt(&r.source_pod),
                opt(&r.target_pod),
                opt(&r.evacuation_node),
                opt(&r.mode),
                opt(&r.created_at),
                opt(&r.started_at),
                opt(&r.ended_at),
            ],
            numbers: [
                r.duration_ms,
                r.transfer_ms,
                r.data_processed_bytes,
                r.data_total_bytes,
                r.data_remaining_bytes,
            ],
            ended_ms: r.ended_ms,
            detail: if r.detail.is_null() {
                None
            } else {
                Some(Json(escape_json(&r.detail)))
            },
        }
    }

    /// The INSERT's parameters, in `COLUMNS` order then detail.
    fn params(&self) -> [&(dyn ToSql + Sync); 29] {
        let [
            cluster,
            recorded_by,
            platform,
            namespace,
            vm,
            migration,
            outcome,
            phase,
            plane,
            cause,
            summary,
            recorded_at,
        ] = &self.text;
        let [
            source_node,
            target_node,
            source_pod,
            target_pod,
            evacuation_node,
            mode,
            created_at,
            started_at,
            ended_at,
        ] = &self.optional;
        let [duration, transfer, processed, total, remaining] = &self.numbers;
        [
            &self.id,
            cluster,
            recorded_by,
            platform,
            namespace,
            vm,
            migration,
            source_node,
            target_node,
            source_pod,
            target_pod,
            evacuation_node,
            outcome,
            phase,
            mode,
            plane,
            cause,
            summary,
            created_at,
            started_at,
            ended_at,
            &self.ended_ms,
            recorded_at,
            duration,
            transfer,
            processed,
            total,
            remaining,
            &self.detail,
        ]
    }
}

/// The escape character of the NUL escape (a private-use code point).
const ESC: char = '\u{E000}';

/// `s` as PostgreSQL can store it: NUL → ESC `0`, ESC → ESC ESC; anything else as is.
fn escape(s: &str) -> Cow<'_, str> {
    if !s.contains(['\0', ESC]) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 4);
    for c in s.chars() {
        match c {
            '\0' => {
                out.push(ESC);
                out.push('0');
            }
            ESC => {
                out.push(ESC);
                out.push(ESC);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`escape`] undone (an ESC followed by anything else is kept as it is).
fn unescape(s: &str) -> Cow<'_, str> {
    if !s.contains(ESC) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ESC {
            match chars.peek() {
                Some('0') => {
                    chars.next();
                    out.push('\0');
                }
                Some(&ESC) => {
                    chars.next();
                    out.push(ESC);
                }
                _ => out.push(ESC),
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn json_needs_escape(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(s) => s.contains(['\0', ESC]),
        serde_json::Value::Array(items) => items.iter().any(json_needs_escape),
        serde_json::Value::Object(map) => map
            .iter()
            .any(|(k, v)| k.contains(['\0', ESC]) || json_needs_escape(v)),
        _ => false,
    }
}

/// The strings and keys of a JSON document [`escape`]d (borrowed when none needs it).
fn escape_json(v: &serde_json::Value) -> Cow<'_, serde_json::Value> {
    if !json_needs_escape(v) {
        return Cow::Borrowed(v);
    }
    fn walk(v: &serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::String(s) => serde_json::Value::String(escape(s).into_owned()),
            serde_json::Value::Array(items) => {
                serde_json::Value::Array(items.iter().map(walk).collect())
            }
            serde_json::Value::Object(map) => serde_json::Value::Object(
                map.iter()
                    .map(|(k, v)| (escape(k).into_owned(), walk(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    Cow::Owned(walk(v))
}

/// [`escape_json`] undone, in place.
fn unescape_json(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) => {
            if let Cow::Owned(u) = unescape(s) {
                *s = u;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(unescape_json),
        serde_json::Value::Object(map) => {
            if map.keys().any(|k| k.contains(ESC)) {
                let old = std::mem::take(map);
                for (k, mut v) in old {
                    unescape_json(&mut v);
                    map.insert(unescape(&k).into_owned(), v);
                }
            } else {
                map.values_mut().for_each(unescape_json);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_the_password() {
        let cases = [
            (
                "postgres://vmctl:s3cret@db.example:5432/journal?sslmode=require",
                "postgres://vmctl:***@db.example:5432/journal?sslmode=require",
            ),
            ("postgres://vmctl@db/j", "postgres://vmctl@db/j"),
            ("postgresql://db/j", "postgresql://db/j"),
            // A password with an unescaped `@`, `/` and `:`.
            ("postgres://u:p@ss/w:rd@host/db", "postgres://u:***@host/db"),
            (
                "postgres://u@h/db?sslmode=disable&password=hunter2&application_name=x",
                "postgres://u@h/db?sslmode=disable&password=***&application_name=x",
            ),
            (
                "postgres://u@h/db?PASSWORD=x",
                "postgres://u@h/db?PASSWORD=***",
            ),
            ("host=h password=x user=u", "host=h password=*** user=u"),
            ("postgres://:pw@h/db", "postgres://:***@h/db"),
            // tokio-postgres decodes the keys too.
            (
                "postgres://h/db?pass%77ord=pw",
                "postgres://h/db?pass%77ord=***",
            ),
        ];
        for (url, want) in cases {
            assert_eq!(redact(url), want, "{url}");
        }
    }

    #[test]
    fn hostile_urls_neither_panic_nor_leak() {
        let hostile = [
            "",
            "postgres://",
            "postgres://@",
            "postgres://:@",
            "postgres://@@@:::///???###",
            "postgres://[::1",
            "postgres://u:pw@[::1]:99999999999/db",
            "postgres://u:pw@h:-1/db",
            "postgres://u:pw@h/%zz%ff%",
            "postgres://u:pw@h/db?sslmode=bogus",
            "postgres://u:pw@h/db?nonsense=1",
            "postgres://u:pw@h/db?password",
            "postgres://u:pw@h/db?&&&==&",
            "postgres://ü:pwé@hôst/dß?x=ÿ",
            "postgres://u:pw\u{1b}[31m@h/\u{202e}db\n",
            "postgres://u:pw@h/db?sslmode=verify-full",
            "postgres://u:pw@h,h2:5/db?target_session_attrs=read-write",
            "postgres://u:pw@h/db\0",
        ];
        for url in hostile {
            let shown = redact(url);
            assert!(!shown.contains("pw"), "{url:?} -> {shown:?}");
            assert!(!shown.chars().any(char::is_control), "{shown:?}");
            if let Err(e) = config(url, &shown) {
                assert!(!e.to_string().contains("pw"), "{e}");
            }
        }
    }

    #[test]
    fn libpq_sslmodes_are_understood() {
        let c = config("postgres://h/db?sslmode=verify-full", "x")
            .unwrap()
            .0;
        assert_eq!(c.get_ssl_mode(), SslMode::Require);
        let c = config("postgres://h/db?sslmode=disable", "x").unwrap().0;
        assert_eq!(c.get_ssl_mode(), SslMode::Disable);
        let c = config("postgres://h/db", "x").unwrap().0;
        assert_eq!(c.get_ssl_mode(), SslMode::Prefer);
        assert_eq!(c.get_connect_timeout(), Some(&CONNECT_TIMEOUT));
        assert_eq!(c.get_application_name(), Some("vmctl"));
        let c = config("postgres://h/db?connect_timeout=3&application_name=r", "x")
            .unwrap()
            .0;
        assert_eq!(c.get_connect_timeout(), Some(&Duration::from_secs(3)));
        assert_eq!(c.get_application_name(), Some("r"));
        let (c, root) = config(
            "postgres://h/db?sslrootcert=/tmp/a%20b/ca.crt&sslmode=verify-ca",
            "x",
        )
        .unwrap();
        assert_eq!(root.as_deref(), Some("/tmp/a b/ca.crt"));
        assert_eq!(c.get_ssl_mode(), SslMode::Require);
        let (_, root) = config("postgres://h/db?sslrootcert=system", "x").unwrap();
        assert_eq!(root, None);
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }

    #[test]
    fn the_nul_escape_round_trips() {
        for s in [
            "",
            "plain",
            "a\0b",
            "\0",
            "\u{E000}",
            "\u{E000}0",
            "\0\u{E000}\0",
            "x\u{E000}\u{E000}0\0",
        ] {
            let e = escape(s);
            assert!(!e.contains('\0'), "{s:?}");
            assert_eq!(unescape(&e), s, "{s:?}");
        }
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
        // Distinct strings stay distinct once escaped.
        assert_ne!(escape("\0"), escape("\u{E000}0"));

        let doc =
            serde_json::json!({"a\0": ["x\0y", {"\u{E000}": 1, "k": "\u{E000}0"}], "n": null});
        let stored = escape_json(&doc).into_owned();
        assert!(!stored.to_string().contains("\\u0000"), "{stored}");
        let mut back = stored;
        unescape_json(&mut back);
        assert_eq!(back, doc);
        let plain = serde_json::json!({"a": [1, "b"]});
        assert!(matches!(escape_json(&plain), Cow::Borrowed(_)));
    }
}
