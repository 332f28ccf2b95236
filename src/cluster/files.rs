//! Reading objects from files: what `kubectl get -o yaml|json` writes (a `List`, a single
//! object, multi-document YAML), vmctl snapshots, and directories of such files.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::Kind;
use crate::error::{Error, Result};

/// Where an object was read from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub file: PathBuf,
    /// 1-based document number within a multi-document YAML file.
    pub document: usize,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.document > 1 {
            write!(f, "{} (document {})", self.file.display(), self.document)
        } else {
            write!(f, "{}", self.file.display())
        }
    }
}

/// One object of a kind vmctl reads, as found in a file.
#[derive(Debug, Clone)]
pub struct RawObject {
    pub kind: Kind,
    pub value: Value,
    pub origin: Origin,
    // Kept apart: sorting and lookups read them many times.
    name: String,
    namespace: Option<String>,
}

impl RawObject {
    pub fn new(kind: Kind, value: Value, origin: Origin) -> Self {
        let meta = value.get("metadata");
        let field = |k: &str| {
            meta.and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        RawObject {
            kind,
            name: field("name").unwrap_or_default(),
            namespace: field("namespace"),
            value,
            origin,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }
}

/// Everything read from a `--from` path.
#[derive(Debug, Default)]
pub struct FileObjects {
    pub objects: Vec<RawObject>,
    /// `capturedAt` of a vmctl snapshot, when the files hold one.
    pub captured_at: Option<String>,
    /// Kinds that were present but are not read by vmctl (e.g. `Deployment`), for messages.
    pub skipped_kinds: Vec<String>,
}

/// The `kind` vmctl writes at the top of its own snapshot files.
pub const SNAPSHOT_KIND: &str = "Snapshot";
pub const VMCTL_API_VERSION: &str = "vmctl/v1alpha1";

fn is_object_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = fs::read_dir(dir)
        .map_err(|e| Error::bad_input(dir.display(), format!("cannot read directory: {e}")))?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            collect_files(&path, out)?;
        } else if is_object_file(&path) {
            out.push(path);
        }
    }
    Ok(())
}

/// Reads a file or, recursively, a directory of YAML/JSON files.
pub fn read_path(path: &Path) -> Result<FileObjects> {
    let meta = fs::metadata(path)
        .map_err(|e| Error::bad_input(path.display(), format!("cannot read: {}", io_reason(&e))))?;
    let mut found = FileObjects::default();
    if meta.is_dir() {
        let mut files = Vec::new();
        collect_files(path, &mut files)?;
        if files.is_empty() {
            return Err(Error::bad_input(
                path.display(),
                "directory holds no .yaml, .yml or .json file",
            ));
        }
        for file in &files {
            read_file_into(file, &mut found)?;
        }
        if found.objects.is_empty() {
            return Err(Error::bad_input(
                path.display(),
                format!(
                    "no object of a kind vmctl reads in {} file(s){}",
                    files.len(),
                    skipped_note(&found)
                ),
            ));
        }
    } else {
        read_file_into(path, &mut found)?;
        if found.objects.is_empty() {
            return Err(Error::bad_input(
                path.display(),
                format!("no object of a kind vmctl reads{}", skipped_note(&found)),
            ));
        }
    }
    Ok(found)
}

fn skipped_note(found: &FileObjects) -> String {
    if found.skipped_kinds.is_empty() {
        String::new()
    } else {
        let mut kinds = found.skipped_kinds.clone();
        kinds.sort();
        kinds.dedup();
        format!(" (found only {})", kinds.join(", "))
    }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

/// Parses one file's text (JSON or YAML, one or many documents).
pub fn read_file_into(path: &Path, found: &mut FileObjects) -> Result<()> {
    let text = fs::read_to_string(path)
        .map_err(|e| Error::bad_input(path.display(), format!("cannot read: {}", io_reason(&e))))?;
    parse_text_into(path, &text, found)
}

pub fn parse_text_into(path: &Path, text: &str, found: &mut FileObjects) -> Result<()> {
    let is_json = path.extension().and_then(|e| e.to_str()) == Some("json");
    if is_json || text.trim_start().starts_with('{') {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            Error::bad_input(
                format!("{}:{}:{}", path.display(), e.line(), e.column()),
                format!("invalid JSON: {}", strip_location(&e.to_string())),
            )
        })?;
        let origin = Origin {
            file: path.to_path_buf(),
            document: 1,
        };
        return add_document(value, &origin, found);
    }
    for (index, document) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let value = Value::deserialize(document).map_err(|e| {
            let at = match e.location() {
                Some(loc) => format!("{}:{}:{}", path.display(), loc.line(), loc.column()),
                None => path.display().to_string(),
            };
            Error::bad_input(
                at,
                format!("invalid YAML: {}", strip_location(&e.to_string())),
            )
        })?;
        let origin = Origin {
            file: path.to_path_buf(),
            document: index + 1,
        };
        add_document(value, &origin, found)?;
    }
    Ok(())
}

/// serde errors end with " at line X column Y"; the location is already in the prefix.
fn strip_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

