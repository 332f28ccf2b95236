//! The clap definitions: the single source for `--help`, completions and man pages.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::error::exit;
use crate::render::OutputFormat;

#[derive(Debug, Parser)]
#[command(
    name = "vmctl",
    version,
    about = "Plan node drains and triage live migrations on KubeVirt clusters",
    long_about = "vmctl answers an operator's questions about VMs on KubeVirt: what is going on, \
what a node drain will do, why a migration failed. It reads a live cluster (kubeconfig or \
in-cluster) or a snapshot of one (--from PATH), and never changes anything unless a command \
says it does.",
    after_long_help = exit::TABLE,
    after_help = exit::TABLE,
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Read objects from a snapshot file or directory instead of a cluster
    /// (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files,
    /// must-gather style directories).
    #[arg(long, global = true, value_name = "PATH")]
    pub from: Option<PathBuf>,

    /// The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster,
    /// in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi).
    #[arg(long, global = true, value_name = "SIZE", default_value = "2Gi")]
    pub max_input_size: String,

    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster).
    #[arg(long, global = true, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// Namespace scope (default: the context's namespace; all namespaces with --from).
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE")]
    pub namespace: Option<String>,

    /// Look in every namespace.
    #[arg(short = 'A', long, global = true, conflicts_with = "namespace")]
    pub all_namespaces: bool,

    /// Output format.
    #[arg(short = 'o', long, global = true, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,

    /// Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set).
    #[arg(long, global = true)]
    pub no_color: bool,

    /// Seconds to wait for each API request.
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub request_timeout: u64,

    /// The migration journal: an SQLite file, or postgres://USER@HOST/DB (default:
    /// $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or
    /// ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to
    /// it (`off`: they do not); `history` and `explain` read it.
    #[arg(long, global = true, value_name = "PATH|URL|off")]
    pub journal: Option<String>,

    /// Evaluate as if the time were this RFC 3339 instant (reproducible output).
    #[arg(
        long,
        global = true,
        value_name = "TIME",
        env = "VMCTL_NOW",
        hide = true
    )]
    pub now: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// What is going on with my VMs: node, phase, eviction strategy, migratability,
    /// evacuation and migrations, then the migrations in flight.
    #[command(after_long_help = STATUS_OUTPUT)]
    Status(StatusArgs),
    /// Predict, before anything is cordoned, what draining a node will do to every VM.
    #[command(after_long_help = PLAN_DRAIN_OUTPUT)]
    PlanDrain(PlanDrainArgs),
    /// Predict a rolling maintenance (every node drained in turn): batches, time, how often
    /// each VM migrates, shutdowns, the first blocker; the default order next to a better one.
    #[command(after_long_help = PLAN_MAINTENANCE_OUTPUT)]
    PlanMaintenance(PlanMaintenanceArgs),
    /// Drain node(s): the plan first, then cordon, evict like kubectl drain, follow every
    /// VM's evacuation live, stop with a diagnosis where a VM cannot leave.
    #[command(after_long_help = DRAIN_OUTPUT)]
    Drain(DrainArgs),
    /// Diagnose a migration: which plane failed, why, the evidence, and what to do.
    #[command(after_long_help = EXPLAIN_OUTPUT)]
    Explain(ExplainArgs),
    /// Start a live migration and follow it: through KubeVirt (a VM or VMI), or directly
    /// through libvirt (--connect SRC --to DST).
    #[command(after_long_help = MIGRATE_OUTPUT)]
    Migrate(MigrateArgs),
    /// Abort a migration in flight (refused in post-copy: the guest's state is split).
    #[command(after_long_help = ABORT_OUTPUT)]
    Abort(AbortArgs),
    /// Capture every object vmctl reads into one file that --from reads back.
    #[command(after_long_help = SNAPSHOT_OUTPUT)]
    Snapshot(SnapshotArgs),
    /// A live full-screen console: migrations in flight (post-copy marked), drains and
    /// evacuations, recent failures; keys to explain, abort (refused in post-copy), filter.
    #[command(after_long_help = TOP_KEYS)]
    Top(TopArgs),
    /// Watch the cluster and write every migration's end to the journal (--journal), with its
    /// diagnosis, timeline and durations; runs until stopped (deploy/record.yaml in-cluster).
    #[command(after_long_help = RECORD_OUTPUT)]
    Record(RecordArgs),
    /// Migrations from the journal: what failed, why, how long, per node and per cause.
    #[command(after_long_help = HISTORY_OUTPUT)]
    History(HistoryArgs),
    /// Print a shell completion script.
    #[command(after_long_help = COMPLETIONS_OUTPUT)]
    Completions(CompletionsArgs),
    /// Write the man pages.
    #[command(after_long_help = MAN_OUTPUT)]
    Man(ManArgs),
}

impl Command {
    /// The commands `-o html` is for (the others refuse it before doing anything).
    pub fn writes_html(&self) -> bool {
        matches!(self, Command::Explain(_) | Command::PlanDrain(_))
    }

    /// `-o name`: the commands that list objects (status, not `--watch`).
    pub fn writes_names(&self) -> bool {
        matches!(self, Command::Status(a) if !a.watch)
    }
}

const STATUS_OUTPUT: &str = "\
JSON/YAML OUTPUT (-o json|yaml), apiVersion vmctl/v1alpha1, kind StatusReport:
    asOf, source              the clock the ages are measured from, and where objects came from
    kubevirt                  {found, version, clusterEvictionStrategy}
    nodes[]                   nodes cordoned (spec.unschedulable) or evacuated, first in the table:
                              {name, cordoned, state (draining|drained|cordoned|evacuation-source),
                              vmisLeft[], evictionsAccepted, migrationsInFlight, launcherPodsLeft,
                              moved[]}, counted from the VMIs, VMIMs and launcher pods in scope
    vmis[]                    namespace, name, vm (null for a bare VMI), node, phase,
                              evictionStrategy, evictionStrategySource (vmi-spec|cluster-config|default),
                              liveMigratable (true|false|null), reasons[] {condition, reason, message,
                              summary, fix}, evacuation {nodeName, evictionRequested} or null,
                              evacuationChain? {node, attempt, failedAttempts, migration, result
                              (in-flight|succeeded|failed), lastFailure?}: its evacuation VMIMs
                              from one node as one chain,
                              pods[] {uid, name, node, phase, role (source|target|active|finished|other),
                              live}, migration (in flight) {name, uid, phase, sourceNode, targetNode,
                              sourcePod, targetPod, mode, startTimestamp, elapsedSeconds, budgetSeconds,
                              pointOfNoReturn, priority?, decentralized?} or null, lastMigration
                              {name, uid, result (succeeded|failed|aborted), endTimestamp,
                              agoSeconds, sourceNode, targetNode, failureReason} or null,
                              migrationConditions[]? {type, status, reason, message}
                              (MigrationRequired, DecentralizedLiveMigrationFailure,
                              StorageLiveMigratable=False), loop? {kind (evacuation-loop|
                              decentralized-sync-stuck|backend-storage-handoff-stuck), migration,
                              since, seconds, attempts, blocking {object, field, value},
                              counterpart?, lastFailure? {migration, reason?, cause?, summary?},
                              nextAttempt?, summary, stopFirst? (what must stop first: the drain
                              or maintenance), wayOut[]}: a loop that never ends by itself
                              (thresholds: --loop-failures, --sync-timeout, --handoff-timeout)
    migrations[]              VMIMs not final: namespace, name, vmi, phase, ageSeconds, sourceNode,
                              targetNode, sourcePod, targetPod, livePod, mode, evacuationNode,
                              conditions[], waitingFor, priority?, decentralized?
    decentralized             cross-cluster migration (KubeVirt v1.6+): {role (sender|receiver),
                              migrationId, connectUrl, synchronizationAddresses[], liveSide
                              (source|target), liveHere}; its sourceNode/targetNode come from
                              migrationState.sourceState/targetState
    warnings[]                {vmi?, kind (evacuation|post-copy|failed|blocks-drain|not-migratable|
                              migration-required|decentralized-failure|storage-not-migratable|
                              evacuation-loop|decentralized-sync-stuck|
                              backend-storage-handoff-stuck|leftover-policy|cordoned-node|
                              evacuation-retry|input), message}: leftover-policy is a temporary
                              MigrationPolicy vmctl made whose migration is no longer in flight
                              (with the kubectl delete that removes it); input is what was said
                              on stderr about the input (duplicates, unknown kinds and values,
                              time fields that are not times, lists that could not be read)
    skipped[]                 objects that do not decode, named with the field
    (fields marked ? are omitted when empty)

EXIT CODES: 0 success; see vmctl(1).";

