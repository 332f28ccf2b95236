//! The `destination-volume-too-small` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const DESTINATION_VOLUME_TOO_SMALL: Rule = Rule {
    cause: Cause {
        id: "destination-volume-too-small",
        plane: Plane::DataPlane,
    },
    reads: &["status.migrationState.failureReason"],
    advice: "Volume migration needs a destination volume at least as large as the source.",
    blocks: true,
    check: destination_volume_too_small,
};

pub(super) fn destination_volume_too_small(v: &View) -> Option<Finding> {
    let r = v.failure_reason()?;
    if classify_failure(r) != FailureText::VolumeTooSmall {
        return None;
    }
    Some(Finding {
        summary: format!(
            "Volume migration failed: the destination volume is smaller than the source volume. {r}"
        ),
        evidence: failure_fact(v).into_iter().collect(),
        next_steps: vec![
            format!(
                "Recreate the destination PVC at least as large as the source (spec.resources.requests.storage; mind filesystem overhead): kubectl get pvc -n {}",
                v.namespace()
            ),
            retry_step(v),
        ],
        ..Default::default()
    })
}
