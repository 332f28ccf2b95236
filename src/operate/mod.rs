//! Operations that change the cluster and follow them to the end (`migrate`, `status --watch`;
//! `drain` next): the layer that joins the follower, the renderers and the context.

pub mod abort_kubevirt;
pub mod drain;
pub mod journal;
pub mod kubevirt_job;
pub mod migrate;
pub mod migrate_kubevirt;
pub mod migrate_libvirt;
pub mod record;
pub mod status;
pub mod status_watch;
pub mod top;
