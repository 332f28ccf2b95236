//! Could a migration target pod land on this node? The filters the scheduler runs for the
//! target launcher pod (FACTS §6.2, kubernetes `pkg/scheduler/framework/plugins`): cordon and
//! readiness, taints and tolerations (TaintToleration), the node selector and required node
//! affinity, KubeVirt's host-model CPU label (both NodeAffinity), requested resources and the
//! pod count (NodeResourcesFit) and topology spread constraints (PodTopologySpread); and the
//! scores used to choose among the nodes that pass (preferred node affinity, PreferNoSchedule
//! taints). Pure functions over plain data.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Taint, Toleration,
    TopologySpreadConstraint,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::label_selector::CompiledSelector;
use crate::model::{Node, Pod, Quantity, VirtualMachineInstance};

pub const SCHEDULABLE_LABEL: &str = "kubevirt.io/schedulable";
pub const HOST_MODEL_PREFIX: &str = "host-model-cpu.node.kubevirt.io/";
pub const CPU_MODEL_MIGRATION_PREFIX: &str = "cpu-model-migration.node.kubevirt.io/";
pub const HOST_MODEL_REQUIRED_FEATURES_PREFIX: &str =
    "host-model-required-features.node.kubevirt.io/";
pub const CPU_FEATURE_PREFIX: &str = "cpu-feature.node.kubevirt.io/";
pub const CPU_MODEL_PREFIX: &str = "cpu-model.node.kubevirt.io/";
/// Nodes whose CPU manager can pin dedicated CPUs.
pub const CPU_MANAGER_LABEL: &str = "cpumanager";
/// The taint a cordoned node carries (`node.kubernetes.io/unschedulable:NoSchedule`).
pub const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// Resource amounts in the scheduler's units: `cpu` in millicores, everything else (memory,
/// hugepages-*, ephemeral-storage, extended resources, `pods`) in whole units.
pub type Resources = BTreeMap<String, i128>;

/// Why a node cannot take a target pod (or None when it can).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unfit {
    BeingDrained,
    Unschedulable,
    NotReady,
    NotKubeVirtSchedulable,
    Taint(String),
    NodeSelector(String),
    Affinity,
    CpuModel(String),
    /// A CPU feature the source's host model requires (KubeVirt's node selector).
    CpuFeature(String),
    /// NodeResourcesFit: the node lacks this resource (memory, cpu, nvidia.com/gpu, ...).
    Insufficient(String),
    /// NodeResourcesFit: the node runs as many pods as its `pods` allocatable allows.
    TooManyPods,
    /// PodTopologySpread: the node lacks a DoNotSchedule constraint's topology key.
    SpreadLabel,
    /// PodTopologySpread: placing the pod here would exceed a DoNotSchedule maxSkew.
    Spread,
}

impl Unfit {
    /// The scheduler-like phrase used in summaries ("2 insufficient memory").
    pub fn phrase(&self) -> String {
        match self {
            Unfit::BeingDrained => "being drained".into(),
            Unfit::Unschedulable => "cordoned".into(),
            Unfit::NotReady => "not Ready".into(),
            Unfit::NotKubeVirtSchedulable => "not kubevirt.io/schedulable".into(),
            Unfit::Taint(t) => format!("untolerated taint {t}"),
            Unfit::NodeSelector(k) => format!("node selector {k} not matched"),
            Unfit::Affinity => "required node affinity not matched".into(),
            Unfit::CpuModel(m) => format!("no host-model CPU {m} support"),
            Unfit::CpuFeature(f) => {
                format!("no CPU feature {f} (required by the source's host model)")
            }
            Unfit::Insufficient(r) => format!("insufficient {r}"),
            Unfit::TooManyPods => "too many pods".into(),
            Unfit::SpreadLabel => {
                "didn't match pod topology spread constraints (missing required label)".into()
            }
            Unfit::Spread => "didn't match pod topology spread constraints".into(),
        }
    }
}

pub fn labels(node: &Node) -> &BTreeMap<String, String> {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    node.metadata.labels.as_ref().unwrap_or(&EMPTY)
}

pub fn node_name(node: &Node) -> &str {
    node.metadata.name.as_deref().unwrap_or("")
}

fn is_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
        .is_none_or(|c| c.status == "True")
}

fn taints(node: &Node) -> &[Taint] {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or(&[])
}

/// `Toleration.ToleratesTaint` (k8s.io/api core/v1 toleration.go): an empty effect matches
/// every effect, an empty key matches every key, operator `Exists` ignores the value and
/// `Equal` (the default, also when empty) compares it; any other operator tolerates nothing.
pub fn toleration_tolerates(t: &Toleration, taint: &Taint) -> bool {
    if let Some(e) = t.effect.as_deref()
        && !e.is_empty()
        && e != taint.effect
    {
        return false;
    }
    if let Some(k) = t.key.as_deref()
        && !k.is_empty()
        && k != taint.key
    {
        return false;
    }
    match t.operator.as_deref() {
        None | Some("") | Some("Equal") => {
            t.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or("")
        }
        Some("Exists") => true,
        Some(_) => false,
    }
}

pub fn tolerates(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| toleration_tolerates(t, taint))
}

fn show_taint(taint: &Taint) -> String {
    match &taint.value {
        Some(v) if !v.is_empty() => format!("{}={}:{}", taint.key, v, taint.effect),
        _ => format!("{}:{}", taint.key, taint.effect),
    }
}

/// The first NoSchedule/NoExecute taint of `node` the tolerations do not tolerate
/// (TaintToleration's filter; PreferNoSchedule only scores).
pub fn untolerated_taint<'n>(tolerations: &[Toleration], node: &'n Node) -> Option<&'n Taint> {
    taints(node).iter().find(|taint| {
        matches!(taint.effect.as_str(), "NoSchedule" | "NoExecute")
            && !tolerates(tolerations, taint)
    })
}

/// TaintToleration's score input: the node's PreferNoSchedule taints that no toleration with
/// an empty or PreferNoSchedule effect tolerates. Fewer is better.
pub fn intolerable_prefer_no_schedule(tolerations: &[Toleration], node: &Node) -> u32 {
    let relevant: Vec<&Toleration> = tolerations
        .iter()
        .filter(|t| {
            matches!(
                t.effect.as_deref(),
                None | Some("") | Some("PreferNoSchedule")
            )
        })
        .collect();
    taints(node)
        .iter()
        .filter(|taint| {
            taint.effect == "PreferNoSchedule"
                && !relevant.iter().any(|t| toleration_tolerates(t, taint))
        })
        .count() as u32
}

