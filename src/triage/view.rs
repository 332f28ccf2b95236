//! The evidence joined into one view of a migration: which migrationState is its own, which
//! pods are its source and target, which events concern it, which configuration applied.
//! Rules read this view, never the raw evidence, so they all agree on those joins.

use k8s_openapi::jiff::Timestamp;

use super::decentralized::{DecentralizedInfo, decentralized_info};
use super::objects::*;
use super::strings as s;
use super::{Evidence, Fact, PodInfo, VmiInfo};
use crate::model::kubevirt::{EffectiveMigrationConfig, KubeVirt};
use crate::model::vmi::{MigrationMode, MigrationState, VmiPhase};
use crate::model::vmim::MigrationPhase;
use crate::model::{
    Condition, Event, Pod, Time, VirtualMachineInstance, VirtualMachineInstanceMigration,
};
use crate::policy::budget::completion_budget_seconds;
use crate::policy::links::{CREATED_BY_LABEL, MIGRATION_JOB_UID_LABEL};
use crate::policy::migratability::{Blocker, Migratability, migratability};
use crate::policy::migration_policy::{effective_config, matching_policy};

/// Events of the VMI count for a migration from a little before it was created until a
/// little after it ended: virt-handler's last events land after the VMIM turned final.
const WINDOW_BEFORE_SECONDS: i64 = 5;
const WINDOW_AFTER_SECONDS: i64 = 90;

/// Where the effective migration configuration was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigOrigin {
    /// `status.migrationState.migrationConfiguration`: what the migration actually ran with.
    Recorded,
    /// Computed now from the KubeVirt CR and this policy (it may have changed since).
    Policy(String),
    /// Computed now from the KubeVirt CR (or KubeVirt's defaults).
    Cluster,
}

/// The target pods the VMIM's events name, in the events' order: "Created migration target
/// pod …", and the deletions of an unschedulable, pending or canceled one (the pod of a
/// failed scheduling attempt is deleted, its events are not). Also what `record` reads the
/// events of, so it reads what explain reads.
pub fn target_pods_named(events: &[Event], vmim: &VirtualMachineInstanceMigration) -> Vec<String> {
    let uid = vmim.uid();
    let mut names = Vec::new();
    for e in events
        .iter()
        .filter(|e| event_is_about(e, "VirtualMachineInstanceMigration", vmim.name(), uid))
    {
        let msg = event_message(e);
        // The event names the pod alone; the controller's log line (which some
        // tools copy) adds `ns/` and a uid: take the first word, without namespace.
        let name = msg
            .strip_prefix(s::CREATED_TARGET_POD_PREFIX)
            .and_then(|rest| rest.split_whitespace().next())
            .map(|n| n.rsplit('/').next().unwrap_or(n))
            .or_else(|| s::pod_in_delete_message(msg, s::UNSCHEDULABLE_DELETE_PREFIX))
            .or_else(|| s::pod_in_delete_message(msg, s::PENDING_DELETE_PREFIX))
            .or_else(|| s::pod_in_delete_message(msg, s::CANCELED_DELETE_PREFIX));
        if let Some(n) = name {
            names.push(n.to_string());
        }
    }
    names
}

/// The next step that shows a VMI's every migration and the backoff between them, the one
/// way every rule words it: `vmctl explain vm/NAME -n NS --history`, each name a shell word
/// (quoted when it holds anything a shell would read), so it can be pasted as printed.
pub fn history_hint(namespace: &str, vmi: &str) -> String {
    use crate::text::sh_word;
    format!(
        "See every attempt and the backoff between them: vmctl explain vm/{} -n {} --history",
        sh_word(vmi),
        sh_word(namespace)
    )
}

