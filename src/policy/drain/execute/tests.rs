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
    assert_eq!((a.pods_gone, a.pods_left), (2, 0));
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
