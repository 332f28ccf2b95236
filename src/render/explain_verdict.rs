//! `explain`'s verdict: the line that says what became of the migration, and the dim line of
//! facts under it. Shared by the text and the HTML report; unescaped (the caller escapes for
//! its medium).
//!
//! Each fact is said once. A finding names its plane and cause (`FAILED · data-plane ·
//! cpu-feature-mismatch`); a migration still under way says what it is doing, since when,
//! between which nodes, and that nothing failed so far — not its outcome, a plane of "none"
//! and a cause that repeats the outcome.

use k8s_openapi::jiff::Timestamp;

use crate::text as fmt;
use crate::triage::{Diagnosis, MigrationInfo, Outcome, Plane, route_words};

/// The verdict line (the first line under the header).
///
/// - `SUCCEEDED · ended 26m ago (02:34:10)`
/// - `FAILED · data-plane · postcopy-failed`, `FAILED · cause unknown`,
///   `ABORTED · aborted-by-request`
/// - `IN PROGRESS · post-copy, past the point of no return · since 02:49:56 (10m04s) ·
///   node-2 → node-1 · no failure so far`
/// - `PENDING · waiting for a target pod · since 02:41:07 (18m53s) · node-2 → not scheduled ·
///   no failure so far`
/// - `NO MIGRATION`
pub fn verdict_line(d: &Diagnosis, as_of: &str) -> String {
    let inferred = if d.inferred { " (inferred)" } else { "" };
    match (d.outcome, d.migration.as_ref()) {
        (Outcome::NoMigration, _) => "NO MIGRATION".into(),
        (Outcome::Succeeded, m) => match m.and_then(|m| m.end_timestamp.as_deref()) {
            Some(end) => format!("SUCCEEDED · ended {}", when(end, as_of, "ago")),
            None => "SUCCEEDED".into(),
        },
        (Outcome::InProgress, Some(m)) => in_progress(d, m, as_of),
        (outcome, _) => finding_words(
            outcome_words(outcome),
            d.plane.as_str(),
            d.cause.id,
            inferred,
        ),
    }
}

/// `FAILED · data-plane · cpu-feature-mismatch`, `ABORTED · aborted-by-request`, `FAILED ·
/// cause unknown`: an outcome with its plane and cause, each said once — no plane of
/// "none", one "unknown" for an unknown plane and cause, no cause that repeats the outcome.
/// Also for a journal record's verdict (strings, as the journal keeps them).
pub fn finding_words(outcome: &str, plane: &str, cause: &str, inferred: &str) -> String {
    let mut parts = vec![outcome.to_string()];
    match (plane, cause) {
        (p, _) if p == Plane::None.as_str() => {}
        // One "unknown" says both: nothing tells the plane without a cause.
        (p, "unknown") if p == Plane::Unknown.as_str() => {}
        (p, _) => parts.push(p.to_string()),
    }
    let repeats = cause.replace('-', " ").eq_ignore_ascii_case(outcome);
    if cause == "unknown" {
        parts.push(format!("cause unknown{inferred}"));
    } else if !repeats || !inferred.is_empty() {
        parts.push(format!("{cause}{inferred}"));
    }
    parts.join(" · ")
}

/// A journal record's outcome (`failed`, `in-progress` …) as the verdict's first word.
pub fn outcome_word(outcome: &str) -> String {
    outcome.replace('-', " ").to_uppercase()
}

fn outcome_words(o: Outcome) -> &'static str {
    match o {
        Outcome::Succeeded => "SUCCEEDED",
        Outcome::InProgress => "IN PROGRESS",
        Outcome::Blocked => "BLOCKED",
        Outcome::Failed => "FAILED",
        Outcome::Aborted => "ABORTED",
        Outcome::NoMigration => "NO MIGRATION",
    }
}

/// Phases in which no target pod is on a node yet.
fn waits_for_target(phase: &str) -> bool {
    matches!(phase, "" | "(none)" | "Pending" | "Scheduling")
}

