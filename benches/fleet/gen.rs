//! A synthetic KubeVirt fleet, as `kubectl get ... -o json` writes it: VMs, VMIs with full
//! spec and status, virt-launcher pods with full specs, migrations (VMIMs) in every phase
//! with their target pods and the VMIs' `status.migrationState`, events, PDBs, quotas,
//! nodes, namespaces, the KubeVirt CR and MigrationPolicies.
//!
//! Deterministic for a seed; every object is a pure function of (seed, kind, index), so the
//! cluster is produced one object at a time, kind by kind, without ever holding the whole
//! list (100,000 VMIs are about half a gigabyte of JSON). Shared by the `gen-cluster` and
//! `fake-apiserver` examples and by tests/fleet_requests.rs (`#[path] mod fleet;`).
#![allow(dead_code)]

use std::io::{self, Write};

use serde_json::{Value, json};

/// What to generate.
#[derive(Debug, Clone)]
pub struct Config {
    pub vmis: u64,
    pub nodes: u64,
    pub seed: u64,
    /// Leaner objects (no managedFields, fewer events and decorations) for debug-build tests;
    /// the same objects, names, nodes, migrations and selectors as the full profile.
    pub lean: bool,
    /// One item per line without indentation (`jq -c`-like) instead of kubectl's 4-space
    /// indentation: the same objects in about 40% of the bytes.
    pub compact: bool,
}

impl Config {
    pub fn new(vmis: u64, nodes: u64, seed: u64) -> Config {
        Config {
            vmis,
            nodes: nodes.max(2),
            seed: seed.max(1),
            lean: false,
            compact: false,
        }
    }

    pub fn compact(mut self) -> Config {
        self.compact = true;
        self
    }

    pub fn lean(mut self) -> Config {
        self.lean = true;
        self
    }

    /// One namespace per 500 VMIs, at least 20.
    pub fn namespaces(&self) -> u64 {
        (self.vmis / 500).max(20)
    }
}

/// Migration phases, in order; every phase is generated.
pub const PHASES: [&str; 8] = [
    "Pending",
    "Scheduling",
    "Scheduled",
    "PreparingTarget",
    "TargetReady",
    "Running",
    "Succeeded",
    "Failed",
];

/// One VMI in `MIGRATION_EVERY` has a migration (the phase cycles through [`PHASES`]).
pub const MIGRATION_EVERY: u64 = 97;
/// One VMI in `PDB_EVERY` has its own PodDisruptionBudget.
pub const PDB_EVERY: u64 = 500;

const BASE_TIME: &str = "2026-11-29T02:00:00Z";

/// splitmix64: a good 64-bit mix, so that (seed, salt, index) gives independent streams.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A small deterministic generator seeded per object.
pub struct Rng(u64);

impl Rng {
    pub fn for_item(seed: u64, salt: u64, index: u64) -> Rng {
        Rng(mix(seed ^ mix(salt.wrapping_mul(0x1000_0001) ^ mix(index))))
    }
    pub fn next(&mut self) -> u64 {
        self.0 = mix(self.0);
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
    /// `n` lowercase alphanumerics, as Kubernetes' generateName suffixes.
    pub fn suffix(&mut self, n: usize) -> String {
        const CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..n)
            .map(|_| CHARS[self.below(CHARS.len() as u64) as usize] as char)
            .collect()
    }
    pub fn uid(&mut self) -> String {
        let a = self.next();
        let b = self.next();
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            0x8000 | (b >> 48 & 0x3fff),
            b & 0xffff_ffff_ffff
        )
    }
    pub fn resource_version(&mut self) -> String {
        (51_000_000 + self.below(3_000_000)).to_string()
    }
}

const SALT_NODE: u64 = 1;
const SALT_VMI: u64 = 2;
const SALT_OBJ: u64 = 3;

const MODELS: [&str; 3] = ["Cascadelake-Server", "Icelake-Server", "SapphireRapids"];
const STRATEGIES: [&str; 6] = [
    "LiveMigrate",
    "LiveMigrate",
    "LiveMigrate",
    "LiveMigrateIfPossible",
    "None",
    "External",
];
const SIZES_GI: [u64; 6] = [1, 2, 4, 8, 16, 32];
const OS: [(&str, &str, &str); 3] = [
    (
        "fedora",
        "Fedora Linux 41 (Cloud Edition)",
        "6.11.4-301.fc41.x86_64",
    ),
    ("ubuntu", "Ubuntu 24.04.1 LTS", "6.8.0-45-generic"),
    (
        "rhel",
        "Red Hat Enterprise Linux 9.5 (Plow)",
        "5.14.0-503.11.1.el9_5.x86_64",
    ),
];
const LAUNCHER_IMAGE: &str = "quay.io/kubevirt/virt-launcher:v1.8.4";

/// Everything about one VMI that other objects refer to.
#[derive(Debug, Clone)]
pub struct VmiFacts {
    pub index: u64,
    pub name: String,
    pub namespace: String,
    pub uid: String,
    pub vm_uid: String,
    pub pod_name: String,
    pub pod_uid: String,
    /// The node the VMI ran on before any migration (its launcher pod's node).
    pub source_node: String,
    pub size_gi: u64,
    pub cpus: u64,
    pub strategy: &'static str,
    pub migratable: bool,
    pub workload: &'static str,
    pub os: usize,
    pub ip: String,
    pub migration: Option<MigrationFacts>,
}

#[derive(Debug, Clone)]
pub struct MigrationFacts {
    pub phase: &'static str,
    pub phase_index: usize,
    pub name: String,
    pub uid: String,
    pub target_node: String,
    pub target_pod: String,
    pub target_pod_uid: String,
}

impl VmiFacts {
    /// The node the VMI runs on now (the target once a migration succeeded).
    pub fn node(&self) -> &str {
        match &self.migration {
            Some(m) if m.phase == "Succeeded" => &m.target_node,
            _ => &self.source_node,
        }
    }
    /// The migration is neither final nor pending: a target pod exists or is being made.
    pub fn in_flight(&self) -> bool {
        self.migration
            .as_ref()
            .is_some_and(|m| !matches!(m.phase, "Pending" | "Succeeded" | "Failed"))
    }
}

/// The host-model CPU of node `name` (`node-N`), as [`node`] picks it.
fn node_model(cfg: &Config, name: &str) -> &'static str {
    let n = name
        .strip_prefix("node-")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let mut rng = Rng::for_item(cfg.seed, SALT_NODE, n);
    MODELS[rng.below(MODELS.len() as u64) as usize]
}

