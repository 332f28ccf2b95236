//! Could a migration target pod land on this node? Taints, node selectors, required node
//! affinity, host-model CPU labels and free memory: the checks the scheduler and KubeVirt
//! make for a target pod (FACTS §6.2).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Taint, Toleration,
};

use crate::model::{Node, Pod, Quantity, VirtualMachineInstance};

pub const SCHEDULABLE_LABEL: &str = "kubevirt.io/schedulable";
pub const HOST_MODEL_PREFIX: &str = "host-model-cpu.node.kubevirt.io/";
pub const CPU_MODEL_MIGRATION_PREFIX: &str = "cpu-model-migration.node.kubevirt.io/";

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
    Memory,
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
            Unfit::Memory => "insufficient memory".into(),
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

fn tolerates(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| {
        let effect_ok = t
            .effect
            .as_deref()
            .is_none_or(|e| e.is_empty() || e == taint.effect);
        let key_ok = match t.key.as_deref() {
            None | Some("") => t.operator.as_deref() == Some("Exists"),
            Some(k) => k == taint.key,
        };
        let value_ok = match t.operator.as_deref() {
            Some("Exists") => true,
            _ => t.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        };
        effect_ok && key_ok && value_ok
    })
}

fn requirement_matches(req: &NodeSelectorRequirement, value: Option<&str>) -> bool {
    let values = req.values.as_deref().unwrap_or(&[]);
    match req.operator.as_str() {
        "In" => value.is_some_and(|v| values.iter().any(|x| x == v)),
        "NotIn" => !value.is_some_and(|v| values.iter().any(|x| x == v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(v), Some(bound)) = (
                value.and_then(|v| v.parse::<i64>().ok()),
                values.first().and_then(|b| b.parse::<i64>().ok()),
            ) else {
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

fn term_matches(term: &NodeSelectorTerm, node: &Node) -> bool {
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

/// Static fit (everything but memory) of `node` for a target pod of `vmi`, whose source
/// node has host-model CPU `source_model`.
pub fn static_fit(
    vmi: &VirtualMachineInstance,
    node: &Node,
    draining: &[String],
    source_model: Option<&str>,
) -> Option<Unfit> {
    super::index::work::step(1);
    let name = node_name(node);
    if draining.iter().any(|d| d == name) {
        return Some(Unfit::BeingDrained);
    }
    if node
        .spec
        .as_ref()
        .and_then(|s| s.unschedulable)
        .unwrap_or(false)
    {
        return Some(Unfit::Unschedulable);
    }
    if !is_ready(node) {
        return Some(Unfit::NotReady);
    }
    let l = labels(node);
    if l.get(SCHEDULABLE_LABEL).map(String::as_str) == Some("false") {
        return Some(Unfit::NotKubeVirtSchedulable);
    }
    for taint in node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or(&[])
    {
        if matches!(taint.effect.as_str(), "NoSchedule" | "NoExecute")
            && !tolerates(&vmi.spec.tolerations, taint)
        {
            let shown = match &taint.value {
                Some(v) if !v.is_empty() => format!("{}={}:{}", taint.key, v, taint.effect),
                _ => format!("{}:{}", taint.key, taint.effect),
            };
            return Some(Unfit::Taint(shown));
        }
    }
    for (k, v) in &vmi.spec.node_selector {
        if l.get(k) != Some(v) {
            return Some(Unfit::NodeSelector(format!("{k}={v}")));
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
        && let Some(model) = source_model
        && l.get(&format!("{CPU_MODEL_MIGRATION_PREFIX}{model}"))
            .map(String::as_str)
            != Some("true")
    {
        return Some(Unfit::CpuModel(model.to_string()));
    }
    None
}

/// Sum of a resource over a pod's containers (requests), as the scheduler counts it:
/// max(sum of containers, largest init container) + overhead.
pub fn pod_request(pod: &Pod, resource: &str) -> u64 {
    let Some(spec) = pod.spec.as_ref() else {
        return 0;
    };
    let get = |c: &k8s_openapi::api::core::v1::Container| -> u64 {
        c.resources
            .as_ref()
            .and_then(|r| r.requests.as_ref())
            .and_then(|r| r.get(resource))
            .and_then(|q| Quantity::parse(&q.0).ok())
            .map(|q| q.bytes())
            .unwrap_or(0)
    };
    let containers: u64 = spec.containers.iter().map(get).sum();
    let init: u64 = spec
        .init_containers
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .map(get)
        .max()
        .unwrap_or(0);
    let overhead = spec
        .overhead
        .as_ref()
        .and_then(|o| o.get(resource))
        .and_then(|q| Quantity::parse(&q.0).ok())
        .map(|q| q.bytes())
        .unwrap_or(0);
    containers.max(init) + overhead
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
        assert_eq!(static_fit(&v, &node(n), &[], None), Some(Unfit::NotReady));
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
            static_fit(&v, &node(base_node("n1")), &[], Some("Cascadelake-Server")),
            None
        );
        assert_eq!(
            static_fit(&v, &node(base_node("n1")), &[], Some("Icelake-Server")),
            Some(Unfit::CpuModel("Icelake-Server".into()))
        );
        let named = vmi(
            json!({"metadata": {"name": "a"}, "spec": {"domain": {"cpu": {"model": "Haswell"}}}}),
        );
        assert_eq!(
            static_fit(&named, &node(base_node("n1")), &[], Some("Icelake-Server")),
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
}
