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
//!   `migrationState`, the VMI's other VMIMs, its launcher pods, the KubeVirt CR); events,
//!   PDBs, MigrationPolicies and the Namespace are not watched, and the evidence says so
//!   (`unread`), so the diagnosis says what it assumed.

use std::collections::{BTreeSet, HashMap, HashSet};

use k8s_openapi::jiff::Timestamp;

use super::follow::{Key, Mirror, key_of};
use crate::model::{KubeVirt, Pod, Time, VirtualMachineInstanceMigration};
use crate::triage::{Evidence, LoopThresholds, Source, Unread};

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
        let Some(v) = version.filter(|v| !v.is_empty()) else {
            return;
        };
        let newer = match (
            self.newest_version.as_deref().map(str::parse::<u64>),
            v.parse::<u64>(),
        ) {
            (Some(Ok(old)), Ok(new)) => new > old,
            _ => true,
        };
        if newer {
            self.newest_version = Some(v.to_string());
        }
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

/// What `vmctl record` does not read, as the evidence's `unread`: the diagnosis says it
/// assumed without them.
pub fn not_watched() -> Vec<Unread> {
    let why = "not read by vmctl record (it watches VMIs, migrations and launcher pods only)";
    [
        Source::Events,
        Source::MigrationPolicies,
        Source::Namespace,
        Source::PodDisruptionBudgets,
    ]
    .into_iter()
    .map(|source| Unread {
        source,
        status: None,
        message: why.to_string(),
    })
    .collect()
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
        unread: not_watched(),
        pdbs: Vec::new(),
        loops,
    }
}
