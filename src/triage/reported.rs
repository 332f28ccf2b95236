//! Rules for failures reported on the KubeVirt issue tracker that the first catalogue did not
//! name: post-copy without userfaultfd (kubevirt#17780), a target pod placed on the source
//! node (kubevirt#18946), and a backend-storage PVC hand-off that never completes
//! (kubevirt#17203). Each is registered in the catalogue next to the rules it must precede.

use super::objects::*;
use super::rules::{Finding, Rule};
use super::strings as s;
use super::view::View;
use super::{Cause, Fact, Plane};
use std::collections::BTreeMap;

use crate::model::EvictionStrategy;
use crate::model::vmim::MigrationPhase;
use crate::policy::eviction::{StrategySource, effective_eviction_strategy};
use crate::policy::pdb::{EvaluatedPdb, EvictionAnswer, PdbSelector, budget, evict};
use crate::render::fmt;

/// Substrings (lower case) of QEMU's refusal to enable post-copy without userfaultfd.
pub const POSTCOPY_UNSUPPORTED_TEXTS: &[&str] =
    &["userfaultfd not available", "postcopy is not supported"];

/// After the source finished, virt-controller finalises a migration within seconds; a
/// Running migration whose stream ended longer ago than this is stuck in the hand-off.
pub const HANDOFF_GRACE_SECONDS: i64 = 120;

pub const POSTCOPY_UNSUPPORTED: Rule = Rule {
    cause: Cause {
        id: "postcopy-unsupported",
        plane: Plane::DataPlane,
    },
    reads: &[
        "status.migrationState.failureReason",
        "Event Migrated on the VMI (migration uid … failed. reason:…)",
    ],
    advice: "QEMU on the target cannot use userfaultfd, so a migration that allows post-copy fails as it sets its capabilities: set the vm.unprivileged_userfaultfd sysctl to 1 on every node, or disable post-copy.",
    blocks: true,
    check: postcopy_unsupported,
};

pub const TARGET_ON_SOURCE_NODE: Rule = Rule {
    cause: Cause {
        id: "target-on-source-node",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "status.migrationState.{sourceNode,targetNode}",
        "Pod spec.nodeName of the source and target pods",
        "Event FailedMigration on the VMIM",
    ],
    advice: "The target pod landed on the node the VMI already runs on, which never works: find why the scheduler ignored the target pod's anti-affinity (another scheduler, a profile without InterPodAffinity, node topology labels).",
    blocks: true,
    check: target_on_source_node,
};

pub const BACKEND_STORAGE_HANDOFF: Rule = Rule {
    cause: Cause {
        id: "backend-storage-handoff-stuck",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "VirtualMachineInstanceMigration status.phase",
        "status.migrationState.{completed,failed,endTimestamp,sourcePersistentStatePVCName,targetPersistentStatePVCName}",
    ],
    advice: "The guest has moved, but virt-controller cannot hand the backend-storage PVC (persistent TPM/EFI state) over and retries without a timeout: fix what rejects the PVC update or deletion (finalizer, quota, PVC gone).",
    blocks: true,
    check: backend_storage_handoff,
};

pub const PDB_BLOCKS_EVICTION: Rule = Rule {
    cause: Cause {
        id: "pdb-blocks-eviction",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "PodDisruptionBudget spec.{selector,maxUnavailable}, status.disruptionsAllowed",
        "Event CalculateExpectedPodCountFailed on the PodDisruptionBudget",
        "VirtualMachineInstance spec.evictionStrategy (else the KubeVirt CR's)",
    ],
    advice: "A PodDisruptionBudget over the launcher pod allows no disruption, so a drain cannot evict this VM: a PDB with maxUnavailable never works over VMI pods (VMIs have no /scale subresource); use minAvailable, or let the VM live-migrate.",
    blocks: true,
    check: pdb_blocks_eviction,
};

/// The disruption controller's event when a PDB's pods are owned by something without /scale.
pub const REASON_EXPECTED_PODS_FAILED: &str = "CalculateExpectedPodCountFailed";

