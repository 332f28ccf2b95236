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

/// Who asked for an abort, as far as the objects tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Requester {
    /// The VMIM was deleted before the migration ended (virtctl migrate-cancel, kubectl
    /// delete): `migrationAbortRequested`, the VMI's `abortRequested`, or the deletion itself.
    User,
    /// The VMIM is there, was not deleted before the end, and nothing records a request: the
    /// migration monitor (or the stall detector) aborted it.
    Monitor,
    /// The VMIM is gone (so its deletion and conditions cannot be read) and the VMI records
    /// no request: a cancel and a monitor abort look alike.
    Unknown,
}

pub(crate) struct Requested {
    pub by: Requester,
    /// The facts that decided it.
    pub facts: Vec<Fact>,
}

/// The VMIM's deletionTimestamp when it came before the migration ended (within the monitor's
/// few seconds of finalisation): KubeVirt treats such a deletion as an abort request
/// (FACTS §3.5). A deletion after the end is clean-up (garbage collection of finalised VMIMs).
pub(crate) fn deleted_before_end<'a>(
    v: &View<'a>,
) -> Option<&'a k8s_openapi::apimachinery::pkg::apis::meta::v1::Time> {
    let d = v.vmim?.metadata.deletion_timestamp.as_ref()?;
    match v.end {
        Some(end) if d.0.as_second() > end.as_second() + BUDGET_SLACK_SECONDS => None,
        _ => Some(d),
    }
}

/// Separates a user's cancel from the migration monitor's own abort: on v1.9+ both end with
/// `Live migration has been aborted` and `abortStatus: Succeeded` (main, PR #18147: written
/// for every successful abort), so only the request tells them apart.
pub(crate) fn requester(v: &View) -> Requested {
    let mut facts = Vec::new();
    if v.state.is_some_and(|st| st.abort_requested) {
        facts.push(v.state_fact("abortRequested", "true"));
    }
    if v.vmim_condition(s::COND_ABORT_REQUESTED).is_some() {
        facts.push(v.vmim_fact("status.conditions[type=migrationAbortRequested]", "True"));
    }
    if let Some(d) = deleted_before_end(v) {
        let mut fact = v.vmim_fact("metadata.deletionTimestamp", d.0.to_string());
        fact.note = Some("deleted before the migration ended: an abort request".into());
        facts.push(fact);
    }
    if let Some((_, fact)) = vmctl_abort(v) {
        facts.push(fact);
    }
    if !facts.is_empty() {
        return Requested {
            by: Requester::User,
            facts,
        };
    }
    if v.state.is_some() {
        facts.push(v.state_fact("abortRequested", "not set"));
    }
    match v.vmim {
        Some(m) => {
            facts.push(
                v.vmim_fact(
                    "metadata.deletionTimestamp",
                    m.metadata
                        .deletion_timestamp
                        .as_ref()
                        .map(|t| format!("{} (after the end: clean-up)", t.0))
                        .unwrap_or_else(|| "not set".into()),
                ),
            );
            Requested {
                by: Requester::Monitor,
                facts,
            }
        }
        None => Requested {
            by: Requester::Unknown,
            facts,
        },
    }
}

pub(super) fn aborted_by_request(v: &View) -> Option<Finding> {
    let canceled = v
        .vmim_events()
        .find(|e| event_reason(e) == s::REASON_FAILED_MIGRATION && event_message(e) == s::CANCELED);
    let v18_user_abort = v
        .failure_reason()
        .is_some_and(|r| classify_failure(r) == FailureText::UserAbortV18);
    let deleted = deleted_before_end(v).filter(|_| {
        // A deletion is a request only where an abort shows: a generic abort, an abort status,
        // or a migration still under way.
        !v.is_final()
            || v.state.is_some_and(|st| st.abort_status.is_some())
            || v.failure_reason()
                .is_some_and(|r| classify_failure(r) == FailureText::GenericAbort)
    });
    // Where an abort shows, as for a deletion.
    let asked_by_vmctl = vmctl_abort(v).is_some()
        && (!v.is_final()
            || v.state.is_some_and(|st| st.abort_status.is_some())
            || v.failure_reason()
                .is_some_and(|r| classify_failure(r) == FailureText::GenericAbort));
    if !(v.abort_requested()
        || canceled.is_some()
        || v18_user_abort
        || deleted.is_some()
        || asked_by_vmctl)
    {
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
    if let Some(d) = deleted
        && !v.abort_requested()
    {
        let mut fact = v.vmim_fact("metadata.deletionTimestamp", d.0.to_string());
        fact.note = Some("deleted before the migration ended: an abort request".into());
        f.evidence.push(fact);
    }
    f.evidence.extend(failure_fact(v));
    if let Some(e) = canceled {
        f.evidence.push(v.event_fact(e));
    }
    let by_vmctl = vmctl_abort(v).map(|(who, fact)| {
        f.evidence.push(fact);
        who
    });
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
        _ => match by_vmctl {
            Some(who) => format!(
                "The migration was aborted on request{requested_at} by {who} (vmctl deleted its VMIM) {how}: nothing is broken, the guest stays on {}.",
                src_node(v)
            ),
            None => format!(
                "The migration was aborted on request{requested_at} (its VMIM was deleted, e.g. by virtctl migrate-cancel) {how}: nothing is broken, the guest stays on {}.",
                src_node(v)
            ),
        },
    };
    // Who asked is known when vmctl asked (it says so on the VMIM before deleting it).
    if by_vmctl.is_none() {
        f.next_steps.push(
            "Find out who asked for it: the VMIM's deletion (API server audit log, or whoever ran virtctl migrate-cancel)"
                .to_string(),
        );
    }
    let owner = v.vmi.and_then(|x| x.owner_vm());
    f.next_steps.push(match (by_vmctl, owner) {
        (None, Some(vm)) => format!("Migrate again when ready: virtctl migrate {vm} -n {ns}"),
        // vmctl creates the VirtualMachineInstanceMigration of a bare VMI.
        _ => format!(
            "Migrate again when ready: vmctl migrate {} -n {ns}",
            owner.unwrap_or(v.vmi_name())
        ),
    });
    Some(f)
}

/// vmctl's own abort: the annotation it sets on a VMIM before deleting it, with its value
/// (who asked), as a fact.
pub(crate) fn vmctl_abort<'a>(v: &View<'a>) -> Option<(&'a str, Fact)> {
    let who = v
        .vmim?
        .annotation(crate::model::vmim::ABORT_REQUESTED_BY_ANNOTATION)?;
    let mut fact = v.vmim_fact(
        &format!(
            "metadata.annotations[{}]",
            crate::model::vmim::ABORT_REQUESTED_BY_ANNOTATION
        ),
        who,
    );
    fact.note =
        Some("vmctl set it just before it deleted the VMIM: vmctl asked for the abort".into());
    Some((who, fact))
}
