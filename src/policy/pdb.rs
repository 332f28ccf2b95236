//! PodDisruptionBudgets as Kubernetes (policy/v1) reads them: which pods a PDB selects, how
//! many disruptions it allows, and what the eviction API answers for one pod (FACTS §12;
//! kubernetes `pkg/registry/core/pod/storage/eviction.go` and
//! `pkg/controller/disruption/disruption.go`). Pure: plain objects in, plain answers out.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as ApiLabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::Serialize;

use super::index::work;
use super::label_selector::CompiledSelector;
use super::pods::{LAUNCHER_LABEL, LAUNCHER_VALUE, pod_labels};
use crate::model::{Pod, PodDisruptionBudget};

/// What `spec.selector` selects, as `metav1.LabelSelectorAsSelector` reads it (null: nothing;
/// `{}`: every pod of the PDB's namespace, policy/v1; invalid: the eviction API skips the PDB,
/// "This object has an invalid selector, it does not match the pod", so it protects nothing).
pub type PdbSelector = CompiledSelector;

impl PdbSelector {
    /// Reads `spec.selector` exactly as the eviction API does (the reason of an invalid one
    /// names the field).
    pub fn of(pdb: &PodDisruptionBudget) -> PdbSelector {
        CompiledSelector::compile(
            pdb.spec.as_ref().and_then(|s| s.selector.as_ref()),
            "spec.selector",
        )
    }

    pub fn parse(s: &ApiLabelSelector) -> PdbSelector {
        CompiledSelector::compile(Some(s), "spec.selector")
    }
}

fn pdb_namespace(pdb: &PodDisruptionBudget) -> &str {
    pdb.metadata.namespace.as_deref().unwrap_or("")
}

/// PDBs indexed so that finding the ones that select a pod costs the pod's labels, not the
/// number of PDBs. A selector is filed under something every pod it selects must have: its
/// first matchLabel (namespace, key, value); else its first `In` expression, under each of
/// its values; else its first `Exists` expression (namespace, key). Only `selector: {}` and
/// selectors made of NotIn/DoesNotExist alone go in the namespace-wide bucket.
#[derive(Debug, Default)]
pub struct PdbIndex<'a> {
    pub selectors: Vec<PdbSelector>,
    by_label: HashMap<(&'a str, &'a str, &'a str), Vec<usize>>,
    by_key: HashMap<(&'a str, &'a str), Vec<usize>>,
    by_namespace: HashMap<&'a str, Vec<usize>>,
    /// PDBs that select nothing (null or invalid selector), by namespace: reported, never matched.
    inert: HashMap<&'a str, Vec<usize>>,
}

impl<'a> PdbIndex<'a> {
    /// The PDBs as the disruption controller reads them (`selector: {}` selects the whole
    /// namespace on every version).
    pub fn new(pdbs: &'a [PodDisruptionBudget]) -> Self {
        Self::build(pdbs, true)
    }

    /// The PDBs as the eviction API of a server that does (`true`) or does not honour
    /// `selector: {}` reads them ([`empty_selector_at_eviction`]): where it is ignored, an
    /// empty selector selects nothing at eviction and the PDB is filed as inert.
    pub fn for_eviction(pdbs: &'a [PodDisruptionBudget], honours_empty: bool) -> Self {
        Self::build(pdbs, honours_empty)
    }

    fn build(pdbs: &'a [PodDisruptionBudget], honours_empty: bool) -> Self {
        let mut index = PdbIndex::default();
        for (i, pdb) in pdbs.iter().enumerate() {
            work::step(1);
            let selector = PdbSelector::of(pdb);
            let ns = pdb_namespace(pdb);
            let api = pdb.spec.as_ref().and_then(|s| s.selector.as_ref());
            let first_label = api
                .and_then(|s| s.match_labels.as_ref())
                .and_then(|m| m.iter().next());
            let expressions = api
                .and_then(|s| s.match_expressions.as_deref())
                .unwrap_or(&[]);
            let first_in = expressions.iter().find(|e| e.operator == "In");
            let first_exists = expressions.iter().find(|e| e.operator == "Exists");
            match (&selector, first_label, first_in, first_exists) {
                (PdbSelector::Nothing | PdbSelector::Invalid(_), ..) => {
                    index.inert.entry(ns).or_default().push(i)
                }
                (PdbSelector::Everything, ..) if !honours_empty => {
                    index.inert.entry(ns).or_default().push(i)
                }
                (PdbSelector::Labels(_), Some((k, v)), ..) => index
                    .by_label
                    .entry((ns, k.as_str(), v.as_str()))
                    .or_default()
                    .push(i),
                (PdbSelector::Labels(_), None, Some(e), _) => {
                    for v in e.values.as_deref().unwrap_or(&[]) {
                        work::step(1);
                        let bucket = index
                            .by_label
                            .entry((ns, e.key.as_str(), v.as_str()))
                            .or_default();
                        if bucket.last() != Some(&i) {
                            bucket.push(i);
                        }
                    }
                }
                (PdbSelector::Labels(_), None, None, Some(e)) => index
                    .by_key
                    .entry((ns, e.key.as_str()))
                    .or_default()
                    .push(i),
                _ => index.by_namespace.entry(ns).or_default().push(i),
            }
            index.selectors.push(selector);
        }
        index
    }

    /// The PDBs (positions in the input) that select `pod`, in input order.
    pub fn matching(&self, pod: &Pod) -> Vec<usize> {
        let ns = pod.metadata.namespace.as_deref().unwrap_or("");
        let labels = pod_labels(pod);
        let indexed = labels
            .iter()
            .filter_map(|(k, v)| self.by_label.get(&(ns, k.as_str(), v.as_str())))
            .flatten();
        let by_key = labels
            .keys()
            .filter_map(|k| self.by_key.get(&(ns, k.as_str())))
            .flatten();
        let wide = self.by_namespace.get(ns).into_iter().flatten();
        let mut hits: Vec<usize> = Vec::new();
        for &i in indexed.chain(by_key).chain(wide) {
            work::step(1);
            if !hits.contains(&i) && self.selectors[i].matches(labels) {
                hits.push(i);
            }
        }
        hits.sort_unstable();
        hits
    }

