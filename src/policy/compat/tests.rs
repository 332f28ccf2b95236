use super::*;
use serde_json::json;

const ALL: Labelled = Labelled {
    machine_types: true,
    obsolete_host_model: true,
};

/// A node with the labels the node labeller writes (real label names; the feature sets of an
/// Intel Cascade Lake host: `host-model-cpu` Cascadelake-Server, required features as
/// kubevirt's node-labeller testdata and harvester#8224's nodes list them).
fn node(name: &str, extra: &[(&str, &str)]) -> Node {
    let mut labels = json!({
        "kubevirt.io/schedulable": "true",
        "host-model-cpu.node.kubevirt.io/Cascadelake-Server": "true",
        "host-model-required-features.node.kubevirt.io/md-clear": "true",
        "host-model-required-features.node.kubevirt.io/ssbd": "true",
        "cpu-model-migration.node.kubevirt.io/Cascadelake-Server": "true",
        "cpu-model-migration.node.kubevirt.io/Skylake-Server": "true",
        "cpu-model.node.kubevirt.io/Skylake-Server-noTSX-IBRS": "true",
        "cpu-feature.node.kubevirt.io/md-clear": "true",
        "cpu-feature.node.kubevirt.io/ssbd": "true",
        "cpu-feature.node.kubevirt.io/hle": "true",
        "cpu-feature.node.kubevirt.io/rtm": "true",
        "cpu-feature.node.kubevirt.io/pdcm": "true",
        "cpu-vendor.node.kubevirt.io/Intel": "true",
        "machine-type.node.kubevirt.io/pc-q35-rhel9.6.0": "true",
        "machine-type.node.kubevirt.io/q35": "true",
    });
    for (k, v) in extra {
        if v.is_empty() {
            labels.as_object_mut().unwrap().remove(*k);
        } else {
            labels[*k] = json!(v);
        }
    }
    serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}})).unwrap()
}

fn vmi(cpu: serde_json::Value) -> VirtualMachineInstance {
    serde_json::from_value(json!({
        "metadata": {"name": "db", "namespace": "prod"},
        "spec": {"domain": {"cpu": cpu}},
        "status": {"machine": {"type": "pc-q35-rhel9.6.0"}, "nodeName": "node-1"}
    }))
    .unwrap()
}

#[test]
fn node_labels_are_parsed_once_into_sets() {
    let cpu = NodeCpu::of(&node(
        "n",
        &[
            (OBSOLETE_HOST_MODEL_LABEL, "true"),
            ("cpu-feature.node.kubevirt.io/vmx", "false"),
        ],
    ));
    assert_eq!(cpu.host_model.as_deref(), Some("Cascadelake-Server"));
    assert_eq!(
        cpu.host_required.iter().collect::<Vec<_>>(),
        ["md-clear", "ssbd"]
    );
    assert!(cpu.features.contains("hle") && !cpu.features.contains("vmx"));
    assert!(cpu.migration_models.contains("Skylake-Server"));
    assert!(cpu.models.contains("Skylake-Server-noTSX-IBRS"));
    assert_eq!(cpu.vendor.as_deref(), Some("Intel"));
    assert!(cpu.machine_types.contains("pc-q35-rhel9.6.0"));
    assert!(cpu.obsolete_host_model && cpu.labelled());
}

