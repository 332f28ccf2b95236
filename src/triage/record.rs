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
    let ended_ms = millis(migration.end_timestamp.as_deref());
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
        ended_at: migration.end_timestamp.clone(),
        ended_ms: ended_ms.unwrap_or(recorded_at.as_millisecond()),
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
        unread: Vec::new(),
        pdbs: field(e, "pdbs")?,
        loops,
    })
}
