//! What every command gets: the source, the scope, the output format, colour, the clock.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use crate::cli::GlobalArgs;
use crate::cluster::live::{ConnectOptions, LiveSource};
use crate::cluster::snapshot::SnapshotSource;
use crate::cluster::{Kind, Query, Source};
use crate::error::{Error, Result};
use crate::render::{OutputFormat, Style};

/// The namespace scope of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    All,
    Namespace(String),
}

impl Scope {
    pub fn namespace(&self) -> Option<&str> {
        match self {
            Scope::All => None,
            Scope::Namespace(ns) => Some(ns),
        }
    }

    pub fn query(&self) -> Query {
        Query::namespace(self.namespace())
    }

    pub fn is_all(&self) -> bool {
        matches!(self, Scope::All)
    }
}

/// Either source, behind the one trait.
pub enum AnySource {
    Live(LiveSource),
    Snapshot(SnapshotSource),
}

impl Source for AnySource {
    async fn list(&self, kind: Kind, query: &Query) -> Result<Vec<serde_json::Value>> {
        match self {
            AnySource::Live(s) => s.list(kind, query).await,
            AnySource::Snapshot(s) => s.list(kind, query).await,
        }
    }

    async fn list_at_most(
        &self,
        kind: Kind,
        query: &Query,
        max: usize,
    ) -> Result<Option<Vec<serde_json::Value>>> {
        match self {
            AnySource::Live(s) => s.list_at_most(kind, query, max).await,
            AnySource::Snapshot(s) => s.list_at_most(kind, query, max).await,
        }
    }

    async fn get(
        &self,
        kind: Kind,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<serde_json::Value>> {
        match self {
            AnySource::Live(s) => s.get(kind, namespace, name).await,
            AnySource::Snapshot(s) => s.get(kind, namespace, name).await,
        }
    }

    async fn list_decoded<T: serde::de::DeserializeOwned + Send>(
        &self,
        kind: Kind,
        query: &Query,
    ) -> Result<Vec<T>> {
        match self {
            AnySource::Live(s) => s.list_decoded(kind, query).await,
            AnySource::Snapshot(s) => s.list_decoded(kind, query).await,
        }
    }

    async fn server_version(&self) -> Result<Option<crate::model::ServerVersion>> {
        match self {
            AnySource::Live(s) => s.server_version().await,
            AnySource::Snapshot(s) => s.server_version().await,
        }
    }

    fn splits_lists(&self) -> bool {
        match self {
            AnySource::Live(s) => s.splits_lists(),
            AnySource::Snapshot(s) => s.splits_lists(),
        }
    }

    fn describe(&self) -> String {
        match self {
            AnySource::Live(s) => s.describe(),
            AnySource::Snapshot(s) => s.describe(),
        }
    }

    fn origin_of(&self, kind: Kind, value: &serde_json::Value) -> String {
        match self {
            AnySource::Live(s) => s.origin_of(kind, value),
            AnySource::Snapshot(s) => s.origin_of(kind, value),
        }
    }
}

/// How "now" was decided, so output can say what it is relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockSource {
    /// The machine's clock (live cluster).
    System,
    /// `--now` / `VMCTL_NOW`.
    Given,
    /// The `capturedAt` of a vmctl snapshot.
    Captured,
    /// The newest timestamp in a snapshot without a capture time.
    NewestInSnapshot,
}

impl ClockSource {
    /// What "as of" is relative to, for the header line (` (given)` …; empty for the
    /// machine's clock).
    pub fn note(self) -> &'static str {
        match self {
            ClockSource::System => "",
            ClockSource::Given => " (given)",
            ClockSource::Captured => " (snapshot capture time)",
            ClockSource::NewestInSnapshot => " (newest timestamp in the snapshot)",
        }
    }
}

pub struct Context {
    pub source: AnySource,
    pub scope: Scope,
    /// Whether `-n` or `-A` chose the scope (false: the kubeconfig context's namespace, or a
    /// snapshot's every namespace). `explain`'s journal fallback searches every namespace
    /// unless the scope was chosen.
    pub scope_given: bool,
    pub output: OutputFormat,
    pub style: Style,
    pub now: Timestamp,
    pub clock: ClockSource,
    /// `--journal` as given (None: `$VMCTL_JOURNAL`, else the default file).
    pub journal: Option<String>,
    /// Warnings about the input (see [`Context::warn`]).
    warnings: std::sync::Mutex<Vec<String>>,
}

