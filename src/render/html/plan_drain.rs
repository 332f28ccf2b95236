//! `plan-drain -o html`: the verdict, the blockers with their reasons, one row per VMI
//! (action, target, wave, start, ETA, what holds it), the waves, what would change the
//! outcome, migrations coming in, compatibility and convergence findings, the queue and the
//! limits, the assumptions and warnings.

use maud::{Markup, html};

use super::{Page, document, offset, t};
use crate::policy::drain::{Action, DrainPlan, Verdict, VmiPlan};
use crate::text as fmt;

/// The waves on a time axis (the terminal's Gantt, as SVG): rows of VMs by wave, the ETA at
/// the axis's end, the blocked VMs marked where the drain reaches them.
fn gantt(plan: &DrainPlan) -> Markup {
    let chart = crate::render::gantt::of_drain_plan(plan);
    if chart.rows.is_empty() {
        return html! {};
    }
    html! {
        section id="gantt" class="chart" {
            h2 { "Waves on a time axis" }
            (crate::render::gantt::svg_markup(&chart, 960))
        }
    }
}

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::WillComplete => "good",
        Verdict::WillCompleteWithShutdowns => "warn",
        Verdict::WillBlock => "bad",
    }
}

fn action_class(a: Action) -> &'static str {
    match a {
        Action::LiveMigrate | Action::AlreadyMigrating => "good",
        Action::Shutdown | Action::ShutdownNotMigratable | Action::External => "warn",
        Action::BlocksDrain | Action::NoTarget => "bad",
    }
}

/// The plan as a page. `as_of`/`clock_note`/`source`: the envelope, as the table's header;
/// `warnings`: what was said about the input on stderr.
pub fn page(
    plan: &DrainPlan,
    as_of: &str,
    clock_note: &str,
    source: &str,
    warnings: &[String],
) -> String {
    let title = format!("vmctl plan-drain: {}", plan.nodes.join(", "));
    let sections = [
        verdict(plan),
        gantt(plan),
        blockers(plan),
        vmis(plan),
        waves(plan),
        fixes(plan),
        incoming(plan),
        compatibility(plan),
        convergence(plan),
        queue_and_limits(plan),
        lines("Assumptions", "assumptions", &plan.assumptions),
        lines("Warnings about the input", "warnings", warnings),
    ];
    let body = html! { @for s in &sections { (s) } };
    document(
        &Page {
            title: &title,
            as_of,
            clock_note,
            source,
        },
        body,
    )
}

/// The verdict box and its facts: VMIs, blockers, migrations and waves, shutdowns, time.
fn verdict(plan: &DrainPlan) -> Markup {
    let class = verdict_class(plan.verdict);
    let count = |f: &dyn Fn(&VmiPlan) -> bool| plan.vmis.iter().filter(|v| f(v)).count();
    let migrating = count(&|v| v.action == Action::LiveMigrate);
    let stopping = count(&|v| v.action.stops_the_vm());
    let blocking = plan.blockers.iter().filter(|b| b.blocking).count();
    let not_completing = plan
        .convergence
        .as_ref()
        .map_or(0, |c| c.will_not_complete.len());
    let duration = fmt::duration(plan.estimated_duration_seconds as i64);
    let time = if plan.verdict != Verdict::WillBlock && not_completing == 0 {
        format!("about {duration}")
    } else {
        format!("the rest would take about {duration}")
    };
    html! {
        section id="verdict" class=(format!("verdict v-{class}")) {
            p class=(format!("headline {class}")) {
                (t(&format!("Drain of {}: {}", plan.nodes.join(", "),
                    plan.verdict.as_str().replace('-', " ").to_uppercase())))
            }
            p { (time) }
            dl class="facts" {
                dt { "VMIs" } dd { (plan.vmis.len()) }
                dt { "Blockers" } dd class=(if blocking > 0 { "bad" } else { "" }) { (blocking) }
                @if plan.blockers.len() > blocking {
                    dt { "Waits" } dd class="warn" { (plan.blockers.len() - blocking) " (not blockers)" }
                }
                dt { "Live migrations" } dd { (migrating) " in " (plan.waves) " wave(s)" }
                dt { "Shutdowns" } dd class=(if stopping > 0 { "warn" } else { "" }) { (stopping) }
                @if not_completing > 0 {
                    dt { "Predicted not to complete" } dd class="bad" { (not_completing) " (a hint)" }
                }
                @if let Some(v) = &plan.kubevirt_version {
                    dt { "KubeVirt" } dd { (t(v)) }
                }
            }
            @if plan.defaults_assumed {
                p class="warn" { "No KubeVirt CR found: KubeVirt's defaults apply." }
            }
        }
    }
}

/// What a blocker names: `PodDisruptionBudget prod/x`, `ResourceQuota ns/q`, `ns/vmi`.
fn blocker_object(b: &crate::policy::drain::DrainBlocker) -> String {
    match (b.kind.as_str(), &b.namespace) {
        ("pdb", Some(ns)) => format!("PodDisruptionBudget {ns}/{}", b.name),
        ("quota", Some(ns)) => format!("ResourceQuota {ns}/{}", b.name),
        (_, Some(ns)) => format!("{ns}/{}", b.name),
        (_, None) => b.name.clone(),
    }
}

