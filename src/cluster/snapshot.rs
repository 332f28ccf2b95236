//! The snapshot source: answers queries from files exactly as an API server would.
//!
//! Objects stay as text (see [`files`]): selection by namespace and labels reads each
//! object's header, `get` and `origin_of` are binary searches in a list sorted by
//! (namespace, name), and only the objects a query selects are decoded, from their bytes.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::de::{DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::Kind;
use super::files::{self, Entry, RawFiles};
use super::selector::FieldSelector;
use super::source::{Query, Source, object_label};
use crate::error::{Error, Result};

pub struct SnapshotSource {
    path: PathBuf,
    /// The files' text; the entries are in `entries`.
    raw: RawFiles,
    /// Every object, sorted by (kind, namespace, name), one per key.
    entries: Vec<Entry>,
    /// Where each kind's objects are in `entries`.
    by_kind: HashMap<Kind, Range<usize>>,
    warnings: Vec<String>,
}

/// Duplicates named one by one, then counted.
const MAX_DETAILED_WARNINGS: usize = 20;

/// Kinds vmctl skipped that are close to one it reads (`VirtualMachineInstanceMigratoin`):
/// a typo would otherwise read as "not found".
fn misspelled_kinds(skipped: &[String]) -> Vec<String> {
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for k in skipped {
        *counts.entry(k.as_str()).or_default() += 1;
    }
    counts
        .into_iter()
        .filter_map(|(kind, n)| {
            // A typo, not another kind: KubeVirt has many kinds close to the ones vmctl
            // reads (VirtualMachinePool, VirtualMachineInstancetype) that are not typos.
            let lower = kind.to_ascii_lowercase();
            let best = Kind::ALL.iter().map(|k| k.name()).find(|name| {
                let d = crate::names::distance(&lower, &name.to_ascii_lowercase());
                d <= (name.len() / 10).max(1)
            })?;
            Some(format!(
                "{n} object(s) of kind {kind:?} skipped: vmctl does not read that kind (did you mean {best}?)"
            ))
        })
        .collect()
}

/// `DIR: skipped 2 of 14 .yaml/.yml/.json files that hold no Kubernetes object: a.yaml,
/// b.json`. Files that are not .yaml, .yml or .json (a must-gather's logs, a README) are not
/// counted: vmctl never took them for objects.
fn skipped_files_warning(path: &Path, raw: &RawFiles) -> Option<String> {
    let skipped = &raw.skipped_files;
    if skipped.is_empty() {
        return None;
    }
    let names: Vec<String> = skipped
        .iter()
        .take(MAX_DETAILED_WARNINGS)
        .map(|f| f.strip_prefix(path).unwrap_or(f).display().to_string())
        .collect();
    let more = skipped.len().saturating_sub(names.len());
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Some(format!(
        "{}: skipped {} of {} .yaml/.yml/.json files that hold no Kubernetes object (no apiVersion, kind or metadata): {}{more}",
        path.display(),
        skipped.len(),
        raw.object_files,
        names.join(", ")
    ))
}

