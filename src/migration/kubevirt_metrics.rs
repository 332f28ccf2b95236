//! virt-handler's per-migration metrics (FACTS §8), read from its `/metrics` page (Prometheus
//! text format, through the API server's pod proxy) or from a Prometheus query API. Pure:
//! text in, numbers out. KubeVirt renamed these metrics twice; every name a supported release
//! used is read, the newest first.
//!
//! Also the guest's dirty rate outside a migration, [`GUEST_DIRTY_RATE`] (see there), read for
//! every VMI of a page at once ([`guest_dirty_rates`]).
//!
//! The text format is read by the small scanner below, not a crate (issue 16 looked, 2026-12):
//! `prometheus-parse` 0.2.5 (last release 2023-12) splits label sets on `,` and `=` with no
//! escapes and ends a set at the first `}`; `openmetrics-parser` 0.5 is LGPL-3.0 (the default
//! build is Apache-2.0) and rejects a whole page for one bad line; `nom-openmetrics` 0.3
//! (maintained, MIT) has no timestamps in samples and prints to stderr (`eprintln!`) on `+Inf`;
//! `prom_text_format_parser` 0.1 and `prometheus-exposition-format-rs` 0.1 are unmaintained.
//! What this one must do is small: one line at a time (a bad line never hides the others),
//! the format's escapes, names checked, a timestamp or an exemplar read past, NaN dropped;
//! tested with fixed-seed mutations, random bytes and every truncation of a page. The page is
//! at most [`super::kubevirt::MAX_METRICS_BYTES`] (the reader stops there).

use std::collections::HashMap;

use serde_json::Value;

/// One reading of a migration's job statistics, in bytes and bytes per second.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MigrationMetrics {
    pub remaining_bytes: Option<f64>,
    pub processed_bytes: Option<f64>,
    pub total_bytes: Option<f64>,
    pub dirty_rate_bytes_per_second: Option<f64>,
    pub transfer_rate_bytes_per_second: Option<f64>,
}

impl MigrationMetrics {
    /// True when nothing was found for the VMI (the migration has not started streaming, or
    /// the page does not carry migration metrics at all).
    pub fn is_empty(&self) -> bool {
        self.remaining_bytes.is_none()
            && self.processed_bytes.is_none()
            && self.total_bytes.is_none()
            && self.dirty_rate_bytes_per_second.is_none()
            && self.transfer_rate_bytes_per_second.is_none()
    }
}

/// What each field is called, newest name first.
/// - v1.7+: `kubevirt_vmi_migration_*`, transfer rate `…_memory_transfer_rate_bytes`,
///   total `…_data_bytes_total` (v1.8+; `…_data_total_bytes` v1.5–v1.7).
/// - v1.2–v1.6: the transfer rate was `kubevirt_vmi_migration_disk_transfer_rate_bytes`.
/// - v1.0/v1.1: `kubevirt_migrate_vmi_*`.
pub const REMAINING: &[&str] = &[
    "kubevirt_vmi_migration_data_remaining_bytes",
    "kubevirt_migrate_vmi_data_remaining_bytes",
];
pub const PROCESSED: &[&str] = &[
    "kubevirt_vmi_migration_data_processed_bytes",
    "kubevirt_migrate_vmi_data_processed_bytes",
];
pub const TOTAL: &[&str] = &[
    "kubevirt_vmi_migration_data_bytes_total",
    "kubevirt_vmi_migration_data_total_bytes",
];
pub const DIRTY_RATE: &[&str] = &[
    "kubevirt_vmi_migration_dirty_memory_rate_bytes",
    "kubevirt_migrate_vmi_dirty_memory_rate_bytes",
];
pub const TRANSFER_RATE: &[&str] = &[
    "kubevirt_vmi_migration_memory_transfer_rate_bytes",
    "kubevirt_vmi_migration_disk_transfer_rate_bytes",
    "kubevirt_migrate_vmi_memory_transfer_rate_bytes",
    "kubevirt_migrate_vmi_disk_transfer_rate_bytes",
];

/// Every metric name vmctl reads, for a Prometheus query.
pub fn all_names() -> impl Iterator<Item = &'static str> {
    [REMAINING, PROCESSED, TOTAL, DIRTY_RATE, TRANSFER_RATE]
        .into_iter()
        .flatten()
        .copied()
}

/// One sample line: `name{k="v",...} value [timestamp]`.
#[derive(Debug, Clone, PartialEq)]
struct Line<'a> {
    name: &'a str,
    labels: Vec<(String, String)>,
    value: f64,
}

