//! Shell completion through cobra's `__complete` protocol (issue 16, item 1): `vmctl
//! __complete WORDS...` and `kubectl_complete-vmctl WORDS...` (what kubectl 1.26+ runs on TAB
//! after `kubectl vmctl `) on the example cluster, against the fake API server through a
//! kubeconfig, on failures, and through the real kubectl.

mod common;
mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use common::*;
use support::{FakeApiServer, Fault, Method};

const VMCTL: &str = env!("CARGO_BIN_EXE_vmctl");
const COMPLETE: &str = env!("CARGO_BIN_EXE_kubectl_complete-vmctl");
const PLUGIN: &str = env!("CARGO_BIN_EXE_kubectl-vmctl");

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .env_remove("KUBECONFIG")
        // Never a real cluster: no kubeconfig and no in-cluster configuration.
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .env("HOME", "/nonexistent")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run the completion program")
}

/// The answer of `vmctl __complete WORDS`, of `kubectl_complete-vmctl WORDS` (what kubectl
/// runs) and of `kubectl_complete-vmctl __complete WORDS`, which must be the same: (candidate
/// lines, directive).
fn complete(words: &[&str]) -> (Vec<String>, u32) {
    let mut with_request = vec!["__complete"];
    with_request.extend(words);
    let direct = run(VMCTL, &with_request);
    let plugin = run(COMPLETE, words);
    // The `kubectl_complete-NAME` script convention (`kubectl NAME __complete "$@"`).
    let scripted = run(COMPLETE, &with_request);
    // deploy/build-release.sh installs kubectl_complete-vmctl as a link to vmctl.
    let linked = run(&linked_complete(), words);
    assert_eq!(direct.status.code(), Some(0), "{}", both(&direct));
    assert_eq!(plugin.status.code(), Some(0), "{}", both(&plugin));
    assert_eq!(stdout(&direct), stdout(&plugin), "{words:?}");
    assert_eq!(stdout(&scripted), stdout(&plugin), "{words:?}");
    assert_eq!(stdout(&linked), stdout(&plugin), "{words:?}");
    parse(&stdout(&plugin))
}

/// `kubectl_complete-vmctl`, a link to the vmctl binary (one per test process).
fn linked_complete() -> String {
    static LINK: std::sync::OnceLock<(tempfile::TempDir, String)> = std::sync::OnceLock::new();
    let (_, path) = LINK.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("kubectl_complete-vmctl");
        std::os::unix::fs::symlink(VMCTL, &link).unwrap();
        let path = link.to_str().unwrap().to_string();
        (dir, path)
    });
    path.clone()
}

/// Splits the protocol's text; every line but the last is a candidate, the last `:N`.
fn parse(text: &str) -> (Vec<String>, u32) {
    assert!(text.ends_with('\n'), "{text:?}");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let last = lines.pop().unwrap_or_default();
    let directive = last
        .strip_prefix(':')
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no directive line in {text:?}"));
    for line in &lines {
        assert!(
            !line.chars().any(|c| c.is_control() && c != '\t'),
            "a control character in {line:?}"
        );
    }
    (lines, directive)
}

fn values(lines: &[String]) -> Vec<&str> {
    lines
        .iter()
        .map(|l| l.split('\t').next().unwrap_or(""))
        .collect()
}

fn cluster() -> String {
    example_cluster().display().to_string()
}

#[test]
fn subcommands_flags_and_their_values() {
    let (lines, directive) = complete(&[""]);
    assert_eq!(directive, 4);
    let v = values(&lines);
    for command in [
        "status",
        "plan-drain",
        "drain",
        "explain",
        "migrate",
        "abort",
    ] {
        assert!(v.contains(&command), "{command} missing: {lines:?}");
    }
    assert!(
        lines.contains(
            &"abort\tAbort a migration in flight (refused in post-copy: the guest's state is split)"
                .to_string()
        ),
        "{lines:?}"
    );
    let (lines, _) = complete(&["pl"]);
    assert_eq!(values(&lines), ["plan-drain", "plan-maintenance"]);

    let (lines, directive) = complete(&["status", "-o", ""]);
    assert_eq!(
        values(&lines),
        ["table", "wide", "json", "yaml", "html", "name"]
    );
    assert_eq!(directive, 4);
    let (lines, _) = complete(&["status", "--output=j"]);
    assert_eq!(values(&lines), ["json"]);

    let (lines, directive) = complete(&["plan-drain", "--"]);
    let v = values(&lines);
    for flag in [
        "--bandwidth",
        "--metrics",
        "--from",
        "--kubeconfig",
        "--namespace",
    ] {
        assert!(v.contains(&flag), "{flag} missing: {v:?}");
    }
    assert!(!v.contains(&"--now"), "a hidden flag is offered: {v:?}");
    assert_eq!(directive, 4);

    // Paths are the shell's: no candidates, the default directive.
    assert_eq!(complete(&["--from", ""]), (vec![], 0));
    assert_eq!(complete(&["status", "--kubeconfig=/e"]), (vec![], 0));
    // Nothing to complete and no files: a number, an unknown command.
    assert_eq!(complete(&["--request-timeout", ""]), (vec![], 4));
    assert_eq!(complete(&["frobnicate", ""]), (vec![], 4));
}

