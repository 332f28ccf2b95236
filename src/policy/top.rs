//! `vmctl top`'s model and keys (pure): what the console shows, built from the status report
//! (`policy::status::build_report`, the rows `status` and `status --watch` print), and the
//! reducer that turns a key into the next screen state and an action for the I/O layer
//! (`operate::top`) to carry out. No terminal, no clock, no I/O: tested with plain data.
//!
//! Sections: the migrations in flight (post-copy marked as the point of no return), the
//! drains and evacuations in progress (VMIs marked with `evacuationNodeName` /
//! `EvictionRequested`, and the nodes they leave), and recent failures with their one-line
//! diagnosis (the status report's failure reasons and loop summaries).

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::policy::status::StatusReport;

/// One frame of the console as a document (`vmctl top -o json|yaml`).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopModel {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub as_of: String,
    pub source: String,
    /// `namespace NS` or `all namespaces`.
    pub scope: String,
    pub counts: Counts,
    pub migrations: Vec<MigrationLine>,
    pub evacuations: Vec<EvacuationLine>,
    /// Nodes cordoned (`spec.unschedulable`).
    pub cordoned_nodes: Vec<String>,
    /// Nodes VMIs are evacuated from that are not cordoned.
    pub evacuation_sources: Vec<String>,
    /// Each node cordoned or evacuated and how far its drain is (the status report's).
    pub nodes: Vec<crate::policy::status::NodeDrain>,
    pub failures: Vec<FailureLine>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub migrations: usize,
    pub post_copy: usize,
    pub evacuations: usize,
    pub cordoned_nodes: usize,
    pub evacuation_sources: usize,
    pub failures: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationLine {
    pub namespace: String,
    /// The VMIM.
    pub name: String,
    pub vmi: String,
    pub phase: String,
    pub mode: Option<String>,
    pub source_node: Option<String>,
    pub target_node: Option<String>,
    pub source_pod: Option<String>,
    pub target_pod: Option<String>,
    /// Which pod runs the guest now.
    pub live_pod: Option<String>,
    pub elapsed_seconds: Option<i64>,
    /// Percent done: of the data when metrics were read (`progressOf: data`), else of the
    /// completion budget KubeVirt's monitor allows (`progressOf: budget`).
    pub progress_percent: Option<u64>,
    pub progress_of: Option<&'static str>,
    /// Guest dirty rate and transfer rate, bytes/s, when metrics were read.
    pub dirty_rate_bps: Option<u64>,
    pub transfer_rate_bps: Option<u64>,
    /// Seconds left at the current net rate (transfer − dirty), when metrics were read and
    /// the migration converges.
    pub eta_seconds: Option<u64>,
    /// Post-copy: an abort or a network failure now loses the guest.
    pub point_of_no_return: bool,
    /// The node this evacuation migration drains.
    pub evacuation_node: Option<String>,
    /// What the migration waits for, in words.
    pub waiting_for: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvacuationLine {
    pub namespace: String,
    pub vmi: String,
    /// The node it is evacuated from (or the cordoned node it is still on).
    pub from_node: String,
    /// Marked for evacuation (`status.evacuationNodeName`): false for a VMI still on a
    /// cordoned node that nothing evacuates.
    pub marked: bool,
    pub eviction_requested: bool,
    /// Its evacuation attempt from that node (1 for the first), when marked.
    pub attempt: Option<usize>,
    /// The failure reason of its last failed attempt, when one failed.
    pub last_failure: Option<String>,
    /// Its migration in flight, if any.
    pub migration: Option<String>,
    pub phase: Option<String>,
    pub target_node: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureLine {
    pub namespace: String,
    pub vmi: String,
    /// The migration that failed, when known.
    pub migration: Option<String>,
    pub node: Option<String>,
    /// Seconds since it ended, when recorded.
    pub ago_seconds: Option<i64>,
    /// `migration-failed`, `vmi-failed` or a loop's kind.
    pub kind: String,
    /// One line: why.
    pub diagnosis: String,
    /// Its attempt in the VMI's evacuation chain from its node, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<usize>,
    /// The chain's next attempt (its VMIM), in flight now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<String>,
}

/// What progress metrics say of one migration (read by the I/O layer when it can).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rates {
    pub remaining_bytes: Option<f64>,
    pub processed_bytes: Option<f64>,
    pub total_bytes: Option<f64>,
    pub dirty_bps: Option<f64>,
    pub transfer_bps: Option<f64>,
}

fn positive(v: Option<f64>) -> Option<u64> {
    v.filter(|x| x.is_finite() && *x >= 0.0).map(|x| x as u64)
}

impl MigrationLine {
    /// Progress, rates and ETA from metrics: they replace the budget's percentage.
    pub fn with_rates(mut self, r: &Rates) -> Self {
        let remaining = positive(r.remaining_bytes);
        let processed = positive(r.processed_bytes);
        let total = positive(r.total_bytes)
            .or_else(|| Some(processed? + remaining?))
            .filter(|t| *t > 0);
        if let (Some(total), Some(remaining)) = (total, remaining) {
            self.progress_percent = Some(100 - (remaining.min(total) * 100 / total));
            self.progress_of = Some("data");
        }
        self.dirty_rate_bps = positive(r.dirty_bps);
        self.transfer_rate_bps = positive(r.transfer_bps);
        if let (Some(rem), Some(tx)) = (remaining, self.transfer_rate_bps) {
            let net = tx.saturating_sub(self.dirty_rate_bps.unwrap_or(0));
            self.eta_seconds = (net > 0).then(|| rem.div_ceil(net));
        }
        self
    }
}

/// Metrics read for the migrations, by (namespace, VMIM): progress of the data, dirty
/// rate and ETA replace the budget's percentage on those lines.
pub fn apply_rates(
    model: &mut TopModel,
    rates: &std::collections::HashMap<(String, String), Rates>,
) {
    for m in &mut model.migrations {
        if let Some(r) = rates.get(&(m.namespace.clone(), m.name.clone())) {
            *m = std::mem::take(m).with_rates(r);
        }
    }
}

/// The frame from the status report; `cordoned` are nodes known to be unschedulable
/// (from Node objects, when read). Pure.
pub fn build_model(report: &StatusReport, scope: &str, cordoned: &[String]) -> TopModel {
    // The VMIs by (namespace, name), once: a search per migration was quadratic in the
    // migrations in flight.
    let by_name: HashMap<(&str, &str), _> = report
        .vmis
        .iter()
        .map(|v| ((v.namespace.as_str(), v.name.as_str()), v))
        .collect();
    let mut migrations = Vec::new();
    for m in &report.migrations {
        let flight = by_name
            .get(&(m.namespace.as_str(), m.vmi.as_str()))
            .and_then(|v| v.migration.as_ref())
            .filter(|f| f.name.as_deref() == Some(m.name.as_str()));
        let elapsed = flight.and_then(|f| f.elapsed_seconds).or(m.age_seconds);
        let started = flight.is_some_and(|f| f.start_timestamp.is_some());
        let budget = flight.and_then(|f| f.budget_seconds).filter(|b| *b > 0);
        let progress = match (started, elapsed, budget) {
            (true, Some(e), Some(b)) => Some((e.max(0) as u64 * 100 / b).min(999)),
            _ => None,
        };
        migrations.push(MigrationLine {
            namespace: m.namespace.clone(),
            name: m.name.clone(),
            vmi: m.vmi.clone(),
            phase: m.phase.clone(),
            mode: m.mode.clone(),
            source_node: m.source_node.clone(),
            target_node: m.target_node.clone(),
            source_pod: m.source_pod.clone(),
            target_pod: m.target_pod.clone(),
            live_pod: m.live_pod.clone(),
            elapsed_seconds: elapsed,
            progress_percent: progress,
            progress_of: progress.map(|_| "budget"),
            dirty_rate_bps: None,
            transfer_rate_bps: None,
            eta_seconds: None,
            point_of_no_return: flight.is_some_and(|f| f.point_of_no_return)
                || m.mode.as_deref() == Some("PostCopy"),
            evacuation_node: m.evacuation_node.clone(),
            waiting_for: m.waiting_for.clone(),
        });
    }
    let mut evacuations = Vec::new();
    let mut cordoned_nodes: BTreeSet<String> = cordoned.iter().cloned().collect();
    cordoned_nodes.extend(
        report
            .nodes
            .iter()
            .filter(|n| n.cordoned)
            .map(|n| n.name.clone()),
    );
    let evacuation_sources: Vec<String> = report
        .nodes
        .iter()
        .filter(|n| !n.cordoned && !cordoned_nodes.contains(&n.name))
        .map(|n| n.name.clone())
        .collect();
    let mut failures = Vec::new();
    for v in &report.vmis {
        let chain = v.evacuation_chain.as_ref();
        if let Some(e) = &v.evacuation {
            evacuations.push(EvacuationLine {
                namespace: v.namespace.clone(),
                vmi: v.name.clone(),
                from_node: e.node_name.clone(),
                marked: true,
                eviction_requested: e.eviction_requested,
                attempt: chain.filter(|c| c.node == e.node_name).map(|c| c.attempt),
                last_failure: chain
                    .filter(|c| c.node == e.node_name)
                    .and_then(|c| c.last_failure.clone()),
                migration: v.migration.as_ref().and_then(|f| f.name.clone()),
                phase: v.migration.as_ref().map(|f| f.phase.clone()),
                target_node: v.migration.as_ref().and_then(|f| f.target_node.clone()),
            });
        } else if let Some(node) = v.node.as_ref().filter(|n| cordoned_nodes.contains(*n)) {
            // Still on a cordoned node, and nothing evacuates it: the drain is not done.
            evacuations.push(EvacuationLine {
                namespace: v.namespace.clone(),
                vmi: v.name.clone(),
                from_node: node.clone(),
                marked: false,
                eviction_requested: false,
                attempt: None,
                last_failure: None,
                migration: v.migration.as_ref().and_then(|f| f.name.clone()),
                phase: v.migration.as_ref().map(|f| f.phase.clone()),
                target_node: v.migration.as_ref().and_then(|f| f.target_node.clone()),
            });
        }
        // One entry per VMI (issue 33, tried cold: pg-reporting-01's failed post-copy was
        // listed twice, as the failed migration and as the VMI it left failed): the loop
        // or the failed migration, with the VMI's own failure said in the same line.
        let id = format!("{}/{}", v.namespace, v.name);
        let vmi_failed = (v.phase == "Failed").then(|| {
            report
                .warnings
                .iter()
                .find(|w| w.vmi == id && w.kind == "failed")
                .map(|w| w.message.clone())
                .unwrap_or_else(|| "the VMI has failed".into())
        });
        let mut line = if let Some(l) = &v.in_loop {
            Some(FailureLine {
                namespace: v.namespace.clone(),
                vmi: v.name.clone(),
                migration: Some(l.migration.clone()),
                node: v.node.clone(),
                ago_seconds: None,
                kind: l.kind.as_str().to_string(),
                diagnosis: l.summary.clone(),
                ..FailureLine::default()
            })
        } else if let Some(last) = v.last_migration.as_ref().filter(|l| l.result == "failed") {
            let reason = last
                .failure_reason
                .as_deref()
                .and_then(|r| r.lines().next())
                .map(str::to_string)
                .unwrap_or_else(|| "failed; no reason recorded".into());
            // A retry chain is one entry: the attempt that failed and the one after it.
            let chain = chain.filter(|c| {
                c.failed_attempts > 0 && last.source_node.as_deref() == Some(c.node.as_str())
            });
            let (attempt, retry) = match chain {
                Some(c)
                    if c.result == "in-flight" && last.name.as_deref() != Some(&c.migration) =>
                {
                    (
                        Some(c.attempt.saturating_sub(1).max(1)),
                        Some(c.migration.clone()),
                    )
                }
                Some(c) => (Some(c.attempt), None),
                None => (None, None),
            };
            let diagnosis = match (&retry, attempt) {
                (Some(r), Some(n)) => {
                    format!("{reason}; retried: attempt {} {r} in flight", n + 1)
                }
                _ => reason,
            };
            Some(FailureLine {
                namespace: v.namespace.clone(),
                vmi: v.name.clone(),
                migration: last.name.clone(),
                node: last.source_node.clone(),
                ago_seconds: last.ago_seconds,
                kind: "migration-failed".into(),
                diagnosis,
                attempt,
                retry,
            })
        } else {
            None
        };
        match (&mut line, vmi_failed) {
            (Some(l), Some(why)) => {
                l.kind = "vmi-failed".into();
                l.diagnosis = format!("{why}; {}", l.diagnosis);
            }
            (None, Some(why)) => {
                line = Some(FailureLine {
                    namespace: v.namespace.clone(),
                    vmi: v.name.clone(),
                    migration: None,
                    node: v.node.clone(),
                    ago_seconds: None,
                    kind: "vmi-failed".into(),
                    diagnosis: why,
                    ..FailureLine::default()
                });
            }
            _ => {}
        }
        failures.extend(line);
        // A failed VMIM the VMI's migrationState does not describe (its target pod never
        // ran, so migrationState still tells an older migration) is a failure of its own,
        // newer than the one above; with its retry in flight it is marked as retried.
        if let Some(f) = v
            .unrecorded_failure
            .as_ref()
            .filter(|_| v.in_loop.is_none())
        {
            let reason = f
                .failure_reason
                .as_deref()
                .and_then(|r| r.lines().next())
                .map(str::to_string)
                .unwrap_or_else(|| "failed; no reason recorded".into());
            let retried = f
                .retry
                .as_ref()
                .map(|r| format!("; retried: attempt {} {r} in flight", f.attempt + 1));
            // The same migration listed already, just above, from this VMI's last migration
            // (status's newest finished VMIM): one entry, with its attempt and retry.
            if let Some(line) = failures.last_mut().filter(|l| {
                l.namespace == v.namespace
                    && l.vmi == v.name
                    && l.migration.as_deref() == Some(f.name.as_str())
            }) {
                if let Some(retried) = &retried
                    && !line.diagnosis.contains("retried:")
                {
                    line.diagnosis.push_str(retried);
                }
                line.attempt = Some(f.attempt);
                line.retry = f.retry.clone();
                continue;
            }
            let diagnosis = format!("{reason}{}", retried.unwrap_or_default());
            failures.push(FailureLine {
                namespace: v.namespace.clone(),
                vmi: v.name.clone(),
                migration: Some(f.name.clone()),
                node: f.source_node.clone(),
                ago_seconds: f.ago_seconds,
                kind: "migration-failed".into(),
                diagnosis,
                attempt: Some(f.attempt),
                retry: f.retry.clone(),
            });
        }
    }
    // Newest failures first (unknown ages last).
    failures.sort_by_key(|f| (f.ago_seconds.is_none(), f.ago_seconds.unwrap_or(0)));
    let cordoned_nodes: Vec<String> = cordoned_nodes.into_iter().collect();
    TopModel {
        api_version: "vmctl/v1alpha1",
        kind: "TopFrame",
        as_of: report.as_of.clone(),
        source: report.source.clone(),
        scope: scope.to_string(),
        counts: Counts {
            migrations: migrations.len(),
            post_copy: migrations.iter().filter(|m| m.point_of_no_return).count(),
            evacuations: evacuations.iter().filter(|e| e.marked).count(),
            cordoned_nodes: cordoned_nodes.len(),
            evacuation_sources: evacuation_sources.len(),
            failures: failures.len(),
        },
        migrations,
        evacuations,
        cordoned_nodes,
        evacuation_sources,
        nodes: report.nodes.clone(),
        failures,
    }
}

// ---------------------------------------------------------------- the screen's state

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Section {
    #[default]
    Migrations,
    Evacuations,
    Failures,
}

impl Section {
    pub const ALL: [Section; 3] = [Section::Migrations, Section::Evacuations, Section::Failures];

    fn index(self) -> usize {
        match self {
            Section::Migrations => 0,
            Section::Evacuations => 1,
            Section::Failures => 2,
        }
    }

    fn next(self) -> Section {
        Section::ALL[(self.index() + 1) % 3]
    }

    fn prev(self) -> Section {
        Section::ALL[(self.index() + 2) % 3]
    }

    pub fn title(self) -> &'static str {
        match self {
            Section::Migrations => "Migrations in flight",
            Section::Evacuations => "Drains and evacuations",
            Section::Failures => "Recent failures",
        }
    }
}

