//! The KubeVirt CR's `spec.configuration` and MigrationPolicy, FACTS §4.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{EvictionStrategy, ObjectMeta, Quantity};

/// The KubeVirt CR. `spec.configuration.developerConfiguration` is read into
/// [`KubeVirt::developer_configuration`] (beside `spec`, so that code building a
/// `KubeVirtConfiguration` literal keeps compiling); it is written back to its place.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(from = "RawKubeVirt", into = "RawKubeVirt")]
pub struct KubeVirt {
    pub metadata: ObjectMeta,
    pub spec: KubeVirtSpec,
    pub status: KubeVirtStatus,
    /// `spec.configuration.developerConfiguration` (feature gates).
    pub developer_configuration: Option<DeveloperConfiguration>,
    /// What the status says of the deployed images (beside `status`, for the same reason).
    pub deployed: DeployedImages,
}

/// The KubeVirt CR status fields that say which images are deployed: a new migration
/// target pod gets the virt-launcher image of the deployment virt-operator observed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeployedImages {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_kube_virt_registry: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_kube_virt_version: Option<String>,
    /// virt-operator's deployment config as JSON text (`pkg/virt-operator/util/config.go`
    /// `KubeVirtDeploymentConfig`: registry, imagePrefix, kubeVirtVersion, virtLauncherImage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_deployment_config: Option<String>,
}

/// `status` as the API writes it: the known fields and the deployed images.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct RawKubeVirtStatus {
    #[serde(flatten)]
    known: KubeVirtStatus,
    #[serde(flatten)]
    deployed: DeployedImages,
}

