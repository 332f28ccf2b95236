//! Step **convergence** (only with `plan-drain --metrics|--prometheus`): will each live
//! migration converge under its effective migration configuration, given the guest dirty
//! rate virt-handler exports (`kubevirt_vmi_dirty_rate_bytes_per_second`, read by the
//! command)? The predictor ([`crate::migration::predict`]) in KubeVirt's terms: its inputs
//! from the policy, KubeVirt's timing, the estimate the waves use, the finding and the
//! alternatives in MigrationPolicy words. Pure.
//!
//! KubeVirt's timing differs from the predictor's controller (FACTS §5.3): KubeVirt's
//! migration monitor switches to post-copy, or pauses the guest, only once the completion
//! budget is spent (`allowWorkloadDisruption` and elapsed > acceptableCompletionTime), and
//! aborts a migration that did not complete by then when neither is allowed; it never
//! switches to post-copy early because pre-copy converges slowly. So a migration that ends in
//! post-copy or a pause takes the budget plus the rest, and one that does not complete holds
//! its parallel slot for the budget, then fails (and the evacuation retries it).

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use super::SETUP_SECONDS;
use crate::migration::controller::initial_downtime_ms;
use crate::migration::kubevirt_metrics::GUEST_DIRTY_RATE;
use crate::migration::predict::{
    self, Alternative, BandwidthSource, Ending, Flavour, Inputs, Prediction,
};
use crate::migration::sample::DirtyRateSource;
use crate::model::kubevirt::EffectiveMigrationConfig;
use crate::policy::budget::budget_for_bytes;
use crate::text;

/// The end of a migration that holds its slot for good (no completion budget ends it).
pub const FOREVER: u64 = u64::MAX / 4;

/// What the plan says of the dirty-rate figure.
pub const CAVEAT: &str = "the guest dirty rate is a hint: virt-handler measures it for one second per scrape, KubeVirt's figure has been reported inaccurate in some releases, and a guest's load changes; a prediction that a migration converges is weaker than one that it does not";

/// The guest dirty rates the command read for the drained nodes' VMIs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DirtyRates {
    /// Where they come from, in words (virt-handler's page through the pod proxy, or a
    /// Prometheus).
    pub source: String,
    /// Bytes/s by (namespace, VMI name).
    pub rates: HashMap<(String, String), u64>,
    /// Nodes whose rates were read: a VMI there without a rate had no sample.
    pub nodes_read: BTreeSet<String>,
    /// What could not be read, one line per cause.
    pub notes: Vec<String>,
}

impl DirtyRates {
    pub fn of(&self, namespace: &str, name: &str) -> Option<u64> {
        self.rates
            .get(&(namespace.to_string(), name.to_string()))
            .copied()
    }
}

/// Where the bandwidth of a prediction comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BandwidthFrom {
    /// The matching MigrationPolicy's `bandwidthPerMigration`.
    Policy,
    /// The KubeVirt CR's `bandwidthPerMigration`.
    Cluster,
    /// No cap: `--bandwidth`, the plan's assumption.
    Flag,
    /// No cap: the plan's default assumption ([`super::DEFAULT_BANDWIDTH`]).
    Default,
}

impl BandwidthFrom {
    fn is_cap(self) -> bool {
        matches!(self, BandwidthFrom::Policy | BandwidthFrom::Cluster)
    }
}

/// One VMI's migration as the prediction needs it.
#[derive(Debug, Clone, Copy)]
pub struct Setting<'a> {
    /// Guest memory, bytes.
    pub memory: u64,
    /// Bytes/s; None when no rate was read for it.
    pub dirty: Option<u64>,
    /// The effective configuration (cluster and matching policy).
    pub config: &'a EffectiveMigrationConfig,
    /// The matching MigrationPolicy's name.
    pub policy: Option<&'a str>,
    /// That policy sets `bandwidthPerMigration` itself.
    pub policy_sets_bandwidth: bool,
    /// `--bandwidth`, bytes/s.
    pub assumed_bandwidth: Option<u64>,
}

