//! Pre-flight of one manual migration, and the temporary MigrationPolicy that carries
//! `--allow-postcopy` / `--allow-auto-converge`. Pure: objects in, a verdict out.
//!
//! The per-VMI checks are plan-drain's (`plan_drain` over the source node, restricted to this
//! VMI): migratability, a migration already in flight, a feasible target with its free
//! memory, and quota headroom for the second launcher pod. A manual migration ignores the
//! eviction strategy, so the VMI is planned as if it said `LiveMigrate`; `--node-selector` is
//! added to the VMI's own node selector, as KubeVirt adds `addedNodeSelector` to the target
//! pod's.

use std::collections::BTreeMap;

use serde::Serialize;

use super::drain::{Action, DrainInputs, VmiPlan, plan_drain, vmi_node};
use super::migration_policy::{PolicyMatch, matching_policy};
use crate::model::kubevirt::{MigrationPolicySpec, PolicySelectors};
use crate::model::vmi::VmiPhase;
use crate::model::{
    EvictionStrategy, KubeVirt, MigrationPolicy, Namespace, Node, ObjectMeta, Pod, ResourceQuota,
    VirtualMachineInstance, VirtualMachineInstanceMigration,
};

/// What the pre-flight reads about one VMI.
#[derive(Debug, Default)]
pub struct PreflightInputs {
    pub vmi: VirtualMachineInstance,
    /// The VMI's migrations (an unfinished one blocks a new migration).
    pub vmims: Vec<VirtualMachineInstanceMigration>,
    pub nodes: Vec<Node>,
    /// Pods of the cluster: node capacity and the VMI's launcher pod.
    pub pods: Vec<Pod>,
    pub quotas: Vec<ResourceQuota>,
    pub namespace: Option<Namespace>,
    pub kubevirt: Option<KubeVirt>,
    pub policies: Vec<MigrationPolicy>,
    /// `--node-selector`.
    pub added_node_selector: BTreeMap<String, String>,
    /// The as-of clock: how long a migration in flight has run.
    pub now: Option<crate::model::Time>,
}

/// The verdict: go, with the predicted target, or refused with the reason.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preflight {
    pub ok: bool,
    /// `not-running`, `not-migratable`, `migration-in-flight`, `no-feasible-target`, `quota`.
    pub refusal: Option<String>,
    /// In plain words: why it is refused, or where it will go.
    pub explanation: String,
    pub fix: Option<String>,
    /// The predicted target (the scheduler makes the final choice).
    pub target: Option<String>,
    pub source: Option<String>,
    /// The completion budget with the policy that applies now.
    pub budget_seconds: Option<u64>,
    /// The plan-drain row it was decided from, when the VMI is running.
    pub plan: Option<VmiPlan>,
}

fn refused(refusal: &str, explanation: String, fix: Option<String>) -> Preflight {
    Preflight {
        ok: false,
        refusal: Some(refusal.to_string()),
        explanation,
        fix,
        target: None,
        source: None,
        budget_seconds: None,
        plan: None,
    }
}

