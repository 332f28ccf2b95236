//! `vmctl top`'s frame cost: `cargo run --release --example top-frame [-- --vmis N
//! --migrations M --frames F]` builds a watch mirror of N VMIs (default 10,000) with M
//! migrations in flight (default 500: each a Running VMIM, its VMI's migrationState and both
//! launcher pods), then times F frames (default 200) of the two halves a redraw runs:
//! the model (`operate::top::model_of`: the inputs of the VMIs that matter, the status
//! report, the console's model) and the draw (`render::top::draw` into a 200×60 ratatui
//! TestBackend, the same widgets the terminal gets). Prints median, p95 and max per frame.
//! Each frame follows one watch event (a migrating VMI with a new resourceVersion).
//! Target (issue 27): a redraw ≤ 10 ms at 500 migrations in flight.

use std::time::{Duration, Instant};

use k8s_openapi::jiff::Timestamp;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use vmctl::cluster::watch::{Boxed, Change};
use vmctl::migration::follow::Mirror;
use vmctl::model::VirtualMachineInstance;
use vmctl::operate::top::Copies;
use vmctl::policy::status::build_report;
use vmctl::policy::top::TopState;
use vmctl::policy::top::build_model;
use vmctl::render::glyphs::Charset;
use vmctl::render::top::{View, draw};
use vmctl::triage::LoopThresholds;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn boxed<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> Boxed<T> {
    Boxed(Box::new(serde_json::from_value(v).expect("valid object")))
}

fn mirror(vmis: usize, migrations: usize) -> Mirror {
    let mut v = Vec::with_capacity(vmis);
    let mut m = Vec::with_capacity(migrations);
    let mut p = Vec::with_capacity(vmis + migrations);
    for i in 0..vmis {
        let ns = format!("ns-{:02}", i % 40);
        let name = format!("vm-{i:05}");
        let src = format!("node-{:03}", i % 500);
        let dst = format!("node-{:03}", (i + 1) % 500);
        let uid = format!("uid-{i}");
        let mut vmi = json!({"metadata": {"name": name, "namespace": ns, "uid": uid, "resourceVersion": "1"},
            "spec": {"domain": {"memory": {"guest": "8Gi"}}},
            "status": {"nodeName": src, "phase": "Running",
                "conditions": [{"type": "LiveMigratable", "status": "True"}],
                "activePods": {format!("pod-{i}"): src.clone()}}});
        p.push(boxed(
            json!({"metadata": {"name": format!("virt-launcher-{name}-abcde"),
            "namespace": ns, "uid": format!("pod-{i}"), "resourceVersion": "1",
            "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": uid}},
            "spec": {"nodeName": src}, "status": {"phase": "Running"}}),
        ));
        if i < migrations {
            let mig = format!("mig-{i:05}");
            let mig_uid = format!("mig-uid-{i}");
            vmi["status"]["migrationState"] = json!({"migrationUid": mig_uid,
                "sourceNode": src, "targetNode": dst,
                "sourcePod": format!("virt-launcher-{name}-abcde"),
                "targetPod": format!("virt-launcher-{name}-t{i:04}"),
                "mode": if i % 10 == 0 { "PostCopy" } else { "PreCopy" },
                "startTimestamp": "2026-12-01T00:00:00Z"});
            m.push(boxed(
                json!({"metadata": {"name": mig, "namespace": ns, "uid": mig_uid, "resourceVersion": "1",
                "creationTimestamp": "2026-12-01T00:00:00Z"},
                "spec": {"vmiName": name}, "status": {"phase": "Running"}}),
            ));
            p.push(boxed(
                json!({"metadata": {"name": format!("virt-launcher-{name}-t{i:04}"),
                "namespace": ns, "uid": format!("tpod-{i}"), "resourceVersion": "1",
                "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": uid,
                    "kubevirt.io/migrationJobUID": mig_uid}},
                "spec": {"nodeName": dst}, "status": {"phase": "Running"}}),
            ));
        }
        v.push(boxed(vmi));
    }
    let mut mirror = Mirror::default();
    mirror.apply_vmis(Change::Listed(v));
    mirror.apply_vmims(Change::Listed(m));
    mirror.apply_pods(Change::Listed(p));
    mirror
}

