//! Routing and the answers to each verb.

use hyper::Method;
use serde_json::{Value, json};
use vmctl::cluster::Kind;

use super::patch::{self, JsonPatchError};
use super::state::{self, State, WatchStart, metadata_mut, name_of, param, rv_of, truthy};
use super::status;
use super::util;

/// The group KubeVirt's virt-api serves its subresources under (pause, migrate, …).
pub(crate) const KUBEVIRT_SUBRESOURCE_GROUP: &str = "subresources.kubevirt.io";

/// Groups the server advertises, with their version.
const GROUPS: [(&str, &str); 4] = [
    ("policy", "v1"),
    ("kubevirt.io", "v1"),
    ("migrations.kubevirt.io", "v1alpha1"),
    (KUBEVIRT_SUBRESOURCE_GROUP, "v1"),
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceRoute {
    pub kind: Kind,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
    /// Under `/apis/subresources.kubevirt.io/…`.
    pub kubevirt_subresource: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    Version,
    Health,
    CoreVersions,
    GroupList,
    Group(String),
    Resources { group: String, version: String },
    Resource(ResourceRoute),
    Unknown,
}

fn kind_for(group: &str, version: &str, plural: &str) -> Option<Kind> {
    Kind::ALL
        .into_iter()
        .find(|k| k.group() == group && k.version() == version && k.plural() == plural)
}

fn resource_route(group: &str, version: &str, rest: &[&str]) -> Route {
    let (kind_group, kubevirt_subresource) = if group == KUBEVIRT_SUBRESOURCE_GROUP {
        ("kubevirt.io", true)
    } else {
        (group, false)
    };
    let (kind, namespace, tail) = match rest {
        ["namespaces", ns, plural, tail @ ..]
            if kind_for(kind_group, version, plural).is_some_and(Kind::namespaced) =>
        {
            (
                kind_for(kind_group, version, plural),
                Some(ns.to_string()),
                tail,
            )
        }
        [plural, tail @ ..] => (kind_for(kind_group, version, plural), None, tail),
        [] => (None, None, rest),
    };
    let Some(kind) = kind else {
        return Route::Unknown;
    };
    let (name, subresource) = match tail {
        [] => (None, None),
        [name] => (Some(name.to_string()), None),
        [name, sub @ ..] => (Some(name.to_string()), Some(sub.join("/"))),
    };
    if kubevirt_subresource && subresource.is_none() {
        return Route::Unknown;
    }
    Route::Resource(ResourceRoute {
        kind,
        namespace,
        name,
        subresource,
        kubevirt_subresource,
    })
}

pub(crate) fn route(path: &str) -> Route {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "readyz" | "livez"] => Route::Health,
        ["api"] => Route::CoreVersions,
        ["api", "v1"] => Route::Resources {
            group: String::new(),
            version: "v1".into(),
        },
        ["api", "v1", rest @ ..] => resource_route("", "v1", rest),
        ["apis"] => Route::GroupList,
        ["apis", group] if GROUPS.iter().any(|(g, _)| g == group) => {
            Route::Group(group.to_string())
        }
        ["apis", group, version] if GROUPS.contains(&(*group, *version)) => Route::Resources {
            group: group.to_string(),
            version: version.to_string(),
        },
        ["apis", group, version, rest @ ..] if GROUPS.contains(&(*group, *version)) => {
            resource_route(group, version, rest)
        }
        _ => Route::Unknown,
    }
}

/// The Kubernetes verb of a request, as RBAC and audit logs name it.
pub(crate) fn verb(method: &Method, route: &Route, params: &[(String, String)]) -> &'static str {
    let Route::Resource(r) = route else {
        return match *method {
            Method::GET => "get",
            _ => "unknown",
        };
    };
    let collection = r.name.is_none();
    match *method {
        Method::GET if collection && truthy(param(params, "watch")) => "watch",
        Method::GET if collection => "list",
        Method::GET => "get",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if collection => "deletecollection",
        Method::DELETE => "delete",
        _ => "unknown",
    }
}

/// An answer, before it becomes an HTTP response.
pub(crate) enum Reply {
    Json {
        status: u16,
        body: Value,
        headers: Vec<(String, String)>,
    },
    Text {
        status: u16,
        body: String,
    },
    /// A LIST page, serialised once the state's lock is released.
    List(super::state::ListPage),
    Empty {
        status: u16,
    },
    Watch(WatchStart),
}

