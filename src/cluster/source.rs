//! The one trait every command reads the world through.

use std::future::Future;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Kind;
use super::selector::{FieldSelector, LabelSelector};
use crate::error::{Error, Result};

/// What to list: a namespace (None = all namespaces, or a cluster-scoped kind) and
/// server-side selectors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    pub namespace: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

impl Query {
    pub fn all() -> Self {
        Self::default()
    }

    pub fn namespace(namespace: Option<&str>) -> Self {
        Query {
            namespace: namespace.map(str::to_string),
            ..Self::default()
        }
    }

    pub fn with_labels(mut self, labels: LabelSelector) -> Self {
        self.labels = labels;
        self
    }

    pub fn with_label(self, selector: &str) -> Result<Self> {
        Ok(self.with_labels(LabelSelector::parse(selector)?))
    }

    pub fn with_fields(mut self, fields: &str) -> Result<Self> {
        self.fields = FieldSelector::parse(fields)?;
        Ok(self)
    }
}

/// A source of cluster objects: a live API server or snapshot files.
///
/// Both answer the same queries with the same objects (raw JSON with `kind` and
/// `apiVersion` filled in), so every read-only command works offline exactly as live.
pub trait Source: Send + Sync {
    /// Lists objects of `kind` matching `query` (all pages).
    fn list(&self, kind: Kind, query: &Query) -> impl Future<Output = Result<Vec<Value>>> + Send;

    /// [`Self::list`], but only an answer of at most `max` objects: `Ok(None)` when there
    /// are more (a live source stops reading at the first page that passes `max`, so what
    /// is held stays bounded).
    fn list_at_most(
        &self,
        kind: Kind,
        query: &Query,
        max: usize,
    ) -> impl Future<Output = Result<Option<Vec<Value>>>> + Send {
        async move {
            let values = self.list(kind, query).await?;
            Ok((values.len() <= max).then_some(values))
        }
    }

    /// Gets one object; `Ok(None)` when it does not exist.
    fn get(
        &self,
        kind: Kind,
        namespace: Option<&str>,
        name: &str,
    ) -> impl Future<Output = Result<Option<Value>>> + Send;

    /// Lists and decodes into a model type. Sources that hold objects already (snapshots)
    /// decode from their own copy instead of cloning it first.
    fn list_decoded<T: DeserializeOwned + Send>(
        &self,
        kind: Kind,
        query: &Query,
    ) -> impl Future<Output = Result<Vec<T>>> + Send {
        async move {
            let values = self.list(kind, query).await?;
            values.into_iter().map(|v| decode(self, kind, v)).collect()
        }
    }

    /// [`Self::list_decoded`] for commands that can do without an object that does not
    /// decode: the objects that do, and for each one that does not, the error naming it and
    /// its field. The fast path is the strict one; only a failure lists again, object by
    /// object.
    fn list_decoded_lenient<T: DeserializeOwned + Send>(
        &self,
        kind: Kind,
        query: &Query,
    ) -> impl Future<Output = Result<(Vec<T>, Vec<String>)>> + Send {
        async move {
            match self.list_decoded::<T>(kind, query).await {
                Ok(objects) => Ok((objects, Vec::new())),
                Err(Error::BadInput { .. }) => {
                    let values = self.list(kind, query).await?;
                    let mut objects = Vec::with_capacity(values.len());
                    let mut skipped = Vec::new();
                    for value in values {
                        match decode::<T, _>(self, kind, value) {
                            Ok(t) => objects.push(t),
                            Err(e) => skipped.push(e.to_string()),
                        }
                    }
                    Ok((objects, skipped))
                }
                Err(e) => Err(e),
            }
        }
    }

    /// The API server's version: `/version` live, `serverVersion` of a vmctl snapshot;
    /// `Ok(None)` when the source does not know it.
    fn server_version(
        &self,
    ) -> impl Future<Output = Result<Option<crate::model::ServerVersion>>> + Send {
        async { Ok(None) }
    }

    /// Whether one big list is read faster as several smaller ones at once: true for an API
    /// server, where every page of a paginated list waits a round trip after the one before;
    /// false for files, read in one pass ([`list_split_by_namespace`]).
    fn splits_lists(&self) -> bool {
        false
    }

    /// A one-line description for headers and errors ("snapshot examples/cluster").
    fn describe(&self) -> String;

    /// Where an object came from, for decode errors (a file, or the API resource).
    fn origin_of(&self, kind: Kind, value: &Value) -> String {
        object_label(kind, value)
    }
}

