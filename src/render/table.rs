//! kubectl-looking tables: no borders, upper-case headers, columns three spaces apart.

use std::sync::atomic::{AtomicBool, Ordering};

use comfy_table::{Attribute, Cell, CellAlignment, Color, ContentArrangement, Table, presets};

use super::{Style, Tone};

/// Whether tables are fitted to the terminal: set once, at the edge, when stdout is one.
/// Into a pipe or a file a table keeps its natural width (stable for scripts and diffs).
static FIT_TO_TERMINAL: AtomicBool = AtomicBool::new(false);

/// Called once at start: `true` when stdout is a terminal.
pub fn fit_to_terminal(on: bool) {
    FIT_TO_TERMINAL.store(on, Ordering::Relaxed);
}

/// The width tables are fitted to: on a terminal, `COLUMNS` when set (as the chart reads it,
/// and ls(1)), else the terminal's width (read at each render: a watch follows a resize);
/// None off a terminal.
pub fn terminal_width() -> Option<usize> {
    if !FIT_TO_TERMINAL.load(Ordering::Relaxed) {
        return None;
    }
    let terminal = crossterm::terminal::size().ok().map(|(w, _)| w);
    Some(super::gantt::width_from(
        std::env::var("COLUMNS").ok().as_deref(),
        terminal,
    ))
}

/// Columns three spaces apart, as kubectl.
const GAP: usize = 3;
/// Folded cells go on their own lines under the row, this far in.
const FOLD_INDENT: usize = 4;

/// A table built row by row, laid out when rendered: at its natural width when that fits
/// (always off a terminal); narrower than the terminal, it first moves the columns named by
/// [`TableBuilder::fold`] (in that order) onto lines under each row (`reason: …`), then
/// wraps cells at spaces, and inside a word only after a `-` or `/`, so a name is never cut
/// elsewhere (a name is never clipped either).
pub struct TableBuilder {
    headers: Vec<String>,
    rows: Vec<Vec<(String, Tone)>>,
    /// Per row, the whole text of a cell clipped in the row: shown when its column goes
    /// under the row, where a line has room for it.
    wholes: Vec<Vec<Option<String>>>,
    style: Style,
    /// Columns moved under the row when the table is too wide, first first.
    fold_order: Vec<usize>,
    /// The most columns this table takes, terminal or not (a default table of prose cells).
    budget: Option<usize>,
    /// Columns always under the row.
    folded_always: Vec<usize>,
    indent: usize,
}

impl TableBuilder {
    pub fn new(style: Style, headers: &[&str]) -> Self {
        TableBuilder {
            headers: headers.iter().map(|h| h.to_uppercase()).collect(),
            rows: Vec::new(),
            wholes: Vec::new(),
            style,
            fold_order: Vec::new(),
            budget: None,
            folded_always: Vec::new(),
            indent: 0,
        }
    }

    fn column(&self, header: &str) -> Option<usize> {
        self.headers
            .iter()
            .position(|h| h.eq_ignore_ascii_case(header))
    }

    /// The columns that go under each row, in this order, while the table is wider than the
    /// terminal (never the first column).
    pub fn fold(&mut self, headers: &[&str]) -> &mut Self {
        self.fold_order = headers
            .iter()
            .filter_map(|h| self.column(h))
            .filter(|c| *c > 0)
            .collect();
        self
    }

    /// Columns always shown under their row (`detail: …`), whatever the width.
    pub fn fold_always(&mut self, headers: &[&str]) -> &mut Self {
        self.folded_always = headers
            .iter()
            .filter_map(|h| self.column(h))
            .filter(|c| *c > 0)
            .collect();
        self
    }

    /// At most this wide, on a terminal or not: for a default table whose cells are prose
    /// (a timeline's events), laid out as for a terminal that wide; -o wide sets none.
    pub fn budget(&mut self, columns: usize) -> &mut Self {
        self.budget = Some(columns);
        self
    }

    /// Every line starts with this many spaces (counted in the width).
    pub fn indent(&mut self, spaces: usize) -> &mut Self {
        self.indent = spaces;
        self
    }

