//! One file per subcommand; each reads gather -> decide -> render.

pub mod explain;
pub mod generate;
pub mod plan_drain;
pub mod snapshot;
pub mod status;

use crate::cli::{Cli, Command};
use crate::context::Context;
use crate::error::Result;

/// Runs a parsed command line; returns the exit code.
pub async fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Completions(args) => generate::completions(&args),
        Command::Man(args) => generate::man(&args),
        Command::Status(args) => {
            let ctx = Context::new(&cli.global).await?;
            status::run(&ctx, &args).await
        }
        Command::PlanDrain(args) => {
            let ctx = Context::new(&cli.global).await?;
            plan_drain::run(&ctx, &args).await
        }
        Command::Explain(args) => {
            let ctx = Context::new(&cli.global).await?;
            explain::run(&ctx, &args).await
        }
        Command::Snapshot(args) => {
            let ctx = Context::new(&cli.global).await?;
            snapshot::run(&ctx, &args).await
        }
    }
}
