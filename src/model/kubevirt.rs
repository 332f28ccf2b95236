//! The KubeVirt CR's `spec.configuration` and MigrationPolicy, FACTS §4.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{EvictionStrategy, ObjectMeta, Quantity};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeVirt {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: KubeVirtSpec,
    #[serde(default)]
    pub status: KubeVirtStatus,
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

pub const DEFAULT_PARALLEL_MIGRATIONS_PER_CLUSTER: u32 = 5;
pub const DEFAULT_PARALLEL_OUTBOUND_MIGRATIONS_PER_NODE: u32 = 2;
pub const DEFAULT_COMPLETION_TIMEOUT_PER_GIB: u64 = 150;
/// The default before v1.4 (FACTS §4).
pub const LEGACY_COMPLETION_TIMEOUT_PER_GIB: u64 = 800;
pub const DEFAULT_PROGRESS_TIMEOUT: u64 = 150;
pub const DEFAULT_MAX_DOWNTIME_MS: u64 = 900;
pub const DEFAULT_NODE_DRAIN_TAINT_KEY: &str = "kubevirt.io/drain";

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
    fn versions_parse() {
        assert_eq!(parse_version("v1.9.0-beta.0"), Some((1, 9)));
        assert_eq!(parse_version("v0.59.2"), Some((0, 59)));
        assert_eq!(parse_version("garbage"), None);
    }
}
