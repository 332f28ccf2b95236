//! Reading objects from files: what `kubectl get -o yaml|json` writes (a `List`, a single
//! object, multi-document YAML), vmctl snapshots, and directories of such files.
//!
//! Cost (issue 9, fleet scale): a file is read once into one `String`, and no file is ever
//! held as a `serde_json::Value` tree. For JSON only the top-level shape is parsed: each item
//! of a List is a borrowed `RawValue`, and vmctl keeps just its byte range in the file text
//! plus a small [`Header`] (name, namespace, labels, newest timestamp) read in one pass over
//! its bytes. Objects are decoded on demand, from their bytes, and only when a query selects
//! them ([`RawFiles::decode`], [`RawFiles::value`]).
//!
//! YAML is read document by document, and a List document item by item: each object is a
//! `Value` only for as long as it takes to write it out as compact JSON, so everything
//! downstream is one representation. serde-saphyr streams the parser's events (serde_yaml 0.9
//! buffered every event of a document first: a 10k-VMI List document of 136 MB cost 2.0 GB), so a
//! YAML file costs its text, its JSON text and one object's tree at a time, List or not.
//! Hostile YAML (alias bombs, deep nesting) is refused within limits proportional to the
//! file's size: [`super::yaml`].
//!
//! The parts: `read.rs` finds and reads the files (directories, symlinks,
//! `--max-input-size`), `json.rs` and `yaml_docs.rs` turn a file's text into entries,
//! `header.rs` reads an object's header in one pass over its bytes, `time.rs` the timestamps
//! among it. This file holds what they share: the entries, the files' text, and the lazy
//! decoding of one object.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde::de::{DeserializeOwned, DeserializeSeed};
use serde_json::Value;

use super::Kind;
use super::selector::LabelSelector;
use super::source::fill_kind;
use crate::error::{Error, Result};

/// The scalar visits of a visitor that answers some scalars alike: `scalars!(value; bool,
/// i64)` writes `visit_bool` and `visit_i64` returning `Ok(value)`.
macro_rules! scalars {
    ($value:expr; $($kind:ident),+) => { $(scalars!(@one $kind $value);)+ };
    (@one str $v:expr) => {
        fn visit_str<E>(self, _: &str) -> std::result::Result<Self::Value, E> { Ok($v) }
    };
    (@one bool $v:expr) => {
        fn visit_bool<E>(self, _: bool) -> std::result::Result<Self::Value, E> { Ok($v) }
    };
    (@one i64 $v:expr) => {
        fn visit_i64<E>(self, _: i64) -> std::result::Result<Self::Value, E> { Ok($v) }
    };
    (@one u64 $v:expr) => {
        fn visit_u64<E>(self, _: u64) -> std::result::Result<Self::Value, E> { Ok($v) }
    };
    (@one f64 $v:expr) => {
        fn visit_f64<E>(self, _: f64) -> std::result::Result<Self::Value, E> { Ok($v) }
    };
    (@one unit $v:expr) => {
        fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> { Ok($v) }
    };
    (@one none $v:expr) => {
        fn visit_none<E>(self) -> std::result::Result<Self::Value, E> { Ok($v) }
    };
}

mod header;
mod json;
mod read;
mod time;
mod yaml_docs;

pub use read::{DEFAULT_MAX_INPUT_BYTES, ReadLimits, read_path, read_raw, read_raw_with};
pub use time::{BadTime, looks_like_timestamp};

use header::{LabelsSeed, RawHeader, parse_header};
use time::TimeNotes;

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

/// One object of a kind vmctl reads, as a `Value` (what [`read_path`] returns: tools such as
/// the fake API server want every object as a tree; vmctl itself reads [`RawFiles`]).
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

/// Everything read from a `--from` path, as trees.
#[derive(Debug, Default)]
pub struct FileObjects {
    pub objects: Vec<RawObject>,
    /// `capturedAt` of a vmctl snapshot, when the files hold one.
    pub captured_at: Option<String>,
    /// `serverVersion` of a vmctl snapshot (the API server's `gitVersion` when it was taken).
    pub server_version: Option<String>,
    /// Kinds that were present but are not read by vmctl (e.g. `Deployment`), for messages.
    pub skipped_kinds: Vec<String>,
}

