//! `Status` bodies worded as the real API server words them.

use serde_json::{Map, Value, json};
use vmctl::cluster::Kind;

/// The user named in default `Forbidden` messages.
pub(crate) const DEFAULT_USER: &str = "system:serviceaccount:default:vmctl";

/// `pods` or `virtualmachineinstances.kubevirt.io`: how messages name a resource.
pub(crate) fn qualified_resource(kind: Kind) -> String {
    if kind.group().is_empty() {
        kind.plural().to_string()
    } else {
        format!("{}.{}", kind.plural(), kind.group())
    }
}

pub(crate) fn failure(code: u16, reason: &str, message: &str, details: Option<Value>) -> Value {
    let mut status = Map::new();
    status.insert("kind".into(), json!("Status"));
    status.insert("apiVersion".into(), json!("v1"));
    status.insert("metadata".into(), json!({}));
    status.insert("status".into(), json!("Failure"));
    if !message.is_empty() {
        status.insert("message".into(), json!(message));
    }
    if !reason.is_empty() {
        status.insert("reason".into(), json!(reason));
    }
    if let Some(details) = details {
        status.insert("details".into(), details);
    }
    status.insert("code".into(), json!(code));
    Value::Object(status)
}

/// `details` naming a resource: `{"name": .., "group": .., "kind": "<plural>"}`; the group
/// is left out for the core group, as the server's `omitempty` does.
pub(crate) fn details(kind: Kind, name: Option<&str>) -> Value {
    let mut d = Map::new();
    if let Some(name) = name.filter(|n| !n.is_empty()) {
        d.insert("name".into(), json!(name));
    }
    if !kind.group().is_empty() {
        d.insert("group".into(), json!(kind.group()));
    }
    d.insert("kind".into(), json!(kind.plural()));
    Value::Object(d)
}

pub(crate) fn not_found(kind: Kind, name: &str) -> Value {
    failure(
        404,
        "NotFound",
        &format!("{} \"{name}\" not found", qualified_resource(kind)),
        Some(details(kind, Some(name))),
    )
}

pub(crate) fn already_exists(kind: Kind, name: &str) -> Value {
    failure(
        409,
        "AlreadyExists",
        &format!("{} \"{name}\" already exists", qualified_resource(kind)),
        Some(details(kind, Some(name))),
    )
}

pub(crate) fn conflict(kind: Kind, name: &str) -> Value {
    failure(
        409,
        "Conflict",
        &format!(
            "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; \
             please apply your changes to the latest version and try again",
            qualified_resource(kind)
        ),
        Some(details(kind, Some(name))),
    )
}

pub(crate) fn bad_request(message: &str) -> Value {
    failure(400, "BadRequest", message, None)
}

pub(crate) fn invalid(kind: Kind, name: &str, message: &str) -> Value {
    failure(
        422,
        "Invalid",
        &format!("{} \"{name}\" is invalid: {message}", kind.name()),
        Some(details(kind, Some(name))),
    )
}

/// What the server says for a path it does not serve.
pub(crate) fn resource_not_found() -> Value {
    failure(
        404,
        "NotFound",
        "the server could not find the requested resource",
        Some(
            json!({"causes": [{"reason": "UnexpectedServerResponse", "message": "404 page not found"}]}),
        ),
    )
}

pub(crate) fn method_not_allowed() -> Value {
    failure(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        None,
    )
}

pub(crate) fn unsupported_media_type(content_type: &str) -> Value {
    failure(
        415,
        "UnsupportedMediaType",
        &format!(
            "the body of the request was in an unknown format - accepted media types include: \
             application/json-patch+json, application/merge-patch+json, \
             application/apply-patch+yaml (got {content_type:?})"
        ),
        None,
    )
}

pub(crate) fn too_old_resource_version(requested: u64, oldest: u64) -> Value {
    failure(
        410,
        "Expired",
        &format!("too old resource version: {requested} ({oldest})"),
        None,
    )
}

pub(crate) fn continue_expired() -> Value {
    failure(
        410,
        "Expired",
        "The provided continue parameter is too old to display a consistent list result. You \
         can start a new list without the continue parameter, or use the continue token in this \
         response to retrieve the remainder of the results. Continuing with the provided token \
         results in an inconsistent list - objects that were created, modified, or deleted \
         between the time the first chunk was returned and now may show up in the list.",
        None,
    )
}

