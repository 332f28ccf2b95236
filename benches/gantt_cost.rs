//! What the plan-drain / plan-maintenance chart costs on its own (issue 27), apart from
//! reading the cluster and planning: `gantt-cost [--vmis N] [--batches N] [--runs N]` builds
//! a synthetic DrainPlan of N VMIs (5 per wave, as parallelMigrationsPerCluster 5 schedules
//! them, plus a few held ones) and a MaintenancePlan of N batches, then times, fastest of
//! the runs: the model (`gantt::of_drain_plan`, `of_maintenance_plan`), the text at 120
//! columns and the SVG at 1200 px. Run by benches/gantt.sh, which also measures the whole
//! command with and without `--chart always` on the 10,000-VMI generator's cluster.

use std::time::{Duration, Instant};

use vmctl::policy::drain::{
    Action, DrainBlocker, DrainPlan, Limits, MigrationQueue, Reason, Verdict, VmiPlan,
};
use vmctl::policy::eviction::StrategySource;
use vmctl::policy::maintenance::{Batch, MaintenancePlan, Order, PerVm, Targets, Totals};
use vmctl::render::Style;
use vmctl::render::gantt::{self, Canvas};
use vmctl::render::glyphs::Charset;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn vmi(i: usize, action: Action, wave: Option<u32>, span: Option<(u64, u64)>) -> VmiPlan {
    VmiPlan {
        namespace: format!("tenant-{}", i % 50),
        name: format!("vm-{i:05}"),
        vm: None,
        node: format!("node-{}", i / 20),
        eviction_strategy: "LiveMigrate".into(),
        eviction_strategy_source: StrategySource::VmiSpec,
        live_migratable: Some(true),
        reasons: match action {
            Action::NoTarget => vec![Reason {
                reason: "NoFeasibleTarget".into(),
                message: String::new(),
            }],
            _ => Vec::new(),
        },
        action,
        explanation: String::new(),
        fix: None,
        target: None,
        wave,
        start_seconds: span.map(|s| s.0),
        end_seconds: span.map(|s| s.1),
        estimate_seconds: span.map(|s| s.1 - s.0),
        budget_seconds: None,
        memory_bytes: None,
        pod_memory_request_bytes: 0,
        migration_policy: None,
        allow_post_copy: false,
        allow_auto_converge: false,
        bandwidth_bytes_per_second: 0,
        evacuation_node: None,
        run_strategy: None,
        prediction: None,
        convergence: None,
        cpu: None,
        stuck: None,
    }
}

fn drain_plan(n: usize) -> DrainPlan {
    let mut vmis: Vec<VmiPlan> = (0..n)
        .map(|i| {
            let wave = (i / 5) as u32 + 1;
            let start = u64::from(wave - 1) * 47;
            let length = 30 + (i as u64 * 7919) % 60;
            vmi(
                i,
                Action::LiveMigrate,
                Some(wave),
                Some((start, start + length)),
            )
        })
        .collect();
    for i in 0..n / 100 {
        vmis.push(vmi(n + i, Action::NoTarget, None, None));
    }
    let end = vmis.iter().filter_map(|v| v.end_seconds).max().unwrap_or(0);
    DrainPlan {
        nodes: (0..n / 20).map(|i| format!("node-{i}")).collect(),
        verdict: Verdict::WillBlock,
        estimated_duration_seconds: end,
        blockers: Vec::new(),
        vmis,
        skipped: Vec::new(),
        incoming: Vec::new(),
        limits: Limits {
            parallel_migrations_per_cluster: 5,
            parallel_outbound_migrations_per_node: 2,
            in_flight_cluster: 0,
            in_flight_per_node: Default::default(),
        },
        queue: MigrationQueue::default(),
        pdbs: Vec::new(),
        waves: (n / 5) as u32,
        defaults_assumed: false,
        kubevirt_version: None,
        assumptions: Vec::new(),
        convergence: None,
        compatibility: Vec::new(),
    }
}

