//! `plan_drain`: what draining node(s) will do to every VMI on them (FACTS §2, §4, §5.2, §6).
//! Pure: plain objects in, a plan out.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::Serialize;

use super::budget::completion_budget_seconds;
use super::eviction::{StrategySource, effective_eviction_strategy};
use super::index::{MigrationIndex, PodIndex, quotas_by_namespace, work};
use super::migratability::{Blocker, migratability};
use super::migration_policy::{effective_config, matching_policy};
use super::pdb::{
    Budget, BudgetSource, EvaluatedPdb, EvictionAnswer, MORE_THAN_ONE_PDB, PdbIndex, PdbSelector,
    budget, evict,
};
use super::placement::{TargetPod, TargetSearch};
use super::pods::{CREATED_BY_LABEL, LAUNCHER_LABEL, LAUNCHER_VALUE};
use super::scheduling::{
    NodeUsage, Resources, SelectorIndex, SpreadSelector, amount, holds_resources, pod_request,
    pod_requests, spread_selectors,
};
use crate::model::{
    EvictionStrategy, KubeVirt, MigrationPolicy, Namespace, Node, Pod, PodDisruptionBudget,
    Quantity, ResourceQuota, Time, VirtualMachine, VirtualMachineInstance,
    VirtualMachineInstanceMigration,
};

/// Assumed transfer rate when the cluster sets no `bandwidthPerMigration`: 256 MiB/s, a
/// conservative figure for pre-copy over a 10 GbE pod network with multifd.
pub const DEFAULT_BANDWIDTH: u64 = 256 * 1024 * 1024;
/// Assumed time to create, schedule and hand off a target pod before memory moves.
pub const SETUP_SECONDS: u64 = 15;
/// Estimated launcher overhead when a VMI's pod is not visible.
pub const LAUNCHER_OVERHEAD: u64 = 300 * 1024 * 1024;
/// virt-controller deletes a target pod unschedulable for this long (FACTS §6.2).
pub const UNSCHEDULABLE_TIMEOUT_SECONDS: u64 = 300;
/// KubeVirt's default `terminationGracePeriodSeconds` for VMIs.
pub const DEFAULT_GRACE_SECONDS: u64 = 180;

