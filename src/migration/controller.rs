//! The adaptive migration controller (pure): job samples in, decisions out.
//!
//! It keeps KubeVirt's two guards (FACTS §5.2–5.3): the **completion budget**
//! (`completionTimeoutPerGiB` × ceil(decimal GB of guest memory), default 150 s/GB) and the
//! **progress timeout** (remaining data not lower than the sample before for 150 s). On the
//! budget: post-copy if allowed, else pause if allowed (the budget doubles), else abort. On
//! the progress timeout: abort. Never abort once in post-copy.
//!
//! It beats the budget-only approach by proving non-convergence early, the way KubeVirt
//! v1.9's stall detector does (FACTS §5.4), from what each pre-copy pass *starts* with:
//! the remaining count saw-tooths (it falls within a pass and jumps up at the next by what
//! the guest dirtied meanwhile), so only pass starts are compared, never single samples.
//! At each new pass it estimates the downtime a switchover would cost (pass start / EWMA
//! transfer rate) and:
//! - if that fits the current max downtime, QEMU will switch over itself: wait;
//! - **stall**: this pass starts with ≥ 90 % of what the pass before started with, and the
//!   guest dirties at least 90 % as fast as we send (or two such passes in a row) — the
//!   dirty set cannot shrink, so pre-copy can never finish;
//! - **stall (patience)**: no pass has started 4 % lower than the lowest pass start for 40 s
//!   (KubeVirt's stallMargin / stallProgressTimeout, over pass starts);
//! - **doomed**: passes shrink, but the geometric projection of the remaining passes ends
//!   after the budget, at two pass starts in a row;
//!
//! - **post-copy sooner** (post-copy allowed only): at a pass start the shrink ratio
//!   (dirty rate / transfer rate, or the last two pass starts if worse) projects more than
//!   5 further passes, taking 3× the time post-copy needs to move the same data: switching
//!   now is the better deal (a non-destructive action on a projection; abort and pause wait
//!   for proof);
//!
//! and then acts at once: post-copy if allowed; else raise the max downtime to what the
//! estimate needs plus 25 % headroom when that is within 1.5× the ceiling (KubeVirt's
//! precopyPossibleFactor), capped at the ceiling, at most once per pass (QEMU compares with
//! the threshold at the end of each pass, so a raise takes effect at the next pass end); else
//! wait for auto-converge while its throttle can still rise; else pause if allowed; else
//! abort, saying why.

use super::pass_rules::{POSTCOPY_SOONER_FACTOR, POSTCOPY_SOONER_PASSES, STALL_RATIO};
use super::predict;
use super::sample::{DirtyRateSource, JobSample, Mode, PassTracker};
use crate::model::kubevirt::EffectiveMigrationConfig;
use crate::policy::budget::budget_for_bytes;

/// QEMU's default max downtime, and the initial one KubeVirt v1.9 sets (FACTS §5.4, §5.7).
/// (KubeVirt's own defaults — max downtime, progress timeout, completion timeout per GiB —
/// are in `model::kubevirt`, the budget formula in `policy::budget`.)
pub const QEMU_DEFAULT_DOWNTIME_MS: u64 = 300;

/// Dirtying at this share of the transfer rate or more: the dirty set cannot shrink.
const DIRTY_KEEPS_UP: f64 = 0.9;
/// KubeVirt's stallMargin (4 %) and stallProgressTimeout (40 s), over pass starts.
const STALL_MARGIN: f64 = 0.04;
const STALL_PATIENCE_MS: u64 = 40_000;
/// KubeVirt's ewmaAlpha for the transfer rate.
const EWMA_ALPHA: f64 = 0.4;
/// KubeVirt's precopyPossibleFactor: an estimate within 1.5× the ceiling may still converge.
const PRECOPY_POSSIBLE_FACTOR: f64 = 1.5;
/// Headroom over the estimated downtime when raising the max downtime.
const DOWNTIME_HEADROOM: f64 = 1.25;
/// Auto-converge's throttle cannot go higher than this (libvirt/QEMU maximum).
const MAX_THROTTLE: u32 = 99;

