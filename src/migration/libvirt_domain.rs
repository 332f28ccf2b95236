//! The libvirt domain as vmctl reads it (cargo feature `libvirt`): connecting, looking a
//! domain up, its state, its job statistics (as `JobSample`s and completed jobs), the dirty
//! rate QEMU measures, vmctl's record in its metadata, and the few calls the `virt` crate
//! has no safe wrapper for. Shared by the migration driver (`libvirt.rs`), what follows a
//! failed post-copy (`libvirt_fate.rs`), `abort --connect` and `explain --connect`.

use std::sync::atomic::AtomicBool;
use std::thread;
use std::time::{Duration, Instant};

use virt::connect::Connect;
use virt::domain::{Domain, JobStats};
use virt::sys;

use super::classify::{self, CompletedJob, DomainStatus, JobEnd, JobOperation, Record};
use super::sample::{DirtyRateSource, JobSample, Mode};
use crate::error::{Error, Result};

/// Opens a libvirt connection; failures are "cluster" errors (exit 5).
pub fn connect(uri: &str) -> Result<Connect> {
    virt::error::clear_error_callback();
    Connect::open(Some(uri)).map_err(|e| {
        Error::Api {
            verb: "connect to".into(),
            resource: format!("libvirt at {uri}"),
            status: None,
            message: e.message().to_string(),
            hints: Vec::new(),
        }
        .with_hint("is libvirtd (or virtqemud) running there, and is the URI right?")
    })
}

/// Looks a domain up by name; a missing one is "not found" (exit 3).
pub fn lookup(conn: &Connect, uri: &str, name: &str) -> Result<Domain> {
    conn.lookup_domain_by_name(name).map_err(|e| {
        if e.code() == virt::error::ErrorNumber::NoDomain.into() {
            Error::not_found(format!("domain {name} on {uri}")).with_hint(format!(
                "list the domains with `virsh -c '{uri}' list --all`"
            ))
        } else {
            api_error("look up", &format!("domain {name}"), &e)
        }
    })
}

/// A libvirt error as a "cluster" error (exit 5).
pub fn api_error(verb: &str, resource: &str, e: &virt::error::Error) -> Error {
    Error::Api {
        verb: verb.into(),
        resource: resource.into(),
        status: None,
        message: e.message().to_string(),
        hints: Vec::new(),
    }
}

/// The few calls the `virt` crate has no safe wrapper for.
pub mod ffi {
    use virt::domain::{Domain, JobStats};
    use virt::sys;

    fn last_error() -> virt::error::Error {
        virt::error::Error::last_error()
    }

    /// `virDomainGetState`: raw (state, reason).
    pub fn state(dom: &Domain) -> Option<(u32, i32)> {
        let (mut state, mut reason) = (-1, -1);
        // SAFETY: `dom` owns a live virDomainPtr for the duration of the call; the out
        // pointers are valid locals.
        let rc = unsafe { sys::virDomainGetState(dom.as_ptr(), &mut state, &mut reason, 0) };
        (rc >= 0 && state >= 0).then_some((state as u32, reason))
    }

    /// `virDomainMigrateStartPostCopy`.
    pub fn start_postcopy(dom: &Domain) -> Result<(), virt::error::Error> {
        // SAFETY: as above.
        let rc = unsafe { sys::virDomainMigrateStartPostCopy(dom.as_ptr(), 0) };
        if rc < 0 { Err(last_error()) } else { Ok(()) }
    }

    /// `virDomainAbortJob`.
    pub fn abort_job(dom: &Domain) -> Result<(), virt::error::Error> {
        // SAFETY: as above.
        let rc = unsafe { sys::virDomainAbortJob(dom.as_ptr()) };
        if rc < 0 { Err(last_error()) } else { Ok(()) }
    }

