//! Compatibility before anything moves (issue 25 §3): per VMI, what KubeVirt requires of its
//! migration target node in CPU terms, read from the labels the node labeller writes, and the
//! risks the labels and the launcher versions show that the scheduler cannot see. Pure.
//!
//! What KubeVirt renders for a migration target pod (kubevirt/kubevirt main, 2026-08):
//!
//! - `pkg/virt-controller/services/nodeselectorrenderer.go` (every launcher pod, the target
//!   pod too, rendered from the VMI): a named CPU model → `cpu-model.node.kubevirt.io/<model>`
//!   (not for `host-model`/`host-passthrough`); each `spec.domain.cpu.features` entry with
//!   policy `require` (or empty) → `cpu-feature.node.kubevirt.io/<name>` (only when a model is
//!   set, which the VMI mutator always does); the machine type (`status.machine.type`, else
//!   `spec.domain.machine.type`) → `machine-type.node.kubevirt.io/<type>` (v1.6.0+, commit
//!   ea3202514e; the labeller publishes those labels since 2a66788879).
//! - `pkg/virt-controller/services/template.go`: policy `forbid` → a required node affinity
//!   `cpu-feature.node.kubevirt.io/<name>` DoesNotExist; a host-model VMI → DoesNotExist on
//!   `node-labeller.kubevirt.io/obsolete-host-model`.
//! - `pkg/virt-controller/watch/migration/migration.go` `createTargetPod`: a host-model VMI
//!   gets `cpu-model-migration.node.kubevirt.io/<model>` plus one
//!   `cpu-feature.node.kubevirt.io/<f>` per `host-model-required-features.node.kubevirt.io/<f>`
//!   of the source node (`prepareNodeSelectorForHostCpuModel`) — unless the source launcher
//!   pod's node selector already carries such keys (the VMI migrated before): then those are
//!   copied, so the features stay pinned to the host the VM first ran on; and the source's
//!   `cpu-vendor.node.kubevirt.io/<vendor>` (`getCPUVendorLabelKey`, no migration between
//!   CPU vendors).
//! - `pkg/virt-handler/node-labeller/{node_labeller.go,cpu_plugin.go}`: `cpu-feature` = the
//!   host's supported features (policy require), `cpu-model` = usable models,
//!   `cpu-model-migration` = every known model (usable or not, kubevirt PR #15694),
//!   `host-model-required-features` = the features libvirt's host-model lists beyond its base
//!   model — only those until `--expand-cpu-features` (kubevirt PR #17947, 2026-05): with an
//!   older labeller a feature folded into the model's definition by a libvirt `cpu_map`
//!   update is on no label, and a target without it passes the scheduler.
//!
//! When scheduling succeeds but libvirt refuses the incoming domain, the migration fails with
//! `operation failed: guest CPU doesn't match specification: missing features: …` (kubevirt
//! #12519 `vmx-rdrand-exit,…`, harvester #7965, #11358 `pdcm`) or `extra features: ht`
//! (harvester #11615: QEMU ≥ 10 receiving a guest with threads > 1 from an older QEMU;
//! libvirt commit ba16113c), or QEMU refuses the device state (kubevirt #16386 after
//! 1.6 → 1.7: `Features 0x… unsupported. Allowed features: 0x…`, `Failed to load
//! virtio-net:virtio`). Those are what the labels cannot prove: they are said as risks.
//!
//! The hard requirements become node selectors of the VMI's target pod in the target search
//! ([`augment`]), so a node that lacks them is never predicted as the target and a VMI no
//! node can take is `no-target` with the missing features named ([`lacking`]).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm,
};
use serde::Serialize;

use super::scheduling::{
    CPU_FEATURE_PREFIX, CPU_MODEL_MIGRATION_PREFIX, CPU_MODEL_PREFIX, HOST_MODEL_PREFIX,
    HOST_MODEL_REQUIRED_FEATURES_PREFIX, HostCpu, labels, uses_host_model,
};
use crate::model::{KubeVirt, Node, VirtualMachineInstance};

/// The machine types a node's QEMU supports (`SupportedMachineTypeLabel`).
pub const MACHINE_TYPE_PREFIX: &str = "machine-type.node.kubevirt.io/";
/// The CPU vendor of a node (`CPUModelVendorLabel`).
pub const CPU_VENDOR_PREFIX: &str = "cpu-vendor.node.kubevirt.io/";
/// Set when the node's host model is in the obsolete CPU list (`NodeHostModelIsObsoleteLabel`).
pub const OBSOLETE_HOST_MODEL_LABEL: &str = "node-labeller.kubevirt.io/obsolete-host-model";