const MIGRATE_OUTPUT: &str = "\
KUBEVIRT: a VM goes through the migrate subresource (as virtctl migrate), a bare VMI gets a
VirtualMachineInstanceMigration. The pre-flight (plan-drain's checks) refuses before anything is
created: not running, not migratable, a migration in flight, no feasible target, quota.
--allow-postcopy/--allow-auto-converge create a temporary MigrationPolicy selecting every label of
the VMI and of its namespace (no policy can score higher; ties go to the smallest name, which vmctl
picks), named in the migration's annotation vmctl.io/temporary-migration-policy and deleted once
KubeVirt has applied it (hand-off) or when vmctl stops. Progress comes from virt-handler's metrics
through the API server's pod proxy (or --prometheus). Before anything is created, the guest's dirty
rate from the same place (kubevirt_vmi_dirty_rate_bytes_per_second, KubeVirt v1.6+; a hint) predicts
whether the migration converges under the configuration it will run with: the first line on stderr
('prediction: will not converge under ...; consider allowPostCopy: true ...'), in the dry run's
output, and as prediction/convergence/predictionLines in its JSON. Advice only: nothing is refused
and nothing else is read. Ctrl-C detaches: the migration goes on,
unless it had not started, in which case what vmctl created is removed. The progress lines measure
streaming time against the completion budget (KubeVirt starts it with streaming) and count a
remainder that stops falling against progressTimeout ('no progress for 40s of the 150 s progress
timeout'). A migration that does not succeed ends with the diagnosis vmctl explain gives for it,
read the same way (also when someone else aborted it and the object is gone); the verdict is the
diagnosis's. With -o json|yaml: kind MigrationPlan (dry run), MigrationRefused (pre-flight) or
MigrationResult; each carries warnings[] (what was said on stderr about the input) when there is any.

EXIT CODES: 0 succeeded (or started, with --no-wait; dry run printed); 1 failed, aborted, or refused
by the pre-flight; 3 unknown VM; 5 cluster error (403 names the RBAC rule, see deploy/rbac.yaml);
6 --timeout reached (the migration goes on); 130 interrupted.";

const PLAN_MAINTENANCE_OUTPUT: &str = "\
SIMULATION: batches of --max-unavailable nodes are drained with plan-drain's own policy, each batch
from the cluster state the one before left: migrated VMs run on their predicted target (its capacity
taken), shut-down VMs whose VM has runStrategy Always come back on the node they left once it is
done, drained nodes are uncordoned after --upgrade-time. A VM that blocks keeps its node cordoned for
the rest of the rollout; the other batches are still planned (their times read \"after the
blocker\"). --targets done sends each migration to a node already done when one has room (an
addedNodeSelector). The default strategy (given order, any targets) is shown next to the alternative
(auto order, done targets), or next to the one chosen. CPU and machine compatibility is
plan-drain's, per batch (a migrated VM then runs the current virt-launcher and keeps its host
model pinned, as KubeVirt's target pod does).

JSON/YAML OUTPUT (-o json|yaml), kind MaintenancePlan: verdict (plan-drain's verdicts), order,
targets, maxUnavailable, nodes[], unknownNodes[], batches[] {index, nodes[], verdict, startSeconds,
drainSeconds, durationSeconds, endSeconds, waves, migrations, shutdowns, blockers[], vmis[] (plan-
drain's rows, with target and cpu), stuckNodes[], placedOutsideDone[], compatibility[] (plan-
drain's findings for the batch: blocks | risk)}, totals {batches, migrations,
vmsMigrated, migrationsPerVm {mean, max}, mostMigrated[], shutdowns, durationSeconds,
blockedBatches}, firstBlocker {batch, nodes[], atSeconds, blocker} or null, capacityRunsOut or null,
compare {default, alternative} (each: order, targets, verdict, migrations, migrationsPerVm,
shutdowns, durationSeconds, firstBlockerAtSeconds), assumptions[], warnings[].

EXIT CODES: 0 the rollout completes (possibly with shutdowns); 1 it blocks; 3 unknown node.";

const DRAIN_OUTPUT: &str = "\
ORDER: the plan (plan-drain's, same code) is checked before anything changes: a will-block verdict
stops here unless --force-partial; VMs the drain shuts down need --allow-shutdowns (or a yes on a
terminal); kubectl's pod rules (DaemonSet, emptyDir, mirror and unmanaged pods) are applied with
kubectl's messages. Then every node is cordoned and every pod evicted through the Eviction API
(never deleted). A 429 from KubeVirt's webhook on a launcher pod means KubeVirt evacuates the VM: vmctl
follows the migrations KubeVirt creates and never creates its own; a 429 from a PodDisruptionBudget
is retried every 5 s (as kubectl) and shown once with the budget's numbers. Not live-migratable, two
PDBs over one pod, a 403, or --loop-failures (3) failed evacuations of one VM make a blocker at
once, with the diagnosis vmctl explain gives for a failed migration; so do a VM already in an
evacuation loop when the drain starts (at its next failure: reason evacuation-loop) and a
decentralized migration of the VM stuck past --sync-timeout (decentralized-sync-stuck, at once),
each with the way out. Ctrl-C stops evicting, leaves the nodes
cordoned and the migrations running, and prints how to resume (run the same command again: it picks
up where it stopped) or give up (kubectl uncordon NODE; vmctl abort vm/NAME --evacuation).

OUTPUT: a line per change on stdout (kubectl's words where kubectl has them: node/NAME cordoned,
evicting pod NS/NAME, pod/NAME evicted, node/NAME drained). With -o json: one JSON object per line
(-o yaml: one YAML document each, after ---), kind DrainEvent, {apiVersion, kind, time, type, ...}: type plan (verdict, vmis[], shutdowns[],
blockers[], pods, warnings[]), cordoned {node, alreadyCordoned}, evicting/evicted/pod-gone {namespace,
pod}, evacuation-started {namespace, vmi, node}, waiting {namespace, pod, vmi, reason (pdb|target-pod|
hotplug|throttled|server-error), pdb, message, retrySeconds}, migration {namespace, vmi, migration,
phase, sourceNode, targetNode, sourcePod, targetPod, mode, pointOfNoReturn, evacuation},
migration-failed {namespace, vmi, migration, reason, failures, retry, diagnosis {plane, cause,
summary, nextSteps[]}}, moved {namespace, vmi, from, to, migration}, stopped {namespace, vmi, backOn},
blocked {namespace, pod, vmi, reason (… | migration-keeps-failing | evacuation-loop |
decentralized-sync-stuck), message}, summary (last: result drained|blocked|timeout|
interrupted|refused|dry-run, moved[], stopped[], migrating[], blocked[], podsGone, podsLeft, resume[]).

EXIT CODES: 0 drained (a dry run: it would drain; or handed off with --no-wait); 1 blocked (a dry
run: it would block), or refused before anything changed; 3 unknown node; 5 cluster error (403 names the RBAC rule: ClusterRole vmctl-drainer
in deploy/rbac.yaml); 6 --timeout reached; 130 interrupted.";

const ABORT_OUTPUT: &str = "\
KUBEVIRT: deletes the unfinished VirtualMachineInstanceMigration (KubeVirt's abort) and waits for
the abort status (Aborting, then Succeeded or Failed; --timeout, default 2m). Refused in post-copy.
--evacuation clears evacuationNodeName through evacuate/cancel (KubeVirt v1.7+) and explains the
manual way on older versions. Aborting the migration of a VMI marked for evacuation (or one the
workload updater created) warns first: KubeVirt creates a new one after a backoff (20 s, doubling)
for as long as the mark stays; --evacuation is what stops the evacuation itself (the way out of an
evacuation-loop: stop the drain first, or its next eviction marks the VM again; KubeVirt refuses
evacuate/cancel while the node carries the node-drain taint kubevirt.io/drain; then abort the
attempt in flight, and kubectl uncordon NODE if the drain is called off: uncordoning alone does not
stop the retries). With -o json|yaml:
kind AbortPlan (dry run) or AbortResult, with warnings[] when there is any.

EXIT CODES: 0 aborted or cancelled (dry run printed); 1 nothing to abort, refused in post-copy, the
migration completed first, or the abort failed; 3 unknown migration; 5 cluster error; 6 timed out
waiting; 130 interrupted.";

const PLAN_DRAIN_OUTPUT: &str = "\
Read-only: nothing is cordoned, evicted or created.

JSON/YAML OUTPUT (-o json|yaml), apiVersion vmctl/v1alpha1, kind DrainPlan:
    nodes[]                   the nodes drained together
    verdict                   will-complete | will-complete-with-shutdowns | will-block
    estimatedDurationSeconds  predicted end of the last migration or shutdown
    blockers[]                {kind (vmi|pdb|quota|external), namespace, name, reason, message,
                              vmis[], blocking}; blocking ones first
    vmis[]                    namespace, name, vm, node, evictionStrategy, evictionStrategySource,
                              liveMigratable, reasons[] {reason, message}, action (live-migrate |
                              shutdown | shutdown-not-migratable | blocks-drain | external |
                              already-migrating | no-target), explanation, fix, target (node or null),
                              wave, startSeconds, endSeconds, estimateSeconds, budgetSeconds,
                              memoryBytes, podMemoryRequestBytes, migrationPolicy, allowPostCopy,
                              allowAutoConverge, bandwidthBytesPerSecond, evacuationNode, runStrategy,
                              with --metrics/--prometheus for a live migration: prediction (the
                              predictor's object: converges, completes, completesBy, dirtyRateBps,
                              dirtyRateSource, bandwidthBps, bandwidthSource (cap | unknown: assumed),
                              budgetSeconds, passes, predictedSeconds, downtimeMs, summary,
                              caveats[], alternatives[]) and convergence {under, bandwidthFrom
                              (policy | cluster | flag | default), converges, completes, completesBy,
                              etaSeconds, abortedAfterSeconds, finding, alternatives[] (MigrationPolicy
                              words)}; cpu (live-migrate, already-migrating, no-target): {mode
                              (host-model | host-passthrough | named), model, hostFeatures[],
                              hostModelFrom (source-node | launcher-pod), required[], forbidden[],
                              machineType, vendor, notObsolete, status (compatible |
                              no-compatible-node | unchecked), lacking[] {node, missing[]},
                              risks[] {kind, message}}
    incoming[]                migrations landing on a drained node {namespace, name, sourceNode,
                              targetNode, targetPod, mode, pointOfNoReturn}
    skipped[]                 finished VMIs the drain does not touch
    limits                    {parallelMigrationsPerCluster, parallelOutboundMigrationsPerNode,
                              inFlightCluster, inFlightPerNode}
    queue                     KubeVirt's migration queue: {mode (priority | fifo), why, ahead[],
                              behind[]}, each {namespace, name, vmi, priority, onDrainedNode, heldBy}
    pdbs[]                    {namespace, name, selects (nothing | everything | labels | invalid),
                              invalid, budget {disruptionsAllowed, currentHealthy, desiredHealthy,
                              expectedPods, source (status | computed), syncFailed, stale, ...},
                              vmis[], evictions[] {vmi, pod, httpStatus, answer, text}}
    waves, defaultsAssumed, kubevirtVersion, assumptions[]
    convergence               with --metrics/--prometheus: {source, metric, caveat, predicted,
                              withDirtyRate, willNotComplete[], bySwitching[], notes[] (what could not
                              be read, one line per cause)}
    compatibility[]           {vmi, node, target, severity (blocks | risk), kind
                              (no-compatible-node | unlisted-features | pinned-features-gone |
                              launcher-skew), message}; omitted when none
    warnings[]                what was said on stderr about the input (omitted when none)

COMPATIBILITY, checked before anything moves: what KubeVirt puts in the target pod's node
selector, read from the node labeller's labels: the host model (cpu-model-migration.node.kubevirt.io/,
with one cpu-feature.node.kubevirt.io/ per host-model-required-features label of the source, or the
ones the launcher pod pinned when the VM first migrated), a named model (cpu-model.node.kubevirt.io/),
spec.domain.cpu.features (require; forbid must be absent), the machine type
(machine-type.node.kubevirt.io/, when nodes publish them) and the source's CPU vendor. A node without
them is never the predicted target; a VM no node can take is no-target (a blocker, exit 1) with
the labels each node lacks. Risks do not change the verdict: features the source offers that the
target lacks and no label checks (\"guest CPU doesn't match specification: missing features\"),
pinned features the source no longer lists, and a virt-launcher image other than the one a new
target pod gets (QEMU/libvirt skew).


PODDISRUPTIONBUDGETS are read as the policy/v1 eviction API of the cluster's Kubernetes reads
them: selector {} selects every pod of its namespace from Kubernetes 1.29.0, 1.28.3 and 1.27.7
and nothing in earlier releases (kubernetes#119732; the version comes from /version live, from
serverVersion in a vmctl snapshot, else the newest kubelet gives a lower bound and the plan says
which versions its answer holds for); a null selector selects none, an invalid selector makes
the PDB ignored (reported); two PDBs over one pod answer 500 and block; maxUnavailable (or a
percentage minAvailable) over virt-launcher pods allows 0 (a VMI has no /scale); a pod that is
not Ready passes under unhealthyPodEvictionPolicy AlwaysAllow. Budgets come from the status, or
are computed as the disruption controller does when there is none. A status behind its spec
(observedGeneration < generation) gets 429 until the controller catches up; when the controller
cannot sync the spec (SyncFailed) its failSafe never advances observedGeneration and the PDB
refuses every eviction for good: a blocker (StatusNeverSyncs). Only the VMs the drain shuts
down reach the PDB check: KubeVirt's eviction webhook answers first for the others.

ESTIMATES: transfer = 15 s setup + guest memory / bandwidth (bandwidthPerMigration, else
--bandwidth, default 256Mi per second). Budget = completionTimeoutPerGiB x ceil(decimal GB of
guest memory), doubled when workload disruption (post-copy or pause) is allowed. Waves: as slots
free up under parallelOutboundMigrationsPerNode and parallelMigrationsPerCluster minus the
migrations already in flight, in KubeVirt's queue order: with the priority queue (v1.9+, or
VMIMs carrying spec.priority) pending system-critical migrations first, then the drain's
evacuations (system-critical; system-maintenance for a VMI the descheduler marked), longest
first, then user-triggered and system-maintenance ones; without it, first come first served.

DIRTY RATE (--metrics: virt-handler's /metrics of each drained node through the API server's pod
proxy, one request per node, get pods/proxy in KubeVirt's namespace; --prometheus URL: one query):
kubevirt_vmi_dirty_rate_bytes_per_second (KubeVirt v1.6+) predicts each live migration pass by pass
under its effective configuration (bandwidthPerMigration as a cap, else the assumed bandwidth; the
completion budget; maxDowntimeMs; post-copy or a pause once the budget is spent, as KubeVirt's
monitor does; auto-converge). A VM that does not complete is flagged (CONVERGES column, findings
with the MigrationPolicy fields that would change it) and holds its slot until KubeVirt aborts it;
the others' estimates become the predicted time. The figure is a hint (measured for one second,
reported inaccurate in some releases): the verdict and the exit code do not change. What cannot
be read (403, no virt-handler, no metric) is said once per cause; the plan goes on. Without either
flag nothing is read.

EXIT CODES: 0 the drain will complete (possibly with shutdowns); 1 it will block; 3 unknown node.";

const EXPLAIN_OUTPUT: &str = "\
Read-only. Status comes first (events expire after an hour; KubeVirt keeps five finished
migrations per VMI); events add detail when they are still there.

JSON/YAML OUTPUT (-o json|yaml), apiVersion vmctl/v1alpha1, kind Diagnosis:
    outcome                   succeeded | in-progress | blocked | failed | aborted | no-migration
    plane                     control-plane | data-plane | none | unknown
    cause                     the rule id: target-pod-unschedulable, target-pod-not-ready,
                              target-pod-create-failed, resource-quota-exceeded,
                              no-node-for-cpu-model, blocked-by-utility-volumes,
                              blocked-by-backup, not-live-migratable, queued-parallel-limit,
                              another-migration-in-progress, target-pod-lost,
                              vmi-stopped-during-migration, migration-backoff, not-converging,
                              no-progress, postcopy-failed, postcopy-unsupported,
                              connection-failure, target-domain-not-seen, target-on-source-node,
                              backend-storage-handoff-stuck, destination-volume-too-small,
                              cpu-feature-mismatch, device-state-incompatible,
                              unsafe-migration, storage-io-error, abort-failed,
                              target-preparation-failed, libvirt-error, aborted-by-request,
                              pdb-blocks-eviction, decentralized-migration-blocked, succeeded,
                              in-progress, no-migration, unknown; loops that never end by
                              themselves: evacuation-loop (--loop-failures consecutive failed
                              evacuation migrations of a VMI still marked),
                              decentralized-sync-stuck (WaitingForSync/Synchronizing past
                              --sync-timeout), backend-storage-handoff-stuck (past
                              --handoff-timeout)
    summary                   one sentence
    inferred                  true when the cause is deduced (v1.9+ aborts without abortRequested
                              or an earlier VMIM deletion: elapsed time against the completion
                              budget; the summary says when a cancel cannot be ruled out)
    rule                      {id, plane, reads[], advice}
    migration, vmi            the objects diagnosed (vmi.evacuationNodeName when marked)
    migration (v1.6+ fields)  priority?, networkType?, targetMemoryOverhead?, decentralized? {role,
                              migrationId, connectUrl, synchronizationAddresses[], source?, target?
                              {node, pod, syncAddress}, liveSide, liveHere}, stallDetector? {enabledBy,
                              settings, settingsFrom, action (post-copy|stop-and-copy|abort)?,
                              actionBecause?}; fields marked ? are omitted when empty
    pods[]                    both launcher pods, their role and which one is live
    attention[]               evacuation, post-copy point of no return, not migratable, ...
    evidence[]                {object, field, value, note}: each fact and the field it came from
    timeline[]                {time, object, what, detail, count, lastTime, source, offsetSeconds,
                              sincePreviousSeconds}, in time order
    nextSteps[]               concrete commands or settings
    confidence                high (read from status, nothing unexplained) | medium
                              (inferred, or events alone) | low (unknown cause, something
                              unexplained or assumed)
    unexplained[]             {object, source (event | status.conditions[type=X]), reason,
                              message, count, time}: Warning events and abnormal conditions on
                              the VMIM, the VMI and both launcher pods in the migration's window
                              that the evidence does not account for. No in-progress verdict
                              stands next to an unexplained Warning newer than the last phase
                              change: the cause is then target-pod-create-failed (any FailedCreate
                              of the target pod) or unknown, with the plane the phase points at
                              (before Running: control-plane)
    assumptions[]             what could not be read and what was assumed instead (a 403, a kind
                              that is not installed, events that have expired)
    history[]                 with --history: every migration of the VMI, oldest first, with the
                              backoff between them
    progressSeries            with --prometheus (or --connect, from vmctl's record): {source,
                              points[] {atMs, remainingBytes, dirtyRateBps?, transferRateBps,
                              pass?}}, the migration's progress over time, at most 120 points;
                              drawn as sparklines in the text
    notes[]                   what was assumed (objects that could not be read)
    warnings[]                what was said on stderr about the input (omitted when none)
    journal                   only when the migration was explained from the journal: {path,
                              recordedAt, recordedBy (record | migrate | drain | abort)}

THE JOURNAL (--journal, $VMCTL_JOURNAL, else the default file; read only): when NAME (or vm/NAME)
is not in the cluster, the journal's newest record of it is explained instead: the objects it
was diagnosed from when it ended are diagnosed again, under a first line \"from the journal PATH,
recorded at T by WHO (the migration no longer exists in the cluster)\". A record that kept no
objects (a libvirt run) shows its recorded outcome, plane, cause and summary. No journal, or
--journal off: the \"not found\" as before; a journal that cannot be read adds a hint saying why.
explain vm/NAME of a VM with no migration left names the journal's latest record of it among
the next steps (vmctl history vm/NAME lists them all).

DIRTY RATE (--metrics: the VMI node's virt-handler /metrics through the API server's pod proxy, a
list of virt-handler pods and one page; --prometheus URL: one query, also with --from): for a
data-plane failure only, evidence[] gains the guest's dirty rate now
(kubevirt_vmi_dirty_rate_bytes_per_second, KubeVirt v1.6+, a hint), the running migration's
rates while there is one, the bandwidthPerMigration it ran with (or 'unset': the network's rate),
and the dirty rate against the transfer rate (object vmctl; 90% or more: pre-copy cannot
converge). What cannot be read is one line among the assumptions; the diagnosis does not change.

PROGRESS (--prometheus URL: one range query over the migration's window, start to end or to now,
every window/120 seconds): remaining bytes, dirty rate and transfer rate, drawn as sparklines
(remaining memory; transfer and dirty rate on one scale) and kept as progressSeries.

EXIT CODES: 0 the migration succeeded or is progressing (or there is none); 1 it failed, was
aborted or is blocked; 2 ambiguous name; 3 not found.";

/// When `explain`, `status`, `drain`, `plan-drain` and `plan-maintenance` call a retry or a
/// wait a loop that never ends.
/// `--sync-timeout`'s default, `triage::loops::DEFAULT_SYNC_SECONDS` as a duration (a
/// unit test keeps the two equal).
pub const DEFAULT_SYNC_TIMEOUT: &str = "5m";
/// `--handoff-timeout`'s default, `triage::loops::DEFAULT_HANDOFF_SECONDS` as a duration (a
/// unit test keeps the two equal).
pub const DEFAULT_HANDOFF_TIMEOUT: &str = "2m";

#[derive(Debug, Clone, Args)]
pub struct LoopArgs {
    /// Consecutive failed evacuation migrations of a VM still marked for evacuation that make
    /// an evacuation loop (1 to 5: KubeVirt keeps only the newest five finished migrations).
    #[arg(long, value_name = "N", default_value_t = crate::triage::loops::DEFAULT_LOOP_FAILURES,
          value_parser = clap::value_parser!(u32).range(1..=5))]
    pub loop_failures: u32,

    /// A decentralized migration in WaitingForSync or Synchronizing for longer than this is
    /// stuck (KubeVirt has no timeout for these phases).
    ///
    /// DURATION: 90s, 15m, 1h30m, 1h 30m, 1.5h, 2d, PT1H30M or plain seconds; a day is 24 hours;
    /// whole seconds, at most 30 days.
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_SYNC_TIMEOUT, value_parser = parse_duration)]
    pub sync_timeout: Duration,

    /// A migration with backend storage (persistent TPM/EFI) still Running this long after its
    /// stream ended is stuck in the PVC hand-off.
    ///
    /// DURATION: as --sync-timeout.
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_HANDOFF_TIMEOUT, value_parser = parse_duration)]
    pub handoff_timeout: Duration,
}

