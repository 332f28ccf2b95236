//! The 2026 failure signatures (issue 25 §2): each new cause from its real text, the same
//! cause through the libvirt classifier, user cancel against monitor abort, and hostile or
//! garbled variants that must never produce a confident new cause.

use super::*;
use crate::migration::classify;
use crate::triage::strings::{Signature, signature};

/// Real failure texts, as reported (see each rule file for the source).
const CPU_MISSING: &str = "Live migration failed error encountered during MigrateToURI3 libvirt api call: virError(Code=9, Domain=31, Message='operation failed: guest CPU doesn't match specification: missing features: waitpkg')";
const CPU_MISSING_MANY: &str = "virError(Code=9, Domain=31, Message='operation failed: guest CPU doesn't match specification: missing features: vmx-rdrand-exit,vmx-vmfunc,vmx-rdseed-exit,vmx-posted-intr')";
const CPU_EXTRA: &str = "virError(Code=9, Domain=31, Message='operation failed: guest CPU doesn't match specification: extra features: ht')";
const DEVICE: &str = "virError(Code=9, Domain=10, Message='operation failed: job 'migration in' failed: load of migration failed: Operation not permitted')";
const DEVICE_QEMU: &str = "internal error: QEMU unexpectedly closed the monitor (vm='prod_web-07'): 2025-12-16T22:06:36.625034Z qemu-kvm: Features 0x1c0010130afffaf unsupported. Allowed features: 0x10179bfffef\n2025-12-16T22:06:36.625083Z qemu-kvm: Failed to load virtio-net:virtio\n2025-12-16T22:06:36.625087Z qemu-kvm: error while loading state for instance 0x0 of device '0000:00:02.0:00.0/virtio-net'";
const UNSAFE: &str = "Live migration failed error encountered during MigrateToURI3 libvirt api call: virError(Code=81, Domain=10, Message='Unsafe migration: Migration without shared storage is unsafe')";
const IO_ERROR: &str = "virError(Code=9, Domain=10, Message='operation failed: job 'migration out' failed due to I/O error')";
const POSTCOPY_PHASE: &str = "virError(Code=9, Domain=10, Message='operation failed: job 'migration out' failed in post-copy phase')";

/// (text, cause) for every signature: the KubeVirt rule and the libvirt classifier agree.
const CASES: &[(&str, &str)] = &[
    (CPU_MISSING, "cpu-feature-mismatch"),
    (CPU_MISSING_MANY, "cpu-feature-mismatch"),
    (CPU_EXTRA, "cpu-feature-mismatch"),
    (DEVICE, "device-state-incompatible"),
    (DEVICE_QEMU, "device-state-incompatible"),
    (UNSAFE, "unsafe-migration"),
    (IO_ERROR, "storage-io-error"),
];

const NEW_CAUSES: &[&str] = &[
    "cpu-feature-mismatch",
    "device-state-incompatible",
    "unsafe-migration",
    "storage-io-error",
    "abort-failed",
    "target-preparation-failed",
];

fn failed(reason: &str) -> Diagnosis {
    let mut st = streamed("02:00:12", true, Some(reason));
    st.abort_status = None;
    diagnose(&failed_with(st))
}

#[test]
fn the_signatures_are_read_from_their_real_texts() {
    assert_eq!(
        signature(CPU_MISSING_MANY),
        Some(Signature::CpuMismatch {
            missing: vec![
                "vmx-rdrand-exit",
                "vmx-vmfunc",
                "vmx-rdseed-exit",
                "vmx-posted-intr"
            ],
            extra: vec![],
        })
    );
    assert_eq!(
        signature(CPU_EXTRA),
        Some(Signature::CpuMismatch {
            missing: vec![],
            extra: vec!["ht"],
        })
    );
    // libvirt's combined form (cpu_x86.c: "extra features: %s, missing features: %s").
    assert_eq!(
        signature(
            "operation failed: guest CPU doesn't match specification: extra features: ht, missing features: pdcm,arch-capabilities"
        ),
        Some(Signature::CpuMismatch {
            missing: vec!["pdcm", "arch-capabilities"],
            extra: vec!["ht"],
        })
    );
    assert_eq!(
        signature(DEVICE_QEMU),
        Some(Signature::DeviceState {
            device: Some("virtio-net:virtio"),
            features: Some(("1c0010130afffaf", "10179bfffef")),
        })
    );
    assert_eq!(
        signature(DEVICE),
        Some(Signature::DeviceState {
            device: None,
            features: None
        })
    );
    assert_eq!(
        signature(UNSAFE),
        Some(Signature::Unsafe {
            why: "Migration without shared storage is unsafe"
        })
    );
    assert_eq!(
        signature(IO_ERROR),
        Some(Signature::StorageIo {
            job: "migration out"
        })
    );
    assert_eq!(signature(POSTCOPY_PHASE), Some(Signature::PostcopyIo));
    assert_eq!(
        signature(
            "2026-12-01T10:00:00Z qemu-kvm: Detected IO failure for postcopy. Migration paused."
        ),
        Some(Signature::PostcopyIo)
    );
}

