//! Indexes built once per command, so that every join (pods ↔ VMIs, VMIMs ↔ VMIs, quotas ↔
//! namespaces, nodes by name) is a hash lookup and a command's cost stays linear in the
//! objects it reads: 10,000 VMIs is an ordinary cluster (issue 9).
//!
//! Every build and lookup reports its work to [`work`], so tests can check that the work of
//! a whole command grows linearly, without timing anything.

use std::collections::HashMap;

use crate::model::{Pod, ResourceQuota, VirtualMachineInstance, VirtualMachineInstanceMigration};
use crate::policy::links::{CREATED_BY_LABEL, MIGRATION_JOB_UID_LABEL};

/// Counts the work of joins: every object an index takes in, every lookup and every
/// candidate a lookup (or a search such as target selection) examines adds one.
///
/// A thread-local counter: the pure layers run on one thread, so the count is exact, and a
/// test can read it without any clock. It costs one add when nobody reads it.
pub mod work {
    use std::cell::Cell;

    thread_local! {
        static STEPS: Cell<u64> = const { Cell::new(0) };
    }

    /// Records `n` units of work.
    #[inline]
    pub fn step(n: usize) {
        STEPS.with(|s| s.set(s.get().wrapping_add(n as u64)));
    }

    /// Runs `f` and returns its result with the work it recorded.
    pub fn count<R>(f: impl FnOnce() -> R) -> (R, u64) {
        let before = STEPS.with(Cell::get);
        let result = f();
        let after = STEPS.with(Cell::get);
        (result, after.wrapping_sub(before))
    }
}

fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

/// Pods by the keys KubeVirt links them with. Lookups return pods in input order.
#[derive(Debug, Default)]
pub struct PodIndex<'a> {
    /// `kubevirt.io/created-by` (the VMI's UID) → launcher pods.
    by_created_by: HashMap<&'a str, Vec<(usize, &'a Pod)>>,
    /// Pod UID → pod (the keys of a VMI's `status.activePods`).
    by_uid: HashMap<&'a str, (usize, &'a Pod)>,
    /// `kubevirt.io/migrationJobUID` (a VMIM's UID) → its target pods.
    by_job: HashMap<&'a str, Vec<&'a Pod>>,
    /// namespace → name → pod.
    by_name: HashMap<&'a str, HashMap<&'a str, &'a Pod>>,
}

impl<'a> PodIndex<'a> {
    pub fn new(pods: &'a [Pod]) -> Self {
        Self::of(pods.iter())
    }

    pub fn of(pods: impl IntoIterator<Item = &'a Pod>) -> Self {
        let mut index = PodIndex::default();
        for (position, pod) in pods.into_iter().enumerate() {
            work::step(1);
            if let Some(vmi_uid) = label(pod, CREATED_BY_LABEL) {
                index
                    .by_created_by
                    .entry(vmi_uid)
                    .or_default()
                    .push((position, pod));
            }
            if let Some(uid) = pod.metadata.uid.as_deref() {
                index.by_uid.insert(uid, (position, pod));
            }
            if let Some(job) = label(pod, MIGRATION_JOB_UID_LABEL) {
                index.by_job.entry(job).or_default().push(pod);
            }
            if let Some(name) = pod.metadata.name.as_deref() {
                let namespace = pod.metadata.namespace.as_deref().unwrap_or("");
                index
                    .by_name
                    .entry(namespace)
                    .or_default()
                    .entry(name)
                    .or_insert(pod);
            }
        }
        index
    }

    /// The pods that may belong to `vmi`: those it created (label `kubevirt.io/created-by`)
    /// and those its `status.activePods` lists, each once, in input order.
    pub fn candidates_for(&self, vmi: &VirtualMachineInstance) -> Vec<&'a Pod> {
        work::step(1);
        let mut found: Vec<(usize, &'a Pod)> = vmi
            .uid()
            .and_then(|uid| self.by_created_by.get(uid))
            .cloned()
            .unwrap_or_default();
        for uid in vmi.status.active_pods.keys() {
            work::step(1);
            if let Some(&(position, pod)) = self.by_uid.get(uid.as_str())
                && !found.iter().any(|(p, _)| *p == position)
            {
                found.push((position, pod));
            }
        }
        work::step(found.len());
        found.sort_by_key(|(position, _)| *position);
        found.into_iter().map(|(_, pod)| pod).collect()
    }

    /// The first target pod of the migration with this UID.
    pub fn target_of(&self, migration_uid: Option<&str>) -> Option<&'a Pod> {
        work::step(1);
        self.by_job.get(migration_uid?)?.first().copied()
    }

    pub fn by_name(&self, namespace: &str, name: &str) -> Option<&'a Pod> {
        work::step(1);
        self.by_name.get(namespace)?.get(name).copied()
    }
}

/// Migrations by their VMI and by UID.
#[derive(Debug, Default)]
pub struct MigrationIndex<'a> {
    /// namespace → VMI name → migrations.
    by_vmi: HashMap<&'a str, HashMap<&'a str, Vec<&'a VirtualMachineInstanceMigration>>>,
    by_uid: HashMap<&'a str, &'a VirtualMachineInstanceMigration>,
}