impl LoopArgs {
    pub fn thresholds(&self) -> crate::triage::LoopThresholds {
        let secs = |d: Duration| i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
        crate::triage::LoopThresholds {
            failures: self.loop_failures,
            sync_seconds: secs(self.sync_timeout),
            handoff_seconds: secs(self.handoff_timeout),
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct StatusArgs {
    /// VMs (or bare VMIs) to show; all in scope when none are given.
    #[arg(value_name = "VM")]
    pub names: Vec<String>,

    /// Only VMIs running on this node.
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,

    /// Only VMIs whose labels match this selector (e.g. app=db,tier!=web).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,

    /// Keep watching: a live view of the migrations in flight, fed by watches.
    #[arg(short = 'w', long)]
    pub watch: bool,

    #[command(flatten)]
    pub loops: LoopArgs,
}

#[derive(Debug, Clone, Args)]
pub struct PlanDrainArgs {
    /// The node(s) to drain; several nodes are drained together.
    #[arg(value_name = "NODE", required = true)]
    pub nodes: Vec<String>,

    /// Transfer rate assumed per migration when the cluster sets no bandwidthPerMigration
    /// (a quantity per second, e.g. 1Gi, 500Mi).
    #[arg(long, value_name = "RATE", value_parser = rate)]
    pub bandwidth: Option<u64>,

    /// Read each drained node's virt-handler /metrics page through the API server's pod
    /// proxy (get pods/proxy in KubeVirt's namespace; one request per node) for the guests'
    /// dirty rates, and predict whether each live migration converges under its policy.
    #[arg(long, conflicts_with = "prometheus")]
    pub metrics: bool,

    /// As --metrics, from this Prometheus (one query).
    #[arg(long, value_name = "URL")]
    pub prometheus: Option<String>,

    #[command(flatten)]
    pub loops: LoopArgs,

    #[command(flatten)]
    pub chart: ChartArgs,
}

/// `--chart`/`--no-chart` of plan-drain and plan-maintenance: the timeline after the table.
#[derive(Debug, Clone, Args)]
pub struct ChartArgs {
    /// When to draw the timeline (a Gantt of the waves or batches, blockers marked) after
    /// the table: auto = when stdout is a terminal. Never with -o json|yaml. Width: COLUMNS,
    /// else the terminal's, else 80; ASCII unless the locale is UTF-8.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = crate::render::gantt::ChartWhen::Auto)]
    pub chart: crate::render::gantt::ChartWhen,

    /// No timeline (--chart never).
    #[arg(long, conflicts_with = "chart")]
    pub no_chart: bool,
}

impl ChartArgs {
    pub fn when(&self) -> crate::render::gantt::ChartWhen {
        if self.no_chart {
            crate::render::gantt::ChartWhen::Never
        } else {
            self.chart
        }
    }
}

/// The order `plan-maintenance` drains the nodes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MaintenanceOrder {
    /// As given (by name with --all or -l).
    Given,
    /// vmctl's choice: nodes that cannot be drained last, the emptiest first.
    Auto,
}

/// Where `plan-maintenance` lets the VMs go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MaintenanceTargets {
    /// Wherever the scheduler puts them.
    Any,
    /// Only nodes already done (a migration's addedNodeSelector can enforce it).
    Done,
}

#[derive(Debug, Clone, Args)]
pub struct PlanMaintenanceArgs {
    /// The nodes of the rollout, in order.
    #[arg(value_name = "NODE", required_unless_present_any = ["all", "selector"], conflicts_with_all = ["all", "selector"])]
    pub nodes: Vec<String>,

