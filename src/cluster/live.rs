//! The live source: the real kube client against an API server.
//!
//! Lists are paginated (limit 500 + continue), selectors are evaluated server-side, and
//! KubeVirt kinds are addressed statically (no discovery, FACTS §11).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};
use kube::core::Request;
use kube::core::params::{GetParams, ListParams};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Kind;
use super::bounded::{BoundLayer, TooLarge, raise_bound_hint, too_large_in};
use super::source::{Query, Source, fill_kind, object_label};
use crate::error::{Error, Result};

/// Page size for every list.
pub const PAGE_SIZE: u32 = 500;

/// The most vmctl reads of one API answer: a page of [`PAGE_SIZE`] objects of at most
/// 1.5 MiB each (etcd's default request limit) is 750 MiB. kube's `request_text` reads any
/// answer whole, however large; a larger one is refused, not read into memory.
pub const MAX_ANSWER_BYTES: u64 = 1 << 30;
/// Retries for reads answered 429/5xx or not answered at all.
const READ_RETRIES: u32 = 3;

/// How to reach the cluster, from the global flags.
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub request_timeout: Option<Duration>,
    /// The most vmctl reads of one answer (`--max-input-size`, at most [`MAX_ANSWER_BYTES`]).
    pub max_answer_bytes: u64,
}

/// Whether this process connected with the in-cluster configuration (one cluster per
/// process): the hints then speak of the pod's service account, not of a kubeconfig.
static IN_CLUSTER: AtomicBool = AtomicBool::new(false);

fn in_cluster() -> bool {
    IN_CLUSTER.load(Ordering::Relaxed)
}

/// The cluster named by `context` (else the current context) of a kubeconfig.
fn context_cluster(kubeconfig: &Kubeconfig, context: Option<&str>) -> Option<String> {
    let name = context.or(kubeconfig.current_context.as_deref())?;
    let named = kubeconfig.contexts.iter().find(|c| c.name == name)?;
    named
        .context
        .as_ref()
        .map(|c| c.cluster.clone())
        .filter(|c| !c.is_empty())
}

/// One line for a kubeconfig that kube could not use: the path once and plainly (kube's own
/// text quotes it as a Rust string inside quotes), a YAML error without its multi-line source
/// excerpt, and for a context that does not exist the contexts that do (kubectl says only
/// `context "nope" does not exist`).
fn kubeconfig_problem(
    error: &KubeconfigError,
    kubeconfig: Option<&Kubeconfig>,
    context: Option<&str>,
) -> String {
    let text = match error {
        KubeconfigError::ReadConfig(io, path) => {
            let why = match io.kind() {
                std::io::ErrorKind::NotFound => "no such file".to_string(),
                std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
                _ => io.to_string(),
            };
            format!("kubeconfig {}: {why}", path.display())
        }
        KubeconfigError::Parse(e) => {
            let first = e.to_string();
            let first = first.lines().next().unwrap_or_default().trim();
            let first = first.strip_prefix("error: ").unwrap_or(first);
            // kube does not say which file: KUBECONFIG's, else the default one.
            let which = match std::env::var("KUBECONFIG") {
                Ok(paths) if !paths.is_empty() => format!(" (KUBECONFIG={paths})"),
                _ => String::new(),
            };
            format!("kubeconfig{which} is not valid YAML: {first}")
        }
        KubeconfigError::LoadContext(name) | KubeconfigError::LoadClusterOfContext(name)
            if context.is_some_and(|c| c == name) =>
        {
            let names: Vec<&str> = kubeconfig
                .map(|k| k.contexts.iter().map(|c| c.name.as_str()).collect())
                .unwrap_or_default();
            no_such_context(name, &names)
        }
        KubeconfigError::LoadContext(name) => {
            format!("kubeconfig: its current-context {name:?} names no context in it")
        }
        KubeconfigError::CurrentContextNotSet => {
            "kubeconfig: no current-context set; pass --context NAME".to_string()
        }
        other => format!("kubeconfig: {other}"),
    };
    crate::text::printable(&text.replace('\n', " "))
}

