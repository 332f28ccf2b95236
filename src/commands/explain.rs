//! `vmctl explain NAME`: which plane failed a migration, why, the evidence, and what to do.
//!
//! gather (find the migration or VMI, then read everything about it at once) → decide
//! (`triage::diagnose`, pure) → render. The number of requests does not depend on how many
//! migrations or events the VMI has: each kind is listed once and filtered here.

use serde::Serialize;

use crate::cli::ExplainArgs;
use crate::cluster::source::list_lenient;
use crate::cluster::{Kind, Query, get_as, list_as};
use crate::context::{ClockSource, Context};
use crate::error::{Error, Result, exit};
use crate::model::vmim::{MigrationPhase, VMI_NAME_LABEL};
use crate::model::{
    Event, KubeVirt, MigrationPolicy, Namespace, Pod, PodDisruptionBudget, VirtualMachine,
    VirtualMachineInstance, VirtualMachineInstanceMigration,
};
use crate::names::suggest;
use crate::policy::pods::{LAUNCHER_LABEL, LAUNCHER_VALUE};
use crate::render::table::{TableBuilder, plain};
use crate::render::{OutputFormat, Style, Tone, fmt, structured, write_stdout};
use crate::triage::{
    Confidence, Diagnosis, Evidence, HistoryEntry, MigrationLoad, Outcome, Source, TimelineEntry,
    Unexplained, Unread, diagnose, history,
};

// ---------------------------------------------------------------- gather

pub use crate::names::Target;

/// `explain`'s target: a bare name is a migration.
pub fn parse_target(text: &str) -> Result<Target> {
    crate::names::parse_target(text, crate::names::Takes::MigrationFirst, "explain")
}

/// The object the command is about, found by name.
struct Resolved {
    namespace: String,
    vmi_name: String,
    migration: Option<VirtualMachineInstanceMigration>,
    /// Already read while resolving (Some(None): read, and the VMI does not exist).
    vmi: Option<Option<VirtualMachineInstance>>,
    migrations: Option<Vec<VirtualMachineInstanceMigration>>,
    /// Said on stderr: how the name was understood.
    note: Option<String>,
}

fn by_name(scope_ns: Option<&str>, name: &str) -> Result<Query> {
    Query::namespace(scope_ns).with_fields(&format!("metadata.name={name}"))
}

fn namespaces_of<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut list: Vec<String> = names.into_iter().map(str::to_string).collect();
    list.sort();
    list.dedup();
    list
}

fn ambiguous(what: &str, name: &str, namespaces: &[String]) -> Error {
    Error::usage(format!(
        "{what} {name:?} exists in several namespaces ({}): pick one with -n NAMESPACE",
        namespaces.join(", ")
    ))
}

/// The migration a `vm/NAME` question is about: the one in flight (there is at most one
/// that works; a newer one racing it fails at once), else the newest by creation.
fn current(
    migrations: &[VirtualMachineInstanceMigration],
) -> Option<&VirtualMachineInstanceMigration> {
    migrations.iter().max_by_key(|m| {
        (
            !m.is_final(),
            m.metadata.creation_timestamp.as_ref().map(|t| t.0),
            m.name().to_string(),
        )
    })
}

