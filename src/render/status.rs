//! `status`'s table: the header, one row per VMI, the migrations in flight and the
//! Attention list.

use crate::policy::eviction::StrategySource;
use crate::policy::pods::{LauncherPod, PodRole};
use crate::render::table::{TableBuilder, clip, plain};
use crate::render::{Style, Tone};
use crate::text as fmt;

use crate::policy::status::*;

/// `source→target`; for a decentralized migration the side in the other cluster is named
/// as the peer when its node is not reported; a target not chosen yet (a migration still
/// Pending or Scheduling) is `not scheduled`, as explain and record say it.
pub fn route(
    source: Option<&str>,
    target: Option<&str>,
    decentralized: Option<&Decentralized>,
    phase: &str,
) -> String {
    let text = match (decentralized, source, target) {
        (Some(d), s, None) if d.role == "sender" => format!(
            "{}→peer {}",
            s.unwrap_or("?"),
            d.connect_url.as_deref().unwrap_or("cluster")
        ),
        (Some(d), None, t) if d.role == "receiver" => {
            format!("peer cluster→{}", t.unwrap_or("?"))
        }
        (_, s, t) => format!(
            "{}→{}",
            s.unwrap_or("?"),
            crate::triage::target_words(t, phase, "", false)
        ),
    };
    crate::text::printable(&text)
}

/// `Synchronizing` → `Synchronizing (sender)` for a decentralized migration.
pub fn phase_words(phase: &str, decentralized: Option<&Decentralized>) -> String {
    match decentralized {
        Some(d) => format!("{phase} ({})", d.role),
        None => phase.to_string(),
    }
}

/// The MIGRATION cell. `wide`: phase, mode, route, elapsed of budget; the default is
/// compact (the default mode PreCopy and the budget are left out).
fn migration_cell(row: &VmiRow, wide: bool) -> (String, Tone) {
    if let Some(m) = &row.migration {
        let nodes = route(
            m.source_node.as_deref(),
            m.target_node.as_deref(),
            m.decentralized.as_ref(),
            &m.phase,
        );
        let phase = phase_words(&m.phase, m.decentralized.as_ref());
        let mut text = format!("{phase} {nodes}");
        match m.mode.as_deref() {
            Some(mode) if wide => text = format!("{phase} {mode} {nodes}"),
            // Post-copy runs, by definition: its mode says more than the phase.
            Some("PostCopy") => text = format!("PostCopy {nodes}"),
            Some(mode) if mode != "PreCopy" => text = format!("{phase} {mode} {nodes}"),
            _ => {}
        }
        if let Some(e) = m.elapsed_seconds {
            match m
                .budget_seconds
                .filter(|b| *b > 0 && m.start_timestamp.is_some() && wide)
            {
                Some(b) => text.push_str(&format!(
                    " {}/{}",
                    fmt::duration(e),
                    fmt::duration(b as i64)
                )),
                None => text.push_str(&format!(" {}", fmt::duration(e))),
            }
        }
        if m.point_of_no_return {
            text.push_str(if wide {
                " POINT OF NO RETURN"
            } else {
                " NO RETURN"
            });
            return (text, Tone::Bad);
        }
        return (text, Tone::Warn);
    }
    match &row.last_migration {
        Some(l) => {
            let ago = l
                .ago_seconds
                .map(|s| format!(" {} ago", fmt::age(s)))
                .unwrap_or_default();
            let tone = if l.result == "succeeded" {
                Tone::Dim
            } else {
                Tone::Warn
            };
            (format!("last {}{ago}", l.result), tone)
        }
        None => ("-".into(), Tone::Dim),
    }
}

fn pods_cell(pods: &[LauncherPod]) -> String {
    let parts: Vec<String> = pods
        .iter()
        .filter(|p| p.role != PodRole::Finished)
        .map(|p| {
            let name = p
                .name
                .clone()
                .unwrap_or_else(|| format!("(gone {})", p.uid));
            let live = if p.live { ",live" } else { "" };
            format!("{name}({}{live})", p.role.as_str())
        })
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(" ")
    }
}