    /// Every node of the cluster, by name.
    #[arg(long, conflicts_with = "selector")]
    pub all: bool,

    /// The nodes these labels select, by name.
    #[arg(short = 'l', long = "selector", value_name = "NODE_SELECTOR")]
    pub selector: Option<String>,

    /// Nodes drained at once (a MachineConfigPool's maxUnavailable).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_unavailable: u32,

    #[arg(long, value_enum, default_value_t = MaintenanceOrder::Given)]
    pub order: MaintenanceOrder,

    #[arg(long, value_enum, default_value_t = MaintenanceTargets::Any)]
    pub targets: MaintenanceTargets,

    /// Time to upgrade and reboot a drained node before it takes VMs again (e.g. 10m).
    ///
    /// DURATION: 90s, 15m, 1h30m, 1h 30m, 1.5h, 2d, PT1H30M or plain seconds; a day is 24 hours;
    /// whole seconds, at most 30 days.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub upgrade_time: Option<Duration>,

    /// Transfer rate assumed per migration (as plan-drain --bandwidth).
    #[arg(long, value_name = "RATE", value_parser = rate)]
    pub bandwidth: Option<u64>,

    #[command(flatten)]
    pub loops: LoopArgs,

    #[command(flatten)]
    pub chart: ChartArgs,
}

#[derive(Debug, Clone, Args)]
pub struct DrainArgs {
    /// The node(s) to drain; several nodes are cordoned first, then drained together.
    #[arg(value_name = "NODE", required = true)]
    pub nodes: Vec<String>,

