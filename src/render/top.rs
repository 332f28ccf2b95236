//! `vmctl top`'s screen (ratatui): a header with the counts and the source, one table per
//! section (migrations in flight, drains and evacuations, recent failures), a footer with the
//! keys; overlays for help, the explain pane, the abort confirmation. Draws the pure model
//! and state of `policy::top`; every string from the cluster goes through
//! [`crate::text::printable`]. [`screen_text`] draws into ratatui's `TestBackend` and returns
//! the text (snapshots, docs, the benchmark).

use ratatui::Frame;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style as TuiStyle};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{
    Block, Borders, Cell, Clear, HighlightSpacing, Paragraph, Row, Table, TableState, Wrap,
};

use super::glyphs::Charset;
use crate::policy::top::{HELP, MigrationLine, Mode, Section, TopModel, TopState, visible};
use crate::text::{self as fmt, printable};

/// How the screen is drawn: the charset, colour, and lines about the watches.
#[derive(Debug, Clone)]
pub struct View {
    pub charset: Charset,
    /// Colours (never with NO_COLOR); bold/reverse are used either way.
    pub color: bool,
    /// "reconnecting…" and the like, shown under the header.
    pub notes: Vec<String>,
    /// `live` or `snapshot (read-only)`.
    pub live: bool,
}

impl View {
    fn fg(&self, c: Color) -> TuiStyle {
        if self.color {
            TuiStyle::default().fg(c)
        } else {
            TuiStyle::default()
        }
    }

    fn arrow(&self) -> &'static str {
        if self.charset.is_unicode() {
            "→"
        } else {
            "->"
        }
    }

    /// The separator dots, `|` in ASCII.
    fn dots(&self, text: String) -> String {
        if self.charset.is_unicode() {
            text
        } else {
            text.replace('·', "|")
        }
    }

    fn mark(&self) -> &'static str {
        if self.charset.is_unicode() {
            "▲"
        } else {
            "!!"
        }
    }
}

fn opt(v: Option<&str>) -> String {
    printable(v.unwrap_or("-"))
}

fn bar(charset: Charset, pct: u64, width: usize) -> String {
    let filled = ((pct.min(100) as usize) * width).div_ceil(100).min(width);
    let (on, off) = if charset.is_unicode() {
        ("█", "░")
    } else {
        ("#", ".")
    };
    format!("{}{}", on.repeat(filled), off.repeat(width - filled))
}

/// The PROGRESS cell: a bar and a percentage of the data, or of the completion budget.
pub fn progress_text(m: &MigrationLine, charset: Charset) -> String {
    match (m.progress_percent, m.progress_of) {
        (Some(p), Some("data")) => format!("{} {p:>3}%", bar(charset, p, 8)),
        (Some(p), _) => format!("{p:>3}% of budget"),
        _ => printable(&m.waiting_for),
    }
}

fn rate(v: Option<u64>) -> String {
    v.map_or("-".into(), |b| format!("{}/s", fmt::bytes(b)))
}

fn header(model: &TopModel, state: &TopState, view: &View, width: u16) -> Vec<Line<'static>> {
    let c = &model.counts;
    let bold = TuiStyle::default().add_modifier(Modifier::BOLD);
    // Each line is made of parts joined by ` · `; a narrow terminal breaks a line between
    // two parts rather than cutting it (issue 33: at 80 columns "snapshot (read-only)" and
    // the time were cut off).
    let mut first: Vec<Vec<Span<'static>>> = vec![
        vec![Span::styled("vmctl top", bold)],
        vec![Span::raw(printable(&model.source))],
        vec![Span::raw(printable(&model.scope))],
        vec![Span::raw(format!("as of {}", printable(&model.as_of)))],
    ];
    if !view.live {
        first.push(vec![Span::raw("snapshot (read-only)")]);
    }
    if state.dry_run {
        first.push(vec![Span::styled("dry run", view.fg(Color::Yellow))]);
    }
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut flight = vec![Span::raw(format!(
        "{} in flight",
        plural(c.migrations, "migration", "migrations")
    ))];
    if c.post_copy > 0 {
        flight.push(Span::styled(
            format!(" ({} {} in post-copy)", view.mark(), c.post_copy),
            view.fg(Color::Red).add_modifier(Modifier::BOLD),
        ));
    }
    let mut second = vec![
        flight,
        vec![Span::raw(format!("{} evacuating", c.evacuations))],
        vec![Span::raw(plural(c.failures, "failure", "failures"))],
    ];
    // Issue 33 (tried cold): an empty screen of one namespace said nothing of the others,
    // where `status` says `use -A`.
    if c.migrations == 0
        && c.evacuations == 0
        && c.failures == 0
        && model.scope.starts_with("namespace ")
    {
        second.push(vec![Span::styled(
            "-A for every namespace",
            view.fg(Color::Cyan),
        )]);
    }
    if !state.filter.is_empty() {
        second.push(vec![Span::styled(
            format!("filter: {}", printable(&state.filter)),
            view.fg(Color::Cyan),
        )]);
    }
    let sep = view.dots(" · ".into());
    let mut lines = pack(first, &sep, width);
    lines.extend(pack(second, &sep, width));
    // The drains first: each cordoned node with what is left on it, then the nodes VMIs
    // are evacuated from that are not cordoned (a different thing: no drain is running).
    const NODE_LINES: usize = 4;
    for n in model.nodes.iter().take(NODE_LINES) {
        let what = if n.cordoned {
            // The counts first (a narrow terminal cuts the line), the names last.
            format!(
                "cordoned {}: {} · {} evictions accepted · {} migrating · {} launcher pods left · {} moved{}",
                printable(&n.name),
                match n.vmis_left.len() {
                    0 => "no VMI left".to_string(),
                    1 => "1 VMI still on it".to_string(),
                    k => format!("{k} VMIs still on it"),
                },
                n.evictions_accepted,
                n.migrations_in_flight,
                n.launcher_pods_left,
                n.moved.len(),
                if n.vmis_left.is_empty() {
                    String::new()
                } else {
                    format!(
                        " · left: {}",
                        printable(&crate::policy::status::names_list(&n.vmis_left))
                    )
                }
            )
        } else {
            // Only the VMIs top follows are counted here: no count of those on the node.
            format!(
                "evacuated, not cordoned {}: {} evictions accepted · {} migrating",
                printable(&n.name),
                n.evictions_accepted,
                n.migrations_in_flight
            )
        };
        let tone = if n.state == "drained" {
            view.fg(Color::Green)
        } else {
            view.fg(Color::Yellow).add_modifier(Modifier::BOLD)
        };
        // Its parts in as many lines as they need (at 80 columns the counts after the
        // first three were cut off), each line cut to the terminal.
        let parts = what
            .split(" · ")
            .map(|p| vec![Span::styled(p.to_string(), tone)])
            .collect();
        for l in pack(parts, &view.dots(" · ".into()), width) {
            lines.push(Line::styled(
                cut(&l.to_string(), width as usize, view.charset),
                tone,
            ));
        }
    }
    let others: Vec<&String> = model
        .cordoned_nodes
        .iter()
        .filter(|c| !model.nodes.iter().any(|n| &n.name == *c))
        .collect();
    let more = model.nodes.len().saturating_sub(NODE_LINES);
    if !others.is_empty() || more > 0 {
        let mut words = Vec::new();
        if more > 0 {
            words.push(format!("{more} more nodes cordoned or evacuated"));
        }
        if !others.is_empty() {
            words.push(format!(
                "cordoned {}",
                printable(
                    &others
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            ));
        }
        lines.push(Line::styled(
            cut(&view.dots(words.join(" · ")), width as usize, view.charset),
            view.fg(Color::Yellow),
        ));
    }
    for n in &view.notes {
        lines.push(Line::styled(
            cut(&printable(n), width as usize, view.charset),
            view.fg(Color::Yellow),
        ));
    }
    lines
}