pub struct View<'a> {
    pub ev: &'a Evidence,
    pub now: Timestamp,
    pub vmim: Option<&'a VirtualMachineInstanceMigration>,
    pub phase: MigrationPhase,
    pub vmi: Option<&'a VirtualMachineInstance>,
    /// The migrationState that describes this migration, and the object it came from.
    pub state: Option<&'a MigrationState>,
    pub state_owner: Option<String>,
    /// The VMI's migrationState when it describes another migration.
    pub other_state: Option<&'a MigrationState>,
    /// The VMI's launcher pods (all of them, old ones too).
    pub pods: Vec<&'a Pod>,
    pub target_pod: Option<&'a Pod>,
    pub target_pod_name: Option<String>,
    pub source_pod: Option<&'a Pod>,
    pub source_pod_name: Option<String>,
    /// The VMI still runs where it ran when this migration was created: the migration is not
    /// final, or it ended without a migrationState of its own (it never reached the hand-off,
    /// e.g. its target pod was never scheduled) and neither a later migration nor a restart
    /// moved the VMI since. Its node is then the migration's source.
    pub vmi_unmoved: bool,
    /// Events about this migration, its pods and (in its time window) its VMI, oldest first.
    pub events: Vec<&'a Event>,
    pub config: EffectiveMigrationConfig,
    pub config_origin: ConfigOrigin,
    pub policy: Option<String>,
    pub budget: Option<u64>,
    pub migratability: Option<Migratability>,
    pub created: Option<Timestamp>,
    pub start: Option<Timestamp>,
    pub end: Option<Timestamp>,
    /// When the VMIM became Succeeded or Failed.
    pub final_at: Option<Timestamp>,
}

fn ts(t: &Time) -> Timestamp {
    t.0
}

/// True when `state` describes `vmim` (FACTS §1.1: `migrationUid` is the VMIM's uid).
fn state_is_for(state: &MigrationState, vmim: &VirtualMachineInstanceMigration) -> bool {
    state.migration_uid.is_some() && state.migration_uid.as_deref() == vmim.uid()
}

/// A VMIM's own copy of migrationState, when it holds more than the `sourcePod` it gets
/// while Pending.
fn vmim_state_is_full(state: &MigrationState) -> bool {
    state.start_timestamp.is_some()
        || state.end_timestamp.is_some()
        || state.completed
        || state.failed
        || state.failure_reason.is_some()
        || state.target_pod.is_some()
}

