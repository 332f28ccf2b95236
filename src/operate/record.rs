//! `vmctl record`: follows every migration in scope with the follower `status --watch` uses
//! (`migration::follow`: one LIST per kind, then watches that resume, re-list on 410 and back
//! off, with "reconnecting…" lines) and journals each one's end, once.
//!
//! - Which migrations ended, and their evidence, is `migration::ended` (pure); what `explain`
//!   reads beside the watched objects is read when a migration ends (the events about its
//!   objects, one LIST per object; the policies, Namespace and PDBs once per namespace and
//!   batch), so the diagnosis is explain's. Each is
//!   diagnosed as `explain` diagnoses (`triage::diagnose`), made a record
//!   (`triage::record::kubevirt_record`, id `kubevirt:<VMIM uid>`) and committed with the
//!   migration watch's resourceVersion (bookmark `vmims@<cluster>`) in one transaction: a
//!   commit per change (a small batch when several end together), so a kill -9 loses at most
//!   the commit in flight. A record's VMI may trail its VMIM (two watches): the recorder
//!   waits up to [`CATCH_UP`] for the VMI's `migrationState` to say the migration is over.
//! - At start: the first list's final migrations not in the journal yet are recorded (they
//!   ended while the recorder was down), those there are counted, not logged. With a
//!   bookmark, the migration watch is first replayed from it (until shortly after the first
//!   list is in), so migrations that ended *and were deleted* meanwhile are recorded too; a
//!   410 says once what could not be recovered.
//! - Faults: a full journal stops the writing, says so once, keeps watching; the records wait
//!   in memory (at most [`QUEUE_BOUND`], oldest dropped first and counted) and are retried
//!   every [`RETRY_FULL`]; a busy or unreachable journal likewise ([`RETRY_BUSY`]). A
//!   damaged journal, or one from a newer vmctl, ends the recorder (exit 7). Ctrl-C or
//!   SIGTERM (a Deployment's stop) ends it after the commit in flight (and one last commit
//!   of what was waiting), exit 0.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::FutureExt;
use k8s_openapi::jiff::Timestamp;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::cluster::Kind;
use crate::cluster::live::LiveSource;
use crate::cluster::watch::{Boxed, Replayed};
use crate::context::{AnySource, Context};
use crate::error::{Error, JournalFault, Result, exit};
use crate::journal::Journal;
use crate::migration::ended::{self, Ended, Tracker};
use crate::migration::follow::{Ending, FollowSpec, Follower, Mirror, Observer, Update, follow};
use crate::model::journal::{MigrationRecord, RecordOutcome, RecordedBy, Retention};
use crate::model::{Event, KubeVirt, VirtualMachineInstanceMigration};
use crate::render::record::{self as text, Totals};
use crate::render::{OutputFormat, stderr_line, write_stdout};
use crate::triage::{Evidence, LoopThresholds, Source, Unread};

/// Records that wait in memory while the journal cannot be written.
pub const QUEUE_BOUND: usize = 10_000;
/// A full journal is tried again this often.
const RETRY_FULL: Duration = Duration::from_secs(30);
/// Test hook: another [`RETRY_FULL`], in seconds (tests/record.rs, so its full-disk case does
/// not wait half a minute). Not documented for operators.
const RETRY_FULL_ENV: &str = "VMCTL_RECORD_RETRY_FULL_SECS";

/// A namespace with this many migrations in one chunk has its events read in one LIST
/// ([`crate::evidence::namespace_events`]) rather than one per object of each migration
/// (five or so each: at 10,000 migrations caught up at once, 50,000 LISTs).
const NAMESPACE_EVENTS_FROM: usize = 4;

/// The most events of one namespace read in one LIST (two pages); past it, one LIST per
/// object, each bounded by its object.
const NAMESPACE_EVENTS_MAX: usize = 1000;

