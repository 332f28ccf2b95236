//! Live progress of a migration, drawn from `JobSample`s alone (both drivers use it).
//!
//! On a terminal: indicatif bars on stderr — the current pass's memory (a pass that starts
//! with more than the last one ended with opens a new bar instead of running it backwards),
//! transfer rate against dirty rate, expected downtime, elapsed against the budget, time left — with
//! mode changes and controller decisions printed above the bars as they happen. Off a
//! terminal: one greppable line per second on stderr, in Proxmox's style
//! (`migration active, transferred X of Y, Z/s, ...`). At the end a summary on stdout.
//!
//! Under the bars on a terminal, sparklines of the migration so far ([`trend_lines`]): the
//! remaining memory (the saw-tooth of the pre-copy passes, each pass's start marked under
//! it), then the transfer rate and the dirty rate on one scale. The history behind them is a
//! bounded [`Series`] (a 10-hour migration keeps as many points as a 1-minute one, merged);
//! the summary on a terminal keeps the remaining-memory sparkline.
//!
//! The API, stable and only ever extended:
//!
//! ```no_run
//! # use vmctl::render::{Style, progress::ProgressView};
//! # use vmctl::migration::{JobSample, Summary};
//! let mut view = ProgressView::new(Style { color: false }, false, "vm-a -> host-b", Some(150));
//! view.sample(&JobSample::default());
//! view.event("not converging: switching to post-copy");
//! let summary = Summary { events: view.events().to_vec(), ..Default::default() };
//! view.finish(&summary);
//! ```

use std::io::{self, Write};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use super::glyphs::Charset;
use super::spark::{self, Bucket};
use super::{Style, Tone, write_stdout};
use crate::migration::controller::Decision;
use crate::migration::driver::Advice;
use crate::migration::sample::DirtyRateSource;
use crate::migration::series::{Series, SeriesPoint};
use crate::migration::{JobSample, Mode, PassTracker, Summary, TimedEvent};
use crate::text::{bytes, duration, printable_lines};

/// How samples are shown.
enum Sink {
    /// indicatif bars on stderr.
    Bars(Bars),
    /// One plain line per second of migration time.
    Lines {
        out: Box<dyn Write + Send>,
        next_at_ms: u64,
    },
    /// One JSON object per sample, event and summary, on its own line (for tooling).
    Json { out: Box<dyn Write + Send> },
    /// Nothing while running; the summary only.
    Quiet,
}

struct Bars {
    multi: MultiProgress,
    pass: ProgressBar,
    rates: ProgressBar,
    clock: ProgressBar,
    /// The sparklines under the bars (one bar per line of [`trend_lines`]).
    trend: [ProgressBar; TREND_LINES],
    charset: Charset,
    /// Cells per sparkline.
    spark_width: usize,
    /// A terminal under 88 columns: shorter names and bars, the clock line without the
    /// total elapsed, so no line wraps at 80 columns.
    narrow: bool,
}

/// The lines of [`trend_lines`].
const TREND_LINES: usize = 4;

/// Points the live history keeps (then merged in pairs; see `migration::series`).
const HISTORY_POINTS: usize = 240;

/// Draws a migration's samples and events; see the module documentation.
pub struct ProgressView {
    style: Style,
    title: String,
    budget_secs: Option<u64>,
    /// Where the budget's clock starts, on the samples' clock (KubeVirt's budget runs from
    /// the start of streaming, the samples from the creation of the migration).
    budget_from_ms: u64,
    sink: Sink,
    passes: PassTracker,
    last: Option<JobSample>,
    mode: Option<Mode>,
    events: Vec<TimedEvent>,
    /// Every sample so far, bounded and downsampled: the sparklines' data.
    history: Series,
}

impl ProgressView {
    /// Bars on a terminal (`is_tty`: stderr is one), else plain lines on stderr.
    /// `budget_secs`: the completion budget the elapsed time is measured against, if any.
    pub fn new(style: Style, is_tty: bool, title: &str, budget_secs: Option<u64>) -> Self {
        let sink = if is_tty {
            let cols = crossterm::terminal::size()
                .ok()
                .filter(|(cols, _)| *cols > 0)
                .map_or(80, |(cols, _)| cols);
            Sink::Bars(Bars::new(
                title,
                ProgressDrawTarget::stderr_with_hz(10),
                Charset::detect(),
                spark_width(cols),
            ))
        } else {
            Sink::Lines {
                out: Box::new(io::stderr()),
                next_at_ms: 0,
            }
        };
        Self::with_sink(style, title, budget_secs, sink)
    }

    /// Plain lines into `out` (logs, tests).
    pub fn lines_to(
        style: Style,
        title: &str,
        budget_secs: Option<u64>,
        out: Box<dyn Write + Send>,
    ) -> Self {
        let sink = Sink::Lines { out, next_at_ms: 0 };
        Self::with_sink(style, title, budget_secs, sink)
    }

    /// One JSON line per sample, event and summary on stdout (`--progress json`).
    pub fn json(title: &str, budget_secs: Option<u64>) -> Self {
        Self::json_to(title, budget_secs, Box::new(io::stdout()))
    }

    /// JSON lines into `out`.
    pub fn json_to(title: &str, budget_secs: Option<u64>, out: Box<dyn Write + Send>) -> Self {
        let style = Style { color: false };
        Self::with_sink(style, title, budget_secs, Sink::Json { out })
    }

    /// Shows nothing while running (the summary still prints).
    pub fn quiet(style: Style, title: &str, budget_secs: Option<u64>) -> Self {
        Self::with_sink(style, title, budget_secs, Sink::Quiet)
    }

    /// The terminal view drawn nowhere (tests read the bars' messages).
    #[cfg(test)]
    fn hidden_bars(title: &str, budget_secs: Option<u64>, charset: Charset, width: usize) -> Self {
        let bars = Bars::new(title, ProgressDrawTarget::hidden(), charset, width);
        Self::with_sink(Style { color: false }, title, budget_secs, Sink::Bars(bars))
    }

    fn with_sink(style: Style, title: &str, budget_secs: Option<u64>, sink: Sink) -> Self {
        ProgressView {
            style,
            title: crate::text::printable(title),
            budget_secs: budget_secs.filter(|b| *b > 0),
            budget_from_ms: 0,
            sink,
            passes: PassTracker::default(),
            last: None,
            mode: None,
            events: Vec::new(),
            history: Series::new(HISTORY_POINTS),
        }
    }

    /// Changes the budget the elapsed time is measured against (e.g. doubled after a pause).
    pub fn set_budget(&mut self, budget_secs: Option<u64>) {
        self.budget_secs = budget_secs.filter(|b| *b > 0);
    }

