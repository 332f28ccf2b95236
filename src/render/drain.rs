//! `vmctl drain`'s output: one line per change (kubectl's words where kubectl has them), or
//! one JSON object per line (`kind: DrainEvent`), and the summary at the end.

use std::collections::BTreeMap;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use serde_json::{Value, json};

use super::{OutputFormat, Style, Tone};
use crate::policy::drain::execute::{Account, Counts, Event, Wait};
use crate::text::printable;
use crate::triage::Diagnosis;

/// How the drain ended, for the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DrainResult {
    Drained,
    Blocked,
    Timeout,
    Interrupted,
    Refused,
    DryRun,
    /// `--no-wait`: every eviction accepted or handed to KubeVirt.
    HandedOff,
}

/// The last event: where everything stands and what to type next.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub result: DrainResult,
    pub nodes: Vec<String>,
    #[serde(flatten)]
    pub account: Account,
    /// The commands to resume or give up.
    pub resume: Vec<String>,
    /// Why it was refused (with `result: refused`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

/// The event envelope every line of `-o json` has.
pub fn event_json(time: &str, event: &Event, diagnosis: Option<&Diagnosis>) -> Value {
    let mut v = json!({
        "apiVersion": crate::model::VMCTL_API_VERSION,
        "kind": "DrainEvent",
        "time": time,
    });
    if let (Some(map), Ok(Value::Object(fields))) = (v.as_object_mut(), serde_json::to_value(event))
    {
        map.extend(fields);
        if let Some(d) = diagnosis {
            map.insert("diagnosis".into(), brief(d));
        }
    }
    v
}

/// A document that is not an [`Event`] (the plan, a cordon, the summary) in the envelope.
pub fn doc_json(time: &str, kind: &str, fields: Value) -> Value {
    let mut v = json!({
        "apiVersion": crate::model::VMCTL_API_VERSION,
        "kind": "DrainEvent",
        "time": time,
        "type": kind,
    });
    if let (Some(map), Value::Object(fields)) = (v.as_object_mut(), fields) {
        map.extend(fields);
    }
    v
}

fn brief(d: &Diagnosis) -> Value {
    json!({
        "plane": d.plane,
        "cause": d.cause,
        "summary": d.summary,
        "nextSteps": d.next_steps,
    })
}

