//! `--order auto`: which nodes the next batch drains. A greedy choice made batch by batch
//! from the simulated state, no search over permutations:
//!
//! 1. nodes holding a VMI that blocks any drain by its own nature (evictionStrategy
//!    LiveMigrate on a VMI that cannot migrate, or a strategy that holds the drain) go last:
//!    the rest of the rollout finishes before the rollout stops on them;
//! 2. then the node with the fewest running VMIs now, then the least memory requested now,
//!    then the given order.
//!
//! Why it cuts repeated moves: the scheduler puts a migrating VM on the node with the most
//! free memory, which is the emptiest node not drained. Draining the emptiest nodes first
//! leaves few VMs to move while no node is done yet (those are the ones that move twice);
//! once a node is done it is empty and uncordoned, so it is where the next VMs go; and a node
//! that received VMs is no longer among the emptiest, so it waits until the VMs that can go
//! to done nodes have. Each pick looks at every node left once: O(nodes) per batch.

use std::collections::HashMap;

use super::state::Sim;
use crate::model::KubeVirt;
use crate::policy::drain::migratability::assess;
use crate::policy::drain::strategy::{Shutdown, decide};
use crate::policy::eviction::effective_eviction_strategy;
use crate::policy::index::work;
use crate::policy::migratability::migratability;

/// How many VMIs on each node block any drain by their own nature (no capacity involved).
pub fn self_blocking(
    sim: &Sim,
    nodes: &[String],
    kubevirt: Option<&KubeVirt>,
) -> HashMap<String, u32> {
    let mut out = HashMap::new();
    for node in nodes {
        let count = sim
            .vmis_on(node)
            .filter(|v| !v.status.phase.as_ref().is_some_and(|p| p.is_final()))
            .filter(|v| {
                work::step(1);
                let strategy = effective_eviction_strategy(v, kubevirt);
                let assessment = assess(&migratability(v));
                let decision = decide(
                    &strategy.strategy,
                    &assessment,
                    &Shutdown::of(v, false, None),
                );
                decision.action.blocks()
            })
            .count();
        out.insert(node.clone(), u32::try_from(count).unwrap_or(u32::MAX));
    }
    out
}

/// Takes the next batch (up to `size` nodes) out of `remaining`, best first.
pub fn pick(
    sim: &Sim,
    remaining: &mut Vec<String>,
    size: usize,
    blocking: &HashMap<String, u32>,
) -> Vec<String> {
    // `remaining` keeps the given order, so the position breaks ties.
    let mut keyed: Vec<(bool, usize, i128, usize)> = remaining
        .iter()
        .enumerate()
        .map(|(i, n)| {
            work::step(1);
            (
                blocking.get(n).copied().unwrap_or(0) > 0,
                sim.running_on(n),
                sim.memory_on(n),
                i,
            )
        })
        .collect();
    let size = size.min(keyed.len());
    if size == 0 {
        return Vec::new();
    }
    if size < keyed.len() {
        keyed.select_nth_unstable(size - 1);
    }
    let mut chosen: Vec<(bool, usize, i128, usize)> = keyed[..size].to_vec();
    chosen.sort();
    let mut taken: Vec<usize> = chosen.iter().map(|k| k.3).collect();
    let batch: Vec<String> = taken.iter().map(|&i| remaining[i].clone()).collect();
    taken.sort_unstable();
    for i in taken.into_iter().rev() {
        remaining.remove(i);
    }
    batch
}