/// The controller's settings, from the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub allow_postcopy: bool,
    pub allow_auto_converge: bool,
    pub allow_pause: bool,
    /// Abort when remaining data has not decreased for this long; 0 disables.
    pub progress_timeout_secs: u64,
    /// The completion budget; 0 disables.
    pub budget_secs: u64,
    /// The max downtime set when the migration starts.
    pub initial_downtime_ms: u64,
    /// The highest max downtime the controller may set.
    pub max_downtime_ms: u64,
    /// Prove non-convergence from pass starts and act early (false: KubeVirt's legacy,
    /// budget-only behaviour, kept for comparison).
    pub early_detection: bool,
    /// Predict convergence from what the copy itself shows, and say it as a note: with the
    /// dirty rate measured before the start (`--measure`) but no cap, once pass 1 has
    /// measured the bandwidth; without a measurement before the start (the default: vmctl
    /// starts at once), at pass 2's start, from what pass 1 sent and what the guest dirtied
    /// meanwhile (pass 2's start).
    pub predict_in_flight: bool,
}

impl Config {
    /// The controller KubeVirt's migration monitor amounts to, for a guest of
    /// `memory_bytes` under `migration` (the cluster's configuration with its defaults
    /// applied, or a MigrationPolicy's). Pause is left out: KubeVirt does not pause a guest
    /// on the controller's terms. For advice on a KubeVirt migration (see
    /// `migration::driver`).
    pub fn for_kubevirt(migration: &EffectiveMigrationConfig, memory_bytes: u64) -> Self {
        Config {
            allow_postcopy: migration.allow_post_copy,
            allow_auto_converge: migration.allow_auto_converge,
            allow_pause: false,
            progress_timeout_secs: migration.progress_timeout,
            budget_secs: budget_for_bytes(migration.completion_timeout_per_gib, memory_bytes),
            initial_downtime_ms: initial_downtime_ms(migration.max_downtime_ms),
            max_downtime_ms: migration.max_downtime_ms,
            early_detection: true,
            predict_in_flight: false,
        }
    }
}

impl Config {
    /// The controller that judges a KubeVirt migration for advice (see `migration::driver`):
    /// [`Config::for_kubevirt`], as if post-copy were allowed (when it would switch to
    /// post-copy, post-copy is what this migration lacks), without the progress timeout
    /// (KubeVirt enforces its own, which the loop replays and says as what it is), with
    /// KubeVirt's completion budget for this migration when known.
    pub fn advising_kubevirt(
        migration: &EffectiveMigrationConfig,
        memory_bytes: u64,
        budget_secs: Option<u64>,
    ) -> Self {
        let mut cfg = Config::for_kubevirt(migration, memory_bytes);
        cfg.allow_postcopy = true;
        cfg.progress_timeout_secs = 0;
        if let Some(b) = budget_secs {
            cfg.budget_secs = b;
        }
        cfg
    }
}

/// The max downtime set at the start: min(ceiling, 300 ms), as KubeVirt v1.9 does.
pub fn initial_downtime_ms(ceiling_ms: u64) -> u64 {
    ceiling_ms.clamp(1, QEMU_DEFAULT_DOWNTIME_MS)
}

/// Why the controller aborts; each maps to a triage cause id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AbortCause {
    /// Proven early: pre-copy cannot converge and nothing else is allowed.
    NotConverging,
    /// The completion budget ran out (triage: not-converging).
    BudgetExceeded,
    /// Remaining data did not decrease for the progress timeout.
    NoProgress,
}

impl AbortCause {
    /// The triage cause (`explain`'s vocabulary, one catalogue for both).
    pub fn cause(self) -> crate::triage::cause::Cause {
        use crate::triage::cause;
        match self {
            AbortCause::NotConverging | AbortCause::BudgetExceeded => cause::NOT_CONVERGING,
            AbortCause::NoProgress => cause::NO_PROGRESS,
        }
    }

    /// The triage cause's id.
    pub fn cause_id(self) -> &'static str {
        self.cause().id
    }
}

/// What to do after a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Continue,
    RaiseMaxDowntime { ms: u64 },
    StartPostCopy,
    Pause,
    Abort { cause: AbortCause },
}

/// A decision and, when there is something to say, why (printed as an event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub decision: Decision,
    pub why: Option<String>,
    /// Said before `why`: the in-flight prediction, when this sample made it.
    pub note: Option<String>,
}

impl Step {
    fn quiet() -> Self {
        Step {
            decision: Decision::Continue,
            why: None,
            note: None,
        }
    }

