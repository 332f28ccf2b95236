//! `vmctl abort` through KubeVirt, the doing: read the migration and its VMI, DELETE the VMIM
//! (FACTS §3.5), then follow it until the abort is reported (`abortStatus`, a final phase, or
//! the VMIM gone); and `--evacuation`'s reads. What to decide is `policy::abort`; the words
//! are `render::abort`.

use std::time::{Duration, Instant};

use crate::cluster::live::LiveSource;
use crate::cluster::{Kind, Query, get_as, list_as};
use crate::context::Context;
use crate::error::{Error, Result, exit};
use crate::migration::follow::{Ending, FollowSpec, Follower, Key, Mirror, Observer, Stop, follow};
use crate::migration::kubevirt::KubeVirtDriver;
use crate::model::journal::RecordedBy;
use crate::model::vmi::{AbortStatus, MigrationState};
use crate::model::vmim::VMI_NAME_LABEL;
use crate::model::{KubeVirt, VirtualMachineInstance, VirtualMachineInstanceMigration};
use crate::names::Target;
use crate::policy::abort::{AbortPlan, in_flight, outcome, state_of};
use crate::render::abort::{self as words, Names};
use crate::render::follow as text;
use crate::render::{stderr_line, write_stdout};

/// How long to wait for the abort to be reported when no --timeout is given.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(120);

/// The migration an abort is about (the named one, or the VMI's newest unfinished one) and
/// its VMI, as read before the abort.
pub struct Found {
    pub vmim: Option<VirtualMachineInstanceMigration>,
    pub vmi_name: String,
    pub vmi: Option<VirtualMachineInstance>,
}

/// Reads the migration `target` names and its VMI; a named migration that does not exist is
/// an error, a VMI without a migration in flight is not.
pub async fn gather(ctx: &Context, namespace: &str, target: &Target) -> Result<Found> {
    let (vmim, vmi_name) = match target {
        Target::Migration(name) => {
            let m: Option<VirtualMachineInstanceMigration> = get_as(
                &ctx.source,
                Kind::VirtualMachineInstanceMigration,
                Some(namespace),
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
            let q = Query::namespace(Some(namespace))
                .with_label(&format!("{VMI_NAME_LABEL}={name}"))?;
            let all: Vec<VirtualMachineInstanceMigration> =
                list_as(&ctx.source, Kind::VirtualMachineInstanceMigration, &q).await?;
            (in_flight(all), name.clone())
        }
    };
    let vmi: Option<VirtualMachineInstance> = get_as(
        &ctx.source,
        Kind::VirtualMachineInstance,
        Some(namespace),
        &vmi_name,
    )
    .await?;
    for w in crate::model::unknown::warnings(&vmi, &vmim, []) {
        ctx.warn(w);
    }
    Ok(Found {
        vmim,
        vmi_name,
        vmi,
    })
}

/// DELETEs the VMIM of `plan` and waits (up to `timeout`, default [`DEFAULT_WAIT`]) for the
/// abort to be reported; writes the result. Returns the exit code.
pub async fn abort(
    ctx: &Context,
    live: &LiveSource,
    found: &Found,
    plan: &AbortPlan,
    namespace: &str,
    timeout: Option<Duration>,
) -> Result<i32> {
    let name = plan.migration.as_str();
    let vmi_name = found.vmi_name.as_str();
    let names = Names {
        namespace,
        migration: name,
        vmi: vmi_name,
    };
    let driver = KubeVirtDriver::new(live);
    let started = Instant::now();
    if !driver.abort_vmim(namespace, name, "vmctl abort").await? {
        write_stdout(&words::already_gone(namespace, name))?;
        return Ok(exit::FINDING);
    }
    stderr_line(&text::abort_requested(
        namespace,
        name,
        plan.phase.clone(),
        plan.before_handoff,
    ));

    let deadline = started + timeout.unwrap_or(DEFAULT_WAIT);
    let spec = FollowSpec::one(namespace, name, vmi_name)?.with_deadline(Some(deadline));
    let mut follower = Follower::new(live, spec);
    if let Some(vmim) = &found.vmim {
        follower.mirror.follow_vmim(vmim.clone());
    }
    follower.mirror.follow_vmi(
        (namespace.to_string(), vmi_name.to_string()),
        found.vmi.clone(),
    );
    let mut wait = AbortWait {
        live,
        names,
        before_handoff: plan.before_handoff,
        said_aborting: false,
        ended: None,
    };
    let ending = follow(&mut follower, &mut wait).await?;
    match (ending, wait.ended) {
        (Ending::Done, Some(end)) => {
            let state = end.state.as_ref();
            let o = outcome(end.vmim.phase(), state, end.gone, plan.before_handoff);
            let abort_status = state.and_then(|s| s.abort_status.as_ref());
            // The aborted migration goes to the journal (issue 28), as `explain` sees it.
            let journal = super::journal::RunJournal::of(ctx);
            if journal.enabled()
                && let Some((evidence, report)) =
                    super::migrate::diagnose_with_evidence(ctx, Some(&end.vmim), vmi_name).await
            {
                journal
                    .write_kubevirt(&evidence, &report, RecordedBy::Abort, None)
                    .await;
            }
            write_stdout(&words::result(
                ctx.output,
                ctx.warnings(),
                names,
                &o,
                abort_status,
                started.elapsed(),
            )?)?;
            Ok(if o.succeeded() {
                exit::OK
            } else {
                exit::FINDING
            })
        }
        (Ending::Stopped(Stop::Interrupted), _) => {
            stderr_line(&text::abort_interrupted(namespace, vmi_name));
            Ok(exit::INTERRUPTED)
        }
        _ => {
            let key: Key = (namespace.to_string(), name.to_string());
            let phase = follower
                .mirror
                .vmim_last(&key)
                .map(|m| m.phase())
                .unwrap_or_else(|| plan.phase.clone());
            stderr_line(&text::abort_timed_out(
                namespace,
                name,
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
    names: Names<'a>,
    before_handoff: bool,
    said_aborting: bool,
    ended: Option<AbortEnd>,
}

impl Observer for AbortWait<'_> {
    async fn settle(&mut self, mirror: &Mirror) -> Result<bool> {
        let Names {
            namespace,
            migration,
            vmi,
        } = self.names;
        let key: Key = (namespace.to_string(), migration.to_string());
        let vmi_key: Key = (namespace.to_string(), vmi.to_string());
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
                Some(namespace),
                vmi,
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

/// `--evacuation`'s reads: the VMI (it must exist) and the KubeVirt version.
pub async fn gather_evacuation(
    ctx: &Context,
    namespace: &str,
    name: &str,
) -> Result<(VirtualMachineInstance, Option<String>)> {
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
    let kubevirts: Vec<KubeVirt> = list_as(&ctx.source, Kind::KubeVirt, &Query::all()).await?;
    let version = kubevirts
        .first()
        .and_then(KubeVirt::version)
        .map(str::to_string);
    Ok((vmi, version))
}
