//! The loop's rules, over a scripted driver: every test asserts the exact calls the loop
//! made on the driver.

use std::collections::VecDeque;
use std::sync::Arc;

use futures::executor::block_on;

use super::*;
use crate::migration::controller::tests::{NOT_CONVERGING, Row, SAW_TOOTH_CONVERGING, cfg, sample};
use crate::migration::controller::{AbortCause, Config};

const PERIOD: Duration = Duration::from_millis(400);
const ABORTED: &str = "operation aborted: migration out job: canceled by client";
const ABORTING: &str = "aborting the migration; waiting for the guest to run on the source again";
const RESUMED: &str = "resumed the guest on the source (vmctl had paused it)";

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
    /// The hypervisor takes the job on and starts streaming (KubeVirt: the target is ready).
    UnderWay,
    /// A wait that ends at the deadline (the clock jumps to it), as KubeVirt's follower
    /// wakes for it.
    Deadline,
}

/// Plays a script of samples, records every call, fails the calls it is told to fail.
struct ScriptedDriver {
    script: VecDeque<Beat>,
    next: Option<JobSample>,
    clock_ms: u64,
    /// The Ctrl-C flag the loop reads (set by `Beat::CtrlC`).
    interrupt: Arc<AtomicBool>,
    calls: Vec<Call>,
    /// Every period the loop waited for.
    waits: Vec<Duration>,
    failing: Vec<Call>,
    /// `None`: every decision; else only these.
    supported: Option<Vec<Decision>>,
    downtime_ms: u64,
    paused: bool,
    /// Someone else resumes the guest at every wait.
    resumed_behind_our_back: bool,
    /// `Driver::under_way`, `streaming_since_ms`, `monitor_progress_timeout_secs`.
    under_way: bool,
    streaming_since_ms: Option<u64>,
    monitor_progress_timeout_secs: Option<u64>,
    // The run's setup, for `play`:
    initial_downtime_ms: Option<u64>,
    deadline: Option<Duration>,
    policy: Policy,
}

impl ScriptedDriver {
    fn new(script: impl IntoIterator<Item = Beat>) -> Self {
        ScriptedDriver {
            script: script.into_iter().collect(),
            next: None,
            clock_ms: 0,
            interrupt: Arc::new(AtomicBool::new(false)),
            calls: Vec::new(),
            waits: Vec::new(),
            failing: Vec::new(),
            supported: None,
            downtime_ms: 300,
            paused: false,
            resumed_behind_our_back: false,
            under_way: true,
            streaming_since_ms: Some(0),
            monitor_progress_timeout_secs: None,
            initial_downtime_ms: None,
            deadline: None,
            policy: Policy::LIBVIRT,
        }
    }