fn section_block(
    section: Section,
    shown: usize,
    total: usize,
    focused: bool,
    view: &View,
) -> Block<'static> {
    let count = if shown == total {
        format!("{total}")
    } else {
        format!("{shown} of {total}")
    };
    let title = format!(
        " {}{} ({count}) ",
        if focused { "[*] " } else { "" },
        section.title()
    );
    let style = if focused {
        view.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    } else {
        TuiStyle::default()
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(title, style));
    if view.charset.is_unicode() {
        block
    } else {
        block.border_set(ratatui::symbols::border::Set {
            top_left: "+",
            top_right: "+",
            bottom_left: "+",
            bottom_right: "+",
            vertical_left: "|",
            vertical_right: "|",
            horizontal_top: "-",
            horizontal_bottom: "-",
        })
    }
}

// ---------------------------------------------------------------- fitting the terminal

/// What one column of a section needs: the width of its widest text, the narrowest it is
/// still worth showing at, and when it gives way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnNeed {
    /// Its widest cell or header, whole.
    pub want: u16,
    /// Narrower than this the column is dropped rather than cut.
    pub min: u16,
    /// 0: never dropped (the VMI's name). The highest number is dropped first, the columns
    /// of one number together.
    pub drop: u8,
    /// How wide it grows before the other columns have their whole text: `want` for most,
    /// less for a long free text (a diagnosis, what a migration waits for), which gets the
    /// rest of its text only when every column kept has its own.
    pub soft: u16,
}

/// The widths of a section's columns in `width` cells with one space between the columns
/// kept (0: dropped). The way htop and k9s fit a narrow terminal: the columns that matter
/// least go first, the name column keeps its whole text as long as anything else can give
/// way, and is cut only when it alone is wider than the terminal. The room left goes to the
/// columns in the order they are kept: up to `soft` first, then up to `want`. Pure.
pub fn fit_columns(cols: &[ColumnNeed], width: u16) -> Vec<u16> {
    let width = width as usize;
    let base = |c: &ColumnNeed| {
        if c.drop == 0 {
            c.want as usize
        } else {
            c.min.min(c.want) as usize
        }
    };
    let mut kept = vec![true; cols.len()];
    let gaps = |kept: &[bool]| kept.iter().filter(|k| **k).count().saturating_sub(1);
    loop {
        let need: usize = cols
            .iter()
            .zip(&kept)
            .filter(|(_, k)| **k)
            .map(|(c, _)| base(c))
            .sum::<usize>()
            + gaps(&kept);
        if need <= width {
            break;
        }
        let Some(worst) = cols
            .iter()
            .zip(&kept)
            .filter(|(c, k)| **k && c.drop > 0)
            .map(|(c, _)| c.drop)
            .max()
        else {
            break;
        };
        for (c, k) in cols.iter().zip(kept.iter_mut()) {
            if c.drop == worst {
                *k = false;
            }
        }
    }
    let mut widths: Vec<usize> = cols
        .iter()
        .zip(&kept)
        .map(|(c, k)| if *k { base(c) } else { 0 })
        .collect();
    let room = width.saturating_sub(gaps(&kept));
    // Only names left, and still too wide: the widest gives way.
    let mut over = widths.iter().sum::<usize>().saturating_sub(room);
    while over > 0 {
        let Some((i, w)) = widths.iter().copied().enumerate().max_by_key(|(_, w)| *w) else {
            break;
        };
        if w <= 1 {
            break;
        }
        widths[i] -= 1;
        over -= 1;
    }
    let mut left = room.saturating_sub(widths.iter().sum());
    let mut drops: Vec<u8> = (0..cols.len())
        .filter(|i| kept[*i])
        .map(|i| cols[i].drop)
        .collect();
    drops.sort_unstable();
    drops.dedup();
    for soft in [true, false] {
        for &d in &drops {
            // The columns of one number share, a cell each in turn (a source and a target).
            let group: Vec<usize> = (0..cols.len())
                .filter(|i| kept[*i] && cols[*i].drop == d)
                .collect();
            let to = |i: usize| {
                let c = &cols[i];
                (if soft { c.soft.min(c.want) } else { c.want }) as usize
            };
            while left > 0 {
                let mut grew = false;
                for &i in &group {
                    if left > 0 && widths[i] < to(i) {
                        widths[i] += 1;
                        left -= 1;
                        grew = true;
                    }
                }
                if !grew {
                    break;
                }
            }
        }
    }
    widths
        .into_iter()
        .map(|w| w.min(u16::MAX as usize) as u16)
        .collect()
}

/// The heights of the three sections in `body` rows. Each needs its borders, its header
/// and its rows (`needs`; a row is `steps` lines); when all fit, the room left goes to the
/// migrations; when not, each keeps one row and the rest is dealt a row at a time to each
/// section in turn, so a small terminal (24 rows) shows a few rows of every section and no
/// line is left that cannot hold a row. Pure.
pub fn section_heights(body: u16, needs: [u16; 3], steps: [u16; 3]) -> [u16; 3] {
    let total: u16 = needs.iter().sum();
    if total <= body {
        let mut h = needs;
        h[0] += body - total;
        return h;
    }
    let mut h = [0, 1, 2].map(|i| (3 + steps[i]).min(needs[i]));
    let floor: u16 = h.iter().sum();
    if floor >= body {
        // Too small even for one row each: thirds.
        let third = body / 3;
        return [body - 2 * third, third, third];
    }
    let mut rest = body - floor;
    loop {
        let mut dealt = false;
        for i in 0..3 {
            if rest >= steps[i] && h[i] + steps[i] <= needs[i] {
                h[i] += steps[i];
                rest -= steps[i];
                dealt = true;
            }
        }
        if !dealt {
            break;
        }
    }
    // Less than a row left: under the last section.
    h[2] += rest;
    h
}

/// The cells a character takes (a foreign wide character two).
fn char_width(c: char) -> usize {
    if (c as u32) >= 0x1100 && is_wide(c) {
        2
    } else {
        1
    }
}

fn text_width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// `s` in `w` cells: whole when it fits, else cut with `…` (`~` in ASCII) as its last cell,
/// so that a cut name is never mistaken for a whole one.
fn cut(s: &str, w: usize, charset: Charset) -> String {
    if text_width(s) <= w {
        return s.to_string();
    }
    if w == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let cw = char_width(c);
        if used + cw > w - 1 {
            break;
        }
        out.push(c);
        used += cw;
    }
    out.push_str(if charset.is_unicode() { "…" } else { "~" });
    out
}

