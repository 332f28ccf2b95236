//! kubectl-looking tables: no borders, upper-case headers, columns three spaces apart.

use comfy_table::{Attribute, Cell, CellAlignment, Color, ContentArrangement, Table, presets};

use super::{Style, Tone};

pub struct TableBuilder {
    table: Table,
    style: Style,
}

impl TableBuilder {
    pub fn new(style: Style, headers: &[&str]) -> Self {
        let mut table = Table::new();
        table
            .load_preset(presets::NOTHING)
            .set_content_arrangement(ContentArrangement::Disabled);
        if style.color {
            table.enforce_styling();
        } else {
            table.force_no_tty();
        }
        table.set_header(headers.iter().map(|h| {
            let cell = Cell::new(h.to_uppercase());
            if style.color {
                cell.add_attribute(Attribute::Bold)
            } else {
                cell
            }
        }));
        for column in table.column_iter_mut() {
            column.set_padding((0, 3));
            column.set_cell_alignment(CellAlignment::Left);
        }
        TableBuilder { table, style }
    }

    /// Adds a row of (text, tone) cells.
    pub fn row(&mut self, cells: Vec<(String, Tone)>) {
        let style = self.style;
        self.table.add_row(cells.into_iter().map(|(text, tone)| {
            // Every cell is escaped here, so no table shows a raw control byte (issue 11).
            let cell = Cell::new(crate::text::printable(&text));
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
        }));
    }

    pub fn is_empty(&self) -> bool {
        self.table.row_count() == 0
    }

    /// The table as text, trailing spaces trimmed (also those inside the colour codes that
    /// close a line), ending with a newline.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for line in self.table.lines() {
            out.push_str(&trim_end_styled(&line));
            out.push('\n');
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
