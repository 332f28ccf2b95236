//! Issue 10, parts 2 and 4, on struct literals: nothing unexplained goes unsaid, `in-progress`
//! never stands next to an unexplained newer Warning, confidence and assumptions; and the
//! failures reported on the KubeVirt issue tracker, one test each.

use k8s_openapi::api::core::v1::{ContainerStateTerminated, ObjectReference};

use super::*;
use crate::triage::objects::pod_name;
use crate::triage::unexplained::{AFTER_THE_END_REASONS, benign_pod_condition, plane_of_phase};

fn pending() -> VirtualMachineInstanceMigration {
    vmim(
        "m1",
        UID,
        MigrationPhase::Pending,
        &[("Pending", "02:00:00")],
    )
}

fn pod_event(pod: &str, reason: &str, message: &str, hms: &str) -> Event {
    event("Pod", pod, &format!("{pod}-uid"), reason, message, hms)
}

fn with_count(mut e: Event, count: i32, last: &str) -> Event {
    e.count = Some(count);
    e.last_timestamp = Some(t(last));
    e
}

fn pod_condition(type_: &str, status: &str, reason: &str, hms: &str) -> PodCondition {
    PodCondition {
        type_: type_.into(),
        status: status.into(),
        reason: Some(reason.into()),
        message: None,
        last_transition_time: Some(t(hms)),
        ..Default::default()
    }
}

/// A migration that is streaming since 02:00:10 (pre-copy), seen at 02:02:10.
fn running() -> Evidence {
    let mut v = vmi();
    let mut st = streamed("02:00:10", false, None);
    st.end_timestamp = None;
    st.completed = false;
    st.abort_status = None;
    v.status.migration_state = Some(st);
    let mut e = evidence(
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
    e.now = at("02:02:10");
    e
}

// ---------------------------------------------------------------- part 2: never confidently wrong

#[test]
fn any_failed_create_of_the_target_pod_is_target_pod_create_failed() {
    // The case: an admission webhook refuses the pod, KubeVirt retries with backoff,
    // and the message lacks virt-controller's "Error creating pod" prefix.
    let msg = "admission webhook \"validate.policy.example.com\" denied the request: pods \"virt-launcher-db-01-\" is forbidden: containers must not run privileged";
    let events = vec![
        vmi_event("FailedCreate", msg, "02:00:01"),
        vmi_event("FailedCreate", msg, "02:00:03"),
        with_count(vmi_event("FailedCreate", msg, "02:00:07"), 5, "02:04:30"),
    ];
    let e = evidence(Some(pending()), Some(vmi()), vec![source_pod()], events);
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        (
            "target-pod-create-failed",
            Plane::ControlPlane,
            Outcome::Blocked
        )
    );
    assert!(
        d.inferred,
        "the target pod is inferred from the reason alone"
    );
    assert_eq!(d.confidence, Confidence::Medium);
    assert!(d.summary.contains("7 attempts so far"), "{}", d.summary);
    assert!(
        d.next_steps.iter().any(|s| s.contains("admission webhook")),
        "{:?}",
        d.next_steps
    );
    // The three events are one warning repeated: quoting the newest explains them all.
    assert!(d.unexplained.is_empty(), "{:?}", d.unexplained);
}

#[test]
fn a_newer_unexplained_warning_turns_pending_in_progress_into_unknown_control_plane() {
    let mut e = evidence(
        Some(pending()),
        Some(vmi()),
        vec![source_pod()],
        vec![vmi_event(
            "FailedAdmission",
            "some controller we do not know refused something",
            "02:05:00",
        )],
    );
    e.now = at("02:06:00");
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        ("unknown", Plane::ControlPlane, Outcome::Blocked)
    );
    assert!(d.inferred);
    assert!(!d.summary.contains("Nothing blocks it"), "{}", d.summary);
    assert!(d.summary.contains("FailedAdmission"), "{}", d.summary);
    assert_eq!(d.confidence, Confidence::Low);
    assert_eq!(d.unexplained.len(), 1, "the warning stays listed");
    assert_eq!(d.unexplained[0].object, "VirtualMachineInstance/prod/db-01");
    assert_eq!(d.unexplained[0].source, "event");
    assert!(
        d.next_steps
            .iter()
            .any(|s| s.contains("kubectl describe vmi -n prod db-01"))
    );
}