/// A metric or label name: `[a-zA-Z_:][a-zA-Z0-9_:]*` (label names have no `:`; one rule
/// for both is enough to tell a name from garbage).
fn is_name(text: &str) -> bool {
    let mut bytes = text.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_' || b == b':')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
}

/// The label set after a `{`: `k="v", …}` (the format's escapes `\\`, `\"`, `\n` in values;
/// whitespace around tokens and a trailing comma allowed), and the text after its `}`. Scanned
/// left to right, quotes respected: a `}` inside a value or in an exemplar after the sample
/// (`… 1 # {trace_id="x"} 2`) does not end the set. None when it is not one.
fn parse_labels(text: &str) -> Option<(Vec<(String, String)>, &str)> {
    let mut labels = Vec::new();
    let mut rest = text.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix('}') {
            return Some((labels, after));
        }
        let (key, after) = rest.split_once('=')?;
        let key = key.trim();
        if !is_name(key) {
            return None;
        }
        let after = after.trim_start().strip_prefix('"')?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next()? {
                (_, '\\') => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    other => value.push(other),
                },
                (i, '"') => break i,
                (_, other) => value.push(other),
            }
        };
        labels.push((key.to_string(), value));
        rest = after[end + 1..].trim_start();
        match rest.strip_prefix(',') {
            Some(after) => rest = after.trim_start(),
            None if rest.starts_with('}') => {}
            None => return None,
        }
    }
}

/// One sample line, `name{labels} value [timestamp]`; None for a comment, a blank line or
/// anything malformed (one bad line never hides the others). A NaN value is no reading.
fn parse_line(line: &str) -> Option<Line<'_>> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let name_end = line
        .find(|c: char| c == '{' || c.is_whitespace())
        .unwrap_or(line.len());
    let name = &line[..name_end];
    if !is_name(name) {
        return None;
    }
    let (labels, rest) = match line[name_end..].trim_start().strip_prefix('{') {
        Some(set) => parse_labels(set)?,
        None => (Vec::new(), &line[name_end..]),
    };
    let mut fields = rest.split_whitespace();
    let value = match fields.next()? {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse::<f64>().ok().filter(|v| !v.is_nan())?,
    };
    // The optional timestamp (milliseconds) is read past, but must be one when present;
    // an OpenMetrics exemplar (`# {…} v`) may follow.
    match fields.next() {
        None => {}
        Some("#") => {}
        Some(ts) if ts.parse::<f64>().is_ok_and(f64::is_finite) => {}
        Some(_) => return None,
    }
    Some(Line {
        name,
        labels,
        value,
    })
}

fn label<'a>(labels: &'a [(String, String)], key: &str) -> Option<&'a str> {
    labels
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Reads the VMI's migration metrics from a virt-handler `/metrics` page.
pub fn from_exposition(text: &str, namespace: &str, vmi: &str) -> MigrationMetrics {
    let lines: Vec<Line> = text
        .lines()
        .filter_map(parse_line)
        .filter(|l| {
            l.name.starts_with("kubevirt_")
                && label(&l.labels, "namespace") == Some(namespace)
                && label(&l.labels, "name") == Some(vmi)
        })
        .collect();
    let pick = |names: &[&str]| -> Option<f64> {
        names
            .iter()
            .find_map(|n| lines.iter().find(|l| l.name == *n).map(|l| l.value))
    };
    MigrationMetrics {
        remaining_bytes: pick(REMAINING),
        processed_bytes: pick(PROCESSED),
        total_bytes: pick(TOTAL),
        dirty_rate_bytes_per_second: pick(DIRTY_RATE),
        transfer_rate_bytes_per_second: pick(TRANSFER_RATE),
    }
}

/// The PromQL query for one VMI: every known name at once, selected by `__name__`.
pub fn prometheus_query(namespace: &str, vmi: &str) -> String {
    let names: Vec<&str> = all_names().collect();
    prometheus_query_of(&names, namespace, vmi)
}

