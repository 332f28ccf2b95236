//! Effective eviction strategy and where it came from (FACTS §2).

use serde::Serialize;

use crate::model::{EvictionStrategy, KubeVirt, VirtualMachineInstance};

/// Where the effective strategy was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StrategySource {
    /// `vmi.spec.evictionStrategy` (since v1.1 the webhook copies the cluster default here).
    VmiSpec,
    /// The KubeVirt CR's `spec.configuration.evictionStrategy`.
    ClusterConfig,
    /// Neither is set: KubeVirt's default, `None`.
    Default,
}

impl StrategySource {
    pub fn as_str(self) -> &'static str {
        match self {
            StrategySource::VmiSpec => "vmi-spec",
            StrategySource::ClusterConfig => "cluster-config",
            StrategySource::Default => "default",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveStrategy {
    pub strategy: EvictionStrategy,
    pub source: StrategySource,
}

/// `spec.evictionStrategy`, else the cluster's, else `None`.
pub fn effective_eviction_strategy(
    vmi: &VirtualMachineInstance,
    kubevirt: Option<&KubeVirt>,
) -> EffectiveStrategy {
    if let Some(s) = &vmi.spec.eviction_strategy {
        return EffectiveStrategy {
            strategy: s.clone(),
            source: StrategySource::VmiSpec,
        };
    }
    if let Some(s) = kubevirt.and_then(|kv| kv.spec.configuration.eviction_strategy.as_ref()) {
        return EffectiveStrategy {
            strategy: s.clone(),
            source: StrategySource::ClusterConfig,
        };
    }
    EffectiveStrategy {
        strategy: EvictionStrategy::None,
        source: StrategySource::Default,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kubevirt::{KubeVirtConfiguration, KubeVirtSpec};

    fn cluster(strategy: Option<EvictionStrategy>) -> KubeVirt {
        KubeVirt {
            spec: KubeVirtSpec {
                configuration: KubeVirtConfiguration {
                    eviction_strategy: strategy,
                    migrations: None,
                },
            },
            ..Default::default()
        }
    }

    #[test]
    fn vmi_spec_wins() {
        let mut vmi = VirtualMachineInstance::default();
        vmi.spec.eviction_strategy = Some(EvictionStrategy::External);
        let e =
            effective_eviction_strategy(&vmi, Some(&cluster(Some(EvictionStrategy::LiveMigrate))));
        assert_eq!(e.strategy, EvictionStrategy::External);
        assert_eq!(e.source, StrategySource::VmiSpec);
    }

    #[test]
    fn falls_back_to_cluster_then_none() {
        let vmi = VirtualMachineInstance::default();
        let e =
            effective_eviction_strategy(&vmi, Some(&cluster(Some(EvictionStrategy::LiveMigrate))));
        assert_eq!(
            (e.strategy, e.source),
            (EvictionStrategy::LiveMigrate, StrategySource::ClusterConfig)
        );
        let e = effective_eviction_strategy(&vmi, Some(&cluster(None)));
        assert_eq!(
            (e.strategy, e.source),
            (EvictionStrategy::None, StrategySource::Default)
        );
        let e = effective_eviction_strategy(&vmi, None);
        assert_eq!(e.source, StrategySource::Default);
    }
}
