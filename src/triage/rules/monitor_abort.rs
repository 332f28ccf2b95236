//! The migration monitor's aborts, `not-converging` and `no-progress`: each rule's cause,
//! reads, advice and check, and what they share (telling the two apart, the budget, the
//! timing facts).

use super::aborted_by_request::{Requester, requester};
use super::*;

/// The monitor's abort, read from the string (≤v1.8) or inferred from elapsed time (v1.9+).
pub(super) enum MonitorAbort {
    NotConverging { inferred: bool },
    NoProgress { inferred: bool },
}

pub(super) fn monitor_abort(v: &View) -> Option<MonitorAbort> {
    let r = v.failure_reason()?;
    match classify_failure(r) {
        FailureText::NotCompletedV18 { .. } => {
            Some(MonitorAbort::NotConverging { inferred: false })
        }
        FailureText::StuckV18 { .. } => Some(MonitorAbort::NoProgress { inferred: false }),
        FailureText::GenericAbort if requester(v).by != Requester::User => {
            if kv19::stall_detector(v).is_some() && (v.mode() == Some(&MigrationMode::Paused)) {
                return Some(MonitorAbort::NotConverging { inferred: true });
            }
            let budget = v.budget.filter(|b| *b > 0)? as i64;
            let elapsed = v.elapsed()?;
            if elapsed + BUDGET_SLACK_SECONDS >= budget {
                Some(MonitorAbort::NotConverging { inferred: true })
            } else {
                Some(MonitorAbort::NoProgress { inferred: true })
            }
        }
        _ => None,
    }
}

/// startTimestamp, endTimestamp (with the time between them) and the guest memory the
/// budget is computed from.
pub(super) fn timing_facts(v: &View) -> Vec<Fact> {
    let mut facts = Vec::new();
    if let Some(t) = v.start {
        facts.push(v.state_fact("startTimestamp", t.to_string()));
    }
    if let (Some(t), Some(e)) = (v.end, v.elapsed()) {
        let mut fact = v.state_fact("endTimestamp", t.to_string());
        fact.note = Some(format!("{e} s after the start"));
        facts.push(fact);
    }
    if let Some(q) = v.vmi.and_then(|x| x.guest_memory()) {
        let field = if v
            .vmi
            .and_then(|x| x.spec.domain.memory.as_ref())
            .and_then(|m| m.guest.as_ref())
            .is_some()
        {
            "spec.domain.memory.guest"
        } else {
            "spec.domain.resources.requests.memory"
        };
        facts.push(v.vmi_fact(field, q.as_str()));
    }
    facts
}

pub(super) fn budget_words(v: &View) -> String {
    let per_gib = v.config.completion_timeout_per_gib;
    let memory = v.vmi.and_then(|x| x.guest_memory());
    match (v.budget, memory) {
        // KubeVirt multiplies completionTimeoutPerGiB by the memory in whole decimal
        // gigabytes (10^9 bytes, rounded up), not GiB: say the count, and the memory in GiB.
        (Some(b), Some(mem)) => format!(
            "{} ({per_gib} s × {}: the guest's {} of memory counted as KubeVirt counts it, in started units of 10^9 bytes)",
            dur(b as i64),
            mem.ceil_decimal_gb(),
            fmt::bytes(mem.bytes())
        ),
        (Some(b), None) => dur(b as i64),
        _ => "unknown".into(),
    }
}

pub(super) fn bandwidth_words(v: &View) -> String {
    match v.config.bandwidth_per_migration {
        0 => "unlimited bandwidth".into(),
        b => format!("a bandwidth cap of {}/s", fmt::bytes(b)),
    }
}

/// When the objects cannot separate a cancel from the monitor's abort: the sentence saying so.
pub(super) fn cancel_unknown_words(v: &View) -> &'static str {
    if requester(v).by == Requester::Unknown {
        " Whether someone cancelled it cannot be told for sure: the VMIM is gone, so its deletion (virtctl migrate-cancel) cannot be read; only the VMI's abortRequested, not set, speaks against a cancel."
    } else {
        ""
    }
}