#[test]
fn each_signature_is_its_cause_through_kubevirt_and_through_libvirt() {
    for (text, want) in CASES {
        let d = failed(text);
        assert_eq!(d.cause.id, *want, "KubeVirt: {text}");
        assert_eq!(d.plane, Plane::DataPlane, "{text}");
        assert_eq!(d.outcome, Outcome::Failed, "{text}");
        assert!(!d.inferred, "{text}");
        assert!(
            has_fact(
                &d,
                "VirtualMachineInstance/",
                "status.migrationState.failureReason"
            ),
            "{text}: {:?}",
            d.evidence
        );
        // The libvirt path: the error of the migrate call, as libvirt wrote it.
        let libvirt = strings::libvirt_message(text);
        assert_eq!(
            classify::failure_cause(libvirt, false),
            *want,
            "libvirt: {libvirt}"
        );
    }
    // The post-copy texts map onto the existing cause on both paths.
    assert_eq!(
        classify::failure_cause(strings::libvirt_message(POSTCOPY_PHASE), false),
        "postcopy-failed"
    );
}

#[test]
fn a_cpu_mismatch_names_the_features_the_nodes_and_an_upgrade() {
    let mut st = streamed("02:00:12", true, Some(CPU_MISSING));
    st.abort_status = None;
    let mut ev = failed_with(st);
    for (p, image) in ev
        .pods
        .iter_mut()
        .zip(["virt-launcher:v1.2.1", "virt-launcher:v1.2.2"])
    {
        if let Some(spec) = p.spec.as_mut() {
            spec.containers = vec![k8s_openapi::api::core::v1::Container {
                name: "compute".into(),
                image: Some(image.into()),
                ..Default::default()
            }];
        }
    }
    let d = diagnose(&ev);
    assert_eq!(d.cause.id, "cpu-feature-mismatch");
    assert!(d.summary.contains("lacks waitpkg"), "{}", d.summary);
    assert!(d.summary.contains("node-2") && d.summary.contains("node-1"));
    assert!(d.summary.contains("different images"), "{}", d.summary);
    assert!(has_fact(&d, "Pod/", "spec.containers[compute].image"));
    assert!(has_fact(
        &d,
        "VirtualMachineInstance/",
        "spec.domain.cpu.model"
    ));
    assert!(
        d.next_steps
            .iter()
            .any(|s| s.contains("virtctl restart db-01")),
        "{:?}",
        d.next_steps
    );
    assert!(
        d.next_steps
            .iter()
            .any(|s| s.contains("cpu-feature.node.kubevirt.io/waitpkg=true"))
    );
}

#[test]
fn a_libvirt_post_copy_failure_text_is_postcopy_failed_even_without_the_mode() {
    let mut st = streamed("02:00:12", true, Some(POSTCOPY_PHASE));
    st.abort_status = None;
    st.mode = Some(MigrationMode::PreCopy);
    let d = diagnose(&failed_with(st));
    assert_eq!(d.cause.id, "postcopy-failed", "{}", d.summary);
    assert!(!has_fact(
        &d,
        "VirtualMachineInstance/",
        "status.migrationState.mode"
    ));
}

// ---------------------------------------------------------------- hostile and garbled text

/// Variants of a real signature that are not the signature: truncated into the anchor,
/// another case, control bytes, the signature quoted inside an unrelated message.
fn hostile_variants(text: &str, anchor: usize) -> Vec<String> {
    let message = strings::libvirt_message(text).to_string();
    let mut out = vec![
        text.to_uppercase(),
        text.to_lowercase(),
        message.replace("operation failed", "Operation Failed"),
        message.replace("Unsafe migration", "unsafe migration"),
        format!("dial tcp 10.0.0.1:49152: user note says \"{message}\""),
        format!("Live migration failed: a comment: {message}"),
        format!("\u{1b}[31m{message}"),
        message.replacen(' ', "\u{0}", 1),
        message.replacen(':', ":\u{7}", 1),
    ];
    // Every truncation inside the anchor (the fixed part of the printf format).
    for (i, _) in message.char_indices().take(anchor) {
        out.push(message[..i].to_string());
    }
    out
}