impl<'a> View<'a> {
    pub fn new(ev: &'a Evidence) -> View<'a> {
        let vmim = ev.migration.as_ref();
        let vmi = ev.vmi.as_ref();

        let vmi_state = vmi.and_then(|v| v.status.migration_state.as_ref());
        let vmim_state = vmim.and_then(|m| m.status.migration_state.as_ref());
        let (state, state_owner, other_state) = match vmim {
            Some(m) => {
                let from_vmi = vmi_state.filter(|st| state_is_for(st, m));
                let from_vmim = vmim_state.filter(|st| {
                    state_is_for(st, m) || (st.migration_uid.is_none() && vmim_state_is_full(st))
                });
                let other = vmi_state.filter(|st| !state_is_for(st, m));
                match (from_vmi, from_vmim) {
                    (Some(st), _) => (Some(st), Some(vmi_object_of(ev)), other),
                    (None, Some(st)) => (Some(st), Some(vmim_object(m)), other),
                    (None, None) => (None, None, other),
                }
            }
            // The migration object is gone (aborted migrations are deleted, only five finished
            // ones are kept): the VMI's own record of its last migration is all there is.
            None => match vmi_state.filter(|st| st.completed || st.start_timestamp.is_some()) {
                Some(st) => (Some(st), Some(vmi_object_of(ev)), None),
                None => (None, None, vmi_state),
            },
        };

        let phase = match (vmim, state) {
            (Some(m), _) => m.phase(),
            (None, Some(st)) if st.completed && st.failed => MigrationPhase::Failed,
            (None, Some(st)) if st.completed => MigrationPhase::Succeeded,
            (None, Some(_)) => MigrationPhase::Running,
            (None, None) => MigrationPhase::Unset,
        };

        let pods: Vec<&Pod> = ev.pods.iter().filter(|p| pod_belongs(p, ev, vmi)).collect();

        // Every name the target pod went by: its label, the state, and the VMIM's events
        // (the pod of a failed scheduling attempt is deleted, its events are not).
        let uid = vmim.and_then(|m| m.uid());
        let target_pod = uid.and_then(|u| {
            ev.pods
                .iter()
                .find(|p| pod_label(p, MIGRATION_JOB_UID_LABEL) == Some(u))
        });
        let mut target_names: Vec<String> = Vec::new();
        if let Some(p) = target_pod {
            target_names.push(pod_name(p).to_string());
        }
        if let Some(n) = state.and_then(|st| st.target_pod.clone()) {
            target_names.push(n);
        }
        if let Some(m) = vmim {
            target_names.extend(target_pods_named(&ev.events, m));
        }
        target_names.dedup();
        let target_pod_name = target_names.first().cloned();
        let target_pod = target_pod.or_else(|| {
            target_pod_name
                .as_deref()
                .and_then(|n| ev.pods.iter().find(|p| pod_name(p) == n))
        });

        let vmi_unmoved = vmim.is_some_and(|m| !m.is_final() || unmoved_since(ev, m, state));
        let source_pod_name = state
            .and_then(|st| st.source_pod.clone())
            .or_else(|| vmim_state.and_then(|st| st.source_pod.clone()))
            .or_else(|| {
                // Before the hand-off the source is simply the pod the guest runs in (still,
                // when a migration that never got that far ended and nothing moved the VMI
                // since) — except on a decentralized receiver, whose own pod is the target.
                (vmi_unmoved
                    && vmim.is_some_and(|m| {
                        m.decentralized_role()
                            != Some(crate::model::vmim::DecentralizedRole::Receiver)
                    }))
                .then(|| active_pod(&pods, vmi))
                .flatten()
                .map(|p| pod_name(p).to_string())
            });
        let source_pod = source_pod_name
            .as_deref()
            .and_then(|n| ev.pods.iter().find(|p| pod_name(p) == n));

        let created = vmim
            .and_then(|m| m.metadata.creation_timestamp.as_ref().map(ts))
            .or_else(|| {
                // An orphan state: its start is the earliest moment known.
                vmim.is_none()
                    .then(|| state.and_then(|st| st.start_timestamp.as_ref().map(ts)))
                    .flatten()
            });
        let final_at = vmim.and_then(|m| match m.phase() {
            MigrationPhase::Succeeded => m.phase_entered("Succeeded").map(ts),
            MigrationPhase::Failed => m.phase_entered("Failed").map(ts),
            _ => None,
        });
        let start = state.and_then(|st| st.start_timestamp.as_ref().map(ts));
        let end = state.and_then(|st| st.end_timestamp.as_ref().map(ts));

        let kubevirt = ev.kubevirt.as_ref();
        let version = kubevirt.and_then(KubeVirt::version);
        let recorded = state.and_then(|st| st.migration_configuration.as_ref());
        let matched = vmi.and_then(|v| matching_policy(v, ev.namespace.as_ref(), &ev.policies));
        let (config, config_origin) = match recorded {
            Some(cfg) => (cfg.effective(version), ConfigOrigin::Recorded),
            None => {
                let policy = matched
                    .as_ref()
                    .and_then(|pm| ev.policies.iter().find(|p| p.name() == pm.name));
                let origin = match policy {
                    Some(p) => ConfigOrigin::Policy(p.name().to_string()),
                    None => ConfigOrigin::Cluster,
                };
                (effective_config(kubevirt, policy), origin)
            }
        };
        let policy = state
            .and_then(|st| st.migration_policy_name.clone())
            .or_else(|| match &config_origin {
                ConfigOrigin::Policy(name) => Some(name.clone()),
                _ => None,
            })
            .or_else(|| {
                // A recorded configuration without a policy name: none matched then.
                if recorded.is_none() {
                    matched.map(|pm| pm.name)
                } else {
                    None
                }
            });
        let budget =
            vmi.and_then(|v| completion_budget_seconds(v, config.completion_timeout_per_gib));

        let mut view = View {
            ev,
            now: ev.now,
            vmim,
            phase,
            vmi,
            state,
            state_owner,
            other_state,
            pods,
            target_pod,
            target_pod_name,
            source_pod,
            source_pod_name,
            vmi_unmoved,
            events: Vec::new(),
            config,
            config_origin,
            policy,
            budget,
            migratability: vmi.map(migratability),
            created,
            start,
            end,
            final_at,
        };
        view.events = view.relevant_events(&target_names);
        view
    }

    // ------------------------------------------------------------ object names

    pub fn namespace(&self) -> &str {
        &self.ev.vmi_namespace
    }

    pub fn vmi_name(&self) -> &str {
        &self.ev.vmi_name
    }

    pub fn vmim_object(&self) -> String {
        self.vmim
            .map(vmim_object)
            .unwrap_or_else(|| self.vmi_object())
    }

    /// True when there is a migration to explain: its object, or the VMI's record of it.
    pub fn has_migration(&self) -> bool {
        self.vmim.is_some() || self.state.is_some()
    }

    /// The reasons the VMI cannot live-migrate (LiveMigratable=False); StorageLiveMigratable
    /// only concerns volume migration and is kept apart in `storage_reasons`.
    pub fn live_blockers(&self) -> Vec<&Blocker> {
        self.migratability
            .as_ref()
            .map(|m| m.reasons.iter().collect())
            .unwrap_or_default()
    }

    pub fn vmi_object(&self) -> String {
        vmi_object_of(self.ev)
    }

    pub fn pod_object(&self, name: &str) -> String {
        format!("Pod/{}/{name}", self.namespace())
    }

    pub fn vmim_name(&self) -> &str {
        self.vmim.map(|m| m.name()).unwrap_or("")
    }

    // ------------------------------------------------------------ facts

    pub fn vmim_fact(&self, field: &str, value: impl Into<String>) -> Fact {
        Fact {
            object: self.vmim_object(),
            field: field.to_string(),
            value: value.into(),
            note: None,
        }
    }

    pub fn vmi_fact(&self, field: &str, value: impl Into<String>) -> Fact {
        Fact {
            object: self.vmi_object(),
            field: field.to_string(),
            value: value.into(),
            note: None,
        }
    }

    /// A fact from this migration's own migrationState.
    pub fn state_fact(&self, field: &str, value: impl Into<String>) -> Fact {
        Fact {
            object: self
                .state_owner
                .clone()
                .unwrap_or_else(|| self.vmim_object()),
            field: format!("status.migrationState.{field}"),
            value: value.into(),
            note: None,
        }
    }

    pub fn pod_fact(&self, pod: &str, field: &str, value: impl Into<String>) -> Fact {
        Fact {
            object: self.pod_object(pod),
            field: field.to_string(),
            value: value.into(),
            note: None,
        }
    }

    pub fn event_fact(&self, e: &Event) -> Fact {
        let about = {
            let o = &e.involved_object;
            format!(
                "{} {}/{}",
                o.kind.as_deref().unwrap_or("?"),
                o.namespace.as_deref().unwrap_or(self.namespace()),
                o.name.as_deref().unwrap_or("?")
            )
        };
        let count = event_count(e);
        let repeated = if count > 1 {
            format!(
                ", ×{count}, last {}",
                event_last(e)
                    .and_then(|t| Timestamp::from_second(t.as_second()).ok())
                    .map(|t| t.to_string())
                    .unwrap_or_default()
            )
        } else {
            String::new()
        };
        Fact {
            object: format!(
                "Event/{}/{}",
                e.metadata.namespace.as_deref().unwrap_or(self.namespace()),
                event_name(e)
            ),
            field: "message".into(),
            value: event_message(e).to_string(),
            note: Some(format!(
                "{} {} on {about}{repeated}",
                e.type_.as_deref().unwrap_or("Normal"),
                event_reason(e)
            )),
        }
    }

    /// A setting of the effective migration configuration, from where it was read: the
    /// migration's recorded configuration, else the policy or the KubeVirt CR (as they are now).
    pub fn config_fact(&self, key: &str, value: String) -> Fact {
        match &self.config_origin {
            ConfigOrigin::Recorded => {
                self.state_fact(&format!("migrationConfiguration.{key}"), value)
            }
            origin => {
                let policy_sets = |p: &crate::model::MigrationPolicy| {
                    serde_json::to_value(&p.spec)
                        .ok()
                        .is_some_and(|spec| spec.get(key).is_some())
                };
                let policy = match origin {
                    ConfigOrigin::Policy(name) => self
                        .ev
                        .policies
                        .iter()
                        .find(|p| p.name() == name && policy_sets(p)),
                    _ => None,
                };
                let (object, field) = match policy {
                    Some(p) => (
                        format!("MigrationPolicy/{}", p.name()),
                        format!("spec.{key}"),
                    ),
                    None => {
                        let (ns, name) = self.kubevirt_ref();
                        (
                            format!("KubeVirt/{ns}/{name}"),
                            format!("spec.configuration.migrations.{key}"),
                        )
                    }
                };
                Fact {
                    object,
                    field,
                    value,
                    note: Some(
                        "as configured now, defaults applied: the migration recorded no configuration"
                            .into(),
                    ),
                }
            }
        }
    }

    /// The facts every diagnosis starts with.
    pub fn base_facts(&self) -> Vec<Fact> {
        let mut facts = Vec::new();
        if let Some(m) = self.vmim {
            match &m.status.phase {
                Some(p) => facts.push(self.vmim_fact("status.phase", p.as_str())),
                None => facts.push(self.vmim_fact("status", "(absent)")),
            }
        }
        if self.vmi.is_none() {
            facts.push(self.vmi_fact("metadata.name", "(not found: the VMI no longer exists)"));
        }
        facts
    }

    // ------------------------------------------------------------ lookups

    pub fn vmim_condition(&self, type_: &str) -> Option<&'a Condition> {
        self.vmim
            .and_then(|m| m.condition(type_))
            .filter(|c| c.is_true())
    }