/// What the node labeller published about one node, parsed once per node (labels whose
/// value is not `true` say nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeCpu {
    pub host_model: Option<String>,
    pub host_required: BTreeSet<String>,
    pub migration_models: BTreeSet<String>,
    pub models: BTreeSet<String>,
    pub features: BTreeSet<String>,
    pub vendor: Option<String>,
    pub machine_types: BTreeSet<String>,
    pub obsolete_host_model: bool,
}

impl NodeCpu {
    pub fn of(node: &Node) -> NodeCpu {
        let mut cpu = NodeCpu::default();
        for (k, v) in labels(node) {
            if v != "true" {
                continue;
            }
            if let Some(f) = k.strip_prefix(CPU_FEATURE_PREFIX) {
                cpu.features.insert(f.to_string());
            } else if let Some(m) = k.strip_prefix(CPU_MODEL_MIGRATION_PREFIX) {
                cpu.migration_models.insert(m.to_string());
            } else if let Some(m) = k.strip_prefix(CPU_MODEL_PREFIX) {
                cpu.models.insert(m.to_string());
            } else if let Some(f) = k.strip_prefix(HOST_MODEL_REQUIRED_FEATURES_PREFIX) {
                cpu.host_required.insert(f.to_string());
            } else if let Some(m) = k.strip_prefix(HOST_MODEL_PREFIX) {
                cpu.host_model = Some(m.to_string());
            } else if let Some(m) = k.strip_prefix(MACHINE_TYPE_PREFIX) {
                cpu.machine_types.insert(m.to_string());
            } else if let Some(m) = k.strip_prefix(CPU_VENDOR_PREFIX) {
                cpu.vendor = Some(m.to_string());
            } else if k == OBSOLETE_HOST_MODEL_LABEL {
                cpu.obsolete_host_model = true;
            }
        }
        cpu
    }

    /// Did the node labeller run here (any CPU label)?
    pub fn labelled(&self) -> bool {
        self.host_model.is_some() || !self.features.is_empty() || !self.models.is_empty()
    }
}

/// Which of the labeller's cluster-wide labels some node carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Labelled {
    pub machine_types: bool,
    pub obsolete_host_model: bool,
}

/// How the VMI's CPU is defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CpuMode {
    HostModel,
    HostPassthrough,
    Named,
}

/// What KubeVirt requires of the VMI's migration target node in CPU and machine terms: the
/// node selectors (and the DoesNotExist affinities) of the target pod.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuNeeds {
    /// The model a target must carry: host-model → `cpu-model-migration.node.kubevirt.io/`,
    /// named → `cpu-model.node.kubevirt.io/`.
    pub model: Option<String>,
    /// Features the host model requires (`cpu-feature.node.kubevirt.io/` on the target).
    pub host_features: Vec<String>,
    /// Where the host model comes from: `launcher-pod` (pinned when the VMI first migrated)
    /// or `source-node` (its current labels); None for named models.
    pub host_model_from: Option<&'static str>,
    /// `spec.domain.cpu.features` with policy `require` (or none).
    pub required: Vec<String>,
    /// `spec.domain.cpu.features` with policy `forbid`: the target must not have them.
    pub forbidden: Vec<String>,
    /// The machine type, when the cluster's nodes publish machine-type labels.
    pub machine_type: Option<String>,
    /// The source's CPU vendor.
    pub vendor: Option<String>,
    /// Host-model: the target must not be labelled obsolete-host-model.
    pub not_obsolete: bool,
}

/// The CPU mode of a VMI (`host-model` is KubeVirt's default).
pub fn mode(vmi: &VirtualMachineInstance) -> CpuMode {
    if uses_host_model(vmi) {
        return CpuMode::HostModel;
    }
    match vmi
        .spec
        .domain
        .cpu
        .as_ref()
        .and_then(|c| c.model.as_deref())
    {
        Some("host-passthrough") => CpuMode::HostPassthrough,
        _ => CpuMode::Named,
    }
}

/// The machine type virt-controller renders into the target pod's node selector.
pub fn machine_type(vmi: &VirtualMachineInstance) -> Option<&str> {
    vmi.status
        .machine
        .as_ref()
        .and_then(|m| m.type_.as_deref())
        .filter(|t| !t.is_empty())
        .or_else(|| {
            vmi.spec
                .domain
                .machine
                .as_ref()
                .and_then(|m| m.type_.as_deref())
                .filter(|t| !t.is_empty())
        })
}

