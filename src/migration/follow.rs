//! One follower of KubeVirt migrations: VMIMs, their VMIs and launcher pods, for any number
//! of migrations at once (`migrate` and `abort` follow one; `status --watch` follows every
//! migration in scope; a drain will follow its waves the same way).
//!
//! - [`Follower`] owns up to three watches (`cluster::watch`: paginated lists, resume from
//!   the last resourceVersion, re-list on 410 Gone, backoff, reconnect reporting), a local
//!   [`Mirror`] of what they saw, a tick, and the one policy for Ctrl-C and deadlines
//!   ([`Stop`]). Each [`Follower::next`] applies one change to the mirror and says what it
//!   was ([`Update`]). `next` is cancel-safe: `status --watch` `select!`s it against its
//!   redraw timer and loses nothing.
//! - [`follow`] is the loop of commands that follow until something happens: the command
//!   is an [`Observer`] (look at the mirror after each update; act on each tick), the loop
//!   ends with [`Ending`]. It takes its updates from any [`Updates`] source, so the loop is
//!   tested with a script.
//! - [`Followed`] is what `migrate` knows of the one migration it started (state, phase,
//!   hand-off), [`sample_from`] turns KubeVirt's metrics into the `JobSample` both drivers
//!   share, [`read_metrics`] reads them. `operate::kubevirt_job` builds the KubeVirt driver
//!   of the one loop (`migration::driver`) on them: the controller's judgement of
//!   convergence runs there, as advice (KubeVirt's monitor decides on its own).
//!
//! It lives in `migration/`, not `cluster/`: it is about following migrations and sits next
//! to the KubeVirt driver and the controller it consults; it reads the cluster only through
//! `cluster::watch` (and the driver, for metrics) and prints nothing (`render::follow` has
//! the lines).

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::time::{Instant, Interval, MissedTickBehavior};

use super::kubevirt::{KubeVirtDriver, MetricsUnavailable, Prometheus};
use super::kubevirt_metrics::MigrationMetrics;
use super::sample::{JobSample, Mode};
use crate::cluster::live::LiveSource;
use crate::cluster::watch::{Boxed, Change, Reconnecting, Watch};
use crate::cluster::{Kind, Query};
use crate::error::Result;
use crate::model::vmi::{MigrationMode, MigrationState};
use crate::model::vmim::MigrationPhase;
use crate::model::{
    Node, ObjectMeta, Pod, VirtualMachineInstance, VirtualMachineInstanceMigration,
};
use crate::policy::links::{CREATED_BY_LABEL, MIGRATION_JOB_UID_LABEL};

/// (namespace, name).
pub type Key = (String, String);

pub fn key_of(meta: &ObjectMeta) -> Key {
    (
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

fn label<'a>(meta: &'a ObjectMeta, name: &str) -> Option<&'a str> {
    meta.labels.as_ref()?.get(name).map(String::as_str)
}

fn index_insert(index: &mut HashMap<Key, BTreeSet<String>>, key: Key, name: &str) {
    index.entry(key).or_default().insert(name.to_string());
}

/// Removes `name` from the set at `key`, dropping empty sets.
fn index_remove(index: &mut HashMap<Key, BTreeSet<String>>, key: &Key, name: &str) {
    if let Some(set) = index.get_mut(key) {
        set.remove(name);
        if set.is_empty() {
            index.remove(key);
        }
    }
}

// ---------------------------------------------------------------- the mirror