impl SnapshotSource {
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with(path, files::ReadLimits::default())
    }

    pub fn open_with(path: &Path, limits: files::ReadLimits) -> Result<Self> {
        Ok(Self::from_raw(path, files::read_raw_with(path, limits)?))
    }

    pub fn from_raw(path: &Path, mut raw: RawFiles) -> Self {
        let mut entries = raw.take_entries();
        // Same order as an API server: namespace, then name. Later duplicates win (a
        // directory may hold the same object twice, e.g. a list and a single dump): the
        // sort is stable, and the later of two equal neighbours is kept.
        fn key(e: &Entry) -> (Kind, Option<&str>, &str) {
            (e.kind, e.namespace(), e.name())
        }
        entries.sort_by(|a, b| key(a).cmp(&key(b)));
        let mut duplicates: Vec<String> = Vec::new();
        let mut duplicate_count = 0usize;
        entries.dedup_by(|later, earlier| {
            let same = key(later) == key(earlier);
            if same {
                duplicate_count += 1;
                if duplicates.len() < MAX_DETAILED_WARNINGS {
                    duplicates.push(format!(
                        "{} is there twice ({} and {}): the later is used",
                        raw.describe(earlier),
                        raw.origin(earlier),
                        raw.origin(later)
                    ));
                }
                std::mem::swap(later, earlier);
            }
            same
        });
        let mut warnings = duplicates;
        if duplicate_count > MAX_DETAILED_WARNINGS {
            warnings.push(format!(
                "… and {} more duplicate object(s)",
                duplicate_count - MAX_DETAILED_WARNINGS
            ));
        }
        warnings.extend(misspelled_kinds(&raw.skipped_kinds));
        if let Some(w) = skipped_files_warning(path, &raw) {
            warnings.push(w);
        }
        // What a narrowed capture (`vmctl snapshot -n NS`) left out: said at every replay.
        warnings.extend(
            raw.left_out
                .iter()
                .take(MAX_DETAILED_WARNINGS)
                .map(|l| format!("{}: {l}", path.display())),
        );
        let mut bad_times = entries.iter().filter(|e| e.header.bad_time().is_some());
        for entry in bad_times.by_ref().take(MAX_DETAILED_WARNINGS) {
            if let Some(bad) = entry.header.bad_time() {
                warnings.push(format!(
                    "{}: {} {:?} is not an RFC 3339 time; it is not read as a time",
                    raw.describe(entry),
                    bad.field,
                    bad.value
                ));
            }
        }
        let more = bad_times.count();
        if more > 0 {
            warnings.push(format!(
                "… and {more} more object(s) with a time field that is not a time"
            ));
        }
        entries.shrink_to_fit();
        let mut by_kind: HashMap<Kind, Range<usize>> = HashMap::new();
        for (i, entry) in entries.iter().enumerate() {
            by_kind.entry(entry.kind).or_insert(i..i).end = i + 1;
        }
        SnapshotSource {
            path: path.to_path_buf(),
            raw,
            entries,
            by_kind,
            warnings,
        }
    }

    /// What the files hold that vmctl did not use as is: duplicate objects, kinds that look
    /// like a misspelling of one vmctl reads. Said on stderr when the source is opened.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// `capturedAt` of a vmctl snapshot, if the files are one.
    pub fn captured_at(&self) -> Option<&str> {
        self.raw.captured_at.as_deref()
    }

    /// The newest timestamp anywhere in the objects: the "as of" of a must-gather dump
    /// that carries no capture time. (Each object's newest was noted when it was read.)
    pub fn newest_timestamp(&self) -> Option<String> {
        self.entries
            .iter()
            .filter_map(|e| e.header.newest_timestamp())
            .max()
            .map(str::to_string)
    }

    /// The objects of a kind, sorted by (namespace, name).
    pub fn entries(&self, kind: Kind) -> &[Entry] {
        self.by_kind
            .get(&kind)
            .and_then(|r| self.entries.get(r.clone()))
            .unwrap_or(&[])
    }

    /// The object `namespace/name` exactly (an API server's key).
    fn find(&self, kind: Kind, namespace: Option<&str>, name: &str) -> Option<&Entry> {
        let entries = self.entries(kind);
        entries
            .binary_search_by(|e| (e.namespace(), e.name()).cmp(&(namespace, name)))
            .ok()
            .and_then(|i| entries.get(i))
    }

    /// The objects of one namespace: a range of the sorted list.
    fn in_namespace(&self, kind: Kind, namespace: &str) -> &[Entry] {
        let entries = self.entries(kind);
        let ns = Some(namespace);
        let start = entries.partition_point(|e| e.namespace() < ns);
        let len = entries[start..].partition_point(|e| e.namespace() == ns);
        &entries[start..start + len]
    }
}

