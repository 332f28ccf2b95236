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
use ratatui::widgets::{Block, Borders, Cell, Clear, Paragraph, Row, Table, TableState, Wrap};

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

fn header(model: &TopModel, state: &TopState, view: &View) -> Vec<Line<'static>> {
    let c = &model.counts;
    let bold = TuiStyle::default().add_modifier(Modifier::BOLD);
    let mut first = vec![
        Span::styled("vmctl top", bold),
        Span::raw(view.dots(format!(
            " · {} · {} · as of {}{}",
            printable(&model.source),
            printable(&model.scope),
            printable(&model.as_of),
            if view.live {
                ""
            } else {
                " · snapshot (read-only)"
            }
        ))),
    ];
    if state.dry_run {
        first.push(Span::styled(
            view.dots(" · dry run".into()),
            view.fg(Color::Yellow),
        ));
    }
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut second = vec![Span::raw(format!(
        "{} in flight",
        plural(c.migrations, "migration", "migrations")
    ))];
    if c.post_copy > 0 {
        second.push(Span::styled(
            format!(" ({} {} in post-copy)", view.mark(), c.post_copy),
            view.fg(Color::Red).add_modifier(Modifier::BOLD),
        ));
    }
    second.push(Span::raw(view.dots(format!(
        " · {} evacuating · {}",
        c.evacuations,
        plural(c.failures, "failure", "failures")
    ))));
    // Issue 33 (tried cold): an empty screen of one namespace said nothing of the others,
    // where `status` says `use -A`.
    if c.migrations == 0
        && c.evacuations == 0
        && c.failures == 0
        && model.scope.starts_with("namespace ")
    {
        second.push(Span::styled(
            view.dots(" · -A for every namespace".into()),
            view.fg(Color::Cyan),
        ));
    }
    if !state.filter.is_empty() {
        second.push(Span::styled(
            view.dots(format!(" · filter: {}", printable(&state.filter))),
            view.fg(Color::Cyan),
        ));
    }
    let mut lines = vec![Line::from(first), Line::from(second)];
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
        lines.push(Line::styled(view.dots(what), tone));
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
            view.dots(words.join(" · ")),
            view.fg(Color::Yellow),
        ));
    }
    for n in &view.notes {
        lines.push(Line::styled(printable(n), view.fg(Color::Yellow)));
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

fn table<'a>(
    rows: Vec<Row<'a>>,
    head: &[&'a str],
    widths: Vec<Constraint>,
    block: Block<'a>,
    focused: bool,
    view: &View,
) -> Table<'a> {
    let highlight = if focused {
        TuiStyle::default().add_modifier(Modifier::REVERSED)
    } else {
        TuiStyle::default()
    };
    Table::new(rows, widths)
        .header(
            Row::new(head.iter().map(|h| Cell::from(*h)))
                .style(TuiStyle::default().add_modifier(Modifier::BOLD)),
        )
        .block(block)
        .row_highlight_style(highlight)
        .highlight_symbol(if !focused {
            "  "
        } else if view.charset.is_unicode() {
            "▶ "
        } else {
            "> "
        })
        .column_spacing(1)
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
    let arrow = view.arrow();
    let (rows, head, widths, total): (Vec<Row>, Vec<&str>, Vec<Constraint>, usize) = match section {
        Section::Migrations => (
            shown
                .iter()
                .map(|&i| {
                    let m = &model.migrations[i];
                    let red = view.fg(Color::Red).add_modifier(Modifier::BOLD);
                    let phase = Cell::from(Text::from(vec![
                        Line::from(printable(&m.phase)),
                        if m.point_of_no_return {
                            Line::styled(format!("{} PostCopy", view.mark()), red)
                        } else {
                            Line::from(opt(m.mode.as_deref()))
                        },
                    ]));
                    let side = |node: Option<&str>, pod: Option<&String>| {
                        let pod = match pod {
                            Some(p) if m.live_pod.as_ref() == Some(p) => {
                                format!("{}*", printable(p))
                            }
                            Some(p) => printable(p),
                            None => "-".into(),
                        };
                        Cell::from(Text::from(vec![Line::from(opt(node)), Line::from(pod)]))
                    };
                    let progress =
                        Cell::from(Text::from(vec![
                            Line::from(progress_text(m, view.charset)),
                            if m.point_of_no_return {
                                Line::styled(format!("{} no return", view.mark()), red)
                            } else if m.progress_percent.is_some() {
                                Line::from(m.elapsed_seconds.map_or(String::new(), |e| {
                                    format!("{} elapsed", fmt::duration(e))
                                }))
                            } else {
                                Line::from("")
                            },
                        ]));
                    Row::new(vec![
                        Cell::from(Text::from(vec![
                            Line::from(printable(&format!("{}/{}", m.namespace, m.vmi))),
                            Line::from(printable(&m.name)),
                        ])),
                        phase,
                        side(m.source_node.as_deref(), m.source_pod.as_ref()),
                        Cell::from(arrow.to_string()),
                        side(m.target_node.as_deref(), m.target_pod.as_ref()),
                        progress,
                        Cell::from(Text::from(vec![
                            Line::from(rate(m.dirty_rate_bps)),
                            Line::from(
                                m.eta_seconds
                                    .map_or("-".into(), |s| fmt::duration(s as i64)),
                            ),
                        ])),
                    ])
                    .height(2)
                })
                .collect(),
            vec![
                "VMI / MIGRATION",
                "PHASE / MODE",
                "SOURCE NODE / POD",
                "",
                "TARGET NODE / POD (* live)",
                "PROGRESS",
                "DIRTY/ETA",
            ],
            vec![
                Constraint::Fill(4),
                Constraint::Length(15),
                Constraint::Fill(6),
                Constraint::Length(2),
                Constraint::Fill(6),
                Constraint::Length(18),
                Constraint::Length(10),
            ],
            model.migrations.len(),
        ),
        Section::Evacuations => (
            shown
                .iter()
                .map(|&i| {
                    let e = &model.evacuations[i];
                    // Marked for evacuation (attempt n of its chain), or still on a
                    // cordoned node with nothing evacuating it.
                    let state = match (e.marked, e.attempt) {
                        (false, _) => "not evacuated".to_string(),
                        (true, Some(a)) if a > 1 => format!("evacuating #{a}"),
                        (true, _) => "evacuating".to_string(),
                    };
                    Row::new(vec![
                        Cell::from(printable(&format!("{}/{}", e.namespace, e.vmi))),
                        Cell::from(printable(&e.from_node)),
                        Cell::from(state),
                        Cell::from(opt(e.migration.as_deref())),
                        Cell::from(opt(e.phase.as_deref())),
                        Cell::from(opt(e.target_node.as_deref())),
                        Cell::from(opt(e.last_failure.as_deref())),
                    ])
                })
                .collect(),
            vec![
                "VMI",
                "FROM NODE",
                "STATE",
                "MIGRATION",
                "PHASE",
                "TO NODE",
                "LAST FAILURE",
            ],
            vec![
                Constraint::Fill(3),
                Constraint::Fill(2),
                Constraint::Length(14),
                Constraint::Fill(3),
                Constraint::Length(15),
                Constraint::Fill(2),
                Constraint::Fill(2),
            ],
            model.evacuations.len(),
        ),
        Section::Failures => (
            shown
                .iter()
                .map(|&i| {
                    let x = &model.failures[i];
                    Row::new(vec![
                        Cell::from(printable(&format!("{}/{}", x.namespace, x.vmi))),
                        Cell::from(opt(x.migration.as_deref())),
                        Cell::from(x.ago_seconds.map_or("-".into(), fmt::age)),
                        Cell::from(printable(&x.kind)),
                        Cell::from(printable(&x.diagnosis)),
                    ])
                })
                .collect(),
            vec!["VMI", "MIGRATION", "AGE", "KIND", "DIAGNOSIS"],
            vec![
                Constraint::Fill(2),
                Constraint::Fill(2),
                Constraint::Length(6),
                Constraint::Length(22),
                Constraint::Fill(6),
            ],
            model.failures.len(),
        ),
    };
    let block = section_block(section, all.len(), total, focused, view);
    let t = table(rows, &head, widths, block, focused, view);
    let mut ts = TableState::default().with_selected(selected.map(|i| i - offset));
    f.render_stateful_widget(t, area, &mut ts);
}