/// `s` in `w` cells, its end kept: whole when it fits, else `…` (`~` in ASCII) then its last
/// cells. A launcher pod's name differs from its sibling's only at the end (its suffix and
/// the live pod's `*`), so that end is what a narrow column keeps.
fn cut_start(s: &str, w: usize, charset: Charset) -> String {
    if text_width(s) <= w {
        return s.to_string();
    }
    if w == 0 {
        return String::new();
    }
    let mut tail: Vec<char> = Vec::new();
    let mut used = 0;
    for c in s.chars().rev() {
        let cw = char_width(c);
        if used + cw > w - 1 {
            break;
        }
        tail.push(c);
        used += cw;
    }
    let mut out = String::from(if charset.is_unicode() { "…" } else { "~" });
    out.extend(tail.into_iter().rev());
    out
}

/// Parts joined by `sep` into as few lines of `width` cells as they fit in; a part is
/// never split (one wider than the terminal is cut by the screen).
fn pack(parts: Vec<Vec<Span<'static>>>, sep: &str, width: u16) -> Vec<Line<'static>> {
    let width = width as usize;
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut line: Vec<Span<'static>> = Vec::new();
    let mut used = 0usize;
    for part in parts {
        let w: usize = part.iter().map(|s| s.width()).sum();
        if !line.is_empty() && used + text_width(sep) + w > width {
            lines.push(Line::from(std::mem::take(&mut line)));
            used = 0;
        }
        if !line.is_empty() {
            line.push(Span::raw(sep.to_string()));
            used += text_width(sep);
        }
        used += w;
        line.extend(part);
    }
    if !line.is_empty() {
        lines.push(Line::from(line));
    }
    lines
}

/// One column of a section: its header (a short one when the whole one does not fit), the
/// narrowest it is shown at, the widest it grows to, when it gives way, and how wide a long
/// text grows before the other columns have theirs ([`ColumnNeed::soft`]).
struct Column {
    head: &'static str,
    short: &'static str,
    min: u16,
    cap: u16,
    drop: u8,
    soft: u16,
}

const fn col(head: &'static str, short: &'static str, min: u16, cap: u16, drop: u8) -> Column {
    Column {
        head,
        short,
        min,
        cap,
        drop,
        soft: u16::MAX,
    }
}

/// A long free text: `soft` wide while the other columns need the room.
const fn text(head: &'static str, short: &'static str, min: u16, soft: u16, drop: u8) -> Column {
    Column {
        head,
        short,
        min,
        cap: 400,
        drop,
        soft,
    }
}

/// The migrations' source and target columns (their second line is the launcher pod).
const POD_COLUMNS: (usize, usize) = (2, 4);

/// The columns of each section, left to right. Dropped first at a narrow terminal: the
/// dirty rate, then the source and target together, the progress (migrations); the phase, the
/// migration's name, the last failure, the nodes (evacuations); the kind, the migration's
/// name, the age (failures). The VMI's name is never dropped.
fn columns(section: Section) -> &'static [Column] {
    const MIGRATIONS: &[Column] = &[
        col("VMI / MIGRATION", "VMI", 3, 96, 0),
        col("PHASE / MODE", "PHASE", 10, 14, 1),
        col("SOURCE NODE / POD", "SOURCE", 8, 64, 3),
        col("", "", 2, 2, 3),
        col("TARGET NODE / POD (* live)", "TARGET", 8, 64, 3),
        text("PROGRESS", "PROGRESS", 14, 32, 2),
        col("DIRTY/ETA", "DIRTY/ETA", 9, 12, 5),
    ];
    const EVACUATIONS: &[Column] = &[
        col("VMI", "VMI", 3, 96, 0),
        col("FROM NODE", "FROM", 6, 64, 2),
        col("STATE", "STATE", 10, 14, 1),
        col("MIGRATION", "MIGRATION", 12, 64, 5),
        col("PHASE", "PHASE", 9, 15, 6),
        col("TO NODE", "TO", 6, 64, 3),
        text("LAST FAILURE", "FAILURE", 12, 0, 4),
    ];
    const FAILURES: &[Column] = &[
        col("VMI", "VMI", 3, 96, 0),
        col("MIGRATION", "MIGRATION", 12, 64, 3),
        col("AGE", "AGE", 3, 8, 2),
        col("KIND", "KIND", 16, 24, 4),
        text("DIAGNOSIS", "DIAGNOSIS", 30, 0, 1),
    ];
    match section {
        Section::Migrations => MIGRATIONS,
        Section::Evacuations => EVACUATIONS,
        Section::Failures => FAILURES,
    }
}

/// One cell before it is fitted: its lines, each with its style.
type CellLines = Vec<(String, TuiStyle)>;

fn plain(s: String) -> CellLines {
    vec![(s, TuiStyle::default())]
}

/// The cells of one row of `section`.
fn row_cells(model: &TopModel, section: Section, i: usize, view: &View) -> Vec<CellLines> {
    let none = TuiStyle::default();
    match section {
        Section::Migrations => {
            let m = &model.migrations[i];
            let red = view.fg(Color::Red).add_modifier(Modifier::BOLD);
            let side = |node: Option<&str>, pod: Option<&String>| {
                let pod = match pod {
                    Some(p) if m.live_pod.as_ref() == Some(p) => format!("{}*", printable(p)),
                    Some(p) => printable(p),
                    None => "-".into(),
                };
                vec![(opt(node), none), (pod, none)]
            };
            vec![
                vec![
                    (printable(&format!("{}/{}", m.namespace, m.vmi)), none),
                    (printable(&m.name), none),
                ],
                vec![
                    (printable(&m.phase), none),
                    if m.point_of_no_return {
                        (format!("{} PostCopy", view.mark()), red)
                    } else {
                        (opt(m.mode.as_deref()), none)
                    },
                ],
                side(m.source_node.as_deref(), m.source_pod.as_ref()),
                plain(view.arrow().to_string()),
                side(m.target_node.as_deref(), m.target_pod.as_ref()),
                vec![
                    (progress_text(m, view.charset), none),
                    if m.point_of_no_return {
                        (format!("{} no return", view.mark()), red)
                    } else if m.progress_percent.is_some() {
                        (
                            m.elapsed_seconds
                                .map_or(String::new(), |e| format!("{} elapsed", fmt::duration(e))),
                            none,
                        )
                    } else {
                        (String::new(), none)
                    },
                ],
                vec![
                    (rate(m.dirty_rate_bps), none),
                    (
                        m.eta_seconds
                            .map_or("-".into(), |s| fmt::duration(s as i64)),
                        none,
                    ),
                ],
            ]
        }
        Section::Evacuations => {
            let e = &model.evacuations[i];
            // Marked for evacuation (attempt n of its chain), or still on a cordoned node
            // with nothing evacuating it.
            let state = match (e.marked, e.attempt) {
                (false, _) => "not evacuated".to_string(),
                (true, Some(a)) if a > 1 => format!("evacuating #{a}"),
                (true, _) => "evacuating".to_string(),
            };
            vec![
                plain(printable(&format!("{}/{}", e.namespace, e.vmi))),
                plain(printable(&e.from_node)),
                plain(state),
                plain(opt(e.migration.as_deref())),
                plain(opt(e.phase.as_deref())),
                plain(opt(e.target_node.as_deref())),
                plain(opt(e.last_failure.as_deref())),
            ]
        }
        Section::Failures => {
            let x = &model.failures[i];
            vec![
                plain(printable(&format!("{}/{}", x.namespace, x.vmi))),
                plain(opt(x.migration.as_deref())),
                plain(x.ago_seconds.map_or("-".into(), fmt::age)),
                plain(match x.attempt {
                    Some(n) if n > 1 || x.retry.is_some() => {
                        format!("{} #{n}", printable(&x.kind))
                    }
                    _ => printable(&x.kind),
                }),
                plain(printable(&x.diagnosis)),
            ]
        }
    }
}