    /// The PDBs of `namespace` that select nothing (null or invalid selector).
    pub fn inert_in(&self, namespace: &str) -> &[usize] {
        work::step(1);
        self.inert.get(namespace).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// What the eviction API does with `selector: {}` (kubernetes#119731). Before the fix
/// (kubernetes#119732, released in 1.29.0 and cherry-picked into 1.28.3 by #121131 and into
/// 1.27.7 by #121132) `getPodDisruptionBudgets` in `pkg/registry/core/pod/storage/eviction.go`
/// skipped it ("If a PDB with a nil or empty selector creeps in, it should match nothing, not
/// everything"); since then `metav1.LabelSelectorAsSelector({})` selects every pod of the
/// namespace there too, as the disruption controller has counted it since policy/v1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EmptySelector {
    /// The server evicts through it: it protects the whole namespace.
    Honoured,
    /// The server ignores it at eviction: it protects nothing during a drain.
    Ignored,
    /// The version is unknown (offline, or only a lower bound below 1.29): the plan assumes
    /// it is honoured and says for which versions that holds.
    Unknown,
}

/// The versions the two readings of `selector: {}` hold for, in words.
pub const EMPTY_SELECTOR_VERSIONS: &str = "the eviction API honours selector {} from Kubernetes 1.29.0, 1.28.3 and 1.27.7 and ignores it in earlier releases (kubernetes#119732, #121131, #121132)";

/// How the eviction API of `version` reads `selector: {}`.
pub fn empty_selector_at_eviction(version: Option<&crate::model::ServerVersion>) -> EmptySelector {
    let Some((major, minor, patch)) = version.and_then(|v| v.numbers()) else {
        return EmptySelector::Unknown;
    };
    let fixed = (major, minor) >= (1, 29)
        || ((major, minor) == (1, 28) && patch >= 3)
        || ((major, minor) == (1, 27) && patch >= 7);
    match (fixed, version.is_some_and(|v| v.at_least())) {
        (true, _) => EmptySelector::Honoured,
        // A lower bound below the fix says nothing about the server itself.
        (false, true) => EmptySelector::Unknown,
        (false, false) => EmptySelector::Ignored,
    }
}

impl EmptySelector {
    /// The index reads `{}` as the whole namespace unless the server is known to ignore it.
    pub fn honoured_or_assumed(self) -> bool {
        self != EmptySelector::Ignored
    }

    /// What is said of a `selector: {}` PDB on this server (`version` as read).
    pub fn note(self, version: Option<&crate::model::ServerVersion>) -> String {
        let read = version
            .map(|v| format!("API server {}", v.describe()))
            .unwrap_or_else(|| "API server version unknown".into());
        match self {
            EmptySelector::Honoured => format!(
                "selector {{}} selects every pod of its namespace, at eviction too ({read}; {EMPTY_SELECTOR_VERSIONS})"
            ),
            EmptySelector::Ignored => format!(
                "selector {{}}: the disruption controller counts every pod of the namespace, but this API server's eviction API ignores an empty selector ({read}; {EMPTY_SELECTOR_VERSIONS}), so it protects nothing during a drain"
            ),
            EmptySelector::Unknown => format!(
                "selector {{}} selects every pod of its namespace: this holds for Kubernetes 1.29.0+, 1.28.3+ and 1.27.7+; older API servers ignore an empty selector when evicting, and there it would protect nothing ({read}; kubernetes#119732, #121131, #121132)"
            ),
        }
    }
}

/// Where a budget's numbers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BudgetSource {
    /// `status`, as the disruption controller last wrote it.
    Status,
    /// No status: computed here as the disruption controller would.
    Computed,
}

/// A PDB's disruption budget: the numbers the eviction API checks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    pub disruptions_allowed: i32,
    pub current_healthy: i32,
    pub desired_healthy: i32,
    pub expected_pods: i32,
    pub source: BudgetSource,
    /// The controller could not compute the budget (condition DisruptionAllowed=False,
    /// reason SyncFailed): its message. It then allows 0 disruptions.
    pub sync_failed: Option<String>,
    /// `(status.observedGeneration, metadata.generation)` when the status is older than the
    /// spec: the eviction API answers 429 until the controller catches up.
    pub stale: Option<(i64, i64)>,
    /// With a stale status: `(currentHealthy, desiredHealthy)` as that status says; the
    /// eviction API still reads them for a pod that is not Ready.
    pub status_healthy: Option<(i32, i32)>,
    /// Entries in `status.disruptedPods` (over 2000: evictions are refused, 403).
    pub disrupted_pods: usize,
    /// Computed from only the pods the plan saw, or from an estimate of a controller's
    /// scale: the real figure may be higher.
    pub estimated: bool,
    /// What the numbers rest on, in words.
    pub note: Option<String>,
}

/// The controller of a pod (its ownerReference with `controller: true`).
fn controller_kind(pod: &Pod) -> Option<(&str, &str)> {
    let refs = pod.metadata.owner_references.as_deref().unwrap_or(&[]);
    if let Some(r) = refs.iter().find(|r| r.controller == Some(true)) {
        return Some((r.api_version.as_str(), r.kind.as_str()));
    }
    // KubeVirt always makes the VMI the controller of its launcher pods; a snapshot that
    // dropped ownerReferences still says what the pod is.
    (refs.is_empty()
        && pod_labels(pod).get(LAUNCHER_LABEL).map(String::as_str) == Some(LAUNCHER_VALUE))
    .then_some(("kubevirt.io/v1", "VirtualMachineInstance"))
}

