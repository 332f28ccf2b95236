//! The object store: objects by kind/namespace/name, a global resourceVersion counter, the
//! event history watches replay from, the active watches, faults and the request log.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use vmctl::cluster::Kind;
use vmctl::cluster::selector::{FieldSelector, LabelSelector};

use super::status;
use super::util;
use super::{Fault, RecordedRequest};

/// (kind, namespace or "" for cluster-scoped, name): sorts as etcd keys do.
pub(crate) type Key = (Kind, String, String);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

struct HistoryEntry {
    rv: u64,
    kind: Kind,
    event: EventType,
    object: Value,
    /// The object before a MODIFIED, to turn it into ADDED/DELETED for filtered watches.
    old: Option<Value>,
}

/// What a LIST or WATCH selects.
pub(crate) struct Filter {
    pub kind: Kind,
    pub namespace: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

impl Filter {
    pub fn matches(&self, object: &Value) -> bool {
        if let Some(ns) = &self.namespace
            && namespace_of(object) != ns.as_str()
        {
            return false;
        }
        self.labels.matches_object(object) && self.fields.matches_object(object)
    }

    /// How a stored event looks through this filter (a MODIFIED that leaves the selection is
    /// a DELETED, one that enters it an ADDED), as the watch cache does.
    fn view<'a>(&self, entry: &'a HistoryEntry) -> Option<(EventType, &'a Value)> {
        if entry.kind != self.kind {
            return None;
        }
        let now = self.matches(&entry.object);
        match entry.event {
            EventType::Added | EventType::Deleted => now.then_some((entry.event, &entry.object)),
            EventType::Modified => {
                let before = entry.old.as_ref().is_some_and(|o| self.matches(o));
                match (before, now) {
                    (true, true) => Some((EventType::Modified, &entry.object)),
                    (false, true) => Some((EventType::Added, &entry.object)),
                    (true, false) => Some((EventType::Deleted, &entry.object)),
                    (false, false) => None,
                }
            }
        }
    }
}

struct Watcher {
    filter: Filter,
    bookmarks: bool,
    tx: mpsc::UnboundedSender<Bytes>,
}

/// A started watch: the receiving end of its event lines and when it ends by itself.
pub(crate) struct WatchStart {
    pub rx: mpsc::UnboundedReceiver<Bytes>,
    pub timeout: Option<Duration>,
}

pub(crate) struct State {
    /// Shared, so a LIST page is serialised after the state's lock is released.
    pub objects: BTreeMap<Key, Arc<Value>>,
    /// The last resourceVersion handed out.
    pub rv: u64,
    /// Watches and continue tokens from before this resourceVersion get 410 Expired.
    pub compacted_rv: u64,
    history: Vec<HistoryEntry>,
    watchers: Vec<Watcher>,
    pub requests: Vec<RecordedRequest>,
    pub next_request_id: u64,
    pub faults: Vec<Fault>,
    /// Seeds generated names and uids.
    counter: u64,
    /// The `gitVersion` `/version` answers (default v1.33.1); the eviction handler reads
    /// `selector: {}` as that release does.
    pub git_version: String,
}

pub(crate) fn namespace_of(object: &Value) -> &str {
    object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
}

pub(crate) fn name_of(object: &Value) -> &str {
    object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

pub(crate) fn rv_of(object: &Value) -> Option<&str> {
    object
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
}

pub(crate) fn key_of(kind: Kind, object: &Value) -> Key {
    let ns = if kind.namespaced() {
        namespace_of(object).to_string()
    } else {
        String::new()
    };
    (kind, ns, name_of(object).to_string())
}

pub(crate) fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object.is_object() {
        *object = json!({});
    }
    let Value::Object(map) = object else {
        unreachable!("just made it an object")
    };
    let meta = map.entry("metadata").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    let Value::Object(meta) = meta else {
        unreachable!("just made it an object")
    };
    meta
}

