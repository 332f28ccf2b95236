//! "Never confidently wrong": every Warning event and every abnormal condition on the
//! migration, its VMI and both launcher pods within the migration's window is either part of
//! the diagnosis's evidence or listed as unexplained; an `in-progress` verdict cannot stand
//! while a Warning newer than the last phase change is unexplained; and every diagnosis says
//! how sure it is and what it had to assume.

use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

use super::objects::*;
use super::rules::{self, Finding, Rule};
use super::strings as s;
use super::view::View;
use super::{Fact, Plane};
use crate::model::vmim::MigrationPhase;
use crate::model::{Event, Pod};
use crate::text as fmt;

/// Kubernetes keeps events for an hour by default (kube-apiserver `--event-ttl`).
const EVENT_TTL_SECONDS: i64 = 3600;

/// How sure the diagnosis is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Confidence {
    /// The cause was read from object status or conditions, and nothing is unexplained.
    High,
    /// The cause is inferred (elapsed time, a pattern) or rests on events alone.
    Medium,
    /// The cause is unknown, something on record is unexplained, or something could not be read.
    Low,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        }
    }
}

/// What `explain` tried to read and could not (recorded by the command as data).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    Events,
    KubeVirt,
    MigrationPolicies,
    Namespace,
    PodDisruptionBudgets,
}

/// One read that failed: which source, the HTTP status (403 forbidden, 404 no such kind).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Unread {
    pub source: Source,
    pub status: Option<u16>,
    /// The API server's message, as written.
    pub message: String,
}

/// A Warning event or an abnormal condition that no part of the diagnosis accounts for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unexplained {
    /// `Kind/namespace/name` of the object the event or condition is about.
    pub object: String,
    /// `event` (a Warning event), or the condition's field (`status.conditions[type=Ready]`).
    pub source: String,
    /// The event's reason, or `Type=Status` and the condition's reason.
    pub reason: String,
    /// As written (escaped only when rendered for a terminal).
    pub message: String,
    /// How often the event was seen (None for a condition).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    /// RFC 3339: the event's last occurrence or the condition's last transition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// True for a Warning event.
    #[serde(skip)]
    pub warning: bool,
    #[serde(skip)]
    pub at: Option<Timestamp>,
}

// ---------------------------------------------------------------- what is benign

/// Pod conditions that are False in the ordinary life of a launcher pod, with the reason
/// that makes them ordinary: a finished pod (`PodCompleted`), or a pod still starting or
/// stopping whose containers report no problem (`ContainersNotReady`, `ContainersNotInitialized`).
pub const BENIGN_POD_CONDITIONS: &[(&str, &str)] = &[
    ("Ready", "PodCompleted"),
    ("ContainersReady", "PodCompleted"),
    ("Ready", "ContainersNotReady"),
    ("ContainersReady", "ContainersNotReady"),
    ("Initialized", "ContainersNotInitialized"),
];

/// VMI conditions that are never abnormal for a migration: `LiveMigratable` and
/// `StorageLiveMigratable` (reported under attention with their fix), `AgentConnected` (no
/// guest agent is not a migration matter), `Paused` when False.
pub const BENIGN_VMI_CONDITIONS: &[&str] =
    &["LiveMigratable", "StorageLiveMigratable", "AgentConnected"];

/// Warning events that the diagnosis reports elsewhere: virt-handler's `Migrated` warning that
/// the eviction strategy cannot be honoured is the LiveMigratable=False condition, which
/// attention lists with its fix.
pub const NOT_MIGRATABLE_WARNING_PREFIX: &str = "EvictionStrategy is set but vmi is not migratable";

/// True when a pod condition is part of a launcher pod's ordinary life.
pub fn benign_pod_condition(pod: &Pod, type_: &str, status: &str, reason: Option<&str>) -> bool {
    match status {
        // A pod marked for disruption (eviction, preemption, node shutdown) is not ordinary.
        "True" => return type_ != "DisruptionTarget",
        // The kubelet stopped reporting (the node is NotReady or gone).
        "False" => {}
        _ => return false,
    }
    let Some(reason) = reason else {
        return true;
    };
    match reason {
        "PodCompleted" => BENIGN_POD_CONDITIONS.contains(&(type_, reason)),
        "ContainersNotReady" | "ContainersNotInitialized" => {
            BENIGN_POD_CONDITIONS.contains(&(type_, reason))
                && pod_container_problems(pod).is_empty()
        }
        _ => false,
    }
}