/// Which columns of `section` a terminal `width` columns wide shows, and how wide each is
/// (0: dropped), for these rows: the table inside the section's box, after the box's two
/// borders and the selection mark's two cells.
fn fit_section(section: Section, rows: &[Vec<CellLines>], width: u16) -> Vec<u16> {
    let needs: Vec<(ColumnNeed, bool)> = columns(section)
        .iter()
        .enumerate()
        .map(|(j, c)| {
            let widest = rows
                .iter()
                .flat_map(|r| r[j].iter())
                .map(|(s, _)| text_width(s))
                .max()
                .unwrap_or(0)
                .max(text_width(c.head))
                .min(c.cap as usize) as u16;
            // A column with nothing to say (every cell `-`, as DIRTY/ETA without metrics)
            // is the first to give way.
            let empty = section == Section::Migrations
                && !rows.is_empty()
                && rows
                    .iter()
                    .flat_map(|r| r[j].iter())
                    .all(|(s, _)| s.trim().is_empty() || s.trim() == "-");
            (
                ColumnNeed {
                    want: widest.max(text_width(c.short) as u16),
                    min: c.min,
                    drop: c.drop,
                    soft: c.soft,
                },
                empty && c.drop > 0,
            )
        })
        .collect();
    fit_dropping_empty(&needs, width.saturating_sub(4))
}

/// [`fit_columns`], except that a column with nothing to say (`true` beside it) goes first,
/// whole, when the columns do not all have their whole text in `width`. Pure.
fn fit_dropping_empty(needs: &[(ColumnNeed, bool)], width: u16) -> Vec<u16> {
    let all: Vec<ColumnNeed> = needs.iter().map(|(c, _)| *c).collect();
    let whole = all.iter().map(|c| c.want as usize + 1).sum::<usize>();
    if whole <= width as usize + 1 || !needs.iter().any(|(_, empty)| *empty) {
        return fit_columns(&all, width);
    }
    let kept: Vec<ColumnNeed> = needs
        .iter()
        .filter(|(_, empty)| !empty)
        .map(|(c, _)| *c)
        .collect();
    let mut fitted = fit_columns(&kept, width).into_iter();
    needs
        .iter()
        .map(|(_, empty)| {
            if *empty {
                0
            } else {
                fitted.next().unwrap_or(0)
            }
        })
        .collect()
}

fn draw_section(
    f: &mut Frame,
    area: Rect,
    model: &TopModel,
    state: &TopState,
    view: &View,
    section: Section,
) {
    let all = visible(model, section, &state.filter);
    // Only the rows that fit are built (a redraw costs the screen, not the fleet): the
    // window scrolls so that the selected row is its last one when it is further down.
    let row_height = if section == Section::Migrations { 2 } else { 1 };
    let fits = (area.height.saturating_sub(3) / row_height).max(1) as usize;
    let selected = state.selected_index(model, section);
    let offset = selected.map_or(0, |i| i.saturating_sub(fits - 1));
    let shown = &all[offset.min(all.len())..(offset + fits).min(all.len())];
    let focused = state.section == section;
    let cells: Vec<Vec<CellLines>> = shown
        .iter()
        .map(|&i| row_cells(model, section, i, view))
        .collect();
    // Issue 33: at 80 columns every column got its share and the names were cut to six
    // characters; now the names are whole and the columns that matter least give way.
    let widths = fit_section(section, &cells, area.width);
    let kept: Vec<usize> = (0..widths.len()).filter(|j| widths[*j] > 0).collect();
    let cols = columns(section);
    let rows: Vec<Row> = cells
        .into_iter()
        .map(|row| {
            Row::new(kept.iter().map(|&j| {
                let w = widths[j] as usize;
                Cell::from(Text::from(
                    row[j]
                        .iter()
                        .enumerate()
                        .map(|(n, (s, style))| {
                            // A pod's line keeps its end: the suffix and the live mark.
                            let pod_line = section == Section::Migrations
                                && n == 1
                                && (j == POD_COLUMNS.0 || j == POD_COLUMNS.1);
                            let text = if pod_line {
                                cut_start(s, w, view.charset)
                            } else {
                                cut(s, w, view.charset)
                            };
                            Line::styled(text, *style)
                        })
                        .collect::<Vec<_>>(),
                ))
            }))
            .height(row_height)
        })
        .collect();
    let head: Vec<String> = kept
        .iter()
        .map(|&j| {
            let w = widths[j] as usize;
            let c = &cols[j];
            if text_width(c.head) <= w {
                c.head.to_string()
            } else {
                cut(c.short, w, view.charset)
            }
        })
        .collect();
    let constraints: Vec<Constraint> = kept
        .iter()
        .map(|&j| Constraint::Length(widths[j]))
        .collect();
    let block = section_block(
        section,
        all.len(),
        section_total(model, section),
        focused,
        view,
    );
    let highlight = if focused {
        TuiStyle::default().add_modifier(Modifier::REVERSED)
    } else {
        TuiStyle::default()
    };
    let t = Table::new(rows, constraints)
        .header(
            Row::new(head.into_iter().map(Cell::from))
                .style(TuiStyle::default().add_modifier(Modifier::BOLD)),
        )
        .block(block)
        .row_highlight_style(highlight)
        .highlight_spacing(HighlightSpacing::Always)
        .highlight_symbol(if !focused {
            "  "
        } else if view.charset.is_unicode() {
            "▶ "
        } else {
            "> "
        })
        .column_spacing(1);
    let mut ts = TableState::default().with_selected(selected.map(|i| i - offset));
    f.render_stateful_widget(t, area, &mut ts);
}

fn section_total(model: &TopModel, section: Section) -> usize {
    match section {
        Section::Migrations => model.migrations.len(),
        Section::Evacuations => model.evacuations.len(),
        Section::Failures => model.failures.len(),
    }
}

