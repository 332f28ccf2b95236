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
//! to done nodes have. The nodes left wait in a queue ordered by that key; after a batch
//! only the nodes it touched are keyed again: O(batch × log nodes) per batch, not every node.

use std::collections::{BTreeSet, HashMap};

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

/// (blocks, running VMIs now, memory requested now, position in the given order).
type Key = (bool, usize, i128, usize);

/// The nodes left, best first.
pub struct Picker {
    queue: BTreeSet<Key>,
    /// Node → its key in the queue.
    keys: HashMap<String, Key>,
    /// By position in the given order.
    names: Vec<String>,
    blocking: HashMap<String, u32>,
}

impl Picker {
    /// `remaining` in the given order (the position breaks ties); `blocking` from
    /// [`self_blocking`].
    pub fn new(sim: &Sim, remaining: Vec<String>, blocking: HashMap<String, u32>) -> Picker {
        let mut picker = Picker {
            queue: BTreeSet::new(),
            keys: HashMap::new(),
            names: remaining,
            blocking,
        };
        for i in 0..picker.names.len() {
            let key = picker.key(sim, i);
            picker.queue.insert(key);
            picker.keys.insert(picker.names[i].clone(), key);
        }
        picker
    }

    fn key(&self, sim: &Sim, i: usize) -> Key {
        work::step(1);
        let n = &self.names[i];
        (
            self.blocking.get(n).copied().unwrap_or(0) > 0,
            sim.running_on(n),
            sim.memory_on(n),
            i,
        )
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Takes the next batch (up to `size` nodes), best first.
    pub fn next(&mut self, size: usize) -> Vec<String> {
        let mut batch = Vec::new();
        while batch.len() < size {
            let Some(key) = self.queue.pop_first() else {
                break;
            };
            let name = self.names[key.3].clone();
            self.keys.remove(&name);
            batch.push(name);
        }
        batch
    }

    /// The nodes whose VMIs or usage a batch changed are keyed again.
    pub fn update(&mut self, sim: &Sim, touched: &[String]) {
        for name in touched {
            let Some(old) = self.keys.get(name).copied() else {
                continue;
            };
            let key = self.key(sim, old.3);
            if key != old {
                self.queue.remove(&old);
                self.queue.insert(key);
                self.keys.insert(name.clone(), key);
            }
        }
    }
}