/// The watched objects, typed, keyed by (namespace, name), with the indexes readers need.
///
/// Objects marked as followed ([`Mirror::follow_vmim`], [`Mirror::follow_vmi`]) are
/// remembered as last seen when they vanish (deleted, or missing from a re-list), so a
/// command can still explain a migration that was deleted under it.
#[derive(Default)]
pub struct Mirror {
    // Boxed: a model object is kilobytes inline; the tables stay small and grow cheaply.
    pub vmis: HashMap<Key, Box<VirtualMachineInstance>>,
    pub vmims: HashMap<Key, Box<VirtualMachineInstanceMigration>>,
    pub pods: HashMap<Key, Box<Pod>>,
    /// Names of non-final VMIMs by (namespace, spec.vmiName).
    pub active_vmims: HashMap<Key, BTreeSet<String>>,
    /// Names of every VMIM by (namespace, spec.vmiName), final ones too.
    pub vmims_by_vmi: HashMap<Key, BTreeSet<String>>,
    /// VMIs whose `status.migrationState` is not completed.
    pub migrating_vmis: BTreeSet<Key>,
    /// Pod names by (namespace, `kubevirt.io/created-by`) and (namespace, migrationJobUID).
    pub pods_by_creator: HashMap<Key, BTreeSet<String>>,
    pub pods_by_job: HashMap<Key, BTreeSet<String>>,
    /// Pod UID -> (namespace, name), for `status.activePods`.
    pub pods_by_uid: HashMap<String, Key>,
    /// Followed objects and, once they vanished, their last version.
    followed_vmims: BTreeSet<Key>,
    followed_vmis: BTreeSet<Key>,
    gone_vmims: HashMap<Key, Box<VirtualMachineInstanceMigration>>,
    gone_vmis: HashMap<Key, Box<VirtualMachineInstance>>,
    /// Applied to every pod before it is stored (e.g. dropping fields no reader needs).
    pod_filter: Option<fn(&mut Pod)>,
    /// Nodes by name: `spec.unschedulable` (cordoned), when Nodes are watched
    /// ([`FollowSpec::with_nodes`]). One bool per node: bounded by the cluster's size.
    pub nodes: std::collections::BTreeMap<String, bool>,
    /// Why Nodes could not be read (a namespaced user may not list them), when so.
    pub nodes_unreadable: Option<String>,
}

impl Mirror {
    /// Remembers this VMIM when it vanishes; stores it as the current version.
    pub fn follow_vmim(&mut self, vmim: VirtualMachineInstanceMigration) {
        let key = key_of(&vmim.metadata);
        self.followed_vmims.insert(key);
        self.put_vmim(Boxed(Box::new(vmim)));
    }

    /// Remembers this VMI when it vanishes; `vmi` is its current version, when known.
    pub fn follow_vmi(&mut self, key: Key, vmi: Option<VirtualMachineInstance>) {
        self.followed_vmis.insert(key);
        if let Some(v) = vmi {
            self.put_vmi(Boxed(Box::new(v)));
        }
    }

    /// The VMIM as last seen (also after it was deleted, when followed).
    pub fn vmim_last(&self, key: &Key) -> Option<&VirtualMachineInstanceMigration> {
        self.vmims
            .get(key)
            .or_else(|| self.gone_vmims.get(key))
            .map(|b| &**b)
    }

    /// A followed VMIM was deleted (or a re-list no longer has it).
    pub fn vmim_gone(&self, key: &Key) -> bool {
        self.gone_vmims.contains_key(key)
    }

    /// The VMI as last seen (also after it vanished, when followed).
    pub fn vmi_last(&self, key: &Key) -> Option<&VirtualMachineInstance> {
        self.vmis
            .get(key)
            .or_else(|| self.gone_vmis.get(key))
            .map(|b| &**b)
    }

    // ---- VMIs
    fn put_vmi(&mut self, Boxed(vmi): Boxed<VirtualMachineInstance>) {
        let key = key_of(&vmi.metadata);
        if vmi
            .status
            .migration_state
            .as_ref()
            .is_some_and(|s| !s.completed)
        {
            self.migrating_vmis.insert(key.clone());
        } else {
            self.migrating_vmis.remove(&key);
        }
        self.gone_vmis.remove(&key);
        self.vmis.insert(key, vmi);
    }

    fn remove_vmi(&mut self, key: &Key) {
        self.migrating_vmis.remove(key);
        if let Some(old) = self.vmis.remove(key)
            && self.followed_vmis.contains(key)
        {
            self.gone_vmis.insert(key.clone(), old);
        }
    }

    pub fn apply_vmis(&mut self, change: Change<Boxed<VirtualMachineInstance>>) {
        match change {
            Change::Applied(v) => self.put_vmi(v),
            Change::Deleted(v) => self.remove_vmi(&key_of(&v.0.metadata)),
            Change::Listed(items) => {
                let old = std::mem::replace(&mut self.vmis, HashMap::with_capacity(items.len()));
                self.migrating_vmis.clear();
                for v in items {
                    self.put_vmi(v);
                }
                for (key, v) in old {
                    if self.followed_vmis.contains(&key) && !self.vmis.contains_key(&key) {
                        self.gone_vmis.insert(key, v);
                    }
                }
            }
            Change::Reconnecting(_) | Change::Recovered => {}
        }
    }

    // ---- VMIMs
    fn unindex_vmim(&mut self, key: &Key) {
        if let Some(old) = self.vmims.get(key) {
            let vmi = (key.0.clone(), old.spec.vmi_name.clone());
            index_remove(&mut self.vmims_by_vmi, &vmi, &key.1);
            if !old.is_final() {
                index_remove(&mut self.active_vmims, &vmi, &key.1);
            }
        }
    }

