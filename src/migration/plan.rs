//! What a libvirt migration will be asked for (pure): the flags KubeVirt builds (FACTS §5.1),
//! the parameters, the max-downtime schedule and the controller's guards. `--dry-run` prints
//! exactly this, with or without libvirt support compiled in.

use serde::Serialize;

use super::controller;
use super::predict;
use super::sample::DirtyRateSource;
use crate::model::kubevirt::{
    DEFAULT_COMPLETION_TIMEOUT_PER_GIB, DEFAULT_MAX_DOWNTIME_MS, DEFAULT_PROGRESS_TIMEOUT,
};
use crate::policy::budget::budget_for_bytes;

/// libvirt's `virDomainMigrateFlags` (stable ABI values; checked against `virt::sys` in the
/// libvirt build's tests).
pub mod flags {
    pub const LIVE: u32 = 1;
    pub const PEER2PEER: u32 = 2;
    pub const PERSIST_DEST: u32 = 8;
    pub const PAUSED: u32 = 32;
    pub const AUTO_CONVERGE: u32 = 8192;
    pub const POSTCOPY: u32 = 32768;
    pub const PARALLEL: u32 = 131_072;

    /// Names in libvirt's spelling, in bit order.
    pub const NAMES: &[(u32, &str)] = &[
        (LIVE, "VIR_MIGRATE_LIVE"),
        (PEER2PEER, "VIR_MIGRATE_PEER2PEER"),
        (PERSIST_DEST, "VIR_MIGRATE_PERSIST_DEST"),
        (PAUSED, "VIR_MIGRATE_PAUSED"),
        (AUTO_CONVERGE, "VIR_MIGRATE_AUTO_CONVERGE"),
        (POSTCOPY, "VIR_MIGRATE_POSTCOPY"),
        (PARALLEL, "VIR_MIGRATE_PARALLEL"),
    ];

    /// `VIR_MIGRATE_LIVE | VIR_MIGRATE_PEER2PEER | ...`.
    pub fn describe(bits: u32) -> Vec<&'static str> {
        NAMES
            .iter()
            .filter(|(bit, _)| bits & bit != 0)
            .map(|(_, name)| *name)
            .collect()
    }
}

/// The options `vmctl migrate --connect` takes, already validated.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Options {
    pub allow_postcopy: bool,
    pub allow_auto_converge: bool,
    pub allow_pause: bool,
    /// MiB/s; `None` = unlimited.
    pub bandwidth_mib: Option<u64>,
    /// MiB/s in post-copy; `None` = unlimited.
    pub postcopy_bandwidth_mib: Option<u64>,
    /// The ceiling for the max downtime, ms.
    pub max_downtime_ms: Option<u64>,
    pub completion_timeout_per_gib: Option<u64>,
    pub progress_timeout_secs: Option<u64>,
    pub parallel: Option<u32>,
}

/// Everything the driver will do, before any guest is touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub flags: u32,
    pub flag_names: Vec<&'static str>,
    /// `bandwidth` parameter, MiB/s (pre-copy).
    pub bandwidth_mib: Option<u64>,
    /// `bandwidth.postcopy` parameter, MiB/s; `None`: post-copy runs unlimited.
    pub postcopy_bandwidth_mib: Option<u64>,
    pub parallel_connections: Option<u32>,
    pub initial_downtime_ms: u64,
    pub max_downtime_ms: u64,
    pub completion_timeout_per_gib: u64,
    pub progress_timeout_secs: u64,
    pub allow_postcopy: bool,
    pub allow_auto_converge: bool,
    pub allow_pause: bool,
}

