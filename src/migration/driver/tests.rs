//! The loop's rules, over a scripted driver: every test asserts the exact calls the loop
//! made on the driver.

use std::collections::VecDeque;

use super::*;
use crate::migration::controller::tests::{NOT_CONVERGING, Row, SAW_TOOTH_CONVERGING, cfg, sample};
use crate::migration::controller::{AbortCause, Config};

const PERIOD: Duration = Duration::from_millis(400);

/// What the loop asked the driver to do.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Call {
    SetMaxDowntime(u64),
    Apply(Decision),
    Abort,
    Resume,
}

/// One wait of the loop, as the script plays it.
#[derive(Debug, Clone)]
enum Beat {
    /// The job runs; the next sample is this (its `elapsed_ms` sets the driver's clock).
    Sample(JobSample),
    /// The job runs, but there are no statistics to read.
    Nothing,
    /// The operator presses Ctrl-C during the wait; then the sample.
    CtrlC(JobSample),
    /// The job ends.
    End(JobResult),
}

/// Plays a script of samples, records every call, fails the calls it is told to fail.
struct ScriptedDriver<'a> {
    script: VecDeque<Beat>,
    next: Option<JobSample>,
    clock_ms: u64,
    interrupt: &'a AtomicBool,
    calls: Vec<Call>,
    failing: Vec<Call>,
    /// `None`: every decision; else only these.
    supported: Option<Vec<Decision>>,
    downtime_ms: u64,
    paused: bool,
}

impl<'a> ScriptedDriver<'a> {
    fn new(interrupt: &'a AtomicBool, script: impl IntoIterator<Item = Beat>) -> Self {
        ScriptedDriver {
            script: script.into_iter().collect(),
            next: None,
            clock_ms: 0,
            interrupt,
            calls: Vec::new(),
            failing: Vec::new(),
            supported: None,
            downtime_ms: 300,
            paused: false,
        }
    }

    fn failing(mut self, calls: &[Call]) -> Self {
        self.failing = calls.to_vec();
        self
    }

    fn call(&mut self, call: Call) -> Result<(), DriverError> {
        let fails = self.failing.contains(&call);
        self.calls.push(call);
        if fails {
            Err(DriverError("refused by the script".into()))
        } else {
            Ok(())
        }
    }
}

impl Driver for ScriptedDriver<'_> {
    fn wait(&mut self, period: Duration) -> Option<JobResult> {
        let beat = self
            .script
            .pop_front()
            .unwrap_or(Beat::End(Err("the script ran out".into())));
        self.next = None;
        let (s, ctrl_c) = match beat {
            Beat::Sample(s) => (s, false),
            Beat::CtrlC(s) => (s, true),
            Beat::Nothing => {
                self.clock_ms += period.as_millis() as u64;
                return None;
            }
            Beat::End(result) => {
                self.clock_ms += period.as_millis() as u64;
                return Some(result);
            }
        };
        if ctrl_c {
            self.interrupt.store(true, Ordering::SeqCst);
        }
        self.clock_ms = if s.elapsed_ms > 0 {
            s.elapsed_ms
        } else {
            self.clock_ms + period.as_millis() as u64
        };
        self.next = Some(s);
        None
    }

    fn elapsed_ms(&self) -> u64 {
        self.clock_ms
    }

    fn sample(&mut self, elapsed_ms: u64) -> Option<JobSample> {
        let mut s = self.next.take()?;
        if s.elapsed_ms == 0 {
            s.elapsed_ms = elapsed_ms;
        }
        Some(s)
    }

    fn supports(&self, decision: &Decision) -> bool {
        self.supported
            .as_ref()
            .is_none_or(|only| only.contains(decision))
    }

    fn apply(&mut self, decision: Decision) -> Result<(), DriverError> {
        self.call(Call::Apply(decision))?;
        match decision {
            Decision::Pause => self.paused = true,
            Decision::RaiseMaxDowntime { ms } => self.downtime_ms = ms,
            _ => {}
        }
        Ok(())
    }

    fn abort(&mut self) -> Result<(), DriverError> {
        self.call(Call::Abort)
    }

    fn resume(&mut self) -> Result<bool, DriverError> {
        if !self.paused {
            return Ok(false);
        }
        self.call(Call::Resume)?;
        self.paused = false;
        Ok(true)
    }

    fn max_downtime_ms(&mut self) -> Option<u64> {
        Some(self.downtime_ms)
    }

    fn set_max_downtime_ms(&mut self, ms: u64) -> Result<(), DriverError> {
        self.call(Call::SetMaxDowntime(ms))?;
        self.downtime_ms = ms;
        Ok(())
    }
}

