//! Will a live migration converge, and how long will it take? (pure: numbers in, a
//! prediction out). Used before a libvirt migration starts (`migrate --connect`, its
//! `--dry-run`), by the controller in flight when the bandwidth is only known once the copy
//! runs, and by `plan-drain`/`migrate` for KubeVirt VMs whose dirty rate virt-handler exports.
//!
//! # The model (pre-copy, as QEMU runs it)
//!
//! Pass 1 sends the guest's memory `M` at the bandwidth `B` (`t1 = M / B`; every page is
//! counted, so this is an upper bound for a guest with many zero pages). Each later pass
//! sends what the guest dirtied during the pass before: at a dirty rate `D` the next pass
//! starts with `min(D · t, M)`, so passes shrink by `r = D / B`. QEMU switches over (stops
//! the guest and sends the rest) as soon as a pass starts with no more than `B · downtime`.
//! With `r < 1` that takes `k = ⌈ln(B·downtime / R2) / ln r⌉` shrinking passes after pass 1;
//! the total is `t1 + R2/B · (1 − r^(k+1)) / (1 − r)`. With `r ≥ 1` the dirty set never
//! shrinks: pre-copy cannot converge.
//!
//! Measured on the libvirt lab (256 MiB guest dirtying 4 MiB/s over a 16 MiB/s cap): pass 2
//! started with 55 MiB after a 13.8 s pass 1 (`D · t1` = 55 MiB), and the migration took
//! 18.3 s against 21.3 s predicted (pass 1 sent fewer bytes than `M`: zero pages).
//!
//! What the controller does when pre-copy cannot converge is modelled after it
//! (`migration::controller`): post-copy at the start of pass 2 (the rest moves once);
//! auto-converge throttles the guest's CPUs as QEMU does (20 % at the second sync period in
//! a row that dirtied more than half of what was sent, then +10 % every second such period,
//! at most 99 %; a CPU-bound dirtier slows in proportion); pause turns the rest into a
//! stop-and-copy (the guest is down while `R2` is sent).

use serde::Serialize;

use super::pass_rules::{POSTCOPY_SOONER_FACTOR, POSTCOPY_SOONER_PASSES, STALL_RATIO as KEEPS_UP};
use super::sample::DirtyRateSource;

const MIB: f64 = 1_048_576.0;
/// QEMU's auto-converge defaults (cpu-throttle-initial, -increment, max-cpu-throttle).
const THROTTLE_INITIAL: f64 = 0.20;
const THROTTLE_STEP: f64 = 0.10;
const THROTTLE_MAX: f64 = 0.99;
/// QEMU's max downtime limit (2000 s), the top of the `--max-downtime` search.
const MAX_DOWNTIME_LIMIT_MS: u64 = 2_000_000;
/// The top of the bandwidth search: 1 TiB/s.
const MAX_BANDWIDTH_MIB: u64 = 1 << 20;

/// Where the bandwidth figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BandwidthSource {
    /// `--bandwidth` (libvirt) or a MigrationPolicy's `bandwidthPerMigration` (KubeVirt).
    Cap,
    /// Measured on the running copy.
    Measured,
    /// Not known before the copy runs (no cap).
    Unknown,
}

/// How a migration ends (predicted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    PreCopy,
    PostCopy,
    AutoConverge,
    Pause,
}

impl Ending {
    pub fn as_str(self) -> &'static str {
        match self {
            Ending::PreCopy => "pre-copy",
            Ending::PostCopy => "post-copy",
            Ending::AutoConverge => "auto-converge",
            Ending::Pause => "pause",
        }
    }
}