impl CpuNeeds {
    /// KubeVirt's CPU requirements for the target pod of `vmi`, running on a node whose
    /// labels are `source`, from a launcher pod with node selector `launcher_selector`;
    /// `labelled`: what the cluster's nodes publish at all (machine-type labels mean a
    /// KubeVirt new enough to render the machine-type selector; without an obsolete-host-model
    /// label anywhere its DoesNotExist affinity excludes nothing and is left out).
    pub fn of(
        vmi: &VirtualMachineInstance,
        source: Option<&NodeCpu>,
        launcher_selector: Option<&BTreeMap<String, String>>,
        labelled: Labelled,
    ) -> CpuNeeds {
        let mut needs = CpuNeeds::default();
        let cpu = vmi.spec.domain.cpu.as_ref();
        match mode(vmi) {
            CpuMode::HostModel => {
                needs.not_obsolete = labelled.obsolete_host_model;
                let pinned = pinned_host_model(launcher_selector);
                if let Some(pinned) = pinned {
                    needs.model = (!pinned.model.is_empty()).then_some(pinned.model);
                    needs.host_features = pinned.features;
                    needs.host_model_from = Some("launcher-pod");
                } else if let Some(model) = source.and_then(|s| s.host_model.clone()) {
                    needs.model = Some(model);
                    needs.host_features = source
                        .map(|s| s.host_required.iter().cloned().collect())
                        .unwrap_or_default();
                    needs.host_model_from = Some("source-node");
                }
            }
            CpuMode::Named => {
                needs.model = cpu.and_then(|c| c.model.clone());
            }
            CpuMode::HostPassthrough => {}
        }
        for f in cpu.map(|c| c.features.as_slice()).unwrap_or(&[]) {
            if f.name.is_empty() {
                continue;
            }
            match f.policy.as_deref() {
                None | Some("") | Some("require") => needs.required.push(f.name.clone()),
                Some("forbid") => needs.forbidden.push(f.name.clone()),
                _ => {}
            }
        }
        needs.required.sort();
        needs.required.dedup();
        needs.forbidden.sort();
        needs.forbidden.dedup();
        if labelled.machine_types {
            needs.machine_type = machine_type(vmi).map(str::to_string);
        }
        needs.vendor = launcher_selector
            .and_then(|s| {
                s.iter()
                    .find(|(k, v)| k.starts_with(CPU_VENDOR_PREFIX) && v.as_str() == "true")
                    .map(|(k, _)| k[CPU_VENDOR_PREFIX.len()..].to_string())
            })
            .or_else(|| source.and_then(|s| s.vendor.clone()));
        needs
    }

    /// The pinned host CPU the target search must use instead of the source node's.
    pub fn pinned(&self) -> Option<HostCpu> {
        (self.host_model_from == Some("launcher-pod")).then(|| HostCpu {
            model: self.model.clone().unwrap_or_default(),
            features: self.host_features.clone(),
        })
    }

    /// What `node` lacks of these needs, as label keys (`=true` wanted) and, for forbidden
    /// features, the key it must not have (`!key`). `mode` decides which model label counts.
    pub fn lacking(&self, mode: CpuMode, node: &NodeCpu) -> Vec<String> {
        let mut missing = Vec::new();
        if let Some(model) = &self.model {
            match mode {
                CpuMode::HostModel if !node.migration_models.contains(model) => {
                    missing.push(format!("{CPU_MODEL_MIGRATION_PREFIX}{model}"));
                }
                CpuMode::Named if !node.models.contains(model) => {
                    missing.push(format!("{CPU_MODEL_PREFIX}{model}"));
                }
                _ => {}
            }
        }
        for f in self.host_features.iter().chain(&self.required) {
            if !node.features.contains(f) {
                missing.push(format!("{CPU_FEATURE_PREFIX}{f}"));
            }
        }
        for f in &self.forbidden {
            if node.features.contains(f) {
                missing.push(format!("!{CPU_FEATURE_PREFIX}{f}"));
            }
        }
        if let Some(t) = &self.machine_type
            && !node.machine_types.contains(t)
        {
            missing.push(format!("{MACHINE_TYPE_PREFIX}{t}"));
        }
        if let Some(v) = &self.vendor
            && node.vendor.as_deref() != Some(v.as_str())
        {
            missing.push(format!("{CPU_VENDOR_PREFIX}{v}"));
        }
        if self.not_obsolete && node.obsolete_host_model {
            missing.push(format!("!{OBSOLETE_HOST_MODEL_LABEL}"));
        }
        missing.sort();
        missing.dedup();
        missing
    }
}

