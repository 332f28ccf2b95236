//! A scheduling signature's view of the nodes: what the static fit and the scores of a
//! target pod depend on (tolerations, node selector, node affinity, host-model CPU and the
//! source's CPU model), judged once per node, and the fitting nodes kept ordered by (score,
//! free memory) so that a target is the best of them with room.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use crate::model::{Node, VirtualMachineInstance};
use crate::policy::index::work;
use crate::policy::scheduling::{
    HostCpu, Unfit, has_preferred_affinity, intolerable_prefer_no_schedule,
    preferred_affinity_weight, required_node_affinity, static_fit, uses_host_model,
};

/// Order of the fitting nodes: (minus untolerated PreferNoSchedule taints, preferred node
/// affinity weight, free memory, earlier position first), best last.
pub(super) type Rank = (i64, i64, i128, Reverse<usize>);

/// One scheduling signature's view of the nodes.
pub(super) struct Class {
    /// A VMI of the signature and its source's CPU model, to judge a changed node again.
    vmi: VirtualMachineInstance,
    source_model: Option<HostCpu>,
    /// Why each node does not fit statically (None: it fits), by node position.
    pub reasons: Vec<Option<Unfit>>,
    /// (minus PreferNoSchedule taints, preferred affinity weight) by node position.
    pub score: Vec<(i64, i64)>,
    /// The statically fitting nodes, best last.
    pub fitting: BTreeSet<Rank>,
    /// The VMI has a preferred node affinity (the plan says whether it was matched).
    pub preferred: bool,
}

impl Class {
    /// What the static fit and the scores depend on (spread constraints are kept apart, per
    /// selector, so that a selector per application does not multiply the classes).
    pub fn signature(vmi: &VirtualMachineInstance, source_model: Option<&HostCpu>) -> String {
        let required = required_node_affinity(vmi);
        let preferred = vmi
            .spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|a| {
                a.preferred_during_scheduling_ignored_during_execution
                    .as_ref()
            });
        // Serialising plain data cannot fail; an empty key would only merge classes that
        // the fit check then tells apart anyway, so fall back to the VMI's own identity.
        serde_json::to_string(&(
            &vmi.spec.tolerations,
            &vmi.spec.node_selector,
            required,
            preferred,
            uses_host_model(vmi),
            source_model,
        ))
        .unwrap_or_else(|_| format!("{}/{}", vmi.namespace(), vmi.name()))
    }

    /// Judges every node for the VMI's signature; `free` gives a node's free memory by
    /// position.
    pub fn new(
        vmi: &VirtualMachineInstance,
        source_model: Option<&HostCpu>,
        nodes: &[Node],
        draining: &[String],
        free: impl Fn(usize) -> i128,
    ) -> Class {
        work::step(nodes.len());
        let reasons: Vec<Option<Unfit>> = nodes
            .iter()
            .map(|n| static_fit(vmi, n, draining, source_model))
            .collect();
        let score: Vec<(i64, i64)> = nodes.iter().map(|n| score(vmi, n)).collect();
        let mut fitting = BTreeSet::new();
        for (i, reason) in reasons.iter().enumerate() {
            if reason.is_none() {
                fitting.insert((score[i].0, score[i].1, free(i), Reverse(i)));
            }
        }
        Class {
            vmi: vmi.clone(),
            source_model: source_model.cloned(),
            reasons,
            score,
            fitting,
            preferred: has_preferred_affinity(vmi),
        }
    }

    /// Judges node `i` again (it was cordoned, relabelled, drained or no longer drained);
    /// `free` is its free memory.
    pub fn judge(&mut self, i: usize, node: &Node, draining: &[String], free: i128) {
        work::step(1);
        let (t, w) = self.score[i];
        if self.reasons[i].is_none() {
            self.fitting.remove(&(t, w, free, Reverse(i)));
        }
        self.reasons[i] = static_fit(&self.vmi, node, draining, self.source_model.as_ref());
        self.score[i] = score(&self.vmi, node);
        if self.reasons[i].is_none() {
            let (t, w) = self.score[i];
            self.fitting.insert((t, w, free, Reverse(i)));
        }
    }

    /// Node `i`'s free memory went from `before` to `after`: its place among the fitting.
    pub fn free_changed(&mut self, i: usize, before: i128, after: i128) {
        work::step(1);
        let (t, w) = self.score[i];
        if self.fitting.remove(&(t, w, before, Reverse(i))) {
            self.fitting.insert((t, w, after, Reverse(i)));
        }
    }
}

/// (minus untolerated PreferNoSchedule taints, preferred node affinity weight) of a node.
fn score(vmi: &VirtualMachineInstance, node: &Node) -> (i64, i64) {
    (
        -i64::from(intolerable_prefer_no_schedule(&vmi.spec.tolerations, node)),
        preferred_affinity_weight(vmi, node),
    )
}