/// Which fields a kind can be selected by (kube-apiserver's field label conversion funcs);
/// custom resources only know `metadata.name` and `metadata.namespace`.
pub(crate) fn supported_field(kind: Kind, field: &str) -> bool {
    if matches!(field, "metadata.name" | "metadata.namespace") {
        return true;
    }
    match kind {
        Kind::Pod => matches!(
            field,
            "spec.nodeName"
                | "spec.restartPolicy"
                | "spec.schedulerName"
                | "spec.serviceAccountName"
                | "spec.hostNetwork"
                | "status.phase"
                | "status.podIP"
                | "status.nominatedNodeName"
        ),
        Kind::Event => matches!(
            field,
            "involvedObject.kind"
                | "involvedObject.namespace"
                | "involvedObject.name"
                | "involvedObject.uid"
                | "involvedObject.apiVersion"
                | "involvedObject.resourceVersion"
                | "involvedObject.fieldPath"
                | "reason"
                | "reportingComponent"
                | "type"
        ),
        Kind::Node => field == "spec.unschedulable",
        Kind::Namespace => field == "status.phase",
        _ => false,
    }
}

pub(crate) fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

pub(crate) fn truthy(value: Option<&str>) -> bool {
    matches!(value, Some("true" | "1" | "True"))
}

/// Parses the selectors of a LIST or WATCH, refusing what a real server refuses.
pub(crate) fn filter_from(
    kind: Kind,
    namespace: Option<&str>,
    params: &[(String, String)],
) -> Result<Filter, Value> {
    let labels = LabelSelector::parse(param(params, "labelSelector").unwrap_or(""))
        .map_err(|e| status::bad_request(&format!("unable to parse requirement: {e}")))?;
    let fields = FieldSelector::parse(param(params, "fieldSelector").unwrap_or(""))
        .map_err(|e| status::bad_request(&format!("invalid field selector: {e}")))?;
    if let Some(field) = fields.fields().find(|f| !supported_field(kind, f)) {
        return Err(status::bad_request(&format!(
            "field label not supported: {field}"
        )));
    }
    Ok(Filter {
        kind,
        namespace: namespace.map(str::to_string),
        labels,
        fields,
    })
}

/// Built-in kinds lose `kind`/`apiVersion` inside a List; custom resources keep them.
/// One LIST page: its objects are shared with the state and serialised after the lock is
/// released, so concurrent lists are served in parallel.
pub(crate) struct ListPage {
    pub kind: Kind,
    pub metadata: Value,
    pub items: Vec<Arc<Value>>,
}

impl ListPage {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec(&json!({
            "kind": format!("{}List", self.kind.name()),
            "apiVersion": self.kind.api_version(),
            "metadata": self.metadata,
        }))
        .unwrap_or_default();
        // Replace the closing brace by the items.
        out.pop();
        out.extend_from_slice(b",\"items\":[");
        for (i, object) in self.items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let item = ListItem {
                kind: self.kind,
                object,
            };
            let _ = serde_json::to_writer(&mut out, &item);
        }
        out.extend_from_slice(b"]}");
        out
    }
}

/// A list item serialised from the stored object: built-in kinds without `kind` and
/// `apiVersion`, as the API server writes them.
struct ListItem<'a> {
    kind: Kind,
    object: &'a Value,
}

impl serde::Serialize for ListItem<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self.object {
            Value::Object(map) if !self.kind.is_custom() => {
                let mut out = s.serialize_map(None)?;
                for (k, v) in map {
                    if k != "kind" && k != "apiVersion" {
                        out.serialize_entry(k, v)?;
                    }
                }
                out.end()
            }
            other => other.serialize(s),
        }
    }
}

fn event_line(event: &str, object: &Value) -> Bytes {
    let mut line = serde_json::to_vec(&json!({"type": event, "object": object}))
        .unwrap_or_else(|_| b"{}".to_vec());
    line.push(b'\n');
    Bytes::from(line)
}

fn bookmark(kind: Kind, rv: u64, initial_end: bool) -> Value {
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    json!({"kind": kind.name(), "apiVersion": kind.api_version(), "metadata": metadata})
}