/// What vmctl knows about an object without decoding it: read once, in one pass over its
/// bytes, when the file is read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Header {
    name: Box<str>,
    namespace: Option<Box<str>>,
    /// Where `metadata.labels` is in the object's text (start, end): a label selector reads
    /// just that slice. Kept as a range, not as strings: labels are most of a header.
    labels: Option<(u32, u32)>,
    /// `metadata.namespace` is there but is not a string: selectors on it read the object.
    odd_namespace: bool,
    /// The newest RFC 3339 UTC timestamp (`2026-11-29T03:00:00Z`) among the object's
    /// time fields.
    newest: Option<[u8; 20]>,
    /// The first time field whose value is not a time (said as a warning).
    bad_time: Option<Box<BadTime>>,
}

impl Header {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// Whether `metadata.namespace` holds something other than a string.
    pub fn odd_namespace(&self) -> bool {
        self.odd_namespace
    }

    /// The first time field whose value is not an RFC 3339 time.
    pub fn bad_time(&self) -> Option<&BadTime> {
        self.bad_time.as_deref()
    }

    /// The newest timestamp string among the object's values.
    pub fn newest_timestamp(&self) -> Option<&str> {
        self.newest
            .as_ref()
            .and_then(|b| std::str::from_utf8(b).ok())
    }
}

/// One object of a kind vmctl reads: where its text is, and its header.
#[derive(Debug, Clone)]
pub struct Entry {
    pub kind: Kind,
    file: u32,
    document: u32,
    start: usize,
    end: usize,
    pub header: Header,
}

impl Entry {
    pub fn name(&self) -> &str {
        self.header.name()
    }

    pub fn namespace(&self) -> Option<&str> {
        self.header.namespace()
    }
}

/// The text of one file, as JSON (a YAML file's objects are rewritten as compact JSON).
#[derive(Debug)]
struct FileText {
    path: PathBuf,
    text: String,
}

/// Everything read from a `--from` path: the files' text and one [`Entry`] per object.
#[derive(Debug, Default)]
pub struct RawFiles {
    files: Vec<FileText>,
    pub entries: Vec<Entry>,
    /// `capturedAt` of a vmctl snapshot, when the files hold one.
    pub captured_at: Option<String>,
    /// `serverVersion` of a vmctl snapshot (the API server's `gitVersion` when it was taken).
    pub server_version: Option<String>,
    /// Kinds that were present but are not read by vmctl (e.g. `Deployment`), for messages.
    pub skipped_kinds: Vec<String>,
    /// `scope.leftOut` of a vmctl snapshot: what its capture left out (`snapshot -n NS`).
    pub left_out: Vec<String>,
    /// Files of a directory that hold no Kubernetes object ([`Parsed::NotKubernetes`]),
    /// skipped; and how many .yaml/.yml/.json files the directory held.
    pub skipped_files: Vec<PathBuf>,
    pub object_files: usize,
}

impl RawFiles {
    /// The JSON text of an object.
    pub fn text(&self, entry: &Entry) -> &str {
        self.files
            .get(entry.file as usize)
            .and_then(|f| f.text.get(entry.start..entry.end))
            .unwrap_or("null")
    }

    pub fn origin(&self, entry: &Entry) -> Origin {
        Origin {
            file: self
                .files
                .get(entry.file as usize)
                .map(|f| f.path.clone())
                .unwrap_or_default(),
            document: entry.document as usize,
        }
    }