pub fn node_name(n: u64) -> String {
    format!("node-{n}")
}

pub fn namespace_name(i: u64) -> String {
    format!("team-{i:02}")
}

pub fn vmi_facts(cfg: &Config, v: u64) -> VmiFacts {
    let mut rng = Rng::for_item(cfg.seed, SALT_VMI, v);
    let name = format!("vm-{v:05}");
    let node = rng.below(cfg.nodes);
    let namespace = namespace_name(rng.below(cfg.namespaces()));
    let size_gi = *rng.pick(&SIZES_GI);
    let strategy = *rng.pick(&STRATEGIES);
    let migratable = rng.below(10) != 0;
    let uid = rng.uid();
    let vm_uid = rng.uid();
    let pod_uid = rng.uid();
    let pod_name = format!("virt-launcher-{name}-{}", rng.suffix(5));
    let os = rng.below(OS.len() as u64) as usize;
    let ip = format!("10.{}.{}.{}", 128 + node / 250, node % 250, 2 + v % 250);
    let migration = (v % MIGRATION_EVERY == 3).then(|| {
        let phase_index = ((v / MIGRATION_EVERY) % PHASES.len() as u64) as usize;
        let target = (node + 1 + rng.below(cfg.nodes - 1)) % cfg.nodes;
        let target_pod = format!("virt-launcher-{name}-{}", rng.suffix(5));
        MigrationFacts {
            phase: PHASES[phase_index],
            phase_index,
            name: format!("kubevirt-evacuation-{}", rng.suffix(5)),
            uid: rng.uid(),
            target_node: node_name(target),
            target_pod,
            target_pod_uid: rng.uid(),
        }
    });
    VmiFacts {
        index: v,
        name,
        namespace,
        uid,
        vm_uid,
        pod_name,
        pod_uid,
        source_node: node_name(node),
        size_gi,
        cpus: (size_gi / 2).clamp(1, 8),
        strategy,
        migratable,
        workload: if v.is_multiple_of(7) {
            "database"
        } else {
            "app"
        },
        os,
        ip,
        migration,
    }
}

/// A few VMIs worth naming in a benchmark: (what, namespace, name).
pub fn notable_vmis(cfg: &Config) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    let mut wanted: Vec<&'static str> = vec!["Failed", "Running", "Succeeded"];
    for v in 0..cfg.vmis.min(MIGRATION_EVERY * 16) {
        let f = vmi_facts(cfg, v);
        if let Some(m) = &f.migration
            && let Some(i) = wanted.iter().position(|p| *p == m.phase)
        {
            let what = match wanted.remove(i) {
                "Failed" => "failed-migration",
                "Running" => "running-migration",
                _ => "migrated",
            };
            out.push((what, f.namespace.clone(), f.name.clone()));
        }
    }
    if cfg.vmis > 0 {
        let f = vmi_facts(cfg, 0);
        out.push(("plain", f.namespace, f.name));
    }
    out
}

/// Object counts per kind and bytes written.
#[derive(Debug, Default, Clone)]
pub struct Summary {
    pub counts: std::collections::BTreeMap<String, u64>,
    pub bytes: u64,
}

/// Calls `emit` for every object of the cluster, kind by kind (as `kubectl get
/// nodes,namespaces,...,events -A -o json` orders them).
pub fn each_object(cfg: &Config, mut emit: impl FnMut(Value) -> io::Result<()>) -> io::Result<()> {
    emit(kubevirt_cr(cfg))?;
    for p in migration_policies() {
        emit(p)?;
    }
    for i in 0..cfg.namespaces() {
        emit(namespace(cfg, i))?;
    }
    for i in 0..cfg.namespaces() {
        emit(quota(cfg, i))?;
    }
    for n in 0..cfg.nodes {
        emit(node(cfg, n))?;
    }
    for n in 0..cfg.nodes {
        emit(agent_pod(cfg, n))?;
    }
    for v in 0..cfg.vmis {
        emit(vm(cfg, &vmi_facts(cfg, v)))?;
    }
    for v in 0..cfg.vmis {
        emit(vmi(cfg, &vmi_facts(cfg, v)))?;
    }
    for v in 0..cfg.vmis {
        let f = vmi_facts(cfg, v);
        emit(launcher_pod(cfg, &f, false))?;
        if f.migration.as_ref().is_some_and(|m| m.phase != "Pending") {
            emit(launcher_pod(cfg, &f, true))?;
        }
    }
    for v in 0..cfg.vmis {
        let f = vmi_facts(cfg, v);
        if let Some(object) = vmim(cfg, &f) {
            emit(object)?;
        }
    }
    for v in 0..cfg.vmis {
        let f = vmi_facts(cfg, v);
        if v.is_multiple_of(PDB_EVERY) {
            emit(pdb(&f, false))?;
        }
        if f.in_flight() {
            emit(pdb(&f, true))?;
        }
    }
    for v in 0..cfg.vmis {
        for e in events(cfg, &vmi_facts(cfg, v)) {
            emit(e)?;
        }
    }
    Ok(())
}

/// All objects in memory (for tests and small clusters).
pub fn objects(cfg: &Config) -> Vec<Value> {
    let mut out = Vec::new();
    let _ = each_object(cfg, |v| {
        out.push(v);
        Ok(())
    });
    out
}

/// Writes the cluster as one `kubectl get -o json` List (4-space indentation, keys sorted),
/// item by item.
pub fn write_list<W: Write>(cfg: &Config, out: W) -> io::Result<Summary> {
    let mut out = CountingWriter {
        inner: io::BufWriter::with_capacity(1 << 20, out),
        bytes: 0,
    };
    let mut summary = Summary::default();
    if cfg.compact {
        out.write_all(b"{\"apiVersion\":\"v1\",\"items\":[\n")?;
    } else {
        out.write_all(b"{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n")?;
    }
    let mut first = true;
    let mut buf = Vec::with_capacity(64 * 1024);
    each_object(cfg, |item| {
        let kind = item["kind"].as_str().unwrap_or("?").to_string();
        *summary.counts.entry(kind).or_default() += 1;
        buf.clear();
        if cfg.compact {
            serde_json::to_writer(&mut buf, &item).map_err(io::Error::other)?;
            if !first {
                out.write_all(b",\n")?;
            }
            first = false;
            return out.write_all(&buf);
        }
        let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, formatter);
        serde::Serialize::serialize(&item, &mut ser).map_err(io::Error::other)?;
        if !first {
            out.write_all(b",\n")?;
        }
        first = false;
        for (i, line) in buf.split(|b| *b == b'\n').enumerate() {
            if i > 0 {
                out.write_all(b"\n")?;
            }
            out.write_all(b"        ")?;
            out.write_all(line)?;
        }
        Ok(())
    })?;
    if cfg.compact {
        out.write_all(b"\n],\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\"}}\n")?;
    } else {
        out.write_all(
            b"\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n",
        )?;
    }
    out.inner.flush()?;
    summary.bytes = out.bytes;
    Ok(summary)
}