    fn note(text: String) -> Self {
        Step {
            decision: Decision::Continue,
            why: Some(text),
            note: None,
        }
    }

    fn act(decision: Decision, why: String) -> Self {
        Step {
            decision,
            why: Some(why),
            note: None,
        }
    }
}

/// What the pass starts tell so far.
#[derive(Debug, Clone, PartialEq)]
enum Verdict {
    Converging,
    Unknown,
    NotConverging(String),
    /// Post-copy is allowed and pre-copy, though it may converge, would take much longer
    /// than post-copy needs to move the same data.
    PostCopySooner(String),
}

/// The controller's memory between samples.
#[derive(Debug, Clone)]
pub struct Controller {
    cfg: Config,
    budget_ms: u64,
    passes: PassTracker,
    bw_ewma: Option<f64>,
    downtime_ms: u64,
    last_remaining: Option<u64>,
    last_progress_ms: u64,
    stalled_in_a_row: u32,
    doomed_in_a_row: u32,
    lowest_start: Option<(u64, u64)>,
    raised_in_pass: Option<u64>,
    max_throttle_pass: Option<u64>,
    postcopy_requested: bool,
    paused: bool,
    waiting_noted: bool,
    done: bool,
    /// The dirty rate measured before the start (samples of pass 1 carry it).
    prior_dirty_bps: Option<u64>,
    /// Samples of pass 1 with a transfer rate, for the in-flight prediction.
    rated_samples: u32,
    predicted: bool,
    /// The in-flight prediction, once made.
    prediction: Option<predict::Prediction>,
}

impl Controller {
    pub fn new(cfg: Config) -> Self {
        Controller {
            budget_ms: cfg.budget_secs.saturating_mul(1000),
            downtime_ms: cfg.initial_downtime_ms,
            cfg,
            passes: PassTracker::default(),
            bw_ewma: None,
            last_remaining: None,
            last_progress_ms: 0,
            stalled_in_a_row: 0,
            doomed_in_a_row: 0,
            lowest_start: None,
            raised_in_pass: None,
            max_throttle_pass: None,
            postcopy_requested: false,
            paused: false,
            waiting_noted: false,
            done: false,
            prior_dirty_bps: None,
            rated_samples: 0,
            predicted: false,
            prediction: None,
        }
    }

    /// The prediction made in flight ([`Config::predict_in_flight`]), once made.
    pub fn prediction(&self) -> Option<&predict::Prediction> {
        self.prediction.as_ref()
    }

    /// The current budget in seconds (doubled after a pause); 0 = none.
    pub fn budget_secs(&self) -> u64 {
        self.budget_ms / 1000
    }

    /// The max downtime the controller believes is set.
    pub fn max_downtime_ms(&self) -> u64 {
        self.downtime_ms
    }

    /// Tells the controller that applying its last decision failed, so it can try the next
    /// option instead (e.g. post-copy refused by the hypervisor).
    pub fn decision_failed(&mut self, decision: Decision) {
        match decision {
            Decision::StartPostCopy => {
                self.postcopy_requested = false;
                self.cfg.allow_postcopy = false;
            }
            Decision::Pause => {
                self.paused = false;
                self.cfg.allow_pause = false;
            }
            Decision::Abort { .. } => self.done = false,
            Decision::RaiseMaxDowntime { .. } | Decision::Continue => {}
        }
    }

