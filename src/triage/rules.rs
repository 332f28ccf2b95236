//! The rule catalogue. Each rule has a stable id (part of the JSON contract), its plane, the
//! fields it reads and its advice, next to the check that decides it. Rules are tried in
//! order and the first that matches decides: specific, status-backed causes come before
//! inferred ones, and `unknown` always matches last.

use super::kubevirt19 as kv19;
use super::objects::*;
use super::strings::{self as s, FailureText, classify_failure};
use super::view::View;
use super::{Fact, Outcome, Plane};
use crate::model::Quantity;
use crate::model::vmi::{AbortStatus, MigrationMode, VmiPhase};
use crate::model::vmim::MigrationPhase;
use crate::render::fmt;

/// A catalogue entry.
pub struct Rule {
    /// Stable id: the `cause` of a diagnosis.
    pub id: &'static str,
    pub plane: Plane,
    /// The fields the rule reads, as `Kind field.path`.
    pub reads: &'static [&'static str],
    /// What to do, in general; a diagnosis adds concrete commands.
    pub advice: &'static str,
    /// A match on a migration that is not final means it cannot go on by itself.
    pub blocks: bool,
    pub(crate) check: fn(&View) -> Option<Finding>,
}

/// What a rule found.
#[derive(Default)]
pub(crate) struct Finding {
    pub summary: String,
    pub evidence: Vec<Fact>,
    pub next_steps: Vec<String>,
    pub inferred: bool,
    /// Overrides the outcome derived from the phase (post-copy loss before the VMIM says so).
    pub outcome: Option<Outcome>,
}

/// Tries the rules in order.
pub(crate) fn decide(view: &View) -> (&'static Rule, Finding) {
    for rule in CATALOGUE {
        if let Some(finding) = (rule.check)(view) {
            return (rule, finding);
        }
    }
    // `unknown` matches everything, so this is only reached if the catalogue is edited badly.
    (&UNKNOWN, unknown(view).unwrap_or_default())
}

pub(crate) fn outcome(view: &View, rule: &Rule, finding: &Finding) -> Outcome {
    if let Some(o) = finding.outcome {
        return o;
    }
    if !view.has_migration() {
        return if rule.blocks {
            Outcome::Blocked
        } else {
            Outcome::NoMigration
        };
    }
    match view.phase {
        MigrationPhase::Succeeded => Outcome::Succeeded,
        MigrationPhase::Failed => Outcome::Failed,
        _ if rule.blocks => Outcome::Blocked,
        _ => Outcome::InProgress,
    }
}

/// Looks a rule up by id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    CATALOGUE.iter().find(|r| r.id == id)
}

const UNKNOWN: Rule = Rule {
    id: "unknown",
    plane: Plane::Unknown,
    reads: &[
        "VirtualMachineInstanceMigration status",
        "VirtualMachineInstance status.migrationState",
        "Event (all of the above)",
    ],
    advice: "Nothing on record explains the outcome; the summary says which fields are missing. Read the virt-controller log and the launcher logs.",
    blocks: true,
    check: unknown,
};

/// The catalogue, in the order the rules are tried.
pub static CATALOGUE: &[Rule] = &[
    Rule {
        id: "target-domain-not-seen",
        plane: Plane::DataPlane,
        reads: &[
            "Event Migrated on the VMI",
            "status.migrationState.{completed,targetNodeDomainDetected}",
            "VirtualMachineInstance status.phase",
        ],
        advice: "The source finished but the target never reported the domain: read the target launcher's and virt-handler's logs on the target node.",
        blocks: true,
        check: target_domain_not_seen,
    },
    Rule {
        id: "succeeded",
        plane: Plane::None,
        reads: &[
            "VirtualMachineInstanceMigration status.phase",
            "status.migrationState.{completed,startTimestamp,endTimestamp,sourceNode,targetNode}",
        ],
        advice: "Nothing to do.",
        blocks: false,
        check: succeeded,
    },
    super::reported::BACKEND_STORAGE_HANDOFF,
    Rule {
        id: "postcopy-failed",
        plane: Plane::DataPlane,
        reads: &[
            "status.migrationState.{mode,failed,failureReason}",
            "VirtualMachineInstance status.phase",
            "VirtualMachineInstance status.conditions[type=Synchronized]",
            "Event SyncFailed on the VMI",
        ],
        advice: "Post-copy is the point of no return: when it fails the guest is lost. Restart the VM, find the network fault between the nodes, and disallow post-copy for workloads that cannot be lost.",
        blocks: true,
        check: postcopy_failed,
    },
    Rule {
        id: "aborted-by-request",
        plane: Plane::None,
        reads: &[
            "status.migrationState.{abortRequested,abortStatus,failureReason}",
            "VirtualMachineInstanceMigration status.conditions[type=migrationAbortRequested]",
            "VirtualMachineInstanceMigration metadata.deletionTimestamp",
            "Event FailedMigration on the VMIM",
        ],
        advice: "Someone deleted the migration (virtctl migrate-cancel, kubectl delete vmim): nothing is broken. Migrate again when ready.",
        blocks: false,
        check: aborted_by_request,
    },
    super::reported::POSTCOPY_UNSUPPORTED,
    kv19::DECENTRALIZED_BLOCKED,
    Rule {
        id: "blocked-by-utility-volumes",
        plane: Plane::ControlPlane,
        reads: &[
            "VirtualMachineInstanceMigration status.conditions[type=migrationBlockedByUtilityVolumes]",
            "Event UtilityVolumeMigrationPending / FailedMigration on the VMIM",
            "VirtualMachineInstance spec.utilityVolumes",
        ],
        advice: "A VMI with utility volumes does not migrate: detach them, or raise utilityVolumesTimeout.",
        blocks: true,
        check: blocked_by_utility_volumes,
    },
    Rule {
        id: "blocked-by-backup",
        plane: Plane::ControlPlane,
        reads: &[
            "VirtualMachineInstanceMigration status.conditions[type=migrationBlockedByBackup]",
            "status.migrationState.failureReason",
            "Event BackupAbortedForMigration / BackupAbortFailed",
        ],
        advice: "A VMI does not migrate while a backup runs: wait for it or cancel it.",
        blocks: true,
        check: blocked_by_backup,
    },
    Rule {
        id: "resource-quota-exceeded",
        plane: Plane::ControlPlane,
        reads: &[
            "VirtualMachineInstanceMigration status.conditions[type=migrationRejectedByResourceQuota]",
            "Event FailedCreate on the VMI (exceeded quota)",
        ],
        advice: "During a migration the source and target pods both count against the namespace's quota: raise the quota by the target pod's request, or free that much.",
        blocks: true,
        check: resource_quota_exceeded,
    },
    Rule {
        id: "target-pod-create-failed",
        plane: Plane::ControlPlane,
        reads: &[
            "Event FailedCreate on the VMI or the VMIM",
            "VirtualMachineInstanceMigration status.phase",
        ],
        advice: "The API server refused the target pod (Pod Security, a webhook, a LimitRange): fix what the message names.",
        blocks: true,
        check: target_pod_create_failed,
    },
    Rule {
        id: "no-node-for-cpu-model",
        plane: Plane::ControlPlane,
        reads: &[
            "Event NoSuitableNodesForHostModelMigration on the VMI",
            "Pod spec.nodeSelector (cpu-model-migration.node.kubevirt.io/*)",
            "Pod status.conditions[type=PodScheduled]",
        ],
        advice: "A host-model CPU only migrates to nodes with the same CPU model and features: use a named CPU model, or add such nodes.",
        blocks: true,
        check: no_node_for_cpu_model,
    },
    Rule {
        id: "target-pod-unschedulable",
        plane: Plane::ControlPlane,
        reads: &[
            "Pod status.conditions[type=PodScheduled] of the target pod",
            "Event FailedScheduling on the target pod",
            "Event migrationTargetPodUnschedulable / SuccessfulDelete on the VMIM",
            "status.migrationState.startTimestamp",
        ],
        advice: "The scheduler found no node for the target pod; KubeVirt deletes it after 300 s. Free what the scheduler's message says is missing.",
        blocks: true,
        check: target_pod_unschedulable,
    },
    Rule {
        id: "target-pod-not-ready",
        plane: Plane::ControlPlane,
        reads: &[
            "Pod status.containerStatuses / initContainerStatuses of the target pod",
            "Event on the target pod (FailedMount, Failed, BackOff…)",
            "Event SuccessfulDelete on the VMIM (pending pod … timeout period exceeded)",
        ],
        advice: "The target pod was scheduled but never became ready (image, init, volumes); KubeVirt deletes it after 900 s pending.",
        blocks: true,
        check: target_pod_not_ready,
    },
    super::reported::TARGET_ON_SOURCE_NODE,
    Rule {
        id: "target-pod-lost",
        plane: Plane::ControlPlane,
        reads: &[
            "status.migrationState.failureReason (Target pod is down)",
            "Event FailedMigration on the VMIM",
            "Pod status.phase of the target pod",
        ],
        advice: "The target pod died or was deleted during the migration: find out why on the target node, then retry.",
        blocks: true,
        check: target_pod_lost,
    },
    Rule {
        id: "vmi-stopped-during-migration",
        plane: Plane::ControlPlane,
        reads: &[
            "Event FailedMigration on the VMIM",
            "VirtualMachineInstance status.phase (or its absence)",
        ],
        advice: "The VM stopped or was deleted while it migrated: there is nothing left to migrate. Start it again if that was not intended.",
        blocks: true,
        check: vmi_stopped_during_migration,
    },
    Rule {
        id: "another-migration-in-progress",
        plane: Plane::ControlPlane,
        reads: &[
            "Event FailedMigration on the VMIM",
            "VirtualMachineInstanceMigration status.phase of the VMI's other migrations",
            "Pod status.phase of the VMI's launcher pods",
        ],
        advice: "Only one migration per VMI runs at a time: wait for the other one, or abort it.",
        blocks: true,
        check: another_migration_in_progress,
    },
    Rule {
        id: "not-live-migratable",
        plane: Plane::ControlPlane,
        reads: &[
            "VirtualMachineInstance status.conditions[type=LiveMigratable]",
            "VirtualMachineInstance status.conditions[type=StorageLiveMigratable]",
            "VirtualMachineInstance spec (volumes, interfaces, devices)",
        ],
        advice: "KubeVirt will not live-migrate this VMI until the condition's reason is removed.",
        blocks: true,
        check: not_live_migratable,
    },
    Rule {
        id: "migration-backoff",
        plane: Plane::ControlPlane,
        reads: &[
            "VirtualMachineInstanceMigration metadata.annotations[kubevirt.io/evacuationMigration|workloadUpdateMigration]",
            "status.phaseTransitionTimestamps[phase=Failed] of the VMI's earlier migrations",
            "Event MigrationBackoff on the VMI",
        ],
        advice: "After a failed evacuation or workload-update migration KubeVirt waits 20 s, doubling per further failure: fix the earlier failure.",
        blocks: true,
        check: migration_backoff,
    },
    Rule {
        id: "queued-parallel-limit",
        plane: Plane::ControlPlane,
        reads: &[
            "VirtualMachineInstanceMigration status.phase of every migration in the cluster",
            "KubeVirt spec.configuration.migrations.{parallelMigrationsPerCluster,parallelOutboundMigrationsPerNode}",
            "VirtualMachineInstance status.nodeName",
        ],
        advice: "The migration waits for a free slot: that is normal. Raise the limits only if the network can carry more.",
        blocks: false,
        check: queued_parallel_limit,
    },
    Rule {
        id: "destination-volume-too-small",
        plane: Plane::DataPlane,
        reads: &["status.migrationState.failureReason"],
        advice: "Volume migration needs a destination volume at least as large as the source.",
        blocks: true,
        check: destination_volume_too_small,
    },
    Rule {
        id: "not-converging",
        plane: Plane::DataPlane,
        reads: &[
            "status.migrationState.{failureReason,abortRequested,startTimestamp,endTimestamp,migrationConfiguration}",
            "VirtualMachineInstance spec.domain.memory.guest / resources.requests.memory",
        ],
        advice: "The guest dirtied memory faster than it could be copied within the completion budget: allow post-copy or auto-converge, raise completionTimeoutPerGiB or the bandwidth, or migrate when the guest is quieter.",
        blocks: true,
        check: not_converging,
    },
    Rule {
        id: "no-progress",
        plane: Plane::DataPlane,
        reads: &[
            "status.migrationState.{failureReason,abortRequested,startTimestamp,endTimestamp,migrationConfiguration}",
            "KubeVirt spec.configuration.migrations.progressTimeout",
        ],
        advice: "Nothing was transferred for progressTimeout seconds: usually the network between the nodes (migration proxy, MTU, firewall).",
        blocks: true,
        check: no_progress,
    },
    Rule {
        id: "connection-failure",
        plane: Plane::DataPlane,
        reads: &["status.migrationState.failureReason"],
        advice: "The connection between source and target broke (libvirt, migration proxy, socket): check the network between the nodes and virt-handler on both.",
        blocks: true,
        check: connection_failure,
    },
    Rule {
        id: "libvirt-error",
        plane: Plane::DataPlane,
        reads: &["status.migrationState.failureReason"],
        advice: "libvirt or QEMU reported an error: the quoted message names it; read the launcher logs.",
        blocks: true,
        check: libvirt_error,
    },
    Rule {
        id: "in-progress",
        plane: Plane::None,
        reads: &[
            "VirtualMachineInstanceMigration status.phase",
            "status.migrationState.{mode,startTimestamp}",
        ],
        advice: "Nothing is wrong yet; the summary says what it waits for.",
        blocks: false,
        check: in_progress,
    },
    super::reported::PDB_BLOCKS_EVICTION,
    Rule {
        id: "no-migration",
        plane: Plane::None,
        reads: &[
            "VirtualMachineInstanceMigration (label kubevirt.io/vmi-name)",
            "VirtualMachineInstance status.conditions[type=LiveMigratable]",
        ],
        advice: "The VMI has no migration on record and nothing stops one: start one if needed.",
        blocks: false,
        check: no_migration,
    },
    UNKNOWN,
];

