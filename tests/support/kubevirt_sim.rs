//! A small scripted KubeVirt on top of the fake API server: virt-api's migrate and
//! evacuate/cancel subresources, the VMIM admission webhook (label, finalizer, in-flight
//! check), virt-controller and virt-handler advancing a VMIM through its phases and filling
//! the VMI's `migrationState`, the abort on delete, and virt-handler's `/metrics` through
//! the pod proxy. Scripted failures: unschedulable target, stuck progress, a new iteration,
//! post-copy (and its failure), quota rejection, a hold in Running (for aborts).
//!
//! For drains (FACTS §2): virt-api's launcher-eviction webhook (v1.5+ table, denials as
//! 429 [`webhook_denial`]), the evacuation controller creating `kubevirt-evacuation-*`
//! VMIMs for marked VMIs (scripted failures with a doubling backoff and `MigrationBackoff`
//! events), targets chosen among uncordoned nodes ([`pick_node`]), VMIs whose launcher pod
//! was evicted stopping (and their VM restarting them), and [`drain_cluster`] fixtures. The
//! fake API server's eviction handler applies PDBs (see `apiserver/handlers.rs`).
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
    /// The first N evacuation migrations (VMIMs annotated `kubevirt.io/evacuationMigration`)
    /// of each VMI fail a few ticks into Running, as a migration whose libvirt job breaks:
    /// the VMI's `migrationState` gets `failed: true` and a `virError(…)` `failureReason`,
    /// the VMI a Warning `Migrated` event, the VMIM a Warning `FailedMigration` ("source
    /// node reported migration failed") and the target pod is removed (FACTS §5.5, §6.1).
    /// The VMI stays marked, so the evacuation controller creates the next VMIM at once
    /// and the migration controller holds it in Pending for the backoff (FACTS §2.2).
    pub evacuation_failures: u32,
    /// The `failureReason` of those failures (default: a libvirt stream reset by the peer).
    pub evacuation_failure_reason: Option<&'static str>,
    /// Only this VMI's evacuations fail (`evacuation_failures`); `None`: every VMI's.
    pub evacuation_failures_for: Option<&'static str>,
    /// virt-handler's guest dirty rate (`kubevirt_vmi_dirty_rate_bytes_per_second`, v1.6+),
    /// bytes/s, for every Running VMI on the node that is not migrating; `None`: the page
    /// has no such metric (a virt-handler before v1.6).
    pub guest_dirty_rate: Option<u64>,
    /// The first evacuation backoff, in ticks (real KubeVirt: 20 s), doubling for each
    /// further consecutive failed evacuation of the VMI (FACTS §2.2, §12). While it runs,
    /// the new VMIM waits in Pending and the VMI gets one Warning event `MigrationBackoff`
    /// `backoff migrating vmi <ns>/<name>` per held VMIM.
    pub evacuation_backoff_ticks: u32,
    /// The scheduler puts every new target pod on this node (when it is not the source), a
    /// choice vmctl's prediction need not share; `None`: the first schedulable node.
    pub place_on: Option<&'static str>,
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
            evacuation_failures: 0,
            evacuation_failure_reason: None,
            evacuation_failures_for: None,
            evacuation_backoff_ticks: 5,
            guest_dirty_rate: Some(0),
            place_on: None,
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
    /// The node the target pod was placed on (chosen once, when it is created).
    target: Option<String>,
    /// A `MigrationBackoff` event was emitted for this VMIM.
    backoff_reported: bool,
}

/// Per-VMI evacuation bookkeeping (by namespace and VMI name).
#[derive(Debug, Clone, Default)]
struct Evacuation {
    /// Scripted failures already injected (`Script::evacuation_failures`).
    injected: u32,
    /// Consecutive failed evacuation VMIMs since the last success.
    consecutive_failures: u32,
    /// The tick before which a new evacuation VMIM is held in Pending.
    backoff_until: u64,
}

struct Inner {
    server: Weak<FakeApiServer>,
    script: Mutex<Script>,
    progress: Mutex<BTreeMap<(String, String), Progress>>,
    counter: Mutex<u64>,
    /// Ticks run so far.
    ticks: Mutex<u64>,
    evacuations: Mutex<BTreeMap<(String, String), Evacuation>>,
    /// Launcher pods the eviction webhook let through (namespace, VMI name, pod name): once
    /// the API server has deleted one, its VMI stops (see [`Inner::stop_evicted`]).
    evicted: Mutex<Vec<(String, String, String)>>,
    /// Held by the eviction webhook and the controllers that read-modify-write VMIs, so a
    /// mark is never lost to a concurrent tick.
    busy: Mutex<()>,
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
            ticks: Mutex::new(0),
            evacuations: Mutex::new(BTreeMap::new()),
            evicted: Mutex::new(Vec::new()),
            busy: Mutex::new(()),
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

    /// Ticks (of 100 ms) the sim has run so far.
    pub fn ticks(&self) -> u64 {
        self.inner.now_tick()
    }

