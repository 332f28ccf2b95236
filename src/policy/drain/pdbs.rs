//! Step **PDBs**: the PodDisruptionBudgets over the drained VMIs' launcher pods, read as the
//! eviction API reads them ([`crate::policy::pdb`]).

use std::collections::{BTreeMap, BTreeSet};

use super::{Action, DrainBlocker, DrainInputs, PdbEviction, PdbReport, VmiPlan, is_launcher_of};
use crate::model::{KubeVirt, Pod, PodDisruptionBudget, VirtualMachineInstance};
use crate::policy::index::{PodIndex, work};
use crate::policy::pdb::{
    Budget, BudgetSource, EvaluatedPdb, EvictionAnswer, MORE_THAN_ONE_PDB, PdbIndex, PdbSelector,
    budget, empty_selector_at_eviction, evict,
};
use crate::policy::scheduling::holds_resources;

/// Takes out of `pods` those selected by a PodDisruptionBudget without a fresh status and
/// hands the rest, one at a time, to `rest` (e.g. [`super::split_pods`]): (selected, what `rest`
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
    let source = match (b.stale, b.source, b.estimated) {
        (Some((observed, generation)), ..) if b.never_catches_up().is_some() => format!(
            "its status never catches up with its spec (observedGeneration {observed} < generation {generation}): the controller's failSafe sets disruptionsAllowed 0 and does not advance observedGeneration (kubernetes pkg/controller/disruption/disruption.go)"
        ),
        (Some((observed, generation)), ..) => format!(
            "computed as the disruption controller will write it: its status is behind its spec (observedGeneration {observed} < generation {generation})"
        ),
        (None, BudgetSource::Status, _) => "from its status".into(),
        (None, BudgetSource::Computed, false) => {
            "computed as the disruption controller does: no status yet".into()
        }
        (None, BudgetSource::Computed, true) => {
            "estimated as the disruption controller would compute it: no status yet".into()
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
            let good = if b.never_catches_up().is_some() {
                " for good"
            } else {
                ""
            };
            format!(
                "allows 0 disruptions{good}, DisruptionAllowed=False SyncFailed: {message}{hint}; {source}"
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
/// API reads them ([`crate::policy::pdb`]). Only the evictions that reach the PDB check
/// matter: KubeVirt's eviction webhook answers first (429, evacuation) for every VMI that
/// migrates, blocks or is External, so a PDB only holds up the VMIs the drain shuts down.
/// Each launcher pod is matched through the index once; budgets without a fresh status are
/// computed in one more pass over the pods. Adds what the PDBs answer to the rows of
/// `plans` (`plan_vmis` their VMIs); returns the blockers and the reports.
pub fn judge_pdbs(
    inputs: &DrainInputs,
    plans: &mut [VmiPlan],
    plan_vmis: &[&VirtualMachineInstance],
    pod_index: &PodIndex,
) -> (Vec<DrainBlocker>, Vec<PdbReport>) {
    let pdbs = &inputs.pdbs;
    let version = inputs.server_version.as_ref();
    let empty = empty_selector_at_eviction(version);
    // The eviction API's reading: on a server that ignores `selector: {}` such a PDB selects
    // nothing at eviction (it is reported, never matched).
    let index = PdbIndex::for_eviction(pdbs, empty.honoured_or_assumed());
    let note = empty.note(version);
    let coverage = coverage(&index, plans, plan_vmis, pod_index);
    let evaluated = evaluate(pdbs, &index, &coverage.covered, &inputs.pods);
    let mut blockers = migrating_under_two_pdbs(inputs.kubevirt.as_ref(), pdbs, plans, &coverage);
    let mut shutdowns = answer_shutdowns(plans, &coverage, &evaluated);
    blockers.extend(more_than_one_pdb(pdbs, &index, plans, &shutdowns, &note));
    blockers.extend(budget_blockers(
        pdbs, &evaluated, &coverage, &shutdowns, plans, &note,
    ));
    let (reports, inert) = reports(
        pdbs,
        &index,
        &evaluated,
        &coverage,
        &mut shutdowns,
        plans,
        &note,
    );
    blockers.extend(inert);
    (blockers, reports)
}

/// Which PDBs select which drained VMI's launcher pods.
struct Coverage<'p> {
    /// For each plan: its launcher pods and the PDBs selecting each.
    pod_hits: Vec<Vec<(&'p Pod, Vec<usize>)>>,
    /// For each PDB: the plans whose pods it selects, in plan order.
    covered: Vec<Vec<usize>>,
}

fn coverage<'p>(
    index: &PdbIndex,
    plans: &[VmiPlan],
    plan_vmis: &[&VirtualMachineInstance],
    pod_index: &PodIndex<'p>,
) -> Coverage<'p> {
    let mut pod_hits: Vec<Vec<(&Pod, Vec<usize>)>> = Vec::with_capacity(plans.len());
    let mut covered: Vec<Vec<usize>> = vec![Vec::new(); index.selectors.len()];
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
    Coverage { pod_hits, covered }
}

/// Budgets of the PDBs that cover a drained VMI (None for the others). Those without a
/// fresh status are computed from every pod they select (one pass over the pods).
fn evaluate(
    pdbs: &[PodDisruptionBudget],
    index: &PdbIndex,
    covered: &[Vec<usize>],
    pods: &[Pod],
) -> Vec<Option<EvaluatedPdb>> {
    let needs_pods: Vec<bool> = pdbs
        .iter()
        .zip(covered)
        .map(|(p, c)| !c.is_empty() && !has_fresh_status(p))
        .collect();
    let mut selected: Vec<Vec<&Pod>> = vec![Vec::new(); pdbs.len()];
    if needs_pods.iter().any(|n| *n) {
        for pod in pods {
            work::step(1);
            for i in index.matching(pod) {
                if needs_pods[i] {
                    selected[i].push(pod);
                }
            }
        }
    }
    pdbs.iter()
        .enumerate()
        .map(|(i, p)| {
            (!covered[i].is_empty())
                .then(|| EvaluatedPdb::new(p, &index.selectors[i], budget(p, &selected[i], true)))
        })
        .collect()
}

/// A blocker about PDB(s) `name` in `namespace`.
fn pdb_blocker(
    namespace: Option<String>,
    name: String,
    reason: &str,
    message: String,
    vmis: Vec<String>,
    blocking: bool,
) -> DrainBlocker {
    DrainBlocker {
        kind: "pdb".into(),
        namespace,
        name,
        reason: reason.into(),
        message,
        vmis,
        blocking,
    }
}

/// KubeVirt up to v1.4 (webhook failurePolicy Ignore) denies only the first eviction of a
/// VMI it marks; kubectl drain's retries then reach the PDB check (FACTS §2.1), which
/// answers 500 when two PDBs select a migrating VMI's pod.
fn migrating_under_two_pdbs(
    kubevirt: Option<&KubeVirt>,
    pdbs: &[PodDisruptionBudget],
    plans: &[VmiPlan],
    coverage: &Coverage,
) -> Vec<DrainBlocker> {
    let version = kubevirt.and_then(KubeVirt::version);
    let Some(v) =
        version.filter(|v| crate::model::kubevirt::parse_version(v).is_some_and(|v| v < (1, 5)))
    else {
        return Vec::new();
    };
    let mut sets: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
    for (pi, hits) in coverage.pod_hits.iter().enumerate() {
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
    sets.into_iter()
        .map(|(set, holders)| {
            let names = pdb_names(pdbs, &set);
            let who = ids(plans, &holders);
            pdb_blocker(
                pdbs[set[0]].metadata.namespace.clone(),
                names.join(" + "),
                "MultiplePodDisruptionBudgets",
                format!(
                    "{} select the launcher pod of {}, which migrates: KubeVirt {v} (up to v1.4) lets kubectl drain's repeated evictions of a VMI it has marked through to the PDB check, which answers 500 \"{MORE_THAN_ONE_PDB}\"; kubectl drain stops on that error instead of retrying (the migration goes on; run the drain again)",
                    names.join(" and "),
                    who.join(", ")
                ),
                who,
                false,
            )
        })
        .collect()
}

/// What the eviction API answers for the pods of the VMIs the drain shuts down, per PDB.
struct Shutdowns {
    /// Per PDB: the answers for the shutdowns whose pods it selects.
    answers: Vec<Vec<PdbEviction>>,
    /// Per PDB: the shutdowns it refuses, with the answer.
    refused: Vec<Vec<(usize, EvictionAnswer)>>,
    /// Per PDB: the shutdowns waiting for its stale status.
    stale_waits: Vec<Vec<usize>>,
    /// Per PDB: the shutdowns it lets through.
    evicted_through: Vec<Vec<usize>>,
    /// Sets of two or more PDBs over one pod -> the plans they hold.
    multiple: BTreeMap<Vec<usize>, Vec<usize>>,
}

/// Asks the eviction API (as [`evict`] models it) for every pod of every shutdown, and says
/// in the row what it answers.
fn answer_shutdowns(
    plans: &mut [VmiPlan],
    coverage: &Coverage,
    evaluated: &[Option<EvaluatedPdb>],
) -> Shutdowns {
    let n = evaluated.len();
    let mut s = Shutdowns {
        answers: vec![Vec::new(); n],
        refused: vec![Vec::new(); n],
        stale_waits: vec![Vec::new(); n],
        evicted_through: vec![Vec::new(); n],
        multiple: BTreeMap::new(),
    };
    for (pi, hits) in coverage.pod_hits.iter().enumerate() {
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
                s.answers[i].push(PdbEviction {
                    vmi: plan.id(),
                    pod: pod.metadata.name.clone().unwrap_or_default(),
                    http_status: answer.http_status(),
                    answer: answer.clone(),
                    text: answer.api_text(),
                });
            }
            match &answer {
                EvictionAnswer::MoreThanOnePdb { pdbs: names } => {
                    let holders = s.multiple.entry(matching.clone()).or_default();
                    if holders.last() != Some(&pi) {
                        holders.push(pi);
                    }
                    plan.explanation.push_str(&format!(
                        "; but PodDisruptionBudgets {} {} select its pod, so the eviction API answers 500 ({MORE_THAN_ONE_PDB}) and never evicts it: the drain blocks here",
                        names.join(" and "),
                        both_or_all(names)
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
                | EvictionAnswer::Forbidden { pdb, .. }
                | EvictionAnswer::StatusStale {
                    pdb,
                    never_syncs: Some(_),
                    ..
                } => {
                    if let Some(&i) = matching.first() {
                        s.refused[i].push((pi, answer.clone()));
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
                    never_syncs: None,
                } => {
                    if let Some(&i) = matching.first() {
                        s.stale_waits[i].push(pi);
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
                        s.evicted_through[i].push(pi);
                    }
                }
                EvictionAnswer::NoPdb | EvictionAnswer::NoPdbCheck { .. } => {}
            }
        }
    }
    s
}

/// Two or more PDBs over a shutdown's pod: the eviction API never evicts it.
fn more_than_one_pdb(
    pdbs: &[PodDisruptionBudget],
    index: &PdbIndex,
    plans: &[VmiPlan],
    shutdowns: &Shutdowns,
    empty_note: &str,
) -> Vec<DrainBlocker> {
    let mut blockers = Vec::new();
    for (set, holders) in &shutdowns.multiple {
        let names = pdb_names(pdbs, set);
        let ns = pdbs[set[0]].metadata.namespace.clone();
        let mut message = format!(
            "{} {} select the launcher pod of {}: the eviction API answers 500 \"{MORE_THAN_ONE_PDB}\" and never evicts it",
            names.join(" and "),
            both_or_all(&names),
            ids(plans, holders).join(", ")
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
                    "; {}: {empty_note}",
                    pdbs[i].metadata.name.as_deref().unwrap_or("")
                ));
            }
        }
        blockers.push(pdb_blocker(
            ns,
            names.join(" + "),
            "MultiplePodDisruptionBudgets",
            message,
            ids(plans, holders),
            true,
        ));
    }
    blockers
}

/// What each PDB over the drained VMIs does to the drain: refuses shutdowns (blocks), makes
/// them wait for its status, would only matter if a migration failed, or has a budget
/// shorter than the shutdowns it lets through.
fn budget_blockers(
    pdbs: &[PodDisruptionBudget],
    evaluated: &[Option<EvaluatedPdb>],
    coverage: &Coverage,
    shutdowns: &Shutdowns,
    plans: &[VmiPlan],
    empty_note: &str,
) -> Vec<DrainBlocker> {
    let mut blockers = Vec::new();
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
            format!("; {empty_note}")
        } else {
            String::new()
        };
        let covered = &coverage.covered[i];
        let mut covered_ids = ids(plans, covered);
        covered_ids.sort();
        let (refused, stale_waits, evicted_through) = (
            &shutdowns.refused[i],
            &shutdowns.stale_waits[i],
            &shutdowns.evicted_through[i],
        );
        if let Some((_, first)) = refused.first() {
            let who: Vec<String> = refused.iter().map(|(pi, _)| plans[*pi].id()).collect();
            let (reason, until) = match first {
                EvictionAnswer::Forbidden { .. } => ("EvictionForbidden", "until it changes"),
                EvictionAnswer::StatusStale { .. } => (
                    "StatusNeverSyncs",
                    "for good: only a spec the disruption controller can sync moves it (checkAndDecrement, kubernetes pkg/registry/core/pod/storage/eviction.go)",
                ),
                _ => (
                    no_disruptions_reason(max_unavailable, b),
                    "until it changes",
                ),
            };
            blockers.push(pdb_blocker(
                ns,
                name,
                reason,
                format!(
                    "{words}: evicting {} is answered {} {until}{everything}",
                    who.join(", "),
                    first.api_text()
                ),
                covered_ids,
                true,
            ));
        } else if !stale_waits.is_empty() {
            let (observed, generation) = b.stale.unwrap_or_default();
            blockers.push(pdb_blocker(
                ns,
                name,
                "StatusStale",
                format!(
                    "status.observedGeneration {observed} < metadata.generation {generation}: the eviction of {} gets 429 until the disruption controller catches up; then it {words}{everything}",
                    ids(plans, stale_waits).join(", ")
                ),
                covered_ids,
                false,
            ));
        } else if (b.disruptions_allowed <= 0 || b.never_catches_up().is_some())
            && covered.iter().any(|&pi| !plans[pi].action.stops_the_vm())
        {
            blockers.push(pdb_blocker(
                ns,
                name,
                no_disruptions_reason(max_unavailable, b),
                format!(
                    "{words}; the VMIs it covers migrate (KubeVirt's eviction webhook answers before the PDB check) and their source pods complete, so it only matters if a migration fails{everything}"
                ),
                covered_ids,
                false,
            ));
        } else if evicted_through.len() as i64 > i64::from(b.disruptions_allowed) {
            let who = ids(plans, evicted_through);
            blockers.push(pdb_blocker(
                ns,
                name,
                "BudgetShorterThanShutdowns",
                format!(
                    "{words}, and the drain evicts {} pods it selects ({}): the rest get 429 until evicted pods are Ready again elsewhere, and stay refused if their VMs stay stopped{everything}",
                    who.len(),
                    who.join(", ")
                ),
                covered_ids,
                false,
            ));
        }
    }
    blockers
}