fn requirement_matches(req: &NodeSelectorRequirement, value: Option<&str>) -> bool {
    let values = req.values.as_deref().unwrap_or(&[]);
    match req.operator.as_str() {
        "In" => value.is_some_and(|v| values.iter().any(|x| x == v)),
        "NotIn" => !value.is_some_and(|v| values.iter().any(|x| x == v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            // Exactly one integer value; a label that is not an integer does not match.
            let (Some(v), [bound]) = (value.and_then(|v| v.parse::<i64>().ok()), values) else {
                return false;
            };
            let Ok(bound) = bound.parse::<i64>() else {
                return false;
            };
            if req.operator == "Gt" {
                v > bound
            } else {
                v < bound
            }
        }
        _ => false,
    }
}

/// One node selector term: every expression on the labels and every `matchFields`
/// requirement (only `metadata.name` exists) must hold; an empty term matches nothing.
pub fn term_matches(term: &NodeSelectorTerm, node: &Node) -> bool {
    let l = labels(node);
    let exprs = term.match_expressions.as_deref().unwrap_or(&[]);
    let fields = term.match_fields.as_deref().unwrap_or(&[]);
    if exprs.is_empty() && fields.is_empty() {
        return false;
    }
    exprs
        .iter()
        .all(|r| requirement_matches(r, l.get(&r.key).map(String::as_str)))
        && fields.iter().all(|r| {
            let v = (r.key == "metadata.name").then(|| node_name(node));
            requirement_matches(r, v)
        })
}

/// The host-model CPU of a node (its `host-model-cpu.node.kubevirt.io/<model>` label).
pub fn host_model(node: &Node) -> Option<&str> {
    labels(node)
        .iter()
        .find(|(k, v)| k.starts_with(HOST_MODEL_PREFIX) && v.as_str() == "true")
        .map(|(k, _)| &k[HOST_MODEL_PREFIX.len()..])
}

/// A source node's host-model CPU as virt-controller pins a host-model VMI's target pod to it:
/// the model (`cpu-model-migration.node.kubevirt.io/<model>=true`) and the features the model
/// requires on that host (each `host-model-required-features.node.kubevirt.io/<f>` becomes
/// `cpu-feature.node.kubevirt.io/<f>=true`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HostCpu {
    /// Empty when only features are pinned (a launcher pod's selector without a model key).
    pub model: String,
    pub features: Vec<String>,
}

impl HostCpu {
    /// The host CPU of a node, if the node labeller published one.
    pub fn of(node: &Node) -> Option<HostCpu> {
        let model = host_model(node)?.to_string();
        let features = labels(node)
            .iter()
            .filter(|(_, v)| v.as_str() == "true")
            .filter_map(|(k, _)| k.strip_prefix(HOST_MODEL_REQUIRED_FEATURES_PREFIX))
            .map(str::to_string)
            .collect();
        Some(HostCpu { model, features })
    }

    /// A model without required features.
    pub fn model(model: &str) -> HostCpu {
        HostCpu {
            model: model.to_string(),
            features: Vec::new(),
        }
    }
}

/// True when the VMI's CPU follows the host (`host-model`, also KubeVirt's default).
pub fn uses_host_model(vmi: &VirtualMachineInstance) -> bool {
    match vmi
        .spec
        .domain
        .cpu
        .as_ref()
        .and_then(|c| c.model.as_deref())
    {
        None | Some("") | Some("host-model") => true,
        Some(_) => false,
    }
}

/// The VMI's required node affinity, if it has one.
pub fn required_node_affinity(vmi: &VirtualMachineInstance) -> Option<&NodeSelector> {
    vmi.spec
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()
}

/// NodeAffinity's score input: the sum of the weights of the VMI's preferred node affinity
/// terms the node matches. More is better.
pub fn preferred_affinity_weight(vmi: &VirtualMachineInstance, node: &Node) -> i64 {
    vmi.spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| {
            a.preferred_during_scheduling_ignored_during_execution
                .as_deref()
        })
        .unwrap_or(&[])
        .iter()
        .filter(|t| t.weight != 0 && term_matches(&t.preference, node))
        .map(|t| i64::from(t.weight))
        .sum()
}

/// True when the VMI states a preferred node affinity.
pub fn has_preferred_affinity(vmi: &VirtualMachineInstance) -> bool {
    vmi.spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| {
            a.preferred_during_scheduling_ignored_during_execution
                .as_deref()
        })
        .is_some_and(|p| p.iter().any(|t| t.weight != 0))
}

/// NodeAffinity's filter for the target pod: its node selector (the VMI's, plus
/// `kubevirt.io/schedulable=true` and, for host-model CPUs, the source's
/// `cpu-model-migration` label, which virt-controller adds) and the required node affinity.
fn node_affinity_unfit(
    vmi: &VirtualMachineInstance,
    node: &Node,
    source_model: Option<&HostCpu>,
) -> Option<Unfit> {
    let l = labels(node);
    if l.get(SCHEDULABLE_LABEL).map(String::as_str) != Some("true") {
        return Some(Unfit::NotKubeVirtSchedulable);
    }
    for (k, v) in &vmi.spec.node_selector {
        if l.get(k) != Some(v) {
            return Some(Unfit::NodeSelector(format!("{k}={v}")));
        }
    }
    // virt-controller's own node selectors (services/nodeselectorrenderer.go): a named CPU
    // model, and the CPU manager for dedicated CPUs.
    let cpu = vmi.spec.domain.cpu.as_ref();
    let mut implied = Vec::new();
    if let Some(model) = cpu
        .and_then(|c| c.model.as_deref())
        .filter(|m| !matches!(*m, "" | "host-model" | "host-passthrough"))
    {
        implied.push(format!("{CPU_MODEL_PREFIX}{model}"));
    }
    if cpu.and_then(|c| c.dedicated_cpu_placement) == Some(true) {
        implied.push(CPU_MANAGER_LABEL.to_string());
    }
    for key in implied {
        if l.get(&key).map(String::as_str) != Some("true") {
            return Some(Unfit::NodeSelector(format!("{key}=true")));
        }
    }
    if let Some(req) = required_node_affinity(vmi)
        && !req
            .node_selector_terms
            .iter()
            .any(|t| term_matches(t, node))
    {
        return Some(Unfit::Affinity);
    }
    if uses_host_model(vmi)
        && let Some(cpu) = source_model
    {
        let has = |key: String| l.get(&key).map(String::as_str) == Some("true");
        // An empty model: a launcher pod pinned features only (see `compat::pinned_host_model`).
        if !cpu.model.is_empty() && !has(format!("{CPU_MODEL_MIGRATION_PREFIX}{}", cpu.model)) {
            return Some(Unfit::CpuModel(cpu.model.clone()));
        }
        if let Some(f) = cpu
            .features
            .iter()
            .find(|f| !has(format!("{CPU_FEATURE_PREFIX}{f}")))
        {
            return Some(Unfit::CpuFeature(f.clone()));
        }
    }
    None
}