struct CountingWriter<W: Write> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

// ---- metadata helpers ----

fn time_at(minutes: u64) -> String {
    let (h, m) = (2 + minutes / 60, minutes % 60);
    format!("2026-11-29T{h:02}:{m:02}:00Z")
}

fn time_secs(minutes: u64, secs: u64) -> String {
    let (h, m) = (2 + minutes / 60, minutes % 60);
    format!("2026-11-29T{h:02}:{m:02}:{secs:02}Z")
}

fn managed_fields(cfg: &Config, manager: &str, operation: &str, fields: Value) -> Value {
    if cfg.lean {
        return json!([]);
    }
    json!([{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": fields,
        "manager": manager, "operation": operation, "time": BASE_TIME}])
}

fn set_managed_fields(meta: &mut Value, fields: Value) {
    if fields.as_array().is_some_and(|a| !a.is_empty()) {
        meta["managedFields"] = fields;
    }
}

// ---- cluster-wide objects ----

fn kubevirt_cr(cfg: &Config) -> Value {
    let mut rng = Rng::for_item(cfg.seed, SALT_OBJ, 1);
    json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt", "uid": rng.uid(),
            "resourceVersion": rng.resource_version(), "generation": 4,
            "creationTimestamp": "2026-01-10T09:00:00Z",
            "annotations": {"kubevirt.io/latest-observed-api-version": "v1",
                "kubevirt.io/storage-observed-api-version": "v1"},
            "finalizers": ["foregroundDeleteKubeVirt"]},
        "spec": {"certificateRotateStrategy": {}, "configuration": {
            "developerConfiguration": {"featureGates": ["LiveMigration", "HotplugVolumes", "VMLiveUpdateFeatures"]},
            "evictionStrategy": "LiveMigrate",
            "migrations": {"allowAutoConverge": false, "allowPostCopy": false,
                "bandwidthPerMigration": "0Mi", "completionTimeoutPerGiB": 150,
                "parallelMigrationsPerCluster": 5, "parallelOutboundMigrationsPerNode": 2,
                "progressTimeout": 150, "unsafeMigrationOverride": false}},
            "customizeComponents": {}, "imagePullPolicy": "IfNotPresent", "workloadUpdateStrategy": {
                "workloadUpdateMethods": ["LiveMigrate"], "batchEvictionSize": 10, "batchEvictionInterval": "1m0s"}},
        "status": {"observedKubeVirtVersion": "v1.8.4", "observedKubeVirtRegistry": "quay.io/kubevirt",
            "targetKubeVirtVersion": "v1.8.4", "phase": "Deployed", "operatorVersion": "v1.8.4",
            "defaultArchitecture": "amd64",
            "conditions": [
                {"type": "Available", "status": "True", "reason": "AllComponentsReady", "message": "All components are ready.", "lastProbeTime": BASE_TIME, "lastTransitionTime": BASE_TIME},
                {"type": "Progressing", "status": "False", "reason": "AllComponentsReady", "message": "All components are ready.", "lastProbeTime": BASE_TIME, "lastTransitionTime": BASE_TIME},
                {"type": "Degraded", "status": "False", "reason": "AllComponentsReady", "message": "All components are ready.", "lastProbeTime": BASE_TIME, "lastTransitionTime": BASE_TIME}]}})
}

fn migration_policies() -> Vec<Value> {
    vec![
        json!({"apiVersion": "migrations.kubevirt.io/v1alpha1", "kind": "MigrationPolicy",
            "metadata": {"name": "databases", "uid": "6a1b0e53-3c2d-4e5f-8a9b-0c1d2e3f4a5b",
                "resourceVersion": "40000001", "generation": 1, "creationTimestamp": "2026-02-01T10:00:00Z"},
            "spec": {"allowPostCopy": true, "completionTimeoutPerGiB": 300, "bandwidthPerMigration": "1Gi",
                "selectors": {"virtualMachineInstanceSelector": {"workload": "database"}}}}),
        json!({"apiVersion": "migrations.kubevirt.io/v1alpha1", "kind": "MigrationPolicy",
            "metadata": {"name": "gold-namespaces", "uid": "7b2c1f64-4d3e-4f60-9bac-1d2e3f4a5b6c",
                "resourceVersion": "40000002", "generation": 1, "creationTimestamp": "2026-02-01T10:00:00Z"},
            "spec": {"allowAutoConverge": true, "completionTimeoutPerGiB": 200,
                "selectors": {"namespaceSelector": {"tier": "gold"}}}}),
    ]
}

fn namespace(cfg: &Config, i: u64) -> Value {
    let mut rng = Rng::for_item(cfg.seed, SALT_OBJ, 100 + i);
    let name = namespace_name(i);
    json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "uid": rng.uid(), "resourceVersion": rng.resource_version(),
            "creationTimestamp": "2026-01-15T08:00:00Z",
            "labels": {"kubernetes.io/metadata.name": name, "tier": if i.is_multiple_of(2) { "gold" } else { "silver" }}},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
}

fn quota(cfg: &Config, i: u64) -> Value {
    let mut rng = Rng::for_item(cfg.seed, SALT_OBJ, 10_000 + i);
    json!({"apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": "compute", "namespace": namespace_name(i), "uid": rng.uid(),
            "resourceVersion": rng.resource_version(), "creationTimestamp": "2026-01-15T08:00:00Z"},
        "spec": {"hard": {"requests.cpu": "4k", "requests.memory": "100Ti", "limits.memory": "120Ti", "pods": "100000"}},
        "status": {"hard": {"requests.cpu": "4k", "requests.memory": "100Ti", "limits.memory": "120Ti", "pods": "100000"},
                   "used": {"requests.cpu": "1200", "requests.memory": "10Ti", "limits.memory": "11Ti", "pods": "600"}}})
}