/// True when a VMI condition is not abnormal for a migration.
fn benign_vmi_condition(v: &View, type_: &str, status: &str, reason: Option<&str>) -> bool {
    if BENIGN_VMI_CONDITIONS.contains(&type_) {
        return true;
    }
    match (type_, status) {
        // Paused by the migration monitor is reported under attention; by the user, on request.
        ("Paused", "True") => matches!(reason, Some("PausedByMigrationMonitor" | "PausedByUser")),
        // A VMI that no longer runs is not Ready: its phase, in the evidence, says so.
        ("Ready", "False") => !v.vmi_running(),
        (_, "False") => reason.is_none_or(|r| r.trim().is_empty()),
        (_, "True") => true,
        // Unknown: nobody reports the condition any more.
        _ => false,
    }
}

/// Warnings about what comes after a finished migration: the backoff before KubeVirt's next
/// evacuation attempt (explained when that attempt is explained).
pub const AFTER_THE_END_REASONS: &[&str] = &[s::REASON_BACKOFF];

fn benign_event(v: &View, e: &Event) -> bool {
    (event_message(e).starts_with(NOT_MIGRATABLE_WARNING_PREFIX) && !v.live_blockers().is_empty())
        || (v.is_final() && AFTER_THE_END_REASONS.contains(&event_reason(e)))
}

/// True when a Warning only restates a fact the evidence already holds:
/// - its message is a fact's value (the scheduler's FailedScheduling message is the target
///   pod's PodScheduled=False message);
/// - it quotes the `failureReason` in evidence (virt-handler's `Migrated` "migration uid …
///   failed. reason:…"), or is virt-controller's `source node reported migration failed`
///   while the evidence holds that failure;
/// - it is virt-controller's `migrationTargetPodUnschedulable` while the evidence holds the
///   target pod's PodScheduled condition;
/// - it is `Migration target pod was removed during active migration.` while the evidence
///   quotes the timeout deletion that removed it.
fn restates_evidence(e: &Event, evidence: &[Fact]) -> bool {
    let msg = event_message(e).trim();
    if msg.is_empty() {
        return false;
    }
    let reason = event_reason(e);
    let failure_known = evidence.iter().any(|f| {
        f.field.ends_with("migrationState.failureReason")
            || f.field.ends_with("migrationState.failed")
    });
    evidence.iter().any(|f| f.value.trim() == msg)
        || evidence.iter().any(|f| {
            f.field.ends_with("migrationState.failureReason")
                && !f.value.trim().is_empty()
                && msg.contains(f.value.trim())
        })
        || (msg == s::SOURCE_REPORTED_FAILED && failure_known)
        || (reason == s::REASON_TARGET_UNSCHEDULABLE
            && evidence.iter().any(|f| {
                f.object.starts_with("Pod/") && f.field.contains("conditions[type=PodScheduled]")
            }))
        || (msg == s::TARGET_POD_REMOVED
            && evidence.iter().any(|f| {
                f.object.starts_with("Event/") && f.value.ends_with(s::TIMEOUT_EXCEEDED_SUFFIX)
            }))
}

// ---------------------------------------------------------------- collection

fn second(t: Timestamp) -> Timestamp {
    Timestamp::from_second(t.as_second()).unwrap_or(t)
}