/// What the prediction is made from.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    pub memory_bytes: u64,
    /// Bytes/s; `None` when nothing could measure it.
    pub dirty_rate_bps: Option<u64>,
    pub dirty_rate_source: DirtyRateSource,
    /// The dirty figure may read low (page sampling looks at a few hundred pages; KubeVirt's
    /// gauge is reported inaccurate in some releases): "converges" is then weaker than "does
    /// not converge".
    pub dirty_rate_is_lower_bound: bool,
    /// Bytes/s; `None` when unknown (no cap, not measured yet).
    pub bandwidth_bps: Option<u64>,
    pub bandwidth_source: BandwidthSource,
    /// The max downtime pre-copy starts with, and the highest the controller may set.
    pub initial_downtime_ms: u64,
    pub max_downtime_ms: u64,
    /// The completion budget, seconds; 0 = none.
    pub budget_secs: u64,
    pub allow_postcopy: bool,
    pub allow_auto_converge: bool,
    pub allow_pause: bool,
    /// The spelling of the flags in `alternatives` (libvirt's CLI flags or KubeVirt's
    /// MigrationPolicy fields).
    pub flavour: Flavour,
}

/// Whose words the alternatives use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flavour {
    /// `vmctl migrate --connect` flags.
    #[default]
    Libvirt,
    /// MigrationPolicy / KubeVirt configuration fields.
    KubeVirt,
}

/// A flag set that would change the outcome, with its own prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Alternative {
    /// e.g. `["--allow-postcopy"]`, `["--bandwidth", "48"]`.
    pub flags: Vec<String>,
    /// The migration completes with these flags.
    pub converges: bool,
    pub completes_by: Ending,
    pub predicted_seconds: f64,
    /// The guest's predicted downtime at the switchover.
    pub downtime_ms: u64,
    /// What the operator should know about it (e.g. post-copy's point of no return).
    pub note: String,
}

/// The prediction: the `prediction` object of `migrate --dry-run -o json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Prediction {
    /// Pre-copy converges (within the budget) with these settings; `None` when a rate is
    /// unknown.
    pub converges: Option<bool>,
    /// The migration completes with what the flags allow (post-copy, auto-converge, pause).
    pub completes: Option<bool>,
    pub completes_by: Option<Ending>,
    pub dirty_rate_bps: Option<u64>,
    pub dirty_rate_source: DirtyRateSource,
    pub bandwidth_bps: Option<u64>,
    pub bandwidth_source: BandwidthSource,
    pub memory_bytes: u64,
    pub budget_seconds: u64,
    /// Pre-copy passes including the bulk copy and the final one.
    pub passes: Option<u64>,
    pub predicted_seconds: Option<f64>,
    pub downtime_ms: Option<u64>,
    /// Bandwidth unknown: the least bandwidth at which pre-copy converges within the budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs_bandwidth_bps: Option<u64>,
    /// Dirty rate unknown: the highest dirty rate at which pre-copy converges.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_dirty_rate_bps: Option<u64>,
    /// One sentence.
    pub summary: String,
    /// What the figures rest on.
    pub caveats: Vec<String>,
    /// What would make it complete (empty when it does as planned).
    pub alternatives: Vec<Alternative>,
}

/// A pre-copy that converges.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Run {
    passes: u64,
    secs: f64,
    downtime_secs: f64,
    /// What pass 2 starts with, bytes.
    second_start: f64,
}

/// Why pre-copy does not converge.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stuck {
    /// The guest dirties at least 90 % of what is sent.
    KeepsUp { ratio: f64 },
    /// It converges, after the budget.
    TooSlow { passes: u64, secs: f64 },
}

/// Pre-copy alone, with the switchover threshold `B · downtime`.
fn precopy(m: f64, d: f64, b: f64, downtime_ms: u64, budget_secs: u64) -> Result<Run, Stuck> {
    let target = b * downtime_ms as f64 / 1000.0;
    let t1 = m / b;
    let r2 = (d * t1).min(m);
    let over_budget = |secs: f64| budget_secs > 0 && secs > budget_secs as f64;
    let run = if m <= target {
        Run {
            passes: 1,
            secs: t1,
            downtime_secs: t1,
            second_start: 0.0,
        }
    } else if r2 <= target {
        Run {
            passes: 2,
            secs: t1 + r2 / b,
            downtime_secs: r2 / b,
            second_start: r2,
        }
    } else {
        let ratio = d / b;
        if ratio >= KEEPS_UP {
            return Err(Stuck::KeepsUp { ratio });
        }
        let k = ((target / r2).ln() / ratio.ln()).ceil().max(1.0);
        let secs = t1 + r2 / b * (1.0 - ratio.powf(k + 1.0)) / (1.0 - ratio);
        Run {
            passes: 2 + k as u64,
            secs,
            downtime_secs: r2 * ratio.powf(k) / b,
            second_start: r2,
        }
    };
    if over_budget(run.secs) {
        return Err(Stuck::TooSlow {
            passes: run.passes,
            secs: run.secs,
        });
    }
    Ok(run)
}

