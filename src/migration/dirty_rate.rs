//! Reading the guest dirty rate virt-handler exports (I/O), for `plan-drain` (every VMI of
//! the drained nodes: one `/metrics` page per node through the API server's pod proxy, or one
//! Prometheus query), `migrate`'s pre-flight and `explain` (one VMI). Nothing here fails a
//! command: what cannot be read comes back as words, one per cause.
//!
//! The figure is [`kubevirt_metrics::GUEST_DIRTY_RATE`] (KubeVirt v1.6+), a hint: see there.

use std::collections::BTreeMap;

use serde_json::Value;

use super::kubevirt::{HANDLER_LABEL, KubeVirtDriver, MetricsUnavailable, Prometheus};
use super::kubevirt_metrics::{
    self, GUEST_DIRTY_RATE, GUEST_DIRTY_RATE_SINCE, GuestDirtyRates, MigrationMetrics,
};
use super::series::ProgressSeries;
use crate::cluster::live::LiveSource;
use crate::error::Result;
use crate::model::{KubeVirt, Pod};
use crate::policy::drain::convergence::DirtyRates;

/// Where the metrics come from: `--metrics` (virt-handler's page through the pod proxy) or
/// `--prometheus URL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetricsFrom {
    Handler,
    Prometheus(String),
}

impl MetricsFrom {
    /// The flags' choice; None when neither was given (nothing is read).
    pub fn from_flags(metrics: bool, prometheus: Option<&str>) -> Option<MetricsFrom> {
        match prometheus {
            Some(url) => Some(MetricsFrom::Prometheus(url.to_string())),
            None if metrics => Some(MetricsFrom::Handler),
            None => None,
        }
    }

    /// In words, for the plan.
    pub fn describe(&self, kubevirt_namespace: &str) -> String {
        match self {
            MetricsFrom::Handler => format!(
                "virt-handler's /metrics through the API server's pod proxy (namespace {kubevirt_namespace})"
            ),
            MetricsFrom::Prometheus(url) => format!("Prometheus at {url}"),
        }
    }
}

/// KubeVirt's namespace: the KubeVirt CR's, else `kubevirt`.
pub fn kubevirt_namespace(kubevirt: Option<&KubeVirt>) -> String {
    kubevirt
        .and_then(|k| k.metadata.namespace.clone())
        .unwrap_or_else(|| "kubevirt".to_string())
}

/// Said instead of reading when the cluster's KubeVirt predates the metric (pure).
pub fn too_old(kubevirt: Option<&KubeVirt>) -> Option<String> {
    let version = kubevirt.and_then(KubeVirt::version)?;
    let parsed = crate::model::kubevirt::parse_version(version)?;
    (parsed < GUEST_DIRTY_RATE_SINCE).then(|| {
        format!(
            "KubeVirt {version} does not export {GUEST_DIRTY_RATE} (v{}.{}+): no dirty rates, nothing was read",
            GUEST_DIRTY_RATE_SINCE.0, GUEST_DIRTY_RATE_SINCE.1
        )
    })
}

/// The running virt-handler pod of each of `nodes`, from pods already read (pure): label
/// `kubevirt.io=virt-handler`, phase Running, in KubeVirt's namespace when it has one there.
pub fn handler_pods(
    pods: &[Pod],
    kubevirt_namespace: &str,
    nodes: &[String],
) -> BTreeMap<String, String> {
    let (key, value) = HANDLER_LABEL.split_once('=').unwrap_or((HANDLER_LABEL, ""));
    // Per node, the best so far: KubeVirt's namespace first, then the smallest name.
    let mut found: BTreeMap<String, (bool, String)> = BTreeMap::new();
    for p in pods {
        let labels = p.metadata.labels.as_ref();
        if labels.and_then(|l| l.get(key)).map(String::as_str) != Some(value)
            || p.status.as_ref().and_then(|s| s.phase.as_deref()) != Some("Running")
        {
            continue;
        }
        let (Some(node), Some(name)) = (
            p.spec.as_ref().and_then(|s| s.node_name.as_deref()),
            p.metadata.name.as_deref(),
        ) else {
            continue;
        };
        if !nodes.iter().any(|n| n == node) {
            continue;
        }
        let rank = (
            p.metadata.namespace.as_deref() != Some(kubevirt_namespace),
            name.to_string(),
        );
        if found.get(node).is_none_or(|best| rank < *best) {
            found.insert(node.to_string(), rank);
        }
    }
    found.into_iter().map(|(n, (_, p))| (n, p)).collect()
}

