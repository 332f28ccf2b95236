//! Decoding an object with an error an operator can act on: the field path and a short
//! value (`status.migrationState.startTimestamp: "yesterday" is not …`), never a Rust type
//! name (`expected struct VmiStatus`) or a megabyte of echoed text (issue 11).

use serde::de::DeserializeOwned;

/// Longest quoted value kept in a message.
const MAX_VALUE_CHARS: usize = 60;

/// Decodes `text` (one JSON object) into `T`; the error names the field.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        // Only on the error path: the object again as a tree, for the value at `path`.
        let tree: Option<serde_json::Value> = serde_json::from_str(text).ok();
        let value = tree.as_ref().and_then(|t| string_at(t, &path));
        message(&path, &without_location(&inner), value)
    })
}

/// Decodes a tree into `T`; the error names the field.
pub fn from_value<T: DeserializeOwned>(value: &serde_json::Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        message(&path, &e.into_inner().to_string(), string_at(value, &path))
    })
}

/// serde_json appends " at line X column Y": meaningless for an object decoded on its own.
fn without_location(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match message.strip_suffix(&suffix) {
        Some(m) => m.to_string(),
        None => message,
    }
}

/// The string at a serde_path_to_error path (`status.conditions[0].lastTransitionTime`).
fn string_at<'v>(root: &'v serde_json::Value, path: &str) -> Option<&'v str> {
    let mut at = root;
    for part in path.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            at = at.get(key)?;
        }
        while let Some(tail) = rest.strip_prefix('[') {
            let (index, after) = tail.split_once(']')?;
            at = at.get(index.parse::<usize>().ok()?)?;
            rest = after;
        }
    }
    at.as_str()
}

/// A value for a message: quoted, cut to [`MAX_VALUE_CHARS`].
fn quoted(value: &str) -> String {
    let n = value.chars().count();
    if n > MAX_VALUE_CHARS {
        let cut: String = value.chars().take(MAX_VALUE_CHARS).collect();
        format!("{:?} ({n} chars)", format!("{cut}…"))
    } else {
        format!("{value:?}")
    }
}

fn message(path: &str, raw: &str, value: Option<&str>) -> String {
    let field = path.rsplit('.').next().unwrap_or(path);
    let is_time = field.ends_with("Timestamp") || field.ends_with("Time");
    let failed = raw.contains("overflowed")
        || raw.contains("required range")
        || raw.starts_with("failed to");
    let text = match value {
        // A well-formed time past jiff's last day (9999-12-30).
        Some(v) if is_time && failed && v.starts_with("9999-") => {
            "a time beyond what vmctl can represent (the last is 9999-12-30)".to_string()
        }
        Some(v) if is_time && failed => format!("{} is not an RFC 3339 time", quoted(v)),
        None if is_time && (raw.contains("overflowed") || raw.contains("required range")) => {
            "a time beyond what vmctl can represent (the last is 9999-12-30)".to_string()
        }
        None if is_time && raw.starts_with("failed to") => {
            let cut: String = raw.chars().take(MAX_VALUE_CHARS * 2).collect();
            format!("not an RFC 3339 time ({cut})")
        }
        _ => plain_words(&shorten_quoted(raw)),
    };
    if path.is_empty() || path == "." {
        text
    } else {
        format!("{path}: {text}")
    }
}

