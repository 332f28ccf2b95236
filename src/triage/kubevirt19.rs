//! What KubeVirt v1.9 and v1.10 add to a migration's story (FACTS §3.1, §5.4, §6.2, §12):
//! the migration priority queue, decentralized (cross-cluster) migrations, the stall
//! detector, and the target pod's pending timeouts. Pure helpers the rules call.

use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

use super::decentralized::{SideInfo, sides_state};
use super::objects::*;
use super::strings as s;
use super::view::View;
use crate::model::kubevirt::{
    EffectiveStallDetector, GATE_MIGRATION_PRIORITY_QUEUE, GATE_MIGRATION_STALL_DETECTION,
    StallDetectorOptions, parse_version,
};
use crate::model::vmi::{COND_DECENTRALIZED_FAILURE, MigrationMode};
use crate::model::vmim::{COND_DECENTRALIZED_BLOCKED, DecentralizedRole, MigrationPhase};
use crate::model::{Condition, VirtualMachineInstanceMigration};

// ---------------------------------------------------------------- priority queue

/// True when virt-controller orders pending migrations by `spec.priority`: gate
/// MigrationPriorityQueue (alpha v1.7, beta v1.8, GA v1.9). Unknown versions are taken as
/// current.
pub(crate) fn priority_queue_active(v: &View) -> bool {
    let Some(kv) = v.ev.kubevirt.as_ref() else {
        return true;
    };
    match kv.version().and_then(parse_version) {
        Some(ver) if ver < (1, 9) => kv.feature_gate(GATE_MIGRATION_PRIORITY_QUEUE),
        _ => true,
    }
}

/// `system-critical (100)`, `none (0)`.
pub(crate) fn priority_words(m: &VirtualMachineInstanceMigration) -> String {
    match m.priority() {
        Some(p) => format!("{p} ({})", p.queue_weight()),
        None => "no priority (0)".into(),
    }
}

/// Why a pending migration is ahead of the explained one in the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ahead {
    HigherPriority,
    SamePriorityOlder,
}

fn created(m: &VirtualMachineInstanceMigration) -> Option<Timestamp> {
    m.metadata.creation_timestamp.as_ref().map(|t| t.0)
}

/// The pending migrations of `candidates` that virt-controller's queue serves before `me`:
/// a higher queue weight, or the same weight and created earlier. Without the priority
/// queue (≤v1.8 without the gate) every migration has the same weight.
pub(crate) fn ahead_of<'a>(
    me: &VirtualMachineInstanceMigration,
    candidates: impl Iterator<Item = &'a VirtualMachineInstanceMigration>,
    by_priority: bool,
) -> Vec<(&'a VirtualMachineInstanceMigration, Ahead)> {
    let weight = |m: &VirtualMachineInstanceMigration| {
        if by_priority {
            m.priority().map(|p| p.queue_weight()).unwrap_or(0)
        } else {
            0
        }
    };
    let mine = weight(me);
    let my_key = (
        created(me),
        me.namespace().to_string(),
        me.name().to_string(),
    );
    let mut out: Vec<_> = candidates
        .filter(|m| m.uid() != me.uid() || m.name() != me.name())
        .filter(|m| {
            matches!(m.phase(), MigrationPhase::Pending | MigrationPhase::Unset)
                && m.metadata.deletion_timestamp.is_none()
        })
        .filter_map(|m| {
            let w = weight(m);
            let key = (created(m), m.namespace().to_string(), m.name().to_string());
            if w > mine {
                Some((m, Ahead::HigherPriority))
            } else if w == mine && key.0.is_some() && key < my_key {
                Some((m, Ahead::SamePriorityOlder))
            } else {
                None
            }
        })
        .collect();
    out.sort_by_key(|(m, _)| {
        (
            std::cmp::Reverse(weight(m)),
            created(m),
            m.name().to_string(),
        )
    });
    out
}

/// One sentence on the queue: how many are ahead and why.
pub(crate) fn queue_sentence(
    me: &VirtualMachineInstanceMigration,
    ahead: &[(&VirtualMachineInstanceMigration, Ahead)],
    by_priority: bool,
) -> String {
    let order = if by_priority {
        "KubeVirt's priority queue serves the highest spec.priority first (system-critical 100, user-triggered 50, system-maintenance 20, none 0), and among equals the oldest"
    } else {
        "without the MigrationPriorityQueue feature gate (KubeVirt before v1.9) the queue ignores spec.priority and serves the oldest first"
    };
    if ahead.is_empty() {
        return format!(
            " It is first in line ({}): {order}, so it takes the next free slot.",
            priority_words(me)
        );
    }
    let higher = ahead
        .iter()
        .filter(|(_, a)| *a == Ahead::HigherPriority)
        .count();
    let older = ahead.len() - higher;
    let mut parts = Vec::new();
    if higher > 0 {
        parts.push(format!("{higher} with a higher priority"));
    }
    if older > 0 {
        parts.push(format!("{older} with the same priority created earlier"));
    }
    format!(
        " {} pending migration(s) are ahead of this {} one ({}): {order}.",
        ahead.len(),
        priority_words(me),
        parts.join(" and ")
    )
}

/// One fact per migration ahead in the queue (the first few).
pub(crate) fn ahead_facts(ahead: &[(&VirtualMachineInstanceMigration, Ahead)]) -> Vec<super::Fact> {
    const SHOWN: usize = 6;
    let mut out: Vec<super::Fact> = ahead
        .iter()
        .take(SHOWN)
        .map(|(m, why)| super::Fact {
            object: format!(
                "VirtualMachineInstanceMigration/{}/{}",
                m.namespace(),
                m.name()
            ),
            field: "spec.priority".into(),
            value: m.spec.priority.clone().unwrap_or_else(|| "(unset)".into()),
            note: Some(format!(
                "Pending, ahead in the queue: {}{}",
                match why {
                    Ahead::HigherPriority => "higher priority".to_string(),
                    Ahead::SamePriorityOlder => format!(
                        "same priority, created earlier ({})",
                        created(m).map(|t| t.to_string()).unwrap_or_default()
                    ),
                },
                m.evacuation_node()
                    .map(|n| format!("; evacuates {n}"))
                    .unwrap_or_default()
            )),
        })
        .collect();
    if ahead.len() > SHOWN {
        out.push(super::Fact {
            object: "VirtualMachineInstanceMigration".into(),
            field: "status.phase".into(),
            value: "Pending".into(),
            note: Some(format!(
                "… and {} more ahead in the queue",
                ahead.len() - SHOWN
            )),
        });
    }
    out
}

