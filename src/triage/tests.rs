//! One test (or two: ≤v1.8 and v1.9+ strings) per rule, on struct literals.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateWaiting, ContainerStatus, EventSeries, ObjectReference,
    PodCondition, PodSpec, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, OwnerReference};
use k8s_openapi::jiff::Timestamp;

use super::*;
use crate::model::kubevirt::{
    KubeVirtConfiguration, KubeVirtSpec, KubeVirtStatus, MigrationConfig,
};
use crate::model::vmi::{
    AbortStatus, DomainSpec, MemorySpec, MigrationMode, MigrationState, VmiPhase, VmiSpec,
    VmiStatus,
};
use crate::model::vmim::{EVACUATION_ANNOTATION, MigrationPhase, VmimSpec, VmimStatus};
use crate::model::{Condition, ObjectMeta, PhaseTransition, Quantity, Time};

/// Issue 10 (parts 2 and 4): unexplained warnings, confidence, reported failures.
mod reported;
mod signatures;

const NS: &str = "prod";
const VMI: &str = "db-01";
const VMI_UID: &str = "vmi-uid";
const UID: &str = "vmim-uid";
const SRC_POD: &str = "virt-launcher-db-01-src";
const TGT_POD: &str = "virt-launcher-db-01-tgt";

/// `02:44:10` on the fixtures' day.
fn at(hms: &str) -> Timestamp {
    format!("2026-11-29T{hms}Z")
        .parse()
        .unwrap_or_else(|e| panic!("bad fixture time {hms}: {e}"))
}

fn t(hms: &str) -> Time {
    Time(at(hms))
}

fn meta(name: &str, uid: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some(NS.into()),
        uid: Some(uid.into()),
        ..Default::default()
    }
}

fn transitions(list: &[(&str, &str)]) -> Vec<PhaseTransition> {
    list.iter()
        .map(|(p, hms)| PhaseTransition {
            phase: p.to_string(),
            phase_transition_timestamp: Some(t(hms)),
        })
        .collect()
}

fn condition(type_: &str, status: &str, reason: Option<&str>, message: Option<&str>) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.map(str::to_string),
        message: message.map(str::to_string),
        last_transition_time: None,
        last_probe_time: None,
    }
}

/// A VMIM created at 02:00:00 that reached `phase` through the usual phases.
fn vmim(
    name: &str,
    uid: &str,
    phase: MigrationPhase,
    list: &[(&str, &str)],
) -> VirtualMachineInstanceMigration {
    let mut metadata = meta(name, uid);
    metadata.creation_timestamp = Some(t(list.first().map(|(_, h)| *h).unwrap_or("02:00:00")));
    metadata.labels = Some(BTreeMap::from([(
        "kubevirt.io/vmi-name".to_string(),
        VMI.to_string(),
    )]));
    VirtualMachineInstanceMigration {
        metadata,
        spec: VmimSpec {
            vmi_name: VMI.into(),
            ..Default::default()
        },
        status: VmimStatus {
            phase: Some(phase),
            conditions: Vec::new(),
            phase_transition_timestamps: transitions(list),
            migration_state: Some(MigrationState {
                source_pod: Some(SRC_POD.into()),
                ..Default::default()
            }),
            ..Default::default()
        },
    }
}

const STREAMED_FAILED: &[(&str, &str)] = &[
    ("Pending", "02:00:00"),
    ("Scheduling", "02:00:01"),
    ("Scheduled", "02:00:08"),
    ("PreparingTarget", "02:00:08"),
    ("TargetReady", "02:00:09"),
    ("Running", "02:00:10"),
    ("Failed", "02:07:42"),
];

/// A VMI with a 2Gi guest (budget 3 GB × 150 s = 450 s), running on node-1.
fn vmi() -> VirtualMachineInstance {
    let mut metadata = meta(VMI, VMI_UID);
    metadata.owner_references = Some(vec![OwnerReference {
        api_version: "kubevirt.io/v1".into(),
        kind: "VirtualMachine".into(),
        name: VMI.into(),
        uid: "vm-uid".into(),
        ..Default::default()
    }]);
    VirtualMachineInstance {
        metadata,
        spec: VmiSpec {
            domain: DomainSpec {
                memory: Some(MemorySpec {
                    guest: Some(Quantity::parse("2Gi").unwrap_or_else(|e| panic!("{e}"))),
                }),
                ..Default::default()
            },
            ..Default::default()
        },
        status: VmiStatus {
            node_name: Some("node-1".into()),
            phase: Some(VmiPhase::Running),
            conditions: vec![condition("LiveMigratable", "True", None, None)],
            ..Default::default()
        },
    }
}

