//! `vmctl plan-maintenance` on the example cluster, from files and live.

mod common;
mod support;

use common::*;
use serde_json::Value;
use support::FakeApiServer;

fn plan_json(args: &[&str]) -> (Value, Option<i32>) {
    let mut all = vec![
        "--from",
        "examples/cluster",
        "plan-maintenance",
        "-o",
        "json",
    ];
    all.extend_from_slice(args);
    let out = vmctl(all);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    (
        serde_json::from_slice(&out.stdout).unwrap(),
        out.status.code(),
    )
}

#[test]
fn all_nodes_table() {
    let out = vmctl(["--from", "examples/cluster", "plan-maintenance", "--all"]);
    assert_eq!(out.status.code(), Some(1), "the rollout blocks: exit 1");
    insta::assert_snapshot!("plan_maintenance_all", stdout(&out));
}

#[test]
fn all_nodes_wide_lists_every_vm_of_every_batch() {
    let out = vmctl([
        "--from",
        "examples/cluster",
        "plan-maintenance",
        "--all",
        "--max-unavailable",
        "2",
        "-o",
        "wide",
    ]);
    insta::assert_snapshot!("plan_maintenance_all_wide", stdout(&out));
}

#[test]
fn json_contract() {
    let (plan, code) = plan_json(&["--all", "--max-unavailable", "2"]);
    assert_eq!(code, Some(1));
    assert_eq!(plan["apiVersion"], "vmctl/v1alpha1");
    assert_eq!(plan["kind"], "MaintenancePlan");
    assert_eq!(plan["verdict"], "will-block");
    assert_eq!(plan["maxUnavailable"], 2);
    let batches = plan["batches"].as_array().unwrap();
    assert_eq!(batches.len(), 2, "4 nodes, 2 at a time");
    for b in batches {
        assert!(b["nodes"].as_array().unwrap().len() <= 2);
        assert!(b["durationSeconds"].as_u64().is_some());
        for v in b["vmis"].as_array().unwrap() {
            assert!(v.get("target").is_some(), "{v}");
            assert!(v["action"].is_string());
        }
    }
    let t = &plan["totals"];
    for field in ["migrations", "shutdowns", "durationSeconds"] {
        assert!(t[field].as_u64().is_some(), "totals.{field}");
    }
    assert!(t["migrationsPerVm"]["mean"].as_f64().is_some());
    assert!(t["migrationsPerVm"]["max"].as_u64().is_some());
    assert!(plan["firstBlocker"]["atSeconds"].as_u64().is_some());
    assert!(plan["compare"]["default"]["migrationsPerVm"].is_object());
}

/// A one-node rollout is plan-drain of that node: the same rows, actions and targets.
#[test]
fn one_node_is_plan_drain_of_that_node() {
    for node in ["node-1", "node-2", "node-3"] {
        let (m, _) = plan_json(&[node]);
        let out = vmctl([
            "--from",
            "examples/cluster",
            "plan-drain",
            node,
            "-o",
            "json",
        ]);
        let d: Value = serde_json::from_slice(&out.stdout).unwrap();
        let rows = |vmis: &Value| -> Vec<(String, String, String)> {
            let mut r: Vec<(String, String, String)> = vmis
                .as_array()
                .unwrap()
                .iter()
                .map(|v| {
                    (
                        format!("{}/{}", v["namespace"], v["name"]),
                        v["action"].to_string(),
                        v["target"].to_string(),
                    )
                })
                .collect();
            r.sort();
            r
        };
        assert_eq!(rows(&m["batches"][0]["vmis"]), rows(&d["vmis"]), "{node}");
        assert_eq!(m["verdict"], d["verdict"], "{node}");
    }
}

#[test]
fn auto_order_and_done_targets_move_vms_less_than_the_default() {
    let (plan, _) = plan_json(&["--all", "--order", "auto", "--targets", "done"]);
    let c = &plan["compare"];
    assert_eq!(c["default"]["order"], "given");
    assert_eq!(c["alternative"]["order"], "auto");
    assert_eq!(c["alternative"]["targets"], "done");
    let mean = |s: &Value| s["migrationsPerVm"]["mean"].as_f64().unwrap();
    assert!(
        mean(&c["alternative"]) < mean(&c["default"]),
        "{} vs {}",
        mean(&c["alternative"]),
        mean(&c["default"])
    );
    let table = stdout(&vmctl([
        "--from",
        "examples/cluster",
        "plan-maintenance",
        "--all",
        "--order",
        "auto",
        "--targets",
        "done",
    ]));
    assert!(table.contains("given order + any targets:"), "{table}");
    assert!(table.contains("auto order + done targets:"), "{table}");
}

