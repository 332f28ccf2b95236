//! The snapshot source: answers queries from files exactly as an API server would.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Kind;
use super::files::{self, RawObject};
use serde::de::DeserializeOwned;

use super::source::{Query, Source, decode_ref, object_label};
use crate::error::{Error, Result};

pub struct SnapshotSource {
    path: PathBuf,
    by_kind: HashMap<Kind, Vec<RawObject>>,
    captured_at: Option<String>,
}

impl SnapshotSource {
    pub fn open(path: &Path) -> Result<Self> {
        let found = files::read_path(path)?;
        Ok(Self::from_objects(path, found.objects, found.captured_at))
    }

    pub fn from_objects(path: &Path, objects: Vec<RawObject>, captured_at: Option<String>) -> Self {
        let mut by_kind: HashMap<Kind, Vec<RawObject>> = HashMap::new();
        for object in objects {
            by_kind.entry(object.kind).or_default().push(object);
        }
        for list in by_kind.values_mut() {
            // Same order as an API server: namespace, then name. Later duplicates win
            // (a directory may hold the same object twice, e.g. a list and a single dump).
            list.sort_by(|a, b| (a.namespace(), a.name()).cmp(&(b.namespace(), b.name())));
            list.dedup_by(|later, earlier| {
                let same =
                    later.namespace() == earlier.namespace() && later.name() == earlier.name();
                if same {
                    std::mem::swap(later, earlier);
                }
                same
            });
        }
        SnapshotSource {
            path: path.to_path_buf(),
            by_kind,
            captured_at,
        }
    }

    /// `capturedAt` of a vmctl snapshot, if the files are one.
    pub fn captured_at(&self) -> Option<&str> {
        self.captured_at.as_deref()
    }

    /// The newest timestamp anywhere in the objects: the "as of" of a must-gather dump
    /// that carries no capture time.
    pub fn newest_timestamp(&self) -> Option<String> {
        let mut newest: Option<String> = None;
        for object in self.by_kind.values().flatten() {
            visit_timestamps(&object.value, &mut |t| {
                if newest.as_deref().is_none_or(|n| t > n) {
                    newest = Some(t.to_string());
                }
            });
        }
        newest
    }

    pub fn objects(&self, kind: Kind) -> &[RawObject] {
        self.by_kind.get(&kind).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// Calls `f` with every RFC 3339 UTC timestamp string (`2026-11-29T03:00:00Z`) in a value.
fn visit_timestamps(value: &Value, f: &mut impl FnMut(&str)) {
    match value {
        Value::String(s) if looks_like_timestamp(s) => f(s),
        Value::Array(items) => items.iter().for_each(|v| visit_timestamps(v, f)),
        Value::Object(map) => map.values().for_each(|v| visit_timestamps(v, f)),
        _ => {}
    }
}

fn looks_like_timestamp(s: &str) -> bool {
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

impl SnapshotSource {
    /// The objects a query selects, as an API server would select them.
    fn select<'a>(
        &'a self,
        kind: Kind,
        query: &'a Query,
    ) -> Result<impl Iterator<Item = &'a RawObject>> {
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
        Ok(self
            .objects(kind)
            .iter()
            .filter(move |o| match (&query.namespace, kind.namespaced()) {
                (Some(ns), true) => o.namespace() == Some(ns.as_str()),
                _ => true,
            })
            .filter(|o| query.labels.matches_object(&o.value))
            .filter(|o| query.fields.matches_object(&o.value)))
    }
}

impl Source for SnapshotSource {
    async fn list(&self, kind: Kind, query: &Query) -> Result<Vec<Value>> {
        Ok(self.select(kind, query)?.map(|o| o.value.clone()).collect())
    }

    async fn list_decoded<T: DeserializeOwned + Send>(
        &self,
        kind: Kind,
        query: &Query,
    ) -> Result<Vec<T>> {
        self.select(kind, query)?
            .map(|o| decode_ref(self, kind, &o.value))
            .collect()
    }

    async fn get(&self, kind: Kind, namespace: Option<&str>, name: &str) -> Result<Option<Value>> {
        Ok(self
            .objects(kind)
            .iter()
            .find(|o| o.name() == name && (!kind.namespaced() || o.namespace() == namespace))
            .map(|o| o.value.clone()))
    }

    fn describe(&self) -> String {
        format!("snapshot {}", self.path.display())
    }

    fn origin_of(&self, kind: Kind, value: &Value) -> String {
        let label = object_label(kind, value);
        let name = value.pointer("/metadata/name").and_then(Value::as_str);
        let ns = value.pointer("/metadata/namespace").and_then(Value::as_str);
        match self
            .objects(kind)
            .iter()
            .find(|o| Some(o.name()) == name && o.namespace() == ns)
        {
            Some(o) => format!("{}: {label}", o.origin),
            None => label,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::files::FileObjects;

    fn source(text: &str) -> SnapshotSource {
        let mut found = FileObjects::default();
        files::parse_text_into(Path::new("t.yaml"), text, &mut found).unwrap();
        SnapshotSource::from_objects(Path::new("t.yaml"), found.objects, None)
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
}
