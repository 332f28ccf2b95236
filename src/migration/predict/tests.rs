use super::*;

const MIB_U: u64 = 1 << 20;

fn lab(dirty_mib: u64, bandwidth_mib: u64) -> Inputs {
    Inputs {
        memory_bytes: 256 * MIB_U,
        dirty_rate_bps: Some(dirty_mib * MIB_U),
        dirty_rate_source: DirtyRateSource::MeasuredBeforeStart,
        dirty_rate_is_lower_bound: true,
        bandwidth_bps: Some(bandwidth_mib * MIB_U),
        bandwidth_source: BandwidthSource::Cap,
        initial_downtime_ms: 300,
        max_downtime_ms: 900,
        budget_secs: 150,
        allow_postcopy: false,
        allow_auto_converge: false,
        allow_pause: false,
        flavour: Flavour::Libvirt,
    }
}

fn flags(p: &Prediction) -> Vec<String> {
    p.alternatives.iter().map(|a| a.flags.join(" ")).collect()
}

#[test]
fn a_slow_dirtier_converges_in_geometric_passes() {
    // 256 MiB at 16 MiB/s: pass 1 16 s; pass 2 starts with 64 MiB (4 s), pass 3 with
    // 16 MiB (1 s), pass 4 with 4 MiB <= 16 MiB/s x 300 ms: the switchover (0.25 s).
    let p = predict(&lab(4, 16));
    assert_eq!(p.converges, Some(true));
    assert_eq!(p.completes_by, Some(Ending::PreCopy));
    assert_eq!(p.passes, Some(4));
    assert_eq!(p.predicted_seconds, Some(21.3));
    assert_eq!(p.downtime_ms, Some(250));
    assert!(p.alternatives.is_empty());
    assert!(
        p.summary.starts_with("converges in ~4 passes, ~21 s"),
        "{}",
        p.summary
    );
    // The lab measured 18.3 s: within 25 %.
    let measured = 18.3;
    assert!((21.3 - measured) / measured < 0.25);
}

#[test]
fn a_guest_dirtying_faster_than_the_link_never_converges_and_gets_alternatives() {
    let p = predict(&lab(64, 32));
    assert_eq!(p.converges, Some(false));
    assert_eq!(p.completes, Some(false));
    assert!(
        p.summary.contains("dirties 200% of what is sent"),
        "{}",
        p.summary
    );
    assert_eq!(
        flags(&p),
        [
            "--allow-postcopy",
            "--allow-auto-converge",
            "--bandwidth 72",
            "--max-downtime 8000",
            "--allow-pause"
        ]
    );
    // Post-copy: pass 1 (8 s) then the whole memory once more (it all was dirtied).
    let post = &p.alternatives[0];
    assert_eq!((post.predicted_seconds, post.downtime_ms), (16.0, 0));
    assert!(post.note.contains("loses the guest"));
    let pause = &p.alternatives[4];
    assert_eq!(pause.completes_by, Ending::Pause);
    assert_eq!(pause.downtime_ms, 8000);
    // The bandwidth found is the least that converges.
    let at = |mib: u64| {
        precopy_with_ceiling(&lab(64, 32), 256.0 * MIB, 64.0 * MIB, mib as f64 * MIB).is_ok()
    };
    assert!(at(72) && !at(71));
}

#[test]
fn with_postcopy_allowed_it_completes_by_post_copy() {
    let mut i = lab(64, 32);
    i.allow_postcopy = true;
    let p = predict(&i);
    assert_eq!(
        (p.converges, p.completes, p.completes_by),
        (Some(false), Some(true), Some(Ending::PostCopy))
    );
    assert_eq!(p.predicted_seconds, Some(16.0));
    assert!(!flags(&p).contains(&"--allow-postcopy".to_string()));
}

#[test]
fn auto_converge_throttles_until_the_dirty_set_fits() {
    let mut i = lab(64, 32);
    i.allow_auto_converge = true;
    let p = predict(&i);
    assert_eq!(p.completes_by, Some(Ending::AutoConverge), "{}", p.summary);
    let secs = p.predicted_seconds.unwrap_or_default();
    assert!(secs > 16.0 && secs < 150.0, "{secs}");
    // A guest that dirties far beyond the link cannot be throttled enough within the budget.
    let mut i = lab(6400, 32);
    i.allow_auto_converge = true;
    assert_eq!(predict(&i).completes, Some(false));
}

#[test]
fn a_converging_guest_past_its_budget_is_too_slow() {
    // 8 GiB at 32 MiB/s: pass 1 alone is 256 s, past the 9 x 150 s budget? No: 1350 s. At
    // 4 MiB/s it is.
    let mut i = lab(3, 4);
    i.memory_bytes = 8 << 30;
    i.budget_secs = 1350;
    let p = predict(&i);
    assert_eq!(p.converges, Some(false));
    assert!(
        p.summary.contains("past the 1350 s budget"),
        "{}",
        p.summary
    );
    i.budget_secs = 0;
    assert_eq!(predict(&i).converges, Some(true));
}

#[test]
fn the_ceiling_is_used_when_the_initial_downtime_is_not_enough() {
    // 16 MiB/s x 300 ms = 4.8 MiB; at 900 ms 14.4 MiB. Pass 2 starts with 2 x 8 = 16 MiB ...
    let mut i = lab(1, 16);
    i.memory_bytes = 128 * MIB_U;
    let p = predict(&i);
    assert_eq!(p.converges, Some(true));
    let run = precopy(128.0 * MIB, MIB, 16.0 * MIB, 300, 150).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(p.passes, Some(run.passes));
}

