//! The lines of commands that follow migrations (`migrate`, `abort`, `status --watch`):
//! one function per kind of message, each escaping the cluster text it carries.

use std::time::Duration;

use super::progress::ProgressView;
use crate::cluster::Kind;
use crate::cluster::watch::Reconnecting;
use crate::migration::follow::Followed;
use crate::model::Pod;
use crate::model::vmi::MigrationMode;
use crate::model::vmim::MigrationPhase;

use super::{Style, Tone};
use crate::text::{self as fmt, printable, printable_lines};

/// `[12:00:01] VirtualMachineInstance watch reconnecting… (attempt …)`.
pub fn reconnecting(now: &str, r: &Reconnecting) -> String {
    format!("[{now}] {}", printable(&r.to_string()))
}

/// `[12:00:03] VirtualMachineInstance watch reconnected`.
pub fn reconnected(now: &str, kind: Kind) -> String {
    format!("[{now}] {kind} watch reconnected")
}

/// `status --watch`'s start, off a terminal, once the first frame is ready.
pub fn watching(now: &str, vmis: usize, scope: &str, in_flight: usize) -> String {
    format!("[{now}] watching {vmis} VMIs ({scope}): {in_flight} migrations in flight")
}

/// `warning: TEXT`, the label in the warning colour.
pub fn warning(style: Style, text: &str) -> String {
    // The label's colour is vmctl's own escape; only the text is escaped.
    format!(
        "{} {}",
        style.paint("warning:", Tone::Warn),
        printable_lines(text)
    )
}

// ---------------------------------------------------------------- abort

pub fn abort_requested(
    namespace: &str,
    name: &str,
    phase: MigrationPhase,
    before_handoff: bool,
) -> String {
    printable_lines(&format!(
        "abort requested: deleted migration {namespace}/{name} (phase {phase}){}",
        if before_handoff {
            "; it had not started streaming"
        } else {
            ""
        }
    ))
}

pub fn aborting() -> String {
    "abortStatus Aborting: virt-handler is cancelling the job".to_string()
}

pub fn abort_interrupted(namespace: &str, vmi: &str) -> String {
    printable_lines(&format!(
        "interrupted: the abort was requested and goes on; check with: vmctl status {vmi} -n {namespace}"
    ))
}

pub fn abort_timed_out(
    namespace: &str,
    name: &str,
    waited: Duration,
    phase: MigrationPhase,
) -> String {
    printable_lines(&format!(
        "timed out after {} waiting for the abort to be reported (phase {phase}); check with: vmctl explain migration/{name} -n {namespace}",
        fmt::duration(waited.as_secs() as i64),
    ))
}

// ---------------------------------------------------------------- migrate

/// `prediction: TEXT` (the dirty-rate prediction before the start).
pub fn prediction(text: &str) -> String {
    printable_lines(&format!("prediction: {text}"))
}

/// `note: TEXT`.
pub fn note(text: &str) -> String {
    printable_lines(&format!("note: {text}"))
}

/// Before a migration that may switch to post-copy: what that means. `target` is the
/// predicted node (the scheduler places the target pod): said as a prediction, and the real
/// one follows once the VMI names it ([`post_copy_target`]).
pub fn post_copy_warning(style: Style, target: Option<&str>, source: Option<&str>) -> String {
    // Node names are escaped; the label's colour is vmctl's own escape.
    let (target, source) = (target.map(printable), source.map(printable));
    format!(
        "{} post-copy is allowed for this migration: if it switches to post-copy, the guest runs on the target node ({}) while its memory is still on {}. From that point there is no abort, and a network failure between the nodes loses the VM.",
        style.paint("warning:", Tone::Bad),
        target.as_deref().map_or(
            "chosen by the scheduler; named once known".to_string(),
            |t| { format!("predicted {t}; the scheduler decides, named once known") }
        ),
        source.as_deref().unwrap_or("the source")
    )
}

