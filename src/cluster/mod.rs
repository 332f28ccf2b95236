//! Where objects come from: a live cluster or snapshot files, behind one trait.

pub mod files;
pub mod kinds;
pub mod selector;

pub use kinds::Kind;