/// What a libvirt command (`--connect`) takes from the global flags: the output format and
/// colour. The flags that name a Kubernetes source, scope or clock mean nothing to libvirt
/// (a domain is named by its URI and name, its job is read as it is now): refused, never
/// silently ignored.
#[derive(Debug, Clone, Copy)]
pub struct LibvirtContext {
    pub output: OutputFormat,
    pub style: Style,
}

impl LibvirtContext {
    pub fn new(global: &GlobalArgs) -> Result<LibvirtContext> {
        let kubernetes_only = [
            ("--from", global.from.is_some()),
            ("--kubeconfig", global.kubeconfig.is_some()),
            ("--context", global.context.is_some()),
            ("-n/--namespace", global.namespace.is_some()),
            ("-A/--all-namespaces", global.all_namespaces),
            ("--now (or VMCTL_NOW)", global.now.is_some()),
        ];
        if let Some((flag, _)) = kubernetes_only.iter().find(|(_, given)| *given) {
            return Err(Error::usage(format!(
                "{flag} has no meaning with --connect: a libvirt domain is named by its URI and name, and its job is read as it is now"
            )));
        }
        Ok(LibvirtContext {
            output: global.output,
            style: Style::detect(global.no_color),
        })
    }
}

/// `--max-input-size` as bytes.
fn read_limits(global: &GlobalArgs) -> Result<crate::cluster::files::ReadLimits> {
    let text = global.max_input_size.trim();
    let bytes = crate::model::Quantity::parse(text)
        .ok()
        .map(|q| q.bytes())
        .filter(|b| *b > 0)
        .ok_or_else(|| {
            Error::usage(format!(
                "--max-input-size {text:?}: expected a size such as 2Gi, 8Gi or 500Mi"
            ))
        })?;
    Ok(crate::cluster::files::ReadLimits { max_bytes: bytes })
}

pub fn parse_time(text: &str, what: &str) -> Result<Timestamp> {
    text.parse::<Timestamp>()
        .map_err(|e| Error::usage(format!("{what}: {text:?} is not an RFC 3339 time: {e}")))
}

impl Context {
    /// Opens the source the global flags name and settles scope and clock.
    pub async fn new(global: &GlobalArgs) -> Result<Context> {
        let mut warnings = Vec::new();
        let given_now = global
            .now
            .as_deref()
            .map(|t| parse_time(t, "--now"))
            .transpose()?;
        let (source, default_scope, clock_from_source) = match &global.from {
            Some(path) => {
                let snapshot = SnapshotSource::open_with(path, read_limits(global)?)?;
                warnings.extend(snapshot.warnings().iter().cloned());
                let clock = match (snapshot.captured_at(), snapshot.newest_timestamp()) {
                    (Some(at), _) => Some((
                        parse_time(at, "snapshot capturedAt")?,
                        ClockSource::Captured,
                    )),
                    (None, Some(newest)) => match newest.parse::<Timestamp>() {
                        Ok(t) => Some((t, ClockSource::NewestInSnapshot)),
                        Err(e) => {
                            warnings.push(format!(
                                "the newest time in the snapshot, {newest:?}, is not a time ({e}): ages are measured from this machine's clock"
                            ));
                            None
                        }
                    },
                    (None, None) => None,
                };
                // A snapshot has no kubeconfig context: default to every namespace.
                (AnySource::Snapshot(snapshot), Scope::All, clock)
            }
            None => {
                let live = LiveSource::connect(&ConnectOptions {
                    kubeconfig: global.kubeconfig.clone(),
                    context: global.context.clone(),
                    request_timeout: Some(Duration::from_secs(global.request_timeout.max(1))),
                    max_answer_bytes: read_limits(global)?.max_bytes,
                })
                .await?;
                let ns = Scope::Namespace(live.default_namespace().to_string());
                (AnySource::Live(live), ns, None)
            }
        };
        let scope = if global.all_namespaces {
            Scope::All
        } else if let Some(ns) = &global.namespace {
            Scope::Namespace(ns.clone())
        } else {
            default_scope
        };
        let (now, clock) = match (given_now, clock_from_source) {
            (Some(t), _) => (t, ClockSource::Given),
            (None, Some((t, c))) => (t, c),
            // To the second, as every time vmctl prints (issue 33: live `as of` carried
            // nanoseconds where snapshots did not).
            (None, None) => (
                Timestamp::from_second(Timestamp::now().as_second())
                    .unwrap_or_else(|_| Timestamp::now()),
                ClockSource::System,
            ),
        };
        let ctx = Context {
            source,
            scope,
            scope_given: global.all_namespaces || global.namespace.is_some(),
            output: global.output,
            style: Style::detect(global.no_color),
            now,
            clock,
            journal: global.journal.clone(),
            warnings: std::sync::Mutex::new(Vec::new()),
        };
        for w in warnings {
            ctx.warn(w);
        }
        Ok(ctx)
    }