fn retry_full() -> Duration {
    std::env::var(RETRY_FULL_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|s| (1..=3600).contains(s))
        .map_or(RETRY_FULL, Duration::from_secs)
}
/// A busy (locked) or unreachable journal is tried again this often.
const RETRY_BUSY: Duration = Duration::from_secs(1);
/// Records made and committed at a time (see `Recorder::due_records`).
const WRITE_CHUNK: usize = 200;
/// Migrations whose events are read at once (each: a LIST per object involved).
const PARALLEL_READS: usize = 16;
/// The most one read around a migration (its events, its namespace's policies and PDBs) may
/// take: an API server that does not answer costs a record what it could not read (said, as
/// `explain` says it), not the recorder's stop (SIGTERM) or its watching.
const READ_BUDGET: Duration = Duration::from_secs(10);

/// Warnings remembered so that each is said once.
const NOTES_KEPT: usize = 1000;

fn no_answer() -> Error {
    Error::Timeout {
        message: format!(
            "the API server did not answer within {} s",
            READ_BUDGET.as_secs()
        ),
    }
}
/// The follower's tick: pending records, retries, pruning, the stop signal.
const TICK: Duration = Duration::from_secs(1);
/// How long a record waits for its VMI to show the migration's end.
const CATCH_UP: Duration = Duration::from_secs(2);
/// Pruning by `--retain` and `--max-size`, after the one at start.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);
/// The bookmark is written on its own (no record to carry it) at most this often.
const BOOKMARK_EVERY: Duration = Duration::from_secs(60);
/// The replay's watch, at most (the server ends it); it stops earlier, [`REPLAY_AFTER_LIST`]
/// after the follower's first list of migrations is in.
const REPLAY_SECONDS: u32 = 60;
const REPLAY_AFTER_LIST: Duration = Duration::from_secs(1);

/// What `commands::record` settled.
pub struct Settings {
    pub cluster: String,
    pub retention: Retention,
    pub scope: ended::Scope,
    /// "all namespaces", "namespace prod".
    pub scope_words: String,
    pub loops: LoopThresholds,
    pub output: OutputFormat,
}

/// The bookmark's name for a cluster.
pub fn bookmark_name(cluster: &str) -> String {
    format!("vmims@{cluster}")
}

fn now_ms() -> i64 {
    Timestamp::now().as_millisecond()
}

type ReplayTask = JoinHandle<Result<Replayed<Boxed<VirtualMachineInstanceMigration>>>>;

struct Recorder<'a> {
    ctx: &'static Context,
    journal: &'a Journal,
    settings: &'a Settings,
    bookmark: String,
    tracker: Tracker,
    ready: BTreeSet<Kind>,
    started: bool,
    kubevirt_read: Option<JoinHandle<Result<Vec<KubeVirt>>>>,
    kubevirt: Option<Option<KubeVirt>>,
    replay: Option<ReplayTask>,
    replay_stop: Option<oneshot::Sender<()>>,
    replay_from: Option<String>,
    listed_at: Option<Instant>,
    /// A change of migrations since the last look (`changed`), and since the last full pass.
    vmims_changed: bool,
    since_scan: bool,
    scan_due: bool,
    /// Ended, waiting for the VMI to catch up (until the instant).
    pending: Vec<(Ended, Instant)>,
    /// Records not written yet (the journal refused them), oldest first.
    queue: VecDeque<MigrationRecord>,
    fault: Option<JournalFault>,
    retry_at: Option<Instant>,
    bookmark_written: Option<String>,
    bookmark_at: Instant,
    prune_at: Instant,
    totals: Totals,
    stop: Arc<AtomicBool>,
    /// The warnings said (each once).
    said: BTreeSet<String>,
}