/// The migrationState of a migration that streamed from 02:00:10 to `end`.
fn streamed(end: &str, failed: bool, reason: Option<&str>) -> MigrationState {
    MigrationState {
        migration_uid: Some(UID.into()),
        start_timestamp: Some(t("02:00:10")),
        end_timestamp: Some(t(end)),
        completed: true,
        failed,
        failure_reason: reason.map(str::to_string),
        abort_status: failed.then_some(AbortStatus::Succeeded),
        source_node: Some("node-1".into()),
        target_node: Some("node-2".into()),
        source_pod: Some(SRC_POD.into()),
        target_pod: Some(TGT_POD.into()),
        mode: Some(MigrationMode::PreCopy),
        migration_configuration: Some(MigrationConfig {
            completion_timeout_per_gib: Some(150),
            progress_timeout: Some(150),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn pod(name: &str, uid: &str, node: Option<&str>, phase: &str, job: Option<&str>) -> Pod {
    let mut labels = BTreeMap::from([
        ("kubevirt.io".to_string(), "virt-launcher".to_string()),
        ("kubevirt.io/created-by".to_string(), VMI_UID.to_string()),
    ]);
    if let Some(j) = job {
        labels.insert("kubevirt.io/migrationJobUID".into(), j.into());
    }
    let mut metadata = meta(name, uid);
    metadata.labels = Some(labels);
    metadata.creation_timestamp = Some(t("02:00:01"));
    Pod {
        metadata,
        spec: Some(PodSpec {
            node_name: node.map(str::to_string),
            ..Default::default()
        }),
        status: Some(PodStatus {
            phase: Some(phase.into()),
            ..Default::default()
        }),
    }
}

fn source_pod() -> Pod {
    pod(SRC_POD, "src-uid", Some("node-1"), "Running", None)
}

/// A legacy core/v1 event.
fn event(kind: &str, name: &str, uid: &str, reason: &str, message: &str, hms: &str) -> Event {
    Event {
        metadata: ObjectMeta {
            name: Some(format!("{name}.{reason}.{hms}")),
            namespace: Some(NS.into()),
            ..Default::default()
        },
        involved_object: ObjectReference {
            kind: Some(kind.into()),
            name: Some(name.into()),
            namespace: Some(NS.into()),
            uid: Some(uid.into()),
            ..Default::default()
        },
        reason: Some(reason.into()),
        message: Some(message.into()),
        type_: Some("Warning".into()),
        first_timestamp: Some(t(hms)),
        last_timestamp: Some(t(hms)),
        count: Some(1),
        ..Default::default()
    }
}

fn vmim_event(reason: &str, message: &str, hms: &str) -> Event {
    event(
        "VirtualMachineInstanceMigration",
        "m1",
        UID,
        reason,
        message,
        hms,
    )
}

fn vmi_event(reason: &str, message: &str, hms: &str) -> Event {
    event("VirtualMachineInstance", VMI, VMI_UID, reason, message, hms)
}

fn kubevirt(version: &str) -> KubeVirt {
    KubeVirt {
        metadata: ObjectMeta {
            name: Some("kubevirt".into()),
            namespace: Some("kubevirt".into()),
            ..Default::default()
        },
        spec: KubeVirtSpec {
            configuration: KubeVirtConfiguration::default(),
        },
        status: KubeVirtStatus {
            observed_kube_virt_version: Some(version.into()),
            phase: Some("Deployed".into()),
        },
        ..Default::default()
    }
}

fn evidence(
    m: Option<VirtualMachineInstanceMigration>,
    v: Option<VirtualMachineInstance>,
    pods: Vec<Pod>,
    events: Vec<Event>,
) -> Evidence {
    Evidence {
        now: at("03:00:00"),
        migrations: m.iter().cloned().collect(),
        migration: m,
        vmi_namespace: NS.into(),
        vmi_name: VMI.into(),
        vmi: v,
        pods,
        events,
        kubevirt: Some(kubevirt("v1.9.0")),
        policies: Vec::new(),
        namespace: None,
        load: None,
        unread: Vec::new(),
        pdbs: Vec::new(),
        loops: Default::default(),
    }
}

/// A failed migration whose own state (on the VMI) is `state`.
fn failed_with(state: MigrationState) -> Evidence {
    let mut v = vmi();
    v.status.migration_state = Some(state);
    evidence(
        Some(vmim("m1", UID, MigrationPhase::Failed, STREAMED_FAILED)),
        Some(v),
        vec![
            source_pod(),
            pod(TGT_POD, "tgt-uid", Some("node-2"), "Succeeded", Some(UID)),
        ],
        Vec::new(),
    )
}

fn has_fact(d: &Diagnosis, object_prefix: &str, field: &str) -> bool {
    d.evidence
        .iter()
        .any(|f| f.object.starts_with(object_prefix) && f.field == field)
}

// ---------------------------------------------------------------- neither plane

#[test]
fn succeeded() {
    let mut v = vmi();
    let mut st = streamed("02:01:48", false, None);
    st.abort_status = None;
    v.status.migration_state = Some(st);
    v.status.node_name = Some("node-2".into());
    let mut list = STREAMED_FAILED.to_vec();
    list[6] = ("Succeeded", "02:01:50");
    let e = evidence(
        Some(vmim("m1", UID, MigrationPhase::Succeeded, &list)),
        Some(v),
        vec![
            pod(SRC_POD, "src-uid", Some("node-1"), "Succeeded", None),
            pod(TGT_POD, "tgt-uid", Some("node-2"), "Running", Some(UID)),
        ],
        Vec::new(),
    );
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        ("succeeded", Plane::None, Outcome::Succeeded)
    );
    assert!(
        d.summary.contains("from node-1 to node-2 in 1m38s"),
        "{}",
        d.summary
    );
    let target = d.pods.iter().find(|p| p.role == "target").unwrap();
    assert!(target.live, "after success the target pod runs the guest");
    assert!(!d.outcome.is_finding());
}

#[test]
fn aborted_by_request_v18_string() {
    let mut st = streamed("02:01:00", true, Some("Live migration aborted "));
    st.abort_requested = true;
    let d = diagnose(&failed_with(st));
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        ("aborted-by-request", Plane::None, Outcome::Aborted)
    );
    assert!(d.outcome.is_finding());
    assert!(
        d.evidence
            .iter()
            .any(|f| f.value == "Live migration aborted ")
    );
}

#[test]
fn aborted_by_request_v19_string() {
    let mut st = streamed("02:01:00", true, Some("Live migration has been aborted"));
    st.abort_requested = true;
    let d = diagnose(&failed_with(st));
    assert_eq!(d.cause.id, "aborted-by-request");
    assert!(!d.inferred);
}

/// Issue 33: an abort vmctl asked for (its annotation on the VMIM) is said as vmctl's, with
/// `vmctl migrate` again as the next step; without it, who asked is for the operator to find.
#[test]
fn an_abort_vmctl_asked_for_says_so() {
    let mut st = streamed("02:01:00", true, Some("Live migration has been aborted"));
    st.abort_requested = true;
    let mut e = failed_with(st);
    let generic = diagnose(&e);
    assert!(
        generic
            .next_steps
            .iter()
            .any(|s| s.contains("whoever ran virtctl migrate-cancel")),
        "{:?}",
        generic.next_steps
    );
    if let Some(m) = e.migration.as_mut() {
        m.metadata.annotations = Some(
            [(
                crate::model::vmim::ABORT_REQUESTED_BY_ANNOTATION.to_string(),
                "vmctl abort".to_string(),
            )]
            .into(),
        );
    }
    let d = diagnose(&e);
    assert_eq!(d.cause.id, "aborted-by-request");
    assert!(
        d.summary
            .contains("by vmctl abort (vmctl deleted its VMIM)"),
        "{}",
        d.summary
    );
    assert!(
        !d.next_steps.iter().any(|s| s.contains("migrate-cancel")),
        "{:?}",
        d.next_steps
    );
    assert!(
        d.next_steps
            .iter()
            .any(|s| s.starts_with("Migrate again when ready: vmctl migrate ")),
        "{:?}",
        d.next_steps
    );
    assert!(has_fact(
        &d,
        "VirtualMachineInstanceMigration",
        "metadata.annotations[vmctl.io/abort-requested-by]"
    ));
}

#[test]
fn aborted_before_hand_off() {
    let mut m = vmim(
        "m1",
        UID,
        MigrationPhase::Failed,
        &[
            ("Pending", "02:00:00"),
            ("Scheduling", "02:00:01"),
            ("Failed", "02:00:30"),
        ],
    );
    m.status
        .conditions
        .push(condition("migrationAbortRequested", "True", None, None));
    let e = evidence(
        Some(m),
        Some(vmi()),
        vec![source_pod()],
        vec![vmim_event(
            "FailedMigration",
            "Migration failed due to being canceled",
            "02:00:30",
        )],
    );
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.outcome),
        ("aborted-by-request", Outcome::Aborted)
    );
    assert!(
        d.summary.contains("before any memory was copied"),
        "{}",
        d.summary
    );
}