    /// The budget runs from `from_ms` on the samples' clock: the view shows the time spent
    /// since then against it, so the budget shown is the budget KubeVirt applies.
    pub fn set_budget_from(&mut self, from_ms: u64, budget_secs: Option<u64>) {
        self.budget_from_ms = from_ms;
        self.set_budget(budget_secs);
    }

    fn budget_clock(&self) -> Option<BudgetClock> {
        self.budget_secs.map(|secs| BudgetClock {
            secs,
            from_ms: self.budget_from_ms,
        })
    }

    /// Draws one sample. A change of mode is announced as an event (and, off a terminal,
    /// prints a status line at once).
    pub fn sample(&mut self, s: &JobSample) {
        let mode_changed = self.mode != Some(s.mode);
        if mode_changed {
            let text = match (self.mode, s.mode) {
                (None, m) => format!("mode: {}", m.as_str()),
                (Some(_), Mode::PostCopy) => {
                    "mode: post-copy (the guest runs on the destination now; no abort from here)"
                        .to_string()
                }
                (Some(_), Mode::Paused) => {
                    "mode: paused (the guest is suspended until the copy ends)".to_string()
                }
                (Some(_), m) => format!("mode: {}", m.as_str()),
            };
            self.mode = Some(s.mode);
            self.push_event(s.elapsed_ms, text);
        }
        let new_pass = self.passes.observe(s);
        if s.total() > 0 {
            self.history.push_sample(s, Some(self.passes.pass));
        }
        let budget = self.budget_clock();
        match &mut self.sink {
            Sink::Bars(bars) => {
                // The sparklines first: the bars' updates after them redraw the whole view
                // (indicatif draws at most 10 times a second), the sparklines included.
                bars.draw_trend(
                    &self.history.points(),
                    SeriesPoint::of(s, Some(self.passes.pass)),
                );
                bars.draw(&self.style, s, &self.passes, new_pass, budget);
            }
            Sink::Lines { out, next_at_ms } => {
                if s.elapsed_ms >= *next_at_ms || mode_changed {
                    *next_at_ms = (s.elapsed_ms / 1000 + 1) * 1000;
                    let line = status_line(s, &self.passes, budget);
                    let _ = writeln!(out, "{line}");
                }
            }
            Sink::Json { out } => {
                let _ = write_json_line(out, "sample", s);
            }
            Sink::Quiet => {}
        }
        self.last = Some(s.clone());
    }

    /// Prints an event (a controller decision, an operator's action) above the bars, timed
    /// at the last sample.
    pub fn event(&mut self, text: &str) {
        let at = self.last.as_ref().map_or(0, |s| s.elapsed_ms);
        self.push_event(at, text.to_string());
    }

    /// Prints an event timed at `at_ms` since the migration started.
    pub fn event_at(&mut self, at_ms: u64, text: &str) {
        self.push_event(at_ms, text.to_string());
    }

    /// Every event shown so far (mode changes included), for the summary.
    pub fn events(&self) -> &[TimedEvent] {
        &self.events
    }

    /// The last sample drawn.
    pub fn last_sample(&self) -> Option<&JobSample> {
        self.last.as_ref()
    }

    /// The migration so far, bounded and downsampled (what the sparklines draw).
    pub fn history(&self) -> Vec<SeriesPoint> {
        self.history.points()
    }

    /// Removes the bars; prints nothing else (for `-o json`, where the caller prints a report).
    pub fn close(&mut self) {
        if let Sink::Bars(bars) = &self.sink {
            bars.clear();
        }
        if let Sink::Lines { out, .. } | Sink::Json { out } = &mut self.sink {
            let _ = out.flush();
        }
    }

    /// Removes the bars and prints the summary: text on stdout, or a JSON line.
    pub fn finish(&mut self, summary: &Summary) {
        self.close();
        match &mut self.sink {
            Sink::Json { out } => {
                let _ = write_json_line(out, "summary", summary);
                let _ = out.flush();
            }
            Sink::Bars(bars) => {
                let trend = summary_trend(&self.history.points(), bars.spark_width, bars.charset);
                let text = summary_text_with(&self.style, &self.title, summary, trend.as_deref());
                let _ = write_stdout(&text);
            }
            _ => {
                let _ = write_stdout(&summary_text(&self.style, &self.title, summary));
            }
        }
    }

    fn push_event(&mut self, at_ms: u64, text: String) {
        let line = format!("[{}] {}", seconds(at_ms), crate::text::printable(&text));
        match &mut self.sink {
            Sink::Bars(bars) => {
                let painted = self.style.paint(&line, event_tone(&text));
                // Wrapped to the terminal (stderr), as stderr_line wraps: indicatif clears a
                // line the terminal wrapped wrong.
                let painted = super::glyphs::for_stderr(&painted);
                let _ = bars.multi.println(super::prose::for_stderr(&painted));
            }
            Sink::Lines { out, .. } => {
                let _ = writeln!(out, "{line}");
            }
            Sink::Json { out } => {
                let event = TimedEvent {
                    at_ms,
                    text: text.clone(),
                };
                let _ = write_json_line(out, "event", &event);
            }
            Sink::Quiet => {}
        }
        self.events.push(TimedEvent { at_ms, text });
    }
}

impl Drop for ProgressView {
    fn drop(&mut self) {
        if let Sink::Bars(bars) = &self.sink {
            bars.clear();
        }
    }
}

impl Bars {
    fn new(title: &str, target: ProgressDrawTarget, charset: Charset, spark_width: usize) -> Self {
        let multi = MultiProgress::with_draw_target(target);
        let narrow = spark_width < 40;
        let (pass_style, clock_style) = if narrow {
            (
                "{prefix:<12!} [{bar:16.cyan/blue}] {msg}",
                "{prefix:<12!} [{bar:16.green/white}] {msg}",
            )
        } else {
            (
                "{prefix:<22} [{bar:32.cyan/blue}] {msg}",
                "{prefix:<22} [{bar:32.green/white}] {msg}",
            )
        };
        let pass = multi.add(ProgressBar::new(1));
        pass.set_style(bar_style(pass_style));
        pass.set_prefix(crate::text::printable(title));
        let rates = multi.add(ProgressBar::new(1));
        rates.set_style(bar_style("  {msg}"));
        let clock = multi.add(ProgressBar::new(1));
        clock.set_style(bar_style(clock_style));
        clock.set_prefix("  elapsed");
        // A sample updates seven lines, more than indicatif's rate limit draws at once: a
        // steady redraw shows the last of them within a quarter of a second.
        clock.enable_steady_tick(std::time::Duration::from_millis(250));
        let trend = std::array::from_fn(|_| {
            let line = multi.add(ProgressBar::new(1));
            line.set_style(bar_style("{msg}"));
            line
        });
        Bars {
            multi,
            pass,
            rates,
            clock,
            trend,
            charset,
            spark_width,
            narrow,
        }
    }