/// The reports: every PDB over a drained VMI with its budget and the answers it gave, and
/// the PDBs in the drained VMIs' namespaces that select nothing (with a blocker, not
/// blocking, for an invalid selector: the user may think they protect something).
fn reports(
    pdbs: &[PodDisruptionBudget],
    index: &PdbIndex,
    evaluated: &[Option<EvaluatedPdb>],
    coverage: &Coverage,
    shutdowns: &mut Shutdowns,
    plans: &[VmiPlan],
    empty_note: &str,
) -> (Vec<PdbReport>, Vec<DrainBlocker>) {
    let note =
        |i: usize| (index.selectors[i] == PdbSelector::Everything).then(|| empty_note.to_string());
    let selects = |i: usize| match &index.selectors[i] {
        PdbSelector::Nothing => ("nothing", None),
        PdbSelector::Everything => ("everything", None),
        PdbSelector::Labels(_) => ("labels", None),
        PdbSelector::Invalid(why) => ("invalid", Some(why.clone())),
    };
    let mut reports: Vec<PdbReport> = Vec::new();
    let mut blockers = Vec::new();
    for (i, pdb) in pdbs.iter().enumerate() {
        let Some(e) = evaluated[i].as_ref() else {
            continue;
        };
        let (kind, invalid) = selects(i);
        let mut vmis = ids(plans, &coverage.covered[i]);
        vmis.sort();
        reports.push(PdbReport {
            namespace: pdb.metadata.namespace.clone().unwrap_or_default(),
            name: e.name.clone(),
            selects: kind.into(),
            invalid,
            budget: Some(e.budget.clone()),
            vmis,
            evictions: std::mem::take(&mut shutdowns.answers[i]),
            eviction_note: note(i),
        });
    }

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
                eviction_note: note(i),
            });
            if index.selectors[i] == PdbSelector::Everything {
                // Inert only where the server is known to ignore `{}` at eviction.
                blockers.push(pdb_blocker(
                    Some(ns.to_string()),
                    pdbs[i].metadata.name.clone().unwrap_or_default(),
                    "EmptySelectorIgnored",
                    empty_note.to_string(),
                    Vec::new(),
                    false,
                ));
            }
            if let PdbSelector::Invalid(why) = &index.selectors[i] {
                blockers.push(pdb_blocker(
                    Some(ns.to_string()),
                    pdbs[i].metadata.name.clone().unwrap_or_default(),
                    "InvalidSelector",
                    format!(
                        "invalid, {why}: the eviction API skips it (\"This object has an invalid selector, it does not match the pod\"), so it protects nothing here"
                    ),
                    Vec::new(),
                    false,
                ));
            }
        }
    }
    reports.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    (reports, blockers)
}

