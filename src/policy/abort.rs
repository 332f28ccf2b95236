//! What `vmctl abort` decides, from the objects alone: which migration is in flight, whether
//! it may be aborted, who creates a new one afterwards, and what the end of an abort means.
//! Plain objects in, plain data out.
//!
//! An abort is a DELETE of the unfinished VMIM (FACTS §3.5): before the hand-off the
//! controller deletes the target pod and fails the migration
//! (`handlePreHandoffMigrationCancel`, kubevirt/kubevirt
//! pkg/virt-controller/watch/migration/migration.go); while running it asks virt-handler to
//! cancel the job and the VMI reports `abortStatus`. Refused in post-copy: the guest's state
//! is split across both nodes and neither side can be abandoned.

use crate::model::kubevirt::parse_version;
use crate::model::vmi::{AbortStatus, MigrationMode, MigrationState};
use crate::model::vmim::{MigrationPhase, WORKLOAD_UPDATE_ANNOTATION};
use crate::model::{VirtualMachineInstance, VirtualMachineInstanceMigration};

/// The VMI's migrationState when it describes `vmim` (FACTS §1.1: `migrationUid` is the
/// VMIM's uid); another migration's state is never read as this one's.
pub fn state_of<'a>(
    vmi: Option<&'a VirtualMachineInstance>,
    vmim: &VirtualMachineInstanceMigration,
) -> Option<&'a MigrationState> {
    let uid = vmim.uid()?;
    vmi.and_then(|v| v.status.migration_state.as_ref())
        .filter(|s| s.migration_uid.as_deref() == Some(uid))
}

/// The VMI's newest unfinished migration, as `virtctl migrate-cancel` picks one (FACTS §3.5).
pub fn in_flight(
    vmims: Vec<VirtualMachineInstanceMigration>,
) -> Option<VirtualMachineInstanceMigration> {
    vmims
        .into_iter()
        .filter(|m| !m.is_final())
        .max_by_key(|m| m.metadata.creation_timestamp.as_ref().map(|t| t.0))
}

/// Who creates a new migration after this one is aborted (FACTS §2.2: while a VMI stays
/// marked for evacuation, or outdated for the workload updater, KubeVirt keeps creating
/// migrations for it, after a backoff of 20 s doubling per failure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recreator {
    /// The evacuation controller, draining this node.
    Evacuation(String),
    /// The workload updater (the VMI runs an outdated launcher).
    WorkloadUpdate,
}

impl Recreator {
    pub fn id(&self) -> &'static str {
        match self {
            Recreator::Evacuation(_) => "evacuation",
            Recreator::WorkloadUpdate => "workload-update",
        }
    }
}

pub fn recreated_by(
    vmim: &VirtualMachineInstanceMigration,
    vmi: Option<&VirtualMachineInstance>,
) -> Option<Recreator> {
    // The mark on the VMI decides; the VMIM's annotation only when the VMI was not read.
    let node = match vmi {
        Some(v) => v.evacuation_node(),
        None => vmim.evacuation_node(),
    };
    if let Some(node) = node {
        return Some(Recreator::Evacuation(node.to_string()));
    }
    vmim.annotation(WORKLOAD_UPDATE_ANNOTATION)
        .map(|_| Recreator::WorkloadUpdate)
}

/// The VMI's last migration when nothing is in flight: what `abort` says instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LastMigration {
    Failed {
        reason: Option<String>,
    },
    Succeeded {
        source: Option<String>,
        target: Option<String>,
    },
}

/// The abort to request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbortPlan {
    pub migration: String,
    pub phase: MigrationPhase,
    /// Pending, Scheduling or Scheduled: KubeVirt deletes the target pod and fails the
    /// migration as canceled; no job to cancel yet.
    pub before_handoff: bool,
    pub recreated_by: Option<Recreator>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// No unfinished migration.
    Nothing {
        last: Option<LastMigration>,
    },
    /// In post-copy: aborting would lose the VM.
    RefusePostCopy {
        migration: String,
        target_node: Option<String>,
        source_node: Option<String>,
    },
    Abort(AbortPlan),
}

/// Whether and how to abort `vmim` (the named migration, or the VMI's newest one).
pub fn decide(
    vmim: Option<&VirtualMachineInstanceMigration>,
    vmi: Option<&VirtualMachineInstance>,
) -> Decision {
    let Some(vmim) = vmim.filter(|m| !m.is_final()) else {
        let last = vmi
            .and_then(|v| v.status.migration_state.as_ref())
            .filter(|s| s.completed)
            .map(|s| {
                if s.failed {
                    LastMigration::Failed {
                        reason: s.failure_reason.clone(),
                    }
                } else {
                    LastMigration::Succeeded {
                        source: s.source_node.clone(),
                        target: s.target_node.clone(),
                    }
                }
            });
        return Decision::Nothing { last };
    };
    let migration = vmim.name().to_string();
    let state = state_of(vmi, vmim);
    if state.and_then(|s| s.mode.as_ref()) == Some(&MigrationMode::PostCopy) {
        return Decision::RefusePostCopy {
            migration,
            target_node: state.and_then(|s| s.target_node.clone()),
            source_node: state.and_then(|s| s.source_node.clone()),
        };
    }
    let phase = vmim.phase();
    Decision::Abort(AbortPlan {
        migration,
        before_handoff: before_handoff(&phase),
        phase,
        recreated_by: recreated_by(vmim, vmi),
    })
}

