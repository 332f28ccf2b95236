//! Reading objects from files: what `kubectl get -o yaml|json` writes (a `List`, a single
//! object, multi-document YAML), vmctl snapshots, and directories of such files.
//!
//! Cost (issue 9, fleet scale): a file is read once into one `String`, and no file is ever
//! held as a `serde_json::Value` tree. For JSON only the top-level shape is parsed: each item
//! of a List is a borrowed [`RawValue`], and vmctl keeps just its byte range in the file text
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

use std::borrow::Cow;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use k8s_openapi::jiff::Timestamp;
use serde::Deserializer;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

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

/// The `kind` vmctl writes at the top of its own snapshot files.
pub const SNAPSHOT_KIND: &str = "Snapshot";

fn is_object_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

/// How much `--from` may read: the whole input, in bytes (`--max-input-size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    pub max_bytes: u64,
}

/// 2 GiB: a 100k-VMI fleet as compact JSON is about 1.1 GB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 2 << 30;

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            max_bytes: DEFAULT_MAX_INPUT_BYTES,
        }
    }
}

/// What a path is, when it is not a regular file or a directory.
fn special_kind(meta: &fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    let _ = meta;
    "not a regular file"
}

fn not_regular(path: &Path, meta: &fs::Metadata) -> Error {
    Error::bad_input(
        path.display(),
        format!(
            "{}: vmctl reads only regular files and directories",
            special_kind(meta)
        ),
    )
}

/// Directories and files already visited, by canonical path: a second way to the same
/// directory or file (`self -> .`, `again.yaml -> vmis.yaml`) is read once, and a symlinked
/// directory is followed only when it stays inside the directory named by --from (so
/// `loop -> ..` is neither a loop nor a way out).
#[derive(Default)]
struct Visited {
    root: PathBuf,
    dirs: std::collections::HashSet<PathBuf>,
    files: std::collections::HashSet<PathBuf>,
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>, visited: &mut Visited) -> Result<()> {
    let entries = fs::read_dir(dir)
        .map_err(|e| Error::bad_input(dir.display(), format!("cannot read directory: {e}")))?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        // Follows symlinks; a dangling one matters only when it names an object file.
        let Ok(meta) = fs::metadata(&path) else {
            if is_object_file(&path) {
                return Err(Error::bad_input(
                    path.display(),
                    "cannot read: a symlink to nothing",
                ));
            }
            continue;
        };
        if meta.is_dir() {
            let canonical = fs::canonicalize(&path).map_err(|e| {
                Error::bad_input(path.display(), format!("cannot read: {}", io_reason(&e)))
            })?;
            if canonical.starts_with(&visited.root) && visited.dirs.insert(canonical) {
                collect_files(&path, out, visited)?;
            }
        } else if is_object_file(&path) {
            if !meta.is_file() {
                return Err(not_regular(&path, &meta));
            }
            let canonical = fs::canonicalize(&path).map_err(|e| {
                Error::bad_input(path.display(), format!("cannot read: {}", io_reason(&e)))
            })?;
            if visited.files.insert(canonical) {
                out.push(path);
            }
        }
    }
    Ok(())
}

/// Reads a file or, recursively, a directory of YAML/JSON files, every object as a tree.
pub fn read_path(path: &Path) -> Result<FileObjects> {
    read_raw(path)?.into_objects()
}

/// [`read_raw_with`] the default limits.
pub fn read_raw(path: &Path) -> Result<RawFiles> {
    read_raw_with(path, ReadLimits::default())
}