#[test]
fn in_progress_pre_copy_reads_the_source_logs() {
    let mut v = vmi();
    let mut st = streamed("02:00:10", false, None);
    st.end_timestamp = None;
    st.completed = false;
    st.abort_status = None;
    v.status.migration_state = Some(st);
    let m = vmim("m1", UID, MigrationPhase::Running, &STREAMED_FAILED[..6]);
    let mut e = evidence(
        Some(m),
        Some(v),
        vec![
            source_pod(),
            pod(TGT_POD, "tgt-uid", Some("node-2"), "Running", Some(UID)),
        ],
        Vec::new(),
    );
    e.now = at("02:02:10");
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.outcome),
        ("in-progress", Outcome::InProgress)
    );
    assert!(
        d.summary
            .contains("pre-copy for 2m00s, copying memory from node-1 to node-2"),
        "{}",
        d.summary
    );
    assert!(
        d.summary
            .contains("The completion budget is 7m30s (150 s × 3: the guest's 2.0 GiB of memory counted as KubeVirt counts it, in started units of 10^9 bytes)."),
        "{}",
        d.summary
    );
    let live: Vec<_> = d.pods.iter().filter(|p| p.live).collect();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].role, "source");
    assert!(
        d.next_steps
            .iter()
            .any(|s| s.contains(&format!("kubectl logs -n prod {SRC_POD} -c compute")))
    );
}

#[test]
fn in_progress_post_copy_is_the_point_of_no_return() {
    let mut v = vmi();
    let mut st = streamed("02:00:10", false, None);
    st.end_timestamp = None;
    st.completed = false;
    st.abort_status = None;
    st.mode = Some(MigrationMode::PostCopy);
    v.status.migration_state = Some(st);
    let e = evidence(
        Some(vmim(
            "m1",
            UID,
            MigrationPhase::Running,
            &STREAMED_FAILED[..6],
        )),
        Some(v),
        vec![
            source_pod(),
            pod(TGT_POD, "tgt-uid", Some("node-2"), "Running", Some(UID)),
        ],
        Vec::new(),
    );
    let d = diagnose(&e);
    assert_eq!(d.cause.id, "in-progress");
    assert!(
        d.attention
            .iter()
            .any(|a| a.starts_with("POINT OF NO RETURN"))
    );
    let live = d.pods.iter().find(|p| p.live).unwrap();
    assert_eq!(live.role, "target");
    assert!(
        !d.next_steps
            .iter()
            .any(|s| s.contains("kubectl delete vmim")),
        "no abort advice in post-copy"
    );
}

#[test]
fn no_migration_for_a_migratable_vmi() {
    let d = diagnose(&evidence(None, Some(vmi()), vec![source_pod()], Vec::new()));
    assert_eq!(
        (d.cause.id, d.outcome),
        ("no-migration", Outcome::NoMigration)
    );
    assert!(d.migration.is_none());
    assert_eq!(d.pods[0].role, "current");
}

#[test]
fn unknown_when_the_vmim_has_no_status() {
    let mut m = vmim(
        "m1",
        UID,
        MigrationPhase::Pending,
        &[("Pending", "02:00:00")],
    );
    m.status = VmimStatus::default();
    let d = diagnose(&evidence(
        Some(m),
        Some(vmi()),
        vec![source_pod()],
        Vec::new(),
    ));
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        ("unknown", Plane::Unknown, Outcome::Blocked)
    );
    assert!(d.summary.contains("no status"), "{}", d.summary);
    assert!(
        d.evidence
            .iter()
            .any(|f| f.field == "status" && f.value == "(absent)")
    );
}

#[test]
fn a_fresh_vmim_without_status_is_just_new() {
    let mut m = vmim(
        "m1",
        UID,
        MigrationPhase::Pending,
        &[("Pending", "02:59:30")],
    );
    m.status = VmimStatus::default();
    let d = diagnose(&evidence(
        Some(m),
        Some(vmi()),
        vec![source_pod()],
        Vec::new(),
    ));
    assert_eq!(
        (d.cause.id, d.outcome),
        ("in-progress", Outcome::InProgress)
    );
}

// ---------------------------------------------------------------- data plane

#[test]
fn postcopy_failed_v18() {
    let mut st = streamed(
        "02:05:58",
        true,
        Some(
            "Live migration failed virError(Code=9, Domain=10, Message='operation failed: job 'migration out' failed: Unable to write to socket: Connection reset by peer')",
        ),
    );
    st.mode = Some(MigrationMode::PostCopy);
    st.abort_status = None;
    let mut e = failed_with(st);
    if let Some(v) = e.vmi.as_mut() {
        v.status.phase = Some(VmiPhase::Failed);
        v.status.conditions.push(condition(
            "Synchronized",
            "False",
            Some("Synchronizing with the Domain failed."),
            Some("VMI is irrecoverable due to failed post-copy migration"),
        ));
    }
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        ("postcopy-failed", Plane::DataPlane, Outcome::Failed)
    );
    assert!(d.summary.contains("point of no return"), "{}", d.summary);
    assert!(d.summary.contains("Connection reset by peer"));
    assert!(has_fact(
        &d,
        "VirtualMachineInstance/prod/db-01",
        "status.conditions[type=Synchronized].message"
    ));
    assert!(d.pods.iter().all(|p| !p.live), "the guest is gone");
    assert!(
        d.next_steps
            .iter()
            .any(|s| s.contains("virtctl start db-01 -n prod"))
    );
}

#[test]
fn postcopy_failed_v19_raw_libvirt_error_and_vmim_still_running() {
    let mut st = streamed(
        "02:05:58",
        true,
        Some("virError(Code=1, Domain=10, Message='internal error: post-copy failed')"),
    );
    st.mode = Some(MigrationMode::PostCopy);
    let mut v = vmi();
    v.status.phase = Some(VmiPhase::Failed);
    v.status.migration_state = Some(st);
    // virt-controller has not caught up yet: the VMIM still says Running.
    let e = evidence(
        Some(vmim(
            "m1",
            UID,
            MigrationPhase::Running,
            &STREAMED_FAILED[..6],
        )),
        Some(v),
        vec![],
        vec![vmi_event(
            "SyncFailed",
            "VMI is irrecoverable due to failed post-copy migration",
            "02:06:00",
        )],
    );
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.outcome),
        ("postcopy-failed", Outcome::Failed)
    );
}

#[test]
fn not_converging_v18_string() {
    let d = diagnose(&failed_with(streamed(
        "02:07:40",
        true,
        Some("Live migration is not completed after 450 seconds and has been aborted"),
    )));
    assert_eq!(
        (d.cause.id, d.plane, d.inferred),
        ("not-converging", Plane::DataPlane, false)
    );
    assert!(
        d.summary
            .contains("7m30s (150 s × 3: the guest's 2.0 GiB of memory"),
        "{}",
        d.summary
    );
    assert!(
        !d.summary.contains(" GB") && !d.summary.contains("s/GiB"),
        "one unit (GiB) in one expression: {}",
        d.summary
    );
    assert!(d.next_steps.iter().any(|s| s.contains("allowPostCopy")));
}

#[test]
fn not_converging_v19_is_inferred_from_the_budget() {
    // 450 s budget, aborted 450 s after the start, nobody asked for it.
    let d = diagnose(&failed_with(streamed(
        "02:07:40",
        true,
        Some("Live migration has been aborted"),
    )));
    assert_eq!((d.cause.id, d.inferred), ("not-converging", true));
    assert!(d.summary.contains("Inferred"), "{}", d.summary);
}