#[test]
fn a_newer_unexplained_warning_while_running_points_at_the_data_plane() {
    let mut e = running();
    e.events.push(pod_event(
        SRC_POD,
        "Unhealthy",
        "Readiness probe failed: virt-probe: connection refused",
        "02:01:30",
    ));
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        ("unknown", Plane::DataPlane, Outcome::Blocked)
    );
    assert_eq!(
        d.rule.plane,
        Plane::Unknown,
        "the rule's own plane is unknown"
    );
    assert_eq!(d.unexplained[0].object, format!("Pod/prod/{SRC_POD}"));
}

#[test]
fn an_older_unexplained_warning_leaves_in_progress_but_lowers_confidence() {
    let mut e = running();
    // Before the migration entered Running (02:00:10).
    e.events.push(pod_event(
        TGT_POD,
        "FailedMount",
        "MountVolume.SetUp failed for volume \"hotplug-disks\": transient",
        "02:00:05",
    ));
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.outcome),
        ("in-progress", Outcome::InProgress)
    );
    assert_eq!(d.unexplained.len(), 1);
    assert_eq!(d.unexplained[0].reason, "FailedMount");
    assert_eq!(d.confidence, Confidence::Low);
}

#[test]
fn the_plane_follows_the_phase() {
    assert_eq!(
        plane_of_phase(&MigrationPhase::Pending),
        Plane::ControlPlane
    );
    assert_eq!(
        plane_of_phase(&MigrationPhase::PreparingTarget),
        Plane::ControlPlane
    );
    assert_eq!(plane_of_phase(&MigrationPhase::Running), Plane::DataPlane);
}

#[test]
fn benign_conditions_are_listed_and_tested() {
    let p = source_pod();
    // A finished launcher pod is not ready: ordinary.
    assert!(benign_pod_condition(
        &p,
        "Ready",
        "False",
        Some("PodCompleted")
    ));
    assert!(benign_pod_condition(
        &p,
        "ContainersReady",
        "False",
        Some("PodCompleted")
    ));
    // Starting, with no container problem: ordinary.
    assert!(benign_pod_condition(
        &p,
        "Ready",
        "False",
        Some("ContainersNotReady")
    ));
    // A pod the scheduler cannot place, or one marked for disruption: abnormal.
    assert!(!benign_pod_condition(
        &p,
        "PodScheduled",
        "False",
        Some("Unschedulable")
    ));
    assert!(!benign_pod_condition(
        &p,
        "DisruptionTarget",
        "True",
        Some("EvictionByEvictionAPI")
    ));
    // The kubelet no longer reports (node NotReady): abnormal.
    assert!(!benign_pod_condition(
        &p,
        "Ready",
        "Unknown",
        Some("NodeLost")
    ));
    assert!(benign_pod_condition(&p, "Ready", "True", None));
    assert!(BENIGN_POD_CONDITIONS.contains(&("Ready", "PodCompleted")));
    assert!(BENIGN_VMI_CONDITIONS.contains(&"LiveMigratable"));
    assert!(BENIGN_VMI_CONDITIONS.contains(&"AgentConnected"));
}