impl Reply {
    pub fn json(status: u16, body: Value) -> Reply {
        Reply::Json {
            status,
            body,
            headers: Vec::new(),
        }
    }

    /// A `Status` failure, whose `code` is the HTTP status.
    pub fn status(body: Value) -> Reply {
        let code = body
            .get("code")
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok())
            .unwrap_or(500);
        Reply::json(code, body)
    }

    pub fn code(&self) -> u16 {
        match self {
            Reply::Json { status, .. } | Reply::Text { status, .. } | Reply::Empty { status } => {
                *status
            }
            Reply::Watch(_) | Reply::List(_) => 200,
        }
    }
}

/// Everything a handler needs to know about the request.
pub(crate) struct Incoming<'a> {
    pub method: &'a Method,
    pub route: &'a Route,
    pub params: &'a [(String, String)],
    pub content_type: &'a str,
    pub body: &'a [u8],
    pub host: &'a str,
}

pub(crate) fn dispatch(state: &mut State, req: &Incoming<'_>) -> Reply {
    match (req.method, req.route) {
        (&Method::GET, Route::Version) => Reply::json(200, version(&state.git_version)),
        (&Method::GET, Route::Health) => Reply::Text {
            status: 200,
            body: "ok".into(),
        },
        (&Method::GET, Route::CoreVersions) => Reply::json(200, core_versions(req.host)),
        (&Method::GET, Route::GroupList) => Reply::json(200, group_list()),
        (&Method::GET, Route::Group(group)) => Reply::json(200, group_doc(group)),
        (&Method::GET, Route::Resources { group, version }) => {
            Reply::json(200, resource_list(group, version))
        }
        (_, Route::Resource(r)) => resource(state, req, r),
        (_, Route::Unknown) => Reply::status(status::resource_not_found()),
        _ => Reply::status(status::method_not_allowed()),
    }
}

fn resource(state: &mut State, req: &Incoming<'_>, r: &ResourceRoute) -> Reply {
    let kind = r.kind;
    let ns = r.namespace.as_deref();
    // `/api/v1/pods/x` names nothing: a namespaced object needs its namespace.
    if kind.namespaced() && ns.is_none() && r.name.is_some() {
        return Reply::status(status::resource_not_found());
    }
    let Some(name) = r.name.as_deref() else {
        return match *req.method {
            Method::GET if truthy(param(req.params, "watch")) => {
                match state.watch(kind, ns, req.params) {
                    Ok(start) => Reply::Watch(start),
                    Err(s) => Reply::status(s),
                }
            }
            Method::GET => match state.list(kind, ns, req.params) {
                Ok(page) => Reply::List(page),
                Err(s) => Reply::status(s),
            },
            Method::POST if ns.is_some() || !kind.namespaced() => create(state, req, kind, ns),
            _ => Reply::status(status::method_not_allowed()),
        };
    };
    match (req.method, r.subresource.as_deref()) {
        (&Method::GET, None | Some("status")) => match state.get(kind, ns, name) {
            Some(object) => Reply::json(200, object.clone()),
            None => Reply::status(status::not_found(kind, name)),
        },
        (&Method::PUT, None) => update(state, req, kind, ns, name, false),
        (&Method::PUT, Some("status")) => update(state, req, kind, ns, name, true),
        (&Method::PATCH, None) => patch(state, req, kind, ns, name, false),
        (&Method::PATCH, Some("status")) => patch(state, req, kind, ns, name, true),
        (&Method::DELETE, None) => delete(state, kind, ns, name),
        (&Method::POST, Some("eviction")) if kind == Kind::Pod => evict(state, req, ns, name),
        (_, Some(_)) if r.kubevirt_subresource => {
            // virt-api answers 202 Accepted with no body (migrate, pause, …).
            if state.get(kind, ns, name).is_some() {
                Reply::Empty { status: 202 }
            } else {
                Reply::status(status::not_found(kind, name))
            }
        }
        (_, Some(_)) => Reply::status(status::resource_not_found()),
        _ => Reply::status(status::method_not_allowed()),
    }
}