/// Once the VMI names the migration's target node, with post-copy allowed: where post-copy
/// would run the guest, and whether that is the node predicted before the start.
pub fn post_copy_target(target: &str, source: Option<&str>, predicted: Option<&str>) -> String {
    let differs = match predicted {
        Some(p) if p != target => format!(", not {p} as predicted"),
        Some(_) => ", as predicted".to_string(),
        None => String::new(),
    };
    printable_lines(&format!(
        "target node {target}{differs}: if it switches to post-copy, the guest runs on {target} while its memory is still on {}",
        source.unwrap_or("the source")
    ))
}

/// The temporary MigrationPolicy was created: what it allows and why it wins.
pub fn policy_created(name: &str, allows: &[&str], proof: &str) -> String {
    printable_lines(&format!(
        "created MigrationPolicy {name} ({}); it wins because {proof}",
        allows.join(", ")
    ))
}

pub fn policy_deleted(name: &str) -> String {
    printable_lines(&format!("deleted the temporary MigrationPolicy {name}"))
}

pub fn policy_not_deleted(name: &str, error: &str) -> String {
    printable_lines(&format!(
        "could not delete the temporary MigrationPolicy {name}: {error}\n  delete it yourself: kubectl delete migrationpolicy {name}"
    ))
}

/// The migration exists: how it was made, for which VM, the predicted route.
pub fn migration_created(
    namespace: &str,
    vmim: &str,
    created_vmim: bool,
    id: &str,
    source: Option<&str>,
    target: Option<&str>,
) -> String {
    printable_lines(&format!(
        "migration {namespace}/{vmim} created ({}) for {id}: {} → {} (predicted)",
        if created_vmim {
            "VirtualMachineInstanceMigration"
        } else {
            "virtctl-style migrate subresource"
        },
        source.unwrap_or("?"),
        target.unwrap_or("?"),
    ))
}

/// Following failed (a watch gave up): the migration itself goes on.
pub fn migration_goes_on(abort_cmd: &str) -> String {
    printable_lines(&format!(
        "the migration goes on in the cluster; abort it with: {abort_cmd}"
    ))
}

/// Ctrl-C before the start, on a VMIM vmctl created: deleted (or not).
pub fn interrupted_deleted(vmim: &str, deleted: bool) -> String {
    printable_lines(&format!(
        "interrupted before the migration started: deleted the migration {vmim} vmctl created{}",
        if deleted {
            ""
        } else {
            " (the delete failed; delete it yourself)"
        }
    ))
}

/// Ctrl-C before the start, on the VMIM virt-api created for vmctl.
pub fn interrupted_cancelled(vmim: &str) -> String {
    printable_lines(&format!(
        "interrupted before the migration started: cancelled {vmim} (the migration virt-api created for vmctl)"
    ))
}

/// Ctrl-C once streaming: vmctl stops following; how to follow or abort.
pub fn interrupted_detached(
    namespace: &str,
    vmim: &str,
    phase: MigrationPhase,
    abort_cmd: &str,
) -> String {
    printable_lines(&format!(
        "interrupted: vmctl stops following; the migration {vmim} belongs to the cluster and goes on (phase {phase}).\n  follow it: vmctl status --watch -n {namespace}\n  abort it:  {abort_cmd}"
    ))
}

/// `--timeout` passed: the migration goes on.
pub fn migrate_timed_out(elapsed_ms: u64, phase: MigrationPhase, abort_cmd: &str) -> String {
    printable_lines(&format!(
        "timed out after {} waiting (phase {phase}); the migration goes on in the cluster.\n  abort it: {abort_cmd}",
        fmt::duration(elapsed_ms as i64 / 1000),
    ))
}

