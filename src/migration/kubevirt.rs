//! The KubeVirt driver: the few API calls that start, follow and stop a migration.
//!
//! - start: `PUT …/virtualmachines/VM/migrate` (what `virtctl migrate` does) for a VM, a
//!   VirtualMachineInstanceMigration created directly for a bare VMI (FACTS §7);
//! - abort: DELETE the unfinished VMIM (FACTS §3.5); `evacuate/cancel` (v1.7+);
//! - the temporary MigrationPolicy of `--allow-postcopy` / `--allow-auto-converge`;
//! - watches that resume from their resourceVersion and re-list on 410 Gone;
//! - virt-handler's metrics through the API server's pod proxy, or a Prometheus.
//!
//! Reads go through `LiveSource` (retries on 409/429/5xx); mutations are sent once, and a
//! refusal names the verb, the resource and the RBAC rule that would allow it. The one
//! migration loop's driver over these calls (`migration::driver::Driver`) is
//! `operate::kubevirt_job::KubeVirtJob`: it draws while it waits, so it sits above `render/`.

use std::collections::BTreeMap;
use std::time::Duration;

use kube::core::Request;
use kube::core::params::{PatchParams, PostParams};
use serde_json::{Value, json};

use super::kubevirt_metrics::{self, MigrationMetrics};
use crate::cluster::live::{LiveSource, answer_message, api_error};
use crate::cluster::{Kind, Query};
use crate::error::{Error, Result};
use crate::model::{MigrationPolicy, VirtualMachineInstanceMigration};

/// Annotation on a VMIM naming the temporary MigrationPolicy vmctl created for it.
pub const POLICY_ANNOTATION: &str = "vmctl.io/temporary-migration-policy";
/// Label on everything vmctl creates.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
pub const MANAGED_BY_VALUE: &str = "vmctl";
/// Label on a temporary policy naming the VMI it was made for (`namespace.name`).
pub const POLICY_FOR_LABEL: &str = "vmctl.io/migration-for";
/// Annotation on a temporary policy naming the VMI it was made for, exactly (`namespace/name`).
pub const POLICY_FOR_ANNOTATION: &str = "vmctl.io/migration-of";
/// `generateName` of the VMIMs vmctl creates for bare VMIs.
pub const VMIM_GENERATE_NAME: &str = "vmctl-migrate-";
/// virt-handler's metrics port (HTTPS), and its pods' label.
pub const HANDLER_METRICS_PORT: u16 = 8443;
pub const HANDLER_LABEL: &str = "kubevirt.io=virt-handler";
/// The group of virt-api's subresources (migrate, evacuate/cancel).
const SUBRESOURCE_GROUP: &str = "subresources.kubevirt.io";

pub struct KubeVirtDriver<'a> {
    live: &'a LiveSource,
}

/// The RBAC resource a request needs, for error messages: `virtualmachines/migrate` in
/// `subresources.kubevirt.io`, `migrationpolicies` in `migrations.kubevirt.io`, …
fn rbac_resource(kind: Kind, subresource: Option<&str>) -> (String, String) {
    let group = if subresource.is_some() && kind.group() == "kubevirt.io" {
        SUBRESOURCE_GROUP.to_string()
    } else {
        kind.group().to_string()
    };
    let resource = match subresource {
        Some(sub) => format!("{}/{sub}", kind.plural()),
        None => kind.plural().to_string(),
    };
    (group, resource)
}

/// A refused mutation: verb, resource, and on 403 the rule that is missing.
fn mutation_error(
    verb: &str,
    kind: Kind,
    subresource: Option<&str>,
    namespace: Option<&str>,
    cluster_url: &str,
    err: kube::Error,
) -> Error {
    let (group, resource) = rbac_resource(kind, subresource);
    let shown = if group.is_empty() {
        resource.clone()
    } else {
        format!("{resource}.{group}")
    };
    let code = match &err {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    };
    let base = api_error(verb, kind, cluster_url, err);
    let Error::Api {
        status, message, ..
    } = base
    else {
        return base;
    };
    let mut error = Error::Api {
        verb: verb.to_string(),
        resource: shown,
        status,
        message,
        hints: Vec::new(),
    };
    match code {
        Some(403) => {
            let scope = match namespace {
                Some(ns) => format!(" in namespace {ns}"),
                None => " (cluster-scoped)".to_string(),
            };
            error = error.with_hint(format!(
                "RBAC: your user lacks verb \"{verb}\" on resource \"{resource}\" in apiGroup \"{group}\"{scope}; bind the ClusterRole vmctl-operator from deploy/rbac.yaml"
            ));
        }
        Some(401) => {
            error = error.with_hint(
                "the credentials in your kubeconfig were refused; log in again or pick another --context",
            );
        }
        _ => {}
    }
    error
}