    /// Adds a row of (text, tone) cells.
    pub fn row(&mut self, cells: Vec<(String, Tone)>) {
        self.row_whole(cells, Vec::new());
    }

    /// Adds a row whose cells may be clipped to keep the table narrow, with each clipped
    /// cell's whole text (None: the cell is whole), shown instead when its column goes
    /// under the row.
    pub fn row_whole(&mut self, cells: Vec<(String, Tone)>, whole: Vec<Option<String>>) {
        // Every cell is escaped here, so no table shows a raw control byte (issue 11).
        let mut row: Vec<(String, Tone)> = cells
            .into_iter()
            .map(|(text, tone)| (crate::text::printable(&text), tone))
            .collect();
        row.resize(self.headers.len(), (String::new(), Tone::Plain));
        let mut whole: Vec<Option<String>> = whole
            .into_iter()
            .map(|w| w.map(|t| crate::text::printable(&t)))
            .collect();
        whole.resize(self.headers.len(), None);
        self.rows.push(row);
        self.wholes.push(whole);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as text, fitted to the terminal when stdout is one ([`terminal_width`]).
    pub fn render(&self) -> String {
        self.render_width(terminal_width())
    }

    /// The width to lay out for: the terminal's or the budget, the narrower.
    fn width_for(&self, terminal: Option<usize>) -> Option<usize> {
        match (terminal, self.budget) {
            (Some(t), Some(b)) => Some(t.min(b)),
            (t, b) => t.or(b),
        }
    }

    /// The table as text, trailing spaces trimmed (also those inside the colour codes that
    /// close a line), ending with a newline; laid out to fit the `terminal` width and the
    /// budget, when there is one (see the type).
    pub fn render_width(&self, terminal: Option<usize>) -> String {
        self.laid_out(terminal).0
    }

    /// The table as [`TableBuilder::render`] lays it out, and whether a cell given with its
    /// whole text ([`TableBuilder::row_whole`]) is shown clipped (its column stayed in the
    /// row): the caller's cue to say where the whole text is.
    pub fn render_clipped(&self) -> (String, bool) {
        self.laid_out(terminal_width())
    }

    fn laid_out(&self, terminal: Option<usize>) -> (String, bool) {
        let width = self.width_for(terminal);
        let n = self.headers.len();
        let natural: Vec<usize> = (0..n)
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| text_width(&r[c].0))
                    .chain([text_width(&self.headers[c])])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut folded = vec![false; n];
        for c in &self.folded_always {
            folded[*c] = true;
        }
        let table_width = |folded: &[bool], widths: &[usize]| {
            let shown: Vec<usize> = (0..n).filter(|c| !folded[*c]).map(|c| widths[c]).collect();
            self.indent + shown.iter().sum::<usize>() + GAP * shown.len().saturating_sub(1)
        };
        let mut widths = natural.clone();
        if let Some(w) = width
            && table_width(&folded, &natural) > w
        {
            // The least each column takes with its words whole, then with its words broken
            // after a `-` or `/` only.
            let least = |piece: fn(&str) -> usize| -> Vec<usize> {
                (0..n)
                    .map(|c| {
                        self.rows
                            .iter()
                            .map(|r| piece(&r[c].0))
                            .chain([text_width(&self.headers[c])])
                            .max()
                            .unwrap_or(0)
                    })
                    .collect()
            };
            // Named columns under the row until the rest fits whole (a column of prose is
            // better read under its row, side by side with the others, than wrapped narrow).
            for c in &self.fold_order {
                if table_width(&folded, &natural) <= w {
                    break;
                }
                folded[*c] = true;
            }
            let words = least(longest_word);
            let min = if table_width(&folded, &words) <= w {
                words.clone()
            } else {
                least(longest_piece)
            };
            let shown = folded.iter().filter(|f| !**f).count();
            let room = w.saturating_sub(self.indent + GAP * shown.saturating_sub(1));
            // Words whole first (names), then the rest to the prose.
            widths = share(&words, &min, &folded, room);
            let used: usize = (0..n).filter(|c| !folded[*c]).map(|c| widths[c]).sum();
            widths = share(&natural, &widths, &folded, used.max(room));
        }

        let mut table = Table::new();
        table
            .load_preset(presets::NOTHING)
            .set_content_arrangement(ContentArrangement::Disabled);
        if self.style.color {
            table.enforce_styling();
        } else {
            table.force_no_tty();
        }
        let style = self.style;
        table.set_header((0..n).filter(|c| !folded[*c]).map(|c| {
            let cell = Cell::new(&self.headers[c]);
            if style.color {
                cell.add_attribute(Attribute::Bold)
            } else {
                cell
            }
        }));
        let mut heights = Vec::with_capacity(self.rows.len());
        for row in &self.rows {
            let mut height = 1;
            let cells: Vec<Cell> = (0..n)
                .filter(|c| !folded[*c])
                .map(|c| {
                    let (text, tone) = &row[c];
                    let text = if widths[c] < natural[c] {
                        wrap(text, widths[c]).join("\n")
                    } else {
                        text.clone()
                    };
                    height = height.max(text.lines().count());
                    paint_cell(Cell::new(text), tone, style)
                })
                .collect();
            heights.push(height);
            table.add_row(cells);
        }
        for column in table.column_iter_mut() {
            column.set_padding((0, GAP as u16));
            column.set_cell_alignment(CellAlignment::Left);
        }

        let pad = " ".repeat(self.indent);
        let under = " ".repeat(self.indent + FOLD_INDENT);
        let lines: Vec<String> = table.lines().collect();
        let mut lines = lines.into_iter();
        let mut out = String::new();
        let push = |out: &mut String, line: &str| {
            let line = trim_end_styled(line);
            if !line.is_empty() {
                out.push_str(&pad);
            }
            out.push_str(&line);
            out.push('\n');
        };
        if let Some(header) = lines.next() {
            push(&mut out, &header);
        }
        for ((row, whole), height) in self.rows.iter().zip(&self.wholes).zip(heights) {
            for _ in 0..height {
                if let Some(line) = lines.next() {
                    push(&mut out, &line);
                }
            }
            // The folded cells of the row, `header: value`, side by side as they fit.
            let room = width.map(|w| w.saturating_sub(self.indent + FOLD_INDENT).max(20));
            let mut lines: Vec<Vec<(String, Tone)>> = Vec::new();
            let mut len = 0;
            for c in (0..n).filter(|c| folded[*c]) {
                let (text, tone) = &row[c];
                let text = whole[c].as_ref().unwrap_or(text);
                if text.is_empty() || text == "-" {
                    continue;
                }
                let said = format!("{}: {text}", self.headers[c].to_lowercase());
                let said_len = said.chars().count();
                match (room, lines.last_mut()) {
                    (Some(r), Some(line)) if len + GAP + said_len <= r => {
                        line.push((said, *tone));
                        len += GAP + said_len;
                    }
                    (None, Some(line)) => {
                        line.push((said, *tone));
                    }
                    (Some(r), _) if said_len > r => {
                        for piece in wrap(&said, r) {
                            lines.push(vec![(piece, *tone)]);
                        }
                        len = usize::MAX / 2;
                    }
                    _ => {
                        lines.push(vec![(said, *tone)]);
                        len = said_len;
                    }
                }
            }
            for line in lines {
                out.push_str(&under);
                let painted: Vec<String> = line
                    .iter()
                    .map(|(text, tone)| style.paint(text, *tone))
                    .collect();
                out.push_str(&painted.join(&" ".repeat(GAP)));
                out.push('\n');
            }
        }
        let clipped = self
            .wholes
            .iter()
            .any(|w| (0..n).any(|c| w[c].is_some() && !folded[c]));
        (out, clipped)
    }
}

