//! `vmctl status --watch`: what to watch (the VMIs `status` selects, their migrations and
//! launcher pods), then `operate::status_watch` follows and draws until Ctrl-C.

use std::io::IsTerminal;

use super::status::{slim_pod, vmi_selector};
use crate::cli::StatusArgs;
use crate::context::{AnySource, Context};
use crate::error::{Error, Result};
use crate::migration::follow::FollowSpec;
use crate::policy::pods::{LAUNCHER_LABEL, LAUNCHER_VALUE};

pub async fn run(ctx: &'static Context, args: &StatusArgs) -> Result<i32> {
    let AnySource::Live(live) = &ctx.source else {
        return Err(Error::usage(
            "--watch follows a live cluster: it cannot watch a snapshot (--from)",
        ));
    };
    let labels = vmi_selector(args)?;
    let spec = FollowSpec::of(ctx.scope.query(), ctx.scope.query().with_labels(labels))
        .with_pods(
            ctx.scope
                .query()
                .with_label(&format!("{LAUNCHER_LABEL}={LAUNCHER_VALUE}"))?,
            Some(slim_pod),
        )
        .with_nodes();
    let tty = std::io::stdout().is_terminal() && !ctx.output.is_structured();
    crate::operate::status_watch::run(ctx, live, spec, &args.names, tty, args.loops.thresholds())
        .await
}