/// What the Eviction API answered: the HTTP status, the `Status` message and the messages
/// of `details.causes[]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvictionReply {
    pub status: u16,
    pub message: String,
    pub causes: Vec<String>,
}

/// Why metrics could not be read, in words for the progress line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsUnavailable(pub String);

impl<'a> KubeVirtDriver<'a> {
    pub fn new(live: &'a LiveSource) -> Self {
        KubeVirtDriver { live }
    }

    pub fn live(&self) -> &'a LiveSource {
        self.live
    }

    fn client(&self) -> &kube::Client {
        self.live.client()
    }

    async fn mutate(
        &self,
        verb: &str,
        kind: Kind,
        subresource: Option<&str>,
        namespace: Option<&str>,
        request: http::Request<Vec<u8>>,
    ) -> Result<String> {
        let limit = self.live.max_answer_bytes();
        match request_text_bounded(self.client(), request, limit).await {
            Ok(text) => Ok(text),
            Err(BodyError::Kube(e)) => Err(mutation_error(
                verb,
                kind,
                subresource,
                namespace,
                self.live.cluster_url(),
                e,
            )),
            Err(other) => Err(unreadable_answer(
                verb,
                kind,
                self.live.cluster_url(),
                &other,
            )),
        }
    }

    /// `PUT /apis/subresources.kubevirt.io/v1/namespaces/NS/virtualmachines/VM/migrate`, as
    /// `virtctl migrate` does; virt-api creates the VMIM (`kubevirt-migrate-vm-…`).
    pub async fn migrate_vm(
        &self,
        namespace: &str,
        vm: &str,
        added_node_selector: &BTreeMap<String, String>,
    ) -> Result<()> {
        let path = format!(
            "/apis/{SUBRESOURCE_GROUP}/v1/namespaces/{namespace}/virtualmachines/{vm}/migrate"
        );
        let mut body = json!({});
        if !added_node_selector.is_empty() {
            body["addedNodeSelector"] = json!(added_node_selector);
        }
        let request = http::Request::put(path)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(&body).unwrap_or_default())
            .map_err(|e| Error::Internal(format!("building the migrate request: {e}")))?;
        self.mutate(
            "update",
            Kind::VirtualMachine,
            Some("migrate"),
            Some(namespace),
            request,
        )
        .await
        .map(|_| ())
    }

    /// Creates a VMIM for a VMI directly (bare VMIs, which have no migrate subresource).
    pub async fn create_vmim(
        &self,
        vmim: &VirtualMachineInstanceMigration,
    ) -> Result<VirtualMachineInstanceMigration> {
        let namespace = vmim.namespace();
        let mut body = serde_json::to_value(vmim)
            .map_err(|e| Error::Internal(format!("serialising the migration: {e}")))?;
        body["apiVersion"] = json!(Kind::VirtualMachineInstanceMigration.api_version());
        body["kind"] = json!(Kind::VirtualMachineInstanceMigration.name());
        let request =
            Request::new(Kind::VirtualMachineInstanceMigration.collection_path(Some(namespace)))
                .create(
                    &PostParams::default(),
                    serde_json::to_vec(&body).unwrap_or_default(),
                )
                .map_err(|e| Error::Internal(format!("building the create request: {e}")))?;
        let text = self
            .mutate(
                "create",
                Kind::VirtualMachineInstanceMigration,
                None,
                Some(namespace),
                request,
            )
            .await?;
        serde_json::from_str(&text).map_err(|e| {
            Error::Internal(format!(
                "the API server's answer to a create is not a migration: {e}"
            ))
        })
    }

    /// Merges annotations into a VMIM (its spec is immutable, its metadata is not).
    pub async fn annotate_vmim(
        &self,
        namespace: &str,
        name: &str,
        annotations: &BTreeMap<String, String>,
    ) -> Result<()> {
        let patch = json!({"metadata": {"annotations": annotations}});
        let request =
            Request::new(Kind::VirtualMachineInstanceMigration.collection_path(Some(namespace)))
                .patch(
                    name,
                    &PatchParams::default(),
                    &kube::api::Patch::Merge(&patch),
                )
                .map_err(|e| Error::Internal(format!("building the patch request: {e}")))?;
        self.mutate(
            "patch",
            Kind::VirtualMachineInstanceMigration,
            None,
            Some(namespace),
            request,
        )
        .await
        .map(|_| ())
    }

    /// Aborts a migration: says on the VMIM who asked (`by`, the annotation
    /// `vmctl.io/abort-requested-by`: a deletion does not say who made it, and every later
    /// diagnosis reads it), then deletes it. The annotation is best effort: a VMIM that
    /// cannot be annotated is deleted all the same. False when it was already gone.
    pub async fn abort_vmim(&self, namespace: &str, name: &str, by: &str) -> Result<bool> {
        let annotation = BTreeMap::from([(
            crate::model::vmim::ABORT_REQUESTED_BY_ANNOTATION.to_string(),
            by.to_string(),
        )]);
        let _ = self.annotate_vmim(namespace, name, &annotation).await;
        self.delete_vmim(namespace, name).await
    }

    /// Deletes a VMIM: KubeVirt's abort for an unfinished one. False when it was already gone.
    pub async fn delete_vmim(&self, namespace: &str, name: &str) -> Result<bool> {
        self.delete(Kind::VirtualMachineInstanceMigration, Some(namespace), name)
            .await
    }

    pub async fn create_policy(&self, policy: &MigrationPolicy) -> Result<()> {
        let mut body = serde_json::to_value(policy)
            .map_err(|e| Error::Internal(format!("serialising the policy: {e}")))?;
        body["apiVersion"] = json!(Kind::MigrationPolicy.api_version());
        body["kind"] = json!(Kind::MigrationPolicy.name());
        let request = Request::new(Kind::MigrationPolicy.collection_path(None))
            .create(
                &PostParams::default(),
                serde_json::to_vec(&body).unwrap_or_default(),
            )
            .map_err(|e| Error::Internal(format!("building the create request: {e}")))?;
        self.mutate("create", Kind::MigrationPolicy, None, None, request)
            .await
            .map(|_| ())
    }

    /// `GET /apis/apps/v1/namespaces/NS/daemonsets/NAME`, as kubectl drain's daemonSetFilter
    /// reads it: `(status, message)`, the message from the `Status` of a failure.
    pub async fn daemonset_status(&self, namespace: &str, name: &str) -> (u16, String) {
        let path = format!("/apis/apps/v1/namespaces/{namespace}/daemonsets/{name}");
        let Ok(request) = http::Request::get(path).body(kube::client::Body::empty()) else {
            return (0, "building the request failed".into());
        };
        match self.client().send(request).await {
            Ok(response) => {
                let status = response.status().as_u16();
                if status == 200 {
                    return (status, String::new());
                }
                let bytes = response
                    .into_body()
                    .collect_bytes()
                    .await
                    .unwrap_or_default();
                let text =
                    String::from_utf8_lossy(&bytes[..bytes.len().min(64 * 1024)]).to_string();
                (status, answer_message(status, &text))
            }
            Err(e) => (0, e.to_string()),
        }
    }

    /// Marks a node unschedulable (`kubectl cordon`: a strategic-merge patch of
    /// `spec.unschedulable`).
    pub async fn cordon(&self, node: &str) -> Result<()> {
        let request = Request::new(Kind::Node.collection_path(None))
            .patch(
                node,
                &PatchParams::default(),
                &kube::core::params::Patch::Strategic(json!({"spec": {"unschedulable": true}})),
            )
            .map_err(|e| Error::Internal(format!("building the cordon request: {e}")))?;
        self.mutate("patch", Kind::Node, None, None, request)
            .await
            .map(|_| ())
    }

    /// `POST …/pods/POD/eviction` (policy/v1): the answer as the API server gave it. Only a
    /// request that got no answer at all is an error; every HTTP status is an answer (the
    /// caller reads it with `policy::drain::evict::read_answer`).
    pub async fn evict(
        &self,
        namespace: &str,
        pod: &str,
        grace_period_seconds: Option<i64>,
    ) -> Result<EvictionReply> {
        let mut body = json!({"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": pod, "namespace": namespace}});
        if let Some(g) = grace_period_seconds {
            body["deleteOptions"] = json!({"gracePeriodSeconds": g});
        }
        let path = format!(
            "{}/{pod}/eviction",
            Kind::Pod.collection_path(Some(namespace))
        );
        let request = http::Request::post(path)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(kube::client::Body::from(
                serde_json::to_vec(&body).unwrap_or_default(),
            ))
            .map_err(|e| Error::Internal(format!("building the eviction request: {e}")))?;
        let response = self.client().send(request).await.map_err(|e| {
            mutation_error(
                "create",
                Kind::Pod,
                Some("eviction"),
                Some(namespace),
                self.live.cluster_url(),
                e,
            )
        })?;
        let status = response.status().as_u16();
        let bytes = match response.into_body().collect_bytes().await {
            Ok(bytes) => bytes,
            // Accepted, whatever became of its answer (over --max-input-size, or broken off):
            // the eviction happened and is not repeated.
            Err(_) if (200..300).contains(&status) => Default::default(),
            Err(e) => {
                return Err(Error::Internal(format!("reading the eviction answer: {e}")));
            }
        };
        // A Status is small; a hostile or broken answer is cut, never kept whole.
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(64 * 1024)]).to_string();
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let message = if (200..300).contains(&status) {
            value
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_default()
        } else {
            answer_message(status, &text)
        };
        let causes = value
            .pointer("/details/causes")
            .and_then(Value::as_array)
            .map(|c| {
                c.iter()
                    .filter_map(|c| c.get("message").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Ok(EvictionReply {
            status,
            message,
            causes,
        })
    }

    /// Deletes a MigrationPolicy; false when it was already gone.
    pub async fn delete_policy(&self, name: &str) -> Result<bool> {
        self.delete(Kind::MigrationPolicy, None, name).await
    }

    async fn delete(&self, kind: Kind, namespace: Option<&str>, name: &str) -> Result<bool> {
        let mut attempt = 0;
        loop {
            let request = Request::new(kind.collection_path(namespace))
                .delete(name, &kube::core::params::DeleteParams::default())
                .map_err(|e| Error::Internal(format!("building the delete request: {e}")))?;
            // The answer is a Status or, with finalizers, the object itself (FACTS §11).
            let limit = self.live.max_answer_bytes();
            let answer = match request_text_bounded(self.client(), request, limit).await {
                Ok(text) => Ok(text),
                Err(BodyError::Kube(e)) => Err(e),
                // A success status came (errors are `Kube`): the delete happened, whatever
                // became of its body, which is not needed.
                Err(BodyError::TooLarge(_) | BodyError::NotUtf8 | BodyError::Read(_)) => {
                    return Ok(true);
                }
            };
            match answer {
                Ok(_) => return Ok(true),
                Err(kube::Error::Api(s)) if s.code == 404 => return Ok(false),
                // A delete can be repeated safely, also after no answer at all (a 404 then
                // means the first one went through).
                Err(kube::Error::Api(s))
                    if matches!(s.code, 429 | 500 | 502 | 503 | 504) && attempt < 3 =>
                {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
                }
                Err(kube::Error::HyperError(_) | kube::Error::Service(_)) if attempt < 3 => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
                }
                Err(e) => {
                    return Err(mutation_error(
                        "delete",
                        kind,
                        None,
                        namespace,
                        self.live.cluster_url(),
                        e,
                    ));
                }
            }
        }
    }

    /// `PUT …/virtualmachines|virtualmachineinstances/NAME/evacuate/cancel` (v1.7+), with
    /// the node the VMI is marked to leave, as `virtctl evacuate-cancel` sends it.
    pub async fn evacuate_cancel(
        &self,
        namespace: &str,
        kind: Kind,
        name: &str,
        evacuation_node: &str,
    ) -> Result<()> {
        let path = format!(
            "/apis/{SUBRESOURCE_GROUP}/v1/namespaces/{namespace}/{}/{name}/evacuate/cancel",
            kind.plural()
        );
        let body = json!({"evacuationNodeName": evacuation_node});
        let request = http::Request::put(path)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(&body).unwrap_or_default())
            .map_err(|e| Error::Internal(format!("building the cancel request: {e}")))?;
        self.mutate(
            "update",
            kind,
            Some("evacuate/cancel"),
            Some(namespace),
            request,
        )
        .await
        .map(|_| ())
    }

    /// The virt-handler pod on `node`, in KubeVirt's namespace.
    pub async fn handler_pod(
        &self,
        kubevirt_namespace: &str,
        node: &str,
    ) -> std::result::Result<String, MetricsUnavailable> {
        let query = Query::namespace(Some(kubevirt_namespace))
            .with_label(HANDLER_LABEL)
            .and_then(|q| q.with_fields(&format!("spec.nodeName={node}")))
            .map_err(|e| MetricsUnavailable(e.to_string()))?;
        let (pods, _) = self
            .live
            .list_with_version(Kind::Pod, &query)
            .await
            .map_err(|e| MetricsUnavailable(format!("cannot list virt-handler pods: {e}")))?;
        pods.iter()
            .filter(|p| p.pointer("/status/phase").and_then(Value::as_str) == Some("Running"))
            .find_map(|p| p.pointer("/metadata/name").and_then(Value::as_str))
            .map(str::to_string)
            .ok_or_else(|| {
                MetricsUnavailable(format!(
                    "no running virt-handler pod on {node} in namespace {kubevirt_namespace}"
                ))
            })
    }

    /// Reads the VMI's migration metrics from virt-handler's `/metrics` through the pod
    /// proxy: `GET /api/v1/namespaces/NS/pods/https:POD:8443/proxy/metrics`.
    pub async fn handler_metrics(
        &self,
        kubevirt_namespace: &str,
        handler_pod: &str,
        namespace: &str,
        vmi: &str,
    ) -> std::result::Result<MigrationMetrics, MetricsUnavailable> {
        let text = self.handler_page(kubevirt_namespace, handler_pod).await?;
        Ok(kubevirt_metrics::from_exposition(&text, namespace, vmi))
    }

    /// virt-handler's whole `/metrics` page through the pod proxy (one GET).
    pub async fn handler_page(
        &self,
        kubevirt_namespace: &str,
        handler_pod: &str,
    ) -> std::result::Result<String, MetricsUnavailable> {
        let path = handler_metrics_path(kubevirt_namespace, handler_pod);
        let request = http::Request::get(&path)
            .body(Vec::new())
            .map_err(|e| MetricsUnavailable(format!("building the metrics request: {e}")))?;
        request_text_bounded(self.client(), request, MAX_METRICS_BYTES)
            .await
            .map_err(|e| {
                let why = match &e {
                    BodyError::Kube(kube::Error::Api(s)) if s.code == 403 => {
                        "forbidden: your user may not get pods/proxy in KubeVirt's namespace (deploy/rbac.yaml, vmctl-operator; or use --prometheus URL)".to_string()
                    }
                    BodyError::Kube(kube::Error::Api(s)) => format!("{} {}", s.code, s.message),
                    other => other.to_string(),
                };
                MetricsUnavailable(format!("virt-handler metrics through the pod proxy: {why}"))
            })
    }
}