fn maintenance_plan(n: usize) -> MaintenancePlan {
    let batches: Vec<Batch> = (0..n)
        .map(|i| Batch {
            index: i as u32 + 1,
            nodes: vec![format!("node-{i}")],
            verdict: Verdict::WillComplete,
            start_seconds: i as u64 * 200,
            drain_seconds: 80,
            duration_seconds: 200,
            end_seconds: i as u64 * 200 + 200,
            waves: 4,
            migrations: 20,
            shutdowns: 0,
            blockers: if i % 97 == 3 {
                vec![DrainBlocker {
                    kind: "pdb".into(),
                    namespace: Some("prod".into()),
                    name: "p".into(),
                    reason: "MaxUnavailablePDB".into(),
                    message: String::new(),
                    vmis: Vec::new(),
                    blocking: true,
                }]
            } else {
                Vec::new()
            },
            vmis: Vec::new(),
            stuck_nodes: Vec::new(),
            placed_outside_done: Vec::new(),
            compatibility: Vec::new(),
        })
        .collect();
    MaintenancePlan {
        verdict: Verdict::WillBlock,
        order: Order::Given,
        targets: Targets::Any,
        max_unavailable: 1,
        nodes: batches.iter().flat_map(|b| b.nodes.clone()).collect(),
        unknown_nodes: Vec::new(),
        totals: Totals {
            batches: n as u32,
            migrations: 0,
            vms_migrated: 0,
            migrations_per_vm: PerVm { mean: 0.0, max: 0 },
            most_migrated: Vec::new(),
            shutdowns: 0,
            duration_seconds: n as u64 * 200,
            blocked_batches: 0,
        },
        batches,
        first_blocker: None,
        capacity_runs_out: None,
        compare: None,
        defaults_assumed: false,
        kubevirt_version: None,
        assumptions: Vec::new(),
    }
}

/// The fastest of `runs` runs of `f`, and its last result's size.
fn fastest<T>(
    runs: usize,
    mut f: impl FnMut() -> T,
    size: impl Fn(&T) -> usize,
) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut n = 0;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let out = f();
        best = best.min(t.elapsed());
        n = size(&out);
    }
    (best, n)
}

fn main() {
    let vmis = arg("--vmis", 10_000);
    let batches = arg("--batches", 500);
    let runs = arg("--runs", 20);
    let canvas = Canvas {
        width: 120,
        charset: Charset::Unicode,
        style: Style { color: false },
    };
    let drain = drain_plan(vmis);
    let maintenance = maintenance_plan(batches);
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (model, rows) = fastest(runs, || gantt::of_drain_plan(&drain), |g| g.rows.len());
    let g = gantt::of_drain_plan(&drain);
    let (text, lines) = fastest(runs, || gantt::text(&g, &canvas), |t| t.lines().count());
    let (svg, bytes) = fastest(runs, || gantt::svg(&g, 1200), String::len);
    println!(
        "plan-drain, {} VMIs in {} waves: model {:.2} ms ({rows} rows), text {:.3} ms ({lines} lines), svg {:.3} ms ({bytes} bytes)",
        drain.vmis.len(),
        drain.waves,
        ms(model),
        ms(text),
        ms(svg)
    );
    let (model, rows) = fastest(
        runs,
        || gantt::of_maintenance_plan(&maintenance),
        |g| g.rows.len(),
    );
    let g = gantt::of_maintenance_plan(&maintenance);
    let (text, lines) = fastest(runs, || gantt::text(&g, &canvas), |t| t.lines().count());
    let (svg, bytes) = fastest(runs, || gantt::svg(&g, 1200), String::len);
    println!(
        "plan-maintenance, {batches} batches: model {:.3} ms ({rows} rows), text {:.3} ms ({lines} lines), svg {:.3} ms ({bytes} bytes)",
        ms(model),
        ms(text),
        ms(svg)
    );
    // Below the cap: every VM a row.
    let small = drain_plan(40);
    let (model, _) = fastest(runs, || gantt::of_drain_plan(&small), |g| g.rows.len());
    let g = gantt::of_drain_plan(&small);
    let (text, lines) = fastest(runs, || gantt::text(&g, &canvas), |t| t.lines().count());
    println!(
        "plan-drain, {} VMIs (one row each): model {:.3} ms, text {:.3} ms ({lines} lines)",
        small.vmis.len(),
        ms(model),
        ms(text)
    );
}