/// The PromQL query for `names` of one VMI, selected by `__name__`.
pub fn prometheus_query_of(names: &[&str], namespace: &str, vmi: &str) -> String {
    format!(
        "{{__name__=~\"{}\",namespace=\"{}\",name=\"{}\"}}",
        names.join("|"),
        escape(namespace),
        escape(vmi)
    )
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The series of a Prometheus `/api/v1/query` answer, or why there are none.
fn vector_results(answer: &Value) -> Result<&Vec<Value>, String> {
    if answer.get("status").and_then(Value::as_str) != Some("success") {
        let why = answer
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("the answer is not status=success");
        return Err(why.to_string());
    }
    answer
        .pointer("/data/result")
        .and_then(Value::as_array)
        .ok_or_else(|| "the answer has no data.result".to_string())
}

/// Reads a Prometheus `/api/v1/query` answer (`resultType: vector`).
pub fn from_prometheus(answer: &Value) -> Result<MigrationMetrics, String> {
    let results = vector_results(answer)?;
    let samples: Vec<(&str, f64)> = results
        .iter()
        .filter_map(|r| {
            let name = r.pointer("/metric/__name__")?.as_str()?;
            let value = r.pointer("/value/1")?.as_str()?.parse::<f64>().ok()?;
            Some((name, value))
        })
        .filter(|(_, v)| v.is_finite())
        .collect();
    let pick = |names: &[&str]| -> Option<f64> {
        names
            .iter()
            .find_map(|n| samples.iter().find(|(s, _)| s == n).map(|(_, v)| *v))
    };
    Ok(MigrationMetrics {
        remaining_bytes: pick(REMAINING),
        processed_bytes: pick(PROCESSED),
        total_bytes: pick(TOTAL),
        dirty_rate_bytes_per_second: pick(DIRTY_RATE),
        transfer_rate_bytes_per_second: pick(TRANSFER_RATE),
    })
}

/// The PromQL query of a migration's progress over time (remaining, dirty rate, transfer
/// rate) for one VMI, for a range query.
pub fn progress_query(namespace: &str, vmi: &str) -> String {
    let names: Vec<&str> = [REMAINING, DIRTY_RATE, TRANSFER_RATE].concat();
    prometheus_query_of(&names, namespace, vmi)
}

/// Reads a Prometheus `/api/v1/query_range` answer (`resultType: matrix`) of
/// [`progress_query`] into points timed from `start` (Unix seconds): one per timestamp of the
/// remaining-bytes series (the first name of [`REMAINING`] found), the rates at the same
/// timestamps. No pass numbers (the metrics have none). Values that are not finite, not
/// numbers or negative are skipped.
pub fn progress_from_prometheus_range(
    answer: &Value,
    start: i64,
) -> Result<Vec<crate::migration::series::SeriesPoint>, String> {
    let results = vector_results(answer)?;
    type Values = std::collections::BTreeMap<i64, u64>;
    let read = |r: &Value| -> Option<(String, Values)> {
        let name = r.pointer("/metric/__name__")?.as_str()?.to_string();
        let values = r
            .get("values")?
            .as_array()?
            .iter()
            .filter_map(|pair| {
                let at = pair.get(0)?.as_f64()?;
                let v = pair.get(1)?.as_str()?.parse::<f64>().ok()?;
                (at.is_finite() && v.is_finite() && v >= 0.0).then(|| (at.round() as i64, v as u64))
            })
            .collect();
        Some((name, values))
    };
    let all: Vec<(String, Values)> = results.iter().filter_map(read).collect();
    let pick = |names: &[&str]| -> Option<&Values> {
        names
            .iter()
            .find_map(|n| all.iter().find(|(name, _)| name == n).map(|(_, v)| v))
    };
    let Some(remaining) = pick(REMAINING) else {
        return Ok(Vec::new());
    };
    let dirty = pick(DIRTY_RATE);
    let transfer = pick(TRANSFER_RATE);
    Ok(remaining
        .iter()
        .map(|(at, rem)| crate::migration::series::SeriesPoint {
            at_ms: (at - start).max(0) as u64 * 1000,
            remaining_bytes: *rem,
            dirty_rate_bps: dirty.and_then(|d| d.get(at).copied()),
            transfer_rate_bps: transfer.and_then(|t| t.get(at).copied()).unwrap_or(0),
            pass: None,
        })
        .collect())
}

// ---------------------------------------------------------------- the guest's dirty rate

/// virt-handler's gauge of the guest's dirty rate, bytes/s, one sample per VMI (labels
/// `namespace`, `name`, `node` and the VMI's labels as `kubernetes_vmi_label_*`), from
/// libvirt's `dirtyrate` domain stats (`megabytes_per_second` × 1024 × 1024). Exported since
/// KubeVirt v1.6.0 (`pkg/monitoring/metrics/virt-handler/domainstats/dirty_rate_metrics.go`);
/// v1.9.0 stopped computing it for VMIs that are not Running or are migrating (the migration
/// reports its own rate, [`DIRTY_RATE`]). Each scrape measures for one second, and the
/// figure has been reported inaccurate in some releases: a hint, never a number to quote
/// alone.
pub const GUEST_DIRTY_RATE: &str = "kubevirt_vmi_dirty_rate_bytes_per_second";

/// The first KubeVirt release that exports [`GUEST_DIRTY_RATE`].
pub const GUEST_DIRTY_RATE_SINCE: (u32, u32) = (1, 6);

/// The guest dirty rates of one metrics page (or one Prometheus answer).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuestDirtyRates {
    /// Bytes/s by (namespace, VMI name).
    pub rates: HashMap<(String, String), f64>,
    /// The metric appears at all (a sample, or its `# HELP` / `# TYPE` line): when it does
    /// not, the release predates it or no VMI could be measured.
    pub metric_present: bool,
    /// Samples of the metric that could not be read (no namespace or name, not a number,
    /// negative, a broken label set): skipped.
    pub malformed: usize,
}