    fn draw_trend(&self, points: &[SeriesPoint], now: SeriesPoint) {
        let lines = trend_lines(points, Some(now), self.spark_width, self.charset);
        for (bar, line) in self.trend.iter().zip(lines) {
            bar.set_message(line);
        }
    }

    fn draw(
        &self,
        style: &Style,
        s: &JobSample,
        passes: &PassTracker,
        new_pass: bool,
        budget: Option<BudgetClock>,
    ) {
        let start = passes.start_remaining.max(1);
        if new_pass {
            self.pass.reset();
        }
        self.pass.set_length(start);
        self.pass
            .set_position(start.saturating_sub(s.remaining().min(start)));
        let pass_label = match (s.mode, passes.pass) {
            (Mode::PostCopy, _) => "post-copy".to_string(),
            (Mode::Paused, _) => "paused".to_string(),
            (_, 1) => "pass 1 (bulk)".to_string(),
            (_, n) => format!("pass {n}"),
        };
        self.pass.set_message(format!(
            "{pass_label}: {} left of {}",
            bytes(s.remaining()),
            bytes(passes.start_remaining)
        ));
        // One line (`  {msg}`): cut at a word to the terminal (indicatif clears a wrapped
        // line wrong).
        let rates = rates_text(style, s);
        self.rates.set_message(match super::prose::stderr_width() {
            Some(w) => super::prose::one_line(&rates, w.saturating_sub(2)),
            None => rates,
        });
        match budget {
            Some(b) => {
                self.clock.set_length(b.secs.max(1));
                self.clock.set_position(b.spent_secs(s).min(b.secs));
            }
            None => {
                self.clock.set_length(1);
                self.clock.set_position(0);
            }
        }
        self.clock.set_message(clock_text(s, budget, self.narrow));
        self.clock.tick();
    }

    fn clear(&self) {
        for bar in [&self.pass, &self.rates, &self.clock]
            .into_iter()
            .chain(&self.trend)
        {
            bar.finish_and_clear();
        }
        let _ = self.multi.clear();
    }
}

fn bar_style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

fn event_tone(text: &str) -> Tone {
    let lower = text.to_ascii_lowercase();
    if lower.contains("abort") || lower.contains("fail") || lower.contains("not converging") {
        Tone::Warn
    } else if lower.starts_with("mode:") {
        Tone::Strong
    } else {
        Tone::Plain
    }
}

fn rates_text(style: &Style, s: &JobSample) -> String {
    let mut parts = vec![format!("sent {}", bytes(s.memory_processed))];
    let send = format!("sending {}/s", bytes(s.memory_bps));
    let dirty = format!("dirtying {}", dirty_text(s));
    if s.mode == Mode::PreCopy
        && s.dirty_rate_source.is_known()
        && s.dirty_rate_bps > 0
        && s.memory_bps > 0
        && s.dirty_rate_bps >= s.memory_bps
    {
        parts.push(format!(
            "{send} < {}",
            style.paint(&format!("{dirty} (faster than sent)"), Tone::Bad)
        ));
    } else {
        parts.push(format!("{send} vs {dirty}"));
    }
    if let Some(ms) = s.expected_downtime_ms {
        parts.push(format!("expected downtime {ms} ms"));
    }
    if let Some(t) = s.throttle_percent.filter(|t| *t > 0) {
        parts.push(format!("throttle {t}%"));
    }
    if let Some(r) = s.postcopy_requests.filter(|r| *r > 0) {
        parts.push(format!("post-copy requests {r}"));
    }
    parts.join(" · ")
}

/// A completion budget and where its clock starts on the samples' clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetClock {
    pub secs: u64,
    pub from_ms: u64,
}

impl BudgetClock {
    /// Whole seconds of the budget spent at this sample.
    fn spent_secs(&self, s: &JobSample) -> u64 {
        s.elapsed_ms.saturating_sub(self.from_ms) / 1000
    }

    /// `6s of 7m30s budget` (streaming time when the budget starts later than the samples).
    fn text(&self, s: &JobSample) -> String {
        let spent = duration(self.spent_secs(s) as i64);
        let budget = duration(self.secs as i64);
        if self.from_ms > 0 {
            format!("streaming {spent} of {budget} budget")
        } else {
            format!("{spent} of {budget} budget")
        }
    }
}

fn clock_text(s: &JobSample, budget: Option<BudgetClock>, narrow: bool) -> String {
    let elapsed = duration(s.elapsed_secs() as i64);
    let mut text = match budget {
        Some(b) if b.from_ms > 0 && narrow => b.text(s),
        Some(b) if b.from_ms > 0 => format!("elapsed {elapsed}, {}", b.text(s)),
        Some(b) => b.text(s),
        None => format!("{elapsed} (no budget)"),
    };
    text.push_str(&format!(" · {}", eta_text(s)));
    text
}

/// The dirty rate as the bars show it: labelled when measured before the start (libvirt
/// reports none in pass 1), `unknown` when nothing measured it — never a silent 0.
fn dirty_text(s: &JobSample) -> String {
    match s.dirty_rate_source {
        DirtyRateSource::Unknown => "unknown".to_string(),
        DirtyRateSource::MeasuredBeforeStart => {
            format!("{}/s (measured before start)", bytes(s.dirty_rate_bps))
        }
        DirtyRateSource::Libvirt | DirtyRateSource::KubevirtMetrics => {
            format!("{}/s", bytes(s.dirty_rate_bps))
        }
    }
}

/// How long the migration has left, as far as the rates tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eta {
    Secs(u64),
    /// The dirty rate is unknown: at least this long (this pass alone).
    AtLeast(u64),
    /// Dirtying keeps up with sending: pre-copy alone will not finish.
    Never,
    /// Nothing is being sent yet.
    Unknown,
}

