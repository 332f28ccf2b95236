//! YAML through serde-saphyr (the crate kube 5 reads kubeconfigs with): the limits and the
//! YAML dialect `--from` reads with, and its errors as one line.
//!
//! Why not serde_yaml (deprecated upstream, libyaml translated to unsafe Rust): measured on a
//! bad-input corpus by `benches/yaml.sh` (issue 16). A 1.5 MB file aliasing a 1 MiB scalar
//! 100,000 times made vmctl allocate until it was killed (8 GB cap: abort); serde_yaml buffers
//! every event of a document before the first is read (a 10,000-VMI List document of 136 MB:
//! 2.0 GB peak RSS, now 347 MB); nesting costs libyaml quadratic time (100k `{a: `: over
//! 60 s). serde-saphyr streams events, and its budget bounds every one of these by the file's
//! size. It costs about twice the CPU time of serde_yaml on ordinary YAML.
//!
//! Limits (all counted over the whole file, so a file of many documents is bounded as one):
//! nesting ([`MAX_DEPTH`], block and flow alike; serde_yaml stopped at 128), and everything
//! aliases can multiply (nodes, events, scalar bytes, replayed events) to a small multiple of
//! the file's own size: a file without aliases never comes near them, and one with an alias
//! bomb is refused as it expands.

use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::{
    DefaultMessageFormatter, DuplicateKeyPolicy, Error, MessageFormatter, NonFiniteFloatPolicy,
    Options,
};

/// How deep block and flow collections may nest: well below serde_json's 128 (the objects'
/// JSON text is read again), well above what Kubernetes objects need (a VMI: ~10; the KubeVirt
/// CRDs' schemas, which a must-gather directory holds: ~50).
pub const MAX_DEPTH: usize = 100;

/// Anchors and aliases a file may define and use: `kubectl` never writes them; hand-written
/// files use a few.
const MAX_ALIASES: usize = 10_000;

/// The options `--from` reads a file of `len` bytes with.
///
/// The dialect is serde_yaml's, which vmctl has always read: YAML 1.2 core scalars
/// (`on`/`yes`/`no`/`off` stay strings, as in `kubectl get -o yaml`, which quotes them;
/// `0755` and `1_000` stay strings; `.inf`/`.nan` become JSON null), and a later duplicate key
/// replaces an earlier one. Merge keys (`<<: *base`) are merged, as Kubernetes' own reader
/// (sigs.k8s.io/yaml) does.
pub fn read_options(len: usize) -> Options {
    // Without aliases a file cannot make more of these than it has bytes (a `!!str` tag is
    // counted at its full spelling, `tag:yaml.org,2002:str`: hence the factor 4).
    let bytes = len.saturating_add(1024);
    let many = bytes.saturating_mul(4);
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_reader_input_bytes: None,
            max_events: many,
            max_nodes: many,
            max_total_scalar_bytes: many,
            max_documents: bytes,
            max_depth: MAX_DEPTH,
            flow_nesting_limit: MAX_DEPTH,
            max_aliases: MAX_ALIASES,
            max_anchors: MAX_ALIASES,
            max_merge_keys: MAX_ALIASES,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: bytes,
        },
        duplicate_keys: DuplicateKeyPolicy::PassThrough,
        // A key `null:` or `~:` is that text, as serde_yaml read it.
        null_as_string: true,
        strict_booleans: true,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
        non_finite_float_policy: NonFiniteFloatPolicy::PassThrough,
        with_snippet: false,
    }
}

/// An error as (line, column) and one line of text without the location.
pub fn describe_error(e: &Error) -> (Option<(u64, u64)>, String) {
    let mut inner = e;
    while let Error::AliasError { error, .. } | Error::WithSnippet { error, .. } = inner {
        inner = error;
    }
    let location = e
        .location()
        .or_else(|| inner.location())
        .filter(|l| l.line() > 0)
        .map(|l| (l.line(), l.column()));
    let message = match inner {
        Error::Budget { breach, .. } => budget_message(breach),
        Error::AliasReplayLimitExceeded { .. } => EXPANSION.to_string(),
        // The parser's own stop for flow collections past `flow_nesting_limit`.
        other if other.to_string().starts_with("recursion limit exceeded") => depth_message(),
        other => DefaultMessageFormatter.format_message(other).into_owned(),
    };
    // One line, whatever the parser said.
    let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
    (location, message)
}

const EXPANSION: &str =
    "aliases repeat more values than the file holds (vmctl refuses such expansion)";

fn depth_message() -> String {
    format!("nested deeper than {MAX_DEPTH} levels (vmctl refuses such nesting)")
}

fn budget_message(breach: &BudgetBreach) -> String {
    match breach {
        BudgetBreach::Depth { .. } => depth_message(),
        BudgetBreach::Aliases { .. } | BudgetBreach::AliasAnchorRatio { .. } => {
            format!("more than {MAX_ALIASES} aliases, or ten per anchor (vmctl refuses so many)")
        }
        BudgetBreach::Anchors { .. } => format!("more than {MAX_ALIASES} anchors"),
        BudgetBreach::MergeKeys { .. } => format!("more than {MAX_ALIASES} merge keys (`<<`)"),
        BudgetBreach::Events { .. }
        | BudgetBreach::Nodes { .. }
        | BudgetBreach::ScalarBytes { .. }
        | BudgetBreach::Documents { .. } => EXPANSION.to_string(),
        other => format!("too large: {other:?}"),
    }
}