fn parse_body(req: &Incoming<'_>) -> Result<Value, Value> {
    let text = std::str::from_utf8(req.body)
        .map_err(|_| status::bad_request("the request body is not valid UTF-8"))?;
    if text.trim().is_empty() {
        return Err(status::bad_request("the request body is empty"));
    }
    let value = if req.content_type.contains("yaml") {
        serde_saphyr::from_str::<Value>(text)
            .map_err(|e| status::bad_request(&format!("error decoding YAML: {e}")))?
    } else {
        serde_json::from_str::<Value>(text).map_err(|e| {
            status::bad_request(&format!("couldn't get version/kind; json parse error: {e}"))
        })?
    };
    Ok(value)
}

fn parse_object(req: &Incoming<'_>, kind: Kind) -> Result<Value, Value> {
    let object = parse_body(req)?;
    if !object.is_object() {
        return Err(status::bad_request(
            "the body of the request is not a JSON object",
        ));
    }
    if let Some(body_kind) = object.get("kind").and_then(Value::as_str)
        && body_kind != kind.name()
    {
        return Err(status::bad_request(&format!(
            "the kind in the request body ({body_kind}) does not match the resource ({})",
            kind.name()
        )));
    }
    Ok(object)
}

fn create(state: &mut State, req: &Incoming<'_>, kind: Kind, ns: Option<&str>) -> Reply {
    let mut object = match parse_object(req, kind) {
        Ok(o) => o,
        Err(s) => return Reply::status(s),
    };
    if let (Some(path_ns), Some(body_ns)) = (
        ns,
        object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str),
    ) && !body_ns.is_empty()
        && body_ns != path_ns
    {
        return Reply::status(status::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let name = name_of(&object).to_string();
    let name = if name.is_empty() {
        let Some(prefix) = object
            .pointer("/metadata/generateName")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .map(str::to_string)
        else {
            return Reply::status(status::invalid(
                kind,
                "",
                "metadata.name: Required value: name or generateName is required",
            ));
        };
        loop {
            let candidate = format!("{prefix}{}", util::name_suffix(state.next_seed()));
            if state.get(kind, ns, &candidate).is_none() {
                break candidate;
            }
        }
    } else {
        name
    };
    if state.get(kind, ns, &name).is_some() {
        return Reply::status(status::already_exists(kind, &name));
    }
    {
        let meta = metadata_mut(&mut object);
        meta.insert("name".into(), json!(name));
        for field in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
        ] {
            meta.remove(field);
        }
        meta.insert("generation".into(), json!(1));
    }
    state.normalize(kind, &mut object, ns);
    let created = state.commit(kind, object);
    Reply::json(201, created)
}

/// Keeps what a client cannot change; `status_only` keeps everything but `.status`.
fn carry_over(existing: &Value, mut new: Value, status_only: bool) -> Value {
    if status_only {
        let mut merged = existing.clone();
        match new.get_mut("status").map(Value::take) {
            Some(status) => merged["status"] = status,
            None => {
                if let Value::Object(map) = &mut merged {
                    map.remove("status");
                }
            }
        }
        return merged;
    }
    if let (Value::Object(new_map), Value::Object(old_map)) = (&mut new, existing) {
        for field in ["kind", "apiVersion"] {
            if let Some(v) = old_map.get(field) {
                new_map.insert(field.into(), v.clone());
            }
        }
    }
    let old_meta = existing.get("metadata").cloned().unwrap_or(json!({}));
    let meta = metadata_mut(&mut new);
    for field in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match old_meta.get(field) {
            Some(v) => meta.insert(field.into(), v.clone()),
            None => meta.remove(field),
        };
    }
    new
}

fn without_rv(object: &Value) -> Value {
    let mut object = object.clone();
    metadata_mut(&mut object).remove("resourceVersion");
    object
}

