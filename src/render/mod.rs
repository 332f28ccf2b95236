//! Presentation: tables, JSON/YAML, colours, durations and sizes. Nothing else prints.

pub mod abort;
pub mod drain;
pub mod explain;
pub mod explain_journal;
pub mod explain_libvirt;
pub mod explain_verdict;
pub mod follow;
pub mod gantt;
pub mod glyphs;
pub mod history;
pub mod html;
pub mod plan_drain;
pub mod plan_maintenance;
pub mod progress;
pub mod prose;
pub mod record;
pub mod snapshot;
pub mod spark;
pub mod status;
pub mod status_watch;
pub mod svg;
pub mod table;
pub mod top;

use std::io::{self, Write};

use clap::ValueEnum;
use owo_colors::OwoColorize;
use serde::Serialize;

use crate::error::{Error, Result};

/// `-o/--output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum OutputFormat {
    /// A human table.
    #[default]
    Table,
    /// The table with more columns.
    Wide,
    /// A stable JSON document (`apiVersion: vmctl/v1alpha1`).
    Json,
    /// The same document as YAML.
    Yaml,
    /// A self-contained HTML report to attach to a ticket (explain and plan-drain only).
    Html,
    /// One `kind.group/name` line per object, as kubectl's `-o name` (status only).
    Name,
}

impl OutputFormat {
    pub fn is_structured(self) -> bool {
        matches!(self, OutputFormat::Json | OutputFormat::Yaml)
    }

    /// `-o name` on a command that lists no objects: the usage error, said before any work.
    pub fn name_refused() -> Error {
        Error::usage(
            "-o name is for status only (one virtualmachineinstance.kubevirt.io/NAME line per VMI): this command writes table, wide, json or yaml",
        )
    }

    /// `-o html` on a command that writes no HTML: the usage error, said before any work.
    pub fn html_refused() -> Error {
        Error::usage(
            "-o html is for explain and plan-drain only: this command writes table, wide, json or yaml",
        )
    }
}

/// Colour choice, made once: only on a TTY, never with `NO_COLOR` or `--no-color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

/// Semantic colours, so every command paints the same thing the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Good,
    Warn,
    Bad,
    Dim,
    Strong,
    Plain,
}

impl Style {
    pub fn detect(no_color_flag: bool) -> Self {
        use std::io::IsTerminal;
        let no_color_env = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            color: !no_color_flag && !no_color_env && io::stdout().is_terminal(),
        }
    }

    /// The text, escaped (see [`fmt::printable`]), in the tone's colour on a colour terminal.
    pub fn paint(&self, text: &str, tone: Tone) -> String {
        let text = &crate::text::printable(text);
        if !self.color {
            return text.to_string();
        }
        match tone {
            Tone::Good => text.green().to_string(),
            Tone::Warn => text.yellow().to_string(),
            Tone::Bad => text.red().bold().to_string(),
            Tone::Dim => text.dimmed().to_string(),
            Tone::Strong => text.bold().to_string(),
            Tone::Plain => text.to_string(),
        }
    }
}

/// Writes a table or lines to stdout, in the terminal's charset (`LANG=C`: `->` for `→`,
/// see [`glyphs::fold`]); a closed pipe (`vmctl … | head`) ends quietly.
///
/// On a terminal, a line wider than it is wrapped at words, under its marker
/// ([`prose::for_stdout`]); into a pipe or a file the text is as given.
pub fn write_stdout(text: &str) -> Result<()> {
    write_document(&prose::for_stdout(&glyphs::for_terminal(text)))
}

/// Writes data (a JSON or YAML document) to stdout as it is; a closed pipe ends quietly.
pub fn write_document(text: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::Internal(format!("writing to stdout: {e}"))),
    }
}

/// Writes one line (the text as given, plus a newline) to stderr: the notes, warnings and
/// progress lines of commands whose stdout carries the result. Escaping cluster text is the
/// caller's (the `render` function that built the line).
/// On a terminal, wrapped as [`write_stdout`] wraps ([`prose::for_stderr`]).
pub fn stderr_line(text: &str) {
    eprintln!("{}", prose::for_stderr(&glyphs::for_stderr(text)));
}

/// Writes text to stderr as it is (no newline added; wrapped on a terminal).
pub fn stderr_text(text: &str) {
    eprint!("{}", prose::for_stderr(&glyphs::for_stderr(text)));
}

/// Adds `warnings` (what was said on stderr about the input) to a JSON document built with
/// `json!`, when there are any: the typed documents skip an empty list the same way.
pub fn with_warnings(doc: &mut serde_json::Value, warnings: Vec<String>) {
    if let (false, Some(map)) = (warnings.is_empty(), doc.as_object_mut()) {
        map.insert("warnings".into(), serde_json::Value::from(warnings));
    }
}

