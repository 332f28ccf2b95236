//! `vmctl drain`: the plan, the checks, the cordon, the evictions and the follow to the end.
//!
//! gather (`evidence::drain_inputs`, the plan `plan-drain` makes; the pods on the nodes as
//! `kubectl drain` lists them) → decide (`policy::drain::evict::select_pods`, the plan's
//! verdict and shutdowns) → act (cordon, then evictions sent from the follower's tick) →
//! follow (`migration::follow::follow` with [`Draining`] as the observer: the watches' view
//! goes to `policy::drain::execute::DrainRun`, whose events `render::drain` shows) → the
//! summary. A failed migration gets `explain`'s diagnosis inline.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use k8s_openapi::jiff::Timestamp;
use serde_json::json;

use crate::cli::DrainArgs;
use crate::cluster::live::LiveSource;
use crate::cluster::{Kind, Query, list_as};
use crate::context::{AnySource, Context};
use crate::error::{Error, Result, exit};
use crate::migration::Mode;
use crate::migration::follow::{
    Ending, FollowSpec, Followed, Follower, Key, MetricsSource, Mirror, Observer, Stop, Update,
    follow, read_metrics, sample_from,
};
use crate::migration::kubevirt::KubeVirtDriver;
use crate::model::journal::RecordedBy;
use crate::model::{Pod, VirtualMachineInstanceMigration};
use crate::policy::drain::evict::{
    DaemonSetLookup, DaemonSets, PodFilters, PodSelection, daemonsets_to_read, for_good,
    read_answer, select_pods,
};
use crate::policy::drain::execute::{
    DrainRun, Event, MigrationSeen, Outcome, Settings, StuckSeen, VmSeen, VmStart, World,
    actions_of, predicted_targets,
};
use crate::policy::drain::{Action, DrainPlan, Verdict, VmiPlan};
use crate::render::drain::{DrainOutput, DrainResult, Summary};
use crate::render::{OutputFormat, stderr_line, stderr_text};
use crate::text::printable;

/// RFC 3339, now.
fn now() -> String {
    Timestamp::now().to_string()
}

/// What a shut-down VM does next, in words, from its VM's runStrategy.
fn comes_back(v: &VmiPlan) -> String {
    match (v.vm.as_deref(), v.run_strategy.as_deref()) {
        (None, _) => "does not come back (no VM owns it)".into(),
        (Some(_), Some("Always") | None) => "its VM starts it again elsewhere (runStrategy Always)".into(),
        (Some(_), Some("RerunOnFailure")) => {
            "its VM starts it again if KubeVirt counts the stop as a failure (runStrategy RerunOnFailure)".into()
        }
        (Some(_), Some(other)) => format!("does not come back (runStrategy {other})"),
    }
}

/// The pods on the nodes, listed the way kubectl drain lists them (`spec.nodeName=NODE`,
/// narrowed by `--pod-selector`).
async fn pods_on(ctx: &Context, args: &DrainArgs) -> Result<Vec<Pod>> {
    let mut pods = Vec::new();
    for node in &args.nodes {
        let mut q = Query::all().with_fields(&format!("spec.nodeName={node}"))?;
        if let Some(sel) = &args.pod_selector {
            q = q.with_label(sel)?;
        }
        pods.extend(list_as::<Pod>(&ctx.source, Kind::Pod, &q).await?);
    }
    Ok(pods)
}

/// kubectl drain reads the DaemonSet of each DaemonSet-managed pod (an orphan is refused, or
/// evicted with --force); a snapshot holds no DaemonSets: they are taken to exist.
async fn read_daemonsets(live: Option<&LiveSource>, pods: &[Pod]) -> DaemonSets {
    let mut out = DaemonSets::new();
    let Some(live) = live else {
        return out;
    };
    let driver = KubeVirtDriver::new(live);
    for (namespace, name) in daemonsets_to_read(pods) {
        let (status, message) = driver.daemonset_status(&namespace, &name).await;
        let seen = match status {
            200 => DaemonSetLookup::Exists,
            404 => DaemonSetLookup::NotFound(message),
            _ => DaemonSetLookup::Failed(message),
        };
        out.insert((namespace, name), seen);
    }
    out
}

/// Why the drain must not start; empty when it may.
/// The VMs whose launcher pods the drain evicts (all on the nodes, unless `--pod-selector`
/// leaves some out), as `namespace/name`.
fn selected_vms(selection: &PodSelection) -> HashSet<String> {
    selection
        .evict
        .iter()
        .filter_map(|p| p.vmi.as_ref().map(|v| format!("{}/{v}", p.namespace)))
        .collect()
}

fn refusals(args: &DrainArgs, plan: &DrainPlan, selection: &PodSelection) -> Vec<String> {
    let mut reasons = selection.errors.clone();
    let selected = selected_vms(selection);
    let blockers: Vec<String> = plan
        .blockers
        .iter()
        .filter(|b| b.blocking)
        .filter(|b| {
            b.vmis.iter().any(|v| selected.contains(v))
                || (b.kind == "vmi"
                    && selected.contains(&format!(
                        "{}/{}",
                        b.namespace.as_deref().unwrap_or_default(),
                        b.name
                    )))
        })
        .map(|b| format!("{} {}: {}", b.kind, b.name, b.reason))
        .collect();
    if plan.verdict == Verdict::WillBlock && !args.force_partial && !blockers.is_empty() {
        reasons.push(format!(
            "the plan says will-block ({}); --force-partial drains what can leave and lists the blockers at the end",
            blockers.join("; ")
        ));
    }
    reasons
}