fn node(cfg: &Config, n: u64) -> Value {
    let mut rng = Rng::for_item(cfg.seed, SALT_NODE, n);
    let model = *rng.pick(&MODELS);
    let memory_gi = 256 + 128 * rng.below(3);
    let name = node_name(n);
    let ip = format!("192.168.{}.{}", n / 250, 10 + n % 250);
    let mut node = json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": rng.uid(), "resourceVersion": rng.resource_version(),
            "creationTimestamp": "2026-01-10T09:00:00Z",
            "annotations": {"kubevirt.io/heartbeat": BASE_TIME, "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            "labels": {
                "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
                "kubernetes.io/hostname": name,
                "kubevirt.io/schedulable": "true",
                format!("host-model-cpu.node.kubevirt.io/{model}"): "true",
                format!("cpu-model-migration.node.kubevirt.io/{model}"): "true",
                format!("cpu-model.node.kubevirt.io/{model}"): "true",
                "cpu-feature.node.kubevirt.io/avx2": "true", "cpu-feature.node.kubevirt.io/vmx": "true",
                "kubevirt.io/ksm-enabled": "false",
                "topology.kubernetes.io/zone": format!("zone-{}", n % 3)}},
        "spec": {"podCIDR": format!("10.{}.{}.0/24", 128 + n / 250, n % 250)},
        "status": {
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
            "allocatable": {"memory": format!("{memory_gi}Gi"), "cpu": "64", "pods": "250",
                "devices.kubevirt.io/kvm": "1k", "devices.kubevirt.io/tun": "1k", "devices.kubevirt.io/vhost-net": "1k", "ephemeral-storage": "900Gi"},
            "capacity": {"memory": format!("{}Gi", memory_gi + 8), "cpu": "64", "pods": "250",
                "devices.kubevirt.io/kvm": "1k", "devices.kubevirt.io/tun": "1k", "devices.kubevirt.io/vhost-net": "1k", "ephemeral-storage": "960Gi"},
            "conditions": [
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory", "message": "kubelet has sufficient memory available", "lastHeartbeatTime": BASE_TIME, "lastTransitionTime": "2026-01-10T09:00:00Z"},
                {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure", "message": "kubelet has no disk pressure", "lastHeartbeatTime": BASE_TIME, "lastTransitionTime": "2026-01-10T09:00:00Z"},
                {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID", "message": "kubelet has sufficient PID available", "lastHeartbeatTime": BASE_TIME, "lastTransitionTime": "2026-01-10T09:00:00Z"},
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status", "lastHeartbeatTime": BASE_TIME, "lastTransitionTime": "2026-01-10T09:00:00Z"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"architecture": "amd64", "containerRuntimeVersion": "containerd://2.0.4",
                "kernelVersion": "6.12.9-200.fc41.x86_64", "kubeProxyVersion": "v1.33.1", "kubeletVersion": "v1.33.1",
                "machineID": format!("{:032x}", rng.next() as u128 * 0x1_0000_0001),
                "operatingSystem": "linux", "osImage": "Fedora CoreOS 41", "systemUUID": rng.uid(),
                "bootID": rng.uid()}}});
    if n % 50 == 7 {
        node["spec"]["taints"] =
            json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]);
    }
    set_managed_fields(
        &mut node["metadata"],
        managed_fields(
            cfg,
            "kubelet",
            "Update",
            json!({"f:status": {"f:conditions": {}, "f:nodeInfo": {}}}),
        ),
    );
    node
}

/// A DaemonSet pod per node (virt-handler), as real clusters have.
fn agent_pod(cfg: &Config, n: u64) -> Value {
    let mut rng = Rng::for_item(cfg.seed, SALT_NODE, 1_000_000 + n);
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("virt-handler-{}", rng.suffix(5)), "namespace": "kubevirt",
            "uid": rng.uid(), "resourceVersion": rng.resource_version(), "creationTimestamp": "2026-01-10T09:05:00Z",
            "labels": {"kubevirt.io": "virt-handler", "app.kubernetes.io/component": "kubevirt"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "virt-handler",
                "uid": "0d9c8b7a-6f5e-4d3c-8b2a-190817263544", "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"nodeName": node_name(n), "serviceAccountName": "kubevirt-handler",
            "containers": [{"name": "virt-handler", "image": "quay.io/kubevirt/virt-handler:v1.8.4",
                "resources": {"requests": {"memory": "357Mi", "cpu": "10m"}}}]},
        "status": {"phase": "Running", "hostIP": format!("192.168.{}.{}", n / 250, 10 + n % 250)}})
}

// ---- per-VMI objects ----

fn vm(cfg: &Config, f: &VmiFacts) -> Value {
    let mut rng = Rng::for_item(cfg.seed, SALT_OBJ, 2_000_000 + f.index);
    let mut vm = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
        "metadata": {"name": f.name, "namespace": f.namespace, "uid": f.vm_uid,
            "resourceVersion": rng.resource_version(), "generation": 2, "creationTimestamp": BASE_TIME,
            "annotations": {"kubevirt.io/latest-observed-api-version": "v1", "kubevirt.io/storage-observed-api-version": "v1"},
            "labels": {"workload": f.workload, "app": f.name},
            "finalizers": ["kubevirt.io/virtualMachineControllerFinalize"]},
        "spec": {"runStrategy": "Always", "template": {
            "metadata": {"labels": {"workload": f.workload, "kubevirt.io/domain": f.name}},
            "spec": {"evictionStrategy": f.strategy, "domain": {"cpu": {"cores": f.cpus, "model": "host-model"},
                "memory": {"guest": format!("{}Gi", f.size_gi)},
                "devices": {"disks": [{"name": "root", "disk": {"bus": "virtio"}}, {"name": "cloudinit", "disk": {"bus": "virtio"}}],
                    "interfaces": [{"name": "default", "masquerade": {}}]}},
                "networks": [{"name": "default", "pod": {}}],
                "volumes": [{"name": "root", "persistentVolumeClaim": {"claimName": format!("{}-data", f.name)}},
                    {"name": "cloudinit", "cloudInitNoCloud": {"userData": "#cloud-config\nssh_pwauth: false\n"}}]}}},
        "status": {"created": true, "ready": true, "printableStatus": "Running", "desiredGeneration": 2,
            "observedGeneration": 2, "runStrategy": "Always",
            "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": BASE_TIME},
                {"type": "LiveMigratable", "status": if f.migratable { "True" } else { "False" }, "lastProbeTime": null, "lastTransitionTime": null}]}});
    if cfg.lean {
        strip(&mut vm["spec"], &["template"]);
        strip(&mut vm["metadata"], &["annotations", "finalizers"]);
    }
    set_managed_fields(
        &mut vm["metadata"],
        managed_fields(
            cfg,
            "kubectl-client-side-apply",
            "Update",
            json!({"f:metadata": {"f:labels": {}}, "f:spec": {"f:runStrategy": {}, "f:template": {}}}),
        ),
    );
    vm
}