async fn resolve(ctx: &Context, target: &Target) -> Result<Resolved> {
    let scope = ctx.scope.namespace();
    match target {
        Target::Migration(name) => {
            let found: Vec<VirtualMachineInstanceMigration> = list_as(
                &ctx.source,
                Kind::VirtualMachineInstanceMigration,
                &by_name(scope, name)?,
            )
            .await?;
            match found.len() {
                0 => {
                    // `explain vm-a` where vm-a is a VM, not a migration: explain the VM.
                    let vmis: Vec<VirtualMachineInstance> = list_as(
                        &ctx.source,
                        Kind::VirtualMachineInstance,
                        &by_name(scope, name)?,
                    )
                    .await?;
                    if vmis.len() == 1 {
                        let mut r = resolve_vmi(ctx, name).await?;
                        r.note = Some(format!(
                            "no migration is named {name:?}; explaining the VMI {}/{name} instead",
                            r.namespace
                        ));
                        return Ok(r);
                    }
                    Err(not_found(ctx, "migration", name).await)
                }
                1 => {
                    let m = found.into_iter().next().ok_or_else(|| {
                        Error::Internal("a list of one migration was empty".into())
                    })?;
                    let vmi_name = if m.spec.vmi_name.is_empty() {
                        m.metadata
                            .labels
                            .as_ref()
                            .and_then(|l| l.get(VMI_NAME_LABEL))
                            .cloned()
                            .unwrap_or_default()
                    } else {
                        m.spec.vmi_name.clone()
                    };
                    Ok(Resolved {
                        namespace: m.namespace().to_string(),
                        vmi_name,
                        migration: Some(m),
                        vmi: None,
                        migrations: None,
                        note: None,
                    })
                }
                _ => Err(ambiguous(
                    "migration",
                    name,
                    &namespaces_of(found.iter().map(|m| m.namespace())),
                )),
            }
        }
        Target::Vmi(name) => resolve_vmi(ctx, name).await,
    }
}

async fn resolve_vmi(ctx: &Context, name: &str) -> Result<Resolved> {
    let scope = ctx.scope.namespace();
    let vmim_query = Query::namespace(scope).with_label(&format!("{VMI_NAME_LABEL}={name}"))?;
    let vmi_query = by_name(scope, name)?;
    let (vmis, vmims) = tokio::try_join!(
        list_as::<VirtualMachineInstance>(&ctx.source, Kind::VirtualMachineInstance, &vmi_query),
        list_as::<VirtualMachineInstanceMigration>(
            &ctx.source,
            Kind::VirtualMachineInstanceMigration,
            &vmim_query
        ),
    )?;
    let namespaces = namespaces_of(
        vmis.iter()
            .map(|v| v.namespace())
            .chain(vmims.iter().map(|m| m.namespace())),
    );
    let namespace = match namespaces.as_slice() {
        [] => return Err(not_found(ctx, "VM", name).await),
        [one] => one.clone(),
        _ => return Err(ambiguous("VM", name, &namespaces)),
    };
    let vmi = vmis.into_iter().find(|v| v.namespace() == namespace);
    let migrations: Vec<VirtualMachineInstanceMigration> = vmims
        .into_iter()
        .filter(|m| m.namespace() == namespace)
        .collect();
    Ok(Resolved {
        namespace,
        vmi_name: name.to_string(),
        migration: current(&migrations).cloned(),
        vmi: Some(vmi),
        migrations: Some(migrations),
        note: None,
    })
}

/// A not-found error with close names from the scope.
async fn not_found(ctx: &Context, what: &str, name: &str) -> Error {
    let scope = ctx.scope.query();
    let mut candidates: Vec<String> = Vec::new();
    if let Ok(ms) = list_as::<VirtualMachineInstanceMigration>(
        &ctx.source,
        Kind::VirtualMachineInstanceMigration,
        &scope,
    )
    .await
    {
        candidates.extend(ms.iter().map(|m| m.name().to_string()));
    }
    if let Ok(vs) =
        list_as::<VirtualMachineInstance>(&ctx.source, Kind::VirtualMachineInstance, &scope).await
    {
        candidates.extend(vs.iter().map(|v| format!("vm/{}", v.name())));
    }
    let bare: Vec<&str> = candidates
        .iter()
        .map(|c| c.strip_prefix("vm/").unwrap_or(c))
        .collect();
    let close: Vec<String> = suggest(name, bare.iter().copied())
        .into_iter()
        .filter_map(|c| {
            candidates
                .iter()
                .find(|full| full.strip_prefix("vm/").unwrap_or(full) == c)
                .cloned()
        })
        .collect();
    let where_ = match ctx.scope.namespace() {
        Some(ns) => format!(" in namespace {ns}"),
        None => String::new(),
    };
    let mut err = Error::not_found(format!("{what} {name:?}{where_}"));
    if !close.is_empty() {
        err = err.with_hint(format!("did you mean {}?", close.join(", ")));
    }
    if what == "VM" {
        let stopped = list_as::<VirtualMachine>(
            &ctx.source,
            Kind::VirtualMachine,
            &Query::namespace(ctx.scope.namespace()),
        )
        .await
        .ok()
        .and_then(|vms| vms.into_iter().find(|vm| vm.name() == name));
        if let Some(vm) = stopped {
            err = err.with_hint(format!(
                "the VM {}/{name} exists but is not running (runStrategy {}): it has no VMI, and KubeVirt deletes the migrations of a VMI that is gone",
                vm.namespace(),
                vm.run_strategy()
            ));
        }
    } else {
        err = err.with_hint(
            "KubeVirt keeps only the newest 5 finished migrations per VMI, and none of a VMI that is gone; try vmi/NAME",
        );
    }
    if ctx.scope.namespace().is_some() {
        err = err.with_hint("look in another namespace with -n NAMESPACE, or in all with -A");
    }
    err
}

