//! A migration's end as the journal keeps it (issue 28), made from what `explain` read and
//! concluded: the same diagnosis, the objects it was made from (so `explain` can make it
//! again from the journal once KubeVirt has deleted them), the columns `history` filters and
//! totals on. Pure: the caller passes the clock and who is writing.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value, json};

use super::{Diagnosis, Evidence, Outcome};
use crate::model::journal::{MigrationRecord, Platform, RecordOutcome, RecordedBy};

/// The journal's outcome for a diagnosis; None while the migration is not over (nothing to
/// record yet).
pub fn record_outcome(outcome: Outcome) -> Option<RecordOutcome> {
    match outcome {
        Outcome::Succeeded => Some(RecordOutcome::Succeeded),
        Outcome::Failed => Some(RecordOutcome::Failed),
        Outcome::Aborted => Some(RecordOutcome::Aborted),
        Outcome::InProgress | Outcome::Blocked | Outcome::NoMigration => None,
    }
}

fn millis(rfc3339: Option<&str>) -> Option<i64> {
    rfc3339?
        .parse::<Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

/// When the migration ended, as its objects say, never the writer's clock: the
/// migrationState's `endTimestamp` (of this migration, on the VMI or the VMIM), else when
/// the VMIM entered its final phase (`status.phaseTransitionTimestamps`). None when the
/// objects do not say: a VMIM deleted before its end, or one that kept no phase times.
pub fn end_of(evidence: &Evidence, diagnosis: &Diagnosis) -> Option<Timestamp> {
    let from_state = diagnosis
        .migration
        .as_ref()
        .and_then(|m| m.end_timestamp.as_deref())
        .and_then(|t| t.parse::<Timestamp>().ok());
    from_state.or_else(|| {
        let m = evidence.migration.as_ref()?;
        if !m.is_final() {
            return None;
        }
        m.phase_entered(m.phase().as_str()).map(|t| t.0)
    })
}

/// The newest moment the objects show of a migration whose end they do not say: its
/// creation, a phase change, the transfer's start, the newest event about the VMIM. It ended
/// at or after this; the journal orders and prunes it by this (`ended_ms`), and shows its end
/// as unknown. A deletion the recorder stamped is not an object's time and is not used.
pub fn last_seen(evidence: &Evidence) -> Option<Timestamp> {
    let m = evidence.migration.as_ref()?;
    let mut times: Vec<Timestamp> = Vec::new();
    times.extend(m.metadata.creation_timestamp.as_ref().map(|t| t.0));
    times.extend(
        m.status
            .phase_transition_timestamps
            .iter()
            .filter_map(|t| t.phase_transition_timestamp.as_ref().map(|t| t.0)),
    );
    if let Some(st) = &m.status.migration_state {
        times.extend(st.start_timestamp.as_ref().map(|t| t.0));
    }
    times.extend(
        evidence
            .events
            .iter()
            .filter(|e| {
                super::objects::event_is_about(
                    e,
                    "VirtualMachineInstanceMigration",
                    m.name(),
                    m.uid(),
                )
            })
            .filter_map(super::objects::event_last),
    );
    times.into_iter().max()
}

/// The objects the diagnosis was made from, as JSON (`detail.evidence`): enough for
/// [`evidence_from_detail`] to make the same `Evidence` again.
fn evidence_json(evidence: &Evidence) -> Value {
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        if !v.is_null() {
            m.insert(k.to_string(), v);
        }
    };
    put("now", json!(evidence.now.to_string()));
    put("vmiNamespace", json!(evidence.vmi_namespace));
    put("vmiName", json!(evidence.vmi_name));
    put(
        "migration",
        serde_json::to_value(&evidence.migration).unwrap_or(Value::Null),
    );
    put(
        "vmi",
        serde_json::to_value(&evidence.vmi).unwrap_or(Value::Null),
    );
    put(
        "migrations",
        serde_json::to_value(&evidence.migrations).unwrap_or(Value::Null),
    );
    put(
        "pods",
        serde_json::to_value(&evidence.pods).unwrap_or(Value::Null),
    );
    put(
        "events",
        serde_json::to_value(&evidence.events).unwrap_or(Value::Null),
    );
    put(
        "kubevirt",
        serde_json::to_value(&evidence.kubevirt).unwrap_or(Value::Null),
    );
    put(
        "policies",
        serde_json::to_value(&evidence.policies).unwrap_or(Value::Null),
    );
    put(
        "namespace",
        serde_json::to_value(&evidence.namespace).unwrap_or(Value::Null),
    );
    put(
        "pdbs",
        serde_json::to_value(&evidence.pdbs).unwrap_or(Value::Null),
    );
    put(
        "unread",
        serde_json::to_value(&evidence.unread).unwrap_or(Value::Null),
    );
    Value::Object(m)
}

