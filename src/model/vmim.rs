//! VirtualMachineInstanceMigration (`kubevirt.io/v1`), FACTS §3.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::vmi::MigrationState;
use super::{Condition, ObjectMeta, PhaseTransition, Time, condition, open_enum};

open_enum!(
    /// `status.phase` of a VMIM.
    MigrationPhase {
        Unset = "",
        Pending = "Pending",
        Scheduling = "Scheduling",
        Scheduled = "Scheduled",
        PreparingTarget = "PreparingTarget",
        TargetReady = "TargetReady",
        Running = "Running",
        Succeeded = "Succeeded",
        Failed = "Failed",
        WaitingForSync = "WaitingForSync",
        Synchronizing = "Synchronizing",
    }
);

impl MigrationPhase {
    pub fn is_final(&self) -> bool {
        matches!(self, MigrationPhase::Succeeded | MigrationPhase::Failed)
    }

    /// KubeVirt's `IsRunning()`: the phases that count against the parallel limits.
    pub fn counts_as_running(&self) -> bool {
        !matches!(
            self,
            MigrationPhase::Failed
                | MigrationPhase::Pending
                | MigrationPhase::Unset
                | MigrationPhase::Succeeded
                | MigrationPhase::WaitingForSync
                | MigrationPhase::Synchronizing
        )
    }
}

/// Annotation on VMIMs created by the evacuation controller (value: the node).
pub const EVACUATION_ANNOTATION: &str = "kubevirt.io/evacuationMigration";
/// Annotation on VMIMs created by the workload updater.
pub const WORKLOAD_UPDATE_ANNOTATION: &str = "kubevirt.io/workloadUpdateMigration";
/// Label on every VMIM naming its VMI.
pub const VMI_NAME_LABEL: &str = "kubevirt.io/vmi-name";
/// Set by vmctl on a VMIM just before it deletes it to abort the migration: who asked
/// (`vmctl abort`, `vmctl migrate` on Ctrl-C). A deletion does not say who made it; this
/// annotation, on the VMIM until KubeVirt lets it go, does.
pub const ABORT_REQUESTED_BY_ANNOTATION: &str = "vmctl.io/abort-requested-by";

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VirtualMachineInstanceMigration {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: VmimSpec,
    #[serde(default)]
    pub status: VmimStatus,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VmimSpec {
    #[serde(default)]
    pub vmi_name: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub added_node_selector: BTreeMap<String, String>,
    /// `system-critical`, `user-triggered` or `system-maintenance` (v1.7+, only virt-controller
    /// sets it); see [`MigrationPriority`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    /// Decentralized migration, source side (v1.6+, gate `DecentralizedLiveMigration`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_to: Option<MigrationSendTo>,
    /// Decentralized migration, target side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive: Option<MigrationReceive>,
}

/// `spec.sendTo` (`VirtualMachineInstanceMigrationSource`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MigrationSendTo {
    #[serde(
        rename = "migrationID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub migration_id: Option<String>,
    #[serde(
        rename = "connectURL",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub connect_url: Option<String>,
}

/// `spec.receive` (`VirtualMachineInstanceMigrationTarget`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MigrationReceive {
    #[serde(
        rename = "migrationID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub migration_id: Option<String>,
}

open_enum!(
    /// `spec.priority` (FACTS §3.1, §12).
    MigrationPriority {
        SystemCritical = "system-critical",
        UserTriggered = "user-triggered",
        SystemMaintenance = "system-maintenance",
    }
);

/// Queue weight of a running migration (`pkg/util/migrations/migrations.go`).
pub const QUEUE_WEIGHT_RUNNING: u32 = 1000;

impl MigrationPriority {
    /// KubeVirt's queue weight: system-critical 100, user-triggered 50, system-maintenance
    /// 20, anything else (unset, unknown) 0.
    pub fn queue_weight(&self) -> u32 {
        match self {
            MigrationPriority::SystemCritical => 100,
            MigrationPriority::UserTriggered => 50,
            MigrationPriority::SystemMaintenance => 20,
            MigrationPriority::Other(_) => 0,
        }
    }
}

/// Which side of a decentralized (cross-cluster) migration a VMIM is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DecentralizedRole {
    /// `spec.sendTo`: the source side, phase `Synchronizing` while it waits.
    Sender,
    /// `spec.receive`: the target side, phase `WaitingForSync` while it waits.
    Receiver,
}

