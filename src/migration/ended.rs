//! Which migrations ended, read from the follower's [`Mirror`], and the evidence `explain`
//! would diagnose each from: what `vmctl record` journals (issue 28). Pure: plain data in,
//! plain data out; the caller passes the clock.
//!
//! - [`Tracker`] knows the VMIMs in flight as last seen, so a VMIM deleted before its end (an
//!   abort) is still known after the mirror forgot it, and the UIDs already handled, so a
//!   migration is offered once. After a change it looks at the migrations in flight only
//!   (O(in flight)); a full pass ([`Tracker::scan`]) takes every final VMIM not handled yet
//!   (the first list: migrations that ended while the recorder was down).
//! - [`ended_in_replay`] reads the same from a replay of the VMIM watch's history (the
//!   migrations that ended and were deleted while the recorder was down).
//! - [`evidence_for`] builds the `Evidence` from what the mirror holds (the VMIM, its VMI with
//!   `migrationState`, the VMI's other VMIMs, its launcher pods, the KubeVirt CR); the rest of
//!   what `explain` reads (the events about the objects involved, [`event_subjects`] and
//!   [`pods_named_by_events`]; the MigrationPolicies, the Namespace, its PDBs) the recorder
//!   reads around it and [`complete`] adds: one diagnosis everywhere.

use std::collections::{BTreeSet, HashMap, HashSet};

use k8s_openapi::jiff::Timestamp;

use super::follow::{Key, Mirror, key_of};
use crate::model::{
    Event, KubeVirt, MigrationPolicy, Namespace, Pod, PodDisruptionBudget, Time,
    VirtualMachineInstanceMigration,
};
use crate::triage::{Diagnosis, Evidence, LoopThresholds, Outcome, Unread};

/// A migration that ended: its last version (final, or deleted before it was).
#[derive(Debug, Clone)]
pub struct Ended {
    pub key: Key,
    pub vmim: VirtualMachineInstanceMigration,
    /// Deleted before it reached a final phase: an abort.
    pub deleted: bool,
}

impl Ended {
    pub fn uid(&self) -> &str {
        self.vmim.uid().unwrap_or_default()
    }
}

/// Which migrations are recorded: those of VMIs in the mirror (the VMI query carries the
/// label selector) when the recorder selects, and of the named VMIs when names are given.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub names: Vec<String>,
    /// A label selector (or `--node`) narrows the VMIs: a migration counts only while its
    /// VMI is in the mirror.
    pub selective: bool,
}

impl Scope {
    pub fn takes(&self, mirror: &Mirror, vmim: &VirtualMachineInstanceMigration) -> bool {
        let vmi = &vmim.spec.vmi_name;
        if !self.names.is_empty() && !self.names.iter().any(|n| n == vmi) {
            return false;
        }
        !self.selective || {
            let ns = vmim.metadata.namespace.clone().unwrap_or_default();
            mirror.vmis.contains_key(&(ns, vmi.clone()))
        }
    }
}

/// What the recorder knows between updates; see the module documentation.
#[derive(Debug, Default)]
pub struct Tracker {
    pub scope: Scope,
    /// Non-final VMIMs in scope, as last seen.
    inflight: HashMap<Key, Box<VirtualMachineInstanceMigration>>,
    /// UIDs already offered (recorded, queued, or found in the journal).
    handled: HashSet<String>,
    /// The highest resourceVersion of a VMIM seen (a safe point to replay from: every VMIM
    /// event up to it has been applied); None until one was seen.
    newest_version: Option<String>,
}

fn rv(vmim: &VirtualMachineInstanceMigration) -> Option<&str> {
    vmim.metadata.resource_version.as_deref()
}

impl Tracker {
    pub fn new(scope: Scope) -> Tracker {
        Tracker {
            scope,
            ..Tracker::default()
        }
    }

    /// Marks a UID handled (offered by a replay, or found in the journal).
    pub fn handle(&mut self, uid: &str) -> bool {
        self.handled.insert(uid.to_string())
    }

    pub fn handled(&self, uid: &str) -> bool {
        self.handled.contains(uid)
    }

