//! `vmctl top`, the doing: the full-screen loop. The frame comes from the follower
//! `status --watch` uses (`migration::follow`: one LIST per kind, then watches, a local
//! [`Mirror`]); `--from` fills the same mirror from the snapshot once. Each frame runs
//! `status::build_report` on the VMIs that matter (migrations in flight, evacuations,
//! failures: O(those), not O(VMIs) for the report), then `policy::top::build_model`; keys go
//! through the pure reducer `policy::top::on_key`, and its actions (explain, abort) are done
//! here.
//!
//! The terminal is restored on every way out: a guard leaves raw mode and the alternate
//! screen on drop (a return, an error such as a watch that gave up, `q`, Ctrl-C which is a
//! key in raw mode, SIGINT, SIGTERM), and a panic hook restores it before the panic is
//! printed.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Stdout;
use std::time::Duration;

use crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::time::Instant;

use crate::cluster::live::LiveSource;
use crate::cluster::watch::{Boxed, Change};
use crate::cluster::{Kind, Query, list_as};
use crate::context::Context;
use crate::error::{Error, Result, exit};
use crate::migration::follow::{FollowSpec, Follower, Key as MKey, Mirror, Stop, Update};
use crate::migration::kubevirt::KubeVirtDriver;
use crate::migration::kubevirt_metrics;
use crate::model::{KubeVirt, Node, Pod, VirtualMachineInstance, VirtualMachineInstanceMigration};
use crate::names::Target;
use crate::policy::abort::{Decision, decide};
use crate::policy::status::{StatusInputs, build_report};
use crate::policy::top::{
    Action, ExplainTarget, Key, Rates, TopModel, TopState, apply_rates, build_model, on_key,
};
use crate::render::glyphs::Charset;
use crate::render::top::{View, draw};
use crate::triage::LoopThresholds;

/// A frame at most this often while things change.
const REDRAW_EVERY: Duration = Duration::from_millis(100);
/// Elapsed times move on this often.
const TICK: Duration = Duration::from_secs(1);

/// What `top` runs on.
pub enum Feed<'a> {
    /// Watches on a live cluster.
    Live(&'a LiveSource, Box<FollowSpec>),
    /// A snapshot (`--from`): one frame, read-only.
    Snapshot,
}

pub struct Options {
    pub dry_run: bool,
    /// Read virt-handler's /metrics of each source node (pod proxy) for progress, dirty rate
    /// and ETA.
    pub metrics: bool,
    pub loops: LoopThresholds,
    pub charset: Charset,
    pub color: bool,
}

fn scope_words(ctx: &Context) -> String {
    match ctx.scope.namespace() {
        Some(ns) => format!("namespace {ns}"),
        None => "all namespaces".into(),
    }
}

// ---------------------------------------------------------------- the frame

/// The inputs of `build_report` for what the console shows: the VMIs with a migration in
/// flight (as `status --watch`), plus those marked for evacuation and those whose last
/// migration failed or that failed themselves, with their migrations and launcher pods.
pub fn frame_inputs(
    mirror: &Mirror,
    kubevirt: Option<KubeVirt>,
    loops: LoopThresholds,
) -> StatusInputs {
    Copies::default().inputs(mirror, kubevirt, loops)
}

