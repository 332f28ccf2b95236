//! A small scripted KubeVirt on top of the fake API server: virt-api's migrate and
//! evacuate/cancel subresources, the VMIM admission webhook (label, finalizer, in-flight
//! check), virt-controller and virt-handler advancing a VMIM through its phases and filling
//! the VMI's `migrationState`, the abort on delete, and virt-handler's `/metrics` through
//! the pod proxy. Scripted failures: unschedulable target, stuck progress, a new iteration,
//! post-copy (and its failure), quota rejection, a hold in Running (for aborts).
//!
//! ```ignore
//! let server = Arc::new(FakeApiServer::start_blocking(kubevirt_sim::cluster("v1.8.4")));
//! let sim = KubeVirtSim::start(&server, Script::default());
//! ```

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use hyper::Method;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};
use vmctl::cluster::Kind;
use vmctl::model::{MigrationPolicy, Namespace, VirtualMachineInstance};

use super::apiserver::{FakeApiServer, HookReply, HookRequest};

/// What goes wrong (or how long things take).
#[derive(Debug, Clone)]
pub struct Script {
    /// Ticks (of 100 ms) spent in each phase before Running.
    pub phase_ticks: u32,
    /// Ticks of streaming before the migration completes.
    pub running_ticks: u32,
    /// The target pod never schedules; the migration fails after this many ticks.
    pub unschedulable: bool,
    /// The target pod is rejected by quota: the VMIM stays Pending.
    pub quota: bool,
    /// Remaining data stops shrinking; the monitor aborts after `running_ticks`.
    pub stuck: bool,
    /// The remaining count jumps up once (a new pre-copy pass).
    pub new_iteration: bool,
    /// Switch to post-copy after this many ticks of streaming.
    pub post_copy_after: Option<u32>,
    /// The post-copy migration fails (network): the VMI is lost.
    pub post_copy_fails: bool,
    /// Stay in Running until aborted.
    pub hold_running: bool,
    /// Guest memory moved, bytes.
    pub memory: u64,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            phase_ticks: 2,
            running_ticks: 30,
            unschedulable: false,
            quota: false,
            stuck: false,
            new_iteration: false,
            post_copy_after: None,
            post_copy_fails: false,
            hold_running: false,
            memory: 2 * 1024 * 1024 * 1024,
        }
    }
}

/// Per-migration progress the sim keeps.
#[derive(Debug, Clone, Default)]
struct Progress {
    ticks_in_phase: u32,
    running_ticks: u32,
    remaining: u64,
    processed: u64,
    jumped: bool,
}

struct Inner {
    server: Weak<FakeApiServer>,
    script: Mutex<Script>,
    progress: Mutex<BTreeMap<(String, String), Progress>>,
    counter: Mutex<u64>,
}

pub struct KubeVirtSim {
    inner: Arc<Inner>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for KubeVirtSim {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub fn now() -> String {
    Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

const TRANSFER_RATE: u64 = 256 * 1024 * 1024;
const DIRTY_RATE: u64 = 16 * 1024 * 1024;

impl KubeVirtSim {
    pub fn start(server: &Arc<FakeApiServer>, script: Script) -> KubeVirtSim {
        let inner = Arc::new(Inner {
            server: Arc::downgrade(server),
            script: Mutex::new(script),
            progress: Mutex::new(BTreeMap::new()),
            counter: Mutex::new(0),
        });
        let hook_inner = Arc::downgrade(&inner);
        server.add_hook(Arc::new(move |req: &HookRequest| {
            let inner = hook_inner.upgrade()?;
            inner.hook(req)
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let thread_inner = Arc::clone(&inner);
        let thread_stop = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            while !thread_stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(100));
                let Some(server) = thread_inner.server.upgrade() else {
                    break;
                };
                thread_inner.tick(&server);
            }
        });
        KubeVirtSim {
            inner,
            stop,
            thread: Some(thread),
        }
    }

    pub fn set_script(&self, script: Script) {
        *self.inner.script.lock().unwrap() = script;
    }
}

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or("")
}

fn status(code: u16, reason: &str, message: &str) -> HookReply {
    HookReply::Json(
        code,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}),
    )
}

impl Inner {
    fn name_suffix(&self) -> String {
        let mut c = self.counter.lock().unwrap();
        *c += 1;
        format!("{:05x}", 0x1a2b3 + *c * 7919)
    }