/// What both aborts rest on: the failure reason, whether an abort was requested (when the
/// cause is inferred), and the timing.
fn abort_finding(v: &View, inferred: bool) -> Finding {
    let mut f = Finding {
        inferred,
        evidence: failure_fact(v).into_iter().collect(),
        ..Default::default()
    };
    if let (Some(st), true) = (v.state, inferred) {
        f.evidence
            .push(v.state_fact("abortRequested", st.abort_requested.to_string()));
        // The VMIM's deletion is what a cancel looks like (PR #18147 writes the same
        // failureReason for both): name it, or say it cannot be read.
        if let Some(m) = v.vmim {
            f.evidence.push(
                v.vmim_fact(
                    "metadata.deletionTimestamp",
                    m.metadata
                        .deletion_timestamp
                        .as_ref()
                        .map(|t| format!("{} (after the end: clean-up, not a cancel)", t.0))
                        .unwrap_or_else(|| "not set (nobody deleted it: not a cancel)".into()),
                ),
            );
        }
    }
    f.evidence.extend(timing_facts(v));
    f
}

pub(crate) const NOT_CONVERGING: Rule = Rule {
    cause: Cause {
        id: "not-converging",
        plane: Plane::DataPlane,
    },
    reads: &[
        "status.migrationState.{failureReason,abortRequested,startTimestamp,endTimestamp,migrationConfiguration}",
        "VirtualMachineInstance spec.domain.memory.guest / resources.requests.memory",
    ],
    advice: "The guest dirtied memory faster than it could be copied within the completion budget: allow post-copy or auto-converge, raise completionTimeoutPerGiB or the bandwidth, or migrate when the guest is quieter.",
    blocks: true,
    check: not_converging,
};

pub(super) fn not_converging(v: &View) -> Option<Finding> {
    let MonitorAbort::NotConverging { inferred } = monitor_abort(v)? else {
        return None;
    };
    let mut f = abort_finding(v, inferred);
    f.evidence.push(v.config_fact(
        "completionTimeoutPerGiB",
        v.config.completion_timeout_per_gib.to_string(),
    ));
    let elapsed = v.elapsed().map(dur).unwrap_or_else(|| "?".into());
    f.summary = format!(
        "The migration monitor aborted it after {elapsed}: the completion budget of {} ran out before the memory copy converged — the guest dirtied memory faster than it could be sent with {}.{}",
        budget_words(v),
        bandwidth_words(v),
        if inferred {
            " (Inferred: the failure reason only says the migration was aborted, nobody requested the abort, and it ended at the completion budget.)"
        } else {
            ""
        }
    );
    let stall = kv19::stall_abort_words(v).is_some();
    if let Some((summary, facts, _)) = kv19::stall_abort_words(v) {
        f.summary = summary;
        f.evidence.extend(facts);
    }
    if inferred {
        f.summary.push_str(cancel_unknown_words(v));
    }
    if !v.config.allow_post_copy {
        f.next_steps.push(format!(
            "Let it finish in post-copy (the guest then runs on the target while the rest is pulled; a network failure in that phase loses it): {}",
            v.patch_setting("allowPostCopy", "true")
        ));
    }
    f.next_steps.push(format!(
        "Give it more time: {}",
        v.patch_setting(
            "completionTimeoutPerGiB",
            &(v.config.completion_timeout_per_gib.max(1) * 2).to_string()
        )
    ));
    if v.config.bandwidth_per_migration > 0 {
        f.next_steps.push(format!(
            "Or raise the bandwidth cap ({}/s now): {}",
            fmt::bytes(v.config.bandwidth_per_migration),
            v.patch_setting(
                "bandwidthPerMigration",
                &format!(
                    "\"{}Mi\"",
                    (v.config.bandwidth_per_migration >> 20).max(1) * 2
                )
            )
        ));
    }
    if !v.config.allow_auto_converge {
        f.next_steps.push(format!(
            "Or let QEMU throttle the guest's CPUs until it converges: {}",
            v.patch_setting("allowAutoConverge", "true")
        ));
    }
    if stall {
        f.next_steps.push(kv19::stall_log_step(v));
    }
    f.next_steps
        .push(retry_step(v).replace("when fixed", "when the guest is quieter"));
    Some(f)
}