    /// Feeds one sample; returns what to do now.
    pub fn observe(&mut self, s: &JobSample) -> Step {
        let remaining = s.remaining();
        if s.memory_bps > 0 {
            let bps = s.memory_bps as f64;
            self.bw_ewma = Some(match self.bw_ewma {
                Some(prev) => EWMA_ALPHA * bps + (1.0 - EWMA_ALPHA) * prev,
                None => bps,
            });
        }
        match self.last_remaining {
            Some(last) if remaining < last => self.last_progress_ms = s.elapsed_ms,
            None => self.last_progress_ms = s.elapsed_ms,
            _ => {}
        }
        self.last_remaining = Some(remaining);
        if s.dirty_rate_source == DirtyRateSource::MeasuredBeforeStart {
            self.prior_dirty_bps = Some(s.dirty_rate_bps);
        }
        let new_pass = self.passes.observe(s);
        if self.max_throttle_pass.is_none() && s.throttle_percent.unwrap_or(0) >= MAX_THROTTLE {
            self.max_throttle_pass = Some(self.passes.pass);
        }

        if self.done {
            return Step::quiet();
        }
        // Once post-copy is asked for, the guest's state may be split: never abort.
        if s.mode == Mode::PostCopy || self.postcopy_requested {
            return Step::quiet();
        }

        if self.budget_ms > 0 && s.elapsed_ms > self.budget_ms {
            return self.on_budget_exceeded(s);
        }
        let stuck_ms = s.elapsed_ms.saturating_sub(self.last_progress_ms);
        if self.cfg.progress_timeout_secs > 0 && stuck_ms > self.cfg.progress_timeout_secs * 1000 {
            self.done = true;
            return Step::act(
                Decision::Abort {
                    cause: AbortCause::NoProgress,
                },
                format!(
                    "no progress: remaining data has not decreased for {} s (progress timeout {} s) -> abort",
                    stuck_ms / 1000,
                    self.cfg.progress_timeout_secs
                ),
            );
        }
        // Paused by us, the copy finishes as stop-and-copy: only the two guards remain.
        if s.mode == Mode::Paused || self.paused || !self.cfg.early_detection {
            return Step::quiet();
        }
        let note = self.predict_in_flight(s, new_pass);
        let step = if !new_pass && !self.lowest_start_overdue(s) {
            Step::quiet()
        } else {
            match self.verdict(s, new_pass) {
                Verdict::Converging | Verdict::Unknown => Step::quiet(),
                Verdict::NotConverging(why) => self.on_not_converging(s, why),
                Verdict::PostCopySooner(why) => {
                    self.postcopy_requested = true;
                    Step::act(
                        Decision::StartPostCopy,
                        format!("{why} -> switch to post-copy"),
                    )
                }
            }
        };
        Step { note, ..step }
    }

    fn on_budget_exceeded(&mut self, s: &JobSample) -> Step {
        let why = format!(
            "not completed within the budget of {} s",
            self.budget_ms / 1000
        );
        if self.cfg.allow_postcopy {
            self.postcopy_requested = true;
            return Step::act(
                Decision::StartPostCopy,
                format!("{why} -> switch to post-copy"),
            );
        }
        if self.cfg.allow_pause && !self.paused && s.mode != Mode::Paused {
            self.paused = true;
            self.budget_ms = self.budget_ms.saturating_mul(2);
            return Step::act(
                Decision::Pause,
                format!(
                    "{why} -> pause the guest so the copy can finish (budget now {} s)",
                    self.budget_ms / 1000
                ),
            );
        }
        self.done = true;
        Step::act(
            Decision::Abort {
                cause: AbortCause::BudgetExceeded,
            },
            format!("{why} -> abort"),
        )
    }

    /// True when the patience window ran out since the lowest pass start, even without a
    /// new pass to look at.
    fn lowest_start_overdue(&self, s: &JobSample) -> bool {
        self.passes.pass >= 2
            && self
                .lowest_start
                .is_some_and(|(_, at)| s.elapsed_ms.saturating_sub(at) > STALL_PATIENCE_MS)
    }