/// What could not be read: a note for the operator and, as data, for the diagnosis.
#[derive(Default)]
struct Unreadable {
    notes: Vec<String>,
    unread: Vec<Unread>,
}

/// Cluster-wide objects a namespaced user may not be allowed to read: say so and go on.
fn tolerate<T: Default>(
    source: Source,
    what: &str,
    without: &str,
    result: Result<T>,
    unreadable: &mut Unreadable,
) -> Result<T> {
    match result {
        Ok(v) => Ok(v),
        // Forbidden, not served, or still failing after the retries (429, 5xx): an optional
        // read says what is assumed without it and the diagnosis goes on.
        Err(Error::Api {
            status: Some(status @ (403 | 404 | 429 | 500..=599)),
            message,
            ..
        }) => {
            unreadable
                .notes
                .push(format!("could not read {what} ({message}); {without}"));
            unreadable.unread.push(Unread {
                source,
                status: Some(status),
                message,
            });
            Ok(T::default())
        }
        Err(e) => Err(e),
    }
}

/// The evidence about one migration vmctl followed (or created), read exactly as `explain`
/// reads it, so `migrate` prints the diagnosis `explain` would give. `last_seen` is the
/// migration as vmctl last saw it: when the object is gone by now (an abort deletes it),
/// the diagnosis rests on that copy instead of finding "no migration".
pub async fn evidence_for_migration(
    ctx: &Context,
    last_seen: &VirtualMachineInstanceMigration,
    vmi_name: &str,
    notes: &mut Vec<String>,
) -> Result<Evidence> {
    let resolved = Resolved {
        namespace: last_seen.namespace().to_string(),
        vmi_name: vmi_name.to_string(),
        // Finished migrations are never Pending: no cluster load to read.
        migration: None,
        vmi: None,
        migrations: None,
        note: None,
    };
    let namespace = resolved.namespace.clone();
    let name = last_seen.name().to_string();
    let mut evidence = gather(ctx, resolved, notes).await?;
    // The object as it is now, when it still exists; the copy vmctl last saw otherwise.
    let fresh = evidence
        .migrations
        .iter()
        .find(|m| m.name() == name && m.uid() == last_seen.uid())
        .cloned();
    if let Some(fresh) = fresh {
        evidence.migration = Some(fresh);
    } else {
        evidence.migration = Some(last_seen.clone());
        evidence.migrations.push(last_seen.clone());
        notes.push(format!(
            "the migration {namespace}/{name} no longer exists (KubeVirt deletes aborted migrations): the diagnosis uses the copy vmctl last saw"
        ));
    }
    Ok(evidence)
}

