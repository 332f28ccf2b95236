//! `vmctl plan-maintenance`: which nodes, in which order; gather the whole cluster once;
//! simulate (`policy::maintenance::plan_maintenance`); render. Read-only.

use crate::cli::{MaintenanceOrder, MaintenanceTargets, PlanMaintenanceArgs};
use crate::context::Context;
use crate::error::{Error, Result, exit};
use crate::policy::drain::Verdict;
use crate::policy::maintenance::{MaintenanceOptions, Order, Targets, plan_maintenance};
use crate::render::plan_maintenance::{MaintenancePlanDocument, render_table};
use crate::render::{OutputFormat, gantt, structured, write_stdout};

pub async fn run(ctx: &Context, args: &PlanMaintenanceArgs) -> Result<i32> {
    let selector = match &args.selector {
        Some(s) => Some(crate::cluster::selector::LabelSelector::parse(s)?),
        None => None,
    };
    let mut inputs = crate::evidence::maintenance_inputs(ctx, args.bandwidth).await?;
    inputs.loops = args.loops.thresholds();
    let nodes =
        crate::evidence::rollout_nodes(&inputs.nodes, &args.nodes, args.all, selector.as_ref())?;
    if nodes.is_empty() {
        return Err(Error::not_found("no node matches the selector".to_string()));
    }
    let options = MaintenanceOptions {
        nodes,
        max_unavailable: args.max_unavailable as usize,
        order: match args.order {
            MaintenanceOrder::Given => Order::Given,
            MaintenanceOrder::Auto => Order::Auto,
        },
        targets: match args.targets {
            MaintenanceTargets::Any => Targets::Any,
            MaintenanceTargets::Done => Targets::Done,
        },
        upgrade_seconds: args.upgrade_time.map_or(0, |d| d.as_secs()),
        compare: true,
    };
    let plan = plan_maintenance(inputs, &options);
    let source = ctx.source_description();
    let mut text = match ctx.output {
        OutputFormat::Name => return Err(OutputFormat::name_refused()),
        OutputFormat::Html => return Err(OutputFormat::html_refused()),
        OutputFormat::Json | OutputFormat::Yaml => structured(
            ctx.output,
            &MaintenancePlanDocument {
                api_version: crate::model::VMCTL_API_VERSION,
                kind: "MaintenancePlan",
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
    // The timeline after the table: on a terminal, or asked for (never in JSON/YAML).
    if let Some(canvas) = gantt::Canvas::detect(args.chart.when(), ctx.output, ctx.style) {
        text.push('\n');
        text.push_str(&gantt::text(&gantt::of_maintenance_plan(&plan), &canvas));
    }
    write_stdout(&text)?;
    Ok(if plan.verdict == Verdict::WillBlock {
        exit::FINDING
    } else {
        exit::OK
    })
}