/// Seconds until the remaining memory is sent at the current rates. In pre-copy the passes
/// still to come count: in pass 1 what the guest dirties while the bulk copy runs (from the
/// rate measured before the start) is sent again in the passes after; later, the net rate is
/// what is sent minus what is dirtied again (the sum of the shrinking passes).
pub fn eta(s: &JobSample) -> Eta {
    let remaining = s.remaining();
    if remaining == 0 {
        return Eta::Secs(0);
    }
    if s.memory_bps == 0 {
        return Eta::Unknown;
    }
    match s.mode {
        Mode::PostCopy | Mode::Paused => Eta::Secs(remaining.div_ceil(s.memory_bps)),
        Mode::PreCopy if !s.dirty_rate_source.is_known() => {
            Eta::AtLeast(remaining.div_ceil(s.memory_bps))
        }
        Mode::PreCopy if s.iteration == Some(1) => {
            match crate::migration::predict::precopy_eta_secs(
                remaining,
                s.total(),
                s.elapsed_ms as f64 / 1000.0,
                s.dirty_rate_bps,
                s.memory_bps,
            ) {
                Some(secs) => Eta::Secs(secs.ceil() as u64),
                None => Eta::Never,
            }
        }
        Mode::PreCopy => match s.memory_bps.saturating_sub(s.dirty_rate_bps) {
            0 => Eta::Never,
            net => Eta::Secs(remaining.div_ceil(net)),
        },
    }
}

/// [`eta`] in seconds; `None` unless known.
pub fn eta_secs(s: &JobSample) -> Option<u64> {
    match eta(s) {
        Eta::Secs(secs) => Some(secs),
        _ => None,
    }
}

/// What is left, live, in words that cannot be taken for the prediction made before the
/// start (`predicted …`): `about 12s left`.
fn eta_text(s: &JobSample) -> String {
    match eta(s) {
        Eta::Secs(secs) => format!("about {} left", duration(secs as i64)),
        Eta::AtLeast(secs) => format!(
            "at least {} left (dirty rate unknown)",
            duration(secs as i64)
        ),
        Eta::Unknown => "time left unknown".to_string(),
        Eta::Never => "time left: never at these rates".to_string(),
    }
}

/// The plain line printed once a second off a terminal; starts with `migration active`.
pub fn status_line(s: &JobSample, passes: &PassTracker, budget: Option<BudgetClock>) -> String {
    let mut parts = vec![
        format!(
            "migration active, transferred {} of {}",
            bytes(s.memory_processed),
            bytes(s.total())
        ),
        format!("{}/s", bytes(s.memory_bps)),
        format!("remaining {}", bytes(s.remaining())),
        format!("dirty {}", dirty_text(s)),
    ];
    if passes.pass > 0 {
        parts.push(format!("pass {}", passes.pass));
    }
    if let Some(ms) = s.expected_downtime_ms {
        parts.push(format!("expected downtime {ms} ms"));
    }
    if let Some(t) = s.throttle_percent.filter(|t| *t > 0) {
        parts.push(format!("throttle {t}%"));
    }
    if let Some(r) = s.postcopy_requests.filter(|r| *r > 0) {
        parts.push(format!("postcopy requests {r}"));
    }
    let elapsed = duration(s.elapsed_secs() as i64);
    parts.push(match budget {
        Some(b) if b.from_ms > 0 => format!("elapsed {elapsed}, {}", b.text(s)),
        Some(b) => format!("elapsed {elapsed} of {}", duration(b.secs as i64)),
        None => format!("elapsed {elapsed}"),
    });
    parts.push(eta_text(s));
    parts.push(format!("mode {}", s.mode.as_str()));
    parts.join(", ")
}

/// Cells per sparkline on a terminal `cols` wide: what the label and the values beside it
/// leave, between 10 and 60.
pub fn spark_width(cols: u16) -> usize {
    usize::from(cols).saturating_sub(48).clamp(10, 60)
}

/// The sparklines under the bars: remaining memory (by the largest value per cell, so each
/// pass's start shows), the pass numbers where passes start, then the transfer rate and the
/// dirty rate on one scale (by the mean per cell), each labelled with its current value
/// (`now`'s: the last sample, not the last point, which may be several merged; else the last
/// point's). Empty lines before the first point. Pure.
pub fn trend_lines(
    points: &[SeriesPoint],
    now: Option<SeriesPoint>,
    width: usize,
    charset: Charset,
) -> [String; TREND_LINES] {
    let Some(last) = now.or(points.last().copied()) else {
        return Default::default();
    };
    if points.is_empty() {
        return Default::default();
    }
    let remaining: Vec<u64> = points.iter().map(|p| p.remaining_bytes).collect();
    let peak = remaining.iter().copied().max().unwrap_or(0);
    let memory = spark::sparkline(&remaining, width, Bucket::Max, charset);
    let passes: Vec<Option<u64>> = points.iter().map(|p| p.pass).collect();
    let sent: Vec<u64> = points.iter().map(|p| p.transfer_rate_bps).collect();
    let dirty: Vec<u64> = points
        .iter()
        .map(|p| p.dirty_rate_bps.unwrap_or(0))
        .collect();
    let (sent_line, dirty_line) = spark::pair(&sent, &dirty, width, Bucket::Mean, charset);
    let cells = memory.chars().count();
    let dirty_now = last
        .dirty_rate_bps
        .map_or("unknown".to_string(), |d| format!("{}/s", bytes(d)));
    [
        format!(
            "  {:<13}{memory}  {} now, peak {}",
            "memory left",
            bytes(last.remaining_bytes),
            bytes(peak)
        ),
        format!("  {:<13}{}", "pass", spark::pass_marks(&passes, width))
            .trim_end()
            .to_string(),
        format!(
            "  {:<13}{sent_line:<cells$}  {}/s",
            "sending",
            bytes(last.transfer_rate_bps)
        ),
        format!("  {:<13}{dirty_line:<cells$}  {dirty_now}", "dirtying"),
    ]
}

/// The summary's sparkline of remaining memory (`None` without points): the line, its peak
/// and the passes seen in the samples ("sampled": libvirt may run short last passes after the
/// last sample, so the summary's `passes:` row, libvirt's count, can be larger).
pub fn summary_trend(points: &[SeriesPoint], width: usize, charset: Charset) -> Option<String> {
    if points.is_empty() {
        return None;
    }
    let remaining: Vec<u64> = points.iter().map(|p| p.remaining_bytes).collect();
    let peak = remaining.iter().copied().max().unwrap_or(0);
    let line = spark::sparkline(&remaining, width, Bucket::Max, charset);
    let passes = points.iter().filter_map(|p| p.pass).max();
    Some(match passes {
        Some(n) if n > 1 => format!("{line}  (peak {}, {n} passes sampled)", bytes(peak)),
        _ => format!("{line}  (peak {})", bytes(peak)),
    })
}

/// The end summary: outcome, total time, downtime, data moved, passes, decisions.
pub fn summary_text(style: &Style, title: &str, summary: &Summary) -> String {
    summary_text_with(style, title, summary, None)
}