    pub fn vmi_condition(&self, type_: &str) -> Option<&'a Condition> {
        self.vmi.and_then(|v| v.condition(type_))
    }

    /// Events about the VMIM itself.
    pub fn vmim_events(&self) -> impl Iterator<Item = &'a Event> + '_ {
        let uid = self.vmim.and_then(|m| m.uid());
        let name = self.vmim_name().to_string();
        self.events.iter().copied().filter(move |e| {
            self.vmim.is_some() && event_is_about(e, "VirtualMachineInstanceMigration", &name, uid)
        })
    }

    /// Events about the VMI in this migration's window.
    pub fn vmi_events(&self) -> impl Iterator<Item = &'a Event> + '_ {
        let uid = self.vmi.and_then(|v| v.uid());
        self.events
            .iter()
            .copied()
            .filter(move |e| event_is_about(e, "VirtualMachineInstance", self.vmi_name(), uid))
    }

    /// Events about the target pod (under any name it had).
    pub fn target_pod_events(&self) -> impl Iterator<Item = &'a Event> + '_ {
        self.events.iter().copied().filter(move |e| {
            e.involved_object.kind.as_deref() == Some("Pod")
                && self.target_pod_name.is_some()
                && e.involved_object.name == self.target_pod_name
        })
    }

    /// The newest event (by last occurrence) matching `pred`.
    pub fn newest_event(&self, pred: impl Fn(&Event) -> bool) -> Option<&'a Event> {
        self.events
            .iter()
            .copied()
            .filter(|e| pred(e))
            .max_by_key(|e| event_last(e))
    }

    /// A VMIM event with this exact message (or message prefix).
    pub fn vmim_event_starting(&self, prefix: &str) -> Option<&'a Event> {
        self.vmim_events()
            .filter(|e| event_message(e).starts_with(prefix))
            .max_by_key(|e| event_last(e))
    }

    /// `failureReason` when the source reported a failure for this migration.
    pub fn failure_reason(&self) -> Option<&'a str> {
        self.state
            .and_then(|st| st.failure_reason.as_deref())
            .filter(|r| !r.trim().is_empty())
    }

    pub fn mode(&self) -> Option<&'a MigrationMode> {
        self.state.and_then(|st| st.mode.as_ref())
    }

    pub fn in_post_copy(&self) -> bool {
        self.mode() == Some(&MigrationMode::PostCopy)
    }

    pub fn abort_requested(&self) -> bool {
        self.state.is_some_and(|st| st.abort_requested)
            || self.vmim_condition(s::COND_ABORT_REQUESTED).is_some()
    }

    pub fn is_final(&self) -> bool {
        self.phase.is_final()
    }

    /// Streaming time: start → end, or start → now while it runs.
    pub fn elapsed(&self) -> Option<i64> {
        let start = self.start?;
        let end = self.end.unwrap_or(self.now);
        Some((end.as_second() - start.as_second()).max(0))
    }

    pub fn age(&self) -> Option<i64> {
        self.created
            .map(|c| (self.now.as_second() - c.as_second()).max(0))
    }

    pub fn vmi_phase(&self) -> Option<&'a VmiPhase> {
        self.vmi.and_then(|v| v.status.phase.as_ref())
    }

    /// True when the guest is still alive somewhere.
    pub fn vmi_running(&self) -> bool {
        self.vmi_phase()
            .is_some_and(|p| !p.is_final() && *p != VmiPhase::Unknown)
    }

    /// Other migrations of the VMI (not this one).
    pub fn others(&self) -> impl Iterator<Item = &'a VirtualMachineInstanceMigration> + '_ {
        let uid = self.vmim.and_then(|m| m.uid());
        let name = self.vmim_name().to_string();
        self.ev
            .migrations
            .iter()
            .filter(move |m| !(m.uid() == uid && m.name() == name))
    }

    /// The pod whose logs tell the data-plane story: the live one, else the source.
    pub fn log_pod(&self) -> Option<&'a Pod> {
        let live = self
            .pod_infos()
            .into_iter()
            .find(|p| p.live && p.exists)
            .and_then(|p| p.name);
        match live {
            Some(name) => self.ev.pods.iter().find(|p| pod_name(p) == name),
            None => self.source_pod,
        }
    }

    /// The KubeVirt CR as `-n <ns> <name>` for kubectl, with the usual defaults.
    pub fn kubevirt_ref(&self) -> (String, String) {
        match &self.ev.kubevirt {
            Some(kv) => (
                kv.metadata
                    .namespace
                    .clone()
                    .unwrap_or_else(|| "kubevirt".into()),
                kv.metadata
                    .name
                    .clone()
                    .unwrap_or_else(|| "kubevirt".into()),
            ),
            None => ("kubevirt".into(), "kubevirt".into()),
        }
    }

    /// `kubectl patch kubevirt …` setting one key of spec.configuration.migrations.
    pub fn patch_kubevirt_migrations(&self, key: &str, value: &str) -> String {
        let (ns, name) = self.kubevirt_ref();
        format!(
            "kubectl patch kubevirt -n {ns} {name} --type merge -p '{{\"spec\":{{\"configuration\":{{\"migrations\":{{\"{key}\":{value}}}}}}}}}'"
        )
    }

    /// Where to change a policy-overridable setting: the matched MigrationPolicy if any,
    /// else the KubeVirt CR.
    pub fn patch_setting(&self, key: &str, value: &str) -> String {
        match &self.policy {
            Some(p) if self.ev.policies.iter().any(|x| x.name() == p) => format!(
                "kubectl patch migrationpolicy {p} --type merge -p '{{\"spec\":{{\"{key}\":{value}}}}}'  (the MigrationPolicy that applies to this VMI)"
            ),
            _ => format!(
                "{}  (cluster-wide; or create a MigrationPolicy selecting this VMI's labels)",
                self.patch_kubevirt_migrations(key, value)
            ),
        }
    }

    pub fn window(&self) -> (i64, i64) {
        match self.created {
            Some(c) => {
                let end = self.final_at.or(self.end).unwrap_or(self.now);
                (
                    c.as_second() - WINDOW_BEFORE_SECONDS,
                    end.as_second().max(c.as_second()) + WINDOW_AFTER_SECONDS,
                )
            }
            // Without a migration, the last hour: what a real cluster still keeps events for.
            None => (self.now.as_second() - 3600, i64::MAX),
        }
    }

    fn relevant_events(&self, target_names: &[String]) -> Vec<&'a Event> {
        let (from, to) = self.window();
        let in_window = |e: &Event| {
            let first = event_first(e).map(|t| t.as_second()).unwrap_or(i64::MIN);
            let last = event_last(e).map(|t| t.as_second()).unwrap_or(i64::MAX);
            last >= from && first <= to
        };
        let uid = self
            .vmim
            .and_then(|m| m.uid())
            .or_else(|| self.state.and_then(|st| st.migration_uid.as_deref()))
            .unwrap_or("");
        let other_uids: Vec<&str> = self
            .ev
            .migrations
            .iter()
            .filter_map(|m| m.uid())
            .filter(|u| *u != uid)
            .collect();
        let other_names: Vec<&str> = self
            .ev
            .migrations
            .iter()
            .map(|m| m.name())
            .filter(|n| *n != self.vmim_name())
            .collect();
        let vmi_uid = self.vmi.and_then(|v| v.uid());
        let source = self.source_pod_name.as_deref();
        let mut events: Vec<&Event> = self
            .ev
            .events
            .iter()
            .filter(|e| {
                if let Some(m) = self.vmim
                    && event_is_about(e, "VirtualMachineInstanceMigration", m.name(), m.uid())
                {
                    return true;
                }
                let o = &e.involved_object;
                if o.kind.as_deref() == Some("Pod") {
                    let name = o.name.as_deref().unwrap_or("");
                    if target_names.iter().any(|n| n == name) {
                        return true;
                    }
                    return Some(name) == source && in_window(e);
                }
                if event_is_about(e, "VirtualMachineInstance", self.vmi_name(), vmi_uid) {
                    let msg = event_message(e);
                    if !uid.is_empty() && msg.contains(uid) {
                        return true;
                    }
                    // virt-handler's "VirtualMachineInstance migration uid <uid> failed…".
                    if let Some(rest) = msg.split("migration uid ").nth(1) {
                        return rest.split_whitespace().next() == Some(uid);
                    }
                    // Events that name another migration belong to that one.
                    if other_uids.iter().any(|u| msg.contains(u))
                        || other_names
                            .iter()
                            .any(|n| msg.strip_prefix("Created Migration ") == Some(n))
                    {
                        return false;
                    }
                    return in_window(e);
                }
                false
            })
            .collect();
        events.sort_by_key(|e| (event_first(e), event_name(e).to_string()));
        events
    }

    // ------------------------------------------------------------ summaries

    /// The sides of a decentralized (cross-cluster) migration, when this is one.
    pub fn decentralized(&self) -> Option<DecentralizedInfo> {
        decentralized_info(self.vmim, self.vmi, self.state, &self.phase)
    }

    pub fn vmi_info(&self) -> VmiInfo {
        let v = self.vmi;
        VmiInfo {
            namespace: self.namespace().to_string(),
            name: self.vmi_name().to_string(),
            exists: v.is_some(),
            phase: v
                .and_then(|v| v.status.phase.as_ref())
                .map(|p| p.as_str().to_string())
                .filter(|p| !p.is_empty()),
            node: v.and_then(|v| v.status.node_name.clone()),
            evacuation_node: v.and_then(|v| v.evacuation_node().map(str::to_string)),
            live_migratable: self.migratability.as_ref().and_then(|m| m.live_migratable),
            not_migratable_because: self
                .migratability
                .as_ref()
                .map(|m| m.reasons.clone())
                .unwrap_or_default(),
        }
    }

    /// True while the guest's memory is being streamed by this migration.
    pub fn streaming(&self) -> bool {
        !self.is_final() && self.start.is_some() && !self.state.is_some_and(|st| st.completed)
    }

    fn is_live(&self, pod: &Pod, role: &str) -> bool {
        if pod_phase(pod) != Some("Running") || pod.metadata.deletion_timestamp.is_some() {
            return false;
        }
        // A decentralized migration whose guest runs in the peer cluster: nothing here is live.
        if self.decentralized().is_some_and(|d| !d.live_here) {
            return false;
        }
        if !self.vmi_running() {
            return false;
        }
        if self.streaming() {
            return match role {
                "target" => self.in_post_copy(),
                "source" => !self.in_post_copy(),
                _ => false,
            };
        }
        let node = self.vmi.and_then(|v| v.status.node_name.as_deref());
        node.is_some() && pod_node(pod) == node
    }

    pub fn pod_infos(&self) -> Vec<PodInfo> {
        let mut out = Vec::new();
        let mut add =
            |role: &str, name: Option<&String>, pod: Option<&Pod>, node: Option<String>| {
                if name.is_none() && pod.is_none() {
                    return;
                }
                out.push(PodInfo {
                    role: role.to_string(),
                    name: name
                        .cloned()
                        .or_else(|| pod.map(|p| pod_name(p).to_string())),
                    node: pod.and_then(pod_node).map(str::to_string).or(node),
                    phase: pod.and_then(pod_phase).map(str::to_string),
                    exists: pod.is_some(),
                    live: pod.is_some_and(|p| self.is_live(p, role)),
                });
            };
        add(
            "source",
            self.source_pod_name.as_ref(),
            self.source_pod,
            self.state.and_then(|st| st.source_node.clone()),
        );
        add(
            "target",
            self.target_pod_name.as_ref(),
            self.target_pod,
            self.state.and_then(|st| st.target_node.clone()),
        );
        if !out.iter().any(|p| p.live)
            && let Some(current) = active_pod(&self.pods, self.vmi)
            && !out
                .iter()
                .any(|p| p.name.as_deref() == Some(pod_name(current)))
            && self.vmi_running()
        {
            out.push(PodInfo {
                role: "current".into(),
                name: Some(pod_name(current).to_string()),
                node: pod_node(current).map(str::to_string),
                phase: pod_phase(current).map(str::to_string),
                exists: true,
                live: true,
            });
        }
        out
    }

    /// Steps that fit any cause of this plane; rule steps come first.
    pub fn common_next_steps(&self, rule: &super::Rule) -> Vec<String> {
        let mut steps = Vec::new();
        let ns = self.namespace();
        if rule.cause.plane == super::Plane::DataPlane {
            match self.log_pod() {
                Some(p) => steps.push(format!(
                    "Read the migration monitor's log lines: kubectl logs -n {ns} {} -c compute | grep -i migration",
                    pod_name(p)
                )),
                None => {
                    if let Some(name) = &self.source_pod_name {
                        steps.push(format!(
                            "The source pod {name} is gone; search your log store for its compute container and the migration uid {}",
                            self.vmim.and_then(|m| m.uid()).unwrap_or("?")
                        ));
                    }
                }
            }
        }
        if self.ev.migrations.len() > 1 && self.has_migration() {
            steps.push(history_hint(ns, self.vmi_name()));
        }
        steps
    }
}