    fn put_vmim(&mut self, Boxed(vmim): Boxed<VirtualMachineInstanceMigration>) {
        let key = key_of(&vmim.metadata);
        self.unindex_vmim(&key);
        let vmi = (key.0.clone(), vmim.spec.vmi_name.clone());
        if !vmim.is_final() {
            index_insert(&mut self.active_vmims, vmi.clone(), &key.1);
        }
        index_insert(&mut self.vmims_by_vmi, vmi, &key.1);
        self.gone_vmims.remove(&key);
        self.vmims.insert(key, vmim);
    }

    /// A VMIM left: forgotten, or remembered as deleted when followed (`last` is the
    /// version the deletion reported, when there is one).
    fn remove_vmim(&mut self, key: &Key, last: Option<Box<VirtualMachineInstanceMigration>>) {
        self.unindex_vmim(key);
        let old = self.vmims.remove(key);
        if self.followed_vmims.contains(key)
            && let Some(m) = last.or(old)
        {
            self.gone_vmims.insert(key.clone(), m);
        }
    }

    pub fn apply_vmims(&mut self, change: Change<Boxed<VirtualMachineInstanceMigration>>) {
        match change {
            Change::Applied(m) => self.put_vmim(m),
            Change::Deleted(Boxed(m)) => {
                let key = key_of(&m.metadata);
                self.remove_vmim(&key, Some(m));
            }
            Change::Listed(items) => {
                let listed: BTreeSet<Key> = items.iter().map(|m| key_of(&m.0.metadata)).collect();
                let vanished: Vec<Key> = self
                    .followed_vmims
                    .iter()
                    .filter(|k| self.vmims.contains_key(*k) && !listed.contains(*k))
                    .cloned()
                    .collect();
                for key in vanished {
                    self.remove_vmim(&key, None);
                }
                self.vmims = HashMap::with_capacity(items.len());
                self.active_vmims.clear();
                self.vmims_by_vmi.clear();
                for m in items {
                    self.put_vmim(m);
                }
            }
            Change::Reconnecting(_) | Change::Recovered => {}
        }
    }

    // ---- Nodes
    /// The cordoned nodes (`spec.unschedulable`), by name.
    pub fn cordoned(&self) -> BTreeSet<&str> {
        self.nodes
            .iter()
            .filter(|(_, cordoned)| **cordoned)
            .map(|(name, _)| name.as_str())
            .collect()
    }

    pub fn apply_nodes(&mut self, change: Change<Boxed<Node>>) {
        let facts = |n: &Node| {
            (
                n.metadata.name.clone().unwrap_or_default(),
                n.spec.as_ref().and_then(|s| s.unschedulable) == Some(true),
            )
        };
        match change {
            Change::Applied(Boxed(n)) => {
                let (name, cordoned) = facts(&n);
                self.nodes.insert(name, cordoned);
            }
            Change::Deleted(Boxed(n)) => {
                self.nodes.remove(&facts(&n).0);
            }
            Change::Listed(items) => {
                self.nodes = items.iter().map(|n| facts(&n.0)).collect();
            }
            Change::Reconnecting(_) | Change::Recovered => {}
        }
    }

    // ---- launcher pods
    fn unindex_pod(&mut self, key: &Key) {
        let Some(old) = self.pods.get(key) else {
            return;
        };
        if let Some(uid) = label(&old.metadata, CREATED_BY_LABEL) {
            index_remove(
                &mut self.pods_by_creator,
                &(key.0.clone(), uid.to_string()),
                &key.1,
            );
        }
        if let Some(uid) = label(&old.metadata, MIGRATION_JOB_UID_LABEL) {
            index_remove(
                &mut self.pods_by_job,
                &(key.0.clone(), uid.to_string()),
                &key.1,
            );
        }
        if let Some(uid) = &old.metadata.uid {
            self.pods_by_uid.remove(uid);
        }
    }

    fn put_pod(&mut self, Boxed(mut pod): Boxed<Pod>) {
        if let Some(filter) = self.pod_filter {
            filter(&mut pod);
        }
        let key = key_of(&pod.metadata);
        self.unindex_pod(&key);
        if let Some(uid) = label(&pod.metadata, CREATED_BY_LABEL) {
            index_insert(
                &mut self.pods_by_creator,
                (key.0.clone(), uid.to_string()),
                &key.1,
            );
        }
        if let Some(uid) = label(&pod.metadata, MIGRATION_JOB_UID_LABEL) {
            index_insert(
                &mut self.pods_by_job,
                (key.0.clone(), uid.to_string()),
                &key.1,
            );
        }
        if let Some(uid) = &pod.metadata.uid {
            self.pods_by_uid.insert(uid.clone(), key.clone());
        }
        self.pods.insert(key, pod);
    }