/// kubevirt#18063: with no migration to explain, a PDB over the VMI's launcher pod that allows
/// no disruption means a drain of its node blocks here — unless KubeVirt intercepts the
/// eviction (LiveMigrate, External, or LiveMigrateIfPossible while migratable), in which
/// case the VM migrates and the PDB does not matter.
fn pdb_blocks_eviction(v: &View) -> Option<Finding> {
    if v.has_migration() {
        return None;
    }
    let vmi = v.vmi?;
    let strategy = effective_eviction_strategy(vmi, v.ev.kubevirt.as_ref());
    let intercepted = match &strategy.strategy {
        EvictionStrategy::LiveMigrate | EvictionStrategy::External => true,
        EvictionStrategy::LiveMigrateIfPossible => v.live_blockers().is_empty(),
        _ => false,
    };
    if intercepted {
        return None;
    }
    let pod = v.pods.iter().copied().find(|p| !pod_is_finished(p))?;
    // The PDBs as the eviction API reads them (policy::pdb, the code plan-drain uses):
    // `selector: {}` selects the whole namespace, null nothing, an invalid one nothing.
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    let ns_pods: Vec<&crate::model::Pod> = v.ev.pods.iter().collect();
    let selected: Vec<(&crate::model::PodDisruptionBudget, EvaluatedPdb)> =
        v.ev.pdbs
            .iter()
            .filter(|pdb| {
                pdb.metadata
                    .namespace
                    .as_deref()
                    .is_none_or(|n| n == v.namespace())
            })
            .filter_map(|pdb| {
                let selector = PdbSelector::of(pdb);
                if !selector.matches(&labels) {
                    return None;
                }
                let pods: Vec<&crate::model::Pod> = ns_pods
                    .iter()
                    .copied()
                    .filter(|p| {
                        selector.matches(p.metadata.labels.as_ref().unwrap_or(&BTreeMap::new()))
                    })
                    .collect();
                // Explain reads only launcher pods: a computed budget is an estimate.
                let evaluated = EvaluatedPdb::new(pdb, &selector, budget(pdb, &pods, false));
                Some((pdb, evaluated))
            })
            .collect();
    let refs: Vec<&EvaluatedPdb> = selected.iter().map(|(_, e)| e).collect();
    let answer = evict(pod, &refs);
    if !answer.blocks() {
        return None;
    }
    let pdb = selected.first().map(|(p, _)| *p)?;
    let name = pdb.metadata.name.clone().unwrap_or_default();
    let ns = v.namespace();
    let object = format!("PodDisruptionBudget/{ns}/{name}");
    let mut f = Finding::default();
    let max_unavailable = pdb.spec.as_ref().and_then(|sp| sp.max_unavailable.as_ref());
    if let Some(m) = max_unavailable {
        let text = match m {
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(i) => i.to_string(),
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(s) => s.clone(),
        };
        f.evidence.push(Fact {
            object: object.clone(),
            field: "spec.maxUnavailable".into(),
            value: text,
            note: None,
        });
    }
    if let Some(st) = &pdb.status
        && let Some(allowed) = st.disruptions_allowed
    {
        f.evidence.push(Fact {
            object: object.clone(),
            field: "status.disruptionsAllowed".into(),
            value: allowed.to_string(),
            note: st.expected_pods.map(|n| format!("expectedPods {n}")),
        });
    }
    let event =
        v.ev.events
            .iter()
            .filter(|e| {
                e.involved_object.kind.as_deref() == Some("PodDisruptionBudget")
                    && e.involved_object.name.as_deref() == Some(name.as_str())
                    && event_reason(e) == REASON_EXPECTED_PODS_FAILED
            })
            .max_by_key(|e| event_last(e));
    if let Some(e) = event {
        f.evidence.push(v.event_fact(e));
    }
    let (object, field) = match strategy.source {
        StrategySource::VmiSpec => (v.vmi_object(), "spec.evictionStrategy".to_string()),
        StrategySource::ClusterConfig => {
            let (kv_ns, kv_name) = v.kubevirt_ref();
            (
                format!("KubeVirt/{kv_ns}/{kv_name}"),
                "spec.configuration.evictionStrategy".to_string(),
            )
        }
        StrategySource::Default => (v.vmi_object(), "spec.evictionStrategy".to_string()),
    };
    f.evidence.push(Fact {
        object,
        field,
        value: match strategy.source {
            StrategySource::Default => "(unset: KubeVirt's default, None)".to_string(),
            _ => strategy.strategy.as_str().to_string(),
        },
        note: None,
    });
    let node = vmi.status.node_name.as_deref().unwrap_or("its node");
    let why = match &answer {
        EvictionAnswer::MoreThanOnePdb { pdbs } => format!(
            "so do {} other PodDisruptionBudget(s) ({}): the eviction API never evicts a pod that two PDBs select",
            pdbs.len().saturating_sub(1),
            pdbs.join(", ")
        ),
        _ if max_unavailable.is_some() => "it uses maxUnavailable, which needs the pods' owner to have a /scale subresource, and a VirtualMachineInstance has none, so the disruption controller allows 0 disruptions".to_string(),
        _ => "it allows 0 disruptions".to_string(),
    };
    f.summary = format!(
        "PodDisruptionBudget {name} covers the launcher pod {} and {why}. With evictionStrategy {} the VM is not migrated on a drain, so evicting it is answered {} and a drain of {node} blocks here.",
        pod_name(pod),
        strategy.strategy.as_str(),
        answer.api_text()
    );
    f.next_steps.push(format!(
        "Use minAvailable instead of maxUnavailable (it needs no /scale): kubectl edit pdb -n {ns} {name}"
    ));
    let pool = vmi
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get("kubevirt.io/vmpool"));
    match (pool, vmi.owner_vm()) {
        (Some(pool), _) => f.next_steps.push(format!(
            "Or let KubeVirt live-migrate the pool's VMs on drains: evictionStrategy: LiveMigrate in VirtualMachinePool {ns}/{pool} (spec.virtualMachineTemplate.spec.template.spec)"
        )),
        (None, Some(vm)) => f.next_steps.push(format!(
            "Or let KubeVirt live-migrate it on drains: spec.template.spec.evictionStrategy: LiveMigrate on VirtualMachine {ns}/{vm}"
        )),
        (None, None) => {}
    }
    f.next_steps
        .push(format!("See the whole drain: vmctl plan-drain {node}"));
    Some(f)
}