fn add_document(value: Value, origin: &Origin, found: &mut FileObjects) -> Result<()> {
    let mut obj = match value {
        Value::Null => return Ok(()),
        Value::Object(map) => map,
        other => {
            return Err(Error::bad_input(
                origin,
                format!(
                    "expected a Kubernetes object or List, found {}",
                    json_type(&other)
                ),
            ));
        }
    };
    let kind = obj
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if let Some(items) = obj.remove("items") {
        let Value::Array(items) = items else {
            return Err(Error::bad_input(origin, "`items` is not a list"));
        };
        if kind == SNAPSHOT_KIND
            && let Some(at) = obj.get("capturedAt").and_then(Value::as_str)
        {
            found.captured_at = Some(at.to_string());
        }
        // Built-in lists (PodList…) omit each item's kind; the List's own kind names it.
        let list_kind = Kind::from_kind_name(&kind);
        for (i, item) in items.into_iter().enumerate() {
            let item_kind = item.get("kind").and_then(Value::as_str);
            let resolved = match item_kind {
                Some(k) => Kind::from_kind_name(k),
                None => list_kind,
            };
            match (resolved, item_kind) {
                (Some(k), _) => push_object(k, item, origin, found)?,
                (None, Some(other)) => found.skipped_kinds.push(other.to_string()),
                (None, None) => {
                    return Err(Error::bad_input(
                        origin,
                        format!("items[{i}] has no `kind` and the List does not say it"),
                    ));
                }
            }
        }
        return Ok(());
    }
    if kind.is_empty() {
        return Err(Error::bad_input(
            origin,
            "document has neither `kind` nor `items`: not a Kubernetes object or List",
        ));
    }
    match Kind::from_kind_name(&kind) {
        Some(k) => push_object(k, Value::Object(obj), origin, found),
        None => {
            found.skipped_kinds.push(kind);
            Ok(())
        }
    }
}

fn push_object(kind: Kind, value: Value, origin: &Origin, found: &mut FileObjects) -> Result<()> {
    if !value.is_object() {
        return Err(Error::bad_input(
            origin,
            format!("a {kind} item is not an object"),
        ));
    }
    if value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .is_none()
    {
        return Err(Error::bad_input(
            origin,
            format!("a {kind} has no metadata.name"),
        ));
    }
    let mut value = value;
    // Fill in what built-in lists leave out, so every object reads the same downstream.
    if let Value::Object(map) = &mut value {
        map.entry("kind")
            .or_insert_with(|| Value::String(kind.name().to_string()));
        map.entry("apiVersion")
            .or_insert_with(|| Value::String(kind.api_version()));
    }
    found
        .objects
        .push(RawObject::new(kind, value, origin.clone()));
    Ok(())
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(name: &str, text: &str) -> Result<FileObjects> {
        let mut found = FileObjects::default();
        parse_text_into(Path::new(name), text, &mut found)?;
        Ok(found)
    }

    #[test]
    fn reads_a_list_whose_items_omit_kind() {
        let found = parse(
            "pods.json",
            r#"{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a","namespace":"x"}}]}"#,
        )
        .unwrap();
        assert_eq!(found.objects.len(), 1);
        assert_eq!(found.objects[0].kind, Kind::Pod);
        assert_eq!(found.objects[0].value["apiVersion"], "v1");
    }

    #[test]
    fn reads_multi_document_yaml_and_skips_foreign_kinds() {
        let text = "kind: Node\napiVersion: v1\nmetadata: {name: n1}\n---\nkind: Deployment\nmetadata: {name: d}\n---\n";
        let found = parse("x.yaml", text).unwrap();
        assert_eq!(found.objects.len(), 1);
        assert_eq!(found.skipped_kinds, vec!["Deployment".to_string()]);
    }

    #[test]
    fn malformed_yaml_names_file_and_line() {
        let err = parse("bad.yaml", "kind: Node\nmetadata:\n  name: [unclosed\n").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("bad.yaml:"), "{text}");
        assert!(text.contains("invalid YAML"), "{text}");
    }

    #[test]
    fn malformed_json_names_line_and_column() {
        let err = parse("bad.json", "{\n \"kind\": \"Node\",,\n}").unwrap_err();
        assert!(err.to_string().starts_with("bad.json:2:"), "{err}");
    }

    #[test]
    fn a_scalar_document_is_rejected() {
        let err = parse("s.yaml", "just text\n").unwrap_err();
        assert!(err.to_string().contains("found a string"), "{err}");
    }

    #[test]
    fn vmctl_snapshot_keeps_capture_time() {
        let text = "apiVersion: vmctl/v1alpha1\nkind: Snapshot\ncapturedAt: '2026-11-29T03:00:00Z'\nitems:\n- {kind: Node, apiVersion: v1, metadata: {name: n}}\n";
        let found = parse("s.yaml", text).unwrap();
        assert_eq!(found.captured_at.as_deref(), Some("2026-11-29T03:00:00Z"));
        assert_eq!(found.objects.len(), 1);
    }
}
