//! The `libvirt-error` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const LIBVIRT_ERROR: Rule = Rule {
    cause: Cause {
        id: "libvirt-error",
        plane: Plane::DataPlane,
    },
    reads: &["status.migrationState.failureReason"],
    advice: "libvirt or QEMU reported an error: the quoted message names it; read the launcher logs.",
    blocks: true,
    check: libvirt_error,
};

pub(super) fn libvirt_error(v: &View) -> Option<Finding> {
    let r = v.failure_reason()?;
    // A generic abort nobody asked for, without a budget to compare with, stays unknown.
    if classify_failure(r) == FailureText::GenericAbort {
        return None;
    }
    let (code, message) = s::libvirt_error(r).unwrap_or((None, r.trim().to_string()));
    let code = code
        .map(|c| format!(" (libvirt error code {c})"))
        .unwrap_or_default();
    Some(Finding {
        summary: format!("libvirt reported an error on the source{code}: \"{message}\""),
        evidence: failure_fact(v).into_iter().collect(),
        next_steps: vec![
            format!(
                "Read both launchers' logs around {}: the source ({}) and the target ({})",
                v.end
                    .map(|t| t.to_string())
                    .unwrap_or_else(|| "the failure".into()),
                or_q(v.source_pod_name.as_deref()),
                or_q(v.target_pod_name.as_deref())
            ),
            retry_step(v),
        ],
        ..Default::default()
    })
}
