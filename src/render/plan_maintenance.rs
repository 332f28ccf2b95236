//! `vmctl plan-maintenance`: the rollout batch by batch, the totals, the first blocker, and
//! the default strategy next to the alternative; or the `MaintenancePlan` document.

use serde::Serialize;

use super::table::{Notes, TableBuilder, plain};
use super::{Style, Tone};
use crate::policy::drain::{Action, Verdict};
use crate::policy::maintenance::{MaintenancePlan, Order, Summary, Targets};
use crate::text::{duration, printable};

/// The `-o json|yaml` document.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MaintenancePlanDocument<'a> {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub as_of: String,
    pub source: String,
    #[serde(flatten)]
    pub plan: &'a MaintenancePlan,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

fn verdict_words(v: Verdict) -> (&'static str, Tone) {
    match v {
        Verdict::WillComplete => ("WILL COMPLETE", Tone::Good),
        Verdict::WillCompleteWithShutdowns => ("WILL COMPLETE WITH SHUTDOWNS", Tone::Warn),
        Verdict::WillBlock => ("WILL BLOCK", Tone::Bad),
    }
}

fn strategy(order: Order, targets: Targets) -> String {
    format!(
        "{} order + {} targets",
        match order {
            Order::Given => "given",
            Order::Auto => "auto",
        },
        match targets {
            Targets::Any => "any",
            Targets::Done => "done",
        }
    )
}

fn summary_words(s: &Summary) -> String {
    format!(
        "{}: {} migration(s), {:.1} per VM (max {}), {} shutdown(s), {}{}",
        strategy(s.order, s.targets),
        s.migrations,
        s.migrations_per_vm.mean,
        s.migrations_per_vm.max,
        s.shutdowns,
        duration(s.duration_seconds as i64),
        match s.first_blocker_at_seconds {
            Some(at) => format!(", blocks at {}", duration(at as i64)),
            None => String::new(),
        }
    )
}

fn short_action(a: Action) -> &'static str {
    a.as_str()
}

/// The most characters of blockers the default table names in a row.
const SHORT_BLOCKERS: usize = 20;

/// The first items, whole, joined by `, ` within `budget` characters (at least one), and how
/// many are left out.
fn first_items(items: &[String], budget: usize) -> (String, usize) {
    let mut shown = String::new();
    let mut count = 0;
    for item in items {
        let added = if shown.is_empty() { 0 } else { 2 } + item.chars().count();
        if count > 0 && shown.chars().count() + added > budget {
            break;
        }
        if !shown.is_empty() {
            shown.push_str(", ");
        }
        shown.push_str(item);
        count += 1;
    }
    (shown, items.len() - count)
}

