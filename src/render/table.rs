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

    /// The table as text, trailing spaces trimmed, ending with a newline.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for line in self.table.lines() {
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// A plain cell.
pub fn plain(text: impl Into<String>) -> (String, Tone) {
    (text.into(), Tone::Plain)
}

#[cfg(test)]
mod tests {
    use super::*;

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
