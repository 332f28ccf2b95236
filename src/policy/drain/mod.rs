//! `plan_drain`: what draining node(s) will do to every VMI on them (FACTS §2, §4, §5.2, §6).
//! Pure: plain objects in, a plan out.
//!
//! [`plan_drain`] is the recipe; each step is a pure function in its own file, with its own
//! tests, and passes plain data to the next:
//!
//! 1. [`migratability`]: why a VMI cannot live-migrate ([`migratability::assess`]).
//! 2. [`strategy`]: what its evictionStrategy does to it ([`strategy::decide`]), unless
//! 3. [`feasibility`]: a migration is already in flight ([`feasibility::in_flight`]); how long
//!    a migration takes and whether it fits its completion budget.
//! 4. [`quota`]: whether the namespace admits the migration target pod, and
//! 5. [`placement`]: which node takes it ([`placement::place`]), biggest VMs first.
//! 6. [`pdbs`]: what the PodDisruptionBudgets answer for the VMIs the drain shuts down.
//! 7. [`waves`]: KubeVirt's queue and the waves under the parallel limits.
//! 8. [`verdict`]: the outcome, the duration, the order, what the plan assumed.
//!
//! With guest dirty rates (`plan-drain --metrics|--prometheus`), [`convergence`] predicts each
//! live migration under its effective configuration before it is placed: its estimate (for
//! the waves) becomes the predicted time, and one that does not complete holds its slot until
//! KubeVirt aborts it.

pub mod convergence;
pub mod evict;
pub mod execute;
pub mod fate;
pub mod feasibility;
pub mod migratability;
pub mod pdbs;
pub mod placement;
pub mod quota;
pub mod strategy;
#[cfg(test)]
mod tests;
pub mod verdict;
pub mod waves;

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use self::feasibility::InFlight;
use self::migratability::Assessment;
use self::strategy::Shutdown;
use self::waves::Candidate;
use super::budget::completion_budget_seconds;
use super::compat::{self, CpuCompat, CpuMode, CpuNeeds, LauncherImage};
use super::eviction::{EffectiveStrategy, StrategySource, effective_eviction_strategy};
use super::index::{MigrationIndex, PodIndex, quotas_by_namespace, work};
use super::links::CREATED_BY_LABEL;
use super::migration_policy::{effective_config, matching_policy};
use super::pdb::{Budget, EvictionAnswer};
use super::placement::{TargetPod, TargetSearch};
use super::pods::{LAUNCHER_LABEL, LAUNCHER_VALUE, pod_labels};
use super::scheduling::{
    NodeUsage, Resources, SelectorIndex, SpreadSelector, holds_resources, spread_selectors,
};
use crate::model::kubevirt::EffectiveMigrationConfig;
use crate::model::{
    KubeVirt, MigrationPolicy, Namespace, Node, Pod, PodDisruptionBudget, Quantity, ResourceQuota,
    Time, VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration,
};

pub use self::pdbs::pods_of_unsynced_pdbs;
pub use self::waves::{
    EVACUATION_PRIORITY, EVICTION_SOURCE_ANNOTATION, evacuation_priority, migration_queue,
    priority_weight,
};

/// Assumed transfer rate when the cluster sets no `bandwidthPerMigration`: 256 MiB/s, a
/// conservative figure for pre-copy over a 10 GbE pod network with multifd.
pub const DEFAULT_BANDWIDTH: u64 = 256 * 1024 * 1024;
/// Assumed time to create, schedule and hand off a target pod before memory moves.
pub const SETUP_SECONDS: u64 = 15;
/// Estimated launcher overhead when a VMI's pod is not visible.
pub const LAUNCHER_OVERHEAD: u64 = 300 * 1024 * 1024;
/// virt-controller deletes a target pod unschedulable for this long (FACTS §6.2).
pub use crate::model::kubevirt::UNSCHEDULABLE_POD_TIMEOUT_SECONDS as UNSCHEDULABLE_TIMEOUT_SECONDS;
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
    /// The API server's version (`/version` live, a snapshot's `serverVersion`, else the
    /// newest kubelet as a lower bound): how the eviction API reads `selector: {}`.
    pub server_version: Option<crate::model::ServerVersion>,
    /// Guest dirty rates read from virt-handler (`--metrics`, `--prometheus`): each live
    /// migration is then predicted ([`convergence`]). None: no prediction, the plan is as
    /// without them.
    pub dirty_rates: Option<convergence::DirtyRates>,
    /// When a retry or a wait counts as a loop that never ends (`--loop-failures`,
    /// `--sync-timeout`, `--handoff-timeout`; [`crate::triage::loops`]).
    pub loops: crate::triage::LoopThresholds,
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
    /// With dirty rates: the predictor's object for a live migration the plan starts
    /// (`migration::predict`, KubeVirt's words).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prediction: Option<crate::migration::predict::Prediction>,
    /// With dirty rates: what the plan makes of the prediction (KubeVirt's timing, the
    /// estimate, the finding and the alternatives in MigrationPolicy words).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub convergence: Option<convergence::Convergence>,
    /// For a live migration (or one in flight, or one without a target): what KubeVirt
    /// requires of the target node in CPU and machine terms, whether a node has it, and the
    /// risks the labels and launcher versions show ([`super::compat`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuCompat>,
    /// The loop the VMI is caught in (issue 25 §4, [`crate::triage::loops`]): an evacuation
    /// loop or a decentralized migration stuck waiting for its peer holds the row
    /// (blocks-drain); a stuck backend-storage hand-off is said only.
    #[serde(rename = "loop", skip_serializing_if = "Option::is_none")]
    pub stuck: Option<crate::triage::Loop>,
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
    /// For `selector: {}`: how this API server's eviction API reads it, and for which
    /// Kubernetes versions the answer holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eviction_note: Option<String>,
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
    /// With dirty rates: the predictions' summary (source, counts, the VMs that will not
    /// complete, what could not be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub convergence: Option<convergence::ConvergenceReport>,
    /// The compatibility findings before anything moves, one per VMI and finding:
    /// `blocks` (no CPU-compatible node: the VMI is no-target and the drain blocks) or
    /// `risk` (the migration may still fail; the verdict does not change).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compatibility: Vec<CompatFinding>,
}