    /// `metadata.labels` of an object: keys with their string values (`None` for a value
    /// that is not a string; a later duplicate key replaces an earlier one, as in a `Value`).
    pub fn labels(&self, entry: &Entry) -> Vec<(Cow<'_, str>, Option<Cow<'_, str>>)> {
        let mut labels = Vec::new();
        if let Some((start, end)) = entry.header.labels {
            let text = self
                .text(entry)
                .get(start as usize..end as usize)
                .unwrap_or("null");
            let mut de = serde_json::Deserializer::from_str(text);
            // The text was checked when it was read.
            if LabelsSeed(&mut labels, &mut TimeNotes::default())
                .deserialize(&mut de)
                .is_err()
            {
                labels.clear();
            }
        }
        labels
    }

    /// Whether an object's labels satisfy a selector.
    pub fn matches_labels(&self, entry: &Entry, selector: &LabelSelector) -> bool {
        if selector.is_empty() {
            return true;
        }
        let labels = self.labels(entry);
        selector.matches_with(|key| {
            labels
                .iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, v)| v.as_deref())
        })
    }

    /// `file: Kind namespace/name`, for decode errors.
    pub fn describe(&self, entry: &Entry) -> String {
        let label = match entry.namespace() {
            Some(ns) => format!("{} {ns}/{}", entry.kind, entry.name()),
            None => format!("{} {}", entry.kind, entry.name()),
        };
        format!("{}: {label}", self.origin(entry))
    }

    /// The object as a tree, with `kind` and `apiVersion` filled in where a built-in List
    /// left them out.
    pub fn value(&self, entry: &Entry) -> Result<Value> {
        let mut value: Value = serde_json::from_str(self.text(entry))
            .map_err(|e| Error::bad_input(self.describe(entry), json_message(&e)))?;
        fill_kind(entry.kind, &mut value);
        Ok(value)
    }

    /// Decodes the object straight from its bytes. The model types do not read `kind` or
    /// `apiVersion` (k8s-openapi only checks them when present), so nothing is filled in.
    pub fn decode<T: DeserializeOwned>(&self, entry: &Entry) -> Result<T> {
        super::decode::from_str(self.text(entry))
            .map_err(|message| Error::bad_input(self.describe(entry), message))
    }

    /// Every object as a tree, in file order (the fake API server loads files this way).
    pub fn into_objects(self) -> Result<FileObjects> {
        let objects = self
            .entries
            .iter()
            .map(|e| Ok(RawObject::new(e.kind, self.value(e)?, self.origin(e))))
            .collect::<Result<Vec<_>>>()?;
        Ok(FileObjects {
            objects,
            captured_at: self.captured_at,
            server_version: self.server_version,
            skipped_kinds: self.skipped_kinds,
        })
    }

    /// Splits off the entries, keeping the texts they point into.
    pub fn take_entries(&mut self) -> Vec<Entry> {
        std::mem::take(&mut self.entries)
    }

    fn add_entries(&mut self, entries: Vec<Entry>) {
        if self.entries.is_empty() {
            // The first file's entries: no copy.
            self.entries = entries;
        } else {
            self.entries.extend(entries);
        }
    }

    fn file_index(&self) -> Result<u32> {
        u32::try_from(self.files.len()).map_err(|_| Error::bad_input("--from", "too many files"))
    }
}

/// A serde_json error without the " at line X column Y" it appends: for an object decoded
/// from its own bytes that location means nothing to the reader; the prefix names the object.
fn json_message(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match message.strip_suffix(&suffix) {
        Some(m) => m.to_string(),
        None => message,
    }
}

