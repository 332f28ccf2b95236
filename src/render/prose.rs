//! Lines of prose on a terminal: a line wider than the terminal is wrapped at words (the
//! table wrapper, [`super::table::wrap`]) with a hanging indent, so a note, an `Attention:`
//! item or a `hint:` reads as one item and no word is cut by the terminal. Lines that fit
//! (a table, already fitted to the terminal) pass unchanged; off a terminal nothing changes.
//!
//! Colour codes take no column and are never split. A line holding another control
//! character (a carriage return, a backspace) is passed as it is: its width is not knowable.

use std::borrow::Cow;

use super::table;

/// Tab stops, as a terminal sets them.
const TAB: usize = 8;

/// `text` for stdout: wrapped to the terminal's width when stdout is one (and the command
/// writes no document), else as it is.
pub fn for_stdout(text: &str) -> Cow<'_, str> {
    if super::glyphs::documents() {
        return Cow::Borrowed(text);
    }
    match table::terminal_width() {
        Some(width) => fit(text, width),
        None => Cow::Borrowed(text),
    }
}

/// `text` for stderr: wrapped to the terminal's width when stderr is one, else as it is
/// (stdout and stderr may be different kinds of file).
pub fn for_stderr(text: &str) -> Cow<'_, str> {
    match stderr_width() {
        Some(width) => fit(text, width),
        None => Cow::Borrowed(text),
    }
}

/// The terminal's width when stderr is a terminal (`COLUMNS` first, as for stdout).
pub fn stderr_width() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let terminal = crossterm::terminal::size().ok().map(|(w, _)| w);
    Some(super::gantt::width_from(
        std::env::var("COLUMNS").ok().as_deref(),
        terminal,
    ))
}

/// Every line of `text` at most `width` columns: lines that fit are left as they are, the
/// others wrapped ([`wrap_line`]).
pub fn fit(text: &str, width: usize) -> Cow<'_, str> {
    if text.split('\n').all(|l| !needs_wrap(l, width)) {
        return Cow::Borrowed(text);
    }
    let lines: Vec<String> = text
        .split('\n')
        .map(|l| {
            if needs_wrap(l, width) {
                wrap_line(l, width).join("\n")
            } else {
                l.to_string()
            }
        })
        .collect();
    Cow::Owned(lines.join("\n"))
}

fn needs_wrap(line: &str, width: usize) -> bool {
    !has_other_controls(line) && columns(line) > width
}

/// A control character other than a tab or an escape sequence's ESC.
fn has_other_controls(line: &str) -> bool {
    line.chars()
        .any(|c| c.is_control() && c != '\t' && c != '\u{1b}')
}

/// One piece of a line: an escape sequence (no column) or a character.
enum Piece<'a> {
    Escape(&'a str),
    Char(char),
}

/// The line as escape sequences and characters. An escape sequence is `ESC [` parameters and
/// a final byte (CSI: colours, cursor moves), `ESC ]` … BEL or `ESC \` (OSC), or `ESC` and one
/// character.
fn pieces(line: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if c != '\u{1b}' {
            out.push(Piece::Char(c));
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let bytes = rest.as_bytes();
        let end = match bytes.get(1) {
            Some(b'[') => bytes[2..]
                .iter()
                .position(|b| (0x40..=0x7e).contains(b))
                .map_or(bytes.len(), |p| p + 3),
            Some(b']') => {
                let bel = rest.find('\u{7}').map(|p| p + 1);
                let st = rest.find("\u{1b}\\").map(|p| p + 2);
                match (bel, st) {
                    (Some(a), Some(b)) => a.min(b),
                    (a, b) => a.or(b).unwrap_or(bytes.len()),
                }
            }
            Some(_) => 1 + rest[1..].chars().next().map_or(0, char::len_utf8),
            None => 1,
        };
        out.push(Piece::Escape(&rest[..end]));
        rest = &rest[end..];
    }
    out
}