/// Pre-copy with the controller's help in raising the max downtime up to the ceiling.
fn precopy_with_ceiling(i: &Inputs, m: f64, d: f64, b: f64) -> Result<Run, Stuck> {
    precopy(m, d, b, i.initial_downtime_ms, i.budget_secs).or_else(|stuck| {
        if i.max_downtime_ms > i.initial_downtime_ms {
            precopy(m, d, b, i.max_downtime_ms, i.budget_secs).map_err(|_| stuck)
        } else {
            Err(stuck)
        }
    })
}

/// Post-copy from the start of pass 2: the rest moves once (at `b`; post-copy runs
/// uncapped, so this is an upper bound when `b` is a cap).
fn postcopy(m: f64, d: f64, b: f64) -> (f64, f64) {
    let t1 = m / b;
    (t1 + (d * t1).min(m) / b, (d * t1).min(m))
}

/// Auto-converge, simulated pass by pass as QEMU throttles (see the module documentation).
fn auto_converge(m: f64, d: f64, b: f64, downtime_ms: u64, budget_secs: u64) -> Option<Run> {
    let target = b * downtime_ms as f64 / 1000.0;
    let (mut remaining, mut secs, mut throttle) = (m, 0.0_f64, 0.0_f64);
    let (mut period, mut dirtied, mut sent, mut high) = (0.0_f64, 0.0_f64, 0.0_f64, 0u32);
    let mut second_start = 0.0;
    for pass in 1..=10_000u64 {
        if pass == 2 {
            second_start = remaining;
        }
        if remaining <= target {
            secs += remaining / b;
            return (budget_secs == 0 || secs <= budget_secs as f64).then_some(Run {
                passes: pass,
                secs,
                downtime_secs: remaining / b,
                second_start,
            });
        }
        let t = remaining / b;
        secs += t;
        if budget_secs > 0 && secs > budget_secs as f64 {
            return None;
        }
        let next = (d * (1.0 - throttle) * t).min(m);
        period += t;
        dirtied += next;
        sent += remaining;
        if period >= 1.0 {
            if dirtied > sent / 2.0 {
                high += 1;
                if high >= 2 {
                    throttle = if throttle == 0.0 {
                        THROTTLE_INITIAL
                    } else {
                        (throttle + THROTTLE_STEP).min(THROTTLE_MAX)
                    };
                    high = 0;
                }
            }
            (period, dirtied, sent) = (0.0, 0.0, 0.0);
        }
        // At the maximum throttle with a dirty set that no longer shrinks: never.
        if throttle >= THROTTLE_MAX && next >= remaining * KEEPS_UP && pass > 3 {
            return None;
        }
        remaining = next;
    }
    None
}

fn mib(bps: f64) -> String {
    crate::text::bytes(bps.max(0.0) as u64)
}

fn secs_text(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.0} s")
    } else {
        format!("{:.0} min", s / 60.0)
    }
}