/// One compatibility finding of the plan ([`super::compat`]).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompatFinding {
    /// `namespace/name`.
    pub vmi: String,
    pub node: String,
    pub target: Option<String>,
    /// `blocks` or `risk`.
    pub severity: &'static str,
    /// `no-compatible-node`, `unlisted-features`, `pinned-features-gone`, `launcher-skew`.
    pub kind: &'static str,
    pub message: String,
}

impl VmiPlan {
    /// `namespace/name`, as blockers and PDB reports list it.
    pub fn id(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Marks the row as held by `hold`, with `action` (blocks-drain or no-target): it does not
    /// start. Returns the blocker to list.
    fn hold(
        &mut self,
        action: Action,
        hold: Hold,
        explanation: String,
        fix: String,
    ) -> DrainBlocker {
        self.action = action;
        self.reasons.push(Reason {
            reason: hold.reason.clone(),
            message: hold.message.clone(),
        });
        self.explanation = explanation;
        self.fix = Some(fix);
        self.start_seconds = None;
        self.estimate_seconds = None;
        self.end_seconds = None;
        hold.blocker(self)
    }
}

/// What a step found holding up one VMI; [`Hold::blocker`] names the VMI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    /// `vmi`, `quota`, `external`.
    pub kind: &'static str,
    /// The object that holds it (a ResourceQuota); None: the VMI itself.
    pub object: Option<String>,
    pub reason: String,
    pub message: String,
    /// False when it only makes the drain wait.
    pub blocking: bool,
}

impl Hold {
    pub fn blocker(self, plan: &VmiPlan) -> DrainBlocker {
        DrainBlocker {
            kind: self.kind.into(),
            namespace: Some(plan.namespace.clone()),
            name: self.object.unwrap_or_else(|| plan.name.clone()),
            reason: self.reason,
            message: self.message,
            vmis: vec![plan.id()],
            blocking: self.blocking,
        }
    }
}

/// The rows the per-VMI steps produce, for the steps after them.
#[derive(Default)]
pub struct Rows<'a> {
    pub plans: Vec<VmiPlan>,
    /// The VMI of each plan, by position.
    pub vmis: Vec<&'a VirtualMachineInstance>,
    /// The live migrations the drain starts.
    pub candidates: Vec<Candidate>,
    pub blockers: Vec<DrainBlocker>,
    /// Migrations in flight from the drained nodes: (source node, remaining seconds).
    pub in_flight: Vec<(String, u64)>,
    /// The compatibility findings ([`compatibility`]).
    pub findings: Vec<CompatFinding>,
}

/// The joins of the plan, each a lookup, so that a plan stays linear in what it reads.
struct Lookups<'a> {
    namespaces: BTreeMap<&'a str, &'a Namespace>,
    vms: HashMap<(&'a str, &'a str), &'a VirtualMachine>,
    pods: PodIndex<'a>,
    migrations: MigrationIndex<'a>,
    quotas: HashMap<&'a str, Vec<&'a ResourceQuota>>,
    /// The virt-launcher image a new target pod gets.
    launcher: Option<LauncherImage>,
}

