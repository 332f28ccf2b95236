//! The Kubernetes API server's version, as far as vmctl knows it: read from `/version` (live),
//! recorded by `vmctl snapshot` (`serverVersion`), or, from nodes alone, a lower bound: the
//! newest kubelet (the version skew policy never lets a kubelet be newer than the API server,
//! kubernetes.io/releases/version-skew-policy).

use serde::{Deserialize, Serialize};

use super::Node;

/// Where the version came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VersionSource {
    /// `GET /version` (`gitVersion`).
    Live,
    /// `serverVersion` of a vmctl snapshot, read live when it was taken.
    Snapshot,
    /// Only a lower bound: the newest `status.nodeInfo.kubeletVersion`.
    NewestKubelet,
}

/// The API server's version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerVersion {
    /// As written: `v1.28.3`, `v1.28.3+k3s1`, `v1.27.7-eks-4f4795d`.
    pub git_version: String,
    pub source: VersionSource,
    /// For [`VersionSource::NewestKubelet`]: the node it was read on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

impl ServerVersion {
    pub fn live(git_version: &str) -> Self {
        ServerVersion {
            git_version: git_version.to_string(),
            source: VersionSource::Live,
            node: None,
        }
    }

    /// `(major, minor, patch)` of `v1.28.3+k3s1` and the like; None for text that is not a
    /// version (never guessed).
    pub fn numbers(&self) -> Option<(u32, u32, u32)> {
        parse(&self.git_version)
    }

    /// True when the version is only a lower bound.
    pub fn at_least(&self) -> bool {
        self.source == VersionSource::NewestKubelet
    }

    /// "v1.28.3 (from /version)", "at least v1.34.2 (the newest kubelet, node-1)".
    pub fn describe(&self) -> String {
        let v = &self.git_version;
        match self.source {
            VersionSource::Live => format!("{v} (from /version)"),
            VersionSource::Snapshot => format!("{v} (recorded in the snapshot)"),
            VersionSource::NewestKubelet => format!(
                "at least {v} (the newest kubelet, {}; a kubelet is never newer than its API server)",
                self.node.as_deref().unwrap_or("?")
            ),
        }
    }

    /// The lower bound the nodes give: the newest kubelet that reads as a version.
    pub fn from_kubelets(nodes: &[Node]) -> Option<Self> {
        nodes
            .iter()
            .filter_map(|n| {
                let v = n
                    .status
                    .as_ref()?
                    .node_info
                    .as_ref()?
                    .kubelet_version
                    .as_str();
                Some((parse(v)?, v, n.metadata.name.as_deref().unwrap_or("")))
            })
            .max_by_key(|(numbers, _, _)| *numbers)
            .map(|(_, v, node)| ServerVersion {
                git_version: v.to_string(),
                source: VersionSource::NewestKubelet,
                node: Some(node.to_string()),
            })
    }
}

/// `v1.28.3+k3s1` → (1, 28, 3). The patch may be followed by `+…` or `-…`; anything else
/// is not a version.
fn parse(text: &str) -> Option<(u32, u32, u32)> {
    let v = text.trim().strip_prefix('v').unwrap_or(text.trim());
    let mut parts = v.splitn(3, '.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let rest = parts.next()?;
    let digits: &str = rest
        .split(['+', '-'])
        .next()
        .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))?;
    Some((major, minor, digits.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distribution_suffixes_are_read_and_garbage_is_not() {
        for (text, want) in [
            ("v1.28.3", Some((1, 28, 3))),
            ("v1.28.3+k3s1", Some((1, 28, 3))),
            ("v1.27.7-eks-4f4795d", Some((1, 27, 7))),
            ("v1.28.2-gke.1157000", Some((1, 28, 2))),
            ("1.29.0", Some((1, 29, 0))),
            ("v1.29", None),
            ("v1.x.3", None),
            ("v1.28.", None),
            ("", None),
            ("v1.28.3\u{1b}[2J", None),
        ] {
            assert_eq!(parse(text), want, "{text:?}");
        }
    }

    #[test]
    fn the_newest_kubelet_is_a_lower_bound() {
        let nodes: Vec<Node> = serde_json::from_value(serde_json::json!([
            {"metadata": {"name": "a"}, "status": {"nodeInfo": {"kubeletVersion": "v1.27.9",
                "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "", "osImage": "",
                "containerRuntimeVersion": "", "kubeProxyVersion": "", "operatingSystem": "", "architecture": ""}}},
            {"metadata": {"name": "b"}, "status": {"nodeInfo": {"kubeletVersion": "v1.28.10",
                "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "", "osImage": "",
                "containerRuntimeVersion": "", "kubeProxyVersion": "", "operatingSystem": "", "architecture": ""}}},
            {"metadata": {"name": "c"}, "status": {"nodeInfo": {"kubeletVersion": "garbage",
                "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "", "osImage": "",
                "containerRuntimeVersion": "", "kubeProxyVersion": "", "operatingSystem": "", "architecture": ""}}},
            {"metadata": {"name": "d"}}
        ]))
        .unwrap();
        let v = ServerVersion::from_kubelets(&nodes).unwrap();
        assert_eq!(v.git_version, "v1.28.10");
        assert_eq!(v.node.as_deref(), Some("b"));
        assert!(v.at_least());
        assert!(v.describe().starts_with("at least v1.28.10"));
        assert_eq!(ServerVersion::from_kubelets(&nodes[2..]), None);
    }
}
