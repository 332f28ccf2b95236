//! JSON: the top-level shape with borrowed items, then one header pass per item.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use serde::Deserializer;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::header::{KeyIn, StrSeed, parse_header};
use super::time::TimeNotes;
use super::{FileText, Kind, Origin, Parsed, RawFiles, SNAPSHOT_KIND, list_entries, make_entry};
use crate::error::{Error, Result};

pub(super) fn parse_json_into(path: &Path, text: String, found: &mut RawFiles) -> Result<Parsed> {
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
        // Not a Kubernetes document at all (`Parsed::NotKubernetes`).
        Top::Other(what) => {
            return Ok(Parsed::NotKubernetes(Error::bad_input(
                &origin,
                format!("expected a Kubernetes object or List, found {what}"),
            )));
        }
        Top::Object {
            kind,
            captured_at,
            server_version,
            left_out,
            items: Some(items),
            ..
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
                found.left_out = left_out;
            }
            let spans: Vec<(usize, usize)> = items.iter().map(|item| span_of(item.get())).collect();
            drop(items);
            entries = list_entries(kind, &spans, &text, file, 1, &origin, found)?;
        }
        Top::Object {
            kind,
            items: None,
            kubernetes_like,
            ..
        } => {
            let kind = kind.map(Cow::into_owned).unwrap_or_default();
            if kind.is_empty() {
                let e = Error::bad_input(
                    &origin,
                    "document has neither `kind` nor `items`: not a Kubernetes object or List",
                );
                return if kubernetes_like {
                    Err(e)
                } else {
                    Ok(Parsed::NotKubernetes(e))
                };
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
    Ok(Parsed::Read)
}

/// serde errors end with " at line X column Y"; the location is already in the prefix.
fn strip_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// A file's top-level value, with a List's items borrowed from the text.
enum Top<'de> {
    Null,
    Other(&'static str),
    Object {
        kind: Option<Cow<'de, str>>,
        captured_at: Option<Cow<'de, str>>,
        server_version: Option<Cow<'de, str>>,
        /// `scope.leftOut` of a vmctl snapshot.
        left_out: Vec<String>,
        items: Option<Items<'de>>,
        /// It has `apiVersion`, `kind` or `metadata` (see `Parsed::NotKubernetes`).
        kubernetes_like: bool,
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
        let mut left_out = Vec::new();
        let mut kubernetes_like = false;
        // Later duplicate keys win, as they do in a `Value`.
        while let Some(key) = map.next_key_seed(KeyIn(&[
            "kind",
            "capturedAt",
            "items",
            "serverVersion",
            "scope",
            "apiVersion",
            "metadata",
        ]))? {
            match key {
                Some(0) => {
                    kubernetes_like = true;
                    kind = map.next_value_seed(StrSeed(&mut TimeNotes::default()))?
                }
                Some(1) => captured_at = map.next_value_seed(StrSeed(&mut TimeNotes::default()))?,
                Some(2) => items = Some(map.next_value_seed(ItemsSeed)?),
                Some(3) => {
                    server_version = map.next_value_seed(StrSeed(&mut TimeNotes::default()))?
                }
                // A snapshot's scope: a few short lines, read as a tree.
                Some(4) => {
                    left_out = super::left_out(Some(&map.next_value::<serde_json::Value>()?))
                }
                Some(_) => {
                    kubernetes_like = true;
                    map.next_value::<IgnoredAny>()?;
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Top::Object {
            kind,
            captured_at,
            server_version,
            left_out,
            items,
            kubernetes_like,
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

#[cfg(test)]
mod tests {
    use super::super::tests::parse;

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
    fn a_single_json_object_is_its_whole_text() {
        let text = "\n  {\"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}}\n\n";
        let found = parse("n.json", text).unwrap();
        assert_eq!(
            found.text(&found.entries[0]),
            "{\"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}}"
        );
        assert_eq!(found.value(&found.entries[0]).unwrap()["apiVersion"], "v1");
    }
}