async fn gather(ctx: &Context, resolved: Resolved, notes: &mut Vec<String>) -> Result<Evidence> {
    let mut unreadable = Unreadable::default();
    let ns = resolved.namespace.clone();
    let vmi_name = resolved.vmi_name.clone();
    let source = &ctx.source;
    let vmi_known = resolved.vmi.clone();
    let migrations_known = resolved.migrations.clone();
    let vmi_fut = async {
        match vmi_known {
            Some(v) => Ok(v),
            None if vmi_name.is_empty() => Ok(None),
            None => {
                get_as::<VirtualMachineInstance>(
                    source,
                    Kind::VirtualMachineInstance,
                    Some(&ns),
                    &vmi_name,
                )
                .await
            }
        }
    };
    let migrations_fut = async {
        match migrations_known {
            Some(m) => Ok(m),
            None if vmi_name.is_empty() => Ok(Vec::new()),
            None => {
                let q = Query::namespace(Some(&ns))
                    .with_label(&format!("{VMI_NAME_LABEL}={vmi_name}"))?;
                list_as::<VirtualMachineInstanceMigration>(
                    source,
                    Kind::VirtualMachineInstanceMigration,
                    &q,
                )
                .await
            }
        }
    };
    let pod_query =
        Query::namespace(Some(&ns)).with_label(&format!("{LAUNCHER_LABEL}={LAUNCHER_VALUE}"))?;
    let event_query = Query::namespace(Some(&ns));
    let cluster = Query::all();
    let (vmi, migrations, pods, events, kubevirts, policies, namespace, pdbs) = tokio::join!(
        vmi_fut,
        migrations_fut,
        list_as::<Pod>(source, Kind::Pod, &pod_query),
        // Lenient: an Event anyone in the namespace wrote badly costs that Event only.
        list_lenient::<Event>(source, Kind::Event, &event_query),
        list_as::<KubeVirt>(source, Kind::KubeVirt, &cluster),
        list_as::<MigrationPolicy>(source, Kind::MigrationPolicy, &cluster),
        get_as::<Namespace>(source, Kind::Namespace, None, &ns),
        list_as::<PodDisruptionBudget>(source, Kind::PodDisruptionBudget, &event_query),
    );
    let vmi = vmi?;
    let pods = pods?;
    let events = tolerate(
        Source::Events,
        "events",
        "the diagnosis rests on object status alone",
        events.map(|(events, skipped)| {
            for s in skipped {
                ctx.warn(format!("skipped, it does not decode: {s}"));
            }
            events
        }),
        &mut unreadable,
    )?;
    let kubevirt = tolerate(
        Source::KubeVirt,
        "the KubeVirt CR",
        "KubeVirt's defaults are assumed",
        kubevirts,
        &mut unreadable,
    )?
    .into_iter()
    .next();
    let policies = tolerate(
        Source::MigrationPolicies,
        "MigrationPolicies",
        "no policy is assumed to apply",
        policies,
        &mut unreadable,
    )?;
    let namespace = tolerate(
        Source::Namespace,
        "the Namespace",
        "policies selecting namespace labels are not matched",
        namespace,
        &mut unreadable,
    )?;
    let pdbs = tolerate(
        Source::PodDisruptionBudgets,
        "PodDisruptionBudgets",
        "a budget that refuses the launcher pod's eviction is not seen",
        pdbs,
        &mut unreadable,
    )?;
    let mut migrations = migrations?;
    if let Some(m) = &resolved.migration
        && !migrations
            .iter()
            .any(|x| x.uid() == m.uid() && x.name() == m.name())
    {
        migrations.push(m.clone());
    }

    // Only a Pending migration waits for the parallel limits; only then is the cluster's load read.
    let pending = resolved
        .migration
        .as_ref()
        .is_some_and(|m| m.phase() == MigrationPhase::Pending);
    let node = vmi.as_ref().and_then(|v| v.status.node_name.clone());
    let load = match (pending, node) {
        (true, Some(node)) => {
            let on_node = Query::all().with_label(&format!("kubevirt.io/nodeName={node}"))?;
            let everywhere = Query::all();
            let (all, vmis) = tokio::try_join!(
                list_as::<VirtualMachineInstanceMigration>(
                    source,
                    Kind::VirtualMachineInstanceMigration,
                    &everywhere
                ),
                list_as::<VirtualMachineInstance>(source, Kind::VirtualMachineInstance, &on_node),
            )?;
            Some(MigrationLoad {
                migrations: all,
                vmis_on_node: vmis
                    .iter()
                    .map(|v| format!("{}/{}", v.namespace(), v.name()))
                    .collect(),
            })
        }
        _ => None,
    };

    notes.extend(unreadable.notes);
    Ok(Evidence {
        now: ctx.now,
        migration: resolved.migration,
        vmi_namespace: ns,
        vmi_name,
        vmi,
        migrations,
        pods,
        events,
        kubevirt,
        policies,
        namespace,
        load,
        unread: unreadable.unread,
        pdbs,
    })
}