/// One line per event (several for a failed migration with its diagnosis).
pub fn event_lines(style: Style, event: &Event, diagnosis: Option<&Diagnosis>) -> Vec<String> {
    let vm = |ns: &str, vmi: &str| format!("vm {}/{}", printable(ns), printable(vmi));
    let line = match event {
        Event::Evicting {
            namespace,
            pod,
            vmi,
        } => match vmi {
            Some(v) => format!(
                "evicting pod {}/{} ({})",
                printable(namespace),
                printable(pod),
                vm(namespace, v)
            ),
            None => format!("evicting pod {}/{}", printable(namespace), printable(pod)),
        },
        // kubectl says "evicted" once the pod is gone; the acceptance is JSON only.
        Event::Evicted { .. } => return Vec::new(),
        Event::PodGone { namespace, pod } => {
            format!("pod/{} evicted ({})", printable(pod), printable(namespace))
        }
        Event::EvacuationStarted {
            namespace,
            vmi,
            node,
        } => format!(
            "{}: KubeVirt is evacuating it from {} (evacuationNodeName set); following its migration",
            vm(namespace, vmi),
            printable(node)
        ),
        Event::Waiting {
            namespace,
            pod,
            reason,
            pdb,
            message,
            retry_seconds,
            ..
        } => {
            // The target pod's message says what it is (the migration, named).
            let what = match (reason.as_str(), pdb) {
                ("pdb", Some(p)) => format!("waiting for PodDisruptionBudget {}: ", printable(p)),
                ("pdb", None) => "waiting for a PodDisruptionBudget: ".to_string(),
                ("target-pod", _) => String::new(),
                (r, _) => format!("refused ({r}): "),
            };
            format!(
                "pod {}/{}: {what}{}; asking again every {retry_seconds}s",
                printable(namespace),
                printable(pod),
                printable(message)
            )
        }
        Event::Migration {
            namespace,
            vmi,
            migration,
            phase,
            source_node,
            target_node,
            source_pod,
            target_pod,
            mode,
            point_of_no_return,
            attempt,
            previous_failure,
            backoff_until,
            incoming,
            ..
        } => {
            let mut l = format!(
                "{}: migration {} {} from {} to {}",
                vm(namespace, vmi),
                printable(migration),
                printable(if phase.is_empty() { "created" } else { phase }),
                printable(source_node.as_deref().unwrap_or("?")),
                printable(target_node.as_deref().unwrap_or("(target not chosen yet)"))
            );
            if *attempt > 1 {
                l.push_str(&format!(", attempt {attempt}"));
                if let Some(f) = previous_failure {
                    l.push_str(&format!(
                        " (attempt {} failed: {})",
                        attempt - 1,
                        printable(f)
                    ));
                }
            }
            if let Some(t) = backoff_until {
                l.push_str(&format!(
                    ", held by KubeVirt's backoff until {}",
                    printable(short_time(t))
                ));
            }
            if *incoming {
                l.push_str(" — into the drained node: the VM was not on it when the drain began; its target pod goes when the migration ends");
            }
            if source_pod.is_some() || target_pod.is_some() {
                l.push_str(&format!(
                    " (source pod {}, target pod {})",
                    printable(source_pod.as_deref().unwrap_or("-")),
                    printable(target_pod.as_deref().unwrap_or("-"))
                ));
            }
            if let Some(m) = mode {
                l.push_str(&format!(" mode {}", printable(m)));
            }
            if *point_of_no_return {
                l.push_str(&format!(
                    " — {}",
                    style.paint(
                        "post-copy: the point of no return (an abort or a network failure now loses the guest)",
                        Tone::Bad
                    )
                ));
            }
            l
        }
        Event::MigrationFailed {
            namespace,
            vmi,
            migration,
            reason,
            failures,
            retry,
            give_up_after,
        } => {
            let mut lines = vec![format!(
                "{}: migration {} failed: {}",
                vm(namespace, vmi),
                printable(migration),
                printable(reason.as_deref().unwrap_or("no reason recorded"))
            )];
            if let Some(d) = diagnosis {
                lines.push(format!(
                    "  diagnosis: {} · {}: {}",
                    d.plane.as_str(),
                    d.cause,
                    printable(&d.summary)
                ));
                if let Some(step) = d.next_steps.first() {
                    lines.push(format!("  next: {}", printable(step)));
                }
            }
            lines.push(if *retry {
                format!(
                    "  KubeVirt tries again after a backoff (20 s, doubling per failure); failure {failures} of the {give_up_after} after which vmctl stops waiting (--loop-failures)"
                )
            } else {
                "  no retry: the VM is no longer marked for evacuation, or vmctl stops waiting".to_string()
            });
            return lines;
        }
        Event::Moved {
            namespace,
            vmi,
            from,
            to,
            migration,
            attempt,
            predicted,
        } => format!(
            "{} moved {} → {}{}{}",
            vm(namespace, vmi),
            printable(from),
            printable(to),
            not_as_predicted(to, predicted.as_deref()),
            match (migration, attempt) {
                (Some(m), 2..) => format!(
                    " (migration {}, attempt {attempt}: KubeVirt's retry after {} failed)",
                    printable(m),
                    attempt - 1
                ),
                (Some(m), _) => format!(" (migration {})", printable(m)),
                (None, _) => String::new(),
            }
        ),
        Event::Arrived {
            namespace,
            vmi,
            node,
            migration,
        } => format!(
            "{} came onto {}{} (it was elsewhere when the drain began): the drain moves it on",
            vm(namespace, vmi),
            printable(node),
            migration
                .as_ref()
                .map(|m| format!(" by migration {}", printable(m)))
                .unwrap_or_default()
        ),
        Event::Progress {
            counts,
            waiting_for,
        } => {
            let mut lines = vec![counts_line(counts)];
            lines.extend(wait_lines(waiting_for));
            return lines;
        }
        Event::Stopped {
            namespace,
            vmi,
            back_on,
        } => format!(
            "{} shut down{}",
            vm(namespace, vmi),
            match back_on {
                Some(n) => format!(" (its VM started it again on {})", printable(n)),
                None => String::new(),
            }
        ),
        Event::Blocked {
            namespace,
            pod,
            vmi,
            reason,
            message,
        } => {
            let who = match vmi {
                Some(v) => vm(namespace, v),
                None => format!("pod {}/{}", printable(namespace), printable(pod)),
            };
            format!(
                "{} {}: {reason}: {}",
                who,
                style.paint("blocks the drain", Tone::Bad),
                printable(message)
            )
        }
    };
    vec![line]
}

