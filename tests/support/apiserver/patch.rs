//! JSON merge patch (RFC 7386) and JSON patch (RFC 6902).

use serde_json::{Map, Value};

/// RFC 7386: objects merge recursively, `null` removes, anything else replaces.
pub(crate) fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(map) = target {
        for (key, value) in patch {
            if value.is_null() {
                map.remove(key);
            } else {
                merge_patch(map.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

/// Why a JSON patch could not be applied.
#[derive(Debug)]
pub(crate) enum JsonPatchError {
    /// The patch document itself is malformed (400).
    Malformed(String),
    /// The patch does not apply to this object, or a `test` failed (422).
    Failed(String),
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Splits `/a/b` into its parent pointer and last token.
fn split_pointer(path: &str) -> Result<(String, String), JsonPatchError> {
    if path.is_empty() {
        return Err(JsonPatchError::Failed(
            "the root cannot be the target".into(),
        ));
    }
    if !path.starts_with('/') {
        return Err(JsonPatchError::Malformed(format!(
            "invalid JSON pointer {path:?}"
        )));
    }
    let idx = path.rfind('/').unwrap_or(0);
    Ok((path[..idx].to_string(), unescape(&path[idx + 1..])))
}

fn get<'a>(doc: &'a Value, path: &str) -> Result<&'a Value, JsonPatchError> {
    doc.pointer(path)
        .ok_or_else(|| JsonPatchError::Failed(format!("path {path:?} does not exist")))
}

fn parent_mut<'a>(doc: &'a mut Value, parent: &str) -> Result<&'a mut Value, JsonPatchError> {
    doc.pointer_mut(parent)
        .ok_or_else(|| JsonPatchError::Failed(format!("path {parent:?} does not exist")))
}

fn array_index(token: &str, len: usize, allow_end: bool) -> Result<usize, JsonPatchError> {
    if allow_end && token == "-" {
        return Ok(len);
    }
    let index: usize = token
        .parse()
        .map_err(|_| JsonPatchError::Failed(format!("invalid array index {token:?}")))?;
    let max = if allow_end {
        len
    } else {
        len.saturating_sub(1)
    };
    if index > max || (!allow_end && len == 0) {
        return Err(JsonPatchError::Failed(format!(
            "array index {index} out of bounds"
        )));
    }
    Ok(index)
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), JsonPatchError> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, token) = split_pointer(path)?;
    match parent_mut(doc, &parent)? {
        Value::Object(map) => {
            map.insert(token, value);
            Ok(())
        }
        Value::Array(items) => {
            let index = array_index(&token, items.len(), true)?;
            items.insert(index, value);
            Ok(())
        }
        _ => Err(JsonPatchError::Failed(format!(
            "cannot add {path:?}: parent is not an object or array"
        ))),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, JsonPatchError> {
    let (parent, token) = split_pointer(path)?;
    match parent_mut(doc, &parent)? {
        Value::Object(map) => map
            .remove(&token)
            .ok_or_else(|| JsonPatchError::Failed(format!("path {path:?} does not exist"))),
        Value::Array(items) => {
            let index = array_index(&token, items.len(), false)?;
            Ok(items.remove(index))
        }
        _ => Err(JsonPatchError::Failed(format!(
            "path {path:?} does not exist"
        ))),
    }
}

/// Applies an RFC 6902 patch; the document is left untouched when any operation fails.
pub(crate) fn json_patch(doc: &mut Value, ops: &Value) -> Result<(), JsonPatchError> {
    let Value::Array(ops) = ops else {
        return Err(JsonPatchError::Malformed(
            "a JSON patch must be an array of operations".into(),
        ));
    };
    let mut work = doc.clone();
    for op in ops {
        let name = op
            .get("op")
            .and_then(Value::as_str)
            .ok_or_else(|| JsonPatchError::Malformed(format!("operation without \"op\": {op}")))?;
        let path = op.get("path").and_then(Value::as_str).ok_or_else(|| {
            JsonPatchError::Malformed(format!("operation without \"path\": {op}"))
        })?;
        let value = || {
            op.get("value").cloned().ok_or_else(|| {
                JsonPatchError::Malformed(format!("{name} operation without \"value\": {op}"))
            })
        };
        let from = || {
            op.get("from").and_then(Value::as_str).ok_or_else(|| {
                JsonPatchError::Malformed(format!("{name} operation without \"from\": {op}"))
            })
        };
        match name {
            "add" => add(&mut work, path, value()?)?,
            "remove" => {
                remove(&mut work, path)?;
            }
            "replace" => {
                let new = value()?;
                if path.is_empty() {
                    work = new;
                } else {
                    let slot = work.pointer_mut(path).ok_or_else(|| {
                        JsonPatchError::Failed(format!("path {path:?} does not exist"))
                    })?;
                    *slot = new;
                }
            }
            "test" => {
                let expected = value()?;
                let actual = get(&work, path)?;
                if *actual != expected {
                    return Err(JsonPatchError::Failed(format!(
                        "testing value {path} failed: expected {expected}, found {actual}"
                    )));
                }
            }
            "move" => {
                let moved = remove(&mut work, from()?)?;
                add(&mut work, path, moved)?;
            }
            "copy" => {
                let copied = get(&work, from()?)?.clone();
                add(&mut work, path, copied)?;
            }
            other => {
                return Err(JsonPatchError::Malformed(format!(
                    "unknown JSON patch operation {other:?}"
                )));
            }
        }
    }
    *doc = work;
    Ok(())
}