/// Reads a file or, recursively, a directory of YAML/JSON files: their text, and an entry
/// per object. Only regular files are read (a FIFO or a device is refused, not waited on),
/// each file once however many symlinks lead to it, and no more than `limits.max_bytes` in all.
pub fn read_raw_with(path: &Path, limits: ReadLimits) -> Result<RawFiles> {
    let meta = fs::metadata(path)
        .map_err(|e| Error::bad_input(path.display(), format!("cannot read: {}", io_reason(&e))))?;
    let mut found = RawFiles::default();
    let mut budget = limits.max_bytes;
    if meta.is_dir() {
        let mut files = Vec::new();
        let mut visited = Visited::default();
        let root = fs::canonicalize(path).map_err(|e| {
            Error::bad_input(path.display(), format!("cannot read: {}", io_reason(&e)))
        })?;
        visited.dirs.insert(root.clone());
        visited.root = root;
        collect_files(path, &mut files, &mut visited)?;
        if files.is_empty() {
            return Err(Error::bad_input(
                path.display(),
                "directory holds no .yaml, .yml or .json file",
            ));
        }
        for file in &files {
            read_limited_into(file, &mut found, &mut budget, limits)?;
        }
        if found.entries.is_empty() {
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
        if !meta.is_file() {
            return Err(not_regular(path, &meta));
        }
        read_limited_into(path, &mut found, &mut budget, limits)?;
        if found.entries.is_empty() {
            return Err(Error::bad_input(
                path.display(),
                format!("no object of a kind vmctl reads{}", skipped_note(&found)),
            ));
        }
    }
    Ok(found)
}

fn too_large(path: &Path, limits: ReadLimits) -> Error {
    Error::bad_input(
        path.display(),
        format!(
            "the input is larger than {} in all: vmctl stops reading there (raise the limit with --max-input-size, e.g. --max-input-size 8Gi)",
            crate::text::bytes(limits.max_bytes)
        ),
    )
}

/// Reads one regular file, at most `budget` bytes (what is left of the limit).
fn read_limited_into(
    path: &Path,
    found: &mut RawFiles,
    budget: &mut u64,
    limits: ReadLimits,
) -> Result<()> {
    use std::io::Read;
    let cannot = |e: std::io::Error| {
        Error::bad_input(path.display(), format!("cannot read: {}", io_reason(&e)))
    };
    let file = fs::File::open(path).map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    if meta.len() > *budget {
        return Err(too_large(path, limits));
    }
    // The exact size up front, as fs::read_to_string does: growing by doubling would cost up
    // to twice the file at the peak (measured: 10k VMIs, 343 MB RSS instead of 245 MB).
    let mut text = String::new();
    text.try_reserve_exact(
        usize::try_from(meta.len())
            .unwrap_or(usize::MAX)
            .saturating_add(1),
    )
    .map_err(|e| Error::bad_input(path.display(), format!("cannot read: {e}")))?;
    let read = file
        .take(budget.saturating_add(1))
        .read_to_string(&mut text)
        .map_err(cannot)? as u64;
    if read > *budget {
        return Err(too_large(path, limits));
    }
    *budget -= read;
    parse_text_into(path, text, found)
}

fn skipped_note(found: &RawFiles) -> String {
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

/// Parses one file's text (JSON or YAML, one or many documents); keeps the text.
pub fn parse_text_into(path: &Path, text: String, found: &mut RawFiles) -> Result<()> {
    let is_json = path.extension().and_then(|e| e.to_str()) == Some("json");
    if is_json || text.trim_start().starts_with('{') {
        parse_json_into(path, text, found)
    } else {
        parse_yaml_into(path, &text, found)
    }
}

// ---------------------------------------------------------------------------------------
// JSON: the top-level shape with borrowed items, then one header pass per item.

fn parse_json_into(path: &Path, text: String, found: &mut RawFiles) -> Result<()> {
    let file = found.file_index()?;
    let origin = Origin {
        file: path.to_path_buf(),
        document: 1,
    };
    let top = {
        let mut de = serde_json::Deserializer::from_str(&text);
        let top = TopSeed
            .deserialize(&mut de)
            .and_then(|top| de.end().map(|()| top));
        top.map_err(|e| {
            Error::bad_input(
                format!("{}:{}:{}", path.display(), e.line(), e.column()),
                format!("invalid JSON: {}", strip_location(&e.to_string())),
            )
        })?
    };
    let base = text.as_ptr() as usize;
    let span_of = |s: &str| {
        let start = (s.as_ptr() as usize).wrapping_sub(base);
        (start, start + s.len())
    };
    let mut entries = Vec::new();
    match top {
        Top::Null => {}
        Top::Other(what) => {
            return Err(Error::bad_input(
                &origin,
                format!("expected a Kubernetes object or List, found {what}"),
            ));
        }
        Top::Object {
            kind,
            captured_at,
            server_version,
            items: Some(items),
        } => {
            let Items::List(items) = items else {
                return Err(Error::bad_input(&origin, "`items` is not a list"));
            };
            let kind = kind.as_deref().unwrap_or("");
            if kind == SNAPSHOT_KIND {
                if let Some(at) = captured_at {
                    found.captured_at = Some(at.into_owned());
                }
                if let Some(v) = server_version {
                    found.server_version = Some(v.into_owned());
                }
            }
            let spans: Vec<(usize, usize)> = items.iter().map(|item| span_of(item.get())).collect();
            drop(items);
            entries = list_entries(kind, &spans, &text, file, 1, &origin, found)?;
        }
        Top::Object {
            kind, items: None, ..
        } => {
            let kind = kind.map(Cow::into_owned).unwrap_or_default();
            if kind.is_empty() {
                return Err(Error::bad_input(
                    &origin,
                    "document has neither `kind` nor `items`: not a Kubernetes object or List",
                ));
            }
            match Kind::from_kind_name(&kind) {
                Some(k) => {
                    let whole = text.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
                    let header = parse_header(whole, &origin)?;
                    let (start, end) = span_of(whole);
                    entries.push(make_entry(
                        k,
                        header,
                        whole,
                        (file, 1),
                        (start, end),
                        &origin,
                    )?);
                }
                None => found.skipped_kinds.push(kind),
            }
        }
    }
    found.add_entries(entries);
    found.files.push(FileText {
        path: path.to_path_buf(),
        text,
    });
    Ok(())
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

// ---------------------------------------------------------------------------------------
// YAML: serde-saphyr streams each document's events; each object is written out as compact
// JSON as soon as it is read (limits and dialect: super::yaml).

/// The first character YAML does not allow raw (C0 controls but tab, LF and CR; DEL; C1
/// controls but NEL), as (line, column, char), named before the parser sees it.
fn forbidden_control(text: &str) -> Option<(usize, usize, char)> {
    let mut line = 1;
    let mut column = 1;
    for c in text.chars() {
        let forbidden = match c {
            '\t' | '\n' | '\r' | '\u{85}' | '\u{feff}' => false,
            c => c.is_control(),
        };
        if forbidden {
            return Some((line, column, c));
        }
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    None
}

/// The stack YAML is parsed on. serde-saphyr and serde_json's `Value` recurse once per level
/// of nesting, about 20 kB a level in a debug build: the [`super::yaml::MAX_DEPTH`] levels the
/// limits let through need ~2 MB, as much as a test thread or a tokio worker has, and a stack
/// overflow aborts the process. Only what is touched of it is ever memory.
const YAML_STACK: usize = 16 << 20;

fn parse_yaml_into(path: &Path, text: &str, found: &mut RawFiles) -> Result<()> {
    if let Some((line, column, c)) = forbidden_control(text) {
        return Err(Error::bad_input(
            format!("{}:{line}:{column}", path.display()),
            format!(
                "invalid YAML: control character U+{:04X} (YAML allows it only escaped in a double-quoted string, e.g. \"\\u{:04x}\")",
                c as u32, c as u32
            ),
        ));
    }
    let file = found.file_index()?;
    let parse = || {
        serde_saphyr::from_str_multiple_with_options::<YamlDoc, YamlStream>(
            text,
            super::yaml::read_options(text.len()),
        )
        .map_err(|e| super::yaml::describe_error(&e))
    };
    // Its own thread, with room for the deepest nesting the limits let through (below).
    let parsed = std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("yaml".into())
            .stack_size(YAML_STACK)
            .spawn_scoped(scope, parse)
        {
            Ok(thread) => thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: the caller's stack (vmctl's main thread has 8 MiB).
            Err(_) => parse(),
        }
    });
    let YamlStream { mut json, docs } = parsed.map_err(|(location, message)| {
        let at = match location {
            Some((line, column)) => format!("{}:{line}:{column}", path.display()),
            None => path.display().to_string(),
        };
        Error::bad_input(
            at,
            format!("invalid YAML: {}", super::decode::shorten(&message)),
        )
    })?;
    let mut entries = Vec::new();
    // Documents are numbered as serde-saphyr hands them over: empty ones are not counted.
    for (index, doc) in docs.into_iter().enumerate() {
        let origin = Origin {
            file: path.to_path_buf(),
            document: index + 1,
        };
        let document = u32::try_from(index + 1)
            .map_err(|_| Error::bad_input(&origin, "too many documents"))?;
        match doc {
            Doc::List { top, items } => {
                let Some(items) = items else {
                    return Err(Error::bad_input(&origin, "`items` is not a list"));
                };
                let kind = top.get("kind").and_then(Value::as_str).unwrap_or("");
                if kind == SNAPSHOT_KIND {
                    if let Some(at) = top.get("capturedAt").and_then(Value::as_str) {
                        found.captured_at = Some(at.to_string());
                    }
                    if let Some(v) = top.get("serverVersion").and_then(Value::as_str) {
                        found.server_version = Some(v.to_string());
                    }
                }
                let more = list_entries(kind, &items, &json, file, document, &origin, found)?;
                entries.extend(more);
            }
            Doc::Object {
                kind,
                range: (start, end),
            } => {
                let object = json.get(start..end).unwrap_or("null");
                let header = parse_header(object, &origin)?;
                entries.push(make_entry(
                    kind,
                    header,
                    object,
                    (file, document),
                    (start, end),
                    &origin,
                )?);
            }
            Doc::Skipped(kind) => found.skipped_kinds.push(kind),
            Doc::Null => {}
            Doc::NoKind => {
                return Err(Error::bad_input(
                    &origin,
                    "document has neither `kind` nor `items`: not a Kubernetes object or List",
                ));
            }
            Doc::NotObject(what) => {
                return Err(Error::bad_input(
                    &origin,
                    format!("expected a Kubernetes object or List, found {what}"),
                ));
            }
        }
    }
    found.add_entries(entries);
    json.shrink_to_fit();
    found.files.push(FileText {
        path: path.to_path_buf(),
        text: json,
    });
    Ok(())
}

/// A file's YAML documents: their objects' JSON text, one after the other, and what each
/// document held. serde-saphyr collects the documents into it one at a time, so only one
/// document's JSON is ever apart from the rest.
#[derive(Debug, Default)]
struct YamlStream {
    json: String,
    docs: Vec<Doc>,
}

impl Extend<YamlDoc> for YamlStream {
    fn extend<I: IntoIterator<Item = YamlDoc>>(&mut self, docs: I) {
        for YamlDoc { json, mut doc } in docs {
            let offset = self.json.len();
            if offset == 0 {
                // The first document (often the only one, a huge List): no copy.
                self.json = json;
            } else {
                self.json.push_str(&json);
            }
            doc.shift(offset);
            self.docs.push(doc);
        }
    }
}

/// One YAML document, its objects already JSON text.
struct YamlDoc {
    json: String,
    doc: Doc,
}

/// What a YAML document held; ranges are of the JSON text.
#[derive(Debug)]
enum Doc {
    /// A List: its other top-level keys, and its items (`None` when `items` is not a list).
    List {
        top: Map<String, Value>,
        items: Option<Vec<(usize, usize)>>,
    },
    /// An object of a kind vmctl reads.
    Object { kind: Kind, range: (usize, usize) },
    /// An object of another kind.
    Skipped(String),
    /// `null` as a document's root (serde-saphyr skips empty documents itself).
    Null,
    /// An object without `kind` or `items`.
    NoKind,
    /// A scalar or a list ("a string", "a list").
    NotObject(&'static str),
}

impl Doc {
    fn shift(&mut self, offset: usize) {
        match self {
            Doc::List {
                items: Some(items), ..
            } => {
                for (start, end) in items {
                    *start += offset;
                    *end += offset;
                }
            }
            Doc::Object { range, .. } => {
                range.0 += offset;
                range.1 += offset;
            }
            _ => {}
        }
    }

    fn not_object(what: &'static str) -> YamlDoc {
        YamlDoc {
            json: String::new(),
            doc: Doc::NotObject(what),
        }
    }
}

impl<'de> serde::Deserialize<'de> for YamlDoc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<YamlDoc, D::Error> {
        d.deserialize_any(YamlDocVisitor)
    }
}

/// A document's root. A List's items are streamed: each item is a tree only while it is
/// written out as JSON, so a huge List document never is one tree.
struct YamlDocVisitor;

impl<'de> Visitor<'de> for YamlDocVisitor {
    type Value = YamlDoc;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object or List")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<YamlDoc, A::Error> {
        let mut json = String::new();
        let mut top = Map::new();
        let mut items = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "items" {
                // A later duplicate replaces an earlier one, as in a `Value`.
                json.clear();
                items = Some(map.next_value_seed(YamlItemsSeed(&mut json))?);
            } else {
                let value = map.next_value::<Value>()?;
                top.insert(key, value);
            }
        }
        if let Some(items) = items {
            return Ok(YamlDoc {
                json,
                doc: Doc::List { top, items },
            });
        }
        let kind_name = top.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind_name.is_empty() {
            return Ok(YamlDoc {
                json,
                doc: Doc::NoKind,
            });
        }
        let Some(kind) = Kind::from_kind_name(kind_name) else {
            return Ok(YamlDoc {
                json,
                doc: Doc::Skipped(kind_name.to_string()),
            });
        };
        let mut value = Value::Object(top);
        fill_kind(kind, &mut value);
        let json = serde_json::to_string(&value).map_err(de::Error::custom)?;
        let range = (0, json.len());
        Ok(YamlDoc {
            json,
            doc: Doc::Object { kind, range },
        })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<YamlDoc, A::Error> {
        IgnoredAny.visit_seq(seq)?;
        Ok(Doc::not_object("a list"))
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<YamlDoc, E> {
        Ok(Doc::not_object("a string"))
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<YamlDoc, E> {
        Ok(Doc::not_object("a boolean"))
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<YamlDoc, E> {
        Ok(Doc::not_object("a number"))
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<YamlDoc, E> {
        Ok(Doc::not_object("a number"))
    }
    fn visit_i128<E>(self, _: i128) -> std::result::Result<YamlDoc, E> {
        Ok(Doc::not_object("a number"))
    }
    fn visit_u128<E>(self, _: u128) -> std::result::Result<YamlDoc, E> {
        Ok(Doc::not_object("a number"))
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<YamlDoc, E> {
        Ok(Doc::not_object("a number"))
    }
    fn visit_unit<E>(self) -> std::result::Result<YamlDoc, E> {
        Ok(YamlDoc {
            json: String::new(),
            doc: Doc::Null,
        })
    }
    fn visit_none<E>(self) -> std::result::Result<YamlDoc, E> {
        Ok(YamlDoc {
            json: String::new(),
            doc: Doc::Null,
        })
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<YamlDoc, D::Error> {
        d.deserialize_any(self)
    }
}

/// A YAML List's `items`, written item by item to the JSON text: their ranges, or `None` when
/// `items` is not a list.
struct YamlItemsSeed<'j>(&'j mut String);

impl<'de> DeserializeSeed<'de> for YamlItemsSeed<'_> {
    type Value = Option<Vec<(usize, usize)>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for YamlItemsSeed<'_> {
    type Value = Option<Vec<(usize, usize)>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut ranges = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element::<Value>()? {
            let start = self.0.len();
            let text = serde_json::to_string(&item).map_err(de::Error::custom)?;
            self.0.push_str(&text);
            ranges.push((start, self.0.len()));
        }
        Ok(Some(ranges))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Self::Value, A::Error> {
        IgnoredAny.visit_map(map).map(|_| None)
    }
    scalars!(None; str, bool, i64, u64, f64, unit, none);
}

/// serde errors end with " at line X column Y"; the location is already in the prefix.
fn strip_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

// ---------------------------------------------------------------------------------------
// Visitors: the top-level shape, and an object's header in one pass over its bytes.

/// A file's top-level value, with a List's items borrowed from the text.
enum Top<'de> {
    Null,
    Other(&'static str),
    Object {
        kind: Option<Cow<'de, str>>,
        captured_at: Option<Cow<'de, str>>,
        server_version: Option<Cow<'de, str>>,
        items: Option<Items<'de>>,
    },
}

enum Items<'de> {
    List(Vec<&'de RawValue>),
    NotAList,
}

struct TopSeed;

impl<'de> DeserializeSeed<'de> for TopSeed {
    type Value = Top<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Top<'de>, D::Error> {
        d.deserialize_any(TopVisitor)
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object or List")
    }

    scalars!(Top::Null; unit, none);
    scalars!(Top::Other("a boolean"); bool);
    scalars!(Top::Other("a number"); i64, u64, f64);
    scalars!(Top::Other("a string"); str);
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Top<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Top::Other("a list"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Top<'de>, A::Error> {
        let (mut kind, mut captured_at, mut server_version, mut items) = (None, None, None, None);
        // Later duplicate keys win, as they do in a `Value`.
        while let Some(key) =
            map.next_key_seed(KeyIn(&["kind", "capturedAt", "items", "serverVersion"]))?
        {
            match key {
                Some(0) => kind = map.next_value_seed(StrSeed(&mut TimeNotes::default()))?,
                Some(1) => captured_at = map.next_value_seed(StrSeed(&mut TimeNotes::default()))?,
                Some(2) => items = Some(map.next_value_seed(ItemsSeed)?),
                Some(3) => {
                    server_version = map.next_value_seed(StrSeed(&mut TimeNotes::default()))?
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Top::Object {
            kind,
            captured_at,
            server_version,
            items,
        })
    }
}

struct ItemsSeed;

impl<'de> DeserializeSeed<'de> for ItemsSeed {
    type Value = Items<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Items<'de>, D::Error> {
        d.deserialize_any(ItemsVisitor)
    }
}

struct ItemsVisitor;

impl<'de> Visitor<'de> for ItemsVisitor {
    type Value = Items<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Items<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element::<&'de RawValue>()? {
            items.push(item);
        }
        Ok(Items::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Items<'de>, A::Error> {
        IgnoredAny.visit_map(map).map(|_| Items::NotAList)
    }
    scalars!(Items::NotAList; unit, none, bool, i64, u64, f64, str);
}

/// A map key, matched against a fixed list without allocating: `Some(index)` or `None`.
struct KeyIn(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for KeyIn {
    type Value = Option<usize>;
    fn deserialize<D: Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Option<usize>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIn {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E>(self, key: &str) -> std::result::Result<Option<usize>, E> {
        Ok(self.0.iter().position(|k| *k == key))
    }
}

/// An object's header as read, borrowing from the text where it can.
#[derive(Default)]
struct RawHeader<'de> {
    is_object: bool,
    kind: Option<Cow<'de, str>>,
    name: Option<Cow<'de, str>>,
    namespace: Option<Cow<'de, str>>,
    odd_namespace: bool,
    /// The text of `metadata.labels`, a slice of the object's text.
    labels: Option<&'de str>,
    newest: TimeNotes,
}

fn parse_header<'de>(text: &'de str, origin: &Origin) -> Result<RawHeader<'de>> {
    let mut de = serde_json::Deserializer::from_str(text);
    HeaderSeed
        .deserialize(&mut de)
        .map_err(|e| Error::bad_input(origin, format!("invalid JSON: {}", json_message(&e))))
}

struct HeaderSeed;

impl<'de> DeserializeSeed<'de> for HeaderSeed {
    type Value = RawHeader<'de>;
    fn deserialize<D: Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<RawHeader<'de>, D::Error> {
        let mut header = RawHeader::default();
        d.deserialize_any(HeaderVisitor(&mut header))?;
        Ok(header)
    }
}

struct HeaderVisitor<'h, 'de>(&'h mut RawHeader<'de>);

impl<'de> Visitor<'de> for HeaderVisitor<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let h = self.0;
        h.is_object = true;
        while let Some(key) = map.next_key_seed(KeyWith(top_field))? {
            match key {
                TopField::Kind => h.kind = map.next_value_seed(StrSeed(&mut h.newest))?,
                TopField::Metadata => {
                    // A later `metadata` replaces an earlier one entirely, as in a `Value`.
                    h.name = None;
                    h.namespace = None;
                    h.odd_namespace = false;
                    h.labels = None;
                    map.next_value_seed(MetaSeed(h))?;
                }
                // An Event's `lastTimestamp`, `eventTime` …
                TopField::Other(KeyClass::Time(key)) => {
                    map.next_value_seed(Scan(&mut h.newest, Some(key)))?
                }
                TopField::Other(KeyClass::Opaque) => {
                    map.next_value::<IgnoredAny>()?;
                }
                TopField::Other(KeyClass::Other) => {
                    map.next_value_seed(Scan(&mut h.newest, None))?
                }
            }
        }
        Ok(())
    }

    // Anything but an object: not an object (the caller says so); still consumed.
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<(), A::Error> {
        Scan(&mut self.0.newest, None).visit_seq(seq)
    }
    scalars!((); str, bool, i64, u64, f64, unit);
}

