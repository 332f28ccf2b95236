//! The one loop that drives a migration: sample the job, feed the controller, apply its
//! decision, draw the sample — for any [`Driver`], libvirt's and KubeVirt's, with one place
//! for every decision: post-copy, auto-converge, pause, a max-downtime step, a stall, an
//! abort, Ctrl-C, the deadline, and "never abort in post-copy".
//!
//! A driver is what touches the hypervisor (libvirt's `virDomain*` calls in
//! `migration/libvirt.rs`; KubeVirt's watches, metrics and VMIM in `operate/kubevirt_job.rs`;
//! a scripted one in the tests); [`Pilot`] holds every rule of the loop and [`drive`] runs
//! it, so they are tested in `cargo test` without a lab or a cluster:
//!
//! - a decision the driver could not apply is reported to the controller
//!   ([`Controller::decision_failed`]), which then tries its next option;
//! - a decision the driver cannot take at all ([`Driver::supports`]) is shown as advice
//!   ([`Progress::advise`]) and reported to the controller the same way; a driver that can
//!   take no decision is advised once, then judging stops;
//! - Ctrl-C and the deadline do what the [`Policy`] says ([`OnStop`]): abort in pre-copy
//!   (libvirt), or take the request back before the hypervisor took it on and otherwise stop
//!   following (KubeVirt); in post-copy (the point of no return: the guest runs on the
//!   destination with part of its memory on the source) nothing aborts: the loop says so and
//!   follows the migration to its end, or stops following and leaves it running;
//! - a stall against the hypervisor's own progress timeout (KubeVirt's) is said as it grows;
//! - when the migration did not happen, a guest vmctl paused is resumed and the max downtime
//!   vmctl changed is put back.
//!
//! Time comes from the driver ([`Driver::wait`], [`Driver::elapsed_ms`]): the libvirt driver
//! waits on its migration thread, the KubeVirt driver on its watches' next tick; the
//! scripted driver advances a counter, so tests run at once.
//!
//! # What KubeVirt cannot take from outside
//!
//! A KubeVirt migration is run by virt-handler's own migration monitor
//! (`migrationMonitor` in kubevirt/kubevirt `pkg/virt-launcher/virtwrap/live-migration-source.go`):
//! it sets the max downtime, switches to post-copy, pauses the guest and aborts by its own
//! rules (the cluster's or a MigrationPolicy's `allowPostCopy`, `allowAutoConverge`,
//! `allowWorkloadDisruption`, `completionTimeoutPerGiB`, `progressTimeout`, fixed before the
//! migration starts). From outside vmctl can only set that policy beforehand and abort (by
//! deleting the VirtualMachineInstanceMigration). It cannot switch a running KubeVirt
//! migration to post-copy ([`Decision::StartPostCopy`]), change its max downtime
//! ([`Decision::RaiseMaxDowntime`]) or pause its guest ([`Decision::Pause`]); and the
//! controller's own abort would second-guess the cluster's policy, which aborts by its rules.
//! The KubeVirt driver therefore `supports` no decision: the controller runs over its samples
//! (from virt-handler's metrics) to *advise* ("not converging: consider --allow-postcopy"),
//! one judgement of convergence for both drivers, acted on where the driver can act.
//! [`Driver::abort`] (deleting the VMIM) is used only by the operator's [`OnStop`] policy.
//! [`Config::for_kubevirt`](super::controller::Config::for_kubevirt) builds the controller
//! that KubeVirt's own monitor amounts to (the cluster's or the policy's settings).
//!
//! # One loop, two ways of waiting
//!
//! [`drive`] is async and the [`Driver`] trait's calls are `async fn`s, used generically (no
//! `dyn`). The libvirt driver's calls block (`virDomainMigrateToURI3` runs on its own
//! thread; the driver waits on it for up to a period): the libvirt command runs the whole
//! migration on a blocking thread (`tokio::task::spawn_blocking`) and polls the loop there
//! (`futures::executor::block_on`). The KubeVirt driver awaits its watches
//! (`migration::follow::Follower`): each [`Driver::wait`] applies the watches' changes (phase
//! lines, the temporary policy's removal) until the next one-second tick, the migration's end,
//! Ctrl-C or the deadline. What differs between the two is data, not code: [`Policy`] in
//! [`Settings`] ([`Policy::LIBVIRT`], [`Policy::kubevirt`]) and the driver's answers
//! ([`Driver::supports`], [`Driver::under_way`], [`Driver::streaming_since_ms`],
//! [`Driver::monitor_progress_timeout_secs`]); [`Pilot`] decides on them.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::controller::{AbortCause, Controller, Decision};
use super::progress_timer::ProgressTimer;
use super::sample::{JobSample, Mode, TimedEvent};