    pub fn apply_pods(&mut self, change: Change<Boxed<Pod>>) {
        match change {
            Change::Applied(p) => self.put_pod(p),
            Change::Deleted(p) => {
                let key = key_of(&p.0.metadata);
                self.unindex_pod(&key);
                self.pods.remove(&key);
            }
            Change::Listed(items) => {
                self.pods = HashMap::with_capacity(items.len());
                self.pods_by_creator.clear();
                self.pods_by_job.clear();
                self.pods_by_uid = HashMap::with_capacity(items.len());
                for p in items {
                    self.put_pod(p);
                }
            }
            Change::Reconnecting(_) | Change::Recovered => {}
        }
    }
}

// ---------------------------------------------------------------- the follower

/// What to watch: VMIMs and VMIs always, launcher pods when asked.
#[derive(Debug, Clone)]
pub struct FollowSpec {
    pub vmims: Query,
    pub vmis: Query,
    pub pods: Option<Query>,
    /// Applied to each pod before it is stored.
    pub pod_filter: Option<fn(&mut Pod)>,
    /// Also report a [`Update::Tick`] this often (for progress samples, elapsed times).
    pub tick: Option<Duration>,
    /// Report [`Stop::DeadlinePassed`] at this instant.
    pub deadline: Option<std::time::Instant>,
    /// Also watch Nodes (cordoned or not), across the cluster.
    pub nodes: bool,
}

impl FollowSpec {
    /// One migration and its VMI, by name (one field-selected watch each).
    pub fn one(namespace: &str, vmim: &str, vmi: &str) -> Result<FollowSpec> {
        let by_name = |n: &str| -> Result<Query> {
            Query::namespace(Some(namespace)).with_fields(&format!("metadata.name={n}"))
        };
        Ok(FollowSpec::of(by_name(vmim)?, by_name(vmi)?))
    }

    /// The VMIMs and VMIs these queries select (any number of migrations).
    pub fn of(vmims: Query, vmis: Query) -> FollowSpec {
        FollowSpec {
            vmims,
            vmis,
            pods: None,
            pod_filter: None,
            tick: None,
            deadline: None,
            nodes: false,
        }
    }

    /// Also watch Nodes: a cordoned node and the VMs still on it (`top`, `status --watch`).
    pub fn with_nodes(mut self) -> Self {
        self.nodes = true;
        self
    }

    pub fn with_pods(mut self, pods: Query, filter: Option<fn(&mut Pod)>) -> Self {
        self.pods = Some(pods);
        self.pod_filter = filter;
        self
    }

    pub fn with_tick(mut self, every: Duration) -> Self {
        self.tick = Some(every);
        self
    }

    pub fn with_deadline(mut self, deadline: Option<std::time::Instant>) -> Self {
        self.deadline = deadline;
        self
    }
}

/// Why following stopped before the migrations ended. The one policy of every follower:
///
/// - Ctrl-C stops *following*, never the migrations: they belong to the cluster and go on.
///   What the command still does about its own work (delete a migration that never
///   started, say how to abort) is its decision, made after [`Stop::Interrupted`].
/// - A deadline (`--timeout`) likewise ends the wait, not the migrations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Interrupted,
    DeadlinePassed,
}

/// What one call of [`Follower::next`] changed (already applied to the mirror).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    /// Objects of this kind changed; `listed` when it was a whole (re-)list.
    Changed {
        kind: Kind,
        listed: bool,
    },
    /// A watch failed and retries by itself.
    Reconnecting(Reconnecting),
    /// A watch works again after [`Update::Reconnecting`].
    Recovered(Kind),
    /// The tick asked for in [`FollowSpec::with_tick`].
    Tick,
    Stop(Stop),
}

type CtrlC = Pin<Box<dyn Future<Output = std::io::Result<()>> + Send>>;

/// Follows VMIMs, VMIs and (optionally) launcher pods; see the module documentation.
pub struct Follower {
    vmims: Watch<Boxed<VirtualMachineInstanceMigration>>,
    vmis: Watch<Boxed<VirtualMachineInstance>>,
    pods: Option<Watch<Boxed<Pod>>>,
    nodes: Option<Watch<Boxed<Node>>>,
    ctrl_c: CtrlC,
    interrupted: bool,
    deadline: Option<Instant>,
    tick: Option<Interval>,
    pub mirror: Mirror,
}