fn retry_step(v: &View) -> String {
    match v.vmi.and_then(|x| x.owner_vm()) {
        Some(vm) => format!(
            "Retry when fixed: virtctl migrate {vm} -n {}",
            v.namespace()
        ),
        None => format!(
            "Retry when fixed: create a VirtualMachineInstanceMigration with spec.vmiName: {} in {}",
            v.vmi_name(),
            v.namespace()
        ),
    }
}

fn is_postcopy_unsupported(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    POSTCOPY_UNSUPPORTED_TEXTS.iter().any(|t| lower.contains(t))
}

fn postcopy_unsupported(v: &View) -> Option<Finding> {
    let reason = v.failure_reason().filter(|r| is_postcopy_unsupported(r));
    let event = v.newest_event(|e| {
        event_is_warning(e)
            && (event_reason(e) == s::REASON_MIGRATED
                || event_reason(e) == s::REASON_FAILED_MIGRATION)
            && is_postcopy_unsupported(event_message(e))
    });
    let text = reason.or(event.map(event_message))?;
    let mut f = Finding::default();
    if let Some(r) = reason {
        f.evidence
            .push(v.state_fact("failureReason", r.to_string()));
    }
    if let Some(e) = event {
        f.evidence.push(v.event_fact(e));
    }
    let detail = s::libvirt_error(text)
        .map(|(_, m)| m)
        .unwrap_or_else(|| text.trim().to_string());
    let target = v
        .state
        .and_then(|st| st.target_node.as_deref())
        .or_else(|| v.target_pod.and_then(pod_node))
        .unwrap_or("the target node");
    f.summary = format!(
        "Post-copy is not available on {target}: QEMU could not open userfaultfd, so the migration failed as it enabled post-copy (\"{detail}\"). Kernels since 5.11 forbid unprivileged userfaultfd unless vm.unprivileged_userfaultfd=1; the guest stays where it was."
    );
    f.next_steps.push(format!(
        "On every node that receives migrations ({target} first): sysctl -w vm.unprivileged_userfaultfd=1, and make it permanent (a file in /etc/sysctl.d/, or your distribution's node tuning/MachineConfig)"
    ));
    f.next_steps.push(format!(
        "Or stop asking for post-copy: {}",
        v.patch_setting("allowPostCopy", "false")
    ));
    f.next_steps.push(retry_step(v));
    Some(f)
}

