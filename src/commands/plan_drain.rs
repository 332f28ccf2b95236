//! `vmctl plan-drain NODE...`: predict, before anything is cordoned, what draining the
//! node(s) will do to every VM. Read-only.

use std::collections::HashSet;

use serde::Serialize;

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
use crate::policy::drain::{
    Action, DrainInputs, DrainPlan, Verdict, plan_drain, pods_of_unsynced_pdbs, split_pods,
};
use crate::policy::scheduling::{node_name, spread_selectors};
use crate::render::table::{TableBuilder, plain};
use crate::render::{OutputFormat, Style, Tone, fmt, structured, write_stdout};

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

// ---------------------------------------------------------------- render

/// The `-o json|yaml` document.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DrainPlanDocument<'a> {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub as_of: String,
    pub source: String,
    #[serde(flatten)]
    pub plan: &'a DrainPlan,
    /// What was said about the input on stderr (unknown values, duplicates …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

fn verdict_tone(v: Verdict) -> Tone {
    match v {
        Verdict::WillComplete => Tone::Good,
        Verdict::WillCompleteWithShutdowns => Tone::Warn,
        Verdict::WillBlock => Tone::Bad,
    }
}

fn action_tone(a: Action) -> Tone {
    match a {
        Action::LiveMigrate | Action::AlreadyMigrating => Tone::Good,
        Action::Shutdown | Action::ShutdownNotMigratable | Action::External => Tone::Warn,
        Action::BlocksDrain | Action::NoTarget => Tone::Bad,
    }
}

