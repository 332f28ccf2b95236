//! Watches that converge, built on `kube::runtime::watcher`.
//!
//! One [`Watch`] per kind and query: it lists once (paginated, [`PAGE_SIZE`] per page), then
//! streams events, resumes from the last resourceVersion it saw (bookmarks included), re-lists
//! on 410 Gone, and backs off on errors (kube's default backoff: 0.8 s doubling to 30 s, with
//! jitter) for [`GIVE_UP_AFTER`] before it gives up.
//!
//! Cancel-safe: everything in flight (the watcher's stream with its pending request, the page
//! buffer of a list, the backoff deadline, a change not yet handed out) lives in the struct,
//! so a `next()` future dropped by `select!` loses nothing and restarts nothing; the next call
//! carries on where the dropped one stopped.
//!
//! Kinds are addressed statically (no discovery, FACTS §11): Kubernetes' own kinds through
//! k8s-openapi, KubeVirt's through the `kube::Resource` impls below, both decoded once into
//! their model types as they arrive.

use std::borrow::Cow;
use std::fmt::Debug;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use k8s_openapi::NamespaceResourceScope;
use kube::Resource;
use kube::api::Api;
use kube::runtime::utils::Backoff;
use kube::runtime::watcher::{self, DefaultBackoff, Event};
use serde::de::DeserializeOwned;
use tokio::time::Instant;

use super::bounded::{raise_bound_hint, too_large_in};
use super::live::{LiveSource, PAGE_SIZE, api_error, resource_name, root_cause};
use super::{Kind, Query};
use crate::error::Result;
use crate::model::{
    Node, ObjectMeta, Pod, VirtualMachineInstance, VirtualMachineInstanceMigration,
};

/// How long a watch keeps retrying without a single success before it gives up.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(15 * 60);
/// After a failure, a watch that stays open this long without a new error counts as back
/// (the watcher reports a successful re-watch only with the next event).
pub const RECOVERED_AFTER: Duration = Duration::from_secs(2);
/// Two 410s closer than this: the second re-list waits for the backoff too.
const GONE_AGAIN_WITHIN: Duration = Duration::from_secs(30);

/// A kind a [`Watch`] can follow: namespaced, statically addressed, decoded into a model type.
pub trait Watchable:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + DeserializeOwned
    + Debug
    + Send
    + Sync
    + 'static
{
    const KIND: Kind;
}

impl Watchable for Pod {
    const KIND: Kind = Kind::Pod;
}

/// A kind a [`Watch`] follows as [`Boxed`]: the namespaced ones, and Nodes (cluster-scoped,
/// always watched across the cluster: a [`Query`] without a namespace).
pub trait Boxable:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
    const KIND: Kind;
}

impl Boxable for Pod {
    const KIND: Kind = Kind::Pod;
}

impl Boxable for Node {
    const KIND: Kind = Kind::Node;
}

macro_rules! kubevirt_resource {
    ($ty:ty, $kind:expr) => {
        impl Resource for $ty {
            type DynamicType = ();
            type Scope = NamespaceResourceScope;

            fn kind(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($kind.name())
            }

            fn group(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($kind.group())
            }

            fn version(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($kind.version())
            }

            fn plural(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($kind.plural())
            }

            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }

            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }

        impl Watchable for $ty {
            const KIND: Kind = $kind;
        }

        impl Boxable for $ty {
            const KIND: Kind = $kind;
        }
    };
}

kubevirt_resource!(VirtualMachineInstance, Kind::VirtualMachineInstance);
kubevirt_resource!(
    VirtualMachineInstanceMigration,
    Kind::VirtualMachineInstanceMigration
);

/// A watched object kept on the heap: a list then moves pointers, not kilobytes (a model
/// object is 1 to 2.5 KB inline), and a 100,000-object list is never held twice.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(transparent)]
pub struct Boxed<T>(pub Box<T>);

