//! `vmctl migrate DOMAIN --connect SRC_URI --to DST_URI`, the steps its recipe
//! (`commands::migrate_libvirt`) names: the prediction of a dry run, and the migration
//! itself (cargo feature `libvirt`): run on a blocking thread (`migration::libvirt::migrate`,
//! where the one loop, `migration::driver::drive`, drives the libvirt driver) while Ctrl-C
//! sets the loop's flag, then the report (a summary, or `-o json|yaml`) and the exit code.

use std::time::Duration;

use serde::Serialize;

#[cfg(feature = "libvirt")]
use crate::error::Error;
use crate::error::{Result, exit};
use crate::migration::plan::Plan;
use crate::migration::predict::Prediction;
#[cfg(feature = "libvirt")]
use crate::migration::{Outcome, Summary};
use crate::render::{OutputFormat, Style, structured, write_stdout};

/// The `-o json|yaml` document of a dry run.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct DryRun<'a> {
    api_version: &'static str,
    kind: &'static str,
    domain: &'a str,
    source: &'a str,
    destination: &'a str,
    plan: &'a Plan,
    /// `None` with the reason in `predictionUnavailable`.
    prediction: Option<&'a Prediction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prediction_unavailable: Option<&'a str>,
}

/// The `-o json|yaml` document of a migration.
#[cfg(feature = "libvirt")]
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct MigrationReport<'a> {
    api_version: &'static str,
    kind: &'static str,
    domain: &'a str,
    source: &'a str,
    destination: &'a str,
    plan: &'a Plan,
    memory_bytes: u64,
    budget_seconds: u64,
    /// The prediction made before the start (`--measure`), else the one made from pass 1
    /// (absent when the migration ended within pass 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    prediction: Option<&'a crate::migration::predict::Prediction>,
    stopped_by: Option<&'static str>,
    #[serde(flatten)]
    summary: &'a Summary,
}

/// What the command line asks for, validated.
#[cfg_attr(not(feature = "libvirt"), allow(dead_code))]
pub(crate) struct Request<'a> {
    pub(crate) domain: &'a str,
    pub(crate) src: &'a str,
    pub(crate) dst: &'a str,
    pub(crate) plan: Plan,
    pub(crate) timeout: Option<Duration>,
    pub(crate) measure_secs: Option<u32>,
    pub(crate) force: bool,
    pub(crate) progress_json: bool,
    pub(crate) output: OutputFormat,
    pub(crate) style: Style,
    /// `--journal`: where the run is recorded (issue 28).
    pub(crate) journal: Option<String>,
    /// When the command started: the summary's total is the time the operator waited.
    pub(crate) started: std::time::Instant,
}

/// The dry run's prediction: the guest's memory and dirty rate read from the source.
#[cfg(feature = "libvirt")]
pub(crate) async fn prediction(req: &Request<'_>) -> std::result::Result<Prediction, String> {
    let (src, domain, plan, secs) = (
        req.src.to_string(),
        req.domain.to_string(),
        req.plan.clone(),
        req.measure_secs,
    );
    let interrupt = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = interrupt_watcher(interrupt.clone()).ok();
    let flag = interrupt.clone();
    let joined = tokio::task::spawn_blocking(move || {
        crate::migration::libvirt::dry_run_prediction(&src, &domain, &plan, secs, &flag)
    })
    .await;
    if let Some(w) = watcher {
        w.abort();
    }
    joined.unwrap_or_else(|e| Err(format!("the prediction task failed: {e}")))
}

#[cfg(not(feature = "libvirt"))]
pub(crate) async fn prediction(_req: &Request<'_>) -> std::result::Result<Prediction, String> {
    Err("this vmctl was built without libvirt support (cargo feature `libvirt`): it cannot read the guest".into())
}

pub(crate) fn dry_run(
    req: &Request<'_>,
    predicted: std::result::Result<Prediction, String>,
) -> Result<i32> {
    if req.output.is_structured() {
        let doc = DryRun {
            api_version: crate::model::VMCTL_API_VERSION,
            kind: "LibvirtMigrationPlan",
            domain: req.domain,
            source: req.src,
            destination: req.dst,
            plan: &req.plan,
            prediction: predicted.as_ref().ok(),
            prediction_unavailable: predicted.as_ref().err().map(String::as_str),
        };
        crate::render::write_document(&structured(req.output, &doc)?)?;
    } else {
        let mut text = format!(
            "dry run: would live-migrate {} (nothing was changed)\n{}",
            crate::text::printable(req.domain),
            crate::text::printable_lines(&req.plan.describe(req.domain, req.src, req.dst))
        );
        match &predicted {
            Ok(p) => {
                text.push_str(&format!(
                    "  {:<22}{}\n",
                    "prediction",
                    crate::text::printable(&p.summary)
                ));
                for a in &p.alternatives {
                    text.push_str(&format!(
                        "  {:<22}{}\n",
                        "",
                        crate::migration::predict::alternative_text(a)
                    ));
                }
                for c in &p.caveats {
                    text.push_str(&format!("  {:<22}{c}\n", ""));
                }
            }
            Err(why) => text.push_str(&format!(
                "  {:<22}not available: {}\n",
                "prediction",
                crate::text::printable(why)
            )),
        }
        write_stdout(&text)?;
    }
    Ok(exit::OK)
}

