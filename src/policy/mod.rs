//! Drain planning and the per-VM facts it rests on. Pure: plain data in, plain data out.

pub mod abort;
pub mod budget;
pub mod compat;
pub mod drain;
pub mod eviction;
pub mod history;
pub mod index;
pub mod label_selector;
pub mod links;
pub mod maintenance;
pub mod migratability;
pub mod migration_policy;
pub mod pdb;
pub mod placement;
pub mod pods;
pub mod preflight;
pub mod scheduling;
pub mod snapshot;
pub mod status;
pub mod top;