impl Recorder<'_> {
    /// The KubeVirt CR, once its read is done (a failure: KubeVirt's defaults, said once).
    fn poll_kubevirt(&mut self) {
        let Some(handle) = self.kubevirt_list_done() else {
            return;
        };
        self.kubevirt = Some(match handle {
            Ok(Ok(list)) => list.into_iter().next(),
            Ok(Err(e)) => {
                stderr_line(&format!(
                    "warning: could not read the KubeVirt CR ({}): KubeVirt's defaults are assumed in the diagnoses",
                    crate::text::printable(&e.to_string())
                ));
                None
            }
            Err(e) => {
                stderr_line(&format!("warning: reading the KubeVirt CR: {e}"));
                None
            }
        });
    }

    #[allow(clippy::type_complexity)]
    fn kubevirt_list_done(
        &mut self,
    ) -> Option<std::result::Result<Result<Vec<KubeVirt>>, tokio::task::JoinError>> {
        let done = self.kubevirt_read.as_mut()?.now_or_never()?;
        self.kubevirt_read = None;
        Some(done)
    }

    fn kubevirt(&self) -> Option<&KubeVirt> {
        self.kubevirt.as_ref().and_then(Option::as_ref)
    }

    /// Takes migrations that ended: those already in the journal are counted, the others
    /// wait (until `until`) for their VMI.
    async fn take(&mut self, ended: Vec<Ended>, until: Instant) -> Result<usize> {
        let mut new = 0;
        for e in ended {
            let id = MigrationRecord::kubevirt_id(e.uid());
            if self.journal.contains(&id).await.unwrap_or(false) {
                self.totals.already += 1;
                continue;
            }
            new += 1;
            self.pending.push((e, until));
        }
        Ok(new)
    }

    /// The records of the pending migrations whose VMI caught up (all of them with `all`),
    /// at most [`WRITE_CHUNK`]: the rest stay pending for the next call. A record holds the
    /// objects of its diagnosis (tens of kilobytes as JSON values): made and written a chunk
    /// at a time, a first list of 10,000 ended migrations is not 10,000 records in memory.
    ///
    /// Each is diagnosed from what `explain` reads: the mirror's objects, and read around
    /// them ([`Recorder::read_around`]) the events about the objects involved, the
    /// MigrationPolicies, the Namespace and its PDBs.
    async fn due_records(&mut self, mirror: &Mirror, all: bool) -> Vec<MigrationRecord> {
        let now = Instant::now();
        let (mut due, mut wait): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|(e, until)| all || *until <= now || ended::vmi_caught_up(mirror, e));
        if due.len() > WRITE_CHUNK {
            wait.extend(due.drain(WRITE_CHUNK..));
        }
        self.pending = wait;
        if due.is_empty() {
            return Vec::new();
        }
        let at = Timestamp::now();
        let made: Vec<(Ended, Evidence)> = due
            .into_iter()
            .map(|(e, _)| {
                let evidence =
                    ended::evidence_for(mirror, &e, self.kubevirt(), at, self.settings.loops);
                (e, evidence)
            })
            .collect();
        let made = self.read_around(made).await;
        let mut records = Vec::new();
        for (e, evidence) in made {
            let mut diagnosis = crate::triage::diagnose(&evidence);
            ended::settle_vanished(&mut diagnosis, &e);
            match crate::triage::record::kubevirt_record(
                &evidence,
                &diagnosis,
                RecordedBy::Record,
                at,
                &self.settings.cluster,
                None,
            ) {
                Some(r) => records.push(r),
                None => stderr_line(&text::not_final(
                    at,
                    &e.key.0,
                    &e.key.1,
                    diagnosis.outcome.as_str(),
                )),
            }
        }
        records
    }

    /// Completes each evidence with what `explain` reads beside the recorder's watches: per
    /// namespace once (MigrationPolicies, the Namespace, its PDBs), per migration the events
    /// about its VMIM, its VMI and its pods (then the target pods the VMIM's events name),
    /// [`PARALLEL_READS`] migrations at a time: taken from one LIST of the namespace's events
    /// when the chunk holds [`NAMESPACE_EVENTS_FROM`] migrations of it and the namespace has
    /// at most [`NAMESPACE_EVENTS_MAX`] events, else one LIST per object. A read that fails is what the evidence says
    /// it could not read (as `explain` says it); each note is said once.
    async fn read_around(&mut self, made: Vec<(Ended, Evidence)>) -> Vec<(Ended, Evidence)> {
        use futures::StreamExt;
        let ctx = self.ctx;
        let namespaces: BTreeSet<String> = made
            .iter()
            .map(|(_, ev)| ev.vmi_namespace.clone())
            .collect();
        let per_ns = futures::future::join_all(namespaces.into_iter().map(|ns| async move {
            let mut notes = Vec::new();
            let around = tokio::time::timeout(
                READ_BUDGET,
                crate::evidence::around_namespace(ctx, &ns, &mut notes),
            )
            .await
            .unwrap_or_else(|_| Err(no_answer()));
            (ns, around, notes)
        }))
        .await;
        let mut arounds: HashMap<String, ended::Around> = HashMap::new();
        for (ns, around, notes) in per_ns {
            for n in notes {
                self.note_once(n);
            }
            let around = around.unwrap_or_else(|e| {
                let message = e.to_string();
                self.note_once(format!(
                    "could not read the MigrationPolicies, Namespace and PodDisruptionBudgets of {ns} ({message}): the diagnoses assume none"
                ));
                ended::Around {
                    unread: [
                        Source::MigrationPolicies,
                        Source::Namespace,
                        Source::PodDisruptionBudgets,
                    ]
                    .into_iter()
                    .map(|source| Unread {
                        source,
                        status: None,
                        message: message.clone(),
                    })
                    .collect(),
                    ..ended::Around::default()
                }
            });
            arounds.insert(ns, around);
        }
        // A namespace with several migrations in this chunk: its events in one LIST, when
        // they are few enough to hold; else (and on any failure) one LIST per object.
        let mut per_ns: HashMap<&str, usize> = HashMap::new();
        for (_, ev) in &made {
            *per_ns.entry(ev.vmi_namespace.as_str()).or_default() += 1;
        }
        let whole: Vec<String> = per_ns
            .into_iter()
            .filter(|(_, n)| *n >= NAMESPACE_EVENTS_FROM)
            .map(|(ns, _)| ns.to_string())
            .collect();
        let ns_events: HashMap<String, Vec<serde_json::Value>> =
            futures::stream::iter(whole.into_iter().map(|ns| async move {
                let read = tokio::time::timeout(
                    READ_BUDGET,
                    crate::evidence::namespace_events(ctx, &ns, NAMESPACE_EVENTS_MAX),
                )
                .await;
                (ns, read)
            }))
            .buffer_unordered(PARALLEL_READS)
            .filter_map(|(ns, read)| async move {
                match read {
                    Ok(Ok(Some(values))) => Some((ns, values)),
                    _ => None,
                }
            })
            .collect()
            .await;
        let ns_events = &ns_events;
        let read: Vec<(Ended, Evidence, EventsRead)> = futures::stream::iter(made)
            .map(|(e, ev)| async move {
                let whole = ns_events.get(&ev.vmi_namespace).map(Vec::as_slice);
                let events = read_events(ctx, &ev, whole).await;
                (e, ev, events)
            })
            .buffered(PARALLEL_READS)
            .collect()
            .await;
        let mut out = Vec::with_capacity(read.len());
        for (e, mut ev, events) in read {
            for n in events.notes {
                self.note_once(n);
            }
            for s in events.skipped {
                self.note_once(format!("skipped, it does not decode: {s}"));
            }
            let mut around = arounds.get(&ev.vmi_namespace).cloned().unwrap_or_default();
            around.events = events.events;
            around.unread.extend(events.unread);
            ended::complete(&mut ev, around);
            out.push((e, ev));
        }
        out
    }

    /// A warning on stderr, once per recorder (a 403 on every batch is said the first time).
    /// At most [`NOTES_KEPT`] are remembered (a night of events that do not decode, each
    /// named, must not grow the recorder): past that, a note is said each time.
    fn note_once(&mut self, note: String) {
        let new = if self.said.len() < NOTES_KEPT {
            self.said.insert(note.clone())
        } else {
            !self.said.contains(&note)
        };
        if new {
            stderr_line(&format!("warning: {}", crate::text::printable(&note)));
        }
    }

    /// Commits `records` (after those waiting) with the bookmark; on a fault keeps them
    /// waiting. Only a damaged journal, or one from a newer vmctl, is an error.
    async fn write(&mut self, records: Vec<MigrationRecord>, force: bool) -> Result<()> {
        let now = Instant::now();
        let bookmark_due = self.tracker.newest_version().is_some()
            && self.tracker.newest_version() != self.bookmark_written.as_deref()
            && (force || !records.is_empty() || now >= self.bookmark_at + BOOKMARK_EVERY);
        let waiting = self.fault.is_some() && !force && self.retry_at.is_some_and(|t| now < t);
        if waiting {
            self.enqueue(records);
            return Ok(());
        }
        let mut all: Vec<MigrationRecord> = self.queue.drain(..).collect();
        all.extend(records);
        if all.is_empty() && !bookmark_due {
            return Ok(());
        }
        let bookmarks: Vec<(String, String)> = self
            .tracker
            .newest_version()
            .map(|v| vec![(self.bookmark.clone(), v.to_string())])
            .unwrap_or_default();
        match self.journal.commit(&all, &bookmarks).await {
            Ok(done) => {
                if self.fault.take().is_some() {
                    stderr_line(&text::journal_back(
                        Timestamp::now(),
                        all.len().saturating_sub(done.duplicates),
                    ));
                }
                self.retry_at = None;
                self.bookmark_written = bookmarks.into_iter().next().map(|(_, v)| v);
                self.bookmark_at = now;
                // Duplicates: another writer (migrate, a second recorder) had them.
                // Those are counted as already there, not as recorded: the lines and the
                // closing counts say what this run wrote (issue 33).
                self.totals.already += done.duplicates;
                self.totals.recorded += all.len().saturating_sub(done.duplicates);
                for r in all.iter().filter(|r| !done.duplicate_ids.contains(&r.id)) {
                    match r.outcome {
                        RecordOutcome::Succeeded => self.totals.succeeded += 1,
                        RecordOutcome::Failed => self.totals.failed += 1,
                        RecordOutcome::Aborted | RecordOutcome::Vanished => {
                            self.totals.aborted += 1
                        }
                    }
                    write_stdout(&text::recorded(self.settings.output, r)?)?;
                }
                Ok(())
            }
            Err(e) => {
                let fault = e.journal_fault();
                if matches!(
                    fault,
                    Some(JournalFault::Corrupt | JournalFault::NewerSchema)
                ) {
                    self.queue.extend(all);
                    return Err(e);
                }
                let full = fault == Some(JournalFault::Full);
                let retry = if full { retry_full() } else { RETRY_BUSY };
                if self.fault != fault || self.fault.is_none() {
                    let at = Timestamp::now();
                    let message = e.to_string();
                    stderr_line(&if full {
                        text::journal_full(at, &message, QUEUE_BOUND, retry.as_secs())
                    } else {
                        text::journal_failing(at, &message, retry.as_secs())
                    });
                }
                self.fault = Some(fault.unwrap_or(JournalFault::Other));
                self.retry_at = Some(now + retry);
                self.enqueue(all);
                Ok(())
            }
        }
    }

    fn enqueue(&mut self, records: Vec<MigrationRecord>) {
        self.queue.extend(records);
        if self.queue.len() > QUEUE_BOUND {
            let dropped = self.queue.len() - QUEUE_BOUND;
            self.queue.drain(..dropped);
            self.totals.unwritten += dropped;
            stderr_line(&text::queue_dropped(Timestamp::now(), dropped, QUEUE_BOUND));
        }
    }

    async fn prune(&mut self) {
        self.prune_at = Instant::now() + PRUNE_EVERY;
        match self.journal.prune(&self.settings.retention, now_ms()).await {
            Ok(p) if p.by_age + p.by_size > 0 => {
                stderr_line(&text::pruned(Timestamp::now(), p.by_age, p.by_size))
            }
            Ok(_) => {}
            Err(e) => stderr_line(&text::prune_failed(Timestamp::now(), &e.to_string())),
        }
    }

    /// The replay, once done and once the first list is in: the migrations it shows ending
    /// that the mirror no longer has and the journal does not have yet.
    async fn poll_replay(&mut self, mirror: &Mirror) -> Result<()> {
        if !self.started {
            return Ok(());
        }
        let Some(done) = self.replay.as_mut().and_then(|h| h.now_or_never()) else {
            return Ok(());
        };
        self.replay = None;
        let from = self.replay_from.clone().unwrap_or_default();
        let at = Timestamp::now();
        let events = match done {
            Ok(Ok(Replayed::Events { events, .. })) => events,
            Ok(Ok(Replayed::Gone)) => {
                let since = self.journal_bookmark_time().await;
                stderr_line(&text::replay_gone(at, &from, since.as_deref()));
                return Ok(());
            }
            Ok(Err(e)) => {
                stderr_line(&text::replay_failed(at, &e.to_string()));
                return Ok(());
            }
            Err(e) => {
                stderr_line(&text::replay_failed(at, &e.to_string()));
                return Ok(());
            }
        };
        let events: Vec<(bool, VirtualMachineInstanceMigration)> =
            events.into_iter().map(|(d, Boxed(m))| (d, *m)).collect();
        let ended: Vec<Ended> = ended::ended_in_replay(&events)
            .into_iter()
            .filter(|e| {
                let still_there = mirror
                    .vmims
                    .get(&e.key)
                    .is_some_and(|m| m.uid() == e.vmim.uid());
                !still_there
                    && !self.tracker.handled(e.uid())
                    && self.tracker.scope.takes(mirror, &e.vmim)
            })
            .collect();
        for e in &ended {
            self.tracker.handle(e.uid());
        }
        let count = ended.len();
        let new = self.take(ended, Instant::now()).await?;
        stderr_line(&text::replayed(at, &from, count, new));
        Ok(())
    }

    /// When the bookmark was written: not kept (the journal stores versions only), so the
    /// newest record's end stands for it.
    async fn journal_bookmark_time(&self) -> Option<String> {
        let query = crate::model::journal::HistoryQuery {
            cluster: Some(self.settings.cluster.clone()),
            limit: Some(1),
            ..Default::default()
        };
        self.journal
            .query(&query)
            .await
            .ok()?
            .into_iter()
            .next()
            .map(|r| r.recorded_at)
    }
}

