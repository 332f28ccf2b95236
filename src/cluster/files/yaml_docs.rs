//! YAML: serde-saphyr streams each document's events; each object is written out as compact
//! JSON as soon as it is read (limits and dialect: [`crate::cluster::yaml`]).

use std::fmt;
use std::path::Path;

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::header::parse_header;
use super::{
    FileText, Kind, Origin, Parsed, RawFiles, SNAPSHOT_KIND, fill_kind, left_out, list_entries,
    make_entry,
};
use crate::cluster::yaml;
use crate::error::{Error, Result};

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
/// of nesting, about 20 kB a level in a debug build: the [`yaml::MAX_DEPTH`] levels the
/// limits let through need ~2 MB, as much as a test thread or a tokio worker has, and a stack
/// overflow aborts the process. Only what is touched of it is ever memory.
const YAML_STACK: usize = 16 << 20;

pub(super) fn parse_yaml_into(path: &Path, text: &str, found: &mut RawFiles) -> Result<Parsed> {
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
            yaml::read_options(text.len()),
        )
        .map_err(|e| yaml::describe_error(&e))
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
            format!(
                "invalid YAML: {}",
                crate::cluster::decode::shorten(&message)
            ),
        )
    })?;
    // No document is, or looks like, a Kubernetes object (see `Parsed::NotKubernetes`).
    let foreign = docs.iter().any(|d| !matches!(d, Doc::Null))
        && docs.iter().all(|d| {
            matches!(
                d,
                Doc::Null
                    | Doc::NotObject(_)
                    | Doc::NoKind {
                        kubernetes_like: false
                    }
            )
        });
    let refuse = |e: Error| {
        if foreign {
            Ok(Parsed::NotKubernetes(e))
        } else {
            Err(e)
        }
    };
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
                    found.left_out = left_out(top.get("scope"));
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
            Doc::NoKind { .. } => {
                return refuse(Error::bad_input(
                    &origin,
                    "document has neither `kind` nor `items`: not a Kubernetes object or List",
                ));
            }
            Doc::NotObject(what) => {
                return refuse(Error::bad_input(
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
    Ok(Parsed::Read)
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
    /// An object without `kind` or `items`; `kubernetes_like` when it has `apiVersion`,
    /// `kind` (not a string) or `metadata` all the same (a broken object, not another file).
    NoKind { kubernetes_like: bool },
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
            let kubernetes_like = ["apiVersion", "kind", "metadata"]
                .iter()
                .any(|k| top.contains_key(*k));
            return Ok(YamlDoc {
                json,
                doc: Doc::NoKind { kubernetes_like },
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

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::super::tests::parse;
    use crate::cluster::Kind;

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
}
