//! DoNotSchedule topology spread (PodTopologySpread's Filter) over the nodes of a search:
//! per (scheduling class, topology keys, policies) which nodes' pods count and how many
//! domains each key has, and per constraint the matching pods in each domain, kept up to
//! date as pods are placed or nodes' pods change.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::model::{Node, VirtualMachineInstance};
use crate::policy::index::work;
use crate::policy::scheduling::{
    HostCpu, NodeUsage, SpreadRule, Unfit, labels, spread_counts_node, spread_rules, spread_unfit,
};

/// Which nodes' pods a spread constraint counts, for one scheduling class and one set of
/// topology keys and policies (PodTopologySpread's PreFilter), and how many domains each
/// topology key then has. Built once, shared by every selector.
struct DomainTable {
    counted: Vec<bool>,
    domains: HashMap<String, usize>,
}

/// One DoNotSchedule constraint (class × selector × key), with its domain counts. Only the
/// domains with matching pods are held; the others count 0.
struct SpreadState {
    rule: SpreadRule,
    table: usize,
    /// Matching pods per counted domain that has any.
    counts: HashMap<String, i64>,
    /// How many of those domains have each count.
    histogram: BTreeMap<i64, usize>,
}

impl SpreadState {
    /// The domain holds `delta` more matching pods; a domain left with none is not held.
    fn adjust(&mut self, domain: &str, delta: i64) {
        if delta == 0 {
            return;
        }
        let old = self.counts.get(domain).copied().unwrap_or(0);
        if let Some(h) = self.histogram.get_mut(&old) {
            *h -= 1;
            if *h == 0 {
                self.histogram.remove(&old);
            }
        }
        let new = old + delta;
        if new > 0 {
            self.counts.insert(domain.to_string(), new);
            *self.histogram.entry(new).or_default() += 1;
        } else {
            self.counts.remove(domain);
        }
    }

    fn unfit(&self, node: &Node, table: &DomainTable) -> Option<Unfit> {
        let domain = labels(node).get(&self.rule.topology_key);
        let matching = domain
            .and_then(|d| self.counts.get(d))
            .copied()
            .unwrap_or(0);
        let domains = table
            .domains
            .get(&self.rule.topology_key)
            .copied()
            .unwrap_or(0);
        // Domains without matching pods hold the minimum, 0.
        let min = if domains == 0 {
            None
        } else if self.counts.len() < domains {
            Some(0)
        } else {
            self.histogram.keys().next().copied()
        };
        spread_unfit(
            &self.rule,
            domain.map(String::as_str),
            matching,
            min,
            domains,
        )
    }
}

/// Every spread state built so far, found by what it rests on. Their tables rest on every
/// node's fit, so a change of a node's fit drops them all ([`Spread::clear`]); they are
/// built again on their next use.
#[derive(Default)]
pub(super) struct Spread {
    tables: Vec<DomainTable>,
    table_ids: HashMap<String, usize>,
    states: Vec<SpreadState>,
    state_ids: HashMap<String, usize>,
    /// Spread selector key → the states counting it.
    by_selector: HashMap<String, Vec<usize>>,
}

/// What a spread state is built from: the nodes (by position), those drained, what each
/// holds and, per spread selector key, the nodes with pods it selects.
pub(super) struct Nodes<'n> {
    pub nodes: &'n [Node],
    pub draining: &'n [String],
    pub used: &'n [NodeUsage],
    pub selected_on: &'n HashMap<String, Vec<usize>>,
}

impl Spread {
    pub fn clear(&mut self) {
        *self = Spread::default();
    }

    /// The spread states of the VMI's DoNotSchedule constraints, built on first use: the
    /// domain table once per (class, keys, policies), the counts from the nodes with
    /// selected pods only.
    pub fn states(
        &mut self,
        class_key: &str,
        vmi: &VirtualMachineInstance,
        source_model: Option<&HostCpu>,
        at: &Nodes,
    ) -> Vec<usize> {
        let rules = spread_rules(vmi, "DoNotSchedule");
        let keys: Vec<&str> = rules.iter().map(|r| r.topology_key.as_str()).collect();
        let mut ids = Vec::with_capacity(rules.len());
        for rule in &rules {
            work::step(1);
            let table_key = format!(
                "{class_key}|{keys:?}|{}|{}",
                rule.honor_affinity, rule.honor_taints
            );
            let table = match self.table_ids.get(&table_key) {
                Some(&t) => t,
                None => {
                    work::step(at.nodes.len());
                    let counted: Vec<bool> = at
                        .nodes
                        .iter()
                        .map(|n| spread_counts_node(rule, vmi, n, at.draining, source_model, &keys))
                        .collect();
                    let mut domains = HashMap::new();
                    for key in &keys {
                        let values: HashSet<&String> = at
                            .nodes
                            .iter()
                            .zip(&counted)
                            .filter(|(_, c)| **c)
                            .filter_map(|(n, _)| labels(n).get(*key))
                            .collect();
                        domains.insert(key.to_string(), values.len());
                    }
                    self.tables.push(DomainTable { counted, domains });
                    self.table_ids.insert(table_key, self.tables.len() - 1);
                    self.tables.len() - 1
                }
            };
            let state_key = format!(
                "{table}|{}|{}|{}|{}|{}",
                rule.selector.key,
                rule.topology_key,
                rule.max_skew,
                rule.min_domains,
                rule.self_match
            );
            let id = match self.state_ids.get(&state_key) {
                Some(&id) => id,
                None => {
                    let mut state = SpreadState {
                        rule: rule.clone(),
                        table,
                        counts: HashMap::new(),
                        histogram: BTreeMap::new(),
                    };
                    for &i in at
                        .selected_on
                        .get(&rule.selector.key)
                        .map_or(&[][..], Vec::as_slice)
                    {
                        work::step(1);
                        let here = at.used[i]
                            .matching
                            .get(&rule.selector.key)
                            .copied()
                            .unwrap_or(0);
                        if self.tables[table].counted[i]
                            && here > 0
                            && let Some(d) = labels(&at.nodes[i]).get(&rule.topology_key)
                        {
                            *state.counts.entry(d.clone()).or_insert(0) += here;
                        }
                    }
                    for count in state.counts.values() {
                        *state.histogram.entry(*count).or_default() += 1;
                    }
                    self.states.push(state);
                    let id = self.states.len() - 1;
                    self.state_ids.insert(state_key, id);
                    self.by_selector
                        .entry(rule.selector.key.clone())
                        .or_default()
                        .push(id);
                    id
                }
            };
            ids.push(id);
        }
        ids
    }

    /// Node `i` (`node`) holds `delta` more pods that selector `key` selects: every state
    /// counting that selector there follows. `step`: count the work per state.
    pub fn adjust(&mut self, key: &str, i: usize, node: &Node, delta: i64, step: bool) {
        for &s in self.by_selector.get(key).map_or(&[][..], Vec::as_slice) {
            if step {
                work::step(1);
            }
            let state = &mut self.states[s];
            if self.tables[state.table].counted[i]
                && let Some(d) = labels(node).get(&state.rule.topology_key)
            {
                state.adjust(d, delta);
            }
        }
    }

    /// The first of the states `spread` that `node` breaks.
    pub fn unfit(&self, spread: &[usize], node: &Node) -> Option<Unfit> {
        spread.iter().find_map(|&s| {
            let state = &self.states[s];
            state.unfit(node, &self.tables[state.table])
        })
    }
}