fn stats(name: &str, mut d: Vec<Duration>) {
    d.sort();
    let at = |q: f64| d[((d.len() - 1) as f64 * q) as usize];
    println!(
        "{name:<28} median {:>8.3} ms   p95 {:>8.3} ms   max {:>8.3} ms",
        at(0.5).as_secs_f64() * 1e3,
        at(0.95).as_secs_f64() * 1e3,
        at(1.0).as_secs_f64() * 1e3
    );
}

fn main() {
    let vmis = arg("--vmis", 10_000);
    let migrations = arg("--migrations", 500).min(vmis);
    let frames = arg("--frames", 200).max(1);
    let mirror = mirror(vmis, migrations);
    let now: Timestamp = "2026-12-01T00:05:00Z".parse().expect("a time");
    let view = View {
        charset: Charset::Unicode,
        color: true,
        notes: Vec::new(),
        live: true,
    };
    let state = TopState::new(false, false);
    let mut terminal = match Terminal::new(TestBackend::new(200, 60)) {
        Ok(t) => t,
        Err(never) => match never {},
    };
    // A frame as `top` draws it: the objects out of the mirror (copied only when their
    // resourceVersion changed since the last frame), the status report, the model, the draw.
    // Each frame here also changes one migrating VMI (a new resourceVersion), as a watch
    // event would; `cold` is the first frame (every object copied: the first frame, a
    // re-list).
    let mut copies = Copies::default();
    let mut mirror = mirror;
    let (mut inputs_t, mut report_t, mut model_t, mut draw_t) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut cold = Duration::ZERO;
    let mut shown = 0;
    for frame in 0..=frames {
        if frame > 0 && migrations > 0 {
            let i = frame % migrations;
            let key = (format!("ns-{:02}", i % 40), format!("vm-{i:05}"));
            if let Some(v) = mirror.vmis.get(&key) {
                let mut v = VirtualMachineInstance::clone(v);
                v.metadata.resource_version = Some(format!("rv-{frame}"));
                mirror.apply_vmis(Change::Applied(Boxed(Box::new(v))));
            }
        }
        let t = Instant::now();
        let inputs = copies.inputs(&mirror, None, LoopThresholds::default());
        let t_inputs = t.elapsed();
        let t = Instant::now();
        let report = build_report(&inputs, now, "bench");
        copies.keep(inputs);
        let t_report = t.elapsed();
        let t = Instant::now();
        let model = build_model(&report, "all namespaces", &[]);
        let t_model = t.elapsed();
        shown = model.migrations.len();
        let t = Instant::now();
        if let Err(never) = terminal.draw(|f| draw(f, &model, &state, &view)) {
            match never {}
        }
        let t_draw = t.elapsed();
        if frame == 0 {
            cold = t_inputs + t_report + t_model + t_draw;
            continue;
        }
        inputs_t.push(t_inputs);
        report_t.push(t_report);
        model_t.push(t_model);
        draw_t.push(t_draw);
    }
    println!("vmctl top frame: {vmis} VMIs, {shown} migrations in flight, 200x60, {frames} frames");
    println!(
        "first frame (every object copied): {:.3} ms",
        cold.as_secs_f64() * 1e3
    );
    stats("objects out of the mirror", inputs_t.clone());
    stats("status report", report_t.clone());
    stats("console model", model_t.clone());
    stats("draw (ratatui TestBackend)", draw_t.clone());
    let total: Vec<Duration> = (0..draw_t.len())
        .map(|i| inputs_t[i] + report_t[i] + model_t[i] + draw_t[i])
        .collect();
    stats("frame after a change", total);
    stats("redraw for a key (draw)", draw_t);
}
