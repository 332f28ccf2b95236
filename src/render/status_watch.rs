//! `status --watch`'s frames: the table redrawn in place on a terminal, one line per change
//! of a migration off one (JSON with `-o json`), the watches' reconnecting lines.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::jiff::Timestamp;
use serde_json::json;

use super::follow as follow_text;
use super::status::{phase_words, route};
use super::table::{TableBuilder, plain};
use super::{OutputFormat, Style, Tone, stderr_line, write_stdout};
use crate::cluster::Kind;
use crate::cluster::watch::Reconnecting;
use crate::error::Result;
use crate::migration::follow::{Mirror, Update};
use crate::policy::status::{MigrationRow, StatusReport};
use crate::text as fmt;

pub fn progress_cell(report: &StatusReport, m: &MigrationRow) -> String {
    let flight = report
        .vmis
        .iter()
        .find(|v| v.namespace == m.namespace && v.name == m.vmi)
        .and_then(|v| v.migration.as_ref())
        .filter(|f| f.name.as_deref() == Some(m.name.as_str()));
    match flight {
        Some(f) if f.start_timestamp.is_some() => {
            let elapsed = f.elapsed_seconds.unwrap_or(0);
            match f.budget_seconds.filter(|b| *b > 0) {
                Some(b) => format!(
                    "{} of {} budget ({}%)",
                    fmt::duration(elapsed),
                    fmt::duration(b as i64),
                    (elapsed.max(0) as u64 * 100 / b).min(999)
                ),
                None => format!("{} streaming", fmt::duration(elapsed)),
            }
        }
        _ => m.waiting_for.clone(),
    }
}

pub fn row_line(report: &StatusReport, m: &MigrationRow) -> String {
    format!(
        "{}/{} vmi={} phase={} {} mode={} progress: {}",
        m.namespace,
        m.name,
        m.vmi,
        m.phase,
        route(
            m.source_node.as_deref(),
            m.target_node.as_deref(),
            m.decentralized.as_ref(),
            &m.phase,
        ),
        m.mode.as_deref().unwrap_or("-"),
        crate::text::printable(&progress_cell(report, m))
    )
}

pub fn render_table(
    report: &StatusReport,
    style: Style,
    scope: &str,
    now: Timestamp,
    notes: &[String],
    wide: bool,
) -> String {
    let mut out = format!(
        "Migrations in flight ({scope}) · {} · watching (Ctrl-C to stop)\n",
        now.strftime("%H:%M:%S")
    );
    for note in notes {
        out.push_str(note);
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&super::status::render_nodes(report, style));
    if report.migrations.is_empty() {
        out.push_str("No migrations in flight.\n");
        return out;
    }
    // As kubectl: the namespace column when watching every namespace only.
    let all = !scope.starts_with("namespace ");
    let headers = [
        "namespace",
        "migration",
        "vmi",
        "phase",
        "source → target",
        "mode",
        "live pod",
        "progress",
    ];
    let mut t = TableBuilder::new(style, &headers[usize::from(!all)..]);
    // On a terminal narrower than the frame, these go under each row first.
    t.fold(&["progress", "live pod", "mode", "source → target"]);
    if !wide {
        // A frame of prose cells (what a migration waits for) stays near 120 columns.
        t.budget(120);
    }
    for m in &report.migrations {
        let mode_tone = if m.mode.as_deref() == Some("PostCopy") {
            Tone::Bad
        } else {
            Tone::Plain
        };
        let mut row = vec![
            plain(m.namespace.clone()),
            plain(m.name.clone()),
            plain(m.vmi.clone()),
            (phase_words(&m.phase, m.decentralized.as_ref()), Tone::Warn),
            plain(
                route(
                    m.source_node.as_deref(),
                    m.target_node.as_deref(),
                    m.decentralized.as_ref(),
                    &m.phase,
                )
                .replacen('→', " → ", 1),
            ),
            (
                match m.mode.as_deref() {
                    Some("PostCopy") => "PostCopy (no return)".to_string(),
                    Some(mode) => mode.to_string(),
                    None => "-".into(),
                },
                mode_tone,
            ),
            plain(live_pod(m, wide)),
            plain(crate::text::printable(&progress_cell(report, m))),
        ];
        if !all {
            row.remove(0);
        }
        t.row(row);
    }
    out.push_str(&t.render());
    let loops = loop_lines(report);
    if !loops.is_empty() {
        out.push_str(
            "\nLoops that never end by themselves (vmctl explain vm/NAME -n NS for the way out):\n",
        );
        for line in loops {
            out.push_str(&format!("  {} {}\n", style.paint("!", Tone::Bad), line));
        }
    }
    out
}