impl Follower {
    /// Sets up the watches (nothing is sent before the first [`Follower::next`]) and starts
    /// listening for Ctrl-C.
    pub fn new(live: &LiveSource, spec: FollowSpec) -> Follower {
        let tick = spec.tick.map(|every| {
            let mut t = tokio::time::interval(every);
            t.set_missed_tick_behavior(MissedTickBehavior::Skip);
            t
        });
        Follower {
            vmims: Watch::new(live, &spec.vmims),
            vmis: Watch::new(live, &spec.vmis),
            pods: spec.pods.as_ref().map(|q| Watch::new(live, q)),
            nodes: spec.nodes.then(|| Watch::new(live, &Query::all())),
            ctrl_c: Box::pin(tokio::signal::ctrl_c()),
            interrupted: false,
            deadline: spec.deadline.map(Instant::from_std),
            tick,
            mirror: Mirror {
                pod_filter: spec.pod_filter,
                ..Mirror::default()
            },
        }
    }

    /// The next change, applied to [`Follower::mirror`]; or a tick; or why to stop.
    /// Cancel-safe. An error is a watch that gave up (see `cluster::watch`).
    pub async fn next(&mut self) -> Result<Update> {
        if self.interrupted {
            return Ok(Update::Stop(Stop::Interrupted));
        }
        let Follower {
            vmims,
            vmis,
            pods,
            nodes,
            ctrl_c,
            interrupted,
            deadline,
            tick,
            mirror,
        } = self;
        let deadline = *deadline;
        tokio::select! {
            _ = ctrl_c => {
                *interrupted = true;
                Ok(Update::Stop(Stop::Interrupted))
            }
            _ = async {
                match deadline {
                    Some(t) => tokio::time::sleep_until(t).await,
                    None => std::future::pending::<()>().await,
                }
            } => Ok(Update::Stop(Stop::DeadlinePassed)),
            _ = async {
                match tick.as_mut() {
                    Some(t) => { t.tick().await; }
                    None => std::future::pending::<()>().await,
                }
            } => Ok(Update::Tick),
            change = vmims.next() => {
                let change = change?;
                let update = update_for(Kind::VirtualMachineInstanceMigration, &change);
                mirror.apply_vmims(change);
                Ok(update)
            }
            change = vmis.next() => {
                let change = change?;
                let update = update_for(Kind::VirtualMachineInstance, &change);
                mirror.apply_vmis(change);
                Ok(update)
            }
            change = async {
                match pods.as_mut() {
                    Some(p) => p.next().await,
                    None => std::future::pending().await,
                }
            } => {
                let change = change?;
                let update = update_for(Kind::Pod, &change);
                mirror.apply_pods(change);
                Ok(update)
            }
            change = async {
                match nodes.as_mut() {
                    Some(n) => n.next().await,
                    None => std::future::pending().await,
                }
            } => match change {
                Ok(change) => {
                    let update = update_for(Kind::Node, &change);
                    mirror.apply_nodes(change);
                    Ok(update)
                }
                // Nodes are an addition: a user who may not read them keeps the rest, and
                // is told what is missing.
                Err(e) => {
                    *nodes = None;
                    mirror.nodes.clear();
                    mirror.nodes_unreadable = Some(format!(
                        "could not read Nodes ({e}): cordoned nodes are not shown"
                    ));
                    Ok(Update::Changed { kind: Kind::Node, listed: true })
                }
            }
        }
    }
}

fn update_for<K>(kind: Kind, change: &Change<K>) -> Update {
    match change {
        Change::Applied(_) | Change::Deleted(_) => Update::Changed {
            kind,
            listed: false,
        },
        Change::Listed(_) => Update::Changed { kind, listed: true },
        Change::Reconnecting(r) => Update::Reconnecting(r.clone()),
        Change::Recovered => Update::Recovered(kind),
    }
}

/// How following ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The observer has what it waited for (the migrations ended, or were handed off).
    Done,
    Stopped(Stop),
}

/// What a command does while it follows: look at the mirror after each change, and
/// (with a tick) act once per tick.
#[allow(async_fn_in_trait)] // called in place, never spawned: no Send bound needed
pub trait Observer {
    /// Looks at the mirror (after each change, and once before the first); true when
    /// following is done.
    async fn settle(&mut self, mirror: &Mirror) -> Result<bool>;

    /// Once per tick ([`FollowSpec::with_tick`]).
    async fn tick(&mut self) -> Result<()> {
        Ok(())
    }