/// Validates the options into a plan; the message says what is wrong.
pub fn plan(o: &Options) -> Result<Plan, String> {
    if o.bandwidth_mib == Some(0) {
        return Err("--bandwidth must be at least 1 MiB/s (leave it out for unlimited)".into());
    }
    if o.postcopy_bandwidth_mib == Some(0) {
        return Err(
            "--postcopy-bandwidth must be at least 1 MiB/s (leave it out for unlimited)".into(),
        );
    }
    if o.postcopy_bandwidth_mib.is_some() && !o.allow_postcopy {
        return Err("--postcopy-bandwidth applies only with --allow-postcopy".into());
    }
    if o.parallel == Some(0) {
        return Err("--parallel must be at least 1".into());
    }
    let max_downtime_ms = o.max_downtime_ms.unwrap_or(DEFAULT_MAX_DOWNTIME_MS);
    if !(1..=2_000_000).contains(&max_downtime_ms) {
        return Err("--max-downtime must be between 1 and 2000000 ms (QEMU's limit)".into());
    }
    let mut bits = flags::LIVE | flags::PEER2PEER | flags::PERSIST_DEST;
    if o.allow_auto_converge {
        bits |= flags::AUTO_CONVERGE;
    }
    if o.allow_postcopy {
        bits |= flags::POSTCOPY;
    }
    if o.parallel.is_some() {
        bits |= flags::PARALLEL;
    }
    Ok(Plan {
        flags: bits,
        flag_names: flags::describe(bits),
        bandwidth_mib: o.bandwidth_mib,
        postcopy_bandwidth_mib: o.postcopy_bandwidth_mib,
        parallel_connections: o.parallel,
        initial_downtime_ms: controller::initial_downtime_ms(max_downtime_ms),
        max_downtime_ms,
        completion_timeout_per_gib: o
            .completion_timeout_per_gib
            .unwrap_or(DEFAULT_COMPLETION_TIMEOUT_PER_GIB),
        progress_timeout_secs: o.progress_timeout_secs.unwrap_or(DEFAULT_PROGRESS_TIMEOUT),
        allow_postcopy: o.allow_postcopy,
        allow_auto_converge: o.allow_auto_converge,
        allow_pause: o.allow_pause,
    })
}

impl Plan {
    /// The controller's configuration for a guest of `memory_bytes`. Without a dirty rate
    /// `measured_before_start` (vmctl starts at once unless `--measure`), or without a cap,
    /// the controller predicts in flight, from what pass 1 shows.
    pub fn controller_config(
        &self,
        memory_bytes: u64,
        measured_before_start: bool,
    ) -> controller::Config {
        controller::Config {
            allow_postcopy: self.allow_postcopy,
            allow_auto_converge: self.allow_auto_converge,
            allow_pause: self.allow_pause,
            progress_timeout_secs: self.progress_timeout_secs,
            budget_secs: budget_for_bytes(self.completion_timeout_per_gib, memory_bytes),
            initial_downtime_ms: self.initial_downtime_ms,
            max_downtime_ms: self.max_downtime_ms,
            early_detection: true,
            predict_in_flight: self.bandwidth_mib.is_none() || !measured_before_start,
        }
    }

    /// What the predictor needs for a guest of `memory_bytes` whose dirty rate was measured
    /// (`None`: not measured) before the start.
    pub fn prediction_inputs(&self, memory_bytes: u64, dirty_bps: Option<u64>) -> predict::Inputs {
        let cfg = self.controller_config(memory_bytes, dirty_bps.is_some());
        predict::Inputs {
            memory_bytes,
            dirty_rate_bps: dirty_bps,
            dirty_rate_source: if dirty_bps.is_some() {
                DirtyRateSource::MeasuredBeforeStart
            } else {
                DirtyRateSource::Unknown
            },
            dirty_rate_is_lower_bound: true,
            bandwidth_bps: self.bandwidth_mib.map(|m| m.saturating_mul(1 << 20)),
            bandwidth_source: if self.bandwidth_mib.is_some() {
                predict::BandwidthSource::Cap
            } else {
                predict::BandwidthSource::Unknown
            },
            initial_downtime_ms: self.initial_downtime_ms,
            max_downtime_ms: self.max_downtime_ms,
            budget_secs: cfg.budget_secs,
            allow_postcopy: self.allow_postcopy,
            allow_auto_converge: self.allow_auto_converge,
            allow_pause: self.allow_pause,
            flavour: predict::Flavour::Libvirt,
        }
    }

    /// The flags for a guest that is paused when the migration starts: KubeVirt adds
    /// `VIR_MIGRATE_PAUSED`, so it stays paused on the destination.
    pub fn flags_for(&self, guest_paused: bool) -> u32 {
        if guest_paused {
            self.flags | flags::PAUSED
        } else {
            self.flags
        }
    }