#[test]
fn a_libvirt_cancel_without_a_request_is_a_monitor_abort_too() {
    let d = diagnose(&failed_with(streamed(
        "02:07:41",
        true,
        Some(
            "Live migration failed virError(Code=78, Domain=10, Message='operation aborted: job 'migration out' canceled by client')",
        ),
    )));
    assert_eq!((d.cause.id, d.inferred), ("not-converging", true));
}

#[test]
fn no_progress_v18_string() {
    let d = diagnose(&failed_with(streamed(
        "02:04:00",
        true,
        Some("Live migration stuck for 150 seconds and has been aborted"),
    )));
    assert_eq!(
        (d.cause.id, d.plane, d.inferred),
        ("no-progress", Plane::DataPlane, false)
    );
    assert!(
        d.summary.contains("progressTimeout (150 s)"),
        "{}",
        d.summary
    );
    assert!(
        d.next_steps
            .iter()
            .any(|s| s.contains("\"progressTimeout\":300"))
    );
}

#[test]
fn no_progress_v19_is_inferred_when_the_abort_came_early() {
    let d = diagnose(&failed_with(streamed(
        "02:04:00",
        true,
        Some("Live migration has been aborted"),
    )));
    assert_eq!((d.cause.id, d.inferred), ("no-progress", true));
}

#[test]
fn a_v19_monitor_abort_without_the_vmi_cannot_be_told_apart() {
    let mut m = vmim("m1", UID, MigrationPhase::Failed, STREAMED_FAILED);
    m.status.migration_state = Some(streamed(
        "02:04:00",
        true,
        Some("Live migration has been aborted"),
    ));
    let d = diagnose(&evidence(Some(m), None, vec![], vec![]));
    assert_eq!((d.cause.id, d.outcome), ("unknown", Outcome::Failed));
    assert!(
        d.summary.contains("memory size is unknown"),
        "{}",
        d.summary
    );
    assert!(d.attention.iter().any(|a| a.contains("no longer exists")));
    assert!(has_fact(
        &d,
        "VirtualMachineInstance/prod/db-01",
        "metadata.name"
    ));
}

#[test]
fn connection_failure_v18_and_v19() {
    for reason in [
        "Live migration failed virError(Code=38, Domain=7, Message='unable to connect to server at 'node-2:49152': Connection refused')",
        "virError(Code=38, Domain=7, Message='unable to connect to server at 'node-2:49152': Connection refused')",
    ] {
        let mut st = streamed("02:00:12", true, Some(reason));
        st.abort_status = None;
        let d = diagnose(&failed_with(st));
        assert_eq!(
            (d.cause.id, d.plane),
            ("connection-failure", Plane::DataPlane),
            "{reason}"
        );
        assert!(d.summary.contains("Connection refused"));
    }
}

#[test]
fn libvirt_error_v18_and_v19_is_quoted() {
    for reason in [
        "Live migration failed virError(Code=1, Domain=10, Message='internal error: unable to execute QEMU command 'migrate': Nested VMX virtualization does not support live migration yet')",
        "virError(Code=1, Domain=10, Message='internal error: unable to execute QEMU command 'migrate': Nested VMX virtualization does not support live migration yet')",
    ] {
        let mut st = streamed("02:00:12", true, Some(reason));
        st.abort_status = None;
        let d = diagnose(&failed_with(st));
        assert_eq!(d.cause.id, "libvirt-error", "{reason}");
        assert!(
            d.summary
                .contains("\"internal error: unable to execute QEMU command 'migrate'"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("code 1"));
    }
}

#[test]
fn destination_volume_too_small_v18_and_v19() {
    for reason in [
        "Volume migration cannot be performed because the destination volume is smaller then the source volume: disk vdb",
        "Volume migration cannot be performed because the destination volume is smaller than the source volume: disk vdb",
    ] {
        let mut st = streamed("02:00:12", true, Some(reason));
        st.abort_status = None;
        let d = diagnose(&failed_with(st));
        assert_eq!(
            (d.cause.id, d.plane),
            ("destination-volume-too-small", Plane::DataPlane),
            "{reason}"
        );
    }
}

#[test]
fn target_domain_not_seen() {
    let mut st = streamed("02:01:00", false, None);
    st.abort_status = None;
    let mut e = failed_with(st);
    if let Some(v) = e.vmi.as_mut() {
        v.status.phase = Some(VmiPhase::Failed);
    }
    e.events.push(vmi_event(
        "Migrated",
        "The VirtualMachineInstance's domain was never observed on the target after the migration completed within the timeout period.",
        "02:02:00",
    ));
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.plane, d.inferred),
        ("target-domain-not-seen", Plane::DataPlane, false)
    );
    assert!(d.summary.contains("never reported the domain within 60 s"));
}

// ---------------------------------------------------------------- control plane

fn scheduling(phase: MigrationPhase) -> VirtualMachineInstanceMigration {
    let list: &[(&str, &str)] = if phase == MigrationPhase::Failed {
        &[
            ("Pending", "02:00:00"),
            ("Scheduling", "02:00:01"),
            ("Failed", "02:05:02"),
        ]
    } else {
        &[("Pending", "02:00:00"), ("Scheduling", "02:00:01")]
    };
    vmim("m1", UID, phase, list)
}

fn unschedulable_target(message: &str) -> Pod {
    let mut p = pod(TGT_POD, "tgt-uid", None, "Pending", Some(UID));
    if let Some(st) = p.status.as_mut() {
        st.conditions = Some(vec![PodCondition {
            type_: "PodScheduled".into(),
            status: "False".into(),
            reason: Some("Unschedulable".into()),
            message: Some(message.into()),
            last_transition_time: Some(t("02:58:00")),
            ..Default::default()
        }]);
    }
    p
}

#[test]
fn target_pod_unschedulable_in_flight_names_the_deadline() {
    let msg = "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 3 Insufficient memory. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.";
    // KubeVirt counts the 300 s from the target pod's creation (handlePendingPodTimeout).
    let mut target = unschedulable_target(msg);
    target.metadata.creation_timestamp = Some(t("02:58:00"));
    let e = evidence(
        Some(scheduling(MigrationPhase::Scheduling)),
        Some(vmi()),
        vec![source_pod(), target],
        Vec::new(),
    );
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        (
            "target-pod-unschedulable",
            Plane::ControlPlane,
            Outcome::Blocked
        )
    );
    assert!(d.summary.contains("3 Insufficient memory"), "{}", d.summary);
    assert!(!d.summary.contains("preemption"), "{}", d.summary);
    assert!(
        d.summary.contains("2026-11-29T03:03:00Z (in 3m00s)"),
        "{}",
        d.summary
    );
    assert!(d.next_steps.iter().any(|s| s.starts_with("No node has")));
    assert!(
        d.next_steps
            .iter()
            .any(|s| s.contains("untolerated") || s.contains("taints"))
    );
}

