//! What `vmctl drain` evicts and what the Eviction API's answers mean. Pure.
//!
//! - [`select_pods`]: kubectl drain's pod filters (`k8s.io/kubectl/pkg/drain/filters.go`),
//!   in kubectl's order (DaemonSet, mirror, local storage, unreplicated), with kubectl's
//!   messages, so a non-VM pod is evicted, skipped or refused exactly as `kubectl drain`
//!   would with the same flags. One difference, on purpose: a virt-launcher pod is a VM's,
//!   and its emptyDir volumes are the launcher's scratch space (sockets, the domain's
//!   runtime files); vmctl does not ask for `--delete-emptydir-data` to move a VM by live
//!   migration. (Shutting a VM down needs `--allow-shutdowns` instead.)
//! - [`read_answer`]: an eviction's HTTP answer, read the way KubeVirt's webhook
//!   (FACTS §2.1) and the API server's eviction storage (`eviction.go`) write it.

use serde::Serialize;

use crate::model::{Pod, PodDisruptionBudget};

use super::super::pdb::{MORE_THAN_ONE_PDB, WOULD_VIOLATE};
use super::super::pods::{LAUNCHER_LABEL, LAUNCHER_VALUE, pod_labels};

/// kubectl's annotation on a static pod's mirror.
pub const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// The annotation on a launcher pod naming its VMI.
pub const DOMAIN_ANNOTATION: &str = "kubevirt.io/domain";

/// kubectl drain's flags that decide which pods go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PodFilters {
    pub ignore_daemonsets: bool,
    pub delete_emptydir_data: bool,
    pub force: bool,
}

/// (namespace, name).
pub type PodKey = (String, String);

/// A pod the drain evicts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodToEvict {
    pub namespace: String,
    pub name: String,
    pub node: String,
    /// The VMI a virt-launcher pod runs (from `kubevirt.io/domain`).
    pub vmi: Option<String>,
    /// Succeeded or Failed: evicted without a PDB check or KubeVirt's webhook.
    pub finished: bool,
}

impl PodToEvict {
    pub fn key(&self) -> PodKey {
        (self.namespace.clone(), self.name.clone())
    }

    pub fn id(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// kubectl's verdict on the pods of a node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSelection {
    pub evict: Vec<PodToEvict>,
    /// Left on the node, with kubectl's warning (`ignoring DaemonSet-managed Pods`) or none
    /// (mirror pods): `(namespace/name, why)`.
    pub skipped: Vec<(String, String)>,
    /// Evicted with kubectl's warning (`deleting Pods with local storage`, …).
    pub warnings: Vec<(String, String)>,
    /// What stops the drain before anything is evicted: `cannot delete <why>: <pods>`, one
    /// line per kind, as kubectl says it.
    pub errors: Vec<String>,
}

const DAEMONSET_FATAL: &str = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)";
const DAEMONSET_WARNING: &str = "ignoring DaemonSet-managed Pods";
const LOCAL_STORAGE_FATAL: &str =
    "Pods with local storage (use --delete-emptydir-data to override)";
const LOCAL_STORAGE_WARNING: &str = "deleting Pods with local storage";
const UNMANAGED_FATAL: &str = "Pods declare no controller (use --force to override)";
const UNMANAGED_WARNING: &str = "deleting Pods that declare no controller";

fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("")
}

fn is_finished(pod: &Pod) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed")
}

pub fn is_launcher(pod: &Pod) -> bool {
    pod_labels(pod).get(LAUNCHER_LABEL).map(String::as_str) == Some(LAUNCHER_VALUE)
}

/// The VMI a launcher pod runs.
pub fn launcher_vmi(pod: &Pod) -> Option<String> {
    if !is_launcher(pod) {
        return None;
    }
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(DOMAIN_ANNOTATION))
        .cloned()
        .or_else(|| {
            pod.metadata
                .owner_references
                .as_ref()?
                .iter()
                .find(|o| o.kind == "VirtualMachineInstance")
                .map(|o| o.name.clone())
        })
}

