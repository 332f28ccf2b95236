//! Writing a vmctl snapshot (`vmctl snapshot FILE`): capture every kind vmctl reads, and
//! write the document so that `--from` (`cluster::snapshot`) reads it back. What goes into
//! it is `policy::snapshot`'s choice.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::files::SNAPSHOT_KIND;
use super::{Kind, Query, Source};
use crate::error::{Error, Result};
use crate::model::VMCTL_API_VERSION;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub captured_at: String,
    /// The API server's `gitVersion` (`/version`), so that `--from` reads PDBs as that
    /// server does (`selector: {}`, kubernetes#119732).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    pub source: String,
    pub scope: SnapshotScope,
    pub items: Vec<Value>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotScope {
    /// null = all namespaces (the default: a capture is whole unless `-n` narrows it).
    pub namespace: Option<String>,
    pub node: Option<String>,
    /// What a narrowed capture left out, one sentence each; `--from` says them again.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
}

/// The raw lists a snapshot is made of.
#[derive(Debug, Default)]
pub struct Captured {
    pub by_kind: BTreeMap<Kind, Vec<Value>>,
}

/// Lists every kind vmctl reads: the VMIs (on `node` when given), and the other namespaced
/// kinds in `scoped` (every namespace unless `snapshot -n NS`); pods, nodes, namespaces, the
/// KubeVirt CR and MigrationPolicies from the whole cluster (node capacity counts every pod).
pub async fn capture(src: &impl Source, scoped: Query, node: Option<&str>) -> Result<Captured> {
    let all = Query::all();
    let mut vmi_query = scoped.clone();
    if let Some(node) = node {
        vmi_query = vmi_query.with_label(&format!("kubevirt.io/nodeName={node}"))?;
    }
    let (vmis, vms, vmims, pods, nodes, pdbs, quotas, events, namespaces, kubevirts, policies) = tokio::try_join!(
        src.list(Kind::VirtualMachineInstance, &vmi_query),
        src.list(Kind::VirtualMachine, &scoped),
        src.list(Kind::VirtualMachineInstanceMigration, &scoped),
        // Every pod: launcher pods whole, the others for node capacity.
        src.list(Kind::Pod, &all),
        src.list(Kind::Node, &all),
        src.list(Kind::PodDisruptionBudget, &scoped),
        src.list(Kind::ResourceQuota, &scoped),
        src.list(Kind::Event, &scoped),
        src.list(Kind::Namespace, &all),
        src.list(Kind::KubeVirt, &all),
        src.list(Kind::MigrationPolicy, &all),
    )?;
    let mut captured = Captured::default();
    for (kind, items) in [
        (Kind::VirtualMachineInstance, vmis),
        (Kind::VirtualMachine, vms),
        (Kind::VirtualMachineInstanceMigration, vmims),
        (Kind::Pod, pods),
        (Kind::Node, nodes),
        (Kind::PodDisruptionBudget, pdbs),
        (Kind::ResourceQuota, quotas),
        (Kind::Event, events),
        (Kind::Namespace, namespaces),
        (Kind::KubeVirt, kubevirts),
        (Kind::MigrationPolicy, policies),
    ] {
        captured.by_kind.insert(kind, items);
    }
    Ok(captured)
}

impl Snapshot {
    /// The document around `items`: the capture's time, source and scope.
    pub fn new(
        captured_at: String,
        server_version: Option<String>,
        source: String,
        scope: SnapshotScope,
        items: Vec<Value>,
    ) -> Snapshot {
        Snapshot {
            api_version: VMCTL_API_VERSION,
            kind: SNAPSHOT_KIND,
            captured_at,
            server_version,
            source,
            scope,
            items,
        }
    }
}

/// Writes `text` to `path` whole or not at all: a partial file beside it, synced, then
/// renamed over `path`; on failure the partial file is removed.
pub fn write_file(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("vmctl-partial");
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::bad_input(path.display(), format!("cannot write the snapshot: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit;

    #[test]
    fn a_snapshot_is_written_whole_and_nothing_partial_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("incident.yaml");
        std::fs::write(&path, "old").unwrap();
        write_file(&path, "kind: Snapshot\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "kind: Snapshot\n");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["incident.yaml"]);
    }

    #[test]
    fn a_path_that_cannot_be_written_is_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no-such-dir").join("incident.yaml");
        let err = write_file(&path, "x").unwrap_err();
        assert_eq!(err.exit_code(), exit::BAD_INPUT);
        assert!(
            err.to_string().contains("cannot write the snapshot"),
            "{err}"
        );
        assert!(!path.with_extension("vmctl-partial").exists());
    }
}
