//! A drain in progress, as plain data: which pods to evict now, what each eviction answer
//! and each change of the watched objects means, and when the drain is over. Pure: the
//! operate layer (`operate::drain`) sends the evictions, reads the watches and the clock,
//! and passes them in; the events it gets back are what the renderers show.
//!
//! The rules, each the behaviour an operator expects from kubectl plus what KubeVirt adds:
//! - every pod is evicted through the Eviction API; a 429 is retried after
//!   [`Settings::retry_ms`] (kubectl: 5 s), except for a VM whose evacuation is under way
//!   (KubeVirt's webhook answers "Evacuation in progress" until the VM has left: vmctl
//!   waits for the migration instead of asking again), and a finished pod is evicted at once;
//! - a VM's launcher pod evicted with 429 "Eviction triggered evacuation" is KubeVirt taking
//!   over: vmctl follows the evacuation migrations KubeVirt creates, never creates its own;
//! - at most [`Settings::max_parallel`] VMs are being evacuated at a time (KubeVirt's own
//!   limits apply on top);
//! - an answer that cannot change by waiting (not live-migratable, two PDBs, 403) makes the
//!   pod a blocker at once; a VM whose evacuation failed [`Settings::give_up_after`] times
//!   is one too (KubeVirt goes on retrying with backoff);
//! - the drain is over when every pod it evicts is gone (drained), or when only blockers
//!   remain (blocked).

use std::collections::BTreeMap;

use serde::Serialize;

use super::evict::{Answer, PodKey, PodSelection, PodToEvict};
use super::{Action, DrainPlan};
use crate::triage::loops::LoopKind;

/// How the drain behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// VMs evacuated at once; `None`: as many as KubeVirt takes.
    pub max_parallel: Option<u32>,
    /// Wait before asking again after a 429 (kubectl: 5 s).
    pub retry_ms: u64,
    /// Failed evacuations of one VM before vmctl names it a blocker.
    pub give_up_after: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_parallel: None,
            retry_ms: 5_000,
            // As many as make an evacuation loop by default (`--loop-failures`).
            give_up_after: crate::triage::loops::DEFAULT_LOOP_FAILURES,
        }
    }
}

/// How long "moved" waits for the migration's own watch to show it succeeded once the
/// VMI's watch shows it on the new node.
const MOVED_HOLD_MS: u64 = 10_000;

/// A VMI's latest migration, as the watches show it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MigrationSeen {
    pub name: String,
    pub phase: String,
    pub source_node: Option<String>,
    pub target_node: Option<String>,
    pub source_pod: Option<String>,
    pub target_pod: Option<String>,
    pub mode: Option<String>,
    /// `migrationState.failureReason`, or the VMIM's failed condition.
    pub failure: Option<String>,
    /// Created by KubeVirt's evacuation controller (`kubevirt.io/evacuationMigration`).
    pub evacuation: bool,
    /// While it waits in Pending after failed attempts: the end of KubeVirt's backoff
    /// (`handleMigrationBackoff`, from the previous failure's Failed transition, RFC 3339)
    /// and its length in seconds.
    pub backoff_until: Option<String>,
    pub backoff_seconds: Option<i64>,
}

impl MigrationSeen {
    pub fn is_final(&self) -> bool {
        matches!(self.phase.as_str(), "Succeeded" | "Failed")
    }
}

/// A VM on the drained nodes, as the watches show it now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VmSeen {
    /// The VMI exists.
    pub exists: bool,
    /// `metadata.uid`: a VMI its VM created again is another VMI, not the one that moved.
    pub uid: Option<String>,
    pub node: Option<String>,
    pub phase: String,
    /// `status.evacuationNodeName`.
    pub evacuation_node: Option<String>,
    /// The newest migration of this VMI that started after the drain began (none before).
    pub migration: Option<MigrationSeen>,
    /// A loop that never ends by itself (`triage::loops`, over every migration of the VMI,
    /// those before the drain included): its cause id and what to say, with the way out.
    pub stuck: Option<StuckSeen>,
}

/// A loop the VMI is caught in, as the drain reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StuckSeen {
    pub kind: LoopKind,
    pub message: String,
    /// What ends it once the drain has stopped, in order (the loop's way out without its
    /// `stop_first` step).
    pub way_out: Vec<String>,
}

/// What the watches show, for the drain's pods and VMs only.
#[derive(Debug, Clone, Default)]
pub struct World {
    /// The drain's pods still present, with their phase.
    pub pods: BTreeMap<PodKey, String>,
    /// The drain's VMs, by (namespace, name).
    pub vms: BTreeMap<PodKey, VmSeen>,
}

