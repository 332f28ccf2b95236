//! The one loop that drives a migration: sample the job, feed the controller, apply its
//! decision, draw the sample — for any [`Driver`], with one Ctrl-C and deadline policy.
//!
//! A driver is what touches the hypervisor (libvirt's `virDomain*` calls in
//! `migration/libvirt.rs`; a scripted one in the tests); [`Pilot`] holds every rule of the
//! loop and [`drive`] runs it, so they are tested in `cargo test` without a lab:
//!
//! - a decision the driver could not apply is reported to the controller
//!   ([`Controller::decision_failed`]), which then tries its next option;
//! - a decision the driver cannot take at all ([`Driver::supports`]) is shown as advice
//!   ([`Progress::advise`]) and reported to the controller the same way; a driver that can
//!   take no decision is advised once, then judging stops;
//! - Ctrl-C or the deadline aborts the job in pre-copy; in post-copy (the point of no return:
//!   the guest runs on the destination with part of its memory on the source) it does not
//!   abort, says so, and follows the migration to its end;
//! - when the migration did not happen, a guest vmctl paused is resumed and the max downtime
//!   vmctl changed is put back.
//!
//! Time comes from the driver ([`Driver::wait`], [`Driver::elapsed_ms`]): the libvirt driver
//! waits on its migration thread; the scripted driver advances a counter, so tests run at once.
//!
//! # What KubeVirt cannot take from outside
//!
//! A KubeVirt migration is run by virt-handler's own migration monitor: it sets the max
//! downtime, switches to post-copy, pauses the guest and aborts by its own rules (the
//! cluster's or a MigrationPolicy's `allowPostCopy`, `allowAutoConverge`,
//! `allowWorkloadDisruption`, `completionTimeoutPerGiB`, `progressTimeout`, fixed before the
//! migration starts). From outside vmctl can only set that policy beforehand and abort (by
//! deleting the VirtualMachineInstanceMigration). It cannot switch a running KubeVirt
//! migration to post-copy ([`Decision::StartPostCopy`]), change its max downtime
//! ([`Decision::RaiseMaxDowntime`]) or pause its guest ([`Decision::Pause`]). A KubeVirt
//! driver ([`MonitorOwned`](super::kubevirt::MonitorOwned)) therefore `supports` nothing,
//! and the controller runs over its samples to *advise* ("not converging: consider
//! --allow-postcopy"): one judgement of convergence for both drivers, acted on where the
//! driver can act. [`Config::for_kubevirt`](super::controller::Config::for_kubevirt)
//! builds the controller that KubeVirt's own monitor amounts to (the cluster's or the
//! policy's settings).
//!
//! # One loop, two ways of waiting
//!
//! The loop's rules live in [`Pilot`]: [`Pilot::operator`] (Ctrl-C and the deadline),
//! [`Pilot::on_sample`] and [`Pilot::judge`] (the controller's step, applied or advised),
//! [`Pilot::finish`] (put the guest back). [`drive`] runs them between the blocking waits
//! of a driver (the libvirt driver waits on its migration thread). The KubeVirt follower
//! waits on async watches (`migration::follow`) and runs [`Pilot::judge`] on each sample
//! it reads from virt-handler's metrics (`follow::Advisor`). Ctrl-C there is the
//! follower's policy, not [`Pilot::operator`]'s: a KubeVirt migration that started
//! streaming belongs to the cluster, and vmctl stops following rather than aborting it
//! (`vmctl abort` does that, by deleting the VMIM).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::controller::{Controller, Decision};
use super::sample::{JobSample, Mode, TimedEvent};

/// How often drivers sample a job (KubeVirt's monitor period).
pub const SAMPLE_PERIOD: Duration = Duration::from_millis(400);

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

/// A running migration job, as the loop sees it.
pub trait Driver {
    /// Waits up to `period` for the job to end: `Some` when it has (the driver's clock moves
    /// on by the time waited).
    fn wait(&mut self, period: Duration) -> Option<JobResult>;

    /// Time since the job started, on the driver's clock.
    fn elapsed_ms(&self) -> u64;