/// The VMs the drain shuts down, one line each.
fn shutdown_lines(plan: &DrainPlan, selection: &PodSelection) -> Vec<String> {
    let selected = selected_vms(selection);
    plan.vmis
        .iter()
        .filter(|v| v.action.stops_the_vm() && selected.contains(&v.id()))
        .map(|v| format!("{} ({}): {}", v.id(), v.action.as_str(), comes_back(v)))
        .collect()
}

/// Reads the answer on the terminal; false on anything but yes.
fn confirm() -> bool {
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes")
}

/// The commands that resume or give up a drain. A VM caught in a loop (`loops`) comes first,
/// with the loop's own way out: resuming before it is ended only runs into it again.
fn resume_commands(
    args: &DrainArgs,
    migrating: &[(String, String, bool)],
    loops: &[(Key, StuckSeen)],
) -> Vec<String> {
    let mut out = Vec::new();
    for ((ns, vmi), l) in loops {
        // The loop's `stop_first` step (stop what keeps evicting the VM) is left out: this
        // drain has stopped already.
        for step in &l.way_out {
            out.push(format!(
                "first, vm {ns}/{vmi} ({}): {step}",
                l.kind.as_str()
            ));
        }
    }
    let mut again = if loops.is_empty() {
        format!("resume: vmctl drain {}", args.nodes.join(" "))
    } else {
        format!(
            "then, once the loop(s) above have ended, resume: vmctl drain {}",
            args.nodes.join(" ")
        )
    };
    for (flag, on) in [
        ("--ignore-daemonsets", args.ignore_daemonsets),
        ("--delete-emptydir-data", args.delete_emptydir_data),
        ("--force", args.force),
        ("--allow-shutdowns", args.allow_shutdowns),
        ("--force-partial", args.force_partial),
    ] {
        if on {
            again.push(' ');
            again.push_str(flag);
        }
    }
    if let Some(sel) = &args.pod_selector {
        again.push_str(&format!(" --pod-selector '{}'", sel.replace('\'', "'\\''")));
    }
    if let Some(g) = args.grace_period {
        again.push_str(&format!(" --grace-period {g}"));
    }
    if let Some(n) = args.max_parallel {
        again.push_str(&format!(" --max-parallel {n}"));
    }
    out.push(again);
    for node in &args.nodes {
        out.push(format!("give up: kubectl uncordon {node}"));
    }
    for (ns, vmi, evacuation) in migrating {
        // Not for a VM in a loop (its way out is above), nor for a migration that is no
        // evacuation (a decentralized one waiting for its peer, a manual one):
        // evacuate/cancel does not touch it.
        let looping = loops.iter().any(|((n, v), _)| n == ns && v == vmi);
        if looping || !evacuation {
            continue;
        }
        out.push(format!(
            "stop an evacuation: vmctl abort vm/{vmi} -n {ns} --evacuation"
        ));
    }
    out
}