/// The record of a KubeVirt migration that is over (`None` while it is not: in progress,
/// blocked, or no migration at all). `diagnosis` is `diagnose(evidence)`; `recorded_at` the
/// clock now; `cluster` which cluster; `extra` more of `detail` (`progressSeries` of a run
/// vmctl drove), merged in.
pub fn kubevirt_record(
    evidence: &Evidence,
    diagnosis: &Diagnosis,
    recorded_by: RecordedBy,
    recorded_at: Timestamp,
    cluster: &str,
    extra: Option<Map<String, Value>>,
) -> Option<MigrationRecord> {
    let outcome = record_outcome(diagnosis.outcome)?;
    let migration = diagnosis.migration.as_ref()?;
    let uid = migration.uid.as_deref()?;
    let pod = |role: &str| {
        diagnosis
            .pods
            .iter()
            .find(|p| p.role == role)
            .and_then(|p| p.name.clone())
    };
    let created_ms = millis(migration.created.as_deref());
    let started_ms = millis(migration.start_timestamp.as_deref());
    let ended = end_of(evidence, diagnosis);
    let ended_ms = ended.map(|t| t.as_millisecond());
    let mut detail = Map::new();
    detail.insert("evidence".into(), evidence_json(evidence));
    detail.insert(
        "diagnosis".into(),
        serde_json::to_value(diagnosis).unwrap_or(Value::Null),
    );
    if let Some(extra) = extra {
        detail.extend(extra);
    }
    Some(MigrationRecord {
        id: MigrationRecord::kubevirt_id(uid),
        cluster: cluster.to_string(),
        recorded_by,
        platform: Platform::KubeVirt,
        namespace: migration.namespace.clone(),
        vm: diagnosis.vmi.name.clone(),
        migration: migration.name.clone(),
        source_node: migration.source_node.clone(),
        target_node: migration.target_node.clone(),
        source_pod: pod("source"),
        target_pod: pod("target"),
        evacuation_node: migration
            .evacuation_node
            .clone()
            .or_else(|| diagnosis.vmi.evacuation_node.clone()),
        outcome,
        phase: migration.phase.clone(),
        mode: migration.mode.clone(),
        plane: diagnosis.plane.as_str().to_string(),
        cause: diagnosis.cause.id.to_string(),
        summary: diagnosis.summary.clone(),
        created_at: migration.created.clone(),
        started_at: migration.start_timestamp.clone(),
        ended_at: ended.map(|t| t.to_string()),
        ended_ms: ended_ms
            .or_else(|| last_seen(evidence).map(|t| t.as_millisecond()))
            .unwrap_or(recorded_at.as_millisecond()),
        recorded_at: recorded_at.to_string(),
        duration_ms: created_ms.zip(ended_ms).map(|(c, e)| e - c),
        transfer_ms: started_ms.zip(ended_ms).map(|(s, e)| e - s),
        data_processed_bytes: None,
        data_total_bytes: None,
        data_remaining_bytes: None,
        detail: Value::Object(detail),
    })
}

/// The `Evidence` a record was diagnosed from, made again from `detail.evidence` (None when
/// the record has none, e.g. a libvirt run, or it does not decode). `loops` are today's
/// thresholds.
pub fn evidence_from_detail(detail: &Value, loops: super::LoopThresholds) -> Option<Evidence> {
    let e = detail.get("evidence")?;
    fn field<T: serde::de::DeserializeOwned + Default>(e: &Value, k: &str) -> Option<T> {
        match e.get(k) {
            None | Some(Value::Null) => Some(T::default()),
            Some(v) => serde_json::from_value(v.clone()).ok(),
        }
    }
    Some(Evidence {
        now: e.get("now")?.as_str()?.parse().ok()?,
        migration: field(e, "migration")?,
        vmi_namespace: e.get("vmiNamespace")?.as_str()?.to_string(),
        vmi_name: e.get("vmiName")?.as_str()?.to_string(),
        vmi: field(e, "vmi")?,
        migrations: field(e, "migrations")?,
        pods: field(e, "pods")?,
        events: field(e, "events")?,
        kubevirt: field(e, "kubevirt")?,
        policies: field(e, "policies")?,
        namespace: field(e, "namespace")?,
        load: None,
        unread: field(e, "unread")?,
        pdbs: field(e, "pdbs")?,
        loops,
    })
}