#[test]
fn abnormal_conditions_in_the_window_are_unexplained_benign_ones_are_not() {
    let mut e = running();
    if let Some(v) = e.vmi.as_mut() {
        let mut sync = condition(
            "Synchronized",
            "False",
            Some("Synchronizing with the Domain failed."),
            Some("virError(Code=55): Requested operation is not valid"),
        );
        sync.last_transition_time = Some(t("02:01:00"));
        v.status.conditions.push(sync);
        v.status.conditions.push(condition(
            "AgentConnected",
            "False",
            Some("AgentNotConnected"),
            None,
        ));
    }
    if let Some(p) = e.pods.iter_mut().find(|p| pod_name(p) == SRC_POD)
        && let Some(st) = p.status.as_mut()
    {
        st.conditions = Some(vec![
            pod_condition(
                "DisruptionTarget",
                "True",
                "EvictionByEvictionAPI",
                "02:01:10",
            ),
            pod_condition("ContainersReady", "False", "ContainersNotReady", "02:01:10"),
        ]);
    }
    let d = diagnose(&e);
    let listed: Vec<(&str, &str)> = d
        .unexplained
        .iter()
        .map(|u| (u.source.as_str(), u.reason.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            (
                "status.conditions[type=Synchronized]",
                "Synchronized=False, Synchronizing with the Domain failed."
            ),
            (
                "status.conditions[type=DisruptionTarget]",
                "DisruptionTarget=True, EvictionByEvictionAPI"
            ),
        ]
    );
    // Conditions do not overturn in-progress (only newer Warnings do), but they cost confidence.
    assert_eq!((d.cause.id, d.confidence), ("in-progress", Confidence::Low));
}

#[test]
fn warnings_that_restate_the_evidence_are_explained() {
    let reason = "Live migration failed virError(Code=9, Domain=10, Message='operation failed: job 'migration out' failed: Unable to write to socket: Connection reset by peer')";
    let mut e = failed_with(streamed("02:03:00", true, Some(reason)));
    e.events = vec![
        vmi_event(
            "Migrated",
            &format!("VirtualMachineInstance migration uid {UID} failed. reason:{reason}"),
            "02:03:00",
        ),
        vmim_event(
            "FailedMigration",
            "source node reported migration failed",
            "02:03:01",
        ),
    ];
    let d = diagnose(&e);
    assert_eq!(d.cause.id, "connection-failure");
    assert!(d.unexplained.is_empty(), "{:?}", d.unexplained);
    assert_eq!(d.confidence, Confidence::High);
}

#[test]
fn what_could_not_be_read_becomes_an_assumption() {
    let mut e = failed_with(streamed(
        "02:03:00",
        true,
        Some("Live migration stuck for 150 seconds and has been aborted"),
    ));
    e.now = at("02:10:00");
    e.unread.push(Unread {
        source: Source::Events,
        status: Some(403),
        message: "events is forbidden: User \"dev\" cannot list resource \"events\"".into(),
    });
    let d = diagnose(&e);
    assert_eq!(d.cause.id, "no-progress", "status alone decides");
    assert_eq!(d.assumptions.len(), 1, "{:?}", d.assumptions);
    assert!(
        d.assumptions[0].starts_with("Could not read events (forbidden (403)"),
        "{}",
        d.assumptions[0]
    );
    assert_eq!(d.confidence, Confidence::Low);

    // No KubeVirt CR at all: its defaults are assumed.
    let mut e = failed_with(streamed(
        "02:03:00",
        true,
        Some("Live migration stuck for 150 seconds and has been aborted"),
    ));
    e.now = at("02:10:00");
    e.kubevirt = None;
    let d = diagnose(&e);
    assert!(
        d.assumptions
            .iter()
            .any(|a| a.starts_with("No KubeVirt CR was found")),
        "{:?}",
        d.assumptions
    );
}

#[test]
fn events_older_than_an_hour_are_assumed_expired_unless_some_are_there() {
    // The migration began at 02:00; at 03:00 + 30 min nothing before 02:30 is on record.
    let mut e = failed_with(streamed(
        "02:03:00",
        true,
        Some("Live migration stuck for 150 seconds and has been aborted"),
    ));
    e.now = at("03:30:00");
    let d = diagnose(&e);
    assert!(
        d.assumptions
            .iter()
            .any(|a| a.starts_with("Events before 2026-11-29T02:30:00Z have likely expired")),
        "{:?}",
        d.assumptions
    );
    // An event from before the horizon shows that this source keeps them.
    e.events.push(vmim_event(
        "FailedMigration",
        "source node reported migration failed",
        "02:03:01",
    ));
    let d = diagnose(&e);
    assert!(d.assumptions.is_empty(), "{:?}", d.assumptions);
}