/// Runs `vmctl drain`; the exit code.
pub async fn run(ctx: &'static Context, args: &DrainArgs) -> Result<i32> {
    let live = match &ctx.source {
        AnySource::Live(l) => Some(l),
        AnySource::Snapshot(_) if args.dry_run => None,
        AnySource::Snapshot(_) => {
            return Err(Error::usage(
                "drain changes a cluster: it cannot run on a snapshot (--from); --dry-run can",
            ));
        }
    };
    let out = DrainOutput::new(ctx.style, ctx.output, std::io::stdout().is_terminal());

    // ---- gather and decide
    let (inputs, plan) =
        crate::evidence::drain_plan(ctx, &args.nodes, args.bandwidth, args.loops.thresholds())
            .await?;
    let pods = pods_on(ctx, args).await?;
    let daemonsets = read_daemonsets(live, &pods).await;
    let selection = select_pods(
        &pods,
        PodFilters {
            ignore_daemonsets: args.ignore_daemonsets,
            delete_emptydir_data: args.delete_emptydir_data,
            force: args.force,
        },
        &daemonsets,
    );
    show_plan(ctx, &out, &plan, &selection)?;

    let mut reasons = refusals(args, &plan, &selection);
    let shutdowns = shutdown_lines(&plan, &selection);
    if !shutdowns.is_empty() && !args.allow_shutdowns {
        let ask = reasons.is_empty() && !args.dry_run;
        let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        // Nothing draws while the question waits for its answer: the live view starts
        // after it (and would be hidden if it had started).
        let reason = if ask && terminal {
            let yes = out.suspend(|| {
                stderr_text(&crate::render::drain::shutdown_question(&shutdowns));
                confirm()
            });
            (!yes).then(|| {
                format!(
                    "the drain shuts down {} VM(s) and the answer was not yes (--allow-shutdowns shuts them down without asking): {}",
                    shutdowns.len(),
                    shutdowns.join("; ")
                )
            })
        } else if ask {
            Some(format!(
                "the drain shuts down {} VM(s) and there is no terminal to ask on (stdin or stderr is not a terminal): pass --allow-shutdowns to shut them down: {}",
                shutdowns.len(),
                shutdowns.join("; ")
            ))
        } else {
            Some(format!(
                "the drain shuts down {} VM(s) and --allow-shutdowns was not given: {}",
                shutdowns.len(),
                shutdowns.join("; ")
            ))
        };
        reasons.extend(reason);
    }
    if !reasons.is_empty() {
        let summary = Summary {
            result: if args.dry_run {
                DrainResult::DryRun
            } else {
                DrainResult::Refused
            },
            nodes: args.nodes.clone(),
            account: Default::default(),
            resume: Vec::new(),
            reasons,
        };
        out.summary(&now(), &summary)?;
        return Ok(exit::FINDING);
    }

    if args.dry_run {
        for node in &args.nodes {
            out.doc(
                &now(),
                "would-cordon",
                json!({"node": node}),
                &format!("would cordon node/{}", printable(node)),
            )?;
        }
        let actions = actions_of(&plan);
        for p in &selection.evict {
            let action = p
                .vmi
                .as_ref()
                .and_then(|v| actions.get(&(p.namespace.clone(), v.clone())).copied());
            let what = match &p.vmi {
                // As the real run does: a VM no node can take is named, not evicted.
                Some(v) if action == Some(Action::NoTarget) && !p.finished => format!(
                    "would not evict pod {}/{} (vm {}: no-target: a blocker, not evicted)",
                    printable(&p.namespace),
                    printable(&p.name),
                    printable(v)
                ),
                Some(v) => format!(
                    "would evict pod {}/{} (vm {}: {})",
                    printable(&p.namespace),
                    printable(&p.name),
                    printable(v),
                    action.map_or("-", Action::as_str)
                ),
                None => format!(
                    "would evict pod {}/{}",
                    printable(&p.namespace),
                    printable(&p.name)
                ),
            };
            out.doc(
                &now(),
                "would-evict",
                json!({"namespace": p.namespace, "pod": p.name, "vmi": p.vmi}),
                &what,
            )?;
        }
        let summary = Summary {
            result: DrainResult::DryRun,
            nodes: args.nodes.clone(),
            account: Default::default(),
            resume: Vec::new(),
            reasons: Vec::new(),
        };
        out.summary(&now(), &summary)?;
        return Ok(exit::OK);
    }
    let Some(live) = live else {
        return Err(Error::Internal("no live cluster to drain".into()));
    };

    // ---- act: cordon, then evict and follow (the live view from here: every question
    // has been answered)
    out.start_live();
    let driver = KubeVirtDriver::new(live);
    for node in &args.nodes {
        let already = inputs
            .nodes
            .iter()
            .find(|n| crate::policy::scheduling::node_name(n) == node)
            .and_then(|n| n.spec.as_ref())
            .and_then(|s| s.unschedulable)
            .unwrap_or(false);
        if !already {
            driver.cordon(node).await?;
        }
        let line = if already {
            format!("node/{} already cordoned", printable(node))
        } else {
            format!("node/{} cordoned", printable(node))
        };
        out.doc(
            &now(),
            "cordoned",
            json!({"node": node, "alreadyCordoned": already}),
            &line,
        )?;
    }
    let mut run = DrainRun::new(
        &selection,
        &actions_of(&plan),
        Settings {
            max_parallel: args.max_parallel,
            give_up_after: args.loops.loop_failures,
            ..Settings::default()
        },
    )
    .with_predictions(&predicted_targets(&plan));
    // With --force-partial: a VM the plan knows cannot go anywhere is named now, not evicted;
    // so is one caught in a loop (an eviction of a VM in an evacuation loop marks it again).
    for v in &plan.vmis {
        let (reason, message) = match &v.stuck {
            Some(l) if l.blocks_drain() => (l.kind.as_str().to_string(), l.message()),
            _ if v.action == Action::NoTarget => (
                "no-target".to_string(),
                format!(
                    "{} (the plan: vmctl plan-drain; not evicted)",
                    v.explanation
                ),
            ),
            _ => continue,
        };
        for event in run.hold_back(&(v.namespace.clone(), v.name.clone()), &reason, &message) {
            out.event(&now(), &event, None)?;
        }
    }
    // Migrations already over when the drain started are history, not the drain's.
    let history: HashSet<Key> = inputs
        .vmims
        .iter()
        .filter(|m| m.is_final())
        .map(|m| (m.namespace().to_string(), m.name().to_string()))
        .collect();
    let kubevirt_namespace = inputs
        .kubevirt
        .as_ref()
        .and_then(|k| k.metadata.namespace.clone())
        .unwrap_or_else(|| "kubevirt".to_string());
    follow_drain(
        ctx,
        live,
        args,
        &out,
        run,
        history,
        kubevirt_namespace,
        inputs.pdbs.clone(),
    )
    .await
}