pub(crate) const NO_PROGRESS: Rule = Rule {
    cause: Cause {
        id: "no-progress",
        plane: Plane::DataPlane,
    },
    reads: &[
        "status.migrationState.{failureReason,abortRequested,startTimestamp,endTimestamp,migrationConfiguration}",
        "KubeVirt spec.configuration.migrations.progressTimeout",
    ],
    advice: "Nothing was transferred for progressTimeout seconds: usually the network between the nodes (migration proxy, MTU, firewall).",
    blocks: true,
    check: no_progress,
};

pub(super) fn no_progress(v: &View) -> Option<Finding> {
    let MonitorAbort::NoProgress { inferred } = monitor_abort(v)? else {
        return None;
    };
    let mut f = abort_finding(v, inferred);
    let stall = kv19::stall_abort_words(v);
    if stall.is_none() {
        f.evidence
            .push(v.config_fact("progressTimeout", v.config.progress_timeout.to_string()));
    }
    let elapsed = v.elapsed().map(dur).unwrap_or_else(|| "?".into());
    f.summary = format!(
        "The migration monitor aborted it after {elapsed} because no data was transferred for progressTimeout ({} s): the copy from {} to {} stalled, which is usually the network between the nodes.{}",
        v.config.progress_timeout,
        src_node(v),
        tgt_node(v),
        if inferred {
            format!(
                " (Inferred: the failure reason only says the migration was aborted, nobody requested the abort, and it ended well before the {} completion budget, so the progress check fired.)",
                budget_words(v)
            )
        } else {
            String::new()
        }
    );
    if let Some((summary, facts, sd)) = stall {
        f.summary = summary;
        f.evidence.extend(facts);
        if !v.config.allow_workload_disruption {
            f.next_steps.push(format!(
                "Let the stall detector finish a stalled migration instead of aborting it (post-copy, or a stop-and-copy that pauses the guest briefly): {}",
                v.patch_setting("allowWorkloadDisruption", "true")
            ));
        }
        f.next_steps.push(format!(
            "Or give a stall longer than stallProgressTimeout ({} s) before it counts: set experimental.stallDetector.stallProgressTimeout in a MigrationPolicy",
            sd.settings.stall_progress_timeout
        ));
        f.next_steps.push(kv19::stall_log_step(v));
    }
    if inferred {
        f.summary.push_str(cancel_unknown_words(v));
    }
    f.next_steps.push(format!(
        "Check the migration path between {} and {}: virt-handler's log on both nodes (kubectl get pods -n kubevirt -l kubevirt.io=virt-handler -o wide), MTU and firewalls for the migration ports (49152, 49153){}",
        src_node(v),
        tgt_node(v),
        v.state
            .and_then(|st| st.migration_configuration.as_ref())
            .and_then(|c| c.network.clone())
            .map(|n| format!(", and the dedicated migration network {n}"))
            .unwrap_or_default()
    ));
    if kv19::stall_detector(v).is_none() {
        f.next_steps.push(format!(
            "If the copy is slow rather than stuck, allow a longer stall (progressTimeout is cluster-wide only): {}",
            v.patch_kubevirt_migrations(
                "progressTimeout",
                &(v.config.progress_timeout.max(1) * 2).to_string()
            )
        ));
    }
    f.next_steps.push(retry_step(v));
    Some(f)
}
