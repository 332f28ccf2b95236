//! The `aborted-by-request` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const ABORTED_BY_REQUEST: Rule = Rule {
    cause: Cause {
        id: "aborted-by-request",
        plane: Plane::None,
    },
    reads: &[
        "status.migrationState.{abortRequested,abortStatus,failureReason}",
        "VirtualMachineInstanceMigration status.conditions[type=migrationAbortRequested]",
        "VirtualMachineInstanceMigration metadata.deletionTimestamp",
        "Event FailedMigration on the VMIM",
    ],
    advice: "Someone deleted the migration (virtctl migrate-cancel, kubectl delete vmim): nothing is broken. Migrate again when ready.",
    blocks: false,
    check: aborted_by_request,
};

pub(super) fn aborted_by_request(v: &View) -> Option<Finding> {
    let canceled = v
        .vmim_events()
        .find(|e| event_reason(e) == s::REASON_FAILED_MIGRATION && event_message(e) == s::CANCELED);
    let v18_user_abort = v
        .failure_reason()
        .is_some_and(|r| classify_failure(r) == FailureText::UserAbortV18);
    if !(v.abort_requested() || canceled.is_some() || v18_user_abort) {
        return None;
    }
    let mut f = Finding::default();
    if let Some(st) = v.state
        && st.abort_requested
    {
        f.evidence.push(v.state_fact("abortRequested", "true"));
    }
    if let Some(c) = v.vmim_condition(s::COND_ABORT_REQUESTED) {
        let when = c
            .last_transition_time
            .as_ref()
            .or(c.last_probe_time.as_ref())
            .map(|t| t.0.to_string())
            .unwrap_or_else(|| "True".into());
        f.evidence.push(v.vmim_fact(
            "status.conditions[type=migrationAbortRequested]",
            format!("True ({when})"),
        ));
    }
    if let Some(st) = v.state
        && let Some(a) = &st.abort_status
    {
        f.evidence.push(v.state_fact("abortStatus", a.as_str()));
    }
    f.evidence.extend(failure_fact(v));
    if let Some(e) = canceled {
        f.evidence.push(v.event_fact(e));
    }
    let requested_at = v
        .vmim
        .and_then(|m| m.metadata.deletion_timestamp.as_ref())
        .map(|t| format!(" at {}", t.0))
        .unwrap_or_default();
    let abort_status = v.state.and_then(|st| st.abort_status.as_ref());
    let ns = v.namespace();
    if !v.is_final() {
        f.summary = format!(
            "An abort was requested{requested_at} and is under way (abortStatus {}): the guest stays on {}.",
            abort_status
                .map(|a| a.as_str())
                .unwrap_or("not reported yet"),
            src_node(v)
        );
        return Some(f);
    }
    f.outcome = Some(Outcome::Aborted);
    let how = if v.start.is_none() {
        "before any memory was copied (the target pod was deleted)".to_string()
    } else {
        format!("after {} of streaming", dur(v.elapsed().unwrap_or(0)))
    };
    f.summary = match abort_status {
        Some(AbortStatus::Failed) => format!(
            "An abort was requested{requested_at}, but the abort itself failed (abortStatus Failed) and the migration failed anyway {how}; the guest stays on {}.",
            src_node(v)
        ),
        _ => format!(
            "The migration was aborted on request{requested_at} (its VMIM was deleted, e.g. by virtctl migrate-cancel) {how}: nothing is broken, the guest stays on {}.",
            src_node(v)
        ),
    };
    f.next_steps.push(
        "Find out who asked for it: the VMIM's deletion (API server audit log, or whoever ran virtctl migrate-cancel)"
            .to_string(),
    );
    f.next_steps.push(match v.vmi.and_then(|x| x.owner_vm()) {
        Some(vm) => format!("Migrate again when ready: virtctl migrate {vm} -n {ns}"),
        None => format!(
            "Migrate again when ready: create a VirtualMachineInstanceMigration with spec.vmiName: {}",
            v.vmi_name()
        ),
    });
    Some(f)
}