    /// Samples of `rows`, then the end.
    fn over(rows: &[Row], end: JobResult) -> Self {
        Self::new(then_end(samples(rows), end))
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

impl<P: Progress + ?Sized> Driver<P> for ScriptedDriver {
    async fn wait(&mut self, period: Duration, _progress: &mut P) -> Option<JobResult> {
        self.waits.push(period);
        if self.resumed_behind_our_back {
            self.paused = false;
        }
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
            Beat::UnderWay => {
                self.clock_ms += period.as_millis() as u64;
                self.under_way = true;
                self.streaming_since_ms = Some(self.clock_ms);
                return None;
            }
            Beat::Deadline => {
                self.clock_ms += period.as_millis() as u64;
                if let Some(d) = self.deadline {
                    self.clock_ms = self.clock_ms.max(d.as_millis() as u64);
                }
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

    async fn sample(&mut self, elapsed_ms: u64, _progress: &mut P) -> Option<JobSample> {
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

    fn under_way(&self) -> bool {
        self.under_way
    }

    fn streaming_since_ms(&self) -> Option<u64> {
        self.streaming_since_ms
    }

    fn monitor_progress_timeout_secs(&self) -> Option<u64> {
        self.monitor_progress_timeout_secs
    }

    async fn apply(&mut self, decision: Decision) -> Result<(), DriverError> {
        self.call(Call::Apply(decision))?;
        match decision {
            Decision::Pause => self.paused = true,
            Decision::RaiseMaxDowntime { ms } => self.downtime_ms = ms,
            _ => {}
        }
        Ok(())
    }

    async fn abort(&mut self) -> Result<(), DriverError> {
        self.call(Call::Abort)
    }

    async fn resume(&mut self) -> Result<bool, DriverError> {
        if !self.paused {
            return Ok(false);
        }
        self.call(Call::Resume)?;
        self.paused = false;
        Ok(true)
    }

    async fn max_downtime_ms(&mut self) -> Option<u64> {
        Some(self.downtime_ms)
    }

    async fn set_max_downtime_ms(&mut self, ms: u64) -> Result<(), DriverError> {
        self.call(Call::SetMaxDowntime(ms))?;
        self.downtime_ms = ms;
        Ok(())
    }
}

/// Records what the loop draws.
#[derive(Default)]
struct Recorder {
    samples: Vec<JobSample>,
    advice: Vec<Advice>,
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

    fn advise(&mut self, advice: &Advice) {
        self.advice.push(advice.clone());
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

    fn modes(&self) -> Vec<Mode> {
        self.samples.iter().map(|s| s.mode).collect()
    }
}

fn samples(rows: &[Row]) -> Vec<Beat> {
    rows.iter().map(|r| Beat::Sample(sample(*r))).collect()
}

fn then_end(mut beats: Vec<Beat>, result: JobResult) -> Vec<Beat> {
    beats.push(Beat::End(result));
    beats
}

/// Makes the beats at `at` Ctrl-Cs.
fn ctrl_c_at(mut beats: Vec<Beat>, at: &[usize]) -> Vec<Beat> {
    for i in at {
        if let Beat::Sample(s) = beats[*i].clone() {
            beats[*i] = Beat::CtrlC(s);
        }
    }
    beats
}

/// The controller's options on `cfg()` (30 ms max downtime, nothing allowed).
fn allowing(postcopy: bool, pause: bool) -> Config {
    Config {
        allow_postcopy: postcopy,
        allow_pause: pause,
        ..cfg()
    }
}

/// A ceiling within reach on `NOT_CONVERGING`: raise to 4 s at 12.8 s, which does not
/// help, then pause at 17.6 s.
fn raise_then_pause() -> Config {
    Config {
        initial_downtime_ms: 300,
        max_downtime_ms: 4000,
        ..allowing(false, true)
    }
}

struct Played {
    driver: ScriptedDriver,
    driven: Driven,
    progress: Recorder,
    controller: Controller,
}

fn parts(p: Played) -> (ScriptedDriver, Driven, Recorder) {
    (p.driver, p.driven, p.progress)
}

/// Sets the initial downtime (if the driver's setup says), then drives the script.
fn play(mut driver: ScriptedDriver, config: Config) -> Played {
    let interrupt = driver.interrupt.clone();
    let mut progress = Recorder::default();
    let downtime = match driver.initial_downtime_ms {
        Some(ms) => block_on(set_initial_downtime(&mut driver, ms, &mut progress)),
        None => DowntimeMemo::default(),
    };
    let settings = Settings {
        period: PERIOD,
        interrupt: &interrupt,
        deadline: driver.deadline,
        downtime,
        policy: driver.policy,
    };
    let mut controller = Controller::new(config);
    let driven = block_on(drive(
        &mut driver,
        &mut controller,
        &mut progress,
        &settings,
    ));
    Played {
        driver,
        driven,
        progress,
        controller,
    }
}

#[test]
fn converging_pre_copy_completes_untouched() {
    let mut driver = ScriptedDriver::over(SAW_TOOTH_CONVERGING, Ok(()));
    driver.initial_downtime_ms = Some(30);
    let (driver, driven, progress) = parts(play(driver, cfg()));

    assert_eq!(driver.calls, [Call::SetMaxDowntime(30)]);
    assert_eq!(driven.end, End::Job(Ok(())));
    assert_eq!(driven.stopped_by, None);
    assert_eq!(driven.mode, Mode::PreCopy);
    assert!(!driven.paused_by_us);
    assert!(driven.notes.is_empty());
    assert_eq!(progress.samples.len(), SAW_TOOTH_CONVERGING.len());
    assert!(progress.events.is_empty(), "{:?}", progress.texts());
    assert_eq!(driven.last_sample.map(|s| s.elapsed_ms), Some(17_800));
    // The clock is the driver's: the last sample had nothing left in its pass, so the loop
    // waited the shortest wait, not a period, and the end came then.
    assert_eq!(driven.elapsed_ms, 17_850);
}

#[test]
fn the_initial_downtime_remembers_what_it_replaced() {
    let mut driver = ScriptedDriver::new([]);
    driver.downtime_ms = 500;
    let mut progress = Recorder::default();
    let memo = block_on(set_initial_downtime(&mut driver, 300, &mut progress));
    assert_eq!(
        memo,
        DowntimeMemo {
            original_ms: Some(500),
            changed: true
        }
    );
    let memo = block_on(set_initial_downtime(&mut driver, 300, &mut progress));
    assert!(!memo.changed, "300 was set already");
    assert_eq!(
        driver.calls,
        [Call::SetMaxDowntime(300), Call::SetMaxDowntime(300)]
    );
    assert!(progress.events.is_empty());
}

#[test]
fn the_initial_downtime_that_cannot_be_set_is_said_and_not_restored() {
    let mut driver =
        ScriptedDriver::new([Beat::End(Err("failed".into()))]).failing(&[Call::SetMaxDowntime(30)]);
    driver.initial_downtime_ms = Some(30);
    let played = play(driver, cfg());
    assert_eq!(
        played.progress.texts(),
        ["could not set the max downtime to 30 ms: refused by the script"]
    );
    assert_eq!(played.driven.end, End::Job(Err("failed".into())));
    // Only the attempt: nothing was changed, so nothing is put back.
    assert_eq!(played.driver.calls, [Call::SetMaxDowntime(30)]);
}

#[test]
fn samples_with_nothing_to_copy_are_neither_drawn_nor_judged() {
    let script = [
        Beat::Nothing,
        Beat::Sample(JobSample::default()),
        Beat::Sample(sample((0.8, 256, 1, 16, 0))),
        Beat::End(Ok(())),
    ];
    let played = play(ScriptedDriver::new(script), cfg());
    assert_eq!(played.progress.samples.len(), 1);
    assert_eq!(played.progress.samples[0].elapsed_ms, 800);
    assert_eq!(played.driven.end, End::Job(Ok(())));
    assert!(played.driver.calls.is_empty());
}

#[test]
fn not_converging_the_controllers_decisions_are_applied_in_order() {
    // Raise the max downtime (within reach of the ceiling), then, when that did not help,
    // pause: the controller's order, applied as it decides.
    let (driver, driven, progress) = parts(play(
        ScriptedDriver::over(NOT_CONVERGING, Ok(())),
        raise_then_pause(),
    ));

    assert_eq!(
        driver.calls,
        [
            Call::Apply(Decision::RaiseMaxDowntime { ms: 4000 }),
            Call::Apply(Decision::Pause),
        ]
    );
    assert_eq!(driven.end, End::Job(Ok(())));
    assert!(driven.paused_by_us);
    assert_eq!(driven.mode, Mode::Paused);
    // The pause doubled the budget: the view measures against the new one.
    assert_eq!(progress.budgets, [Some(300)]);
    // The samples after the pause are drawn as paused, although the hypervisor's do not
    // say so.
    let modes = progress.modes();
    assert_eq!(modes[..11], [Mode::PreCopy; 11]);
    assert_eq!(modes[11..], [Mode::Paused; 3]);
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
    let (driver, driven, progress) = parts(play(
        ScriptedDriver::over(NOT_CONVERGING, Ok(())),
        allowing(true, false),
    ));
    assert_eq!(driver.calls, [Call::Apply(Decision::StartPostCopy)]);
    assert_eq!(driven.mode, Mode::PostCopy);
    // Pass 2 starts at the fifth sample (8 s): from the next one on, post-copy.
    let modes = progress.modes();
    assert_eq!(modes[..5], [Mode::PreCopy; 5]);
    assert_eq!(modes[5..], [Mode::PostCopy; 9]);
}

#[test]
fn a_pass_that_ends_before_the_period_is_sampled_as_it_ends() {
    let (driver, _, _) = parts(play(
        ScriptedDriver::over(NOT_CONVERGING, Ok(())),
        allowing(true, false),
    ));
    let ms: Vec<u128> = driver.waits.iter().map(|w| w.as_millis()).collect();
    // The first wait has no sample to go by; 256 MiB left at 32 MiB/s is a whole period
    // away; 3 MiB left at 7.6 s ends in 94 ms: sampled at 123 ms (a tenth and 20 ms more),
    // not at the period, so the switch to post-copy comes with pass 2's first bytes. In
    // post-copy the period again.
    assert_eq!(ms[..5], [400, 400, 400, 400, 123], "{ms:?}");
    assert!(ms[5..].iter().all(|w| *w == 400), "{ms:?}");
}

#[test]
fn a_pass_end_is_never_sampled_sooner_than_the_shortest_wait() {
    let mut pilot = Pilot::new(DowntimeMemo::default(), Policy::LIBVIRT);
    assert_eq!(pilot.next_wait(PERIOD), PERIOD, "no sample yet");
    pilot.last_sample = Some(sample((7.6, 0, 1, 32, 32)));
    assert_eq!(pilot.next_wait(PERIOD), MIN_WAIT);
    pilot.last_sample = Some(sample((7.6, 3, 1, 0, 32)));
    assert_eq!(
        pilot.next_wait(PERIOD),
        PERIOD,
        "no transfer rate: no projection"
    );
    pilot.last_sample = Some(sample((7.6, 3, 1, 32, 32)));
    pilot.mode = Mode::PostCopy;
    assert_eq!(pilot.next_wait(PERIOD), PERIOD, "post-copy has no passes");
}

#[test]
fn a_decision_that_fails_is_reported_and_the_loop_goes_on() {
    // Post-copy refused by the hypervisor: the controller takes its next option (pause),
    // and the failed migration then resumes the guest vmctl paused.
    let driver = ScriptedDriver::over(NOT_CONVERGING, Err("migration failed".into()))
        .failing(&[Call::Apply(Decision::StartPostCopy)]);
    let (driver, driven, progress) = parts(play(driver, allowing(true, true)));

    assert_eq!(
        driver.calls,
        [
            Call::Apply(Decision::StartPostCopy),
            Call::Apply(Decision::Pause),
            Call::Resume,
        ]
    );
    assert_eq!(driven.end, End::Job(Err("migration failed".into())));
    assert!(progress.has("could not apply the decision: refused by the script"));
    assert_eq!(progress.texts().last().copied(), Some(RESUMED));
    assert!(!progress.modes().contains(&Mode::PostCopy));
    assert!(driven.notes.is_empty());
}

#[test]
fn a_failed_controller_abort_is_tried_again_at_the_next_judgement() {
    let driver = ScriptedDriver::over(NOT_CONVERGING, Ok(())).failing(&[Call::Abort]);
    let played = play(driver, cfg());
    // Pass 3 proves it (12.8 s): abort refused; passes 4 and 5 prove it again.
    assert_eq!(played.driver.calls, [Call::Abort, Call::Abort, Call::Abort]);
    assert_eq!(played.driven.stopped_by, None);
    let refused = played
        .progress
        .texts()
        .iter()
        .filter(|t| t.starts_with("could not apply the decision"))
        .count();
    assert_eq!(refused, 3);
}

#[test]
fn the_controllers_abort_stops_judging() {
    let played = play(
        ScriptedDriver::over(NOT_CONVERGING, Err(ABORTED.into())),
        cfg(),
    );
    assert_eq!(played.driver.calls, [Call::Abort]);
    assert_eq!(
        played.driven.stopped_by,
        Some(Stop::Controller(AbortCause::NotConverging.cause_id()))
    );
    // Still drawn after the abort, until the job ends.
    assert_eq!(played.progress.samples.len(), NOT_CONVERGING.len());
}

#[test]
fn the_max_downtime_vmctl_changed_is_restored_when_the_migration_does_not_happen() {
    let mut driver = ScriptedDriver::over(NOT_CONVERGING, Err("migration failed".into()));
    driver.downtime_ms = 500;
    driver.initial_downtime_ms = Some(300);
    let played = play(driver, raise_then_pause());
    assert_eq!(
        played.driver.calls,
        [
            Call::SetMaxDowntime(300),
            Call::Apply(Decision::RaiseMaxDowntime { ms: 4000 }),
            Call::Apply(Decision::Pause),
            Call::Resume,
            Call::SetMaxDowntime(500),
        ]
    );
    assert_eq!(played.driver.downtime_ms, 500);
}

#[test]
fn a_raise_alone_is_restored_too_and_a_success_restores_nothing() {
    // The initial 300 ms was set already (nothing changed); raised at 12.8 s to 4 s.
    let run = |end: JobResult| {
        let mut driver = ScriptedDriver::over(&NOT_CONVERGING[..10], end);
        driver.initial_downtime_ms = Some(300);
        play(driver, raise_then_pause()).driver.calls
    };
    let set = Call::SetMaxDowntime(300);
    let raise = Call::Apply(Decision::RaiseMaxDowntime { ms: 4000 });
    assert_eq!(
        run(Err("failed".into())),
        [set.clone(), raise.clone(), set.clone()]
    );
    assert_eq!(run(Ok(())), [set, raise]);
}

#[test]
fn nothing_changed_nothing_restored() {
    let played = play(
        ScriptedDriver::over(&NOT_CONVERGING[..8], Err("failed".into())),
        allowing(false, true),
    );
    // Paused at 12.8 s; the failure resumes the guest; the max downtime was never touched.
    assert_eq!(
        played.driver.calls,
        [Call::Apply(Decision::Pause), Call::Resume]
    );
}

#[test]
fn a_guest_vmctl_paused_is_resumed_when_the_migration_is_aborted() {
    // Paused by the controller at 12.8 s, then Ctrl-C at 17.2 s.
    let script = then_end(
        ctrl_c_at(samples(NOT_CONVERGING), &[9]),
        Err(ABORTED.into()),
    );
    let played = play(ScriptedDriver::new(script), allowing(false, true));
    assert_eq!(
        played.driver.calls,
        [Call::Apply(Decision::Pause), Call::Abort, Call::Resume]
    );
    assert_eq!(played.driven.stopped_by, Some(Stop::Interrupt));
    assert!(!played.driver.paused);
    assert!(played.progress.has(RESUMED));
}

#[test]
fn a_resume_that_fails_is_a_note_for_the_summary() {
    let driver =
        ScriptedDriver::over(NOT_CONVERGING, Err("failed".into())).failing(&[Call::Resume]);
    let played = play(driver, allowing(false, true));
    assert_eq!(
        played.driver.calls,
        [Call::Apply(Decision::Pause), Call::Resume]
    );
    assert_eq!(
        played.driven.notes,
        ["could not resume the guest vmctl paused: refused by the script"]
    );
    assert!(!played.progress.has(RESUMED));
}

#[test]
fn a_guest_that_is_no_longer_paused_is_not_resumed() {
    // The hypervisor resumed it (libvirt does, when a migration of a running guest fails):
    // the driver says it runs already; no call, and the event says who resumed it.
    let mut driver = ScriptedDriver::over(NOT_CONVERGING, Err("failed".into()));
    driver.resumed_behind_our_back = true;
    let played = play(driver, allowing(false, true));
    assert!(played.driven.paused_by_us);
    assert_eq!(played.driver.calls, [Call::Apply(Decision::Pause)]);
    assert!(played.progress.has(&format!("the hypervisor {RESUMED}")));
    assert!(
        !played
            .progress
            .events
            .iter()
            .any(|e| e.text.starts_with(RESUMED))
    );
}

#[test]
fn ctrl_c_before_post_copy_aborts_the_job_once() {
    // Nothing allowed: the controller would abort at 12.8 s; Ctrl-C at 3 s comes first.
    let script = then_end(
        ctrl_c_at(samples(NOT_CONVERGING), &[1]),
        Err(ABORTED.into()),
    );
    let played = play(ScriptedDriver::new(script), cfg());
    assert_eq!(played.driver.calls, [Call::Abort]);
    assert_eq!(played.driven.stopped_by, Some(Stop::Interrupt));
    assert_eq!(
        played.progress.events,
        [TimedEvent {
            at_ms: 400,
            text: format!("Ctrl-C: {ABORTING}")
        }]
    );
    // The loop consumed the Ctrl-C.
    assert!(!played.driver.interrupt.load(Ordering::SeqCst));
}

#[test]
fn ctrl_c_whose_abort_fails_leaves_the_migration_running() {
    let script = then_end(ctrl_c_at(samples(SAW_TOOTH_CONVERGING), &[1]), Ok(()));
    let played = play(ScriptedDriver::new(script).failing(&[Call::Abort]), cfg());
    assert_eq!(played.driver.calls, [Call::Abort]);
    assert_eq!(played.driven.stopped_by, None);
    assert_eq!(played.driven.end, End::Job(Ok(())));
    assert_eq!(
        played.progress.texts(),
        ["Ctrl-C: abort failed: refused by the script"]
    );
}

#[test]
fn ctrl_c_in_post_copy_does_not_abort_and_says_so() {
    // Post-copy from 8 s; Ctrl-C at 12.4 s and again at 17.6 s.
    let script = then_end(ctrl_c_at(samples(NOT_CONVERGING), &[6, 10]), Ok(()));
    let played = play(ScriptedDriver::new(script), allowing(true, false));
    assert_eq!(played.driver.calls, [Call::Apply(Decision::StartPostCopy)]);
    assert_eq!(played.driven.stopped_by, None);
    assert_eq!(played.driven.end, End::Job(Ok(())));
    assert_eq!(played.driven.mode, Mode::PostCopy);
    let refusals: Vec<u64> = played
        .progress
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
    let mut beats = samples(&SAW_TOOTH_CONVERGING[..4]);
    for b in &mut beats[2..] {
        if let Beat::Sample(s) = b {
            s.mode = Mode::PostCopy;
        }
    }
    let script = then_end(ctrl_c_at(beats, &[3]), Ok(()));
    let played = play(ScriptedDriver::new(script), cfg());
    assert!(played.driver.calls.is_empty(), "{:?}", played.driver.calls);
    assert_eq!(played.progress.texts(), [NOT_ABORTING_IN_POSTCOPY]);
}

#[test]
fn the_deadline_aborts_in_pre_copy_once() {
    let mut driver = ScriptedDriver::over(SAW_TOOTH_CONVERGING, Err(ABORTED.into()));
    driver.deadline = Some(Duration::from_secs(5));
    let played = play(driver, cfg());
    // At 6.0 s, the first wait past 5 s (timed at the sample before); the later ones abort
    // nothing more.
    assert_eq!(played.driver.calls, [Call::Abort]);
    assert_eq!(played.driven.stopped_by, Some(Stop::Timeout));
    assert_eq!(
        played.progress.events,
        [TimedEvent {
            at_ms: 2_000,
            text: format!("--timeout reached: {ABORTING}")
        }]
    );
}

#[test]
fn the_deadline_in_post_copy_is_refused_once() {
    let mut driver = ScriptedDriver::over(NOT_CONVERGING, Ok(()));
    driver.deadline = Some(Duration::from_secs(9));
    let played = play(driver, allowing(true, false));
    assert_eq!(played.driver.calls, [Call::Apply(Decision::StartPostCopy)]);
    assert_eq!(played.driven.stopped_by, None);
    let refusals = played
        .progress
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
    let mut driver = ScriptedDriver::over(NOT_CONVERGING, Err(ABORTED.into()));
    driver.supported = Some(vec![Decision::Abort {
        cause: AbortCause::NotConverging,
    }]);
    let played = play(driver, allowing(true, false));
    assert_eq!(played.driver.calls, [Call::Abort]);
    assert_eq!(
        played.driven.stopped_by,
        Some(Stop::Controller("not-converging"))
    );
    // Advised once, in the controller's words without its action.
    let advice = &played.progress.advice;
    assert_eq!(advice.len(), 1, "{advice:?}");
    assert_eq!(advice[0].decision, Decision::StartPostCopy);
    assert!(!advice[0].why.contains("->"), "{advice:?}");
    assert!(!played.progress.has("switch to post-copy"));
    assert_eq!(played.driven.mode, Mode::PreCopy);
}

#[test]
fn a_driver_that_can_take_no_decision_is_advised_once_and_left_alone() {
    // KubeVirt's shape (`operate::kubevirt_job::KubeVirtJob`): the monitor decides. One
    // advice, no call on the driver, and the migration ends the way the hypervisor ends it.
    let mut driver = ScriptedDriver::over(NOT_CONVERGING, Err(ABORTED.into()));
    driver.supported = Some(Vec::new());
    let played = play(driver, allowing(true, true));
    assert_eq!(played.driver.calls, []);
    assert_eq!(played.driven.stopped_by, None);
    assert_eq!(
        played.progress.advice.len(),
        1,
        "{:?}",
        played.progress.advice
    );
    assert_eq!(played.progress.advice[0].decision, Decision::StartPostCopy);
    assert!(
        played.progress.events.is_empty(),
        "{:?}",
        played.progress.texts()
    );
}

// ---------------------------------------------------------------- the KubeVirt path
//
// The same loop under KubeVirt's policy (`Policy::kubevirt`) with a driver shaped like
// `operate::kubevirt_job::KubeVirtJob`: it supports no decision (virt-handler's migration
// monitor decides: kubevirt/kubevirt pkg/virt-launcher/virtwrap/live-migration-source.go),
// its abort deletes the VMIM, its samples carry the mode from `migrationState.mode`, and the
// monitor enforces its own progress timeout (150 s by default, FACTS §5.2).

/// A KubeVirt-shaped driver: no decision supported, under way and streaming from the
/// start, the monitor's 150 s progress timeout.
fn kubevirt(script: impl IntoIterator<Item = Beat>) -> ScriptedDriver {
    let mut driver = ScriptedDriver::new(script);
    driver.supported = Some(Vec::new());
    driver.policy = Policy::kubevirt(false);
    driver.monitor_progress_timeout_secs = Some(150);
    driver
}

/// A KubeVirt migration not yet under way (Pending/Scheduling: no target, no stream).
fn kubevirt_pending(script: impl IntoIterator<Item = Beat>) -> ScriptedDriver {
    let mut driver = kubevirt(script);
    driver.under_way = false;
    driver.streaming_since_ms = None;
    driver
}

/// What `Config::advising_kubevirt` makes of the test configuration: judged as if
/// post-copy were allowed, without the progress timeout (KubeVirt's own is replayed).
fn advising() -> Config {
    Config {
        allow_postcopy: true,
        progress_timeout_secs: 0,
        ..cfg()
    }
}

fn with_mode(mut beats: Vec<Beat>, from: usize, mode: Mode) -> Vec<Beat> {
    for b in &mut beats[from..] {
        if let Beat::Sample(s) | Beat::CtrlC(s) = b {
            s.mode = mode;
        }
    }
    beats
}

#[test]
fn kubevirt_not_converging_is_advised_once_and_nothing_is_done() {
    let played = play(
        kubevirt(then_end(samples(NOT_CONVERGING), Ok(()))),
        advising(),
    );
    assert_eq!(
        played.driver.calls,
        [],
        "the monitor's migration is left alone"
    );
    assert_eq!(played.driven.end, End::Job(Ok(())));
    assert_eq!(played.driven.stopped_by, None);
    let advice = &played.progress.advice;
    assert_eq!(advice.len(), 1, "{advice:?}");
    assert_eq!(advice[0].decision, Decision::StartPostCopy);
    assert!(!advice[0].why.contains("->"), "{advice:?}");
    assert!(!advice[0].why.starts_with("not converging"), "{advice:?}");
    // Advice is all it shows: the controller's "-> switch to post-copy" is not an event.
    assert!(
        played.progress.events.is_empty(),
        "{:?}",
        played.progress.texts()
    );
    assert_eq!(played.progress.samples.len(), NOT_CONVERGING.len());
}

#[test]
fn kubevirt_with_post_copy_allowed_is_not_judged() {
    let mut driver = kubevirt(then_end(samples(NOT_CONVERGING), Ok(())));
    driver.policy = Policy::kubevirt(true);
    let played = play(driver, advising());
    assert!(
        played.progress.advice.is_empty(),
        "{:?}",
        played.progress.advice
    );
    assert_eq!(played.driver.calls, []);
}

#[test]
fn kubevirt_is_judged_from_the_start_of_streaming() {
    // A converging copy that streams from 100 s on the view's clock (scheduling took 100 s),
    // against a 30 s budget: judged from the start of streaming, it completes within the
    // budget; judged from vmctl's start, it would be advised post-copy for the budget.
    let late: Vec<Beat> = SAW_TOOTH_CONVERGING
        .iter()
        .map(|r| Beat::Sample(sample((r.0 + 100.0, r.1, r.2, r.3, r.4))))
        .collect();
    let budget = Config {
        budget_secs: 30,
        ..advising()
    };
    let mut driver = kubevirt(then_end(late.clone(), Ok(())));
    driver.streaming_since_ms = Some(100_000);
    let played = play(driver, budget.clone());
    assert!(
        played.progress.advice.is_empty(),
        "{:?}",
        played.progress.advice
    );

    let mut driver = kubevirt(then_end(late, Ok(())));
    driver.streaming_since_ms = Some(0);
    let played = play(driver, budget);
    assert_eq!(played.progress.advice.len(), 1);
    assert!(played.progress.advice[0].why.contains("budget of 30 s"));
}

#[test]
fn kubevirt_post_copy_seen_in_the_samples_is_never_aborted_by_ctrl_c() {
    // The monitor switched to post-copy at 8 s (migrationState.mode: PostCopy); Ctrl-C at
    // 12.4 s: vmctl stops following and leaves it running, with no abort and no advice.
    let beats = with_mode(samples(NOT_CONVERGING), 4, Mode::PostCopy);
    let played = play(
        kubevirt(then_end(ctrl_c_at(beats, &[6]), Ok(()))),
        advising(),
    );
    assert_eq!(played.driver.calls, []);
    assert_eq!(played.driven.end, End::Left);
    assert_eq!(played.driven.stopped_by, Some(Stop::Interrupt));
    assert_eq!(played.driven.mode, Mode::PostCopy);
    assert_eq!(
        played.progress.samples.len(),
        6,
        "the Ctrl-C's sample is not drawn"
    );
    assert!(played.progress.advice.is_empty());
    assert!(!played.progress.has(NOT_ABORTING_IN_POSTCOPY));
}

#[test]
fn kubevirt_post_copy_is_never_aborted_by_the_deadline_either() {
    let beats = with_mode(samples(NOT_CONVERGING), 4, Mode::PostCopy);
    let mut driver = kubevirt(then_end(beats, Ok(())));
    driver.deadline = Some(Duration::from_secs(10));
    let played = play(driver, advising());
    assert_eq!(played.driver.calls, []);
    assert_eq!(played.driven.end, End::Left);
    assert_eq!(played.driven.stopped_by, Some(Stop::Timeout));
    // Left at the first wait at or past 10 s.
    assert_eq!(played.driven.elapsed_ms, 10_000);
}

#[test]
fn kubevirt_ctrl_c_before_the_migration_is_under_way_takes_it_back() {
    let script = [
        Beat::Nothing,
        Beat::CtrlC(JobSample::default()),
        Beat::End(Ok(())),
    ];
    let played = play(kubevirt_pending(script), advising());
    assert_eq!(played.driver.calls, [Call::Abort], "the VMIM is deleted");
    assert_eq!(played.driven.end, End::TakenBack(Ok(())));
    assert_eq!(played.driven.stopped_by, Some(Stop::Interrupt));
    assert!(played.progress.events.is_empty(), "the command says it");

    // A deletion that fails is reported, and following still stops.
    let script = [Beat::CtrlC(JobSample::default()), Beat::End(Ok(()))];
    let played = play(kubevirt_pending(script).failing(&[Call::Abort]), advising());
    assert_eq!(
        played.driven.end,
        End::TakenBack(Err(DriverError("refused by the script".into())))
    );
}

#[test]
fn kubevirt_ctrl_c_in_pre_copy_leaves_the_migration_to_the_cluster() {
    // Under way (the target was prepared) and streaming: Ctrl-C stops following; the
    // migration belongs to the cluster (`vmctl abort` aborts it).
    let script = then_end(ctrl_c_at(samples(NOT_CONVERGING), &[2]), Ok(()));
    let played = play(kubevirt(script), advising());
    assert_eq!(played.driver.calls, []);
    assert_eq!(played.driven.end, End::Left);
    assert_eq!(played.driven.stopped_by, Some(Stop::Interrupt));
    assert_eq!(played.driven.mode, Mode::PreCopy);

    // Once under way, though not yet streaming: the same.
    let mut driver = kubevirt_pending([Beat::UnderWay, Beat::CtrlC(JobSample::default())]);
    driver.streaming_since_ms = None;
    let played = play(driver, advising());
    assert_eq!(played.driver.calls, []);
    assert_eq!(played.driven.end, End::Left);
}

#[test]
fn kubevirt_deadline_stops_following_and_never_aborts() {
    // Not even a migration that is not under way: `--timeout` ends the wait, not the
    // migration (the command prints how to abort it).
    let mut driver = kubevirt_pending([Beat::Nothing, Beat::Deadline, Beat::End(Ok(()))]);
    driver.deadline = Some(Duration::from_secs(3));
    let played = play(driver, advising());
    assert_eq!(played.driver.calls, []);
    assert_eq!(played.driven.end, End::Left);
    assert_eq!(played.driven.stopped_by, Some(Stop::Timeout));
    assert_eq!(played.driven.elapsed_ms, 3_000);
}

#[test]
fn kubevirt_a_stall_is_said_against_the_monitors_progress_timeout() {
    // Remaining data flat from 1 s on, for 40 s: said at 10 s and at 30 s, against the
    // monitor's 150 s (it aborts, not vmctl); nothing in post-copy.
    let flat: Vec<Beat> = (1..=41)
        .map(|t| Beat::Sample(sample((f64::from(t), 100, 1, 16, 16))))
        .collect();
    let played = play(kubevirt(then_end(flat.clone(), Ok(()))), advising());
    assert_eq!(played.driver.calls, []);
    let stalls: Vec<(u64, &str)> = played
        .progress
        .events
        .iter()
        .map(|e| (e.at_ms, e.text.as_str()))
        .collect();
    assert_eq!(
        stalls,
        [
            (
                11_000,
                "no progress for 10s of the 150 s progress timeout (remaining data has not fallen; KubeVirt aborts the migration at 150 s)"
            ),
            (
                31_000,
                "no progress for 30s of the 150 s progress timeout (remaining data has not fallen; KubeVirt aborts the migration at 150 s)"
            ),
        ]
    );
    // A libvirt-shaped driver (the controller enforces the timeout) says nothing of it.
    let mut driver = kubevirt(then_end(flat.clone(), Ok(())));
    driver.monitor_progress_timeout_secs = None;
    assert!(play(driver, advising()).progress.events.is_empty());
    // Post-copy is never aborted for lack of progress: nothing to say.
    let post = with_mode(flat, 0, Mode::PostCopy);
    assert!(
        play(kubevirt(then_end(post, Ok(()))), advising())
            .progress
            .events
            .is_empty()
    );
}

#[test]
fn kubevirt_a_monitor_pause_is_drawn_and_not_judged() {
    // migrationState.mode: Paused (the monitor paused the guest to finish the copy): drawn
    // as paused, and the controller, which would advise post-copy for the 10 s budget from
    // 12.4 s, is not asked.
    let beats = with_mode(samples(NOT_CONVERGING), 4, Mode::Paused);
    let budget = Config {
        budget_secs: 10,
        ..advising()
    };
    let played = play(kubevirt(then_end(beats, Ok(()))), budget);
    let modes = played.progress.modes();
    assert_eq!(modes[..4], [Mode::PreCopy; 4]);
    assert_eq!(modes[4..], [Mode::Paused; 10]);
    assert!(
        played.progress.advice.is_empty(),
        "{:?}",
        played.progress.advice
    );
    assert_eq!(played.driven.mode, Mode::Paused);
    assert!(!played.driven.paused_by_us);
    assert_eq!(
        played.driver.calls,
        [],
        "nothing to resume: vmctl did not pause it"
    );
}

#[test]
fn kubevirt_the_monitors_abort_ends_the_loop_with_its_result() {
    // KubeVirt's monitor aborted it: v1.9+'s failureReason for every abort
    // (kubevirt/kubevirt pkg/virt-launcher/virtwrap/live-migration-source.go,
    // setMigrationResult; FACTS §5.4). The loop puts nothing back: vmctl changed nothing.
    const MONITOR_ABORTED: &str = "Live migration has been aborted";
    let played = play(
        kubevirt(then_end(
            samples(&NOT_CONVERGING[..6]),
            Err(MONITOR_ABORTED.into()),
        )),
        advising(),
    );
    assert_eq!(played.driven.end, End::Job(Err(MONITOR_ABORTED.into())));
    assert_eq!(played.driven.stopped_by, None);
    assert_eq!(played.driver.calls, []);
    assert!(played.driven.notes.is_empty());
}

#[test]
fn kubevirt_a_converging_migration_succeeds_untouched() {
    let played = play(
        kubevirt(then_end(samples(SAW_TOOTH_CONVERGING), Ok(()))),
        advising(),
    );
    assert_eq!(played.driven.end, End::Job(Ok(())));
    assert_eq!(played.driver.calls, []);
    assert!(played.progress.advice.is_empty());
    assert!(
        played.progress.events.is_empty(),
        "{:?}",
        played.progress.texts()
    );
    assert_eq!(played.progress.samples.len(), SAW_TOOTH_CONVERGING.len());
}

/// The controller `migrate --connect` builds for a 256 MiB guest: a 32 MiB/s cap, 30 ms max
/// downtime, post-copy allowed; `measured`: a dirty rate was measured before the start.
fn libvirt_run(measured: bool) -> Config {
    let plan = crate::migration::plan::plan(&crate::migration::plan::Options {
        allow_postcopy: true,
        bandwidth_mib: Some(32),
        max_downtime_ms: Some(30),
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    plan.controller_config(256 << 20, measured)
}

/// `NOT_CONVERGING` as libvirt reports it: no dirty rate in pass 1, its own from pass 2.
fn libvirt_samples() -> Vec<Beat> {
    NOT_CONVERGING
        .iter()
        .map(|r| {
            let mut s = sample(*r);
            if s.iteration == Some(1) {
                s.dirty_rate_bps = 0;
            } else {
                s.dirty_rate_source = crate::migration::sample::DirtyRateSource::Libvirt;
            }
            Beat::Sample(s)
        })
        .collect()
}

#[test]
fn started_at_once_the_prediction_comes_from_pass_1_without_delaying_the_switch() {
    let driver = ScriptedDriver::new(then_end(libvirt_samples(), Ok(())));
    let played = play(driver, libvirt_run(false));
    let texts = played.progress.texts();
    // Nothing was said before the copy ran (no measurement, no prediction before the start);
    // at pass 2's start (8.0 s): the prediction from pass 1, then the switch on that same
    // sample.
    assert!(
        played.progress.events.iter().all(|e| e.at_ms >= 8_000),
        "{:?}",
        played.progress.events
    );
    assert!(
        texts[0].starts_with(
            "prediction (from pass 1: 32.0 MiB/s sent, 157.0 MiB dirtied in its 8.0 s: 32.0 MiB/s, a lower bound): "
        ) && texts[0].contains("will not converge"),
        "{texts:?}"
    );
    assert!(texts[1].ends_with("-> switch to post-copy"), "{texts:?}");
    assert_eq!(played.driver.calls, [Call::Apply(Decision::StartPostCopy)]);
    assert_eq!(played.progress.events[1].at_ms, 8_000);
    // The report carries it.
    let p = played
        .controller
        .prediction()
        .unwrap_or_else(|| panic!("no prediction"));
    assert_eq!(p.converges, Some(false));
    assert_eq!(p.dirty_rate_bps, Some(32 << 20));
    // Pass 1 alone gives no dirty rate: a migration that ends within it has no prediction.
    let one_pass: Vec<Beat> = libvirt_samples().into_iter().take(4).collect();
    let played = play(
        ScriptedDriver::new(then_end(one_pass, Ok(()))),
        libvirt_run(false),
    );
    assert!(played.controller.prediction().is_none());
    assert!(
        played.progress.events.is_empty(),
        "{:?}",
        played.progress.texts()
    );
}

#[test]
fn with_a_cap_and_a_rate_measured_before_the_start_nothing_is_predicted_again() {
    let played = play(
        ScriptedDriver::new(then_end(libvirt_samples(), Ok(()))),
        libvirt_run(true),
    );
    assert!(played.controller.prediction().is_none());
    assert!(
        !played.progress.has("prediction"),
        "{:?}",
        played.progress.texts()
    );
}
