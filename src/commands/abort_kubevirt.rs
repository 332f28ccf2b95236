//! `vmctl abort VM|migration/NAME` and `vmctl abort --evacuation VM` through KubeVirt.
//!
//! An abort is a DELETE of the unfinished VMIM (FACTS §3.5): before the hand-off the
//! controller deletes the target pod and fails the migration; while running it asks
//! virt-handler to cancel the job and the VMI reports `abortStatus`. Refused in post-copy:
//! the guest's state is split across both nodes and neither side can be abandoned.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::cli::AbortArgs;
use crate::cluster::live::LiveSource;
use crate::cluster::{Kind, Query, get_as, list_as};
use crate::commands::migrate_kubevirt::require_namespace;
use crate::context::{AnySource, Context};
use crate::error::{Error, Result, exit};
use crate::migration::follow::{Ending, FollowSpec, Follower, Key, Mirror, Observer, Stop, follow};
use crate::migration::kubevirt::KubeVirtDriver;
use crate::model::kubevirt::parse_version;
use crate::model::vmi::{AbortStatus, MigrationMode, MigrationState};
use crate::model::vmim::{MigrationPhase, VMI_NAME_LABEL, WORKLOAD_UPDATE_ANNOTATION};
use crate::model::{KubeVirt, VirtualMachineInstance, VirtualMachineInstanceMigration};
use crate::render::follow as text;
use crate::render::{Tone, stderr_line, structured, write_stdout};
use crate::text as fmt;

/// How long to wait for the abort to be reported when no --timeout is given.
const DEFAULT_WAIT: Duration = Duration::from_secs(120);

use crate::names::Target;

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

fn state_of<'a>(
    vmi: Option<&'a VirtualMachineInstance>,
    vmim: &VirtualMachineInstanceMigration,
) -> Option<&'a MigrationState> {
    let uid = vmim.uid()?;
    vmi.and_then(|v| v.status.migration_state.as_ref())
        .filter(|s| s.migration_uid.as_deref() == Some(uid))
}

/// Who creates a new migration after this one is aborted (FACTS §2.2: while a VMI stays
/// marked for evacuation, or outdated for the workload updater, KubeVirt keeps creating
/// migrations for it, after a backoff of 20 s doubling per failure).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Recreator {
    /// The evacuation controller, draining this node.
    Evacuation(String),
    /// The workload updater (the VMI runs an outdated launcher).
    WorkloadUpdate,
}

impl Recreator {
    fn id(&self) -> &'static str {
        match self {
            Recreator::Evacuation(_) => "evacuation",
            Recreator::WorkloadUpdate => "workload-update",
        }
    }

    fn warning(&self, namespace: &str, migration: &str, vmi: &str) -> String {
        match self {
            Recreator::Evacuation(node) => format!(
                "{namespace}/{migration} is an evacuation of {vmi} from {node}: while the VMI stays marked (status.evacuationNodeName={node}), KubeVirt creates a new evacuation migration after this abort (backoff 20 s, doubling per failure). To stop the evacuation itself: vmctl abort --evacuation {vmi} -n {namespace}"
            ),
            Recreator::WorkloadUpdate => format!(
                "{namespace}/{migration} was created by KubeVirt's workload updater: while {vmi} runs an outdated launcher it creates a new one after this abort (backoff 20 s, doubling per failure). To stop it, change workloadUpdateStrategy in the KubeVirt CR"
            ),
        }
    }
}

fn recreated_by(
    vmim: &VirtualMachineInstanceMigration,
    vmi: Option<&VirtualMachineInstance>,
) -> Option<Recreator> {
    // The mark on the VMI decides; the VMIM's annotation only when the VMI was not read.
    let node = match vmi {
        Some(v) => v.evacuation_node(),
        None => vmim.evacuation_node(),
    };
    if let Some(node) = node {
        return Some(Recreator::Evacuation(node.to_string()));
    }
    vmim.annotation(WORKLOAD_UPDATE_ANNOTATION)
        .map(|_| Recreator::WorkloadUpdate)
}