/// Records what the loop draws.
#[derive(Default)]
struct Recorder {
    samples: Vec<JobSample>,
    events: Vec<TimedEvent>,
    budgets: Vec<Option<u64>>,
}

impl Progress for Recorder {
    fn sample(&mut self, s: &JobSample) {
        self.samples.push(s.clone());
    }

    fn event(&mut self, text: &str) {
        let at_ms = self.samples.last().map_or(0, |s| s.elapsed_ms);
        self.event_at(at_ms, text);
    }

    fn event_at(&mut self, at_ms: u64, text: &str) {
        self.events.push(TimedEvent {
            at_ms,
            text: text.to_string(),
        });
    }

    fn set_budget(&mut self, budget_secs: Option<u64>) {
        self.budgets.push(budget_secs);
    }

    fn events(&self) -> &[TimedEvent] {
        &self.events
    }
}

impl Recorder {
    fn texts(&self) -> Vec<&str> {
        self.events.iter().map(|e| e.text.as_str()).collect()
    }

    fn has(&self, text: &str) -> bool {
        self.events.iter().any(|e| e.text.contains(text))
    }
}

fn samples(rows: &[Row]) -> Vec<Beat> {
    rows.iter().map(|r| Beat::Sample(sample(*r))).collect()
}

fn then_end(mut beats: Vec<Beat>, result: JobResult) -> Vec<Beat> {
    beats.push(Beat::End(result));
    beats
}

/// Makes beat `i` a Ctrl-C.
fn ctrl_c_at(mut beats: Vec<Beat>, i: usize) -> Vec<Beat> {
    if let Beat::Sample(s) = beats[i].clone() {
        beats[i] = Beat::CtrlC(s);
    }
    beats
}

fn settings(interrupt: &AtomicBool) -> Settings<'_> {
    Settings {
        period: PERIOD,
        interrupt,
        deadline: None,
        downtime: DowntimeMemo::default(),
    }
}

fn run(
    driver: &mut ScriptedDriver<'_>,
    config: Config,
    settings: &Settings<'_>,
) -> (Driven, Recorder) {
    let mut controller = Controller::new(config);
    let mut progress = Recorder::default();
    let driven = drive(driver, &mut controller, &mut progress, settings);
    (driven, progress)
}

const ABORTED: &str = "operation aborted: migration out job: canceled by client";

#[test]
fn converging_pre_copy_completes_untouched() {
    let interrupt = AtomicBool::new(false);
    let script = then_end(samples(SAW_TOOTH_CONVERGING), Ok(()));
    let mut driver = ScriptedDriver::new(&interrupt, script);
    let mut progress = Recorder::default();
    let downtime = set_initial_downtime(&mut driver, 30, &mut progress);
    assert_eq!(
        downtime,
        DowntimeMemo {
            original_ms: Some(300),
            changed: true
        }
    );
    let settings = Settings {
        downtime,
        ..settings(&interrupt)
    };
    let (driven, progress) = run(&mut driver, cfg(), &settings);

    assert_eq!(driver.calls, [Call::SetMaxDowntime(30)]);
    assert_eq!(driven.result, Ok(()));
    assert_eq!(driven.stopped_by, None);
    assert_eq!(driven.mode, Mode::PreCopy);
    assert!(!driven.paused_by_us);
    assert!(driven.notes.is_empty());
    assert_eq!(progress.samples.len(), SAW_TOOTH_CONVERGING.len());
    assert!(progress.events.is_empty(), "{:?}", progress.texts());
    assert_eq!(driven.last_sample.map(|s| s.elapsed_ms), Some(17_800));
    // The clock is the driver's: the end came one period after the last sample.
    assert_eq!(driven.elapsed_ms, 18_200);
}

