//! `vmctl record`: watch the cluster, journal every migration's end (issue 28). What to
//! watch (the VMIs `status` selects, every migration in scope, launcher pods) and where to
//! write; `operate::record` follows, diagnoses and commits until stopped.

use super::status::slim_pod;
use crate::cli::RecordArgs;
use crate::context::{AnySource, Context};
use crate::error::{Error, Result};
use crate::journal::{Access, Journal, JournalSpec};
use crate::migration::ended::Scope;
use crate::migration::follow::FollowSpec;
use crate::model::Pod;
use crate::model::journal::Retention;
use crate::operate::record::Settings;
use crate::policy::pods::{LAUNCHER_LABEL, LAUNCHER_VALUE};

/// A launcher pod as the recorder keeps it: `status --watch`'s slim form, and the container
/// statuses a diagnosis reads (a target pod that crashed, was OOM-killed, never pulled).
fn record_pod(pod: &mut Pod) {
    let containers = pod
        .status
        .as_mut()
        .and_then(|s| s.container_statuses.take());
    let reason = pod.status.as_mut().and_then(|s| s.reason.take());
    let message = pod.status.as_mut().and_then(|s| s.message.take());
    slim_pod(pod);
    if let Some(status) = pod.status.as_mut() {
        status.container_statuses = containers;
        status.reason = reason;
        status.message = message;
    }
}

pub async fn run(ctx: &'static Context, args: &RecordArgs) -> Result<i32> {
    let AnySource::Live(live) = &ctx.source else {
        return Err(Error::usage(
            "record follows a live cluster: it cannot watch a snapshot (--from)",
        ));
    };
    let spec = JournalSpec::resolve(ctx.journal.as_deref())?;
    if spec == JournalSpec::Off {
        return Err(Error::usage(
            "record writes to the journal: --journal off leaves it nothing to do",
        ));
    }
    let labels = crate::cluster::selector::LabelSelector::for_vmis(
        args.selector.as_deref(),
        args.node.as_deref(),
    )?;
    let selective = !labels.requirements.is_empty();
    let follow = FollowSpec::of(ctx.scope.query(), ctx.scope.query().with_labels(labels))
        .with_pods(
            ctx.scope
                .query()
                .with_label(&format!("{LAUNCHER_LABEL}={LAUNCHER_VALUE}"))?,
            Some(record_pod),
        );
    let journal = Journal::open(&spec, Access::Write).await?;
    let settings = Settings {
        cluster: ctx.cluster_name(args.cluster_name.as_deref()),
        retention: Retention {
            max_age_ms: Some(i64::try_from(args.retain.as_millis()).unwrap_or(i64::MAX)),
            max_bytes: Some(args.max_size),
        },
        scope: Scope {
            names: args.names.clone(),
            selective,
        },
        scope_words: match ctx.scope.namespace() {
            Some(ns) => format!("namespace {}", crate::text::printable(ns)),
            None => "all namespaces".into(),
        },
        loops: args.loops.thresholds(),
        output: ctx.output,
    };
    crate::operate::record::run(ctx, live, &journal, follow, &settings).await
}
