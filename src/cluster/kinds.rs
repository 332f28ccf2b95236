//! The kinds vmctl reads, described statically: no API discovery is needed (KubeVirt's
//! aggregated discovery document breaks some clients, FACTS §11).

use std::fmt;

/// Every kind of object vmctl reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    VirtualMachineInstance,
    VirtualMachine,
    VirtualMachineInstanceMigration,
    KubeVirt,
    MigrationPolicy,
    Pod,
    Node,
    Event,
    PodDisruptionBudget,
    ResourceQuota,
    Namespace,
}

impl Kind {
    pub const ALL: [Kind; 11] = [
        Kind::VirtualMachineInstance,
        Kind::VirtualMachine,
        Kind::VirtualMachineInstanceMigration,
        Kind::KubeVirt,
        Kind::MigrationPolicy,
        Kind::Pod,
        Kind::Node,
        Kind::Event,
        Kind::PodDisruptionBudget,
        Kind::ResourceQuota,
        Kind::Namespace,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::VirtualMachineInstance => "VirtualMachineInstance",
            Kind::VirtualMachine => "VirtualMachine",
            Kind::VirtualMachineInstanceMigration => "VirtualMachineInstanceMigration",
            Kind::KubeVirt => "KubeVirt",
            Kind::MigrationPolicy => "MigrationPolicy",
            Kind::Pod => "Pod",
            Kind::Node => "Node",
            Kind::Event => "Event",
            Kind::PodDisruptionBudget => "PodDisruptionBudget",
            Kind::ResourceQuota => "ResourceQuota",
            Kind::Namespace => "Namespace",
        }
    }

    /// API group ("" for the core group).
    pub fn group(self) -> &'static str {
        match self {
            Kind::VirtualMachineInstance
            | Kind::VirtualMachine
            | Kind::VirtualMachineInstanceMigration
            | Kind::KubeVirt => "kubevirt.io",
            Kind::MigrationPolicy => "migrations.kubevirt.io",
            Kind::PodDisruptionBudget => "policy",
            Kind::Pod | Kind::Node | Kind::Event | Kind::ResourceQuota | Kind::Namespace => "",
        }
    }

    pub fn version(self) -> &'static str {
        match self {
            Kind::MigrationPolicy => "v1alpha1",
            _ => "v1",
        }
    }

    /// `group/version`, or `v1` for the core group.
    pub fn api_version(self) -> String {
        if self.group().is_empty() {
            self.version().to_string()
        } else {
            format!("{}/{}", self.group(), self.version())
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            Kind::VirtualMachineInstance => "virtualmachineinstances",
            Kind::VirtualMachine => "virtualmachines",
            Kind::VirtualMachineInstanceMigration => "virtualmachineinstancemigrations",
            Kind::KubeVirt => "kubevirts",
            Kind::MigrationPolicy => "migrationpolicies",
            Kind::Pod => "pods",
            Kind::Node => "nodes",
            Kind::Event => "events",
            Kind::PodDisruptionBudget => "poddisruptionbudgets",
            Kind::ResourceQuota => "resourcequotas",
            Kind::Namespace => "namespaces",
        }
    }

    pub fn namespaced(self) -> bool {
        !matches!(self, Kind::Node | Kind::Namespace | Kind::MigrationPolicy)
    }

    /// True for custom resources, which (unlike built-in kinds) keep `kind`/`apiVersion` on
    /// each list item and support only `metadata.name`/`metadata.namespace` field selectors.
    pub fn is_custom(self) -> bool {
        matches!(self.group(), "kubevirt.io" | "migrations.kubevirt.io")
    }

    /// Path prefix of the collection, e.g. `/apis/kubevirt.io/v1/namespaces/prod/virtualmachineinstances`.
    pub fn collection_path(self, namespace: Option<&str>) -> String {
        let base = if self.group().is_empty() {
            format!("/api/{}", self.version())
        } else {
            format!("/apis/{}/{}", self.group(), self.version())
        };
        match namespace {
            Some(ns) if self.namespaced() => format!("{base}/namespaces/{ns}/{}", self.plural()),
            _ => format!("{base}/{}", self.plural()),
        }
    }

    /// Recognises a `kind` as written in a document (also the `…List` form).
    pub fn from_kind_name(kind: &str) -> Option<Kind> {
        let kind = kind.strip_suffix("List").unwrap_or(kind);
        Kind::ALL.into_iter().find(|k| k.name() == kind)
    }

    /// Recognises a resource as an operator types it (`vmi`, `pods`, `vmim`…).
    pub fn from_resource_name(name: &str) -> Option<Kind> {
        let lower = name.to_ascii_lowercase();
        let kind = match lower.as_str() {
            "vmi" | "vmis" | "virtualmachineinstance" | "virtualmachineinstances" => {
                Kind::VirtualMachineInstance
            }
            "vm" | "vms" | "virtualmachine" | "virtualmachines" => Kind::VirtualMachine,
            "vmim"
            | "vmims"
            | "migration"
            | "migrations"
            | "virtualmachineinstancemigration"
            | "virtualmachineinstancemigrations" => Kind::VirtualMachineInstanceMigration,
            "kubevirt" | "kubevirts" | "kv" => Kind::KubeVirt,
            "migrationpolicy" | "migrationpolicies" => Kind::MigrationPolicy,
            "pod" | "pods" | "po" => Kind::Pod,
            "node" | "nodes" | "no" => Kind::Node,
            "event" | "events" | "ev" => Kind::Event,
            "pdb" | "pdbs" | "poddisruptionbudget" | "poddisruptionbudgets" => {
                Kind::PodDisruptionBudget
            }
            "quota" | "resourcequota" | "resourcequotas" => Kind::ResourceQuota,
            "ns" | "namespace" | "namespaces" => Kind::Namespace,
            _ => return None,
        };
        Some(kind)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_api_layout() {
        assert_eq!(
            Kind::VirtualMachineInstance.collection_path(Some("prod")),
            "/apis/kubevirt.io/v1/namespaces/prod/virtualmachineinstances"
        );
        assert_eq!(Kind::Node.collection_path(Some("prod")), "/api/v1/nodes");
        assert_eq!(Kind::Pod.collection_path(None), "/api/v1/pods");
        assert_eq!(
            Kind::MigrationPolicy.collection_path(None),
            "/apis/migrations.kubevirt.io/v1alpha1/migrationpolicies"
        );
        assert_eq!(Kind::PodDisruptionBudget.api_version(), "policy/v1");
    }

    #[test]
    fn kind_names_round_trip() {
        for kind in Kind::ALL {
            assert_eq!(Kind::from_kind_name(kind.name()), Some(kind));
            assert_eq!(
                Kind::from_kind_name(&format!("{}List", kind.name())),
                Some(kind)
            );
            assert_eq!(Kind::from_resource_name(kind.plural()), Some(kind));
        }
        assert_eq!(Kind::from_kind_name("Deployment"), None);
    }
}
