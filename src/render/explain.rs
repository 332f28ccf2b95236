//! `explain`'s table: the diagnosis, its route, timeline, evidence and next steps.

use crate::migration::series::ProgressSeries;
use crate::render::glyphs::Charset;
use crate::render::table::{TableBuilder, plain};
use crate::render::{Style, Tone};
use crate::text as fmt;
use crate::triage::report::ExplainReport;
use crate::triage::{Confidence, Diagnosis, HistoryEntry, Outcome, TimelineEntry, Unexplained};

fn outcome_tone(o: Outcome) -> Tone {
    match o {
        Outcome::Succeeded => Tone::Good,
        Outcome::InProgress => Tone::Strong,
        Outcome::Blocked | Outcome::Aborted => Tone::Warn,
        Outcome::Failed => Tone::Bad,
        Outcome::NoMigration => Tone::Dim,
    }
}

/// `02:44:10` when the whole timeline is one UTC day, else `2026-11-29 02:44:10`.
fn time_cell(entry: &TimelineEntry, one_day: bool) -> String {
    let t = entry.time.trim_end_matches('Z').replace('T', " ");
    if one_day {
        t.split(' ').nth(1).unwrap_or(&t).to_string()
    } else {
        t
    }
}

fn day(time: &str) -> &str {
    time.split('T').next().unwrap_or(time)
}

fn clip(text: &str, wide: bool) -> String {
    const MAX: usize = 100;
    if wide || text.chars().count() <= MAX {
        text.to_string()
    } else {
        let cut: String = text.chars().take(MAX - 1).collect();
        format!("{cut}…")
    }
}

/// The timeline as a table; public for snapshot tests.
pub fn render_timeline(timeline: &[TimelineEntry], style: Style, wide: bool) -> String {
    let Some(first) = timeline.first() else {
        return "  (nothing on record)\n".into();
    };
    let first_day = day(&first.time);
    let one_day = timeline.iter().all(|e| {
        day(&e.time) == first_day && e.last_time.as_deref().is_none_or(|l| day(l) == first_day)
    });
    let mut t = TableBuilder::new(style, &["time", "+step", "object", "what", "detail"]);
    // The detail (an event's message, a condition's) under its row: the default fits near
    // 120 columns; -o wide keeps it a column.
    t.indent(2);
    if wide {
        t.fold(&["detail"]);
    } else {
        t.fold_always(&["detail"]).budget(120);
    }
    for e in timeline {
        let step = match e.since_previous_seconds {
            None => "-".to_string(),
            Some(s) => format!("+{}", fmt::duration(s)),
        };
        let mut what = e.what.clone();
        if let Some(n) = e.count {
            what.push_str(&format!(" ×{n}"));
            if let Some(last) = &e.last_time {
                let last = last.trim_end_matches('Z').replace('T', " ");
                let last = if one_day {
                    last.split(' ').nth(1).unwrap_or(&last).to_string()
                } else {
                    last
                };
                what.push_str(&format!(" (last {last})"));
            }
        }
        let tone = if e.what.starts_with("Warning") || e.what.contains("failed") {
            Tone::Warn
        } else {
            Tone::Plain
        };
        t.row(vec![
            plain(time_cell(e, one_day)),
            (step, Tone::Dim),
            plain(fmt::printable(&e.object)),
            (fmt::printable(&what), tone),
            plain(clip(
                &fmt::printable(e.detail.as_deref().unwrap_or("")),
                wide,
            )),
        ]);
    }
    let header = if one_day {
        format!("Timeline ({first_day}, UTC):\n")
    } else {
        "Timeline (UTC):\n".to_string()
    };
    header + &t.render()
}

pub use super::explain_verdict::route_line;