impl<'a> Lookups<'a> {
    fn new(inputs: &'a DrainInputs) -> Self {
        Lookups {
            namespaces: inputs
                .namespaces
                .iter()
                .filter_map(|n| n.metadata.name.as_deref().map(|name| (name, n)))
                .collect(),
            vms: inputs
                .vms
                .iter()
                .map(|v| {
                    work::step(1);
                    ((v.namespace(), v.name()), v)
                })
                .collect(),
            pods: PodIndex::new(&inputs.pods),
            migrations: MigrationIndex::new(&inputs.vmims),
            quotas: quotas_by_namespace(&inputs.quotas),
            launcher: inputs.kubevirt.as_ref().and_then(compat::launcher_image),
        }
    }
}

fn is_launcher_of(p: &Pod, vmi: &VirtualMachineInstance) -> bool {
    work::step(1);
    let l = pod_labels(p);
    l.get(LAUNCHER_LABEL).map(String::as_str) == Some(LAUNCHER_VALUE)
        && vmi.uid().is_some()
        && l.get(CREATED_BY_LABEL).map(String::as_str) == vmi.uid()
}

fn pod_node(p: &Pod) -> Option<&str> {
    p.spec.as_ref().and_then(|s| s.node_name.as_deref())
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
        let node = pod_node(&pod);
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

/// The plan. Pure. The recipe: index what the plan reads and what every node holds; then,
/// per VMI still running, biggest first, its row (`plan_vmi`); then the PDBs, the waves and
/// the verdict.
pub fn plan_drain(inputs: &DrainInputs) -> DrainPlan {
    let selectors = SelectorIndex::new(spread_selectors(&inputs.vmis));
    let usage = node_usage(inputs, &selectors);
    let mut search = TargetSearch::new(&inputs.nodes, &inputs.drain, &usage, selectors);
    plan_drain_in(inputs, &mut search)
}

/// [`plan_drain`] with a target search the caller keeps across drains (a rolling
/// maintenance): the search holds the nodes, which of them are drained and what each holds
/// (every pod, `inputs.pods` included), so `inputs.nodes` and `inputs.node_usage` are not
/// read. The search comes out with this drain's placements consumed.
pub fn plan_drain_in(inputs: &DrainInputs, search: &mut TargetSearch) -> DrainPlan {
    let kubevirt = inputs.kubevirt.as_ref();
    let lookups = Lookups::new(inputs);
    let vmi_nodes = vmi_nodes(&inputs.vmis);
    let limits = waves::limits(
        &effective_config(kubevirt, None),
        &inputs.vmims,
        &vmi_nodes,
        &inputs.drain,
    );
    let (skipped, vmis) = running_biggest_first(&inputs.vmis);

    let mut rows = Rows::default();
    for vmi in vmis {
        plan_vmi(vmi, inputs, &lookups, search, &mut rows);
    }
    let (pdb_blockers, pdbs) = pdbs::judge_pdbs(inputs, &mut rows.plans, &rows.vmis, &lookups.pods);
    rows.blockers.extend(pdb_blockers);
    let (queue, waves) = waves::waves(&mut rows, &limits, kubevirt, &inputs.vmims, &vmi_nodes);

    let Rows {
        mut plans,
        mut blockers,
        findings: mut compatibility,
        ..
    } = rows;
    compatibility.sort_by(|a, b| (a.severity, &a.vmi).cmp(&(b.severity, &b.vmi)));
    convergence::no_end_for_ever(&mut plans);
    let convergence = inputs.dirty_rates.as_ref().map(|rates| {
        convergence::report(
            rates,
            plans
                .iter()
                .filter_map(|p| p.convergence.as_ref().map(|c| (p.id(), p.node.as_str(), c))),
        )
    });
    verdict::sort_blockers(&mut blockers);
    let verdict = verdict::verdict(&blockers, &plans);
    let estimated = verdict::estimated_seconds(&plans);
    verdict::sort_rows(&mut plans);
    let mut assumptions = verdict::assumptions(inputs.bandwidth, &queue, kubevirt.is_none());
    if convergence.is_some() {
        assumptions.push(format!(
            "with dirty rates: each live migration is predicted pass by pass under its effective configuration (migration::predict: bandwidthPerMigration as a cap when set, the completion budget, maxDowntimeMs, post-copy and pausing only with allowWorkloadDisruption, auto-converge); KubeVirt switches to post-copy or pauses only once the completion budget is spent, and one that does not complete holds its slot until KubeVirt aborts it; {}",
            convergence::CAVEAT
        ));
    }
    DrainPlan {
        nodes: inputs.drain.clone(),
        verdict,
        estimated_duration_seconds: estimated,
        blockers,
        vmis: plans,
        skipped,
        incoming: verdict::incoming(&inputs.incoming, &inputs.drain),
        limits,
        queue,
        pdbs,
        waves,
        defaults_assumed: kubevirt.is_none(),
        kubevirt_version: kubevirt.and_then(|k| k.version().map(str::to_string)),
        assumptions,
        convergence,
        compatibility,
    }
}

/// What every node holds (requests, pods, pods each spread selector counts), to be consumed
/// as VMs are placed: the pods inspected here plus the usage of the others.
fn node_usage(inputs: &DrainInputs, selectors: &SelectorIndex) -> BTreeMap<String, NodeUsage> {
    let mut usage: BTreeMap<String, NodeUsage> = inputs.node_usage.clone();
    for pod in inputs.pods.iter().filter(|p| holds_resources(p)) {
        if let Some(node) = pod_node(pod) {
            usage
                .entry(node.to_string())
                .or_default()
                .add(pod, selectors);
        }
    }
    usage
}

/// (namespace, name) → node of every VMI on the drained nodes that names its node.
fn vmi_nodes(vmis: &[VirtualMachineInstance]) -> BTreeMap<(String, String), String> {
    vmis.iter()
        .filter_map(|v| {
            let node = v.status.node_name.clone()?;
            Some(((v.namespace().to_string(), v.name().to_string()), node))
        })
        .collect()
}

/// The VMIs the drain does not touch (finished: no running pod), said as skipped, and the
/// others, biggest first: they are the hardest to fit and the longest to move.
fn running_biggest_first(
    vmis: &[VirtualMachineInstance],
) -> (Vec<Reason>, Vec<&VirtualMachineInstance>) {
    let (finished, mut running): (Vec<&VirtualMachineInstance>, Vec<&VirtualMachineInstance>) =
        vmis.iter()
            .partition(|v| v.status.phase.as_ref().is_some_and(|p| p.is_final()));
    let skipped = finished
        .iter()
        .map(|v| Reason {
            reason: format!("{}/{}", v.namespace(), v.name()),
            message: format!(
                "phase {}: no running pod, the drain does not touch it",
                v.status.phase.as_ref().map(|p| p.as_str()).unwrap_or("")
            ),
        })
        .collect();
    running.sort_by_key(|v| std::cmp::Reverse(v.guest_memory().map(Quantity::bytes).unwrap_or(0)));
    (skipped, running)
}

/// The node a VMI runs on: `status.nodeName`, else its `kubevirt.io/nodeName` label.
pub fn vmi_node(vmi: &VirtualMachineInstance) -> String {
    vmi.status
        .node_name
        .clone()
        .or_else(|| vmi.label(NODE_NAME_LABEL).map(str::to_string))
        .unwrap_or_default()
}

/// The label virt-handler puts on a VMI naming its node.
pub const NODE_NAME_LABEL: &str = "kubevirt.io/nodeName";

/// What the plan knows of one VMI before deciding anything: its node, strategy,
/// migratability, migration settings, target pod, timings and quota headroom.
struct VmiFacts<'v> {
    node: String,
    strategy: EffectiveStrategy,
    assessment: Assessment,
    policy: Option<String>,
    /// The matching policy sets `bandwidthPerMigration` itself.
    policy_sets_bandwidth: bool,
    config: EffectiveMigrationConfig,
    memory: Option<u64>,
    vmi: &'v VirtualMachineInstance,
    /// The VMI with KubeVirt's CPU selectors the scheduling filter does not derive itself
    /// ([`compat::augment`]); None: the VMI as it is.
    target_vmi: Option<VirtualMachineInstance>,
    requests: Resources,
    cpu_mode: CpuMode,
    needs: CpuNeeds,
    pod_memory: u64,
    budget: Option<u64>,
    bandwidth: u64,
    transfer: Option<u64>,
    vm: Option<String>,
    run_strategy: Option<String>,
    /// The namespace's ResourceQuota without room for the target pod, and why.
    quota: Option<(String, String)>,
}

