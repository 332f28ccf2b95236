//! The libvirt driver (cargo feature `libvirt`): starts a peer-to-peer live migration with
//! `virDomainMigrateToURI3` on its own thread and connection; [`LibvirtDriver`] samples the
//! job and applies the controller's decisions (post-copy, max downtime, pause, abort), and
//! the one loop, [`drive`], runs it every 400 ms.
//!
//! Safety rules (kept by the loop, tested there with a scripted driver): a guest vmctl
//! paused is resumed if the migration then fails; nothing aborts a migration in post-copy.
//! Here: an abort (controller, Ctrl-C, --timeout) waits until the guest runs on the source
//! again.

use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use virt::connect::Connect;
use virt::domain::{Domain, JobStats, MigrateParameters};
use virt::sys;

use super::classify::{self, CompletedJob, DomainStatus, JobEnd, JobOperation, Record};
use super::controller::{Controller, Decision};
pub use super::driver::Stop;
use super::driver::{
    Driver, DriverError, Progress, SAMPLE_PERIOD, Settings, drive, set_initial_downtime,
};
use super::plan::Plan;
use super::predict::{self, Prediction};
use super::sample::{DirtyRateSource, JobSample, Mode, Outcome, Summary};
use crate::error::{Error, Result};

/// How long an abort may take to give the guest back to the source.
const ABORT_WAIT: Duration = Duration::from_secs(60);

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
mod ffi {
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

/// A migration to run.
pub struct Request<'a> {
    pub src_uri: &'a str,
    pub dst_uri: &'a str,
    pub domain: &'a str,
    pub plan: &'a Plan,
    /// Set by the Ctrl-C handler.
    pub interrupt: &'a AtomicBool,
    /// `--timeout`: abort (in pre-copy) after this long.
    pub timeout: Option<Duration>,
    /// Measure the dirty rate for this many seconds before starting and predict; `None`
    /// with `--no-measure`.
    pub measure_secs: Option<u32>,
    /// `--force`: start even when the prediction says it cannot complete.
    pub force: bool,
}

/// How a migration ended, for the command's exit code and report.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub summary: Summary,
    pub stopped_by: Option<Stop>,
    /// Memory of the guest (for the report).
    pub memory_bytes: u64,
    pub budget_secs: u64,
    /// The prediction made before the start (unless `--no-measure`).
    pub prediction: Option<Prediction>,
}

/// The result of the migrate thread: Ok, or the libvirt error's message.
type MigrateResult = std::result::Result<(), String>;

/// The [`Driver`] over a `virt::Domain` on the source: the job runs on its own thread and
/// connection (`virDomainMigrateToURI3` blocks until the migration is over); the driver
/// samples it with `virDomainGetJobStats` and steers it.
pub struct LibvirtDriver<'a> {
    dom: &'a Domain,
    src_uri: &'a str,
    domain: &'a str,
    started: Instant,
    job: Option<(mpsc::Receiver<MigrateResult>, thread::JoinHandle<()>)>,
    /// The dirty rate measured before the start, shown until libvirt has its own.
    prior_dirty_bps: Option<u64>,
}

impl<'a> LibvirtDriver<'a> {
    /// A driver for `dom` (looked up on `src_uri` as `domain`); no job yet.
    pub fn new(dom: &'a Domain, src_uri: &'a str, domain: &'a str) -> Self {
        LibvirtDriver {
            dom,
            src_uri,
            domain,
            started: Instant::now(),
            job: None,
            prior_dirty_bps: None,
        }
    }

    /// The dirty rate measured before the start (bytes/s), for pass 1's samples.
    pub fn with_prior_dirty_rate(mut self, bps: Option<u64>) -> Self {
        self.prior_dirty_bps = bps;
        self
    }

    /// Starts the migration on its own thread and connection; the driver's clock starts now.
    pub fn start(&mut self, dst_uri: &str, flags: u32, params: MigrateParameters) -> Result<()> {
        let (tx, rx) = mpsc::channel::<MigrateResult>();
        let (src, dst, name) = (
            self.src_uri.to_string(),
            dst_uri.to_string(),
            self.domain.to_string(),
        );
        let thread = thread::Builder::new()
            .name("libvirt-migrate".into())
            .spawn(move || {
                // Its own connection: the call blocks until the migration is over, and the
                // sampling must not wait behind it.
                let result = Connect::open(Some(&src))
                    .and_then(|c| {
                        let d = c.lookup_domain_by_name(&name)?;
                        d.migrate_to_uri3(Some(&dst), params, flags)
                    })
                    .map_err(|e| e.message().to_string());
                let _ = tx.send(result);
            })
            .map_err(|e| Error::Internal(format!("starting the migration thread: {e}")))?;
        self.started = Instant::now();
        self.job = Some((rx, thread));
        Ok(())
    }