pub fn render_table(report: &ExplainReport, style: Style, wide: bool, clock: &str) -> String {
    let d = &report.diagnosis;
    let mut out = String::new();
    if let Some(origin) = &report.journal {
        out.push_str(&style.paint(&fmt::printable(&origin.line()), Tone::Warn));
        out.push('\n');
    }
    let kv = match &report.kubevirt_version {
        Some(v) => format!("KubeVirt {v}"),
        None => "KubeVirt version unknown".to_string(),
    };
    let header = match &d.migration {
        Some(m) if m.object_exists => format!(
            "Migration {}/{} · VMI {}/{} · {kv}",
            m.namespace, m.name, d.vmi.namespace, d.vmi.name
        ),
        Some(m) => format!(
            "Migration uid {} (object gone; from the VMI's migrationState) · VMI {}/{} · {kv}",
            m.uid.as_deref().unwrap_or("?"),
            d.vmi.namespace,
            d.vmi.name
        ),
        None => format!(
            "VMI {}/{} (no migration on record) · {kv}",
            d.vmi.namespace, d.vmi.name
        ),
    };
    out.push_str(&fmt::printable(&header));
    out.push('\n');
    out.push_str(&fmt::printable(&format!(
        "as of {}{clock} · {}",
        report.as_of, report.source
    )));
    out.push_str("\n\n");
    let head = super::explain_verdict::verdict_line(d, &report.as_of);
    out.push_str(&style.paint(&fmt::printable(&head), outcome_tone(d.outcome)));
    out.push('\n');
    out.push_str(&fmt::printable(&d.summary));
    out.push('\n');
    if let Some(route) = route_line(d) {
        out.push_str(&style.paint(&fmt::printable(&route), Tone::Dim));
        out.push('\n');
    }
    out.push_str(&confidence_line(d, style));

    if !d.attention.is_empty() {
        out.push_str("\nAttention:\n");
        for a in &d.attention {
            let tone = if a.starts_with("POINT OF NO RETURN") {
                Tone::Bad
            } else {
                Tone::Warn
            };
            out.push_str(&format!(
                "  {} {}\n",
                style.paint("!", tone),
                fmt::printable(a)
            ));
        }
    }

    if !d.pods.is_empty() {
        out.push_str("\nLauncher pods (read the logs of the live one):\n");
        let mut t = TableBuilder::new(style, &["role", "pod", "node", "phase", "live"]);
        for p in &d.pods {
            let phase = if p.exists {
                p.phase.clone().unwrap_or_else(|| "?".into())
            } else {
                "gone".into()
            };
            t.row(vec![
                plain(p.role.clone()),
                plain(p.name.clone().unwrap_or_else(|| "?".into())),
                plain(p.node.clone().unwrap_or_else(|| "-".into())),
                (phase, if p.exists { Tone::Plain } else { Tone::Dim }),
                if p.live {
                    ("yes".into(), Tone::Good)
                } else {
                    ("no".into(), Tone::Dim)
                },
            ]);
        }
        for l in t.render().lines() {
            out.push_str(&format!("  {l}\n"));
        }
    }

    out.push_str("\nEvidence:\n");
    for f in &d.evidence {
        // Quote values whose edges would vanish on screen (`Live migration aborted `).
        let value = if f.value.trim() != f.value || f.value.is_empty() {
            format!("{:?}", f.value)
        } else {
            fmt::printable(&f.value)
        };
        out.push_str(&format!(
            "  {} {} = {value}",
            fmt::printable(&f.object),
            fmt::printable(&f.field)
        ));
        if let Some(n) = &f.note {
            out.push_str(&style.paint(&format!("  ({})", fmt::printable(n)), Tone::Dim));
        }
        out.push('\n');
    }

    out.push_str(&render_unexplained(&d.unexplained, style, wide));
    out.push_str(&progress_section(report.progress_series.as_ref()));

    out.push('\n');
    out.push_str(&render_timeline(&d.timeline, style, wide));

    if !d.next_steps.is_empty() {
        out.push_str("\nNext steps:\n");
        for (i, s) in d.next_steps.iter().enumerate() {
            out.push_str(&format!("  {}. {}\n", i + 1, fmt::printable(s)));
        }
    }

    if wide {
        out.push_str(&format!(
            "\nRule {} ({}):\n  reads: {}\n  advice: {}\n",
            d.rule.id,
            d.rule.plane.as_str(),
            d.rule.reads.join("; "),
            d.rule.advice
        ));
        if let Some(m) = &d.migration {
            out.push_str(&format!(
                "  migration configuration: {}\n  migrationState read from: {}\n",
                m.configuration_from,
                m.state_from
                    .as_deref()
                    .unwrap_or("(none: it describes no migration state)")
            ));
        }
    }

    if let Some(h) = &report.history {
        out.push_str(&render_history(h, style, &d.vmi.namespace, &d.vmi.name));
    }
    // The notes (what could not be read) are among the assumptions.
    if !d.assumptions.is_empty() {
        out.push_str("\nAssumptions (what could not be read):\n");
        for a in &d.assumptions {
            out.push_str(&format!("  - {}\n", fmt::printable(a)));
        }
    }
    out
}