impl VmiFacts<'_> {
    /// The migration target pod the scheduler sees.
    fn target_pod(&self) -> TargetPod<'_> {
        TargetPod {
            vmi: self.target_vmi.as_ref().unwrap_or(self.vmi),
            requests: self.requests.clone(),
            pinned_cpu: self.needs.pinned(),
        }
    }
}

fn vmi_facts<'v>(
    vmi: &'v VirtualMachineInstance,
    inputs: &DrainInputs,
    at: &Lookups,
    search: &TargetSearch,
) -> VmiFacts<'v> {
    let kubevirt = inputs.kubevirt.as_ref();
    let node = vmi_node(vmi);
    let policy = matching_policy(
        vmi,
        at.namespaces.get(vmi.namespace()).copied(),
        &inputs.policies,
    );
    let policy_obj = policy
        .as_ref()
        .and_then(|p| inputs.policies.iter().find(|x| x.name() == p.name));
    let config = effective_config(kubevirt, policy_obj);
    let memory = vmi.guest_memory().map(Quantity::bytes);
    let launcher = at.pods.candidates_for(vmi).into_iter().find(|p| {
        is_launcher_of(p, vmi) && holds_resources(p) && pod_node(p) == Some(node.as_str())
    });
    let needs = placement::target_needs(vmi, launcher, memory);
    let cpu_needs = CpuNeeds::of(
        vmi,
        search.node_cpu(&node),
        launcher
            .and_then(|p| p.spec.as_ref())
            .and_then(|s| s.node_selector.as_ref()),
        search.labelled(),
    );
    let ns_quotas = at
        .quotas
        .get(vmi.namespace())
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let quota = quota::quota_problem(
        ns_quotas,
        needs.memory,
        needs.memory_limit,
        needs.requests.get("cpu").copied().unwrap_or(0),
    );
    let bandwidth = feasibility::bandwidth(config.bandwidth_per_migration, inputs.bandwidth);
    let vm = at.vms.get(&(vmi.namespace(), vmi.name())).copied();
    VmiFacts {
        strategy: effective_eviction_strategy(vmi, kubevirt),
        assessment: migratability::assess(&super::migratability::migratability(vmi)),
        policy: policy.map(|p| p.name),
        policy_sets_bandwidth: policy_obj.is_some_and(|p| p.spec.bandwidth_per_migration.is_some()),
        budget: feasibility::completion_budget(
            completion_budget_seconds(vmi, config.completion_timeout_per_gib),
            config.allow_workload_disruption,
        ),
        transfer: feasibility::transfer_seconds(memory, bandwidth),
        bandwidth,
        config,
        memory,
        pod_memory: needs.memory,
        vmi,
        target_vmi: compat::augment(vmi, &cpu_needs),
        requests: needs.requests,
        cpu_mode: compat::mode(vmi),
        needs: cpu_needs,
        vm: vm.map(|v| v.name().to_string()),
        run_strategy: vm.map(|v| v.run_strategy().to_string()),
        quota,
        node,
    }
}

