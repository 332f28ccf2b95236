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

use std::collections::BTreeSet;
use std::time::Duration;

use futures::FutureExt;
use k8s_openapi::jiff::Timestamp;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::cluster::Kind;
use crate::cluster::live::LiveSource;
use crate::context::Context;
use crate::error::{Error, Result, exit};
use crate::migration::follow::{
    Ending, FollowSpec, Follower, Key, Mirror, Observer, Update, follow,
};
use crate::model::{KubeVirt, Pod, VirtualMachineInstance, VirtualMachineInstanceMigration};
use crate::policy::status::{StatusInputs, build_report};
use crate::render::status_watch::View;

/// A redraw on a terminal at most this often (changes in between are drawn together).
const TTY_REDRAW_EVERY: Duration = Duration::from_millis(100);
/// Elapsed times are redrawn this often.
const REFRESH_EVERY: Duration = Duration::from_secs(1);

/// The inputs of `build_report` for the VMIs with a migration in flight (and only those):
/// O(migrations in flight), whatever the size of the cluster.
pub(crate) fn in_flight(
    mirror: &Mirror,
    names: &[String],
    kubevirt: Option<KubeVirt>,
) -> StatusInputs {
    // With a node cordoned, also the VMIs still on it or marked for evacuation (one pass
    // over the VMIs, only then): the drain's counts need them.
    // Every node `status` gives a row (cordoned, or evacuated: a VMI marked for it, an
    // evacuation VMIM not finished), so the watch counts what one-shot status counts: every
    // VMI on it, not only those migrating.
    let mut cordoned = mirror.cordoned();
    cordoned.extend(mirror.vmis.values().filter_map(|v| v.evacuation_node()));
    cordoned.extend(
        mirror
            .vmims
            .values()
            .filter(|m| !m.is_final())
            .filter_map(|m| m.evacuation_node()),
    );
    let on_cordoned: Vec<&Key> = if cordoned.is_empty() {
        Vec::new()
    } else {
        // …and those an evacuation moved off it (the drain's MOVED).
        let moved: BTreeSet<(&str, &str)> = mirror
            .vmims
            .values()
            .filter(|m| m.evacuation_node().is_some_and(|n| cordoned.contains(n)))
            .map(|m| (m.namespace(), m.spec.vmi_name.as_str()))
            .collect();
        mirror
            .vmis
            .iter()
            .filter(|(k, v)| {
                v.evacuation_node().is_some()
                    || v.status
                        .node_name
                        .as_deref()
                        .is_some_and(|n| cordoned.contains(n))
                    || moved.contains(&(k.0.as_str(), k.1.as_str()))
            })
            .map(|(k, _)| k)
            .collect()
    };
    let keys: BTreeSet<&Key> = mirror
        .active_vmims
        .keys()
        .chain(mirror.migrating_vmis.iter())
        .chain(on_cordoned)
        .filter(|(_, name)| names.is_empty() || names.iter().any(|n| n == name))
        .collect();
    let mut inputs = StatusInputs {
        vmis: Vec::new(),
        vmims: Vec::new(),
        pods: Vec::new(),
        kubevirt,
        loops: Default::default(),
        nodes: crate::operate::top::node_facts(mirror),
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
        // Its finished migrations too, so an evacuation that keeps failing is seen as a loop
        // (triage::loops counts them; status shows no row for a finished one).
        for name in mirror.vmims_by_vmi.get(key).into_iter().flatten() {
            if let Some(m) = mirror.vmims.get(&(ns.clone(), name.clone()))
                && m.is_final()
            {
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

/// The watch's observer: what is listed so far, the KubeVirt CR (read alongside the three
/// lists), and when a frame is due.
struct Watching<'a> {
    ctx: &'a Context,
    names: &'a [String],
    loops: crate::triage::LoopThresholds,
    view: View,
    ready: BTreeSet<Kind>,
    /// The kinds listed before the first frame (Nodes too when watched).
    kinds: usize,
    kubevirt_list: Option<JoinHandle<Result<Vec<KubeVirt>>>>,
    kubevirt: Option<Option<KubeVirt>>,
    /// A frame is due (something changed).
    dirty: bool,
    last_draw: Option<Instant>,
    first_frame: bool,
    /// Said once that Nodes could not be read.
    nodes_note: bool,
}

impl Watching<'_> {
    /// The KubeVirt CR, once its read is done (polled, never awaited: the watches go on).
    fn poll_kubevirt(&mut self) -> Result<()> {
        let Some(handle) = self.kubevirt_list.as_mut() else {
            return Ok(());
        };
        if let Some(done) = handle.now_or_never() {
            self.kubevirt_list = None;
            let list =
                done.map_err(|e| Error::Internal(format!("reading the KubeVirt CR: {e}")))?;
            self.kubevirt = Some(list?.into_iter().next());
            self.dirty = true;
        }
        Ok(())
    }
}

impl Observer for Watching<'_> {
    fn update(&mut self, update: &Update) {
        if let Update::Changed { kind, listed: true } = update {
            self.ready.insert(*kind);
        }
        self.view.watch_state(update);
        self.dirty = true;
    }

    async fn tick(&mut self) -> Result<()> {
        if self.last_draw.is_none_or(|t| t.elapsed() >= REFRESH_EVERY) {
            self.dirty = true;
        }
        Ok(())
    }

    async fn settle(&mut self, mirror: &Mirror) -> Result<bool> {
        self.poll_kubevirt()?;
        if let Some(note) = mirror
            .nodes_unreadable
            .as_ref()
            .filter(|_| !self.nodes_note)
        {
            self.nodes_note = true;
            self.ctx.warn(note.clone());
        }
        let ready = self.ready.len() == self.kinds;
        if !ready {
            if self.dirty && self.view.tty {
                self.view.draw_waiting(&self.ready)?;
            }
            self.dirty = false;
            return Ok(false);
        }
        let throttled = self.view.tty
            && self
                .last_draw
                .is_some_and(|t| t.elapsed() < TTY_REDRAW_EVERY);
        if !self.dirty || throttled {
            return Ok(false);
        }
        let Some(kubevirt) = self.kubevirt.clone() else {
            return Ok(false);
        };
        self.dirty = false;
        self.last_draw = Some(Instant::now());
        let now = Timestamp::now();
        let mut inputs = in_flight(mirror, self.names, kubevirt);
        inputs.loops = self.loops;
        let report = build_report(&inputs, now, &self.ctx.source_description());
        if self.first_frame {
            self.first_frame = false;
            self.view
                .started(now, mirror.vmis.len(), report.migrations.len());
        }
        self.view
            .draw(self.ctx.style, self.ctx.output, &report, mirror, now)?;
        Ok(false)
    }
}

/// Follows the migrations in scope until Ctrl-C; `spec` says what to watch, `names` which
/// VMIs (all when empty).
pub async fn run(
    ctx: &'static Context,
    live: &LiveSource,
    spec: FollowSpec,
    names: &[String],
    tty: bool,
    loops: crate::triage::LoopThresholds,
) -> Result<i32> {
    let scope = match ctx.scope.namespace() {
        Some(ns) => format!("namespace {ns}"),
        None => "all namespaces".into(),
    };
    // The tick: redraws elapsed times, and a throttled frame on a terminal. It never
    // interrupts a list (the watches keep their work in flight).
    let spec = spec.with_tick(if tty { TTY_REDRAW_EVERY } else { REFRESH_EVERY });
    let kinds = if spec.nodes { 4 } else { 3 };
    let mut follower = Follower::new(live, spec);
    // Read alongside the three lists (not before them), for the completion budgets.
    let kubevirt_list = tokio::spawn(async move {
        let all = crate::cluster::Query::all();
        crate::cluster::list_as::<KubeVirt>(&ctx.source, Kind::KubeVirt, &all).await
    });
    let mut watching = Watching {
        ctx,
        names,
        loops,
        view: View::new(tty, scope),
        ready: BTreeSet::new(),
        kinds,
        kubevirt_list: Some(kubevirt_list),
        kubevirt: None,
        dirty: true,
        last_draw: None,
        first_frame: true,
        nodes_note: false,
    };
    match follow(&mut follower, &mut watching).await? {
        Ending::Stopped(_) | Ending::Done => {
            watching.view.stopped()?;
            Ok(exit::OK)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::watch::{Boxed, Change};
    use serde_json::json;

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