impl Observer for Recorder<'_> {
    fn update(&mut self, update: &Update) {
        match update {
            Update::Changed { kind, listed } => {
                if *listed {
                    self.ready.insert(*kind);
                }
                if *kind == Kind::VirtualMachineInstanceMigration {
                    self.vmims_changed = true;
                    self.since_scan = true;
                    if *listed {
                        self.scan_due = true;
                    }
                }
                if *kind == Kind::VirtualMachineInstance && *listed {
                    // A re-list of VMIs can change which migrations a selector takes.
                    self.scan_due = true;
                }
            }
            Update::Reconnecting(r) => stderr_line(&crate::render::follow::reconnecting(
                &Timestamp::now().strftime("%H:%M:%S").to_string(),
                r,
            )),
            Update::Recovered(kind) => stderr_line(&crate::render::follow::reconnected(
                &Timestamp::now().strftime("%H:%M:%S").to_string(),
                *kind,
            )),
            Update::Tick | Update::Stop(_) => {}
        }
    }

    async fn tick(&mut self) -> Result<()> {
        if self.since_scan {
            // A full pass at most once a tick after changes: a VMIM first seen final (never
            // in flight here) is caught too.
            self.scan_due = true;
        }
        if let Some(at) = self.listed_at
            && at.elapsed() >= REPLAY_AFTER_LIST
            && let Some(stop) = self.replay_stop.take()
        {
            let _ = stop.send(());
        }
        if self.started && Instant::now() >= self.prune_at {
            self.prune().await;
        }
        Ok(())
    }

    async fn settle(&mut self, mirror: &Mirror) -> Result<bool> {
        if self.stop.load(Ordering::SeqCst) {
            return Ok(true);
        }
        if self.kubevirt.is_none() {
            self.poll_kubevirt();
        }
        if !self.started {
            if self.ready.len() < 3 || self.kubevirt.is_none() {
                return Ok(false);
            }
            self.started = true;
            self.listed_at = Some(Instant::now());
            self.vmims_changed = false;
            self.since_scan = false;
            self.scan_due = false;
            let ended = self.tracker.scan(mirror);
            let found = ended.len();
            let before = self.totals.already;
            let new = self.take(ended, Instant::now()).await?;
            let now = Timestamp::now();
            stderr_line(&text::started(
                now,
                &self.settings.cluster,
                &self.journal.describe(),
                &self.settings.scope_words,
                mirror.vmis.len(),
                self.tracker.in_flight(),
            ));
            if found > 0 {
                stderr_line(&text::caught_up(now, new, self.totals.already - before));
            }
        } else if self.scan_due {
            self.scan_due = false;
            self.since_scan = false;
            self.vmims_changed = false;
            let ended = self.tracker.scan(mirror);
            self.take(ended, Instant::now() + CATCH_UP).await?;
        } else if self.vmims_changed {
            self.vmims_changed = false;
            let ended = self.tracker.changed(mirror);
            self.take(ended, Instant::now() + CATCH_UP).await?;
        }
        self.poll_replay(mirror).await?;
        loop {
            let records = self.due_records(mirror, false).await;
            let made = records.len();
            self.write(records, false).await?;
            if made < WRITE_CHUNK || self.fault.is_some() {
                break;
            }
        }
        Ok(false)
    }
}