/// A migration the user asked to abort.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbortTarget {
    pub namespace: String,
    pub migration: String,
    pub vmi: String,
}

/// What `explain` is asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplainTarget {
    pub namespace: String,
    pub vmi: String,
    pub migration: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Normal,
    /// Typing a filter; `before` comes back on Esc.
    Filter {
        before: String,
    },
    Help,
    /// The explain text of one VM, scrolled by `scroll` lines.
    Explain {
        title: String,
        lines: Vec<String>,
        scroll: usize,
    },
    /// Waiting for y/n.
    Confirm(AbortTarget),
}

/// Everything the screen remembers between frames.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopState {
    pub section: Section,
    /// The selected row of each section, among the rows the filter shows.
    pub selected: [usize; 3],
    /// Rows whose namespace or a node contains this text.
    pub filter: String,
    pub mode: Mode,
    /// A snapshot (`--from`): nothing can be changed.
    pub read_only: bool,
    pub dry_run: bool,
    /// One line for the footer: what the last action did or why it was refused.
    pub message: Option<String>,
}

/// A key, as the reducer sees it (the terminal's events are translated at the edge).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    Tab,
    BackTab,
    Enter,
    Esc,
    Backspace,
    CtrlC,
    Char(char),
}

/// What the I/O layer must do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    None,
    Quit,
    Explain(ExplainTarget),
    /// Confirmed: delete this migration (or say what would be done with --dry-run).
    Abort(AbortTarget),
}