/// What one frame reads from the mirror, by key: the VMIs [`frame_inputs`] selects, their
/// migrations (all of them: finished ones count for loops) and launcher pods.
fn frame_keys(mirror: &Mirror) -> (Vec<MKey>, Vec<MKey>, Vec<MKey>) {
    // The VMIs shown: those in flight (a few hundred, looked up by key), then one pass over
    // every VMI for the marks a field tells (no lookup per VMI: at 10,000 VMIs a search per
    // VMI was most of a frame's cost).
    let mut chosen: Vec<(&MKey, &VirtualMachineInstance, bool)> = mirror
        .active_vmims
        .keys()
        .chain(mirror.migrating_vmis.iter())
        .filter_map(|k| mirror.vmis.get_key_value(k))
        .map(|(k, v)| (k, &**v, true))
        .collect();
    // A cordoned node's VMIs (those still on it, and those an evacuation moved off it).
    let cordoned = mirror.cordoned();
    let evacuated_from_cordoned: BTreeSet<(&str, &str)> = mirror
        .vmims
        .values()
        .filter(|m| m.evacuation_node().is_some_and(|n| cordoned.contains(n)))
        .map(|m| (m.namespace(), m.spec.vmi_name.as_str()))
        .collect();
    chosen.extend(mirror.vmis.iter().filter_map(|(key, vmi)| {
        let failed_last = vmi
            .status
            .migration_state
            .as_ref()
            .is_some_and(|s| s.completed && s.failed);
        let failed = vmi.status.phase == Some(crate::model::vmi::VmiPhase::Failed);
        let on_cordoned = vmi
            .status
            .node_name
            .as_deref()
            .is_some_and(|n| cordoned.contains(n))
            || evacuated_from_cordoned.contains(&(key.0.as_str(), key.1.as_str()));
        (vmi.evacuation_node().is_some() || failed_last || failed || on_cordoned)
            .then_some((key, &**vmi, false))
    }));
    // One entry per VMI, in flight first where it is both.
    chosen.sort_unstable_by(|a, b| a.0.cmp(b.0).then(b.2.cmp(&a.2)));
    chosen.dedup_by(|a, b| a.0 == b.0);
    let (mut vmis, mut vmims, mut pods) = (Vec::new(), Vec::new(), Vec::new());
    for (key, vmi, flying) in chosen {
        let ns = &key.0;
        vmis.push(key.clone());
        for name in mirror.vmims_by_vmi.get(key).into_iter().flatten() {
            let k = (ns.clone(), name.clone());
            if flying
                && let Some(m) = mirror.vmims.get(&k).filter(|m| !m.is_final())
                && let Some(uid) = m.uid()
            {
                for pod in mirror
                    .pods_by_job
                    .get(&(ns.clone(), uid.to_string()))
                    .into_iter()
                    .flatten()
                {
                    pods.push((ns.clone(), pod.clone()));
                }
            }
            if mirror.vmims.contains_key(&k) {
                vmims.push(k);
            }
        }
        if let Some(uid) = vmi.uid() {
            for pod in mirror
                .pods_by_creator
                .get(&(ns.clone(), uid.to_string()))
                .into_iter()
                .flatten()
            {
                pods.push((ns.clone(), pod.clone()));
            }
        }
        if flying {
            for pod_uid in vmi.status.active_pods.keys() {
                if let Some(k) = mirror.pods_by_uid.get(pod_uid) {
                    pods.push(k.clone());
                }
            }
        }
    }
    // vmis are sorted and distinct already; a VMIM belongs to one VMI; a pod may be reached
    // twice (its creator and its migration job): the same order as the sets gave before.
    vmims.sort_unstable();
    pods.sort_unstable();
    pods.dedup();
    pods.retain(|k| mirror.pods.contains_key(k));
    (vmis, vmims, pods)
}

/// The copies of the objects the last frame read, kept for the next: an object whose
/// resourceVersion did not change is moved back instead of copied again, so a frame costs
/// the objects that changed, not the migrations in flight.
#[derive(Default)]
pub struct Copies {
    vmis: HashMap<MKey, VirtualMachineInstance>,
    vmims: HashMap<MKey, VirtualMachineInstanceMigration>,
    pods: HashMap<MKey, Pod>,
}

fn reuse<T: Clone>(
    cache: &mut HashMap<MKey, T>,
    key: &MKey,
    current: &T,
    meta: fn(&T) -> &crate::model::ObjectMeta,
) -> T {
    match cache.remove(key) {
        Some(old)
            if meta(&old).resource_version.is_some()
                && meta(&old).resource_version == meta(current).resource_version =>
        {
            old
        }
        _ => current.clone(),
    }
}