// ---------------------------------------------------------------- helpers

fn dur(seconds: i64) -> String {
    fmt::duration(seconds)
}

fn or_q(s: Option<&str>) -> &str {
    s.unwrap_or("?")
}

fn src_node<'a>(v: &'a View) -> &'a str {
    v.state
        .and_then(|st| st.source_node.as_deref())
        .or_else(|| v.source_pod.and_then(pod_node))
        .or_else(|| v.vmi.and_then(|x| x.status.node_name.as_deref()))
        .unwrap_or("the source node")
}

fn tgt_node<'a>(v: &'a View) -> &'a str {
    v.state
        .and_then(|st| st.target_node.as_deref())
        .or_else(|| v.target_pod.and_then(pod_node))
        .unwrap_or("the target node")
}

fn retry_step(v: &View) -> String {
    match v.vmi.and_then(|x| x.owner_vm()) {
        Some(vm) => format!(
            "Retry when fixed: virtctl migrate {vm} -n {}",
            v.namespace()
        ),
        None => format!(
            "Retry when fixed: create a VirtualMachineInstanceMigration with spec.vmiName: {} in {} (bare VMI: virtctl migrate needs a VM)",
            v.vmi_name(),
            v.namespace()
        ),
    }
}

fn failure_fact(v: &View) -> Option<Fact> {
    v.failure_reason()
        .map(|r| v.state_fact("failureReason", r.to_string()))
}

/// The not-yet-streamed phases in which target-pod problems can block a migration.
fn before_streaming(v: &View) -> bool {
    v.start.is_none()
}

/// Seconds left until `deadline`, as words.
fn until(v: &View, deadline_second: i64) -> String {
    let left = deadline_second - v.now.as_second();
    if left > 0 {
        format!("in {}", dur(left))
    } else {
        format!("{} ago", dur(-left))
    }
}

fn ts_string(second: i64) -> String {
    k8s_openapi::jiff::Timestamp::from_second(second)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| second.to_string())
}

// ---------------------------------------------------------------- rules

fn succeeded(v: &View) -> Option<Finding> {
    if v.phase != MigrationPhase::Succeeded {
        return None;
    }
    let mut evidence = Vec::new();
    if let Some(st) = v.state {
        evidence.push(v.state_fact("completed", st.completed.to_string()));
        if let Some(t) = &st.target_node {
            evidence.push(v.state_fact("targetNode", t.clone()));
        }
    }
    let took = v
        .elapsed()
        .map(|e| {
            let budget = v
                .budget
                .filter(|b| *b > 0)
                .map(|b| format!(" of its {} completion budget", dur(b as i64)))
                .unwrap_or_default();
            format!(" in {}{budget}", dur(e))
        })
        .unwrap_or_default();
    let mut summary = format!(
        "The VMI moved from {} to {}{took}{}.",
        src_node(v),
        tgt_node(v),
        if v.in_post_copy() {
            ", finishing in post-copy"
        } else {
            ""
        }
    );
    if v.abort_requested() {
        summary.push_str(" An abort was requested, but the migration completed first.");
    }
    Some(Finding {
        summary,
        evidence,
        ..Default::default()
    })
}

fn postcopy_failed(v: &View) -> Option<Finding> {
    if !v.in_post_copy() {
        return None;
    }
    let sync = v.vmi_condition("Synchronized").filter(|c| {
        c.is_false()
            && c.message
                .as_deref()
                .is_some_and(|m| m.contains(s::POSTCOPY_IRRECOVERABLE))
    });
    let sync_event = v.newest_event(|e| {
        event_reason(e) == s::REASON_SYNC_FAILED
            && event_message(e).contains(s::POSTCOPY_IRRECOVERABLE)
    });
    let state_failed = v.state.is_some_and(|st| st.failed);
    if !(state_failed || sync.is_some() || sync_event.is_some()) {
        return None;
    }
    let mut f = Finding {
        outcome: Some(Outcome::Failed),
        ..Default::default()
    };
    f.evidence.push(v.state_fact("mode", "PostCopy"));
    if state_failed {
        f.evidence.push(v.state_fact("failed", "true"));
    }
    f.evidence.extend(failure_fact(v));
    if let Some(p) = v.vmi_phase() {
        f.evidence.push(v.vmi_fact("status.phase", p.as_str()));
    }
    if let Some(c) = sync {
        f.evidence.push(v.vmi_fact(
            "status.conditions[type=Synchronized].message",
            c.message.clone().unwrap_or_default(),
        ));
    }
    if let Some(e) = sync_event {
        f.evidence.push(v.event_fact(e));
    }
    let trigger = v
        .failure_reason()
        .map(|r| {
            let msg = s::libvirt_error(r)
                .map(|(_, m)| m)
                .unwrap_or_else(|| r.to_string());
            format!(" What broke it: {msg}.")
        })
        .unwrap_or_default();
    let vmi_state = match v.vmi_phase() {
        Some(VmiPhase::Failed) => "the VMI is Failed",
        Some(_) if sync.is_some() => "the VMI is irrecoverable",
        Some(_) => "the VMI is not recoverable",
        None => "the VMI is gone",
    };
    f.summary = format!(
        "The migration failed after it had switched to post-copy, the point of no return: the guest's memory was split between {} and {}, so it could not fall back to the source and the VM was lost ({vmi_state}).{trigger}",
        src_node(v),
        tgt_node(v)
    );
    let ns = v.namespace();
    f.next_steps.push(match v.vmi.and_then(|x| x.owner_vm()) {
        Some(vm) => format!(
            "Start the VM again (a runStrategy of Always or RerunOnFailure does it by itself): virtctl start {vm} -n {ns}"
        ),
        None => format!(
            "The bare VMI {} cannot restart: recreate it from its manifest",
            v.vmi_name()
        ),
    });
    f.next_steps.push(format!(
        "Find the network fault between {} and {} around {}: read virt-handler's log on both nodes (kubectl get pods -n kubevirt -l kubevirt.io=virt-handler -o wide, then kubectl logs -n kubevirt <pod>)",
        src_node(v),
        tgt_node(v),
        v.end.map(|t| t.to_string()).unwrap_or_else(|| "the failure".into())
    ));
    f.next_steps.push(format!(
        "If this workload cannot afford to be lost, do not allow post-copy for it: {}",
        v.patch_setting("allowPostCopy", "false")
    ));
    Some(f)
}

fn aborted_by_request(v: &View) -> Option<Finding> {
    let canceled = v
        .vmim_events()
        .find(|e| event_reason(e) == s::REASON_FAILED_MIGRATION && event_message(e) == s::CANCELED);
    let v18_user_abort = v
        .failure_reason()
        .is_some_and(|r| classify_failure(r) == FailureText::UserAbortV18);
    if !(v.abort_requested() || canceled.is_some() || v18_user_abort) {
        return None;
    }
    let mut f = Finding::default();
    if let Some(st) = v.state
        && st.abort_requested
    {
        f.evidence.push(v.state_fact("abortRequested", "true"));
    }
    if let Some(c) = v.vmim_condition(s::COND_ABORT_REQUESTED) {
        let when = c
            .last_transition_time
            .as_ref()
            .or(c.last_probe_time.as_ref())
            .map(|t| t.0.to_string())
            .unwrap_or_else(|| "True".into());
        f.evidence.push(v.vmim_fact(
            "status.conditions[type=migrationAbortRequested]",
            format!("True ({when})"),
        ));
    }
    if let Some(st) = v.state
        && let Some(a) = &st.abort_status
    {
        f.evidence.push(v.state_fact("abortStatus", a.as_str()));
    }
    f.evidence.extend(failure_fact(v));
    if let Some(e) = canceled {
        f.evidence.push(v.event_fact(e));
    }
    let requested_at = v
        .vmim
        .and_then(|m| m.metadata.deletion_timestamp.as_ref())
        .map(|t| format!(" at {}", t.0))
        .unwrap_or_default();
    let abort_status = v.state.and_then(|st| st.abort_status.as_ref());
    let ns = v.namespace();
    if !v.is_final() {
        f.summary = format!(
            "An abort was requested{requested_at} and is under way (abortStatus {}): the guest stays on {}.",
            abort_status
                .map(|a| a.as_str())
                .unwrap_or("not reported yet"),
            src_node(v)
        );
        return Some(f);
    }
    f.outcome = Some(Outcome::Aborted);
    let how = if v.start.is_none() {
        "before any memory was copied (the target pod was deleted)".to_string()
    } else {
        format!("after {} of streaming", dur(v.elapsed().unwrap_or(0)))
    };
    f.summary = match abort_status {
        Some(AbortStatus::Failed) => format!(
            "An abort was requested{requested_at}, but the abort itself failed (abortStatus Failed) and the migration failed anyway {how}; the guest stays on {}.",
            src_node(v)
        ),
        _ => format!(
            "The migration was aborted on request{requested_at} (its VMIM was deleted, e.g. by virtctl migrate-cancel) {how}: nothing is broken, the guest stays on {}.",
            src_node(v)
        ),
    };
    f.next_steps.push(
        "Find out who asked for it: the VMIM's deletion (API server audit log, or whoever ran virtctl migrate-cancel)"
            .to_string(),
    );
    f.next_steps.push(match v.vmi.and_then(|x| x.owner_vm()) {
        Some(vm) => format!("Migrate again when ready: virtctl migrate {vm} -n {ns}"),
        None => format!(
            "Migrate again when ready: create a VirtualMachineInstanceMigration with spec.vmiName: {}",
            v.vmi_name()
        ),
    });
    Some(f)
}