impl Setting<'_> {
    /// `MigrationPolicy NAME` or `the cluster's migration configuration`.
    pub fn under(&self) -> String {
        match self.policy {
            Some(p) => format!("MigrationPolicy {p}"),
            None => "the cluster's migration configuration".to_string(),
        }
    }

    /// The bandwidth (bytes/s) and where it comes from.
    pub fn bandwidth(&self) -> (u64, BandwidthFrom) {
        let cap = self.config.bandwidth_per_migration;
        if cap > 0 {
            let from = if self.policy_sets_bandwidth {
                BandwidthFrom::Policy
            } else {
                BandwidthFrom::Cluster
            };
            return (cap, from);
        }
        match self.assumed_bandwidth {
            Some(b) => (b.max(1), BandwidthFrom::Flag),
            None => (super::DEFAULT_BANDWIDTH, BandwidthFrom::Default),
        }
    }

    /// KubeVirt's completion budget for this guest (not doubled: the switch, or the abort,
    /// happens when it is spent).
    pub fn budget(&self) -> u64 {
        budget_for_bytes(self.config.completion_timeout_per_gib, self.memory)
    }
}

/// The predictor's inputs for a KubeVirt migration: `bandwidthPerMigration` as a cap when
/// set (else the plan's assumption, not a cap), the completion budget, KubeVirt's max
/// downtime (the initial one as the stall detector sets it), post-copy only with workload
/// disruption allowed (KubeVirt needs both), pausing when workload disruption is allowed.
pub fn inputs(s: &Setting) -> Inputs {
    let (bandwidth, from) = s.bandwidth();
    let c = s.config;
    Inputs {
        memory_bytes: s.memory,
        dirty_rate_bps: s.dirty,
        dirty_rate_source: DirtyRateSource::KubevirtMetrics,
        dirty_rate_is_lower_bound: true,
        bandwidth_bps: Some(bandwidth),
        bandwidth_source: if from.is_cap() {
            BandwidthSource::Cap
        } else {
            BandwidthSource::Unknown
        },
        initial_downtime_ms: initial_downtime_ms(c.max_downtime_ms),
        max_downtime_ms: c.max_downtime_ms,
        budget_secs: s.budget(),
        allow_postcopy: c.allow_post_copy && c.allow_workload_disruption,
        allow_auto_converge: c.allow_auto_converge,
        allow_pause: c.allow_workload_disruption,
        flavour: Flavour::KubeVirt,
    }
}

/// What the plan makes of a prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Convergence {
    /// The configuration it was judged under: `MigrationPolicy NAME` or the cluster's.
    pub under: String,
    pub bandwidth_from: BandwidthFrom,
    /// Pre-copy alone converges within the completion budget; None without a dirty rate.
    pub converges: Option<bool>,
    /// The migration completes under that configuration (by post-copy, auto-converge or a
    /// pause where it allows them); None without a dirty rate.
    pub completes: Option<bool>,
    pub completes_by: Option<Ending>,
    /// Setup plus the predicted time with KubeVirt's timing: the row's estimate. None when
    /// it does not complete, or without a dirty rate (the estimate is then memory over
    /// bandwidth).
    pub eta_seconds: Option<u64>,
    /// It does not complete: KubeVirt aborts it once this completion budget is spent (None:
    /// no budget ends it).
    pub aborted_after_seconds: Option<u64>,
    /// One sentence, in the policy's words.
    pub finding: String,
    /// What would make it complete, in MigrationPolicy words, each with its prediction.
    pub alternatives: Vec<String>,
}

impl Convergence {
    /// How long the migration holds its parallel slot: the predicted time, the budget of one
    /// that KubeVirt aborts, for ever without a budget; `fallback` (memory over bandwidth)
    /// without a dirty rate.
    pub fn slot_seconds(&self, fallback: Option<u64>) -> Option<u64> {
        match self.completes {
            Some(true) => self.eta_seconds.or(fallback),
            Some(false) => Some(
                self.aborted_after_seconds
                    .map_or(FOREVER, |b| SETUP_SECONDS + b),
            ),
            None => fallback,
        }
    }

    /// The short form for a table cell: `yes ~2m10s`, `post-copy ~9m`, `NO`, `?`.
    pub fn cell(&self) -> String {
        let eta = |s: Option<u64>| {
            s.map(|s| format!(" ~{}", text::duration(s as i64)))
                .unwrap_or_default()
        };
        match (self.completes, self.completes_by) {
            (None, _) => "? (no rate)".into(),
            (Some(false), _) => "NO".into(),
            (Some(true), Some(Ending::PreCopy) | None) => format!("yes{}", eta(self.eta_seconds)),
            (Some(true), Some(e)) => format!("{}{}", e.as_str(), eta(self.eta_seconds)),
        }
    }
}

