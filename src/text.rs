//! Durations, ages and byte sizes as an operator reads them, and cluster text made safe for a
//! terminal. The lowest layer: policy, triage, migration and the renderers all use it.

/// `kubectl`-style age: `45s`, `12m`, `3h12m`, `2d4h`.
pub fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..=119 => format!("{s}s"),
        120..=3599 => format!("{}m", s / 60),
        3600..=86_399 => {
            let m = (s % 3600) / 60;
            if m == 0 {
                format!("{}h", s / 3600)
            } else {
                format!("{}h{}m", s / 3600, m)
            }
        }
        _ => {
            let h = (s % 86_400) / 3600;
            if h == 0 {
                format!("{}d", s / 86_400)
            } else {
                format!("{}d{}h", s / 86_400, h)
            }
        }
    }
}

/// A precise duration: `7m30s`, `1h02m`, `42s`; a day or more as an age (`7d1h`, never
/// `169h17m`): one format for long spans everywhere.
pub fn duration(seconds: i64) -> String {
    let s = seconds.max(0);
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else if s < 86_400 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else {
        age(s)
    }
}

/// An instant as vmctl prints it: RFC 3339 in UTC, to the second (a live clock carries
/// nanoseconds no reader needs).
pub fn timestamp(t: k8s_openapi::jiff::Timestamp) -> String {
    k8s_openapi::jiff::Timestamp::from_second(t.as_second())
        .unwrap_or(t)
        .to_string()
}

/// A word for a POSIX shell: as is when it has nothing special, else single-quoted; for
/// commands vmctl prints to be pasted (next steps, hints).
pub fn sh_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=+@%,".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Binary byte size: `512 B`, `1.5 KiB`, `2.0 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Text from a cluster or a file, safe for a terminal: control characters (C0 and C1: ESC,
/// CR, BEL, NUL, newlines, CSI…) and the bidirectional overrides that reorder what a reader
/// sees are shown escaped (`\u{1b}`, `\n`, `\u{202e}`) instead of acting on the screen.
/// Idempotent: escaped text has nothing left to escape.
pub fn printable(text: &str) -> String {
    if !text.chars().any(hostile) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else if hostile(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// [`printable`] line by line: the line breaks of a message vmctl writes stay, everything
/// else is escaped.
pub fn printable_lines(text: &str) -> String {
    text.split('\n')
        .map(printable)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A character that acts on a terminal or reorders text.
fn hostile(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(printable("plain text"), "plain text");
        assert_eq!(
            printable("evil\u{1b}[2Jwipe\r\nline\u{7}"),
            "evil\\u{1b}[2Jwipe\\r\\nline\\u{7}"
        );
        assert_eq!(printable("ünïcode ok"), "ünïcode ok");
        assert_eq!(printable("a\u{202e}b\u{85}c"), "a\\u{202e}b\\u{85}c");
        let once = printable("x\u{1b}]0;t\u{7}");
        assert_eq!(printable(&once), once);
        assert_eq!(
            printable_lines("phase \u{1b}[2J\n  abort it: x\r"),
            "phase \\u{1b}[2J\n  abort it: x\\r"
        );
    }

    #[test]
    fn ages() {
        assert_eq!(age(-5), "0s");
        assert_eq!(age(45), "45s");
        assert_eq!(age(150), "2m");
        assert_eq!(age(3600), "1h");
        assert_eq!(age(11_520), "3h12m");
        assert_eq!(age(187_200), "2d4h");
    }

    #[test]
    fn durations() {
        assert_eq!(duration(42), "42s");
        assert_eq!(duration(450), "7m30s");
        assert_eq!(duration(3720), "1h02m");
        // A week is an age, as `age` writes it (issue 33: `169h17m` next to `7d1h`).
        assert_eq!(duration(169 * 3600 + 17 * 60), "7d1h");
        assert_eq!(duration(86_400), "1d");
    }

    #[test]
    fn timestamps_to_the_second() {
        let t: k8s_openapi::jiff::Timestamp = "2026-12-06T04:54:22.123456789Z".parse().unwrap();
        assert_eq!(timestamp(t), "2026-12-06T04:54:22Z");
    }

    #[test]
    fn sizes() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(2 * 1024 * 1024 * 1024), "2.0 GiB");
    }
}