fn controller(
    pod: &Pod,
) -> Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference> {
    pod.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|o| o.controller == Some(true))
}

fn has_local_storage(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.volumes.as_ref())
        .is_some_and(|v| v.iter().any(|v| v.empty_dir.is_some()))
}

/// What a GET of a DaemonSet said (kubectl's daemonSetFilter reads the pod's DaemonSet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DaemonSetLookup {
    Exists,
    /// 404, with the API server's message (`daemonsets.apps "x" not found`).
    NotFound(String),
    /// Any other failure, with its message: kubectl refuses the pod with it.
    Failed(String),
}

/// The DaemonSets of the pods on the nodes, by (namespace, name); one not listed counts as
/// existing (e.g. a snapshot, which holds no DaemonSets).
pub type DaemonSets = std::collections::BTreeMap<(String, String), DaemonSetLookup>;

/// The DaemonSets `select_pods` needs to read: the controllers of the DaemonSet-managed pods
/// that are not finished, (namespace, name).
pub fn daemonsets_to_read<'p>(pods: impl IntoIterator<Item = &'p Pod>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = pods
        .into_iter()
        .filter(|p| !is_finished(p))
        .filter_map(|p| {
            let owner = controller(p).filter(|o| o.kind == "DaemonSet")?;
            Some((
                p.metadata.namespace.clone().unwrap_or_default(),
                owner.name.clone(),
            ))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// One filter's verdict (kubectl's `PodDeleteStatus`: delete or not, and why).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Filtered {
    Okay,
    /// Not evicted; kubectl's warning when it has one.
    Skip(Option<String>),
    /// Evicted, with kubectl's warning.
    Warn(String),
    /// Refused: the drain does not start.
    Fatal(String),
}

impl Filtered {
    fn deletes(&self) -> bool {
        matches!(self, Filtered::Okay | Filtered::Warn(_))
    }
}

fn daemonset_filter(pod: &Pod, f: PodFilters, daemonsets: &DaemonSets) -> Filtered {
    let Some(owner) = controller(pod).filter(|o| o.kind == "DaemonSet") else {
        return Filtered::Okay;
    };
    if is_finished(pod) {
        return Filtered::Okay;
    }
    let key = (
        pod.metadata.namespace.clone().unwrap_or_default(),
        owner.name.clone(),
    );
    let daemonset = format!("{}/{}", key.0, key.1);
    match daemonsets.get(&key) {
        // kubectl's daemonSetFilter: a 404 (`apierrors.IsNotFound`, which a path the API
        // server does not serve answers too) makes the pod an orphan: it goes with --force,
        // else it is refused. kubectl says only the API's words (`cannot delete the server
        // could not find the requested resource: POD`); vmctl names the DaemonSet too.
        Some(DaemonSetLookup::NotFound(m)) if f.force => {
            return Filtered::Warn(orphan(&daemonset, &key.1, m, ""));
        }
        Some(DaemonSetLookup::NotFound(m)) => {
            return Filtered::Fatal(orphan(
                &daemonset,
                &key.1,
                m,
                "; kubectl drain deletes such a pod only with --force",
            ));
        }
        Some(DaemonSetLookup::Failed(m)) => {
            return Filtered::Fatal(format!(
                "DaemonSet-managed Pods whose DaemonSet {daemonset} could not be read ({m})"
            ));
        }
        Some(DaemonSetLookup::Exists) | None => {}
    }
    if !f.ignore_daemonsets {
        return Filtered::Fatal(DAEMONSET_FATAL.into());
    }
    Filtered::Skip(Some(DAEMONSET_WARNING.into()))
}

/// Why a DaemonSet pod is an orphan, from the 404's message: the DaemonSet is gone
/// (`daemonsets.apps "NAME" not found`), or the API server serves no DaemonSets at all (any
/// other 404: `the server could not find the requested resource`, a plain-text body).
/// The message of the API server's 404 for a path it does not serve.
const NOT_SERVED: &str = "the server could not find the requested resource";

fn orphan(daemonset: &str, name: &str, message: &str, tail: &str) -> String {
    let gone = format!("DaemonSet-managed Pods whose DaemonSet {daemonset} is not found");
    if message.contains(&format!("\"{name}\" not found")) {
        format!("{gone} ({message}{tail})")
    } else if message == NOT_SERVED {
        // The API server's own words for a path it does not serve: said plainly.
        format!("{gone} (the API server serves no apps/v1 DaemonSets{tail})")
    } else {
        format!("{gone} (the API server serves no apps/v1 DaemonSets: {message}{tail})")
    }
}

fn mirror_filter(pod: &Pod) -> Filtered {
    if pod
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(MIRROR_POD_ANNOTATION))
    {
        return Filtered::Skip(None);
    }
    Filtered::Okay
}

