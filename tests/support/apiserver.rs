//! A fake Kubernetes API server for tests: a real HTTP/1.1 server on 127.0.0.1 that serves
//! the kinds vmctl reads (`vmctl::cluster::Kind`), with LIST (selectors, pagination), GET,
//! WATCH (chunked, resumable, bookmarks, 410 Gone), simple mutation (POST, PUT, PATCH,
//! DELETE, subresources), scripted faults, and a log of every request.
//!
//! It runs on its own thread and tokio runtime, so a plain `#[test]` can start it, run the
//! `vmctl` binary against [`FakeApiServer::write_kubeconfig`], and then read the request
//! log. Dropping it shuts it down.

mod handlers;
mod patch;
mod state;
mod status;
mod tls;
mod util;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::FutureExt;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full, StreamBody};
use hyper::body::Frame;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::sync::oneshot;
use vmctl::cluster::Kind;

pub use hyper::Method;

use handlers::{Incoming, Reply, Route};
use state::State;

/// One request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// Order of arrival, from 0.
    pub id: u64,
    pub method: Method,
    pub path: String,
    /// The raw query string, without `?` (kube-rs starts it with `&`: `?&limit=500`).
    pub query: String,
    /// The query, percent-decoded, in order.
    pub params: Vec<(String, String)>,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`,
    /// or `unknown`; discovery and `/version` count as `get`.
    pub verb: &'static str,
    /// The resource the path names, if it names one of vmctl's kinds.
    pub kind: Option<Kind>,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
    /// The HTTP status answered; 0 while the request is still being answered (a delay).
    pub status: u16,
    pub at: Instant,
}

impl RecordedRequest {
    /// The last value of a (decoded) query parameter.
    pub fn param(&self, name: &str) -> Option<&str> {
        state::param(&self.params, name)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn is_list(&self) -> bool {
        self.verb == "list"
    }

    pub fn is_watch(&self) -> bool {
        self.verb == "watch"
    }

    /// `GET /api/v1/pods?limit=2` style, for assertion messages.
    pub fn line(&self) -> String {
        if self.query.is_empty() {
            format!("{} {} -> {}", self.method, self.path, self.status)
        } else {
            format!(
                "{} {}?{} -> {}",
                self.method, self.path, self.query, self.status
            )
        }
    }
}

/// A scripted misbehaviour: matching requests get `status` (with a realistic `Status` body
/// unless `body` is given), optionally only `times` times, optionally after `delay`.
///
/// ```ignore
/// server.inject_fault(Fault::status(403).on(Method::GET, "/api/v1/pods"));
/// server.inject_fault(Fault::status(429).path("/eviction").retry_after(1).times(2));
/// server.inject_fault(Fault::delayed(Duration::from_secs(2)).path("/nodes"));
/// server.inject_fault(Fault::status(410).query("watch=true").in_watch_stream().times(1));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Fault {
    /// Any method when `None`.
    pub method: Option<Method>,
    /// Substring of the path; empty matches every path.
    pub path_contains: String,
    /// Substring of the query string, matched against both the raw and the decoded form
    /// (`labelSelector=kubevirt.io=virt-launcher` matches kube-rs's `%3D` encoding).
    pub query_contains: Option<String>,
    /// The status to answer; `None` answers normally (after `delay`).
    pub status: Option<u16>,
    /// Overrides the `Status` reason.
    pub reason: Option<String>,
    /// Overrides the `Status` message.
    pub message: Option<String>,
    /// Replaces the whole body (e.g. a scripted 200 answer).
    pub body: Option<Value>,
    /// Sends `Retry-After` (and `details.retryAfterSeconds` for 429).
    pub retry_after: Option<u64>,
    /// Applies only to the first N matching requests; forever when `None`.
    pub times: Option<usize>,
    pub delay: Option<Duration>,
    /// For watch requests: answer 200 and deliver the Status as an `ERROR` event, which is
    /// how a real server reports 410 Expired on a watch (kube-rs relists only then).
    pub in_watch_stream: bool,
}

impl Fault {
    /// Answer `code` with a realistic `Status` body.
    pub fn status(code: u16) -> Fault {
        Fault {
            status: Some(code),
            ..Fault::default()
        }
    }

    /// Answer normally, but only after `delay`.
    pub fn delayed(delay: Duration) -> Fault {
        Fault {
            delay: Some(delay),
            ..Fault::default()
        }
    }

