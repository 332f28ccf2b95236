//! What a drain of its node would do to each VMI, as [`super::plan_drain`] decides it, for
//! `status` (issue 33): one truth. Each node's VMIs are planned as `vmctl plan-drain NODE`
//! plans them; the fates that need no placement (blocks-drain, shutdown,
//! shutdown-not-migratable, external), with the blockers that hold each, are kept. Where a
//! VMI goes and whether a node takes it (live-migrate, already-migrating, no-target) need
//! the cluster's capacity, which `status` does not read: of those it claims nothing.
//! Pure: plain objects in, fates out.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use super::{Action, DrainInputs, plan_drain, vmi_node};
use crate::model::{
    KubeVirt, Pod, PodDisruptionBudget, Time, VirtualMachineInstance,
    VirtualMachineInstanceMigration,
};
use crate::policy::index::work;
use crate::policy::links::CREATED_BY_LABEL;
use crate::policy::pods::pod_labels;

/// What [`fates`] reads: what `status` has.
#[derive(Debug, Clone)]
pub struct FateInputs<'a> {
    pub vmis: &'a [VirtualMachineInstance],
    /// The cluster's nodes: a VMI on a node not among them gets no fate (plan-drain refuses
    /// a node it cannot find).
    pub nodes: &'a [String],
    pub vmims: &'a [VirtualMachineInstanceMigration],
    /// The launcher pods (at least those on the VMIs' nodes).
    pub pods: &'a [Pod],
    /// None: not read (the fates then say so, a PDB may still refuse a shutdown).
    pub pdbs: Option<&'a [PodDisruptionBudget]>,
    pub kubevirt: Option<&'a KubeVirt>,
    /// The API server's version: how the eviction API reads a PDB's `selector: {}`.
    pub server_version: Option<&'a crate::model::ServerVersion>,
    pub now: Option<Time>,
    pub loops: crate::triage::LoopThresholds,
}

/// What a drain of `node` does to one VMI, in plan-drain's terms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DrainFate {
    /// The node whose drain this is (the VMI's node).
    pub node: String,
    /// plan-drain's action for the VMI.
    pub action: Action,
    /// The blockers that hold it, `KIND namespace/name` (plan-drain's `blockers` with
    /// `blocking: true`): a PodDisruptionBudget refusing its shutdown, the VMI itself.
    pub blocked_by: Vec<String>,
    /// The PodDisruptionBudgets were read: false, a PDB may still refuse a shutdown.
    pub pdbs_read: bool,
}

impl DrainFate {
    /// The drain stops at this VMI: it blocks, or a blocker holds its eviction.
    pub fn blocks(&self) -> bool {
        self.action.blocks() || !self.blocked_by.is_empty()
    }
}

/// The fates status may claim: those decided without placing the VMI.
fn claimed(action: Action) -> bool {
    !matches!(
        action,
        Action::LiveMigrate | Action::AlreadyMigrating | Action::NoTarget
    )
}

