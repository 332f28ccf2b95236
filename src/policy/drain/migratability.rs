//! Step **migratability**: why a VMI cannot live-migrate, as the reasons, the phrase and the
//! fix the plan shows ([`crate::policy::migratability`] reads the conditions).

use super::Reason;
use crate::policy::migratability::Migratability;

/// What the plan says of a VMI's migratability.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessment {
    /// The `LiveMigratable` condition: `None` when it is not reported yet.
    pub live_migratable: Option<bool>,
    /// True only when the condition says so and nothing blocks.
    pub migratable: bool,
    /// Why it cannot migrate, as the conditions say (the plan row's reasons).
    pub reasons: Vec<Reason>,
    /// Why not, in a phrase for an explanation (meaningless when `migratable`).
    pub why_not: String,
    /// What to change so it can migrate, from the first blocker.
    pub fix: Option<String>,
}

/// Turns the conditions' verdict into the plan's words. A VMI without a `LiveMigratable`
/// condition is not migratable for KubeVirt: it gets a `LiveMigratableUnknown` reason.
pub fn assess(mig: &Migratability) -> Assessment {
    let mut reasons: Vec<Reason> = mig
        .reasons
        .iter()
        .map(|b| Reason {
            reason: b.reason.clone(),
            message: b.message.clone(),
        })
        .collect();
    let first = mig.reasons.first();
    let why_not = match first {
        Some(b) => b.summary.clone(),
        None if mig.live_migratable.is_none() => {
            reasons.push(Reason {
                reason: "LiveMigratableUnknown".into(),
                message: "the VMI has no LiveMigratable condition yet; KubeVirt treats it as not migratable".into(),
            });
            "migratability not reported yet".into()
        }
        None => "not live-migratable".into(),
    };
    Assessment {
        live_migratable: mig.live_migratable,
        migratable: mig.is_migratable(),
        reasons,
        why_not,
        fix: first.map(|b| b.fix.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::migratability::Blocker;

    fn blocker(reason: &str, summary: &str, fix: &str) -> Blocker {
        Blocker {
            condition: "LiveMigratable".into(),
            reason: reason.into(),
            message: format!("{reason} message"),
            summary: summary.into(),
            fix: fix.into(),
        }
    }

    #[test]
    fn the_first_blocker_gives_the_phrase_and_the_fix() {
        let a = assess(&Migratability {
            live_migratable: Some(false),
            reasons: vec![
                blocker(
                    "DisksNotLiveMigratable",
                    "PVC data is not shared",
                    "use RWX",
                ),
                blocker("HostDeviceNotLiveMigratable", "a host device", "remove it"),
            ],
            storage_reasons: Vec::new(),
        });
        assert!(!a.migratable);
        assert_eq!(a.why_not, "PVC data is not shared");
        assert_eq!(a.fix.as_deref(), Some("use RWX"));
        let reasons: Vec<&str> = a.reasons.iter().map(|r| r.reason.as_str()).collect();
        assert_eq!(
            reasons,
            ["DisksNotLiveMigratable", "HostDeviceNotLiveMigratable"]
        );
        assert_eq!(a.reasons[0].message, "DisksNotLiveMigratable message");
    }

    #[test]
    fn no_condition_yet_is_not_migratable_and_says_so() {
        let a = assess(&Migratability {
            live_migratable: None,
            reasons: Vec::new(),
            storage_reasons: Vec::new(),
        });
        assert!(!a.migratable);
        assert_eq!(a.why_not, "migratability not reported yet");
        assert_eq!(a.reasons.len(), 1);
        assert_eq!(a.reasons[0].reason, "LiveMigratableUnknown");
        assert_eq!(a.fix, None);
    }

    #[test]
    fn a_false_condition_without_reason_and_a_migratable_vmi() {
        let no = assess(&Migratability {
            live_migratable: Some(false),
            reasons: Vec::new(),
            storage_reasons: Vec::new(),
        });
        assert_eq!(
            (no.migratable, no.why_not.as_str()),
            (false, "not live-migratable")
        );
        assert!(no.reasons.is_empty());
        let yes = assess(&Migratability {
            live_migratable: Some(true),
            reasons: Vec::new(),
            // Storage migration does not stop a compute live migration.
            storage_reasons: vec![blocker("SCSI", "reservation", "none")],
        });
        assert!(yes.migratable);
        assert!(yes.reasons.is_empty());
        assert_eq!(yes.live_migratable, Some(true));
    }
}
