//! `vmctl top`'s screens, drawn into ratatui's TestBackend on the example clusters (insta
//! snapshots), with the key facts asserted too: the post-copy row marked as the point of no
//! return, both pods named, the refusals said on screen.

use clap::Parser;
use vmctl::cli::Cli;
use vmctl::context::Context;
use vmctl::operate::top::{Feed, Options, explain_text, first_model, snapshot_mirror};
use vmctl::policy::top::{Action, Key, Mode, TopModel, TopState, on_key};
use vmctl::render::glyphs::Charset;
use vmctl::render::top::{View, screen_text};
use vmctl::triage::LoopThresholds;

const W: u16 = 160;
const H: u16 = 48;

async fn ctx(dir: &str) -> &'static Context {
    let path = format!("{}/examples/{dir}", env!("CARGO_MANIFEST_DIR"));
    let cli = Cli::try_parse_from(["vmctl", "--from", &path, "--no-color", "top"]).unwrap();
    Box::leak(Box::new(Context::new(&cli.global).await.unwrap()))
}

fn opts() -> Options {
    Options {
        dry_run: false,
        metrics: false,
        loops: LoopThresholds::default(),
        charset: Charset::Unicode,
        color: false,
    }
}

fn view(live: bool) -> View {
    View {
        charset: Charset::Unicode,
        color: false,
        notes: Vec::new(),
        live,
    }
}

async fn model(dir: &str) -> (&'static Context, TopModel) {
    let ctx = ctx(dir).await;
    let mut m = first_model(ctx, Feed::Snapshot, &opts()).await.unwrap();
    // The snapshot's path is the machine's: keep the screens the same everywhere.
    m.source = format!("snapshot examples/{dir}");
    (ctx, m)
}

fn press(state: TopState, model: &TopModel, keys: &[Key]) -> (TopState, Action) {
    let mut s = state;
    let mut a = Action::None;
    for k in keys {
        (s, a) = on_key(s, model, *k);
    }
    (s, a)
}

fn row_of<'a>(screen: &'a str, needle: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{screen}"))
}

/// The post-copy migration's index among the migrations.
fn post_copy(model: &TopModel) -> usize {
    model
        .migrations
        .iter()
        .position(|m| m.point_of_no_return)
        .expect("examples/cluster has a migration in post-copy")
}

#[tokio::test]
async fn main_screen_on_the_example_cluster() {
    let (_, m) = model("cluster").await;
    let screen = screen_text(&m, &TopState::new(true, false), &view(false), W, H);
    insta::assert_snapshot!("top_cluster_main", screen);
    // The post-copy row is marked, with both pods, the live one starred.
    let row = row_of(&screen, "prod/pg-orders-01");
    assert!(row.contains("node-2") && row.contains("node-1"), "{row}");
    let second = row_of(&screen, "kubevirt-migrate-vm-w9c4r");
    assert!(
        second.contains("▲ PostCopy") && second.contains("▲ no return"),
        "{second}"
    );
    assert!(
        second.contains("virt-launcher-pg-orders-01-vvxp7 ")
            && second.contains("virt-launcher-pg-orders-01-8npf9*"),
        "both pods, the target live: {second}"
    );
    assert!(screen.contains("(▲ 1 in post-copy)"));
    // The evacuation and the drained node.
    assert!(row_of(&screen, "Drains and evacuations").contains("(1)"));
    assert!(screen.contains("snapshot (read-only)"));
    // Failures have their one-line diagnosis.
    assert!(m.failures.iter().all(|f| !f.diagnosis.is_empty()));
    assert!(row_of(&screen, "Recent failures").contains(&format!("({})", m.failures.len())));
}

#[tokio::test]
async fn main_screen_on_the_incidents_cluster_in_ascii() {
    let (_, m) = model("incidents").await;
    let mut v = view(false);
    v.charset = Charset::Ascii;
    let screen = screen_text(&m, &TopState::new(true, false), &v, W, H);
    insta::assert_snapshot!("top_incidents_main_ascii", screen);
    assert!(screen.is_ascii(), "{screen}");
    assert!(screen.contains("Migrations in flight"));
}

#[tokio::test]
async fn filter_entry_help_and_selection() {
    let (_, m) = model("cluster").await;
    let (s, _) = press(
        TopState::new(true, false),
        &m,
        &[
            Key::Char('/'),
            Key::Char('p'),
            Key::Char('r'),
            Key::Char('o'),
        ],
    );
    let screen = screen_text(&m, &s, &view(false), W, H);
    insta::assert_snapshot!("top_cluster_filter", screen);
    assert!(screen.contains("filter (namespace or node): pro_"));
    assert!(!screen.contains("shop-web-01"), "tenant-a is filtered out");
    assert!(screen.contains("pg-orders-01"));

    let (s, _) = press(TopState::new(true, false), &m, &[Key::Char('?')]);
    let screen = screen_text(&m, &s, &view(false), W, H);
    insta::assert_snapshot!("top_cluster_help", screen);
    assert!(screen.contains("refused in post-copy"));
}