fn contains(hay: Option<&str>, needle: &str) -> bool {
    hay.is_some_and(|h| h.contains(needle))
}

/// Indexes of the rows of `section` the filter keeps.
pub fn visible(model: &TopModel, section: Section, filter: &str) -> Vec<usize> {
    let f = filter.trim();
    let keep = |ns: &str, nodes: [Option<&str>; 2]| {
        f.is_empty() || ns.contains(f) || nodes.iter().any(|n| contains(*n, f))
    };
    match section {
        Section::Migrations => model
            .migrations
            .iter()
            .enumerate()
            .filter(|(_, m)| {
                keep(
                    &m.namespace,
                    [m.source_node.as_deref(), m.target_node.as_deref()],
                )
            })
            .map(|(i, _)| i)
            .collect(),
        Section::Evacuations => model
            .evacuations
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                keep(
                    &e.namespace,
                    [Some(e.from_node.as_str()), e.target_node.as_deref()],
                )
            })
            .map(|(i, _)| i)
            .collect(),
        Section::Failures => model
            .failures
            .iter()
            .enumerate()
            .filter(|(_, x)| keep(&x.namespace, [x.node.as_deref(), None]))
            .map(|(i, _)| i)
            .collect(),
    }
}

impl TopState {
    pub fn new(read_only: bool, dry_run: bool) -> TopState {
        TopState {
            read_only,
            dry_run,
            ..TopState::default()
        }
    }