/// Everything the planner reads.
#[derive(Debug, Clone, Default)]
pub struct DrainInputs {
    /// The nodes drained together.
    pub drain: Vec<String>,
    /// VMIs on the drained nodes.
    pub vmis: Vec<VirtualMachineInstance>,
    /// VMIs migrating into the drained nodes (label kubevirt.io/migrationTargetNodeName).
    pub incoming: Vec<VirtualMachineInstance>,
    pub vms: Vec<VirtualMachine>,
    /// All VMIMs of the cluster (in-flight ones take parallel slots).
    pub vmims: Vec<VirtualMachineInstanceMigration>,
    pub nodes: Vec<Node>,
    /// The pods the plan inspects: at least those on the drained nodes and the launcher pods
    /// of their VMIs (all pods of the cluster will do). They count towards node capacity.
    pub pods: Vec<Pod>,
    /// What the pods *not* in `pods` hold on each node (see [`split_pods`]): their requests,
    /// their number and how many each topology spread selector of `vmis` selects. The
    /// capacity facts of the rest of the cluster.
    pub node_usage: BTreeMap<String, NodeUsage>,
    pub pdbs: Vec<PodDisruptionBudget>,
    pub quotas: Vec<ResourceQuota>,
    pub namespaces: Vec<Namespace>,
    pub kubevirt: Option<KubeVirt>,
    pub policies: Vec<MigrationPolicy>,
    /// `--bandwidth`, bytes per second.
    pub bandwidth: Option<u64>,
    /// The as-of clock, for the elapsed time of migrations in flight.
    pub now: Option<Time>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    LiveMigrate,
    Shutdown,
    ShutdownNotMigratable,
    BlocksDrain,
    External,
    AlreadyMigrating,
    NoTarget,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::LiveMigrate => "live-migrate",
            Action::Shutdown => "shutdown",
            Action::ShutdownNotMigratable => "shutdown-not-migratable",
            Action::BlocksDrain => "blocks-drain",
            Action::External => "external",
            Action::AlreadyMigrating => "already-migrating",
            Action::NoTarget => "no-target",
        }
    }

    pub fn blocks(self) -> bool {
        matches!(self, Action::BlocksDrain | Action::NoTarget)
    }

    pub fn stops_the_vm(self) -> bool {
        matches!(self, Action::Shutdown | Action::ShutdownNotMigratable)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    WillComplete,
    WillCompleteWithShutdowns,
    WillBlock,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::WillComplete => "will-complete",
            Verdict::WillCompleteWithShutdowns => "will-complete-with-shutdowns",
            Verdict::WillBlock => "will-block",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reason {
    pub reason: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VmiPlan {
    pub namespace: String,
    pub name: String,
    pub vm: Option<String>,
    pub node: String,
    pub eviction_strategy: String,
    pub eviction_strategy_source: StrategySource,
    pub live_migratable: Option<bool>,
    /// Why it cannot migrate or why it blocks, as the conditions and objects say.
    pub reasons: Vec<Reason>,
    pub action: Action,
    /// The action in plain words.
    pub explanation: String,
    /// What to change, when the action is not a clean live migration.
    pub fix: Option<String>,
    /// Predicted target node (the scheduler makes the final choice).
    pub target: Option<String>,
    /// 1-based start wave of a live migration.
    pub wave: Option<u32>,
    pub start_seconds: Option<u64>,
    pub end_seconds: Option<u64>,
    /// Predicted duration of this VM's part.
    pub estimate_seconds: Option<u64>,
    /// The completion budget KubeVirt allows before it aborts (or switches mode).
    pub budget_seconds: Option<u64>,
    pub memory_bytes: Option<u64>,
    /// The launcher pod's memory request a target pod needs.
    pub pod_memory_request_bytes: u64,
    pub migration_policy: Option<String>,
    pub allow_post_copy: bool,
    pub allow_auto_converge: bool,
    pub bandwidth_bytes_per_second: u64,
    pub evacuation_node: Option<String>,
    pub run_strategy: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DrainBlocker {
    /// `vmi`, `pdb`, `quota`, `external`.
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub reason: String,
    pub message: String,
    /// The VMIs it holds up.
    pub vmis: Vec<String>,
    /// False for things that only make the drain wait (an external controller, a PDB
    /// over pods that will complete anyway).
    pub blocking: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Incoming {
    pub namespace: String,
    pub name: String,
    pub source_node: Option<String>,
    pub target_node: Option<String>,
    pub target_pod: Option<String>,
    pub mode: Option<String>,
    /// Post-copy: an abort or a network failure now loses the guest.
    pub point_of_no_return: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    pub parallel_migrations_per_cluster: u32,
    pub parallel_outbound_migrations_per_node: u32,
    /// Migrations already counting against the cluster limit.
    pub in_flight_cluster: u32,
    /// Of those, per drained source node.
    pub in_flight_per_node: BTreeMap<String, u32>,
}

/// A PodDisruptionBudget the plan read, as the eviction API reads it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PdbReport {
    pub namespace: String,
    pub name: String,
    /// `nothing` (null selector), `everything` (`{}`: the whole namespace), `labels`, or
    /// `invalid` (the eviction API skips it).
    pub selects: String,
    /// Why the selector is invalid, naming the field.
    pub invalid: Option<String>,
    /// Its budget, when it selects a drained VMI's pod.
    pub budget: Option<Budget>,
    /// The drained VMIs whose launcher pods it selects.
    pub vmis: Vec<String>,
    /// What the eviction API answers for the VMIs the drain shuts down.
    pub evictions: Vec<PdbEviction>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PdbEviction {
    pub vmi: String,
    pub pod: String,
    pub http_status: u16,
    #[serde(flatten)]
    pub answer: EvictionAnswer,
    pub text: String,
}

/// KubeVirt's migration queue as the drain meets it (FACTS §3.1, §12): which pending
/// migrations start before the drain's evacuations and which wait behind them.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationQueue {
    /// `priority` (MigrationPriorityQueue: by spec.priority, then creation) or `fifo` (by
    /// creation only).
    pub mode: String,
    /// Why this mode was assumed.
    pub why: String,
    /// Pending migrations that get a slot before the drain's evacuations.
    pub ahead: Vec<QueuedMigration>,
    /// Pending migrations that wait behind the drain's evacuations.
    pub behind: Vec<QueuedMigration>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedMigration {
    pub namespace: String,
    pub name: String,
    pub vmi: String,
    /// `spec.priority`; none on KubeVirt before the gate (or for VMIMs created without it).
    pub priority: Option<String>,
    /// Its VMI is on a drained node: it takes that node's outbound slots.
    pub on_drained_node: bool,
    /// A condition that keeps it Pending (quota, backup, utility volumes): it takes no slot
    /// until that clears.
    pub held_by: Option<String>,
}

/// VMIM conditions that keep a migration Pending without taking a parallel slot (FACTS §3.2).
const HOLDING_CONDITIONS: [&str; 4] = [
    "migrationRejectedByResourceQuota",
    "migrationBlockedByUtilityVolumes",
    "migrationBlockedByBackup",
    "decentralizedMigrationBlocked",
];

fn held_by(m: &VirtualMachineInstanceMigration) -> Option<&'static str> {
    HOLDING_CONDITIONS
        .into_iter()
        .find(|c| m.condition(c).is_some_and(|c| c.is_true()))
}

/// The priority of the VMIMs the evacuation controller creates for a drain (a descheduler
/// eviction gets `system-maintenance` instead).
pub const EVACUATION_PRIORITY: &str = "system-critical";

/// KubeVirt's queue weight of a VMIM priority (`pkg/util/migrations/migrations.go`).
pub fn priority_weight(priority: Option<&str>) -> u32 {
    match priority {
        Some("system-critical") => 100,
        Some("user-triggered") => 50,
        Some("system-maintenance") => 20,
        _ => 0,
    }
}

/// VMI annotation set when the descheduler asked for the eviction (FACTS §2.1).
pub const EVICTION_SOURCE_ANNOTATION: &str = "kubevirt.io/eviction-source";

/// The priority of the evacuation VMIM KubeVirt creates for `vmi`: system-critical, or
/// system-maintenance when the descheduler marked it (it stays marked, so the drain's own
/// eviction does not change that).
pub fn evacuation_priority(vmi: &VirtualMachineInstance) -> &'static str {
    if vmi.evacuation_node().is_some()
        && vmi.annotation(EVICTION_SOURCE_ANNOTATION) == Some("descheduler")
    {
        "system-maintenance"
    } else {
        EVACUATION_PRIORITY
    }
}

/// Splits the cluster's pending migrations (phase Pending or unset) into those ahead of
/// the drain's evacuations and those behind them. With the priority queue
/// (MigrationPriorityQueue, GA in v1.9; on when any VMIM carries spec.priority) the
/// evacuations are system-critical: pending system-critical migrations, created earlier,
/// are ahead; user-triggered, system-maintenance and unprioritised ones wait behind.
/// Without it the queue is FIFO by creation: every pending migration is ahead.
/// Returns the queue and, in queue order, the VMIMs ahead and behind.
pub fn migration_queue<'a>(
    kubevirt: Option<&KubeVirt>,
    vmims: &'a [VirtualMachineInstanceMigration],
    on_drained: &dyn Fn(&VirtualMachineInstanceMigration) -> bool,
) -> (
    MigrationQueue,
    Vec<&'a VirtualMachineInstanceMigration>,
    Vec<&'a VirtualMachineInstanceMigration>,
) {
    let version = kubevirt.and_then(KubeVirt::version);
    let with_priority = vmims.iter().find(|m| m.spec.priority.is_some());
    let (priority, why) = if let Some(v) =
        version.filter(|v| crate::model::kubevirt::parse_version(v).is_some_and(|v| v >= (1, 9)))
    {
        (
            true,
            format!("KubeVirt {v}: MigrationPriorityQueue is GA since v1.9"),
        )
    } else if let Some(m) = with_priority {
        (
            true,
            format!(
                "VMIM {}/{} carries spec.priority: the MigrationPriorityQueue gate is on",
                m.namespace(),
                m.name()
            ),
        )
    } else {
        (
            false,
            format!(
                "{}: no VMIM carries spec.priority, so the MigrationPriorityQueue gate (alpha v1.7, beta v1.8, GA v1.9) is taken as off and the queue as FIFO by creation",
                version
                    .map(|v| format!("KubeVirt {v}"))
                    .unwrap_or_else(|| "KubeVirt version unknown".into())
            ),
        )
    };
    let mut pending: Vec<&VirtualMachineInstanceMigration> = vmims
        .iter()
        .filter(|m| {
            work::step(1);
            matches!(
                m.phase(),
                crate::model::vmim::MigrationPhase::Pending
                    | crate::model::vmim::MigrationPhase::Unset
            )
        })
        .collect();
    pending.sort_by(|a, b| {
        let weight = |m: &VirtualMachineInstanceMigration| {
            if priority {
                priority_weight(m.spec.priority.as_deref())
            } else {
                0
            }
        };
        weight(b)
            .cmp(&weight(a))
            .then_with(|| {
                a.metadata
                    .creation_timestamp
                    .as_ref()
                    .map(|t| t.0)
                    .cmp(&b.metadata.creation_timestamp.as_ref().map(|t| t.0))
            })
            .then_with(|| (a.namespace(), a.name()).cmp(&(b.namespace(), b.name())))
    });
    let evacuation = priority_weight(Some(EVACUATION_PRIORITY));
    let (ahead, behind): (Vec<_>, Vec<_>) = pending
        .into_iter()
        .partition(|m| !priority || priority_weight(m.spec.priority.as_deref()) >= evacuation);
    let describe = |m: &&VirtualMachineInstanceMigration| QueuedMigration {
        namespace: m.namespace().to_string(),
        name: m.name().to_string(),
        vmi: m.spec.vmi_name.clone(),
        priority: m.spec.priority.clone(),
        on_drained_node: on_drained(m),
        held_by: held_by(m).map(str::to_string),
    };
    let queue = MigrationQueue {
        mode: if priority { "priority" } else { "fifo" }.into(),
        why,
        ahead: ahead.iter().map(describe).collect(),
        behind: behind.iter().map(describe).collect(),
    };
    (queue, ahead, behind)
}

/// A migration the wave schedule places before or after the drain's own.
struct Queued {
    /// Queue weight (0 for all in a FIFO queue).
    weight: u32,
    /// The plan row it is, for a VMI on a drained node.
    plan: Option<usize>,
    /// Its source node, when it is a drained one (it then takes that node's slots).
    source: Option<String>,
    estimate: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DrainPlan {
    pub nodes: Vec<String>,
    pub verdict: Verdict,
    pub estimated_duration_seconds: u64,
    pub blockers: Vec<DrainBlocker>,
    pub vmis: Vec<VmiPlan>,
    /// VMIs on the nodes that the drain does not touch (finished: no running pod).
    pub skipped: Vec<Reason>,
    /// Migrations landing on a drained node: the drain waits for them, then moves them again.
    pub incoming: Vec<Incoming>,
    pub limits: Limits,
    /// Pending migrations ahead of and behind the drain's evacuations in KubeVirt's queue.
    pub queue: MigrationQueue,
    /// The PodDisruptionBudgets over the drained VMIs' pods (and invalid ones in their
    /// namespaces), with their budgets and the eviction API's answers.
    pub pdbs: Vec<PdbReport>,
    pub waves: u32,
    /// True when no KubeVirt CR was found and KubeVirt's defaults were assumed.
    pub defaults_assumed: bool,
    pub kubevirt_version: Option<String>,
    /// What the plan assumed, in words.
    pub assumptions: Vec<String>,
}

fn vmi_key(v: &VirtualMachineInstance) -> (String, String) {
    (v.namespace().to_string(), v.name().to_string())
}

fn pod_labels(p: &Pod) -> &BTreeMap<String, String> {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    p.metadata.labels.as_ref().unwrap_or(&EMPTY)
}

fn is_launcher_of(p: &Pod, vmi: &VirtualMachineInstance) -> bool {
    work::step(1);
    let l = pod_labels(p);
    l.get(LAUNCHER_LABEL).map(String::as_str) == Some(LAUNCHER_VALUE)
        && vmi.uid().is_some()
        && l.get(CREATED_BY_LABEL).map(String::as_str) == vmi.uid()
}

fn quantity_bytes(
    q: Option<&k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
) -> Option<u64> {
    q.and_then(|q| Quantity::parse(&q.0).ok())
        .map(|q| q.bytes())
}

/// What the migration target pod requests: the source launcher pod's requests (virt-controller
/// renders the target pod from the same VMI spec: cpu, memory, hugepages, ephemeral storage,
/// GPUs and host devices, `devices.kubevirt.io/*`). Without a visible launcher pod, the
/// VMI's own requests, one of each GPU/host device, and `pod_memory` (the estimate).
fn target_requests(
    vmi: &VirtualMachineInstance,
    launcher: Option<&Pod>,
    pod_memory: u64,
) -> Resources {
    let mut requests = match launcher {
        Some(p) => pod_requests(p),
        None => {
            let mut r: Resources = vmi
                .spec
                .domain
                .resources
                .requests
                .iter()
                .map(|(k, q)| (k.clone(), amount(k, q)))
                .collect();
            let devices = &vmi.spec.domain.devices;
            for d in devices.gpus.iter().chain(&devices.host_devices) {
                if let Some(name) = d.device_name.as_deref().filter(|n| !n.is_empty()) {
                    *r.entry(name.to_string()).or_default() += 1;
                }
            }
            r
        }
    };
    requests.insert("memory".into(), i128::from(pod_memory));
    requests
}

/// Quota headroom for one more launcher pod, or the reason there is none.
fn quota_problem(
    quotas: &[&ResourceQuota],
    pod_memory: u64,
    pod_memory_limit: u64,
) -> Option<(String, String)> {
    for q in quotas {
        let name = q.metadata.name.clone().unwrap_or_default();
        let Some(status) = q.status.as_ref() else {
            continue;
        };
        let (Some(hard), used) = (
            status.hard.as_ref(),
            status.used.clone().unwrap_or_default(),
        ) else {
            continue;
        };
        for (resource, needed) in [
            ("requests.memory", pod_memory),
            ("memory", pod_memory),
            ("limits.memory", pod_memory_limit),
            ("pods", 1),
        ] {
            let Some(h) = quantity_bytes(hard.get(resource)) else {
                continue;
            };
            let u = quantity_bytes(used.get(resource)).unwrap_or(0);
            let free = h.saturating_sub(u);
            if free < needed {
                let (fmt_free, fmt_needed) = if resource == "pods" {
                    (free.to_string(), needed.to_string())
                } else {
                    (
                        crate::render::fmt::bytes(free),
                        crate::render::fmt::bytes(needed),
                    )
                };
                return Some((
                    name.clone(),
                    format!(
                        "{resource} has {fmt_free} left, the migration target pod needs {fmt_needed} (migrationRejectedByResourceQuota)"
                    ),
                ));
            }
        }
    }
    None
}

/// Marks a VMI as held by a ResourceQuota; returns the blocker to list.
fn hold_by_quota(
    plan: &mut VmiPlan,
    quota: String,
    message: String,
    explanation: String,
) -> DrainBlocker {
    plan.action = Action::BlocksDrain;
    plan.reasons.push(Reason {
        reason: "migrationRejectedByResourceQuota".into(),
        message: message.clone(),
    });
    plan.explanation = explanation;
    plan.fix = Some(format!(
        "raise ResourceQuota {}/{quota} by one launcher pod ({} of memory)",
        plan.namespace,
        crate::render::fmt::bytes(plan.pod_memory_request_bytes)
    ));
    plan.start_seconds = None;
    plan.estimate_seconds = None;
    plan.end_seconds = None;
    DrainBlocker {
        kind: "quota".into(),
        namespace: Some(plan.namespace.clone()),
        name: quota,
        reason: "migrationRejectedByResourceQuota".into(),
        message,
        vmis: vec![format!("{}/{}", plan.namespace, plan.name)],
        blocking: true,
    }
}

/// Marks a VMI as having no feasible target; returns the blocker to list.
fn hold_without_target(
    plan: &mut VmiPlan,
    message: String,
    explanation: String,
    fix: String,
) -> DrainBlocker {
    plan.action = Action::NoTarget;
    plan.reasons.push(Reason {
        reason: "NoFeasibleTarget".into(),
        message: message.clone(),
    });
    plan.explanation = explanation;
    plan.fix = Some(fix);
    plan.start_seconds = None;
    plan.estimate_seconds = None;
    plan.end_seconds = None;
    DrainBlocker {
        kind: "vmi".into(),
        namespace: Some(plan.namespace.clone()),
        name: plan.name.clone(),
        reason: "NoFeasibleTarget".into(),
        message,
        vmis: vec![format!("{}/{}", plan.namespace, plan.name)],
        blocking: true,
    }
}

struct Candidate {
    index: usize,
    estimate: u64,
    source: String,
}

/// Splits the cluster's pods into those the plan inspects in full (on the drained nodes, or
/// created by one of `vmi_uids`) and, for all the others, only what they hold on their node:
/// their requests of every resource, their number, and how many of them each of `spread`
/// (the topology spread selectors of the drained VMIs, `scheduling::spread_selectors`)
/// selects. A drain of one node of a 10,000-VMI cluster then keeps a few dozen pods, not
/// ten thousand (issue 9).
pub fn split_pods(
    pods: impl IntoIterator<Item = Pod>,
    drain: &[String],
    vmi_uids: &HashSet<&str>,
    spread: &[SpreadSelector],
) -> (Vec<Pod>, BTreeMap<String, NodeUsage>) {
    let drained: HashSet<&str> = drain.iter().map(String::as_str).collect();
    let spread = SelectorIndex::new(spread.to_vec());
    let mut kept = Vec::new();
    let mut requested: BTreeMap<String, NodeUsage> = BTreeMap::new();
    for pod in pods {
        work::step(1);
        let node = pod.spec.as_ref().and_then(|s| s.node_name.as_deref());
        let created_by = pod_labels(&pod).get(CREATED_BY_LABEL).map(String::as_str);
        if node.is_some_and(|n| drained.contains(n))
            || created_by.is_some_and(|uid| vmi_uids.contains(uid))
        {
            kept.push(pod);
        } else if let Some(node) = node
            && holds_resources(&pod)
        {
            match requested.get_mut(node) {
                Some(usage) => usage.add(&pod, &spread),
                None => {
                    let mut usage = NodeUsage::default();
                    usage.add(&pod, &spread);
                    requested.insert(node.to_string(), usage);
                }
            }
        }
    }
    (kept, requested)
}

/// The plan. Pure.
pub fn plan_drain(inputs: &DrainInputs) -> DrainPlan {
    let kubevirt = inputs.kubevirt.as_ref();
    let cluster = effective_config(kubevirt, None);
    let namespaces: BTreeMap<&str, &Namespace> = inputs
        .namespaces
        .iter()
        .filter_map(|n| n.metadata.name.as_deref().map(|name| (name, n)))
        .collect();
    let vms: HashMap<(&str, &str), &VirtualMachine> = inputs
        .vms
        .iter()
        .map(|v| {
            work::step(1);
            ((v.namespace(), v.name()), v)
        })
        .collect();
    // Every join below is a lookup, so a plan stays linear in what it reads.
    let pod_index = PodIndex::new(&inputs.pods);
    let migration_index = MigrationIndex::new(&inputs.vmims);
    let quotas = quotas_by_namespace(&inputs.quotas);

    // What every node holds (requests, pods, pods each spread selector counts), consumed as
    // VMs are placed: the pods inspected here plus the usage of the others.
    let selectors = SelectorIndex::new(spread_selectors(&inputs.vmis));
    let mut usage: BTreeMap<String, NodeUsage> = inputs.node_usage.clone();
    for pod in inputs.pods.iter().filter(|p| holds_resources(p)) {
        if let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()) {
            usage
                .entry(node.to_string())
                .or_default()
                .add(pod, &selectors);
        }
    }
    let mut search = TargetSearch::new(&inputs.nodes, &inputs.drain, &usage, selectors);

    // In-flight migrations take slots.
    let vmi_node_by_key: BTreeMap<(String, String), String> = inputs
        .vmis
        .iter()
        .filter_map(|v| v.status.node_name.clone().map(|n| (vmi_key(v), n)))
        .collect();
    let running: Vec<&VirtualMachineInstanceMigration> = inputs
        .vmims
        .iter()
        .filter(|m| m.phase().counts_as_running())
        .collect();
    let mut in_flight_per_node: BTreeMap<String, u32> = BTreeMap::new();
    for m in &running {
        if let Some(node) =
            vmi_node_by_key.get(&(m.namespace().to_string(), m.spec.vmi_name.clone()))
        {
            *in_flight_per_node.entry(node.clone()).or_default() += 1;
        }
    }
    let limits = Limits {
        parallel_migrations_per_cluster: cluster.parallel_migrations_per_cluster,
        parallel_outbound_migrations_per_node: cluster.parallel_outbound_migrations_per_node,
        in_flight_cluster: running.len() as u32,
        in_flight_per_node: inputs
            .drain
            .iter()
            .map(|n| (n.clone(), in_flight_per_node.get(n).copied().unwrap_or(0)))
            .collect(),
    };

    let mut plans: Vec<VmiPlan> = Vec::new();
    // The VMI of each plan, by position.
    let mut plan_vmis: Vec<&VirtualMachineInstance> = Vec::new();
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut blockers: Vec<DrainBlocker> = Vec::new();
    // Migrations in flight from the drained nodes: (source node, remaining seconds).
    let mut in_flight_on_drained: Vec<(String, u64)> = Vec::new();
    let (finished, vmis): (Vec<&VirtualMachineInstance>, Vec<&VirtualMachineInstance>) = inputs
        .vmis
        .iter()
        .partition(|v| v.status.phase.as_ref().is_some_and(|p| p.is_final()));
    let skipped: Vec<Reason> = finished
        .iter()
        .map(|v| Reason {
            reason: format!("{}/{}", v.namespace(), v.name()),
            message: format!(
                "phase {}: no running pod, the drain does not touch it",
                v.status.phase.as_ref().map(|p| p.as_str()).unwrap_or("")
            ),
        })
        .collect();
    let mut vmis = vmis;
    // Place the biggest first: they are the hardest to fit and the longest to move.
    vmis.sort_by_key(|v| std::cmp::Reverse(v.guest_memory().map(Quantity::bytes).unwrap_or(0)));

    for vmi in vmis {
        let node = vmi
            .status
            .node_name
            .clone()
            .or_else(|| vmi.label("kubevirt.io/nodeName").map(str::to_string))
            .unwrap_or_default();
        let strategy = effective_eviction_strategy(vmi, kubevirt);
        let mig = migratability(vmi);
        let policy = matching_policy(
            vmi,
            namespaces.get(vmi.namespace()).copied(),
            &inputs.policies,
        );
        let policy_obj = policy
            .as_ref()
            .and_then(|p| inputs.policies.iter().find(|x| x.name() == p.name));
        let config = effective_config(kubevirt, policy_obj);
        let memory = vmi.guest_memory().map(Quantity::bytes);
        let launcher = pod_index.candidates_for(vmi).into_iter().find(|p| {
            is_launcher_of(p, vmi)
                && holds_resources(p)
                && p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node.as_str())
        });
        let pod_memory = launcher
            .map(|p| pod_request(p, "memory"))
            .filter(|m| *m > 0)
            .unwrap_or_else(|| memory.unwrap_or(0) + LAUNCHER_OVERHEAD);
        let target_pod = TargetPod {
            vmi,
            requests: target_requests(vmi, launcher, pod_memory),
        };
        let pod_memory_limit = launcher
            .and_then(|p| {
                p.spec
                    .as_ref()?
                    .containers
                    .iter()
                    .map(|c| quantity_bytes(c.resources.as_ref()?.limits.as_ref()?.get("memory")))
                    .sum::<Option<u64>>()
            })
            .unwrap_or(pod_memory);
        let budget = completion_budget_seconds(vmi, config.completion_timeout_per_gib).map(|b| {
            if config.allow_workload_disruption {
                b * 2
            } else {
                b
            }
        });
        let bandwidth = if config.bandwidth_per_migration > 0 {
            config.bandwidth_per_migration
        } else {
            inputs.bandwidth.unwrap_or(DEFAULT_BANDWIDTH).max(1)
        };
        let transfer = memory.map(|m| SETUP_SECONDS + m.div_ceil(bandwidth));
        let vm = vms.get(&(vmi.namespace(), vmi.name())).copied();
        let run_strategy = vm.map(|v| v.run_strategy().to_string());
        let mut reasons: Vec<Reason> = mig
            .reasons
            .iter()
            .map(|b| Reason {
                reason: b.reason.clone(),
                message: b.message.clone(),
            })
            .collect();
        let first_blocker: Option<&Blocker> = mig.reasons.first();
        let migratable = mig.is_migratable();
        let not_migratable_why = match first_blocker {
            Some(b) => b.summary.clone(),
            None if mig.live_migratable.is_none() => {
                reasons.push(Reason {
                    reason: "LiveMigratableUnknown".into(),
                    message: "the VMI has no LiveMigratable condition yet; KubeVirt treats it as not migratable".into(),
                });
                "migratability not reported yet".into()
            }
            None => "not live-migratable".into(),
        };
        let fix = first_blocker.map(|b| b.fix.clone());
        let active_vmim = migration_index.active_of(vmi.namespace(), vmi.name());
        let restart_words = match (vm, run_strategy.as_deref()) {
            (None, _) => "it is a bare VMI: it is gone for good".to_string(),
            (Some(_), Some("Always")) => "its VM (runStrategy Always) starts it again on another node".into(),
            (Some(_), Some("RerunOnFailure")) => {
                "its VM (runStrategy RerunOnFailure) restarts it only if the shutdown counts as a failure; a clean shutdown leaves it stopped".into()
            }
            (Some(_), Some(s)) => format!("its VM (runStrategy {s}) leaves it stopped"),
            (Some(_), None) => "its VM leaves it stopped".into(),
        };

        let mut plan = VmiPlan {
            namespace: vmi.namespace().to_string(),
            name: vmi.name().to_string(),
            vm: vm.map(|v| v.name().to_string()),
            node: node.clone(),
            eviction_strategy: strategy.strategy.as_str().to_string(),
            eviction_strategy_source: strategy.source,
            live_migratable: mig.live_migratable,
            reasons,
            action: Action::LiveMigrate,
            explanation: String::new(),
            fix: None,
            target: None,
            wave: None,
            start_seconds: None,
            end_seconds: None,
            estimate_seconds: None,
            budget_seconds: budget,
            memory_bytes: memory,
            pod_memory_request_bytes: pod_memory,
            migration_policy: policy.as_ref().map(|p| p.name.clone()),
            allow_post_copy: config.allow_post_copy,
            allow_auto_converge: config.allow_auto_converge,
            bandwidth_bytes_per_second: bandwidth,
            evacuation_node: vmi.evacuation_node().map(str::to_string),
            run_strategy,
        };
        let grace = vmi
            .spec
            .termination_grace_period_seconds
            .map(|g| g.max(0) as u64)
            .unwrap_or(DEFAULT_GRACE_SECONDS);
        let id = format!("{}/{}", plan.namespace, plan.name);

        if let Some(m) = active_vmim {
            plan.action = Action::AlreadyMigrating;
            let state = vmi
                .status
                .migration_state
                .as_ref()
                .filter(|s| s.migration_uid.is_some() && s.migration_uid.as_deref() == m.uid());
            plan.target = state.and_then(|s| s.target_node.clone());
            let started = state.and_then(|s| s.start_timestamp.as_ref());
            // A migration still queued (Pending) has moved nothing yet, however old it is.
            let since = started.or(m
                .metadata
                .creation_timestamp
                .as_ref()
                .filter(|_| m.phase().counts_as_running()));
            let elapsed = match (&inputs.now, since) {
                (Some(now), Some(t)) => (now.0.as_second() - t.0.as_second()).max(0) as u64,
                _ => 0,
            };
            let remaining = transfer.map(|t| t.saturating_sub(elapsed).max(SETUP_SECONDS));
            plan.start_seconds = Some(0);
            plan.estimate_seconds = remaining;
            plan.end_seconds = remaining;
            // A phase this vmctl does not know: KubeVirt counts it as running (IsRunning),
            // and so does the plan, but it makes no estimate from it.
            let unknown_phase = matches!(m.phase(), crate::model::vmim::MigrationPhase::Other(_));
            if unknown_phase {
                plan.estimate_seconds = None;
                plan.end_seconds = None;
            }
            plan.explanation = if unknown_phase {
                format!(
                    "migration {} is in phase {:?}, which this vmctl does not know: KubeVirt counts it as running, so the drain waits for it, but no estimate is made",
                    m.name(),
                    m.phase().as_str()
                )
            } else {
                format!(
                    "migration {} is already in flight (phase {}){}; the drain waits for it",
                    m.name(),
                    m.phase(),
                    remaining
                        .map(|r| format!(", about {} left", crate::render::fmt::duration(r as i64)))
                        .unwrap_or_default()
                )
            };
            if m.phase().counts_as_running() {
                in_flight_on_drained.push((node.clone(), remaining.unwrap_or(SETUP_SECONDS)));
            }
            // Before the hand-off the target pod may be refused by quota or have nowhere to go.
            let ns_quotas = quotas
                .get(vmi.namespace())
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let quota = plan
                .target
                .is_none()
                .then(|| quota_problem(ns_quotas, pod_memory, pod_memory_limit))
                .flatten();
            if let Some((quota, message)) = quota {
                let explanation = format!(
                    "migration {} (phase {}) is held by ResourceQuota {quota}: {message}; the eviction is refused until it has room",
                    m.name(),
                    m.phase()
                );
                blockers.push(hold_by_quota(&mut plan, quota, message, explanation));
            } else if plan.target.is_none()
                && let Err(no_fit) = search.find(&target_pod, &node)
            {
                let explanation = format!(
                    "migration {} (phase {}) cannot place its target pod: {}; it fails when the target pod times out and, once the node is drained, evacuation retries fail the same way",
                    m.name(),
                    m.phase(),
                    no_fit.explained()
                );
                let fix = no_fit.fix();
                blockers.push(hold_without_target(
                    &mut plan,
                    no_fit.explained(),
                    explanation,
                    fix,
                ));
                // Its VMIM keeps a slot until the unschedulable target pod times out.
                if let Some(last) = in_flight_on_drained.last_mut() {
                    last.1 = UNSCHEDULABLE_TIMEOUT_SECONDS.saturating_sub(elapsed);
                }
            }
        } else {
            match strategy.strategy {
                EvictionStrategy::LiveMigrate | EvictionStrategy::LiveMigrateIfPossible
                    if migratable =>
                {
                    // Target and quota are decided below, in placement order.
                    plan.action = Action::LiveMigrate;
                }
                EvictionStrategy::LiveMigrate => {
                    plan.action = Action::BlocksDrain;
                    plan.explanation = format!(
                        "evictionStrategy LiveMigrate but not live-migratable ({not_migratable_why}): the eviction is refused with 429 until this changes"
                    );
                    plan.fix = fix.clone().or_else(|| Some("make the VMI migratable, or set its evictionStrategy to None to allow a shutdown".into()));
                    blockers.push(DrainBlocker {
                        kind: "vmi".into(),
                        namespace: Some(plan.namespace.clone()),
                        name: plan.name.clone(),
                        reason: plan
                            .reasons
                            .first()
                            .map(|r| r.reason.clone())
                            .unwrap_or_default(),
                        message: plan.explanation.clone(),
                        vmis: vec![id.clone()],
                        blocking: true,
                    });
                }
                EvictionStrategy::LiveMigrateIfPossible => {
                    plan.action = Action::ShutdownNotMigratable;
                    plan.explanation = format!(
                        "LiveMigrateIfPossible but not live-migratable ({not_migratable_why}): the pod is evicted and the guest shut down; {restart_words}"
                    );
                    plan.fix = fix.clone();
                    plan.start_seconds = Some(0);
                    plan.estimate_seconds = Some(grace);
                    plan.end_seconds = Some(grace);
                }
                EvictionStrategy::External => {
                    plan.action = Action::External;
                    plan.explanation = "evictionStrategy External: KubeVirt marks it (evacuationNodeName) and refuses the eviction; an external controller (e.g. cluster-api-provider-kubevirt) must act".into();
                    blockers.push(DrainBlocker {
                        kind: "external".into(),
                        namespace: Some(plan.namespace.clone()),
                        name: plan.name.clone(),
                        reason: "External".into(),
                        message: "the drain waits until the external controller removes this VMI"
                            .into(),
                        vmis: vec![id.clone()],
                        blocking: false,
                    });
                }
                EvictionStrategy::None | EvictionStrategy::Other(_) => {
                    plan.action = Action::Shutdown;
                    let which = if let EvictionStrategy::Other(s) = &strategy.strategy {
                        format!("evictionStrategy {s} (unknown to vmctl, treated as None)")
                    } else {
                        "evictionStrategy None".to_string()
                    };
                    plan.explanation = format!(
                        "{which}: the pod is evicted and the guest shut down; {restart_words}"
                    );
                    if migratable {
                        plan.fix = Some("set spec.evictionStrategy: LiveMigrate (the VMI is migratable) to move it instead".into());
                    }
                    plan.start_seconds = Some(0);
                    plan.estimate_seconds = Some(grace);
                    plan.end_seconds = Some(grace);
                }
            }
        }

        if plan.action == Action::LiveMigrate {
            // Namespace quota for the second launcher pod.
            let ns_quotas = quotas
                .get(vmi.namespace())
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            if let Some((quota, message)) = quota_problem(ns_quotas, pod_memory, pod_memory_limit) {
                let explanation = format!(
                    "ResourceQuota {quota}: {message}; the migration stays Pending and the eviction is refused"
                );
                blockers.push(hold_by_quota(&mut plan, quota, message, explanation));
            } else {
                match search.find(&target_pod, &node) {
                    Ok(found) => {
                        let target = found.node;
                        search.consume(target, &target_pod);
                        plan.target = Some(target.to_string());
                        plan.estimate_seconds = transfer;
                        let est = transfer
                            .map(|t| format!(", about {}", crate::render::fmt::duration(t as i64)))
                            .unwrap_or_default();
                        plan.explanation = format!("live-migrates to {target}{est}");
                        for note in found.notes {
                            plan.explanation.push_str("; ");
                            plan.explanation.push_str(&note);
                        }
                        if let (Some(t), Some(b)) = (transfer, budget)
                            && b > 0
                            && t > b
                        {
                            plan.explanation.push_str(&format!(
                                "; the transfer estimate exceeds the {} completion budget, so KubeVirt may abort it{}",
                                crate::render::fmt::duration(b as i64),
                                if config.allow_post_copy { " (post-copy is allowed and would take over)" } else { "" }
                            ));
                        }
                        candidates.push(Candidate {
                            index: plans.len(),
                            estimate: transfer.unwrap_or(SETUP_SECONDS),
                            source: node.clone(),
                        });
                    }
                    Err(no_fit) => {
                        let message = no_fit.explained();
                        let explanation = format!(
                            "{message}; the target pod stays Pending and the eviction is refused"
                        );
                        blockers.push(hold_without_target(
                            &mut plan,
                            message,
                            explanation,
                            no_fit.fix(),
                        ));
                    }
                }
            }
        }
        plans.push(plan);
        plan_vmis.push(vmi);
    }

    let (pdb_blockers, pdb_reports) = judge_pdbs(inputs, &mut plans, &plan_vmis, &pod_index);
    blockers.extend(pdb_blockers);

    // Waves: list scheduling, longest first, under the per-node and per-cluster limits.
    // KubeVirt's queue: pending migrations ahead of the drain's evacuations take slots
    // first; those behind start after them.
    let (queue, ahead, behind) = migration_queue(kubevirt, &inputs.vmims, &|m| {
        vmi_node_by_key.contains_key(&(m.namespace().to_string(), m.spec.vmi_name.clone()))
    });
    let plan_of: HashMap<(String, String), usize> = plans
        .iter()
        .enumerate()
        .map(|(i, p)| ((p.namespace.clone(), p.name.clone()), i))
        .collect();
    let key =
        |m: &VirtualMachineInstanceMigration| (m.namespace().to_string(), m.spec.vmi_name.clone());
    let average = if candidates.is_empty() {
        SETUP_SECONDS
    } else {
        candidates.iter().map(|c| c.estimate).sum::<u64>() / candidates.len() as u64
    };
    let priority_mode = queue.mode == "priority";
    let queued = |m: &&VirtualMachineInstanceMigration| -> Option<Queued> {
        let weight = if priority_mode {
            priority_weight(m.spec.priority.as_deref())
        } else {
            0
        };
        match plan_of.get(&key(m)) {
            Some(&i) if plans[i].action == Action::AlreadyMigrating => Some(Queued {
                weight,
                plan: Some(i),
                source: Some(plans[i].node.clone()),
                estimate: plans[i].estimate_seconds.unwrap_or(SETUP_SECONDS),
            }),
            Some(_) => None,
            None => held_by(m).is_none().then_some(Queued {
                weight,
                plan: None,
                source: None,
                estimate: average,
            }),
        }
    };
    // In queue order: the ahead, then the behind (which may still take a free cluster slot
    // while the drain's evacuations wait for their node's outbound slots).
    let existing: Vec<Queued> = ahead.iter().chain(&behind).filter_map(queued).collect();
    for (list, words) in [
        (
            &ahead,
            "in KubeVirt's queue it is ahead of the drain's evacuations",
        ),
        (
            &behind,
            "in KubeVirt's queue it waits behind the drain's system-critical evacuations",
        ),
    ] {
        for m in list.iter() {
            if let Some(&i) = plan_of.get(&key(m))
                && plans[i].action == Action::AlreadyMigrating
            {
                let priority = m.spec.priority.as_deref().unwrap_or("no priority");
                plans[i]
                    .explanation
                    .push_str(&format!("; {words} ({priority})"));
            }
        }
    }
    // The drain's own evacuations: system-critical, unless the descheduler marked the VMI.
    let own_weight: HashMap<usize, u32> = candidates
        .iter()
        .map(|c| {
            let priority = evacuation_priority(plan_vmis[c.index]);
            if priority != EVACUATION_PRIORITY {
                plans[c.index].explanation.push_str(&format!(
                    "; the descheduler marked it, so its evacuation is {priority} and waits behind system-critical and user-triggered migrations in KubeVirt's priority queue"
                ));
            }
            (c.index, priority_weight(Some(priority)))
        })
        .collect();
    let waves = schedule(
        &mut plans,
        &mut candidates,
        &limits,
        &in_flight_on_drained,
        &existing,
        &|index| {
            if priority_mode {
                own_weight.get(&index).copied().unwrap_or(0)
            } else {
                0
            }
        },
    );

    blockers.sort_by_key(|b| {
        (
            !b.blocking,
            b.kind.clone(),
            b.namespace.clone(),
            b.name.clone(),
        )
    });
    let blocked = blockers.iter().any(|b| b.blocking);
    let verdict = if blocked {
        Verdict::WillBlock
    } else if plans.iter().any(|p| p.action.stops_the_vm()) {
        Verdict::WillCompleteWithShutdowns
    } else {
        Verdict::WillComplete
    };
    let estimated = plans
        .iter()
        .filter_map(|p| p.end_seconds)
        .max()
        .unwrap_or(0);
    // Blocking VMs first, then by action, then by name.
    plans.sort_by(|a, b| {
        (!a.action.blocks(), a.action, &a.namespace, &a.name).cmp(&(
            !b.action.blocks(),
            b.action,
            &b.namespace,
            &b.name,
        ))
    });

    let incoming: Vec<Incoming> = inputs
        .incoming
        .iter()
        .filter_map(|v| {
            let s = v.status.migration_state.as_ref()?;
            if s.completed
                || !s
                    .target_node
                    .as_ref()
                    .is_some_and(|t| inputs.drain.contains(t))
            {
                return None;
            }
            Some(Incoming {
                namespace: v.namespace().to_string(),
                name: v.name().to_string(),
                source_node: s.source_node.clone(),
                target_node: s.target_node.clone(),
                target_pod: s.target_pod.clone(),
                mode: s.mode.as_ref().map(|m| m.as_str().to_string()),
                point_of_no_return: s.mode == Some(crate::model::vmi::MigrationMode::PostCopy),
            })
        })
        .collect();

    let mut assumptions = vec![
        format!(
            "transfer time = {SETUP_SECONDS}s setup + guest memory / bandwidth (bandwidthPerMigration when set, else {} per migration); a guest that dirties memory fast takes longer",
            crate::render::fmt::bytes(inputs.bandwidth.unwrap_or(DEFAULT_BANDWIDTH)) + "/s"
        ),
        "targets are predicted with the scheduler's filters (taints and tolerations, node selector and affinity, host-model CPU, every requested resource and the pod count, DoNotSchedule topology spread), then fewest untolerated PreferNoSchedule taints, highest preferred node affinity weight and most free memory, biggest VMs placed first; ScheduleAnyway spread and the scheduler's other scores are not weighed, nor pod priority and preemption (a higher-priority target pod may still get room by preempting others), so the scheduler makes the final choice".into(),
        "waves: longest migration first, as slots free up under parallelOutboundMigrationsPerNode and parallelMigrationsPerCluster minus migrations already in flight".into(),
        format!("shutdowns take the VMI's terminationGracePeriodSeconds (default {DEFAULT_GRACE_SECONDS}s)"),
    ];
    if !queue.ahead.is_empty() || !queue.behind.is_empty() {
        assumptions.push(format!(
            "migration queue {}: {}{}; pending migrations elsewhere that are ahead take a cluster slot for as long as the drain's average migration",
            queue.mode,
            queue.why,
            if queue.mode == "priority" {
                format!("; the drain's evacuations are {EVACUATION_PRIORITY}")
            } else {
                String::new()
            }
        ));
    }
    if kubevirt.is_none() {
        assumptions.insert(0, "no KubeVirt CR found: KubeVirt's defaults apply (evictionStrategy None, 5 per cluster, 2 per node, 150 s/GiB)".into());
    }
    DrainPlan {
        nodes: inputs.drain.clone(),
        verdict,
        estimated_duration_seconds: estimated,
        blockers,
        vmis: plans,
        skipped,
        incoming,
        limits,
        queue,
        pdbs: pdb_reports,
        waves,
        defaults_assumed: kubevirt.is_none(),
        kubevirt_version: kubevirt.and_then(|k| k.version().map(str::to_string)),
        assumptions,
    }
}