// ---------------------------------------------------------------- decide

/// The `-o json|yaml` document: the diagnosis with its envelope.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExplainReport {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub as_of: String,
    pub source: String,
    /// `status.observedKubeVirtVersion` of the KubeVirt CR, when found.
    pub kubevirt_version: Option<String>,
    #[serde(flatten)]
    pub diagnosis: Diagnosis,
    /// With --history: every migration of the VMI, oldest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<HistoryEntry>>,
    /// What vmctl could not read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What was said about the input on stderr (unknown values, duplicates …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

pub fn build_report(
    evidence: &Evidence,
    with_history: bool,
    source: &str,
    notes: Vec<String>,
) -> ExplainReport {
    ExplainReport {
        api_version: crate::model::VMCTL_API_VERSION,
        kind: "Diagnosis",
        as_of: evidence.now.to_string(),
        source: source.to_string(),
        kubevirt_version: evidence
            .kubevirt
            .as_ref()
            .and_then(KubeVirt::version)
            .map(str::to_string),
        diagnosis: diagnose(evidence),
        history: with_history.then(|| history(evidence)),
        notes,
        warnings: Vec::new(),
    }
}

// ---------------------------------------------------------------- render

fn clock_note(clock: ClockSource) -> &'static str {
    match clock {
        ClockSource::System => "",
        ClockSource::Given => " (given)",
        ClockSource::Captured => " (snapshot capture time)",
        ClockSource::NewestInSnapshot => " (newest timestamp in the snapshot)",
    }
}

fn outcome_tone(o: Outcome) -> Tone {
    match o {
        Outcome::Succeeded => Tone::Good,
        Outcome::InProgress => Tone::Strong,
        Outcome::Blocked | Outcome::Aborted => Tone::Warn,
        Outcome::Failed => Tone::Bad,
        Outcome::NoMigration => Tone::Dim,
    }
}

/// `02:44:10` when the whole timeline is one UTC day, else `2026-11-29 02:44:10`.
fn time_cell(entry: &TimelineEntry, one_day: bool) -> String {
    let t = entry.time.trim_end_matches('Z').replace('T', " ");
    if one_day {
        t.split(' ').nth(1).unwrap_or(&t).to_string()
    } else {
        t
    }
}

fn day(time: &str) -> &str {
    time.split('T').next().unwrap_or(time)
}

fn clip(text: &str, wide: bool) -> String {
    const MAX: usize = 110;
    if wide || text.chars().count() <= MAX {
        text.to_string()
    } else {
        let cut: String = text.chars().take(MAX - 1).collect();
        format!("{cut}…")
    }
}

/// The timeline as a table; public for snapshot tests.
pub fn render_timeline(timeline: &[TimelineEntry], style: Style, wide: bool) -> String {
    let Some(first) = timeline.first() else {
        return "  (nothing on record)\n".into();
    };
    let first_day = day(&first.time);
    let one_day = timeline.iter().all(|e| {
        day(&e.time) == first_day && e.last_time.as_deref().is_none_or(|l| day(l) == first_day)
    });
    let mut t = TableBuilder::new(style, &["time", "+step", "object", "what", "detail"]);
    for e in timeline {
        let step = match e.since_previous_seconds {
            None => "-".to_string(),
            Some(s) => format!("+{}", fmt::duration(s)),
        };
        let mut what = e.what.clone();
        if let Some(n) = e.count {
            what.push_str(&format!(" ×{n}"));
            if let Some(last) = &e.last_time {
                let last = last.trim_end_matches('Z').replace('T', " ");
                let last = if one_day {
                    last.split(' ').nth(1).unwrap_or(&last).to_string()
                } else {
                    last
                };
                what.push_str(&format!(" (last {last})"));
            }
        }
        let tone = if e.what.starts_with("Warning") || e.what.contains("failed") {
            Tone::Warn
        } else {
            Tone::Plain
        };
        t.row(vec![
            plain(time_cell(e, one_day)),
            (step, Tone::Dim),
            plain(fmt::printable(&e.object)),
            (fmt::printable(&what), tone),
            plain(clip(
                &fmt::printable(e.detail.as_deref().unwrap_or("")),
                wide,
            )),
        ]);
    }
    let header = if one_day {
        format!("Timeline ({first_day}, UTC):\n")
    } else {
        "Timeline (UTC):\n".to_string()
    };
    let body: String = t.render().lines().map(|l| format!("  {l}\n")).collect();
    header + &body
}

