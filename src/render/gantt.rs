//! A Gantt of a drain (rows = VMs, grouped by wave in KubeVirt's queue order) or of a rolling
//! maintenance (rows = batches) on a time axis that ends at the plan's ETA, with the blockers
//! marked where the rollout reaches them; drawn as text ([`text`], Unicode blocks or ASCII by
//! [`Charset`]) or as an inline SVG ([`svg`], for `-o html`).
//!
//! The model ([`of_drain_plan`], [`of_maintenance_plan`]) is layout, not a decision: every time
//! and every verdict comes from the plan (`policy::drain`, `policy::maintenance`); this only
//! orders, groups and folds rows. So it lives in render/, next to the tables of the same
//! plans. Pure: plans in, a [`Gantt`] out; the width and charset are passed in
//! ([`Canvas::detect`] is the one function that reads the environment, at the edge).
//!
//! Past `max_rows` VMs (or batches) the rows fold: one row per wave (or per run of waves, of
//! batches) drawn as the span its members take, so 10,000 VMIs stay readable; every step is
//! O(n) in the plan's rows.

use std::collections::{BTreeMap, HashMap};

use clap::ValueEnum;

use crate::policy::drain::{Action, DrainPlan, VmiPlan};
use crate::policy::maintenance::MaintenancePlan;
use crate::render::glyphs::Charset;
use crate::render::{OutputFormat, Style, Tone};
use crate::text::{age, duration, printable};

/// Rows drawn one per VM (or batch) up to this many; past it they fold.
pub const DEFAULT_MAX_ROWS: usize = 40;

/// What a bar stands for (its glyph and its words in the legend).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bar {
    /// A live migration (one in flight, or one of a wave).
    Migrate,
    /// A guest shut down for its grace period.
    Shutdown,
    /// A batch's drain.
    Drain,
    /// A batch's upgrade and reboot.
    Upgrade,
    /// A folded row: from its first member's start to its last one's end.
    Span,
}

/// A point on a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mark {
    /// The drain stops here until the cause is resolved.
    Blocks,
    /// The drain waits here for something outside KubeVirt (an external controller).
    Waits,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub start_secs: u64,
    pub end_secs: u64,
    pub bar: Bar,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    /// When the rollout reaches it.
    pub at_secs: u64,
    pub mark: Mark,
    /// The reason's short code (`NoFeasibleTarget`, `MaxUnavailablePDB`, …).
    pub code: String,
    /// More blockers (or blocked members of a folded row) behind this one.
    pub more: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The group the row is drawn under (`wave 2`, `blocked`); empty: none.
    pub group: String,
    /// Unescaped (names come from the cluster): the renderers escape.
    pub label: String,
    /// The VMs (or batches) the row stands for.
    pub count: usize,
    pub segments: Vec<Segment>,
    pub marker: Option<Marker>,
    /// Said after the bar (`capacity runs out`).
    pub note: Option<String>,
}

impl Row {
    /// From the first segment's start to the last one's end.
    pub fn span(&self) -> Option<(u64, u64)> {
        let start = self.segments.iter().map(|s| s.start_secs).min()?;
        let end = self.segments.iter().map(|s| s.end_secs).max()?;
        Some((start, end))
    }
}

/// Rows folded past the cap: `items` (VMs, batches) in `groups` (waves, batches), one row per
/// `per_row` groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folded {
    pub items: usize,
    pub noun: &'static str,
    pub groups: usize,
    pub group_noun: &'static str,
    pub per_row: usize,
    pub cap: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gantt {
    /// Unescaped.
    pub title: String,
    /// The plan's ETA: where the axis ends.
    pub axis_end_secs: u64,
    pub rows: Vec<Row>,
    pub folded: Option<Folded>,
}

// ---------------------------------------------------------------------------------------
// The drain.

/// Where a VM's row goes, in the order the groups are drawn.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Slot {
    /// A migration already running: it holds its slot first.
    InFlight,
    /// A live migration of wave n (1-based).
    Wave(u32),
    /// A shutdown: evicted at once, the guest stops within its grace period.
    Shutdown,
    /// An external controller must act.
    Waits,
    /// Held: refused eviction, no target, a loop. Folded rows split by reason.
    Blocked(String),
}

impl Slot {
    fn of(v: &VmiPlan, code: &str) -> Slot {
        match (v.action, v.start_seconds, v.wave) {
            (Action::LiveMigrate, Some(_), Some(w)) => Slot::Wave(w),
            (Action::AlreadyMigrating, Some(_), _) | (Action::LiveMigrate, Some(_), None) => {
                Slot::InFlight
            }
            (a, Some(_), _) if a.stops_the_vm() => Slot::Shutdown,
            (Action::External, _, _) => Slot::Waits,
            _ => Slot::Blocked(code.to_string()),
        }
    }

    fn group(&self) -> String {
        match self {
            Slot::InFlight => "in flight".into(),
            Slot::Wave(w) => format!("wave {w}"),
            Slot::Shutdown => "shutdowns".into(),
            Slot::Waits => "waiting".into(),
            Slot::Blocked(_) => "blocked".into(),
        }
    }

