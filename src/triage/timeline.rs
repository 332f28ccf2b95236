//! The timeline: phase transitions, migrationState timestamps, pod and VMI conditions and
//! events, in time order with the time between steps.

use k8s_openapi::jiff::Timestamp;

use super::TimelineEntry;
use super::objects::*;
use super::view::View;
use crate::model::{Condition, Time};

/// VMI conditions that tell a migration's story.
const VMI_CONDITIONS: &[&str] = &["Synchronized", "Paused", "EvictionRequested", "Ready"];

struct Builder {
    entries: Vec<TimelineEntry>,
}

impl Builder {
    fn push(
        &mut self,
        at: Timestamp,
        object: String,
        what: String,
        detail: Option<String>,
        source: &str,
    ) {
        self.entries.push(TimelineEntry {
            time: String::new(),
            at,
            object,
            what,
            detail: detail.filter(|d| !d.trim().is_empty()),
            count: None,
            last_time: None,
            source: source.to_string(),
            offset_seconds: 0,
            since_previous_seconds: None,
        });
    }
}

fn short_kind(kind: &str) -> String {
    match kind {
        "VirtualMachineInstanceMigration" => "vmim".into(),
        "VirtualMachineInstance" => "vmi".into(),
        "VirtualMachine" => "vm".into(),
        "Pod" => "pod".into(),
        other => other.to_ascii_lowercase(),
    }
}

fn condition_time(c: &Condition) -> Option<Timestamp> {
    c.last_transition_time
        .as_ref()
        .or(c.last_probe_time.as_ref())
        .map(|t: &Time| t.0)
}

/// Whole seconds: API timestamps mix second and microsecond precision.
fn second(t: Timestamp) -> Timestamp {
    Timestamp::from_second(t.as_second()).unwrap_or(t)
}

