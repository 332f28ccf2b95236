//! Which virt-launcher pod is which: during a migration both pods exist, and an operator
//! must read the logs of the live one, not of a pod that is already gone.

use std::collections::BTreeMap;

use serde::Serialize;

use super::links::{CREATED_BY_LABEL, MIGRATION_JOB_UID_LABEL};
use crate::model::vmi::{MigrationMode, MigrationState};
use crate::model::{Pod, VirtualMachineInstance};

pub const LAUNCHER_LABEL: &str = "kubevirt.io";
pub const LAUNCHER_VALUE: &str = "virt-launcher";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PodRole {
    /// The migration source: runs the guest during pre-copy.
    Source,
    /// The migration target.
    Target,
    /// The pod that runs the guest (no migration in flight).
    Active,
    /// Completed or failed: the guest is not here any more.
    Finished,
    /// Listed by the VMI but not found, or not explained by the above.
    Other,
}

impl PodRole {
    pub fn as_str(self) -> &'static str {
        match self {
            PodRole::Source => "source",
            PodRole::Target => "target",
            PodRole::Active => "active",
            PodRole::Finished => "finished",
            PodRole::Other => "other",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LauncherPod {
    pub uid: String,
    /// None when the VMI lists a pod UID that no longer exists.
    pub name: Option<String>,
    pub node: Option<String>,
    pub phase: Option<String>,
    pub role: PodRole,
    /// The guest's CPU runs in this pod now.
    pub live: bool,
}

fn pod_uid(pod: &Pod) -> Option<&str> {
    pod.metadata.uid.as_deref()
}

/// A pod's labels (none: empty).
pub fn pod_labels(p: &Pod) -> &BTreeMap<String, String> {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    p.metadata.labels.as_ref().unwrap_or(&EMPTY)
}

fn pod_label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

fn pod_phase(pod: &Pod) -> Option<&str> {
    pod.status.as_ref()?.phase.as_deref()
}

/// True when `pod` is a launcher pod of `vmi` (by the created-by label or `activePods`).
pub fn belongs_to(pod: &Pod, vmi: &VirtualMachineInstance) -> bool {
    super::index::work::step(1);
    let Some(vmi_uid) = vmi.uid() else {
        return false;
    };
    pod_label(pod, CREATED_BY_LABEL) == Some(vmi_uid)
        || pod_uid(pod).is_some_and(|u| vmi.status.active_pods.contains_key(u))
}

/// The launcher pods of `vmi` with their roles, from `pods` (all pods, or the candidates a
/// [`PodIndex`](super::index::PodIndex) found for it). `migration` is the VMI's migration state
/// when it belongs to a migration in flight; `in_flight_migration_uid` is the UID of a
/// non-final VMIM of this VMI (its target pod may exist before the hand-off).
pub fn launcher_pods<'p>(
    vmi: &VirtualMachineInstance,
    pods: impl IntoIterator<Item = &'p Pod>,
    migration: Option<&MigrationState>,
    in_flight_migration_uid: Option<&str>,
) -> Vec<LauncherPod> {
    let mut result: Vec<LauncherPod> = Vec::new();
    let post_copy = migration.is_some_and(|m| m.mode == Some(MigrationMode::PostCopy));
    for pod in pods.into_iter().filter(|p| belongs_to(p, vmi)) {
        let name = pod.metadata.name.clone();
        let node = pod.spec.as_ref().and_then(|s| s.node_name.clone());
        let phase = pod_phase(pod).map(str::to_string);
        let finished = matches!(phase.as_deref(), Some("Succeeded" | "Failed"));
        let is_target = migration.is_some_and(|m| m.target_pod.is_some() && m.target_pod == name)
            || in_flight_migration_uid
                .is_some_and(|uid| pod_label(pod, MIGRATION_JOB_UID_LABEL) == Some(uid));
        let is_source = migration.is_some_and(|m| m.source_pod.is_some() && m.source_pod == name);
        let (role, live) = if finished {
            (PodRole::Finished, false)
        } else if is_target {
            (PodRole::Target, post_copy)
        } else if is_source {
            (PodRole::Source, !post_copy)
        } else if node.is_some()
            && node == vmi.status.node_name
            && phase.as_deref() == Some("Running")
        {
            (PodRole::Active, true)
        } else {
            (PodRole::Other, false)
        };
        result.push(LauncherPod {
            uid: pod_uid(pod).unwrap_or("").to_string(),
            name,
            node,
            phase,
            role,
            live,
        });
    }
    // Pods the VMI still lists but that are gone from the cluster.
    for (uid, node) in &vmi.status.active_pods {
        if !result.iter().any(|p| &p.uid == uid) {
            result.push(LauncherPod {
                uid: uid.clone(),
                name: None,
                node: Some(node.clone()),
                phase: None,
                role: PodRole::Other,
                live: false,
            });
        }
    }
    result.sort_by_key(|p| match p.role {
        PodRole::Source | PodRole::Active => 0,
        PodRole::Target => 1,
        PodRole::Other => 2,
        PodRole::Finished => 3,
    });
    result
}

/// Why a pod is not scheduled: its `PodScheduled=False` condition's message
/// ("unschedulable" when it gives none); `None` while it is scheduled or not judged yet.
pub fn unschedulable_message(pod: &k8s_openapi::api::core::v1::Pod) -> Option<String> {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.type_ == "PodScheduled" && c.status == "False")
        })
        .map(|c| c.message.clone().unwrap_or_else(|| "unschedulable".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, uid: &str, node: &str, phase: &str, extra_labels: serde_json::Value) -> Pod {
        let mut labels =
            json!({"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": "vmi-uid"});
        if let (Some(l), Some(e)) = (labels.as_object_mut(), extra_labels.as_object()) {
            l.extend(e.clone());
        }
        serde_json::from_value(
            json!({"metadata": {"name": name, "uid": uid, "labels": labels},
            "spec": {"nodeName": node, "containers": []}, "status": {"phase": phase}}),
        )
        .unwrap()
    }

    fn vmi() -> VirtualMachineInstance {
        serde_json::from_value(json!({"metadata": {"name": "a", "uid": "vmi-uid"},
            "status": {"nodeName": "node-3", "activePods": {"p1": "node-3", "p2": "node-1"}}}))
        .unwrap()
    }

    #[test]
    fn during_pre_copy_the_source_is_live() {
        let pods = [
            pod("virt-launcher-a-src", "p1", "node-3", "Running", json!({})),
            pod(
                "virt-launcher-a-tgt",
                "p2",
                "node-1",
                "Running",
                json!({"kubevirt.io/migrationJobUID": "m1"}),
            ),
        ];
        let state = MigrationState {
            source_pod: Some("virt-launcher-a-src".into()),
            target_pod: Some("virt-launcher-a-tgt".into()),
            mode: Some(MigrationMode::PreCopy),
            ..Default::default()
        };
        let result = launcher_pods(&vmi(), &pods, Some(&state), Some("m1"));
        assert_eq!(result[0].role, PodRole::Source);
        assert!(result[0].live);
        assert_eq!(result[1].role, PodRole::Target);
        assert!(!result[1].live);
    }

    #[test]
    fn in_post_copy_the_target_is_live() {
        let pods = [
            pod("virt-launcher-a-src", "p1", "node-3", "Running", json!({})),
            pod("virt-launcher-a-tgt", "p2", "node-1", "Running", json!({})),
        ];
        let state = MigrationState {
            source_pod: Some("virt-launcher-a-src".into()),
            target_pod: Some("virt-launcher-a-tgt".into()),
            mode: Some(MigrationMode::PostCopy),
            ..Default::default()
        };
        let result = launcher_pods(&vmi(), &pods, Some(&state), None);
        let target = result.iter().find(|p| p.role == PodRole::Target).unwrap();
        assert!(target.live);
    }

    #[test]
    fn a_target_pod_before_hand_off_is_found_by_its_job_label() {
        let pods = [
            pod("virt-launcher-a-src", "p1", "node-3", "Running", json!({})),
            pod(
                "virt-launcher-a-new",
                "p3",
                "",
                "Pending",
                json!({"kubevirt.io/migrationJobUID": "m1"}),
            ),
        ];
        let result = launcher_pods(&vmi(), &pods, None, Some("m1"));
        assert_eq!(result[0].role, PodRole::Active);
        assert_eq!(result[1].role, PodRole::Target);
        // p2 is listed by the VMI but no longer exists.
        assert!(result.iter().any(|p| p.uid == "p2" && p.name.is_none()));
    }

    #[test]
    fn completed_pods_are_finished() {
        let pods = [pod(
            "virt-launcher-a-old",
            "p2",
            "node-1",
            "Succeeded",
            json!({}),
        )];
        let result = launcher_pods(&vmi(), &pods, None, None);
        let old = result.iter().find(|p| p.uid == "p2").unwrap();
        assert_eq!(old.role, PodRole::Finished);
        assert!(!old.live);
    }
}
