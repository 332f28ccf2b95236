//! `vmctl status --watch`: a live view of the migrations in flight, fed by watches.
//!
//! The follower (`migration::follow`: VMIs, VMIMs, launcher pods in scope) keeps a local
//! copy of the cluster, decoded once per event and keyed by (namespace, name); Ctrl-C is its
//! to report, like for `migrate` and `abort`. Indexes name the
//! few objects that matter: VMIs with a non-final VMIM or an unfinished
//! `status.migrationState`, their VMIMs, and their launcher pods (label
//! `kubevirt.io/created-by`, `status.activePods`, `kubevirt.io/migrationJobUID`). Each redraw
//! runs `status::build_report` (the same rows `status` prints) on those alone, so it costs
//! O(migrations in flight), not O(VMIs).
//!
//! The first frame is drawn once the three initial lists (and the KubeVirt CR) are in. A
//! watch that drops resumes from its resourceVersion; 410 Gone re-lists; errors back off
//! and retry for minutes. On a terminal the table is redrawn in place (changes, and a 1 s
//! tick for elapsed times), with a "reconnecting…" line in the frame while a watch fails.
//! Off a terminal each change of a migration is one line on stdout; the start
//! ("watching …", when the first frame is ready) and "reconnecting…"/"reconnected" lines go
//! to stderr, so stdout stays one record per line for `-o json`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use serde_json::json;
use tokio::time::Instant;

use super::status::{
    MigrationRow, StatusInputs, StatusReport, build_report, phase_words, route, slim_pod,
    vmi_selector,
};
use crate::cli::StatusArgs;
use crate::cluster::watch::Reconnecting;
use crate::cluster::{Kind, Query};
use crate::context::{AnySource, Context};
use crate::error::{Error, Result, exit};
use crate::migration::follow::{FollowSpec, Follower, Key, Mirror, Update};
use crate::model::{KubeVirt, Pod, VirtualMachineInstance, VirtualMachineInstanceMigration};
use crate::policy::pods::{LAUNCHER_LABEL, LAUNCHER_VALUE};
use crate::render::follow as follow_text;
use crate::render::table::{TableBuilder, plain};
use crate::render::{OutputFormat, Style, Tone, stderr_line, write_stdout};
use crate::text as fmt;

/// A redraw on a terminal at most this often (changes in between are drawn together).
const TTY_REDRAW_EVERY: Duration = Duration::from_millis(100);

/// The inputs of `build_report` for the VMIs with a migration in flight (and only those):
/// O(migrations in flight), whatever the size of the cluster.
fn in_flight(mirror: &Mirror, names: &[String], kubevirt: Option<KubeVirt>) -> StatusInputs {
    let keys: BTreeSet<&Key> = mirror
        .active_vmims
        .keys()
        .chain(mirror.migrating_vmis.iter())
        .filter(|(_, name)| names.is_empty() || names.iter().any(|n| n == name))
        .collect();
    let mut inputs = StatusInputs {
        vmis: Vec::new(),
        vmims: Vec::new(),
        pods: Vec::new(),
        kubevirt,
    };
    let mut pod_keys: BTreeSet<Key> = BTreeSet::new();
    for key in keys {
        let Some(vmi) = mirror.vmis.get(key) else {
            continue;
        };
        let ns = &key.0;
        for name in mirror.active_vmims.get(key).into_iter().flatten() {
            if let Some(m) = mirror.vmims.get(&(ns.clone(), name.clone())) {
                if let Some(uid) = m.uid() {
                    let job = (ns.clone(), uid.to_string());
                    for pod in mirror.pods_by_job.get(&job).into_iter().flatten() {
                        pod_keys.insert((ns.clone(), pod.clone()));
                    }
                }
                inputs.vmims.push(VirtualMachineInstanceMigration::clone(m));
            }
        }
        if let Some(uid) = vmi.uid() {
            let creator = (ns.clone(), uid.to_string());
            for pod in mirror.pods_by_creator.get(&creator).into_iter().flatten() {
                pod_keys.insert((ns.clone(), pod.clone()));
            }
        }
        for pod_uid in vmi.status.active_pods.keys() {
            if let Some(k) = mirror.pods_by_uid.get(pod_uid) {
                pod_keys.insert(k.clone());
            }
        }
        inputs.vmis.push(VirtualMachineInstance::clone(vmi));
    }
    inputs.pods = pod_keys
        .iter()
        .filter_map(|k| mirror.pods.get(k).map(|p| Pod::clone(p)))
        .collect();
    inputs
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
        "{}/{} vmi={} phase={} {} mode={} progress: {}",
        m.namespace,
        m.name,
        m.vmi,
        m.phase,
        route(
            m.source_node.as_deref(),
            m.target_node.as_deref(),
            m.decentralized.as_ref()
        ),
        m.mode.as_deref().unwrap_or("-"),
        crate::text::printable(&progress_cell(report, m))
    )
}

