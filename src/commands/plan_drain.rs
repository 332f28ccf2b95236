//! `vmctl plan-drain NODE...`: predict, before anything is cordoned, what draining the
//! node(s) will do to every VM. Read-only.

use std::collections::HashSet;

use crate::cli::PlanDrainArgs;
use crate::cluster::selector::{LabelRequirement, LabelSelector};
use crate::cluster::{Kind, Query, list_as};
use crate::context::Context;
use crate::error::{Error, Result, exit};
use crate::model::{
    KubeVirt, MigrationPolicy, Namespace, Node, Pod, PodDisruptionBudget, PodFacts, ResourceQuota,
    VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration,
};
use crate::names::suggest;
use crate::policy::drain::{DrainInputs, Verdict, plan_drain, pods_of_unsynced_pdbs, split_pods};
use crate::policy::scheduling::{node_name, spread_selectors};
use crate::render::{OutputFormat, structured, write_stdout};

pub use crate::render::plan_drain::{DrainPlanDocument, render_table};

// ---------------------------------------------------------------- gather

async fn gather(ctx: &Context, args: &PlanDrainArgs) -> Result<DrainInputs> {
    let src = &ctx.source;
    let all = Query::all();
    let on_nodes = Query::all().with_labels(LabelSelector {
        requirements: vec![LabelRequirement::In(
            "kubevirt.io/nodeName".into(),
            args.nodes.clone(),
        )],
    });
    let into_nodes = Query::all().with_labels(LabelSelector {
        requirements: vec![LabelRequirement::In(
            "kubevirt.io/migrationTargetNodeName".into(),
            args.nodes.clone(),
        )],
    });
    let (vmis, incoming, vms, vmims, nodes, pods, pdbs, quotas, namespaces, kubevirts, policies) =
        tokio::try_join!(
            list_as::<VirtualMachineInstance>(src, Kind::VirtualMachineInstance, &on_nodes),
            list_as::<VirtualMachineInstance>(src, Kind::VirtualMachineInstance, &into_nodes),
            list_as::<VirtualMachine>(src, Kind::VirtualMachine, &all),
            list_as::<VirtualMachineInstanceMigration>(
                src,
                Kind::VirtualMachineInstanceMigration,
                &all
            ),
            list_as::<Node>(src, Kind::Node, &all),
            // Every pod of the cluster (node capacity): only the fields the plan reads.
            list_as::<PodFacts>(src, Kind::Pod, &all),
            list_as::<PodDisruptionBudget>(src, Kind::PodDisruptionBudget, &all),
            list_as::<ResourceQuota>(src, Kind::ResourceQuota, &all),
            list_as::<Namespace>(src, Kind::Namespace, &all),
            list_as::<KubeVirt>(src, Kind::KubeVirt, &all),
            list_as::<MigrationPolicy>(src, Kind::MigrationPolicy, &all),
        )?;
    for wanted in &args.nodes {
        if !nodes.iter().any(|n| node_name(n) == wanted) {
            let mut err = Error::not_found(format!("node {wanted:?}"));
            let close = suggest(wanted, nodes.iter().map(node_name));
            if !close.is_empty() {
                err = err.with_hint(format!("did you mean {}?", close.join(", ")));
            }
            return Err(err);
        }
    }
    // The pods on the drained nodes (and their VMIs' other launcher pods) in full; of the
    // rest only what they take from their node (requests, count, spread matches).
    let vmi_uids: HashSet<&str> = vmis
        .iter()
        .filter_map(VirtualMachineInstance::uid)
        .collect();
    // The pods of a PDB without a fresh status stay whole: the plan computes its budget.
    let spread = spread_selectors(&vmis);
    let (pdb_pods, (pods, node_usage)) =
        pods_of_unsynced_pdbs(pods.into_iter().map(Pod::from), &pdbs, |rest| {
            split_pods(rest, &args.nodes, &vmi_uids, &spread)
        });
    let pods: Vec<Pod> = pods.into_iter().chain(pdb_pods).collect();
    let bandwidth = args.bandwidth;
    Ok(DrainInputs {
        drain: args.nodes.clone(),
        vmis,
        incoming,
        vms,
        vmims,
        nodes,
        pods,
        node_usage,
        pdbs,
        quotas,
        namespaces,
        kubevirt: kubevirts.into_iter().next(),
        policies,
        bandwidth,
        now: Some(crate::model::Time(ctx.now)),
    })
}

pub async fn run(ctx: &Context, args: &PlanDrainArgs) -> Result<i32> {
    let inputs = gather(ctx, args).await?;
    for w in crate::model::unknown::warnings(
        inputs.vmis.iter().chain(&inputs.incoming),
        &inputs.vmims,
        &inputs.kubevirt,
    ) {
        ctx.warn(w);
    }
    let plan = plan_drain(&inputs);
    let source = ctx.source_description();
    let text = match ctx.output {
        OutputFormat::Json | OutputFormat::Yaml => structured(
            ctx.output,
            &DrainPlanDocument {
                api_version: crate::model::VMCTL_API_VERSION,
                kind: "DrainPlan",
                as_of: ctx.now.to_string(),
                source,
                plan: &plan,
                warnings: ctx.warnings(),
            },
        )?,
        OutputFormat::Table | OutputFormat::Wide => render_table(
            &plan,
            ctx.style,
            ctx.output == OutputFormat::Wide,
            &ctx.now.to_string(),
            &source,
        ),
    };
    write_stdout(&text)?;
    Ok(if plan.verdict == Verdict::WillBlock {
        exit::FINDING
    } else {
        exit::OK
    })
}
