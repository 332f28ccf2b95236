//! The `target-preparation-failed` rule: its cause, what it reads, its advice and its check.
//!
//! virt-handler on the target node prepares the migration target (`processVMI`,
//! `pkg/virt-handler/migration-target.go`) and, when a step fails, records a Warning event
//! `SyncFailed` on the VMI with the error: `unable to create virt-launcher client connection:
//! …`, `failed to configure vmi network for migration target: …` (kubevirt#3382: `… Link not
//! found`), `syncing migration target failed: …`, `failed to adjust resources on migration
//! target: …`, `failed to handle post sync migration proxy: …`. It retries; the migration stays
//! before streaming until it succeeds or the migration is failed. Data plane: virt-handler and
//! the target launcher.

use super::*;

pub(crate) const TARGET_PREPARATION_FAILED: Rule = Rule {
    cause: Cause {
        id: "target-preparation-failed",
        plane: Plane::DataPlane,
    },
    reads: &[
        "Event SyncFailed on the VMI (virt-handler on the target)",
        "VirtualMachineInstanceMigration status.phase",
        "status.migrationState.{startTimestamp,failureReason}",
    ],
    advice: "virt-handler on the target node could not prepare the target (launcher connection, network, resources or the migration proxy): the quoted error names the step. Read virt-handler's log on the target node.",
    blocks: true,
    check: target_preparation_failed,
};

/// The messages virt-handler's target side writes when preparing the target fails
/// (`pkg/virt-handler/migration-target.go` and `controller.go`, main 2026-08).
pub(crate) const TARGET_PREP_ERRORS: &[&str] = &[
    "unable to create virt-launcher client connection: ",
    "failed to configure vmi network for migration target: ",
    "syncing migration target failed: ",
    "failed to adjust resources on migration target: ",
    "failed to handle post sync migration proxy: ",
];

/// The target-preparation part of a SyncFailed message (it may be wrapped, as in
/// `failed to configure vmi network: failed to configure vmi network for migration target: …`).
pub(crate) fn target_prep_error(message: &str) -> Option<&str> {
    TARGET_PREP_ERRORS
        .iter()
        .filter_map(|p| message.find(p).map(|i| &message[i..]))
        .min_by_key(|rest| std::cmp::Reverse(rest.len()))
}

pub(super) fn target_preparation_failed(v: &View) -> Option<Finding> {
    // Only before streaming, or a failure nothing else explains: once memory moves, the
    // target was prepared.
    if !before_streaming(v) || v.failure_reason().is_some() {
        return None;
    }
    let since = v.created.map(|c| c.as_second()).unwrap_or(i64::MIN);
    let event = v
        .vmi_events()
        .filter(|e| {
            event_reason(e) == s::REASON_SYNC_FAILED
                && target_prep_error(event_message(e)).is_some()
                && event_last(e).is_some_and(|t| t.as_second() >= since)
        })
        .max_by_key(|e| event_last(e))?;
    let step = target_prep_error(event_message(event)).unwrap_or("");
    let mut f = Finding::on_event(v, Some(event));
    f.evidence
        .push(v.vmim_fact("status.phase", v.phase.to_string()));
    f.summary = format!(
        "virt-handler on the target ({}) could not prepare the migration target: \"{step}\" ({} time{}). {}",
        tgt_node(v),
        event_count(event),
        if event_count(event) == 1 { "" } else { "s" },
        if v.is_final() {
            format!("The migration {} before any memory was copied.", v.phase)
        } else {
            "No memory has been copied; virt-handler retries, and the migration waits until a retry succeeds or it is aborted.".to_string()
        }
    );
    f.next_steps.push(format!(
        "Read virt-handler's log on {}: kubectl logs -n kubevirt $(kubectl get pods -n kubevirt -l kubevirt.io=virt-handler --field-selector spec.nodeName={} -o name) | grep -i {}",
        tgt_node(v),
        tgt_node(v),
        v.vmi_name()
    ));
    if step.starts_with("failed to configure vmi network") {
        f.next_steps.push(format!(
            "Check the target pod's network attachments (Multus/CNI) on {}: kubectl describe pod -n {} {}",
            tgt_node(v),
            v.namespace(),
            or_q(v.target_pod_name.as_deref())
        ));
    }
    if !v.is_final() {
        f.next_steps.push(format!(
            "If it does not recover, cancel it so the VMI can be migrated elsewhere: virtctl migrate-cancel {} -n {}",
            v.vmi.and_then(|x| x.owner_vm()).unwrap_or(v.vmi_name()),
            v.namespace()
        ));
    }
    f.next_steps.push(retry_step(v));
    Some(f)
}
