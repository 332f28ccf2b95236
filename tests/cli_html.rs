//! `-o html` (issue 27 §3): `explain` and `plan-drain` write one self-contained page
//! (well-formed: it parses as XML; no script, no external reference; the diagnosis and the
//! charts in it), with their usual exit codes; hostile cluster text comes out escaped; every
//! other command refuses `-o html` before it does anything.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use serde_json::Value;

const INCIDENTS_NOW: &str = "2026-12-03T10:00:00Z";

/// The elements a report may contain: nothing that loads, runs or embeds anything.
const ELEMENTS: &[&str] = &[
    "html", "head", "meta", "title", "style", "body", "header", "main", "footer", "section", "h1",
    "h2", "h3", "p", "span", "div", "time", "code", "dl", "dt", "dd", "ul", "ol", "li", "table",
    "thead", "tbody", "tr", "th", "td", "svg", "g", "line", "circle", "polyline", "rect", "text",
];

/// Parses a report as XML (it is written to be well-formed) and checks its shape: one
/// html, head, body and main; only [`ELEMENTS`]; no attribute that refers anywhere. Returns
/// the text of the page (every text node, in order).
fn check_page(html: &str, what: &str) -> String {
    assert!(
        html.starts_with("<!DOCTYPE html>\n"),
        "{what}: {}",
        &html[..html.len().min(200)]
    );
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(html, options)
        .unwrap_or_else(|e| panic!("{what}: not well-formed: {e}"));
    let mut count = std::collections::BTreeMap::<&str, usize>::new();
    for n in doc.descendants().filter(|n| n.is_element()) {
        let name = n.tag_name().name();
        assert!(ELEMENTS.contains(&name), "{what}: element <{name}>");
        *count.entry(name).or_default() += 1;
        for a in n.attributes() {
            let (k, v) = (a.name(), a.value().to_ascii_lowercase());
            assert!(
                !matches!(k, "src" | "href" | "xlink:href" | "action" | "srcset")
                    && !k.starts_with("on"),
                "{what}: attribute {k}={v:?} on <{name}>"
            );
            assert!(
                !v.contains("http") && !v.contains("url(") && !v.contains("javascript:"),
                "{what}: attribute {k}={v:?} on <{name}>"
            );
        }
    }
    // One <title> in <head>; the others are the SVG marks' tooltips.
    let head_titles = doc
        .descendants()
        .filter(|n| n.has_tag_name("title"))
        .filter(|n| n.parent().is_some_and(|p| p.has_tag_name("head")))
        .count();
    assert_eq!(head_titles, 1, "{what}");
    for one in ["html", "head", "style", "body", "main"] {
        assert_eq!(
            count.get(one),
            Some(&1),
            "{what}: <{one}> × {:?}",
            count.get(one)
        );
    }
    let style = doc
        .descendants()
        .find(|n| n.has_tag_name("style"))
        .and_then(|n| n.text())
        .unwrap_or_default();
    assert!(
        !style.contains("url(") && !style.contains("@import"),
        "{what}: {style}"
    );
    // Outside text, nothing names a scheme (text may quote a URL from the cluster, escaped).
    let lower = html.to_ascii_lowercase();
    assert!(!lower.contains("<script"), "{what}");
    let text: Vec<&str> = doc
        .descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect();
    let in_text = text
        .iter()
        .map(|t| t.matches("http").count())
        .sum::<usize>();
    assert_eq!(lower.matches("http").count(), in_text, "{what}");
    text.join(" ")
}

/// The text of every `<li>`, its elements' text included, unseparated.
fn list_items(page: &str) -> Vec<String> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(page, options).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("li"))
        .map(|li| {
            li.descendants()
                .filter(|n| n.is_text())
                .filter_map(|n| n.text())
                .collect()
        })
        .collect()
}

/// `s` as maud writes it in text.
fn escaped(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn run(from: &Path, now: &str, args: &[&str]) -> Output {
    let from = from.display().to_string();
    vmctl(
        ["--from", from.as_str(), "--now", now]
            .iter()
            .copied()
            .chain(args.iter().copied()),
    )
}

fn example(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)
}

