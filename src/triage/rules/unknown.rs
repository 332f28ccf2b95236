//! The `unknown` rule: it matches everything and comes last; its summary says what is
//! missing.

use super::*;

pub(crate) const UNKNOWN: Rule = Rule {
    cause: Cause {
        id: "unknown",
        plane: Plane::Unknown,
    },
    reads: &[
        "VirtualMachineInstanceMigration status",
        "VirtualMachineInstance status.migrationState",
        "Event (all of the above)",
    ],
    advice: "Nothing on record explains the outcome; the summary says which fields are missing. Read the virt-controller log and the launcher logs.",
    blocks: true,
    check: unknown,
};

pub(super) fn unknown(v: &View) -> Option<Finding> {
    let mut f = Finding::default();
    let ns = v.namespace();
    if !v.has_migration() {
        f.summary = format!(
            "Neither a migration nor the VMI {ns}/{} was found: there is nothing to diagnose.",
            v.vmi_name()
        );
        return Some(f);
    }
    if v.vmim.is_some_and(|m| m.status.phase.is_none()) {
        f.summary = format!(
            "The migration has no status at all{}: virt-controller has not processed it. Is virt-controller running and healthy?",
            v.age()
                .map(|a| format!(" ({} after its creation)", dur(a)))
                .unwrap_or_default()
        );
        f.next_steps
            .push("kubectl get pods -n kubevirt -l kubevirt.io=virt-controller".into());
        f.next_steps.push(
            "kubectl logs -n kubevirt -l kubevirt.io=virt-controller --tail=200 | grep -i migration"
                .into(),
        );
        return Some(f);
    }
    let failed_event = newest_with_reason(v.vmim_events(), s::REASON_FAILED_MIGRATION);
    if let Some(e) = failed_event {
        f.evidence.push(v.event_fact(e));
    }
    f.evidence.extend(failure_fact(v));
    let mut missing = Vec::new();
    if v.state.is_none() {
        missing.push(if v.other_state.is_some() {
            "this migration's migrationState (the VMI's describes another migration)".to_string()
        } else {
            "status.migrationState".to_string()
        });
    } else if v.failure_reason().is_none() {
        missing.push("status.migrationState.failureReason".into());
    }
    if failed_event.is_none() {
        missing.push("a FailedMigration event (events expire after an hour)".into());
    }
    let generic = v
        .failure_reason()
        .is_some_and(|r| classify_failure(r) == FailureText::GenericAbort);
    f.summary = if generic {
        format!(
            "The migration monitor aborted it (\"{}\", nobody requested it), but vmctl cannot tell a stalled copy from an exhausted completion budget: {}.",
            v.failure_reason().unwrap_or("").trim(),
            if v.budget.is_none() {
                "the guest's memory size is unknown (the VMI is gone)"
            } else {
                "the start or end time is missing"
            }
        )
    } else {
        format!(
            "The migration is {} but nothing on record says why{}. Missing: {}.",
            v.phase,
            failed_event
                .map(|e| format!(" beyond \"{}\"", event_message(e)))
                .unwrap_or_default(),
            missing.join(", ")
        )
    };
    if let Some(p) = v.source_pod.or(v.log_pod()) {
        f.next_steps.push(format!(
            "Read the source launcher's log: kubectl logs -n {ns} {} -c compute | grep -i migration",
            pod_name(p)
        ));
    }
    let grep_for = match v.vmim {
        Some(m) => m.name().to_string(),
        None => v.vmi_name().to_string(),
    };
    f.next_steps.push(format!(
        "Read virt-controller's log: kubectl logs -n kubevirt -l kubevirt.io=virt-controller --tail=500 | grep -i {grep_for}"
    ));
    Some(f)
}
