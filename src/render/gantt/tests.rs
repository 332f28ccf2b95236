use super::*;
use crate::policy::drain::{DrainBlocker, Limits, MigrationQueue, Reason, Verdict};
use crate::policy::eviction::StrategySource;
use crate::policy::maintenance::{Batch, NoTarget, Order, PerVm, Targets, Totals};

fn vmi(name: &str, action: Action, wave: Option<u32>, span: Option<(u64, u64)>) -> VmiPlan {
    VmiPlan {
        namespace: "prod".into(),
        name: name.into(),
        vm: None,
        node: "node-3".into(),
        eviction_strategy: "LiveMigrate".into(),
        eviction_strategy_source: StrategySource::VmiSpec,
        live_migratable: Some(true),
        reasons: Vec::new(),
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

fn blocked(name: &str, action: Action, reason: &str) -> VmiPlan {
    let mut v = vmi(name, action, None, None);
    v.reasons.push(Reason {
        reason: reason.into(),
        message: String::new(),
    });
    v
}

fn blocker(kind: &str, name: &str, reason: &str, vmis: &[&str], blocking: bool) -> DrainBlocker {
    DrainBlocker {
        kind: kind.into(),
        namespace: Some("prod".into()),
        name: name.into(),
        reason: reason.into(),
        message: String::new(),
        vmis: vmis.iter().map(|v| v.to_string()).collect(),
        blocking,
    }
}

fn drain(vmis: Vec<VmiPlan>, blockers: Vec<DrainBlocker>, waves: u32) -> DrainPlan {
    let estimated = vmis.iter().filter_map(|v| v.end_seconds).max().unwrap_or(0);
    DrainPlan {
        nodes: vec!["node-3".into()],
        verdict: Verdict::WillBlock,
        estimated_duration_seconds: estimated,
        blockers,
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
        waves,
        defaults_assumed: false,
        kubevirt_version: None,
        assumptions: Vec::new(),
        convergence: None,
        compatibility: Vec::new(),
    }
}

/// Every kind of row, in the plan's own (table) order: blocking first.
fn mixed() -> DrainPlan {
    drain(
        vec![
            blocked("erp", Action::BlocksDrain, "DisksNotLiveMigratable"),
            blocked("warehouse", Action::NoTarget, "NoFeasibleTarget"),
            vmi("late", Action::LiveMigrate, Some(2), Some((60, 120))),
            vmi("short", Action::LiveMigrate, Some(1), Some((15, 40))),
            vmi("long", Action::LiveMigrate, Some(1), Some((15, 90))),
            blocked(
                "sip",
                Action::ShutdownNotMigratable,
                "InterfaceNotLiveMigratable",
            ),
            vmi("ml", Action::Shutdown, None, Some((0, 100))),
            vmi("capi", Action::External, None, None),
            vmi("moving", Action::AlreadyMigrating, None, Some((0, 15))),
        ],
        vec![
            blocker("pdb", "sip-pdb", "MaxUnavailablePDB", &["prod/sip"], true),
            blocker("vmi", "erp", "DisksNotLiveMigratable", &["prod/erp"], true),
            blocker("external", "capi", "External", &["prod/capi"], false),
        ],
        2,
    )
}

fn labels(g: &Gantt) -> Vec<(String, String)> {
    g.rows
        .iter()
        .map(|r| (r.group.clone(), r.label.clone()))
        .collect()
}

#[test]
fn drain_rows_follow_kubevirts_queue_wave_by_wave() {
    let g = of_drain_plan(&mixed());
    let expected = [
        ("in flight", "prod/moving"),
        ("wave 1", "prod/long"),
        ("wave 1", "prod/short"),
        ("wave 2", "prod/late"),
        ("shutdowns", "prod/ml"),
        ("waiting", "prod/capi"),
        ("blocked", "prod/erp"),
        ("blocked", "prod/sip"),
        ("blocked", "prod/warehouse"),
    ];
    assert_eq!(
        labels(&g),
        expected
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect::<Vec<_>>()
    );
    assert_eq!(g.axis_end_secs, 120, "the axis ends at the plan's ETA");
    assert_eq!(g.folded, None);
    let late = &g.rows[3];
    assert_eq!(
        late.segments,
        vec![Segment {
            start_secs: 60,
            end_secs: 120,
            bar: Bar::Migrate
        }]
    );
    assert_eq!(g.rows[4].segments[0].bar, Bar::Shutdown);
}

#[test]
fn the_axis_ends_at_the_plans_estimate_when_it_is_later() {
    let mut plan = mixed();
    plan.estimated_duration_seconds = 500;
    assert_eq!(of_drain_plan(&plan).axis_end_secs, 500);
}

#[test]
fn blocked_vms_are_marked_at_the_start_with_the_blocking_reason() {
    let g = of_drain_plan(&mixed());
    let marker = |name: &str| {
        g.rows
            .iter()
            .find(|r| r.label == format!("prod/{name}"))
            .and_then(|r| r.marker.clone())
    };
    // The PDB refusing the shutdown's eviction is why it holds, not its interface.
    assert_eq!(
        marker("sip"),
        Some(Marker {
            at_secs: 0,
            mark: Mark::Blocks,
            code: "MaxUnavailablePDB".into(),
            more: 0
        })
    );
    assert_eq!(marker("warehouse").unwrap().code, "NoFeasibleTarget");
    assert_eq!(marker("capi").unwrap().mark, Mark::Waits);
    assert_eq!(marker("long"), None);
    assert!(
        g.rows
            .iter()
            .filter(|r| r.group == "blocked")
            .all(|r| r.segments.is_empty())
    );
}

#[test]
fn ten_thousand_vms_fold_into_wave_rows_under_the_cap() {
    // 10,000 migrations, 5 per wave, 60 s each, then 3 held VMs with two reasons.
    let mut vmis: Vec<VmiPlan> = (0..10_000u64)
        .map(|i| {
            let wave = (i / 5) as u32 + 1;
            let start = (wave as u64 - 1) * 60;
            vmi(
                &format!("vm-{i}"),
                Action::LiveMigrate,
                Some(wave),
                Some((start, start + 60)),
            )
        })
        .collect();
    vmis.push(blocked("a", Action::NoTarget, "NoFeasibleTarget"));
    vmis.push(blocked("b", Action::NoTarget, "NoFeasibleTarget"));
    vmis.push(blocked("c", Action::BlocksDrain, "DisksNotLiveMigratable"));
    let plan = drain(vmis, Vec::new(), 2000);
    let g = of_drain_plan_capped(&plan, 40);
    assert!(g.rows.len() <= 40, "{} rows", g.rows.len());
    assert_eq!(g.axis_end_secs, 2000 * 60);
    assert_eq!(g.rows.iter().map(|r| r.count).sum::<usize>(), 10_003);
    let f = g.folded.clone().unwrap();
    assert_eq!((f.items, f.groups, f.per_row), (10_003, 2000, 53));
    assert_eq!(g.rows[0].label, "waves 1–53 · 265 VMs");
    assert_eq!(
        g.rows[0].segments,
        vec![Segment {
            start_secs: 0,
            end_secs: 53 * 60,
            bar: Bar::Span
        }]
    );
    let held: Vec<(String, Option<Marker>)> = g
        .rows
        .iter()
        .filter(|r| r.marker.is_some())
        .map(|r| (r.label.clone(), r.marker.clone()))
        .collect();
    assert_eq!(
        held,
        vec![
            (
                "blocked · 1 VM".to_string(),
                Some(Marker {
                    at_secs: 0,
                    mark: Mark::Blocks,
                    code: "DisksNotLiveMigratable".into(),
                    more: 0
                })
            ),
            (
                "blocked · 2 VMs".to_string(),
                Some(Marker {
                    at_secs: 0,
                    mark: Mark::Blocks,
                    code: "NoFeasibleTarget".into(),
                    more: 1
                })
            ),
        ]
    );
    assert_eq!(
        folded_words(&f),
        "10,003 VMs in 2,000 waves, one row per 53 waves (more than 40; the table lists each)"
    );
    // Nothing migrates (every node drained): no waves to speak of.
    let stuck = drain(
        (0..50)
            .map(|i| blocked(&format!("v{i}"), Action::NoTarget, "NoFeasibleTarget"))
            .collect(),
        Vec::new(),
        0,
    );
    let g = of_drain_plan_capped(&stuck, 40);
    assert_eq!(g.rows.len(), 1);
    assert_eq!(
        folded_words(g.folded.as_ref().unwrap()),
        "50 VMs, one row per group and reason (more than 40; the table lists each)"
    );
    // Few waves: one row each.
    let few = drain(
        (0..50)
            .map(|i| {
                vmi(
                    &format!("v{i}"),
                    Action::LiveMigrate,
                    Some(i / 25 + 1),
                    Some((0, 10)),
                )
            })
            .collect(),
        Vec::new(),
        2,
    );
    let g = of_drain_plan_capped(&few, 40);
    assert_eq!(
        labels(&g),
        vec![
            (String::new(), "wave 1 · 25 VMs".to_string()),
            (String::new(), "wave 2 · 25 VMs".to_string())
        ]
    );
}

fn batch(index: u32, start: u64, drain: u64, upgrade: u64, blockers: Vec<DrainBlocker>) -> Batch {
    Batch {
        index,
        nodes: vec![format!("node-{index}")],
        verdict: if blockers.iter().any(|b| b.blocking) {
            Verdict::WillBlock
        } else {
            Verdict::WillComplete
        },
        start_seconds: start,
        drain_seconds: drain,
        duration_seconds: drain + upgrade,
        end_seconds: start + drain + upgrade,
        waves: 1,
        migrations: 1,
        shutdowns: 0,
        blockers,
        vmis: Vec::new(),
        stuck_nodes: Vec::new(),
        placed_outside_done: Vec::new(),
        compatibility: Vec::new(),
    }
}

fn maintenance(batches: Vec<Batch>) -> MaintenancePlan {
    let end = batches.iter().map(|b| b.end_seconds).max().unwrap_or(0);
    MaintenancePlan {
        verdict: Verdict::WillBlock,
        order: Order::Given,
        targets: Targets::Any,
        max_unavailable: 1,
        nodes: batches.iter().flat_map(|b| b.nodes.clone()).collect(),
        unknown_nodes: Vec::new(),
        totals: Totals {
            batches: batches.len() as u32,
            migrations: 0,
            vms_migrated: 0,
            migrations_per_vm: PerVm { mean: 0.0, max: 0 },
            most_migrated: Vec::new(),
            shutdowns: 0,
            duration_seconds: end,
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

#[test]
fn maintenance_rows_are_batches_with_the_blocker_where_the_rollout_reaches_it() {
    let mut plan = maintenance(vec![
        batch(1, 0, 80, 120, Vec::new()),
        batch(
            2,
            200,
            60,
            120,
            vec![
                blocker("vmi", "a", "NoFeasibleTarget", &["prod/a"], true),
                blocker("quota", "q", "migrationRejectedByResourceQuota", &[], true),
                blocker("external", "x", "External", &[], false),
            ],
        ),
        batch(3, 380, 30, 0, Vec::new()),
    ]);
    plan.capacity_runs_out = Some(NoTarget {
        batch: 2,
        at_seconds: 200,
        vmis: vec!["prod/a".into()],
        message: String::new(),
    });
    let g = of_maintenance_plan(&plan);
    assert_eq!(g.axis_end_secs, 410);
    assert_eq!(g.rows[0].label, "1 node-1");
    assert_eq!(
        g.rows[0].segments,
        vec![
            Segment {
                start_secs: 0,
                end_secs: 80,
                bar: Bar::Drain
            },
            Segment {
                start_secs: 80,
                end_secs: 200,
                bar: Bar::Upgrade
            }
        ]
    );
    assert_eq!(
        g.rows[1].marker,
        Some(Marker {
            at_secs: 200,
            mark: Mark::Blocks,
            code: "NoFeasibleTarget".into(),
            more: 1
        })
    );
    assert_eq!(g.rows[1].note.as_deref(), Some("capacity runs out"));
    assert_eq!(
        g.rows[2].segments.len(),
        1,
        "no upgrade time: no upgrade bar"
    );
    assert_eq!(g.rows[2].marker, None);
}

#[test]
fn many_batches_fold_into_runs() {
    let batches: Vec<Batch> = (1..=100u32)
        .map(|i| {
            let blockers = if i == 37 || i == 39 {
                vec![blocker("pdb", "p", "MaxUnavailablePDB", &[], true)]
            } else {
                Vec::new()
            };
            batch(i, (i as u64 - 1) * 100, 100, 0, blockers)
        })
        .collect();
    let g = of_maintenance_plan_capped(&maintenance(batches), 10);
    assert_eq!(g.rows.len(), 10);
    assert_eq!(g.rows[3].label, "batches 31–40");
    assert_eq!(
        g.rows[3].marker,
        Some(Marker {
            at_secs: 3600,
            mark: Mark::Blocks,
            code: "MaxUnavailablePDB".into(),
            more: 1
        })
    );
    assert_eq!(g.rows[3].span(), Some((3000, 4000)));
    assert!(
        g.rows
            .iter()
            .enumerate()
            .all(|(i, r)| (i == 3) == r.marker.is_some())
    );
    assert_eq!(
        folded_words(g.folded.as_ref().unwrap()),
        "100 batches, one row per 10 batches (more than 10; the table lists each)"
    );
}

fn canvas(width: usize, charset: Charset) -> Canvas {
    Canvas {
        width,
        charset,
        style: Style { color: false },
    }
}

#[test]
fn text_fits_the_width_in_unicode_and_ascii() {
    let g = of_drain_plan(&mixed());
    for width in [60, 100, 200] {
        for charset in [Charset::Unicode, Charset::Ascii] {
            let out = text(&g, &canvas(width, charset));
            for line in out.lines() {
                assert!(
                    line.chars().count() <= width,
                    "{width} {charset:?}: {line:?} is {} wide",
                    line.chars().count()
                );
            }
            // Title, ticks, axis, 6 group names, 9 rows, then the legend, wrapped.
            let lines: Vec<&str> = out.lines().collect();
            assert!(lines[17].contains("prod/warehouse"), "{out}");
            let legend = lines[18..].join(" ");
            for words in [
                "live migration",
                "shutdown",
                "blocks here",
                "external controller",
            ] {
                assert!(legend.contains(words), "{words}: {out}");
            }
            assert!(lines.len() <= 18 + 3, "{out}");
            // From 100 columns the reasons are whole.
            assert_eq!(
                width >= 100,
                out.contains("DisksNotLiveMigratable"),
                "{out}"
            );
            if charset == Charset::Ascii {
                assert!(out.is_ascii(), "{out}");
                assert!(out.contains("X DisksNotLive"), "{out}");
                assert!(out.contains('#') && out.contains('='), "{out}");
            } else {
                assert!(out.contains("✖ DisksNotLive"), "{out}");
                assert!(out.contains('█') && out.contains('▓'), "{out}");
            }
            // The row that ends at the ETA fills the bar to its last cell.
            let late = out.lines().find(|l| l.contains("prod/late")).unwrap();
            let full = if charset.is_unicode() { '█' } else { '#' };
            let bar: String = late.chars().rev().skip_while(|c| *c != full).collect();
            let label_and_bar = bar.chars().count();
            let axis = out.lines().nth(2).unwrap();
            assert_eq!(label_and_bar, axis.chars().count(), "{late:?}\n{axis:?}");
        }
    }
}

#[test]
fn text_at_60_columns_in_ascii() {
    let plan = drain(
        vec![
            vmi("a", Action::LiveMigrate, Some(1), Some((0, 60))),
            vmi("b", Action::LiveMigrate, Some(2), Some((60, 90))),
            blocked("c", Action::NoTarget, "NoFeasibleTarget"),
        ],
        Vec::new(),
        2,
    );
    let out = text(&of_drain_plan(&plan), &canvas(60, Charset::Ascii));
    let expected = "\
Drain of node-3: ETA 1m30s
          0s        30s       1m    1m30s
          |---------+---------+---------|
wave 1
  prod/a  #####################           1m00s
wave 2
  prod/b                      ########### 30s
blocked
  prod/c  X                               X NoFeasibleTarget
# live migration   X blocks here (reason; +N more)
";
    assert_eq!(out, expected, "\n{out}");
}

#[test]
fn names_are_escaped_and_cut_to_the_label_column() {
    let mut v = vmi(
        "evil\u{1b}[2J\u{1b}]0;pwned\u{7}-with-a-very-long-name-indeed",
        Action::LiveMigrate,
        Some(1),
        Some((0, 10)),
    );
    v.namespace = "ns\u{202e}x".into();
    let out = text(
        &of_drain_plan(&drain(vec![v], Vec::new(), 1)),
        &canvas(80, Charset::Unicode),
    );
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\u{202e}'));
    assert!(out.contains("ns\\u{202e}x/evil\\u{1b"), "{out}");
    assert!(out.contains('…'), "cut with an ellipsis: {out}");
    // A title too long for the width keeps its ETA.
    let mut plan = drain(Vec::new(), Vec::new(), 0);
    plan.nodes = (0..500).map(|i| format!("node-{i}")).collect();
    plan.estimated_duration_seconds = 4000;
    let out = text(&of_drain_plan(&plan), &canvas(80, Charset::Unicode));
    let title = out.lines().next().unwrap();
    assert!(title.starts_with("Drain of node-0, node-1,"), "{title}");
    assert!(title.ends_with("…: ETA 1h06m"), "{title}");
    assert_eq!(title.chars().count(), 80);
}

#[test]
fn colour_only_when_the_style_says_so() {
    let g = of_drain_plan(&mixed());
    let plain = text(&g, &canvas(100, Charset::Unicode));
    assert!(!plain.contains('\u{1b}'));
    let coloured = text(
        &g,
        &Canvas {
            width: 100,
            charset: Charset::Unicode,
            style: Style { color: true },
        },
    );
    assert!(coloured.contains("\u{1b}["));
}

#[test]
fn edge_decisions() {
    assert!(wanted(ChartWhen::Auto, OutputFormat::Table, true));
    assert!(!wanted(ChartWhen::Auto, OutputFormat::Table, false));
    assert!(wanted(ChartWhen::Always, OutputFormat::Wide, false));
    assert!(!wanted(ChartWhen::Always, OutputFormat::Json, true));
    assert!(!wanted(ChartWhen::Always, OutputFormat::Yaml, true));
    assert!(!wanted(ChartWhen::Never, OutputFormat::Table, true));
    assert_eq!(width_from(Some("100"), Some(150)), 100);
    assert_eq!(width_from(Some("wide"), Some(150)), 150);
    assert_eq!(width_from(None, None), 80);
    assert_eq!(width_from(Some("0"), None), 80);
    assert_eq!(width_from(Some("12"), None), 40);
}

#[test]
fn ticks_are_round_and_short() {
    assert_eq!(tick_step(62, 7), 10);
    assert_eq!(tick_step(62, 4), 30);
    assert_eq!(tick_step(338, 8), 60);
    assert_eq!(tick_step(2000 * 60, 10), 21_600);
    assert_eq!(tick_step(0, 5), 1);
    assert_eq!(tick_label(45), "45s");
    assert_eq!(tick_label(60), "1m");
    assert_eq!(tick_label(90), "1m30s");
    assert_eq!(tick_label(5400), "1h30m");
    assert_eq!(tick_label(7200), "2h");
    assert_eq!(tick_label(172_800), "2d");
    assert_eq!(thousands(9940), "9,940");
    assert_eq!(thousands(1_000_000), "1,000,000");
    assert_eq!(thousands(12), "12");
}

#[test]
fn svg_escapes_hostile_names_and_is_well_formed() {
    let hostile = "<script>alert(1)</script>&\"'\u{1b}[2J";
    let mut v = vmi(hostile, Action::LiveMigrate, Some(1), Some((0, 60)));
    v.namespace = "a&b".into();
    let mut held = blocked("held", Action::NoTarget, "<b>Reason</b>");
    held.namespace = "x".into();
    let g = of_drain_plan(&drain(vec![v, held], Vec::new(), 1));
    let out = svg(&g, 800);
    assert!(!out.contains("<script>"), "{out}");
    assert!(!out.contains("<b>"), "{out}");
    assert!(
        out.contains("&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;"),
        "{out}"
    );
    assert!(out.contains("a&amp;b/"), "{out}");
    assert!(!out.contains('\u{1b}'), "no control character reaches XML");
    let doc = roxmltree::Document::parse(&out).expect("well-formed SVG");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    // One rect per segment, one per legend entry (live migration, blocks).
    let rects = root
        .descendants()
        .filter(|n| n.has_tag_name("rect"))
        .count();
    assert_eq!(rects, 1 + 2);
    let texts: String = root
        .descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect();
    assert!(
        texts.contains(hostile.trim_end_matches("\u{1b}[2J")),
        "{texts}"
    );
    assert!(texts.contains("\\u{1b}[2J"), "{texts}");
    assert!(texts.contains("✖ <b>Reason</b>"), "{texts}");
}