#[test]
fn hostile_or_garbled_text_never_yields_a_confident_new_cause() {
    let anchor = |text: &str| {
        let m = strings::libvirt_message(text);
        if m.starts_with(strings::CPU_MISMATCH) {
            strings::CPU_MISMATCH.len()
        } else if m.starts_with(strings::LOAD_REFUSED) {
            strings::LOAD_REFUSED.len()
        } else if m.starts_with(strings::UNSAFE_MIGRATION) {
            strings::UNSAFE_MIGRATION.len()
        } else if m.starts_with("internal error: QEMU") {
            60
        } else {
            m.len()
        }
    };
    for (text, want) in CASES {
        for variant in hostile_variants(text, anchor(text)) {
            // A variant that left the signature whole is the signature (the replacement did
            // not apply, or QEMU's all-lower-case line survived lower-casing).
            let intact = variant == strings::libvirt_message(text)
                || (strings::QEMU_CLOSED_MONITOR
                    .iter()
                    .any(|q| variant.contains(q))
                    && variant.contains(strings::QEMU_LOADING_STATE));
            if intact {
                continue;
            }
            let sig = signature(&variant);
            assert!(sig.is_none(), "{want}: {variant:?} read as {sig:?}");
            let d = failed(&variant);
            assert!(
                !NEW_CAUSES.contains(&d.cause.id),
                "{want}: {variant:?} gave {} ({})",
                d.cause.id,
                d.summary
            );
            assert_ne!(
                classify::failure_cause(&variant, false),
                *want,
                "libvirt: {variant:?}"
            );
            // Unknown text is quoted with what was read: the failureReason is evidence.
            if !variant.trim().is_empty() {
                assert!(
                    has_fact(
                        &d,
                        "VirtualMachineInstance/",
                        "status.migrationState.failureReason"
                    ) || d.cause.id == "unknown",
                    "{variant:?}: {:?}",
                    d.evidence
                );
            }
        }
    }
    // A feature list with something that is not a feature name is not read as one.
    for bad in [
        "operation failed: guest CPU doesn't match specification: missing features: ",
        "operation failed: guest CPU doesn't match specification: missing features: a b",
        "operation failed: guest CPU doesn't match specification: missing features: pdcm;rm -rf",
        "operation failed: guest CPU doesn't match specification: some features: pdcm",
        "operation failed: job 'migration out' failed due to I/O error and more",
        "operation failed: job '' failed due to I/O error",
        "Unsafe migration:    ",
        "job 'migration in' failed: load of migration failed: Invalid argument",
    ] {
        assert_eq!(signature(bad), None, "{bad:?}");
        let d = failed(bad);
        assert!(
            !NEW_CAUSES.contains(&d.cause.id),
            "{bad:?} gave {}",
            d.cause.id
        );
    }
    // A stream that broke (not a device refusing its state) is not device-state.
    assert_eq!(
        signature(
            "operation failed: job 'migration in' failed: load of migration failed: Invalid argument"
        ),
        None
    );
}

#[test]
fn the_libvirt_error_rule_quotes_what_it_could_not_name() {
    let text = "virError(Code=1, Domain=10, Message='operation failed: guest CPU doesn''t match: \u{1b}[2J')";
    let d = failed(text);
    assert_eq!(d.cause.id, "libvirt-error");
    assert!(
        d.summary.contains("\u{1b}[2J"),
        "JSON keeps it; renderers escape it"
    );
}

// ---------------------------------------------------------------- who asked for the abort

fn generic_abort(requested: bool) -> MigrationState {
    let mut st = streamed("02:02:55", true, Some(strings::ABORTED_V19));
    st.abort_requested = requested;
    st
}

#[test]
fn a_generic_abort_is_a_cancel_when_the_vmim_was_deleted_before_the_end() {
    let mut ev = failed_with(generic_abort(false));
    if let Some(m) = ev.migration.as_mut() {
        m.metadata.deletion_timestamp = Some(t("02:02:53"));
    }
    ev.migrations = ev.migration.iter().cloned().collect();
    let d = diagnose(&ev);
    assert_eq!(d.cause.id, "aborted-by-request", "{}", d.summary);
    assert!(has_fact(
        &d,
        "VirtualMachineInstanceMigration/",
        "metadata.deletionTimestamp"
    ));
    // Deleted after the end: clean-up, the monitor's abort stays inferred.
    if let Some(m) = ev.migration.as_mut() {
        m.metadata.deletion_timestamp = Some(t("02:30:00"));
    }
    ev.migrations = ev.migration.iter().cloned().collect();
    let d = diagnose(&ev);
    assert_eq!(
        (d.cause.id, d.inferred),
        ("no-progress", true),
        "{}",
        d.summary
    );
    assert!(
        d.evidence
            .iter()
            .any(|f| f.field == "metadata.deletionTimestamp" && f.value.contains("clean-up")),
        "{:?}",
        d.evidence
    );
    assert!(!d.summary.contains("cannot be told"), "{}", d.summary);
}

