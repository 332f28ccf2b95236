//! `plan-drain`'s table and document: the verdict, one row per VMI (action, target, wave,
//! estimate), the blockers, PDBs and the queue.

use serde::Serialize;

use crate::policy::drain::{Action, DrainPlan, Verdict};
use crate::render::table::{Notes, TableBuilder, plain};
use crate::render::{Style, Tone};
use crate::text as fmt;

/// The `-o json|yaml` document.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DrainPlanDocument<'a> {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub as_of: String,
    pub source: String,
    #[serde(flatten)]
    pub plan: &'a DrainPlan,
    /// What was said about the input on stderr (unknown values, duplicates …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

fn verdict_tone(v: Verdict) -> Tone {
    match v {
        Verdict::WillComplete => Tone::Good,
        Verdict::WillCompleteWithShutdowns => Tone::Warn,
        Verdict::WillBlock => Tone::Bad,
    }
}

fn action_tone(a: Action) -> Tone {
    match a {
        Action::LiveMigrate | Action::AlreadyMigrating => Tone::Good,
        Action::Shutdown | Action::ShutdownNotMigratable | Action::External => Tone::Warn,
        Action::BlocksDrain | Action::NoTarget => Tone::Bad,
    }
}

/// The longest explanation the default table shows whole in REASON.
const SHORT_REASON: usize = 40;

/// The REASON cell of the default table when the explanation is longer: the condition's
/// reason (`DisksNotLiveMigratable`), else the action in a few words.
fn short_reason(v: &crate::policy::drain::VmiPlan) -> String {
    if let Some(r) = v.reasons.first().filter(|r| !r.reason.is_empty()) {
        return r.reason.clone();
    }
    match v.action {
        Action::LiveMigrate
            if v.convergence
                .as_ref()
                .is_some_and(|c| c.completes == Some(false)) =>
        {
            "predicted not to complete"
        }
        Action::LiveMigrate => "live-migrates",
        Action::AlreadyMigrating => "migration in flight",
        Action::Shutdown => "shut down",
        Action::ShutdownNotMigratable => "not live-migratable",
        Action::External => "external controller",
        Action::BlocksDrain => "blocks the drain",
        Action::NoTarget => "no target node",
    }
    .to_string()
}