impl SnapshotSource {
    /// The objects a query selects, as an API server would select them.
    fn select<'a>(
        &'a self,
        kind: Kind,
        query: &'a Query,
    ) -> Result<impl Iterator<Item = &'a Entry>> {
        if kind.is_custom()
            && let Some(field) = query
                .fields
                .fields()
                .find(|f| !matches!(*f, "metadata.name" | "metadata.namespace"))
        {
            // What a real API server answers for custom resources (FACTS §11).
            return Err(Error::Api {
                verb: "list".into(),
                resource: kind.plural().into(),
                status: Some(400),
                message: format!("field label not supported: {field}"),
                hints: vec![],
            });
        }
        let candidates = match (&query.namespace, kind.namespaced()) {
            (Some(ns), true) => self.in_namespace(kind, ns),
            _ => self.entries(kind),
        };
        let fields = FieldFilter::new(&query.fields);
        Ok(candidates
            .iter()
            .filter(|e| self.raw.matches_labels(e, &query.labels))
            .filter(move |e| fields.matches(&self.raw, e)))
    }
}

/// Evaluates a field selector without decoding whole objects: `metadata.name` and
/// `metadata.namespace` from the header, other fields by reading just those paths.
struct FieldFilter<'q> {
    selector: &'q FieldSelector,
    header_only: bool,
    paths: PathNode,
}

impl<'q> FieldFilter<'q> {
    fn new(selector: &'q FieldSelector) -> Self {
        let mut paths = PathNode::default();
        for field in selector.fields() {
            let mut node = &mut paths;
            for segment in field.split('.') {
                let at = match node.children.iter().position(|(k, _)| k == segment) {
                    Some(at) => at,
                    None => {
                        node.children
                            .push((segment.to_string(), PathNode::default()));
                        node.children.len() - 1
                    }
                };
                node = &mut node.children[at].1;
            }
            node.leaf = true;
        }
        FieldFilter {
            selector,
            header_only: selector
                .fields()
                .all(|f| matches!(f, "metadata.name" | "metadata.namespace")),
            paths,
        }
    }

    fn matches(&self, raw: &RawFiles, entry: &Entry) -> bool {
        if self.selector.is_empty() {
            return true;
        }
        if self.header_only && !entry.header.odd_namespace() {
            let mut meta = Map::new();
            meta.insert("name".into(), Value::String(entry.name().to_string()));
            if let Some(ns) = entry.namespace() {
                meta.insert("namespace".into(), Value::String(ns.to_string()));
            }
            let mut object = Map::new();
            object.insert("metadata".into(), Value::Object(meta));
            return self.selector.matches_object(&Value::Object(object));
        }
        let mut de = serde_json::Deserializer::from_str(raw.text(entry));
        match Prune(&self.paths).deserialize(&mut de) {
            Ok(pruned) => self.selector.matches_object(&pruned),
            // The text was checked when it was read; an object that cannot be read selects
            // nothing (decoding it would have failed the same way).
            Err(_) => false,
        }
    }
}

/// The paths a field selector reads, as a tree of keys.
#[derive(Debug, Default)]
struct PathNode {
    /// A selector reads this value whole.
    leaf: bool,
    children: Vec<(String, PathNode)>,
}

/// Reads an object keeping only the paths of a [`PathNode`]: the same answers to
/// `FieldSelector::matches_object` as the whole object, without building it.
struct Prune<'p>(&'p PathNode);

impl<'de> DeserializeSeed<'de> for Prune<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        if self.0.leaf {
            Value::deserialize(d)
        } else {
            d.deserialize_any(self)
        }
    }
}

impl<'de> Visitor<'de> for Prune<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match self.0.children.iter().find(|(k, _)| *k == key) {
                Some((_, child)) => {
                    out.insert(key, map.next_value_seed(Prune(child))?);
                }
                None => {
                    // A later duplicate key replaces an earlier one, as in a `Value`.
                    out.remove(&key);
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }

    // Below a key that is not a selector's last: only objects can be looked into, so
    // anything else reads as absent (as `Value::get` answers on it).
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Value::Null)
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
}

