//! The `cpu-feature-mismatch` rule: its cause, what it reads, its advice and its check.
//!
//! libvirt on the target starts the incoming QEMU, reads back the CPU it got and compares it
//! with the domain XML the source sent (`virCPUx86UpdateLive`, libvirt `src/cpu/cpu_x86.c`):
//! `guest CPU doesn't match specification: missing features: …` / `extra features: …`. The
//! source launcher's MigrateToURI3 returns that error, so it is KubeVirt's `failureReason`
//! (kubevirt#12519, harvester#5755, #7965, #11358, #11615). Plane: the data plane — libvirt and
//! QEMU on the target refused the guest CPU; the scheduler did what the node labels said.
//! Nothing of the guest was copied, it still runs on the source.

use super::*;

pub(crate) const CPU_FEATURE_MISMATCH: Rule = Rule {
    cause: Cause {
        id: "cpu-feature-mismatch",
        plane: Plane::DataPlane,
    },
    reads: &[
        "status.migrationState.failureReason",
        "VirtualMachineInstance spec.domain.cpu.model",
        "Pod (source and target launcher) spec.containers[compute].image",
    ],
    advice: "The target's QEMU cannot give the guest the CPU it started with (libvirt lists the missing or extra features). Pin a CPU model every node offers, keep the guest off nodes without those features, or — after a KubeVirt/QEMU upgrade changed the CPU definition — restart the VM so it starts with the new one.",
    blocks: true,
    check: cpu_feature_mismatch,
};

/// The launcher's compute image.
pub(super) fn compute_image(p: &crate::model::Pod) -> Option<&str> {
    p.spec
        .as_ref()?
        .containers
        .iter()
        .find(|c| c.name == "compute")?
        .image
        .as_deref()
}

/// Facts on the source and target launcher images, and whether they differ (an upgrade in
/// progress: the target runs the new QEMU and libvirt, the source the old).
pub(super) fn image_facts(v: &View) -> (Vec<Fact>, bool) {
    let src = v
        .source_pod
        .and_then(|p| Some((pod_name(p), compute_image(p)?)));
    let tgt = v
        .target_pod
        .and_then(|p| Some((pod_name(p), compute_image(p)?)));
    let mut facts = Vec::new();
    for (name, image) in src.iter().chain(tgt.iter()) {
        facts.push(v.pod_fact(name, "spec.containers[compute].image", *image));
    }
    let differ = matches!((src, tgt), (Some((_, a)), Some((_, b))) if a != b);
    (facts, differ)
}

pub(super) fn cpu_feature_mismatch(v: &View) -> Option<Finding> {
    let r = v.failure_reason()?;
    let s::Signature::CpuMismatch { missing, extra } = s::signature(r)? else {
        return None;
    };
    let mut f = Finding {
        evidence: failure_fact(v).into_iter().collect(),
        ..Default::default()
    };
    let model = v
        .vmi
        .and_then(|x| x.spec.domain.cpu.as_ref())
        .and_then(|c| c.model.as_deref());
    f.evidence.push(v.vmi_fact(
        "spec.domain.cpu.model",
        model.unwrap_or("(not set: the cluster default, host-model unless configured)"),
    ));
    let (images, upgrade) = image_facts(v);
    f.evidence.extend(images);
    let mut what = Vec::new();
    if !missing.is_empty() {
        what.push(format!("lacks {}", missing.join(", ")));
    }
    if !extra.is_empty() {
        what.push(format!(
            "adds {} the guest was not started with",
            extra.join(", ")
        ));
    }
    let what = if what.is_empty() {
        "differs from it (libvirt named no feature)".to_string()
    } else {
        what.join(" and ")
    };
    f.summary = format!(
        "The target ({}) refused the guest's CPU before any memory was copied: the CPU its QEMU gives the guest {what}. The guest still runs on {}.{}",
        tgt_node(v),
        src_node(v),
        if upgrade {
            " The source and target launchers run different images: an upgrade changed QEMU/libvirt's CPU definition (harvester#11358, #11615), not the hardware."
        } else {
            ""
        }
    );
    let ns = v.namespace();
    let vm = v.vmi.and_then(|x| x.owner_vm());
    if upgrade {
        f.next_steps.push(match vm {
            Some(vm) => format!(
                "Restart the VM so it starts on the new launcher with the new CPU definition (a live migration cannot change it): virtctl restart {vm} -n {ns}"
            ),
            None => format!(
                "Restart the bare VMI {} so it starts on the new launcher (recreate it from its manifest)",
                v.vmi_name()
            ),
        });
    }
    if !missing.is_empty() {
        f.next_steps.push(format!(
            "Find nodes that have the features: kubectl get nodes -l cpu-feature.node.kubevirt.io/{}=true",
            missing[0]
        ));
    }
    f.next_steps.push(format!(
        "Pin a CPU model every migration target offers (spec.template.spec.domain.cpu.model, or spec.configuration.cpuModel in the KubeVirt CR){}",
        if model.is_none() || model == Some("host-model") {
            ": with host-model the guest gets the CPU of the node it started on"
        } else {
            ""
        }
    ));
    f.next_steps.push(retry_step(v));
    Some(f)
}
