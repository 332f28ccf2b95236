//! A migration's progress over time, bounded: remaining memory, dirty rate and throughput per
//! sample, for the sparklines of `migrate` (live, summary), the record `explain --connect`
//! reads back, and `explain`'s document (`progressSeries`).
//!
//! [`Series`] keeps at most `capacity` points however long the migration runs: when full,
//! neighbouring points are merged in pairs and each later point stands for twice as many
//! samples. A merged point keeps the *largest* remaining memory (the peaks of the saw-tooth,
//! where each pre-copy pass starts, survive), the *mean* of the rates, the later pass and the
//! earlier time. Pure: samples in, points out.

use serde::{Deserialize, Serialize};

use super::sample::{DirtyRateSource, JobSample};

/// One point of a migration's progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeriesPoint {
    /// Milliseconds since the migration started.
    pub at_ms: u64,
    /// Bytes of memory still to send (data when memory is not reported).
    pub remaining_bytes: u64,
    /// The guest's dirty rate, bytes/s; `None` where nothing measured it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty_rate_bps: Option<u64>,
    /// The transfer rate, bytes/s.
    pub transfer_rate_bps: u64,
    /// The pre-copy pass (1 = the bulk copy), where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass: Option<u64>,
}

impl SeriesPoint {
    /// The point a sample gives; `pass` is the pass the caller counts (libvirt's iteration,
    /// or `PassTracker`'s inferred pass).
    pub fn of(s: &JobSample, pass: Option<u64>) -> Self {
        SeriesPoint {
            at_ms: s.elapsed_ms,
            remaining_bytes: s.remaining(),
            dirty_rate_bps: (s.dirty_rate_source != DirtyRateSource::Unknown)
                .then_some(s.dirty_rate_bps),
            transfer_rate_bps: s.memory_bps,
            pass: pass.filter(|p| *p > 0),
        }
    }

    /// `self` and the point after it as one.
    fn merge(self, later: SeriesPoint) -> SeriesPoint {
        let mean = |a: u64, b: u64| a / 2 + b / 2 + (a % 2 + b % 2) / 2;
        SeriesPoint {
            at_ms: self.at_ms.min(later.at_ms),
            remaining_bytes: self.remaining_bytes.max(later.remaining_bytes),
            dirty_rate_bps: match (self.dirty_rate_bps, later.dirty_rate_bps) {
                (Some(a), Some(b)) => Some(mean(a, b)),
                (a, b) => a.or(b),
            },
            transfer_rate_bps: mean(self.transfer_rate_bps, later.transfer_rate_bps),
            pass: self.pass.max(later.pass),
        }
    }
}

/// A migration's recorded progress as `explain` documents show it (`progressSeries`): where
/// it was read and its points, oldest first (at most [`DEFAULT_CAPACITY`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressSeries {
    /// `vmctl's record of the migration (ended …)`, `Prometheus at URL`.
    pub source: String,
    pub points: Vec<SeriesPoint>,
}

/// The most points a series keeps by default (the record's bound: ≤ 120 points).
pub const DEFAULT_CAPACITY: usize = 120;

/// A bounded, downsampled series of [`SeriesPoint`]s; see the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    capacity: usize,
    /// Samples per kept point (doubles at each halving).
    stride: u64,
    points: Vec<SeriesPoint>,
    /// The point being filled and how many samples it holds (< stride).
    pending: Option<(SeriesPoint, u64)>,
}

impl Default for Series {
    fn default() -> Self {
        Series::new(DEFAULT_CAPACITY)
    }
}

impl Series {
    /// At most `capacity` points (at least 2).
    pub fn new(capacity: usize) -> Self {
        Series {
            capacity: capacity.max(2),
            stride: 1,
            points: Vec::new(),
            pending: None,
        }
    }

    /// Adds one point (a sample).
    pub fn push(&mut self, p: SeriesPoint) {
        let (merged, n) = match self.pending.take() {
            Some((acc, n)) => (acc.merge(p), n + 1),
            None => (p, 1),
        };
        if n < self.stride {
            self.pending = Some((merged, n));
            return;
        }
        self.points.push(merged);
        if self.points.len() >= self.capacity {
            self.points = self
                .points
                .chunks(2)
                .map(|c| match c {
                    [a, b] => a.merge(*b),
                    [a] => *a,
                    _ => SeriesPoint::default(),
                })
                .collect();
            self.stride *= 2;
        }
    }