    /// Waits for the migration thread to end (after [`drive`] saw the job end).
    pub fn join(&mut self) {
        if let Some((_, thread)) = self.job.take() {
            let _ = thread.join();
        }
    }
}

impl Driver for LibvirtDriver<'_> {
    fn wait(&mut self, period: Duration) -> Option<MigrateResult> {
        let Some((rx, _)) = &self.job else {
            return Some(Err("no migration job was started".into()));
        };
        match rx.recv_timeout(period) {
            Ok(result) => Some(result),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Some(Err("the migration thread ended without a result".into()))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => None,
        }
    }

    fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn sample(&mut self, elapsed_ms: u64) -> Option<JobSample> {
        let stats = job_stats(self.dom, 0)
            .ok()
            .filter(|s| s.r#type as u32 != sys::VIR_DOMAIN_JOB_NONE)?;
        let seen = match domain_status(self.dom) {
            DomainStatus::PostCopy | DomainStatus::PostcopyFailed => Mode::PostCopy,
            DomainStatus::Paused => Mode::Paused,
            _ => Mode::PreCopy,
        };
        let mut sample = to_sample(&stats, elapsed_ms, seen);
        sample.fill_dirty_rate(self.prior_dirty_bps);
        Some(sample)
    }

    fn supports(&self, _decision: &Decision) -> bool {
        true
    }

    fn apply(&mut self, decision: Decision) -> std::result::Result<(), DriverError> {
        match decision {
            Decision::StartPostCopy => ffi::start_postcopy(self.dom),
            Decision::RaiseMaxDowntime { ms } => self.dom.migrate_set_max_downtime(ms, 0),
            Decision::Pause => self.dom.suspend().map(|_| ()),
            Decision::Abort { .. } => ffi::abort_job(self.dom),
            Decision::Continue => Ok(()),
        }
        .map_err(|e| DriverError(e.message().to_string()))
    }

    fn abort(&mut self) -> std::result::Result<(), DriverError> {
        ffi::abort_job(self.dom).map_err(|e| DriverError(e.message().to_string()))
    }

    fn resume(&mut self) -> std::result::Result<bool, DriverError> {
        // libvirt itself resumes a guest that ran before a migration which failed (it then
        // reads `running (migration canceled)`); a guest suspended during the migration job
        // reads `paused (migrating)`, one suspended after it `paused (user)`.
        match ffi::state(self.dom) {
            Some((sys::VIR_DOMAIN_RUNNING, _)) => return Ok(false),
            Some((sys::VIR_DOMAIN_PAUSED, r))
                if r as u32 == sys::VIR_DOMAIN_PAUSED_USER
                    || r as u32 == sys::VIR_DOMAIN_PAUSED_MIGRATION => {}
            other => {
                let state = other.map_or("unknown".to_string(), |(s, r)| {
                    format!("{s} (reason {r}; virDomainState, its reason)")
                });
                return Err(DriverError(format!(
                    "the source reports state {state}, not a guest to resume -- check \
                     `virsh -c '{}' domstate --reason {}`",
                    self.src_uri, self.domain
                )));
            }
        }
        self.dom.resume().map(|_| true).map_err(|e| {
            DriverError(format!(
                "{} -- run `virsh -c '{}' resume {}`",
                e.message(),
                self.src_uri,
                self.domain
            ))
        })
    }

    fn max_downtime_ms(&mut self) -> Option<u64> {
        ffi::max_downtime(self.dom)
    }

    fn set_max_downtime_ms(&mut self, ms: u64) -> std::result::Result<(), DriverError> {
        self.dom
            .migrate_set_max_downtime(ms, 0)
            .map_err(|e| DriverError(e.message().to_string()))
    }
}