/// Removes fields (the lean profile).
fn strip(object: &mut Value, fields: &[&str]) {
    if let Some(map) = object.as_object_mut() {
        for field in fields {
            map.remove(*field);
        }
    }
}

fn migration_state(f: &VmiFacts, m: &MigrationFacts) -> Value {
    let mut state = json!({"migrationUid": m.uid, "sourceNode": f.source_node, "sourcePod": f.pod_name,
        "targetNode": m.target_node, "targetPod": m.target_pod, "mode": "PreCopy",
        "migrationConfiguration": {"allowAutoConverge": false, "allowPostCopy": f.workload == "database",
            "bandwidthPerMigration": "0Mi", "completionTimeoutPerGiB": 150, "nodeDrainTaintKey": "kubevirt.io/drain",
            "parallelMigrationsPerCluster": 5, "parallelOutboundMigrationsPerNode": 2, "progressTimeout": 150,
            "unsafeMigrationOverride": false}});
    if m.phase_index >= 3 {
        state["targetNodeAddress"] = json!(format!("10.{}.0.{}", 128, 2 + f.index % 250));
        state["targetDirectMigrationNodePorts"] =
            json!({"39565": 49152, "41692": 0, "43633": 49153});
    }
    if m.phase_index >= 4 {
        state["targetNodeDomainDetected"] = json!(true);
        state["targetNodeDomainReadyTimestamp"] = json!(time_secs(59, 10));
    }
    if m.phase_index >= 5 {
        state["startTimestamp"] = json!(time_secs(59, 12));
    }
    match m.phase {
        "Succeeded" => {
            state["completed"] = json!(true);
            state["endTimestamp"] = json!(time_secs(59, 48));
        }
        "Failed" => {
            state["completed"] = json!(true);
            state["failed"] = json!(true);
            state["endTimestamp"] = json!(time_secs(59, 58));
            state["failureReason"] = json!(
                "Live migration failed error encountered during MigrateToURI3 libvirt api call: virError(Code=1, Domain=7, Message='internal error: QEMU unexpectedly closed the monitor')"
            );
        }
        _ => {}
    }
    state
}

fn vmi(cfg: &Config, f: &VmiFacts) -> Value {
    let mut rng = Rng::for_item(cfg.seed, SALT_OBJ, 3_000_000 + f.index);
    let node = f.node().to_string();
    let size = format!("{}Gi", f.size_gi);
    let (os_id, os_pretty, kernel) = OS[f.os];
    let live_migratable = if f.migratable {
        json!({"type": "LiveMigratable", "status": "True", "lastProbeTime": null, "lastTransitionTime": null})
    } else {
        json!({"type": "LiveMigratable", "status": "False", "reason": "DisksNotLiveMigratable", "lastProbeTime": null, "lastTransitionTime": null,
               "message": format!("cannot migrate VMI: PVC {}-data is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)", f.name)})
    };
    let mut labels = json!({"kubevirt.io/nodeName": node, "workload": f.workload,
        "kubevirt.io/domain": f.name, "vm.kubevirt.io/name": f.name});
    let mut active_pods = serde_json::Map::new();
    active_pods.insert(f.pod_uid.clone(), json!(f.source_node));
    if let Some(m) = &f.migration {
        if f.in_flight() {
            labels["kubevirt.io/migrationTargetNodeName"] = json!(m.target_node);
        }
        if m.phase_index >= 1 && m.phase != "Failed" {
            active_pods.insert(m.target_pod_uid.clone(), json!(m.target_node));
        }
    }
    let mut vmi = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
        "metadata": {"name": f.name, "namespace": f.namespace, "uid": f.uid, "creationTimestamp": BASE_TIME,
            "resourceVersion": rng.resource_version(), "generation": 11,
            "annotations": {"kubevirt.io/latest-observed-api-version": "v1", "kubevirt.io/storage-observed-api-version": "v1",
                "kubevirt.io/vm-generation": "2"},
            "finalizers": ["kubevirt.io/virtualMachineControllerFinalize", "foregroundDeleteVirtualMachine"],
            "labels": labels,
            "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": f.name,
                "uid": f.vm_uid, "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"evictionStrategy": f.strategy, "architecture": "amd64",
            "domain": {"cpu": {"cores": f.cpus, "sockets": 1, "threads": 1, "model": "host-model", "maxSockets": 4},
                "memory": {"guest": size, "maxGuest": format!("{}Gi", f.size_gi * 4)},
                "resources": {"requests": {"memory": size}},
                "machine": {"type": "pc-q35-rhel9.6.0"},
                "devices": {"disks": [{"name": "root", "disk": {"bus": "virtio"}}, {"name": "cloudinit", "disk": {"bus": "virtio"}}],
                    "interfaces": [{"name": "default", "masquerade": {}}]}},
            "networks": [{"name": "default", "pod": {}}],
            "volumes": [{"name": "root", "persistentVolumeClaim": {"claimName": format!("{}-data", f.name)}},
                {"name": "cloudinit", "cloudInitNoCloud": {"userData": "#cloud-config\nssh_pwauth: false\n"}}]},
        "status": {"nodeName": node, "phase": "Running", "migrationMethod": "LiveMigration", "migrationTransport": "Unix",
            "qosClass": "Burstable", "runtimeUser": 107, "selinuxContext": "none",
            "launcherContainerImageVersion": LAUNCHER_IMAGE,
            "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": BASE_TIME},
                live_migratable,
                {"type": "StorageLiveMigratable", "status": "True", "lastProbeTime": null, "lastTransitionTime": null}],
            "activePods": active_pods,
            "currentCPUTopology": {"cores": f.cpus, "sockets": 1, "threads": 1},
            "machine": {"type": "pc-q35-rhel9.6.0"},
            "memory": {"guestAtBoot": size, "guestCurrent": size, "guestRequested": size},
            "guestOSInfo": {"id": os_id, "name": os_pretty, "prettyName": os_pretty, "kernelRelease": kernel,
                "kernelVersion": "#1 SMP PREEMPT_DYNAMIC", "machine": "x86_64", "version": "41", "versionId": "41"},
            "interfaces": [{"name": "default", "interfaceName": "eth0", "infoSource": "domain, guest-agent",
                "ipAddress": f.ip, "ipAddresses": [f.ip], "mac": format!("02:{:02x}:{:02x}:{:02x}:00:01", f.index >> 16 & 0xff, f.index >> 8 & 0xff, f.index & 0xff),
                "linkState": "up", "podInterfaceName": "eth0", "queueCount": 1}],
            "phaseTransitionTimestamps": [{"phase": "Pending", "phaseTransitionTimestamp": BASE_TIME},
                {"phase": "Scheduling", "phaseTransitionTimestamp": BASE_TIME},
                {"phase": "Scheduled", "phaseTransitionTimestamp": "2026-11-29T02:00:05Z"},
                {"phase": "Running", "phaseTransitionTimestamp": "2026-11-29T02:00:09Z"}],
            "volumeStatus": [
                {"name": "cloudinit", "size": 1_048_576, "target": "vdb"},
                {"name": "root", "target": "vda", "persistentVolumeClaimInfo": {"accessModes": [if f.migratable { "ReadWriteMany" } else { "ReadWriteOnce" }],
                    "capacity": {"storage": "30Gi"}, "claimName": format!("{}-data", f.name), "filesystemOverhead": "0", "requests": {"storage": "30Gi"}, "volumeMode": "Block"}}]}});
    if let Some(m) = &f.migration
        && m.phase_index >= 2
    {
        vmi["status"]["migrationState"] = migration_state(f, m);
    }
    if f.in_flight() {
        vmi["status"]["evacuationNodeName"] = json!(f.source_node);
    }
    if cfg.lean {
        strip(
            &mut vmi["status"],
            &[
                "guestOSInfo",
                "interfaces",
                "volumeStatus",
                "phaseTransitionTimestamps",
                "launcherContainerImageVersion",
                "memory",
                "currentCPUTopology",
                "machine",
            ],
        );
        strip(&mut vmi["metadata"], &["annotations", "finalizers"]);
    }
    set_managed_fields(
        &mut vmi["metadata"],
        managed_fields(
            cfg,
            "virt-handler",
            "Update",
            json!({"f:metadata": {"f:labels": {"f:kubevirt.io/nodeName": {}}}, "f:status": {"f:guestOSInfo": {}, "f:interfaces": {}, "f:volumeStatus": {}}}),
        ),
    );
    vmi
}