/// `(kind, name, reason)` of every event the evidence quotes: repeats of the same warning on
/// the same object (KubeVirt re-creates the event after each backoff) are explained with it.
fn quoted_events(v: &View, evidence: &[Fact]) -> Vec<(String, String, String)> {
    let ns = v.namespace();
    evidence
        .iter()
        .filter_map(|f| f.object.strip_prefix("Event/")?.split_once('/'))
        .filter_map(|(event_ns, name)| {
            v.ev.events.iter().find(|e| {
                event_name(e) == name && e.metadata.namespace.as_deref().unwrap_or(ns) == event_ns
            })
        })
        .map(|e| {
            (
                e.involved_object.kind.clone().unwrap_or_default(),
                e.involved_object.name.clone().unwrap_or_default(),
                event_reason(e).to_string(),
            )
        })
        .collect()
}

fn condition_in_evidence(evidence: &[Fact], object: &str, type_: &str) -> bool {
    let needle = format!("conditions[type={type_}]");
    evidence
        .iter()
        .any(|f| f.object == object && f.field.contains(&needle))
}

/// Every Warning event and abnormal condition in the migration's window that `evidence` does
/// not account for, oldest first.
pub fn collect(v: &View, evidence: &[Fact]) -> Vec<Unexplained> {
    let mut out = Vec::new();
    let quoted = quoted_events(v, evidence);
    let ns = v.namespace().to_string();

    for e in v.events.iter().copied().filter(|e| event_is_warning(e)) {
        let o = &e.involved_object;
        let kind = o.kind.clone().unwrap_or_default();
        let name = o.name.clone().unwrap_or_default();
        let reason = event_reason(e).to_string();
        if quoted
            .iter()
            .any(|(k, n, r)| *k == kind && *n == name && *r == reason)
            || benign_event(v, e)
            || restates_evidence(e, evidence)
        {
            continue;
        }
        let at = event_last(e);
        let count = event_count(e);
        out.push(Unexplained {
            object: format!("{kind}/{}/{name}", o.namespace.as_deref().unwrap_or(&ns)),
            source: "event".into(),
            reason,
            message: event_message(e).to_string(),
            count: (count > 1).then_some(count),
            time: at.map(|t| second(t).to_string()),
            warning: true,
            at,
        });
    }

    let (from, to) = v.window();
    let open = !v.is_final();
    let in_window = |t: Option<Timestamp>| match t {
        Some(t) => t.as_second() >= from && t.as_second() <= to,
        None => open,
    };
    let mut condition = |object: String,
                         type_: &str,
                         status: &str,
                         reason: Option<&str>,
                         message: Option<&str>,
                         at: Option<Timestamp>| {
        if !in_window(at) || condition_in_evidence(evidence, &object, type_) {
            return;
        }
        out.push(Unexplained {
            object,
            source: format!("status.conditions[type={type_}]"),
            reason: match reason {
                Some(r) if !r.is_empty() => format!("{type_}={status}, {r}"),
                _ => format!("{type_}={status}"),
            },
            message: message.unwrap_or("").to_string(),
            count: None,
            time: at.map(|t| second(t).to_string()),
            warning: false,
            at,
        });
    };

    if let Some(m) = v.vmim {
        let object = v.vmim_object();
        for c in m.status.conditions.iter().filter(|c| c.is_true()) {
            let at = c
                .last_transition_time
                .as_ref()
                .or(c.last_probe_time.as_ref())
                .map(|t| t.0);
            condition(
                object.clone(),
                &c.type_,
                &c.status,
                c.reason.as_deref(),
                c.message.as_deref(),
                at,
            );
        }
    }
    if let Some(vmi) = v.vmi {
        let object = v.vmi_object();
        for c in &vmi.status.conditions {
            if benign_vmi_condition(v, &c.type_, &c.status, c.reason.as_deref()) {
                continue;
            }
            condition(
                object.clone(),
                &c.type_,
                &c.status,
                c.reason.as_deref(),
                c.message.as_deref(),
                c.last_transition_time.as_ref().map(|t| t.0),
            );
        }
    }
    let mut pods: Vec<&Pod> = Vec::new();
    for p in [v.source_pod, v.target_pod].into_iter().flatten() {
        if !pods.iter().any(|q| pod_name(q) == pod_name(p)) {
            pods.push(p);
        }
    }
    for p in pods {
        let object = v.pod_object(pod_name(p));
        for c in p
            .status
            .as_ref()
            .and_then(|st| st.conditions.as_ref())
            .into_iter()
            .flatten()
        {
            if benign_pod_condition(p, &c.type_, &c.status, c.reason.as_deref()) {
                continue;
            }
            // Not ready because of a container the evidence already names.
            if matches!(
                c.reason.as_deref(),
                Some("ContainersNotReady" | "ContainersNotInitialized")
            ) && evidence
                .iter()
                .any(|f| f.object == object && f.field.contains("ontainerStatuses"))
            {
                continue;
            }
            condition(
                object.clone(),
                &c.type_,
                &c.status,
                c.reason.as_deref(),
                c.message.as_deref(),
                c.last_transition_time.as_ref().map(|t| t.0),
            );
        }
    }
    out.sort_by_key(|u| u.at.map(|t| t.as_second()).unwrap_or(i64::MAX));
    out
}

