//! After a libvirt migration failed in post-copy: watch the source settle and ask the
//! destination, then say where the guest is ([`super::postcopy_fate`] decides, purely).
//!
//! The source is watched because libvirt's verdict is not QEMU's: when only the destination's
//! daemon is lost, libvirt fails the call and shows the source `paused (post-copy failed)`
//! while its QEMU goes on sending the guest's memory, then shuts it off as migrated. So: the
//! source shut off = everything was sent; nothing sent for a few seconds = the stream is
//! broken; a source still sending is followed while its end is in sight
//! ([`postcopy_fate::SourceWatch`] decides).

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use virt::connect::Connect;
use virt::domain::Domain;
use virt::sys;

use super::classify::DomainStatus;
use super::driver::Progress;
use super::libvirt_domain::{domain_status, job_stats, state_and_reason};
use super::postcopy_fate::{
    self, DestinationSide, Fate, Names, SourceSide, SourceWatch, WatchStep,
};

const LOOK_EVERY: Duration = Duration::from_millis(250);

/// The migration whose post-copy failed.
#[derive(Debug, Clone, Copy)]
pub struct Migration<'a> {
    pub domain: &'a str,
    pub src_uri: &'a str,
    pub dst_uri: &'a str,
}

/// Where the guest is after the migrate call failed with `error` in post-copy (`interrupt`:
/// Ctrl-C stops watching the source).
pub fn observe<P: Progress + ?Sized>(
    dom: &Domain,
    req: &Migration<'_>,
    interrupt: &AtomicBool,
    src_host: &str,
    error: &str,
    progress: &mut P,
) -> Fate {
    progress.event(&format!(
        "libvirt failed the migration in post-copy ({error}): watching the source to tell \
         where the guest is"
    ));
    let src = watch_source(dom, interrupt, progress);
    let (dst, dst_host, dst_libvirt) = read_destination(req.dst_uri, req.domain);
    let dst_host = dst_host.unwrap_or_else(|| format!("the destination ({})", req.dst_uri));
    postcopy_fate::fate(
        error,
        src,
        &dst,
        &Names {
            domain: req.domain,
            src_uri: req.src_uri,
            dst_uri: req.dst_uri,
            src_host,
            dst_host: &dst_host,
            dst_libvirt,
        },
    )
}

/// Watches the source until it shut off, runs whole, stopped sending, or vmctl stops
/// following it (its end out of sight, or Ctrl-C).
fn watch_source<P: Progress + ?Sized>(
    dom: &Domain,
    interrupt: &AtomicBool,
    progress: &mut P,
) -> SourceSide {
    let start = Instant::now();
    let mut watch = SourceWatch::default();
    loop {
        let state = state_and_reason(dom);
        if let Some(side) = state.and_then(|(s, r)| settled_source(s, r)) {
            return side;
        }
        let stats = job_stats(dom, 0).ok();
        let sent = stats
            .as_ref()
            .and_then(|s| s.data_processed.or(s.mem_processed));
        let left = stats
            .as_ref()
            .and_then(|s| s.data_remaining.or(s.mem_remaining));
        let now_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        let interrupted = interrupt.swap(false, Ordering::SeqCst);
        match watch.look(now_ms, sent, left, interrupted) {
            WatchStep::Again(report) => {
                if let Some(text) = report {
                    progress.event(&text);
                }
            }
            WatchStep::Stalled => {
                return match domain_status(dom) {
                    DomainStatus::PostcopyFailed | DomainStatus::PostCopy => SourceSide::Stalled,
                    other => SourceSide::Other(other),
                };
            }
            WatchStep::GiveUp(side) => return side,
        }
        thread::sleep(LOOK_EVERY);
    }
}

/// The source's (state, reason) when it tells the end: shut off as migrated (everything was
/// sent), or running/paused whole; `None` while post-copy (failed or not) or shutting down.
fn settled_source(state: u32, reason: i32) -> Option<SourceSide> {
    let reason = u32::try_from(reason).unwrap_or(u32::MAX);
    match state {
        sys::VIR_DOMAIN_SHUTOFF if reason == sys::VIR_DOMAIN_SHUTOFF_MIGRATED => {
            Some(SourceSide::Sent)
        }
        sys::VIR_DOMAIN_SHUTOFF | sys::VIR_DOMAIN_CRASHED => {
            Some(SourceSide::Other(DomainStatus::ShutOff))
        }
        sys::VIR_DOMAIN_RUNNING => Some(SourceSide::Whole),
        sys::VIR_DOMAIN_PAUSED
            if reason != sys::VIR_DOMAIN_PAUSED_POSTCOPY
                && reason != sys::VIR_DOMAIN_PAUSED_POSTCOPY_FAILED =>
        {
            Some(SourceSide::Whole)
        }
        _ => None,
    }
}