#[test]
fn confidence_is_high_from_status_and_medium_when_inferred() {
    let d = diagnose(&failed_with(streamed(
        "02:03:00",
        true,
        Some("Live migration stuck for 150 seconds and has been aborted"),
    )));
    assert_eq!(
        (d.cause.id, d.confidence),
        ("no-progress", Confidence::High)
    );
    // v1.9+: the same abort without a reason is inferred from the budget.
    let d = diagnose(&failed_with(streamed(
        "02:07:40",
        true,
        Some("Live migration has been aborted"),
    )));
    assert_eq!((d.cause.id, d.inferred), ("not-converging", true));
    assert_eq!(d.confidence, Confidence::Medium);
}

// ---------------------------------------------------------------- part 4: reported failures

#[test]
fn postcopy_unsupported_v18_and_v19() {
    // kubevirt#17780: QEMU cannot open userfaultfd on a kernel with unprivileged userfaultfd off.
    let qemu = "internal error: unable to execute QEMU command 'migrate-set-capabilities': Postcopy is not supported: Userfaultfd not available: Operation not permitted";
    for reason in [
        format!("Live migration failed virError(Code=1, Domain=10, Message='{qemu}')"),
        qemu.to_string(),
    ] {
        let d = diagnose(&failed_with(streamed("02:00:11", true, Some(&reason))));
        assert_eq!(
            (d.cause.id, d.plane, d.outcome),
            ("postcopy-unsupported", Plane::DataPlane, Outcome::Failed),
            "{reason}"
        );
        assert!(d.summary.contains("node-2"), "{}", d.summary);
        assert!(
            d.next_steps
                .iter()
                .any(|s| s.contains("sysctl -w vm.unprivileged_userfaultfd=1"))
        );
        assert!(
            d.next_steps
                .iter()
                .any(|s| s.contains("\"allowPostCopy\":false"))
        );
        assert!(has_fact(
            &d,
            "VirtualMachineInstance/",
            "status.migrationState.failureReason"
        ));
        assert_eq!(d.confidence, Confidence::High);
    }
}

#[test]
fn target_pod_on_the_source_node_after_the_timeout() {
    // kubevirt#18946: the target lands on the source node, stalls in PreparingTarget, and
    // virt-controller fails it with the misleading "target pod shutdown" message.
    let mut st = streamed("02:05:10", true, None);
    st.start_timestamp = None;
    st.end_timestamp = None;
    st.target_node = Some("node-1".into());
    st.abort_status = None;
    st.mode = None;
    let mut v = vmi();
    v.status.migration_state = Some(st);
    let m = vmim(
        "m1",
        UID,
        MigrationPhase::Failed,
        &[
            ("Pending", "02:00:00"),
            ("Scheduling", "02:00:01"),
            ("Scheduled", "02:00:06"),
            ("PreparingTarget", "02:00:06"),
            ("Failed", "02:05:10"),
        ],
    );
    let e = evidence(
        Some(m),
        Some(v),
        vec![
            source_pod(),
            pod(TGT_POD, "tgt-uid", Some("node-1"), "Failed", Some(UID)),
        ],
        vec![vmim_event(
            "FailedMigration",
            "Migration failed because target pod shutdown during migration",
            "02:05:10",
        )],
    );
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        (
            "target-on-source-node",
            Plane::ControlPlane,
            Outcome::Failed
        )
    );
    assert!(
        d.summary
            .contains("on node-1, the node the VMI already ran on"),
        "{}",
        d.summary
    );
    assert!(has_fact(
        &d,
        "VirtualMachineInstance/",
        "status.migrationState.targetNode"
    ));
    assert!(d.next_steps.iter().any(|s| s.contains("schedulerName")));
    assert!(d.unexplained.is_empty(), "{:?}", d.unexplained);
}