    fn bar(&self) -> Bar {
        match self {
            Slot::Shutdown => Bar::Shutdown,
            _ => Bar::Migrate,
        }
    }

    fn mark(&self) -> Option<Mark> {
        match self {
            Slot::Waits => Some(Mark::Waits),
            Slot::Blocked(_) => Some(Mark::Blocks),
            _ => None,
        }
    }
}

/// The short code of why a held VM holds: the blocking blocker naming it (a PDB refusing a
/// shutdown's eviction is the PDB's reason), else its last reason, else its action.
fn codes(plan: &DrainPlan) -> HashMap<String, &str> {
    let mut by_vmi: HashMap<String, &str> = HashMap::new();
    // Blocking ones first (sorted so by the plan), then the rest: the first one wins.
    for b in &plan.blockers {
        for v in &b.vmis {
            by_vmi.entry(v.clone()).or_insert(b.reason.as_str());
        }
    }
    by_vmi
}

fn code_of<'a>(v: &'a VmiPlan, by_vmi: &HashMap<String, &'a str>) -> &'a str {
    if let Some(c) = by_vmi.get(&v.id()) {
        return c;
    }
    v.reasons
        .last()
        .map(|r| r.reason.as_str())
        .unwrap_or(v.action.as_str())
}

/// [`of_drain_plan_capped`] with [`DEFAULT_MAX_ROWS`].
pub fn of_drain_plan(plan: &DrainPlan) -> Gantt {
    of_drain_plan_capped(plan, DEFAULT_MAX_ROWS)
}

/// The drain's Gantt: one row per VM under its group (in flight, wave 1…n in queue order:
/// by start, the longest first, as the plan schedules them; shutdowns; waiting; blocked),
/// up to `max_rows` VMs; past that one row per wave (or run of waves) and per blocking
/// reason. A held VM is marked at 0 s: the drain evicts every VM at once, so that is when its
/// eviction is refused or its migration finds no target.
pub fn of_drain_plan_capped(plan: &DrainPlan, max_rows: usize) -> Gantt {
    let max_rows = max_rows.max(1);
    let by_vmi = codes(plan);
    let mut slotted: Vec<(Slot, &VmiPlan, &str)> = plan
        .vmis
        .iter()
        .map(|v| {
            let code = code_of(v, &by_vmi);
            (Slot::of(v, code), v, code)
        })
        .collect();
    let axis_end_secs = plan
        .vmis
        .iter()
        .filter_map(|v| v.end_seconds)
        .max()
        .unwrap_or(0)
        .max(plan.estimated_duration_seconds);
    let title = format!("Drain of {}", plan.nodes.join(", "));
    if slotted.len() <= max_rows {
        slotted.sort_by(|(sa, a, _), (sb, b, _)| {
            let key = |s: &Slot, v: &VmiPlan| {
                let start = v.start_seconds.unwrap_or(0);
                let length = v.end_seconds.unwrap_or(start).saturating_sub(start);
                (s.clone(), start, std::cmp::Reverse(length))
            };
            key(sa, a)
                .cmp(&key(sb, b))
                .then_with(|| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)))
        });
        let rows = slotted
            .into_iter()
            .map(|(slot, v, code)| Row {
                group: slot.group(),
                label: v.id(),
                count: 1,
                segments: match (v.start_seconds, v.end_seconds) {
                    (Some(start), Some(end)) => vec![Segment {
                        start_secs: start,
                        end_secs: end.max(start),
                        bar: slot.bar(),
                    }],
                    _ => Vec::new(),
                },
                marker: slot.mark().map(|mark| Marker {
                    at_secs: 0,
                    mark,
                    code: code.to_string(),
                    more: 0,
                }),
                // In flight with no end it can know (post-copy, or its estimate passed).
                note: (slot == Slot::InFlight && v.end_seconds.is_none())
                    .then(|| "no estimate".to_string()),
            })
            .collect();
        return Gantt {
            title,
            axis_end_secs,
            rows,
            folded: None,
        };
    }
    fold_drain(slotted, max_rows, title, axis_end_secs, plan.waves)
}

/// One slot's members, folded.
#[derive(Default)]
struct Fold {
    count: usize,
    span: Option<(u64, u64)>,
}

impl Fold {
    fn add(&mut self, start: Option<u64>, end: Option<u64>) {
        self.count += 1;
        if let (Some(s), Some(e)) = (start, end) {
            self.widen(s, e.max(s));
        }
    }

    fn widen(&mut self, start: u64, end: u64) {
        self.span = Some(match self.span {
            Some((a, b)) => (a.min(start), b.max(end)),
            None => (start, end),
        });
    }

    fn merge(&mut self, other: &Fold) {
        self.count += other.count;
        if let Some((s, e)) = other.span {
            self.widen(s, e);
        }
    }
}

