//! The KubeVirt driver of the one migration loop (`migration::driver`): a migration vmctl
//! started through KubeVirt, as [`drive`](crate::migration::driver::drive) sees it.
//!
//! - [`Driver::wait`]: the follower's watches (`migration::follow`) until the next one-second
//!   tick, the migration's end, Ctrl-C or the deadline. Each change is drawn as it comes
//!   (phase lines, `render::follow`), and the temporary policy is removed once KubeVirt
//!   recorded it at the hand-off;
//! - [`Driver::sample`]: virt-handler's metrics (or a Prometheus) while the migration runs,
//!   as the `JobSample` both drivers share; without metrics, the phases only (and off a
//!   terminal, a heartbeat line every 10 s);
//! - [`Driver::supports`] nothing: virt-handler's migration monitor decides (see
//!   `migration::driver`, "What KubeVirt cannot take from outside"); [`Driver::abort`]
//!   deletes the VMIM (kubevirt/kubevirt `pkg/virt-controller/watch/migration/migration.go`:
//!   a deleted unfinished migration is aborted), used only by the Ctrl-C policy before the
//!   migration is under way.
//!
//! It lives in `operate/`: it draws (through `render::follow`) and reads the cluster.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::cluster::{Kind, Query, Source};
use crate::error::{Error, Result};
use crate::migration::JobSample;
use crate::migration::controller::Decision;
use crate::migration::driver::{Driver, DriverError, JobResult};
use crate::migration::follow::{
    FollowSpec, Followed, Follower, Key, MetricsSource, Stop, Update, handed_off, mode_of,
    read_metrics, sample_from,
};
use crate::migration::kubevirt::{KubeVirtDriver, MetricsUnavailable};
use crate::model::vmim::MigrationPhase;
use crate::model::{Pod, VirtualMachineInstance};
use crate::policy::links::MIGRATION_JOB_UID_LABEL;
use crate::render::follow::{self as text, report_changes};
use crate::render::progress::ProgressView;
use crate::render::stderr_line;

/// What every decision on a KubeVirt migration answers.
const MONITOR_OWNS_IT: &str =
    "KubeVirt's migration monitor runs this migration; vmctl can only abort it (delete the VMIM)";

/// How the job is set up: the migration vmctl started and how to follow it.
pub(crate) struct JobSetup<'a> {
    pub(crate) driver: &'a KubeVirtDriver<'a>,
    pub(crate) namespace: &'a str,
    /// The VMI.
    pub(crate) name: &'a str,
    pub(crate) followed: Followed,
    pub(crate) metrics: MetricsSource,
    /// When vmctl started (the view's clock and `--timeout` count from here).
    pub(crate) started: Instant,
    pub(crate) deadline: Option<Instant>,
    /// The temporary policy, until the hand-off.
    pub(crate) policy: Option<String>,
    /// Follow to the end (else: until the hand-off).
    pub(crate) wait: bool,
    pub(crate) budget: Option<u64>,
    /// Progress bars on a terminal (else one heartbeat line per 10 s).
    pub(crate) bars: bool,
    /// Set when the follower hears Ctrl-C; the loop reads it.
    pub(crate) interrupt: &'a AtomicBool,
}

/// One KubeVirt migration under the loop; see the module documentation.
pub(crate) struct KubeVirtJob<'a> {
    driver: &'a KubeVirtDriver<'a>,
    namespace: &'a str,
    name: &'a str,
    vmim_name: String,
    /// What is known of the migration (and has been said).
    pub(crate) f: Followed,
    follower: Follower,
    metrics: MetricsSource,
    started: Instant,
    /// The temporary policy, until the hand-off.
    pub(crate) policy_alive: Option<String>,
    wait: bool,
    budget: Option<u64>,
    bars: bool,
    interrupt: &'a AtomicBool,
    /// Why there are no progress bars (metrics unreadable): phases only.
    degraded: Option<String>,
    last_heartbeat_ms: u64,
    target_pod: Option<Pod>,
    last_target_lookup: u64,
    /// A watch gave up: following failed (the migration itself goes on).
    pub(crate) failed: Option<Error>,
}

