//! The test suite's fake Kubernetes API server (tests/support/apiserver.rs), standalone, for
//! benchmarks:
//!
//!     fake-apiserver (--from FILE | --vmis N [--nodes N] [--seed S] [--lean])
//!                    [--latency-ms N] [--kubeconfig PATH]
//!
//! Serves a cluster read from FILE (a file or a directory, JSON or YAML, read as `vmctl
//! --from` reads it: a `kubectl get -o json` List, a `vmctl snapshot`, a must-gather), or
//! generated in-process by benches/fleet/gen.rs (the same objects `gen-cluster` writes for the same flags).
//! `--latency-ms` delays every response (watches included) by N ms. Once it listens it
//! writes the kubeconfig (the last thing it does: wait for that file) and prints
//! `listening on URL`. It serves until killed.
//!
//! Two extra paths, for counting work (neither is counted itself):
//! - `GET /debug/requests`: `{"requests": N, "lists": L, "watches": W, "gets": G,
//!   "by": {"list pods": n, ...}, "lines": [...]}` since the last reset;
//! - `POST /debug/reset`: forgets the request log.

#[path = "fleet/gen.rs"]
mod fleet;
#[path = "../tests/support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{FakeApiServer, Fault, HookReply, HookRequest};

static SERVER: OnceLock<FakeApiServer> = OnceLock::new();

fn args() -> Vec<String> {
    std::env::args().collect()
}

fn arg_text(name: &str) -> Option<String> {
    let args = args();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn arg(name: &str, default: u64) -> Result<u64, String> {
    match arg_text(name) {
        None => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| format!("{name}: not a number: {v:?}")),
    }
}

/// The objects of a file or a directory, read by the loader `vmctl --from` uses
/// (`vmctl::cluster::files::read_path`): a `kubectl get -o json` List, a `vmctl snapshot`
/// (YAML or JSON, whatever its extension), YAML or JSON documents, a must-gather directory.
fn read_file(path: &str) -> Result<Vec<Value>, String> {
    let found =
        vmctl::cluster::files::read_path(std::path::Path::new(path)).map_err(|e| e.to_string())?;
    Ok(found.objects.into_iter().map(|o| o.value).collect())
}

fn load() -> Result<Vec<Value>, String> {
    if let Some(path) = arg_text("--from") {
        return read_file(&path);
    }
    let mut cfg = fleet::Config::new(
        arg("--vmis", 10_000)?,
        arg("--nodes", 500)?,
        arg("--seed", 42)?,
    );
    if args().iter().any(|a| a == "--lean") {
        cfg = cfg.lean();
    }
    Ok(fleet::objects(&cfg))
}

/// Counts of the request log, leaving out the /debug paths.
fn counts(server: &FakeApiServer) -> Value {
    let requests: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| !r.path.starts_with("/debug"))
        .collect();
    let mut by: BTreeMap<String, u64> = BTreeMap::new();
    for r in &requests {
        let what = match r.kind {
            Some(kind) => format!("{} {}", r.verb, kind.plural()),
            None => format!("{} {}", r.verb, r.path),
        };
        *by.entry(what).or_default() += 1;
    }
    json!({
        "requests": requests.len(),
        "lists": requests.iter().filter(|r| r.is_list()).count(),
        "watches": requests.iter().filter(|r| r.is_watch()).count(),
        "gets": requests.iter().filter(|r| r.verb == "get" && r.kind.is_some()).count(),
        "by": by,
        "lines": requests.iter().map(|r| format!("{} {}", r.verb, r.line())).collect::<Vec<_>>(),
    })
}

fn debug_hook(request: &HookRequest) -> Option<HookReply> {
    let server = SERVER.get()?;
    match request.path.as_str() {
        "/debug/requests" => Some(HookReply::Json(200, counts(server))),
        "/debug/reset" => {
            server.reset_requests();
            Some(HookReply::Json(200, json!({"reset": true})))
        }
        _ => None,
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("fake-apiserver: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let started = Instant::now();
    let objects = load()?;
    let count = objects.len();
    let server = FakeApiServer::start_blocking(objects);
    let latency = arg("--latency-ms", 0)?;
    if latency > 0 {
        // A fault without a status, path or limit matches every request, forever.
        server.inject_fault(Fault::delayed(Duration::from_millis(latency)));
    }
    let url = server.url();
    let kubeconfig = server.kubeconfig_yaml();
    if SERVER.set(server).is_err() {
        return Err("started twice".into());
    }
    if let Some(server) = SERVER.get() {
        server.add_hook(Arc::new(debug_hook));
    }
    if let Some(path) = arg_text("--kubeconfig") {
        // Written whole, then renamed: a waiting script never reads half a file.
        let tmp = format!("{path}.tmp");
        std::fs::write(&tmp, kubeconfig).map_err(|e| format!("{tmp}: {e}"))?;
        std::fs::rename(&tmp, &path).map_err(|e| format!("{path}: {e}"))?;
    }
    println!(
        "listening on {url} ({count} objects, latency {latency} ms, ready in {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