/// Every VMI (as `vm/NAME`) and every migration of an example cluster, with its namespace.
fn targets(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (file, prefix) in [("vmis.yaml", "vm/"), ("vmims.yaml", "")] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        for doc in serde_saphyr::from_multiple::<Value>(&text).unwrap() {
            let items = match doc.get("items") {
                Some(Value::Array(items)) => items.clone(),
                _ => vec![doc],
            };
            for item in items {
                let (Some(ns), Some(name)) = (
                    item["metadata"]["namespace"].as_str(),
                    item["metadata"]["name"].as_str(),
                ) else {
                    continue;
                };
                out.push((ns.to_string(), format!("{prefix}{name}")));
            }
        }
    }
    out
}

/// explain -o html of every VMI and migration: a page that parses, with the diagnosis the
/// JSON document gives, its summary and next steps, the timeline's axis; the exit code of
/// the other formats.
fn explain_everything(dir: &str, now: &str) -> usize {
    let from = example(dir);
    let mut all = targets(&from);
    // A VMI whose namespace has a migration explains that migration again: skip it.
    let with_migrations: BTreeSet<String> = all
        .iter()
        .filter(|(_, t)| !t.starts_with("vm/"))
        .map(|(ns, _)| ns.clone())
        .collect();
    all.retain(|(ns, t)| !t.starts_with("vm/") || !with_migrations.contains(ns));
    assert!(all.len() >= 8, "{dir}: only {} targets", all.len());
    let mut with_axis = 0;
    for (ns, target) in &all {
        let args = ["explain", "-n", ns, target];
        let json = run(&from, now, &[&args[..], &["-o", "json"]].concat());
        let html = run(&from, now, &[&args[..], &["-o", "html"]].concat());
        let what = format!("{dir} explain -n {ns} {target}");
        assert_eq!(
            html.status.code(),
            json.status.code(),
            "{what}: {}",
            both(&html)
        );
        if !json.status.success() && json.status.code() != Some(1) {
            // Not found and the like: an error, no page.
            assert!(html.stdout.is_empty(), "{what}");
            continue;
        }
        let report: Value = serde_json::from_slice(&json.stdout).unwrap();
        let page = String::from_utf8(html.stdout.clone()).unwrap();
        let text = check_page(&page, &what);
        // The page's verdict is the text's (issue 33: one verdict line, each fact once).
        let table = run(&from, now, &args);
        let text_out = String::from_utf8_lossy(&table.stdout).to_string();
        let headline = text_out.lines().nth(3).unwrap_or_default().to_string();
        let outcome = report["outcome"].as_str().unwrap();
        let word = outcome.to_uppercase().replace('-', " ");
        assert!(
            headline.starts_with(&word)
                || (outcome == "in-progress" && headline.starts_with("PENDING · ")),
            "{what}: {headline:?}"
        );
        assert!(page.contains(&headline), "{what}: no {headline:?}");
        let summary = report["summary"].as_str().unwrap();
        assert!(text.contains(summary), "{what}: no summary {summary:?}");
        // A step's commands are <code> inside its <li>: the item's whole text is the step.
        let items = list_items(&page);
        for step in report["nextSteps"].as_array().unwrap() {
            let step = step.as_str().unwrap();
            assert!(items.iter().any(|i| i == step), "{what}: {step}");
        }
        for fact in report["evidence"].as_array().unwrap() {
            let field = format!(
                "<td class=\"path\">{}</td>",
                escaped(fact["field"].as_str().unwrap())
            );
            assert!(page.contains(&field), "{what}: no {field}");
        }
        let steps = report["timeline"].as_array().unwrap().len();
        if steps > 0 {
            with_axis += 1;
            assert!(page.contains("<svg class=\"axis\""), "{what}");
            assert!(
                page.contains(&format!("time axis of {steps} events")),
                "{what}"
            );
            assert!(page.contains("<circle "), "{what}");
        }
    }
    with_axis
}

#[test]
fn explain_html_of_every_incident() {
    let axes = explain_everything("examples/incidents", INCIDENTS_NOW);
    assert!(axes >= 20, "only {axes} pages with a timeline");
}

#[test]
fn explain_html_of_the_example_cluster() {
    let axes = explain_everything("examples/cluster", EXAMPLE_NOW);
    assert!(axes >= 5, "only {axes} pages with a timeline");
}