    /// Show the plan and what would be done; change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Stop waiting after this long (e.g. 30m); 0 or absent: no limit, like kubectl drain.
    /// Migrations in flight go on (KubeVirt owns them).
    ///
    /// DURATION: 90s, 15m, 1h30m, 1h 30m, 1.5h, 2d, PT1H30M or plain seconds; a day is 24 hours;
    /// whole seconds, at most 30 days.
    #[arg(long, value_name = "DURATION", value_parser = parse_drain_timeout)]
    pub timeout: Option<Duration>,

    /// Leave DaemonSet-managed pods (as kubectl drain --ignore-daemonsets).
    #[arg(long)]
    pub ignore_daemonsets: bool,

    /// Evict pods with emptyDir volumes, losing their data (as kubectl drain). A VM's
    /// launcher pod does not need it: the VM moves by live migration.
    #[arg(long)]
    pub delete_emptydir_data: bool,

    /// Evict pods that no controller owns (as kubectl drain --force).
    #[arg(long)]
    pub force: bool,

    /// Only evict the pods these labels select (as kubectl drain --pod-selector).
    #[arg(long, value_name = "SELECTOR")]
    pub pod_selector: Option<String>,

    /// Seconds each pod gets to terminate (the pod's own when absent, as kubectl's -1).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub grace_period: Option<i64>,

    /// Allow shutting down the VMs the plan shuts down (eviction strategy None, or not
    /// migratable with LiveMigrateIfPossible). Without it vmctl asks on a terminal and
    /// refuses elsewhere.
    #[arg(long)]
    pub allow_shutdowns: bool,

    /// Drain even when the plan says it will block: everything that can leave leaves, the
    /// blockers are listed at the end.
    #[arg(long)]
    pub force_partial: bool,

    /// At most this many VMs evacuated at once (KubeVirt's own limits apply on top).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_parallel: Option<u32>,

    /// Return once every eviction was accepted or handed to KubeVirt; do not wait for the
    /// VMs to arrive (follow with vmctl status --watch).
    #[arg(long)]
    pub no_wait: bool,

    /// Transfer rate assumed per migration in the plan (as plan-drain --bandwidth).
    #[arg(long, value_name = "RATE", value_parser = rate)]
    pub bandwidth: Option<u64>,

    #[command(flatten)]
    pub loops: LoopArgs,
}

const TOP_KEYS: &str = "\
KEYS:
    Up/Down j/k      select a row (PgUp/PgDn, g/G: page, first, last)
    Tab, Shift-Tab   next or previous section
    /                filter by namespace or node (Enter keeps, Esc cancels)
    Enter            explain the selected VM (a scrollable pane; Esc closes)
    a                abort the selected migration: y/n, then the VMIM is deleted as
                     vmctl abort does; refused in post-copy and with --from (read-only)
    ?                help
    q, Ctrl-C        quit (SIGTERM too); the terminal is restored on every exit

Needs a terminal. With -o json|yaml it prints one frame as a document (kind TopFrame:
counts, migrations[], evacuations[], cordonedNodes[], failures[]) and exits.
Live, it lists VMIs, migrations and launcher pods once, then follows them with watches.

EXIT CODES: 0 quit (q, Ctrl-C, SIGTERM) or one frame printed; 2 usage (no terminal without
-o json|yaml); 4 bad input (--from); 5 cluster error; 70 internal error.";

const SNAPSHOT_OUTPUT: &str = "\
Whole by default: every namespace (whatever the kubeconfig context's), as --from reads it.
-n NAMESPACE narrows every namespaced kind alike (nodes and cluster-scoped kinds stay whole,
pods of other namespaces only as node capacity); --node NODE keeps that node's VMIs. A narrowed
snapshot says what it left out on stderr and in the file (scope.leftOut), and --from says it
again.

EXIT CODES: 0 written; 2 usage; 4 bad input (the file cannot be written, --from unreadable);
5 cluster error (unreachable, unauthorised, forbidden); 70 internal error. The file is written
whole or not at all.";

const COMPLETIONS_OUTPUT: &str = "\
EXIT CODES: 0 the script was printed; 2 usage (a shell vmctl has no script for).";

const MAN_OUTPUT: &str = "\
EXIT CODES: 0 the pages were written; 2 usage; 4 the directory or a page cannot be written;
70 internal error.";

#[derive(Debug, Clone, Args)]
pub struct TopArgs {
    /// Say what an abort would delete instead of deleting it.
    #[arg(long)]
    pub dry_run: bool,

    /// Read virt-handler's /metrics through the API server's pod proxy (get pods/proxy in
    /// KubeVirt's namespace) every 2 s, one GET per node a migration streams from, for
    /// progress of the data, the dirty rate and the ETA (without it, progress is against
    /// the completion budget). Each node's virt-handler pod is found once (one LIST).
    #[arg(long)]
    pub metrics: bool,

    #[command(flatten)]
    pub loops: LoopArgs,
}

#[derive(Debug, Clone, Args)]
pub struct RecordArgs {
    /// Only the migrations of these VMs (or bare VMIs); all in scope when none are given.
    #[arg(value_name = "VM")]
    pub names: Vec<String>,

    /// Only the migrations of VMIs running on this node.
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,

    /// Only the migrations of VMIs whose labels match this selector (e.g. app=db,tier!=web).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,

    /// The name the records carry for this cluster (default: the kubeconfig context's
    /// cluster; in a pod, the cluster's URL host). One PostgreSQL journal holds a fleet of
    /// clusters by this name.
    #[arg(long, value_name = "NAME", env = "VMCTL_CLUSTER_NAME")]
    pub cluster_name: Option<String>,

    /// Delete records that ended longer ago than this (at start, then every hour).
    ///
    /// DURATION: 90d, 12h, 2w, P30D or plain seconds; a day is 24 hours; at most 100 years.
    #[arg(long, value_name = "DURATION", default_value = "90d", value_parser = parse_retention)]
    pub retain: Duration,

    /// Keep the journal's records within this size, oldest deleted first (at start, then
    /// every hour); a quantity: 1Gi, 500Mi.
    #[arg(long, value_name = "SIZE", default_value = "1Gi", value_parser = parse_size)]
    pub max_size: u64,

    #[command(flatten)]
    pub loops: LoopArgs,
}

const RECORD_OUTPUT: &str = "\
WHAT IT DOES: lists VMIs, migrations and launcher pods once (and reads the KubeVirt CR), then
follows them with watches, as status --watch does (a dropped watch resumes, 410 Gone re-lists,
errors back off and say 'reconnecting…' on stderr). Each migration that ends (Succeeded, Failed,
or deleted before its end: aborted) is diagnosed from what vmctl explain reads: what the watches
hold, and, read when it ends, the events about its VMIM, VMI and pods (one LIST per object), the
MigrationPolicies, its Namespace and PDBs (a refused read is said once; the diagnosis says what it
assumed). Its end is the objects' (migrationState.endTimestamp, else the VMIM's
phaseTransitionTimestamps), never the recorder's clock; unknown when no object says (history: 'end
unknown'). It is committed to the
journal, once: its id is the VMIM's UID, so a restart, or migrate and record both seeing one
migration, never writes it twice. The watch's resourceVersion is committed with the records; after a
restart the migration watch is replayed from it first, so migrations that ended and were deleted
while the recorder was down are still recorded (if the API server no longer has that history, 410
Gone, it says so once and carries on). Migrations that ended while it was down and still exist are
recorded from the first list.

FAULTS: a full disk stops the writing (said once on stderr), the watching goes on, up to 10,000
records wait in memory and are written, oldest first, once the journal takes them again (tried
every 30 s); a busy journal is retried. SIGTERM or Ctrl-C finishes the commit in flight and exits 0.
A kill -9 loses at most the migration being committed (the next start records it from the list).

