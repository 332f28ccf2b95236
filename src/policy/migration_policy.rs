//! Which MigrationPolicy applies to a VMI, and the configuration it yields (FACTS §4.1).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::kubevirt::{EffectiveMigrationConfig, MigrationConfig};
use crate::model::{KubeVirt, MigrationPolicy, Namespace, VirtualMachineInstance};

/// The policy that wins for a VMI, with its score.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyMatch {
    pub name: String,
    /// Matching VMI labels + matching namespace labels.
    pub score: usize,
    pub vmi_label_matches: usize,
}

fn labels_match(
    selector: &BTreeMap<String, String>,
    labels: Option<&BTreeMap<String, String>>,
) -> Option<usize> {
    let labels = labels?;
    selector
        .iter()
        .all(|(k, v)| labels.get(k) == Some(v))
        .then_some(selector.len())
}

/// KubeVirt's `matchPolicy`: every selector entry must match; a policy without selectors
/// never matches; the highest score wins, then more VMI-label matches, then the
/// lexicographically smallest name.
pub fn matching_policy(
    vmi: &VirtualMachineInstance,
    namespace: Option<&Namespace>,
    policies: &[MigrationPolicy],
) -> Option<PolicyMatch> {
    let empty = BTreeMap::new();
    let vmi_labels = vmi.metadata.labels.as_ref();
    let ns_labels = namespace.and_then(|n| n.metadata.labels.as_ref());
    let mut best: Option<PolicyMatch> = None;
    for policy in policies {
        let Some(selectors) = &policy.spec.selectors else {
            continue;
        };
        let vmi_sel = selectors
            .virtual_machine_instance_selector
            .as_ref()
            .unwrap_or(&empty);
        let ns_sel = selectors.namespace_selector.as_ref().unwrap_or(&empty);
        let vmi_score = if vmi_sel.is_empty() {
            Some(0)
        } else {
            labels_match(vmi_sel, vmi_labels)
        };
        let ns_score = if ns_sel.is_empty() {
            Some(0)
        } else {
            labels_match(ns_sel, ns_labels)
        };
        let (Some(vmi_score), Some(ns_score)) = (vmi_score, ns_score) else {
            continue;
        };
        let candidate = PolicyMatch {
            name: policy.name().to_string(),
            score: vmi_score + ns_score,
            vmi_label_matches: vmi_score,
        };
        let better = match &best {
            None => true,
            Some(b) => {
                (candidate.score, candidate.vmi_label_matches) > (b.score, b.vmi_label_matches)
                    || ((candidate.score, candidate.vmi_label_matches)
                        == (b.score, b.vmi_label_matches)
                        && candidate.name < b.name)
            }
        };
        if better {
            best = Some(candidate);
        }
    }
    best
}

/// The cluster's migration configuration with the policy's overrides applied.
pub fn effective_config(
    kubevirt: Option<&KubeVirt>,
    policy: Option<&MigrationPolicy>,
) -> EffectiveMigrationConfig {
    let mut raw: MigrationConfig = kubevirt
        .and_then(|k| k.spec.configuration.migrations.clone())
        .unwrap_or_default();
    if let Some(p) = policy {
        let s = &p.spec;
        if s.allow_auto_converge.is_some() {
            raw.allow_auto_converge = s.allow_auto_converge;
        }
        if s.bandwidth_per_migration.is_some() {
            raw.bandwidth_per_migration = s.bandwidth_per_migration.clone();
        }
        if s.completion_timeout_per_gib.is_some() {
            raw.completion_timeout_per_gib = s.completion_timeout_per_gib;
        }
        if s.allow_post_copy.is_some() {
            raw.allow_post_copy = s.allow_post_copy;
            // A policy that sets allowPostCopy but not allowWorkloadDisruption: the latter follows.
            if s.allow_workload_disruption.is_none() {
                raw.allow_workload_disruption = s.allow_post_copy;
            }
        }
        if s.allow_workload_disruption.is_some() {
            raw.allow_workload_disruption = s.allow_workload_disruption;
        }
        if s.max_downtime_ms.is_some() {
            raw.max_downtime_ms = s.max_downtime_ms;
        }
    }
    raw.effective(kubevirt.and_then(KubeVirt::version))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(name: &str, vmi: serde_json::Value, ns: serde_json::Value) -> MigrationPolicy {
        serde_json::from_value(json!({"metadata": {"name": name},
            "spec": {"selectors": {"virtualMachineInstanceSelector": vmi, "namespaceSelector": ns}, "allowPostCopy": true}}))
        .unwrap()
    }

    fn vmi() -> VirtualMachineInstance {
        serde_json::from_value(json!({"metadata": {"name": "db", "namespace": "prod",
            "labels": {"workload": "database", "tier": "gold"}}}))
        .unwrap()
    }

    fn ns() -> Namespace {
        serde_json::from_value(json!({"metadata": {"name": "prod", "labels": {"env": "prod"}}}))
            .unwrap()
    }

    #[test]
    fn highest_score_wins() {
        let policies = [
            policy("a-one", json!({"workload": "database"}), json!({})),
            policy(
                "b-two",
                json!({"workload": "database", "tier": "gold"}),
                json!({}),
            ),
        ];
        assert_eq!(
            matching_policy(&vmi(), Some(&ns()), &policies)
                .unwrap()
                .name,
            "b-two"
        );
    }

    #[test]
    fn ties_prefer_vmi_labels_then_the_smallest_name() {
        let policies = [
            policy("z-vmi", json!({"workload": "database"}), json!({})),
            policy("a-ns", json!({}), json!({"env": "prod"})),
        ];
        assert_eq!(
            matching_policy(&vmi(), Some(&ns()), &policies)
                .unwrap()
                .name,
            "z-vmi"
        );
        let policies = [
            policy("z", json!({"workload": "database"}), json!({})),
            policy("m", json!({"tier": "gold"}), json!({})),
        ];
        assert_eq!(
            matching_policy(&vmi(), Some(&ns()), &policies)
                .unwrap()
                .name,
            "m"
        );
    }

    #[test]
    fn every_key_must_match_and_nil_selectors_never_match() {
        let policies = [
            policy(
                "partial",
                json!({"workload": "database", "missing": "x"}),
                json!({}),
            ),
            serde_json::from_value(json!({"metadata": {"name": "nil"}, "spec": {}})).unwrap(),
        ];
        assert_eq!(matching_policy(&vmi(), Some(&ns()), &policies), None);
    }

    #[test]
    fn policy_overrides_cluster_config() {
        let p = policy("p", json!({"workload": "database"}), json!({}));
        let eff = effective_config(None, Some(&p));
        assert!(eff.allow_post_copy && eff.allow_workload_disruption);
        assert!(!effective_config(None, None).allow_post_copy);
    }
}
