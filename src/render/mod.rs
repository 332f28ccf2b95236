//! Presentation: tables, JSON/YAML, colours, durations and sizes. Nothing else prints.

pub mod fmt;
pub mod progress;
pub mod table;

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
}

impl OutputFormat {
    pub fn is_structured(self) -> bool {
        matches!(self, OutputFormat::Json | OutputFormat::Yaml)
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
        let text = &fmt::printable(text);
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

/// Writes data to stdout; a closed pipe (`vmctl … | head`) ends quietly.
pub fn write_stdout(text: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::Internal(format!("writing to stdout: {e}"))),
    }
}

/// Writes a report as JSON or YAML to stdout. JSON is written as it is serialised, without
/// building the text first (`status -A -o json` on 100,000 VMIs is tens of megabytes). A
/// closed pipe is not an error.
pub fn write_structured<T: Serialize>(format: OutputFormat, report: &T) -> Result<()> {
    if format == OutputFormat::Yaml {
        return write_stdout(&structured(format, report)?);
    }
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let written = serde_json::to_writer_pretty(&mut out, report)
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

/// Serialises a report as JSON or YAML text.
pub fn structured<T: Serialize>(format: OutputFormat, report: &T) -> Result<String> {
    match format {
        OutputFormat::Yaml => serde_yaml::to_string(report)
            .map_err(|e| Error::Internal(format!("serialising YAML: {e}"))),
        _ => serde_json::to_string_pretty(report)
            .map(|s| s + "\n")
            .map_err(|e| Error::Internal(format!("serialising JSON: {e}"))),
    }
}