#[test]
fn target_pod_unschedulable_after_the_timeout_from_events_alone() {
    // The pod is gone; its events and the VMIM's remain (the events.k8s.io shape: no
    // first/lastTimestamp, eventTime and series instead).
    let mut sched = event(
        "Pod",
        TGT_POD,
        "tgt-uid",
        "FailedScheduling",
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: x",
        "02:00:02",
    );
    sched.first_timestamp = None;
    sched.last_timestamp = None;
    sched.count = None;
    sched.event_time = Some(MicroTime(at("02:00:02")));
    sched.series = Some(EventSeries {
        count: Some(6),
        last_observed_time: Some(MicroTime(at("02:04:32"))),
    });
    let e = evidence(
        Some(scheduling(MigrationPhase::Failed)),
        Some(vmi()),
        vec![source_pod()],
        vec![
            vmim_event(
                "SuccessfulCreate",
                &format!("Created migration target pod {TGT_POD}"),
                "02:00:01",
            ),
            sched,
            vmim_event(
                "SuccessfulDelete",
                &format!("unschedulable pod prod/{TGT_POD} timeout period exceeded"),
                "02:05:02",
            ),
            vmim_event(
                "FailedMigration",
                "Migration target pod was removed during active migration.",
                "02:05:02",
            ),
        ],
    );
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.outcome),
        ("target-pod-unschedulable", Outcome::Failed)
    );
    assert!(
        d.summary
            .contains("didn't match Pod's node affinity/selector")
    );
    let target = d.pods.iter().find(|p| p.role == "target").unwrap();
    assert!(!target.exists);
    assert!(
        d.attention
            .iter()
            .any(|a| a.contains(&format!("target pod {TGT_POD} no longer exists")))
    );
    let sched_entry = d
        .timeline
        .iter()
        .find(|t| t.what.contains("FailedScheduling"))
        .unwrap();
    assert_eq!(sched_entry.count, Some(6));
    assert_eq!(
        sched_entry.last_time.as_deref(),
        Some("2026-11-29T02:04:32Z")
    );
}

#[test]
fn no_node_for_cpu_model() {
    let e = evidence(
        Some(scheduling(MigrationPhase::Scheduling)),
        Some(vmi()),
        vec![
            source_pod(),
            unschedulable_target(
                "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
            ),
        ],
        vec![vmi_event(
            "NoSuitableNodesForHostModelMigration",
            "Migration cannot proceed since no node is suitable to run the required CPU model / required features: cpu-model-migration.node.kubevirt.io/Icelake-Server",
            "02:00:02",
        )],
    );
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.plane, d.inferred),
        ("no-node-for-cpu-model", Plane::ControlPlane, false)
    );
}

#[test]
fn target_pod_not_ready_image_pull() {
    let mut p = pod(TGT_POD, "tgt-uid", Some("node-2"), "Pending", Some(UID));
    if let Some(st) = p.status.as_mut() {
        st.container_statuses = Some(vec![ContainerStatus {
            name: "compute".into(),
            state: Some(ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some("ImagePullBackOff".into()),
                    message: Some(
                        "Back-off pulling image \"registry.local/virt-launcher:v1.9.0\"".into(),
                    ),
                }),
                ..Default::default()
            }),
            ..Default::default()
        }]);
    }
    let e = evidence(
        Some(scheduling(MigrationPhase::Scheduling)),
        Some(vmi()),
        vec![source_pod(), p],
        vec![],
    );
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.outcome),
        ("target-pod-not-ready", Outcome::Blocked)
    );
    assert!(d.summary.contains("ImagePullBackOff"), "{}", d.summary);
    assert!(
        d.summary.contains("2026-11-29T02:15:01Z"),
        "900 s after creation: {}",
        d.summary
    );
}

#[test]
fn target_pod_create_failed_pod_security() {
    let e = evidence(
        Some(vmim(
            "m1",
            UID,
            MigrationPhase::Pending,
            &[("Pending", "02:00:00")],
        )),
        Some(vmi()),
        vec![source_pod()],
        vec![vmi_event(
            "FailedCreate",
            "Error creating pod: pods \"virt-launcher-db-01-x\" is forbidden: violates PodSecurity \"restricted:latest\": privileged",
            "02:00:01",
        )],
    );
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.outcome),
        ("target-pod-create-failed", Outcome::Blocked)
    );
    assert!(
        d.next_steps
            .iter()
            .any(|s| s.contains("pod-security.kubernetes.io/enforce=privileged"))
    );
}

#[test]
fn resource_quota_exceeded() {
    let mut m = vmim(
        "m1",
        UID,
        MigrationPhase::Pending,
        &[("Pending", "02:00:00")],
    );
    m.status.conditions.push(condition(
        "migrationRejectedByResourceQuota",
        "True",
        None,
        None,
    ));
    let e = evidence(
        Some(m),
        Some(vmi()),
        vec![source_pod()],
        vec![vmi_event(
            "FailedCreate",
            "Error creating pod: pods \"virt-launcher-db-01-\" is forbidden: exceeded quota: q, requested: requests.memory=2Gi, used: requests.memory=7Gi, limited: requests.memory=8Gi",
            "02:00:01",
        )],
    );
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.outcome),
        ("resource-quota-exceeded", Outcome::Blocked)
    );
    assert!(d.summary.contains("1024Mi short"), "{}", d.summary);
    assert!(
        d.next_steps
            .iter()
            .any(|s| s.contains("\"requests.memory\":\"9216Mi\""))
    );
}

#[test]
fn blocked_by_utility_volumes_pending_and_failed() {
    let mut m = vmim(
        "m1",
        UID,
        MigrationPhase::Pending,
        &[("Pending", "02:59:00")],
    );
    m.status.conditions.push(condition(
        "migrationBlockedByUtilityVolumes",
        "True",
        Some("UtilityVolumesPresent"),
        Some("Migration is waiting for utility volumes to detach. Will timeout in 150 seconds."),
    ));
    let d = diagnose(&evidence(Some(m), Some(vmi()), vec![source_pod()], vec![]));
    assert_eq!(
        (d.cause.id, d.outcome),
        ("blocked-by-utility-volumes", Outcome::Blocked)
    );
    assert!(d.summary.contains("03:01:30Z (in 1m30s)"), "{}", d.summary);

    let m = vmim(
        "m1",
        UID,
        MigrationPhase::Failed,
        &[("Pending", "02:00:00"), ("Failed", "02:02:30")],
    );
    let d = diagnose(&evidence(
        Some(m),
        Some(vmi()),
        vec![source_pod()],
        vec![vmim_event(
            "FailedMigration",
            "Migration timeout waiting for utility volumes to detach from VMI [prod/db-01]. Utility volumes still present after 150 seconds.",
            "02:02:30",
        )],
    ));
    assert_eq!(
        (d.cause.id, d.outcome),
        ("blocked-by-utility-volumes", Outcome::Failed)
    );
}