/// The resource of controller kinds known to have no `/scale` subresource.
fn without_scale(api_version: &str, kind: &str) -> Option<&'static str> {
    let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
    match (group, kind) {
        ("kubevirt.io", "VirtualMachineInstance") => Some("virtualmachineinstances.kubevirt.io"),
        ("batch", "Job") => Some("jobs.batch"),
        ("apps", "DaemonSet") => Some("daemonsets.apps"),
        _ => None,
    }
}

pub fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
        .is_some_and(|c| c.status == "True")
}

fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

/// `intstr.GetScaledValueFromIntOrPercent(v, total, roundUp=true)`.
fn scaled(v: &IntOrString, total: i32) -> Result<i32, String> {
    match v {
        IntOrString::Int(i) => Ok(*i),
        IntOrString::String(s) => {
            let Some(number) = s.strip_suffix('%') else {
                return Err(
                    "invalid value for IntOrString: invalid type: string is not a percentage"
                        .into(),
                );
            };
            let pct: i64 = number.parse().map_err(|_| {
                format!("invalid value for IntOrString: invalid value for percentage {s:?}")
            })?;
            Ok((pct * i64::from(total)).div_euclid(100) as i32
                + i32::from((pct * i64::from(total)).rem_euclid(100) != 0))
        }
    }
}

