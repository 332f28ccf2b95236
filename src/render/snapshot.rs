//! `vmctl snapshot`'s output: the document (YAML by default, one line of JSON with `-o json`)
//! and the line that says what was written.

use std::collections::BTreeMap;

use super::{OutputFormat, to_yaml};
use crate::cluster::snapshot_write::Snapshot;
use crate::error::{Error, Result};

/// The snapshot as text. `-o json` writes one line of JSON, which `--from` reads with
/// serde_json: on benches' generated 2,000-VMI cluster 0.13 s against 1.45 s for the YAML
/// (release, `status -A`), and 14 % smaller (23.0 MB against 26.7 MB).
pub fn document(output: OutputFormat, snapshot: &Snapshot) -> Result<String> {
    let text = if output == OutputFormat::Json {
        serde_json::to_string(snapshot)
            .map(|mut t| {
                t.push('\n');
                t
            })
            .map_err(|e| e.to_string())
    } else {
        to_yaml(snapshot)
    };
    text.map_err(|e| Error::Internal(format!("serialising the snapshot: {e}")))
}

/// `wrote N objects of every namespace to PATH: n Kind, …` (`of namespace NS` with -n; the
/// caller escapes it for the terminal).
pub fn wrote(path: &str, namespace: Option<&str>, counts: &BTreeMap<String, usize>) -> String {
    let total: usize = counts.values().sum();
    let summary: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let scope = match namespace {
        Some(ns) => format!("namespace {ns}"),
        None => "every namespace".to_string(),
    };
    format!(
        "wrote {total} objects of {scope} to {path}: {}",
        summary.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_every_kind() {
        let counts = BTreeMap::from([("Pod".to_string(), 3), ("Node".to_string(), 2)]);
        assert_eq!(
            wrote("out.yaml", None, &counts),
            "wrote 5 objects of every namespace to out.yaml: 2 Node, 3 Pod"
        );
        assert_eq!(
            wrote("out.yaml", Some("prod"), &counts),
            "wrote 5 objects of namespace prod to out.yaml: 2 Node, 3 Pod"
        );
    }
}
