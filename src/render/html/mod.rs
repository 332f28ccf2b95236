//! `-o html`: one self-contained HTML file to attach to an incident ticket (`explain`,
//! `plan-drain`). No script, no network: the stylesheet is inline, the charts are inline
//! SVG ([`super::svg`]), and nothing refers to anything outside the file.
//!
//! Every page is built with maud, whose `(x)` escapes what it interpolates, so a hostile
//! event message cannot inject markup. Foreign text also goes through
//! [`crate::text::printable`] first ([`t`]): control characters and bidi overrides show as
//! `\u{1b}`, `\u{202e}` instead of hiding in the page. The markup is also well-formed XML
//! (every element closed, no void element but the static `<meta>`), which the tests check
//! with an XML parser.

pub mod explain;
pub mod plan_drain;

use maud::{Markup, html};

/// The page's envelope: what it is about and where its data came from.
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    /// The document title (foreign text: escaped).
    pub title: &'a str,
    /// The as-of clock of the data (RFC 3339), with how it was chosen (` (given)` …).
    pub as_of: &'a str,
    pub clock_note: &'a str,
    /// Where the objects came from (a snapshot path, a cluster, a libvirt URI).
    pub source: &'a str,
}

/// Foreign text (a name, a message, a field value) made visible: control characters and
/// bidi overrides escaped. maud escapes the markup characters when it is interpolated.
pub fn t(text: &str) -> String {
    crate::text::printable(text)
}

/// The stylesheet: print-friendly (black on white, no backgrounds that printers drop, no
/// page break inside a table row), no `<` or `&` so the page stays well-formed XML, no
/// `url()`, no `@import`, no web font.
const STYLE: &str = "
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif;
  color: #1b1b1b; background: #fff; margin: 0 auto; max-width: 1180px; padding: 24px 28px; }