/// Assigns start/end times and waves; returns the number of waves. Migrations already in
/// flight from the drained nodes hold their slots until their estimated end; others in the
/// cluster hold cluster slots for the whole plan (their end is unknown here). KubeVirt's
/// queue order decides who gets a free slot first: by weight (priority queue; all equal
/// when FIFO; `weight_of` a drain candidate's plan index), the pending migrations (`existing`, in queue order; those elsewhere in the
/// cluster take a cluster slot for an average migration's time) before the drain's
/// evacuations of the same weight, and these longest first.
fn schedule(
    plans: &mut [VmiPlan],
    candidates: &mut [Candidate],
    limits: &Limits,
    in_flight_on_drained: &[(String, u64)],
    existing: &[Queued],
    weight_of: &dyn Fn(usize) -> u32,
) -> u32 {
    candidates.sort_by(|a, b| b.estimate.cmp(&a.estimate).then(a.index.cmp(&b.index)));
    let elsewhere = limits
        .in_flight_cluster
        .saturating_sub(in_flight_on_drained.len() as u32);
    // Always leave one slot, or nothing would ever start.
    let cluster_slots = limits
        .parallel_migrations_per_cluster
        .saturating_sub(elsewhere)
        .max(1);
    let node_slots = limits.parallel_outbound_migrations_per_node.max(1);
    // Running: (end time, source node when it is a drained one).
    let mut running: Vec<(u64, Option<String>)> = in_flight_on_drained
        .iter()
        .cloned()
        .map(|(n, e)| (e, Some(n)))
        .collect();
    let own: Vec<Queued> = candidates
        .iter()
        .map(|c| Queued {
            weight: weight_of(c.index),
            plan: Some(c.index),
            source: Some(c.source.clone()),
            estimate: c.estimate,
        })
        .collect();
    // Stable: within a weight, the existing migrations first, in queue order.
    let mut pending: Vec<&Queued> = existing.iter().chain(&own).collect();
    pending.sort_by_key(|q| std::cmp::Reverse(q.weight));
    let mut now = 0u64;
    let mut starts: BTreeSet<u64> = BTreeSet::new();
    let mut scheduled: Vec<usize> = Vec::new();
    while !pending.is_empty() {
        running.retain(|(end, _)| *end > now);
        let mut i = 0;
        while i < pending.len() {
            let c = pending[i];
            let on_node = c.source.as_ref().map_or(0, |s| {
                running
                    .iter()
                    .filter(|(_, n)| n.as_ref() == Some(s))
                    .count() as u32
            });
            if (running.len() as u32) < cluster_slots && on_node < node_slots {
                let end = now + c.estimate;
                if let Some(index) = c.plan {
                    let plan = &mut plans[index];
                    plan.start_seconds = Some(now);
                    plan.end_seconds = Some(end);
                    starts.insert(now);
                    scheduled.push(index);
                }
                running.push((end, c.source.clone()));
                pending.remove(i);
            } else {
                i += 1;
            }
        }
        match running.iter().map(|(e, _)| *e).filter(|e| *e > now).min() {
            Some(next) => now = next,
            None => break,
        }
    }
    let wave_of: BTreeMap<u64, u32> = starts
        .iter()
        .enumerate()
        .map(|(i, s)| (*s, i as u32 + 1))
        .collect();
    for index in scheduled {
        if let Some(start) = plans[index].start_seconds {
            plans[index].wave = wave_of.get(&start).copied();
        }
    }
    starts.len() as u32
}