impl Copies {
    /// The same inputs as [`frame_inputs`], from the copies where they are current.
    pub fn inputs(
        &mut self,
        mirror: &Mirror,
        kubevirt: Option<KubeVirt>,
        loops: LoopThresholds,
    ) -> StatusInputs {
        let (vmis, vmims, pods) = frame_keys(mirror);
        let mut inputs = StatusInputs {
            vmis: Vec::with_capacity(vmis.len()),
            vmims: Vec::with_capacity(vmims.len()),
            pods: Vec::with_capacity(pods.len()),
            kubevirt,
            loops,
            nodes: node_facts(mirror),
        };
        for k in &vmis {
            if let Some(v) = mirror.vmis.get(k) {
                inputs
                    .vmis
                    .push(reuse(&mut self.vmis, k, v, |v| &v.metadata));
            }
        }
        for k in &vmims {
            if let Some(m) = mirror.vmims.get(k) {
                inputs
                    .vmims
                    .push(reuse(&mut self.vmims, k, m, |m| &m.metadata));
            }
        }
        for k in &pods {
            if let Some(p) = mirror.pods.get(k) {
                inputs
                    .pods
                    .push(reuse(&mut self.pods, k, p, |p| &p.metadata));
            }
        }
        inputs
    }

    /// Keeps the frame's objects for the next one (and only those).
    pub fn keep(&mut self, inputs: StatusInputs) {
        let key = |m: &crate::model::ObjectMeta| crate::migration::follow::key_of(m);
        self.vmis = inputs
            .vmis
            .into_iter()
            .map(|v| (key(&v.metadata), v))
            .collect();
        self.vmims = inputs
            .vmims
            .into_iter()
            .map(|v| (key(&v.metadata), v))
            .collect();
        self.pods = inputs
            .pods
            .into_iter()
            .map(|v| (key(&v.metadata), v))
            .collect();
    }
}

/// The cordoned nodes the mirror holds, for `build_report`.
pub fn node_facts(mirror: &Mirror) -> Vec<crate::policy::status::NodeFacts> {
    mirror
        .cordoned()
        .into_iter()
        .map(|name| crate::policy::status::NodeFacts {
            name: name.to_string(),
            cordoned: true,
        })
        .collect()
}

/// One frame's model.
pub fn model_of(
    mirror: &Mirror,
    kubevirt: Option<KubeVirt>,
    loops: LoopThresholds,
    now: Timestamp,
    source: &str,
    scope: &str,
    cordoned: &[String],
) -> TopModel {
    let inputs = frame_inputs(mirror, kubevirt, loops);
    let report = build_report(&inputs, now, source);
    build_model(&report, scope, cordoned)
}

/// `--from`: the snapshot's VMIs, migrations and launcher pods in a mirror (as if listed
/// by the watches), its KubeVirt CR, and its unschedulable nodes.
pub async fn snapshot_mirror(ctx: &Context) -> Result<(Mirror, Option<KubeVirt>, Vec<String>)> {
    let scope = ctx.scope.query();
    let pods_q = scope.clone().with_label(&format!(
        "{}={}",
        crate::policy::pods::LAUNCHER_LABEL,
        crate::policy::pods::LAUNCHER_VALUE
    ))?;
    let all = Query::all();
    let (vmis, vmims, pods, kubevirts, nodes) = tokio::try_join!(
        list_as::<VirtualMachineInstance>(&ctx.source, Kind::VirtualMachineInstance, &scope),
        list_as::<VirtualMachineInstanceMigration>(
            &ctx.source,
            Kind::VirtualMachineInstanceMigration,
            &scope
        ),
        list_as::<Pod>(&ctx.source, Kind::Pod, &pods_q),
        list_as::<KubeVirt>(&ctx.source, Kind::KubeVirt, &all),
        list_as::<Node>(&ctx.source, Kind::Node, &all),
    )?;
    let mut mirror = Mirror::default();
    let boxed = |v: Vec<_>| v.into_iter().map(|x| Boxed(Box::new(x))).collect();
    mirror.apply_vmis(Change::Listed(boxed(vmis)));
    mirror.apply_vmims(Change::Listed(
        vmims.into_iter().map(|x| Boxed(Box::new(x))).collect(),
    ));
    mirror.apply_pods(Change::Listed(
        pods.into_iter().map(|x| Boxed(Box::new(x))).collect(),
    ));
    mirror.apply_nodes(Change::Listed(
        nodes.into_iter().map(|x| Boxed(Box::new(x))).collect(),
    ));
    // The cordoned nodes reach the model through the report (`NodeFacts` in the mirror).
    Ok((mirror, kubevirts.into_iter().next(), Vec::new()))
}

