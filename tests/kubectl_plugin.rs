//! vmctl as a kubectl plugin (issue 16, item 1): the real `kubectl` (`$KUBECTL`, else
//! `kubectl` on `PATH`; CI installs Debian's kubernetes-client) finds `kubectl-vmctl` on
//! `PATH`, runs `kubectl vmctl <command>` exactly as `vmctl <command>` (on a snapshot and
//! against the fake API server through kubectl's own kubeconfig flag), and help names the
//! way it was invoked.

mod common;
mod support;

use std::path::Path;
use std::process::{Command, Output};

use common::*;
use support::FakeApiServer;
use support::kubevirt_sim;

const PLUGIN: &str = env!("CARGO_BIN_EXE_kubectl-vmctl");

/// `kubectl ARGS` with only `plugins` (and kubectl's own directory) on PATH.
fn kubectl(plugins: &Path, args: &[&str]) -> Output {
    let kubectl = kubectl_binary();
    let mut path = vec![plugins.to_path_buf()];
    if let Some(dir) = kubectl.parent() {
        path.push(dir.to_path_buf());
    }
    let path = std::env::join_paths(path).unwrap();
    Command::new(&kubectl)
        .args(args)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .output()
        .unwrap()
}

/// A directory holding `kubectl-vmctl` (the installed binary, linked).
fn plugin_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(PLUGIN, dir.path().join("kubectl-vmctl")).unwrap();
    dir
}

#[test]
fn kubectl_finds_the_plugin_and_runs_it_as_vmctl() {
    let dir = plugin_dir();
    let list = kubectl(dir.path(), &["plugin", "list"]);
    let text = both(&list);
    assert!(
        text.contains(&dir.path().join("kubectl-vmctl").display().to_string()),
        "{text}"
    );
    assert!(!text.contains("warning"), "{text}");

    let cluster = example_cluster();
    let cluster = cluster.to_str().unwrap();
    let through_kubectl = kubectl(dir.path(), &["vmctl", "--from", cluster, "status"]);
    let direct = vmctl(["--from", cluster, "status"]);
    assert_eq!(
        through_kubectl.status.code(),
        Some(0),
        "{}",
        both(&through_kubectl)
    );
    assert_eq!(stdout(&through_kubectl), stdout(&direct));

    // Exit codes pass through kubectl: plan-drain of a node that will block exits 1.
    let blocked = kubectl(
        dir.path(),
        &["vmctl", "--from", cluster, "plan-drain", "node-3"],
    );
    assert_eq!(blocked.status.code(), Some(1), "{}", both(&blocked));
}

#[test]
fn help_and_usage_errors_name_kubectl_vmctl() {
    let dir = plugin_dir();
    let help = kubectl(dir.path(), &["vmctl", "plan-drain", "--help"]);
    assert!(
        stdout(&help).contains("Usage: kubectl vmctl plan-drain"),
        "{}",
        both(&help)
    );
    let bad = kubectl(dir.path(), &["vmctl", "plan-drain"]);
    assert_eq!(bad.status.code(), Some(2), "{}", both(&bad));
    // Invoked as vmctl, it says vmctl.
    let direct = vmctl(["plan-drain", "--help"]);
    assert!(
        stdout(&direct).contains("Usage: vmctl plan-drain"),
        "{}",
        both(&direct)
    );
}

#[test]
fn kubectl_vmctl_reads_a_live_cluster_with_kubectls_kubeconfig() {
    let server = FakeApiServer::start_blocking(kubevirt_sim::drain_cluster_with(
        &kubevirt_sim::DrainFixture::default(),
    ));
    let work = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(work.path());
    let kubeconfig = kubeconfig.to_str().unwrap();
    let dir = plugin_dir();
    let args = ["status", "-A"];
    let mut through = vec!["vmctl", "--kubeconfig", kubeconfig, "--now", EXAMPLE_NOW];
    through.extend(args);
    let through_kubectl = kubectl(dir.path(), &through);
    let direct = vmctl_live(Path::new(kubeconfig), &args);
    assert_eq!(
        through_kubectl.status.code(),
        Some(0),
        "{}",
        both(&through_kubectl)
    );
    assert_eq!(stdout(&through_kubectl), stdout(&direct));
    assert!(
        stdout(&direct).contains("(given) · cluster http://127.0.0.1:"),
        "{}",
        both(&direct)
    );
}
