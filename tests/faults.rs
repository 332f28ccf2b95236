//! How vmctl meets a failing API server (issue 11 part 6): optional reads are tolerated the
//! same way whatever the failure, errors name the attempts and the flag that ran out, and
//! each kind of failure comes with the hint it calls for.

mod common;
mod support;

use std::path::Path;
use std::time::Duration;

use common::*;
use support::{FakeApiServer, Fault, Method};

fn incidents() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/incidents")
}

fn run(server: &FakeApiServer, args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let mut all = vec![
        "--kubeconfig".to_string(),
        kubeconfig.display().to_string(),
        "--now".into(),
        "2026-12-03T10:00:00Z".into(),
    ];
    all.extend(args.iter().map(|s| s.to_string()));
    vmctl(all)
}

#[test]
fn a_failing_events_list_is_tolerated_like_a_forbidden_one() {
    let server = FakeApiServer::start_from_path_blocking(&incidents());
    server.inject_fault(Fault::status(503).on(Method::GET, "/events"));
    let out = run(
        &server,
        &["explain", "-n", "stall", "mig-stall-v18", "-o", "json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["cause"], "no-progress", "status alone decides: {r:#}");
    let assumptions = r["assumptions"].to_string();
    assert!(assumptions.contains("events"), "{assumptions}");
    // Retried before giving up: 1 + 3 attempts on the events list.
    let tries = server.count_requests(|q| q.path.ends_with("/events"));
    assert_eq!(tries, 4, "{tries} event list requests");
}

#[test]
fn persistent_overload_names_the_attempts_and_says_retry_later() {
    let server = FakeApiServer::start_from_path_blocking(&incidents());
    server.inject_fault(Fault::status(503).path("/virtualmachineinstances"));
    let out = run(&server, &["status", "-A"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(err.contains("(4 attempts)"), "{err}");
    assert!(err.contains("overloaded or throttling"), "{err}");
}

#[test]
fn kubevirt_not_served_is_said_so() {
    let server = FakeApiServer::start_from_path_blocking(&incidents());
    server.inject_fault(Fault::status(404).on(Method::GET, "/virtualmachineinstances"));
    let out = run(&server, &["status", "-A"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains("KubeVirt is not installed there, or --context points at another cluster"),
        "{err}"
    );
}

#[test]
fn a_slow_server_names_the_request_timeout() {
    let server = FakeApiServer::start_from_path_blocking(&incidents());
    server.inject_fault(Fault::delayed(Duration::from_secs(4)).path("/virtualmachineinstances"));
    let out = run(&server, &["--request-timeout", "1", "status", "-A"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains("no answer from the API server within --request-timeout 1s (4 attempts)"),
        "{err}"
    );
    assert!(err.contains("raise --request-timeout (now 1s)"), "{err}");
}

#[test]
fn no_cluster_at_all_is_a_cluster_error() {
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(["status"])
        .env("NO_COLOR", "1")
        .env("HOME", home.path())
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(err.contains("no cluster configured"), "{err}");
    assert!(err.contains("--from PATH"), "{err}");
}

#[test]
fn status_goes_on_when_migration_policies_cannot_be_read() {
    let server = FakeApiServer::start_from_path_blocking(&incidents());
    server.inject_fault(Fault::status(403).path("/migrationpolicies"));
    let out = run(&server, &["status", "-A", "-o", "json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let said = "could not read MigrationPolicies (HTTP 403";
    assert!(err.contains(said), "{err}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "input" && w["message"].as_str().unwrap().contains(said)),
        "{:#}",
        r["warnings"]
    );
    assert!(!r["vmis"].as_array().unwrap().is_empty());
}

/// Issue 33: an answer that is not a Kubernetes Status (a mux's plain-text `404 page not
/// found`, here for the DaemonSet kubectl's rules read) was printed raw with its newline:
/// `cannot delete 404 page not found\n: kubevirt/virt-handler-1`.
#[test]
fn a_plain_text_answer_is_named_as_such_on_one_line() {
    let server = FakeApiServer::start_blocking(support::kubevirt_sim::drain_cluster());
    server.add_hook(std::sync::Arc::new(|r: &support::HookRequest| {
        r.path
            .contains("/daemonsets/")
            .then(|| support::HookReply::Text(404, "404 page not found\n".into()))
    }));
    let out = run(
        &server,
        &["drain", "node-1", "--dry-run", "--ignore-daemonsets"],
    );
    let err = stderr(&out);
    let all = format!("{}{err}", stdout(&out));
    assert!(
        all.contains("HTTP 404 (not a Kubernetes Status: \"404 page not found\")"),
        "{all}"
    );
    assert!(!all.contains("\\n"), "a literal \\n: {all}");
    assert!(
        !all.contains("404 page not found\n"),
        "a raw newline: {all}"
    );
}

/// Issue 33 (tried cold): live `plan-drain` and `explain` printed `as of
/// 2026-12-06T06:31:17.812563186Z`; every time vmctl prints is to the second.
#[test]
fn the_live_clock_is_printed_to_the_second() {
    let server = FakeApiServer::start_from_path_blocking(&incidents());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let kubeconfig = kubeconfig.display().to_string();
    let out = vmctl(["--kubeconfig", &kubeconfig, "plan-drain", "node-1"]);
    let text = stdout(&out);
    let as_of = text
        .lines()
        .find_map(|l| l.strip_prefix("as of "))
        .unwrap_or_else(|| panic!("{text}{}", stderr(&out)));
    let time = as_of.split_whitespace().next().unwrap_or_default();
    assert!(time.ends_with('Z') && !time.contains('.'), "{as_of}");
}