OUTPUT: one line per recorded migration on stdout (time, namespace/vm, migration, outcome, cause,
duration; wide: nodes and mode too); with -o json one JSON object per line (-o yaml: one YAML
document each, after ---), kind RecordedMigration: {time, id, cluster, namespace, vm, migration,
outcome, phase, cause, plane, summary, sourceNode, targetNode, sourcePod, targetPod, mode,
durationMs, transferMs}. Start, journal and watch notes go to stderr; a summary on stop.

EXIT CODES: 0 stopped (SIGTERM, Ctrl-C); 5 cluster error (a watch that failed for 15 minutes, or
RBAC: see deploy/record.yaml); 7 the journal cannot be used (newer schema, damaged, unreachable).";

#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    /// Only the migrations of one VM (NAME, vm/NAME or vmi/NAME), from or to one node
    /// (node/NAME), or one migration (migration/NAME); every migration in scope when absent.
    #[arg(value_name = "TARGET")]
    pub target: Option<String>,

    /// Migrations that ended in this window, back from now (e.g. 36h, 7d, 2w; at most 10 years).
    ///
    /// DURATION: 90s, 15m, 1h30m, 1h 30m, 1.5h, 2d, 1w, P7D or plain seconds; a day is 24 hours.
    #[arg(long, value_name = "DURATION", default_value = "7d", value_parser = parse_since)]
    pub since: Duration,

    /// Only migrations this cause ended (a cause id: vmctl explain --help lists them).
    #[arg(long, value_name = "CAUSE")]
    pub cause: Option<String>,

    /// Only migrations that ended this way.
    #[arg(long, value_enum, value_name = "OUTCOME", conflicts_with = "failed")]
    pub outcome: Option<HistoryOutcome>,

    /// Only failed migrations (--outcome failed).
    #[arg(long)]
    pub failed: bool,

    /// At most this many migrations listed, newest first (0: all). The totals, per node and
    /// per cause, count every migration that matched.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub limit: usize,

    /// Only the migrations of this cluster, as `vmctl record --cluster-name` (or the
    /// kubeconfig context's cluster) named it: one PostgreSQL journal holds a fleet.
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,
}

/// `history --outcome`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HistoryOutcome {
    Succeeded,
    Failed,
    Aborted,
    /// The object vanished before it reached a final phase.
    Vanished,
}

const HISTORY_OUTPUT: &str = "\
Reads the journal only (--journal, $VMCTL_JOURNAL, else the default file): no cluster is
contacted. The journal is read whole (every namespace; a node is cluster-scoped) unless -n
NAMESPACE is given; a VM's name without -n is looked for in every namespace and the answer says
which matched. Nothing is created: a journal that does not exist is an error (exit 7); vmctl
record, migrate, drain and abort write it.

TABLE: the migrations, newest first (ENDED ago, VM, MIGRATION, OUTCOME, CAUSE, PLANE, ROUTE
source → target node, MODE, DURATION created → ended, DATA sent / total, BY which command
recorded it; -o wide adds ENDED AT, PODS source → target, EVACUATING node and SUMMARY), then BY
NODE (a migration counts for its source node, so an evacuation of node X counts for X;
EVACUATIONS says how many of them were), BY CAUSE (the nodes each cause hit) and the TOTAL line.
Durations: nearest rank (the median and p95 are durations a migration took).

JSON/YAML OUTPUT (-o json|yaml), apiVersion vmctl/v1alpha1, kind MigrationHistory:
    asOf                  the clock (--now / VMCTL_NOW, else this machine's)
    journal               the journal read (a path, or a URL without its password)
    query                 {namespace (null: all), target (vm/NAME, node/NAME, migration/NAME
                          or null), since (RFC 3339), window (its length: 7d), cause, outcome,
                          limit (null: all), cluster (null: all)}
    matched               how many migrations matched (records[] holds at most --limit)
    namespaces[]          the namespaces of the migrations that matched
    records[]             newest first: {id, cluster, recordedBy (record | migrate | drain |
                          abort), platform (kubevirt | libvirt), namespace, vm, migration,
                          sourceNode, targetNode, sourcePod, targetPod, evacuationNode,
                          outcome (succeeded | failed | aborted | vanished), phase, mode
                          (pre-copy | post-copy), plane, cause, summary, createdAt, startedAt,
                          endedAt, endedMs, recordedAt, durationMs, transferMs,
                          dataProcessedBytes, dataTotalBytes, dataRemainingBytes, ageSeconds}
                          (endedAt and ageSeconds null: no object said when it ended; endedMs
                          is then the last time its objects show, for the order)
    totals                {count, succeeded, failed, aborted, vanished, failureRate (failed ÷
                          count), medianDurationMs, p95DurationMs, dataProcessedBytes}
    byNode[]              {node (null: none recorded), the totals' fields, evacuations}, by
                          count then name
    byCause[]             {cause, plane, count, failed, nodes[]}, by count then cause

EXIT CODES: 0 nothing matched failed (an empty window too: the line says what was searched);
1 a failed migration is among those matched; 2 usage (a cause not in the catalogue, with
the closest ids); 7 the journal is missing, corrupted or from a newer vmctl.";

#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// A migration (NAME or migration/NAME), or vm/NAME or vmi/NAME for that VM's latest
    /// migration and its current migratability.
    #[arg(value_name = "NAME")]
    pub target: String,

    /// List every migration of the VMI still present, oldest first, with the backoff between them.
    #[arg(long)]
    pub history: bool,

    /// Explain the last migration job of a libvirt domain on this libvirt URI instead.
    #[arg(long, value_name = "URI")]
    pub connect: Option<String>,

    /// For a data-plane failure, read the guest's dirty rate from virt-handler's /metrics
    /// through the API server's pod proxy (get pods/proxy in KubeVirt's namespace) and show
    /// it against the transfer rate.
    #[arg(long, conflicts_with_all = ["prometheus", "connect"])]
    pub metrics: bool,

    /// As --metrics, from this Prometheus (one query); also the migration's progress over
    /// time (one range query), drawn as sparklines.
    #[arg(long, value_name = "URL", conflicts_with = "connect")]
    pub prometheus: Option<String>,

    #[command(flatten)]
    pub loops: LoopArgs,
}

#[derive(Debug, Clone, Args)]
pub struct MigrateArgs {
    /// The VM (or bare VMI) to migrate; with --connect, the libvirt domain.
    #[arg(value_name = "VM")]
    pub target: String,

    /// Allow switching to post-copy when pre-copy does not converge. After the switch the
    /// guest runs on the target with memory still on the source: an abort or a network
    /// failure then loses the guest.
    #[arg(long)]
    pub allow_postcopy: bool,

    /// Allow auto-converge: throttle the guest's CPUs until pre-copy converges.
    #[arg(long, alias = "auto-converge")]
    pub allow_auto_converge: bool,

    /// Print what would be created (or the libvirt flags and parameters) and change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Restrict the target to nodes with these labels (KubeVirt: addedNodeSelector), k=v,...
    #[arg(long, value_name = "K=V,...", conflicts_with = "connect", value_parser = parse_node_selector)]
    pub node_selector: Option<BTreeMap<String, String>>,

    /// Follow the migration until it ends (the default).
    #[arg(long, overrides_with = "no_wait")]
    pub wait: bool,

    /// Start the migration and return at once.
    #[arg(long, overrides_with = "wait")]
    pub no_wait: bool,

    /// Give up waiting after this long (e.g. 90s, 15m); the migration itself goes on.
    /// With --connect (vmctl drives the migration) it is aborted instead, unless in post-copy.
    ///
    /// DURATION: 90s, 15m, 1h30m, 1h 30m, 1.5h, 2d, PT1H30M or plain seconds; a day is 24 hours;
    /// whole seconds, at most 30 days.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,

    /// Read migration metrics from this Prometheus instead of virt-handler's pod proxy.
    #[arg(long, value_name = "URL", conflicts_with = "connect")]
    pub prometheus: Option<String>,

    /// libvirt: the source connection URI (e.g. qemu+ssh://host-a/system).
    #[arg(long, value_name = "SRC_URI", requires = "to")]
    pub connect: Option<String>,

    /// libvirt: the destination connection URI.
    #[arg(long, value_name = "DST_URI", requires = "connect")]
    pub to: Option<String>,

    /// libvirt: pause the guest when pre-copy cannot converge and post-copy is not allowed.
    #[arg(long, requires = "connect")]
    pub allow_pause: bool,

    /// libvirt: bandwidth cap in MiB/s (1 to 1048576).
    #[arg(long, value_name = "MIB_PER_S", requires = "connect",
          value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub bandwidth: Option<u64>,

    /// libvirt: bandwidth cap in post-copy, MiB/s (1 to 1048576; needs --allow-postcopy;
    /// unlimited without it).
    #[arg(long, value_name = "MIB_PER_S", requires = "connect",
          value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub postcopy_bandwidth: Option<u64>,

    /// libvirt: maximum downtime in milliseconds (1 to 2000000, KubeVirt's range).
    #[arg(long, value_name = "MS", requires = "connect",
          value_parser = clap::value_parser!(u64).range(1..=2_000_000))]
    pub max_downtime: Option<u64>,

    /// libvirt: completion budget per GiB of guest memory, in seconds (KubeVirt's default 150;
    /// 0 disables it; at most 86400).
    #[arg(long, value_name = "S", requires = "connect",
          value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub completion_timeout_per_gib: Option<u64>,

    /// libvirt: abort when remaining data has not decreased for this many seconds (default 150;
    /// 0 disables it; at most 86400).
    #[arg(long, value_name = "S", requires = "connect",
          value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub progress_timeout: Option<u64>,

    /// libvirt: parallel (multifd) connections (1 to 255).
    #[arg(long, value_name = "N", requires = "connect",
          value_parser = clap::value_parser!(u32).range(1..=255))]
    pub parallel: Option<u32>,

    /// libvirt: `json` prints one JSON line per sample on stdout, for tooling.
    #[arg(long, value_name = "FORMAT", requires = "connect")]
    pub progress: Option<ProgressFormat>,

    /// libvirt: measure the guest's dirty rate for this many seconds before starting (QEMU
    /// page sampling, one calculation a second, averaged; 1 to 10) and predict whether
    /// pre-copy converges, refusing what cannot complete. Without it vmctl starts at once and
    /// predicts from pass 1; --dry-run measures 3 s unless told otherwise.
    #[arg(long, value_name = "S", requires = "connect", conflicts_with = "no_measure",
          value_parser = clap::value_parser!(u32).range(1..=10))]
    pub measure: Option<u32>,

    /// libvirt: --dry-run without measuring the dirty rate (a migration never measures
    /// before starting unless --measure).
    #[arg(long, requires = "connect")]
    pub no_measure: bool,

    /// libvirt: start even when the prediction says nothing the flags allow can complete the
    /// migration (vmctl otherwise refuses, exit 1, and says what would).
    #[arg(long, requires = "connect")]
    pub force: bool,

    /// Say also what could not be read before the start (the prediction's metric and where
    /// it was looked for).
    #[arg(short = 'v', long)]
    pub verbose: bool,
}