fn paint_cell(cell: Cell, tone: &Tone, style: Style) -> Cell {
    if !style.color {
        return cell;
    }
    match tone {
        Tone::Good => cell.fg(Color::Green),
        Tone::Warn => cell.fg(Color::Yellow),
        Tone::Bad => cell.fg(Color::Red).add_attribute(Attribute::Bold),
        Tone::Dim => cell.add_attribute(Attribute::Dim),
        Tone::Strong => cell.add_attribute(Attribute::Bold),
        Tone::Plain => cell,
    }
}

/// Terminal cells a cell's text takes (its characters: the cells are escaped text).
fn text_width(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// The pieces a word may be broken into: after each `-` or `/`.
fn pieces(word: &str) -> impl Iterator<Item = &str> {
    word.split_inclusive(['-', '/'])
}

/// The widest word of a text.
fn longest_word(text: &str) -> usize {
    text.split(' ')
        .map(|w| w.chars().count())
        .max()
        .unwrap_or(0)
}

/// The widest piece of a text that [`wrap`] never breaks.
fn longest_piece(text: &str) -> usize {
    text.split(' ')
        .flat_map(pieces)
        .map(|p| p.chars().count())
        .max()
        .unwrap_or(0)
}

/// The columns `text` takes: its characters, escape sequences none (CSI `ESC [ … final`,
/// OSC `ESC ] … BEL` or `ESC \\`, else `ESC` and one character), as render::prose counts.
fn columns(text: &str) -> usize {
    if !text.contains('\u{1b}') {
        return text.chars().count();
    }
    let mut n = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            n += 1;
            continue;
        }
        match chars.next() {
            Some('[') => {
                for d in chars.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
            Some(']') => {
                let mut esc = false;
                for d in chars.by_ref() {
                    if d == '\u{7}' || (esc && d == '\\') {
                        break;
                    }
                    esc = d == '\u{1b}';
                }
            }
            _ => {}
        }
    }
    n
}