    pub fn on(mut self, method: Method, path_contains: &str) -> Fault {
        self.method = Some(method);
        self.path_contains = path_contains.to_string();
        self
    }

    pub fn method(mut self, method: Method) -> Fault {
        self.method = Some(method);
        self
    }

    pub fn path(mut self, path_contains: &str) -> Fault {
        self.path_contains = path_contains.to_string();
        self
    }

    pub fn query(mut self, query_contains: &str) -> Fault {
        self.query_contains = Some(query_contains.to_string());
        self
    }

    pub fn message(mut self, message: &str) -> Fault {
        self.message = Some(message.to_string());
        self
    }

    pub fn reason(mut self, reason: &str) -> Fault {
        self.reason = Some(reason.to_string());
        self
    }

    pub fn body(mut self, body: Value) -> Fault {
        self.body = Some(body);
        self
    }

    pub fn retry_after(mut self, seconds: u64) -> Fault {
        self.retry_after = Some(seconds);
        self
    }

    pub fn times(mut self, n: usize) -> Fault {
        self.times = Some(n);
        self
    }

    pub fn with_delay(mut self, delay: Duration) -> Fault {
        self.delay = Some(delay);
        self
    }

    pub fn in_watch_stream(mut self) -> Fault {
        self.in_watch_stream = true;
        self
    }

    fn matches(&self, method: &str, path: &str, raw_query: &str, query: &str) -> bool {
        self.times != Some(0)
            && self.method.as_ref().is_none_or(|m| m.as_str() == method)
            && path.contains(&self.path_contains)
            && self
                .query_contains
                .as_deref()
                .is_none_or(|q| raw_query.contains(q) || query.contains(q))
    }
}

struct Shared {
    state: Mutex<State>,
    host: String,
    /// A bearer token every request must carry (as a service account's does), or none.
    token: Option<String>,
    /// Scripted behaviour beyond the generic API (see [`FakeApiServer::add_hook`]).
    hooks: Mutex<Vec<Hook>>,
}

/// What a hook sees of a request.
#[derive(Debug, Clone)]
pub struct HookRequest {
    pub method: Method,
    pub path: String,
    pub query: String,
    pub body: String,
}

/// A hook's answer: a status with a JSON body, a text body, or none.
#[derive(Debug, Clone)]
pub enum HookReply {
    Json(u16, Value),
    Text(u16, String),
    Empty(u16),
}

/// Answers a request itself (`Some`) or lets the server answer it (`None`). Hooks run
/// after faults and without the server's lock held, so they may call the object methods.
pub type Hook = Arc<dyn Fn(&HookRequest) -> Option<HookReply> + Send + Sync>;