/// Takes out of `pods` those selected by a PodDisruptionBudget without a fresh status and
/// hands the rest, one at a time, to `rest` (e.g. [`split_pods`]): (selected, what `rest`
/// returned). The plan computes such a PDB's budget from every pod it selects, as the
/// disruption controller does, so these must reach [`DrainInputs::pods`] whole. Linear, and
/// lazy: the other pods are never all held at once (at 10k VMIs, holding them cost a third
/// more peak memory).
pub fn pods_of_unsynced_pdbs<R>(
    pods: impl IntoIterator<Item = Pod>,
    pdbs: &[PodDisruptionBudget],
    rest: impl FnOnce(&mut dyn Iterator<Item = Pod>) -> R,
) -> (Vec<Pod>, R) {
    let unsynced: Vec<PodDisruptionBudget> = pdbs
        .iter()
        .filter(|p| !has_fresh_status(p))
        .cloned()
        .collect();
    let index = PdbIndex::new(&unsynced);
    let mut kept = Vec::new();
    let result = {
        let mut others = pods.into_iter().filter_map(|pod| {
            if unsynced.is_empty() {
                return Some(pod);
            }
            work::step(1);
            if index.matching(&pod).is_empty() {
                Some(pod)
            } else {
                kept.push(pod);
                None
            }
        });
        rest(&mut others)
    };
    (kept, result)
}

/// The text that says where a PDB's numbers come from and what they are.
fn budget_words(pdb: &PodDisruptionBudget, b: &Budget) -> String {
    let source = match (b.source, b.estimated) {
        (BudgetSource::Status, _) => "from its status",
        (BudgetSource::Computed, false) => {
            "computed as the disruption controller does: no status yet"
        }
        (BudgetSource::Computed, true) => {
            "estimated as the disruption controller would compute it: no status yet"
        }
    };
    let spec = pdb.spec.as_ref();
    let needs_scale = spec.is_some_and(|s| {
        s.max_unavailable.is_some()
            || matches!(
                s.min_available,
                Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(_))
            )
    });
    match &b.sync_failed {
        Some(message) => {
            let hint = if needs_scale && message.contains("virtualmachineinstances") {
                " (maxUnavailable and a percentage minAvailable need the pods' controller /scale; a virt-launcher pod's controller is its VMI, which has none, also for VMPool VMs, kubevirt#18063: use an integer minAvailable)"
            } else {
                ""
            };
            format!(
                "allows 0 disruptions, DisruptionAllowed=False SyncFailed: {message}{hint}; {source}"
            )
        }
        None => format!(
            "allows {} disruption(s): {} healthy, {} desired, {} expected; {source}{}",
            b.disruptions_allowed,
            b.current_healthy,
            b.desired_healthy,
            b.expected_pods,
            b.note
                .as_deref()
                .filter(|n| n.starts_with("neither"))
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        ),
    }
}

/// Said of every `selector: {}` PDB the plan relies on.
const EMPTY_SELECTOR_NOTE: &str = "selector {} selects every pod of its namespace (Kubernetes 1.29+ and 1.28 patch releases; older API servers ignore an empty selector when evicting, kubernetes#119732)";

