//! The KubeVirt objects vmctl reads, as serde types with the API's JSON names.
//!
//! Tolerant by design: unknown fields are ignored, enum values this version does not know
//! are kept as text (`Other`), a missing `status` is an empty one. Kubernetes core kinds come
//! from k8s-openapi.

pub mod journal;
pub mod kubevirt;
pub mod pod_facts;
pub mod quantity;
pub mod server_version;
pub mod unknown;
pub mod vm;
pub mod vmi;
pub mod vmim;

pub use k8s_openapi::api::core::v1::{Event, Namespace, Node, Pod, ResourceQuota};
pub use k8s_openapi::api::policy::v1::PodDisruptionBudget;
pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
pub use kubevirt::{KubeVirt, MigrationConfig, MigrationPolicy};
pub use pod_facts::PodFacts;
pub use quantity::Quantity;
pub use server_version::ServerVersion;
pub use vm::VirtualMachine;
pub use vmi::VirtualMachineInstance;
pub use vmim::VirtualMachineInstanceMigration;

use serde::{Deserialize, Serialize};

/// The `apiVersion` of every document vmctl writes (reports, snapshots, results).
pub const VMCTL_API_VERSION: &str = "vmctl/v1alpha1";

/// Declares a string enum that keeps values it does not know as `Other(text)`.
macro_rules! open_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($variant,)*
            /// A value this version of vmctl does not know, kept as written.
            Other(String),
        }

        impl $name {
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $text,)*
                    $name::Other(text) => text,
                }
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> Self {
                match text {
                    $($text => $name::$variant,)*
                    other => $name::Other(other.to_string()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                Ok($name::from(text.as_str()))
            }
        }
    };
}
pub(crate) use open_enum;

open_enum!(
    /// `spec.evictionStrategy` and the cluster-wide default.
    EvictionStrategy {
        None = "None",
        LiveMigrate = "LiveMigrate",
        LiveMigrateIfPossible = "LiveMigrateIfPossible",
        External = "External",
    }
);

/// A status condition as every Kubernetes object carries them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type", default)]
    pub type_: String,
    #[serde(default)]
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
}

impl Condition {
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }
    pub fn is_false(&self) -> bool {
        self.status == "False"
    }
}

/// Finds a condition by type.
pub fn condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// `{phase, phaseTransitionTimestamp}` entries of VMIs and VMIMs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseTransition {
    #[serde(default)]
    pub phase: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase_transition_timestamp: Option<Time>,
}

/// The metadata accessors every model object has (inherent methods: no trait to import).
macro_rules! meta_accessors {
    ($($ty:ty),* $(,)?) => {$(
        impl $ty {
            pub fn name(&self) -> &str {
                self.metadata.name.as_deref().unwrap_or("")
            }

            pub fn namespace(&self) -> &str {
                self.metadata.namespace.as_deref().unwrap_or("")
            }

            pub fn uid(&self) -> Option<&str> {
                self.metadata.uid.as_deref()
            }

            pub fn label(&self, key: &str) -> Option<&str> {
                self.metadata.labels.as_ref()?.get(key).map(String::as_str)
            }

            pub fn annotation(&self, key: &str) -> Option<&str> {
                self.metadata.annotations.as_ref()?.get(key).map(String::as_str)
            }
        }
    )*};
}

meta_accessors!(
    VirtualMachineInstance,
    VirtualMachine,
    VirtualMachineInstanceMigration,
    KubeVirt,
    MigrationPolicy,
);

/// `namespace/name` for messages.
pub fn qualified_name(meta: &ObjectMeta) -> String {
    match &meta.namespace {
        Some(ns) => format!("{ns}/{}", meta.name.as_deref().unwrap_or("")),
        None => meta.name.clone().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_enums_keep_unknown_values() {
        let s: EvictionStrategy = serde_json::from_str("\"LiveMigrate\"").unwrap();
        assert_eq!(s, EvictionStrategy::LiveMigrate);
        let s: EvictionStrategy = serde_json::from_str("\"Teleport\"").unwrap();
        assert_eq!(s, EvictionStrategy::Other("Teleport".into()));
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"Teleport\"");
    }
}
