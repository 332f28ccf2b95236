//! `vmctl migrate VM` through KubeVirt: pre-flight, start, follow, explain.
//!
//! parse → gather (the VMI, its VM, migrations, nodes, pods, quotas, policies) → decide
//! (`policy::preflight`, the temporary policy, the dirty-rate prediction) → a refusal, a dry
//! run, or act (the driver) → follow (the one loop, `migration::driver::drive`, over the
//! KubeVirt driver: virt-handler metrics as `JobSample`s into the shared progress renderer
//! and into the controller for advice) → on failure, the same diagnosis `vmctl explain`
//! gives. The steps are in `operate::migrate_kubevirt` and `operate::migrate`; every line
//! goes through `render` (`render::follow`).

use crate::cli::MigrateArgs;
use crate::cluster::live::LiveSource;
use crate::context::{AnySource, Context};
use crate::error::{Error, Result, exit};
use crate::migration::kubevirt::KubeVirtDriver;
use crate::operate::migrate::follow_to_end;
use crate::operate::migrate_kubevirt::{
    dry_run, gather, migration_plan, policies, predict_before_start, refused, start,
};
use crate::policy::preflight::preflight;

/// `VM`, `vm/VM` or `vmi/VMI` → the VMI's name (a VM's VMI has its name).
pub fn parse_vm_target(text: &str) -> Result<String> {
    match crate::names::parse_target(text, crate::names::Takes::VmOnly, "migrate")? {
        crate::names::Target::Vmi(name) | crate::names::Target::Migration(name) => Ok(name),
    }
}

pub fn require_namespace(ctx: &Context) -> Result<String> {
    ctx.scope.namespace().map(str::to_string).ok_or_else(|| {
        // A snapshot has no context namespace: its scope is every namespace without -A
        // (issue 33, tried cold: "not -A" to someone who never passed it).
        Error::usage(match ctx.source {
            AnySource::Snapshot(_) => {
                "this command acts on one namespace: pick it with -n NAMESPACE (a snapshot read with --from has no namespace of its own)"
            }
            AnySource::Live(_) => {
                "this command acts on one namespace: pick it with -n NAMESPACE, not -A"
            }
        })
    })
}

pub async fn run(ctx: &'static Context, args: &MigrateArgs) -> Result<i32> {
    // ---- parse
    let namespace = require_namespace(ctx)?;
    let name = parse_vm_target(&args.target)?;
    let added = args.node_selector.clone().unwrap_or_default();
    let live: Option<&LiveSource> = match &ctx.source {
        AnySource::Live(l) => Some(l),
        AnySource::Snapshot(_) if args.dry_run => None,
        AnySource::Snapshot(_) => {
            return Err(Error::usage(
                "migrate changes a cluster: it cannot run on a snapshot (--from); --dry-run can",
            ));
        }
    };

    // ---- gather
    let mut g = gather(&ctx.source, &namespace, &name, &added).await?;
    g.inputs.now = Some(crate::model::Time(ctx.now));
    for w in crate::model::unknown::warnings([&g.inputs.vmi], &g.inputs.vmims, &g.inputs.kubevirt) {
        ctx.warn(w);
    }

    // ---- decide: the pre-flight, the policies (a temporary one?), the prediction, the plan
    let pre = preflight(&g.inputs);
    let id = format!("{namespace}/{name}");
    if !pre.ok {
        return refused(ctx, &id, &pre);
    }
    let Some(policies) = policies(ctx, args, &g, &namespace, &id).await? else {
        return Ok(exit::FINDING);
    };
    let advice = predict_before_start(ctx, args, &g, policies.temporary.as_ref()).await;
    let plan = migration_plan(ctx, &g, &pre, &policies, advice, &added);

    // ---- render the plan, or act
    if args.dry_run {
        return dry_run(ctx, &plan);
    }
    let Some(live) = live else {
        return Err(Error::Internal("no live cluster to migrate on".into()));
    };
    let driver = KubeVirtDriver::new(live);
    let Some(started) = start(ctx, args, &driver, &g, &plan, &policies).await? else {
        return Ok(exit::OK);
    };

    // ---- follow to the end, and say how it ended
    follow_to_end(
        ctx,
        args,
        g.vmi.guest_memory().map(|q| q.bytes()),
        g.kubevirt_namespace(),
        &pre,
        &policies.current,
        &driver,
        started,
        &plan,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_selectors_and_targets_parse() {
        assert_eq!(parse_vm_target("vm/a").unwrap(), "a");
        assert_eq!(parse_vm_target("a").unwrap(), "a");
        assert!(parse_vm_target("pod/a").is_err());
    }
}