/// The prediction for `i`.
pub fn predict(i: &Inputs) -> Prediction {
    let m = i.memory_bytes as f64;
    let mut p = Prediction {
        converges: None,
        completes: None,
        completes_by: None,
        dirty_rate_bps: i.dirty_rate_bps,
        dirty_rate_source: if i.dirty_rate_bps.is_some() {
            i.dirty_rate_source
        } else {
            DirtyRateSource::Unknown
        },
        bandwidth_bps: i.bandwidth_bps.filter(|b| *b > 0),
        bandwidth_source: if i.bandwidth_bps.is_some_and(|b| b > 0) {
            i.bandwidth_source
        } else {
            BandwidthSource::Unknown
        },
        memory_bytes: i.memory_bytes,
        budget_seconds: i.budget_secs,
        passes: None,
        predicted_seconds: None,
        downtime_ms: None,
        needs_bandwidth_bps: None,
        max_dirty_rate_bps: None,
        summary: String::new(),
        caveats: Vec::new(),
        alternatives: Vec::new(),
    };
    if m <= 0.0 {
        p.summary = "no prediction: the guest's memory size is unknown".into();
        return p;
    }
    p.caveats.push(
        "pass 1 counts every page of the guest's memory; zero pages cost less, so a guest with free memory is faster"
            .into(),
    );
    if i.dirty_rate_is_lower_bound {
        let what = match i.dirty_rate_source {
            DirtyRateSource::MeasuredBeforeStart => {
                "the dirty rate, measured before the start by QEMU's page sampling (a few hundred pages),"
            }
            DirtyRateSource::KubevirtMetrics => {
                "the dirty rate, from virt-handler's metric (reported inaccurate in some KubeVirt releases),"
            }
            DirtyRateSource::Libvirt | DirtyRateSource::Unknown => "the dirty rate",
        };
        p.caveats.push(format!(
            "{what} may read low: a prediction that it converges is weaker than one that it does not"
        ));
    }
    match (i.dirty_rate_bps, p.bandwidth_bps) {
        (Some(d), Some(b)) => decide(i, &mut p, m, d as f64, b as f64),
        (Some(d), None) => {
            // The least bandwidth that converges within the budget.
            let need =
                least_bandwidth_mib(i, m, d as f64, 1).map(|mib| mib.saturating_mul(1 << 20));
            p.needs_bandwidth_bps = need;
            p.summary = match need {
                Some(n) => format!(
                    "the bandwidth is known only once the copy runs: pre-copy converges{} if it carries at least {}/s (the guest dirties {}/s)",
                    budget_words(i.budget_secs),
                    mib(n as f64),
                    mib(d as f64)
                ),
                None => format!(
                    "the bandwidth is known only once the copy runs; the guest dirties {}/s",
                    mib(d as f64)
                ),
            };
        }
        (None, Some(b)) => {
            let most = most_dirty_rate(i, m, b as f64);
            p.max_dirty_rate_bps = most;
            p.summary = match most {
                Some(x) => format!(
                    "the dirty rate is unknown ({}): at {}/s pre-copy converges{} if the guest dirties less than {}/s",
                    unknown_why(i),
                    mib(b as f64),
                    budget_words(i.budget_secs),
                    mib(x as f64)
                ),
                None => format!(
                    "the dirty rate is unknown ({}): at {}/s pre-copy does not converge{} even for an idle guest",
                    unknown_why(i),
                    mib(b as f64),
                    budget_words(i.budget_secs)
                ),
            };
        }
        (None, None) => {
            p.summary = format!(
                "no prediction: the dirty rate is unknown ({}) and the bandwidth is known only once the copy runs",
                unknown_why(i)
            );
        }
    }
    p
}

fn unknown_why(i: &Inputs) -> &'static str {
    match i.flavour {
        Flavour::Libvirt => "not measured",
        Flavour::KubeVirt => "no dirty-rate metric",
    }
}

fn budget_words(budget_secs: u64) -> String {
    if budget_secs == 0 {
        String::new()
    } else {
        format!(" within the {budget_secs} s budget")
    }
}