fn vmim_object(m: &VirtualMachineInstanceMigration) -> String {
    format!(
        "VirtualMachineInstanceMigration/{}/{}",
        m.namespace(),
        m.name()
    )
}

fn vmi_object_of(ev: &Evidence) -> String {
    format!(
        "VirtualMachineInstance/{}/{}",
        ev.vmi_namespace, ev.vmi_name
    )
}

/// A launcher pod of the VMI: by the created-by label, else (VMI gone) by the domain
/// annotation, else because it is the target of one of the VMI's migrations.
fn pod_belongs(p: &Pod, ev: &Evidence, vmi: Option<&VirtualMachineInstance>) -> bool {
    if p.metadata
        .namespace
        .as_deref()
        .is_some_and(|ns| ns != ev.vmi_namespace)
    {
        return false;
    }
    if let Some(uid) = vmi.and_then(|v| v.uid())
        && pod_label(p, CREATED_BY_LABEL) == Some(uid)
    {
        return true;
    }
    if pod_annotation(p, s::DOMAIN_ANNOTATION) == Some(ev.vmi_name.as_str()) {
        return true;
    }
    let job = pod_label(p, MIGRATION_JOB_UID_LABEL);
    job.is_some() && ev.migrations.iter().any(|m| m.uid() == job)
}

