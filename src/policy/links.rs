//! The labels KubeVirt links a virt-launcher pod with: to its VMI, and (a migration target) to
//! its migration. The indexes key pods by them and `pods` reads them, so they live below both.

/// The VMI's UID on each of its launcher pods (`CreatedByLabel` in
/// kubevirt/kubevirt staging/src/kubevirt.io/api/core/v1/types.go).
pub const CREATED_BY_LABEL: &str = "kubevirt.io/created-by";

/// The VMIM's UID on the migration target pod (`MigrationJobLabel` in
/// kubevirt/kubevirt staging/src/kubevirt.io/api/core/v1/types.go).
pub const MIGRATION_JOB_UID_LABEL: &str = "kubevirt.io/migrationJobUID";