impl Source for SnapshotSource {
    async fn list(&self, kind: Kind, query: &Query) -> Result<Vec<Value>> {
        self.select(kind, query)?
            .map(|e| self.raw.value(e))
            .collect()
    }

    async fn list_decoded<T: DeserializeOwned + Send>(
        &self,
        kind: Kind,
        query: &Query,
    ) -> Result<Vec<T>> {
        // Select first, then decode into a vector of the right size: growing a vector of
        // 10,000 decoded objects by doubling costs up to twice their size at the peak.
        let selected: Vec<_> = self.select(kind, query)?.collect();
        decode_all(&self.raw, &selected)
    }

    async fn get(&self, kind: Kind, namespace: Option<&str>, name: &str) -> Result<Option<Value>> {
        let namespace = if kind.namespaced() { namespace } else { None };
        let found = match self.find(kind, namespace, name) {
            Some(e) => Some(e),
            // A cluster-scoped object that names a namespace anyway: still found by name.
            None if !kind.namespaced()
                && self
                    .entries(kind)
                    .last()
                    .is_some_and(|e| e.namespace().is_some()) =>
            {
                self.entries(kind).iter().find(|e| e.name() == name)
            }
            None => None,
        };
        found.map(|e| self.raw.value(e)).transpose()
    }

    /// The `serverVersion` a vmctl snapshot recorded.
    async fn server_version(&self) -> Result<Option<crate::model::ServerVersion>> {
        Ok(self
            .raw
            .server_version
            .as_deref()
            .map(|v| crate::model::ServerVersion {
                git_version: v.to_string(),
                source: crate::model::server_version::VersionSource::Snapshot,
                node: None,
            }))
    }

    fn describe(&self) -> String {
        format!("snapshot {}", self.path.display())
    }

    fn origin_of(&self, kind: Kind, value: &Value) -> String {
        let label = object_label(kind, value);
        let name = value.pointer("/metadata/name").and_then(Value::as_str);
        let ns = value.pointer("/metadata/namespace").and_then(Value::as_str);
        match name.and_then(|name| self.find(kind, ns, name)) {
            Some(e) => format!("{}: {label}", self.raw.origin(e)),
            None => label,
        }
    }
}

/// Fewer entries than this are decoded on the calling thread.
const PARALLEL_DECODE_MIN: usize = 1024;