struct MetaSeed<'h, 'de>(&'h mut RawHeader<'de>);

impl<'de> DeserializeSeed<'de> for MetaSeed<'_, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MetaSeed<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("metadata")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let h = self.0;
        while let Some(key) = map.next_key_seed(KeyIn(&[
            "name",
            "namespace",
            "labels",
            "creationTimestamp",
            "deletionTimestamp",
        ]))? {
            match key {
                Some(0) => h.name = map.next_value_seed(StrSeed(&mut h.newest))?,
                Some(1) => {
                    let mut present = false;
                    h.namespace = map.next_value_seed(PresentStr(&mut h.newest, &mut present))?;
                    h.odd_namespace = present && h.namespace.is_none();
                }
                Some(2) => {
                    // Borrowed: a slice of the object's text, read again only by selectors.
                    let labels: &'de RawValue = map.next_value()?;
                    h.labels = Some(labels.get());
                }
                Some(3) => map.next_value_seed(Scan(
                    &mut h.newest,
                    Some(TimeKey::new("creationTimestamp")),
                ))?,
                Some(4) => map.next_value_seed(Scan(
                    &mut h.newest,
                    Some(TimeKey::new("deletionTimestamp")),
                ))?,
                // The rest of metadata, annotations included: not a clock.
                _ => map.next_value_seed(Scan(&mut h.newest, None))?,
            }
        }
        Ok(())
    }

    // `metadata` that is not an object: no name, no namespace, no labels.
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<(), A::Error> {
        Scan(&mut self.0.newest, None).visit_seq(seq)
    }
    scalars!((); str, bool, i64, u64, f64, unit);
}