#[test]
fn unknown_rates_say_what_would_be_needed() {
    let mut i = lab(4, 16);
    i.bandwidth_bps = None;
    i.bandwidth_source = BandwidthSource::Unknown;
    let p = predict(&i);
    assert_eq!(p.converges, None);
    let need = p.needs_bandwidth_bps.unwrap_or_default();
    assert!(need > 4 * MIB_U && need <= 16 * MIB_U, "{need}");
    assert!(
        p.summary.contains("if it carries at least"),
        "{}",
        p.summary
    );

    let mut i = lab(4, 16);
    i.dirty_rate_bps = None;
    let p = predict(&i);
    assert_eq!(p.converges, None);
    assert_eq!(p.dirty_rate_source, DirtyRateSource::Unknown);
    let most = p.max_dirty_rate_bps.unwrap_or_default();
    assert!(most > 4 * MIB_U && most < 16 * MIB_U, "{most}");
    let json = serde_json::to_value(&p).unwrap_or_default();
    assert_eq!(json["dirtyRateSource"], "unknown");
    assert_eq!(json["converges"], serde_json::Value::Null);

    i.bandwidth_bps = None;
    assert!(predict(&i).summary.starts_with("no prediction"));
    i.memory_bytes = 0;
    assert!(predict(&i).summary.contains("memory size is unknown"));
}

#[test]
fn the_json_carries_the_contract_fields() {
    let p = predict(&lab(64, 32));
    let v = serde_json::to_value(&p).unwrap_or_default();
    for key in [
        "converges",
        "dirtyRateBps",
        "bandwidthBps",
        "passes",
        "predictedSeconds",
        "alternatives",
    ] {
        assert!(v.get(key).is_some(), "{key}: {v}");
    }
    assert_eq!(v["dirtyRateSource"], "measured-before-start");
    assert_eq!(v["alternatives"][0]["flags"][0], "--allow-postcopy");
    assert_eq!(v["alternatives"][0]["converges"], true);
    assert!(v["alternatives"][0]["predictedSeconds"].is_number());
}

#[test]
fn kubevirt_alternatives_name_policy_fields() {
    let mut i = lab(64, 32);
    i.flavour = Flavour::KubeVirt;
    let f = flags(&predict(&i));
    assert!(f.contains(&"allowPostCopy: true".to_string()), "{f:?}");
    assert!(
        f.contains(&"allowWorkloadDisruption: true".to_string()),
        "{f:?}"
    );
    assert!(f.iter().any(|x| x.starts_with("maxDowntimeMs ")), "{f:?}");
}

#[test]
fn the_eta_of_a_pass_counts_what_dirtying_adds() {
    // 100 MiB left at 20 MiB/s: 5 s for this pass. 10 s in, dirtying 5 MiB/s: the next pass
    // starts with 75 MiB, and the passes after shrink at 15 MiB/s net: 5 + 5 = 10 s.
    let eta = precopy_eta_secs(100 * MIB_U, 256 * MIB_U, 10.0, 5 * MIB_U, 20 * MIB_U);
    assert_eq!(eta, Some(10.0));
    assert_eq!(
        precopy_eta_secs(100 * MIB_U, 256 * MIB_U, 10.0, 0, 20 * MIB_U),
        Some(5.0)
    );
    assert_eq!(
        precopy_eta_secs(1, 256 * MIB_U, 1.0, 30 * MIB_U, 20 * MIB_U),
        None
    );
    assert_eq!(precopy_eta_secs(1, 256, 1.0, 0, 0), None);
}

#[test]
fn predictions_are_monotone_in_the_rates() {
    // More bandwidth never makes it worse; more dirtying never makes it better.
    let mut seed = 7u64;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for _ in 0..500 {
        let mem = (next(64) + 1) * 128 * MIB_U;
        let d = next(200) * MIB_U;
        let b = (next(200) + 1) * MIB_U;
        let mut i = lab(0, 1);
        i.memory_bytes = mem;
        i.dirty_rate_bps = Some(d);
        i.bandwidth_bps = Some(b);
        i.budget_secs = 150 * mem.div_ceil(1_000_000_000);
        let base = predict(&i).converges == Some(true);
        i.bandwidth_bps = Some(b * 2);
        let faster = predict(&i).converges == Some(true);
        i.bandwidth_bps = Some(b);
        i.dirty_rate_bps = Some(d * 2);
        let dirtier = predict(&i).converges == Some(true);
        assert!(!base || faster, "mem {mem} d {d} b {b}");
        assert!(!dirtier || base, "mem {mem} d {d} b {b}");
    }
}

#[test]
fn only_a_clear_failure_is_certain() {
    assert!(certain_failure(&lab(64, 32)));
    // 30 MiB/s over 32: fails as measured, but at 3/4 of it (22.5) pre-copy converges.
    assert!(!predict(&lab(30, 32)).completes.unwrap_or(true));
    assert!(!certain_failure(&lab(30, 32)));
    let mut i = lab(64, 32);
    i.allow_pause = true;
    assert!(!certain_failure(&i));
    i.allow_pause = false;
    i.dirty_rate_bps = None;
    assert!(!certain_failure(&i));
}