/// Rust's names for what was expected, in the API's words.
fn plain_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("expected ") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + "expected ".len()..];
        let (word, after) = match tail.split_once([' ', ',']) {
            Some((w, _)) => (w, &tail[w.len()..]),
            None => (tail, ""),
        };
        let replaced = match word {
            "struct" | "map" => Some(("an object", skip_word(after))),
            "enum" => Some(("one of the known values", skip_word(after))),
            "u8" | "u16" | "u32" | "u64" | "i8" | "i16" | "i32" | "i64" | "usize" | "isize"
            | "u128" | "i128" => Some(("a whole number", after)),
            "f32" | "f64" => Some(("a number", after)),
            _ => None,
        };
        match replaced {
            Some((words, after)) => {
                out.push_str("expected ");
                out.push_str(words);
                rest = after;
            }
            None => {
                out.push_str("expected ");
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out.replace("a borrowed string", "a string")
}

/// Drops the type name after `struct`/`enum` (`struct VmiStatus`).
fn skip_word(text: &str) -> &str {
    let t = text.trim_start();
    match t.find([' ', ',']) {
        Some(end) => &t[end..],
        None => "",
    }
}

/// A parser's message with its quoted values cut (see [`shorten_quoted`]), and cut as a
/// whole to a few hundred characters.
pub fn shorten(text: &str) -> String {
    let short = shorten_quoted(text);
    let n = short.chars().count();
    if n > MAX_VALUE_CHARS * 6 {
        let cut: String = short.chars().take(MAX_VALUE_CHARS * 6).collect();
        format!("{cut}… ({n} chars)")
    } else {
        short
    }
}

/// Quoted values longer than [`MAX_VALUE_CHARS`] are cut (`"aaaa…" (1048576 chars)`).
fn shorten_quoted(text: &str) -> String {
    let mut out = String::new();
    // Whether the quote that closes the last quoted part is written already.
    let mut closed = false;
    for (i, part) in text.split('"').enumerate() {
        let inside = i % 2 == 1;
        if i > 0 && !closed {
            out.push('"');
        }
        closed = false;
        let n = part.chars().count();
        if inside && n > MAX_VALUE_CHARS {
            out.extend(part.chars().take(MAX_VALUE_CHARS));
            out.push_str(&format!("…\" ({n} chars)"));
            closed = true;
        } else {
            out.push_str(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::VirtualMachineInstance;

    #[test]
    fn a_wrong_type_names_the_field_and_not_the_rust_type() {
        let e = from_str::<VirtualMachineInstance>(r#"{"metadata":{"name":"a"},"status":5}"#)
            .unwrap_err();
        assert_eq!(e, "status: invalid type: integer `5`, expected an object");
    }

    #[test]
    fn a_bad_time_names_its_field() {
        let e = from_str::<VirtualMachineInstance>(
            r#"{"status":{"migrationState":{"startTimestamp":"yesterday"}}}"#,
        )
        .unwrap_err();
        assert_eq!(
            e,
            r#"status.migrationState.startTimestamp: "yesterday" is not an RFC 3339 time"#
        );
        let long = "y".repeat(5000);
        let e = from_value::<VirtualMachineInstance>(&serde_json::json!(
            {"status": {"conditions": [{"type": "Ready"}, {"type": "X", "lastTransitionTime": long}]}}
        ))
        .unwrap_err();
        assert!(
            e.starts_with(r#"status.conditions[1].lastTransitionTime: "yyyy"#)
                && e.ends_with(r#"…" (5000 chars) is not an RFC 3339 time"#),
            "{e}"
        );
        let e = from_str::<VirtualMachineInstance>(
            r#"{"metadata":{"creationTimestamp":"9999-12-31T23:59:59Z"}}"#,
        )
        .unwrap_err();
        assert_eq!(
            e,
            "metadata.creationTimestamp: a time beyond what vmctl can represent (the last is 9999-12-30)"
        );
    }

    #[test]
    fn a_huge_value_is_not_echoed_whole() {
        let big = "x".repeat(1_000_000);
        let e = from_str::<VirtualMachineInstance>(&format!(
            r#"{{"status":{{"phase":5,"nodeName":7, "x":"{big}"}}}}"#
        ))
        .unwrap_err();
        assert!(e.len() < 300, "{}", e.len());
        let e = from_value::<VirtualMachineInstance>(
            &serde_json::json!({"spec": {"domain": {"memory": {"guest": big}}}}),
        )
        .unwrap_err();
        assert!(e.len() < 300, "{e}");
        assert!(e.starts_with("spec.domain.memory.guest: "), "{e}");
    }
}
