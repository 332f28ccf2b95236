//! The summaries a diagnosis carries beside its cause: the migration itself (sides, mode,
//! timing, configuration, the v1.9 stall detector) and the attention lines. They read the view
//! and the v1.9 helpers, so they sit above both.

use super::MigrationInfo;
use super::decentralized::{DecentralizedInfo, SideInfo};
use super::kubevirt19;
use super::objects::*;
use super::view::{ConfigOrigin, View};

/// What `explain` reports about the migration itself; None when there is none to speak of.
pub fn migration_info(view: &View) -> Option<MigrationInfo> {
    let st = view.state;
    let m = view.vmim;
    if m.is_none() && st.is_none() {
        return None;
    }
    let is_final = view.is_final();
    // A decentralized migration's nodes are in sourceState/targetState; the local VMI's
    // node is the source only on the sending side.
    let decentralized = view.decentralized();
    let side_node = |pick: fn(&DecentralizedInfo) -> Option<&SideInfo>| {
        decentralized
            .as_ref()
            .and_then(pick)
            .and_then(|x| x.node.clone())
    };
    let receiver = decentralized
        .as_ref()
        .is_some_and(|d| d.role == crate::model::vmim::DecentralizedRole::Receiver);
    Some(MigrationInfo {
        namespace: view.namespace().to_string(),
        name: m.map(|m| m.name().to_string()).unwrap_or_default(),
        uid: m
            .and_then(|m| m.uid())
            .or_else(|| st.and_then(|st| st.migration_uid.as_deref()))
            .map(str::to_string),
        phase: match m {
            Some(m) if m.status.phase.is_none() => "(none)".into(),
            _ => view.phase.as_str().to_string(),
        },
        created: m
            .and_then(|m| m.metadata.creation_timestamp.as_ref())
            .map(|t| t.0.to_string()),
        object_exists: m.is_some(),
        evacuation_node: m.and_then(|m| m.evacuation_node()).map(str::to_string),
        source_node: side_node(|d| d.source.as_ref())
            .or_else(|| st.and_then(|st| st.source_node.clone()))
            .or_else(|| view.source_pod.and_then(pod_node).map(str::to_string))
            .or_else(|| {
                ((!is_final || view.vmi_unmoved) && !receiver)
                    .then(|| view.vmi.and_then(|v| v.status.node_name.clone()))
                    .flatten()
            })
            // An evacuation migration leaves the node it evacuates, whatever else is known.
            .or_else(|| m.and_then(|m| m.evacuation_node()).map(str::to_string)),
        target_node: side_node(|d| d.target.as_ref())
            .or_else(|| st.and_then(|st| st.target_node.clone()))
            .or_else(|| view.target_pod.and_then(pod_node).map(str::to_string)),
        mode: view.mode().map(|m| m.as_str().to_string()),
        start_timestamp: view.start.map(|t| t.to_string()),
        end_timestamp: view.end.map(|t| t.to_string()),
        elapsed_seconds: view.elapsed(),
        budget_seconds: view.budget,
        policy: view.policy.clone(),
        state_from: view.state_owner.clone(),
        configuration_from: match &view.config_origin {
            ConfigOrigin::Recorded => {
                "recorded in status.migrationState.migrationConfiguration".into()
            }
            ConfigOrigin::Policy(p) => {
                format!("computed now from MigrationPolicy {p} and the KubeVirt CR")
            }
            ConfigOrigin::Cluster => {
                "computed now from the KubeVirt CR (no MigrationPolicy matches)".into()
            }
        },
        network_type: st.and_then(|st| st.migration_network_type.clone()),
        target_memory_overhead: st
            .and_then(|st| st.target_memory_overhead.as_ref())
            .map(|q| q.as_str().to_string()),
        priority: m.and_then(|m| m.spec.priority.clone()),
        decentralized,
        stall_detector: kubevirt19::stall_detector(view),
    })
}