    /// The selected row of the current section, clamped to what is shown.
    pub fn selected_index(&self, model: &TopModel, section: Section) -> Option<usize> {
        let rows = visible(model, section, &self.filter);
        if rows.is_empty() {
            return None;
        }
        Some(self.selected[section.index()].min(rows.len() - 1))
    }

    fn selected_row(&self, model: &TopModel) -> Option<usize> {
        let rows = visible(model, self.section, &self.filter);
        self.selected_index(model, self.section)
            .and_then(|i| rows.get(i).copied())
    }

    fn move_by(&mut self, model: &TopModel, delta: isize) {
        let n = visible(model, self.section, &self.filter).len();
        let i = &mut self.selected[self.section.index()];
        let cur = (*i).min(n.saturating_sub(1)) as isize;
        *i = (cur + delta).clamp(0, n.saturating_sub(1) as isize) as usize;
    }

    /// Opens the explain pane with `text`.
    pub fn open_explain(&mut self, title: String, text: &str) {
        self.mode = Mode::Explain {
            title,
            lines: text.lines().map(str::to_string).collect(),
            scroll: 0,
        };
    }

    fn explain_target(&self, model: &TopModel) -> Option<ExplainTarget> {
        let i = self.selected_row(model)?;
        Some(match self.section {
            Section::Migrations => {
                let m = &model.migrations[i];
                ExplainTarget {
                    namespace: m.namespace.clone(),
                    vmi: m.vmi.clone(),
                    migration: Some(m.name.clone()),
                }
            }
            Section::Evacuations => {
                let e = &model.evacuations[i];
                ExplainTarget {
                    namespace: e.namespace.clone(),
                    vmi: e.vmi.clone(),
                    migration: e.migration.clone(),
                }
            }
            Section::Failures => {
                let f = &model.failures[i];
                ExplainTarget {
                    namespace: f.namespace.clone(),
                    vmi: f.vmi.clone(),
                    migration: f.migration.clone(),
                }
            }
        })
    }