fn fold_drain(
    slotted: Vec<(Slot, &VmiPlan, &str)>,
    max_rows: usize,
    title: String,
    axis_end_secs: u64,
    plan_waves: u32,
) -> Gantt {
    let items = slotted.len();
    let mut folds: BTreeMap<Slot, Fold> = BTreeMap::new();
    for (slot, v, _) in slotted {
        folds
            .entry(slot)
            .or_default()
            .add(v.start_seconds, v.end_seconds);
    }
    let waves: Vec<(u32, &Fold)> = folds
        .iter()
        .filter_map(|(s, f)| match s {
            Slot::Wave(w) => Some((*w, f)),
            _ => None,
        })
        .collect();
    let others = folds.len() - waves.len();
    let room = max_rows.saturating_sub(others).max(1);
    let per_row = waves.len().div_ceil(room).max(1);
    let mut rows = Vec::new();
    let plain_row = |label: String, fold: &Fold, bar: Bar, marker: Option<Marker>| Row {
        group: String::new(),
        label,
        count: fold.count,
        segments: fold
            .span
            .map(|(start_secs, end_secs)| Segment {
                start_secs,
                end_secs,
                bar,
            })
            .into_iter()
            .collect(),
        marker,
        note: None,
    };
    for (slot, fold) in &folds {
        if *slot == Slot::InFlight {
            rows.push(plain_row(
                format!("in flight · {}", vms(fold.count)),
                fold,
                Bar::Span,
                None,
            ));
        }
    }
    for chunk in waves.chunks(per_row) {
        let mut fold = Fold::default();
        for (_, f) in chunk {
            fold.merge(f);
        }
        let first = chunk[0].0;
        let last = chunk[chunk.len() - 1].0;
        let label = if first == last {
            format!("wave {first} · {}", vms(fold.count))
        } else {
            format!("waves {first}–{last} · {}", vms(fold.count))
        };
        rows.push(plain_row(label, &fold, Bar::Span, None));
    }
    for (slot, fold) in &folds {
        let label = format!("{} · {}", slot.group(), vms(fold.count));
        match slot {
            Slot::InFlight | Slot::Wave(_) => {}
            Slot::Shutdown => rows.push(plain_row(label, fold, Bar::Shutdown, None)),
            Slot::Waits | Slot::Blocked(_) => {
                let code = match slot {
                    Slot::Blocked(c) => c.clone(),
                    _ => "External".to_string(),
                };
                let marker = slot.mark().map(|mark| Marker {
                    at_secs: 0,
                    mark,
                    code,
                    more: fold.count.saturating_sub(1),
                });
                rows.push(plain_row(label, fold, Bar::Span, marker));
            }
        }
    }
    Gantt {
        title,
        axis_end_secs,
        rows,
        folded: Some(Folded {
            items,
            noun: "VMs",
            groups: (plan_waves as usize).max(waves.len()),
            group_noun: "waves",
            per_row,
            cap: max_rows,
        }),
    }
}

fn vms(n: usize) -> String {
    if n == 1 {
        "1 VM".into()
    } else {
        format!("{} VMs", thousands(n))
    }
}

/// `9,940`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

// ---------------------------------------------------------------------------------------
// The rolling maintenance.

/// [`of_maintenance_plan_capped`] with [`DEFAULT_MAX_ROWS`].
pub fn of_maintenance_plan(plan: &MaintenancePlan) -> Gantt {
    of_maintenance_plan_capped(plan, DEFAULT_MAX_ROWS)
}