    /// The migrations in flight it knows.
    pub fn in_flight(&self) -> usize {
        self.inflight.len()
    }

    /// The resourceVersion to replay from after a restart.
    pub fn newest_version(&self) -> Option<&str> {
        self.newest_version.as_deref()
    }

    /// Remembers `version` if it is newer (resourceVersions compare as numbers where they
    /// are numbers, as every API server's are; an opaque one replaces the last).
    pub fn saw_version(&mut self, version: Option<&str>) {
        self.newest_version = newest(self.newest_version.take(), version);
    }

    /// Takes a migration that ended, once.
    fn offer(
        &mut self,
        out: &mut Vec<Ended>,
        key: Key,
        vmim: VirtualMachineInstanceMigration,
        deleted: bool,
    ) {
        let Some(uid) = vmim.uid() else { return };
        if self.handled.insert(uid.to_string()) {
            out.push(Ended { key, vmim, deleted });
        }
    }

    /// After a VMIM change (not a list): the migrations in flight that ended (final now, or
    /// gone from the mirror: deleted before their end), and the new ones remembered. Costs
    /// O(migrations in flight).
    pub fn changed(&mut self, mirror: &Mirror) -> Vec<Ended> {
        let mut out = Vec::new();
        // New or changed migrations in flight: remember their last version.
        for ((ns, _vmi), names) in &mirror.active_vmims {
            for name in names {
                let key = (ns.clone(), name.clone());
                let Some(m) = mirror.vmims.get(&key) else {
                    continue;
                };
                if !self.scope.takes(mirror, m) {
                    continue;
                }
                let fresh = self
                    .inflight
                    .get(&key)
                    .is_none_or(|old| rv(old) != rv(m) || old.uid() != m.uid());
                if fresh {
                    self.newest_version = newest(self.newest_version.take(), rv(m));
                    self.inflight.insert(key, m.clone());
                }
            }
        }
        // Those that ended.
        let keys: Vec<Key> = self.inflight.keys().cloned().collect();
        for key in keys {
            let Some(last) = self.inflight.get(&key) else {
                continue;
            };
            match mirror.vmims.get(&key) {
                Some(now) if now.uid() == last.uid() && !now.is_final() => {}
                Some(now) if now.uid() == last.uid() => {
                    let now = VirtualMachineInstanceMigration::clone(now);
                    self.inflight.remove(&key);
                    self.saw_version(rv(&now));
                    self.offer(&mut out, key, now, false);
                }
                // Gone (or replaced by a new VMIM of the same name): deleted before its end.
                _ => {
                    if let Some(last) = self.inflight.remove(&key) {
                        self.offer(&mut out, key, *last, true);
                    }
                }
            }
        }
        out
    }

    /// Every final VMIM in scope not offered yet, and the migrations in flight as
    /// [`Tracker::changed`] sees them (after a list or re-list, and now and then to catch a
    /// VMIM first seen final). Forgets the UIDs of VMIMs no longer in the mirror (they
    /// cannot come back but through a replay, which asks the journal). O(VMIMs).
    pub fn scan(&mut self, mirror: &Mirror) -> Vec<Ended> {
        let mut out = self.changed(mirror);
        let mut present: HashSet<&str> = HashSet::with_capacity(mirror.vmims.len());
        let mut finals: Vec<(&Key, &VirtualMachineInstanceMigration)> = Vec::new();
        for (key, m) in &mirror.vmims {
            if let Some(uid) = m.uid() {
                present.insert(uid);
            }
            self.newest_version = newest(self.newest_version.take(), rv(m));
            if m.is_final()
                && m.uid().is_some_and(|u| !self.handled.contains(u))
                && self.scope.takes(mirror, m)
            {
                finals.push((key, m));
            }
        }
        // Oldest first: the journal's lines then read in the order things happened.
        finals.sort_by(|a, b| {
            (&a.1.metadata.creation_timestamp, a.0).cmp(&(&b.1.metadata.creation_timestamp, b.0))
        });
        let finals: Vec<(Key, VirtualMachineInstanceMigration)> = finals
            .into_iter()
            .map(|(k, m)| (k.clone(), m.clone()))
            .collect();
        let inflight_uids: HashSet<String> = self
            .inflight
            .values()
            .filter_map(|m| m.uid().map(str::to_string))
            .collect();
        self.handled
            .retain(|u| present.contains(u.as_str()) || inflight_uids.contains(u));
        for (key, m) in finals {
            self.offer(&mut out, key, m, false);
        }
        out
    }
}