/// The columns a line takes: escape sequences none, a tab to the next tab stop, any other
/// character one (as [`table::wrap`] counts).
pub fn columns(line: &str) -> usize {
    pieces(line).iter().fold(0, |col, p| match p {
        Piece::Escape(_) => col,
        Piece::Char('\t') => (col / TAB + 1) * TAB,
        Piece::Char(_) => col + 1,
    })
}

/// The line with its tabs as the spaces a terminal would show.
fn expand_tabs(line: &str) -> Cow<'_, str> {
    if !line.contains('\t') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + TAB);
    let mut col = 0;
    for p in pieces(line) {
        match p {
            Piece::Escape(e) => out.push_str(e),
            Piece::Char('\t') => {
                let next = (col / TAB + 1) * TAB;
                out.extend(std::iter::repeat_n(' ', next - col));
                col = next;
            }
            Piece::Char(c) => {
                out.push(c);
                col += 1;
            }
        }
    }
    Cow::Owned(out)
}

/// The visible text (escape sequences left out).
fn visible(line: &str) -> String {
    pieces(line)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Char(c) => Some(c),
            Piece::Escape(_) => None,
        })
        .collect()
}

/// The columns the continuation lines of `line` are indented: its leading spaces, plus the
/// marker after them (`- `, `* `, `! `, `✗ `, `[3] `, `1. `), or else a short label
/// (`hint: `, `Assumed: `, `tenant-a/shop-web-01: `), or else, on an indented line, two
/// columns; a marker wider than a third of the line is left out (the continuation keeps
/// the leading spaces only).
pub fn hang(line: &str, width: usize) -> usize {
    let text = visible(line);
    let chars: Vec<char> = text.chars().collect();
    let lead = chars.iter().take_while(|c| **c == ' ').count();
    let rest: String = chars[lead..].iter().collect();
    // An indented line without a marker (an item under a heading, as explain's evidence):
    // its continuation two further in, so the items stay apart.
    let marker = bullet(&rest)
        .or_else(|| label(&rest))
        .unwrap_or(if lead > 0 { 2 } else { 0 });
    let most = width / 3;
    let item = if lead > 0 { lead + 2 } else { 0 };
    if lead + marker <= most {
        lead + marker
    } else if item <= most {
        item
    } else if lead <= most {
        lead
    } else {
        0
    }
}

/// The width of a bullet at the start of `text`, with the space after it.
fn bullet(text: &str) -> Option<usize> {
    let (head, _) = text.split_once(' ')?;
    let n = head.chars().count();
    let numbered = |inner: &str| !inner.is_empty() && inner.chars().all(|c| c.is_ascii_digit());
    let is_bullet = (head.starts_with('[') && head.ends_with(']') && n <= 10)
        || ((head.ends_with('.') || head.ends_with(')')) && numbered(&head[..head.len() - 1]))
        || ((1..=2).contains(&n)
            && head
                .chars()
                .all(|c| !c.is_alphanumeric() && !matches!(c, '(' | '"' | '\'' | '`' | '<')));
    is_bullet.then_some(n + 1)
}

/// The width of a label (`name: `) at the start of `text`: at most three words, none
/// bracketed, before the first `: `.
fn label(text: &str) -> Option<usize> {
    let (head, _) = text.split_once(": ")?;
    let words = head.split(' ').count();
    let fine = !head.is_empty()
        && words <= 3
        && !head.contains(['[', '"', '='])
        && head.chars().count() <= 40;
    fine.then(|| head.chars().count() + 2)
}