fn show(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// The PDB's budget: its status when the controller has written one, else computed from
/// `pods` (the pods of its namespace it selects) as the disruption controller does. When
/// the status is stale the computed figure says what it will become.
pub fn budget(pdb: &PodDisruptionBudget, pods: &[&Pod], pods_complete: bool) -> Budget {
    let status = pdb.status.as_ref();
    let generation = pdb.metadata.generation.unwrap_or(0);
    let observed = status.and_then(|s| s.observed_generation).unwrap_or(0);
    let stale = (status.is_some() && observed < generation).then_some((observed, generation));
    if let Some(s) = status.filter(|s| s.disruptions_allowed.is_some())
        && stale.is_none()
    {
        let sync_failed = sync_failed_condition(s);
        return Budget {
            disruptions_allowed: s.disruptions_allowed.unwrap_or(0),
            current_healthy: s.current_healthy.unwrap_or(0),
            desired_healthy: s.desired_healthy.unwrap_or(0),
            expected_pods: s.expected_pods.unwrap_or(0),
            source: BudgetSource::Status,
            sync_failed,
            stale: None,
            status_healthy: None,
            disrupted_pods: s.disrupted_pods.as_ref().map(BTreeMap::len).unwrap_or(0),
            estimated: false,
            note: None,
        };
    }
    let mut b = computed(pdb, pods, pods_complete);
    b.stale = stale;
    b.status_healthy = stale.and(status).map(|s| {
        (
            s.current_healthy.unwrap_or(0),
            s.desired_healthy.unwrap_or(0),
        )
    });
    if stale.is_some() && b.sync_failed.is_none() {
        // The controller's own word that its last sync failed: `failSafe` wrote it without
        // advancing observedGeneration, so the status stays behind until a sync succeeds.
        b.sync_failed = status.and_then(sync_failed_condition);
    }
    if status.is_none() && generation > 0 && b.sync_failed.is_some() {
        // Never synced, and the sync fails: `failSafe` (pkg/controller/disruption/
        // disruption.go) writes disruptionsAllowed 0 and the SyncFailed condition but leaves
        // status.observedGeneration at 0, so `checkAndDecrement` (pkg/registry/core/pod/
        // storage/eviction.go) answers 429 to every eviction, for good.
        b.stale = Some((0, generation));
        b.status_healthy = Some((0, 0));
    }
    b.disrupted_pods = status
        .and_then(|s| s.disrupted_pods.as_ref())
        .map(BTreeMap::len)
        .unwrap_or(0);
    b
}

/// The message of a `DisruptionAllowed=False` condition with reason `SyncFailed`.
fn sync_failed_condition(
    s: &k8s_openapi::api::policy::v1::PodDisruptionBudgetStatus,
) -> Option<String> {
    s.conditions
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .find(|c| c.type_ == "DisruptionAllowed" && c.status == "False" && c.reason == "SyncFailed")
        .map(|c| c.message.clone())
}

impl Budget {
    /// The status is behind the spec and will stay so: the controller cannot sync it (the
    /// reason). `failSafe` never advances `status.observedGeneration`, so every eviction the
    /// PDB is asked about gets 429 until the spec changes into one that syncs.
    pub fn never_catches_up(&self) -> Option<&str> {
        self.stale.and(self.sync_failed.as_deref())
    }
}

/// `getExpectedPodCount` + `countHealthyPods` + `updatePdbStatus` (disruption.go).
fn computed(pdb: &PodDisruptionBudget, pods: &[&Pod], pods_complete: bool) -> Budget {
    let spec = pdb.spec.as_ref();
    let max_unavailable = spec.and_then(|s| s.max_unavailable.as_ref());
    let min_available = spec.and_then(|s| s.min_available.as_ref());
    let current = pods
        .iter()
        .filter(|p| is_ready(p) && !is_terminating(p))
        .count() as i32;
    let mut b = Budget {
        disruptions_allowed: 0,
        current_healthy: current,
        desired_healthy: 0,
        expected_pods: 0,
        source: BudgetSource::Computed,
        sync_failed: None,
        stale: None,
        status_healthy: None,
        disrupted_pods: 0,
        estimated: false,
        note: None,
    };
    let fail = |mut b: Budget, message: String| {
        b.current_healthy = 0;
        b.sync_failed = Some(message);
        b
    };
    let needs_scale =
        max_unavailable.is_some() || matches!(min_available, Some(IntOrString::String(_)));
    if needs_scale {
        // getExpectedScale: the scale of each pod's controller; a controller without /scale
        // fails the whole sync (SyncFailed, 0 allowed). Pods without a controller are skipped.
        let mut managed = 0;
        for pod in pods {
            match controller_kind(pod) {
                None => {}
                Some((api_version, kind)) => {
                    if let Some(resource) = without_scale(api_version, kind) {
                        return fail(
                            b,
                            format!("{resource} does not implement the scale subresource"),
                        );
                    }
                    managed += 1;
                }
            }
        }
        // Controllers with /scale: their replicas are not read here; at steady state they
        // equal the pods seen.
        b.expected_pods = managed;
        b.estimated = managed > 0;
        let Some(v) = max_unavailable.or(min_available) else {
            return b;
        };
        let value = match scaled(v, managed) {
            Ok(n) => n,
            Err(e) => return fail(b, e),
        };
        b.desired_healthy = if max_unavailable.is_some() {
            (managed - value).max(0)
        } else {
            value
        };
    } else if let Some(IntOrString::Int(n)) = min_available {
        b.expected_pods = pods.len() as i32;
        b.desired_healthy = *n;
        b.estimated = !pods_complete;
    } else {
        b.note = Some(
            "neither minAvailable nor maxUnavailable: the controller expects 0 pods and allows 0 disruptions"
                .into(),
        );
    }
    let allowed = b.current_healthy - b.desired_healthy;
    b.disruptions_allowed = if b.expected_pods <= 0 || allowed <= 0 {
        0
    } else {
        allowed
    };
    if b.note.is_none() {
        b.note = Some(match (max_unavailable, min_available) {
            (Some(v), _) => format!("maxUnavailable {}", show(v)),
            (None, Some(v)) => format!("minAvailable {}", show(v)),
            (None, None) => String::new(),
        });
    }
    b
}

/// A PDB as the eviction check needs it.
#[derive(Debug, Clone)]
pub struct EvaluatedPdb {
    pub name: String,
    pub selects_everything: bool,
    /// `spec.unhealthyPodEvictionPolicy` (unset = IfHealthyBudget).
    pub unhealthy_pod_eviction_policy: Option<String>,
    pub budget: Budget,
}

impl EvaluatedPdb {
    pub fn new(pdb: &PodDisruptionBudget, selector: &PdbSelector, budget: Budget) -> Self {
        EvaluatedPdb {
            name: pdb.metadata.name.clone().unwrap_or_default(),
            selects_everything: *selector == PdbSelector::Everything,
            unhealthy_pod_eviction_policy: pdb
                .spec
                .as_ref()
                .and_then(|s| s.unhealthy_pod_eviction_policy.clone()),
            budget,
        }
    }
}

/// The eviction API's answer for one pod (eviction.go `Create`), once admission (KubeVirt's
/// webhook) has let the eviction through.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "answer", rename_all = "kebab-case")]
pub enum EvictionAnswer {
    /// Pending, Succeeded, Failed or terminating: deleted without looking at PDBs.
    NoPdbCheck { why: String },
    /// No PDB selects the pod.
    NoPdb,
    /// Evicted through the PDB, taking one of its disruptions.
    Allowed {
        pdb: String,
        disruptions_allowed: i32,
    },
    /// Not Ready: evicted without taking a disruption.
    AllowedUnhealthy { pdb: String, why: String },
    /// 429: the PDB's status is older than its spec. Retried until the controller catches
    /// up, which it never does when its sync fails (`never_syncs`, the reason): for good.
    StatusStale {
        pdb: String,
        observed_generation: i64,
        generation: i64,
        #[serde(skip_serializing_if = "Option::is_none")]
        never_syncs: Option<String>,
    },
    /// 429: no disruption allowed.
    NoDisruptionsAllowed {
        pdb: String,
        desired_healthy: i32,
        current_healthy: i32,
    },
    /// 403: negative budget, or too many evictions the controller has not confirmed.
    Forbidden { pdb: String, message: String },
    /// 500: more than one PDB selects the pod; the eviction subresource never evicts it.
    MoreThanOnePdb { pdbs: Vec<String> },
}

pub const MORE_THAN_ONE_PDB: &str = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.";
pub const WOULD_VIOLATE: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

impl EvictionAnswer {
    /// The eviction cannot succeed while things stay as they are.
    pub fn blocks(&self) -> bool {
        matches!(
            self,
            EvictionAnswer::NoDisruptionsAllowed { .. }
                | EvictionAnswer::Forbidden { .. }
                | EvictionAnswer::MoreThanOnePdb { .. }
                | EvictionAnswer::StatusStale {
                    never_syncs: Some(_),
                    ..
                }
        )
    }

    /// The HTTP status of the answer (201 for an eviction that goes through).
    pub fn http_status(&self) -> u16 {
        match self {
            EvictionAnswer::NoPdbCheck { .. }
            | EvictionAnswer::NoPdb
            | EvictionAnswer::Allowed { .. }
            | EvictionAnswer::AllowedUnhealthy { .. } => 201,
            EvictionAnswer::StatusStale { .. } | EvictionAnswer::NoDisruptionsAllowed { .. } => 429,
            EvictionAnswer::Forbidden { .. } => 403,
            EvictionAnswer::MoreThanOnePdb { .. } => 500,
        }
    }

    /// What the API server says, as kubectl drain prints it.
    pub fn api_text(&self) -> String {
        match self {
            EvictionAnswer::NoPdbCheck { why } => format!("evicted without a PDB check ({why})"),
            EvictionAnswer::NoPdb => "evicted (no PodDisruptionBudget selects it)".into(),
            EvictionAnswer::Allowed {
                pdb,
                disruptions_allowed,
            } => format!(
                "evicted: PodDisruptionBudget {pdb} allows {disruptions_allowed} disruption(s)"
            ),
            EvictionAnswer::AllowedUnhealthy { pdb, why } => {
                format!("evicted although PodDisruptionBudget {pdb} selects it: {why}")
            }
            EvictionAnswer::StatusStale { pdb, .. } => format!(
                "429 \"{WOULD_VIOLATE}\" (The disruption budget {pdb} is still being processed by the server.)"
            ),
            EvictionAnswer::NoDisruptionsAllowed {
                pdb,
                desired_healthy,
                current_healthy,
            } => format!(
                "429 \"{WOULD_VIOLATE}\" (The disruption budget {pdb} needs {desired_healthy} healthy pods and has {current_healthy} currently)"
            ),
            EvictionAnswer::Forbidden { message, .. } => format!("403 {message}"),
            EvictionAnswer::MoreThanOnePdb { .. } => format!("500 \"{MORE_THAN_ONE_PDB}\""),
        }
    }

    /// The answer in a few words, for a VMI's row.
    pub fn short(&self) -> String {
        match self {
            EvictionAnswer::NoDisruptionsAllowed {
                desired_healthy,
                current_healthy,
                ..
            } => format!("429: it needs {desired_healthy} healthy pods and has {current_healthy}"),
            EvictionAnswer::Forbidden { message, .. } => format!("403: {message}"),
            EvictionAnswer::StatusStale {
                observed_generation,
                generation,
                never_syncs: Some(why),
                ..
            } => format!(
                "429 for good: its status never catches up with its spec (observedGeneration {observed_generation} < generation {generation}) because the disruption controller cannot sync it: {why}"
            ),
            EvictionAnswer::StatusStale {
                observed_generation,
                generation,
                never_syncs: None,
                ..
            } => format!(
                "429 until the disruption controller catches up (observedGeneration {observed_generation} < generation {generation})"
            ),
            other => other.api_text(),
        }
    }
}

/// Why the eviction API skips the PDB check for this pod (`canIgnorePDB`), if it does.
pub fn ignores_pdbs(pod: &Pod) -> Option<String> {
    if is_terminating(pod) {
        return Some("the pod is already terminating".into());
    }
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    match phase {
        Some(p @ ("Pending" | "Succeeded" | "Failed")) => Some(format!("phase {p}")),
        _ => None,
    }
}

/// What evicting `pod` answers, given the PDBs that select it (`matching`, in any order).
pub fn evict(pod: &Pod, matching: &[&EvaluatedPdb]) -> EvictionAnswer {
    if let Some(why) = ignores_pdbs(pod) {
        return EvictionAnswer::NoPdbCheck { why };
    }
    let pdb = match matching {
        [] => return EvictionAnswer::NoPdb,
        [one] => *one,
        many => {
            let mut pdbs: Vec<String> = many.iter().map(|p| p.name.clone()).collect();
            pdbs.sort();
            return EvictionAnswer::MoreThanOnePdb { pdbs };
        }
    };
    let b = &pdb.budget;
    let name = pdb.name.clone();
    if !is_ready(pod) {
        let (current, desired) = b
            .status_healthy
            .unwrap_or((b.current_healthy, b.desired_healthy));
        if pdb.unhealthy_pod_eviction_policy.as_deref() == Some("AlwaysAllow") {
            return EvictionAnswer::AllowedUnhealthy {
                pdb: name,
                why: "the pod is not Ready and unhealthyPodEvictionPolicy is AlwaysAllow".into(),
            };
        }
        if current >= desired && desired > 0 {
            return EvictionAnswer::AllowedUnhealthy {
                pdb: name,
                why: format!(
                    "the pod is not Ready and the budget is met ({} healthy, {} desired; unhealthyPodEvictionPolicy {})",
                    current,
                    desired,
                    pdb.unhealthy_pod_eviction_policy
                        .as_deref()
                        .unwrap_or("IfHealthyBudget (default)")
                ),
            };
        }
    }
    // checkAndDecrement.
    if let Some((observed_generation, generation)) = b.stale {
        return EvictionAnswer::StatusStale {
            pdb: name,
            observed_generation,
            generation,
            never_syncs: b.never_catches_up().map(str::to_string),
        };
    }
    if b.disruptions_allowed < 0 {
        return EvictionAnswer::Forbidden {
            pdb: name.clone(),
            message: format!(
                "poddisruptionbudget {name:?} is forbidden: pdb disruptions allowed is negative"
            ),
        };
    }
    if b.disrupted_pods > 2000 {
        return EvictionAnswer::Forbidden {
            pdb: name.clone(),
            message: format!(
                "poddisruptionbudget {name:?} is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller"
            ),
        };
    }
    if b.disruptions_allowed == 0 {
        return EvictionAnswer::NoDisruptionsAllowed {
            pdb: name,
            desired_healthy: b.desired_healthy,
            current_healthy: b.current_healthy,
        };
    }
    EvictionAnswer::Allowed {
        pdb: name,
        disruptions_allowed: b.disruptions_allowed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn pdb(v: Value) -> PodDisruptionBudget {
        let mut base = json!({"metadata": {"name": "p", "namespace": "prod"}});
        if let (Some(b), Some(o)) = (base.as_object_mut(), v.as_object()) {
            for (k, val) in o {
                b.insert(k.clone(), val.clone());
            }
        }
        serde_json::from_value(base).unwrap()
    }

    fn pod(labels: Value, ready: bool, owner: Option<(&str, &str)>) -> Pod {
        let mut p = json!({"metadata": {"name": "virt-launcher-a", "namespace": "prod", "labels": labels},
            "spec": {"containers": []},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}});
        if let Some((api_version, kind)) = owner {
            p["metadata"]["ownerReferences"] = json!([{"apiVersion": api_version, "kind": kind,
                "name": "a", "uid": "u", "controller": true}]);
        }
        serde_json::from_value(p).unwrap()
    }

    fn labels(v: Value) -> BTreeMap<String, String> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn null_selects_nothing_and_empty_selects_the_whole_namespace() {
        let none = PdbSelector::of(&pdb(json!({"spec": {"maxUnavailable": 0}})));
        assert_eq!(none, PdbSelector::Nothing);
        assert!(!none.matches(&labels(json!({"app": "a"}))));
        let all = PdbSelector::of(&pdb(json!({"spec": {"selector": {}}})));
        assert_eq!(all, PdbSelector::Everything);
        assert!(all.matches(&labels(json!({}))));
        let all = PdbSelector::of(&pdb(
            json!({"spec": {"selector": {"matchLabels": {}, "matchExpressions": []}}}),
        ));
        assert_eq!(all, PdbSelector::Everything);
    }

    #[test]
    fn match_labels_and_every_operator_are_anded() {
        let s = PdbSelector::of(&pdb(json!({"spec": {"selector": {
            "matchLabels": {"app": "db"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["gold", "silver"]},
                {"key": "zone", "operator": "NotIn", "values": ["z9"]},
                {"key": "kubevirt.io/domain", "operator": "Exists"},
                {"key": "canary", "operator": "DoesNotExist"}]}}})));
        assert!(matches!(s, PdbSelector::Labels(_)));
        let ok = json!({"app": "db", "tier": "gold", "kubevirt.io/domain": "x"});
        assert!(s.matches(&labels(ok.clone())));
        let mut wrong_app = ok.clone();
        wrong_app["app"] = json!("web");
        assert!(!s.matches(&labels(wrong_app)));
        let mut bronze = ok.clone();
        bronze["tier"] = json!("bronze");
        assert!(!s.matches(&labels(bronze)));
        let mut z9 = ok.clone();
        z9["zone"] = json!("z9");
        assert!(!s.matches(&labels(z9)), "NotIn");
        let mut canary = ok.clone();
        canary["canary"] = json!("");
        assert!(!s.matches(&labels(canary)), "DoesNotExist");
        assert!(
            !s.matches(&labels(json!({"app": "db", "tier": "gold"}))),
            "Exists"
        );
    }

    #[test]
    fn an_unknown_operator_makes_the_pdb_invalid_naming_the_field() {
        let s = PdbSelector::of(&pdb(json!({"spec": {"selector": {"matchExpressions": [
            {"key": "app", "operator": "In", "values": ["a"]},
            {"key": "app", "operator": "Foo", "values": ["a"]}]}}})));
        let PdbSelector::Invalid(why) = &s else {
            panic!("{s:?}")
        };
        assert_eq!(
            why,
            "spec.selector.matchExpressions[1].operator: \"Foo\" is not a valid operator (In, NotIn, Exists, DoesNotExist)"
        );
        assert!(
            !s.matches(&labels(json!({"app": "a"}))),
            "it protects nothing"
        );
    }

    #[test]
    fn values_must_fit_the_operator_and_keys_must_be_label_keys() {
        let bad = |e: Value| match PdbSelector::of(&pdb(
            json!({"spec": {"selector": {"matchExpressions": [e]}}}),
        )) {
            PdbSelector::Invalid(why) => why,
            other => panic!("{other:?}"),
        };
        assert!(
            bad(json!({"key": "a", "operator": "In", "values": []}))
                .contains("values: must be specified")
        );
        assert!(
            bad(json!({"key": "a", "operator": "NotIn"})).contains("values: must be specified")
        );
        assert!(
            bad(json!({"key": "a", "operator": "Exists", "values": ["x"]}))
                .contains("may not be specified")
        );
        assert!(bad(json!({"key": "bad key", "operator": "Exists"})).contains(".key:"));
        let why = match PdbSelector::of(&pdb(
            json!({"spec": {"selector": {"matchLabels": {"app": "-x"}}}}),
        )) {
            PdbSelector::Invalid(why) => why,
            other => panic!("{other:?}"),
        };
        assert!(
            why.starts_with("spec.selector.matchLabels[\"app\"]"),
            "{why}"
        );
    }

    #[test]
    fn the_index_finds_label_and_namespace_wide_pdbs_only_in_the_pods_namespace() {
        let pdbs = vec![
            pdb(
                json!({"metadata": {"name": "by-label", "namespace": "prod"},
                "spec": {"selector": {"matchLabels": {"app": "a"}}}}),
            ),
            pdb(
                json!({"metadata": {"name": "all", "namespace": "prod"}, "spec": {"selector": {}}}),
            ),
            pdb(json!({"metadata": {"name": "expr", "namespace": "prod"},
                "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}}})),
            pdb(
                json!({"metadata": {"name": "other-ns", "namespace": "dev"}, "spec": {"selector": {}}}),
            ),
            pdb(json!({"metadata": {"name": "null", "namespace": "prod"}, "spec": {}})),
            pdb(json!({"metadata": {"name": "bad", "namespace": "prod"},
                "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "Foo"}]}}})),
        ];
        let more = [
            pdb(json!({"metadata": {"name": "in", "namespace": "prod"},
                "spec": {"selector": {"matchExpressions": [
                    {"key": "tier", "operator": "NotIn", "values": ["x"]},
                    {"key": "app", "operator": "In", "values": ["a", "c"]}]}}})),
            pdb(json!({"metadata": {"name": "not-in", "namespace": "prod"},
                "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]}}})),
        ];
        let pdbs: Vec<PodDisruptionBudget> = pdbs.into_iter().chain(more).collect();
        let index = PdbIndex::new(&pdbs);
        assert_eq!(
            index.matching(&pod(json!({"app": "a"}), true, None)),
            [0, 1, 2, 6]
        );
        assert_eq!(
            index.matching(&pod(json!({"app": "b"}), true, None)),
            [1, 2, 7]
        );
        assert_eq!(
            index.matching(&pod(json!({"app": "c"}), true, None)),
            [1, 2, 6, 7]
        );
        assert_eq!(index.matching(&pod(json!({}), true, None)), [1, 7]);
        assert_eq!(index.inert_in("prod"), [4, 5]);
        // Filed under what their pods must carry: only {} and NotIn-only are namespace-wide.
        assert_eq!(index.by_namespace.get("prod").map(Vec::len), Some(2));
        assert!(index.inert_in("dev").is_empty());
    }

    #[test]
    fn a_fresh_status_is_taken_as_written() {
        let p = pdb(
            json!({"metadata": {"name": "p", "namespace": "prod", "generation": 2},
            "spec": {"minAvailable": 1, "selector": {}},
            "status": {"observedGeneration": 2, "disruptionsAllowed": 3, "currentHealthy": 4,
                "desiredHealthy": 1, "expectedPods": 4}}),
        );
        let b = budget(&p, &[], true);
        assert_eq!(b.source, BudgetSource::Status);
        assert_eq!(
            (
                b.disruptions_allowed,
                b.current_healthy,
                b.desired_healthy,
                b.expected_pods
            ),
            (3, 4, 1, 4)
        );
        assert!(b.stale.is_none() && b.sync_failed.is_none());
    }

    #[test]
    fn a_sync_failed_status_keeps_the_controllers_message() {
        let p = pdb(json!({"spec": {"maxUnavailable": 1, "selector": {}},
            "status": {"disruptionsAllowed": 0, "conditions": [{"type": "DisruptionAllowed",
                "status": "False", "reason": "SyncFailed", "lastTransitionTime": "2026-01-01T00:00:00Z",
                "message": "virtualmachineinstances.kubevirt.io does not implement the scale subresource"}]}}));
        let b = budget(&p, &[], true);
        assert_eq!(
            b.sync_failed.as_deref(),
            Some("virtualmachineinstances.kubevirt.io does not implement the scale subresource")
        );
        assert_eq!(b.disruptions_allowed, 0);
    }

    #[test]
    fn max_unavailable_over_launcher_pods_computes_zero_and_sync_failed() {
        // VMPool pods: pod -> VMI (controller) -> VM -> VirtualMachinePool; the controller
        // asks the pod's direct controller, the VMI, for /scale (kubevirt#18063).
        let p = pdb(
            json!({"spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"pool": "web"}}}}),
        );
        let a = pod(
            json!({"pool": "web"}),
            true,
            Some(("kubevirt.io/v1", "VirtualMachineInstance")),
        );
        let b = pod(
            json!({"pool": "web"}),
            true,
            Some(("kubevirt.io/v1", "VirtualMachineInstance")),
        );
        let got = budget(&p, &[&a, &b], true);
        assert_eq!(got.source, BudgetSource::Computed);
        assert_eq!(got.disruptions_allowed, 0);
        assert_eq!(
            got.sync_failed.as_deref(),
            Some("virtualmachineinstances.kubevirt.io does not implement the scale subresource")
        );
        // A launcher pod whose ownerReferences were not captured is still a VMI's.
        let bare = pod(json!({"kubevirt.io": "virt-launcher"}), true, None);
        assert!(budget(&p, &[&bare], true).sync_failed.is_some());
        // A percentage minAvailable needs /scale as well.
        let pct = pdb(json!({"spec": {"minAvailable": "50%", "selector": {}}}));
        assert!(budget(&pct, &[&a], true).sync_failed.is_some());
    }

    #[test]
    fn integer_min_available_counts_ready_pods() {
        let p = pdb(json!({"spec": {"minAvailable": 1, "selector": {}}}));
        let ready = pod(
            json!({}),
            true,
            Some(("kubevirt.io/v1", "VirtualMachineInstance")),
        );
        let not_ready = pod(json!({}), false, None);
        let b = budget(&p, &[&ready, &ready, &not_ready], true);
        assert_eq!(
            (
                b.disruptions_allowed,
                b.current_healthy,
                b.desired_healthy,
                b.expected_pods
            ),
            (1, 2, 1, 3)
        );
        assert!(!b.estimated);
        let b = budget(&p, &[&ready], false);
        assert_eq!(b.disruptions_allowed, 0);
        assert!(b.estimated, "only the pods the plan saw");
        // No pods at all: expectedPods 0 allows nothing.
        assert_eq!(budget(&p, &[], true).disruptions_allowed, 0);
    }

    #[test]
    fn a_stale_status_is_recomputed_and_marked() {
        let p = pdb(
            json!({"metadata": {"name": "p", "namespace": "prod", "generation": 3},
            "spec": {"minAvailable": 0, "selector": {}},
            "status": {"observedGeneration": 2, "disruptionsAllowed": 0}}),
        );
        let ready = pod(json!({}), true, None);
        let b = budget(&p, &[&ready], true);
        assert_eq!(b.stale, Some((2, 3)));
        assert_eq!(b.disruptions_allowed, 1);
        let e = EvaluatedPdb::new(&p, &PdbSelector::Everything, b);
        let answer = evict(&ready, &[&e]);
        assert!(matches!(answer, EvictionAnswer::StatusStale { .. }));
        assert_eq!(answer.http_status(), 429);
        assert!(!answer.blocks(), "a wait, not a block");
        // A pod that is not Ready is judged on the stale status's numbers, as the API does.
        let p = pdb(
            json!({"metadata": {"name": "p", "namespace": "prod", "generation": 3},
            "spec": {"minAvailable": 5, "selector": {}},
            "status": {"observedGeneration": 2, "disruptionsAllowed": 0,
                "currentHealthy": 2, "desiredHealthy": 2}}),
        );
        let not_ready = pod(json!({}), false, None);
        let b = budget(&p, &[&not_ready], true);
        assert_eq!(b.status_healthy, Some((2, 2)));
        assert_eq!((b.current_healthy, b.desired_healthy), (0, 5), "computed");
        let e = EvaluatedPdb::new(&p, &PdbSelector::Everything, b);
        assert!(matches!(
            evict(&not_ready, &[&e]),
            EvictionAnswer::AllowedUnhealthy { .. }
        ));
    }

    fn evaluated(
        name: &str,
        allowed: i32,
        current: i32,
        desired: i32,
        policy: Option<&str>,
    ) -> EvaluatedPdb {
        EvaluatedPdb {
            name: name.into(),
            selects_everything: false,
            unhealthy_pod_eviction_policy: policy.map(str::to_string),
            budget: Budget {
                disruptions_allowed: allowed,
                current_healthy: current,
                desired_healthy: desired,
                expected_pods: current,
                source: BudgetSource::Status,
                sync_failed: None,
                stale: None,
                status_healthy: None,
                disrupted_pods: 0,
                estimated: false,
                note: None,
            },
        }
    }

    #[test]
    fn the_eviction_api_answers_as_kubernetes_does() {
        let ready = pod(json!({}), true, None);
        let not_ready = pod(json!({}), false, None);
        assert_eq!(evict(&ready, &[]), EvictionAnswer::NoPdb);

        let zero = evaluated("z", 0, 1, 1, None);
        let a = evict(&ready, &[&zero]);
        assert!(a.blocks());
        assert_eq!(a.http_status(), 429);
        assert!(
            a.api_text()
                .contains("The disruption budget z needs 1 healthy pods and has 1 currently"),
            "{}",
            a.api_text()
        );

        let one = evaluated("o", 1, 2, 1, None);
        assert!(matches!(
            evict(&ready, &[&one]),
            EvictionAnswer::Allowed {
                disruptions_allowed: 1,
                ..
            }
        ));

        // Two PDBs: 500, whatever they allow.
        let two = evict(&ready, &[&one, &zero]);
        assert_eq!(
            two,
            EvictionAnswer::MoreThanOnePdb {
                pdbs: vec!["o".into(), "z".into()]
            }
        );
        assert_eq!(two.http_status(), 500);
        assert!(two.api_text().contains(MORE_THAN_ONE_PDB));
        assert!(two.blocks());

        // Not Ready: AlwaysAllow evicts regardless; IfHealthyBudget only when the budget is met.
        let always = evaluated("aa", 0, 0, 1, Some("AlwaysAllow"));
        assert!(matches!(
            evict(&not_ready, &[&always]),
            EvictionAnswer::AllowedUnhealthy { .. }
        ));
        assert!(
            evict(&ready, &[&always]).blocks(),
            "a Ready pod still needs the budget"
        );
        let if_healthy = evaluated("ih", 0, 1, 1, None);
        assert!(matches!(
            evict(&not_ready, &[&if_healthy]),
            EvictionAnswer::AllowedUnhealthy { .. }
        ));
        let short = evaluated("sh", 0, 0, 1, Some("IfHealthyBudget"));
        assert!(evict(&not_ready, &[&short]).blocks());

        let negative = evaluated("n", -1, 0, 1, None);
        assert_eq!(evict(&ready, &[&negative]).http_status(), 403);
        let mut flooded = evaluated("f", 5, 5, 0, None);
        flooded.budget.disrupted_pods = 2001;
        assert_eq!(evict(&ready, &[&flooded]).http_status(), 403);
    }

    #[test]
    fn terminal_pending_and_terminating_pods_skip_the_pdb_check() {
        let zero = evaluated("z", 0, 1, 1, None);
        for phase in ["Pending", "Succeeded", "Failed"] {
            let mut p = pod(json!({}), false, None);
            if let Some(s) = p.status.as_mut() {
                s.phase = Some(phase.into());
            }
            assert!(
                matches!(
                    evict(&p, &[&zero, &zero]),
                    EvictionAnswer::NoPdbCheck { .. }
                ),
                "{phase}"
            );
        }
        let mut deleting = pod(json!({}), true, None);
        deleting.metadata.deletion_timestamp =
            Some(crate::model::Time("2026-01-01T00:00:00Z".parse().unwrap()));
        assert!(matches!(
            evict(&deleting, &[&zero]),
            EvictionAnswer::NoPdbCheck { .. }
        ));
    }

    #[test]
    fn percentages_round_up_like_the_controller() {
        assert_eq!(scaled(&IntOrString::String("50%".into()), 3), Ok(2));
        assert_eq!(scaled(&IntOrString::String("10%".into()), 10), Ok(1));
        assert_eq!(scaled(&IntOrString::Int(2), 10), Ok(2));
        assert_eq!(
            scaled(&IntOrString::String("1".into()), 10),
            Err("invalid value for IntOrString: invalid type: string is not a percentage".into())
        );
        assert!(scaled(&IntOrString::String("x%".into()), 10).is_err());
        // A PDB whose maxUnavailable does not parse fails its sync: 0 allowed.
        let p = pdb(json!({"spec": {"maxUnavailable": "half", "selector": {}}}));
        let ready = pod(json!({}), true, Some(("apps/v1", "ReplicaSet")));
        let b = budget(&p, &[&ready], true);
        assert_eq!(b.disruptions_allowed, 0);
        assert!(b.sync_failed.is_some());
    }
}
