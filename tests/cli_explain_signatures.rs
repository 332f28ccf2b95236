//! `vmctl explain` on the 2026 failure signatures (issue 25 §2): one fixture cluster per new
//! cause under tests/fixtures/explain/signatures, each built from the text a real report
//! quotes (the fixture's header names it). Checks cause, plane, outcome, the fields the
//! evidence rests on, the exit code, and every output format.

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

const NOW: &str = "2026-12-03T10:00:00Z";

fn fixture(case: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/explain/signatures")
        .join(case)
        .display()
        .to_string()
}

fn explain(case: &str, target: &str, format: &str) -> (std::process::Output, String) {
    let out = vmctl([
        "--from",
        &fixture(case),
        "--now",
        NOW,
        "explain",
        "-n",
        "prod",
        target,
        "-o",
        format,
        "--no-color",
    ]);
    let text = stdout(&out);
    (out, text)
}

fn json(case: &str, target: &str) -> (Value, i32) {
    let (out, text) = explain(case, target, "json");
    let v: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{case}: {e}\n{text}\n{}", stderr(&out)));
    (v, out.status.code().unwrap_or(-1))
}

/// (case, target, cause, plane, outcome, inferred, evidence fields that must be there)
type Case = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    &'static [&'static str],
);

const CASES: &[Case] = &[
    (
        "cpu-missing-features",
        "kubevirt-migrate-vm-cpu-m",
        "cpu-feature-mismatch",
        "data-plane",
        "failed",
        false,
        &[
            "status.migrationState.failureReason",
            "spec.domain.cpu.model",
            "spec.containers[compute].image",
        ],
    ),
    (
        "cpu-extra-ht",
        "kubevirt-migrate-vm-cpu-e",
        "cpu-feature-mismatch",
        "data-plane",
        "failed",
        false,
        &[
            "status.migrationState.failureReason",
            "spec.domain.cpu.model",
        ],
    ),
    (
        "device-state-virtio-net",
        "kubevirt-migrate-vm-devic",
        "device-state-incompatible",
        "data-plane",
        "failed",
        false,
        &[
            "status.migrationState.failureReason",
            "spec.containers[compute].image",
        ],
    ),
    (
        "unsafe-no-shared-storage",
        "kubevirt-migrate-vm-unsaf",
        "unsafe-migration",
        "data-plane",
        "failed",
        false,
        &[
            "status.migrationState.failureReason",
            "status.migrationState.migrationConfiguration.unsafeMigrationOverride",
        ],
    ),
    (
        "storage-io-error",
        "kubevirt-migrate-vm-stora",
        "storage-io-error",
        "data-plane",
        "failed",
        false,
        &["status.migrationState.failureReason"],
    ),
    (
        "abort-failed",
        "kubevirt-migrate-vm-ab0rt",
        "abort-failed",
        "data-plane",
        "blocked",
        false,
        &[
            "status.migrationState.abortStatus",
            "status.migrationState.abortRequested",
            "status.conditions[type=migrationAbortRequested]",
            "metadata.deletionTimestamp",
        ],
    ),
    (
        "target-prep-network",
        "kubevirt-migrate-vm-pr3p7",
        "target-preparation-failed",
        "data-plane",
        "blocked",
        false,
        &["message", "status.phase"],
    ),
    // A v1.10 generic abort whose VMIM was deleted before the end: a cancel.
    (
        "cancel-by-deletion",
        "kubevirt-migrate-vm-c4ncl",
        "aborted-by-request",
        "none",
        "aborted",
        false,
        &[
            "metadata.deletionTimestamp",
            "status.migrationState.failureReason",
        ],
    ),
    // The VMIM is gone and nothing records a request: inferred, and says so.
    (
        "generic-abort-vmim-gone",
        "desk-06",
        "no-progress",
        "data-plane",
        "failed",
        true,
        &[
            "status.migrationState.failureReason",
            "status.migrationState.abortRequested",
        ],
    ),
];