/// The destination's side, its host name and its libvirt version, over a new connection.
fn read_destination(uri: &str, domain: &str) -> (DestinationSide, Option<String>, Option<u32>) {
    let conn = match Connect::open(Some(uri)) {
        Ok(c) => c,
        Err(e) => {
            return (
                DestinationSide::Unreachable(e.message().to_string()),
                None,
                None,
            );
        }
    };
    let host = conn.hostname().ok();
    let version = conn.lib_version().ok();
    let side = match conn.lookup_domain_by_name(domain) {
        Err(e) if e.code() == virt::error::ErrorNumber::NoDomain.into() => DestinationSide::Gone,
        Err(e) => DestinationSide::Unreachable(e.message().to_string()),
        Ok(d) => match state_and_reason(&d) {
            Some((state, reason)) => destination_side(state, reason),
            None => DestinationSide::Other("state unknown".into()),
        },
    };
    (side, host, version)
}

/// libvirt's (state, reason) of the destination's domain.
fn destination_side(state: u32, reason: i32) -> DestinationSide {
    let reason = u32::try_from(reason).unwrap_or(u32::MAX);
    match state {
        sys::VIR_DOMAIN_RUNNING => match reason {
            sys::VIR_DOMAIN_RUNNING_POSTCOPY_FAILED => DestinationSide::PostcopyFailed,
            sys::VIR_DOMAIN_RUNNING_POSTCOPY => DestinationSide::InPostCopy,
            _ => DestinationSide::Running,
        },
        sys::VIR_DOMAIN_PAUSED => match reason {
            sys::VIR_DOMAIN_PAUSED_POSTCOPY_FAILED => DestinationSide::PostcopyFailed,
            sys::VIR_DOMAIN_PAUSED_POSTCOPY => DestinationSide::InPostCopy,
            sys::VIR_DOMAIN_PAUSED_USER => DestinationSide::Other("paused (user)".into()),
            sys::VIR_DOMAIN_PAUSED_MIGRATION => DestinationSide::Other("paused (migration)".into()),
            _ => DestinationSide::Other(format!("paused (reason {reason})")),
        },
        sys::VIR_DOMAIN_SHUTOFF => DestinationSide::Stopped(format!(
            "shut off ({})",
            match reason {
                sys::VIR_DOMAIN_SHUTOFF_SHUTDOWN => "shutdown".to_string(),
                sys::VIR_DOMAIN_SHUTOFF_DESTROYED => "destroyed".to_string(),
                sys::VIR_DOMAIN_SHUTOFF_CRASHED => "crashed".to_string(),
                sys::VIR_DOMAIN_SHUTOFF_MIGRATED => "migrated".to_string(),
                sys::VIR_DOMAIN_SHUTOFF_FAILED => "failed".to_string(),
                r => format!("reason {r}"),
            }
        )),
        sys::VIR_DOMAIN_CRASHED => DestinationSide::Stopped("crashed".into()),
        s => DestinationSide::Other(format!("state {s}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_states() {
        for (state, reason, want) in [
            (
                sys::VIR_DOMAIN_SHUTOFF,
                sys::VIR_DOMAIN_SHUTOFF_MIGRATED as i32,
                Some(SourceSide::Sent),
            ),
            (
                sys::VIR_DOMAIN_SHUTOFF,
                sys::VIR_DOMAIN_SHUTOFF_DESTROYED as i32,
                Some(SourceSide::Other(DomainStatus::ShutOff)),
            ),
            (sys::VIR_DOMAIN_SHUTDOWN, 0, None),
            (
                sys::VIR_DOMAIN_PAUSED,
                sys::VIR_DOMAIN_PAUSED_POSTCOPY_FAILED as i32,
                None,
            ),
            (
                sys::VIR_DOMAIN_PAUSED,
                sys::VIR_DOMAIN_PAUSED_POSTCOPY as i32,
                None,
            ),
            (
                sys::VIR_DOMAIN_PAUSED,
                sys::VIR_DOMAIN_PAUSED_USER as i32,
                Some(SourceSide::Whole),
            ),
            (sys::VIR_DOMAIN_RUNNING, 1, Some(SourceSide::Whole)),
        ] {
            assert_eq!(settled_source(state, reason), want, "{state}/{reason}");
        }
    }

    #[test]
    fn destination_states() {
        for (state, reason, want) in [
            (
                sys::VIR_DOMAIN_RUNNING,
                sys::VIR_DOMAIN_RUNNING_POSTCOPY_FAILED as i32,
                DestinationSide::PostcopyFailed,
            ),
            (
                sys::VIR_DOMAIN_PAUSED,
                sys::VIR_DOMAIN_PAUSED_POSTCOPY_FAILED as i32,
                DestinationSide::PostcopyFailed,
            ),
            (
                sys::VIR_DOMAIN_RUNNING,
                sys::VIR_DOMAIN_RUNNING_POSTCOPY as i32,
                DestinationSide::InPostCopy,
            ),
            (
                sys::VIR_DOMAIN_RUNNING,
                sys::VIR_DOMAIN_RUNNING_MIGRATED as i32,
                DestinationSide::Running,
            ),
            (
                sys::VIR_DOMAIN_SHUTOFF,
                sys::VIR_DOMAIN_SHUTOFF_CRASHED as i32,
                DestinationSide::Stopped("shut off (crashed)".into()),
            ),
            (
                sys::VIR_DOMAIN_PAUSED,
                -1,
                DestinationSide::Other(format!("paused (reason {})", u32::MAX)),
            ),
        ] {
            assert_eq!(destination_side(state, reason), want, "{state}/{reason}");
        }
    }
}
