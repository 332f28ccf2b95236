//! The `postcopy-unsupported` rule (kubevirt#17780: post-copy without userfaultfd): its
//! cause, what it reads, its advice and its check.

use super::*;

/// Substrings (lower case) of QEMU's refusal to enable post-copy without userfaultfd.
pub const POSTCOPY_UNSUPPORTED_TEXTS: &[&str] =
    &["userfaultfd not available", "postcopy is not supported"];

pub(crate) const POSTCOPY_UNSUPPORTED: Rule = Rule {
    cause: Cause {
        id: "postcopy-unsupported",
        plane: Plane::DataPlane,
    },
    reads: &[
        "status.migrationState.failureReason",
        "Event Migrated on the VMI (migration uid … failed. reason:…)",
    ],
    advice: "QEMU on the target cannot use userfaultfd, so a migration that allows post-copy fails as it sets its capabilities: set the vm.unprivileged_userfaultfd sysctl to 1 on every node, or disable post-copy.",
    blocks: true,
    check: postcopy_unsupported,
};

pub(super) fn is_postcopy_unsupported(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    POSTCOPY_UNSUPPORTED_TEXTS.iter().any(|t| lower.contains(t))
}

pub(super) fn postcopy_unsupported(v: &View) -> Option<Finding> {
    let reason = v.failure_reason().filter(|r| is_postcopy_unsupported(r));
    let event = v.newest_event(|e| {
        event_is_warning(e)
            && (event_reason(e) == s::REASON_MIGRATED
                || event_reason(e) == s::REASON_FAILED_MIGRATION)
            && is_postcopy_unsupported(event_message(e))
    });
    let text = reason.or(event.map(event_message))?;
    let mut f = Finding::default();
    if let Some(r) = reason {
        f.evidence
            .push(v.state_fact("failureReason", r.to_string()));
    }
    if let Some(e) = event {
        f.evidence.push(v.event_fact(e));
    }
    let detail = s::libvirt_error(text)
        .map(|(_, m)| m)
        .unwrap_or_else(|| text.trim().to_string());
    let target = v
        .state
        .and_then(|st| st.target_node.as_deref())
        .or_else(|| v.target_pod.and_then(pod_node))
        .unwrap_or("the target node");
    f.summary = format!(
        "Post-copy is not available on {target}: QEMU could not open userfaultfd, so the migration failed as it enabled post-copy (\"{detail}\"). Kernels since 5.11 forbid unprivileged userfaultfd unless vm.unprivileged_userfaultfd=1; the guest stays where it was."
    );
    f.next_steps.push(format!(
        "On every node that receives migrations ({target} first): sysctl -w vm.unprivileged_userfaultfd=1, and make it permanent (a file in /etc/sysctl.d/, or your distribution's node tuning/MachineConfig)"
    ));
    f.next_steps.push(format!(
        "Or stop asking for post-copy: {}",
        v.patch_setting("allowPostCopy", "false")
    ));
    f.next_steps.push(retry_step(v));
    Some(f)
}