// Namespaced as far as `Api` is concerned: a Node's watch is always `Api::all` (no namespace
// in its query), whose path is the cluster-scoped one.
impl<T: Boxable> Resource for Boxed<T> {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(dt: &()) -> Cow<'_, str> {
        T::kind(dt)
    }

    fn group(dt: &()) -> Cow<'_, str> {
        T::group(dt)
    }

    fn version(dt: &()) -> Cow<'_, str> {
        T::version(dt)
    }

    fn plural(dt: &()) -> Cow<'_, str> {
        T::plural(dt)
    }

    fn meta(&self) -> &ObjectMeta {
        self.0.meta()
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.0.meta_mut()
    }
}

impl<T: Boxable> Watchable for Boxed<T> {
    const KIND: Kind = <T as Boxable>::KIND;
}

/// What a watch reports.
#[derive(Debug, Clone)]
pub enum Change<K> {
    /// Added or modified.
    Applied(K),
    Deleted(K),
    /// The watch was (re)started from a fresh list: the complete current set.
    Listed(Vec<K>),
    /// The watch failed; it retries by itself after `retry_in` (the caller may show this).
    Reconnecting(Reconnecting),
    /// The watch works again after [`Change::Reconnecting`].
    Recovered,
}

/// Why a watch is reconnecting, for a status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reconnecting {
    pub kind: Kind,
    /// Consecutive failures, from 1.
    pub attempt: u32,
    pub reason: String,
    pub retry_in: Duration,
}

impl std::fmt::Display for Reconnecting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} watch reconnecting… (attempt {}: {}; next try in {:.1}s)",
            self.kind,
            self.attempt,
            self.reason,
            self.retry_in.as_secs_f64()
        )
    }
}

/// Drops what no caller reads and a real cluster makes large (managedFields are often
/// half of an object), so a watch of 100,000 objects stays small.
fn slim<K: Watchable>(mut object: K) -> K {
    object.meta_mut().managed_fields = None;
    object
}

type EventStream<K> = BoxStream<'static, watcher::Result<Event<K>>>;

/// A watch of one kind that survives dropped connections, expired versions and outages.
pub struct Watch<K: Watchable> {
    api: Api<K>,
    config: watcher::Config,
    cluster_url: String,
    stream: EventStream<K>,
    /// Objects of a list in progress (pages arrive one object at a time).
    buffer: Vec<K>,
    listed_once: bool,
    backoff: DefaultBackoff,
    /// Do not poll the stream before this (backing off after an error).
    retry_at: Option<Instant>,
    /// The failure being retried: since when, how many attempts, why.
    failing: Option<(Instant, Reconnecting)>,
    /// While failing: if nothing fails until then, the watch is back.
    settle_at: Option<Instant>,
    last_gone: Option<Instant>,
    /// A change to hand out on the next call (after a `Recovered`).
    pending: Option<Change<K>>,
    /// Lists started (the first one included) and re-lists after 410 Gone.
    pub lists: u32,
    pub relists: u32,
}

impl<K: Watchable> Watch<K> {
    pub fn new(live: &LiveSource, query: &Query) -> Self {
        let client = live.client().clone();
        let api = match &query.namespace {
            Some(ns) => Api::namespaced(client, ns),
            None => Api::all(client),
        };
        let mut config = watcher::Config::default()
            .page_size(PAGE_SIZE)
            .timeout(live.watch_seconds());
        if !query.labels.is_empty() {
            config = config.labels(&query.labels.to_string());
        }
        if !query.fields.is_empty() {
            config = config.fields(&query.fields.to_string());
        }
        let stream = watcher::watcher(api.clone(), config.clone()).boxed();
        Watch {
            api,
            config,
            cluster_url: live.cluster_url().to_string(),
            stream,
            buffer: Vec::new(),
            listed_once: false,
            backoff: DefaultBackoff::default(),
            retry_at: None,
            failing: None,
            settle_at: None,
            last_gone: None,
            pending: None,
            lists: 0,
            relists: 0,
        }
    }

    /// The failure being retried, if any.
    pub fn reconnecting(&self) -> Option<&Reconnecting> {
        self.failing.as_ref().map(|(_, r)| r)
    }

    /// Starts over from a fresh list (the watcher keeps a stale version after some 410s).
    fn restart(&mut self) {
        self.buffer.clear();
        self.stream = watcher::watcher(self.api.clone(), self.config.clone()).boxed();
    }

