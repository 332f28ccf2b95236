//! vmctl: plan node drains and triage live migrations on KubeVirt and libvirt fleets.

pub mod cluster;
pub mod error;
pub mod model;
pub mod policy;
