//! `metav1.LabelSelector` matching with Kubernetes' semantics, through kube-core's types.
//!
//! kube-core 5's `Selector` (from `TryFrom<LabelSelector>`) matches exactly as Kubernetes'
//! `labels.Selector` does (In, NotIn, Exists, DoesNotExist, matchLabels as Equals, all ANDed;
//! an empty selector selects everything), but it accepts selectors that Kubernetes'
//! `metav1.LabelSelectorAsSelector` refuses (`labels.NewRequirement` in
//! apimachinery `pkg/labels/selector.go`):
//! - `In`/`NotIn` with an empty `values` list (`values: []`): kube-core builds a requirement
//!   that selects nothing (`In`) or everything (`NotIn`); Kubernetes: "for 'in', 'notin'
//!   operators, values set can't be empty";
//! - `Exists`/`DoesNotExist` with values: kube-core ignores them; Kubernetes: "values set must
//!   be empty for exists and does not exist";
//! - keys and values that are not label keys / label values: kube-core does not check them;
//! - and it has no notion of a null selector (`labels.Nothing()`), which is the caller's.
//!
//! Unknown operators and `In`/`NotIn` without `values` are refused by both.
//! [`CompiledSelector::compile`] adds those checks before the conversion, once per selector:
//! matching a pod is then kube-core's, with no allocation.
//!
//! kube-core 5 has no parser of kubectl's `-l` syntax (no `FromStr` for `Selector`), so
//! `cluster::selector` keeps its own.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as ApiLabelSelector;
use kube::core::{Selector, SelectorExt};

/// A `metav1.LabelSelector` compiled once, as `metav1.LabelSelectorAsSelector` reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum CompiledSelector {
    /// The selector is absent or null: `labels.Nothing()`, it selects nothing.
    Nothing,
    /// `{}` (no matchLabels, no matchExpressions): `labels.Everything()`. For a PDB that is
    /// every pod of its namespace (policy/v1; the eviction API honours it from Kubernetes
    /// 1.29.0, 1.28.3 and 1.27.7, kubernetes#119732, #121131, #121132, and skips it before:
    /// `policy::pdb::empty_selector_at_eviction`).
    Everything,
    /// matchLabels AND matchExpressions, through kube-core's matching.
    Labels(Selector),
    /// The selector does not parse (the reason names the field): Kubernetes refuses it
    /// (`LabelSelectorAsSelector` returns an error); it selects nothing here.
    Invalid(String),
}

/// A label key as Kubernetes validates it: an optional DNS-subdomain prefix and `/`, then a
/// name of at most 63 characters, alphanumeric at both ends, `-`, `_` and `.` inside.
fn label_key_problem(key: &str) -> Option<String> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix {
        let dns_ok = !p.is_empty()
            && p.len() <= 253
            && p.split('.').all(|part| {
                !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                    && !part.starts_with('-')
                    && !part.ends_with('-')
            });
        if !dns_ok {
            return Some(format!("key {key:?}: prefix {p:?} is not a DNS subdomain"));
        }
    }
    if name.is_empty() {
        return Some(format!("key {key:?}: the name part must not be empty"));
    }
    label_value_problem(name).map(|p| format!("key {key:?}: {p}"))
}

/// A label value: empty, or at most 63 characters, alphanumeric at both ends, `-`, `_`, `.`
/// inside.
fn label_value_problem(value: &str) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    let alnum = |c: char| c.is_ascii_alphanumeric();
    let ok = value.len() <= 63
        && value
            .chars()
            .all(|c| alnum(c) || matches!(c, '-' | '_' | '.'))
        && value.starts_with(alnum)
        && value.ends_with(alnum);
    (!ok).then(|| {
        format!("{value:?} is not a valid label value (at most 63 characters: alphanumerics, '-', '_', '.', alphanumeric at both ends)")
    })
}

impl CompiledSelector {
    /// Compiles the selector at `field` (named in the reason of an invalid one): null selects
    /// nothing, `{}` everything, else kube-core's `Selector` after Kubernetes' own checks.
    pub fn compile(selector: Option<&ApiLabelSelector>, field: &str) -> CompiledSelector {
        match selector {
            None => CompiledSelector::Nothing,
            Some(s) => Self::compile_present(s, field),
        }
    }