#[test]
fn the_initial_downtime_that_cannot_be_set_is_said_and_not_restored() {
    let interrupt = AtomicBool::new(false);
    let mut driver = ScriptedDriver::new(&interrupt, [Beat::End(Err("failed".into()))])
        .failing(&[Call::SetMaxDowntime(30)]);
    let mut progress = Recorder::default();
    let downtime = set_initial_downtime(&mut driver, 30, &mut progress);
    assert_eq!(
        progress.texts(),
        ["could not set the max downtime to 30 ms: refused by the script"]
    );
    let settings = Settings {
        downtime,
        ..settings(&interrupt)
    };
    let (driven, _) = run(&mut driver, cfg(), &settings);
    assert_eq!(driven.result, Err("failed".into()));
    // Only the attempt: nothing was changed, so nothing is put back.
    assert_eq!(driver.calls, [Call::SetMaxDowntime(30)]);
}

#[test]
fn samples_with_nothing_to_copy_are_neither_drawn_nor_judged() {
    let interrupt = AtomicBool::new(false);
    let script = [
        Beat::Nothing,
        Beat::Sample(JobSample::default()),
        Beat::Sample(sample((0.8, 256, 1, 16, 0))),
        Beat::End(Ok(())),
    ];
    let mut driver = ScriptedDriver::new(&interrupt, script);
    let (driven, progress) = run(&mut driver, cfg(), &settings(&interrupt));
    assert_eq!(progress.samples.len(), 1);
    assert_eq!(progress.samples[0].elapsed_ms, 800);
    assert_eq!(driven.result, Ok(()));
    assert!(driver.calls.is_empty());
}

#[test]
fn not_converging_the_controllers_decisions_are_applied_in_order() {
    // Raise the max downtime (within reach of the ceiling), then, when that did not help,
    // pause: the controller's order, applied as it decides.
    let interrupt = AtomicBool::new(false);
    let config = Config {
        initial_downtime_ms: 300,
        max_downtime_ms: 4000,
        allow_pause: true,
        ..cfg()
    };
    let script = then_end(samples(NOT_CONVERGING), Ok(()));
    let mut driver = ScriptedDriver::new(&interrupt, script);
    let (driven, progress) = run(&mut driver, config, &settings(&interrupt));

    assert_eq!(
        driver.calls,
        [
            Call::Apply(Decision::RaiseMaxDowntime { ms: 4000 }),
            Call::Apply(Decision::Pause),
        ]
    );
    assert_eq!(driven.result, Ok(()));
    assert!(driven.paused_by_us);
    assert_eq!(driven.mode, Mode::Paused);
    // The pause doubled the budget: the view measures against the new one.
    assert_eq!(progress.budgets, [Some(300)]);
    // Every sample after the pause is drawn as paused, although the hypervisor's sample
    // does not say so.
    let after_pause: Vec<Mode> = progress
        .samples
        .iter()
        .filter(|s| s.elapsed_ms > 17_600)
        .map(|s| s.mode)
        .collect();
    assert_eq!(after_pause, [Mode::Paused, Mode::Paused, Mode::Paused]);
    let texts = progress.texts();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(
        texts[0].contains("raise max downtime to 4000 ms"),
        "{texts:?}"
    );
    assert!(texts[1].contains("pause the guest"), "{texts:?}");
    // Succeeded: nothing is put back on a source that no longer runs the guest.
}

#[test]
fn not_converging_with_post_copy_allowed_switches_to_post_copy() {
    let interrupt = AtomicBool::new(false);
    let config = Config {
        allow_postcopy: true,
        ..cfg()
    };
    let script = then_end(samples(NOT_CONVERGING), Ok(()));
    let mut driver = ScriptedDriver::new(&interrupt, script);
    let (driven, progress) = run(&mut driver, config, &settings(&interrupt));
    assert_eq!(driver.calls, [Call::Apply(Decision::StartPostCopy)]);
    assert_eq!(driven.mode, Mode::PostCopy);
    let modes: Vec<Mode> = progress.samples.iter().map(|s| s.mode).collect();
    // Pass 2 starts at the fifth sample: from the next one on, post-copy.
    assert_eq!(modes[..5], [Mode::PreCopy; 5]);
    assert!(modes[5..].iter().all(|m| *m == Mode::PostCopy), "{modes:?}");
}

