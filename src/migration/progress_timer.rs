//! KubeVirt's progress check, replayed on the samples vmctl reads (FACTS §5.2): progress
//! is a sample whose remaining data is lower than the previous sample's (not a new
//! minimum), and the monitor aborts after `progressTimeout` seconds without progress
//! (0 disables it). Pure: samples in, the time without progress out.

/// Follows the remaining data and says how long it has not fallen.
#[derive(Debug, Clone, Default)]
pub struct ProgressTimer {
    last_remaining: Option<u64>,
    last_progress_ms: Option<u64>,
    /// The last multiple of `step` announced, so each stretch is said once.
    announced_step: u64,
}

/// What an operator should be told about a stretch without progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoProgress {
    pub seconds: u64,
    /// The progress timeout it counts against; None when disabled (0).
    pub timeout: Option<u64>,
}

impl NoProgress {
    pub fn text(&self) -> String {
        match self.timeout {
            Some(t) => format!(
                "no progress for {}s of the {t} s progress timeout (remaining data has not fallen; KubeVirt aborts the migration at {t} s)",
                self.seconds
            ),
            None => format!(
                "no progress for {}s (the progress timeout is disabled: nothing aborts it for this)",
                self.seconds
            ),
        }
    }
}

impl ProgressTimer {
    /// Records a sample; returns a stretch without progress when it reaches 10 s and then
    /// every 30 s (10, 30, 60, 90 … s), so a log gets a line per stage, not per sample.
    pub fn observe(&mut self, at_ms: u64, remaining: u64, timeout_secs: u64) -> Option<NoProgress> {
        let progressed = self.last_remaining.is_none_or(|last| remaining < last);
        self.last_remaining = Some(remaining);
        if progressed {
            self.last_progress_ms = Some(at_ms);
            self.announced_step = 0;
            return None;
        }
        let since = self.last_progress_ms?;
        let seconds = at_ms.saturating_sub(since) / 1000;
        let step = match seconds {
            0..10 => 0,
            10..30 => 1,
            s => 1 + s / 30,
        };
        if step == 0 || step <= self.announced_step {
            return None;
        }
        self.announced_step = step;
        Some(NoProgress {
            seconds,
            timeout: (timeout_secs > 0).then_some(timeout_secs),
        })
    }

    /// Seconds since the remaining data last fell, at `at_ms`.
    pub fn stalled_secs(&self, at_ms: u64) -> Option<u64> {
        self.last_progress_ms
            .map(|since| at_ms.saturating_sub(since) / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_falling_remainder_is_progress_and_a_flat_one_is_not() {
        let mut t = ProgressTimer::default();
        assert_eq!(t.observe(0, 1000, 150), None);
        assert_eq!(t.observe(10_000, 900, 150), None);
        // Flat from 10 s on: nothing until a whole step has passed.
        assert_eq!(t.observe(19_000, 900, 150), None);
        assert_eq!(
            t.observe(20_000, 900, 150),
            Some(NoProgress {
                seconds: 10,
                timeout: Some(150)
            })
        );
        assert_eq!(t.observe(30_000, 900, 150), None);
        assert_eq!(t.observe(40_000, 900, 150).map(|n| n.seconds), Some(30));
        // Said once per step.
        assert_eq!(t.observe(45_000, 950, 150), None);
        let sixty = t.observe(70_000, 950, 150).unwrap();
        assert_eq!(sixty.seconds, 60);
        assert!(
            sixty
                .text()
                .starts_with("no progress for 60s of the 150 s progress timeout")
        );
        assert_eq!(t.stalled_secs(70_000), Some(60));
    }

    #[test]
    fn the_watermark_is_the_previous_sample_not_the_minimum() {
        // KubeVirt compares with the previous poll: 900 → 950 → 920 is progress at 920.
        let mut t = ProgressTimer::default();
        t.observe(0, 900, 150);
        t.observe(20_000, 950, 150);
        assert_eq!(t.observe(40_000, 920, 150), None);
        assert_eq!(t.stalled_secs(40_000), Some(0));
    }

    #[test]
    fn a_disabled_timeout_says_so() {
        let mut t = ProgressTimer::default();
        t.observe(0, 5, 0);
        let n = t.observe(12_000, 5, 0).unwrap();
        assert!(
            n.text().contains("progress timeout is disabled"),
            "{}",
            n.text()
        );
    }
}
