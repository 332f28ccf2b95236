//! What goes into a vmctl snapshot: the raw lists in, the ordered items out. Pure.
//!
//! Pods that are not virt-launcher pods are kept only for node capacity and PDB arithmetic:
//! their metadata, node, phase, readiness and resource requests; their environment and
//! commands are left out. With `--node`, only that node's VMIs and what belongs to them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::links::CREATED_BY_LABEL;
use super::pods::{LAUNCHER_LABEL, LAUNCHER_VALUE};
use crate::cluster::Kind;
use crate::cluster::snapshot_write::Captured;

fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

/// The JSON pointer of a label (a `/` in its key escaped, RFC 6901).
fn label_pointer(key: &str) -> String {
    format!("/metadata/labels/{}", key.replace('/', "~1"))
}

fn is_launcher(pod: &Value) -> bool {
    str_at(pod, &label_pointer(LAUNCHER_LABEL)) == Some(LAUNCHER_VALUE)
}

/// Keeps what capacity planning needs of an ordinary pod.
fn trim_pod(pod: &Value) -> Value {
    let containers = |key: &str| -> Value {
        let list = pod
            .pointer(&format!("/spec/{key}"))
            .and_then(Value::as_array);
        Value::Array(
            list.into_iter()
                .flatten()
                .map(|c| {
                    json!({"name": c.get("name").cloned().unwrap_or(Value::Null),
                                "resources": c.get("resources").cloned().unwrap_or(json!({}))})
                })
                .collect(),
        )
    };
    let mut meta = Map::new();
    for key in [
        "name",
        "namespace",
        "uid",
        "labels",
        "ownerReferences",
        "creationTimestamp",
        // A terminating pod is not healthy for a PodDisruptionBudget.
        "deletionTimestamp",
    ] {
        if let Some(v) = pod.pointer(&format!("/metadata/{key}")) {
            meta.insert(key.into(), v.clone());
        }
    }
    let mut spec = Map::new();
    if let Some(n) = pod.pointer("/spec/nodeName") {
        spec.insert("nodeName".into(), n.clone());
    }
    spec.insert("containers".into(), containers("containers"));
    let init = containers("initContainers");
    if init.as_array().is_some_and(|a| !a.is_empty()) {
        spec.insert("initContainers".into(), init);
    }
    if let Some(o) = pod.pointer("/spec/overhead") {
        spec.insert("overhead".into(), o.clone());
    }
    let mut status = Map::new();
    if let Some(p) = pod.pointer("/status/phase") {
        status.insert("phase".into(), p.clone());
    }
    // Readiness: a PodDisruptionBudget without status is computed from its Ready pods.
    let ready: Vec<Value> = pod
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
        .map(
            |c| json!({"type": "Ready", "status": c.get("status").cloned().unwrap_or(Value::Null)}),
        )
        .collect();
    if !ready.is_empty() {
        status.insert("conditions".into(), Value::Array(ready));
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status})
}

fn strip_noise(mut v: Value) -> Value {
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    v
}