#[test]
fn each_signature_fixture_gets_its_cause_plane_evidence_and_exit_code() {
    for &(case, target, cause, plane, outcome, inferred, fields) in CASES {
        let (r, code) = json(case, target);
        assert_eq!(
            (
                r["cause"].as_str(),
                r["plane"].as_str(),
                r["outcome"].as_str(),
                r["inferred"].as_bool()
            ),
            (Some(cause), Some(plane), Some(outcome), Some(inferred)),
            "{case}: {}",
            r["summary"]
        );
        assert_eq!(r["rule"]["id"].as_str(), Some(cause), "{case}");
        // Every failed, aborted or blocked migration is a finding: exit 1.
        assert_eq!(code, 1, "{case}");
        let evidence = r["evidence"].as_array().cloned().unwrap_or_default();
        for field in fields {
            assert!(
                evidence.iter().any(|f| f["field"].as_str() == Some(*field)),
                "{case}: no evidence field {field}: {evidence:#?}"
            );
        }
        assert!(
            !r["nextSteps"].as_array().is_none_or(|s| s.is_empty()),
            "{case}"
        );
    }
}

#[test]
fn the_summaries_name_what_an_operator_acts_on() {
    let summary = |case: &str, target: &str| {
        json(case, target).0["summary"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let s = summary("cpu-missing-features", "kubevirt-migrate-vm-cpu-m");
    assert!(s.contains("lacks waitpkg") && s.contains("node-2"), "{s}");
    assert!(s.contains("different images"), "{s}");
    let s = summary("cpu-extra-ht", "kubevirt-migrate-vm-cpu-e");
    assert!(s.contains("adds ht"), "{s}");
    let s = summary("unsafe-no-shared-storage", "kubevirt-migrate-vm-unsaf");
    assert!(
        s.contains("\"Migration without shared storage is unsafe\""),
        "{s}"
    );
    let s = summary("abort-failed", "kubevirt-migrate-vm-ab0rt");
    assert!(
        s.starts_with("An abort was requested") && s.contains("30 s"),
        "{s}"
    );
    let s = summary("generic-abort-vmim-gone", "desk-06");
    assert!(s.contains("cannot be told"), "{s}");
    let s = summary("target-prep-network", "kubevirt-migrate-vm-pr3p7");
    assert!(
        s.contains("Link not found") && s.contains("14 times"),
        "{s}"
    );
}

#[test]
fn every_output_format_carries_the_new_causes() {
    for &(case, target, cause, ..) in CASES {
        for format in ["table", "wide", "yaml"] {
            let (out, text) = explain(case, target, format);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{case} {format}: {}",
                stderr(&out)
            );
            assert!(text.contains(cause), "{case} {format}:\n{text}");
            assert!(
                !text.contains('\u{1b}'),
                "{case} {format}: escape in output"
            );
        }
    }
}

/// main (PR #18303): the stall detector's factors arrive as Quantities; `1200m` reads 1.2.
#[test]
fn stall_detector_factors_in_milli_units_read_as_numbers() {
    let (r, code) = json("stall-abort-milli", "kubevirt-migrate-vm-st4ll");
    assert_eq!(code, 1);
    assert_eq!(r["cause"].as_str(), Some("no-progress"), "{}", r["summary"]);
    let evidence = r["evidence"].as_array().cloned().unwrap_or_default();
    let settings = evidence
        .iter()
        .find(|f| {
            f["field"]
                .as_str()
                .is_some_and(|x| x.ends_with("experimental.stallDetector"))
        })
        .unwrap_or_else(|| panic!("{evidence:#?}"));
    let value = settings["value"].as_str().unwrap_or_default();
    assert!(
        value.contains("precopyPossibleFactor 1.2") && value.contains("completionTimeoutFactor 3"),
        "{value}"
    );
    // The stall detector's own reason is in the launcher log: the step says how to read it,
    // including the fallback to the legacy checks.
    let steps = r["nextSteps"].to_string();
    assert!(
        steps.contains("falling back to legacy stall handling")
            && steps.contains("aborting migration"),
        "{steps}"
    );
}
