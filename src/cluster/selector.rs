//! Kubernetes label and field selectors, parsed once and evaluated against raw objects.
//!
//! The snapshot source answers queries with these exactly as an API server would, so a
//! `--from` run and a live run select the same objects.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

/// One requirement of a label selector (`a=b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelRequirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed label selector: all requirements must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    pub requirements: Vec<LabelRequirement>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid selector {input:?}: {problem}")]
pub struct SelectorError {
    pub input: String,
    pub problem: String,
}

fn selector_error(input: &str, problem: impl Into<String>) -> SelectorError {
    SelectorError {
        input: input.to_string(),
        problem: problem.into(),
    }
}

/// Splits on commas that are not inside parentheses.
fn split_top_level(input: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in input.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&input[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&input[start..]);
    parts
}

fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn parse_set(input: &str, raw: &str) -> Result<Vec<String>, SelectorError> {
    let raw = raw.trim();
    let inner = raw
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| {
            selector_error(
                input,
                format!("expected a parenthesised set, found {raw:?}"),
            )
        })?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect())
}

impl LabelSelector {
    /// `-l SELECTOR` and `--node NODE` of `status` and `record` as one selector on VMIs
    /// (KubeVirt labels each VMI with its node: `kubevirt.io/nodeName`).
    pub fn for_vmis(
        selector: Option<&str>,
        node: Option<&str>,
    ) -> Result<LabelSelector, SelectorError> {
        let mut labels = match selector {
            Some(s) => LabelSelector::parse(s)?,
            None => LabelSelector::default(),
        };
        if let Some(node) = node {
            labels.requirements.push(LabelRequirement::Equals(
                "kubevirt.io/nodeName".into(),
                node.to_string(),
            ));
        }
        Ok(labels)
    }

    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        let mut requirements = Vec::new();
        if input.trim().is_empty() {
            return Ok(Self { requirements });
        }
        for part in split_top_level(input) {
            let part = part.trim();
            if part.is_empty() {
                return Err(selector_error(input, "empty requirement"));
            }
            let req = if let Some(key) = part.strip_prefix('!') {
                LabelRequirement::NotExists(key.trim().to_string())
            } else if let Some((k, v)) = part.split_once("!=") {
                LabelRequirement::NotEquals(k.trim().to_string(), v.trim().to_string())
            } else if let Some((k, v)) = part.split_once("==") {
                LabelRequirement::Equals(k.trim().to_string(), v.trim().to_string())
            } else if let Some((k, v)) = part.split_once('=') {
                LabelRequirement::Equals(k.trim().to_string(), v.trim().to_string())
            } else if let Some((k, set)) = part.split_once(" notin ") {
                LabelRequirement::NotIn(k.trim().to_string(), parse_set(input, set)?)
            } else if let Some((k, set)) = part.split_once(" in ") {
                LabelRequirement::In(k.trim().to_string(), parse_set(input, set)?)
            } else {
                LabelRequirement::Exists(part.to_string())
            };
            let key = match &req {
                LabelRequirement::Equals(k, _)
                | LabelRequirement::NotEquals(k, _)
                | LabelRequirement::In(k, _)
                | LabelRequirement::NotIn(k, _)
                | LabelRequirement::Exists(k)
                | LabelRequirement::NotExists(k) => k,
            };
            if !valid_key(key) {
                return Err(selector_error(input, format!("invalid label key {key:?}")));
            }
            requirements.push(req);
        }
        Ok(Self { requirements })
    }

    /// Equality selector from a map (`matchLabels`, a MigrationPolicy selector…).
    pub fn from_map(map: &BTreeMap<String, String>) -> Self {
        Self {
            requirements: map
                .iter()
                .map(|(k, v)| LabelRequirement::Equals(k.clone(), v.clone()))
                .collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Evaluates against a label lookup.
    pub fn matches_with<'a>(&self, label: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.requirements.iter().all(|req| match req {
            LabelRequirement::Equals(k, v) => label(k) == Some(v.as_str()),
            LabelRequirement::NotEquals(k, v) => label(k) != Some(v.as_str()),
            LabelRequirement::In(k, set) => label(k).is_some_and(|l| set.iter().any(|v| v == l)),
            LabelRequirement::NotIn(k, set) => {
                !label(k).is_some_and(|l| set.iter().any(|v| v == l))
            }
            LabelRequirement::Exists(k) => label(k).is_some(),
            LabelRequirement::NotExists(k) => label(k).is_none(),
        })
    }

    pub fn matches_labels(&self, labels: &BTreeMap<String, String>) -> bool {
        self.matches_with(|k| labels.get(k).map(String::as_str))
    }

    /// Evaluates against a raw object's `metadata.labels`.
    pub fn matches_object(&self, object: &Value) -> bool {
        if self.requirements.is_empty() {
            return true;
        }
        let labels = object.get("metadata").and_then(|m| m.get("labels"));
        self.matches_with(|k| labels.and_then(|l| l.get(k)).and_then(Value::as_str))
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .requirements
            .iter()
            .map(|r| match r {
                LabelRequirement::Equals(k, v) => format!("{k}={v}"),
                LabelRequirement::NotEquals(k, v) => format!("{k}!={v}"),
                LabelRequirement::In(k, s) => format!("{k} in ({})", s.join(",")),
                LabelRequirement::NotIn(k, s) => format!("{k} notin ({})", s.join(",")),
                LabelRequirement::Exists(k) => k.clone(),
                LabelRequirement::NotExists(k) => format!("!{k}"),
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// One field-selector term: `path=value` or `path!=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequirement {
    pub field: String,
    pub value: String,
    pub negated: bool,
    /// `field` as path segments, split once.
    segments: Vec<String>,
}

/// A parsed field selector (`spec.nodeName=node-3,status.phase!=Succeeded`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    pub requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        let mut requirements = Vec::new();
        if input.trim().is_empty() {
            return Ok(Self { requirements });
        }
        for part in input.split(',') {
            let part = part.trim();
            let (field, value, negated) = if let Some((f, v)) = part.split_once("!=") {
                (f, v, true)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, v, false)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, v, false)
            } else {
                return Err(selector_error(
                    input,
                    format!("{part:?} is not field=value"),
                ));
            };
            let field = field.trim();
            if field.is_empty() {
                return Err(selector_error(input, "empty field name"));
            }
            requirements.push(FieldRequirement {
                field: field.to_string(),
                value: value.trim().to_string(),
                negated,
                segments: field.split('.').map(str::to_string).collect(),
            });
        }
        Ok(Self { requirements })
    }

    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The dotted field paths this selector reads.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.requirements.iter().map(|r| r.field.as_str())
    }

    /// Evaluates against a raw object; a missing field compares as the empty string, as the
    /// API server does.
    pub fn matches_object(&self, object: &Value) -> bool {
        self.requirements.iter().all(|req| {
            let found = req.segments.iter().try_fold(object, |v, key| v.get(key));
            let equal = match found {
                Some(Value::String(s)) => *s == req.value,
                Some(Value::Null) | None => req.value.is_empty(),
                // Numbers and booleans compare by their JSON text (`replicas=3`).
                Some(other) => serde_json::from_str::<Value>(&req.value).is_ok_and(|v| v == *other),
            };
            equal != req.negated
        })
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .requirements
            .iter()
            .map(|r| {
                format!(
                    "{}{}{}",
                    r.field,
                    if r.negated { "!=" } else { "=" },
                    r.value
                )
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// A bad selector is a usage error.
impl From<SelectorError> for crate::error::Error {
    fn from(err: SelectorError) -> Self {
        crate::error::Error::usage(err.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Value {
        json!({
            "metadata": {"name": "virt-launcher-a", "namespace": "prod",
                         "labels": {"kubevirt.io": "virt-launcher", "tier": "db"}},
            "spec": {"nodeName": "node-3"},
            "status": {"phase": "Running"}
        })
    }

    #[test]
    fn label_equality_and_inequality() {
        assert!(
            LabelSelector::parse("kubevirt.io=virt-launcher")
                .unwrap()
                .matches_object(&pod())
        );
        assert!(
            LabelSelector::parse("kubevirt.io==virt-launcher,tier=db")
                .unwrap()
                .matches_object(&pod())
        );
        assert!(
            !LabelSelector::parse("tier!=db")
                .unwrap()
                .matches_object(&pod())
        );
        assert!(
            LabelSelector::parse("missing!=x")
                .unwrap()
                .matches_object(&pod())
        );
    }

    #[test]
    fn label_sets_and_existence() {
        assert!(
            LabelSelector::parse("tier in (web, db)")
                .unwrap()
                .matches_object(&pod())
        );
        assert!(
            !LabelSelector::parse("tier notin (db)")
                .unwrap()
                .matches_object(&pod())
        );
        assert!(
            LabelSelector::parse("tier,!absent")
                .unwrap()
                .matches_object(&pod())
        );
        assert!(
            !LabelSelector::parse("absent")
                .unwrap()
                .matches_object(&pod())
        );
    }

    #[test]
    fn label_parse_errors_name_the_input() {
        let err = LabelSelector::parse("a=b,,c").unwrap_err();
        assert!(err.to_string().contains("a=b,,c"), "{err}");
        assert!(LabelSelector::parse("x in y").is_err());
        assert!(LabelSelector::parse("bad key=1").is_err());
    }

    #[test]
    fn field_selectors() {
        let s = FieldSelector::parse("spec.nodeName=node-3,status.phase!=Succeeded").unwrap();
        assert!(s.matches_object(&pod()));
        assert!(
            !FieldSelector::parse("spec.nodeName=node-1")
                .unwrap()
                .matches_object(&pod())
        );
        assert!(
            FieldSelector::parse("spec.missing=")
                .unwrap()
                .matches_object(&pod())
        );
        assert!(FieldSelector::parse("nonsense").is_err());
        assert_eq!(
            s.to_string(),
            "spec.nodeName=node-3,status.phase!=Succeeded"
        );
    }
}
