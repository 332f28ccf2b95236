//! The lines of commands that follow migrations (`migrate`, `abort`, `status --watch`):
//! one function per kind of message, each escaping the cluster text it carries.

use std::time::Duration;

use crate::cluster::Kind;
use crate::cluster::watch::Reconnecting;
use crate::migration::follow::Advice;
use crate::model::vmi::MigrationMode;
use crate::model::vmim::MigrationPhase;

use super::fmt::{self, printable, printable_lines};
use super::{Style, Tone};

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

/// The controller's advice on a KubeVirt migration that does not converge.
pub fn advice(a: &Advice) -> String {
    printable_lines(&format!(
        "not converging: consider --allow-postcopy ({})",
        a.why
    ))
}

/// `warning: TEXT`, the label in the warning colour.
pub fn warning(style: Style, text: &str) -> String {
    printable_lines(&format!("{} {text}", style.paint("warning:", Tone::Warn)))
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

/// `note: TEXT`.
pub fn note(text: &str) -> String {
    printable_lines(&format!("note: {text}"))
}

/// Before a migration that may switch to post-copy: what that means.
pub fn post_copy_warning(style: Style, target: Option<&str>, source: Option<&str>) -> String {
    printable_lines(&format!(
        "{} post-copy is allowed for this migration: if it switches to post-copy, the guest runs on {} while its memory is still on {}. From that point there is no abort, and a network failure between the nodes loses the VM.",
        style.paint("warning:", Tone::Bad),
        target.unwrap_or("the target"),
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