/// One cause, the nodes it concerns, one line.
fn group(causes: BTreeMap<String, Vec<String>>, out: &mut Vec<String>) {
    for (cause, nodes) in causes {
        out.push(format!(
            "{cause} ({} {}): no dirty rates for its VMIs",
            if nodes.len() == 1 { "node" } else { "nodes" },
            nodes.join(", ")
        ));
    }
}

/// The guest dirty rates of the VMIs on `nodes`, for `plan-drain`: one page per node with a
/// running VMI (fetched together), or one Prometheus query; `pods` are those already read
/// (the drained nodes' pods are among them, virt-handler's included). Errors only for a
/// `--prometheus` that is not a URL.
pub async fn for_nodes(
    live: Option<&LiveSource>,
    from: &MetricsFrom,
    kubevirt: Option<&KubeVirt>,
    pods: &[Pod],
    nodes: &[String],
) -> Result<DirtyRates> {
    let namespace = kubevirt_namespace(kubevirt);
    let mut rates = DirtyRates {
        source: from.describe(&namespace),
        ..DirtyRates::default()
    };
    if nodes.is_empty() {
        return Ok(rates);
    }
    if let Some(why) = too_old(kubevirt) {
        rates.notes.push(why);
        return Ok(rates);
    }
    let mut causes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut absent: Vec<String> = Vec::new();
    match from {
        MetricsFrom::Prometheus(url) => {
            let prometheus = Prometheus::new(url)?;
            let query = kubevirt_metrics::guest_dirty_rate_query(nodes);
            match prometheus.query(&query).await.and_then(|answer| {
                kubevirt_metrics::guest_dirty_rates_from_prometheus(&answer)
                    .map_err(|e| MetricsUnavailable(format!("Prometheus at {url}: {e}")))
            }) {
                Ok(found) => {
                    if !found.metric_present {
                        absent.extend(nodes.iter().cloned());
                    }
                    take(&mut rates, found, nodes);
                }
                Err(MetricsUnavailable(why)) => {
                    causes.insert(why, nodes.to_vec());
                }
            }
        }
        MetricsFrom::Handler => {
            let Some(live) = live else {
                rates.notes.push("--metrics reads virt-handler through the API server, and a snapshot (--from) has none: no dirty rates (--prometheus URL works with a snapshot)".to_string());
                return Ok(rates);
            };
            let driver = KubeVirtDriver::new(live);
            let handlers = handler_pods(pods, &namespace, nodes);
            let mut reads = Vec::new();
            for node in nodes {
                match handlers.get(node) {
                    Some(pod) => reads.push((node.clone(), pod.clone())),
                    None => causes
                        .entry(format!(
                            "no running virt-handler pod ({HANDLER_LABEL}) on the node"
                        ))
                        .or_default()
                        .push(node.clone()),
                }
            }
            let pages = futures::future::join_all(
                reads
                    .iter()
                    .map(|(_, pod)| driver.handler_page(&namespace, pod)),
            )
            .await;
            for ((node, pod), page) in reads.into_iter().zip(pages) {
                match page {
                    Ok(text) => {
                        let found = kubevirt_metrics::guest_dirty_rates(&text);
                        if !found.metric_present {
                            absent.push(format!("{node} ({pod})"));
                        }
                        take(&mut rates, found, std::slice::from_ref(&node));
                    }
                    Err(MetricsUnavailable(why)) => causes.entry(why).or_default().push(node),
                }
            }
        }
    }
    group(causes, &mut rates.notes);
    if !absent.is_empty() {
        rates.notes.push(format!(
            "no {GUEST_DIRTY_RATE} at all for {} (KubeVirt exports it from v{}.{}: an older virt-handler, or no VMI could be measured): no dirty rates for its VMIs",
            absent.join(", "),
            GUEST_DIRTY_RATE_SINCE.0,
            GUEST_DIRTY_RATE_SINCE.1
        ));
    }
    Ok(rates)
}