// ---------------------------------------------------------------- in-progress cannot stand

/// When the migration last changed phase (else when it was created).
fn last_phase_change(v: &View) -> Option<Timestamp> {
    v.vmim
        .and_then(|m| {
            m.status
                .phase_transition_timestamps
                .iter()
                .filter_map(|t| t.phase_transition_timestamp.as_ref().map(|t| t.0))
                .max()
        })
        .or(v.created)
}

/// The plane a phase points at when nothing names the cause: before `Running`, Kubernetes and
/// virt-controller (control plane); from `Running` on, the launchers (data plane).
pub fn plane_of_phase(phase: &MigrationPhase) -> Plane {
    match phase {
        MigrationPhase::Unset
        | MigrationPhase::Pending
        | MigrationPhase::Scheduling
        | MigrationPhase::Scheduled
        | MigrationPhase::PreparingTarget
        | MigrationPhase::TargetReady
        | MigrationPhase::WaitingForSync => Plane::ControlPlane,
        MigrationPhase::Running | MigrationPhase::Synchronizing => Plane::DataPlane,
        _ => Plane::Unknown,
    }
}

/// The verdict that replaces `in-progress` when Warnings newer than the last phase change are
/// unexplained: the target pod's creation failing (whatever the message says), else `unknown`
/// with the plane the phase points at.
pub(crate) fn instead_of_in_progress(
    v: &View,
    unexplained: &[Unexplained],
) -> Option<(&'static Rule, Finding, Plane)> {
    let since = last_phase_change(v);
    let fresh: Vec<&Unexplained> = unexplained
        .iter()
        .filter(|u| u.warning)
        .filter(|u| match (u.at, since) {
            (Some(at), Some(since)) => at.as_second() >= since.as_second(),
            _ => true,
        })
        .collect();
    if fresh.is_empty() {
        return None;
    }
    if v.start.is_none()
        && let Some(e) = v.newest_event(|e| {
            event_is_warning(e)
                && rules::target_pod_create_failed::is_target_pod_create_failure(e)
                && event_last(e)
                    .zip(since)
                    .is_none_or(|(at, since)| at.as_second() >= since.as_second())
        })
        && let Some(rule) = rules::rule("target-pod-create-failed")
    {
        let mut f = rules::create_failed_finding(v, e);
        f.inferred = !event_message(e).starts_with(s::ERROR_CREATING_POD);
        return Some((rule, f, rule.cause.plane));
    }
    let rule = rules::rule("unknown")?;
    let plane = plane_of_phase(&v.phase);
    let age = v.age().map(fmt::duration).unwrap_or_else(|| "?".into());
    let newest = fresh
        .iter()
        .max_by_key(|u| u.at.map(|t| t.as_second()).unwrap_or(i64::MIN))
        .copied()
        .or(fresh.first().copied())?;
    let mut f = Finding {
        inferred: true,
        ..Default::default()
    };
    f.summary = format!(
        "{} for {age}, but {} Warning{} since its last phase change that no rule explains, the newest {} on {}: \"{}\". vmctl cannot tell whether it blocks the migration; the phase points at the {}.",
        v.phase,
        fresh.len(),
        if fresh.len() == 1 { "" } else { "s" },
        newest.reason,
        newest.object,
        newest.message,
        plane.as_str()
    );
    let ns = v.namespace();
    let mut objects: Vec<&str> = fresh.iter().map(|u| u.object.as_str()).collect();
    objects.dedup();
    for o in objects {
        let mut parts = o.splitn(3, '/');
        let (kind, name) = (parts.next().unwrap_or(""), parts.nth(1).unwrap_or(""));
        let resource = match kind {
            "VirtualMachineInstanceMigration" => "vmim",
            "VirtualMachineInstance" => "vmi",
            "Pod" => "pod",
            other => other,
        };
        f.next_steps.push(format!(
            "Read the warnings in full: kubectl describe {resource} -n {ns} {name}"
        ));
    }
    f.next_steps.push(format!(
        "Read virt-controller's log: kubectl logs -n kubevirt -l kubevirt.io=virt-controller --tail=500 | grep -i {}",
        v.vmim_name()
    ));
    Some((rule, f, plane))
}