    /// Says a warning about the input on stderr now, and keeps it for the JSON/YAML
    /// document's `warnings[]`: nothing vmctl ignores or assumes about its input is silent.
    pub fn warn(&self, message: String) {
        // One line: a newline in a name must not start a line of its own.
        // In ASCII where the locale is not UTF-8, as the tables are.
        eprintln!(
            "warning: {}",
            crate::render::glyphs::for_stderr(&crate::text::printable(&message))
        );
        if let Ok(mut all) = self.warnings.lock() {
            all.push(message);
        }
    }

    /// Every warning said so far, in order.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.lock().map(|w| w.clone()).unwrap_or_default()
    }

    /// Seconds from `t` to now.
    pub fn seconds_since(&self, t: &Timestamp) -> i64 {
        self.now.as_second() - t.as_second()
    }
}

impl Context {
    /// The cluster's name in the journal's records: `flag` (`record --cluster-name`), else
    /// `$VMCTL_CLUSTER_NAME`, else the kubeconfig context's cluster, else (in a pod) the API
    /// server's host; a snapshot: its description. `record` and `migrate`/`drain`/`abort`
    /// name a cluster alike.
    pub fn cluster_name(&self, flag: Option<&str>) -> String {
        let env = std::env::var("VMCTL_CLUSTER_NAME").ok();
        let given = flag
            .or(env.as_deref())
            .map(str::trim)
            .filter(|n| !n.is_empty());
        if let Some(name) = given {
            return name.to_string();
        }
        match &self.source {
            AnySource::Live(live) => cluster_name(None, live.cluster_name(), live.cluster_url()),
            AnySource::Snapshot(_) => self.source_description(),
        }
    }
}

/// The cluster's name in the records: the flag, else the kubeconfig context's cluster, else
/// (in a pod) the API server's host.
fn cluster_name(flag: Option<&str>, context_cluster: Option<&str>, url: &str) -> String {
    if let Some(name) = flag.map(str::trim).filter(|n| !n.is_empty()) {
        return name.to_string();
    }
    if let Some(name) = context_cluster {
        return name.to_string();
    }
    let host = url
        .split("://")
        .nth(1)
        .unwrap_or(url)
        .split('/')
        .next()
        .unwrap_or(url);
    if host.is_empty() {
        "in-cluster".into()
    } else {
        host.to_string()
    }
}

impl Context {
    pub fn source_description(&self) -> String {
        use crate::cluster::Source;
        self.source.describe()
    }
}

/// The namespace scope of a command that reads no cluster (`history` reads the journal
/// only): `-n`, else every namespace (`-A` or not). A journal is read whole unless `-n` is
/// given: it has no kubeconfig context, its records span namespaces and clusters, and a node
/// (`history node/NAME`) is cluster-scoped (issue 33). `--from` means nothing there and is
/// refused.
pub fn offline_scope(global: &GlobalArgs, command: &str) -> Result<Scope> {
    if global.from.is_some() {
        return Err(Error::usage(format!(
            "--from has no meaning for {command}: it reads the journal (--journal), not a cluster or a snapshot"
        )));
    }
    Ok(match &global.namespace {
        Some(ns) if !global.all_namespaces => Scope::Namespace(ns.clone()),
        _ => Scope::All,
    })
}

#[cfg(test)]
mod cluster_name_tests {
    use super::*;

    #[test]
    fn the_cluster_name_is_the_flag_else_the_context_cluster_else_the_host() {
        assert_eq!(
            cluster_name(Some("east"), Some("kind"), "https://x:6443"),
            "east"
        );
        assert_eq!(
            cluster_name(None, Some("kind-lab"), "https://x:6443"),
            "kind-lab"
        );
        assert_eq!(
            cluster_name(None, None, "https://10.96.0.1:443/"),
            "10.96.0.1:443"
        );
        assert_eq!(cluster_name(Some("  "), None, ""), "in-cluster");
    }
}