    /// What each update was (a change, a watch failing or recovering), before the
    /// [`Observer::settle`] that follows it.
    fn update(&mut self, _update: &Update) {}
}

/// Where [`follow`] takes its updates from: a [`Follower`], or a script in tests.
#[allow(async_fn_in_trait)] // called in place, never spawned: no Send bound needed
pub trait Updates {
    async fn next_update(&mut self) -> Result<Update>;
    fn mirror(&self) -> &Mirror;
}

impl Updates for Follower {
    async fn next_update(&mut self) -> Result<Update> {
        self.next().await
    }

    fn mirror(&self) -> &Mirror {
        &self.mirror
    }
}

/// The loop of every command that follows until something happens: settle, wait for the
/// next update, repeat; Ctrl-C and the deadline end it the same way for everyone.
pub async fn follow(updates: &mut impl Updates, observer: &mut impl Observer) -> Result<Ending> {
    loop {
        if observer.settle(updates.mirror()).await? {
            return Ok(Ending::Done);
        }
        match updates.next_update().await? {
            Update::Stop(stop) => return Ok(Ending::Stopped(stop)),
            Update::Tick => observer.tick().await?,
            update @ (Update::Changed { .. } | Update::Reconnecting(_) | Update::Recovered(_)) => {
                observer.update(&update)
            }
        }
    }
}

// ---------------------------------------------------------------- one migration

/// What is known about one migration vmctl follows (and what it has told so far).
#[derive(Debug, Default)]
pub struct Followed {
    pub vmim: Option<VirtualMachineInstanceMigration>,
    pub vmi: Option<VirtualMachineInstance>,
    /// The VMIM vanished (deleted: an abort, or garbage collection).
    pub vmim_deleted: bool,
    pub phases: Vec<(String, u64)>,
    pub announced_pods: bool,
    pub announced_mode: Option<MigrationMode>,
    pub announced_target_pod: bool,
    pub announced_policy: bool,
    pub started_ms: Option<u64>,
    /// `progressTimeout` from the configuration in force when vmctl started it.
    pub progress_timeout: u64,
    /// Post-copy is allowed for this migration: the real target node is said once known.
    pub post_copy_allowed: bool,
    /// The target node predicted before the start (the scheduler decides).
    pub predicted_target: Option<String>,
    pub announced_target_node: bool,
}

impl Followed {
    /// The VMI's migration state, when it belongs to our VMIM.
    pub fn state(&self) -> Option<&MigrationState> {
        let uid = self.vmim.as_ref().and_then(|m| m.uid())?;
        self.vmi
            .as_ref()
            .and_then(|v| v.status.migration_state.as_ref())
            .filter(|s| s.migration_uid.as_deref() == Some(uid))
            .or_else(|| {
                self.vmim
                    .as_ref()
                    .and_then(|m| m.status.migration_state.as_ref())
            })
    }

    pub fn phase(&self) -> MigrationPhase {
        self.vmim
            .as_ref()
            .map(|m| m.phase())
            .unwrap_or(MigrationPhase::Unset)
    }
}

pub fn mode_of(m: Option<&MigrationMode>) -> Mode {
    match m {
        Some(MigrationMode::PostCopy) => Mode::PostCopy,
        Some(MigrationMode::Paused) => Mode::Paused,
        _ => Mode::PreCopy,
    }
}

pub fn sample_from(metrics: &MigrationMetrics, elapsed_ms: u64, mode: Mode) -> JobSample {
    let b = |v: Option<f64>| {
        v.filter(|x| x.is_finite() && *x > 0.0)
            .map_or(0, |x| x as u64)
    };
    let remaining = b(metrics.remaining_bytes);
    let processed = b(metrics.processed_bytes);
    let total = b(metrics.total_bytes).max(processed + remaining);
    JobSample {
        elapsed_ms,
        data_total: total,
        data_processed: processed,
        data_remaining: remaining,
        memory_total: total,
        memory_processed: processed,
        memory_remaining: remaining,
        memory_bps: b(metrics.transfer_rate_bytes_per_second),
        dirty_rate_bps: b(metrics.dirty_rate_bytes_per_second),
        dirty_rate_source: if metrics.dirty_rate_bytes_per_second.is_some() {
            crate::migration::sample::DirtyRateSource::KubevirtMetrics
        } else {
            crate::migration::sample::DirtyRateSource::Unknown
        },
        mode,
        ..JobSample::default()
    }
}