    /// Blocks until the sim has run `n` more ticks (counts ticks, so a slow machine only
    /// makes it take longer).
    pub fn wait_ticks(&self, n: u64) {
        let until = self.ticks() + n;
        while self.ticks() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
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
            // The fake server serves no DaemonSets: one exists when a pod names it as its
            // controller (what kubectl drain's daemonSetFilter and vmctl drain GET).
            (Method::GET, ["apis", "apps", "v1", "namespaces", ns, "daemonsets", name]) => {
                let exists = server.objects(Kind::Pod).iter().any(|p| {
                    s(p, "/metadata/namespace") == *ns
                        && p["metadata"]["ownerReferences"]
                            .as_array()
                            .is_some_and(|o| {
                                o.iter().any(|o| {
                                    o["kind"] == "DaemonSet"
                                        && o["name"] == *name
                                        && o["controller"] == true
                                })
                            })
                });
                Some(if exists {
                    HookReply::Json(
                        200,
                        json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
                            "metadata": {"name": name, "namespace": ns, "uid": format!("daemonset-{name}")},
                            "spec": {"selector": {"matchLabels": {"app": name}}},
                            "status": {"desiredNumberScheduled": 3, "numberReady": 3}}),
                    )
                } else {
                    status(
                        404,
                        "NotFound",
                        &format!("daemonsets.apps \"{name}\" not found"),
                    )
                })
            }
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
            (Method::POST, ["api", "v1", "namespaces", ns, "pods", pod, "eviction"]) => {
                self.eviction_webhook(&server, ns, pod, req)
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
        if let Some(rate) = script.guest_dirty_rate {
            // KubeVirt v1.9 measures Running VMIs that are not migrating.
            out.push_str("# TYPE kubevirt_vmi_dirty_rate_bytes_per_second gauge\n");
            for vmi in server.objects(Kind::VirtualMachineInstance) {
                let ms = &vmi["status"]["migrationState"];
                let migrating = ms.get("startTimestamp").is_some()
                    && ms.get("completed").and_then(Value::as_bool) != Some(true)
                    && ms.get("failed").and_then(Value::as_bool) != Some(true);
                if s(&vmi, "/status/nodeName") != node
                    || s(&vmi, "/status/phase") != "Running"
                    || migrating
                {
                    continue;
                }
                out.push_str(&format!(
                    "kubevirt_vmi_dirty_rate_bytes_per_second{{name=\"{}\",namespace=\"{}\",node=\"{node}\"}} {rate}\n",
                    s(&vmi, "/metadata/name"),
                    s(&vmi, "/metadata/namespace")
                ));
            }
        }
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
        let _busy = self.busy.lock().unwrap();
        *self.ticks.lock().unwrap() += 1;
        for vmim in server.objects(Kind::VirtualMachineInstanceMigration) {
            self.advance(server, &script, vmim);
        }
        self.evacuate(server);
        self.stop_evicted(server);
    }

    fn now_tick(&self) -> u64 {
        *self.ticks.lock().unwrap()
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
        let target_node = progress
            .target
            .clone()
            .or_else(|| {
                (vmi["status"]["migrationState"]["migrationUid"] == json!(uid))
                    .then(|| s(&vmi, "/status/migrationState/targetNode").to_string())
                    .filter(|t| !t.is_empty())
            })
            .or_else(|| {
                script
                    .place_on
                    .filter(|n| *n != source_node)
                    .filter(|n| server.object(Kind::Node, None, n).is_some())
                    .map(str::to_string)
            })
            .or_else(|| pick_node(server, Some(&source_node)))
            .unwrap_or_default();
        // No schedulable node besides the source: the target pod cannot be scheduled.
        let unschedulable = script.unschedulable || target_node.is_empty();
        let evacuation = vmim
            .pointer("/metadata/annotations/kubevirt.io~1evacuationMigration")
            .is_some();
        let vmi_key = (ns.clone(), vmi_name.clone());
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
        // A test holds this one migration in Running until it removes the annotation.
        let held = s(&vmim, "/metadata/annotations/sim.vmctl.test~1hold") == "true";

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
            "Pending"
                if evacuation
                    && self
                        .evacuations
                        .lock()
                        .unwrap()
                        .get(&vmi_key)
                        .is_some_and(|e| e.backoff_until > self.now_tick()) =>
            {
                // handleMigrationBackoff: the VMIM waits; one Warning event on the VMI.
                if !progress.backoff_reported {
                    progress.backoff_reported = true;
                    Self::event(
                        server,
                        &ns,
                        "VirtualMachineInstance",
                        &vmi_name,
                        &vmi_uid,
                        "MigrationBackoff",
                        &format!("backoff migrating vmi {ns}/{vmi_name}"),
                        true,
                    );
                }
                progress.ticks_in_phase = 0;
            }
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
                progress.target = Some(target_node.clone()).filter(|t| !t.is_empty());
                let pod_status = if unschedulable {
                    json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                        "message": "0/2 nodes are available: 1 Insufficient memory, 1 node(s) didn't match pod anti-affinity rules. preemption: 0/2 nodes are available"}]})
                } else {
                    json!({"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True"}]})
                };
                let mut spec = json!({"containers": [{"name": "compute", "resources": {"requests": {"memory": "2400Mi"}}}]});
                if !unschedulable {
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
            "Scheduling" if unschedulable => {
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
                // Hand-off, as KubeVirt's `handleTargetPodHandoff`
                // (pkg/virt-controller/watch/migration/migration.go): the VMI is labelled
                // with the target pod's node, THEN the policies are matched against that
                // VMI (`matchMigrationPolicy` → `matchPolicy`, migrationpolicy.go).
                vmi["metadata"]["labels"]["kubevirt.io/migrationTargetNodeName"] =
                    json!(target_node);
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
                if script.hold_running || held {
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
                let inject_failure = evacuation
                    && script.evacuation_failures_for.is_none_or(|v| v == vmi_name)
                    && progress.running_ticks >= 2
                    && self
                        .evacuations
                        .lock()
                        .unwrap()
                        .get(&vmi_key)
                        .map_or(0, |e| e.injected)
                        < script.evacuation_failures;
                if inject_failure {
                    let reason = script.evacuation_failure_reason.unwrap_or(
                        "virError(Code=9, Domain=10, Message='operation failed: job 'migration out' failed: Unable to write to socket: Connection reset by peer')",
                    );
                    let ms = &mut vmi["status"]["migrationState"];
                    ms["completed"] = json!(true);
                    ms["failed"] = json!(true);
                    ms["endTimestamp"] = json!(now());
                    ms["failureReason"] = json!(reason);
                    server.update_object(vmi.clone());
                    server.delete_object(Kind::Pod, Some(&ns), &target_pod);
                    self.evacuations
                        .lock()
                        .unwrap()
                        .entry(vmi_key.clone())
                        .or_default()
                        .injected += 1;
                    Self::event(
                        server,
                        &ns,
                        "VirtualMachineInstance",
                        &vmi_name,
                        &vmi_uid,
                        "Migrated",
                        &format!(
                            "VirtualMachineInstance migration uid {uid} failed. reason:{reason}"
                        ),
                        true,
                    );
                    Self::event(
                        server,
                        &ns,
                        "VirtualMachineInstanceMigration",
                        &name,
                        &uid,
                        "FailedMigration",
                        "source node reported migration failed",
                        true,
                    );
                    next = Some("Failed");
                } else if in_post_copy
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
                    && !held
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
                    if let Some(st) = vmi["status"].as_object_mut() {
                        // The VMI left the node: no longer marked. Real virt-handler clears
                        // the mark after *any* successful migration (`migration-source.go`:
                        // "clean the evacuation node name since have already migrated to a
                        // new node").
                        st.remove("evacuationNodeName");
                        if let Some(Value::Array(cs)) = st.get_mut("conditions") {
                            cs.retain(|c| c["type"] != "EvictionRequested");
                        }
                        st.insert(
                            "activePods".into(),
                            json!({format!("target-{uid}"): target_node}),
                        );
                    }
                    server.update_object(vmi.clone());
                    Self::event(
                        server,
                        &ns,
                        "VirtualMachineInstance",
                        &vmi_name,
                        &vmi_uid,
                        "Migrated",
                        &format!("The VirtualMachineInstance migrated to node {target_node}."),
                        false,
                    );
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
            if evacuation && matches!(n, "Succeeded" | "Failed") {
                self.record_evacuation(&vmi_key, n == "Succeeded", script);
            }
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

/// The name the API server gives KubeVirt's launcher-eviction webhook in its denials.
pub const EVICTION_WEBHOOK: &str = "virt-launcher-eviction-interceptor.kubevirt.io";

/// A denial of KubeVirt's eviction webhook as the API server reports it (FACTS §2.1, §2.4):
/// HTTP 429, a `Status` whose message is prefixed with `admission webhook "…" denied the
/// request: `. Like the real one it has no `reason`: virt-api's `denied()` sets only
/// `code: 429` and the API server's `ToStatusErr` keeps the webhook's (empty) reason.
pub fn webhook_denial(message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("admission webhook \"{EVICTION_WEBHOOK}\" denied the request: {message}"),
        "code": 429})
}

/// The eviction strategy in force for a VMI: `spec.evictionStrategy`, else the KubeVirt
/// CR's `spec.configuration.evictionStrategy`, else `None` (FACTS §2).
pub fn effective_eviction_strategy(server: &FakeApiServer, vmi: &Value) -> String {
    let own = s(vmi, "/spec/evictionStrategy");
    if !own.is_empty() {
        return own.to_string();
    }
    server
        .objects(Kind::KubeVirt)
        .into_iter()
        .map(|kv| s(&kv, "/spec/configuration/evictionStrategy").to_string())
        .find(|v| !v.is_empty())
        .unwrap_or_else(|| "None".to_string())
}

fn live_migratable(vmi: &Value) -> bool {
    vmi.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "LiveMigratable" && c["status"] == "True")
        })
}

