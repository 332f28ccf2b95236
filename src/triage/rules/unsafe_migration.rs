//! The `unsafe-migration` rule: its cause, what it reads, its advice and its check.
//!
//! libvirt `qemuMigrationSrcIsSafe` refuses a migration it cannot make safe with
//! `VIR_ERR_MIGRATE_UNSAFE` (code 81): `Unsafe migration: <why>`, e.g. `Migration without shared
//! storage is unsafe` (kubevirt#10094) or a disk cache mode other than none/directsync. KubeVirt
//! passes `VIR_MIGRATE_UNSAFE` only with `unsafeMigrationOverride` (FACTS §5.1). Nothing was
//! sent; the guest stays on the source. Data plane: libvirt on the source refused.

use super::*;

pub(crate) const UNSAFE_MIGRATION: Rule = Rule {
    cause: Cause {
        id: "unsafe-migration",
        plane: Plane::DataPlane,
    },
    reads: &[
        "status.migrationState.{failureReason,migrationConfiguration.unsafeMigrationOverride}",
    ],
    advice: "libvirt refused to start the migration because it could corrupt the guest's disks (storage not shared between the nodes, or a disk cache mode other than none/directsync). Fix the storage (ReadWriteMany, cache none), not the check; unsafeMigrationOverride is a last resort.",
    blocks: true,
    check: unsafe_migration,
};

pub(super) fn unsafe_migration(v: &View) -> Option<Finding> {
    let r = v.failure_reason()?;
    let s::Signature::Unsafe { why } = s::signature(r)? else {
        return None;
    };
    let mut f = Finding {
        evidence: failure_fact(v).into_iter().collect(),
        ..Default::default()
    };
    let overridden = v
        .state
        .and_then(|st| st.migration_configuration.as_ref())
        .and_then(|c| c.unsafe_migration_override);
    if let Some(o) = overridden {
        f.evidence.push(v.state_fact(
            "migrationConfiguration.unsafeMigrationOverride",
            o.to_string(),
        ));
    }
    f.summary = format!(
        "libvirt on {} refused to start the migration as unsafe: \"{why}\". Nothing was copied; the guest still runs there.",
        src_node(v)
    );
    f.next_steps.push(format!(
        "Check the VMI's volumes are on storage both nodes share (ReadWriteMany PVCs) and its disks use cache none or directsync: kubectl get vmi {} -n {} -o jsonpath='{{.spec.domain.devices.disks}}'",
        v.vmi_name(),
        v.namespace()
    ));
    f.next_steps.push(format!(
        "Only if the storage is known to be coherent (a cluster filesystem libvirt does not recognise): {}",
        v.patch_kubevirt_migrations("unsafeMigrationOverride", "true")
    ));
    f.next_steps.push(retry_step(v));
    Some(f)
}