/// Off a terminal, every 10 s: `[42s] phase Running, mode PreCopy, streaming 30s of 5m budget`.
pub fn heartbeat(
    now_ms: u64,
    phase: MigrationPhase,
    mode: Option<&MigrationMode>,
    streaming_ms: Option<u64>,
    budget: Option<u64>,
) -> String {
    let elapsed = streaming_ms.map(|ms| ms / 1000);
    let budget_text = match (elapsed, budget) {
        (Some(e), Some(b)) if b > 0 => format!(
            ", streaming {} of {} budget",
            fmt::duration(e as i64),
            fmt::duration(b as i64)
        ),
        (Some(e), _) => format!(", streaming {}", fmt::duration(e as i64)),
        _ => String::new(),
    };
    printable_lines(&format!(
        "[{}s] phase {phase}{}{budget_text}",
        now_ms / 1000,
        mode.map(|m| format!(", mode {m}")).unwrap_or_default(),
    ))
}

/// After a failure, when even the evidence for a diagnosis cannot be read.
pub fn no_evidence(error: &str) -> String {
    printable_lines(&format!(
        "note: cannot read the evidence for a diagnosis: {error}"
    ))
}

// ---------------------------------------------------------------- migrate's timeline

/// `POD (NODE, live)`.
pub fn describe_pod(pod: Option<&str>, node: Option<&str>, live: bool) -> String {
    let live = if live { ", live" } else { "" };
    match (pod, node) {
        (Some(p), Some(n)) => format!("{p} ({n}{live})"),
        (Some(p), None) => format!("{p} (not scheduled{live})"),
        (None, _) => "none yet".into(),
    }
}

/// The line under a phase: what the migration waits for, or why it failed.
pub fn phase_note(f: &Followed, target_pod: Option<&Pod>) -> String {
    let phase = f.phase();
    let has = |t: &str| {
        f.vmim
            .as_ref()
            .and_then(|m| m.condition(t))
            .is_some_and(|c| c.is_true())
    };
    match phase {
        MigrationPhase::Pending if has("migrationRejectedByResourceQuota") => {
            "target pod rejected by ResourceQuota (exceeded quota); KubeVirt retries".into()
        }
        MigrationPhase::Pending => "waiting for a migration slot and the target pod".into(),
        MigrationPhase::Scheduling => {
            let pod = target_pod.and_then(|p| p.metadata.name.clone());
            let unschedulable = target_pod.and_then(crate::policy::pods::unschedulable_message);
            match (pod, unschedulable) {
                (Some(p), Some(why)) => format!("target pod {p} unschedulable: {why}"),
                (Some(p), None) => {
                    format!("target pod {p} created, waiting to be scheduled and ready")
                }
                (None, _) => "creating the target pod".into(),
            }
        }
        MigrationPhase::Scheduled => "target pod ready; handing off to virt-handler".into(),
        MigrationPhase::PreparingTarget => "the target node prepares the domain".into(),
        MigrationPhase::TargetReady => "target ready; the source starts streaming".into(),
        MigrationPhase::Running => "memory is streaming".into(),
        MigrationPhase::Succeeded => "the guest runs on the target".into(),
        MigrationPhase::Failed => f
            .state()
            .and_then(|s| s.failure_reason.clone())
            .map(|r| format!("failed: {}", r.trim_end()))
            .unwrap_or_else(|| "failed".into()),
        _ => String::new(),
    }
}