/// Can this VMI be migrated now, and where would it go?
pub fn preflight(inputs: &PreflightInputs) -> Preflight {
    let vmi = &inputs.vmi;
    let phase = vmi.status.phase.clone().unwrap_or(VmiPhase::Unset);
    if phase != VmiPhase::Running {
        return refused(
            "not-running",
            format!(
                "the VMI is {}, not Running: only a running VMI can live-migrate",
                if phase.as_str().is_empty() {
                    "not started"
                } else {
                    phase.as_str()
                }
            ),
            None,
        );
    }
    let source = vmi_node(vmi);
    let mut planned = vmi.clone();
    // A manual migration ignores the eviction strategy.
    planned.spec.eviction_strategy = Some(EvictionStrategy::LiveMigrate);
    for (k, v) in &inputs.added_node_selector {
        planned.spec.node_selector.insert(k.clone(), v.clone());
    }
    let drain_inputs = DrainInputs {
        drain: vec![source.clone()],
        vmis: vec![planned],
        vmims: inputs.vmims.clone(),
        nodes: inputs.nodes.clone(),
        pods: inputs.pods.clone(),
        quotas: inputs.quotas.clone(),
        namespaces: inputs.namespace.clone().into_iter().collect(),
        kubevirt: inputs.kubevirt.clone(),
        policies: inputs.policies.clone(),
        now: inputs.now.clone(),
        ..DrainInputs::default()
    };
    let plan = plan_drain(&drain_inputs);
    let Some(row) = plan.vmis.into_iter().next() else {
        return refused(
            "not-running",
            "the VMI has no running pod to migrate from".into(),
            None,
        );
    };
    let first_reason = row.reasons.first().map(|r| r.reason.as_str());
    let refusal = match row.action {
        Action::LiveMigrate => None,
        Action::AlreadyMigrating => Some("migration-in-flight"),
        Action::NoTarget => Some("no-feasible-target"),
        Action::BlocksDrain if first_reason == Some("migrationRejectedByResourceQuota") => {
            Some("quota")
        }
        _ => Some("not-migratable"),
    };
    // A migration in flight that is also held by quota or has no target is still, first of
    // all, a migration in flight.
    let in_flight = inputs
        .vmims
        .iter()
        .find(|m| m.spec.vmi_name == vmi.name() && !m.is_final());
    let refusal = match (refusal, in_flight) {
        (Some(_), Some(_)) => Some("migration-in-flight"),
        (r, _) => r,
    };
    let explanation = match (refusal, in_flight) {
        (Some("migration-in-flight"), Some(m)) if row.action != Action::AlreadyMigrating => {
            format!(
                "migration {} is already in flight (phase {}): {}",
                m.name(),
                m.phase(),
                row.explanation
            )
        }
        (Some("not-migratable"), _) => {
            let why = row
                .reasons
                .first()
                .map(|r| format!("{}: {}", r.reason, r.message))
                .unwrap_or_else(|| "not live-migratable".into());
            format!("not live-migratable ({why}); KubeVirt would refuse the migration")
        }
        // The plan's words are a drain's; here no drain is involved.
        (Some("migration-in-flight"), _) => {
            let words = row
                .explanation
                .strip_suffix(crate::policy::drain::feasibility::DRAIN_WAITS)
                .unwrap_or(&row.explanation);
            format!("{words}; another migration of it is refused until this one ends")
        }
        // A drain's words end in what its eviction meets; a migration evicts nothing.
        (Some("no-feasible-target"), _) => match row
            .explanation
            .strip_suffix(crate::policy::drain::NO_TARGET_REFUSES_EVICTION)
        {
            Some(words) => format!(
                "{words}; the target pod would stay Pending until KubeVirt fails the migration"
            ),
            None => row.explanation.clone(),
        },
        (Some("quota"), _) => match row
            .explanation
            .strip_suffix(crate::policy::drain::QUOTA_REFUSES_EVICTION)
        {
            Some(words) => format!(
                "{words}; the migration would stay Pending (KubeVirt retries it) until the quota has room"
            ),
            None => row.explanation.clone(),
        },
        _ => row.explanation.clone(),
    };
    Preflight {
        ok: refusal.is_none(),
        refusal: refusal.map(str::to_string),
        explanation,
        fix: row.fix.clone(),
        target: row.target.clone(),
        source: Some(source),
        budget_seconds: row.budget_seconds,
        plan: Some(row),
    }
}

/// The temporary policy and the proof that it wins for this VMI.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TemporaryPolicy {
    pub policy: MigrationPolicy,
    /// The match KubeVirt's rules give with the policy added: this policy, by construction.
    pub wins: PolicyMatch,
    /// The policy that applied before, if any (it loses while the temporary one exists).
    pub displaces: Option<String>,
    /// Why it wins, in words.
    pub proof: String,
}

/// Why no temporary policy can be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyRefusal {
    pub message: String,
    pub fix: String,
}