fn route_line(d: &Diagnosis) -> Option<String> {
    let m = d.migration.as_ref()?;
    let mut parts = vec![format!(
        "{} → {}",
        m.source_node.as_deref().unwrap_or("?"),
        m.target_node.as_deref().unwrap_or("?")
    )];
    parts.push(format!("phase {}", m.phase));
    if let Some(mode) = &m.mode {
        parts.push(format!("mode {mode}"));
    }
    match (m.elapsed_seconds, m.budget_seconds) {
        (Some(e), Some(b)) if b > 0 => parts.push(format!(
            "streamed {} of a {} budget",
            fmt::duration(e),
            fmt::duration(b as i64)
        )),
        (Some(e), _) => parts.push(format!("streamed {}", fmt::duration(e))),
        (None, _) => parts.push("never streamed".into()),
    }
    if let Some(p) = &m.policy {
        parts.push(format!("policy {p}"));
    }
    Some(parts.join(" · "))
}

pub fn render_table(report: &ExplainReport, style: Style, wide: bool, clock: &str) -> String {
    let d = &report.diagnosis;
    let mut out = String::new();
    let kv = match &report.kubevirt_version {
        Some(v) => format!("KubeVirt {v}"),
        None => "KubeVirt version unknown".to_string(),
    };
    let header = match &d.migration {
        Some(m) if m.object_exists => format!(
            "Migration {}/{} · VMI {}/{} · {kv}",
            m.namespace, m.name, d.vmi.namespace, d.vmi.name
        ),
        Some(m) => format!(
            "Migration uid {} (object gone; from the VMI's migrationState) · VMI {}/{} · {kv}",
            m.uid.as_deref().unwrap_or("?"),
            d.vmi.namespace,
            d.vmi.name
        ),
        None => format!(
            "VMI {}/{} (no migration on record) · {kv}",
            d.vmi.namespace, d.vmi.name
        ),
    };
    out.push_str(&fmt::printable(&header));
    out.push('\n');
    out.push_str(&fmt::printable(&format!(
        "as of {}{clock} · {}",
        report.as_of, report.source
    )));
    out.push_str("\n\n");
    let head = format!(
        "{} · {} · {}{}",
        d.outcome.as_str().to_uppercase(),
        d.plane.as_str(),
        d.cause,
        if d.inferred { " (inferred)" } else { "" }
    );
    out.push_str(&style.paint(&head, outcome_tone(d.outcome)));
    out.push('\n');
    out.push_str(&fmt::printable(&d.summary));
    out.push('\n');
    if let Some(route) = route_line(d) {
        out.push_str(&style.paint(&route, Tone::Dim));
        out.push('\n');
    }
    out.push_str(&confidence_line(d, style));

    if !d.attention.is_empty() {
        out.push_str("\nAttention:\n");
        for a in &d.attention {
            let tone = if a.starts_with("POINT OF NO RETURN") {
                Tone::Bad
            } else {
                Tone::Warn
            };
            out.push_str(&format!(
                "  {} {}\n",
                style.paint("!", tone),
                fmt::printable(a)
            ));
        }
    }

    if !d.pods.is_empty() {
        out.push_str("\nLauncher pods (read the logs of the live one):\n");
        let mut t = TableBuilder::new(style, &["role", "pod", "node", "phase", "live"]);
        for p in &d.pods {
            let phase = if p.exists {
                p.phase.clone().unwrap_or_else(|| "?".into())
            } else {
                "gone".into()
            };
            t.row(vec![
                plain(p.role.clone()),
                plain(p.name.clone().unwrap_or_else(|| "?".into())),
                plain(p.node.clone().unwrap_or_else(|| "-".into())),
                (phase, if p.exists { Tone::Plain } else { Tone::Dim }),
                if p.live {
                    ("yes".into(), Tone::Good)
                } else {
                    ("no".into(), Tone::Dim)
                },
            ]);
        }
        for l in t.render().lines() {
            out.push_str(&format!("  {l}\n"));
        }
    }

    out.push_str("\nEvidence:\n");
    for f in &d.evidence {
        // Quote values whose edges would vanish on screen (`Live migration aborted `).
        let value = if f.value.trim() != f.value || f.value.is_empty() {
            format!("{:?}", f.value)
        } else {
            fmt::printable(&f.value)
        };
        out.push_str(&format!(
            "  {} {} = {value}",
            fmt::printable(&f.object),
            f.field
        ));
        if let Some(n) = &f.note {
            out.push_str(&style.paint(&format!("  ({})", fmt::printable(n)), Tone::Dim));
        }
        out.push('\n');
    }

    out.push_str(&render_unexplained(&d.unexplained, style, wide));

    out.push('\n');
    out.push_str(&render_timeline(&d.timeline, style, wide));

    if !d.next_steps.is_empty() {
        out.push_str("\nNext steps:\n");
        for (i, s) in d.next_steps.iter().enumerate() {
            out.push_str(&format!("  {}. {}\n", i + 1, fmt::printable(s)));
        }
    }

    if wide {
        out.push_str(&format!(
            "\nRule {} ({}):\n  reads: {}\n  advice: {}\n",
            d.rule.id,
            d.rule.plane.as_str(),
            d.rule.reads.join("; "),
            d.rule.advice
        ));
        if let Some(m) = &d.migration {
            out.push_str(&format!(
                "  migration configuration: {}\n  migrationState read from: {}\n",
                m.configuration_from,
                m.state_from
                    .as_deref()
                    .unwrap_or("(none: it describes no migration state)")
            ));
        }
    }

    if let Some(h) = &report.history {
        out.push_str(&render_history(h, style, &d.vmi.namespace, &d.vmi.name));
    }
    // The notes (what could not be read) are among the assumptions.
    if !d.assumptions.is_empty() {
        out.push_str("\nAssumptions (what could not be read):\n");
        for a in &d.assumptions {
            out.push_str(&format!("  - {}\n", fmt::printable(a)));
        }
    }
    out
}

