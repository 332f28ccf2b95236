//! Synthetic cluster generator for benchmarks: `gen-cluster [--vmis N] [--nodes N] [--seed S]`
//! writes one `kubectl get -o json`-style List to stdout. Deterministic for a given seed.

use serde_json::{Value, json};

/// xorshift64*: small, deterministic, good enough for synthetic data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn uid(kind: &str, i: u64) -> String {
    format!("{kind:0>8}-0000-4000-8000-{i:012}")
}

fn main() {
    let vmi_count = arg("--vmis", 10_000);
    let node_count = arg("--nodes", 500).max(2);
    let mut rng = Rng(arg("--seed", 42).max(1));
    let ts = "2026-11-29T02:00:00Z";
    let models = ["Cascadelake-Server", "Icelake-Server", "SapphireRapids"];
    let namespaces: Vec<String> = (0..20).map(|i| format!("team-{i:02}")).collect();
    let mut items: Vec<Value> = Vec::new();

    items.push(json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": {"evictionStrategy": "LiveMigrate", "migrations": {
            "parallelMigrationsPerCluster": 5, "parallelOutboundMigrationsPerNode": 2}}},
        "status": {"observedKubeVirtVersion": "v1.8.4", "phase": "Deployed"}}));
    items.push(
        json!({"apiVersion": "migrations.kubevirt.io/v1alpha1", "kind": "MigrationPolicy",
        "metadata": {"name": "databases"}, "spec": {"allowPostCopy": true,
        "selectors": {"virtualMachineInstanceSelector": {"workload": "database"}}}}),
    );
    for (i, ns) in namespaces.iter().enumerate() {
        items.push(json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns, "labels": {"tier": if i % 2 == 0 { "gold" } else { "silver" }}}}));
        items.push(json!({"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": "compute", "namespace": ns},
            "status": {"hard": {"requests.memory": "100Ti", "pods": "100000"},
                       "used": {"requests.memory": "10Ti", "pods": "600"}}}));
    }

    let mut node_models = Vec::new();
    for n in 0..node_count {
        let model = *rng.pick(&models);
        node_models.push(model);
        let memory_gi = 256 + 128 * rng.below(3);
        let mut node = json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": format!("node-{n}"), "uid": uid("node", n), "labels": {
                "kubernetes.io/hostname": format!("node-{n}"),
                "kubevirt.io/schedulable": "true",
                format!("host-model-cpu.node.kubevirt.io/{model}"): "true",
                format!("cpu-model-migration.node.kubevirt.io/{model}"): "true",
                "topology.kubernetes.io/zone": format!("zone-{}", n % 3)}},
            "spec": {},
            "status": {"allocatable": {"memory": format!("{memory_gi}Gi"), "cpu": "64", "pods": "250"},
                       "capacity": {"memory": format!("{}Gi", memory_gi + 8), "cpu": "64", "pods": "250"},
                       "conditions": [{"type": "Ready", "status": "True"}]}});
        if n % 50 == 7 {
            node["spec"]["taints"] =
                json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]);
        }
        items.push(node);
        // A DaemonSet-like pod per node.
        items.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("node-agent-{n}"), "namespace": "kube-system", "uid": uid("agent", n)},
            "spec": {"nodeName": format!("node-{n}"), "containers": [{"name": "agent",
                "resources": {"requests": {"memory": "512Mi", "cpu": "100m"}}}]},
            "status": {"phase": "Running"}}));
    }

    let strategies = [
        "LiveMigrate",
        "LiveMigrate",
        "LiveMigrate",
        "LiveMigrateIfPossible",
        "None",
        "External",
    ];
    let sizes = ["1Gi", "2Gi", "4Gi", "8Gi", "16Gi", "32Gi"];
    for v in 0..vmi_count {
        let node = rng.below(node_count);
        let ns = rng.pick(&namespaces).clone();
        let name = format!("vm-{v:05}");
        let size = *rng.pick(&sizes);
        let strategy = *rng.pick(&strategies);
        let migratable = rng.below(10) != 0;
        let vmi_uid = uid("vmi", v);
        let pod_uid = uid("pod", v);
        let workload = if v % 7 == 0 { "database" } else { "app" };
        let condition = if migratable {
            json!({"type": "LiveMigratable", "status": "True"})
        } else {
            json!({"type": "LiveMigratable", "status": "False", "reason": "DisksNotLiveMigratable",
                   "message": format!("cannot migrate VMI: PVC {name}-data is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)")})
        };
        items.push(json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": name, "namespace": ns, "uid": uid("vm", v)},
            "spec": {"runStrategy": "Always"}, "status": {"printableStatus": "Running", "ready": true}}));
        items.push(json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
            "metadata": {"name": name, "namespace": ns, "uid": vmi_uid, "creationTimestamp": ts,
                "labels": {"kubevirt.io/nodeName": format!("node-{node}"), "workload": workload},
                "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": name,
                    "uid": uid("vm", v), "controller": true}]},
            "spec": {"evictionStrategy": strategy, "domain": {"cpu": {"model": "host-model"},
                "memory": {"guest": size}, "resources": {"requests": {"memory": size}},
                "devices": {"interfaces": [{"name": "default", "masquerade": {}}]}},
                "networks": [{"name": "default", "pod": {}}],
                "volumes": [{"name": "root", "persistentVolumeClaim": {"claimName": format!("{name}-data")}}]},
            "status": {"nodeName": format!("node-{node}"), "phase": "Running", "migrationMethod": "LiveMigration",
                "conditions": [{"type": "Ready", "status": "True"}, condition],
                "activePods": {pod_uid.clone(): format!("node-{node}")}}}));
        items.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("virt-launcher-{name}-abcde"), "namespace": ns, "uid": pod_uid,
                "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": vmi_uid, "vm.kubevirt.io/name": name},
                "annotations": {"kubevirt.io/domain": name}},
            "spec": {"nodeName": format!("node-{node}"), "containers": [{"name": "compute",
                "resources": {"requests": {"memory": format!("{}Mi", size.trim_end_matches("Gi").parse::<u64>().unwrap_or(1) * 1024 + 280), "cpu": "100m"}}}]},
            "status": {"phase": "Running"}}));
        if v % 500 == 0 {
            items.push(json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": format!("{name}-pdb"), "namespace": ns},
                "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"vm.kubevirt.io/name": name}}},
                "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}}));
        }
    }
    let list = json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items});
    println!("{list}");
}