// ---------------------------------------------------------------- assumptions and confidence

/// What the diagnosis had to assume because something could not be read.
pub fn assumptions(v: &View) -> Vec<String> {
    let mut out = Vec::new();
    for u in &v.ev.unread {
        let why = match u.status {
            Some(403) => format!("forbidden (403): {}", u.message),
            Some(404) => format!(
                "not found (404), the kind may not be installed: {}",
                u.message
            ),
            Some(code) => format!("HTTP {code}: {}", u.message),
            None => u.message.clone(),
        };
        let (what, assumed) = match u.source {
            Source::Events => (
                "events",
                "the diagnosis rests on object status alone; Warning events cannot be checked",
            ),
            Source::KubeVirt => ("the KubeVirt CR", "KubeVirt's defaults are assumed"),
            Source::MigrationPolicies => ("MigrationPolicies", "no policy is assumed to apply"),
            Source::Namespace => (
                "the Namespace",
                "policies selecting namespace labels are not matched",
            ),
            Source::PodDisruptionBudgets => (
                "PodDisruptionBudgets",
                "a budget that refuses the launcher pod's eviction is not seen",
            ),
        };
        out.push(format!("Could not read {what} ({why}): {assumed}."));
    }
    let events_read = !v.ev.unread.iter().any(|u| u.source == Source::Events);
    if v.ev.kubevirt.is_none() && !v.ev.unread.iter().any(|u| u.source == Source::KubeVirt) {
        out.push(
            "No KubeVirt CR was found: KubeVirt's defaults (limits, timeouts, post-copy off) are assumed."
                .into(),
        );
    }
    // Events older than the TTL are gone unless something kept them: when the migration began
    // before that horizon and no event that old was read, the early ones may be missing.
    let horizon = v.now.as_second() - EVENT_TTL_SECONDS;
    if events_read
        && v.has_migration()
        && let Some(created) = v.created
        && created.as_second() < horizon
        && !v
            .events
            .iter()
            .any(|e| event_first(e).is_some_and(|t| t.as_second() < horizon))
    {
        let at = Timestamp::from_second(horizon)
            .map(|t| t.to_string())
            .unwrap_or_default();
        out.push(format!(
            "Events before {at} have likely expired (Kubernetes keeps them for an hour; the migration began at {}): earlier warnings cannot be checked.",
            second(created)
        ));
    }
    out
}

/// High: read from status with nothing unexplained; medium: inferred or events alone; low:
/// unknown, something unexplained, or something assumed.
pub fn confidence(
    rule: &Rule,
    inferred: bool,
    finding_evidence: &[Fact],
    unexplained: &[Unexplained],
    assumptions: &[String],
) -> Confidence {
    if rule.cause.id == "unknown" || !unexplained.is_empty() || !assumptions.is_empty() {
        return Confidence::Low;
    }
    let events_only = !finding_evidence.is_empty()
        && finding_evidence
            .iter()
            .all(|f| f.object.starts_with("Event/"));
    if inferred || events_only {
        Confidence::Medium
    } else {
        Confidence::High
    }
}