/// The KubeVirt CR as the API writes it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawKubeVirt {
    #[serde(default)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: RawKubeVirtSpec,
    #[serde(default)]
    status: RawKubeVirtStatus,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawKubeVirtSpec {
    #[serde(default)]
    configuration: RawKubeVirtConfiguration,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawKubeVirtConfiguration {
    #[serde(flatten)]
    known: KubeVirtConfiguration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    developer_configuration: Option<DeveloperConfiguration>,
}

impl From<RawKubeVirt> for KubeVirt {
    fn from(raw: RawKubeVirt) -> KubeVirt {
        KubeVirt {
            metadata: raw.metadata,
            spec: KubeVirtSpec {
                configuration: raw.spec.configuration.known,
            },
            status: raw.status.known,
            deployed: raw.status.deployed,
            developer_configuration: raw.spec.configuration.developer_configuration,
        }
    }
}

impl From<KubeVirt> for RawKubeVirt {
    fn from(kv: KubeVirt) -> RawKubeVirt {
        RawKubeVirt {
            metadata: kv.metadata,
            spec: RawKubeVirtSpec {
                configuration: RawKubeVirtConfiguration {
                    known: kv.spec.configuration,
                    developer_configuration: kv.developer_configuration,
                },
            },
            status: RawKubeVirtStatus {
                known: kv.status,
                deployed: kv.deployed,
            },
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeVirtSpec {
    #[serde(default)]
    pub configuration: KubeVirtConfiguration,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeVirtConfiguration {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_strategy: Option<EvictionStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrations: Option<MigrationConfig>,
}

/// `spec.configuration.developerConfiguration`: only the feature gates are read.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeveloperConfiguration {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feature_gates: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled_feature_gates: Vec<String>,
}

/// Feature gates vmctl reads (FACTS §12).
pub const GATE_MIGRATION_STALL_DETECTION: &str = "MigrationStallDetection";
pub const GATE_MIGRATION_PRIORITY_QUEUE: &str = "MigrationPriorityQueue";
pub const GATE_DECENTRALIZED_LIVE_MIGRATION: &str = "DecentralizedLiveMigration";

/// `experimental.stallDetector` (`StallDetectorOptions`, v1.9+ alpha) as written. The factors
/// are Kubernetes quantities (`"0.4"`), kept as text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StallDetectorOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_margin: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_progress_timeout: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switchover_timeout: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_local_minima: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_timeout_factor: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precopy_possible_factor: Option<Value>,
    /// Read for completeness (vmctl's own controller uses KubeVirt's default 0.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ewma_alpha: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patience_window_decay_factor: Option<Value>,
}

/// The stall detector's settings with KubeVirt's defaults applied (FACTS §4, §5.4).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EffectiveStallDetector {
    /// Percent of remaining bytes that still counts as no progress.
    pub stall_margin: u64,
    /// Seconds without progress before a stall is declared.
    pub stall_progress_timeout: u64,
    /// Seconds a stop-and-copy switchover may take before the migration is aborted.
    pub switchover_timeout: u64,
    /// Post-copy / stop-and-copy only if the projection fits in this many completion budgets.
    pub completion_timeout_factor: f64,
    /// A soft stop-and-copy is tried while the estimated downtime is within this factor of maxDowntimeMs.
    pub precopy_possible_factor: f64,
}

pub const DEFAULT_STALL_MARGIN: u64 = 4;
pub const DEFAULT_STALL_PROGRESS_TIMEOUT: u64 = 40;
pub const DEFAULT_SWITCHOVER_TIMEOUT: u64 = 60;
pub const DEFAULT_COMPLETION_TIMEOUT_FACTOR: f64 = 2.0;
pub const DEFAULT_PRECOPY_POSSIBLE_FACTOR: f64 = 1.5;

/// A stall-detector factor as written: a JSON number, or a Kubernetes quantity string. On
/// main the factors are `resource.Quantity` (kubevirt/kubevirt
/// `staging/src/kubevirt.io/api/core/v1/types.go` `StallDetectorOptions`, PR #18303 "Keep stall
/// detector factors as Quantity until virt-launcher", read with `AsApproximateFloat64`), so
/// `0.4` may come back canonicalised as `400m` and `1.5` as `1500m`: both forms read the same.
/// Anything else (garbage, zero, negative) is the default.
pub fn factor(v: Option<&Value>, default: f64) -> f64 {
    match v {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => Quantity::parse(s).ok().map(|q| q.millis() as f64 / 1000.0),
        _ => None,
    }
    .filter(|f| f.is_finite() && *f > 0.0)
    .unwrap_or(default)
}

impl StallDetectorOptions {
    /// Reads `experimental.stallDetector` from an `experimental` object; None when absent
    /// (a value of the wrong shape reads as absent, never as an error).
    pub fn from_experimental(experimental: Option<&Value>) -> Option<StallDetectorOptions> {
        let sd = experimental?.get("stallDetector")?;
        serde_json::from_value(sd.clone()).ok()
    }

    pub fn effective(&self) -> EffectiveStallDetector {
        EffectiveStallDetector {
            stall_margin: self.stall_margin.unwrap_or(DEFAULT_STALL_MARGIN),
            stall_progress_timeout: self
                .stall_progress_timeout
                .unwrap_or(DEFAULT_STALL_PROGRESS_TIMEOUT),
            switchover_timeout: self
                .switchover_timeout
                .unwrap_or(DEFAULT_SWITCHOVER_TIMEOUT),
            completion_timeout_factor: factor(
                self.completion_timeout_factor.as_ref(),
                DEFAULT_COMPLETION_TIMEOUT_FACTOR,
            ),
            precopy_possible_factor: factor(
                self.precopy_possible_factor.as_ref(),
                DEFAULT_PRECOPY_POSSIBLE_FACTOR,
            ),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeVirtStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_kube_virt_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

/// Migration options as written (cluster config, or a migration's effective configuration);
/// every field optional. See [`EffectiveMigrationConfig`] for the defaults applied.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_migrations_per_cluster: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_outbound_migrations_per_node: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_per_migration: Option<Quantity>,
    #[serde(
        rename = "completionTimeoutPerGiB",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub completion_timeout_per_gib: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_timeout: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_downtime_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utility_volumes_timeout: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsafe_migration_override: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_auto_converge: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_post_copy: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_workload_disruption: Option<bool>,
    #[serde(
        rename = "disableTLS",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub disable_tls: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_drain_taint_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_s_e_linux_level_on_migration: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Value>,
}

/// Migration configuration with KubeVirt's defaults applied (FACTS §4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EffectiveMigrationConfig {
    pub parallel_migrations_per_cluster: u32,
    pub parallel_outbound_migrations_per_node: u32,
    /// Bytes per second; 0 = unlimited.
    pub bandwidth_per_migration: u64,
    #[serde(rename = "completionTimeoutPerGiB")]
    pub completion_timeout_per_gib: u64,
    pub progress_timeout: u64,
    pub max_downtime_ms: u64,
    pub allow_auto_converge: bool,
    pub allow_post_copy: bool,
    pub allow_workload_disruption: bool,
    pub node_drain_taint_key: String,
}

// KubeVirt's migration defaults (FACTS §4): the one place they are written; the libvirt
// plan and the controller take theirs from here.
pub const DEFAULT_PARALLEL_MIGRATIONS_PER_CLUSTER: u32 = 5;
pub const DEFAULT_PARALLEL_OUTBOUND_MIGRATIONS_PER_NODE: u32 = 2;
/// Seconds of completion budget per (decimal) GB of guest memory.
pub const DEFAULT_COMPLETION_TIMEOUT_PER_GIB: u64 = 150;
/// The default before v1.4 (FACTS §4).
pub const LEGACY_COMPLETION_TIMEOUT_PER_GIB: u64 = 800;
/// Seconds without progress before the migration is aborted.
pub const DEFAULT_PROGRESS_TIMEOUT: u64 = 150;
/// KubeVirt v1.9's default `maxDowntimeMs`: the ceiling when none is given.
pub const DEFAULT_MAX_DOWNTIME_MS: u64 = 900;
pub const DEFAULT_NODE_DRAIN_TAINT_KEY: &str = "kubevirt.io/drain";
/// virt-controller deletes a migration's target pod unschedulable for this long, and one
/// pending for any other reason after the second (FACTS §5.7, §6.2); the annotations
/// `kubevirt.io/migrationUnschedulablePodTimeoutSeconds` / `…PendingPodTimeoutSeconds`
/// override them.
pub const UNSCHEDULABLE_POD_TIMEOUT_SECONDS: u64 = 300;
pub const PENDING_POD_TIMEOUT_SECONDS: u64 = 900;

/// Parses `v1.3.2` / `v0.59.0-rc.1` into (major, minor).
pub fn parse_version(version: &str) -> Option<(u32, u32)> {
    let v = version.trim().trim_start_matches('v');
    let mut parts = v.split(['.', '-']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

impl MigrationConfig {
    /// Applies the defaults of the given KubeVirt version (None = current).
    pub fn effective(&self, kubevirt_version: Option<&str>) -> EffectiveMigrationConfig {
        let legacy = kubevirt_version
            .and_then(parse_version)
            .is_some_and(|v| v < (1, 4));
        let allow_post_copy = self.allow_post_copy.unwrap_or(false);
        EffectiveMigrationConfig {
            parallel_migrations_per_cluster: self
                .parallel_migrations_per_cluster
                .unwrap_or(DEFAULT_PARALLEL_MIGRATIONS_PER_CLUSTER),
            parallel_outbound_migrations_per_node: self
                .parallel_outbound_migrations_per_node
                .unwrap_or(DEFAULT_PARALLEL_OUTBOUND_MIGRATIONS_PER_NODE),
            bandwidth_per_migration: self
                .bandwidth_per_migration
                .as_ref()
                .map(Quantity::bytes)
                .unwrap_or(0),
            completion_timeout_per_gib: self.completion_timeout_per_gib.unwrap_or(if legacy {
                LEGACY_COMPLETION_TIMEOUT_PER_GIB
            } else {
                DEFAULT_COMPLETION_TIMEOUT_PER_GIB
            }),
            progress_timeout: self.progress_timeout.unwrap_or(DEFAULT_PROGRESS_TIMEOUT),
            max_downtime_ms: self.max_downtime_ms.unwrap_or(DEFAULT_MAX_DOWNTIME_MS),
            allow_auto_converge: self.allow_auto_converge.unwrap_or(false),
            allow_post_copy,
            // Unset follows allowPostCopy (GetMigrationConfiguration).
            allow_workload_disruption: self.allow_workload_disruption.unwrap_or(allow_post_copy),
            node_drain_taint_key: self
                .node_drain_taint_key
                .clone()
                .unwrap_or_else(|| DEFAULT_NODE_DRAIN_TAINT_KEY.to_string()),
        }
    }
}

impl KubeVirt {
    pub fn version(&self) -> Option<&str> {
        self.status.observed_kube_virt_version.as_deref()
    }

    /// True when `developerConfiguration.featureGates` lists the gate and
    /// `disabledFeatureGates` does not. (GA gates need no listing; this is for alpha/beta ones.)
    pub fn feature_gate(&self, gate: &str) -> bool {
        self.developer_configuration.as_ref().is_some_and(|d| {
            d.feature_gates.iter().any(|g| g == gate)
                && !d.disabled_feature_gates.iter().any(|g| g == gate)
        })
    }

    pub fn migration_config(&self) -> EffectiveMigrationConfig {
        self.spec
            .configuration
            .migrations
            .clone()
            .unwrap_or_default()
            .effective(self.version())
    }
}

/// MigrationPolicy (`migrations.kubevirt.io/v1alpha1`, cluster-scoped).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationPolicy {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: MigrationPolicySpec,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationPolicySpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selectors: Option<PolicySelectors>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_auto_converge: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_per_migration: Option<Quantity>,
    #[serde(
        rename = "completionTimeoutPerGiB",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub completion_timeout_per_gib: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_post_copy: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_workload_disruption: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_downtime_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Value>,
}

/// Plain label-equality maps, not LabelSelectors (FACTS §4.1).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicySelectors {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtual_machine_instance_selector: Option<BTreeMap<String, String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_apply_when_absent() {
        let eff = MigrationConfig::default().effective(Some("v1.8.4"));
        assert_eq!(eff.parallel_migrations_per_cluster, 5);
        assert_eq!(eff.parallel_outbound_migrations_per_node, 2);
        assert_eq!(eff.completion_timeout_per_gib, 150);
        assert_eq!(eff.progress_timeout, 150);
        assert_eq!(eff.bandwidth_per_migration, 0);
        assert!(!eff.allow_post_copy && !eff.allow_workload_disruption);
    }

    #[test]
    fn old_clusters_default_to_800_seconds_per_gib() {
        let eff = MigrationConfig::default().effective(Some("v1.3.1"));
        assert_eq!(eff.completion_timeout_per_gib, 800);
    }

    #[test]
    fn workload_disruption_follows_post_copy() {
        let cfg: MigrationConfig = serde_json::from_value(
            serde_json::json!({"allowPostCopy": true, "bandwidthPerMigration": "64Mi"}),
        )
        .unwrap();
        let eff = cfg.effective(None);
        assert!(eff.allow_workload_disruption);
        assert_eq!(eff.bandwidth_per_migration, 64 * 1024 * 1024);
    }

    #[test]
    fn feature_gates_and_stall_detector_settings_parse() {
        // v1.10 shape (swagger: DeveloperConfiguration.featureGates, StallDetectorOptions).
        let kv: KubeVirt = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": {
                "developerConfiguration": {"featureGates": ["MigrationStallDetection", "DecentralizedLiveMigration"],
                                           "disabledFeatureGates": ["DecentralizedLiveMigration"]},
                "migrations": {"maxDowntimeMs": 500}
            }},
            "status": {"observedKubeVirtVersion": "v1.10.0"}
        }))
        .unwrap();
        assert!(kv.feature_gate(GATE_MIGRATION_STALL_DETECTION));
        assert!(
            !kv.feature_gate(GATE_DECENTRALIZED_LIVE_MIGRATION),
            "disabled wins"
        );
        assert_eq!(kv.migration_config().max_downtime_ms, 500);
        let exp = serde_json::json!({"stallDetector": {"stallProgressTimeout": 30, "completionTimeoutFactor": "3", "precopyPossibleFactor": 1.2}});
        let sd = StallDetectorOptions::from_experimental(Some(&exp))
            .unwrap()
            .effective();
        assert_eq!(sd.stall_progress_timeout, 30);
        assert_eq!(sd.switchover_timeout, 60);
        assert_eq!(sd.stall_margin, 4);
        assert_eq!(sd.completion_timeout_factor, 3.0);
        assert_eq!(sd.precopy_possible_factor, 1.2);
        // main (PR #18303): the factors are Quantities and may come back canonicalised.
        for (written, want) in [
            (serde_json::json!("400m"), 0.4),
            (serde_json::json!("0.4"), 0.4),
            (serde_json::json!(0.4), 0.4),
            (serde_json::json!("1500m"), 1.5),
            (serde_json::json!("1.5"), 1.5),
            (serde_json::json!("3"), 3.0),
            (serde_json::json!("2e0"), 2.0),
        ] {
            assert_eq!(factor(Some(&written), 9.0), want, "{written}");
        }
        for garbage in [
            serde_json::json!("0"),
            serde_json::json!("-1"),
            serde_json::json!("fast"),
            serde_json::json!("1.5x"),
            serde_json::json!(""),
            serde_json::json!(true),
            serde_json::json!("\u{1b}[31m"),
        ] {
            assert_eq!(factor(Some(&garbage), 9.0), 9.0, "{garbage}");
        }
        let milli = serde_json::json!({"stallDetector": {"completionTimeoutFactor": "2500m", "precopyPossibleFactor": "1200m", "ewmaAlpha": "400m", "patienceWindowDecayFactor": "500m"}});
        let opts = StallDetectorOptions::from_experimental(Some(&milli)).unwrap();
        let sd = opts.effective();
        assert_eq!(
            (sd.completion_timeout_factor, sd.precopy_possible_factor),
            (2.5, 1.2)
        );
        assert_eq!(factor(opts.ewma_alpha.as_ref(), 9.0), 0.4);
        assert_eq!(factor(opts.patience_window_decay_factor.as_ref(), 9.0), 0.5);
        let bad = serde_json::json!({"stallDetector": "on"});
        assert!(StallDetectorOptions::from_experimental(Some(&bad)).is_none());
        assert!(StallDetectorOptions::from_experimental(None).is_none());
        // v1.8 shape: no developerConfiguration gates, no maxDowntimeMs: v1.9 default 900.
        let old: KubeVirt = serde_json::from_value(serde_json::json!({
            "spec": {"configuration": {"migrations": {"progressTimeout": 150}}},
            "status": {"observedKubeVirtVersion": "v1.8.4"}
        }))
        .unwrap();
        assert!(!old.feature_gate(GATE_MIGRATION_STALL_DETECTION));
        assert_eq!(old.migration_config().max_downtime_ms, 900);
        // Written back where it was read.
        let again = serde_json::to_value(&kv).unwrap();
        assert_eq!(
            again["spec"]["configuration"]["developerConfiguration"]["featureGates"][0],
            "MigrationStallDetection"
        );
        assert_eq!(
            again["spec"]["configuration"]["migrations"]["maxDowntimeMs"],
            500
        );
    }

    #[test]
    fn versions_parse() {
        assert_eq!(parse_version("v1.9.0-beta.0"), Some((1, 9)));
        assert_eq!(parse_version("v0.59.2"), Some((0, 59)));
        assert_eq!(parse_version("garbage"), None);
    }
}