// ---------------------------------------------------------------- --metrics

/// `--metrics`: every [`METRICS_EVERY`], the /metrics page of virt-handler on each node a
/// Running migration streams from (one GET per node; the handler pod is found once per node
/// with one LIST), read for those migrations' data remaining, dirty and transfer rates.
#[derive(Default)]
struct Metrics {
    handlers: HashMap<String, String>,
    rates: HashMap<(String, String), Rates>,
    last: Option<Instant>,
    /// Why a node's page could not be read (shown under the header).
    notes: Vec<String>,
}

const METRICS_EVERY: Duration = Duration::from_secs(2);

impl Metrics {
    fn due(&self) -> bool {
        self.last.is_none_or(|t| t.elapsed() >= METRICS_EVERY)
    }

    async fn refresh(&mut self, live: &LiveSource, kubevirt_namespace: &str, model: &TopModel) {
        self.last = Some(Instant::now());
        let mut by_node: BTreeMap<&str, Vec<&crate::policy::top::MigrationLine>> = BTreeMap::new();
        for m in model.migrations.iter().filter(|m| m.phase == "Running") {
            if let Some(node) = m.source_node.as_deref() {
                by_node.entry(node).or_default().push(m);
            }
        }
        let driver = KubeVirtDriver::new(live);
        let mut rates = HashMap::new();
        let mut notes = Vec::new();
        for (node, lines) in by_node {
            let pod = match self.handlers.get(node) {
                Some(p) => p.clone(),
                None => match driver.handler_pod(kubevirt_namespace, node).await {
                    Ok(p) => {
                        self.handlers.insert(node.to_string(), p.clone());
                        p
                    }
                    Err(e) => {
                        notes.push(format!("metrics of {node} not read: {}", e.0));
                        continue;
                    }
                },
            };
            match driver.handler_page(kubevirt_namespace, &pod).await {
                Ok(text) => {
                    for m in lines {
                        let read = kubevirt_metrics::from_exposition(&text, &m.namespace, &m.vmi);
                        if !read.is_empty() {
                            rates.insert(
                                (m.namespace.clone(), m.name.clone()),
                                Rates {
                                    remaining_bytes: read.remaining_bytes,
                                    processed_bytes: read.processed_bytes,
                                    total_bytes: read.total_bytes,
                                    dirty_bps: read.dirty_rate_bytes_per_second,
                                    transfer_bps: read.transfer_rate_bytes_per_second,
                                },
                            );
                        }
                    }
                }
                Err(e) => {
                    // Found again next time (the pod may have been replaced).
                    self.handlers.remove(node);
                    notes.push(format!("metrics of {node} not read: {}", e.0));
                }
            }
        }
        self.rates = rates;
        self.notes = notes;
    }
}

// ---------------------------------------------------------------- the terminal

type Term = Terminal<CrosstermBackend<Stdout>>;