/// The namespace label every namespace carries since Kubernetes 1.21.
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// Builds a MigrationPolicy that matches only this VMI and wins FACTS §4.1's selection:
///
/// - its VMI selector is **every** label of the VMI and its namespace selector **every**
///   label of the namespace, so no policy can score higher (a score counts matching labels,
///   and no policy can match labels the VMI and namespace do not have), and none can have
///   more VMI-label matches at the same score;
/// - a tie at that maximum is broken by the lexicographically smallest name: the name is
///   chosen to sort before every existing policy that ties (`vmctl-…`, else `0-vmctl-…`,
///   else `0-…`), and the result is checked with the same `matching_policy` KubeVirt's rules
///   are implemented by;
/// - `others` (running VMIs whose labels include all of this VMI's, in a namespace the
///   selector also matches) would be matched too: the policy is refused then rather than
///   silently changing their migrations.
///
/// KubeVirt records the policy it applied in `migrationState.migrationPolicyName`, which the
/// caller checks once the migration is handed off.
///
/// When KubeVirt matches: once per migration, at the target pod's hand-off
/// (`pkg/virt-controller/watch/migration/migration.go`, `handleTargetPodHandoff` calls
/// `matchMigrationPolicy` → `resolveMigrationConfig` → `matchPolicy` of `migrationpolicy.go`),
/// on the VMI as it is about to be patched: `handleTargetPodHandoff` has just set
/// [`MIGRATION_TARGET_NODE_LABEL`] to the target pod's node. So that label is never selected
/// on: the value vmctl reads is absent or stale (the previous migration's target, left when
/// the target virt-handler did not clear it: `pkg/virt-handler/migration-target.go`
/// deletes it when it finalises a migration), and at the match it holds the new target,
/// which the scheduler has not chosen yet. A selector with the stale value never matched
/// (the new target is another node). An existing policy that selects that label is checked
/// with each value it names, as the VMI would have it at the hand-off.
pub fn temporary_policy(
    vmi: &VirtualMachineInstance,
    namespace: Option<&Namespace>,
    existing: &[MigrationPolicy],
    others: &[VirtualMachineInstance],
    allow_post_copy: bool,
    allow_auto_converge: bool,
    suffix: &str,
) -> Result<TemporaryPolicy, PolicyRefusal> {
    let mut vmi_labels = vmi.metadata.labels.clone().unwrap_or_default();
    vmi_labels.remove(MIGRATION_TARGET_NODE_LABEL);
    // The VMI as KubeVirt will match it (before its target node is known).
    let mut at_hand_off = vmi.clone();
    at_hand_off.metadata.labels = Some(vmi_labels.clone());
    let vmi = &at_hand_off;
    let ns_labels = namespace
        .and_then(|n| n.metadata.labels.clone())
        .unwrap_or_default();
    if vmi_labels.is_empty() && ns_labels.is_empty() {
        return Err(PolicyRefusal {
            message: "the VMI and its namespace have no labels, so a MigrationPolicy cannot select this VMI alone".into(),
            fix: "give the VM a unique label in spec.template.metadata.labels (it reaches the VMI at its next start), or set allowPostCopy/allowAutoConverge in a MigrationPolicy yourself".into(),
        });
    }
    let clashes: Vec<String> = others
        .iter()
        .filter(|o| !(o.namespace() == vmi.namespace() && o.name() == vmi.name()))
        .filter(|o| {
            let labels = o.metadata.labels.clone().unwrap_or_default();
            vmi_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
        })
        .filter(|o| o.status.phase.as_ref().is_none_or(|p| !p.is_final()))
        .map(|o| format!("{}/{}", o.namespace(), o.name()))
        .collect();
    if !clashes.is_empty() {
        return Err(PolicyRefusal {
            message: format!(
                "a MigrationPolicy selecting every label of {}/{} would also select {} (same labels), and change their migrations while it exists",
                vmi.namespace(),
                vmi.name(),
                clashes.join(", ")
            ),
            fix: "give the VM a label no other VM has (spec.template.metadata.labels, applied at its next start), or set allowPostCopy/allowAutoConverge in a MigrationPolicy yourself".into(),
        });
    }
    let before = matching_policy(vmi, namespace, existing);
    let base = format!(
        "vmctl-{}-{}",
        truncate_name(&format!("{}-{}", vmi.namespace(), vmi.name()), 200),
        suffix
    );
    for name in [base.clone(), format!("0-{base}"), format!("0-{suffix}")] {
        let policy = build_policy(
            &name,
            vmi,
            &vmi_labels,
            &ns_labels,
            allow_post_copy,
            allow_auto_converge,
        );
        let mut all: Vec<MigrationPolicy> = existing.to_vec();
        all.push(policy.clone());
        let wins_at_every_target = target_node_values(existing).iter().all(|node| {
            let mut with_target = vmi.clone();
            with_target
                .metadata
                .labels
                .get_or_insert_with(BTreeMap::new)
                .insert(MIGRATION_TARGET_NODE_LABEL.to_string(), node.clone());
            matching_policy(&with_target, namespace, &all).is_some_and(|m| m.name == name)
        });
        if let Some(wins) =
            matching_policy(vmi, namespace, &all).filter(|m| m.name == name && wins_at_every_target)
        {
            let tied: Vec<&str> = existing
                .iter()
                .filter(|p| {
                    matching_policy(vmi, namespace, std::slice::from_ref(*p)).is_some_and(|m| {
                        (m.score, m.vmi_label_matches) == (wins.score, wins.vmi_label_matches)
                    })
                })
                .map(MigrationPolicy::name)
                .collect();
            let tie_words = if tied.is_empty() {
                "no existing policy reaches that score".to_string()
            } else {
                format!(
                    "{} also reach it, and \"{name}\" sorts before them",
                    tied.join(", ")
                )
            };
            let proof = format!(
                "it selects all {} labels of the VMI and all {} of its namespace: score {}, the most any policy can reach (KubeVirt counts matching labels); {tie_words}",
                vmi_labels.len(),
                ns_labels.len(),
                wins.score
            );
            return Ok(TemporaryPolicy {
                policy,
                wins,
                displaces: before.map(|b| b.name),
                proof,
            });
        }
    }
    Err(PolicyRefusal {
        message: "an existing MigrationPolicy matches this VMI at least as closely as any policy vmctl can make (every label of the VMI and its namespace, or the target node KubeVirt labels the VMI with at the hand-off) and its name sorts before any name vmctl can choose".into(),
        fix: "set allowPostCopy/allowAutoConverge on that policy instead".into(),
    })
}