/// Seconds as the plan counts them: setup plus the predicted time, rounded up.
fn eta(secs: f64) -> u64 {
    SETUP_SECONDS + secs.max(0.0).ceil() as u64
}

/// The time KubeVirt takes to complete by `ending` once pre-copy failed to converge: the
/// budget, then the rest (what the predictor's post-copy or pause moves after pass 1).
/// Auto-converge runs from the start, as the predictor has it.
fn kubevirt_secs(ending: Ending, predicted: f64, downtime_ms: u64, t1: f64, budget: u64) -> f64 {
    match ending {
        Ending::PostCopy if budget > 0 => budget as f64 + (predicted - t1).max(0.0),
        Ending::Pause if budget > 0 => budget as f64 + downtime_ms as f64 / 1000.0,
        _ => predicted,
    }
}

/// The prediction for one VMI and what the plan makes of it.
pub fn judge(s: &Setting) -> (Prediction, Convergence) {
    let i = inputs(s);
    let mut p = predict::predict(&i);
    // KubeVirt has no early post-copy for a pre-copy that converges slowly: it runs to its end.
    if p.converges == Some(true) && p.completes_by == Some(Ending::PostCopy) {
        p = predict::predict(&Inputs {
            allow_postcopy: false,
            ..i.clone()
        });
    }
    let (bandwidth, from) = s.bandwidth();
    let t1 = s.memory as f64 / bandwidth.max(1) as f64;
    let budget = s.budget();
    let under = s.under();
    let mut c = Convergence {
        under: under.clone(),
        bandwidth_from: from,
        converges: p.converges,
        completes: p.completes,
        completes_by: p.completes_by,
        eta_seconds: None,
        aborted_after_seconds: None,
        finding: String::new(),
        alternatives: p
            .alternatives
            .iter()
            .map(|a| alternative_words(a, s, t1, budget))
            .collect(),
    };
    let bandwidth_words = bandwidth_words(s);
    match (p.converges, p.completes, p.completes_by) {
        (None, ..) | (_, None, _) => {
            c.completes = None;
            c.finding = format!(
                "no dirty rate for this VMI, so its estimate stays memory over bandwidth: {}",
                p.summary
            );
        }
        (Some(true), ..) => {
            c.eta_seconds = p.predicted_seconds.map(eta);
            c.finding = format!("converges under {under} ({bandwidth_words}): {}", p.summary);
        }
        (Some(false), Some(true), Some(ending)) => {
            let why = p
                .summary
                .strip_prefix("pre-copy will not converge: ")
                .and_then(|r| r.split_once("; completes by "))
                .map(|(why, _)| why.to_string())
                .unwrap_or_else(|| p.summary.clone());
            if budget == 0 && matches!(ending, Ending::PostCopy | Ending::Pause) {
                // No completion budget: the monitor never reaches the switch.
                c.completes = Some(false);
                c.completes_by = None;
                c.finding = format!(
                    "will not converge under {under} ({bandwidth_words}): {why}; completionTimeoutPerGiB is 0, so KubeVirt never switches to {} and the migration runs until the progress timeout aborts it, or for ever{}",
                    ending.as_str(),
                    consider(&c.alternatives)
                );
            } else {
                let secs = kubevirt_secs(
                    ending,
                    p.predicted_seconds.unwrap_or(0.0),
                    p.downtime_ms.unwrap_or(0),
                    t1,
                    budget,
                );
                c.eta_seconds = Some(eta(secs));
                let how = match ending {
                    Ending::PostCopy => format!(
                        "KubeVirt switches to post-copy once the {} completion budget is spent (the point of no return: an abort or a network failure then loses the guest)",
                        text::duration(budget as i64)
                    ),
                    Ending::Pause => format!(
                        "KubeVirt pauses the guest once the {} completion budget is spent (downtime ~{})",
                        text::duration(budget as i64),
                        text::duration((p.downtime_ms.unwrap_or(0) / 1000) as i64)
                    ),
                    Ending::AutoConverge => {
                        "auto-converge throttles the guest's CPUs until it converges".to_string()
                    }
                    Ending::PreCopy => "it converges".to_string(),
                };
                c.finding = format!(
                    "pre-copy will not converge under {under} ({bandwidth_words}): {why}; {how}; completes in ~{}",
                    text::duration(secs.ceil() as i64)
                );
            }
        }
        (Some(false), ..) => {
            c.completes = Some(false);
            c.completes_by = None;
            c.aborted_after_seconds = (budget > 0).then_some(budget);
            let why = p
                .summary
                .strip_prefix("will not converge: ")
                .unwrap_or(&p.summary)
                .to_string();
            let end = if budget > 0 {
                format!(
                    "KubeVirt aborts it once the {} completion budget is spent",
                    text::duration(budget as i64)
                )
            } else {
                "with completionTimeoutPerGiB 0 it runs until the progress timeout aborts it, or for ever".to_string()
            };
            c.finding = format!(
                "will not converge under {under} ({bandwidth_words}): {why}; {end}{}",
                consider(&c.alternatives)
            );
        }
    }
    (p, c)
}