/// `(namespace, name) -> fate` for every VMI whose fate needs no placement, each node
/// planned on its own (as `plan-drain NODE`). Linear in what it reads: each VMI, pod,
/// migration and PDB goes to the plans of the nodes it concerns.
pub fn fates(inputs: &FateInputs) -> BTreeMap<(String, String), DrainFate> {
    let known: HashSet<&str> = inputs.nodes.iter().map(String::as_str).collect();
    let mut by_node: BTreeMap<String, Vec<&VirtualMachineInstance>> = BTreeMap::new();
    for vmi in inputs.vmis {
        work::step(1);
        let node = vmi_node(vmi);
        if !known.contains(node.as_str()) || vmi.status.phase.as_ref().is_some_and(|p| p.is_final())
        {
            continue;
        }
        by_node.entry(node).or_default().push(vmi);
    }
    let mut migrations: HashMap<(&str, &str), Vec<&VirtualMachineInstanceMigration>> =
        HashMap::new();
    for m in inputs.vmims {
        work::step(1);
        migrations
            .entry((m.namespace(), m.spec.vmi_name.as_str()))
            .or_default()
            .push(m);
    }
    let mut pods_on: HashMap<&str, Vec<&Pod>> = HashMap::new();
    let mut pods_of: HashMap<&str, Vec<&Pod>> = HashMap::new();
    for p in inputs.pods {
        work::step(1);
        if let Some(node) = p.spec.as_ref().and_then(|s| s.node_name.as_deref()) {
            pods_on.entry(node).or_default().push(p);
        }
        if let Some(uid) = pod_labels(p).get(CREATED_BY_LABEL) {
            pods_of.entry(uid.as_str()).or_default().push(p);
        }
    }
    let mut pdbs_in: HashMap<&str, Vec<&PodDisruptionBudget>> = HashMap::new();
    for p in inputs.pdbs.unwrap_or(&[]) {
        work::step(1);
        pdbs_in
            .entry(p.metadata.namespace.as_deref().unwrap_or(""))
            .or_default()
            .push(p);
    }

    // A PDB the disruption controller has not synced is judged from every pod it selects,
    // as plan-drain does (`pods_of_unsynced_pdbs`): those pods go to every plan of their
    // namespace.
    let mut unsynced_in: HashMap<String, Vec<Pod>> = HashMap::new();
    if let Some(pdbs) = inputs.pdbs.filter(|p| !p.is_empty()) {
        let (kept, ()) = super::pods_of_unsynced_pdbs(inputs.pods.iter().cloned(), pdbs, |rest| {
            rest.for_each(drop)
        });
        for p in kept {
            unsynced_in
                .entry(p.metadata.namespace.clone().unwrap_or_default())
                .or_default()
                .push(p);
        }
    }

    let mut out = BTreeMap::new();
    for (node, vmis) in by_node {
        let namespaces: HashSet<&str> = vmis.iter().map(|v| v.namespace()).collect();
        let mut pods: Vec<Pod> = Vec::new();
        let mut seen: HashSet<(Option<String>, Option<String>)> = HashSet::new();
        let theirs = vmis
            .iter()
            .filter_map(|v| v.uid())
            .flat_map(|uid| pods_of.get(uid).into_iter().flatten().copied());
        let selected = namespaces
            .iter()
            .flat_map(|ns| unsynced_in.get(*ns).into_iter().flatten());
        for p in pods_on
            .get(node.as_str())
            .into_iter()
            .flatten()
            .copied()
            .chain(theirs)
            .chain(selected)
        {
            if seen.insert((p.metadata.namespace.clone(), p.metadata.name.clone())) {
                pods.push(p.clone());
            }
        }
        let plan_inputs = DrainInputs {
            drain: vec![node.clone()],
            vmis: vmis.iter().map(|v| (*v).clone()).collect(),
            vmims: vmis
                .iter()
                .flat_map(|v| {
                    migrations
                        .get(&(v.namespace(), v.name()))
                        .into_iter()
                        .flatten()
                })
                .map(|m| (*m).clone())
                .collect(),
            pods,
            pdbs: namespaces
                .iter()
                .flat_map(|ns| pdbs_in.get(ns).into_iter().flatten())
                .map(|p| (*p).clone())
                .collect(),
            kubevirt: inputs.kubevirt.cloned(),
            server_version: inputs.server_version.cloned(),
            now: inputs.now.clone(),
            loops: inputs.loops,
            ..DrainInputs::default()
        };
        let plan = plan_drain(&plan_inputs);
        for row in plan.vmis.iter().filter(|r| claimed(r.action)) {
            let id = row.id();
            let mut blocked_by: Vec<String> = plan
                .blockers
                .iter()
                .filter(|b| {
                    // Quotas status does not read: a quota's blocker (named, or KubeVirt's
                    // migrationRejectedByResourceQuota on a migration in flight) is not
                    // named here; the action says it blocks.
                    b.blocking
                        && b.kind != "quota"
                        && b.reason != "migrationRejectedByResourceQuota"
                        && b.vmis.contains(&id)
                })
                .map(|b| {
                    format!(
                        "{} {}/{}",
                        b.kind,
                        b.namespace.as_deref().unwrap_or(""),
                        b.name
                    )
                })
                .collect();
            blocked_by.sort();
            out.insert(
                (row.namespace.clone(), row.name.clone()),
                DrainFate {
                    node: node.clone(),
                    action: row.action,
                    blocked_by,
                    pdbs_read: inputs.pdbs.is_some(),
                },
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vmi(name: &str, strategy: &str, migratable: bool) -> VirtualMachineInstance {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "prod", "uid": format!("uid-{name}")},
            "spec": {"evictionStrategy": strategy},
            "status": {"phase": "Running", "nodeName": "node-1",
                "conditions": [{"type": "LiveMigratable",
                    "status": if migratable {"True"} else {"False"},
                    "reason": "InterfaceNotLiveMigratable"}]}
        }))
        .unwrap()
    }

    fn launcher(vmi: &str) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": format!("virt-launcher-{vmi}-x"), "namespace": "prod",
                "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": format!("uid-{vmi}"),
                    "app": vmi}},
            "spec": {"nodeName": "node-1", "containers": []},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        }))
        .unwrap()
    }

    fn pdb() -> PodDisruptionBudget {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "gw-pdb", "namespace": "prod", "generation": 1},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "gw"}}},
            "status": {"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 1,
                "desiredHealthy": 1, "expectedPods": 1}
        }))
        .unwrap()
    }

    #[test]
    fn a_pdb_that_refuses_a_shutdown_is_named_and_a_migration_is_not_claimed() {
        let vmis = vec![
            vmi("gw", "LiveMigrateIfPossible", false),
            vmi("web", "LiveMigrate", true),
            vmi("db", "LiveMigrate", false),
        ];
        let pods = vec![launcher("gw"), launcher("web"), launcher("db")];
        let pdbs = vec![pdb()];
        let nodes = vec!["node-1".to_string()];
        let inputs = FateInputs {
            vmis: &vmis,
            nodes: &nodes,
            vmims: &[],
            pods: &pods,
            pdbs: Some(&pdbs),
            kubevirt: None,
            server_version: None,
            now: None,
            loops: Default::default(),
        };
        let f = fates(&inputs);
        let gw = &f[&("prod".to_string(), "gw".to_string())];
        assert_eq!(gw.action, Action::ShutdownNotMigratable);
        assert_eq!(gw.blocked_by, vec!["pdb prod/gw-pdb".to_string()]);
        assert!(gw.blocks());
        let db = &f[&("prod".to_string(), "db".to_string())];
        assert_eq!(db.action, Action::BlocksDrain);
        assert!(!f.contains_key(&("prod".to_string(), "web".to_string())));

        // Without the PDBs: a shutdown, said as unsure of the PDBs.
        let f = fates(&FateInputs {
            pdbs: None,
            ..inputs.clone()
        });
        let gw = &f[&("prod".to_string(), "gw".to_string())];
        assert!(gw.blocked_by.is_empty() && !gw.pdbs_read);

        // A node the cluster does not list: no fate (plan-drain would refuse the node).
        assert!(
            fates(&FateInputs {
                nodes: &[],
                ..inputs.clone()
            })
            .is_empty()
        );
    }
}
