//! Helpers for CLI tests: run the built binary, compare outputs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The reference time of the example cluster.
pub const EXAMPLE_NOW: &str = "2026-11-29T03:00:00Z";

pub fn example_cluster() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cluster")
}

/// Runs vmctl with colour off, no ambient kubeconfig and no ambient journal (a test that
/// wants one passes `--journal`, which wins over `VMCTL_JOURNAL=off`).
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
        .env("VMCTL_JOURNAL", "off")
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

/// A Prometheus on loopback answering every query with `answer`: its URL and the request
/// line of each query it was asked (`GET /api/v1/query?query=… HTTP/1.1`).
pub fn fake_prometheus(
    answer: serde_json::Value,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    fake_prometheus_routes(vec![("", answer)])
}

/// As [`fake_prometheus`], the answer chosen by the request line: the first route whose key
/// it contains (e.g. `query_range` before `/api/v1/query`); the last route's when none does.
pub fn fake_prometheus_routes(
    routes: Vec<(&'static str, serde_json::Value)>,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let url = format!("http://{}", listener.local_addr().expect("local address"));
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = asked.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut chunk = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&chunk[..n]),
                }
            }
            let line = String::from_utf8_lossy(&head)
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            let answer = routes
                .iter()
                .find(|(key, _)| line.contains(key))
                .or(routes.last())
                .map(|(_, a)| a.to_string())
                .unwrap_or_default();
            log.lock().unwrap_or_else(|e| e.into_inner()).push(line);
            let body = answer;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, asked)
}

/// The real kubectl: `$KUBECTL` when set (it must be a file), else `kubectl` on `PATH`; None
/// when there is none.
pub fn find_kubectl() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("KUBECTL").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        assert!(path.is_file(), "KUBECTL={} is not a file", path.display());
        return Some(path);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("kubectl"))
        .find(|p| p.is_file())
}

/// [`find_kubectl`], for the tests that need it: CI installs Debian's kubernetes-client.
pub fn kubectl_binary() -> PathBuf {
    find_kubectl().unwrap_or_else(|| {
        panic!(
            "no kubectl found (set KUBECTL or put kubectl on PATH; CI installs Debian's \
             kubernetes-client)"
        )
    })
}