/// Runs a migration to its end, drawing it on `progress`: start the job, build the driver,
/// [`drive`] it, then put together the summary and leave a record for `explain --connect`.
pub fn migrate<P: Progress + ?Sized>(req: &Request<'_>, progress: &mut P) -> Result<Report> {
    let conn = connect(req.src_uri)?;
    let dom = lookup(&conn, req.src_uri, req.domain)?;
    let guest_paused = match domain_status(&dom) {
        DomainStatus::Running => false,
        DomainStatus::Paused => true,
        other => {
            return Err(Error::usage(format!(
                "domain {} is not running on {} ({other:?}): only a running guest can be live-migrated",
                req.domain, req.src_uri
            )));
        }
    };
    if guest_paused {
        progress.event_at(
            0,
            "the guest is paused: it stays paused on the destination (VIR_MIGRATE_PAUSED)",
        );
    }
    if job_running(&dom) {
        return Err(Error::usage(format!(
            "domain {} already has a job running (see `virsh domjobinfo {}`)",
            req.domain, req.domain
        )));
    }
    let src_host = conn.hostname().unwrap_or_else(|_| req.src_uri.to_string());
    let memory_bytes = dom
        .max_memory()
        .map(|kib| kib.saturating_mul(1024))
        .map_err(|e| api_error("read the memory of", &format!("domain {}", req.domain), &e))?;
    let cfg = req.plan.controller_config(memory_bytes);
    let budget_secs = cfg.budget_secs;
    progress.set_budget(Some(budget_secs));

    if let Some(why) = super::qemu_limits::refusal(req.plan, conn.hyp_version().ok()) {
        return Err(Error::usage(why));
    }
    let measured = match req.measure_secs {
        Some(secs) => measure_before_start(&dom, secs, req.interrupt, progress)?,
        None => None,
    };
    let inputs = req.plan.prediction_inputs(memory_bytes, measured);
    let prediction = req.measure_secs.map(|_| predict::predict(&inputs));
    if let Some(p) = &prediction {
        for line in prediction_lines(p) {
            progress.event_at(0, &line);
        }
        if !req.force && predict::certain_failure(&inputs) {
            return Ok(refused(p, memory_bytes, budget_secs, progress));
        }
    }
    let mut controller = Controller::new(cfg);

    let mut driver =
        LibvirtDriver::new(&dom, req.src_uri, req.domain).with_prior_dirty_rate(measured);
    // The max downtime is a property of the source QEMU: remembered to put it back if the
    // migration does not happen.
    let downtime = set_initial_downtime(&mut driver, req.plan.initial_downtime_ms, progress);
    let params = MigrateParameters {
        bandwidth: req.plan.bandwidth_mib,
        bandwidth_postcopy: req.plan.postcopy_bandwidth_mib,
        parallel_connections: req
            .plan
            .parallel_connections
            .and_then(|n| i32::try_from(n).ok()),
        ..Default::default()
    };
    driver.start(req.dst_uri, req.plan.flags_for(guest_paused), params)?;
    let settings = Settings {
        period: SAMPLE_PERIOD,
        interrupt: req.interrupt,
        deadline: req.timeout,
        downtime,
    };
    let driven = drive(&mut driver, &mut controller, progress, &settings);
    driver.join();
    let mode = driven.mode;
    let stopped_by = driven.stopped_by;

    // Afterwards: completed-job statistics (kept by the source daemon).
    let completed = job_stats(
        &dom,
        sys::VIR_DOMAIN_JOB_STATS_COMPLETED | sys::VIR_DOMAIN_JOB_STATS_KEEP_COMPLETED,
    )
    .ok()
    .map(|s| to_completed(&s));
    let mut summary = Summary {
        total_ms: driven.elapsed_ms,
        memory_total: memory_bytes,
        final_mode: mode,
        ..Default::default()
    };
    if let Some(c) = &completed {
        summary.downtime_ms = c.downtime_ms;
        summary.data_processed = c.data_processed.unwrap_or(0);
        summary.iterations = c.iteration;
        summary.postcopy_requests = c.postcopy_requests;
        if let Some(ms) = c.elapsed_ms {
            summary.total_ms = ms;
        }
    }
    if summary.data_processed == 0
        && let Some(s) = &driven.last_sample
    {
        summary.data_processed = s.data_processed;
        summary.iterations = s.iteration;
    }

    match &driven.result {
        Ok(()) => {
            summary.outcome = Some(Outcome::Succeeded);
            summary.cause = Some("succeeded".into());
            summary.message = destination_words(req, mode);
        }
        Err(message) => {
            // After the switch: where the guest is now (libvirt's error alone does not say).
            let fate = (mode == Mode::PostCopy)
                .then(|| super::libvirt_fate::observe(&dom, req, &src_host, message, progress));
            let (outcome, cause) = match stopped_by {
                Some(Stop::Controller(cause)) => (Outcome::Failed, cause),
                Some(Stop::Interrupt) | Some(Stop::Timeout) => {
                    (Outcome::Aborted, "aborted-by-request")
                }
                None if fate.is_some() => (
                    Outcome::Failed,
                    fate.as_ref().map_or("postcopy-failed", |f| f.cause.id),
                ),
                None => {
                    let cause = classify::failure_cause(message, false);
                    let outcome = if cause == "aborted-by-request" {
                        Outcome::Aborted
                    } else {
                        Outcome::Failed
                    };
                    (outcome, cause)
                }
            };
            summary.outcome = Some(outcome);
            summary.cause = Some(cause.into());
            // The loop resumed a guest vmctl paused and put the max downtime back; what it
            // could not do is said here.
            let mut words = vec![format!("libvirt: {message}")];
            words.extend(driven.notes.iter().cloned());
            match fate {
                Some(fate) => words.push(fate.message),
                None => words.push(wait_for_source(&dom, req, &src_host)),
            }
            summary.message = words.join("; ");
        }
    }
    summary.final_mode = mode;
    summary.events = progress.events().to_vec();

    // Leave a record for `explain --connect` where the guest now is: libvirt keeps
    // statistics only of jobs that succeeded. Best effort: a migration is not failed by it.
    let record = record_of(&summary, req.dst_uri);
    if summary.outcome == Some(Outcome::Succeeded) {
        if let Ok(c) = Connect::open(Some(req.dst_uri))
            && let Ok(d) = c.lookup_domain_by_name(req.domain)
        {
            write_record(&d, &record);
        }
    } else if !job_running(&dom) {
        // (A source whose post-copy failed keeps its migration job: libvirt would make the
        // metadata write wait 30 s for it, then fail.)
        write_record(&dom, &record);
    }
    Ok(Report {
        summary,
        stopped_by,
        memory_bytes,
        budget_secs,
        prediction,
    })
}