/// A VMI's row before any step decided: a live migration to be placed.
fn new_row(vmi: &VirtualMachineInstance, f: &VmiFacts) -> VmiPlan {
    VmiPlan {
        namespace: vmi.namespace().to_string(),
        name: vmi.name().to_string(),
        vm: f.vm.clone(),
        node: f.node.clone(),
        eviction_strategy: f.strategy.strategy.as_str().to_string(),
        eviction_strategy_source: f.strategy.source,
        live_migratable: f.assessment.live_migratable,
        reasons: f.assessment.reasons.clone(),
        action: Action::LiveMigrate,
        explanation: String::new(),
        fix: None,
        target: None,
        wave: None,
        start_seconds: None,
        end_seconds: None,
        estimate_seconds: None,
        budget_seconds: f.budget,
        memory_bytes: f.memory,
        pod_memory_request_bytes: f.pod_memory,
        migration_policy: f.policy.clone(),
        allow_post_copy: f.config.allow_post_copy,
        allow_auto_converge: f.config.allow_auto_converge,
        bandwidth_bytes_per_second: f.bandwidth,
        evacuation_node: vmi.evacuation_node().map(str::to_string),
        run_strategy: f.run_strategy.clone(),
        prediction: None,
        convergence: None,
        cpu: None,
        stuck: None,
    }
}

/// One VMI's row: its facts, then the steps in order: the migration already in flight
/// (feasibility) or what its evictionStrategy does (strategy); then, for a live migration,
/// the quota and the placement.
fn plan_vmi<'a>(
    vmi: &'a VirtualMachineInstance,
    inputs: &DrainInputs,
    at: &Lookups,
    search: &mut TargetSearch,
    rows: &mut Rows<'a>,
) {
    let f = vmi_facts(vmi, inputs, at, search);
    let mut plan = new_row(vmi, &f);
    // A loop that never ends (loops.rs, the same detection explain, status and drain use):
    // without a clock, none is judged.
    let stuck = inputs.now.as_ref().and_then(|now| {
        crate::triage::loops::detect(
            vmi.namespace(),
            vmi.name(),
            Some(vmi),
            at.migrations.of_vmi(vmi.namespace(), vmi.name()),
            now.0,
            &inputs.loops,
        )
    });
    if let Some(l) = stuck.as_ref().filter(|l| l.blocks_drain()) {
        in_a_loop(&mut plan, l, rows);
    } else if let Some(m) = at.migrations.active_of(vmi.namespace(), vmi.name()) {
        let flight = feasibility::in_flight(m, vmi, f.transfer, inputs.now.as_ref());
        already_migrating(&mut plan, &flight, &f, search, rows);
        if let Some(l) = stuck
            .as_ref()
            .filter(|_| plan.action == Action::AlreadyMigrating)
        {
            handoff_stuck(&mut plan, l, rows);
        }
    } else {
        let shutdown = Shutdown::of(vmi, f.vm.is_some(), f.run_strategy.as_deref());
        let decision = strategy::decide(&f.strategy.strategy, &f.assessment, &shutdown);
        plan.action = decision.action;
        plan.explanation = decision.explanation;
        plan.fix = decision.fix;
        if let Some(seconds) = decision.shutdown_seconds {
            plan.start_seconds = Some(0);
            plan.estimate_seconds = Some(seconds);
            plan.end_seconds = Some(seconds);
        }
        if let Some(hold) = decision.hold {
            rows.blockers.push(hold.blocker(&plan));
        }
    }
    if plan.action == Action::LiveMigrate {
        let predicted = inputs
            .dirty_rates
            .as_ref()
            .zip(f.memory)
            .map(|(rates, memory)| {
                convergence::judge(&convergence::Setting {
                    memory,
                    dirty: rates.of(vmi.namespace(), vmi.name()),
                    config: &f.config,
                    policy: f.policy.as_deref(),
                    policy_sets_bandwidth: f.policy_sets_bandwidth,
                    assumed_bandwidth: inputs.bandwidth,
                })
            });
        live_migrate(&mut plan, &f, predicted, search, rows);
    }
    if matches!(
        plan.action,
        Action::LiveMigrate | Action::AlreadyMigrating | Action::NoTarget
    ) {
        compatibility(&mut plan, &f, at, search, rows);
    }
    plan.stuck = stuck;
    rows.plans.push(plan);
    rows.vmis.push(vmi);
}

