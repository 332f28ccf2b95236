//! `vmctl history` (issue 28): the journal's records of a window turned into what an operator
//! asks of it: what failed, why, how long, per node and per cause, with totals. Pure: the
//! records and the clock come in, a report goes out.
//!
//! A migration counts for its source node: an evacuation of node X (a drain) has X as its
//! source, so it counts for X (and `evacuations` says how many of X's were). A record with no
//! source node counts for the node it evacuated, else for no node (`node: null`).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::model::journal::{MigrationRecord, RecordOutcome};

/// One row: the record (without its detail) and how long ago it ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryRow {
    #[serde(flatten)]
    pub record: MigrationRecord,
    /// Seconds from its end to the as-of clock; None (null) when the record does not know
    /// its end (the objects did not say when the migration ended).
    pub age_seconds: Option<i64>,
}

/// Counts and durations of a set of migrations.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub count: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub aborted: u64,
    pub vanished: u64,
    /// failed ÷ count (aborted on request is not a failure); 0 when count is 0.
    pub failure_rate: f64,
    /// Created → ended, over the migrations with both times (nearest rank: each is a
    /// duration one of them took).
    pub median_duration_ms: Option<i64>,
    pub p95_duration_ms: Option<i64>,
    /// Memory sent, summed over the records that say.
    pub data_processed_bytes: Option<i64>,
}

/// The migrations whose source was one node.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeTotals {
    /// None: the records named no node.
    pub node: Option<String>,
    #[serde(flatten)]
    pub counts: Counts,
    /// How many of them were evacuations of this node (drains).
    pub evacuations: u64,
}

/// The migrations one cause ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CauseTotals {
    pub cause: String,
    pub plane: String,
    pub count: u64,
    pub failed: u64,
    /// The source nodes affected, by name.
    pub nodes: Vec<String>,
}

/// What `history` shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryReport {
    /// Newest first, at most `limit`.
    pub records: Vec<HistoryRow>,
    /// How many matched (the totals are over all of them, `records` may be fewer).
    pub matched: u64,
    pub totals: Counts,
    /// By count (descending), then node name; records without a node last.
    pub by_node: Vec<NodeTotals>,
    /// By count (descending), then cause id.
    pub by_cause: Vec<CauseTotals>,
    /// The namespaces of the migrations that matched, by name (a VM's name read without
    /// `-n` may be in several).
    pub namespaces: Vec<String>,
}

impl HistoryReport {
    /// A failed migration is among those matched (the command's exit code 1).
    pub fn has_failures(&self) -> bool {
        self.totals.failed > 0
    }
}

/// Nearest-rank percentile (`p` in 1..=100) of sorted values.
fn percentile(sorted: &[i64], p: usize) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

fn counts<'a>(records: impl IntoIterator<Item = &'a MigrationRecord>) -> Counts {
    let mut c = Counts::default();
    let mut durations = Vec::new();
    for r in records {
        c.count += 1;
        match r.outcome {
            RecordOutcome::Succeeded => c.succeeded += 1,
            RecordOutcome::Failed => c.failed += 1,
            RecordOutcome::Aborted => c.aborted += 1,
            RecordOutcome::Vanished => c.vanished += 1,
        }
        if let Some(d) = r.duration_ms.filter(|d| *d >= 0) {
            durations.push(d);
        }
        if let Some(b) = r.data_processed_bytes.filter(|b| *b >= 0) {
            c.data_processed_bytes = Some(c.data_processed_bytes.unwrap_or(0).saturating_add(b));
        }
    }
    durations.sort_unstable();
    c.median_duration_ms = percentile(&durations, 50);
    c.p95_duration_ms = percentile(&durations, 95);
    c.failure_rate = if c.count == 0 {
        0.0
    } else {
        c.failed as f64 / c.count as f64
    };
    c
}

/// The node a record counts for: its source, else the node it evacuated.
pub fn node_of(r: &MigrationRecord) -> Option<&str> {
    r.source_node
        .as_deref()
        .or(r.evacuation_node.as_deref())
        .filter(|n| !n.is_empty())
}

