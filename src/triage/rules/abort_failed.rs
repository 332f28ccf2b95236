//! The `abort-failed` rule: its cause, what it reads, its advice and its check.
//!
//! An abort — a user's (VMIM deleted: `migrationAbortRequested`, VMI `abortRequested`) or the
//! migration monitor's own, which on v1.9+/main goes through the same launcher cancel
//! (`processCompletionTimeouts` → `cancelMigration`) — ended with `abortStatus: Failed`. The
//! launcher writes Failed when libvirt's `AbortJob` fails, when the domain or its job is gone
//! (`migration job is not active …, nothing to abort`) and, on main, when libvirt does not
//! answer within 30 s (`asyncMigrationAbort`: `migration abort timed out waiting for libvirt`,
//! `pkg/virt-launcher/virtwrap/live-migration-source.go`; PR #17596, #18147). virt-handler
//! sends the cancel again while the status is neither Aborting nor Succeeded
//! (`handleMigrationAbort`, `pkg/virt-handler/migration-source.go`). Data plane: libvirt or QEMU
//! did not stop the job.

use super::aborted_by_request::{Requester, requester};
use super::*;

pub(crate) const ABORT_FAILED: Rule = Rule {
    cause: Cause {
        id: "abort-failed",
        plane: Plane::DataPlane,
    },
    reads: &[
        "status.migrationState.{abortStatus,abortRequested,failureReason}",
        "VirtualMachineInstanceMigration status.conditions[type=migrationAbortRequested]",
        "VirtualMachineInstanceMigration metadata.deletionTimestamp",
    ],
    advice: "An abort did not stop the migration: libvirt refused it, the job was already gone, or libvirt did not answer within the launcher's 30 s abort timeout (an unresponsive QEMU monitor). The migration goes on (or ends) by itself; virt-handler retries a user's abort. Read the source launcher's log; a hung QEMU monitor needs the node's attention.",
    blocks: true,
    check: abort_failed,
};

pub(super) fn abort_failed(v: &View) -> Option<Finding> {
    let st = v.state?;
    if st.abort_status != Some(AbortStatus::Failed) {
        return None;
    }
    let mut f = Finding {
        evidence: vec![v.state_fact("abortStatus", "Failed")],
        ..Default::default()
    };
    let who = requester(v);
    f.evidence.extend(who.facts.iter().cloned());
    f.evidence.extend(failure_fact(v));
    f.inferred = who.by == Requester::Unknown;
    let asked = match who.by {
        Requester::User => {
            "An abort was requested (the VMIM was deleted, e.g. by virtctl migrate-cancel)"
        }
        Requester::Monitor => "The migration monitor tried to abort it (nobody requested an abort)",
        Requester::Unknown => {
            "An abort was tried — by whom cannot be told: the VMIM is gone and the VMI records no request"
        }
    };
    let now = if v.is_final() {
        match v.phase {
            MigrationPhase::Failed => "the migration then failed anyway".to_string(),
            _ => format!("the migration ended {}", v.phase),
        }
    } else {
        format!(
            "the migration is still {}{}",
            v.phase,
            if who.by == Requester::User {
                " and virt-handler sends the cancel again"
            } else {
                ""
            }
        )
    };
    f.summary = format!(
        "{asked}, but the abort itself failed (abortStatus Failed): libvirt refused it, the job was already gone, or libvirt did not answer within the launcher's 30 s abort timeout; {now}. The guest runs on {}.",
        if v.phase == MigrationPhase::Succeeded {
            tgt_node(v)
        } else {
            src_node(v)
        }
    );
    let ns = v.namespace();
    f.next_steps.push(format!(
        "Read why in the source launcher's log: kubectl logs -n {ns} {} -c compute | grep -E 'abort timed out|failed to cancel migration|nothing to abort'",
        or_q(v.source_pod_name.as_deref())
    ));
    f.next_steps.push(format!(
        "If libvirt timed out, QEMU's monitor on {} is not answering: check the node (load, D-state processes, storage) before more migrations go there",
        src_node(v)
    ));
    if !v.is_final() {
        f.next_steps.push(format!(
            "Follow it: kubectl get vmim {} -n {ns} -w",
            v.vmim_name()
        ));
    }
    Some(f)
}