/// The host model a launcher pod's node selector pins. KubeVirt's
/// `prepareNodeSelectorForHostCpuModel` (pkg/virt-controller/watch/migration/migration.go)
/// counts the VMI as migrated before when *any* cpu-feature or cpu-model-migration key is in
/// the source pod's selector (a host-model VMI with required features has cpu-feature keys on
/// its first pod) and then copies only those keys, the model among them if there is one (an
/// empty model here), instead of reading the source node.
fn pinned_host_model(selector: Option<&BTreeMap<String, String>>) -> Option<HostCpu> {
    let selector = selector?;
    if !selector
        .keys()
        .any(|k| k.contains(CPU_MODEL_MIGRATION_PREFIX) || k.contains(CPU_FEATURE_PREFIX))
    {
        return None;
    }
    let model = selector
        .iter()
        .find(|(k, v)| k.starts_with(CPU_MODEL_MIGRATION_PREFIX) && v.as_str() == "true")
        .map(|(k, _)| k[CPU_MODEL_MIGRATION_PREFIX.len()..].to_string())
        .unwrap_or_default();
    let features = selector
        .iter()
        .filter(|(_, v)| v.as_str() == "true")
        .filter_map(|(k, _)| k.strip_prefix(CPU_FEATURE_PREFIX))
        .map(str::to_string)
        .collect();
    Some(HostCpu { model, features })
}

/// The VMI as the target search must see it: KubeVirt's selectors that the scheduling
/// filter does not derive itself (required features, the machine type, the vendor) added
/// to its node selector, and the DoesNotExist ones (forbidden features, an obsolete host
/// model) to every required node affinity term. None: nothing to add.
pub fn augment(vmi: &VirtualMachineInstance, needs: &CpuNeeds) -> Option<VirtualMachineInstance> {
    let mut add: Vec<String> = needs
        .required
        .iter()
        .map(|f| format!("{CPU_FEATURE_PREFIX}{f}"))
        .collect();
    if let Some(t) = &needs.machine_type {
        add.push(format!("{MACHINE_TYPE_PREFIX}{t}"));
    }
    if let Some(v) = &needs.vendor {
        add.push(format!("{CPU_VENDOR_PREFIX}{v}"));
    }
    add.retain(|k| vmi.spec.node_selector.get(k).map(String::as_str) != Some("true"));
    let mut reject: Vec<String> = needs
        .forbidden
        .iter()
        .map(|f| format!("{CPU_FEATURE_PREFIX}{f}"))
        .collect();
    if needs.not_obsolete {
        reject.push(OBSOLETE_HOST_MODEL_LABEL.to_string());
    }
    if add.is_empty() && reject.is_empty() {
        return None;
    }
    let mut out = vmi.clone();
    for k in add {
        out.spec.node_selector.insert(k, "true".into());
    }
    if !reject.is_empty() {
        // `modifyNodeAffintyToRejectLabel`: the requirement joins every term (or is the one
        // term when there is none).
        let requirements: Vec<NodeSelectorRequirement> = reject
            .into_iter()
            .map(|key| NodeSelectorRequirement {
                key,
                operator: "DoesNotExist".into(),
                values: None,
            })
            .collect();
        let affinity = out.spec.affinity.get_or_insert_with(Affinity::default);
        let node = affinity
            .node_affinity
            .get_or_insert_with(NodeAffinity::default);
        let required = node
            .required_during_scheduling_ignored_during_execution
            .get_or_insert_with(|| NodeSelector {
                node_selector_terms: Vec::new(),
            });
        if required.node_selector_terms.is_empty() {
            required
                .node_selector_terms
                .push(NodeSelectorTerm::default());
        }
        for term in &mut required.node_selector_terms {
            term.match_expressions
                .get_or_insert_with(Vec::new)
                .extend(requirements.iter().cloned());
        }
    }
    Some(out)
}

/// One node that lacks what the VMI's target pod requires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeLack {
    pub node: String,
    /// Label keys it lacks (`!key`: a label it must not have).
    pub missing: Vec<String>,
}