fn encode_continue(rv: u64, namespace: &str, name: &str) -> String {
    let token =
        json!({"v": "meta.k8s.io/v1", "rv": rv, "start": format!("{namespace}/{name}\u{0}")});
    util::base64_encode(token.to_string().as_bytes())
}

fn decode_continue(token: &str) -> Option<(u64, String, String)> {
    let bytes = util::base64_decode(token)?;
    let value: Value = serde_json::from_slice(&bytes).ok()?;
    let rv = value.get("rv")?.as_u64()?;
    let start = value.get("start")?.as_str()?.trim_end_matches('\u{0}');
    let (ns, name) = start.split_once('/')?;
    Some((rv, ns.to_string(), name.to_string()))
}

impl State {
    /// Loads the initial objects. Each gets its own resourceVersion; the history starts after
    /// them, so a watch from an older resourceVersion is told it is too old.
    pub fn new(objects: Vec<Value>) -> Result<State, String> {
        let mut state = State {
            objects: BTreeMap::new(),
            rv: 1000,
            compacted_rv: 0,
            history: Vec::new(),
            watchers: Vec::new(),
            requests: Vec::new(),
            next_request_id: 0,
            faults: Vec::new(),
            counter: 0,
            git_version: "v1.33.1".into(),
        };
        for object in objects {
            let kind = Self::kind_of(&object)?;
            let mut object = object;
            state.normalize(kind, &mut object, None);
            state.rv += 1;
            let rv = state.rv.to_string();
            metadata_mut(&mut object).insert("resourceVersion".into(), json!(rv));
            state
                .objects
                .insert(key_of(kind, &object), Arc::new(object));
        }
        state.compacted_rv = state.rv;
        Ok(state)
    }

    pub fn kind_of(object: &Value) -> Result<Kind, String> {
        let name = object.get("kind").and_then(Value::as_str).unwrap_or("");
        Kind::from_kind_name(name)
            .filter(|_| !name.ends_with("List"))
            .ok_or_else(|| format!("not an object of a kind vmctl reads: kind {name:?}"))
    }