/// The LIVE POD cell: the default says which of the migration's pods runs the guest
/// (`source`, `target`; the name when it is neither); -o wide names it.
fn live_pod(m: &MigrationRow, wide: bool) -> String {
    let Some(live) = &m.live_pod else {
        return "-".into();
    };
    if wide {
        return live.clone();
    }
    if m.source_pod.as_ref() == Some(live) {
        "source".into()
    } else if m.target_pod.as_ref() == Some(live) {
        "target".into()
    } else {
        live.clone()
    }
}

/// One line per VMI caught in a loop: `ns/name: kind since …, N attempts, blocking field`.
fn loop_lines(report: &StatusReport) -> Vec<String> {
    report
        .vmis
        .iter()
        .filter_map(|v| {
            let l = v.in_loop.as_ref()?;
            Some(crate::text::printable(&format!(
                "{}/{}: {} for {} ({} attempt{}; {} {} = {})",
                v.namespace,
                v.name,
                l.kind.as_str(),
                crate::text::duration(l.seconds),
                l.attempts,
                if l.attempts == 1 { "" } else { "s" },
                l.blocking.object,
                l.blocking.field,
                l.blocking.value
            )))
        })
        .collect()
}

/// What the loop shows besides the report: the watches' failures, and how far along it is.
pub struct View {
    pub tty: bool,
    pub scope: String,
    reconnecting: BTreeMap<Kind, Reconnecting>,
    /// Off a terminal: the last line printed per migration, to print changes only.
    last_lines: BTreeMap<String, String>,
    /// Off a terminal: the last line printed per cordoned or evacuated node.
    last_nodes: BTreeMap<String, String>,
}

/// A node's drain in one line: `node node-1 cordoned, draining: 2 VMIs left (…) · …`.
pub fn node_line(n: &crate::policy::status::NodeDrain) -> String {
    crate::text::printable(&format!(
        "node {} {}: {} VMIs left{} · {} evictions accepted · {} migrating · {} launcher pods left · {} moved",
        n.name,
        super::status::node_state_words(n),
        n.vmis_left.len(),
        if n.vmis_left.is_empty() {
            String::new()
        } else {
            format!(" ({})", crate::policy::status::names_list(&n.vmis_left))
        },
        n.evictions_accepted,
        n.migrations_in_flight,
        n.launcher_pods_left,
        n.moved.len()
    ))
}

impl View {
    pub fn new(tty: bool, scope: String) -> View {
        View {
            tty,
            scope,
            reconnecting: BTreeMap::new(),
            last_lines: BTreeMap::new(),
            last_nodes: BTreeMap::new(),
        }
    }

    /// Off a terminal, once the first frame is ready: what is watched (stderr).
    pub fn started(&self, now: Timestamp, vmis: usize, in_flight: usize) {
        if !self.tty {
            stderr_line(&super::follow::watching(
                &now.strftime("%H:%M:%S").to_string(),
                vmis,
                &self.scope,
                in_flight,
            ));
        }
    }

    /// Ctrl-C: leave the cursor below the frame.
    pub fn stopped(&self) -> Result<()> {
        if self.tty { write_stdout("\n") } else { Ok(()) }
    }

    fn notes(&self) -> Vec<String> {
        self.reconnecting
            .values()
            .map(|r| format!("⚠ {}", crate::text::printable(&r.to_string())))
            .collect()
    }