/// The report of `records` (as the journal returns them: newest first), as of `now_ms`;
/// `limit` rows at most (None: all), the totals over every record.
pub fn report(records: Vec<MigrationRecord>, now_ms: i64, limit: Option<usize>) -> HistoryReport {
    let totals = counts(&records);
    let mut nodes: BTreeMap<Option<&str>, Vec<&MigrationRecord>> = BTreeMap::new();
    let mut causes: BTreeMap<&str, Vec<&MigrationRecord>> = BTreeMap::new();
    for r in &records {
        nodes.entry(node_of(r)).or_default().push(r);
        causes.entry(r.cause.as_str()).or_default().push(r);
    }
    let mut by_node: Vec<NodeTotals> = nodes
        .into_iter()
        .map(|(node, rs)| NodeTotals {
            node: node.map(str::to_string),
            evacuations: rs
                .iter()
                .filter(|r| node.is_some() && r.evacuation_node.as_deref() == node)
                .count() as u64,
            counts: counts(rs.iter().copied()),
        })
        .collect();
    by_node.sort_by(|a, b| {
        (a.node.is_none(), std::cmp::Reverse(a.counts.count), &a.node).cmp(&(
            b.node.is_none(),
            std::cmp::Reverse(b.counts.count),
            &b.node,
        ))
    });
    let mut by_cause: Vec<CauseTotals> = causes
        .into_iter()
        .map(|(cause, rs)| {
            // The plane the newest record of the cause gave (a cause has one plane).
            let plane = rs.first().map(|r| r.plane.clone()).unwrap_or_default();
            let nodes: BTreeSet<&str> = rs.iter().filter_map(|r| node_of(r)).collect();
            CauseTotals {
                cause: cause.to_string(),
                plane,
                count: rs.len() as u64,
                failed: rs
                    .iter()
                    .filter(|r| r.outcome == RecordOutcome::Failed)
                    .count() as u64,
                nodes: nodes.into_iter().map(str::to_string).collect(),
            }
        })
        .collect();
    by_cause.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.cause.cmp(&b.cause)));
    let matched = records.len() as u64;
    let namespaces: BTreeSet<&str> = records
        .iter()
        .map(|r| r.namespace.as_str())
        .filter(|ns| !ns.is_empty())
        .collect();
    let namespaces: Vec<String> = namespaces.into_iter().map(str::to_string).collect();
    let rows = records
        .into_iter()
        .take(limit.unwrap_or(usize::MAX))
        .map(|mut record| {
            record.detail = serde_json::Value::Null;
            let age_seconds = record
                .ended_at
                .is_some()
                .then(|| (now_ms.saturating_sub(record.ended_ms) / 1000).max(0));
            HistoryRow {
                record,
                age_seconds,
            }
        })
        .collect();
    HistoryReport {
        records: rows,
        matched,
        totals,
        by_node,
        by_cause,
        namespaces,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::journal::{Platform, RecordedBy};

    fn rec(
        id: &str,
        node: Option<&str>,
        outcome: RecordOutcome,
        cause: &str,
        ended_ms: i64,
        duration_ms: Option<i64>,
    ) -> MigrationRecord {
        MigrationRecord {
            id: id.into(),
            cluster: "c".into(),
            recorded_by: RecordedBy::Record,
            platform: Platform::KubeVirt,
            namespace: "ns".into(),
            vm: format!("vm-{id}"),
            migration: format!("mig-{id}"),
            source_node: node.map(str::to_string),
            target_node: Some("node-9".into()),
            source_pod: None,
            target_pod: None,
            evacuation_node: None,
            outcome,
            phase: "Failed".into(),
            mode: None,
            plane: if cause == "succeeded" {
                "none".into()
            } else {
                "data-plane".into()
            },
            cause: cause.into(),
            summary: String::new(),
            created_at: None,
            started_at: None,
            ended_at: k8s_openapi::jiff::Timestamp::from_millisecond(ended_ms)
                .ok()
                .map(|t| t.to_string()),
            ended_ms,
            recorded_at: String::new(),
            duration_ms,
            transfer_ms: None,
            data_processed_bytes: None,
            data_total_bytes: None,
            data_remaining_bytes: None,
            detail: serde_json::json!({"evidence": {}}),
        }
    }

    use RecordOutcome::*;

    fn sample() -> Vec<MigrationRecord> {
        let mut evac = rec("e", Some("node-1"), Succeeded, "succeeded", 9_000, Some(40));
        evac.evacuation_node = Some("node-1".into());
        vec![
            evac,
            rec(
                "a",
                Some("node-2"),
                Failed,
                "not-converging",
                8_000,
                Some(100),
            ),
            rec(
                "b",
                Some("node-1"),
                Failed,
                "not-converging",
                7_000,
                Some(300),
            ),
            rec(
                "c",
                Some("node-1"),
                Aborted,
                "aborted-by-request",
                6_000,
                None,
            ),
            rec(
                "d",
                None,
                Failed,
                "target-pod-unschedulable",
                5_000,
                Some(10),
            ),
            rec("f", Some("node-2"), Succeeded, "succeeded", 4_000, Some(20)),
            rec("g", Some("node-3"), Succeeded, "succeeded", 3_000, Some(30)),
        ]
    }

    #[test]
    fn totals_count_each_outcome_and_the_durations() {
        let r = report(sample(), 10_000, None);
        let t = &r.totals;
        assert_eq!(
            (t.count, t.succeeded, t.failed, t.aborted, t.vanished),
            (7, 3, 3, 1, 0)
        );
        assert!((t.failure_rate - 3.0 / 7.0).abs() < 1e-9);
        // Durations 10 20 30 40 100 300: the nearest-rank median is the 3rd, p95 the 6th.
        assert_eq!(t.median_duration_ms, Some(30));
        assert_eq!(t.p95_duration_ms, Some(300));
        assert_eq!(r.matched, 7);
        assert!(r.has_failures());
    }

    #[test]
    fn per_node_counts_the_source_and_evacuations_count_for_the_node_drained() {
        let r = report(sample(), 10_000, None);
        let names: Vec<Option<&str>> = r.by_node.iter().map(|n| n.node.as_deref()).collect();
        assert_eq!(
            names,
            [Some("node-1"), Some("node-2"), Some("node-3"), None],
            "by count, then name, no node last"
        );
        let n1 = &r.by_node[0];
        assert_eq!(
            (n1.counts.count, n1.counts.failed, n1.evacuations),
            (3, 1, 1)
        );
        assert_eq!(n1.counts.median_duration_ms, Some(40));
        assert_eq!(r.by_node[1].evacuations, 0);
        // An evacuation record without a source node counts for the node it drained.
        let mut e = rec("x", None, Failed, "target-pod-lost", 1, None);
        e.evacuation_node = Some("node-7".into());
        let r = report(vec![e], 2, None);
        assert_eq!(r.by_node[0].node.as_deref(), Some("node-7"));
        assert_eq!(r.by_node[0].evacuations, 1);
    }

    #[test]
    fn per_cause_by_count_then_id_with_the_nodes_affected() {
        let r = report(sample(), 10_000, None);
        let causes: Vec<(&str, u64, u64)> = r
            .by_cause
            .iter()
            .map(|c| (c.cause.as_str(), c.count, c.failed))
            .collect();
        assert_eq!(
            causes,
            [
                ("succeeded", 3, 0),
                ("not-converging", 2, 2),
                ("aborted-by-request", 1, 0),
                ("target-pod-unschedulable", 1, 1),
            ]
        );
        assert_eq!(r.by_cause[1].nodes, ["node-1", "node-2"]);
        assert_eq!(r.by_cause[1].plane, "data-plane");
        assert!(r.by_cause[3].nodes.is_empty());
    }

    #[test]
    fn rows_keep_the_order_drop_the_detail_and_stop_at_the_limit() {
        let r = report(sample(), 10_000, Some(2));
        let ids: Vec<&str> = r.records.iter().map(|r| r.record.id.as_str()).collect();
        assert_eq!(ids, ["e", "a"]);
        assert!(r.records.iter().all(|r| r.record.detail.is_null()));
        assert_eq!(r.records[1].age_seconds, Some(2));
        // The totals are over everything matched, not the rows shown.
        assert_eq!((r.matched, r.totals.count), (7, 7));
    }

    #[test]
    fn an_empty_window_is_an_empty_report() {
        let r = report(Vec::new(), 0, Some(10));
        assert!(r.records.is_empty() && r.by_node.is_empty() && r.by_cause.is_empty());
        assert_eq!(r.totals, Counts::default());
        assert!(!r.has_failures());
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        assert_eq!(percentile(&[], 50), None);
        assert_eq!(percentile(&[5], 95), Some(5));
        assert_eq!(percentile(&[1, 2], 50), Some(1));
        let hundred: Vec<i64> = (1..=100).collect();
        assert_eq!(percentile(&hundred, 95), Some(95));
        assert_eq!(percentile(&hundred, 50), Some(50));
    }
}
