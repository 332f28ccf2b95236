//! The `no-migration` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const NO_MIGRATION: Rule = Rule {
    cause: Cause {
        id: "no-migration",
        plane: Plane::None,
    },
    reads: &[
        "VirtualMachineInstanceMigration (label kubevirt.io/vmi-name)",
        "VirtualMachineInstance status.conditions[type=LiveMigratable]",
    ],
    advice: "The VMI has no migration on record and nothing stops one: start one if needed.",
    blocks: false,
    check: no_migration,
};

pub(super) fn no_migration(v: &View) -> Option<Finding> {
    if v.has_migration() {
        return None;
    }
    let ns = v.namespace();
    let vmi = v.vmi?;
    let live = v.migratability.as_ref().and_then(|m| m.live_migratable);
    let mut f = Finding::default();
    f.evidence.push(v.vmi_fact(
        "status.conditions[type=LiveMigratable].status",
        match live {
            Some(true) => "True",
            Some(false) => "False",
            None => "(absent)",
        },
    ));
    if let Some(st) = v.other_state {
        f.evidence.push(v.vmi_fact(
            "status.migrationState.migrationUid",
            st.migration_uid.clone().unwrap_or_default(),
        ));
    }
    let last = v
        .other_state
        .filter(|st| st.completed)
        .map(|st| {
            format!(
                " Its last migration on record{} ended {} at {}{}; that migration object is gone.",
                st.migration_uid
                    .as_deref()
                    .map(|u| format!(" (uid {u})"))
                    .unwrap_or_default(),
                if st.failed {
                    "in failure"
                } else {
                    "successfully"
                },
                st.end_timestamp
                    .as_ref()
                    .map(|t| t.0.to_string())
                    .unwrap_or_else(|| "?".into()),
                st.failure_reason
                    .as_deref()
                    .map(|r| format!(" ({})", r.trim()))
                    .unwrap_or_default()
            )
        })
        .unwrap_or_default();
    f.summary = format!(
        "The VMI has no migration on record{}.{last}",
        match live {
            Some(true) => " and nothing stops one: it is live-migratable",
            Some(false) => "",
            None => "; virt-handler has not reported whether it is live-migratable",
        }
    );
    f.next_steps.push(match vmi.owner_vm() {
        Some(vm) => format!("Start one if needed: virtctl migrate {vm} -n {ns}"),
        None => format!(
            "Start one if needed: create a VirtualMachineInstanceMigration with spec.vmiName: {}",
            v.vmi_name()
        ),
    });
    Some(f)
}