/// Decodes `entries` in order, on as many threads as the machine has (at most 4) when there
/// are many: decoding the pods and VMIs of a fleet is most of what reading a snapshot costs,
/// and each object decodes on its own. The result is the one decoding them one after the other
/// gives, the error included: that of the first entry that fails.
fn decode_all<T: DeserializeOwned + Send>(raw: &RawFiles, entries: &[&Entry]) -> Result<Vec<T>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(4);
    let sequential = |part: &[&Entry]| -> Result<Vec<T>> {
        let mut decoded = Vec::with_capacity(part.len());
        for entry in part {
            decoded.push(raw.decode(entry)?);
        }
        Ok(decoded)
    };
    if threads < 2 || entries.len() < PARALLEL_DECODE_MIN {
        return sequential(entries);
    }
    let chunk = entries.len().div_ceil(threads);
    let parts: Vec<Result<Vec<T>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = entries
            .chunks(chunk)
            .skip(1)
            .map(|part| std::thread::Builder::new().spawn_scoped(scope, move || sequential(part)))
            .collect();
        let mut parts = vec![sequential(&entries[..chunk.min(entries.len())])];
        for (handle, part) in handles.into_iter().zip(entries.chunks(chunk).skip(1)) {
            parts.push(match handle {
                Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                // No thread: decode that part here.
                Err(_) => sequential(part),
            });
        }
        parts
    });
    let mut decoded = Vec::with_capacity(entries.len());
    for part in parts {
        decoded.extend(part?);
    }
    Ok(decoded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(text: &str) -> SnapshotSource {
        source_from("t.yaml", text)
    }

    fn source_from(name: &str, text: &str) -> SnapshotSource {
        let mut found = RawFiles::default();
        files::parse_text_into(Path::new(name), text.to_string(), &mut found).unwrap();
        SnapshotSource::from_raw(Path::new(name), found)
    }

    const TEXT: &str = "
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: b, namespace: prod, labels: {kubevirt.io: virt-launcher}}, spec: {nodeName: node-3}}
- {apiVersion: v1, kind: Pod, metadata: {name: a, namespace: dev, labels: {kubevirt.io: virt-launcher}, creationTimestamp: '2026-11-29T02:00:00Z'}, spec: {nodeName: node-1}}
- {apiVersion: v1, kind: Pod, metadata: {name: c, namespace: prod}, spec: {nodeName: node-3}}
- {apiVersion: kubevirt.io/v1, kind: VirtualMachineInstance, metadata: {name: vm-a, namespace: prod}}
";

    fn names(values: &[Value]) -> Vec<&str> {
        values
            .iter()
            .filter_map(|v| v.pointer("/metadata/name")?.as_str())
            .collect()
    }

    #[tokio::test]
    async fn lists_by_namespace_label_and_field() {
        let s = source(TEXT);
        let all = s.list(Kind::Pod, &Query::all()).await.unwrap();
        assert_eq!(
            names(&all),
            ["a", "b", "c"],
            "sorted by namespace then name"
        );
        let q = Query::namespace(Some("prod"))
            .with_label("kubevirt.io=virt-launcher")
            .unwrap();
        assert_eq!(names(&s.list(Kind::Pod, &q).await.unwrap()), ["b"]);
        let q = Query::all().with_fields("spec.nodeName=node-3").unwrap();
        assert_eq!(names(&s.list(Kind::Pod, &q).await.unwrap()), ["b", "c"]);
    }

    #[tokio::test]
    async fn custom_resources_reject_unsupported_field_selectors() {
        let s = source(TEXT);
        let q = Query::all().with_fields("status.nodeName=node-3").unwrap();
        let err = s.list(Kind::VirtualMachineInstance, &q).await.unwrap_err();
        assert!(
            err.to_string().contains("field label not supported"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn get_respects_namespace() {
        let s = source(TEXT);
        assert!(s.get(Kind::Pod, Some("prod"), "b").await.unwrap().is_some());
        assert!(s.get(Kind::Pod, Some("dev"), "b").await.unwrap().is_none());
    }

    #[test]
    fn newest_timestamp_is_found() {
        assert_eq!(
            source(TEXT).newest_timestamp().as_deref(),
            Some("2026-11-29T02:00:00Z")
        );
    }

    /// Decodes every entry of `kind` as `T` from its bytes and from the old-style tree
    /// (`kind`/`apiVersion` filled in), and compares the results.
    fn same_typed<T: DeserializeOwned + serde::Serialize>(s: &SnapshotSource, kind: Kind) -> usize {
        for e in s.entries(kind) {
            let from_bytes: T = s.raw.decode(e).unwrap();
            let tree = s.raw.value(e).unwrap();
            let from_tree = T::deserialize(&tree).unwrap();
            assert_eq!(
                serde_json::to_value(&from_bytes).unwrap(),
                serde_json::to_value(&from_tree).unwrap(),
                "{kind} {}",
                e.name()
            );
        }
        s.entries(kind).len()
    }

    #[test]
    fn text_ranges_decode_to_the_same_typed_objects_as_trees() {
        use crate::model;
        for dir in ["examples/cluster", "examples/incidents"] {
            let s = SnapshotSource::open(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).as_path())
                .unwrap();
            let mut n = 0;
            n += same_typed::<model::VirtualMachineInstance>(&s, Kind::VirtualMachineInstance);
            n += same_typed::<model::VirtualMachine>(&s, Kind::VirtualMachine);
            n += same_typed::<model::VirtualMachineInstanceMigration>(
                &s,
                Kind::VirtualMachineInstanceMigration,
            );
            n += same_typed::<model::KubeVirt>(&s, Kind::KubeVirt);
            n += same_typed::<model::MigrationPolicy>(&s, Kind::MigrationPolicy);
            n += same_typed::<model::Pod>(&s, Kind::Pod);
            n += same_typed::<model::Node>(&s, Kind::Node);
            n += same_typed::<model::Event>(&s, Kind::Event);
            n += same_typed::<model::PodDisruptionBudget>(&s, Kind::PodDisruptionBudget);
            n += same_typed::<model::ResourceQuota>(&s, Kind::ResourceQuota);
            n += same_typed::<model::Namespace>(&s, Kind::Namespace);
            assert!(n > 20, "{dir}: only {n} objects compared");
        }
    }

    #[tokio::test]
    async fn pod_list_items_get_kind_and_api_version_and_decode() {
        let s = source_from(
            "pods.json",
            r#"{"kind":"PodList","apiVersion":"v1","items":[
                {"metadata":{"name":"p","namespace":"x"},"spec":{"nodeName":"node-1","containers":[]}}]}"#,
        );
        let value = s.get(Kind::Pod, Some("x"), "p").await.unwrap().unwrap();
        assert_eq!(
            (&value["kind"], &value["apiVersion"]),
            (&"Pod".into(), &"v1".into())
        );
        let listed = s.list(Kind::Pod, &Query::all()).await.unwrap();
        assert_eq!(listed, vec![value]);
        let pods: Vec<crate::model::Pod> = s.list_decoded(Kind::Pod, &Query::all()).await.unwrap();
        assert_eq!(
            pods[0].spec.as_ref().and_then(|s| s.node_name.as_deref()),
            Some("node-1")
        );
    }

    const DUPLICATES: &str = r#"{"kind":"List","items":[
        {"kind":"Node","metadata":{"name":"n1","labels":{"v":"old"},"creationTimestamp":"2026-12-01T00:00:00Z"}},
        {"kind":"Node","metadata":{"name":"n0"}},
        {"kind":"Node","metadata":{"name":"n1","labels":{"v":"new"},"creationTimestamp":"2026-11-01T00:00:00Z"}}]}"#;

    #[tokio::test]
    async fn later_duplicates_win_and_losers_are_forgotten() {
        let s = source_from("nodes.json", DUPLICATES);
        let all = s.list(Kind::Node, &Query::all()).await.unwrap();
        assert_eq!(names(&all), ["n0", "n1"]);
        assert_eq!(all[1]["metadata"]["labels"]["v"], "new");
        let q = Query::all().with_label("v=old").unwrap();
        assert!(s.list(Kind::Node, &q).await.unwrap().is_empty());
        // The replaced object's newer timestamp is gone with it.
        assert_eq!(
            s.newest_timestamp().as_deref(),
            Some("2026-11-01T00:00:00Z")
        );
    }

    #[tokio::test]
    async fn get_and_origin_of_find_objects_by_key() {
        let s = source_from("nodes.json", DUPLICATES);
        let n1 = s.get(Kind::Node, None, "n1").await.unwrap().unwrap();
        assert_eq!(s.origin_of(Kind::Node, &n1), "nodes.json: Node n1");
        // Cluster-scoped: a namespace in the request is ignored, as before.
        assert!(s.get(Kind::Node, Some("x"), "n0").await.unwrap().is_some());
        assert!(s.get(Kind::Node, None, "n9").await.unwrap().is_none());
        let stranger = serde_json::json!({"metadata": {"name": "n9"}});
        assert_eq!(s.origin_of(Kind::Node, &stranger), "Node n9");

        let y = source(TEXT);
        let vmi = y
            .get(Kind::VirtualMachineInstance, Some("prod"), "vm-a")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            y.origin_of(Kind::VirtualMachineInstance, &vmi),
            "t.yaml: VirtualMachineInstance prod/vm-a"
        );
    }

    #[tokio::test]
    async fn a_decode_error_names_the_file_document_and_object() {
        let s = source(
            "kind: Node\nmetadata: {name: n}\n---\napiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: vm-a, namespace: prod}\nspec: {domain: {memory: {guest: lots}}}\n",
        );
        let err = s
            .list_decoded::<crate::model::VirtualMachineInstance>(
                Kind::VirtualMachineInstance,
                &Query::all(),
            )
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("t.yaml (document 2): VirtualMachineInstance prod/vm-a: "),
            "{err}"
        );
        assert!(err.contains("invalid quantity"), "{err}");
        assert!(!err.contains(" at line "), "{err}");
    }

    #[tokio::test]
    async fn field_selectors_read_only_the_fields_they_name() {
        let s = source_from(
            "pods.json",
            r#"{"kind":"PodList","items":[
                {"metadata":{"name":"a","namespace":"x"},"spec":{"nodeName":"n1","priority":3},"status":{"phase":"Running"}},
                {"metadata":{"name":"b","namespace":"x"},"spec":[1,2],"status":{"phase":"Failed"}},
                {"metadata":{"name":"c","namespace":"y"},"spec":{"nodeName":"n1","nodeName":"n2"}}]}"#,
        );
        let pick = |q: &str| {
            let q = Query::all().with_fields(q).unwrap();
            let s = &s;
            async move { names(&s.list(Kind::Pod, &q).await.unwrap()).join(",") }
        };
        assert_eq!(pick("spec.nodeName=n1").await, "a");
        assert_eq!(
            pick("spec.nodeName=n2").await,
            "c",
            "a later duplicate key wins"
        );
        assert_eq!(pick("spec.nodeName=").await, "b");
        assert_eq!(pick("spec.priority=3").await, "a");
        assert_eq!(
            pick("status.phase!=Running,metadata.namespace=x").await,
            "b"
        );
        assert_eq!(pick("metadata.name=c").await, "c");
        let q = Query::namespace(Some("x"))
            .with_fields("metadata.name=b")
            .unwrap();
        assert_eq!(names(&s.list(Kind::Pod, &q).await.unwrap()), ["b"]);
        let q = Query::namespace(Some("z"));
        assert!(s.list(Kind::Pod, &q).await.unwrap().is_empty());
    }

    /// Decoding a big list on several threads gives what decoding it in order gives: every
    /// object in the list's order, and of two bad objects the first one's error.
    #[test]
    fn a_big_list_decodes_in_order_and_fails_on_its_first_bad_object() {
        #[derive(Debug, Deserialize)]
        struct Spec {
            replicas: u32,
        }
        #[derive(Debug, Deserialize)]
        struct Thing {
            spec: Spec,
        }
        let n = 3 * PARALLEL_DECODE_MIN + 7;
        let item = |i: usize, replicas: &str| {
            format!(
                r#"{{"metadata":{{"name":"p{i:05}","namespace":"x"}},"spec":{{"replicas":{replicas}}}}}"#
            )
        };
        let list = |bad: &[usize]| {
            let items: Vec<String> = (0..n)
                .map(|i| {
                    if bad.contains(&i) {
                        item(i, "\"many\"")
                    } else {
                        item(i, &i.to_string())
                    }
                })
                .collect();
            format!(r#"{{"kind":"PodList","items":[{}]}}"#, items.join(","))
        };
        let good = source_from("pods.json", &list(&[]));
        let things: Vec<Thing> =
            futures::executor::block_on(good.list_decoded(Kind::Pod, &Query::all())).unwrap();
        assert_eq!(
            things
                .iter()
                .map(|t| t.spec.replicas as usize)
                .collect::<Vec<_>>(),
            (0..n).collect::<Vec<_>>()
        );
        // The bad objects sit in the last and the second part of the list.
        let bad = source_from("pods.json", &list(&[n - 2, PARALLEL_DECODE_MIN + 5]));
        let err = futures::executor::block_on(bad.list_decoded::<Thing>(Kind::Pod, &Query::all()))
            .unwrap_err();
        assert!(
            err.to_string().contains(&format!(
                "Pod x/p{:05}: spec.replicas",
                PARALLEL_DECODE_MIN + 5
            )),
            "{err}"
        );
    }
}