/// The events read about one migration, and what could not be read.
struct EventsRead {
    events: Vec<Event>,
    unread: Vec<Unread>,
    notes: Vec<String>,
    skipped: Vec<String>,
}

/// The events about a migration's objects ([`ended::event_subjects`]), then about the target
/// pods its VMIM's events name ([`ended::pods_named_by_events`]).
async fn read_events(
    ctx: &Context,
    evidence: &Evidence,
    namespace_events: Option<&[serde_json::Value]>,
) -> EventsRead {
    let ns = evidence.vmi_namespace.as_str();
    let mut out = EventsRead {
        events: Vec::new(),
        unread: Vec::new(),
        notes: Vec::new(),
        skipped: Vec::new(),
    };
    let mut subjects = ended::event_subjects(evidence);
    let mut round = subjects.clone();
    for _ in 0..2 {
        if round.is_empty() {
            break;
        }
        let read = match namespace_events {
            Some(values) => Ok((
                crate::evidence::events_among(ctx, values, &round, &mut out.skipped),
                Vec::new(),
            )),
            None => tokio::time::timeout(
                READ_BUDGET,
                crate::evidence::events_about(ctx, ns, &round, &mut out.notes, &mut out.skipped),
            )
            .await
            .unwrap_or_else(|_| Err(no_answer())),
        };
        match read {
            Ok((events, unread)) => {
                out.events.extend(events);
                if !unread.is_empty() {
                    out.unread = unread;
                    break;
                }
            }
            Err(e) => {
                let message = e.to_string();
                out.notes.push(format!(
                    "could not read events in {ns} ({message}): the diagnosis rests on object status alone"
                ));
                out.unread = vec![Unread {
                    source: Source::Events,
                    status: None,
                    message,
                }];
                break;
            }
        }
        round = ended::pods_named_by_events(evidence, &out.events, &subjects)
            .into_iter()
            .map(|p| ("Pod", p))
            .collect();
        subjects.extend(round.iter().cloned());
    }
    out
}