impl Shared {
    /// A panic elsewhere must not wedge the server: ignore poisoning.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The fake API server. See the module documentation.
pub struct FakeApiServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    /// The CA that signed the serving certificate, PEM, when the server speaks TLS.
    ca_pem: Option<String>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeApiServer {
    /// Starts a server holding `objects` (each with `kind`; `apiVersion` is filled in).
    pub async fn start(objects: Vec<Value>) -> FakeApiServer {
        Self::start_blocking(objects)
    }

    /// Starts a server holding what `vmctl::cluster::files::read_path` reads from `path`.
    pub async fn start_from_path(path: &Path) -> FakeApiServer {
        Self::start_from_path_blocking(path)
    }

    pub fn start_from_path_blocking(path: &Path) -> FakeApiServer {
        let found = vmctl::cluster::files::read_path(path)
            .unwrap_or_else(|e| panic!("fake API server cannot load {}: {e}", path.display()));
        Self::start_blocking(found.objects.into_iter().map(|o| o.value).collect())
    }

    /// Starts the server on its own thread and runtime; usable from sync and async tests.
    pub fn start_blocking(objects: Vec<Value>) -> FakeApiServer {
        Self::start_with(objects, None, None)
    }

    /// As a real API server inside a cluster: HTTPS with a serving certificate for
    /// `127.0.0.1`, `localhost` and `kubernetes.default.svc` signed by a fresh CA
    /// ([`Self::ca_pem`]), and every request must carry `Authorization: Bearer <token>`
    /// (else 401 `Unauthorized`, as kube-apiserver answers an unknown token).
    pub fn start_tls_blocking(objects: Vec<Value>, token: &str) -> FakeApiServer {
        let tls = tls::ServingCert::generate();
        Self::start_with(objects, Some(tls), Some(token.to_string()))
    }

    fn start_with(
        objects: Vec<Value>,
        tls: Option<tls::ServingCert>,
        token: Option<String>,
    ) -> FakeApiServer {
        let state = State::new(objects).unwrap_or_else(|e| panic!("fake API server: {e}"));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("listener address");
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            host: addr.to_string(),
            token,
            hooks: Mutex::new(Vec::new()),
        });
        let (shutdown, shutdown_rx) = oneshot::channel();
        let server_shared = Arc::clone(&shared);
        let ca_pem = tls.as_ref().map(|t| t.ca_pem.clone());
        let acceptor = tls.map(|t| t.acceptor);
        let thread = std::thread::Builder::new()
            .name(format!("fake-apiserver-{}", addr.port()))
            .spawn(move || serve_on_own_runtime(listener, acceptor, server_shared, shutdown_rx))
            .expect("spawn the fake API server thread");
        FakeApiServer {
            shared,
            addr,
            ca_pem,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`, or `https://…` for [`Self::start_tls_blocking`].
    pub fn url(&self) -> String {
        let scheme = if self.ca_pem.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// The PEM of the CA that signed the serving certificate (TLS servers only).
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A kubeconfig: cluster, user (a bearer token) and context all named `fake`, namespace
    /// `default`.
    pub fn kubeconfig_yaml(&self) -> String {
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: {url}
users:
- name: fake
  user:
    token: fake-token
contexts:
- name: fake
  context:
    cluster: fake
    user: fake
    namespace: default
current-context: fake
preferences: {{}}
",
            url = self.url()
        )
    }

    /// Writes [`Self::kubeconfig_yaml`] to `dir/kubeconfig` and returns its path.
    pub fn write_kubeconfig(&self, dir: &Path) -> PathBuf {
        let path = dir.join("kubeconfig");
        std::fs::write(&path, self.kubeconfig_yaml()).expect("write kubeconfig");
        path
    }

    /// A kube `Config` for this server, read from the kubeconfig as vmctl reads it. Note
    /// that kube 5 retries 429/503/504 up to 15 times by default (`default_retry`).
    pub async fn kube_config(&self) -> kube::Config {
        let kubeconfig =
            kube::config::Kubeconfig::from_yaml(&self.kubeconfig_yaml()).expect("kubeconfig");
        kube::Config::from_custom_kubeconfig(
            kubeconfig,
            &kube::config::KubeConfigOptions::default(),
        )
        .await
        .expect("kube config from kubeconfig")
    }

    /// A kube client for this server (must be called inside a tokio runtime).
    pub async fn kube_client(&self) -> kube::Client {
        kube::Client::try_from(self.kube_config().await).expect("kube client")
    }

    // ---- the request log ----

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    pub fn request_count(&self) -> usize {
        self.shared.lock().requests.len()
    }

    pub fn count_requests(&self, predicate: impl Fn(&RecordedRequest) -> bool) -> usize {
        self.shared
            .lock()
            .requests
            .iter()
            .filter(|r| predicate(r))
            .count()
    }

    /// LIST requests (not watches) for `kind`.
    pub fn list_count(&self, kind: Kind) -> usize {
        self.count_requests(|r| r.is_list() && r.kind == Some(kind))
    }

    pub fn reset_requests(&self) {
        self.shared.lock().requests.clear();
    }

    // ---- faults ----

    /// Faults are tried in the order they were injected; the first that matches applies.
    pub fn inject_fault(&self, fault: Fault) {
        self.shared.lock().faults.push(fault);
    }

    pub fn clear_faults(&self) {
        self.shared.lock().faults.clear();
    }

    // ---- hooks ----

    /// Adds a hook, tried before the server's own answer (after faults), in order.
    pub fn add_hook(&self, hook: Hook) {
        self.shared
            .hooks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(hook);
    }

    // ---- objects ----

    /// Makes `/version` answer `git_version`, and the eviction handler read `selector: {}`
    /// as that release does.
    pub fn set_version(&self, git_version: &str) {
        self.shared.lock().git_version = git_version.to_string();
    }

    /// Adds an object (or replaces one with the same kind/namespace/name), emitting ADDED
    /// (or MODIFIED). Returns it as stored, with its new resourceVersion.
    pub fn add_object(&self, object: Value) -> Value {
        let kind = State::kind_of(&object).unwrap_or_else(|e| panic!("add_object: {e}"));
        let mut object = object;
        default_namespace(kind, &mut object);
        let mut state = self.shared.lock();
        let existing = state
            .get(
                kind,
                object
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str),
                state::name_of(&object),
            )
            .cloned();
        match existing {
            Some(existing) => {
                object = carry_identity(&existing, object);
            }
            None => state.normalize(kind, &mut object, None),
        }
        state.commit(kind, object)
    }