fn newest(old: Option<String>, new: Option<&str>) -> Option<String> {
    let Some(new) = new.filter(|v| !v.is_empty()) else {
        return old;
    };
    match old.as_deref().map(str::parse::<u64>) {
        Some(Ok(o)) if new.parse::<u64>().is_ok_and(|n| n <= o) => old,
        _ => Some(new.to_string()),
    }
}

/// The migrations a replay of the VMIM watch shows ending (reaching a final phase, or deleted
/// before one), each in its last version, in the order they first appeared. `events` are in
/// order; true: a deletion.
pub fn ended_in_replay(events: &[(bool, VirtualMachineInstanceMigration)]) -> Vec<Ended> {
    let mut order: Vec<String> = Vec::new();
    let mut last: HashMap<String, (bool, &VirtualMachineInstanceMigration)> = HashMap::new();
    for (deleted, m) in events {
        let Some(uid) = m.uid() else { continue };
        if !last.contains_key(uid) {
            order.push(uid.to_string());
        }
        let was_deleted = last.get(uid).is_some_and(|(d, _)| *d);
        last.insert(uid.to_string(), (*deleted || was_deleted, m));
    }
    order
        .into_iter()
        .filter_map(|uid| {
            let (deleted, m) = last.remove(&uid)?;
            (deleted || m.is_final()).then(|| Ended {
                key: key_of(&m.metadata),
                vmim: m.clone(),
                deleted: deleted && !m.is_final(),
            })
        })
        .collect()
}

/// Whether the VMI has caught up with the migration's end (its `migrationState` for this
/// migration says completed or failed, or belongs to another migration, or the VMI is gone):
/// the evidence is complete. Watches of two kinds arrive in no fixed order, so the recorder
/// waits a little for this before it diagnoses.
pub fn vmi_caught_up(mirror: &Mirror, ended: &Ended) -> bool {
    if ended.deleted {
        return true;
    }
    let vmi_key = (ended.key.0.clone(), ended.vmim.spec.vmi_name.clone());
    let Some(vmi) = mirror.vmis.get(&vmi_key) else {
        return true;
    };
    match &vmi.status.migration_state {
        Some(s) if s.migration_uid.as_deref() == ended.vmim.uid() => s.completed || s.failed,
        _ => true,
    }
}

/// The diagnosis of a migration whose VMIM vanished before it reached a final phase (deleted
/// with no finalizer left to hold it, or the watch saw only the deletion): explain, on the
/// object as last seen, calls it still under way; it is over, and like `migrate`'s follower
/// the recorder counts it aborted, saying what it saw last.
pub fn settle_vanished(diagnosis: &mut Diagnosis, ended: &Ended) {
    let over = matches!(
        diagnosis.outcome,
        Outcome::Succeeded | Outcome::Failed | Outcome::Aborted
    );
    if !ended.deleted || over {
        return;
    }
    diagnosis.outcome = Outcome::Aborted;
    diagnosis.plane = crate::triage::Plane::None;
    // What no object says is said as unknown: the recorder's clock is not the cluster's.
    let unknown = if ended.vmim.metadata.deletion_timestamp.is_none() {
        "No object says when it was deleted or when it ended: the deletion time shown is when the recorder saw it gone, its end is unknown."
    } else {
        "No object says when it ended: its end is unknown."
    };
    diagnosis.summary = format!(
        "The migration's VMIM was deleted before it ended (an abort request), last seen in phase {}: the guest stays where it ran unless the migration had completed. {unknown} {}",
        ended.vmim.phase(),
        diagnosis.summary
    );
}