/// SIGTERM (a Deployment's stop), seen at the next tick.
fn on_sigterm() -> Result<Arc<AtomicBool>> {
    use tokio::signal::unix::{SignalKind, signal};
    let stop = Arc::new(AtomicBool::new(false));
    let mut term = signal(SignalKind::terminate())
        .map_err(|e| Error::Internal(format!("SIGTERM handler: {e}")))?;
    let flag = Arc::clone(&stop);
    tokio::spawn(async move {
        term.recv().await;
        flag.store(true, Ordering::SeqCst);
    });
    Ok(stop)
}

/// Records every migration in scope that ends, until Ctrl-C or SIGTERM; `spec` says what
/// to watch.
pub async fn run(
    ctx: &'static Context,
    live: &LiveSource,
    journal: &Journal,
    spec: FollowSpec,
    settings: &Settings,
) -> Result<i32> {
    let stop = on_sigterm()?;
    let bookmark = bookmark_name(&settings.cluster);
    let replay_from = journal.bookmark(&bookmark).await?;
    let mut recorder = Recorder {
        ctx,
        journal,
        settings,
        bookmark,
        tracker: Tracker::new(settings.scope.clone()),
        ready: BTreeSet::new(),
        started: false,
        kubevirt_read: None,
        kubevirt: None,
        replay: None,
        replay_stop: None,
        replay_from: replay_from.clone(),
        listed_at: None,
        vmims_changed: false,
        since_scan: false,
        scan_due: false,
        pending: Vec::new(),
        queue: VecDeque::new(),
        fault: None,
        retry_at: None,
        bookmark_written: replay_from.clone(),
        bookmark_at: Instant::now(),
        prune_at: Instant::now(),
        totals: Totals::default(),
        stop,
        said: BTreeSet::new(),
    };
    recorder.prune().await;
    // The replay of the migration watch runs beside the first lists, until shortly after
    // the migrations are listed (the follower's watch carries on from there).
    if let Some(from) = replay_from {
        let (tx, rx) = oneshot::channel::<()>();
        let query = spec.vmims.clone();
        recorder.replay_stop = Some(tx);
        recorder.replay = Some(tokio::spawn(async move {
            let AnySource::Live(live) = &ctx.source else {
                return Err(Error::usage("record follows a live cluster"));
            };
            crate::cluster::watch::replay::<Boxed<VirtualMachineInstanceMigration>>(
                live,
                &query,
                &from,
                // Below the client's read timeout: an idle replay ends, it does not fail.
                REPLAY_SECONDS.min(live.watch_seconds()),
                async move {
                    let _ = rx.await;
                },
            )
            .await
        }));
    }
    recorder.kubevirt_read = Some(tokio::spawn(async move {
        let all = crate::cluster::Query::all();
        crate::cluster::list_as::<KubeVirt>(&ctx.source, Kind::KubeVirt, &all).await
    }));
    let mut follower = Follower::new(live, spec.with_tick(TICK));
    let ending = follow(&mut follower, &mut recorder).await;
    // Stopping (or a watch that gave up): what waits is written once more, then the summary.
    let flushed = loop {
        let last = recorder.due_records(&follower.mirror, true).await;
        let made = last.len();
        let written = recorder.write(last, true).await;
        if made < WRITE_CHUNK || written.is_err() || recorder.fault.is_some() {
            break written;
        }
    };
    recorder.totals.unwritten += recorder.queue.len() + recorder.pending.len();
    let why = match &ending {
        Ok(Ending::Stopped(_)) => "interrupted",
        Ok(Ending::Done) => "terminated",
        Err(_) => "a watch gave up",
    };
    let now = Timestamp::now();
    stderr_line(&text::summary(now, &recorder.totals, why));
    if settings.output == OutputFormat::Json {
        write_stdout(&format!(
            "{}\n",
            crate::render::json_line(&text::summary_document(&recorder.totals, why))?
        ))?;
    }
    ending?;
    flushed?;
    Ok(exit::OK)
}
