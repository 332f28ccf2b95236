//! Driving migrations: one `JobSample` shape for both drivers (KubeVirt, libvirt), the
//! adaptive controller (pure), the `Driver` trait with the one loop that drives any driver
//! (`driver.rs`), and the drivers themselves.

pub mod classify;
pub mod controller;
pub mod dirty_rate;
pub mod driver;
pub mod ended;
pub mod follow;
#[cfg(feature = "libvirt")]
pub mod libvirt;
#[cfg(feature = "libvirt")]
pub mod libvirt_domain;
#[cfg(feature = "libvirt")]
pub mod libvirt_fate;
pub mod pass_rules;
pub mod plan;
pub mod postcopy_fate;
pub mod predict;
pub mod progress_timer;
pub mod qemu_limits;
pub mod sample;
pub mod series;

pub use sample::{JobSample, Mode, Outcome, PassTracker, Summary, TimedEvent};

/// The error of a build without the cargo feature `libvirt` (exit 2).
pub fn no_libvirt() -> crate::error::Error {
    crate::error::Error::usage(
        "this vmctl was built without libvirt support; rebuild it with \
         `cargo build --release --features libvirt` (needs libvirt's C library and headers, \
         e.g. Debian's libvirt-dev). `vmctl migrate --dry-run` works without it.",
    )
}

pub mod kubevirt;
pub mod kubevirt_metrics;