/// The pod the guest runs in: Running, on the VMI's node.
/// Whether nothing moved the VMI since the final migration `m` was created, when `m` itself
/// never reached the hand-off (`state`, its own migrationState, is absent): no later
/// migration of the VMI succeeded, the VMI's migrationState records no later move, and the
/// VMI object is not younger than the migration (a restart schedules it anew). Pure.
fn unmoved_since(
    ev: &Evidence,
    m: &VirtualMachineInstanceMigration,
    state: Option<&MigrationState>,
) -> bool {
    let (Some(vmi), Some(created), None) = (
        ev.vmi.as_ref(),
        m.metadata.creation_timestamp.as_ref().map(ts),
        state,
    ) else {
        return false;
    };
    let after = |t: Option<&Time>| t.is_none_or(|t| ts(t) >= created);
    let later_success = ev.migrations.iter().any(|o| {
        o.uid() != m.uid()
            && o.phase() == MigrationPhase::Succeeded
            && after(o.metadata.creation_timestamp.as_ref())
    });
    let moved_by_state = vmi.status.migration_state.as_ref().is_some_and(|st| {
        !state_is_for(st, m) && st.completed && !st.failed && after(st.end_timestamp.as_ref())
    });
    let restarted = vmi
        .metadata
        .creation_timestamp
        .as_ref()
        .is_none_or(|t| ts(t) > created);
    vmi.status.node_name.is_some() && !later_success && !moved_by_state && !restarted
}

fn active_pod<'a>(pods: &[&'a Pod], vmi: Option<&VirtualMachineInstance>) -> Option<&'a Pod> {
    let node = vmi?.status.node_name.as_deref()?;
    pods.iter()
        .copied()
        .find(|p| pod_phase(p) == Some("Running") && pod_node(p) == Some(node))
}

#[cfg(test)]
mod hint_tests {
    use super::history_hint;

    /// Issue 33: the one history hint names the VM as the docs do (`vm/`), and a name a
    /// shell would read is quoted so the command runs as pasted.
    #[test]
    fn the_history_hint_is_one_pasteable_command() {
        assert_eq!(
            history_hint("prod", "db-01"),
            "See every attempt and the backoff between them: vmctl explain vm/db-01 -n prod --history"
        );
        assert_eq!(
            history_hint("a b", "x'$(y)"),
            "See every attempt and the backoff between them: vmctl explain vm/'x'\\''$(y)' -n 'a b' --history"
        );
    }
}