pub async fn run(ctx: &'static Context, args: &AbortArgs) -> Result<i32> {
    let namespace = require_namespace(ctx)?;
    let target = parse_target(&args.target)?;
    let timeout = args.timeout;
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
    let (vmim, vmi_name) = match &target {
        Target::Migration(name) => {
            let m: Option<VirtualMachineInstanceMigration> = get_as(
                &ctx.source,
                Kind::VirtualMachineInstanceMigration,
                Some(&namespace),
                name,
            )
            .await?;
            let Some(m) = m else {
                return Err(Error::not_found(format!("migration {namespace}/{name}"))
                    .with_hint(format!("list the migrations: vmctl status -n {namespace}")));
            };
            let vmi = m.spec.vmi_name.clone();
            (Some(m), vmi)
        }
        Target::Vmi(name) => {
            let q = Query::namespace(Some(&namespace))
                .with_label(&format!("{VMI_NAME_LABEL}={name}"))?;
            let all: Vec<VirtualMachineInstanceMigration> =
                list_as(&ctx.source, Kind::VirtualMachineInstanceMigration, &q).await?;
            let m = all
                .into_iter()
                .filter(|m| !m.is_final())
                .max_by_key(|m| m.metadata.creation_timestamp.as_ref().map(|t| t.0));
            (m, name.clone())
        }
    };
    let vmi: Option<VirtualMachineInstance> = get_as(
        &ctx.source,
        Kind::VirtualMachineInstance,
        Some(&namespace),
        &vmi_name,
    )
    .await?;
    for w in crate::model::unknown::warnings(&vmi, &vmim, []) {
        ctx.warn(w);
    }

    // ---- decide
    let Some(vmim) = vmim.filter(|m| !m.is_final()) else {
        let what = match &target {
            Target::Migration(n) => format!("migration {namespace}/{n} has already ended"),
            Target::Vmi(n) => format!("no migration of {namespace}/{n} is in flight"),
        };
        let last = vmi
            .as_ref()
            .and_then(|v| v.status.migration_state.as_ref())
            .filter(|s| s.completed)
            .map(|s| {
                if s.failed {
                    format!(
                        "; its last migration failed{}",
                        s.failure_reason
                            .as_deref()
                            .map(|r| format!(": {}", r.trim_end()))
                            .unwrap_or_default()
                    )
                } else {
                    format!(
                        "; its last migration succeeded ({} → {})",
                        s.source_node.as_deref().unwrap_or("?"),
                        s.target_node.as_deref().unwrap_or("?")
                    )
                }
            })
            .unwrap_or_default();
        write_stdout(&format!("nothing to abort: {what}{last}\n"))?;
        return Ok(exit::FINDING);
    };
    let name = vmim.name().to_string();
    let state = state_of(vmi.as_ref(), &vmim).cloned();
    if state.as_ref().and_then(|s| s.mode.as_ref()) == Some(&MigrationMode::PostCopy) {
        let s = state.as_ref();
        write_stdout(&format!(
            "{} migration {namespace}/{name} is in post-copy: the guest runs on {} and part of its memory is still on {}. \
Its state is split across both nodes: aborting would lose the VM, so neither KubeVirt nor vmctl aborts a post-copy migration. \
It finishes on its own; follow it with: vmctl status --watch -n {namespace}\n",
            ctx.style.paint("refused:", Tone::Bad),
            s.and_then(|s| s.target_node.as_deref())
                .unwrap_or("the target"),
            s.and_then(|s| s.source_node.as_deref())
                .unwrap_or("the source"),
        ))?;
        return Ok(exit::FINDING);
    }
    let recreated = recreated_by(&vmim, vmi.as_ref());
    if let Some(r) = &recreated {
        stderr_line(&text::warning(
            ctx.style,
            &r.warning(&namespace, &name, &vmi_name),
        ));
    }
    let phase = vmim.phase();
    let before_handoff = matches!(
        phase,
        MigrationPhase::Unset
            | MigrationPhase::Pending
            | MigrationPhase::Scheduling
            | MigrationPhase::Scheduled
    );
    let path = format!(
        "{}/{name}",
        Kind::VirtualMachineInstanceMigration.collection_path(Some(&namespace))
    );
    if args.dry_run {
        let mut plan = json!({
            "apiVersion": crate::model::VMCTL_API_VERSION,
            "kind": "AbortPlan",
            "request": format!("DELETE {path}"),
            "migration": name, "vmi": vmi_name, "phase": phase.as_str(),
            "beforeHandOff": before_handoff,
            "recreatedBy": recreated.as_ref().map(Recreator::id),
            "warning": recreated.as_ref().map(|r| r.warning(&namespace, &name, &vmi_name)),
        });
        crate::render::with_warnings(&mut plan, ctx.warnings());
        let text = if ctx.output.is_structured() {
            structured(ctx.output, &plan)?
        } else {
            format!(
                "dry run: would abort migration {namespace}/{name} (phase {phase}) of {vmi_name}: DELETE {path}\n  {}\nnothing was changed.\n",
                if before_handoff {
                    "before the hand-off: KubeVirt deletes the target pod and fails the migration as canceled"
                } else {
                    "running: KubeVirt asks virt-handler to cancel the job; the guest stays on the source"
                }
            )
        };
        write_stdout(&text)?;
        return Ok(exit::OK);
    }
    let Some(live) = live else {
        return Err(Error::Internal("no live cluster to abort on".into()));
    };
    let driver = KubeVirtDriver::new(live);

    // ---- act
    let started = Instant::now();
    if !driver.delete_vmim(&namespace, &name).await? {
        write_stdout(&format!(
            "nothing to abort: migration {namespace}/{name} is already gone\n"
        ))?;
        return Ok(exit::FINDING);
    }
    stderr_line(&text::abort_requested(
        &namespace,
        &name,
        phase,
        before_handoff,
    ));

    // ---- wait for the abort status
    let deadline = started + timeout.unwrap_or(DEFAULT_WAIT);
    let spec = FollowSpec::one(&namespace, &name, &vmi_name)?.with_deadline(Some(deadline));
    let mut follower = Follower::new(live, spec);
    follower.mirror.follow_vmim(vmim.clone());
    follower
        .mirror
        .follow_vmi((namespace.clone(), vmi_name.clone()), vmi.clone());
    let mut wait = AbortWait {
        live,
        namespace: &namespace,
        name: &name,
        vmi_name: &vmi_name,
        before_handoff,
        said_aborting: false,
        ended: None,
    };
    let ending = follow(&mut follower, &mut wait).await?;
    match (ending, wait.ended) {
        (Ending::Done, Some(end)) => report(
            ctx,
            &namespace,
            &name,
            &vmi_name,
            &end.vmim,
            end.state.as_ref(),
            end.gone,
            before_handoff,
            started.elapsed(),
        ),
        (Ending::Stopped(Stop::Interrupted), _) => {
            stderr_line(&text::abort_interrupted(&namespace, &vmi_name));
            Ok(exit::INTERRUPTED)
        }
        _ => {
            let key: Key = (namespace.clone(), name.clone());
            let phase = follower
                .mirror
                .vmim_last(&key)
                .map_or_else(|| vmim.phase(), |m| m.phase());
            stderr_line(&text::abort_timed_out(
                &namespace,
                &name,
                started.elapsed(),
                phase,
            ));
            Ok(exit::TIMEOUT)
        }
    }
}