fn show_plan(
    ctx: &Context,
    out: &DrainOutput,
    plan: &DrainPlan,
    selection: &PodSelection,
) -> Result<()> {
    if !out.json {
        for line in crate::render::drain::pod_warnings(&selection.skipped, &selection.warnings) {
            stderr_line(&line);
        }
    }
    if out.json {
        let fields = json!({
            "nodes": plan.nodes,
            "verdict": plan.verdict,
            "estimatedDurationSeconds": plan.estimated_duration_seconds,
            "vmis": plan.vmis,
            "blockers": plan.blockers,
            "pods": selection.evict,
            "skipped": selection.skipped.iter().map(|(p, w)| json!({"pod": p, "why": w})).collect::<Vec<_>>(),
            "podWarnings": selection.warnings.iter().map(|(p, w)| json!({"pod": p, "why": w})).collect::<Vec<_>>(),
            "errors": selection.errors,
            "warnings": ctx.warnings(),
        });
        return out.doc(&now(), "plan", fields, "");
    }
    if !plan.vmis.is_empty() && selected_vms(selection).is_empty() {
        // --pod-selector left every VM's pod out: the VM plan is not this drain's.
        return crate::render::write_stdout(&crate::render::drain::no_vm_selected(plan.vmis.len()));
    }
    let table = crate::render::plan_drain::render_table(
        plan,
        ctx.style,
        ctx.output == OutputFormat::Wide,
        &ctx.now.to_string(),
        &ctx.source_description(),
    );
    crate::render::write_stdout(&format!("{table}\n"))
}

/// Follows the drain to its end: evictions from the tick, the watches' view into the run.
#[allow(clippy::too_many_arguments)]
async fn follow_drain(
    ctx: &'static Context,
    live: &LiveSource,
    args: &DrainArgs,
    out: &DrainOutput,
    run: DrainRun,
    history: HashSet<Key>,
    kubevirt_namespace: String,
    pdbs: Vec<crate::model::PodDisruptionBudget>,
) -> Result<i32> {
    let started = Instant::now();
    let pods = match args.nodes.as_slice() {
        [one] => Query::all().with_fields(&format!("spec.nodeName={one}"))?,
        // A field selector takes one node: with several, every pod (filtered here).
        _ => Query::all(),
    };
    let spec = FollowSpec::of(Query::all(), Query::all())
        .with_pods(pods, None)
        .with_tick(Duration::from_secs(1))
        .with_deadline(args.timeout.filter(|t| !t.is_zero()).map(|t| started + t));
    let mut follower = Follower::new(live, spec);
    let mut draining = Draining {
        ctx,
        driver: KubeVirtDriver::new(live),
        out,
        run,
        history,
        ready: BTreeSet::new(),
        started,
        grace: args.grace_period.filter(|g| *g >= 0),
        no_wait: args.no_wait,
        announced: HashSet::new(),
        streaming: Vec::new(),
        metrics: std::collections::HashMap::new(),
        kubevirt_namespace,
        last_metrics_ms: 0,
        began: false,
        last_progress: None,
        last_waits: BTreeMap::new(),
        last_counts: None,
        pdbs,
        loops: args.loops.thresholds(),
        journal: super::journal::RunJournal::of(ctx),
    };
    let ending = follow(&mut follower, &mut draining).await?;
    // Each move claimed is read back from the API before the summary says it.
    let mut now_vmis = std::collections::BTreeMap::new();
    let account = draining.run.account();
    for m in &account.moved {
        let fresh = crate::cluster::get_as::<crate::model::VirtualMachineInstance>(
            live,
            Kind::VirtualMachineInstance,
            Some(&m.namespace),
            &m.vmi,
        )
        .await
        .ok()
        .flatten()
        .map(|v| VmStart {
            node: v.status.node_name.clone(),
            uid: v.metadata.uid.clone(),
        });
        now_vmis.insert((m.namespace.clone(), m.vmi.clone()), fresh);
    }
    let account = DrainRun::confirmed(account, &now_vmis);
    let migrating: Vec<(String, String, bool)> = account
        .migrating
        .iter()
        // No way to stop a post-copy migration is offered: stopping it loses the guest.
        .filter(|m| !m.post_copy)
        .map(|m| (m.namespace.clone(), m.vmi.clone(), m.evacuation))
        .collect();
    let loops = draining.run.loops();
    let (result, code) = match ending {
        Ending::Done => match draining.run.outcome() {
            Some(Outcome::Drained) => (DrainResult::Drained, exit::OK),
            Some(Outcome::Blocked) => (DrainResult::Blocked, exit::FINDING),
            None => (DrainResult::HandedOff, exit::OK),
        },
        Ending::Stopped(Stop::Interrupted) => (DrainResult::Interrupted, exit::INTERRUPTED),
        Ending::Stopped(Stop::DeadlinePassed) => (DrainResult::Timeout, exit::TIMEOUT),
    };
    let resume = if result == DrainResult::Drained {
        Vec::new()
    } else {
        resume_commands(args, &migrating, &loops)
    };
    let summary = Summary {
        result,
        nodes: args.nodes.clone(),
        account,
        resume,
        reasons: Vec::new(),
    };
    out.summary(&now(), &summary)?;
    Ok(code)
}