#[derive(Debug, Clone, Args)]
pub struct AbortArgs {
    /// VM, migration/NAME, or with --connect the libvirt domain.
    #[arg(value_name = "VM|migration/NAME")]
    pub target: String,

    /// Cancel a drain-triggered evacuation instead (clears evacuationNodeName).
    #[arg(long, conflicts_with = "connect")]
    pub evacuation: bool,

    /// Wait for the abort to be reported (the default for libvirt).
    #[arg(long)]
    pub wait: bool,

    /// Give up waiting after this long (e.g. 60s).
    ///
    /// DURATION: 90s, 15m, 1h30m, 1h 30m, 1.5h, 2d, PT1H30M or plain seconds; a day is 24 hours;
    /// whole seconds, at most 30 days.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,

    /// Print what would be deleted or called and change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// libvirt: the connection URI of the domain's source host.
    #[arg(long, value_name = "URI")]
    pub connect: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct SnapshotArgs {
    /// Where to write the snapshot: YAML, or one line of JSON (which `--from` reads about
    /// ten times faster) for a `.json` file or with `-o json`; `-` for standard output.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Only what concerns the VMIs on this node (plus every node, for capacity); said on
    /// stderr and in the file.
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to generate completions for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// Directory to write vmctl.1 and one page per command into; stdout (vmctl.1 only) when absent.
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub dir: Option<PathBuf>,
}

/// `--progress`: how samples are printed besides the progress view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProgressFormat {
    /// One JSON line per sample on stdout.
    Json,
}

/// `--bandwidth`: a quantity per second (`1Gi`, `500Mi`, `1Gi/s`), more than zero, in bytes.
fn rate(text: &str) -> Result<u64, String> {
    crate::model::Quantity::parse(text.trim_end_matches("/s"))
        .ok()
        .map(|q| q.bytes())
        .filter(|b| *b > 0)
        .ok_or_else(|| "expected a rate such as 1Gi or 500Mi (per second)".to_string())
}

/// The longest `--timeout` vmctl takes: 30 days (no migration waits longer, and every
/// deadline `now + timeout` stays far from overflowing).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(30 * 86_400);

/// What a DURATION flag takes, named in its error (the flags' long help says the same).
const DURATION_FORMS: &str = "90s, 15m, 1h30m, 1h 30m, 1.5h, 2d, PT1H30M or plain seconds";

/// A DURATION flag (`--timeout`, `--upgrade-time`): jiff's friendly format (`90s`, `15m`,
/// `1h30m`, `1h 30m`, `1.5h`, `1 hour`), ISO 8601 (`PT1H30M`, `P1D`) or plain seconds (`42`).
/// More than 0, at most 30 days, in whole seconds. A day (and a week) is 24 hours here: a
/// timeout counts elapsed time, not calendar days (jiff's `Span` treats days as calendar units,
/// so the conversion says so explicitly); months and years have no fixed length and are refused.
/// Negative durations (`-5s`, `5s ago`) are refused. Nothing wraps: jiff checks every unit's range.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    duration(text, false)
}

/// `history --since`: a DURATION as [`parse_duration`] takes it (a day and a week are 24
/// hours and 7 of them), more than 0, at most 10 years.
pub fn parse_since(text: &str) -> Result<Duration, String> {
    duration_within(
        text,
        false,
        Duration::from_secs(3650 * 86_400),
        "the 10 years --since looks back at most",
        "an empty window (--since must be more than 0)",
    )
}

/// `record --retain`: a DURATION as [`parse_duration`] takes it, up to 100 years.
pub fn parse_retention(text: &str) -> Result<Duration, String> {
    duration_within(
        text,
        false,
        MAX_RETENTION,
        "the 100 years vmctl keeps at most",
        "keeping nothing (--retain must be more than 0)",
    )
}

/// The longest `--retain`.
pub const MAX_RETENTION: Duration = Duration::from_secs(100 * 365 * 86_400);

/// `record --max-size`: a quantity of bytes (`1Gi`, `500Mi`), more than zero.
pub fn parse_size(text: &str) -> Result<u64, String> {
    crate::model::Quantity::parse(text.trim())
        .ok()
        .map(|q| q.bytes())
        .filter(|b| *b > 0)
        .ok_or_else(|| format!("{text:?} is not a size (e.g. 1Gi, 500Mi)"))
}

/// `drain --timeout`: as [`parse_duration`], and 0 (any zero: `0`, `0s`, `PT0S`) is accepted
/// and means no limit, as kubectl drain's.
pub fn parse_drain_timeout(text: &str) -> Result<Duration, String> {
    duration(text, true)
}

fn duration(text: &str, zero_means_no_limit: bool) -> Result<Duration, String> {
    duration_within(
        text,
        zero_means_no_limit,
        MAX_TIMEOUT,
        "the 30 days vmctl waits at most (omit --timeout to wait until the migration ends)",
        "a timeout of 0 would end at once (omit --timeout to wait until the migration ends)",
    )
}

fn duration_within(
    text: &str,
    zero_means_no_limit: bool,
    max: Duration,
    max_words: &str,
    zero_words: &str,
) -> Result<Duration, String> {
    use jiff::{Span, SpanRelativeTo};

    let bad = || format!("{text:?} is not a duration (e.g. {DURATION_FORMS})");
    let too_long = || format!("{text:?} is longer than {max_words}");
    let t = text.trim();
    if t.is_empty() || t.len() > 64 {
        return Err(bad());
    }
    let seconds = if t.bytes().all(|b| b.is_ascii_digit()) {
        // Plain seconds: jiff has no unitless form.
        let n = t.parse::<u64>().map_err(|_| too_long())?;
        Duration::from_secs(n)
    } else {
        let span: Span = match t.parse() {
            Ok(span) => span,
            // jiff refuses a unit beyond its range (`99999999999999999999s`); the same text
            // with every whole number made 1 parses: it was too long, not malformed.
            Err(_) if ones(t).parse::<Span>().is_ok() => return Err(too_long()),
            Err(_) => return Err(bad()),
        };
        if span.is_negative() {
            return Err(format!("{text:?} is negative: a duration counts forward"));
        }
        let signed = span
            .to_duration(SpanRelativeTo::days_are_24_hours())
            .map_err(|_| {
                format!("{text:?}: months and years have no fixed length (use days, 24 hours each)")
            })?;
        let d = Duration::try_from(signed).map_err(|_| bad())?;
        if d.subsec_nanos() != 0 {
            return Err(format!(
                "{text:?} has a fraction of a second (vmctl counts whole seconds)"
            ));
        }
        d
    };
    if seconds.is_zero() && !zero_means_no_limit {
        return Err(format!("{text:?}: {zero_words}"));
    }
    if seconds > max {
        return Err(too_long());
    }
    Ok(seconds)
}

