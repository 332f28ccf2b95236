//! Enum values this version of vmctl does not know (issue 11): a newer KubeVirt, or a
//! hand-edited file. Each one is read as "unknown" by the logic (the `Other` variant of the
//! open enums); this module turns them into warnings, grouped by kind, field and value, so
//! ten thousand VMIs in a new phase are one line, not ten thousand.

use std::collections::BTreeMap;

use super::{KubeVirt, VirtualMachineInstance, VirtualMachineInstanceMigration};

/// Distinct (kind, field, value) groups said in full; the rest are counted.
const MAX_GROUPS: usize = 20;

/// The unknown values seen, grouped.
#[derive(Debug, Default)]
pub struct UnknownValues {
    /// (kind, field, value) → (objects, the first object's `namespace/name`).
    groups: BTreeMap<(&'static str, &'static str, String), (usize, String)>,
    /// Objects with an unknown value in a group beyond [`MAX_GROUPS`].
    more: usize,
}

impl UnknownValues {
    fn note(&mut self, kind: &'static str, field: &'static str, value: &str, object: String) {
        let key = (kind, field, value.to_string());
        if let Some(group) = self.groups.get_mut(&key) {
            group.0 += 1;
        } else if self.groups.len() < MAX_GROUPS {
            self.groups.insert(key, (1, object));
        } else {
            self.more += 1;
        }
    }

    pub fn vmi(&mut self, vmi: &VirtualMachineInstance) {
        let id = || format!("{}/{}", vmi.namespace(), vmi.name());
        if let Some(super::vmi::VmiPhase::Other(v)) = &vmi.status.phase {
            self.note("VirtualMachineInstance", "status.phase", v, id());
        }
        if let Some(super::EvictionStrategy::Other(v)) = &vmi.spec.eviction_strategy {
            self.note("VirtualMachineInstance", "spec.evictionStrategy", v, id());
        }
        if let Some(ms) = &vmi.status.migration_state {
            if let Some(super::vmi::MigrationMode::Other(v)) = &ms.mode {
                self.note(
                    "VirtualMachineInstance",
                    "status.migrationState.mode",
                    v,
                    id(),
                );
            }
            if let Some(super::vmi::AbortStatus::Other(v)) = &ms.abort_status {
                self.note(
                    "VirtualMachineInstance",
                    "status.migrationState.abortStatus",
                    v,
                    id(),
                );
            }
        }
    }

    pub fn vmim(&mut self, m: &VirtualMachineInstanceMigration) {
        let id = || format!("{}/{}", m.namespace(), m.name());
        if let Some(super::vmim::MigrationPhase::Other(v)) = &m.status.phase {
            self.note("VirtualMachineInstanceMigration", "status.phase", v, id());
        }
        if let Some(super::vmim::MigrationPriority::Other(v)) = m.priority() {
            self.note("VirtualMachineInstanceMigration", "spec.priority", &v, id());
        }
    }

    pub fn kubevirt(&mut self, kv: &KubeVirt) {
        if let Some(super::EvictionStrategy::Other(v)) = &kv.spec.configuration.eviction_strategy {
            let id = format!(
                "{}/{}",
                kv.metadata.namespace.as_deref().unwrap_or(""),
                kv.metadata.name.as_deref().unwrap_or("")
            );
            self.note("KubeVirt", "spec.configuration.evictionStrategy", v, id);
        }
    }

    /// One warning per group, plus one for the groups beyond the limit.
    pub fn warnings(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .groups
            .iter()
            .map(|((kind, field, value), (count, first))| {
                let which = match count {
                    1 => first.clone(),
                    n => format!("{first} and {} more", n - 1),
                };
                format!(
                    "{kind} {which}: {field} {value:?} is not a value this vmctl knows (a newer KubeVirt?); it is read as unknown"
                )
            })
            .collect();
        if self.more > 0 {
            out.push(format!(
                "… and {} more object(s) with values this vmctl does not know",
                self.more
            ));
        }
        out
    }
}

/// The warnings for the objects a command read.
pub fn warnings<'a>(
    vmis: impl IntoIterator<Item = &'a VirtualMachineInstance>,
    vmims: impl IntoIterator<Item = &'a VirtualMachineInstanceMigration>,
    kubevirts: impl IntoIterator<Item = &'a KubeVirt>,
) -> Vec<String> {
    let mut u = UnknownValues::default();
    vmis.into_iter().for_each(|v| u.vmi(v));
    vmims.into_iter().for_each(|m| u.vmim(m));
    kubevirts.into_iter().for_each(|k| u.kubevirt(k));
    u.warnings()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vmi(name: &str, phase: &str) -> VirtualMachineInstance {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "prod"},
            "status": {"phase": phase}}))
        .unwrap()
    }

    #[test]
    fn unknown_values_are_grouped_and_bounded() {
        let mut vmis: Vec<_> = (0..5)
            .map(|i| vmi(&format!("a{i}"), "Hibernating"))
            .collect();
        vmis.push(vmi("b", "Running"));
        let m: VirtualMachineInstanceMigration = serde_json::from_value(json!({
            "metadata": {"name": "m", "namespace": "prod"},
            "spec": {"vmiName": "a0", "priority": "urgent"},
            "status": {"phase": "Exploded"}}))
        .unwrap();
        let w = warnings(&vmis, [&m], []);
        assert_eq!(
            w,
            vec![
                "VirtualMachineInstance prod/a0 and 4 more: status.phase \"Hibernating\" is not a value this vmctl knows (a newer KubeVirt?); it is read as unknown".to_string(),
                "VirtualMachineInstanceMigration prod/m: spec.priority \"urgent\" is not a value this vmctl knows (a newer KubeVirt?); it is read as unknown".to_string(),
                "VirtualMachineInstanceMigration prod/m: status.phase \"Exploded\" is not a value this vmctl knows (a newer KubeVirt?); it is read as unknown".to_string(),
            ]
        );
        // Hostile: every VMI in a phase of its own. Bounded, and none is dropped silently.
        let many: Vec<_> = (0..100)
            .map(|i| vmi(&format!("v{i}"), &format!("P{i}")))
            .collect();
        let w = warnings(&many, [], []);
        assert_eq!(w.len(), MAX_GROUPS + 1);
        assert_eq!(
            w.last().map(String::as_str),
            Some("… and 80 more object(s) with values this vmctl does not know")
        );
        assert!(warnings([&vmi("ok", "Running")], [], []).is_empty());
    }
}