/// How often drivers sample a job (KubeVirt's monitor period).
pub const SAMPLE_PERIOD: Duration = Duration::from_millis(400);

/// The shortest wait between two samples ([`Pilot::next_wait`]).
pub const MIN_WAIT: Duration = Duration::from_millis(50);

/// How long after a pass's projected end the sample that should see the next pass is taken.
pub const PASS_END_MARGIN: Duration = Duration::from_millis(20);

/// What the loop says when it will not abort a migration in post-copy.
pub const NOT_ABORTING_IN_POSTCOPY: &str = "not aborting: in post-copy the guest runs on the destination with part of its memory still on the source; an abort would lose it. Following the migration to its end.";

/// A driver's call that did not work, in the hypervisor's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverError(pub String);

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How the migration job ended: `Err` carries the hypervisor's message.
pub type JobResult = Result<(), String>;

/// A running migration job, as the loop sees it. `P` is where the loop draws: a driver that
/// has its own lines to show while it waits (KubeVirt's phases) draws them there too.
#[allow(async_fn_in_trait)] // used generically and awaited in place, never spawned
pub trait Driver<P: Progress + ?Sized> {
    /// Waits up to `period` for the job to end (the KubeVirt driver: until its next tick):
    /// `Some` when it has (the driver's clock moves on by the time waited).
    async fn wait(&mut self, period: Duration, progress: &mut P) -> Option<JobResult>;

    /// Time since the job started, on the driver's clock.
    fn elapsed_ms(&self) -> u64;

    /// Samples the job; `None` when there is nothing to sample (no job yet, or no longer, or
    /// the statistics could not be read). `elapsed_ms` is the fallback for a sample that
    /// carries no time of its own. The sample's `mode` is what the hypervisor shows:
    /// `PostCopy` for a guest in post-copy, `Paused` for a paused guest, else `PreCopy`.
    async fn sample(&mut self, elapsed_ms: u64, progress: &mut P) -> Option<JobSample>;

    /// Whether this driver can take the controller's `decision` (see the module
    /// documentation).
    fn supports(&self, decision: &Decision) -> bool;

    /// The hypervisor has taken the job on (libvirt: from the start; KubeVirt: once the
    /// target is prepared or the copy runs): stopping it now is an abort of a migration under
    /// way, not taking a request back ([`OnStop::AbortUntilUnderWay`]).
    fn under_way(&self) -> bool {
        true
    }

    /// When the copy started streaming, on the driver's clock; the controller judges times
    /// from there (KubeVirt's completion budget counts from the start of streaming).
    fn streaming_since_ms(&self) -> Option<u64> {
        Some(0)
    }

    /// The progress timeout the hypervisor enforces itself (KubeVirt's monitor aborts after
    /// `progressTimeout` s without progress), for the loop to say a stall as it grows;
    /// `None` when the controller enforces it (libvirt).
    fn monitor_progress_timeout_secs(&self) -> Option<u64> {
        None
    }

    /// Applies `StartPostCopy`, `RaiseMaxDowntime` or `Pause` (never `Continue` or `Abort`).
    async fn apply(&mut self, decision: Decision) -> Result<(), DriverError>;

    /// Asks the hypervisor to abort the job (the loop never does in post-copy).
    async fn abort(&mut self) -> Result<(), DriverError>;

    /// Resumes the guest vmctl paused, if it is still paused: `Ok(false)` when it runs
    /// already (the hypervisor resumed it as the migration ended).
    async fn resume(&mut self) -> Result<bool, DriverError>;

    /// The max downtime set now, ms, if the hypervisor says.
    async fn max_downtime_ms(&mut self) -> Option<u64>;

    /// Sets the max downtime, ms.
    async fn set_max_downtime_ms(&mut self, ms: u64) -> Result<(), DriverError>;
}