/// The VMI's launcher pod, or (target) the migration's target pod.
fn launcher_pod(cfg: &Config, f: &VmiFacts, target: bool) -> Value {
    let mut rng = Rng::for_item(cfg.seed, SALT_OBJ, 4_000_000 + f.index * 2 + target as u64);
    let m = f.migration.as_ref();
    let (name, uid, node) = match (target, m) {
        (true, Some(m)) => (
            m.target_pod.clone(),
            m.target_pod_uid.clone(),
            m.target_node.clone(),
        ),
        _ => (f.pod_name.clone(), f.pod_uid.clone(), f.source_node.clone()),
    };
    // Phase of this pod: the source is Succeeded after a successful migration; a target pod
    // is Pending while scheduling and Failed after a failed migration.
    let phase = match (target, m.map(|m| m.phase)) {
        (false, Some("Succeeded")) => "Succeeded",
        (true, Some("Scheduling")) => "Pending",
        (true, Some("Failed")) => "Failed",
        _ => "Running",
    };
    let scheduled = !(target && phase == "Pending");
    let created = if target {
        time_at(59)
    } else {
        BASE_TIME.to_string()
    };
    let memory_mi = f.size_gi * 1024 + 280;
    let mut labels = json!({"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": f.uid,
        "vm.kubevirt.io/name": f.name, "kubevirt.io/domain": f.name, "workload": f.workload,
        "kubevirt.io/nodeName": node});
    if let (true, Some(m)) = (target, m) {
        labels["kubevirt.io/migrationJobUID"] = json!(m.uid);
    }
    let volumes = json!([
        {"name": "private", "emptyDir": {}}, {"name": "public", "emptyDir": {}},
        {"name": "libvirt-runtime", "emptyDir": {}}, {"name": "ephemeral-disks", "emptyDir": {}},
        {"name": "root", "persistentVolumeClaim": {"claimName": format!("{}-data", f.name)}},
        {"name": "hotplug-disks", "emptyDir": {}}]);
    let mounts = json!([
        {"mountPath": "/var/run/kubevirt-private", "name": "private"},
        {"mountPath": "/var/run/kubevirt", "name": "public"},
        {"mountPath": "/var/run/kubevirt-ephemeral-disks", "name": "ephemeral-disks"},
        {"mountPath": "/var/run/libvirt", "name": "libvirt-runtime"},
        {"mountPath": "/var/run/kubevirt/hotplug-disks", "mountPropagation": "HostToContainer", "name": "hotplug-disks"}]);
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": f.namespace, "uid": uid, "resourceVersion": rng.resource_version(),
            "creationTimestamp": created,
            "generateName": format!("virt-launcher-{}-", f.name),
            "labels": labels,
            "annotations": {"kubevirt.io/domain": f.name, "kubevirt.io/migrationTransportUnix": "true",
                "kubectl.kubernetes.io/default-container": "compute"},
            "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "name": f.name,
                "uid": f.uid, "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"automountServiceAccountToken": false, "dnsPolicy": "ClusterFirst", "enableServiceLinks": false,
            "hostname": f.name, "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
            "readinessGates": [{"conditionType": "kubevirt.io/virtual-machine-unpaused"}],
            "restartPolicy": "Never", "schedulerName": "default-scheduler",
            "securityContext": {"fsGroup": 107, "runAsGroup": 107, "runAsNonRoot": true, "runAsUser": 107},
            "serviceAccount": "default", "serviceAccountName": "default", "terminationGracePeriodSeconds": 210,
            // A host-model VM that migrated once keeps its CPU pinned in its launcher pod
            // (KubeVirt's target pod selectors): the model of the node the pod runs on, as
            // KubeVirt would have required of it.
            "nodeSelector": {"kubernetes.io/arch": "amd64", "kubevirt.io/schedulable": "true",
                format!("cpu-model-migration.node.kubevirt.io/{}", node_model(cfg, &node)): "true"},
            "tolerations": [{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}],
            "containers": [
                {"name": "compute", "image": LAUNCHER_IMAGE, "imagePullPolicy": "IfNotPresent",
                    "command": ["/usr/bin/virt-launcher-monitor", "--qemu-timeout", "301s", "--name", f.name,
                        "--uid", f.uid, "--namespace", f.namespace, "--grace-period-seconds", "195", "--run-as-nonroot"],
                    "env": [{"name": "XDG_CACHE_HOME", "value": "/var/run/kubevirt-private"},
                        {"name": "XDG_RUNTIME_DIR", "value": "/var/run"},
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
                    "resources": {"limits": {"devices.kubevirt.io/kvm": "1", "devices.kubevirt.io/tun": "1", "devices.kubevirt.io/vhost-net": "1"},
                        "requests": {"cpu": "100m", "devices.kubevirt.io/kvm": "1", "devices.kubevirt.io/tun": "1",
                            "devices.kubevirt.io/vhost-net": "1", "ephemeral-storage": "50M", "memory": format!("{memory_mi}Mi")}},
                    "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]},
                        "privileged": false, "runAsGroup": 107, "runAsNonRoot": true, "runAsUser": 107},
                    "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                    "volumeDevices": [{"devicePath": "/dev/root", "name": "root"}],
                    "volumeMounts": mounts},
                {"name": "guest-console-log", "image": LAUNCHER_IMAGE, "imagePullPolicy": "IfNotPresent",
                    "command": ["/usr/bin/virt-tail"], "args": ["--logfile", format!("/var/run/kubevirt-private/{}/virt-serial0-log", f.uid)],
                    "resources": {"limits": {"cpu": "15m", "memory": "60M"}, "requests": {"cpu": "5m", "memory": "35M"}},
                    "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}, "runAsNonRoot": true, "runAsUser": 107},
                    "volumeMounts": [{"mountPath": "/var/run/kubevirt-private", "name": "private", "readOnly": true}]}],
            "volumes": volumes},
        "status": {"phase": phase, "qosClass": "Burstable",
            "conditions": [{"type": "PodScheduled", "status": if scheduled { "True" } else { "False" }, "lastProbeTime": null, "lastTransitionTime": created}]}});
    if scheduled {
        pod["spec"]["nodeName"] = json!(node);
        pod["spec"]["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": if target { "In" } else { "NotIn" }, "values": [node]}]}]}}});
        let ready = phase == "Running";
        let status = &mut pod["status"];
        status["hostIP"] = json!(format!("192.168.0.{}", 10 + f.index % 250));
        status["podIP"] = json!(f.ip);
        status["podIPs"] = json!([{"ip": f.ip}]);
        status["startTime"] = json!(created);
        for t in [
            "Initialized",
            "Ready",
            "ContainersReady",
            "kubevirt.io/virtual-machine-unpaused",
        ] {
            let ok = t == "Initialized" || t == "kubevirt.io/virtual-machine-unpaused" || ready;
            if let Some(c) = status["conditions"].as_array_mut() {
                c.push(json!({"type": t, "status": if ok { "True" } else { "False" }, "lastProbeTime": null, "lastTransitionTime": created}));
            }
        }
        let state = if ready {
            json!({"running": {"startedAt": created}})
        } else {
            json!({"terminated": {"exitCode": if phase == "Failed" { 1 } else { 0 }, "reason": if phase == "Failed" { "Error" } else { "Completed" },
                "startedAt": created, "finishedAt": time_secs(59, 59)}})
        };
        status["containerStatuses"] = json!([
            {"name": "compute", "image": LAUNCHER_IMAGE, "imageID": LAUNCHER_IMAGE, "ready": ready, "restartCount": 0, "started": ready,
                "containerID": format!("containerd://{:016x}{:016x}", rng.next(), rng.next()), "state": state},
            {"name": "guest-console-log", "image": LAUNCHER_IMAGE, "imageID": LAUNCHER_IMAGE, "ready": ready, "restartCount": 0, "started": ready,
                "containerID": format!("containerd://{:016x}{:016x}", rng.next(), rng.next()), "state": state}]);
    }
    if cfg.lean {
        // Keep what selectors and decisions read (labels, node, phase, requests); drop the bulk.
        strip(&mut pod["metadata"], &["annotations", "generateName"]);
        strip(
            &mut pod["spec"],
            &[
                "volumes",
                "tolerations",
                "affinity",
                "nodeSelector",
                "readinessGates",
                "securityContext",
            ],
        );
        strip(&mut pod["status"], &["containerStatuses"]);
        if let Some(containers) = pod["spec"]["containers"].as_array_mut() {
            containers.truncate(1);
            for c in containers {
                strip(
                    c,
                    &[
                        "command",
                        "env",
                        "volumeMounts",
                        "volumeDevices",
                        "securityContext",
                        "image",
                        "imagePullPolicy",
                        "terminationMessagePath",
                        "terminationMessagePolicy",
                    ],
                );
            }
        }
    }
    set_managed_fields(
        &mut pod["metadata"],
        managed_fields(
            cfg,
            "kubelet",
            "Update",
            json!({"f:status": {"f:conditions": {}, "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:podIPs": {}, "f:startTime": {}}}),
        ),
    );
    pod
}