/// `node.kubernetes.io/unschedulable:NoSchedule`, what a cordon means to tolerations.
fn cordon_taint() -> Taint {
    Taint {
        key: UNSCHEDULABLE_TAINT.into(),
        effect: "NoSchedule".into(),
        ..Taint::default()
    }
}

fn cordoned(node: &Node) -> bool {
    node.spec
        .as_ref()
        .and_then(|s| s.unschedulable)
        .unwrap_or(false)
}

/// Static fit (everything but resources and topology spread) of `node` for a target pod of
/// `vmi`, whose source node has host-model CPU `source_model`.
pub fn static_fit(
    vmi: &VirtualMachineInstance,
    node: &Node,
    draining: &[String],
    source_model: Option<&HostCpu>,
) -> Option<Unfit> {
    super::index::work::step(1);
    let name = node_name(node);
    if draining.iter().any(|d| d == name) {
        return Some(Unfit::BeingDrained);
    }
    // NodeUnschedulable: a cordoned node takes pods that tolerate its cordon taint.
    if cordoned(node) && !tolerates(&vmi.spec.tolerations, &cordon_taint()) {
        return Some(Unfit::Unschedulable);
    }
    if !is_ready(node) {
        return Some(Unfit::NotReady);
    }
    if let Some(taint) = untolerated_taint(&vmi.spec.tolerations, node) {
        return Some(Unfit::Taint(show_taint(taint)));
    }
    node_affinity_unfit(vmi, node, source_model)
}

// ---------------------------------------------------------------- resources

/// A quantity in the scheduler's unit for `resource` (millicores for cpu).
pub fn amount(resource: &str, q: &Quantity) -> i128 {
    if resource == "cpu" {
        q.millis()
    } else {
        q.value()
    }
}

fn resource_list(
    list: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
) -> Resources {
    list.into_iter()
        .flatten()
        .filter_map(|(r, q)| Some((r.clone(), amount(r, &Quantity::parse(&q.0).ok()?))))
        .collect()
}

/// Every resource a pod requests, as the scheduler counts it (`resourcehelper.PodRequests`):
/// per resource, the larger of the containers' sum and the peak of the init phase, plus the
/// pod overhead. Sidecars (init containers with `restartPolicy: Always`) keep running: they
/// add to the containers' sum and to every later init container's peak.
pub fn pod_requests(pod: &Pod) -> Resources {
    let Some(spec) = pod.spec.as_ref() else {
        return Resources::new();
    };
    let of = |c: &k8s_openapi::api::core::v1::Container| {
        resource_list(c.resources.as_ref().and_then(|r| r.requests.as_ref()))
    };
    let mut total = Resources::new();
    for c in &spec.containers {
        for (r, q) in of(c) {
            *total.entry(r).or_default() += q;
        }
    }
    let mut sidecars = Resources::new();
    let mut init_peak = Resources::new();
    for c in spec.init_containers.as_deref().unwrap_or(&[]) {
        let own = of(c);
        let sidecar = c.restart_policy.as_deref() == Some("Always");
        if sidecar {
            for (r, q) in &own {
                *total.entry(r.clone()).or_default() += q;
                *sidecars.entry(r.clone()).or_default() += q;
            }
        }
        // While this init container runs: itself and the sidecars started before it (a
        // sidecar's own step is the sidecars so far, itself included).
        let mut step = if sidecar { sidecars.clone() } else { own };
        if !sidecar {
            for (r, q) in &sidecars {
                *step.entry(r.clone()).or_default() += q;
            }
        }
        for (r, q) in step {
            let peak = init_peak.entry(r).or_default();
            *peak = (*peak).max(q);
        }
    }
    for (r, q) in init_peak {
        let t = total.entry(r).or_default();
        *t = (*t).max(q);
    }
    for (r, q) in resource_list(spec.overhead.as_ref()) {
        *total.entry(r).or_default() += q;
    }
    total
}

/// One resource of [`pod_requests`] in whole units (bytes for memory; millicores for cpu),
/// never negative.
pub fn pod_request(pod: &Pod, resource: &str) -> u64 {
    pod_requests(pod)
        .get(resource)
        .map(|q| u64::try_from((*q).max(0)).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Pods that hold node resources: assigned and not terminal.
pub fn holds_resources(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    !matches!(phase, Some("Succeeded" | "Failed"))
}

/// Allocatable memory of a node in bytes.
pub fn allocatable_memory(node: &Node) -> u64 {
    node.status
        .as_ref()
        .and_then(|s| s.allocatable.as_ref())
        .and_then(|a| a.get("memory"))
        .and_then(|q| Quantity::parse(&q.0).ok())
        .map(|q| q.bytes())
        .unwrap_or(0)
}

/// Everything a node advertises as allocatable (including `pods`).
pub fn allocatable(node: &Node) -> Resources {
    resource_list(node.status.as_ref().and_then(|s| s.allocatable.as_ref()))
}

/// Resources every real node reports; a snapshot without them cannot say whether they fit,
/// so they are not checked (and the plan says so) rather than read as zero. Memory is always
/// checked (a node without it has none to give).
pub const UNCHECKED_WHEN_ABSENT: [&str; 3] = ["cpu", "ephemeral-storage", "pods"];

/// What the node lacks for a pod requesting `requests`, the NodeResourcesFit way
/// (`fitsRequest`): one more pod than `pods` allows, then every requested resource above
/// what is left (allocatable minus the requests of the pods on it). A resource the node
/// does not advertise has nothing left (hugepages, GPUs, devices.kubevirt.io/*), except
/// those of [`UNCHECKED_WHEN_ABSENT`].
pub fn insufficient(
    requests: &Resources,
    allocatable: &Resources,
    requested: &Resources,
    pods_on_node: i128,
) -> Vec<Unfit> {
    let mut out = Vec::new();
    if let Some(&max) = allocatable.get("pods")
        && pods_on_node + 1 > max
    {
        out.push(Unfit::TooManyPods);
    }
    for (resource, &want) in requests {
        if want <= 0 || resource == "pods" {
            continue;
        }
        let Some(&have) = allocatable
            .get(resource)
            .or_else(|| (!UNCHECKED_WHEN_ABSENT.contains(&resource.as_str())).then_some(&0))
        else {
            continue;
        };
        let used = requested.get(resource).copied().unwrap_or(0);
        if want > have - used {
            out.push(Unfit::Insufficient(resource.clone()));
        }
    }
    out
}

/// Requested resources this node does not report, so their fit is not known.
pub fn unreported<'r>(requests: &'r Resources, allocatable: &Resources) -> Vec<&'r str> {
    requests
        .iter()
        .filter(|(r, q)| {
            **q > 0
                && UNCHECKED_WHEN_ABSENT.contains(&r.as_str())
                && !allocatable.contains_key(r.as_str())
        })
        .map(|(r, _)| r.as_str())
        .chain((!allocatable.contains_key("pods")).then_some("pods"))
        .collect()
}

