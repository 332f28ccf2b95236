//! VirtualMachineInstance (`kubevirt.io/v1`), FACTS §1.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, Toleration, TopologySpreadConstraint};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    Condition, EvictionStrategy, ObjectMeta, PhaseTransition, Quantity, Time, condition, open_enum,
};

open_enum!(
    /// `status.phase` of a VMI.
    VmiPhase {
        Unset = "",
        Pending = "Pending",
        Scheduling = "Scheduling",
        Scheduled = "Scheduled",
        Running = "Running",
        Succeeded = "Succeeded",
        Failed = "Failed",
        WaitingForSync = "WaitingForSync",
        Unknown = "Unknown",
    }
);

impl VmiPhase {
    pub fn is_final(&self) -> bool {
        matches!(self, VmiPhase::Succeeded | VmiPhase::Failed)
    }
}

open_enum!(
    /// `migrationState.mode`.
    MigrationMode {
        PreCopy = "PreCopy",
        PostCopy = "PostCopy",
        Paused = "Paused",
    }
);

open_enum!(
    /// `migrationState.abortStatus`.
    AbortStatus {
        Aborting = "Aborting",
        Succeeded = "Succeeded",
        Failed = "Failed",
    }
);

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VirtualMachineInstance {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: VmiSpec,
    #[serde(default)]
    pub status: VmiStatus,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VmiSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_strategy: Option<EvictionStrategy>,
    #[serde(default)]
    pub domain: DomainSpec,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<Volume>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub utility_volumes: Vec<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub networks: Vec<Network>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
    /// Copied to the launcher pods (virt-controller `services/template.go`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DomainSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemorySpec>,
    #[serde(default)]
    pub resources: Resources,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuSpec>,
    #[serde(default)]
    pub devices: Devices,
    /// `spec.domain.machine`: the QEMU machine type asked for (`q35`, an alias, or a
    /// versioned type such as `pc-q35-rhel9.6.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<Machine>,
}

/// `spec.domain.machine` / `status.machine` of a VMI.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Machine {
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

/// One of `spec.domain.cpu.features`: a CPU feature and its libvirt policy (`require`, the
/// default when empty, `force`, `optional`, `disable`, `forbid`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuFeature {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemorySpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest: Option<Quantity>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resources {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: BTreeMap<String, Quantity>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<String, Quantity>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sockets: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedicated_cpu_placement: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<CpuFeature>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Devices {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interfaces: Vec<Interface>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<NamedDevice>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_devices: Vec<NamedDevice>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamedDevice {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_name: Option<String>,
}

/// A guest interface; the binding is whichever of the binding keys is present.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interface {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub masquerade: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bridge: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sriov: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passt: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<PluginBinding>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PluginBinding {
    #[serde(default)]
    pub name: String,
}

impl Interface {
    pub fn binding_name(&self) -> &str {
        if self.masquerade.is_some() {
            "masquerade"
        } else if self.bridge.is_some() {
            "bridge"
        } else if self.sriov.is_some() {
            "sriov"
        } else if self.passt.is_some() {
            "passt"
        } else if let Some(b) = &self.binding {
            &b.name
        } else {
            "unknown"
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Network {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multus: Option<MultusNetwork>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MultusNetwork {
    #[serde(default)]
    pub network_name: String,
}

/// A volume: its name and, for claims, the claim it mounts.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Volume {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim: Option<ClaimRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_volume: Option<DataVolumeRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_disk: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_disk: Option<Value>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimRef {
    #[serde(default)]
    pub claim_name: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DataVolumeRef {
    #[serde(default)]
    pub name: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VmiStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<VmiPhase>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phase_transition_timestamps: Vec<PhaseTransition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_state: Option<MigrationState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_transport: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evacuation_node_name: Option<String>,
    /// Pod UID → node name, for every pod the VMI controls (completed ones too).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub active_pods: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_block_tracking: Option<Value>,
    /// The compute container image of the VMI's active launcher pod (virt-controller,
    /// `pkg/virt-controller/watch/vmi/lifecycle.go`); the workload updater calls the VMI
    /// outdated when it differs from the current virt-launcher image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher_container_image_version: Option<String>,
    /// The machine type the domain runs with (`status.machine.type`, the expanded one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<Machine>,
}

/// `status.migrationState` of a VMI (and of a final VMIM), every field of FACTS §1.1.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_node_domain_ready_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_node_domain_detected: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_node_address: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub target_direct_migration_node_ports: BTreeMap<String, i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_pod: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "targetAttachmentPodUID")]
    pub target_attachment_pod_uid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_pod: Option<String>,
    #[serde(default)]
    pub completed: bool,
    #[serde(default)]
    pub failed: bool,
    #[serde(default)]
    pub abort_requested: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort_status: Option<AbortStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Note the casing: `migrationUid` here (FACTS §1.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_uid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<MigrationMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_policy_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_configuration: Option<super::kubevirt::MigrationConfig>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(rename = "targetCPUSet")]
    pub target_cpu_set: Vec<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_node_topology: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "sourcePersistentStatePVCName")]
    pub source_persistent_state_pvc_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "targetPersistentStatePVCName")]
    pub target_persistent_state_pvc_name: Option<String>,
    /// Decentralized migration: the source side's own view (v1.6+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_state: Option<SideState>,
    /// Decentralized migration: the target side's own view (v1.6+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_state: Option<SideState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_network_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_memory_overhead: Option<Quantity>,
}

