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

use futures::executor::block_on;
use virt::connect::Connect;
use virt::domain::{Domain, MigrateParameters};
use virt::sys;

use super::classify::{self, DomainStatus, Record};
use super::controller::{Controller, Decision};
pub use super::driver::Stop;
use super::driver::{
    Driver, DriverError, Policy, Progress, SAMPLE_PERIOD, Settings, drive, set_initial_downtime,
};
use super::libvirt_domain::{
    api_error, connect, domain_status, ffi, job_running, job_stats, lookup, measure_dirty_rate,
    to_completed, to_sample, wait_until,
};
use super::plan::Plan;
use super::predict::{self, Prediction};
use super::sample::{JobSample, Mode, Outcome, Summary};
use super::series::{Series, SeriesPoint};
use crate::error::{Error, Result};

/// How long an abort may take to give the guest back to the source.
const ABORT_WAIT: Duration = Duration::from_secs(60);

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
    /// `--measure S`: measure the dirty rate for this many seconds before starting and
    /// predict (refusing a migration that cannot complete); `None` (the default): start at
    /// once, the controller predicts from pass 1.
    pub measure_secs: Option<u32>,
    /// When the command started: the summary's total is the time the operator waited.
    pub started: Instant,
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
    /// The prediction made before the start (`--measure`), else the one made from pass 1
    /// (absent when the migration ended in pass 1).
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
    /// Every sample, bounded and downsampled, for the record (`explain --connect` draws it).
    series: Series,
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
            series: Series::new(classify::RECORD_SERIES_POINTS),
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

/// Every call blocks its thread (libvirt's API is synchronous): the loop runs on a blocking
/// thread (see `migrate`), where waiting on the migration thread is what it should do.
impl<P: Progress + ?Sized> Driver<P> for LibvirtDriver<'_> {
    async fn wait(&mut self, period: Duration, _progress: &mut P) -> Option<MigrateResult> {
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

    async fn sample(&mut self, elapsed_ms: u64, _progress: &mut P) -> Option<JobSample> {
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
        if sample.total() > 0 {
            self.series.push_sample(&sample, sample.iteration);
        }
        Some(sample)
    }

    fn supports(&self, _decision: &Decision) -> bool {
        true
    }

    async fn apply(&mut self, decision: Decision) -> std::result::Result<(), DriverError> {
        match decision {
            Decision::StartPostCopy => ffi::start_postcopy(self.dom),
            Decision::RaiseMaxDowntime { ms } => self.dom.migrate_set_max_downtime(ms, 0),
            Decision::Pause => self.dom.suspend().map(|_| ()),
            Decision::Abort { .. } => ffi::abort_job(self.dom),
            Decision::Continue => Ok(()),
        }
        .map_err(|e| DriverError(e.message().to_string()))
    }

    async fn abort(&mut self) -> std::result::Result<(), DriverError> {
        ffi::abort_job(self.dom).map_err(|e| DriverError(e.message().to_string()))
    }

    async fn resume(&mut self) -> std::result::Result<bool, DriverError> {
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

    async fn max_downtime_ms(&mut self) -> Option<u64> {
        ffi::max_downtime(self.dom)
    }

    async fn set_max_downtime_ms(&mut self, ms: u64) -> std::result::Result<(), DriverError> {
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
    let budget_secs = req.plan.controller_config(memory_bytes, false).budget_secs;
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
            let mut report = refused(p, memory_bytes, budget_secs, progress);
            report.summary.total_ms = wall_ms(req.started);
            return Ok(report);
        }
    }
    let mut controller =
        Controller::new(req.plan.controller_config(memory_bytes, measured.is_some()));

    let mut driver =
        LibvirtDriver::new(&dom, req.src_uri, req.domain).with_prior_dirty_rate(measured);
    // The max downtime is a property of the source QEMU: remembered to put it back if the
    // migration does not happen.
    let downtime = block_on(set_initial_downtime(
        &mut driver,
        req.plan.initial_downtime_ms,
        progress,
    ));
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
        policy: Policy::LIBVIRT,
    };
    // The loop's futures never wait on anything but this thread's blocking calls: polled
    // here, on the blocking thread the command runs the migration on.
    let driven = block_on(drive(&mut driver, &mut controller, progress, &settings));
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
        job_ms: Some(driven.elapsed_ms),
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
            summary.job_ms = Some(ms);
        }
    }
    let prediction = prediction.or_else(|| controller.prediction().cloned());
    if summary.data_processed == 0
        && let Some(s) = &driven.last_sample
    {
        summary.data_processed = s.data_processed;
        summary.iterations = s.iteration;
    }

    match &driven.end.result() {
        Ok(()) => {
            summary.outcome = Some(Outcome::Succeeded);
            summary.cause = Some("succeeded".into());
            summary.message = destination_words(req, mode);
        }
        Err(message) => {
            // After the switch: where the guest is now (libvirt's error alone does not say).
            let fate = (mode == Mode::PostCopy).then(|| {
                super::libvirt_fate::observe(
                    &dom,
                    &fate_names(req),
                    req.interrupt,
                    &src_host,
                    message,
                    progress,
                )
            });
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
    summary.total_ms = wall_ms(req.started);

    // Leave a record for `explain --connect` where the guest now is: libvirt keeps
    // statistics only of jobs that succeeded. Best effort: a migration is not failed by it.
    let record = record_of(&summary, req.dst_uri, &driver.series.points());
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
    // The record went to the destination: the operator waited for that too.
    summary.total_ms = wall_ms(req.started);
    Ok(Report {
        summary,
        stopped_by,
        memory_bytes,
        budget_secs,
        prediction,
    })
}

/// Milliseconds since `started`.
fn wall_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
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

fn record_of(summary: &Summary, destination: &str, series: &[SeriesPoint]) -> Record {
    Record {
        at: k8s_openapi::jiff::Timestamp::now().to_string(),
        outcome: summary
            .outcome
            .map_or("unknown", |o| o.as_str())
            .to_string(),
        cause: summary.cause.clone().unwrap_or_default(),
        message: summary.message.clone(),
        destination: destination.to_string(),
        // The migration's own time (the operator's wait is the command's business).
        total_ms: summary.job_ms.unwrap_or(summary.total_ms),
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
        progress_series: super::series::downsample(series, classify::RECORD_SERIES_POINTS),
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

fn fate_names<'a>(req: &Request<'a>) -> super::libvirt_fate::Migration<'a> {
    super::libvirt_fate::Migration {
        domain: req.domain,
        src_uri: req.src_uri,
        dst_uri: req.dst_uri,
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