    /// Samples the job; `None` when there is nothing to sample (no job yet, or no longer, or
    /// the statistics could not be read). `elapsed_ms` is the fallback for a sample that
    /// carries no time of its own. The sample's `mode` is what the hypervisor shows:
    /// `PostCopy` for a guest in post-copy, `Paused` for a paused guest, else `PreCopy`.
    fn sample(&mut self, elapsed_ms: u64) -> Option<JobSample>;

    /// Whether this driver can take `decision` at all (see the module documentation).
    fn supports(&self, decision: &Decision) -> bool;

    /// Applies `StartPostCopy`, `RaiseMaxDowntime` or `Pause` (never `Continue` or `Abort`).
    fn apply(&mut self, decision: Decision) -> Result<(), DriverError>;

    /// Asks the hypervisor to abort the job (the loop never does in post-copy).
    fn abort(&mut self) -> Result<(), DriverError>;

    /// Resumes the guest vmctl paused, if it is still paused: `Ok(false)` when it runs
    /// already (the hypervisor resumed it as the migration ended).
    fn resume(&mut self) -> Result<bool, DriverError>;

    /// The max downtime set now, ms, if the hypervisor says.
    fn max_downtime_ms(&mut self) -> Option<u64>;

    /// Sets the max downtime, ms.
    fn set_max_downtime_ms(&mut self, ms: u64) -> Result<(), DriverError>;
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

/// Who ended a migration early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The controller; with the cause id.
    Controller(&'static str),
    Interrupt,
    Timeout,
}

/// The max downtime before vmctl touched it, and whether vmctl changed it since.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DowntimeMemo {
    pub original_ms: Option<u64>,
    pub changed: bool,
}