fn restore_terminal() {
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = crossterm::execute!(
        std::io::stdout(),
        crossterm::terminal::LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// Raw mode and the alternate screen while it lives; restored on drop (and by the panic
/// hook it installs, before the panic is printed).
struct TerminalGuard {
    terminal: Term,
}

fn term_error(e: std::io::Error) -> Error {
    Error::Internal(format!("the terminal: {e}"))
}

impl TerminalGuard {
    fn enter() -> Result<TerminalGuard> {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore_terminal();
            previous(info);
        }));
        crossterm::terminal::enable_raw_mode().map_err(term_error)?;
        let guard_now = TerminalGuard::leave_on_error();
        crossterm::execute!(
            std::io::stdout(),
            crossterm::terminal::EnterAlternateScreen,
            crossterm::cursor::Hide
        )
        .map_err(term_error)?;
        let terminal =
            Terminal::new(CrosstermBackend::new(std::io::stdout())).map_err(term_error)?;
        std::mem::forget(guard_now);
        Ok(TerminalGuard { terminal })
    }

    /// Restores if `enter` fails half-way.
    fn leave_on_error() -> impl Drop {
        struct Undo;
        impl Drop for Undo {
            fn drop(&mut self) {
                restore_terminal();
            }
        }
        Undo
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// A terminal key as the reducer's key.
pub fn key_of(k: &KeyEvent) -> Option<Key> {
    if k.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
    Some(match k.code {
        KeyCode::Char('c') | KeyCode::Char('C') if ctrl => Key::CtrlC,
        KeyCode::Char(_) if ctrl => return None,
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        KeyCode::Tab => Key::Tab,
        KeyCode::BackTab => Key::BackTab,
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Backspace => Key::Backspace,
        _ => return None,
    })
}

// ---------------------------------------------------------------- actions

/// The explain text of one VM (as `vmctl explain` prints it, without colour).
pub async fn explain_text(ctx: &Context, mirror: &Mirror, t: &ExplainTarget) -> String {
    let mut notes = Vec::new();
    let last_seen = t
        .migration
        .as_ref()
        .and_then(|m| mirror.vmim_last(&(t.namespace.clone(), m.clone())));
    let evidence = match last_seen {
        Some(m) => crate::evidence::evidence_for_migration(ctx, m, &t.vmi, &mut notes).await,
        None => match crate::evidence::resolve(ctx, &Target::Vmi(t.vmi.clone())).await {
            Ok(resolved) => crate::evidence::gather(ctx, resolved, &mut notes).await,
            Err(e) => Err(e),
        },
    };
    match evidence {
        Ok(mut evidence) => {
            evidence.loops = LoopThresholds::default();
            let report = crate::triage::report::build_report(
                &evidence,
                false,
                &ctx.source_description(),
                notes,
            );
            crate::render::explain::render_table(
                &report,
                crate::render::Style { color: false },
                false,
                ctx.clock.note(),
            )
        }
        Err(e) => format!("explain {}/{}: {e}", t.namespace, t.vmi),
    }
}

/// `a` then `y`: the decision of `vmctl abort` on what the watches see now, then the DELETE
/// (or, with --dry-run, what it would be). One line for the footer.
async fn abort_line(
    live: Option<&LiveSource>,
    mirror: &Mirror,
    t: &crate::policy::top::AbortTarget,
    dry_run: bool,
) -> String {
    let Some(live) = live else {
        return format!(
            "abort refused: {}/{} is read from a snapshot (--from), which is read-only",
            t.namespace, t.migration
        );
    };
    let vmim = mirror
        .vmims
        .get(&(t.namespace.clone(), t.migration.clone()));
    let vmi = mirror.vmis.get(&(t.namespace.clone(), t.vmi.clone()));
    let id = format!("{}/{}", t.namespace, t.migration);
    match decide(vmim.map(|b| &**b), vmi.map(|b| &**b)) {
        Decision::Nothing { .. } => format!("abort: {id} is no longer in flight"),
        Decision::RefusePostCopy {
            source_node,
            target_node,
            ..
        } => format!(
            "abort refused: {id} is in post-copy from {} to {}, the point of no return: aborting would lose the guest",
            source_node.as_deref().unwrap_or("?"),
            target_node.as_deref().unwrap_or("?")
        ),
        Decision::Abort(plan) => {
            let again = match &plan.recreated_by {
                Some(crate::policy::abort::Recreator::Evacuation(node)) => {
                    format!("; the evacuation of {node} will create a new migration")
                }
                Some(crate::policy::abort::Recreator::WorkloadUpdate) => {
                    "; the workload updater will create a new migration".into()
                }
                None => String::new(),
            };
            if dry_run {
                return format!(
                    "dry run: would delete VirtualMachineInstanceMigration {id} (phase {}){again}",
                    plan.phase.as_str()
                );
            }
            // Annotated first, like `vmctl abort`: the diagnosis then says vmctl asked.
            match KubeVirtDriver::new(live)
                .abort_vmim(&t.namespace, &t.migration, "vmctl top")
                .await
            {
                Ok(true) => format!(
                    "abort requested: deleted {id} (phase {}); KubeVirt cancels it{again}",
                    plan.phase.as_str()
                ),
                Ok(false) => format!("abort: {id} was already gone"),
                Err(e) => format!("abort of {id} failed: {e}"),
            }
        }
    }
}

// ---------------------------------------------------------------- the loop

/// `-o json|yaml`: the first frame's model (after one LIST per kind).
pub async fn first_model(
    ctx: &'static Context,
    feed: Feed<'_>,
    opts: &Options,
) -> Result<TopModel> {
    let scope = scope_words(ctx);
    match feed {
        Feed::Snapshot => {
            let (mirror, kubevirt, cordoned) = snapshot_mirror(ctx).await?;
            Ok(model_of(
                &mirror,
                kubevirt,
                opts.loops,
                ctx.now,
                &ctx.source_description(),
                &scope,
                &cordoned,
            ))
        }
        Feed::Live(live, spec) => {
            let kubevirt = tokio::spawn(read_kubevirt(ctx));
            let mut ready = BTreeSet::new();
            let kinds = if spec.nodes { 4 } else { 3 };
            let mut follower = Follower::new(live, *spec);
            while ready.len() < kinds {
                match follower.next().await? {
                    Update::Changed { kind, listed: true } => {
                        ready.insert(kind);
                    }
                    Update::Stop(_) => return Err(Error::Interrupted),
                    _ => {}
                }
            }
            let kubevirt = kubevirt
                .await
                .map_err(|e| Error::Internal(format!("reading the KubeVirt CR: {e}")))??;
            // One frame: the clock of its lists (--now when given, as every one-shot command).
            let now = if ctx.clock == crate::context::ClockSource::Given {
                ctx.now
            } else {
                Timestamp::now()
            };
            Ok(model_of(
                &follower.mirror,
                kubevirt,
                opts.loops,
                now,
                &ctx.source_description(),
                &scope,
                &[],
            ))
        }
    }
}

async fn read_kubevirt(ctx: &'static Context) -> Result<Option<KubeVirt>> {
    let all = Query::all();
    Ok(list_as::<KubeVirt>(&ctx.source, Kind::KubeVirt, &all)
        .await?
        .into_iter()
        .next())
}

/// Runs the console until `q`, Ctrl-C, SIGINT or SIGTERM; an error (a watch that gave up)
/// ends it with the terminal restored. Returns the exit code.
pub async fn run(ctx: &'static Context, feed: Feed<'_>, opts: Options) -> Result<i32> {
    let scope = scope_words(ctx);
    let source = ctx.source_description();
    let kinds = match &feed {
        Feed::Live(_, spec) if spec.nodes => 4,
        _ => 3,
    };
    let (live, mut follower, mirror_owned, mut kubevirt, cordoned) = match feed {
        Feed::Snapshot => {
            let (mirror, kubevirt, cordoned) = snapshot_mirror(ctx).await?;
            (None, None, Some(mirror), Some(kubevirt), cordoned)
        }
        Feed::Live(live, spec) => (
            Some(live),
            Some(Follower::new(live, spec.with_tick(TICK))),
            None,
            None,
            Vec::new(),
        ),
    };
    let mut kubevirt_read = live.map(|_| tokio::spawn(read_kubevirt(ctx)));
    // SIGTERM, SIGINT (from outside: in raw mode Ctrl-C is a key) and SIGHUP (the terminal
    // went away) end the console like `q`, through the guard.
    use tokio::signal::unix::{SignalKind, signal};
    let handler = |kind: SignalKind, name: &str| {
        signal(kind).map_err(|e| Error::Internal(format!("{name} handler: {e}")))
    };
    let mut sigterm = handler(SignalKind::terminate(), "SIGTERM")?;
    let mut sigint = handler(SignalKind::interrupt(), "SIGINT")?;
    let mut sighup = handler(SignalKind::hangup(), "SIGHUP")?;
    let mut guard = TerminalGuard::enter()?;
    let mut events = EventStream::new();
    let mut state = TopState::new(live.is_none(), opts.dry_run);
    let mut view = View {
        charset: opts.charset,
        color: opts.color,
        notes: Vec::new(),
        live: live.is_some(),
    };
    let mut model = TopModel {
        source: source.clone(),
        scope: scope.clone(),
        ..TopModel::default()
    };
    let mut ready: BTreeSet<Kind> = BTreeSet::new();
    let mut reconnecting: std::collections::BTreeMap<Kind, String> = Default::default();
    let mut dirty = true;
    let mut copies = Copies::default();
    let mut metrics = Metrics::default();
    let mut redraw = true;
    let mut last_frame: Option<Instant> = None;
    #[cfg(debug_assertions)]
    let panic_key = test_panic_key();
    loop {
        if let Some(h) = kubevirt_read.as_mut()
            && h.is_finished()
        {
            let done = h
                .await
                .map_err(|e| Error::Internal(format!("reading the KubeVirt CR: {e}")))?;
            kubevirt = Some(done?);
            kubevirt_read = None;
            dirty = true;
        }
        let mirror = mirror_ref(&follower, &mirror_owned);
        let listed = live.is_none() || (ready.len() == kinds && kubevirt.is_some());
        let due = last_frame.is_none_or(|t| t.elapsed() >= REDRAW_EVERY);
        if dirty && listed && due {
            let now = if live.is_some() {
                Timestamp::now()
            } else {
                ctx.now
            };
            // Only the objects that changed since the last frame are copied out of the mirror.
            let inputs = copies.inputs(mirror, kubevirt.clone().flatten(), opts.loops);
            let report = build_report(&inputs, now, &source);
            copies.keep(inputs);
            model = build_model(&report, &scope, &cordoned);
            apply_rates(&mut model, &metrics.rates);
            dirty = false;
            redraw = true;
            last_frame = Some(Instant::now());
        }
        view.notes = if listed {
            reconnecting
                .values()
                .chain(metrics.notes.iter())
                .chain(mirror.nodes_unreadable.iter())
                .cloned()
                .collect()
        } else {
            vec!["listing VMIs, migrations, launcher pods and nodes...".into()]
        };
        if redraw {
            guard
                .terminal
                .draw(|f| draw(f, &model, &state, &view))
                .map_err(term_error)?;
            redraw = false;
        }
        let throttle = async {
            match last_frame {
                Some(t) if dirty => tokio::time::sleep_until(t + REDRAW_EVERY).await,
                _ => std::future::pending::<()>().await,
            }
        };
        let kubevirt_wait = async {
            match kubevirt_read.as_ref() {
                Some(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            update = async {
                match follower.as_mut() {
                    Some(f) => f.next().await,
                    None => std::future::pending().await,
                }
            } => match update? {
                Update::Stop(Stop::Interrupted | Stop::DeadlinePassed) => break,
                Update::Changed { kind, listed } => {
                    if listed {
                        ready.insert(kind);
                    }
                    dirty = true;
                }
                Update::Reconnecting(r) => {
                    reconnecting.insert(r.kind, format!("reconnecting: {r}"));
                    redraw = true;
                }
                Update::Recovered(kind) => {
                    reconnecting.remove(&kind);
                    redraw = true;
                }
                Update::Tick => {
                    dirty = true;
                    if let Some(live) = live.filter(|_| opts.metrics && listed && metrics.due()) {
                        let ns = kubevirt
                            .clone()
                            .flatten()
                            .and_then(|k| k.metadata.namespace.clone())
                            .unwrap_or_else(|| "kubevirt".into());
                        metrics.refresh(live, &ns, &model).await;
                    }
                }
            },
            event = events.next() => match event {
                None => break,
                Some(Err(e)) => return Err(term_error(e)),
                Some(Ok(Event::Resize(..))) => redraw = true,
                Some(Ok(Event::Key(k))) => {
                    let Some(key) = key_of(&k) else { continue };
                    #[cfg(debug_assertions)]
                    if panic_key && key == Key::Char('!') {
                        panic!("vmctl top: the test panic ({TEST_PANIC_KEY} is set and `!` was pressed)");
                    }
                    let (next, action) = on_key(state, &model, key);
                    state = next;
                    redraw = true;
                    match action {
                        Action::None => {}
                        Action::Quit => break,
                        Action::Explain(t) => {
                            let text = explain_text(ctx, mirror_ref(&follower, &mirror_owned), &t).await;
                            state.open_explain(format!("{}/{}", t.namespace, t.vmi), &text);
                            // A warning said on stderr while reading would stay on screen.
                            guard.terminal.clear().map_err(term_error)?;
                        }
                        Action::Abort(t) => {
                            let line = abort_line(live, mirror_ref(&follower, &mirror_owned), &t, opts.dry_run).await;
                            state.message = Some(line);
                            dirty = true;
                        }
                    }
                }
                Some(Ok(_)) => {}
            },
            _ = sigterm.recv() => break,
            _ = sigint.recv() => break,
            _ = sighup.recv() => break,
            _ = throttle => {}
            _ = kubevirt_wait => {}
        }
    }
    drop(guard);
    Ok(exit::OK)
}

/// Test builds only: with this variable set (to anything), `!` panics inside the console, so
/// `tests/top_tmux.rs` can check the panic hook restores the terminal. It exists under
/// `cfg(debug_assertions)` alone: a release build (`cargo build --release`, what is shipped)
/// compiles neither the read nor the key, so no user can reach it; `cargo test` builds the
/// binary it runs in the dev profile, where it is there.
#[cfg(debug_assertions)]
const TEST_PANIC_KEY: &str = "VMCTL_TEST_PANIC_KEY";

#[cfg(debug_assertions)]
fn test_panic_key() -> bool {
    std::env::var_os(TEST_PANIC_KEY).is_some()
}

fn mirror_ref<'a>(follower: &'a Option<Follower>, owned: &'a Option<Mirror>) -> &'a Mirror {
    static EMPTY: std::sync::OnceLock<Mirror> = std::sync::OnceLock::new();
    match (follower, owned) {
        (Some(f), _) => &f.mirror,
        (None, Some(m)) => m,
        (None, None) => EMPTY.get_or_init(Mirror::default),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vmi(
        name: &str,
        rv: &str,
        phase: Option<&str>,
        evacuate: bool,
    ) -> Boxed<VirtualMachineInstance> {
        let mut v = json!({"metadata": {"name": name, "namespace": "prod", "uid": format!("uid-{name}"),
                "resourceVersion": rv},
            "status": {"nodeName": "node-1", "phase": "Running"}});
        if evacuate {
            v["status"]["evacuationNodeName"] = json!("node-1");
        }
        if let Some(p) = phase {
            v["status"]["migrationState"] = json!({"migrationUid": "uid-m", "sourceNode": "node-1",
                "targetNode": "node-2", "mode": p, "startTimestamp": "2026-12-01T00:00:00Z"});
        }
        Boxed(Box::new(serde_json::from_value(v).unwrap()))
    }

    fn report(inputs: &StatusInputs) -> String {
        let now: Timestamp = "2026-12-01T00:01:00Z".parse().unwrap();
        serde_json::to_string(&build_report(inputs, now, "t")).unwrap()
    }

    #[test]
    fn copies_are_reused_until_the_object_changes() {
        let mut mirror = Mirror::default();
        mirror.apply_vmis(Change::Listed(vec![
            vmi("a", "1", Some("PreCopy"), false),
            vmi("b", "1", None, true),
            vmi("idle", "1", None, false),
        ]));
        mirror.apply_vmims(Change::Listed(vec![Boxed(Box::new(
            serde_json::from_value(json!({"metadata": {"name": "m", "namespace": "prod",
                "uid": "uid-m", "resourceVersion": "1"}, "spec": {"vmiName": "a"},
                "status": {"phase": "Running"}}))
            .unwrap(),
        ))]));
        let mut copies = Copies::default();
        let first = copies.inputs(&mirror, None, LoopThresholds::default());
        // The VMI in flight and the evacuating one; not the idle one.
        let names: Vec<&str> = first.vmis.iter().map(|v| v.name()).collect();
        assert_eq!(names, ["a", "b"]);
        let want = report(&first);
        copies.keep(first);
        let again = copies.inputs(&mirror, None, LoopThresholds::default());
        assert_eq!(report(&again), want);
        copies.keep(again);
        // A new version replaces the copy: post-copy now.
        mirror.apply_vmis(Change::Applied(vmi("a", "2", Some("PostCopy"), false)));
        let changed = copies.inputs(&mirror, None, LoopThresholds::default());
        let model = build_model(
            &build_report(&changed, "2026-12-01T00:01:00Z".parse().unwrap(), "t"),
            "s",
            &[],
        );
        assert!(model.migrations[0].point_of_no_return);
        assert_eq!(
            report(&changed),
            report(&frame_inputs(&mirror, None, LoopThresholds::default()))
        );
    }
}