// ---------------------------------------------------------------- decentralized

fn side_words(s: &Option<SideInfo>) -> Option<String> {
    let s = s.as_ref()?;
    match (&s.node, &s.pod) {
        (Some(n), Some(p)) => Some(format!("{p} on {n}")),
        (Some(n), None) => Some(n.clone()),
        (None, Some(p)) => Some(p.clone()),
        (None, None) => None,
    }
}

/// The in-progress sentence of a decentralized migration in WaitingForSync / Synchronizing.
pub(crate) fn sync_summary(v: &View) -> String {
    let Some(d) = v.decentralized() else {
        return format!(
            "{}: a decentralized migration waiting for its peer (neither spec.sendTo nor spec.receive is set, so vmctl cannot tell which side this is).",
            v.phase
        );
    };
    let id = d
        .migration_id
        .as_deref()
        .map(|i| format!(" (migrationID {i})"))
        .unwrap_or_default();
    let addresses = if d.synchronization_addresses.is_empty() {
        "no synchronization address reported yet".to_string()
    } else {
        format!(
            "this cluster's synchronization address(es): {}",
            d.synchronization_addresses.join(", ")
        )
    };
    let src = side_words(&d.source);
    let tgt = side_words(&d.target);
    match d.role {
        DecentralizedRole::Sender => {
            let peer = d
                .connect_url
                .as_deref()
                .map(|u| format!(" to the peer at {u}"))
                .unwrap_or_default();
            let live = src
                .map(|s| format!(" The guest still runs here, in {s}."))
                .unwrap_or_else(|| " The guest still runs here, on the source side.".into());
            let there = tgt
                .map(|t| format!(" The receiving side reported {t}."))
                .unwrap_or_default();
            format!(
                "{}: the sending side of a decentralized (cross-cluster) migration{id}{peer}; it waits for the receiving cluster's migration with the same migrationID, then streams from here ({addresses}).{live}{there}",
                v.phase
            )
        }
        DecentralizedRole::Receiver => {
            let live = src
                .map(|s| format!(" The guest runs in the other cluster, in {s}."))
                .unwrap_or_else(|| {
                    " The guest runs in the other cluster; nothing runs here yet.".into()
                });
            let here = tgt
                .map(|t| format!(" Its target here is {t}."))
                .unwrap_or_default();
            format!(
                "{}: the receiving side of a decentralized (cross-cluster) migration{id}; it waits for the sending cluster to connect ({addresses}).{live}{here}",
                v.phase
            )
        }
    }
}

/// The condition that blocks a decentralized migration: the VMIM's
/// `decentralizedMigrationBlocked`, else the VMI's `DecentralizedLiveMigrationFailure`.
pub(crate) fn decentralized_block<'a>(v: &View<'a>) -> Option<(&'static str, &'a Condition)> {
    if let Some(c) = v.vmim_condition(COND_DECENTRALIZED_BLOCKED) {
        return Some(("VirtualMachineInstanceMigration", c));
    }
    let decentralized = v.vmim.is_some_and(|m| m.decentralized_role().is_some());
    if !decentralized || v.is_final() {
        return None;
    }
    v.vmi_condition(COND_DECENTRALIZED_FAILURE)
        .filter(|c| c.is_true())
        .map(|c| ("VirtualMachineInstance", c))
}

// ---------------------------------------------------------------- stall detector

/// The stall detector as it applies to this migration: on (gate or recorded settings) and
/// its settings, with where they came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StallDetectorInfo {
    /// Why vmctl takes it as on: the feature gate, or settings in the migration's configuration.
    pub enabled_by: String,
    pub settings: EffectiveStallDetector,
    /// Where the settings were read (`defaults` when none were written).
    pub settings_from: String,
    /// The action that ended (or is ending) the migration, when one can be told:
    /// `post-copy`, `stop-and-copy` or `abort`.
    pub action: Option<String>,
    /// Why vmctl names that action.
    pub action_because: Option<String>,
}

// The factors are finite (non-finite values read as the default), so equality is total.
impl Eq for StallDetectorInfo {}

pub(crate) fn stall_detector(v: &View) -> Option<StallDetectorInfo> {
    let kv = v.ev.kubevirt.as_ref();
    if kv
        .and_then(|k| k.version())
        .and_then(parse_version)
        .is_some_and(|ver| ver < (1, 9))
    {
        return None;
    }
    let recorded = v
        .state
        .and_then(|st| st.migration_configuration.as_ref())
        .and_then(|c| StallDetectorOptions::from_experimental(c.experimental.as_ref()));
    let policy = v
        .policy
        .as_deref()
        .and_then(|name| v.ev.policies.iter().find(|p| p.name() == name))
        .and_then(|p| {
            StallDetectorOptions::from_experimental(p.spec.experimental.as_ref())
                .map(|o| (p.name().to_string(), o))
        });
    let cluster = kv
        .and_then(|k| k.spec.configuration.migrations.as_ref())
        .and_then(|c| StallDetectorOptions::from_experimental(c.experimental.as_ref()));
    let gate = kv.is_some_and(|k| k.feature_gate(GATE_MIGRATION_STALL_DETECTION));
    let (options, from) = match (recorded, policy, cluster) {
        (Some(o), _, _) => (
            o,
            "status.migrationState.migrationConfiguration.experimental.stallDetector".to_string(),
        ),
        (None, Some((name, o)), _) => (
            o,
            format!("MigrationPolicy/{name} spec.experimental.stallDetector"),
        ),
        (None, None, Some(o)) => (
            o,
            "KubeVirt spec.configuration.migrations.experimental.stallDetector".to_string(),
        ),
        (None, None, None) if gate => (
            StallDetectorOptions::default(),
            "defaults (no stallDetector settings written)".to_string(),
        ),
        (None, None, None) => return None,
    };
    let enabled_by = if gate {
        format!("the {GATE_MIGRATION_STALL_DETECTION} feature gate")
    } else {
        format!("stallDetector settings in {from}")
    };
    let settings = options.effective();
    let (action, because) = match stall_action(v, &settings) {
        Some((a, b)) => (Some(a.to_string()), Some(b)),
        None => (None, None),
    };
    Some(StallDetectorInfo {
        enabled_by,
        settings,
        settings_from: from,
        action,
        action_because: because,
    })
}

