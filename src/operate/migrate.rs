//! Following a migration vmctl started through KubeVirt (I/O and presentation together, so
//! above `render/`): the one loop (`migration::driver::drive`) over the KubeVirt driver
//! (`operate::kubevirt_job`: phase lines, progress samples from virt-handler's metrics, the
//! temporary policy's removal at the hand-off), the controller's advice, what Ctrl-C and
//! `--timeout` leave behind, and at the end the result document or the diagnosis `explain`
//! gives.

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::Serialize;
use serde_json::{Value, json};

use super::kubevirt_job::{JobSetup, KubeVirtJob};
use crate::cli::MigrateArgs;
use crate::context::{ClockSource, Context};
use crate::error::{Result, exit};
use crate::migration::controller::{Config, Controller};
use crate::migration::driver::{
    DowntimeMemo, End, Policy, SAMPLE_PERIOD, Settings, Stop as DriverStop, drive,
};
use crate::migration::follow::{Followed, MetricsSource, mode_of};
use crate::migration::kubevirt::{KubeVirtDriver, Prometheus};
use crate::migration::{Outcome, Summary};
use crate::model::VirtualMachineInstanceMigration;
use crate::model::vmi::AbortStatus;
use crate::model::vmim::MigrationPhase;
use crate::policy::preflight::Preflight;
use crate::render::follow as text;
use crate::render::progress::ProgressView;
use crate::render::{OutputFormat, stderr_line, structured, write_stdout};
use crate::triage::Outcome as TriageOutcome;