/// The most vmctl reads of one metrics answer (a virt-handler `/metrics` page, a Prometheus
/// query answer). A node's page with 250 VMIs is a few MiB; a bigger answer is not read
/// whole into memory (kube's `request_text` has no bound).
pub const MAX_METRICS_BYTES: u64 = 64 << 20;

pub use crate::cluster::live::{BodyError, request_text_bounded};

/// A success answer to a change whose body could not be read whole (too large, cut off, not
/// text): the change happened, but vmctl does not know the object it made; say so.
fn unreadable_answer(verb: &str, kind: Kind, cluster_url: &str, why: &BodyError) -> Error {
    Error::Api {
        verb: verb.to_string(),
        resource: kind.plural().to_string(),
        status: None,
        message: format!(
            "the API server at {cluster_url} accepted it, but its answer could not be read: {why}"
        ),
        hints: vec![format!(
            "the {verb} happened: look before repeating it (`vmctl status`)"
        )],
    }
}

/// The pod proxy path of virt-handler's metrics page (HTTPS, so the `https:` prefix).
pub fn handler_metrics_path(kubevirt_namespace: &str, handler_pod: &str) -> String {
    format!(
        "/api/v1/namespaces/{kubevirt_namespace}/pods/https:{handler_pod}:{HANDLER_METRICS_PORT}/proxy/metrics"
    )
}