    /// Replaces an existing object, emitting MODIFIED; panics if it does not exist.
    pub fn update_object(&self, object: Value) -> Value {
        let kind = State::kind_of(&object).unwrap_or_else(|e| panic!("update_object: {e}"));
        let mut object = object;
        default_namespace(kind, &mut object);
        let mut state = self.shared.lock();
        let name = state::name_of(&object).to_string();
        let existing = state
            .get(
                kind,
                object
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str),
                &name,
            )
            .cloned()
            .unwrap_or_else(|| panic!("update_object: no {kind} {name:?}"));
        let object = carry_identity(&existing, object);
        state.commit(kind, object)
    }

    /// Applies a JSON merge patch to an existing object, emitting MODIFIED.
    pub fn patch_object(
        &self,
        kind: Kind,
        namespace: Option<&str>,
        name: &str,
        merge_patch: Value,
    ) -> Value {
        let mut state = self.shared.lock();
        let mut object = state
            .get(kind, namespace, name)
            .cloned()
            .unwrap_or_else(|| panic!("patch_object: no {kind} {name:?}"));
        patch::merge_patch(&mut object, &merge_patch);
        state.commit(kind, object)
    }

    /// Removes an object at once (finalizers or not), emitting DELETED.
    pub fn delete_object(&self, kind: Kind, namespace: Option<&str>, name: &str) -> Option<Value> {
        self.shared.lock().remove(kind, namespace, name)
    }

    /// All objects of `kind`, sorted by namespace then name, with kind/apiVersion.
    pub fn objects(&self, kind: Kind) -> Vec<Value> {
        self.shared
            .lock()
            .objects
            .iter()
            .filter(|((k, _, _), _)| *k == kind)
            .map(|(_, v)| Value::clone(v))
            .collect()
    }

    pub fn object(&self, kind: Kind, namespace: Option<&str>, name: &str) -> Option<Value> {
        self.shared.lock().get(kind, namespace, name).cloned()
    }

    // ---- watches ----

    /// The last resourceVersion handed out.
    pub fn resource_version(&self) -> u64 {
        self.shared.lock().rv
    }

    /// Forgets the event history: watches (and continue tokens) from an older
    /// resourceVersion now get 410 Expired.
    pub fn compact(&self) {
        self.shared.lock().compact();
    }

    /// Sends a BOOKMARK at the current resourceVersion to every watch that allows them.
    pub fn send_bookmarks(&self) {
        self.shared.lock().send_bookmarks();
    }

    /// Ends every open watch cleanly (the client sees the stream end and re-watches).
    pub fn close_watches(&self) {
        self.shared.lock().close_watches();
    }

    pub fn active_watches(&self) -> usize {
        self.shared.lock().active_watches()
    }

    /// Blocks (polling) until at least `n` watches are open; false on timeout. In an async
    /// test use [`Self::watches_ready`], or this blocks the client's runtime too.
    pub fn wait_for_watches(&self, n: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if self.active_watches() >= n {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.active_watches() >= n
    }

    pub async fn watches_ready(&self, n: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if self.active_watches() >= n {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.active_watches() >= n
    }
}

/// A namespaced object given without a namespace lives in `default`, as `kubectl apply`
/// would put it.
fn default_namespace(kind: Kind, object: &mut Value) {
    if !kind.namespaced() {
        return;
    }
    let meta = state::metadata_mut(object);
    if meta
        .get("namespace")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        meta.insert("namespace".into(), Value::String("default".into()));
    }
}