    /// Adds a sample.
    pub fn push_sample(&mut self, s: &JobSample, pass: Option<u64>) {
        self.push(SeriesPoint::of(s, pass));
    }

    /// The points kept, the one being filled last (never more than `capacity`).
    pub fn points(&self) -> Vec<SeriesPoint> {
        let mut out = self.points.clone();
        out.extend(self.pending.map(|(p, _)| p));
        out
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty() && self.pending.is_none()
    }
}

/// At most `max` points of `points`, merged as [`Series`] merges them (for a series read
/// whole, e.g. from Prometheus).
pub fn downsample(points: &[SeriesPoint], max: usize) -> Vec<SeriesPoint> {
    let mut s = Series::new(max.max(2));
    for p in points {
        s.push(*p);
    }
    s.points()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(at_ms: u64, remaining: u64, pass: u64) -> SeriesPoint {
        SeriesPoint {
            at_ms,
            remaining_bytes: remaining,
            dirty_rate_bps: Some(10),
            transfer_rate_bps: 30,
            pass: Some(pass),
        }
    }

    #[test]
    fn a_short_series_is_kept_as_it_came() {
        let mut s = Series::new(8);
        assert!(s.is_empty());
        for i in 0..5 {
            s.push(point(i * 1000, 100 - i, 1));
        }
        let pts = s.points();
        assert_eq!(pts.len(), 5);
        assert_eq!(pts[4], point(4000, 96, 1));
    }

    #[test]
    fn a_long_series_stays_bounded_and_keeps_the_peaks() {
        let mut s = Series::new(16);
        // 10 hours of one sample a second: a saw-tooth of 100-second passes, each starting
        // at 1000 + pass and falling to 0.
        for i in 0..36_000u64 {
            let pass = i / 100 + 1;
            let rem = if i % 100 == 0 {
                1000 + pass
            } else {
                100 - i % 100
            };
            s.push(point(i * 1000, rem, pass));
            assert!(s.points().len() <= 16, "at {i}");
        }
        let pts = s.points();
        assert!(pts.len() >= 8, "{}", pts.len());
        // Every full bucket spans many passes: each holds a pass's start, the peak (the
        // last one is still being filled).
        let full = &pts[..pts.len() - 1];
        assert!(full.iter().all(|p| p.remaining_bytes > 1000), "{pts:?}");
        assert_eq!(pts[0].at_ms, 0);
        assert!(pts.windows(2).all(|w| w[0].at_ms < w[1].at_ms));
        assert_eq!(pts.last().and_then(|p| p.pass), Some(360));
        // Rates are averaged.
        assert!(pts.iter().all(|p| p.transfer_rate_bps == 30));
    }

    #[test]
    fn merging_keeps_max_remaining_mean_rates_and_unknown_dirty_rates_stay_unknown() {
        let a = SeriesPoint {
            at_ms: 0,
            remaining_bytes: 5,
            dirty_rate_bps: None,
            transfer_rate_bps: 10,
            pass: Some(1),
        };
        let b = SeriesPoint {
            at_ms: 400,
            remaining_bytes: 9,
            dirty_rate_bps: Some(7),
            transfer_rate_bps: 21,
            pass: Some(2),
        };
        let m = a.merge(b);
        assert_eq!(
            m,
            SeriesPoint {
                at_ms: 0,
                remaining_bytes: 9,
                dirty_rate_bps: Some(7),
                transfer_rate_bps: 15,
                pass: Some(2),
            }
        );
        assert_eq!(a.merge(a).dirty_rate_bps, None);
        assert_eq!(downsample(&[a, b, a, b, a], 2).len(), 2);
    }

    #[test]
    fn a_sample_with_an_unknown_dirty_rate_has_none() {
        let s = JobSample {
            elapsed_ms: 1200,
            memory_total: 100,
            memory_remaining: 40,
            memory_bps: 8,
            ..Default::default()
        };
        let p = SeriesPoint::of(&s, Some(0));
        assert_eq!(p.dirty_rate_bps, None);
        assert_eq!(p.pass, None);
        assert_eq!(
            (p.at_ms, p.remaining_bytes, p.transfer_rate_bps),
            (1200, 40, 8)
        );
    }
}
