//! Moved to [`crate::text`] (a lower layer: the pure floors use it too); kept as a path for
//! the renderers.

pub use crate::text::*;
