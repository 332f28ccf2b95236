//! The `vmi-stopped-during-migration` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const VMI_STOPPED_DURING_MIGRATION: Rule = Rule {
    cause: Cause {
        id: "vmi-stopped-during-migration",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "Event FailedMigration on the VMIM",
        "VirtualMachineInstance status.phase (or its absence)",
    ],
    advice: "The VM stopped or was deleted while it migrated: there is nothing left to migrate. Start it again if that was not intended.",
    blocks: true,
    check: vmi_stopped_during_migration,
};

pub(super) fn vmi_stopped_during_migration(v: &View) -> Option<Finding> {
    let event = v.vmim_events().find(|e| {
        let m = event_message(e);
        m == s::VMI_SHUTDOWN || m == s::VMI_DOES_NOT_EXIST
    });
    let gone_or_stopped = v.vmi.is_none() || v.vmi_phase().is_some_and(VmiPhase::is_final);
    let inferred = event.is_none()
        && gone_or_stopped
        && v.vmim.is_some()
        && v.failure_reason().is_none()
        && v.phase == MigrationPhase::Failed;
    if event.is_none() && !inferred {
        return None;
    }
    let mut f = Finding {
        inferred,
        ..Default::default()
    };
    if let Some(e) = event {
        f.evidence.push(v.event_fact(e));
    }
    match v.vmi_phase() {
        Some(p) => f.evidence.push(v.vmi_fact("status.phase", p.as_str())),
        None if v.vmi.is_none() => {}
        None => {}
    }
    let how = match (v.vmi, v.vmi_phase()) {
        (None, _) => "the VMI was deleted".to_string(),
        (Some(_), Some(VmiPhase::Succeeded)) => "the guest shut down (VMI Succeeded)".to_string(),
        (Some(_), Some(p)) => format!("the VMI stopped (phase {p})"),
        (Some(_), None) => "the VMI stopped".to_string(),
    };
    f.summary = format!(
        "The migration failed because {how} while it was migrating: there is nothing left to migrate.{}",
        if inferred {
            " (Inferred: the migration failed without a failure reason and the VMI is no longer running.)"
        } else {
            ""
        }
    );
    let ns = v.namespace();
    f.next_steps.push(format!(
        "Find who stopped it: kubectl get events -n {ns} --field-selector involvedObject.name={}",
        v.vmi_name()
    ));
    if let Some(vm) = v.vmi.and_then(|x| x.owner_vm()) {
        f.next_steps.push(format!(
            "Start it again if that was not intended: virtctl start {vm} -n {ns}"
        ));
    }
    Some(f)
}