/// [`summary_text`] with a `memory left` row (a [`summary_trend`]) after the passes.
pub fn summary_text_with(
    style: &Style,
    title: &str,
    summary: &Summary,
    trend: Option<&str>,
) -> String {
    let outcome = summary.outcome.map_or("ended", |o| o.as_str());
    let tone = match summary.outcome {
        Some(crate::migration::Outcome::Succeeded) => Tone::Good,
        Some(_) => Tone::Bad,
        None => Tone::Plain,
    };
    // The title (a domain's or VMI's name), libvirt's message and the events are foreign
    // text (escaping is idempotent: an escaped title stays as it is).
    let p = crate::text::printable;
    if summary.outcome == Some(crate::migration::Outcome::Refused) {
        let mut out = format!(
            "{}: migration {} (not started)\n",
            p(title),
            style.paint(outcome, tone)
        );
        if !summary.message.is_empty() {
            out.push_str(&format!("  {}\n", p(&summary.message)));
        }
        if let Some(cause) = &summary.cause {
            out.push_str(&format!("  {:<16}{}\n", "cause:", p(cause)));
        }
        return out;
    }
    let mut out = format!(
        "{}: migration {} in {} ({})\n",
        p(title),
        style.paint(outcome, tone),
        seconds(summary.total_ms),
        summary.final_mode.as_str()
    );
    if !summary.message.is_empty() {
        out.push_str(&format!("  {}\n", p(&summary.message)));
    }
    let mut row = |label: &str, value: String| {
        out.push_str(&format!("  {:<16}{value}\n", format!("{label}:")));
    };
    if let Some(cause) = &summary.cause {
        row("cause", p(cause));
    }
    row("total time", seconds(summary.total_ms));
    if let Some(job) = summary.job_ms {
        row("libvirt job", seconds(job));
    }
    // A migration that did not complete had no switchover, so no downtime to report.
    let completed = summary
        .outcome
        .is_none_or(|o| o == crate::migration::Outcome::Succeeded);
    row(
        "downtime",
        match summary.downtime_ms {
            Some(ms) => format!("{ms} ms"),
            None if completed => "unknown".to_string(),
            None => "not applicable (the migration did not complete)".to_string(),
        },
    );
    row(
        "data moved",
        if summary.memory_total > 0 {
            format!(
                "{} (guest memory {})",
                bytes(summary.data_processed),
                bytes(summary.memory_total)
            )
        } else {
            bytes(summary.data_processed)
        },
    );
    if let Some(n) = summary.iterations {
        row("passes", n.to_string());
    }
    if let Some(trend) = trend {
        row("memory left", trend.to_string());
    }
    if let Some(r) = summary.postcopy_requests.filter(|r| *r > 0) {
        row("post-copy reqs", r.to_string());
    }
    let decisions: Vec<&TimedEvent> = summary
        .events
        .iter()
        .filter(|e| crate::migration::sample::is_decision(&e.text))
        .collect();
    if decisions.is_empty() {
        if summary.outcome == Some(crate::migration::Outcome::Succeeded) {
            out.push_str("  decisions:      none (pre-copy converged on its own)\n");
        } else {
            out.push_str("  decisions:      none\n");
        }
    } else {
        out.push_str("  decisions:\n");
        for e in decisions {
            out.push_str(&format!("    [{}] {}\n", seconds(e.at_ms), p(&e.text)));
        }
    }
    out
}

/// `7.4s` under a minute, else `2m05s`.
fn seconds(ms: u64) -> String {
    if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        duration((ms / 1000) as i64)
    }
}

#[derive(Serialize)]
struct JsonLine<'a, T: Serialize> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(flatten)]
    body: &'a T,
}

fn write_json_line<T: Serialize>(
    out: &mut Box<dyn Write + Send>,
    kind: &str,
    body: &T,
) -> io::Result<()> {
    let line = super::json_line(&JsonLine { kind, body }).map_err(io::Error::other)?;
    writeln!(out, "{line}")?;
    out.flush()
}

/// How often drivers sample a job (KubeVirt's monitor period).
pub use crate::migration::driver::SAMPLE_PERIOD;

/// The loop in `migration::driver` draws through this.
impl crate::migration::driver::Progress for ProgressView {
    fn sample(&mut self, s: &JobSample) {
        ProgressView::sample(self, s);
    }

    fn event(&mut self, text: &str) {
        ProgressView::event(self, text);
    }

    fn event_at(&mut self, at_ms: u64, text: &str) {
        ProgressView::event_at(self, at_ms, text);
    }

    fn set_budget(&mut self, budget_secs: Option<u64>) {
        ProgressView::set_budget(self, budget_secs);
    }

    fn advise(&mut self, advice: &Advice) {
        ProgressView::event(self, &advice_line(advice));
    }

    fn events(&self) -> &[TimedEvent] {
        ProgressView::events(self)
    }
}

/// The controller's advice on a decision the driver could not take: on KubeVirt, a
/// migration that does not converge and lacks post-copy.
fn advice_line(a: &Advice) -> String {
    printable_lines(&match a.decision {
        Decision::StartPostCopy => format!("not converging: consider --allow-postcopy ({})", a.why),
        d => format!(
            "advice only: vmctl cannot {} from outside this migration ({})",
            action(d),
            a.why
        ),
    })
}