/// What the recorder reads beside its mirror for a migration that ended, as `explain` reads
/// it (`evidence::gather`): the events about the objects involved, the MigrationPolicies,
/// the Namespace and its PodDisruptionBudgets, and what could not be read (a 403, a 5xx).
#[derive(Debug, Clone, Default)]
pub struct Around {
    pub events: Vec<Event>,
    pub policies: Vec<MigrationPolicy>,
    pub namespace: Option<Namespace>,
    pub pdbs: Vec<PodDisruptionBudget>,
    pub unread: Vec<Unread>,
}

/// The objects whose events explain's diagnosis of `evidence` reads (`kind`, `name`), before
/// the VMIM's own events are known: the VMIM, the VMI, the launcher pods the evidence holds
/// and those its migrationState names. The target pods the VMIM's events name are read after
/// those ([`pods_named_by_events`]): a target pod that could not be scheduled is deleted,
/// its events are not.
pub fn event_subjects(evidence: &Evidence) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    if let Some(m) = &evidence.migration {
        out.push(("VirtualMachineInstanceMigration", m.name().to_string()));
    }
    if !evidence.vmi_name.is_empty() {
        out.push(("VirtualMachineInstance", evidence.vmi_name.clone()));
    }
    let mut pods: BTreeSet<String> = evidence
        .pods
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    let states = [
        evidence
            .vmi
            .as_ref()
            .and_then(|v| v.status.migration_state.as_ref()),
        evidence
            .migration
            .as_ref()
            .and_then(|m| m.status.migration_state.as_ref()),
    ];
    for st in states.into_iter().flatten() {
        pods.extend(st.source_pod.clone());
        pods.extend(st.target_pod.clone());
    }
    out.extend(
        pods.into_iter()
            .filter(|p| !p.is_empty())
            .take(MAX_PODS_READ)
            .map(|p| ("Pod", p)),
    );
    out
}

/// The most pods whose events the recorder reads for one migration (its source, its target,
/// the targets of earlier attempts): the reads per migration are bounded.
pub const MAX_PODS_READ: usize = 8;