/// What an operator must know before acting, whatever the cause: objects gone or being
/// deleted, evacuation, post-copy, another migration's state, blockers.
pub fn attention(view: &View) -> Vec<String> {
    let mut out = Vec::new();
    let ns = view.namespace();
    if view.vmi.is_none() {
        out.push(format!(
            "The VMI {ns}/{} no longer exists: this is diagnosed from the migration's own status and events.",
            view.vmi_name()
        ));
    }
    if let Some(m) = view.vmim
        && let Some(deleting) = &m.metadata.deletion_timestamp
    {
        if m.is_final() {
            out.push(format!(
                "The migration object is being deleted (since {}): it will disappear soon, and the VMI's migrationState will be the only record.",
                deleting.0
            ));
        } else {
            out.push(format!(
                "Deletion of the migration was requested at {}: KubeVirt treats this as an abort request and keeps the object until the abort is done.",
                deleting.0
            ));
        }
    }
    if let Some(node) = view.vmi.and_then(|v| v.evacuation_node()) {
        let requested = view
            .vmi_condition("EvictionRequested")
            .is_some_and(|c| c.is_true());
        let by = match view
            .vmi
            .and_then(|v| v.annotation("kubevirt.io/eviction-source"))
        {
            Some(src) => format!(", requested by the {src}"),
            None => String::new(),
        };
        out.push(format!(
            "The VMI is marked for evacuation from {node} (status.evacuationNodeName{}{by}): KubeVirt keeps creating evacuation migrations until it has left {node}; to stop that: virtctl evacuate-cancel vmi {} -n {ns}",
            if requested { ", condition EvictionRequested" } else { "" },
            view.vmi_name()
        ));
    }
    if let Some(node) = view.vmim.and_then(|m| m.evacuation_node()) {
        out.push(format!(
            "This is an evacuation migration, created to drain {node} (annotation kubevirt.io/evacuationMigration)."
        ));
    }
    if view.in_post_copy() {
        let (from, to) = (
            view.state
                .and_then(|st| st.source_node.as_deref())
                .unwrap_or("the source"),
            view.state
                .and_then(|st| st.target_node.as_deref())
                .unwrap_or("the target"),
        );
        if view.streaming() {
            out.push(format!(
                "POINT OF NO RETURN: the migration is in post-copy. The guest runs on {to} while its memory is still being pulled from {from}; it cannot be aborted, and a network failure between the nodes now loses the guest."
            ));
        } else if view.state.is_some_and(|st| st.failed) {
            out.push(format!(
                "The migration had switched to post-copy (the point of no return) before it failed: the guest's memory was split between {from} and {to}."
            ));
        }
    }
    if let Some(other) = view.other_state.filter(|_| view.vmim.is_some()) {
        let uid = other.migration_uid.as_deref().unwrap_or("(no uid)");
        let owner = view
            .ev
            .migrations
            .iter()
            .find(|m| m.uid() == Some(uid))
            .map(|m| format!("{} ({})", m.name(), m.phase()))
            .unwrap_or_else(|| "a migration no longer in the cluster".into());
        out.push(format!(
            "The VMI's status.migrationState describes another migration (migrationUid {uid}: {owner}); it is not used for this diagnosis."
        ));
    }
    for p in view.pod_infos().iter().filter(|p| !p.exists) {
        if let Some(name) = &p.name {
            out.push(format!(
                "The {} pod {name} no longer exists: its logs are gone from the cluster (look in your log store).",
                p.role
            ));
        }
    }
    for b in view.migratability.iter().flat_map(|m| &m.reasons) {
        out.push(format!(
            "The VMI cannot live-migrate now: {} (LiveMigratable=False, {}: {}). Fix: {}.",
            b.summary, b.reason, b.message, b.fix
        ));
    }
    for b in view.migratability.iter().flat_map(|m| &m.storage_reasons) {
        out.push(format!(
            "The VMI's volumes cannot be migrated (volume migration only): {} ({}=False, {}: {}).",
            b.summary, b.condition, b.reason, b.message
        ));
    }
    if view.vmim.is_none()
        && let Some(st) = view.state
    {
        out.push(format!(
            "The migration object (uid {}) is gone: KubeVirt deletes aborted migrations and keeps only the newest five finished ones per VMI. This is diagnosed from the VMI's status.migrationState alone.",
            st.migration_uid.as_deref().unwrap_or("unknown")
        ));
    }
    if let Some(line) = kubevirt19::stall_attention(view) {
        out.push(line);
    }
    if let Some(c) = view
        .vmi_condition("Paused")
        .filter(|c| c.is_true() && c.reason.as_deref() == Some("PausedByMigrationMonitor"))
    {
        out.push(format!(
            "The guest is paused by the migration monitor ({}) so its memory can converge.",
            c.message.as_deref().unwrap_or("PausedByMigrationMonitor")
        ));
    }
    if let Some(created) = view.created {
        let newer: Vec<String> = view
            .others()
            .filter(|m| {
                m.metadata
                    .creation_timestamp
                    .as_ref()
                    .is_some_and(|t| t.0 > created)
            })
            .map(|m| format!("{} ({})", m.name(), m.phase()))
            .collect();
        if !newer.is_empty() {
            out.push(format!(
                "This is not the VMI's latest migration; newer: {} (vmctl explain vm/{} -n {} explains the latest).",
                newer.join(", "),
                crate::text::sh_word(view.vmi_name()),
                crate::text::sh_word(ns)
            ));
        }
    }
    out
}

/// Causes of a migration that waits for, or ended without, a target pod on a node.
const NO_TARGET_NODE_CAUSES: &[&str] = &[
    "target-pod-unschedulable",
    "target-pod-create-failed",
    "resource-quota-exceeded",
    "no-node-for-cpu-model",
    "queued-parallel-limit",
    "another-migration-in-progress",
    "blocked-by-backup",
    "blocked-by-utility-volumes",
    "not-live-migratable",
    "migration-backoff",
];

/// A migration's target node in words, the one way `explain` and `record` say it: the node;
/// `not scheduled` when the migration never had a target pod on a node (it waits for one in
/// phase Pending or Scheduling, or it ended, before any memory was copied, for a cause that
/// means none was scheduled); `?` when that cannot be told. `started`: memory was copied.
/// Pure.
pub fn target_words(target_node: Option<&str>, phase: &str, cause: &str, started: bool) -> String {
    match target_node {
        Some(node) => node.to_string(),
        None if !started
            && (matches!(phase, "" | "(none)" | "Pending" | "Scheduling")
                || NO_TARGET_NODE_CAUSES.contains(&cause)) =>
        {
            "not scheduled".into()
        }
        None => "?".into(),
    }
}

/// `node-3 → node-2`, `node-3 → not scheduled`, `? → ?`: a migration's route in words.
pub fn route_words(
    source_node: Option<&str>,
    target_node: Option<&str>,
    phase: &str,
    cause: &str,
    started: bool,
) -> String {
    format!(
        "{} → {}",
        source_node.unwrap_or("?"),
        target_words(target_node, phase, cause, started)
    )
}