/// A monitor abort ends within a few seconds of its deadline (400 ms polls, finalisation): here,
/// and in the rules that tell a monitor abort from a requested one (triage/rules/mod.rs).
pub(crate) const MONITOR_SLACK_SECONDS: i64 = 5;

/// Which of the stall detector's actions ended (or is carrying) the migration, read from
/// migrationState.mode, the Paused condition, failureReason and the abort request.
fn stall_action(v: &View, sd: &EffectiveStallDetector) -> Option<(&'static str, String)> {
    let st = v.state?;
    st.start_timestamp.as_ref()?;
    let elapsed = v.elapsed();
    let budget = v.budget.filter(|b| *b > 0).map(|b| b as i64);
    let at = |e: Option<i64>| {
        e.map(|e| format!(" after {}", crate::text::duration(e)))
            .unwrap_or_default()
    };
    let before_budget =
        matches!((elapsed, budget), (Some(e), Some(b)) if e + MONITOR_SLACK_SECONDS < b);
    let paused_by_monitor = v
        .vmi_condition("Paused")
        .is_some_and(|c| c.is_true() && c.reason.as_deref() == Some("PausedByMigrationMonitor"));
    if st.mode == Some(MigrationMode::PostCopy) {
        let why = if before_budget {
            format!(
                "migrationState.mode is PostCopy and the migration {} {} in, before its {} completion budget, so a stall (no progress for stallProgressTimeout {} s) triggered the switch, not the budget",
                if v.end.is_some() { "ended" } else { "is" },
                elapsed.map(crate::text::duration).unwrap_or_default(),
                budget.map(crate::text::duration).unwrap_or_default(),
                sd.stall_progress_timeout
            )
        } else {
            "migrationState.mode is PostCopy, reached at or after the completion budget (the completion-timeout path)".to_string()
        };
        return Some(("post-copy", why));
    }
    let generic_abort = v.failure_reason().is_some_and(|r| {
        s::classify_failure(r) == s::FailureText::GenericAbort && !st.abort_requested
    });
    if st.mode == Some(MigrationMode::Paused) || paused_by_monitor {
        if generic_abort {
            return Some((
                "abort",
                format!(
                    "a stop-and-copy had started (migrationState.mode Paused) but the switchover did not finish within switchoverTimeout ({} s), so the stall detector aborted it{}",
                    sd.switchover_timeout,
                    at(elapsed)
                ),
            ));
        }
        return Some((
            "stop-and-copy",
            "migrationState.mode is Paused: the guest was stopped for the final copy".to_string(),
        ));
    }
    if generic_abort {
        let tail = format!(
            " (failureReason \"{}\", no abort requested)",
            s::ABORTED_V19
        );
        let of_budget = budget
            .map(|b| format!(" of {}", crate::text::duration(b)))
            .unwrap_or_default();
        let why = match (elapsed, budget) {
            (Some(e), Some(b)) if e + MONITOR_SLACK_SECONDS >= b => format!(
                "it reached its {} completion budget, and either it could not finish within completionTimeoutFactor ({}) × the budget or workload disruption was not allowed, so the completion-timeout path aborted it{tail}",
                crate::text::duration(b),
                sd.completion_timeout_factor
            ),
            _ if v.config.allow_workload_disruption => format!(
                "it ended before its completion budget{of_budget}: the copy stalled, the stall detector started a post-copy or stop-and-copy switchover, and the switchover did not complete within switchoverTimeout ({} s){tail}",
                sd.switchover_timeout
            ),
            _ => format!(
                "it ended before its completion budget{of_budget}, so the stall check fired: the remaining memory stayed within {} % of its minimum for stallProgressTimeout ({} s); with allowWorkloadDisruption off neither post-copy nor a hard stop-and-copy was allowed, and the estimated downtime exceeded precopyPossibleFactor ({}) × maxDowntimeMs ({} ms), so it aborted rather than try a soft stop-and-copy{tail}",
                sd.stall_margin,
                sd.stall_progress_timeout,
                sd.precopy_possible_factor,
                v.config.max_downtime_ms
            ),
        };
        return Some(("abort", why));
    }
    None
}

// ---------------------------------------------------------------- target pod timeouts

/// The target pod's deadline (FACTS §6.2): virt-controller deletes a Pending target pod
/// `migrationUnschedulablePodTimeoutSeconds` (300) after its creation when it is
/// unschedulable, `migrationPendingPodTimeoutSeconds` (900) otherwise; both per-VMIM
/// annotations. Measured from the pod's creationTimestamp.
pub(crate) struct PendingDeadline {
    pub timeout: i64,
    /// The annotation that overrode the default, if any.
    pub overridden_by: Option<&'static str>,
    pub deadline: Option<Timestamp>,
}

fn annotation_seconds(v: &View, key: &'static str) -> Option<i64> {
    v.vmim?.annotation(key)?.trim().parse().ok()
}

pub(crate) fn pending_deadline(v: &View, unschedulable: bool) -> PendingDeadline {
    let catch_all = annotation_seconds(v, s::PENDING_TIMEOUT_ANNOTATION);
    let unsched = annotation_seconds(v, s::UNSCHEDULABLE_TIMEOUT_ANNOTATION);
    let catch_all_t = catch_all.unwrap_or(s::PENDING_TIMEOUT_SECONDS);
    let (timeout, overridden_by) = if unschedulable {
        let u = unsched.unwrap_or(s::UNSCHEDULABLE_TIMEOUT_SECONDS);
        // Both checks run on an unschedulable pod: the shorter one fires.
        if catch_all_t < u {
            (
                catch_all_t,
                catch_all.map(|_| s::PENDING_TIMEOUT_ANNOTATION),
            )
        } else {
            (u, unsched.map(|_| s::UNSCHEDULABLE_TIMEOUT_ANNOTATION))
        }
    } else {
        (
            catch_all_t,
            catch_all.map(|_| s::PENDING_TIMEOUT_ANNOTATION),
        )
    };
    let deadline = v
        .target_pod
        .and_then(|p| p.metadata.creation_timestamp.as_ref())
        .and_then(|t| Timestamp::from_second(t.0.as_second() + timeout).ok());
    PendingDeadline {
        timeout,
        overridden_by,
        deadline,
    }
}

