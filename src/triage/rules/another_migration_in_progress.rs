//! The `another-migration-in-progress` rule: its cause, what it reads, its advice and its check.

use super::*;

/// Launcher pods of the VMI that still run, other than this migration's target.
pub(super) fn extra_live_pods<'a>(v: &View<'a>) -> Vec<&'a crate::model::Pod> {
    v.pods
        .iter()
        .copied()
        .filter(|p| !pod_is_finished(p))
        .filter(|p| Some(pod_name(p)) != v.target_pod_name.as_deref())
        .collect()
}

pub(crate) const ANOTHER_MIGRATION_IN_PROGRESS: Rule = Rule {
    cause: Cause {
        id: "another-migration-in-progress",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "Event FailedMigration on the VMIM",
        "VirtualMachineInstanceMigration status.phase of the VMI's other migrations",
        "Pod status.phase of the VMI's launcher pods",
    ],
    advice: "Only one migration per VMI runs at a time: wait for the other one, or abort it.",
    blocks: true,
    check: another_migration_in_progress,
};

pub(super) fn another_migration_in_progress(v: &View) -> Option<Finding> {
    let event = v.vmim_events().find(|e| {
        let m = event_message(e);
        m == s::ANOTHER_IN_PROGRESS || m == s::STATE_TAKEN_OVER
    });
    let waiting = matches!(v.phase, MigrationPhase::Pending | MigrationPhase::Unset);
    let created = v.created;
    let other = v.others().find(|m| {
        !m.is_final()
            && match (created, m.metadata.creation_timestamp.as_ref()) {
                (Some(c), Some(t)) => t.0 <= c,
                _ => true,
            }
    });
    let extra = extra_live_pods(v);
    let too_many_pods = waiting && extra.len() > 1;
    if event.is_none() && !(waiting && other.is_some()) && !too_many_pods {
        return None;
    }
    let mut f = Finding::default();
    if let Some(e) = event {
        f.evidence.push(v.event_fact(e));
    }
    let ns = v.namespace();
    if let Some(o) = other.filter(|_| waiting || event.is_some()) {
        f.evidence.push(Fact {
            object: format!("VirtualMachineInstanceMigration/{ns}/{}", o.name()),
            field: "status.phase".into(),
            value: o.phase().as_str().to_string(),
            note: None,
        });
        f.summary = if event.is_some() {
            format!(
                "Another migration of this VMI ({}, {}) held it, so this one failed at once: {}",
                o.name(),
                o.phase(),
                event.map(event_message).unwrap_or("")
            )
        } else {
            format!(
                "Another migration of this VMI ({}, {}) is still in progress; only one runs at a time, so this one waits.",
                o.name(),
                o.phase()
            )
        };
        f.next_steps.push(format!(
            "Explain the other one: vmctl explain {} -n {ns}",
            o.name()
        ));
        f.next_steps.push(format!(
            "Or abort it: kubectl delete vmim -n {ns} {}",
            o.name()
        ));
    } else if too_many_pods {
        let names: Vec<&str> = extra.iter().map(|p| pod_name(p)).collect();
        for p in &extra {
            f.evidence.push(v.pod_fact(
                pod_name(p),
                "status.phase",
                pod_phase(p).unwrap_or("?").to_string(),
            ));
        }
        // kubectl shows such a pod as Completed, but its phase is not final yet, and
        // virt-controller counts pods by phase (kubevirt#12773).
        let exited: Vec<&str> = extra
            .iter()
            .filter(|p| all_containers_exited(p))
            .map(|p| pod_name(p))
            .collect();
        for name in &exited {
            f.evidence.push(v.pod_fact(
                name,
                "status.containerStatuses[*].state",
                "terminated (all containers)",
            ));
        }
        f.summary = format!(
            "The VMI still has {} launcher pods that have not terminated ({}): a previous migration has not finished cleaning up, and KubeVirt waits before creating another target pod (virt-controller logs \"Waiting to schedule target pod for migration because there are already multiple pods running for vmi {}/{}\"; there is no event).{}",
            names.len(),
            names.join(", "),
            v.namespace(),
            v.vmi_name(),
            if exited.is_empty() {
                String::new()
            } else {
                format!(
                    " {} shows as Completed (all its containers exited) but its phase is still {}, so it still counts.",
                    exited.join(", "),
                    extra
                        .iter()
                        .find(|p| Some(pod_name(p)) == exited.first().copied())
                        .and_then(|p| pod_phase(p))
                        .unwrap_or("not final")
                )
            }
        );
        f.next_steps.push(format!(
            "See them: kubectl get pods -n {ns} -l kubevirt.io/created-by={} -o wide",
            v.vmi.and_then(|x| x.uid()).unwrap_or("<vmi uid>")
        ));
        for name in &exited {
            f.next_steps.push(format!(
                "{name} no longer runs anything; find why the kubelet has not finished it (kubectl describe pod -n {ns} {name}), or delete it: kubectl delete pod -n {ns} {name}"
            ));
        }
    } else {
        f.summary = format!(
            "Another migration held the VMI, so this one failed at once: {}",
            event.map(event_message).unwrap_or("")
        );
    }
    if v.is_final() {
        f.next_steps.push(retry_step(v));
    }
    Some(f)
}
