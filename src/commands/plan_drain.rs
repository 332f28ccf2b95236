//! `vmctl plan-drain NODE...`: predict, before anything is cordoned, what draining the
//! node(s) will do to every VM. Read-only.

use crate::cli::PlanDrainArgs;
use crate::context::Context;
use crate::error::{Result, exit};
use crate::policy::drain::Verdict;
use crate::render::{OutputFormat, structured, write_stdout};

pub use crate::render::plan_drain::{DrainPlanDocument, render_table};

pub async fn run(ctx: &Context, args: &PlanDrainArgs) -> Result<i32> {
    let (_, plan) = crate::evidence::drain_plan(ctx, &args.nodes, args.bandwidth).await?;
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