    /// `virDomainGetJobStats`, read field by field and freed with libvirt's own allocator.
    /// (virt 0.5's `Domain::job_stats` hands libvirt's array to a Rust `Vec`: undefined
    /// behaviour when there is no job, and a foreign free always.)
    pub fn job_stats(dom: &Domain, flags: u32) -> Result<JobStats, virt::error::Error> {
        use std::ffi::CStr;
        use std::os::raw::{c_char, c_int, c_ulonglong};

        let mut kind: c_int = 0;
        let mut params: sys::virTypedParameterPtr = std::ptr::null_mut();
        let mut n: c_int = 0;
        // SAFETY: `dom` is live; libvirt allocates `params` (n entries) or leaves it null.
        let rc = unsafe {
            sys::virDomainGetJobStats(dom.as_ptr(), &mut kind, &mut params, &mut n, flags)
        };
        if rc < 0 {
            return Err(last_error());
        }
        let mut stats = JobStats {
            r#type: kind,
            ..Default::default()
        };
        if params.is_null() || n <= 0 {
            return Ok(stats);
        }
        let u64_of = |name: &CStr| -> Option<u64> {
            let mut v: c_ulonglong = 0;
            // SAFETY: `params` holds `n` entries until freed below; `v` is a valid out pointer.
            let rc = unsafe { sys::virTypedParamsGetULLong(params, n, name.as_ptr(), &mut v) };
            (rc == 1).then_some(v)
        };
        let i32_of = |name: &CStr| -> Option<i32> {
            let mut v: c_int = 0;
            // SAFETY: as above.
            let rc = unsafe { sys::virTypedParamsGetInt(params, n, name.as_ptr(), &mut v) };
            (rc == 1).then_some(v)
        };
        let string_of = |name: &CStr| -> Option<String> {
            let mut v: *const c_char = std::ptr::null();
            // SAFETY: as above; the string stays owned by `params` and is copied at once.
            let rc = unsafe { sys::virTypedParamsGetString(params, n, name.as_ptr(), &mut v) };
            (rc == 1 && !v.is_null())
                .then(|| unsafe { CStr::from_ptr(v) }.to_string_lossy().into_owned())
        };
        stats.operation = i32_of(sys::VIR_DOMAIN_JOB_OPERATION);
        stats.time_elapsed = u64_of(sys::VIR_DOMAIN_JOB_TIME_ELAPSED);
        stats.downtime = u64_of(sys::VIR_DOMAIN_JOB_DOWNTIME);
        stats.downtime_net = u64_of(sys::VIR_DOMAIN_JOB_DOWNTIME_NET);
        stats.setup_time = u64_of(sys::VIR_DOMAIN_JOB_SETUP_TIME);
        stats.data_total = u64_of(sys::VIR_DOMAIN_JOB_DATA_TOTAL);
        stats.data_processed = u64_of(sys::VIR_DOMAIN_JOB_DATA_PROCESSED);
        stats.data_remaining = u64_of(sys::VIR_DOMAIN_JOB_DATA_REMAINING);
        stats.mem_total = u64_of(sys::VIR_DOMAIN_JOB_MEMORY_TOTAL);
        stats.mem_processed = u64_of(sys::VIR_DOMAIN_JOB_MEMORY_PROCESSED);
        stats.mem_remaining = u64_of(sys::VIR_DOMAIN_JOB_MEMORY_REMAINING);
        stats.mem_bps = u64_of(sys::VIR_DOMAIN_JOB_MEMORY_BPS);
        stats.mem_dirty_rate = u64_of(sys::VIR_DOMAIN_JOB_MEMORY_DIRTY_RATE);
        stats.mem_page_size = u64_of(sys::VIR_DOMAIN_JOB_MEMORY_PAGE_SIZE);
        stats.mem_iteration = u64_of(sys::VIR_DOMAIN_JOB_MEMORY_ITERATION);
        stats.mem_postcopy_reqs = u64_of(sys::VIR_DOMAIN_JOB_MEMORY_POSTCOPY_REQS);
        stats.auto_converge_throttle = i32_of(sys::VIR_DOMAIN_JOB_AUTO_CONVERGE_THROTTLE);
        stats.error_message = string_of(sys::VIR_DOMAIN_JOB_ERRMSG);
        // SAFETY: frees what libvirt allocated, exactly once; nothing borrowed from it remains.
        unsafe { sys::virTypedParamsFree(params, n) };
        Ok(stats)
    }