/// The ids (`namespace/name`) of the rows at `indices`.
fn ids(plans: &[VmiPlan], indices: &[usize]) -> Vec<String> {
    indices.iter().map(|&pi| plans[pi].id()).collect()
}

/// The names of a set of PDBs (indices into `pdbs`).
fn pdb_names(pdbs: &[PodDisruptionBudget], set: &[usize]) -> Vec<String> {
    set.iter()
        .map(|&i| pdbs[i].metadata.name.clone().unwrap_or_default())
        .collect()
}

/// "both" PDBs, or "all" of them.
fn both_or_all(names: &[String]) -> &'static str {
    if names.len() == 2 { "both" } else { "all" }
}

/// Why a PDB allows no disruption: a maxUnavailable one (the most common mistake over
/// VMIs), a failed sync, or just no budget left.
fn no_disruptions_reason(max_unavailable: bool, b: &Budget) -> &'static str {
    if max_unavailable {
        "MaxUnavailablePDB"
    } else if b.sync_failed.is_some() {
        "SyncFailed"
    } else {
        "NoDisruptionsAllowed"
    }
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
    use k8s_openapi::api::policy::v1::{PodDisruptionBudgetSpec, PodDisruptionBudgetStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    use crate::policy::drain::tests::{launcher, plan_row, vmi};

    /// A PDB over `app=a` with a fresh status allowing `allowed` disruptions.
    fn pdb(name: &str, allowed: i32) -> PodDisruptionBudget {
        PodDisruptionBudget {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("prod".into()),
                generation: Some(1),
                ..Default::default()
            },
            spec: Some(PodDisruptionBudgetSpec {
                min_available: Some(IntOrString::Int(1)),
                selector: Some(LabelSelector {
                    match_labels: Some(BTreeMap::from([("app".into(), "a".into())])),
                    match_expressions: None,
                }),
                ..Default::default()
            }),
            status: Some(PodDisruptionBudgetStatus {
                current_healthy: Some(1),
                desired_healthy: Some(1),
                disruptions_allowed: Some(allowed),
                expected_pods: Some(1),
                observed_generation: Some(1),
                ..Default::default()
            }),
        }
    }

    /// Judges the PDBs for VMI `a` (its launcher pod labelled app=a) planned with `action`.
    fn judge(
        action: Action,
        pdbs: Vec<PodDisruptionBudget>,
    ) -> (Vec<DrainBlocker>, Vec<PdbReport>, VmiPlan) {
        let a = vmi("a", "node-3", None, true, "2Gi");
        let inputs = DrainInputs {
            pods: vec![launcher(&a, "2Gi")],
            pdbs,
            ..Default::default()
        };
        let mut plans = vec![plan_row("a", action)];
        plans[0].start_seconds = Some(0);
        plans[0].end_seconds = Some(180);
        let index = PodIndex::new(&inputs.pods);
        let (blockers, reports) = judge_pdbs(&inputs, &mut plans, &[&a], &index);
        (blockers, reports, plans.remove(0))
    }

    /// A PDB from JSON over `app=a` (its selector replaced when `selector` is given).
    fn pdb_json(
        name: &str,
        spec: serde_json::Value,
        rest: serde_json::Value,
    ) -> PodDisruptionBudget {
        let mut v = serde_json::json!({"metadata": {"name": name, "namespace": "prod", "generation": 1},
            "spec": {"selector": {"matchLabels": {"app": "a"}}}});
        for (k, val) in spec.as_object().unwrap() {
            v["spec"][k] = val.clone();
        }
        for (k, val) in rest.as_object().unwrap() {
            if k == "generation" {
                v["metadata"]["generation"] = val.clone();
            } else {
                v[k] = val.clone();
            }
        }
        serde_json::from_value(v).unwrap()
    }

    /// [`judge`] with the API server's version and the launcher pod's readiness.
    fn judge_with(
        action: Action,
        pdbs: Vec<PodDisruptionBudget>,
        version: Option<&str>,
        ready: bool,
    ) -> (Vec<DrainBlocker>, Vec<PdbReport>, VmiPlan) {
        let a = vmi("a", "node-3", None, true, "2Gi");
        let mut pod = launcher(&a, "2Gi");
        if !ready {
            pod.status.as_mut().unwrap().conditions.as_mut().unwrap()[0].status = "False".into();
        }
        let inputs = DrainInputs {
            pods: vec![pod],
            pdbs,
            server_version: version.map(crate::model::ServerVersion::live),
            ..Default::default()
        };
        let mut plans = vec![plan_row("a", action)];
        plans[0].start_seconds = Some(0);
        plans[0].end_seconds = Some(180);
        let index = PodIndex::new(&inputs.pods);
        let (blockers, reports) = judge_pdbs(&inputs, &mut plans, &[&a], &index);
        (blockers, reports, plans.remove(0))
    }

    /// Every PDB state the eviction API distinguishes, with whether it must block a drain
    /// that shuts the VM down (a migrating VM is answered by KubeVirt's webhook first: never).
    /// (name, PDBs, API server version, launcher Ready, blocks a shutdown).
    type PdbState = (
        &'static str,
        Vec<PodDisruptionBudget>,
        Option<&'static str>,
        bool,
        bool,
    );

    fn pdb_states() -> Vec<PdbState> {
        use serde_json::json;
        let synced = |allowed: i64| {
            json!({"status": {"observedGeneration": 1, "disruptionsAllowed": allowed,
                "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}})
        };
        let sync_failed = json!({"observedGeneration": 1, "disruptionsAllowed": 0,
            "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0,
            "conditions": [{"type": "DisruptionAllowed", "status": "False", "reason": "SyncFailed",
                "message": "virtualmachineinstances.kubevirt.io does not implement the scale subresource",
                "lastTransitionTime": "2026-11-02T00:00:05Z", "observedGeneration": 1}]});
        let mut stale_failed = sync_failed.clone();
        stale_failed["observedGeneration"] = json!(1);
        let min1 = json!({"minAvailable": 1});
        let min0 = json!({"minAvailable": 0});
        let max1 = json!({"maxUnavailable": 1});
        vec![
            // (name, PDBs, API server version, launcher Ready, blocks a shutdown)
            (
                "fresh, 1 allowed",
                vec![pdb_json("p", min0.clone(), synced(1))],
                None,
                true,
                false,
            ),
            (
                "fresh, 0 allowed",
                vec![pdb_json("p", min1.clone(), synced(0))],
                None,
                true,
                true,
            ),
            (
                "fresh SyncFailed",
                vec![pdb_json("p", max1.clone(), json!({"status": sync_failed}))],
                None,
                true,
                true,
            ),
            (
                "negative",
                vec![pdb_json("p", min1.clone(), synced(-1))],
                None,
                true,
                true,
            ),
            (
                "stale, catching up",
                vec![pdb_json("p", min0.clone(), {
                    let mut s = synced(0);
                    s["generation"] = json!(2);
                    s
                })],
                None,
                true,
                false,
            ),
            (
                "stale, SyncFailed for good",
                vec![pdb_json(
                    "p",
                    max1.clone(),
                    json!({"generation": 2, "status": stale_failed}),
                )],
                None,
                true,
                true,
            ),
            (
                "never synced, no status",
                vec![pdb_json("p", max1.clone(), json!({}))],
                None,
                true,
                true,
            ),
            (
                "no status, min 0",
                vec![pdb_json("p", min0.clone(), json!({}))],
                None,
                true,
                false,
            ),
            (
                "no status, min 1",
                vec![pdb_json("p", min1.clone(), json!({}))],
                None,
                true,
                true,
            ),
            (
                "not Ready, AlwaysAllow",
                vec![pdb_json(
                    "p",
                    json!({"minAvailable": 1, "unhealthyPodEvictionPolicy": "AlwaysAllow"}),
                    synced(0),
                )],
                None,
                false,
                false,
            ),
            (
                "not Ready, never synced",
                vec![pdb_json(
                    "p",
                    max1.clone(),
                    json!({"generation": 2, "status": stale_failed}),
                )],
                None,
                false,
                true,
            ),
            (
                "two PDBs",
                vec![
                    pdb_json("p", min0.clone(), synced(1)),
                    pdb_json("q", min0.clone(), synced(1)),
                ],
                None,
                true,
                true,
            ),
            (
                "{} unknown version",
                vec![pdb_json(
                    "e",
                    json!({"selector": {}, "minAvailable": 1}),
                    synced(0),
                )],
                None,
                true,
                true,
            ),
            (
                "{} honoured",
                vec![pdb_json(
                    "e",
                    json!({"selector": {}, "minAvailable": 1}),
                    synced(0),
                )],
                Some("v1.28.3"),
                true,
                true,
            ),
            (
                "{} ignored",
                vec![pdb_json(
                    "e",
                    json!({"selector": {}, "minAvailable": 1}),
                    synced(0),
                )],
                Some("v1.28.2"),
                true,
                false,
            ),
            (
                "{} ignored beside another",
                vec![
                    pdb_json("e", json!({"selector": {}, "minAvailable": 1}), synced(0)),
                    pdb_json("p", min0.clone(), synced(1)),
                ],
                Some("v1.27.6"),
                true,
                false,
            ),
            (
                "null selector",
                vec![pdb_json(
                    "n",
                    json!({"selector": null, "minAvailable": 1}),
                    synced(0),
                )],
                None,
                true,
                false,
            ),
            (
                "invalid selector",
                vec![pdb_json(
                    "i",
                    json!({"selector": {"matchExpressions": [
                {"key": "app", "operator": "Equals", "values": ["a"]}]}, "minAvailable": 1}),
                    synced(0),
                )],
                None,
                true,
                false,
            ),
        ]
    }

    /// Words that say the eviction is refused, and the words that say why that does not
    /// hold the drain: a message that refuses without saying why next to a non-blocking
    /// mark is the bug this guards against.
    const REFUSES: &[&str] = &[
        "refuses",
        "is answered 4",
        "is answered 5",
        "for good",
        "never evicts",
        "allows 0 disruptions",
    ];
    const WHY_NOT_BLOCKING: &[&str] = &[
        "only matters if a migration fails",
        "until the disruption controller catches up",
        "until evicted pods are ready again",
        "protects nothing",
    ];

    #[test]
    fn every_pdb_statement_agrees_with_the_verdict_next_to_it() {
        for (state, pdbs, version, ready, blocks_shutdown) in pdb_states() {
            for action in [Action::Shutdown, Action::LiveMigrate] {
                let (blockers, reports, plan) = judge_with(action, pdbs.clone(), version, ready);
                let case = format!("{state} / {action:?}");
                let verdict =
                    super::super::verdict::verdict(&blockers, std::slice::from_ref(&plan));
                let blocking = blockers.iter().any(|b| b.blocking);
                let expected = blocks_shutdown && action == Action::Shutdown;
                assert_eq!(blocking, expected, "{case}: {blockers:#?}");
                assert_eq!(
                    verdict == super::super::Verdict::WillBlock,
                    expected,
                    "{case}"
                );
                for b in &blockers {
                    let m = b.message.to_lowercase();
                    let refuses = REFUSES.iter().any(|w| m.contains(w));
                    let why_not = WHY_NOT_BLOCKING.iter().any(|w| m.contains(w));
                    if b.blocking {
                        assert!(
                            refuses,
                            "{case}: blocks without saying it refuses: {}",
                            b.message
                        );
                        assert!(
                            !why_not,
                            "{case}: blocks but says why it would not: {}",
                            b.message
                        );
                    } else {
                        assert!(
                            !refuses || why_not,
                            "{case}: refuses next to a non-blocking mark: {}",
                            b.message
                        );
                    }
                }
                // The row and the answers say the same as the blockers.
                let row_blocks = plan.explanation.contains("so the drain blocks here")
                    || plan.explanation.contains("never evicts it");
                assert_eq!(row_blocks, expected, "{case}: {}", plan.explanation);
                assert_eq!(plan.end_seconds.is_none(), expected, "{case}");
                if plan
                    .explanation
                    .contains("until the disruption controller catches up")
                {
                    assert!(!expected, "{case}");
                }
                for r in &reports {
                    for e in &r.evictions {
                        assert_eq!(e.answer.blocks(), expected, "{case}: {:?}", e.answer);
                    }
                }
            }
        }
    }

    #[test]
    fn a_status_that_never_catches_up_is_said_to_refuse_for_good() {
        let states = pdb_states();
        let (_, pdbs, ..) = states
            .iter()
            .find(|s| s.0 == "stale, SyncFailed for good")
            .unwrap();
        let (blockers, reports, plan) = judge_with(Action::Shutdown, pdbs.clone(), None, true);
        assert_eq!(blockers.len(), 1);
        assert_eq!(blockers[0].reason, "StatusNeverSyncs");
        assert!(
            blockers[0]
                .message
                .contains("still being processed by the server.) for good"),
            "{}",
            blockers[0].message
        );
        assert!(
            blockers[0]
                .message
                .contains("observedGeneration 1 < generation 2"),
            "{}",
            blockers[0].message
        );
        assert!(
            plan.explanation.contains("429 for good"),
            "{}",
            plan.explanation
        );
        assert!(
            matches!(&reports[0].evictions[0].answer, EvictionAnswer::StatusStale { never_syncs: Some(why), .. }
            if why.contains("does not implement the scale subresource"))
        );
        // The same PDB over a migrating VM: said, not blocking, with the reason.
        let (blockers, ..) = judge_with(Action::LiveMigrate, pdbs.clone(), None, true);
        assert_eq!(blockers.len(), 1);
        assert!(!blockers[0].blocking);
        assert!(blockers[0].message.contains("for good"));
        assert!(
            blockers[0]
                .message
                .contains("only matters if a migration fails")
        );
    }

    #[test]
    fn an_empty_selector_is_read_by_the_servers_version() {
        let pdbs = || {
            vec![pdb_json(
                "e",
                serde_json::json!({"selector": {}, "minAvailable": 1}),
                serde_json::json!({"status": {"observedGeneration": 1, "disruptionsAllowed": 0,
                "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}}),
            )]
        };
        let (blockers, reports, _) = judge_with(Action::Shutdown, pdbs(), Some("v1.27.6"), true);
        assert_eq!(blockers.len(), 1, "{blockers:#?}");
        assert_eq!(blockers[0].reason, "EmptySelectorIgnored");
        assert!(
            blockers[0].message.contains("v1.27.6 (from /version)"),
            "{}",
            blockers[0].message
        );
        assert!(reports[0].budget.is_none() && reports[0].evictions.is_empty());
        assert!(
            reports[0]
                .eviction_note
                .as_deref()
                .is_some_and(|n| n.contains("protects nothing"))
        );
        let (blockers, reports, _) = judge_with(Action::Shutdown, pdbs(), Some("v1.27.7"), true);
        assert!(
            blockers[0].blocking && blockers[0].message.contains("at eviction too"),
            "{}",
            blockers[0].message
        );
        assert_eq!(reports[0].evictions[0].http_status, 429);
        let (blockers, ..) = judge_with(Action::Shutdown, pdbs(), None, true);
        assert!(blockers[0].blocking);
        assert!(
            blockers[0]
                .message
                .contains("this holds for Kubernetes 1.29.0+, 1.28.3+ and 1.27.7+"),
            "{}",
            blockers[0].message
        );
    }

    #[test]
    fn a_pdb_without_budget_refuses_the_shutdown_and_blocks() {
        let (blockers, reports, plan) = judge(Action::Shutdown, vec![pdb("db", 0)]);
        assert_eq!(blockers.len(), 1);
        let b = &blockers[0];
        assert_eq!(
            (
                b.kind.as_str(),
                b.name.as_str(),
                b.reason.as_str(),
                b.blocking
            ),
            ("pdb", "db", "NoDisruptionsAllowed", true)
        );
        assert_eq!(b.vmis, ["prod/a"]);
        assert!(
            plan.explanation
                .contains("but PodDisruptionBudget db refuses the eviction"),
            "{}",
            plan.explanation
        );
        assert_eq!(
            plan.fix.as_deref(),
            Some("relax PodDisruptionBudget prod/db")
        );
        assert_eq!((plan.start_seconds, plan.end_seconds), (None, None));
        assert_eq!(reports.len(), 1);
        assert_eq!(reports[0].selects, "labels");
        assert_eq!(reports[0].evictions.len(), 1);
        assert_eq!(reports[0].evictions[0].http_status, 429);
    }

    #[test]
    fn over_a_migrating_vmi_the_same_pdb_only_waits_and_with_budget_says_nothing() {
        let (blockers, reports, plan) = judge(Action::LiveMigrate, vec![pdb("db", 0)]);
        assert_eq!(blockers.len(), 1);
        assert!(!blockers[0].blocking);
        assert!(
            blockers[0]
                .message
                .contains("it only matters if a migration fails"),
            "{}",
            blockers[0].message
        );
        assert!(reports[0].evictions.is_empty(), "the webhook answers first");
        assert_eq!(plan.end_seconds, Some(180));

        let (blockers, reports, plan) = judge(Action::Shutdown, vec![pdb("db", 1)]);
        assert!(blockers.is_empty());
        assert_eq!(reports[0].evictions[0].http_status, 201);
        assert_eq!(plan.end_seconds, Some(180));
    }

    #[test]
    fn two_pdbs_over_one_pod_never_let_it_go() {
        let (blockers, _, plan) = judge(Action::Shutdown, vec![pdb("db", 1), pdb("db2", 1)]);
        assert_eq!(blockers.len(), 1);
        let b = &blockers[0];
        assert_eq!(
            (b.name.as_str(), b.reason.as_str(), b.blocking),
            ("db + db2", "MultiplePodDisruptionBudgets", true)
        );
        assert!(
            b.message.starts_with("db and db2 both select"),
            "{}",
            b.message
        );
        assert!(
            plan.fix
                .as_deref()
                .is_some_and(|f| f.contains("narrow the selector of db or db2")),
            "{:?}",
            plan.fix
        );
    }
}