/// Sets the max downtime a migration starts with (before the job starts), remembering the
/// one it replaces so that it can be put back if the migration does not happen.
pub fn set_initial_downtime<D: Driver + ?Sized, P: Progress + ?Sized>(
    driver: &mut D,
    initial_ms: u64,
    progress: &mut P,
) -> DowntimeMemo {
    let original_ms = driver.max_downtime_ms();
    match driver.set_max_downtime_ms(initial_ms) {
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
    /// Set by the Ctrl-C handler; the loop clears it when it acts on it.
    pub interrupt: &'a AtomicBool,
    /// `--timeout`: abort (in pre-copy) after this long.
    pub deadline: Option<Duration>,
    /// From [`set_initial_downtime`].
    pub downtime: DowntimeMemo,
}

/// How the loop ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Driven {
    pub result: JobResult,
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

/// Drives a started migration job to its end; see the module documentation.
pub fn drive<D: Driver + ?Sized, P: Progress + ?Sized>(
    driver: &mut D,
    controller: &mut Controller,
    progress: &mut P,
    settings: &Settings<'_>,
) -> Driven {
    let mut pilot = Pilot::new(settings.downtime);
    let result = loop {
        if let Some(result) = driver.wait(settings.period) {
            break result;
        }
        let elapsed_ms = driver.elapsed_ms();
        let interrupted = settings.interrupt.swap(false, Ordering::SeqCst);
        let timed_out = !pilot.stopped()
            && settings
                .deadline
                .is_some_and(|t| u128::from(elapsed_ms) > t.as_millis());
        pilot.operator(driver, progress, interrupted, timed_out);
        // `None`: the job may just have ended; the next wait says.
        if let Some(sample) = driver.sample(elapsed_ms) {
            pilot.on_sample(driver, controller, progress, sample);
        }
    };
    let elapsed_ms = driver.elapsed_ms();
    pilot.finish(driver, progress, result, elapsed_ms)
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

/// The loop's rules between two waits, for any driver: [`drive`] runs them for a driver it
/// can wait on (libvirt's, the scripted one); the KubeVirt follower, which waits on async
/// watches instead, runs [`Pilot::judge`] over its samples with the KubeVirt driver
/// ([`super::kubevirt::MonitorOwned`]), which takes no decision: one judgement, acted on
/// where the driver can act and advised where it cannot.
#[derive(Debug, Clone)]
pub struct Pilot {
    mode: Mode,
    stopped_by: Option<Stop>,
    paused_by_us: bool,
    refused_noted: bool,
    downtime: DowntimeMemo,
    downtime_changed: bool,
    last_sample: Option<JobSample>,
    /// A driver that can take no decision was advised: there is nothing more to say.
    done_advising: bool,
}

impl Pilot {
    pub fn new(downtime: DowntimeMemo) -> Pilot {
        Pilot {
            mode: Mode::PreCopy,
            stopped_by: None,
            paused_by_us: false,
            refused_noted: false,
            downtime,
            downtime_changed: downtime.changed,
            last_sample: None,
            done_advising: false,
        }
    }

    /// Someone (the operator, the deadline, the controller) stopped the migration.
    pub fn stopped(&self) -> bool {
        self.stopped_by.is_some()
    }

    /// The driver could take nothing, and the advice was given.
    pub fn done_advising(&self) -> bool {
        self.done_advising
    }

    /// The operator's part: Ctrl-C or the deadline aborts in pre-copy; never in post-copy.
    pub fn operator<D: Driver + ?Sized, P: Progress + ?Sized>(
        &mut self,
        driver: &mut D,
        progress: &mut P,
        interrupted: bool,
        timed_out: bool,
    ) {
        if !interrupted && !timed_out {
            return;
        }
        if self.mode == Mode::PostCopy {
            if !self.refused_noted || interrupted {
                progress.event(NOT_ABORTING_IN_POSTCOPY);
                self.refused_noted = true;
            }
        } else if self.stopped_by.is_none() {
            let (who, what) = if interrupted {
                (Stop::Interrupt, "Ctrl-C")
            } else {
                (Stop::Timeout, "--timeout reached")
            };
            match driver.abort() {
                Ok(()) => {
                    self.stopped_by = Some(who);
                    progress.event(&format!(
                        "{what}: aborting the migration; waiting for the guest to run on the source again"
                    ));
                }
                Err(e) => progress.event(&format!("{what}: abort failed: {e}")),
            }
        }
    }

    /// One sample: the mode it shows (a guest vmctl paused stays `Paused` until post-copy),
    /// drawn, then judged unless the migration is being stopped.
    pub fn on_sample<D: Driver + ?Sized, P: Progress + ?Sized>(
        &mut self,
        driver: &mut D,
        controller: &mut Controller,
        progress: &mut P,
        mut sample: JobSample,
    ) {
        self.mode = match sample.mode {
            Mode::PostCopy => Mode::PostCopy,
            Mode::Paused if self.paused_by_us && self.mode != Mode::PostCopy => Mode::Paused,
            _ => self.mode,
        };
        sample.mode = self.mode;
        if sample.total() == 0 {
            return; // still setting up, or already torn down: nothing to show or judge
        }
        progress.sample(&sample);
        if self.stopped_by.is_none() {
            self.judge(driver, controller, progress, &sample);
        }
        self.last_sample = Some(sample);
    }

    /// The controller's part: judge one sample, apply its decision, or advise it when the
    /// driver cannot take it (the controller then moves on to its next option; a driver
    /// that can take none is advised once).
    pub fn judge<D: Driver + ?Sized, P: Progress + ?Sized>(
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
            Decision::Abort { cause } => driver.abort().map(|()| {
                self.stopped_by = Some(Stop::Controller(cause.cause_id()));
            }),
            decision => driver.apply(decision).map(|()| match decision {
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

    fn advise<D: Driver + ?Sized, P: Progress + ?Sized>(
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
    pub fn finish<D: Driver + ?Sized, P: Progress + ?Sized>(
        self,
        driver: &mut D,
        progress: &mut P,
        result: JobResult,
        elapsed_ms: u64,
    ) -> Driven {
        let mut notes = Vec::new();
        if result.is_err() {
            if self.paused_by_us {
                match driver.resume() {
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
                let _ = driver.set_max_downtime_ms(ms);
            }
        }
        Driven {
            result,
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
        cause: super::controller::AbortCause::NotConverging,
    },
];

#[cfg(test)]
mod tests;