/// The end of an aborted migration, as last seen.
struct AbortEnd {
    vmim: VirtualMachineInstanceMigration,
    state: Option<MigrationState>,
    /// The VMIM was deleted (the abort went through before any status was reported).
    gone: bool,
}

/// Waits for the abort to be reported: `abortStatus`, a final phase, or the VMIM gone.
struct AbortWait<'a> {
    live: &'a LiveSource,
    namespace: &'a str,
    name: &'a str,
    vmi_name: &'a str,
    before_handoff: bool,
    said_aborting: bool,
    ended: Option<AbortEnd>,
}

impl Observer for AbortWait<'_> {
    async fn settle(&mut self, mirror: &Mirror) -> Result<bool> {
        let key: Key = (self.namespace.to_string(), self.name.to_string());
        let vmi_key: Key = (self.namespace.to_string(), self.vmi_name.to_string());
        let Some(current) = mirror.vmim_last(&key) else {
            return Ok(false);
        };
        let gone = mirror.vmim_gone(&key);
        let s = state_of(mirror.vmi_last(&vmi_key), current).cloned();
        if s.as_ref().and_then(|s| s.abort_status.as_ref()) == Some(&AbortStatus::Aborting)
            && !self.said_aborting
        {
            self.said_aborting = true;
            stderr_line(&text::aborting());
        }
        let final_abort = s
            .as_ref()
            .and_then(|s| s.abort_status.clone())
            .filter(|a| *a != AbortStatus::Aborting);
        if final_abort.is_none() && !current.is_final() && !gone {
            return Ok(false);
        }
        // The VMIM's watch can report the end before the VMI's: read the VMI once more.
        let s = if final_abort.is_none() && !self.before_handoff {
            let fresh: Option<VirtualMachineInstance> = get_as(
                self.live,
                Kind::VirtualMachineInstance,
                Some(self.namespace),
                self.vmi_name,
            )
            .await?;
            state_of(fresh.as_ref(), current).cloned().or(s)
        } else {
            s
        };
        self.ended = Some(AbortEnd {
            vmim: current.clone(),
            state: s,
            gone,
        });
        Ok(true)
    }
}

