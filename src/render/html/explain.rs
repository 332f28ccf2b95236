//! `explain -o html`: the diagnosis (outcome, plane, cause, summary, confidence), what needs
//! attention, the next steps, the evidence with its field paths, what is unexplained, the
//! timeline (a time axis in SVG and the table), the launcher pods, the migration's details,
//! the rule, the per-pass charts when samples were recorded, the history, the assumptions,
//! notes and warnings. The KubeVirt report ([`page`]) and a libvirt job's ([`libvirt`])
//! share the diagnosis sections.

use maud::{Markup, html};

use super::{Page, document, facts, json_rows, path_table, t};
use crate::migration::classify::CompletedJob;
use crate::migration::series::{ProgressSeries, SeriesPoint};
use crate::render::svg::{self, Mark, MarkTone, Series, Unit};
use crate::text as fmt;
use crate::triage::report::ExplainReport;
use crate::triage::{Diagnosis, HistoryEntry, Outcome, TimelineEntry, Unexplained};

/// One chart of recorded samples (remaining memory per pass, dirty rate against
/// throughput …): named series of `(x, y)` samples on one scale.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub title: String,
    pub unit: Unit,
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

impl Chart {
    pub fn new(title: &str, unit: Unit) -> Chart {
        Chart {
            title: title.to_string(),
            unit,
            series: Vec::new(),
        }
    }

    /// Adds a series; one without samples is left out.
    pub fn series(mut self, name: &str, points: &[(f64, f64)]) -> Chart {
        if !points.is_empty() {
            self.series.push((name.to_string(), points.to_vec()));
        }
        self
    }
}

/// The charts of a migration's passes (x: the pass number, or seconds): the remaining
/// memory, and the dirty rate against the throughput; a chart without samples is left out.
pub fn pass_charts(
    remaining_bytes: &[(f64, f64)],
    dirty_bps: &[(f64, f64)],
    throughput_bps: &[(f64, f64)],
) -> Vec<Chart> {
    [
        Chart::new("Remaining memory per pass", Unit::Bytes).series("remaining", remaining_bytes),
        Chart::new("Dirty rate against throughput", Unit::BytesPerSecond)
            .series("dirty rate", dirty_bps)
            .series("throughput", throughput_bps),
    ]
    .into_iter()
    .filter(|c| !c.series.is_empty())
    .collect()
}

/// The charts of a recorded progress series (`progressSeries`: vmctl's record of a libvirt
/// migration, or a Prometheus range query), x in seconds since the start: the remaining
/// memory (the saw-tooth: each pre-copy pass starts higher than the last one ended), and the
/// dirty rate against the throughput on one scale. None without a series.
pub fn progress_charts(series: Option<&ProgressSeries>) -> Vec<Chart> {
    let Some(series) = series else {
        return Vec::new();
    };
    let secs = |ms: u64| ms as f64 / 1000.0;
    let of = |f: &dyn Fn(&SeriesPoint) -> Option<u64>| -> Vec<(f64, f64)> {
        series
            .points
            .iter()
            .filter_map(|p| f(p).map(|v| (secs(p.at_ms), v as f64)))
            .collect()
    };
    [
        Chart::new("Remaining memory over time", Unit::Bytes)
            .series("remaining", &of(&|p| Some(p.remaining_bytes))),
        Chart::new("Dirty rate against throughput", Unit::BytesPerSecond)
            .series("dirty rate", &of(&|p| p.dirty_rate_bps))
            .series("throughput", &of(&|p| Some(p.transfer_rate_bps))),
    ]
    .into_iter()
    .filter(|c| !c.series.is_empty())
    .collect()
}

/// The CSS class of an outcome's tone.
fn outcome_class(o: Outcome) -> &'static str {
    match o {
        Outcome::Succeeded => "good",
        Outcome::InProgress | Outcome::NoMigration => "dim",
        Outcome::Blocked | Outcome::Aborted => "warn",
        Outcome::Failed => "bad",
    }
}

/// `2026-11-29 02:20:30` from an RFC 3339 time.
fn when(time: &str) -> String {
    time.trim_end_matches('Z').replace('T', " ")
}

/// The report's first line, as the table's header says it.
fn subject(report: &ExplainReport) -> String {
    let d = &report.diagnosis;
    match &d.migration {
        Some(m) if m.object_exists => format!(
            "Migration {}/{} · VMI {}/{}",
            m.namespace, m.name, d.vmi.namespace, d.vmi.name
        ),
        Some(m) => format!(
            "Migration uid {} (object gone) · VMI {}/{}",
            m.uid.as_deref().unwrap_or("?"),
            d.vmi.namespace,
            d.vmi.name
        ),
        None => format!(
            "VMI {}/{} (no migration on record)",
            d.vmi.namespace, d.vmi.name
        ),
    }
}

