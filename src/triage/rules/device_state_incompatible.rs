//! The `device-state-incompatible` rule: its cause, what it reads, its advice and its check.
//!
//! The target's QEMU refused a device's migrated state: QEMU `virtio_load` logs `Features 0x…
//! unsupported. Allowed features: 0x…`, `Failed to load virtio-net:virtio`, `error while loading
//! state for instance 0x0 of device '…/virtio-net'`, and libvirt reports `operation failed: job
//! 'migration in' failed: load of migration failed: Operation not permitted` (kubevirt#16386:
//! after an upgrade, a guest started under an older QEMU negotiated virtio-net USO features the
//! target's host or QEMU does not offer). Data plane: QEMU on the target. The guest stays on the
//! source; every retry fails the same way until source and target agree.

use super::*;

pub(crate) const DEVICE_STATE_INCOMPATIBLE: Rule = Rule {
    cause: Cause {
        id: "device-state-incompatible",
        plane: Plane::DataPlane,
    },
    reads: &[
        "status.migrationState.failureReason",
        "Pod (source and target launcher) spec.containers[compute].image",
    ],
    advice: "The target's QEMU cannot load a device's state from the source (different QEMU, machine type or host kernel features, typically mid-upgrade). Retrying will not help: restart the VM so it starts with the target's device model, or migrate to a node whose QEMU and kernel match the source.",
    blocks: true,
    check: device_state_incompatible,
};

pub(super) fn device_state_incompatible(v: &View) -> Option<Finding> {
    let r = v.failure_reason()?;
    let s::Signature::DeviceState { device, features } = s::signature(r)? else {
        return None;
    };
    let mut f = Finding {
        evidence: failure_fact(v).into_iter().collect(),
        ..Default::default()
    };
    let (images, upgrade) = super::cpu_feature_mismatch::image_facts(v);
    f.evidence.extend(images);
    let which = device
        .map(|d| format!(" of {d}"))
        .unwrap_or_else(|| " of a device".into());
    let feats = features
        .map(|(offered, allowed)| {
            format!(
                " (the source's guest uses features 0x{offered}, the target allows 0x{allowed})"
            )
        })
        .unwrap_or_default();
    f.summary = format!(
        "The target's QEMU on {} refused the migrated state{which}{feats}: source and target do not run compatible device models. The guest still runs on {}.{}",
        tgt_node(v),
        src_node(v),
        if upgrade {
            " The launchers run different images: the upgrade changed QEMU (kubevirt#16386)."
        } else {
            ""
        }
    );
    let ns = v.namespace();
    f.next_steps.push(format!(
        "Read the target launcher's QEMU lines for the device: kubectl logs -n {ns} {} -c compute | grep -E 'Failed to load|unsupported|error while loading state'",
        or_q(v.target_pod_name.as_deref())
    ));
    f.next_steps.push(match v.vmi.and_then(|x| x.owner_vm()) {
        Some(vm) => format!(
            "A restart (downtime) lets the guest start with the target's device model; a live migration cannot: virtctl restart {vm} -n {ns}"
        ),
        None => format!(
            "Recreate the bare VMI {} so it starts with the new device model",
            v.vmi_name()
        ),
    });
    f.next_steps.push(
        "Until then, do not drain its node expecting a live migration: every retry fails the same way"
            .to_string(),
    );
    Some(f)
}