impl GuestDirtyRates {
    fn add(&mut self, namespace: Option<&str>, name: Option<&str>, value: f64) {
        match (namespace, name) {
            (Some(ns), Some(name)) if value.is_finite() && value >= 0.0 => {
                self.rates
                    .entry((ns.to_string(), name.to_string()))
                    .or_insert(value);
            }
            _ => self.malformed += 1,
        }
    }

    /// The rate of one VMI, bytes/s, rounded.
    pub fn of(&self, namespace: &str, name: &str) -> Option<u64> {
        self.rates
            .get(&(namespace.to_string(), name.to_string()))
            .map(|v| v.round().min(u64::MAX as f64) as u64)
    }
}

/// True when `line` is a sample of `name` exactly (not of a longer name it prefixes).
fn is_sample_of(line: &str, name: &str) -> bool {
    line.strip_prefix(name)
        .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(char::is_whitespace))
}

/// Every VMI's guest dirty rate on a virt-handler `/metrics` page, in one pass over the page
/// (only the lines of [`GUEST_DIRTY_RATE`] are parsed). Never panics on a malformed page.
pub fn guest_dirty_rates(text: &str) -> GuestDirtyRates {
    let mut out = GuestDirtyRates::default();
    for line in text.lines() {
        let line = line.trim();
        if let Some(comment) = line.strip_prefix('#') {
            let mut words = comment.split_whitespace();
            if matches!(words.next(), Some("HELP" | "TYPE"))
                && words.next() == Some(GUEST_DIRTY_RATE)
            {
                out.metric_present = true;
            }
            continue;
        }
        if !is_sample_of(line, GUEST_DIRTY_RATE) {
            continue;
        }
        out.metric_present = true;
        match parse_line(line) {
            Some(l) if l.name == GUEST_DIRTY_RATE => out.add(
                label(&l.labels, "namespace"),
                label(&l.labels, "name"),
                l.value,
            ),
            _ => out.malformed += 1,
        }
    }
    out
}

/// PromQL for the guest dirty rate of every VMI on `nodes` (one query).
pub fn guest_dirty_rate_query(nodes: &[String]) -> String {
    let alternatives: Vec<String> = nodes.iter().map(|n| regex_escape(n)).collect();
    format!(
        "{GUEST_DIRTY_RATE}{{node=~\"{}\"}}",
        escape(&alternatives.join("|"))
    )
}

/// PromQL for the guest dirty rate of one VMI.
pub fn guest_dirty_rate_query_for(namespace: &str, vmi: &str) -> String {
    format!(
        "{GUEST_DIRTY_RATE}{{namespace=\"{}\",name=\"{}\"}}",
        escape(namespace),
        escape(vmi)
    )
}

