//! Why a VMI can or cannot live-migrate, in words an operator can act on (FACTS §1.3).

use serde::Serialize;

use crate::model::{Condition, VirtualMachineInstance};

/// The `LiveMigratable` (and `StorageLiveMigratable`) verdict for one VMI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Migratability {
    /// `Some(true/false)` from the condition; `None` when the condition is absent (not yet
    /// reported by virt-handler).
    pub live_migratable: Option<bool>,
    /// Every reason that blocks live migration (the `LiveMigratable` condition).
    pub reasons: Vec<Blocker>,
    /// Why storage (volume) migration is not possible (`StorageLiveMigratable`): it does
    /// not stop a compute live migration (v1.9+ reports SCSI reservations only here).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub storage_reasons: Vec<Blocker>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Blocker {
    /// The condition type it came from (`LiveMigratable`, `StorageLiveMigratable`).
    pub condition: String,
    /// The condition's reason, as written (`DisksNotLiveMigratable`…).
    pub reason: String,
    /// The condition's message, as written.
    pub message: String,
    /// The reason in plain words, naming the object that causes it.
    pub summary: String,
    /// What to change so the VMI can migrate.
    pub fix: String,
}

impl Migratability {
    pub fn is_migratable(&self) -> bool {
        self.live_migratable == Some(true) && self.reasons.is_empty()
    }

    /// One short phrase for a table cell.
    pub fn short(&self) -> String {
        match (self.live_migratable, self.reasons.first()) {
            (_, Some(b)) => b.summary.clone(),
            (Some(true), None) => "yes".into(),
            (Some(false), None) => "no".into(),
            (None, None) => "unknown (no LiveMigratable condition yet)".into(),
        }
    }
}

/// Reads the conditions and explains them with the VMI's spec.
pub fn migratability(vmi: &VirtualMachineInstance) -> Migratability {
    let live = vmi.condition("LiveMigratable");
    let reasons: Vec<Blocker> = live
        .filter(|c| c.is_false())
        .map(|c| explain("LiveMigratable", c, vmi))
        .into_iter()
        .collect();
    let storage_reasons: Vec<Blocker> = vmi
        .condition("StorageLiveMigratable")
        .filter(|c| c.is_false())
        .map(|c| explain("StorageLiveMigratable", c, vmi))
        .into_iter()
        .collect();
    let live_migratable = match live {
        Some(c) if c.is_true() => Some(true),
        Some(c) if c.is_false() => Some(false),
        _ => None,
    };
    Migratability {
        live_migratable,
        reasons,
        storage_reasons,
    }
}

/// `PVC <name> is not shared` → `<name>`.
fn pvc_in_message(message: &str) -> Option<&str> {
    let rest = &message[message.find("PVC ")? + 4..];
    let name = rest.split([' ', ',']).next()?;
    (!name.is_empty()).then_some(name)
}