/// A line wider than `width`, in lines of at most `width` columns: broken at spaces (after a
/// `-` or `/` inside a word longer than a line, as tables break), the continuation lines
/// indented by [`hang`]; a piece with neither longer than a whole line is cut where the line
/// ends (the terminal would cut it there too), never inside an escape sequence.
pub fn wrap_line(line: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let line = expand_tabs(line);
    // A prompt's last space (`[y/N] `) stays.
    let prompt = line.ends_with(' ');
    let line = line.trim_end_matches(' ');
    let indent = hang(line, width);
    // Where the marker ends: `indent` visible columns in, escape sequences right after kept
    // with the head.
    let mut col = 0;
    let mut at = 0;
    for p in pieces(line) {
        match p {
            Piece::Char(c) if col < indent => {
                col += 1;
                at += c.len_utf8();
            }
            Piece::Escape(e) if col <= indent => at += e.len(),
            _ => break,
        }
    }
    let (head, body) = line.split_at(at);
    let room = width.saturating_sub(indent).max(1);
    let (prose, command) = split_command(body);
    let mut pieces = table::wrap(prose, room);
    if let Some(command) = command {
        pieces = with_command(pieces, command, room);
    }
    let mut out = Vec::new();
    for (i, piece) in pieces.into_iter().enumerate() {
        for (j, chunk) in cut(&piece, room).into_iter().enumerate() {
            let chunk = table::trim_end_styled(&chunk);
            if i == 0 && j == 0 {
                out.push(format!("{head}{chunk}"));
            } else {
                out.push(format!(
                    "{}{}",
                    " ".repeat(indent),
                    chunk.trim_start_matches(' ')
                ));
            }
        }
    }
    if prompt && let Some(last) = out.last_mut() {
        last.push(' ');
    }
    out
}

/// The programs whose command lines vmctl prints to be pasted (next steps, `resume:`).
const PROGRAMS: [&str; 4] = ["vmctl ", "kubectl ", "virtctl ", "virsh "];

/// The text before a command that runs to the end of the line (at its start or after a
/// `: `), and the command.
fn split_command(body: &str) -> (&str, Option<&str>) {
    let starts = |at: usize| PROGRAMS.iter().any(|p| body[at..].starts_with(p));
    if starts(0) {
        return ("", Some(body));
    }
    let mut from = 0;
    while let Some(p) = body[from..].find(": ") {
        let at = from + p + 2;
        if starts(at) {
            return (body[..at].trim_end(), Some(&body[at..]));
        }
        from = at;
    }
    (body, None)
}

