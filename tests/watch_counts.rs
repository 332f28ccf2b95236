//! `status --watch` counts a node's VMIs and launcher pods as one-shot `status` does (the
//! cold trial found node-3's row at 2 VMIs / 2 pods in the watch, 6 in `status -A`).

mod common;
mod support;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;
use support::FakeApiServer;

#[test]
fn the_watchs_node_rows_count_what_one_shot_status_counts() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    let dir = tempfile::tempdir().unwrap();
    let kc = server.write_kubeconfig(dir.path()).display().to_string();
    let out = vmctl(["--kubeconfig", &kc, "status", "-A", "-o", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"));
    let nodes = doc["nodes"].as_array().cloned().unwrap_or_default();
    assert!(!nodes.is_empty(), "{doc}");
    let mut watch = Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(["--kubeconfig", &kc, "status", "-A", "--watch"])
        .env("NO_COLOR", "1")
        .env("VMCTL_JOURNAL", "off")
        .env_remove("KUBECONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = watch.stdout.take().unwrap();
    let want: Vec<String> = nodes
        .iter()
        .map(|n| format!("node {} ", n["name"].as_str().unwrap_or("")))
        .collect();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let mut text = String::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline && !want.iter().all(|w| text.contains(w.as_str())) {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => text.push_str(&String::from_utf8_lossy(&buf[..n])),
            }
        }
        text
    });
    let text = reader.join().unwrap();
    let _ = watch.kill();
    let _ = watch.wait();
    for n in &nodes {
        let name = n["name"].as_str().unwrap_or("");
        let line = text
            .lines()
            .find(|l| l.contains(&format!("node {name} ")))
            .unwrap_or_else(|| panic!("no line for node {name}: {text}"));
        let vmis = n["vmisLeft"].as_array().map_or(0, Vec::len);
        let pods = n["launcherPodsLeft"].as_u64().unwrap_or(0);
        assert!(
            line.contains(&format!("{vmis} VMI")),
            "one-shot status: {vmis} VMIs on {name}; the watch: {line}"
        );
        assert!(
            line.contains(&format!("{pods} launcher pod")),
            "one-shot status: {pods} launcher pods on {name}; the watch: {line}"
        );
    }
}
