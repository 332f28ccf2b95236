//! Operations that change the cluster and follow them to the end (`migrate` today; `drain`
//! next): the layer that joins the follower, the renderers and the context.

pub mod migrate;