fn target_on_source_node(v: &View) -> Option<Finding> {
    if matches!(v.phase, MigrationPhase::Succeeded) || !v.has_migration() {
        return None;
    }
    let from_state = v.state.and_then(|st| {
        let (src, tgt) = (st.source_node.as_deref()?, st.target_node.as_deref()?);
        Some((src, tgt))
    });
    let from_pods = match (
        v.source_pod.and_then(pod_node),
        v.target_pod.and_then(pod_node),
    ) {
        (Some(src), Some(tgt)) if v.source_pod_name != v.target_pod_name => Some((src, tgt)),
        _ => None,
    };
    let (node, by_state) = match (from_state, from_pods) {
        (Some((a, b)), _) if a == b => (a, true),
        (_, Some((a, b))) if a == b => (a, false),
        _ => return None,
    };
    let mut f = Finding::default();
    if by_state {
        f.evidence
            .push(v.state_fact("sourceNode", node.to_string()));
        f.evidence
            .push(v.state_fact("targetNode", node.to_string()));
    } else {
        for name in [&v.source_pod_name, &v.target_pod_name]
            .into_iter()
            .flatten()
        {
            f.evidence
                .push(v.pod_fact(name, "spec.nodeName", node.to_string()));
        }
    }
    let failed_event = v
        .vmim_events()
        .filter(|e| event_reason(e) == s::REASON_FAILED_MIGRATION)
        .max_by_key(|e| event_last(e));
    if let Some(e) = failed_event {
        f.evidence.push(v.event_fact(e));
    }
    let pod = v.target_pod_name.as_deref().unwrap_or("(unknown)");
    let ns = v.namespace();
    f.summary = if v.phase == MigrationPhase::Failed {
        format!(
            "The target pod {pod} was scheduled on {node}, the node the VMI already ran on: a migration cannot work there (both launchers on one node). It stalled until virt-controller gave up{}; that message is the symptom, the placement is the cause.",
            failed_event
                .map(|e| format!(" with \"{}\"", event_message(e)))
                .unwrap_or_default()
        )
    } else {
        format!(
            "The target pod {pod} was scheduled on {node}, the node the VMI runs on: a migration cannot work there (both launchers on one node), so it will stall in {} until it times out and fails.",
            v.phase
        )
    };
    f.next_steps.push(format!(
        "The target pod requires anti-affinity to the source pod, so a conformant scheduler never does this: check which scheduler placed it (kubectl get pod -n {ns} {pod} -o jsonpath='{{.spec.schedulerName}}') and that its profile keeps the InterPodAffinity plugin"
    ));
    f.next_steps.push(format!(
        "Check the anti-affinity's topology label on the node: kubectl get node {node} -L kubernetes.io/hostname"
    ));
    if !v.is_final()
        && let Some(m) = v.vmim
    {
        f.next_steps.push(format!(
            "It cannot succeed: abort it now rather than wait for the timeout: kubectl delete vmim -n {ns} {}",
            m.name()
        ));
    }
    f.next_steps.push(retry_step(v));
    Some(f)
}

fn backend_storage_handoff(v: &View) -> Option<Finding> {
    let st = v.state?;
    if v.vmim.is_none() || v.is_final() || !st.completed || st.failed {
        return None;
    }
    let pvcs: Vec<&str> = [
        st.source_persistent_state_pvc_name.as_deref(),
        st.target_persistent_state_pvc_name.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect();
    if pvcs.is_empty() {
        return None;
    }
    let end = v.end?;
    let since = v.now.as_second() - end.as_second();
    if since < HANDOFF_GRACE_SECONDS {
        return None;
    }
    let mut f = Finding::default();
    f.evidence
        .push(v.vmim_fact("status.phase", v.phase.as_str()));
    f.evidence.push(v.state_fact("completed", "true"));
    f.evidence
        .push(v.state_fact("endTimestamp", end.to_string()));
    if let Some(p) = &st.source_persistent_state_pvc_name {
        f.evidence
            .push(v.state_fact("sourcePersistentStatePVCName", p.clone()));
    }
    if let Some(p) = &st.target_persistent_state_pvc_name {
        f.evidence
            .push(v.state_fact("targetPersistentStatePVCName", p.clone()));
    }
    let ns = v.namespace();
    let target = st.target_node.as_deref().unwrap_or("the target node");
    f.summary = format!(
        "The guest finished moving to {target} {} ago, but the migration is still {}: virt-controller must hand the backend-storage PVC over ({}) before it completes, that step keeps failing, and it retries without a timeout.",
        fmt::duration(since),
        v.phase,
        pvcs.join(" → ")
    );
    f.next_steps.push(format!(
        "See what blocks the PVC update or deletion (finalizers, deletionTimestamp, labels): kubectl get pvc -n {ns} {} -o yaml",
        pvcs.join(" ")
    ));
    f.next_steps.push(format!(
        "A quota on PVCs or storage can reject the hand-off: kubectl describe resourcequota -n {ns}"
    ));
    f.next_steps.push(format!(
        "Read virt-controller's error: kubectl logs -n kubevirt -l kubevirt.io=virt-controller --tail=500 | grep -i -e {} -e persistent-state",
        v.vmim_name()
    ));
    f.next_steps.push(
        "Once the PVC can be updated, virt-controller completes the migration by itself: do not delete the VMIM (the guest already runs on the target)".into(),
    );
    Some(f)
}

/// True when the pod has containers and every one of them has terminated (kubectl shows it as
/// Completed) whatever its phase says.
pub fn all_containers_exited(p: &crate::model::Pod) -> bool {
    let Some(statuses) = p
        .status
        .as_ref()
        .and_then(|st| st.container_statuses.as_ref())
    else {
        return false;
    };
    !statuses.is_empty()
        && statuses
            .iter()
            .all(|c| c.state.as_ref().is_some_and(|st| st.terminated.is_some()))
}