/// The KubeVirt `explain` report as a page; `charts`: the recorded per-pass samples, when
/// there are any (a section of their own).
pub fn page(report: &ExplainReport, clock_note: &str, charts: &[Chart]) -> String {
    let d = &report.diagnosis;
    let title = format!("vmctl explain: {}", subject(report));
    let kubevirt = report
        .kubevirt_version
        .as_deref()
        .map(|v| format!("KubeVirt {v}"))
        .unwrap_or_else(|| "KubeVirt version unknown".into());
    let body = html! {
        @if let Some(origin) = &report.journal {
            p.journal { (crate::text::printable(&origin.line())) }
        }
        (verdict(d, &kubevirt, &report.as_of))
        (attention(&d.attention))
        (next_steps(&d.next_steps))
        (evidence(d))
        (unexplained(&d.unexplained))
        (timeline(&d.timeline))
        (charts_section(charts))
        (pods(d))
        (migration(d))
        (rule(d))
        @if let Some(h) = &report.history {
            (history(h, &d.vmi.namespace, &d.vmi.name))
        }
        (lines("Assumptions (what could not be read)", "assumptions", &d.assumptions))
        (lines("Notes", "notes", &report.notes))
        (lines("Warnings about the input", "warnings", &report.warnings))
    };
    document(
        &Page {
            title: &title,
            as_of: &report.as_of,
            clock_note,
            source: &report.source,
        },
        body,
    )
}

/// `explain DOMAIN --connect URI -o html`: a libvirt job's diagnosis (`names`: the domain,
/// its host and the URI), its statistics as field paths, and its charts.
pub fn libvirt(
    d: &Diagnosis,
    job: &CompletedJob,
    names: [&str; 3],
    as_of: &str,
    charts: &[Chart],
) -> String {
    let [domain, host, uri] = names;
    let title = format!("vmctl explain: domain {domain} on {host}: last migration job");
    let mut rows = Vec::new();
    json_rows(
        "job",
        &serde_json::to_value(job).unwrap_or_default(),
        &mut rows,
    );
    let body = html! {
        (verdict(d, "libvirt", as_of))
        (next_steps(&d.next_steps))
        (evidence(d))
        (charts_section(charts))
        section id="job" {
            h2 { "Job statistics" }
            (path_table(&rows))
        }
        (rule(d))
        (lines("Assumptions (what could not be read)", "assumptions", &d.assumptions))
    };
    document(
        &Page {
            title: &title,
            as_of,
            clock_note: "",
            source: uri,
        },
        body,
    )
}

/// The verdict box: the verdict line (explain's), the one-line summary, the route, confidence.
fn verdict(d: &Diagnosis, platform: &str, as_of: &str) -> Markup {
    let class = outcome_class(d.outcome);
    let headline = crate::render::explain_verdict::verdict_line(d, as_of);
    html! {
        section id="diagnosis" class=(format!("verdict v-{class}")) {
            p class=(format!("headline {class}")) { (t(&headline)) }
            p class="summary" { (t(&d.summary)) }
            @if let Some(route) = crate::render::explain::route_line(d) {
                p class="dim" { (t(&route)) }
            }
            (facts(&[
                ("Outcome", d.outcome.as_str().to_string()),
                ("Plane", d.plane.as_str().to_string()),
                ("Cause", format!("{}{}", d.cause, if d.inferred { " (inferred)" } else { "" })),
                ("Confidence", d.confidence.as_str().to_string()),
                ("VMI", if d.vmi.namespace.is_empty() { d.vmi.name.clone() } else {
                    format!("{}/{}", d.vmi.namespace, d.vmi.name) }),
                ("Node", d.vmi.node.clone().unwrap_or_default()),
                ("Platform", platform.to_string()),
            ]))
        }
    }
}

fn attention(items: &[String]) -> Markup {
    html! {
        @if !items.is_empty() {
            section id="attention" class="attention" {
                h2 { "Attention" }
                ul {
                    @for a in items {
                        li class=(if a.starts_with("POINT OF NO RETURN") { "bad" } else { "warn" }) {
                            (t(a))
                        }
                    }
                }
            }
        }
    }
}

fn next_steps(steps: &[String]) -> Markup {
    html! {
        @if !steps.is_empty() {
            section id="next-steps" {
                h2 { "Next steps" }
                ol { @for s in steps { li { (super::prose(s)) } } }
            }
        }
    }
}