/// Before the hand-off to virt-handler: the controller cancels by deleting the target pod
/// (`handlePreHandoffMigrationCancel`).
pub fn before_handoff(phase: &MigrationPhase) -> bool {
    matches!(
        phase,
        MigrationPhase::Unset
            | MigrationPhase::Pending
            | MigrationPhase::Scheduling
            | MigrationPhase::Scheduled
    )
}

/// How an abort ended, from the VMIM and the VMI's migrationState as last seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The migration completed before the abort landed (FACTS §3.5).
    Completed { target: Option<String> },
    /// `abortStatus: Failed`.
    AbortFailed { reason: Option<String> },
    /// `abortStatus: Succeeded`: the guest stays on the source.
    Aborted {
        source: Option<String>,
        source_pod: Option<String>,
    },
    /// Ended before streaming (or gone before any status): cancelled.
    Cancelled { source: Option<String> },
    /// Any other end: the phase says what.
    Ended { phase: MigrationPhase },
}

impl Outcome {
    /// The `result` of `-o json`.
    pub fn id(&self) -> &'static str {
        match self {
            Outcome::Completed { .. } => "completed",
            Outcome::AbortFailed { .. } => "abort-failed",
            Outcome::Aborted { .. } => "aborted",
            Outcome::Cancelled { .. } => "cancelled",
            Outcome::Ended { .. } => "unknown",
        }
    }

    /// Only an abort that took (or a cancel before streaming) is a success.
    pub fn succeeded(&self) -> bool {
        matches!(self, Outcome::Aborted { .. } | Outcome::Cancelled { .. })
    }
}

/// `gone`: the VMIM was deleted before any status was reported.
pub fn outcome(
    phase: MigrationPhase,
    state: Option<&MigrationState>,
    gone: bool,
    before_handoff: bool,
) -> Outcome {
    let abort = state.and_then(|s| s.abort_status.as_ref());
    let source = state.and_then(|s| s.source_node.clone());
    if phase == MigrationPhase::Succeeded {
        Outcome::Completed {
            target: state.and_then(|s| s.target_node.clone()),
        }
    } else if abort == Some(&AbortStatus::Failed) {
        Outcome::AbortFailed {
            reason: state.and_then(|s| s.failure_reason.clone()),
        }
    } else if abort == Some(&AbortStatus::Succeeded) {
        Outcome::Aborted {
            source,
            source_pod: state.and_then(|s| s.source_pod.clone()),
        }
    } else if before_handoff || gone || phase == MigrationPhase::Failed {
        Outcome::Cancelled { source }
    } else {
        Outcome::Ended { phase }
    }
}