    /// A success: clears a failure being retried; returns `Recovered` first if there was one.
    fn deliver(&mut self, change: Change<K>) -> Change<K> {
        self.settle_at = None;
        self.backoff.reset();
        if self.failing.take().is_some() {
            self.pending = Some(change);
            Change::Recovered
        } else {
            change
        }
    }

    /// The next change. The first calls list; later calls stream events.
    pub async fn next(&mut self) -> Result<Change<K>> {
        if let Some(change) = self.pending.take() {
            return Ok(change);
        }
        loop {
            if let Some(at) = self.retry_at {
                tokio::time::sleep_until(at).await;
                self.retry_at = None;
                if self.failing.is_some() {
                    self.settle_at = Some(Instant::now() + RECOVERED_AFTER);
                }
            }
            let item = match self.settle_at {
                Some(at) => match tokio::time::timeout_at(at, self.stream.next()).await {
                    Ok(item) => item,
                    Err(_) => {
                        // Open (or listing) without a new error for a while: back.
                        self.settle_at = None;
                        self.backoff.reset();
                        if self.failing.take().is_some() {
                            return Ok(Change::Recovered);
                        }
                        continue;
                    }
                },
                None => self.stream.next().await,
            };
            match item {
                // A watcher's stream does not end; if it did, start over.
                None => self.restart(),
                Some(Ok(Event::Init)) => {
                    self.buffer.clear();
                    self.lists += 1;
                }
                Some(Ok(Event::InitApply(object))) => self.buffer.push(slim(object)),
                Some(Ok(Event::InitDone)) => {
                    self.listed_once = true;
                    let items = std::mem::take(&mut self.buffer);
                    return Ok(self.deliver(Change::Listed(items)));
                }
                Some(Ok(Event::Apply(object))) => {
                    return Ok(self.deliver(Change::Applied(slim(object))));
                }
                Some(Ok(Event::Delete(object))) => {
                    return Ok(self.deliver(Change::Deleted(slim(object))));
                }
                Some(Err(error)) => {
                    if let Some(change) = self.failed(error)? {
                        return Ok(change);
                    }
                }
            }
        }
    }

    /// Handles an error: a 410 re-lists; the rest backs off and reports `Reconnecting`, or
    /// gives up (access refused before anything was listed; or failing for too long).
    fn failed(&mut self, error: watcher::Error) -> Result<Option<Change<K>>> {
        let now = Instant::now();
        let status = match &error {
            watcher::Error::WatchError(status) => Some(status.code),
            watcher::Error::InitialListFailed(kube::Error::Api(s))
            | watcher::Error::WatchStartFailed(kube::Error::Api(s))
            | watcher::Error::WatchFailed(kube::Error::Api(s)) => Some(s.code),
            _ => None,
        };
        if status == Some(410) {
            self.relists += 1;
            // The watcher re-lists by itself after a 410 ERROR event; after a 410 answer to
            // the request it would retry the same version: start it over.
            if !matches!(error, watcher::Error::WatchError(_)) {
                self.restart();
            }
            let again = self
                .last_gone
                .is_some_and(|t| now.duration_since(t) < GONE_AGAIN_WITHIN);
            self.last_gone = Some(now);
            if !again {
                return Ok(None);
            }
        }
        let (client_error, verb) = match error {
            watcher::Error::InitialListFailed(e) => (Some(e), "list"),
            watcher::Error::WatchStartFailed(e) | watcher::Error::WatchFailed(e) => {
                (Some(e), "watch")
            }
            watcher::Error::WatchError(s) => (Some(kube::Error::Api(s)), "watch"),
            watcher::Error::NoResourceVersion => (None, "watch"),
        };
        let reason = match &client_error {
            Some(kube::Error::Api(s)) if s.message.is_empty() => format!("{} {}", s.code, s.reason),
            Some(kube::Error::Api(s)) => format!("{} {}", s.code, s.message),
            Some(other) => root_cause(other),
            None => "no resourceVersion in the answer".to_string(),
        };
        // An answer or an event over the input bound comes again on every retry: say so now.
        if let Some(too_large) = client_error.as_ref().and_then(|e| too_large_in(e)) {
            return Err(crate::error::Error::Api {
                verb: verb.into(),
                resource: resource_name(K::KIND),
                status: None,
                message: format!(
                    "the API server at {} answered: {too_large}",
                    self.cluster_url
                ),
                hints: vec![raise_bound_hint()],
            });
        }
        // Refused before anything was listed: a wrong kubeconfig or missing RBAC, not an
        // outage; say so now instead of retrying for minutes.
        let refused = matches!(status, Some(401 | 403 | 404));
        let since = self.failing.as_ref().map_or(now, |(t, _)| *t);
        if (refused && !self.listed_once) || now.duration_since(since) >= GIVE_UP_AFTER {
            return Err(match client_error {
                Some(e) => api_error(verb, K::KIND, &self.cluster_url, e),
                None => crate::error::Error::Api {
                    verb: verb.into(),
                    resource: K::KIND.plural().into(),
                    status: None,
                    message: reason,
                    hints: vec![],
                },
            });
        }
        let retry_in = self.backoff.next().unwrap_or(Duration::from_secs(30));
        let attempt = self.failing.as_ref().map_or(0, |(_, r)| r.attempt) + 1;
        let info = Reconnecting {
            kind: K::KIND,
            attempt,
            reason,
            retry_in,
        };
        self.failing = Some((since, info.clone()));
        self.settle_at = None;
        self.retry_at = Some(now + retry_in);
        Ok(Some(Change::Reconnecting(info)))
    }
}

