//! The lines of commands that follow migrations (`migrate`, `abort`, `status --watch`):
//! one function per kind of message, each escaping the cluster text it carries.

use crate::cluster::Kind;
use crate::cluster::watch::Reconnecting;
use crate::migration::follow::Advice;

use super::fmt::{printable, printable_lines};

/// `[12:00:01] VirtualMachineInstance watch reconnecting… (attempt …)`.
pub fn reconnecting(now: &str, r: &Reconnecting) -> String {
    format!("[{now}] {}", printable(&r.to_string()))
}

/// `[12:00:03] VirtualMachineInstance watch reconnected`.
pub fn reconnected(now: &str, kind: Kind) -> String {
    format!("[{now}] {kind} watch reconnected")
}

/// `status --watch`'s start, off a terminal, once the first frame is ready.
pub fn watching(now: &str, vmis: usize, scope: &str, in_flight: usize) -> String {
    format!("[{now}] watching {vmis} VMIs ({scope}): {in_flight} migrations in flight")
}

/// The controller's advice on a KubeVirt migration that does not converge.
pub fn advice(a: &Advice) -> String {
    printable_lines(&format!(
        "not converging: consider --allow-postcopy ({})",
        a.why
    ))
}