pub fn build(v: &View) -> Vec<TimelineEntry> {
    let mut b = Builder {
        entries: Vec::new(),
    };
    let (from, to) = v.window();
    let in_window = |t: Timestamp| t.as_second() >= from && t.as_second() <= to;

    if let Some(m) = v.vmim {
        let obj = format!("vmim/{}", m.name());
        if let Some(c) = v.created {
            let what = match m.evacuation_node() {
                Some(node) => format!("created (evacuation of {node})"),
                None => "created".to_string(),
            };
            b.push(c, obj.clone(), what, None, "metadata.creationTimestamp");
        }
        for t in &m.status.phase_transition_timestamps {
            if let Some(at) = &t.phase_transition_timestamp {
                b.push(
                    at.0,
                    obj.clone(),
                    format!("phase {}", t.phase),
                    None,
                    "status.phaseTransitionTimestamps",
                );
            }
        }
        for c in m.status.conditions.iter().filter(|c| c.is_true()) {
            if let Some(at) = condition_time(c) {
                b.push(
                    at,
                    obj.clone(),
                    format!("condition {}", c.type_),
                    c.message.clone(),
                    "status.conditions",
                );
            }
        }
        if let Some(d) = &m.metadata.deletion_timestamp {
            b.push(
                d.0,
                obj.clone(),
                "deletion requested".into(),
                (!m.is_final()).then(|| "an abort request".to_string()),
                "metadata.deletionTimestamp",
            );
        }
    }

    if let Some(st) = v.state {
        let owner = v
            .state_owner
            .as_deref()
            .map(|o| {
                let mut parts = o.splitn(3, '/');
                let kind = parts.next().unwrap_or("");
                let _ns = parts.next();
                format!("{}/{}", short_kind(kind), parts.next().unwrap_or(""))
            })
            .unwrap_or_default();
        if let Some(t) = &st.start_timestamp {
            b.push(
                t.0,
                owner.clone(),
                format!(
                    "streaming started {} → {}",
                    st.source_node.as_deref().unwrap_or("?"),
                    st.target_node.as_deref().unwrap_or("?")
                ),
                None,
                "status.migrationState.startTimestamp",
            );
        }
        if let Some(t) = &st.target_node_domain_ready_timestamp {
            b.push(
                t.0,
                owner.clone(),
                "domain ready on the target".into(),
                None,
                "status.migrationState.targetNodeDomainReadyTimestamp",
            );
        }
        if let Some(t) = &st.end_timestamp {
            let what = if st.failed {
                "streaming ended: failed"
            } else if st.completed {
                "streaming ended: completed"
            } else {
                "streaming ended"
            };
            let mode = st.mode.as_ref().map(|m| format!("mode {m}")).into_iter();
            let detail: Vec<String> = mode
                .chain(st.failure_reason.iter().map(|r| r.trim().to_string()))
                .collect();
            b.push(
                t.0,
                owner,
                what.into(),
                Some(detail.join("; ")),
                "status.migrationState.endTimestamp",
            );
        }
    }

    if let Some(p) = v.target_pod {
        let obj = format!("pod/{}", pod_name(p));
        if let Some(c) = &p.metadata.creation_timestamp {
            b.push(
                c.0,
                obj.clone(),
                "target pod created".into(),
                None,
                "metadata.creationTimestamp",
            );
        }
        if let Some(c) = pod_condition(p, "PodScheduled")
            && let Some(at) = c.since
        {
            if c.status == "True" {
                b.push(
                    at,
                    obj.clone(),
                    format!("scheduled on {}", pod_node(p).unwrap_or("?")),
                    None,
                    "status.conditions[type=PodScheduled]",
                );
            } else {
                b.push(
                    at,
                    obj.clone(),
                    format!(
                        "unschedulable ({})",
                        c.reason.unwrap_or("PodScheduled=False")
                    ),
                    c.message.map(str::to_string),
                    "status.conditions[type=PodScheduled]",
                );
            }
        }
        if let Some(c) = pod_condition(p, "Ready")
            && c.status == "True"
            && let Some(at) = c.since
        {
            b.push(
                at,
                obj.clone(),
                "ready".into(),
                None,
                "status.conditions[type=Ready]",
            );
        }
        if let Some(d) = &p.metadata.deletion_timestamp {
            b.push(
                d.0,
                obj,
                "deletion requested".into(),
                None,
                "metadata.deletionTimestamp",
            );
        }
    }

    if let Some(vmi) = v.vmi {
        let obj = format!("vmi/{}", vmi.name());
        for c in &vmi.status.conditions {
            if !VMI_CONDITIONS.contains(&c.type_.as_str()) {
                continue;
            }
            if let Some(at) = c.last_transition_time.as_ref().map(|t| t.0)
                && in_window(at)
            {
                let reason = c
                    .reason
                    .as_deref()
                    .map(|r| format!(", {r}"))
                    .unwrap_or_default();
                b.push(
                    at,
                    obj.clone(),
                    format!("condition {}={}{reason}", c.type_, c.status),
                    c.message.clone(),
                    "status.conditions",
                );
            }
        }
        for t in &vmi.status.phase_transition_timestamps {
            if let Some(at) = &t.phase_transition_timestamp
                && in_window(at.0)
                && v.vmim.is_some()
            {
                b.push(
                    at.0,
                    obj.clone(),
                    format!("VMI phase {}", t.phase),
                    None,
                    "status.phaseTransitionTimestamps",
                );
            }
        }
    }

    for e in &v.events {
        let Some(at) = event_first(e) else {
            continue;
        };
        let o = &e.involved_object;
        let obj = format!(
            "{}/{}",
            short_kind(o.kind.as_deref().unwrap_or("?")),
            o.name.as_deref().unwrap_or("?")
        );
        let count = event_count(e);
        b.entries.push(TimelineEntry {
            time: String::new(),
            at,
            object: obj,
            what: format!(
                "{} {}",
                e.type_.as_deref().unwrap_or("Normal"),
                event_reason(e)
            ),
            detail: Some(event_message(e).to_string()).filter(|m| !m.is_empty()),
            count: (count > 1).then_some(count),
            last_time: (count > 1)
                .then(|| event_last(e).map(|t| second(t).to_string()))
                .flatten(),
            source: "event".into(),
            offset_seconds: 0,
            since_previous_seconds: None,
        });
    }

    b.entries.extend(super::kubevirt19::timeline_deadlines(v));
    let mut entries = b.entries;
    // Stable: at equal times, status entries (pushed first) precede events.
    entries.sort_by_key(|e| e.at.as_second());
    let start = entries.first().map(|e| e.at.as_second()).unwrap_or(0);
    let mut previous: Option<i64> = None;
    for e in &mut entries {
        let at = second(e.at);
        e.at = at;
        e.time = at.to_string();
        e.offset_seconds = at.as_second() - start;
        e.since_previous_seconds = previous.map(|p| at.as_second() - p);
        previous = Some(at.as_second());
    }
    entries
}