#[test]
fn names_from_the_snapshot_on_the_line() {
    let cluster = cluster();
    let (lines, directive) = complete(&["--from", &cluster, "plan-drain", ""]);
    assert_eq!(values(&lines), ["node-1", "node-2", "node-3", "node-4"]);
    assert_eq!(directive, 4);
    // Partial words filter; names already given are not offered again.
    let (lines, _) = complete(&["--from", &cluster, "drain", "node-2", "node-"]);
    assert_eq!(values(&lines), ["node-1", "node-3", "node-4"]);
    let (lines, _) = complete(&["plan-maintenance", "--from", &cluster, "node-3"]);
    assert_eq!(values(&lines), ["node-3"]);

    // migrate: VMs in the namespace on the line, described by phase and namespace.
    let (lines, _) = complete(&["--from", &cluster, "-n", "prod", "migrate", "pg-"]);
    assert_eq!(
        lines,
        [
            "pg-orders-01\tRunning in prod",
            "pg-reporting-01\tFailed in prod"
        ]
    );
    let (dev, _) = complete(&["-n", "dev", "migrate", "--from", &cluster, ""]);
    assert_eq!(
        values(&dev),
        ["devbox-alice", "jenkins-agent-01", "loadgen-01"]
    );
    // -A after a namespace is not needed: a snapshot reads every namespace by default.
    let (all, _) = complete(&["--from", &cluster, "migrate", ""]);
    assert!(all.len() > dev.len() + 5, "{all:?}");

    // explain: a bare name is a migration, a VM is vm/NAME; abort: the other way round.
    let (lines, _) = complete(&["--from", &cluster, "explain", "vm/pg-r"]);
    assert_eq!(values(&lines), ["vm/pg-reporting-01"]);
    let (lines, _) = complete(&["--from", &cluster, "explain", "migrate-"]);
    assert_eq!(values(&lines), ["migrate-cache-redis-01"]);
    let (lines, _) = complete(&["--from", &cluster, "abort", "migration/migrate-"]);
    assert_eq!(values(&lines), ["migration/migrate-cache-redis-01"]);
    let (lines, _) = complete(&["--from", &cluster, "abort", "cache"]);
    assert_eq!(values(&lines), ["cache-redis-01"]);

    // Namespaces for -n.
    let (lines, _) = complete(&["--from", &cluster, "status", "-n", "p"]);
    assert_eq!(values(&lines), ["prod"]);
    let (lines, _) = complete(&["--from", &cluster, "status", "--namespace=te"]);
    assert_eq!(values(&lines), ["tenant-a"]);
}

#[test]
fn a_failure_is_no_candidates_and_no_file_completion() {
    for words in [
        vec!["--from", "/nonexistent/snapshot", "plan-drain", ""],
        // No kubeconfig and no cluster at all.
        vec!["plan-drain", ""],
        vec!["--kubeconfig", "/nonexistent/kubeconfig", "migrate", ""],
    ] {
        let out = run(COMPLETE, &words);
        assert_eq!(out.status.code(), Some(0), "{}", both(&out));
        assert_eq!(stdout(&out), ":4\n", "{words:?}");
        assert!(
            stderr(&out).starts_with("vmctl completion: "),
            "{}",
            both(&out)
        );
    }
}

#[test]
fn names_with_control_characters_are_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = r#"{"apiVersion":"v1","kind":"List","items":[
        {"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a"}},
        {"apiVersion":"v1","kind":"Node","metadata":{"name":"node-\u001b]0;owned\u0007"}},
        {"apiVersion":"v1","kind":"Node","metadata":{"name":"node-\u202eb"}},
        {"apiVersion":"v1","kind":"Node","metadata":{"name":"node-c"},"spec":{"unschedulable":true}}
    ]}"#;
    std::fs::write(dir.path().join("nodes.json"), nodes).unwrap();
    let from = dir.path().display().to_string();
    let out = run(COMPLETE, &["--from", &from, "plan-drain", ""]);
    let (lines, directive) = parse(&stdout(&out));
    assert_eq!(lines, ["node-a", "node-c\tcordoned"], "{}", both(&out));
    assert_eq!(directive, 4);
    assert!(
        stderr(&out).contains("2 name(s) with control characters"),
        "{}",
        both(&out)
    );
}