/// The rollout's Gantt: one row per batch (its nodes; the drain, then the upgrade), a
/// blocker marked at its batch's start (when the rollout reaches it) with its reason and how
/// many more the batch has, `capacity runs out` on the batch where a VM first finds no target;
/// past `max_rows` batches, one row per run of consecutive batches.
pub fn of_maintenance_plan_capped(plan: &MaintenancePlan, max_rows: usize) -> Gantt {
    let max_rows = max_rows.max(1);
    let axis_end_secs = plan
        .batches
        .iter()
        .map(|b| b.end_seconds)
        .max()
        .unwrap_or(0)
        .max(plan.totals.duration_seconds);
    let title = format!(
        "Rolling maintenance of {} node(s), {} at a time",
        plan.nodes.len(),
        plan.max_unavailable.max(1)
    );
    let capacity = plan.capacity_runs_out.as_ref().map(|c| c.batch);
    let rows: Vec<Row> = plan
        .batches
        .iter()
        .map(|b| {
            let drain_end = b.start_seconds + b.drain_seconds;
            let mut segments = vec![Segment {
                start_secs: b.start_seconds,
                end_secs: drain_end,
                bar: Bar::Drain,
            }];
            if b.end_seconds > drain_end {
                segments.push(Segment {
                    start_secs: drain_end,
                    end_secs: b.end_seconds,
                    bar: Bar::Upgrade,
                });
            }
            let blocking: Vec<_> = b.blockers.iter().filter(|x| x.blocking).collect();
            let marker = match (blocking.first(), b.blockers.first()) {
                (Some(first), _) => Some(Marker {
                    at_secs: b.start_seconds,
                    mark: Mark::Blocks,
                    code: first.reason.clone(),
                    more: blocking.len() - 1,
                }),
                (None, Some(first)) => Some(Marker {
                    at_secs: b.start_seconds,
                    mark: Mark::Waits,
                    code: first.reason.clone(),
                    more: b.blockers.len() - 1,
                }),
                (None, None) => None,
            };
            Row {
                group: String::new(),
                label: format!("{} {}", b.index, b.nodes.join(",")),
                count: 1,
                segments,
                marker,
                note: (capacity == Some(b.index)).then(|| "capacity runs out".to_string()),
            }
        })
        .collect();
    if rows.len() <= max_rows {
        return Gantt {
            title,
            axis_end_secs,
            rows,
            folded: None,
        };
    }
    let per_row = rows.len().div_ceil(max_rows);
    let batches = rows.len();
    let folded_rows = plan
        .batches
        .chunks(per_row)
        .zip(rows.chunks(per_row))
        .map(|(bs, rs)| {
            let start = rs.iter().filter_map(Row::span).map(|s| s.0).min();
            let end = rs.iter().filter_map(Row::span).map(|s| s.1).max();
            let blocked: Vec<&Marker> = rs
                .iter()
                .filter_map(|r| r.marker.as_ref())
                .filter(|m| m.mark == Mark::Blocks)
                .collect();
            Row {
                group: String::new(),
                label: format!("batches {}–{}", bs[0].index, bs[bs.len() - 1].index),
                count: rs.len(),
                segments: match (start, end) {
                    (Some(start_secs), Some(end_secs)) => vec![Segment {
                        start_secs,
                        end_secs,
                        bar: Bar::Span,
                    }],
                    _ => Vec::new(),
                },
                marker: blocked.first().map(|m| Marker {
                    at_secs: m.at_secs,
                    mark: Mark::Blocks,
                    code: m.code.clone(),
                    more: blocked.len() - 1,
                }),
                note: rs.iter().find_map(|r| r.note.clone()),
            }
        })
        .collect();
    Gantt {
        title,
        axis_end_secs,
        rows: folded_rows,
        folded: Some(Folded {
            items: batches,
            noun: "batches",
            groups: batches,
            group_noun: "batches",
            per_row,
            cap: max_rows,
        }),
    }
}

// ---------------------------------------------------------------------------------------
// Where it is drawn: decided once, at the edge.

/// `--chart`: when the chart is drawn after the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ChartWhen {
    /// When stdout is a terminal.
    #[default]
    Auto,
    /// Also into a pipe or a file (the width: COLUMNS, else 80).
    Always,
    /// Never (the same as --no-chart).
    Never,
}

/// How wide, in which characters and colours the text chart is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Canvas {
    /// Terminal cells.
    pub width: usize,
    pub charset: Charset,
    pub style: Style,
}

impl Canvas {
    /// From this process's environment: None when no chart is drawn (`never`, `-o json|yaml`,
    /// or `auto` off a terminal). The width is `COLUMNS` when set (as ls(1) reads it), else
    /// the terminal's, else 80.
    pub fn detect(when: ChartWhen, output: OutputFormat, style: Style) -> Option<Canvas> {
        use std::io::IsTerminal;
        let tty = std::io::stdout().is_terminal();
        if !wanted(when, output, tty) {
            return None;
        }
        let terminal = if tty {
            crossterm::terminal::size().ok().map(|(w, _)| w)
        } else {
            None
        };
        Some(Canvas {
            width: width_from(std::env::var("COLUMNS").ok().as_deref(), terminal),
            charset: Charset::detect(),
            style,
        })
    }
}

/// Pure: whether a chart is drawn: only after a table (`-o table|wide`; never in a
/// document, whatever formats come).
pub fn wanted(when: ChartWhen, output: OutputFormat, tty: bool) -> bool {
    matches!(output, OutputFormat::Table | OutputFormat::Wide)
        && match when {
            ChartWhen::Always => true,
            ChartWhen::Never => false,
            ChartWhen::Auto => tty,
        }
}

/// Pure: `COLUMNS` when it is a number, else the terminal's width, else 80; at least 40.
pub fn width_from(columns: Option<&str>, terminal: Option<u16>) -> usize {
    columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|w| *w > 0)
        .or(terminal.map(usize::from).filter(|w| *w > 0))
        .unwrap_or(80)
        .clamp(40, 1000)
}

// ---------------------------------------------------------------------------------------
// Text.

fn bar_glyph(bar: Bar, charset: Charset) -> char {
    match (bar, charset) {
        (Bar::Migrate | Bar::Drain, Charset::Unicode) => '█',
        (Bar::Migrate | Bar::Drain, Charset::Ascii) => '#',
        (Bar::Shutdown, Charset::Unicode) => '▓',
        (Bar::Shutdown, Charset::Ascii) => '=',
        (Bar::Upgrade, Charset::Unicode) => '░',
        (Bar::Upgrade, Charset::Ascii) => '-',
        (Bar::Span, Charset::Unicode) => '▒',
        (Bar::Span, Charset::Ascii) => '+',
    }
}

fn bar_tone(bar: Bar) -> Tone {
    match bar {
        Bar::Migrate | Bar::Drain => Tone::Good,
        Bar::Shutdown => Tone::Warn,
        Bar::Upgrade => Tone::Dim,
        Bar::Span => Tone::Plain,
    }
}

