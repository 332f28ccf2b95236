//! vmctl's own runs in the journal (issue 28): `migrate`, `drain` and `abort` write each
//! migration they drove or stopped, when it ends, to the journal `vmctl record` writes
//! (`--journal`, `$VMCTL_JOURNAL`, else the default file when `vmctl record` has made it;
//! `--journal off`: nothing).
//!
//! The journal serves the operator's history; it never decides a command's outcome: a
//! journal that cannot be opened or written is said once on stderr ("not recorded") and the
//! command goes on with its own exit code. It is opened at the first record, so a refused or
//! dry run creates no file.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value};

use crate::context::Context;
use crate::journal::{Access, Journal, JournalSpec};
use crate::model::journal::{MigrationRecord, RecordedBy};
use crate::render::stderr_line;
use crate::text::printable;
use crate::triage::Evidence;
use crate::triage::report::ExplainReport;

/// Where a command's runs go, opened on first use.
pub(crate) struct RunJournal {
    spec: JournalSpec,
    /// Opened at the first record; `Some(None)`: opening failed (said once), nothing more
    /// is tried.
    journal: tokio::sync::OnceCell<Option<Journal>>,
    cluster: String,
}

impl RunJournal {
    /// The journal `--journal` (else `$VMCTL_JOURNAL`, else the default file if it exists)
    /// names (`JournalSpec::for_runs`); a value that does not parse is said and treated as off.
    pub(crate) fn new(flag: Option<&str>, cluster: String) -> RunJournal {
        let spec = match JournalSpec::for_runs(flag) {
            Ok(spec) => spec,
            Err(e) => {
                stderr_line(&printable(&format!(
                    "warning: {e}: this run is not recorded in a journal"
                )));
                JournalSpec::Off
            }
        };
        RunJournal {
            spec,
            journal: tokio::sync::OnceCell::new(),
            cluster,
        }
    }

    /// The journal the context's flags name, under the context's cluster.
    pub(crate) fn of(ctx: &Context) -> RunJournal {
        RunJournal::new(ctx.journal.as_deref(), ctx.cluster_name(None))
    }

    /// False with `--journal off` or once opening failed: callers skip gathering evidence.
    pub(crate) fn enabled(&self) -> bool {
        self.spec != JournalSpec::Off && !matches!(self.journal.get(), Some(None))
    }

    /// Writes `record` (a duplicate id is skipped: `vmctl record` may have it already).
    /// Failures are said on stderr, never returned.
    pub(crate) async fn write(&self, record: &MigrationRecord) {
        if !self.enabled() {
            return;
        }
        let journal = self
            .journal
            .get_or_init(|| async {
                match Journal::open(&self.spec, Access::Write).await {
                    Ok(j) => Some(j),
                    Err(e) => {
                        stderr_line(&printable(&format!(
                            "warning: {e}: this run is not recorded (--journal off to say nothing)"
                        )));
                        None
                    }
                }
            })
            .await;
        if let Some(j) = journal
            && let Err(e) = j.commit(std::slice::from_ref(record), &[]).await
        {
            stderr_line(&printable(&format!(
                "warning: {e}: the migration {}/{} is not recorded",
                record.namespace, record.migration
            )));
        }
    }

    /// Writes the record of a KubeVirt migration that is over, made from the evidence and
    /// the report `explain` gives; `series` (the run's samples) and `data_processed` (bytes
    /// sent) when vmctl drove it. Nothing while it is not over.
    pub(crate) async fn write_kubevirt(
        &self,
        evidence: &Evidence,
        report: &ExplainReport,
        by: RecordedBy,
        progress: Option<(Value, u64)>,
    ) {
        if !self.enabled() {
            return;
        }
        let mut extra = Map::new();
        if let Some((series, _)) = &progress {
            extra.insert("progressSeries".into(), series.clone());
        }
        let Some(mut record) = crate::triage::record::kubevirt_record(
            evidence,
            &report.diagnosis,
            by,
            Timestamp::now(),
            &self.cluster,
            Some(extra),
        ) else {
            return;
        };
        if let Some((_, sent)) = progress {
            record.data_processed_bytes = i64::try_from(sent).ok().filter(|b| *b > 0);
        }
        self.write(&record).await;
    }
}