    /// Judges the pass starts so far; the ratio and projection rules only at a new pass (the
    /// patience rule at any sample).
    fn verdict(&mut self, s: &JobSample, new_pass: bool) -> Verdict {
        let Some(bw) = self.bw_ewma.filter(|b| *b > 0.0) else {
            return Verdict::Unknown;
        };
        let start = self.passes.start_remaining;
        // Pass 1 is the bulk copy: its "start" is the whole memory, not a dirty set.
        if self.passes.pass < 2 {
            return Verdict::Unknown;
        }
        let estimate_ms = start as f64 / bw * 1000.0;
        if estimate_ms <= self.downtime_ms as f64 {
            self.stalled_in_a_row = 0;
            self.doomed_in_a_row = 0;
            return Verdict::Converging;
        }

        if new_pass
            && self.cfg.allow_postcopy
            && let Some(why) = self.postcopy_sooner(s, bw, start, estimate_ms)
        {
            return Verdict::PostCopySooner(why);
        }

        // KubeVirt-style patience over pass starts.
        let patience = match self.lowest_start {
            Some((low, _)) if (start as f64) < low as f64 * (1.0 - STALL_MARGIN) => {
                self.lowest_start = Some((start, s.elapsed_ms));
                None
            }
            None => {
                self.lowest_start = Some((start, s.elapsed_ms));
                None
            }
            Some((low, at)) if s.elapsed_ms.saturating_sub(at) > STALL_PATIENCE_MS => {
                Some(format!(
                    "no pass has started {}% below {} for {} s (now {} at pass {})",
                    (STALL_MARGIN * 100.0) as u64,
                    mib(low),
                    (s.elapsed_ms - at) / 1000,
                    mib(start),
                    self.passes.pass
                ))
            }
            Some(_) => None,
        };

        // Pass 2's start: the rate measured before the start and libvirt's first one agree
        // that the guest dirties as fast as it is sent — two measurements instead of
        // waiting a whole dirty-set pass for the next pass start.
        if new_pass
            && self.passes.pass == 2
            && let Some(prior) = self.prior_dirty_bps
        {
            let libvirt = s.dirty_rate_bps as f64;
            if prior as f64 >= DIRTY_KEEPS_UP * bw && libvirt >= DIRTY_KEEPS_UP * bw {
                return Verdict::NotConverging(format!(
                    "the guest dirtied {}/s measured before the start and {}/s in pass 1, while {}/s is sent; a switchover now would take ~{} ms (max downtime {} ms)",
                    mib(prior),
                    mib(s.dirty_rate_bps),
                    mib(bw as u64),
                    estimate_ms.round() as u64,
                    self.downtime_ms
                ));
            }
        }
        let Some(prev) = self.passes.previous_start.filter(|p| *p > 0) else {
            return patience.map_or(Verdict::Unknown, Verdict::NotConverging);
        };
        // The comparison needs two dirty-set passes: pass 2's start against pass 3's.
        if self.passes.pass < 3 || !new_pass {
            return patience.map_or(Verdict::Unknown, Verdict::NotConverging);
        }
        let ratio = start as f64 / prev as f64;
        let dirty = s.dirty_rate_bps as f64;
        let keeps_up = dirty >= DIRTY_KEEPS_UP * bw;
        if ratio >= STALL_RATIO {
            self.stalled_in_a_row += 1;
            self.doomed_in_a_row = 0;
            if keeps_up || self.stalled_in_a_row >= 2 {
                let rates = if keeps_up {
                    format!(
                        "the guest dirties {}/s while {}/s is sent",
                        mib(s.dirty_rate_bps),
                        mib(bw as u64)
                    )
                } else {
                    format!("{} passes in a row did not shrink", self.stalled_in_a_row)
                };
                return Verdict::NotConverging(format!(
                    "pass {} starts with {}, {:.0}% of pass {}'s {}; {rates}; a switchover now would take ~{} ms (max downtime {} ms)",
                    self.passes.pass,
                    mib(start),
                    ratio * 100.0,
                    self.passes.pass - 1,
                    mib(prev),
                    estimate_ms.round() as u64,
                    self.downtime_ms
                ));
            }
            return patience.map_or(Verdict::Unknown, Verdict::NotConverging);
        }
        self.stalled_in_a_row = 0;

        // Shrinking: project the passes still needed (geometric, ratio r per pass) and
        // their time; doomed if that ends after the budget, twice in a row.
        if self.budget_ms > 0 {
            let target = bw * self.downtime_ms as f64 / 1000.0;
            let passes_left = ((target / start as f64).ln() / ratio.ln()).ceil().max(1.0);
            let secs_left = start as f64 / bw * (1.0 - ratio.powf(passes_left)) / (1.0 - ratio);
            let ends_ms = s.elapsed_ms as f64 + secs_left * 1000.0;
            if ends_ms > self.budget_ms as f64 && !self.throttle_can_rise() {
                self.doomed_in_a_row += 1;
                if self.doomed_in_a_row >= 2 {
                    return Verdict::NotConverging(format!(
                        "passes shrink to {:.0}% each, too slowly: ~{} more passes, ending near {} s, past the budget of {} s",
                        ratio * 100.0,
                        passes_left as u64,
                        (ends_ms / 1000.0).round() as u64,
                        self.budget_ms / 1000
                    ));
                }
            } else {
                self.doomed_in_a_row = 0;
            }
        }
        patience.map_or(Verdict::Unknown, Verdict::NotConverging)
    }