#[test]
fn host_model_needs_come_from_the_source_node_until_the_launcher_pod_pins_them() {
    let v = vmi(json!({"model": "host-model"}));
    let source = NodeCpu::of(&node("node-1", &[]));
    let fresh = CpuNeeds::of(&v, Some(&source), None, ALL);
    assert_eq!(fresh.model.as_deref(), Some("Cascadelake-Server"));
    assert_eq!(fresh.host_features, ["md-clear", "ssbd"]);
    assert_eq!(fresh.host_model_from, Some("source-node"));
    assert_eq!(fresh.machine_type.as_deref(), Some("pc-q35-rhel9.6.0"));
    assert_eq!(fresh.vendor.as_deref(), Some("Intel"));
    assert!(fresh.pinned().is_none());
    // migration.go prepareNodeSelectorForHostCpuModel: a pod that already carries the keys
    // keeps them (the VM first ran on a host with TSX).
    let selector: BTreeMap<String, String> = [
        (
            "cpu-model-migration.node.kubevirt.io/Cascadelake-Server",
            "true",
        ),
        ("cpu-feature.node.kubevirt.io/hle", "true"),
        ("cpu-feature.node.kubevirt.io/rtm", "true"),
        ("kubevirt.io/schedulable", "true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let pinned = CpuNeeds::of(&v, Some(&source), Some(&selector), Labelled::default());
    assert_eq!(pinned.host_model_from, Some("launcher-pod"));
    assert_eq!(pinned.host_features, ["hle", "rtm"]);
    assert_eq!(
        pinned.machine_type, None,
        "no machine-type labels in the cluster"
    );
    assert_eq!(pinned.pinned().unwrap().features, ["hle", "rtm"]);
    // Features alone are a pin too (`strings.Contains` on either prefix): KubeVirt copies
    // them and no model, and never reads the source node's model.
    let features_only: BTreeMap<String, String> = [("cpu-feature.node.kubevirt.io/hle", "true")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let pinned = CpuNeeds::of(&v, Some(&source), Some(&features_only), Labelled::default());
    assert_eq!(pinned.host_model_from, Some("launcher-pod"));
    assert_eq!(pinned.model, None);
    assert_eq!(pinned.host_features, ["hle"]);
    let other_model = NodeCpu::of(&node(
        "node-9",
        &[
            (
                "cpu-model-migration.node.kubevirt.io/Icelake-Server",
                "true",
            ),
            ("cpu-feature.node.kubevirt.io/hle", "true"),
        ],
    ));
    assert!(pinned.lacking(CpuMode::HostModel, &other_model).is_empty());
}

#[test]
fn named_models_and_feature_policies_become_selectors_and_rejections() {
    let v = vmi(json!({"model": "Skylake-Server-noTSX-IBRS", "features": [
        {"name": "avx512vnni"}, {"name": "pcid", "policy": "require"},
        {"name": "hle", "policy": "forbid"}, {"name": "x2apic", "policy": "optional"},
        {"name": "", "policy": "require"}
    ]}));
    let needs = CpuNeeds::of(&v, None, None, ALL);
    assert_eq!(mode(&v), CpuMode::Named);
    assert_eq!(needs.model.as_deref(), Some("Skylake-Server-noTSX-IBRS"));
    assert_eq!(needs.required, ["avx512vnni", "pcid"]);
    assert_eq!(needs.forbidden, ["hle"]);
    let target = NodeCpu::of(&node("node-2", &[]));
    assert_eq!(
        needs.lacking(CpuMode::Named, &target),
        [
            "!cpu-feature.node.kubevirt.io/hle",
            "cpu-feature.node.kubevirt.io/avx512vnni",
            "cpu-feature.node.kubevirt.io/pcid",
        ]
    );
    let augmented = augment(&v, &needs).unwrap();
    assert_eq!(
        augmented
            .spec
            .node_selector
            .get("cpu-feature.node.kubevirt.io/pcid"),
        Some(&"true".to_string())
    );
    assert_eq!(
        augmented
            .spec
            .node_selector
            .get("machine-type.node.kubevirt.io/pc-q35-rhel9.6.0"),
        Some(&"true".to_string())
    );
    let terms = &augmented
        .spec
        .affinity
        .unwrap()
        .node_affinity
        .unwrap()
        .required_during_scheduling_ignored_during_execution
        .unwrap()
        .node_selector_terms;
    let exprs = terms[0].match_expressions.as_ref().unwrap();
    assert_eq!(exprs[0].key, "cpu-feature.node.kubevirt.io/hle");
    assert_eq!(exprs[0].operator, "DoesNotExist");
}

#[test]
fn a_node_after_a_microcode_update_lacks_tsx_and_no_node_words_name_it() {
    let v = vmi(json!({"model": "host-model"}));
    let selector: BTreeMap<String, String> = [
        (
            "cpu-model-migration.node.kubevirt.io/Cascadelake-Server",
            "true",
        ),
        ("cpu-feature.node.kubevirt.io/hle", "true"),
        ("cpu-feature.node.kubevirt.io/rtm", "true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let updated = [
        ("cpu-feature.node.kubevirt.io/hle", ""),
        ("cpu-feature.node.kubevirt.io/rtm", ""),
    ];
    let source = NodeCpu::of(&node("node-1", &updated));
    let needs = CpuNeeds::of(&v, Some(&source), Some(&selector), ALL);
    let n2 = NodeCpu::of(&node("node-2", &updated));
    let n3 = NodeCpu::of(&node("node-3", &[("cpu-feature.node.kubevirt.io/rtm", "")]));
    let (any, lacks) = lacking(
        CpuMode::HostModel,
        &needs,
        [("node-2", &n2), ("node-3", &n3)],
    );
    assert!(!any);
    assert_eq!(lacks[0].missing.len(), 2);
    let words = no_node_words(&lacks);
    assert!(
        words.starts_with(
            "no node is CPU-compatible: node-2 lacks cpu-feature.node.kubevirt.io/hle, rtm; node-3 lacks cpu-feature.node.kubevirt.io/rtm"
        ),
        "{words}"
    );
    // A node that kept TSX takes it.
    let n4 = NodeCpu::of(&node("node-4", &[]));
    let (any, _) = lacking(
        CpuMode::HostModel,
        &needs,
        [("node-2", &n2), ("node-4", &n4)],
    );
    assert!(any);
    // The source lost the pinned features: said as a risk.
    let risks = risks(&v, &needs, Some(&source), Some(("node-4", &n4)), None);
    assert_eq!(risks.len(), 1, "{risks:?}");
    assert_eq!(risks[0].kind, "pinned-features-gone");
    assert!(
        risks[0].message.contains("(hle, rtm)"),
        "{}",
        risks[0].message
    );
}

#[test]
fn features_the_source_offers_beyond_the_target_are_a_risk_not_a_certainty() {
    let v = vmi(json!({"model": "host-model"}));
    let source = NodeCpu::of(&node("node-1", &[]));
    let needs = CpuNeeds::of(&v, Some(&source), None, ALL);
    let same = NodeCpu::of(&node("node-2", &[]));
    assert!(risks(&v, &needs, Some(&source), Some(("node-2", &same)), None).is_empty());
    let no_pdcm = NodeCpu::of(&node(
        "node-3",
        &[("cpu-feature.node.kubevirt.io/pdcm", "")],
    ));
    assert!(
        needs.lacking(CpuMode::HostModel, &no_pdcm).is_empty(),
        "the scheduler passes it"
    );
    let r = risks(&v, &needs, Some(&source), Some(("node-3", &no_pdcm)), None);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].kind, "unlisted-features");
    assert!(
        r[0].message.starts_with(
            "may fail with \"guest CPU doesn't match specification: missing features: pdcm\""
        ),
        "{}",
        r[0].message
    );
    // A named model: the guest has the model's features only; no such risk.
    let named = vmi(json!({"model": "Skylake-Server-noTSX-IBRS"}));
    let needs = CpuNeeds::of(&named, Some(&source), None, ALL);
    assert!(
        risks(
            &named,
            &needs,
            Some(&source),
            Some(("node-3", &no_pdcm)),
            None
        )
        .is_empty()
    );
}

fn kubevirt(status: serde_json::Value) -> KubeVirt {
    serde_json::from_value(json!({"metadata": {"name": "kubevirt"}, "status": status})).unwrap()
}

#[test]
fn the_launcher_image_is_composed_as_virt_operator_does() {
    let kv = kubevirt(json!({
        "observedKubeVirtRegistry": "quay.io/kubevirt", "observedKubeVirtVersion": "v1.7.0"
    }));
    assert_eq!(
        launcher_image(&kv).unwrap().image,
        "quay.io/kubevirt/virt-launcher:v1.7.0"
    );
    let kv = kubevirt(json!({"observedDeploymentConfig":
        "{\"registry\":\"registry.example/kv\",\"imagePrefix\":\"ds-\",\"kubeVirtVersion\":\"sha256:abc\"}"}));
    assert_eq!(
        launcher_image(&kv).unwrap().image,
        "registry.example/kv/ds-virt-launcher@sha256:abc"
    );
    let kv = kubevirt(json!({"observedDeploymentConfig":
        "{\"virtLauncherImage\":\"registry.suse.com/suse/sles/16.0/virt-launcher:1.8.4\"}"}));
    assert_eq!(
        launcher_image(&kv).unwrap().image,
        "registry.suse.com/suse/sles/16.0/virt-launcher:1.8.4"
    );
    assert!(launcher_image(&kubevirt(json!({"observedDeploymentConfig": "not json"}))).is_none());
}

#[test]
fn launcher_skew_is_a_risk_with_the_ht_case_for_threads() {
    let mut v = vmi(json!({"model": "host-model", "threads": 2}));
    v.status.launcher_container_image_version =
        Some("registry.suse.com/suse/sles/15.7/virt-launcher:1.7.4".into());
    let image = LauncherImage {
        image: "registry.suse.com/suse/sles/16.0/virt-launcher:1.8.4".into(),
        from: "test".into(),
    };
    let needs = CpuNeeds::default();
    let r = risks(&v, &needs, None, None, Some(&image));
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].kind, "launcher-skew");
    assert!(
        r[0].message.contains("extra features: ht"),
        "{}",
        r[0].message
    );
    assert!(r[0].message.contains("Failed to load virtio-net"));
    v.status.launcher_container_image_version = Some(image.image.clone());
    assert!(risks(&v, &needs, None, None, Some(&image)).is_empty());
}

#[test]
fn short_labels_say_each_prefix_once() {
    let keys = vec![
        "cpu-feature.node.kubevirt.io/hle".to_string(),
        "cpu-feature.node.kubevirt.io/rtm".to_string(),
        "!node-labeller.kubevirt.io/obsolete-host-model".to_string(),
        "machine-type.node.kubevirt.io/pc-q35-rhel9.6.0".to_string(),
    ];
    assert_eq!(
        short_labels(&keys),
        "cpu-feature.node.kubevirt.io/hle, rtm; machine-type.node.kubevirt.io/pc-q35-rhel9.6.0; not node-labeller.kubevirt.io/obsolete-host-model"
    );
}
