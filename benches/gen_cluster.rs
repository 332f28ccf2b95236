//! Synthetic cluster generator for benchmarks:
//! `gen-cluster [--vmis N] [--nodes N] [--seed S] [--lean] [--compact] [--out FILE]` writes one
//! `kubectl get -o json`-style List (to FILE, else stdout), streaming item by item. The
//! objects are described in benches/fleet/gen.rs. Deterministic for a given seed. On stderr:
//! the size, the objects per kind, and a few VMIs worth naming (`explain-target: ...`).

#[path = "fleet/gen.rs"]
mod fleet;

use std::io::Write;

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn arg_text(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn main() {
    let mut cfg = fleet::Config::new(
        arg("--vmis", 10_000),
        arg("--nodes", 500),
        arg("--seed", 42),
    );
    if std::env::args().any(|a| a == "--lean") {
        cfg = cfg.lean();
    }
    if std::env::args().any(|a| a == "--compact") {
        cfg = cfg.compact();
    }
    let summary = match arg_text("--out") {
        Some(path) => std::fs::File::create(&path)
            .and_then(|file| fleet::write_list(&cfg, file))
            .map_err(|e| format!("{path}: {e}")),
        None => fleet::write_list(&cfg, std::io::stdout().lock()).map_err(|e| e.to_string()),
    };
    let summary = match summary {
        Ok(s) => s,
        Err(e) => {
            eprintln!("gen-cluster: {e}");
            std::process::exit(1);
        }
    };
    let mut err = std::io::stderr().lock();
    let per_vmi = summary.bytes / cfg.vmis.max(1);
    let _ = writeln!(
        err,
        "generated {} bytes, {} VMIs, {} nodes, {} bytes per VMI",
        summary.bytes, cfg.vmis, cfg.nodes, per_vmi
    );
    for (kind, count) in &summary.counts {
        let _ = writeln!(err, "  {kind}: {count}");
    }
    for (what, namespace, name) in fleet::notable_vmis(&cfg) {
        let _ = writeln!(err, "explain-target: {what} {namespace} {name}");
    }
}
