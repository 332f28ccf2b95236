//! One file per subcommand; each reads gather -> decide -> render.

pub mod abort;
pub mod abort_kubevirt;
pub mod abort_libvirt;
pub mod drain;
pub mod explain;
pub mod explain_journal;
pub mod explain_libvirt;
pub mod generate;
pub mod history;
pub mod migrate;
pub mod migrate_kubevirt;
pub mod migrate_libvirt;
pub mod plan_drain;
pub mod plan_maintenance;
pub mod record;
pub mod snapshot;
pub mod status;
pub mod status_watch;
pub mod top;

use crate::cli::{Cli, Command};
use crate::context::Context;
use crate::error::Result;

/// Runs a command with its context, then lets the process exit without freeing the
/// objects one by one: for a large snapshot that takes longer than the command itself.
async fn with_context<F, Fut>(cli: &Cli, f: F) -> Result<i32>
where
    F: FnOnce(&'static Context) -> Fut,
    Fut: std::future::Future<Output = Result<i32>>,
{
    let ctx: &'static Context = Box::leak(Box::new(Context::new(&cli.global).await?));
    f(ctx).await
}

/// Runs a parsed command line; returns the exit code.
pub async fn run(cli: Cli) -> Result<i32> {
    if cli.global.output == crate::render::OutputFormat::Html && !cli.command.writes_html() {
        return Err(crate::render::OutputFormat::html_refused());
    }
    if cli.global.output == crate::render::OutputFormat::Name && !cli.command.writes_names() {
        return Err(crate::render::OutputFormat::name_refused());
    }
    // Documents are data: the ASCII spelling of `LANG=C` is for tables and lines only.
    crate::render::glyphs::set_documents(matches!(
        cli.global.output,
        crate::render::OutputFormat::Json
            | crate::render::OutputFormat::Yaml
            | crate::render::OutputFormat::Html
    ));
    match &cli.command {
        Command::Completions(args) => generate::completions(args),
        Command::Man(args) => generate::man(args),
        // status_watch builds on status (its rows), never the other way round.
        Command::Status(args) if args.watch => {
            with_context(&cli, |ctx| status_watch::run(ctx, args)).await
        }
        Command::Status(args) => with_context(&cli, |ctx| status::run(ctx, args)).await,
        Command::PlanDrain(args) => with_context(&cli, |ctx| plan_drain::run(ctx, args)).await,
        Command::PlanMaintenance(args) => {
            with_context(&cli, |ctx| plan_maintenance::run(ctx, args)).await
        }
        Command::Drain(args) => with_context(&cli, |ctx| drain::run(ctx, args)).await,
        Command::Explain(args) if args.connect.is_some() => {
            explain_libvirt::run_libvirt(&cli.global, args).await
        }
        Command::Explain(args) => with_context(&cli, |ctx| explain::run(ctx, args)).await,
        Command::Migrate(args) if args.connect.is_some() => {
            migrate::run_libvirt(&cli.global, args).await
        }
        Command::Migrate(args) => with_context(&cli, |ctx| migrate::run_kubevirt(ctx, args)).await,
        Command::Abort(args) if args.connect.is_some() => {
            abort::run_libvirt(&cli.global, args).await
        }
        Command::Abort(args) => with_context(&cli, |ctx| abort::run_kubevirt(ctx, args)).await,
        Command::Snapshot(args) => {
            let namespace = cli.global.namespace.as_deref();
            with_context(&cli, |ctx| snapshot::run(ctx, args, namespace)).await
        }
        Command::Top(args) => with_context(&cli, |ctx| top::run(ctx, args)).await,
        Command::Record(args) => with_context(&cli, |ctx| record::run(ctx, args)).await,
        Command::History(args) => history::run(&cli, args).await,
    }
}