    /// `virDomainStartDirtyRateCalc` in page-sampling mode (works without KVM).
    pub fn start_dirty_rate_calc(dom: &Domain, seconds: i32) -> Result<(), virt::error::Error> {
        // SAFETY: `dom` owns a live virDomainPtr for the duration of the call.
        let rc = unsafe {
            sys::virDomainStartDirtyRateCalc(
                dom.as_ptr(),
                seconds,
                sys::VIR_DOMAIN_DIRTYRATE_MODE_PAGE_SAMPLING,
            )
        };
        if rc < 0 { Err(last_error()) } else { Ok(()) }
    }

    /// The domain's `dirtyrate.*` statistics (`virDomainListGetStats`, freed with libvirt's
    /// own `virDomainStatsRecordListFree`: the `virt` crate's `all_domain_stats` frees the
    /// list with `libc::free` and leaks the records).
    pub fn dirty_rate_stats(dom: &Domain) -> Result<super::DirtyRateStats, virt::error::Error> {
        use std::os::raw::{c_int, c_longlong};

        // SAFETY: the pointer stays owned by `dom`, which outlives the call.
        let mut doms = [unsafe { dom.as_ptr() }, std::ptr::null_mut()];
        let mut records: *mut sys::virDomainStatsRecordPtr = std::ptr::null_mut();
        // SAFETY: `doms` is a NULL-terminated array of one live domain; libvirt allocates
        // `records` (a NULL-terminated list) or leaves it null.
        let rc = unsafe {
            sys::virDomainListGetStats(
                doms.as_mut_ptr(),
                sys::VIR_DOMAIN_STATS_DIRTYRATE,
                &mut records,
                0,
            )
        };
        if rc < 0 {
            return Err(last_error());
        }
        let mut out = super::DirtyRateStats::default();
        if records.is_null() {
            return Ok(out);
        }
        // SAFETY: `records` holds `rc` entries (then NULL) until freed below.
        let first = if rc > 0 {
            unsafe { *records }
        } else {
            std::ptr::null_mut()
        };
        if !first.is_null() {
            // SAFETY: `first` is a valid record; its params live as long as the list.
            let (params, n) = unsafe { ((*first).params, (*first).nparams) };
            let number = |name: &std::ffi::CStr| -> Option<i64> {
                let mut ll: c_longlong = 0;
                // SAFETY: `params` holds `n` entries until the list is freed; valid out pointers.
                if unsafe { sys::virTypedParamsGetLLong(params, n, name.as_ptr(), &mut ll) } == 1 {
                    return Some(ll);
                }
                let mut i: c_int = 0;
                // SAFETY: as above.
                (unsafe { sys::virTypedParamsGetInt(params, n, name.as_ptr(), &mut i) } == 1)
                    .then_some(i64::from(i))
            };
            out.status = number(sys::VIR_DOMAIN_STATS_DIRTYRATE_CALC_STATUS);
            out.start_time = number(sys::VIR_DOMAIN_STATS_DIRTYRATE_CALC_START_TIME);
            out.period_secs = number(sys::VIR_DOMAIN_STATS_DIRTYRATE_CALC_PERIOD);
            out.mib_per_second = number(sys::VIR_DOMAIN_STATS_DIRTYRATE_MEGABYTES_PER_SECOND);
        }
        // SAFETY: frees what libvirt allocated, exactly once; nothing borrowed from it remains.
        unsafe { sys::virDomainStatsRecordListFree(records) };
        Ok(out)
    }

    /// `virDomainMigrateGetMaxDowntime`.
    pub fn max_downtime(dom: &Domain) -> Option<u64> {
        let mut ms: std::os::raw::c_ulonglong = 0;
        // SAFETY: as above; `ms` is a valid out pointer.
        let rc = unsafe { sys::virDomainMigrateGetMaxDowntime(dom.as_ptr(), &mut ms, 0) };
        (rc >= 0).then_some(ms)
    }
}

pub use ffi::{abort_job, job_stats, state as state_and_reason};

/// The `dirtyrate.*` domain statistics (libvirt ≥ 7.2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirtyRateStats {
    /// 0 unstarted, 1 measuring, 2 measured.
    pub status: Option<i64>,
    /// When the last calculation started, seconds since the epoch.
    pub start_time: Option<i64>,
    pub period_secs: Option<i64>,
    /// QEMU's figure in MiB/s (it divides by 2^20, though the name says megabytes).
    pub mib_per_second: Option<i64>,
}