/// "an Event", "a Pod".
fn article(word: &str) -> &'static str {
    match word.chars().next() {
        Some('A' | 'E' | 'I' | 'O' | 'U' | 'a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

/// `scope.leftOut` of a vmctl snapshot: the sentences its capture wrote about what it left
/// out (`vmctl snapshot -n NS`, `--node`); anything else there is ignored.
fn left_out(scope: Option<&Value>) -> Vec<String> {
    scope
        .and_then(|s| s.get("leftOut"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// The `kind` vmctl writes at the top of its own snapshot files.
pub const SNAPSHOT_KIND: &str = "Snapshot";

/// What reading one file's text came to.
#[derive(Debug)]
pub(super) enum Parsed {
    /// Its objects are in `found` (none, for an empty file).
    Read,
    /// Nothing in it is a Kubernetes object, nor looks like one: not a document vmctl (or
    /// kubectl) would write. Nothing of it was kept; the error is what it is when the file is
    /// named alone (`--from file.yaml`). In a directory the file is skipped with a warning:
    /// a must-gather holds such files beside its dumps (config, notes, plain lists).
    ///
    /// "Looks like Kubernetes": a document (a mapping) with `apiVersion`, `kind`, `items` or
    /// `metadata`. A file with one such document is read, and a broken object in it (no
    /// `kind`, no `metadata.name`, a field of the wrong type) stays an error naming the file
    /// and the field: skipping it would silently drop what the operator captured. So does a
    /// file that is not valid YAML/JSON at all: it cannot be told from a truncated dump.
    NotKubernetes(Error),
}

/// Parses one file's text (JSON or YAML, one or many documents); keeps the text.
pub fn parse_text_into(path: &Path, text: String, found: &mut RawFiles) -> Result<()> {
    match parse_text(path, text, found)? {
        Parsed::Read => Ok(()),
        Parsed::NotKubernetes(e) => Err(e),
    }
}

/// [`parse_text_into`], telling a file with no Kubernetes object in it apart.
pub(super) fn parse_text(path: &Path, text: String, found: &mut RawFiles) -> Result<Parsed> {
    let is_json = path.extension().and_then(|e| e.to_str()) == Some("json");
    if is_json || text.trim_start().starts_with('{') {
        json::parse_json_into(path, text, found)
    } else {
        yaml_docs::parse_yaml_into(path, &text, found)
    }
}

/// The entries of a List's items, given as byte ranges of `text`.
fn list_entries(
    list_kind_name: &str,
    items: &[(usize, usize)],
    text: &str,
    file: u32,
    document: u32,
    origin: &Origin,
    found: &mut RawFiles,
) -> Result<Vec<Entry>> {
    // Built-in lists (PodList…) omit each item's kind; the List's own kind names it.
    let list_kind = Kind::from_kind_name(list_kind_name);
    let mut entries = Vec::with_capacity(items.len());
    for (i, &(start, end)) in items.iter().enumerate() {
        let item = text.get(start..end).unwrap_or("null");
        let header = parse_header(item, origin)?;
        let item_kind = header.kind.as_deref();
        let resolved = match item_kind {
            Some(k) => Kind::from_kind_name(k),
            None => list_kind,
        };
        match (resolved, item_kind) {
            (Some(k), _) => {
                entries.push(make_entry(
                    k,
                    header,
                    item,
                    (file, document),
                    (start, end),
                    origin,
                )?);
            }
            (None, Some(other)) => found.skipped_kinds.push(other.to_string()),
            (None, None) => {
                return Err(Error::bad_input(
                    origin,
                    format!("items[{i}] has no `kind` and the List does not say it"),
                ));
            }
        }
    }
    Ok(entries)
}

/// Checks what every object needs and keeps its header.
fn make_entry(
    kind: Kind,
    header: RawHeader<'_>,
    text: &str,
    (file, document): (u32, u32),
    (start, end): (usize, usize),
    origin: &Origin,
) -> Result<Entry> {
    if !header.is_object {
        return Err(Error::bad_input(
            origin,
            format!("{} {kind} item is not an object", article(kind.name())),
        ));
    }
    let Some(name) = header.name else {
        return Err(Error::bad_input(
            origin,
            format!("{} {kind} has no metadata.name", article(kind.name())),
        ));
    };
    Ok(Entry {
        kind,
        file,
        document,
        start,
        end,
        header: Header {
            name: name.into(),
            namespace: header.namespace.map(Into::into),
            labels: header.labels.and_then(|l| {
                let start = (l.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
                let end = start + l.len();
                (end <= text.len())
                    .then_some((u32::try_from(start).ok()?, u32::try_from(end).ok()?))
            }),
            odd_namespace: header.odd_namespace,
            newest: header.newest.newest,
            bad_time: header.newest.bad,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// The files' tests read text through here (json.rs, yaml_docs.rs, header.rs too).
    pub(super) fn parse(name: &str, text: &str) -> Result<RawFiles> {
        let mut found = RawFiles::default();
        parse_text_into(Path::new(name), text.to_string(), &mut found)?;
        Ok(found)
    }

    #[test]
    fn reads_a_list_whose_items_omit_kind() {
        let found = parse(
            "pods.json",
            r#"{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a","namespace":"x"}}]}"#,
        )
        .unwrap();
        assert_eq!(found.entries.len(), 1);
        assert_eq!(found.entries[0].kind, Kind::Pod);
        let value = found.value(&found.entries[0]).unwrap();
        assert_eq!(value["apiVersion"], "v1");
        assert_eq!(value["kind"], "Pod");
        // The tree view (the fake API server's) fills them in too.
        let objects = found.into_objects().unwrap();
        assert_eq!(objects.objects[0].value["kind"], "Pod");
    }

    #[test]
    fn a_scalar_document_is_rejected() {
        let err = parse("s.yaml", "just text\n").unwrap_err();
        assert!(err.to_string().contains("found a string"), "{err}");
        let err = parse("s.json", "[1, 2]").unwrap_err();
        assert!(err.to_string().contains("found a list"), "{err}");
        let err = parse("s.json", r#"{"kind": "List", "items": {"a": 1}}"#).unwrap_err();
        assert!(err.to_string().contains("`items` is not a list"), "{err}");
        assert!(parse("s.json", "null").unwrap().entries.is_empty());
    }

    #[test]
    fn an_object_without_a_name_or_not_an_object_is_rejected() {
        let err = parse(
            "n.json",
            r#"{"kind": "PodList", "items": [{"metadata": {"name": 3}}]}"#,
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("a Pod has no metadata.name"),
            "{err}"
        );
        let err = parse("n.json", r#"{"kind": "PodList", "items": ["pod"]}"#).unwrap_err();
        assert!(
            err.to_string().contains("a Pod item is not an object"),
            "{err}"
        );
        let err = parse("n.json", r#"{"kind": "List", "items": [{"metadata": {}}]}"#).unwrap_err();
        assert!(err.to_string().contains("items[0] has no `kind`"), "{err}");
    }

    #[test]
    fn vmctl_snapshot_keeps_capture_time() {
        let text = "apiVersion: vmctl/v1alpha1\nkind: Snapshot\ncapturedAt: '2026-11-29T03:00:00Z'\nitems:\n- {kind: Node, apiVersion: v1, metadata: {name: n}}\n";
        let found = parse("s.yaml", text).unwrap();
        assert_eq!(found.captured_at.as_deref(), Some("2026-11-29T03:00:00Z"));
        assert_eq!(found.entries.len(), 1);
        let json = r#"{"apiVersion":"vmctl/v1alpha1","kind":"Snapshot","capturedAt":"2026-11-29T03:00:00Z","items":[{"kind":"Node","apiVersion":"v1","metadata":{"name":"n"}}]}"#;
        let found = parse("s.json", json).unwrap();
        assert_eq!(found.captured_at.as_deref(), Some("2026-11-29T03:00:00Z"));
    }

    #[test]
    fn decode_error_names_file_and_object_without_a_byte_location() {
        #[derive(Debug, Deserialize)]
        struct Spec {
            #[allow(dead_code)]
            replicas: u32,
        }
        #[derive(Debug, Deserialize)]
        struct Thing {
            #[allow(dead_code)]
            spec: Spec,
        }
        let found = parse(
            "dir/pods.json",
            r#"{"kind":"PodList","items":[{"metadata":{"name":"a","namespace":"x"},"spec":{"replicas":"many"}}]}"#,
        )
        .unwrap();
        let err = found.decode::<Thing>(&found.entries[0]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "dir/pods.json: Pod x/a: spec.replicas: invalid type: string \"many\", expected a whole number"
        );
    }
}
