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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
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
}

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
    fn a_vmim_without_status_parses() {
        let m: VirtualMachineInstanceMigration = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "m"}, "spec": {"vmiName": "a"}
        }))
        .unwrap();
        assert_eq!(m.phase(), MigrationPhase::Unset);
        assert!(!m.is_final());
    }
}