fn kubeconfig_for(server: &FakeApiServer, dir: &Path) -> String {
    server.write_kubeconfig(dir).display().to_string()
}

#[test]
fn names_from_a_live_cluster_through_the_kubeconfig_read_only() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    let work = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig_for(&server, work.path());
    let (lines, directive) = complete(&["--kubeconfig", &kubeconfig, "plan-drain", "node-"]);
    assert_eq!(values(&lines), ["node-1", "node-2", "node-3", "node-4"]);
    assert_eq!(directive, 4);
    let (lines, _) = complete(&["--kubeconfig", &kubeconfig, "-n", "dev", "migrate", ""]);
    assert_eq!(
        values(&lines),
        ["devbox-alice", "jenkins-agent-01", "loadgen-01"]
    );
    // The VMIs are listed in that namespace only.
    let vmi_lists: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| r.is_list() && r.path.ends_with("/virtualmachineinstances"))
        .map(|r| r.line())
        .collect();
    assert!(
        !vmi_lists.is_empty() && vmi_lists.iter().all(|l| l.contains("/namespaces/dev/")),
        "{vmi_lists:?}"
    );
    // The kubeconfig's contexts.
    let (lines, _) = complete(&["--kubeconfig", &kubeconfig, "--context", ""]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    // Completion reads, never writes.
    let writes: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| r.method != Method::GET)
        .map(|r| r.line())
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
}

#[test]
fn a_server_that_does_not_answer_gets_no_candidates() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    server.inject_fault(Fault::delayed(Duration::from_secs(60)).path("/nodes"));
    let work = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig_for(&server, work.path());
    let out = run(COMPLETE, &["--kubeconfig", &kubeconfig, "plan-drain", ""]);
    assert_eq!(stdout(&out), ":4\n", "{}", both(&out));
    assert_eq!(out.status.code(), Some(0));
}

// ---- the real kubectl ----

/// kubectl's client minor version (`"32+"` reads 32).
fn kubectl_minor(kubectl: &Path) -> Option<u32> {
    let out = Command::new(kubectl)
        .args(["version", "--client", "-o", "json"])
        .output()
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let minor = v.pointer("/clientVersion/minor")?.as_str()?;
    let digits: String = minor.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[test]
fn kubectl_completes_through_the_plugin() {
    let Some(kubectl) = find_kubectl() else {
        println!("skipped: no kubectl (set KUBECTL or put kubectl on PATH)");
        return;
    };
    match kubectl_minor(&kubectl) {
        Some(minor) if minor >= 26 => {}
        other => {
            println!(
                "skipped: kubectl {} runs no plugin completion (1.26+ does)",
                other.map_or("of unknown version".to_string(), |m| format!("1.{m}"))
            );
            return;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(PLUGIN, dir.path().join("kubectl-vmctl")).unwrap();
    std::os::unix::fs::symlink(COMPLETE, dir.path().join("kubectl_complete-vmctl")).unwrap();
    let mut path = vec![dir.path().to_path_buf()];
    if let Some(parent) = kubectl.parent() {
        path.push(parent.to_path_buf());
    }
    let path = std::env::join_paths(path).unwrap();
    let kubectl_complete = |words: &[&str]| {
        let out = Command::new(&kubectl)
            .arg("__complete")
            .args(words)
            .env("PATH", &path)
            .env_remove("KUBECONFIG")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", both(&out));
        parse(&stdout(&out))
    };
    let cluster = cluster();
    // kubectl names the plugin among its commands...
    let (lines, _) = kubectl_complete(&["vmct"]);
    assert_eq!(values(&lines), ["vmctl"]);
    // ...and hands everything after it to kubectl_complete-vmctl.
    let (lines, directive) = kubectl_complete(&["vmctl", "--from", &cluster, "plan-drain", ""]);
    assert_eq!(values(&lines), ["node-1", "node-2", "node-3", "node-4"]);
    assert_eq!(directive, 4);
    let (lines, _) = kubectl_complete(&["vmctl", "-o", ""]);
    assert_eq!(
        values(&lines),
        ["table", "wide", "json", "yaml", "html", "name"]
    );
    let (lines, _) =
        kubectl_complete(&["vmctl", "--from", &cluster, "-n", "prod", "migrate", "pg"]);
    assert_eq!(values(&lines), ["pg-orders-01", "pg-reporting-01"]);
    assert_eq!(kubectl_complete(&["vmctl", "--from", ""]), (vec![], 0));
}