#[cfg(not(feature = "libvirt"))]
pub(crate) async fn drive(_req: Request<'_>) -> Result<i32> {
    Err(crate::migration::no_libvirt())
}

#[cfg(feature = "libvirt")]
pub(crate) async fn drive(req: Request<'_>) -> Result<i32> {
    use std::io::IsTerminal;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use crate::migration::driver::Stop;
    use crate::migration::libvirt;
    use crate::render::progress::ProgressView;

    let interrupt = Arc::new(AtomicBool::new(false));
    let watcher = interrupt_watcher(interrupt.clone())?;

    let title = req.domain.to_string();
    let started_at = k8s_openapi::jiff::Timestamp::now();
    let mut view = if req.progress_json {
        ProgressView::json(&title, None)
    } else {
        ProgressView::new(req.style, std::io::stderr().is_terminal(), &title, None)
    };
    let (domain, src, dst) = (
        req.domain.to_string(),
        req.src.to_string(),
        req.dst.to_string(),
    );
    let (plan, timeout, measure_secs, force, started) = (
        req.plan.clone(),
        req.timeout,
        req.measure_secs,
        req.force,
        req.started,
    );
    let flag = interrupt.clone();
    let joined = tokio::task::spawn_blocking(move || {
        let request = libvirt::Request {
            src_uri: &src,
            dst_uri: &dst,
            domain: &domain,
            plan: &plan,
            interrupt: &flag,
            timeout,
            measure_secs,
            force,
            started,
        };
        let report = libvirt::migrate(&request, &mut view);
        (report, view)
    })
    .await;
    watcher.abort();
    let (report, mut view) =
        joined.map_err(|e| Error::Internal(format!("the migration task failed: {e}")))?;
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            view.close();
            return Err(e);
        }
    };
    // A Ctrl-C that came too late to matter (the migration had ended) changes nothing.
    let _ = interrupt.load(Ordering::SeqCst);

    let summary = &report.summary;
    // The run goes to the journal (issue 28); a journal that cannot be written is only said.
    let journal = super::journal::RunJournal::new(req.journal.as_deref(), req.src.to_string());
    if journal.enabled() {
        let series = crate::migration::series::downsample(
            &view.history(),
            crate::migration::series::DEFAULT_CAPACITY,
        );
        let run = crate::triage::record::LibvirtRun {
            domain: req.domain,
            source_uri: req.src,
            destination_uri: req.dst,
            summary,
            series: &series,
            started_at,
        };
        journal
            .write(&crate::triage::record::libvirt_record(
                &run,
                k8s_openapi::jiff::Timestamp::now(),
            ))
            .await;
    }
    if req.output.is_structured() && !req.progress_json {
        view.close();
        let doc = MigrationReport {
            api_version: crate::model::VMCTL_API_VERSION,
            kind: "LibvirtMigration",
            domain: req.domain,
            source: req.src,
            destination: req.dst,
            plan: &req.plan,
            memory_bytes: report.memory_bytes,
            budget_seconds: report.budget_secs,
            prediction: report.prediction.as_ref(),
            stopped_by: report.stopped_by.map(|s| match s {
                Stop::Controller(_) => "controller",
                Stop::Interrupt => "interrupt",
                Stop::Timeout => "timeout",
            }),
            summary,
        };
        crate::render::write_document(&structured(req.output, &doc)?)?;
    } else {
        view.finish(summary);
    }
    Ok(exit_code(summary, report.stopped_by))
}

/// 0 succeeded; 130 aborted by Ctrl-C; 6 aborted by --timeout; 5 the destination could not
/// be reached at all (nothing was sent); 1 any other failure or abort.
#[cfg(feature = "libvirt")]
fn exit_code(summary: &Summary, stopped_by: Option<crate::migration::driver::Stop>) -> i32 {
    use crate::migration::driver::Stop;
    match (summary.outcome, stopped_by) {
        (Some(Outcome::Succeeded), _) => exit::OK,
        (_, Some(Stop::Interrupt)) => exit::INTERRUPTED,
        (_, Some(Stop::Timeout)) => exit::TIMEOUT,
        _ if summary.cause.as_deref() == Some("connection-failure")
            && summary.data_processed == 0 =>
        {
            exit::CLUSTER
        }
        _ => exit::FINDING,
    }
}

/// Sets `flag` on every Ctrl-C (SIGINT) until aborted. Registered before the migration
/// starts, so no SIGINT can kill vmctl with a migration in flight.
#[cfg(feature = "libvirt")]
fn interrupt_watcher(
    flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Result<tokio::task::JoinHandle<()>> {
    use std::sync::atomic::Ordering;
    use tokio::signal::unix::{SignalKind, signal};

    let mut sigint = signal(SignalKind::interrupt())
        .map_err(|e| Error::Internal(format!("installing the Ctrl-C handler: {e}")))?;
    Ok(tokio::spawn(async move {
        while sigint.recv().await.is_some() {
            flag.store(true, Ordering::SeqCst);
        }
    }))
}