/// A VMI caught in a loop that holds the drain: an evacuation loop (KubeVirt creates a new
/// evacuation migration after each failure for as long as `status.evacuationNodeName` stays
/// set: `pkg/virt-controller/watch/drain/evacuation/evacuation.go`, harvester#10698), or a
/// decentralized migration waiting for its peer (no timeout for WaitingForSync/Synchronizing
/// in `processMigrationPhase`, `pkg/virt-controller/watch/migration/migration.go`; the
/// evacuation controller skips a VMI with an unfinished migration; kubevirt#17317, #18259).
/// Neither ends by itself: the row is held, with no time, and the blocker names the loop,
/// the object and field that keep it going and the way out.
fn in_a_loop(plan: &mut VmiPlan, l: &crate::triage::Loop, rows: &mut Rows) {
    let hold = Hold {
        kind: "vmi",
        object: None,
        reason: l.kind.as_str().to_string(),
        message: l.message(),
        blocking: true,
    };
    let explanation = format!(
        "{} The drain cannot finish while it lasts (blocking: {} {} = {}).",
        l.summary, l.blocking.object, l.blocking.field, l.blocking.value
    );
    let fix = l.steps().join(" · ");
    rows.blockers
        .push(plan.hold(Action::BlocksDrain, hold, explanation, fix));
}

/// A migration in flight stuck in the backend-storage PVC hand-off (kubevirt#17203, #14720):
/// the guest already runs on the target, so it does not hold the drain; said, with no time
/// claimed for it (the hand-off has no timeout).
fn handoff_stuck(plan: &mut VmiPlan, l: &crate::triage::Loop, rows: &mut Rows) {
    plan.estimate_seconds = None;
    plan.end_seconds = None;
    plan.explanation = format!(
        "{} The guest already runs on the target: it does not hold the drain.",
        l.summary
    );
    plan.fix = Some(l.steps().join(" · "));
    rows.blockers.push(
        Hold {
            kind: "vmi",
            object: None,
            reason: l.kind.as_str().to_string(),
            message: l.message(),
            blocking: false,
        }
        .blocker(plan),
    );
}

/// A migration already in flight: the drain waits for it. Before the hand-off its target
/// pod may still be refused by quota or have nowhere to go.
fn already_migrating(
    plan: &mut VmiPlan,
    flight: &InFlight,
    f: &VmiFacts,
    search: &mut TargetSearch,
    rows: &mut Rows,
) {
    plan.action = Action::AlreadyMigrating;
    plan.target = flight.target.clone();
    plan.start_seconds = Some(0);
    plan.estimate_seconds = flight.estimate;
    plan.end_seconds = flight.estimate;
    plan.explanation = format!("{}{}", flight.explanation, feasibility::DRAIN_WAITS);
    if flight.running {
        rows.in_flight
            .push((f.node.clone(), flight.remaining.unwrap_or(SETUP_SECONDS)));
    }
    if let Some((condition, message)) = &flight.held_by {
        held(plan, flight, f, condition, message, rows);
        return;
    }
    if plan.target.is_some() {
        return;
    }
    if let Some((quota, message)) = f.quota.clone() {
        let explanation = format!(
            "{} is held by ResourceQuota {quota}: {message}; the eviction is refused until it has room",
            flight.label
        );
        let fix = quota::quota_fix(&plan.namespace, &quota, f.pod_memory);
        let hold = quota::quota_hold(quota, message);
        rows.blockers
            .push(plan.hold(Action::BlocksDrain, hold, explanation, fix));
    } else if let Err(no_fit) = search.find(&f.target_pod(), &f.node) {
        let explanation = format!(
            "{} cannot place its target pod: {}; it fails when the target pod times out and, once the node is drained, evacuation retries fail the same way",
            flight.label,
            no_fit.explained()
        );
        let hold = placement::no_target(no_fit.explained());
        rows.blockers
            .push(plan.hold(Action::NoTarget, hold, explanation, no_fit.fix()));
        // Its VMIM keeps a slot until the unschedulable target pod times out (only one that
        // counts as running holds a slot: its own, the last pushed above).
        if flight.running
            && let Some(last) = rows.in_flight.last_mut()
        {
            last.1 = UNSCHEDULABLE_TIMEOUT_SECONDS.saturating_sub(flight.elapsed);
        }
    }
}