/// The target pods the VMIM's `events` name that [`event_subjects`] did not list.
pub fn pods_named_by_events(
    evidence: &Evidence,
    events: &[Event],
    read: &[(&'static str, String)],
) -> Vec<String> {
    let Some(m) = &evidence.migration else {
        return Vec::new();
    };
    let already = read.iter().filter(|(k, _)| *k == "Pod").count();
    let mut out: Vec<String> = Vec::new();
    for name in crate::triage::target_pods_named(events, m) {
        if !read.iter().any(|(k, n)| *k == "Pod" && *n == name) && !out.contains(&name) {
            out.push(name);
        }
    }
    out.truncate(MAX_PODS_READ.saturating_sub(already).max(1));
    out
}

/// Completes the evidence [`evidence_for`] made from the mirror with what was read around it.
pub fn complete(evidence: &mut Evidence, around: Around) {
    let mut events = around.events;
    events.sort_by(|a, b| {
        (a.metadata.namespace.as_deref(), a.metadata.name.as_deref())
            .cmp(&(b.metadata.namespace.as_deref(), b.metadata.name.as_deref()))
    });
    events.dedup_by(|a, b| {
        a.metadata.namespace == b.metadata.namespace && a.metadata.name == b.metadata.name
    });
    evidence.events = events;
    evidence.policies = around.policies;
    evidence.namespace = around.namespace;
    evidence.pdbs = around.pdbs;
    evidence.unread = around.unread;
}

/// The evidence of a migration that ended, from the mirror: the VMIM as it ended (a deletion
/// before the end carries its deletion time: `now` when the watch did not show one), its VMI
/// as it is, every VMIM of the VMI the mirror holds, the VMI's launcher pods (by
/// `kubevirt.io/created-by`, `status.activePods`, and the migration's target pod by
/// `kubevirt.io/migrationJobUID`), and the KubeVirt CR.
pub fn evidence_for(
    mirror: &Mirror,
    ended: &Ended,
    kubevirt: Option<&KubeVirt>,
    now: Timestamp,
    loops: LoopThresholds,
) -> Evidence {
    let ns = ended.key.0.clone();
    let vmi_name = ended.vmim.spec.vmi_name.clone();
    let vmi_key = (ns.clone(), vmi_name.clone());
    let mut vmim = ended.vmim.clone();
    if ended.deleted && vmim.metadata.deletion_timestamp.is_none() {
        vmim.metadata.deletion_timestamp = Some(Time(now));
    }
    let vmi = mirror.vmis.get(&vmi_key).map(|v| (**v).clone());
    let mut migrations: Vec<VirtualMachineInstanceMigration> = mirror
        .vmims_by_vmi
        .get(&vmi_key)
        .into_iter()
        .flatten()
        .filter_map(|name| mirror.vmims.get(&(ns.clone(), name.clone())))
        .filter(|m| m.uid() != vmim.uid())
        .map(|m| (**m).clone())
        .collect();
    migrations.push(vmim.clone());
    migrations.sort_by(|a, b| {
        (&a.metadata.creation_timestamp, a.name()).cmp(&(&b.metadata.creation_timestamp, b.name()))
    });
    let mut pod_keys: BTreeSet<Key> = BTreeSet::new();
    if let Some(uid) = vmi.as_ref().and_then(|v| v.uid()) {
        for pod in mirror
            .pods_by_creator
            .get(&(ns.clone(), uid.to_string()))
            .into_iter()
            .flatten()
        {
            pod_keys.insert((ns.clone(), pod.clone()));
        }
    }
    if let Some(uid) = vmim.uid() {
        for pod in mirror
            .pods_by_job
            .get(&(ns.clone(), uid.to_string()))
            .into_iter()
            .flatten()
        {
            pod_keys.insert((ns.clone(), pod.clone()));
        }
    }
    if let Some(v) = &vmi {
        for pod_uid in v.status.active_pods.keys() {
            if let Some(k) = mirror.pods_by_uid.get(pod_uid) {
                pod_keys.insert(k.clone());
            }
        }
    }
    let pods: Vec<Pod> = pod_keys
        .iter()
        .filter_map(|k| mirror.pods.get(k).map(|p| (**p).clone()))
        .collect();
    Evidence {
        now,
        migration: Some(vmim),
        vmi_namespace: ns,
        vmi_name,
        vmi,
        migrations,
        pods,
        events: Vec::new(),
        kubevirt: kubevirt.cloned(),
        policies: Vec::new(),
        namespace: None,
        load: None,
        unread: Vec::new(),
        pdbs: Vec::new(),
        loops,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::watch::{Boxed, Change};
    use crate::model::VirtualMachineInstance;
    use crate::triage::diagnose;
    use serde_json::{Value, json};

    fn vmim(name: &str, vmi: &str, phase: &str, rv: u64) -> VirtualMachineInstanceMigration {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "prod",
            "uid": format!("uid-{name}"), "resourceVersion": rv.to_string(),
            "creationTimestamp": "2026-12-01T00:00:00Z"},
            "spec": {"vmiName": vmi},
            "status": {"phase": phase, "migrationState": {"sourceNode": "node-1",
                "targetNode": "node-2", "migrationUid": format!("uid-{name}"),
                "startTimestamp": "2026-12-01T00:00:05Z"}}}))
        .unwrap()
    }

    fn boxed<T>(t: T) -> Boxed<T> {
        Boxed(Box::new(t))
    }

    fn vmi(name: &str, labels: Value, state: Value) -> VirtualMachineInstance {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "prod",
            "uid": format!("uid-{name}"), "labels": labels},
            "status": {"nodeName": "node-1", "phase": "Running",
                "activePods": {format!("pod-{name}"): "node-1"}, "migrationState": state}}))
        .unwrap()
    }

    fn pod(name: &str, uid: &str, labels: Value) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "prod",
            "uid": uid, "labels": labels}, "status": {"phase": "Running"}}))
        .unwrap()
    }

    fn names(ended: &[Ended]) -> Vec<(&str, bool)> {
        ended.iter().map(|e| (e.vmim.name(), e.deleted)).collect()
    }

    fn mirror() -> Mirror {
        let mut m = Mirror::default();
        m.apply_vmis(Change::Listed(vec![
            boxed(vmi("db", json!({"app": "db"}), Value::Null)),
            boxed(vmi("web", json!({"app": "web"}), Value::Null)),
        ]));
        m
    }

    #[test]
    fn each_end_is_offered_once_and_a_deletion_before_the_end_is_an_abort() {
        let mut m = mirror();
        // The first list: one final (ended while the recorder was down), one in flight.
        m.apply_vmims(Change::Listed(vec![
            boxed(vmim("old", "db", "Succeeded", 10)),
            boxed(vmim("a", "db", "Running", 11)),
        ]));
        let mut t = Tracker::new(Scope::default());
        assert_eq!(names(&t.scan(&m)), [("old", false)]);
        assert_eq!((t.in_flight(), t.newest_version()), (1, Some("11")));
        // Nothing new: nothing offered, by either pass.
        assert!(t.changed(&m).is_empty() && t.scan(&m).is_empty());

        // a ends; b starts and is deleted before its end.
        m.apply_vmims(Change::Applied(boxed(vmim("b", "web", "Scheduling", 12))));
        assert!(t.changed(&m).is_empty());
        m.apply_vmims(Change::Applied(boxed(vmim("a", "db", "Failed", 13))));
        let mut b = vmim("b", "web", "Running", 14);
        b.metadata.deletion_timestamp = None;
        m.apply_vmims(Change::Applied(boxed(b.clone())));
        m.apply_vmims(Change::Deleted(boxed(b)));
        let ended = t.changed(&m);
        let mut got = names(&ended);
        got.sort();
        assert_eq!(got, [("a", false), ("b", true)]);
        // b's last version (14) went with its deletion, unseen: the bookmark stays at what
        // was seen (13), so a replay from it shows the deletion again (never skips it).
        assert_eq!(t.newest_version(), Some("13"));
        // Offered once: a full pass and a re-list of the same objects offer nothing again.
        assert!(t.scan(&m).is_empty() && t.changed(&m).is_empty());

        // The aborted one, diagnosed from its evidence: aborted, its deletion stamped.
        let b = ended.iter().find(|e| e.deleted).unwrap();
        let now: Timestamp = "2026-12-01T00:01:00Z".parse().unwrap();
        let ev = evidence_for(&m, b, None, now, LoopThresholds::default());
        assert!(
            ev.migration
                .as_ref()
                .unwrap()
                .metadata
                .deletion_timestamp
                .is_some()
        );
        let mut d = diagnose(&ev);
        assert_eq!(
            d.outcome,
            Outcome::InProgress,
            "explain: an abort under way"
        );
        settle_vanished(&mut d, b);
        assert_eq!(d.outcome, Outcome::Aborted);
        assert!(
            d.summary
                .contains("when the recorder saw it gone, its end is unknown"),
            "{}",
            d.summary
        );
        assert!(
            d.summary.contains("last seen in phase Scheduling"),
            "{}",
            d.summary
        );
        let a = ended.iter().find(|e| !e.deleted).unwrap();
        let mut d = diagnose(&evidence_for(&m, a, None, now, LoopThresholds::default()));
        assert_eq!(d.outcome, Outcome::Failed);
        settle_vanished(&mut d, a);
        assert_eq!(
            d.outcome,
            Outcome::Failed,
            "a final one is left as diagnosed"
        );
    }

    #[test]
    fn a_selector_or_names_narrow_what_is_offered() {
        let mut m = Mirror::default();
        m.apply_vmis(Change::Listed(vec![boxed(vmi(
            "db",
            json!({}),
            Value::Null,
        ))]));
        m.apply_vmims(Change::Listed(vec![
            boxed(vmim("x", "db", "Succeeded", 1)),
            boxed(vmim("y", "web", "Succeeded", 2)),
        ]));
        let selective = Scope {
            names: vec![],
            selective: true,
        };
        let got = Tracker::new(selective).scan(&m);
        assert_eq!(names(&got), [("x", false)]);
        let named = Scope {
            names: vec!["web".into()],
            selective: false,
        };
        let got = Tracker::new(named).scan(&m);
        assert_eq!(names(&got), [("y", false)]);
        let got = Tracker::new(Scope::default()).scan(&m);
        let mut all = names(&got);
        all.sort();
        assert_eq!(all, [("x", false), ("y", false)]);
    }

    #[test]
    fn a_replay_yields_the_migrations_that_ended_in_their_last_version() {
        let mut gone = vmim("gone", "db", "Succeeded", 5);
        gone.metadata.resource_version = Some("6".into());
        let mut aborted = vmim("aborted", "web", "Running", 7);
        aborted.metadata.deletion_timestamp = Some(Time("2026-12-01T00:00:30Z".parse().unwrap()));
        let events = vec![
            (false, vmim("gone", "db", "Running", 3)),
            (false, vmim("running", "web", "Running", 4)),
            (false, vmim("gone", "db", "Succeeded", 5)),
            (true, gone),
            (false, vmim("aborted", "web", "Scheduling", 6)),
            (true, aborted),
        ];
        let ended = ended_in_replay(&events);
        assert_eq!(names(&ended), [("gone", false), ("aborted", true)]);
        assert_eq!(
            ended[0].vmim.metadata.resource_version.as_deref(),
            Some("6")
        );
        assert!(ended_in_replay(&[]).is_empty());
    }

    #[test]
    fn the_evidence_holds_the_vmi_its_migrations_and_its_launcher_pods_only() {
        let mut m = Mirror::default();
        let state = json!({"sourceNode": "node-1", "targetNode": "node-2",
            "migrationUid": "uid-a", "completed": false});
        m.apply_vmis(Change::Listed(vec![boxed(vmi("db", json!({}), state))]));
        m.apply_vmims(Change::Listed(vec![
            boxed(vmim("earlier", "db", "Failed", 1)),
            boxed(vmim("a", "db", "Succeeded", 2)),
            boxed(vmim("other", "web", "Succeeded", 3)),
        ]));
        m.apply_pods(Change::Listed(vec![
            boxed(pod(
                "launcher-db",
                "pod-db",
                json!({"kubevirt.io/created-by": "uid-db"}),
            )),
            boxed(pod(
                "target-db",
                "pod-t",
                json!({"kubevirt.io/migrationJobUID": "uid-a"}),
            )),
            boxed(pod(
                "launcher-web",
                "pod-web",
                json!({"kubevirt.io/created-by": "uid-web"}),
            )),
        ]));
        let ended = Ended {
            key: ("prod".into(), "a".into()),
            vmim: (**m.vmims.get(&("prod".to_string(), "a".to_string())).unwrap()).clone(),
            deleted: false,
        };
        // The VMI has not caught up yet (its state says in progress): wait for it.
        assert!(!vmi_caught_up(&m, &ended));
        let now: Timestamp = "2026-12-01T00:01:00Z".parse().unwrap();
        let ev = evidence_for(&m, &ended, None, now, LoopThresholds::default());
        let mut pods: Vec<&str> = ev
            .pods
            .iter()
            .map(|p| p.metadata.name.as_deref().unwrap_or(""))
            .collect();
        pods.sort();
        assert_eq!(pods, ["launcher-db", "target-db"]);
        let migrations: Vec<&str> = ev.migrations.iter().map(|v| v.name()).collect();
        assert_eq!(migrations.len(), 2);
        assert!(migrations.contains(&"earlier") && migrations.contains(&"a"));
        assert_eq!(ev.vmi.as_ref().map(|v| v.name()), Some("db"));
        // What explain reads beside these objects is read around them: the events about
        // the VMIM, the VMI and its pods (the state's target pod too).
        let subjects = event_subjects(&ev);
        assert_eq!(
            subjects,
            [
                ("VirtualMachineInstanceMigration", "a".to_string()),
                ("VirtualMachineInstance", "db".to_string()),
                ("Pod", "launcher-db".to_string()),
                ("Pod", "target-db".to_string()),
            ]
        );
        assert!(ev.unread.is_empty() && ev.events.is_empty());
    }
}