/// The shell words of a command: broken at spaces outside quotes only.
fn shell_words(command: &str) -> Vec<String> {
    let mut words = vec![String::new()];
    let mut quote: Option<char> = None;
    for c in command.chars() {
        match (quote, c) {
            (None, ' ') => {
                if words.last().is_some_and(|w| !w.is_empty()) {
                    words.push(String::new());
                }
                continue;
            }
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        if let Some(w) = words.last_mut() {
            w.push(c);
        }
    }
    words.retain(|w| !w.is_empty());
    words
}

/// The prose's lines, then the command after them: a command broken across lines ends each
/// but its last with ` \` (pasted into a shell it is still one command), and is broken
/// only between its shell words (never inside quotes).
fn with_command(mut lines: Vec<String>, command: &str, room: usize) -> Vec<String> {
    let mut line = lines.pop().unwrap_or_default();
    let mut in_command = false;
    for word in shell_words(command) {
        let space = usize::from(!line.is_empty());
        // Room kept for ` \` while the command may go on.
        if line.is_empty() || columns(&line) + space + columns(&word) + 2 <= room {
            if space == 1 {
                line.push(' ');
            }
            line.push_str(&word);
        } else {
            if in_command {
                line.push_str(" \\");
            }
            lines.push(std::mem::replace(&mut line, word));
        }
        in_command = true;
    }
    lines.push(line);
    lines
}

/// `text` in chunks of at most `room` columns, escape sequences whole.
fn cut(text: &str, room: usize) -> Vec<String> {
    if columns(text) <= room {
        return vec![text.to_string()];
    }
    let mut out = vec![String::new()];
    let mut col = 0;
    for p in pieces(text) {
        match p {
            Piece::Escape(e) => out.last_mut().map_or((), |l| l.push_str(e)),
            Piece::Char(c) => {
                if col == room {
                    out.push(String::new());
                    col = 0;
                }
                if let Some(l) = out.last_mut() {
                    l.push(c);
                }
                col += 1;
            }
        }
    }
    out
}

/// `text` on one line of at most `width` columns: as it is when it fits, else cut after its
/// last whole word that fits, with `…` (a name is shown whole or not at all). For the live
/// views' messages: indicatif redraws a message that wraps as garbage.
pub fn one_line(text: &str, width: usize) -> String {
    if columns(text) <= width {
        return text.to_string();
    }
    let room = width.saturating_sub(1);
    let mut out = String::new();
    let mut col = 0;
    for word in text.split(' ') {
        let w = columns(word);
        let space = usize::from(!out.is_empty());
        if col + space + w > room {
            break;
        }
        if space == 1 {
            out.push(' ');
        }
        out.push_str(word);
        col += space + w;
    }
    // At a ` · ` between parts when one is in the second half: no part is cut.
    if let Some(p) = out.rfind(" · ")
        && columns(&out[..p]) * 2 >= room
    {
        out.truncate(p);
    }
    if out.is_empty() {
        // A first word longer than the line: its start, as the terminal would show it.
        let first = cut(text, room).into_iter().next().unwrap_or_default();
        return format!("{first}…");
    }
    let out = out.trim_end_matches([' ', ',', ';', ':', '·']);
    // A colour cut open is closed.
    let reset = if out.contains('\u{1b}') {
        "\u{1b}[0m"
    } else {
        ""
    };
    format!("{out}{reset}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    const RED: &str = "\u{1b}[31m";
    const OFF: &str = "\u{1b}[0m";

    fn plain(lines: &[String]) -> Vec<String> {
        lines.iter().map(|l| visible(l)).collect()
    }

    #[test]
    fn a_line_that_fits_is_unchanged_and_a_long_one_hangs_under_its_marker() {
        let text = "Title\n  [1] short\n";
        assert!(matches!(fit(text, 80), Cow::Borrowed(_)));
        let long = "  [12] prod/analytics-warehouse-01: the target pod is unschedulable because no node has 8 GiB free";
        let lines = wrap_line(long, 40);
        assert_eq!(
            lines,
            vec![
                "  [12] prod/analytics-warehouse-01: the",
                "       target pod is unschedulable",
                "       because no node has 8 GiB free",
            ]
        );
        for (line, lead) in [
            ("- a b", 2),
            ("  ! x y", 4),
            ("  ✗ x y", 4),
            ("3. x y", 3),
            ("hint: x y", 6),
            ("  tenant-a/shop-web-01: x", 24),
            ("Queue (priority): x y", 18),
            ("plain words here", 0),
            ("  Event/x message = a: b", 4),
        ] {
            assert_eq!(hang(line, 80), lead, "{line:?}");
        }
        // A label wider than a third of the line: the leading spaces and two.
        assert_eq!(hang("  prod/analytics-warehouse-01-replica: x", 80), 4);
        assert_eq!(hang(&format!("{}x", " ".repeat(30)), 80), 0);
    }

    #[test]
    fn colour_codes_take_no_column_and_are_never_split() {
        let line = format!(
            "  {RED}✗{OFF} prod/pg-orders-01: {RED}in post-copy from node-2 to node-1{OFF}: the point of no return"
        );
        assert_eq!(columns(&line), visible(&line).chars().count());
        let lines = wrap_line(&line, 30);
        for l in &lines {
            assert!(columns(l) <= 30, "{l:?}");
            // Every ESC starts a whole sequence.
            for (i, _) in l.match_indices('\u{1b}') {
                assert!(
                    l[i..].starts_with(RED) || l[i..].starts_with(OFF),
                    "split escape in {l:?}"
                );
            }
        }
        assert_eq!(
            plain(&lines),
            vec![
                "  ✗ prod/pg-orders-01: in",
                "    post-copy from node-2 to",
                "    node-1: the point of no",
                "    return",
            ]
        );
        // The words, joined, are the line's.
        let words: Vec<String> = plain(&lines)
            .join(" ")
            .split_whitespace()
            .map(String::from)
            .collect();
        let want: Vec<String> = visible(&line)
            .split_whitespace()
            .map(String::from)
            .collect();
        assert_eq!(words, want);
    }

    #[test]
    fn hostile_lines_tabs_escapes_and_endless_names() {
        // Tabs count to the next tab stop and come out as spaces.
        assert_eq!(columns("a\tb"), 9);
        let lines = wrap_line("key:\tvalue one two three four five", 20);
        assert!(
            lines.iter().all(|l| !l.contains('\t') && columns(l) <= 20),
            "{lines:?}"
        );
        // A carriage return or a backspace: passed as it is.
        let cr = format!("{}\r{}", "x".repeat(100), "y".repeat(100));
        assert_eq!(fit(&cr, 80), cr);
        // A name without a space, `-` or `/` longer than the line is cut at the line's end.
        let name = "n".repeat(200);
        let lines = wrap_line(&format!("  - pod {name} is gone"), 80);
        assert!(lines.iter().all(|l| columns(l) <= 80), "{lines:?}");
        assert_eq!(
            plain(&lines).concat().replace(' ', ""),
            format!("-pod{name}isgone")
        );
        // A name with hyphens: broken after one, each piece whole.
        let lines = wrap_line(
            "virt-launcher-analytics-warehouse-01-replica-set-7d5pf-abcdefgh-ijklmnop is the target",
            40,
        );
        assert!(lines.iter().all(|l| columns(l) <= 40), "{lines:?}");
        assert!(lines[0].ends_with('-'), "{lines:?}");
        // An OSC sequence (a terminal title) takes no column either.
        let osc = format!("\u{1b}]0;title\u{7}{}", "w ".repeat(50));
        assert!(wrap_line(&osc, 40).iter().all(|l| columns(l) <= 40));
        // A width too small for any indent still makes progress.
        assert!(
            wrap_line("      - a bb ccc dddd", 3)
                .iter()
                .all(|l| columns(l) <= 4)
        );
    }

    #[test]
    fn a_command_is_broken_between_shell_words_with_a_backslash() {
        let line = "  resume: vmctl drain node-1 --ignore-daemonsets --delete-emptydir-data --force-partial";
        assert_eq!(
            wrap_line(line, 60),
            vec![
                "  resume: vmctl drain node-1 --ignore-daemonsets \\",
                "          --delete-emptydir-data --force-partial",
            ]
        );
        // Never inside quotes; prose before the command wrapped as prose.
        let line = "  2. Raise the quota for the duration of the migration: kubectl patch resourcequota -n quota compute --type merge -p '{\"spec\": {\"hard\": 1}}'";
        let lines = wrap_line(line, 50);
        assert!(lines.iter().all(|l| columns(l) <= 50), "{lines:?}");
        assert!(
            lines
                .iter()
                .any(|l| l.trim_start() == "'{\"spec\": {\"hard\": 1}}'"),
            "{lines:?}"
        );
        let pasted: String = lines
            .iter()
            .map(|l| l.trim_end_matches(" \\").trim().to_string())
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(pasted, line.trim());
        // A command inside prose (not after `: `) is prose.
        assert_eq!(
            split_command("compare kubectl get pod x with y"),
            ("compare kubectl get pod x with y", None)
        );
    }

    #[test]
    fn one_line_keeps_names_whole() {
        let text = "1 of 6 VMs left · waiting for virt-launcher-pg-orders-01-8npf9: target pod";
        assert_eq!(one_line(text, 200), text);
        let short = one_line(text, 50);
        assert!(columns(&short) <= 50, "{short}");
        assert_eq!(short, "1 of 6 VMs left · waiting for…");
        // A colour cut open is closed before the `…`.
        assert_eq!(
            one_line(&format!("{RED}aaa bbb ccc{OFF}"), 8),
            format!("{RED}aaa bbb{OFF}…")
        );
        assert_eq!(
            one_line(
                "2 of 5 VMs moved, 1 shut down · 1 migration in flight · 6 evictions",
                60
            ),
            "2 of 5 VMs moved, 1 shut down · 1 migration in flight…"
        );
        assert!(columns(&one_line(&"z".repeat(90), 40)) <= 40);
    }
}