/// `--context NAME` that the kubeconfig does not hold: the contexts it holds, the closest first.
fn no_such_context(name: &str, names: &[&str]) -> String {
    let mut line = format!("--context {name:?}: no such context in the kubeconfig");
    if names.is_empty() {
        line.push_str(" (it has none)");
        return line;
    }
    let close = crate::names::suggest(name, names.iter().copied());
    if let Some(best) = close.first() {
        line.push_str(&format!(" (did you mean {best:?}?)"));
    }
    const SHOWN: usize = 10;
    let mut listed: Vec<&str> = names.iter().copied().take(SHOWN).collect();
    listed.sort_unstable();
    line.push_str(&format!("; it has: {}", listed.join(", ")));
    if names.len() > SHOWN {
        line.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    line
}

pub struct LiveSource {
    client: kube::Client,
    max_answer_bytes: u64,
    default_namespace: String,
    cluster_url: String,
    cluster_name: Option<String>,
    /// The client's read timeout: a watch must ask the server to end it before this.
    read_timeout: Duration,
}

impl LiveSource {
    /// Kubeconfig (`--kubeconfig`, else `KUBECONFIG`, else ~/.kube/config) or in-cluster.
    pub async fn connect(options: &ConnectOptions) -> Result<Self> {
        let kube_options = KubeConfigOptions {
            context: options.context.clone(),
            ..Default::default()
        };
        // The kubeconfig context's cluster name (`record`'s default `--cluster-name`).
        let mut cluster_name = None;
        let mut config = match &options.kubeconfig {
            Some(path) => {
                let kubeconfig = Kubeconfig::read_from(path).map_err(|e| match e {
                    // The path is the error's origin already: not twice.
                    KubeconfigError::ReadConfig(io, _) => {
                        Error::bad_input(path.display(), format!("cannot read kubeconfig: {io}"))
                    }
                    e => Error::bad_input(path.display(), kubeconfig_problem(&e, None, None)),
                })?;
                cluster_name = context_cluster(&kubeconfig, options.context.as_deref());
                let known = kubeconfig.clone();
                kube::Config::from_custom_kubeconfig(kubeconfig, &kube_options)
                    .await
                    .map_err(|e| {
                        let context = options.context.as_deref();
                        let line = kubeconfig_problem(&e, Some(&known), context);
                        match (&e, context) {
                            (KubeconfigError::LoadContext(_), Some(_)) => Error::usage(line),
                            _ => Error::bad_input(path.display(), line),
                        }
                    })?
            }
            None if options.context.is_some() => {
                let read = Kubeconfig::read().ok();
                cluster_name = read
                    .as_ref()
                    .and_then(|k| context_cluster(k, options.context.as_deref()));
                kube::Config::from_kubeconfig(&kube_options)
                    .await
                    .map_err(|e| {
                        Error::usage(kubeconfig_problem(
                            &e,
                            read.as_ref(),
                            options.context.as_deref(),
                        ))
                    })?
            }
            // kube's `Config::infer`, made here to know which one answered: the kubeconfig
            // (KUBECONFIG, else ~/.kube/config), else the in-cluster configuration (a pod:
            // KUBERNETES_SERVICE_HOST/PORT and the service account's token, CA and namespace
            // under /var/run/secrets/kubernetes.io/serviceaccount/, as deploy/job.yaml runs).
            // No cluster at all is a cluster error (exit 5), like an unreachable one.
            None => match kube::Config::from_kubeconfig(&kube_options).await {
                Ok(config) => {
                    cluster_name = Kubeconfig::read()
                        .ok()
                        .and_then(|k| context_cluster(&k, options.context.as_deref()));
                    config
                }
                Err(kubeconfig_err) => match kube::Config::incluster() {
                    Ok(config) => {
                        IN_CLUSTER.store(true, Ordering::Relaxed);
                        config
                    }
                    Err(in_cluster_err) => {
                        return Err(Error::Api {
                            verb: "connect to".into(),
                            resource: "a cluster".into(),
                            status: None,
                            message: format!(
                                "no cluster configured ({}; {})",
                                kubeconfig_problem(&kubeconfig_err, None, None),
                                if std::env::var_os("KUBERNETES_SERVICE_HOST").is_none() {
                                    "not in a pod: KUBERNETES_SERVICE_HOST is unset".to_string()
                                } else {
                                    format!("in-cluster configuration: {in_cluster_err}")
                                }
                            ),
                            hints: vec![
                                "pass --kubeconfig, set KUBECONFIG, or read a snapshot with --from PATH".into(),
                            ],
                        });
                    }
                },
            },
        };
        let read_timeout = options.request_timeout.unwrap_or(Duration::from_secs(30));
        config.read_timeout = Some(read_timeout);
        config.connect_timeout = Some(Duration::from_secs(10));
        // vmctl retries reads itself (see `send`); kube's own retry would multiply the attempts.
        config.default_retry = false;
        let cluster_url = config.cluster_url.to_string();
        let default_namespace = config.default_namespace.clone();
        let max_answer_bytes = options.max_answer_bytes.clamp(1, MAX_ANSWER_BYTES);
        // Every answer bounded, also those kube reads itself (the watcher's lists and events,
        // error bodies): see `bounded`.
        let client = kube::client::ClientBuilder::try_from(config)
            .map_err(|e| Error::usage(format!("cannot build a client for {cluster_url}: {e}")))?
            .with_layer(&BoundLayer::new(max_answer_bytes))
            .build();
        Ok(LiveSource {
            client,
            max_answer_bytes,
            default_namespace,
            cluster_url,
            cluster_name,
            read_timeout,
        })
    }

    /// The kubeconfig context's cluster name; None in a pod (the in-cluster configuration
    /// names no cluster).
    pub fn cluster_name(&self) -> Option<&str> {
        self.cluster_name.as_deref()
    }

    pub fn default_namespace(&self) -> &str {
        &self.default_namespace
    }

    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// The most vmctl reads of one answer (see [`MAX_ANSWER_BYTES`]).
    pub fn max_answer_bytes(&self) -> u64 {
        self.max_answer_bytes
    }

    /// How long a watch request may stay open: 25 s, and 5 s below the read timeout (an idle
    /// watch would otherwise fail as a timed-out read).
    pub fn watch_seconds(&self) -> u32 {
        let below_timeout = self.read_timeout.as_secs().saturating_sub(5).max(1);
        below_timeout.min(25) as u32
    }

    pub fn cluster_url(&self) -> &str {
        &self.cluster_url
    }

    /// Sends a request, retrying reads answered 409/429/5xx or not answered at all; a 404 on
    /// `get` is `Ok(None)`. Mutations are never retried here (the caller decides).
    pub(crate) async fn send(
        &self,
        verb: &str,
        kind: Kind,
        request: http::Request<Vec<u8>>,
    ) -> Result<Option<Value>> {
        match self.send_text(verb, kind, request).await? {
            Some(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| Error::Api {
                    verb: verb.to_string(),
                    resource: kind.plural().to_string(),
                    status: None,
                    message: format!(
                        "the API server at {} answered with invalid JSON: {e}",
                        self.cluster_url
                    ),
                    hints: vec![],
                }),
            None => Ok(None),
        }
    }

    /// [`Self::send`], answering the body's text (decoded by the caller, straight into its type).
    pub(crate) async fn send_text(
        &self,
        verb: &str,
        kind: Kind,
        request: http::Request<Vec<u8>>,
    ) -> Result<Option<String>> {
        let mut attempt = 0;
        loop {
            let req = clone_request(&request);
            let answer = match request_text_bounded(&self.client, req, self.max_answer_bytes).await
            {
                Ok(text) => Ok(text),
                Err(BodyError::Kube(e)) => Err(e),
                // The body broke off: a read worth retrying, as a failed request is.
                Err(BodyError::Read(_))
                    if matches!(verb, "get" | "list" | "watch") && attempt < READ_RETRIES =>
                {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
                    continue;
                }
                Err(other) => {
                    return Err(Error::Api {
                        verb: verb.to_string(),
                        resource: kind.plural().to_string(),
                        status: None,
                        message: format!(
                            "the API server at {} answered: {other}",
                            self.cluster_url
                        ),
                        hints: match other {
                            BodyError::TooLarge(_) => vec![raise_bound_hint()],
                            _ => vec![],
                        },
                    });
                }
            };
            match answer {
                Ok(text) => return Ok(Some(text)),
                Err(kube::Error::Api(status)) if status.code == 404 && verb == "get" => {
                    return Ok(None);
                }
                Err(e) => {
                    let read = matches!(verb, "get" | "list" | "watch");
                    let retryable = read
                        && match &e {
                            kube::Error::Api(s) => {
                                matches!(s.code, 409 | 429 | 500 | 502 | 503 | 504)
                            }
                            kube::Error::HyperError(_) | kube::Error::Service(_) => true,
                            _ => false,
                        };
                    if retryable && attempt < READ_RETRIES {
                        attempt += 1;
                        tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
                        continue;
                    }
                    let timed_out = is_timeout(&e);
                    let error = api_error(verb, kind, &self.cluster_url, e);
                    return Err(after_attempts(
                        error,
                        attempt + 1,
                        timed_out,
                        self.read_timeout,
                    ));
                }
            }
        }
    }
}

fn clone_request(request: &http::Request<Vec<u8>>) -> http::Request<Vec<u8>> {
    let mut builder = http::Request::builder()
        .method(request.method().clone())
        .uri(request.uri().clone());
    for (k, v) in request.headers() {
        builder = builder.header(k, v);
    }
    // Rebuilding from parts of a valid request cannot fail; fall back to an empty GET.
    builder
        .body(request.body().clone())
        .unwrap_or_else(|_| http::Request::new(Vec::new()))
}

/// `virtualmachineinstances.kubevirt.io`, `pods`: a kind as kubectl names it in errors.
pub fn resource_name(kind: Kind) -> String {
    if kind.group().is_empty() {
        kind.plural().to_string()
    } else {
        format!("{}.{}", kind.plural(), kind.group())
    }
}

/// The message of an API server's error answer, on one line. A Kubernetes `Status` gives its
/// `message`; anything else (a proxy's or a mux's `404 page not found` in plain text, an HTML
/// page) is not the API's word: client-go calls it a generic server response and says what the
/// code means (k8s.io/apimachinery/pkg/api/errors NewGenericServerResponse); vmctl says the
/// code, that the answer was not a Status, and its first line, cut and escaped.
pub fn answer_message(code: u16, body: &str) -> String {
    let status_message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string));
    match status_message {
        Some(message) if !message.trim().is_empty() => one_line(&message, 500),
        _ => not_a_status(code, body),
    }
}