#[test]
fn nodes_are_named_selected_or_all_and_a_typo_gets_a_suggestion() {
    let out = vmctl(["--from", "examples/cluster", "plan-maintenance", "nod-1"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("did you mean node-1"),
        "{}",
        stderr(&out)
    );
    let out = vmctl([
        "--from",
        "examples/cluster",
        "plan-maintenance",
        "--all",
        "node-1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = vmctl(["--from", "examples/cluster", "plan-maintenance"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let (plan, _) = plan_json(&["-l", "kubernetes.io/hostname in (node-2,node-1)"]);
    assert_eq!(plan["nodes"], serde_json::json!(["node-1", "node-2"]));
    let (plan, _) = plan_json(&["node-2", "node-1"]);
    assert_eq!(
        plan["nodes"],
        serde_json::json!(["node-2", "node-1"]),
        "given order"
    );
}

#[test]
fn live_equals_snapshot_and_is_read_only() {
    let server = FakeApiServer::start_from_path_blocking(&example_cluster());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    for format in ["table", "json"] {
        let l = vmctl_live(&kubeconfig, &["plan-maintenance", "--all", "-o", format]);
        let f = vmctl([
            "--from",
            "examples/cluster",
            "plan-maintenance",
            "--all",
            "-o",
            format,
        ]);
        assert_eq!(l.status.code(), f.status.code());
        assert_eq!(
            normalise_source(&stdout(&l)),
            normalise_source(&stdout(&f)),
            "-o {format}"
        );
    }
    assert_eq!(
        server.count_requests(|r| r.method != support::Method::GET),
        0,
        "plan-maintenance never mutates"
    );
}

/// tests/fixtures/drain-cpu (see its header): the rollout's first batch drains node-a, where
/// erp-db's pinned TSX features exist nowhere else: that batch blocks on it, named in CPU
/// terms, and the risks of the others are listed per batch without changing the verdict.
#[test]
fn cpu_compatibility_per_batch() {
    let out = vmctl([
        "--from",
        "tests/fixtures/drain-cpu",
        "--now",
        "2026-12-01T00:00:00Z",
        "plan-maintenance",
        "node-a",
        "node-b",
        "-o",
        "json",
    ]);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    assert_eq!(out.status.code(), Some(1));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["verdict"], "will-block");
    let first = &plan["batches"][0];
    assert_eq!(first["nodes"], serde_json::json!(["node-a"]));
    let kinds: Vec<&str> = first["compatibility"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["no-compatible-node", "launcher-skew", "unlisted-features"]
    );
    assert_eq!(plan["firstBlocker"]["blocker"]["name"], "erp-db");
    assert!(
        plan["firstBlocker"]["blocker"]["message"]
            .as_str()
            .unwrap()
            .contains("node-b lacks cpu-feature.node.kubevirt.io/hle, rtm"),
        "{}",
        plan["firstBlocker"]
    );
    // Batch 2 drains node-b: report (moved there in batch 1) now runs the current launcher
    // and its machine type exists nowhere else (node-c's QEMU stops at rhel9.4.0).
    let second = &plan["batches"][1];
    let report = second["vmis"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "report")
        .unwrap();
    assert_eq!(report["action"], "no-target");
    assert!(
        report["explanation"]
            .as_str()
            .unwrap()
            .contains("node-c lacks machine-type.node.kubevirt.io/pc-q35-rhel9.6.0"),
        "{report}"
    );
    let table = vmctl([
        "--from",
        "tests/fixtures/drain-cpu",
        "--now",
        "2026-12-01T00:00:00Z",
        "plan-maintenance",
        "node-a",
        "node-b",
    ]);
    insta::assert_snapshot!("plan_maintenance_cpu_compat", stdout(&table));
}

#[test]
fn a_pdb_whose_status_never_catches_up_blocks_the_batch_that_reaches_it() {
    let out = vmctl([
        "--from",
        "tests/fixtures/drain-pdb/never-synced",
        "--now",
        "2026-11-29T03:00:00Z",
        "plan-maintenance",
        "node-1",
        "-o",
        "json",
    ]);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["verdict"], "will-block", "{plan}");
    assert_eq!(out.status.code(), Some(1));
    let blockers = plan["batches"][0]["blockers"].as_array().unwrap();
    let b = blockers
        .iter()
        .find(|b| b["reason"] == "StatusNeverSyncs")
        .unwrap_or_else(|| panic!("{blockers:?}"));
    assert_eq!(b["blocking"], true);
    assert!(b["message"].as_str().unwrap().contains("for good"), "{b}");
}

#[test]
fn all_nodes_chart_after_the_table() {
    let base = ["--from", "examples/cluster", "plan-maintenance", "--all"];
    let run = |columns: &str, lang: &str, extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        std::process::Command::new(env!("CARGO_BIN_EXE_vmctl"))
            .args(args)
            .env("NO_COLOR", "1")
            .env("COLUMNS", columns)
            .env("LANG", lang)
            .env_remove("LC_ALL")
            .env_remove("LC_CTYPE")
            .env_remove("KUBECONFIG")
            .env_remove("VMCTL_NOW")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap()
    };
    let plain = stdout(&vmctl(base));
    assert_eq!(
        stdout(&run("100", "C.UTF-8", &[])),
        plain,
        "no chart off a TTY"
    );
    assert_eq!(stdout(&run("100", "C.UTF-8", &["--no-chart"])), plain);
    let out = run("100", "C.UTF-8", &["--chart", "always"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let chart = text
        .strip_prefix(&plain)
        .unwrap_or_else(|| panic!("{text}"));
    // The batches in order, each blocker at its batch's start.
    let rows: Vec<&str> = chart
        .lines()
        .filter(|l| l.starts_with(char::is_numeric))
        .collect();
    assert_eq!(rows.len(), 4, "{chart}");
    // The first batch's blocker at 0 s, in the gutter before its bar.
    assert!(rows[0].starts_with("1 node-1 ✖█"), "{chart}");
    assert!(rows[0].contains("capacity runs out"), "{chart}");
    insta::assert_snapshot!("plan_maintenance_all_chart", chart);
    let ascii = stdout(&run(
        "80",
        "C",
        &["--chart", "always", "--upgrade-time", "10m"],
    ));
    let ascii = ascii
        .strip_prefix(&plain)
        .map(str::to_string)
        .unwrap_or(ascii);
    let chart = &ascii[ascii
        .find("\nRolling maintenance of 4 node(s), 1 at a time: ETA")
        .unwrap()..];
    assert!(chart.is_ascii(), "{chart}");
    assert!(chart.contains("- upgrade"), "{chart}");
    insta::assert_snapshot!("plan_maintenance_all_chart_ascii_upgrade", chart);
}
