//! The one sample shape both drivers report, and the end-of-migration summary.
//!
//! A driver (libvirt job stats, KubeVirt migration metrics) turns whatever it reads into a
//! `JobSample`; the controller decides from samples alone and the progress renderer draws
//! samples alone. Construct samples with `..Default::default()`: fields are only ever added.

use serde::{Deserialize, Serialize};

/// What the migration is doing at the moment of the sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Memory is copied while the guest runs on the source.
    #[default]
    PreCopy,
    /// The guest runs on the destination; the rest of its memory follows on demand.
    /// An abort or a network failure now loses the guest.
    PostCopy,
    /// The guest is paused (by the migration monitor): the copy finishes as stop-and-copy.
    Paused,
}

impl Mode {
    /// `pre-copy`, `post-copy`, `paused`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::PreCopy => "pre-copy",
            Mode::PostCopy => "post-copy",
            Mode::Paused => "paused",
        }
    }
}

/// Where a sample's dirty rate comes from. libvirt reports one only from pass 2 on (QEMU
/// counts what a pass dirtied at its end), so in pass 1 the figure is vmctl's own measurement
/// before the start, or unknown: never a silent 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirtyRateSource {
    /// libvirt's job statistics (pass 2 on).
    Libvirt,
    /// QEMU's dirty-rate calculation (`virDomainStartDirtyRateCalc`), run before the start.
    MeasuredBeforeStart,
    /// virt-handler's migration metrics (KubeVirt; libvirt's figure as virt-handler read it).
    KubevirtMetrics,
    /// Nothing measured it (yet): the rate is unknown, not zero.
    #[default]
    Unknown,
}

impl DirtyRateSource {
    /// `libvirt`, `measured-before-start`, `kubevirt-metrics`, `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            DirtyRateSource::Libvirt => "libvirt",
            DirtyRateSource::MeasuredBeforeStart => "measured-before-start",
            DirtyRateSource::KubevirtMetrics => "kubevirt-metrics",
            DirtyRateSource::Unknown => "unknown",
        }
    }

    pub fn is_known(self) -> bool {
        self != DirtyRateSource::Unknown
    }
}

/// One observation of a running migration job. Byte counts are bytes, rates bytes per second.
///
/// `memory_*` are the guest-RAM part of `data_*` (which also counts disks). A driver that
/// only knows `data_*` copies them into `memory_*`. Optional fields are those not every
/// driver can report.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobSample {
    /// Time since the migration job started, in milliseconds.
    pub elapsed_ms: u64,
    pub data_total: u64,
    pub data_processed: u64,
    pub data_remaining: u64,
    pub memory_total: u64,
    pub memory_processed: u64,
    pub memory_remaining: u64,
    /// The memory transfer rate, bytes/s.
    pub memory_bps: u64,
    /// The guest's dirty rate, bytes/s (libvirt reports pages/s: multiplied by the page size);
    /// 0 with `dirty_rate_source` unknown when nothing measured it.
    pub dirty_rate_bps: u64,
    /// Where `dirty_rate_bps` comes from.
    pub dirty_rate_source: DirtyRateSource,
    /// The pre-copy pass (libvirt's memory iteration; 1 = the bulk copy).
    pub iteration: Option<u64>,
    /// While running: the downtime QEMU expects if it switched over now.
    pub expected_downtime_ms: Option<u64>,
    /// Pages the destination requested from the source in post-copy.
    pub postcopy_requests: Option<u64>,
    /// Auto-converge's CPU throttle, percent.
    pub throttle_percent: Option<u32>,
    pub mode: Mode,
}

impl JobSample {
    /// Elapsed time in whole seconds.
    pub fn elapsed_secs(&self) -> u64 {
        self.elapsed_ms / 1000
    }

    /// The remaining count the controller and the bars follow: memory when known, else data.
    pub fn remaining(&self) -> u64 {
        if self.memory_total > 0 {
            self.memory_remaining
        } else {
            self.data_remaining
        }
    }

    /// Where the driver has no dirty rate of its own yet (libvirt's pass 1), the one
    /// measured before the start, labelled as such.
    pub fn fill_dirty_rate(&mut self, measured_before_start: Option<u64>) {
        if self.dirty_rate_source == DirtyRateSource::Unknown
            && let Some(bps) = measured_before_start
        {
            self.dirty_rate_bps = bps;
            self.dirty_rate_source = DirtyRateSource::MeasuredBeforeStart;
        }
    }

