//! Step **placement**: the target pod a migrating VMI needs and the node it gets, as the
//! scheduler would place it ([`TargetSearch`]), consuming that node's room as VMs are placed
//! (biggest first).

use super::quota::quantity_bytes;
use super::{Hold, LAUNCHER_OVERHEAD};
use crate::model::{Pod, VirtualMachineInstance};
use crate::policy::placement::{NoFit, TargetPod, TargetSearch};
use crate::policy::scheduling::{Resources, amount, pod_request, pod_requests};

/// What the migration target pod of a VMI asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetNeeds {
    /// Its memory request: the launcher pod's, else guest memory plus [`LAUNCHER_OVERHEAD`].
    pub memory: u64,
    /// Its memory limit: the launcher pod's containers' limits, else the request.
    pub memory_limit: u64,
    /// Every request the scheduler weighs (`target_requests`).
    pub requests: Resources,
}

/// The target pod's needs, from the VMI's launcher pod on its node when one is visible.
pub fn target_needs(
    vmi: &VirtualMachineInstance,
    launcher: Option<&Pod>,
    guest_memory: Option<u64>,
) -> TargetNeeds {
    let memory = launcher
        .map(|p| pod_request(p, "memory"))
        .filter(|m| *m > 0)
        .unwrap_or_else(|| guest_memory.unwrap_or(0) + LAUNCHER_OVERHEAD);
    let memory_limit = launcher
        .and_then(|p| {
            p.spec
                .as_ref()?
                .containers
                .iter()
                .map(|c| quantity_bytes(c.resources.as_ref()?.limits.as_ref()?.get("memory")))
                .sum::<Option<u64>>()
        })
        .unwrap_or(memory);
    TargetNeeds {
        memory,
        memory_limit,
        requests: target_requests(vmi, launcher, memory),
    }
}

/// What the migration target pod requests: the source launcher pod's requests (virt-controller
/// renders the target pod from the same VMI spec: cpu, memory, hugepages, ephemeral storage,
/// GPUs and host devices, `devices.kubevirt.io/*`). Without a visible launcher pod, the
/// VMI's own requests, one of each GPU/host device, and `pod_memory` (the estimate).
fn target_requests(
    vmi: &VirtualMachineInstance,
    launcher: Option<&Pod>,
    pod_memory: u64,
) -> Resources {
    let mut requests = match launcher {
        Some(p) => pod_requests(p),
        None => {
            let mut r: Resources = vmi
                .spec
                .domain
                .resources
                .requests
                .iter()
                .map(|(k, q)| (k.clone(), amount(k, q)))
                .collect();
            let devices = &vmi.spec.domain.devices;
            for d in devices.gpus.iter().chain(&devices.host_devices) {
                if let Some(name) = d.device_name.as_deref().filter(|n| !n.is_empty()) {
                    *r.entry(name.to_string()).or_default() += 1;
                }
            }
            r
        }
    };
    requests.insert("memory".into(), i128::from(pod_memory));
    requests
}

/// Where a live migration goes, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    pub target: String,
    /// "live-migrates to NODE, about T", what the search noted, and `over_budget`.
    pub explanation: String,
}

/// Finds the target node of `pod` (its VMI runs on `source`) and takes the pod's room
/// there; `transfer` and `over_budget` ([`super::feasibility`]) complete the words.
pub fn place(
    search: &mut TargetSearch,
    pod: &TargetPod,
    source: &str,
    transfer: Option<u64>,
    over_budget: Option<String>,
) -> Result<Placed, NoFit> {
    let found = search.find(pod, source)?;
    let target = found.node;
    search.consume(&target, pod);
    let est = transfer
        .map(|t| format!(", about {}", crate::text::duration(t as i64)))
        .unwrap_or_default();
    let mut explanation = format!("live-migrates to {target}{est}");
    for note in found.notes.iter().chain(&over_budget) {
        explanation.push_str("; ");
        explanation.push_str(note);
    }
    Ok(Placed {
        target,
        explanation,
    })
}

/// The VMI has no feasible target: what holds it.
pub fn no_target(message: String) -> Hold {
    Hold {
        kind: "vmi",
        object: None,
        reason: "NoFeasibleTarget".into(),
        message,
        blocking: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use crate::policy::drain::tests::{launcher, node, vmi};
    use crate::policy::scheduling::SelectorIndex;

    const GI: u64 = 1024 * 1024 * 1024;

    #[test]
    fn needs_come_from_the_launcher_pod_else_guest_memory_plus_overhead() {
        let v = vmi("a", "node-3", None, true, "2Gi");
        let pod = launcher(&v, "3Gi");
        let with = target_needs(&v, Some(&pod), Some(2 * GI));
        assert_eq!(with.memory, 3 * GI);
        assert_eq!(with.memory_limit, 3 * GI, "no limit: the request");
        assert_eq!(with.requests.get("memory"), Some(&i128::from(3 * GI)));
        let without = target_needs(&v, None, Some(2 * GI));
        assert_eq!(without.memory, 2 * GI + LAUNCHER_OVERHEAD);
    }

    /// Places `vmis` in order from node-3 (drained), node-1 having `room` of memory.
    fn place_all(
        room: &str,
        vmis: &[VirtualMachineInstance],
        transfer: Option<u64>,
        over_budget: Option<&str>,
    ) -> Vec<Result<Placed, NoFit>> {
        let nodes = vec![node("node-1", room), node("node-3", "64Gi")];
        let drain = vec!["node-3".to_string()];
        let mut search = TargetSearch::new(
            &nodes,
            &drain,
            &BTreeMap::new(),
            SelectorIndex::new(Vec::new()),
        );
        vmis.iter()
            .map(|v| {
                let pod = TargetPod {
                    vmi: v,
                    requests: target_needs(v, None, v.guest_memory().map(|q| q.bytes())).requests,
                    pinned_cpu: None,
                };
                place(
                    &mut search,
                    &pod,
                    "node-3",
                    transfer,
                    over_budget.map(str::to_string),
                )
            })
            .collect()
    }

    #[test]
    fn placing_takes_room_so_the_second_pod_finds_none() {
        let vmis = [
            vmi("a", "node-3", None, true, "6Gi"),
            vmi("b", "node-3", None, true, "6Gi"),
        ];
        let mut results = place_all("8Gi", &vmis, Some(40), None).into_iter();
        let placed = results.next().unwrap().unwrap();
        assert_eq!(placed.target, "node-1");
        assert!(
            placed
                .explanation
                .starts_with("live-migrates to node-1, about 40s"),
            "{}",
            placed.explanation
        );
        let no_fit = results.next().unwrap().unwrap_err();
        assert!(
            no_fit.explained().contains("no node can take"),
            "{}",
            no_fit.explained()
        );
        let hold = no_target(no_fit.explained());
        assert_eq!(
            (hold.reason.as_str(), hold.blocking),
            ("NoFeasibleTarget", true)
        );
    }

    #[test]
    fn the_over_budget_words_follow_the_notes() {
        let vmis = [vmi("a", "node-3", None, true, "2Gi")];
        let placed = place_all("64Gi", &vmis, None, Some("too slow"))
            .remove(0)
            .unwrap();
        // No transfer estimate; the search's notes first, then the budget's words.
        assert!(
            placed
                .explanation
                .starts_with("live-migrates to node-1; node-1 reports"),
            "{}",
            placed.explanation
        );
        assert!(placed.explanation.ends_with("; too slow"));
    }
}