#[allow(clippy::too_many_arguments)]
fn report(
    ctx: &Context,
    namespace: &str,
    name: &str,
    vmi: &str,
    vmim: &VirtualMachineInstanceMigration,
    state: Option<&MigrationState>,
    gone: bool,
    before_handoff: bool,
    took: Duration,
) -> Result<i32> {
    let took = fmt::duration(took.as_secs() as i64);
    let abort = state.and_then(|s| s.abort_status.clone());
    let source = state
        .and_then(|s| s.source_node.clone())
        .unwrap_or_else(|| "the source".into());
    let (text, code, result) = if vmim.phase() == MigrationPhase::Succeeded {
        (
            format!(
                "abort too late: migration {namespace}/{name} completed before the abort landed; {vmi} runs on {}",
                state
                    .and_then(|s| s.target_node.as_deref())
                    .unwrap_or("the target")
            ),
            exit::FINDING,
            "completed",
        )
    } else if abort == Some(AbortStatus::Failed) {
        (
            format!(
                "abort failed (abortStatus Failed): {}; see vmctl explain migration/{name} -n {namespace}",
                state
                    .and_then(|s| s.failure_reason.as_deref())
                    .map(str::trim_end)
                    .unwrap_or("no reason recorded")
            ),
            exit::FINDING,
            "abort-failed",
        )
    } else if abort == Some(AbortStatus::Succeeded) {
        (
            format!(
                "aborted (abortStatus Succeeded) in {took}: {namespace}/{vmi} keeps running on {source}{}",
                state
                    .and_then(|s| s.source_pod.as_deref())
                    .map(|p| format!(" in {p} (live)"))
                    .unwrap_or_default()
            ),
            exit::OK,
            "aborted",
        )
    } else if before_handoff || gone || vmim.phase() == MigrationPhase::Failed {
        (
            format!(
                "cancelled in {took}: migration {namespace}/{name} ended before streaming; {namespace}/{vmi} stays on {source}"
            ),
            exit::OK,
            "cancelled",
        )
    } else {
        (
            format!(
                "migration {namespace}/{name} ended in phase {}",
                vmim.phase()
            ),
            exit::FINDING,
            "unknown",
        )
    };
    if ctx.output.is_structured() {
        let mut doc = json!({"apiVersion": crate::model::VMCTL_API_VERSION, "kind": "AbortResult",
            "namespace": namespace, "migration": name, "vmi": vmi, "result": result,
            "abortStatus": abort.map(|a| a.as_str().to_string()), "message": text});
        crate::render::with_warnings(&mut doc, ctx.warnings());
        write_stdout(&structured(ctx.output, &doc)?)?;
    } else {
        write_stdout(&format!("{text}\n"))?;
    }
    Ok(code)
}