/// A decision in words.
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
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::migration::Outcome;

    const MIB: u64 = 1 << 20;

    /// A writer whose bytes the test can read back.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| io::Error::other("poisoned"))?
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        fn text(&self) -> String {
            let bytes = self.0.lock().map(|b| b.clone()).unwrap_or_default();
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }

    fn sample(ms: u64, remaining_mib: u64, iteration: u64) -> JobSample {
        JobSample {
            elapsed_ms: ms,
            memory_total: 256 * MIB,
            data_total: 256 * MIB,
            memory_remaining: remaining_mib * MIB,
            data_remaining: remaining_mib * MIB,
            memory_processed: (256 - remaining_mib.min(256)) * MIB,
            data_processed: (256 - remaining_mib.min(256)) * MIB,
            memory_bps: 32 * MIB,
            dirty_rate_bps: 16 * MIB,
            dirty_rate_source: if iteration == 1 {
                DirtyRateSource::MeasuredBeforeStart
            } else {
                DirtyRateSource::Libvirt
            },
            iteration: Some(iteration),
            expected_downtime_ms: Some(300),
            ..Default::default()
        }
    }

    /// A pre-copy saw-tooth: pass 1 from 256 MiB to 40, pass 2 from 64 to 12, pass 3 from
    /// 20 to 2, one sample every 400 ms; the dirty rate climbs from 8 to 24 MiB/s.
    fn saw_tooth() -> Vec<JobSample> {
        let mut out = Vec::new();
        let passes: [(u64, &[u64]); 3] = [
            (1, &[256, 232, 208, 184, 160, 136, 112, 88, 64, 40]),
            (2, &[64, 54, 44, 34, 24, 12]),
            (3, &[20, 14, 8, 2]),
        ];
        for (pass, remaining) in passes {
            for rem in remaining {
                let mut s = sample(out.len() as u64 * 400, *rem, pass);
                s.dirty_rate_bps = (8 + 8 * (pass - 1)) * MIB;
                out.push(s);
            }
        }
        out
    }

    fn trend_shown(view: &ProgressView) -> Vec<String> {
        match &view.sink {
            Sink::Bars(bars) => bars.trend.iter().map(ProgressBar::message).collect(),
            _ => Vec::new(),
        }
    }

    #[test]
    fn on_a_terminal_the_sparklines_follow_the_samples() {
        let mut view = ProgressView::hidden_bars("vm", Some(150), Charset::Unicode, 40);
        assert!(trend_shown(&view).iter().all(String::is_empty));
        let samples = saw_tooth();
        view.sample(&samples[0]);
        let first = trend_shown(&view);
        assert_eq!(first[0], "  memory left  █  256.0 MiB now, peak 256.0 MiB");
        for s in &samples[1..] {
            view.sample(s);
        }
        let shown = trend_shown(&view);
        assert_ne!(shown, first);
        assert_eq!(
            shown,
            [
                "  memory left  █▇▇▆▅▅▄▃▃▂▃▂▂▂▂▁▂▁▁▁  2.0 MiB now, peak 256.0 MiB",
                "  pass         1         2     3",
                "  sending      ████████████████████  32.0 MiB/s",
                "  dirtying     ▃▃▃▃▃▃▃▃▃▃▅▅▅▅▅▅▆▆▆▆  24.0 MiB/s",
            ]
        );
        assert_eq!(view.history().len(), 20);
        // Plain lines off a terminal are untouched: no sparkline there.
        let out = Captured::default();
        let mut plain =
            ProgressView::lines_to(Style { color: false }, "vm", None, Box::new(out.clone()));
        for s in &samples {
            plain.sample(s);
        }
        assert!(!out.text().contains('▁') && !out.text().contains("memory left"));
    }

    #[test]
    fn the_trend_is_ascii_without_a_utf8_locale_and_stays_bounded() {
        let mut view = ProgressView::hidden_bars("vm", None, Charset::Ascii, 12);
        // Ten hours of a sample every 400 ms, the saw-tooth over and over.
        let tooth = saw_tooth();
        for i in 0..90_000u64 {
            let mut s = tooth[(i % 20) as usize].clone();
            s.elapsed_ms = i * 400;
            s.iteration = Some(i / 20 + 1);
            view.sample(&s);
        }
        assert!(view.history().len() <= HISTORY_POINTS);
        let shown = trend_shown(&view);
        assert!(shown.iter().all(|l| l.is_ascii()), "{shown:?}");
        // Every cell holds a pass's start: the peaks survive the merging.
        assert!(
            shown[0].starts_with("  memory left  ############  "),
            "{}",
            shown[0]
        );
        assert!(shown[3].contains("24.0 MiB/s"), "{}", shown[3]);
    }

    #[test]
    fn the_summary_on_a_terminal_keeps_a_sparkline_of_remaining_memory() {
        let mut view = ProgressView::hidden_bars("vm", None, Charset::Unicode, 40);
        for s in saw_tooth() {
            view.sample(&s);
        }
        let trend = summary_trend(&view.history(), 40, Charset::Unicode);
        assert_eq!(
            trend.as_deref(),
            Some("█▇▇▆▅▅▄▃▃▂▃▂▂▂▂▁▂▁▁▁  (peak 256.0 MiB, 3 passes sampled)")
        );
        let summary = Summary {
            outcome: Some(Outcome::Succeeded),
            total_ms: 8_000,
            iterations: Some(3),
            ..Default::default()
        };
        let style = Style { color: false };
        let text = summary_text_with(&style, "vm", &summary, trend.as_deref());
        assert!(
            text.contains(
                "  passes:         3
  memory left:    █▇▇▆▅▅▄▃▃▂▃▂▂▂▂▁▂▁▁▁  (peak 256.0 MiB, 3 passes sampled)
"
            ),
            "{text}"
        );
        // Off a terminal the summary has no such row.
        assert!(!summary_text(&style, "vm", &summary).contains("memory left"));
        assert_eq!(summary_trend(&[], 40, Charset::Unicode), None);
    }

    /// The terminal view as indicatif draws it (the bars approximated: `=` filled, `>` head).
    fn frame(view: &ProgressView) -> String {
        let Sink::Bars(bars) = &view.sink else {
            return String::new();
        };
        let bar = |b: &ProgressBar| {
            let len = b.length().unwrap_or(1).max(1);
            let filled = (b.position().min(len) * 32 / len) as usize;
            let head = if filled < 32 { ">" } else { "" };
            format!(
                "{}{head}{}",
                "=".repeat(filled),
                " ".repeat(32 - filled - head.len())
            )
        };
        let mut out = vec![
            format!(
                "{:<22} [{}] {}",
                bars.pass.prefix(),
                bar(&bars.pass),
                bars.pass.message()
            ),
            format!("  {}", bars.rates.message()),
            format!(
                "{:<22} [{}] {}",
                bars.clock.prefix(),
                bar(&bars.clock),
                bars.clock.message()
            ),
        ];
        out.extend(bars.trend.iter().map(ProgressBar::message));
        out.join("\n") + "\n"
    }

    /// docs/pictures/migrate-sparklines.txt is this rendering (`VMCTL_BLESS=1` rewrites it).
    #[test]
    fn the_picture_in_the_docs_is_this_rendering() {
        let mut text = String::from(
            "# `vmctl migrate` on a terminal (UTF-8 locale), pass 3 of a pre-copy migration.\n\
             # Made by the unit test render::progress::tests::the_picture_in_the_docs_is_this_rendering\n\
             # (VMCTL_BLESS=1 cargo test --lib the_picture_in_the_docs) from a scripted saw-tooth;\n\
             # the bars are approximated there, the sparkline lines are the view's own.\n\n",
        );
        let mut view =
            ProgressView::hidden_bars("labvm -> lab-dst", Some(150), Charset::Unicode, 40);
        let samples = saw_tooth();
        for s in &samples[..samples.len() - 1] {
            view.sample(s);
        }
        text.push_str("[0.0s] mode: pre-copy\n");
        text.push_str(&frame(&view));
        let mut ascii =
            ProgressView::hidden_bars("labvm -> lab-dst", Some(150), Charset::Ascii, 40);
        for s in &samples[..samples.len() - 1] {
            ascii.sample(s);
        }
        text.push_str("\n# The same with LANG=C (ASCII ramp _.-~=+*#):\n\n");
        text.push_str(&frame(&ascii));
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/pictures/migrate-sparklines.txt"
        );
        if std::env::var_os("VMCTL_BLESS").is_some() {
            std::fs::write(path, &text).unwrap();
        }
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert_eq!(on_disk, text, "rerun with VMCTL_BLESS=1 to update {path}");
    }

    #[test]
    fn a_budget_that_starts_with_streaming_is_shown_as_kubevirt_counts_it() {
        // Created at 0, streaming from 14 s, sampled at 20 s: 6 s of the 450 s budget, the
        // same 7m30s the start announced (not 7m44s on the creation clock).
        let mut passes = PassTracker::default();
        let s = sample(20_000, 64, 1);
        passes.observe(&s);
        let budget = Some(BudgetClock {
            secs: 450,
            from_ms: 14_000,
        });
        let line = status_line(&s, &passes, budget);
        assert!(
            line.contains("elapsed 20s, streaming 6s of 7m30s budget"),
            "{line}"
        );
        assert!(
            clock_text(&s, budget, false).starts_with("elapsed 20s, streaming 6s of 7m30s budget")
        );
    }

    #[test]
    fn plain_line_is_greppable() {
        let mut passes = PassTracker::default();
        let s = sample(12_400, 64, 1);
        passes.observe(&s);
        assert_eq!(
            status_line(
                &s,
                &passes,
                Some(BudgetClock {
                    secs: 150,
                    from_ms: 0
                })
            ),
            "migration active, transferred 192.0 MiB of 256.0 MiB, 32.0 MiB/s, remaining 64.0 MiB, \
             dirty 16.0 MiB/s (measured before start), pass 1, expected downtime 300 ms, \
             elapsed 12s of 2m30s, about 17s left, mode pre-copy"
        );
    }

    #[test]
    fn pass_1_shows_the_measured_rate_or_unknown_and_its_eta_counts_dirtying() {
        // 64 MiB left at 32 MiB/s: 2 s; the guest dirtied 16 MiB/s for the 14.4 s of pass 1:
        // 230 MiB to send again at 16 MiB/s net: 14.4 s more. Not the 2 s of pass 1 alone.
        let s = sample(12_400, 64, 1);
        assert_eq!(eta(&s), Eta::Secs(17));
        let mut unknown = s.clone();
        unknown.dirty_rate_bps = 0;
        unknown.dirty_rate_source = DirtyRateSource::Unknown;
        assert_eq!(eta(&unknown), Eta::AtLeast(2));
        let line = status_line(&unknown, &PassTracker::default(), None);
        assert!(line.contains("dirty unknown,"), "{line}");
        assert!(
            line.contains("at least 2s left (dirty rate unknown)"),
            "{line}"
        );
        let style = Style { color: false };
        assert!(rates_text(&style, &unknown).contains("vs dirtying unknown"));
        assert!(rates_text(&style, &s).contains("dirtying 16.0 MiB/s (measured before start)"));
        // From pass 2 libvirt's own figure, unlabelled.
        let later = sample(20_000, 64, 2);
        assert!(rates_text(&style, &later).contains("vs dirtying 16.0 MiB/s ·"));
    }

    #[test]
    fn one_line_per_second_and_events_in_between() {
        let out = Captured::default();
        let mut view = ProgressView::lines_to(
            Style { color: false },
            "vm",
            Some(150),
            Box::new(out.clone()),
        );
        for (ms, rem) in [
            (400, 250),
            (800, 240),
            (1200, 230),
            (1600, 220),
            (2000, 210),
        ] {
            view.sample(&sample(ms, rem, 1));
        }
        view.event("raise max downtime to 500 ms");
        view.sample(&sample(2400, 200, 1));
        let text = out.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "[0.4s] mode: pre-copy");
        assert!(lines[1].starts_with("migration active, transferred 6.0 MiB of 256.0 MiB"));
        assert!(lines[2].contains("remaining 230.0 MiB"), "{}", lines[2]);
        assert!(lines[3].contains("remaining 210.0 MiB"), "{}", lines[3]);
        assert_eq!(lines[4], "[2.0s] raise max downtime to 500 ms");
        assert_eq!(lines.len(), 5, "{text}");
        assert_eq!(view.events().len(), 2);
    }

    #[test]
    fn mode_changes_are_events() {
        let out = Captured::default();
        let mut view =
            ProgressView::lines_to(Style { color: false }, "vm", None, Box::new(out.clone()));
        view.sample(&sample(400, 100, 3));
        let mut post = sample(900, 50, 3);
        post.mode = Mode::PostCopy;
        post.postcopy_requests = Some(12);
        view.sample(&post);
        let text = out.text();
        assert!(text.contains("[0.9s] mode: post-copy (the guest runs on the destination now"));
        assert!(text.contains("postcopy requests 12, elapsed 0s, about 2s left, mode post-copy"));
    }

    #[test]
    fn eta_needs_sending_faster_than_dirtying() {
        let mut s = sample(1000, 64, 2);
        assert_eq!(eta_secs(&s), Some(4));
        s.dirty_rate_bps = 40 * MIB;
        assert_eq!(eta_secs(&s), None);
        s.mode = Mode::PostCopy;
        assert_eq!(eta_secs(&s), Some(2));
        s.memory_remaining = 0;
        assert_eq!(eta_secs(&s), Some(0));
    }

    #[test]
    fn json_lines_carry_samples_events_and_summary() {
        let out = Captured::default();
        let mut view = ProgressView::json_to("vm", Some(150), Box::new(out.clone()));
        view.sample(&sample(400, 100, 1));
        view.event("switch to post-copy");
        view.finish(&Summary {
            outcome: Some(Outcome::Succeeded),
            ..Default::default()
        });
        let lines: Vec<serde_json::Value> = out
            .text()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_default())
            .collect();
        let kinds: Vec<&str> = lines.iter().filter_map(|v| v["type"].as_str()).collect();
        assert_eq!(kinds, ["event", "sample", "event", "summary"]);
        assert_eq!(lines[1]["memoryRemaining"], 100 * MIB);
        assert_eq!(lines[1]["mode"], "pre-copy");
        assert_eq!(lines[2]["text"], "switch to post-copy");
        assert_eq!(lines[3]["outcome"], "succeeded");
    }

    #[test]
    fn passes_follow_the_saw_tooth() {
        let mut passes = PassTracker::default();
        let trace = [
            (256, 1),
            (100, 1),
            (5, 1),
            (40, 2),
            (10, 2),
            (12, 3),
            (2, 3),
        ];
        let opened: Vec<bool> = trace
            .iter()
            .map(|(rem, it)| passes.observe(&sample(0, *rem, *it)))
            .collect();
        assert_eq!(opened, [false, false, false, true, false, true, false]);
        assert_eq!((passes.pass, passes.start_remaining), (3, 12 * MIB));
        assert_eq!(passes.previous_start, Some(40 * MIB));
    }

    #[test]
    fn passes_without_iteration_numbers_are_inferred_from_jumps() {
        let mut passes = PassTracker::default();
        let mut opened = Vec::new();
        for rem in [256, 100, 5, 40, 10, 10, 12, 2] {
            let mut s = sample(0, rem, 0);
            s.iteration = None;
            opened.push(passes.observe(&s));
        }
        // 10 -> 12 MiB is a 2 MiB rise, under the threshold (1% of 256 MiB = 2.56 MiB): same pass.
        assert_eq!(
            opened,
            [false, false, false, true, false, false, false, false]
        );
        assert_eq!(passes.pass, 2);
    }

    #[test]
    fn summary_lists_decisions() {
        let summary = Summary {
            outcome: Some(Outcome::Succeeded),
            cause: Some("succeeded".into()),
            message: "the guest runs on lab-dst".into(),
            total_ms: 15_600,
            job_ms: None,
            downtime_ms: Some(5),
            data_processed: 412 * MIB,
            memory_total: 256 * MIB,
            iterations: Some(4),
            final_mode: Mode::PostCopy,
            postcopy_requests: Some(310),
            events: vec![
                TimedEvent {
                    at_ms: 0,
                    text: "mode: pre-copy".into(),
                },
                TimedEvent {
                    at_ms: 12_400,
                    text: "not converging -> switch to post-copy".into(),
                },
            ],
        };
        let text = summary_text(&Style { color: false }, "labvm -> dst", &summary);
        assert_eq!(
            text,
            "labvm -> dst: migration succeeded in 15.6s (post-copy)\n  the guest runs on lab-dst\n  \
             cause:          succeeded\n  total time:     15.6s\n  downtime:       5 ms\n  \
             data moved:     412.0 MiB (guest memory 256.0 MiB)\n  passes:         4\n  \
             post-copy reqs: 310\n  decisions:\n    [12.4s] not converging -> switch to post-copy\n"
        );
    }

    /// An aborted or failed migration did not converge "on its own", and had no downtime to
    /// measure (issue 15, seen on the lab).
    #[test]
    fn a_migration_that_did_not_complete_claims_no_convergence_and_no_downtime() {
        let summary = |outcome| Summary {
            outcome: Some(outcome),
            cause: None,
            message: String::new(),
            total_ms: 3_000,
            job_ms: None,
            downtime_ms: None,
            data_processed: 0,
            memory_total: 0,
            iterations: None,
            final_mode: Mode::PreCopy,
            postcopy_requests: None,
            events: vec![],
        };
        let style = Style { color: false };
        for outcome in [Outcome::Aborted, Outcome::Failed] {
            let text = summary_text(&style, "vm", &summary(outcome));
            assert!(!text.contains("converged"), "{text}");
            assert!(text.contains("  decisions:      none\n"), "{text}");
            assert!(
                text.contains("downtime:       not applicable (the migration did not complete)"),
                "{text}"
            );
        }
        let text = summary_text(&style, "vm", &summary(Outcome::Succeeded));
        assert!(
            text.contains("none (pre-copy converged on its own)"),
            "{text}"
        );
        assert!(text.contains("downtime:       unknown"), "{text}");
    }

    #[test]
    fn the_measurement_and_the_prediction_are_not_decisions_and_a_refusal_says_not_started() {
        let event = |text: &str| TimedEvent {
            at_ms: 0,
            text: text.into(),
        };
        let mut s = Summary {
            outcome: Some(Outcome::Succeeded),
            events: vec![
                event(
                    "measuring the guest's dirty rate for 3 s (QEMU page sampling) before starting",
                ),
                event("dirty rate measured before start: 4.0 MiB/s (page sampling: a lower bound)"),
                event("prediction: converges in ~4 passes, ~21 s"),
                event("mode: pre-copy"),
            ],
            ..Default::default()
        };
        let style = Style { color: false };
        let text = summary_text(&style, "vm", &s);
        assert!(
            text.contains("none (pre-copy converged on its own)"),
            "{text}"
        );
        s.events
            .push(event("not converging: ... -> raise max downtime to 500 ms"));
        let text = summary_text(&style, "vm", &s);
        assert!(
            text.contains("  decisions:\n    [0.0s] not converging"),
            "{text}"
        );
        assert!(!text.contains("prediction"), "{text}");

        let refused = Summary {
            outcome: Some(Outcome::Refused),
            cause: Some("not-converging".into()),
            message: "not started: will not converge".into(),
            ..Default::default()
        };
        let text = summary_text(&style, "vm", &refused);
        assert!(
            text.starts_with("vm: migration refused (not started)\n"),
            "{text}"
        );
        assert!(
            !text.contains("total time") && !text.contains("downtime"),
            "{text}"
        );
    }

    #[test]
    fn the_summary_escapes_libvirt_text_and_the_domain_name() {
        let summary = Summary {
            outcome: Some(Outcome::Failed),
            cause: Some("connection-failure\u{1b}[2J".into()),
            message: "operation failed: \u{1b}]0;owned\u{7}\u{202e}txt".into(),
            events: vec![TimedEvent {
                at_ms: 1500,
                text: "abort: \u{9b}31m".into(),
            }],
            ..Default::default()
        };
        let text = summary_text(&Style { color: false }, "dom\u{1b}[31m", &summary);
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        for shown in [
            "dom\\u{1b}[31m",
            "\\u{1b}]0;owned\\u{7}",
            "\\u{9b}31m",
            "connection-failure\\u{1b}[2J",
        ] {
            assert!(text.contains(shown), "{shown} in {text}");
        }
    }

    #[test]
    fn advice_names_the_decision_the_driver_could_not_take_and_escapes_the_reason() {
        use crate::migration::controller::Decision;
        use crate::migration::driver::Advice;
        let postcopy = Advice {
            decision: Decision::StartPostCopy,
            why: "dirty rate above throughput".into(),
        };
        assert_eq!(
            advice_line(&postcopy),
            "not converging: consider --allow-postcopy (dirty rate above throughput)"
        );
        let pause = Advice {
            decision: Decision::Pause,
            why: "bad\x1b[2Jtext".into(),
        };
        let line = advice_line(&pause);
        assert!(
            line.starts_with(
                "advice only: vmctl cannot pause the guest from outside this migration ("
            ),
            "{line}"
        );
        assert!(!line.contains('\x1b'), "{line:?}");
    }
}