fn footer(state: &TopState, view: &View) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(m) = &state.message {
        lines.push(Line::styled(
            printable(m),
            view.fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ));
    }
    let keys = match &state.mode {
        Mode::Filter { .. } => format!(
            "filter (namespace or node): {}_   Enter keep · Esc cancel",
            printable(&state.filter)
        ),
        Mode::Explain { .. } => "Up/Down j/k scroll · PgUp/PgDn · Esc close · q quit".into(),
        Mode::Confirm(_) => "y abort · any other key cancels".into(),
        _ => "Up/Down j/k select · Tab section · / filter · Enter explain · a abort · ? help · q quit"
            .into(),
    };
    lines.push(Line::styled(
        view.dots(keys),
        TuiStyle::default().add_modifier(Modifier::DIM),
    ));
    lines
}

/// A rectangle of `pct_x`% × `pct_y`% centred in `area` (at least `min_h` rows).
fn centered(area: Rect, pct_x: u16, pct_y: u16, min_h: u16) -> Rect {
    let w = (area.width as u32 * pct_x as u32 / 100) as u16;
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
    let head = header(model, state, view);
    let foot = footer(state, view);
    let [top, body, bottom] = Layout::vertical([
        Constraint::Length(head.len() as u16),
        Constraint::Min(6),
        Constraint::Length(foot.len() as u16),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(head), top);
    let [a, b, c] = Layout::vertical([
        Constraint::Fill(5),
        Constraint::Fill(3),
        Constraint::Fill(3),
    ])
    .areas(body);
    draw_section(f, a, model, state, view, Section::Migrations);
    draw_section(f, b, model, state, view, Section::Evacuations);
    draw_section(f, c, model, state, view, Section::Failures);
    f.render_widget(Paragraph::new(foot).wrap(Wrap { trim: false }), bottom);

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
            let h = lines.len() as u16 + 2;
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
