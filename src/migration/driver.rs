//! The one loop that drives a migration: sample the job, feed the controller, apply its
//! decision, draw the sample — for any [`Driver`], with one Ctrl-C and deadline policy.
//!
//! A driver is what touches the hypervisor (libvirt's `virDomain*` calls in
//! `migration/libvirt.rs`; a scripted one in the tests); [`drive`] holds every rule of the
//! loop, so they are tested in `cargo test` without a lab:
//!
//! - a decision the driver could not apply is reported to the controller
//!   ([`Controller::decision_failed`]), which then tries its next option;
//! - a decision the driver cannot take at all ([`Driver::supports`]) is shown as advice and
//!   reported to the controller the same way;
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
//! driver therefore `supports` only [`Decision::Abort`] (if at all), and the controller runs
//! over its samples to *advise* ("not converging: consider --allow-postcopy"): one judgement
//! of convergence for both drivers, acted on where the driver can act.
//! [`Config::for_kubevirt`](super::controller::Config::for_kubevirt) builds the controller
//! that KubeVirt's own monitor amounts to (the cluster's or the policy's settings).
//!
//! `Driver` is synchronous (the libvirt driver blocks on its migration thread). A follower
//! built on kube's async watcher can feed [`Controller::observe`] directly with the samples
//! it derives and show the steps as advice, without running [`drive`].

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

    /// Resumes the guest vmctl paused, if it is still paused: `Ok(false)` when there was
    /// nothing to resume.
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
    let mut mode = Mode::PreCopy;
    let mut stopped_by: Option<Stop> = None;
    let mut paused_by_us = false;
    let mut refused_noted = false;
    let mut downtime_changed = settings.downtime.changed;
    let mut last_sample: Option<JobSample> = None;
    let result = loop {
        if let Some(result) = driver.wait(settings.period) {
            break result;
        }
        let elapsed_ms = driver.elapsed_ms();

        // The operator: Ctrl-C, or the deadline.
        let interrupted = settings.interrupt.swap(false, Ordering::SeqCst);
        let timed_out = stopped_by.is_none()
            && settings
                .deadline
                .is_some_and(|t| u128::from(elapsed_ms) > t.as_millis());
        if interrupted || timed_out {
            if mode == Mode::PostCopy {
                if !refused_noted || interrupted {
                    progress.event(NOT_ABORTING_IN_POSTCOPY);
                    refused_noted = true;
                }
            } else if stopped_by.is_none() {
                let (who, what) = if interrupted {
                    (Stop::Interrupt, "Ctrl-C")
                } else {
                    (Stop::Timeout, "--timeout reached")
                };
                match driver.abort() {
                    Ok(()) => {
                        stopped_by = Some(who);
                        progress.event(&format!(
                            "{what}: aborting the migration; waiting for the guest to run on the source again"
                        ));
                    }
                    Err(e) => progress.event(&format!("{what}: abort failed: {e}")),
                }
            }
        }

        let Some(mut sample) = driver.sample(elapsed_ms) else {
            continue; // the job may just have ended: the next wait says
        };
        mode = match sample.mode {
            Mode::PostCopy => Mode::PostCopy,
            Mode::Paused if paused_by_us && mode != Mode::PostCopy => Mode::Paused,
            _ => mode,
        };
        sample.mode = mode;
        if sample.total() == 0 {
            continue; // still setting up, or already torn down: nothing to show or judge
        }
        progress.sample(&sample);
        if stopped_by.is_some() {
            last_sample = Some(sample);
            continue;
        }
        let step = controller.observe(&sample);
        last_sample = Some(sample);
        if let Some(why) = &step.why {
            progress.event(why);
        }
        if step.decision == Decision::Continue {
            continue;
        }
        if !driver.supports(&step.decision) {
            progress.event(&format!(
                "advice only: vmctl cannot {} from outside this migration",
                action(step.decision)
            ));
            controller.decision_failed(step.decision);
            continue;
        }
        let applied = match step.decision {
            Decision::Continue => Ok(()),
            Decision::Abort { cause } => driver.abort().map(|()| {
                stopped_by = Some(Stop::Controller(cause.cause_id()));
            }),
            decision => driver.apply(decision).map(|()| match decision {
                Decision::StartPostCopy => mode = Mode::PostCopy,
                Decision::RaiseMaxDowntime { .. } => downtime_changed = true,
                Decision::Pause => {
                    paused_by_us = true;
                    mode = Mode::Paused;
                    progress.set_budget(Some(controller.budget_secs()));
                }
                Decision::Continue | Decision::Abort { .. } => {}
            }),
        };
        if let Err(e) = applied {
            progress.event(&format!("could not apply the decision: {e}"));
            controller.decision_failed(step.decision);
        }
    };
    let elapsed_ms = driver.elapsed_ms();

    // The migration did not happen: put the guest back the way it was.
    let mut notes = Vec::new();
    if result.is_err() {
        if paused_by_us {
            match driver.resume() {
                Ok(true) => progress.event("resumed the guest on the source (vmctl had paused it)"),
                Ok(false) => {}
                Err(e) => notes.push(format!("could not resume the guest vmctl paused: {e}")),
            }
        }
        if downtime_changed && let Some(ms) = settings.downtime.original_ms {
            let _ = driver.set_max_downtime_ms(ms);
        }
    }
    Driven {
        result,
        mode,
        stopped_by,
        paused_by_us,
        last_sample,
        elapsed_ms,
        notes,
    }
}

/// A decision in words, for the advice the loop shows when a driver cannot take it.
fn action(decision: Decision) -> String {
    match decision {
        Decision::Continue => "continue".into(),
        Decision::RaiseMaxDowntime { ms } => format!("raise the max downtime to {ms} ms"),
        Decision::StartPostCopy => "switch to post-copy".into(),
        Decision::Pause => "pause the guest".into(),
        Decision::Abort { .. } => "abort".into(),
    }
}

#[cfg(test)]
mod tests;