/// The text in lines of at most `width` characters, broken at spaces; a word longer than a
/// line is broken after a `-` or `/` (a name stays readable and right: `virt-launcher-` then
/// `db-01-x7k2p`), never elsewhere: a piece longer than the line stays whole.
/// Colour codes take no column (render::prose's lines carry them).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    for word in text.split(' ') {
        let wlen = columns(word);
        let space = usize::from(len > 0);
        if len + space + wlen <= width {
            if space == 1 {
                line.push(' ');
            }
            line.push_str(word);
            len += space + wlen;
            continue;
        }
        if wlen <= width {
            lines.push(std::mem::take(&mut line));
            line.push_str(word);
            len = wlen;
            continue;
        }
        // Longer than a line: piece by piece, starting on this line when a piece fits.
        let mut first = true;
        for piece in pieces(word) {
            let plen = columns(piece);
            let sep = usize::from(first && len > 0);
            if len + sep + plen > width && len > 0 {
                lines.push(std::mem::take(&mut line));
                len = 0;
            } else if sep == 1 {
                line.push(' ');
                len += 1;
            }
            line.push_str(piece);
            len += plen;
            first = false;
        }
    }
    if len > 0 || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// The widths of the shown columns in `room`: each at least its `min` (its widest piece),
/// what is left shared out evenly among those that want more, up to their natural width.
fn share(natural: &[usize], min: &[usize], folded: &[bool], room: usize) -> Vec<usize> {
    let mut widths: Vec<usize> = min.iter().zip(natural).map(|(m, n)| *m.min(n)).collect();
    let used: usize = (0..widths.len())
        .filter(|c| !folded[*c])
        .map(|c| widths[c])
        .sum();
    let mut left = room.saturating_sub(used);
    while left > 0 {
        let wanting: Vec<usize> = (0..widths.len())
            .filter(|c| !folded[*c] && widths[*c] < natural[*c])
            .collect();
        if wanting.is_empty() {
            break;
        }
        let each = (left / wanting.len()).max(1);
        for c in wanting {
            let add = each.min(natural[c] - widths[c]).min(left);
            widths[c] += add;
            left -= add;
            if left == 0 {
                break;
            }
        }
    }
    widths
}