#[test]
fn a_decision_that_fails_is_reported_and_the_loop_goes_on() {
    // Post-copy refused by the hypervisor: the controller takes its next option (pause),
    // and the failed migration then resumes the guest vmctl paused.
    let interrupt = AtomicBool::new(false);
    let config = Config {
        allow_postcopy: true,
        allow_pause: true,
        ..cfg()
    };
    let script = then_end(samples(NOT_CONVERGING), Err("migration failed".into()));
    let mut driver =
        ScriptedDriver::new(&interrupt, script).failing(&[Call::Apply(Decision::StartPostCopy)]);
    let (driven, progress) = run(&mut driver, config, &settings(&interrupt));

    assert_eq!(
        driver.calls,
        [
            Call::Apply(Decision::StartPostCopy),
            Call::Apply(Decision::Pause),
            Call::Resume,
        ]
    );
    assert_eq!(driven.result, Err("migration failed".into()));
    assert!(progress.has("could not apply the decision: refused by the script"));
    assert_eq!(
        progress.texts().last().copied(),
        Some("resumed the guest on the source (vmctl had paused it)")
    );
    // Post-copy never happened.
    assert!(progress.samples.iter().all(|s| s.mode != Mode::PostCopy));
    assert!(driven.notes.is_empty());
}

#[test]
fn a_failed_controller_abort_is_tried_again_at_the_next_judgement() {
    let interrupt = AtomicBool::new(false);
    let mut driver = ScriptedDriver::new(&interrupt, then_end(samples(NOT_CONVERGING), Ok(())))
        .failing(&[Call::Abort]);
    let (driven, progress) = run(&mut driver, cfg(), &settings(&interrupt));
    // Pass 3 proves it (12.8 s): abort refused; pass 4 and 5 prove it again.
    assert_eq!(driver.calls, [Call::Abort, Call::Abort, Call::Abort]);
    assert_eq!(driven.stopped_by, None);
    assert_eq!(
        progress
            .texts()
            .iter()
            .filter(|t| t.starts_with("could not apply the decision"))
            .count(),
        3
    );
}

#[test]
fn the_controllers_abort_stops_judging() {
    let interrupt = AtomicBool::new(false);
    let script = then_end(samples(NOT_CONVERGING), Err(ABORTED.into()));
    let mut driver = ScriptedDriver::new(&interrupt, script);
    let (driven, progress) = run(&mut driver, cfg(), &settings(&interrupt));
    assert_eq!(driver.calls, [Call::Abort]);
    assert_eq!(driven.stopped_by, Some(Stop::Controller("not-converging")));
    // Still drawn after the abort, until the job ends.
    assert_eq!(progress.samples.len(), NOT_CONVERGING.len());
    assert_eq!(
        AbortCause::NotConverging.cause_id(),
        "not-converging",
        "the cause id the report carries"
    );
}

#[test]
fn the_max_downtime_vmctl_changed_is_restored_when_the_migration_does_not_happen() {
    let interrupt = AtomicBool::new(false);
    let config = Config {
        initial_downtime_ms: 300,
        max_downtime_ms: 4000,
        allow_pause: true,
        ..cfg()
    };
    let script = then_end(samples(NOT_CONVERGING), Err("migration failed".into()));
    let mut driver = ScriptedDriver::new(&interrupt, script);
    driver.downtime_ms = 500;
    let mut progress = Recorder::default();
    let downtime = set_initial_downtime(&mut driver, 300, &mut progress);
    let settings = Settings {
        downtime,
        ..settings(&interrupt)
    };
    let (driven, _) = run(&mut driver, config, &settings);
    assert_eq!(
        driver.calls,
        [
            Call::SetMaxDowntime(300),
            Call::Apply(Decision::RaiseMaxDowntime { ms: 4000 }),
            Call::Apply(Decision::Pause),
            Call::Resume,
            Call::SetMaxDowntime(500),
        ]
    );
    assert_eq!(driver.downtime_ms, 500);
    assert!(driven.result.is_err());
}