/// An in-progress migration: what it does, since when, between which nodes, no failure yet.
fn in_progress(d: &Diagnosis, m: &MigrationInfo, as_of: &str) -> String {
    let streaming = m.phase == "Running" && m.start_timestamp.is_some();
    let label = if waits_for_target(&m.phase) {
        "PENDING"
    } else {
        "IN PROGRESS"
    };
    let doing = if d.cause.id != "in-progress" {
        // Waiting on something that is not a failure (a queue, a sync): name it.
        format!(
            "{}{} ({})",
            d.cause,
            if d.inferred { ", inferred" } else { "" },
            d.plane.as_str()
        )
    } else {
        match (m.phase.as_str(), m.mode.as_deref()) {
            ("Running", Some("PostCopy")) => "post-copy, past the point of no return".into(),
            ("Running", Some("PreCopy")) => "pre-copy".into(),
            ("Running", Some("Paused")) => "pre-copy, the guest paused to converge".into(),
            ("Running", _) => "copying memory".into(),
            ("" | "(none)", _) => "not picked up by virt-controller yet".into(),
            ("Pending", _) => "waiting for a target pod".into(),
            ("Scheduling", _) => "waiting for its target pod to be scheduled".into(),
            ("Scheduled", _) => "target pod scheduled, hand-off to virt-handler".into(),
            ("PreparingTarget", _) => "preparing the target".into(),
            ("TargetReady", _) => "target ready, copying about to start".into(),
            ("WaitingForSync", _) => "decentralized, waiting for its peer".into(),
            ("Synchronizing", _) => "decentralized, synchronizing with its peer".into(),
            (phase, _) => format!("phase {phase}"),
        }
    };
    let since = match (streaming, &m.start_timestamp, &m.created) {
        (true, Some(start), _) => Some(format!("copying since {}", when(start, as_of, ""))),
        (_, _, Some(created)) => Some(format!("since {}", when(created, as_of, ""))),
        _ => None,
    };
    let mut parts = vec![label.to_string(), doing];
    parts.extend(since);
    parts.push(route_words(
        m.source_node.as_deref(),
        m.target_node.as_deref(),
        &m.phase,
        d.cause.id,
        m.start_timestamp.is_some(),
    ));
    parts.push("no failure so far".into());
    parts.join(" · ")
}

/// `02:49:56 (10m04s)` or, with `suffix` "ago", `10m04s ago (02:49:56)`: a time of the
/// migration and how long before the report's `as_of` it was. The day is in the header's
/// `as of` line; a time on another day keeps its date.
fn when(time: &str, as_of: &str, suffix: &str) -> String {
    let clock = match (time.split_once('T'), as_of.split_once('T')) {
        (Some((day, t)), Some((today, _))) if day == today => t.trim_end_matches('Z').to_string(),
        _ => time.trim_end_matches('Z').replace('T', " "),
    };
    let span = match (time.parse::<Timestamp>(), as_of.parse::<Timestamp>()) {
        (Ok(t), Ok(now)) => Some(fmt::duration(now.as_second() - t.as_second())),
        _ => None,
    };
    match (span, suffix) {
        (Some(span), "") => format!("{clock} ({span})"),
        (Some(span), suffix) => format!("{span} {suffix} ({clock})"),
        (None, _) => clock,
    }
}

/// The dim line under the verdict: the route, phase, mode, the time streamed against the
/// budget, the policy. For a migration in progress the verdict already says the route, the
/// mode and since when: the line keeps what it did not say.
pub fn route_line(d: &Diagnosis) -> Option<String> {
    let m = d.migration.as_ref()?;
    let in_progress = d.outcome == Outcome::InProgress;
    let mut parts = Vec::new();
    if !in_progress {
        parts.push(route_words(
            m.source_node.as_deref(),
            m.target_node.as_deref(),
            &m.phase,
            d.cause.id,
            m.start_timestamp.is_some(),
        ));
    }
    parts.push(format!("phase {}", m.phase));
    if let Some(mode) = m.mode.as_deref().filter(|_| !in_progress) {
        parts.push(format!("mode {mode}"));
    }
    match (m.elapsed_seconds, m.budget_seconds) {
        (Some(e), Some(b)) if b > 0 && !in_progress => parts.push(format!(
            "streamed {} of a {} budget",
            fmt::duration(e),
            fmt::duration(b as i64)
        )),
        (Some(e), _) if !in_progress => parts.push(format!("streamed {}", fmt::duration(e))),
        (_, Some(b)) if b > 0 && in_progress => {
            parts.push(format!("completion budget {}", fmt::duration(b as i64)))
        }
        (None, _) if !in_progress => parts.push("never streamed".into()),
        _ => {}
    }
    if let Some(p) = &m.policy {
        parts.push(format!("policy {p}"));
    }
    Some(parts.join(" · "))
}
