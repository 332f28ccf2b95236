//! Driving migrations: one `JobSample` shape for both drivers (KubeVirt, libvirt), the
//! adaptive controller (pure), and the drivers themselves.

pub mod sample;

pub use sample::{JobSample, Mode, Outcome, PassTracker, Summary, TimedEvent};

pub mod kubevirt;
pub mod kubevirt_metrics;