fn footer(state: &TopState, view: &View, width: u16) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(m) = &state.message {
        // What the last key did, or why it was refused: whole, in up to three lines.
        let style = view.fg(Color::Yellow).add_modifier(Modifier::BOLD);
        let words = printable(m)
            .split(' ')
            .map(|w| vec![Span::styled(w.to_string(), style)])
            .collect();
        let mut said = pack(words, " ", width);
        if said.len() > 3 {
            said.truncate(3);
            let last = said[2].to_string();
            said[2] = Line::styled(
                cut(&format!("{last} …"), width as usize, view.charset),
                style,
            );
        }
        lines.extend(said.into_iter().map(|l| {
            let text = l.to_string();
            Line::styled(cut(&text, width as usize, view.charset), style)
        }));
    }
    let keys: Vec<String> = match &state.mode {
        Mode::Filter { .. } => vec![
            format!("filter (namespace or node): {}_", printable(&state.filter)),
            "Enter keep".into(),
            "Esc cancel".into(),
        ],
        Mode::Explain { .. } => vec![
            "Up/Down j/k scroll".into(),
            "PgUp/PgDn".into(),
            "Esc close".into(),
            "q quit".into(),
        ],
        Mode::Confirm(_) => vec!["y abort".into(), "any other key cancels".into()],
        _ => vec![
            "Up/Down j/k select".into(),
            "Tab section".into(),
            "/ filter".into(),
            "Enter explain".into(),
            "a abort".into(),
            "? help".into(),
            "q quit".into(),
        ],
    };
    let sep = view.dots(" · ".into());
    // Issue 33: at 80 columns the line of keys was cut before "q quit". The short names
    // of the arrows first, then as many lines as the keys need.
    let joined = keys.join(&sep);
    let keys: Vec<String> = if text_width(&joined) > width as usize {
        keys.into_iter()
            .map(|k| k.replace("Up/Down j/k", "j/k"))
            .collect()
    } else {
        keys
    };
    let dim = TuiStyle::default().add_modifier(Modifier::DIM);
    let parts = keys
        .into_iter()
        .map(|k| vec![Span::styled(k, dim)])
        .collect();
    lines.extend(pack(parts, &sep, width).into_iter().map(|l| l.style(dim)));
    lines
}

/// A rectangle of `pct_x`% × `pct_y`% centred in `area` (at least `min_h` rows).
/// At least 78 columns wide when the terminal has them (a help line is not wrapped at 80).
fn centered(area: Rect, pct_x: u16, pct_y: u16, min_h: u16) -> Rect {
    let w = ((area.width as u32 * pct_x as u32 / 100) as u16).max(area.width.min(78));
    let h = ((area.height as u32 * pct_y as u32 / 100) as u16)
        .max(min_h)
        .min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

fn overlay(
    f: &mut Frame,
    area: Rect,
    title: String,
    lines: Vec<Line<'static>>,
    scroll: usize,
    view: &View,
) {
    f.render_widget(Clear, area);
    let block = section_block_plain(title, view);
    let p = Paragraph::new(lines)
        .block(block)
        .wrap(Wrap { trim: false })
        .scroll((scroll.min(u16::MAX as usize) as u16, 0));
    f.render_widget(p, area);
}

fn section_block_plain(title: String, view: &View) -> Block<'static> {
    let b = Block::default().borders(Borders::ALL).title(Span::styled(
        title,
        TuiStyle::default().add_modifier(Modifier::BOLD),
    ));
    if view.charset.is_unicode() {
        b
    } else {
        b.border_set(ratatui::symbols::border::Set {
            top_left: "+",
            top_right: "+",
            bottom_left: "+",
            bottom_right: "+",
            vertical_left: "|",
            vertical_right: "|",
            horizontal_top: "-",
            horizontal_bottom: "-",
        })
    }
}