fn confidence_line(d: &Diagnosis, style: Style) -> String {
    let why = match d.confidence {
        Confidence::High => "read from status, nothing unexplained".to_string(),
        Confidence::Medium if d.inferred => "the cause is inferred".to_string(),
        Confidence::Medium => "the cause rests on events alone".to_string(),
        Confidence::Low => {
            let mut why = Vec::new();
            if d.cause == "unknown" {
                why.push("the cause is unknown".to_string());
            }
            match d.unexplained.len() {
                0 => {}
                1 => why.push("1 warning or condition is unexplained".to_string()),
                n => why.push(format!("{n} warnings or conditions are unexplained")),
            }
            match d.assumptions.len() {
                0 => {}
                1 => why.push("1 assumption".to_string()),
                n => why.push(format!("{n} assumptions")),
            }
            why.join(", ")
        }
    };
    let tone = match d.confidence {
        Confidence::High => Tone::Dim,
        Confidence::Medium => Tone::Plain,
        Confidence::Low => Tone::Warn,
    };
    format!(
        "{}\n",
        style.paint(
            &format!("confidence {} ({why})", d.confidence.as_str()),
            tone
        )
    )
}

/// Warnings and abnormal conditions the diagnosis does not account for; cluster text escaped.
fn render_unexplained(items: &[Unexplained], style: Style, wide: bool) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut t = TableBuilder::new(style, &["time", "object", "reason", "count", "message"]);
    for u in items {
        t.row(vec![
            plain(
                u.time
                    .as_deref()
                    .map(|t| t.trim_end_matches('Z').replace('T', " "))
                    .unwrap_or_else(|| "-".into()),
            ),
            plain(fmt::printable(&u.object)),
            (
                fmt::printable(&if u.source == "event" {
                    format!("Warning {}", u.reason)
                } else {
                    u.reason.clone()
                }),
                Tone::Warn,
            ),
            plain(
                u.count
                    .map(|c| format!("×{c}"))
                    .unwrap_or_else(|| "-".into()),
            ),
            plain(clip(&fmt::printable(&u.message), wide)),
        ]);
    }
    let body: String = t.render().lines().map(|l| format!("  {l}\n")).collect();
    format!(
        "\nUnexplained (on record in the migration's window, not accounted for by the diagnosis):\n{body}"
    )
}

