//! Text a tenant controls never acts on the operator's terminal (issue 11 part 2): every
//! free-text field of the example clusters (messages, reasons, failure reasons, annotation
//! values) gets terminal escapes, C1 controls, NUL and a bidi override appended, and no
//! table, wide table, plain line, hint or error vmctl prints may carry a raw one.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;

/// An OSC title change, a screen clear, a right-to-left override, a C1 CSI and a NUL.
const EVIL: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}\u{9b}31m\u{0}";

fn poison(value: &mut Value, key: Option<&str>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if k == "annotations"
                    && let Value::Object(a) = v
                {
                    for av in a.values_mut() {
                        if let Value::String(s) = av {
                            s.push_str(EVIL);
                        }
                    }
                    continue;
                }
                poison(v, Some(k));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| poison(v, key)),
        Value::String(s)
            if matches!(
                key,
                Some(
                    "message"
                        | "reason"
                        | "failureReason"
                        | "note"
                        | "waitingFor"
                        | "observedKubeVirtVersion"
                )
            ) =>
        {
            s.push_str(EVIL);
        }
        _ => {}
    }
}

/// A copy of an example cluster, as JSON files, with every free-text field poisoned.
fn poisoned(example: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(example);
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut docs = Vec::new();
        for mut v in serde_saphyr::from_multiple::<Value>(&text).unwrap() {
            if v.is_null() {
                continue;
            }
            poison(&mut v, None);
            match v.get_mut("items").map(Value::take) {
                Some(Value::Array(items)) => docs.extend(items),
                _ => docs.push(v),
            }
        }
        let out: PathBuf = dir
            .path()
            .join(path.file_stem().unwrap())
            .with_extension("json");
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": docs});
        std::fs::write(out, serde_json::to_string(&list).unwrap()).unwrap();
    }
    dir
}

fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| {
            (c.is_control() && *c != '\n')
                || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

/// Runs every reading command in table and wide form; returns how many outputs showed the
/// poison (escaped), so the test proves the poison reached the screen at all.
fn check(example: &str, now: &str, node: &str) -> usize {
    let dir = poisoned(example);
    let from = dir.path().display().to_string();
    let base = ["--from", from.as_str(), "--now", now];
    let list = vmctl(base.iter().copied().chain(["status", "-o", "json"]));
    let report: Value =
        serde_json::from_slice(&list.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&list)));
    let mut runs: Vec<Vec<String>> = vec![
        vec!["status".into()],
        vec!["status".into(), "-o".into(), "wide".into()],
        vec!["plan-drain".into(), node.into()],
        vec!["plan-drain".into(), node.into(), "-o".into(), "wide".into()],
    ];
    for m in report["migrations"].as_array().into_iter().flatten() {
        let (ns, name) = (
            m["namespace"].as_str().unwrap_or_default(),
            m["name"].as_str().unwrap_or_default(),
        );
        runs.push(vec!["explain".into(), "-n".into(), ns.into(), name.into()]);
        runs.push(vec![
            "explain".into(),
            "-n".into(),
            ns.into(),
            name.into(),
            "-o".into(),
            "wide".into(),
            "--history".into(),
        ]);
    }
    for v in report["vmis"].as_array().into_iter().flatten() {
        let (ns, name) = (
            v["namespace"].as_str().unwrap_or_default(),
            v["name"].as_str().unwrap_or_default(),
        );
        runs.push(vec![
            "explain".into(),
            "-n".into(),
            ns.into(),
            format!("vm/{name}"),
        ]);
    }
    // A name that does not exist: the error and its "did you mean" hint.
    runs.push(vec!["explain".into(), "no-such-migration".into()]);
    let mut shown = 0;
    for args in &runs {
        let out = vmctl(
            base.iter()
                .map(|s| s.to_string())
                .chain(args.iter().cloned()),
        );
        for (stream, text) in [("stdout", stdout(&out)), ("stderr", stderr(&out))] {
            let bad = raw_controls(&text);
            assert!(
                bad.is_empty(),
                "{example} {args:?}: raw {bad:?} on {stream}:\n{text}"
            );
            if text.contains("\\u{1b}]0;pwned") {
                shown += 1;
            }
        }
        assert!(
            !stderr(&out).contains("panicked"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    shown
}

#[test]
fn the_example_cluster_with_hostile_text_prints_it_escaped() {
    let shown = check("examples/cluster", EXAMPLE_NOW, "node-3");
    assert!(shown >= 10, "the poison reached only {shown} outputs");
}

#[test]
fn the_incidents_with_hostile_text_print_them_escaped() {
    let shown = check("examples/incidents", "2026-12-03T10:00:00Z", "node-1");
    assert!(shown >= 10, "the poison reached only {shown} outputs");
}

/// The dirty-rate predictions of `plan-drain --prometheus` and the evidence of `explain
/// --prometheus`: label values are tenant-controlled (VMI names and labels), as are the
/// cluster's names and a Prometheus's error text. None reaches the terminal raw.
#[test]
fn dirty_rate_predictions_with_hostile_labels_print_them_escaped() {
    let dir = poisoned("examples/cluster");
    let from = dir.path().display().to_string();
    let base = ["--from", from.as_str(), "--now", EXAMPLE_NOW];
    let plan = vmctl(
        base.iter()
            .copied()
            .chain(["plan-drain", "node-3", "-o", "json"]),
    );
    let plan: Value = serde_json::from_slice(&plan.stdout).unwrap();
    let mut series: Vec<Value> = plan["vmis"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            serde_json::json!({"metric": {"__name__": "kubevirt_vmi_dirty_rate_bytes_per_second",
                "namespace": v["namespace"], "name": v["name"], "kubernetes_vmi_label_app": EVIL},
                "value": [1.7e9, "1e9"]})
        })
        .collect();
    series.push(
        serde_json::json!({"metric": {"namespace": EVIL, "name": EVIL}, "value": [1.7e9, EVIL]}),
    );
    let (url, _) = fake_prometheus(
        serde_json::json!({"status": "success", "data": {"resultType": "vector", "result": series}}),
    );
    let (refusing, _) =
        fake_prometheus(serde_json::json!({"status": "error", "error": format!("bad {EVIL}")}));
    let mut predicted = 0;
    for (url, args) in [
        (&url, vec!["plan-drain", "node-3"]),
        (&url, vec!["plan-drain", "node-3", "-o", "wide"]),
        (&refusing, vec!["plan-drain", "node-3"]),
        (
            &url,
            vec!["explain", "-n", "dev", "kubevirt-migrate-vm-n4k7t"],
        ),
        (
            &refusing,
            vec!["explain", "-n", "dev", "kubevirt-migrate-vm-n4k7t"],
        ),
    ] {
        let out = vmctl(
            base.iter()
                .copied()
                .chain(args.iter().copied())
                .chain(["--prometheus", url.as_str()]),
        );
        for (stream, text) in [("stdout", stdout(&out)), ("stderr", stderr(&out))] {
            let bad = raw_controls(&text);
            assert!(bad.is_empty(), "{args:?}: raw {bad:?} on {stream}:\n{text}");
            if text.contains("will not converge") || text.contains("dirty rate / transfer rate") {
                predicted += 1;
            }
        }
        assert!(
            !stderr(&out).contains("panicked"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    assert!(predicted >= 2, "the predictions were made ({predicted})");
}