#[test]
fn blocked_by_backup() {
    let mut m = vmim(
        "m1",
        UID,
        MigrationPhase::Pending,
        &[("Pending", "02:00:00")],
    );
    m.status.conditions.push(condition(
        "migrationBlockedByBackup",
        "True",
        Some("BackupInProgress"),
        Some("Waiting for backup nightly-db-01 to complete"),
    ));
    let d = diagnose(&evidence(Some(m), Some(vmi()), vec![source_pod()], vec![]));
    assert_eq!(
        (d.cause.id, d.plane),
        ("blocked-by-backup", Plane::ControlPlane)
    );
    assert!(d.summary.contains("nightly-db-01"));
}

#[test]
fn not_live_migratable_without_a_migration() {
    let mut v = vmi();
    v.status.conditions = vec![condition(
        "LiveMigratable",
        "False",
        Some("DisksNotLiveMigratable"),
        Some(
            "cannot migrate VMI: PVC db-data is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)",
        ),
    )];
    v.spec.eviction_strategy = Some(crate::model::EvictionStrategy::LiveMigrate);
    let d = diagnose(&evidence(None, Some(v), vec![source_pod()], vec![]));
    assert_eq!(
        (d.cause.id, d.outcome),
        ("not-live-migratable", Outcome::Blocked)
    );
    assert!(d.summary.contains("PVC db-data"), "{}", d.summary);
    assert!(
        d.summary.contains("a drain of node-1 blocks"),
        "{}",
        d.summary
    );
    assert!(
        d.next_steps
            .iter()
            .any(|s| s.contains("vmctl plan-drain node-1"))
    );
    assert!(
        d.attention
            .iter()
            .any(|a| a.contains("cannot live-migrate now"))
    );
}

#[test]
fn target_pod_lost() {
    let mut st = streamed("02:00:12", true, Some("Target pod is down"));
    st.start_timestamp = None;
    st.abort_status = None;
    let d = diagnose(&failed_with(st));
    assert_eq!(
        (d.cause.id, d.plane),
        ("target-pod-lost", Plane::ControlPlane)
    );

    let m = vmim("m1", UID, MigrationPhase::Failed, STREAMED_FAILED);
    let d = diagnose(&evidence(
        Some(m),
        Some(vmi()),
        vec![source_pod()],
        vec![vmim_event(
            "FailedMigration",
            "Migration failed because target pod shutdown during migration",
            "02:07:42",
        )],
    ));
    assert_eq!(d.cause.id, "target-pod-lost");
}

#[test]
fn vmi_stopped_during_migration_from_the_event() {
    let m = vmim("m1", UID, MigrationPhase::Failed, STREAMED_FAILED);
    let mut v = vmi();
    v.status.phase = Some(VmiPhase::Succeeded);
    let d = diagnose(&evidence(
        Some(m),
        Some(v),
        vec![],
        vec![vmim_event(
            "FailedMigration",
            "Migration failed vmi shutdown during migration.",
            "02:07:42",
        )],
    ));
    assert_eq!(
        (d.cause.id, d.inferred),
        ("vmi-stopped-during-migration", false)
    );
    assert!(d.summary.contains("guest shut down"));
}

#[test]
fn vmi_deleted_is_inferred() {
    let m = vmim("m1", UID, MigrationPhase::Failed, STREAMED_FAILED);
    let d = diagnose(&evidence(Some(m), None, vec![], vec![]));
    assert_eq!(
        (d.cause.id, d.inferred),
        ("vmi-stopped-during-migration", true)
    );
    assert!(d.summary.contains("the VMI was deleted"));
}

#[test]
fn another_migration_in_progress() {
    let m = vmim(
        "m2",
        "uid-2",
        MigrationPhase::Failed,
        &[("Failed", "02:10:00")],
    );
    let older = vmim("m1", UID, MigrationPhase::Running, &STREAMED_FAILED[..6]);
    let mut e = evidence(
        Some(m),
        Some(vmi()),
        vec![source_pod()],
        vec![event(
            "VirtualMachineInstanceMigration",
            "m2",
            "uid-2",
            "FailedMigration",
            "VMI is not eligible for migration because another migration job is in progress.",
            "02:10:00",
        )],
    );
    e.migrations.push(older);
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.outcome),
        ("another-migration-in-progress", Outcome::Failed)
    );
    assert!(d.summary.contains("m1"), "{}", d.summary);
}

fn evacuation(
    name: &str,
    uid: &str,
    phase: MigrationPhase,
    list: &[(&str, &str)],
) -> VirtualMachineInstanceMigration {
    let mut m = vmim(name, uid, phase, list);
    m.metadata.annotations = Some(BTreeMap::from([(
        EVACUATION_ANNOTATION.to_string(),
        "node-1".to_string(),
    )]));
    m
}

#[test]
fn migration_backoff_doubles() {
    let first = evacuation(
        "e1",
        "u1",
        MigrationPhase::Failed,
        &[("Pending", "02:50:00"), ("Failed", "02:55:00")],
    );
    let second = evacuation(
        "e2",
        "u2",
        MigrationPhase::Failed,
        &[("Pending", "02:55:20"), ("Failed", "02:59:30")],
    );
    let third = evacuation(
        "e3",
        "u3",
        MigrationPhase::Pending,
        &[("Pending", "02:59:50")],
    );
    let mut e = evidence(Some(third), Some(vmi()), vec![source_pod()], vec![]);
    e.migrations = vec![first, second, e.migrations[0].clone()];
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.outcome, d.inferred),
        ("migration-backoff", Outcome::Blocked, true)
    );
    assert!(d.summary.contains("waits 40s"), "{}", d.summary);
    assert!(
        d.summary
            .contains("next attempt can start at 2026-11-29T03:00:10Z (in 10s)"),
        "{}",
        d.summary
    );
    assert!(
        d.summary.contains("doubled for each of the 1 further ones"),
        "{}",
        d.summary
    );

    let h = history(&e);
    assert_eq!(
        h.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(),
        ["e1", "e2", "e3"]
    );
    assert_eq!(h[0].backoff_seconds, None);
    assert_eq!(h[1].backoff_seconds, Some(20));
    assert_eq!(h[1].since_previous_seconds, Some(20));
    assert_eq!(h[2].backoff_seconds, Some(40));
    assert_eq!(h[2].cause, "migration-backoff");
}

#[test]
fn user_migrations_get_no_backoff() {
    let first = vmim(
        "m0",
        "u0",
        MigrationPhase::Failed,
        &[("Pending", "02:50:00"), ("Failed", "02:55:00")],
    );
    let second = vmim(
        "m1",
        UID,
        MigrationPhase::Pending,
        &[("Pending", "02:59:50")],
    );
    assert_eq!(history::backoff(&[first, second.clone()], &second), None);
}

