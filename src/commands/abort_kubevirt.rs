//! `vmctl abort VM|migration/NAME` and `vmctl abort --evacuation VM` through KubeVirt.
//!
//! An abort is a DELETE of the unfinished VMIM (FACTS §3.5); refused in post-copy. The
//! decisions are `policy::abort`, the DELETE and the wait `operate::abort_kubevirt`, the words
//! `render::abort`.

use crate::cli::AbortArgs;
use crate::cluster::Kind;
use crate::cluster::live::LiveSource;
use crate::commands::migrate_kubevirt::require_namespace;
use crate::context::{AnySource, Context};
use crate::error::{Error, Result, exit};
use crate::migration::kubevirt::KubeVirtDriver;
use crate::names::Target;
use crate::operate::abort_kubevirt::{abort, gather, gather_evacuation};
use crate::policy::abort::{Decision, decide, evacuate_cancel_supported};
use crate::render::abort::{self as words, Names};
use crate::render::{follow as text, stderr_line, write_stdout};

/// `abort`'s target: a bare name is a VM.
fn parse_target(text: &str) -> Result<Target> {
    crate::names::parse_target(text, crate::names::Takes::VmFirst, "abort")
}

fn live(ctx: &Context, dry_run: bool) -> Result<Option<&LiveSource>> {
    match &ctx.source {
        AnySource::Live(l) => Ok(Some(l)),
        AnySource::Snapshot(_) if dry_run => Ok(None),
        AnySource::Snapshot(_) => Err(Error::usage(
            "abort changes a cluster: it cannot run on a snapshot (--from); --dry-run can",
        )),
    }
}

pub async fn run(ctx: &'static Context, args: &AbortArgs) -> Result<i32> {
    // ---- parse
    let namespace = require_namespace(ctx)?;
    let target = parse_target(&args.target)?;
    let live = live(ctx, args.dry_run)?;
    if args.evacuation {
        let Target::Vmi(name) = target else {
            return Err(Error::usage(
                "--evacuation cancels a VM's evacuation: name the VM, not a migration",
            ));
        };
        return cancel_evacuation(ctx, live, &namespace, &name, args.dry_run).await;
    }

    // ---- gather
    let found = gather(ctx, &namespace, &target).await?;

    // ---- decide
    let plan = match decide(found.vmim.as_ref(), found.vmi.as_ref()) {
        Decision::Nothing { last } => {
            write_stdout(&words::nothing_to_abort(&namespace, &target, last.as_ref()))?;
            return Ok(exit::FINDING);
        }
        Decision::RefusePostCopy {
            migration,
            target_node,
            source_node,
        } => {
            write_stdout(&words::refused_post_copy(
                ctx.style,
                &namespace,
                &migration,
                target_node.as_deref(),
                source_node.as_deref(),
            ))?;
            return Ok(exit::FINDING);
        }
        Decision::Abort(plan) => plan,
    };
    let names = Names {
        namespace: &namespace,
        migration: &plan.migration,
        vmi: &found.vmi_name,
    };
    if let Some(r) = &plan.recreated_by {
        stderr_line(&text::warning(
            ctx.style,
            &words::recreator_warning(r, names),
        ));
    }

    // ---- render the plan, or act
    if args.dry_run {
        let path = format!(
            "{}/{}",
            Kind::VirtualMachineInstanceMigration.collection_path(Some(&namespace)),
            plan.migration
        );
        write_stdout(&words::dry_run(
            ctx.output,
            ctx.warnings(),
            names,
            &plan,
            &path,
        )?)?;
        return Ok(exit::OK);
    }
    let Some(live) = live else {
        return Err(Error::Internal("no live cluster to abort on".into()));
    };
    abort(ctx, live, &found, &plan, &namespace, args.timeout).await
}

/// `--evacuation`: clears `evacuationNodeName` through `evacuate/cancel` (v1.7+).
async fn cancel_evacuation(
    ctx: &Context,
    live: Option<&LiveSource>,
    namespace: &str,
    name: &str,
    dry_run: bool,
) -> Result<i32> {
    // ---- gather
    let (vmi, version) = gather_evacuation(ctx, namespace, name).await?;

    // ---- decide
    let Some(node) = vmi.evacuation_node().map(str::to_string) else {
        write_stdout(&words::not_marked(namespace, name))?;
        return Ok(exit::FINDING);
    };
    if !evacuate_cancel_supported(version.as_deref()) {
        write_stdout(&words::evacuate_cancel_unsupported(
            version.as_deref(),
            namespace,
            name,
            &node,
        ))?;
        return Ok(exit::FINDING);
    }
    let kind = if vmi.owner_vm().is_some() {
        Kind::VirtualMachine
    } else {
        Kind::VirtualMachineInstance
    };

    // ---- render the plan, or act
    if dry_run {
        let path = format!(
            "/apis/subresources.kubevirt.io/v1/namespaces/{namespace}/{}/{name}/evacuate/cancel",
            kind.plural()
        );
        write_stdout(&words::evacuate_cancel_dry_run(&path, &node))?;
        return Ok(exit::OK);
    }
    let Some(live) = live else {
        return Err(Error::Internal("no live cluster".into()));
    };
    KubeVirtDriver::new(live)
        .evacuate_cancel(namespace, kind, name, &node)
        .await?;
    write_stdout(&words::evacuation_cancelled(namespace, name, &node))?;
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse() {
        assert_eq!(parse_target("a").unwrap(), Target::Vmi("a".into()));
        assert_eq!(parse_target("vmi/a").unwrap(), Target::Vmi("a".into()));
        assert_eq!(
            parse_target("migration/m").unwrap(),
            Target::Migration("m".into())
        );
        assert_eq!(
            parse_target("vmim/m").unwrap(),
            Target::Migration("m".into())
        );
        assert!(parse_target("pod/x").is_err());
    }
}