/// Stores an updated object: nothing happens for a no-op, and an object being deleted
/// goes away once its last finalizer is removed.
fn store_update(state: &mut State, kind: Kind, existing: &Value, mut new: Value) -> Reply {
    let existing_rv = rv_of(existing).unwrap_or("").to_string();
    if let Some(rv) = rv_of(&new)
        && !rv.is_empty()
        && rv != existing_rv
    {
        return Reply::status(status::conflict(kind, name_of(existing)));
    }
    if without_rv(&new) == without_rv(existing) {
        return Reply::json(200, existing.clone());
    }
    // Spec changes bump metadata.generation; status changes do not.
    if new.get("spec") != existing.get("spec")
        && let Some(generation) = existing
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
    {
        metadata_mut(&mut new).insert("generation".into(), json!(generation + 1));
    }
    let deleting = new.pointer("/metadata/deletionTimestamp").is_some();
    let finalizers_left = new
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty());
    if deleting && !finalizers_left {
        let ns = state::namespace_of(&new).to_string();
        let name = name_of(&new).to_string();
        let _ = state.commit(kind, new);
        return match state.remove(kind, Some(&ns), &name) {
            Some(gone) => Reply::json(200, gone),
            None => Reply::status(status::not_found(kind, &name)),
        };
    }
    Reply::json(200, state.commit(kind, new))
}