    fn compile_present(s: &ApiLabelSelector, field: &str) -> CompiledSelector {
        use CompiledSelector::{Everything, Invalid, Labels};
        let labels = s.match_labels.as_ref();
        let expressions = s.match_expressions.as_deref().unwrap_or(&[]);
        if labels.is_none_or(BTreeMap::is_empty) && expressions.is_empty() {
            return Everything;
        }
        for (k, v) in labels.into_iter().flatten() {
            if let Some(p) = label_key_problem(k) {
                return Invalid(format!("{field}.matchLabels: {p}"));
            }
            if let Some(p) = label_value_problem(v) {
                return Invalid(format!("{field}.matchLabels[{k:?}]: {p}"));
            }
        }
        for (i, e) in expressions.iter().enumerate() {
            let field = format!("{field}.matchExpressions[{i}]");
            let values = e.values.as_deref().unwrap_or(&[]);
            match e.operator.as_str() {
                "In" | "NotIn" if values.is_empty() => {
                    return Invalid(format!(
                        "{field}.values: must be specified when operator is {:?}",
                        e.operator
                    ));
                }
                "In" | "NotIn" => {}
                "Exists" | "DoesNotExist" if !values.is_empty() => {
                    return Invalid(format!(
                        "{field}.values: may not be specified when operator is {:?}",
                        e.operator
                    ));
                }
                "Exists" | "DoesNotExist" => {}
                other => {
                    return Invalid(format!(
                        "{field}.operator: {other:?} is not a valid operator (In, NotIn, Exists, DoesNotExist)"
                    ));
                }
            }
            if let Some(p) = label_key_problem(&e.key) {
                return Invalid(format!("{field}.key: {p}"));
            }
            if let Some(p) = values.iter().find_map(|v| label_value_problem(v)) {
                return Invalid(format!("{field}.values: {p}"));
            }
        }
        // Everything kube-core accepts that Kubernetes refuses was refused above; what is left
        // converts (an error here would be kube-core refusing more than Kubernetes).
        match Selector::try_from(s.clone()) {
            Ok(sel) => Labels(sel),
            Err(e) => Invalid(format!("{field}: {}", e.0)),
        }
    }

    /// Does it select a pod (node, VMI…) with these labels?
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        match self {
            CompiledSelector::Nothing | CompiledSelector::Invalid(_) => false,
            CompiledSelector::Everything => true,
            CompiledSelector::Labels(s) => s.matches(labels),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn selector(v: Value) -> ApiLabelSelector {
        serde_json::from_value(v).unwrap()
    }

    fn compile(v: Value) -> CompiledSelector {
        CompiledSelector::compile(Some(&selector(v)), "sel")
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn null_selects_nothing_and_empty_selects_everything() {
        let any = labels(&[("app", "a")]);
        assert_eq!(
            CompiledSelector::compile(None, "sel"),
            CompiledSelector::Nothing
        );
        assert!(!CompiledSelector::compile(None, "sel").matches(&any));
        for empty in [
            json!({}),
            json!({"matchLabels": {}, "matchExpressions": []}),
        ] {
            let s = compile(empty);
            assert_eq!(s, CompiledSelector::Everything);
            assert!(s.matches(&any) && s.matches(&BTreeMap::new()));
        }
    }

    /// Where kube-core alone would be confidently wrong: it converts these, Kubernetes refuses
    /// them. Pinned so that a kube-core that starts refusing them is noticed too.
    #[test]
    fn what_kube_core_accepts_and_kubernetes_refuses_is_invalid() {
        let cases = [
            (
                json!({"key": "a", "operator": "In", "values": []}),
                "values: must be specified",
            ),
            (
                json!({"key": "a", "operator": "NotIn", "values": []}),
                "values: must be specified",
            ),
            (
                json!({"key": "a", "operator": "Exists", "values": ["x"]}),
                "may not be specified",
            ),
            (
                json!({"key": "a", "operator": "DoesNotExist", "values": ["x"]}),
                "may not be specified",
            ),
            (json!({"key": "bad key", "operator": "Exists"}), ".key:"),
            (
                json!({"key": "a", "operator": "In", "values": ["-x"]}),
                "not a valid label value",
            ),
        ];
        for (expression, why) in cases {
            let raw = selector(json!({"matchExpressions": [expression.clone()]}));
            assert!(
                Selector::try_from(raw).is_ok(),
                "kube-core accepts {expression}"
            );
            match compile(json!({"matchExpressions": [expression.clone()]})) {
                CompiledSelector::Invalid(reason) => {
                    assert!(reason.starts_with("sel.matchExpressions[0]"), "{reason}");
                    assert!(reason.contains(why), "{expression}: {reason}");
                }
                other => panic!("{expression}: {other:?}"),
            }
        }
        // NotIn [] would select every pod through kube-core alone.
        let everything = Selector::try_from(selector(
            json!({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]}),
        ))
        .unwrap();
        assert!(everything.matches(&labels(&[("a", "b")])));
        assert!(
            !compile(
                json!({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]})
            )
            .matches(&labels(&[("a", "b")]))
        );
        // Both refuse an unknown operator and In without values.
        for expression in [
            json!({"key": "a", "operator": "Gt", "values": ["1"]}),
            json!({"key": "a", "operator": "in", "values": ["x"]}),
            json!({"key": "a", "operator": "In"}),
        ] {
            let raw = selector(json!({"matchExpressions": [expression.clone()]}));
            assert!(Selector::try_from(raw).is_err(), "{expression}");
            let s = compile(json!({"matchExpressions": [expression.clone()]}));
            assert!(
                matches!(s, CompiledSelector::Invalid(_)),
                "{expression}: {s:?}"
            );
        }
        let s = compile(json!({"matchLabels": {"app": "x y"}}));
        assert!(
            matches!(&s, CompiledSelector::Invalid(r) if r.starts_with("sel.matchLabels[\"app\"]")),
            "{s:?}"
        );
    }