    fn hook(&self, req: &HookRequest) -> Option<HookReply> {
        let server = self.server.upgrade()?;
        let parts: Vec<&str> = req.path.split('/').filter(|p| !p.is_empty()).collect();
        match (req.method.clone(), parts.as_slice()) {
            (
                Method::PUT,
                [
                    "apis",
                    "subresources.kubevirt.io",
                    "v1",
                    "namespaces",
                    ns,
                    "virtualmachines",
                    vm,
                    "migrate",
                ],
            ) => {
                if server.object(Kind::VirtualMachine, Some(ns), vm).is_none() {
                    return Some(status(
                        404,
                        "NotFound",
                        &format!("virtualmachines.kubevirt.io \"{vm}\" not found"),
                    ));
                }
                let Some(vmi) = server.object(Kind::VirtualMachineInstance, Some(ns), vm) else {
                    return Some(status(409, "Conflict", "VM is not running"));
                };
                let body: Value = serde_json::from_str(&req.body).unwrap_or(json!({}));
                let name = format!("kubevirt-migrate-vm-{}", self.name_suffix());
                let mut vmim = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
                    "metadata": {"name": name, "namespace": ns},
                    "spec": {"vmiName": vm}});
                if let Some(sel) = body.get("addedNodeSelector") {
                    vmim["spec"]["addedNodeSelector"] = sel.clone();
                }
                match self.admit(&server, &vmi, vmim) {
                    Ok(_) => Some(HookReply::Empty(202)),
                    Err(reply) => Some(reply),
                }
            }
            (
                Method::POST,
                [
                    "apis",
                    "kubevirt.io",
                    "v1",
                    "namespaces",
                    ns,
                    "virtualmachineinstancemigrations",
                ],
            ) => {
                let mut vmim: Value = serde_json::from_str(&req.body).ok()?;
                let vmi_name = s(&vmim, "/spec/vmiName").to_string();
                let Some(vmi) = server.object(Kind::VirtualMachineInstance, Some(ns), &vmi_name)
                else {
                    return Some(status(
                        422,
                        "Invalid",
                        &format!(
                            "admission webhook \"migration-create-validator.kubevirt.io\" denied the request: the VMI \"{ns}/{vmi_name}\" does not exist"
                        ),
                    ));
                };
                if s(&vmim, "/metadata/name").is_empty() {
                    let prefix = s(&vmim, "/metadata/generateName").to_string();
                    vmim["metadata"]["name"] = json!(format!("{prefix}{}", self.name_suffix()));
                }
                vmim["metadata"]["namespace"] = json!(ns);
                match self.admit(&server, &vmi, vmim) {
                    Ok(created) => Some(HookReply::Json(201, created)),
                    Err(reply) => Some(reply),
                }
            }
            (
                Method::PUT,
                [
                    "apis",
                    "subresources.kubevirt.io",
                    "v1",
                    "namespaces",
                    ns,
                    _plural,
                    name,
                    "evacuate",
                    "cancel",
                ],
            ) => {
                let vmi = server.object(Kind::VirtualMachineInstance, Some(ns), name)?;
                let mut vmi = vmi;
                if let Some(st) = vmi.get_mut("status").and_then(Value::as_object_mut) {
                    st.remove("evacuationNodeName");
                }
                server.update_object(vmi);
                Some(HookReply::Empty(200))
            }
            (
                Method::GET,
                [
                    "api",
                    "v1",
                    "namespaces",
                    ns,
                    "pods",
                    target,
                    "proxy",
                    "metrics",
                ],
            ) => {
                let Some(pod) = target
                    .strip_prefix("https:")
                    .and_then(|t| t.strip_suffix(":8443"))
                else {
                    return Some(HookReply::Text(
                        400,
                        "Client sent an HTTP request to an HTTPS server.\n".into(),
                    ));
                };
                let Some(pod) = server.object(Kind::Pod, Some(ns), pod) else {
                    return Some(status(
                        404,
                        "NotFound",
                        &format!("pods \"{pod}\" not found"),
                    ));
                };
                Some(HookReply::Text(
                    200,
                    self.metrics_page(&server, s(&pod, "/spec/nodeName")),
                ))
            }
            _ => None,
        }
    }

    /// The admission webhook: in-flight check, label and finalizer.
    fn admit(
        &self,
        server: &FakeApiServer,
        vmi: &Value,
        mut vmim: Value,
    ) -> Result<Value, HookReply> {
        let ns = s(vmi, "/metadata/namespace").to_string();
        let name = s(vmi, "/metadata/name").to_string();
        let in_flight = server
            .objects(Kind::VirtualMachineInstanceMigration)
            .into_iter()
            .find(|m| {
                s(m, "/metadata/namespace") == ns
                    && s(m, "/spec/vmiName") == name
                    && !matches!(s(m, "/status/phase"), "Succeeded" | "Failed")
            });
        if let Some(m) = in_flight {
            return Err(status(
                422,
                "Invalid",
                &format!(
                    "admission webhook \"migration-create-validator.kubevirt.io\" denied the request: in-flight migration detected. Active migration job ({}) is currently already in progress for VMI {name}.",
                    s(&m, "/metadata/uid")
                ),
            ));
        }
        let labels = vmim["metadata"]
            .as_object_mut()
            .map(|m| m.entry("labels").or_insert(json!({})).clone());
        let mut labels = labels.unwrap_or(json!({}));
        labels["kubevirt.io/vmi-name"] = json!(name);
        vmim["metadata"]["labels"] = labels;
        vmim["metadata"]["finalizers"] = json!(["kubevirt.io/migrationJobFinalize"]);
        Ok(server.add_object(vmim))
    }

    fn metrics_page(&self, server: &FakeApiServer, node: &str) -> String {
        let mut out = String::from(
            "# HELP kubevirt_vmi_migration_data_remaining_bytes The remaining guest OS data to be migrated to the new VM.\n# TYPE kubevirt_vmi_migration_data_remaining_bytes gauge\n",
        );
        let progress = self.progress.lock().unwrap().clone();
        let script = self.script.lock().unwrap().clone();
        for vmi in server.objects(Kind::VirtualMachineInstance) {
            let ms = &vmi["status"]["migrationState"];
            if ms.is_null()
                || ms.get("startTimestamp").is_none()
                || ms.get("completed").and_then(Value::as_bool) == Some(true)
                || s(ms, "/sourceNode") != node
            {
                continue;
            }
            let ns = s(&vmi, "/metadata/namespace");
            let name = s(&vmi, "/metadata/name");
            let Some(p) = progress.get(&(ns.to_string(), s(ms, "/migrationUid").to_string()))
            else {
                continue;
            };
            let labels = format!("name=\"{name}\",namespace=\"{ns}\",node=\"{node}\"");
            let dirty = if script.stuck {
                TRANSFER_RATE
            } else {
                DIRTY_RATE
            };
            out.push_str(&format!(
                "kubevirt_vmi_migration_data_remaining_bytes{{{labels}}} {}\n\
                 kubevirt_vmi_migration_data_processed_bytes{{{labels}}} {}\n\
                 kubevirt_vmi_migration_data_bytes_total{{{labels}}} {}\n\
                 kubevirt_vmi_migration_dirty_memory_rate_bytes{{{labels}}} {dirty}\n\
                 kubevirt_vmi_migration_memory_transfer_rate_bytes{{{labels}}} {TRANSFER_RATE}\n",
                p.remaining,
                p.processed,
                p.remaining + p.processed
            ));
        }
        out
    }

    fn tick(&self, server: &FakeApiServer) {
        let script = self.script.lock().unwrap().clone();
        for vmim in server.objects(Kind::VirtualMachineInstanceMigration) {
            self.advance(server, &script, vmim);
        }
    }

    fn set_phase(server: &FakeApiServer, vmim: &mut Value, phase: &str) {
        vmim["status"]["phase"] = json!(phase);
        let entry = json!({"phase": phase, "phaseTransitionTimestamp": now()});
        match vmim["status"]
            .get_mut("phaseTransitionTimestamps")
            .and_then(Value::as_array_mut)
        {
            Some(list) => list.push(entry),
            None => vmim["status"]["phaseTransitionTimestamps"] = json!([entry]),
        }
        let _ = server;
    }

    #[allow(clippy::too_many_arguments)]
    fn event(
        server: &FakeApiServer,
        ns: &str,
        kind: &str,
        name: &str,
        uid: &str,
        reason: &str,
        message: &str,
        warning: bool,
    ) {
        let n = format!("{name}.{:x}", Timestamp::now().as_nanosecond() as u64);
        server.add_object(json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": n, "namespace": ns},
            "involvedObject": {"kind": kind, "name": name, "namespace": ns, "uid": uid},
            "reason": reason, "message": message, "type": if warning {"Warning"} else {"Normal"},
            "firstTimestamp": now(), "lastTimestamp": now(), "count": 1}));
    }

    fn advance(&self, server: &FakeApiServer, script: &Script, mut vmim: Value) {
        let ns = s(&vmim, "/metadata/namespace").to_string();
        let name = s(&vmim, "/metadata/name").to_string();
        let uid = s(&vmim, "/metadata/uid").to_string();
        let vmi_name = s(&vmim, "/spec/vmiName").to_string();
        let phase = s(&vmim, "/status/phase").to_string();
        let deleting = vmim.pointer("/metadata/deletionTimestamp").is_some();
        let key = (ns.clone(), uid.clone());
        if matches!(phase.as_str(), "Succeeded" | "Failed") {
            if deleting {
                server.delete_object(Kind::VirtualMachineInstanceMigration, Some(&ns), &name);
            }
            self.progress.lock().unwrap().remove(&key);
            return;
        }
        let Some(mut vmi) = server.object(Kind::VirtualMachineInstance, Some(&ns), &vmi_name)
        else {
            Self::set_phase(server, &mut vmim, "Failed");
            server.update_object(vmim);
            return;
        };
        let mut progress = self
            .progress
            .lock()
            .unwrap()
            .get(&key)
            .cloned()
            .unwrap_or_default();
        progress.ticks_in_phase += 1;
        let source_node = s(&vmi, "/status/nodeName").to_string();
        let target_node = if source_node == "node-1" {
            "node-2"
        } else {
            "node-1"
        }
        .to_string();
        let vmi_uid = s(&vmi, "/metadata/uid").to_string();
        let source_pod = server
            .objects(Kind::Pod)
            .into_iter()
            .find(|p| {
                s(p, "/metadata/namespace") == ns
                    && p.pointer("/metadata/labels/kubevirt.io~1created-by")
                        .and_then(Value::as_str)
                        == Some(vmi_uid.as_str())
                    && s(p, "/spec/nodeName") == source_node
                    && s(p, "/status/phase") == "Running"
            })
            .map(|p| s(&p, "/metadata/name").to_string())
            .unwrap_or_default();
        let target_pod = format!("virt-launcher-{vmi_name}-t{}", &uid[..5.min(uid.len())]);
        let in_state = vmi["status"]["migrationState"]["migrationUid"] == json!(uid);
        let mode = s(&vmi, "/status/migrationState/mode").to_string();

        // ---- abort on delete
        if deleting {
            match phase.as_str() {
                "Running" if mode == "PostCopy" => {}
                "Running" => {
                    let ms = &mut vmi["status"]["migrationState"];
                    if ms["abortStatus"].is_null() {
                        ms["abortRequested"] = json!(true);
                        ms["abortStatus"] = json!("Aborting");
                        server.update_object(vmi);
                        Self::event(
                            server,
                            &ns,
                            "VirtualMachineInstanceMigration",
                            &name,
                            &uid,
                            "SuccessfulAbortMigration",
                            "Migration is ready to be canceled by virt-handler.",
                            false,
                        );
                    } else {
                        ms["abortStatus"] = json!("Succeeded");
                        ms["failed"] = json!(true);
                        ms["completed"] = json!(true);
                        ms["endTimestamp"] = json!(now());
                        ms["failureReason"] = json!("Live migration aborted ");
                        server.update_object(vmi);
                        server.delete_object(Kind::Pod, Some(&ns), &target_pod);
                        Self::set_phase(server, &mut vmim, "Failed");
                        vmim["status"]["conditions"] =
                            json!([{"type": "migrationAbortRequested", "status": "True"}]);
                        server.update_object(vmim);
                    }
                    return;
                }
                _ => {
                    server.delete_object(Kind::Pod, Some(&ns), &target_pod);
                    Self::set_phase(server, &mut vmim, "Failed");
                    vmim["status"]["conditions"] =
                        json!([{"type": "migrationAbortRequested", "status": "True"}]);
                    server.update_object(vmim);
                    Self::event(
                        server,
                        &ns,
                        "VirtualMachineInstanceMigration",
                        &name,
                        &uid,
                        "FailedMigration",
                        "Migration failed due to being canceled",
                        true,
                    );
                    return;
                }
            }
        }

        let wait = progress.ticks_in_phase < script.phase_ticks.max(1);
        let mut next: Option<&str> = None;
        match phase.as_str() {
            "" => next = Some("Pending"),
            "Pending" if script.quota && vmim["status"]["conditions"].is_null() => {
                vmim["status"]["conditions"] =
                    json!([{"type": "migrationRejectedByResourceQuota", "status": "True"}]);
                vmim["status"]["migrationState"] = json!({"sourcePod": source_pod});
                server.update_object(vmim.clone());
                Self::event(
                    server,
                    &ns,
                    "VirtualMachineInstance",
                    &vmi_name,
                    &vmi_uid,
                    "FailedCreate",
                    &format!(
                        "Error creating pod: pods \"{target_pod}\" is forbidden: exceeded quota: vm-quota, requested: requests.memory=2400Mi, used: requests.memory=7200Mi, limited: requests.memory=8Gi"
                    ),
                    true,
                );
            }
            "Pending" if script.quota => {}
            "Pending" if !wait => {
                let pod_status = if script.unschedulable {
                    json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                        "message": "0/2 nodes are available: 1 Insufficient memory, 1 node(s) didn't match pod anti-affinity rules. preemption: 0/2 nodes are available"}]})
                } else {
                    json!({"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True"}]})
                };
                let mut spec = json!({"containers": [{"name": "compute", "resources": {"requests": {"memory": "2400Mi"}}}]});
                if !script.unschedulable {
                    spec["nodeName"] = json!(target_node);
                }
                server.add_object(json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": target_pod, "namespace": ns,
                        "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": vmi_uid, "kubevirt.io/migrationJobUID": uid},
                        "annotations": {"kubevirt.io/migrationJobName": name, "kubevirt.io/domain": vmi_name}},
                    "spec": spec, "status": pod_status}));
                Self::event(
                    server,
                    &ns,
                    "VirtualMachineInstanceMigration",
                    &name,
                    &uid,
                    "SuccessfulCreate",
                    &format!(
                        "Created migration target pod {ns}/{target_pod} with uuid x for migration {uid}"
                    ),
                    false,
                );
                next = Some("Scheduling");
            }
            "Scheduling" if script.unschedulable => {
                if progress.ticks_in_phase == 2 {
                    Self::event(
                        server,
                        &ns,
                        "VirtualMachineInstanceMigration",
                        &name,
                        &uid,
                        "migrationTargetPodUnschedulable",
                        &format!(
                            "Migration target pod for VMI [{ns}/{vmi_name}] is currently unschedulable."
                        ),
                        true,
                    );
                }
                if progress.ticks_in_phase > script.running_ticks {
                    server.delete_object(Kind::Pod, Some(&ns), &target_pod);
                    Self::event(
                        server,
                        &ns,
                        "VirtualMachineInstanceMigration",
                        &name,
                        &uid,
                        "SuccessfulDelete",
                        &format!("unschedulable pod {ns}/{target_pod} timeout period exceeded"),
                        false,
                    );
                    Self::event(
                        server,
                        &ns,
                        "VirtualMachineInstanceMigration",
                        &name,
                        &uid,
                        "FailedMigration",
                        "Migration target pod was removed during active migration.",
                        true,
                    );
                    next = Some("Failed");
                }
            }
            "Scheduling" if !wait => next = Some("Scheduled"),
            "Scheduled" if !wait => {
                // Hand-off: the policy is matched now.
                let policies: Vec<MigrationPolicy> = server
                    .objects(Kind::MigrationPolicy)
                    .into_iter()
                    .filter_map(|p| serde_json::from_value(p).ok())
                    .collect();
                let typed: Option<VirtualMachineInstance> =
                    serde_json::from_value(vmi.clone()).ok();
                let namespace: Option<Namespace> = server
                    .object(Kind::Namespace, None, &ns)
                    .and_then(|n| serde_json::from_value(n).ok());
                let policy = typed.and_then(|v| {
                    vmctl::policy::migration_policy::matching_policy(
                        &v,
                        namespace.as_ref(),
                        &policies,
                    )
                });
                let mut ms = json!({"migrationUid": uid, "sourceNode": source_node, "targetNode": target_node,
                    "sourcePod": source_pod, "targetPod": target_pod});
                if let Some(p) = policy {
                    let obj = policies.iter().find(|x| x.name() == p.name);
                    ms["migrationPolicyName"] = json!(p.name);
                    if let Some(o) = obj {
                        ms["migrationConfiguration"] = json!({"allowPostCopy": o.spec.allow_post_copy.unwrap_or(false),
                            "allowAutoConverge": o.spec.allow_auto_converge.unwrap_or(false)});
                    }
                }
                vmi["status"]["migrationState"] = ms;
                vmi["metadata"]["labels"]["kubevirt.io/migrationTargetNodeName"] =
                    json!(target_node);
                server.update_object(vmi.clone());
                next = Some("PreparingTarget");
            }
            "PreparingTarget" if !wait && in_state => {
                vmi["status"]["migrationState"]["targetNodeAddress"] = json!("10.0.0.2");
                server.update_object(vmi.clone());
                next = Some("TargetReady");
            }
            "TargetReady" if !wait && in_state => {
                vmi["status"]["migrationState"]["startTimestamp"] = json!(now());
                vmi["status"]["migrationState"]["mode"] = json!("PreCopy");
                server.update_object(vmi.clone());
                progress.remaining = script.memory;
                progress.processed = 0;
                next = Some("Running");
            }
            "Running" if in_state => {
                progress.running_ticks += 1;
                let step = script.memory / u64::from(script.running_ticks.max(1));
                if !script.stuck {
                    let moved = step.min(progress.remaining);
                    progress.remaining -= moved;
                    progress.processed += moved;
                } else {
                    progress.processed += step;
                }
                if script.new_iteration
                    && !progress.jumped
                    && progress.running_ticks == script.running_ticks / 2
                {
                    progress.jumped = true;
                    progress.remaining += script.memory / 2;
                }
                if script.hold_running {
                    progress.remaining = progress.remaining.max(step);
                }
                if let Some(after) = script.post_copy_after
                    && progress.running_ticks == after
                    && mode != "PostCopy"
                {
                    vmi["status"]["migrationState"]["mode"] = json!("PostCopy");
                    server.update_object(vmi.clone());
                }
                let in_post_copy = mode == "PostCopy";
                if in_post_copy
                    && script.post_copy_fails
                    && progress.running_ticks > script.post_copy_after.unwrap_or(0) + 3
                {
                    let ms = &mut vmi["status"]["migrationState"];
                    ms["completed"] = json!(true);
                    ms["failed"] = json!(true);
                    ms["endTimestamp"] = json!(now());
                    ms["failureReason"] = json!(
                        "virError(Code=1, Domain=10, Message='internal error: qemu unexpectedly closed the monitor')"
                    );
                    vmi["status"]["phase"] = json!("Failed");
                    vmi["status"]["conditions"] = json!([{"type": "Synchronized", "status": "False", "reason": "Synchronizing with the Domain failed.", "message": "VMI is irrecoverable due to failed post-copy migration"}]);
                    server.update_object(vmi.clone());
                    Self::event(
                        server,
                        &ns,
                        "VirtualMachineInstance",
                        &vmi_name,
                        &vmi_uid,
                        "SyncFailed",
                        "VMI is irrecoverable due to failed post-copy migration",
                        true,
                    );
                    next = Some("Failed");
                } else if script.stuck && progress.running_ticks >= script.running_ticks {
                    let ms = &mut vmi["status"]["migrationState"];
                    ms["completed"] = json!(true);
                    ms["failed"] = json!(true);
                    ms["abortStatus"] = json!("Succeeded");
                    ms["endTimestamp"] = json!(now());
                    ms["failureReason"] =
                        json!("Live migration stuck for 150 seconds and has been aborted");
                    server.update_object(vmi.clone());
                    Self::event(
                        server,
                        &ns,
                        "VirtualMachineInstance",
                        &vmi_name,
                        &vmi_uid,
                        "Migrated",
                        &format!(
                            "VirtualMachineInstance migration uid {uid} failed. reason:Live migration stuck for 150 seconds and has been aborted"
                        ),
                        true,
                    );
                    next = Some("Failed");
                } else if !script.hold_running
                    && !script.stuck
                    && (!in_post_copy || !script.post_copy_fails)
                    && (progress.remaining == 0
                        || (in_post_copy
                            && progress.running_ticks > script.post_copy_after.unwrap_or(0) + 3))
                    && progress.running_ticks >= script.running_ticks
                {
                    let ms = &mut vmi["status"]["migrationState"];
                    ms["completed"] = json!(true);
                    ms["endTimestamp"] = json!(now());
                    ms["targetNodeDomainDetected"] = json!(true);
                    vmi["status"]["nodeName"] = json!(target_node);
                    vmi["metadata"]["labels"]["kubevirt.io/nodeName"] = json!(target_node);
                    server.update_object(vmi.clone());
                    if let Some(mut pod) = server.object(Kind::Pod, Some(&ns), &source_pod) {
                        pod["status"]["phase"] = json!("Succeeded");
                        server.update_object(pod);
                    }
                    next = Some("Succeeded");
                }
            }
            _ => {}
        }
        if let Some(n) = next {
            progress.ticks_in_phase = 0;
            Self::set_phase(server, &mut vmim, n);
            if matches!(n, "Succeeded" | "Failed") {
                if let Some(st) = server
                    .object(Kind::VirtualMachineInstance, Some(&ns), &vmi_name)
                    .and_then(|v| v["status"].get("migrationState").cloned())
                {
                    vmim["status"]["migrationState"] = st;
                }
                vmim["metadata"]["finalizers"] = json!([]);
            }
            server.update_object(vmim);
        }
        self.progress.lock().unwrap().insert(key, progress);
    }
}