/// An amount for people: cpu in cores, byte-sized resources in binary units, others counted.
pub fn show_amount(resource: &str, amount: i128) -> String {
    if resource == "cpu" {
        if amount % 1000 == 0 {
            format!("{} cpu", amount / 1000)
        } else {
            format!("{amount}m cpu")
        }
    } else if resource == "memory"
        || resource == "ephemeral-storage"
        || resource.starts_with("hugepages-")
    {
        format!(
            "{} {resource}",
            crate::text::bytes(u64::try_from(amount.max(0)).unwrap_or(u64::MAX))
        )
    } else {
        format!("{amount} {resource}")
    }
}

// ---------------------------------------------------------------- topology spread

/// The pods a topology spread constraint counts: those of one namespace its label selector
/// selects (with `matchLabelKeys` resolved against the pod being placed). The selector is
/// compiled once, when the constraint is read (see [`CompiledSelector`]): a pod is then
/// matched without converting anything. A selector Kubernetes refuses counts no pod here (the
/// API server refuses such a pod spec; only a snapshot file can hold one).
#[derive(Debug, Clone, PartialEq)]
pub struct SpreadSelector {
    pub namespace: String,
    pub selector: LabelSelector,
    pub compiled: CompiledSelector,
    /// Identity of (namespace, selector), for counting each once.
    pub key: String,
}

impl SpreadSelector {
    pub fn new(namespace: String, selector: LabelSelector) -> Self {
        let compiled = CompiledSelector::compile(
            Some(&selector),
            "spec.topologySpreadConstraints[].labelSelector",
        );
        let key = serde_json::to_string(&(&namespace, &selector))
            .unwrap_or_else(|_| format!("{namespace}/{:?}", selector));
        SpreadSelector {
            namespace,
            selector,
            compiled,
            key,
        }
    }

    pub fn matches(&self, namespace: &str, labels: &BTreeMap<String, String>) -> bool {
        namespace == self.namespace && self.compiled.matches(labels)
    }
}

/// The labels of a VMI's launcher pods: the VMI's own (virt-controller copies them) plus
/// `kubevirt.io: virt-launcher` and `kubevirt.io/created-by: <uid>`.
pub fn launcher_labels(vmi: &VirtualMachineInstance) -> BTreeMap<String, String> {
    let mut l = vmi.metadata.labels.clone().unwrap_or_default();
    l.insert("kubevirt.io".into(), "virt-launcher".into());
    if let Some(uid) = vmi.uid() {
        l.insert("kubevirt.io/created-by".into(), uid.to_string());
    }
    l
}

/// The selector of one constraint for a VMI's launcher pod; None when it selects nothing
/// (no labelSelector).
pub fn spread_selector(
    vmi: &VirtualMachineInstance,
    c: &TopologySpreadConstraint,
) -> Option<SpreadSelector> {
    let mut selector = c.label_selector.clone()?;
    let own = launcher_labels(vmi);
    for key in c.match_label_keys.iter().flatten() {
        if let Some(v) = own.get(key) {
            selector
                .match_expressions
                .get_or_insert_with(Vec::new)
                .push(
                    k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement {
                        key: key.clone(),
                        operator: "In".into(),
                        values: Some(vec![v.clone()]),
                    },
                );
        }
    }
    Some(SpreadSelector::new(vmi.namespace().to_string(), selector))
}

/// The distinct selectors of the VMIs' topology spread constraints: what must be counted per
/// node (see `policy::drain::split_pods`).
pub fn spread_selectors<'v>(
    vmis: impl IntoIterator<Item = &'v VirtualMachineInstance>,
) -> Vec<SpreadSelector> {
    let mut out: Vec<SpreadSelector> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for vmi in vmis {
        for c in &vmi.spec.topology_spread_constraints {
            if let Some(s) = spread_selector(vmi, c)
                && seen.insert(s.key.clone())
            {
                out.push(s);
            }
        }
    }
    out
}

/// What one node holds for the scheduler: the requests of its pods, how many pods, and how
/// many of them each spread selector (by key) selects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeUsage {
    pub requested: Resources,
    pub pods: i128,
    pub matching: BTreeMap<String, i64>,
}

impl NodeUsage {
    /// Counts a pod on this node (callers check [`holds_resources`]).
    pub fn add(&mut self, pod: &Pod, selectors: &SelectorIndex) {
        for (r, q) in pod_requests(pod) {
            *self.requested.entry(r).or_default() += q;
        }
        self.pods += 1;
        static EMPTY: BTreeMap<String, String> = BTreeMap::new();
        let labels = pod.metadata.labels.as_ref().unwrap_or(&EMPTY);
        let namespace = pod.metadata.namespace.as_deref().unwrap_or("");
        for s in selectors.matching(namespace, labels) {
            *self.matching.entry(s.key.clone()).or_default() += 1;
        }
    }
}

/// Spread selectors indexed so that a pod is checked only against those that can select it:
/// by (namespace, first matchLabels entry), or by namespace when a selector has no
/// matchLabels. A fleet with a spread selector per application then costs each pod a few
/// lookups, not one check per application.
#[derive(Debug, Default)]
pub struct SelectorIndex {
    selectors: Vec<SpreadSelector>,
    by_label: std::collections::HashMap<(String, String, String), Vec<usize>>,
    by_namespace: std::collections::HashMap<String, Vec<usize>>,
}