/// `(major, minor)` of the KubeVirt CR's `status.observedKubeVirtVersion`; (1, 9) without one.
fn kubevirt_version(server: &FakeApiServer) -> (u32, u32) {
    let version = server
        .objects(Kind::KubeVirt)
        .first()
        .map(|kv| s(kv, "/status/observedKubeVirtVersion").to_string())
        .unwrap_or_default();
    let mut parts = version.trim_start_matches('v').split('.');
    match (
        parts.next().and_then(|p| p.parse().ok()),
        parts.next().and_then(|p| p.parse().ok()),
    ) {
        (Some(major), Some(minor)) => (major, minor),
        _ => (1, 9),
    }
}

/// The first node (by name) other than `exclude` a pod can be scheduled on: not cordoned
/// (`spec.unschedulable`), not labelled `kubevirt.io/schedulable=false`, not NotReady.
pub fn pick_node(server: &FakeApiServer, exclude: Option<&str>) -> Option<String> {
    server
        .objects(Kind::Node)
        .into_iter()
        .filter(|n| Some(s(n, "/metadata/name")) != exclude)
        .filter(|n| n.pointer("/spec/unschedulable").and_then(Value::as_bool) != Some(true))
        .filter(|n| s(n, "/metadata/labels/kubevirt.io~1schedulable") != "false")
        .filter(|n| {
            !n.pointer("/status/conditions")
                .and_then(Value::as_array)
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c["type"] == "Ready" && c["status"] != "True")
                })
        })
        .map(|n| s(&n, "/metadata/name").to_string())
        .next()
}