pub fn render_table(report: &StatusReport, style: Style, wide: bool, clock: &str) -> String {
    let mut out = String::new();
    let kv = &report.kubevirt;
    let header = match (&kv.found, &kv.version) {
        (true, Some(v)) => format!("KubeVirt {v}"),
        (true, None) => "KubeVirt (version not reported)".into(),
        (false, _) => "no KubeVirt CR found: KubeVirt's defaults assumed".into(),
    };
    let cluster_strategy = kv
        .cluster_eviction_strategy
        .as_deref()
        .unwrap_or("None (default)");
    // The KubeVirt version and strategy are cluster text.
    out.push_str(&crate::text::printable_lines(&format!(
        "{header} · cluster evictionStrategy {cluster_strategy}\nas of {}{clock} · {}\n\n",
        report.as_of, report.source
    )));
    out.push_str(&render_nodes(report, style));
    if report.vmis.is_empty() {
        out.push_str(&no_vmis(report.namespace.as_deref()));
    } else {
        // As kubectl: the namespace column with -A only; the eviction strategy and its
        // source, the owner, the pods and the last migration in -o wide (a default that fits
        // near 120 columns).
        let all = report.namespace.is_none();
        let mut headers = Vec::new();
        if all {
            headers.push("namespace");
        }
        headers.extend(["name", "node", "phase"]);
        if wide {
            headers.push("eviction");
        }
        headers.extend(["migratable", "migration"]);
        if wide {
            headers.extend(["vm", "pods", "last migration"]);
        }
        let mut t = TableBuilder::new(style, &headers);
        t.fold(&["last migration", "pods", "vm", "eviction", "migration"]);
        for r in &report.vmis {
            let eviction = match r.eviction_strategy_source {
                StrategySource::VmiSpec => r.eviction_strategy.clone(),
                StrategySource::ClusterConfig => format!("{} (cluster)", r.eviction_strategy),
                StrategySource::Default => format!("{} (default)", r.eviction_strategy),
            };
            let migratable = match (r.live_migratable, r.reasons.first()) {
                // The condition's reason fits a column; its words are in -o wide.
                (_, Some(b)) if !wide => (
                    format!(
                        "no: {}",
                        clip(
                            b.reason
                                .strip_suffix("NotLiveMigratable")
                                .filter(|r| !r.is_empty())
                                .unwrap_or(&b.reason),
                            22
                        )
                    ),
                    Tone::Warn,
                ),
                (_, Some(b)) => (format!("no: {}", b.summary), Tone::Warn),
                (Some(true), None) => ("yes".to_string(), Tone::Good),
                (Some(false), None) => ("no".to_string(), Tone::Warn),
                (None, None) => ("unknown".to_string(), Tone::Dim),
            };
            let phase_tone = match r.phase.as_str() {
                "Running" => Tone::Plain,
                "Failed" | "Unknown" => Tone::Bad,
                _ => Tone::Warn,
            };
            let name = if r.evacuation.is_some() {
                let attempt = r
                    .evacuation_chain
                    .as_ref()
                    .filter(|c| c.attempt > 1)
                    .map(|c| format!(", attempt {}", c.attempt))
                    .unwrap_or_default();
                (format!("{} (evacuating{attempt})", r.name), Tone::Warn)
            } else {
                plain(r.name.clone())
            };
            let mut row = Vec::new();
            if all {
                row.push(plain(r.namespace.clone()));
            }
            row.extend([
                name,
                plain(r.node.clone().unwrap_or_else(|| "-".into())),
                (r.phase.clone(), phase_tone),
            ]);
            if wide {
                row.push(plain(eviction));
            }
            row.push(migratable);
            let mut whole = Vec::new();
            row.push(if wide {
                migration_cell(r, true)
            } else {
                let (text, tone) = migration_cell(r, false);
                let cell = clip(&text, 40);
                // Under the row (a narrow terminal) the cell has a line of its own: whole.
                whole.resize(row.len(), None);
                whole.push((cell != text).then_some(text));
                (cell, tone)
            });
            if wide {
                row.push(plain(r.vm.clone().unwrap_or_else(|| "- (bare VMI)".into())));
                row.push(plain(pods_cell(&r.pods)));
                row.push(plain(match &r.last_migration {
                    Some(l) => {
                        // No name: the VMI's migrationState is the only record left.
                        let name = l
                            .name
                            .as_deref()
                            .unwrap_or("(no VMIM left; from the VMI's status)");
                        let mut s = format!("{} {name}", l.result);
                        if l.source_node.is_some() || l.target_node.is_some() {
                            s.push_str(&format!(
                                " {}→{}",
                                l.source_node.as_deref().unwrap_or("?"),
                                l.target_node.as_deref().unwrap_or("?")
                            ));
                        }
                        if let Some(reason) = &l.failure_reason {
                            s.push_str(&format!(": {reason}"));
                        }
                        s
                    }
                    None => "-".into(),
                }));
            }
            t.row_whole(row, whole);
        }
        out.push_str(&t.render());
    }

    let all_namespaces = report.namespace.is_none();
    if !report.migrations.is_empty() {
        out.push_str(&format!(
            "\nMigrations not finished ({}):\n",
            report.migrations.len()
        ));
        let mut headers = Vec::new();
        if all_namespaces {
            headers.push("namespace");
        }
        headers.extend(["name", "vmi", "phase", "age", "nodes"]);
        if wide {
            headers.push("mode");
        }
        headers.push("waiting for");
        if wide {
            headers.extend(["source pod", "target pod", "evacuates", "priority"]);
        }
        let mut t = TableBuilder::new(style, &headers);
        t.fold(&[
            "priority",
            "evacuates",
            "target pod",
            "source pod",
            "waiting for",
            "nodes",
            "age",
        ]);
        for m in &report.migrations {
            let mode_tone = if m.mode.as_deref() == Some("PostCopy") {
                Tone::Bad
            } else {
                Tone::Plain
            };
            let mut row = Vec::new();
            if all_namespaces {
                row.push(plain(m.namespace.clone()));
            }
            row.extend([
                plain(m.name.clone()),
                plain(m.vmi.clone()),
                // The default has no MODE column: post-copy shows beside the phase, which
                // stays the VMIM's own (issue 33: `PostCopy` under PHASE read as a phase).
                if !wide && m.mode.as_deref() == Some("PostCopy") {
                    (
                        format!(
                            "{} (post-copy)",
                            phase_words(&m.phase, m.decentralized.as_ref())
                        ),
                        Tone::Bad,
                    )
                } else {
                    (phase_words(&m.phase, m.decentralized.as_ref()), Tone::Warn)
                },
                plain(m.age_seconds.map(fmt::age).unwrap_or_else(|| "-".into())),
                plain(route(
                    m.source_node.as_deref(),
                    m.target_node.as_deref(),
                    m.decentralized.as_ref(),
                    &m.phase,
                )),
            ]);
            if wide {
                row.push((m.mode.clone().unwrap_or_else(|| "-".into()), mode_tone));
            }
            let mut whole = Vec::new();
            row.push(plain(if wide {
                crate::text::printable(&m.waiting_for)
            } else {
                let text = crate::text::printable(&m.waiting_for);
                let cell = clip(&text, 36);
                // Under the row (a narrow terminal) the cell has a line of its own: whole.
                whole.resize(row.len(), None);
                whole.push((cell != text).then_some(text));
                cell
            }));
            if wide {
                let live = |pod: &Option<String>| match pod {
                    Some(p) if m.live_pod.as_ref() == Some(p) => format!("{p} (live)"),
                    Some(p) => p.clone(),
                    None => "-".into(),
                };
                row.push(plain(live(&m.source_pod)));
                row.push(plain(live(&m.target_pod)));
                row.push(plain(
                    m.evacuation_node.clone().unwrap_or_else(|| "-".into()),
                ));
                row.push(plain(
                    m.priority
                        .as_deref()
                        .map(crate::text::printable)
                        .unwrap_or_else(|| "-".into()),
                ));
            }
            t.row_whole(row, whole);
        }
        let (table, cut) = t.render_clipped();
        out.push_str(&table);
        if cut {
            out.push_str("(… cut: -o wide shows what each migration waits for whole)\n");
        }
        out.push_str("\nLauncher pods of migrations in flight (read the logs of the live one):\n");
        for m in &report.migrations {
            let describe = |pod: &Option<String>, node: &Option<String>| -> String {
                match (pod, node) {
                    (None, _) => "none yet".to_string(),
                    (Some(p), None) => format!("{p} (not scheduled)"),
                    (Some(p), Some(n)) => {
                        let live = if m.live_pod.as_ref() == Some(p) {
                            ", live"
                        } else {
                            ""
                        };
                        format!("{p} ({n}{live})")
                    }
                }
            };
            let (source, target) = match &m.decentralized {
                // The other cluster's pod is not in this one: name it as the peer's.
                Some(d) => {
                    let here_or_peer =
                        |pod: &Option<String>, node: &Option<String>, here: bool| match (pod, here)
                        {
                            (None, false) => "in the peer cluster".to_string(),
                            (Some(_), false) => {
                                format!("{} (peer cluster)", describe(pod, node))
                            }
                            _ => describe(pod, node),
                        };
                    let sender = d.role == "sender";
                    (
                        here_or_peer(&m.source_pod, &m.source_node, sender),
                        here_or_peer(&m.target_pod, &m.target_node, !sender),
                    )
                }
                None => (
                    describe(&m.source_pod, &m.source_node),
                    describe(&m.target_pod, &m.target_node),
                ),
            };
            out.push_str(&format!(
                "  {}/{}: source {} → target {}{}\n",
                m.namespace,
                m.vmi,
                crate::text::printable(&source),
                crate::text::printable(&target),
                match &m.decentralized {
                    Some(d) if !d.synchronization_addresses.is_empty() => format!(
                        " · sync {}",
                        crate::text::printable(&d.synchronization_addresses.join(", "))
                    ),
                    _ => String::new(),
                }
            ));
        }
    }

    if !report.warnings.is_empty() {
        out.push_str("\nAttention:\n");
        for w in &report.warnings {
            let tone = match w.kind.as_str() {
                "post-copy"
                | "blocks-drain"
                | "failed"
                | "decentralized-failure"
                | "cordoned-node" => Tone::Bad,
                _ => Tone::Warn,
            };
            let about = if w.vmi.is_empty() {
                String::new()
            } else {
                format!("{}: ", crate::text::printable(&w.vmi))
            };
            out.push_str(&format!(
                "  {} {about}{}\n",
                style.paint("!", tone),
                crate::text::printable(&w.message)
            ));
        }
    }
    out
}

