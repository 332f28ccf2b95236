//! VirtualMachine (`kubevirt.io/v1`): enough to find its VMI and how it restarts.

use serde::{Deserialize, Serialize};

use super::{EvictionStrategy, ObjectMeta};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VirtualMachine {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: VmSpec,
    #[serde(default)]
    pub status: VmStatus,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VmSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_strategy: Option<String>,
    /// Deprecated boolean form of the run strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<VmTemplate>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VmTemplate {
    #[serde(default)]
    pub spec: VmTemplateSpec,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VmTemplateSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_strategy: Option<EvictionStrategy>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VmStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printable_status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<bool>,
}

impl VirtualMachine {
    /// The effective run strategy: `spec.runStrategy`, else derived from `spec.running`.
    pub fn run_strategy(&self) -> &str {
        match (&self.spec.run_strategy, self.spec.running) {
            (Some(s), _) => s,
            (None, Some(true)) => "Always",
            (None, Some(false)) => "Halted",
            (None, None) => "Halted",
        }
    }
}
