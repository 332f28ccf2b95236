//! Colour only on a terminal, never with NO_COLOR or --no-color. A pseudo-terminal comes
//! from util-linux `script` (package bsdutils, essential on Debian).

use std::process::Command;

fn under_pty(extra_env: &[(&str, &str)], args: &str) -> String {
    let cmd = format!(
        "{} --from examples/cluster status {args}",
        env!("CARGO_BIN_EXE_vmctl")
    );
    let mut c = Command::new("script");
    c.args(["-qec", &cmd, "/dev/null"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("NO_COLOR");
    for (k, v) in extra_env {
        c.env(k, v);
    }
    let out = c
        .output()
        .expect("script(1) from bsdutils must be installed");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_terminal_gets_colour() {
    let out = under_pty(&[], "");
    assert!(out.contains("\u{1b}["), "no ANSI escapes on a TTY");
    assert!(out.contains("legacy-erp-01"));
}

#[test]
fn no_color_env_and_flag_turn_it_off() {
    assert!(!under_pty(&[("NO_COLOR", "1")], "").contains("\u{1b}["));
    assert!(!under_pty(&[], "--no-color").contains("\u{1b}["));
}

#[test]
fn a_pipe_gets_no_colour() {
    let out = Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(["--from", "examples/cluster", "status"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("\u{1b}["));
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    // Far more output than a pipe buffers, so the writer meets the closed pipe.
    let dir = tempfile::tempdir().unwrap();
    let items: Vec<serde_json::Value> = (0..3000)
        .map(|i| {
            serde_json::json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                "metadata": {"name": format!("vm-{i:05}"), "namespace": "prod"},
                "status": {"nodeName": "node-1", "phase": "Running"}})
        })
        .collect();
    let file = dir.path().join("big.json");
    std::fs::write(
        &file,
        serde_json::json!({"kind": "List", "items": items}).to_string(),
    )
    .unwrap();
    let out = Command::new("bash")
        .args([
            "-c",
            &format!(
                "{} --from {} status | head -1; echo \"vmctl exit ${{PIPESTATUS[0]}}\"",
                env!("CARGO_BIN_EXE_vmctl"),
                file.display()
            ),
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("vmctl exit 0"), "{stdout}{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}