/// What `status` says when no VMI is in scope, naming the scope and the way to widen it
/// (kubectl: `No resources found in default namespace.`).
pub fn no_vmis(namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) => format!(
            "No VMIs found in namespace {} (use -A for every namespace).\n",
            crate::text::printable(ns)
        ),
        None => "No VMIs found in any namespace.\n".into(),
    }
}

/// `-o name`: one `virtualmachineinstance.kubevirt.io/NAME` line per VMI, as kubectl.
pub fn render_names(report: &StatusReport) -> String {
    report
        .vmis
        .iter()
        .map(|v| {
            format!(
                "virtualmachineinstance.kubevirt.io/{}\n",
                crate::text::printable(&v.name)
            )
        })
        .collect()
}

/// `cordoned, draining`, `cordoned, drained`, `cordoned, stalled` (VMIs left, nothing
/// evacuated), `not cordoned` (VMIs evacuated from it; no drain).
pub fn node_state_words(n: &NodeDrain) -> &'static str {
    match n.state.as_str() {
        "draining" => "cordoned, draining",
        "drained" => "cordoned, drained",
        "cordoned" => "cordoned, stalled",
        _ => "not cordoned",
    }
}

/// The nodes cordoned or evacuated, first: how far each drain is, counted from the API
/// (VMIs still on the node, evictions KubeVirt accepted, migrations in flight, launcher
/// pods left, VMIs moved), and which VMIs are still there.
pub fn render_nodes(report: &StatusReport, style: Style) -> String {
    if report.nodes.is_empty() {
        return String::new();
    }
    // VMIS on the node, EVICTIONS accepted (VMIs marked for evacuation), MIGRATING (not
    // finished), launcher PODS LEFT on it, VMIs MOVED off it by an evacuation.
    let mut out = String::from("Nodes cordoned or evacuated:\n");
    let mut t = TableBuilder::new(
        style,
        &[
            "node",
            "state",
            "vmis",
            "evictions",
            "migrating",
            "pods left",
            "moved",
        ],
    );
    for n in &report.nodes {
        let tone = match n.state.as_str() {
            "drained" => Tone::Good,
            "cordoned" => Tone::Bad,
            _ => Tone::Warn,
        };
        t.row(vec![
            plain(n.name.clone()),
            (node_state_words(n).to_string(), tone),
            plain(n.vmis_left.len().to_string()),
            plain(n.evictions_accepted.to_string()),
            plain(n.migrations_in_flight.to_string()),
            plain(n.launcher_pods_left.to_string()),
            plain(n.moved.len().to_string()),
        ]);
    }
    out.push_str(&t.render());
    // Which VMIs a drain still has to move (a node evacuated but not cordoned is no drain).
    for n in report
        .nodes
        .iter()
        .filter(|n| n.cordoned && !n.vmis_left.is_empty())
    {
        out.push_str(&format!(
            "  still on {}: {}\n",
            crate::text::printable(&n.name),
            crate::text::printable(&names_list(&n.vmis_left))
        ));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 33: `No VMIs found.` named neither the namespace nor `-A`.
    #[test]
    fn no_vmis_names_the_namespace_and_the_way_to_every_namespace() {
        assert_eq!(
            no_vmis(Some("default")),
            "No VMIs found in namespace default (use -A for every namespace).\n"
        );
        assert_eq!(no_vmis(None), "No VMIs found in any namespace.\n");
    }
}