/// ` (annotation kubevirt.io/… on the VMIM)` when the timeout is not KubeVirt's default.
pub(crate) fn override_words(d: &PendingDeadline) -> String {
    d.overridden_by
        .map(|a| format!(" (set by the annotation {a} on the migration)"))
        .unwrap_or_default()
}

/// The target pod is Pending (still counted by the timeout check).
pub(crate) fn target_pod_pending(v: &View) -> bool {
    v.target_pod
        .is_some_and(|p| pod_phase(p) == Some("Pending") && p.metadata.deletion_timestamp.is_none())
}

// ---------------------------------------------------------------- rules and texts

use super::Fact;

/// Facts of a decentralized migration: its spec and the synchronization addresses.
pub(crate) fn sync_facts(v: &View) -> Vec<Fact> {
    let Some(m) = v.vmim else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(st) = &m.spec.send_to {
        out.push(v.vmim_fact(
            "spec.sendTo",
            format!(
                "migrationID {}, connectURL {}",
                st.migration_id.as_deref().unwrap_or("?"),
                st.connect_url.as_deref().unwrap_or("?")
            ),
        ));
    }
    if let Some(r) = &m.spec.receive {
        out.push(v.vmim_fact(
            "spec.receive",
            format!("migrationID {}", r.migration_id.as_deref().unwrap_or("?")),
        ));
    }
    if !m.status.synchronization_addresses.is_empty() {
        out.push(v.vmim_fact(
            "status.synchronizationAddresses",
            m.status.synchronization_addresses.join(", "),
        ));
    }
    let st = sides_state(v.vmim, v.vmi, v.state);
    for (name, s) in [
        ("sourceState", st.and_then(|st| st.source_state.as_ref())),
        ("targetState", st.and_then(|st| st.target_state.as_ref())),
    ] {
        if let Some(s) = s {
            let words = [
                s.node.as_ref().map(|n| format!("node {n}")),
                s.pod.as_ref().map(|p| format!("pod {p}")),
                s.sync_address.as_ref().map(|a| format!("syncAddress {a}")),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ");
            if !words.is_empty() {
                out.push(Fact {
                    object: v.vmi_object(),
                    field: format!("status.migrationState.{name}"),
                    value: words,
                    note: None,
                });
            }
        }
    }
    out
}

/// What to check on both sides of a decentralized migration.
pub(crate) fn sync_steps(v: &View) -> Vec<String> {
    let Some(m) = v.vmim else {
        return Vec::new();
    };
    let id = m.decentralized_id().unwrap_or("<migrationID>");
    let mut out = vec![format!(
        "On the peer cluster, find the other side (same migrationID {id}): kubectl get vmim -A -o wide | grep -e {id} -e WaitingForSync -e Synchronizing"
    )];
    if let Some(url) = m
        .spec
        .send_to
        .as_ref()
        .and_then(|s| s.connect_url.as_deref())
    {
        out.push(format!(
            "Check that this cluster reaches the peer's synchronization controller at {url}"
        ));
    }
    if !m.status.synchronization_addresses.is_empty() {
        out.push(format!(
            "Check that the peer reaches this cluster's synchronization address(es): {}",
            m.status.synchronization_addresses.join(", ")
        ));
    }
    out.push(
        "Both clusters need the DecentralizedLiveMigration feature gate: kubectl get kubevirt -A -o jsonpath='{.items[*].spec.configuration.developerConfiguration.featureGates}'"
            .to_string(),
    );
    out
}

/// The stall detector's own words for a monitor abort: (summary, evidence), when it was on
/// and its action was an abort.
pub(crate) fn stall_abort_words(v: &View) -> Option<(String, Vec<Fact>, StallDetectorInfo)> {
    let sd = stall_detector(v)?;
    if sd.action.as_deref() != Some("abort") {
        return None;
    }
    let elapsed = v
        .elapsed()
        .map(crate::text::duration)
        .unwrap_or_else(|| "?".into());
    let because = sd.action_because.clone().unwrap_or_default();
    let summary = format!(
        "The stall detector (KubeVirt v1.9+, on by {}) aborted it after {elapsed}: {because}. (Inferred from status: the stall detector writes its reason only to the source launcher's log.)",
        sd.enabled_by
    );
    let mut facts = Vec::new();
    let (ns, name) = v.kubevirt_ref();
    if v.ev
        .kubevirt
        .as_ref()
        .is_some_and(|k| k.feature_gate(GATE_MIGRATION_STALL_DETECTION))
    {
        facts.push(Fact {
            object: format!("KubeVirt/{ns}/{name}"),
            field: "spec.configuration.developerConfiguration.featureGates".into(),
            value: GATE_MIGRATION_STALL_DETECTION.into(),
            note: Some(
                "listed: the stall detector replaces the legacy progressTimeout check".into(),
            ),
        });
    }
    let (object, field) = if sd.settings_from.starts_with("status.") {
        (
            v.state_owner.clone().unwrap_or_else(|| v.vmim_object()),
            sd.settings_from.clone(),
        )
    } else if let Some(rest) = sd.settings_from.strip_prefix("MigrationPolicy/") {
        let (policy, field) = rest
            .split_once(' ')
            .unwrap_or((rest, "spec.experimental.stallDetector"));
        (format!("MigrationPolicy/{policy}"), field.to_string())
    } else {
        (
            format!("KubeVirt/{ns}/{name}"),
            "spec.configuration.migrations.experimental.stallDetector".to_string(),
        )
    };
    facts.push(Fact {
        object,
        field,
        value: format!(
            "stallProgressTimeout {} s, switchoverTimeout {} s, stallMargin {} %, completionTimeoutFactor {}, precopyPossibleFactor {}",
            sd.settings.stall_progress_timeout,
            sd.settings.switchover_timeout,
            sd.settings.stall_margin,
            sd.settings.completion_timeout_factor,
            sd.settings.precopy_possible_factor
        ),
        note: Some(if sd.settings_from.starts_with("defaults") {
            "not written: KubeVirt's defaults".to_string()
        } else {
            "defaults applied to what is not set".to_string()
        }),
    });
    facts.push(v.config_fact("maxDowntimeMs", v.config.max_downtime_ms.to_string()));
    facts.push(v.config_fact(
        "allowWorkloadDisruption",
        v.config.allow_workload_disruption.to_string(),
    ));
    if let Some(mode) = v.mode() {
        facts.push(v.state_fact("mode", mode.as_str()));
    }
    Some((summary, facts, sd))
}

/// Where the stall detector's own reason is: the source launcher's log
/// (`pkg/virt-launcher/virtwrap/live-migration-source.go`: `aborting migration: <reason>`
/// (Warning), `aborting migration due to completion timeout: …`, `starting post copy mode for
/// migration: …`, `forcing switchover by setting max downtime …`, `max downtime set to …`;
/// reasons from `stall-detector.go` `decideAction`), and whether it ran at all: when libvirt's
/// iteration callback cannot be registered the launcher logs `failed to register migration
/// iteration callback, falling back to legacy stall handling` and the legacy
/// progressTimeout/completion checks decide instead. vmctl reads no logs: the step says how.
pub(crate) fn stall_log_step(v: &View) -> String {
    let pod = v
        .source_pod_name
        .as_deref()
        .or_else(|| v.log_pod().map(pod_name))
        .unwrap_or("<source launcher pod>");
    format!(
        "Read the stall detector's reason in the source launcher's log: kubectl logs -n {} {pod} -c compute | grep -E '{}|{}|{}|{}|{}' — if it says \"{}\", the stall detector did not run and the legacy progressTimeout/completion checks decided",
        v.namespace(),
        s::STALL_LOG_ABORT,
        s::STALL_LOG_POSTCOPY,
        s::STALL_LOG_HARD_SWITCHOVER,
        s::STALL_LOG_SOFT_SWITCHOVER,
        s::STALL_LOG_FALLBACK,
        s::STALL_LOG_FALLBACK
    )
}

/// While a pre-copy streams with the stall detector on: what it will do on a stall and at
/// the completion budget, from the effective configuration (FACTS §5.4).
fn stall_prediction(v: &View, sd: &StallDetectorInfo) -> Option<String> {
    let streaming = !v.is_final()
        && v.start.is_some()
        && v.end.is_none()
        && matches!(v.mode(), None | Some(MigrationMode::PreCopy));
    if !streaming {
        return None;
    }
    let c = &v.config;
    let on_stall = if c.allow_workload_disruption && c.allow_post_copy {
        "switch to post-copy (no VFIO devices) or else a hard stop-and-copy".to_string()
    } else if c.allow_workload_disruption {
        "a hard stop-and-copy (max downtime 2,000,000 ms: the guest pauses until the rest is copied)".to_string()
    } else {
        format!(
            "a soft stop-and-copy if the estimated downtime is within {} × maxDowntimeMs ({} ms), else abort it",
            sd.settings.precopy_possible_factor, c.max_downtime_ms
        )
    };
    let budget = v
        .budget
        .filter(|b| *b > 0)
        .map(|b| {
            format!(
                " At its {} completion budget it switches over if the projection fits in {} × the budget and workload disruption is allowed, otherwise it aborts.",
                crate::text::duration(b as i64),
                sd.settings.completion_timeout_factor
            )
        })
        .unwrap_or_default();
    Some(format!(
        "The stall detector is on ({}): if the remaining memory stops shrinking for stallProgressTimeout ({} s), it will end this pre-copy with {on_stall}; a switchover must complete within switchoverTimeout ({} s).{budget} (The legacy progressTimeout does not apply.)",
        sd.enabled_by, sd.settings.stall_progress_timeout, sd.settings.switchover_timeout
    ))
}

/// A line for the attention list: the stall detector's action, when one can be told.
pub(crate) fn stall_attention(v: &View) -> Option<String> {
    let sd = stall_detector(v)?;
    let Some(action) = sd.action.as_deref() else {
        return stall_prediction(v, &sd);
    };
    let what = match action {
        "post-copy" => "switched the migration to post-copy",
        "stop-and-copy" => "stopped the guest for a final stop-and-copy",
        // An abort is the diagnosis itself: not-converging / no-progress say it.
        _ => return None,
    };
    Some(format!(
        "The stall detector (on by {}) {what}: {}.",
        sd.enabled_by,
        sd.action_because.as_deref().unwrap_or("")
    ))
}

// ---------------------------------------------------------------- timeline deadlines

/// The deadlines KubeVirt applies to this migration, as timeline steps: the target pod's
/// pending timeout (while it is Pending) and the end of a migration backoff. Future ones
/// are marked as expected.
pub(crate) fn timeline_deadlines(v: &View) -> Vec<super::TimelineEntry> {
    let mut out = Vec::new();
    let mut push = |at: Timestamp, object: String, what: String, source: &str| {
        let what = if at.as_second() > v.now.as_second() {
            format!("{what} (expected)")
        } else {
            what
        };
        out.push(super::TimelineEntry {
            time: String::new(),
            at,
            object,
            what,
            detail: None,
            count: None,
            last_time: None,
            source: source.to_string(),
            offset_seconds: 0,
            since_previous_seconds: None,
        });
    };
    if !v.is_final() && v.start.is_none() && target_pod_pending(v) {
        let unschedulable = v
            .target_pod
            .and_then(|p| pod_condition(p, "PodScheduled"))
            .is_some_and(|c| c.status == "False" && c.reason == Some("Unschedulable"));
        let d = pending_deadline(v, unschedulable);
        if let (Some(at), Some(p)) = (d.deadline, v.target_pod) {
            push(
                at,
                format!("pod/{}", pod_name(p)),
                format!(
                    "{} target pod timeout: {} after creation, KubeVirt deletes it",
                    if unschedulable {
                        "unschedulable"
                    } else {
                        "pending"
                    },
                    crate::text::duration(d.timeout)
                ),
                "computed: target pod creationTimestamp + timeout (FACTS §6.2)",
            );
        }
    }
    if matches!(v.phase, MigrationPhase::Pending | MigrationPhase::Unset)
        && let Some(m) = v.vmim
        && let Some(b) = super::history::backoff(&v.ev.migrations, m)
        && b.until.as_second() > b.previous_failed.as_second()
        && v.created
            .is_none_or(|c| b.until.as_second() >= c.as_second())
    {
        push(
            b.until,
            format!("vmim/{}", m.name()),
            format!(
                "backoff of {} ends: the next attempt can start",
                crate::text::duration(b.seconds)
            ),
            "computed: Failed transition of the previous migration + backoff (FACTS §2.2)",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{Evidence, MigrationLoad, diagnose};
    use super::*;
    use crate::model::{KubeVirt, Pod, VirtualMachineInstance};

    const NOW: &str = "2026-12-01T12:00:00Z";

    fn vmim(v: serde_json::Value) -> VirtualMachineInstanceMigration {
        serde_json::from_value(v).unwrap()
    }

    fn pending(
        name: &str,
        created: &str,
        priority: Option<&str>,
    ) -> VirtualMachineInstanceMigration {
        let mut spec = json!({"vmiName": name});
        if let Some(p) = priority {
            spec["priority"] = json!(p);
        }
        vmim(json!({
            "metadata": {"name": name, "namespace": "ns", "uid": format!("u-{name}"),
                         "creationTimestamp": created},
            "spec": spec,
            "status": {"phase": "Pending"}
        }))
    }

    fn kubevirt(version: &str, gates: &[&str]) -> KubeVirt {
        serde_json::from_value(json!({
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": {"developerConfiguration": {"featureGates": gates}}},
            "status": {"observedKubeVirtVersion": version}
        }))
        .unwrap()
    }

    fn evidence(
        m: VirtualMachineInstanceMigration,
        vmi: serde_json::Value,
        pods: Vec<Pod>,
        kv: Option<KubeVirt>,
    ) -> Evidence {
        let vmi: VirtualMachineInstance = serde_json::from_value(vmi).unwrap();
        Evidence {
            now: NOW.parse().unwrap(),
            migration: Some(m.clone()),
            vmi_namespace: "ns".into(),
            vmi_name: vmi.name().to_string(),
            vmi: Some(vmi),
            migrations: vec![m],
            pods,
            events: Vec::new(),
            kubevirt: kv,
            policies: Vec::new(),
            namespace: None,
            load: None,
            unread: Vec::new(),
            pdbs: Vec::new(),
            loops: Default::default(),
        }
    }

    fn running_vmi(name: &str, state: serde_json::Value) -> serde_json::Value {
        json!({
            "metadata": {"name": name, "namespace": "ns", "uid": format!("vmi-{name}"),
                         "labels": {"kubevirt.io/nodeName": "node-1"}},
            "spec": {"domain": {"memory": {"guest": "4Gi"}}},
            "status": {"phase": "Running", "nodeName": "node-1",
                       "conditions": [{"type": "LiveMigratable", "status": "True"}],
                       "migrationState": state}
        })
    }

    #[test]
    fn the_queue_serves_higher_priority_then_older() {
        let me = pending("me", "2026-12-01T11:50:00Z", Some("user-triggered"));
        let others = [
            pending("crit-late", "2026-12-01T11:55:00Z", Some("system-critical")),
            pending("user-early", "2026-12-01T11:40:00Z", Some("user-triggered")),
            pending("user-late", "2026-12-01T11:51:00Z", Some("user-triggered")),
            pending(
                "maint-early",
                "2026-12-01T11:00:00Z",
                Some("system-maintenance"),
            ),
            pending("none-early", "2026-12-01T11:00:00Z", None),
            me.clone(),
        ];
        let ahead = ahead_of(&me, others.iter(), true);
        let names: Vec<(&str, Ahead)> = ahead.iter().map(|(m, a)| (m.name(), *a)).collect();
        assert_eq!(
            names,
            [
                ("crit-late", Ahead::HigherPriority),
                ("user-early", Ahead::SamePriorityOlder)
            ]
        );
        // Without the priority queue (≤v1.8, no gate) only age counts.
        let fifo = ahead_of(&me, others.iter(), false);
        let names: Vec<&str> = fifo.iter().map(|(m, _)| m.name()).collect();
        assert_eq!(names, ["maint-early", "none-early", "user-early"]);
        let words = queue_sentence(&me, &ahead, true);
        assert!(
            words.contains("2 pending migration(s) are ahead of this user-triggered (50) one"),
            "{words}"
        );
        assert!(queue_sentence(&me, &[], true).contains("first in line"));
    }

    #[test]
    fn the_priority_queue_is_off_before_v19_without_its_gate() {
        let m = pending("me", "2026-12-01T11:50:00Z", Some("user-triggered"));
        let vmi = running_vmi("me", json!({}));
        for (kv, on) in [
            (Some(kubevirt("v1.8.4", &[])), false),
            (Some(kubevirt("v1.8.4", &["MigrationPriorityQueue"])), true),
            (Some(kubevirt("v1.9.0", &[])), true),
            (None, true),
        ] {
            let e = evidence(m.clone(), vmi.clone(), Vec::new(), kv);
            let view = View::new(&e);
            assert_eq!(priority_queue_active(&view), on);
        }
    }

    #[test]
    fn pending_timeouts_honour_both_annotations_and_count_from_creation() {
        let m = vmim(json!({
            "metadata": {"name": "m", "namespace": "ns", "uid": "u-m",
                         "creationTimestamp": "2026-12-01T11:50:00Z",
                         "annotations": {"kubevirt.io/migrationUnschedulablePodTimeoutSeconds": "120",
                                         "kubevirt.io/migrationPendingPodTimeoutSeconds": "60"}},
            "spec": {"vmiName": "a"},
            "status": {"phase": "Scheduling"}
        }));
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "tgt", "namespace": "ns", "creationTimestamp": "2026-12-01T11:58:00Z",
                         "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/migrationJobUID": "u-m",
                                    "kubevirt.io/created-by": "vmi-a"}},
            "status": {"phase": "Pending"}
        }))
        .unwrap();
        let e = evidence(m, running_vmi("a", json!({})), vec![pod], None);
        let view = View::new(&e);
        // Unschedulable: the shorter of the two fires (both checks run).
        let d = pending_deadline(&view, true);
        assert_eq!(d.timeout, 60);
        assert_eq!(d.overridden_by, Some(s::PENDING_TIMEOUT_ANNOTATION));
        assert_eq!(d.deadline.unwrap().to_string(), "2026-12-01T11:59:00Z");
        assert!(target_pod_pending(&view));
        // Garbage in an annotation reads as the default.
        let m = vmim(json!({
            "metadata": {"name": "m", "namespace": "ns", "uid": "u-m",
                         "annotations": {"kubevirt.io/migrationUnschedulablePodTimeoutSeconds": "soon"}},
            "spec": {"vmiName": "a"}, "status": {"phase": "Scheduling"}
        }));
        let e = evidence(m, running_vmi("a", json!({})), Vec::new(), None);
        let view = View::new(&e);
        let d = pending_deadline(&view, true);
        assert_eq!((d.timeout, d.overridden_by, d.deadline), (300, None, None));
        assert_eq!(pending_deadline(&view, false).timeout, 900);
    }

    fn streamed(
        uid: &str,
        mode: &str,
        seconds: i64,
        reason: Option<&str>,
        config: serde_json::Value,
    ) -> serde_json::Value {
        let start: Timestamp = "2026-12-01T11:40:00Z".parse().unwrap();
        let end = Timestamp::from_second(start.as_second() + seconds).unwrap();
        let mut st = json!({
            "migrationUid": uid, "sourceNode": "node-1", "targetNode": "node-2",
            "startTimestamp": start.to_string(), "endTimestamp": end.to_string(),
            "completed": true, "failed": reason.is_some(), "mode": mode,
            "migrationConfiguration": config
        });
        if let Some(r) = reason {
            st["failureReason"] = json!(r);
            st["abortStatus"] = json!("Succeeded");
        }
        st
    }

    fn final_vmim(phase: &str) -> VirtualMachineInstanceMigration {
        vmim(json!({
            "metadata": {"name": "m", "namespace": "ns", "uid": "u-m",
                         "creationTimestamp": "2026-12-01T11:39:50Z"},
            "spec": {"vmiName": "a"},
            "status": {"phase": phase}
        }))
    }

    #[test]
    fn the_stall_detector_is_on_by_gate_or_recorded_settings_and_never_before_v19() {
        let cfg = json!({"completionTimeoutPerGiB": 150});
        let vmi = running_vmi(
            "a",
            streamed(
                "u-m",
                "PreCopy",
                95,
                Some("Live migration has been aborted"),
                cfg.clone(),
            ),
        );
        // Gate on, v1.10: a stall abort before the 750 s budget.
        let e = evidence(
            final_vmim("Failed"),
            vmi.clone(),
            Vec::new(),
            Some(kubevirt("v1.10.0", &["MigrationStallDetection"])),
        );
        let d = diagnose(&e);
        assert_eq!((d.cause.id, d.inferred), ("no-progress", true));
        assert!(
            d.summary.contains("stallProgressTimeout (40 s)"),
            "{}",
            d.summary
        );
        let sd = d
            .migration
            .as_ref()
            .unwrap()
            .stall_detector
            .as_ref()
            .unwrap();
        assert_eq!(sd.action.as_deref(), Some("abort"));
        // Gate off: the legacy monitor's progressTimeout explains it.
        let e = evidence(
            final_vmim("Failed"),
            vmi.clone(),
            Vec::new(),
            Some(kubevirt("v1.10.0", &[])),
        );
        let d = diagnose(&e);
        assert_eq!(d.cause.id, "no-progress");
        assert!(
            d.summary.contains("progressTimeout (150 s)"),
            "{}",
            d.summary
        );
        assert!(d.migration.as_ref().unwrap().stall_detector.is_none());
        // A v1.8 cluster has no stall detector, whatever its CR lists.
        let e = evidence(
            final_vmim("Failed"),
            vmi,
            Vec::new(),
            Some(kubevirt("v1.8.4", &["MigrationStallDetection"])),
        );
        assert!(diagnose(&e).migration.unwrap().stall_detector.is_none());
        // Recorded settings turn it on without the gate, and their values are used.
        let cfg = json!({"completionTimeoutPerGiB": 150, "allowPostCopy": true,
                         "experimental": {"stallDetector": {"stallProgressTimeout": 25}}});
        let vmi = running_vmi("a", streamed("u-m", "PostCopy", 120, None, cfg));
        let e = evidence(final_vmim("Succeeded"), vmi, Vec::new(), None);
        let d = diagnose(&e);
        assert_eq!(d.cause.id, "succeeded");
        let sd = d
            .migration
            .as_ref()
            .unwrap()
            .stall_detector
            .clone()
            .unwrap();
        assert_eq!(sd.action.as_deref(), Some("post-copy"));
        assert_eq!(sd.settings.stall_progress_timeout, 25);
        assert!(
            d.attention
                .iter()
                .any(|a| a.contains("switched the migration to post-copy"))
        );
    }

    #[test]
    fn a_streaming_pre_copy_is_told_what_the_stall_detector_will_do() {
        let m = vmim(json!({
            "metadata": {"name": "m", "namespace": "ns", "uid": "u-m",
                         "creationTimestamp": "2026-12-01T11:58:00Z"},
            "spec": {"vmiName": "a"},
            "status": {"phase": "Running"}
        }));
        let state = json!({"migrationUid": "u-m", "sourceNode": "node-1", "targetNode": "node-2",
                           "startTimestamp": "2026-12-01T11:58:10Z", "mode": "PreCopy",
                           "migrationNetworkType": "Migration", "targetMemoryOverhead": "300Mi",
                           "migrationConfiguration": {"completionTimeoutPerGiB": 150, "maxDowntimeMs": 500}});
        let e = evidence(
            m.clone(),
            running_vmi("a", state.clone()),
            Vec::new(),
            Some(kubevirt("v1.9.0", &["MigrationStallDetection"])),
        );
        let d = diagnose(&e);
        assert_eq!(d.cause.id, "in-progress");
        let line = d
            .attention
            .iter()
            .find(|a| a.starts_with("The stall detector is on"))
            .unwrap();
        assert!(line.contains("soft stop-and-copy if the estimated downtime is within 1.5 × maxDowntimeMs (500 ms), else abort it"), "{line}");
        assert!(line.contains("12m30s completion budget"), "{line}");
        let info = d.migration.unwrap();
        assert_eq!(info.network_type.as_deref(), Some("Migration"));
        assert_eq!(info.target_memory_overhead.as_deref(), Some("300Mi"));
        // Workload disruption and post-copy allowed: post-copy on a stall.
        let mut state = state;
        state["migrationConfiguration"]["allowPostCopy"] = json!(true);
        let e = evidence(
            m,
            running_vmi("a", state),
            Vec::new(),
            Some(kubevirt("v1.9.0", &["MigrationStallDetection"])),
        );
        let d = diagnose(&e);
        assert!(
            d.attention
                .iter()
                .any(|a| a.contains("switch to post-copy")),
            "{:?}",
            d.attention
        );
    }

    #[test]
    fn another_migrations_sides_are_not_shown_as_this_ones() {
        let m = vmim(json!({
            "metadata": {"name": "send", "namespace": "ns", "uid": "u-new", "creationTimestamp": "2026-12-01T11:59:00Z"},
            "spec": {"vmiName": "a", "sendTo": {"migrationID": "x", "connectURL": "peer:9185"}},
            "status": {"phase": "Synchronizing"}
        }));
        let stale = json!({"migrationUid": "u-old", "completed": true,
            "sourceState": {"node": "old-src", "migrationUID": "u-old"},
            "targetState": {"node": "old-dst", "migrationUID": "u-old-peer"}});
        let e = evidence(m, running_vmi("a", stale), Vec::new(), None);
        let d = diagnose(&e);
        let info = d.migration.unwrap();
        let dec = info.decentralized.unwrap();
        assert!(dec.source.is_none() && dec.target.is_none(), "{dec:?}");
        assert_eq!(
            info.source_node.as_deref(),
            Some("node-1"),
            "the sender's own node"
        );
        assert_eq!(info.target_node, None);
        assert!(!d.summary.contains("old-"), "{}", d.summary);
    }

    fn evac(
        name: &str,
        phase: &str,
        created: &str,
        failed: Option<&str>,
    ) -> VirtualMachineInstanceMigration {
        let mut transitions =
            vec![json!({"phase": "Pending", "phaseTransitionTimestamp": created})];
        if let Some(f) = failed {
            transitions.push(json!({"phase": "Failed", "phaseTransitionTimestamp": f}));
        }
        vmim(json!({
            "metadata": {"name": name, "namespace": "ns", "uid": format!("u-{name}"),
                         "creationTimestamp": created,
                         "annotations": {"kubevirt.io/evacuationMigration": "node-1"}},
            "spec": {"vmiName": "a", "priority": "system-critical"},
            "status": {"phase": phase, "phaseTransitionTimestamps": transitions}
        }))
    }

    #[test]
    fn a_backoff_that_ended_is_not_the_reason_any_more() {
        let first = evac(
            "e1",
            "Failed",
            "2026-12-01T11:50:00Z",
            Some("2026-12-01T11:51:00Z"),
        );
        let now_pending = evac("e2", "Pending", "2026-12-01T11:51:05Z", None);
        let backoff_event: crate::model::Event = serde_json::from_value(json!({
            "metadata": {"name": "ev", "namespace": "ns"},
            "involvedObject": {"kind": "VirtualMachineInstance", "name": "a", "namespace": "ns", "uid": "vmi-a"},
            "reason": "MigrationBackoff", "message": "backoff migrating vmi ns/a", "type": "Warning",
            "firstTimestamp": "2026-12-01T11:51:06Z", "lastTimestamp": "2026-12-01T11:51:19Z", "count": 3
        }))
        .unwrap();
        let mut e = evidence(now_pending, running_vmi("a", json!({})), Vec::new(), None);
        e.migrations.push(first);
        e.events = vec![backoff_event.clone()];
        // 20 s after 11:51:00 ended at 11:51:20; at 12:00 the backoff is not the reason.
        assert_ne!(diagnose(&e).cause, "migration-backoff");
        // A MigrationBackoff event after the computed end is believed.
        let mut late = backoff_event;
        late.last_timestamp = Some(crate::model::Time("2026-12-01T11:59:50Z".parse().unwrap()));
        e.events = vec![late];
        assert_eq!(diagnose(&e).cause, "migration-backoff");
    }

    #[test]
    fn a_stop_and_copy_then_abort_is_a_switchover_timeout() {
        let cfg = json!({"completionTimeoutPerGiB": 150, "allowWorkloadDisruption": true});
        let vmi = running_vmi(
            "a",
            streamed(
                "u-m",
                "Paused",
                200,
                Some("Live migration has been aborted"),
                cfg,
            ),
        );
        let e = evidence(
            final_vmim("Failed"),
            vmi,
            Vec::new(),
            Some(kubevirt("v1.10.0", &["MigrationStallDetection"])),
        );
        let d = diagnose(&e);
        assert_eq!(d.cause.id, "not-converging");
        assert!(
            d.summary.contains("switchoverTimeout (60 s)"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn the_budget_path_abort_is_told_apart_from_a_stall() {
        // 4Gi guest: 5 GB × 150 s = 750 s; aborted at 752 s.
        let cfg = json!({"completionTimeoutPerGiB": 150});
        let vmi = running_vmi(
            "a",
            streamed(
                "u-m",
                "PreCopy",
                752,
                Some("Live migration has been aborted"),
                cfg,
            ),
        );
        let e = evidence(
            final_vmim("Failed"),
            vmi,
            Vec::new(),
            Some(kubevirt("v1.10.0", &["MigrationStallDetection"])),
        );
        let d = diagnose(&e);
        assert_eq!(d.cause.id, "not-converging");
        assert!(
            d.summary.contains("completion-timeout path"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn a_stale_decentralized_failure_on_the_vmi_does_not_block_an_ordinary_migration() {
        let m = vmim(json!({
            "metadata": {"name": "m", "namespace": "ns", "uid": "u-m", "creationTimestamp": "2026-12-01T11:59:00Z"},
            "spec": {"vmiName": "a"},
            "status": {"phase": "Pending"}
        }));
        let mut vmi = running_vmi("a", json!({}));
        vmi["status"]["conditions"] = json!([
            {"type": "LiveMigratable", "status": "True"},
            {"type": "DecentralizedLiveMigrationFailure", "status": "True", "reason": "X", "message": "old"}
        ]);
        let mut e = evidence(m, vmi.clone(), Vec::new(), None);
        e.load = Some(MigrationLoad::default());
        assert_ne!(diagnose(&e).cause, "decentralized-migration-blocked");
        // On a decentralized sender it blocks.
        let m = vmim(json!({
            "metadata": {"name": "m", "namespace": "ns", "uid": "u-m", "creationTimestamp": "2026-12-01T11:59:00Z"},
            "spec": {"vmiName": "a", "sendTo": {"migrationID": "x", "connectURL": "peer:9185"}},
            "status": {"phase": "Synchronizing"}
        }));
        let e = evidence(m, vmi, Vec::new(), None);
        let d = diagnose(&e);
        assert_eq!(d.cause.id, "decentralized-migration-blocked");
        assert!(
            d.summary.contains("X: old") && d.summary.contains("peer peer:9185"),
            "{}",
            d.summary
        );
    }
}