impl DecentralizedRole {
    pub fn as_str(self) -> &'static str {
        match self {
            DecentralizedRole::Sender => "sender",
            DecentralizedRole::Receiver => "receiver",
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VmimStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<MigrationPhase>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phase_transition_timestamps: Vec<PhaseTransition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_state: Option<MigrationState>,
    /// Decentralized migration: where the synchronization controller listens (`host:port`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synchronization_addresses: Vec<String>,
}

/// VMIM condition copied from the VMI's `DecentralizedLiveMigrationFailure` (FACTS §3.2).
pub const COND_DECENTRALIZED_BLOCKED: &str = "decentralizedMigrationBlocked";

impl VirtualMachineInstanceMigration {
    pub fn phase(&self) -> MigrationPhase {
        self.status.phase.clone().unwrap_or(MigrationPhase::Unset)
    }

    pub fn is_final(&self) -> bool {
        self.phase().is_final()
    }

    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        condition(&self.status.conditions, type_)
    }

    /// The node an evacuation VMIM drains, when it is one.
    pub fn evacuation_node(&self) -> Option<&str> {
        self.annotation(EVACUATION_ANNOTATION)
    }

    /// `spec.priority`, when set.
    pub fn priority(&self) -> Option<MigrationPriority> {
        self.spec
            .priority
            .as_deref()
            .filter(|p| !p.is_empty())
            .map(MigrationPriority::from)
    }

    /// The queue weight KubeVirt's priority queue gives this migration (FACTS §3.1):
    /// running ones 1000, then by `spec.priority`, unset 0.
    pub fn queue_weight(&self) -> u32 {
        if self.status.phase.is_some() && self.phase().counts_as_running() && !self.is_final() {
            return QUEUE_WEIGHT_RUNNING;
        }
        self.priority().map(|p| p.queue_weight()).unwrap_or(0)
    }

    /// Sender (`spec.sendTo`) or receiver (`spec.receive`) of a decentralized migration.
    pub fn decentralized_role(&self) -> Option<DecentralizedRole> {
        if self.spec.send_to.is_some() {
            Some(DecentralizedRole::Sender)
        } else if self.spec.receive.is_some() {
            Some(DecentralizedRole::Receiver)
        } else {
            None
        }
    }

    /// The decentralized migration's id (`spec.sendTo.migrationID` / `spec.receive.migrationID`).
    pub fn decentralized_id(&self) -> Option<&str> {
        self.spec
            .send_to
            .as_ref()
            .and_then(|s| s.migration_id.as_deref())
            .or_else(|| {
                self.spec
                    .receive
                    .as_ref()
                    .and_then(|r| r.migration_id.as_deref())
            })
            .filter(|s| !s.is_empty())
    }

