//! Following a migration vmctl started through KubeVirt (I/O and presentation together, so
//! above `render/`): the follower's updates turned into phase lines, progress samples from
//! virt-handler's metrics, the temporary policy's removal at the hand-off, the controller's
//! advice, and at the end the result document or the diagnosis `explain` gives.

use serde::Serialize;
use serde_json::Value;

use crate::policy::preflight::Preflight;
use std::time::{Duration, Instant};

use serde_json::json;

use std::io::IsTerminal;

use crate::cli::MigrateArgs;
use crate::cluster::{Kind, Query, Source};
use crate::context::{ClockSource, Context};
use crate::error::{Result, exit};
use crate::migration::follow::{
    Advisor, Ending, FollowSpec, Followed, Follower, Key, MetricsSource, Mirror, Observer, Stop,
    follow, handed_off, mode_of, read_metrics, sample_from,
};
use crate::migration::kubevirt::{KubeVirtDriver, MetricsUnavailable, Prometheus};
use crate::migration::{JobSample, Mode, Outcome, Summary};
use crate::model::vmi::AbortStatus;
use crate::model::vmim::MigrationPhase;
use crate::model::{Pod, VirtualMachineInstance, VirtualMachineInstanceMigration};
use crate::policy::links::MIGRATION_JOB_UID_LABEL;
use crate::render::follow::{self as text, report_changes};
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

/// The follow of one migration vmctl started: the follower's updates, and what `migrate`
/// does with them (phase lines, progress samples, the temporary policy's removal, advice).
pub(crate) struct Following<'a> {
    pub(crate) driver: &'a KubeVirtDriver<'a>,
    pub(crate) namespace: &'a str,
    /// The VMI.
    pub(crate) name: &'a str,
    pub(crate) vmim_name: String,
    pub(crate) f: Followed,
    pub(crate) view: ProgressView,
    pub(crate) metrics: MetricsSource,
    pub(crate) started: Instant,
    /// The temporary policy, until the hand-off.
    pub(crate) policy_alive: Option<String>,
    /// Follow to the end (else: until the hand-off).
    pub(crate) wait: bool,
    pub(crate) budget: Option<u64>,
    /// Progress bars on a terminal (else one heartbeat line per 10 s).
    pub(crate) bars: bool,
    pub(crate) advisor: Advisor,
    pub(crate) degraded: Option<String>,
    pub(crate) last_heartbeat_ms: u64,
    pub(crate) target_pod: Option<Pod>,
    pub(crate) last_target_lookup: u64,
}