/// What an answer that is not a `Status` said: `HTTP 404 (not a Kubernetes Status: "404 page
/// not found")`.
fn not_a_status(code: u16, body: &str) -> String {
    let first = body.trim().lines().next().unwrap_or_default().trim();
    if first.is_empty() {
        return format!("HTTP {code} with an empty answer");
    }
    let mut shown = one_line(first, 200);
    if body.trim().chars().nth(200).is_some() || body.trim().lines().nth(1).is_some() {
        shown.push('…');
    }
    format!("HTTP {code} (not a Kubernetes Status: {shown:?})")
}

/// At most `max` characters, newlines as spaces, control characters escaped.
fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.trim().chars().take(max).collect();
    crate::text::printable(&flat.replace(['\n', '\r'], " "))
}

/// Turns a client error into one line naming the verb and resource, with hints.
pub fn api_error(verb: &str, kind: Kind, cluster_url: &str, err: kube::Error) -> Error {
    let resource = resource_name(kind);
    match err {
        kube::Error::Api(status) => {
            let code = status.code;
            let mut error = Error::Api {
                verb: verb.to_string(),
                resource: resource.clone(),
                status: Some(code),
                // kube makes a Status of an answer that is not one, with this reason and the
                // body as its message (kube-client's handle_api_errors).
                message: if status.reason == "Failed to parse error data" {
                    not_a_status(code, &status.message)
                } else if status.message.is_empty() {
                    format!("{} {}", code, status.reason)
                } else {
                    one_line(&status.message, 1000)
                },
                hints: vec![],
            };
            match code {
                401 if in_cluster() => error = error.with_hint("the pod's service account token was refused (in-cluster configuration): it may have expired, or its ServiceAccount was deleted; recreate the pod"),
                401 => error = error.with_hint("the credentials in your kubeconfig were refused; log in again or pick another --context"),
                403 if in_cluster() => error = error.with_hint(format!(
                    "the pod's service account may not {verb} {resource}; bind it to the vmctl-readonly ClusterRole (deploy/rbac.yaml; deploy/job.yaml shows the binding)"
                )),
                403 => error = error.with_hint(format!(
                    "your user may not {verb} {resource}; deploy/rbac.yaml has the read-only ClusterRole vmctl needs"
                )),
                404 if kind.group().ends_with("kubevirt.io") => {
                    error = error.with_hint(format!(
                        "this cluster does not serve {resource}: KubeVirt is not installed there, or --context points at another cluster"
                    ))
                }
                _ => {}
            }
            error
        }
        other => Error::Api {
            verb: verb.to_string(),
            resource,
            status: None,
            message: format!(
                "cannot reach the API server at {cluster_url}: {}",
                root_cause(&other)
            ),
            hints: vec![if in_cluster() {
                "in-cluster configuration: check KUBERNETES_SERVICE_HOST/PORT reach the API server and the CA in /var/run/secrets/kubernetes.io/serviceaccount/ca.crt signed its certificate".into()
            } else {
                "check the cluster is up and your kubeconfig points at it, or read a snapshot with --from PATH".into()
            }],
        },
    }
}