fn evidence(d: &Diagnosis) -> Markup {
    html! {
        section id="evidence" {
            h2 { "Evidence" }
            @if d.evidence.is_empty() {
                p class="dim" { "(none)" }
            } @else {
                table {
                    thead { tr { th { "object" } th { "field" } th { "value" } th { "note" } } }
                    tbody {
                        @for f in &d.evidence {
                            tr {
                                td class="mono" { (t(&f.object)) }
                                td class="path" { (t(&f.field)) }
                                // Edges that would vanish on a page are shown quoted.
                                td { @if f.value.trim() != f.value || f.value.is_empty() {
                                        (t(&format!("{:?}", f.value)))
                                    } @else { (t(&f.value)) } }
                                td class="dim" { (t(f.note.as_deref().unwrap_or(""))) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn unexplained(items: &[Unexplained]) -> Markup {
    html! {
        @if !items.is_empty() {
            section id="unexplained" {
                h2 { "Unexplained" }
                p class="dim" {
                    "On record in the migration's window, not accounted for by the diagnosis."
                }
                table {
                    thead { tr { th { "time" } th { "object" } th { "reason" } th class="num" { "count" }
                        th { "message" } } }
                    tbody {
                        @for u in items {
                            tr {
                                td class="nowrap" { (u.time.as_deref().map(when).unwrap_or_else(|| "-".into())) }
                                td class="mono" { (t(&u.object)) }
                                td class="warn" { (t(&if u.source == "event" {
                                    format!("Warning {}", u.reason) } else { u.reason.clone() })) }
                                td class="num" { (u.count.map(|c| format!("×{c}")).unwrap_or_else(|| "-".into())) }
                                td { (t(&u.message)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// How an event of the timeline is marked: Warning events in amber, failures (a phase
/// Failed, `streaming ended: failed`) in red.
fn tone(e: &TimelineEntry) -> MarkTone {
    if e.what.starts_with("Warning") {
        MarkTone::Warning
    } else if e.what.contains("failed") || e.what.ends_with("Failed") {
        MarkTone::Bad
    } else {
        MarkTone::Normal
    }
}

/// The timeline's marks for the time axis: numbered as the table's rows.
pub fn marks(timeline: &[TimelineEntry]) -> Vec<Mark> {
    timeline
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut title = format!("{} {} {}: {}", i + 1, when(&e.time), e.object, e.what);
            if let Some(d) = &e.detail {
                title.push_str(" — ");
                title.push_str(d);
            }
            Mark {
                offset: e.offset_seconds as f64,
                label: (i + 1).to_string(),
                title: t(&title),
                tone: tone(e),
            }
        })
        .collect()
}

/// The time of day alone when the whole timeline is one UTC day.
fn clock(time: &str, one_day: bool) -> String {
    let w = when(time);
    match w.split_once(' ') {
        Some((_, hms)) if one_day => hms.to_string(),
        _ => w,
    }
}

fn day(time: &str) -> &str {
    time.split('T').next().unwrap_or(time)
}

fn timeline(timeline: &[TimelineEntry]) -> Markup {
    let start = timeline
        .first()
        .map(|e| format!("{} UTC", when(&e.time)))
        .unwrap_or_default();
    let first_day = timeline.first().map_or("", |e| day(&e.time));
    let one_day = timeline.iter().all(|e| {
        day(&e.time) == first_day && e.last_time.as_deref().is_none_or(|l| day(l) == first_day)
    });
    let time_header = if one_day {
        format!("time ({first_day})")
    } else {
        "time".into()
    };
    html! {
        section id="timeline" class="chart" {
            h2 { "Timeline (UTC)" }
            @if timeline.is_empty() {
                p class="dim" { "(nothing on record)" }
            } @else {
                (svg::time_axis_svg(&marks(timeline), 1040.0, &start))
                table {
                    thead { tr { th class="num" { "#" } th { (time_header) } th class="num" { "+step" }
                        th { "object" } th { "what (where it was read)" } th { "detail" } } }
                    tbody {
                        @for (i, e) in timeline.iter().enumerate() {
                            @let class = match tone(e) {
                                MarkTone::Bad => "bad", MarkTone::Warning => "warn", MarkTone::Normal => "",
                            };
                            tr {
                                td class="num" { (i + 1) }
                                td class="nowrap" { (clock(&e.time, one_day)) }
                                td class="num" { (e.since_previous_seconds
                                    .map(|s| format!("+{}", fmt::duration(s))).unwrap_or_else(|| "-".into())) }
                                td class="mono" { (t(&e.object)) }
                                td class=(class) {
                                    (t(&e.what))
                                    @if let Some(n) = e.count { " ×" (n) }
                                    @if let Some(l) = &e.last_time { " (last " (clock(l, one_day)) ")" }
                                    div class="src" { (t(&e.source)) }
                                }
                                td class="text" { (t(e.detail.as_deref().unwrap_or(""))) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn charts_section(charts: &[Chart]) -> Markup {
    html! {
        @if !charts.is_empty() {
            section id="progress" class="chart" {
                h2 { "Migration progress (recorded samples)" }
                @for c in charts {
                    @let series: Vec<Series<'_>> = c.series.iter()
                        .map(|(name, points)| Series { name, points }).collect();
                    h3 { (t(&c.title)) }
                    (svg::sparklines_svg(&series, 720.0, 150.0, c.unit))
                }
            }
        }
    }
}

fn pods(d: &Diagnosis) -> Markup {
    html! {
        @if !d.pods.is_empty() {
            section id="pods" {
                h2 { "Launcher pods" }
                p class="dim" { "Read the logs of the live one." }
                table {
                    thead { tr { th { "role" } th { "pod" } th { "node" } th { "phase" } th { "live" } } }
                    tbody {
                        @for p in &d.pods {
                            tr {
                                td { (t(&p.role)) }
                                td class="mono" { (t(p.name.as_deref().unwrap_or("?"))) }
                                td { (t(p.node.as_deref().unwrap_or("-"))) }
                                td class=(if p.exists { "" } else { "dim" }) {
                                    @if p.exists { (t(p.phase.as_deref().unwrap_or("?"))) } @else { "gone" }
                                }
                                td class=(if p.live { "good" } else { "dim" }) {
                                    (if p.live { "yes" } else { "no" })
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The migration's details (and the VMI's migratability), as the JSON document's fields.
fn migration(d: &Diagnosis) -> Markup {
    let mut rows = Vec::new();
    if let Some(m) = &d.migration {
        json_rows(
            "migration",
            &serde_json::to_value(m).unwrap_or_default(),
            &mut rows,
        );
    }
    json_rows(
        "vmi",
        &serde_json::to_value(&d.vmi).unwrap_or_default(),
        &mut rows,
    );
    html! {
        section id="details" {
            h2 { "Migration and VMI" }
            (path_table(&rows))
        }
    }
}

fn rule(d: &Diagnosis) -> Markup {
    html! {
        section id="rule" {
            h2 { "Rule " code { (d.rule.id) } " (" (d.rule.plane.as_str()) ")" }
            p { (d.rule.advice) }
            h3 { "Reads" }
            ul { @for r in d.rule.reads { li class="path" { code { (r) } } } }
        }
    }
}

fn history(h: &[HistoryEntry], ns: &str, vmi: &str) -> Markup {
    html! {
        section id="history" {
            h2 { (t(&format!("History of VMI {ns}/{vmi} ({} migrations, oldest first)", h.len()))) }
            @if h.is_empty() {
                p class="dim" { "(none on record)" }
            } @else {
                table {
                    thead { tr { th { "name" } th { "created" } th { "phase" } th { "outcome" }
                        th { "cause" } th class="num" { "took" } th class="num" { "gap" }
                        th { "backoff" } th { "summary" } } }
                    tbody {
                        @for e in h {
                            tr {
                                td class="mono" { (t(&e.name)) }
                                td class="nowrap" { (e.created.as_deref().map(when).unwrap_or_else(|| "?".into())) }
                                td { (t(&e.phase)) }
                                td class=(outcome_class(e.outcome)) { (e.outcome.as_str()) }
                                td { (e.cause) @if e.inferred { " (inferred)" } }
                                td class="num" { (e.duration_seconds.map(fmt::duration).unwrap_or_else(|| "-".into())) }
                                td class="num" { (e.since_previous_seconds.map(fmt::duration).unwrap_or_else(|| "-".into())) }
                                td { (match (&e.backoff_seconds, &e.backoff_until) {
                                    (Some(s), Some(u)) => format!("{} (until {})", fmt::duration(*s), when(u)),
                                    _ => "-".into(),
                                }) }
                                td { (t(&e.summary)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A titled list of lines (assumptions, notes, warnings); nothing when empty.
fn lines(title: &str, id: &str, items: &[String]) -> Markup {
    html! {
        @if !items.is_empty() {
            section id=(id) {
                h2 { (title) }
                ul { @for i in items { li { (t(i)) } } }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migration::classify::{DomainStatus, JobEnd, classify};

    #[test]
    fn a_recorded_series_gives_the_remaining_and_rate_charts_in_seconds() {
        assert!(progress_charts(None).is_empty());
        let point = |at_ms, remaining_bytes, dirty_rate_bps| SeriesPoint {
            at_ms,
            remaining_bytes,
            dirty_rate_bps,
            transfer_rate_bps: 100,
            pass: None,
        };
        let series = ProgressSeries {
            source: "Prometheus at http://p".into(),
            points: vec![
                point(0, 900, None),
                point(1500, 400, Some(80)),
                point(3000, 700, Some(90)),
            ],
        };
        let charts = progress_charts(Some(&series));
        assert_eq!(charts.len(), 2);
        assert_eq!(
            charts[0].series[0].1,
            vec![(0.0, 900.0), (1.5, 400.0), (3.0, 700.0)]
        );
        // The dirty rate only where it was measured; the throughput everywhere, one scale.
        assert_eq!(charts[1].series[0].0, "dirty rate");
        assert_eq!(charts[1].series[0].1, vec![(1.5, 80.0), (3.0, 90.0)]);
        assert_eq!(charts[1].series[1].1.len(), 3);
        let empty = ProgressSeries {
            source: String::new(),
            points: vec![],
        };
        assert!(progress_charts(Some(&empty)).is_empty());
    }

    #[test]
    fn a_libvirt_job_has_its_diagnosis_statistics_and_charts() {
        let job = CompletedJob {
            end: JobEnd::Failed,
            error_message: Some("operation failed: <script>alert(1)</script>\u{1b}]0;x".into()),
            elapsed_ms: Some(15_600),
            memory_total: Some(256 << 20),
            iteration: Some(5),
            ..Default::default()
        };
        let d =
            classify(&job, DomainStatus::Running).diagnosis("web-01", "src", DomainStatus::Running);
        let remaining = [(1.0, 200.0), (2.0, 120.0), (3.0, 90.0)];
        let charts = pass_charts(&remaining, &[], &[]);
        let out = libvirt(
            &d,
            &job,
            ["web-01", "src", "qemu+ssh://src/system"],
            "2026-12-04T10:00:00Z",
            &charts,
        );
        assert!(
            out.contains("FAILED · data-plane · connection-failure")
                || out.contains("FAILED · data-plane"),
            "{out}"
        );
        assert!(
            out.contains("<td class=\"path\">job.elapsedMs</td><td>15600</td>"),
            "{out}"
        );
        assert!(
            out.contains("Remaining memory per pass") && out.contains("<polyline"),
            "{out}"
        );
        assert!(!out.contains("<script") && !out.contains('\u{1b}'), "{out}");
        assert!(
            out.contains("&lt;script&gt;alert(1)&lt;/script&gt;\\u{1b}]0;x"),
            "{out}"
        );
        // No samples, no chart section.
        let bare = libvirt(&d, &job, ["web-01", "src", "qemu:///system"], "", &[]);
        assert!(!bare.contains("id=\"progress\"") && !bare.contains("<polyline"));
    }

    #[test]
    fn pass_charts_leave_out_what_has_no_samples() {
        assert!(pass_charts(&[], &[], &[]).is_empty());
        let c = pass_charts(&[], &[(1.0, 2.0)], &[]);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].title, "Dirty rate against throughput");
        assert_eq!(c[0].unit, Unit::BytesPerSecond);
        assert_eq!(
            c[0].series,
            vec![("dirty rate".to_string(), vec![(1.0, 2.0)])]
        );
        let all = pass_charts(&[(1.0, 9.0)], &[(1.0, 2.0)], &[(1.0, 3.0)]);
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].series.len(), 2);
    }

    #[test]
    fn timeline_marks_are_numbered_and_toned() {
        let at = k8s_openapi::jiff::Timestamp::UNIX_EPOCH;
        let entry = |what: &str, offset: i64| TimelineEntry {
            time: "2026-11-29T02:20:30Z".into(),
            at,
            object: "vmim/m".into(),
            what: what.into(),
            detail: Some("<b>x</b>".into()),
            count: None,
            last_time: None,
            source: "event".into(),
            offset_seconds: offset,
            since_previous_seconds: None,
        };
        let m = marks(&[
            entry("created", 0),
            entry("Warning SyncFailed", 5),
            entry("phase Failed", 9),
        ]);
        assert_eq!(
            m.iter().map(|m| m.label.as_str()).collect::<Vec<_>>(),
            ["1", "2", "3"]
        );
        assert_eq!(
            m.iter().map(|m| m.tone).collect::<Vec<_>>(),
            [MarkTone::Normal, MarkTone::Warning, MarkTone::Bad]
        );
        assert_eq!(m[2].offset, 9.0);
        assert_eq!(
            m[0].title,
            "1 2026-11-29 02:20:30 vmim/m: created — <b>x</b>"
        );
    }
}