/// Issue 33: the next steps' commands were plain text; they are `<code>`, whole.
#[test]
fn next_steps_set_their_commands_in_code_font() {
    let out = run(
        &example("examples/cluster"),
        EXAMPLE_NOW,
        &["explain", "vm/pg-reporting-01", "-o", "html"],
    );
    let page = stdout(&out);
    check_page(&page, "pg-reporting-01");
    let steps = page
        .split("<section id=\"next-steps\">")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .unwrap_or_default();
    assert!(
        steps.contains("<code>virtctl start pg-reporting-01 -n prod</code>"),
        "{steps}"
    );
    assert!(
        steps.contains("<code>kubectl logs -n kubevirt &lt;pod&gt;</code>"),
        "{steps}"
    );
}

#[test]
fn explain_html_with_history_has_it() {
    let out = run(
        &example("examples/incidents"),
        INCIDENTS_NOW,
        &[
            "explain",
            "-n",
            "backoff",
            "vm/kafka-01",
            "--history",
            "-o",
            "html",
        ],
    );
    let page = stdout(&out);
    let text = check_page(&page, "history");
    assert!(
        text.contains("History of VMI backoff/kafka-01 (3 migrations"),
        "{text}"
    );
    assert!(page.contains("<section id=\"history\">"));
    assert!(text.contains("migration-backoff"), "{text}");
}

#[test]
fn plan_drain_html_has_the_verdict_rows_blockers_and_waves() {
    let from = example("examples/cluster");
    let out = run(&from, EXAMPLE_NOW, &["plan-drain", "node-3", "-o", "html"]);
    // It will block: exit 1, as with the table.
    assert_eq!(out.status.code(), Some(1), "{}", both(&out));
    let page = stdout(&out);
    let text = check_page(&page, "plan-drain node-3");
    let json = run(&from, EXAMPLE_NOW, &["plan-drain", "node-3", "-o", "json"]);
    let plan: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(text.contains("Drain of node-3: WILL BLOCK"), "{text}");
    for v in plan["vmis"].as_array().unwrap() {
        let id = format!(
            "{}/{}",
            v["namespace"].as_str().unwrap(),
            v["name"].as_str().unwrap()
        );
        assert!(text.contains(&id), "no row for {id}");
        assert!(text.contains(v["action"].as_str().unwrap()));
        assert!(text.contains(v["explanation"].as_str().unwrap()), "{id}");
    }
    for b in plan["blockers"].as_array().unwrap() {
        assert!(text.contains(b["message"].as_str().unwrap()), "{b}");
        assert!(text.contains(b["reason"].as_str().unwrap()), "{b}");
    }
    assert!(page.contains("<section id=\"waves\">"), "{page}");
    assert!(text.contains("dev/loadgen-01 → node-2"), "{text}");
    // The Gantt (render::gantt's SVG): a bar per migrating VM, the blocked ones marked.
    let gantt = page
        .split("<section id=\"gantt\" class=\"chart\">")
        .nth(1)
        .and_then(|rest| rest.split("</section>").next())
        .unwrap_or_else(|| panic!("no Gantt section: {page}"));
    assert!(
        gantt.contains("Waves on a time axis") && gantt.contains("<svg "),
        "{gantt}"
    );
    assert!(gantt.matches("<rect ").count() >= 2, "{gantt}");
    assert!(
        gantt.contains("dev/loadgen-01") && gantt.contains("prod/legacy-erp-01"),
        "{gantt}"
    );
    // A drain that completes: exit 0.
    let ok = run(&from, EXAMPLE_NOW, &["plan-drain", "node-2", "-o", "html"]);
    let json = run(&from, EXAMPLE_NOW, &["plan-drain", "node-2", "-o", "json"]);
    assert_eq!(ok.status.code(), json.status.code(), "{}", both(&ok));
    check_page(&stdout(&ok), "plan-drain node-2");
}

