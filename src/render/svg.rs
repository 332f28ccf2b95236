//! Inline SVG for the HTML reports (`-o html`): a time axis with the events of a timeline
//! as marks, and sparklines (one or several named series on one scale, min and max
//! labelled). Pure: numbers and labels in, markup out; no clock, no I/O.
//!
//! Built with maud like the pages around them, so every label (a VMI's name, an event's
//! reason) is escaped by construction; the numbers are formatted here. The elements carry
//! explicit end tags, which HTML (foreign content) and XML parsers both read the same way.

use maud::{Markup, html};

use crate::text as fmt;

/// A linear map from a data range (the domain) onto a pixel range. A domain of one value
/// (a single sample, a flat series) maps onto the middle of the range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    d0: f64,
    d1: f64,
    r0: f64,
    r1: f64,
}

impl Scale {
    pub fn new(domain: (f64, f64), range: (f64, f64)) -> Scale {
        Scale {
            d0: domain.0,
            d1: domain.1,
            r0: range.0,
            r1: range.1,
        }
    }

    pub fn map(&self, v: f64) -> f64 {
        let span = self.d1 - self.d0;
        if !span.is_finite() || span.abs() < f64::EPSILON {
            return (self.r0 + self.r1) / 2.0;
        }
        self.r0 + (v - self.d0) / span * (self.r1 - self.r0)
    }
}

/// A coordinate as an attribute value: one decimal at most, never `-0`, `NaN` or `inf`.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "0".into();
    }
    let r = (v * 10.0).round() / 10.0;
    let r = if r == 0.0 { 0.0 } else { r };
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

/// How a chart shows its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A plain number (`12`, `0.25`).
    Number,
    /// Binary bytes (`1.5 GiB`).
    Bytes,
    /// Binary bytes per second (`120.0 MiB/s`).
    BytesPerSecond,
    /// Seconds as a duration (`1m30s`).
    Seconds,
}

impl Unit {
    pub fn label(self, v: f64) -> String {
        match self {
            Unit::Number => {
                let r = (v * 100.0).round() / 100.0;
                let r = if r == 0.0 { 0.0 } else { r };
                let s = format!("{r:.2}");
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            }
            Unit::Bytes => fmt::bytes(v.max(0.0) as u64),
            Unit::BytesPerSecond => format!("{}/s", fmt::bytes(v.max(0.0) as u64)),
            Unit::Seconds => fmt::duration(v.round() as i64),
        }
    }
}

// ------------------------------------------------------------------------ the time axis

/// How a mark on the time axis is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkTone {
    Normal,
    Warning,
    Bad,
}

impl MarkTone {
    fn class(self) -> &'static str {
        match self {
            MarkTone::Normal => "mark",
            MarkTone::Warning => "mark warn",
            MarkTone::Bad => "mark bad",
        }
    }
}

/// One event on the time axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// Seconds from the start of the axis.
    pub offset: f64,
    /// The short label drawn above the mark (the event's number in the table).
    pub label: String,
    /// The whole description, shown as the mark's tooltip.
    pub title: String,
    pub tone: MarkTone,
}

/// The lane (row of labels, 0 nearest the axis) of each label spanning `(left, right)`
/// pixels (in order): the first lane whose last label ends at least `gap` pixels before
/// this one starts; when every lane is taken, the one whose last label ends farthest left
/// (labels overlap, nothing is lost).
pub fn lanes(spans: &[(f64, f64)], gap: f64, max_lanes: usize) -> Vec<usize> {
    let max_lanes = max_lanes.max(1);
    let mut last: Vec<f64> = Vec::new();
    let mut out = Vec::with_capacity(spans.len());
    for &(left, right) in spans {
        let lane = match last.iter().position(|&end| left - end >= gap) {
            Some(i) => i,
            None if last.len() < max_lanes => {
                last.push(f64::NEG_INFINITY);
                last.len() - 1
            }
            None => last
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1))
                .map_or(0, |(i, _)| i),
        };
        last[lane] = right;
        out.push(lane);
    }
    out
}

