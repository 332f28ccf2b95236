//! Step **quota** (the namespace's side of "PDBs/quota"; [`super::pdbs`] is the other): does
//! the namespace's ResourceQuota admit one more launcher pod, the migration target pod?

use super::Hold;
use crate::model::{Quantity, ResourceQuota};

pub(super) fn quantity_bytes(
    q: Option<&k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
) -> Option<u64> {
    q.and_then(|q| Quantity::parse(&q.0).ok())
        .map(|q| q.bytes())
}

/// Quota headroom for one more launcher pod (its memory, memory limit, CPU request in
/// millicores and the pod itself), or the reason there is none.
pub fn quota_problem(
    quotas: &[&ResourceQuota],
    pod_memory: u64,
    pod_memory_limit: u64,
    pod_cpu_millis: i128,
) -> Option<(String, String)> {
    for q in quotas {
        let name = q.metadata.name.clone().unwrap_or_default();
        let Some(status) = q.status.as_ref() else {
            continue;
        };
        let (Some(hard), used) = (
            status.hard.as_ref(),
            status.used.clone().unwrap_or_default(),
        ) else {
            continue;
        };
        for (resource, needed) in [
            ("requests.memory", pod_memory),
            ("memory", pod_memory),
            ("limits.memory", pod_memory_limit),
            ("pods", 1),
        ] {
            let Some(h) = quantity_bytes(hard.get(resource)) else {
                continue;
            };
            let u = quantity_bytes(used.get(resource)).unwrap_or(0);
            let free = h.saturating_sub(u);
            if free < needed {
                let (fmt_free, fmt_needed) = if resource == "pods" {
                    (free.to_string(), needed.to_string())
                } else {
                    (crate::text::bytes(free), crate::text::bytes(needed))
                };
                return Some((
                    name.clone(),
                    format!(
                        "{resource} has {fmt_free} left, the migration target pod needs {fmt_needed} (migrationRejectedByResourceQuota)"
                    ),
                ));
            }
        }
        // CPU in millicores, as the quota admission counts `requests.cpu` (and `cpu`).
        for resource in ["requests.cpu", "cpu"] {
            let millis = |q: Option<&k8s_openapi::apimachinery::pkg::api::resource::Quantity>| {
                q.and_then(|q| Quantity::parse(&q.0).ok())
                    .map(|q| q.millis())
            };
            let Some(h) = millis(hard.get(resource)) else {
                continue;
            };
            let free = (h - millis(used.get(resource)).unwrap_or(0)).max(0);
            if pod_cpu_millis > 0 && free < pod_cpu_millis {
                return Some((
                    name.clone(),
                    format!(
                        "{resource} has {free}m left, the migration target pod needs {pod_cpu_millis}m (migrationRejectedByResourceQuota)"
                    ),
                ));
            }
        }
    }
    None
}

/// The quota holds the VMI: the target pod is refused (migrationRejectedByResourceQuota).
pub fn quota_hold(quota: String, message: String) -> Hold {
    Hold {
        kind: "quota",
        object: Some(quota),
        reason: "migrationRejectedByResourceQuota".into(),
        message,
        blocking: true,
    }
}

/// What makes room: one more launcher pod's memory in the quota.
pub fn quota_fix(namespace: &str, quota: &str, pod_memory: u64) -> String {
    format!(
        "raise ResourceQuota {namespace}/{quota} by one launcher pod ({} of memory)",
        crate::text::bytes(pod_memory)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::ResourceQuotaStatus;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity as Q;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    const GI: u64 = 1024 * 1024 * 1024;

    fn quota(hard: &[(&str, &str)], used: &[(&str, &str)]) -> ResourceQuota {
        let list = |l: &[(&str, &str)]| -> BTreeMap<String, Q> {
            l.iter()
                .map(|(k, v)| (k.to_string(), Q(v.to_string())))
                .collect()
        };
        ResourceQuota {
            metadata: ObjectMeta {
                name: Some("compute".into()),
                namespace: Some("prod".into()),
                ..Default::default()
            },
            spec: None,
            status: Some(ResourceQuotaStatus {
                hard: Some(list(hard)),
                used: Some(list(used)),
            }),
        }
    }

    #[test]
    fn a_cpu_quota_without_room_for_the_target_pods_request_holds_it() {
        // examples/incidents' quota/compute: 16 CPUs, 14500m used; the target pod asks 2.
        let q = quota(&[("requests.cpu", "16")], &[("requests.cpu", "14500m")]);
        let (name, message) = quota_problem(&[&q], GI, GI, 2000).unwrap();
        assert_eq!(name, "compute");
        assert_eq!(
            message,
            "requests.cpu has 1500m left, the migration target pod needs 2000m (migrationRejectedByResourceQuota)"
        );
        assert_eq!(quota_problem(&[&q], GI, GI, 1500), None, "1500m fits");
        assert_eq!(
            quota_problem(&[&q], GI, GI, 0),
            None,
            "no request, nothing counted"
        );
    }

    #[test]
    fn memory_short_by_a_launcher_pod_is_a_problem() {
        let q = quota(
            &[("requests.memory", "10Gi")],
            &[("requests.memory", "8Gi")],
        );
        let (name, message) = quota_problem(&[&q], 3 * GI, 3 * GI, 0).unwrap();
        assert_eq!(name, "compute");
        assert_eq!(
            message,
            "requests.memory has 2.0 GiB left, the migration target pod needs 3.0 GiB (migrationRejectedByResourceQuota)"
        );
        assert_eq!(quota_problem(&[&q], GI, GI, 0), None, "1 GiB fits");
    }

    #[test]
    fn pods_and_limits_count_too_and_a_quota_without_status_is_skipped() {
        let q = quota(&[("pods", "10")], &[("pods", "10")]);
        let (_, message) = quota_problem(&[&q], GI, GI, 0).unwrap();
        assert!(
            message.starts_with("pods has 0 left, the migration target pod needs 1"),
            "{message}"
        );
        let q = quota(&[("limits.memory", "4Gi")], &[]);
        assert!(
            quota_problem(&[&q], GI, 5 * GI, 0).is_some(),
            "the limit is 5 GiB"
        );
        let mut unsynced = quota(&[("pods", "0")], &[]);
        unsynced.status = None;
        assert_eq!(quota_problem(&[&unsynced], GI, GI, 0), None);
    }

    #[test]
    fn the_hold_names_the_quota_and_the_fix_the_memory() {
        let hold = quota_hold("compute".into(), "full".into());
        assert_eq!(
            (hold.kind, hold.object.as_deref(), hold.blocking),
            ("quota", Some("compute"), true)
        );
        assert_eq!(
            quota_fix("prod", "compute", 2 * GI),
            "raise ResourceQuota prod/compute by one launcher pod (2.0 GiB of memory)"
        );
    }
}