#[test]
fn target_pod_on_the_source_node_in_flight_is_blocked() {
    let m = vmim(
        "m1",
        UID,
        MigrationPhase::PreparingTarget,
        &[
            ("Pending", "02:00:00"),
            ("Scheduling", "02:00:01"),
            ("Scheduled", "02:00:06"),
            ("PreparingTarget", "02:00:06"),
        ],
    );
    let mut e = evidence(
        Some(m),
        Some(vmi()),
        vec![
            source_pod(),
            pod(TGT_POD, "tgt-uid", Some("node-1"), "Running", Some(UID)),
        ],
        Vec::new(),
    );
    e.now = at("02:02:00");
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.outcome),
        ("target-on-source-node", Outcome::Blocked)
    );
    assert!(has_fact(&d, "Pod/prod/", "spec.nodeName"));
    assert!(
        d.next_steps
            .iter()
            .any(|s| s.contains("kubectl delete vmim -n prod m1"))
    );
}

fn handoff(now: &str) -> Evidence {
    // kubevirt#17203: the stream completed, the guest runs on node-2, the VMIM stays Running
    // because the backend-storage PVC hand-off keeps failing.
    let mut st = streamed("02:01:48", false, None);
    st.abort_status = None;
    st.source_persistent_state_pvc_name = Some("persistent-state-for-db-01-x7k2p".into());
    st.target_persistent_state_pvc_name = Some("persistent-state-for-db-01-q9m4z".into());
    let mut v = vmi();
    v.status.migration_state = Some(st);
    v.status.node_name = Some("node-2".into());
    let mut e = evidence(
        Some(vmim(
            "m1",
            UID,
            MigrationPhase::Running,
            &STREAMED_FAILED[..6],
        )),
        Some(v),
        vec![
            pod(SRC_POD, "src-uid", Some("node-1"), "Succeeded", None),
            pod(TGT_POD, "tgt-uid", Some("node-2"), "Running", Some(UID)),
        ],
        Vec::new(),
    );
    e.now = at(now);
    e
}

#[test]
fn backend_storage_handoff_stuck() {
    let d = diagnose(&handoff("02:30:00"));
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        (
            "backend-storage-handoff-stuck",
            Plane::ControlPlane,
            Outcome::Blocked
        )
    );
    assert!(
        d.summary
            .contains("persistent-state-for-db-01-x7k2p → persistent-state-for-db-01-q9m4z"),
        "{}",
        d.summary
    );
    assert!(d.summary.contains("28m12s ago"), "{}", d.summary);
    assert!(has_fact(
        &d,
        "VirtualMachineInstance/",
        "status.migrationState.targetPersistentStatePVCName"
    ));
    assert!(
        d.next_steps
            .iter()
            .any(|s| s.contains("do not delete the VMIM"))
    );
    // Right after the stream ended the controller is still finalising: not yet stuck.
    let d = diagnose(&handoff("02:02:30"));
    assert_ne!(d.cause.id, "backend-storage-handoff-stuck");
    // A migration being deleted is not stuck in the hand-off: explain and status share
    // triage::loops' one check, which skips it.
    let mut e = handoff("02:30:00");
    if let Some(m) = e.migration.as_mut() {
        m.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            at("02:29:00"),
        ));
    }
    assert_ne!(diagnose(&e).cause.id, "backend-storage-handoff-stuck");
}

