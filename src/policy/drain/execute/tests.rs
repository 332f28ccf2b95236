//! The drain's rules over scripted answers and watch states.

use super::*;
use crate::policy::drain::evict::PodSelection;

const NS: &str = "prod";

fn launcher(vmi: &str) -> PodToEvict {
    PodToEvict {
        namespace: NS.into(),
        name: format!("virt-launcher-{vmi}-abcde"),
        node: "node-1".into(),
        vmi: Some(vmi.into()),
        finished: false,
    }
}

fn plain(name: &str) -> PodToEvict {
    PodToEvict {
        namespace: NS.into(),
        name: name.into(),
        node: "node-1".into(),
        vmi: None,
        finished: false,
    }
}

fn key(name: &str) -> PodKey {
    (NS.into(), name.into())
}

fn run(pods: Vec<PodToEvict>, actions: &[(&str, Action)], settings: Settings) -> DrainRun {
    let selection = PodSelection {
        evict: pods,
        ..PodSelection::default()
    };
    let actions = actions.iter().map(|(v, a)| (key(v), *a)).collect();
    DrainRun::new(&selection, &actions, settings)
}

fn names(due: &[PodToEvict]) -> Vec<&str> {
    due.iter().map(|p| p.name.as_str()).collect()
}

fn kinds(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn world(pods: &[(&str, &str)], vms: &[(&str, VmSeen)]) -> World {
    World {
        pods: pods
            .iter()
            .map(|(p, ph)| (key(p), ph.to_string()))
            .collect(),
        vms: vms.iter().map(|(v, s)| (key(v), s.clone())).collect(),
    }
}

fn on(node: &str, marked: bool, migration: Option<(&str, &str)>) -> VmSeen {
    VmSeen {
        exists: true,
        node: Some(node.into()),
        phase: "Running".into(),
        uid: Some("uid".into()),
        evacuation_node: marked.then(|| "node-1".to_string()),
        migration: migration.map(|(name, phase)| MigrationSeen {
            name: name.into(),
            phase: phase.into(),
            source_node: Some("node-1".into()),
            target_node: Some("node-2".into()),
            evacuation: true,
            failure: (phase == "Failed").then(|| "target pod unschedulable".to_string()),
            ..MigrationSeen::default()
        }),
        stuck: None,
    }
}

#[test]
fn a_vm_is_evacuated_by_kubevirt_then_its_finished_pod_is_evicted() {
    let db = launcher("db-01");
    let mut r = run(
        vec![db.clone(), plain("web-1")],
        &[("db-01", Action::LiveMigrate)],
        Settings::default(),
    );
    assert_eq!(names(&r.due(0)), [db.name.as_str(), "web-1"]);

    let ev = r.answered(&db.key(), &Answer::EvacuationStarted, 0);
    assert_eq!(kinds(&ev), ["evacuation-started"]);
    assert_eq!(
        kinds(&r.answered(&key("web-1"), &Answer::Evicted, 0)),
        ["evicted"]
    );
    // While KubeVirt migrates it, vmctl does not ask again (it would be "in progress").
    assert!(r.due(60_000).is_empty());
    assert_eq!(r.outcome(), None);

    let w = world(
        &[(&db.name, "Running")],
        &[(
            "db-01",
            on("node-1", true, Some(("kubevirt-evacuation-x", "Running"))),
        )],
    );
    let ev = r.observe(&w, 1_000);
    assert_eq!(kinds(&ev), ["pod-gone", "migration"]);
    // The same state again says nothing.
    assert!(r.observe(&w, 2_000).is_empty());

    // Migrated: the VMI runs on node-2, the source pod completed: evicted at once.
    let w = world(
        &[(&db.name, "Succeeded")],
        &[(
            "db-01",
            on(
                "node-2",
                false,
                Some(("kubevirt-evacuation-x", "Succeeded")),
            ),
        )],
    );
    let ev = r.observe(&w, 3_000);
    assert_eq!(kinds(&ev), ["migration", "moved"]);
    assert_eq!(names(&r.due(3_000)), [db.name.as_str()]);
    r.answered(&db.key(), &Answer::Evicted, 3_000);
    assert_eq!(r.outcome(), None);
    let ev = r.observe(&world(&[], &[("db-01", on("node-2", false, None))]), 4_000);
    assert_eq!(kinds(&ev), ["pod-gone"]);
    assert_eq!(r.outcome(), Some(Outcome::Drained));
    let a = r.account();
    assert_eq!(a.moved.len(), 1);
    assert_eq!(
        (a.moved[0].from.as_str(), a.moved[0].to.as_str()),
        ("node-1", "node-2")
    );
    assert_eq!((a.counts.pods_gone, a.pods_left), (2, 0));
}

#[test]
fn a_budget_refusal_is_shown_once_and_asked_again_after_the_retry() {
    let mut r = run(vec![plain("web-1")], &[], Settings::default());
    let budget = Answer::Budget {
        pdb: Some("web".into()),
        message: "The disruption budget web needs 2 healthy pods and has 2 currently".into(),
    };
    let ev = r.answered(&key("web-1"), &budget, 0);
    assert_eq!(kinds(&ev), ["waiting"]);
    assert!(r.due(4_999).is_empty());
    assert_eq!(names(&r.due(5_000)), ["web-1"]);
    assert!(r.answered(&key("web-1"), &budget, 5_000).is_empty());
    assert_eq!(r.outcome(), None);
}

#[test]
fn a_vm_that_can_never_leave_blocks_at_once_and_the_rest_still_goes() {
    let stuck = launcher("stuck-01");
    let mut r = run(
        vec![stuck.clone(), plain("web-1")],
        &[("stuck-01", Action::BlocksDrain)],
        Settings::default(),
    );
    let ev = r.answered(
        &stuck.key(),
        &Answer::NotMigratable {
            message:
                "VMI stuck-01 is configured with an eviction strategy but is not live-migratable"
                    .into(),
        },
        0,
    );
    assert_eq!(kinds(&ev), ["blocked"]);
    assert_eq!(names(&r.due(10_000)), ["web-1"]);
    assert_eq!(r.outcome(), None);
    r.answered(&key("web-1"), &Answer::Evicted, 0);
    r.observe(&world(&[(&stuck.name, "Running")], &[]), 1_000);
    assert_eq!(r.outcome(), Some(Outcome::Blocked));
    let a = r.account();
    assert_eq!(a.blocked.len(), 1);
    assert_eq!(a.blocked[0].reason, "not-live-migratable");
    assert_eq!(a.pods_left, 1);
}

#[test]
fn max_parallel_holds_back_the_next_vm_until_one_has_left() {
    let (a, b) = (launcher("a"), launcher("b"));
    let mut r = run(
        vec![a.clone(), b.clone()],
        &[("a", Action::LiveMigrate), ("b", Action::LiveMigrate)],
        Settings {
            max_parallel: Some(1),
            ..Settings::default()
        },
    );
    assert_eq!(names(&r.due(0)), [a.name.as_str()]);
    r.answered(&a.key(), &Answer::EvacuationStarted, 0);
    r.observe(
        &world(
            &[(&a.name, "Running"), (&b.name, "Running")],
            &[
                ("a", on("node-1", true, None)),
                ("b", on("node-1", false, None)),
            ],
        ),
        100,
    );
    assert!(r.due(10_000).is_empty(), "{:?}", names(&r.due(10_000)));
    r.observe(
        &world(
            &[(&a.name, "Succeeded"), (&b.name, "Running")],
            &[
                ("a", on("node-2", false, None)),
                ("b", on("node-1", false, None)),
            ],
        ),
        200,
    );
    assert_eq!(names(&r.due(10_000)), [a.name.as_str(), b.name.as_str()]);
}

#[test]
fn kubevirts_retries_are_followed_then_named_a_blocker() {
    let db = launcher("db-01");
    let mut r = run(
        vec![db.clone()],
        &[("db-01", Action::LiveMigrate)],
        Settings::default(),
    );
    r.answered(&db.key(), &Answer::EvacuationStarted, 0);
    let pods = [(db.name.as_str(), "Running")];
    for (i, name) in ["m1", "m2", "m3"].iter().enumerate() {
        let ev = r.observe(
            &world(
                &pods,
                &[("db-01", on("node-1", true, Some((name, "Failed"))))],
            ),
            i as u64 * 1000,
        );
        let failed = ev
            .iter()
            .find_map(|e| match e {
                Event::MigrationFailed {
                    failures, retry, ..
                } => Some((*failures, *retry)),
                _ => None,
            })
            .unwrap();
        assert_eq!(failed, (i as u32 + 1, i < 2));
        assert_eq!(kinds(&ev).contains(&"blocked".to_string()), i == 2);
    }
    assert_eq!(r.outcome(), Some(Outcome::Blocked));
    assert_eq!(r.account().blocked[0].reason, "migration-keeps-failing");
}

#[test]
fn an_evacuation_loop_from_before_the_drain_blocks_at_its_next_failure() {
    let db = launcher("db-01");
    let mut r = run(
        vec![db.clone()],
        &[("db-01", Action::LiveMigrate)],
        Settings::default(),
    );
    r.answered(&db.key(), &Answer::EvacuationInProgress, 0);
    let pods = [(db.name.as_str(), "Running")];
    let looping = |m: Option<(&str, &str)>| VmSeen {
        stuck: Some(StuckSeen {
            kind: crate::triage::loops::LoopKind::EvacuationLoop,
            message: "KubeVirt has tried 3 times ... Way out: vmctl abort --evacuation vm/db-01"
                .into(),
            way_out: vec!["vmctl abort --evacuation vm/db-01".into()],
        }),
        ..on("node-1", true, m)
    };
    // Still trying: vmctl waits for this attempt.
    let ev = r.observe(
        &world(&pods, &[("db-01", looping(Some(("m4", "Pending"))))]),
        0,
    );
    assert!(!kinds(&ev).contains(&"blocked".to_string()), "{ev:?}");
    // Its first failure seen during the drain ends the wait, with the loop's words.
    let ev = r.observe(
        &world(&pods, &[("db-01", looping(Some(("m4", "Failed"))))]),
        1000,
    );
    let failed = ev.iter().find_map(|e| match e {
        Event::MigrationFailed {
            failures, retry, ..
        } => Some((*failures, *retry)),
        _ => None,
    });
    assert_eq!(failed, Some((1, false)));
    assert_eq!(r.outcome(), Some(Outcome::Blocked));
    let b = &r.account().blocked[0];
    assert_eq!(b.reason, "evacuation-loop");
    // The loop's own words, not the generic migration-keeps-failing text (which also names
    // the abort command).
    assert_eq!(
        b.message,
        "KubeVirt has tried 3 times ... Way out: vmctl abort --evacuation vm/db-01"
    );
}

#[test]
fn a_decentralized_migration_stuck_waiting_for_its_peer_blocks_at_once() {
    let db = launcher("db-01");
    let mut r = run(
        vec![db.clone()],
        &[("db-01", Action::LiveMigrate)],
        Settings::default(),
    );
    r.answered(&db.key(), &Answer::EvacuationStarted, 0);
    let pods = [(db.name.as_str(), "Running")];
    let seen = VmSeen {
        stuck: Some(StuckSeen {
            kind: crate::triage::loops::LoopKind::DecentralizedSyncStuck,
            message: "db-01-send has been in Synchronizing for 40m00s".into(),
            way_out: vec!["To give up: kubectl delete vmim db-01-send".into()],
        }),
        ..on("node-1", true, None)
    };
    let ev = r.observe(&world(&pods, &[("db-01", seen)]), 0);
    assert!(kinds(&ev).contains(&"blocked".to_string()), "{ev:?}");
    assert_eq!(r.outcome(), Some(Outcome::Blocked));
    assert_eq!(r.account().blocked[0].reason, "decentralized-sync-stuck");
    // The summary offers the loop's own way out for it, not an evacuation's.
    let loops = r.loops();
    assert_eq!(loops.len(), 1);
    assert_eq!(loops[0].0, key("db-01"));
    assert_eq!(
        loops[0].1.kind,
        crate::triage::loops::LoopKind::DecentralizedSyncStuck
    );
}

#[test]
fn a_shut_down_vm_is_stopped_and_said_where_it_comes_back() {
    let old = launcher("batch-01");
    let mut r = run(
        vec![old.clone()],
        &[("batch-01", Action::Shutdown)],
        Settings::default(),
    );
    r.answered(&old.key(), &Answer::Evicted, 0);
    let ev = r.observe(
        &world(&[], &[("batch-01", on("node-3", false, None))]),
        1_000,
    );
    assert_eq!(kinds(&ev), ["pod-gone", "stopped"]);
    assert!(matches!(&ev[1], Event::Stopped { back_on: Some(n), .. } if n == "node-3"));
    assert_eq!(r.outcome(), Some(Outcome::Drained));
    assert_eq!(r.account().stopped, ["prod/batch-01"]);
}

#[test]
fn an_error_that_waiting_cannot_fix_is_a_blocker() {
    let mut r = run(vec![plain("web-1")], &[], Settings::default());
    let ev = r.answered(&key("web-1"), &Answer::MoreThanOnePdb, 0);
    assert_eq!(kinds(&ev), ["blocked"]);
    let ev = run(vec![plain("x")], &[], Settings::default()).answered(
        &key("x"),
        &Answer::Failed {
            status: 400,
            message: "bad".into(),
        },
        0,
    );
    assert_eq!(kinds(&ev), ["blocked"]);
}

#[test]
fn a_vm_held_back_is_never_evicted_and_blocks_from_the_start() {
    let big = launcher("big-01");
    let mut r = run(
        vec![big.clone(), plain("web-1")],
        &[("big-01", Action::NoTarget)],
        Settings::default(),
    );
    let ev = r.hold_back(
        &key("big-01"),
        "no-target",
        "no node can take a 64 GiB target pod",
    );
    assert_eq!(kinds(&ev), ["blocked"]);
    assert_eq!(names(&r.due(0)), ["web-1"]);
    r.answered(&key("web-1"), &Answer::Evicted, 0);
    r.observe(&world(&[(&big.name, "Running")], &[]), 1_000);
    assert_eq!(r.outcome(), Some(Outcome::Blocked));
    assert_eq!(r.account().blocked[0].reason, "no-target");
}

/// A pod on node-1 of a VMI that is elsewhere (node-2).
fn pod_of(vmi: &str, name: &str, finished: bool) -> PodToEvict {
    PodToEvict {
        namespace: NS.into(),
        name: name.into(),
        node: "node-1".into(),
        vmi: Some(vmi.into()),
        finished,
    }
}

fn start(vms: &[(&str, &str)]) -> BTreeMap<PodKey, VmStart> {
    vms.iter()
        .map(|(v, n)| {
            (
                key(v),
                VmStart {
                    node: Some(n.to_string()),
                    uid: Some("uid".into()),
                },
            )
        })
        .collect()
}

/// A VM in post-copy *into* the drained node (source node-2, target node-1): its target
/// pod is the drain's pod, but the VM never was on node-1 when the drain began. It has not
/// moved; the drain names the pod and the migration it waits for, past the point of no
/// return. Once the migration lands it on node-1 it is the drain's to move, and then moved.
#[test]
fn a_vm_in_post_copy_into_the_node_has_not_moved_and_its_target_pod_is_named() {
    let target = pod_of("mail-01", "virt-launcher-mail-01-t1", false);
    let mut r = run(vec![target.clone()], &[], Settings::default());
    r.starting_from(&start(&[("mail-01", "node-2")]));
    let incoming = |phase: &str, node: &str| VmSeen {
        migration: Some(MigrationSeen {
            name: "mail-01-migrate".into(),
            phase: phase.into(),
            source_node: Some("node-2".into()),
            target_node: Some("node-1".into()),
            target_pod: Some(target.name.clone()),
            mode: Some("PostCopy".into()),
            ..MigrationSeen::default()
        }),
        ..on(node, false, None)
    };
    let w = world(
        &[(&target.name, "Running")],
        &[("mail-01", incoming("Running", "node-2"))],
    );
    let ev = r.observe(&w, 0);
    assert_eq!(kinds(&ev), ["migration"], "{ev:?}");
    assert!(
        matches!(&ev[0], Event::Migration { incoming: true, .. }),
        "{ev:?}"
    );
    let ev = r.answered(&target.key(), &Answer::TargetPod, 100);
    let Event::Waiting { message, .. } = &ev[0] else {
        panic!("{ev:?}")
    };
    assert_eq!(
        message,
        "target pod of post-copy migration mail-01-migrate into node-1 (node-2 → node-1), past the point of no return (an abort now loses the guest): it goes when the migration ends"
    );
    // Seen again and again: never "moved", and not a VM of the drain's count.
    for t in 1..4 {
        let ev = r.observe(&w, t * 1000);
        assert!(!kinds(&ev).contains(&"moved".to_string()), "{ev:?}");
    }
    let a = r.account();
    assert!(a.moved.is_empty(), "{a:?}");
    assert_eq!((a.counts.vms_total, a.vms_left), (0, 0));
    assert_eq!(a.counts.migrations_in_flight, 1);
    // Every migration the count holds is listed: this one, post-copy, into node-1.
    assert_eq!(a.migrating.len(), 1, "{a:?}");
    assert_eq!(a.migrating[0].vmi, "mail-01");
    assert!(a.migrating[0].post_copy, "{a:?}");
    assert_eq!(a.migrating[0].into.as_deref(), Some("node-1"));
    let waits = r.waiting_for();
    assert_eq!(waits.len(), 1);
    assert_eq!(waits[0].reason, "target-pod");
    assert_eq!(waits[0].pod, target.name);
    assert_eq!(waits[0].migration.as_deref(), Some("mail-01-migrate"));
    assert!(waits[0].message.contains("point of no return"), "{waits:?}");

    // The migration ends: the VM now runs on node-1 (it came onto it), then KubeVirt
    // evacuates it and it moves node-1 → node-3.
    let w = world(
        &[(&target.name, "Running")],
        &[("mail-01", incoming("Succeeded", "node-1"))],
    );
    let ev = r.observe(&w, 5_000);
    assert_eq!(kinds(&ev), ["arrived", "migration"], "{ev:?}");
    assert!(r.account().moved.is_empty());
    assert_eq!(r.counts().vms_total, 1);
    // Asked again after kubectl's 5 s: now it is the VM's own pod.
    assert_eq!(names(&r.due(5_100)), [target.name.as_str()]);
    r.answered(&target.key(), &Answer::EvacuationStarted, 5_100);
    let w = world(
        &[(&target.name, "Succeeded")],
        &[(
            "mail-01",
            VmSeen {
                migration: Some(MigrationSeen {
                    name: "kubevirt-evacuation-m".into(),
                    phase: "Succeeded".into(),
                    source_node: Some("node-1".into()),
                    target_node: Some("node-3".into()),
                    evacuation: true,
                    ..MigrationSeen::default()
                }),
                ..on("node-3", false, None)
            },
        )],
    );
    let ev = r.observe(&w, 6_000);
    let moved = ev.iter().find_map(|e| match e {
        Event::Moved { from, to, .. } => Some((from.clone(), to.clone())),
        _ => None,
    });
    assert_eq!(moved, Some(("node-1".into(), "node-3".into())), "{ev:?}");
    // The summary says how it came onto node-1.
    let a = r.account();
    assert_eq!(a.moved[0].came_by.as_deref(), Some("mail-01-migrate"));
}

/// A VM that never was on the node, only an old finished pod of it (the target pod of an
/// earlier migration, Succeeded): the pod is deleted, the VM is never said to have moved
/// (and never with an empty source).
#[test]
fn a_vm_with_only_an_old_finished_pod_on_the_node_never_moved() {
    let old = pod_of("app-01", "virt-launcher-app-01-old", true);
    for with_start in [true, false] {
        let mut r = run(vec![old.clone()], &[], Settings::default());
        if with_start {
            r.starting_from(&start(&[("app-01", "node-2")]));
        }
        let ev = r.observe(
            &world(
                &[(&old.name, "Succeeded")],
                &[("app-01", on("node-2", false, None))],
            ),
            0,
        );
        assert!(ev.is_empty(), "{ev:?}");
        assert_eq!(names(&r.due(0)), [old.name.as_str()]);
        r.answered(&old.key(), &Answer::Evicted, 0);
        let ev = r.observe(&world(&[], &[("app-01", on("node-2", false, None))]), 1_000);
        assert_eq!(kinds(&ev), ["pod-gone"]);
        assert_eq!(r.outcome(), Some(Outcome::Drained));
        let a = r.account();
        assert!(a.moved.is_empty(), "{a:?}");
        assert_eq!(a.counts.vms_total, 0);
    }
}

/// KubeVirt's retries are one chain: attempt 2 names attempt 1's failure and the backoff
/// that holds it, and a failed attempt followed by a successful retry is a VM that moved.
#[test]
fn a_failed_attempt_then_a_successful_retry_is_a_vm_that_moved_at_attempt_2() {
    let db = launcher("db-01");
    let mut r = run(
        vec![db.clone()],
        &[("db-01", Action::LiveMigrate)],
        Settings::default(),
    );
    r.starting_from(&start(&[("db-01", "node-1")]));
    r.answered(&db.key(), &Answer::EvacuationStarted, 0);
    let pods = [(db.name.as_str(), "Running")];
    r.observe(
        &world(
            &pods,
            &[("db-01", on("node-1", true, Some(("e1", "Running"))))],
        ),
        0,
    );
    let ev = r.observe(
        &world(
            &pods,
            &[("db-01", on("node-1", true, Some(("e1", "Failed"))))],
        ),
        1_000,
    );
    assert_eq!(kinds(&ev), ["migration-failed"]);
    let mut held = on("node-1", true, Some(("e2", "Pending")));
    if let Some(m) = held.migration.as_mut() {
        m.backoff_until = Some("2026-12-06T05:00:21Z".into());
        m.backoff_seconds = Some(20);
    }
    let ev = r.observe(&world(&pods, &[("db-01", held)]), 2_000);
    let Event::Migration {
        attempt,
        previous_failure,
        backoff_until,
        ..
    } = &ev[0]
    else {
        panic!("{ev:?}")
    };
    assert_eq!(*attempt, 2);
    assert_eq!(
        previous_failure.as_deref(),
        Some("target pod unschedulable")
    );
    assert_eq!(backoff_until.as_deref(), Some("2026-12-06T05:00:21Z"));
    let waits = r.waiting_for();
    assert_eq!(waits[0].reason, "backoff");
    assert_eq!(
        waits[0].message,
        "attempt 2, migration e2 (attempt 1 failed: target pod unschedulable), is held by KubeVirt's backoff (20 s) until 05:00:21 UTC"
    );
    let ev = r.observe(
        &world(
            &[(db.name.as_str(), "Succeeded")],
            &[("db-01", on("node-2", false, Some(("e2", "Succeeded"))))],
        ),
        3_000,
    );
    let moved = ev.iter().find_map(|e| match e {
        Event::Moved {
            attempt, migration, ..
        } => Some((*attempt, migration.clone())),
        _ => None,
    });
    assert_eq!(moved, Some((2, Some("e2".into()))), "{ev:?}");
    let a = r.account();
    assert_eq!(a.moved.len(), 1);
    assert_eq!((a.moved[0].attempt, a.counts.vms_moved), (2, 1));
    assert!(a.blocked.is_empty());
}

/// Evictions accepted, pods gone and migrations in flight are counted apart: an accepted
/// eviction is not a pod gone, and "drained" waits for the pod to go.
#[test]
fn accepted_evictions_pods_gone_and_migrations_in_flight_are_counted_apart() {
    let (web, db) = (plain("web-1"), launcher("db-01"));
    let mut r = run(
        vec![web.clone(), db.clone()],
        &[("db-01", Action::LiveMigrate)],
        Settings::default(),
    );
    r.starting_from(&start(&[("db-01", "node-1")]));
    r.answered(&web.key(), &Answer::Evicted, 0);
    r.answered(&db.key(), &Answer::EvacuationStarted, 0);
    let w = world(
        &[(&web.name, "Running"), (&db.name, "Running")],
        &[("db-01", on("node-1", true, Some(("e1", "Running"))))],
    );
    r.observe(&w, 1_000);
    let c = r.counts();
    assert_eq!(
        (
            c.pods_total,
            c.evictions_accepted,
            c.pods_gone,
            c.migrations_in_flight,
            c.vms_total
        ),
        (2, 1, 0, 1, 1)
    );
    assert_eq!(r.outcome(), None, "accepted is not gone");
    let reasons: Vec<(String, String)> = r
        .waiting_for()
        .into_iter()
        .map(|w| (w.pod, w.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            (db.name.clone(), "migrating".to_string()),
            ("web-1".to_string(), "terminating".to_string())
        ]
    );
}

/// A VMI of the same name but another uid (its VM started a new one elsewhere) did not
/// move: the one that was on the node stopped.
#[test]
fn a_vmi_replaced_by_a_new_one_elsewhere_is_not_a_move() {
    let db = launcher("db-01");
    let mut r = run(
        vec![db.clone()],
        &[("db-01", Action::LiveMigrate)],
        Settings::default(),
    );
    r.starting_from(&start(&[("db-01", "node-1")]));
    let fresh = VmSeen {
        uid: Some("uid-2".into()),
        ..on("node-2", false, None)
    };
    let ev = r.observe(&world(&[], &[("db-01", fresh)]), 1_000);
    assert_eq!(kinds(&ev), ["pod-gone", "stopped"], "{ev:?}");
    let a = r.account();
    assert!(a.moved.is_empty());
    assert_eq!(a.stopped, ["prod/db-01"]);
}

/// The summary's moves are read back from the API: one the VMI does not show is not said.
#[test]
fn a_move_the_api_does_not_show_is_not_claimed() {
    let mut a = Account::default();
    for (vmi, to) in [("a", "node-2"), ("b", "node-3")] {
        a.moved.push(Moved {
            namespace: NS.into(),
            vmi: vmi.into(),
            from: "node-1".into(),
            to: to.into(),
            migration: None,
            attempt: 1,
            came_by: None,
            predicted: None,
            as_predicted: None,
        });
    }
    let now: BTreeMap<PodKey, Option<VmStart>> = [
        (
            key("a"),
            Some(VmStart {
                node: Some("node-2".into()),
                uid: None,
            }),
        ),
        (
            key("b"),
            Some(VmStart {
                node: Some("node-1".into()),
                uid: None,
            }),
        ),
    ]
    .into_iter()
    .collect();
    let a = DrainRun::confirmed(a, &now);
    assert_eq!(a.moved.len(), 1);
    assert_eq!(a.moved[0].vmi, "a");
    assert_eq!(a.vms_left, 1);
}

/// The mark cleared because the migration succeeded (virt-handler clears it after any
/// successful migration) is no cancel: the old pod is a finished migration's source, waited
/// for, and "moved" follows the migration's Succeeded, as the drill on the simulator shows
/// (its VMI's watch shows the new node before the VMIM's shows the end).
#[test]
fn a_mark_cleared_by_a_successful_migration_is_no_cancel_and_moved_follows_succeeded() {
    let db = launcher("db-01");
    let mut r = run(
        vec![db.clone()],
        &[("db-01", Action::LiveMigrate)],
        Settings::default(),
    );
    r.starting_from(&start(&[("db-01", "node-1")]));
    r.due(0);
    r.answered(&db.key(), &Answer::EvacuationStarted, 0);
    let w = world(
        &[(&db.name, "Running")],
        &[(
            "db-01",
            on("node-1", true, Some(("kubevirt-evacuation-x", "Running"))),
        )],
    );
    assert_eq!(kinds(&r.observe(&w, 1_000)), ["migration"]);

    // The VMI runs on node-2, no longer marked; the VMIM's watch still says Running.
    let w = world(
        &[(&db.name, "Running")],
        &[(
            "db-01",
            on("node-2", false, Some(("kubevirt-evacuation-x", "Running"))),
        )],
    );
    let ev = r.observe(&w, 2_000);
    assert!(!kinds(&ev).contains(&"moved".to_string()), "{ev:?}");
    assert!(
        r.due(60_000).is_empty(),
        "not evicted again as if cancelled"
    );
    let waits = r.waiting_for();
    assert_eq!(waits.len(), 1);
    assert!(!waits[0].message.contains("cancelled"), "{waits:?}");
    assert_eq!(r.outcome(), None);

    // The migration reports Succeeded: its line first, then the move.
    let w = world(
        &[(&db.name, "Running")],
        &[(
            "db-01",
            on(
                "node-2",
                false,
                Some(("kubevirt-evacuation-x", "Succeeded")),
            ),
        )],
    );
    assert_eq!(kinds(&r.observe(&w, 3_000)), ["migration", "moved"]);
    // The old pod, still terminating, is the source pod of the finished migration.
    let waits = r.waiting_for();
    assert_eq!(waits[0].reason, "source-pod", "{waits:?}");
    assert!(!waits[0].message.contains("cancelled"), "{waits:?}");
    assert!(
        waits[0].message.contains("kubevirt-evacuation-x"),
        "{waits:?}"
    );
    assert!(r.due(60_000).is_empty());
    // Once finished it is evicted at once.
    let w = world(
        &[(&db.name, "Succeeded")],
        &[(
            "db-01",
            on(
                "node-2",
                false,
                Some(("kubevirt-evacuation-x", "Succeeded")),
            ),
        )],
    );
    r.observe(&w, 4_000);
    assert_eq!(names(&r.due(4_000)), [db.name.as_str()]);
}

/// A mark cleared while the VMI stays on the node with no migration that succeeded
/// (virtctl evacuate-cancel) is a cancel: said so, and the eviction is asked again.
#[test]
fn a_mark_cleared_while_the_vmi_stays_is_a_cancel() {
    let db = launcher("db-01");
    let mut r = run(
        vec![db.clone()],
        &[("db-01", Action::LiveMigrate)],
        Settings::default(),
    );
    r.starting_from(&start(&[("db-01", "node-1")]));
    r.due(0);
    r.answered(&db.key(), &Answer::EvacuationStarted, 0);
    let w = world(
        &[(&db.name, "Running")],
        &[("db-01", on("node-1", true, None))],
    );
    r.observe(&w, 1_000);
    let w = world(
        &[(&db.name, "Running")],
        &[("db-01", on("node-1", false, None))],
    );
    r.observe(&w, 2_000);
    assert_eq!(names(&r.due(2_000)), [db.name.as_str()]);
    assert!(r.waiting_for()[0].message.contains("cancelled"));
}