/// No answer within the read timeout (hyper's or tower's timeout error somewhere in the chain).
fn is_timeout(err: &kube::Error) -> bool {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = current {
        let text = e.to_string().to_ascii_lowercase();
        if text.contains("timed out") || text.contains("deadline has elapsed") {
            return true;
        }
        current = e.source();
    }
    false
}

/// Says how many attempts a read took, names --request-timeout when that is what ran out,
/// and adds the hint each failure calls for (issue 11).
pub(crate) fn after_attempts(
    error: Error,
    attempts: u32,
    timed_out: bool,
    read_timeout: Duration,
) -> Error {
    let Error::Api {
        verb,
        resource,
        status,
        message,
        mut hints,
    } = error
    else {
        return error;
    };
    let tries = if attempts > 1 {
        format!(" ({attempts} attempts)")
    } else {
        String::new()
    };
    let message = if timed_out {
        hints.retain(|h| !h.starts_with("check the cluster is up"));
        hints.push(format!(
            "raise --request-timeout (now {}s) if the API server is slow, or check that the cluster is up",
            read_timeout.as_secs()
        ));
        format!(
            "no answer from the API server within --request-timeout {}s{tries}",
            read_timeout.as_secs()
        )
    } else {
        format!("{message}{tries}")
    };
    match status {
        Some(429 | 503) => hints.push(
            "the API server is overloaded or throttling this client: retry in a minute".into(),
        ),
        Some(500 | 502 | 504) => hints.push(
            "the API server (or a proxy in front of it) keeps failing: retry later, or read a snapshot with --from PATH"
                .into(),
        ),
        _ => {}
    }
    Error::Api {
        verb,
        resource,
        status,
        message,
        hints,
    }
}