    /// With post-copy allowed: at a pass start, project pre-copy's remaining passes from the
    /// shrink ratio (the dirty rate over the transfer rate, or the last two pass starts if
    /// worse) down to what fits the max downtime. More than 5 passes taking 3× the time
    /// post-copy needs to move the same data: switch now rather than after the budget.
    fn postcopy_sooner(
        &self,
        s: &JobSample,
        bw: f64,
        start: u64,
        estimate_ms: f64,
    ) -> Option<String> {
        let by_rates = s.dirty_rate_bps as f64 / bw;
        let by_starts = self
            .passes
            .previous_start
            .filter(|p| *p > 0 && self.passes.pass >= 3)
            .map_or(0.0, |p| start as f64 / p as f64);
        let ratio = by_rates.max(by_starts);
        let postcopy_secs = start as f64 / bw;
        let what = format!(
            "pass {} starts with {} and the guest dirties {}/s of the {}/s sent",
            self.passes.pass,
            mib(start),
            mib(s.dirty_rate_bps),
            mib(bw as u64)
        );
        if ratio >= STALL_RATIO {
            return Some(format!(
                "not converging: {what}; pre-copy cannot get under the {} ms max downtime (a switchover now: ~{} ms)",
                self.downtime_ms,
                estimate_ms.round() as u64
            ));
        }
        if ratio <= 0.0 {
            return None;
        }
        let target = bw * self.downtime_ms as f64 / 1000.0;
        let passes = ((target / start as f64).ln() / ratio.ln()).ceil().max(1.0);
        let precopy_secs = postcopy_secs * (1.0 - ratio.powf(passes)) / (1.0 - ratio);
        (passes > POSTCOPY_SOONER_PASSES && precopy_secs >= POSTCOPY_SOONER_FACTOR * postcopy_secs)
            .then(|| {
                format!(
                    "post-copy sooner: {what}; pre-copy would need ~{} more passes (~{:.0} s) to get under the {} ms max downtime, post-copy moves the rest in ~{:.0} s",
                    passes as u64,
                    precopy_secs,
                    self.downtime_ms,
                    postcopy_secs
                )
            })
    }

    /// The in-flight prediction ([`Config::predict_in_flight`]), once, as a note: with a
    /// dirty rate measured before the start, once pass 1 has shown the bandwidth (three
    /// samples with a transfer rate); without one, at pass 2's start, from pass 1: the
    /// bandwidth it ran at, and the dirty rate of what pass 2 starts with (all the guest
    /// dirtied while pass 1 ran) over pass 1's time, or libvirt's own figure if higher. That
    /// rate counts each page once however often it was written: a lower bound (on the lab, a
    /// guest rewriting a 160 MiB working set at 64 MiB/s reads 24 MiB/s over an 8.6 s pass 1),
    /// so "converges" from it is weak; the pass starts that follow decide.
    fn predict_in_flight(&mut self, s: &JobSample, new_pass: bool) -> Option<String> {
        if !self.cfg.predict_in_flight || self.predicted {
            return None;
        }
        let (dirty_bps, source, said) = match (self.passes.pass, self.prior_dirty_bps) {
            (1, Some(prior)) => {
                if s.memory_bps > 0 {
                    self.rated_samples += 1;
                }
                if self.rated_samples < 3 {
                    return None;
                }
                let bw = self.bw_ewma?;
                (
                    prior,
                    DirtyRateSource::MeasuredBeforeStart,
                    format!("bandwidth measured in pass 1: {}/s", mib(bw as u64)),
                )
            }
            (2, None) if new_pass => {
                let bw = self.bw_ewma?;
                let pass1_ms = s.elapsed_ms.max(1);
                let dirtied = self.passes.start_remaining;
                let by_start = (dirtied as f64 * 1000.0 / pass1_ms as f64) as u64;
                let dirty = match s.dirty_rate_source {
                    DirtyRateSource::Libvirt => by_start.max(s.dirty_rate_bps),
                    _ => by_start,
                };
                (
                    dirty,
                    DirtyRateSource::Libvirt,
                    format!(
                        "from pass 1: {}/s sent, {} dirtied in its {:.1} s: {}/s, a lower bound",
                        mib(bw as u64),
                        mib(dirtied),
                        pass1_ms as f64 / 1000.0,
                        mib(dirty)
                    ),
                )
            }
            _ => return None,
        };
        let bw = self.bw_ewma?;
        self.predicted = true;
        let p = predict::predict(&predict::Inputs {
            memory_bytes: s.total(),
            dirty_rate_bps: Some(dirty_bps),
            dirty_rate_source: source,
            dirty_rate_is_lower_bound: true,
            bandwidth_bps: Some(bw as u64),
            bandwidth_source: predict::BandwidthSource::Measured,
            initial_downtime_ms: self.cfg.initial_downtime_ms,
            max_downtime_ms: self.cfg.max_downtime_ms,
            budget_secs: self.budget_ms / 1000,
            allow_postcopy: self.cfg.allow_postcopy,
            allow_auto_converge: self.cfg.allow_auto_converge,
            allow_pause: self.cfg.allow_pause,
            flavour: predict::Flavour::Libvirt,
        });
        let note = format!("prediction ({said}): {}", p.summary);
        self.prediction = Some(p);
        Some(note)
    }