    /// A watch's failure or recovery. Off a terminal one line on stderr; on one, it shows
    /// in the next frame (the caller redraws).
    pub fn watch_state(&mut self, update: &Update) {
        let now = Timestamp::now().strftime("%H:%M:%S").to_string();
        match update {
            Update::Reconnecting(r) => {
                if !self.tty {
                    stderr_line(&follow_text::reconnecting(&now, r));
                }
                self.reconnecting.insert(r.kind, r.clone());
            }
            Update::Recovered(kind) => {
                let was_failing = self.reconnecting.remove(kind).is_some();
                if was_failing && !self.tty {
                    stderr_line(&follow_text::reconnected(&now, *kind));
                }
            }
            _ => {}
        }
    }

    /// Before the first frame, on a terminal: what it is waiting for.
    pub fn draw_waiting(&self, ready: &BTreeSet<Kind>) -> Result<()> {
        if !self.tty {
            return Ok(());
        }
        let waiting: Vec<&str> = [
            (Kind::VirtualMachineInstance, "VMIs"),
            (Kind::VirtualMachineInstanceMigration, "migrations"),
            (Kind::Pod, "launcher pods"),
            (Kind::Node, "nodes"),
        ]
        .iter()
        .filter(|(k, _)| !ready.contains(k))
        .map(|(_, what)| *what)
        .collect();
        let mut out = format!(
            "\x1b[H\x1b[2JMigrations in flight ({}) · listing {}… (Ctrl-C to stop)\n",
            self.scope,
            waiting.join(", ")
        );
        for note in self.notes() {
            out.push_str(&note);
            out.push('\n');
        }
        write_stdout(&out)
    }