/// A small cluster: KubeVirt `version`, nodes node-1/node-2, namespace prod, the VM db-01
/// (labels app=db) with its VMI on node-1, the bare VMI batch-01 on node-1, launcher pods,
/// virt-handler pods on both nodes.
pub fn cluster(version: &str) -> Vec<Value> {
    let mut objects = vec![
        json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": {}}, "status": {"observedKubeVirtVersion": version, "phase": "Deployed"}}),
        json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "prod", "labels": {"kubernetes.io/metadata.name": "prod", "env": "prod"}}}),
        json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "kubevirt", "labels": {"kubernetes.io/metadata.name": "kubevirt"}}}),
    ];
    for node in ["node-1", "node-2"] {
        objects.push(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node, "labels": {"kubevirt.io/schedulable": "true", "kubernetes.io/hostname": node}},
            "spec": {}, "status": {"allocatable": {"memory": "64Gi", "cpu": "32"},
                "conditions": [{"type": "Ready", "status": "True"}]}}));
        objects.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("virt-handler-{}", &node[5..]), "namespace": "kubevirt",
                "labels": {"kubevirt.io": "virt-handler"}},
            "spec": {"nodeName": node, "containers": [{"name": "virt-handler"}]},
            "status": {"phase": "Running"}}));
    }
    objects.extend(vmi(
        "db-01",
        Some("db-01"),
        json!({"app": "db", "kubevirt.io/nodeName": "node-1"}),
        true,
    ));
    objects.extend(vmi(
        "batch-01",
        None,
        json!({"app": "batch", "kubevirt.io/nodeName": "node-1"}),
        true,
    ));
    objects
}