/// Runs of marks (indexes into `xs`, which are in order) that lie within `gap` pixels of
/// the run's first: drawn as one mark, so a burst of events in one second is one label.
pub fn clusters(xs: &[f64], gap: f64) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, &x) in xs.iter().enumerate() {
        match out.last_mut() {
            Some(run) if x - xs[run.start] <= gap => run.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// About how wide a label is drawn, in pixels (11 px text).
fn label_width(label: &str) -> f64 {
    label.chars().count() as f64 * 6.5 + 2.0
}

/// A tick step (seconds) that gives at most about `max_ticks` ticks over `span`.
pub fn tick_step(span: f64, max_ticks: usize) -> f64 {
    const STEPS: [f64; 16] = [
        1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0,
        21600.0, 86400.0,
    ];
    let max_ticks = max_ticks.max(1) as f64;
    STEPS
        .iter()
        .copied()
        .find(|s| span / s <= max_ticks)
        .unwrap_or_else(|| (span / max_ticks / 86400.0).ceil().max(1.0) * 86400.0)
}

const LANE_HEIGHT: f64 = 16.0;
const MAX_LANES: usize = 5;

/// The marks of one run on the axis: its label (`3` or `3–7`), tooltip and tone.
struct Run {
    x: f64,
    label: String,
    title: String,
    tone: MarkTone,
}

fn runs(marks: &[Mark], xs: &[f64]) -> Vec<Run> {
    clusters(xs, 10.0)
        .into_iter()
        .map(|r| {
            let group = &marks[r.clone()];
            let label = match (group.first(), group.last()) {
                (Some(a), Some(b)) if group.len() > 1 => format!("{}–{}", a.label, b.label),
                (Some(a), _) => a.label.clone(),
                _ => String::new(),
            };
            let title = group
                .iter()
                .map(|m| m.title.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            let tone = if group.iter().any(|m| m.tone == MarkTone::Bad) {
                MarkTone::Bad
            } else if group.iter().any(|m| m.tone == MarkTone::Warning) {
                MarkTone::Warning
            } else {
                MarkTone::Normal
            };
            Run {
                x: xs[r.start],
                label,
                title,
                tone,
            }
        })
        .collect()
}

/// The events of a timeline (in time order) on a time axis `width` pixels wide: ticks every
/// round interval labelled `+1m30s` from the start (`start_label`, e.g. `02:20:30 UTC`,
/// under the axis), one mark per event with its label above — events closer than a few
/// pixels share one mark labelled `3–7` —, warnings and failures in their tone, the
/// descriptions as the mark's tooltip.
pub fn time_axis_svg(marks: &[Mark], width: f64, start_label: &str) -> Markup {
    let width = if width.is_finite() {
        width.max(120.0)
    } else {
        800.0
    };
    let (left, right) = (16.0, width - 24.0);
    let span = marks
        .iter()
        .map(|m| m.offset)
        .filter(|o| o.is_finite())
        .fold(0.0_f64, f64::max);
    let end = if span > 0.0 { span } else { 1.0 };
    let x = Scale::new((0.0, end), (left, right));
    let xs: Vec<f64> = marks
        .iter()
        .map(|m| x.map(if m.offset.is_finite() { m.offset } else { 0.0 }))
        .collect();
    let runs = runs(marks, &xs);
    let spans: Vec<(f64, f64)> = runs
        .iter()
        .map(|r| {
            let w = label_width(&r.label);
            (r.x - w / 2.0, r.x + w / 2.0)
        })
        .collect();
    let lane_of = lanes(&spans, 4.0, MAX_LANES);
    let used = lane_of.iter().copied().max().map_or(1, |l| l + 1);
    let axis_y = 8.0 + used as f64 * LANE_HEIGHT + 6.0;
    let height = axis_y + 34.0;
    let step = tick_step(end, 8);
    let ticks: Vec<f64> = (0..=((end / step).floor() as usize).min(1000))
        .map(|i| i as f64 * step)
        .collect();
    let label = format!(
        "time axis of {} events over {}",
        marks.len(),
        fmt::duration(span.round() as i64)
    );
    html! {
        svg class="axis" width=(num(width)) height=(num(height))
            viewBox=(format!("0 0 {} {}", num(width), num(height))) role="img"
            aria-label=(label) {
            line class="axis-line" x1=(num(left)) y1=(num(axis_y)) x2=(num(right))
                y2=(num(axis_y)) {}
            @for t in &ticks {
                @let tx = x.map(*t);
                line class="tick" x1=(num(tx)) y1=(num(axis_y)) x2=(num(tx))
                    y2=(num(axis_y + 5.0)) {}
                text class="tick-label" x=(num(tx)) y=(num(axis_y + 17.0))
                    text-anchor="middle" {
                    (format!("+{}", fmt::duration(t.round() as i64)))
                }
            }
            text class="tick-label" x=(num(left)) y=(num(axis_y + 30.0)) text-anchor="start" {
                (start_label)
            }
            @for (r, lane) in runs.iter().zip(&lane_of) {
                @let ly = axis_y - 10.0 - *lane as f64 * LANE_HEIGHT;
                g class=(r.tone.class()) {
                    title { (r.title) }
                    line x1=(num(r.x)) y1=(num(ly + 2.0)) x2=(num(r.x)) y2=(num(axis_y)) {}
                    circle cx=(num(r.x)) cy=(num(axis_y)) r="3.5" {}
                    text x=(num(r.x)) y=(num(ly)) text-anchor="middle" { (r.label) }
                }
            }
        }
    }
}

// ------------------------------------------------------------------------ sparklines

/// One named series of `(x, y)` samples (x: a pass number, seconds…). Samples that are not
/// finite numbers are left out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Series<'a> {
    pub name: &'a str,
    pub points: &'a [(f64, f64)],
}

/// The colours of the series, in order (then again).
const PALETTE: [&str; 4] = ["#1f5fa8", "#c0392b", "#2e8b57", "#8e44ad"];

/// The range of the finite values `f` picks from every series' samples.
fn extent<'a>(
    series: impl Iterator<Item = &'a (f64, f64)>,
    f: impl Fn(&(f64, f64)) -> f64,
) -> Option<(f64, f64)> {
    series.fold(None, |acc, p| {
        let v = f(p);
        if !v.is_finite() {
            return acc;
        }
        Some(match acc {
            None => (v, v),
            Some((lo, hi)) => (lo.min(v), hi.max(v)),
        })
    })
}

/// One series as a sparkline `w`×`h` pixels, its min and max labelled (plain numbers).
pub fn sparkline_svg(points: &[(f64, f64)], w: f64, h: f64) -> Markup {
    sparklines_svg(&[Series { name: "", points }], w, h, Unit::Number)
}

/// Several series on one scale (`unit` labels the values), `w`×`h` pixels: a polyline per
/// series (a dot for a single sample), the min and max of all values labelled on the left,
/// the first and last x below, a legend of the named series above. Without a finite
/// sample the chart says so.
pub fn sparklines_svg(series: &[Series<'_>], w: f64, h: f64, unit: Unit) -> Markup {
    let w = if w.is_finite() { w.max(160.0) } else { 400.0 };
    let h = if h.is_finite() { h.max(48.0) } else { 80.0 };
    let finite = |p: &&(f64, f64)| p.0.is_finite() && p.1.is_finite();
    let all = || series.iter().flat_map(|s| s.points.iter()).filter(finite);
    let named = series.iter().any(|s| !s.name.is_empty());
    let (left, right) = (78.0, w - 10.0);
    let top = if named { 22.0 } else { 8.0 };
    let bottom = h - 18.0;
    let view = format!("0 0 {} {}", num(w), num(h));
    let names: Vec<&str> = series.iter().map(|s| s.name).collect();
    let label = if names.iter().all(|n| n.is_empty()) {
        "sparkline".to_string()
    } else {
        format!("sparkline of {}", names.join(", "))
    };
    let (Some((x0, x1)), Some((y0, y1))) = (extent(all(), |p| p.0), extent(all(), |p| p.1)) else {
        return html! {
            svg class="spark" width=(num(w)) height=(num(h)) viewBox=(view) role="img"
                aria-label=(label) {
                text class="empty" x=(num(w / 2.0)) y=(num(h / 2.0)) text-anchor="middle" {
                    "no samples"
                }
            }
        };
    };
    let sx = Scale::new((x0, x1), (left, right));
    let sy = Scale::new((y0, y1), (bottom, top));
    html! {
        svg class="spark" width=(num(w)) height=(num(h)) viewBox=(view) role="img"
            aria-label=(label) {
            line class="frame" x1=(num(left)) y1=(num(top)) x2=(num(left)) y2=(num(bottom)) {}
            line class="frame" x1=(num(left)) y1=(num(bottom)) x2=(num(right))
                y2=(num(bottom)) {}
            text class="max" x=(num(left - 4.0)) y=(num(top + 4.0)) text-anchor="end" {
                (unit.label(y1))
            }
            text class="min" x=(num(left - 4.0)) y=(num(bottom)) text-anchor="end" {
                (unit.label(y0))
            }
            text class="x-label" x=(num(left)) y=(num(h - 4.0)) text-anchor="start" {
                (Unit::Number.label(x0))
            }
            text class="x-label" x=(num(right)) y=(num(h - 4.0)) text-anchor="end" {
                (Unit::Number.label(x1))
            }
            @for (i, s) in series.iter().enumerate() {
                @let colour = PALETTE[i % PALETTE.len()];
                @let pts: Vec<&(f64, f64)> = s.points.iter().filter(finite).collect();
                @if !s.name.is_empty() {
                    @let lx = left + i as f64 * ((right - left) / series.len().max(1) as f64);
                    line class="legend" x1=(num(lx)) y1="11" x2=(num(lx + 14.0)) y2="11"
                        stroke=(colour) {}
                    text class="legend" x=(num(lx + 18.0)) y="15" { (s.name) }
                }
                @if pts.len() == 1 {
                    circle class="series" cx=(num(sx.map(pts[0].0))) cy=(num(sy.map(pts[0].1)))
                        r="2.5" fill=(colour) {
                        title { (s.name) }
                    }
                } @else if !pts.is_empty() {
                    polyline class="series" fill="none" stroke=(colour)
                        points=(pts.iter().map(|p| format!("{},{}", num(sx.map(p.0)),
                            num(sy.map(p.1)))).collect::<Vec<_>>().join(" ")) {
                        title { (s.name) }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_map_linearly_and_a_single_value_to_the_middle() {
        let s = Scale::new((0.0, 10.0), (100.0, 200.0));
        assert_eq!(s.map(0.0), 100.0);
        assert_eq!(s.map(5.0), 150.0);
        assert_eq!(s.map(10.0), 200.0);
        // y axes run downwards: a reversed range.
        let y = Scale::new((0.0, 4.0), (90.0, 10.0));
        assert_eq!(y.map(4.0), 10.0);
        assert_eq!(y.map(1.0), 70.0);
        let flat = Scale::new((3.0, 3.0), (0.0, 50.0));
        assert_eq!(flat.map(3.0), 25.0);
        assert_eq!(Scale::new((0.0, f64::INFINITY), (0.0, 50.0)).map(1.0), 25.0);
    }

    #[test]
    fn numbers_are_short_and_always_numbers() {
        assert_eq!(num(12.0), "12");
        assert_eq!(num(12.345), "12.3");
        assert_eq!(num(-0.01), "0");
        assert_eq!(num(f64::NAN), "0");
        assert_eq!(num(f64::INFINITY), "0");
        assert_eq!(Unit::Number.label(0.25), "0.25");
        assert_eq!(Unit::Number.label(3.0), "3");
        assert_eq!(Unit::Bytes.label(1.5 * 1024.0 * 1024.0 * 1024.0), "1.5 GiB");
        assert_eq!(Unit::BytesPerSecond.label(2048.0), "2.0 KiB/s");
        assert_eq!(Unit::Seconds.label(90.0), "1m30s");
    }

    #[test]
    fn labels_take_the_first_free_lane() {
        let span = |x: f64| (x - 5.0, x + 5.0);
        // 0 and 5 overlap; 30 is free again in lane 0; 32 overlaps 30 and lane 1 ended at 10.
        let spans: Vec<_> = [0.0, 5.0, 30.0, 32.0].map(span).to_vec();
        assert_eq!(lanes(&spans, 2.0, 3), vec![0, 1, 0, 1]);
        // All overlapping: one lane each, then the lane that ends farthest left again.
        let dense: Vec<_> = [1.0, 2.0, 3.0, 4.0].map(span).to_vec();
        assert_eq!(lanes(&dense, 2.0, 2), vec![0, 1, 0, 1]);
        assert!(lanes(&[], 2.0, 2).is_empty());
    }

    #[test]
    fn bursts_share_a_mark() {
        assert_eq!(
            clusters(&[0.0, 3.0, 10.0, 11.0, 40.0], 10.0),
            vec![0..3, 3..4, 4..5]
        );
        assert!(clusters(&[], 10.0).is_empty());
    }

    #[test]
    fn ticks_are_round_and_few() {
        assert_eq!(tick_step(10.0, 8), 2.0);
        assert_eq!(tick_step(331.0, 8), 60.0);
        assert_eq!(tick_step(3600.0, 8), 600.0);
        assert!(10.0 * 86400.0 / tick_step(10.0 * 86400.0, 8) <= 8.0);
    }

    fn mark(offset: f64, label: &str, title: &str) -> Mark {
        Mark {
            offset,
            label: label.into(),
            title: title.into(),
            tone: MarkTone::Normal,
        }
    }

    #[test]
    fn the_axis_has_a_mark_per_event_and_ticks_from_zero() {
        let marks = vec![
            mark(0.0, "1", "created"),
            Mark {
                tone: MarkTone::Bad,
                ..mark(317.0, "2", "failed")
            },
        ];
        let svg = time_axis_svg(&marks, 600.0, "02:20:30 UTC").into_string();
        assert_eq!(svg.matches("<circle").count(), 2, "{svg}");
        assert!(
            svg.contains("<g class=\"mark\"><title>created</title>"),
            "{svg}"
        );
        assert!(
            svg.contains("<g class=\"mark bad\"><title>failed</title>"),
            "{svg}"
        );
        assert!(svg.contains(">+0s<") && svg.contains(">+5m00s<"), "{svg}");
        assert!(svg.contains(">02:20:30 UTC<"), "{svg}");
        // The first event at the left edge, the last at the right one.
        assert!(svg.contains("cx=\"16\""), "{svg}");
        assert!(svg.contains("cx=\"576\""), "{svg}");
        // No events: an axis still, and no marks.
        let empty = time_axis_svg(&[], 600.0, "").into_string();
        assert!(empty.contains("axis-line") && !empty.contains("<circle"));
        // A burst in the first second and a failure later: two marks, the burst labelled
        // with its range and in its worst tone, its tooltip every event.
        let burst = vec![
            mark(0.0, "1", "a"),
            Mark {
                tone: MarkTone::Warning,
                ..mark(0.0, "2", "b")
            },
            mark(1.0, "3", "c"),
            mark(300.0, "4", "d"),
        ];
        let svg = time_axis_svg(&burst, 600.0, "").into_string();
        assert_eq!(svg.matches("<circle").count(), 2, "{svg}");
        assert!(
            svg.contains("<g class=\"mark warn\"><title>a\nb\nc</title>"),
            "{svg}"
        );
        assert!(
            svg.contains(">1–3</text>") && svg.contains(">4</text>"),
            "{svg}"
        );
    }

    #[test]
    fn labels_and_titles_are_escaped() {
        let hostile = "<script>alert(1)</script>\"><img src=x onerror=alert(1)>&amp;";
        let svg = time_axis_svg(&[mark(1.0, hostile, hostile)], 400.0, hostile).into_string();
        let chart = sparklines_svg(
            &[Series {
                name: hostile,
                points: &[(0.0, 1.0), (1.0, 2.0)],
            }],
            300.0,
            80.0,
            Unit::Number,
        )
        .into_string();
        for out in [svg, chart] {
            assert!(!out.contains("<script") && !out.contains("<img"), "{out}");
            assert!(out.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img"));
            assert!(out.contains("&amp;amp;"), "{out}");
        }
    }

    #[test]
    fn a_sparkline_spans_the_plot_and_labels_min_and_max() {
        let svg =
            sparkline_svg(&[(1.0, 10.0), (2.0, 40.0), (3.0, 20.0)], 300.0, 80.0).into_string();
        // x 1..3 onto 78..290, y 10..40 onto 62..8.
        assert!(svg.contains("points=\"78,62 184,8 290,44\""), "{svg}");
        assert!(svg.contains("<text class=\"max\""), "{svg}");
        assert!(
            svg.contains(">40</text>") && svg.contains(">10</text>"),
            "{svg}"
        );
        assert!(
            svg.contains(">1</text>") && svg.contains(">3</text>"),
            "{svg}"
        );
    }

    #[test]
    fn series_share_one_scale_and_bad_samples_are_left_out() {
        let remaining = [(0.0, 100.0), (1.0, f64::NAN), (2.0, 50.0)];
        let dirty = [(0.0, 0.0), (2.0, 25.0)];
        let svg = sparklines_svg(
            &[
                Series {
                    name: "remaining",
                    points: &remaining,
                },
                Series {
                    name: "dirty rate",
                    points: &dirty,
                },
            ],
            300.0,
            100.0,
            Unit::Bytes,
        )
        .into_string();
        assert_eq!(svg.matches("<polyline").count(), 2, "{svg}");
        // One scale: 0..100 onto 82..22 (a legend row on top).
        assert!(svg.contains("points=\"78,22 290,52\""), "{svg}");
        assert!(svg.contains("points=\"78,82 290,67\""), "{svg}");
        assert!(
            svg.contains(">100 B</text>") && svg.contains(">0 B</text>"),
            "{svg}"
        );
        assert!(svg.contains(">remaining</text>") && svg.contains(">dirty rate</text>"));
        assert!(!svg.contains("NaN"), "{svg}");
    }

    #[test]
    fn empty_and_single_sample_series() {
        let none = sparkline_svg(&[], 200.0, 60.0).into_string();
        assert!(
            none.contains("no samples") && !none.contains("<polyline"),
            "{none}"
        );
        let nan = sparkline_svg(&[(f64::NAN, 1.0)], 200.0, 60.0).into_string();
        assert!(nan.contains("no samples"), "{nan}");
        let one = sparkline_svg(&[(5.0, 7.0)], 200.0, 60.0).into_string();
        assert!(
            one.contains("<circle") && !one.contains("<polyline"),
            "{one}"
        );
        // A flat line sits in the middle.
        let flat = sparkline_svg(&[(0.0, 3.0), (1.0, 3.0)], 200.0, 60.0).into_string();
        assert!(flat.contains("points=\"78,25 190,25\""), "{flat}");
    }
}