/// Both rates known: the verdict, what the plan ends with, and the alternatives.
fn decide(i: &Inputs, p: &mut Prediction, m: f64, d: f64, b: f64) {
    let rates = format!("{} dirtied/s against {}/s sent", mib(d), mib(b));
    match precopy_with_ceiling(i, m, d, b) {
        Ok(run) => {
            let postcopy_sooner = i.allow_postcopy && {
                let shrinking = run.passes.saturating_sub(2) as f64;
                let (post, _) = postcopy(m, d, b);
                shrinking > POSTCOPY_SOONER_PASSES
                    && run.secs - m / b >= POSTCOPY_SOONER_FACTOR * (post - m / b)
            };
            p.converges = Some(true);
            p.completes = Some(true);
            if postcopy_sooner {
                let (secs, rest) = postcopy(m, d, b);
                p.completes_by = Some(Ending::PostCopy);
                p.predicted_seconds = Some(round1(secs));
                p.downtime_ms = Some(0);
                p.passes = Some(2);
                p.summary = format!(
                    "pre-copy would converge but slowly ({} passes, ~{}); the controller switches to post-copy after pass 1 and completes in ~{} ({} left to move on demand; {rates})",
                    run.passes,
                    secs_text(run.secs),
                    secs_text(secs),
                    mib(rest)
                );
            } else {
                p.completes_by = Some(Ending::PreCopy);
                p.passes = Some(run.passes);
                p.predicted_seconds = Some(round1(run.secs));
                p.downtime_ms = Some((run.downtime_secs * 1000.0).round() as u64);
                p.summary = format!(
                    "converges in ~{} passes, ~{} ({rates}; downtime ~{} ms)",
                    run.passes,
                    secs_text(run.secs),
                    (run.downtime_secs * 1000.0).round() as u64
                );
            }
        }
        Err(stuck) => {
            p.converges = Some(false);
            let why = match stuck {
                Stuck::KeepsUp { ratio } => format!(
                    "the guest dirties {:.0}% of what is sent ({rates}): the dirty set never shrinks",
                    ratio * 100.0
                ),
                Stuck::TooSlow { passes, secs } => format!(
                    "it would take ~{passes} passes and ~{}, past the {} s budget ({rates})",
                    secs_text(secs),
                    i.budget_secs
                ),
            };
            let planned = planned_ending(i, m, d, b);
            p.alternatives = alternatives(i, m, d, b);
            match planned {
                Some(alt) => {
                    p.completes = Some(true);
                    p.completes_by = Some(alt.completes_by);
                    p.predicted_seconds = Some(alt.predicted_seconds);
                    p.downtime_ms = Some(alt.downtime_ms);
                    p.passes = None;
                    p.summary = format!(
                        "pre-copy will not converge: {why}; completes by {} in ~{} ({})",
                        alt.completes_by.as_str(),
                        secs_text(alt.predicted_seconds),
                        alt.note
                    );
                }
                None => {
                    p.completes = Some(false);
                    p.summary = format!("will not converge: {why}");
                }
            }
        }
    }
}

fn round1(s: f64) -> f64 {
    (s * 10.0).round() / 10.0
}

/// What the plan's own flags end with when pre-copy cannot converge (the controller's order:
/// post-copy, auto-converge, pause).
fn planned_ending(i: &Inputs, m: f64, d: f64, b: f64) -> Option<Alternative> {
    if i.allow_postcopy {
        return Some(postcopy_alt(i, m, d, b, Vec::new()));
    }
    if i.allow_auto_converge
        && let Some(alt) = auto_converge_alt(i, m, d, b, Vec::new())
    {
        return Some(alt);
    }
    if i.allow_pause {
        return Some(pause_alt(m, d, b, Vec::new()));
    }
    None
}

fn postcopy_alt(i: &Inputs, m: f64, d: f64, b: f64, flags: Vec<String>) -> Alternative {
    let (secs, rest) = postcopy(m, d, b);
    let sooner = if i.bandwidth_source == BandwidthSource::Cap {
        " (post-copy runs uncapped: likely sooner)"
    } else {
        ""
    };
    Alternative {
        flags,
        converges: true,
        completes_by: Ending::PostCopy,
        predicted_seconds: round1(secs),
        downtime_ms: 0,
        note: format!(
            "switches after pass 1 with up to {} left to move on demand{sooner}; from the switch an abort or a network failure loses the guest",
            mib(rest)
        ),
    }
}

