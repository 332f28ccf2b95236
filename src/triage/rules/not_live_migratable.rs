//! The `not-live-migratable` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const NOT_LIVE_MIGRATABLE: Rule = Rule {
    cause: Cause {
        id: "not-live-migratable",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "VirtualMachineInstance status.conditions[type=LiveMigratable]",
        "VirtualMachineInstance status.conditions[type=StorageLiveMigratable]",
        "VirtualMachineInstance spec (volumes, interfaces, devices)",
    ],
    advice: "KubeVirt will not live-migrate this VMI until the condition's reason is removed.",
    blocks: true,
    check: not_live_migratable,
};

pub(super) fn not_live_migratable(v: &View) -> Option<Finding> {
    let blockers = v.live_blockers();
    if blockers.is_empty() {
        return None;
    }
    let applies = !v.has_migration()
        || (before_streaming(v)
            && v.failure_reason().is_none()
            && !matches!(v.phase, MigrationPhase::Succeeded));
    if !applies {
        return None;
    }
    let mut f = Finding::default();
    for b in &blockers {
        f.evidence.push(v.vmi_fact(
            &format!("status.conditions[type={}]", b.condition),
            format!("False, reason {}: {}", b.reason, b.message),
        ));
    }
    let first = blockers.first()?;
    let strategy = v.vmi.map(|x| {
        crate::policy::eviction::effective_eviction_strategy(x, v.ev.kubevirt.as_ref()).strategy
    });
    let drain = match (strategy, v.vmi.and_then(|x| x.status.node_name.as_deref())) {
        (Some(crate::model::EvictionStrategy::LiveMigrate), Some(node)) => format!(
            " With evictionStrategy LiveMigrate, a drain of {node} blocks on it until this is fixed."
        ),
        (Some(crate::model::EvictionStrategy::LiveMigrateIfPossible), Some(node)) => {
            // As plan-drain says it: the eviction that would shut it down may itself be
            // refused by a PodDisruptionBudget.
            match super::pdb_blocks_eviction::blocking_pdb(v) {
                Some((_, pdb, answer)) => format!(
                    " With evictionStrategy LiveMigrateIfPossible, a drain of {node} would evict its pod and shut it down, but PodDisruptionBudget {}/{} refuses that eviction ({}): the drain blocks on it.",
                    v.namespace(),
                    pdb.metadata.name.as_deref().unwrap_or("?"),
                    answer.api_text()
                ),
                None => format!(
                    " With evictionStrategy LiveMigrateIfPossible, a drain of {node} shuts it down."
                ),
            }
        }
        _ => String::new(),
    };
    f.summary = match v.has_migration() {
        false => format!(
            "The VMI cannot live-migrate: {} ({}). KubeVirt refuses to create a migration for it.{drain}",
            first.summary, first.reason
        ),
        true => format!(
            "The VMI cannot live-migrate: {} ({}), so this migration cannot proceed.{drain}",
            first.summary, first.reason
        ),
    };
    for b in &blockers {
        f.next_steps.push(format!("Fix: {}", b.fix));
    }
    if let Some(node) = v.vmi.and_then(|x| x.status.node_name.as_deref()) {
        f.next_steps.push(format!(
            "See what a drain of {node} would do to every VM: vmctl plan-drain {node}"
        ));
    }
    Some(f)
}