fn mark_glyph(mark: Mark, charset: Charset) -> char {
    match (mark, charset) {
        (Mark::Blocks, Charset::Unicode) => '✖',
        (Mark::Blocks, Charset::Ascii) => 'X',
        (Mark::Waits, _) => '~',
    }
}

fn mark_tone(mark: Mark) -> Tone {
    match mark {
        Mark::Blocks => Tone::Bad,
        Mark::Waits => Tone::Warn,
    }
}

fn bar_words(bar: Bar, g: &Gantt) -> String {
    match bar {
        Bar::Migrate => "live migration".into(),
        Bar::Shutdown => "shutdown (grace period)".into(),
        Bar::Drain => "drain".into(),
        Bar::Upgrade => "upgrade".into(),
        Bar::Span => format!(
            "first start to last end of the row's {}",
            g.folded.as_ref().map_or("members", |f| f.noun)
        ),
    }
}

fn mark_words(mark: Mark) -> &'static str {
    match mark {
        Mark::Blocks => "blocks here (reason; +N more)",
        Mark::Waits => "waits for an external controller",
    }
}

/// Left-aligned eighth blocks, 1/8 to 7/8 of a cell.
const EIGHTHS: [char; 7] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/// One row's cells.
type Cells = Vec<(char, Tone)>;

/// Paints `segments` and `marker` into `width` cells of an axis of `axis` seconds, after a
/// gutter cell.
fn draw_row(row: &Row, width: usize, axis: u64, charset: Charset) -> Cells {
    let mut cells: Cells = vec![(' ', Tone::Plain); width];
    let scale = width as f64 / axis.max(1) as f64;
    let cell_of = |secs: u64| ((secs as f64 * scale) as usize).min(width - 1);
    for s in &row.segments {
        // An empty segment (a batch blocked at once) is drawn only when nothing else marks
        // the row.
        if s.end_secs <= s.start_secs && (row.marker.is_some() || row.segments.len() > 1) {
            continue;
        }
        let glyph = bar_glyph(s.bar, charset);
        let tone = bar_tone(s.bar);
        let from = s.start_secs as f64 * scale;
        let to = (s.end_secs as f64 * scale).min(width as f64);
        let first = cell_of(s.start_secs);
        let mut drawn = false;
        let full_end = match charset {
            Charset::Unicode => to.floor() as usize,
            Charset::Ascii => to.round() as usize,
        };
        for cell in cells.iter_mut().take(full_end.min(width)).skip(first) {
            *cell = (glyph, tone);
            drawn = true;
        }
        // The end cell's share: from the cell's left edge, or from the start in its cell.
        let rest = to - to.floor().max(from);
        let last = to.floor() as usize;
        if charset == Charset::Unicode && last < width && last >= first && rest >= 0.125 {
            let eighth = if s.bar == Bar::Migrate || s.bar == Bar::Drain {
                EIGHTHS[((rest * 8.0) as usize).clamp(1, 7) - 1]
            } else if rest >= 0.5 {
                glyph
            } else {
                ' '
            };
            if eighth != ' ' {
                cells[last] = (eighth, tone);
                drawn = true;
            }
        }
        if !drawn && s.end_secs >= s.start_secs && from <= width as f64 {
            // Too short for a cell: a sliver, so it is seen.
            let sliver = match charset {
                Charset::Unicode if glyph == '█' => '▏',
                _ => glyph,
            };
            cells[first] = (sliver, tone);
        }
    }
    // The gutter: the cell left of the axis, for a marker at 0 s before a bar.
    cells.insert(0, (' ', Tone::Plain));
    if let Some(m) = &row.marker {
        // Just before the bar it stops when there is room, so the bar stays whole.
        let mut at = cell_of(m.at_secs) + 1;
        if cells[at].0 != ' ' && cells[at - 1].0 == ' ' {
            at -= 1;
        }
        cells[at] = (mark_glyph(m.mark, charset), mark_tone(m.mark));
    }
    cells
}

/// The seconds between ticks: a round step giving at most `max_ticks` intervals.
pub fn tick_step(axis: u64, max_ticks: usize) -> u64 {
    const NICE: [u64; 21] = [
        1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200,
        86_400, 172_800, 604_800, 2_592_000,
    ];
    let max_ticks = max_ticks.max(1) as u64;
    let mut step = NICE
        .into_iter()
        .find(|s| axis.div_ceil(*s) <= max_ticks)
        .unwrap_or(2_592_000);
    while axis.div_ceil(step) > max_ticks {
        step *= 2;
    }
    step
}

/// A tick's label: `45s`, `1m`, `1m30s`, `2h`, `1h30m` (round ticks read short; the ETA
/// itself is [`duration`]'s).
pub fn tick_label(secs: u64) -> String {
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    match (h, m, s) {
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, 0, _) if h % 24 == 0 => format!("{}d", h / 24),
        (h, 0, _) => format!("{h}h"),
        (h, m, _) => format!("{h}h{m}m"),
    }
}