fn render_table(
    report: &StatusReport,
    style: Style,
    scope: &str,
    now: Timestamp,
    notes: &[String],
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
            (phase_words(&m.phase, m.decentralized.as_ref()), Tone::Warn),
            plain(
                route(
                    m.source_node.as_deref(),
                    m.target_node.as_deref(),
                    m.decentralized.as_ref(),
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
            plain(m.live_pod.clone().unwrap_or_else(|| "-".into())),
            plain(crate::text::printable(&progress_cell(report, m))),
        ]);
    }
    out.push_str(&t.render());
    out
}

/// What the loop shows besides the report: the watches' failures, and how far along it is.
struct View {
    tty: bool,
    scope: String,
    reconnecting: BTreeMap<Kind, Reconnecting>,
    /// Off a terminal: the last line printed per migration, to print changes only.
    last_lines: BTreeMap<String, String>,
}

impl View {
    fn notes(&self) -> Vec<String> {
        self.reconnecting
            .values()
            .map(|r| format!("⚠ {}", crate::text::printable(&r.to_string())))
            .collect()
    }

    /// A watch's failure or recovery. Off a terminal one line on stderr; on one, it shows
    /// in the next frame (the caller redraws).
    fn watch_state(&mut self, update: &Update) {
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
    fn draw_waiting(&self, ready: &BTreeSet<Kind>) -> Result<()> {
        if !self.tty {
            return Ok(());
        }
        let waiting: Vec<&str> = [
            (Kind::VirtualMachineInstance, "VMIs"),
            (Kind::VirtualMachineInstanceMigration, "migrations"),
            (Kind::Pod, "launcher pods"),
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

    fn draw(
        &mut self,
        ctx: &Context,
        report: &StatusReport,
        mirror: &Mirror,
        now: Timestamp,
    ) -> Result<()> {
        if self.tty {
            return write_stdout(&format!(
                "\x1b[H\x1b[2J{}",
                render_table(report, ctx.style, &self.scope, now, &self.notes())
            ));
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
            if self.last_lines.get(&id) != Some(&signature) {
                self.last_lines.insert(id, signature);
                let line = match ctx.output {
                    OutputFormat::Json | OutputFormat::Yaml => json!({
                        "time": now.to_string(), "namespace": m.namespace, "migration": m.name,
                        "vmi": m.vmi, "phase": m.phase, "sourceNode": m.source_node,
                        "targetNode": m.target_node, "mode": m.mode, "livePod": m.live_pod,
                        "progress": progress_cell(report, m)})
                    .to_string(),
                    _ => format!("[{}] {}", now.strftime("%H:%M:%S"), row_line(report, m)),
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
            let line = match ctx.output {
                OutputFormat::Json | OutputFormat::Yaml => json!({
                    "time": now.to_string(), "namespace": ns, "migration": name,
                    "phase": phase, "ended": true})
                .to_string(),
                _ => format!("[{}] {id} ended: {phase}", now.strftime("%H:%M:%S")),
            };
            write_stdout(&format!("{line}\n"))?;
        }
        Ok(())
    }
}

pub async fn run(ctx: &Context, args: &StatusArgs) -> Result<i32> {
    let AnySource::Live(live) = &ctx.source else {
        return Err(Error::usage(
            "--watch follows a live cluster: it cannot watch a snapshot (--from)",
        ));
    };
    let labels = vmi_selector(args)?;
    let spec = FollowSpec::of(ctx.scope.query(), ctx.scope.query().with_labels(labels))
        .with_pods(
            ctx.scope
                .query()
                .with_label(&format!("{LAUNCHER_LABEL}={LAUNCHER_VALUE}"))?,
            Some(slim_pod),
        )
        // Redraws elapsed times; never interrupts a list (the watches keep their work in flight).
        .with_tick(Duration::from_secs(1));
    let mut follower = Follower::new(live, spec);
    // Read alongside the three lists (not before them), for the completion budgets.
    let all = Query::all();
    let kubevirt_list = crate::cluster::list_as::<KubeVirt>(&ctx.source, Kind::KubeVirt, &all);
    tokio::pin!(kubevirt_list);
    let mut kubevirt: Option<Option<KubeVirt>> = None;

    let mut view = View {
        tty: std::io::stdout().is_terminal() && !ctx.output.is_structured(),
        scope: match ctx.scope.namespace() {
            Some(ns) => format!("namespace {ns}"),
            None => "all namespaces".into(),
        },
        reconnecting: BTreeMap::new(),
        last_lines: BTreeMap::new(),
    };
    let mut ready: BTreeSet<Kind> = BTreeSet::new();
    let mut first_frame = true;
    // A frame is due (something changed); on a terminal drawn at most every TTY_REDRAW_EVERY.
    let mut dirty = true;
    let mut last_draw: Option<Instant> = None;
    view.draw_waiting(&ready)?;
    loop {
        let redraw_at = match last_draw {
            Some(t) if view.tty => t + TTY_REDRAW_EVERY,
            _ => Instant::now(),
        };
        let can_draw = dirty && ready.len() == 3 && kubevirt.is_some();
        tokio::select! {
            update = follower.next() => match update? {
                Update::Stop(_) => {
                    if view.tty { write_stdout("\n")?; }
                    return Ok(exit::OK);
                }
                Update::Tick => dirty = true,
                update => {
                    if let Update::Changed { kind, listed: true } = update {
                        ready.insert(kind);
                    }
                    view.watch_state(&update);
                    dirty = true;
                }
            },
            k = &mut kubevirt_list, if kubevirt.is_none() => {
                kubevirt = Some(k?.into_iter().next());
                dirty = true;
            }
            _ = tokio::time::sleep_until(redraw_at), if can_draw => {
                dirty = false;
                last_draw = Some(Instant::now());
                let now = Timestamp::now();
                let mirror = &follower.mirror;
                let inputs = in_flight(mirror, &args.names, kubevirt.clone().flatten());
                let report = build_report(&inputs, now, &ctx.source_description());
                if first_frame {
                    first_frame = false;
                    if !view.tty {
                        stderr_line(&follow_text::watching(
                            &now.strftime("%H:%M:%S").to_string(),
                            mirror.vmis.len(),
                            &view.scope,
                            report.migrations.len(),
                        ));
                    }
                }
                view.draw(ctx, &report, mirror, now)?;
            }
        }
        if ready.len() < 3 && dirty && view.tty {
            view.draw_waiting(&ready)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::watch::{Boxed, Change};

    fn vmi(name: &str, migrating: bool) -> Boxed<VirtualMachineInstance> {
        let mut v = json!({"metadata": {"name": name, "namespace": "prod", "uid": format!("uid-{name}")},
            "status": {"nodeName": "node-1", "phase": "Running",
                "activePods": {format!("pod-{name}"): "node-1"}}});
        if migrating {
            v["status"]["migrationState"] = json!({"sourceNode": "node-1", "targetNode": "node-2",
                "startTimestamp": "2026-12-01T00:00:00Z"});
        }
        serde_json::from_value(v).unwrap()
    }

    fn vmim(name: &str, vmi: &str, phase: &str) -> Boxed<VirtualMachineInstanceMigration> {
        serde_json::from_value(
            json!({"metadata": {"name": name, "namespace": "prod", "uid": format!("uid-{name}")},
            "spec": {"vmiName": vmi}, "status": {"phase": phase}}),
        )
        .unwrap()
    }

    fn pod(name: &str, uid: &str, labels: Value) -> Boxed<Pod> {
        serde_json::from_value(
            json!({"metadata": {"name": name, "namespace": "prod", "uid": uid,
            "labels": labels}}),
        )
        .unwrap()
    }

    fn names(inputs: &StatusInputs) -> (Vec<&str>, Vec<&str>, Vec<String>) {
        let mut pods: Vec<String> = inputs
            .pods
            .iter()
            .map(|p| p.metadata.name.clone().unwrap_or_default())
            .collect();
        pods.sort();
        (
            inputs.vmis.iter().map(|v| v.name()).collect(),
            inputs.vmims.iter().map(|m| m.name()).collect(),
            pods,
        )
    }

    use serde_json::Value;

    /// The report on slimmed pods is the report on whole pods (if `build_report` starts
    /// reading another pod field, `slim_pod` must keep it).
    #[test]
    fn slim_pods_make_the_same_report() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cluster");
        let found = crate::cluster::files::read_path(&dir).unwrap();
        let of = |kind: &str| -> Vec<Value> {
            found
                .objects
                .iter()
                .map(|o| o.value.clone())
                .filter(|v| v["kind"] == kind)
                .collect()
        };
        let pods: Vec<Pod> = of("Pod")
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap())
            .collect();
        assert!(
            pods.iter()
                .any(|p| p.spec.as_ref().is_some_and(|s| !s.containers.is_empty()))
        );
        let mut inputs = StatusInputs {
            vmis: of("VirtualMachineInstance")
                .into_iter()
                .map(|v| serde_json::from_value(v).unwrap())
                .collect(),
            vmims: of("VirtualMachineInstanceMigration")
                .into_iter()
                .map(|v| serde_json::from_value(v).unwrap())
                .collect(),
            pods,
            kubevirt: of("KubeVirt")
                .into_iter()
                .map(|v| serde_json::from_value(v).unwrap())
                .next(),
        };
        let now: Timestamp = "2026-11-29T03:00:00Z".parse().unwrap();
        let whole = serde_json::to_value(build_report(&inputs, now, "test")).unwrap();
        assert!(!whole["migrations"].as_array().unwrap().is_empty());
        inputs.pods.iter_mut().for_each(slim_pod);
        let slim = serde_json::to_value(build_report(&inputs, now, "test")).unwrap();
        assert_eq!(whole, slim);
    }

    #[test]
    fn a_decentralized_receiver_is_drawn_with_its_role_and_the_peer_source() {
        let mut m = Mirror::default();
        let v: Boxed<VirtualMachineInstance> = serde_json::from_value(json!({
            "metadata": {"name": "web-09", "namespace": "prod", "uid": "uid-web-09"},
            "status": {"nodeName": "node-7", "phase": "WaitingForSync",
                "migrationState": {"migrationUid": "uid-recv",
                    "sourceState": {"node": "dc1-node-2", "pod": "virt-launcher-web-09-src",
                                    "migrationUID": "peer"},
                    "targetState": {"node": "node-7", "pod": "virt-launcher-web-09-rx",
                                    "migrationUID": "uid-recv"}}}
        }))
        .unwrap();
        let recv: Boxed<VirtualMachineInstanceMigration> = serde_json::from_value(json!({
            "metadata": {"name": "recv", "namespace": "prod", "uid": "uid-recv"},
            "spec": {"vmiName": "web-09", "receive": {"migrationID": "mig-9"}},
            "status": {"phase": "WaitingForSync", "synchronizationAddresses": ["10.30.0.9:9185"]}
        }))
        .unwrap();
        let send: Boxed<VirtualMachineInstanceMigration> = serde_json::from_value(json!({
            "metadata": {"name": "send", "namespace": "prod", "uid": "uid-send"},
            "spec": {"vmiName": "db-01", "sendTo": {"migrationID": "mig-1", "connectURL": "peer.example:9185"}},
            "status": {"phase": "Synchronizing"}
        }))
        .unwrap();
        m.apply_vmis(Change::Listed(vec![v, vmi("db-01", false)]));
        m.apply_vmims(Change::Listed(vec![recv, send]));
        let inputs = in_flight(&m, &[], None);
        let now: Timestamp = "2026-12-01T12:00:00Z".parse().unwrap();
        let report = build_report(&inputs, now, "test");
        assert_eq!(report.migrations.len(), 2);
        let text = render_table(&report, Style { color: false }, "prod", now, &[]);
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

    #[test]
    fn only_vmis_in_flight_reach_the_report_with_their_pods() {
        let mut m = Mirror::default();
        m.apply_vmis(Change::Listed(
            (0..100).map(|i| vmi(&format!("vm-{i}"), i == 7)).collect(),
        ));
        m.apply_pods(Change::Listed(vec![
            pod(
                "launcher-vm-3",
                "pod-vm-3",
                json!({"kubevirt.io/created-by": "uid-vm-3"}),
            ),
            // Found through status.activePods only.
            pod("launcher-vm-7", "pod-vm-7", json!({})),
            pod(
                "launcher-vm-9",
                "pod-vm-9",
                json!({"kubevirt.io/created-by": "uid-vm-9"}),
            ),
        ]));
        m.apply_vmims(Change::Listed(vec![
            vmim("mig-a", "vm-3", "Running"),
            vmim("old", "vm-9", "Succeeded"),
        ]));
        // The target pod, labelled by the migration's UID.
        m.apply_pods(Change::Applied(pod(
            "target-vm-3",
            "pod-target",
            json!({"kubevirt.io/migrationJobUID": "uid-mig-a"}),
        )));
        let inputs = in_flight(&m, &[], None);
        assert_eq!(
            names(&inputs),
            (
                vec!["vm-3", "vm-7"],
                vec!["mig-a"],
                vec![
                    "launcher-vm-3".into(),
                    "launcher-vm-7".into(),
                    "target-vm-3".into()
                ]
            )
        );
        let report = build_report(&inputs, Timestamp::now(), "test");
        assert_eq!(report.migrations.len(), 1);

        // The migration ends, the other VMI's state completes: nothing left in flight.
        m.apply_vmims(Change::Applied(vmim("mig-a", "vm-3", "Succeeded")));
        let mut done = vmi("vm-7", true);
        if let Some(s) = done.0.status.migration_state.as_mut() {
            s.completed = true;
        }
        m.apply_vmis(Change::Applied(done));
        let inputs = in_flight(&m, &[], None);
        assert!(inputs.vmis.is_empty() && inputs.vmims.is_empty() && inputs.pods.is_empty());

        // A deleted pod leaves every index; a re-list replaces everything.
        m.apply_pods(Change::Deleted(pod("launcher-vm-3", "pod-vm-3", json!({}))));
        assert!(!m.pods_by_uid.contains_key("pod-vm-3"));
        assert!(
            !m.pods_by_creator
                .contains_key(&("prod".into(), "uid-vm-3".into()))
        );
        m.apply_vmims(Change::Listed(vec![vmim("mig-b", "vm-9", "Scheduling")]));
        let inputs = in_flight(&m, &["vm-9".into()], None);
        assert_eq!(
            names(&inputs),
            (vec!["vm-9"], vec!["mig-b"], vec!["launcher-vm-9".into()])
        );
        assert!(in_flight(&m, &["vm-3".into()], None).vmis.is_empty());
    }
}