/// The VMI label KubeVirt sets to the target node at the hand-off, just before it matches
/// the MigrationPolicies (see [`temporary_policy`]).
pub const MIGRATION_TARGET_NODE_LABEL: &str = "kubevirt.io/migrationTargetNodeName";

/// The values of [`MIGRATION_TARGET_NODE_LABEL`] the policies select on.
fn target_node_values(policies: &[MigrationPolicy]) -> Vec<String> {
    let mut out: Vec<String> = policies
        .iter()
        .filter_map(|p| {
            p.spec
                .selectors
                .as_ref()?
                .virtual_machine_instance_selector
                .as_ref()
        })
        .filter_map(|s| s.get(MIGRATION_TARGET_NODE_LABEL).cloned())
        .collect();
    out.sort();
    out.dedup();
    out
}

fn truncate_name(text: &str, max: usize) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(max)
        .collect();
    cleaned.trim_end_matches('-').to_string()
}

fn build_policy(
    name: &str,
    vmi: &VirtualMachineInstance,
    vmi_labels: &BTreeMap<String, String>,
    ns_labels: &BTreeMap<String, String>,
    allow_post_copy: bool,
    allow_auto_converge: bool,
) -> MigrationPolicy {
    let mut labels = BTreeMap::new();
    labels.insert(
        crate::migration::kubevirt::MANAGED_BY_LABEL.to_string(),
        crate::migration::kubevirt::MANAGED_BY_VALUE.to_string(),
    );
    labels.insert(
        crate::migration::kubevirt::POLICY_FOR_LABEL.to_string(),
        truncate_name(&format!("{}.{}", vmi.namespace(), vmi.name()), 63),
    );
    let mut annotations = BTreeMap::new();
    annotations.insert(
        crate::migration::kubevirt::POLICY_FOR_ANNOTATION.to_string(),
        format!("{}/{}", vmi.namespace(), vmi.name()),
    );
    annotations.insert(
        "vmctl.io/purpose".to_string(),
        format!(
            "temporary policy for one migration of {}/{}; vmctl deletes it when the migration ends",
            vmi.namespace(),
            vmi.name()
        ),
    );
    MigrationPolicy {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(labels),
            annotations: Some(annotations),
            ..ObjectMeta::default()
        },
        spec: MigrationPolicySpec {
            selectors: Some(PolicySelectors {
                namespace_selector: (!ns_labels.is_empty()).then(|| ns_labels.clone()),
                virtual_machine_instance_selector: (!vmi_labels.is_empty())
                    .then(|| vmi_labels.clone()),
            }),
            allow_post_copy: allow_post_copy.then_some(true),
            allow_auto_converge: allow_auto_converge.then_some(true),
            ..MigrationPolicySpec::default()
        },
    }
}