/// A Prometheus HTTP API client: a kube client pointed at the Prometheus URL (it speaks
/// plain HTTP and TLS, and sends no credentials since the config carries none).
pub struct Prometheus {
    client: kube::Client,
    url: String,
}

impl Prometheus {
    pub fn new(url: &str) -> Result<Prometheus> {
        let uri: http::Uri = url
            .trim_end_matches('/')
            .parse()
            .map_err(|e| Error::usage(format!("--prometheus {url:?} is not a URL: {e}")))?;
        if uri.scheme().is_none() || uri.host().is_none() {
            return Err(Error::usage(format!(
                "--prometheus {url:?} is not a URL (expected http(s)://HOST[:PORT])"
            )));
        }
        let mut config = kube::Config::new(uri);
        config.read_timeout = Some(Duration::from_secs(10));
        config.connect_timeout = Some(Duration::from_secs(5));
        config.default_retry = false;
        let client = kube::Client::try_from(config)
            .map_err(|e| Error::usage(format!("--prometheus {url}: {e}")))?;
        Ok(Prometheus {
            client,
            url: url.to_string(),
        })
    }

    pub async fn migration_metrics(
        &self,
        namespace: &str,
        vmi: &str,
    ) -> std::result::Result<MigrationMetrics, MetricsUnavailable> {
        let query = kubevirt_metrics::prometheus_query(namespace, vmi);
        let answer = self.query(&query).await?;
        kubevirt_metrics::from_prometheus(&answer)
            .map_err(|e| MetricsUnavailable(format!("Prometheus at {}: {e}", self.url)))
    }