/// What a libvirt migration vmctl drove leaves in the journal.
pub struct LibvirtRun<'a> {
    pub domain: &'a str,
    pub source_uri: &'a str,
    pub destination_uri: &'a str,
    pub summary: &'a crate::migration::Summary,
    /// The run's samples, downsampled (`progressSeries`).
    pub series: &'a [crate::migration::series::SeriesPoint],
    pub started_at: Timestamp,
}

/// The record of a libvirt migration vmctl drove (`migrate DOMAIN --connect … --to …`):
/// the cause its summary names (the catalogue's plane), data sent, the samples; the id is
/// the source URI, the domain and the start in unix ms.
pub fn libvirt_record(run: &LibvirtRun<'_>, recorded_at: Timestamp) -> MigrationRecord {
    use crate::migration::Outcome as Run;
    let s = run.summary;
    let outcome = match s.outcome {
        Some(Run::Succeeded) => RecordOutcome::Succeeded,
        Some(Run::Aborted) => RecordOutcome::Aborted,
        _ => RecordOutcome::Failed,
    };
    let cause = s.cause.clone().unwrap_or_else(|| match outcome {
        RecordOutcome::Succeeded => "succeeded".to_string(),
        _ => "unknown".to_string(),
    });
    let plane = super::cause::Cause::by_id(&cause)
        .map(|c| c.plane.as_str())
        .unwrap_or(super::Plane::Unknown.as_str());
    let start_ms = run.started_at.as_millisecond();
    let total = i64::try_from(s.total_ms).unwrap_or(i64::MAX);
    let ended = Timestamp::from_millisecond(start_ms.saturating_add(total)).ok();
    let mut detail = Map::new();
    detail.insert(
        "summary".into(),
        serde_json::to_value(s).unwrap_or(Value::Null),
    );
    detail.insert(
        "progressSeries".into(),
        json!({"source": "vmctl migrate --connect", "points": run.series}),
    );
    detail.insert("destinationUri".into(), json!(run.destination_uri));
    let as_i64 = |b: u64| i64::try_from(b).ok();
    MigrationRecord {
        id: format!("libvirt:{}/{}/{start_ms}", run.source_uri, run.domain),
        cluster: run.source_uri.to_string(),
        recorded_by: RecordedBy::Migrate,
        platform: Platform::Libvirt,
        namespace: String::new(),
        vm: run.domain.to_string(),
        migration: String::new(),
        source_node: Some(uri_host(run.source_uri)),
        target_node: Some(uri_host(run.destination_uri)),
        source_pod: None,
        target_pod: None,
        evacuation_node: None,
        outcome,
        phase: outcome.as_str().to_string(),
        mode: Some(s.final_mode.as_str().to_string()),
        plane: plane.to_string(),
        cause,
        summary: s.message.clone(),
        created_at: Some(run.started_at.to_string()),
        started_at: Some(run.started_at.to_string()),
        ended_at: ended.map(|t| t.to_string()),
        ended_ms: ended.map_or(recorded_at.as_millisecond(), |t| t.as_millisecond()),
        recorded_at: recorded_at.to_string(),
        duration_ms: Some(total),
        transfer_ms: Some(total),
        data_processed_bytes: as_i64(s.data_processed),
        data_total_bytes: as_i64(s.memory_total).filter(|b| *b > 0),
        data_remaining_bytes: None,
        detail: Value::Object(detail),
    }
}