/// Where the loop draws samples and events (`render::progress::ProgressView` on a terminal,
/// a recorder in tests). `migration/` defines it so that it does not depend on `render/`.
pub trait Progress {
    /// Draws one sample.
    fn sample(&mut self, s: &JobSample);
    /// Shows an event timed at the last sample.
    fn event(&mut self, text: &str);
    /// Shows an event timed at `at_ms` since the migration started.
    fn event_at(&mut self, at_ms: u64, text: &str);
    /// Changes the completion budget the elapsed time is measured against.
    fn set_budget(&mut self, budget_secs: Option<u64>);
    /// Shows the controller's advice on a decision the driver could not take.
    fn advise(&mut self, advice: &Advice);
    /// Every event shown so far, for the summary.
    fn events(&self) -> &[TimedEvent];
}

/// Who ended a migration early, or stopped following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The controller; with the cause id.
    Controller(&'static str),
    Interrupt,
    Timeout,
}

/// What Ctrl-C or the deadline does, by who runs the migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnStop {
    /// Abort the job in pre-copy and follow it until it ends (the guest back on the source);
    /// in post-copy say that nothing aborts and follow it to its end. libvirt's: vmctl runs
    /// the migration and must stay to steer it.
    Abort,
    /// Before the hypervisor took the job on ([`Driver::under_way`]): abort it (take the
    /// request back) and stop. After: stop following and leave it running (never an abort).
    /// KubeVirt's Ctrl-C: a migration that started belongs to the cluster; `vmctl abort`
    /// aborts it.
    AbortUntilUnderWay,
    /// Stop following and leave the job running. KubeVirt's deadline: `--timeout` ends the
    /// wait, not the migration.
    Leave,
}

/// What the controller's judgement is run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judge {
    /// Every sample (libvirt: the controller's guards run in every mode).
    Always,
    /// Pre-copy samples only (KubeVirt: advice on convergence; a guest the monitor paused or
    /// switched is the monitor's business).
    PreCopy,
    /// No sample (KubeVirt with post-copy allowed: its monitor switches by itself, there is
    /// nothing to advise).
    Never,
}

/// The loop's rules that differ between hypervisors, as data; [`Pilot`] decides on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub on_interrupt: OnStop,
    pub on_deadline: OnStop,
    pub judge: Judge,
    /// A `Paused` sample is the hypervisor's own decision (KubeVirt's monitor pauses the
    /// guest to finish the copy: `migrationState.mode: Paused`) and is drawn as such; else
    /// only a pause vmctl made counts (libvirt shows the guest paused around its own
    /// switchover).
    pub hypervisor_pauses: bool,
}

impl Policy {
    /// vmctl runs the migration: it aborts on Ctrl-C and the deadline (in pre-copy) and acts
    /// on every sample.
    pub const LIBVIRT: Policy = Policy {
        on_interrupt: OnStop::Abort,
        on_deadline: OnStop::Abort,
        judge: Judge::Always,
        hypervisor_pauses: false,
    };

    /// KubeVirt's monitor runs the migration: Ctrl-C takes back a migration that is not under
    /// way yet and otherwise stops following; the deadline stops following; the controller
    /// advises on pre-copy, unless post-copy is allowed already.
    pub fn kubevirt(post_copy_allowed: bool) -> Policy {
        Policy {
            on_interrupt: OnStop::AbortUntilUnderWay,
            on_deadline: OnStop::Leave,
            judge: if post_copy_allowed {
                Judge::Never
            } else {
                Judge::PreCopy
            },
            hypervisor_pauses: true,
        }
    }
}

/// The max downtime before vmctl touched it, and whether vmctl changed it since.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DowntimeMemo {
    pub original_ms: Option<u64>,
    pub changed: bool,
}

/// Sets the max downtime a migration starts with (before the job starts), remembering the
/// one it replaces so that it can be put back if the migration does not happen.
pub async fn set_initial_downtime<P: Progress + ?Sized, D: Driver<P> + ?Sized>(
    driver: &mut D,
    initial_ms: u64,
    progress: &mut P,
) -> DowntimeMemo {
    let original_ms = driver.max_downtime_ms().await;
    match driver.set_max_downtime_ms(initial_ms).await {
        Ok(()) => DowntimeMemo {
            original_ms,
            changed: original_ms != Some(initial_ms),
        },
        Err(e) => {
            progress.event_at(
                0,
                &format!("could not set the max downtime to {initial_ms} ms: {e}"),
            );
            DowntimeMemo {
                original_ms,
                changed: false,
            }
        }
    }
}