    /// Auto-converge may still help: its throttle can rise, or reached its maximum less
    /// than two passes ago (a throttle takes a pass to show in the dirty set).
    fn throttle_can_rise(&self) -> bool {
        if !self.cfg.allow_auto_converge {
            return false;
        }
        match self.max_throttle_pass {
            None => true,
            Some(pass) => self.passes.pass < pass + 2,
        }
    }

    fn on_not_converging(&mut self, s: &JobSample, why: String) -> Step {
        // Restart the patience window: each action gets a fresh one.
        self.lowest_start = Some((self.passes.start_remaining, s.elapsed_ms));
        if self.cfg.allow_postcopy {
            self.postcopy_requested = true;
            return Step::act(
                Decision::StartPostCopy,
                format!("not converging: {why} -> switch to post-copy"),
            );
        }
        let ceiling = self.cfg.max_downtime_ms;
        if let Some(bw) = self.bw_ewma.filter(|b| *b > 0.0) {
            let estimate_ms = self.passes.start_remaining as f64 / bw * 1000.0;
            let within_reach = estimate_ms <= ceiling as f64 * PRECOPY_POSSIBLE_FACTOR;
            if within_reach
                && self.downtime_ms < ceiling
                && self.raised_in_pass != Some(self.passes.pass)
            {
                let wanted = (estimate_ms * DOWNTIME_HEADROOM / 10.0).ceil() as u64 * 10;
                let ms = wanted.clamp(self.downtime_ms + 1, ceiling);
                self.downtime_ms = ms;
                self.raised_in_pass = Some(self.passes.pass);
                self.stalled_in_a_row = 0;
                self.doomed_in_a_row = 0;
                return Step::act(
                    Decision::RaiseMaxDowntime { ms },
                    format!(
                        "not converging: {why} -> raise max downtime to {ms} ms (estimate + 25%, ceiling {ceiling} ms)"
                    ),
                );
            }
        }
        if self.throttle_can_rise() {
            if self.waiting_noted {
                return Step::quiet();
            }
            self.waiting_noted = true;
            return Step::note(format!(
                "not converging yet: {why}; auto-converge is throttling the guest ({}%) -> waiting for it",
                s.throttle_percent.unwrap_or(0)
            ));
        }
        if self.cfg.allow_pause && !self.paused {
            self.paused = true;
            self.budget_ms = self.budget_ms.saturating_mul(2);
            return Step::act(
                Decision::Pause,
                format!("not converging: {why} -> pause the guest so the copy can finish"),
            );
        }
        self.done = true;
        let hint = if self.cfg.allow_auto_converge {
            "allow post-copy or pause, or raise --max-downtime"
        } else {
            "allow post-copy, auto-converge or pause, or raise --bandwidth or --max-downtime"
        };
        Step::act(
            Decision::Abort {
                cause: AbortCause::NotConverging,
            },
            format!("not converging: {why} -> abort ({hint})"),
        )
    }
}

fn mib(bytes: u64) -> String {
    crate::text::bytes(bytes)
}

/// The traces are shared with the loop's tests (`driver/tests.rs`).
#[cfg(test)]
pub(super) mod tests;