    /// One instant query (`GET /api/v1/query?query=…`): the answer as JSON.
    pub async fn query(&self, promql: &str) -> std::result::Result<Value, MetricsUnavailable> {
        let encoded: String = url_encode(promql);
        self.get(format!("/api/v1/query?query={encoded}")).await
    }

    /// One range query (`GET /api/v1/query_range`) from `start` to `end` (Unix seconds)
    /// every `step_secs`: the answer as JSON (`resultType: matrix`).
    pub async fn query_range(
        &self,
        promql: &str,
        start: i64,
        end: i64,
        step_secs: u64,
    ) -> std::result::Result<Value, MetricsUnavailable> {
        let encoded: String = url_encode(promql);
        self.get(format!(
            "/api/v1/query_range?query={encoded}&start={start}&end={end}&step={step_secs}"
        ))
        .await
    }

    async fn get(&self, path: String) -> std::result::Result<Value, MetricsUnavailable> {
        let request = http::Request::get(path)
            .body(Vec::new())
            .map_err(|e| MetricsUnavailable(format!("building the query: {e}")))?;
        let text = request_text_bounded(&self.client, request, MAX_METRICS_BYTES)
            .await
            .map_err(|e| MetricsUnavailable(format!("Prometheus at {}: {e}", self.url)))?;
        serde_json::from_str(&text).map_err(|e| {
            MetricsUnavailable(format!("Prometheus at {} answered non-JSON: {e}", self.url))
        })
    }
}

fn url_encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metrics_path_uses_the_https_pod_proxy() {
        assert_eq!(
            handler_metrics_path("kubevirt", "virt-handler-x7k2p"),
            "/api/v1/namespaces/kubevirt/pods/https:virt-handler-x7k2p:8443/proxy/metrics"
        );
    }

    #[test]
    fn rbac_resources_name_the_subresource_group() {
        assert_eq!(
            rbac_resource(Kind::VirtualMachine, Some("migrate")),
            (
                "subresources.kubevirt.io".into(),
                "virtualmachines/migrate".into()
            )
        );
        assert_eq!(
            rbac_resource(Kind::MigrationPolicy, None),
            ("migrations.kubevirt.io".into(), "migrationpolicies".into())
        );
    }

    #[test]
    fn queries_are_percent_encoded() {
        assert_eq!(url_encode("{a=\"b\"}"), "%7Ba%3D%22b%22%7D");
    }
}