pub fn render_table(
    plan: &DrainPlan,
    style: Style,
    wide: bool,
    as_of: &str,
    source: &str,
) -> String {
    let mut out = String::new();
    let migrating = plan
        .vmis
        .iter()
        .filter(|v| v.action == Action::LiveMigrate)
        .count();
    let stopping = plan.vmis.iter().filter(|v| v.action.stops_the_vm()).count();
    let blocking = plan.blockers.iter().filter(|b| b.blocking).count();
    let mut headline = format!(
        "Drain of {}: {}",
        fmt::printable(&plan.nodes.join(", ")),
        style.paint(
            &plan.verdict.as_str().replace('-', " ").to_uppercase(),
            verdict_tone(plan.verdict)
        )
    );
    let mut facts = vec![format!("{} VMI(s)", plan.vmis.len())];
    if blocking > 0 {
        facts.push(format!("{blocking} blocker(s)"));
    }
    // Issue 33: "3 blocker(s)" stood over four entries: a wait is not a blocker.
    let waits = plan.blockers.len() - blocking;
    if waits > 0 {
        facts.push(format!("{waits} wait(s)"));
    }
    if migrating > 0 {
        facts.push(format!(
            "{migrating} live migration(s) in {} wave(s)",
            plan.waves
        ));
    }
    if stopping > 0 {
        facts.push(format!("{stopping} shutdown(s)"));
    }
    let not_completing = plan
        .convergence
        .as_ref()
        .map_or(0, |c| c.will_not_complete.len());
    if not_completing > 0 {
        facts.push(format!(
            "{not_completing} predicted not to complete (a hint)"
        ));
    }
    if plan.verdict != Verdict::WillBlock && not_completing == 0 {
        facts.push(format!(
            "about {}",
            fmt::duration(plan.estimated_duration_seconds as i64)
        ));
    } else {
        facts.push(format!(
            "the rest would take about {}",
            fmt::duration(plan.estimated_duration_seconds as i64)
        ));
    }
    headline.push_str(&format!(" — {}\n", facts.join(", ")));
    out.push_str(&headline);
    out.push_str(&format!("as of {as_of} · {source}\n"));
    if plan.defaults_assumed {
        out.push_str("no KubeVirt CR found: KubeVirt's defaults apply\n");
    }

    // Blockers first, then what the drain waits for without being blocked (an external
    // controller's turn): two lists, each under its own heading, counted as the headline counts.
    for (blocks, heading) in [(true, "Blockers:"), (false, "Waits (not blockers):")] {
        let listed: Vec<_> = plan
            .blockers
            .iter()
            .filter(|b| b.blocking == blocks)
            .collect();
        if listed.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{heading}\n"));
        for b in listed {
            let (mark, tone) = if b.blocking {
                ("✗", Tone::Bad)
            } else {
                ("~", Tone::Warn)
            };
            let what = match (b.kind.as_str(), &b.namespace) {
                ("pdb", Some(ns)) => format!("PodDisruptionBudget {ns}/{}", b.name),
                ("quota", Some(ns)) => format!("ResourceQuota {ns}/{}", b.name),
                (_, Some(ns)) => format!("{ns}/{}", b.name),
                (_, None) => b.name.clone(),
            };
            out.push_str(&format!(
                "  {} {}: {}\n",
                style.paint(mark, tone),
                fmt::printable(&what),
                fmt::printable(&b.message)
            ));
        }
    }

    out.push('\n');
    if plan.vmis.is_empty() {
        out.push_str("No VMIs on these nodes: the drain does not touch any VM.\n");
    } else {
        let mut headers = vec!["namespace", "name", "action", "target", "reason"];
        // The eviction strategy in -o wide (the default fits near 120 columns; the reason
        // and its note say what the strategy does to the VM).
        if wide {
            headers.insert(4, "eviction");
        }
        let predicted = plan.convergence.is_some();
        if predicted {
            headers.insert(3, "converges");
        }
        if wide {
            headers.extend(["memory", "policy", "budget", "wave", "start", "eta"]);
        }
        let mut t = TableBuilder::new(style, &headers);
        // On a terminal narrower than the table, these go under each row first.
        t.fold(&[
            "reason",
            "eta",
            "start",
            "wave",
            "budget",
            "policy",
            "memory",
            "eviction",
            "converges",
        ]);
        // The default's REASON is a short phrase; a longer explanation is a note under the
        // table (-o wide has it in the column).
        let mut notes = Notes::default();
        for v in &plan.vmis {
            let name = match &v.evacuation_node {
                Some(n) if wide => format!("{} (evacuating from {n})", v.name),
                Some(_) => format!("{} (evacuating)", v.name),
                None => v.name.clone(),
            };
            let mut row = vec![
                plain(fmt::printable(&v.namespace)),
                plain(fmt::printable(&name)),
                (v.action.as_str().to_string(), action_tone(v.action)),
            ];
            if predicted {
                row.push(match &v.convergence {
                    Some(c) => (c.cell(), convergence_tone(c)),
                    None => plain("-".to_string()),
                });
            }
            row.push(plain(fmt::printable(v.target.as_deref().unwrap_or("-"))));
            if wide {
                row.push(plain(fmt::printable(&v.eviction_strategy)));
            }
            row.extend([plain(
                if wide || v.explanation.chars().count() <= SHORT_REASON {
                    fmt::printable(&v.explanation)
                } else {
                    let mark = notes.add(format!("{}: {}", v.id(), v.explanation));
                    format!("{} {mark}", short_reason(v))
                },
            )]);
            if wide {
                row.push(plain(
                    v.memory_bytes.map(fmt::bytes).unwrap_or_else(|| "?".into()),
                ));
                row.push(plain(fmt::printable(
                    v.migration_policy.as_deref().unwrap_or("-"),
                )));
                row.push(plain(
                    v.budget_seconds
                        .map(|b| fmt::duration(b as i64))
                        .unwrap_or_else(|| "-".into()),
                ));
                row.push(plain(
                    v.wave.map(|w| w.to_string()).unwrap_or_else(|| "-".into()),
                ));
                row.push(plain(
                    v.start_seconds
                        .map(|s| format!("+{}", fmt::duration(s as i64)))
                        .unwrap_or_else(|| "-".into()),
                ));
                row.push(plain(
                    v.end_seconds
                        .map(|s| format!("+{}", fmt::duration(s as i64)))
                        .unwrap_or_else(|| "-".into()),
                ));
            }
            t.row(row);
        }
        out.push_str(&t.render());
        out.push_str(&notes.render("Reasons (-o wide shows them in the table):"));
    }

    if !plan.incoming.is_empty() {
        out.push_str("\nMigrating INTO the drained node(s) (the drain waits for them, then moves them again):\n");
        for i in &plan.incoming {
            let mode = i.mode.as_deref().unwrap_or("mode not reported");
            let line = fmt::printable(&format!(
                "  {}/{} from {} to {} ({mode}){}",
                i.namespace,
                i.name,
                i.source_node.as_deref().unwrap_or("?"),
                i.target_node.as_deref().unwrap_or("?"),
                if i.point_of_no_return {
                    ": POST-COPY, the point of no return: do not disturb either node until it finishes; an abort or a network failure now loses the guest"
                } else {
                    ""
                }
            ));
            let tone = if i.point_of_no_return {
                Tone::Bad
            } else {
                Tone::Warn
            };
            // The newline outside the paint: painted text is escaped.
            out.push_str(&style.paint(&line, tone));
            out.push('\n');
        }
    }
    if !plan.skipped.is_empty() {
        let names: Vec<String> = plan
            .skipped
            .iter()
            .map(|s| format!("{} ({})", s.reason, s.message))
            .collect();
        out.push_str(&format!(
            "Not touched: {}\n",
            fmt::printable(&names.join("; "))
        ));
    }

    if let Some(c) = &plan.convergence {
        out.push_str(&render_convergence(plan, c, style, wide));
    }
    out.push_str(&render_compatibility(plan, style, wide));

    let fixes: Vec<String> = plan
        .vmis
        .iter()
        .filter(|v| v.action != Action::LiveMigrate)
        .filter_map(|v| {
            v.fix
                .as_ref()
                .map(|f| fmt::printable(&format!("  {}/{}: {f}", v.namespace, v.name)))
        })
        .collect();
    if !fixes.is_empty() {
        out.push_str("\nTo change the outcome:\n");
        for f in fixes {
            out.push_str(&f);
            out.push('\n');
        }
    }
    let postcopy: Vec<String> = plan
        .vmis
        .iter()
        .filter(|v| v.action == Action::LiveMigrate && v.allow_post_copy)
        .map(|v| format!("{}/{}", v.namespace, v.name))
        .collect();
    if !postcopy.is_empty() {
        out.push_str(&format!(
            "\nPost-copy allowed for {}: if they switch to post-copy, that is the point of no return (a network failure then loses the guest).\n",
            fmt::printable(&postcopy.join(", "))
        ));
    }
    out.push_str(&format!(
        "\nLimits: {} per cluster ({} in flight), {} outbound per node",
        plan.limits.parallel_migrations_per_cluster,
        plan.limits.in_flight_cluster,
        plan.limits.parallel_outbound_migrations_per_node
    ));
    let per_node: Vec<String> = plan
        .limits
        .in_flight_per_node
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(node, n)| format!("{n} already from {node}"))
        .collect();
    if !per_node.is_empty() {
        out.push_str(&format!(" ({})", fmt::printable(&per_node.join(", "))));
    }
    out.push('\n');
    let queued = |q: &crate::policy::drain::QueuedMigration| {
        format!(
            "{}/{} (VMI {}, {}{}{})",
            q.namespace,
            q.name,
            q.vmi,
            q.priority.as_deref().unwrap_or("no priority"),
            if q.on_drained_node {
                ", on a drained node"
            } else {
                ""
            },
            q.held_by
                .as_deref()
                .map(|c| format!(", held by {c}: takes no slot"))
                .unwrap_or_default()
        )
    };
    let queue = &plan.queue;
    if !queue.ahead.is_empty() {
        out.push_str(&format!(
            "Queue ({}): {} pending migration(s) ahead of the drain's evacuations: {}\n",
            queue.mode,
            queue.ahead.len(),
            fmt::printable(
                &queue
                    .ahead
                    .iter()
                    .map(queued)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        ));
    }
    if !queue.behind.is_empty() {
        out.push_str(&format!(
            "Queue ({}): {} pending migration(s) wait behind them: {}\n",
            queue.mode,
            queue.behind.len(),
            fmt::printable(
                &queue
                    .behind
                    .iter()
                    .map(queued)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        ));
    }
    if wide {
        out.push_str("Assumptions:\n");
        for a in &plan.assumptions {
            out.push_str(&format!("  - {}\n", fmt::printable(a)));
        }
    }
    out
}

/// The compatibility findings before anything moves: ✗ no CPU-compatible node (the VMI is
/// no-target, the drain blocks), ~ a risk (the verdict does not change); with `wide` also a
/// line per checked VMI (its CPU mode, model and what its target pod requires).
pub fn render_compatibility(plan: &DrainPlan, style: Style, wide: bool) -> String {
    let mut lines = Vec::new();
    for f in &plan.compatibility {
        let (mark, tone) = if f.severity == "blocks" {
            ("✗", Tone::Bad)
        } else {
            ("~", Tone::Warn)
        };
        let route = match &f.target {
            Some(t) => format!("{} → {t}", f.node),
            None => f.node.clone(),
        };
        lines.push(format!(
            "  {} {} ({}): {}",
            style.paint(mark, tone),
            fmt::printable(&f.vmi),
            fmt::printable(&route),
            fmt::printable(&f.message)
        ));
    }
    if wide {
        for v in &plan.vmis {
            let Some(c) = &v.cpu else { continue };
            lines.push(format!(
                "  {} {}: {}",
                style.paint("·", Tone::Dim),
                fmt::printable(&v.id()),
                fmt::printable(&cpu_words(c))
            ));
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    let mut out = "\nCompatibility (CPU model and features, machine type, launcher; checked before anything moves):\n".to_string();
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// One VMI's CPU requirements in words: `host-model Cascadelake-Server (from the source
/// node) + 2 features, machine type q35: compatible`.
pub fn cpu_words(c: &crate::policy::compat::CpuCompat) -> String {
    let n = &c.needs;
    let mut parts = vec![match (&c.mode, &n.model) {
        (crate::policy::compat::CpuMode::HostModel, Some(m)) => format!(
            "host-model {m} (from the {})",
            n.host_model_from.unwrap_or("source-node").replace('-', " ")
        ),
        (crate::policy::compat::CpuMode::HostModel, None) => {
            "host-model (the source node publishes no host model)".into()
        }
        (crate::policy::compat::CpuMode::HostPassthrough, _) => "host-passthrough".into(),
        (_, m) => format!("model {}", m.as_deref().unwrap_or("?")),
    }];
    let features = n.host_features.len() + n.required.len();
    if features > 0 {
        parts.push(format!("{features} required feature(s)"));
    }
    if !n.forbidden.is_empty() {
        parts.push(format!("forbids {}", n.forbidden.join(", ")));
    }
    if let Some(t) = &n.machine_type {
        parts.push(format!("machine type {t}"));
    }
    if let Some(v) = &n.vendor {
        parts.push(format!("vendor {v}"));
    }
    format!("{}: {}", parts.join(", "), c.status)
}

fn convergence_tone(c: &crate::policy::drain::convergence::Convergence) -> Tone {
    match (c.completes, c.converges) {
        (Some(false), _) => Tone::Bad,
        (Some(true), Some(false)) => Tone::Warn,
        (Some(true), _) => Tone::Good,
        (None, _) => Tone::Dim,
    }
}

/// The predictions: the VMs that will not complete (✗) or complete only by switching mode
/// (~), with the finding and the alternatives; with `wide` also those that converge; the
/// notes of what could not be read, one per cause; the caveat.
fn render_convergence(
    plan: &DrainPlan,
    report: &crate::policy::drain::convergence::ConvergenceReport,
    style: Style,
    wide: bool,
) -> String {
    let mut out = format!(
        "\nConvergence, from the guest dirty rate ({}, {}; a hint: it may read low, and 'will not converge' is the stronger prediction):\n",
        report.metric,
        fmt::printable(&report.source)
    );
    let mut said = 0;
    for v in &plan.vmis {
        let Some(c) = &v.convergence else { continue };
        let (mark, tone) = match (c.completes, c.converges) {
            (Some(false), _) => ("✗", Tone::Bad),
            (Some(true), Some(false)) => ("~", Tone::Warn),
            (Some(true), _) if wide => ("✓", Tone::Good),
            (None, _) if wide => ("?", Tone::Dim),
            _ => continue,
        };
        said += 1;
        out.push_str(&format!(
            "  {} {}: {}\n",
            style.paint(mark, tone),
            fmt::printable(&v.id()),
            fmt::printable(&c.finding)
        ));
    }
    if said == 0 && report.notes.is_empty() {
        out.push_str(&format!(
            "  every live migration with a dirty rate ({} of {}) converges under its configuration\n",
            report.with_dirty_rate, report.predicted
        ));
    }
    for n in &report.notes {
        out.push_str(&format!("  note: {}\n", fmt::printable(n)));
    }
    out
}
