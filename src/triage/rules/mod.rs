//! The rule catalogue. Each rule is one declaration in its own file (`rules/<rule>.rs`; the
//! migration monitor's two aborts share `monitor_abort.rs`): its [`Cause`] (the stable id,
//! part of the JSON contract, and the plane), the fields it reads, its advice, and the check
//! that decides it, directly below. This file holds only the order: rules are tried as
//! [`CATALOGUE`] lists them and the first that matches decides (specific, status-backed
//! causes before inferred ones; `unknown` always matches last), and the helpers the checks
//! share.

use super::kubevirt19 as kv19;
use super::objects::*;
use super::strings::{self as s, FailureText, classify_failure};
use super::view::{View, history_hint};
use super::{Cause, Fact, Outcome, Plane};
use crate::model::Quantity;
use crate::model::vmi::{AbortStatus, MigrationMode, VmiPhase};
use crate::model::vmim::MigrationPhase;
use crate::text as fmt;

pub(super) mod abort_failed;
pub(super) mod aborted_by_request;
pub(super) mod another_migration_in_progress;
pub(super) mod backend_storage_handoff_stuck;
pub(super) mod blocked_by_backup;
pub(super) mod blocked_by_utility_volumes;
pub(super) mod connection_failure;
pub(super) mod cpu_feature_mismatch;
pub(super) mod decentralized_migration_blocked;
pub(super) mod decentralized_sync_stuck;
pub(super) mod destination_volume_too_small;
pub(super) mod device_state_incompatible;
pub(super) mod evacuation_loop;
pub(super) mod in_progress;
pub(super) mod libvirt_error;
pub(super) mod migration_backoff;
pub(super) mod monitor_abort;
pub(super) mod no_migration;
pub(super) mod no_node_for_cpu_model;
pub(super) mod not_live_migratable;
pub(super) mod pdb_blocks_eviction;
pub(super) mod postcopy_failed;
pub(super) mod postcopy_unsupported;
pub(super) mod queued_parallel_limit;
pub(super) mod resource_quota_exceeded;
pub(super) mod storage_io_error;
pub(super) mod succeeded;
pub(super) mod target_domain_not_seen;
pub(super) mod target_on_source_node;
pub(super) mod target_pod_create_failed;
pub(super) mod target_pod_lost;
pub(super) mod target_pod_not_ready;
pub(super) mod target_pod_unschedulable;
pub(super) mod target_preparation_failed;
pub(super) mod unknown;
pub(super) mod unsafe_migration;
pub(super) mod vmi_stopped_during_migration;

use monitor_abort::*;
pub(crate) use target_pod_create_failed::create_failed_finding;
use unknown::*;

/// A monitor abort ends within a few seconds of the budget (400 ms polls plus finalisation):
/// the monitor's check in monitor_abort.rs, and a VMIM deleted within it in
/// aborted_by_request.rs (that deletion is clean-up, not a request).
pub(super) const BUDGET_SLACK_SECONDS: i64 = crate::triage::kubevirt19::MONITOR_SLACK_SECONDS;

/// A catalogue entry: the cause it names, what it reads, its advice and its check, declared
/// together in the rule's own file.
pub struct Rule {
    /// The stable id (the `cause` of a diagnosis) and the plane.
    pub cause: Cause,
    /// The fields the rule reads, as `Kind field.path`.
    pub reads: &'static [&'static str],
    /// What to do, in general; a diagnosis adds concrete commands.
    pub advice: &'static str,
    /// A match on a migration that is not final means it cannot go on by itself.
    pub blocks: bool,
    pub(crate) check: fn(&View) -> Option<Finding>,
}

/// What a rule found.
#[derive(Default)]
pub(crate) struct Finding {
    pub summary: String,
    pub evidence: Vec<Fact>,
    pub next_steps: Vec<String>,
    pub inferred: bool,
    /// Overrides the outcome derived from the phase (post-copy loss before the VMIM says so).
    pub outcome: Option<Outcome>,
}

/// Tries the rules in order.
pub(crate) fn decide(view: &View) -> (&'static Rule, Finding) {
    for rule in CATALOGUE {
        if let Some(finding) = (rule.check)(view) {
            return (rule, finding);
        }
    }
    // `unknown` matches everything, so this is only reached if the catalogue is edited badly.
    (&UNKNOWN, unknown(view).unwrap_or_default())
}