fn auto_converge_alt(
    i: &Inputs,
    m: f64,
    d: f64,
    b: f64,
    flags: Vec<String>,
) -> Option<Alternative> {
    let run = auto_converge(m, d, b, i.max_downtime_ms, i.budget_secs)?;
    Some(Alternative {
        flags,
        converges: true,
        completes_by: Ending::AutoConverge,
        predicted_seconds: round1(run.secs),
        downtime_ms: (run.downtime_secs * 1000.0).round() as u64,
        note: format!(
            "~{} passes with the guest's CPUs throttled up to 99%; only a CPU-bound dirtier slows in proportion",
            run.passes
        ),
    })
}

fn pause_alt(m: f64, d: f64, b: f64, flags: Vec<String>) -> Alternative {
    let (secs, rest) = postcopy(m, d, b);
    Alternative {
        flags,
        converges: true,
        completes_by: Ending::Pause,
        predicted_seconds: round1(secs),
        downtime_ms: (rest / b * 1000.0).round() as u64,
        note: format!(
            "the guest is paused while {} is sent: a long downtime",
            mib(rest)
        ),
    }
}

/// The least bandwidth (MiB/s, from `from`) at which pre-copy converges within the budget.
fn least_bandwidth_mib(i: &Inputs, m: f64, d: f64, from: u64) -> Option<u64> {
    let ok = |mib: u64| precopy_with_ceiling(i, m, d, mib as f64 * MIB).is_ok();
    let mut hi = from.max(1);
    while !ok(hi) {
        if hi >= MAX_BANDWIDTH_MIB {
            return None;
        }
        hi = hi.saturating_mul(2).min(MAX_BANDWIDTH_MIB);
    }
    let lo = from.max(1);
    if ok(lo) {
        return Some(lo);
    }
    Some(least_passing(lo, hi, ok))
}

/// The least value in `(lo, hi]` that passes `ok`, for an `ok` that fails at `lo`, passes
/// at `hi` and stays passing above (bisection).
fn least_passing(mut lo: u64, mut hi: u64, ok: impl Fn(u64) -> bool) -> u64 {
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The least max downtime (ms, rounded up to 10 ms) above the ceiling that converges.
fn least_downtime_ms(i: &Inputs, m: f64, d: f64, b: f64) -> Option<u64> {
    let ok = |ms: u64| precopy(m, d, b, ms, i.budget_secs).is_ok();
    if !ok(MAX_DOWNTIME_LIMIT_MS) {
        return None;
    }
    let hi = least_passing(i.max_downtime_ms, MAX_DOWNTIME_LIMIT_MS, ok);
    Some(hi.div_ceil(10) * 10)
}

/// The highest dirty rate (bytes/s) at which pre-copy converges at `b`.
fn most_dirty_rate(i: &Inputs, m: f64, b: f64) -> Option<u64> {
    let ok = |d: f64| precopy_with_ceiling(i, m, d, b).is_ok();
    if !ok(0.0) {
        return None;
    }
    let (mut lo, mut hi) = (0.0_f64, b);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo as u64)
}