/// `text` truncated to `width` characters, with an ellipsis when cut.
fn fit(text: &str, width: usize, charset: Charset) -> String {
    let n = text.chars().count();
    if n <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let ellipsis = if charset.is_unicode() { "…" } else { "~" };
    let mut out: String = text.chars().take(width - 1).collect();
    out.push_str(ellipsis);
    out
}

/// What is said after a row's bar: its length, its marker's reason, its note.
fn note_of(row: &Row, charset: Charset) -> String {
    let mut parts = Vec::new();
    if let Some(m) = &row.marker {
        let more = if m.more > 0 {
            format!(" +{}", thousands(m.more))
        } else {
            String::new()
        };
        parts.push(format!(
            "{} {}{more}",
            mark_glyph(m.mark, charset),
            printable(&m.code)
        ));
    }
    if let Some(n) = &row.note {
        parts.push(printable(n));
    }
    if let Some((start, end)) = row.span()
        && end > start
    {
        parts.push(duration((end - start) as i64));
    }
    parts.join(", ")
}

/// Paints runs of one tone at once.
fn paint_cells(cells: &[(char, Tone)], style: Style) -> String {
    let mut out = String::new();
    let mut run = String::new();
    let mut tone = Tone::Plain;
    for (c, t) in cells {
        if *t != tone && !run.is_empty() {
            out.push_str(&style.paint(&run, tone));
            run.clear();
        }
        tone = *t;
        run.push(*c);
    }
    out.push_str(&style.paint(&run, tone));
    out
}

/// The chart as text, `canvas.width` cells wide: a title, the tick labels and the axis, the
/// rows (each group under its name), the legend, and what was folded. Names are escaped
/// ([`printable`]) and cut to the label column.
pub fn text(g: &Gantt, canvas: &Canvas) -> String {
    let charset = canvas.charset;
    let style = canvas.style;
    let width = canvas.width.max(40);
    let indent = |r: &Row| if r.group.is_empty() { 0 } else { 2 };
    let labels: Vec<String> = g.rows.iter().map(|r| printable(&r.label)).collect();
    let notes: Vec<String> = g.rows.iter().map(|r| note_of(r, charset)).collect();
    let longest_label = g
        .rows
        .iter()
        .zip(&labels)
        .map(|(r, l)| l.chars().count() + indent(r))
        .chain(g.rows.iter().map(|r| r.group.chars().count()))
        .max()
        .unwrap_or(0);
    let longest_note = notes.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let mut label_w = longest_label.clamp(6, width * 3 / 10);
    let mut note_w = longest_note.min(width * 2 / 5);
    // Label, space, gutter (a marker at 0 s before its bar), bar, space, note. The bar takes
    // at least 2/5: the note column gives way first, then the labels.
    let min_bar = (width * 2 / 5).max(16);
    while width < label_w + note_w + 3 + min_bar && note_w > 8 {
        note_w -= 1;
    }
    while width < label_w + note_w + 3 + min_bar && label_w > 8 {
        label_w -= 1;
    }
    let bar_w = width.saturating_sub(label_w + note_w + 3).max(10);
    let axis = g.axis_end_secs.max(1);
    let pad = " ".repeat(label_w + 2);

    let mut out = String::new();
    // A long title (500 node names) is cut before the ETA, which stays.
    let eta = format!(": ETA {}", duration(g.axis_end_secs as i64));
    let title = fit(
        &printable(&g.title),
        width.saturating_sub(eta.chars().count()),
        charset,
    );
    out.push_str(&style.paint(&format!("{title}{eta}"), Tone::Strong));
    out.push('\n');

    // Tick labels over the axis: left-aligned at their tick, the ETA right-aligned at the end.
    let step = tick_step(axis, (bar_w / 8).max(1));
    let position = |secs: u64| ((secs as f64 * bar_w as f64 / axis as f64) as usize).min(bar_w - 1);
    let end_label = duration(g.axis_end_secs as i64);
    let end_at = bar_w.saturating_sub(end_label.chars().count());
    let mut labels_line: Vec<char> = vec![' '; bar_w];
    let mut axis_line: Vec<char> = vec![if charset.is_unicode() { '─' } else { '-' }; bar_w];
    let (tick, first_tick, last_tick) = if charset.is_unicode() {
        ('┼', '├', '┤')
    } else {
        ('+', '|', '|')
    };
    let mut free_from = 0;
    let mut t = 0;
    while t < axis {
        let at = position(t);
        // Not against the end mark.
        if t > 0 && at + 2 >= bar_w {
            break;
        }
        axis_line[at] = if t == 0 { first_tick } else { tick };
        let label = tick_label(t);
        let n = label.chars().count();
        if at >= free_from && at + n < end_at {
            for (i, c) in label.chars().enumerate() {
                labels_line[at + i] = c;
            }
            free_from = at + n + 1;
        }
        t += step;
    }
    axis_line[bar_w - 1] = last_tick;
    for (i, c) in end_label.chars().enumerate() {
        if end_at + i < bar_w {
            labels_line[end_at + i] = c;
        }
    }
    let line = |s: &str| s.trim_end().to_string() + "\n";
    out.push_str(&line(&format!(
        "{pad}{}",
        labels_line.iter().collect::<String>()
    )));
    out.push_str(&line(&format!(
        "{pad}{}",
        style.paint(&axis_line.iter().collect::<String>(), Tone::Dim)
    )));

    let mut group = "";
    for ((row, label), note) in g.rows.iter().zip(&labels).zip(&notes) {
        if !row.group.is_empty() && row.group != group {
            out.push_str(&line(
                &style.paint(&fit(&row.group, width, charset), Tone::Strong),
            ));
        }
        group = &row.group;
        let shown = fit(
            &format!("{}{label}", " ".repeat(indent(row))),
            label_w,
            charset,
        );
        let cells = draw_row(row, bar_w, axis, charset);
        let note = fit(note, note_w, charset);
        let note = match &row.marker {
            Some(m) => style.paint(&note, mark_tone(m.mark)),
            None => note,
        };
        out.push_str(&line(&format!(
            "{shown:<label_w$} {} {note}",
            paint_cells(&cells, style)
        )));
    }

    // The legend: what the rows use.
    let mut bars: Vec<Bar> = g
        .rows
        .iter()
        .flat_map(|r| r.segments.iter().map(|s| s.bar))
        .collect();
    bars.sort();
    bars.dedup();
    let mut marks: Vec<Mark> = g
        .rows
        .iter()
        .filter_map(|r| r.marker.as_ref().map(|m| m.mark))
        .collect();
    marks.sort();
    marks.dedup();
    // (glyph painted, words, width unpainted), wrapped to the width.
    let mut legend: Vec<(String, String)> = bars
        .iter()
        .map(|b| {
            (
                style.paint(&bar_glyph(*b, charset).to_string(), bar_tone(*b)),
                bar_words(*b, g),
            )
        })
        .collect();
    legend.extend(marks.iter().map(|m| {
        (
            style.paint(&mark_glyph(*m, charset).to_string(), mark_tone(*m)),
            mark_words(*m).to_string(),
        )
    }));
    let mut current = String::new();
    let mut used = 0;
    for (glyph, words) in legend {
        let words = fit(&words, width - 2, charset);
        let n = 2 + words.chars().count();
        if used > 0 && used + 3 + n > width {
            out.push_str(&line(&current));
            current.clear();
            used = 0;
        }
        if used > 0 {
            current.push_str("   ");
            used += 3;
        }
        current.push_str(&format!("{glyph} {words}"));
        used += n;
    }
    if used > 0 {
        out.push_str(&line(&current));
    }
    if let Some(f) = &g.folded {
        out.push_str(&line(&folded_words(f)));
    }
    out
}