/// Something that happened, for the renderers (one line, one JSON event).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Event {
    /// An eviction was sent.
    #[serde(rename_all = "camelCase")]
    Evicting {
        namespace: String,
        pod: String,
        vmi: Option<String>,
    },
    /// The Eviction API accepted it: the pod is being deleted.
    #[serde(rename_all = "camelCase")]
    Evicted { namespace: String, pod: String },
    /// The pod is gone from the node.
    #[serde(rename_all = "camelCase")]
    PodGone { namespace: String, pod: String },
    /// KubeVirt's webhook marked the VMI (`evacuationNodeName`): it migrates it.
    #[serde(rename_all = "camelCase")]
    EvacuationStarted {
        namespace: String,
        vmi: String,
        node: String,
    },
    /// An eviction was refused for a while (a PDB, API throttling …); asked again later.
    #[serde(rename_all = "camelCase")]
    Waiting {
        namespace: String,
        pod: String,
        vmi: Option<String>,
        /// `pdb`, `evacuation`, `target-pod`, `hotplug`, `throttled`, `server-error`.
        reason: String,
        pdb: Option<String>,
        message: String,
        retry_seconds: u64,
    },
    /// A migration of a drained VM changed phase (or mode).
    #[serde(rename_all = "camelCase")]
    Migration {
        namespace: String,
        vmi: String,
        migration: String,
        phase: String,
        source_node: Option<String>,
        target_node: Option<String>,
        source_pod: Option<String>,
        target_pod: Option<String>,
        mode: Option<String>,
        /// Post-copy: an abort or a network failure now loses the guest.
        point_of_no_return: bool,
        /// KubeVirt's evacuation controller created it.
        evacuation: bool,
        /// Its place in the VMI's chain of migrations during the drain (1 for the first);
        /// the previous attempt's `failureReason` when it failed.
        attempt: u32,
        previous_failure: Option<String>,
        /// Pending after failures: KubeVirt holds it until then (its backoff), RFC 3339.
        backoff_until: Option<String>,
        /// The VMI was not on a drained node: this migration brings it onto one (its
        /// target pod is the drain's pod, which goes when the migration ends).
        incoming: bool,
    },
    /// A VMI that was elsewhere when the drain began now runs on a drained node (a
    /// migration into it ended there): the drain moves it on like the others.
    #[serde(rename_all = "camelCase")]
    Arrived {
        namespace: String,
        vmi: String,
        node: String,
        migration: Option<String>,
    },
    /// Where the drain stands and what it waits for, when that changes (and now and then
    /// off a terminal): evictions accepted, migrations in flight and pods gone, counted
    /// apart.
    #[serde(rename_all = "camelCase")]
    Progress {
        #[serde(flatten)]
        counts: Counts,
        waiting_for: Vec<Wait>,
    },
    /// A migration failed; `retry`: the VMI is still marked, KubeVirt tries again (with
    /// backoff: 20 s, doubling per failure).
    #[serde(rename_all = "camelCase")]
    MigrationFailed {
        namespace: String,
        vmi: String,
        migration: String,
        reason: Option<String>,
        failures: u32,
        retry: bool,
        /// Failed evacuations of the VM after which vmctl stops waiting for it
        /// (`--loop-failures`, [`Settings::give_up_after`]).
        give_up_after: u32,
    },
    /// The VM runs elsewhere now: the VMI was on `from` (a drained node) and its
    /// `status.nodeName` is `to`.
    #[serde(rename_all = "camelCase")]
    Moved {
        namespace: String,
        vmi: String,
        from: String,
        to: String,
        migration: Option<String>,
        /// The attempt that moved it (2: one failed before, KubeVirt's retry succeeded).
        attempt: u32,
        /// The node the plan predicted for it (the scheduler chose `to`).
        #[serde(skip_serializing_if = "Option::is_none")]
        predicted: Option<String>,
    },
    /// The VM was shut down (its pod evicted); `back_on`: its VM started it again there.
    #[serde(rename_all = "camelCase")]
    Stopped {
        namespace: String,
        vmi: String,
        back_on: Option<String>,
    },
    /// The drain cannot get past this.
    #[serde(rename_all = "camelCase")]
    Blocked {
        namespace: String,
        pod: String,
        vmi: Option<String>,
        reason: String,
        message: String,
    },
}

/// Something the drain waits for: a pod, the VM it belongs to, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Wait {
    pub namespace: String,
    pub pod: String,
    pub vmi: Option<String>,
    /// `queued`, `not-asked-yet`, `pdb`, `target-pod`, `hotplug`, `throttled`,
    /// `server-error`, `terminating`, `evacuation` (KubeVirt has no migration for it yet),
    /// `backoff`, `migrating`, `source-pod`.
    pub reason: String,
    /// The migration it waits on, when there is one.
    pub migration: Option<String>,
    pub message: String,
}

/// The drain's numbers, each counted on its own: an accepted eviction is not a pod gone,
/// and a VM handed to KubeVirt is not a VM moved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Pods the drain removes, in all.
    pub pods_total: usize,
    /// Evictions the API server accepted (200/201): the pod is being deleted.
    pub evictions_accepted: usize,
    /// Pods the drain removes that are gone from the node.
    pub pods_gone: usize,
    /// Migrations of the drain's VMs not finished yet.
    pub migrations_in_flight: usize,
    /// VMs on the drained nodes when the drain began (or that came onto them since).
    pub vms_total: usize,
    pub vms_moved: usize,
    pub vms_stopped: usize,
    pub vms_blocked: usize,
}

/// Where one pod stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PodState {
    /// Not evicted yet, or refused and to be asked again at `next_ms`.
    Waiting {
        next_ms: u64,
    },
    /// The VM's evacuation is under way: asked again once its pod has finished.
    Evacuating,
    /// Accepted: waiting for the pod to go.
    Evicted,
    Gone,
    Blocked {
        reason: String,
        message: String,
    },
}

#[derive(Debug, Clone)]
struct PodTask {
    pod: PodToEvict,
    state: PodState,
    /// The last refusal shown, so a repeat is not shown again.
    last_shown: Option<Answer>,
    phase: String,
    /// The API server accepted its eviction (once is enough to count it).
    accepted: bool,
}

#[derive(Debug, Clone, Default)]
struct VmTask {
    /// Its launcher pods among the drain's pods.
    pods: Vec<PodKey>,
    /// The drained node the VMI ran on when the drain began, or came onto during it;
    /// `None`: a VMI elsewhere, only a pod of it is on the node (a migration's target pod,
    /// an old finished one). Only a VM with a node here can have moved.
    was_on: Option<String>,
    /// Its `metadata.uid` then (when known).
    uid: Option<String>,
    /// It came onto the node during the drain, by this migration (or by one unnamed).
    came_by: Option<Option<String>>,
    action: Option<Action>,
    /// The target node the plan predicted (a live migration's).
    predicted: Option<String>,
    seen: VmSeen,
    /// The VMI's migrations during the drain, oldest first (its chain of attempts).
    attempts: Vec<String>,
    /// The migrations already reported failed, with their reason, and the last phase
    /// shown per migration.
    failed: Vec<(String, Option<String>)>,
    shown_phase: BTreeMap<String, String>,
    done: bool,
    /// Since when (ms) the VMI has been seen on another node while the watch of the
    /// migration that took it there has not shown its end yet: "moved" waits for that
    /// migration's Succeeded line (at most [`MOVED_HOLD_MS`]).
    landed_since: Option<u64>,
    /// Done by a shutdown (or its VMI replaced by a new one), not a move.
    stopped: bool,
    blocked: bool,
}

impl VmTask {
    /// The attempt number of `m` in the VMI's chain of evacuation migrations during the
    /// drain (1-based; a new one is appended). A migration that is no evacuation (a manual
    /// one, one into the node) is no attempt of the chain: 1.
    fn attempt_of(&mut self, m: &MigrationSeen) -> u32 {
        if !m.evacuation {
            return 1;
        }
        match self.attempts.iter().position(|x| *x == m.name) {
            Some(i) => i as u32 + 1,
            None => {
                self.attempts.push(m.name.clone());
                self.attempts.len() as u32
            }
        }
    }