/// The drain's observer: the watches' view goes to the run; the tick sends the evictions.
struct Draining<'a> {
    ctx: &'static Context,
    driver: KubeVirtDriver<'a>,
    out: &'a DrainOutput,
    run: DrainRun,
    /// VMIMs final before the drain started.
    history: HashSet<Key>,
    ready: BTreeSet<Kind>,
    started: Instant,
    grace: Option<i64>,
    no_wait: bool,
    /// Pods whose first eviction was shown.
    announced: HashSet<Key>,
    /// For the bars: the migrations streaming now (VMIM and VMI as last seen), where their
    /// metrics come from, and when they were last read.
    streaming: Vec<(
        Key,
        VirtualMachineInstanceMigration,
        crate::model::VirtualMachineInstance,
    )>,
    metrics: std::collections::HashMap<Key, MetricsSource>,
    kubevirt_namespace: String,
    last_metrics_ms: u64,
    /// The run knows where each VMI was when the drain began (from the watches' first
    /// list, right after the cordon, before any eviction).
    began: bool,
    /// The last progress shown (its words) and when (ms since the start).
    last_progress: Option<(String, u64)>,
    /// The waits last said, as lines (pod → reason and migration), to say only what changed.
    last_waits: BTreeMap<(String, String), (String, Option<String>)>,
    /// The numbers last said, off a terminal.
    last_counts: Option<crate::policy::drain::execute::Counts>,
    /// The PDBs as the plan read them: a 429 from one whose status never catches up is
    /// answered for good, not waited for.
    pdbs: Vec<crate::model::PodDisruptionBudget>,
    /// When a retry or a wait counts as a loop (`--loop-failures`, `--sync-timeout`, …).
    loops: crate::triage::LoopThresholds,
    /// Each migration's end goes to the journal (issue 28).
    journal: super::journal::RunJournal,
}