/// Numbered notes under a table (`[1] prod/db-01: …`): a short cell names its note, the note
/// says it whole, so a default table stays narrow and loses nothing.
#[derive(Debug, Default)]
pub struct Notes {
    items: Vec<String>,
}

impl Notes {
    /// Keeps the note; the mark (`[1]`) for the cell.
    pub fn add(&mut self, text: String) -> String {
        self.items.push(text);
        format!("[{}]", self.items.len())
    }

    /// `heading`, then one line per note (escaped); nothing without notes.
    pub fn render(&self, heading: &str) -> String {
        if self.items.is_empty() {
            return String::new();
        }
        let mut out = format!("\n{heading}\n");
        for (i, text) in self.items.iter().enumerate() {
            out.push_str(&format!("  [{}] {}\n", i + 1, crate::text::printable(text)));
        }
        out
    }
}

/// The line without trailing spaces, where those may sit before or between the escape
/// sequences that end it (`cell   \e[0m`): a coloured table's padding would otherwise make
/// every row as wide as the widest, and wrap into a blank line on a narrower terminal.
pub fn trim_end_styled(line: &str) -> String {
    let mut rest = line.trim_end();
    let mut codes: Vec<&str> = Vec::new();
    // Peel the trailing `ESC [ ... m` sequences off, trimming the spaces before each.
    while rest.ends_with('m') {
        let Some(start) = rest.rfind('\u{1b}') else {
            break;
        };
        let code = &rest[start..];
        let is_sgr = code.len() >= 3
            && code.as_bytes()[1] == b'['
            && code[2..code.len() - 1]
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b';');
        if !is_sgr {
            break;
        }
        codes.push(code);
        rest = rest[..start].trim_end();
    }
    let mut out = rest.to_string();
    out.extend(codes.into_iter().rev());
    out
}