/// `10,000 VMs in 2,000 waves, one row per 50 waves (more than 40 VMs; the table lists each)`.
pub fn folded_words(f: &Folded) -> String {
    let per = if f.per_row == 1 {
        format!("one row per {}", f.group_noun.trim_end_matches('s'))
    } else {
        format!("one row per {} {}", f.per_row, f.group_noun)
    };
    let per = if f.groups == 0 {
        "one row per group and reason".to_string()
    } else {
        per
    };
    let in_groups = if f.noun == f.group_noun || f.groups == 0 {
        String::new()
    } else {
        format!(" in {} {}", thousands(f.groups), f.group_noun)
    };
    format!(
        "{} {}{in_groups}, {per} (more than {}; the table lists each)",
        thousands(f.items),
        f.noun,
        thousands(f.cap)
    )
}

// ---------------------------------------------------------------------------------------
// SVG.

fn bar_colour(bar: Bar) -> &'static str {
    match bar {
        Bar::Migrate | Bar::Drain => "#2e7d32",
        Bar::Shutdown => "#ef6c00",
        Bar::Upgrade => "#90a4ae",
        Bar::Span => "#5c6bc0",
    }
}

fn mark_colour(mark: Mark) -> &'static str {
    match mark {
        Mark::Blocks => "#c62828",
        Mark::Waits => "#ef6c00",
    }
}

/// The same chart as an inline SVG `width_px` wide (for `-o html`): a label column, the bars
/// as rects, the ticks, the markers and their reasons, the legend. Every name is escaped
/// ([`printable`] for control characters, which XML does not allow; maud for markup).
pub fn svg(g: &Gantt, width_px: u32) -> String {
    // A file of its own names its namespace; inline in HTML5 the parser supplies it.
    svg_markup(g, width_px).into_string().replacen(
        "<svg ",
        "<svg xmlns=\"http://www.w3.org/2000/svg\" ",
        1,
    )
}

