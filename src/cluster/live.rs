//! The live source: the real kube client against an API server.
//!
//! Lists are paginated (limit 500 + continue), selectors are evaluated server-side, and
//! KubeVirt kinds are addressed statically (no discovery, FACTS §11).

use std::path::PathBuf;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::Request;
use kube::core::params::{GetParams, ListParams};
use serde_json::Value;

use super::Kind;
use super::source::{Query, Source};
use crate::error::{Error, Result};

/// Page size for every list.
pub const PAGE_SIZE: u32 = 500;
/// Retries for reads answered 429/5xx or not answered at all.
const READ_RETRIES: u32 = 3;

/// How to reach the cluster, from the global flags.
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub request_timeout: Option<Duration>,
}

pub struct LiveSource {
    client: kube::Client,
    default_namespace: String,
    cluster_url: String,
}

impl LiveSource {
    /// Kubeconfig (`--kubeconfig`, else `KUBECONFIG`, else ~/.kube/config) or in-cluster.
    pub async fn connect(options: &ConnectOptions) -> Result<Self> {
        let kube_options = KubeConfigOptions {
            context: options.context.clone(),
            ..Default::default()
        };
        let mut config = match &options.kubeconfig {
            Some(path) => {
                let kubeconfig = Kubeconfig::read_from(path).map_err(|e| {
                    Error::bad_input(path.display(), format!("cannot read kubeconfig: {e}"))
                })?;
                kube::Config::from_custom_kubeconfig(kubeconfig, &kube_options)
                    .await
                    .map_err(|e| Error::bad_input(path.display(), format!("kubeconfig: {e}")))?
            }
            None if options.context.is_some() => kube::Config::from_kubeconfig(&kube_options)
                .await
                .map_err(|e| Error::usage(format!("kubeconfig: {e}")))?,
            None => kube::Config::infer().await.map_err(|e| {
                Error::usage(format!(
                    "no cluster configured: {e}; pass --kubeconfig, set KUBECONFIG, or read a snapshot with --from PATH"
                ))
            })?,
        };
        config.read_timeout = Some(options.request_timeout.unwrap_or(Duration::from_secs(30)));
        config.connect_timeout = Some(Duration::from_secs(10));
        // vmctl retries reads itself (see `send`); kube's own retry would multiply the attempts.
        config.default_retry = false;
        let cluster_url = config.cluster_url.to_string();
        let default_namespace = config.default_namespace.clone();
        let client = kube::Client::try_from(config)
            .map_err(|e| Error::usage(format!("cannot build a client for {cluster_url}: {e}")))?;
        Ok(LiveSource {
            client,
            default_namespace,
            cluster_url,
        })
    }

    pub fn default_namespace(&self) -> &str {
        &self.default_namespace
    }

    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    pub fn cluster_url(&self) -> &str {
        &self.cluster_url
    }

    /// Sends a request, retrying reads answered 409/429/5xx or not answered at all; a 404 on
    /// `get` is `Ok(None)`. Mutations are never retried here (the caller decides).
    pub(crate) async fn send(
        &self,
        verb: &str,
        kind: Kind,
        request: http::Request<Vec<u8>>,
    ) -> Result<Option<Value>> {
        let mut attempt = 0;
        loop {
            let req = clone_request(&request);
            match self.client.request::<Value>(req).await {
                Ok(v) => return Ok(Some(v)),
                Err(kube::Error::Api(status)) if status.code == 404 && verb == "get" => {
                    return Ok(None);
                }
                Err(e) => {
                    let read = matches!(verb, "get" | "list" | "watch");
                    let retryable = read
                        && match &e {
                            kube::Error::Api(s) => {
                                matches!(s.code, 409 | 429 | 500 | 502 | 503 | 504)
                            }
                            kube::Error::HyperError(_) | kube::Error::Service(_) => true,
                            _ => false,
                        };
                    if retryable && attempt < READ_RETRIES {
                        attempt += 1;
                        tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
                        continue;
                    }
                    return Err(api_error(verb, kind, &self.cluster_url, e));
                }
            }
        }
    }
}

fn clone_request(request: &http::Request<Vec<u8>>) -> http::Request<Vec<u8>> {
    let mut builder = http::Request::builder()
        .method(request.method().clone())
        .uri(request.uri().clone());
    for (k, v) in request.headers() {
        builder = builder.header(k, v);
    }
    // Rebuilding from parts of a valid request cannot fail; fall back to an empty GET.
    builder
        .body(request.body().clone())
        .unwrap_or_else(|_| http::Request::new(Vec::new()))
}