/// The host (and port) of a libvirt URI, as history's node column shows it:
/// `qemu+tcp://10.0.0.7:16509/system` → `10.0.0.7:16509`; `qemu:///system` → `qemu:///system`.
fn uri_host(uri: &str) -> String {
    uri.split_once("://")
        .map(|(_, rest)| rest.split(['/', '?']).next().unwrap_or(""))
        .map(|h| h.rsplit('@').next().unwrap_or(h))
        .filter(|h| !h.is_empty())
        .unwrap_or(uri)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migration::series::SeriesPoint;
    use crate::migration::{Mode, Outcome as Run, Summary};
    use serde_json::json;

    fn evidence_of(vmim: serde_json::Value, recorded: &str) -> Evidence {
        Evidence {
            now: recorded.parse().unwrap(),
            migration: Some(serde_json::from_value(vmim).unwrap()),
            vmi_namespace: "prod".into(),
            vmi_name: "db".into(),
            vmi: None,
            migrations: Vec::new(),
            pods: Vec::new(),
            events: Vec::new(),
            kubevirt: None,
            policies: Vec::new(),
            namespace: None,
            load: None,
            unread: Vec::new(),
            pdbs: Vec::new(),
            loops: Default::default(),
        }
    }

    fn record_of(evidence: &Evidence) -> MigrationRecord {
        let d = super::super::diagnose(evidence);
        kubevirt_record(evidence, &d, RecordedBy::Record, evidence.now, "c", None).unwrap()
    }

    /// Issue 33 item 6: the end comes from the objects, never the writer's clock.
    #[test]
    fn a_records_end_is_the_objects_and_unknown_when_they_do_not_say() {
        let recorded = "2026-12-08T00:00:00Z";
        // Failed before any transfer: no migrationState; the phase change says when.
        let failed = json!({"metadata": {"name": "m", "namespace": "prod", "uid": "u1",
            "creationTimestamp": "2026-12-01T00:00:00Z"},
            "spec": {"vmiName": "db"},
            "status": {"phase": "Failed", "phaseTransitionTimestamps": [
                {"phase": "Pending", "phaseTransitionTimestamp": "2026-12-01T00:00:00Z"},
                {"phase": "Failed", "phaseTransitionTimestamp": "2026-12-01T00:05:01Z"}]}});
        let r = record_of(&evidence_of(failed.clone(), recorded));
        assert_eq!(r.ended_at.as_deref(), Some("2026-12-01T00:05:01Z"));
        assert_eq!(r.duration_ms, Some(301_000));
        // The migrationState's end, when it is this migration's, comes first.
        let mut with_state = failed.clone();
        with_state["status"]["migrationState"] = json!({"migrationUid": "u1",
            "startTimestamp": "2026-12-01T00:00:10Z", "endTimestamp": "2026-12-01T00:04:00Z",
            "completed": true, "failed": true});
        let r = record_of(&evidence_of(with_state, recorded));
        assert_eq!(r.ended_at.as_deref(), Some("2026-12-01T00:04:00Z"));
        // No time of its end anywhere: unknown, ordered by the last time the objects show
        // (its creation), not by when it was recorded.
        let mut untimed = failed;
        untimed["status"] = json!({"phase": "Failed"});
        let ev = evidence_of(untimed, recorded);
        let r = record_of(&ev);
        assert_eq!((r.ended_at.as_deref(), r.duration_ms), (None, None));
        let created: Timestamp = "2026-12-01T00:00:00Z".parse().unwrap();
        assert_eq!(r.ended_ms, created.as_millisecond());
        assert_eq!(last_seen(&ev), Some(created));
    }

    #[test]
    fn a_libvirt_host_is_the_uris_authority() {
        assert_eq!(
            uri_host("qemu+tcp://10.0.0.7:16509/system"),
            "10.0.0.7:16509"
        );
        assert_eq!(
            uri_host("qemu+ssh://root@node-3/system?keyfile=k"),
            "node-3"
        );
        assert_eq!(uri_host("qemu:///system"), "qemu:///system");
    }

    #[test]
    fn a_libvirt_run_is_recorded_with_its_cause_plane_data_and_samples() {
        let summary = Summary {
            outcome: Some(Run::Failed),
            cause: Some("not-converging".into()),
            message: "pre-copy did not converge".into(),
            total_ms: 90_000,
            job_ms: None,
            downtime_ms: None,
            data_processed: 5 << 30,
            memory_total: 4 << 30,
            iterations: Some(9),
            final_mode: Mode::PreCopy,
            postcopy_requests: None,
            events: Vec::new(),
        };
        let started: Timestamp = "2026-12-01T03:00:00Z".parse().unwrap();
        let points = [SeriesPoint {
            at_ms: 1000,
            remaining_bytes: 1 << 30,
            dirty_rate_bps: Some(1 << 20),
            transfer_rate_bps: 1 << 25,
            pass: Some(1),
        }];
        let run = LibvirtRun {
            domain: "guest",
            source_uri: "qemu+tcp://127.0.0.1:49152/system",
            destination_uri: "qemu+tcp://127.0.0.1:49153/system",
            summary: &summary,
            series: &points,
            started_at: started,
        };
        let r = libvirt_record(&run, "2026-12-01T03:02:00Z".parse().unwrap());
        assert_eq!(
            r.id,
            format!(
                "libvirt:qemu+tcp://127.0.0.1:49152/system/guest/{}",
                started.as_millisecond()
            )
        );
        assert_eq!(r.outcome, RecordOutcome::Failed);
        assert_eq!(r.cause, "not-converging");
        assert_eq!(r.plane, "data-plane");
        assert_eq!(r.source_node.as_deref(), Some("127.0.0.1:49152"));
        assert_eq!(r.ended_at.as_deref(), Some("2026-12-01T03:01:30Z"));
        assert_eq!(r.ended_ms, started.as_millisecond() + 90_000);
        assert_eq!(r.data_processed_bytes, Some(5 << 30));
        assert_eq!(
            r.detail["progressSeries"]["points"][0]["remainingBytes"],
            1 << 30
        );
    }
}