/// The drain's numbers, each on its own: VMs moved/stopped/blocked, migrations in flight,
/// evictions accepted, pods gone. No ETA: a drain's end is not known before it comes.
pub fn counts_line(c: &Counts) -> String {
    let mut l = format!("{} of {} VMs moved", c.vms_moved, c.vms_total);
    if c.vms_stopped > 0 {
        l.push_str(&format!(", {} shut down", c.vms_stopped));
    }
    if c.vms_blocked > 0 {
        l.push_str(&format!(", {} blocked", c.vms_blocked));
    }
    l.push_str(&format!(
        " · {} in flight · {} accepted · {} of {} pods gone",
        plural(c.migrations_in_flight, "migration", "migrations"),
        plural(c.evictions_accepted, "eviction", "evictions"),
        c.pods_gone,
        c.pods_total
    ));
    l
}

/// `1 pod`, `2 pods`: the count with its noun, singular for 1.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// One line per pod the drain waits for, naming it and why.
pub fn wait_lines(waits: &[Wait]) -> Vec<String> {
    waits
        .iter()
        .map(|w| {
            let vm = w
                .vmi
                .as_ref()
                .map(|v| format!(" (vm {})", printable(v)))
                .unwrap_or_default();
            format!(
                "  waiting for pod {}/{}{vm}: {}",
                printable(&w.namespace),
                printable(&w.pod),
                printable(&w.message)
            )
        })
        .collect()
}

/// The repeat, every 30 s while nothing changes: one short line naming the pods still
/// waited for (their reasons were said when they began), cut to [`STILL_WAITING_WIDTH`].
pub fn still_waiting_line(waits: &[Wait]) -> String {
    let names = waits
        .iter()
        .map(|w| printable(&w.pod))
        .collect::<Vec<_>>()
        .join(", ");
    cut(
        &format!(
            "still waiting for {} {}: {names}",
            waits.len(),
            if waits.len() == 1 { "pod" } else { "pods" }
        ),
        STILL_WAITING_WIDTH,
    )
}

/// The widest the 30 s repeat gets.
pub const STILL_WAITING_WIDTH: usize = 160;

/// `s` cut to `max` characters, the cut marked with `…`.
fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

/// The live view's last line: the numbers and the first thing waited for.
pub fn totals_line(c: &Counts, waits: &[Wait], elapsed_secs: u64) -> String {
    let mut l = format!(
        "{} · {} elapsed",
        counts_line(c),
        crate::text::duration(elapsed_secs as i64)
    );
    if let Some(w) = waits.first() {
        l.push_str(&format!(
            " · waiting for {}: {}",
            printable(&w.pod),
            printable(&w.message)
        ));
        if waits.len() > 1 {
            l.push_str(&format!(" (+{} more)", waits.len() - 1));
        }
    }
    l
}