#[test]
fn a_raise_alone_is_restored_too_and_a_success_restores_nothing() {
    let config = Config {
        initial_downtime_ms: 300,
        max_downtime_ms: 5000,
        ..cfg()
    };
    // Raised at 12.8 s, the migration then fails: the original (300, as set) comes back.
    let interrupt = AtomicBool::new(false);
    let script = then_end(samples(&NOT_CONVERGING[..11]), Err("failed".into()));
    let mut driver = ScriptedDriver::new(&interrupt, script);
    let mut progress = Recorder::default();
    let downtime = set_initial_downtime(&mut driver, 300, &mut progress);
    assert!(!downtime.changed);
    let first = Settings {
        downtime,
        ..settings(&interrupt)
    };
    run(&mut driver, config.clone(), &first);
    assert_eq!(
        driver.calls,
        [
            Call::SetMaxDowntime(300),
            Call::Apply(Decision::RaiseMaxDowntime { ms: 5000 }),
            Call::SetMaxDowntime(300),
        ]
    );

    let script = then_end(samples(&NOT_CONVERGING[..11]), Ok(()));
    let mut driver = ScriptedDriver::new(&interrupt, script);
    let downtime = set_initial_downtime(&mut driver, 300, &mut progress);
    let settings = Settings {
        downtime,
        ..settings(&interrupt)
    };
    run(&mut driver, config, &settings);
    assert_eq!(
        driver.calls,
        [
            Call::SetMaxDowntime(300),
            Call::Apply(Decision::RaiseMaxDowntime { ms: 5000 }),
        ]
    );
}

#[test]
fn a_guest_vmctl_paused_is_resumed_when_the_migration_is_aborted() {
    // Paused by the controller at 12.8 s, then Ctrl-C at 17.2 s.
    let interrupt = AtomicBool::new(false);
    let config = Config {
        allow_pause: true,
        ..cfg()
    };
    let script = then_end(ctrl_c_at(samples(NOT_CONVERGING), 9), Err(ABORTED.into()));
    let mut driver = ScriptedDriver::new(&interrupt, script);
    let (driven, progress) = run(&mut driver, config, &settings(&interrupt));
    assert_eq!(
        driver.calls,
        [Call::Apply(Decision::Pause), Call::Abort, Call::Resume]
    );
    assert_eq!(driven.stopped_by, Some(Stop::Interrupt));
    assert!(!driver.paused);
    assert!(progress.has("resumed the guest on the source (vmctl had paused it)"));
}

#[test]
fn a_resume_that_fails_is_a_note_for_the_summary() {
    let interrupt = AtomicBool::new(false);
    let config = Config {
        allow_pause: true,
        ..cfg()
    };
    let script = then_end(samples(NOT_CONVERGING), Err("failed".into()));
    let mut driver = ScriptedDriver::new(&interrupt, script).failing(&[Call::Resume]);
    let (driven, progress) = run(&mut driver, config, &settings(&interrupt));
    assert_eq!(driver.calls, [Call::Apply(Decision::Pause), Call::Resume]);
    assert_eq!(
        driven.notes,
        ["could not resume the guest vmctl paused: refused by the script"]
    );
    assert!(!progress.has("resumed the guest"));
}

#[test]
fn a_guest_that_is_no_longer_paused_is_not_resumed() {
    // The driver says there is nothing to resume (someone resumed it): no call, no event.
    let interrupt = AtomicBool::new(false);
    let config = Config {
        allow_pause: true,
        ..cfg()
    };
    let script = then_end(samples(NOT_CONVERGING), Err("failed".into()));
    let mut driver = ScriptedDriver::new(&interrupt, script);
    let mut controller = Controller::new(config);
    let mut progress = Recorder::default();
    // Let the loop pause it, then unpause it behind the loop's back before the end.
    let driven = {
        let s = settings(&interrupt);
        let mut d = DriverThatUnpauses(&mut driver);
        drive(&mut d, &mut controller, &mut progress, &s)
    };
    assert!(driven.paused_by_us);
    assert_eq!(driver.calls, [Call::Apply(Decision::Pause)]);
    assert!(!progress.has("resumed the guest"));
}