/// `sourceState` / `targetState` of a migrationState (FACTS §1.1): the common inline fields
/// plus the target-only ones (absent on a source state). Note the casing `migrationUID`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SideState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
    #[serde(
        rename = "migrationUID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub migration_uid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain_namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_address: Option<String>,
    #[serde(
        rename = "persistentStatePVCName",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub persistent_state_pvc_name: Option<String>,
    #[serde(
        rename = "virtualMachineInstanceUID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub virtual_machine_instance_uid: Option<String>,
    /// Source only.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selectors: BTreeMap<String, String>,
    /// Target only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain_ready_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain_detected: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_address: Option<String>,
}

/// VMI condition types of v1.6–v1.10 that concern migrations (FACTS §1.2).
pub const COND_MIGRATION_REQUIRED: &str = "MigrationRequired";
pub const COND_EVICTION_REQUESTED: &str = "EvictionRequested";
pub const COND_DECENTRALIZED_FAILURE: &str = "DecentralizedLiveMigrationFailure";
pub const COND_STORAGE_LIVE_MIGRATABLE: &str = "StorageLiveMigratable";

impl MigrationState {
    /// KubeVirt's `IsMigrating`: started and not yet ended (as of `now`).
    pub fn is_migrating(&self, now: &Time) -> bool {
        match &self.start_timestamp {
            Some(start) if start.0 <= now.0 => match &self.end_timestamp {
                None => true,
                Some(end) => end.0 > now.0,
            },
            _ => false,
        }
    }
}

impl VirtualMachineInstance {
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        condition(&self.status.conditions, type_)
    }

    /// Guest memory: `spec.domain.memory.guest`, else `resources.requests.memory` (FACTS §5.2).
    pub fn guest_memory(&self) -> Option<&Quantity> {
        self.spec
            .domain
            .memory
            .as_ref()
            .and_then(|m| m.guest.as_ref())
            .or_else(|| self.spec.domain.resources.requests.get("memory"))
    }

    /// The node the VMI is marked to be evacuated from, if any.
    pub fn evacuation_node(&self) -> Option<&str> {
        self.status
            .evacuation_node_name
            .as_deref()
            .filter(|n| !n.is_empty())
    }

    /// The name of the owning VirtualMachine, when there is one.
    pub fn owner_vm(&self) -> Option<&str> {
        self.metadata
            .owner_references
            .as_ref()?
            .iter()
            .find(|o| o.kind == "VirtualMachine")
            .map(|o| o.name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_status_and_unknown_fields_are_fine() {
        let vmi: VirtualMachineInstance = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "a", "namespace": "prod"},
            "spec": {"domain": {"resources": {"requests": {"memory": "2Gi"}}}, "futureField": 1},
            "someNewTopLevel": true
        }))
        .unwrap();
        assert!(vmi.status.phase.is_none());
        assert_eq!(vmi.guest_memory().map(|q| q.bytes()), Some(2_147_483_648));
    }

    #[test]
    fn unknown_phase_is_kept() {
        let vmi: VirtualMachineInstance = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "a"},
            "status": {"phase": "Hibernating", "migrationState": {"mode": "Turbo", "migrationUid": "u1"}}
        }))
        .unwrap();
        assert_eq!(
            vmi.status.phase,
            Some(VmiPhase::Other("Hibernating".into()))
        );
        let ms = vmi.status.migration_state.unwrap();
        assert_eq!(ms.mode, Some(MigrationMode::Other("Turbo".into())));
        assert_eq!(ms.migration_uid.as_deref(), Some("u1"));
    }

    #[test]
    fn v18_and_v110_migration_states_parse() {
        // v1.8.4: sourceState/targetState exist but are usually absent; a bare state parses.
        let v18: MigrationState = serde_json::from_value(serde_json::json!({
            "sourceNode": "node-1", "targetNode": "node-2", "mode": "PreCopy",
            "migrationConfiguration": {"completionTimeoutPerGiB": 150, "progressTimeout": 150}
        }))
        .unwrap();
        assert!(v18.source_state.is_none());
        assert!(v18.target_memory_overhead.is_none());
        // v1.10: the decentralized sides, the network type and the memory overhead.
        let v110: MigrationState = serde_json::from_value(serde_json::json!({
            "migrationUid": "u1",
            "migrationNetworkType": "Pod",
            "targetMemoryOverhead": "1Gi",
            "sourceState": {"node": "a", "pod": "p-a", "migrationUID": "u1",
                            "virtualMachineInstanceUID": "vmi-1", "syncAddress": "10.0.0.1:9185"},
            "targetState": {"node": "b", "pod": "p-b", "domainReadyTimestamp": "2026-12-01T10:00:00Z",
                            "attachmentPodUID": "x", "nodeTopology": "t"},
            "migrationConfiguration": {"maxDowntimeMs": 900, "experimental": {"stallDetector": {"stallProgressTimeout": 40}}}
        }))
        .unwrap();
        let s = v110.source_state.unwrap();
        assert_eq!(s.sync_address.as_deref(), Some("10.0.0.1:9185"));
        assert_eq!(s.virtual_machine_instance_uid.as_deref(), Some("vmi-1"));
        let t = v110.target_state.unwrap();
        assert_eq!(t.pod.as_deref(), Some("p-b"));
        assert!(t.domain_ready_timestamp.is_some());
        assert_eq!(v110.target_memory_overhead.unwrap().bytes(), 1 << 30);
        assert_eq!(
            v110.migration_configuration.unwrap().max_downtime_ms,
            Some(900)
        );
    }

    #[test]
    fn guest_memory_prefers_memory_guest() {
        let vmi: VirtualMachineInstance = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "a"},
            "spec": {"domain": {"memory": {"guest": "4Gi"}, "resources": {"requests": {"memory": "2Gi"}}}}
        }))
        .unwrap();
        assert_eq!(vmi.guest_memory().map(|q| q.as_str()), Some("4Gi"));
    }
}
