//! The `pdb-blocks-eviction` rule (kubevirt#18063: a PodDisruptionBudget that refuses the
//! launcher pod's eviction): its cause, what it reads, its advice and its check.

use super::*;

use std::collections::BTreeMap;

use crate::model::EvictionStrategy;
use crate::policy::eviction::{StrategySource, effective_eviction_strategy};
use crate::policy::pdb::{EvaluatedPdb, EvictionAnswer, PdbSelector, budget, evict};

pub(crate) const PDB_BLOCKS_EVICTION: Rule = Rule {
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
pub(super) fn pdb_blocks_eviction(v: &View) -> Option<Finding> {
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
    let (pod, pdb, answer) = blocking_pdb(v)?;
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
    if let EvictionAnswer::StatusStale {
        observed_generation,
        generation,
        ..
    } = &answer
    {
        f.evidence.push(Fact {
            object: object.clone(),
            field: "status.observedGeneration".into(),
            value: observed_generation.to_string(),
            note: Some(format!("metadata.generation {generation}")),
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
        EvictionAnswer::StatusStale {
            observed_generation,
            generation,
            never_syncs: Some(reason),
            ..
        } => format!(
            "its status never catches up with its spec (status.observedGeneration {observed_generation} < metadata.generation {generation}): the disruption controller cannot sync it ({reason}) and its failSafe does not advance observedGeneration (kubernetes pkg/controller/disruption/disruption.go), so the eviction API refuses every eviction for good"
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
    f.next_steps.push(if max_unavailable.is_some() {
        format!(
            "Use minAvailable instead of maxUnavailable (it needs no /scale): kubectl edit pdb -n {ns} {name}"
        )
    } else {
        format!("Relax the budget or narrow its selector: kubectl edit pdb -n {ns} {name}")
    });
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

/// The launcher pod's eviction as the eviction API answers it (policy::pdb, the code
/// plan-drain uses): the live launcher pod, the first PodDisruptionBudget that selects it
/// and the answer, when that answer refuses the eviction. None when no budget refuses it.
pub(super) fn blocking_pdb<'a>(
    v: &View<'a>,
) -> Option<(
    &'a crate::model::Pod,
    &'a crate::model::PodDisruptionBudget,
    EvictionAnswer,
)> {
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
    Some((pod, pdb, answer))
}