/// Decides what goes into the file. Pure: raw lists in, the ordered items out.
pub fn select_items(captured: Captured, namespace: Option<&str>, node: Option<&str>) -> Vec<Value> {
    let mut by_kind = captured.by_kind;
    let mut take = |k: Kind| by_kind.remove(&k).unwrap_or_default();
    let vmis = take(Kind::VirtualMachineInstance);
    let vmi_keys: BTreeSet<(String, String)> = vmis
        .iter()
        .map(|v| {
            (
                str_at(v, "/metadata/namespace").unwrap_or("").to_string(),
                str_at(v, "/metadata/name").unwrap_or("").to_string(),
            )
        })
        .collect();
    let vmi_uids: BTreeSet<String> = vmis
        .iter()
        .filter_map(|v| str_at(v, "/metadata/uid").map(str::to_string))
        .collect();
    let in_scope_ns =
        |v: &Value| namespace.is_none_or(|ns| str_at(v, "/metadata/namespace") == Some(ns));
    let node_scoped = node.is_some();
    let of_captured_vmi = |ns: Option<&str>, name: Option<&str>| {
        vmi_keys.contains(&(ns.unwrap_or("").to_string(), name.unwrap_or("").to_string()))
    };

    let vms: Vec<Value> = take(Kind::VirtualMachine)
        .into_iter()
        .filter(|v| {
            !node_scoped
                || of_captured_vmi(
                    str_at(v, "/metadata/namespace"),
                    str_at(v, "/metadata/name"),
                )
        })
        .collect();
    let vmims: Vec<Value> = take(Kind::VirtualMachineInstanceMigration)
        .into_iter()
        .filter(|v| {
            !node_scoped
                || of_captured_vmi(str_at(v, "/metadata/namespace"), str_at(v, "/spec/vmiName"))
        })
        .collect();
    let vmim_uids: BTreeSet<String> = vmims
        .iter()
        .filter_map(|v| str_at(v, "/metadata/uid").map(str::to_string))
        .collect();
    let pods: Vec<Value> = take(Kind::Pod)
        .into_iter()
        .map(|p| {
            let keep_whole = is_launcher(&p)
                && in_scope_ns(&p)
                && (!node_scoped
                    || str_at(&p, &label_pointer(CREATED_BY_LABEL))
                        .is_some_and(|u| vmi_uids.contains(u)));
            if keep_whole { p } else { trim_pod(&p) }
        })
        .collect();
    let pod_uids: BTreeSet<String> = pods
        .iter()
        .filter(|p| is_launcher(p))
        .filter_map(|p| str_at(p, "/metadata/uid").map(str::to_string))
        .collect();
    let events: Vec<Value> = take(Kind::Event)
        .into_iter()
        .filter(|e| {
            let kind = str_at(e, "/involvedObject/kind").unwrap_or("");
            let uid = str_at(e, "/involvedObject/uid").unwrap_or("");
            let name = str_at(e, "/involvedObject/name");
            match kind {
                "VirtualMachineInstance" | "VirtualMachine" => {
                    !node_scoped || of_captured_vmi(str_at(e, "/involvedObject/namespace"), name)
                }
                "VirtualMachineInstanceMigration" => !node_scoped || vmim_uids.contains(uid),
                "Pod" => {
                    pod_uids.contains(uid) || name.is_some_and(|n| n.starts_with("virt-launcher-"))
                }
                "Node" => node.is_none_or(|n| name == Some(n)),
                _ => false,
            }
        })
        .collect();

    let mut items = Vec::new();
    items.extend(take(Kind::KubeVirt));
    items.extend(take(Kind::MigrationPolicy));
    items.extend(take(Kind::Namespace));
    items.extend(take(Kind::Node));
    items.extend(vms);
    items.extend(vmis);
    items.extend(vmims);
    items.extend(pods);
    items.extend(take(Kind::PodDisruptionBudget));
    items.extend(take(Kind::ResourceQuota));
    items.extend(events);
    items.into_iter().map(strip_noise).collect()
}

/// What a capture narrowed by `-n NS` or `--node NODE` leaves out, one sentence each (said on
/// stderr, written into the file's `scope.leftOut`, said again by `--from`). Empty for a
/// whole capture.
pub fn left_out(namespace: Option<&str>, node: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(ns) = namespace {
        out.push(format!(
            "the snapshot holds only namespace {ns} (-n): VMs, VMIs, migrations, PDBs, quotas and events of other namespaces are left out (their pods only as node capacity); without -n it holds every namespace"
        ));
    }
    if let Some(node) = node {
        out.push(format!(
            "the snapshot holds only the VMIs on node {node} (--node): other VMIs and their VMs, migrations and events are left out (their pods only as node capacity)"
        ));
    }
    out
}