/// `text` with each whole number (a digit run not after a decimal point) replaced by `1`.
fn ones(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut before, mut prev) = (None::<char>, None::<char>);
    let mut in_fraction = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !prev.is_some_and(|p| p.is_ascii_digit()) {
                // `1.5h`, and ISO 8601's `PT1,5H`; a comma after a unit (`1h, 30m`) separates.
                in_fraction = prev == Some('.')
                    || (prev == Some(',') && before.is_some_and(|b| b.is_ascii_digit()));
                if !in_fraction {
                    out.push('1');
                }
            }
            if in_fraction {
                out.push(c);
            }
        } else {
            out.push(c);
        }
        (before, prev) = (prev, Some(c));
    }
    out
}

/// `--node-selector`: `k=v,k2=v2` into a map.
pub fn parse_node_selector(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut map = BTreeMap::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("{part:?} is not KEY=VALUE (several: k1=v1,k2=v2)"))?;
        if k.trim().is_empty() {
            return Err(format!("empty key in {part:?}"));
        }
        map.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(map)
}

#[cfg(test)]
mod value_tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("15m").unwrap(), Duration::from_secs(900));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("42").unwrap(), Duration::from_secs(42));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5x").is_err());
        assert!(parse_duration("1h5").is_err());
        assert_eq!(parse_duration("30d").unwrap(), MAX_TIMEOUT);
        for wraps in [
            "213503982334602d",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999s",
            "31d",
        ] {
            let e = parse_duration(wraps).unwrap_err().to_string();
            assert!(e.contains("longer than the 30 days"), "{wraps}: {e}");
        }
        for zero in ["0", "0s", "0h0m"] {
            let e = parse_duration(zero).unwrap_err().to_string();
            assert!(e.contains("a timeout of 0"), "{zero}: {e}");
        }
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("-5s").is_err());
    }

    #[test]
    fn the_loop_flags_default_to_triage_loops_thresholds() {
        use crate::triage::loops::{DEFAULT_HANDOFF_SECONDS, DEFAULT_SYNC_SECONDS};
        let secs = |t: &str| parse_duration(t).map(|d| d.as_secs() as i64);
        assert_eq!(secs(DEFAULT_SYNC_TIMEOUT), Ok(DEFAULT_SYNC_SECONDS));
        assert_eq!(secs(DEFAULT_HANDOFF_TIMEOUT), Ok(DEFAULT_HANDOFF_SECONDS));
        let cli = Cli::try_parse_from(["vmctl", "drain", "node-1"]).unwrap();
        let Command::Drain(d) = cli.command else {
            panic!("not a drain")
        };
        assert_eq!(
            d.loops.thresholds(),
            crate::triage::LoopThresholds::default()
        );
    }

    #[test]
    fn drain_takes_zero_as_no_limit_as_its_help_says() {
        for zero in ["0", "0s", "PT0S", "0h 0m"] {
            assert_eq!(parse_drain_timeout(zero), Ok(Duration::ZERO), "{zero}");
        }
        assert_eq!(parse_drain_timeout("30m"), Ok(Duration::from_secs(1800)));
        assert!(parse_drain_timeout("31d").is_err() && parse_drain_timeout("-1s").is_err());
        let cli = Cli::try_parse_from(["vmctl", "drain", "node-1", "--timeout", "0"]);
        assert!(
            matches!(cli.map(|c| c.command), Ok(Command::Drain(ref d)) if d.timeout == Some(Duration::ZERO))
        );
    }

    #[test]
    fn durations_in_jiffs_forms() {
        let secs = |t: &str| parse_duration(t).map(|d| d.as_secs());
        assert_eq!(secs("2h"), Ok(7200));
        assert_eq!(secs("1d"), Ok(86_400));
        assert_eq!(secs("1h 30m"), Ok(5400));
        assert_eq!(secs("1.5h"), Ok(5400));
        assert_eq!(secs("PT1H30M"), Ok(5400));
        assert_eq!(secs("pt90s"), Ok(90));
        assert_eq!(secs("1 hour, 30 minutes"), Ok(5400));
        assert_eq!(secs(" 15m "), Ok(900));
        // A day is 24 hours (never a calendar day), in both forms; a week is 7 of them.
        assert_eq!(secs("P1D"), Ok(86_400));
        assert_eq!(secs("1w"), Ok(7 * 86_400));
        assert_eq!(secs("P30D"), Ok(MAX_TIMEOUT.as_secs()));
        assert_eq!(secs("4w 2d"), Ok(MAX_TIMEOUT.as_secs()));
        assert_eq!(secs("1.5m"), Ok(90));
    }

    #[test]
    fn durations_refused_by_reason() {
        let err = |t: &str| parse_duration(t).unwrap_err();
        for negative in ["-5s", "-1h30m", "5s ago", "-PT1H"] {
            assert!(
                err(negative).contains("is negative"),
                "{negative}: {}",
                err(negative)
            );
        }
        for calendar in ["1mo", "P1M", "1y", "P1Y"] {
            assert!(
                err(calendar).contains("no fixed length"),
                "{calendar}: {}",
                err(calendar)
            );
        }
        for fraction in ["1.5s", "500ms", "90s 1ms"] {
            assert!(
                err(fraction).contains("fraction of a second"),
                "{fraction}: {}",
                err(fraction)
            );
        }
        for long in ["P31D", "5w", "721h", "43201m", "2592001s", "30d 1s"] {
            assert!(
                err(long).contains("longer than the 30 days"),
                "{long}: {}",
                err(long)
            );
        }
        for zero in ["PT0S", "0h 0m", "0.0h"] {
            assert!(
                err(zero).contains("a timeout of 0"),
                "{zero}: {}",
                err(zero)
            );
        }
        for malformed in [
            "1h5", "h", "1hh", "1.h", "1..5h", "P", "PT", "1h 30", "ninety", "1e3s", "--5s",
        ] {
            assert!(
                err(malformed).contains("is not a duration"),
                "{malformed}: {}",
                err(malformed)
            );
        }
        // One line, naming the value as given.
        let e = err("5x");
        assert!(
            e.starts_with("\"5x\" is not a duration") && !e.contains('\n'),
            "{e}"
        );
    }

    #[test]
    fn hostile_durations_are_errors_not_panics() {
        let huge = [
            "9223372036854775807s",
            "9223372036854775808s",
            "170141183460469231731687303715884105728h",
            "99999999999h",
            "PT9223372036854775807S",
            "P99999999999999D",
            "1.9999999999999999999h",
            "PT1.99999999999H",
            "18446744073709551616",
        ];
        for t in huge {
            assert!(parse_duration(t).is_err(), "{t}");
        }
        assert!(
            parse_duration("99999999999h")
                .unwrap_err()
                .contains("longer than the 30 days")
        );
        // Whatever the length, one short line, and no work on the whole of it.
        for t in [
            "9".repeat(100_000),
            "1h".repeat(10_000),
            "\u{0}".repeat(100),
            "é".repeat(50),
        ] {
            let e = parse_duration(&t).unwrap_err();
            assert!(!e.contains('\n'), "{e}");
        }
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let alphabet = b"0123456789.,:hmsdwyPTHMSD -+ago";
        for _ in 0..20_000 {
            let len = (state % 20) as usize;
            let t: String = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize] as char
                })
                .collect();
            if let Ok(d) = parse_duration(&t) {
                assert!(
                    !d.is_zero() && d <= MAX_TIMEOUT && d.subsec_nanos() == 0,
                    "{t:?}"
                );
            }
        }
    }

    #[test]
    fn history_windows_parse() {
        let secs = |t: &str| parse_since(t).map(|d| d.as_secs());
        assert_eq!(secs("7d"), Ok(7 * 86_400));
        assert_eq!(secs("36h"), Ok(36 * 3600));
        assert_eq!(secs("2w"), Ok(14 * 86_400));
        assert_eq!(secs("90d"), Ok(90 * 86_400));
        assert_eq!(secs("600"), Ok(600));
        for bad in ["0", "-1d", "1mo", "soon", "3651d", ""] {
            assert!(parse_since(bad).is_err(), "{bad}");
        }
        let cli = Cli::try_parse_from(["vmctl", "history"]).unwrap();
        let Command::History(h) = cli.command else {
            panic!("not history")
        };
        assert_eq!((h.since.as_secs(), h.limit), (7 * 86_400, 50));
        assert!(
            Cli::try_parse_from(["vmctl", "history", "--failed", "--outcome", "aborted"]).is_err()
        );
    }

    #[test]
    fn node_selectors_parse() {
        let m = parse_node_selector("zone=b, disk=ssd").unwrap();
        assert_eq!(m.get("zone").map(String::as_str), Some("b"));
        assert_eq!(m.len(), 2);
        assert!(parse_node_selector("zone").is_err());
    }
}