/// `--evacuation`: clears `evacuationNodeName` through `evacuate/cancel` (v1.7+).
async fn cancel_evacuation(
    ctx: &Context,
    live: Option<&LiveSource>,
    namespace: &str,
    name: &str,
    dry_run: bool,
) -> Result<i32> {
    let vmi: Option<VirtualMachineInstance> = get_as(
        &ctx.source,
        Kind::VirtualMachineInstance,
        Some(namespace),
        name,
    )
    .await?;
    let Some(vmi) = vmi else {
        return Err(Error::not_found(format!("VMI {namespace}/{name}")));
    };
    let Some(node) = vmi.evacuation_node().map(str::to_string) else {
        write_stdout(&format!(
            "nothing to cancel: {namespace}/{name} is not marked for evacuation (no status.evacuationNodeName)\n"
        ))?;
        return Ok(exit::FINDING);
    };
    let kubevirts: Vec<KubeVirt> = list_as(&ctx.source, Kind::KubeVirt, &Query::all()).await?;
    let version = kubevirts
        .first()
        .and_then(KubeVirt::version)
        .map(str::to_string);
    let supported = version
        .as_deref()
        .and_then(parse_version)
        .is_some_and(|v| v >= (1, 7));
    let kind = if vmi.owner_vm().is_some() {
        Kind::VirtualMachine
    } else {
        Kind::VirtualMachineInstance
    };
    if !supported {
        write_stdout(&format!(
            "cannot cancel: KubeVirt {} has no evacuate/cancel (it came in v1.7). {namespace}/{name} stays marked for evacuation from {node}, \
and KubeVirt keeps creating evacuation migrations for it even after the node is uncordoned (kubevirt/kubevirt#9585).\n\
The manual way:\n\
  1. abort the evacuation migration in flight, if any: vmctl abort {name} -n {namespace}\n\
  2. clear the mark as a cluster admin: kubectl patch vmi {name} -n {namespace} --type=json -p '[{{\"op\":\"remove\",\"path\":\"/status/evacuationNodeName\"}}]'\n\
     (or let the migration complete: the target virt-handler clears it)\n\
  3. uncordon {node} if the drain is called off\n",
            version.as_deref().unwrap_or("(version not reported)")
        ))?;
        return Ok(exit::FINDING);
    }
    let path = format!(
        "/apis/subresources.kubevirt.io/v1/namespaces/{namespace}/{}/{name}/evacuate/cancel",
        kind.plural()
    );
    if dry_run {
        write_stdout(&format!(
            "dry run: would PUT {path} with {{\"evacuationNodeName\": \"{node}\"}} (as virtctl evacuate-cancel does)\nnothing was changed.\n"
        ))?;
        return Ok(exit::OK);
    }
    let Some(live) = live else {
        return Err(Error::Internal("no live cluster".into()));
    };
    KubeVirtDriver::new(live)
        .evacuate_cancel(namespace, kind, name, &node)
        .await?;
    write_stdout(&format!(
        "evacuation of {namespace}/{name} from {node} cancelled (evacuationNodeName cleared through evacuate/cancel).\n  \
An evacuation migration already in flight goes on: abort it with vmctl abort {name} -n {namespace}\n"
    ))?;
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

    fn vmim(annotations: serde_json::Value) -> VirtualMachineInstanceMigration {
        serde_json::from_value(json!({"metadata": {"name": "m", "annotations": annotations}}))
            .unwrap()
    }

    fn vmi(evacuation: Option<&str>) -> VirtualMachineInstance {
        serde_json::from_value(json!({"metadata": {"name": "a"},
            "status": {"evacuationNodeName": evacuation}}))
        .unwrap()
    }

    #[test]
    fn who_recreates_an_aborted_migration() {
        let evac = vmim(json!({"kubevirt.io/evacuationMigration": "node-1"}));
        // The VMI's mark decides.
        assert_eq!(
            recreated_by(&evac, Some(&vmi(Some("node-1")))),
            Some(Recreator::Evacuation("node-1".into()))
        );
        assert_eq!(recreated_by(&evac, Some(&vmi(None))), None);
        // A user's migration of a marked VMI is followed by an evacuation one too.
        assert_eq!(
            recreated_by(&vmim(json!({})), Some(&vmi(Some("node-2")))),
            Some(Recreator::Evacuation("node-2".into()))
        );
        // Without the VMI, the annotation is all there is.
        assert_eq!(
            recreated_by(&evac, None),
            Some(Recreator::Evacuation("node-1".into()))
        );
        let update = vmim(json!({"kubevirt.io/workloadUpdateMigration": ""}));
        assert_eq!(
            recreated_by(&update, Some(&vmi(None))),
            Some(Recreator::WorkloadUpdate)
        );
        assert_eq!(recreated_by(&vmim(json!({})), Some(&vmi(None))), None);
        let w = Recreator::Evacuation("node-1".into()).warning("prod", "m", "a");
        assert!(w.contains("vmctl abort --evacuation a -n prod"), "{w}");
    }
}
