//! Step **feasibility**: how long a VMI's migration takes and whether it fits in the time
//! KubeVirt allows it: the transfer estimate, the completion budget, and what is left of a
//! migration already in flight.

use super::{DEFAULT_BANDWIDTH, SETUP_SECONDS};
use crate::model::vmim::MigrationPhase;
use crate::model::{Time, VirtualMachineInstance, VirtualMachineInstanceMigration};

/// Bytes per second one migration moves: the policy's or cluster's `bandwidthPerMigration`
/// when set (non-zero), else `--bandwidth`, else [`DEFAULT_BANDWIDTH`]; never 0.
pub fn bandwidth(per_migration: u64, flag: Option<u64>) -> u64 {
    if per_migration > 0 {
        per_migration
    } else {
        flag.unwrap_or(DEFAULT_BANDWIDTH).max(1)
    }
}

/// Setup plus guest memory over the bandwidth; None when the memory is unknown.
pub fn transfer_seconds(memory: Option<u64>, bandwidth: u64) -> Option<u64> {
    memory.map(|m| SETUP_SECONDS + m.div_ceil(bandwidth))
}

/// The completion budget: doubled when the policy allows workload disruption (KubeVirt then
/// switches mode instead of aborting at the first budget).
pub fn completion_budget(base: Option<u64>, allow_workload_disruption: bool) -> Option<u64> {
    base.map(|b| if allow_workload_disruption { b * 2 } else { b })
}

/// Said of a migration whose estimate exceeds its (enabled) completion budget.
pub fn over_budget(transfer: Option<u64>, budget: Option<u64>, post_copy: bool) -> Option<String> {
    let (Some(t), Some(b)) = (transfer, budget) else {
        return None;
    };
    (b > 0 && t > b).then(|| {
        format!(
            "the transfer estimate exceeds the {} completion budget, so KubeVirt may abort it{}",
            crate::text::duration(b as i64),
            if post_copy {
                " (post-copy is allowed and would take over)"
            } else {
                ""
            }
        )
    })
}

/// What the drain plan adds to an [`InFlight`]'s explanation.
pub const DRAIN_WAITS: &str = "; the drain waits for it";

/// A migration of a drained VMI already in flight, as the drain meets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InFlight {
    /// Its target node, once the VMI's migration state names it.
    pub target: Option<String>,
    /// Seconds since it started moving memory (0 while queued, or without a clock).
    pub elapsed: u64,
    /// Seconds left, at least the setup time; None when the memory is unknown.
    pub remaining: Option<u64>,
    /// The estimate to show: `remaining`, or None for a phase vmctl does not know.
    pub estimate: Option<u64>,
    /// KubeVirt counts it as running: it holds a parallel slot.
    pub running: bool,
    /// `migration NAME (phase PHASE)`, for the words of what holds it.
    pub label: String,
    /// What it is, with no word of a drain (the migrate preflight says it too); the drain
    /// plan adds [`DRAIN_WAITS`].
    pub explanation: String,
    /// The VMIM condition that keeps it Pending (quota, utility volumes, backup,
    /// decentralized), and its message: it moves nothing until that clears, so no estimate.
    pub held_by: Option<(&'static str, String)>,
}