/// Fills in the `kind` and `apiVersion` that built-in lists leave out of each item (FACTS
/// §11), so every object reads the same downstream, from a file or from the API.
pub fn fill_kind(kind: Kind, value: &mut Value) {
    if let Value::Object(map) = value {
        map.entry("kind")
            .or_insert_with(|| Value::String(kind.name().to_string()));
        map.entry("apiVersion")
            .or_insert_with(|| Value::String(kind.api_version()));
    }
}

/// `Kind namespace/name` of a raw object.
pub fn object_label(kind: Kind, value: &Value) -> String {
    let name = value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("?");
    match value.pointer("/metadata/namespace").and_then(Value::as_str) {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

/// Decodes a raw object into a model type, naming the object (and file) on failure.
pub fn decode<T: DeserializeOwned, S: Source + ?Sized>(
    source: &S,
    kind: Kind,
    value: Value,
) -> Result<T> {
    decode_ref(source, kind, &value)
}

/// Decodes from a reference: no copy of the object on the happy path.
pub fn decode_ref<T: DeserializeOwned, S: Source + ?Sized>(
    source: &S,
    kind: Kind,
    value: &Value,
) -> Result<T> {
    super::decode::from_value(value)
        .map_err(|message| Error::bad_input(source.origin_of(kind, value), message))
}

/// Lists and decodes.
pub async fn list_as<T: DeserializeOwned + Send>(
    source: &impl Source,
    kind: Kind,
    query: &Query,
) -> Result<Vec<T>> {
    source.list_decoded(kind, query).await
}

/// [`Source::list_decoded_lenient`] as a free function, like [`list_as`].
pub async fn list_lenient<T: DeserializeOwned + Send>(
    source: &impl Source,
    kind: Kind,
    query: &Query,
) -> Result<(Vec<T>, Vec<String>)> {
    source.list_decoded_lenient(kind, query).await
}

/// How many LISTs [`list_split_by_namespace`] has in flight at once.
pub const PARALLEL_LISTS: usize = 16;

/// Up to this many namespaces [`list_split_by_namespace`] splits a list; past it the requests
/// (one per namespace) would cost more round trips than the pages of one list save.
pub const MAX_SPLIT_NAMESPACES: usize = 64;

/// Every object of a namespaced `kind`, as one cluster-wide paginated list would give them,
/// read from a source that [`Source::splits_lists`] as one LIST per namespace of `namespaces`
/// plus one for the objects of every other namespace (`metadata.namespace!=A,…`: one created
/// since `namespaces` was read, or one a snapshot holds no Namespace object for), at most
/// [`PARALLEL_LISTS`] at a time. A paginated list waits a round trip per page of 500, one
/// after the other (22 pages for the pods of a 10k-VMI cluster); split, the pages of different
/// namespaces overlap. Every Kubernetes resource can be selected on `metadata.namespace`, with
/// `!=` and comma-separated terms (kubernetes pkg/registry/core/pod/strategy.go
/// `PodToSelectableFields` starts from `generic.ObjectMetaFieldsSet(&pod.ObjectMeta, true)`,
/// staging/src/k8s.io/apiserver/pkg/registry/generic/matcher.go; the docs' "Field selectors"
/// page: "All resource types support the metadata.name and metadata.namespace fields").
///
/// The objects come namespace by namespace in the order of `namespaces`, then the rest: a
/// caller that needs an API server's order (namespace, then name) sorts them. The lists are
/// not one snapshot at one resourceVersion, as the pages of one list are; each is consistent
/// in itself. A source that does not split lists, more than [`MAX_SPLIT_NAMESPACES`]
/// namespaces, or a name that is not a DNS label (it could not be written in a field
/// selector) read one cluster-wide list instead.
pub async fn list_split_by_namespace<T: DeserializeOwned + Send>(
    source: &impl Source,
    kind: Kind,
    namespaces: &[&str],
) -> Result<Vec<T>> {
    use futures::{StreamExt as _, TryStreamExt as _};
    let splits = source.splits_lists()
        && kind.namespaced()
        && namespaces.len() <= MAX_SPLIT_NAMESPACES
        && namespaces.iter().all(|n| is_dns_label(n));
    if !splits {
        return list_as(source, kind, &Query::all()).await;
    }
    let rest = namespaces
        .iter()
        .map(|n| format!("metadata.namespace!={n}"))
        .collect::<Vec<_>>()
        .join(",");
    let queries = namespaces
        .iter()
        .map(|n| Ok(Query::namespace(Some(n))))
        .chain(std::iter::once(Query::all().with_fields(&rest)))
        .collect::<Result<Vec<Query>>>()?;
    let lists: Vec<Vec<T>> = futures::stream::iter(queries.iter())
        .map(|query| list_as::<T>(source, kind, query))
        .buffered(PARALLEL_LISTS)
        .try_collect()
        .await?;
    Ok(lists.into_iter().flatten().collect())
}

/// A DNS-1123 label, what a namespace's name is (kubernetes
/// staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go `IsDNS1123Label`).
fn is_dns_label(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Gets and decodes.
pub async fn get_as<T: DeserializeOwned>(
    source: &impl Source,
    kind: Kind,
    namespace: Option<&str>,
    name: &str,
) -> Result<Option<T>> {
    match source.get(kind, namespace, name).await? {
        Some(v) => decode(source, kind, v).map(Some),
        None => Ok(None),
    }
}

/// A read the report does without when the user may not do it: `Err(note)` says what is
/// missing.
pub async fn optional<T>(
    read: impl Future<Output = Result<(Vec<T>, Vec<String>)>>,
    what: &str,
    missing: &str,
) -> Result<std::result::Result<(Vec<T>, Vec<String>), String>> {
    match read.await {
        Ok(found) => Ok(Ok(found)),
        Err(Error::Api {
            status: Some(status @ (403 | 404 | 429 | 500..=599)),
            message,
            ..
        }) => Ok(Err(format!(
            "could not read {what} (HTTP {status}: {message}): {missing}"
        ))),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;

    /// Pods in namespaces a, b and c, answering queries as an API server does; every query
    /// recorded.
    struct Pods {
        splits: bool,
        queries: Mutex<Vec<Query>>,
    }

    impl Pods {
        fn new(splits: bool) -> Self {
            Pods {
                splits,
                queries: Mutex::new(Vec::new()),
            }
        }
    }

    impl Source for Pods {
        async fn list(&self, kind: Kind, query: &Query) -> Result<Vec<Value>> {
            self.queries.lock().unwrap().push(query.clone());
            Ok(["a/1", "a/2", "b/1", "c/1"]
                .iter()
                .filter_map(|key| key.split_once('/'))
                .map(|(ns, name)| {
                    json!({"kind": kind.name(), "metadata": {"namespace": ns, "name": name}})
                })
                .filter(|p| {
                    query
                        .namespace
                        .as_deref()
                        .is_none_or(|ns| p["metadata"]["namespace"] == ns)
                        && query.fields.matches_object(p)
                })
                .collect())
        }

        async fn get(&self, _: Kind, _: Option<&str>, _: &str) -> Result<Option<Value>> {
            Ok(None)
        }

        fn splits_lists(&self) -> bool {
            self.splits
        }

        fn describe(&self) -> String {
            "pods".into()
        }
    }

    fn keys(objects: &[Value]) -> Vec<String> {
        objects
            .iter()
            .map(|p| format!("{}/{}", p["metadata"]["namespace"], p["metadata"]["name"]))
            .map(|k| k.replace('"', ""))
            .collect()
    }

    #[tokio::test]
    async fn a_split_list_reads_every_object_once_namespace_by_namespace_then_the_rest() {
        let source = Pods::new(true);
        let pods: Vec<Value> = list_split_by_namespace(&source, Kind::Pod, &["b", "a"])
            .await
            .unwrap();
        // c has no Namespace in the list (created since, or a snapshot's): the last query.
        assert_eq!(keys(&pods), ["b/1", "a/1", "a/2", "c/1"]);
        let queries = source.queries.lock().unwrap().clone();
        assert_eq!(
            queries,
            [
                Query::namespace(Some("b")),
                Query::namespace(Some("a")),
                Query::all()
                    .with_fields("metadata.namespace!=b,metadata.namespace!=a")
                    .unwrap(),
            ]
        );
    }

    #[tokio::test]
    async fn one_list_when_splitting_does_not_pay_or_cannot_be_written() {
        let many: Vec<String> = (0..=MAX_SPLIT_NAMESPACES)
            .map(|i| format!("n{i}"))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        for (splits, namespaces) in [
            // Files: one pass whatever the namespaces.
            (false, vec!["a", "b"]),
            // A name that is not a DNS label would not read back from a field selector.
            (true, vec!["a", "b,metadata.name=x"]),
            (true, many),
        ] {
            let source = Pods::new(splits);
            let pods: Vec<Value> = list_split_by_namespace(&source, Kind::Pod, &namespaces)
                .await
                .unwrap();
            assert_eq!(keys(&pods), ["a/1", "a/2", "b/1", "c/1"]);
            assert_eq!(*source.queries.lock().unwrap(), [Query::all()]);
        }
        assert!(is_dns_label("team-00") && !is_dns_label("-a") && !is_dns_label("A"));
    }
}