fn vmim(cfg: &Config, f: &VmiFacts) -> Option<Value> {
    let m = f.migration.as_ref()?;
    let mut rng = Rng::for_item(cfg.seed, SALT_OBJ, 5_000_000 + f.index);
    let transitions: Vec<Value> = PHASES[..=m.phase_index.min(5)]
        .iter()
        .chain(if m.phase_index >= 6 {
            Some(&PHASES[m.phase_index])
        } else {
            None
        })
        .enumerate()
        .map(|(i, p)| json!({"phase": p, "phaseTransitionTimestamp": time_secs(59, 2 * i as u64)}))
        .collect();
    let mut vmim = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
        "metadata": {"name": m.name, "namespace": f.namespace, "uid": m.uid, "resourceVersion": rng.resource_version(),
            "generation": 1, "creationTimestamp": time_at(59), "generateName": "kubevirt-evacuation-",
            "annotations": {"kubevirt.io/latest-observed-api-version": "v1", "kubevirt.io/storage-observed-api-version": "v1",
                "kubevirt.io/evacuationMigration": f.source_node},
            "finalizers": ["kubevirt.io/migrationJobFinalize"],
            "labels": {"kubevirt.io/vmi-name": f.name}},
        "spec": {"vmiName": f.name},
        "status": {"phase": m.phase, "phaseTransitionTimestamps": transitions}});
    if m.phase_index >= 2 {
        vmim["status"]["migrationState"] = migration_state(f, m);
    }
    if m.phase == "Pending" {
        vmim["status"]["conditions"] = json!([{"type": "migrationRejectedByResourceQuota", "status": "False",
            "lastProbeTime": null, "lastTransitionTime": null}]);
    }
    Some(vmim)
}