/// Is this one of the per-VMI PDBs KubeVirt ≤ v1.5 created (FACTS §2.3)?
fn is_kubevirt_pdb(pdb: &PodDisruptionBudget) -> bool {
    pdb.metadata.name.as_deref().is_some_and(|n| {
        n.starts_with("kubevirt-disruption-budget-") || n.starts_with("kubevirt-migration-pdb-")
    }) || pdb
        .metadata
        .owner_references
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .any(|o| o.kind == "VirtualMachineInstance" && o.controller == Some(true))
}

/// PodDisruptionBudgets over the launcher pods of the drained VMIs, read as the eviction
/// API reads them ([`super::pdb`]). Only the evictions that reach the PDB check matter:
/// KubeVirt's eviction webhook answers first (429, evacuation) for every VMI that migrates,
/// blocks or is External, so a PDB only holds up the VMIs the drain shuts down. Each
/// launcher pod is matched through the index once; budgets without a fresh status are
/// computed in one more pass over the pods.
fn judge_pdbs(
    inputs: &DrainInputs,
    plans: &mut [VmiPlan],
    plan_vmis: &[&VirtualMachineInstance],
    pod_index: &PodIndex,
) -> (Vec<DrainBlocker>, Vec<PdbReport>) {
    let pdbs = &inputs.pdbs;
    let index = PdbIndex::new(pdbs);
    let mut blockers = Vec::new();
    // Per PDB: the answers for the shutdowns whose pods it selects.
    let mut answers: Vec<Vec<PdbEviction>> = vec![Vec::new(); pdbs.len()];
    // For each plan: its launcher pods and the PDBs selecting each.
    let mut pod_hits: Vec<Vec<(&Pod, Vec<usize>)>> = Vec::with_capacity(plans.len());
    // For each PDB: the plans whose pods it selects, in plan order.
    let mut covered: Vec<Vec<usize>> = vec![Vec::new(); pdbs.len()];
    for (pi, (plan, vmi)) in plans.iter().zip(plan_vmis).enumerate() {
        let mut hits = Vec::new();
        for pod in pod_index.candidates_for(vmi) {
            let pod_ns = pod.metadata.namespace.as_deref().unwrap_or("");
            if !is_launcher_of(pod, vmi) || !holds_resources(pod) || pod_ns != plan.namespace {
                continue;
            }
            let matching = index.matching(pod);
            for &i in &matching {
                if covered[i].last() != Some(&pi) {
                    covered[i].push(pi);
                }
            }
            hits.push((pod, matching));
        }
        pod_hits.push(hits);
    }

    // Budgets of the PDBs that cover a drained VMI. Those without a fresh status are
    // computed from every pod they select (one pass over the pods).
    let needs_pods: Vec<bool> = pdbs
        .iter()
        .zip(&covered)
        .map(|(p, c)| !c.is_empty() && !has_fresh_status(p))
        .collect();
    let mut selected: Vec<Vec<&Pod>> = vec![Vec::new(); pdbs.len()];
    if needs_pods.iter().any(|n| *n) {
        for pod in &inputs.pods {
            work::step(1);
            for i in index.matching(pod) {
                if needs_pods[i] {
                    selected[i].push(pod);
                }
            }
        }
    }
    let evaluated: Vec<Option<EvaluatedPdb>> = pdbs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            (!covered[i].is_empty())
                .then(|| EvaluatedPdb::new(p, &index.selectors[i], budget(p, &selected[i], true)))
        })
        .collect();

    let id = |p: &VmiPlan| format!("{}/{}", p.namespace, p.name);
    // KubeVirt up to v1.4 (webhook failurePolicy Ignore) denies only the first eviction of a
    // VMI it marks; kubectl drain's retries then reach the PDB check (FACTS §2.1).
    let version = inputs.kubevirt.as_ref().and_then(KubeVirt::version);
    if let Some(v) =
        version.filter(|v| crate::model::kubevirt::parse_version(v).is_some_and(|v| v < (1, 5)))
    {
        let mut sets: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
        for (pi, hits) in pod_hits.iter().enumerate() {
            if !matches!(
                plans[pi].action,
                Action::LiveMigrate | Action::AlreadyMigrating
            ) {
                continue;
            }
            for (_, matching) in hits.iter().filter(|(_, m)| m.len() > 1) {
                sets.entry(matching.clone()).or_default().push(pi);
            }
        }
        for (set, holders) in sets {
            let names: Vec<String> = set
                .iter()
                .map(|&i| pdbs[i].metadata.name.clone().unwrap_or_default())
                .collect();
            let who: Vec<String> = holders.iter().map(|&pi| id(&plans[pi])).collect();
            blockers.push(DrainBlocker {
                kind: "pdb".into(),
                namespace: pdbs[set[0]].metadata.namespace.clone(),
                name: names.join(" + "),
                reason: "MultiplePodDisruptionBudgets".into(),
                message: format!(
                    "{} select the launcher pod of {}, which migrates: KubeVirt {v} (up to v1.4) lets kubectl drain's repeated evictions of a VMI it has marked through to the PDB check, which answers 500 \"{MORE_THAN_ONE_PDB}\"; kubectl drain stops on that error instead of retrying (the migration goes on; run the drain again)",
                    names.join(" and "),
                    who.join(", ")
                ),
                vmis: who,
                blocking: false,
            });
        }
    }
    // Per PDB: the shutdowns it refuses (with the answer) and those it waits on.
    let mut refused: Vec<Vec<(usize, EvictionAnswer)>> = vec![Vec::new(); pdbs.len()];
    let mut stale_waits: Vec<Vec<usize>> = vec![Vec::new(); pdbs.len()];
    let mut evicted_through: Vec<Vec<usize>> = vec![Vec::new(); pdbs.len()];
    // Sets of two or more PDBs over one pod -> the plans they hold.
    let mut multiple: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
    for (pi, hits) in pod_hits.iter().enumerate() {
        if !plans[pi].action.stops_the_vm() {
            continue;
        }
        for (pod, matching) in hits {
            let these: Vec<&EvaluatedPdb> = matching
                .iter()
                .filter_map(|&i| evaluated[i].as_ref())
                .collect();
            let answer = evict(pod, &these);
            let plan = &mut plans[pi];
            for &i in matching {
                answers[i].push(PdbEviction {
                    vmi: format!("{}/{}", plan.namespace, plan.name),
                    pod: pod.metadata.name.clone().unwrap_or_default(),
                    http_status: answer.http_status(),
                    answer: answer.clone(),
                    text: answer.api_text(),
                });
            }
            match &answer {
                EvictionAnswer::MoreThanOnePdb { pdbs: names } => {
                    let holders = multiple.entry(matching.clone()).or_default();
                    if holders.last() != Some(&pi) {
                        holders.push(pi);
                    }
                    plan.explanation.push_str(&format!(
                        "; but PodDisruptionBudgets {} {} select its pod, so the eviction API answers 500 ({MORE_THAN_ONE_PDB}) and never evicts it: the drain blocks here",
                        names.join(" and "),
                        if names.len() == 2 { "both" } else { "all" }
                    ));
                    let fix = format!(
                        "leave one PodDisruptionBudget per pod: narrow the selector of {} in {}",
                        names.join(" or "),
                        plan.namespace
                    );
                    add_fix(plan, fix);
                    plan.start_seconds = None;
                    plan.end_seconds = None;
                }
                EvictionAnswer::NoDisruptionsAllowed { pdb, .. }
                | EvictionAnswer::Forbidden { pdb, .. } => {
                    if let Some(&i) = matching.first() {
                        refused[i].push((pi, answer.clone()));
                    }
                    plan.explanation.push_str(&format!(
                        "; but PodDisruptionBudget {pdb} refuses the eviction ({}), so the drain blocks here",
                        answer.short()
                    ));
                    let over_vmis = matching.first().is_some_and(|&i| {
                        evaluated[i].as_ref().is_some_and(|e| {
                            e.budget
                                .sync_failed
                                .as_deref()
                                .is_some_and(|m| m.contains("virtualmachineinstances"))
                        })
                    });
                    let fix = format!(
                        "relax PodDisruptionBudget {}/{pdb}{}",
                        plan.namespace,
                        if over_vmis {
                            " (an integer minAvailable instead of maxUnavailable: VMIs have no /scale)"
                        } else {
                            ""
                        }
                    );
                    add_fix(plan, fix);
                    plan.start_seconds = None;
                    plan.end_seconds = None;
                }
                EvictionAnswer::StatusStale {
                    pdb,
                    observed_generation,
                    generation,
                } => {
                    if let Some(&i) = matching.first() {
                        stale_waits[i].push(pi);
                    }
                    plan.explanation.push_str(&format!(
                        "; PodDisruptionBudget {pdb}'s status is older than its spec (observedGeneration {observed_generation} < generation {generation}): the eviction gets 429 until the disruption controller catches up"
                    ));
                }
                EvictionAnswer::AllowedUnhealthy { pdb, why } => {
                    plan.explanation.push_str(&format!(
                        "; PodDisruptionBudget {pdb} selects its pod but does not hold it: {why}"
                    ));
                }
                EvictionAnswer::Allowed { .. } => {
                    if let Some(&i) = matching.first() {
                        evicted_through[i].push(pi);
                    }
                }
                EvictionAnswer::NoPdb | EvictionAnswer::NoPdbCheck { .. } => {}
            }
        }
    }

    for (set, holders) in &multiple {
        let names: Vec<String> = set
            .iter()
            .map(|&i| pdbs[i].metadata.name.clone().unwrap_or_default())
            .collect();
        let ns = pdbs[set[0]].metadata.namespace.clone();
        let mut message = format!(
            "{} {} select the launcher pod of {}: the eviction API answers 500 \"{MORE_THAN_ONE_PDB}\" and never evicts it",
            names.join(" and "),
            if names.len() == 2 { "both" } else { "all" },
            holders
                .iter()
                .map(|&pi| id(&plans[pi]))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for &i in set {
            if is_kubevirt_pdb(&pdbs[i]) {
                message.push_str(&format!(
                    "; {} is KubeVirt's own per-VMI PDB (created up to v1.5; v1.6+ virt-controller deletes it)",
                    pdbs[i].metadata.name.as_deref().unwrap_or("")
                ));
            }
            if index.selectors[i] == PdbSelector::Everything {
                message.push_str(&format!(
                    "; {}: {EMPTY_SELECTOR_NOTE}",
                    pdbs[i].metadata.name.as_deref().unwrap_or("")
                ));
            }
        }
        blockers.push(DrainBlocker {
            kind: "pdb".into(),
            namespace: ns,
            name: names.join(" + "),
            reason: "MultiplePodDisruptionBudgets".into(),
            message,
            vmis: holders.iter().map(|&pi| id(&plans[pi])).collect(),
            blocking: true,
        });
    }

    for (i, pdb) in pdbs.iter().enumerate() {
        let Some(e) = evaluated[i].as_ref() else {
            continue;
        };
        let b = &e.budget;
        let name = e.name.clone();
        let ns = pdb.metadata.namespace.clone();
        let max_unavailable = pdb
            .spec
            .as_ref()
            .is_some_and(|s| s.max_unavailable.is_some());
        let words = budget_words(pdb, b);
        let everything = if e.selects_everything {
            format!("; {EMPTY_SELECTOR_NOTE}")
        } else {
            String::new()
        };
        let mut covered_ids: Vec<String> = covered[i].iter().map(|&pi| id(&plans[pi])).collect();
        covered_ids.sort();
        if !refused[i].is_empty() {
            let who: Vec<String> = refused[i].iter().map(|(pi, _)| id(&plans[*pi])).collect();
            let answer = refused[i][0].1.api_text();
            let reason = match &refused[i][0].1 {
                EvictionAnswer::Forbidden { .. } => "EvictionForbidden",
                _ if max_unavailable => "MaxUnavailablePDB",
                _ if b.sync_failed.is_some() => "SyncFailed",
                _ => "NoDisruptionsAllowed",
            };
            blockers.push(DrainBlocker {
                kind: "pdb".into(),
                namespace: ns,
                name,
                reason: reason.into(),
                message: format!(
                    "{words}: evicting {} is answered {answer} until it changes{everything}",
                    who.join(", ")
                ),
                vmis: covered_ids,
                blocking: true,
            });
        } else if !stale_waits[i].is_empty() {
            let who: Vec<String> = stale_waits[i].iter().map(|&pi| id(&plans[pi])).collect();
            let (observed, generation) = b.stale.unwrap_or_default();
            blockers.push(DrainBlocker {
                kind: "pdb".into(),
                namespace: ns,
                name,
                reason: "StatusStale".into(),
                message: format!(
                    "status.observedGeneration {observed} < metadata.generation {generation}: the eviction of {} gets 429 until the disruption controller catches up; then it {words}{everything}",
                    who.join(", ")
                ),
                vmis: covered_ids,
                blocking: false,
            });
        } else if b.disruptions_allowed <= 0
            && covered[i]
                .iter()
                .any(|&pi| !plans[pi].action.stops_the_vm())
        {
            blockers.push(DrainBlocker {
                kind: "pdb".into(),
                namespace: ns,
                name,
                reason: if max_unavailable {
                    "MaxUnavailablePDB".into()
                } else if b.sync_failed.is_some() {
                    "SyncFailed".into()
                } else {
                    "NoDisruptionsAllowed".into()
                },
                message: format!(
                    "{words}; the VMIs it covers migrate (KubeVirt's eviction webhook answers before the PDB check) and their source pods complete, so it only matters if a migration fails{everything}"
                ),
                vmis: covered_ids,
                blocking: false,
            });
        } else if evicted_through[i].len() as i64 > i64::from(b.disruptions_allowed) {
            let who: Vec<String> = evicted_through[i]
                .iter()
                .map(|&pi| id(&plans[pi]))
                .collect();
            blockers.push(DrainBlocker {
                kind: "pdb".into(),
                namespace: ns,
                name,
                reason: "BudgetShorterThanShutdowns".into(),
                message: format!(
                    "{words}, and the drain evicts {} pods it selects ({}): the rest get 429 until evicted pods are Ready again elsewhere, and stay refused if their VMs stay stopped{everything}",
                    who.len(),
                    who.join(", ")
                ),
                vmis: covered_ids,
                blocking: false,
            });
        }
    }

    let selects = |i: usize| match &index.selectors[i] {
        PdbSelector::Nothing => ("nothing", None),
        PdbSelector::Everything => ("everything", None),
        PdbSelector::Labels(_) => ("labels", None),
        PdbSelector::Invalid(why) => ("invalid", Some(why.clone())),
    };
    let mut reports: Vec<PdbReport> = Vec::new();
    for (i, pdb) in pdbs.iter().enumerate() {
        let Some(e) = evaluated[i].as_ref() else {
            continue;
        };
        let (kind, invalid) = selects(i);
        let mut vmis: Vec<String> = covered[i].iter().map(|&pi| id(&plans[pi])).collect();
        vmis.sort();
        reports.push(PdbReport {
            namespace: pdb.metadata.namespace.clone().unwrap_or_default(),
            name: e.name.clone(),
            selects: kind.into(),
            invalid,
            budget: Some(e.budget.clone()),
            vmis,
            evictions: std::mem::take(&mut answers[i]),
        });
    }

    // PDBs that protect nothing because their selector is invalid, in the drained VMIs'
    // namespaces: the user may think they do.
    let namespaces: BTreeSet<&str> = plans.iter().map(|p| p.namespace.as_str()).collect();
    for ns in namespaces {
        for &i in index.inert_in(ns) {
            let (kind, invalid) = selects(i);
            reports.push(PdbReport {
                namespace: ns.to_string(),
                name: pdbs[i].metadata.name.clone().unwrap_or_default(),
                selects: kind.into(),
                invalid,
                budget: None,
                vmis: Vec::new(),
                evictions: Vec::new(),
            });
            if let PdbSelector::Invalid(why) = &index.selectors[i] {
                blockers.push(DrainBlocker {
                    kind: "pdb".into(),
                    namespace: Some(ns.to_string()),
                    name: pdbs[i].metadata.name.clone().unwrap_or_default(),
                    reason: "InvalidSelector".into(),
                    message: format!(
                        "invalid, {why}: the eviction API skips it (\"This object has an invalid selector, it does not match the pod\"), so it protects nothing here"
                    ),
                    vmis: Vec::new(),
                    blocking: false,
                });
            }
        }
    }
    reports.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    (blockers, reports)
}