#[test]
fn a_generic_abort_without_the_vmim_says_a_cancel_cannot_be_ruled_out() {
    let mut ev = failed_with(generic_abort(false));
    ev.migration = None;
    ev.migrations.clear();
    let d = diagnose(&ev);
    assert_eq!(
        (d.cause.id, d.inferred),
        ("no-progress", true),
        "{}",
        d.summary
    );
    assert!(d.summary.contains("cannot be told"), "{}", d.summary);
    // The VMI's abortRequested survives the VMIM: then it is a cancel, said for sure.
    let mut ev = failed_with(generic_abort(true));
    ev.migration = None;
    ev.migrations.clear();
    let d = diagnose(&ev);
    assert_eq!((d.cause.id, d.inferred), ("aborted-by-request", false));
}

#[test]
fn an_abort_that_failed_says_who_asked() {
    // The user's abort failed and the migration failed anyway.
    let mut st = streamed(
        "02:03:00",
        true,
        Some("virError(Code=1, Domain=10, Message='internal error: something')"),
    );
    st.abort_status = Some(AbortStatus::Failed);
    st.abort_requested = true;
    let d = diagnose(&failed_with(st.clone()));
    assert_eq!((d.cause.id, d.plane), ("abort-failed", Plane::DataPlane));
    assert!(
        d.summary.starts_with("An abort was requested"),
        "{}",
        d.summary
    );
    assert!(has_fact(
        &d,
        "VirtualMachineInstance/",
        "status.migrationState.abortStatus"
    ));
    assert!(!d.inferred);
    // Nobody asked, the VMIM is there: the monitor's abort failed.
    st.abort_requested = false;
    let d = diagnose(&failed_with(st.clone()));
    assert_eq!(d.cause.id, "abort-failed");
    assert!(
        d.summary.starts_with("The migration monitor"),
        "{}",
        d.summary
    );
    // The VMIM is gone and the VMI records no request: cannot tell, inferred.
    let mut ev = failed_with(st);
    ev.migration = None;
    ev.migrations.clear();
    let d = diagnose(&ev);
    assert_eq!((d.cause.id, d.inferred), ("abort-failed", true));
    assert!(d.summary.contains("cannot be told"), "{}", d.summary);
}

// ---------------------------------------------------------------- target preparation

#[test]
fn a_target_that_virt_handler_cannot_prepare_blocks_the_migration() {
    let m = vmim(
        "m1",
        UID,
        MigrationPhase::PreparingTarget,
        &[
            ("Pending", "02:00:00"),
            ("Scheduling", "02:00:01"),
            ("Scheduled", "02:00:08"),
            ("PreparingTarget", "02:00:08"),
        ],
    );
    let mut v = vmi();
    v.status.migration_state = Some(MigrationState {
        migration_uid: Some(UID.into()),
        source_node: Some("node-1".into()),
        target_node: Some("node-2".into()),
        target_pod: Some(TGT_POD.into()),
        ..Default::default()
    });
    let mut wrapped = vmi_event(
        "SyncFailed",
        "failed to configure vmi network: failed to configure vmi network for migration target: Link not found",
        "02:05:00",
    );
    wrapped.count = Some(14);
    let ev = evidence(
        Some(m.clone()),
        Some(v.clone()),
        vec![
            source_pod(),
            pod(TGT_POD, "tgt-uid", Some("node-2"), "Running", Some(UID)),
        ],
        vec![wrapped],
    );
    let d = diagnose(&ev);
    assert_eq!(
        (d.cause.id, d.plane, d.outcome),
        (
            "target-preparation-failed",
            Plane::DataPlane,
            Outcome::Blocked
        ),
        "{}",
        d.summary
    );
    assert!(
        d.summary.contains(
            "\"failed to configure vmi network for migration target: Link not found\" (14 times)"
        ),
        "{}",
        d.summary
    );
    assert!(d.evidence.iter().any(|f| f.object.starts_with("Event/")));
    // A SyncFailed that is not a target-preparation error (the post-copy one) is not it,
    // and neither is an old one from before this migration.
    for e in [
        vmi_event("SyncFailed", strings::POSTCOPY_IRRECOVERABLE, "02:05:00"),
        vmi_event(
            "SyncFailed",
            "syncing migration target failed: x",
            "01:00:00",
        ),
    ] {
        let ev = evidence(
            Some(m.clone()),
            Some(v.clone()),
            vec![
                source_pod(),
                pod(TGT_POD, "tgt-uid", Some("node-2"), "Running", Some(UID)),
            ],
            vec![e],
        );
        assert_ne!(diagnose(&ev).cause.id, "target-preparation-failed");
    }
}