/// `metadata.labels`: string values kept, other values recorded as `None` (a later
/// duplicate key replaces an earlier one, as in a `Value`).
type Labels<'de> = Vec<(Cow<'de, str>, Option<Cow<'de, str>>)>;

struct LabelsSeed<'a, 'de>(&'a mut Labels<'de>, &'a mut TimeNotes);

impl<'de> DeserializeSeed<'de> for LabelsSeed<'_, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for LabelsSeed<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("labels")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        while let Some(key) = map.next_key_seed(StrSeed(&mut TimeNotes::default()))? {
            let key = key.unwrap_or_default();
            let value = map.next_value_seed(StrSeed(&mut *self.1))?;
            match self.0.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => self.0.push((key, value)),
            }
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<(), A::Error> {
        Scan(&mut *self.1, None).visit_seq(seq)
    }
    scalars!((); str, bool, i64, u64, f64, unit);
}

/// A value that is kept when it is a string (borrowed when it can be); anything else is
/// consumed and gives `None`. Timestamps are noted on the way.
struct StrSeed<'n>(&'n mut TimeNotes);

impl<'de> DeserializeSeed<'de> for StrSeed<'_> {
    type Value = Option<Cow<'de, str>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        let mut present = false;
        d.deserialize_any(PresentStr(self.0, &mut present))
    }
}