/// Where progress numbers come from.
pub enum MetricsSource {
    Prometheus(Prometheus),
    /// virt-handler's pod on the source node, found once streaming starts.
    Handler {
        kubevirt_namespace: String,
        pod: Option<String>,
    },
}

/// KubeVirt took over: the target prepares the domain, or streaming started or ended.
pub fn handed_off(f: &Followed) -> bool {
    matches!(
        f.phase(),
        MigrationPhase::PreparingTarget
            | MigrationPhase::TargetReady
            | MigrationPhase::Running
            | MigrationPhase::Succeeded
            | MigrationPhase::Failed
    ) || f.state().is_some_and(|s| s.target_node.is_some())
        || f.vmim_deleted
}

/// Reads the migration's metrics from Prometheus or virt-handler (found once).
pub async fn read_metrics(
    driver: &KubeVirtDriver<'_>,
    source: &mut MetricsSource,
    f: &Followed,
    namespace: &str,
    name: &str,
) -> std::result::Result<MigrationMetrics, MetricsUnavailable> {
    match source {
        MetricsSource::Prometheus(p) => p.migration_metrics(namespace, name).await,
        MetricsSource::Handler {
            kubevirt_namespace,
            pod,
        } => {
            if pod.is_none() {
                let node = f
                    .state()
                    .and_then(|s| s.source_node.clone())
                    .or_else(|| f.vmi.as_ref().and_then(|v| v.status.node_name.clone()))
                    .ok_or_else(|| MetricsUnavailable("the source node is not known".into()))?;
                *pod = Some(driver.handler_pod(kubevirt_namespace, &node).await?);
            }
            let p = pod.clone().unwrap_or_default();
            driver
                .handler_metrics(kubevirt_namespace, &p, namespace, name)
                .await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vmim(name: &str, phase: &str) -> Boxed<VirtualMachineInstanceMigration> {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "prod",
            "uid": format!("uid-{name}")}, "spec": {"vmiName": "vm"}, "status": {"phase": phase}}))
        .unwrap()
    }

    fn key(name: &str) -> Key {
        ("prod".into(), name.into())
    }

    #[test]
    fn a_followed_migration_is_remembered_when_it_vanishes() {
        let mut m = Mirror::default();
        m.follow_vmim(*vmim("a", "Running").0);
        m.apply_vmims(Change::Listed(vec![
            vmim("a", "Running"),
            vmim("b", "Running"),
        ]));
        assert!(!m.vmim_gone(&key("a")));
        // Deleted: the deletion's version is the last one.
        m.apply_vmims(Change::Deleted(vmim("a", "Failed")));
        assert!(m.vmim_gone(&key("a")));
        assert_eq!(
            m.vmim_last(&key("a"))
                .map(|v| v.phase().as_str().to_string()),
            Some("Failed".into())
        );
        assert!(!m.vmims.contains_key(&key("a")));
        // Not followed: forgotten.
        m.apply_vmims(Change::Deleted(vmim("b", "Running")));
        assert!(!m.vmim_gone(&key("b")) && m.vmim_last(&key("b")).is_none());

        // Missing from a re-list: gone, as last seen.
        let mut m = Mirror::default();
        m.follow_vmim(*vmim("a", "Scheduling").0);
        m.apply_vmims(Change::Listed(vec![vmim("b", "Running")]));
        assert!(m.vmim_gone(&key("a")));
        assert_eq!(
            m.vmim_last(&key("a"))
                .map(|v| v.phase().as_str().to_string()),
            Some("Scheduling".into())
        );
        assert!(m.active_vmims.get(&key("vm")).is_some_and(|s| s.len() == 1));
    }

    #[test]
    fn a_followed_vmi_keeps_its_last_version() {
        let mut m = Mirror::default();
        let vmi: VirtualMachineInstance =
            serde_json::from_value(json!({"metadata": {"name": "vm", "namespace": "prod"},
                "status": {"nodeName": "node-1"}}))
            .unwrap();
        m.follow_vmi(key("vm"), Some(vmi));
        m.apply_vmis(Change::Listed(vec![]));
        assert!(m.vmis.is_empty());
        assert_eq!(
            m.vmi_last(&key("vm"))
                .and_then(|v| v.status.node_name.as_deref()),
            Some("node-1")
        );
    }

    #[test]
    fn samples_carry_the_metrics() {
        let m = MigrationMetrics {
            remaining_bytes: Some(100.0),
            processed_bytes: Some(300.0),
            total_bytes: None,
            dirty_rate_bytes_per_second: Some(5.0),
            transfer_rate_bytes_per_second: Some(50.0),
        };
        let s = sample_from(&m, 4000, Mode::PreCopy);
        assert_eq!(
            (s.remaining(), s.total(), s.memory_bps, s.dirty_rate_bps),
            (100, 400, 50, 5)
        );
    }

    /// Updates from a script: each applies its change to the mirror first.
    struct Scripted {
        mirror: Mirror,
        script: std::collections::VecDeque<(
            Option<Change<Boxed<VirtualMachineInstanceMigration>>>,
            Update,
        )>,
        taken: usize,
    }

    impl Updates for Scripted {
        async fn next_update(&mut self) -> Result<Update> {
            let (change, update) = self
                .script
                .pop_front()
                .ok_or_else(|| crate::error::Error::Internal("script exhausted".into()))?;
            self.taken += 1;
            if let Some(c) = change {
                self.mirror.apply_vmims(c);
            }
            Ok(update)
        }

        fn mirror(&self) -> &Mirror {
            &self.mirror
        }
    }

    /// Done once the followed migration is final; counts what it was asked.
    #[derive(Default)]
    struct UntilFinal {
        settles: usize,
        ticks: usize,
    }

    impl Observer for UntilFinal {
        async fn settle(&mut self, mirror: &Mirror) -> Result<bool> {
            self.settles += 1;
            Ok(mirror
                .vmim_last(&key("a"))
                .is_some_and(|m| m.is_final() || mirror.vmim_gone(&key("a"))))
        }

        async fn tick(&mut self) -> Result<()> {
            self.ticks += 1;
            Ok(())
        }
    }

    fn changed() -> Update {
        Update::Changed {
            kind: Kind::VirtualMachineInstanceMigration,
            listed: false,
        }
    }

    fn scripted(
        steps: Vec<(
            Option<Change<Boxed<VirtualMachineInstanceMigration>>>,
            Update,
        )>,
    ) -> Scripted {
        let mut mirror = Mirror::default();
        mirror.follow_vmim(*vmim("a", "Scheduling").0);
        Scripted {
            mirror,
            script: steps.into(),
            taken: 0,
        }
    }

    fn run(updates: &mut Scripted, observer: &mut UntilFinal) -> Result<Ending> {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .map_err(|e| crate::error::Error::Internal(e.to_string()))?
            .block_on(follow(updates, observer))
    }

    #[test]
    fn the_loop_ends_when_the_observer_is_done_and_takes_nothing_more() {
        let mut updates = scripted(vec![
            (None, Update::Tick),
            (Some(Change::Applied(vmim("a", "Running"))), changed()),
            (None, Update::Tick),
            (Some(Change::Applied(vmim("a", "Succeeded"))), changed()),
            (None, Update::Stop(Stop::Interrupted)),
        ]);
        let mut observer = UntilFinal::default();
        assert_eq!(run(&mut updates, &mut observer).unwrap(), Ending::Done);
        assert_eq!(updates.taken, 4, "the Ctrl-C after the end is never read");
        assert_eq!((observer.settles, observer.ticks), (5, 2));
    }

    #[test]
    fn ctrl_c_and_the_deadline_stop_the_loop_and_a_deletion_ends_it() {
        let mut updates = scripted(vec![
            (None, Update::Tick),
            (None, Update::Stop(Stop::Interrupted)),
            (None, Update::Tick),
        ]);
        let mut observer = UntilFinal::default();
        assert_eq!(
            run(&mut updates, &mut observer).unwrap(),
            Ending::Stopped(Stop::Interrupted)
        );
        assert_eq!((updates.taken, observer.ticks), (2, 1));

        let mut updates = scripted(vec![(None, Update::Stop(Stop::DeadlinePassed))]);
        assert_eq!(
            run(&mut updates, &mut UntilFinal::default()).unwrap(),
            Ending::Stopped(Stop::DeadlinePassed)
        );

        // Deleted while followed: the last version says Running, but it is gone.
        let mut updates = scripted(vec![
            (
                Some(Change::Reconnecting(Reconnecting {
                    kind: Kind::VirtualMachineInstanceMigration,
                    attempt: 1,
                    reason: "503".into(),
                    retry_in: Duration::from_secs(1),
                })),
                changed(),
            ),
            (Some(Change::Deleted(vmim("a", "Running"))), changed()),
            (None, Update::Stop(Stop::Interrupted)),
        ]);
        assert_eq!(
            run(&mut updates, &mut UntilFinal::default()).unwrap(),
            Ending::Done
        );
        assert_eq!(updates.taken, 2);
    }
}
