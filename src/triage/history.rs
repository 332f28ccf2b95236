//! Every migration of a VMI still on record, oldest first, with the backoff KubeVirt put
//! between them (FACTS §2.2).

use std::borrow::Borrow;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::{Evidence, Outcome, Plane, diagnose};
use crate::model::VirtualMachineInstanceMigration;
use crate::model::vmim::{MigrationPhase, WORKLOAD_UPDATE_ANNOTATION};
use crate::triage::strings::BACKOFF_INITIAL_SECONDS;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub name: String,
    pub uid: Option<String>,
    pub created: Option<String>,
    pub phase: String,
    pub outcome: Outcome,
    pub plane: Plane,
    pub cause: &'static str,
    pub summary: String,
    pub inferred: bool,
    /// When it became Succeeded or Failed.
    pub ended: Option<String>,
    /// Creation to end (or to now, while it runs).
    pub duration_seconds: Option<i64>,
    /// The node an evacuation migration drains.
    pub evacuation_node: Option<String>,
    /// From the previous migration's end (or creation) to this one's creation.
    pub since_previous_seconds: Option<i64>,
    /// The backoff KubeVirt required before this one could start, if any.
    pub backoff_seconds: Option<i64>,
    pub backoff_until: Option<String>,
}

/// The backoff that applies to a migration (evacuation and workload-update ones only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backoff {
    /// Consecutive failed eligible migrations before this one, back to the last success.
    pub failures: u32,
    pub seconds: i64,
    /// The newest of those failures.
    pub previous: String,
    pub previous_failed: Timestamp,
    pub until: Timestamp,
}

/// When the migration object was created (the order KubeVirt sorts migrations in).
pub fn created(m: &VirtualMachineInstanceMigration) -> Option<Timestamp> {
    m.metadata.creation_timestamp.as_ref().map(|t| t.0)
}

fn eligible(m: &VirtualMachineInstanceMigration) -> bool {
    m.evacuation_node().is_some() || m.annotation(WORKLOAD_UPDATE_ANNOTATION).is_some()
}

/// KubeVirt's `handleMigrationBackoff`: 20 s after the first failure, doubling for each
/// further consecutive failure, measured from the previous failure's Failed transition.
pub fn backoff<M: Borrow<VirtualMachineInstanceMigration>>(
    migrations: &[M],
    m: &VirtualMachineInstanceMigration,
) -> Option<Backoff> {
    if !eligible(m) {
        return None;
    }
    let this_created = created(m)?;
    backoff_after(
        migrations
            .iter()
            .map(Borrow::borrow)
            .filter(|x| x.uid() != m.uid())
            .filter(|x| created(x).is_some_and(|c| c < this_created)),
    )
}

/// The backoff the next evacuation or workload-update migration of the VMI gets, created
/// after all of `migrations` (those the evacuation controller has yet to create).
pub fn next_backoff<M: Borrow<VirtualMachineInstanceMigration>>(
    migrations: &[M],
) -> Option<Backoff> {
    backoff_after(migrations.iter().map(Borrow::borrow))
}

/// `handleMigrationBackoff`'s count over the eligible migrations before the one it admits
/// (pkg/virt-controller/watch/migration/migration.go, kubevirt/kubevirt): newest first, a
/// Succeeded one ends the count, one being deleted is skipped, each Failed one doubles it.
fn backoff_after<'a>(
    earlier: impl Iterator<Item = &'a VirtualMachineInstanceMigration>,
) -> Option<Backoff> {
    let mut earlier: Vec<&VirtualMachineInstanceMigration> =
        earlier.filter(|x| eligible(x)).collect();
    earlier.sort_by_key(|x| std::cmp::Reverse((created(x), x.name().to_string())));
    let mut failures: u32 = 0;
    let mut newest_failed = None;
    for x in earlier {
        match x.phase() {
            MigrationPhase::Succeeded => break,
            MigrationPhase::Failed if x.metadata.deletion_timestamp.is_none() => {
                failures += 1;
                newest_failed.get_or_insert(x);
            }
            _ => {}
        }
    }
    let previous = newest_failed?;
    let previous_failed = previous.phase_entered("Failed")?.0;
    let seconds = BACKOFF_INITIAL_SECONDS.saturating_mul(1i64 << (failures - 1).min(30));
    let until = previous_failed
        .checked_add(SignedDuration::from_secs(seconds))
        .ok()?;
    Some(Backoff {
        failures,
        seconds,
        previous: previous.name().to_string(),
        previous_failed,
        until,
    })
}

/// Every migration of the evidence's VMI, oldest first, each diagnosed on its own.
pub fn history(evidence: &Evidence) -> Vec<HistoryEntry> {
    let mut migrations: Vec<&VirtualMachineInstanceMigration> =
        evidence.migrations.iter().collect();
    migrations.sort_by_key(|m| (created(m), m.name().to_string()));
    let mut out: Vec<HistoryEntry> = Vec::new();
    let mut previous_end: Option<Timestamp> = None;
    for m in migrations {
        let d = diagnose(&evidence.focused_on(m));
        let ended = match m.phase() {
            MigrationPhase::Succeeded => m.phase_entered("Succeeded").map(|t| t.0),
            MigrationPhase::Failed => m.phase_entered("Failed").map(|t| t.0),
            _ => None,
        };
        let this_created = created(m);
        let b = backoff(&evidence.migrations, m);
        out.push(HistoryEntry {
            name: m.name().to_string(),
            uid: m.uid().map(str::to_string),
            created: this_created.map(|t| t.to_string()),
            phase: m
                .status
                .phase
                .as_ref()
                .map(|p| p.as_str().to_string())
                .unwrap_or_else(|| "(none)".into()),
            outcome: d.outcome,
            plane: d.plane,
            cause: d.cause.id,
            summary: d.summary,
            inferred: d.inferred,
            ended: ended.map(|t| t.to_string()),
            duration_seconds: this_created
                .map(|c| ended.unwrap_or(evidence.now).as_second() - c.as_second()),
            evacuation_node: m.evacuation_node().map(str::to_string),
            since_previous_seconds: match (previous_end, this_created) {
                (Some(p), Some(c)) => Some(c.as_second() - p.as_second()),
                _ => None,
            },
            backoff_seconds: b.as_ref().map(|b| b.seconds),
            backoff_until: b.as_ref().map(|b| b.until.to_string()),
        });
        previous_end = ended.or(this_created);
    }
    out
}