fn consider(alternatives: &[String]) -> String {
    if alternatives.is_empty() {
        String::new()
    } else {
        format!("; consider {}", alternatives.join("; or "))
    }
}

fn bandwidth_words(s: &Setting) -> String {
    let (b, from) = s.bandwidth();
    let rate = format!("{}/s", text::bytes(b));
    match from {
        BandwidthFrom::Policy => format!(
            "bandwidthPerMigration {rate} of MigrationPolicy {}",
            s.policy.unwrap_or("?")
        ),
        BandwidthFrom::Cluster => format!("bandwidthPerMigration {rate} of the KubeVirt CR"),
        BandwidthFrom::Flag => format!("no bandwidthPerMigration: {rate} assumed (--bandwidth)"),
        BandwidthFrom::Default => {
            format!("no bandwidthPerMigration: {rate} assumed (vmctl's default assumption)")
        }
    }
}

/// An alternative in MigrationPolicy words, with KubeVirt's timing:
/// `allowPostCopy: true (completes by post-copy in ~9m20s: …)`.
fn alternative_words(a: &Alternative, s: &Setting, t1: f64, budget: u64) -> String {
    let words = match a.flags.as_slice() {
        [flag, mib] if flag == "bandwidthPerMigration" => {
            if s.bandwidth().1.is_cap() {
                format!("bandwidthPerMigration: {mib}Mi")
            } else {
                format!(
                    "a migration network that carries {mib} MiB/s per migration (no bandwidthPerMigration cap is set)"
                )
            }
        }
        [flag, ms] if flag == "maxDowntimeMs" => format!("maxDowntimeMs: {ms} (KubeVirt v1.9+)"),
        other => other.join(" "),
    };
    let secs = kubevirt_secs(
        a.completes_by,
        a.predicted_seconds,
        a.downtime_ms,
        t1,
        budget,
    );
    let note = if a.completes_by == Ending::PostCopy {
        "from the switch an abort or a network failure loses the guest".to_string()
    } else if a.completes_by == Ending::Pause {
        format!(
            "the guest is paused for ~{}",
            text::duration((a.downtime_ms / 1000) as i64)
        )
    } else {
        a.note.clone()
    };
    format!(
        "{words} (completes by {} in ~{}: {note})",
        a.completes_by.as_str(),
        text::duration(secs.ceil() as i64)
    )
}

/// The plan's summary of the predictions.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConvergenceReport {
    /// Where the dirty rates come from.
    pub source: String,
    pub metric: &'static str,
    pub caveat: &'static str,
    /// Live migrations the plan starts, each with a prediction.
    pub predicted: u32,
    /// Of those, how many had a dirty rate.
    pub with_dirty_rate: u32,
    /// `namespace/name` of the VMs predicted not to complete under their configuration.
    pub will_not_complete: Vec<String>,
    /// `namespace/name` of those that complete only by post-copy, auto-converge or a pause.
    pub by_switching: Vec<String>,
    /// What could not be read, one line per cause.
    pub notes: Vec<String>,
}