impl Inner {
    /// virt-api's `virt-launcher-eviction-interceptor.kubevirt.io` (v1.5+ semantics, FACTS
    /// §2.1) on `POST …/pods/<name>/eviction`. `None` lets the API server go on (PDBs, then
    /// the pod is deleted); a denial is a 429 [`webhook_denial`].
    fn eviction_webhook(
        &self,
        server: &FakeApiServer,
        ns: &str,
        pod_name: &str,
        req: &HookRequest,
    ) -> Option<HookReply> {
        // The webhook's match condition: the pod's name starts with virt-launcher.
        if !pod_name.starts_with("virt-launcher") {
            return None;
        }
        let _busy = self.busy.lock().unwrap();
        let pod = server.object(Kind::Pod, Some(ns), pod_name)?;
        if s(&pod, "/metadata/labels/kubevirt.io") != "virt-launcher"
            || matches!(s(&pod, "/status/phase"), "Succeeded" | "Failed")
        {
            return None;
        }
        let eviction: Value = serde_json::from_str(&req.body).unwrap_or(json!({}));
        let dry_run = req.query.contains("dryRun=")
            || eviction
                .pointer("/deleteOptions/dryRun")
                .and_then(Value::as_array)
                .is_some_and(|d| !d.is_empty());
        let domain = s(&pod, "/metadata/annotations/kubevirt.io~1domain").to_string();
        let vmi = if domain.is_empty() {
            let uid = s(&pod, "/metadata/labels/kubevirt.io~1created-by").to_string();
            server
                .objects(Kind::VirtualMachineInstance)
                .into_iter()
                .find(|v| s(v, "/metadata/namespace") == ns && s(v, "/metadata/uid") == uid)?
        } else {
            match server.object(Kind::VirtualMachineInstance, Some(ns), &domain) {
                Some(v) => v,
                None => {
                    return Some(HookReply::Json(
                        429,
                        webhook_denial(&format!(
                            "kubevirt failed getting the vmi: virtualmachineinstances.kubevirt.io \"{domain}\" not found"
                        )),
                    ));
                }
            }
        };
        let vmi_name = s(&vmi, "/metadata/name").to_string();
        let strategy = effective_eviction_strategy(server, &vmi);
        let migratable = live_migratable(&vmi);
        let mark = match strategy.as_str() {
            "LiveMigrate" if !migratable => {
                return Some(HookReply::Json(
                    429,
                    webhook_denial(&format!(
                        "VMI {vmi_name} is configured with an eviction strategy but is not live-migratable"
                    )),
                ));
            }
            "LiveMigrate" | "External" => true,
            "LiveMigrateIfPossible" => migratable,
            _ => false,
        };
        let pod_node = s(&pod, "/spec/nodeName").to_string();
        if !mark {
            // Allowed: the API server deletes the pod (if no PDB refuses), the VMI stops.
            if !dry_run && pod_node == s(&vmi, "/status/nodeName") {
                self.evicted
                    .lock()
                    .unwrap()
                    .push((ns.to_string(), vmi_name, pod_name.to_string()));
            }
            return None;
        }
        let triggered = format!("Eviction triggered evacuation of VMI \"{ns}/{vmi_name}\"");
        if !s(&vmi, "/status/evacuationNodeName").is_empty() {
            return Some(HookReply::Json(
                429,
                webhook_denial(&format!("Evacuation in progress: {triggered}")),
            ));
        }
        if s(&vmi, "/status/nodeName") != pod_node {
            return Some(HookReply::Json(
                429,
                webhook_denial("Eviction request for target Pod"),
            ));
        }
        if !dry_run {
            let mut vmi = vmi;
            vmi["status"]["evacuationNodeName"] = json!(pod_node);
            if kubevirt_version(server) >= (1, 7) {
                let condition = json!({"type": "EvictionRequested", "status": "True",
                    "lastTransitionTime": now(), "lastProbeTime": null});
                match vmi["status"]
                    .get_mut("conditions")
                    .and_then(Value::as_array_mut)
                {
                    Some(cs) => {
                        cs.retain(|c| c["type"] != "EvictionRequested");
                        cs.push(condition);
                    }
                    None => vmi["status"]["conditions"] = json!([condition]),
                }
                if s(&eviction, "/metadata/annotations/requested-by") == "sigs.k8s.io/descheduler" {
                    vmi["metadata"]["annotations"]["kubevirt.io/eviction-source"] =
                        json!("descheduler");
                }
            }
            server.update_object(vmi);
        }
        Some(HookReply::Json(429, webhook_denial(&triggered)))
    }

