//! The `evacuation-loop` rule (harvester/harvester#10698): a VMI marked for evacuation whose
//! evacuation migrations keep failing, so KubeVirt keeps creating new ones (`triage::loops`
//! says why it never ends and what does end it).

use super::*;
use crate::triage::loops::{self, LoopKind};

pub(crate) const EVACUATION_LOOP: Rule = Rule {
    cause: Cause {
        id: "evacuation-loop",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "VirtualMachineInstance status.evacuationNodeName, status.nodeName",
        "VirtualMachineInstanceMigration metadata.annotations[kubevirt.io/evacuationMigration], status.phase, status.phaseTransitionTimestamps[phase=Failed] of the VMI's migrations",
        "status.migrationState.failureReason of the newest failed one",
    ],
    advice: "While status.evacuationNodeName stays set, KubeVirt creates a new evacuation migration after every failure (20 s backoff, doubling), forever: cancel the evacuation (vmctl abort --evacuation) after stopping the drain, or fix why the attempts fail.",
    blocks: true,
    check: evacuation_loop,
};

/// True when `v` explains the VMI's newest migration: a loop is about now, not about an
/// attempt from its past.
fn is_newest(v: &View) -> bool {
    let Some(m) = v.vmim else {
        return false;
    };
    let key = |x: &crate::model::VirtualMachineInstanceMigration| {
        (
            x.metadata.creation_timestamp.as_ref().map(|t| t.0),
            x.name().to_string(),
        )
    };
    v.ev.migrations
        .iter()
        .filter(|x| x.spec.vmi_name == m.spec.vmi_name)
        .all(|x| key(x) <= key(m))
}

pub(super) fn evacuation_loop(v: &View) -> Option<Finding> {
    let vmi = v.vmi?;
    // evacuation.go skips final VMIs: a guest that stopped is not retried.
    if matches!(v.vmi_phase(), Some(VmiPhase::Failed | VmiPhase::Succeeded)) || !is_newest(v) {
        return None;
    }
    let migrations: Vec<&crate::model::VirtualMachineInstanceMigration> =
        v.ev.migrations.iter().collect();
    let mut l = loops::detect(
        v.namespace(),
        v.vmi_name(),
        Some(vmi),
        &migrations,
        v.now,
        &v.ev.loops,
    )
    .filter(|l| l.kind == LoopKind::EvacuationLoop)?;
    loops::with_diagnosis(&mut l, v.ev);
    let ns = v.namespace();
    let mut f = Finding::default();
    f.evidence
        .push(v.vmi_fact(&l.blocking.field, l.blocking.value.clone()));
    if let Some(n) = &vmi.status.node_name {
        f.evidence.push(v.vmi_fact("status.nodeName", n.clone()));
    }
    // Every counted attempt, oldest first, with its end.
    let mut attempts: Vec<&crate::model::VirtualMachineInstanceMigration> = migrations
        .iter()
        .copied()
        .filter(|m| m.phase() == MigrationPhase::Failed && m.evacuation_node().is_some())
        .collect();
    attempts.sort_by_key(|m| {
        (
            m.metadata.creation_timestamp.as_ref().map(|t| t.0),
            m.name().to_string(),
        )
    });
    for m in attempts {
        f.evidence.push(Fact {
            object: format!("VirtualMachineInstanceMigration/{ns}/{}", m.name()),
            field: "status.phaseTransitionTimestamps[phase=Failed]".into(),
            value: m
                .phase_entered("Failed")
                .map(|t| t.0.to_string())
                .unwrap_or_else(|| "(not recorded)".into()),
            note: m.evacuation_node().map(|n| format!("evacuation of {n}")),
        });
    }
    let mut summary = l.summary.clone();
    if let Some(last) = &l.last_failure {
        if let Some(reason) = &last.reason {
            f.evidence.push(Fact {
                object: format!("VirtualMachineInstanceMigration/{ns}/{}", last.migration),
                field: "status.migrationState.failureReason".into(),
                value: reason.clone(),
                note: None,
            });
        }
        match (last.cause.as_deref(), last.summary.as_deref()) {
            (Some("unknown"), _) | (None, _) => summary.push_str(&format!(
                " Why {} failed is not known (vmctl explain migration/{} -n {ns} shows what was read).",
                last.migration, last.migration
            )),
            (Some(cause), Some(s)) => {
                let end = if s.ends_with(['.', '!', '?']) { "" } else { "." };
                summary.push_str(&format!(" The last attempt failed with {cause}: {s}{end}"))
            }
            (Some(cause), None) => {
                summary.push_str(&format!(" The last attempt failed with {cause}."))
            }
        }
    }
    // The attempt in flight waiting out its backoff: the backoff rule's reckoning, as is.
    match super::migration_backoff::migration_backoff(v) {
        Some(b) => {
            summary.push(' ');
            summary.push_str(&b.summary);
            for fact in b.evidence {
                if !f.evidence.contains(&fact) {
                    f.evidence.push(fact);
                }
            }
        }
        None => {
            if let Some(next) = &l.next_attempt {
                summary.push_str(&format!(" KubeVirt tries again from {next}."));
            }
        }
    }
    f.summary = summary;
    f.next_steps = l.steps();
    f.next_steps.push(history_hint(ns, v.vmi_name()));
    Some(f)
}