    /// When the migration entered `phase`, from `phaseTransitionTimestamps`.
    pub fn phase_entered(&self, phase: &str) -> Option<&Time> {
        self.status
            .phase_transition_timestamps
            .iter()
            .find(|t| t.phase == phase)
            .and_then(|t| t.phase_transition_timestamp.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_phases_follow_kubevirt() {
        assert!(MigrationPhase::Scheduling.counts_as_running());
        assert!(MigrationPhase::Running.counts_as_running());
        assert!(!MigrationPhase::Pending.counts_as_running());
        assert!(!MigrationPhase::Succeeded.counts_as_running());
        assert!(MigrationPhase::Other("Warp".into()).counts_as_running());
    }

    #[test]
    fn a_v110_decentralized_sender_parses() {
        // Shapes from swagger.json (v1.10): VirtualMachineInstanceMigrationSpec.sendTo,
        // VirtualMachineInstanceMigrationStatus.synchronizationAddresses.
        let m: VirtualMachineInstanceMigration = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "send", "namespace": "prod", "uid": "u-send"},
            "spec": {
                "vmiName": "db-01",
                "priority": "user-triggered",
                "sendTo": {"migrationID": "mig-42", "connectURL": "sync.dc2.example:9185"}
            },
            "status": {
                "phase": "Synchronizing",
                "synchronizationAddresses": ["10.0.0.7:9185", "[fd00::7]:9185"],
                "migrationState": {
                    "migrationNetworkType": "Migration",
                    "targetMemoryOverhead": "312Mi",
                    "sourceState": {"node": "node-1", "pod": "virt-launcher-db-01-abc",
                                    "migrationUID": "u-send", "syncAddress": "10.0.0.7:9185",
                                    "nodeSelectors": {"a": "b"}},
                    "targetState": {"node": "dc2-node-4", "pod": "virt-launcher-db-01-xyz",
                                    "domainDetected": true, "nodeAddress": "10.1.0.4",
                                    "directMigrationNodePorts": {"34000": 49152},
                                    "cpuSet": [2, 3], "futureField": 1}
                }
            }
        }))
        .unwrap();
        assert_eq!(m.phase(), MigrationPhase::Synchronizing);
        assert!(!m.phase().counts_as_running());
        assert_eq!(m.decentralized_role(), Some(DecentralizedRole::Sender));
        assert_eq!(m.decentralized_id(), Some("mig-42"));
        assert_eq!(
            m.spec.send_to.as_ref().unwrap().connect_url.as_deref(),
            Some("sync.dc2.example:9185")
        );
        assert_eq!(m.status.synchronization_addresses.len(), 2);
        assert_eq!(m.priority(), Some(MigrationPriority::UserTriggered));
        assert_eq!(m.queue_weight(), 50);
        let st = m.status.migration_state.unwrap();
        assert_eq!(st.migration_network_type.as_deref(), Some("Migration"));
        assert_eq!(st.target_memory_overhead.unwrap().bytes(), 312 << 20);
        let src = st.source_state.unwrap();
        assert_eq!(src.node.as_deref(), Some("node-1"));
        assert_eq!(src.migration_uid.as_deref(), Some("u-send"));
        let tgt = st.target_state.unwrap();
        assert_eq!(tgt.node.as_deref(), Some("dc2-node-4"));
        assert_eq!(tgt.domain_detected, Some(true));
        assert_eq!(tgt.node_address.as_deref(), Some("10.1.0.4"));
    }

    #[test]
    fn a_receiver_and_priorities_follow_the_queue() {
        let m: VirtualMachineInstanceMigration = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "recv"},
            "spec": {"vmiName": "db-01", "receive": {"migrationID": "mig-42"}},
            "status": {"phase": "WaitingForSync"}
        }))
        .unwrap();
        assert_eq!(m.decentralized_role(), Some(DecentralizedRole::Receiver));
        assert_eq!(m.decentralized_id(), Some("mig-42"));
        assert_eq!(m.queue_weight(), 0, "no priority, not running");
        let evac: VirtualMachineInstanceMigration = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "e"},
            "spec": {"vmiName": "a", "priority": "system-critical"},
            "status": {"phase": "Pending"}
        }))
        .unwrap();
        assert_eq!(evac.queue_weight(), 100);
        let running: VirtualMachineInstanceMigration = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "r"},
            "spec": {"vmiName": "a", "priority": "system-maintenance"},
            "status": {"phase": "Running"}
        }))
        .unwrap();
        assert_eq!(running.queue_weight(), QUEUE_WEIGHT_RUNNING);
        assert_eq!(
            MigrationPriority::from("system-maintenance").queue_weight(),
            20
        );
        assert_eq!(MigrationPriority::from("urgent").queue_weight(), 0);
    }

    #[test]
    fn a_v18_vmim_has_no_decentralized_fields() {
        // v1.8.4 shape: no sendTo/receive in use, no synchronizationAddresses.
        let m: VirtualMachineInstanceMigration = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "m", "annotations": {"kubevirt.io/evacuationMigration": "node-2"}},
            "spec": {"vmiName": "a"},
            "status": {"phase": "Running", "migrationState": {"sourceNode": "node-2", "mode": "PreCopy"}}
        }))
        .unwrap();
        assert_eq!(m.decentralized_role(), None);
        assert!(m.status.synchronization_addresses.is_empty());
        assert_eq!(m.priority(), None);
        let st = m.status.migration_state.unwrap();
        assert!(st.source_state.is_none() && st.target_state.is_none());
    }

    #[test]
    fn a_vmim_without_status_parses() {
        let m: VirtualMachineInstanceMigration = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "m"}, "spec": {"vmiName": "a"}
        }))
        .unwrap();
        assert_eq!(m.phase(), MigrationPhase::Unset);
        assert!(!m.is_final());
    }
}
