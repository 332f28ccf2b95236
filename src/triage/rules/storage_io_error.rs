//! The `storage-io-error` rule: its cause, what it reads, its advice and its check.
//!
//! libvirt `qemuMigrationAnyCompleted` (`src/qemu/qemu_migration.c`): the guest was paused on a
//! disk I/O error (VIR_DOMAIN_PAUSED_IOERROR) during the migration, which libvirt reports as
//! `operation failed: job 'migration out' failed due to I/O error` and aborts. Data plane: the
//! storage under the guest's disks (full, read-only, or gone), not the network.

use super::*;

pub(crate) const STORAGE_IO_ERROR: Rule = Rule {
    cause: Cause {
        id: "storage-io-error",
        plane: Plane::DataPlane,
    },
    reads: &[
        "status.migrationState.failureReason",
        "VirtualMachineInstance status.conditions[type=Paused]",
    ],
    advice: "The guest hit a disk I/O error during the migration (its storage is full, read-only or unreachable) and libvirt aborted the migration. Fix the storage first; the guest may be paused on the source until then.",
    blocks: true,
    check: storage_io_error,
};

pub(super) fn storage_io_error(v: &View) -> Option<Finding> {
    let r = v.failure_reason()?;
    let s::Signature::StorageIo { job } = s::signature(r)? else {
        return None;
    };
    let mut f = Finding {
        evidence: failure_fact(v).into_iter().collect(),
        ..Default::default()
    };
    let paused = v.vmi_condition("Paused").filter(|c| c.is_true());
    if let Some(c) = paused {
        f.evidence.push(v.vmi_fact(
            "status.conditions[type=Paused].reason",
            c.reason.clone().unwrap_or_default(),
        ));
    }
    f.summary = format!(
        "The {job} job failed because the guest hit a disk I/O error on {}: libvirt stops a migration whose guest paused on an I/O error. The storage, not the network, failed{}.",
        src_node(v),
        if paused.is_some() {
            "; the VMI is still paused"
        } else {
            ""
        }
    );
    let ns = v.namespace();
    f.next_steps.push(format!(
        "Find the disk and the error in the source launcher's log: kubectl logs -n {ns} {} -c compute | grep -iE 'I/O error|ENOSPC|No space left'",
        or_q(v.source_pod_name.as_deref())
    ));
    f.next_steps.push(format!(
        "Check the VMI's PVCs and their backing storage (capacity, read-only remount, the storage backend's health): kubectl get pvc -n {ns}"
    ));
    f.next_steps.push(retry_step(v));
    Some(f)
}