impl Draining<'_> {
    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn listed(&self) -> bool {
        self.ready.len() == 3
    }

    /// The drain's pods and VMs as the watches show them.
    fn world(&self, mirror: &Mirror) -> World {
        let mut world = World::default();
        for key in self.run.pod_keys() {
            if let Some(p) = mirror.pods.get(key) {
                let phase = p
                    .status
                    .as_ref()
                    .and_then(|s| s.phase.clone())
                    .unwrap_or_default();
                world.pods.insert(key.clone(), phase);
            }
        }
        for key in self.run.vm_keys() {
            let vmi = mirror.vmis.get(key);
            let newest = mirror
                .vmims_by_vmi
                .get(key)
                .into_iter()
                .flatten()
                .map(|name| (key.0.clone(), name.clone()))
                .filter(|k| !self.history.contains(k))
                .filter_map(|k| mirror.vmims.get(&k))
                .max_by(|a, b| {
                    (
                        a.metadata.creation_timestamp.as_ref().map(|t| t.0),
                        a.name(),
                    )
                        .cmp(&(
                            b.metadata.creation_timestamp.as_ref().map(|t| t.0),
                            b.name(),
                        ))
                });
            let migration = newest.map(|m| {
                let mut seen = seen_migration(m, vmi.map(|v| &**v));
                // Pending after failures: KubeVirt's backoff holds it (handleMigrationBackoff).
                if matches!(seen.phase.as_str(), "Pending" | "") {
                    let all: Vec<&VirtualMachineInstanceMigration> = mirror
                        .vmims_by_vmi
                        .get(key)
                        .into_iter()
                        .flatten()
                        .filter_map(|name| mirror.vmims.get(&(key.0.clone(), name.clone())))
                        .map(|m| &**m)
                        .collect();
                    if let Some(b) = crate::triage::migration_backoff(&all, m) {
                        seen.backoff_until = Some(b.until.to_string());
                        seen.backoff_seconds = Some(b.seconds);
                    }
                }
                seen
            });
            // Every migration of the VMI, those before the drain too: a loop may predate it.
            let all: Vec<&VirtualMachineInstanceMigration> = mirror
                .vmims_by_vmi
                .get(key)
                .into_iter()
                .flatten()
                .filter_map(|name| mirror.vmims.get(&(key.0.clone(), name.clone())))
                .map(|m| &**m)
                .collect();
            let stuck = crate::triage::loops::detect(
                &key.0,
                &key.1,
                vmi.map(|v| &**v),
                &all,
                Timestamp::now(),
                &self.loops,
            )
            .map(|l| StuckSeen {
                kind: l.kind,
                // The object whose field keeps the loop going, named exactly (issue 25 §4).
                message: l.message(),
                way_out: l.way_out.clone(),
            });
            world.vms.insert(
                key.clone(),
                VmSeen {
                    exists: vmi.is_some(),
                    uid: vmi.and_then(|v| v.metadata.uid.clone()),
                    node: vmi.and_then(|v| v.status.node_name.clone()),
                    phase: vmi
                        .and_then(|v| v.status.phase.as_ref())
                        .map(|p| p.as_str().to_string())
                        .unwrap_or_default(),
                    evacuation_node: vmi.and_then(|v| v.status.evacuation_node_name.clone()),
                    migration,
                    stuck,
                },
            );
        }
        world
    }

    /// A migration of the drain that succeeded goes to the journal (issue 28), its evidence
    /// from the watches (no request), as `vmctl record` makes it.
    async fn journal_success(&self, event: &Event, mirror: &Mirror) {
        let Event::Migration {
            namespace,
            migration,
            phase,
            ..
        } = event
        else {
            return;
        };
        if phase != "Succeeded" || !self.journal.enabled() {
            return;
        }
        let key = (namespace.clone(), migration.clone());
        let Some(vmim) = mirror.vmims.get(&key) else {
            return;
        };
        let ended = crate::migration::ended::Ended {
            key,
            vmim: VirtualMachineInstanceMigration::clone(vmim),
            deleted: false,
        };
        let evidence = crate::migration::ended::evidence_for(
            mirror,
            &ended,
            None,
            Timestamp::now(),
            self.loops,
        );
        let report = crate::triage::report::build_report(
            &evidence,
            false,
            &self.ctx.source_description(),
            Vec::new(),
        );
        self.journal
            .write_kubevirt(&evidence, &report, RecordedBy::Drain, None)
            .await;
    }

    /// Shows an event; a failed migration with the diagnosis `explain` gives.
    async fn show(&self, event: &Event, mirror: &Mirror) -> Result<()> {
        self.journal_success(event, mirror).await;
        let Event::MigrationFailed {
            namespace,
            vmi,
            migration,
            reason,
            failures,
            retry,
            give_up_after,
        } = event
        else {
            return self.out.event(&now(), event, None);
        };
        let last = mirror
            .vmims
            .get(&(namespace.clone(), migration.clone()))
            .map(|m| VirtualMachineInstanceMigration::clone(m));
        // The VMIM's watch can report the failure before the VMI's shows the reason: read
        // the VMI once more.
        let mut reason = reason.clone();
        if reason.is_none()
            && let Ok(Some(fresh)) = crate::cluster::get_as::<crate::model::VirtualMachineInstance>(
                self.driver.live(),
                Kind::VirtualMachineInstance,
                Some(namespace),
                vmi,
            )
            .await
        {
            reason = fresh
                .status
                .migration_state
                .as_ref()
                .filter(|s| {
                    s.migration_uid.is_some()
                        && s.migration_uid.as_deref() == last.as_ref().and_then(|m| m.uid())
                })
                .and_then(|s| s.failure_reason.clone());
        }
        let explained = super::migrate::diagnose_with_evidence(self.ctx, last.as_ref(), vmi).await;
        if let Some((evidence, report)) = &explained {
            self.journal
                .write_kubevirt(evidence, report, RecordedBy::Drain, None)
                .await;
        }
        let diagnosis = explained.map(|(_, r)| r.diagnosis);
        let event = Event::MigrationFailed {
            namespace: namespace.clone(),
            vmi: vmi.clone(),
            migration: migration.clone(),
            reason,
            failures: *failures,
            retry: *retry,
            give_up_after: *give_up_after,
        };
        self.out.event(&now(), &event, diagnosis.as_ref())
    }
}

