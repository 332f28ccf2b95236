//! The `in-progress` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const IN_PROGRESS: Rule = Rule {
    cause: Cause {
        id: "in-progress",
        plane: Plane::None,
    },
    reads: &[
        "VirtualMachineInstanceMigration status.phase",
        "status.migrationState.{mode,startTimestamp}",
    ],
    advice: "Nothing is wrong yet; the summary says what it waits for.",
    blocks: false,
    check: in_progress,
};

/// How long a migration in post-copy has been in post-copy, as far as the objects tell.
/// KubeVirt's status records when streaming started, not when the monitor switched to
/// post-copy: the time since the start is the migration's, never the post-copy's. The
/// monitor switches when the completion budget runs out, so when the policy allows
/// post-copy and the budget is known the switch is inferred (and said to be); otherwise
/// the switch time is unknown.
fn postcopy_time_words(v: &View, elapsed: Option<i64>, budget: Option<i64>) -> String {
    let Some(e) = elapsed else {
        return " KubeVirt records no time of the switch to post-copy.".into();
    };
    let ran = format!(" The migration has run {}", dur(e));
    match budget {
        Some(b) if v.config.allow_post_copy && e >= b => format!(
            "{ran}; KubeVirt records no switch time: its monitor switches after the completion budget ({}), so about {} in post-copy (inferred).",
            dur(b),
            dur(e - b)
        ),
        _ => format!(
            "{ran}; KubeVirt records no time of the switch to post-copy, so how long it has been in post-copy is unknown."
        ),
    }
}

pub(super) fn in_progress(v: &View) -> Option<Finding> {
    let m = v.vmim?;
    if m.is_final() {
        return None;
    }
    let age = v.age().map(dur).unwrap_or_else(|| "?".into());
    let mut f = Finding::default();
    let ns = v.namespace();
    let summary = match &v.phase {
        MigrationPhase::Unset => {
            if m.status.phase.is_none() && v.age().is_some_and(|a| a > 60) || v.age().is_none() {
                return None;
            }
            format!("Created {age} ago; waiting for virt-controller to pick it up.")
        }
        MigrationPhase::Pending => format!(
            "Pending for {age}: waiting for virt-controller to create the target pod (not created yet). Nothing blocks it (no quota, backup, utility-volume or backoff condition, and the parallel limits are not reached)."
        ),
        MigrationPhase::Scheduling => format!(
            "Scheduling: waiting for the target pod {} to be scheduled and become ready (phase {}).",
            or_q(v.target_pod_name.as_deref()),
            v.target_pod
                .and_then(pod_phase)
                .unwrap_or("not created yet")
        ),
        MigrationPhase::Scheduled => {
            "Scheduled: the target pod is ready; waiting for the hand-off to virt-handler.".into()
        }
        MigrationPhase::PreparingTarget => format!(
            "PreparingTarget: waiting for virt-handler on {} to prepare the domain.",
            tgt_node(v)
        ),
        MigrationPhase::TargetReady => format!(
            "TargetReady: {} is ready; waiting for the source to start streaming.",
            tgt_node(v)
        ),
        MigrationPhase::Running => {
            let elapsed = v.elapsed();
            let budget = v.budget.filter(|b| *b > 0).map(|b| b as i64);
            let progress = elapsed
                .map(|e| format!(" for {}", dur(e)))
                .unwrap_or_default();
            let budget_note = match budget {
                Some(_) => format!(" The completion budget is {}.", budget_words(v)),
                None => String::new(),
            };
            match v.mode() {
                Some(MigrationMode::PostCopy) => format!(
                    "Running in post-copy (the point of no return): the guest runs on {} and pulls the rest of its memory from {}; it cannot be aborted.{}",
                    tgt_node(v),
                    src_node(v),
                    postcopy_time_words(v, elapsed, budget)
                ),
                Some(MigrationMode::Paused) => format!(
                    "Running{progress}, with the guest paused by the migration monitor so its memory can converge.{budget_note}"
                ),
                _ => {
                    let mut s = format!(
                        "Running in pre-copy{progress}, copying memory from {} to {} while the guest keeps running on {}.{budget_note}",
                        src_node(v),
                        tgt_node(v),
                        src_node(v)
                    );
                    if let (Some(e), Some(b)) = (elapsed, budget)
                        && e > b
                    {
                        s.push_str(if v.config.allow_workload_disruption {
                            " It is past its budget: expect the monitor to switch to post-copy or pause the guest."
                        } else {
                            " It is past its budget: expect the monitor to abort it."
                        });
                    }
                    s
                }
            }
        }
        MigrationPhase::WaitingForSync | MigrationPhase::Synchronizing => kv19::sync_summary(v),
        MigrationPhase::Succeeded | MigrationPhase::Failed => return None,
        MigrationPhase::Other(p) => {
            format!("In phase {p}, which this version of vmctl does not know.")
        }
    };
    f.summary = summary;
    if matches!(
        v.phase,
        MigrationPhase::WaitingForSync | MigrationPhase::Synchronizing
    ) {
        f.evidence.extend(kv19::sync_facts(v));
        f.next_steps.extend(kv19::sync_steps(v));
    }
    if let Some(st) = v.state {
        if let Some(mode) = &st.mode {
            f.evidence.push(v.state_fact("mode", mode.as_str()));
        }
        if let Some(t) = &st.start_timestamp {
            f.evidence
                .push(v.state_fact("startTimestamp", t.0.to_string()));
        }
    }
    if let Some(p) = v.target_pod
        && v.phase == MigrationPhase::Scheduling
    {
        f.evidence.push(v.pod_fact(
            pod_name(p),
            "status.phase",
            pod_phase(p).unwrap_or("?").to_string(),
        ));
    }
    if v.phase == MigrationPhase::Running {
        if let Some(p) = v.log_pod() {
            f.next_steps.push(format!(
                "Follow it: kubectl logs -n {ns} {} -c compute -f | grep -i migration",
                pod_name(p)
            ));
        }
        if v.mode() != Some(&MigrationMode::PostCopy) {
            f.next_steps.push(format!(
                "To abort it before it finishes: kubectl delete vmim -n {ns} {}",
                m.name()
            ));
        }
    }
    f.next_steps.push(format!(
        "Watch it: kubectl get vmim -n {ns} {} -w",
        m.name()
    ));
    Some(f)
}
