//! `vmctl top`: the live console. Parse the flags, choose the feed (the watches of `status
//! --watch` on a live cluster, the snapshot with `--from`), then `operate::top` runs the
//! full-screen loop and restores the terminal however it ends. `-o json|yaml` prints one
//! frame of the model instead (so scripts get it); without a terminal it refuses in one line:
//! a full-screen program writing into a pipe or a file would leave escape sequences there,
//! and `status` / `status --watch` already serve that case.

use std::io::IsTerminal;

use super::status::slim_pod;
use crate::cli::TopArgs;
use crate::context::{AnySource, Context};
use crate::error::{Error, Result, exit};
use crate::migration::follow::FollowSpec;
use crate::operate::top::{Feed, Options, first_model, run as run_console};
use crate::policy::pods::{LAUNCHER_LABEL, LAUNCHER_VALUE};
use crate::render::glyphs::Charset;
use crate::render::structured;

pub async fn run(ctx: &'static Context, args: &TopArgs) -> Result<i32> {
    let feed = match &ctx.source {
        AnySource::Live(live) => {
            let spec = FollowSpec::of(ctx.scope.query(), ctx.scope.query())
                .with_pods(
                    ctx.scope
                        .query()
                        .with_label(&format!("{LAUNCHER_LABEL}={LAUNCHER_VALUE}"))?,
                    Some(slim_pod),
                )
                .with_nodes();
            Feed::Live(live, Box::new(spec))
        }
        AnySource::Snapshot(_) => Feed::Snapshot,
    };
    let opts = Options {
        dry_run: args.dry_run,
        metrics: args.metrics,
        loops: args.loops.thresholds(),
        charset: Charset::detect(),
        color: ctx.style.color,
    };
    if ctx.output.is_structured() {
        let model = first_model(ctx, feed, &opts).await?;
        crate::render::write_document(&structured(ctx.output, &model)?)?;
        return Ok(exit::OK);
    }
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(Error::usage(
            "vmctl top needs a terminal (stdin and stdout): use -o json for one frame as a document, or vmctl status --watch for lines",
        ));
    }
    run_console(ctx, feed, opts).await
}
