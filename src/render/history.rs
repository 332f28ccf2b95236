//! `vmctl history`'s output: the migrations (newest first), then per node, per cause and the
//! totals; `-o json|yaml` the `MigrationHistory` document. Every string from the journal is
//! escaped (the table escapes each cell; the other lines here).

use serde::Serialize;

use super::table::{TableBuilder, plain};
use super::{Style, Tone};
use crate::model::journal::RecordOutcome;
use crate::policy::history::{CauseTotals, Counts, HistoryReport, HistoryRow, NodeTotals};
use crate::text::{age, bytes, duration, printable};

/// What was asked of the journal, as the document's `query` and the empty result's line.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Searched {
    /// None: every namespace.
    pub namespace: Option<String>,
    /// `vm/NAME`, `node/NAME`, `migration/NAME` (None: every migration).
    pub target: Option<String>,
    /// The start of the window (RFC 3339) and its length (`7d`, `1d12h`).
    pub since: String,
    pub window: String,
    pub cause: Option<String>,
    pub outcome: Option<String>,
    /// None: every record.
    pub limit: Option<usize>,
    /// None: every cluster.
    pub cluster: Option<String>,
}

/// The `-o json|yaml` document.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryDocument<'a> {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub as_of: String,
    pub journal: String,
    pub query: &'a Searched,
    pub matched: u64,
    /// The namespaces of the migrations that matched.
    pub namespaces: &'a [String],
    pub records: &'a [HistoryRow],
    pub totals: &'a Counts,
    pub by_node: &'a [NodeTotals],
    pub by_cause: &'a [CauseTotals],
}

pub fn document<'a>(
    report: &'a HistoryReport,
    searched: &'a Searched,
    journal: &str,
    as_of: String,
) -> HistoryDocument<'a> {
    HistoryDocument {
        api_version: crate::model::VMCTL_API_VERSION,
        kind: "MigrationHistory",
        as_of,
        journal: journal.to_string(),
        query: searched,
        matched: report.matched,
        namespaces: &report.namespaces,
        records: &report.records,
        totals: &report.totals,
        by_node: &report.by_node,
        by_cause: &report.by_cause,
    }
}

fn tone(outcome: RecordOutcome) -> Tone {
    match outcome {
        RecordOutcome::Succeeded => Tone::Good,
        RecordOutcome::Failed => Tone::Bad,
        RecordOutcome::Aborted | RecordOutcome::Vanished => Tone::Warn,
    }
}

/// What each time column of `history -o wide` measures.
const DURATIONS_SAID: &str = "DURATION: from the migration's creation to its end, with any wait in it (pending, backoff); TRANSFER: from its start to its end (the summary's time)\n";

fn ms(d: Option<i64>) -> String {
    d.map(|d| duration(d / 1000)).unwrap_or_else(|| "-".into())
}

fn or_dash(s: Option<&str>) -> String {
    match s {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => "-".into(),
    }
}

fn rate(c: &Counts) -> String {
    format!("{:.0}%", c.failure_rate * 100.0)
}