fn pdb(f: &VmiFacts, migration: bool) -> Value {
    if migration {
        let m = f.migration.as_ref();
        let name = format!("kubevirt-migration-pdb-{}", f.name);
        return json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": f.namespace, "uid": m.map(|m| m.uid.clone()),
                "creationTimestamp": time_at(59), "generation": 1, "resourceVersion": "51999999",
                "labels": {"kubevirt.io/migration-name": m.map(|m| m.name.clone())},
                "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "name": f.name, "uid": f.uid, "controller": true, "blockOwnerDeletion": true}]},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"kubevirt.io/created-by": f.uid}}},
            "status": {"currentHealthy": 2, "desiredHealthy": 2, "disruptionsAllowed": 0, "expectedPods": 2, "observedGeneration": 1}});
    }
    json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": format!("{}-pdb", f.name), "namespace": f.namespace,
            "creationTimestamp": BASE_TIME, "generation": 1, "resourceVersion": "51000001"},
        "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"vm.kubevirt.io/name": f.name}}},
        "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1, "observedGeneration": 1}})
}

#[allow(clippy::too_many_arguments)]
fn event(
    rng: &mut Rng,
    f: &VmiFacts,
    kind: &str,
    name: &str,
    uid: &str,
    reason: &str,
    type_: &str,
    message: String,
    component: &str,
    host: &str,
    at: String,
) -> Value {
    json!({"apiVersion": "v1", "kind": "Event", "count": 1, "firstTimestamp": at, "lastTimestamp": at,
        "involvedObject": {"apiVersion": if kind == "Pod" { "v1" } else { "kubevirt.io/v1" }, "kind": kind,
            "name": name, "namespace": f.namespace, "uid": uid, "resourceVersion": rng.resource_version()},
        "message": message,
        "metadata": {"name": format!("{name}.{:016x}", rng.next()), "namespace": f.namespace, "uid": rng.uid(),
            "creationTimestamp": at, "resourceVersion": rng.resource_version()},
        "reason": reason, "reportingComponent": component, "reportingInstance": host,
        "source": {"component": component, "host": host}, "type": type_})
}

fn events(cfg: &Config, f: &VmiFacts) -> Vec<Value> {
    let mut rng = Rng::for_item(cfg.seed, SALT_OBJ, 6_000_000 + f.index);
    let mut out = Vec::new();
    let vmi = |rng: &mut Rng,
               reason: &str,
               type_: &str,
               message: String,
               component: &str,
               host: &str,
               at: String| {
        event(
            rng,
            f,
            "VirtualMachineInstance",
            &f.name,
            &f.uid,
            reason,
            type_,
            message,
            component,
            host,
            at,
        )
    };
    if !cfg.lean && f.index.is_multiple_of(10) {
        out.push(vmi(
            &mut rng,
            "SuccessfulCreate",
            "Normal",
            format!("Created virtual machine pod {}", f.pod_name),
            "virtualmachine-controller",
            "",
            BASE_TIME.into(),
        ));
        out.push(vmi(
            &mut rng,
            "Started",
            "Normal",
            "VirtualMachineInstance started.".into(),
            "virt-handler",
            &f.source_node,
            "2026-11-29T02:00:09Z".into(),
        ));
    }
    if !cfg.lean && f.index % 20 == 1 {
        out.push(event(
            &mut rng,
            f,
            "Pod",
            &f.pod_name,
            &f.pod_uid,
            "Pulled",
            "Normal",
            format!("Container image \"{LAUNCHER_IMAGE}\" already present on machine"),
            "kubelet",
            &f.source_node,
            BASE_TIME.into(),
        ));
        out.push(event(
            &mut rng,
            f,
            "Pod",
            &f.pod_name,
            &f.pod_uid,
            "Created",
            "Normal",
            "Created container: compute".into(),
            "kubelet",
            &f.source_node,
            BASE_TIME.into(),
        ));
        out.push(event(
            &mut rng,
            f,
            "Pod",
            &f.pod_name,
            &f.pod_uid,
            "Started",
            "Normal",
            "Started container compute".into(),
            "kubelet",
            &f.source_node,
            BASE_TIME.into(),
        ));
    }
    let Some(m) = &f.migration else { return out };
    out.push(event(
        &mut rng,
        f,
        "VirtualMachineInstanceMigration",
        &m.name,
        &m.uid,
        "SuccessfulCreate",
        "Normal",
        format!("Created migration target pod {}", m.target_pod),
        "migration-controller",
        "",
        time_secs(59, 0),
    ));
    if m.phase_index >= 2 {
        out.push(event(
            &mut rng,
            f,
            "Pod",
            &m.target_pod,
            &m.target_pod_uid,
            "Scheduled",
            "Normal",
            format!(
                "Successfully assigned {}/{} to {}",
                f.namespace, m.target_pod, m.target_node
            ),
            "default-scheduler",
            "",
            time_secs(59, 3),
        ));
    }
    if m.phase_index >= 3 {
        out.push(vmi(
            &mut rng,
            "PreparingTarget",
            "Normal",
            "Migration Target is listening at 10.128.0.15, on ports: 41692,39565,43633".into(),
            "virt-handler",
            &m.target_node,
            time_secs(59, 6),
        ));
    }
    if m.phase_index >= 5 {
        out.push(vmi(
            &mut rng,
            "Migrating",
            "Normal",
            "VirtualMachineInstance is migrating.".into(),
            "virt-handler",
            &f.source_node,
            time_secs(59, 12),
        ));
    }
    match m.phase {
        "Succeeded" => out.push(vmi(
            &mut rng,
            "Migrated",
            "Normal",
            format!(
                "The VirtualMachineInstance migrated to node {}.",
                m.target_node
            ),
            "virt-handler",
            &f.source_node,
            time_secs(59, 48),
        )),
        "Failed" => {
            out.push(vmi(&mut rng, "Migrated", "Warning",
                "VirtualMachineInstance migration uid ".to_string() + &m.uid + " failed. reason:Live migration failed error encountered during MigrateToURI3 libvirt api call",
                "virt-handler", &f.source_node, time_secs(59, 58)));
            out.push(event(
                &mut rng,
                f,
                "Pod",
                &m.target_pod,
                &m.target_pod_uid,
                "BackOff",
                "Warning",
                "Back-off restarting failed container compute".into(),
                "kubelet",
                &m.target_node,
                time_secs(59, 59),
            ));
        }
        _ => {}
    }
    out
}
