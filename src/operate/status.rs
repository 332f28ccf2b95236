//! What `vmctl status` reads (issue 33: also what plan-drain's decision of a drain reads
//! besides: the PodDisruptionBudgets in scope and the server's version), and the slim form
//! of a launcher pod the fleet views keep.

use k8s_openapi::api::core::v1::{PodSpec, PodStatus};

use crate::cli::StatusArgs;
use crate::cluster::source::{list_lenient, optional};
use crate::cluster::{Kind, Query};
use crate::context::Context;
use crate::error::Result;
use crate::model::{
    KubeVirt, MigrationPolicy, Node, Pod, PodDisruptionBudget, PodFacts, VirtualMachineInstance,
    VirtualMachineInstanceMigration,
};
use crate::policy::pods::{LAUNCHER_LABEL, LAUNCHER_VALUE};
use crate::policy::status::{DrainFacts, NodeFacts, StatusInputs};

/// The VMIs `status` reads: `-l SELECTOR` and `--node NODE` (the VMI's node label).
pub fn vmi_selector(args: &StatusArgs) -> Result<crate::cluster::selector::LabelSelector> {
    Ok(crate::cluster::selector::LabelSelector::for_vmis(
        args.selector.as_deref(),
        args.node.as_deref(),
    )?)
}

/// What `gather` returns: the inputs, the objects skipped (named, with the field), the
/// temporary policies vmctl may have left, and what plan-drain's decision reads besides (the
/// PodDisruptionBudgets in scope and the server's version; None: PDBs not readable).
pub type Gathered = (
    StatusInputs,
    Vec<String>,
    Vec<MigrationPolicy>,
    Option<DrainFacts>,
);

/// The inputs, and the objects skipped because they do not decode (named, with the field).
pub async fn gather(ctx: &Context, args: &StatusArgs) -> Result<Gathered> {
    let vmi_query = ctx.scope.query().with_labels(vmi_selector(args)?);
    let pod_query = ctx
        .scope
        .query()
        .with_label(&format!("{LAUNCHER_LABEL}={LAUNCHER_VALUE}"))?;
    let scope_query = ctx.scope.query();
    let cluster_query = Query::all();
    // One object that does not decode costs that object, not the whole fleet view: it is
    // named under `skipped` (issue 11).
    // vmctl's own temporary policies, to find any that outlived its migration.
    let vmctl_policies = Query::all().with_label(&format!(
        "{}={}",
        crate::migration::kubevirt::MANAGED_BY_LABEL,
        crate::migration::kubevirt::MANAGED_BY_VALUE
    ))?;
    let (
        (vmis, s1),
        (vmims, s2),
        (pods, s3),
        (kubevirts, s4),
        policies,
        nodes,
        pdbs,
        mut server_version,
    ) = tokio::try_join!(
        list_lenient::<VirtualMachineInstance>(
            &ctx.source,
            Kind::VirtualMachineInstance,
            &vmi_query
        ),
        list_lenient::<VirtualMachineInstanceMigration>(
            &ctx.source,
            Kind::VirtualMachineInstanceMigration,
            &scope_query
        ),
        list_lenient::<LauncherPodFacts>(&ctx.source, Kind::Pod, &pod_query),
        list_lenient::<KubeVirt>(&ctx.source, Kind::KubeVirt, &cluster_query),
        // Optional: a namespaced user may not read cluster-scoped policies or Nodes.
        optional(
            list_lenient::<MigrationPolicy>(&ctx.source, Kind::MigrationPolicy, &vmctl_policies),
            "MigrationPolicies",
            "temporary policies vmctl may have left behind are not checked",
        ),
        optional(
            list_lenient::<Node>(&ctx.source, Kind::Node, &cluster_query),
            "Nodes",
            "cordoned nodes are not shown",
        ),
        // What a drain does to a VM that cannot migrate is plan-drain's decision, and a PDB
        // may refuse its shutdown.
        optional(
            list_lenient::<PodDisruptionBudget>(
                &ctx.source,
                Kind::PodDisruptionBudget,
                &scope_query
            ),
            "PodDisruptionBudgets",
            "what a drain does to a VM that cannot migrate is said without them",
        ),
        // The server's version, as plan-drain reads it (`/version`, a snapshot's
        // serverVersion, else the newest kubelet below); quietly none when unreadable.
        async {
            use crate::cluster::Source as _;
            Ok::<_, crate::error::Error>(ctx.source.server_version().await.ok().flatten())
        },
    )?;
    let nodes = match nodes {
        Ok((found, _)) => {
            if server_version.is_none() {
                server_version = crate::model::ServerVersion::from_kubelets(&found);
            }
            found.iter().map(NodeFacts::of).collect()
        }
        Err(note) => {
            ctx.warn(note);
            Vec::new()
        }
    };
    let drain_facts = match pdbs {
        Ok((pdbs, _)) => Some(DrainFacts {
            pdbs,
            server_version,
        }),
        Err(note) => {
            ctx.warn(note);
            None
        }
    };
    let (policies, s5) = match policies {
        Ok(found) => found,
        Err(note) => {
            ctx.warn(note);
            (Vec::new(), Vec::new())
        }
    };
    let skipped: Vec<String> = [s1, s2, s3, s4, s5].into_iter().flatten().collect();
    for w in crate::model::unknown::warnings(&vmis, &vmims, &kubevirts) {
        ctx.warn(w);
    }
    Ok((
        StatusInputs {
            vmis,
            vmims,
            // Same size: collected in place, no second vector of pods.
            pods: pods.into_iter().map(|p| p.0).collect(),
            kubevirt: kubevirts.into_iter().next(),
            loops: args.loops.thresholds(),
            nodes,
        },
        skipped,
        policies,
        drain_facts,
    ))
}

/// A launcher pod as far as `build_report` reads it: metadata, `spec.nodeName`,
/// `status.phase` and `status.conditions`. Containers, volumes and container statuses are
/// most of a pod's size, times 100,000 pods. (A test checks the report is unchanged.)
pub fn slim_pod(pod: &mut Pod) {
    if let Some(spec) = pod.spec.as_mut() {
        *spec = PodSpec {
            node_name: spec.node_name.take(),
            ..PodSpec::default()
        };
    }
    if let Some(status) = pod.status.as_mut() {
        *status = PodStatus {
            phase: status.phase.take(),
            conditions: status.conditions.take(),
            ..PodStatus::default()
        };
    }
}

/// A launcher pod decoded straight into its slim form (see [`slim_pod`]): no other copy of
/// the pods exists at any time.
struct LauncherPodFacts(Pod);

impl<'de> serde::Deserialize<'de> for LauncherPodFacts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let mut pod = Pod::from(PodFacts::deserialize(d)?);
        slim_pod(&mut pod);
        Ok(LauncherPodFacts(pod))
    }
}
