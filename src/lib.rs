//! vmctl: plan node drains and triage live migrations on KubeVirt and libvirt fleets.

pub mod cli;
pub mod cluster;
pub mod commands;
pub mod complete;
pub mod context;
pub mod entry;
pub mod error;
pub mod evidence;
pub mod journal;
pub mod migration;
pub mod model;
pub mod names;
pub mod operate;
pub mod policy;
pub mod render;
pub mod text;
pub mod triage;