    /// The evacuation controller (FACTS §2.2): a VMI marked for this node (evacuationNodeName
    /// == nodeName), Running, not migrating, migratable on eviction (LiveMigrate, or
    /// LiveMigrateIfPossible and LiveMigratable) and LiveMigratable, with no unfinished VMIM,
    /// gets a VMIM `kubevirt-evacuation-<suffix>` through the same admission as any VMIM.
    /// No throttling (v1.9+). `External` VMIs stay marked and are never migrated here.
    fn evacuate(&self, server: &FakeApiServer) {
        let vmims = server.objects(Kind::VirtualMachineInstanceMigration);
        let version = kubevirt_version(server);
        for vmi in server.objects(Kind::VirtualMachineInstance) {
            let ns = s(&vmi, "/metadata/namespace").to_string();
            let name = s(&vmi, "/metadata/name").to_string();
            let node = s(&vmi, "/status/nodeName");
            let marked = s(&vmi, "/status/evacuationNodeName");
            if marked.is_empty() || marked != node {
                continue;
            }
            if s(&vmi, "/status/phase") != "Running"
                || vmi.pointer("/metadata/deletionTimestamp").is_some()
            {
                continue;
            }
            let ms = &vmi["status"]["migrationState"];
            if ms.get("startTimestamp").is_some() && ms.get("endTimestamp").is_none() {
                continue;
            }
            let migratable = live_migratable(&vmi);
            let on_eviction = match effective_eviction_strategy(server, &vmi).as_str() {
                "LiveMigrate" => true,
                "LiveMigrateIfPossible" => migratable,
                _ => false,
            };
            if !on_eviction || !migratable {
                continue;
            }
            if vmims.iter().any(|m| {
                s(m, "/metadata/namespace") == ns
                    && s(m, "/spec/vmiName") == name
                    && !matches!(s(m, "/status/phase"), "Succeeded" | "Failed")
            }) {
                continue;
            }
            let vmim_name = format!("kubevirt-evacuation-{}", self.name_suffix());
            let mut vmim = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
                "metadata": {"name": vmim_name, "namespace": ns, "generateName": "kubevirt-evacuation-",
                    "annotations": {"kubevirt.io/evacuationMigration": node}},
                "spec": {"vmiName": name}});
            if version >= (1, 9) {
                let priority = if s(&vmi, "/metadata/annotations/kubevirt.io~1eviction-source")
                    == "descheduler"
                {
                    "system-maintenance"
                } else {
                    "system-critical"
                };
                vmim["spec"]["priority"] = json!(priority);
            }
            let uid = s(&vmi, "/metadata/uid").to_string();
            match self.admit(server, &vmi, vmim) {
                Ok(_) => Self::event(
                    server,
                    &ns,
                    "VirtualMachineInstance",
                    &name,
                    &uid,
                    "SuccessfulCreate",
                    &format!("Created Migration {vmim_name}"),
                    false,
                ),
                Err(_) => Self::event(
                    server,
                    &ns,
                    "VirtualMachineInstance",
                    &name,
                    &uid,
                    "FailedCreate",
                    "Error creating a Migration: in-flight migration detected",
                    true,
                ),
            }
        }
    }

    /// A finished evacuation VMIM: success resets the VMI's backoff, failure starts the next
    /// one (`evacuation_backoff_ticks`, doubling per consecutive failure).
    fn record_evacuation(&self, key: &(String, String), succeeded: bool, script: &Script) {
        let now = self.now_tick();
        let mut all = self.evacuations.lock().unwrap();
        let e = all.entry(key.clone()).or_default();
        if succeeded {
            e.consecutive_failures = 0;
            e.backoff_until = 0;
        } else {
            e.consecutive_failures += 1;
            let factor = 1u64 << (e.consecutive_failures - 1).min(16);
            e.backoff_until = now + u64::from(script.evacuation_backoff_ticks) * factor;
        }
    }

    /// A VMI whose launcher pod was evicted (eviction strategy None, or LiveMigrateIfPossible
    /// and not migratable) stops once the pod is gone: virt-controller sees a Running VMI
    /// without its pod and sets `status.phase: Failed` (the VMI object stays). A VM with
    /// `runStrategy: Always` or `RerunOnFailure` then gets a new VMI (new uid) and launcher
    /// pod on the first schedulable node ([`pick_node`]); the cordoned node is skipped.
    fn stop_evicted(&self, server: &FakeApiServer) {
        let pending = self.evicted.lock().unwrap().clone();
        for entry in pending {
            let (ns, vmi_name, pod) = &entry;
            if server.object(Kind::Pod, Some(ns), pod).is_some() {
                continue;
            }
            self.evicted.lock().unwrap().retain(|e| e != &entry);
            let Some(mut vmi) = server.object(Kind::VirtualMachineInstance, Some(ns), vmi_name)
            else {
                continue;
            };
            if matches!(s(&vmi, "/status/phase"), "Succeeded" | "Failed") {
                continue;
            }
            let uid = s(&vmi, "/metadata/uid").to_string();
            vmi["status"]["phase"] = json!("Failed");
            if let Some(st) = vmi["status"].as_object_mut() {
                st.insert("activePods".into(), json!({}));
                st.remove("evacuationNodeName");
            }
            server.update_object(vmi.clone());
            Self::event(
                server,
                ns,
                "VirtualMachineInstance",
                vmi_name,
                &uid,
                "Stopped",
                "The VirtualMachineInstance was shut down.",
                false,
            );
            let vm_name = vmi
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .and_then(|o| o.iter().find(|r| r["kind"] == "VirtualMachine"))
                .map(|r| s(r, "/name").to_string());
            let Some(vm) = vm_name.and_then(|n| server.object(Kind::VirtualMachine, Some(ns), &n))
            else {
                continue;
            };
            if !matches!(s(&vm, "/spec/runStrategy"), "Always" | "RerunOnFailure") {
                continue;
            }
            // The VM controller replaces the finished VMI.
            server.delete_object(Kind::VirtualMachineInstance, Some(ns), vmi_name);
            let suffix = self.name_suffix();
            let new_uid = format!("uid-{vmi_name}-{suffix}");
            let node = pick_node(server, None);
            let mut fresh = vmi.clone();
            fresh["metadata"]["uid"] = json!(new_uid);
            if let Some(meta) = fresh["metadata"].as_object_mut() {
                meta.remove("resourceVersion");
                meta.remove("creationTimestamp");
            }
            if let Some(st) = fresh["status"].as_object_mut() {
                st.remove("migrationState");
                st.remove("evacuationNodeName");
                if let Some(Value::Array(cs)) = st.get_mut("conditions") {
                    cs.retain(|c| c["type"] != "EvictionRequested");
                }
            }
            match &node {
                Some(node) => {
                    let pod_uid = format!("pod-{vmi_name}-{suffix}");
                    fresh["status"]["phase"] = json!("Running");
                    fresh["status"]["nodeName"] = json!(node);
                    fresh["status"]["activePods"] = json!({pod_uid.clone(): node});
                    fresh["metadata"]["labels"]["kubevirt.io/nodeName"] = json!(node);
                    server.add_object(fresh);
                    server.add_object(json!({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": format!("virt-launcher-{vmi_name}-{suffix}"), "namespace": ns, "uid": pod_uid,
                            "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": new_uid},
                            "annotations": {"kubevirt.io/domain": vmi_name},
                            "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                                "name": vmi_name, "uid": new_uid, "controller": true, "blockOwnerDeletion": true}]},
                        "spec": {"nodeName": node, "containers": [{"name": "compute", "resources": {"requests": {"memory": "2400Mi"}}}]},
                        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}));
                }
                None => {
                    fresh["status"]["phase"] = json!("Scheduling");
                    fresh["status"]["activePods"] = json!({});
                    if let Some(st) = fresh["status"].as_object_mut() {
                        st.remove("nodeName");
                    }
                    server.add_object(fresh);
                }
            }
            Self::event(
                server,
                ns,
                "VirtualMachine",
                s(&vm, "/metadata/name"),
                s(&vm, "/metadata/uid"),
                "SuccessfulCreate",
                &format!(
                    "Started the virtual machine by creating the new virtual machine instance {vmi_name}"
                ),
                false,
            );
        }
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

