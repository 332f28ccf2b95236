//! The thresholds the controller (judging a running migration, `controller.rs`) and the
//! prediction (before the start, `predict.rs`) share, so that both judge a pass the same way.
//! Here, below both, so that neither file needs the other's items for them.

/// A pass that starts with at least this share of the previous pass's start has not shrunk
/// (KubeVirt v1.9's stall detector compares pass starts the same way, FACTS §5.4).
pub const STALL_RATIO: f64 = 0.9;
/// Post-copy sooner: pre-copy projected to need more passes than this ...
pub const POSTCOPY_SOONER_PASSES: f64 = 5.0;
/// ... and this many times the time post-copy needs.
pub const POSTCOPY_SOONER_FACTOR: f64 = 3.0;