/// A risk the labels or the launcher versions show; it does not change the action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompatRisk {
    /// `unlisted-features`, `pinned-features-gone`, `launcher-skew`.
    pub kind: &'static str,
    pub message: String,
}

/// The compatibility of one VMI's migration, as the plan reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuCompat {
    pub mode: CpuMode,
    #[serde(flatten)]
    pub needs: CpuNeeds,
    /// `compatible` (the predicted target carries every label KubeVirt requires),
    /// `no-compatible-node` (no node but the drained ones and the source does: the target
    /// pod stays Pending), `unchecked` (no target to check, or no labels).
    pub status: &'static str,
    /// With `no-compatible-node`: what each node lacks (the first few).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lacking: Vec<NodeLack>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub risks: Vec<CompatRisk>,
}

/// How many lacking nodes a no-compatible-node finding names.
pub const LACKING_SHOWN: usize = 5;

/// The nodes (from `candidates`: name and labels, the drained nodes and the source left
/// out) that lack what `needs` requires (at most [`LACKING_SHOWN`]), and whether any node has
/// it all: at the first such node, with no list.
pub fn lacking<'n>(
    mode: CpuMode,
    needs: &CpuNeeds,
    candidates: impl IntoIterator<Item = (&'n str, &'n NodeCpu)>,
) -> (bool, Vec<NodeLack>) {
    let mut lacks = Vec::new();
    for (name, node) in candidates {
        super::index::work::step(1);
        let missing = needs.lacking(mode, node);
        if missing.is_empty() {
            // One compatible node settles it: nobody reads what the others lack.
            return (true, Vec::new());
        } else if lacks.len() < LACKING_SHOWN {
            lacks.push(NodeLack {
                node: name.to_string(),
                missing,
            });
        }
    }
    (false, lacks)
}

/// The words for a VMI no node is CPU-compatible with.
pub fn no_node_words(lacks: &[NodeLack]) -> String {
    let each: Vec<String> = lacks
        .iter()
        .map(|l| {
            let (has, lacks): (Vec<String>, Vec<String>) =
                l.missing.iter().cloned().partition(|k| k.starts_with('!'));
            let has: Vec<String> = has
                .iter()
                .map(|k| k.trim_start_matches('!').to_string())
                .collect();
            let mut words = Vec::new();
            if !lacks.is_empty() {
                words.push(format!("lacks {}", short_labels(&lacks)));
            }
            if !has.is_empty() {
                words.push(format!("has {} (must not)", short_labels(&has)));
            }
            format!("{} {}", l.node, words.join(" and "))
        })
        .collect();
    format!(
        "no node is CPU-compatible: {} (KubeVirt puts these in the target pod's node selector, so it stays Pending; virt-controller's event NoSuitableNodesForHostModelMigration for host-model VMs)",
        each.join("; ")
    )
}

