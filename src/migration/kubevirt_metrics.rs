//! virt-handler's per-migration metrics (FACTS §8), read from its `/metrics` page (Prometheus
//! text format, through the API server's pod proxy) or from a Prometheus query API. Pure:
//! text in, numbers out. KubeVirt renamed these metrics twice; every name a supported release
//! used is read, the newest first.

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

fn parse_labels(text: &str) -> Option<Vec<(String, String)>> {
    let mut labels = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=')?;
        let after = after.trim_start().strip_prefix('"')?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, other)) => value.push(other),
                    None => return None,
                },
                '"' => {
                    end = Some(i);
                    break;
                }
                other => value.push(other),
            }
        }
        let end = end?;
        labels.push((key.trim().to_string(), value));
        rest = after[end + 1..].trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    Some(labels)
}

fn parse_line(line: &str) -> Option<Line<'_>> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let (name, labels, rest) = match line.find('{') {
        Some(open) if line[..open].find(' ').is_none() => {
            let close = line.rfind('}')?;
            (
                &line[..open],
                parse_labels(&line[open + 1..close])?,
                &line[close + 1..],
            )
        }
        _ => {
            let (name, rest) = line.split_once(char::is_whitespace)?;
            (name, Vec::new(), rest)
        }
    };
    let value = rest.split_whitespace().next()?;
    let value = match value {
        "NaN" => return None,
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().ok()?,
    };
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

/// Reads a Prometheus `/api/v1/query` answer (`resultType: vector`).
pub fn from_prometheus(answer: &Value) -> Result<MigrationMetrics, String> {
    if answer.get("status").and_then(Value::as_str) != Some("success") {
        let why = answer
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("the answer is not status=success");
        return Err(why.to_string());
    }
    let results = answer
        .pointer("/data/result")
        .and_then(Value::as_array)
        .ok_or("the answer has no data.result")?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