/// What the loop needs besides the driver, the controller and the progress sink.
#[derive(Debug, Clone, Copy)]
pub struct Settings<'a> {
    /// How long to wait between samples.
    pub period: Duration,
    /// Set by the Ctrl-C handler (or the driver that hears Ctrl-C itself); the loop clears
    /// it when it acts on it.
    pub interrupt: &'a AtomicBool,
    /// `--timeout`: the [`Policy`]'s `on_deadline` after this long.
    pub deadline: Option<Duration>,
    /// From [`set_initial_downtime`].
    pub downtime: DowntimeMemo,
    pub policy: Policy,
}

/// How the loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// The job ended: `Err` carries the hypervisor's message.
    Job(JobResult),
    /// vmctl stopped following ([`OnStop::Leave`], or [`OnStop::AbortUntilUnderWay`] once
    /// under way); the job goes on.
    Left,
    /// [`OnStop::AbortUntilUnderWay`] before the job was under way: the abort's result.
    TakenBack(Result<(), DriverError>),
}

impl End {
    /// The job's result; a job vmctl left or took back has none of its own.
    pub fn result(&self) -> JobResult {
        match self {
            End::Job(r) => r.clone(),
            End::Left => Err("vmctl stopped following the migration".into()),
            End::TakenBack(_) => Err("vmctl took the migration back before it started".into()),
        }
    }
}

/// How the loop ended, and what it saw.
#[derive(Debug, Clone, PartialEq)]
pub struct Driven {
    pub end: End,
    /// The mode the migration ended in.
    pub mode: Mode,
    pub stopped_by: Option<Stop>,
    /// vmctl paused the guest during the migration.
    pub paused_by_us: bool,
    pub last_sample: Option<JobSample>,
    /// On the driver's clock, when the job ended.
    pub elapsed_ms: u64,
    /// What putting things back could not do, for the summary's message.
    pub notes: Vec<String>,
}

/// Drives a started migration job to its end (or until the policy leaves it); see the
/// module documentation.
pub async fn drive<P: Progress + ?Sized, D: Driver<P> + ?Sized>(
    driver: &mut D,
    controller: &mut Controller,
    progress: &mut P,
    settings: &Settings<'_>,
) -> Driven {
    let mut pilot = Pilot::new(settings.downtime, settings.policy);
    let end = loop {
        if let Some(result) = driver
            .wait(pilot.next_wait(settings.period), progress)
            .await
        {
            break End::Job(result);
        }
        let elapsed_ms = driver.elapsed_ms();
        let interrupted = settings.interrupt.swap(false, Ordering::SeqCst);
        let timed_out = !pilot.stopped()
            && settings
                .deadline
                .is_some_and(|t| u128::from(elapsed_ms) >= t.as_millis());
        if let Some(end) = pilot
            .operator(driver, progress, interrupted, timed_out)
            .await
        {
            break end;
        }
        // `None`: the job may just have ended; the next wait says.
        if let Some(sample) = driver.sample(elapsed_ms, progress).await {
            pilot.on_sample(driver, controller, progress, sample).await;
        }
    };
    let elapsed_ms = driver.elapsed_ms();
    pilot.finish(driver, progress, end, elapsed_ms).await
}

/// The controller's advice on a decision the driver cannot take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advice {
    /// What the controller would do.
    pub decision: Decision,
    /// The controller's reason, e.g. "pass 3 starts with 900 MiB, 100% of pass 2's …"
    /// (without "not converging: " and without the action).
    pub why: String,
}

/// The loop's rules between two waits, for any driver, under the [`Policy`]: what Ctrl-C
/// and the deadline do, what each sample shows, when the controller judges, what it acts on
/// and what it advises, and what is put back at the end.
#[derive(Debug, Clone)]
pub struct Pilot {
    policy: Policy,
    mode: Mode,
    stopped_by: Option<Stop>,
    paused_by_us: bool,
    refused_noted: bool,
    downtime: DowntimeMemo,
    downtime_changed: bool,
    last_sample: Option<JobSample>,
    /// A driver that can take no decision was advised: there is nothing more to say.
    done_advising: bool,
    /// The hypervisor's own progress check, replayed on the samples.
    progress_timer: ProgressTimer,
}

impl Pilot {
    pub fn new(downtime: DowntimeMemo, policy: Policy) -> Pilot {
        Pilot {
            policy,
            mode: Mode::PreCopy,
            stopped_by: None,
            paused_by_us: false,
            refused_noted: false,
            downtime,
            downtime_changed: downtime.changed,
            last_sample: None,
            done_advising: false,
            progress_timer: ProgressTimer::default(),
        }
    }