impl Draining<'_> {
    /// The bars' data: virt-handler's metrics for each streaming migration, every 2 s.
    async fn read_progress(&mut self) {
        let now_ms = self.now_ms();
        if !self.out.has_bars() || now_ms < self.last_metrics_ms + 2000 {
            return;
        }
        self.last_metrics_ms = now_ms;
        for (key, vmim, vmi) in std::mem::take(&mut self.streaming) {
            let source =
                self.metrics
                    .entry(key.clone())
                    .or_insert_with(|| MetricsSource::Handler {
                        kubevirt_namespace: self.kubevirt_namespace.clone(),
                        pod: None,
                    });
            let followed = Followed {
                vmim: Some(vmim.clone()),
                vmi: Some(vmi.clone()),
                ..Followed::default()
            };
            if let Ok(m) = read_metrics(&self.driver, source, &followed, &key.0, &key.1).await
                && !m.is_empty()
            {
                let sample = sample_from(&m, now_ms, Mode::PreCopy);
                self.out.sample(&key.0, &key.1, &sample);
            }
            self.streaming.push((key, vmim, vmi));
        }
        self.show_totals();
    }

    /// The live view's last line: the numbers, each on its own, and what the drain waits
    /// for. No ETA: how long KubeVirt takes is not known before it is done.
    fn show_totals(&self) {
        let elapsed = self.started.elapsed().as_secs();
        self.out.totals(&crate::render::drain::totals_line(
            &self.run.counts(),
            &self.run.waiting_for(),
            elapsed,
        ));
    }

    /// The progress (numbers and what is waited for) as lines or a JSON event, when it
    /// changed, and every 30 s while it does not.
    fn show_progress(&mut self) -> Result<()> {
        let event = self.run.progress();
        let Event::Progress {
            counts,
            waiting_for,
        } = &event
        else {
            return Ok(());
        };
        // What is waited for and why, and the numbers (not the clock in the messages).
        let words = format!(
            "{counts:?}{:?}",
            waiting_for
                .iter()
                .map(|w| (&w.pod, &w.reason, &w.migration))
                .collect::<Vec<_>>()
        );
        let now_ms = self.now_ms();
        let due = match &self.last_progress {
            None => true,
            Some((last, at)) => *last != words || now_ms >= at + 30_000,
        };
        if !due || (waiting_for.is_empty() && self.run.outcome().is_some()) {
            return Ok(());
        }
        let changed = self
            .last_progress
            .as_ref()
            .is_none_or(|(last, _)| *last != words);
        self.last_progress = Some((words, now_ms));
        if self.out.json {
            return self.out.event(&now(), &event, None);
        }
        // As lines: a wait is said when it begins or its reason changes, not again on every
        // change of the numbers; on a terminal the numbers are the live view's last line,
        // off one they are a line when they change, and a short line every 30 s says what
        // is still waited for.
        let waits: BTreeMap<(String, String), (String, Option<String>)> = waiting_for
            .iter()
            .map(|w| {
                (
                    (w.namespace.clone(), w.pod.clone()),
                    (w.reason.clone(), w.migration.clone()),
                )
            })
            .collect();
        let new_waits: Vec<crate::policy::drain::execute::Wait> = waiting_for
            .iter()
            .filter(|w| {
                self.last_waits.get(&(w.namespace.clone(), w.pod.clone()))
                    != Some(&(w.reason.clone(), w.migration.clone()))
            })
            .cloned()
            .collect();
        let counts_changed = self.last_counts.as_ref() != Some(counts);
        let mut lines = Vec::new();
        if !self.out.has_bars() && counts_changed {
            lines.push(crate::render::drain::counts_line(counts));
        }
        lines.extend(crate::render::drain::wait_lines(&new_waits));
        if !changed && !self.out.has_bars() {
            lines.push(crate::render::drain::still_waiting_line(waiting_for));
        }
        self.last_waits = waits;
        self.last_counts = Some(counts.clone());
        self.out.text_lines(&now(), &lines)
    }
}

/// A VMIM as the drain reads it, with its VMI's migration state when it is this one's.
fn seen_migration(
    m: &VirtualMachineInstanceMigration,
    vmi: Option<&crate::model::VirtualMachineInstance>,
) -> MigrationSeen {
    let state = vmi
        .and_then(|v| v.status.migration_state.as_ref())
        .filter(|s| s.migration_uid.is_some() && s.migration_uid.as_deref() == m.uid())
        .or(m.status.migration_state.as_ref());
    // As loops.rs reads it: the VMI's state first, then the VMIM's copy (the VMI's watch may
    // still show the attempt running when the VMIM's reports its failure), then a condition.
    let failure = crate::triage::loops::failure_of(vmi, m);
    MigrationSeen {
        name: m.name().to_string(),
        phase: m.phase().as_str().to_string(),
        source_node: state.and_then(|s| s.source_node.clone()),
        target_node: state.and_then(|s| s.target_node.clone()),
        source_pod: state.and_then(|s| s.source_pod.clone()),
        target_pod: state.and_then(|s| s.target_pod.clone()),
        mode: state
            .and_then(|s| s.mode.as_ref())
            .map(|m| m.as_str().to_string()),
        failure,
        evacuation: m.evacuation_node().is_some(),
        backoff_until: None,
        backoff_seconds: None,
    }
}