/// Draws one frame.
pub fn draw(f: &mut Frame, model: &TopModel, state: &TopState, view: &View) {
    let area = f.area();
    let head = header(model, state, view, area.width);
    let foot = footer(state, view, area.width);
    let [top, body, bottom] = Layout::vertical([
        Constraint::Length(head.len() as u16),
        Constraint::Min(6),
        Constraint::Length(foot.len() as u16),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(head), top);
    // Each section as tall as its rows when they fit (an empty one takes three lines),
    // else a share of what is left.
    let need = |section: Section, row_height: u16| {
        let rows = visible(model, section, &state.filter).len();
        3 + (rows.min(u16::MAX as usize / 4) as u16).saturating_mul(row_height)
    };
    let [ha, hb, hc] = section_heights(
        body.height,
        [
            need(Section::Migrations, 2),
            need(Section::Evacuations, 1),
            need(Section::Failures, 1),
        ],
        [2, 1, 1],
    );
    let [a, b, c] = Layout::vertical([
        Constraint::Length(ha),
        Constraint::Length(hb),
        Constraint::Length(hc),
    ])
    .areas(body);
    draw_section(f, a, model, state, view, Section::Migrations);
    draw_section(f, b, model, state, view, Section::Evacuations);
    draw_section(f, c, model, state, view, Section::Failures);
    f.render_widget(Paragraph::new(foot), bottom);

    match &state.mode {
        Mode::Help => {
            let mut lines: Vec<Line> = HELP
                .iter()
                .map(|(k, what)| Line::from(format!("{k:>12}  {what}")))
                .collect();
            lines.push(Line::from(""));
            lines.push(Line::from(format!(
                "{:>12}  post-copy: the point of no return (abort is refused)",
                view.mark()
            )));
            lines.push(Line::from(format!(
                "{:>12}  the pod that runs the guest now",
                "*"
            )));
            lines.push(Line::from(
                "    PROGRESS  of the data when metrics are read, else of KubeVirt's completion budget",
            ));
            // The lines wrapped in the box (2 borders) count as many rows as they take.
            let inner = centered(area, 80, 0, 0).width.saturating_sub(2).max(1) as usize;
            let h = lines
                .iter()
                .map(|l| l.width().max(1).div_ceil(inner) as u16)
                .sum::<u16>()
                + 2;
            overlay(
                f,
                centered(area, 80, 0, h),
                " Help (any key closes) ".into(),
                lines,
                0,
                view,
            );
        }
        Mode::Explain {
            title,
            lines,
            scroll,
        } => {
            let text: Vec<Line> = lines.iter().map(|l| Line::from(printable(l))).collect();
            overlay(
                f,
                centered(area, 94, 88, 5),
                format!(" explain {} ", printable(title)),
                text,
                *scroll,
                view,
            );
        }
        Mode::Confirm(t) => {
            let mut lines = vec![
                Line::from(format!(
                    "Abort migration {}/{} of VMI {}?",
                    printable(&t.namespace),
                    printable(&t.migration),
                    printable(&t.vmi)
                )),
                Line::from("The VirtualMachineInstanceMigration is deleted (as vmctl abort does):"),
                Line::from("KubeVirt cancels the job and the guest stays on its source node."),
            ];
            if state.dry_run {
                lines.push(Line::styled(
                    "--dry-run: nothing is deleted, vmctl says what it would do.",
                    view.fg(Color::Yellow),
                ));
            }
            lines.push(Line::from(""));
            lines.push(Line::styled(
                "y: abort    n / Esc: keep it running",
                TuiStyle::default().add_modifier(Modifier::BOLD),
            ));
            let h = lines.len() as u16 + 2;
            overlay(
                f,
                centered(area, 70, 0, h),
                " Abort? ".into(),
                lines,
                0,
                view,
            );
        }
        Mode::Normal | Mode::Filter { .. } => {}
    }
}

/// The text of a buffer, one line per row, trailing blanks trimmed.
pub fn buffer_text(buffer: &ratatui::buffer::Buffer) -> String {
    let w = buffer.area.width as usize;
    let mut out = String::new();
    for row in buffer.content.chunks(w.max(1)) {
        let mut line = String::new();
        let mut skip = 0usize;
        for cell in row {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let s = cell.symbol();
            let width = unicode_width_of(s);
            skip = width.saturating_sub(1);
            line.push_str(s);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn unicode_width_of(s: &str) -> usize {
    // The screen draws no wide characters of its own; a foreign wide one takes two cells.
    s.chars()
        .map(|c| {
            if (c as u32) >= 0x1100 && is_wide(c) {
                2
            } else {
                1
            }
        })
        .sum::<usize>()
        .max(1)
}

fn is_wide(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x115F | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6 | 0x1F300..=0x1F64F | 0x1F900..=0x1F9FF | 0x20000..=0x3FFFD)
}

/// One frame drawn into a `width`×`height` TestBackend, as text.
pub fn screen_text(
    model: &TopModel,
    state: &TopState,
    view: &View,
    width: u16,
    height: u16,
) -> String {
    let mut terminal = match Terminal::new(TestBackend::new(width, height)) {
        Ok(t) => t,
        Err(never) => match never {},
    };
    if let Err(never) = terminal.draw(|f| draw(f, model, state, view)) {
        match never {}
    }
    buffer_text(terminal.backend().buffer())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::top::{Key, on_key};

    fn model(n: usize) -> TopModel {
        TopModel {
            migrations: (0..n)
                .map(|i| MigrationLine {
                    namespace: "prod".into(),
                    name: format!("mig-{i:03}"),
                    vmi: format!("vm-{i:03}"),
                    phase: "Running".into(),
                    ..MigrationLine::default()
                })
                .collect(),
            ..TopModel::default()
        }
    }

    fn view() -> View {
        View {
            charset: Charset::Ascii,
            color: false,
            notes: Vec::new(),
            live: true,
        }
    }

    #[test]
    fn the_window_follows_the_selection() {
        let m = model(100);
        let mut s = TopState::default();
        for _ in 0..60 {
            s = on_key(s, &m, Key::Down).0;
        }
        let screen = screen_text(&m, &s, &view(), 120, 40);
        let selected = screen
            .lines()
            .find(|l| l.starts_with("|> "))
            .unwrap_or_else(|| panic!("{screen}"));
        assert!(selected.contains("prod/vm-060"), "{screen}");
        assert!(!screen.contains("vm-000"), "{screen}");
        assert!(screen.contains("Migrations in flight (100)"), "{screen}");
        // Back to the top.
        let s = on_key(s, &m, Key::Char('g')).0;
        let screen = screen_text(&m, &s, &view(), 120, 40);
        assert!(screen.contains("|> prod/vm-000"), "{screen}");
    }

    /// Issue 33 (tried cold): one namespace's empty screen said nothing of the others, and
    /// one migration was "1 migrations".
    #[test]
    fn an_empty_namespace_points_at_a_and_one_is_singular() {
        let mut empty = model(0);
        empty.scope = "namespace default".into();
        let screen = screen_text(&empty, &TopState::default(), &view(), 120, 20);
        assert!(screen.contains("0 migrations in flight"), "{screen}");
        assert!(screen.contains("-A for every namespace"), "{screen}");
        let mut one = model(1);
        one.counts.migrations = 1;
        one.scope = "namespace prod".into();
        let screen = screen_text(&one, &TopState::default(), &view(), 120, 20);
        assert!(screen.contains("1 migration in flight"), "{screen}");
        assert!(!screen.contains("-A for every namespace"), "{screen}");
    }

    #[test]
    fn progress_cell() {
        let mut m = MigrationLine {
            progress_percent: Some(50),
            progress_of: Some("data"),
            ..MigrationLine::default()
        };
        assert_eq!(progress_text(&m, Charset::Ascii), "####....  50%");
        m.progress_of = Some("budget");
        assert_eq!(progress_text(&m, Charset::Ascii), " 50% of budget");
        m.progress_percent = None;
        m.waiting_for = "target pod\u{1b}".into();
        assert_eq!(progress_text(&m, Charset::Ascii), "target pod\\u{1b}");
    }
}

#[cfg(test)]
mod drain_tests {
    use crate::policy::status::{NodeFacts, StatusInputs, build_report};
    use crate::policy::top::{TopState, build_model};
    use serde_json::json;

    fn vmi(
        name: &str,
        node: &str,
        evacuation: Option<&str>,
    ) -> crate::model::VirtualMachineInstance {
        let mut v = json!({"metadata": {"name": name, "namespace": "prod", "uid": format!("uid-{name}")},
            "spec": {}, "status": {"phase": "Running", "nodeName": node}});
        if let Some(e) = evacuation {
            v["status"]["evacuationNodeName"] = json!(e);
        }
        serde_json::from_value(v).unwrap()
    }

    fn vmim(
        name: &str,
        vmi: &str,
        node: &str,
        phase: &str,
        at: &str,
    ) -> crate::model::VirtualMachineInstanceMigration {
        let mut m = json!({"metadata": {"name": name, "namespace": "prod", "uid": format!("uid-{name}"),
                "creationTimestamp": at,
                "annotations": {"kubevirt.io/evacuationMigration": node}},
            "spec": {"vmiName": vmi}, "status": {"phase": phase}});
        if phase == "Failed" {
            m["status"]["migrationState"] = json!({"failed": true, "completed": true,
                "failureReason": "virError(Code=9): Connection reset by peer\nmore"});
        }
        serde_json::from_value(m).unwrap()
    }

    /// Issue 33: top said `1 draining nodes (node-3)` (an evacuation source) while node-1,
    /// cordoned, appeared nowhere. A cordoned node is named as cordoned with the VMIs still
    /// on it; a node VMIs are evacuated from is an evacuation source, not a drain.
    #[test]
    fn a_cordoned_node_and_an_evacuation_source_are_told_apart() {
        let inputs = StatusInputs {
            vmis: vec![
                vmi("still-01", "node-1", None),
                vmi("moved-01", "node-2", None),
                vmi("leaving-01", "node-3", Some("node-3")),
            ],
            vmims: vec![
                vmim(
                    "ev-a",
                    "moved-01",
                    "node-1",
                    "Failed",
                    "2026-12-01T00:00:00Z",
                ),
                vmim(
                    "ev-b",
                    "moved-01",
                    "node-1",
                    "Succeeded",
                    "2026-12-01T00:01:00Z",
                ),
                vmim(
                    "ev-c",
                    "leaving-01",
                    "node-3",
                    "Running",
                    "2026-12-01T00:02:00Z",
                ),
            ],
            nodes: vec![
                NodeFacts {
                    name: "node-1".into(),
                    cordoned: true,
                },
                NodeFacts {
                    name: "node-2".into(),
                    cordoned: false,
                },
                NodeFacts {
                    name: "node-3".into(),
                    cordoned: false,
                },
            ],
            ..StatusInputs::default()
        };
        let now = "2026-12-01T00:05:00Z".parse().unwrap();
        let report = build_report(&inputs, now, "test");
        let model = build_model(&report, "all namespaces", &[]);
        assert_eq!(model.cordoned_nodes, vec!["node-1".to_string()]);
        assert_eq!(model.evacuation_sources, vec!["node-3".to_string()]);
        let n1 = report.nodes.iter().find(|n| n.name == "node-1").unwrap();
        assert!(n1.cordoned);
        assert_eq!(n1.vmis_left, vec!["prod/still-01".to_string()]);
        // A failed attempt then a successful retry: moved.
        assert_eq!(n1.moved, vec!["prod/moved-01".to_string()]);
        assert_eq!(n1.state, "draining");
        let n3 = report.nodes.iter().find(|n| n.name == "node-3").unwrap();
        assert!(!n3.cordoned);
        assert_eq!(n3.state, "evacuation-source");
        assert_eq!((n3.evictions_accepted, n3.migrations_in_flight), (1, 1));
        assert!(report.nodes.iter().all(|n| n.name != "node-2"));
        let chain = report.vmis.iter().find(|v| v.name == "moved-01").unwrap();
        let chain = chain.evacuation_chain.as_ref().unwrap();
        assert_eq!((chain.attempt, chain.failed_attempts), (2, 1));
        assert_eq!(chain.result, "succeeded");
        assert_eq!(
            chain.last_failure.as_deref(),
            Some("virError(Code=9): Connection reset by peer")
        );
        // The VMI nothing evacuates is listed under the drain, as still on the node.
        let still = model
            .evacuations
            .iter()
            .find(|e| e.vmi == "still-01")
            .unwrap();
        assert!(!still.marked);
        assert_eq!(still.from_node, "node-1");
        // The screen's header says so.
        let text = super::screen_text(
            &model,
            &TopState::new(true, false),
            &super::View {
                charset: crate::render::glyphs::Charset::Unicode,
                color: false,
                notes: Vec::new(),
                live: false,
            },
            160,
            30,
        );
        assert!(
            text.contains("cordoned node-1: 1 VMI still on it · 0 evictions accepted"),
            "{text}"
        );
        assert!(text.contains("left: prod/still-01"), "{text}");
        assert!(text.contains("evacuated, not cordoned node-3"), "{text}");
        assert!(!text.contains("draining nodes"), "{text}");
    }
}

#[cfg(test)]
mod fit_tests {
    use super::*;
    use crate::policy::top::{EvacuationLine, FailureLine};

    fn need(want: u16, min: u16, drop: u8) -> ColumnNeed {
        ColumnNeed {
            want,
            min,
            drop,
            soft: want,
        }
    }

    /// Issue 33 (tried cold): a column of `-` only (DIRTY/ETA without metrics) kept its room
    /// at 80 columns while the pods were cut; it goes first now, and only when the columns
    /// do not all fit whole.
    #[test]
    fn a_column_with_nothing_to_say_goes_first() {
        let needs = [
            (need(20, 3, 0), false),
            (need(30, 8, 3), false),
            (need(9, 9, 5), true),
        ];
        // Too narrow for every column whole: the empty one goes, the pods get its room.
        assert_eq!(fit_dropping_empty(&needs, 45), vec![20, 24, 0]);
        // Wide enough for all: kept.
        assert_eq!(fit_dropping_empty(&needs, 61), vec![20, 30, 9]);
        // Nothing empty: fit_columns's own decision.
        let full = [(need(20, 3, 0), false), (need(30, 8, 3), false)];
        assert_eq!(fit_dropping_empty(&full, 45), vec![20, 24]);
    }

    /// A launcher pod cut at a narrow terminal keeps its end: its suffix and the live `*`.
    #[test]
    fn a_pod_keeps_its_end_and_its_star() {
        use crate::render::glyphs::Charset;
        let pod = "virt-launcher-pg-orders-01-8npf9*";
        assert_eq!(cut_start(pod, 12, Charset::Unicode), "…s-01-8npf9*");
        assert_eq!(cut_start(pod, 8, Charset::Ascii), "~-8npf9*");
        assert_eq!(cut_start(pod, 40, Charset::Unicode), pod);
        assert_eq!(cut_start(pod, 0, Charset::Unicode), "");
    }

    /// The decision alone: which columns are kept at which width, and how wide each is.
    #[test]
    fn the_columns_that_matter_least_go_first_and_the_name_stays_whole() {
        // A name of 27, then columns dropped in the order 3, 2, 1.
        let cols = [
            need(27, 3, 0),
            need(12, 10, 1),
            need(30, 8, 3),
            need(20, 14, 2),
        ];
        // Everything fits whole at 100 (27+12+30+20 and 3 spaces = 92).
        assert_eq!(fit_columns(&cols, 100), vec![27, 12, 30, 20]);
        // At 76: all kept at their minimum (27+10+8+14+3 = 62), the rest in the order kept.
        assert_eq!(fit_columns(&cols, 76), vec![27, 12, 14, 20]);
        // At 55 the third column (drop 3) goes; the name is still whole.
        assert_eq!(fit_columns(&cols, 55), vec![27, 12, 0, 14]);
        // At 40: only the name and the second column.
        assert_eq!(fit_columns(&cols, 40), vec![27, 12, 0, 0]);
        // At 20 the name alone, cut to the terminal.
        assert_eq!(fit_columns(&cols, 20), vec![20, 0, 0, 0]);
        // Columns of one drop number go together (a node and its arrow).
        let paired = [need(10, 3, 0), need(8, 8, 2), need(2, 2, 2), need(8, 8, 1)];
        assert_eq!(fit_columns(&paired, 31), vec![10, 8, 2, 8]);
        assert_eq!(fit_columns(&paired, 30), vec![10, 0, 0, 8]);
        // A long text grows to `soft` before the others get their whole text, then on.
        let text = [
            need(10, 3, 0),
            ColumnNeed {
                want: 100,
                min: 10,
                drop: 1,
                soft: 20,
            },
            need(30, 8, 2),
        ];
        assert_eq!(fit_columns(&text, 50), vec![10, 20, 18]);
        assert_eq!(fit_columns(&text, 80), vec![10, 38, 30]);
    }

    #[test]
    fn sections_share_a_small_terminal() {
        // Everything fits: the room left goes to the migrations.
        assert_eq!(section_heights(30, [11, 4, 7], [2, 1, 1]), [19, 4, 7]);
        // 24 rows (19 for the sections): each keeps a row, then a row each in turn: three
        // migrations (of four), the evacuation, three failures (all); no line left over.
        assert_eq!(section_heights(19, [11, 4, 6], [2, 1, 1]), [9, 4, 6]);
        // An odd line a migration cannot use goes under the last section.
        assert_eq!(section_heights(18, [11, 4, 4], [2, 1, 1]), [9, 4, 5]);
        // Too small for a row each: thirds.
        assert_eq!(section_heights(9, [11, 4, 7], [2, 1, 1]), [3, 3, 3]);
    }

    /// The example cluster's rows (examples/cluster), by hand.
    fn example() -> TopModel {
        let mig = |ns: &str, vmi: &str, name: &str, phase: &str, from: &str, to: Option<&str>| {
            MigrationLine {
                namespace: ns.into(),
                vmi: vmi.into(),
                name: name.into(),
                phase: phase.into(),
                source_node: Some(from.into()),
                target_node: to.map(str::to_string),
                source_pod: Some(format!("virt-launcher-{vmi}-8mn7v")),
                target_pod: Some(format!("virt-launcher-{vmi}-7d5pf")),
                waiting_for: "target pod unschedulable: 0/4 nodes are available".into(),
                ..MigrationLine::default()
            }
        };
        let fail = |ns: &str, vmi: &str, name: &str, why: &str| FailureLine {
            namespace: ns.into(),
            vmi: vmi.into(),
            migration: Some(name.into()),
            node: Some("node-1".into()),
            ago_seconds: Some(2040),
            kind: "migration-failed".into(),
            diagnosis: why.into(),
            ..FailureLine::default()
        };
        let mut m = TopModel {
            source: "snapshot examples/cluster".into(),
            scope: "all namespaces".into(),
            as_of: "2026-11-29T03:00:00Z".into(),
            migrations: vec![
                mig(
                    "tenant-a",
                    "shop-web-01",
                    "kubevirt-migrate-vm-t6j2v",
                    "Pending",
                    "node-2",
                    None,
                ),
                mig(
                    "prod",
                    "pg-orders-01",
                    "kubevirt-migrate-vm-w9c4r",
                    "Running",
                    "node-2",
                    Some("node-1"),
                ),
                mig(
                    "prod",
                    "analytics-warehouse-01",
                    "kubevirt-migrate-vm-q8tz4",
                    "Scheduling",
                    "node-3",
                    None,
                ),
                mig(
                    "prod",
                    "app-server-02",
                    "kubevirt-evacuation-7xk2p",
                    "Running",
                    "node-3",
                    Some("node-2"),
                ),
            ],
            evacuations: vec![EvacuationLine {
                namespace: "prod".into(),
                vmi: "app-server-02".into(),
                from_node: "node-3".into(),
                marked: true,
                migration: Some("kubevirt-evacuation-7xk2p".into()),
                phase: Some("Running".into()),
                target_node: Some("node-2".into()),
                ..EvacuationLine::default()
            }],
            failures: vec![
                fail(
                    "prod",
                    "pg-reporting-01",
                    "kubevirt-migrate-vm-f3l8x",
                    "Live migration failed virError(Code=9, Domain=10, Message='operation failed')",
                ),
                fail(
                    "dev",
                    "jenkins-agent-01",
                    "kubevirt-migrate-vm-n4k7t",
                    "Live migration is not completed after 450 seconds and has been aborted",
                ),
            ],
            ..TopModel::default()
        };
        m.migrations[1].point_of_no_return = true;
        m.counts.migrations = 4;
        m
    }

    fn heads(section: Section, model: &TopModel, width: u16) -> Vec<&'static str> {
        let n = section_total(model, section);
        let rows: Vec<Vec<CellLines>> = (0..n)
            .map(|i| row_cells(model, section, i, &view()))
            .collect();
        let w = fit_section(section, &rows, width);
        columns(section)
            .iter()
            .zip(w)
            .filter(|(_, w)| *w > 0)
            .map(|(c, _)| c.short)
            .collect()
    }

    fn view() -> View {
        View {
            charset: Charset::Unicode,
            color: false,
            notes: Vec::new(),
            live: false,
        }
    }

    /// Issue 33: which columns each section keeps at 80, 100, 120 and 200 columns.
    #[test]
    fn which_columns_for_which_width() {
        let m = example();
        use Section::*;
        assert_eq!(
            heads(Migrations, &m, 80),
            ["VMI", "PHASE", "SOURCE", "", "TARGET", "PROGRESS"]
        );
        // Without metrics DIRTY/ETA is `-` on every row: it goes first while the pods are
        // not whole (issue 33, tried cold), and is there when everything fits.
        for w in [100, 120] {
            assert_eq!(
                heads(Migrations, &m, w),
                ["VMI", "PHASE", "SOURCE", "", "TARGET", "PROGRESS"],
                "{w}"
            );
        }
        assert_eq!(
            heads(Migrations, &m, 200),
            [
                "VMI",
                "PHASE",
                "SOURCE",
                "",
                "TARGET",
                "PROGRESS",
                "DIRTY/ETA"
            ]
        );
        assert_eq!(
            heads(Evacuations, &m, 80),
            ["VMI", "FROM", "STATE", "MIGRATION", "TO", "FAILURE"]
        );
        assert_eq!(
            heads(Evacuations, &m, 60),
            ["VMI", "FROM", "STATE", "TO", "FAILURE"]
        );
        assert_eq!(heads(Evacuations, &m, 40), ["VMI", "FROM", "STATE"]);
        assert_eq!(
            heads(Failures, &m, 80),
            ["VMI", "MIGRATION", "AGE", "DIAGNOSIS"]
        );
        assert_eq!(
            heads(Failures, &m, 120),
            ["VMI", "MIGRATION", "AGE", "KIND", "DIAGNOSIS"]
        );
        assert_eq!(heads(Failures, &m, 60), ["VMI", "AGE", "DIAGNOSIS"]);
    }

    /// Issue 33: at 80 columns the names were cut to six characters and "q quit" was never
    /// shown. Every name whole, the keys on screen and no line wider than the terminal, at
    /// every width tried and at 24 rows.
    #[test]
    fn at_every_width_the_names_are_whole_and_the_keys_shown() {
        let m = example();
        for (w, h) in [(80, 24), (80, 30), (100, 24), (120, 40), (200, 50)] {
            let screen = screen_text(&m, &TopState::new(true, false), &view(), w, h);
            for name in [
                "tenant-a/shop-web-01",
                "prod/pg-orders-01",
                "prod/analytics-warehouse-01",
                "prod/pg-reporting-01",
                "dev/jenkins-agent-01",
                "kubevirt-migrate-vm-q8tz4",
            ] {
                assert!(screen.contains(name), "{w}x{h}: {name}\n{screen}");
            }
            assert!(screen.contains("q quit"), "{w}x{h}\n{screen}");
            assert!(screen.contains("a abort"), "{w}x{h}\n{screen}");
            assert!(screen.contains("Enter explain"), "{w}x{h}\n{screen}");
            assert!(screen.contains("snapshot (read-only)"), "{w}x{h}\n{screen}");
            for line in screen.lines() {
                assert!(text_width(line) <= w as usize, "{w}x{h}: {line}\n{screen}");
            }
        }
        // A cut text says so.
        let screen = screen_text(&m, &TopState::new(true, false), &view(), 80, 24);
        let row = screen
            .lines()
            .find(|l| l.contains("prod/pg-reporting-01"))
            .unwrap_or_default();
        assert!(row.contains("Live migration failed"), "{screen}");
        assert!(row.ends_with("…│"), "{screen}");
        // What a key did is said whole, in more lines if needed.
        let mut s = TopState::new(true, false);
        s.message = Some(
            "abort refused: prod/kubevirt-evacuation-7xk2p is read from a snapshot (--from), \
             nothing can be changed"
                .into(),
        );
        let screen = screen_text(&m, &s, &view(), 80, 24);
        assert!(screen.contains("nothing can be changed"), "{screen}");
        assert!(screen.contains("q quit"), "{screen}");
        // Narrower still: the keys take two lines rather than losing "q quit".
        let screen = screen_text(&m, &TopState::new(true, false), &view(), 60, 24);
        assert!(screen.contains("q quit"), "{screen}");
        assert!(screen.contains("prod/analytics-warehouse-01"), "{screen}");
    }
}