/// The objects of each kind in `items`, by `kind`.
pub fn count_kinds(items: &[Value]) -> BTreeMap<String, usize> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for item in items {
        *counts
            .entry(str_at(item, "/kind").unwrap_or("?").to_string())
            .or_default() += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_pods_keep_only_capacity_facts() {
        let pod = json!({"metadata": {"name": "app", "namespace": "x", "managedFields": [1]},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "i", "env": [{"name": "SECRET", "value": "s"}],
                     "resources": {"requests": {"memory": "1Gi"}}}]},
            "status": {"phase": "Running", "podIP": "10.0.0.1", "conditions": [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Ready", "status": "True", "message": "m", "lastTransitionTime": "2026-11-29T03:00:00Z"}]}});
        let t = trim_pod(&pod);
        // Readiness (and nothing else of the conditions) for PodDisruptionBudget arithmetic.
        assert_eq!(
            t["status"]["conditions"],
            json!([{"type": "Ready", "status": "True"}])
        );
        assert_eq!(
            t["spec"]["containers"][0]["resources"]["requests"]["memory"],
            "1Gi"
        );
        assert!(t["spec"]["containers"][0].get("env").is_none());
        assert!(t["status"].get("podIP").is_none());
        assert_eq!(t["spec"]["nodeName"], "node-1");
    }

    #[test]
    fn node_scope_keeps_only_that_nodes_vms() {
        let mut captured = Captured::default();
        captured.by_kind.insert(
            Kind::VirtualMachineInstance,
            vec![json!({"kind": "VirtualMachineInstance", "metadata": {"name": "a", "namespace": "p", "uid": "ua"}})],
        );
        captured.by_kind.insert(
            Kind::VirtualMachineInstanceMigration,
            vec![
                json!({"kind": "VirtualMachineInstanceMigration", "metadata": {"name": "m1", "namespace": "p", "uid": "m1"}, "spec": {"vmiName": "a"}}),
                json!({"kind": "VirtualMachineInstanceMigration", "metadata": {"name": "m2", "namespace": "p", "uid": "m2"}, "spec": {"vmiName": "b"}}),
            ],
        );
        let items = select_items(captured, None, Some("node-3"));
        let names: Vec<&str> = items
            .iter()
            .filter_map(|i| str_at(i, "/metadata/name"))
            .collect();
        assert_eq!(names, ["a", "m1"]);
    }

    #[test]
    fn node_scope_keeps_whole_only_the_launcher_pods_and_events_of_its_vmis() {
        let launcher = |name: &str, vmi_uid: &str| {
            json!({"kind": "Pod", "metadata": {"name": name, "namespace": "p", "uid": name,
                "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": vmi_uid}},
                "spec": {"containers": [{"name": "compute", "env": [{"name": "E", "value": "v"}]}]}})
        };
        let mut captured = Captured::default();
        captured.by_kind.insert(
            Kind::VirtualMachineInstance,
            vec![json!({"kind": "VirtualMachineInstance", "metadata": {"name": "a", "namespace": "p", "uid": "ua"}})],
        );
        captured.by_kind.insert(
            Kind::Pod,
            vec![
                launcher("virt-launcher-a-1", "ua"),
                launcher("virt-launcher-b-1", "ub"),
            ],
        );
        captured.by_kind.insert(
            Kind::Event,
            vec![
                json!({"kind": "Event", "involvedObject": {"kind": "VirtualMachineInstance", "namespace": "p", "name": "a"}}),
                json!({"kind": "Event", "involvedObject": {"kind": "VirtualMachineInstance", "namespace": "p", "name": "b"}}),
                json!({"kind": "Event", "involvedObject": {"kind": "Node", "name": "node-3"}}),
                json!({"kind": "Event", "involvedObject": {"kind": "Node", "name": "node-4"}}),
            ],
        );
        let items = select_items(captured, None, Some("node-3"));
        let pods: Vec<&Value> = items.iter().filter(|i| i["kind"] == "Pod").collect();
        // The captured VMI's launcher whole; the other VMI's only for capacity.
        assert!(pods[0]["spec"]["containers"][0].get("env").is_some());
        assert!(pods[1]["spec"]["containers"][0].get("env").is_none());
        let events: Vec<&str> = items
            .iter()
            .filter(|i| i["kind"] == "Event")
            .filter_map(|e| str_at(e, "/involvedObject/name"))
            .collect();
        assert_eq!(events, ["a", "node-3"]);
    }
}