/// What a replay of a kind's history (a watch from an old resourceVersion) saw.
#[derive(Debug)]
pub enum Replayed<K> {
    /// The events after the version, in order (true: deleted), and the last
    /// resourceVersion the server named (an event's or a bookmark's).
    Events {
        events: Vec<(bool, K)>,
        last_version: Option<String>,
    },
    /// 410 Gone: the server no longer keeps the history from that version.
    Gone,
}

/// Replays what happened to `K` after `version` (the recorder's bookmark): one watch from
/// that resourceVersion, read until the server ends it (`seconds`) or `until` resolves. A
/// 410 (as the answer or as an ERROR event) is [`Replayed::Gone`]; anything else that fails
/// is an error (the caller says so and goes on without the history).
pub async fn replay<K: Watchable>(
    live: &LiveSource,
    query: &Query,
    version: &str,
    seconds: u32,
    until: impl std::future::Future<Output = ()>,
) -> Result<Replayed<K>> {
    use kube::api::WatchParams;
    use kube::core::WatchEvent;

    let client = live.client().clone();
    let api: Api<K> = match &query.namespace {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    };
    let mut params = WatchParams::default().timeout(seconds.max(1));
    if !query.labels.is_empty() {
        params = params.labels(&query.labels.to_string());
    }
    if !query.fields.is_empty() {
        params = params.fields(&query.fields.to_string());
    }
    let failed = |e: kube::Error| api_error("watch", K::KIND, live.cluster_url(), e);
    let stream = match api.watch(&params, version).await {
        Ok(s) => s,
        Err(kube::Error::Api(s)) if s.code == 410 => return Ok(Replayed::Gone),
        Err(e) => return Err(failed(e)),
    };
    let mut stream = std::pin::pin!(stream);
    let mut until = std::pin::pin!(until);
    let mut events = Vec::new();
    let mut last_version = None;
    loop {
        let item = tokio::select! {
            _ = &mut until => break,
            item = stream.next() => item,
        };
        let Some(item) = item else { break };
        match item.map_err(failed)? {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                last_version = o.meta().resource_version.clone().or(last_version);
                events.push((false, slim(o)));
            }
            WatchEvent::Deleted(o) => {
                last_version = o.meta().resource_version.clone().or(last_version);
                events.push((true, slim(o)));
            }
            WatchEvent::Bookmark(b) => last_version = Some(b.metadata.resource_version),
            WatchEvent::Error(s) if s.code == 410 => return Ok(Replayed::Gone),
            WatchEvent::Error(s) => {
                return Err(crate::error::Error::Api {
                    verb: "watch".into(),
                    resource: resource_name(K::KIND),
                    status: Some(s.code),
                    message: s.message.clone(),
                    hints: vec![],
                });
            }
        }
    }
    Ok(Replayed::Events {
        events,
        last_version,
    })
}