/// Keeps an existing object's uid, creationTimestamp and namespace across a test-side
/// replacement.
fn carry_identity(existing: &Value, mut object: Value) -> Value {
    let kind = existing.get("kind").cloned();
    let api_version = existing.get("apiVersion").cloned();
    if let Value::Object(map) = &mut object {
        if let Some(kind) = kind {
            map.insert("kind".into(), kind);
        }
        if let Some(api_version) = api_version {
            map.insert("apiVersion".into(), api_version);
        }
    }
    let meta = state::metadata_mut(&mut object);
    for field in ["uid", "creationTimestamp", "namespace"] {
        if !meta.contains_key(field)
            && let Some(v) = existing.pointer(&format!("/metadata/{field}"))
        {
            meta.insert(field.into(), v.clone());
        }
    }
    object
}

impl Drop for FakeApiServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve_on_own_runtime(
    listener: std::net::TcpListener,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    shared: Arc<Shared>,
    shutdown: oneshot::Receiver<()>,
) {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("fake API server: cannot build a runtime: {e}");
            return;
        }
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::from_std(listener) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("fake API server: cannot listen: {e}");
                return;
            }
        };
        let mut shutdown = shutdown;
        loop {
            tokio::select! {
                _ = &mut shutdown => break,
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let shared = Arc::clone(&shared);
                    let acceptor = acceptor.clone();
                    tokio::spawn(async move {
                        let service = service_fn(move |req| {
                            let shared = Arc::clone(&shared);
                            async move { Ok::<_, Infallible>(handle(shared, req).await) }
                        });
                        let http = hyper::server::conn::http1::Builder::new();
                        match acceptor {
                            // A failed handshake (a client that does not trust the CA) just
                            // closes the connection, as a real server's does.
                            Some(acceptor) => {
                                if let Ok(tls) = acceptor.accept(stream).await {
                                    let _ = http.serve_connection(TokioIo::new(tls), service).await;
                                }
                            }
                            None => {
                                let _ = http.serve_connection(TokioIo::new(stream), service).await;
                            }
                        }
                    });
                }
            }
        }
    });
    // Open watches and connections are simply dropped: clients see the connection close.
    runtime.shutdown_timeout(Duration::from_millis(200));
}

type ResponseBody = BoxBody<Bytes, Infallible>;

