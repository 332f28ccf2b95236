//! Small readers over Kubernetes core objects (events, pods) that triage needs and the
//! generated k8s-openapi types do not offer.

use k8s_openapi::jiff::Timestamp;

use crate::model::{Event, Pod};

/// When an event first happened: legacy `firstTimestamp`, else events.k8s.io `eventTime`,
/// else its creation (the scheduler writes null first/lastTimestamp).
pub fn event_first(e: &Event) -> Option<Timestamp> {
    e.first_timestamp
        .as_ref()
        .map(|t| t.0)
        .or_else(|| e.event_time.as_ref().map(|t| t.0))
        .or_else(|| e.metadata.creation_timestamp.as_ref().map(|t| t.0))
}

/// When an event last happened: `lastTimestamp`, else `series.lastObservedTime`, else the first time.
pub fn event_last(e: &Event) -> Option<Timestamp> {
    e.last_timestamp
        .as_ref()
        .map(|t| t.0)
        .or_else(|| {
            e.series
                .as_ref()
                .and_then(|s| s.last_observed_time.as_ref())
                .map(|t| t.0)
        })
        .or_else(|| event_first(e))
}

/// How often it happened: `count`, else `series.count`, else once.
pub fn event_count(e: &Event) -> i64 {
    e.count
        .map(i64::from)
        .or_else(|| e.series.as_ref().and_then(|s| s.count).map(i64::from))
        .unwrap_or(1)
        .max(1)
}

pub fn event_reason(e: &Event) -> &str {
    e.reason.as_deref().unwrap_or("")
}

pub fn event_message(e: &Event) -> &str {
    e.message.as_deref().unwrap_or("")
}

pub fn event_is_warning(e: &Event) -> bool {
    e.type_.as_deref() == Some("Warning")
}

pub fn event_name(e: &Event) -> &str {
    e.metadata.name.as_deref().unwrap_or("")
}

/// True when the event is about the object of `kind` named `name` (matched by uid when
/// both sides have one, since names are reused by later objects).
pub fn event_is_about(e: &Event, kind: &str, name: &str, uid: Option<&str>) -> bool {
    let o = &e.involved_object;
    if o.kind.as_deref() != Some(kind) {
        return false;
    }
    match (o.uid.as_deref(), uid) {
        (Some(a), Some(b)) if !a.is_empty() => a == b,
        _ => o.name.as_deref() == Some(name),
    }
}

pub fn pod_name(p: &Pod) -> &str {
    p.metadata.name.as_deref().unwrap_or("")
}

pub fn pod_node(p: &Pod) -> Option<&str> {
    p.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .filter(|n| !n.is_empty())
}

pub fn pod_phase(p: &Pod) -> Option<&str> {
    p.status.as_ref().and_then(|s| s.phase.as_deref())
}

pub fn pod_label<'a>(p: &'a Pod, key: &str) -> Option<&'a str> {
    p.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

pub fn pod_annotation<'a>(p: &'a Pod, key: &str) -> Option<&'a str> {
    p.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

pub struct PodCond<'a> {
    pub status: &'a str,
    pub reason: Option<&'a str>,
    pub message: Option<&'a str>,
    pub since: Option<Timestamp>,
}

pub fn pod_condition<'a>(p: &'a Pod, type_: &str) -> Option<PodCond<'a>> {
    let c = p
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)?;
    Some(PodCond {
        status: c.status.as_str(),
        reason: c.reason.as_deref(),
        message: c.message.as_deref(),
        since: c.last_transition_time.as_ref().map(|t| t.0),
    })
}

pub fn pod_is_finished(p: &Pod) -> bool {
    matches!(pod_phase(p), Some("Succeeded" | "Failed"))
}

/// `(container, reason, message)` for every container (init ones too) that waits or
/// terminated with an error.
pub fn pod_container_problems(p: &Pod) -> Vec<(String, String, Option<String>)> {
    let Some(status) = p.status.as_ref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for cs in status
        .init_container_statuses
        .iter()
        .flatten()
        .chain(status.container_statuses.iter().flatten())
    {
        let Some(state) = cs.state.as_ref() else {
            continue;
        };
        if let Some(w) = &state.waiting {
            let reason = w.reason.clone().unwrap_or_default();
            // Normal start-up, not a problem.
            if !matches!(
                reason.as_str(),
                "" | "ContainerCreating" | "PodInitializing"
            ) {
                out.push((cs.name.clone(), reason, w.message.clone()));
            }
        }
        if let Some(t) = &state.terminated
            && t.exit_code != 0
        {
            out.push((
                cs.name.clone(),
                t.reason.clone().unwrap_or_else(|| "Error".into()),
                t.message.clone(),
            ));
        }
    }
    out
}

/// Sum of the containers' memory requests, in bytes.
pub fn pod_memory_request(p: &Pod) -> Option<u64> {
    let spec = p.spec.as_ref()?;
    let mut total = 0u64;
    let mut any = false;
    for c in &spec.containers {
        if let Some(q) = c
            .resources
            .as_ref()
            .and_then(|r| r.requests.as_ref())
            .and_then(|r| r.get("memory"))
            && let Ok(q) = crate::model::Quantity::parse(&q.0)
        {
            total = total.saturating_add(q.bytes());
            any = true;
        }
    }
    any.then_some(total)
}