fn blockers(plan: &DrainPlan) -> Markup {
    html! {
        @if !plan.blockers.is_empty() {
            section id="blockers" {
                h2 { "Blockers and waits" }
                table {
                    thead { tr { th { "" } th { "object" } th { "kind" } th { "reason" }
                        th { "why" } th { "holds" } } }
                    tbody {
                        @for b in &plan.blockers {
                            tr {
                                @if b.blocking { td class="bad" { "blocks" } }
                                @else { td class="warn" { "waits" } }
                                td class="mono" { (t(&blocker_object(b))) }
                                td { (t(&b.kind)) }
                                td { (t(&b.reason)) }
                                td class="text" { (t(&b.message)) }
                                td class="mono" { (t(&b.vmis.join(", "))) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The blockers that hold up one VMI, by reason (the Blockers table names their objects).
fn held_by(plan: &DrainPlan, v: &VmiPlan) -> String {
    let id = v.id();
    plan.blockers
        .iter()
        .filter(|b| b.vmis.contains(&id))
        .map(|b| b.reason.clone())
        .collect::<Vec<_>>()
        .join("; ")
}

fn vmis(plan: &DrainPlan) -> Markup {
    let predicted = plan.convergence.is_some();
    html! {
        section id="vmis" {
            h2 { "VMIs" }
            @if plan.vmis.is_empty() {
                p { "No VMIs on these nodes: the drain does not touch any VM." }
            } @else {
                table {
                    thead { tr {
                        th { "VMI" } th { "action" } th { "target" } th class="num" { "wave" }
                        th class="num" { "start" } th class="num" { "ETA" }
                        @if predicted { th { "converges" } }
                        th { "blockers" } th { "reason" }
                    } }
                    tbody {
                        @for v in &plan.vmis {
                            tr {
                                td class="mono" {
                                    (t(&v.id()))
                                    @if let Some(n) = &v.evacuation_node {
                                        " " span class="dim" { (t(&format!("(evacuating from {n})"))) }
                                    }
                                    div class="src" { "eviction " (t(&v.eviction_strategy)) }
                                }
                                td class=(action_class(v.action)) { (v.action.as_str()) }
                                td { (t(v.target.as_deref().unwrap_or("-"))) }
                                td class="num" { (v.wave.map(|w| w.to_string()).unwrap_or_else(|| "-".into())) }
                                td class="num" { (offset(v.start_seconds)) }
                                td class="num" { (offset(v.end_seconds)) }
                                @if predicted {
                                    td { (v.convergence.as_ref().map(|c| c.cell()).unwrap_or_else(|| "-".into())) }
                                }
                                td class="bad" { (t(&held_by(plan, v))) }
                                td class="text" { (t(&v.explanation)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// One row per wave of live migrations: its VMIs, when it starts, when its last one ends.
fn waves(plan: &DrainPlan) -> Markup {
    let mut waves: Vec<(u32, Vec<&VmiPlan>)> = Vec::new();
    for v in &plan.vmis {
        let Some(w) = v.wave else { continue };
        match waves.iter_mut().find(|(n, _)| *n == w) {
            Some((_, vs)) => vs.push(v),
            None => waves.push((w, vec![v])),
        }
    }
    waves.sort_by_key(|(n, _)| *n);
    html! {
        @if !waves.is_empty() {
            section id="waves" {
                h2 { "Waves" }
                table {
                    thead { tr { th class="num" { "wave" } th class="num" { "starts" }
                        th class="num" { "ends" } th { "live migrations" } } }
                    tbody {
                        @for (n, vs) in &waves {
                            tr {
                                td class="num" { (n) }
                                td class="num" { (offset(vs.iter().filter_map(|v| v.start_seconds).min())) }
                                td class="num" { (offset(vs.iter().filter_map(|v| v.end_seconds).max())) }
                                td class="mono" { (t(&vs.iter().map(|v| match &v.target {
                                    Some(to) => format!("{} → {to}", v.id()),
                                    None => v.id(),
                                }).collect::<Vec<_>>().join(", "))) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn fixes(plan: &DrainPlan) -> Markup {
    let fixes: Vec<(String, &str)> = plan
        .vmis
        .iter()
        .filter(|v| v.action != Action::LiveMigrate)
        .filter_map(|v| v.fix.as_deref().map(|f| (v.id(), f)))
        .collect();
    let postcopy: Vec<String> = plan
        .vmis
        .iter()
        .filter(|v| v.action == Action::LiveMigrate && v.allow_post_copy)
        .map(VmiPlan::id)
        .collect();
    html! {
        @if !fixes.is_empty() {
            section id="fixes" {
                h2 { "To change the outcome" }
                ul { @for (id, f) in &fixes { li { span class="mono" { (t(id)) } ": " (super::prose(f)) } } }
            }
        }
        @if !postcopy.is_empty() {
            p class="warn" {
                (t(&format!("Post-copy allowed for {}: if they switch to post-copy, that is the point of no return (a network failure then loses the guest).", postcopy.join(", "))))
            }
        }
    }
}

fn incoming(plan: &DrainPlan) -> Markup {
    html! {
        @if !plan.incoming.is_empty() {
            section id="incoming" {
                h2 { "Migrating into the drained node(s)" }
                p class="dim" { "The drain waits for them, then moves them again." }
                ul {
                    @for i in &plan.incoming {
                        li class=(if i.point_of_no_return { "bad" } else { "warn" }) {
                            (t(&format!("{}/{} from {} to {} ({})", i.namespace, i.name,
                                i.source_node.as_deref().unwrap_or("?"),
                                i.target_node.as_deref().unwrap_or("?"),
                                i.mode.as_deref().unwrap_or("mode not reported"))))
                            @if i.point_of_no_return {
                                ": POST-COPY, the point of no return: do not disturb either node until it finishes"
                            }
                        }
                    }
                }
            }
        }
        @if !plan.skipped.is_empty() {
            section id="skipped" {
                h2 { "Not touched" }
                ul { @for s in &plan.skipped { li { (t(&s.reason)) ": " (t(&s.message)) } } }
            }
        }
    }
}

fn compatibility(plan: &DrainPlan) -> Markup {
    html! {
        @if !plan.compatibility.is_empty() {
            section id="compatibility" {
                h2 { "Compatibility (checked before anything moves)" }
                table {
                    thead { tr { th { "" } th { "VMI" } th { "route" } th { "finding" } th { "message" } } }
                    tbody {
                        @for f in &plan.compatibility {
                            tr {
                                td class=(if f.severity == "blocks" { "bad" } else { "warn" }) { (f.severity) }
                                td class="mono" { (t(&f.vmi)) }
                                td { (t(&match &f.target { Some(to) => format!("{} → {to}", f.node),
                                    None => f.node.clone() })) }
                                td { (f.kind) }
                                td { (t(&f.message)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn convergence(plan: &DrainPlan) -> Markup {
    html! {
        @if let Some(c) = &plan.convergence {
            section id="convergence" {
                h2 { "Convergence" }
                p class="dim" { (t(&format!("From the guest dirty rate ({}, {}). {}", c.metric, c.source, c.caveat))) }
                ul {
                    @for v in &plan.vmis {
                        @if let Some(cv) = &v.convergence {
                            li class=(match (cv.completes, cv.converges) {
                                (Some(false), _) => "bad", (Some(true), Some(false)) => "warn",
                                (Some(true), _) => "good", (None, _) => "dim" }) {
                                span class="mono" { (t(&v.id())) } ": " (t(&cv.finding))
                            }
                        }
                    }
                    @for n in &c.notes { li class="dim" { "note: " (t(n)) } }
                }
            }
        }
    }
}

fn queue_and_limits(plan: &DrainPlan) -> Markup {
    let l = &plan.limits;
    let q = &plan.queue;
    let queued = |m: &crate::policy::drain::QueuedMigration| {
        let mut s = format!(
            "{}/{} (VMI {}, {})",
            m.namespace,
            m.name,
            m.vmi,
            m.priority.as_deref().unwrap_or("no priority")
        );
        if m.on_drained_node {
            s.push_str(", on a drained node");
        }
        if let Some(c) = &m.held_by {
            s.push_str(&format!(", held by {c}: takes no slot"));
        }
        s
    };
    html! {
        section id="limits" {
            h2 { "Limits and queue" }
            dl class="facts" {
                dt { "Per cluster" } dd { (l.parallel_migrations_per_cluster) " (" (l.in_flight_cluster) " in flight)" }
                dt { "Outbound per node" } dd { (l.parallel_outbound_migrations_per_node) }
                @for (node, n) in l.in_flight_per_node.iter().filter(|(_, n)| **n > 0) {
                    dt { "In flight from " (t(node)) } dd { (n) }
                }
                @if !q.mode.is_empty() {
                    dt { "Queue" } dd { (t(&q.mode)) ": " (t(&q.why)) }
                }
            }
            @if !q.ahead.is_empty() {
                h3 { "Pending migrations ahead of the drain's evacuations" }
                ul { @for m in &q.ahead { li { (t(&queued(m))) } } }
            }
            @if !q.behind.is_empty() {
                h3 { "Pending migrations waiting behind them" }
                ul { @for m in &q.behind { li { (t(&queued(m))) } } }
            }
        }
    }
}

/// A titled list of lines; nothing when empty.
fn lines(title: &str, id: &str, items: &[String]) -> Markup {
    html! {
        @if !items.is_empty() {
            section id=(id) {
                h2 { (title) }
                ul { @for i in items { li { (t(i)) } } }
            }
        }
    }
}