#[test]
fn a_launcher_pod_that_shows_completed_but_is_still_running_keeps_the_migration_pending() {
    // kubevirt#12773: kubectl shows the old pod Completed, its phase is still Running, and
    // virt-controller (which counts pods by phase) waits without an event.
    let mut old = pod(
        "virt-launcher-db-01-old",
        "old-uid",
        Some("node-2"),
        "Running",
        None,
    );
    if let Some(st) = old.status.as_mut() {
        st.container_statuses = Some(vec![ContainerStatus {
            name: "compute".into(),
            state: Some(ContainerState {
                terminated: Some(ContainerStateTerminated {
                    exit_code: 0,
                    reason: Some("Completed".into()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }]);
    }
    let mut e = evidence(
        Some(pending()),
        Some(vmi()),
        vec![source_pod(), old],
        Vec::new(),
    );
    e.now = at("02:20:00");
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        (
            "another-migration-in-progress",
            Plane::ControlPlane,
            Outcome::Blocked
        )
    );
    assert!(
        d.summary
            .contains("virt-launcher-db-01-old shows as Completed (all its containers exited) but its phase is still Running"),
        "{}",
        d.summary
    );
    assert!(
        d.summary
            .contains("multiple pods running for vmi prod/db-01"),
        "{}",
        d.summary
    );
    assert!(
        d.next_steps
            .iter()
            .any(|s| s.contains("kubectl delete pod -n prod virt-launcher-db-01-old"))
    );
}

#[test]
fn quota_exceeded_on_an_evacuation() {
    // kubevirt#14957: a drain's evacuation migration cannot create its target pod because the
    // namespace quota counts both launchers; older releases set no VMIM condition.
    let m = evacuation(
        "kubevirt-evacuation-abcde",
        UID,
        MigrationPhase::Pending,
        &[("Pending", "02:00:00")],
    );
    let mut v = vmi();
    v.status.evacuation_node_name = Some("node-1".into());
    let quota = "Error creating pod: pods \"virt-launcher-db-01-\" is forbidden: exceeded quota: tenant-quota, requested: requests.memory=2Gi, used: requests.memory=7Gi, limited: requests.memory=8Gi";
    let mut ev = with_count(vmi_event("FailedCreate", quota, "02:00:01"), 12, "02:09:00");
    ev.involved_object = ObjectReference {
        kind: Some("VirtualMachineInstance".into()),
        name: Some(VMI.into()),
        namespace: Some(NS.into()),
        uid: Some(VMI_UID.into()),
        ..Default::default()
    };
    let mut e = evidence(Some(m), Some(v), vec![source_pod()], vec![ev]);
    e.now = at("02:10:00");
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        (
            "resource-quota-exceeded",
            Plane::ControlPlane,
            Outcome::Blocked
        )
    );
    assert!(
        d.summary.contains("ResourceQuota prod/tenant-quota"),
        "{}",
        d.summary
    );
    assert!(
        d.attention
            .iter()
            .any(|a| a.contains("evacuation migration, created to drain node-1")),
        "{:?}",
        d.attention
    );
    assert!(d.unexplained.is_empty());
}

#[test]
fn cpu_model_mismatch_during_an_upgrade_drain() {
    // An upgraded node advertises other CPU features: the evacuation's target pod requires the
    // source's host-model labels and the scheduler answers "Preemption is not helpful".
    let mut target = unschedulable_target(
        "0/3 nodes are available: 1 node(s) didn't match pod anti-affinity rules, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    );
    if let Some(spec) = target.spec.as_mut() {
        spec.node_selector = Some(BTreeMap::from([
            (
                "cpu-model-migration.node.kubevirt.io/Cascadelake-Server".to_string(),
                "true".to_string(),
            ),
            (
                "cpu-feature.node.kubevirt.io/avx512-vnni".to_string(),
                "true".to_string(),
            ),
        ]));
    }
    let m = evacuation(
        "kubevirt-evacuation-fghij",
        UID,
        MigrationPhase::Scheduling,
        &[("Pending", "02:00:00"), ("Scheduling", "02:00:01")],
    );
    let e = evidence(Some(m), Some(vmi()), vec![source_pod(), target], Vec::new());
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.plane, d.outcome, d.inferred),
        (
            "no-node-for-cpu-model",
            Plane::ControlPlane,
            Outcome::Blocked,
            true
        )
    );
    assert!(d.summary.contains("(Cascadelake-Server)"), "{}", d.summary);
    assert_eq!(d.confidence, Confidence::Medium);
}

#[test]
fn a_max_unavailable_pdb_over_vmi_pods_blocks_the_drain() {
    // kubevirt#18063: the disruption controller needs /scale on the pods' owner (the VMI).
    use k8s_openapi::api::policy::v1::{PodDisruptionBudgetSpec, PodDisruptionBudgetStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as K8sSelector;
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    let mut v = vmi();
    v.spec.eviction_strategy = Some(crate::model::EvictionStrategy::None);
    let mut p = source_pod();
    if let Some(labels) = p.metadata.labels.as_mut() {
        labels.insert("kubevirt.io/vmpool".into(), "db-pool".into());
    }
    let pdb = |max_unavailable: Option<i32>, allowed: i32| crate::model::PodDisruptionBudget {
        metadata: meta("db-pool-pdb", "pdb-uid"),
        spec: Some(PodDisruptionBudgetSpec {
            max_unavailable: max_unavailable.map(IntOrString::Int),
            selector: Some(K8sSelector {
                match_labels: Some(BTreeMap::from([(
                    "kubevirt.io/vmpool".to_string(),
                    "db-pool".to_string(),
                )])),
                ..Default::default()
            }),
            ..Default::default()
        }),
        status: Some(PodDisruptionBudgetStatus {
            disruptions_allowed: Some(allowed),
            expected_pods: Some(0),
            ..Default::default()
        }),
    };
    let mut e = evidence(None, Some(v.clone()), vec![p.clone()], Vec::new());
    e.pdbs = vec![pdb(Some(1), 0)];
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        ("pdb-blocks-eviction", Plane::ControlPlane, Outcome::Blocked)
    );
    assert!(d.summary.contains("maxUnavailable"), "{}", d.summary);
    assert!(has_fact(
        &d,
        "PodDisruptionBudget/prod/db-pool-pdb",
        "spec.maxUnavailable"
    ));
    assert!(d.next_steps.iter().any(|s| s.contains("minAvailable")));

    // With LiveMigrate KubeVirt intercepts the eviction and migrates: the PDB does not matter.
    let mut migrating = v.clone();
    migrating.spec.eviction_strategy = Some(crate::model::EvictionStrategy::LiveMigrate);
    let mut e = evidence(None, Some(migrating), vec![p.clone()], Vec::new());
    e.pdbs = vec![pdb(Some(1), 0)];
    assert_eq!(diagnose(&e).cause, "no-migration");

    // A PDB with minAvailable that allows a disruption is no obstacle.
    let mut e = evidence(None, Some(v.clone()), vec![p.clone()], Vec::new());
    e.pdbs = vec![pdb(None, 1)];
    assert_eq!(diagnose(&e).cause, "no-migration");

    // Edited into maxUnavailable (generation 2) after it synced at 1: failSafe writes
    // SyncFailed and never advances observedGeneration, so it refuses for good.
    let mut never = pdb(Some(1), 1);
    never.metadata.generation = Some(2);
    if let Some(st) = never.status.as_mut() {
        st.observed_generation = Some(1);
        st.conditions =
            Some(
                vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
            type_: "DisruptionAllowed".into(),
            status: "False".into(),
            reason: "SyncFailed".into(),
            message: "virtualmachineinstances.kubevirt.io does not implement the scale subresource"
                .into(),
            last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            ),
            observed_generation: Some(1),
        }],
            );
    }
    let mut e = evidence(None, Some(v), vec![p], Vec::new());
    e.pdbs = vec![never];
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.outcome),
        ("pdb-blocks-eviction", Outcome::Blocked)
    );
    assert!(d.summary.contains("never catches up"), "{}", d.summary);
    assert!(d.summary.contains("for good"), "{}", d.summary);
    assert!(has_fact(
        &d,
        "PodDisruptionBudget/prod/db-pool-pdb",
        "status.observedGeneration"
    ));
}