/// `--dry-run`'s prediction: reads the guest's memory and measures its dirty rate (unless
/// `--no-measure`; QEMU's calculation reads the guest's pages and changes nothing). `Err`
/// says why there is no prediction.
pub fn dry_run_prediction(
    src_uri: &str,
    domain: &str,
    plan: &Plan,
    measure_secs: Option<u32>,
    interrupt: &AtomicBool,
) -> std::result::Result<Prediction, String> {
    let conn = connect(src_uri).map_err(|e| e.to_string())?;
    let dom = lookup(&conn, src_uri, domain).map_err(|e| e.to_string())?;
    let memory_bytes = dom
        .max_memory()
        .map(|kib| kib.saturating_mul(1024))
        .map_err(|e| format!("reading the memory of domain {domain}: {}", e.message()))?;
    let measured = match measure_secs {
        Some(secs) if domain_status(&dom) == DomainStatus::Running => {
            match measure_dirty_rate(&dom, secs, interrupt) {
                Ok(bps) => Some(bps),
                Err(e) if interrupt.load(std::sync::atomic::Ordering::SeqCst) => return Err(e),
                Err(_) => None,
            }
        }
        _ => None,
    };
    Ok(predict::predict(
        &plan.prediction_inputs(memory_bytes, measured),
    ))
}

/// The dirty-rate measurement before the start, said as events; `None` when the hypervisor
/// could not measure (the bars then say "unknown" until libvirt's own figure). Ctrl-C during
/// it stops vmctl before anything started.
fn measure_before_start<P: Progress + ?Sized>(
    dom: &Domain,
    secs: u32,
    interrupt: &AtomicBool,
    progress: &mut P,
) -> Result<Option<u64>> {
    progress.event_at(
        0,
        &format!(
            "measuring the guest's dirty rate for {secs} s (QEMU page sampling) before starting"
        ),
    );
    match measure_dirty_rate(dom, secs, interrupt) {
        Ok(bps) => {
            progress.event_at(
                0,
                &format!(
                    "dirty rate measured before start: {}/s (page sampling: a lower bound)",
                    crate::text::bytes(bps)
                ),
            );
            Ok(Some(bps))
        }
        Err(_) if interrupt.load(std::sync::atomic::Ordering::SeqCst) => Err(Error::Interrupted),
        Err(e) => {
            progress.event_at(
                0,
                &format!(
                    "could not measure the dirty rate: {e}; it shows as unknown until libvirt reports one (pass 2)"
                ),
            );
            Ok(None)
        }
    }
}

/// The prediction as event lines: the summary, then one line per alternative.
pub fn prediction_lines(p: &Prediction) -> Vec<String> {
    let mut lines = vec![format!("prediction: {}", p.summary)];
    for a in &p.alternatives {
        lines.push(format!("prediction with {}", predict::alternative_text(a)));
    }
    lines
}