impl<'a> MigrationIndex<'a> {
    pub fn new(migrations: &'a [VirtualMachineInstanceMigration]) -> Self {
        let mut index = MigrationIndex::default();
        for m in migrations {
            work::step(1);
            index
                .by_vmi
                .entry(m.namespace())
                .or_default()
                .entry(m.spec.vmi_name.as_str())
                .or_default()
                .push(m);
            if let Some(uid) = m.uid() {
                index.by_uid.entry(uid).or_insert(m);
            }
        }
        index
    }

    /// Every migration of the VMI `namespace/name`, in input order.
    pub fn of_vmi(&self, namespace: &str, name: &str) -> &[&'a VirtualMachineInstanceMigration] {
        work::step(1);
        let found = self
            .by_vmi
            .get(namespace)
            .and_then(|by_name| by_name.get(name))
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        work::step(found.len());
        found
    }

    /// The newest migration of the VMI that is not final (Succeeded/Failed).
    pub fn active_of(
        &self,
        namespace: &str,
        name: &str,
    ) -> Option<&'a VirtualMachineInstanceMigration> {
        self.of_vmi(namespace, name)
            .iter()
            .copied()
            .filter(|m| !m.is_final())
            .max_by_key(|m| m.metadata.creation_timestamp.as_ref().map(|t| t.0))
    }

    pub fn by_uid(&self, uid: Option<&str>) -> Option<&'a VirtualMachineInstanceMigration> {
        work::step(1);
        self.by_uid.get(uid?).copied()
    }
}

/// ResourceQuotas by namespace.
pub fn quotas_by_namespace(quotas: &[ResourceQuota]) -> HashMap<&str, Vec<&ResourceQuota>> {
    let mut map: HashMap<&str, Vec<&ResourceQuota>> = HashMap::new();
    for q in quotas {
        work::step(1);
        map.entry(q.metadata.namespace.as_deref().unwrap_or(""))
            .or_default()
            .push(q);
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, uid: &str, labels: serde_json::Value) -> Pod {
        serde_json::from_value(
            json!({"metadata": {"name": name, "namespace": "ns", "uid": uid,
            "labels": labels}, "spec": {"containers": []}}),
        )
        .unwrap()
    }

    #[test]
    fn candidates_come_from_the_label_and_active_pods_once_in_input_order() {
        let pods = [
            pod("b", "p-b", json!({"kubevirt.io/created-by": "vmi-1"})),
            pod("a", "p-a", json!({})),
            pod("c", "p-c", json!({"kubevirt.io/created-by": "vmi-1"})),
            pod("d", "p-d", json!({"kubevirt.io/created-by": "vmi-2"})),
        ];
        let vmi: VirtualMachineInstance = serde_json::from_value(json!({
            "metadata": {"name": "v", "namespace": "ns", "uid": "vmi-1"},
            "status": {"activePods": {"p-a": "n1", "p-c": "n2", "gone": "n3"}}}))
        .unwrap();
        let index = PodIndex::new(&pods);
        let names: Vec<&str> = index
            .candidates_for(&vmi)
            .iter()
            .filter_map(|p| p.metadata.name.as_deref())
            .collect();
        assert_eq!(names, ["b", "a", "c"]);
    }

    #[test]
    fn the_active_migration_is_the_newest_unfinished_one_of_that_vmi() {
        let m = |name: &str, ns: &str, vmi: &str, phase: &str, created: &str| {
            serde_json::from_value::<VirtualMachineInstanceMigration>(json!({
                "metadata": {"name": name, "namespace": ns, "uid": format!("u-{name}"),
                    "creationTimestamp": created},
                "spec": {"vmiName": vmi}, "status": {"phase": phase}}))
            .unwrap()
        };
        let ms = [
            m("old", "a", "vm", "Running", "2026-01-01T00:00:00Z"),
            m("new", "a", "vm", "Pending", "2026-01-02T00:00:00Z"),
            m("done", "a", "vm", "Succeeded", "2026-01-03T00:00:00Z"),
            m("other-ns", "b", "vm", "Running", "2026-01-04T00:00:00Z"),
        ];
        let index = MigrationIndex::new(&ms);
        assert_eq!(index.active_of("a", "vm").map(|m| m.name()), Some("new"));
        assert_eq!(
            index.active_of("b", "vm").map(|m| m.name()),
            Some("other-ns")
        );
        assert!(index.active_of("c", "vm").is_none());
        assert_eq!(index.of_vmi("a", "vm").len(), 3);
        assert_eq!(index.by_uid(Some("u-done")).map(|m| m.name()), Some("done"));
    }

    #[test]
    fn work_is_counted_per_thread_and_per_call() {
        let pods: Vec<Pod> = (0..10)
            .map(|i| pod(&format!("p{i}"), &format!("u{i}"), json!({})))
            .collect();
        let (_, steps) = work::count(|| PodIndex::new(&pods));
        assert_eq!(steps, 10);
        let (_, none) = work::count(|| ());
        assert_eq!(none, 0);
    }
}