pub(crate) fn outcome(view: &View, rule: &Rule, finding: &Finding) -> Outcome {
    if let Some(o) = finding.outcome {
        return o;
    }
    if !view.has_migration() {
        return if rule.blocks {
            Outcome::Blocked
        } else {
            Outcome::NoMigration
        };
    }
    match view.phase {
        MigrationPhase::Succeeded => Outcome::Succeeded,
        MigrationPhase::Failed => Outcome::Failed,
        _ if rule.blocks => Outcome::Blocked,
        _ => Outcome::InProgress,
    }
}

/// Looks a rule up by id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    CATALOGUE.iter().find(|r| r.cause.id == id)
}

/// The catalogue, in the order the rules are tried.
pub static CATALOGUE: &[Rule] = &[
    target_domain_not_seen::TARGET_DOMAIN_NOT_SEEN,
    succeeded::SUCCEEDED,
    backend_storage_handoff_stuck::BACKEND_STORAGE_HANDOFF,
    evacuation_loop::EVACUATION_LOOP,
    postcopy_failed::POSTCOPY_FAILED,
    abort_failed::ABORT_FAILED,
    aborted_by_request::ABORTED_BY_REQUEST,
    postcopy_unsupported::POSTCOPY_UNSUPPORTED,
    decentralized_migration_blocked::DECENTRALIZED_BLOCKED,
    decentralized_sync_stuck::DECENTRALIZED_SYNC_STUCK,
    blocked_by_utility_volumes::BLOCKED_BY_UTILITY_VOLUMES,
    blocked_by_backup::BLOCKED_BY_BACKUP,
    resource_quota_exceeded::RESOURCE_QUOTA_EXCEEDED,
    target_pod_create_failed::TARGET_POD_CREATE_FAILED,
    no_node_for_cpu_model::NO_NODE_FOR_CPU_MODEL,
    target_pod_unschedulable::TARGET_POD_UNSCHEDULABLE,
    target_pod_not_ready::TARGET_POD_NOT_READY,
    target_on_source_node::TARGET_ON_SOURCE_NODE,
    target_pod_lost::TARGET_POD_LOST,
    target_preparation_failed::TARGET_PREPARATION_FAILED,
    vmi_stopped_during_migration::VMI_STOPPED_DURING_MIGRATION,
    another_migration_in_progress::ANOTHER_MIGRATION_IN_PROGRESS,
    not_live_migratable::NOT_LIVE_MIGRATABLE,
    migration_backoff::MIGRATION_BACKOFF,
    queued_parallel_limit::QUEUED_PARALLEL_LIMIT,
    destination_volume_too_small::DESTINATION_VOLUME_TOO_SMALL,
    // libvirt and QEMU signatures in failureReason, before the generic connection and
    // libvirt-error rules (a device-state refusal can also read like a broken stream).
    cpu_feature_mismatch::CPU_FEATURE_MISMATCH,
    device_state_incompatible::DEVICE_STATE_INCOMPATIBLE,
    unsafe_migration::UNSAFE_MIGRATION,
    storage_io_error::STORAGE_IO_ERROR,
    monitor_abort::NOT_CONVERGING,
    monitor_abort::NO_PROGRESS,
    connection_failure::CONNECTION_FAILURE,
    libvirt_error::LIBVIRT_ERROR,
    in_progress::IN_PROGRESS,
    pdb_blocks_eviction::PDB_BLOCKS_EVICTION,
    no_migration::NO_MIGRATION,
    UNKNOWN,
];

// ---------------------------------------------------------------- helpers

pub(super) fn dur(seconds: i64) -> String {
    fmt::duration(seconds)
}

pub(super) fn or_q(s: Option<&str>) -> &str {
    s.unwrap_or("?")
}

pub(super) fn src_node<'a>(v: &'a View) -> &'a str {
    v.state
        .and_then(|st| st.source_node.as_deref())
        .or_else(|| v.source_pod.and_then(pod_node))
        .or_else(|| v.vmi.and_then(|x| x.status.node_name.as_deref()))
        .unwrap_or("the source node")
}