/// What vmctl will create, for `--dry-run` and for doing it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationPlan {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub namespace: String,
    pub vmi: String,
    /// `migrate-subresource` (a VM) or `create-vmim` (a bare VMI).
    pub method: &'static str,
    pub preflight: Preflight,
    /// The request or objects, in order.
    pub objects: Vec<Value>,
    /// Why the temporary policy wins, when there is one.
    pub policy_proof: Option<String>,
    pub notes: Vec<String>,
    /// The dirty-rate prediction (`migration::predict`) under the configuration the migration
    /// will run with, when virt-handler's metrics could be read: advice, never a refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prediction: Option<crate::migration::predict::Prediction>,
    /// What vmctl makes of it: KubeVirt's timing, the finding, the alternatives in
    /// MigrationPolicy words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub convergence: Option<crate::policy::drain::convergence::Convergence>,
    /// The prediction in words (also said on stderr before anything is created).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prediction_lines: Vec<String>,
    /// What was said on stderr about the input (unknown values …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The end: summary, and on failure the diagnosis `vmctl explain` gives.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn finish(
    ctx: &Context,
    guest_memory: Option<u64>,
    view: &mut ProgressView,
    f: &Followed,
    namespace: &str,
    name: &str,
    elapsed_ms: u64,
    plan: &MigrationPlan,
) -> Result<i32> {
    let state = f.state().cloned();
    let aborted = state
        .as_ref()
        .is_some_and(|s| s.abort_requested && s.abort_status == Some(AbortStatus::Succeeded));
    let observed = match f.phase() {
        MigrationPhase::Succeeded => Outcome::Succeeded,
        _ if aborted => Outcome::Aborted,
        _ if f.vmim_deleted => Outcome::Aborted,
        _ => Outcome::Failed,
    };
    // Anything but a success is explained exactly as `vmctl explain` explains it, and the
    // verdict is the diagnosis's, so the two never disagree.
    // The run goes to the journal (issue 28) with the same evidence and diagnosis, also when
    // it succeeded (then the evidence is read only for the journal).
    let journal = super::journal::RunJournal::of(ctx);
    let explained = if observed == Outcome::Succeeded && !journal.enabled() {
        None
    } else {
        diagnose_with_evidence(ctx, f.vmim.as_ref(), name).await
    };
    if let Some((evidence, report)) = &explained {
        let series = json!({
            "source": "vmctl migrate",
            "points": crate::migration::series::downsample(
                &view.history(),
                crate::migration::series::DEFAULT_CAPACITY,
            ),
        });
        let sent = view.last_sample().map_or(0, |s| s.data_processed);
        journal
            .write_kubevirt(
                evidence,
                report,
                crate::model::journal::RecordedBy::Migrate,
                Some((series, sent)),
            )
            .await;
    }
    let diagnosis = explained
        .map(|(_, report)| report)
        .filter(|_| observed != Outcome::Succeeded);
    let outcome = match diagnosis.as_ref().map(|d| d.diagnosis.outcome) {
        Some(TriageOutcome::Aborted) => Outcome::Aborted,
        Some(TriageOutcome::Failed) => Outcome::Failed,
        Some(TriageOutcome::Succeeded) => Outcome::Succeeded,
        _ => observed,
    };
    let vmim_name = f
        .vmim
        .as_ref()
        .map(|m| m.name().to_string())
        .unwrap_or_default();
    // Where the VM went, from the API (the VMI's migrationState.targetNode), beside where
    // the pre-flight predicted it would go (the scheduler chooses).
    let went = state.as_ref().and_then(|s| s.target_node.clone());
    let predicted = f.predicted_target.clone();
    let as_predicted = went
        .as_ref()
        .zip(predicted.as_ref())
        .map(|(went, predicted)| went == predicted);
    let message = match outcome {
        Outcome::Succeeded => format!(
            "{namespace}/{name} runs on {} now ({} → {}{})",
            went.clone().unwrap_or_else(|| "the target".into()),
            state
                .as_ref()
                .and_then(|s| s.source_node.clone())
                .unwrap_or_default(),
            went.clone().unwrap_or_default(),
            match (&went, &predicted, as_predicted) {
                (Some(w), Some(p), Some(false)) => format!("; went to {w}; predicted {p}"),
                _ => String::new(),
            }
        ),
        Outcome::Aborted if f.vmim_deleted && !aborted => {
            format!("the migration {vmim_name} was deleted (aborted) while vmctl followed it")
        }
        _ => match &diagnosis {
            Some(d) => d.diagnosis.summary.clone(),
            None => state
                .as_ref()
                .and_then(|s| s.failure_reason.clone())
                .map(|r| r.trim_end().to_string())
                .unwrap_or_else(|| "the migration failed".into()),
        },
    };
    let last = view.last_sample().cloned();
    let summary = Summary {
        outcome: Some(outcome),
        cause: diagnosis.as_ref().map(|d| d.diagnosis.cause.to_string()),
        message,
        total_ms: elapsed_ms,
        job_ms: None,
        downtime_ms: None,
        data_processed: last.as_ref().map_or(0, |s| s.data_processed),
        // The guest's memory as the VMI declares it: the metrics' total counts every pass.
        memory_total: guest_memory.unwrap_or(0),
        iterations: None,
        final_mode: mode_of(state.as_ref().and_then(|s| s.mode.as_ref())),
        postcopy_requests: None,
        events: view.events().to_vec(),
    };
    if ctx.output.is_structured() {
        view.close();
        let mut report = json!({
            "apiVersion": crate::model::VMCTL_API_VERSION,
            "kind": "MigrationResult",
            "namespace": namespace,
            "vmi": name,
            "migration": vmim_name,
            "method": plan.method,
            "outcome": outcome.as_str(),
            "summary": summary,
            "sourceNode": state.as_ref().and_then(|s| s.source_node.clone()),
            "targetNode": went,
            "predictedTargetNode": predicted,
            "asPredicted": as_predicted,
            "sourcePod": state.as_ref().and_then(|s| s.source_pod.clone()),
            "targetPod": state.as_ref().and_then(|s| s.target_pod.clone()),
            "migrationPolicy": state.as_ref().and_then(|s| s.migration_policy_name.clone()),
            "phases": f.phases.iter().filter(|(k, _)| !k.ends_with('|')).map(|(k, at)| json!({
                "phase": k.split('|').next().unwrap_or(""), "atMs": at})).collect::<Vec<_>>(),
            "diagnosis": diagnosis.as_ref().map(|d| &d.diagnosis),
        });
        if let (Some(p), Some(map)) = (&plan.prediction, report.as_object_mut()) {
            map.insert("prediction".into(), json!(p));
        }
        crate::render::with_warnings(&mut report, ctx.warnings());
        crate::render::write_document(&structured(ctx.output, &report)?)?;
    } else {
        view.finish(&summary);
        if let Some(report) = &diagnosis {
            write_stdout("\nWhy (vmctl explain):\n")?;
            write_stdout(&crate::render::explain::render_table(
                report,
                ctx.style,
                ctx.output == OutputFormat::Wide,
                "",
            ))?;
        }
    }
    Ok(match outcome {
        Outcome::Succeeded => exit::OK,
        _ => exit::FINDING,
    })
}