/// The other commands refuse `-o html` with one line and exit 2, before they read or change
/// anything: with an unreachable cluster the answer is still the usage error.
#[test]
fn other_commands_refuse_html_before_any_work() {
    let kubeconfig = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        kubeconfig.path(),
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n\
         users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
    )
    .unwrap();
    let kc = kubeconfig.path().display().to_string();
    let runs: Vec<Vec<&str>> = vec![
        vec!["status"],
        vec!["status", "--watch"],
        vec!["plan-maintenance", "node-1"],
        vec!["drain", "node-3"],
        vec!["migrate", "vm/pg-reporting-01"],
        vec!["abort", "mig-x"],
        vec!["snapshot", "-"],
    ];
    for args in runs {
        let out = vmctl(
            ["--kubeconfig", kc.as_str(), "-o", "html"]
                .iter()
                .chain(args.iter()),
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", both(&out));
        assert_eq!(
            err,
            "error: -o html is for explain and plan-drain only: this command writes table, wide, json or yaml\n",
            "{args:?}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // With a snapshot as well.
    let from = example("examples/cluster");
    let out = run(&from, EXAMPLE_NOW, &["status", "-o", "html"]);
    assert_eq!(out.status.code(), Some(2), "{}", both(&out));
}

// ---------------------------------------------------------------- hostile text

/// Markup, an entity, a terminal escape, a C1 CSI and a bidi override.
const HOSTILE: &str = "<script>alert(1)</script>\"><img src=x onerror=alert(1)>&amp;\u{1b}]0;pwned\u{7}\u{9b}31m\u{202e}";

/// A name that is markup (the VMI, its VM, pods, events, migrations all renamed alike).
const NAME: &str = "pg-reporting-01";
const HOSTILE_NAME: &str = "pg<script>alert(2)</script><img src=y onerror=alert(3)>";

fn poison(value: &mut Value, key: Option<&str>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if k == "annotations"
                    && let Value::Object(a) = v
                {
                    for av in a.values_mut() {
                        if let Value::String(s) = av {
                            s.push_str(HOSTILE);
                        }
                    }
                    continue;
                }
                poison(v, Some(k));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| poison(v, key)),
        Value::String(s) => {
            if matches!(key, Some("message" | "reason" | "failureReason" | "note")) {
                s.push_str(HOSTILE);
            }
            if s.contains(NAME) {
                *s = s.replace(NAME, HOSTILE_NAME);
            }
        }
        _ => {}
    }
}

fn poisoned(example_dir: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(example(example_dir)).unwrap() {
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
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": docs});
        let out = dir
            .path()
            .join(path.file_stem().unwrap())
            .with_extension("json");
        std::fs::write(out, serde_json::to_string(&list).unwrap()).unwrap();
    }
    dir
}

fn assert_inert(page: &str, what: &str) {
    check_page(page, what);
    let lower = page.to_ascii_lowercase();
    assert!(
        !lower.contains("<script") && !lower.contains("<img"),
        "{what}"
    );
    let raw: BTreeSet<char> = page
        .chars()
        .filter(|c| (c.is_control() && *c != '\n') || matches!(c, '\u{202a}'..='\u{202e}'))
        .collect();
    assert!(raw.is_empty(), "{what}: raw {raw:?}");
}

#[test]
fn hostile_names_messages_and_annotations_come_out_escaped() {
    let dir = poisoned("examples/cluster");
    let runs: Vec<Vec<&str>> = vec![
        vec![
            "explain",
            "-n",
            "prod",
            "kubevirt-migrate-vm-f3l8x",
            "--history",
        ],
        vec!["explain", "-n", "prod", "kubevirt-migrate-vm-f3l8x"],
        vec!["plan-drain", "node-1"],
        vec!["plan-drain", "node-3"],
    ];
    let mut shown = 0;
    for args in runs {
        let out = run(
            dir.path(),
            EXAMPLE_NOW,
            &[&args[..], &["-o", "html"]].concat(),
        );
        let what = format!("{args:?}");
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{what}: {}",
            both(&out)
        );
        let page = stdout(&out);
        assert_inert(&page, &what);
        if page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&amp;amp;\\u{1b}]0;pwned\\u{7}\\u{9b}31m\\u{202e}") {
            shown += 1;
        }
        if args[0] == "explain" {
            // The VMI's name, in the title and the verdict.
            assert!(
                page.contains("VMI prod/pg&lt;script&gt;alert(2)&lt;/script&gt;&lt;img src=y onerror=alert(3)&gt;"),
                "{what}: {page}"
            );
        }
    }
    assert!(shown >= 2, "the poison reached only {shown} pages");
    // The incidents too: every migration.
    let dir = poisoned("examples/incidents");
    for (ns, target) in targets(&example("examples/incidents"))
        .into_iter()
        .filter(|(_, t)| !t.starts_with("vm/"))
    {
        let out = run(
            dir.path(),
            INCIDENTS_NOW,
            &["explain", "-n", &ns, &target, "-o", "html"],
        );
        if !matches!(out.status.code(), Some(0 | 1)) {
            continue;
        }
        assert_inert(&stdout(&out), &format!("incidents {ns} {target}"));
    }
}
