//! Where would the scheduler put a migration target pod? Among the nodes that pass every
//! filter of [`super::scheduling`] (static ones, resources, topology spread), the best scored:
//! fewest untolerated PreferNoSchedule taints, then the highest preferred node affinity
//! weight, then the most free memory (then the first node). Resources are consumed and
//! spread domains filled as VMs are placed.
//!
//! Naively that is every node for every VM: O(VMs × nodes), which is quadratic when a drain
//! (or a rolling maintenance) covers a good part of the fleet. But the static fit and the
//! scores depend on the VMI only through its *scheduling signature* (tolerations, node
//! selector, node affinity, host-model CPU and the source's CPU model, spread constraints),
//! and a fleet has few of those. So the fit of every node is computed once per signature,
//! the fitting nodes are kept ordered by (score, free memory), and a VM's target is the first
//! of them that has the rest of its resources and keeps its spread: nodes short of memory
//! are skipped a score level at a time. Topology spread counts are kept per (selector,
//! domain), only for domains that hold selected pods, and updated as pods are placed. When
//! nothing fits, why each node fails is kept per (signature, spread, requests) and updated
//! with the nodes placed on since. The answers, and the explanations, are exactly the naive
//! ones (tested below).
//!
//! Among fitting nodes the order is lexicographic (PreferNoSchedule, preferred affinity,
//! free memory), not the scheduler's weighted sum of normalised plugin scores (which also
//! has LeastAllocated, BalancedAllocation, ImageLocality, ScheduleAnyway spread): free
//! memory as the last key keeps the "skip the nodes short of memory" step, and memory is
//! what a VM's target pod is nearly always short of. The plan says the choice is a
//! prediction.
//!
//! The parts: [`class`] (a scheduling signature's static fit and scores of every node, the
//! fitting nodes in order), [`spread`] (DoNotSchedule topology spread counts per domain),
//! [`unplaceable`] (why every node fails a pod, kept up to date as nodes change), [`no_fit`]
//! (that explanation in the scheduler's words and the fix), and [`search`] (the
//! [`TargetSearch`] over them, with what each node holds).

mod class;
mod no_fit;
mod search;
mod spread;
#[cfg(test)]
mod tests;
mod unplaceable;

pub use self::no_fit::NoFit;
pub use self::search::TargetSearch;

use super::scheduling::{HostCpu, NodeUsage, Resources, show_amount};
use crate::model::VirtualMachineInstance;

/// The migration target pod of a VMI: what the scheduler sees of it.
#[derive(Debug, Clone)]
pub struct TargetPod<'v> {
    pub vmi: &'v VirtualMachineInstance,
    /// Its requests, as the source launcher pod's (see `policy::drain`).
    pub requests: Resources,
    /// A host-model VMI that migrated before: the host CPU its launcher pod's node selector
    /// pins (`policy::compat`), which KubeVirt requires instead of the source node's.
    pub pinned_cpu: Option<HostCpu>,
}

impl TargetPod<'_> {
    fn memory(&self) -> i128 {
        self.requests.get("memory").copied().unwrap_or(0)
    }

    /// "a 2.0 GiB target pod", naming hugepages and extended resources (GPUs) too, and cpu
    /// or ephemeral storage when some node is `short` of them.
    pub fn describe(&self, short: &[String]) -> String {
        let extra: Vec<String> = self
            .requests
            .iter()
            .filter(|(r, q)| {
                **q > 0
                    && r.as_str() != "memory"
                    && (short.contains(r)
                        || !matches!(r.as_str(), "cpu" | "ephemeral-storage" | "pods")
                            && !r.starts_with("devices.kubevirt.io/"))
            })
            .map(|(r, q)| show_amount(r, *q))
            .collect();
        let memory = crate::text::bytes(u64::try_from(self.memory().max(0)).unwrap_or(0));
        if extra.is_empty() {
            format!("a {memory} target pod")
        } else {
            format!("a {memory} target pod with {}", extra.join(", "))
        }
    }
}

/// The chosen node, and what the plan could not check or had to settle for there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub node: String,
    pub notes: Vec<String>,
}

/// A node's allocatable memory less what its pods request.
fn free_memory(allocatable: &Resources, used: &NodeUsage) -> i128 {
    allocatable.get("memory").copied().unwrap_or(0)
        - used.requested.get("memory").copied().unwrap_or(0)
}