/// A migration in flight that a VMIM condition keeps Pending (`HOLDING_CONDITIONS` in
/// waves.rs; KubeVirt sets them in `pkg/virt-controller/watch/migration/migration.go`): it
/// takes no slot and moves nothing until the condition clears. A quota that refuses the
/// target pod, utility volumes and a blocked decentralized migration need someone to act:
/// the drain cannot finish, a blocker. A backup ends by itself: the drain waits, with no
/// time claimed.
fn held(
    plan: &mut VmiPlan,
    flight: &InFlight,
    f: &VmiFacts,
    condition: &str,
    message: &str,
    rows: &mut Rows,
) {
    if condition == "migrationRejectedByResourceQuota" {
        // The quota named, with its numbers when vmctl's count finds it short too.
        let (hold, fix) = match f.quota.clone() {
            Some((quota, words)) => (
                quota::quota_hold(quota.clone(), words),
                quota::quota_fix(&plan.namespace, &quota, f.pod_memory),
            ),
            // Which quota, KubeVirt's condition does not say: the VMI holds the drain.
            None => (
                Hold {
                    kind: "vmi",
                    object: None,
                    reason: condition.to_string(),
                    message: if message.is_empty() {
                        flight.explanation.clone()
                    } else {
                        message.to_string()
                    },
                    blocking: true,
                },
                format!(
                    "make room in namespace {}'s ResourceQuota for the migration target pod (vmctl explain vm/{} -n {} names the resource and how much); KubeVirt retries by itself",
                    plan.namespace, plan.name, plan.namespace
                ),
            ),
        };
        let explanation = format!("{}; the drain blocks here", flight.explanation);
        rows.blockers
            .push(plan.hold(Action::BlocksDrain, hold, explanation, fix));
        return;
    }
    let (blocking, fix) = match condition {
        "migrationBlockedByUtilityVolumes" => (
            true,
            format!(
                "remove the utility volumes from VMI {}/{} (they cannot migrate); KubeVirt retries by itself",
                plan.namespace, plan.name
            ),
        ),
        "migrationBlockedByBackup" => (
            false,
            "wait for the backup to end, then the migration starts".to_string(),
        ),
        _ => (
            true,
            format!(
                "see vmctl explain vm/{} -n {}: the decentralized migration waits for its peer",
                plan.name, plan.namespace
            ),
        ),
    };
    let hold = Hold {
        kind: "vmi",
        object: None,
        reason: condition.to_string(),
        message: if message.is_empty() {
            flight.explanation.clone()
        } else {
            message.to_string()
        },
        blocking,
    };
    if blocking {
        let explanation = format!("{}; the drain blocks here", flight.explanation);
        rows.blockers
            .push(plan.hold(Action::BlocksDrain, hold, explanation, fix));
    } else {
        plan.explanation = format!("{}{}", flight.explanation, feasibility::DRAIN_WAITS);
        plan.estimate_seconds = None;
        plan.end_seconds = None;
        plan.fix = Some(fix);
        rows.blockers.push(hold.blocker(plan));
    }
}

/// What a drain's eviction meets when the quota refuses the target pod (the end of the
/// plan's words; `vmctl migrate`'s preflight, which evicts nothing, says its own).
pub const QUOTA_REFUSES_EVICTION: &str =
    "; the migration stays Pending and the eviction is refused";

/// What a drain's eviction meets when no node takes the target pod (as
/// [`QUOTA_REFUSES_EVICTION`]).
pub const NO_TARGET_REFUSES_EVICTION: &str =
    "; the target pod stays Pending and the eviction is refused";