    /// The failure of the attempt before `migration`, if that one failed.
    fn previous_failure(&self, migration: &str) -> Option<String> {
        let i = self.attempts.iter().position(|m| m == migration)?;
        let before = self.attempts.get(i.checked_sub(1)?)?;
        self.failed
            .iter()
            .find(|(m, _)| m == before)
            .map(|(_, r)| r.clone().unwrap_or_else(|| "no reason recorded".into()))
    }
}

/// What the drain knows of a VMI when it begins (from the API).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VmStart {
    /// `status.nodeName`.
    pub node: Option<String>,
    pub uid: Option<String>,
}

/// How a drain ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Drained,
    Blocked,
}

/// The drain's account, for the summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Account {
    #[serde(flatten)]
    pub counts: Counts,
    /// What the drain still waits for (at the end: what it did not see go).
    pub waiting_for: Vec<Wait>,
    /// `namespace/name -> node` for VMs that moved.
    pub moved: Vec<Moved>,
    pub stopped: Vec<String>,
    /// VMs still on their way (evacuation or migration under way).
    pub migrating: Vec<InFlight>,
    pub blocked: Vec<BlockedPod>,
    /// VMs not moved, stopped or blocked yet.
    pub vms_left: usize,
    /// Pods still to go (blocked ones included).
    pub pods_left: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Moved {
    pub namespace: String,
    pub vmi: String,
    pub from: String,
    pub to: String,
    /// The migration that moved it and its attempt number (2 and more: KubeVirt retried).
    pub migration: Option<String>,
    pub attempt: u32,
    /// It was not on the node when the drain began: this migration brought it there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub came_by: Option<String>,
    /// The target the plan predicted (`to` is where the VMI's `status.nodeName` says it
    /// runs now, from the API).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted: Option<String>,
    /// `to` is the predicted node (absent without a prediction).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_predicted: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InFlight {
    pub namespace: String,
    pub vmi: String,
    pub migration: Option<String>,
    pub phase: Option<String>,
    /// In post-copy: past the point of no return (an abort or a network failure loses the
    /// guest). Listed first.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub post_copy: bool,
    /// Its migration goes from this node to a drained one: the VM is no VM of the drain,
    /// but its target pod is one the drain waits for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub into: Option<String>,
    /// KubeVirt evacuates it (marked, answered by the eviction webhook, or its migration is
    /// an evacuation one): `evacuate/cancel` stops it. False for a migration someone else
    /// created (a decentralized one, a manual one): cancelling an evacuation does nothing.
    #[serde(skip)]
    pub evacuation: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockedPod {
    pub namespace: String,
    pub pod: String,
    pub vmi: Option<String>,
    pub reason: String,
    pub message: String,
}

/// The plan's action for each VM, by (namespace, name).
pub fn actions_of(plan: &DrainPlan) -> BTreeMap<PodKey, Action> {
    plan.vmis
        .iter()
        .map(|v| ((v.namespace.clone(), v.name.clone()), v.action))
        .collect()
}

/// The target node the plan predicts for each VM it live-migrates (or that migrates
/// already): what the summary compares with where the VM went.
pub fn predicted_targets(plan: &DrainPlan) -> BTreeMap<PodKey, String> {
    plan.vmis
        .iter()
        .filter(|v| matches!(v.action, Action::LiveMigrate | Action::AlreadyMigrating))
        .filter_map(|v| {
            v.target
                .clone()
                .map(|t| ((v.namespace.clone(), v.name.clone()), t))
        })
        .collect()
}

/// The drain in progress; see the module documentation.
#[derive(Debug, Clone)]
pub struct DrainRun {
    settings: Settings,
    pods: BTreeMap<PodKey, PodTask>,
    vms: BTreeMap<PodKey, VmTask>,
    /// The drained nodes (those of the pods it evicts).
    nodes: std::collections::BTreeSet<String>,
}

impl DrainRun {
    /// The plan's predicted targets ([`predicted_targets`]), to say after each move whether
    /// the VM went there.
    pub fn with_predictions(mut self, targets: &BTreeMap<PodKey, String>) -> DrainRun {
        for (key, vm) in self.vms.iter_mut() {
            vm.predicted = targets.get(key).cloned();
        }
        self
    }

    /// The pods kubectl's filters let go (`selection.evict`), and the plan's action for
    /// each VM ([`actions_of`]).
    pub fn new(
        selection: &PodSelection,
        actions: &BTreeMap<PodKey, Action>,
        settings: Settings,
    ) -> DrainRun {
        let mut vms = BTreeMap::new();
        let pods = selection
            .evict
            .iter()
            .map(|p| {
                if let Some(vmi) = &p.vmi {
                    let action = actions.get(&(p.namespace.clone(), vmi.clone())).copied();
                    let vm: &mut VmTask =
                        vms.entry((p.namespace.clone(), vmi.clone())).or_default();
                    // Until the VMI's own node is known (`starting_from`): the node of
                    // its running launcher pod.
                    if !p.finished {
                        vm.was_on = Some(p.node.clone());
                    }
                    vm.pods.push(p.key());
                    vm.action = action.or(vm.action);
                }
                (
                    p.key(),
                    PodTask {
                        pod: p.clone(),
                        state: PodState::Waiting { next_ms: 0 },
                        last_shown: None,
                        phase: if p.finished {
                            "Succeeded".into()
                        } else {
                            String::new()
                        },
                        accepted: false,
                    },
                )
            })
            .collect();
        DrainRun {
            settings,
            pods,
            vms,
            nodes: selection.evict.iter().map(|p| p.node.clone()).collect(),
        }
    }

    /// Where each VMI ran when the drain began, read from the API: only a VMI whose
    /// `status.nodeName` was a drained node is one the drain moves. A VMI elsewhere whose
    /// pod is on the node (the target pod of a migration into it, an old finished pod) has
    /// not moved when its node is another one: it never was on the node.
    pub fn starting_from(&mut self, vmis: &BTreeMap<PodKey, VmStart>) {
        for (key, vm) in self.vms.iter_mut() {
            let start = vmis.get(key).cloned().unwrap_or_default();
            vm.was_on = start.node.filter(|n| self.nodes.contains(n));
            vm.uid = start.uid;
        }
    }

    /// The progress event: the numbers and what the drain waits for.
    pub fn progress(&self) -> Event {
        Event::Progress {
            counts: self.counts(),
            waiting_for: self.waiting_for(),
        }
    }

    /// Holds a VM back: its running pods are not evicted and block the drain from the
    /// start (the plan knows no node can take it: evicting it would only mark it, and
    /// KubeVirt would create migration after migration that cannot schedule).
    pub fn hold_back(&mut self, vm: &PodKey, reason: &str, message: &str) -> Vec<Event> {
        let Some(task) = self.vms.get_mut(vm) else {
            return Vec::new();
        };
        task.blocked = true;
        let mut events = Vec::new();
        for k in &task.pods {
            if let Some(t) = self.pods.get_mut(k)
                && t.phase != "Succeeded"
                && t.phase != "Failed"
            {
                t.state = PodState::Blocked {
                    reason: reason.to_string(),
                    message: message.to_string(),
                };
                events.push(Event::Blocked {
                    namespace: k.0.clone(),
                    pod: k.1.clone(),
                    vmi: Some(vm.1.clone()),
                    reason: reason.to_string(),
                    message: message.to_string(),
                });
            }
        }
        events
    }

    /// The VMs not moved that are caught in a loop (as last seen), with the loop: the
    /// summary says its way out before it offers to resume.
    pub fn loops(&self) -> Vec<(PodKey, StuckSeen)> {
        self.vms
            .iter()
            .filter(|(_, vm)| !vm.done)
            .filter_map(|(k, vm)| vm.seen.stuck.clone().map(|s| (k.clone(), s)))
            .collect()
    }

    /// The VMs the drain follows, (namespace, name).
    pub fn vm_keys(&self) -> impl Iterator<Item = &PodKey> {
        self.vms.keys()
    }

    /// The pods the drain evicts, (namespace, name).
    pub fn pod_keys(&self) -> impl Iterator<Item = &PodKey> {
        self.pods.keys()
    }

    fn evacuating(&self) -> u32 {
        self.vms
            .values()
            .filter(|v| !v.done && !v.blocked && v.seen.evacuation_node.is_some())
            .count() as u32
    }

    /// The pods to evict now, in order.
    pub fn due(&self, now_ms: u64) -> Vec<PodToEvict> {
        let mut room = self
            .settings
            .max_parallel
            .map(|n| n.saturating_sub(self.evacuating()));
        let mut out = Vec::new();
        for task in self.pods.values() {
            let PodState::Waiting { next_ms } = task.state else {
                continue;
            };
            if next_ms > now_ms {
                continue;
            }
            let finished = matches!(task.phase.as_str(), "Succeeded" | "Failed");
            // A VM that is not being evacuated yet takes a parallel slot.
            if let (Some(vmi), false) = (&task.pod.vmi, finished) {
                let vm = self.vms.get(&(task.pod.namespace.clone(), vmi.clone()));
                let starts = vm.is_none_or(|v| {
                    v.seen.evacuation_node.is_none()
                        && v.action.is_none_or(|a| a == Action::LiveMigrate)
                });
                if starts && let Some(r) = room.as_mut() {
                    if *r == 0 {
                        continue;
                    }
                    *r -= 1;
                }
            }
            out.push(task.pod.clone());
        }
        out
    }

    /// The answer to the eviction of `key`, at `now_ms`.
    pub fn answered(&mut self, key: &PodKey, answer: &Answer, now_ms: u64) -> Vec<Event> {
        let retry_ms = self.settings.retry_ms;
        // A target pod is named with its migration, as the watches show it.
        let target = self
            .pods
            .get(key)
            .and_then(|t| t.pod.vmi.as_ref())
            .and_then(|v| self.vms.get(&(key.0.clone(), v.clone())))
            .and_then(|vm| vm.seen.migration.clone());
        let target = target_pod_words(target.as_ref(), &self.nodes);
        let Some(task) = self.pods.get_mut(key) else {
            return Vec::new();
        };
        let (namespace, pod) = key.clone();
        let vmi = task.pod.vmi.clone();
        let mut events = Vec::new();
        let first_time = task.last_shown.as_ref() != Some(answer);
        task.last_shown = Some(answer.clone());
        match answer {
            Answer::Evicted => {
                task.state = PodState::Evicted;
                task.accepted = true;
                events.push(Event::Evicted { namespace, pod });
            }
            Answer::Gone => {
                task.state = PodState::Gone;
                events.push(Event::PodGone { namespace, pod });
            }
            Answer::EvacuationStarted | Answer::EvacuationInProgress => {
                task.state = PodState::Evacuating;
                if first_time && let Some(vmi) = vmi {
                    events.push(Event::EvacuationStarted {
                        namespace,
                        vmi,
                        node: task.pod.node.clone(),
                    });
                }
            }
            a if a.blocks() || !a.retry() => {
                let (reason, message) = blocked_words(a);
                task.state = PodState::Blocked {
                    reason: reason.clone(),
                    message: message.clone(),
                };
                if let Some(v) = &vmi
                    && let Some(vm) = self.vms.get_mut(&(namespace.clone(), v.clone()))
                {
                    vm.blocked = true;
                }
                events.push(Event::Blocked {
                    namespace,
                    pod,
                    vmi,
                    reason,
                    message,
                });
            }
            a => {
                task.state = PodState::Waiting {
                    next_ms: now_ms + retry_ms,
                };
                if first_time {
                    let (reason, pdb, mut message) = waiting_words(a);
                    if *a == Answer::TargetPod {
                        message = target.clone();
                    }
                    events.push(Event::Waiting {
                        namespace,
                        pod,
                        vmi,
                        reason,
                        pdb,
                        message,
                        retry_seconds: retry_ms / 1000,
                    });
                }
            }
        }
        events
    }

    /// The watches' view changed: what it means for the drain's pods and VMs.
    pub fn observe(&mut self, world: &World, now_ms: u64) -> Vec<Event> {
        let mut events = Vec::new();
        for (key, task) in self.pods.iter_mut() {
            match world.pods.get(key) {
                None => {
                    if task.state != PodState::Gone {
                        task.state = PodState::Gone;
                        events.push(Event::PodGone {
                            namespace: key.0.clone(),
                            pod: key.1.clone(),
                        });
                    }
                }
                Some(phase) => {
                    let finished = matches!(phase.as_str(), "Succeeded" | "Failed");
                    let newly_finished = finished && task.phase != *phase;
                    task.phase = phase.clone();
                    // A finished pod (a migration's source) is evicted at once.
                    if newly_finished && task.state == PodState::Evacuating {
                        task.state = PodState::Waiting { next_ms: now_ms };
                    }
                }
            }
        }
        for (key, vm) in self.vms.iter_mut() {
            let Some(seen) = world.vms.get(key) else {
                continue;
            };
            let (namespace, vmi) = key.clone();
            // The evacuation was cancelled (virtctl evacuate-cancel): ask again. Only when
            // the VMI still runs on a drained node and no migration of it succeeded:
            // virt-handler clears the mark after every successful migration, and a VMI
            // that runs elsewhere moved (its old pod is that migration's source).
            if vm.seen.evacuation_node.is_some()
                && seen.evacuation_node.is_none()
                && !vm.done
                && !migrated_away(seen, &self.nodes)
            {
                for k in &vm.pods {
                    if let Some(task) = self.pods.get_mut(k)
                        && task.state == PodState::Evacuating
                    {
                        task.state = PodState::Waiting { next_ms: now_ms };
                    }
                }
            }
            // A VMI that was elsewhere now runs on a drained node (a migration into it
            // ended there): from now on it is one the drain moves.
            if vm.was_on.is_none()
                && seen.exists
                && seen.phase == "Running"
                && let Some(node) = seen.node.as_ref().filter(|n| self.nodes.contains(*n))
            {
                vm.was_on = Some(node.clone());
                vm.uid = seen.uid.clone();
                // The migration that brought it (its watch may not show it ended yet).
                let by = seen
                    .migration
                    .as_ref()
                    .filter(|m| m.target_node.as_deref() == Some(node.as_str()))
                    .map(|m| m.name.clone());
                vm.came_by = Some(by.clone());
                events.push(Event::Arrived {
                    namespace: namespace.clone(),
                    vmi: vmi.clone(),
                    node: node.clone(),
                    migration: by,
                });
            }
            if let Some(m) = &seen.migration {
                let attempt = vm.attempt_of(m);
                let shown = vm.shown_phase.get(&m.name);
                // A phase, or post-copy: the changes an operator must see (not every mode).
                let phase_key = format!(
                    "{}|{}",
                    m.phase,
                    m.mode.as_deref().filter(|m| *m == "PostCopy").unwrap_or("")
                );
                if shown != Some(&phase_key) && m.phase != "Failed" {
                    vm.shown_phase.insert(m.name.clone(), phase_key);
                    let incoming = vm.was_on.is_none()
                        && m.target_node
                            .as_ref()
                            .is_some_and(|t| self.nodes.contains(t));
                    events.push(Event::Migration {
                        namespace: namespace.clone(),
                        vmi: vmi.clone(),
                        migration: m.name.clone(),
                        phase: m.phase.clone(),
                        // Before the hand-off the source is where the VMI runs.
                        source_node: m.source_node.clone().or_else(|| seen.node.clone()),
                        target_node: m.target_node.clone(),
                        source_pod: m.source_pod.clone(),
                        target_pod: m.target_pod.clone(),
                        mode: m.mode.clone(),
                        point_of_no_return: m.mode.as_deref() == Some("PostCopy") && !m.is_final(),
                        evacuation: m.evacuation,
                        attempt,
                        previous_failure: vm.previous_failure(&m.name),
                        backoff_until: m
                            .backoff_until
                            .clone()
                            .filter(|_| m.phase == "Pending" || m.phase.is_empty()),
                        incoming,
                    });
                }
                if m.phase == "Failed" && !vm.failed.iter().any(|(f, _)| *f == m.name) {
                    vm.failed.push((m.name.clone(), m.failure.clone()));
                    let failures = vm.failed.len() as u32;
                    // An evacuation loop that began before the drain: this failure is one
                    // more turn of it, and vmctl stops waiting now.
                    let looping = seen
                        .stuck
                        .as_ref()
                        .filter(|s| s.kind == LoopKind::EvacuationLoop);
                    let give_up = failures >= self.settings.give_up_after || looping.is_some();
                    let retry = seen.evacuation_node.is_some() && !give_up;
                    events.push(Event::MigrationFailed {
                        namespace: namespace.clone(),
                        vmi: vmi.clone(),
                        migration: m.name.clone(),
                        reason: m.failure.clone(),
                        failures,
                        retry,
                        give_up_after: self.settings.give_up_after,
                    });
                    if give_up && !vm.blocked {
                        vm.blocked = true;
                        let (reason, message) = match looping {
                            Some(l) => (l.kind.as_str().to_string(), l.message.clone()),
                            None => (
                                "migration-keeps-failing".to_string(),
                                format!(
                                    "{failures} evacuation migrations failed (last: {}); KubeVirt keeps retrying with backoff, vmctl stops waiting for it. Way out: stop the drain, then vmctl abort --evacuation vm/{vmi} -n {namespace} (uncordoning alone does not stop the retries)",
                                    m.failure.as_deref().unwrap_or("no reason recorded")
                                ),
                            ),
                        };
                        for pkey in &vm.pods {
                            let Some(task) = self.pods.get_mut(pkey) else {
                                continue;
                            };
                            if !matches!(task.state, PodState::Gone) {
                                task.state = PodState::Blocked {
                                    reason: reason.clone(),
                                    message: message.clone(),
                                };
                                events.push(Event::Blocked {
                                    namespace: namespace.clone(),
                                    pod: pkey.1.clone(),
                                    vmi: Some(vmi.clone()),
                                    reason: reason.clone(),
                                    message: message.clone(),
                                });
                            }
                        }
                    }
                }
            }
            // A decentralized migration stuck waiting for its peer: KubeVirt's evacuation
            // skips a VMI with an unfinished migration (evacuation.go), so nothing moves it.
            if let Some(stuck) = seen
                .stuck
                .as_ref()
                .filter(|s| s.kind == LoopKind::DecentralizedSyncStuck)
                && !vm.blocked
                && !vm.done
            {
                vm.blocked = true;
                for pkey in &vm.pods {
                    let Some(task) = self.pods.get_mut(pkey) else {
                        continue;
                    };
                    if !matches!(task.state, PodState::Gone) {
                        task.state = PodState::Blocked {
                            reason: stuck.kind.as_str().to_string(),
                            message: stuck.message.clone(),
                        };
                        events.push(Event::Blocked {
                            namespace: namespace.clone(),
                            pod: pkey.1.clone(),
                            vmi: Some(vmi.clone()),
                            reason: stuck.kind.as_str().to_string(),
                            message: stuck.message.clone(),
                        });
                    }
                }
            }
            // Moved (the VMI that was on a drained node runs on another one), or stopped
            // (its pods gone). A VMI that never was on the node moved from nowhere.
            if !vm.done
                && let Some(from) = vm.was_on.clone()
            {
                let elsewhere = seen.exists
                    && seen.phase == "Running"
                    && seen.node.as_deref().is_some_and(|n| n != from);
                // Another VMI of the same name (its VM started it again): not a move.
                let replaced = matches!((&vm.uid, &seen.uid), (Some(a), Some(b)) if a != b);
                if elsewhere && replaced {
                    vm.done = true;
                    vm.stopped = true;
                    events.push(Event::Stopped {
                        namespace: namespace.clone(),
                        vmi: vmi.clone(),
                        back_on: seen.node.clone(),
                    });
                } else if vm.action.is_some_and(Action::stops_the_vm) {
                    let pods_gone = vm
                        .pods
                        .iter()
                        .filter_map(|k| self.pods.get(k))
                        .all(|t| t.state == PodState::Gone);
                    if pods_gone {
                        vm.done = true;
                        vm.stopped = true;
                        events.push(Event::Stopped {
                            namespace: namespace.clone(),
                            vmi: vmi.clone(),
                            back_on: if elsewhere { seen.node.clone() } else { None },
                        });
                    }
                } else if elsewhere
                    && landed(seen).is_some_and(|m| !m.is_final())
                    && now_ms.saturating_sub(*vm.landed_since.get_or_insert(now_ms)) < MOVED_HOLD_MS
                {
                    // The VMI's watch shows the new node before the VMIM's shows the end:
                    // "moved" follows the migration's Succeeded line.
                } else if elsewhere {
                    vm.done = true;
                    let landed = landed(seen);
                    let migration = landed.map(|m| m.name.clone());
                    let attempt = landed.map_or(0, |m| vm.attempt_of(m));
                    events.push(Event::Moved {
                        namespace: namespace.clone(),
                        vmi: vmi.clone(),
                        from,
                        to: seen.node.clone().unwrap_or_default(),
                        migration,
                        attempt,
                        predicted: vm.predicted.clone(),
                    });
                }
            }
            vm.seen = seen.clone();
        }
        events
    }

    /// Every pod was evicted, handed to KubeVirt, is gone or blocks (`--no-wait` ends here).
    pub fn handed_off(&self) -> bool {
        self.pods
            .values()
            .all(|t| !matches!(t.state, PodState::Waiting { .. }))
    }

    /// Over, and how; `None` while anything can still move.
    pub fn outcome(&self) -> Option<Outcome> {
        // A move seen but not said yet (its migration's end not shown yet).
        if self
            .vms
            .values()
            .any(|v| !v.done && v.landed_since.is_some())
        {
            return None;
        }
        let mut blocked = false;
        for task in self.pods.values() {
            match task.state {
                PodState::Gone => {}
                PodState::Blocked { .. } => blocked = true,
                PodState::Waiting { .. } | PodState::Evacuating | PodState::Evicted => return None,
            }
        }
        Some(if blocked {
            Outcome::Blocked
        } else {
            Outcome::Drained
        })
    }

    /// The drain's numbers, each counted on its own.
    pub fn counts(&self) -> Counts {
        let on_node = || self.vms.values().filter(|v| v.was_on.is_some());
        Counts {
            pods_total: self.pods.len(),
            evictions_accepted: self.pods.values().filter(|t| t.accepted).count(),
            pods_gone: self
                .pods
                .values()
                .filter(|t| t.state == PodState::Gone)
                .count(),
            migrations_in_flight: self
                .vms
                .values()
                .filter(|v| !v.done)
                .filter(|v| v.seen.migration.as_ref().is_some_and(|m| !m.is_final()))
                .count(),
            vms_total: on_node().count(),
            vms_moved: on_node().filter(|v| v.done && !v.stopped).count(),
            vms_stopped: on_node().filter(|v| v.done && v.stopped).count(),
            vms_blocked: self.vms.values().filter(|v| !v.done && v.blocked).count(),
        }
    }

    /// What the drain waits for now: each of its pods not gone and not a blocker, with the
    /// reason it is still there (the VM's migration, named, for a VM's pod).
    pub fn waiting_for(&self) -> Vec<Wait> {
        let mut out = Vec::new();
        for (key, task) in &self.pods {
            let vm = task
                .pod
                .vmi
                .as_ref()
                .and_then(|v| self.vms.get(&(key.0.clone(), v.clone())));
            let m = vm.and_then(|v| v.seen.migration.as_ref());
            let finished = matches!(task.phase.as_str(), "Succeeded" | "Failed");
            let (reason, migration, message): (&str, Option<String>, String) = match &task.state {
                PodState::Gone | PodState::Blocked { .. } => continue,
                PodState::Evicted => (
                    "terminating",
                    None,
                    "eviction accepted: the pod is being deleted".to_string(),
                ),
                PodState::Waiting { .. } => match &task.last_shown {
                    // The source pod of a migration that ended: it goes next.
                    Some(Answer::EvacuationStarted | Answer::EvacuationInProgress)
                        if finished =>
                    {
                        (
                            "source-pod",
                            m.map(|m| m.name.clone()),
                            format!(
                                "the VM's old pod, finished ({}) after its migration: evicted next",
                                task.phase
                            ),
                        )
                    }
                    Some(Answer::EvacuationStarted | Answer::EvacuationInProgress)
                        if vm.is_some_and(|v| migrated_away(&v.seen, &self.nodes)) =>
                    {
                        (
                            "source-pod",
                            m.map(|m| m.name.clone()),
                            "the VM's old pod, left by its migration: evicted next".to_string(),
                        )
                    }
                    Some(Answer::EvacuationStarted | Answer::EvacuationInProgress) => (
                        "evacuation",
                        None,
                        "its evacuation was cancelled (the VMI is no longer marked): its eviction is asked again".to_string(),
                    ),
                    None if finished => (
                        "not-asked-yet",
                        None,
                        format!("a finished pod ({}): evicted next", task.phase),
                    ),
                    None => (
                        "queued",
                        None,
                        match self.settings.max_parallel {
                            Some(n) => format!(
                                "not evicted yet: --max-parallel {n}, it waits for a VM to leave"
                            ),
                            None => "not evicted yet".to_string(),
                        },
                    ),
                    Some(Answer::TargetPod) => (
                        "target-pod",
                        m.map(|m| m.name.clone()),
                        target_pod_words(m, &self.nodes),
                    ),
                    Some(a) => {
                        let (reason, _, message) = waiting_words(a);
                        let reason = match reason.as_str() {
                            "pdb" => "pdb",
                            "hotplug" => "hotplug",
                            "throttled" => "throttled",
                            "server-error" => "server-error",
                            _ => "refused",
                        };
                        (reason, None, message)
                    }
                },
                PodState::Evacuating => match vm {
                    Some(vm) => evacuation_words(vm, finished),
                    None => ("evacuation", None, "KubeVirt evacuates it".to_string()),
                },
            };
            out.push(Wait {
                namespace: key.0.clone(),
                pod: key.1.clone(),
                vmi: task.pod.vmi.clone(),
                reason: reason.to_string(),
                migration,
                message,
            });
        }
        out
    }

    /// Where everything stands.
    pub fn account(&self) -> Account {
        let mut a = Account {
            counts: self.counts(),
            waiting_for: self.waiting_for(),
            ..Account::default()
        };
        for (key, vm) in &self.vms {
            if !vm.done {
                let active = vm.seen.migration.as_ref().filter(|m| !m.is_final());
                // Marked (the watch showed it, or the webhook's answer said so) or migrating.
                let handed_to_kubevirt = vm
                    .pods
                    .iter()
                    .filter_map(|k| self.pods.get(k))
                    .any(|t| t.state == PodState::Evacuating);
                let counted = !vm.blocked && vm.was_on.is_some();
                // Every migration the counts hold is listed (a VMI never on the node, its
                // target pod on it, included); a VM of the drain handed to KubeVirt too.
                if active.is_some()
                    || (counted && (handed_to_kubevirt || vm.seen.evacuation_node.is_some()))
                {
                    a.migrating.push(InFlight {
                        namespace: key.0.clone(),
                        vmi: key.1.clone(),
                        migration: vm.seen.migration.as_ref().map(|m| m.name.clone()),
                        phase: vm.seen.migration.as_ref().map(|m| m.phase.clone()),
                        post_copy: active.is_some_and(|m| m.mode.as_deref() == Some("PostCopy")),
                        into: active
                            .and_then(|m| m.target_node.clone())
                            .filter(|t| vm.was_on.is_none() && self.nodes.contains(t)),
                        evacuation: handed_to_kubevirt
                            || vm.seen.evacuation_node.is_some()
                            || vm.seen.migration.as_ref().is_some_and(|m| m.evacuation),
                    });
                }
                // A VMI that never was on the node (its target pod is, or an old pod of
                // it) is no VM of the drain: its pod is waited for, named in waiting_for.
                if counted {
                    a.vms_left += 1;
                }
                continue;
            }
            if vm.stopped {
                a.stopped.push(format!("{}/{}", key.0, key.1));
            } else if let Some(from) = &vm.was_on {
                let migration = landed(&vm.seen).map(|m| m.name.clone());
                let attempt = match (&migration, vm.seen.migration.as_ref()) {
                    (Some(m), Some(seen)) if seen.evacuation => vm
                        .attempts
                        .iter()
                        .position(|x| x == m)
                        .map_or(0, |i| i as u32 + 1),
                    (Some(_), _) => 1,
                    (None, _) => 0,
                };
                let to = vm.seen.node.clone().unwrap_or_default();
                a.moved.push(Moved {
                    namespace: key.0.clone(),
                    vmi: key.1.clone(),
                    from: from.clone(),
                    as_predicted: vm.predicted.as_ref().map(|p| *p == to),
                    predicted: vm.predicted.clone(),
                    to,
                    migration,
                    attempt,
                    came_by: vm
                        .came_by
                        .clone()
                        .map(|by| by.unwrap_or_else(|| "a migration".into())),
                });
            }
        }
        for (key, task) in &self.pods {
            match &task.state {
                PodState::Gone => {}
                PodState::Blocked { reason, message } => {
                    a.pods_left += 1;
                    a.blocked.push(BlockedPod {
                        namespace: key.0.clone(),
                        pod: key.1.clone(),
                        vmi: task.pod.vmi.clone(),
                        reason: reason.clone(),
                        message: message.clone(),
                    });
                }
                _ => a.pods_left += 1,
            }
        }
        // Past the point of no return first.
        a.migrating.sort_by_key(|m| !m.post_copy);
        a
    }

    /// The moves the account claims, kept only where a fresh read of the VMI from the API
    /// (`now`: its uid and `status.nodeName`, `None` when it is gone) shows it on the node
    /// it moved to; the others go back to the VMs left.
    pub fn confirmed(mut account: Account, now: &BTreeMap<PodKey, Option<VmStart>>) -> Account {
        let (kept, unconfirmed): (Vec<Moved>, Vec<Moved>) = std::mem::take(&mut account.moved)
            .into_iter()
            .partition(|m| {
                now.get(&(m.namespace.clone(), m.vmi.clone()))
                    .and_then(|v| v.as_ref())
                    .and_then(|v| v.node.as_deref())
                    .is_some_and(|n| n == m.to && n != m.from)
            });
        account.vms_left += unconfirmed.len();
        account.counts.vms_moved = kept.len();
        account.moved = kept;
        account
    }
}

/// The VMI runs on a node the drain does not drain, or gone from the drained nodes by a
/// migration that succeeded: whatever cleared its evacuation mark, it was no cancel.
fn migrated_away(seen: &VmSeen, nodes: &std::collections::BTreeSet<String>) -> bool {
    let on_drained = seen.exists && seen.node.as_ref().is_some_and(|n| nodes.contains(n));
    !on_drained
        || seen
            .migration
            .as_ref()
            .is_some_and(|m| m.phase == "Succeeded")
}

/// The migration that brought the VMI where it runs: the newest, when it succeeded or
/// its target is the VMI's node (the VMI's watch can show the new node before the VMIM's
/// shows the end).
fn landed(seen: &VmSeen) -> Option<&MigrationSeen> {
    seen.migration
        .as_ref()
        .filter(|m| {
            m.phase == "Succeeded" || (m.target_node.is_some() && m.target_node == seen.node)
        })
        .filter(|m| m.phase != "Failed")
}

/// A migration's target pod on a drained node, in words: which migration, between which
/// nodes, whether it is past the point of no return, and that it goes when it ends.
fn target_pod_words(
    m: Option<&MigrationSeen>,
    nodes: &std::collections::BTreeSet<String>,
) -> String {
    let Some(m) = m else {
        return "a migration's target pod: it goes when the migration ends".to_string();
    };
    match m.phase.as_str() {
        "Succeeded" => {
            return format!(
                "the target pod of migration {}, which succeeded: the VM runs from it now, its eviction is asked again",
                m.name
            );
        }
        "Failed" => {
            return format!(
                "the target pod of migration {}, which failed: KubeVirt removes it",
                m.name
            );
        }
        _ => {}
    }
    let post_copy = m.mode.as_deref() == Some("PostCopy");
    let into = m
        .target_node
        .as_ref()
        .filter(|t| nodes.contains(*t))
        .map(|t| format!(" into {t}"))
        .unwrap_or_default();
    format!(
        "target pod of {}migration {}{} ({} → {}){}: it goes when the migration ends",
        if post_copy { "post-copy " } else { "" },
        m.name,
        into,
        m.source_node.as_deref().unwrap_or("?"),
        m.target_node.as_deref().unwrap_or("?"),
        if post_copy {
            ", past the point of no return (an abort now loses the guest)"
        } else {
            ""
        }
    )
}

/// A VM handed to KubeVirt, in words: the attempt its chain of migrations is at.
fn evacuation_words(vm: &VmTask, pod_finished: bool) -> (&'static str, Option<String>, String) {
    let Some(m) = vm.seen.migration.as_ref() else {
        return (
            "evacuation",
            None,
            "marked for evacuation; KubeVirt has not created its migration yet".to_string(),
        );
    };
    let attempt = vm
        .attempts
        .iter()
        .position(|x| *x == m.name)
        .map_or(vm.attempts.len() as u32 + 1, |i| i as u32 + 1);
    let previous = vm
        .previous_failure(&m.name)
        .map(|r| format!(" (attempt {} failed: {r})", attempt.saturating_sub(1)))
        .unwrap_or_default();
    let name = Some(m.name.clone());
    match m.phase.as_str() {
        "Succeeded" if pod_finished => (
            "source-pod",
            name,
            format!(
                "source pod of migration {} (succeeded): evicted next",
                m.name
            ),
        ),
        "Succeeded" if m.target_node.is_some() && m.target_node == vm.seen.node => (
            "source-pod",
            name,
            format!(
                "source pod of migration {} (succeeded, the VM runs on {} now): KubeVirt shuts it down",
                m.name,
                m.target_node.as_deref().unwrap_or("its new node")
            ),
        ),
        "Succeeded" => (
            "migrating",
            name,
            format!(
                "migration {} succeeded; waiting to see the VMI on {}",
                m.name,
                m.target_node.as_deref().unwrap_or("its new node")
            ),
        ),
        "Failed" => (
            "evacuation",
            name,
            format!(
                "attempt {attempt}, migration {}, failed: {}; KubeVirt creates the next while the VMI stays marked",
                m.name,
                m.failure.as_deref().unwrap_or("no reason recorded")
            ),
        ),
        _ if m.target_node.is_some() && m.target_node == vm.seen.node => (
            "migrating",
            name,
            format!(
                "migration {}: the VMI runs on {} now; waiting for the migration to report its end",
                m.name,
                m.target_node.as_deref().unwrap_or("its new node")
            ),
        ),
        "Pending" | "" if m.backoff_until.is_some() => (
            "backoff",
            name,
            format!(
                "attempt {attempt}, migration {}{previous}, is held by KubeVirt's backoff ({} s) until {}",
                m.name,
                m.backoff_seconds.unwrap_or_default(),
                m.backoff_until
                    .as_deref()
                    .map(|t| t.get(11..19).map_or(t.to_string(), |c| format!("{c} UTC")))
                    .unwrap_or_default()
            ),
        ),
        phase => (
            "migrating",
            name,
            format!(
                "attempt {attempt}, migration {}{previous}, {} {} → {}{}",
                m.name,
                if phase.is_empty() { "created" } else { phase },
                m.source_node
                    .as_deref()
                    .or(vm.seen.node.as_deref())
                    .unwrap_or("?"),
                m.target_node
                    .as_deref()
                    .unwrap_or("(target not chosen yet)"),
                match m.mode.as_deref() {
                    Some("PostCopy") => {
                        ", post-copy: past the point of no return (an abort now loses the guest)"
                            .to_string()
                    }
                    Some(mode) => format!(", {mode}"),
                    None => String::new(),
                }
            ),
        ),
    }
}

fn blocked_words(a: &Answer) -> (String, String) {
    match a {
        Answer::NotMigratable { message } => ("not-live-migratable".into(), message.clone()),
        Answer::MoreThanOnePdb => (
            "more-than-one-pdb".into(),
            crate::policy::pdb::MORE_THAN_ONE_PDB.into(),
        ),
        Answer::Forbidden { message } => ("forbidden".into(), message.clone()),
        Answer::PdbNeverSyncs { message, .. } => ("pdb-never-syncs".into(), message.clone()),
        Answer::Failed { status, message } => (
            "eviction-failed".into(),
            format!("HTTP {status}: {message}"),
        ),
        other => ("refused".into(), format!("{other:?}")),
    }
}

fn waiting_words(a: &Answer) -> (String, Option<String>, String) {
    match a {
        Answer::Budget { pdb, message } => ("pdb".into(), pdb.clone(), message.clone()),
        Answer::TargetPod => (
            "target-pod".into(),
            None,
            target_pod_words(None, &Default::default()),
        ),
        Answer::HotplugPod { message } => ("hotplug".into(), None, message.clone()),
        Answer::TooManyRequests { message } => ("throttled".into(), None, message.clone()),
        Answer::Failed { status, message } => (
            "server-error".into(),
            None,
            format!("HTTP {status}: {message}"),
        ),
        other => ("refused".into(), None, format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests;
