//! The `blocked-by-backup` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const BLOCKED_BY_BACKUP: Rule = Rule {
    cause: Cause {
        id: "blocked-by-backup",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "VirtualMachineInstanceMigration status.conditions[type=migrationBlockedByBackup]",
        "status.migrationState.failureReason",
        "Event BackupAbortedForMigration / BackupAbortFailed",
    ],
    advice: "A VMI does not migrate while a backup runs: wait for it or cancel it.",
    blocks: true,
    check: blocked_by_backup,
};

pub(super) fn blocked_by_backup(v: &View) -> Option<Finding> {
    let cond = v.vmim_condition(s::COND_BACKUP);
    let launcher = v
        .failure_reason()
        .filter(|r| r.contains(s::BACKUP_IN_PROGRESS_LAUNCHER));
    let abort_failed = v
        .vmim_events()
        .find(|e| event_reason(e) == s::REASON_BACKUP_ABORT_FAILED);
    let pending = matches!(v.phase, MigrationPhase::Pending | MigrationPhase::Unset);
    if !(launcher.is_some() || (pending && (cond.is_some() || abort_failed.is_some()))) {
        return None;
    }
    let mut f = Finding::default();
    let message = cond.and_then(|c| c.message.clone());
    if let Some(c) = cond {
        f.evidence.push(v.vmim_fact(
            "status.conditions[type=migrationBlockedByBackup].message",
            c.message.clone().unwrap_or_else(|| "True".into()),
        ));
    }
    f.evidence.extend(launcher.and_then(|_| failure_fact(v)));
    if let Some(e) = abort_failed {
        f.evidence.push(v.event_fact(e));
    }
    if let Some(b) = v
        .vmi
        .and_then(|x| x.status.changed_block_tracking.as_ref())
        .and_then(|c| c.get("backupStatus"))
    {
        f.evidence
            .push(v.vmi_fact("status.changedBlockTracking.backupStatus", b.to_string()));
    }
    f.summary = match (launcher, message) {
        (Some(r), _) => format!("The source launcher refused to migrate while a backup runs: {r}."),
        (None, Some(m)) if m.starts_with("Aborting backup") => format!(
            "This system-critical migration is aborting the VMI's backup before it can proceed ({m}){}.",
            if abort_failed.is_some() {
                ", but the abort failed (BackupAbortFailed)"
            } else {
                ""
            }
        ),
        (None, Some(m)) => format!(
            "The migration waits while the VMI is being backed up ({m}); it proceeds when the backup completes."
        ),
        (None, None) => {
            "The migration waits while the VMI is being backed up; it proceeds when the backup completes.".to_string()
        }
    };
    f.next_steps.push(format!(
        "Watch the backup: kubectl get vmi {} -n {} -o jsonpath='{{.status.changedBlockTracking.backupStatus}}'",
        v.vmi_name(),
        v.namespace()
    ));
    f.next_steps.push(
        "Wait for it to complete, or cancel the backup if the migration is more urgent".into(),
    );
    Some(f)
}