impl Following<'_> {
    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Follows until the migration ends (or is handed off, without `wait`), Ctrl-C or the
    /// deadline.
    pub(crate) async fn run(&mut self, deadline: Option<Instant>) -> Result<Ending> {
        let spec = FollowSpec::one(self.namespace, &self.vmim_name, self.name)?
            .with_tick(Duration::from_secs(1))
            .with_deadline(deadline);
        let mut follower = Follower::new(self.driver.live(), spec);
        if let Some(m) = self.f.vmim.clone() {
            follower.mirror.follow_vmim(m);
        }
        follower
            .mirror
            .follow_vmi((self.namespace.to_string(), self.name.to_string()), None);
        follow(&mut follower, self).await
    }

    /// The policy has done its job once KubeVirt recorded it at the hand-off.
    async fn remove_policy_after_hand_off(&mut self, now_ms: u64) {
        if !handed_off(&self.f) {
            return;
        }
        let Some(p) = self.policy_alive.take() else {
            return;
        };
        let applied = self.f.state().and_then(|s| s.migration_policy_name.clone());
        match applied.as_deref() {
            Some(a) if a == p => self.view.event_at(
                now_ms,
                &format!("policy {p} applied (migrationState.migrationPolicyName); removing it"),
            ),
            Some(other) => self.view.event_at(
                now_ms,
                &format!(
                    "warning: KubeVirt applied policy {other}, not {p} (a policy created meanwhile?)"
                ),
            ),
            None => self
                .view
                .event_at(now_ms, &format!("hand-off done; removing policy {p}")),
        }
        let _ = self.driver.delete_policy(&p).await;
    }

    /// Once a second: the target pod while scheduling, a progress sample while running,
    /// a heartbeat line off a terminal.
    async fn on_tick(&mut self) -> Result<()> {
        let now_ms = self.now_ms();
        let namespace = self.namespace;
        // The target pod, for the Scheduling line (unschedulable, …).
        if matches!(
            self.f.phase(),
            MigrationPhase::Pending | MigrationPhase::Scheduling
        ) && (self.target_pod.is_none() || now_ms >= self.last_target_lookup + 2000)
        {
            self.last_target_lookup = now_ms;
            if let Some(uid) = self.f.vmim.as_ref().and_then(|m| m.uid()) {
                let q = Query::namespace(Some(namespace))
                    .with_label(&format!("{MIGRATION_JOB_UID_LABEL}={uid}"))?;
                if let Ok(pods) = self.driver.live().list_decoded::<Pod>(Kind::Pod, &q).await {
                    self.target_pod = pods.into_iter().next();
                }
            }
        }
        if self.f.phase() == MigrationPhase::Running && self.degraded.is_none() {
            self.sample(now_ms).await;
        }
        // Off a terminal without bars, one line per interval keeps the log alive.
        let f = &self.f;
        if !self.bars
            && (self.degraded.is_some() || f.phase() != MigrationPhase::Running)
            && now_ms >= self.last_heartbeat_ms + 10_000
        {
            self.last_heartbeat_ms = now_ms;
            let state = f.state();
            let streaming_ms = state
                .and_then(|s| s.start_timestamp.as_ref())
                .map(|_| f.started_ms.map_or(now_ms, |s| now_ms.saturating_sub(s)));
            stderr_line(&text::heartbeat(
                now_ms,
                f.phase(),
                state.and_then(|s| s.mode.as_ref()),
                streaming_ms,
                self.budget,
            ));
        }
        Ok(())
    }

    /// Reads the metrics into a sample: drawn, checked against KubeVirt's progress timeout,
    /// and judged by the controller for advice.
    async fn sample(&mut self, now_ms: u64) {
        let mode = mode_of(self.f.state().and_then(|s| s.mode.as_ref()));
        let (namespace, name) = (self.namespace, self.name);
        match read_metrics(self.driver, &mut self.metrics, &self.f, namespace, name).await {
            Ok(m) if !m.is_empty() => {
                let sample = sample_from(&m, now_ms, mode);
                self.view.sample(&sample);
                // Post-copy and a paused guest are never aborted for lack of progress.
                if mode == Mode::PreCopy {
                    let f = &mut self.f;
                    let timeout = f
                        .state()
                        .and_then(|s| s.migration_configuration.as_ref())
                        .and_then(|c| c.progress_timeout)
                        .unwrap_or(f.progress_timeout);
                    if let Some(stall) = f.progress.observe(now_ms, sample.remaining(), timeout) {
                        self.view.event_at(now_ms, &stall.text());
                    }
                }
                // The controller's judgement, timed from the start of streaming.
                let streaming = JobSample {
                    elapsed_ms: now_ms.saturating_sub(self.f.started_ms.unwrap_or(now_ms)),
                    ..sample
                };
                self.advisor.observe(&streaming, &mut self.view);
            }
            Ok(_) => {}
            Err(MetricsUnavailable(why)) => {
                self.view.event_at(
                    now_ms,
                    &format!("no progress bars: {why}; following the phases only"),
                );
                self.degraded = Some(why);
            }
        }
    }
}