    /// The total that `remaining` counts down from.
    pub fn total(&self) -> u64 {
        if self.memory_total > 0 {
            self.memory_total
        } else {
            self.data_total
        }
    }
}

/// How a migration ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Succeeded,
    Failed,
    Aborted,
    /// Not started: the prediction showed it could not complete.
    Refused,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::Failed => "failed",
            Outcome::Aborted => "aborted",
            Outcome::Refused => "refused",
        }
    }
}

/// Something that happened during the migration, at a time since its start: a mode change,
/// a controller decision, an operator's Ctrl-C.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimedEvent {
    pub at_ms: u64,
    pub text: String,
}

/// The events before the start that are not decisions: the dirty-rate measurement and the
/// prediction (they start with these words).
pub const BEFORE_START_PREFIXES: [&str; 4] = [
    "measuring the guest's dirty rate",
    "dirty rate measured before start",
    "could not measure the dirty rate",
    "prediction",
];

/// Whether an event is a decision (or an operator's action) rather than the start of
/// pre-copy, a measurement or a prediction: the summary lists only those as decisions.
pub fn is_decision(text: &str) -> bool {
    !text.starts_with("mode: pre-copy")
        && !text.starts_with("  ")
        && !BEFORE_START_PREFIXES.iter().any(|p| text.starts_with(p))
}

/// The end of a migration, as the renderer's summary and the `-o json` report show it.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// `None` while unknown (never for a finished migration).
    pub outcome: Option<Outcome>,
    /// A triage cause id (`succeeded`, `not-converging`, `no-progress`, `connection-failure`,
    /// `aborted-by-request`, `postcopy-failed`, ...), when one applies.
    pub cause: Option<String>,
    /// One sentence: what happened.
    pub message: String,
    /// The time the operator waited: from the command's start to the end (libvirt); the
    /// migration's own time where the command does not run it (KubeVirt).
    pub total_ms: u64,
    /// The hypervisor's own time for the migration job (libvirt's job statistics), when
    /// known: part of `total_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_ms: Option<u64>,
    /// The guest's actual downtime, when the driver reports it.
    pub downtime_ms: Option<u64>,
    pub data_processed: u64,
    pub memory_total: u64,
    pub iterations: Option<u64>,
    /// The mode the migration ended in.
    pub final_mode: Mode,
    pub postcopy_requests: Option<u64>,
    /// Mode changes and every controller decision, in order.
    pub events: Vec<TimedEvent>,
}

/// Follows pre-copy passes through the saw-tooth of the remaining count: within a pass the
/// remaining count falls; the next pass starts with what the guest dirtied meanwhile, so it
/// jumps up. A pass is the driver's iteration when it reports one, else an upward jump of
/// more than 1 MiB or 1% of the total (metrics that carry no iteration number).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassTracker {
    /// The current pass (1 = the bulk copy); 0 before the first sample.
    pub pass: u64,
    /// What the current pass started with (the largest remaining count seen in it).
    pub start_remaining: u64,
    /// What the previous pass started with.
    pub previous_start: Option<u64>,
    last_remaining: Option<u64>,
}

impl PassTracker {
    /// Feeds a sample; returns true when it opens a new pass (after the first). Samples
    /// with nothing to copy yet (a job still setting up, or torn down) are ignored.
    pub fn observe(&mut self, s: &JobSample) -> bool {
        let total = s.total();
        if total == 0 {
            return false;
        }
        let remaining = s.remaining();
        let iteration = s.iteration.filter(|i| *i > 0);
        let Some(last) = self.last_remaining else {
            self.pass = iteration.unwrap_or(1);
            self.start_remaining = if self.pass == 1 {
                total.max(remaining)
            } else {
                remaining
            };
            self.last_remaining = Some(remaining);
            return false;
        };
        let new_pass = match iteration {
            Some(it) => it > self.pass,
            None => remaining > last.saturating_add((total / 100).max(1 << 20)),
        };
        if new_pass {
            self.previous_start = Some(self.start_remaining);
            self.pass = iteration.unwrap_or(self.pass + 1);
            self.start_remaining = remaining;
        } else if remaining > self.start_remaining {
            self.start_remaining = remaining;
        }
        self.last_remaining = Some(remaining);
        new_pass
    }
}
