//! `vmctl status --watch`: a live view of the migrations in flight, fed by watches.
//!
//! Three watches (VMIs, VMIMs, launcher pods in scope) keep a local copy of the cluster;
//! every change re-derives the rows with `status::build_report` (the same rows `status`
//! prints). A watch that drops resumes from its resourceVersion; 410 Gone re-lists. On a
//! terminal the table is redrawn in place; off a terminal each change is one line.

use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::status::{MigrationRow, StatusInputs, StatusReport, build_report};
use crate::cli::StatusArgs;
use crate::cluster::selector::{LabelRequirement, LabelSelector};
use crate::cluster::{Kind, Query};
use crate::context::{AnySource, Context};
use crate::error::{Error, Result, exit};
use crate::migration::kubevirt::{Change, Watch};
use crate::policy::pods::{LAUNCHER_LABEL, LAUNCHER_VALUE};
use crate::render::table::{TableBuilder, plain};
use crate::render::{OutputFormat, Style, Tone, fmt, write_stdout};

/// The objects of one kind, as the watch last reported them.
#[derive(Default)]
struct Store {
    objects: BTreeMap<(String, String), Value>,
}

fn key(v: &Value) -> (String, String) {
    let s = |p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    (s("/metadata/namespace"), s("/metadata/name"))
}

impl Store {
    fn apply(&mut self, change: Change) {
        match change {
            Change::Applied(v) => {
                self.objects.insert(key(&v), v);
            }
            Change::Deleted(v) => {
                self.objects.remove(&key(&v));
            }
            Change::Listed(items) => {
                self.objects = items.into_iter().map(|v| (key(&v), v)).collect();
            }
        }
    }

    fn decoded<T: serde::de::DeserializeOwned>(&self) -> Vec<T> {
        self.objects
            .values()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .collect()
    }
}

