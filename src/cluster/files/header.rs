//! An object's header (name, namespace, where its labels are, its newest timestamp), read
//! in one pass over its bytes without building a tree.

use std::borrow::Cow;
use std::fmt;

use serde::Deserializer;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::time::{TimeKey, TimeNotes};
use super::{Origin, json_message};
use crate::error::{Error, Result};

/// A map key, matched against a fixed list without allocating: `Some(index)` or `None`.
pub(super) struct KeyIn(pub(super) &'static [&'static str]);

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
pub(super) struct RawHeader<'de> {
    pub(super) is_object: bool,
    pub(super) kind: Option<Cow<'de, str>>,
    pub(super) name: Option<Cow<'de, str>>,
    pub(super) namespace: Option<Cow<'de, str>>,
    pub(super) odd_namespace: bool,
    /// The text of `metadata.labels`, a slice of the object's text.
    pub(super) labels: Option<&'de str>,
    pub(super) newest: TimeNotes,
}

pub(super) fn parse_header<'de>(text: &'de str, origin: &Origin) -> Result<RawHeader<'de>> {
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
pub(super) type Labels<'de> = Vec<(Cow<'de, str>, Option<Cow<'de, str>>)>;

pub(super) struct LabelsSeed<'a, 'de>(pub(super) &'a mut Labels<'de>, pub(super) &'a mut TimeNotes);

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
pub(super) struct StrSeed<'n>(pub(super) &'n mut TimeNotes);

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

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use crate::cluster::selector::LabelSelector;

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
}
