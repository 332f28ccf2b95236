//! Step **strategy**: what a VMI's effective evictionStrategy does to it when its node is
//! drained, given its migratability ([`crate::policy::eviction`] resolves the strategy).

use super::migratability::Assessment;
use super::{Action, DEFAULT_GRACE_SECONDS, Hold};
use crate::model::{EvictionStrategy, VirtualMachineInstance};

/// What shutting the VMI down means: how long it takes and what its VM does afterwards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shutdown {
    /// terminationGracePeriodSeconds (KubeVirt's default when unset).
    pub grace_seconds: u64,
    /// What happens to the guest afterwards, in words ([`restart_words`]).
    pub restart: String,
}

impl Shutdown {
    pub fn of(vmi: &VirtualMachineInstance, has_vm: bool, run_strategy: Option<&str>) -> Self {
        Shutdown {
            grace_seconds: vmi
                .spec
                .termination_grace_period_seconds
                .map(|g| g.max(0) as u64)
                .unwrap_or(DEFAULT_GRACE_SECONDS),
            restart: restart_words(has_vm, run_strategy),
        }
    }
}

/// What the VM does after its VMI is shut down: a bare VMI is gone; a VM restarts it or not
/// by its runStrategy.
pub fn restart_words(has_vm: bool, run_strategy: Option<&str>) -> String {
    match (has_vm, run_strategy) {
        (false, _) => "it is a bare VMI: it is gone for good".to_string(),
        (true, Some("Always")) => {
            "its VM (runStrategy Always) starts it again on another node".into()
        }
        (true, Some("RerunOnFailure")) => {
            "its VM (runStrategy RerunOnFailure) restarts it only if the shutdown counts as a failure; a clean shutdown leaves it stopped".into()
        }
        (true, Some(s)) => format!("its VM (runStrategy {s}) leaves it stopped"),
        (true, None) => "its VM leaves it stopped".into(),
    }
}

/// The strategy's verdict for a VMI with no migration in flight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub action: Action,
    /// Empty for a live migration: placement says where it goes.
    pub explanation: String,
    pub fix: Option<String>,
    /// How long the shutdown takes, when the drain shuts the VMI down.
    pub shutdown_seconds: Option<u64>,
    /// What it holds the drain on.
    pub hold: Option<Hold>,
}