/// What would make a migration that pre-copy cannot finish complete, each with its time.
fn alternatives(i: &Inputs, m: f64, d: f64, b: f64) -> Vec<Alternative> {
    let (postcopy_flag, auto_flag, pause_flag, bandwidth_flag, downtime_flag) = match i.flavour {
        Flavour::Libvirt => (
            "--allow-postcopy",
            "--allow-auto-converge",
            "--allow-pause",
            "--bandwidth",
            "--max-downtime",
        ),
        Flavour::KubeVirt => (
            "allowPostCopy: true",
            "allowAutoConverge: true",
            "allowWorkloadDisruption: true",
            "bandwidthPerMigration",
            "maxDowntimeMs",
        ),
    };
    let mut out = Vec::new();
    if !i.allow_postcopy {
        out.push(postcopy_alt(i, m, d, b, vec![postcopy_flag.to_string()]));
    }
    if !i.allow_auto_converge
        && let Some(alt) = auto_converge_alt(i, m, d, b, vec![auto_flag.to_string()])
    {
        out.push(alt);
    }
    if i.bandwidth_source != BandwidthSource::Measured {
        let from = (b / MIB).floor() as u64 + 1;
        if let Some(need) = least_bandwidth_mib(i, m, d, from)
            && let Ok(run) = precopy_with_ceiling(i, m, d, need as f64 * MIB)
        {
            out.push(Alternative {
                flags: vec![bandwidth_flag.to_string(), need.to_string()],
                converges: true,
                completes_by: Ending::PreCopy,
                predicted_seconds: round1(run.secs),
                downtime_ms: (run.downtime_secs * 1000.0).round() as u64,
                note: format!(
                    "pre-copy at {need} MiB/s, if the network carries it ({} passes)",
                    run.passes
                ),
            });
        }
    }
    if let Some(ms) = least_downtime_ms(i, m, d, b)
        && let Ok(run) = precopy(m, d, b, ms, i.budget_secs)
    {
        let flag = match i.flavour {
            Flavour::Libvirt => vec![downtime_flag.to_string(), ms.to_string()],
            Flavour::KubeVirt => vec![downtime_flag.to_string(), ms.to_string()],
        };
        out.push(Alternative {
            flags: flag,
            converges: true,
            completes_by: Ending::PreCopy,
            predicted_seconds: round1(run.secs),
            downtime_ms: (run.downtime_secs * 1000.0).round() as u64,
            note: format!(
                "the guest stops for up to {} ms at the switchover",
                ms.max((run.downtime_secs * 1000.0).round() as u64)
            ),
        });
    }
    if !i.allow_pause && i.flavour == Flavour::Libvirt {
        out.push(pause_alt(m, d, b, vec![pause_flag.to_string()]));
    }
    if i.flavour == Flavour::KubeVirt && !i.allow_pause {
        // allowWorkloadDisruption lets KubeVirt pause the guest once the budget is spent.
        let mut alt = pause_alt(m, d, b, vec![pause_flag.to_string()]);
        if i.budget_secs > 0 {
            alt.predicted_seconds = round1(i.budget_secs as f64 + alt.downtime_ms as f64 / 1000.0);
            alt.note = format!(
                "KubeVirt pauses the guest once the {} s budget is spent; {}",
                i.budget_secs, alt.note
            );
        }
        out.push(alt);
    }
    out
}

/// One alternative in words: `--allow-postcopy: completes by post-copy in ~16 s, downtime
/// ~0 ms (...)`.
pub fn alternative_text(a: &Alternative) -> String {
    format!(
        "{}: completes by {} in ~{:.0} s, downtime ~{} ms ({})",
        a.flags.join(" "),
        a.completes_by.as_str(),
        a.predicted_seconds,
        a.downtime_ms,
        a.note
    )
}

/// Starting would certainly fail: nothing the flags allow completes it, even if the guest
/// dirtied a quarter less than measured (page sampling is noisy). Only with a measured dirty
/// rate and a known bandwidth. `vmctl migrate --connect` refuses to start then.
pub fn certain_failure(i: &Inputs) -> bool {
    let Some(d) = i.dirty_rate_bps else {
        return false;
    };
    if predict(i).completes != Some(false) {
        return false;
    }
    let lower = Inputs {
        dirty_rate_bps: Some(d / 4 * 3),
        ..i.clone()
    };
    predict(&lower).completes == Some(false)
}

/// Remaining seconds of a pre-copy in progress, counting what dirtying adds: the rest of
/// this pass, plus the shrinking passes of what the guest dirties meanwhile (`pass_elapsed`
/// is how long this pass has run). `None` when the dirty set cannot shrink.
pub fn precopy_eta_secs(
    remaining: u64,
    memory: u64,
    pass_elapsed_secs: f64,
    dirty_bps: u64,
    bandwidth_bps: u64,
) -> Option<f64> {
    if bandwidth_bps == 0 {
        return None;
    }
    let (r, b, d) = (remaining as f64, bandwidth_bps as f64, dirty_bps as f64);
    let this_pass = r / b;
    if d <= 0.0 {
        return Some(this_pass);
    }
    if d >= b {
        return None;
    }
    let next = (d * (pass_elapsed_secs + this_pass)).min(memory.max(remaining) as f64);
    Some(this_pass + next / (b - d))
}

#[cfg(test)]
mod tests;
