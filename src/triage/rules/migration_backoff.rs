//! The `migration-backoff` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const MIGRATION_BACKOFF: Rule = Rule {
    cause: Cause {
        id: "migration-backoff",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "VirtualMachineInstanceMigration metadata.annotations[kubevirt.io/evacuationMigration|workloadUpdateMigration]",
        "status.phaseTransitionTimestamps[phase=Failed] of the VMI's earlier migrations",
        "Event MigrationBackoff on the VMI",
    ],
    advice: "After a failed evacuation or workload-update migration KubeVirt waits 20 s, doubling per further failure: fix the earlier failure.",
    blocks: true,
    check: migration_backoff,
};

pub(super) fn migration_backoff(v: &View) -> Option<Finding> {
    if !matches!(v.phase, MigrationPhase::Pending | MigrationPhase::Unset) {
        return None;
    }
    let event = newest_with_reason(v.vmi_events(), s::REASON_BACKOFF);
    let backoff = v
        .vmim
        .and_then(|m| crate::triage::history::backoff(&v.ev.migrations, m));
    let computed = backoff
        .clone()
        .filter(|b| b.until.as_second() > v.now.as_second());
    // A backoff that ended (as computed) is no reason now, unless a MigrationBackoff event
    // came after its end: then vmctl's reckoning misses something and the event is believed.
    if let (Some(b), None) = (&backoff, &computed)
        && event
            .and_then(event_last)
            .is_none_or(|t| t.as_second() <= b.until.as_second())
    {
        return None;
    }
    if computed.is_none() && event.is_none() {
        return None;
    }
    let mut f = Finding::on_event(v, event);
    let ns = v.namespace();
    match &computed {
        Some(b) => {
            f.evidence.push(Fact {
                object: format!("VirtualMachineInstanceMigration/{ns}/{}", b.previous),
                field: "status.phaseTransitionTimestamps[phase=Failed]".into(),
                value: b.previous_failed.to_string(),
                note: Some(format!(
                    "{} consecutive failed migration(s) of the VMI",
                    b.failures
                )),
            });
            let doubling = if b.failures > 1 {
                format!(
                    " (20 s after the first failure, doubled for each of the {} further ones)",
                    b.failures - 1
                )
            } else {
                " (20 s after a first failure)".to_string()
            };
            f.summary = format!(
                "KubeVirt is backing off: {} consecutive failed evacuation/workload-update migration(s) of this VMI, so it waits {}{doubling} after the last failure ({} failed at {}). The next attempt can start at {} ({}).",
                b.failures,
                dur(b.seconds),
                b.previous,
                b.previous_failed,
                b.until,
                until(v, b.until.as_second())
            );
            f.next_steps.push(format!(
                "Fix what made the last attempt fail: vmctl explain {} -n {ns}",
                b.previous
            ));
        }
        None => {
            f.summary = format!(
                "KubeVirt is backing off before retrying this migration after earlier failures ({}).",
                event.map(event_message).unwrap_or("MigrationBackoff")
            );
        }
    }
    f.next_steps.push(history_hint(ns, v.vmi_name()));
    Some(f)
}