/// A temporary MigrationPolicy vmctl made that outlived the migration it was made for
/// (vmctl was killed, or its delete failed): it still changes the migrations of every VMI
/// it selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftoverPolicy {
    pub name: String,
    /// `namespace/name` of the VMI it was made for, when the policy says.
    pub vmi: Option<String>,
    /// `None` when the policy has no creationTimestamp (a hand-written file): it is judged
    /// anyway, without the grace a fresh one gets.
    pub age_seconds: Option<i64>,
    /// What it allows: `post-copy`, `auto-converge`.
    pub allows: Vec<&'static str>,
}

/// Seconds between creating a temporary policy and its VMIM: younger policies are not
/// judged (their migration may not exist yet).
const POLICY_GRACE_SECONDS: i64 = 120;

/// vmctl's temporary policies whose migration is over or gone: no VMIM in flight names the
/// policy (`vmctl.io/temporary-migration-policy`). With `namespace`, only the VMIMs of that
/// namespace are known, so only the policies made for a VMI there are judged.
pub fn leftover_temporary_policies(
    policies: &[MigrationPolicy],
    vmims: &[VirtualMachineInstanceMigration],
    now: k8s_openapi::jiff::Timestamp,
    namespace: Option<&str>,
) -> Vec<LeftoverPolicy> {
    use crate::migration::kubevirt::{
        MANAGED_BY_LABEL, MANAGED_BY_VALUE, POLICY_ANNOTATION, POLICY_FOR_ANNOTATION,
    };
    let in_use: std::collections::HashSet<&str> = vmims
        .iter()
        .filter(|m| !m.is_final())
        .filter_map(|m| {
            m.metadata
                .annotations
                .as_ref()?
                .get(POLICY_ANNOTATION)
                .map(String::as_str)
        })
        .collect();
    policies
        .iter()
        .filter(|p| {
            p.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(MANAGED_BY_LABEL))
                .is_some_and(|v| v == MANAGED_BY_VALUE)
        })
        .filter_map(|p| {
            let name = p.name();
            let vmi = p
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(POLICY_FOR_ANNOTATION))
                .cloned();
            if let Some(ns) = namespace {
                let here = vmi
                    .as_deref()
                    .and_then(|v| v.split_once('/'))
                    .map(|(n, _)| n);
                if here != Some(ns) {
                    return None;
                }
            }
            let age_seconds = p
                .metadata
                .creation_timestamp
                .as_ref()
                .map(|created| now.as_second() - created.0.as_second());
            if age_seconds.is_some_and(|a| a < POLICY_GRACE_SECONDS) || in_use.contains(name) {
                return None;
            }
            let mut allows = Vec::new();
            if p.spec.allow_post_copy == Some(true) {
                allows.push("post-copy");
            }
            if p.spec.allow_auto_converge == Some(true) {
                allows.push("auto-converge");
            }
            Some(LeftoverPolicy {
                name: name.to_string(),
                vmi,
                age_seconds,
                allows,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vmi(name: &str, labels: serde_json::Value) -> VirtualMachineInstance {
        serde_json::from_value(
            json!({"metadata": {"name": name, "namespace": "prod", "uid": format!("uid-{name}"),
            "labels": labels},
            "spec": {"domain": {"memory": {"guest": "2Gi"}}},
            "status": {"nodeName": "node-1", "phase": "Running",
                "conditions": [{"type": "LiveMigratable", "status": "True"}]}}),
        )
        .unwrap()
    }

    fn ns() -> Namespace {
        serde_json::from_value(json!({"metadata": {"name": "prod",
            "labels": {"kubernetes.io/metadata.name": "prod", "env": "prod"}}}))
        .unwrap()
    }

    fn policy(
        name: &str,
        vmi_sel: serde_json::Value,
        ns_sel: serde_json::Value,
    ) -> MigrationPolicy {
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"selectors": {
            "virtualMachineInstanceSelector": vmi_sel, "namespaceSelector": ns_sel}}}))
        .unwrap()
    }

    fn node(name: &str) -> Node {
        serde_json::from_value(
            json!({"metadata": {"name": name, "labels": {"kubevirt.io/schedulable": "true"}},
            "spec": {}, "status": {"allocatable": {"memory": "64Gi"},
            "conditions": [{"type": "Ready", "status": "True"}]}}),
        )
        .unwrap()
    }

    #[test]
    fn the_temporary_policy_beats_a_policy_that_matches_everything_too() {
        let db = vmi("db", json!({"app": "db", "kubevirt.io/nodeName": "node-1"}));
        // Ties on score and VMI matches, and its name "a-…" sorts before "vmctl-…".
        let rival = policy(
            "a-everything",
            json!({"app": "db", "kubevirt.io/nodeName": "node-1"}),
            json!({"kubernetes.io/metadata.name": "prod", "env": "prod"}),
        );
        let weaker = policy("aa", json!({"app": "db"}), json!({}));
        let t =
            temporary_policy(&db, Some(&ns()), &[rival, weaker], &[], true, false, "x1").unwrap();
        assert!(t.policy.name().starts_with("0-"), "{}", t.policy.name());
        assert_eq!(t.wins.score, 4);
        assert_eq!(t.displaces.as_deref(), Some("a-everything"));
        assert!(t.proof.contains("a-everything"), "{}", t.proof);
        assert_eq!(t.policy.spec.allow_post_copy, Some(true));
        assert_eq!(t.policy.spec.allow_auto_converge, None);
    }

    /// KubeVirt matches at the hand-off, after setting migrationTargetNodeName to the new
    /// target (`handleTargetPodHandoff`): a stale value left by the previous migration must
    /// not be selected on, and a policy selecting the label is weighed at its value.
    #[test]
    fn the_target_node_label_kubevirt_sets_at_the_hand_off_is_not_selected_on() {
        let db = vmi(
            "db",
            json!({"app": "db", MIGRATION_TARGET_NODE_LABEL: "node-1"}),
        );
        let t = temporary_policy(&db, Some(&ns()), &[], &[], true, false, "x1").unwrap();
        let selector = t
            .policy
            .spec
            .selectors
            .as_ref()
            .and_then(|s| s.virtual_machine_instance_selector.clone())
            .unwrap_or_default();
        assert_eq!(
            selector,
            BTreeMap::from([("app".to_string(), "db".to_string())])
        );
        // As KubeVirt sees the VMI at the hand-off to node-2, the policy matches.
        let mut at_hand_off = db.clone();
        at_hand_off
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(MIGRATION_TARGET_NODE_LABEL.into(), "node-2".into());
        let matched = matching_policy(&at_hand_off, Some(&ns()), std::slice::from_ref(&t.policy));
        assert_eq!(matched.map(|m| m.name), Some(t.policy.name().to_string()));
        // A policy for migrations into node-3 would beat it there: refused, not a surprise.
        let into_3 = policy(
            "0",
            json!({"app": "db", MIGRATION_TARGET_NODE_LABEL: "node-3"}),
            json!({"kubernetes.io/metadata.name": "prod", "env": "prod"}),
        );
        assert!(temporary_policy(&db, Some(&ns()), &[into_3], &[], true, false, "x1").is_err());
    }

    #[test]
    fn no_rival_keeps_the_plain_name() {
        let db = vmi("db", json!({"app": "db"}));
        let t = temporary_policy(&db, Some(&ns()), &[], &[], false, true, "x1").unwrap();
        assert_eq!(t.policy.name(), "vmctl-prod-db-x1");
        assert_eq!(t.displaces, None);
    }

    #[test]
    fn refuses_when_another_vmi_would_match() {
        let db = vmi("db", json!({"app": "db"}));
        let twin = vmi("db-2", json!({"app": "db", "extra": "1"}));
        let err = temporary_policy(&db, Some(&ns()), &[], &[db.clone(), twin], true, false, "x")
            .unwrap_err();
        assert!(err.message.contains("prod/db-2"), "{}", err.message);
    }

    #[test]
    fn preflight_refuses_in_plain_words() {
        let mut inputs = PreflightInputs {
            vmi: vmi("db", json!({"app": "db"})),
            nodes: vec![node("node-1"), node("node-2")],
            ..PreflightInputs::default()
        };
        let ok = preflight(&inputs);
        assert!(ok.ok, "{}", ok.explanation);
        assert_eq!(ok.target.as_deref(), Some("node-2"));

        inputs.added_node_selector.insert("zone".into(), "b".into());
        let none = preflight(&inputs);
        assert_eq!(
            none.refusal.as_deref(),
            Some("no-feasible-target"),
            "{}",
            none.explanation
        );
        inputs.added_node_selector.clear();

        inputs.vmims = vec![
            serde_json::from_value(
                json!({"metadata": {"name": "m1", "namespace": "prod", "uid": "m"},
            "spec": {"vmiName": "db"}, "status": {"phase": "Scheduling"}}),
            )
            .unwrap(),
        ];
        let busy = preflight(&inputs);
        assert_eq!(busy.refusal.as_deref(), Some("migration-in-flight"));
        assert!(busy.explanation.contains("m1"), "{}", busy.explanation);
        // No drain is involved in a migrate: no word of one.
        assert!(!busy.explanation.contains("drain"), "{}", busy.explanation);
        inputs.vmims.clear();

        inputs.vmi.status.conditions[0] = serde_json::from_value(json!({"type": "LiveMigratable",
            "status": "False", "reason": "DisksNotLiveMigratable", "message": "cannot migrate VMI: PVC x is not shared"}))
        .unwrap();
        let stuck = preflight(&inputs);
        assert_eq!(stuck.refusal.as_deref(), Some("not-migratable"));
        assert!(
            stuck.explanation.contains("DisksNotLiveMigratable"),
            "{}",
            stuck.explanation
        );

        inputs.vmi.status.phase = Some(VmiPhase::Succeeded);
        assert_eq!(preflight(&inputs).refusal.as_deref(), Some("not-running"));
    }

    #[test]
    fn a_temporary_policy_is_leftover_once_no_migration_in_flight_names_it() {
        let policy = |name: &str, ns: &str, created: &str| -> MigrationPolicy {
            serde_json::from_value(json!({"metadata": {"name": name,
                "creationTimestamp": created,
                "labels": {"app.kubernetes.io/managed-by": "vmctl"},
                "annotations": {"vmctl.io/migration-of": format!("{ns}/db")}},
                "spec": {"allowPostCopy": true}}))
            .unwrap()
        };
        let vmim = |name: &str, phase: &str, policy: &str| -> VirtualMachineInstanceMigration {
            serde_json::from_value(json!({"metadata": {"name": name, "namespace": "prod",
                "annotations": {"vmctl.io/temporary-migration-policy": policy}},
                "spec": {"vmiName": "db"}, "status": {"phase": phase}}))
            .unwrap()
        };
        let now: k8s_openapi::jiff::Timestamp = "2026-11-29T03:00:00Z".parse().unwrap();
        let mut not_vmctl = policy("theirs", "prod", "2026-11-28T03:00:00Z");
        not_vmctl.metadata.labels = None;
        let mut undated = policy("undated", "dev", "2026-11-29T01:00:00Z");
        undated.metadata.creation_timestamp = None;
        let policies = vec![
            policy("in-use", "prod", "2026-11-29T02:00:00Z"),
            policy("done", "prod", "2026-11-29T02:00:00Z"),
            policy("fresh", "prod", "2026-11-29T02:59:30Z"),
            policy("elsewhere", "dev", "2026-11-29T01:00:00Z"),
            not_vmctl,
            undated,
        ];
        let vmims = vec![
            vmim("m1", "Running", "in-use"),
            vmim("m2", "Succeeded", "done"),
        ];
        let names = |ns| {
            leftover_temporary_policies(&policies, &vmims, now, ns)
                .into_iter()
                .map(|l| (l.name, l.vmi, l.age_seconds, l.allows))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(Some("prod")),
            vec![(
                "done".into(),
                Some("prod/db".into()),
                Some(3600),
                vec!["post-copy"]
            )]
        );
        assert_eq!(
            names(None)
                .iter()
                .map(|l| (l.0.as_str(), l.2))
                .collect::<Vec<_>>(),
            // Without a creation time there is no grace to give: judged all the same.
            vec![
                ("done", Some(3600)),
                ("elsewhere", Some(7200)),
                ("undated", None)
            ]
        );
    }
}