    /// The matching the drain planner did by hand before kube-core (kept as the oracle):
    /// on every valid selector the compiled one must agree with it.
    fn hand_written(selector: &ApiLabelSelector, labels: &BTreeMap<String, String>) -> bool {
        selector
            .match_labels
            .iter()
            .flatten()
            .all(|(k, v)| labels.get(k) == Some(v))
            && selector.match_expressions.iter().flatten().all(|e| {
                let value = labels.get(&e.key);
                let values = e.values.as_deref().unwrap_or(&[]);
                match e.operator.as_str() {
                    "In" => value.is_some_and(|v| values.contains(v)),
                    "NotIn" => !value.is_some_and(|v| values.contains(v)),
                    "Exists" => value.is_some(),
                    "DoesNotExist" => value.is_none(),
                    _ => false,
                }
            })
    }

    #[test]
    fn valid_selectors_match_as_before_on_random_labels() {
        let keys = ["app", "tier", "kubevirt.io/domain", "zone"];
        let values = ["a", "b", "c", ""];
        let mut seed = 0x1234_5678_9abc_def1_u64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut compared = 0;
        for _ in 0..3000 {
            let mut match_labels = serde_json::Map::new();
            for _ in 0..next(3) {
                match_labels.insert(keys[next(4)].into(), json!(values[next(3)]));
            }
            let expressions: Vec<Value> = (0..next(4))
                .map(|_| {
                    let key = keys[next(4)];
                    match next(4) {
                        0 => json!({"key": key, "operator": "In", "values": [values[next(4)], values[next(4)]]}),
                        1 => json!({"key": key, "operator": "NotIn", "values": [values[next(4)]]}),
                        2 => json!({"key": key, "operator": "Exists"}),
                        _ => json!({"key": key, "operator": "DoesNotExist"}),
                    }
                })
                .collect();
            let raw =
                selector(json!({"matchLabels": match_labels, "matchExpressions": expressions}));
            let compiled = CompiledSelector::compile(Some(&raw), "sel");
            assert!(
                !matches!(compiled, CompiledSelector::Invalid(_)),
                "{compiled:?}"
            );
            for _ in 0..5 {
                let mut l = BTreeMap::new();
                for _ in 0..next(5) {
                    l.insert(keys[next(4)].to_string(), values[next(4)].to_string());
                }
                assert_eq!(
                    compiled.matches(&l),
                    hand_written(&raw, &l),
                    "{raw:?} on {l:?}"
                );
                compared += 1;
            }
        }
        assert_eq!(compared, 15_000);
    }
}