/// Adds a way out to a VMI's fix, after the ones it already has.
fn add_fix(plan: &mut VmiPlan, fix: String) {
    match &mut plan.fix {
        Some(existing) if !existing.contains(&fix) => {
            existing.push_str("; or ");
            existing.push_str(&fix);
        }
        Some(_) => {}
        None => plan.fix = Some(fix),
    }
}

/// A status the eviction API will use as it is.
fn has_fresh_status(pdb: &PodDisruptionBudget) -> bool {
    pdb.status.as_ref().is_some_and(|s| {
        s.disruptions_allowed.is_some()
            && s.observed_generation.unwrap_or(0) >= pdb.metadata.generation.unwrap_or(0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    const GI: u64 = 1024 * 1024 * 1024;

    fn node(name: &str, memory: &str) -> Node {
        serde_json::from_value(json!({"metadata": {"name": name, "labels": {
            "kubevirt.io/schedulable": "true",
            "host-model-cpu.node.kubevirt.io/Cascadelake-Server": "true",
            "cpu-model-migration.node.kubevirt.io/Cascadelake-Server": "true"}},
            "spec": {}, "status": {"allocatable": {"memory": memory},
            "conditions": [{"type": "Ready", "status": "True"}]}}))
        .unwrap()
    }

    fn vmi(
        name: &str,
        node: &str,
        strategy: Option<&str>,
        migratable: bool,
        memory: &str,
    ) -> VirtualMachineInstance {
        let mut v = json!({"metadata": {"name": name, "namespace": "prod", "uid": format!("uid-{name}"),
            "labels": {"kubevirt.io/nodeName": node}},
            "spec": {"domain": {"memory": {"guest": memory}}},
            "status": {"nodeName": node, "phase": "Running", "conditions": [
                if migratable { json!({"type": "LiveMigratable", "status": "True"}) }
                else { json!({"type": "LiveMigratable", "status": "False", "reason": "DisksNotLiveMigratable",
                    "message": "cannot migrate VMI: PVC data-x is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)"}) }]}});
        if let Some(s) = strategy {
            v["spec"]["evictionStrategy"] = json!(s);
        }
        serde_json::from_value(v).unwrap()
    }

    fn launcher(vmi: &VirtualMachineInstance, memory: &str) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": format!("virt-launcher-{}", vmi.name()),
            "namespace": vmi.namespace(), "uid": format!("pod-{}", vmi.name()),
            "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": vmi.uid(), "app": vmi.name()}},
            "spec": {"nodeName": vmi.status.node_name, "containers": [{"name": "compute",
                "resources": {"requests": {"memory": memory}}}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}))
        .unwrap()
    }

    fn kubevirt(config: Value) -> Option<KubeVirt> {
        Some(
            serde_json::from_value(
                json!({"metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": config}, "status": {"observedKubeVirtVersion": "v1.8.4"}}),
            )
            .unwrap(),
        )
    }

    fn inputs(vmis: Vec<VirtualMachineInstance>, nodes: Vec<Node>) -> DrainInputs {
        let pods = vmis
            .iter()
            .map(|v| {
                let mem = v
                    .guest_memory()
                    .map(|q| q.bytes() + 256 * 1024 * 1024)
                    .unwrap_or(0);
                launcher(v, &mem.to_string())
            })
            .collect();
        DrainInputs {
            drain: vec!["node-3".into()],
            vmis,
            nodes,
            pods,
            kubevirt: kubevirt(json!({"evictionStrategy": "LiveMigrate"})),
            ..Default::default()
        }
    }

    fn row<'a>(plan: &'a DrainPlan, name: &str) -> &'a VmiPlan {
        plan.vmis.iter().find(|v| v.name == name).unwrap()
    }

    #[test]
    fn a_migratable_vm_live_migrates_to_a_node_with_room() {
        let plan = plan_drain(&inputs(
            vec![vmi("a", "node-3", Some("LiveMigrate"), true, "2Gi")],
            vec![node("node-1", "64Gi"), node("node-3", "64Gi")],
        ));
        let a = row(&plan, "a");
        assert_eq!(a.action, Action::LiveMigrate);
        assert_eq!(a.target.as_deref(), Some("node-1"));
        assert_eq!(a.wave, Some(1));
        assert_eq!(a.budget_seconds, Some(450), "150 s/GiB × ceil(2.147 GB)");
        assert_eq!(plan.verdict, Verdict::WillComplete);
        assert_eq!(
            plan.estimated_duration_seconds,
            SETUP_SECONDS + (2 * GI).div_ceil(DEFAULT_BANDWIDTH)
        );
    }

    #[test]
    fn capacity_is_consumed_as_vms_are_placed() {
        // node-1 has room for one 6 GiB launcher pod, not two.
        let plan = plan_drain(&inputs(
            vec![
                vmi("a", "node-3", Some("LiveMigrate"), true, "6Gi"),
                vmi("b", "node-3", Some("LiveMigrate"), true, "6Gi"),
            ],
            vec![node("node-1", "8Gi"), node("node-3", "64Gi")],
        ));
        let actions: Vec<Action> = ["a", "b"].iter().map(|n| row(&plan, n).action).collect();
        assert!(
            actions.contains(&Action::LiveMigrate) && actions.contains(&Action::NoTarget),
            "{actions:?}"
        );
        assert_eq!(plan.verdict, Verdict::WillBlock);
        let blocked = plan
            .vmis
            .iter()
            .find(|v| v.action == Action::NoTarget)
            .unwrap();
        assert!(
            blocked.explanation.contains("1 insufficient memory"),
            "{}",
            blocked.explanation
        );
    }

    #[test]
    fn split_pods_keeps_every_resource_and_spread_match_of_the_pods_it_drops() {
        // node-1 has the most memory and one GPU, taken by a pod that is not inspected in
        // full; node-2 has one free.
        let gpu_node = |name: &str, memory: &str| {
            let mut n: Value = serde_json::to_value(node(name, memory)).unwrap();
            n["status"]["allocatable"]["nvidia.com/gpu"] = json!("1");
            n["status"]["allocatable"]["cpu"] = json!("16");
            n["metadata"]["labels"]["zone"] = json!(name);
            serde_json::from_value::<Node>(n).unwrap()
        };
        let mut v = vmi("a", "node-3", Some("LiveMigrate"), true, "2Gi");
        v.metadata
            .labels
            .get_or_insert_default()
            .insert("app".into(), "a".into());
        v.spec.topology_spread_constraints = vec![
            serde_json::from_value(json!({"maxSkew": 5, "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "a"}}}))
            .unwrap(),
        ];
        let mut source: Value = serde_json::to_value(launcher(&v, "2300Mi")).unwrap();
        source["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = json!("1");
        let other: Pod = serde_json::from_value(json!({"metadata": {"name": "trainer",
            "namespace": "prod", "labels": {"app": "a"}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "resources": {"requests":
                {"nvidia.com/gpu": "1", "cpu": "2", "memory": "1Gi"}}}]},
            "status": {"phase": "Running"}}))
        .unwrap();
        let all = DrainInputs {
            pods: vec![serde_json::from_value(source).unwrap(), other],
            ..inputs(
                vec![v],
                vec![
                    gpu_node("node-1", "128Gi"),
                    gpu_node("node-2", "64Gi"),
                    node("node-3", "64Gi"),
                ],
            )
        };
        let uids: HashSet<&str> = all.vmis.iter().filter_map(|v| v.uid()).collect();
        let spread = spread_selectors(&all.vmis);
        let (kept, usage) = split_pods(all.pods.clone(), &all.drain, &uids, &spread);
        assert_eq!(kept.len(), 1, "only the launcher pod is kept in full");
        let node_1 = &usage["node-1"];
        assert_eq!(node_1.requested["nvidia.com/gpu"], 1);
        assert_eq!(node_1.requested["cpu"], 2000);
        assert_eq!(node_1.pods, 1);
        assert_eq!(
            node_1.matching[&spread[0].key], 1,
            "the spread selector selects it"
        );
        let split = DrainInputs {
            pods: kept,
            node_usage: usage,
            ..all.clone()
        };
        for plan in [plan_drain(&all), plan_drain(&split)] {
            assert_eq!(row(&plan, "a").target.as_deref(), Some("node-2"));
        }
    }

    #[test]
    fn strategy_none_shuts_down_and_says_what_the_vm_does() {
        let mut i = inputs(
            vec![vmi("a", "node-3", Some("None"), true, "1Gi")],
            vec![node("node-1", "64Gi")],
        );
        i.vms = vec![
            serde_json::from_value(json!({"metadata": {"name": "a", "namespace": "prod"},
            "spec": {"runStrategy": "Always"}}))
            .unwrap(),
        ];
        let plan = plan_drain(&i);
        let a = row(&plan, "a");
        assert_eq!(a.action, Action::Shutdown);
        assert!(
            a.explanation.contains("runStrategy Always"),
            "{}",
            a.explanation
        );
        assert_eq!(plan.verdict, Verdict::WillCompleteWithShutdowns);
        assert_eq!(a.end_seconds, Some(DEFAULT_GRACE_SECONDS));
    }

    #[test]
    fn live_migrate_if_possible_but_not_migratable_shuts_down() {
        let plan = plan_drain(&inputs(
            vec![vmi(
                "a",
                "node-3",
                Some("LiveMigrateIfPossible"),
                false,
                "1Gi",
            )],
            vec![node("node-1", "64Gi")],
        ));
        let a = row(&plan, "a");
        assert_eq!(a.action, Action::ShutdownNotMigratable);
        assert!(a.explanation.contains("bare VMI"), "{}", a.explanation);
        assert_eq!(a.reasons[0].reason, "DisksNotLiveMigratable");
    }

    #[test]
    fn live_migrate_but_not_migratable_blocks_the_drain() {
        let plan = plan_drain(&inputs(
            vec![vmi("a", "node-3", Some("LiveMigrate"), false, "1Gi")],
            vec![node("node-1", "64Gi")],
        ));
        assert_eq!(row(&plan, "a").action, Action::BlocksDrain);
        assert_eq!(plan.verdict, Verdict::WillBlock);
        assert_eq!(plan.blockers[0].name, "a");
        assert!(
            row(&plan, "a")
                .fix
                .as_deref()
                .unwrap()
                .contains("PVC data-x")
        );
    }

    #[test]
    fn the_cluster_strategy_applies_when_the_vmi_has_none() {
        let plan = plan_drain(&inputs(
            vec![vmi("a", "node-3", None, false, "1Gi")],
            vec![node("node-1", "64Gi")],
        ));
        let a = row(&plan, "a");
        assert_eq!(a.eviction_strategy_source, StrategySource::ClusterConfig);
        assert_eq!(a.action, Action::BlocksDrain);
    }

    #[test]
    fn without_a_kubevirt_cr_defaults_apply() {
        let mut i = inputs(
            vec![vmi("a", "node-3", None, true, "1Gi")],
            vec![node("node-1", "64Gi")],
        );
        i.kubevirt = None;
        let plan = plan_drain(&i);
        assert!(plan.defaults_assumed);
        assert_eq!(
            row(&plan, "a").action,
            Action::Shutdown,
            "cluster default None"
        );
        assert!(plan.assumptions[0].contains("no KubeVirt CR"));
    }

    #[test]
    fn external_waits_but_does_not_block() {
        let plan = plan_drain(&inputs(
            vec![vmi("a", "node-3", Some("External"), true, "1Gi")],
            vec![node("node-1", "64Gi")],
        ));
        assert_eq!(row(&plan, "a").action, Action::External);
        assert!(!plan.blockers[0].blocking);
        assert_eq!(plan.verdict, Verdict::WillComplete);
    }

    #[test]
    fn an_unfinished_migration_means_already_migrating() {
        let mut i = inputs(
            vec![vmi("a", "node-3", Some("LiveMigrate"), true, "1Gi")],
            vec![node("node-1", "64Gi")],
        );
        i.vmims = vec![
            serde_json::from_value(
                json!({"metadata": {"name": "m1", "namespace": "prod", "uid": "m1"},
            "spec": {"vmiName": "a"}, "status": {"phase": "Running"}}),
            )
            .unwrap(),
        ];
        i.vmis[0].status.migration_state = Some(
            serde_json::from_value(json!({"migrationUid": "m1", "targetNode": "node-1"})).unwrap(),
        );
        let plan = plan_drain(&i);
        let a = row(&plan, "a");
        assert_eq!(a.action, Action::AlreadyMigrating);
        assert_eq!(a.target.as_deref(), Some("node-1"));
        assert_eq!(plan.limits.in_flight_per_node["node-3"], 1);
        assert!(a.explanation.contains("about"), "{}", a.explanation);

        // A phase vmctl does not know: counted as running (as KubeVirt's IsRunning does),
        // but never given an estimate (issue 11: `Exploded` read as "about 15s left").
        i.vmims[0].status.phase = Some("Exploded".into());
        let plan = plan_drain(&i);
        let a = row(&plan, "a");
        assert_eq!(a.action, Action::AlreadyMigrating);
        assert_eq!(a.estimate_seconds, None);
        assert!(
            a.explanation
                .contains("phase \"Exploded\", which this vmctl does not know"),
            "{}",
            a.explanation
        );
        assert!(!a.explanation.contains("left"), "{}", a.explanation);
        assert_eq!(plan.limits.in_flight_per_node["node-3"], 1);
    }

    #[test]
    fn untolerated_taints_and_cpu_models_leave_no_target() {
        let mut tainted: Value = serde_json::to_value(node("node-1", "64Gi")).unwrap();
        tainted["spec"]["taints"] =
            json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]);
        let mut other_cpu: Value = serde_json::to_value(node("node-2", "64Gi")).unwrap();
        other_cpu["metadata"]["labels"] = json!({"kubevirt.io/schedulable": "true",
            "cpu-model-migration.node.kubevirt.io/Icelake-Server": "true"});
        let plan = plan_drain(&inputs(
            vec![vmi("a", "node-3", Some("LiveMigrate"), true, "1Gi")],
            vec![
                serde_json::from_value(tainted).unwrap(),
                serde_json::from_value(other_cpu).unwrap(),
                node("node-3", "64Gi"),
            ],
        ));
        let a = row(&plan, "a");
        assert_eq!(a.action, Action::NoTarget);
        assert!(
            a.explanation
                .contains("untolerated taint dedicated=gpu:NoSchedule"),
            "{}",
            a.explanation
        );
        assert!(
            a.explanation
                .contains("no host-model CPU Cascadelake-Server support"),
            "{}",
            a.explanation
        );
        // Upgrade drains: every node fails a filter eviction cannot change, and the VM's
        // reason names the model and the label its target needs.
        assert!(
            a.explanation
                .contains("\"Preemption is not helpful for scheduling\"")
                && a.explanation.contains(
                    "target node to carry cpu-model-migration.node.kubevirt.io/Cascadelake-Server=true"
                ),
            "{}",
            a.explanation
        );
        assert!(
            a.fix
                .as_deref()
                .unwrap()
                .starts_with("keep a node with CPU model Cascadelake-Server schedulable"),
            "{:?}",
            a.fix
        );
        assert_eq!(a.reasons.last().unwrap().reason, "NoFeasibleTarget");
    }

    #[test]
    fn quota_without_headroom_blocks() {
        let mut i = inputs(
            vec![vmi("a", "node-3", Some("LiveMigrate"), true, "4Gi")],
            vec![node("node-1", "64Gi")],
        );
        i.quotas = vec![
            serde_json::from_value(json!({"metadata": {"name": "q", "namespace": "prod"},
            "status": {"hard": {"requests.memory": "10Gi"}, "used": {"requests.memory": "8Gi"}}}))
            .unwrap(),
        ];
        let plan = plan_drain(&i);
        assert_eq!(row(&plan, "a").action, Action::BlocksDrain);
        let b = &plan.blockers[0];
        assert_eq!((b.kind.as_str(), b.name.as_str()), ("quota", "q"));
        assert!(
            b.message.contains("requests.memory has 2.0 GiB left"),
            "{}",
            b.message
        );
    }

    #[test]
    fn harmful_pdbs_block_shutdowns_but_not_migrations() {
        let mut i = inputs(
            vec![
                vmi("stop", "node-3", Some("None"), true, "1Gi"),
                vmi("move", "node-3", Some("LiveMigrate"), true, "1Gi"),
            ],
            vec![node("node-1", "64Gi")],
        );
        i.pdbs = vec![
            serde_json::from_value(json!({"metadata": {"name": "p-stop", "namespace": "prod"},
                "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "stop"}}},
                "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}})).unwrap(),
            serde_json::from_value(json!({"metadata": {"name": "p-move", "namespace": "prod"},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "move"}}},
                "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}})).unwrap(),
        ];
        let plan = plan_drain(&i);
        let stop = plan.blockers.iter().find(|b| b.name == "p-stop").unwrap();
        assert!(stop.blocking && stop.reason == "MaxUnavailablePDB");
        let mv = plan.blockers.iter().find(|b| b.name == "p-move").unwrap();
        assert!(!mv.blocking);
        assert_eq!(plan.verdict, Verdict::WillBlock);
        assert!(
            row(&plan, "stop")
                .explanation
                .contains("PodDisruptionBudget p-stop refuses")
        );
    }

    #[test]
    fn waves_respect_the_per_node_limit_longest_first() {
        let sizes = ["8Gi", "1Gi", "4Gi", "2Gi", "16Gi"];
        let vmis = sizes
            .iter()
            .enumerate()
            .map(|(i, m)| vmi(&format!("v{i}"), "node-3", Some("LiveMigrate"), true, m))
            .collect();
        let plan = plan_drain(&inputs(
            vmis,
            vec![node("node-1", "256Gi"), node("node-2", "256Gi")],
        ));
        // Two at a time from node-3: the 16Gi and 8Gi start first.
        assert_eq!(row(&plan, "v4").wave, Some(1));
        assert_eq!(row(&plan, "v0").wave, Some(1));
        assert_eq!(row(&plan, "v4").start_seconds, Some(0));
        assert!(row(&plan, "v2").start_seconds.unwrap() > 0);
        let max_parallel = (0..plan.estimated_duration_seconds)
            .map(|t| {
                plan.vmis
                    .iter()
                    .filter(|v| {
                        v.start_seconds.is_some_and(|s| s <= t)
                            && v.end_seconds.is_some_and(|e| e > t)
                    })
                    .count()
            })
            .max()
            .unwrap();
        assert_eq!(max_parallel, 2);
        let total: u64 = plan.vmis.iter().map(|v| v.estimate_seconds.unwrap()).sum();
        assert!(
            plan.estimated_duration_seconds < total,
            "parallel is faster than serial"
        );
    }

    #[test]
    fn waves_respect_the_cluster_limit_minus_migrations_in_flight() {
        let mut i = inputs(
            vec![
                vmi("a", "node-3", Some("LiveMigrate"), true, "1Gi"),
                vmi("b", "node-3", Some("LiveMigrate"), true, "1Gi"),
            ],
            vec![node("node-1", "64Gi")],
        );
        i.kubevirt = kubevirt(
            json!({"evictionStrategy": "LiveMigrate", "migrations": {"parallelMigrationsPerCluster": 2}}),
        );
        // One migration elsewhere in the cluster takes one of the two slots.
        i.vmims = vec![
            serde_json::from_value(
                json!({"metadata": {"name": "m", "namespace": "prod", "uid": "m"},
            "spec": {"vmiName": "elsewhere"}, "status": {"phase": "Running"}}),
            )
            .unwrap(),
        ];
        let plan = plan_drain(&i);
        assert_eq!(plan.waves, 2);
        assert_ne!(row(&plan, "a").start_seconds, row(&plan, "b").start_seconds);
    }

    fn vmim(
        name: &str,
        vmi: &str,
        phase: &str,
        priority: Option<&str>,
        created: &str,
    ) -> VirtualMachineInstanceMigration {
        let mut m = json!({"metadata": {"name": name, "namespace": "prod", "uid": format!("u-{name}"),
            "creationTimestamp": created}, "spec": {"vmiName": vmi}, "status": {"phase": phase}});
        if let Some(p) = priority {
            m["spec"]["priority"] = json!(p);
        }
        serde_json::from_value(m).unwrap()
    }

    #[test]
    fn the_priority_queue_puts_system_critical_first_and_the_rest_behind_the_drain() {
        let mut i = inputs(
            vec![
                vmi("a", "node-3", Some("LiveMigrate"), true, "4Gi"),
                vmi("b", "node-3", Some("LiveMigrate"), true, "4Gi"),
                vmi("c", "node-3", Some("LiveMigrate"), true, "1Gi"),
                vmi("d", "node-3", Some("LiveMigrate"), true, "1Gi"),
            ],
            vec![node("node-1", "256Gi")],
        );
        i.kubevirt
            .as_mut()
            .unwrap()
            .status
            .observed_kube_virt_version = Some("v1.9.0".into());
        i.vmims = vec![
            // c's own evacuation from an earlier attempt: system-critical, created before.
            vmim(
                "evac-c",
                "c",
                "Pending",
                Some("system-critical"),
                "2026-11-29T02:50:00Z",
            ),
            // d's user migration: user-triggered waits behind the drain's system-critical ones.
            vmim(
                "user-d",
                "d",
                "Pending",
                Some("user-triggered"),
                "2026-11-29T02:40:00Z",
            ),
            // Elsewhere in the cluster, behind as well.
            vmim(
                "desched-x",
                "x",
                "Pending",
                Some("system-maintenance"),
                "2026-11-29T02:30:00Z",
            ),
        ];
        let plan = plan_drain(&i);
        assert_eq!(plan.queue.mode, "priority");
        assert!(
            plan.queue.why.contains("GA since v1.9"),
            "{}",
            plan.queue.why
        );
        let names = |q: &[QueuedMigration]| q.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&plan.queue.ahead), ["evac-c"]);
        assert_eq!(names(&plan.queue.behind), ["user-d", "desched-x"]);
        assert!(plan.queue.ahead[0].on_drained_node);
        assert!(!plan.queue.behind[1].on_drained_node);
        // Two outbound slots on node-3: c (ahead) and the longer of a/b start at once.
        assert_eq!(row(&plan, "c").action, Action::AlreadyMigrating);
        assert_eq!(row(&plan, "c").start_seconds, Some(0));
        let (sa, sb) = (
            row(&plan, "a").start_seconds.unwrap(),
            row(&plan, "b").start_seconds.unwrap(),
        );
        assert_eq!(sa.min(sb), 0);
        assert!(sa.max(sb) > 0, "one of a/b waits for a slot");
        // d waits until both a and b have started, though its VMIM is older.
        assert!(row(&plan, "d").start_seconds.unwrap() >= sa.max(sb));
        let last_own = row(&plan, "a").wave.max(row(&plan, "b").wave);
        assert!(
            row(&plan, "d").wave >= last_own,
            "d starts in or after the last wave of a/b"
        );
        assert!(
            plan.assumptions
                .iter()
                .any(|a| a.contains("migration queue priority"))
        );
    }

    #[test]
    fn a_vmi_the_descheduler_marked_is_evacuated_at_system_maintenance_priority() {
        let mut marked = vmi("a", "node-3", Some("LiveMigrate"), true, "4Gi");
        marked.status.evacuation_node_name = Some("node-3".into());
        marked
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(EVICTION_SOURCE_ANNOTATION.into(), "descheduler".into());
        assert_eq!(evacuation_priority(&marked), "system-maintenance");
        let mut i = inputs(
            vec![marked, vmi("d", "node-3", Some("LiveMigrate"), true, "1Gi")],
            vec![node("node-1", "256Gi")],
        );
        i.kubevirt = kubevirt(
            json!({"evictionStrategy": "LiveMigrate", "migrations": {"parallelOutboundMigrationsPerNode": 1}}),
        );
        i.kubevirt
            .as_mut()
            .unwrap()
            .status
            .observed_kube_virt_version = Some("v1.9.1".into());
        i.vmims = vec![vmim(
            "user-d",
            "d",
            "Pending",
            Some("user-triggered"),
            "2026-11-29T02:40:00Z",
        )];
        let plan = plan_drain(&i);
        // user-triggered (50) beats system-maintenance (20): d goes first on the one slot.
        assert_eq!(row(&plan, "d").start_seconds, Some(0));
        assert_eq!(row(&plan, "a").start_seconds, row(&plan, "d").end_seconds);
        assert!(
            row(&plan, "a").explanation.contains("system-maintenance"),
            "{}",
            row(&plan, "a").explanation
        );
        // In FIFO mode the same cluster would run the older VMIM first as well, but a fresh
        // system-critical evacuation would not wait for it under the priority queue:
        let mut critical = i.clone();
        critical.vmis[0].metadata.annotations = None;
        let plan = plan_drain(&critical);
        assert_eq!(row(&plan, "a").start_seconds, Some(0));
        assert!(row(&plan, "d").start_seconds.unwrap() > 0);
    }

    #[test]
    fn before_v1_9_a_vmim_with_spec_priority_shows_the_gate_is_on() {
        let mut i = inputs(
            vec![vmi("a", "node-3", Some("LiveMigrate"), true, "2Gi")],
            vec![node("node-1", "64Gi")],
        );
        // KubeVirt v1.8.4 (the helper): the gate is beta, off unless enabled.
        i.vmims = vec![vmim(
            "maint-x",
            "x",
            "Pending",
            Some("system-maintenance"),
            "2026-11-29T02:40:00Z",
        )];
        let plan = plan_drain(&i);
        assert_eq!(plan.queue.mode, "priority");
        assert!(
            plan.queue.why.contains("carries spec.priority"),
            "{}",
            plan.queue.why
        );
        assert!(plan.queue.ahead.is_empty());
        assert_eq!(plan.queue.behind[0].name, "maint-x");
        assert_eq!(row(&plan, "a").start_seconds, Some(0));
    }

    #[test]
    fn without_priorities_the_queue_is_fifo_and_pending_migrations_elsewhere_go_first() {
        let mut i = inputs(
            vec![vmi("a", "node-3", Some("LiveMigrate"), true, "2Gi")],
            vec![node("node-1", "64Gi")],
        );
        // KubeVirt v1.8.4 (the helper), no VMIM with spec.priority: FIFO by creation.
        i.kubevirt = kubevirt(
            json!({"evictionStrategy": "LiveMigrate", "migrations": {"parallelMigrationsPerCluster": 1}}),
        );
        i.vmims = vec![vmim("user-x", "x", "Pending", None, "2026-11-29T02:40:00Z")];
        let plan = plan_drain(&i);
        assert_eq!(plan.queue.mode, "fifo");
        assert!(
            plan.queue.why.contains("KubeVirt v1.8.4"),
            "{}",
            plan.queue.why
        );
        assert_eq!(plan.queue.ahead.len(), 1);
        assert!(plan.queue.behind.is_empty());
        // The one cluster slot goes to user-x first, for an average migration's time.
        let a = row(&plan, "a");
        assert_eq!(a.start_seconds, a.estimate_seconds);
        assert_eq!(a.wave, Some(1), "waves count the drained VMIs' starts only");
    }

    #[test]
    fn without_pending_migrations_the_queue_changes_nothing() {
        let plan = plan_drain(&inputs(
            vec![vmi("a", "node-3", Some("LiveMigrate"), true, "2Gi")],
            vec![node("node-1", "64Gi")],
        ));
        assert!(plan.queue.ahead.is_empty() && plan.queue.behind.is_empty());
        assert_eq!(row(&plan, "a").start_seconds, Some(0));
        assert!(
            !plan
                .assumptions
                .iter()
                .any(|a| a.contains("migration queue"))
        );
    }

    fn pdb(v: Value) -> PodDisruptionBudget {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn an_empty_selector_covers_every_launcher_pod_of_its_namespace() {
        let mut i = inputs(
            vec![
                vmi("stop", "node-3", Some("None"), true, "1Gi"),
                vmi("move", "node-3", Some("LiveMigrate"), true, "1Gi"),
            ],
            vec![node("node-1", "64Gi")],
        );
        i.pdbs = vec![
            pdb(json!({"metadata": {"name": "all", "namespace": "prod"},
                "spec": {"maxUnavailable": 0, "selector": {}},
                "status": {"disruptionsAllowed": 0, "currentHealthy": 2, "desiredHealthy": 2, "expectedPods": 2}})),
            // Same selector in another namespace: not ours.
            pdb(json!({"metadata": {"name": "all", "namespace": "dev"},
                "spec": {"maxUnavailable": 0, "selector": {}},
                "status": {"disruptionsAllowed": 0}})),
        ];
        let plan = plan_drain(&i);
        assert_eq!(plan.verdict, Verdict::WillBlock);
        let blockers: Vec<&DrainBlocker> =
            plan.blockers.iter().filter(|b| b.kind == "pdb").collect();
        assert_eq!(blockers.len(), 1);
        assert_eq!(blockers[0].namespace.as_deref(), Some("prod"));
        assert_eq!(blockers[0].vmis, ["prod/move", "prod/stop"]);
        assert!(
            blockers[0]
                .message
                .contains("evicting prod/stop is answered 429"),
            "{}",
            blockers[0].message
        );
        assert!(
            blockers[0]
                .message
                .contains("needs 2 healthy pods and has 2 currently")
        );
        assert_eq!(row(&plan, "move").action, Action::LiveMigrate);
        assert!(row(&plan, "stop").end_seconds.is_none());
    }

    #[test]
    fn two_pdbs_block_a_shutdown_with_the_500_and_an_invalid_one_is_reported() {
        let mut i = inputs(
            vec![vmi("stop", "node-3", Some("None"), true, "1Gi")],
            vec![node("node-1", "64Gi")],
        );
        let allows = json!({"disruptionsAllowed": 5, "currentHealthy": 5, "desiredHealthy": 0, "expectedPods": 5});
        i.pdbs = vec![
            pdb(json!({"metadata": {"name": "by-app", "namespace": "prod"},
                "spec": {"minAvailable": 0, "selector": {"matchLabels": {"app": "stop"}}}, "status": allows})),
            pdb(json!({"metadata": {"name": "by-expr", "namespace": "prod"},
                "spec": {"minAvailable": 0, "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["stop"]}]}},
                "status": allows})),
            pdb(json!({"metadata": {"name": "broken", "namespace": "prod"},
                "spec": {"minAvailable": 1, "selector": {"matchExpressions": [{"key": "app", "operator": "Foo"}]}}})),
        ];
        let plan = plan_drain(&i);
        assert_eq!(plan.verdict, Verdict::WillBlock);
        let two = plan
            .blockers
            .iter()
            .find(|b| b.reason == "MultiplePodDisruptionBudgets")
            .unwrap();
        assert!(two.blocking);
        assert_eq!(two.name, "by-app + by-expr");
        assert!(two.message.contains(crate::policy::pdb::MORE_THAN_ONE_PDB));
        let broken = plan.blockers.iter().find(|b| b.name == "broken").unwrap();
        assert!(!broken.blocking);
        assert_eq!(broken.reason, "InvalidSelector");
        assert!(row(&plan, "stop").explanation.contains("500"));
    }

    #[test]
    fn two_pdbs_over_a_migrating_vmi_matter_only_on_kubevirt_up_to_1_4() {
        let mut i = inputs(
            vec![vmi("move", "node-3", Some("LiveMigrate"), true, "1Gi")],
            vec![node("node-1", "64Gi")],
        );
        let allows = json!({"disruptionsAllowed": 1, "currentHealthy": 1, "desiredHealthy": 0, "expectedPods": 1});
        i.pdbs = vec![
            pdb(json!({"metadata": {"name": "all", "namespace": "prod"},
                "spec": {"minAvailable": 0, "selector": {}}, "status": allows})),
            pdb(
                json!({"metadata": {"name": "kubevirt-disruption-budget-abc", "namespace": "prod"},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"kubevirt.io/created-by": "uid-move"}}},
                "status": allows}),
            ),
        ];
        // v1.8.4 (the helper): the webhook answers every eviction of a migrating VMI.
        let plan = plan_drain(&i);
        assert!(
            !plan
                .blockers
                .iter()
                .any(|b| b.reason == "MultiplePodDisruptionBudgets")
        );
        assert_eq!(plan.verdict, Verdict::WillComplete);
        i.kubevirt
            .as_mut()
            .unwrap()
            .status
            .observed_kube_virt_version = Some("v1.4.2".into());
        let plan = plan_drain(&i);
        let b = plan
            .blockers
            .iter()
            .find(|b| b.reason == "MultiplePodDisruptionBudgets")
            .unwrap();
        assert!(!b.blocking, "the migration goes on");
        assert!(b.message.contains("kubectl drain stops"), "{}", b.message);
        assert_eq!(plan.verdict, Verdict::WillComplete);
    }

    #[test]
    fn a_budget_smaller_than_the_shutdowns_warns_without_blocking() {
        let mut i = inputs(
            vec![
                vmi("s1", "node-3", Some("None"), true, "1Gi"),
                vmi("s2", "node-3", Some("None"), true, "1Gi"),
            ],
            vec![node("node-1", "64Gi")],
        );
        // No status: computed from the two Ready launcher pods, minAvailable 1 -> 1 allowed.
        i.pdbs = vec![pdb(
            json!({"metadata": {"name": "one", "namespace": "prod"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"kubevirt.io": "virt-launcher"}}}}),
        )];
        let plan = plan_drain(&i);
        assert_eq!(plan.verdict, Verdict::WillCompleteWithShutdowns);
        let b = plan.blockers.iter().find(|b| b.name == "one").unwrap();
        assert!(!b.blocking);
        assert_eq!(b.reason, "BudgetShorterThanShutdowns");
        assert!(
            b.message
                .contains("allows 1 disruption(s): 2 healthy, 1 desired, 2 expected; computed"),
            "{}",
            b.message
        );
    }

    #[test]
    fn the_pods_of_a_pdb_without_status_are_kept_whole() {
        let other = |name: &str, app: &str| -> Pod {
            serde_json::from_value(
                json!({"metadata": {"name": name, "namespace": "prod", "labels": {"app": app}},
                "spec": {"nodeName": "node-1", "containers": []}, "status": {"phase": "Running"}}),
            )
            .unwrap()
        };
        let pdbs = vec![
            pdb(
                json!({"metadata": {"name": "unsynced", "namespace": "prod"},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}}),
            ),
            pdb(json!({"metadata": {"name": "synced", "namespace": "prod"},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
                "status": {"disruptionsAllowed": 1}})),
        ];
        let (kept, rest) = pods_of_unsynced_pdbs(
            vec![other("db-0", "db"), other("web-0", "web")],
            &pdbs,
            |rest| rest.collect::<Vec<Pod>>(),
        );
        let names = |ps: &[Pod]| -> Vec<String> {
            ps.iter().filter_map(|p| p.metadata.name.clone()).collect()
        };
        assert_eq!(names(&kept), ["db-0"]);
        assert_eq!(names(&rest), ["web-0"]);
        // The plan computes the unsynced budget from them: with db-0 split away (its node is
        // not drained) the PDB would count one pod fewer.
        let mut i = inputs(
            vec![vmi("db", "node-3", Some("None"), true, "1Gi")],
            vec![node("node-1", "64Gi")],
        );
        i.pods[0]
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert("app".into(), "db".into());
        i.pdbs = pdbs.clone();
        let whole = DrainInputs {
            pods: i.pods.iter().cloned().chain(kept).collect(),
            ..i.clone()
        };
        let plan = plan_drain(&whole);
        let report = plan.pdbs.iter().find(|p| p.name == "unsynced").unwrap();
        let b = report.budget.as_ref().unwrap();
        assert_eq!(
            (b.expected_pods, b.current_healthy),
            (2, 1),
            "db-0 is not Ready"
        );
        assert_eq!(b.disruptions_allowed, 0);
        let plan = plan_drain(&i);
        let b = plan
            .pdbs
            .iter()
            .find(|p| p.name == "unsynced")
            .unwrap()
            .budget
            .clone()
            .unwrap();
        assert_eq!(b.expected_pods, 1);
    }

    #[test]
    fn finished_vmis_are_skipped() {
        let mut failed = vmi("gone", "node-3", Some("LiveMigrate"), true, "1Gi");
        failed.status.phase = Some(crate::model::vmi::VmiPhase::Failed);
        let plan = plan_drain(&inputs(vec![failed], vec![node("node-1", "64Gi")]));
        assert!(plan.vmis.is_empty());
        assert_eq!(plan.skipped[0].reason, "prod/gone");
    }

    #[test]
    fn several_nodes_drained_together_are_not_targets() {
        let mut i = inputs(
            vec![vmi("a", "node-3", Some("LiveMigrate"), true, "1Gi")],
            vec![
                node("node-1", "64Gi"),
                node("node-2", "64Gi"),
                node("node-3", "64Gi"),
            ],
        );
        i.drain = vec!["node-3".into(), "node-1".into()];
        let plan = plan_drain(&i);
        assert_eq!(row(&plan, "a").target.as_deref(), Some("node-2"));
    }
}