fn update(
    state: &mut State,
    req: &Incoming<'_>,
    kind: Kind,
    ns: Option<&str>,
    name: &str,
    status_only: bool,
) -> Reply {
    let object = match parse_object(req, kind) {
        Ok(o) => o,
        Err(s) => return Reply::status(s),
    };
    let body_name = name_of(&object);
    if !body_name.is_empty() && body_name != name {
        return Reply::status(status::bad_request(&format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let Some(existing) = state.get(kind, ns, name).cloned() else {
        return Reply::status(status::not_found(kind, name));
    };
    let rv = rv_of(&object).map(str::to_string);
    let mut new = carry_over(&existing, object, status_only);
    if let Some(rv) = rv {
        metadata_mut(&mut new).insert("resourceVersion".into(), json!(rv));
    }
    store_update(state, kind, &existing, new)
}

fn patch(
    state: &mut State,
    req: &Incoming<'_>,
    kind: Kind,
    ns: Option<&str>,
    name: &str,
    status_only: bool,
) -> Reply {
    let media = req
        .content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let apply = media == "application/apply-patch+yaml";
    if !matches!(
        media.as_str(),
        "application/merge-patch+json"
            | "application/strategic-merge-patch+json"
            | "application/json-patch+json"
            | "application/apply-patch+yaml"
    ) {
        return Reply::status(status::unsupported_media_type(req.content_type));
    }
    let body = match parse_body(req) {
        Ok(b) => b,
        Err(s) => return Reply::status(s),
    };
    let existing = match state.get(kind, ns, name).cloned() {
        Some(e) => e,
        // Server-side apply creates what does not exist yet.
        None if apply => {
            let mut object = body;
            metadata_mut(&mut object).insert("name".into(), json!(name));
            let mut created = object;
            metadata_mut(&mut created).remove("resourceVersion");
            state.normalize(kind, &mut created, ns);
            metadata_mut(&mut created).insert("generation".into(), json!(1));
            return Reply::json(201, state.commit(kind, created));
        }
        None => return Reply::status(status::not_found(kind, name)),
    };
    let mut patched = without_rv(&existing);
    if media == "application/json-patch+json" {
        let mut with_rv = existing.clone();
        match patch::json_patch(&mut with_rv, &body) {
            Ok(()) => patched = with_rv,
            Err(JsonPatchError::Malformed(m)) => return Reply::status(status::bad_request(&m)),
            Err(JsonPatchError::Failed(m)) => {
                return Reply::status(status::failure(422, "Invalid", &m, None));
            }
        }
        if rv_of(&patched) == rv_of(&existing) {
            metadata_mut(&mut patched).remove("resourceVersion");
        }
    } else {
        // Strategic merge and apply are approximated by a JSON merge patch (lists replace).
        if !body.is_object() {
            return Reply::status(status::bad_request("a merge patch must be a JSON object"));
        }
        patch::merge_patch(&mut patched, &body);
    }
    let rv = rv_of(&patched).map(str::to_string);
    let mut new = carry_over(&existing, patched, status_only);
    if let Some(rv) = rv {
        metadata_mut(&mut new).insert("resourceVersion".into(), json!(rv));
    }
    store_update(state, kind, &existing, new)
}

fn delete(state: &mut State, kind: Kind, ns: Option<&str>, name: &str) -> Reply {
    let Some(existing) = state.get(kind, ns, name).cloned() else {
        return Reply::status(status::not_found(kind, name));
    };
    let has_finalizers = existing
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty());
    if has_finalizers {
        if existing.pointer("/metadata/deletionTimestamp").is_some() {
            return Reply::json(200, existing);
        }
        let mut marked = existing;
        let meta = metadata_mut(&mut marked);
        meta.insert("deletionTimestamp".into(), json!(util::now_rfc3339()));
        meta.insert("deletionGracePeriodSeconds".into(), json!(0));
        return Reply::json(200, state.commit(kind, marked));
    }
    let Some(gone) = state.remove(kind, ns, name) else {
        return Reply::status(status::not_found(kind, name));
    };
    if kind.is_custom() {
        let uid = gone.pointer("/metadata/uid").and_then(Value::as_str);
        Reply::json(200, status::success(Some(kind), Some(name), uid, 200))
    } else {
        Reply::json(200, gone)
    }
}

/// `POST pods/<name>/eviction`, as `pkg/registry/core/pod/storage/eviction.go` answers it
/// (KubeVirt's webhook, when the sim runs, has answered before this: admission comes first,
/// FACTS §12):
/// - a pod that is Succeeded, Failed, Pending or already being deleted is deleted without
///   looking at PDBs (`canIgnorePDB`);
/// - the PDBs of the pod's namespace whose selector matches its labels count; a null
///   selector matches nothing; an empty one (`{}`) every pod of the namespace from 1.29.0,
///   1.28.3 and 1.27.7 (kubernetes#119732, #121131, #121132) and nothing before
///   (`selector.Empty()` was skipped), by the server's `gitVersion`;
/// - more than one → 500 `This pod has more than one PodDisruptionBudget, …`;
/// - one whose `status.observedGeneration` is behind its generation → 429 "still being
///   processed" (Retry-After 10);
/// - a not-Ready pod whose PDB is healthy enough (or has `unhealthyPodEvictionPolicy:
///   AlwaysAllow`) is deleted without using up a disruption;
/// - `status.disruptionsAllowed` 0 (or missing) → 429 `Cannot evict pod as it would violate
///   the pod's disruption budget.` with the `DisruptionBudget` cause; negative → 403;
/// - otherwise `disruptionsAllowed` is decremented, the pod recorded in `disruptedPods`,
///   and the pod deleted: 201 with a Success `Status`.
///
/// Dry run (`?dryRun=All` or `deleteOptions.dryRun`) changes nothing. Faults injected on the
/// path still take precedence (they are answered before any handler).
fn evict(state: &mut State, req: &Incoming<'_>, ns: Option<&str>, name: &str) -> Reply {
    let Some(pod) = state.get(Kind::Pod, ns, name).cloned() else {
        return Reply::status(status::not_found(Kind::Pod, name));
    };
    let eviction: Value = serde_json::from_slice(req.body).unwrap_or(json!({}));
    if let Some(body_name) = eviction.pointer("/metadata/name").and_then(Value::as_str)
        && body_name != name
    {
        return Reply::status(status::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let dry_run = param(req.params, "dryRun").is_some_and(|v| !v.is_empty())
        || eviction
            .pointer("/deleteOptions/dryRun")
            .and_then(Value::as_array)
            .is_some_and(|d| !d.is_empty());
    let success = || Reply::json(201, status::success(None, None, None, 201));
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("");
    let can_ignore_pdb = matches!(phase, "Succeeded" | "Failed" | "Pending")
        || pod.pointer("/metadata/deletionTimestamp").is_some();
    if !can_ignore_pdb {
        let pod_ns = state::namespace_of(&pod).to_string();
        let labels = pod
            .pointer("/metadata/labels")
            .cloned()
            .unwrap_or(json!({}));
        let honours_empty = honours_empty_selector(&state.git_version);
        let pdbs: Vec<Value> = state
            .objects
            .iter()
            .filter(|((k, n, _), _)| *k == Kind::PodDisruptionBudget && *n == pod_ns)
            .map(|(_, v)| Value::clone(v))
            .filter(|pdb| {
                let selector = pdb.pointer("/spec/selector");
                let empty = selector.is_some_and(|s| {
                    s.get("matchLabels")
                        .and_then(Value::as_object)
                        .is_none_or(|m| m.is_empty())
                        && s.get("matchExpressions")
                            .and_then(Value::as_array)
                            .is_none_or(|e| e.is_empty())
                });
                if empty && selector.is_some_and(Value::is_object) {
                    honours_empty
                } else {
                    pdb_selects(selector, &labels)
                }
            })
            .collect();
        if pdbs.len() > 1 {
            return Reply::status(status::failure(
                500,
                "",
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                None,
            ));
        }
        if let Some(pdb) = pdbs.into_iter().next() {
            let pdb_name = name_of(&pdb).to_string();
            let int = |p: &str| pdb.pointer(p).and_then(Value::as_i64).unwrap_or(0);
            let desired = int("/status/desiredHealthy");
            let current = int("/status/currentHealthy");
            let ready = pod
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c["type"] == "Ready" && c["status"] == "True")
                });
            let always_allow = pdb
                .pointer("/spec/unhealthyPodEvictionPolicy")
                .and_then(Value::as_str)
                == Some("AlwaysAllow");
            let unhealthy_ok = !ready && (always_allow || (current >= desired && desired > 0));
            if !unhealthy_ok {
                let generation = pdb.pointer("/metadata/generation").and_then(Value::as_i64);
                let observed = pdb
                    .pointer("/status/observedGeneration")
                    .and_then(Value::as_i64);
                if let (Some(g), Some(o)) = (generation, observed)
                    && o < g
                {
                    return too_many_requests(
                        &format!(
                            "The disruption budget {pdb_name} is still being processed by the server."
                        ),
                        10,
                    );
                }
                let allowed = int("/status/disruptionsAllowed");
                if allowed < 0 {
                    return Reply::status(status::failure(
                        403,
                        "Forbidden",
                        &format!(
                            "poddisruptionbudgets.policy \"{pdb_name}\" is forbidden: pdb disruptions allowed is negative"
                        ),
                        Some(
                            json!({"name": pdb_name, "group": "policy", "kind": "poddisruptionbudgets"}),
                        ),
                    ));
                }
                if allowed == 0 {
                    return too_many_requests(
                        &format!(
                            "The disruption budget {pdb_name} needs {desired} healthy pods and has {current} currently"
                        ),
                        0,
                    );
                }
                if !dry_run {
                    let mut pdb = pdb;
                    pdb["status"]["disruptionsAllowed"] = json!(allowed - 1);
                    if !pdb["status"]["disruptedPods"].is_object() {
                        pdb["status"]["disruptedPods"] = json!({});
                    }
                    pdb["status"]["disruptedPods"][name] = json!(util::now_rfc3339());
                    let _ = state.commit(Kind::PodDisruptionBudget, pdb);
                }
            }
        }
    }
    if !dry_run {
        let _ = delete(state, Kind::Pod, ns, name);
    }
    success()
}

/// Whether the eviction API of `git_version` reads `selector: {}` as every pod.
fn honours_empty_selector(git_version: &str) -> bool {
    let v: Vec<u32> = git_version
        .trim_start_matches('v')
        .split(['.', '+', '-'])
        .take(3)
        .map(|n| n.parse().unwrap_or(0))
        .collect();
    match v[..] {
        [major, minor, patch] => {
            (major, minor) >= (1, 29)
                || ((major, minor) == (1, 28) && patch >= 3)
                || ((major, minor) == (1, 27) && patch >= 7)
        }
        _ => true,
    }
}

/// 429 `Cannot evict pod as it would violate the pod's disruption budget.` with one
/// `DisruptionBudget` cause, as `errors.NewTooManyRequests` builds it.
fn too_many_requests(cause: &str, retry_after: u64) -> Reply {
    let mut details = json!({"causes": [{"reason": "DisruptionBudget", "message": cause}]});
    let mut headers = Vec::new();
    if retry_after > 0 {
        details["retryAfterSeconds"] = json!(retry_after);
        headers.push(("Retry-After".to_string(), retry_after.to_string()));
    }
    Reply::Json {
        status: 429,
        body: status::failure(
            429,
            "TooManyRequests",
            "Cannot evict pod as it would violate the pod's disruption budget.",
            Some(details),
        ),
        headers,
    }
}

/// Whether a PDB's `spec.selector` selects a pod with `labels`, as the eviction handler
/// decides it: matchLabels AND matchExpressions; null or empty selects nothing; an invalid
/// selector selects nothing.
pub(crate) fn pdb_selects(selector: Option<&Value>, labels: &Value) -> bool {
    let Some(selector) = selector.filter(|s| s.is_object()) else {
        return false;
    };
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    let match_labels = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let exprs = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if match_labels.is_empty() && exprs.is_empty() {
        return false;
    }
    let labels_ok = match_labels
        .iter()
        .all(|(k, v)| v.as_str().is_some() && label(k) == v.as_str());
    let exprs_ok = exprs.iter().all(|e| {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|v| v.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" => label(key).is_some_and(|l| values.contains(&l)),
            "NotIn" => label(key).is_none_or(|l| !values.contains(&l)),
            "Exists" => label(key).is_some(),
            "DoesNotExist" => label(key).is_none(),
            _ => false,
        }
    });
    labels_ok && exprs_ok
}