/// `evacuate/cancel` came in KubeVirt v1.7 (kubevirt/kubevirt pkg/virt-api/api.go, the
/// `evacuate/cancel` subresource routes); an unknown version is taken as older.
pub fn evacuate_cancel_supported(kubevirt_version: Option<&str>) -> bool {
    kubevirt_version
        .and_then(parse_version)
        .is_some_and(|v| v >= (1, 7))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn vmim(annotations: serde_json::Value) -> VirtualMachineInstanceMigration {
        serde_json::from_value(json!({"metadata": {"name": "m", "annotations": annotations}}))
            .unwrap()
    }

    fn vmi(evacuation: Option<&str>) -> VirtualMachineInstance {
        serde_json::from_value(json!({"metadata": {"name": "a"},
            "status": {"evacuationNodeName": evacuation}}))
        .unwrap()
    }

    fn running(phase: &str) -> VirtualMachineInstanceMigration {
        serde_json::from_value(json!({"metadata": {"name": "m", "uid": "u-1"},
            "spec": {"vmiName": "a"}, "status": {"phase": phase}}))
        .unwrap()
    }

    fn with_state(state: serde_json::Value) -> VirtualMachineInstance {
        serde_json::from_value(json!({"metadata": {"name": "a"},
            "status": {"migrationState": state}}))
        .unwrap()
    }

    fn state(v: serde_json::Value) -> MigrationState {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn who_recreates_an_aborted_migration() {
        let evac = vmim(json!({"kubevirt.io/evacuationMigration": "node-1"}));
        // The VMI's mark decides.
        assert_eq!(
            recreated_by(&evac, Some(&vmi(Some("node-1")))),
            Some(Recreator::Evacuation("node-1".into()))
        );
        assert_eq!(recreated_by(&evac, Some(&vmi(None))), None);
        // A user's migration of a marked VMI is followed by an evacuation one too.
        assert_eq!(
            recreated_by(&vmim(json!({})), Some(&vmi(Some("node-2")))),
            Some(Recreator::Evacuation("node-2".into()))
        );
        // Without the VMI, the annotation is all there is.
        assert_eq!(
            recreated_by(&evac, None),
            Some(Recreator::Evacuation("node-1".into()))
        );
        let update = vmim(json!({"kubevirt.io/workloadUpdateMigration": ""}));
        assert_eq!(
            recreated_by(&update, Some(&vmi(None))),
            Some(Recreator::WorkloadUpdate)
        );
        assert_eq!(recreated_by(&vmim(json!({})), Some(&vmi(None))), None);
    }

    #[test]
    fn the_newest_unfinished_migration_is_the_one_in_flight() {
        let m = |name: &str, created: &str, phase: &str| -> VirtualMachineInstanceMigration {
            serde_json::from_value(
                json!({"metadata": {"name": name, "creationTimestamp": created},
                "status": {"phase": phase}}),
            )
            .unwrap()
        };
        let picked = in_flight(vec![
            m("old", "2026-12-01T10:00:00Z", "Running"),
            m("new", "2026-12-01T11:00:00Z", "Scheduling"),
            m("done", "2026-12-01T12:00:00Z", "Succeeded"),
        ]);
        assert_eq!(picked.map(|m| m.name().to_string()).as_deref(), Some("new"));
        assert!(in_flight(vec![m("done", "2026-12-01T12:00:00Z", "Failed")]).is_none());
    }

    #[test]
    fn post_copy_is_refused_and_a_final_migration_is_nothing_to_abort() {
        let vmi = with_state(json!({"migrationUid": "u-1", "mode": "PostCopy",
            "sourceNode": "n1", "targetNode": "n2"}));
        assert_eq!(
            decide(Some(&running("Running")), Some(&vmi)),
            Decision::RefusePostCopy {
                migration: "m".into(),
                target_node: Some("n2".into()),
                source_node: Some("n1".into()),
            }
        );
        // Another migration's post-copy state does not count for this one.
        let other = with_state(json!({"migrationUid": "u-0", "mode": "PostCopy"}));
        assert!(matches!(
            decide(Some(&running("Running")), Some(&other)),
            Decision::Abort(AbortPlan {
                before_handoff: false,
                ..
            })
        ));
        let failed = with_state(
            json!({"migrationUid": "u-1", "completed": true, "failed": true,
            "failureReason": "Live migration has been aborted"}),
        );
        assert_eq!(
            decide(Some(&running("Failed")), Some(&failed)),
            Decision::Nothing {
                last: Some(LastMigration::Failed {
                    reason: Some("Live migration has been aborted".into())
                })
            }
        );
        assert_eq!(decide(None, None), Decision::Nothing { last: None });
    }

    #[test]
    fn a_migration_before_the_handoff_is_cancelled_by_the_controller() {
        for (phase, before) in [
            ("Pending", true),
            ("Scheduling", true),
            ("Scheduled", true),
            ("PreparingTarget", false),
            ("TargetReady", false),
            ("Running", false),
        ] {
            let Decision::Abort(plan) = decide(Some(&running(phase)), None) else {
                panic!("{phase}: not an abort");
            };
            assert_eq!(plan.before_handoff, before, "{phase}");
        }
    }

    #[test]
    fn the_end_of_an_abort_reads_abort_status_first() {
        let aborted = state(json!({"abortStatus": "Succeeded", "sourceNode": "n1",
            "sourcePod": "virt-launcher-a-1"}));
        assert_eq!(
            outcome(MigrationPhase::Failed, Some(&aborted), false, false),
            Outcome::Aborted {
                source: Some("n1".into()),
                source_pod: Some("virt-launcher-a-1".into())
            }
        );
        // Too late: the migration completed before the abort landed.
        assert_eq!(
            outcome(MigrationPhase::Succeeded, Some(&aborted), false, false).id(),
            "completed"
        );
        let failed = state(json!({"abortStatus": "Failed"}));
        let o = outcome(MigrationPhase::Running, Some(&failed), false, false);
        assert_eq!((o.id(), o.succeeded()), ("abort-failed", false));
        let o = outcome(MigrationPhase::Pending, None, true, true);
        assert_eq!((o.id(), o.succeeded()), ("cancelled", true));
        let o = outcome(MigrationPhase::Running, None, false, false);
        assert_eq!((o.id(), o.succeeded()), ("unknown", false));
    }

    #[test]
    fn evacuate_cancel_needs_kubevirt_1_7() {
        assert!(evacuate_cancel_supported(Some("v1.7.0")));
        assert!(evacuate_cancel_supported(Some("v1.9.1")));
        assert!(!evacuate_cancel_supported(Some("v1.6.3")));
        assert!(!evacuate_cancel_supported(None));
        assert!(!evacuate_cancel_supported(Some("garbage")));
    }
}