/// The diagnosis `vmctl explain` gives, from the evidence read the same way (the same
/// code, with its tolerance of what a namespaced user may not read); None when even the
/// VMI's namespace cannot be read; with the evidence it rests on (what the journal keeps).
pub(crate) async fn diagnose_with_evidence(
    ctx: &Context,
    last_seen: Option<&VirtualMachineInstanceMigration>,
    name: &str,
) -> Option<(
    crate::triage::Evidence,
    crate::triage::report::ExplainReport,
)> {
    let last_seen = last_seen?;
    let mut notes = Vec::new();
    let mut evidence =
        match crate::evidence::evidence_for_migration(ctx, last_seen, name, &mut notes).await {
            Ok(e) => e,
            Err(e) => {
                stderr_line(&text::no_evidence(&e.to_string()));
                return None;
            }
        };
    // The migration ran for a while: measure from now, not from when vmctl started.
    if ctx.clock == ClockSource::System {
        evidence.now = k8s_openapi::jiff::Timestamp::now();
    }
    let report =
        crate::triage::report::build_report(&evidence, false, &ctx.source_description(), notes);
    Some((evidence, report))
}

/// What `run` hands to the follow: the migration it started, when, and what it created.
pub(crate) struct Started {
    pub(crate) vmim: VirtualMachineInstanceMigration,
    pub(crate) at: Instant,
    /// The temporary policy, while it exists.
    pub(crate) policy: Option<String>,
    /// vmctl created the VMIM itself (a bare VMI), rather than virt-api for a VM.
    pub(crate) created_vmim: bool,
    pub(crate) abort_cmd: String,
}

