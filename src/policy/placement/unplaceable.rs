//! Why every node fails one kind of target pod, kept per (scheduling class, spread states,
//! requests) and brought up to date with only the nodes changed since (a placement, what a
//! node holds, a cordon, a label, a drain), so that a drain that fills the cluster, or a
//! rollout whose later batches keep finding no room, stays linear: explaining the same
//! failure again costs the changes since, not every node.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::policy::index::work;
use crate::policy::scheduling::Unfit;

/// Why every node fails one kind of target pod, as of `changes` entries of the change log.
pub(super) struct Unplaceable {
    changes: usize,
    /// Why each node fails, by position.
    pub reasons: Vec<Vec<Unfit>>,
    /// How many nodes fail each way.
    pub counts: BTreeMap<Unfit, u32>,
    /// It rests on spread states, which are counted anew after any change.
    spread: bool,
}

/// The explanations kept so far.
#[derive(Default)]
pub(super) struct Failures {
    memos: HashMap<String, Unplaceable>,
}

impl Failures {
    /// The nodes' fit changed: the explanations that rest on spread states go (those states
    /// are built again); the others are brought up to date on their next use.
    pub fn drop_spread(&mut self) {
        self.memos.retain(|_, m| !m.spread);
    }

    /// Why each of `nodes` nodes fails the pod `key` names, as of the change log `changed`
    /// (the position of every node changed so far, in order): `why(i)` judges node `i`
    /// now. Without spread states only the nodes changed since the last answer are judged
    /// again (or every node, when that is cheaper); with them, every node unless nothing
    /// changed.
    pub fn explain(
        &mut self,
        key: String,
        spread: bool,
        changed: &[usize],
        nodes: usize,
        why: impl Fn(usize) -> Vec<Unfit>,
    ) -> &Unplaceable {
        let now = changed.len();
        let memo = match self.memos.remove(&key) {
            Some(memo) if memo.changes == now => memo,
            Some(mut memo) if !spread && now - memo.changes <= nodes => {
                let mut seen = HashSet::new();
                for &i in &changed[memo.changes..] {
                    work::step(1);
                    if !seen.insert(i) {
                        continue;
                    }
                    for u in &memo.reasons[i] {
                        if let Some(c) = memo.counts.get_mut(u) {
                            *c -= 1;
                        }
                    }
                    memo.reasons[i] = why(i);
                    for u in &memo.reasons[i] {
                        *memo.counts.entry(u.clone()).or_default() += 1;
                    }
                }
                memo.counts.retain(|_, c| *c > 0);
                memo.changes = now;
                memo
            }
            _ => {
                let mut memo = Unplaceable {
                    changes: now,
                    reasons: Vec::with_capacity(nodes),
                    counts: BTreeMap::new(),
                    spread,
                };
                for i in 0..nodes {
                    work::step(1);
                    let why = why(i);
                    for u in &why {
                        *memo.counts.entry(u.clone()).or_default() += 1;
                    }
                    memo.reasons.push(why);
                }
                memo
            }
        };
        self.memos.entry(key).insert_entry(memo).into_mut()
    }
}