fn version(git_version: &str) -> Value {
    let numbers: Vec<&str> = git_version.trim_start_matches('v').split('.').collect();
    json!({
        "major": numbers.first().copied().unwrap_or(""),
        "minor": numbers.get(1).copied().unwrap_or(""),
        "gitVersion": git_version,
        "gitCommit": "8adc0f041b8e7ad1d30e29cc59c6ae7a15e19828",
        "gitTreeState": "clean",
        "buildDate": "2025-05-15T08:19:08Z",
        "goVersion": "go1.24.2",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

fn core_versions(host: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}]
    })
}

fn group_entry(group: &str, version: &str) -> Value {
    let gv = json!({"groupVersion": format!("{group}/{version}"), "version": version});
    json!({"name": group, "versions": [gv.clone()], "preferredVersion": gv})
}

fn group_list() -> Value {
    json!({
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": GROUPS.iter().map(|(g, v)| group_entry(g, v)).collect::<Vec<_>>()
    })
}

fn group_doc(group: &str) -> Value {
    let version = GROUPS
        .iter()
        .find(|(g, _)| *g == group)
        .map(|(_, v)| *v)
        .unwrap_or("v1");
    let mut doc = group_entry(group, version);
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    doc
}

fn singular(kind: Kind) -> String {
    kind.name().to_ascii_lowercase()
}