/// `{"status":"Success"}` as returned by deletes of custom resources and by evictions.
pub(crate) fn success(
    kind: Option<Kind>,
    name: Option<&str>,
    uid: Option<&str>,
    code: u16,
) -> Value {
    let mut status = Map::new();
    status.insert("kind".into(), json!("Status"));
    status.insert("apiVersion".into(), json!("v1"));
    status.insert("metadata".into(), json!({}));
    status.insert("status".into(), json!("Success"));
    if let Some(kind) = kind {
        let mut d = details(kind, name);
        if let (Some(uid), Value::Object(map)) = (uid, &mut d) {
            map.insert("uid".into(), json!(uid));
        }
        status.insert("details".into(), d);
    }
    if code != 200 {
        status.insert("code".into(), json!(code));
    }
    Value::Object(status)
}

/// What a request was trying to do, for default fault messages.
pub(crate) struct RequestContext<'a> {
    pub verb: &'a str,
    pub kind: Option<Kind>,
    pub namespace: Option<&'a str>,
    pub name: Option<&'a str>,
    pub subresource: Option<&'a str>,
    pub path: &'a str,
}

/// The body a real server sends with `code`, for a fault injected without a message.
pub(crate) fn for_code(
    code: u16,
    reason: Option<&str>,
    message: Option<&str>,
    retry_after: Option<u64>,
    ctx: &RequestContext<'_>,
) -> Value {
    let (default_reason, default_message, details): (&str, String, Option<Value>) = match code {
        400 => ("BadRequest", "the server rejected our request for an unknown reason".into(), None),
        401 => ("Unauthorized", "Unauthorized".into(), None),
        403 => forbidden(ctx),
        404 => match (ctx.kind, ctx.name) {
            (Some(kind), Some(name)) => (
                "NotFound",
                format!("{} \"{name}\" not found", qualified_resource(kind)),
                Some(details(kind, Some(name))),
            ),
            _ => (
                "NotFound",
                "the server could not find the requested resource".into(),
                None,
            ),
        },
        405 => (
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource".into(),
            None,
        ),
        409 => match (ctx.kind, ctx.name) {
            (Some(kind), Some(name)) => (
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {} \"{name}\": the object has been \
                     modified; please apply your changes to the latest version and try again",
                    qualified_resource(kind)
                ),
                Some(details(kind, Some(name))),
            ),
            _ => ("Conflict", "the object has been modified".into(), None),
        },
        410 => ("Expired", "too old resource version".into(), None),
        422 => ("Invalid", "the request is invalid".into(), None),
        429 => (
            "TooManyRequests",
            "Too many requests, please try again later.".into(),
            Some(json!({"retryAfterSeconds": retry_after.unwrap_or(1)})),
        ),
        500 => (
            "InternalError",
            "Internal error occurred: injected fault".into(),
            Some(json!({"causes": [{"message": "injected fault"}]})),
        ),
        503 => (
            "ServiceUnavailable",
            "the server is currently unable to handle the request".into(),
            None,
        ),
        504 => (
            "Timeout",
            "Timeout: request did not complete within requested timeout - context deadline exceeded"
                .into(),
            None,
        ),
        _ => ("", format!("injected fault {code} on {}", ctx.path), None),
    };
    failure(
        code,
        reason.unwrap_or(default_reason),
        message.unwrap_or(&default_message),
        details,
    )
}

/// `pods is forbidden: User "…" cannot list resource "pods" in API group "" at the cluster scope`
fn forbidden(ctx: &RequestContext<'_>) -> (&'static str, String, Option<Value>) {
    let Some(kind) = ctx.kind else {
        return (
            "Forbidden",
            format!(
                "forbidden: User \"{DEFAULT_USER}\" cannot get path \"{}\"",
                ctx.path
            ),
            None,
        );
    };
    let subject = match ctx.name {
        Some(name) => format!("{} \"{name}\"", qualified_resource(kind)),
        None => qualified_resource(kind),
    };
    let resource = match ctx.subresource {
        Some(sub) => format!("{}/{sub}", kind.plural()),
        None => kind.plural().to_string(),
    };
    let scope = match ctx.namespace {
        Some(ns) => format!("in the namespace \"{ns}\""),
        None => "at the cluster scope".to_string(),
    };
    (
        "Forbidden",
        format!(
            "{subject} is forbidden: User \"{DEFAULT_USER}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
            ctx.verb,
            kind.group()
        ),
        Some(details(kind, ctx.name)),
    )
}
