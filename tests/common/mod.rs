//! Helpers for CLI tests: run the built binary, compare outputs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The reference time of the example cluster.
pub const EXAMPLE_NOW: &str = "2026-11-29T03:00:00Z";

pub fn example_cluster() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cluster")
}

/// Runs vmctl with colour off and no ambient kubeconfig.
pub fn vmctl<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .env_remove("VMCTL_NOW")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run vmctl")
}

/// stdout and stderr, labelled, for assertion messages.
pub fn both(o: &Output) -> String {
    format!("--- stdout\n{}--- stderr\n{}", stdout(o), stderr(o))
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts success and returns stdout.
pub fn ok(o: Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstderr: {}",
        o.status.code(),
        stderr(&o)
    );
    stdout(&o)
}

/// Replaces the source description (a file path or a server URL) so outputs of the two
/// sources compare equal.
pub fn normalise_source(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        // The "as of" line names the source and how the clock was chosen.
        let line = if line.starts_with("as of ") {
            "as of … · SOURCE".to_string()
        } else {
            line.to_string()
        };
        let line = if line.trim_start().starts_with("\"source\":") {
            "  \"source\": \"SOURCE\",".to_string()
        } else {
            line
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Runs vmctl against a live API server through a kubeconfig, with the example's clock so
/// the output compares equal to a `--from` run.
pub fn vmctl_live(kubeconfig: &Path, args: &[&str]) -> Output {
    let mut all: Vec<String> = vec![
        "--kubeconfig".into(),
        kubeconfig.display().to_string(),
        "--now".into(),
        EXAMPLE_NOW.into(),
    ];
    all.extend(args.iter().map(|s| s.to_string()));
    vmctl(all)
}