    pub fn next_seed(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    /// Fills in what the API server always sets: kind, apiVersion, namespace (for namespaced
    /// kinds), uid and creationTimestamp.
    pub fn normalize(&mut self, kind: Kind, object: &mut Value, namespace: Option<&str>) {
        if let Value::Object(map) = object {
            map.insert("kind".into(), json!(kind.name()));
            map.insert("apiVersion".into(), json!(kind.api_version()));
        }
        let seed = self.next_seed();
        let meta = metadata_mut(object);
        if kind.namespaced() {
            let ns = meta
                .get("namespace")
                .and_then(Value::as_str)
                .filter(|ns| !ns.is_empty())
                .map(str::to_string)
                .or_else(|| namespace.map(str::to_string))
                .unwrap_or_else(|| "default".to_string());
            meta.insert("namespace".into(), json!(ns));
        } else {
            meta.remove("namespace");
        }
        if !meta.get("uid").is_some_and(Value::is_string) {
            let ns = meta.get("namespace").and_then(Value::as_str).unwrap_or("");
            let name = meta.get("name").and_then(Value::as_str).unwrap_or("");
            let uid = util::make_uid(&[kind.name(), ns, name], seed);
            meta.insert("uid".into(), json!(uid));
        }
        if !meta.get("creationTimestamp").is_some_and(Value::is_string) {
            meta.insert("creationTimestamp".into(), json!(util::now_rfc3339()));
        }
    }

    pub fn get(&self, kind: Kind, namespace: Option<&str>, name: &str) -> Option<&Value> {
        let ns = if kind.namespaced() {
            namespace.unwrap_or("")
        } else {
            ""
        };
        self.objects
            .get(&(kind, ns.to_string(), name.to_string()))
            .map(Arc::as_ref)
    }

    /// Stores an object under a new resourceVersion and tells the watches.
    pub fn commit(&mut self, kind: Kind, mut object: Value) -> Value {
        self.rv += 1;
        let rv = self.rv;
        metadata_mut(&mut object).insert("resourceVersion".into(), json!(rv.to_string()));
        let key = key_of(kind, &object);
        let old = self
            .objects
            .insert(key, Arc::new(object.clone()))
            .map(Arc::unwrap_or_clone);
        let event = if old.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(HistoryEntry {
            rv,
            kind,
            event,
            object: object.clone(),
            old,
        });
        object
    }

    /// Removes an object for good; its DELETED event carries a new resourceVersion.
    pub fn remove(&mut self, kind: Kind, namespace: Option<&str>, name: &str) -> Option<Value> {
        let ns = if kind.namespaced() {
            namespace.unwrap_or("")
        } else {
            ""
        };
        let mut object = Arc::unwrap_or_clone(self.objects.remove(&(
            kind,
            ns.to_string(),
            name.to_string(),
        ))?);
        self.rv += 1;
        let rv = self.rv;
        metadata_mut(&mut object).insert("resourceVersion".into(), json!(rv.to_string()));
        self.record(HistoryEntry {
            rv,
            kind,
            event: EventType::Deleted,
            object: object.clone(),
            old: None,
        });
        Some(object)
    }

    fn record(&mut self, entry: HistoryEntry) {
        self.watchers.retain(|w| match w.filter.view(&entry) {
            Some((event, object)) => w.tx.send(event_line(event.as_str(), object)).is_ok(),
            None => !w.tx.is_closed(),
        });
        self.history.push(entry);
    }

    /// Answers a LIST: selectors, `limit` and `continue`, items in key order.
    pub fn list(
        &self,
        kind: Kind,
        namespace: Option<&str>,
        params: &[(String, String)],
    ) -> Result<ListPage, Value> {
        let filter = filter_from(kind, namespace, params)?;
        let limit = match param(params, "limit").filter(|l| !l.is_empty()) {
            Some(l) => l
                .parse::<usize>()
                .map_err(|_| status::bad_request(&format!("invalid limit {l:?}")))?,
            None => 0,
        };
        let (list_rv, after) = match param(params, "continue").filter(|c| !c.is_empty()) {
            Some(token) => {
                let (rv, ns, name) = decode_continue(token).ok_or_else(|| {
                    status::bad_request("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
                })?;
                if rv < self.compacted_rv {
                    return Err(status::continue_expired());
                }
                (rv, Some((ns, name)))
            }
            None => (self.rv, None),
        };
        // Like the API server's watch cache: walk the kind's objects in key order from the
        // continue key, stop after one page (and the one that proves there is more), and
        // serialise the page without copying it. A namespace's list walks just its keys
        // (`/registry/<resource>/<namespace>/`, a prefix in etcd and in the watch cache).
        let scope = namespace.filter(|_| kind.namespaced());
        let from: Key = match (&after, scope) {
            (Some((ns, name)), _) => (kind, ns.clone(), name.clone()),
            (None, Some(ns)) => (kind, ns.to_string(), String::new()),
            (None, None) => (kind, String::new(), String::new()),
        };
        let mut walk = self
            .objects
            .range((std::ops::Bound::Excluded(from), std::ops::Bound::Unbounded))
            .take_while(|((k, ns, _), _)| *k == kind && scope.is_none_or(|s| s == ns))
            .map(|(_, object)| object);
        let mut page: Vec<Arc<Value>> = Vec::new();
        let mut more = false;
        for object in walk.by_ref() {
            if !filter.matches(object) {
                continue;
            }
            if limit > 0 && page.len() == limit {
                more = true;
                break;
            }
            page.push(Arc::clone(object));
        }
        let mut metadata = json!({"resourceVersion": list_rv.to_string()});
        if let (true, Some(last)) = (more, page.last()) {
            metadata["continue"] = json!(encode_continue(
                list_rv,
                if kind.namespaced() {
                    namespace_of(last)
                } else {
                    ""
                },
                name_of(last)
            ));
            if filter.labels.is_empty() && filter.fields.is_empty() {
                // The one found past the page, and every later one that matches.
                let remaining = 1 + walk.filter(|o| filter.matches(o)).count();
                metadata["remainingItemCount"] = json!(remaining);
            }
        }
        Ok(ListPage {
            kind,
            metadata,
            items: page,
        })
    }

    /// Starts a WATCH: synthetic ADDED events for `resourceVersion` unset or "0", a replay of
    /// the history after a given resourceVersion, or a 410 ERROR event when it is too old.
    pub fn watch(
        &mut self,
        kind: Kind,
        namespace: Option<&str>,
        params: &[(String, String)],
    ) -> Result<WatchStart, Value> {
        let filter = filter_from(kind, namespace, params)?;
        let bookmarks = truthy(param(params, "allowWatchBookmarks"));
        let send_initial = truthy(param(params, "sendInitialEvents"));
        let timeout = match param(params, "timeoutSeconds").filter(|t| !t.is_empty()) {
            Some(t) => Some(Duration::from_secs(t.parse::<u64>().map_err(|_| {
                status::bad_request(&format!("invalid timeoutSeconds {t:?}"))
            })?)),
            None => None,
        };
        let rv_param = param(params, "resourceVersion").unwrap_or("");
        let (tx, rx) = mpsc::unbounded_channel();
        if send_initial || rv_param.is_empty() || rv_param == "0" {
            for object in self
                .objects
                .iter()
                .filter(|((k, _, _), o)| *k == kind && filter.matches(o))
                .map(|(_, o)| o)
            {
                let _ = tx.send(event_line("ADDED", object));
            }
            if send_initial && bookmarks {
                let _ = tx.send(event_line("BOOKMARK", &bookmark(kind, self.rv, true)));
            }
        } else {
            let from: u64 = rv_param.parse().map_err(|_| {
                status::bad_request(&format!("invalid resource version {rv_param:?}"))
            })?;
            if from < self.compacted_rv {
                let _ = tx.send(event_line(
                    "ERROR",
                    &status::too_old_resource_version(from, self.compacted_rv),
                ));
                // Not registered: the stream ends after the error, as the server's does.
                return Ok(WatchStart { rx, timeout });
            }
            for entry in self.history.iter().filter(|e| e.rv > from) {
                if let Some((event, object)) = filter.view(entry) {
                    let _ = tx.send(event_line(event.as_str(), object));
                }
            }
        }
        self.watchers.push(Watcher {
            filter,
            bookmarks,
            tx,
        });
        Ok(WatchStart { rx, timeout })
    }

    /// A stream holding one ERROR event, for faults delivered inside a watch.
    pub fn error_watch(status: &Value) -> WatchStart {
        let (tx, rx) = mpsc::unbounded_channel();
        let _ = tx.send(event_line("ERROR", status));
        WatchStart { rx, timeout: None }
    }

    pub fn send_bookmarks(&mut self) {
        let rv = self.rv;
        self.watchers.retain(|w| {
            if !w.bookmarks {
                return !w.tx.is_closed();
            }
            w.tx.send(event_line("BOOKMARK", &bookmark(w.filter.kind, rv, false)))
                .is_ok()
        });
    }

    pub fn close_watches(&mut self) {
        self.watchers.clear();
    }

    pub fn active_watches(&mut self) -> usize {
        self.watchers.retain(|w| !w.tx.is_closed());
        self.watchers.len()
    }

    /// Forgets the event history: watches and continue tokens from before now get 410.
    pub fn compact(&mut self) {
        self.compacted_rv = self.rv;
        self.history.clear();
    }

    /// The first fault that matches, used up by one if it is limited.
    pub fn take_fault(
        &mut self,
        method: &str,
        path: &str,
        raw_query: &str,
        query: &str,
    ) -> Option<Fault> {
        let index = self
            .faults
            .iter()
            .position(|f| f.matches(method, path, raw_query, query))?;
        let fault = self.faults[index].clone();
        if let Some(times) = &mut self.faults[index].times {
            *times = times.saturating_sub(1);
            if *times == 0 {
                self.faults.remove(index);
            }
        }
        Some(fault)
    }
}