/// RE2 metacharacters escaped, so a node name matches itself only.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Reads a Prometheus `/api/v1/query` answer for [`GUEST_DIRTY_RATE`]: every series with its
/// `namespace` and `name` labels (KubeVirt's ServiceMonitor honours the metric's labels).
pub fn guest_dirty_rates_from_prometheus(answer: &Value) -> Result<GuestDirtyRates, String> {
    let results = vector_results(answer)?;
    let mut out = GuestDirtyRates::default();
    for r in results {
        let name = r.pointer("/metric/__name__").and_then(Value::as_str);
        if name.is_some_and(|n| n != GUEST_DIRTY_RATE) {
            continue;
        }
        out.metric_present = true;
        let value = r
            .pointer("/value/1")
            .and_then(Value::as_str)
            .and_then(|v| v.parse::<f64>().ok());
        match value {
            Some(v) => out.add(
                r.pointer("/metric/namespace").and_then(Value::as_str),
                r.pointer("/metric/name").and_then(Value::as_str),
                v,
            ),
            None => out.malformed += 1,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_answer_becomes_points_timed_from_the_start() {
        let series = |name: &str, values: serde_json::Value| serde_json::json!({"metric": {"__name__": name}, "values": values});
        let answer = serde_json::json!({"status": "success", "data": {"resultType": "matrix", "result": [
            // The older name is used only when the newer one is absent.
            series("kubevirt_migrate_vmi_data_remaining_bytes", serde_json::json!([[100, "1"]])),
            series("kubevirt_vmi_migration_data_remaining_bytes",
                serde_json::json!([[100, "900"], [104, "NaN"], [108, "-5"], [112, "300"], [116, "x"], [120.2, "200"]])),
            series("kubevirt_vmi_migration_dirty_memory_rate_bytes", serde_json::json!([[112, "40"]])),
            series("kubevirt_vmi_migration_memory_transfer_rate_bytes", serde_json::json!([[100, "80"], [112, "90"]])),
        ]}});
        let points = progress_from_prometheus_range(&answer, 100).unwrap();
        let got: Vec<(u64, u64, Option<u64>, u64)> = points
            .iter()
            .map(|p| {
                (
                    p.at_ms,
                    p.remaining_bytes,
                    p.dirty_rate_bps,
                    p.transfer_rate_bps,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (0, 900, None, 80),
                (12_000, 300, Some(40), 90),
                (20_000, 200, None, 0)
            ]
        );
        assert!(points.iter().all(|p| p.pass.is_none()));
        // No remaining-bytes series: no points; an error answer: its error.
        let rates_only = serde_json::json!({"status": "success", "data": {"result": [
            series("kubevirt_vmi_migration_dirty_memory_rate_bytes", serde_json::json!([[1, "2"]]))]}});
        assert_eq!(progress_from_prometheus_range(&rates_only, 0), Ok(vec![]));
        let refused = serde_json::json!({"status": "error", "error": "bad query"});
        assert_eq!(
            progress_from_prometheus_range(&refused, 0),
            Err("bad query".to_string())
        );
        assert!(
            progress_query("dev", "a\"b").contains("kubevirt_vmi_migration_data_remaining_bytes|")
        );
    }

    const PAGE: &str = r#"# HELP kubevirt_vmi_migration_data_remaining_bytes The remaining guest OS data to be migrated to the new VM.
# TYPE kubevirt_vmi_migration_data_remaining_bytes gauge
kubevirt_vmi_migration_data_remaining_bytes{name="db-01",namespace="prod",node="node-1"} 1.073741824e+09
kubevirt_vmi_migration_data_remaining_bytes{name="other",namespace="prod",node="node-1"} 5
kubevirt_vmi_migration_data_processed_bytes{name="db-01",namespace="prod",node="node-1"} 2147483648
kubevirt_vmi_migration_dirty_memory_rate_bytes{name="db-01",namespace="prod",node="node-1"} 1.048576e+07
kubevirt_vmi_migration_memory_transfer_rate_bytes{name="db-01",namespace="prod",node="node-1"} 1.34217728e+08
kubevirt_vmi_migration_data_bytes_total{name="db-01",namespace="prod",node="node-1"} 3.221225472e+09
go_goroutines 42
"#;

    #[test]
    fn reads_the_current_names_for_one_vmi() {
        let m = from_exposition(PAGE, "prod", "db-01");
        assert_eq!(m.remaining_bytes, Some(1_073_741_824.0));
        assert_eq!(m.processed_bytes, Some(2_147_483_648.0));
        assert_eq!(m.total_bytes, Some(3_221_225_472.0));
        assert_eq!(m.dirty_rate_bytes_per_second, Some(10_485_760.0));
        assert_eq!(m.transfer_rate_bytes_per_second, Some(134_217_728.0));
        assert!(from_exposition(PAGE, "dev", "db-01").is_empty());
    }

    #[test]
    fn reads_the_old_names() {
        let v12 = "kubevirt_vmi_migration_disk_transfer_rate_bytes{namespace=\"prod\",name=\"a\",node=\"n\"} 7\n\
                   kubevirt_vmi_migration_data_total_bytes{namespace=\"prod\",name=\"a\",node=\"n\"} 9\n";
        let m = from_exposition(v12, "prod", "a");
        assert_eq!(m.transfer_rate_bytes_per_second, Some(7.0));
        assert_eq!(m.total_bytes, Some(9.0));
        let v10 = "kubevirt_migrate_vmi_data_remaining_bytes{namespace=\"prod\",name=\"a\"} 3\n\
                   kubevirt_migrate_vmi_dirty_memory_rate_bytes{namespace=\"prod\",name=\"a\"} 4\n";
        let m = from_exposition(v10, "prod", "a");
        assert_eq!(m.remaining_bytes, Some(3.0));
        assert_eq!(m.dirty_rate_bytes_per_second, Some(4.0));
    }

    #[test]
    fn labels_with_escapes_and_garbage_lines_are_tolerated() {
        let text = "kubevirt_vmi_migration_data_remaining_bytes{name=\"a\",namespace=\"p\\\"q\",node=\"n\"} 1 1700000000\n\
                    kubevirt_vmi_migration_data_remaining_bytes{broken 2\n\
                    kubevirt_vmi_migration_data_processed_bytes{name=\"a\",namespace=\"p\\\"q\"} NaN\n";
        let m = from_exposition(text, "p\"q", "a");
        assert_eq!(m.remaining_bytes, Some(1.0));
        assert_eq!(m.processed_bytes, None);
    }

    #[test]
    fn prometheus_answers() {
        let answer = serde_json::json!({"status": "success", "data": {"resultType": "vector", "result": [
            {"metric": {"__name__": "kubevirt_vmi_migration_data_remaining_bytes", "name": "a"}, "value": [1.0, "100"]},
            {"metric": {"__name__": "kubevirt_migrate_vmi_data_remaining_bytes", "name": "a"}, "value": [1.0, "999"]},
            {"metric": {"__name__": "kubevirt_vmi_migration_disk_transfer_rate_bytes"}, "value": [1.0, "5"]}
        ]}});
        let m = from_prometheus(&answer).unwrap();
        assert_eq!(m.remaining_bytes, Some(100.0), "the newest name wins");
        assert_eq!(m.transfer_rate_bytes_per_second, Some(5.0));
        assert!(from_prometheus(&serde_json::json!({"status": "error", "error": "bad"})).is_err());
        let q = prometheus_query("prod", "a");
        assert!(
            q.contains("kubevirt_vmi_migration_data_remaining_bytes|"),
            "{q}"
        );
        assert!(q.ends_with(",namespace=\"prod\",name=\"a\"}"), "{q}");
    }

    #[test]
    fn a_brace_before_the_label_set_is_no_label_set() {
        // Used to panic: `}` found before `{` made a reversed slice.
        for text in [
            "x}y{z 1",
            "}{ 1",
            "a}{",
            "kubevirt_x}{name=\"a\"} 1",
            "{",
            "}",
            "{}",
            "a{} 1",
        ] {
            let m = from_exposition(text, "p", "a");
            assert!(m.is_empty(), "{text}");
            let g = guest_dirty_rates(text);
            assert!(g.rates.is_empty(), "{text}");
        }
        assert_eq!(parse_line("a{} 1").map(|l| l.value), Some(1.0));
    }

    const GUEST: &str = "# HELP kubevirt_vmi_dirty_rate_bytes_per_second Guest dirty-rate in bytes per second.\n\
        # TYPE kubevirt_vmi_dirty_rate_bytes_per_second gauge\n\
        kubevirt_vmi_dirty_rate_bytes_per_second{kubernetes_vmi_label_app=\"db\",name=\"idle-01\",namespace=\"prod\",node=\"node-1\"} 0\n\
        kubevirt_vmi_dirty_rate_bytes_per_second{name=\"busy-01\",namespace=\"prod\",node=\"node-1\"} 1.34217728e+08\n\
        kubevirt_vmi_dirty_rate_bytes_per_second_other{name=\"x\",namespace=\"prod\"} 5\n\
        kubevirt_vmi_dirty_rate_bytes_per_second{name=\"neg\",namespace=\"prod\"} -3\n\
        kubevirt_vmi_dirty_rate_bytes_per_second{namespace=\"prod\"} 3\n\
        kubevirt_vmi_dirty_rate_bytes_per_second{name=\"nan\",namespace=\"prod\"} NaN\n\
        kubevirt_vmi_migration_dirty_memory_rate_bytes{name=\"m\",namespace=\"prod\"} 7\n";

    #[test]
    fn guest_dirty_rates_of_every_vmi_in_one_pass() {
        let g = guest_dirty_rates(GUEST);
        assert!(g.metric_present);
        assert_eq!(g.of("prod", "idle-01"), Some(0));
        assert_eq!(g.of("prod", "busy-01"), Some(128 << 20));
        assert_eq!(g.rates.len(), 2, "{:?}", g.rates);
        assert_eq!(g.malformed, 3, "negative, no name, NaN");
        assert_eq!(g.of("prod", "x"), None, "a longer name is another metric");
        let none = guest_dirty_rates(PAGE);
        assert!(!none.metric_present && none.rates.is_empty());
        // The HELP line alone says the release has it.
        let help = guest_dirty_rates("# TYPE kubevirt_vmi_dirty_rate_bytes_per_second gauge\n");
        assert!(help.metric_present && help.rates.is_empty());
    }

    #[test]
    fn hostile_and_broken_pages_never_panic() {
        let mut page = String::from(GUEST);
        page.push_str("kubevirt_vmi_dirty_rate_bytes_per_second{name=\"\u{1b}[31mred\",namespace=\"p\\\"q\"} 9\n");
        page.push_str("kubevirt_vmi_dirty_rate_bytes_per_second{name=\"a\",namespace=\"b\n");
        page.push_str(
            "kubevirt_vmi_dirty_rate_bytes_per_second{name=\"é\",namespace=\"b\"} 1e400\n",
        );
        page.push_str("kubevirt_vmi_dirty_rate_bytes_per_second}x{y 1\n");
        page.push_str("kubevirt_vmi_dirty_rate_bytes_per_second{name=\"a\\\"}\n");
        page.push_str("\u{0}\u{ffff}{{{}}}\n");
        let g = guest_dirty_rates(&page);
        // The hostile text is kept as data (escaped when printed), never interpreted.
        assert_eq!(g.of("p\"q", "\u{1b}[31mred"), Some(9));
        assert_eq!(g.of("b", "é"), None, "an infinite rate is not a rate");
        assert_eq!(g.rates.len(), 3);
    }

    #[test]
    fn guest_dirty_rates_from_a_prometheus_answer() {
        let answer = serde_json::json!({"status": "success", "data": {"resultType": "vector", "result": [
            {"metric": {"__name__": GUEST_DIRTY_RATE, "namespace": "prod", "name": "a", "node": "n1"}, "value": [1.0, "1048576"]},
            {"metric": {"namespace": "prod", "name": "b"}, "value": [1.0, "2"]},
            {"metric": {"__name__": "other", "namespace": "prod", "name": "c"}, "value": [1.0, "3"]},
            {"metric": {"namespace": "prod"}, "value": [1.0, "4"]},
            {"metric": {"namespace": "prod", "name": "d"}, "value": [1.0, "NaN"]},
            {"metric": {"namespace": "prod", "name": "e"}, "value": "garbage"}
        ]}});
        let g = guest_dirty_rates_from_prometheus(&answer).unwrap();
        assert_eq!(g.of("prod", "a"), Some(1 << 20));
        assert_eq!(g.of("prod", "b"), Some(2));
        assert_eq!(g.of("prod", "c"), None);
        assert_eq!(g.malformed, 3);
        let empty = serde_json::json!({"status": "success", "data": {"resultType": "vector", "result": []}});
        assert!(
            !guest_dirty_rates_from_prometheus(&empty)
                .unwrap()
                .metric_present
        );
        assert!(
            guest_dirty_rates_from_prometheus(
                &serde_json::json!({"status": "error", "error": "bad"})
            )
            .is_err()
        );
        assert!(
            guest_dirty_rates_from_prometheus(&serde_json::json!({"status": "success"})).is_err()
        );
    }

    #[test]
    fn guest_dirty_rate_queries_escape_names() {
        assert_eq!(
            guest_dirty_rate_query(&["node-1".into(), "n.2".into()]),
            "kubevirt_vmi_dirty_rate_bytes_per_second{node=~\"node-1|n\\\\.2\"}"
        );
        assert_eq!(
            guest_dirty_rate_query_for("prod", "a\"b"),
            "kubevirt_vmi_dirty_rate_bytes_per_second{namespace=\"prod\",name=\"a\\\"b\"}"
        );
    }

    #[test]
    fn the_text_formats_escapes_timestamps_and_special_values() {
        let one = parse_line;
        let l = one(r#"m{a="x\\y",b="say \"hi\"",c="two\nlines",d="}{,=",e=""} 2.5"#).unwrap();
        assert_eq!(
            l.labels,
            [
                ("a".to_string(), "x\\y".to_string()),
                ("b".into(), "say \"hi\"".into()),
                ("c".into(), "two\nlines".into()),
                ("d".into(), "}{,=".into()),
                ("e".into(), "".into()),
            ]
        );
        assert_eq!(l.value, 2.5);
        // Whitespace around tokens, a trailing comma, a tab before the value, a timestamp.
        let l = one("m { a = \"1\" , b=\"2\", }\t7 1700000000000").unwrap();
        assert_eq!((l.labels.len(), l.value), (2, 7.0));
        assert_eq!(one("m 3 -1700000000000").map(|l| l.value), Some(3.0));
        assert_eq!(one("m{} +Inf").map(|l| l.value), Some(f64::INFINITY));
        assert_eq!(one("m -Inf").map(|l| l.value), Some(f64::NEG_INFINITY));
        assert_eq!(one("m 1e3").map(|l| l.value), Some(1000.0));
        for nan in ["m NaN", "m nan", "m{a=\"b\"} NaN 1"] {
            assert!(one(nan).is_none(), "{nan}: a NaN is no reading");
        }
        // An OpenMetrics exemplar after the value: its braces and value are not the sample's.
        let l = one(r#"m{a="b"} 4 # {trace_id="t"} 9 1.5"#).unwrap();
        assert_eq!((l.labels.len(), l.value), (1, 4.0));
        for bad in [
            "m{a=\"b\"}",          // no value
            "m{a=\"b\" 1",         // unclosed set
            "m{a=\"b\"c=\"d\"} 1", // no comma
            "m{a=b} 1",            // unquoted value
            "m{1a=\"b\"} 1",       // not a label name
            "m{=\"b\"} 1",         // no label name
            "m{a=\"b\\\"} 1",      // the escape eats the closing quote
            "m 1 two",             // not a timestamp
            "m one",               // not a value
            "1m 1",                // not a metric name
            "m-x 1",               // not a metric name
        ] {
            assert!(one(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn random_bytes_and_every_truncation_never_panic() {
        let base = format!("{GUEST}{PAGE}");
        // Every prefix (on char boundaries) of a real-looking page.
        for (at, _) in base.char_indices() {
            let g = guest_dirty_rates(&base[..at]);
            assert!(g.rates.values().all(|v| v.is_finite() && *v >= 0.0));
            let _ = from_exposition(&base[..at], "prod", "db-01");
        }
        // Random bytes, lossily decoded, biased towards the format's own characters.
        let mut seed = 0x5851_f42d_4c95_7f2d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let alphabet = b"{}\"\\=, \n\t#+-.eE0123456789naNIf_kubevirt";
        for _ in 0..5000 {
            let len = (next() % 200) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| match next() % 4 {
                    0 => next() as u8,
                    _ => alphabet[(next() as usize) % alphabet.len()],
                })
                .collect();
            let text = String::from_utf8_lossy(&bytes);
            let page = format!("{GUEST_DIRTY_RATE}{text}");
            let g = guest_dirty_rates(&page);
            assert!(g.rates.values().all(|v| v.is_finite() && *v >= 0.0));
            for line in page.lines() {
                if let Some(l) = parse_line(line) {
                    assert!(is_name(l.name) && !l.value.is_nan(), "{line:?}");
                }
            }
        }
    }

    #[test]
    fn mutated_pages_never_panic() {
        // A fixed-seed mutation of a real-looking page: tricky characters spliced in,
        // lines cut anywhere (on char boundaries), repeated.
        let base = format!("{GUEST}{PAGE}");
        let tricky = [
            '{', '}', '"', '\\', '=', ',', ' ', '\n', '#', 'é', '\u{1b}', '\u{0}',
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..3000 {
            let mut chars: Vec<char> = base.chars().collect();
            for _ in 0..(next() % 8 + 1) {
                let at = (next() as usize) % chars.len().max(1);
                match next() % 3 {
                    0 => chars[at] = tricky[(next() as usize) % tricky.len()],
                    1 => chars.insert(at, tricky[(next() as usize) % tricky.len()]),
                    _ => {
                        chars.truncate(at.max(1));
                    }
                }
            }
            let text: String = chars.into_iter().collect();
            let g = guest_dirty_rates(&text);
            assert!(g.rates.values().all(|v| v.is_finite() && *v >= 0.0));
            let _ = from_exposition(&text, "prod", "db-01");
        }
    }
}