/// Keeps what was read, marking `nodes` as read when the metric was there.
fn take(rates: &mut DirtyRates, found: GuestDirtyRates, nodes: &[String]) {
    if found.metric_present {
        rates.nodes_read.extend(nodes.iter().cloned());
    }
    for ((ns, name), v) in found.rates {
        rates
            .rates
            .entry((ns, name))
            .or_insert(v.round().min(u64::MAX as f64) as u64);
    }
}

/// What was read about one VMI: its guest dirty rate and, while it migrates, its migration's
/// job statistics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VmiReading {
    /// Bytes/s, when the page had a sample for it.
    pub guest_bps: Option<u64>,
    pub migration: MigrationMetrics,
    /// Where it was read: `virt-handler-x7k2p (node-1)` or `Prometheus at URL`.
    pub from: String,
    /// The metric appeared at all.
    pub metric_present: bool,
}

/// Where one VMI's virt-handler is: its pod when already known, else its node (the pod is
/// listed).
pub enum Handler<'a> {
    Pod(&'a str),
    Node(&'a str),
}

/// The points a progress series read from Prometheus keeps.
pub const PROGRESS_POINTS: u64 = 120;

/// A migration's progress from `start` to `end` (Unix seconds): one range query to
/// Prometheus at `url`, every `(end - start) / 120` seconds (at least 1), at most 120 points.
pub async fn progress_series(
    url: &str,
    namespace: &str,
    name: &str,
    start: i64,
    end: i64,
) -> std::result::Result<ProgressSeries, MetricsUnavailable> {
    let prometheus = Prometheus::new(url).map_err(|e| MetricsUnavailable(e.to_string()))?;
    let step = ((end - start).max(1) as u64)
        .div_ceil(PROGRESS_POINTS)
        .max(1);
    let query = kubevirt_metrics::progress_query(namespace, name);
    let answer = prometheus.query_range(&query, start, end, step).await?;
    let points = kubevirt_metrics::progress_from_prometheus_range(&answer, start)
        .map_err(|e| MetricsUnavailable(format!("Prometheus at {url}: {e}")))?;
    if points.is_empty() {
        return Err(MetricsUnavailable(format!(
            "Prometheus at {url} has no migration metrics of {namespace}/{name} in the migration's window"
        )));
    }
    Ok(ProgressSeries {
        source: format!("Prometheus at {url}, every {step}s"),
        points: super::series::downsample(&points, PROGRESS_POINTS as usize),
    })
}

/// The guest dirty rate (and migration statistics) of one VMI: one page, or one Prometheus
/// query for both. `Err` says why nothing could be read.
pub async fn for_vmi(
    live: Option<&LiveSource>,
    from: &MetricsFrom,
    kubevirt: Option<&KubeVirt>,
    handler: Handler<'_>,
    namespace: &str,
    name: &str,
) -> std::result::Result<VmiReading, MetricsUnavailable> {
    if let Some(why) = too_old(kubevirt) {
        return Err(MetricsUnavailable(why));
    }
    match from {
        MetricsFrom::Prometheus(url) => {
            let prometheus = Prometheus::new(url).map_err(|e| MetricsUnavailable(e.to_string()))?;
            let names: Vec<&str> = std::iter::once(GUEST_DIRTY_RATE)
                .chain(kubevirt_metrics::all_names())
                .collect();
            let query = kubevirt_metrics::prometheus_query_of(&names, namespace, name);
            let answer: Value = prometheus.query(&query).await?;
            let guest = kubevirt_metrics::guest_dirty_rates_from_prometheus(&answer)
                .map_err(|e| MetricsUnavailable(format!("Prometheus at {url}: {e}")))?;
            let migration = kubevirt_metrics::from_prometheus(&answer)
                .map_err(|e| MetricsUnavailable(format!("Prometheus at {url}: {e}")))?;
            Ok(VmiReading {
                guest_bps: guest.of(namespace, name),
                migration,
                from: format!("Prometheus at {url}"),
                metric_present: guest.metric_present,
            })
        }
        MetricsFrom::Handler => {
            let live = live.ok_or_else(|| {
                MetricsUnavailable(
                    "--metrics reads virt-handler through the API server, and a snapshot (--from) has none".into(),
                )
            })?;
            let driver = KubeVirtDriver::new(live);
            let namespace_kv = kubevirt_namespace(kubevirt);
            let pod = match handler {
                Handler::Pod(p) => p.to_string(),
                Handler::Node(node) => driver.handler_pod(&namespace_kv, node).await?,
            };
            let text = driver.handler_page(&namespace_kv, &pod).await?;
            let guest = kubevirt_metrics::guest_dirty_rates(&text);
            Ok(VmiReading {
                guest_bps: guest.of(namespace, name),
                migration: kubevirt_metrics::from_exposition(&text, namespace, name),
                from: format!("virt-handler pod {pod}"),
                metric_present: guest.metric_present,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, ns: &str, node: &str, phase: &str, handler: bool) -> Pod {
        let labels = if handler {
            json!({"kubevirt.io": "virt-handler"})
        } else {
            json!({"kubevirt.io": "virt-launcher"})
        };
        serde_json::from_value(
            json!({"metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"nodeName": node, "containers": []}, "status": {"phase": phase}}),
        )
        .unwrap()
    }

    #[test]
    fn the_running_handler_of_each_node_in_kubevirts_namespace_first() {
        let pods = vec![
            pod("virt-handler-a", "kubevirt", "node-1", "Running", true),
            pod("virt-handler-old", "kubevirt", "node-2", "Failed", true),
            pod("launcher", "kubevirt", "node-2", "Running", false),
            pod("virt-handler-elsewhere", "other", "node-2", "Running", true),
            pod("virt-handler-x", "other", "node-3", "Running", true),
            pod("virt-handler-y", "kubevirt", "node-3", "Running", true),
            pod("virt-handler-z", "kubevirt", "node-9", "Running", true),
        ];
        let nodes = ["node-1", "node-2", "node-3", "node-4"].map(String::from);
        let found = handler_pods(&pods, "kubevirt", &nodes);
        assert_eq!(
            found.get("node-1").map(String::as_str),
            Some("virt-handler-a")
        );
        assert_eq!(
            found.get("node-2").map(String::as_str),
            Some("virt-handler-elsewhere"),
            "another namespace when KubeVirt's has none running"
        );
        assert_eq!(
            found.get("node-3").map(String::as_str),
            Some("virt-handler-y")
        );
        assert_eq!(found.len(), 3, "{found:?}");
    }

    #[test]
    fn an_old_kubevirt_is_not_asked() {
        let kv = |v: &str| -> KubeVirt {
            serde_json::from_value(json!({"metadata": {"name": "kubevirt", "namespace": "kv"},
                "status": {"observedKubeVirtVersion": v}}))
            .unwrap()
        };
        assert!(too_old(Some(&kv("v1.5.2"))).unwrap().contains(
            "KubeVirt v1.5.2 does not export kubevirt_vmi_dirty_rate_bytes_per_second (v1.6+)"
        ));
        assert_eq!(too_old(Some(&kv("v1.6.0"))), None);
        assert_eq!(too_old(Some(&kv("garbage"))), None);
        assert_eq!(too_old(None), None);
        assert_eq!(kubevirt_namespace(Some(&kv("v1.8.4"))), "kv");
        assert_eq!(kubevirt_namespace(None), "kubevirt");
    }

    #[test]
    fn causes_are_said_once_with_their_nodes() {
        let mut causes = BTreeMap::new();
        causes.insert(
            "forbidden".to_string(),
            vec!["node-1".to_string(), "node-2".to_string()],
        );
        causes.insert("no pod".to_string(), vec!["node-3".to_string()]);
        let mut out = Vec::new();
        group(causes, &mut out);
        assert_eq!(
            out,
            [
                "forbidden (nodes node-1, node-2): no dirty rates for its VMIs",
                "no pod (node node-3): no dirty rates for its VMIs"
            ]
        );
        assert_eq!(
            MetricsFrom::from_flags(true, Some("http://p")),
            Some(MetricsFrom::Prometheus("http://p".into()))
        );
        assert_eq!(
            MetricsFrom::from_flags(true, None),
            Some(MetricsFrom::Handler)
        );
        assert_eq!(MetricsFrom::from_flags(false, None), None);
    }
}