    /// The plan in words, for `--dry-run`.
    pub fn describe(&self, domain: &str, src: &str, dst: &str) -> String {
        let mut out = String::new();
        let mut row = |k: &str, v: String| out.push_str(&format!("  {k:<22}{v}\n"));
        row("domain", domain.to_string());
        row("source", src.to_string());
        row("destination", dst.to_string());
        row(
            "call",
            "virDomainMigrateToURI3(destination, params, flags)".into(),
        );
        row(
            "flags",
            format!("{} ({:#x})", self.flag_names.join(" | "), self.flags),
        );
        let pre = self
            .bandwidth_mib
            .map_or("unlimited in pre-copy".into(), |b| {
                format!("{b} MiB/s in pre-copy (param bandwidth)")
            });
        let post = self
            .postcopy_bandwidth_mib
            .map_or("unlimited in post-copy".into(), |b| {
                format!("{b} MiB/s in post-copy (param bandwidth.postcopy)")
            });
        row("bandwidth", format!("{pre}, {post}"));
        if let Some(n) = self.parallel_connections {
            row(
                "parallel connections",
                if self.allow_postcopy {
                    format!(
                        "{n} (multifd; with post-copy, refused before starting if the source's \
                         QEMU is 10.0 or older)"
                    )
                } else {
                    format!("{n} (multifd)")
                },
            );
        }
        row(
            "max downtime",
            format!(
                "{} ms at the start, raised up to {} ms only when pre-copy cannot converge otherwise",
                self.initial_downtime_ms, self.max_downtime_ms
            ),
        );
        row(
            "completion budget",
            format!(
                "{} s x the guest's memory in started units of 10^9 bytes (completionTimeoutPerGiB, counted as KubeVirt counts it)",
                self.completion_timeout_per_gib
            ),
        );
        row(
            "progress timeout",
            if self.progress_timeout_secs == 0 {
                "off".into()
            } else {
                format!("{} s", self.progress_timeout_secs)
            },
        );
        let mut when_stuck = Vec::new();
        if self.allow_postcopy {
            when_stuck.push("switch to post-copy");
        }
        when_stuck.push("raise the max downtime (if within reach)");
        if self.allow_auto_converge {
            when_stuck.push("wait for auto-converge");
        }
        if self.allow_pause {
            when_stuck.push("pause the guest");
        }
        when_stuck.push("abort");
        row("if not converging", when_stuck.join(", else "));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_as_kubevirt_builds_them() {
        let p = plan(&Options::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            p.flag_names,
            [
                "VIR_MIGRATE_LIVE",
                "VIR_MIGRATE_PEER2PEER",
                "VIR_MIGRATE_PERSIST_DEST"
            ]
        );
        assert_eq!(p.flags, 0xb);
        let p = plan(&Options {
            allow_postcopy: true,
            allow_auto_converge: true,
            parallel: Some(8),
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.flags, 0xb | 8192 | 32768 | 131_072);
        assert_eq!((p.initial_downtime_ms, p.max_downtime_ms), (300, 900));
        assert_eq!(p.flags_for(true), p.flags | 32);
        assert_eq!(flags::describe(p.flags_for(true))[3], "VIR_MIGRATE_PAUSED");
    }

    #[test]
    fn bad_values_are_refused() {
        for (o, msg) in [
            (
                Options {
                    bandwidth_mib: Some(0),
                    ..Default::default()
                },
                "--bandwidth",
            ),
            (
                Options {
                    max_downtime_ms: Some(0),
                    ..Default::default()
                },
                "--max-downtime",
            ),
            (
                Options {
                    parallel: Some(0),
                    ..Default::default()
                },
                "--parallel",
            ),
            (
                Options {
                    allow_postcopy: true,
                    postcopy_bandwidth_mib: Some(0),
                    ..Default::default()
                },
                "--postcopy-bandwidth must be at least",
            ),
            (
                Options {
                    postcopy_bandwidth_mib: Some(4),
                    ..Default::default()
                },
                "--postcopy-bandwidth applies only with --allow-postcopy",
            ),
        ] {
            assert!(plan(&o).is_err_and(|e| e.contains(msg)), "{msg}");
        }
    }

    #[test]
    fn the_dry_run_names_both_bandwidths() {
        let p = plan(&Options {
            allow_postcopy: true,
            bandwidth_mib: Some(32),
            postcopy_bandwidth_mib: Some(4),
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.postcopy_bandwidth_mib, Some(4));
        let text = p.describe("vm", "a", "b");
        assert!(
            text.contains(
                "32 MiB/s in pre-copy (param bandwidth), 4 MiB/s in post-copy (param bandwidth.postcopy)"
            ),
            "{text}"
        );
        let text = plan(&Options::default())
            .unwrap_or_else(|e| panic!("{e}"))
            .describe("vm", "a", "b");
        assert!(
            text.contains("unlimited in pre-copy, unlimited in post-copy"),
            "{text}"
        );
    }

    #[test]
    fn the_controller_gets_kubevirt_defaults_and_the_budget_for_the_guest() {
        let p = plan(&Options {
            max_downtime_ms: Some(30),
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let c = p.controller_config(256 << 20, false);
        assert_eq!(
            (
                c.budget_secs,
                c.progress_timeout_secs,
                c.initial_downtime_ms
            ),
            (150, 150, 30)
        );
        assert_eq!(p.controller_config(2 << 30, false).budget_secs, 450);
    }
}