/// At most `max` characters: a longer text ends with `…` (the whole is in `-o wide` or
/// `-o json`).
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A plain cell.
pub fn plain(text: impl Into<String>) -> (String, Tone) {
    (text.into(), Tone::Plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coloured_table_has_no_trailing_padding() {
        let mut t = TableBuilder::new(Style { color: true }, &["name", "reason"]);
        t.row(vec![
            plain("vm-a"),
            ("a long reason in yellow".into(), Tone::Warn),
        ]);
        t.row(vec![plain("database-01"), ("short".into(), Tone::Warn)]);
        for line in t.render().lines() {
            let visible = console_text(line);
            assert_eq!(visible, visible.trim_end(), "padding kept: {line:?}");
        }
        assert_eq!(
            trim_end_styled("\u{1b}[33mshort   \u{1b}[39m   \u{1b}[0m  "),
            "\u{1b}[33mshort\u{1b}[39m\u{1b}[0m"
        );
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abc", 4), "abc");
    }

    /// A cell clipped to keep the row narrow is shown whole when its column goes under the
    /// row (a line of its own has room), and the caller learns whether a clipped cell shows.
    #[test]
    fn a_clipped_cell_is_whole_under_its_row() {
        let whole = "post-copy to finish (point of no return)";
        let mut t = TableBuilder::new(Style { color: false }, &["name", "phase", "waiting for"]);
        t.fold(&["waiting for"]);
        t.row_whole(
            vec![
                plain("pg-orders-01"),
                plain("Running"),
                plain(clip(whole, 20)),
            ],
            vec![None, None, Some(whole.to_string())],
        );
        t.row(vec![plain("web-01"), plain("Running"), plain("converge")]);
        let (wide, clipped) = t.laid_out(None);
        assert!(clipped, "{wide}");
        assert!(wide.contains("post-copy to finish…"), "{wide}");
        let (narrow, clipped) = t.laid_out(Some(34));
        assert!(!clipped, "{narrow}");
        let joined: Vec<&str> = narrow.lines().map(str::trim).collect();
        assert!(
            joined.join(" ").contains(&format!("waiting for: {whole}")),
            "{narrow}"
        );
        assert!(narrow.contains("waiting for: converge"), "{narrow}");
    }

    /// The text without its colour codes.
    fn console_text(line: &str) -> String {
        let mut out = String::new();
        let mut in_code = false;
        for c in line.chars() {
            match (in_code, c) {
                (false, '\u{1b}') => in_code = true,
                (true, 'm') => in_code = false,
                (true, _) => {}
                (false, c) => out.push(c),
            }
        }
        out
    }

    #[test]
    fn wrap_breaks_at_spaces_then_after_hyphens_never_inside_a_piece() {
        assert_eq!(wrap("a b c", 3), vec!["a b", "c"]);
        assert_eq!(
            wrap("pod virt-launcher-db-01-x7k2p", 16),
            vec!["pod virt-", "launcher-db-01-", "x7k2p"]
        );
        // A piece longer than the line stays whole.
        assert_eq!(
            wrap("DisksNotLiveMigratable", 8),
            vec!["DisksNotLiveMigratable"]
        );
        assert_eq!(wrap("", 5), vec![""]);
    }

    fn sample() -> TableBuilder {
        let mut t = TableBuilder::new(Style { color: false }, &["name", "action", "reason"]);
        t.fold(&["reason"]);
        t.row(vec![
            plain("analytics-warehouse-01"),
            plain("shutdown-not-migratable"),
            plain("InterfaceNotLiveMigratable [1]"),
        ]);
        t.row(vec![
            plain("app-server-02 (evacuating)"),
            plain("live-migrate"),
            plain("-"),
        ]);
        t
    }

    #[test]
    fn a_table_is_its_natural_width_without_a_terminal_or_when_it_fits() {
        let t = sample();
        let natural = t.render_width(None);
        assert_eq!(t.render_width(Some(200)), natural);
        assert!(
            natural
                .lines()
                .any(|l| l.ends_with("InterfaceNotLiveMigratable [1]"))
        );
    }

    #[test]
    fn a_narrow_terminal_folds_then_wraps_and_keeps_every_name_whole() {
        let t = sample();
        let text = t.render_width(Some(60));
        assert!(text.lines().all(|l| l.chars().count() <= 60), "{text}");
        assert_eq!(
            text,
            "NAME                         ACTION\n\
             analytics-warehouse-01       shutdown-not-migratable\n    \
             reason: InterfaceNotLiveMigratable [1]\n\
             app-server-02 (evacuating)   live-migrate\n"
        );
        let text = t.render_width(Some(40));
        assert!(text.lines().all(|l| l.chars().count() <= 40), "{text}");
        // Broken only after a hyphen: each piece whole.
        for piece in [
            "analytics-warehouse-",
            "shutdown-not-",
            "InterfaceNotLiveMigratable",
        ] {
            assert!(text.contains(piece), "{piece}:\n{text}");
        }
        // Indented (as explain's timeline), the indent counts.
        let mut t = sample();
        t.indent(2);
        let text = t.render_width(Some(60));
        assert!(
            text.lines()
                .all(|l| l.chars().count() <= 60 && l.starts_with("  ")),
            "{text}"
        );
    }

    #[test]
    fn notes_are_numbered_under_the_table() {
        let mut n = Notes::default();
        assert_eq!(n.render("Reasons:"), "");
        assert_eq!(n.add("prod/a: long".into()), "[1]");
        assert_eq!(n.add("prod/b: \u{1b}[2J".into()), "[2]");
        assert_eq!(
            n.render("Reasons:"),
            "\nReasons:\n  [1] prod/a: long\n  [2] prod/b: \\u{1b}[2J\n"
        );
    }

    #[test]
    fn renders_like_kubectl() {
        let mut t = TableBuilder::new(Style { color: false }, &["name", "node"]);
        t.row(vec![plain("vm-a"), plain("node-1")]);
        t.row(vec![plain("database-01"), plain("node-3")]);
        let text = t.render();
        assert_eq!(
            text,
            "NAME          NODE\nvm-a          node-1\ndatabase-01   node-3\n"
        );
    }
}