    /// How long to wait for the next sample: the period, or less when the last pre-copy
    /// sample says its pass ends sooner (what remains of the pass at the rate it is sent,
    /// plus a tenth and [`PASS_END_MARGIN`], at least [`MIN_WAIT`]). The controller judges at
    /// pass starts: with post-copy allowed, a guest that does not converge is switched at
    /// pass 2's first sample, and a sample a period late is that much more of pass 2 copied
    /// for nothing (`virsh migrate --postcopy-after-precopy` switches on libvirt's
    /// migration-iteration event, at once). The KubeVirt driver waits for its own tick.
    pub fn next_wait(&self, period: Duration) -> Duration {
        let Some(s) = self.last_sample.as_ref() else {
            return period;
        };
        if self.mode != Mode::PreCopy || self.stopped() || s.memory_bps == 0 {
            return period;
        }
        let ends_in = Duration::from_secs_f64(s.remaining() as f64 / s.memory_bps as f64);
        let wait = ends_in.mul_f64(1.1) + PASS_END_MARGIN;
        wait.clamp(MIN_WAIT.min(period), period)
    }

    /// Someone (the operator, the deadline, the controller) stopped the migration.
    pub fn stopped(&self) -> bool {
        self.stopped_by.is_some()
    }

    /// The operator's part: what Ctrl-C or the deadline does ([`OnStop`]); never an abort in
    /// post-copy. `Some` when the loop ends here.
    pub async fn operator<P: Progress + ?Sized, D: Driver<P> + ?Sized>(
        &mut self,
        driver: &mut D,
        progress: &mut P,
        interrupted: bool,
        timed_out: bool,
    ) -> Option<End> {
        let (who, what, on) = match (interrupted, timed_out) {
            (true, _) => (Stop::Interrupt, "Ctrl-C", self.policy.on_interrupt),
            (false, true) => (Stop::Timeout, "--timeout reached", self.policy.on_deadline),
            (false, false) => return None,
        };
        match on {
            OnStop::Leave => {
                self.stopped_by = Some(who);
                Some(End::Left)
            }
            OnStop::AbortUntilUnderWay => {
                self.stopped_by = Some(who);
                if driver.under_way() || self.mode == Mode::PostCopy {
                    Some(End::Left)
                } else {
                    Some(End::TakenBack(driver.abort().await))
                }
            }
            OnStop::Abort if self.mode == Mode::PostCopy => {
                if !self.refused_noted || interrupted {
                    progress.event(NOT_ABORTING_IN_POSTCOPY);
                    self.refused_noted = true;
                }
                None
            }
            OnStop::Abort => {
                if self.stopped_by.is_none() {
                    match driver.abort().await {
                        Ok(()) => {
                            self.stopped_by = Some(who);
                            progress.event(&format!(
                                "{what}: aborting the migration; waiting for the guest to run on the source again"
                            ));
                        }
                        Err(e) => progress.event(&format!("{what}: abort failed: {e}")),
                    }
                }
                None
            }
        }
    }

    /// One sample: the mode it shows (a guest vmctl paused stays `Paused` until post-copy;
    /// post-copy stays post-copy), drawn, checked against the hypervisor's own progress
    /// timeout, then judged unless the migration is being stopped.
    pub async fn on_sample<P: Progress + ?Sized, D: Driver<P> + ?Sized>(
        &mut self,
        driver: &mut D,
        controller: &mut Controller,
        progress: &mut P,
        mut sample: JobSample,
    ) {
        self.mode = match sample.mode {
            _ if self.mode == Mode::PostCopy => Mode::PostCopy,
            Mode::PostCopy => Mode::PostCopy,
            seen if self.policy.hypervisor_pauses => seen,
            Mode::Paused if self.paused_by_us => Mode::Paused,
            _ => self.mode,
        };
        sample.mode = self.mode;
        if sample.total() == 0 {
            return; // still setting up, or already torn down: nothing to show or judge
        }
        progress.sample(&sample);
        // Post-copy and a paused guest are never aborted for lack of progress.
        if self.mode == Mode::PreCopy
            && let Some(timeout) = driver.monitor_progress_timeout_secs()
            && let Some(stall) =
                self.progress_timer
                    .observe(sample.elapsed_ms, sample.remaining(), timeout)
        {
            progress.event_at(sample.elapsed_ms, &stall.text());
        }
        let judged = match self.policy.judge {
            Judge::Always => true,
            Judge::PreCopy => self.mode == Mode::PreCopy,
            Judge::Never => false,
        };
        if judged && self.stopped_by.is_none() {
            // Timed from the start of streaming, as the hypervisor's budget counts.
            let since = driver.streaming_since_ms().unwrap_or(sample.elapsed_ms);
            let streaming = JobSample {
                elapsed_ms: sample.elapsed_ms.saturating_sub(since),
                ..sample.clone()
            };
            self.judge(driver, controller, progress, &streaming).await;
        }
        self.last_sample = Some(sample);
    }