/// `cpu-feature.node.kubevirt.io/hle, rtm` for a list of label keys: the prefix said once
/// per kind.
pub fn short_labels(keys: &[String]) -> String {
    let mut by_prefix: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for k in keys {
        let (neg, k) = match k.strip_prefix('!') {
            Some(rest) => ("not ", rest),
            None => ("", k.as_str()),
        };
        let (prefix, name) = match k.rfind('/') {
            Some(i) => (&k[..=i], &k[i + 1..]),
            None => ("", k),
        };
        by_prefix
            .entry(format!("{neg}{prefix}"))
            .or_default()
            .push(name.to_string());
    }
    by_prefix
        .into_iter()
        .map(|(p, names)| format!("{p}{}", names.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The risks of moving `vmi` from `source` to `target` (both as labelled): features the
/// source host offers that the target lacks and KubeVirt does not check (host-model), pinned
/// features the source no longer lists, and the launcher image skew against `launcher`
/// (the image a new target pod gets).
pub fn risks(
    vmi: &VirtualMachineInstance,
    needs: &CpuNeeds,
    source: Option<&NodeCpu>,
    target: Option<(&str, &NodeCpu)>,
    launcher: Option<&LauncherImage>,
) -> Vec<CompatRisk> {
    let mut out = Vec::new();
    let host_model = mode(vmi) == CpuMode::HostModel;
    if host_model
        && let (Some(src), Some((name, tgt))) = (source, target)
        && tgt.labelled()
    {
        let checked: BTreeSet<&String> = needs.host_features.iter().collect();
        let unlisted: Vec<&str> = src
            .features
            .iter()
            .filter(|f| !tgt.features.contains(*f) && !checked.contains(f))
            .map(String::as_str)
            .collect();
        if !unlisted.is_empty() {
            out.push(CompatRisk {
                kind: "unlisted-features",
                message: format!(
                    "may fail with \"guest CPU doesn't match specification: missing features: {}\": the source offers them and {name} does not, and KubeVirt checks only the host model's listed required features (a node labeller before kubevirt PR #17947 leaves out features folded into the model; harvester#11358 'missing features: pdcm'); if the guest's host-model CPU has them, the migration fails after the target pod started",
                    unlisted.join(",")
                ),
            });
        }
    }
    if host_model
        && needs.host_model_from == Some("launcher-pod")
        && let Some(src) = source
        && src.labelled()
    {
        let gone: Vec<&str> = needs
            .host_features
            .iter()
            .filter(|f| !src.features.contains(*f))
            .map(String::as_str)
            .collect();
        if !gone.is_empty() {
            out.push(CompatRisk {
                kind: "pinned-features-gone",
                message: format!(
                    "the launcher pod pins features the source node no longer lists ({}): its labels changed since the VM first migrated (a libvirt/QEMU or microcode update); KubeVirt still requires them on every target, so only nodes that still list them can take it (kubevirt PR #17812)",
                    gone.join(", ")
                ),
            });
        }
    }
    if let Some(l) = launcher
        && let Some(running) = vmi
            .status
            .launcher_container_image_version
            .as_deref()
            .filter(|v| !v.is_empty())
        && running != l.image
    {
        let threads = vmi
            .spec
            .domain
            .cpu
            .as_ref()
            .and_then(|c| c.threads)
            .unwrap_or(1);
        let ht = if threads > 1 {
            format!(
                "; with {threads} threads per core, a QEMU ≥ 10 target refuses a guest from an older QEMU with \"guest CPU doesn't match specification: extra features: ht\" unless its libvirt has the fix (harvester#11615, libvirt ba16113c)"
            )
        } else {
            String::new()
        };
        out.push(CompatRisk {
            kind: "launcher-skew",
            message: format!(
                "launcher skew: the VM runs {running}, its target pod gets {} ({}): another QEMU/libvirt; a guest started under the older QEMU can fail to load its device state on the newer one (kubevirt#16386 after 1.6 → 1.7: \"Features 0x… unsupported\", \"Failed to load virtio-net:virtio\"){ht}{}",
                l.image,
                l.from,
                machine_type(vmi)
                    .map(|t| format!("; machine type {t} must exist in the target's QEMU"))
                    .unwrap_or_default()
            ),
        });
    }
    out
}

/// The virt-launcher image a new target pod gets, and where that was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LauncherImage {
    pub image: String,
    pub from: String,
}

/// The current virt-launcher image, from the KubeVirt CR: `observedDeploymentConfig`'s
/// `virtLauncherImage`, else `<registry>/<imagePrefix>virt-launcher:<version>` as
/// virt-operator composes it (`pkg/virt-operator/resource/generate/components/
/// deployments.go`; a digest version `sha256:…` takes `@`), else the observed registry
/// and version of the status.
pub fn launcher_image(kubevirt: &KubeVirt) -> Option<LauncherImage> {
    let status = &kubevirt.status;
    let deployed = &kubevirt.deployed;
    let config: Option<serde_json::Value> = deployed
        .observed_deployment_config
        .as_deref()
        .and_then(|c| serde_json::from_str(c).ok());
    let field = |name: &str| {
        config
            .as_ref()
            .and_then(|c| c.get(name))
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    if let Some(image) = field("virtLauncherImage") {
        return Some(LauncherImage {
            image,
            from: "the KubeVirt CR's observedDeploymentConfig.virtLauncherImage".into(),
        });
    }
    let (registry, prefix, version, from) = match (field("registry"), field("kubeVirtVersion")) {
        (Some(r), Some(v)) => (
            r,
            field("imagePrefix").unwrap_or_default(),
            v,
            "the KubeVirt CR's observedDeploymentConfig",
        ),
        _ => (
            deployed.observed_kube_virt_registry.clone()?,
            String::new(),
            status.observed_kube_virt_version.clone()?,
            "the KubeVirt CR's observed registry and version",
        ),
    };
    let separator = if version.starts_with("sha256:") {
        "@"
    } else {
        ":"
    };
    Some(LauncherImage {
        image: format!("{registry}/{prefix}virt-launcher{separator}{version}"),
        from: from.into(),
    })
}

#[cfg(test)]
mod tests;