fn local_storage_filter(pod: &Pod, f: PodFilters) -> Filtered {
    // Not for a launcher pod: see the module documentation.
    if !has_local_storage(pod) || is_finished(pod) || is_launcher(pod) {
        return Filtered::Okay;
    }
    if !f.delete_emptydir_data {
        return Filtered::Fatal(LOCAL_STORAGE_FATAL.into());
    }
    Filtered::Warn(LOCAL_STORAGE_WARNING.into())
}

fn unreplicated_filter(pod: &Pod, f: PodFilters) -> Filtered {
    if is_finished(pod) || controller(pod).is_some() {
        return Filtered::Okay;
    }
    if !f.force {
        return Filtered::Fatal(UNMANAGED_FATAL.into());
    }
    Filtered::Warn(UNMANAGED_WARNING.into())
}

/// kubectl's filters in kubectl's order (`GetPodsForDeletion`): each runs while the one
/// before lets the pod go, and the last verdict stands, so a later "okay" drops an earlier
/// warning, exactly as kubectl prints it.
fn filter(pod: &Pod, f: PodFilters, daemonsets: &DaemonSets) -> Filtered {
    let mut status = daemonset_filter(pod, f, daemonsets);
    if status.deletes() {
        status = mirror_filter(pod);
    }
    if status.deletes() {
        status = local_storage_filter(pod, f);
    }
    if status.deletes() {
        status = unreplicated_filter(pod, f);
    }
    status
}