/// The innermost error's text ("Connection refused (os error 111)").
pub(crate) fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut current = err;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

/// One page of a list, decoded straight into the item type: no `Value` per object.
#[derive(Deserialize)]
struct Page<T> {
    #[serde(default)]
    metadata: ListMeta,
    /// `null` in some answers for an empty list.
    #[serde(default = "none")]
    items: Option<Vec<T>>,
}

fn none<T>() -> Option<T> {
    None
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListMeta {
    #[serde(default, rename = "continue")]
    continue_token: Option<String>,
    #[serde(default)]
    resource_version: Option<String>,
}

impl LiveSource {
    fn list_request(
        kind: Kind,
        query: &Query,
        continue_token: Option<String>,
    ) -> Result<http::Request<Vec<u8>>> {
        let namespace = if kind.namespaced() {
            query.namespace.as_deref()
        } else {
            None
        };
        let params = ListParams {
            label_selector: (!query.labels.is_empty()).then(|| query.labels.to_string()),
            field_selector: (!query.fields.is_empty()).then(|| query.fields.to_string()),
            limit: Some(PAGE_SIZE),
            continue_token,
            ..Default::default()
        };
        Request::new(kind.collection_path(namespace))
            .list(&params)
            .map_err(|e| Error::Internal(format!("building list request: {e}")))
    }

    /// Lists all pages, decoding each page straight into `T`; also answers the list's
    /// resourceVersion. `fill_type` adds `kind`/`apiVersion` to `Value` items (built-in
    /// lists omit them per item, FACTS §11).
    async fn list_pages<T: DeserializeOwned>(
        &self,
        kind: Kind,
        query: &Query,
        fill_type: impl FnMut(&mut T),
    ) -> Result<(Vec<T>, String)> {
        self.list_pages_at_most(kind, query, fill_type, usize::MAX)
            .await
            .map(Option::unwrap_or_default)
    }

    /// [`Self::list_pages`], stopping at the first page that takes the count past `max`:
    /// `None` then.
    async fn list_pages_at_most<T: DeserializeOwned>(
        &self,
        kind: Kind,
        query: &Query,
        mut fill_type: impl FnMut(&mut T),
        max: usize,
    ) -> Result<Option<(Vec<T>, String)>> {
        let mut items = Vec::new();
        let mut version = String::new();
        let mut continue_token: Option<String> = None;
        loop {
            let request = Self::list_request(kind, query, continue_token.take())?;
            let text = self
                .send_text("list", kind, request)
                .await?
                .unwrap_or_default();
            let page: Page<T> = match serde_json::from_str(&text) {
                Ok(page) => page,
                Err(e) => return Err(self.page_error::<T>(kind, &text, e)),
            };
            for mut item in page.items.unwrap_or_default() {
                fill_type(&mut item);
                items.push(item);
            }
            if items.len() > max {
                return Ok(None);
            }
            if version.is_empty()
                && let Some(rv) = page.metadata.resource_version
            {
                version = rv;
            }
            continue_token = page.metadata.continue_token.filter(|t| !t.is_empty());
            if continue_token.is_none() {
                return Ok(Some((items, version)));
            }
        }
    }

    /// A page that does not decode: name the first object that does not (as `decode` would),
    /// else the page itself. Only on the error path does the page become `Value`s.
    fn page_error<T: DeserializeOwned>(
        &self,
        kind: Kind,
        text: &str,
        error: serde_json::Error,
    ) -> Error {
        if let Ok(mut page) = serde_json::from_str::<Value>(text)
            && let Some(Value::Array(items)) = page.get_mut("items").map(Value::take)
        {
            for mut item in items {
                fill_kind(kind, &mut item);
                if let Err(message) = super::decode::from_value::<T>(&item) {
                    return Error::bad_input(object_label(kind, &item), message);
                }
            }
        }
        Error::bad_input(
            format!("{} list from {}", kind, self.cluster_url),
            error.to_string(),
        )
    }

    /// Lists (all pages) and returns the list's resourceVersion too, for a watch to start from.
    pub async fn list_with_version(
        &self,
        kind: Kind,
        query: &Query,
    ) -> Result<(Vec<Value>, String)> {
        self.list_pages(kind, query, |item: &mut Value| fill_kind(kind, item))
            .await
    }
}

impl Source for LiveSource {
    fn splits_lists(&self) -> bool {
        true
    }

    async fn list(&self, kind: Kind, query: &Query) -> Result<Vec<Value>> {
        self.list_with_version(kind, query)
            .await
            .map(|(items, _)| items)
    }

    async fn list_at_most(
        &self,
        kind: Kind,
        query: &Query,
        max: usize,
    ) -> Result<Option<Vec<Value>>> {
        self.list_pages_at_most(kind, query, |item: &mut Value| fill_kind(kind, item), max)
            .await
            .map(|page| page.map(|(items, _)| items))
    }

    /// Decodes each page straight into `T` (the model types ignore `kind`/`apiVersion`).
    async fn list_decoded<T: DeserializeOwned + Send>(
        &self,
        kind: Kind,
        query: &Query,
    ) -> Result<Vec<T>> {
        self.list_pages(kind, query, |_: &mut T| {})
            .await
            .map(|(items, _)| items)
    }

    async fn get(&self, kind: Kind, namespace: Option<&str>, name: &str) -> Result<Option<Value>> {
        let namespace = if kind.namespaced() { namespace } else { None };
        let request = Request::new(kind.collection_path(namespace))
            .get(name, &GetParams::default())
            .map_err(|e| Error::Internal(format!("building get request: {e}")))?;
        let mut value = self.send("get", kind, request).await?;
        if let Some(v) = &mut value {
            fill_kind(kind, v);
        }
        Ok(value)
    }

    /// `GET /version` once: its `gitVersion` (readable by every authenticated user through
    /// `system:public-info-viewer`). One attempt: a plan does without it.
    async fn server_version(&self) -> Result<Option<crate::model::ServerVersion>> {
        let request = http::Request::get("/version")
            .body(Vec::new())
            .map_err(|e| Error::Internal(format!("building the /version request: {e}")))?;
        let text = request_text_bounded(&self.client, request, self.max_answer_bytes)
            .await
            .map_err(|e| Error::Api {
                verb: "get".into(),
                resource: "/version".into(),
                status: None,
                message: format!("the API server at {} answered: {e}", self.cluster_url),
                hints: vec![],
            })?;
        let info: Value = serde_json::from_str(&text).map_err(|e| Error::Api {
            verb: "get".into(),
            resource: "/version".into(),
            status: None,
            message: format!("the answer of /version is not JSON: {e}"),
            hints: vec![],
        })?;
        Ok(info
            .get("gitVersion")
            .and_then(Value::as_str)
            .map(crate::model::ServerVersion::live))
    }

    fn describe(&self) -> String {
        format!("cluster {}", self.cluster_url)
    }
}

/// Why a bounded read failed.
#[derive(Debug)]
pub enum BodyError {
    Kube(kube::Error),
    TooLarge(u64),
    Read(std::io::Error),
    NotUtf8,
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Kube(e) => write!(f, "{e}"),
            BodyError::TooLarge(limit) if *limit >= 1 << 20 => {
                write!(f, "the answer is larger than {} MiB: not read", limit >> 20)
            }
            BodyError::TooLarge(limit) => {
                write!(f, "the answer is larger than {limit} bytes: not read")
            }
            BodyError::Read(e) => write!(f, "reading the answer: {e}"),
            BodyError::NotUtf8 => write!(f, "the answer is not UTF-8 text"),
        }
    }
}