/// Prints what changed since the last call: phases, the hand-off, pods, mode.
pub fn report_changes(
    f: &mut Followed,
    view: &mut ProgressView,
    now_ms: u64,
    target_pod: Option<&Pod>,
    budget: Option<u64>,
) {
    let phase = f.phase();
    let phase_text = phase.as_str().to_string();
    let note = phase_note(f, target_pod);
    let key = format!("{phase_text}|{note}");
    if !phase_text.is_empty() && f.phases.last().map(|(p, _)| p.as_str()) != Some(key.as_str()) {
        let is_new_phase = !f
            .phases
            .iter()
            .any(|(p, _)| p.split('|').next() == Some(phase_text.as_str()));
        f.phases.push((key, now_ms));
        let text = if is_new_phase {
            format!("phase {phase_text}: {note}")
        } else {
            format!("  {note}")
        };
        view.event_at(now_ms, &text);
    }
    let state = f.state().cloned();
    if let Some(s) = &state {
        if !f.announced_policy
            && let Some(p) = s.migration_policy_name.as_deref()
        {
            f.announced_policy = true;
            view.event_at(now_ms, &format!("hand-off: MigrationPolicy {p} applies"));
        }
        if f.post_copy_allowed
            && !f.announced_target_node
            && let Some(target) = s.target_node.as_deref()
        {
            f.announced_target_node = true;
            view.event_at(
                now_ms,
                &post_copy_target(
                    target,
                    s.source_node.as_deref(),
                    f.predicted_target.as_deref(),
                ),
            );
        }
        if s.target_pod.is_some() && !f.announced_pods {
            f.announced_pods = true;
            let post = s.mode == Some(MigrationMode::PostCopy);
            view.event_at(
                now_ms,
                &format!(
                    "launcher pods: source {} → target {}",
                    describe_pod(s.source_pod.as_deref(), s.source_node.as_deref(), !post),
                    describe_pod(s.target_pod.as_deref(), s.target_node.as_deref(), post)
                ),
            );
        }
        if s.start_timestamp.is_some() && f.started_ms.is_none() {
            f.started_ms = Some(now_ms);
            if let Some(b) = budget.filter(|b| *b > 0) {
                // The budget runs from the start of streaming; the view's clock from creation.
                view.set_budget_from(now_ms, Some(b));
                view.event_at(
                    now_ms,
                    &format!(
                        "streaming started: completion budget {} (KubeVirt aborts or switches mode after it)",
                        fmt::duration(b as i64)
                    ),
                );
            }
        }
        if s.mode.is_some() && s.mode != f.announced_mode {
            let previous = f
                .announced_mode
                .replace(s.mode.clone().unwrap_or(MigrationMode::PreCopy));
            match s.mode {
                Some(MigrationMode::PostCopy) => view.event_at(
                    now_ms,
                    &format!(
                        "POST-COPY: the point of no return. The guest now runs in {} on {}; its memory is still partly on {}. No abort from here; a network failure now loses the VM.",
                        s.target_pod.as_deref().unwrap_or("the target pod"),
                        s.target_node.as_deref().unwrap_or("the target"),
                        s.source_node.as_deref().unwrap_or("the source")
                    ),
                ),
                Some(MigrationMode::Paused) => view.event_at(
                    now_ms,
                    "the migration monitor paused the guest to finish the copy",
                ),
                Some(MigrationMode::PreCopy) if previous.is_none() => view.event_at(
                    now_ms,
                    "mode PreCopy (post-copy, if it comes, is the point of no return)",
                ),
                _ => {}
            }
        }
        if s.completed && !f.announced_target_pod && !s.failed {
            f.announced_target_pod = true;
            view.event_at(
                now_ms,
                &format!(
                    "launcher pods: target {} is live; source {} completes",
                    describe_pod(s.target_pod.as_deref(), s.target_node.as_deref(), true),
                    s.source_pod.as_deref().unwrap_or("?")
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_stays_vmctl_s_and_foreign_text_is_escaped() {
        let color = Style { color: true };
        let w = warning(color, "evil\u{1b}]0;x\u{7}");
        assert!(w.starts_with(&color.paint("warning:", Tone::Warn)), "{w:?}");
        assert!(w.ends_with("evil\\u{1b}]0;x\\u{7}"), "{w:?}");
        let p = post_copy_warning(color, Some("n\u{1b}[2J"), None);
        assert!(p.starts_with(&color.paint("warning:", Tone::Bad)), "{p:?}");
        assert!(p.contains("target node (predicted n\\u{1b}[2J;"), "{p:?}");
        assert!(p.contains("still on the source"), "{p:?}");
    }
}