/// The report of a migration vmctl would not start: the prediction says nothing the flags
/// allow completes it. Nothing was changed.
fn refused<P: Progress + ?Sized>(
    p: &Prediction,
    memory_bytes: u64,
    budget_secs: u64,
    progress: &mut P,
) -> Report {
    let options: Vec<String> = p.alternatives.iter().map(|a| a.flags.join(" ")).collect();
    let summary = Summary {
        outcome: Some(Outcome::Refused),
        cause: Some(
            super::controller::AbortCause::NotConverging
                .cause_id()
                .into(),
        ),
        message: format!(
            "not started: {}; nothing was changed. Run it with one of: {} (or --force to try anyway)",
            p.summary,
            options.join(", ")
        ),
        memory_total: memory_bytes,
        events: progress.events().to_vec(),
        ..Default::default()
    };
    Report {
        summary,
        stopped_by: None,
        memory_bytes,
        budget_secs,
        prediction: Some(p.clone()),
    }
}

fn record_of(summary: &Summary, destination: &str) -> Record {
    Record {
        at: k8s_openapi::jiff::Timestamp::now().to_string(),
        outcome: summary
            .outcome
            .map_or("unknown", |o| o.as_str())
            .to_string(),
        cause: summary.cause.clone().unwrap_or_default(),
        message: summary.message.clone(),
        destination: destination.to_string(),
        total_ms: summary.total_ms,
        data_processed: summary.data_processed,
        iterations: summary.iterations,
        downtime_ms: summary.downtime_ms,
        final_mode: summary.final_mode.as_str().to_string(),
        decisions: summary
            .events
            .iter()
            .filter(|e| super::sample::is_decision(&e.text))
            .map(|e| (e.at_ms, e.text.clone()))
            .collect(),
    }
}

/// Stores vmctl's record in the domain's metadata (live and persistent definition; only the
/// current one for a transient domain).
fn write_record(dom: &Domain, record: &Record) {
    let xml = classify::record_to_xml(record);
    let kind = sys::VIR_DOMAIN_METADATA_ELEMENT as i32;
    let both = sys::VIR_DOMAIN_AFFECT_LIVE | sys::VIR_DOMAIN_AFFECT_CONFIG;
    let set = |flags| {
        dom.set_metadata(
            kind,
            Some(&xml),
            Some(classify::RECORD_PREFIX),
            Some(classify::RECORD_NAMESPACE),
            flags,
        )
    };
    let _ = set(both).or_else(|_| set(sys::VIR_DOMAIN_AFFECT_CURRENT));
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

/// Waits until the source reports the guest running again (after an abort or a failure in
/// pre-copy); says where it is.
pub fn wait_for_source(dom: &Domain, req: &Request<'_>, src_host: &str) -> String {
    let seen = wait_until(dom, ABORT_WAIT, |state, busy| {
        state == DomainStatus::Running && !busy
    });
    if seen.settled {
        format!("the guest runs on the source ({src_host}) again")
    } else {
        format!(
            "the source reports the guest {:?} after {} s -- check `virsh -c '{}' domstate {}`",
            seen.state,
            ABORT_WAIT.as_secs(),
            req.src_uri,
            req.domain
        )
    }
}

fn destination_words(req: &Request<'_>, mode: Mode) -> String {
    let how = if mode == Mode::PostCopy {
        " (finished in post-copy)"
    } else {
        ""
    };
    let Ok(conn) = Connect::open(Some(req.dst_uri)) else {
        return format!("the source reports the migration done{how}");
    };
    let host = conn.hostname().unwrap_or_else(|_| req.dst_uri.to_string());
    match conn
        .lookup_domain_by_name(req.domain)
        .map(|d| domain_status(&d))
    {
        Ok(DomainStatus::Running) => format!("the guest runs on {host}{how}"),
        Ok(state) => format!("the guest is on {host}, state {state:?}{how}"),
        Err(e) => format!(
            "the source reports the migration done{how}, but {host} says: {}",
            e.message()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan::flags;
    use virt::sys;

    #[test]
    fn flag_values_match_libvirt() {
        assert_eq!(flags::LIVE, sys::VIR_MIGRATE_LIVE);
        assert_eq!(flags::PEER2PEER, sys::VIR_MIGRATE_PEER2PEER);
        assert_eq!(flags::PERSIST_DEST, sys::VIR_MIGRATE_PERSIST_DEST);
        assert_eq!(flags::PAUSED, sys::VIR_MIGRATE_PAUSED);
        assert_eq!(flags::AUTO_CONVERGE, sys::VIR_MIGRATE_AUTO_CONVERGE);
        assert_eq!(flags::POSTCOPY, sys::VIR_MIGRATE_POSTCOPY);
        assert_eq!(flags::PARALLEL, sys::VIR_MIGRATE_PARALLEL);
    }
}