/// The table (and with `wide`, every VM row of every batch).
pub fn render_table(
    plan: &MaintenancePlan,
    style: Style,
    wide: bool,
    as_of: &str,
    source: &str,
) -> String {
    let t = &plan.totals;
    let (verdict, tone) = verdict_words(plan.verdict);
    let mut out = format!(
        "Rolling maintenance of {} node(s), {} at a time ({}): {} — {} batch(es), {} migration(s) of {} VM(s) ({:.1} per VM, max {}), {} shutdown(s), about {}\n",
        plan.nodes.len(),
        plan.max_unavailable.max(1),
        strategy(plan.order, plan.targets),
        style.paint(verdict, tone),
        t.batches,
        t.migrations,
        t.vms_migrated,
        t.migrations_per_vm.mean,
        t.migrations_per_vm.max,
        t.shutdowns,
        duration(t.duration_seconds as i64),
    );
    out.push_str(&format!(
        "as of {} · {}\n\n",
        printable(as_of),
        printable(source)
    ));
    if !plan.unknown_nodes.is_empty() {
        out.push_str(&format!(
            "Not in the cluster (not simulated): {}\n\n",
            printable(&plan.unknown_nodes.join(", "))
        ));
    }
    let mut table = TableBuilder::new(
        style,
        &[
            "BATCH",
            "NODES",
            "VERDICT",
            "MIGRATIONS",
            "SHUTDOWNS",
            "START",
            "DURATION",
            "BLOCKERS",
        ],
    );
    // On a terminal narrower than the table, these go under each row first.
    table.fold(&["blockers"]);
    // The default names the first blockers whole within a few words, then `+N [n]`:
    // the note under the table lists them all (-o wide: the column does).
    let mut notes = Notes::default();
    for b in &plan.batches {
        let (_, tone) = verdict_words(b.verdict);
        let blockers: Vec<String> = b
            .blockers
            .iter()
            .filter(|x| x.blocking)
            .map(|x| format!("{} {}", x.kind, x.name))
            .collect();
        table.row(vec![
            plain(b.index.to_string()),
            plain(b.nodes.join(",")),
            (b.verdict.as_str().to_string(), tone),
            plain(b.migrations.to_string()),
            plain(b.shutdowns.to_string()),
            plain(duration(b.start_seconds as i64)),
            plain(duration(b.duration_seconds as i64)),
            if blockers.is_empty() {
                plain("-".to_string())
            } else if wide {
                (blockers.join(", "), Tone::Bad)
            } else {
                let (shown, more) = first_items(&blockers, SHORT_BLOCKERS);
                if more == 0 {
                    (shown, Tone::Bad)
                } else {
                    let mark = notes.add(format!(
                        "batch {} ({}): {}",
                        b.index,
                        b.nodes.join(", "),
                        blockers.join(", ")
                    ));
                    let cell = format!("{shown} +{more} {mark}");
                    if cell.chars().count() <= SHORT_BLOCKERS + 8 {
                        (cell, Tone::Bad)
                    } else {
                        (format!("{} blockers {mark}", blockers.len()), Tone::Bad)
                    }
                }
            },
        ]);
    }
    out.push_str(&table.render());
    out.push_str(&notes.render("Blockers (-o wide shows them in the table):"));
    if wide {
        for b in &plan.batches {
            out.push_str(&format!(
                "\nBatch {} ({}):\n",
                b.index,
                printable(&b.nodes.join(", "))
            ));
            for v in &b.vmis {
                out.push_str(&format!(
                    "  {}/{} {} {}\n",
                    printable(&v.namespace),
                    printable(&v.name),
                    short_action(v.action),
                    printable(v.target.as_deref().unwrap_or("-"))
                ));
            }
            for v in &b.placed_outside_done {
                out.push_str(&format!(
                    "  {} placed outside the done nodes (none had room)\n",
                    printable(v)
                ));
            }
        }
    }
    let findings: Vec<String> = plan
        .batches
        .iter()
        .flat_map(|b| {
            b.compatibility.iter().map(move |f| {
                let (mark, tone) = if f.severity == "blocks" {
                    ("✗", Tone::Bad)
                } else {
                    ("~", Tone::Warn)
                };
                let route = match &f.target {
                    Some(t) => format!("{} → {t}", f.node),
                    None => f.node.clone(),
                };
                format!(
                    "  {} batch {} {} ({}): {}",
                    style.paint(mark, tone),
                    b.index,
                    printable(&f.vmi),
                    printable(&route),
                    printable(&f.message)
                )
            })
        })
        .collect();
    if !findings.is_empty() {
        out.push_str("\nCompatibility (CPU model and features, machine type, launcher; checked before each batch is cordoned):\n");
        for f in findings {
            out.push_str(&f);
            out.push('\n');
        }
    }
    if !t.most_migrated.is_empty() {
        let most: Vec<String> = t
            .most_migrated
            .iter()
            .map(|m| format!("{}/{} ({}×)", m.namespace, m.name, m.migrations))
            .collect();
        out.push_str(&format!(
            "\nMigrated more than once: {}\n",
            printable(&most.join(", "))
        ));
    }
    if let Some(f) = &plan.first_blocker {
        out.push_str(&format!(
            "\n{} batch {} ({}) at {}: {} {}: {}\n",
            style.paint("First blocker:", Tone::Bad),
            f.batch,
            printable(&f.nodes.join(", ")),
            duration(f.at_seconds as i64),
            printable(&f.blocker.kind),
            printable(&f.blocker.name),
            printable(&f.blocker.message)
        ));
    }
    if let Some(c) = &plan.capacity_runs_out {
        out.push_str(&format!(
            "Capacity runs out: batch {} at {}: {} ({})\n",
            c.batch,
            duration(c.at_seconds as i64),
            printable(&c.vmis.join(", ")),
            printable(&c.message)
        ));
    }
    if let Some(c) = &plan.compare {
        out.push_str(&format!(
            "\nCompared:\n  {}\n  {}\n",
            printable(&summary_words(&c.default)),
            printable(&summary_words(&c.alternative))
        ));
    }
    for a in &plan.assumptions {
        out.push_str(&format!("Assumed: {}\n", printable(a)));
    }
    out
}