fn resource_list(group: &str, version: &str) -> Value {
    const VERBS: [&str; 8] = [
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ];
    let mut resources = Vec::new();
    if group == KUBEVIRT_SUBRESOURCE_GROUP {
        for (plural, sub, kind) in [
            ("virtualmachineinstances", "pause", "VirtualMachineInstance"),
            (
                "virtualmachineinstances",
                "unpause",
                "VirtualMachineInstance",
            ),
            (
                "virtualmachineinstances",
                "guestosinfo",
                "VirtualMachineInstance",
            ),
            ("virtualmachines", "migrate", "VirtualMachine"),
            ("virtualmachines", "start", "VirtualMachine"),
            ("virtualmachines", "stop", "VirtualMachine"),
            ("virtualmachines", "restart", "VirtualMachine"),
        ] {
            resources.push(json!({
                "name": format!("{plural}/{sub}"), "singularName": "", "namespaced": true,
                "kind": kind, "verbs": ["update"]
            }));
        }
    } else {
        for kind in Kind::ALL
            .into_iter()
            .filter(|k| k.group() == group && k.version() == version)
        {
            resources.push(json!({
                "name": kind.plural(), "singularName": singular(kind),
                "namespaced": kind.namespaced(), "kind": kind.name(), "verbs": VERBS
            }));
            resources.push(json!({
                "name": format!("{}/status", kind.plural()), "singularName": "",
                "namespaced": kind.namespaced(), "kind": kind.name(),
                "verbs": ["get", "patch", "update"]
            }));
            if kind == Kind::Pod {
                resources.push(json!({
                    "name": "pods/eviction", "singularName": "", "namespaced": true,
                    "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"]
                }));
            }
        }
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources
    })
}