#[test]
fn explain_reads_pdbs_as_the_eviction_api_does() {
    // The same policy::pdb semantics as plan-drain: `selector: {}` selects every pod of the
    // namespace, a null selector none, and two PDBs over one pod answer 500.
    use k8s_openapi::api::policy::v1::{PodDisruptionBudgetSpec, PodDisruptionBudgetStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as K8sSelector;
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    let mut v = vmi();
    v.spec.eviction_strategy = Some(crate::model::EvictionStrategy::None);
    let mut p = source_pod();
    if let Some(s) = p.status.as_mut() {
        s.conditions = Some(vec![k8s_openapi::api::core::v1::PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            ..Default::default()
        }]);
    }
    let pdb = |name: &str, selector: Option<K8sSelector>, allowed: i32| {
        crate::model::PodDisruptionBudget {
            metadata: meta(name, &format!("{name}-uid")),
            spec: Some(PodDisruptionBudgetSpec {
                min_available: Some(IntOrString::Int(1)),
                selector,
                ..Default::default()
            }),
            status: Some(PodDisruptionBudgetStatus {
                disruptions_allowed: Some(allowed),
                current_healthy: Some(1),
                desired_healthy: Some(1),
                expected_pods: Some(1),
                ..Default::default()
            }),
        }
    };
    let everything = || Some(K8sSelector::default());

    let mut e = evidence(None, Some(v.clone()), vec![p.clone()], Vec::new());
    e.pdbs = vec![pdb("all-pods", everything(), 0)];
    let d = diagnose(&e);
    assert_eq!(d.cause.id, "pdb-blocks-eviction", "{}", d.summary);
    assert!(
        d.summary
            .contains("needs 1 healthy pods and has 1 currently"),
        "{}",
        d.summary
    );

    // A null selector selects nothing.
    let mut e = evidence(None, Some(v.clone()), vec![p.clone()], Vec::new());
    e.pdbs = vec![pdb("nothing", None, 0)];
    assert_eq!(diagnose(&e).cause, "no-migration");

    // Two PDBs, both allowing a disruption: still never evicted (500).
    let mut e = evidence(None, Some(v), vec![p], Vec::new());
    e.pdbs = vec![pdb("a", everything(), 1), pdb("b", everything(), 1)];
    let d = diagnose(&e);
    assert_eq!(d.cause.id, "pdb-blocks-eviction", "{}", d.summary);
    assert!(
        d.summary.contains("more than one PodDisruptionBudget"),
        "{}",
        d.summary
    );
}