/// The summary over the rows (`(id, node, convergence)` of each predicted live migration),
/// with one note for the VMIs that had no sample on a page that was read.
pub fn report<'a>(
    rates: &DirtyRates,
    rows: impl IntoIterator<Item = (String, &'a str, &'a Convergence)>,
) -> ConvergenceReport {
    let mut r = ConvergenceReport {
        source: rates.source.clone(),
        metric: GUEST_DIRTY_RATE,
        caveat: CAVEAT,
        predicted: 0,
        with_dirty_rate: 0,
        will_not_complete: Vec::new(),
        by_switching: Vec::new(),
        notes: rates.notes.clone(),
    };
    let mut no_sample = Vec::new();
    for (id, node, c) in rows {
        r.predicted += 1;
        match c.completes {
            None => {
                if rates.nodes_read.contains(node) {
                    no_sample.push(id);
                }
                continue;
            }
            Some(false) => r.will_not_complete.push(id),
            Some(true) if c.converges == Some(false) => r.by_switching.push(id),
            Some(true) => {}
        }
        r.with_dirty_rate += 1;
    }
    if !no_sample.is_empty() {
        r.notes.push(format!(
            "no {GUEST_DIRTY_RATE} sample for {} (KubeVirt measures Running VMIs that are not migrating, and skips one when libvirt's calculation fails): estimated from memory over bandwidth",
            no_sample.join(", ")
        ));
    }
    r
}