/// What [`drain_cluster_with`] builds beyond the default.
#[derive(Debug, Clone)]
pub struct DrainFixture {
    /// KubeVirt's `status.observedKubeVirtVersion` (decides the `EvictionRequested`
    /// condition, v1.7+, and the evacuation VMIM's `spec.priority`, v1.9+).
    pub version: String,
    /// Adds the VM `db-01` (LiveMigrate, LiveMigratable=False `DisksNotLiveMigratable`, an
    /// RWO PVC `db-01-data`): its eviction is denied forever (FACTS §2.1).
    pub blocker: bool,
    /// Adds `debug-shell`, a pod with no controller (kubectl drain needs `--force`).
    pub bare_pod: bool,
    /// Adds the PDB `frontend-pdb-extra` over the same pods as `frontend-pdb`: evicting a
    /// frontend pod is then a 500 (more than one PDB).
    pub second_pdb: bool,
    /// Adds the VM `mail-01` in post-copy *into* node-1: its VMI runs on node-2 (launcher
    /// `virt-launcher-mail-01-abcde`), the VMIM [`INCOMING_VMIM`] (user-triggered, Running,
    /// mode PostCopy, source node-2, target node-1) has its target pod
    /// [`INCOMING_TARGET_POD`] on node-1. The VMIM carries `sim.vmctl.test/hold: "true"`:
    /// it stays Running until the test removes the annotation, then lands the VMI on node-1.
    pub incoming_post_copy: bool,
    /// Adds the VM `app-01`, running on node-2, with an old Succeeded launcher pod
    /// `virt-launcher-app-01-old01` left on node-1 (the target pod of an earlier migration
    /// that later left): the VM never was on node-1 during the drain.
    pub old_finished_pod: bool,
}

/// The post-copy migration into node-1 of [`DrainFixture::incoming_post_copy`].
pub const INCOMING_VMIM: &str = "mail-01-migrate";
/// Its target pod on node-1 (the sim names target pods `virt-launcher-<vmi>-t<uid[..5]>`).
pub const INCOMING_TARGET_POD: &str = "virt-launcher-mail-01-t8f3c1";

impl Default for DrainFixture {
    fn default() -> Self {
        DrainFixture {
            version: "v1.9.0".into(),
            blocker: false,
            bare_pod: false,
            second_pdb: false,
            incoming_post_copy: false,
            old_finished_pod: false,
        }
    }
}

/// [`drain_cluster_with`] with the defaults: no blocker, no bare pod, one PDB.
pub fn drain_cluster() -> Vec<Value> {
    drain_cluster_with(&DrainFixture::default())
}