/// [`svg`] as maud markup, to interpolate in an HTML template as `(svg_markup(&g, 960))`
/// (no `PreEscaped` needed; no `xmlns`, which an HTML page does not need and its check
/// refuses: no address in an attribute).
pub fn svg_markup(g: &Gantt, width_px: u32) -> maud::Markup {
    use maud::html;
    const ROW: u32 = 18;
    const FONT: u32 = 12;
    let width = width_px.max(320);
    let label_w = width * 3 / 10;
    let note_w = width / 5;
    let bar_x = label_w + 8;
    let bar_w = width - bar_x - note_w - 8;
    let axis = g.axis_end_secs.max(1);
    let x_of = |secs: u64| bar_x as f64 + secs.min(axis) as f64 * bar_w as f64 / axis as f64;
    let step = tick_step(axis, (bar_w / 60).max(1) as usize);
    let ticks: Vec<u64> = (0..).map(|i| i * step).take_while(|t| *t < axis).collect();

    // One line per group header and per row, after the title and the axis.
    enum Line<'a> {
        Group(&'a str),
        Row(&'a Row),
    }
    let mut lines = Vec::new();
    let mut group = "";
    for row in &g.rows {
        if !row.group.is_empty() && row.group != group {
            lines.push(Line::Group(&row.group));
        }
        group = &row.group;
        lines.push(Line::Row(row));
    }
    let top = 2 * ROW + 8;
    let y_of = |i: usize| top + i as u32 * ROW;
    let legend_y = y_of(lines.len()) + ROW;
    let height = legend_y + if g.folded.is_some() { 2 * ROW } else { ROW };
    let title = format!(
        "{}: ETA {}",
        fit(&printable(&g.title), (width / 8) as usize, Charset::Unicode),
        duration(g.axis_end_secs as i64)
    );
    let mut bars: Vec<Bar> = g
        .rows
        .iter()
        .flat_map(|r| r.segments.iter().map(|s| s.bar))
        .collect();
    bars.sort();
    bars.dedup();
    let mut marks: Vec<Mark> = g
        .rows
        .iter()
        .filter_map(|r| r.marker.as_ref().map(|m| m.mark))
        .collect();
    marks.sort();
    marks.dedup();
    let legend: Vec<(String, &str)> = bars
        .iter()
        .map(|b| (bar_words(*b, g), bar_colour(*b)))
        .chain(
            marks
                .iter()
                .map(|m| (mark_words(*m).to_string(), mark_colour(*m))),
        )
        .collect();
    html! {
        svg class="gantt" role="img"
            width=(width) height=(height) viewBox={ "0 0 " (width) " " (height) }
            font-family="monospace" font-size=(FONT) {
            title { (title) }
            text x="0" y=(FONT) font-weight="bold" { (title) }
            @for t in &ticks {
                line x1=(x_of(*t)) x2=(x_of(*t)) y1=(top - 4) y2=(legend_y - ROW) stroke="#ddd" {}
                // No label against the ETA's at the end.
                @if x_of(*t) + 64.0 < x_of(axis) {
                    text x=(x_of(*t)) y=(top - 8) fill="#555" { (tick_label(*t)) }
                }
            }
            line x1=(x_of(axis)) x2=(x_of(axis)) y1=(top - 4) y2=(legend_y - ROW) stroke="#999" {}
            text x=(x_of(axis)) y=(top - 8) text-anchor="end" fill="#333" {
                (duration(g.axis_end_secs as i64))
            }
            @for (i, line) in lines.iter().enumerate() {
                @match line {
                    Line::Group(name) => {
                        text x="0" y=(y_of(i) + FONT) font-weight="bold" { (printable(name)) }
                    }
                    Line::Row(row) => {
                        text x=(if row.group.is_empty() { 0 } else { 12 }) y=(y_of(i) + FONT) {
                            title { (printable(&row.label)) }
                            // A monospace glyph of 12 px is about 7.2 px wide; the indent is 12.
                            (fit(&printable(&row.label), (label_w.saturating_sub(12) * 10 / 74) as usize, Charset::Unicode))
                        }
                        @for s in &row.segments {
                            rect x=(x_of(s.start_secs)) y=(y_of(i) + 3) height=(ROW - 6)
                                width=((x_of(s.end_secs) - x_of(s.start_secs)).max(2.0))
                                fill=(bar_colour(s.bar)) {
                                title {
                                    (printable(&row.label)) ": " (bar_words(s.bar, g)) " "
                                    (age(s.start_secs as i64)) "–" (age(s.end_secs as i64))
                                }
                            }
                        }
                        @if let Some(m) = &row.marker {
                            // Just before the bar it stops, as in the text.
                            text x=(x_of(m.at_secs) - 1.0) y=(y_of(i) + FONT)
                                text-anchor=(if row.segments.is_empty() { "start" } else { "end" })
                                fill=(mark_colour(m.mark)) font-weight="bold" {
                                title { (printable(&m.code)) }
                                (mark_glyph(m.mark, Charset::Unicode))
                            }
                        }
                        text x=(bar_x + bar_w + 8) y=(y_of(i) + FONT) fill="#333" {
                            (note_of(row, Charset::Unicode))
                        }
                    }
                }
            }
            @for (i, (words, colour)) in legend.iter().enumerate() {
                rect x=(i as u32 * (width / legend.len().max(1) as u32)) y=(legend_y - 10)
                    width="10" height="10" fill=(colour) {}
                text x=(i as u32 * (width / legend.len().max(1) as u32) + 14) y=(legend_y) {
                    (words)
                }
            }
            @if let Some(f) = &g.folded {
                text x="0" y=(legend_y + ROW) fill="#555" { (folded_words(f)) }
            }
        }
    }
}

#[cfg(test)]
mod tests;