impl Observer for Following<'_> {
    async fn settle(&mut self, mirror: &Mirror) -> Result<bool> {
        let key: Key = (self.namespace.to_string(), self.vmim_name.clone());
        let vmi_key: Key = (self.namespace.to_string(), self.name.to_string());
        if let Some(m) = mirror.vmim_last(&key) {
            self.f.vmim = Some(m.clone());
        }
        self.f.vmim_deleted = mirror.vmim_gone(&key);
        self.f.vmi = mirror.vmi_last(&vmi_key).cloned();

        let now_ms = self.now_ms();
        report_changes(
            &mut self.f,
            &mut self.view,
            now_ms,
            self.target_pod.as_ref(),
            self.budget,
        );
        self.remove_policy_after_hand_off(now_ms).await;
        let f = &mut self.f;
        if f.vmim_deleted || f.phase().is_final() {
            // The VMIM's watch can report the end before the VMI's: read the VMI once more.
            if let Ok(Some(fresh)) = crate::cluster::get_as::<VirtualMachineInstance>(
                self.driver.live(),
                Kind::VirtualMachineInstance,
                Some(self.namespace),
                self.name,
            )
            .await
            {
                f.vmi = Some(fresh);
                report_changes(
                    f,
                    &mut self.view,
                    now_ms,
                    self.target_pod.as_ref(),
                    self.budget,
                );
            }
            return Ok(true);
        }
        Ok(!self.wait && handed_off(f))
    }

    async fn tick(&mut self) -> Result<()> {
        self.on_tick().await
    }
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
    let diagnosis = if observed == Outcome::Succeeded {
        None
    } else {
        diagnose(ctx, f.vmim.as_ref(), name).await
    };
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
    let message = match outcome {
        Outcome::Succeeded => format!(
            "{namespace}/{name} runs on {} now ({} → {})",
            state
                .as_ref()
                .and_then(|s| s.target_node.clone())
                .unwrap_or_else(|| "the target".into()),
            state
                .as_ref()
                .and_then(|s| s.source_node.clone())
                .unwrap_or_default(),
            state
                .as_ref()
                .and_then(|s| s.target_node.clone())
                .unwrap_or_default()
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
            "targetNode": state.as_ref().and_then(|s| s.target_node.clone()),
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
        write_stdout(&structured(ctx.output, &report)?)?;
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
/// VMI's namespace cannot be read.
pub(crate) async fn diagnose(
    ctx: &Context,
    last_seen: Option<&VirtualMachineInstanceMigration>,
    name: &str,
) -> Option<crate::triage::report::ExplainReport> {
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
    Some(crate::triage::report::build_report(
        &evidence,
        false,
        &ctx.source_description(),
        notes,
    ))
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

/// Follows the migration to its end (or the hand-off with `--no-wait`), removes the
/// temporary policy, and says how it ended: the result, or the diagnosis `explain` gives.
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
    let timeout = args.timeout;
    let post_copy_allowed = args.allow_postcopy || current.allow_post_copy;
    let is_tty = std::io::stderr().is_terminal();
    let budget = pre.budget_seconds;
    let view = if ctx.output.is_structured() {
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
    let mut following = Following {
        driver,
        namespace,
        name,
        vmim_name: vmim_name.clone(),
        f: Followed {
            vmim: Some(vmim),
            progress_timeout: current.progress_timeout,
            ..Followed::default()
        },
        view,
        metrics,
        started,
        policy_alive: policy_name.clone(),
        wait,
        budget,
        bars: is_tty && !ctx.output.is_structured(),
        advisor: Advisor::new(
            current,
            guest_memory.unwrap_or(0),
            budget,
            post_copy_allowed,
        ),
        degraded: None,
        last_heartbeat_ms: 0,
        target_pod: None,
        last_target_lookup: 0,
    };
    let ending = following.run(timeout.map(|t| started + t)).await;
    let Following {
        f: followed,
        mut view,
        mut policy_alive,
        ..
    } = following;
    let ending = match ending {
        Ok(e) => e,
        Err(e) => {
            view.close();
            if let Some(p) = &policy_alive {
                cleanup_policy(driver, p).await;
            }
            stderr_line(&text::migration_goes_on(&abort_cmd));
            return Err(e);
        }
    };
    if let Some(p) = policy_alive.take() {
        cleanup_policy(driver, &p).await;
    }
    let elapsed_ms = started.elapsed().as_millis() as u64;

    match ending {
        Ending::Stopped(Stop::Interrupted) => {
            view.close();
            after_interrupt(
                driver,
                &followed,
                namespace,
                &vmim_name,
                created_vmim,
                &abort_cmd,
            )
            .await;
            Ok(exit::INTERRUPTED)
        }
        Ending::Stopped(Stop::DeadlinePassed) => {
            view.close();
            stderr_line(&text::migrate_timed_out(
                elapsed_ms,
                followed.phase(),
                &abort_cmd,
            ));
            Ok(exit::TIMEOUT)
        }
        Ending::Done if !wait => {
            view.close();
            write_stdout(&format!(
                "{namespace}/{vmim_name}\n  handed off (policy {} applied and removed)\n  follow: vmctl status --watch -n {namespace}\n  abort:  {abort_cmd}\n",
                policy_name.as_deref().unwrap_or("-")
            ))?;
            Ok(exit::OK)
        }
        Ending::Done => {
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

/// What Ctrl-C means for `migrate` (the follower only stops following): a migration that
/// never started streaming is vmctl's to take back; one that started belongs to the cluster.
async fn after_interrupt(
    driver: &KubeVirtDriver<'_>,
    followed: &Followed,
    namespace: &str,
    vmim_name: &str,
    created_vmim: bool,
    abort_cmd: &str,
) {
    let never_started = followed.state().is_none_or(|s| s.start_timestamp.is_none())
        && !matches!(
            followed.phase(),
            MigrationPhase::PreparingTarget
                | MigrationPhase::TargetReady
                | MigrationPhase::Running
                | MigrationPhase::Succeeded
                | MigrationPhase::Failed
        );
    if never_started && created_vmim {
        let gone = driver.delete_vmim(namespace, vmim_name).await;
        stderr_line(&text::interrupted_deleted(vmim_name, gone.is_ok()));
    } else if never_started {
        // virt-api created it for the VM; deleting it is an abort like any other.
        let _ = driver.delete_vmim(namespace, vmim_name).await;
        stderr_line(&text::interrupted_cancelled(vmim_name));
    } else {
        stderr_line(&text::interrupted_detached(
            namespace,
            vmim_name,
            followed.phase(),
            abort_cmd,
        ));
    }
}

pub(crate) async fn cleanup_policy(driver: &KubeVirtDriver<'_>, name: &str) {
    match driver.delete_policy(name).await {
        Ok(_) => stderr_line(&text::policy_deleted(name)),
        Err(e) => stderr_line(&text::policy_not_deleted(name, &e.to_string())),
    }
}
