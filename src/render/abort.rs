//! What `vmctl abort` (KubeVirt) writes: nothing to abort, the post-copy refusal, the dry-run
//! plan, the result, and `--evacuation`'s lines. Cluster text is escaped in the human lines;
//! `-o json|yaml` carries it as it was read.

use std::time::Duration;

use serde_json::json;

use super::{OutputFormat, Style, Tone, structured, with_warnings};
use crate::error::Result;
use crate::model::VMCTL_API_VERSION;
use crate::model::vmi::AbortStatus;
use crate::names::Target;
use crate::policy::abort::{AbortPlan, LastMigration, Outcome, Recreator};
use crate::text::{self as fmt, printable, printable_lines};

/// The migration an abort is about.
#[derive(Debug, Clone, Copy)]
pub struct Names<'a> {
    pub namespace: &'a str,
    pub migration: &'a str,
    pub vmi: &'a str,
}

/// `nothing to abort: …` when no migration is in flight, with the VMI's last one.
pub fn nothing_to_abort(namespace: &str, target: &Target, last: Option<&LastMigration>) -> String {
    let what = match target {
        Target::Migration(n) => format!("migration {namespace}/{n} has already ended"),
        Target::Vmi(n) => format!("no migration of {namespace}/{n} is in flight"),
    };
    let last = match last {
        Some(LastMigration::Failed { reason }) => format!(
            "; its last migration failed{}",
            reason
                .as_deref()
                .map(|r| format!(": {}", printable(r.trim_end())))
                .unwrap_or_default()
        ),
        Some(LastMigration::Succeeded { source, target }) => format!(
            "; its last migration succeeded ({} → {})",
            source.as_deref().unwrap_or("?"),
            target.as_deref().unwrap_or("?")
        ),
        None => String::new(),
    };
    printable_lines(&format!("nothing to abort: {what}{last}\n"))
}

/// Why a post-copy migration is not aborted.
pub fn refused_post_copy(
    style: Style,
    namespace: &str,
    migration: &str,
    target_node: Option<&str>,
    source_node: Option<&str>,
) -> String {
    let text = printable_lines(&format!(
        "migration {namespace}/{migration} is in post-copy: the guest runs on {} and part of its memory is still on {}. \
Its state is split across both nodes: aborting would lose the VM, so neither KubeVirt nor vmctl aborts a post-copy migration. \
It finishes on its own; follow it with: vmctl status --watch -n {namespace}\n",
        target_node.unwrap_or("the target"),
        source_node.unwrap_or("the source"),
    ));
    format!("{} {text}", style.paint("refused:", Tone::Bad))
}

/// Who will create a new migration after this abort, and how to stop that.
pub fn recreator_warning(r: &Recreator, n: Names) -> String {
    let Names {
        namespace,
        migration,
        vmi,
    } = n;
    match r {
        Recreator::Evacuation(node) => format!(
            "{namespace}/{migration} is an evacuation of {vmi} from {node}: while the VMI stays marked (status.evacuationNodeName={node}), KubeVirt creates a new evacuation migration after this abort (backoff 20 s, doubling per failure). To stop the evacuation itself: vmctl abort --evacuation {vmi} -n {namespace}"
        ),
        Recreator::WorkloadUpdate => format!(
            "{namespace}/{migration} was created by KubeVirt's workload updater: while {vmi} runs an outdated launcher it creates a new one after this abort (backoff 20 s, doubling per failure). To stop it, change workloadUpdateStrategy in the KubeVirt CR"
        ),
    }
}