/// A scripted driver whose guest is resumed by someone else right after the pause.
struct DriverThatUnpauses<'a, 'b>(&'a mut ScriptedDriver<'b>);

impl Driver for DriverThatUnpauses<'_, '_> {
    fn wait(&mut self, period: Duration) -> Option<JobResult> {
        self.0.paused = false;
        self.0.wait(period)
    }
    fn elapsed_ms(&self) -> u64 {
        self.0.elapsed_ms()
    }
    fn sample(&mut self, elapsed_ms: u64) -> Option<JobSample> {
        self.0.sample(elapsed_ms)
    }
    fn supports(&self, decision: &Decision) -> bool {
        self.0.supports(decision)
    }
    fn apply(&mut self, decision: Decision) -> Result<(), DriverError> {
        self.0.apply(decision)
    }
    fn abort(&mut self) -> Result<(), DriverError> {
        self.0.abort()
    }
    fn resume(&mut self) -> Result<bool, DriverError> {
        self.0.resume()
    }
    fn max_downtime_ms(&mut self) -> Option<u64> {
        self.0.max_downtime_ms()
    }
    fn set_max_downtime_ms(&mut self, ms: u64) -> Result<(), DriverError> {
        self.0.set_max_downtime_ms(ms)
    }
}

#[test]
fn ctrl_c_before_post_copy_aborts_the_job_once() {
    let interrupt = AtomicBool::new(false);
    // Nothing allowed: the controller would abort at 12.8 s; Ctrl-C at 3 s comes first.
    let script = then_end(ctrl_c_at(samples(NOT_CONVERGING), 1), Err(ABORTED.into()));
    let mut driver = ScriptedDriver::new(&interrupt, script);
    let (driven, progress) = run(&mut driver, cfg(), &settings(&interrupt));
    assert_eq!(driver.calls, [Call::Abort]);
    assert_eq!(driven.stopped_by, Some(Stop::Interrupt));
    assert_eq!(
        progress.texts(),
        ["Ctrl-C: aborting the migration; waiting for the guest to run on the source again"]
    );
    // The loop consumed the Ctrl-C.
    assert!(!interrupt.load(Ordering::SeqCst));
}

#[test]
fn ctrl_c_whose_abort_fails_leaves_the_migration_running() {
    let interrupt = AtomicBool::new(false);
    let script = then_end(ctrl_c_at(samples(SAW_TOOTH_CONVERGING), 1), Ok(()));
    let mut driver = ScriptedDriver::new(&interrupt, script).failing(&[Call::Abort]);
    let (driven, progress) = run(&mut driver, cfg(), &settings(&interrupt));
    assert_eq!(driver.calls, [Call::Abort]);
    assert_eq!(driven.stopped_by, None);
    assert_eq!(driven.result, Ok(()));
    assert_eq!(
        progress.texts(),
        ["Ctrl-C: abort failed: refused by the script"]
    );
}

#[test]
fn ctrl_c_in_post_copy_does_not_abort_and_says_so() {
    let interrupt = AtomicBool::new(false);
    let config = Config {
        allow_postcopy: true,
        ..cfg()
    };
    // Post-copy from 8 s; Ctrl-C at 12.4 s and again at 17.6 s.
    let script = ctrl_c_at(ctrl_c_at(samples(NOT_CONVERGING), 6), 10);
    let mut driver = ScriptedDriver::new(&interrupt, then_end(script, Ok(())));
    let (driven, progress) = run(&mut driver, config, &settings(&interrupt));
    assert_eq!(driver.calls, [Call::Apply(Decision::StartPostCopy)]);
    assert_eq!(driven.stopped_by, None);
    assert_eq!(driven.result, Ok(()));
    assert_eq!(driven.mode, Mode::PostCopy);
    let refusals: Vec<u64> = progress
        .events
        .iter()
        .filter(|e| e.text == NOT_ABORTING_IN_POSTCOPY)
        .map(|e| e.at_ms)
        .collect();
    // Said at each Ctrl-C (timed at the sample before it).
    assert_eq!(refusals, [10_000, 17_200]);
}