/// kubectl's warnings, one line per kind: `Warning: ignoring DaemonSet-managed Pods: a, b`.
pub fn pod_warnings(skipped: &[(String, String)], warned: &[(String, String)]) -> Vec<String> {
    let mut by_why: Vec<(&str, Vec<&str>)> = Vec::new();
    // kubectl skips a mirror pod without a word.
    let skipped = skipped
        .iter()
        .filter(|(_, why)| why != crate::policy::drain::evict::MIRROR_POD);
    for (pod, why) in skipped.chain(warned) {
        match by_why.iter_mut().find(|(w, _)| w == why) {
            Some((_, pods)) => pods.push(pod),
            None => by_why.push((why, vec![pod])),
        }
    }
    by_why
        .into_iter()
        .map(|(why, pods)| {
            format!(
                "Warning: {}: {}",
                printable(why),
                pods.iter()
                    .map(|p| printable(p))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect()
}

/// The drain's pods leave out every VM (`--pod-selector`): said instead of the VM plan.
pub fn no_vm_selected(vms: usize) -> String {
    format!("{vms} VM(s) on the node(s); --pod-selector selects none of their pods: they stay\n")
}

/// The question before shutting VMs down, each named with what happens to it next.
pub fn shutdown_question(shutdowns: &[String]) -> String {
    let mut q = format!("the drain shuts down {} VM(s):\n", shutdowns.len());
    for s in shutdowns {
        q.push_str(&format!("  {}\n", printable(s)));
    }
    q.push_str("shut them down? [y/N] ");
    q
}

/// ` (went to NODE; predicted OTHER)` when a VM did not go where the plan predicted (the
/// scheduler chose); nothing when it did or there was no prediction.
fn not_as_predicted(to: &str, predicted: Option<&str>) -> String {
    match predicted {
        Some(p) if p != to && !to.is_empty() => {
            format!(" (went to {}; predicted {})", printable(to), printable(p))
        }
        _ => String::new(),
    }
}

/// The summary, in lines.
pub fn summary_lines(style: Style, s: &Summary) -> Vec<String> {
    let nodes = s
        .nodes
        .iter()
        .map(|n| printable(n))
        .collect::<Vec<_>>()
        .join(", ");
    let a = &s.account;
    let mut out = vec![match s.result {
        DrainResult::Drained => s
            .nodes
            .iter()
            .map(|n| format!("node/{} drained", printable(n)))
            .collect::<Vec<_>>()
            .join("\n"),
        DrainResult::Blocked => format!(
            "{}: {nodes} not drained, {} left",
            style.paint("blocked", Tone::Bad),
            plural(a.pods_left, "pod", "pods")
        ),
        DrainResult::Timeout => format!("--timeout reached: {nodes} not drained yet"),
        DrainResult::Interrupted => format!("interrupted: {nodes} stays cordoned"),
        DrainResult::Refused => format!("not drained: nothing was changed on {nodes}"),
        // A dry run deletes nothing: its reasons are what the drain itself would refuse for.
        DrainResult::DryRun if !s.reasons.is_empty() => {
            format!("dry run: nothing was changed on {nodes}; the drain would refuse:")
        }
        DrainResult::DryRun => format!("dry run: nothing was changed on {nodes}"),
        DrainResult::HandedOff => {
            format!("{nodes}: every pod evicted or handed to KubeVirt; the VMs are on their way")
        }
    }];
    for r in &s.reasons {
        out.push(format!("  {}", printable(r)));
    }
    if !matches!(s.result, DrainResult::Refused | DrainResult::DryRun) {
        out.push(format!("  {}", counts_line(&a.counts)));
    }
    if !a.moved.is_empty() {
        out.push(format!("  moved ({}):", a.moved.len()));
        for m in &a.moved {
            out.push(format!(
                "    {}/{} {} → {}{}{}",
                printable(&m.namespace),
                printable(&m.vmi),
                printable(&m.from),
                printable(&m.to),
                not_as_predicted(&m.to, m.predicted.as_deref()),
                if m.attempt > 1 {
                    format!(" (attempt {}: KubeVirt's retry)", m.attempt)
                } else {
                    String::new()
                }
            ));
            if let Some(by) = &m.came_by {
                let last = out.len() - 1;
                out[last].push_str(&format!(
                    " (it came onto {} during the drain, by {})",
                    printable(&m.from),
                    printable(by)
                ));
            }
        }
    }
    if !a.stopped.is_empty() {
        out.push(format!("  shut down: {}", printable(&a.stopped.join(", "))));
    }
    if !a.migrating.is_empty() {
        out.push(format!("  still migrating ({}):", a.migrating.len()));
        for m in &a.migrating {
            out.push(format!(
                "    {}/{} {} {}{}{}",
                printable(&m.namespace),
                printable(&m.vmi),
                printable(m.migration.as_deref().unwrap_or("(no migration yet)")),
                printable(m.phase.as_deref().unwrap_or("")),
                m.into
                    .as_deref()
                    .map(|n| format!(" (into {})", printable(n)))
                    .unwrap_or_default(),
                if m.post_copy {
                    ", post-copy: past the point of no return (an abort or a network failure now loses the guest)"
                } else {
                    ""
                }
            ));
        }
    }
    if !a.blocked.is_empty() {
        out.push(format!("  blocked ({}):", a.blocked.len()));
        for b in &a.blocked {
            let who = match &b.vmi {
                Some(v) => format!("vm {}/{}", printable(&b.namespace), printable(v)),
                None => format!("pod {}/{}", printable(&b.namespace), printable(&b.pod)),
            };
            out.push(format!(
                "    {who}: {}: {}",
                printable(&b.reason),
                printable(&b.message)
            ));
        }
    }
    if s.result != DrainResult::Drained && !a.waiting_for.is_empty() {
        out.push(format!("  not gone yet ({}):", a.waiting_for.len()));
        out.extend(
            wait_lines(&a.waiting_for)
                .into_iter()
                .map(|l| format!("  {l}")),
        );
    }
    for r in &s.resume {
        out.push(format!("  {}", printable(r)));
    }
    out
}

/// A VM's line before its migration has bytes to show: no bar (never `0 B of 0 B`). The
/// VM's name first (whole, padded to [`WORDS_NAME`]), its state after it, cut to the
/// terminal's width at a word ([`VmLine::show`]).
fn words_style() -> ProgressStyle {
    ProgressStyle::with_template("  {prefix} {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
}

/// A VM's bar once virt-handler reports the migration's bytes: the data left of the total,
/// then the rates and the state, cut to the terminal's width at a word.
fn bytes_style() -> ProgressStyle {
    ProgressStyle::with_template("  {prefix} [{bar:10}] {bytes:>9}/{total_bytes:<9} {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

/// The columns a VM's name takes at least on its line, without and with the bar.
const WORDS_NAME: usize = 24;
const BYTES_NAME: usize = 20;
/// The columns of a line with the bar besides the name and the message (`  `, ` [bar:10] `,
/// `bytes/total ` at their width of 9; a wider count is cut by indicatif).
const BYTES_FIXED: usize = 2 + 1 + 12 + 1 + 9 + 1 + 9 + 1;

/// A live view's message in the `room` the terminal leaves it, cut after a whole word
/// (indicatif would cut it anywhere, or redraw a wrapped line as garbage), in the
/// terminal's charset.
fn fitted(text: &str, room: Option<usize>) -> String {
    let text = super::glyphs::for_terminal(text);
    match room {
        Some(room) => super::prose::one_line(&text, room.max(1)),
        None => text.into_owned(),
    }
}

/// One VM's line of the live view.
struct VmLine {
    bar: ProgressBar,
    /// `namespace/name`, escaped: shown whole.
    name: String,
    /// Its migration's phase, nodes and mode, or what it waits for.
    state: String,
    /// The rates, once the metrics have them.
    rates: String,
    bytes: bool,
}

impl VmLine {
    fn show(&self) {
        self.bar.set_style(if self.bytes {
            bytes_style()
        } else {
            words_style()
        });
        let (pad, fixed) = if self.bytes {
            (BYTES_NAME, BYTES_FIXED)
        } else {
            (WORDS_NAME, 3)
        };
        let name = format!("{:<pad$}", super::glyphs::for_terminal(&self.name));
        let room = super::table::terminal_width()
            .map(|w| w.saturating_sub(fixed + super::prose::columns(&name)));
        self.bar.set_prefix(name);
        // With the bar, the rates first (the state is cut first on a narrow terminal), but
        // post-copy before everything.
        let message = if self.rates.is_empty() || !self.bytes {
            self.state.clone()
        } else {
            format!(
                "{}{} · {}",
                if self.state.contains("POST-COPY") {
                    "POST-COPY · "
                } else {
                    ""
                },
                self.rates,
                self.state
            )
        };
        self.bar.set_message(fitted(&message, room));
    }
}

/// The live view on a terminal: the lines scroll above one line per VM on its way (phase,
/// source → target, mode; with the metrics a bar of the data remaining and the rates) and
/// the nodes' totals.
struct Live {
    multi: MultiProgress,
    totals: ProgressBar,
    vms: BTreeMap<(String, String), VmLine>,
    /// VMs moved, shut down or blocked: a later event of theirs (the VMIM's watch showing
    /// the end after the VMI's showed the new node) draws no line again.
    finished: std::collections::BTreeSet<(String, String)>,
}

impl Live {
    fn new() -> Live {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stdout());
        let totals = multi.add(ProgressBar::new_spinner());
        totals.set_style(
            // Cut to the terminal's width: a line that wraps is redrawn as garbage.
            ProgressStyle::with_template("{spinner} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        totals.enable_steady_tick(std::time::Duration::from_millis(250));
        Live {
            multi,
            totals,
            vms: BTreeMap::new(),
            finished: Default::default(),
        }
    }

    /// A VM's line: words only (what it waits for) until its migration reports bytes.
    fn line(&mut self, namespace: &str, vmi: &str) -> &mut VmLine {
        let multi = &self.multi;
        self.vms
            .entry((namespace.to_string(), vmi.to_string()))
            .or_insert_with(|| {
                let bar = multi.add(ProgressBar::new(0));
                let line = VmLine {
                    bar,
                    name: format!("{}/{}", printable(namespace), printable(vmi)),
                    state: String::new(),
                    rates: String::new(),
                    bytes: false,
                };
                line.show();
                line
            })
    }

    fn remove(&mut self, namespace: &str, vmi: &str) {
        self.finished
            .insert((namespace.to_string(), vmi.to_string()));
        if let Some(l) = self.vms.remove(&(namespace.to_string(), vmi.to_string())) {
            l.bar.finish_and_clear();
            self.multi.remove(&l.bar);
        }
    }

    /// What an event does to the lines.
    fn event(&mut self, event: &Event) {
        if let Event::EvacuationStarted { namespace, vmi, .. }
        | Event::Migration { namespace, vmi, .. } = event
            && self.finished.contains(&(namespace.clone(), vmi.clone()))
        {
            return;
        }
        match event {
            Event::EvacuationStarted { namespace, vmi, .. } => {
                let l = self.line(namespace, vmi);
                l.state = "marked; waiting for KubeVirt's migration".into();
                l.show();
            }
            Event::Migration {
                namespace,
                vmi,
                phase,
                source_node,
                target_node,
                mode,
                point_of_no_return,
                attempt,
                ..
            } => {
                let l = self.line(namespace, vmi);
                l.state = format!(
                    "{}{} {}→{}{}",
                    if *attempt > 1 {
                        format!("attempt {attempt}: ")
                    } else {
                        String::new()
                    },
                    printable(if phase.is_empty() { "created" } else { phase }),
                    printable(source_node.as_deref().unwrap_or("?")),
                    printable(target_node.as_deref().unwrap_or("?")),
                    match (mode, point_of_no_return) {
                        (_, true) => " POST-COPY (no return)".to_string(),
                        (Some(m), false) => format!(" {}", printable(m)),
                        (None, false) => String::new(),
                    }
                );
                // A new attempt, or one that stopped streaming: its old bytes are not its own.
                if phase != "Running" {
                    l.bytes = false;
                    l.rates.clear();
                }
                l.show();
            }
            Event::Moved { namespace, vmi, .. }
            | Event::Stopped { namespace, vmi, .. }
            | Event::Blocked {
                namespace,
                vmi: Some(vmi),
                ..
            } => self.remove(namespace, vmi),
            _ => {}
        }
    }
}

/// Where a drain's lines go: stdout, as lines or JSON objects; on a terminal the lines
/// scroll above the live bars.
pub struct DrainOutput {
    pub style: Style,
    /// `-o json|yaml`: one document per event (a JSON line, or a YAML document).
    pub json: bool,
    yaml: bool,
    /// Bars may be drawn (stdout is a terminal, no -o json|yaml) once [`Self::start_live`]
    /// is called: never before, so nothing draws over a question.
    bars: bool,
    live: std::sync::OnceLock<std::sync::Mutex<Live>>,
}

impl DrainOutput {
    /// `tty`: stdout is a terminal (bars); never with -o json|yaml.
    pub fn new(style: Style, output: OutputFormat, tty: bool) -> Self {
        let json = output.is_structured();
        DrainOutput {
            style,
            json,
            yaml: output == OutputFormat::Yaml,
            bars: tty && !json,
            live: std::sync::OnceLock::new(),
        }
    }

    /// Starts the live view (spinner and bars) on a terminal. Called once every question
    /// is answered: a spinner drawn while vmctl reads from the terminal erases the question.
    pub fn start_live(&self) {
        if self.bars {
            self.live.get_or_init(|| std::sync::Mutex::new(Live::new()));
        }
    }

    /// Runs `f` (a question read from the terminal) with the live view hidden, if it runs.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match self.live.get() {
            Some(live) => {
                let live = live.lock().unwrap_or_else(|e| e.into_inner());
                live.multi.suspend(f)
            }
            None => f(),
        }
    }

    fn live(&self) -> Option<&std::sync::Mutex<Live>> {
        self.live.get()
    }

    /// One document: a JSON line, or a YAML document of the stream.
    fn emit(&self, doc: &Value) -> crate::error::Result<()> {
        if self.yaml {
            super::write_stdout(&format!(
                "---\n{}",
                super::structured(OutputFormat::Yaml, doc)?
            ))
        } else {
            super::write_stdout(&format!("{}\n", super::json_line(doc)?))
        }
    }

    /// Lines to stdout, above the bars when there are bars.
    fn lines(&self, text: &str) -> crate::error::Result<()> {
        match self.live() {
            Some(live) => {
                let live = live.lock().unwrap_or_else(|e| e.into_inner());
                // Wrapped to the terminal as write_stdout wraps (a line indicatif lets the
                // terminal wrap is cleared wrong), in its charset.
                for l in text.lines() {
                    let l = super::glyphs::for_terminal(l);
                    let _ = live.multi.println(super::prose::for_stdout(&l));
                }
                Ok(())
            }
            None => super::write_stdout(text),
        }
    }

    pub fn event(
        &self,
        time: &str,
        event: &Event,
        diagnosis: Option<&Diagnosis>,
    ) -> crate::error::Result<()> {
        if self.json {
            return self.emit(&event_json(time, event, diagnosis));
        }
        if let Some(live) = self.live() {
            live.lock().unwrap_or_else(|e| e.into_inner()).event(event);
        }
        let clock = short_time(time);
        let mut text = String::new();
        for l in event_lines(self.style, event, diagnosis) {
            text.push_str(&format!("[{clock}] {l}\n"));
        }
        if text.is_empty() {
            return Ok(());
        }
        self.lines(&text)
    }

    /// Lines of vmctl's own (cluster text in them already escaped), each after the clock.
    pub fn text_lines(&self, time: &str, lines: &[String]) -> crate::error::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let clock = short_time(time);
        let text: String = lines.iter().map(|l| format!("[{clock}] {l}\n")).collect();
        self.lines(&text)
    }

    /// Bars are drawn (stdout is a terminal, no -o json|yaml).
    pub fn has_bars(&self) -> bool {
        self.bars
    }

    /// A VM's migration progress (bars only: off a terminal the phases are the lines).
    pub fn sample(&self, namespace: &str, vmi: &str, s: &crate::migration::JobSample) {
        let Some(live) = self.live() else {
            return;
        };
        let mut live = live.lock().unwrap_or_else(|e| e.into_inner());
        let total = s.total();
        if total == 0
            || live
                .finished
                .contains(&(namespace.to_string(), vmi.to_string()))
        {
            // No bytes yet: no bar (nor for a VM that has left).
            return;
        }
        let l = live.line(namespace, vmi);
        l.bar.set_length(total);
        l.bar.set_position(s.remaining().min(total));
        l.bytes = true;
        l.rates = format!(
            "{}/s, dirtying {}/s",
            crate::text::bytes(s.memory_bps),
            crate::text::bytes(s.dirty_rate_bps)
        );
        l.show();
    }

    /// The nodes' totals under the bars: VMs and pods left, the ETA.
    pub fn totals(&self, text: &str) {
        if let Some(live) = self.live() {
            live.lock()
                .unwrap_or_else(|e| e.into_inner())
                .totals
                .set_message(fitted(
                    &printable(text),
                    super::table::terminal_width().map(|w| w.saturating_sub(2)),
                ));
        }
    }

    /// A line of vmctl's own (already escaped where it carries cluster text), or its JSON.
    pub fn doc(
        &self,
        time: &str,
        kind: &str,
        fields: Value,
        line: &str,
    ) -> crate::error::Result<()> {
        if self.json {
            self.emit(&doc_json(time, kind, fields))
        } else {
            self.lines(&format!("[{}] {line}\n", short_time(time)))
        }
    }

    pub fn summary(&self, time: &str, s: &Summary) -> crate::error::Result<()> {
        if let Some(live) = self.live() {
            let mut live = live.lock().unwrap_or_else(|e| e.into_inner());
            let keys: Vec<(String, String)> = live.vms.keys().cloned().collect();
            for (ns, vmi) in keys {
                live.remove(&ns, &vmi);
            }
            live.totals.finish_and_clear();
            let _ = live.multi.clear();
        }
        if self.json {
            let fields = serde_json::to_value(s).unwrap_or(Value::Null);
            return self.emit(&doc_json(time, "summary", fields));
        }
        super::write_stdout(&format!("{}\n", summary_lines(self.style, s).join("\n")))
    }
}

/// `12:00:01` from an RFC 3339 time.
fn short_time(time: &str) -> &str {
    time.get(11..19).unwrap_or(time)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_text_is_escaped_and_post_copy_is_flagged() {
        let e = Event::Migration {
            namespace: "prod".into(),
            vmi: "db\u{1b}[2J".into(),
            migration: "m".into(),
            phase: "Running".into(),
            source_node: Some("node-1".into()),
            target_node: Some("node-2".into()),
            source_pod: Some("virt-launcher-db-a".into()),
            target_pod: Some("virt-launcher-db-b".into()),
            mode: Some("PostCopy".into()),
            point_of_no_return: true,
            evacuation: true,
            attempt: 1,
            previous_failure: None,
            backoff_until: None,
            incoming: false,
        };
        let lines = event_lines(Style { color: false }, &e, None);
        assert_eq!(lines.len(), 1);
        assert!(!lines[0].contains('\u{1b}'), "{lines:?}");
        assert!(lines[0].contains("point of no return"), "{lines:?}");
        assert!(lines[0].contains("source pod virt-launcher-db-a, target pod virt-launcher-db-b"));
        let v = event_json("2026-12-01T12:00:00Z", &e, None);
        assert_eq!(v["kind"], "DrainEvent");
        assert_eq!(v["type"], "migration");
        assert_eq!(v["pointOfNoReturn"], true);
        assert_eq!(v["targetPod"], "virt-launcher-db-b");
    }

    #[test]
    fn a_json_line_carries_no_raw_control_byte() {
        let e = Event::Blocked {
            namespace: "prod".into(),
            pod: "p".into(),
            vmi: None,
            reason: "refused".into(),
            message: "tenant text \u{9b}2J\u{1b}[31m\u{7f}".into(),
        };
        let line = crate::render::json_line(&event_json("t", &e, None)).unwrap();
        assert!(!line.contains('\n'));
        assert!(
            !line
                .chars()
                .any(|c| c.is_control() || ('\u{80}'..='\u{9f}').contains(&c)),
            "{line:?}"
        );
        assert!(line.contains("\\u009b") && line.contains("\\u001b") && line.contains("\\u007f"));
        let back: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back["message"], "tenant text \u{9b}2J\u{1b}[31m\u{7f}");
        let plain = event_lines(Style { color: false }, &e, None).join("\n");
        assert!(!plain.chars().any(|c| c.is_control()), "{plain:?}");
    }

    /// The target pod's refusal says what it is once (issue 33: "a migration's target
    /// pod:" twice), and names the migration.
    #[test]
    fn a_target_pod_is_named_once_with_its_migration() {
        let e = Event::Waiting {
            namespace: "prod".into(),
            pod: "virt-launcher-mail-01-t1".into(),
            vmi: Some("mail-01".into()),
            reason: "target-pod".into(),
            pdb: None,
            message: "target pod of post-copy migration m into node-1 (node-2 → node-1), past the point of no return (an abort now loses the guest): it goes when the migration ends".into(),
            retry_seconds: 5,
        };
        let lines = event_lines(Style { color: false }, &e, None);
        assert_eq!(
            lines,
            [
                "pod prod/virt-launcher-mail-01-t1: target pod of post-copy migration m into node-1 (node-2 → node-1), past the point of no return (an abort now loses the guest): it goes when the migration ends; asking again every 5s"
            ]
        );
        let generic = Event::Waiting {
            namespace: "prod".into(),
            pod: "virt-launcher-mail-01-t1".into(),
            vmi: Some("mail-01".into()),
            reason: "target-pod".into(),
            pdb: None,
            message: "a migration's target pod: it goes when the migration ends".into(),
            retry_seconds: 5,
        };
        let line = event_lines(Style { color: false }, &generic, None).join("\n");
        assert_eq!(line.matches("target pod").count(), 1, "{line}");
    }

    /// The totals say what is waited for, count accepted evictions, pods gone and
    /// migrations apart, and show no ETA.
    #[test]
    fn the_totals_name_what_is_waited_for_and_show_no_eta() {
        let counts = Counts {
            pods_total: 6,
            evictions_accepted: 4,
            pods_gone: 3,
            migrations_in_flight: 1,
            vms_total: 3,
            vms_moved: 1,
            vms_stopped: 1,
            vms_blocked: 0,
        };
        let waits = vec![Wait {
            namespace: "prod".into(),
            pod: "virt-launcher-web-01-abcde".into(),
            vmi: Some("web-01".into()),
            reason: "migrating".into(),
            migration: Some("kubevirt-evacuation-x".into()),
            message: "attempt 1, migration kubevirt-evacuation-x, Running node-1 → node-2".into(),
        }];
        let l = totals_line(&counts, &waits, 95);
        assert_eq!(
            l,
            "1 of 3 VMs moved, 1 shut down · 1 migration in flight · 4 evictions accepted · 3 of 6 pods gone · 1m35s elapsed · waiting for virt-launcher-web-01-abcde: attempt 1, migration kubevirt-evacuation-x, Running node-1 → node-2"
        );
        assert!(!l.contains("ETA"));
        // Singular for 1, plural otherwise.
        let one = Counts {
            evictions_accepted: 1,
            migrations_in_flight: 2,
            ..counts.clone()
        };
        let c = counts_line(&one);
        assert!(
            c.contains("· 2 migrations in flight · 1 eviction accepted ·"),
            "{c}"
        );
        let lines = event_lines(
            Style { color: false },
            &Event::Progress {
                counts,
                waiting_for: waits,
            },
            None,
        );
        assert_eq!(lines.len(), 2);
        assert!(lines[1].starts_with(
            "  waiting for pod prod/virt-launcher-web-01-abcde (vm web-01): attempt 1"
        ));
    }
}