/// [`StrSeed`] that also says whether there was a value at all.
struct PresentStr<'n>(&'n mut TimeNotes, &'n mut bool);

impl<'de> DeserializeSeed<'de> for PresentStr<'_> {
    type Value = Option<Cow<'de, str>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PresentStr<'_> {
    type Value = Option<Cow<'de, str>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> std::result::Result<Self::Value, E> {
        *self.1 = true;
        Ok(Some(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> std::result::Result<Self::Value, E> {
        *self.1 = true;
        Ok(Some(Cow::Owned(s.to_string())))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<Self::Value, A::Error> {
        *self.1 = true;
        Scan(self.0, None).visit_seq(seq).map(|()| None)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Self::Value, A::Error> {
        *self.1 = true;
        Scan(self.0, None).visit_map(map).map(|()| None)
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Self::Value, E> {
        *self.1 = true;
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Self::Value, E> {
        *self.1 = true;
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<Self::Value, E> {
        *self.1 = true;
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<Self::Value, E> {
        *self.1 = true;
        Ok(None)
    }
    // `null`: as if absent (a `Value`'s `as_str` and `get` treat it so).
    fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
}

/// Consumes any value, noting the timestamps among it: strings under a key that names a
/// time (`creationTimestamp`, `lastTransitionTime`, `phaseTransitionTimestamp`,
/// `startedAt` …), never a label, an annotation or any other text a tenant controls (issue 11:
/// an annotation shaped like `2999-01-01T00:00:00Z` must not become the snapshot's clock).
/// The key says whether this value sits under such a key, and which.
struct Scan<'n>(&'n mut TimeNotes, Option<TimeKey>);

/// What a key says about its value, for [`Scan`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyClass {
    /// A time field, and its key.
    Time(TimeKey),
    /// Free-form text owned by users (labels, annotations): not scanned at all.
    Opaque,
    Other,
}

fn classify_key(key: &str) -> KeyClass {
    match key {
        "labels" | "annotations" | "managedFields" => KeyClass::Opaque,
        "startedAt" | "finishedAt" => KeyClass::Time(TimeKey::new(key)),
        k if k.ends_with("Timestamp") || k.ends_with("Time") => KeyClass::Time(TimeKey::new(k)),
        _ => KeyClass::Other,
    }
}

/// A top-level key of an object.
enum TopField {
    Kind,
    Metadata,
    Other(KeyClass),
}

fn top_field(key: &str) -> TopField {
    match key {
        "kind" => TopField::Kind,
        "metadata" => TopField::Metadata,
        k => TopField::Other(classify_key(k)),
    }
}

/// A map key read through a function, without allocating it.
struct KeyWith<F>(F);

impl<'de, T, F: FnOnce(&str) -> T> DeserializeSeed<'de> for KeyWith<F> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<T, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, T, F: FnOnce(&str) -> T> Visitor<'de> for KeyWith<F> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E>(self, key: &str) -> std::result::Result<T, E> {
        Ok((self.0)(key))
    }
}

impl<'de> DeserializeSeed<'de> for Scan<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scan<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_str<E>(self, s: &str) -> std::result::Result<(), E> {
        if let Some(key) = self.1 {
            self.0.note(s, key);
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        while seq.next_element_seed(Scan(&mut *self.0, self.1))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        while let Some(class) = map.next_key_seed(KeyWith(classify_key))? {
            match class {
                KeyClass::Opaque => {
                    map.next_value::<IgnoredAny>()?;
                }
                KeyClass::Time(key) => map.next_value_seed(Scan(&mut *self.0, Some(key)))?,
                KeyClass::Other => map.next_value_seed(Scan(&mut *self.0, None))?,
            }
        }
        Ok(())
    }
    scalars!((); bool, i64, u64, f64, unit);
}

/// The key of a time field, copied (keys are short; a longer one is cut).
#[derive(Clone, Copy, PartialEq, Eq)]
struct TimeKey {
    bytes: [u8; 40],
    len: u8,
}

impl TimeKey {
    fn new(key: &str) -> TimeKey {
        let mut end = key.len().min(40);
        while !key.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0; 40];
        bytes[..end].copy_from_slice(&key.as_bytes()[..end]);
        TimeKey {
            bytes,
            len: end as u8,
        }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("?")
    }
}

/// A time field whose value is not an RFC 3339 time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadTime {
    /// The field's key (`startTimestamp`, `lastTransitionTime` …).
    pub field: String,
    /// The value, cut to 64 characters.
    pub value: String,
}

/// What the time fields of one object say: the newest time, and the first value that is
/// not a time.
#[derive(Debug, Default)]
struct TimeNotes {
    newest: Option<[u8; 20]>,
    bad: Option<Box<BadTime>>,
}

impl TimeNotes {
    /// Notes the value of a time field. Kubernetes writes `2026-11-29T03:00:00Z` (and
    /// `…:00.000000Z` for a MicroTime); any other RFC 3339 form counts too, in UTC to the
    /// second. A value that is not a time is kept as the object's bad time (the first one).
    fn note(&mut self, s: &str, key: TimeKey) {
        if s.is_empty() {
            return;
        }
        let bytes = if looks_like_timestamp(s) && plausible_timestamp(s.as_bytes()) {
            <[u8; 20]>::try_from(s.as_bytes()).ok()
        } else {
            canonical_timestamp(s)
        };
        match bytes {
            Some(b) if self.newest.is_none_or(|n| b > n) => {
                // Only a candidate is checked in full (a 30th of February passes the cheap
                // check): at most a few per object.
                if std::str::from_utf8(&b).is_ok_and(|t| t.parse::<Timestamp>().is_ok()) {
                    self.newest = Some(b);
                } else {
                    self.bad(s, key);
                }
            }
            Some(_) => {}
            None => self.bad(s, key),
        }
    }

    fn bad(&mut self, s: &str, key: TimeKey) {
        if self.bad.is_none() {
            self.bad = Some(Box::new(BadTime {
                field: key.as_str().to_string(),
                value: if s.chars().count() > 64 {
                    format!("{}…", s.chars().take(64).collect::<String>())
                } else {
                    s.to_string()
                },
            }));
        }
    }
}

/// Month, day, hour, minute and second in range (the digits are known to be digits).
fn plausible_timestamp(b: &[u8]) -> bool {
    let n = |i: usize| u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0');
    (1..=12).contains(&n(5)) && (1..=31).contains(&n(8)) && n(11) < 24 && n(14) < 60 && n(17) < 60
}

/// Any RFC 3339 time as `YYYY-MM-DDTHH:MM:SSZ` in UTC, to the second.
fn canonical_timestamp(s: &str) -> Option<[u8; 20]> {
    if s.len() > 64 {
        return None;
    }
    let t: Timestamp = s.parse().ok()?;
    let text = t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    <[u8; 20]>::try_from(text.as_bytes()).ok()
}

/// An RFC 3339 UTC timestamp string: `2026-11-29T03:00:00Z`.
pub fn looks_like_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z'
        && s.chars().filter(char::is_ascii_digit).count() == 14
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    fn parse(name: &str, text: &str) -> Result<RawFiles> {
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
    fn reads_multi_document_yaml_and_skips_foreign_kinds() {
        let text = "kind: Node\napiVersion: v1\nmetadata: {name: n1}\n---\nkind: Deployment\nmetadata: {name: d}\n---\nkind: Pod\nmetadata: {name: p, namespace: x, labels: {a: b}}\n";
        let found = parse("x.yaml", text).unwrap();
        assert_eq!(found.entries.len(), 2);
        assert_eq!(found.skipped_kinds, vec!["Deployment".to_string()]);
        let pod = &found.entries[1];
        assert_eq!(
            (pod.kind, pod.namespace(), pod.name()),
            (Kind::Pod, Some("x"), "p")
        );
        assert_eq!(found.labels(pod), [("a".into(), Some("b".into()))]);
        assert_eq!(found.origin(pod).document, 3);
        // Stored as compact JSON, kind and apiVersion filled in.
        assert_eq!(
            found.text(pod),
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"a":"b"},"name":"p","namespace":"x"}}"#
        );
    }

    #[test]
    fn a_yaml_list_is_streamed_item_by_item_and_reads_as_json_does() {
        // `items` before `kind`, as `kubectl get -o yaml` sorts keys; items omit their kind.
        let yaml = "apiVersion: v1\nitems:\n- metadata: {name: b, namespace: x, labels: {app: web}}\n  spec: {nodeName: n1}\n- metadata: {name: a, namespace: x}\nkind: PodList\nmetadata: {}\n";
        let json = r#"{"apiVersion":"v1","items":[{"metadata":{"name":"b","namespace":"x","labels":{"app":"web"}},"spec":{"nodeName":"n1"}},{"metadata":{"name":"a","namespace":"x"}}],"kind":"PodList","metadata":{}}"#;
        let from_yaml = parse("pods.yaml", yaml).unwrap();
        let from_json = parse("pods.json", json).unwrap();
        assert_eq!(from_yaml.entries.len(), 2);
        for (y, j) in from_yaml.entries.iter().zip(&from_json.entries) {
            assert_eq!(y.kind, Kind::Pod);
            assert_eq!((y.name(), y.namespace()), (j.name(), j.namespace()));
            assert_eq!(from_yaml.labels(y), from_json.labels(j));
            assert_eq!(from_yaml.value(y).unwrap(), from_json.value(j).unwrap());
        }
        assert_eq!(
            from_yaml.value(&from_yaml.entries[0]).unwrap()["kind"],
            "Pod"
        );
        assert_eq!(
            from_yaml.labels(&from_yaml.entries[0]),
            [("app".into(), Some("web".into()))]
        );
        let err = parse("l.yaml", "kind: List\nitems: {a: 1}\n").unwrap_err();
        assert!(err.to_string().contains("`items` is not a list"), "{err}");
        let err = parse("l.yaml", "kind: List\nitems:\n- metadata: {name: x}\n").unwrap_err();
        assert!(err.to_string().contains("items[0] has no `kind`"), "{err}");
    }

    #[test]
    fn malformed_yaml_names_file_and_line() {
        let err = parse("bad.yaml", "kind: Node\nmetadata:\n  name: [unclosed\n").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("bad.yaml:"), "{text}");
        assert!(text.contains("invalid YAML"), "{text}");
    }

    /// The YAML dialect (src/cluster/yaml.rs): YAML 1.2 core scalars as serde_yaml read them,
    /// not YAML 1.1 as Kubernetes' goyaml v2 does (where `on` is true and `0755` is 493);
    /// merge keys merged, as goyaml v2 merges them; a later duplicate key wins.
    #[test]
    fn yaml_scalars_read_as_yaml_1_2_and_merge_keys_merge() {
        let text = "base: &base {app: web, tier: a}\nkind: Node\nmetadata:\n  name: n\n  labels:\n    <<: *base\n    tier: b\n    on: on\n    yes: yes\n    octal: 0755\n    under: 1_000\n    tilde: ~\n    time: 2026-11-29T03:00:00Z\n    dup: first\n    dup: last\nspec: {inf: .inf, exp: 1e3, big: 18446744073709551615, null: x}\n";
        let found = parse("n.yaml", text).unwrap();
        let labels: Vec<(String, Option<String>)> = found
            .labels(&found.entries[0])
            .into_iter()
            .map(|(k, v)| (k.into_owned(), v.map(Cow::into_owned)))
            .collect();
        let label = |k: &str| {
            labels
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(label("app"), Some(Some("web".into())), "{labels:?}");
        assert_eq!(label("tier"), Some(Some("b".into())));
        assert_eq!(label("on"), Some(Some("on".into())));
        assert_eq!(label("yes"), Some(Some("yes".into())));
        assert_eq!(label("octal"), Some(Some("0755".into())));
        assert_eq!(label("under"), Some(Some("1_000".into())));
        assert_eq!(label("tilde"), Some(None));
        assert_eq!(label("time"), Some(Some("2026-11-29T03:00:00Z".into())));
        assert_eq!(label("dup"), Some(Some("last".into())));
        assert!(label("<<").is_none());
        let value = found.value(&found.entries[0]).unwrap();
        assert_eq!(
            value["spec"],
            serde_json::json!({"inf": null, "exp": 1000.0, "big": 18446744073709551615u64, "null": "x"})
        );
    }

    #[test]
    fn hostile_yaml_is_refused_with_its_line() {
        let mut bomb =
            String::from("kind: Node\nmetadata: {name: n}\nl0: &l0 [x,x,x,x,x,x,x,x,x]\n");
        for i in 1..10 {
            bomb.push_str(&format!(
                "l{i}: &l{i} [{}]\n",
                vec![format!("*l{}", i - 1); 9].join(",")
            ));
        }
        let deep_block = format!("kind: Node\nspec:\n{}x\n", "- ".repeat(100_000));
        let deep_flow = format!(
            "kind: Node\nspec: {}{}\n",
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        for (text, needle) in [
            (
                bomb.as_str(),
                "aliases repeat more values than the file holds",
            ),
            (deep_block.as_str(), "nested deeper than 100 levels"),
            (deep_flow.as_str(), "nested deeper than 100 levels"),
        ] {
            let err = parse("h.yaml", text).unwrap_err().to_string();
            assert!(err.starts_with("h.yaml:"), "{err}");
            assert!(err.contains(needle), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        // 100 levels are read (the document is the first).
        let deep_ok = format!(
            "kind: Node\nmetadata: {{name: n}}\nspec: {}{}\n",
            "[".repeat(99),
            "]".repeat(99)
        );
        assert_eq!(parse("ok.yaml", &deep_ok).unwrap().entries.len(), 1);
    }

    #[test]
    fn empty_documents_are_not_numbered() {
        let text = "---\n---\nkind: Node\nmetadata: {name: a}\n---\n~\n---\nkind: Node\n";
        let err = parse("d.yaml", text).unwrap_err().to_string();
        assert_eq!(err, "d.yaml (document 2): a Node has no metadata.name");
    }

    #[test]
    fn malformed_json_names_line_and_column() {
        let err = parse("bad.json", "{\n \"kind\": \"Node\",,\n}").unwrap_err();
        assert!(err.to_string().starts_with("bad.json:2:"), "{err}");
        // Inside an item, too: the whole file is checked while it is read.
        let err = parse(
            "bad.json",
            "{\"kind\": \"List\", \"items\": [\n{\"kind\": \"Node\", \"metadata\": {\"name\": 1,}}]}",
        )
        .unwrap_err();
        assert!(err.to_string().starts_with("bad.json:2:"), "{err}");
        assert!(err.to_string().contains("invalid JSON"), "{err}");
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
    fn a_single_json_object_is_its_whole_text() {
        let text = "\n  {\"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}}\n\n";
        let found = parse("n.json", text).unwrap();
        assert_eq!(
            found.text(&found.entries[0]),
            "{\"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}}"
        );
        assert_eq!(found.value(&found.entries[0]).unwrap()["apiVersion"], "v1");
    }

    #[test]
    fn header_reads_escaped_strings_and_ignores_non_string_labels() {
        let text = r#"{"kind":"PodList","items":[{"metadata":{"name":"a\u0062","namespace":"n\"s",
            "labels":{"x":"1","y":2,"x":"3","z":"0"}}},
            {"metadata":{"name":"b","namespace":7}}]}"#;
        let found = parse("p.json", text).unwrap();
        let a = &found.entries[0].header;
        assert_eq!((a.name(), a.namespace()), ("ab", Some("n\"s")));
        let labels = found.labels(&found.entries[0]);
        assert_eq!(
            labels,
            [
                ("x".into(), Some("3".into())),
                ("y".into(), None),
                ("z".into(), Some("0".into()))
            ],
            "a later duplicate wins; a number is not a label value"
        );
        let pick =
            |s: &str| found.matches_labels(&found.entries[0], &LabelSelector::parse(s).unwrap());
        assert!(pick("x=3,z=0,!y"));
        assert!(!pick("x=1"));
        assert!(!pick("y"));
        let b = &found.entries[1].header;
        assert_eq!(b.namespace(), None);
        assert!(b.odd_namespace());
    }

    #[test]
    fn header_keeps_the_newest_timestamp_of_time_fields_only() {
        // Labels, annotations, names and free text are not a clock, whatever they look like.
        let text = r#"{"kind":"PodList","items":[{"metadata":{"name":"2999-01-01T00:00:00Z",
            "creationTimestamp":"2026-11-29T02:00:00Z",
            "labels":{"creationTimestamp":"2999-01-01T00:00:00Z"},
            "annotations":{"2026-12-31T00:00:00Z":"key, not a value","t":"2026-11-30T01:00:00Z"}},
            "spec":{"note":"2999-01-01T00:00:00Z"},
            "status":{"message":"2999-01-01T00:00:00Z",
                      "conditions":[{"lastTransitionTime":"2026-11-29T05:00:00\u005a"},
                                    {"lastTransitionTime":"2026-11-29T0X:00:00Z"}],
                      "containerStatuses":[{"state":{"running":{"startedAt":"2026-11-29T06:00:00Z"}}}]}}]}"#;
        let found = parse("p.json", text).unwrap();
        assert_eq!(
            found.entries[0].header.newest_timestamp(),
            Some("2026-11-29T06:00:00Z")
        );
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