h1 { font-size: 22px; margin: 0 0 6px; }
h2 { font-size: 17px; margin: 28px 0 8px; padding-bottom: 3px; border-bottom: 1px solid #ccc; }
h3 { font-size: 14px; margin: 16px 0 6px; }
header .meta { color: #555; margin: 0; }
header .meta span { margin-right: 18px; white-space: nowrap; }
code, .mono, td.path { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 12.5px; }
.verdict { border: 2px solid #888; border-left-width: 10px; padding: 10px 16px; margin: 14px 0; }
.verdict .headline { font-size: 18px; font-weight: 700; margin: 0 0 4px; }
.verdict p { margin: 4px 0; }
.good { color: #1e7b34; } .warn { color: #9a5b00; } .bad { color: #b3261e; }
.dim { color: #666; } .strong { font-weight: 700; }
.v-good { border-color: #1e7b34; } .v-warn { border-color: #c98a00; }
.v-bad { border-color: #b3261e; } .v-dim { border-color: #999; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 10px; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px; border: 1px solid #d4d4d4;
  overflow-wrap: break-word; }
th { white-space: nowrap; }
td.mono { overflow-wrap: break-word; min-width: 11em; }
td.path { overflow-wrap: anywhere; min-width: 11em; }
li code { background: #f4f4f4; padding: 0 3px; border: 1px solid #e2e2e2; border-radius: 3px; }
td.text { min-width: 16em; }
.src { color: #666; font-size: 11px; font-family: ui-monospace, Menlo, Consolas, monospace; }
th { background: #f2f2f2; font-weight: 600; }
tr { break-inside: avoid; page-break-inside: avoid; }
td.num, th.num { text-align: right; white-space: nowrap; }
td.nowrap { white-space: nowrap; }
ol, ul { margin: 6px 0; padding-left: 26px; } li { margin: 3px 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 3px 16px; margin: 6px 0; }
dl.facts dt { color: #555; } dl.facts dd { margin: 0; }
.attention li { font-weight: 600; }
svg { display: block; max-width: 100%; height: auto; margin: 8px 0; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
svg .axis-line, svg .tick, svg .frame { stroke: #777; stroke-width: 1; }
svg .mark line { stroke: #1f5fa8; stroke-width: 1; }
svg .mark circle { fill: #1f5fa8; }
svg .mark.warn line { stroke: #c98a00; } svg .mark.warn circle { fill: #c98a00; }
svg .mark.warn text { fill: #9a5b00; font-weight: 700; }
svg .mark.bad line { stroke: #b3261e; } svg .mark.bad circle { fill: #b3261e; }
svg .mark.bad text { fill: #b3261e; font-weight: 700; }
svg .series { stroke-width: 1.8; } svg .legend { stroke-width: 3; }
svg .empty { fill: #777; font-style: italic; }
footer { margin-top: 32px; color: #666; font-size: 12px; border-top: 1px solid #ccc;
  padding-top: 6px; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  h2 { break-after: avoid; page-break-after: avoid; }
  section.chart, .verdict { break-inside: avoid; page-break-inside: avoid; }
}
";

/// The page: `<head>` (charset, viewport, title, the stylesheet), the header (title, as of,
/// source, vmctl version), `body`, the footer.
pub fn document(page: &Page<'_>, body: Markup) -> String {
    let mut out = String::with_capacity(64 * 1024);
    // Static text (no foreign byte): the doctype and the one void element, closed the way
    // both HTML and XML read it.
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n");
    out.push_str(
        &html! {
            title { (t(page.title)) }
            style { (STYLE) }
        }
        .into_string(),
    );
    out.push_str("\n</head>\n");
    let version = env!("CARGO_PKG_VERSION");
    out.push_str(
        &html! {
            body {
                header {
                    h1 { (t(page.title)) }
                    p class="meta" {
                        @if !page.as_of.is_empty() {
                            span { "as of " time datetime=(t(page.as_of)) { (t(page.as_of)) }
                                (page.clock_note) }
                        }
                        span { "source: " span class="mono" { (t(page.source)) } }
                        span { "vmctl " (version) }
                    }
                }
                main { (body) }
                footer {
                    "Generated by vmctl " (version) " from " (t(page.source))
                    @if !page.as_of.is_empty() { " as of " (t(page.as_of)) (page.clock_note) }
                    ". A self-contained report: no scripts, no external resources."
                }
            }
        }
        .into_string(),
    );
    out.push_str("\n</html>\n");
    out
}

/// A `dl` of facts; rows whose value is empty are left out.
pub fn facts(rows: &[(&str, String)]) -> Markup {
    html! {
        dl class="facts" {
            @for (k, v) in rows.iter().filter(|(_, v)| !v.is_empty()) {
                dt { (k) }
                dd { (t(v)) }
            }
        }
    }
}

/// A JSON value (a serialised report part) as `field.path = value` rows, nulls and empty
/// lists left out: the field paths of the `-o json` document.
pub fn json_rows(prefix: &str, value: &serde_json::Value, out: &mut Vec<(String, String)>) {
    use serde_json::Value;
    match value {
        Value::Null => {}
        Value::Object(map) => {
            for (k, v) in map {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                json_rows(&path, v, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                json_rows(&format!("{prefix}[{i}]"), v, out);
            }
        }
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

/// The words that start a command an operator can paste.
const COMMANDS: [&str; 4] = ["kubectl ", "virtctl ", "vmctl ", "virsh "];

/// A sentence of prose with the commands in it set in code font: each command starts with one
/// of [`COMMANDS`] at a word's start and runs to the sentence's end, to `  (`, `, then `, `; `,
/// or a `)` that closes a parenthesis opened before it (quotes are kept whole).
pub fn prose(text: &str) -> Markup {
    let parts = command_spans(text);
    html! {
        @for (is_command, part) in parts {
            @if is_command { code { (t(part)) } } @else { (t(part)) }
        }
    }
}

/// `text` cut into (is a command, part), in order; the parts joined are `text`.
pub fn command_spans(text: &str) -> Vec<(bool, &str)> {
    let mut out = Vec::new();
    let mut rest_start = 0;
    let mut depth = 0i32;
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < text.len() {
        let at_word = i == 0 || matches!(bytes[i - 1], b' ' | b'(' | b'`' | b'"');
        if at_word && COMMANDS.iter().any(|c| text[i..].starts_with(c)) {
            let end = command_end(text, i, depth);
            if i > rest_start {
                out.push((false, &text[rest_start..i]));
            }
            out.push((true, &text[i..end]));
            rest_start = end;
            i = end;
            continue;
        }
        match bytes[i] {
            b'(' => depth += 1,
            b')' => depth -= 1,
            _ => {}
        }
        i += text[i..].chars().next().map_or(1, char::len_utf8);
    }
    if rest_start < text.len() {
        out.push((false, &text[rest_start..]));
    }
    out
}

/// Where a command that starts at `start` ends (see [`prose`]); `outer` parentheses are open.
fn command_end(text: &str, start: usize, outer: i32) -> usize {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for (offset, c) in text[start..].char_indices() {
        let at = start + offset;
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '(' => depth += 1,
            ')' if depth == 0 && outer > 0 => return at,
            ')' => depth -= 1,
            _ => {}
        }
        let rest = &text[at..];
        if depth == 0
            && (rest.starts_with("  (") || rest.starts_with(", then ") || rest.starts_with("; "))
        {
            return at;
        }
    }
    // A sentence's full stop is not part of the command.
    let end = text.len();
    if text[start..end].ends_with('.') && !text[start..end].ends_with("..") {
        end - 1
    } else {
        end
    }
}

/// A two-column table of field paths and values.
pub fn path_table(rows: &[(String, String)]) -> Markup {
    html! {
        table {
            thead { tr { th { "field" } th { "value" } } }
            tbody {
                @for (k, v) in rows {
                    tr { td class="path" { (t(k)) } td { (t(v)) } }
                }
            }
        }
    }
}

/// `+1m30s` for an offset in seconds, `-` without one.
pub fn offset(seconds: Option<u64>) -> String {
    seconds
        .map(|s| format!("+{}", crate::text::duration(s as i64)))
        .unwrap_or_else(|| "-".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 33: the next steps' commands were not in code font.
    #[test]
    fn commands_in_prose_are_cut_out_whole() {
        let cmd = |text: &str| -> Vec<String> {
            command_spans(text)
                .into_iter()
                .filter(|(c, _)| *c)
                .map(|(_, p)| p.to_string())
                .collect()
        };
        assert_eq!(
            cmd("Start the VM again: virtctl start pg-01 -n prod"),
            ["virtctl start pg-01 -n prod"]
        );
        assert_eq!(
            cmd(
                "read its log (kubectl get pods -n kubevirt -o wide, then kubectl logs -n kubevirt <pod>)"
            ),
            [
                "kubectl get pods -n kubevirt -o wide",
                "kubectl logs -n kubevirt <pod>"
            ]
        );
        assert_eq!(
            cmd(
                r#"do not: kubectl patch mp x --type merge -p '{"spec":{"a (b)":false}}'  (the policy)"#
            ),
            [r#"kubectl patch mp x --type merge -p '{"spec":{"a (b)":false}}'"#]
        );
        assert_eq!(cmd("then run vmctl migrate vm-a."), ["vmctl migrate vm-a"]);
        assert!(cmd("the kubectl-style output; no command").is_empty());
        let text = "a: kubectl logs x; then b";
        let joined: String = command_spans(text).into_iter().map(|(_, p)| p).collect();
        assert_eq!(joined, text);
    }

    #[test]
    fn the_shell_is_self_contained_and_escapes_its_envelope() {
        let page = Page {
            title: "explain <script>alert(1)</script>",
            as_of: "2026-11-29T03:00:00Z",
            clock_note: " (given)",
            source: "snapshot \u{1b}[2J\"><img src=x onerror=alert(1)>",
        };
        let out = document(&page, html! { p { "body" } });
        assert!(
            out.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"),
            "{out}"
        );
        assert!(out.contains("<meta charset=\"utf-8\"/>"));
        assert!(!out.contains("<script") && !out.contains("<img"), "{out}");
        assert!(!out.contains("http") && !out.contains("url("), "{out}");
        assert!(out.contains("\\u{1b}[2J&quot;&gt;&lt;img"), "{out}");
        assert!(!out.contains('\u{1b}'));
        assert!(out.contains("vmctl 0."), "{out}");
        assert_eq!(out.matches("<title>").count(), 1);
        assert!(out.trim_end().ends_with("</html>"));
        // The stylesheet stays text an XML parser reads as it is.
        assert!(!STYLE.contains(['<', '>', '&', '"']));
    }

    #[test]
    fn json_values_become_field_paths() {
        let v = serde_json::json!({"a": {"b": 1, "c": null, "d": ["x", "y"]}, "e": "f"});
        let mut rows = Vec::new();
        json_rows("", &v, &mut rows);
        let rows: Vec<String> = rows.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(rows, ["a.b=1", "a.d[0]=x", "a.d[1]=y", "e=f"]);
    }
}