fn target_domain_not_seen(v: &View) -> Option<Finding> {
    let event = v.newest_event(|e| {
        event_reason(e) == s::REASON_MIGRATED
            && (event_message(e) == s::DOMAIN_NEVER_OBSERVED
                || event_message(e) == s::MIGRATED_UNKNOWN_HOST)
    });
    // The VMIM turns Succeeded when the source reports completion; virt-handler fails the
    // VMI only afterwards, so a Succeeded phase does not rule this out.
    let inferred_case = event.is_none()
        && v.state.is_some_and(|st| {
            st.completed && !st.failed && st.target_node_domain_detected != Some(true)
        })
        && v.vmi_phase() == Some(&VmiPhase::Failed);
    if event.is_none() && !inferred_case {
        return None;
    }
    let mut f = Finding {
        outcome: Some(Outcome::Failed),
        inferred: inferred_case,
        ..Default::default()
    };
    if let Some(e) = event {
        f.evidence.push(v.event_fact(e));
    }
    if let Some(st) = v.state {
        f.evidence.push(
            v.state_fact(
                "targetNodeDomainDetected",
                st.target_node_domain_detected
                    .map(|b| b.to_string())
                    .unwrap_or_else(|| "(absent)".into()),
            ),
        );
    }
    if let Some(p) = v.vmi_phase() {
        f.evidence.push(v.vmi_fact("status.phase", p.as_str()));
    }
    let unknown_host = event.is_some_and(|e| event_message(e) == s::MIGRATED_UNKNOWN_HOST);
    f.summary = if unknown_host {
        "The source finished streaming but the migration state named no target node, so virt-handler failed the VMI (The VirtualMachineInstance migrated to unknown host.).".to_string()
    } else {
        format!(
            "The source finished streaming{}, but the target node {} never reported the domain within 60 s, so virt-handler on {} failed the VMI.{}",
            v.end.map(|t| format!(" at {t}")).unwrap_or_default(),
            tgt_node(v),
            src_node(v),
            if inferred_case {
                " (Inferred: the migration completed, targetNodeDomainDetected is not true and the VMI is Failed.)"
            } else {
                ""
            }
        )
    };
    let ns = v.namespace();
    if let Some(t) = &v.target_pod_name {
        f.next_steps.push(if v.target_pod.is_some() {
            format!("Read the target launcher's log: kubectl logs -n {ns} {t} -c compute")
        } else {
            format!("The target pod {t} is gone: search your log store for its compute container")
        });
    }
    f.next_steps.push(format!(
        "Read virt-handler's log on {} (kubectl get pods -n kubevirt -l kubevirt.io=virt-handler -o wide)",
        tgt_node(v)
    ));
    f.next_steps.push(match v.vmi.and_then(|x| x.owner_vm()) {
        Some(vm) => format!("Start the VM again if it did not restart: virtctl start {vm} -n {ns}"),
        None => "Recreate the bare VMI from its manifest".to_string(),
    });
    Some(f)
}