impl SelectorIndex {
    pub fn new(selectors: Vec<SpreadSelector>) -> Self {
        let mut index = SelectorIndex::default();
        for (i, s) in selectors.iter().enumerate() {
            super::index::work::step(1);
            match s
                .selector
                .match_labels
                .as_ref()
                .and_then(|m| m.iter().next())
            {
                Some((k, v)) => index
                    .by_label
                    .entry((s.namespace.clone(), k.clone(), v.clone()))
                    .or_default()
                    .push(i),
                None => index
                    .by_namespace
                    .entry(s.namespace.clone())
                    .or_default()
                    .push(i),
            }
        }
        index.selectors = selectors;
        index
    }

    pub fn selectors(&self) -> &[SpreadSelector] {
        &self.selectors
    }

    /// The selectors that select a pod with these labels in this namespace.
    pub fn matching(
        &self,
        namespace: &str,
        labels: &BTreeMap<String, String>,
    ) -> Vec<&SpreadSelector> {
        if self.selectors.is_empty() {
            return Vec::new();
        }
        let mut found = Vec::new();
        let indexed = labels.iter().filter_map(|(k, v)| {
            super::index::work::step(1);
            self.by_label
                .get(&(namespace.to_string(), k.clone(), v.clone()))
        });
        for &i in indexed
            .flatten()
            .chain(self.by_namespace.get(namespace).into_iter().flatten())
        {
            super::index::work::step(1);
            let s = &self.selectors[i];
            if s.matches(namespace, labels) {
                found.push(s);
            }
        }
        found
    }
}

/// One DoNotSchedule (or ScheduleAnyway) constraint of the pod being placed, resolved.
#[derive(Debug, Clone)]
pub struct SpreadRule {
    pub selector: SpreadSelector,
    pub topology_key: String,
    pub max_skew: i64,
    pub min_domains: i64,
    /// 1 when the constraint selects the pod being placed.
    pub self_match: i64,
    pub honor_affinity: bool,
    pub honor_taints: bool,
}

/// The DoNotSchedule constraints of a VMI's target pod (PodTopologySpread's filter).
pub fn spread_rules(vmi: &VirtualMachineInstance, when: &str) -> Vec<SpreadRule> {
    let own = launcher_labels(vmi);
    vmi.spec
        .topology_spread_constraints
        .iter()
        .filter(|c| c.when_unsatisfiable == when)
        .filter_map(|c| {
            let selector = spread_selector(vmi, c)?;
            let self_match = i64::from(selector.matches(vmi.namespace(), &own));
            Some(SpreadRule {
                selector,
                topology_key: c.topology_key.clone(),
                max_skew: i64::from(c.max_skew.max(1)),
                min_domains: i64::from(c.min_domains.unwrap_or(1).max(1)),
                self_match,
                // nodeAffinityPolicy defaults to Honor, nodeTaintsPolicy to Ignore.
                honor_affinity: c.node_affinity_policy.as_deref() != Some("Ignore"),
                honor_taints: c.node_taints_policy.as_deref() == Some("Honor"),
            })
        })
        .collect()
}

/// Does this node's domain count for the rule (PodTopologySpread's PreFilter)? Its pods are
/// counted when the node matches the pod's node selector and required affinity
/// (nodeAffinityPolicy Honor), tolerates its taints (nodeTaintsPolicy Honor; a drained or
/// cordoned node carries `node.kubernetes.io/unschedulable:NoSchedule`), and has every
/// topology key of `all_keys`.
pub fn spread_counts_node(
    rule: &SpreadRule,
    vmi: &VirtualMachineInstance,
    node: &Node,
    draining: &[String],
    source_model: Option<&HostCpu>,
    all_keys: &[&str],
) -> bool {
    let l = labels(node);
    if !all_keys.iter().all(|k| l.contains_key(*k)) {
        return false;
    }
    if rule.honor_affinity && node_affinity_unfit(vmi, node, source_model).is_some() {
        return false;
    }
    if rule.honor_taints {
        if untolerated_taint(&vmi.spec.tolerations, node).is_some() {
            return false;
        }
        if (cordoned(node) || draining.iter().any(|d| d == node_name(node)))
            && !tolerates(&vmi.spec.tolerations, &cordon_taint())
        {
            return false;
        }
    }
    true
}