/// A running VMI on node-1 with its launcher pod (and its VM when `vm` is given).
pub fn vmi(name: &str, vm: Option<&str>, labels: Value, migratable: bool) -> Vec<Value> {
    let uid = format!("uid-{name}");
    let mut meta = json!({"name": name, "namespace": "prod", "uid": uid, "labels": labels});
    if let Some(vm) = vm {
        meta["ownerReferences"] = json!([{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "name": vm, "uid": format!("vm-{vm}"), "controller": true}]);
    }
    let condition = if migratable {
        json!({"type": "LiveMigratable", "status": "True"})
    } else {
        json!({"type": "LiveMigratable", "status": "False", "reason": "DisksNotLiveMigratable",
            "message": "cannot migrate VMI: PVC data-x is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)"})
    };
    let mut out = vec![
        json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "metadata": meta,
            "spec": {"domain": {"memory": {"guest": "2Gi"}, "resources": {"requests": {"memory": "2Gi"}}}},
            "status": {"nodeName": "node-1", "phase": "Running", "conditions": [condition],
                "activePods": {format!("pod-{name}"): "node-1"}}}),
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("virt-launcher-{name}-abcde"), "namespace": "prod", "uid": format!("pod-{name}"),
                "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": uid},
                "annotations": {"kubevirt.io/domain": name}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "compute", "resources": {"requests": {"memory": "2400Mi"}}}]},
            "status": {"phase": "Running"}}),
    ];
    if let Some(vm) = vm {
        out.push(json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": vm, "namespace": "prod", "uid": format!("vm-{vm}")},
            "spec": {"runStrategy": "Always"}, "status": {"printableStatus": "Running", "ready": true}}));
    }
    out
}
