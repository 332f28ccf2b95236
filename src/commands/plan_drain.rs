//! `vmctl plan-drain NODE...`: predict, before anything is cordoned, what draining the
//! node(s) will do to every VM. Read-only.

use crate::cli::PlanDrainArgs;
use crate::context::{AnySource, Context};
use crate::error::{Result, exit};
use crate::migration::dirty_rate::{self, MetricsFrom};
use crate::policy::drain::Verdict;
use crate::render::{OutputFormat, gantt, structured, write_stdout};

pub use crate::render::plan_drain::{DrainPlanDocument, render_table};

pub async fn run(ctx: &Context, args: &PlanDrainArgs) -> Result<i32> {
    let mut inputs = crate::evidence::drain_inputs(ctx, &args.nodes, args.bandwidth).await?;
    inputs.loops = args.loops.thresholds();
    // Only when asked: without --metrics/--prometheus the plan makes no request beyond its lists.
    if let Some(from) = MetricsFrom::from_flags(args.metrics, args.prometheus.as_deref()) {
        let live = match &ctx.source {
            AnySource::Live(l) => Some(l),
            AnySource::Snapshot(_) => None,
        };
        // The nodes that have a VMI to move: one page each.
        let mut nodes: Vec<String> = inputs
            .vmis
            .iter()
            .map(crate::policy::drain::vmi_node)
            .filter(|n| args.nodes.contains(n))
            .collect();
        nodes.sort();
        nodes.dedup();
        inputs.dirty_rates = Some(
            dirty_rate::for_nodes(live, &from, inputs.kubevirt.as_ref(), &inputs.pods, &nodes)
                .await?,
        );
    }
    let plan = crate::evidence::plan_of(ctx, &inputs);
    let source = ctx.source_description();
    let mut text = match ctx.output {
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
        OutputFormat::Name => return Err(OutputFormat::name_refused()),
        OutputFormat::Html => crate::render::html::plan_drain::page(
            &plan,
            &ctx.now.to_string(),
            ctx.clock.note(),
            &source,
            &ctx.warnings(),
        ),
    };
    // The timeline after the table: on a terminal, or asked for (never in JSON/YAML).
    if let Some(canvas) = gantt::Canvas::detect(args.chart.when(), ctx.output, ctx.style) {
        text.push('\n');
        text.push_str(&gantt::text(&gantt::of_drain_plan(&plan), &canvas));
    }
    write_stdout(&text)?;
    Ok(if plan.verdict == Verdict::WillBlock {
        exit::FINDING
    } else {
        exit::OK
    })
}