    /// The controller's part: judge one sample, apply its decision, or advise it when the
    /// driver cannot take it (the controller then moves on to its next option; a driver
    /// that can take none is advised once).
    pub async fn judge<P: Progress + ?Sized, D: Driver<P> + ?Sized>(
        &mut self,
        driver: &mut D,
        controller: &mut Controller,
        progress: &mut P,
        sample: &JobSample,
    ) {
        if self.done_advising {
            return;
        }
        let step = controller.observe(sample);
        // The in-flight prediction (from pass 1), said whatever the decision.
        if let Some(note) = &step.note {
            progress.event(note);
        }
        let decision = step.decision;
        if decision != Decision::Continue && !driver.supports(&decision) {
            self.advise(driver, controller, progress, decision, step.why.as_deref());
            return;
        }
        if let Some(why) = &step.why {
            progress.event(why);
        }
        let applied = match decision {
            Decision::Continue => return,
            Decision::Abort { cause } => driver.abort().await.map(|()| {
                self.stopped_by = Some(Stop::Controller(cause.cause_id()));
            }),
            decision => driver.apply(decision).await.map(|()| match decision {
                Decision::StartPostCopy => self.mode = Mode::PostCopy,
                Decision::RaiseMaxDowntime { .. } => self.downtime_changed = true,
                Decision::Pause => {
                    self.paused_by_us = true;
                    self.mode = Mode::Paused;
                    progress.set_budget(Some(controller.budget_secs()));
                }
                Decision::Continue | Decision::Abort { .. } => {}
            }),
        };
        if let Err(e) = applied {
            progress.event(&format!("could not apply the decision: {e}"));
            controller.decision_failed(decision);
        }
    }

    fn advise<P: Progress + ?Sized, D: Driver<P> + ?Sized>(
        &mut self,
        driver: &D,
        controller: &mut Controller,
        progress: &mut P,
        decision: Decision,
        why: Option<&str>,
    ) {
        let why = why.unwrap_or_default();
        controller.decision_failed(decision);
        // Post-copy would only be sooner: pre-copy converges, nothing to advise.
        if decision == Decision::StartPostCopy && why.starts_with("post-copy sooner") {
            return;
        }
        let why = why.strip_prefix("not converging: ").unwrap_or(why);
        let why = why.split(" -> ").next().unwrap_or(why).to_string();
        progress.advise(&Advice { decision, why });
        self.done_advising = !ACTIONS.iter().any(|d| driver.supports(d));
    }

    /// The end: when the migration did not happen, put the guest back the way it was.
    pub async fn finish<P: Progress + ?Sized, D: Driver<P> + ?Sized>(
        self,
        driver: &mut D,
        progress: &mut P,
        end: End,
        elapsed_ms: u64,
    ) -> Driven {
        let mut notes = Vec::new();
        if matches!(end, End::Job(Err(_))) {
            if self.paused_by_us {
                match driver.resume().await {
                    Ok(true) => {
                        progress.event("resumed the guest on the source (vmctl had paused it)")
                    }
                    Ok(false) => progress.event(
                        "the hypervisor resumed the guest on the source (vmctl had paused it)",
                    ),
                    Err(e) => notes.push(format!("could not resume the guest vmctl paused: {e}")),
                }
            }
            if self.downtime_changed
                && let Some(ms) = self.downtime.original_ms
            {
                let _ = driver.set_max_downtime_ms(ms).await;
            }
        }
        Driven {
            end,
            mode: self.mode,
            stopped_by: self.stopped_by,
            paused_by_us: self.paused_by_us,
            last_sample: self.last_sample,
            elapsed_ms,
            notes,
        }
    }
}

/// Every kind of decision the controller acts with, for "can this driver take any?".
const ACTIONS: [Decision; 4] = [
    Decision::StartPostCopy,
    Decision::RaiseMaxDowntime { ms: 0 },
    Decision::Pause,
    Decision::Abort {
        cause: AbortCause::NotConverging,
    },
];

#[cfg(test)]
mod tests;