/// `--dry-run`: the request vmctl would send (`path` is the VMIM's), as text or an `AbortPlan`.
pub fn dry_run(
    output: OutputFormat,
    warnings: Vec<String>,
    n: Names,
    plan: &AbortPlan,
    path: &str,
) -> Result<String> {
    let Names {
        namespace,
        migration,
        vmi,
    } = n;
    let phase = plan.phase.as_str();
    if output.is_structured() {
        let mut doc = json!({
            "apiVersion": VMCTL_API_VERSION,
            "kind": "AbortPlan",
            "request": format!("DELETE {path}"),
            "migration": migration, "vmi": vmi, "phase": phase,
            "beforeHandOff": plan.before_handoff,
            "recreatedBy": plan.recreated_by.as_ref().map(Recreator::id),
            "warning": plan.recreated_by.as_ref().map(|r| recreator_warning(r, n)),
        });
        with_warnings(&mut doc, warnings);
        return structured(output, &doc);
    }
    Ok(printable_lines(&format!(
        "dry run: would abort migration {namespace}/{migration} (phase {phase}) of {vmi}: DELETE {path}\n  {}\nnothing was changed.\n",
        if plan.before_handoff {
            "before the hand-off: KubeVirt deletes the target pod and fails the migration as canceled"
        } else {
            "running: KubeVirt asks virt-handler to cancel the job; the guest stays on the source"
        }
    )))
}

/// The DELETE found no VMIM.
pub fn already_gone(namespace: &str, migration: &str) -> String {
    printable_lines(&format!(
        "nothing to abort: migration {namespace}/{migration} is already gone\n"
    ))
}

/// How the abort ended, as a line or an `AbortResult`.
pub fn result(
    output: OutputFormat,
    warnings: Vec<String>,
    n: Names,
    outcome: &Outcome,
    abort_status: Option<&AbortStatus>,
    took: Duration,
) -> Result<String> {
    let Names {
        namespace,
        migration: name,
        vmi,
    } = n;
    if output.is_structured() {
        let text = result_line(n, outcome, took, str::to_string);
        let mut doc = json!({"apiVersion": VMCTL_API_VERSION, "kind": "AbortResult",
            "namespace": namespace, "migration": name, "vmi": vmi, "result": outcome.id(),
            "abortStatus": abort_status.map(|a| a.as_str().to_string()), "message": text});
        with_warnings(&mut doc, warnings);
        return structured(output, &doc);
    }
    Ok(printable_lines(&format!(
        "{}\n",
        result_line(n, outcome, took, printable)
    )))
}

/// The result in words; `quote` takes the failure reason (escaped for a terminal).
fn result_line(n: Names, outcome: &Outcome, took: Duration, quote: fn(&str) -> String) -> String {
    let Names {
        namespace,
        migration: name,
        vmi,
    } = n;
    let took = fmt::duration(took.as_secs() as i64);
    let source = |s: &Option<String>| s.clone().unwrap_or_else(|| "the source".into());
    match outcome {
        Outcome::Completed { target } => format!(
            "abort too late: migration {namespace}/{name} completed before the abort landed; {vmi} runs on {}",
            target.as_deref().unwrap_or("the target")
        ),
        Outcome::AbortFailed { reason } => format!(
            "abort failed (abortStatus Failed): {}; see vmctl explain migration/{name} -n {namespace}",
            reason
                .as_deref()
                .map(|r| quote(r.trim_end()))
                .unwrap_or_else(|| "no reason recorded".into())
        ),
        Outcome::Aborted {
            source: node,
            source_pod,
        } => format!(
            "aborted (abortStatus Succeeded) in {took}: {namespace}/{vmi} keeps running on {}{}",
            source(node),
            source_pod
                .as_deref()
                .map(|p| format!(" in {p} (live)"))
                .unwrap_or_default()
        ),
        Outcome::Cancelled { source: node } => format!(
            "cancelled in {took}: migration {namespace}/{name} ended before streaming; {namespace}/{vmi} stays on {}",
            source(node)
        ),
        Outcome::Ended { phase } => {
            format!("migration {namespace}/{name} ended in phase {phase}")
        }
    }
}

/// `--evacuation` on a VMI that is not marked.
pub fn not_marked(namespace: &str, name: &str) -> String {
    printable_lines(&format!(
        "nothing to cancel: {namespace}/{name} is not marked for evacuation (no status.evacuationNodeName)\n"
    ))
}

