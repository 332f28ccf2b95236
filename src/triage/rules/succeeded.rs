//! The `succeeded` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const SUCCEEDED: Rule = Rule {
    cause: Cause {
        id: "succeeded",
        plane: Plane::None,
    },
    reads: &[
        "VirtualMachineInstanceMigration status.phase",
        "status.migrationState.{completed,startTimestamp,endTimestamp,sourceNode,targetNode}",
    ],
    advice: "Nothing to do.",
    blocks: false,
    check: succeeded,
};

pub(super) fn succeeded(v: &View) -> Option<Finding> {
    if v.phase != MigrationPhase::Succeeded {
        return None;
    }
    let mut evidence = Vec::new();
    if let Some(st) = v.state {
        evidence.push(v.state_fact("completed", st.completed.to_string()));
        if let Some(t) = &st.target_node {
            evidence.push(v.state_fact("targetNode", t.clone()));
        }
    }
    let took = v
        .elapsed()
        .map(|e| {
            let budget = v
                .budget
                .filter(|b| *b > 0)
                .map(|b| format!(" of its {} completion budget", dur(b as i64)))
                .unwrap_or_default();
            format!(" in {}{budget}", dur(e))
        })
        .unwrap_or_default();
    let mut summary = format!(
        "The VMI moved from {} to {}{took}{}.",
        src_node(v),
        tgt_node(v),
        if v.in_post_copy() {
            ", finishing in post-copy"
        } else {
            ""
        }
    );
    if v.abort_requested() {
        summary.push_str(" An abort was requested, but the migration completed first.");
    }
    Some(Finding {
        summary,
        evidence,
        ..Default::default()
    })
}