/// Cells per sparkline in `explain` (a series has at most 120 points: two per cell).
pub const PROGRESS_WIDTH: usize = 60;

/// The recorded progress of a migration as sparklines (`migrate`'s lines under the bars):
/// remaining memory with the pass starts, then the transfer and dirty rates on one scale;
/// the values beside them are the last point's. Empty without points. Pure.
pub fn render_progress(series: &ProgressSeries, width: usize, charset: Charset) -> String {
    let (Some(first), Some(last)) = (series.points.first(), series.points.last()) else {
        return String::new();
    };
    let span = last.at_ms.saturating_sub(first.at_ms) / 1000;
    let mut out = format!(
        "\nProgress ({}: {} points over {}):\n",
        fmt::printable(&series.source),
        series.points.len(),
        fmt::duration(span as i64)
    );
    for line in super::progress::trend_lines(&series.points, None, width, charset) {
        // (No pass numbers: KubeVirt's metrics have none.)
        if line.trim() != "pass" {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// [`render_progress`] in the locale's characters, [`PROGRESS_WIDTH`] cells; empty without a
/// series.
pub fn progress_section(series: Option<&ProgressSeries>) -> String {
    series.map_or(String::new(), |s| {
        render_progress(s, PROGRESS_WIDTH, Charset::detect())
    })
}

fn confidence_line(d: &Diagnosis, style: Style) -> String {
    let why = match d.confidence {
        Confidence::High => "read from status, nothing unexplained".to_string(),
        Confidence::Medium if d.inferred => "the cause is inferred".to_string(),
        Confidence::Medium => "the cause rests on events alone".to_string(),
        Confidence::Low => {
            let mut why = Vec::new();
            if d.cause == "unknown" {
                why.push("the cause is unknown".to_string());
            }
            match d.unexplained.len() {
                0 => {}
                1 => why.push("1 warning or condition is unexplained".to_string()),
                n => why.push(format!("{n} warnings or conditions are unexplained")),
            }
            match d.assumptions.len() {
                0 => {}
                1 => why.push("1 assumption".to_string()),
                n => why.push(format!("{n} assumptions")),
            }
            why.join(", ")
        }
    };
    let tone = match d.confidence {
        Confidence::High => Tone::Dim,
        Confidence::Medium => Tone::Plain,
        Confidence::Low => Tone::Warn,
    };
    format!(
        "{}\n",
        style.paint(
            &format!("confidence {} ({why})", d.confidence.as_str()),
            tone
        )
    )
}

/// Warnings and abnormal conditions the diagnosis does not account for; cluster text escaped.
fn render_unexplained(items: &[Unexplained], style: Style, wide: bool) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut t = TableBuilder::new(style, &["time", "object", "reason", "count", "message"]);
    // As the timeline: the message under its row by default, a column in -o wide.
    t.indent(2);
    if wide {
        t.fold(&["message"]);
    } else {
        t.fold_always(&["message"]);
    }
    for u in items {
        t.row(vec![
            plain(
                u.time
                    .as_deref()
                    .map(|t| t.trim_end_matches('Z').replace('T', " "))
                    .unwrap_or_else(|| "-".into()),
            ),
            plain(fmt::printable(&u.object)),
            (
                fmt::printable(&if u.source == "event" {
                    format!("Warning {}", u.reason)
                } else {
                    u.reason.clone()
                }),
                Tone::Warn,
            ),
            plain(
                u.count
                    .map(|c| format!("×{c}"))
                    .unwrap_or_else(|| "-".into()),
            ),
            plain(clip(&fmt::printable(&u.message), wide)),
        ]);
    }
    let body = t.render();
    format!(
        "\nUnexplained (on record in the migration's window, not accounted for by the diagnosis):\n{body}"
    )
}

fn render_history(h: &[HistoryEntry], style: Style, ns: &str, vmi: &str) -> String {
    let mut out = format!(
        "\nHistory of VMI {ns}/{vmi} ({} migrations, oldest first):\n",
        h.len()
    );
    if h.is_empty() {
        out.push_str("  (none on record)\n");
        return out;
    }
    let mut t = TableBuilder::new(
        style,
        &[
            "name", "created", "phase", "outcome", "cause", "took", "gap", "backoff",
        ],
    );
    for e in h {
        t.row(vec![
            plain(e.name.clone()),
            plain(
                e.created
                    .as_deref()
                    .map(|c| c.trim_end_matches('Z').replace('T', " "))
                    .unwrap_or_else(|| "?".into()),
            ),
            plain(e.phase.clone()),
            (e.outcome.as_str().to_string(), outcome_tone(e.outcome)),
            plain(format!(
                "{}{}",
                e.cause,
                if e.inferred { " (inferred)" } else { "" }
            )),
            plain(
                e.duration_seconds
                    .map(fmt::duration)
                    .unwrap_or_else(|| "-".into()),
            ),
            plain(
                e.since_previous_seconds
                    .map(fmt::duration)
                    .unwrap_or_else(|| "-".into()),
            ),
            plain(match (&e.backoff_seconds, &e.backoff_until) {
                (Some(s), Some(u)) => format!(
                    "{} (until {})",
                    fmt::duration(*s),
                    u.split('T').nth(1).unwrap_or(u).trim_end_matches('Z')
                ),
                _ => "-".into(),
            }),
        ]);
    }
    for l in t.render().lines() {
        out.push_str(&format!("  {l}\n"));
    }
    for e in h {
        out.push_str(&format!("  {}: {}\n", e.name, fmt::printable(&e.summary)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migration::series::SeriesPoint;

    fn series(passes: bool) -> ProgressSeries {
        let points = [
            (256, 1),
            (180, 1),
            (100, 1),
            (40, 1),
            (70, 2),
            (30, 2),
            (20, 3),
            (4, 3),
        ]
        .iter()
        .enumerate()
        .map(|(i, (mib, pass))| SeriesPoint {
            at_ms: i as u64 * 2000,
            remaining_bytes: mib << 20,
            dirty_rate_bps: (i > 0).then_some(8 << 20),
            transfer_rate_bps: 32 << 20,
            pass: passes.then_some(*pass),
        })
        .collect();
        ProgressSeries {
            source: "vmctl's record of the migration, ended 2026-12-04T17:00:00Z\u{1b}[2J".into(),
            points,
        }
    }

    #[test]
    fn recorded_progress_is_drawn_as_sparklines() {
        let text = render_progress(&series(true), PROGRESS_WIDTH, Charset::Unicode);
        assert_eq!(
            text,
            "\nProgress (vmctl's record of the migration, ended 2026-12-04T17:00:00Z\\u{1b}[2J: 8 points over 14s):\n\
             \x20 memory left  █▆▄▂▃▂▂▁  4.0 MiB now, peak 256.0 MiB\n\
             \x20 pass         1   2 3\n\
             \x20 sending      ████████  32.0 MiB/s\n\
             \x20 dirtying     ▁▃▃▃▃▃▃▃  8.0 MiB/s\n"
        );
        // KubeVirt's metrics have no passes: no pass line. ASCII without a UTF-8 locale.
        let text = render_progress(&series(false), PROGRESS_WIDTH, Charset::Ascii);
        assert!(!text.contains("pass"), "{text}");
        assert!(
            text.contains("  memory left  #+~.-.._  4.0 MiB now"),
            "{text}"
        );
        assert!(text.is_ascii());
        let empty = ProgressSeries::default();
        assert_eq!(
            render_progress(&empty, PROGRESS_WIDTH, Charset::Unicode),
            ""
        );
        assert_eq!(progress_section(None), "");
    }
}