pub(super) fn tgt_node<'a>(v: &'a View) -> &'a str {
    v.state
        .and_then(|st| st.target_node.as_deref())
        .or_else(|| v.target_pod.and_then(pod_node))
        .unwrap_or("the target node")
}

pub(super) fn retry_step(v: &View) -> String {
    match v.vmi.and_then(|x| x.owner_vm()) {
        Some(vm) => format!(
            "Retry when fixed: virtctl migrate {vm} -n {}",
            v.namespace()
        ),
        None => format!(
            "Retry when fixed: create a VirtualMachineInstanceMigration with spec.vmiName: {} in {} (bare VMI: virtctl migrate needs a VM)",
            v.vmi_name(),
            v.namespace()
        ),
    }
}

pub(super) fn failure_fact(v: &View) -> Option<Fact> {
    v.failure_reason()
        .map(|r| v.state_fact("failureReason", r.to_string()))
}

/// The not-yet-streamed phases in which target-pod problems can block a migration.
pub(super) fn before_streaming(v: &View) -> bool {
    v.start.is_none()
}

/// Seconds left until `deadline`, as words.
pub(super) fn until(v: &View, deadline_second: i64) -> String {
    let left = deadline_second - v.now.as_second();
    if left > 0 {
        format!("in {}", dur(left))
    } else {
        format!("{} ago", dur(-left))
    }
}

pub(super) fn ts_string(second: i64) -> String {
    k8s_openapi::jiff::Timestamp::from_second(second)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| second.to_string())
}

/// True when the pod has containers and every one of them has terminated (kubectl shows it as
/// Completed) whatever its phase says.
pub(crate) fn all_containers_exited(p: &crate::model::Pod) -> bool {
    let Some(statuses) = p
        .status
        .as_ref()
        .and_then(|st| st.container_statuses.as_ref())
    else {
        return false;
    };
    !statuses.is_empty()
        && statuses
            .iter()
            .all(|c| c.state.as_ref().is_some_and(|st| st.terminated.is_some()))
}

/// The newest (by last occurrence) of `events` with this reason.
pub(super) fn newest_with_reason<'a>(
    events: impl Iterator<Item = &'a crate::model::Event>,
    reason: &str,
) -> Option<&'a crate::model::Event> {
    events
        .filter(|e| event_reason(e) == reason)
        .max_by_key(|e| event_last(e))
}

impl Finding {
    /// A finding that rests on `event` (its first fact) when there is one, and is inferred
    /// otherwise.
    pub(super) fn on_event(v: &View, event: Option<&crate::model::Event>) -> Finding {
        Finding {
            inferred: event.is_none(),
            evidence: event.map(|e| v.event_fact(e)).into_iter().collect(),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_issue_cause_is_catalogued() {
        let mut ids: Vec<&str> = CATALOGUE.iter().map(|r| r.cause.id).collect();
        ids.sort();
        let before = ids.len();
        ids.dedup();
        assert_eq!(before, ids.len(), "duplicate rule ids");
        for id in [
            "target-pod-unschedulable",
            "target-pod-not-ready",
            "target-pod-create-failed",
            "resource-quota-exceeded",
            "no-node-for-cpu-model",
            "blocked-by-utility-volumes",
            "blocked-by-backup",
            "not-live-migratable",
            "queued-parallel-limit",
            "another-migration-in-progress",
            "target-pod-lost",
            "vmi-stopped-during-migration",
            "migration-backoff",
            "evacuation-loop",
            "decentralized-sync-stuck",
            "backend-storage-handoff-stuck",
            "not-converging",
            "no-progress",
            "postcopy-failed",
            "connection-failure",
            "target-domain-not-seen",
            "destination-volume-too-small",
            "libvirt-error",
            "cpu-feature-mismatch",
            "device-state-incompatible",
            "unsafe-migration",
            "storage-io-error",
            "abort-failed",
            "target-preparation-failed",
            "aborted-by-request",
            "succeeded",
            "in-progress",
            "unknown",
        ] {
            assert!(rule(id).is_some(), "no rule {id}");
        }
        assert_eq!(CATALOGUE.last().map(|r| r.cause.id), Some("unknown"));
        for r in CATALOGUE {
            assert!(
                !r.reads.is_empty() && !r.advice.is_empty(),
                "{}",
                r.cause.id
            );
        }
    }
}