fn blocked_by_utility_volumes(v: &View) -> Option<Finding> {
    let cond = v.vmim_condition(s::COND_UTILITY_VOLUMES);
    let pending_event = v
        .vmim_events()
        .filter(|e| event_reason(e) == s::REASON_UTILITY_VOLUMES)
        .max_by_key(|e| event_last(e));
    let timeout = v
        .vmim_events()
        .find(|e| event_message(e).starts_with(s::UTILITY_VOLUMES_TIMEOUT_PREFIX));
    let applies = timeout.is_some()
        || (cond.is_some() || pending_event.is_some())
            && (matches!(v.phase, MigrationPhase::Pending | MigrationPhase::Unset)
                || (v.phase == MigrationPhase::Failed && before_streaming(v)));
    if !applies {
        return None;
    }
    let mut f = Finding::default();
    if let Some(c) = cond {
        f.evidence.push(v.vmim_fact(
            "status.conditions[type=migrationBlockedByUtilityVolumes].message",
            c.message.clone().unwrap_or_else(|| "True".into()),
        ));
    }
    for e in [pending_event, timeout].into_iter().flatten() {
        f.evidence.push(v.event_fact(e));
    }
    let names: Vec<String> = v
        .vmi
        .map(|x| {
            x.spec
                .utility_volumes
                .iter()
                .filter_map(|u| u.get("name").and_then(|n| n.as_str()).map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if !names.is_empty() {
        f.evidence
            .push(v.vmi_fact("spec.utilityVolumes[*].name", names.join(", ")));
    }
    let limit = v
        .state
        .and_then(|st| st.migration_configuration.as_ref())
        .and_then(|c| c.utility_volumes_timeout)
        .or_else(|| {
            v.ev.kubevirt
                .as_ref()
                .and_then(|k| k.spec.configuration.migrations.as_ref())
                .and_then(|m| m.utility_volumes_timeout)
        })
        .unwrap_or(150) as i64;
    let vols = if names.is_empty() {
        "its utility volumes".to_string()
    } else {
        format!("its utility volumes ({})", names.join(", "))
    };
    f.summary = if let Some(e) = timeout {
        format!(
            "The migration failed because {vols} were still attached after the timeout: {}",
            event_message(e)
        )
    } else {
        let deadline = v
            .created
            .map(|c| {
                let d = c.as_second() + limit;
                format!(
                    "; it fails at {} ({}), utilityVolumesTimeout {limit} s after creation",
                    ts_string(d),
                    until(v, d)
                )
            })
            .unwrap_or_default();
        format!("The migration waits for {vols} to detach from the VMI{deadline}.")
    };
    f.next_steps.push(format!(
        "Detach the utility volumes (remove them from spec.utilityVolumes of the VM: kubectl edit vm {} -n {}) or let the job using them finish",
        v.vmi.and_then(|x| x.owner_vm()).unwrap_or(v.vmi_name()),
        v.namespace()
    ));
    f.next_steps.push(format!(
        "Or give them more time: {}",
        v.patch_kubevirt_migrations("utilityVolumesTimeout", &(limit * 2).to_string())
    ));
    Some(f)
}

fn blocked_by_backup(v: &View) -> Option<Finding> {
    let cond = v.vmim_condition(s::COND_BACKUP);
    let launcher = v
        .failure_reason()
        .filter(|r| r.contains(s::BACKUP_IN_PROGRESS_LAUNCHER));
    let abort_failed = v
        .vmim_events()
        .find(|e| event_reason(e) == s::REASON_BACKUP_ABORT_FAILED);
    let pending = matches!(v.phase, MigrationPhase::Pending | MigrationPhase::Unset);
    if !(launcher.is_some() || (pending && (cond.is_some() || abort_failed.is_some()))) {
        return None;
    }
    let mut f = Finding::default();
    let message = cond.and_then(|c| c.message.clone());
    if let Some(c) = cond {
        f.evidence.push(v.vmim_fact(
            "status.conditions[type=migrationBlockedByBackup].message",
            c.message.clone().unwrap_or_else(|| "True".into()),
        ));
    }
    f.evidence.extend(launcher.and_then(|_| failure_fact(v)));
    if let Some(e) = abort_failed {
        f.evidence.push(v.event_fact(e));
    }
    if let Some(b) = v
        .vmi
        .and_then(|x| x.status.changed_block_tracking.as_ref())
        .and_then(|c| c.get("backupStatus"))
    {
        f.evidence
            .push(v.vmi_fact("status.changedBlockTracking.backupStatus", b.to_string()));
    }
    f.summary = match (launcher, message) {
        (Some(r), _) => format!("The source launcher refused to migrate while a backup runs: {r}."),
        (None, Some(m)) if m.starts_with("Aborting backup") => format!(
            "This system-critical migration is aborting the VMI's backup before it can proceed ({m}){}.",
            if abort_failed.is_some() {
                ", but the abort failed (BackupAbortFailed)"
            } else {
                ""
            }
        ),
        (None, Some(m)) => format!(
            "The migration waits while the VMI is being backed up ({m}); it proceeds when the backup completes."
        ),
        (None, None) => {
            "The migration waits while the VMI is being backed up; it proceeds when the backup completes.".to_string()
        }
    };
    f.next_steps.push(format!(
        "Watch the backup: kubectl get vmi {} -n {} -o jsonpath='{{.status.changedBlockTracking.backupStatus}}'",
        v.vmi_name(),
        v.namespace()
    ));
    f.next_steps.push(
        "Wait for it to complete, or cancel the backup if the migration is more urgent".into(),
    );
    Some(f)
}

/// `exceeded quota: q, requested: a=1,b=2, used: a=1, limited: a=3` → parts.
struct QuotaMessage {
    name: String,
    requested: Vec<(String, String)>,
    used: Vec<(String, String)>,
    limited: Vec<(String, String)>,
}

fn parse_quota_message(message: &str) -> Option<QuotaMessage> {
    let rest = &message[message.find("exceeded quota: ")? + "exceeded quota: ".len()..];
    let (name, rest) = rest.split_once(',')?;
    let pairs = |text: &str| -> Vec<(String, String)> {
        text.split(',')
            .filter_map(|kv| kv.trim().split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect()
    };
    let section = |label: &str, next: Option<&str>| -> Vec<(String, String)> {
        let Some(start) = rest.find(label) else {
            return Vec::new();
        };
        let body = &rest[start + label.len()..];
        let body = match next.and_then(|n| body.find(n)) {
            Some(end) => &body[..end],
            None => body,
        };
        pairs(body.trim_end_matches(',').trim())
    };
    Some(QuotaMessage {
        name: name.trim().to_string(),
        requested: section("requested: ", Some(", used: ")),
        used: section("used: ", Some(", limited: ")),
        limited: section("limited: ", None),
    })
}

/// A quantity in the unit an operator would write it in.
fn format_quantity(resource: &str, millis: i128) -> String {
    let bytes_like = resource.contains("memory") || resource.contains("storage");
    if bytes_like {
        let bytes = (millis + 999) / 1000;
        let mi = (bytes + (1 << 20) - 1) >> 20;
        format!("{mi}Mi")
    } else if millis % 1000 == 0 {
        format!("{}", millis / 1000)
    } else {
        format!("{millis}m")
    }
}

fn resource_quota_exceeded(v: &View) -> Option<Finding> {
    if !before_streaming(v) {
        return None;
    }
    let cond = v.vmim_condition(s::COND_QUOTA);
    let event = v.newest_event(|e| {
        event_reason(e) == s::REASON_FAILED_CREATE && event_message(e).contains(s::EXCEEDED_QUOTA)
    });
    let open = matches!(v.phase, MigrationPhase::Pending | MigrationPhase::Unset);
    if !(cond.is_some() || (event.is_some() && (open || v.phase == MigrationPhase::Failed))) {
        return None;
    }
    let mut f = Finding::default();
    if cond.is_some() {
        f.evidence.push(v.vmim_fact(
            "status.conditions[type=migrationRejectedByResourceQuota].status",
            "True",
        ));
    }
    let parsed = event.and_then(|e| parse_quota_message(event_message(e)));
    if let Some(e) = event {
        f.evidence.push(v.event_fact(e));
    }
    let ns = v.namespace();
    let mut shortfalls = Vec::new();
    if let Some(q) = &parsed {
        for (resource, requested) in &q.requested {
            let get = |list: &[(String, String)]| {
                list.iter()
                    .find(|(k, _)| k == resource)
                    .and_then(|(_, v)| Quantity::parse(v).ok())
            };
            let (Ok(req), Some(used), Some(limit)) =
                (Quantity::parse(requested), get(&q.used), get(&q.limited))
            else {
                continue;
            };
            let need = used.millis() + req.millis();
            if need > limit.millis() {
                shortfalls.push((
                    resource.clone(),
                    requested.clone(),
                    format_quantity(resource, need),
                    format_quantity(resource, need - limit.millis()),
                    limit.as_str().to_string(),
                    used.as_str().to_string(),
                ));
            }
        }
    }
    let quota = parsed
        .as_ref()
        .map(|q| format!("ResourceQuota {ns}/{}", q.name))
        .unwrap_or_else(|| "a ResourceQuota".into());
    // limits.memory and requests.memory usually read the same: say it once.
    let mut groups: Vec<(Vec<&str>, String)> = Vec::new();
    for (r, req, _, short, limit, used) in &shortfalls {
        let text =
            format!("the target pod requests {req}, {used} of {limit} is used, {short} short");
        match groups.iter_mut().find(|(_, t)| *t == text) {
            Some((names, _)) => names.push(r),
            None => groups.push((vec![r], text)),
        }
    }
    let detail = groups
        .iter()
        .map(|(names, text)| format!("{}: {text}", names.join(" and ")))
        .collect::<Vec<_>>()
        .join("; ");
    f.summary = format!(
        "The target pod cannot be created: it would exceed {quota}{}. The source and target pods both count during a migration; KubeVirt retries without a time limit, so the migration stays Pending until there is room.",
        if detail.is_empty() {
            String::new()
        } else {
            format!(" ({detail})")
        }
    );
    if let Some(q) = &parsed {
        f.next_steps
            .push(format!("kubectl describe resourcequota -n {ns} {}", q.name));
        if !shortfalls.is_empty() {
            let hard: Vec<String> = shortfalls
                .iter()
                .map(|(r, _, need, _, _, _)| format!("\"{r}\":\"{need}\""))
                .collect();
            f.next_steps.push(format!(
                "Raise the quota for the duration of the migration: kubectl patch resourcequota -n {ns} {} --type merge -p '{{\"spec\":{{\"hard\":{{{}}}}}}}'",
                q.name,
                hard.join(",")
            ));
            let mut free: Vec<String> = Vec::new();
            for (r, _, _, short, _, _) in &shortfalls {
                match free
                    .iter_mut()
                    .find(|f| f.starts_with(&format!("{short} of ")))
                {
                    Some(f) => f.push_str(&format!(" and {r}")),
                    None => free.push(format!("{short} of {r}")),
                }
            }
            f.next_steps.push(format!(
                "Or free {} in namespace {ns} (stop or shrink another workload) while the migration runs",
                free.join(", ")
            ));
        }
    } else {
        f.next_steps
            .push(format!("kubectl describe resourcequota -n {ns}"));
    }
    Some(f)
}

fn target_pod_create_failed(v: &View) -> Option<Finding> {
    if !before_streaming(v) || v.target_pod.is_some() {
        return None;
    }
    let open = matches!(
        v.phase,
        MigrationPhase::Pending | MigrationPhase::Unset | MigrationPhase::Failed
    );
    let event = v.newest_event(super::unexplained::is_target_pod_create_failure)?;
    if !open {
        return None;
    }
    let mut f = create_failed_finding(v, event);
    // On the VMI, a FailedCreate without virt-controller's prefix is taken for the target
    // pod's because nothing else names it.
    f.inferred = event.involved_object.kind.as_deref() != Some("VirtualMachineInstanceMigration")
        && !event_message(event).starts_with(s::ERROR_CREATING_POD);
    Some(f)
}

/// The finding for a refused target pod, from the newest FailedCreate about it.
pub(crate) fn create_failed_finding(v: &View, event: &crate::model::Event) -> Finding {
    let msg = event_message(event);
    let mut f = Finding {
        evidence: vec![v.event_fact(event)],
        ..Default::default()
    };
    let repeated = v
        .events
        .iter()
        .filter(|e| super::unexplained::is_target_pod_create_failure(e))
        .map(|e| event_count(e))
        .sum::<i64>();
    f.summary = format!(
        "virt-controller cannot create the target pod{}: {msg}",
        if repeated > 1 {
            format!(" ({repeated} attempts so far, retried with backoff)")
        } else {
            String::new()
        }
    );
    let ns = v.namespace();
    let lower = msg.to_ascii_lowercase();
    // A webhook's message may well talk about privileges: the webhook is what refused.
    if lower.contains("admission webhook") {
        f.next_steps.push(
            "An admission webhook refused the pod: the message names it; check its policy for virt-launcher pods"
                .into(),
        );
    } else if lower.contains("podsecurity") || lower.contains("privileged") {
        f.next_steps.push(format!(
            "virt-launcher pods need the privileged Pod Security level: kubectl label namespace {ns} pod-security.kubernetes.io/enforce=privileged --overwrite"
        ));
    } else if lower.contains("limitrange") || lower.contains("maximum") || lower.contains("minimum")
    {
        f.next_steps.push(format!(
            "A LimitRange rejects the launcher's resources: kubectl describe limitrange -n {ns}"
        ));
    }
    f.next_steps.push(format!(
        "See every attempt: kubectl get events -n {ns} --field-selector reason=FailedCreate"
    ));
    f
}

/// The scheduler's verdict without the preemption epilogue.
fn scheduler_summary(message: &str) -> &str {
    message
        .split(" preemption:")
        .next()
        .unwrap_or(message)
        .trim_end()
        .trim_end_matches('.')
}

/// What each clause of a FailedScheduling message asks the operator to do.
fn scheduler_hints(v: &View, message: &str) -> Vec<String> {
    let mut hints = Vec::new();
    let need_memory = v
        .target_pod
        .and_then(pod_memory_request)
        .map(|b| format!("{}Mi", b.div_ceil(1 << 20)));
    let lower = message.to_ascii_lowercase();
    if lower.contains("insufficient memory") {
        hints.push(format!(
            "No node has {} of memory free for the target pod: free memory on a node (migrate or stop other VMs), add a node, or lower the VM's memory. See the room a drain needs with: vmctl plan-drain {}",
            need_memory.as_deref().unwrap_or("the requested amount"),
            src_node(v)
        ));
    }
    if lower.contains("insufficient cpu") {
        hints.push(
            "No node has the requested CPU free for the target pod: free CPU or add a node".into(),
        );
    }
    if lower.contains("insufficient devices.kubevirt.io") {
        hints.push("A KubeVirt device (kvm, tun, vhost-net) is exhausted or not advertised on the other nodes: check virt-handler and the device plugins there".into());
    }
    if lower.contains("untolerated taint") {
        hints.push("Some nodes carry taints the VMI does not tolerate (the message lists them): add a toleration to the VM or use other nodes".into());
    }
    if lower.contains("didn't match pod's node affinity/selector") {
        hints.push(format!(
            "The VMI's nodeSelector/affinity (plus the VMIM's addedNodeSelector and any CPU-model labels) excludes nodes: compare kubectl get pod -n {} {} -o jsonpath='{{.spec.nodeSelector}}' with the nodes' labels",
            v.namespace(),
            v.target_pod_name.as_deref().unwrap_or("<target pod>")
        ));
    }
    if lower.contains("didn't match pod anti-affinity rules") {
        hints.push("Pod anti-affinity excludes nodes; one of them is always the source node (KubeVirt keeps source and target apart)".into());
    }
    if lower.contains("were unschedulable") {
        hints.push("Some nodes are cordoned: uncordon one or add capacity".into());
    }
    if lower.contains("volume node affinity conflict") {
        hints.push("A volume is bound to a zone or node the target cannot use: the VM's storage must be reachable from the target node".into());
    }
    if hints.is_empty() {
        hints.push(format!(
            "Read the scheduler's full verdict: kubectl describe pod -n {} {}",
            v.namespace(),
            v.target_pod_name.as_deref().unwrap_or("<target pod>")
        ));
    }
    hints
}

fn no_node_for_cpu_model(v: &View) -> Option<Finding> {
    if !before_streaming(v) || (v.is_final() && v.phase != MigrationPhase::Failed) {
        return None;
    }
    let event = v
        .vmi_events()
        .filter(|e| event_reason(e) == s::REASON_NO_NODE_FOR_CPU_MODEL)
        .max_by_key(|e| event_last(e));
    let cpu_selectors: Vec<String> = v
        .target_pod
        .and_then(|p| p.spec.as_ref())
        .and_then(|sp| sp.node_selector.as_ref())
        .map(|sel| {
            sel.keys()
                .filter(|k| k.starts_with("cpu-model-migration.node.kubevirt.io/"))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let unsched = v
        .target_pod
        .and_then(|p| pod_condition(p, "PodScheduled"))
        .filter(|c| c.status == "False")
        .and_then(|c| c.message);
    let selector_only = unsched.is_some_and(|m| {
        let lower = m.to_ascii_lowercase();
        lower.contains("didn't match pod's node affinity/selector")
            && !lower.contains("insufficient")
    }) && !cpu_selectors.is_empty();
    if event.is_none() && !selector_only {
        return None;
    }
    let mut f = Finding {
        inferred: event.is_none(),
        ..Default::default()
    };
    if let Some(e) = event {
        f.evidence.push(v.event_fact(e));
    }
    if let (Some(p), false) = (&v.target_pod_name, cpu_selectors.is_empty()) {
        f.evidence
            .push(v.pod_fact(p, "spec.nodeSelector", cpu_selectors.join(", ")));
    }
    if let (Some(p), Some(m)) = (&v.target_pod_name, unsched) {
        f.evidence.push(v.pod_fact(
            p,
            "status.conditions[type=PodScheduled].message",
            m.to_string(),
        ));
    }
    let model = cpu_selectors
        .first()
        .and_then(|k| k.rsplit('/').next())
        .map(|m| format!(" ({m})"))
        .unwrap_or_default();
    f.summary = format!(
        "No other node can run the VMI's host-model CPU{model}: the target pod must land on a node with the same CPU model and features, and none has them.{}",
        event
            .map(|e| format!(" {}", event_message(e)))
            .unwrap_or_default()
    );
    if let Some(k) = cpu_selectors.first() {
        f.next_steps.push(format!(
            "See which nodes qualify: kubectl get nodes -l {k}=true"
        ));
    }
    f.next_steps.push(
        "Give VMs that must migrate a named CPU model common to the nodes (spec.domain.cpu.model), or add nodes with the same CPU"
            .into(),
    );
    Some(f)
}

fn target_pod_unschedulable(v: &View) -> Option<Finding> {
    if !before_streaming(v) {
        return None;
    }
    let cond = v
        .target_pod
        .and_then(|p| pod_condition(p, "PodScheduled"))
        .filter(|c| c.status == "False" && c.reason == Some("Unschedulable"));
    let deleted = v.vmim_event_starting(s::UNSCHEDULABLE_DELETE_PREFIX);
    let sched_event = v
        .target_pod_events()
        .filter(|e| event_reason(e) == s::REASON_FAILED_SCHEDULING)
        .max_by_key(|e| event_last(e));
    let vmim_event = v
        .vmim_events()
        .filter(|e| event_reason(e) == s::REASON_TARGET_UNSCHEDULABLE)
        .max_by_key(|e| event_last(e));
    let applies = match &v.phase {
        MigrationPhase::Failed => {
            deleted.is_some()
                || (sched_event.is_some() || vmim_event.is_some()) && v.target_pod.is_none()
        }
        p if p.is_final() => false,
        _ => cond.is_some() || (v.target_pod.is_none() && vmim_event.is_some()),
    };
    if !applies {
        return None;
    }
    let pod = v
        .target_pod_name
        .clone()
        .unwrap_or_else(|| "(unknown)".into());
    let mut f = Finding::default();
    let message = cond
        .as_ref()
        .and_then(|c| c.message)
        .or_else(|| sched_event.map(event_message));
    if let Some(c) = &cond {
        f.evidence.push(v.pod_fact(
            &pod,
            "status.conditions[type=PodScheduled].reason",
            c.reason.unwrap_or("").to_string(),
        ));
        if let Some(m) = c.message {
            f.evidence.push(v.pod_fact(
                &pod,
                "status.conditions[type=PodScheduled].message",
                m.to_string(),
            ));
        }
    }
    for e in [sched_event, vmim_event, deleted].into_iter().flatten() {
        f.evidence.push(v.event_fact(e));
    }
    if let Some(m) = v.vmim {
        f.evidence.push(
            v.vmim_fact(
                "status.migrationState.startTimestamp",
                m.status
                    .migration_state
                    .as_ref()
                    .and_then(|st| st.start_timestamp.as_ref())
                    .map(|t| t.0.to_string())
                    .unwrap_or_else(|| "(absent: no memory was copied)".into()),
            ),
        );
    }
    let verdict = message
        .map(|m| format!(": {}", scheduler_summary(m)))
        .unwrap_or_default();
    let pending = kv19::pending_deadline(v, true);
    let mut created_fact = None;
    let timeout = pending.timeout;
    let why_timeout = kv19::override_words(&pending);
    f.summary = if v.phase == MigrationPhase::Failed {
        format!(
            "The target pod {pod} could not be scheduled{verdict}. KubeVirt deleted it {} after its creation{why_timeout} and failed the migration before any memory was copied.",
            dur(timeout)
        )
    } else {
        // virt-controller measures from the pod's creation (handlePendingPodTimeout).
        let deadline = pending
            .deadline
            .map(|d| d.as_second())
            .or_else(|| cond.as_ref().and_then(|c| c.since).map(|s| s.as_second() + timeout))
            .map(|d| {
                let when = if d <= v.now.as_second() && kv19::target_pod_pending(v) {
                    format!(
                        "it was due at {} ({}), and virt-controller has not acted on it yet (check that virt-controller runs and sees this migration)",
                        ts_string(d),
                        until(v, d)
                    )
                } else {
                    format!("at {} ({})", ts_string(d), until(v, d))
                };
                if let (Some(p), Some(created)) = (
                    v.target_pod,
                    v.target_pod
                        .and_then(|p| p.metadata.creation_timestamp.as_ref()),
                ) {
                    created_fact = Some(v.pod_fact(
                        pod_name(p),
                        "metadata.creationTimestamp",
                        created.0.to_string(),
                    ));
                }
                format!(
                    " KubeVirt deletes an unschedulable target pod {} after its creation{why_timeout}, and the migration then fails: {when}.",
                    dur(timeout)
                )
            })
            .unwrap_or_default();
        format!("The target pod {pod} cannot be scheduled{verdict}.{deadline}")
    };
    if let Some(mut fact) = created_fact {
        fact.note = Some("the pending-pod timeouts count from here".into());
        f.evidence.push(fact);
    }
    if let (Some(a), Some(m)) = (pending.overridden_by, v.vmim) {
        f.evidence.push(v.vmim_fact(
            &format!("metadata.annotations[{a}]"),
            m.annotation(a).unwrap_or("").to_string(),
        ));
    }
    if let Some(m) = message {
        f.next_steps.extend(scheduler_hints(v, m));
    }
    if v.target_pod.is_some() {
        f.next_steps
            .push(format!("kubectl describe pod -n {} {pod}", v.namespace()));
    }
    if v.is_final() {
        f.next_steps.push(retry_step(v));
    }
    Some(f)
}

fn target_pod_not_ready(v: &View) -> Option<Finding> {
    if !before_streaming(v) {
        return None;
    }
    let deleted = v.vmim_event_starting(s::PENDING_DELETE_PREFIX);
    let pod = v.target_pod;
    let problems = pod.map(pod_container_problems).unwrap_or_default();
    let warnings: Vec<_> = v
        .target_pod_events()
        .filter(|e| event_is_warning(e) && event_reason(e) != s::REASON_FAILED_SCHEDULING)
        .collect();
    let scheduled = pod.is_some_and(|p| {
        pod_node(p).is_some()
            || pod_condition(p, "PodScheduled").is_some_and(|c| c.status == "True")
    });
    let not_ready = pod.is_some_and(|p| {
        pod_phase(p) == Some("Pending")
            || pod_condition(p, "Ready").is_some_and(|c| c.status != "True")
    });
    let applies = match v.phase {
        MigrationPhase::Failed => deleted.is_some(),
        MigrationPhase::Scheduling | MigrationPhase::Pending => {
            scheduled && not_ready && (!problems.is_empty() || !warnings.is_empty())
        }
        _ => false,
    };
    if !applies {
        return None;
    }
    let name = v
        .target_pod_name
        .clone()
        .unwrap_or_else(|| "(unknown)".into());
    let mut f = Finding::default();
    for (container, reason, message) in &problems {
        f.evidence.push(v.pod_fact(
            &name,
            &format!("status.containerStatuses[name={container}].state.waiting.reason"),
            match message {
                Some(m) => format!("{reason}: {m}"),
                None => reason.clone(),
            },
        ));
    }
    for e in warnings.iter().take(3) {
        f.evidence.push(v.event_fact(e));
    }
    if let Some(e) = deleted {
        f.evidence.push(v.event_fact(e));
    }
    let why: Vec<String> = problems
        .iter()
        .map(|(c, r, _)| format!("container {c}: {r}"))
        .chain(
            warnings
                .iter()
                .take(2)
                .map(|e| format!("{}: {}", event_reason(e), event_message(e))),
        )
        .collect();
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(" ({})", why.join("; "))
    };
    let node = pod.and_then(pod_node).unwrap_or("its node");
    let pending = kv19::pending_deadline(v, false);
    let why_timeout = kv19::override_words(&pending);
    f.summary = if v.phase == MigrationPhase::Failed {
        format!(
            "The target pod {name} was scheduled but stayed pending{why}; KubeVirt deleted it {} after its creation{why_timeout} and failed the migration before any memory was copied.",
            dur(pending.timeout)
        )
    } else {
        let deadline = match (pending.deadline, kv19::target_pod_pending(v)) {
            (Some(d), true) => {
                let d = d.as_second();
                let when = if d <= v.now.as_second() {
                    format!(
                        "it was due at {} ({}), and virt-controller has not acted on it yet",
                        ts_string(d),
                        until(v, d)
                    )
                } else {
                    format!("at {}, {}", ts_string(d), until(v, d))
                };
                format!(
                    " KubeVirt deletes a target pod still pending {} after its creation{why_timeout} ({when}).",
                    dur(pending.timeout)
                )
            }
            // Running but not ready: the pending-pod timeout no longer applies.
            (Some(_), false) => " The pod is past Pending, so KubeVirt's pending-pod timeout no longer applies: it waits for readiness without a deadline.".to_string(),
            (None, _) => String::new(),
        };
        format!("The target pod {name} is scheduled on {node} but not ready{why}.{deadline}")
    };
    if let (Some(a), Some(m)) = (pending.overridden_by, v.vmim) {
        f.evidence.push(v.vmim_fact(
            &format!("metadata.annotations[{a}]"),
            m.annotation(a).unwrap_or("").to_string(),
        ));
    }
    let ns = v.namespace();
    let all = why.to_ascii_lowercase();
    if all.contains("imagepull") || all.contains("errimage") {
        f.next_steps.push(format!(
            "{node} cannot pull the launcher image: check registry access and pull secrets from {node}"
        ));
    }
    if all.contains("failedmount") || all.contains("failedattachvolume") {
        f.next_steps.push(format!(
            "A volume cannot be attached on {node}: the VM's PVCs must be ReadWriteMany and reachable from {node} (kubectl get pvc -n {ns})"
        ));
    }
    if pod.is_some() {
        f.next_steps
            .push(format!("kubectl describe pod -n {ns} {name}"));
    }
    if v.is_final() {
        f.next_steps.push(retry_step(v));
    }
    Some(f)
}

fn target_pod_lost(v: &View) -> Option<Finding> {
    let down = v
        .failure_reason()
        .filter(|r| r.trim() == s::TARGET_POD_DOWN);
    let event = v.vmim_events().find(|e| {
        let m = event_message(e);
        m == s::TARGET_POD_SHUTDOWN || m == s::TARGET_POD_REMOVED || m == s::ATTACHMENT_POD_SHUTDOWN
    });
    let vmi_event = v.vmi_events().find(|e| {
        event_reason(e) == s::REASON_FAILED_MIGRATION
            && event_message(e).contains(s::TARGET_POD_DOWN)
    });
    let target_failed = !v.is_final()
        && v.target_pod.is_some_and(|p| {
            pod_phase(p) == Some("Failed") || p.metadata.deletion_timestamp.is_some()
        });
    if down.is_none() && event.is_none() && vmi_event.is_none() && !target_failed {
        return None;
    }
    let mut f = Finding {
        inferred: down.is_none() && event.is_none() && vmi_event.is_none(),
        ..Default::default()
    };
    f.evidence.extend(down.and_then(|_| failure_fact(v)));
    for e in [event, vmi_event].into_iter().flatten() {
        f.evidence.push(v.event_fact(e));
    }
    let name = v
        .target_pod_name
        .clone()
        .unwrap_or_else(|| "(unknown)".into());
    let pod_state = v.target_pod.map(|p| {
        let reason = p
            .status
            .as_ref()
            .and_then(|st| st.reason.clone())
            .map(|r| format!(", reason {r}"))
            .unwrap_or_default();
        format!("{}{reason}", pod_phase(p).unwrap_or("?"))
    });
    if let Some(st) = &pod_state {
        f.evidence
            .push(v.pod_fact(&name, "status.phase", st.clone()));
    }
    let what = event
        .map(event_message)
        .or(down)
        .unwrap_or("the target pod failed");
    f.summary = format!(
        "The target pod {name} on {} went away during the migration ({what}){}, so virt-controller failed it; the guest stays on {}.",
        tgt_node(v),
        pod_state
            .map(|s| format!("; it is {s}"))
            .unwrap_or_else(|| "; it no longer exists".into()),
        src_node(v)
    );
    let ns = v.namespace();
    if v.target_pod.is_some() {
        f.next_steps.push(format!(
            "See why it stopped: kubectl describe pod -n {ns} {name}"
        ));
    } else {
        f.next_steps.push(format!(
            "It is gone; its events may remain: kubectl get events -n {ns} --field-selector involvedObject.name={name}"
        ));
    }
    f.next_steps.push(format!(
        "Check the target node (evictions, OOM, restarts): kubectl describe node {}",
        tgt_node(v)
    ));
    f.next_steps.push(retry_step(v));
    Some(f)
}

fn vmi_stopped_during_migration(v: &View) -> Option<Finding> {
    let event = v.vmim_events().find(|e| {
        let m = event_message(e);
        m == s::VMI_SHUTDOWN || m == s::VMI_DOES_NOT_EXIST
    });
    let gone_or_stopped = v.vmi.is_none() || v.vmi_phase().is_some_and(VmiPhase::is_final);
    let inferred = event.is_none()
        && gone_or_stopped
        && v.vmim.is_some()
        && v.failure_reason().is_none()
        && v.phase == MigrationPhase::Failed;
    if event.is_none() && !inferred {
        return None;
    }
    let mut f = Finding {
        inferred,
        ..Default::default()
    };
    if let Some(e) = event {
        f.evidence.push(v.event_fact(e));
    }
    match v.vmi_phase() {
        Some(p) => f.evidence.push(v.vmi_fact("status.phase", p.as_str())),
        None if v.vmi.is_none() => {}
        None => {}
    }
    let how = match (v.vmi, v.vmi_phase()) {
        (None, _) => "the VMI was deleted".to_string(),
        (Some(_), Some(VmiPhase::Succeeded)) => "the guest shut down (VMI Succeeded)".to_string(),
        (Some(_), Some(p)) => format!("the VMI stopped (phase {p})"),
        (Some(_), None) => "the VMI stopped".to_string(),
    };
    f.summary = format!(
        "The migration failed because {how} while it was migrating: there is nothing left to migrate.{}",
        if inferred {
            " (Inferred: the migration failed without a failure reason and the VMI is no longer running.)"
        } else {
            ""
        }
    );
    let ns = v.namespace();
    f.next_steps.push(format!(
        "Find who stopped it: kubectl get events -n {ns} --field-selector involvedObject.name={}",
        v.vmi_name()
    ));
    if let Some(vm) = v.vmi.and_then(|x| x.owner_vm()) {
        f.next_steps.push(format!(
            "Start it again if that was not intended: virtctl start {vm} -n {ns}"
        ));
    }
    Some(f)
}

/// Launcher pods of the VMI that still run, other than this migration's target.
fn extra_live_pods<'a>(v: &View<'a>) -> Vec<&'a crate::model::Pod> {
    v.pods
        .iter()
        .copied()
        .filter(|p| !pod_is_finished(p))
        .filter(|p| Some(pod_name(p)) != v.target_pod_name.as_deref())
        .collect()
}

fn another_migration_in_progress(v: &View) -> Option<Finding> {
    let event = v.vmim_events().find(|e| {
        let m = event_message(e);
        m == s::ANOTHER_IN_PROGRESS || m == s::STATE_TAKEN_OVER
    });
    let waiting = matches!(v.phase, MigrationPhase::Pending | MigrationPhase::Unset);
    let created = v.created;
    let other = v.others().find(|m| {
        !m.is_final()
            && match (created, m.metadata.creation_timestamp.as_ref()) {
                (Some(c), Some(t)) => t.0 <= c,
                _ => true,
            }
    });
    let extra = extra_live_pods(v);
    let too_many_pods = waiting && extra.len() > 1;
    if event.is_none() && !(waiting && other.is_some()) && !too_many_pods {
        return None;
    }
    let mut f = Finding::default();
    if let Some(e) = event {
        f.evidence.push(v.event_fact(e));
    }
    let ns = v.namespace();
    if let Some(o) = other.filter(|_| waiting || event.is_some()) {
        f.evidence.push(Fact {
            object: format!("VirtualMachineInstanceMigration/{ns}/{}", o.name()),
            field: "status.phase".into(),
            value: o.phase().as_str().to_string(),
            note: None,
        });
        f.summary = if event.is_some() {
            format!(
                "Another migration of this VMI ({}, {}) held it, so this one failed at once: {}",
                o.name(),
                o.phase(),
                event.map(event_message).unwrap_or("")
            )
        } else {
            format!(
                "Another migration of this VMI ({}, {}) is still in progress; only one runs at a time, so this one waits.",
                o.name(),
                o.phase()
            )
        };
        f.next_steps.push(format!(
            "Explain the other one: vmctl explain {} -n {ns}",
            o.name()
        ));
        f.next_steps.push(format!(
            "Or abort it: kubectl delete vmim -n {ns} {}",
            o.name()
        ));
    } else if too_many_pods {
        let names: Vec<&str> = extra.iter().map(|p| pod_name(p)).collect();
        for p in &extra {
            f.evidence.push(v.pod_fact(
                pod_name(p),
                "status.phase",
                pod_phase(p).unwrap_or("?").to_string(),
            ));
        }
        // kubectl shows such a pod as Completed, but its phase is not final yet, and
        // virt-controller counts pods by phase (kubevirt#12773).
        let exited: Vec<&str> = extra
            .iter()
            .filter(|p| super::reported::all_containers_exited(p))
            .map(|p| pod_name(p))
            .collect();
        for name in &exited {
            f.evidence.push(v.pod_fact(
                name,
                "status.containerStatuses[*].state",
                "terminated (all containers)",
            ));
        }
        f.summary = format!(
            "The VMI still has {} launcher pods that have not terminated ({}): a previous migration has not finished cleaning up, and KubeVirt waits before creating another target pod (virt-controller logs \"Waiting to schedule target pod for migration because there are already multiple pods running for vmi {}/{}\"; there is no event).{}",
            names.len(),
            names.join(", "),
            v.namespace(),
            v.vmi_name(),
            if exited.is_empty() {
                String::new()
            } else {
                format!(
                    " {} shows as Completed (all its containers exited) but its phase is still {}, so it still counts.",
                    exited.join(", "),
                    extra
                        .iter()
                        .find(|p| Some(pod_name(p)) == exited.first().copied())
                        .and_then(|p| pod_phase(p))
                        .unwrap_or("not final")
                )
            }
        );
        f.next_steps.push(format!(
            "See them: kubectl get pods -n {ns} -l kubevirt.io/created-by={} -o wide",
            v.vmi.and_then(|x| x.uid()).unwrap_or("<vmi uid>")
        ));
        for name in &exited {
            f.next_steps.push(format!(
                "{name} no longer runs anything; find why the kubelet has not finished it (kubectl describe pod -n {ns} {name}), or delete it: kubectl delete pod -n {ns} {name}"
            ));
        }
    } else {
        f.summary = format!(
            "Another migration held the VMI, so this one failed at once: {}",
            event.map(event_message).unwrap_or("")
        );
    }
    if v.is_final() {
        f.next_steps.push(retry_step(v));
    }
    Some(f)
}

fn migration_backoff(v: &View) -> Option<Finding> {
    if !matches!(v.phase, MigrationPhase::Pending | MigrationPhase::Unset) {
        return None;
    }
    let event = v
        .vmi_events()
        .filter(|e| event_reason(e) == s::REASON_BACKOFF)
        .max_by_key(|e| event_last(e));
    let backoff = v
        .vmim
        .and_then(|m| super::history::backoff(&v.ev.migrations, m));
    let computed = backoff
        .clone()
        .filter(|b| b.until.as_second() > v.now.as_second());
    // A backoff that ended (as computed) is no reason now, unless a MigrationBackoff event
    // came after its end: then vmctl's reckoning misses something and the event is believed.
    if let (Some(b), None) = (&backoff, &computed)
        && event
            .and_then(event_last)
            .is_none_or(|t| t.as_second() <= b.until.as_second())
    {
        return None;
    }
    if computed.is_none() && event.is_none() {
        return None;
    }
    let mut f = Finding {
        inferred: event.is_none(),
        ..Default::default()
    };
    if let Some(e) = event {
        f.evidence.push(v.event_fact(e));
    }
    let ns = v.namespace();
    match &computed {
        Some(b) => {
            f.evidence.push(Fact {
                object: format!("VirtualMachineInstanceMigration/{ns}/{}", b.previous),
                field: "status.phaseTransitionTimestamps[phase=Failed]".into(),
                value: b.previous_failed.to_string(),
                note: Some(format!(
                    "{} consecutive failed migration(s) of the VMI",
                    b.failures
                )),
            });
            let doubling = if b.failures > 1 {
                format!(
                    " (20 s after the first failure, doubled for each of the {} further ones)",
                    b.failures - 1
                )
            } else {
                " (20 s after a first failure)".to_string()
            };
            f.summary = format!(
                "KubeVirt is backing off: {} consecutive failed evacuation/workload-update migration(s) of this VMI, so it waits {}{doubling} after the last failure ({} failed at {}). The next attempt can start at {} ({}).",
                b.failures,
                dur(b.seconds),
                b.previous,
                b.previous_failed,
                b.until,
                until(v, b.until.as_second())
            );
            f.next_steps.push(format!(
                "Fix what made the last attempt fail: vmctl explain {} -n {ns}",
                b.previous
            ));
        }
        None => {
            f.summary = format!(
                "KubeVirt is backing off before retrying this migration after earlier failures ({}).",
                event.map(event_message).unwrap_or("MigrationBackoff")
            );
        }
    }
    f.next_steps.push(format!(
        "See every attempt and the backoff between them: vmctl explain vmi/{} -n {ns} --history",
        v.vmi_name()
    ));
    Some(f)
}

fn queued_parallel_limit(v: &View) -> Option<Finding> {
    if !matches!(v.phase, MigrationPhase::Pending) {
        return None;
    }
    let load = v.ev.load.as_ref()?;
    let me = v.vmim.and_then(|m| m.uid());
    let running: Vec<&crate::model::VirtualMachineInstanceMigration> = load
        .migrations
        .iter()
        .filter(|m| m.uid() != me && m.status.phase.is_some() && m.phase().counts_as_running())
        .collect();
    let from_node: Vec<_> = running
        .iter()
        .filter(|m| {
            load.vmis_on_node
                .iter()
                .any(|q| *q == format!("{}/{}", m.namespace(), m.spec.vmi_name))
        })
        .collect();
    let cluster_limit = v.config.parallel_migrations_per_cluster as usize;
    let node_limit = v.config.parallel_outbound_migrations_per_node as usize;
    let node = v
        .vmi
        .and_then(|x| x.status.node_name.as_deref())
        .unwrap_or("its node");
    let (kv_ns, kv_name) = v.kubevirt_ref();
    let mut f = Finding::default();
    let list = |ms: &[&&crate::model::VirtualMachineInstanceMigration]| {
        ms.iter()
            .map(|m| format!("{}/{} ({})", m.namespace(), m.name(), m.phase()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if running.len() >= cluster_limit {
        f.evidence.push(Fact {
            object: format!("KubeVirt/{kv_ns}/{kv_name}"),
            field: "spec.configuration.migrations.parallelMigrationsPerCluster".into(),
            value: cluster_limit.to_string(),
            note: Some(format!(
                "{} running: {}",
                running.len(),
                list(&running.iter().collect::<Vec<_>>())
            )),
        });
        f.summary = format!(
            "Queued: {} migrations already run in the cluster, the limit (parallelMigrationsPerCluster) is {cluster_limit}; this one starts when a slot frees up.",
            running.len()
        );
        f.next_steps.push(format!(
            "Wait, or allow more at once if the network can carry it: {}",
            v.patch_kubevirt_migrations(
                "parallelMigrationsPerCluster",
                &(cluster_limit + 2).to_string()
            )
        ));
    } else if from_node.len() >= node_limit {
        f.evidence.push(Fact {
            object: format!("KubeVirt/{kv_ns}/{kv_name}"),
            field: "spec.configuration.migrations.parallelOutboundMigrationsPerNode".into(),
            value: node_limit.to_string(),
            note: Some(format!(
                "{} leaving {node}: {}",
                from_node.len(),
                list(&from_node.to_vec())
            )),
        });
        f.summary = format!(
            "Queued: {} migrations are already leaving {node}, the limit (parallelOutboundMigrationsPerNode) is {node_limit}; this one starts when one of them finishes.",
            from_node.len()
        );
        f.next_steps.push(format!(
            "Wait, or allow more from one node if its network can carry it: {}",
            v.patch_kubevirt_migrations(
                "parallelOutboundMigrationsPerNode",
                &(node_limit + 1).to_string()
            )
        ));
    } else {
        return None;
    }
    // Which pending migrations the queue serves first: those competing for the same slot
    // (every one for a cluster slot, the same node's for a node slot).
    if let Some(me) = v.vmim {
        let by_priority = kv19::priority_queue_active(v);
        let node_bound = running.len() < cluster_limit;
        let competing = load.migrations.iter().filter(|m| {
            !node_bound
                || load
                    .vmis_on_node
                    .iter()
                    .any(|q| *q == format!("{}/{}", m.namespace(), m.spec.vmi_name))
        });
        let ahead = kv19::ahead_of(me, competing, by_priority);
        let mut fact = v.vmim_fact(
            "spec.priority",
            me.spec.priority.clone().unwrap_or_else(|| "(unset)".into()),
        );
        fact.note = Some(format!(
            "queue weight {}{}",
            if by_priority {
                me.priority().map(|p| p.queue_weight()).unwrap_or(0)
            } else {
                0
            },
            if by_priority {
                ""
            } else {
                " (priority queue off: KubeVirt before v1.9 without the MigrationPriorityQueue gate)"
            }
        ));
        f.evidence.push(fact);
        f.evidence.extend(kv19::ahead_facts(&ahead));
        f.summary
            .push_str(&kv19::queue_sentence(me, &ahead, by_priority));
    }
    f.next_steps
        .push("See what runs now: vmctl status -A".to_string());
    Some(f)
}

fn not_live_migratable(v: &View) -> Option<Finding> {
    let blockers = v.live_blockers();
    if blockers.is_empty() {
        return None;
    }
    let applies = !v.has_migration()
        || (before_streaming(v)
            && v.failure_reason().is_none()
            && !matches!(v.phase, MigrationPhase::Succeeded));
    if !applies {
        return None;
    }
    let mut f = Finding::default();
    for b in &blockers {
        f.evidence.push(v.vmi_fact(
            &format!("status.conditions[type={}]", b.condition),
            format!("False, reason {}: {}", b.reason, b.message),
        ));
    }
    let first = blockers.first()?;
    let strategy = v.vmi.map(|x| {
        crate::policy::eviction::effective_eviction_strategy(x, v.ev.kubevirt.as_ref()).strategy
    });
    let drain = match (strategy, v.vmi.and_then(|x| x.status.node_name.as_deref())) {
        (Some(crate::model::EvictionStrategy::LiveMigrate), Some(node)) => format!(
            " With evictionStrategy LiveMigrate, a drain of {node} blocks on it until this is fixed."
        ),
        (Some(crate::model::EvictionStrategy::LiveMigrateIfPossible), Some(node)) => {
            format!(
                " With evictionStrategy LiveMigrateIfPossible, a drain of {node} shuts it down."
            )
        }
        _ => String::new(),
    };
    f.summary = match v.has_migration() {
        false => format!(
            "The VMI cannot live-migrate: {} ({}). KubeVirt refuses to create a migration for it.{drain}",
            first.summary, first.reason
        ),
        true => format!(
            "The VMI cannot live-migrate: {} ({}), so this migration cannot proceed.{drain}",
            first.summary, first.reason
        ),
    };
    for b in &blockers {
        f.next_steps.push(format!("Fix: {}", b.fix));
    }
    if let Some(node) = v.vmi.and_then(|x| x.status.node_name.as_deref()) {
        f.next_steps.push(format!(
            "See what a drain of {node} would do to every VM: vmctl plan-drain {node}"
        ));
    }
    Some(f)
}

fn destination_volume_too_small(v: &View) -> Option<Finding> {
    let r = v.failure_reason()?;
    if classify_failure(r) != FailureText::VolumeTooSmall {
        return None;
    }
    Some(Finding {
        summary: format!(
            "Volume migration failed: the destination volume is smaller than the source volume. {r}"
        ),
        evidence: failure_fact(v).into_iter().collect(),
        next_steps: vec![
            format!(
                "Recreate the destination PVC at least as large as the source (spec.resources.requests.storage; mind filesystem overhead): kubectl get pvc -n {}",
                v.namespace()
            ),
            retry_step(v),
        ],
        ..Default::default()
    })
}

/// The monitor's abort, read from the string (≤v1.8) or inferred from elapsed time (v1.9+).
enum MonitorAbort {
    NotConverging { inferred: bool },
    NoProgress { inferred: bool },
}

/// A monitor abort ends within a few seconds of the budget (400 ms polls plus finalisation).
const BUDGET_SLACK_SECONDS: i64 = 5;

fn monitor_abort(v: &View) -> Option<MonitorAbort> {
    let r = v.failure_reason()?;
    match classify_failure(r) {
        FailureText::NotCompletedV18 { .. } => {
            Some(MonitorAbort::NotConverging { inferred: false })
        }
        FailureText::StuckV18 { .. } => Some(MonitorAbort::NoProgress { inferred: false }),
        FailureText::GenericAbort if !v.abort_requested() => {
            if kv19::stall_detector(v).is_some() && (v.mode() == Some(&MigrationMode::Paused)) {
                return Some(MonitorAbort::NotConverging { inferred: true });
            }
            let budget = v.budget.filter(|b| *b > 0)? as i64;
            let elapsed = v.elapsed()?;
            if elapsed + BUDGET_SLACK_SECONDS >= budget {
                Some(MonitorAbort::NotConverging { inferred: true })
            } else {
                Some(MonitorAbort::NoProgress { inferred: true })
            }
        }
        _ => None,
    }
}

/// startTimestamp, endTimestamp (with the time between them) and the guest memory the
/// budget is computed from.
fn timing_facts(v: &View) -> Vec<Fact> {
    let mut facts = Vec::new();
    if let Some(t) = v.start {
        facts.push(v.state_fact("startTimestamp", t.to_string()));
    }
    if let (Some(t), Some(e)) = (v.end, v.elapsed()) {
        let mut fact = v.state_fact("endTimestamp", t.to_string());
        fact.note = Some(format!("{e} s after the start"));
        facts.push(fact);
    }
    if let Some(q) = v.vmi.and_then(|x| x.guest_memory()) {
        let field = if v
            .vmi
            .and_then(|x| x.spec.domain.memory.as_ref())
            .and_then(|m| m.guest.as_ref())
            .is_some()
        {
            "spec.domain.memory.guest"
        } else {
            "spec.domain.resources.requests.memory"
        };
        facts.push(v.vmi_fact(field, q.as_str()));
    }
    facts
}

fn budget_words(v: &View) -> String {
    let per_gib = v.config.completion_timeout_per_gib;
    let gb = v
        .vmi
        .and_then(|x| x.guest_memory())
        .map(Quantity::ceil_decimal_gb);
    match (v.budget, gb) {
        (Some(b), Some(gb)) => format!(
            "{} ({per_gib} s/GiB × {gb} GB of guest memory)",
            dur(b as i64)
        ),
        (Some(b), None) => dur(b as i64),
        _ => "unknown".into(),
    }
}

fn bandwidth_words(v: &View) -> String {
    match v.config.bandwidth_per_migration {
        0 => "unlimited bandwidth".into(),
        b => format!("a bandwidth cap of {}/s", fmt::bytes(b)),
    }
}

fn not_converging(v: &View) -> Option<Finding> {
    let MonitorAbort::NotConverging { inferred } = monitor_abort(v)? else {
        return None;
    };
    let mut f = Finding {
        inferred,
        evidence: failure_fact(v).into_iter().collect(),
        ..Default::default()
    };
    if let (Some(st), true) = (v.state, inferred) {
        f.evidence
            .push(v.state_fact("abortRequested", st.abort_requested.to_string()));
    }
    f.evidence.extend(timing_facts(v));
    f.evidence.push(v.config_fact(
        "completionTimeoutPerGiB",
        v.config.completion_timeout_per_gib.to_string(),
    ));
    let elapsed = v.elapsed().map(dur).unwrap_or_else(|| "?".into());
    f.summary = format!(
        "The migration monitor aborted it after {elapsed}: the completion budget of {} ran out before the memory copy converged — the guest dirtied memory faster than it could be sent with {}.{}",
        budget_words(v),
        bandwidth_words(v),
        if inferred {
            " (Inferred: the failure reason only says the migration was aborted, nobody requested the abort, and it ended at the completion budget.)"
        } else {
            ""
        }
    );
    if let Some((summary, facts, _)) = kv19::stall_abort_words(v) {
        f.summary = summary;
        f.evidence.extend(facts);
    }
    if !v.config.allow_post_copy {
        f.next_steps.push(format!(
            "Let it finish in post-copy (the guest then runs on the target while the rest is pulled; a network failure in that phase loses it): {}",
            v.patch_setting("allowPostCopy", "true")
        ));
    }
    f.next_steps.push(format!(
        "Give it more time: {}",
        v.patch_setting(
            "completionTimeoutPerGiB",
            &(v.config.completion_timeout_per_gib.max(1) * 2).to_string()
        )
    ));
    if v.config.bandwidth_per_migration > 0 {
        f.next_steps.push(format!(
            "Or raise the bandwidth cap ({}/s now): {}",
            fmt::bytes(v.config.bandwidth_per_migration),
            v.patch_setting(
                "bandwidthPerMigration",
                &format!(
                    "\"{}Mi\"",
                    (v.config.bandwidth_per_migration >> 20).max(1) * 2
                )
            )
        ));
    }
    if !v.config.allow_auto_converge {
        f.next_steps.push(format!(
            "Or let QEMU throttle the guest's CPUs until it converges: {}",
            v.patch_setting("allowAutoConverge", "true")
        ));
    }
    f.next_steps
        .push(retry_step(v).replace("when fixed", "when the guest is quieter"));
    Some(f)
}

fn no_progress(v: &View) -> Option<Finding> {
    let MonitorAbort::NoProgress { inferred } = monitor_abort(v)? else {
        return None;
    };
    let mut f = Finding {
        inferred,
        evidence: failure_fact(v).into_iter().collect(),
        ..Default::default()
    };
    if let (Some(st), true) = (v.state, inferred) {
        f.evidence
            .push(v.state_fact("abortRequested", st.abort_requested.to_string()));
    }
    f.evidence.extend(timing_facts(v));
    let stall = kv19::stall_abort_words(v);
    if stall.is_none() {
        f.evidence
            .push(v.config_fact("progressTimeout", v.config.progress_timeout.to_string()));
    }
    let elapsed = v.elapsed().map(dur).unwrap_or_else(|| "?".into());
    f.summary = format!(
        "The migration monitor aborted it after {elapsed} because no data was transferred for progressTimeout ({} s): the copy from {} to {} stalled, which is usually the network between the nodes.{}",
        v.config.progress_timeout,
        src_node(v),
        tgt_node(v),
        if inferred {
            format!(
                " (Inferred: the failure reason only says the migration was aborted, nobody requested the abort, and it ended well before the {} completion budget, so the progress check fired.)",
                budget_words(v)
            )
        } else {
            String::new()
        }
    );
    if let Some((summary, facts, sd)) = stall {
        f.summary = summary;
        f.evidence.extend(facts);
        if !v.config.allow_workload_disruption {
            f.next_steps.push(format!(
                "Let the stall detector finish a stalled migration instead of aborting it (post-copy, or a stop-and-copy that pauses the guest briefly): {}",
                v.patch_setting("allowWorkloadDisruption", "true")
            ));
        }
        f.next_steps.push(format!(
            "Or give a stall longer than stallProgressTimeout ({} s) before it counts: set experimental.stallDetector.stallProgressTimeout in a MigrationPolicy",
            sd.settings.stall_progress_timeout
        ));
    }
    f.next_steps.push(format!(
        "Check the migration path between {} and {}: virt-handler's log on both nodes (kubectl get pods -n kubevirt -l kubevirt.io=virt-handler -o wide), MTU and firewalls for the migration ports (49152, 49153){}",
        src_node(v),
        tgt_node(v),
        v.state
            .and_then(|st| st.migration_configuration.as_ref())
            .and_then(|c| c.network.clone())
            .map(|n| format!(", and the dedicated migration network {n}"))
            .unwrap_or_default()
    ));
    if kv19::stall_detector(v).is_none() {
        f.next_steps.push(format!(
            "If the copy is slow rather than stuck, allow a longer stall (progressTimeout is cluster-wide only): {}",
            v.patch_kubevirt_migrations(
                "progressTimeout",
                &(v.config.progress_timeout.max(1) * 2).to_string()
            )
        ));
    }
    f.next_steps.push(retry_step(v));
    Some(f)
}

fn connection_failure(v: &View) -> Option<Finding> {
    let r = v.failure_reason()?;
    if !s::is_connection_error(r) {
        return None;
    }
    let detail = s::libvirt_error(r)
        .map(|(_, m)| m)
        .unwrap_or_else(|| r.to_string());
    Some(Finding {
        summary: format!(
            "The connection between the source ({}) and the target ({}) broke during the migration: {detail}",
            src_node(v),
            tgt_node(v)
        ),
        evidence: failure_fact(v).into_iter().collect(),
        next_steps: vec![
            format!(
                "Check the network between {} and {} (node-to-node reachability, MTU, firewalls on the migration ports 49152/49153), and virt-handler's log on both nodes (it runs the migration proxy)",
                src_node(v),
                tgt_node(v)
            ),
            retry_step(v),
        ],
        ..Default::default()
    })
}

fn libvirt_error(v: &View) -> Option<Finding> {
    let r = v.failure_reason()?;
    // A generic abort nobody asked for, without a budget to compare with, stays unknown.
    if classify_failure(r) == FailureText::GenericAbort {
        return None;
    }
    let (code, message) = s::libvirt_error(r).unwrap_or((None, r.trim().to_string()));
    let code = code
        .map(|c| format!(" (libvirt error code {c})"))
        .unwrap_or_default();
    Some(Finding {
        summary: format!("libvirt reported an error on the source{code}: \"{message}\""),
        evidence: failure_fact(v).into_iter().collect(),
        next_steps: vec![
            format!(
                "Read both launchers' logs around {}: the source ({}) and the target ({})",
                v.end
                    .map(|t| t.to_string())
                    .unwrap_or_else(|| "the failure".into()),
                or_q(v.source_pod_name.as_deref()),
                or_q(v.target_pod_name.as_deref())
            ),
            retry_step(v),
        ],
        ..Default::default()
    })
}

fn in_progress(v: &View) -> Option<Finding> {
    let m = v.vmim?;
    if m.is_final() {
        return None;
    }
    let age = v.age().map(dur).unwrap_or_else(|| "?".into());
    let mut f = Finding::default();
    let ns = v.namespace();
    let summary = match &v.phase {
        MigrationPhase::Unset => {
            if m.status.phase.is_none() && v.age().is_some_and(|a| a > 60) || v.age().is_none() {
                return None;
            }
            format!("Created {age} ago; waiting for virt-controller to pick it up.")
        }
        MigrationPhase::Pending => format!(
            "Pending for {age}: waiting for a free migration slot, then for virt-controller to create the target pod. Nothing blocks it (no quota, backup, utility-volume or backoff condition, and the parallel limits are not reached)."
        ),
        MigrationPhase::Scheduling => format!(
            "Scheduling: waiting for the target pod {} to be scheduled and become ready (phase {}).",
            or_q(v.target_pod_name.as_deref()),
            v.target_pod
                .and_then(pod_phase)
                .unwrap_or("not created yet")
        ),
        MigrationPhase::Scheduled => {
            "Scheduled: the target pod is ready; waiting for the hand-off to virt-handler.".into()
        }
        MigrationPhase::PreparingTarget => format!(
            "PreparingTarget: waiting for virt-handler on {} to prepare the domain.",
            tgt_node(v)
        ),
        MigrationPhase::TargetReady => format!(
            "TargetReady: {} is ready; waiting for the source to start streaming.",
            tgt_node(v)
        ),
        MigrationPhase::Running => {
            let elapsed = v.elapsed();
            let budget = v.budget.filter(|b| *b > 0).map(|b| b as i64);
            let progress = elapsed
                .map(|e| format!(" for {}", dur(e)))
                .unwrap_or_default();
            let budget_note = match budget {
                Some(_) => format!(" The completion budget is {}.", budget_words(v)),
                None => String::new(),
            };
            match v.mode() {
                Some(MigrationMode::PostCopy) => format!(
                    "Running in post-copy{progress}: the guest runs on {} and pulls the rest of its memory from {}. This is the point of no return: it cannot be aborted.",
                    tgt_node(v),
                    src_node(v)
                ),
                Some(MigrationMode::Paused) => format!(
                    "Running{progress}, with the guest paused by the migration monitor so its memory can converge.{budget_note}"
                ),
                _ => {
                    let mut s = format!(
                        "Running in pre-copy{progress}, copying memory from {} to {} while the guest keeps running on {}.{budget_note}",
                        src_node(v),
                        tgt_node(v),
                        src_node(v)
                    );
                    if let (Some(e), Some(b)) = (elapsed, budget)
                        && e > b
                    {
                        s.push_str(if v.config.allow_workload_disruption {
                            " It is past its budget: expect the monitor to switch to post-copy or pause the guest."
                        } else {
                            " It is past its budget: expect the monitor to abort it."
                        });
                    }
                    s
                }
            }
        }
        MigrationPhase::WaitingForSync | MigrationPhase::Synchronizing => kv19::sync_summary(v),
        MigrationPhase::Succeeded | MigrationPhase::Failed => return None,
        MigrationPhase::Other(p) => {
            format!("In phase {p}, which this version of vmctl does not know.")
        }
    };
    f.summary = summary;
    if matches!(
        v.phase,
        MigrationPhase::WaitingForSync | MigrationPhase::Synchronizing
    ) {
        f.evidence.extend(kv19::sync_facts(v));
        f.next_steps.extend(kv19::sync_steps(v));
    }
    if let Some(st) = v.state {
        if let Some(mode) = &st.mode {
            f.evidence.push(v.state_fact("mode", mode.as_str()));
        }
        if let Some(t) = &st.start_timestamp {
            f.evidence
                .push(v.state_fact("startTimestamp", t.0.to_string()));
        }
    }
    if let Some(p) = v.target_pod
        && v.phase == MigrationPhase::Scheduling
    {
        f.evidence.push(v.pod_fact(
            pod_name(p),
            "status.phase",
            pod_phase(p).unwrap_or("?").to_string(),
        ));
    }
    if v.phase == MigrationPhase::Running {
        if let Some(p) = v.log_pod() {
            f.next_steps.push(format!(
                "Follow it: kubectl logs -n {ns} {} -c compute -f | grep -i migration",
                pod_name(p)
            ));
        }
        if v.mode() != Some(&MigrationMode::PostCopy) {
            f.next_steps.push(format!(
                "To abort it before it finishes: kubectl delete vmim -n {ns} {}",
                m.name()
            ));
        }
    }
    f.next_steps.push(format!(
        "Watch it: kubectl get vmim -n {ns} {} -w",
        m.name()
    ));
    Some(f)
}

fn no_migration(v: &View) -> Option<Finding> {
    if v.has_migration() {
        return None;
    }
    let ns = v.namespace();
    let vmi = v.vmi?;
    let live = v.migratability.as_ref().and_then(|m| m.live_migratable);
    let mut f = Finding::default();
    f.evidence.push(v.vmi_fact(
        "status.conditions[type=LiveMigratable].status",
        match live {
            Some(true) => "True",
            Some(false) => "False",
            None => "(absent)",
        },
    ));
    if let Some(st) = v.other_state {
        f.evidence.push(v.vmi_fact(
            "status.migrationState.migrationUid",
            st.migration_uid.clone().unwrap_or_default(),
        ));
    }
    let last = v
        .other_state
        .filter(|st| st.completed)
        .map(|st| {
            format!(
                " Its last migration on record{} ended {} at {}{}; that migration object is gone.",
                st.migration_uid
                    .as_deref()
                    .map(|u| format!(" (uid {u})"))
                    .unwrap_or_default(),
                if st.failed {
                    "in failure"
                } else {
                    "successfully"
                },
                st.end_timestamp
                    .as_ref()
                    .map(|t| t.0.to_string())
                    .unwrap_or_else(|| "?".into()),
                st.failure_reason
                    .as_deref()
                    .map(|r| format!(" ({})", r.trim()))
                    .unwrap_or_default()
            )
        })
        .unwrap_or_default();
    f.summary = format!(
        "The VMI has no migration on record{}.{last}",
        match live {
            Some(true) => " and nothing stops one: it is live-migratable",
            Some(false) => "",
            None => "; virt-handler has not reported whether it is live-migratable",
        }
    );
    f.next_steps.push(match vmi.owner_vm() {
        Some(vm) => format!("Start one if needed: virtctl migrate {vm} -n {ns}"),
        None => format!(
            "Start one if needed: create a VirtualMachineInstanceMigration with spec.vmiName: {}",
            v.vmi_name()
        ),
    });
    Some(f)
}

fn unknown(v: &View) -> Option<Finding> {
    let mut f = Finding::default();
    let ns = v.namespace();
    if !v.has_migration() {
        f.summary = format!(
            "Neither a migration nor the VMI {ns}/{} was found: there is nothing to diagnose.",
            v.vmi_name()
        );
        return Some(f);
    }
    if v.vmim.is_some_and(|m| m.status.phase.is_none()) {
        f.summary = format!(
            "The migration has no status at all{}: virt-controller has not processed it. Is virt-controller running and healthy?",
            v.age()
                .map(|a| format!(" ({} after its creation)", dur(a)))
                .unwrap_or_default()
        );
        f.next_steps
            .push("kubectl get pods -n kubevirt -l kubevirt.io=virt-controller".into());
        f.next_steps.push(
            "kubectl logs -n kubevirt -l kubevirt.io=virt-controller --tail=200 | grep -i migration"
                .into(),
        );
        return Some(f);
    }
    let failed_event = v
        .vmim_events()
        .filter(|e| event_reason(e) == s::REASON_FAILED_MIGRATION)
        .max_by_key(|e| event_last(e));
    if let Some(e) = failed_event {
        f.evidence.push(v.event_fact(e));
    }
    f.evidence.extend(failure_fact(v));
    let mut missing = Vec::new();
    if v.state.is_none() {
        missing.push(if v.other_state.is_some() {
            "this migration's migrationState (the VMI's describes another migration)".to_string()
        } else {
            "status.migrationState".to_string()
        });
    } else if v.failure_reason().is_none() {
        missing.push("status.migrationState.failureReason".into());
    }
    if failed_event.is_none() {
        missing.push("a FailedMigration event (events expire after an hour)".into());
    }
    let generic = v
        .failure_reason()
        .is_some_and(|r| classify_failure(r) == FailureText::GenericAbort);
    f.summary = if generic {
        format!(
            "The migration monitor aborted it (\"{}\", nobody requested it), but vmctl cannot tell a stalled copy from an exhausted completion budget: {}.",
            v.failure_reason().unwrap_or("").trim(),
            if v.budget.is_none() {
                "the guest's memory size is unknown (the VMI is gone)"
            } else {
                "the start or end time is missing"
            }
        )
    } else {
        format!(
            "The migration is {} but nothing on record says why{}. Missing: {}.",
            v.phase,
            failed_event
                .map(|e| format!(" beyond \"{}\"", event_message(e)))
                .unwrap_or_default(),
            missing.join(", ")
        )
    };
    if let Some(p) = v.source_pod.or(v.log_pod()) {
        f.next_steps.push(format!(
            "Read the source launcher's log: kubectl logs -n {ns} {} -c compute | grep -i migration",
            pod_name(p)
        ));
    }
    let grep_for = match v.vmim {
        Some(m) => m.name().to_string(),
        None => v.vmi_name().to_string(),
    };
    f.next_steps.push(format!(
        "Read virt-controller's log: kubectl logs -n kubevirt -l kubevirt.io=virt-controller --tail=500 | grep -i {grep_for}"
    ));
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_issue_cause_is_catalogued() {
        let mut ids: Vec<&str> = CATALOGUE.iter().map(|r| r.id).collect();
        ids.sort();
        let before = ids.len();
        ids.dedup();
        assert_eq!(before, ids.len(), "duplicate rule ids");
        for id in [
            "target-pod-unschedulable",
            "target-pod-not-ready",
            "target-pod-create-failed",
            "resource-quota-exceeded",
            "no-node-for-cpu-model",
            "blocked-by-utility-volumes",
            "blocked-by-backup",
            "not-live-migratable",
            "queued-parallel-limit",
            "another-migration-in-progress",
            "target-pod-lost",
            "vmi-stopped-during-migration",
            "migration-backoff",
            "not-converging",
            "no-progress",
            "postcopy-failed",
            "connection-failure",
            "target-domain-not-seen",
            "destination-volume-too-small",
            "libvirt-error",
            "aborted-by-request",
            "succeeded",
            "in-progress",
            "unknown",
        ] {
            assert!(rule(id).is_some(), "no rule {id}");
        }
        assert_eq!(CATALOGUE.last().map(|r| r.id), Some("unknown"));
        for r in CATALOGUE {
            assert!(!r.reads.is_empty() && !r.advice.is_empty(), "{}", r.id);
        }
    }

    #[test]
    fn quota_messages_are_taken_apart() {
        let q = parse_quota_message("Error creating pod: pods \"virt-launcher-shop-web-01-\" is forbidden: exceeded quota: tenant-a-compute, requested: limits.memory=4356Mi,requests.memory=4356Mi, used: limits.memory=20512Mi,requests.memory=20512Mi, limited: limits.memory=24Gi,requests.memory=24Gi").unwrap();
        assert_eq!(q.name, "tenant-a-compute");
        assert_eq!(q.requested.len(), 2);
        assert_eq!(q.used[1], ("requests.memory".into(), "20512Mi".into()));
        assert_eq!(q.limited[0], ("limits.memory".into(), "24Gi".into()));
        assert_eq!(
            format_quantity("requests.memory", 24868 * (1 << 20) * 1000),
            "24868Mi"
        );
        assert_eq!(format_quantity("requests.cpu", 2500), "2500m");
    }
}
