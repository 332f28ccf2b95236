//! Why no node can take a target pod, in the scheduler's words ("0/5 nodes fit (…)"), and
//! what would make room.

use std::collections::BTreeMap;

use super::TargetPod;
use crate::policy::scheduling::{CPU_FEATURE_PREFIX, CPU_MODEL_MIGRATION_PREFIX, HostCpu, Unfit};

/// The fix when memory, or nothing in particular, is short.
const GENERIC_FIX: &str =
    "free memory or add a node that matches the VMI's selectors, tolerations and CPU model";

/// Why no node can take the pod: the scheduler-like summary and what it rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoFit {
    /// "no node can take a 2.0 GiB target pod: 0/5 nodes fit (...)".
    pub message: String,
    /// Every node failed a filter that evicting pods cannot change (a taint, the node
    /// selector or affinity, the CPU model, a missing topology key, a cordon, the source):
    /// the scheduler then adds "Preemption is not helpful for scheduling".
    pub preemption_useless: bool,
    /// The source's host-model CPU, when some node lacks its migration label.
    pub cpu_model: Option<String>,
    /// The CPU features that host model requires on the source, when it matters.
    pub cpu_features: Vec<String>,
    /// The resources some node is short of.
    pub short: Vec<String>,
}

impl NoFit {
    /// The explanation's core: the summary, and why preemption cannot help when it cannot.
    pub fn explained(&self) -> String {
        let mut text = self.message.clone();
        if self.preemption_useless {
            text.push_str(
                "; preemption cannot help (the scheduler says \"Preemption is not helpful for scheduling\")",
            );
        }
        if let Some(model) = &self.cpu_model {
            text.push_str(&format!(
                "; the VMI uses the host-model CPU, so KubeVirt requires its target node to carry {CPU_MODEL_MIGRATION_PREFIX}{model}=true (the source's model)"
            ));
            if !self.cpu_features.is_empty() {
                let labels: Vec<String> = self
                    .cpu_features
                    .iter()
                    .map(|f| format!("{CPU_FEATURE_PREFIX}{f}=true"))
                    .collect();
                text.push_str(&format!(
                    " and the features that model requires there: {}",
                    labels.join(", ")
                ));
            }
        }
        text
    }

    /// What would make room, from what failed.
    pub fn fix(&self) -> String {
        let mut parts = Vec::new();
        if let Some(model) = &self.cpu_model {
            parts.push(format!(
                "keep a node with CPU model {model} schedulable until this VM has moved (drain the old nodes last), give the VM a named CPU model the other nodes support (spec.domain.cpu.model), or stop it and start it on a new node"
            ));
        }
        for r in &self.short {
            parts.push(match r.as_str() {
                "memory" => GENERIC_FIX.into(),
                "cpu" => format!("free {r} on a fitting node"),
                "pods" => "free pod slots (the pods allocatable) on a fitting node".into(),
                _ => format!("free {r} on a fitting node or add one that advertises it"),
            });
        }
        if parts.is_empty() {
            GENERIC_FIX.into()
        } else {
            parts.join("; or ")
        }
    }
}

/// The explanation of a pod no node takes, from why each node fails (`counts`, the source
/// nodes left out), how many nodes are the source, and the source's host CPU: the
/// scheduler's summary (how many nodes fail each way, sorted by phrase), whether preemption
/// can help, what is short.
pub(super) fn no_fit(
    pod: &TargetPod,
    counts: &BTreeMap<Unfit, u32>,
    sources: u32,
    source_model: Option<&HostCpu>,
    node_count: usize,
) -> NoFit {
    let mut preemption_useless = true;
    let mut cpu_model = None;
    let mut cpu_features = Vec::new();
    let mut short: Vec<String> = Vec::new();
    let mut phrases: BTreeMap<String, u32> = BTreeMap::new();
    if sources > 0 {
        phrases.insert("is the source".into(), sources);
    }
    for (u, n) in counts {
        match u {
            Unfit::Insufficient(r) => {
                preemption_useless = false;
                short.push(r.clone());
            }
            Unfit::TooManyPods => {
                preemption_useless = false;
                short.push("pods".into());
            }
            Unfit::Spread => preemption_useless = false,
            // The source's host model or a feature it needs: the same way out.
            Unfit::CpuModel(_) | Unfit::CpuFeature(_) => {
                if let Some(cpu) = source_model {
                    cpu_model = (!cpu.model.is_empty()).then(|| cpu.model.clone());
                    cpu_features = cpu.features.clone();
                }
            }
            _ => {}
        }
        *phrases.entry(u.phrase()).or_default() += n;
    }
    short.sort();
    short.dedup();
    let summary: Vec<String> = phrases
        .iter()
        .map(|(why, n)| format!("{n} {why}"))
        .collect();
    NoFit {
        message: format!(
            "no node can take {}: 0/{} nodes fit ({})",
            pod.describe(&short),
            node_count,
            summary.join(", ")
        ),
        preemption_useless,
        cpu_model,
        cpu_features,
        short,
    }
}