/// Turns a client error into one line naming the verb and resource, with hints.
pub fn api_error(verb: &str, kind: Kind, cluster_url: &str, err: kube::Error) -> Error {
    let resource = if kind.group().is_empty() {
        kind.plural().to_string()
    } else {
        format!("{}.{}", kind.plural(), kind.group())
    };
    match err {
        kube::Error::Api(status) => {
            let code = status.code;
            let mut error = Error::Api {
                verb: verb.to_string(),
                resource: resource.clone(),
                status: Some(code),
                message: if status.message.is_empty() {
                    format!("{} {}", code, status.reason)
                } else {
                    status.message.clone()
                },
                hints: vec![],
            };
            match code {
                401 => error = error.with_hint("the credentials in your kubeconfig were refused; log in again or pick another --context"),
                403 => error = error.with_hint(format!(
                    "your user may not {verb} {resource}; deploy/rbac.yaml has the read-only ClusterRole vmctl needs"
                )),
                _ => {}
            }
            error
        }
        other => Error::Api {
            verb: verb.to_string(),
            resource,
            status: None,
            message: format!("cannot reach the API server at {cluster_url}: {}", root_cause(&other)),
            hints: vec!["check the cluster is up and your kubeconfig points at it, or read a snapshot with --from PATH".into()],
        },
    }
}

fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut current = err;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

impl LiveSource {
    /// Lists (all pages) and returns the list's resourceVersion too, for a watch to start from.
    pub async fn list_with_version(
        &self,
        kind: Kind,
        query: &Query,
    ) -> Result<(Vec<Value>, String)> {
        let namespace = if kind.namespaced() {
            query.namespace.as_deref()
        } else {
            None
        };
        let path = kind.collection_path(namespace);
        let mut items = Vec::new();
        let mut version = String::new();
        let mut continue_token: Option<String> = None;
        loop {
            let params = ListParams {
                label_selector: (!query.labels.is_empty()).then(|| query.labels.to_string()),
                field_selector: (!query.fields.is_empty()).then(|| query.fields.to_string()),
                limit: Some(PAGE_SIZE),
                continue_token: continue_token.clone(),
                ..Default::default()
            };
            let request = Request::new(path.clone())
                .list(&params)
                .map_err(|e| Error::Internal(format!("building list request: {e}")))?;
            let page = self
                .send("list", kind, request)
                .await?
                .unwrap_or(Value::Null);
            if let Some(Value::Array(page_items)) = page.get("items") {
                for item in page_items {
                    let mut item = item.clone();
                    // Built-in lists omit kind/apiVersion per item (FACTS §11).
                    if let Value::Object(map) = &mut item {
                        map.entry("kind")
                            .or_insert_with(|| Value::String(kind.name().into()));
                        map.entry("apiVersion")
                            .or_insert_with(|| Value::String(kind.api_version()));
                    }
                    items.push(item);
                }
            }
            if version.is_empty()
                && let Some(rv) = page
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
            {
                version = rv.to_string();
            }
            continue_token = page
                .pointer("/metadata/continue")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_string);
            if continue_token.is_none() {
                return Ok((items, version));
            }
        }
    }
}

impl Source for LiveSource {
    async fn list(&self, kind: Kind, query: &Query) -> Result<Vec<Value>> {
        self.list_with_version(kind, query)
            .await
            .map(|(items, _)| items)
    }

    async fn get(&self, kind: Kind, namespace: Option<&str>, name: &str) -> Result<Option<Value>> {
        let namespace = if kind.namespaced() { namespace } else { None };
        let request = Request::new(kind.collection_path(namespace))
            .get(name, &GetParams::default())
            .map_err(|e| Error::Internal(format!("building get request: {e}")))?;
        let mut value = self.send("get", kind, request).await?;
        if let Some(Value::Object(map)) = &mut value {
            map.entry("kind")
                .or_insert_with(|| Value::String(kind.name().into()));
            map.entry("apiVersion")
                .or_insert_with(|| Value::String(kind.api_version()));
        }
        Ok(value)
    }

    fn describe(&self) -> String {
        format!("cluster {}", self.cluster_url)
    }
}