/// After the waves: a migration that holds its slot for ever has no end (and those waiting
/// behind it no start).
pub fn no_end_for_ever(plans: &mut [super::VmiPlan]) {
    for p in plans {
        if p.end_seconds.is_some_and(|e| e >= FOREVER) {
            p.end_seconds = None;
        }
        if p.start_seconds.is_some_and(|s| s >= FOREVER) {
            p.start_seconds = None;
            p.end_seconds = None;
            p.wave = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kubevirt::MigrationConfig;

    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;

    fn config(f: impl FnOnce(&mut MigrationConfig)) -> EffectiveMigrationConfig {
        let mut c = MigrationConfig::default();
        f(&mut c);
        c.effective(Some("v1.8.4"))
    }

    fn setting<'a>(config: &'a EffectiveMigrationConfig, dirty: Option<u64>) -> Setting<'a> {
        Setting {
            memory: 2 * GIB,
            dirty,
            config,
            policy: None,
            policy_sets_bandwidth: false,
            assumed_bandwidth: None,
        }
    }

    fn capped(mib: u64) -> EffectiveMigrationConfig {
        config(|c| c.bandwidth_per_migration = Some(crate::model::Quantity::from_bytes(mib * MIB)))
    }

    #[test]
    fn the_inputs_follow_the_effective_configuration() {
        let c = capped(64);
        let i = inputs(&setting(&c, Some(MIB)));
        assert_eq!(i.bandwidth_bps, Some(64 * MIB));
        assert_eq!(i.bandwidth_source, BandwidthSource::Cap);
        assert_eq!(i.budget_secs, 450, "2Gi at 150 s per GB, rounded up");
        assert_eq!((i.initial_downtime_ms, i.max_downtime_ms), (300, 900));
        assert_eq!(i.flavour, Flavour::KubeVirt);
        assert_eq!(i.dirty_rate_source, DirtyRateSource::KubevirtMetrics);
        assert!(i.dirty_rate_is_lower_bound);
        assert!(!i.allow_postcopy && !i.allow_pause && !i.allow_auto_converge);

        // No cap: the plan's assumption, not a cap.
        let open = config(|_| {});
        let mut s = setting(&open, None);
        assert_eq!(
            s.bandwidth(),
            (super::super::DEFAULT_BANDWIDTH, BandwidthFrom::Default)
        );
        s.assumed_bandwidth = Some(100 * MIB);
        assert_eq!(s.bandwidth(), (100 * MIB, BandwidthFrom::Flag));
        assert_eq!(inputs(&s).bandwidth_source, BandwidthSource::Unknown);

        // allowPostCopy brings allowWorkloadDisruption along, unless it is set false.
        let pc = config(|c| c.allow_post_copy = Some(true));
        let i = inputs(&setting(&pc, None));
        assert!(i.allow_postcopy && i.allow_pause);
        let pc_no = config(|c| {
            c.allow_post_copy = Some(true);
            c.allow_workload_disruption = Some(false);
        });
        assert!(!inputs(&setting(&pc_no, None)).allow_postcopy);
        let budget = config(|c| c.completion_timeout_per_gib = Some(10));
        assert_eq!(inputs(&setting(&budget, None)).budget_secs, 30);
    }

    #[test]
    fn an_idle_guest_converges_and_its_eta_is_the_predicted_time() {
        let c = capped(64);
        let (p, v) = judge(&setting(&c, Some(0)));
        assert_eq!(p.converges, Some(true));
        assert_eq!(v.completes, Some(true));
        assert_eq!(v.completes_by, Some(Ending::PreCopy));
        // 2 GiB at 64 MiB/s: 32 s, plus setup.
        assert_eq!(v.eta_seconds, Some(SETUP_SECONDS + 32));
        assert_eq!(v.slot_seconds(Some(1)), Some(SETUP_SECONDS + 32));
        assert!(v.alternatives.is_empty());
        assert!(
            v.finding
                .starts_with("converges under the cluster's migration configuration (bandwidthPerMigration 64.0 MiB/s of the KubeVirt CR): converges in ~2 passes, ~32 s"),
            "{}",
            v.finding
        );
        assert_eq!(v.cell(), "yes ~47s");
    }

    #[test]
    fn a_guest_dirtying_faster_than_the_cap_does_not_complete_and_holds_its_slot_for_the_budget() {
        let c = capped(64);
        let (p, v) = judge(&setting(&c, Some(128 * MIB)));
        assert_eq!(p.converges, Some(false));
        assert_eq!(v.completes, Some(false));
        assert_eq!(v.eta_seconds, None);
        assert_eq!(v.aborted_after_seconds, Some(450));
        assert_eq!(
            v.slot_seconds(Some(47)),
            Some(SETUP_SECONDS + 450),
            "not a fast one"
        );
        assert_eq!(v.cell(), "NO");
        assert!(
            v.finding.starts_with("will not converge under the cluster's migration configuration (bandwidthPerMigration 64.0 MiB/s of the KubeVirt CR): the guest dirties 200% of what is sent"),
            "{}",
            v.finding
        );
        assert!(
            v.finding
                .contains("KubeVirt aborts it once the 7m30s completion budget is spent"),
            "{}",
            v.finding
        );
        // The alternatives, in MigrationPolicy words, with KubeVirt's timing.
        let post = v
            .alternatives
            .iter()
            .find(|a| a.starts_with("allowPostCopy: true (completes by post-copy in ~"))
            .unwrap_or_else(|| panic!("{:?}", v.alternatives));
        // The budget, then the rest: 450 s + 2 GiB at 64 MiB/s = 482 s.
        assert!(post.contains("in ~8m02s"), "{post}");
        assert!(
            v.alternatives
                .iter()
                .any(|a| a.starts_with("allowWorkloadDisruption: true (completes by pause in ~")),
            "{:?}",
            v.alternatives
        );
        assert!(
            v.alternatives
                .iter()
                .any(|a| a.starts_with("bandwidthPerMigration: ")
                    && a.contains("Mi (completes by pre-copy")),
            "{:?}",
            v.alternatives
        );
        assert!(
            v.finding.contains("; consider allowPostCopy: true"),
            "{}",
            v.finding
        );
    }

    #[test]
    fn post_copy_allowed_by_a_policy_completes_after_the_budget() {
        let c = config(|c| {
            c.bandwidth_per_migration = Some(crate::model::Quantity::from_bytes(64 * MIB));
            c.allow_post_copy = Some(true);
        });
        let mut s = setting(&c, Some(128 * MIB));
        s.policy = Some("allow-pc");
        let (p, v) = judge(&s);
        assert_eq!(p.converges, Some(false));
        assert_eq!(v.completes, Some(true));
        assert_eq!(v.completes_by, Some(Ending::PostCopy));
        // 450 s budget + the rest (2 GiB: the dirty set is capped at the memory) at 64 MiB/s.
        assert_eq!(v.eta_seconds, Some(SETUP_SECONDS + 482));
        assert_eq!(v.slot_seconds(None), Some(SETUP_SECONDS + 482));
        assert!(
            v.finding.starts_with("pre-copy will not converge under MigrationPolicy allow-pc (bandwidthPerMigration 64.0 MiB/s of the KubeVirt CR): the guest dirties 200% of what is sent"),
            "{}",
            v.finding
        );
        assert!(
            v.finding.contains(
                "KubeVirt switches to post-copy once the 7m30s completion budget is spent"
            ),
            "{}",
            v.finding
        );
        assert_eq!(v.cell(), "post-copy ~8m17s");
    }

    #[test]
    fn without_a_budget_nothing_ends_it() {
        let c = config(|c| {
            c.bandwidth_per_migration = Some(crate::model::Quantity::from_bytes(64 * MIB));
            c.completion_timeout_per_gib = Some(0);
            c.allow_post_copy = Some(true);
        });
        let (_, v) = judge(&setting(&c, Some(128 * MIB)));
        assert_eq!(v.completes, Some(false));
        assert_eq!(v.aborted_after_seconds, None);
        assert_eq!(v.slot_seconds(None), Some(FOREVER));
        assert!(
            v.finding.contains("never switches to post-copy"),
            "{}",
            v.finding
        );
    }

    #[test]
    fn a_slow_converging_guest_is_not_switched_early() {
        // The libvirt controller would switch to post-copy; KubeVirt lets pre-copy finish.
        let c = config(|c| {
            c.bandwidth_per_migration = Some(crate::model::Quantity::from_bytes(64 * MIB));
            c.allow_post_copy = Some(true);
        });
        let (p, v) = judge(&setting(&c, Some(50 * MIB)));
        assert_eq!(p.converges, Some(true));
        assert_eq!(p.completes_by, Some(Ending::PreCopy));
        assert_eq!(v.completes_by, Some(Ending::PreCopy));
        assert!(v.eta_seconds.unwrap() > SETUP_SECONDS + 32);
    }

    #[test]
    fn without_a_rate_the_estimate_stays() {
        let c = capped(64);
        let (p, v) = judge(&setting(&c, None));
        assert_eq!(p.converges, None);
        assert_eq!(v.completes, None);
        assert_eq!(v.slot_seconds(Some(47)), Some(47));
        assert_eq!(v.cell(), "? (no rate)");
        assert!(
            v.finding.starts_with("no dirty rate for this VMI"),
            "{}",
            v.finding
        );
    }

    #[test]
    fn an_uncapped_bandwidth_alternative_is_the_network_not_a_field() {
        let c = config(|_| {});
        let mut s = setting(&c, Some(400 * MIB));
        s.assumed_bandwidth = Some(256 * MIB);
        let (_, v) = judge(&s);
        assert_eq!(v.completes, Some(false));
        assert!(
            v.finding
                .contains("no bandwidthPerMigration: 256.0 MiB/s assumed (--bandwidth)"),
            "{}",
            v.finding
        );
        assert!(
            !v.alternatives
                .iter()
                .any(|a| a.starts_with("bandwidthPerMigration")),
            "{:?}",
            v.alternatives
        );
    }

    #[test]
    fn the_report_counts_and_names_what_had_no_sample() {
        let c = capped(64);
        let (_, fast) = judge(&setting(&c, Some(0)));
        let (_, stuck) = judge(&setting(&c, Some(128 * MIB)));
        let (_, none) = judge(&setting(&c, None));
        let rates = DirtyRates {
            source: "virt-handler".into(),
            nodes_read: ["node-1".to_string()].into(),
            notes: vec!["a cause".into()],
            ..DirtyRates::default()
        };
        let r = report(
            &rates,
            [
                ("prod/a".to_string(), "node-1", &fast),
                ("prod/b".to_string(), "node-1", &stuck),
                ("prod/c".to_string(), "node-1", &none),
                ("prod/d".to_string(), "node-2", &none),
            ],
        );
        assert_eq!((r.predicted, r.with_dirty_rate), (4, 2));
        assert_eq!(r.will_not_complete, ["prod/b"]);
        assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
        assert!(r.notes[1].contains("sample for prod/c "), "{:?}", r.notes);
        assert!(
            !r.notes[1].contains("prod/d"),
            "node-2 was not read: its cause is said once"
        );
    }
}
