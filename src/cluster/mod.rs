//! Where objects come from: a live cluster or snapshot files, behind one trait.

pub mod bounded;
pub mod decode;
pub mod files;
pub mod kinds;
pub mod live;
pub mod selector;
pub mod snapshot;
pub mod snapshot_write;
pub mod source;
pub mod watch;
pub mod yaml;

pub use kinds::Kind;
pub use source::{Query, Source, get_as, list_as};