/// `client.request_text(request)`, reading at most `limit` bytes of the body (API errors
/// are kube's, as with `request_text`).
pub async fn request_text_bounded(
    client: &kube::Client,
    request: http::Request<Vec<u8>>,
    limit: u64,
) -> std::result::Result<String, BodyError> {
    use futures::AsyncReadExt;
    // The client's layer stops a success's body at the same bound (`bounded`): its error is
    // the same refusal. (An error answer's body, read inside kube, is cut there, not failed:
    // its failure stays `Kube`, with its status code.)
    let body = client
        .request_stream(request)
        .await
        .map_err(BodyError::Kube)?;
    let mut bytes = Vec::new();
    Box::pin(body.take(limit.saturating_add(1)))
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| match too_large_in(&e) {
            Some(TooLarge { limit, .. }) => BodyError::TooLarge(limit),
            None => BodyError::Read(e),
        })?;
    if bytes.len() as u64 > limit {
        return Err(BodyError::TooLarge(limit));
    }
    String::from_utf8(bytes).map_err(|_| BodyError::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 33: a plain-text 404 (a mux's, not the API's) was printed raw with its newline
    /// (`cannot delete 404 page not found\n: kubevirt/virt-handler-…`).
    #[test]
    fn an_answer_that_is_not_a_status_is_said_so_on_one_line() {
        assert_eq!(
            answer_message(404, "404 page not found\n"),
            "HTTP 404 (not a Kubernetes Status: \"404 page not found\")"
        );
        assert_eq!(answer_message(502, "  \n"), "HTTP 502 with an empty answer");
        assert_eq!(
            answer_message(
                404,
                r#"{"kind":"Status","message":"daemonsets.apps \"ds\" not found","code":404}"#
            ),
            "daemonsets.apps \"ds\" not found"
        );
        let hostile = answer_message(500, "<html>\x1b[31mboom\x1b[0m\n<body>");
        assert!(
            !hostile.contains('\x1b') && !hostile.contains('\n'),
            "{hostile}"
        );
    }

    #[test]
    fn kube_s_reconstructed_status_is_not_taken_for_the_api_s_word() {
        let status =
            kube::core::Status::failure("404 page not found\n", "Failed to parse error data")
                .with_code(404);
        let error = api_error(
            "get",
            Kind::Node,
            "https://x",
            kube::Error::Api(status.boxed()),
        );
        let text = error.to_string();
        assert!(text.contains("HTTP 404 (not a Kubernetes Status"), "{text}");
        assert!(!text.contains('\n'), "{text}");
    }

    #[test]
    fn an_unknown_context_names_the_ones_there_are() {
        let line = no_such_context("prod-est", &["staging", "prod-east"]);
        assert_eq!(
            line,
            "--context \"prod-est\": no such context in the kubeconfig (did you mean \"prod-east\"?); it has: prod-east, staging"
        );
        assert_eq!(
            no_such_context("x", &[]),
            "--context \"x\": no such context in the kubeconfig (it has none)"
        );
    }
}