fn progress_cell(report: &StatusReport, m: &MigrationRow) -> String {
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

fn row_line(report: &StatusReport, m: &MigrationRow) -> String {
    format!(
        "{}/{} vmi={} phase={} {}→{} mode={} progress: {}",
        m.namespace,
        m.name,
        m.vmi,
        m.phase,
        m.source_node.as_deref().unwrap_or("?"),
        m.target_node.as_deref().unwrap_or("?"),
        m.mode.as_deref().unwrap_or("-"),
        progress_cell(report, m)
    )
}

fn render_table(report: &StatusReport, style: Style, scope: &str, now: Timestamp) -> String {
    let mut out = format!(
        "Migrations in flight ({scope}) · {} · watching (Ctrl-C to stop)\n\n",
        now.strftime("%H:%M:%S")
    );
    if report.migrations.is_empty() {
        out.push_str("No migrations in flight.\n");
        return out;
    }
    let mut t = TableBuilder::new(
        style,
        &[
            "namespace",
            "migration",
            "vmi",
            "phase",
            "source → target",
            "mode",
            "live pod",
            "progress",
        ],
    );
    for m in &report.migrations {
        let mode_tone = if m.mode.as_deref() == Some("PostCopy") {
            Tone::Bad
        } else {
            Tone::Plain
        };
        t.row(vec![
            plain(m.namespace.clone()),
            plain(m.name.clone()),
            plain(m.vmi.clone()),
            (m.phase.clone(), Tone::Warn),
            plain(format!(
                "{} → {}",
                m.source_node.as_deref().unwrap_or("?"),
                m.target_node.as_deref().unwrap_or("?")
            )),
            (
                match m.mode.as_deref() {
                    Some("PostCopy") => "PostCopy (no return)".to_string(),
                    Some(mode) => mode.to_string(),
                    None => "-".into(),
                },
                mode_tone,
            ),
            plain(m.live_pod.clone().unwrap_or_else(|| "-".into())),
            plain(progress_cell(report, m)),
        ]);
    }
    out.push_str(&t.render());
    out
}

pub async fn run(ctx: &Context, args: &StatusArgs) -> Result<i32> {
    let AnySource::Live(live) = &ctx.source else {
        return Err(Error::usage(
            "--watch follows a live cluster: it cannot watch a snapshot (--from)",
        ));
    };
    let mut labels = match &args.selector {
        Some(s) => LabelSelector::parse(s)?,
        None => LabelSelector::default(),
    };
    if let Some(node) = &args.node {
        labels.requirements.push(LabelRequirement::Equals(
            "kubevirt.io/nodeName".into(),
            node.clone(),
        ));
    }
    let mut vmi_watch = Watch::new(
        live,
        Kind::VirtualMachineInstance,
        ctx.scope.query().with_labels(labels),
    );
    let mut vmim_watch = Watch::new(
        live,
        Kind::VirtualMachineInstanceMigration,
        ctx.scope.query(),
    );
    let mut pod_watch = Watch::new(
        live,
        Kind::Pod,
        ctx.scope
            .query()
            .with_label(&format!("{LAUNCHER_LABEL}={LAUNCHER_VALUE}"))?,
    );
    let kubevirt: Option<crate::model::KubeVirt> =
        crate::cluster::list_as(&ctx.source, Kind::KubeVirt, &Query::all())
            .await?
            .into_iter()
            .next();
    let (mut vmis, mut vmims, mut pods) = (Store::default(), Store::default(), Store::default());
    let tty = std::io::stdout().is_terminal() && !ctx.output.is_structured();
    let scope = match ctx.scope.namespace() {
        Some(ns) => format!("namespace {ns}"),
        None => "all namespaces".into(),
    };
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut last_lines: BTreeMap<String, String> = BTreeMap::new();
    let mut ready: BTreeSet<Kind> = BTreeSet::new();
    loop {
        tokio::select! {
            _ = &mut ctrl_c => {
                if tty { write_stdout("\n")?; }
                return Ok(exit::OK);
            }
            c = vmi_watch.next() => { vmis.apply(c?); ready.insert(Kind::VirtualMachineInstance); }
            c = vmim_watch.next() => { vmims.apply(c?); ready.insert(Kind::VirtualMachineInstanceMigration); }
            c = pod_watch.next() => { pods.apply(c?); ready.insert(Kind::Pod); }
            _ = tick.tick() => {}
        }
        if ready.len() < 3 {
            continue;
        }
        let mut inputs = StatusInputs {
            vmis: vmis.decoded(),
            vmims: vmims.decoded(),
            pods: pods.decoded(),
            kubevirt: kubevirt.clone(),
        };
        if !args.names.is_empty() {
            inputs
                .vmis
                .retain(|v| args.names.iter().any(|n| n == v.name()));
        }
        let now = Timestamp::now();
        let report = build_report(&inputs, now, &ctx.source_description());
        if tty {
            write_stdout(&format!(
                "\x1b[H\x1b[2J{}",
                render_table(&report, ctx.style, &scope, now)
            ))?;
            continue;
        }
        // Off a terminal: one line per change of a migration (and when it ends).
        let mut seen = BTreeSet::new();
        for m in &report.migrations {
            let id = format!("{}/{}", m.namespace, m.name);
            seen.insert(id.clone());
            let signature = format!(
                "{}|{:?}|{:?}|{:?}|{}",
                m.phase, m.target_node, m.mode, m.live_pod, m.waiting_for
            );
            if last_lines.get(&id) != Some(&signature) {
                last_lines.insert(id, signature);
                let line = match ctx.output {
                    OutputFormat::Json | OutputFormat::Yaml => json!({
                        "time": now.to_string(), "namespace": m.namespace, "migration": m.name,
                        "vmi": m.vmi, "phase": m.phase, "sourceNode": m.source_node,
                        "targetNode": m.target_node, "mode": m.mode, "livePod": m.live_pod,
                        "progress": progress_cell(&report, m)})
                    .to_string(),
                    _ => format!("[{}] {}", now.strftime("%H:%M:%S"), row_line(&report, m)),
                };
                write_stdout(&format!("{line}\n"))?;
            }
        }
        let ended: Vec<String> = last_lines
            .keys()
            .filter(|k| !seen.contains(*k))
            .cloned()
            .collect();
        for id in ended {
            last_lines.remove(&id);
            let (ns, name) = id.split_once('/').unwrap_or(("", id.as_str()));
            let phase = vmims
                .objects
                .get(&(ns.to_string(), name.to_string()))
                .and_then(|v| v.pointer("/status/phase").and_then(Value::as_str))
                .unwrap_or("gone (deleted)");
            let line = match ctx.output {
                OutputFormat::Json | OutputFormat::Yaml => json!({
                    "time": now.to_string(), "namespace": ns, "migration": name,
                    "phase": phase, "ended": true})
                .to_string(),
                _ => format!("[{}] {id} ended: {phase}", now.strftime("%H:%M:%S")),
            };
            write_stdout(&format!("{line}\n"))?;
        }
    }
}