/// `dirtyrate.calc_status` of a finished calculation.
const DIRTYRATE_MEASURED: i64 = 2;

/// Measures the guest's dirty rate for `seconds` with QEMU's page sampling (before a
/// migration starts): bytes/s, the mean of one-second calculations. Page sampling hashes a
/// few hundred random pages (512 per GiB), so one calculation is noisy (on the lab's 256 MiB
/// guest dirtying 4 MiB/s single ones read 2 to 6) and under some loads it reads low (QEMU
/// issue 1200): a lower bound. Each calculation samples other pages, so the mean of several
/// is steadier. Stops early (Err) on Ctrl-C.
pub fn measure_dirty_rate(
    dom: &Domain,
    seconds: u32,
    interrupt: &AtomicBool,
) -> std::result::Result<u64, String> {
    let mut sum = 0u64;
    let rounds = seconds.max(1);
    for _ in 0..rounds {
        sum = sum.saturating_add(one_dirty_rate_calc(dom, interrupt)?);
    }
    Ok(sum / u64::from(rounds))
}

/// One one-second `virDomainStartDirtyRateCalc`, waited for: bytes/s.
fn one_dirty_rate_calc(dom: &Domain, interrupt: &AtomicBool) -> std::result::Result<u64, String> {
    use std::sync::atomic::Ordering;
    let before = ffi::dirty_rate_stats(dom).ok().and_then(|s| s.start_time);
    let epoch_now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
    };
    let asked_at = epoch_now();
    ffi::start_dirty_rate_calc(dom, 1).map_err(|e| e.message().to_string())?;
    let started = Instant::now();
    let give_up = Duration::from_secs(6);
    loop {
        if interrupt.load(Ordering::SeqCst) {
            return Err("interrupted".into());
        }
        if started.elapsed() >= Duration::from_millis(1000) {
            let stats = ffi::dirty_rate_stats(dom).map_err(|e| e.message().to_string())?;
            // This calculation's result, not an older one: a new start time, or one at or
            // after the request (clocks of remote hosts may differ by a second).
            let ours = stats
                .start_time
                .is_some_and(|t| before != Some(t) || t >= asked_at - 1);
            if stats.status == Some(DIRTYRATE_MEASURED) && ours {
                let mib = stats.mib_per_second.unwrap_or(0).max(0) as u64;
                return Ok(mib.saturating_mul(1 << 20));
            }
            if started.elapsed() > give_up {
                return Err(format!(
                    "no result {} s after asking (calc_status {})",
                    give_up.as_secs(),
                    stats.status.map_or("absent".into(), |s| s.to_string())
                ));
            }
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// The domain's state in the classifier's terms.
pub fn domain_status(dom: &Domain) -> DomainStatus {
    match ffi::state(dom) {
        Some((sys::VIR_DOMAIN_RUNNING, _)) => DomainStatus::Running,
        Some((sys::VIR_DOMAIN_PAUSED, r)) if r as u32 == sys::VIR_DOMAIN_PAUSED_POSTCOPY => {
            DomainStatus::PostCopy
        }
        Some((sys::VIR_DOMAIN_PAUSED, r)) if r as u32 == sys::VIR_DOMAIN_PAUSED_POSTCOPY_FAILED => {
            DomainStatus::PostcopyFailed
        }
        Some((sys::VIR_DOMAIN_PAUSED, _)) => DomainStatus::Paused,
        Some((sys::VIR_DOMAIN_SHUTOFF, _)) => DomainStatus::ShutOff,
        _ => DomainStatus::Unknown,
    }
}

/// Job statistics as a `JobSample`.
pub fn to_sample(s: &JobStats, fallback_elapsed_ms: u64, mode: Mode) -> JobSample {
    let page = s.mem_page_size.filter(|p| *p > 0).unwrap_or(4096);
    JobSample {
        elapsed_ms: s.time_elapsed.unwrap_or(fallback_elapsed_ms),
        data_total: s.data_total.unwrap_or(0),
        data_processed: s.data_processed.unwrap_or(0),
        data_remaining: s.data_remaining.unwrap_or(0),
        memory_total: s.mem_total.unwrap_or(0),
        memory_processed: s.mem_processed.unwrap_or(0),
        memory_remaining: s.mem_remaining.unwrap_or(0),
        memory_bps: s.mem_bps.unwrap_or(0),
        dirty_rate_bps: s.mem_dirty_rate.unwrap_or(0).saturating_mul(page),
        // QEMU computes the rate at a pass's end: pass 1 reports 0 for "not yet".
        dirty_rate_source: match (s.mem_dirty_rate, s.mem_iteration) {
            (Some(d), _) if d > 0 => DirtyRateSource::Libvirt,
            (Some(_), Some(it)) if it >= 2 => DirtyRateSource::Libvirt,
            _ => DirtyRateSource::Unknown,
        },
        iteration: s.mem_iteration,
        expected_downtime_ms: s.downtime,
        postcopy_requests: s.mem_postcopy_reqs,
        throttle_percent: s.auto_converge_throttle.and_then(|t| u32::try_from(t).ok()),
        mode,
    }
}

/// Completed-job statistics as the classifier's plain data.
pub fn to_completed(s: &JobStats) -> CompletedJob {
    let page = s.mem_page_size.filter(|p| *p > 0).unwrap_or(4096);
    let end = match s.r#type as u32 {
        sys::VIR_DOMAIN_JOB_NONE => JobEnd::None,
        sys::VIR_DOMAIN_JOB_COMPLETED => JobEnd::Completed,
        sys::VIR_DOMAIN_JOB_FAILED => JobEnd::Failed,
        sys::VIR_DOMAIN_JOB_CANCELLED => JobEnd::Cancelled,
        _ => JobEnd::Running,
    };
    let operation = match s.operation.map(|o| o as u32) {
        Some(sys::VIR_DOMAIN_JOB_OPERATION_MIGRATION_OUT) => JobOperation::MigrationOut,
        Some(sys::VIR_DOMAIN_JOB_OPERATION_MIGRATION_IN) => JobOperation::MigrationIn,
        Some(sys::VIR_DOMAIN_JOB_OPERATION_UNKNOWN) | None => JobOperation::Unknown,
        Some(_) => JobOperation::Other,
    };
    CompletedJob {
        end,
        operation,
        error_message: s.error_message.clone(),
        elapsed_ms: s.time_elapsed,
        downtime_ms: s.downtime,
        data_total: s.data_total,
        data_processed: s.data_processed,
        data_remaining: s.data_remaining,
        memory_total: s.mem_total,
        memory_remaining: s.mem_remaining,
        memory_bps: s.mem_bps,
        dirty_rate_bps: s.mem_dirty_rate.map(|d| d.saturating_mul(page)),
        iteration: s.mem_iteration,
        postcopy_requests: s.mem_postcopy_reqs,
        throttle_percent: s.auto_converge_throttle.and_then(|t| u32::try_from(t).ok()),
    }
}

/// vmctl's record of the last migration it drove of this domain, if any.
pub fn read_record(dom: &Domain) -> Option<Record> {
    dom.metadata(
        sys::VIR_DOMAIN_METADATA_ELEMENT as i32,
        Some(classify::RECORD_NAMESPACE),
        sys::VIR_DOMAIN_AFFECT_CURRENT,
    )
    .ok()
    .and_then(|xml| classify::record_from_xml(&xml))
}

/// True while the domain has a job (a migration, in or out) on this host.
pub fn job_running(dom: &Domain) -> bool {
    job_stats(dom, 0).is_ok_and(|j| j.r#type as u32 != sys::VIR_DOMAIN_JOB_NONE)
}

/// The domain as [`wait_until`] last saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub state: DomainStatus,
    /// A job was still running.
    pub busy: bool,
    /// `settled` said yes before the wait ran out.
    pub settled: bool,
}

/// Looks at the domain every 200 ms until `settled(state, busy)` says yes or `wait` has
/// passed (after an abort: until the guest runs on the source again).
pub fn wait_until(
    dom: &Domain,
    wait: Duration,
    settled: impl Fn(DomainStatus, bool) -> bool,
) -> Seen {
    let until = Instant::now() + wait;
    loop {
        let busy = job_running(dom);
        let state = domain_status(dom);
        if settled(state, busy) || Instant::now() > until {
            return Seen {
                state,
                busy,
                settled: settled(state, busy),
            };
        }
        thread::sleep(Duration::from_millis(200));
    }
}