/// Writes a report as JSON or YAML to stdout. JSON is written as it is serialised, without
/// building the text first (`status -A -o json` on 100,000 VMIs is tens of megabytes). A
/// closed pipe is not an error.
pub fn write_structured<T: Serialize>(format: OutputFormat, report: &T) -> Result<()> {
    if format == OutputFormat::Yaml {
        return write_document(&structured(format, report)?);
    }
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let written = to_json_writer(&mut out, report)
        .map_err(|e| {
            let broken = e.io_error_kind() == Some(io::ErrorKind::BrokenPipe);
            (e.to_string(), broken)
        })
        .and_then(|()| {
            out.write_all(b"\n")
                .and_then(|()| out.flush())
                .map_err(|e| (e.to_string(), e.kind() == io::ErrorKind::BrokenPipe))
        });
    match written {
        Ok(()) | Err((_, true)) => Ok(()),
        Err((message, false)) => Err(Error::Internal(format!("writing to stdout: {message}"))),
    }
}

/// YAML as `-o yaml`, `snapshot` and `migrate --dry-run` write it: serde-saphyr's block style,
/// with every single-line string on one line (its default folds those longer than 80
/// characters into `>-` blocks, which kubectl never writes) and multi-line strings as `|`
/// blocks. Strings a YAML 1.1 reader (Kubernetes' own, goyaml v2) would take for something
/// else (`on`, `0755`, `2026-11-29T03:00:00Z`) are quoted, as kubectl quotes them.
pub fn to_yaml<T: Serialize>(value: &T) -> std::result::Result<String, String> {
    let options = serde_saphyr::ser_options! {
        folded_wrap_chars: usize::MAX,
        min_fold_chars: usize::MAX,
    };
    serde_saphyr::to_string_with_options(value, options).map_err(|e| e.to_string())
}

/// Serialises a report as JSON or YAML text.
pub fn structured<T: Serialize>(format: OutputFormat, report: &T) -> Result<String> {
    match format {
        OutputFormat::Yaml => {
            to_yaml(report).map_err(|e| Error::Internal(format!("serialising YAML: {e}")))
        }
        _ => {
            let mut out = Vec::new();
            to_json_writer(&mut out, report)
                .map_err(|e| Error::Internal(format!("serialising JSON: {e}")))?;
            out.push(b'\n');
            String::from_utf8(out).map_err(|e| Error::Internal(format!("serialising JSON: {e}")))
        }
    }
}

/// One line of JSON (JSON lines: `drain -o json`, `status --watch -o json`, `--progress
/// json`) whose strings carry no raw control character, like [`structured`]'s.
pub fn json_line<T: Serialize>(value: &T) -> Result<String> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, NoControlsCompact);
    value
        .serialize(&mut ser)
        .map_err(|e| Error::Internal(format!("serialising JSON: {e}")))?;
    String::from_utf8(out).map_err(|e| Error::Internal(format!("serialising JSON: {e}")))
}

/// The compact form of [`NoControls`].
struct NoControlsCompact;

impl serde_json::ser::Formatter for NoControlsCompact {
    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, s: &str) -> io::Result<()> {
        escape_controls(w, s)
    }
}

/// Writes `s` with DEL and C1 as `\u007f`, `\u009b` (serde_json already escapes C0).
fn escape_controls<W: ?Sized + Write>(w: &mut W, s: &str) -> io::Result<()> {
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c) {
            w.write_all(&s.as_bytes()[start..i])?;
            write!(w, "\\u{:04x}", c as u32)?;
            start = i + c.len_utf8();
        }
    }
    w.write_all(&s.as_bytes()[start..])
}

/// Pretty JSON whose strings carry no raw control character: serde_json escapes C0 but
/// writes DEL and C1 (U+0080..U+009F, e.g. U+009B, a CSI) as they are; here they are
/// written as `\u007f`, `\u009b` (the same JSON, safe on a terminal).
fn to_json_writer<W: Write, T: Serialize>(out: W, value: &T) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, NoControls(Default::default()));
    value.serialize(&mut ser)
}

struct NoControls<'a>(serde_json::ser::PrettyFormatter<'a>);

impl serde_json::ser::Formatter for NoControls<'_> {
    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, s: &str) -> io::Result<()> {
        escape_controls(w, s)
    }
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// `eprintln!` for lines that carry text from the cluster: escaped line by line
/// ([`fmt::printable_lines`]), so no raw control byte reaches the terminal (issue 11).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::render::stderr_line(&$crate::text::printable_lines(&format!($($arg)*)))
    };
}

#[cfg(test)]
mod json_tests {
    use super::*;

    #[test]
    fn json_escapes_del_and_c1_and_stays_pretty() {
        let v = serde_json::json!({"phase": "a\u{7f}b\u{9b}c\u{1b}d\u{e9}", "n": [1, 2]});
        let text = structured(OutputFormat::Json, &v).unwrap();
        assert_eq!(
            text,
            serde_json::to_string_pretty(&v)
                .unwrap()
                .replace('\u{7f}', "\\u007f")
                .replace('\u{9b}', "\\u009b")
                + "\n"
        );
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }
}