/// A live migration the drain starts: the namespace's quota must admit the second launcher
/// pod, then a node must take it. With a prediction, its estimate is the predicted time (a
/// migration that does not complete has none, and holds its slot until KubeVirt aborts it).
fn live_migrate(
    plan: &mut VmiPlan,
    f: &VmiFacts,
    predicted: Option<(
        crate::migration::predict::Prediction,
        convergence::Convergence,
    )>,
    search: &mut TargetSearch,
    rows: &mut Rows,
) {
    if let Some((quota, message)) = f.quota.clone() {
        let explanation = format!("ResourceQuota {quota}: {message}{QUOTA_REFUSES_EVICTION}");
        let fix = quota::quota_fix(&plan.namespace, &quota, f.pod_memory);
        let hold = quota::quota_hold(quota, message);
        rows.blockers
            .push(plan.hold(Action::BlocksDrain, hold, explanation, fix));
        return;
    }
    // The estimate shown and the time the migration holds its slot: the prediction's when
    // there is one (none shown for a migration that does not complete).
    let (estimate, slot, over_budget) = match &predicted {
        Some((_, c)) if c.completes == Some(false) => (
            None,
            c.slot_seconds(f.transfer),
            Some("predicted not to complete: KubeVirt aborts it once its completion budget is spent, and the evacuation retries it (with a backoff) for as long as the node drains (see the convergence findings)".to_string()),
        ),
        Some((_, c)) if c.completes == Some(true) => {
            (c.slot_seconds(f.transfer), c.slot_seconds(f.transfer), None)
        }
        _ => (
            f.transfer,
            f.transfer,
            feasibility::over_budget(f.transfer, f.budget, f.config.allow_post_copy),
        ),
    };
    match placement::place(search, &f.target_pod(), &f.node, estimate, over_budget) {
        Ok(placed) => {
            plan.target = Some(placed.target);
            plan.explanation = placed.explanation;
            plan.estimate_seconds = estimate;
            if let Some((p, c)) = predicted {
                plan.prediction = Some(p);
                plan.convergence = Some(c);
            }
            rows.candidates.push(Candidate {
                index: rows.plans.len(),
                estimate: slot.unwrap_or(SETUP_SECONDS),
                source: f.node.clone(),
            });
        }
        Err(no_fit) => {
            let message = no_fit.explained();
            let explanation = format!("{message}{NO_TARGET_REFUSES_EVICTION}");
            let hold = placement::no_target(message);
            rows.blockers
                .push(plan.hold(Action::NoTarget, hold, explanation, no_fit.fix()));
        }
    }
}

/// Step **compatibility** (issue 25 §3): the CPU and machine requirements of the VMI's target
/// pod against the predicted target, or, without one, against every node that could take
/// it; and the risks the labels and launcher versions show. A VMI that no node is
/// CPU-compatible with is no-target already (the requirements are node selectors of its
/// target pod in the search): its hold then says so in CPU terms, with the labels each node
/// lacks. Risks are findings only: the action and the verdict do not change.
fn compatibility(
    plan: &mut VmiPlan,
    f: &VmiFacts,
    at: &Lookups,
    search: &TargetSearch,
    rows: &mut Rows,
) {
    let source = search.node_cpu(&f.node);
    let target = plan
        .target
        .as_deref()
        .and_then(|t| search.node_cpu(t).map(|c| (t, c)));
    let mut cpu = CpuCompat {
        mode: f.cpu_mode,
        needs: f.needs.clone(),
        status: "unchecked",
        lacking: Vec::new(),
        risks: compat::risks(f.vmi, &f.needs, source, target, at.launcher.as_ref()),
    };
    if let Some((_, t)) = target {
        if f.needs.lacking(f.cpu_mode, t).is_empty() {
            cpu.status = "compatible";
        }
    } else if plan.action == Action::NoTarget {
        let (any, lacks) = compat::lacking(f.cpu_mode, &f.needs, search.cpu_candidates(&f.node));
        if any {
            cpu.status = "compatible";
        } else if !lacks.is_empty() {
            cpu.status = "no-compatible-node";
            let words = compat::no_node_words(&lacks);
            // The reason keeps its id (NoFeasibleTarget); the words say CPU.
            if let Some(reason) = plan.reasons.last_mut() {
                reason.message = format!("{}; {words}", reason.message);
            }
            plan.explanation = format!("{words}; {}", plan.explanation);
            let id = plan.id();
            if let Some(b) = rows
                .blockers
                .iter_mut()
                .rev()
                .find(|b| b.kind == "vmi" && b.vmis == [id.clone()])
            {
                b.message = format!("{}; {words}", b.message);
            }
            rows.findings.push(CompatFinding {
                vmi: id,
                node: plan.node.clone(),
                target: None,
                severity: "blocks",
                kind: "no-compatible-node",
                message: words,
            });
            cpu.lacking = lacks;
        }
    }
    for r in &cpu.risks {
        rows.findings.push(CompatFinding {
            vmi: plan.id(),
            node: plan.node.clone(),
            target: plan.target.clone(),
            severity: "risk",
            kind: r.kind,
            message: r.message.clone(),
        });
    }
    plan.cpu = Some(cpu);
}