/// What is left of `m`, the active migration of `vmi`, whose whole transfer takes `transfer`.
pub fn in_flight(
    m: &VirtualMachineInstanceMigration,
    vmi: &VirtualMachineInstance,
    transfer: Option<u64>,
    now: Option<&Time>,
) -> InFlight {
    let state = vmi
        .status
        .migration_state
        .as_ref()
        .filter(|s| s.migration_uid.is_some() && s.migration_uid.as_deref() == m.uid());
    let started = state.and_then(|s| s.start_timestamp.as_ref());
    let running = m.phase().counts_as_running();
    // A migration still queued (Pending) has moved nothing yet, however old it is.
    let since = started.or(m.metadata.creation_timestamp.as_ref().filter(|_| running));
    let elapsed = match (now, since) {
        (Some(now), Some(t)) => (now.0.as_second() - t.0.as_second()).max(0) as u64,
        _ => 0,
    };
    let post_copy =
        state.is_some_and(|s| s.mode == Some(crate::model::vmi::MigrationMode::PostCopy));
    // An estimate the elapsed time already passed is no estimate; post-copy's end depends
    // on the pages the guest still faults in, which nothing here shows.
    let held_by = super::waves::held_by(m).map(|c| {
        let message = m
            .condition(c)
            .and_then(|c| c.message.clone())
            .unwrap_or_default();
        (c, message)
    });
    let remaining = transfer
        .filter(|t| !post_copy && *t > elapsed && held_by.is_none())
        .map(|t| (t - elapsed).max(SETUP_SECONDS));
    // A phase this vmctl does not know: KubeVirt counts it as running (IsRunning), and so
    // does the plan, but it makes no estimate from it.
    let unknown_phase = matches!(m.phase(), MigrationPhase::Other(_));
    let running_for = if elapsed > 0 {
        format!(", running for {}", crate::text::duration(elapsed as i64))
    } else {
        String::new()
    };
    let explanation = if unknown_phase {
        format!(
            "migration {} is in phase {:?}, which this vmctl does not know: KubeVirt counts it as running, but no estimate is made",
            m.name(),
            m.phase().as_str()
        )
    } else if let Some((condition, message)) = &held_by {
        let why = if message.is_empty() {
            String::new()
        } else {
            format!(": {message}")
        };
        format!(
            "migration {} is held Pending by its condition {condition}{why}; it moves nothing until that clears: no time can be estimated",
            m.name(),
        )
    } else if post_copy {
        format!(
            "migration {} is in post-copy (phase {}){running_for}: past the point of no return (an abort or a network failure now loses the guest); no time left can be estimated",
            m.name(),
            m.phase(),
        )
    } else {
        let left = match (transfer, remaining) {
            (_, Some(r)) => format!(", about {} left", crate::text::duration(r as i64)),
            (Some(t), None) => format!(
                ", past its {} estimate: no time left can be estimated",
                crate::text::duration(t as i64)
            ),
            (None, None) => String::new(),
        };
        format!(
            "migration {} is already in flight (phase {}){running_for}{left}",
            m.name(),
            m.phase(),
        )
    };
    InFlight {
        target: state.and_then(|s| s.target_node.clone()),
        elapsed,
        remaining,
        estimate: remaining.filter(|_| !unknown_phase),
        running,
        label: format!("migration {} (phase {})", m.name(), m.phase()),
        explanation,
        held_by,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use crate::model::vmi::MigrationState;
    use crate::model::vmim::{VmimSpec, VmimStatus};

    const GI: u64 = 1024 * 1024 * 1024;

    fn time(s: &str) -> Time {
        Time(s.parse().unwrap())
    }

    fn migration(phase: &str) -> VirtualMachineInstanceMigration {
        VirtualMachineInstanceMigration {
            metadata: ObjectMeta {
                name: Some("mig-a".into()),
                uid: Some("mig-uid".into()),
                creation_timestamp: Some(time("2026-11-29T03:00:00Z")),
                ..Default::default()
            },
            spec: VmimSpec {
                vmi_name: "a".into(),
                ..Default::default()
            },
            status: VmimStatus {
                phase: Some(phase.into()),
                ..Default::default()
            },
        }
    }

    fn vmi(target: Option<&str>, started: Option<&str>) -> VirtualMachineInstance {
        let mut v = VirtualMachineInstance::default();
        v.status.migration_state = Some(MigrationState {
            migration_uid: Some("mig-uid".into()),
            target_node: target.map(str::to_string),
            start_timestamp: started.map(time),
            ..Default::default()
        });
        v
    }

    #[test]
    fn transfer_is_setup_plus_memory_over_the_bandwidth() {
        assert_eq!(bandwidth(0, None), DEFAULT_BANDWIDTH);
        assert_eq!(bandwidth(0, Some(0)), 1, "never divides by zero");
        assert_eq!(bandwidth(64, Some(128)), 64, "the cluster's setting wins");
        assert_eq!(transfer_seconds(Some(2 * GI), GI), Some(SETUP_SECONDS + 2));
        assert_eq!(transfer_seconds(None, GI), None);
        assert_eq!(completion_budget(Some(450), true), Some(900));
        assert_eq!(completion_budget(Some(450), false), Some(450));
    }

    #[test]
    fn over_budget_only_when_an_enabled_budget_is_exceeded() {
        assert_eq!(over_budget(Some(100), Some(200), false), None);
        assert_eq!(
            over_budget(Some(300), Some(0), false),
            None,
            "0 disables it"
        );
        let words = over_budget(Some(300), Some(200), true).unwrap();
        assert!(
            words.contains("exceeds the 3m20s completion budget"),
            "{words}"
        );
        assert!(words.ends_with("(post-copy is allowed and would take over)"));
    }

    #[test]
    fn a_running_migration_has_what_is_left_of_its_transfer() {
        let f = in_flight(
            &migration("Running"),
            &vmi(Some("node-2"), Some("2026-11-29T03:01:00Z")),
            Some(100),
            Some(&time("2026-11-29T03:02:00Z")),
        );
        assert_eq!(f.target.as_deref(), Some("node-2"));
        assert_eq!(
            (f.elapsed, f.remaining, f.estimate),
            (60, Some(40), Some(40))
        );
        assert!(f.running);
        assert_eq!(f.label, "migration mig-a (phase Running)");
        // Never less than the setup time.
        let f = in_flight(
            &migration("Running"),
            &vmi(None, Some("2026-11-29T03:01:00Z")),
            Some(100),
            Some(&time("2026-11-29T03:02:35Z")),
        );
        assert_eq!(f.remaining, Some(SETUP_SECONDS));
        // An estimate the elapsed time already passed is no estimate: none is claimed.
        let f = in_flight(
            &migration("Running"),
            &vmi(None, Some("2026-11-29T03:01:00Z")),
            Some(100),
            Some(&time("2026-11-29T04:00:00Z")),
        );
        assert_eq!((f.remaining, f.estimate), (None, None));
        assert!(!f.explanation.contains(" left,"), "{}", f.explanation);
        assert!(
            f.explanation.contains("running for 59m")
                && f.explanation.contains("no time left can be estimated"),
            "{}",
            f.explanation
        );
    }

    #[test]
    fn a_post_copy_migration_is_past_the_point_of_no_return_with_no_eta() {
        let mut v = vmi(Some("node-1"), Some("2026-11-29T03:00:00Z"));
        if let Some(s) = v.status.migration_state.as_mut() {
            s.mode = Some(crate::model::vmi::MigrationMode::PostCopy);
        }
        let f = in_flight(
            &migration("Running"),
            &v,
            Some(1000),
            Some(&time("2026-11-29T03:10:04Z")),
        );
        assert_eq!((f.elapsed, f.remaining, f.estimate), (604, None, None));
        let e = &f.explanation;
        assert!(e.contains("post-copy"), "{e}");
        assert!(e.contains("point of no return"), "{e}");
        assert!(e.contains("network failure"), "{e}");
        assert!(e.contains("running for 10m04s"), "{e}");
        assert!(!e.contains("about"), "{e}");
        assert!(
            !e.contains("drain"),
            "no drain in the words of the migration: {e}"
        );
    }

    #[test]
    fn a_queued_migration_has_moved_nothing_and_an_unknown_phase_has_no_estimate() {
        let f = in_flight(
            &migration("Pending"),
            &vmi(None, None),
            Some(100),
            Some(&time("2026-11-29T05:00:00Z")),
        );
        assert_eq!((f.elapsed, f.remaining, f.running), (0, Some(100), false));
        let f = in_flight(
            &migration("Sideways"),
            &vmi(None, None),
            Some(100),
            Some(&time("2026-11-29T03:00:10Z")),
        );
        assert!(f.running, "KubeVirt counts an unknown phase as running");
        assert_eq!((f.remaining, f.estimate), (Some(90), None));
        assert!(f.explanation.contains("which this vmctl does not know"));
    }
}