impl Observer for Draining<'_> {
    fn update(&mut self, update: &Update) {
        if let Update::Changed { kind, listed: true } = update {
            self.ready.insert(*kind);
        }
        if let Update::Reconnecting(r) = update {
            stderr_line(&crate::render::follow::reconnecting(
                &Timestamp::now().strftime("%H:%M:%S").to_string(),
                r,
            ));
        }
    }

    async fn settle(&mut self, mirror: &Mirror) -> Result<bool> {
        if !self.listed() {
            return Ok(false);
        }
        if !self.began {
            // Where each VMI runs as the drain begins, from the API: only one that was on
            // a drained node can have moved from it.
            self.began = true;
            let start = self
                .run
                .vm_keys()
                .map(|key| {
                    let vmi = mirror.vmis.get(key);
                    (
                        key.clone(),
                        VmStart {
                            node: vmi.and_then(|v| v.status.node_name.clone()),
                            uid: vmi.and_then(|v| v.metadata.uid.clone()),
                        },
                    )
                })
                .collect();
            self.run.starting_from(&start);
        }
        let world = self.world(mirror);
        let now_ms = self.now_ms();
        for event in self.run.observe(&world, now_ms) {
            self.show(&event, mirror).await?;
        }
        self.show_progress()?;
        if self.out.has_bars() {
            self.streaming = world
                .vms
                .iter()
                .filter_map(|(key, seen)| {
                    let m = seen.migration.as_ref().filter(|m| m.phase == "Running")?;
                    let vmim = mirror.vmims.get(&(key.0.clone(), m.name.clone()))?;
                    let vmi = mirror.vmis.get(key)?;
                    Some((
                        key.clone(),
                        VirtualMachineInstanceMigration::clone(vmim),
                        crate::model::VirtualMachineInstance::clone(vmi),
                    ))
                })
                .collect();
            self.show_totals();
        }
        Ok(self.run.outcome().is_some() || (self.no_wait && self.run.handed_off()))
    }

    async fn tick(&mut self) -> Result<()> {
        if !self.listed() || !self.began {
            return Ok(());
        }
        for pod in self.run.due(self.now_ms()) {
            let key = pod.key();
            if self.announced.insert(key.clone()) {
                self.out.event(
                    &now(),
                    &Event::Evicting {
                        namespace: pod.namespace.clone(),
                        pod: pod.name.clone(),
                        vmi: pod.vmi.clone(),
                    },
                    None,
                )?;
            }
            let reply = self
                .driver
                .evict(&pod.namespace, &pod.name, self.grace)
                .await?;
            let answer = read_answer(reply.status, &reply.message, &reply.causes);
            let answer = for_good(answer, &pod.namespace, &self.pdbs);
            let now_ms = self.now_ms();
            for event in self.run.answered(&key, &answer, now_ms) {
                self.out.event(&now(), &event, None)?;
            }
        }
        self.show_progress()?;
        self.read_progress().await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain_args(line: &[&str]) -> DrainArgs {
        use clap::Parser;
        match crate::cli::Cli::try_parse_from(line).unwrap_or_else(|e| panic!("{e}")) {
            crate::cli::Cli {
                command: crate::cli::Command::Drain(a),
                ..
            } => a,
            _ => panic!("not a drain"),
        }
    }

    /// `evacuate/cancel` (pkg/virt-api/rest/evacuate_cancel.go, kubevirt/kubevirt) clears an
    /// evacuation only: the line is offered for an evacuated VM, never for a migration that
    /// is none (a decentralized one waiting for its peer, whatever its phase), nor for a VM
    /// in a loop, whose own way out comes first, without its "stop the drain" step.
    #[test]
    fn resume_offers_to_cancel_evacuations_only_and_a_loops_way_out_after_the_drain() {
        let args = drain_args(&["vmctl", "drain", "node-1", "--ignore-daemonsets"]);
        let migrating = vec![
            ("prod".to_string(), "web-01".to_string(), true),
            ("prod".to_string(), "peer-01".to_string(), false),
            ("prod".to_string(), "db-01".to_string(), true),
        ];
        let loops = vec![(
            ("prod".to_string(), "db-01".to_string()),
            StuckSeen {
                kind: crate::triage::loops::LoopKind::EvacuationLoop,
                message: String::new(),
                way_out: vec!["vmctl abort --evacuation vm/db-01 -n prod".into()],
            },
        )];
        let out = resume_commands(&args, &migrating, &loops);
        assert_eq!(
            out,
            vec![
                "first, vm prod/db-01 (evacuation-loop): vmctl abort --evacuation vm/db-01 -n prod",
                "then, once the loop(s) above have ended, resume: vmctl drain node-1 --ignore-daemonsets",
                "give up: kubectl uncordon node-1",
                "stop an evacuation: vmctl abort vm/web-01 -n prod --evacuation",
            ]
        );
    }

    /// The VMI's watch still shows the attempt running (its migrationState names the VMIM,
    /// without a failureReason) while the VMIM's already failed: the reason comes from the
    /// VMIM's copy (migration.go copies the VMI's state into the VMIM on completion), as
    /// loops.rs reads it, never "no reason recorded". Text: harvester#7965.
    #[test]
    fn a_failure_is_read_from_the_vmim_while_the_vmis_watch_lags() {
        let reason = "Live migration failed error encountered during MigrateToURI3 libvirt api call: virError(Code=9, Domain=31, Message='operation failed: guest CPU doesn't match specification: missing features: vmx-exit-load-perf-global-ctrl,vmx-entry-load-perf-global-ctrl')";
        let m: VirtualMachineInstanceMigration = serde_json::from_value(json!({
            "metadata": {"name": "kubevirt-evacuation-e3", "namespace": "prod", "uid": "uid-e3",
                "annotations": {"kubevirt.io/evacuationMigration": "node-1"}},
            "spec": {"vmiName": "web-01"},
            "status": {"phase": "Failed",
                "migrationState": {"migrationUid": "uid-e3", "completed": true, "failed": true,
                    "failureReason": reason}}
        }))
        .unwrap();
        let vmi: crate::model::VirtualMachineInstance = serde_json::from_value(json!({
            "metadata": {"name": "web-01", "namespace": "prod", "uid": "vmi-uid"},
            "status": {"nodeName": "node-1", "phase": "Running", "evacuationNodeName": "node-1",
                "migrationState": {"migrationUid": "uid-e3", "sourceNode": "node-1",
                    "targetNode": "node-2", "completed": false}}
        }))
        .unwrap();
        let seen = seen_migration(&m, Some(&vmi));
        assert_eq!(seen.failure.as_deref(), Some(reason));
        // The VMI's own state still gives the nodes.
        assert_eq!(seen.target_node.as_deref(), Some("node-2"));
        assert!(seen.evacuation);
    }
}