pub fn render_table(
    plan: &DrainPlan,
    style: Style,
    wide: bool,
    as_of: &str,
    source: &str,
) -> String {
    let mut out = String::new();
    let migrating = plan
        .vmis
        .iter()
        .filter(|v| v.action == Action::LiveMigrate)
        .count();
    let stopping = plan.vmis.iter().filter(|v| v.action.stops_the_vm()).count();
    let blocking = plan.blockers.iter().filter(|b| b.blocking).count();
    let mut headline = format!(
        "Drain of {}: {}",
        fmt::printable(&plan.nodes.join(", ")),
        style.paint(
            &plan.verdict.as_str().replace('-', " ").to_uppercase(),
            verdict_tone(plan.verdict)
        )
    );
    let mut facts = vec![format!("{} VMI(s)", plan.vmis.len())];
    if blocking > 0 {
        facts.push(format!("{blocking} blocker(s)"));
    }
    if migrating > 0 {
        facts.push(format!(
            "{migrating} live migration(s) in {} wave(s)",
            plan.waves
        ));
    }
    if stopping > 0 {
        facts.push(format!("{stopping} shutdown(s)"));
    }
    if plan.verdict != Verdict::WillBlock {
        facts.push(format!(
            "about {}",
            fmt::duration(plan.estimated_duration_seconds as i64)
        ));
    } else {
        facts.push(format!(
            "the rest would take about {}",
            fmt::duration(plan.estimated_duration_seconds as i64)
        ));
    }
    headline.push_str(&format!(" — {}\n", facts.join(", ")));
    out.push_str(&headline);
    out.push_str(&format!("as of {as_of} · {source}\n"));
    if plan.defaults_assumed {
        out.push_str("no KubeVirt CR found: KubeVirt's defaults apply\n");
    }

    if !plan.blockers.is_empty() {
        out.push_str("\nBlockers:\n");
        for b in &plan.blockers {
            let (mark, tone) = if b.blocking {
                ("✗", Tone::Bad)
            } else {
                ("~", Tone::Warn)
            };
            let what = match (b.kind.as_str(), &b.namespace) {
                ("pdb", Some(ns)) => format!("PodDisruptionBudget {ns}/{}", b.name),
                ("quota", Some(ns)) => format!("ResourceQuota {ns}/{}", b.name),
                (_, Some(ns)) => format!("{ns}/{}", b.name),
                (_, None) => b.name.clone(),
            };
            out.push_str(&format!(
                "  {} {}: {}\n",
                style.paint(mark, tone),
                fmt::printable(&what),
                fmt::printable(&b.message)
            ));
        }
    }

    out.push('\n');
    if plan.vmis.is_empty() {
        out.push_str("No VMIs on these nodes: the drain does not touch any VM.\n");
    } else {
        let mut headers = vec![
            "namespace",
            "name",
            "action",
            "target",
            "eviction",
            "reason",
        ];
        if wide {
            headers.extend(["memory", "policy", "budget", "wave", "start", "eta"]);
        }
        let mut t = TableBuilder::new(style, &headers);
        for v in &plan.vmis {
            let name = match &v.evacuation_node {
                Some(n) => format!("{} (evacuating from {n})", v.name),
                None => v.name.clone(),
            };
            let mut row = vec![
                plain(fmt::printable(&v.namespace)),
                plain(fmt::printable(&name)),
                (v.action.as_str().to_string(), action_tone(v.action)),
                plain(fmt::printable(v.target.as_deref().unwrap_or("-"))),
                plain(fmt::printable(&v.eviction_strategy)),
                plain(fmt::printable(&v.explanation)),
            ];
            if wide {
                row.push(plain(
                    v.memory_bytes.map(fmt::bytes).unwrap_or_else(|| "?".into()),
                ));
                row.push(plain(fmt::printable(
                    v.migration_policy.as_deref().unwrap_or("-"),
                )));
                row.push(plain(
                    v.budget_seconds
                        .map(|b| fmt::duration(b as i64))
                        .unwrap_or_else(|| "-".into()),
                ));
                row.push(plain(
                    v.wave.map(|w| w.to_string()).unwrap_or_else(|| "-".into()),
                ));
                row.push(plain(
                    v.start_seconds
                        .map(|s| format!("+{}", fmt::duration(s as i64)))
                        .unwrap_or_else(|| "-".into()),
                ));
                row.push(plain(
                    v.end_seconds
                        .map(|s| format!("+{}", fmt::duration(s as i64)))
                        .unwrap_or_else(|| "-".into()),
                ));
            }
            t.row(row);
        }
        out.push_str(&t.render());
    }

    if !plan.incoming.is_empty() {
        out.push_str("\nMigrating INTO the drained node(s) (the drain waits for them, then moves them again):\n");
        for i in &plan.incoming {
            let mode = i.mode.as_deref().unwrap_or("mode not reported");
            let line = fmt::printable(&format!(
                "  {}/{} from {} to {} ({mode}){}",
                i.namespace,
                i.name,
                i.source_node.as_deref().unwrap_or("?"),
                i.target_node.as_deref().unwrap_or("?"),
                if i.point_of_no_return {
                    ": POST-COPY, the point of no return: do not disturb either node until it finishes; an abort or a network failure now loses the guest"
                } else {
                    ""
                }
            )) + "\n";
            let tone = if i.point_of_no_return {
                Tone::Bad
            } else {
                Tone::Warn
            };
            out.push_str(&style.paint(&line, tone));
        }
    }
    if !plan.skipped.is_empty() {
        let names: Vec<String> = plan
            .skipped
            .iter()
            .map(|s| format!("{} ({})", s.reason, s.message))
            .collect();
        out.push_str(&format!(
            "Not touched: {}\n",
            fmt::printable(&names.join("; "))
        ));
    }

    let fixes: Vec<String> = plan
        .vmis
        .iter()
        .filter(|v| v.action != Action::LiveMigrate)
        .filter_map(|v| {
            v.fix
                .as_ref()
                .map(|f| fmt::printable(&format!("  {}/{}: {f}", v.namespace, v.name)))
        })
        .collect();
    if !fixes.is_empty() {
        out.push_str("\nTo change the outcome:\n");
        for f in fixes {
            out.push_str(&f);
            out.push('\n');
        }
    }
    let postcopy: Vec<String> = plan
        .vmis
        .iter()
        .filter(|v| v.action == Action::LiveMigrate && v.allow_post_copy)
        .map(|v| format!("{}/{}", v.namespace, v.name))
        .collect();
    if !postcopy.is_empty() {
        out.push_str(&format!(
            "\nPost-copy allowed for {}: if they switch to post-copy, that is the point of no return (a network failure then loses the guest).\n",
            fmt::printable(&postcopy.join(", "))
        ));
    }
    out.push_str(&format!(
        "\nLimits: {} per cluster ({} in flight), {} outbound per node",
        plan.limits.parallel_migrations_per_cluster,
        plan.limits.in_flight_cluster,
        plan.limits.parallel_outbound_migrations_per_node
    ));
    let per_node: Vec<String> = plan
        .limits
        .in_flight_per_node
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(node, n)| format!("{n} already from {node}"))
        .collect();
    if !per_node.is_empty() {
        out.push_str(&format!(" ({})", fmt::printable(&per_node.join(", "))));
    }
    out.push('\n');
    let queued = |q: &crate::policy::drain::QueuedMigration| {
        format!(
            "{}/{} (VMI {}, {}{}{})",
            q.namespace,
            q.name,
            q.vmi,
            q.priority.as_deref().unwrap_or("no priority"),
            if q.on_drained_node {
                ", on a drained node"
            } else {
                ""
            },
            q.held_by
                .as_deref()
                .map(|c| format!(", held by {c}: takes no slot"))
                .unwrap_or_default()
        )
    };
    let queue = &plan.queue;
    if !queue.ahead.is_empty() {
        out.push_str(&format!(
            "Queue ({}): {} pending migration(s) ahead of the drain's evacuations: {}\n",
            queue.mode,
            queue.ahead.len(),
            fmt::printable(
                &queue
                    .ahead
                    .iter()
                    .map(queued)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        ));
    }
    if !queue.behind.is_empty() {
        out.push_str(&format!(
            "Queue ({}): {} pending migration(s) wait behind them: {}\n",
            queue.mode,
            queue.behind.len(),
            fmt::printable(
                &queue
                    .behind
                    .iter()
                    .map(queued)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        ));
    }
    if wide {
        out.push_str("Assumptions:\n");
        for a in &plan.assumptions {
            out.push_str(&format!("  - {}\n", fmt::printable(a)));
        }
    }
    out
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