    /// `a`: the confirmation, or why not (post-copy first: it is the reason that matters
    /// even on a snapshot).
    fn ask_abort(&mut self, model: &TopModel) {
        let Some(i) = self.selected_row(model) else {
            self.message = Some("abort: no row selected".into());
            return;
        };
        let (namespace, vmi, migration) = match self.section {
            Section::Migrations => {
                let m = &model.migrations[i];
                (&m.namespace, &m.vmi, Some(&m.name))
            }
            Section::Evacuations => {
                let e = &model.evacuations[i];
                (&e.namespace, &e.vmi, e.migration.as_ref())
            }
            Section::Failures => {
                let f = &model.failures[i];
                self.message = Some(format!(
                    "abort: {}/{} has no migration in flight (this row is a failure)",
                    f.namespace, f.vmi
                ));
                return;
            }
        };
        let Some(migration) = migration else {
            self.message = Some(format!(
                "abort: {namespace}/{vmi} has no migration in flight yet"
            ));
            return;
        };
        if let Some(m) = model
            .migrations
            .iter()
            .find(|m| &m.namespace == namespace && &m.name == migration)
            .filter(|m| m.point_of_no_return)
        {
            self.message = Some(post_copy_refusal(m));
            return;
        }
        if self.read_only {
            self.message = Some(format!(
                "abort refused: {namespace}/{migration} is read from a snapshot (--from), which is read-only"
            ));
            return;
        }
        self.message = None;
        self.mode = Mode::Confirm(AbortTarget {
            namespace: namespace.clone(),
            migration: migration.clone(),
            vmi: vmi.clone(),
        });
    }
}

/// Why a post-copy migration is not aborted, in one line (the words of `vmctl abort`).
pub fn post_copy_refusal(m: &MigrationLine) -> String {
    format!(
        "abort refused: {}/{} is in post-copy from {} to {}, the point of no return: the guest's memory is split across both nodes and aborting would lose it; let it finish",
        m.namespace,
        m.name,
        m.source_node.as_deref().unwrap_or("?"),
        m.target_node.as_deref().unwrap_or("?")
    )
}

/// The reducer: the next state and what to do. Pure.
pub fn on_key(mut state: TopState, model: &TopModel, key: Key) -> (TopState, Action) {
    if key == Key::CtrlC {
        return (state, Action::Quit);
    }
    match state.mode.clone() {
        Mode::Filter { before } => {
            match key {
                Key::Esc => {
                    state.filter = before;
                    state.mode = Mode::Normal;
                }
                Key::Enter => state.mode = Mode::Normal,
                Key::Backspace => {
                    state.filter.pop();
                }
                Key::Char(c) if !c.is_control() => state.filter.push(c),
                _ => {}
            }
            state.selected = [0; 3];
            (state, Action::None)
        }
        Mode::Help => {
            if key == Key::Char('q') {
                return (state, Action::Quit);
            }
            state.mode = Mode::Normal;
            (state, Action::None)
        }
        Mode::Explain {
            title,
            lines,
            scroll,
        } => {
            let last = lines.len().saturating_sub(1);
            let scroll = match key {
                Key::Up | Key::Char('k') => scroll.saturating_sub(1),
                Key::Down | Key::Char('j') => (scroll + 1).min(last),
                Key::PageUp => scroll.saturating_sub(20),
                Key::PageDown | Key::Char(' ') => (scroll + 20).min(last),
                Key::Home | Key::Char('g') => 0,
                Key::End | Key::Char('G') => last,
                Key::Char('q') => return (state, Action::Quit),
                Key::Esc | Key::Enter | Key::Backspace => {
                    state.mode = Mode::Normal;
                    return (state, Action::None);
                }
                _ => scroll,
            };
            state.mode = Mode::Explain {
                title,
                lines,
                scroll,
            };
            (state, Action::None)
        }
        Mode::Confirm(target) => {
            state.mode = Mode::Normal;
            match key {
                Key::Char('y') | Key::Char('Y') => (state, Action::Abort(target)),
                _ => {
                    state.message = Some(format!(
                        "abort of {}/{} cancelled",
                        target.namespace, target.migration
                    ));
                    (state, Action::None)
                }
            }
        }
        Mode::Normal => {
            match key {
                Key::Char('q') => return (state, Action::Quit),
                Key::Up | Key::Char('k') => state.move_by(model, -1),
                Key::Down | Key::Char('j') => state.move_by(model, 1),
                Key::PageUp => state.move_by(model, -10),
                Key::PageDown => state.move_by(model, 10),
                Key::Home | Key::Char('g') => state.move_by(model, isize::MIN / 2),
                Key::End | Key::Char('G') => state.move_by(model, isize::MAX / 2),
                Key::Tab => state.section = state.section.next(),
                Key::BackTab => state.section = state.section.prev(),
                Key::Char('/') => {
                    state.mode = Mode::Filter {
                        before: state.filter.clone(),
                    };
                }
                Key::Char('?') => state.mode = Mode::Help,
                Key::Esc => {
                    state.filter.clear();
                    state.message = None;
                }
                Key::Enter => {
                    return match state.explain_target(model) {
                        Some(t) => (state, Action::Explain(t)),
                        None => {
                            state.message = Some("explain: no row selected".into());
                            (state, Action::None)
                        }
                    };
                }
                Key::Char('a') => state.ask_abort(model),
                _ => {}
            }
            (state, Action::None)
        }
    }
}