#[test]
fn queued_parallel_limit_per_node() {
    let me = vmim(
        "m1",
        UID,
        MigrationPhase::Pending,
        &[("Pending", "02:58:00")],
    );
    let running = |name: &str, vmi_name: &str| {
        let mut m = vmim(name, name, MigrationPhase::Running, &STREAMED_FAILED[..6]);
        m.spec.vmi_name = vmi_name.into();
        m
    };
    let mut e = evidence(Some(me.clone()), Some(vmi()), vec![source_pod()], vec![]);
    e.load = Some(MigrationLoad {
        migrations: vec![
            me,
            running("r1", "a"),
            running("r2", "b"),
            running("r3", "elsewhere"),
        ],
        vmis_on_node: vec!["prod/a".into(), "prod/b".into(), "prod/db-01".into()],
    });
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        (
            "queued-parallel-limit",
            Plane::ControlPlane,
            Outcome::InProgress
        )
    );
    assert!(
        d.summary
            .contains("2 migrations are already leaving node-1"),
        "{}",
        d.summary
    );
    assert!(!d.outcome.is_finding(), "waiting for a slot is normal");

    // Below both limits: plain in-progress.
    if let Some(l) = e.load.as_mut() {
        l.vmis_on_node.retain(|q| q != "prod/b");
    }
    assert_eq!(diagnose(&e).cause, "in-progress");
}

// ---------------------------------------------------------------- joins, attention, timeline

#[test]
fn a_migration_state_of_another_migration_is_not_used() {
    let mut v = vmi();
    let mut other = streamed(
        "01:00:00",
        true,
        Some("Live migration stuck for 150 seconds and has been aborted"),
    );
    other.migration_uid = Some("someone-else".into());
    v.status.migration_state = Some(other);
    let m = vmim("m1", UID, MigrationPhase::Failed, STREAMED_FAILED);
    let d = diagnose(&evidence(Some(m), Some(v), vec![source_pod()], vec![]));
    assert_ne!(
        d.cause, "no-progress",
        "another migration's failure must not be reported"
    );
    assert!(
        d.attention
            .iter()
            .any(|a| a.contains("describes another migration (migrationUid someone-else"))
    );
    assert_eq!(
        d.migration.as_ref().and_then(|m| m.state_from.clone()),
        None
    );
}

#[test]
fn evacuation_is_always_surfaced() {
    let mut v = vmi();
    v.status.evacuation_node_name = Some("node-1".into());
    v.status.conditions.push(condition(
        "EvictionRequested",
        "True",
        Some("EvictionRequested"),
        Some("VMI is marked for eviction"),
    ));
    let m = evacuation(
        "e1",
        UID,
        MigrationPhase::Pending,
        &[("Pending", "02:59:59")],
    );
    let d = diagnose(&evidence(Some(m), Some(v), vec![source_pod()], vec![]));
    assert!(
        d.attention
            .iter()
            .any(|a| a.contains("marked for evacuation from node-1")
                && a.contains("virtctl evacuate-cancel vmi db-01 -n prod"))
    );
    assert!(
        d.attention
            .iter()
            .any(|a| a.contains("evacuation migration, created to drain node-1"))
    );
}

#[test]
fn timeline_is_ordered_with_steps() {
    let mut st = streamed(
        "02:07:40",
        true,
        Some("Live migration is not completed after 450 seconds and has been aborted"),
    );
    st.target_node_domain_ready_timestamp = None;
    let mut e = failed_with(st);
    e.events.push(vmi_event(
        "Migrated",
        &format!("VirtualMachineInstance migration uid {UID} failed. reason:Live migration is not completed after 450 seconds and has been aborted"),
        "02:07:41",
    ));
    // An event of another migration of the same VMI is left out.
    e.events.push(vmi_event(
        "Migrated",
        "VirtualMachineInstance migration uid other-uid failed. reason:x",
        "02:07:41",
    ));
    let d = diagnose(&e);
    let times: Vec<&str> = d.timeline.iter().map(|t| t.time.as_str()).collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(times, sorted);
    assert_eq!(d.timeline[0].since_previous_seconds, None);
    let end = d
        .timeline
        .iter()
        .find(|t| t.what == "streaming ended: failed")
        .unwrap();
    assert_eq!(end.since_previous_seconds, Some(450));
    assert_eq!(end.offset_seconds, 460);
    assert_eq!(
        d.timeline
            .iter()
            .filter(|t| t.what.contains("Migrated"))
            .count(),
        1
    );
}

#[test]
fn diagnosis_serialises_to_the_documented_shape() {
    let d = diagnose(&failed_with(streamed(
        "02:04:00",
        true,
        Some("Live migration has been aborted"),
    )));
    let v = serde_json::to_value(&d).unwrap_or_default();
    for key in [
        "outcome",
        "plane",
        "cause",
        "summary",
        "inferred",
        "evidence",
        "timeline",
        "nextSteps",
    ] {
        assert!(v.get(key).is_some(), "no {key}");
    }
    assert_eq!(v["plane"], "data-plane");
    assert_eq!(v["outcome"], "failed");
    assert_eq!(v["inferred"], true);
    let fact = &v["evidence"][0];
    assert!(fact["object"].is_string() && fact["field"].is_string() && fact["value"].is_string());
}

#[test]
fn a_v18_cluster_without_recorded_configuration_uses_its_own_defaults() {
    // ≤v1.3 defaults to 800 s/GiB: a 2Gi guest gets 3 × 800 = 2400 s.
    let mut st = streamed("02:07:40", true, Some("Live migration has been aborted"));
    st.migration_configuration = None;
    let mut e = failed_with(st);
    e.kubevirt = Some(kubevirt("v1.3.1"));
    let d = diagnose(&e);
    assert_eq!(
        d.migration.as_ref().and_then(|m| m.budget_seconds),
        Some(2400)
    );
    assert_eq!((d.cause.id, d.inferred), ("no-progress", true));
}

#[test]
fn a_blocker_beats_waiting_for_a_slot() {
    let me = vmim(
        "m1",
        UID,
        MigrationPhase::Pending,
        &[("Pending", "02:58:00")],
    );
    let mut v = vmi();
    v.status.conditions = vec![condition(
        "LiveMigratable",
        "False",
        Some("InterfaceNotLiveMigratable"),
        Some(
            "cannot migrate VMI which does not use masquerade or a migratable plugin to connect to the pod network",
        ),
    )];
    let mut e = evidence(Some(me.clone()), Some(v), vec![source_pod()], vec![]);
    let mut running = vmim("r1", "r1", MigrationPhase::Running, &STREAMED_FAILED[..6]);
    running.spec.vmi_name = "a".into();
    let mut running2 = running.clone();
    running2.metadata.uid = Some("r2".into());
    running2.spec.vmi_name = "b".into();
    e.load = Some(MigrationLoad {
        migrations: vec![me, running, running2],
        vmis_on_node: vec!["prod/a".into(), "prod/b".into()],
    });
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.outcome),
        ("not-live-migratable", Outcome::Blocked)
    );
}

#[test]
fn storage_only_blockers_do_not_stop_a_live_migration() {
    let mut v = vmi();
    v.status.conditions.push(condition(
        "StorageLiveMigratable",
        "False",
        Some("NotMigratable"),
        Some("PersistentReservationNotLiveMigratable: VMI uses SCSI persistent reservation"),
    ));
    let d = diagnose(&evidence(None, Some(v), vec![source_pod()], vec![]));
    assert_eq!(d.cause.id, "no-migration");
    assert!(
        d.attention
            .iter()
            .any(|a| a.contains("volume migration only")),
        "{:?}",
        d.attention
    );
}