fn ready_pod(
    name: &str,
    ns: &str,
    node: &str,
    labels: Value,
    owner: Option<(&str, &str, &str)>,
) -> Value {
    let mut meta =
        json!({"name": name, "namespace": ns, "uid": format!("pod-{name}"), "labels": labels});
    if let Some((api_version, kind, owner_name)) = owner {
        meta["ownerReferences"] = json!([{"apiVersion": api_version, "kind": kind, "name": owner_name,
            "uid": format!("{}-{owner_name}", kind.to_ascii_lowercase()), "controller": true, "blockOwnerDeletion": true}]);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
        "spec": {"nodeName": node, "containers": [{"name": "main", "image": "registry.example/app:1"}]},
        "status": {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True"}]}})
}

/// A cluster for drain tests, what `kubectl drain node-1` would meet (FACTS §2):
/// - KubeVirt `fixture.version`, no cluster-wide eviction strategy (each VMI carries its
///   own, as the v1.1+ mutating webhook copies it); namespaces `prod`, `kubevirt`,
///   `kube-system`;
/// - nodes `node-1` (to drain), `node-2` and `node-3` (targets), each with a virt-handler
///   pod `virt-handler-<n>` (a DaemonSet pod in `kubevirt`);
/// - on node-1, in `prod`, each VMI with its launcher pod `virt-launcher-<vmi>-abcde`
///   (ownerReference to the VMI, `controller: true`, Ready):
///   - `web-01`: VM and VMI, `LiveMigrate`, migratable → evacuated by a migration;
///   - `batch-01`: a bare VMI (no VM), `LiveMigrate`, migratable → evacuated;
///   - `scratch-01`: VM and VMI, eviction strategy `None`, `runStrategy: Always` → its pod
///     is evicted, the VMI fails and the VM restarts it on another node;
///   - `db-01` (only with `blocker`): `LiveMigrate` but not migratable → blocks;
/// - non-VM pods on node-1: `frontend-7d9f8b6c5d-x2x9q` (Deployment: ownerReference
///   ReplicaSet `frontend-7d9f8b6c5d`, labels `app=frontend`; its sibling
///   `frontend-7d9f8b6c5d-k8m4p` runs on node-2), `node-exporter-7xk2p` (DaemonSet, in
///   `kube-system`), `cache-6b8d9c7f4-q9w2e` (ReplicaSet, an `emptyDir` volume),
///   `kube-vip-node-1` (a mirror pod: annotation `kubernetes.io/config.mirror`, owner the
///   Node), and with `bare_pod` `debug-shell` (no owner);
/// - the PDB `frontend-pdb` (`minAvailable: 1`, `app=frontend`, 2 healthy of 1 desired,
///   `disruptionsAllowed: 1`), and with `second_pdb` also `frontend-pdb-extra`.
pub fn drain_cluster_with(fixture: &DrainFixture) -> Vec<Value> {
    let mut objects = vec![json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": {}}, "status": {"observedKubeVirtVersion": fixture.version, "phase": "Deployed"}})];
    for ns in ["prod", "kubevirt", "kube-system"] {
        objects.push(json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}}));
    }
    for node in ["node-1", "node-2", "node-3"] {
        objects.push(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node, "labels": {"kubevirt.io/schedulable": "true", "kubernetes.io/hostname": node}},
            "spec": {}, "status": {"allocatable": {"memory": "64Gi", "cpu": "32", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}]}}));
        objects.push(ready_pod(
            &format!("virt-handler-{}", &node[5..]),
            "kubevirt",
            node,
            json!({"kubevirt.io": "virt-handler"}),
            Some(("apps/v1", "DaemonSet", "virt-handler")),
        ));
    }
    let mut vms = vec![
        ("web-01", Some("web-01"), "LiveMigrate", true),
        ("batch-01", None, "LiveMigrate", true),
        ("scratch-01", Some("scratch-01"), "None", true),
    ];
    if fixture.blocker {
        vms.push(("db-01", Some("db-01"), "LiveMigrate", false));
    }
    for (name, vm, strategy, migratable) in vms {
        let app = name.split('-').next().unwrap_or(name);
        for mut object in vmi(
            name,
            vm,
            json!({"app": app, "kubevirt.io/nodeName": "node-1"}),
            migratable,
        ) {
            match s(&object, "/kind") {
                "VirtualMachineInstance" => {
                    object["spec"]["evictionStrategy"] = json!(strategy);
                    if !migratable {
                        object["spec"]["volumes"] = json!([{"name": "data",
                            "persistentVolumeClaim": {"claimName": format!("{name}-data")}}]);
                        object["status"]["conditions"] = json!([{"type": "LiveMigratable", "status": "False",
                            "reason": "DisksNotLiveMigratable",
                            "message": format!("cannot migrate VMI: PVC {name}-data is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)")}]);
                    }
                }
                "VirtualMachine" => {
                    object["spec"]["template"] = json!({"spec": {"evictionStrategy": strategy}});
                }
                "Pod" => {
                    object["metadata"]["ownerReferences"] = json!([{"apiVersion": "kubevirt.io/v1",
                        "kind": "VirtualMachineInstance", "name": name, "uid": format!("uid-{name}"),
                        "controller": true, "blockOwnerDeletion": true}]);
                    object["status"]["conditions"] = json!([{"type": "PodScheduled", "status": "True"},
                        {"type": "Ready", "status": "True"}]);
                }
                _ => {}
            }
            objects.push(object);
        }
    }
    let frontend = json!({"app": "frontend", "pod-template-hash": "7d9f8b6c5d"});
    for (pod, node) in [
        ("frontend-7d9f8b6c5d-x2x9q", "node-1"),
        ("frontend-7d9f8b6c5d-k8m4p", "node-2"),
    ] {
        objects.push(ready_pod(
            pod,
            "prod",
            node,
            frontend.clone(),
            Some(("apps/v1", "ReplicaSet", "frontend-7d9f8b6c5d")),
        ));
    }
    objects.push(ready_pod(
        "node-exporter-7xk2p",
        "kube-system",
        "node-1",
        json!({"app": "node-exporter"}),
        Some(("apps/v1", "DaemonSet", "node-exporter")),
    ));
    let mut cache = ready_pod(
        "cache-6b8d9c7f4-q9w2e",
        "prod",
        "node-1",
        json!({"app": "cache", "pod-template-hash": "6b8d9c7f4"}),
        Some(("apps/v1", "ReplicaSet", "cache-6b8d9c7f4")),
    );
    cache["spec"]["volumes"] = json!([{"name": "scratch", "emptyDir": {}}]);
    objects.push(cache);
    let mut mirror = ready_pod(
        "kube-vip-node-1",
        "kube-system",
        "node-1",
        json!({"component": "kube-vip"}),
        Some(("v1", "Node", "node-1")),
    );
    mirror["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "5c3b6a0e9f2d4c1b8a7e6d5c4b3a2f10",
        "kubernetes.io/config.source": "file", "kubernetes.io/config.hash": "5c3b6a0e9f2d4c1b8a7e6d5c4b3a2f10"});
    objects.push(mirror);
    if fixture.bare_pod {
        objects.push(ready_pod(
            "debug-shell",
            "prod",
            "node-1",
            json!({"run": "debug-shell"}),
            None,
        ));
    }
    if fixture.incoming_post_copy {
        objects.extend(incoming_post_copy());
    }
    if fixture.old_finished_pod {
        objects.extend(old_finished_pod());
    }
    let pdb = |name: &str, spec: Value| {
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "prod", "generation": 1},
            "spec": spec,
            "status": {"observedGeneration": 1, "disruptionsAllowed": 1, "currentHealthy": 2,
                "desiredHealthy": 1, "expectedPods": 2,
                "conditions": [{"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods",
                    "message": "", "observedGeneration": 1, "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
    };
    objects.push(pdb(
        "frontend-pdb",
        json!({"minAvailable": 1, "selector": {"matchLabels": {"app": "frontend"}}}),
    ));
    if fixture.second_pdb {
        objects.push(pdb(
            "frontend-pdb-extra",
            json!({"maxUnavailable": 1, "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["frontend"]}]}}),
        ));
    }
    objects
}

/// A VM (and VMI with its launcher pod) like [`vmi`]'s, running on `node`, LiveMigrate.
fn vm_on(name: &str, node: &str) -> Vec<Value> {
    let mut out = vmi(
        name,
        Some(name),
        json!({"app": name.split('-').next().unwrap_or(name), "kubevirt.io/nodeName": node}),
        true,
    );
    for object in &mut out {
        match s(object, "/kind") {
            "VirtualMachineInstance" => {
                object["spec"]["evictionStrategy"] = json!("LiveMigrate");
                object["status"]["nodeName"] = json!(node);
                object["status"]["activePods"] = json!({format!("pod-{name}"): node});
            }
            "VirtualMachine" => {
                object["spec"]["template"] = json!({"spec": {"evictionStrategy": "LiveMigrate"}});
            }
            "Pod" => {
                object["spec"]["nodeName"] = json!(node);
                object["metadata"]["ownerReferences"] = json!([{"apiVersion": "kubevirt.io/v1",
                    "kind": "VirtualMachineInstance", "name": name, "uid": format!("uid-{name}"),
                    "controller": true, "blockOwnerDeletion": true}]);
                object["status"]["conditions"] = json!([{"type": "PodScheduled", "status": "True"},
                    {"type": "Ready", "status": "True"}]);
            }
            _ => {}
        }
    }
    out
}

/// [`DrainFixture::incoming_post_copy`]'s objects.
fn incoming_post_copy() -> Vec<Value> {
    let mut out = vm_on("mail-01", "node-2");
    let uid = "8f3c1a9e-mail";
    let started = now();
    for object in &mut out {
        if s(object, "/kind") == "VirtualMachineInstance" {
            object["metadata"]["labels"]["kubevirt.io/migrationTargetNodeName"] = json!("node-1");
            object["status"]["migrationState"] = json!({"migrationUid": uid,
                "sourceNode": "node-2", "targetNode": "node-1", "targetNodeAddress": "10.0.0.1",
                "sourcePod": "virt-launcher-mail-01-abcde", "targetPod": INCOMING_TARGET_POD,
                "startTimestamp": started, "mode": "PostCopy",
                "migrationConfiguration": {"allowPostCopy": true}});
        }
    }
    out.push(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": INCOMING_TARGET_POD, "namespace": "prod", "uid": "pod-mail-01-target",
            "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": "uid-mail-01",
                "kubevirt.io/migrationJobUID": uid},
            "annotations": {"kubevirt.io/migrationJobName": INCOMING_VMIM, "kubevirt.io/domain": "mail-01"},
            "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                "name": "mail-01", "uid": "uid-mail-01", "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"nodeName": "node-1", "containers": [{"name": "compute", "resources": {"requests": {"memory": "2400Mi"}}}]},
        "status": {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True"}]}}));
    out.push(json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
        "metadata": {"name": INCOMING_VMIM, "namespace": "prod", "uid": uid,
            "labels": {"kubevirt.io/vmi-name": "mail-01"},
            "annotations": {"sim.vmctl.test/hold": "true"},
            "finalizers": ["kubevirt.io/migrationJobFinalize"]},
        "spec": {"vmiName": "mail-01"},
        "status": {"phase": "Running",
            "phaseTransitionTimestamps": [{"phase": "Running", "phaseTransitionTimestamp": started}],
            "migrationState": {"sourcePod": "virt-launcher-mail-01-abcde", "targetPod": INCOMING_TARGET_POD}}}));
    out
}

/// [`DrainFixture::old_finished_pod`]'s objects.
fn old_finished_pod() -> Vec<Value> {
    let mut out = vm_on("app-01", "node-2");
    out.push(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "virt-launcher-app-01-old01", "namespace": "prod", "uid": "pod-app-01-old",
            "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": "uid-app-01"},
            "annotations": {"kubevirt.io/domain": "app-01"},
            "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                "name": "app-01", "uid": "uid-app-01", "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"nodeName": "node-1", "containers": [{"name": "compute"}]},
        "status": {"phase": "Succeeded"}}));
    out
}

/// Lets the migration [`INCOMING_VMIM`] end (removes its hold).
pub fn release_incoming(server: &FakeApiServer) {
    if let Some(mut vmim) = server.object(
        Kind::VirtualMachineInstanceMigration,
        Some("prod"),
        INCOMING_VMIM,
    ) {
        if let Some(a) = vmim["metadata"]["annotations"].as_object_mut() {
            a.remove("sim.vmctl.test/hold");
        }
        server.update_object(vmim);
    }
}
