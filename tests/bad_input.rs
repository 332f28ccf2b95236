//! Bad input gets one clear line naming the file (and line), a non-zero exit, no panic.

use std::path::Path;
use std::process::{Command, Output};

fn vmctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .output()
        .expect("run vmctl")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_one_line_error(o: &Output, code: i32, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    let first = err.lines().next().unwrap_or_default();
    assert!(first.starts_with("error: "), "{err}");
    for n in needles {
        assert!(first.contains(n), "{first:?} lacks {n:?}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn malformed_yaml_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "vmis.yaml",
        "apiVersion: v1\nkind: List\nitems:\n- metadata: {name: x}}\n- metadata: {name: y}\n",
    );
    let o = vmctl(&["--from", &f, "status"]);
    assert_one_line_error(&o, 4, &[&format!("{f}:4:"), "invalid YAML"]);
}

#[test]
fn malformed_json_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "vmis.json",
        "{\n  \"kind\": \"List\",\n  \"items\": [,]\n}\n",
    );
    let o = vmctl(&["--from", &f, "status"]);
    assert_one_line_error(&o, 4, &[&format!("{f}:3:"), "invalid JSON"]);
}

#[test]
fn a_file_of_the_wrong_kind_says_what_it_found() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
    );
    let o = vmctl(&["--from", &f, "status"]);
    assert_one_line_error(
        &o,
        4,
        &[&f, "no object of a kind vmctl reads", "Deployment"],
    );
}

#[test]
fn an_empty_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let o = vmctl(&["--from", &d, "status"]);
    assert_one_line_error(&o, 4, &[&d, "no .yaml, .yml or .json file"]);
}

#[test]
fn a_missing_file_is_refused() {
    let o = vmctl(&["--from", "/nonexistent/cluster.yaml", "status"]);
    assert_one_line_error(
        &o,
        4,
        &["/nonexistent/cluster.yaml", "no such file or directory"],
    );
}

#[test]
fn a_field_of_the_wrong_type_names_the_object_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "vmi.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: vm-a, namespace: prod}\nspec: {domain: {memory: {guest: lots}}}\n",
    );
    let o = vmctl(&["--from", &f, "status"]);
    assert_one_line_error(
        &o,
        4,
        &[&f, "VirtualMachineInstance prod/vm-a", "invalid quantity"],
    );
}

#[test]
fn a_bad_selector_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "n.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n",
    );
    let o = vmctl(&["--from", &f, "status", "-l", "a in b"]);
    assert_one_line_error(&o, 2, &["invalid selector"]);
}

#[test]
fn an_unknown_vm_suggests_close_names() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "vmi.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: database-01, namespace: prod}\n",
    );
    let o = vmctl(&["--from", &f, "status", "databse-01"]);
    assert_one_line_error(&o, 3, &["\"databse-01\" not found"]);
    assert!(
        stderr(&o).contains("did you mean database-01?"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_unreachable_cluster_names_the_resource_and_verb() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = write(
        dir.path(),
        "kubeconfig",
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:9'}\ncontexts:\n- name: c\n  context: {cluster: c, user: u, namespace: default}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: t}\n",
    );
    let o = vmctl(&[
        "--kubeconfig",
        &kubeconfig,
        "--request-timeout",
        "2",
        "status",
    ]);
    assert_one_line_error(
        &o,
        5,
        &["list", "cannot reach the API server at http://127.0.0.1:9"],
    );
}

#[test]
fn a_missing_kubeconfig_is_named() {
    let o = vmctl(&["--kubeconfig", "/nonexistent/kubeconfig", "status"]);
    assert_one_line_error(
        &o,
        4,
        &["/nonexistent/kubeconfig", "cannot read kubeconfig"],
    );
}