/// Drives the migration through the one loop (`migration::driver::drive`) with the KubeVirt
/// driver (`operate::kubevirt_job`) to its end (or the hand-off with `--no-wait`), removes
/// the temporary policy, and says how it ended: the result, or the diagnosis `explain`
/// gives. Ctrl-C and `--timeout` follow KubeVirt's [`Policy`]: a migration not yet under way
/// is taken back (its VMIM deleted); one under way belongs to the cluster and goes on.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn follow_to_end(
    ctx: &'static Context,
    args: &MigrateArgs,
    guest_memory: Option<u64>,
    kubevirt_namespace: String,
    pre: &crate::policy::preflight::Preflight,
    current: &crate::model::kubevirt::EffectiveMigrationConfig,
    driver: &KubeVirtDriver<'_>,
    start: Started,
    plan: &MigrationPlan,
) -> Result<i32> {
    let Started {
        vmim,
        at: started,
        policy: policy_name,
        created_vmim,
        abort_cmd,
    } = start;
    let (namespace, name) = (plan.namespace.as_str(), plan.vmi.as_str());
    let vmim_name = vmim.name().to_string();
    let wait = !args.no_wait;
    let post_copy_allowed = args.allow_postcopy || current.allow_post_copy;
    let is_tty = std::io::stderr().is_terminal();
    let budget = pre.budget_seconds;
    let mut view = if ctx.output.is_structured() {
        ProgressView::quiet(ctx.style, name, budget)
    } else {
        ProgressView::new(ctx.style, is_tty, name, budget)
    };
    let metrics = match &args.prometheus {
        Some(url) => MetricsSource::Prometheus(Prometheus::new(url)?),
        None => MetricsSource::Handler {
            kubevirt_namespace,
            pod: None,
        },
    };
    let interrupt = AtomicBool::new(false);
    let mut job = KubeVirtJob::new(JobSetup {
        driver,
        namespace,
        name,
        followed: Followed {
            vmim: Some(vmim),
            progress_timeout: current.progress_timeout,
            post_copy_allowed,
            predicted_target: pre.target.clone(),
            ..Followed::default()
        },
        metrics,
        started,
        deadline: args.timeout.map(|t| started + t),
        policy: policy_name.clone(),
        wait,
        budget,
        bars: is_tty && !ctx.output.is_structured(),
        interrupt: &interrupt,
    })?;
    // The controller KubeVirt's monitor amounts to, judging for advice (see `Policy`).
    let mut controller = Controller::new(Config::advising_kubevirt(
        current,
        guest_memory.unwrap_or(0),
        budget,
    ));
    let settings = Settings {
        period: SAMPLE_PERIOD,
        interrupt: &interrupt,
        deadline: args.timeout,
        downtime: DowntimeMemo::default(),
        policy: Policy::kubevirt(post_copy_allowed),
    };
    let driven = drive(&mut job, &mut controller, &mut view, &settings).await;
    let followed = std::mem::take(&mut job.f);
    let (policy_alive, failed) = (job.policy_alive.take(), job.failed.take());
    if let Some(e) = failed {
        view.close();
        if let Some(p) = &policy_alive {
            cleanup_policy(driver, p).await;
        }
        stderr_line(&text::migration_goes_on(&abort_cmd));
        return Err(e);
    }
    if let Some(p) = policy_alive {
        cleanup_policy(driver, &p).await;
    }
    let elapsed_ms = started.elapsed().as_millis() as u64;

    match (driven.end, driven.stopped_by) {
        (End::TakenBack(deleted), _) => {
            view.close();
            if created_vmim {
                stderr_line(&text::interrupted_deleted(&vmim_name, deleted.is_ok()));
            } else {
                // virt-api created it for the VM; deleting it is an abort like any other.
                stderr_line(&text::interrupted_cancelled(&vmim_name));
            }
            Ok(exit::INTERRUPTED)
        }
        (End::Left, Some(DriverStop::Timeout)) => {
            view.close();
            stderr_line(&text::migrate_timed_out(
                elapsed_ms,
                followed.phase(),
                &abort_cmd,
            ));
            Ok(exit::TIMEOUT)
        }
        (End::Left, _) => {
            view.close();
            stderr_line(&text::interrupted_detached(
                namespace,
                &vmim_name,
                followed.phase(),
                &abort_cmd,
            ));
            Ok(exit::INTERRUPTED)
        }
        (End::Job(_), _) if !wait => {
            view.close();
            write_stdout(&format!(
                "{namespace}/{vmim_name}\n  handed off (policy {} applied and removed)\n  follow: vmctl status --watch -n {namespace}\n  abort:  {abort_cmd}\n",
                policy_name.as_deref().unwrap_or("-")
            ))?;
            Ok(exit::OK)
        }
        (End::Job(_), _) => {
            finish(
                ctx,
                guest_memory,
                &mut view,
                &followed,
                namespace,
                name,
                elapsed_ms,
                plan,
            )
            .await
        }
    }
}

pub(crate) async fn cleanup_policy(driver: &KubeVirtDriver<'_>, name: &str) {
    match driver.delete_policy(name).await {
        Ok(_) => stderr_line(&text::policy_deleted(name)),
        Err(e) => stderr_line(&text::policy_not_deleted(name, &e.to_string())),
    }
}