#[test]
fn the_target_pod_name_is_read_from_either_create_message() {
    for message in [
        format!("Created migration target pod {TGT_POD}"),
        format!("Created migration target pod prod/{TGT_POD} with uuid x for migration {UID}"),
    ] {
        let e = evidence(
            Some(scheduling(MigrationPhase::Failed)),
            Some(vmi()),
            vec![source_pod()],
            vec![
                vmim_event("SuccessfulCreate", &message, "02:00:01"),
                vmim_event(
                    "migrationTargetPodUnschedulable",
                    "Migration target pod for VMI [prod/db-01] is currently unschedulable.",
                    "02:00:02",
                ),
            ],
        );
        let d = diagnose(&e);
        let target = d.pods.iter().find(|p| p.role == "target").unwrap();
        assert_eq!(target.name.as_deref(), Some(TGT_POD), "{message}");
    }
}

/// One list of connection-error signatures (`strings::CONNECTION_ERRORS`): the same libvirt
/// text is the same cause whether KubeVirt wrote it into `failureReason` (either release
/// line) or a libvirt migrate call returned it to `vmctl migrate --connect`.
#[test]
fn the_same_libvirt_error_is_the_same_cause_through_kubevirt_and_libvirt() {
    use crate::migration::classify;
    let mut cases: Vec<(String, &str)> = strings::CONNECTION_ERRORS
        .iter()
        .map(|sig| {
            (
                format!("operation failed: job 'migration out' failed: {sig}"),
                "connection-failure",
            )
        })
        .collect();
    for (text, want) in [
        (
            "operation failed: Lost connection to destination host",
            "connection-failure",
        ),
        (
            "internal error: End of file while reading data: Input/output error",
            "connection-failure",
        ),
        (
            "Unable to read from monitor: Connection reset by peer",
            "connection-failure",
        ),
        (
            "unable to connect to server at 'node-2:49152': Connection refused",
            "connection-failure",
        ),
        (
            "internal error: qemu unexpectedly closed the monitor",
            "libvirt-error",
        ),
        ("unsupported configuration: foo", "libvirt-error"),
    ] {
        cases.push((text.to_string(), want));
    }
    for (text, want) in &cases {
        assert_eq!(
            classify::failure_cause(text, false),
            *want,
            "libvirt: {text}"
        );
        for reason in [
            format!("Live migration failed virError(Code=1, Domain=10, Message='{text}')"),
            format!("virError(Code=1, Domain=10, Message='{text}')"),
        ] {
            let mut st = streamed("02:00:12", true, Some(&reason));
            st.abort_status = None;
            let d = diagnose(&failed_with(st));
            assert_eq!(d.cause.id, *want, "KubeVirt: {reason}");
        }
    }
}

/// Issue 28: a record keeps the objects its diagnosis was made from; the evidence made again
/// from the journal diagnoses the same, and the columns agree with the diagnosis.
#[test]
fn a_journal_record_diagnoses_again_as_it_was_diagnosed() {
    use crate::model::journal::{RecordOutcome, RecordedBy};
    let mut e = failed_with(streamed(
        "02:58:00",
        true,
        Some(
            "Live migration failed: virError(Code=1, Domain=10, Message='internal error: unable to execute QEMU command 'cont': Failed to get \"write\" lock')",
        ),
    ));
    assert!(
        crate::triage::record::evidence_from_detail(&serde_json::json!({}), e.loops).is_none(),
        "a record without objects has no evidence"
    );
    e.unread.push(Unread {
        source: Source::Events,
        status: Some(403),
        message: "events is forbidden".into(),
    });
    let d = diagnose(&e);
    let r = crate::triage::record::kubevirt_record(
        &e,
        &d,
        RecordedBy::Record,
        at("03:00:05"),
        "prod-east",
        None,
    )
    .expect("a failed migration is recorded");
    assert_eq!(r.id, format!("kubevirt:{UID}"));
    assert_eq!(r.outcome, RecordOutcome::Failed);
    assert_eq!(
        (r.cause.as_str(), r.plane.as_str()),
        (d.cause.id, d.plane.as_str())
    );
    assert_eq!(r.summary, d.summary);
    assert_eq!(r.source_node.as_deref(), Some("node-1"));
    // Through JSON, as the journal stores it.
    let text = serde_json::to_string(&r).unwrap();
    let back: crate::model::journal::MigrationRecord = serde_json::from_str(&text).unwrap();
    let again = crate::triage::record::evidence_from_detail(&back.detail, e.loops)
        .expect("the evidence comes back");
    assert_eq!(again.unread, e.unread);
    let d2 = diagnose(&again);
    assert_eq!(
        serde_json::to_value(&d2).unwrap(),
        serde_json::to_value(&d).unwrap()
    );
    // A migration in flight is not recorded.
    let mut running = e.clone();
    running.migration = Some(vmim("m1", UID, MigrationPhase::Running, STREAMED_FAILED));
    running.vmi.as_mut().unwrap().status.migration_state = None;
    let d3 = diagnose(&running);
    assert!(
        crate::triage::record::kubevirt_record(
            &running,
            &d3,
            RecordedBy::Record,
            at("03:00:05"),
            "c",
            None
        )
        .is_none(),
        "{:?}",
        d3.outcome
    );
}

/// Issue 33 (cold trial): a migration that ended before the hand-off (its target pod never
/// scheduled, no migrationState of its own) had no source node. It left from the node the
/// VMI still runs on — unless something moved the VMI since, and then vmctl does not guess.
#[test]
fn a_migration_that_never_reached_the_hand_off_left_from_the_vmis_node_unless_it_moved() {
    let mut m = scheduling(MigrationPhase::Failed);
    m.status.migration_state = None;
    let mut v = vmi();
    v.metadata.creation_timestamp = Some(t("01:00:00"));
    let source = |e: &Evidence| diagnose(e).migration.and_then(|m| m.source_node.clone());
    let e = evidence(
        Some(m.clone()),
        Some(v.clone()),
        vec![source_pod()],
        Vec::new(),
    );
    assert_eq!(source(&e).as_deref(), Some("node-1"));
    assert_eq!(
        diagnose(&e)
            .pods
            .iter()
            .find(|p| p.role == "source")
            .and_then(|p| p.node.as_deref()),
        Some("node-1")
    );
    // A later migration moved the VMI to node-2: its node says nothing of m1's source.
    let later = vmim(
        "m2",
        "uid-2",
        MigrationPhase::Succeeded,
        &[("Pending", "02:10:00"), ("Succeeded", "02:12:00")],
    );
    let mut moved = v.clone();
    moved.status.node_name = Some("node-2".into());
    let mut e = evidence(Some(m.clone()), Some(moved), Vec::new(), Vec::new());
    e.migrations.push(later);
    assert_eq!(source(&e), None);
    // A VMI younger than the migration was started anew (a restart), maybe elsewhere.
    let mut restarted = v;
    restarted.metadata.creation_timestamp = Some(t("02:30:00"));
    let e = evidence(Some(m), Some(restarted), Vec::new(), Vec::new());
    assert_eq!(source(&e), None);
}