#[test]
fn ctrl_c_when_the_hypervisor_shows_post_copy_does_not_abort() {
    // Post-copy that vmctl did not start (the hypervisor's own switch) counts the same.
    let interrupt = AtomicBool::new(false);
    let mut beats = samples(&SAW_TOOTH_CONVERGING[..4]);
    for b in &mut beats[2..] {
        if let Beat::Sample(s) = b {
            s.mode = Mode::PostCopy;
        }
    }
    let script = then_end(ctrl_c_at(beats, 3), Ok(()));
    let mut driver = ScriptedDriver::new(&interrupt, script);
    let (_, progress) = run(&mut driver, cfg(), &settings(&interrupt));
    assert!(driver.calls.is_empty(), "{:?}", driver.calls);
    assert_eq!(progress.texts(), [NOT_ABORTING_IN_POSTCOPY]);
}

#[test]
fn the_deadline_aborts_in_pre_copy_once() {
    let interrupt = AtomicBool::new(false);
    let script = then_end(samples(SAW_TOOTH_CONVERGING), Err(ABORTED.into()));
    let mut driver = ScriptedDriver::new(&interrupt, script);
    let settings = Settings {
        deadline: Some(Duration::from_secs(5)),
        ..settings(&interrupt)
    };
    let (driven, progress) = run(&mut driver, cfg(), &settings);
    // 6.0 s is the first sample past 5 s; the later ones abort nothing more.
    assert_eq!(driver.calls, [Call::Abort]);
    assert_eq!(driven.stopped_by, Some(Stop::Timeout));
    assert_eq!(
        progress.events,
        [TimedEvent {
            at_ms: 2_000,
            text: "--timeout reached: aborting the migration; waiting for the guest to run on the source again".into()
        }]
    );
}

#[test]
fn the_deadline_in_post_copy_is_refused_once() {
    let interrupt = AtomicBool::new(false);
    let config = Config {
        allow_postcopy: true,
        ..cfg()
    };
    let script = then_end(samples(NOT_CONVERGING), Ok(()));
    let mut driver = ScriptedDriver::new(&interrupt, script);
    let settings = Settings {
        deadline: Some(Duration::from_secs(9)),
        ..settings(&interrupt)
    };
    let (driven, progress) = run(&mut driver, config, &settings);
    assert_eq!(driver.calls, [Call::Apply(Decision::StartPostCopy)]);
    assert_eq!(driven.stopped_by, None);
    let refusals = progress
        .texts()
        .iter()
        .filter(|t| **t == NOT_ABORTING_IN_POSTCOPY)
        .count();
    assert_eq!(refusals, 1);
}

#[test]
fn a_driver_that_cannot_take_a_decision_gets_it_as_advice() {
    // KubeVirt's shape: only abort. Post-copy is advice; the controller moves on to what is
    // left (abort), which the driver can take.
    let interrupt = AtomicBool::new(false);
    let config = Config {
        allow_postcopy: true,
        ..cfg()
    };
    let script = then_end(samples(NOT_CONVERGING), Err(ABORTED.into()));
    let mut driver = ScriptedDriver::new(&interrupt, script);
    driver.supported = Some(vec![Decision::Abort {
        cause: AbortCause::NotConverging,
    }]);
    let (driven, progress) = run(&mut driver, config, &settings(&interrupt));
    assert_eq!(driver.calls, [Call::Abort]);
    assert_eq!(driven.stopped_by, Some(Stop::Controller("not-converging")));
    assert!(
        progress.has("advice only: vmctl cannot switch to post-copy from outside this migration")
    );
    assert_eq!(driven.mode, Mode::PreCopy);
}