/// `--evacuation` before KubeVirt v1.7: the manual way (kubevirt/kubevirt#9585).
pub fn evacuate_cancel_unsupported(
    version: Option<&str>,
    namespace: &str,
    name: &str,
    node: &str,
) -> String {
    printable_lines(&format!(
        "cannot cancel: KubeVirt {} has no evacuate/cancel (it came in v1.7). {namespace}/{name} stays marked for evacuation from {node}, \
and KubeVirt keeps creating evacuation migrations for it even after the node is uncordoned (kubevirt/kubevirt#9585).\n\
The manual way:\n\
  1. abort the evacuation migration in flight, if any: vmctl abort {name} -n {namespace}\n\
  2. clear the mark as a cluster admin: kubectl patch vmi {name} -n {namespace} --type=json -p '[{{\"op\":\"remove\",\"path\":\"/status/evacuationNodeName\"}}]'\n\
     (or let the migration complete: the target virt-handler clears it)\n\
  3. uncordon {node} if the drain is called off\n",
        version.unwrap_or("(version not reported)")
    ))
}

/// `--evacuation --dry-run`: the request vmctl would send.
pub fn evacuate_cancel_dry_run(path: &str, node: &str) -> String {
    printable_lines(&format!(
        "dry run: would PUT {path} with {{\"evacuationNodeName\": \"{node}\"}} (as virtctl evacuate-cancel does)\nnothing was changed.\n"
    ))
}

/// `--evacuation` done.
pub fn evacuation_cancelled(namespace: &str, name: &str, node: &str) -> String {
    printable_lines(&format!(
        "evacuation of {namespace}/{name} from {node} cancelled (evacuationNodeName cleared through evacuate/cancel).\n  \
An evacuation migration already in flight goes on: abort it with vmctl abort {name} -n {namespace}\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: Names = Names {
        namespace: "prod",
        migration: "m",
        vmi: "a",
    };

    #[test]
    fn the_evacuation_warning_says_how_to_stop_it() {
        let w = recreator_warning(&Recreator::Evacuation("node-1".into()), N);
        assert!(w.contains("vmctl abort --evacuation a -n prod"), "{w}");
        assert!(w.contains("status.evacuationNodeName=node-1"), "{w}");
    }

    #[test]
    fn a_hostile_failure_reason_is_shown_escaped_in_text_and_kept_in_json() {
        let reason = Some("boom\u{1b}[2J\nnext".to_string());
        let last = LastMigration::Failed {
            reason: reason.clone(),
        };
        let line = nothing_to_abort("prod", &Target::Vmi("a".into()), Some(&last));
        assert_eq!(
            line,
            "nothing to abort: no migration of prod/a is in flight; its last migration failed: boom\\u{1b}[2J\\nnext\n"
        );
        let outcome = Outcome::AbortFailed { reason };
        let text = result(
            OutputFormat::Table,
            vec![],
            N,
            &outcome,
            None,
            Duration::ZERO,
        )
        .unwrap();
        assert!(!text.contains('\u{1b}'), "{text:?}");
        let doc = result(
            OutputFormat::Json,
            vec![],
            N,
            &outcome,
            None,
            Duration::ZERO,
        )
        .unwrap();
        let doc: serde_json::Value = serde_json::from_str(&doc).unwrap();
        assert_eq!(doc["result"], "abort-failed");
        assert!(doc["message"].as_str().unwrap().contains("boom\u{1b}[2J"));
    }

    #[test]
    fn an_abort_that_took_names_the_source_it_stays_on() {
        let outcome = Outcome::Aborted {
            source: Some("node-1".into()),
            source_pod: Some("virt-launcher-a-1".into()),
        };
        let text = result(
            OutputFormat::Table,
            vec![],
            N,
            &outcome,
            Some(&AbortStatus::Succeeded),
            Duration::from_secs(3),
        )
        .unwrap();
        assert_eq!(
            text,
            "aborted (abortStatus Succeeded) in 3s: prod/a keeps running on node-1 in virt-launcher-a-1 (live)\n"
        );
    }
}
