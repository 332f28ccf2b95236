//! The cause vocabulary. One `Cause` (a stable id and the plane that failed) is shared by
//! KubeVirt triage (each rule in `rules/` declares the cause it names), the libvirt
//! classifier (`migration::classify`) and vmctl's own abort decisions
//! (`migration::controller::AbortCause`): the same id always means the same thing. The
//! constants below are the catalogue's causes, for the layers that name one without a rule.

use std::fmt;

use serde::{Serialize, Serializer};

use super::{Plane, rules};

/// Why a migration ended where it did: the id (part of the JSON contract) and the plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cause {
    /// Stable, kebab-case: `not-converging`, `connection-failure`, ...
    pub id: &'static str,
    pub plane: Plane,
}

impl Cause {
    /// The catalogue's cause with this id.
    pub fn by_id(id: &str) -> Option<Cause> {
        rules::rule(id).map(|r| r.cause)
    }
}

/// A cause is written as its id.
impl Serialize for Cause {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id)
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id)
    }
}

impl PartialEq<&str> for Cause {
    fn eq(&self, other: &&str) -> bool {
        self.id == *other
    }
}

pub const ABORT_FAILED: Cause = rules::abort_failed::ABORT_FAILED.cause;
pub const ABORTED_BY_REQUEST: Cause = rules::aborted_by_request::ABORTED_BY_REQUEST.cause;
pub const ANOTHER_MIGRATION_IN_PROGRESS: Cause =
    rules::another_migration_in_progress::ANOTHER_MIGRATION_IN_PROGRESS.cause;
pub const BACKEND_STORAGE_HANDOFF_STUCK: Cause =
    rules::backend_storage_handoff_stuck::BACKEND_STORAGE_HANDOFF.cause;
pub const BLOCKED_BY_BACKUP: Cause = rules::blocked_by_backup::BLOCKED_BY_BACKUP.cause;
pub const BLOCKED_BY_UTILITY_VOLUMES: Cause =
    rules::blocked_by_utility_volumes::BLOCKED_BY_UTILITY_VOLUMES.cause;
pub const CONNECTION_FAILURE: Cause = rules::connection_failure::CONNECTION_FAILURE.cause;
pub const CPU_FEATURE_MISMATCH: Cause = rules::cpu_feature_mismatch::CPU_FEATURE_MISMATCH.cause;
pub const DECENTRALIZED_MIGRATION_BLOCKED: Cause =
    rules::decentralized_migration_blocked::DECENTRALIZED_BLOCKED.cause;
pub const DESTINATION_VOLUME_TOO_SMALL: Cause =
    rules::destination_volume_too_small::DESTINATION_VOLUME_TOO_SMALL.cause;
pub const DEVICE_STATE_INCOMPATIBLE: Cause =
    rules::device_state_incompatible::DEVICE_STATE_INCOMPATIBLE.cause;
pub const IN_PROGRESS: Cause = rules::in_progress::IN_PROGRESS.cause;
pub const LIBVIRT_ERROR: Cause = rules::libvirt_error::LIBVIRT_ERROR.cause;
pub const MIGRATION_BACKOFF: Cause = rules::migration_backoff::MIGRATION_BACKOFF.cause;
pub const NO_MIGRATION: Cause = rules::no_migration::NO_MIGRATION.cause;
pub const NO_NODE_FOR_CPU_MODEL: Cause = rules::no_node_for_cpu_model::NO_NODE_FOR_CPU_MODEL.cause;
pub const NO_PROGRESS: Cause = rules::monitor_abort::NO_PROGRESS.cause;
pub const NOT_CONVERGING: Cause = rules::monitor_abort::NOT_CONVERGING.cause;
pub const NOT_LIVE_MIGRATABLE: Cause = rules::not_live_migratable::NOT_LIVE_MIGRATABLE.cause;
pub const PDB_BLOCKS_EVICTION: Cause = rules::pdb_blocks_eviction::PDB_BLOCKS_EVICTION.cause;
pub const POSTCOPY_FAILED: Cause = rules::postcopy_failed::POSTCOPY_FAILED.cause;
pub const POSTCOPY_UNSUPPORTED: Cause = rules::postcopy_unsupported::POSTCOPY_UNSUPPORTED.cause;
pub const QUEUED_PARALLEL_LIMIT: Cause = rules::queued_parallel_limit::QUEUED_PARALLEL_LIMIT.cause;
pub const RESOURCE_QUOTA_EXCEEDED: Cause =
    rules::resource_quota_exceeded::RESOURCE_QUOTA_EXCEEDED.cause;
pub const STORAGE_IO_ERROR: Cause = rules::storage_io_error::STORAGE_IO_ERROR.cause;
pub const SUCCEEDED: Cause = rules::succeeded::SUCCEEDED.cause;
pub const TARGET_DOMAIN_NOT_SEEN: Cause =
    rules::target_domain_not_seen::TARGET_DOMAIN_NOT_SEEN.cause;
pub const TARGET_ON_SOURCE_NODE: Cause = rules::target_on_source_node::TARGET_ON_SOURCE_NODE.cause;
pub const TARGET_PREPARATION_FAILED: Cause =
    rules::target_preparation_failed::TARGET_PREPARATION_FAILED.cause;
pub const TARGET_POD_CREATE_FAILED: Cause =
    rules::target_pod_create_failed::TARGET_POD_CREATE_FAILED.cause;
pub const TARGET_POD_LOST: Cause = rules::target_pod_lost::TARGET_POD_LOST.cause;
pub const TARGET_POD_NOT_READY: Cause = rules::target_pod_not_ready::TARGET_POD_NOT_READY.cause;
pub const TARGET_POD_UNSCHEDULABLE: Cause =
    rules::target_pod_unschedulable::TARGET_POD_UNSCHEDULABLE.cause;
pub const UNKNOWN: Cause = rules::unknown::UNKNOWN.cause;
pub const UNSAFE_MIGRATION: Cause = rules::unsafe_migration::UNSAFE_MIGRATION.cause;
pub const VMI_STOPPED_DURING_MIGRATION: Cause =
    rules::vmi_stopped_during_migration::VMI_STOPPED_DURING_MIGRATION.cause;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalogued_rule_has_its_cause_here_and_back() {
        for rule in rules::CATALOGUE {
            assert_eq!(Cause::by_id(rule.cause.id), Some(rule.cause));
        }
        assert_eq!(Cause::by_id("no-such-cause"), None);
        assert_eq!(NOT_CONVERGING.plane, Plane::DataPlane);
        assert_eq!(ABORTED_BY_REQUEST.plane, Plane::None);
        assert_eq!(
            serde_json::to_string(&CONNECTION_FAILURE).ok().as_deref(),
            Some("\"connection-failure\"")
        );
    }
}