/// The pods of the nodes (as listed with `spec.nodeName=NODE`, narrowed by
/// `--pod-selector`) sorted the way kubectl sees them, through kubectl's filters.
pub fn select_pods<'p>(
    pods: impl IntoIterator<Item = &'p Pod>,
    f: PodFilters,
    daemonsets: &DaemonSets,
) -> PodSelection {
    let mut out = PodSelection::default();
    let mut fatal: Vec<(String, Vec<String>)> = Vec::new();
    let mut pods: Vec<&Pod> = pods.into_iter().collect();
    pods.sort_by(|a, b| {
        (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
    });
    for pod in pods {
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let name = pod.metadata.name.clone().unwrap_or_default();
        let id = format!("{namespace}/{name}");
        let node = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default();
        let evict = PodToEvict {
            namespace,
            name,
            node,
            vmi: launcher_vmi(pod),
            finished: is_finished(pod),
        };
        match filter(pod, f, daemonsets) {
            Filtered::Okay => out.evict.push(evict),
            Filtered::Warn(w) => {
                out.warnings.push((id, w));
                out.evict.push(evict);
            }
            Filtered::Skip(why) => out
                .skipped
                .push((id, why.unwrap_or_else(|| MIRROR_POD.to_string()))),
            Filtered::Fatal(why) => match fatal.iter_mut().find(|(w, _)| *w == why) {
                Some((_, ids)) => ids.push(id),
                None => fatal.push((why, vec![id])),
            },
        }
    }
    out.errors = fatal
        .into_iter()
        .map(|(why, ids)| format!("cannot delete {why}: {}", ids.join(", ")))
        .collect();
    out
}

/// Why a mirror pod stays (kubectl skips it without a word).
pub const MIRROR_POD: &str = "mirror pod (static)";

/// What one eviction request got back, read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "answer", rename_all = "kebab-case")]
pub enum Answer {
    /// 200/201: the pod is being deleted.
    Evicted,
    /// 404: already gone.
    Gone,
    /// 429 from KubeVirt's webhook: the VMI is now marked; KubeVirt migrates it.
    EvacuationStarted,
    /// 429: the VMI was already marked, its evacuation goes on.
    EvacuationInProgress,
    /// 429: the pod is a migration's target pod (it goes with the migration).
    TargetPod,
    /// 429: `LiveMigrate` but not live-migratable: never evicted until that changes.
    NotMigratable { message: String },
    /// 429: a hotplug attachment pod of a running VMI (it goes with the VMI).
    HotplugPod { message: String },
    /// 429 from a PDB: waiting for the budget.
    Budget {
        pdb: Option<String>,
        message: String,
    },
    /// 500: more than one PDB selects the pod; the eviction API never evicts it.
    MoreThanOnePdb,
    /// 429 "still being processed" from a PDB whose status never catches up with its spec
    /// (its sync fails and `failSafe` does not advance observedGeneration): for good.
    PdbNeverSyncs { pdb: String, message: String },
    /// 429 for another reason (API priority and fairness, …): try again.
    TooManyRequests { message: String },
    /// 403: not allowed (RBAC), or a PDB forbids it.
    Forbidden { message: String },
    /// Anything else: the status and the server's message.
    Failed { status: u16, message: String },
}

impl Answer {
    /// The drain cannot get past this pod while things stay as they are.
    pub fn blocks(&self) -> bool {
        matches!(
            self,
            Answer::NotMigratable { .. }
                | Answer::MoreThanOnePdb
                | Answer::Forbidden { .. }
                | Answer::PdbNeverSyncs { .. }
        )
    }

    /// Worth asking again later (kubectl retries every 429 after 5 s).
    pub fn retry(&self) -> bool {
        matches!(
            self,
            Answer::EvacuationStarted
                | Answer::EvacuationInProgress
                | Answer::TargetPod
                | Answer::HotplugPod { .. }
                | Answer::Budget { .. }
                | Answer::TooManyRequests { .. }
        ) || matches!(self, Answer::Failed { status, .. } if *status >= 500)
    }
}

/// Reads an eviction's answer: the HTTP status, the `Status` message and the
/// `details.causes[]` messages.
pub fn read_answer(status: u16, message: &str, causes: &[String]) -> Answer {
    let message = message.to_string();
    match status {
        200 | 201 => Answer::Evicted,
        404 => Answer::Gone,
        429 if message.contains("Eviction triggered evacuation of VMI") => {
            if message.contains("Evacuation in progress") {
                Answer::EvacuationInProgress
            } else {
                Answer::EvacuationStarted
            }
        }
        429 if message.contains("Eviction request for target Pod") => Answer::TargetPod,
        429 if message.contains("is not live-migratable") => Answer::NotMigratable { message },
        429 if message.contains("cannot evict hotplug pod") => Answer::HotplugPod { message },
        429 if message.contains(WOULD_VIOLATE)
            || causes.iter().any(|c| c.contains("disruption budget")) =>
        {
            let pdb = causes.iter().find_map(|c| {
                c.strip_prefix("The disruption budget ")
                    .and_then(|rest| rest.split_whitespace().next())
                    .map(str::to_string)
            });
            let detail = causes.first().cloned().unwrap_or(message);
            Answer::Budget {
                pdb,
                message: detail,
            }
        }
        429 => Answer::TooManyRequests { message },
        500 if message.contains(MORE_THAN_ONE_PDB)
            || message.contains("more than one PodDisruptionBudget") =>
        {
            Answer::MoreThanOnePdb
        }
        403 => Answer::Forbidden { message },
        status => Answer::Failed { status, message },
    }
}

/// The cause message of a 429 from a PDB whose status is behind its spec
/// (`createTooManyRequestsError`, kubernetes pkg/registry/core/pod/storage/eviction.go).
const STILL_BEING_PROCESSED: &str = "is still being processed by the server";

/// A PDB's "still being processed" 429 read against the PDB as the plan saw it: when its
/// status never catches up (the disruption controller's sync fails, and `failSafe` does not
/// advance observedGeneration) waiting is pointless and the answer blocks. Any other answer
/// is returned as it is.
pub fn for_good(answer: Answer, namespace: &str, pdbs: &[PodDisruptionBudget]) -> Answer {
    let Answer::Budget {
        pdb: Some(name),
        message,
    } = &answer
    else {
        return answer;
    };
    if !message.contains(STILL_BEING_PROCESSED) {
        return answer;
    }
    let found = pdbs.iter().find(|p| {
        p.metadata.name.as_deref() == Some(name.as_str())
            && p.metadata.namespace.as_deref() == Some(namespace)
    });
    let never = found.and_then(|p| {
        crate::policy::pdb::budget(p, &[], false)
            .never_catches_up()
            .map(str::to_string)
    });
    match never {
        Some(why) => Answer::PdbNeverSyncs {
            pdb: name.clone(),
            message: format!(
                "{message}: for good, its status never catches up with its spec because the disruption controller cannot sync it ({why}); fix PodDisruptionBudget {namespace}/{name}"
            ),
        },
        None => answer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(v: serde_json::Value) -> Pod {
        serde_json::from_value(v).unwrap()
    }

    fn owned(name: &str, kind: &str) -> Pod {
        pod(json!({"metadata": {"name": name, "namespace": "app",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": kind, "name": "owner", "uid": "u", "controller": true}]},
            "spec": {"nodeName": "node-1", "containers": []}, "status": {"phase": "Running"}}))
    }

    #[test]
    fn a_still_being_processed_429_from_a_pdb_that_never_syncs_blocks_for_good() {
        let cause = "The disruption budget web-pdb is still being processed by the server.";
        let answer = read_answer(429, WOULD_VIOLATE, &[cause.to_string()]);
        assert!(answer.retry() && !answer.blocks(), "{answer:?}");
        let make = |status: serde_json::Value| -> PodDisruptionBudget {
            serde_json::from_value(json!({"metadata": {"name": "web-pdb", "namespace": "prod", "generation": 2},
                "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}, "status": status}))
            .unwrap()
        };
        let failed = make(json!({"observedGeneration": 1, "disruptionsAllowed": 0,
            "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0,
            "conditions": [{"type": "DisruptionAllowed", "status": "False", "reason": "SyncFailed",
                "message": "virtualmachineinstances.kubevirt.io does not implement the scale subresource",
                "lastTransitionTime": "2026-11-02T00:00:05Z"}]}));
        let judged = for_good(answer.clone(), "prod", std::slice::from_ref(&failed));
        assert!(judged.blocks(), "{judged:?}");
        let Answer::PdbNeverSyncs { pdb, message } = &judged else {
            panic!("{judged:?}")
        };
        assert_eq!(pdb, "web-pdb");
        assert!(
            message.contains("does not implement the scale subresource"),
            "{message}"
        );
        // Catching up (no SyncFailed), another namespace, or another answer: as it was.
        let catching_up = make(json!({"observedGeneration": 1, "disruptionsAllowed": 0,
            "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}));
        assert_eq!(for_good(answer.clone(), "prod", &[catching_up]), answer);
        assert_eq!(
            for_good(answer.clone(), "dev", std::slice::from_ref(&failed)),
            answer
        );
        let needs = read_answer(
            429,
            WOULD_VIOLATE,
            &["The disruption budget web-pdb needs 1 healthy pods and has 1 currently".into()],
        );
        assert_eq!(for_good(needs.clone(), "prod", &[failed]), needs);
    }

    #[test]
    fn kubectls_filters_with_kubectls_words() {
        let ds = owned("ds-1", "DaemonSet");
        let rs = owned("web-1", "ReplicaSet");
        let mut scratch = owned("cache-1", "ReplicaSet");
        if let Some(spec) = scratch.spec.as_mut() {
            spec.volumes = Some(vec![
                serde_json::from_value(json!({"name": "tmp", "emptyDir": {}})).unwrap(),
            ]);
        }
        let bare = pod(json!({"metadata": {"name": "bare", "namespace": "app"},
            "spec": {"nodeName": "node-1", "containers": []}, "status": {"phase": "Running"}}));
        let mirror = pod(
            json!({"metadata": {"name": "etcd", "namespace": "kube-system",
            "annotations": {"kubernetes.io/config.mirror": "x"}},
            "spec": {"nodeName": "node-1", "containers": []}, "status": {"phase": "Running"}}),
        );
        let done = pod(json!({"metadata": {"name": "job-1", "namespace": "app"},
            "spec": {"nodeName": "node-1", "containers": []}, "status": {"phase": "Succeeded"}}));
        let all = [&ds, &rs, &scratch, &bare, &mirror, &done];

        let strict = select_pods(all, PodFilters::default(), &DaemonSets::new());
        assert_eq!(
            strict.errors,
            [
                "cannot delete Pods declare no controller (use --force to override): app/bare",
                "cannot delete Pods with local storage (use --delete-emptydir-data to override): app/cache-1",
                "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): app/ds-1",
            ]
        );

        let lenient = select_pods(
            all,
            PodFilters {
                ignore_daemonsets: true,
                delete_emptydir_data: true,
                force: true,
            },
            &DaemonSets::new(),
        );
        assert!(lenient.errors.is_empty());
        let evicted: Vec<String> = lenient.evict.iter().map(PodToEvict::id).collect();
        assert_eq!(
            evicted,
            ["app/bare", "app/cache-1", "app/job-1", "app/web-1"]
        );
        assert_eq!(
            lenient.skipped,
            [
                ("app/ds-1".to_string(), DAEMONSET_WARNING.to_string()),
                (
                    "kube-system/etcd".to_string(),
                    "mirror pod (static)".to_string()
                ),
            ]
        );
        // kubectl's last verdict stands: the cache pod has a controller, so its emptyDir
        // warning is overwritten by the unreplicated filter's "okay".
        assert_eq!(
            lenient.warnings,
            [("app/bare".to_string(), UNMANAGED_WARNING.to_string())]
        );
        assert!(
            lenient
                .evict
                .iter()
                .any(|p| p.name == "job-1" && p.finished)
        );
    }

    #[test]
    fn an_orphaned_daemonset_pod_goes_with_force_and_is_refused_without() {
        let ds = owned("ds-1", "DaemonSet");
        assert_eq!(
            daemonsets_to_read([&ds]),
            [("app".to_string(), "owner".to_string())]
        );
        let gone: DaemonSets = [(
            ("app".to_string(), "owner".to_string()),
            DaemonSetLookup::NotFound("daemonsets.apps \"owner\" not found".into()),
        )]
        .into();
        let ignore = PodFilters {
            ignore_daemonsets: true,
            ..PodFilters::default()
        };
        assert_eq!(
            select_pods([&ds], ignore, &gone).errors,
            [
                "cannot delete DaemonSet-managed Pods whose DaemonSet app/owner is not found (daemonsets.apps \"owner\" not found; kubectl drain deletes such a pod only with --force): app/ds-1"
            ]
        );
        // No DaemonSets served at all (kubectl: `cannot delete the server could not find
        // the requested resource: app/ds-1`): said so, naming the DaemonSet and the pod.
        let unserved: DaemonSets = [(
            ("app".to_string(), "owner".to_string()),
            DaemonSetLookup::NotFound("the server could not find the requested resource".into()),
        )]
        .into();
        assert_eq!(
            select_pods([&ds], ignore, &unserved).errors,
            [
                "cannot delete DaemonSet-managed Pods whose DaemonSet app/owner is not found (the API server serves no apps/v1 DaemonSets; kubectl drain deletes such a pod only with --force): app/ds-1"
            ]
        );
        let forced = select_pods(
            [&ds],
            PodFilters {
                force: true,
                ..ignore
            },
            &gone,
        );
        assert!(forced.errors.is_empty());
        assert_eq!(forced.evict.len(), 1);
        // kubectl's later filters say "okay" and drop the warning: none is printed.
        assert!(forced.warnings.is_empty(), "{:?}", forced.warnings);
        // It exists: skipped with --ignore-daemonsets.
        let there: DaemonSets = [(
            ("app".to_string(), "owner".to_string()),
            DaemonSetLookup::Exists,
        )]
        .into();
        assert_eq!(select_pods([&ds], ignore, &there).skipped.len(), 1);
    }

    #[test]
    fn a_launcher_pod_is_a_vms_and_needs_no_emptydir_flag() {
        let launcher = pod(
            json!({"metadata": {"name": "virt-launcher-db-01-abcde", "namespace": "prod",
            "labels": {"kubevirt.io": "virt-launcher"},
            "annotations": {"kubevirt.io/domain": "db-01"},
            "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "name": "db-01", "uid": "u", "controller": true}]},
            "spec": {"nodeName": "node-1", "containers": [], "volumes": [{"name": "private", "emptyDir": {}}]},
            "status": {"phase": "Running"}}),
        );
        let s = select_pods([&launcher], PodFilters::default(), &DaemonSets::new());
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert_eq!(s.evict[0].vmi.as_deref(), Some("db-01"));
    }

    #[test]
    fn answers_are_read_as_kubevirt_and_the_api_server_write_them() {
        let hook = "admission webhook \"virt-launcher-eviction-interceptor.kubevirt.io\" denied the request: ";
        assert_eq!(
            read_answer(
                429,
                &format!("{hook}Eviction triggered evacuation of VMI \"prod/db-01\""),
                &[]
            ),
            Answer::EvacuationStarted
        );
        assert_eq!(
            read_answer(
                429,
                &format!(
                    "{hook}Evacuation in progress: Eviction triggered evacuation of VMI \"prod/db-01\""
                ),
                &[]
            ),
            Answer::EvacuationInProgress
        );
        assert!(
            read_answer(
                429,
                &format!("{hook}VMI db-01 is configured with an eviction strategy but is not live-migratable"),
                &[]
            )
            .blocks()
        );
        assert_eq!(
            read_answer(
                429,
                WOULD_VIOLATE,
                &["The disruption budget web-pdb needs 2 healthy pods and has 2 currently".into()]
            ),
            Answer::Budget {
                pdb: Some("web-pdb".into()),
                message: "The disruption budget web-pdb needs 2 healthy pods and has 2 currently"
                    .into()
            }
        );
        assert_eq!(
            read_answer(500, MORE_THAN_ONE_PDB, &[]),
            Answer::MoreThanOnePdb
        );
        assert!(read_answer(500, MORE_THAN_ONE_PDB, &[]).blocks());
        assert_eq!(read_answer(201, "", &[]), Answer::Evicted);
        assert_eq!(read_answer(404, "not found", &[]), Answer::Gone);
        assert!(read_answer(429, "too many requests, please try again later", &[]).retry());
        assert!(read_answer(403, "forbidden", &[]).blocks());
        assert!(!read_answer(400, "bad", &[]).retry());
    }
}