/// PodTopologySpread's filter for one rule on one node: `domain` is the node's value of the
/// topology key, `matching` the pods the rule counts there, `min` the smallest count over
/// the counted domains (None when there are none) and `domains` how many there are.
pub fn spread_unfit(
    rule: &SpreadRule,
    domain: Option<&str>,
    matching: i64,
    min: Option<i64>,
    domains: usize,
) -> Option<Unfit> {
    if domain.is_none() {
        return Some(Unfit::SpreadLabel);
    }
    // Fewer domains than minDomains (at least 1) make the global minimum 0.
    let min = if (domains as i64) < rule.min_domains {
        0
    } else {
        min.unwrap_or(0)
    };
    (matching + rule.self_match - min > rule.max_skew).then_some(Unfit::Spread)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(v: serde_json::Value) -> Node {
        serde_json::from_value(v).unwrap()
    }

    fn vmi(v: serde_json::Value) -> VirtualMachineInstance {
        serde_json::from_value(v).unwrap()
    }

    fn base_node(name: &str) -> serde_json::Value {
        json!({"metadata": {"name": name, "labels": {
            "kubevirt.io/schedulable": "true", "zone": "a",
            "cpu-model-migration.node.kubevirt.io/Cascadelake-Server": "true"}},
            "spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}],
            "allocatable": {"memory": "64Gi"}}})
    }

    #[test]
    fn drained_cordoned_and_not_ready_nodes_are_out() {
        let v = vmi(json!({"metadata": {"name": "a"}}));
        assert_eq!(
            static_fit(&v, &node(base_node("n3")), &["n3".into()], None),
            Some(Unfit::BeingDrained)
        );
        let mut n = base_node("n1");
        n["spec"]["unschedulable"] = json!(true);
        assert_eq!(
            static_fit(&v, &node(n), &[], None),
            Some(Unfit::Unschedulable)
        );
        let mut n = base_node("n1");
        n["status"]["conditions"][0]["status"] = json!("False");
        assert_eq!(
            static_fit(&v, &node(n.clone()), &[], None),
            Some(Unfit::NotReady)
        );
        // A pod that tolerates the cordon taint may land on a cordoned node.
        let mut c = base_node("n1");
        c["spec"]["unschedulable"] = json!(true);
        let tolerant = vmi(json!({"metadata": {"name": "a"}, "spec": {"tolerations": [
            {"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]}}));
        assert_eq!(static_fit(&tolerant, &node(c), &[], None), None);
        assert_eq!(static_fit(&v, &node(base_node("n1")), &[], None), None);
    }

    #[test]
    fn taints_need_tolerations() {
        let mut n = base_node("gpu");
        n["spec"]["taints"] = json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]);
        let plain = vmi(json!({"metadata": {"name": "a"}}));
        assert_eq!(
            static_fit(&plain, &node(n.clone()), &[], None),
            Some(Unfit::Taint("dedicated=gpu:NoSchedule".into()))
        );
        let tolerant = vmi(json!({"metadata": {"name": "a"}, "spec": {"tolerations": [
            {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]}}));
        assert_eq!(static_fit(&tolerant, &node(n.clone()), &[], None), None);
        let any = vmi(
            json!({"metadata": {"name": "a"}, "spec": {"tolerations": [{"operator": "Exists"}]}}),
        );
        assert_eq!(static_fit(&any, &node(n), &[], None), None);
    }

    #[test]
    fn selectors_and_affinity() {
        let sel = vmi(json!({"metadata": {"name": "a"}, "spec": {"nodeSelector": {"zone": "b"}}}));
        assert_eq!(
            static_fit(&sel, &node(base_node("n1")), &[], None),
            Some(Unfit::NodeSelector("zone=b".into()))
        );
        let aff = vmi(
            json!({"metadata": {"name": "a"}, "spec": {"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b", "c"]}]},
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n9"]}]}]}}}}}),
        );
        assert_eq!(
            static_fit(&aff, &node(base_node("n1")), &[], None),
            Some(Unfit::Affinity)
        );
        assert_eq!(static_fit(&aff, &node(base_node("n9")), &[], None), None);
    }

    #[test]
    fn host_model_needs_the_source_models_migration_label() {
        let v = vmi(
            json!({"metadata": {"name": "a"}, "spec": {"domain": {"cpu": {"model": "host-model"}}}}),
        );
        assert_eq!(
            static_fit(
                &v,
                &node(base_node("n1")),
                &[],
                Some(&HostCpu::model("Cascadelake-Server"))
            ),
            None
        );
        assert_eq!(
            static_fit(
                &v,
                &node(base_node("n1")),
                &[],
                Some(&HostCpu::model("Icelake-Server"))
            ),
            Some(Unfit::CpuModel("Icelake-Server".into()))
        );
        let named = vmi(
            json!({"metadata": {"name": "a"}, "spec": {"domain": {"cpu": {"model": "Haswell"}}}}),
        );
        // A named model needs the node's cpu-model label, not the source's host model.
        assert_eq!(
            static_fit(
                &named,
                &node(base_node("n1")),
                &[],
                Some(&HostCpu::model("Icelake-Server"))
            ),
            Some(Unfit::NodeSelector(
                "cpu-model.node.kubevirt.io/Haswell=true".into()
            ))
        );
        let dedicated = vmi(
            json!({"metadata": {"name": "a"}, "spec": {"domain": {"cpu": {
            "model": "host-passthrough", "dedicatedCpuPlacement": true}}}}),
        );
        assert_eq!(
            static_fit(&dedicated, &node(base_node("n1")), &[], None),
            Some(Unfit::NodeSelector("cpumanager=true".into()))
        );
        let mut haswell = base_node("n1");
        haswell["metadata"]["labels"]["cpu-model.node.kubevirt.io/Haswell"] = json!("true");
        assert_eq!(
            static_fit(
                &named,
                &node(haswell),
                &[],
                Some(&HostCpu::model("Icelake-Server"))
            ),
            None
        );
    }

    #[test]
    fn pod_requests_follow_the_scheduler() {
        let p: Pod = serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": {
            "containers": [{"name": "a", "resources": {"requests": {"memory": "1Gi"}}},
                           {"name": "b", "resources": {"requests": {"memory": "512Mi"}}}],
            "initContainers": [{"name": "i", "resources": {"requests": {"memory": "2Gi"}}}],
            "overhead": {"memory": "100Mi"}}}))
        .unwrap();
        assert_eq!(
            pod_request(&p, "memory"),
            2 * 1024 * 1024 * 1024 + 100 * 1024 * 1024
        );
    }

    fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: value.map(str::to_string),
            effect: effect.into(),
            ..Taint::default()
        }
    }

    fn toleration(v: serde_json::Value) -> Toleration {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn tolerations_match_as_the_api_helper_does() {
        let t = taint("dedicated", Some("gpu"), "NoSchedule");
        let cases = [
            // Empty key with Exists tolerates every taint; empty effect every effect.
            (json!({"operator": "Exists"}), true),
            (json!({"key": "dedicated", "operator": "Exists"}), true),
            (
                json!({"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}),
                false,
            ),
            // Operator defaults to Equal: the value must match.
            (json!({"key": "dedicated", "value": "gpu"}), true),
            (json!({"key": "dedicated", "value": "cpu"}), false),
            (json!({"key": "dedicated"}), false),
            (
                json!({"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}),
                true,
            ),
            (json!({"key": "other", "operator": "Exists"}), false),
            // An empty key with Equal compares values only (the helper does not check it).
            (json!({"value": "gpu"}), true),
            // Unknown operators tolerate nothing.
            (
                json!({"key": "dedicated", "operator": "Gte", "value": "gpu"}),
                false,
            ),
        ];
        for (tol, expected) in cases {
            assert_eq!(
                toleration_tolerates(&toleration(tol.clone()), &t),
                expected,
                "{tol}"
            );
        }
        // A taint without a value is tolerated by an Equal toleration without a value.
        let bare = taint("maintenance", None, "NoExecute");
        assert!(toleration_tolerates(
            &toleration(json!({"key": "maintenance"})),
            &bare
        ));
    }

    #[test]
    fn no_execute_filters_and_prefer_no_schedule_only_scores() {
        let mut n = base_node("n1");
        n["spec"]["taints"] = json!([
            {"key": "evict", "effect": "NoExecute"},
            {"key": "old", "effect": "PreferNoSchedule"},
            {"key": "older", "value": "x", "effect": "PreferNoSchedule"}]);
        let plain = vmi(json!({"metadata": {"name": "a"}}));
        assert_eq!(
            static_fit(&plain, &node(n.clone()), &[], None),
            Some(Unfit::Taint("evict:NoExecute".into()))
        );
        let tolerant = vmi(json!({"metadata": {"name": "a"}, "spec": {"tolerations": [
            {"key": "evict", "operator": "Exists", "effect": "NoExecute"},
            {"key": "old", "operator": "Exists", "effect": "NoSchedule"}]}}));
        assert_eq!(static_fit(&tolerant, &node(n.clone()), &[], None), None);
        // A NoSchedule toleration does not count for PreferNoSchedule; an empty effect does.
        assert_eq!(
            intolerable_prefer_no_schedule(&tolerant.spec.tolerations, &node(n.clone())),
            2
        );
        let any_effect = [toleration(json!({"key": "old", "operator": "Exists"}))];
        assert_eq!(intolerable_prefer_no_schedule(&any_effect, &node(n)), 1);
    }

    #[test]
    fn every_node_affinity_operator_and_match_fields() {
        let mut n = base_node("n7");
        n["metadata"]["labels"]["gen"] = json!("5");
        let n = node(n);
        let term =
            |e: serde_json::Value| -> NodeSelectorTerm { serde_json::from_value(e).unwrap() };
        let expr = |op: &str, key: &str, values: &[&str]| {
            term(json!({"matchExpressions": [{"key": key, "operator": op, "values": values}]}))
        };
        assert!(term_matches(&expr("In", "zone", &["a", "b"]), &n));
        assert!(!term_matches(&expr("NotIn", "zone", &["a"]), &n));
        assert!(
            term_matches(&expr("NotIn", "missing", &["a"]), &n),
            "absent label: NotIn holds"
        );
        assert!(term_matches(&expr("Exists", "zone", &[]), &n));
        assert!(term_matches(&expr("DoesNotExist", "missing", &[]), &n));
        assert!(term_matches(&expr("Gt", "gen", &["4"]), &n));
        assert!(!term_matches(&expr("Gt", "gen", &["5"]), &n));
        assert!(term_matches(&expr("Lt", "gen", &["6"]), &n));
        assert!(
            !term_matches(&expr("Lt", "zone", &["6"]), &n),
            "not an integer"
        );
        assert!(
            !term_matches(&expr("Gt", "gen", &["1", "2"]), &n),
            "one value only"
        );
        let by_name = term(
            json!({"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n7"]}]}),
        );
        assert!(!term_matches(&by_name, &n));
        assert!(
            !term_matches(&term(json!({})), &n),
            "an empty term matches nothing"
        );
        // Preferred terms add their weights; zero weights and empty terms count nothing.
        let v = vmi(
            json!({"metadata": {"name": "a"}, "spec": {"affinity": {"nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 30, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}},
                {"weight": 20, "preference": {"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["3"]}]}},
                {"weight": 50, "preference": {}},
                {"weight": 0, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]}}}}),
        );
        assert_eq!(preferred_affinity_weight(&v, &n), 50);
    }

    #[test]
    fn the_launcher_node_selector_requires_kubevirt_schedulable_true() {
        let v = vmi(json!({"metadata": {"name": "a"}}));
        let mut n = base_node("n1");
        n["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove("kubevirt.io/schedulable");
        assert_eq!(
            static_fit(&v, &node(n), &[], None),
            Some(Unfit::NotKubeVirtSchedulable)
        );
    }

    fn res(pairs: &[(&str, i128)]) -> Resources {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn node_resources_fit_checks_every_requested_resource() {
        let alloc = res(&[
            ("cpu", 4000),
            ("memory", 8 << 30),
            ("hugepages-1Gi", 4 << 30),
            ("nvidia.com/gpu", 1),
            ("devices.kubevirt.io/kvm", 1000),
            ("pods", 10),
        ]);
        let used = res(&[("cpu", 3500), ("memory", 1 << 30), ("nvidia.com/gpu", 1)]);
        let want = res(&[
            ("cpu", 1000),
            ("memory", 4 << 30),
            ("hugepages-1Gi", 4 << 30),
            ("hugepages-2Mi", 2 << 20),
            ("nvidia.com/gpu", 1),
            ("devices.kubevirt.io/kvm", 1),
            ("example.com/fpga", 0),
        ]);
        assert_eq!(
            insufficient(&want, &alloc, &used, 3),
            [
                Unfit::Insufficient("cpu".into()),
                Unfit::Insufficient("hugepages-2Mi".into()),
                Unfit::Insufficient("nvidia.com/gpu".into()),
            ],
            "a zero request is not checked; an unadvertised extended resource has none"
        );
        assert_eq!(
            insufficient(&res(&[("memory", 1)]), &alloc, &used, 10),
            [Unfit::TooManyPods]
        );
        // cpu, ephemeral-storage and pods that a node does not report are not checked.
        let bare = res(&[("memory", 8 << 30)]);
        let want = res(&[
            ("cpu", 500),
            ("ephemeral-storage", 50_000_000),
            ("memory", 1 << 30),
        ]);
        assert!(insufficient(&want, &bare, &Resources::new(), 500).is_empty());
        assert_eq!(
            unreported(&want, &bare),
            ["cpu", "ephemeral-storage", "pods"]
        );
    }

    #[test]
    fn pod_requests_of_every_resource_follow_the_scheduler() {
        let p: Pod = serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": {
            "containers": [
                {"name": "compute", "resources": {"requests": {"cpu": "1500m", "memory": "1Gi",
                    "devices.kubevirt.io/kvm": "1", "nvidia.com/gpu": "1", "hugepages-2Mi": "1Gi"}}},
                {"name": "sidecar", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
            "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2", "memory": "100Mi"}}}],
            "overhead": {"cpu": "250m", "memory": "100Mi"}}}))
        .unwrap();
        assert_eq!(
            pod_requests(&p),
            res(&[
                ("cpu", 2000 + 250),
                ("devices.kubevirt.io/kvm", 1),
                ("hugepages-2Mi", 1 << 30),
                ("memory", (1 << 30) + (64 << 20) + (100 << 20)),
                ("nvidia.com/gpu", 1),
            ])
        );
    }

    fn rule(
        v: serde_json::Value,
        vmi_labels: serde_json::Value,
    ) -> (SpreadRule, VirtualMachineInstance) {
        let v = vmi(
            json!({"metadata": {"name": "a", "namespace": "ns", "uid": "u1", "labels": vmi_labels},
            "spec": {"topologySpreadConstraints": [v]}}),
        );
        let r = spread_rules(&v, "DoNotSchedule").remove(0);
        (r, v)
    }

    #[test]
    fn topology_spread_skew_min_domains_and_missing_keys() {
        let c = json!({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}}});
        let (r, _) = rule(c.clone(), json!({"app": "web"}));
        assert_eq!(r.self_match, 1);
        // Domains a=2, b=1: a gives skew 2 + 1 - 1 = 2 > 1, b gives 1.
        assert_eq!(
            spread_unfit(&r, Some("a"), 2, Some(1), 2),
            Some(Unfit::Spread)
        );
        assert_eq!(spread_unfit(&r, Some("b"), 1, Some(1), 2), None);
        assert_eq!(
            spread_unfit(&r, None, 0, Some(1), 2),
            Some(Unfit::SpreadLabel)
        );
        // A pod the selector does not select does not count itself.
        let (other, _) = rule(c.clone(), json!({"app": "db"}));
        assert_eq!(spread_unfit(&other, Some("a"), 2, Some(1), 2), None);
        // minDomains 3 with 2 domains: the global minimum is taken as 0.
        let mut md = c.clone();
        md["minDomains"] = json!(3);
        let (r3, _) = rule(md, json!({"app": "web"}));
        assert_eq!(
            spread_unfit(&r3, Some("b"), 1, Some(1), 2),
            Some(Unfit::Spread)
        );
        // ScheduleAnyway constraints do not filter.
        let mut soft = c;
        soft["whenUnsatisfiable"] = json!("ScheduleAnyway");
        let v = vmi(json!({"metadata": {"name": "a", "namespace": "ns"},
            "spec": {"topologySpreadConstraints": [soft]}}));
        assert!(spread_rules(&v, "DoNotSchedule").is_empty());
    }

    #[test]
    fn a_spread_selector_is_compiled_once_with_kubernetes_rules() {
        let web = BTreeMap::from([("app".to_string(), "web".to_string())]);
        let c = json!({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}});
        let (r, _) = rule(c, json!({"app": "web"}));
        assert!(matches!(r.selector.compiled, CompiledSelector::Labels(_)));
        assert!(r.selector.matches("ns", &web));
        // NotIn with no values: Kubernetes refuses the selector; it counts no pod (by hand it
        // used to count every pod of the namespace).
        let c = json!({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": []}]}});
        let (r, _) = rule(c, json!({"app": "web"}));
        let CompiledSelector::Invalid(why) = &r.selector.compiled else {
            panic!("{:?}", r.selector.compiled)
        };
        assert!(
            why.starts_with(
                "spec.topologySpreadConstraints[].labelSelector.matchExpressions[0].values"
            ),
            "{why}"
        );
        assert!(!r.selector.matches("ns", &web));
        assert!(!r.selector.matches("ns", &BTreeMap::new()));
        // The index still files it (by namespace) and finds nothing with it.
        let index = SelectorIndex::new(vec![r.selector.clone()]);
        assert!(index.matching("ns", &web).is_empty());
    }

    #[test]
    fn which_nodes_count_for_topology_spread() {
        let c = json!({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["tier"]});
        let (r, v) = rule(c.clone(), json!({"app": "web", "tier": "front"}));
        // matchLabelKeys adds the pod's own value to the selector.
        assert!(r.selector.matches(
            "ns",
            &BTreeMap::from([
                ("app".to_string(), "web".to_string()),
                ("tier".to_string(), "front".to_string())
            ])
        ));
        assert!(!r.selector.matches(
            "ns",
            &BTreeMap::from([("app".to_string(), "web".to_string())])
        ));
        assert!(!r.selector.matches(
            "other",
            &BTreeMap::from([
                ("app".to_string(), "web".to_string()),
                ("tier".to_string(), "front".to_string())
            ])
        ));
        let plain = node(base_node("n1"));
        assert!(spread_counts_node(&r, &v, &plain, &[], None, &["zone"]));
        assert!(
            !spread_counts_node(&r, &v, &plain, &[], None, &["zone", "rack"]),
            "every key"
        );
        // Default nodeTaintsPolicy Ignore: a drained (cordoned) node still counts; Honor: not.
        assert!(spread_counts_node(
            &r,
            &v,
            &plain,
            &["n1".into()],
            None,
            &["zone"]
        ));
        let mut honor = c;
        honor["nodeTaintsPolicy"] = json!("Honor");
        let (rh, vh) = rule(honor, json!({"app": "web"}));
        assert!(!spread_counts_node(
            &rh,
            &vh,
            &plain,
            &["n1".into()],
            None,
            &["zone"]
        ));
        // Default nodeAffinityPolicy Honor: a node outside the node selector does not count.
        let mut sel = vh.clone();
        sel.spec.node_selector.insert("zone".into(), "b".into());
        assert!(!spread_counts_node(&rh, &sel, &plain, &[], None, &["zone"]));
    }

    #[test]
    fn host_model_needs_the_source_hosts_required_features() {
        let mut src = base_node("old");
        src["metadata"]["labels"]["host-model-cpu.node.kubevirt.io/Cascadelake-Server"] =
            json!("true");
        src["metadata"]["labels"]["host-model-required-features.node.kubevirt.io/md-clear"] =
            json!("true");
        let cpu = HostCpu::of(&node(src)).unwrap();
        assert_eq!(cpu.model, "Cascadelake-Server");
        assert_eq!(cpu.features, ["md-clear"]);
        let v = vmi(json!({"metadata": {"name": "a"}}));
        let mut target = base_node("new");
        assert_eq!(
            static_fit(&v, &node(target.clone()), &[], Some(&cpu)),
            Some(Unfit::CpuFeature("md-clear".into()))
        );
        target["metadata"]["labels"]["cpu-feature.node.kubevirt.io/md-clear"] = json!("true");
        assert_eq!(static_fit(&v, &node(target), &[], Some(&cpu)), None);
    }

    #[test]
    fn sidecar_init_containers_count_as_the_scheduler_counts_them() {
        // Sidecar s (1 cpu) keeps running: containers 2 + s 1 = 3; the init phase peaks at
        // the plain init container after it, 4 + 1 = 5.
        let p: Pod = serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": {
            "containers": [{"name": "app", "resources": {"requests": {"cpu": "2"}}}],
            "initContainers": [
                {"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
                {"name": "i", "resources": {"requests": {"cpu": "4"}}}]}}))
        .unwrap();
        assert_eq!(pod_requests(&p), res(&[("cpu", 5000), ("memory", 1 << 30)]));
        // Without the plain init container the sidecar simply adds to the containers.
        let q: Pod = serde_json::from_value(json!({"metadata": {"name": "q"}, "spec": {
            "containers": [{"name": "app", "resources": {"requests": {"cpu": "2"}}}],
            "initContainers": [
                {"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}]}}))
        .unwrap();
        assert_eq!(pod_requests(&q), res(&[("cpu", 3000)]));
        assert_eq!(pod_request(&q, "cpu"), 3000);
    }
}
