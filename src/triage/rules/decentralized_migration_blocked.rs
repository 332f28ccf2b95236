//! The `decentralized-migration-blocked` rule (v1.6+ cross-cluster migrations; what it
//! reads of them is in `kubevirt19.rs`): its cause, what it reads, its advice and its check.

use super::*;
use crate::model::vmi::COND_DECENTRALIZED_FAILURE;
use crate::model::vmim::COND_DECENTRALIZED_BLOCKED;

/// A decentralized migration blocked by the synchronization controller.
pub(crate) const DECENTRALIZED_BLOCKED: Rule = Rule {
    cause: Cause {
        id: "decentralized-migration-blocked",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "VirtualMachineInstanceMigration status.conditions[type=decentralizedMigrationBlocked]",
        "VirtualMachineInstance status.conditions[type=DecentralizedLiveMigrationFailure]",
        "VirtualMachineInstanceMigration spec.sendTo / spec.receive, status.synchronizationAddresses",
    ],
    advice: "A decentralized (cross-cluster) migration needs both clusters: a VMIM with the same migrationID on the peer, synchronization controllers that reach each other, and the DecentralizedLiveMigration feature gate on both. Fix what the condition's message names.",
    blocks: true,
    check: decentralized_blocked,
};

pub(super) fn decentralized_blocked(v: &View) -> Option<Finding> {
    let (kind, c) = kv19::decentralized_block(v)?;
    let mut f = Finding::default();
    let field = if kind == "VirtualMachineInstance" {
        format!("status.conditions[type={COND_DECENTRALIZED_FAILURE}]")
    } else {
        format!("status.conditions[type={COND_DECENTRALIZED_BLOCKED}]")
    };
    let reason = c.reason.as_deref().unwrap_or("(no reason)");
    let message = c.message.as_deref().unwrap_or("(no message)");
    let value = format!("True, reason {reason}: {message}");
    f.evidence.push(if kind == "VirtualMachineInstance" {
        v.vmi_fact(&field, value)
    } else {
        v.vmim_fact(&field, value)
    });
    f.evidence.extend(kv19::sync_facts(v));
    let role = v
        .decentralized()
        .map(|d| {
            let id = d
                .migration_id
                .map(|i| format!(", migrationID {i}"))
                .unwrap_or_default();
            let peer = d
                .connect_url
                .map(|u| format!(", peer {u}"))
                .unwrap_or_default();
            format!(" ({} side{id}{peer})", d.role.as_str())
        })
        .unwrap_or_default();
    let failed = if v.phase == MigrationPhase::Failed {
        " and the migration failed"
    } else {
        ""
    };
    f.summary = format!(
        "The decentralized (cross-cluster) migration{role} is blocked by the synchronization controller{failed}: {reason}: {message}"
    );
    f.next_steps.extend(kv19::sync_steps(v));
    Some(f)
}