#[test]
fn queued_cannot_stand_next_to_a_newer_unexplained_warning_either() {
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
    let mut e = evidence(
        Some(me.clone()),
        Some(vmi()),
        vec![source_pod()],
        vec![pod_event(
            SRC_POD,
            "Unhealthy",
            "Readiness probe failed: virt-probe: connection refused",
            "02:59:00",
        )],
    );
    e.load = Some(MigrationLoad {
        migrations: vec![me, running("r1", "a"), running("r2", "b")],
        vmis_on_node: vec!["prod/a".into(), "prod/b".into(), "prod/db-01".into()],
    });
    // Queued by the numbers, but a warning nothing explains is newer than the last phase change.
    let d = diagnose(&e);
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        ("unknown", Plane::ControlPlane, Outcome::Blocked)
    );
    // Without the warning it is queued, as before.
    e.events.clear();
    assert_eq!(diagnose(&e).cause, "queued-parallel-limit");
}

#[test]
fn the_backoff_after_a_finished_migration_belongs_to_the_next_attempt() {
    let reason = "Live migration stuck for 150 seconds and has been aborted";
    let mut e = failed_with(streamed("02:03:00", true, Some(reason)));
    e.now = at("02:10:00");
    // KubeVirt's backoff before its next evacuation attempt lands in this one's window.
    e.events.push(vmi_event(
        "MigrationBackoff",
        "backoff migrating vmi prod/db-01",
        "02:07:43",
    ));
    let d = diagnose(&e);
    assert!(d.unexplained.is_empty(), "{:?}", d.unexplained);
    assert!(AFTER_THE_END_REASONS.contains(&"MigrationBackoff"));
    // The same warning while this migration is still open is not benign.
    let mut e = evidence(Some(pending()), Some(vmi()), vec![source_pod()], Vec::new());
    e.now = at("02:10:00");
    e.events.push(vmi_event(
        "SyncFailed",
        "server error. command SyncVMI failed: LibvirtError",
        "02:05:00",
    ));
    let d = diagnose(&e);
    assert_eq!(d.unexplained.len(), 1);
}