/// The help overlay's lines.
pub const HELP: &[(&str, &str)] = &[
    (
        "Up/Down j/k",
        "select a row (PgUp/PgDn, g/G: page, first, last)",
    ),
    ("Tab", "next section (Shift-Tab: previous)"),
    (
        "/",
        "filter by namespace or node (Enter keeps, Esc cancels)",
    ),
    ("Esc", "clear the filter"),
    (
        "Enter",
        "explain the selected VM (Esc closes, Up/Down scroll)",
    ),
    (
        "a",
        "abort the selected migration (y/n; refused in post-copy)",
    ),
    ("?", "this help"),
    ("q Ctrl-C", "quit"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> TopModel {
        let line = |name: &str, ns: &str, src: &str, post: bool| MigrationLine {
            namespace: ns.into(),
            name: name.into(),
            vmi: format!("vm-{name}"),
            phase: "Running".into(),
            mode: Some(if post { "PostCopy" } else { "PreCopy" }.into()),
            source_node: Some(src.into()),
            target_node: Some("node-9".into()),
            point_of_no_return: post,
            ..MigrationLine::default()
        };
        TopModel {
            migrations: vec![
                line("m1", "prod", "node-1", false),
                line("m2", "prod", "node-2", true),
                line("m3", "dev", "node-3", false),
            ],
            evacuations: vec![EvacuationLine {
                namespace: "prod".into(),
                vmi: "vm-e".into(),
                from_node: "node-1".into(),
                ..EvacuationLine::default()
            }],
            failures: vec![FailureLine {
                namespace: "dev".into(),
                vmi: "vm-f".into(),
                migration: Some("m0".into()),
                kind: "migration-failed".into(),
                diagnosis: "target pod unschedulable".into(),
                ..FailureLine::default()
            }],
            ..TopModel::default()
        }
    }

    fn keys(state: TopState, model: &TopModel, keys: &[Key]) -> (TopState, Action) {
        let mut s = state;
        let mut last = Action::None;
        for k in keys {
            let (n, a) = on_key(s, model, *k);
            s = n;
            last = a;
        }
        (s, last)
    }

    #[test]
    fn selection_moves_and_clamps_and_sections_cycle() {
        let m = model();
        let (s, _) = keys(TopState::default(), &m, &[Key::Down, Key::Char('j')]);
        assert_eq!(s.selected_index(&m, Section::Migrations), Some(2));
        let (s, _) = keys(s, &m, &[Key::Down, Key::Down]);
        assert_eq!(s.selected_index(&m, Section::Migrations), Some(2));
        let (s, _) = keys(s, &m, &[Key::Char('k'), Key::Up, Key::Up]);
        assert_eq!(s.selected_index(&m, Section::Migrations), Some(0));
        let (s, _) = keys(s, &m, &[Key::Tab]);
        assert_eq!(s.section, Section::Evacuations);
        let (s, _) = keys(s, &m, &[Key::Tab, Key::Tab]);
        assert_eq!(s.section, Section::Migrations);
        let (s, _) = keys(s, &m, &[Key::BackTab]);
        assert_eq!(s.section, Section::Failures);
    }

    #[test]
    fn the_filter_is_typed_kept_or_cancelled() {
        let m = model();
        let typed = [
            Key::Char('/'),
            Key::Char('d'),
            Key::Char('e'),
            Key::Char('v'),
        ];
        let (s, _) = keys(TopState::default(), &m, &typed);
        assert_eq!(s.mode, Mode::Filter { before: "".into() });
        assert_eq!(visible(&m, Section::Migrations, &s.filter), vec![2]);
        let (kept, _) = keys(s.clone(), &m, &[Key::Enter]);
        assert_eq!((kept.filter.as_str(), &kept.mode), ("dev", &Mode::Normal));
        let (cancelled, _) = keys(s, &m, &[Key::Esc]);
        assert_eq!(cancelled.filter, "");
        // By node: node-2 is m2's source.
        let (s, _) = keys(
            TopState::default(),
            &m,
            &[Key::Char('/'), Key::Char('-'), Key::Char('2'), Key::Enter],
        );
        assert_eq!(visible(&m, Section::Migrations, &s.filter), vec![1]);
        // `q` while typing is text, not quit.
        let (s, a) = keys(TopState::default(), &m, &[Key::Char('/'), Key::Char('q')]);
        assert_eq!((s.filter.as_str(), a), ("q", Action::None));
    }

    #[test]
    fn enter_explains_the_selected_row_and_the_pane_scrolls() {
        let m = model();
        let (s, a) = keys(TopState::default(), &m, &[Key::Down, Key::Enter]);
        assert_eq!(
            a,
            Action::Explain(ExplainTarget {
                namespace: "prod".into(),
                vmi: "vm-m2".into(),
                migration: Some("m2".into())
            })
        );
        let mut s = s;
        s.open_explain("prod/vm-m2".into(), "a\nb\nc");
        let (s, _) = keys(s, &m, &[Key::Down, Key::Down, Key::Down]);
        assert!(matches!(s.mode, Mode::Explain { scroll: 2, .. }));
        let (s, _) = keys(s, &m, &[Key::Esc]);
        assert_eq!(s.mode, Mode::Normal);
    }

    #[test]
    fn abort_asks_then_acts_and_is_refused_in_post_copy_and_on_a_snapshot() {
        let m = model();
        let (s, a) = keys(TopState::default(), &m, &[Key::Char('a')]);
        assert_eq!(a, Action::None);
        let target = AbortTarget {
            namespace: "prod".into(),
            migration: "m1".into(),
            vmi: "vm-m1".into(),
        };
        assert_eq!(s.mode, Mode::Confirm(target.clone()));
        let (_, a) = keys(s.clone(), &m, &[Key::Char('y')]);
        assert_eq!(a, Action::Abort(target));
        let (n, a) = keys(s, &m, &[Key::Char('n')]);
        assert_eq!((a, n.mode), (Action::None, Mode::Normal));
        assert!(n.message.unwrap().contains("cancelled"));

        // Post-copy: refused with the reason, no confirmation.
        let (s, a) = keys(TopState::default(), &m, &[Key::Down, Key::Char('a')]);
        assert_eq!((a, &s.mode), (Action::None, &Mode::Normal));
        let msg = s.message.unwrap();
        assert!(msg.contains("post-copy") && msg.contains("point of no return"));

        // A snapshot is read-only.
        let (s, _) = keys(TopState::new(true, false), &m, &[Key::Char('a')]);
        assert_eq!(s.mode, Mode::Normal);
        assert!(s.message.unwrap().contains("read-only"));

        // A failure has nothing to abort.
        let (s, _) = keys(TopState::default(), &m, &[Key::BackTab, Key::Char('a')]);
        assert!(s.message.unwrap().contains("no migration in flight"));
    }

    #[test]
    fn quit_from_anywhere_but_the_filter() {
        let m = model();
        assert_eq!(
            on_key(TopState::default(), &m, Key::Char('q')).1,
            Action::Quit
        );
        assert_eq!(on_key(TopState::default(), &m, Key::CtrlC).1, Action::Quit);
        let (s, _) = keys(TopState::default(), &m, &[Key::Char('?')]);
        assert_eq!(s.mode, Mode::Help);
        let (s, _) = keys(s, &m, &[Key::Char('x')]);
        assert_eq!(s.mode, Mode::Normal);
        let (s, _) = keys(TopState::default(), &m, &[Key::Char('/')]);
        assert_eq!(on_key(s, &m, Key::CtrlC).1, Action::Quit);
    }

    #[test]
    fn rates_apply_to_their_migration_only() {
        let mut m = model();
        let rates = std::collections::HashMap::from([(
            ("prod".to_string(), "m2".to_string()),
            Rates {
                remaining_bytes: Some(0.0),
                total_bytes: Some(10.0),
                ..Rates::default()
            },
        )]);
        apply_rates(&mut m, &rates);
        assert_eq!(m.migrations[1].progress_percent, Some(100));
        assert_eq!(m.migrations[0].progress_percent, None);
    }

    #[test]
    fn rates_give_progress_and_eta() {
        let l = MigrationLine::default().with_rates(&Rates {
            remaining_bytes: Some(1000.0),
            processed_bytes: Some(3000.0),
            total_bytes: None,
            dirty_bps: Some(50.0),
            transfer_bps: Some(150.0),
        });
        assert_eq!(
            (l.progress_percent, l.progress_of, l.eta_seconds),
            (Some(75), Some("data"), Some(10))
        );
        // Dirtying faster than it sends: no ETA.
        let l = MigrationLine::default().with_rates(&Rates {
            remaining_bytes: Some(1000.0),
            total_bytes: Some(4000.0),
            dirty_bps: Some(500.0),
            transfer_bps: Some(150.0),
            ..Rates::default()
        });
        assert_eq!((l.progress_percent, l.eta_seconds), (Some(75), None));
    }
}

#[cfg(test)]
mod failure_tests {
    use super::*;
    use crate::policy::status::{StatusInputs, build_report};
    use serde_json::{Value, json};

    fn vmi(name: &str, phase: &str, state: Value, evacuation: Option<&str>) -> Value {
        let mut v = json!({"metadata": {"name": name, "namespace": "prod", "uid": format!("uid-{name}")},
            "spec": {}, "status": {"phase": phase, "nodeName": "node-1", "migrationState": state}});
        if let Some(e) = evacuation {
            v["status"]["evacuationNodeName"] = json!(e);
        }
        if phase == "Failed" {
            v["status"]["conditions"] = json!([{"type": "Synchronized", "status": "False",
                "message": "VMI is irrecoverable due to failed post-copy migration"}]);
        }
        v
    }

    fn vmim(name: &str, vmi: &str, phase: &str, at: &str, evacuation: bool) -> Value {
        let mut m = json!({"metadata": {"name": name, "namespace": "prod", "uid": format!("uid-{name}"),
                "creationTimestamp": at},
            "spec": {"vmiName": vmi}, "status": {"phase": phase}});
        if evacuation {
            m["metadata"]["annotations"] = json!({"kubevirt.io/evacuationMigration": "node-1"});
        }
        m
    }

    fn failed_state(uid: &str, mode: &str, reason: &str) -> Value {
        json!({"migrationUid": uid, "completed": true, "failed": true, "mode": mode,
            "sourceNode": "node-1", "targetNode": "node-2",
            "startTimestamp": "2026-12-01T00:00:10Z", "endTimestamp": "2026-12-01T00:01:00Z",
            "failureReason": reason})
    }

    fn model_of(vmis: Vec<Value>, vmims: Vec<Value>) -> TopModel {
        let inputs = StatusInputs {
            vmis: vmis
                .into_iter()
                .map(|v| serde_json::from_value(v).unwrap())
                .collect(),
            vmims: vmims
                .into_iter()
                .map(|v| serde_json::from_value(v).unwrap())
                .collect(),
            ..StatusInputs::default()
        };
        let now = "2026-12-01T00:05:00Z".parse().unwrap();
        build_model(&build_report(&inputs, now, "test"), "all namespaces", &[])
    }

    /// Issue 33 (tried cold): top listed pg-reporting-01's failed post-copy twice: once as
    /// the failed migration, once as the VMI it left Failed. One failure, one entry.
    #[test]
    fn a_failed_post_copy_and_the_vmi_it_failed_are_one_entry() {
        let m = model_of(
            vec![vmi(
                "pg-reporting-01",
                "Failed",
                failed_state(
                    "uid-mig-pg",
                    "PostCopy",
                    "Live migration failed virError(Code=9)",
                ),
                None,
            )],
            vec![vmim(
                "mig-pg",
                "pg-reporting-01",
                "Failed",
                "2026-12-01T00:00:00Z",
                false,
            )],
        );
        assert_eq!(m.failures.len(), 1, "{:#?}", m.failures);
        assert_eq!(m.counts.failures, 1);
        let f = &m.failures[0];
        assert_eq!(f.kind, "vmi-failed");
        assert_eq!(f.migration.as_deref(), Some("mig-pg"));
        assert_eq!(f.ago_seconds, Some(240));
        assert!(
            f.diagnosis
                .contains("irrecoverable due to failed post-copy")
                && f.diagnosis
                    .contains("Live migration failed virError(Code=9)"),
            "{}",
            f.diagnosis
        );
    }

    /// A retry chain is one entry: the attempt that failed, and the attempt after it in flight.
    #[test]
    fn a_retry_chain_is_one_entry_with_its_attempt() {
        let m = model_of(
            vec![vmi(
                "kafka-01",
                "Running",
                failed_state(
                    "uid-ev-a",
                    "PreCopy",
                    "virError(Code=38): unable to connect",
                ),
                Some("node-1"),
            )],
            vec![
                vmim("ev-a", "kafka-01", "Failed", "2026-12-01T00:00:00Z", true),
                vmim("ev-b", "kafka-01", "Pending", "2026-12-01T00:02:00Z", true),
            ],
        );
        assert_eq!(m.failures.len(), 1, "{:#?}", m.failures);
        let f = &m.failures[0];
        assert_eq!(f.migration.as_deref(), Some("ev-a"));
        assert_eq!((f.attempt, f.retry.as_deref()), (Some(1), Some("ev-b")));
        assert!(
            f.diagnosis.ends_with("; retried: attempt 2 ev-b in flight"),
            "{}",
            f.diagnosis
        );
        assert!(f.diagnosis.contains("unable to connect"), "{}", f.diagnosis);
        // The same chain in the evacuations: attempt 2, the last failure.
        let e = &m.evacuations[0];
        assert_eq!(e.attempt, Some(2));
        assert_eq!(
            e.last_failure.as_deref(),
            Some("virError(Code=38): unable to connect")
        );
    }

    /// Issue 33 (tried cold): top dropped kubevirt-migrate-vm-h2b6c, the newest failure on
    /// examples/cluster: its target pod never ran, so the VMI's migrationState still tells an
    /// older, succeeded migration. A failure whose retry is in flight stays listed, retried.
    #[test]
    fn a_failure_migration_state_never_described_is_listed_with_its_retry() {
        let old = json!({"migrationUid": "uid-old", "completed": true, "failed": false,
            "mode": "PreCopy", "sourceNode": "node-2", "targetNode": "node-1",
            "startTimestamp": "2026-11-20T00:00:00Z", "endTimestamp": "2026-11-20T00:01:00Z"});
        let mut failed = vmim(
            "mig-a",
            "warehouse-01",
            "Failed",
            "2026-12-01T00:00:00Z",
            false,
        );
        failed["status"]["phaseTransitionTimestamps"] = json!([
            {"phase": "Pending", "phaseTransitionTimestamp": "2026-12-01T00:00:00Z"},
            {"phase": "Failed", "phaseTransitionTimestamp": "2026-12-01T00:01:00Z"}]);
        let m = model_of(
            vec![vmi("warehouse-01", "Running", old, None)],
            vec![
                failed,
                vmim(
                    "mig-b",
                    "warehouse-01",
                    "Scheduling",
                    "2026-12-01T00:02:00Z",
                    false,
                ),
            ],
        );
        assert_eq!(m.failures.len(), 1, "{:#?}", m.failures);
        assert_eq!(m.counts.failures, 1);
        let f = &m.failures[0];
        assert_eq!(f.kind, "migration-failed");
        assert_eq!(f.migration.as_deref(), Some("mig-a"));
        assert_eq!(f.ago_seconds, Some(240));
        assert_eq!((f.attempt, f.retry.as_deref()), (Some(1), Some("mig-b")));
        assert!(
            f.diagnosis
                .ends_with("; retried: attempt 2 mig-b in flight"),
            "{}",
            f.diagnosis
        );
    }
}