/// `3 of 12 failed (25%)` and the durations.
fn counts_line(c: &Counts) -> String {
    let mut parts = vec![format!("{} migrations", c.count)];
    for (n, what) in [
        (c.succeeded, "succeeded"),
        (c.failed, "failed"),
        (c.aborted, "aborted"),
        (c.vanished, "vanished"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    parts.push(format!("failure rate {}", rate(c)));
    if let (Some(m), Some(p)) = (c.median_duration_ms, c.p95_duration_ms) {
        parts.push(format!(
            "duration median {} p95 {}",
            ms(Some(m)),
            ms(Some(p))
        ));
    }
    if let Some(b) = c.data_processed_bytes {
        parts.push(format!("{} sent", bytes(b.max(0) as u64)));
    }
    parts.join(" · ")
}

/// The line for a window with nothing in it (exit 0).
pub fn nothing_found(searched: &Searched, journal: &str) -> String {
    let what = match &searched.target {
        Some(t) if t.starts_with("node/") => format!("no migrations from or to {t}"),
        Some(t) => format!("no migrations of {t}"),
        None => "no migrations".to_string(),
    };
    let mut filters = String::new();
    if let Some(c) = &searched.cause {
        filters.push_str(&format!(" with cause {c}"));
    }
    if let Some(o) = &searched.outcome {
        filters.push_str(&format!(" that {o}"));
    }
    if let Some(c) = &searched.cluster {
        filters.push_str(&format!(" of cluster {c}"));
    }
    let ns = match &searched.namespace {
        Some(ns) => format!("in namespace {ns}"),
        None => "in any namespace".to_string(),
    };
    printable(&format!(
        "{what}{filters} {ns} since {} ({}) in journal {journal}",
        searched.since, searched.window
    ))
}

/// Where a VM's name, asked for without `-n`, was found: `vm/db is in namespace prod`, or
/// `vm/db is in 2 namespaces: prod, staging (-n NAMESPACE for one)`. None for other targets
/// or with `-n`.
pub fn vm_namespaces(report: &HistoryReport, searched: &Searched) -> Option<String> {
    let target = searched.target.as_deref()?;
    if !target.starts_with("vm/") || searched.namespace.is_some() {
        return None;
    }
    Some(printable(&match report.namespaces.as_slice() {
        [] => return None,
        [one] => format!("{target} is in namespace {one}"),
        all => format!(
            "{target} is in {} namespaces: {} (-n NAMESPACE for one)",
            all.len(),
            all.join(", ")
        ),
    }))
}

/// The table: the migrations, then by node, by cause and the totals.
pub fn render_table(
    report: &HistoryReport,
    searched: &Searched,
    journal: &str,
    style: Style,
    wide: bool,
) -> String {
    if report.matched == 0 {
        return format!("{}\n", nothing_found(searched, journal));
    }
    // The default fits near 120 columns (as kubectl): when, what, the outcome and its
    // cause and how long (per node: the table below); the plane, route, mode, data,
    // recorder and the rest in -o wide.
    let mut headers = vec!["ended", "vm", "migration", "outcome", "cause"];
    if wide {
        headers.push("plane");
    }
    if wide {
        headers.extend(["route", "mode"]);
    }
    headers.push("duration");
    if wide {
        headers.extend(["data", "by"]);
        // The summary's "in 1s" is the transfer (start to end); duration is from creation,
        // with any wait (pending, backoff) in it: both shown, and said below (issue 33).
        headers.extend(["ended at", "pods", "evacuating", "transfer", "summary"]);
    }
    let mut t = TableBuilder::new(style, &headers);
    // On a terminal narrower than the table, these go under each row first.
    t.fold(&[
        "summary",
        "pods",
        "evacuating",
        "ended at",
        "by",
        "data",
        "mode",
        "plane",
        "route",
        "cause",
        // Under the row rather than a migration's name broken (issue 33, tried cold).
        "duration",
    ]);
    for row in &report.records {
        let r = &row.record;
        let vm = if r.namespace.is_empty() {
            r.vm.clone()
        } else {
            format!("{}/{}", r.namespace, r.vm)
        };
        let data = match (r.data_processed_bytes, r.data_total_bytes) {
            (Some(p), Some(t)) => {
                format!("{} / {}", bytes(p.max(0) as u64), bytes(t.max(0) as u64))
            }
            (Some(p), None) => bytes(p.max(0) as u64),
            _ => "-".into(),
        };
        let mut cells = vec![
            match row.age_seconds {
                Some(a) => plain(format!("{} ago", age(a))),
                None => ("end unknown".to_string(), Tone::Dim),
            },
            plain(vm),
            plain(or_dash(Some(&r.migration))),
            (r.outcome.as_str().to_string(), tone(r.outcome)),
            (
                r.cause.clone(),
                if r.outcome == RecordOutcome::Failed {
                    Tone::Strong
                } else {
                    Tone::Plain
                },
            ),
        ];
        if wide {
            cells.push(plain(r.plane.clone()));
        }
        if wide {
            cells.push(plain(format!(
                "{} → {}",
                or_dash(r.source_node.as_deref()),
                or_dash(r.target_node.as_deref())
            )));
            cells.push(plain(or_dash(r.mode.as_deref())));
        }
        cells.push(plain(ms(r.duration_ms)));
        if wide {
            cells.extend([
                plain(data),
                (r.recorded_by.as_str().to_string(), Tone::Dim),
                plain(r.ended_at.clone().unwrap_or_else(|| "unknown".into())),
                plain(format!(
                    "{} → {}",
                    or_dash(r.source_pod.as_deref()),
                    or_dash(r.target_pod.as_deref())
                )),
                plain(or_dash(r.evacuation_node.as_deref())),
                plain(ms(r.transfer_ms)),
                plain(or_dash(Some(&r.summary))),
            ]);
        }
        t.row(cells);
    }
    let mut out = t.render();
    if wide {
        out.push_str(DURATIONS_SAID);
    }
    let shown = report.records.len() as u64;
    if shown < report.matched {
        out.push_str(&format!(
            "… {} more (the totals below count them; --limit 0 shows all)\n",
            report.matched - shown
        ));
    }
    out.push_str(
        "\nBY NODE (a migration counts for its source node; an evacuation for the node drained)\n",
    );
    let mut n = TableBuilder::new(
        style,
        &[
            "node",
            "migrations",
            "failed",
            "aborted",
            "failure rate",
            "evacuations",
            "median",
            "p95",
        ],
    );
    // At a narrow terminal the spread goes under the row before a node's name is broken
    // (issue 33, tried cold: `node-` / `1`, and still wider than 80).
    n.fold(&["p95", "median", "aborted", "evacuations"]);
    for node in &report.by_node {
        let c = &node.counts;
        n.row(vec![
            plain(node.node.clone().unwrap_or_else(|| "(none)".into())),
            plain(c.count.to_string()),
            (
                c.failed.to_string(),
                if c.failed > 0 { Tone::Bad } else { Tone::Plain },
            ),
            plain(c.aborted.to_string()),
            plain(rate(c)),
            plain(node.evacuations.to_string()),
            plain(ms(c.median_duration_ms)),
            plain(ms(c.p95_duration_ms)),
        ]);
    }
    out.push_str(&n.render());
    out.push_str("\nBY CAUSE\n");
    let mut k = TableBuilder::new(style, &["cause", "plane", "migrations", "failed", "nodes"]);
    k.fold(&["nodes", "plane"]);
    for c in &report.by_cause {
        k.row(vec![
            plain(c.cause.clone()),
            plain(c.plane.clone()),
            plain(c.count.to_string()),
            (
                c.failed.to_string(),
                if c.failed > 0 { Tone::Bad } else { Tone::Plain },
            ),
            plain(if c.nodes.is_empty() {
                "-".to_string()
            } else {
                c.nodes.join(", ")
            }),
        ]);
    }
    out.push_str(&k.render());
    out.push('\n');
    out.push_str(&style.paint(
        &format!("TOTAL {}", counts_line(&report.totals)),
        Tone::Strong,
    ));
    out.push('\n');
    if let Some(line) = vm_namespaces(report, searched) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&printable(&format!(
        "since {} ({}) · journal {journal}",
        searched.since, searched.window
    )));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::journal::{MigrationRecord, Platform, RecordedBy};
    use crate::policy::history::report;

    fn rec(vm: &str, summary: &str) -> MigrationRecord {
        MigrationRecord {
            id: format!("kubevirt:{vm}"),
            cluster: "c".into(),
            recorded_by: RecordedBy::Record,
            platform: Platform::KubeVirt,
            namespace: "ns".into(),
            vm: vm.into(),
            migration: format!("{vm}-mig"),
            source_node: Some("node-1".into()),
            target_node: Some("node-2".into()),
            source_pod: None,
            target_pod: None,
            evacuation_node: None,
            outcome: RecordOutcome::Failed,
            phase: "Failed".into(),
            mode: Some("pre-copy".into()),
            plane: "data-plane".into(),
            cause: "not-converging".into(),
            summary: summary.into(),
            created_at: None,
            started_at: None,
            ended_at: Some("2026-12-01T00:00:00Z".into()),
            ended_ms: 0,
            recorded_at: "2026-12-01T00:00:01Z".into(),
            duration_ms: Some(90_000),
            transfer_ms: None,
            data_processed_bytes: Some(2 << 30),
            data_total_bytes: Some(4 << 30),
            data_remaining_bytes: None,
            detail: serde_json::Value::Null,
        }
    }

    fn searched() -> Searched {
        Searched {
            namespace: Some("ns".into()),
            target: Some("vm/db".into()),
            since: "2026-11-24T00:00:00Z".into(),
            window: "7d".into(),
            cause: None,
            outcome: None,
            limit: None,
            cluster: None,
        }
    }

    #[test]
    fn a_table_with_the_totals_and_hostile_text_escaped() {
        let r = report(
            vec![rec("db\u{1b}[31m", "line1\nline2"), rec("web", "ok")],
            3_600_000,
            None,
        );
        let text = render_table(&r, &searched(), "/j.sqlite", Style { color: false }, true);
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(
            text.contains("db\\u{1b}[31m") || text.contains("db\\x1b[31m"),
            "{text}"
        );
        assert!(text.contains("line1\\nline2"), "{text}");
        assert!(text.contains("1h ago"), "{text}");
        assert!(text.contains("node-1 → node-2"), "{text}");
        assert!(text.contains("1m30s"), "{text}");
        assert!(text.contains("2.0 GiB / 4.0 GiB"), "{text}");
        assert!(text.ends_with("(7d) · journal /j.sqlite\n"), "{text}");
        assert!(
            text.contains("TOTAL 2 migrations · 2 failed · failure rate 100%"),
            "{text}"
        );
    }

    /// Issue 33: DURATION 22s next to a summary "in 1s": the wide table shows the transfer
    /// the summary speaks of, and says what each column measures.
    #[test]
    fn wide_shows_the_transfer_the_summary_speaks_of_and_says_what_each_time_is() {
        let mut r = rec("db", "The VMI moved from node-1 to node-2 in 1s.");
        r.outcome = RecordOutcome::Succeeded;
        r.duration_ms = Some(22_000);
        r.transfer_ms = Some(1_000);
        let report = report(vec![r], 0, None);
        let text = render_table(&report, &searched(), "/j", Style { color: false }, true);
        let header = text.lines().next().unwrap_or_default();
        let row = text.lines().nth(1).unwrap_or_default();
        let cell = |name: &str| {
            let at = header
                .find(name)
                .unwrap_or_else(|| panic!("{name}: {text}"));
            row[at..]
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(cell("DURATION"), "22s", "{text}");
        assert_eq!(cell("TRANSFER"), "1s", "{text}");
        assert!(
            text.contains("DURATION: from the migration's creation to its end, with any wait in it (pending, backoff); TRANSFER: from its start to its end (the summary's time)"),
            "{text}"
        );
        // The plain table is as it was.
        let plain = render_table(&report, &searched(), "/j", Style { color: false }, false);
        assert!(!plain.contains("TRANSFER"), "{plain}");
    }

    #[test]
    fn nothing_found_says_what_was_searched() {
        let r = report(Vec::new(), 0, None);
        let text = render_table(&r, &searched(), "/j.sqlite", Style { color: false }, false);
        assert_eq!(
            text,
            "no migrations of vm/db in namespace ns since 2026-11-24T00:00:00Z (7d) in journal /j.sqlite\n"
        );
    }

    #[test]
    fn a_limit_says_how_many_more() {
        let r = report(vec![rec("a", ""), rec("b", "")], 0, Some(1));
        let text = render_table(&r, &searched(), "/j", Style { color: false }, false);
        assert!(text.contains("… 1 more"), "{text}");
    }
}