fn explain(condition: &str, c: &Condition, vmi: &VirtualMachineInstance) -> Blocker {
    let reason = c.reason.clone().unwrap_or_default();
    let message = c.message.clone().unwrap_or_default();
    let devices = || {
        let d = &vmi.spec.domain.devices;
        let names: Vec<String> = d
            .gpus
            .iter()
            .chain(&d.host_devices)
            .map(|g| match &g.device_name {
                Some(dev) => format!("{} ({dev})", g.name),
                None => g.name.clone(),
            })
            .collect();
        names.join(", ")
    };
    let (summary, fix) = match reason.as_str() {
        "DisksNotLiveMigratable" => match pvc_in_message(&message) {
            Some(pvc) => (
                format!("PVC {pvc} is not shared (ReadWriteOnce)"),
                format!("move PVC {pvc} to a ReadWriteMany storage class, or migrate its storage to one (volume migration)"),
            ),
            None if message.contains("HostDisk") => (
                "non-shared hostDisk volume".into(),
                "replace the hostDisk with a shared (ReadWriteMany) PVC".into(),
            ),
            None => (
                "a disk is not shared".into(),
                "use ReadWriteMany PVCs for every disk".into(),
            ),
        },
        "InterfaceNotLiveMigratable" => {
            let bridged: Vec<&str> = vmi
                .spec
                .domain
                .devices
                .interfaces
                .iter()
                .filter(|i| {
                    i.binding_name() == "bridge"
                        && vmi.spec.networks.iter().any(|n| n.name == i.name && n.pod.is_some())
                })
                .map(|i| i.name.as_str())
                .collect();
            let what = if bridged.is_empty() {
                "an interface binding cannot migrate".to_string()
            } else {
                format!("interface {} uses bridge binding on the pod network", bridged.join(", "))
            };
            (
                what,
                "use masquerade binding on the pod network, or annotate the VMI with kubevirt.io/allow-pod-bridge-network-live-migration".into(),
            )
        }
        "HostDeviceNotLiveMigratable" => {
            let devs = devices();
            (
                if devs.is_empty() {
                    "host device attached".into()
                } else {
                    format!("host device {devs} attached")
                },
                "remove the passthrough device (or use a migratable vGPU with VGPULiveMigration); otherwise plan a shutdown".into(),
            )
        }
        "CPUModeLiveMigratable" => (
            "host-model CPU not allowed to migrate from this node".into(),
            "use a named CPU model, or make sure other nodes carry this node's cpu-model-migration labels".into(),
        ),
        "SEVNotLiveMigratable" => ("AMD SEV guest".into(), "SEV guests cannot live-migrate; plan a shutdown".into()),
        "SecureExecutionNotLiveMigratable" => (
            "IBM Secure Execution guest".into(),
            "Secure Execution guests cannot live-migrate; plan a shutdown".into(),
        ),
        "TDXNotLiveMigratable" => ("Intel TDX guest".into(), "TDX guests cannot live-migrate; plan a shutdown".into()),
        "NoTSCFrequencyNotLiveMigratable" => (
            "no TSC frequency known for a guest that needs it".into(),
            "set a TSC frequency (invtsc / Hyper-V reenlightenment need it) or drop the feature".into(),
        ),
        "HypervPassthroughNotLiveMigratable" => (
            "Hyper-V passthrough enabled".into(),
            "disable spec.domain.features.hypervPassthrough".into(),
        ),
        "PersistentReservationNotLiveMigratable" => (
            "SCSI persistent reservation in use".into(),
            "drop the reservation (disk.lun.reservation) to allow migration".into(),
        ),
        "VirtIOFSNotLiveMigratable" => (
            "virtiofs filesystem shared".into(),
            "upgrade KubeVirt (v1.5+ migrates virtiofs) or remove the filesystem".into(),
        ),
        "HotplugNotLiveMigratable" => (
            "hotplugged volume".into(),
            "unplug the volume or upgrade KubeVirt".into(),
        ),
        "DecentralizedNotLiveMigratable" => (
            "decentralized migration not possible".into(),
            "see the condition message".into(),
        ),
        _ => (
            if message.is_empty() { reason.clone() } else { message.clone() },
            "see the condition message".into(),
        ),
    };
    Blocker {
        condition: condition.to_string(),
        reason,
        message,
        summary,
        fix,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vmi(value: serde_json::Value) -> VirtualMachineInstance {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn names_the_pvc() {
        let v = vmi(
            json!({"metadata": {"name": "a"}, "status": {"conditions": [{
            "type": "LiveMigratable", "status": "False", "reason": "DisksNotLiveMigratable",
            "message": "cannot migrate VMI: PVC db-data is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)"}]}}),
        );
        let m = migratability(&v);
        assert_eq!(m.live_migratable, Some(false));
        assert!(!m.is_migratable());
        assert_eq!(
            m.reasons[0].summary,
            "PVC db-data is not shared (ReadWriteOnce)"
        );
        assert!(m.reasons[0].fix.contains("ReadWriteMany"));
    }

    #[test]
    fn names_the_bridged_interface() {
        let v = vmi(json!({"metadata": {"name": "a"},
            "spec": {"domain": {"devices": {"interfaces": [{"name": "default", "bridge": {}}]}},
                     "networks": [{"name": "default", "pod": {}}]},
            "status": {"conditions": [{"type": "LiveMigratable", "status": "False",
                "reason": "InterfaceNotLiveMigratable",
                "message": "cannot migrate VMI which does not use masquerade or a migratable plugin to connect to the pod network"}]}}));
        assert_eq!(
            migratability(&v).reasons[0].summary,
            "interface default uses bridge binding on the pod network"
        );
    }

    #[test]
    fn names_the_host_device() {
        let v = vmi(json!({"metadata": {"name": "a"},
            "spec": {"domain": {"devices": {"gpus": [{"name": "gpu1", "deviceName": "nvidia.com/A100"}]}}},
            "status": {"conditions": [{"type": "LiveMigratable", "status": "False",
                "reason": "HostDeviceNotLiveMigratable", "message": "VMI specifies non-migratable GPU device"}]}}));
        assert_eq!(
            migratability(&v).reasons[0].summary,
            "host device gpu1 (nvidia.com/A100) attached"
        );
    }

    #[test]
    fn true_and_absent_conditions() {
        let v = vmi(
            json!({"metadata": {"name": "a"}, "status": {"conditions": [{"type": "LiveMigratable", "status": "True"}]}}),
        );
        assert!(migratability(&v).is_migratable());
        let v = vmi(json!({"metadata": {"name": "a"}}));
        let m = migratability(&v);
        assert_eq!(m.live_migratable, None);
        assert!(m.short().starts_with("unknown"));
    }

    #[test]
    fn storage_only_blockers_do_not_stop_live_migration() {
        // v1.9+: SCSI persistent reservations are reported on StorageLiveMigratable only.
        let v = vmi(json!({"metadata": {"name": "a"}, "status": {"conditions": [
            {"type": "LiveMigratable", "status": "True"},
            {"type": "StorageLiveMigratable", "status": "False", "reason": "NotMigratable",
             "message": "PersistentReservationNotLiveMigratable: VMI uses SCSI persistent reservation"}]}}));
        let m = migratability(&v);
        assert!(m.is_migratable());
        assert!(m.reasons.is_empty());
        assert_eq!(m.storage_reasons[0].condition, "StorageLiveMigratable");
    }

    #[test]
    fn unknown_reasons_keep_the_message() {
        let v = vmi(
            json!({"metadata": {"name": "a"}, "status": {"conditions": [{"type": "LiveMigratable", "status": "False",
            "reason": "QuantumNotLiveMigratable", "message": "VMI is entangled"}]}}),
        );
        assert_eq!(migratability(&v).reasons[0].summary, "VMI is entangled");
    }
}
