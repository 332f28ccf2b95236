//! The `blocked-by-utility-volumes` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const BLOCKED_BY_UTILITY_VOLUMES: Rule = Rule {
    cause: Cause {
        id: "blocked-by-utility-volumes",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "VirtualMachineInstanceMigration status.conditions[type=migrationBlockedByUtilityVolumes]",
        "Event UtilityVolumeMigrationPending / FailedMigration on the VMIM",
        "VirtualMachineInstance spec.utilityVolumes",
    ],
    advice: "A VMI with utility volumes does not migrate: detach them, or raise utilityVolumesTimeout.",
    blocks: true,
    check: blocked_by_utility_volumes,
};

pub(super) fn blocked_by_utility_volumes(v: &View) -> Option<Finding> {
    let cond = v.vmim_condition(s::COND_UTILITY_VOLUMES);
    let pending_event = newest_with_reason(v.vmim_events(), s::REASON_UTILITY_VOLUMES);
    let timeout = v
        .vmim_events()
        .find(|e| event_message(e).starts_with(s::UTILITY_VOLUMES_TIMEOUT_PREFIX));
    let applies = timeout.is_some()
        || (cond.is_some() || pending_event.is_some())
            && (matches!(v.phase, MigrationPhase::Pending | MigrationPhase::Unset)
                || (v.phase == MigrationPhase::Failed && before_streaming(v)));
    if !applies {
        return None;
    }
    let mut f = Finding::default();
    if let Some(c) = cond {
        f.evidence.push(v.vmim_fact(
            "status.conditions[type=migrationBlockedByUtilityVolumes].message",
            c.message.clone().unwrap_or_else(|| "True".into()),
        ));
    }
    for e in [pending_event, timeout].into_iter().flatten() {
        f.evidence.push(v.event_fact(e));
    }
    let names: Vec<String> = v
        .vmi
        .map(|x| {
            x.spec
                .utility_volumes
                .iter()
                .filter_map(|u| u.get("name").and_then(|n| n.as_str()).map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if !names.is_empty() {
        f.evidence
            .push(v.vmi_fact("spec.utilityVolumes[*].name", names.join(", ")));
    }
    let limit = v
        .state
        .and_then(|st| st.migration_configuration.as_ref())
        .and_then(|c| c.utility_volumes_timeout)
        .or_else(|| {
            v.ev.kubevirt
                .as_ref()
                .and_then(|k| k.spec.configuration.migrations.as_ref())
                .and_then(|m| m.utility_volumes_timeout)
        })
        .unwrap_or(150) as i64;
    let vols = if names.is_empty() {
        "its utility volumes".to_string()
    } else {
        format!("its utility volumes ({})", names.join(", "))
    };
    f.summary = if let Some(e) = timeout {
        format!(
            "The migration failed because {vols} were still attached after the timeout: {}",
            event_message(e)
        )
    } else {
        let deadline = v
            .created
            .map(|c| {
                let d = c.as_second() + limit;
                format!(
                    "; it fails at {} ({}), utilityVolumesTimeout {limit} s after creation",
                    ts_string(d),
                    until(v, d)
                )
            })
            .unwrap_or_default();
        format!("The migration waits for {vols} to detach from the VMI{deadline}.")
    };
    f.next_steps.push(format!(
        "Detach the utility volumes (remove them from spec.utilityVolumes of the VM: kubectl edit vm {} -n {}) or let the job using them finish",
        v.vmi.and_then(|x| x.owner_vm()).unwrap_or(v.vmi_name()),
        v.namespace()
    ));
    f.next_steps.push(format!(
        "Or give them more time: {}",
        v.patch_kubevirt_migrations("utilityVolumesTimeout", &(limit * 2).to_string())
    ));
    Some(f)
}