impl<'a> KubeVirtJob<'a> {
    /// Sets up the watches on the migration and its VMI (nothing is sent before the first
    /// wait).
    pub(crate) fn new(setup: JobSetup<'a>) -> Result<Self> {
        let vmim_name = setup
            .followed
            .vmim
            .as_ref()
            .map(|m| m.name().to_string())
            .unwrap_or_default();
        let spec = FollowSpec::one(setup.namespace, &vmim_name, setup.name)?
            .with_tick(Duration::from_secs(1))
            .with_deadline(setup.deadline);
        let mut follower = Follower::new(setup.driver.live(), spec);
        if let Some(m) = setup.followed.vmim.clone() {
            follower.mirror.follow_vmim(m);
        }
        follower
            .mirror
            .follow_vmi((setup.namespace.to_string(), setup.name.to_string()), None);
        Ok(KubeVirtJob {
            driver: setup.driver,
            namespace: setup.namespace,
            name: setup.name,
            vmim_name,
            f: setup.followed,
            follower,
            metrics: setup.metrics,
            started: setup.started,
            policy_alive: setup.policy,
            wait: setup.wait,
            budget: setup.budget,
            bars: setup.bars,
            interrupt: setup.interrupt,
            degraded: None,
            last_heartbeat_ms: 0,
            target_pod: None,
            last_target_lookup: 0,
            failed: None,
        })
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Takes in what the watches saw, draws what changed; true when following is done (the
    /// migration ended, or was handed off without `wait`).
    async fn settle(&mut self, view: &mut ProgressView) -> bool {
        let key: Key = (self.namespace.to_string(), self.vmim_name.clone());
        let vmi_key: Key = (self.namespace.to_string(), self.name.to_string());
        let mirror = &self.follower.mirror;
        if let Some(m) = mirror.vmim_last(&key) {
            self.f.vmim = Some(m.clone());
        }
        self.f.vmim_deleted = mirror.vmim_gone(&key);
        self.f.vmi = mirror.vmi_last(&vmi_key).cloned();

        let now_ms = self.now_ms();
        report_changes(
            &mut self.f,
            view,
            now_ms,
            self.target_pod.as_ref(),
            self.budget,
        );
        self.remove_policy_after_hand_off(view, now_ms).await;
        let f = &mut self.f;
        if f.vmim_deleted || f.phase().is_final() {
            // The VMIM's watch can report the end before the VMI's: read the VMI once more.
            if let Ok(Some(fresh)) = crate::cluster::get_as::<VirtualMachineInstance>(
                self.driver.live(),
                Kind::VirtualMachineInstance,
                Some(self.namespace),
                self.name,
            )
            .await
            {
                f.vmi = Some(fresh);
                report_changes(f, view, now_ms, self.target_pod.as_ref(), self.budget);
            }
            return true;
        }
        !self.wait && handed_off(f)
    }

    /// The policy has done its job once KubeVirt recorded it at the hand-off.
    async fn remove_policy_after_hand_off(&mut self, view: &mut ProgressView, now_ms: u64) {
        if !handed_off(&self.f) {
            return;
        }
        let Some(p) = self.policy_alive.take() else {
            return;
        };
        let applied = self.f.state().and_then(|s| s.migration_policy_name.clone());
        match applied.as_deref() {
            Some(a) if a == p => view.event_at(
                now_ms,
                &format!("policy {p} applied (migrationState.migrationPolicyName); removing it"),
            ),
            Some(other) => view.event_at(
                now_ms,
                &format!(
                    "warning: KubeVirt applied policy {other}, not {p} (a policy created meanwhile?)"
                ),
            ),
            // KubeVirt names the policy it matched at the hand-off (`matchMigrationPolicy`);
            // none: the temporary policy did not match, and what it allowed does not apply.
            None => view.event_at(
                now_ms,
                &format!(
                    "warning: KubeVirt applied no MigrationPolicy at the hand-off ({p} did not match the VMI): this migration runs under the cluster's configuration, without what the policy allowed; removing {p}"
                ),
            ),
        }
        let _ = self.driver.delete_policy(&p).await;
    }

    /// Once a second, while scheduling: the target pod, for the Scheduling line
    /// (unschedulable, …).
    async fn look_up_target_pod(&mut self) -> Result<()> {
        let now_ms = self.now_ms();
        if matches!(
            self.f.phase(),
            MigrationPhase::Pending | MigrationPhase::Scheduling
        ) && (self.target_pod.is_none() || now_ms >= self.last_target_lookup + 2000)
        {
            self.last_target_lookup = now_ms;
            if let Some(uid) = self.f.vmim.as_ref().and_then(|m| m.uid()) {
                let q = Query::namespace(Some(self.namespace))
                    .with_label(&format!("{MIGRATION_JOB_UID_LABEL}={uid}"))?;
                if let Ok(pods) = self.driver.live().list_decoded::<Pod>(Kind::Pod, &q).await {
                    self.target_pod = pods.into_iter().next();
                }
            }
        }
        Ok(())
    }

    /// Off a terminal without bars, one line per interval keeps the log alive.
    fn heartbeat(&mut self, now_ms: u64) {
        let f = &self.f;
        if !self.bars
            && (self.degraded.is_some() || f.phase() != MigrationPhase::Running)
            && now_ms >= self.last_heartbeat_ms + 10_000
        {
            self.last_heartbeat_ms = now_ms;
            let state = f.state();
            let streaming_ms = state
                .and_then(|s| s.start_timestamp.as_ref())
                .map(|_| f.started_ms.map_or(now_ms, |s| now_ms.saturating_sub(s)));
            stderr_line(&text::heartbeat(
                now_ms,
                f.phase(),
                state.and_then(|s| s.mode.as_ref()),
                streaming_ms,
                self.budget,
            ));
        }
    }

    /// The migration's result as the loop takes it (the summary reads `f`, not this).
    fn result(&self) -> JobResult {
        match (self.f.phase(), &self.failed) {
            (_, Some(e)) => Err(e.to_string()),
            (MigrationPhase::Succeeded, None) => Ok(()),
            _ if !self.wait && !self.f.phase().is_final() && !self.f.vmim_deleted => Ok(()),
            _ => Err(self
                .f
                .state()
                .and_then(|s| s.failure_reason.clone())
                .unwrap_or_else(|| "the migration failed".into())),
        }
    }
}

impl Driver<ProgressView> for KubeVirtJob<'_> {
    async fn wait(&mut self, _period: Duration, view: &mut ProgressView) -> Option<JobResult> {
        loop {
            if self.settle(view).await {
                return Some(self.result());
            }
            let update = match self.follower.next().await {
                Ok(u) => u,
                Err(e) => {
                    self.failed = Some(e);
                    return Some(self.result());
                }
            };
            match update {
                Update::Stop(Stop::Interrupted) => {
                    self.interrupt.store(true, Ordering::SeqCst);
                    return None;
                }
                // The loop compares the clock with `--timeout` itself.
                Update::Stop(Stop::DeadlinePassed) => return None,
                Update::Tick => {
                    if let Err(e) = self.look_up_target_pod().await {
                        self.failed = Some(e);
                        return Some(self.result());
                    }
                    return None;
                }
                Update::Changed { .. } | Update::Reconnecting(_) | Update::Recovered(_) => {}
            }
        }
    }

    fn elapsed_ms(&self) -> u64 {
        self.now_ms()
    }

    async fn sample(&mut self, elapsed_ms: u64, view: &mut ProgressView) -> Option<JobSample> {
        let mut sample = None;
        if self.f.phase() == MigrationPhase::Running && self.degraded.is_none() {
            let mode = mode_of(self.f.state().and_then(|s| s.mode.as_ref()));
            let (namespace, name) = (self.namespace, self.name);
            match read_metrics(self.driver, &mut self.metrics, &self.f, namespace, name).await {
                Ok(m) if !m.is_empty() => sample = Some(sample_from(&m, elapsed_ms, mode)),
                Ok(_) => {}
                Err(MetricsUnavailable(why)) => {
                    view.event_at(
                        elapsed_ms,
                        &format!("no progress bars: {why}; following the phases only"),
                    );
                    self.degraded = Some(why);
                }
            }
        }
        self.heartbeat(elapsed_ms);
        sample
    }

    fn supports(&self, _decision: &Decision) -> bool {
        false
    }

    /// Under way once the target is being prepared or the copy started: from then on the
    /// migration belongs to the cluster.
    fn under_way(&self) -> bool {
        self.f.state().is_some_and(|s| s.start_timestamp.is_some())
            || matches!(
                self.f.phase(),
                MigrationPhase::PreparingTarget
                    | MigrationPhase::TargetReady
                    | MigrationPhase::Running
                    | MigrationPhase::Succeeded
                    | MigrationPhase::Failed
            )
    }

    /// KubeVirt's completion budget counts from `migrationState.startTimestamp`.
    fn streaming_since_ms(&self) -> Option<u64> {
        self.f.started_ms
    }

    /// The migration's own `progressTimeout` (in `migrationState.migrationConfiguration`),
    /// else the configuration in force when vmctl started it.
    fn monitor_progress_timeout_secs(&self) -> Option<u64> {
        Some(
            self.f
                .state()
                .and_then(|s| s.migration_configuration.as_ref())
                .and_then(|c| c.progress_timeout)
                .unwrap_or(self.f.progress_timeout),
        )
    }

    async fn apply(&mut self, _decision: Decision) -> std::result::Result<(), DriverError> {
        Err(DriverError(MONITOR_OWNS_IT.into()))
    }

    async fn abort(&mut self) -> std::result::Result<(), DriverError> {
        self.driver
            .abort_vmim(
                self.namespace,
                &self.vmim_name,
                "vmctl migrate (Ctrl-C before the migration was under way)",
            )
            .await
            .map(|_| ())
            .map_err(|e| DriverError(e.to_string()))
    }

    async fn resume(&mut self) -> std::result::Result<bool, DriverError> {
        Ok(false)
    }

    async fn max_downtime_ms(&mut self) -> Option<u64> {
        None
    }

    async fn set_max_downtime_ms(&mut self, _ms: u64) -> std::result::Result<(), DriverError> {
        Err(DriverError(MONITOR_OWNS_IT.into()))
    }
}