async fn handle(
    shared: Arc<Shared>,
    req: Request<hyper::body::Incoming>,
) -> Response<ResponseBody> {
    let (parts, body) = req.into_parts();
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let method = parts.method.clone();
    let path = parts.uri.path().to_string();
    let raw_query = parts.uri.query().unwrap_or("").to_string();
    let params = util::parse_query(&raw_query);
    let decoded_query = params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    let headers: Vec<(String, String)> = parts
        .headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let content_type = parts
        .headers
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let route = handlers::route(&path);
    let verb = handlers::verb(&method, &route, &params);
    let resource = match &route {
        Route::Resource(r) => Some(r.clone()),
        _ => None,
    };

    let (id, fault) = {
        let mut state = shared.lock();
        let id = state.next_request_id;
        state.next_request_id += 1;
        state.requests.push(RecordedRequest {
            id,
            method: method.clone(),
            path: path.clone(),
            query: raw_query.clone(),
            params: params.clone(),
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
            verb,
            kind: resource.as_ref().map(|r| r.kind),
            namespace: resource.as_ref().and_then(|r| r.namespace.clone()),
            name: resource.as_ref().and_then(|r| r.name.clone()),
            subresource: resource.as_ref().and_then(|r| r.subresource.clone()),
            status: 0,
            at: Instant::now(),
        });
        let fault = state.take_fault(method.as_str(), &path, &raw_query, &decoded_query);
        (id, fault)
    };

    if let Some(token) = &shared.token {
        let sent = parts
            .headers
            .get(hyper::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        if sent != Some(format!("Bearer {token}").as_str()) {
            let mut state = shared.lock();
            if let Some(r) = state.requests.iter_mut().rev().find(|r| r.id == id) {
                r.status = 401;
            }
            return into_response(Reply::status(status::failure(
                401,
                "Unauthorized",
                "Unauthorized",
                None,
            )));
        }
    }

    if let Some(delay) = fault.as_ref().and_then(|f| f.delay) {
        tokio::time::sleep(delay).await;
    }

    let hooked = if fault.as_ref().and_then(|f| f.status).is_none() {
        let hooks = shared
            .hooks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let request = HookRequest {
            method: method.clone(),
            path: path.clone(),
            query: raw_query.clone(),
            body: String::from_utf8_lossy(&body).into_owned(),
        };
        hooks.iter().find_map(|h| h(&request))
    } else {
        None
    };
    let answer = std::panic::AssertUnwindSafe(async {
        match fault.as_ref().and_then(|f| f.status.map(|s| (f, s))) {
            Some((fault, code)) => fault_reply(fault, code, verb, resource.as_ref(), &path),
            None if hooked.is_some() => match hooked.clone() {
                Some(HookReply::Json(status, body)) => Reply::json(status, body),
                Some(HookReply::Text(status, body)) => Reply::Text { status, body },
                Some(HookReply::Empty(status)) => Reply::Empty { status },
                None => Reply::Empty { status: 500 },
            },
            None => {
                let incoming = Incoming {
                    method: &method,
                    route: &route,
                    params: &params,
                    content_type: &content_type,
                    body: &body,
                    host: &shared.host,
                };
                handlers::dispatch(&mut shared.lock(), &incoming)
            }
        }
    })
    .catch_unwind()
    .await;
    let reply = answer.unwrap_or_else(|_| {
        Reply::status(status::failure(
            500,
            "InternalError",
            "Internal error occurred: the fake API server panicked answering this request",
            None,
        ))
    });

    {
        let mut state = shared.lock();
        if let Some(r) = state.requests.iter_mut().rev().find(|r| r.id == id) {
            r.status = reply.code();
        }
    }
    into_response(reply)
}

fn fault_reply(
    fault: &Fault,
    code: u16,
    verb: &str,
    resource: Option<&handlers::ResourceRoute>,
    path: &str,
) -> Reply {
    let ctx = status::RequestContext {
        verb,
        kind: resource.map(|r| r.kind),
        namespace: resource.and_then(|r| r.namespace.as_deref()),
        name: resource.and_then(|r| r.name.as_deref()),
        subresource: resource.and_then(|r| r.subresource.as_deref()),
        path,
    };
    let body = fault.body.clone().unwrap_or_else(|| {
        status::for_code(
            code,
            fault.reason.as_deref(),
            fault.message.as_deref(),
            fault.retry_after,
            &ctx,
        )
    });
    if fault.in_watch_stream && verb == "watch" {
        return Reply::Watch(State::error_watch(&body));
    }
    let mut headers = Vec::new();
    if let Some(seconds) = fault.retry_after.or((code == 429).then_some(1)) {
        headers.push(("Retry-After".to_string(), seconds.to_string()));
    }
    Reply::Json {
        status: code,
        body,
        headers,
    }
}

fn into_response(reply: Reply) -> Response<ResponseBody> {
    let builder = Response::builder().header("Cache-Control", "no-cache, private");
    let response = match reply {
        Reply::Json {
            status,
            body,
            headers,
        } => {
            let mut builder = builder
                .status(status)
                .header(hyper::header::CONTENT_TYPE, "application/json");
            for (k, v) in headers {
                builder = builder.header(k, v);
            }
            let bytes = serde_json::to_vec(&body).unwrap_or_default();
            builder.body(Full::new(Bytes::from(bytes)).boxed())
        }
        Reply::List(page) => builder
            .status(200)
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(page.to_bytes())).boxed()),
        Reply::Text { status, body } => builder
            .status(status)
            .header(hyper::header::CONTENT_TYPE, "text/plain; charset=utf-8")
            .body(Full::new(Bytes::from(body)).boxed()),
        Reply::Empty { status } => builder.status(status).body(Empty::new().boxed()),
        Reply::Watch(start) => {
            let deadline = start.timeout.map(|t| tokio::time::Instant::now() + t);
            let stream = futures::stream::unfold(start.rx, move |mut rx| async move {
                let next = match deadline {
                    Some(deadline) => tokio::time::timeout_at(deadline, rx.recv())
                        .await
                        .ok()
                        .flatten(),
                    None => rx.recv().await,
                };
                next.map(|line| (Ok::<_, Infallible>(Frame::data(line)), rx))
            });
            builder
                .status(200)
                .header(hyper::header::CONTENT_TYPE, "application/json")
                .body(BodyExt::boxed(StreamBody::new(stream)))
        }
    };
    response.unwrap_or_else(|_| {
        let mut fallback = Response::new(Full::new(Bytes::from_static(b"{}")).boxed());
        *fallback.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
        fallback
    })
}