    pub fn draw(
        &mut self,
        style: Style,
        output: OutputFormat,
        report: &StatusReport,
        mirror: &Mirror,
        now: Timestamp,
    ) -> Result<()> {
        if self.tty {
            return write_stdout(&format!(
                "\x1b[H\x1b[2J{}",
                render_table(
                    report,
                    style,
                    &self.scope,
                    now,
                    &self.notes(),
                    output == OutputFormat::Wide
                )
            ));
        }
        // Off a terminal: one line per change of a node's drain, then of a migration (and
        // when it ends).
        for n in &report.nodes {
            let line = node_line(n);
            if self.last_nodes.get(&n.name) != Some(&line) {
                self.last_nodes.insert(n.name.clone(), line.clone());
                let text = match output {
                    OutputFormat::Json | OutputFormat::Yaml => super::json_line(&json!({
                        "time": fmt::timestamp(now), "node": n.name, "cordoned": n.cordoned,
                        "state": n.state, "vmisLeft": n.vmis_left,
                        "evictionsAccepted": n.evictions_accepted,
                        "migrationsInFlight": n.migrations_in_flight,
                        "launcherPodsLeft": n.launcher_pods_left, "moved": n.moved}))?,
                    _ => format!("[{}] {line}", now.strftime("%H:%M:%S")),
                };
                write_stdout(&format!("{text}\n"))?;
            }
        }
        let mut seen = BTreeSet::new();
        for m in &report.migrations {
            let id = format!("{}/{}", m.namespace, m.name);
            seen.insert(id.clone());
            let in_loop = m.loop_kind.map(|k| k.as_str());
            let signature = format!(
                "{}|{:?}|{:?}|{:?}|{}|{:?}",
                m.phase, m.target_node, m.mode, m.live_pod, m.waiting_for, in_loop
            );
            if self.last_lines.get(&id) != Some(&signature) {
                self.last_lines.insert(id, signature);
                let line = match output {
                    OutputFormat::Json | OutputFormat::Yaml => {
                        let mut line = json!({
                        "time": fmt::timestamp(now), "namespace": m.namespace, "migration": m.name,
                        "vmi": m.vmi, "phase": m.phase, "sourceNode": m.source_node,
                        "targetNode": m.target_node, "mode": m.mode, "livePod": m.live_pod,
                        "progress": progress_cell(report, m)});
                        if let Some(k) = in_loop {
                            line["loop"] = json!(k);
                        }
                        super::json_line(&line)?
                    }
                    _ => format!(
                        "[{}] {}{}",
                        now.strftime("%H:%M:%S"),
                        row_line(report, m),
                        in_loop
                            .map(|k| format!(
                                " · LOOP {k} (vmctl explain vm/{} -n {})",
                                m.vmi, m.namespace
                            ))
                            .unwrap_or_default()
                    ),
                };
                write_stdout(&format!("{line}\n"))?;
            }
        }
        let ended: Vec<String> = self
            .last_lines
            .keys()
            .filter(|k| !seen.contains(*k))
            .cloned()
            .collect();
        for id in ended {
            self.last_lines.remove(&id);
            let (ns, name) = id.split_once('/').unwrap_or(("", id.as_str()));
            let phase = mirror
                .vmims
                .get(&(ns.to_string(), name.to_string()))
                .map(|m| m.phase().as_str().to_string())
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| "gone (deleted)".into());
            let line = match output {
                OutputFormat::Json | OutputFormat::Yaml => super::json_line(&json!({
                    "time": fmt::timestamp(now), "namespace": ns, "migration": name,
                    "phase": phase, "ended": true}))?,
                _ => format!("[{}] {id} ended: {phase}", now.strftime("%H:%M:%S")),
            };
            write_stdout(&format!("{line}\n"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{VirtualMachineInstance, VirtualMachineInstanceMigration};
    use crate::policy::status::{StatusInputs, build_report};

    fn vmi(name: &str) -> VirtualMachineInstance {
        serde_json::from_value(
            json!({"metadata": {"name": name, "namespace": "prod", "uid": format!("uid-{name}")},
            "status": {"nodeName": "node-1", "phase": "Running",
                "activePods": {format!("pod-{name}"): "node-1"}}}),
        )
        .unwrap()
    }

    #[test]
    fn a_decentralized_receiver_is_drawn_with_its_role_and_the_peer_source() {
        let v: VirtualMachineInstance = serde_json::from_value(json!({
            "metadata": {"name": "web-09", "namespace": "prod", "uid": "uid-web-09"},
            "status": {"nodeName": "node-7", "phase": "WaitingForSync",
                "migrationState": {"migrationUid": "uid-recv",
                    "sourceState": {"node": "dc1-node-2", "pod": "virt-launcher-web-09-src",
                                    "migrationUID": "peer"},
                    "targetState": {"node": "node-7", "pod": "virt-launcher-web-09-rx",
                                    "migrationUID": "uid-recv"}}}
        }))
        .unwrap();
        let recv: VirtualMachineInstanceMigration = serde_json::from_value(json!({
            "metadata": {"name": "recv", "namespace": "prod", "uid": "uid-recv"},
            "spec": {"vmiName": "web-09", "receive": {"migrationID": "mig-9"}},
            "status": {"phase": "WaitingForSync", "synchronizationAddresses": ["10.30.0.9:9185"]}
        }))
        .unwrap();
        let send: VirtualMachineInstanceMigration = serde_json::from_value(json!({
            "metadata": {"name": "send", "namespace": "prod", "uid": "uid-send"},
            "spec": {"vmiName": "db-01", "sendTo": {"migrationID": "mig-1", "connectURL": "peer.example:9185"}},
            "status": {"phase": "Synchronizing"}
        }))
        .unwrap();
        // What `operate::status_watch::in_flight` picks for these two.
        let inputs = StatusInputs {
            vmis: vec![v, vmi("db-01")],
            vmims: vec![recv, send],
            pods: Vec::new(),
            kubevirt: None,
            loops: Default::default(),
            nodes: Vec::new(),
        };
        let now: Timestamp = "2026-12-01T12:00:00Z".parse().unwrap();
        let report = build_report(&inputs, now, "test");
        assert_eq!(report.migrations.len(), 2);
        let text = render_table(&report, Style { color: false }, "prod", now, &[], false);
        assert!(text.contains("WaitingForSync (receiver)"), "{text}");
        assert!(text.contains("dc1-node-2 → node-7"), "{text}");
        assert!(text.contains("Synchronizing (sender)"), "{text}");
        assert!(text.contains("node-1 → peer peer.example:9185"), "{text}");
        let recv_row = report.migrations.iter().find(|r| r.name == "recv").unwrap();
        assert!(
            row_line(&report, recv_row).contains("phase=WaitingForSync dc1-node-2→node-7"),
            "{}",
            row_line(&report, recv_row)
        );
    }
}