/// evictionStrategy × migratability: LiveMigrate and LiveMigrateIfPossible migrate a
/// migratable VMI; LiveMigrate blocks on one that is not, LiveMigrateIfPossible shuts it
/// down; External waits for an external controller; None (and a strategy vmctl does not
/// know) shuts down.
pub fn decide(strategy: &EvictionStrategy, m: &Assessment, shutdown: &Shutdown) -> Decision {
    let why = &m.why_not;
    let restart = &shutdown.restart;
    let mut d = Decision {
        action: Action::LiveMigrate,
        explanation: String::new(),
        fix: None,
        shutdown_seconds: None,
        hold: None,
    };
    match strategy {
        EvictionStrategy::LiveMigrate | EvictionStrategy::LiveMigrateIfPossible if m.migratable => {
        }
        EvictionStrategy::LiveMigrate => {
            d.action = Action::BlocksDrain;
            d.explanation = format!(
                "evictionStrategy LiveMigrate but not live-migratable ({why}): the eviction is refused with 429 until this changes"
            );
            d.fix = m.fix.clone().or_else(|| {
                Some("make the VMI migratable, or set its evictionStrategy to None to allow a shutdown".into())
            });
            d.hold = Some(Hold {
                kind: "vmi",
                object: None,
                reason: m
                    .reasons
                    .first()
                    .map(|r| r.reason.clone())
                    .unwrap_or_default(),
                message: d.explanation.clone(),
                blocking: true,
            });
        }
        EvictionStrategy::LiveMigrateIfPossible => {
            d.action = Action::ShutdownNotMigratable;
            d.explanation = format!(
                "LiveMigrateIfPossible but not live-migratable ({why}): the pod is evicted and the guest shut down; {restart}"
            );
            d.fix = m.fix.clone();
            d.shutdown_seconds = Some(shutdown.grace_seconds);
        }
        EvictionStrategy::External => {
            d.action = Action::External;
            d.explanation = "evictionStrategy External: KubeVirt marks it (evacuationNodeName) and refuses the eviction; an external controller (e.g. cluster-api-provider-kubevirt) must act".into();
            d.hold = Some(Hold {
                kind: "external",
                object: None,
                reason: "External".into(),
                message: "the drain waits until the external controller removes this VMI".into(),
                blocking: false,
            });
        }
        EvictionStrategy::None | EvictionStrategy::Other(_) => {
            d.action = Action::Shutdown;
            let which = if let EvictionStrategy::Other(s) = strategy {
                format!("evictionStrategy {s} (unknown to vmctl, treated as None)")
            } else {
                "evictionStrategy None".to_string()
            };
            d.explanation =
                format!("{which}: the pod is evicted and the guest shut down; {restart}");
            if m.migratable {
                d.fix = Some("set spec.evictionStrategy: LiveMigrate (the VMI is migratable) to move it instead".into());
            }
            d.shutdown_seconds = Some(shutdown.grace_seconds);
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::drain::Reason;

    fn assessment(migratable: bool) -> Assessment {
        Assessment {
            live_migratable: Some(migratable),
            migratable,
            reasons: if migratable {
                Vec::new()
            } else {
                vec![Reason {
                    reason: "DisksNotLiveMigratable".into(),
                    message: "PVC data is not shared".into(),
                }]
            },
            why_not: if migratable {
                ""
            } else {
                "PVC data is not shared"
            }
            .into(),
            fix: (!migratable).then(|| "use a RWX PVC".into()),
        }
    }

    fn shutdown() -> Shutdown {
        Shutdown {
            grace_seconds: 30,
            restart: "its VM leaves it stopped".into(),
        }
    }

    #[test]
    fn a_migratable_vmi_live_migrates_under_both_live_strategies() {
        for s in [
            EvictionStrategy::LiveMigrate,
            EvictionStrategy::LiveMigrateIfPossible,
        ] {
            let d = decide(&s, &assessment(true), &shutdown());
            assert_eq!(d.action, Action::LiveMigrate);
            assert_eq!((d.hold, d.shutdown_seconds, d.fix), (None, None, None));
        }
    }

    #[test]
    fn live_migrate_blocks_on_a_vmi_that_cannot_migrate() {
        let d = decide(
            &EvictionStrategy::LiveMigrate,
            &assessment(false),
            &shutdown(),
        );
        assert_eq!(d.action, Action::BlocksDrain);
        assert!(
            d.explanation.contains("(PVC data is not shared)"),
            "{}",
            d.explanation
        );
        assert_eq!(d.fix.as_deref(), Some("use a RWX PVC"));
        let hold = d.hold.unwrap();
        assert_eq!(
            (hold.kind, hold.reason.as_str(), hold.blocking),
            ("vmi", "DisksNotLiveMigratable", true)
        );
        assert_eq!(hold.message, d.explanation);
        assert_eq!(d.shutdown_seconds, None);
    }

    #[test]
    fn if_possible_shuts_down_for_the_grace_period_and_none_suggests_live_migrate() {
        let d = decide(
            &EvictionStrategy::LiveMigrateIfPossible,
            &assessment(false),
            &shutdown(),
        );
        assert_eq!(d.action, Action::ShutdownNotMigratable);
        assert_eq!(d.shutdown_seconds, Some(30));
        assert!(d.explanation.ends_with("; its VM leaves it stopped"));
        assert_eq!(d.hold, None);

        let d = decide(&EvictionStrategy::None, &assessment(true), &shutdown());
        assert_eq!(d.action, Action::Shutdown);
        assert!(d.explanation.starts_with("evictionStrategy None: "));
        assert!(
            d.fix
                .unwrap()
                .starts_with("set spec.evictionStrategy: LiveMigrate")
        );
        let d = decide(
            &EvictionStrategy::Other("Sideways".into()),
            &assessment(false),
            &shutdown(),
        );
        assert_eq!((d.action, d.fix), (Action::Shutdown, None));
        assert!(
            d.explanation
                .contains("Sideways (unknown to vmctl, treated as None)")
        );
    }

    #[test]
    fn external_waits_without_blocking() {
        let d = decide(&EvictionStrategy::External, &assessment(true), &shutdown());
        assert_eq!(d.action, Action::External);
        let hold = d.hold.unwrap();
        assert_eq!((hold.kind, hold.blocking), ("external", false));
        assert_eq!(d.shutdown_seconds, None);
    }

    #[test]
    fn restart_words_follow_the_run_strategy() {
        assert_eq!(
            restart_words(false, Some("Always")),
            "it is a bare VMI: it is gone for good"
        );
        assert!(restart_words(true, Some("Always")).contains("starts it again"));
        assert_eq!(
            restart_words(true, Some("Manual")),
            "its VM (runStrategy Manual) leaves it stopped"
        );
        let mut vmi = VirtualMachineInstance::default();
        assert_eq!(
            Shutdown::of(&vmi, true, None).grace_seconds,
            DEFAULT_GRACE_SECONDS
        );
        vmi.spec.termination_grace_period_seconds = Some(-5);
        assert_eq!(Shutdown::of(&vmi, true, None).grace_seconds, 0);
    }
}
