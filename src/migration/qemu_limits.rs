//! Combinations the source's QEMU refuses before anything is sent (pure): vmctl checks them
//! against the hypervisor's version (`virConnectGetVersion`) and refuses before it starts.
//!
//! - Post-copy with parallel connections (multifd): QEMU 10.0 and every older version refuse
//!   it as libvirt sets the capabilities ("Postcopy is not yet compatible with multifd",
//!   measured with QEMU 10.0.2). Later versions are let through (QEMU's series allowing both
//!   was proposed after 10.0); a refusal there is still reported by the migration itself, as
//!   `postcopy-unsupported`, before anything was sent.

use super::plan::Plan;

/// The first QEMU version (`major * 1_000_000 + minor * 1_000 + micro`, libvirt's encoding)
/// vmctl lets try post-copy with multifd.
pub const MULTIFD_POSTCOPY_FROM: u32 = 10_001_000;

/// libvirt's encoded version as `10.0.2`.
pub fn version_text(v: u32) -> String {
    format!("{}.{}.{}", v / 1_000_000, v / 1_000 % 1_000, v % 1_000)
}

/// Why the source's QEMU (`qemu`, when known) would refuse `plan`, if it would.
pub fn refusal(plan: &Plan, qemu: Option<u32>) -> Option<String> {
    let qemu = qemu?;
    if plan.allow_postcopy && plan.parallel_connections.is_some() && qemu < MULTIFD_POSTCOPY_FROM {
        return Some(format!(
            "QEMU {} on the source cannot combine post-copy with parallel connections \
             (multifd): it refuses the capabilities (\"Postcopy is not yet compatible with \
             multifd\") before anything is sent. Drop --parallel or --allow-postcopy.",
            version_text(qemu)
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migration::plan::{Options, plan};

    fn with(allow_postcopy: bool, parallel: Option<u32>) -> Plan {
        plan(&Options {
            allow_postcopy,
            parallel,
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn post_copy_with_multifd_is_refused_on_qemu_10_0() {
        let why = refusal(&with(true, Some(2)), Some(10_000_002));
        assert!(
            why.as_deref()
                .is_some_and(|w| w.starts_with("QEMU 10.0.2 on the source cannot combine")),
            "{why:?}"
        );
        assert_eq!(refusal(&with(true, Some(2)), Some(10_001_000)), None);
        assert_eq!(refusal(&with(true, Some(2)), None), None);
        assert_eq!(refusal(&with(false, Some(2)), Some(7_002_000)), None);
        assert_eq!(refusal(&with(true, None), Some(7_002_000)), None);
        assert_eq!(version_text(7_002_015), "7.2.15");
    }
}
