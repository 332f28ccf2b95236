//! The sides of a decentralized (cross-cluster) migration, KubeVirt v1.6+ (FACTS §12): its
//! role, peer and which side runs the guest, from the VMIM's `spec.sendTo`/`spec.receive` and
//! migrationState's `sourceState`/`targetState`. Plain objects in, plain data out: the view
//! and the v1.9 helpers both read it.

use serde::Serialize;

use crate::model::vmi::{MigrationMode, MigrationState, SideState};
use crate::model::vmim::{DecentralizedRole, MigrationPhase};
use crate::model::{VirtualMachineInstance, VirtualMachineInstanceMigration};

/// One side of a decentralized migration as reported in `sourceState`/`targetState`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SideInfo {
    pub node: Option<String>,
    pub pod: Option<String>,
    pub sync_address: Option<String>,
}

/// A decentralized (cross-cluster) migration, as `explain` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecentralizedInfo {
    /// `sender` (spec.sendTo) or `receiver` (spec.receive).
    pub role: DecentralizedRole,
    /// `spec.sendTo.migrationID` / `spec.receive.migrationID`: the peer VMIM carries the same.
    pub migration_id: Option<String>,
    /// `spec.sendTo.connectURL`: the peer cluster's synchronization address (sender only).
    pub connect_url: Option<String>,
    /// `status.synchronizationAddresses`: where this cluster's synchronization controller listens.
    pub synchronization_addresses: Vec<String>,
    /// `migrationState.sourceState` / `targetState`.
    pub source: Option<SideInfo>,
    pub target: Option<SideInfo>,
    /// Which side runs the guest now: `source` or `target`.
    pub live_side: String,
    /// True when the live side is in this cluster.
    pub live_here: bool,
}

fn side(s: Option<&SideState>) -> Option<SideInfo> {
    let s = s?;
    Some(SideInfo {
        node: s.node.clone(),
        pod: s.pod.clone(),
        sync_address: s.sync_address.clone(),
    })
}

/// The side that runs the guest: the source until the migration completes successfully
/// (or switches to post-copy), the target after.
fn target_is_live(phase: &MigrationPhase, state: Option<&MigrationState>) -> bool {
    *phase == MigrationPhase::Succeeded
        || state.is_some_and(|st| {
            st.mode == Some(MigrationMode::PostCopy) || (st.completed && !st.failed)
        })
}

/// The migrationState whose sides describe this migration: its own, else the VMI's when a
/// side names this migration (`sourceState`/`targetState.migrationUID`); never another
/// migration's.
pub(crate) fn sides_state<'a>(
    vmim: Option<&VirtualMachineInstanceMigration>,
    vmi: Option<&'a VirtualMachineInstance>,
    state: Option<&'a MigrationState>,
) -> Option<&'a MigrationState> {
    let uid = vmim.and_then(|m| m.uid())?;
    state.or_else(|| {
        vmi.and_then(|x| x.status.migration_state.as_ref())
            .filter(|st| {
                [st.source_state.as_ref(), st.target_state.as_ref()]
                    .into_iter()
                    .flatten()
                    .any(|side| side.migration_uid.as_deref() == Some(uid))
            })
    })
}

/// `vmim`, `vmi`, `state` (the migrationState that describes `vmim`) and `phase` as the
/// view joined them.
pub(crate) fn decentralized_info(
    vmim: Option<&VirtualMachineInstanceMigration>,
    vmi: Option<&VirtualMachineInstance>,
    state: Option<&MigrationState>,
    phase: &MigrationPhase,
) -> Option<DecentralizedInfo> {
    let m = vmim?;
    let role = m.decentralized_role()?;
    let st = sides_state(vmim, vmi, state);
    let target_live = target_is_live(phase, state);
    let live_here = match role {
        DecentralizedRole::Sender => !target_live,
        DecentralizedRole::Receiver => target_live,
    };
    Some(DecentralizedInfo {
        role,
        migration_id: m.decentralized_id().map(str::to_string),
        connect_url: m.spec.send_to.as_ref().and_then(|s| s.connect_url.clone()),
        synchronization_addresses: m.status.synchronization_addresses.clone(),
        source: side(st.and_then(|st| st.source_state.as_ref())),
        target: side(st.and_then(|st| st.target_state.as_ref())),
        live_side: if target_live { "target" } else { "source" }.into(),
        live_here,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn vmim(spec: serde_json::Value) -> VirtualMachineInstanceMigration {
        serde_json::from_value(json!({
            "metadata": {"name": "m", "namespace": "ns", "uid": "u-1"},
            "spec": spec,
        }))
        .unwrap()
    }

    fn vmi(state: serde_json::Value) -> VirtualMachineInstance {
        serde_json::from_value(json!({
            "metadata": {"name": "a", "namespace": "ns", "uid": "vmi-1"},
            "status": {"migrationState": state},
        }))
        .unwrap()
    }

    #[test]
    fn an_ordinary_migration_has_no_sides() {
        let m = vmim(json!({"vmiName": "a"}));
        assert_eq!(
            decentralized_info(Some(&m), None, None, &MigrationPhase::Running),
            None
        );
        assert_eq!(
            decentralized_info(None, None, None, &MigrationPhase::Running),
            None
        );
    }

    #[test]
    fn the_sender_runs_the_guest_until_the_migration_succeeds() {
        let m = vmim(
            json!({"vmiName": "a", "sendTo": {"migrationID": "x", "connectURL": "peer:9185"}}),
        );
        let running = decentralized_info(Some(&m), None, None, &MigrationPhase::Running).unwrap();
        assert_eq!(running.role, DecentralizedRole::Sender);
        assert_eq!(running.migration_id.as_deref(), Some("x"));
        assert_eq!(running.connect_url.as_deref(), Some("peer:9185"));
        assert_eq!(
            (running.live_side.as_str(), running.live_here),
            ("source", true)
        );
        let done = decentralized_info(Some(&m), None, None, &MigrationPhase::Succeeded).unwrap();
        assert_eq!((done.live_side.as_str(), done.live_here), ("target", false));
    }

    #[test]
    fn the_vmis_sides_count_only_when_they_name_this_migration() {
        let m = vmim(json!({"vmiName": "a", "receive": {"migrationID": "x"}}));
        let mine = vmi(json!({
            "sourceState": {"node": "src", "pod": "virt-launcher-a-1", "migrationUID": "peer-u"},
            "targetState": {"node": "dst", "migrationUID": "u-1"}}));
        let info = decentralized_info(Some(&m), Some(&mine), None, &MigrationPhase::Synchronizing)
            .unwrap();
        assert_eq!(info.role, DecentralizedRole::Receiver);
        assert_eq!(
            info.source.and_then(|s| s.pod).as_deref(),
            Some("virt-launcher-a-1")
        );
        assert_eq!(info.target.and_then(|s| s.node).as_deref(), Some("dst"));
        assert!(
            !info.live_here,
            "the receiver's guest runs in the peer cluster until the end"
        );
        let stale = vmi(json!({
            "sourceState": {"node": "old", "migrationUID": "u-old"},
            "targetState": {"node": "old-dst", "migrationUID": "u-old-peer"}}));
        let info = decentralized_info(Some(&m), Some(&stale), None, &MigrationPhase::Synchronizing)
            .unwrap();
        assert!(info.source.is_none() && info.target.is_none(), "{info:?}");
    }
}