fn render_history(h: &[HistoryEntry], style: Style, ns: &str, vmi: &str) -> String {
    let mut out = format!(
        "\nHistory of VMI {ns}/{vmi} ({} migrations, oldest first):\n",
        h.len()
    );
    if h.is_empty() {
        out.push_str("  (none on record)\n");
        return out;
    }
    let mut t = TableBuilder::new(
        style,
        &[
            "name", "created", "phase", "outcome", "cause", "took", "gap", "backoff",
        ],
    );
    for e in h {
        t.row(vec![
            plain(e.name.clone()),
            plain(
                e.created
                    .as_deref()
                    .map(|c| c.trim_end_matches('Z').replace('T', " "))
                    .unwrap_or_else(|| "?".into()),
            ),
            plain(e.phase.clone()),
            (e.outcome.as_str().to_string(), outcome_tone(e.outcome)),
            plain(format!(
                "{}{}",
                e.cause,
                if e.inferred { " (inferred)" } else { "" }
            )),
            plain(
                e.duration_seconds
                    .map(fmt::duration)
                    .unwrap_or_else(|| "-".into()),
            ),
            plain(
                e.since_previous_seconds
                    .map(fmt::duration)
                    .unwrap_or_else(|| "-".into()),
            ),
            plain(match (&e.backoff_seconds, &e.backoff_until) {
                (Some(s), Some(u)) => format!(
                    "{} (until {})",
                    fmt::duration(*s),
                    u.split('T').nth(1).unwrap_or(u).trim_end_matches('Z')
                ),
                _ => "-".into(),
            }),
        ]);
    }
    for l in t.render().lines() {
        out.push_str(&format!("  {l}\n"));
    }
    for e in h {
        out.push_str(&format!("  {}: {}\n", e.name, fmt::printable(&e.summary)));
    }
    out
}

pub async fn run(ctx: &Context, args: &ExplainArgs) -> Result<i32> {
    let target = parse_target(&args.target)?;
    let resolved = resolve(ctx, &target).await?;
    if let Some(note) = &resolved.note {
        crate::say!("note: {note}");
    }
    let mut notes = Vec::new();
    let evidence = gather(ctx, resolved, &mut notes).await?;
    for w in crate::model::unknown::warnings(
        &evidence.vmi,
        evidence.migrations.iter().chain(
            evidence
                .migration
                .iter()
                .filter(|m| !evidence.migrations.iter().any(|o| o.name() == m.name())),
        ),
        &evidence.kubevirt,
    ) {
        ctx.warn(w);
    }
    let mut report = build_report(&evidence, args.history, &ctx.source_description(), notes);
    report.warnings = ctx.warnings();
    let text = match ctx.output {
        OutputFormat::Json | OutputFormat::Yaml => structured(ctx.output, &report)?,
        OutputFormat::Table | OutputFormat::Wide => render_table(
            &report,
            ctx.style,
            ctx.output == OutputFormat::Wide,
            clock_note(ctx.clock),
        ),
    };
    write_stdout(&text)?;
    Ok(if report.diagnosis.outcome.is_finding() {
        exit::FINDING
    } else {
        exit::OK
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse() {
        assert_eq!(parse_target("m1").unwrap(), Target::Migration("m1".into()));
        assert_eq!(
            parse_target("migration/m1").unwrap(),
            Target::Migration("m1".into())
        );
        assert_eq!(
            parse_target("vmim/m1").unwrap(),
            Target::Migration("m1".into())
        );
        assert_eq!(parse_target("vm/a").unwrap(), Target::Vmi("a".into()));
        assert_eq!(parse_target("vmi/a").unwrap(), Target::Vmi("a".into()));
        assert!(parse_target("pod/a").is_err());
        assert!(parse_target("vm/").is_err());
        assert!(parse_target("a/b/c").is_err());
    }
}
