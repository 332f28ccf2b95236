//! Gathering the evidence about one migration or VMI (I/O): find it by name (a migration, or
//! a VMI's latest), then read everything about it at once, tolerating what a namespaced
//! user may not read (said in notes and as `Evidence.unread`). Used by `explain` and by
//! `migrate` for the diagnosis of a migration that did not succeed: one gathering, read the
//! same way. The number of requests does not depend on how many migrations or events the
//! VMI has: each kind is listed once and filtered here.

use crate::cluster::source::{list_lenient, list_split_by_namespace};
use crate::cluster::{Kind, Query, get_as, list_as};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::model::vmim::{MigrationPhase, VMI_NAME_LABEL};
use crate::model::{
    Event, KubeVirt, MigrationPolicy, Namespace, Pod, PodDisruptionBudget, VirtualMachine,
    VirtualMachineInstance, VirtualMachineInstanceMigration,
};
use crate::names::Target;
use crate::names::suggest;
use crate::policy::pods::{LAUNCHER_LABEL, LAUNCHER_VALUE};
use crate::triage::{Evidence, MigrationLoad, Source, Unread};

/// The object the command is about, found by name.
pub struct Resolved {
    namespace: String,
    vmi_name: String,
    migration: Option<VirtualMachineInstanceMigration>,
    /// Already read while resolving (Some(None): read, and the VMI does not exist).
    vmi: Option<Option<VirtualMachineInstance>>,
    migrations: Option<Vec<VirtualMachineInstanceMigration>>,
    /// Said on stderr: how the name was understood.
    pub note: Option<String>,
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

pub async fn resolve(ctx: &Context, target: &Target) -> Result<Resolved> {
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
            "KubeVirt keeps only the newest 5 finished migrations per VMI, and none of a VMI that is gone; try vm/NAME for a VM's latest migration",
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

/// The reads around a migration's namespace that `explain` and `record` both make: every
/// MigrationPolicy, the Namespace (its labels select policies), its PodDisruptionBudgets.
type AroundReads = (
    Result<Vec<MigrationPolicy>>,
    Result<Option<Namespace>>,
    Result<Vec<PodDisruptionBudget>>,
);

async fn read_around(source: &impl crate::cluster::Source, ns: &str) -> AroundReads {
    let (cluster, in_ns) = (Query::all(), Query::namespace(Some(ns)));
    tokio::join!(
        list_as::<MigrationPolicy>(source, Kind::MigrationPolicy, &cluster),
        get_as::<Namespace>(source, Kind::Namespace, None, ns),
        list_as::<PodDisruptionBudget>(source, Kind::PodDisruptionBudget, &in_ns),
    )
}

/// [`read_around`]'s answers, each refusal tolerated and said the one way both commands say it.
#[allow(clippy::type_complexity)]
fn tolerate_around(
    (policies, namespace, pdbs): AroundReads,
    unreadable: &mut Unreadable,
) -> Result<(
    Vec<MigrationPolicy>,
    Option<Namespace>,
    Vec<PodDisruptionBudget>,
)> {
    let policies = tolerate(
        Source::MigrationPolicies,
        "MigrationPolicies",
        "no policy is assumed to apply",
        policies,
        unreadable,
    )?;
    let namespace = tolerate(
        Source::Namespace,
        "the Namespace",
        "policies selecting namespace labels are not matched",
        namespace,
        unreadable,
    )?;
    let pdbs = tolerate(
        Source::PodDisruptionBudgets,
        "PodDisruptionBudgets",
        "a budget that refuses the launcher pod's eviction is not seen",
        pdbs,
        unreadable,
    )?;
    Ok((policies, namespace, pdbs))
}

/// What `record` reads about a namespace beside its watches, as [`gather`] reads it for
/// `explain`: the MigrationPolicies, the Namespace and its PodDisruptionBudgets (a 403, 404,
/// 429 or 5xx is tolerated the same way: said in `notes` and as `unread`). Read once per
/// namespace for each batch of migrations the recorder diagnoses.
pub async fn around_namespace(
    ctx: &Context,
    ns: &str,
    notes: &mut Vec<String>,
) -> Result<crate::migration::ended::Around> {
    let source = &ctx.source;
    let mut unreadable = Unreadable::default();
    let (policies, namespace, pdbs) =
        tolerate_around(read_around(source, ns).await, &mut unreadable)?;
    notes.extend(unreadable.notes);
    Ok(crate::migration::ended::Around {
        events: Vec::new(),
        policies,
        namespace,
        pdbs,
        unread: unreadable.unread,
    })
}

/// The events about the objects `subjects` names (`kind`, `name`) in namespace `ns`: one
/// LIST per object, selected by the server (`involvedObject.kind` and `involvedObject.name`),
/// so what is read is bounded by the objects of one migration, not by the namespace. The
/// events that do not decode are skipped and named in `skipped`; an events read that is
/// refused (403, 429, 5xx) is tolerated as [`gather`] tolerates it: said in `notes`, and the
/// `unread` it returns says the diagnosis rests on object status alone.
pub async fn events_about(
    ctx: &Context,
    ns: &str,
    subjects: &[(&'static str, String)],
    notes: &mut Vec<String>,
    skipped: &mut Vec<String>,
) -> Result<(Vec<Event>, Vec<Unread>)> {
    let source = &ctx.source;
    // A name a field selector cannot carry is not an object's name: nothing to read.
    let queries: Vec<Query> = subjects
        .iter()
        .filter_map(|(kind, name)| {
            Query::namespace(Some(ns))
                .with_fields(&format!(
                    "involvedObject.kind={kind},involvedObject.name={name}"
                ))
                .ok()
        })
        .collect();
    let lists = futures::future::join_all(
        queries
            .iter()
            .map(|q| list_lenient::<Event>(source, Kind::Event, q)),
    )
    .await;
    let mut events = Vec::new();
    let mut unreadable = Unreadable::default();
    for list in lists {
        let got = tolerate(
            Source::Events,
            "events",
            "the diagnosis rests on object status alone",
            list,
            &mut unreadable,
        )?;
        events.extend(got.0);
        skipped.extend(got.1);
    }
    unreadable.unread.truncate(1);
    unreadable.notes.truncate(1);
    notes.extend(unreadable.notes);
    Ok((events, unreadable.unread))
}

/// What [`events_about`] reads, taken from `values`, the events of namespace `ns` read
/// whole ([`namespace_events`]): the ones whose `involvedObject.kind` and `.name` are a
/// subject's, as the server's field selector picks them, decoded as leniently.
pub fn events_among(
    ctx: &Context,
    values: &[serde_json::Value],
    subjects: &[(&'static str, String)],
    skipped: &mut Vec<String>,
) -> Vec<Event> {
    let about = |v: &serde_json::Value| {
        let involved = v.get("involvedObject");
        let field = |f: &str| {
            involved
                .and_then(|o| o.get(f))
                .and_then(serde_json::Value::as_str)
        };
        subjects.iter().any(|(kind, name)| {
            field("kind") == Some(*kind) && field("name") == Some(name.as_str())
        })
    };
    let mut events = Vec::new();
    for value in values.iter().filter(|v| about(v)) {
        match crate::cluster::source::decode_ref::<Event, _>(&ctx.source, Kind::Event, value) {
            Ok(event) => events.push(event),
            Err(e) => skipped.push(e.to_string()),
        }
    }
    events
}

/// Every event of namespace `ns` when there are at most `max` ([`Source::list_at_most`]):
/// one LIST for the events of many migrations of the namespace at once, instead of one per
/// object of each ([`events_about`]); `Ok(None)` past `max`.
pub async fn namespace_events(
    ctx: &Context,
    ns: &str,
    max: usize,
) -> Result<Option<Vec<serde_json::Value>>> {
    use crate::cluster::Source as _;
    ctx.source
        .list_at_most(Kind::Event, &Query::namespace(Some(ns)), max)
        .await
}

pub async fn gather(
    ctx: &Context,
    resolved: Resolved,
    notes: &mut Vec<String>,
) -> Result<Evidence> {
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
    let (vmi, migrations, pods, events, kubevirts, around) = tokio::join!(
        vmi_fut,
        migrations_fut,
        list_as::<Pod>(source, Kind::Pod, &pod_query),
        // Lenient: an Event anyone in the namespace wrote badly costs that Event only.
        list_lenient::<Event>(source, Kind::Event, &event_query),
        list_as::<KubeVirt>(source, Kind::KubeVirt, &cluster),
        read_around(source, &ns),
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
    let (policies, namespace, pdbs) = tolerate_around(around, &mut unreadable)?;
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
        loops: Default::default(),
    })
}

/// What `plan-drain` and `drain` read: the VMIs on the nodes and migrating into them, and
/// everything the plan weighs (nodes, pods, PDBs, quotas, policies, the KubeVirt CR). An
/// unknown node is an error with a "did you mean".
pub async fn drain_inputs(
    ctx: &Context,
    drain: &[String],
    bandwidth: Option<u64>,
) -> Result<crate::policy::drain::DrainInputs> {
    let src = &ctx.source;
    let all = Query::all();
    let on_nodes = Query::all().with_labels(crate::cluster::selector::LabelSelector {
        requirements: vec![crate::cluster::selector::LabelRequirement::In(
            "kubevirt.io/nodeName".into(),
            drain.to_vec(),
        )],
    });
    let into_nodes = Query::all().with_labels(crate::cluster::selector::LabelSelector {
        requirements: vec![crate::cluster::selector::LabelRequirement::In(
            "kubevirt.io/migrationTargetNodeName".into(),
            drain.to_vec(),
        )],
    });
    // Every VM, and every pod of the cluster (node capacity: only the fields the plan reads).
    // From an API server, after the Namespace list, one list per namespace, the lists at once
    // (one cluster-wide list waits a round trip per page of 500: at 10k VMIs 20 pages of VMs
    // and 22 of pods, 1.1 s one after the other at 50 ms each), sorted back into the order
    // one list gives them, so the plan is the same.
    let split_lists = async {
        let namespaces = list_as::<Namespace>(src, Kind::Namespace, &all).await?;
        let names: Vec<&str> = namespaces
            .iter()
            .filter_map(|n| n.metadata.name.as_deref())
            .collect();
        let (mut vms, mut pods) = tokio::try_join!(
            list_split_by_namespace::<VirtualMachine>(src, Kind::VirtualMachine, &names),
            list_split_by_namespace::<crate::model::PodFacts>(src, Kind::Pod, &names),
        )?;
        if crate::cluster::Source::splits_lists(src) {
            vms.sort_by(|a, b| (a.namespace(), a.name()).cmp(&(b.namespace(), b.name())));
            pods.sort_by(|a, b| a.key().cmp(&b.key()));
        }
        Ok::<_, Error>((namespaces, vms, pods))
    };
    // The API server's version (how the eviction API reads `selector: {}`) alongside.
    let (lists, version) = tokio::join!(
        async {
            tokio::try_join!(
                list_as::<VirtualMachineInstance>(src, Kind::VirtualMachineInstance, &on_nodes),
                list_as::<VirtualMachineInstance>(src, Kind::VirtualMachineInstance, &into_nodes),
                list_as::<VirtualMachineInstanceMigration>(
                    src,
                    Kind::VirtualMachineInstanceMigration,
                    &all
                ),
                list_as::<crate::model::Node>(src, Kind::Node, &all),
                split_lists,
                list_as::<PodDisruptionBudget>(src, Kind::PodDisruptionBudget, &all),
                list_as::<crate::model::ResourceQuota>(src, Kind::ResourceQuota, &all),
                list_as::<KubeVirt>(src, Kind::KubeVirt, &all),
                list_as::<MigrationPolicy>(src, Kind::MigrationPolicy, &all),
            )
        },
        server_version(ctx)
    );
    let (vmis, incoming, vmims, nodes, (namespaces, vms, pods), pdbs, quotas, kubevirts, policies) =
        lists?;
    let server_version = version.or_else(|| crate::model::ServerVersion::from_kubelets(&nodes));
    for wanted in drain {
        if !nodes
            .iter()
            .any(|n| crate::policy::scheduling::node_name(n) == wanted)
        {
            let mut err = Error::not_found(format!("node {wanted:?}"));
            let close = suggest(
                wanted,
                nodes.iter().map(crate::policy::scheduling::node_name),
            );
            if !close.is_empty() {
                err = err.with_hint(format!("did you mean {}?", close.join(", ")));
            }
            return Err(err);
        }
    }
    // The pods on the drained nodes (and their VMIs' other launcher pods) in full; of the
    // rest only what they take from their node (requests, count, spread matches).
    let vmi_uids: std::collections::HashSet<&str> = vmis
        .iter()
        .filter_map(VirtualMachineInstance::uid)
        .collect();
    // The pods of a PDB without a fresh status stay whole: the plan computes its budget.
    let spread = crate::policy::scheduling::spread_selectors(&vmis);
    let (pdb_pods, (pods, node_usage)) = crate::policy::drain::pods_of_unsynced_pdbs(
        pods.into_iter().map(Pod::from),
        &pdbs,
        |rest| crate::policy::drain::split_pods(rest, drain, &vmi_uids, &spread),
    );
    let pods: Vec<Pod> = pods.into_iter().chain(pdb_pods).collect();
    Ok(crate::policy::drain::DrainInputs {
        drain: drain.to_vec(),
        vmis,
        incoming,
        vms,
        vmims,
        nodes,
        pods,
        node_usage,
        pdbs,
        quotas,
        namespaces,
        kubevirt: kubevirts.into_iter().next(),
        policies,
        bandwidth,
        now: Some(crate::model::Time(ctx.now)),
        server_version,
        dirty_rates: None,
        loops: Default::default(),
    })
}

/// The API server's version as the source knows it (`/version` live, a vmctl snapshot's
/// `serverVersion`). A failed read is said once; the plan goes on without it.
async fn server_version(ctx: &Context) -> Option<crate::model::ServerVersion> {
    use crate::cluster::Source as _;
    match ctx.source.server_version().await {
        Ok(v) => v,
        Err(e) => {
            ctx.warn(format!(
                "could not read the API server's version ({e}); the plan says which Kubernetes versions its reading of selector {{}} holds for"
            ));
            None
        }
    }
}

/// [`drain_inputs`], the input warnings said, and the plan: what `plan-drain` prints and
/// `drain` checks and executes.
pub async fn drain_plan(
    ctx: &Context,
    drain: &[String],
    bandwidth: Option<u64>,
    loops: crate::triage::LoopThresholds,
) -> Result<(
    crate::policy::drain::DrainInputs,
    crate::policy::drain::DrainPlan,
)> {
    let mut inputs = drain_inputs(ctx, drain, bandwidth).await?;
    inputs.loops = loops;
    let plan = plan_of(ctx, &inputs);
    Ok((inputs, plan))
}

/// The plan of inputs already read, their warnings said.
pub fn plan_of(
    ctx: &Context,
    inputs: &crate::policy::drain::DrainInputs,
) -> crate::policy::drain::DrainPlan {
    for w in crate::model::unknown::warnings(
        inputs.vmis.iter().chain(&inputs.incoming),
        &inputs.vmims,
        &inputs.kubevirt,
    ) {
        ctx.warn(w);
    }
    crate::policy::drain::plan_drain(inputs)
}

/// What `plan-maintenance` reads: the whole cluster's VMIs, VMs, migrations, nodes, PDBs,
/// quotas, namespaces, policies and KubeVirt CR; its pods as `policy::maintenance`'s
/// `split_cluster_pods` keeps them (the rollout is every node it may touch: all of them).
pub async fn maintenance_inputs(
    ctx: &Context,
    bandwidth: Option<u64>,
) -> Result<crate::policy::maintenance::MaintenanceInputs> {
    use crate::model::{
        KubeVirt, MigrationPolicy, Namespace, Node, PodDisruptionBudget, PodFacts, ResourceQuota,
        VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration,
    };
    let src = &ctx.source;
    let all = Query::all();
    let (lists, version) = tokio::join!(
        async {
            tokio::try_join!(
                list_as::<VirtualMachineInstance>(src, Kind::VirtualMachineInstance, &all),
                list_as::<VirtualMachine>(src, Kind::VirtualMachine, &all),
                list_as::<VirtualMachineInstanceMigration>(
                    src,
                    Kind::VirtualMachineInstanceMigration,
                    &all
                ),
                list_as::<Node>(src, Kind::Node, &all),
                list_as::<PodFacts>(src, Kind::Pod, &all),
                list_as::<PodDisruptionBudget>(src, Kind::PodDisruptionBudget, &all),
                list_as::<ResourceQuota>(src, Kind::ResourceQuota, &all),
                list_as::<Namespace>(src, Kind::Namespace, &all),
                list_as::<KubeVirt>(src, Kind::KubeVirt, &all),
                list_as::<MigrationPolicy>(src, Kind::MigrationPolicy, &all),
            )
        },
        server_version(ctx)
    );
    let (vmis, vms, vmims, nodes, pods, pdbs, quotas, namespaces, kubevirts, policies) = lists?;
    let server_version = version.or_else(|| crate::model::ServerVersion::from_kubelets(&nodes));
    let kubevirt = kubevirts.into_iter().next();
    for w in crate::model::unknown::warnings(vmis.iter(), &vmims, &kubevirt) {
        ctx.warn(w);
    }
    let rollout: Vec<String> = nodes
        .iter()
        .map(|n| crate::policy::scheduling::node_name(n).to_string())
        .collect();
    let (pods, node_usage) = crate::policy::maintenance::split_cluster_pods(
        pods.into_iter().map(crate::model::Pod::from),
        &rollout,
        &vmis,
        &pdbs,
    );
    Ok(crate::policy::maintenance::MaintenanceInputs {
        nodes,
        vmis,
        vms,
        vmims,
        pods,
        node_usage,
        pdbs,
        quotas,
        namespaces,
        kubevirt,
        policies,
        bandwidth,
        now: Some(crate::model::Time(ctx.now)),
        server_version,
        loops: Default::default(),
    })
}

/// The rollout's nodes: those named (each must exist, with a "did you mean"), every node
/// (`--all`) or those `selector` selects, by name.
pub fn rollout_nodes(
    nodes: &[crate::model::Node],
    named: &[String],
    all: bool,
    selector: Option<&crate::cluster::selector::LabelSelector>,
) -> Result<Vec<String>> {
    use crate::policy::scheduling::node_name;
    if !named.is_empty() {
        for wanted in named {
            if !nodes.iter().any(|n| node_name(n) == wanted) {
                let mut err = crate::error::Error::not_found(format!("node {wanted:?}"));
                let close = crate::names::suggest(wanted, nodes.iter().map(node_name));
                if !close.is_empty() {
                    err = err.with_hint(format!("did you mean {}?", close.join(", ")));
                }
                return Err(err);
            }
        }
        return Ok(named.to_vec());
    }
    let empty = std::collections::BTreeMap::new();
    let mut out: Vec<String> = nodes
        .iter()
        .filter(|n| {
            all || selector
                .is_some_and(|s| s.matches_labels(n.metadata.labels.as_ref().unwrap_or(&empty)))
        })
        .map(|n| node_name(n).to_string())
        .collect();
    out.sort();
    Ok(out)
}