#[tokio::test]
async fn explain_pane_of_the_selected_vm() {
    let (ctx, m) = model("cluster").await;
    let (mirror, _, _) = snapshot_mirror(ctx).await.unwrap();
    let down: Vec<Key> = std::iter::repeat_n(Key::Down, post_copy(&m)).collect();
    let (s, a) = press(TopState::new(true, false), &m, &down);
    let (mut s, a2) = press(s, &m, &[Key::Enter]);
    assert_eq!(a, Action::None);
    let Action::Explain(t) = a2 else {
        panic!("Enter explains: {a2:?}")
    };
    assert_eq!(
        (t.namespace.as_str(), t.vmi.as_str()),
        ("prod", "pg-orders-01")
    );
    // The snapshot's path is the machine's: the same screen everywhere.
    let text = explain_text(ctx, &mirror, &t)
        .await
        .replace(concat!(env!("CARGO_MANIFEST_DIR"), "/"), "");
    s.open_explain(format!("{}/{}", t.namespace, t.vmi), &text);
    let screen = screen_text(&m, &s, &view(false), W, H);
    insta::assert_snapshot!("top_cluster_explain", screen);
    assert!(screen.contains("explain prod/pg-orders-01"));
    assert!(text.contains("pg-orders-01"), "{text}");
    // It scrolls.
    let (s, _) = press(s, &m, &[Key::Down, Key::Down]);
    assert!(matches!(s.mode, Mode::Explain { scroll: 2, .. }));
}

#[tokio::test]
async fn abort_confirmation_and_refusals() {
    let (_, m) = model("cluster").await;
    // A live console (not read-only) on the first migration: the y/n confirmation.
    let (s, _) = press(TopState::new(false, true), &m, &[Key::Char('a')]);
    assert!(matches!(s.mode, Mode::Confirm(_)));
    let screen = screen_text(&m, &s, &view(true), W, H);
    insta::assert_snapshot!("top_cluster_abort_confirm", screen);
    assert!(screen.contains("Abort migration tenant-a/kubevirt-migrate-vm-t6j2v"));
    assert!(screen.contains("--dry-run: nothing is deleted"));

    // Post-copy: refused, the reason on screen.
    let down: Vec<Key> = std::iter::repeat_n(Key::Down, post_copy(&m)).collect();
    let (s, _) = press(TopState::new(false, false), &m, &down);
    let (s, a) = press(s, &m, &[Key::Char('a')]);
    assert_eq!(a, Action::None);
    let screen = screen_text(&m, &s, &view(true), W, H);
    insta::assert_snapshot!("top_cluster_abort_post_copy", screen);
    assert!(screen.contains("abort refused: prod/kubevirt-migrate-vm-w9c4r is in post-copy"));

    // A snapshot is read-only.
    let (s, _) = press(TopState::new(true, false), &m, &[Key::Char('a')]);
    assert!(s.message.unwrap().contains("read-only"));
}

#[test]
fn hostile_names_are_escaped() {
    let mut m = TopModel::default();
    m.migrations.push(vmctl::policy::top::MigrationLine {
        namespace: "prod".into(),
        name: "m\u{1b}[2J".into(),
        vmi: "vm\u{202e}x".into(),
        phase: "Running".into(),
        waiting_for: "x".into(),
        ..Default::default()
    });
    let screen = screen_text(&m, &TopState::default(), &view(true), W, H);
    assert!(!screen.contains('\u{1b}') && !screen.contains('\u{202e}'));
    assert!(screen.contains("\\u{1b}[2J") || screen.contains("\\u{1b}"));
}

fn run_vmctl(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn off_a_terminal_it_refuses_in_one_line_and_json_is_one_frame() {
    let out = run_vmctl(&["--from", "examples/cluster", "top"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: vmctl top needs a terminal"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "no escape sequences into a pipe");

    let out = run_vmctl(&["--from", "examples/cluster", "top", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["kind"], "TopFrame");
    assert_eq!(doc["counts"]["postCopy"], 1);
    let post = doc["migrations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["pointOfNoReturn"] == true)
        .unwrap();
    assert_eq!(post["sourcePod"], "virt-launcher-pg-orders-01-vvxp7");
    assert_eq!(post["targetPod"], "virt-launcher-pg-orders-01-8npf9");
    assert_eq!(post["livePod"], "virt-launcher-pg-orders-01-8npf9");
    assert_eq!(doc["evacuations"][0]["fromNode"], "node-3");
    // node-3 is an evacuation source, not cordoned (issue 33: it was called a draining node).
    assert_eq!(doc["cordonedNodes"], serde_json::json!([]));
    assert_eq!(doc["evacuationSources"], serde_json::json!(["node-3"]));
    assert_eq!(doc["nodes"][0]["name"], "node-3");
    assert_eq!(doc["nodes"][0]["cordoned"], false);

    let out = run_vmctl(&["--from", "examples/cluster", "top", "-o", "yaml"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("kind: TopFrame"));
}
