//! `vmctl migrate VM` through KubeVirt: pre-flight, start, follow, explain.
//!
//! gather (the VMI, its VM, migrations, nodes, pods, quotas, policies) → decide
//! (`policy::preflight`, the temporary policy) → act (driver) → follow (`migration::follow`:
//! the one follower and loop; virt-handler metrics as `JobSample`s into the shared progress
//! renderer, and into the controller for advice) → on failure, the same diagnosis
//! `vmctl explain` gives. Every line goes through `render` (`render::follow`).

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use crate::cli::MigrateArgs;
use crate::cluster::live::LiveSource;
use crate::cluster::{Kind, Query, Source, get_as, list_as};
use crate::context::{AnySource, ClockSource, Context};
use crate::error::{Error, Result, exit};
use crate::migration::follow::{
    Advisor, Ending, FollowSpec, Followed, Follower, Key, MetricsSource, Mirror, Observer, Stop,
    follow, handed_off, mode_of, read_metrics, sample_from,
};
use crate::migration::kubevirt::{
    KubeVirtDriver, MetricsUnavailable, POLICY_ANNOTATION, Prometheus, VMIM_GENERATE_NAME,
};
use crate::migration::{JobSample, Mode, Outcome, Summary};
use crate::model::vmi::AbortStatus;
use crate::model::vmim::{MigrationPhase, VMI_NAME_LABEL};
use crate::model::{
    KubeVirt, MigrationPolicy, Namespace, Node, ObjectMeta, Pod, ResourceQuota, VirtualMachine,
    VirtualMachineInstance, VirtualMachineInstanceMigration,
};
use crate::policy::migration_policy::{effective_config, matching_policy};
use crate::policy::pods::MIGRATION_JOB_UID_LABEL;
use crate::policy::preflight::{
    Preflight, PreflightInputs, TemporaryPolicy, preflight, temporary_policy,
};
use crate::render::follow::{self as text, report_changes};
use crate::render::progress::ProgressView;
use crate::render::{
    OutputFormat, Style, Tone, fmt, stderr_line, stderr_text, structured, write_stdout,
};
use crate::triage::Outcome as TriageOutcome;

/// `VM`, `vm/VM` or `vmi/VMI` → the VMI's name (a VM's VMI has its name).
pub fn parse_vm_target(text: &str) -> Result<String> {
    match crate::names::parse_target(text, crate::names::Takes::VmOnly, "migrate")? {
        crate::names::Target::Vmi(name) | crate::names::Target::Migration(name) => Ok(name),
    }
}

pub fn require_namespace(ctx: &Context) -> Result<String> {
    ctx.scope.namespace().map(str::to_string).ok_or_else(|| {
        Error::usage("this command acts on one namespace: pick it with -n NAMESPACE, not -A")
    })
}

// ---------------------------------------------------------------- gather

struct Gathered {
    vmi: VirtualMachineInstance,
    vm: Option<VirtualMachine>,
    inputs: PreflightInputs,
}

async fn gather(
    source: &impl Source,
    namespace: &str,
    name: &str,
    added: &BTreeMap<String, String>,
) -> Result<Gathered> {
    let vmi: Option<VirtualMachineInstance> =
        get_as(source, Kind::VirtualMachineInstance, Some(namespace), name).await?;
    let vm: Option<VirtualMachine> =
        get_as(source, Kind::VirtualMachine, Some(namespace), name).await?;
    let Some(vmi) = vmi else {
        let mut err = Error::not_found(format!("VMI {namespace}/{name}"));
        err = match &vm {
            Some(vm) => err.with_hint(format!(
                "the VM exists but is not running (runStrategy {}): start it first",
                vm.run_strategy()
            )),
            None => err.with_hint("check the name and the namespace (-n)"),
        };
        return Err(err);
    };
    let vmim_query =
        Query::namespace(Some(namespace)).with_label(&format!("{VMI_NAME_LABEL}={name}"))?;
    let ns_query = Query::namespace(Some(namespace));
    let all = Query::all();
    let (vmims, nodes, pods, quotas, kubevirts, policies, namespace_obj) = tokio::try_join!(
        list_as::<VirtualMachineInstanceMigration>(
            source,
            Kind::VirtualMachineInstanceMigration,
            &vmim_query
        ),
        list_as::<Node>(source, Kind::Node, &all),
        list_as::<Pod>(source, Kind::Pod, &all),
        list_as::<ResourceQuota>(source, Kind::ResourceQuota, &ns_query),
        list_as::<KubeVirt>(source, Kind::KubeVirt, &all),
        list_as::<MigrationPolicy>(source, Kind::MigrationPolicy, &all),
        get_as::<Namespace>(source, Kind::Namespace, None, namespace),
    )?;
    // Only a VM that owns this VMI takes the migrate subresource.
    let vm = vm.filter(|v| vmi.owner_vm() == Some(v.name()));
    Ok(Gathered {
        inputs: PreflightInputs {
            vmi: vmi.clone(),
            vmims,
            nodes,
            pods,
            quotas,
            namespace: namespace_obj,
            kubevirt: kubevirts.into_iter().next(),
            policies,
            added_node_selector: added.clone(),
        },
        vmi,
        vm,
    })
}

// ---------------------------------------------------------------- decide

/// What vmctl will create, for `--dry-run` and for doing it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationPlan {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub namespace: String,
    pub vmi: String,
    /// `migrate-subresource` (a VM) or `create-vmim` (a bare VMI).
    pub method: &'static str,
    pub preflight: Preflight,
    /// The request or objects, in order.
    pub objects: Vec<Value>,
    /// Why the temporary policy wins, when there is one.
    pub policy_proof: Option<String>,
    pub notes: Vec<String>,
    /// What was said on stderr about the input (unknown values …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

fn vmim_object(
    namespace: &str,
    vmi: &str,
    added: &BTreeMap<String, String>,
    policy: Option<&str>,
) -> VirtualMachineInstanceMigration {
    let mut annotations = BTreeMap::new();
    if let Some(p) = policy {
        annotations.insert(POLICY_ANNOTATION.to_string(), p.to_string());
    }
    let mut labels = BTreeMap::new();
    labels.insert(
        crate::migration::kubevirt::MANAGED_BY_LABEL.to_string(),
        crate::migration::kubevirt::MANAGED_BY_VALUE.to_string(),
    );
    VirtualMachineInstanceMigration {
        metadata: ObjectMeta {
            generate_name: Some(VMIM_GENERATE_NAME.to_string()),
            namespace: Some(namespace.to_string()),
            labels: Some(labels),
            annotations: (!annotations.is_empty()).then_some(annotations),
            ..ObjectMeta::default()
        },
        spec: crate::model::vmim::VmimSpec {
            vmi_name: vmi.to_string(),
            added_node_selector: added.clone(),
            ..Default::default()
        },
        status: Default::default(),
    }
}

fn with_type(kind: Kind, value: Value) -> Value {
    let mut v = json!({"apiVersion": kind.api_version(), "kind": kind.name()});
    if let (Value::Object(target), Value::Object(source)) = (&mut v, value) {
        for (k, val) in source {
            if k != "status" {
                target.insert(k, val);
            }
        }
    }
    v
}

/// The VMIs a temporary policy for this VMI would also select (same labels, in namespaces
/// its namespace selector matches).
async fn others_selected_alike(
    source: &impl Source,
    g: &Gathered,
    namespace: &str,
) -> Result<Vec<VirtualMachineInstance>> {
    let selector = g.vmi.metadata.labels.clone().unwrap_or_default();
    let others: Vec<VirtualMachineInstance> = if selector.is_empty() {
        Vec::new()
    } else {
        let sel = crate::cluster::selector::LabelSelector::from_map(&selector);
        list_as(
            source,
            Kind::VirtualMachineInstance,
            &Query::all().with_labels(sel),
        )
        .await?
    };
    // Only VMIs in namespaces the policy's namespace selector also matches.
    Ok(others
        .into_iter()
        .filter(|o| {
            o.namespace() == namespace
                || !g
                    .inputs
                    .namespace
                    .as_ref()
                    .and_then(|n| n.metadata.labels.as_ref())
                    .is_some_and(|l| l.contains_key(crate::policy::preflight::NAMESPACE_NAME_LABEL))
        })
        .collect())
}

/// The requests or objects of the plan, in order: the temporary policy, then the migrate
/// subresource call (a VM) or the VMIM (a bare VMI).
fn plan_objects(
    g: &Gathered,
    namespace: &str,
    name: &str,
    added: &BTreeMap<String, String>,
    temporary: Option<&TemporaryPolicy>,
    policy_name: Option<&str>,
) -> Vec<Value> {
    let mut objects = Vec::new();
    if let Some(t) = temporary {
        objects.push(with_type(
            Kind::MigrationPolicy,
            serde_json::to_value(&t.policy).unwrap_or(Value::Null),
        ));
    }
    match &g.vm {
        Some(_) => {
            let mut body = json!({"apiVersion": "subresources.kubevirt.io/v1", "kind": "MigrateOptions",
                "request": format!("PUT /apis/subresources.kubevirt.io/v1/namespaces/{namespace}/virtualmachines/{name}/migrate")});
            if !added.is_empty() {
                body["addedNodeSelector"] = json!(added);
            }
            objects.push(body);
            if let Some(p) = policy_name {
                objects.push(json!({"request": "PATCH the VMIM virt-api creates",
                    "metadata": {"annotations": {POLICY_ANNOTATION: p}}}));
            }
        }
        None => objects.push(with_type(
            Kind::VirtualMachineInstanceMigration,
            serde_json::to_value(vmim_object(namespace, name, added, policy_name))
                .unwrap_or(Value::Null),
        )),
    }
    objects
}

// ---------------------------------------------------------------- the recipe

pub async fn run(ctx: &'static Context, args: &MigrateArgs) -> Result<i32> {
    let namespace = require_namespace(ctx)?;
    let name = parse_vm_target(&args.target)?;
    let added = args.node_selector.clone().unwrap_or_default();
    let timeout = args.timeout;
    let live: Option<&LiveSource> = match &ctx.source {
        AnySource::Live(l) => Some(l),
        AnySource::Snapshot(_) if args.dry_run => None,
        AnySource::Snapshot(_) => {
            return Err(Error::usage(
                "migrate changes a cluster: it cannot run on a snapshot (--from); --dry-run can",
            ));
        }
    };

    // ---- gather and decide
    let g = gather(&ctx.source, &namespace, &name, &added).await?;
    for w in crate::model::unknown::warnings([&g.inputs.vmi], &g.inputs.vmims, &g.inputs.kubevirt) {
        ctx.warn(w);
    }
    let pre = preflight(&g.inputs);
    let id = format!("{namespace}/{name}");
    if !pre.ok {
        let mut text = format!("{} not migrated: {}\n", id, pre.explanation);
        if let Some(fix) = &pre.fix {
            text.push_str(&format!("  fix: {fix}\n"));
        }
        text.push_str("  nothing was created.\n");
        if ctx.output.is_structured() {
            // The pre-flight's fields, in the envelope every document has.
            let mut doc = json!({
                "apiVersion": crate::model::VMCTL_API_VERSION,
                "kind": "MigrationRefused",
            });
            if let (Some(map), Ok(serde_json::Value::Object(fields))) =
                (doc.as_object_mut(), serde_json::to_value(&pre))
            {
                map.extend(fields);
            }
            crate::render::with_warnings(&mut doc, ctx.warnings());
            write_stdout(&structured(ctx.output, &doc)?)?;
            stderr_text(&crate::render::fmt::printable_lines(&text));
        } else {
            write_stdout(&text)?;
        }
        return Ok(exit::FINDING);
    }

    let mut notes = Vec::new();
    let current_policy = matching_policy(&g.vmi, g.inputs.namespace.as_ref(), &g.inputs.policies);
    let current = effective_config(
        g.inputs.kubevirt.as_ref(),
        current_policy
            .as_ref()
            .and_then(|m| g.inputs.policies.iter().find(|p| p.name() == m.name)),
    );
    let want_post_copy = args.allow_postcopy && !current.allow_post_copy;
    let want_auto_converge = args.allow_auto_converge && !current.allow_auto_converge;
    if args.allow_postcopy && current.allow_post_copy {
        notes.push(format!(
            "post-copy is already allowed ({}): no temporary policy needed for it",
            current_policy
                .as_ref()
                .map(|p| format!("MigrationPolicy {}", p.name))
                .unwrap_or_else(|| "cluster configuration".into())
        ));
    }
    if args.allow_auto_converge && current.allow_auto_converge {
        notes.push("auto-converge is already allowed: no temporary policy needed for it".into());
    }
    let temporary = if want_post_copy || want_auto_converge {
        let others = others_selected_alike(&ctx.source, &g, &namespace).await?;
        let suffix = short_suffix();
        match temporary_policy(
            &g.vmi,
            g.inputs.namespace.as_ref(),
            &g.inputs.policies,
            &others,
            want_post_copy,
            want_auto_converge,
            &suffix,
        ) {
            Ok(t) => Some(t),
            Err(refusal) => {
                write_stdout(&format!(
                    "{id} not migrated: {}\n  fix: {}\n  nothing was created.\n",
                    refusal.message, refusal.fix
                ))?;
                return Ok(exit::FINDING);
            }
        }
    } else {
        None
    };

    let method = if g.vm.is_some() {
        "migrate-subresource"
    } else {
        "create-vmim"
    };
    let policy_name = temporary.as_ref().map(|t| t.policy.name().to_string());
    let objects = plan_objects(
        &g,
        &namespace,
        &name,
        &added,
        temporary.as_ref(),
        policy_name.as_deref(),
    );
    let plan = MigrationPlan {
        api_version: crate::model::VMCTL_API_VERSION,
        kind: "MigrationPlan",
        namespace: namespace.clone(),
        vmi: name.clone(),
        method,
        preflight: pre.clone(),
        objects,
        policy_proof: temporary.as_ref().map(|t| t.proof.clone()),
        notes: notes.clone(),
        warnings: ctx.warnings(),
    };
    let post_copy_allowed = args.allow_postcopy || current.allow_post_copy;

    if args.dry_run {
        let text = match ctx.output {
            OutputFormat::Json => structured(OutputFormat::Json, &plan)?,
            _ => render_plan(&plan, ctx.style),
        };
        write_stdout(&text)?;
        return Ok(exit::OK);
    }
    let Some(live) = live else {
        return Err(Error::Internal("no live cluster to migrate on".into()));
    };
    let driver = KubeVirtDriver::new(live);

    for n in &notes {
        stderr_line(&text::note(n));
    }
    if post_copy_allowed {
        stderr_line(&text::post_copy_warning(
            ctx.style,
            pre.target.as_deref(),
            pre.source.as_deref(),
        ));
    }

    // ---- act
    let started = Instant::now();
    if let Some(t) = &temporary {
        driver.create_policy(&t.policy).await?;
        let allows: Vec<&str> = [
            want_post_copy.then_some("allowPostCopy"),
            want_auto_converge.then_some("allowAutoConverge"),
        ]
        .into_iter()
        .flatten()
        .collect();
        stderr_line(&text::policy_created(t.policy.name(), &allows, &t.proof));
    }
    let created = start_migration(
        &driver,
        &g,
        &namespace,
        &name,
        &added,
        policy_name.as_deref(),
    )
    .await;
    let vmim = match created {
        Ok(v) => v,
        Err(e) => {
            if let Some(p) = &policy_name {
                cleanup_policy(&driver, p).await;
            }
            return Err(e);
        }
    };
    let vmim_name = vmim.name().to_string();
    stderr_line(&text::migration_created(
        &namespace,
        &vmim_name,
        method == "create-vmim",
        &id,
        pre.source.as_deref(),
        pre.target.as_deref(),
    ));
    let abort_cmd = format!("vmctl abort migration/{vmim_name} -n {namespace}");

    let wait = !args.no_wait;
    if !wait && policy_name.is_none() {
        write_stdout(&format!(
            "{namespace}/{vmim_name}\n  follow: vmctl status --watch -n {namespace}\n  abort:  {abort_cmd}\n"
        ))?;
        return Ok(exit::OK);
    }

    // ---- follow
    let is_tty = std::io::stderr().is_terminal();
    let budget = pre.budget_seconds;
    let guest_memory = g.vmi.guest_memory().map(|q| q.bytes());
    let view = if ctx.output.is_structured() {
        ProgressView::quiet(ctx.style, &name, budget)
    } else {
        ProgressView::new(ctx.style, is_tty, &name, budget)
    };
    let kubevirt_namespace = g
        .inputs
        .kubevirt
        .as_ref()
        .and_then(|k| k.metadata.namespace.clone())
        .unwrap_or_else(|| "kubevirt".to_string());
    let metrics = match &args.prometheus {
        Some(url) => MetricsSource::Prometheus(Prometheus::new(url)?),
        None => MetricsSource::Handler {
            kubevirt_namespace,
            pod: None,
        },
    };
    let mut following = Following {
        driver: &driver,
        namespace: &namespace,
        name: &name,
        vmim_name: vmim_name.clone(),
        f: Followed {
            vmim: Some(vmim),
            progress_timeout: current.progress_timeout,
            ..Followed::default()
        },
        view,
        metrics,
        started,
        policy_alive: policy_name.clone(),
        wait,
        budget,
        bars: is_tty && !ctx.output.is_structured(),
        advisor: Advisor::new(
            &current,
            guest_memory.unwrap_or(0),
            budget,
            post_copy_allowed,
        ),
        degraded: None,
        last_heartbeat_ms: 0,
        target_pod: None,
        last_target_lookup: 0,
    };
    let ending = following.run(timeout.map(|t| started + t)).await;
    let Following {
        f: followed,
        mut view,
        mut policy_alive,
        ..
    } = following;
    let ending = match ending {
        Ok(e) => e,
        Err(e) => {
            view.close();
            if let Some(p) = &policy_alive {
                cleanup_policy(&driver, p).await;
            }
            stderr_line(&text::migration_goes_on(&abort_cmd));
            return Err(e);
        }
    };
    if let Some(p) = policy_alive.take() {
        cleanup_policy(&driver, &p).await;
    }
    let elapsed_ms = started.elapsed().as_millis() as u64;

    match ending {
        Ending::Stopped(Stop::Interrupted) => {
            view.close();
            after_interrupt(
                &driver,
                &followed,
                &namespace,
                &vmim_name,
                method == "create-vmim",
                &abort_cmd,
            )
            .await;
            Ok(exit::INTERRUPTED)
        }
        Ending::Stopped(Stop::DeadlinePassed) => {
            view.close();
            stderr_line(&text::migrate_timed_out(
                elapsed_ms,
                followed.phase(),
                &abort_cmd,
            ));
            Ok(exit::TIMEOUT)
        }
        Ending::Done if !wait => {
            view.close();
            write_stdout(&format!(
                "{namespace}/{vmim_name}\n  handed off (policy {} applied and removed)\n  follow: vmctl status --watch -n {namespace}\n  abort:  {abort_cmd}\n",
                policy_name.as_deref().unwrap_or("-")
            ))?;
            Ok(exit::OK)
        }
        Ending::Done => {
            finish(
                ctx,
                guest_memory,
                &mut view,
                &followed,
                &namespace,
                &name,
                elapsed_ms,
                &plan,
            )
            .await
        }
    }
}

/// What Ctrl-C means for `migrate` (the follower only stops following): a migration that
/// never started streaming is vmctl's to take back; one that started belongs to the cluster.
async fn after_interrupt(
    driver: &KubeVirtDriver<'_>,
    followed: &Followed,
    namespace: &str,
    vmim_name: &str,
    created_vmim: bool,
    abort_cmd: &str,
) {
    let never_started = followed.state().is_none_or(|s| s.start_timestamp.is_none())
        && !matches!(
            followed.phase(),
            MigrationPhase::PreparingTarget
                | MigrationPhase::TargetReady
                | MigrationPhase::Running
                | MigrationPhase::Succeeded
                | MigrationPhase::Failed
        );
    if never_started && created_vmim {
        let gone = driver.delete_vmim(namespace, vmim_name).await;
        stderr_line(&text::interrupted_deleted(vmim_name, gone.is_ok()));
    } else if never_started {
        // virt-api created it for the VM; deleting it is an abort like any other.
        let _ = driver.delete_vmim(namespace, vmim_name).await;
        stderr_line(&text::interrupted_cancelled(vmim_name));
    } else {
        stderr_line(&text::interrupted_detached(
            namespace,
            vmim_name,
            followed.phase(),
            abort_cmd,
        ));
    }
}

fn short_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let alphabet = b"bcdfghjklmnpqrstvwxz2456789";
    let mut n = nanos ^ u128::from(std::process::id());
    let mut s = String::new();
    for _ in 0..5 {
        s.push(alphabet[(n % alphabet.len() as u128) as usize] as char);
        n /= alphabet.len() as u128;
    }
    s
}

async fn cleanup_policy(driver: &KubeVirtDriver<'_>, name: &str) {
    match driver.delete_policy(name).await {
        Ok(_) => stderr_line(&text::policy_deleted(name)),
        Err(e) => stderr_line(&text::policy_not_deleted(name, &e.to_string())),
    }
}

async fn start_migration(
    driver: &KubeVirtDriver<'_>,
    g: &Gathered,
    namespace: &str,
    name: &str,
    added: &BTreeMap<String, String>,
    policy: Option<&str>,
) -> Result<VirtualMachineInstanceMigration> {
    if g.vm.is_none() {
        return driver
            .create_vmim(&vmim_object(namespace, name, added, policy))
            .await;
    }
    let before: Vec<String> = g
        .inputs
        .vmims
        .iter()
        .map(|m| m.name().to_string())
        .collect();
    driver.migrate_vm(namespace, name, added).await?;
    // virt-api answers 202 with no body: find the migration it created.
    let query =
        Query::namespace(Some(namespace)).with_label(&format!("{VMI_NAME_LABEL}={name}"))?;
    for attempt in 0..40 {
        let found: Vec<VirtualMachineInstanceMigration> = driver
            .live()
            .list_decoded(Kind::VirtualMachineInstanceMigration, &query)
            .await?;
        if let Some(m) = found
            .into_iter()
            .filter(|m| !m.is_final() && !before.iter().any(|b| b == m.name()))
            .max_by_key(|m| m.metadata.creation_timestamp.as_ref().map(|t| t.0))
        {
            if let Some(p) = policy {
                let mut annotations = BTreeMap::new();
                annotations.insert(POLICY_ANNOTATION.to_string(), p.to_string());
                driver
                    .annotate_vmim(namespace, m.name(), &annotations)
                    .await?;
            }
            return Ok(m);
        }
        tokio::time::sleep(Duration::from_millis(if attempt < 10 { 100 } else { 500 })).await;
    }
    Err(Error::Timeout {
        message: format!(
            "virt-api accepted the migration of {namespace}/{name} but no migration object appeared within 15s; check with: vmctl status {name} -n {namespace}"
        ),
    })
}

// ---------------------------------------------------------------- follow

/// The follow of one migration vmctl started: the follower's updates, and what `migrate`
/// does with them (phase lines, progress samples, the temporary policy's removal, advice).
struct Following<'a> {
    driver: &'a KubeVirtDriver<'a>,
    namespace: &'a str,
    /// The VMI.
    name: &'a str,
    vmim_name: String,
    f: Followed,
    view: ProgressView,
    metrics: MetricsSource,
    started: Instant,
    /// The temporary policy, until the hand-off.
    policy_alive: Option<String>,
    /// Follow to the end (else: until the hand-off).
    wait: bool,
    budget: Option<u64>,
    /// Progress bars on a terminal (else one heartbeat line per 10 s).
    bars: bool,
    advisor: Advisor,
    degraded: Option<String>,
    last_heartbeat_ms: u64,
    target_pod: Option<Pod>,
    last_target_lookup: u64,
}

impl Following<'_> {
    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Follows until the migration ends (or is handed off, without `wait`), Ctrl-C or the
    /// deadline.
    async fn run(&mut self, deadline: Option<Instant>) -> Result<Ending> {
        let spec = FollowSpec::one(self.namespace, &self.vmim_name, self.name)?
            .with_tick(Duration::from_secs(1))
            .with_deadline(deadline);
        let mut follower = Follower::new(self.driver.live(), spec);
        if let Some(m) = self.f.vmim.clone() {
            follower.mirror.follow_vmim(m);
        }
        follower
            .mirror
            .follow_vmi((self.namespace.to_string(), self.name.to_string()), None);
        follow(&mut follower, self).await
    }

    /// The policy has done its job once KubeVirt recorded it at the hand-off.
    async fn remove_policy_after_hand_off(&mut self, now_ms: u64) {
        if !handed_off(&self.f) {
            return;
        }
        let Some(p) = self.policy_alive.take() else {
            return;
        };
        let applied = self.f.state().and_then(|s| s.migration_policy_name.clone());
        match applied.as_deref() {
            Some(a) if a == p => self.view.event_at(
                now_ms,
                &format!("policy {p} applied (migrationState.migrationPolicyName); removing it"),
            ),
            Some(other) => self.view.event_at(
                now_ms,
                &format!(
                    "warning: KubeVirt applied policy {other}, not {p} (a policy created meanwhile?)"
                ),
            ),
            None => self
                .view
                .event_at(now_ms, &format!("hand-off done; removing policy {p}")),
        }
        let _ = self.driver.delete_policy(&p).await;
    }

    /// Once a second: the target pod while scheduling, a progress sample while running,
    /// a heartbeat line off a terminal.
    async fn on_tick(&mut self) -> Result<()> {
        let now_ms = self.now_ms();
        let namespace = self.namespace;
        // The target pod, for the Scheduling line (unschedulable, …).
        if matches!(
            self.f.phase(),
            MigrationPhase::Pending | MigrationPhase::Scheduling
        ) && (self.target_pod.is_none() || now_ms >= self.last_target_lookup + 2000)
        {
            self.last_target_lookup = now_ms;
            if let Some(uid) = self.f.vmim.as_ref().and_then(|m| m.uid()) {
                let q = Query::namespace(Some(namespace))
                    .with_label(&format!("{MIGRATION_JOB_UID_LABEL}={uid}"))?;
                if let Ok(pods) = self.driver.live().list_decoded::<Pod>(Kind::Pod, &q).await {
                    self.target_pod = pods.into_iter().next();
                }
            }
        }
        if self.f.phase() == MigrationPhase::Running && self.degraded.is_none() {
            self.sample(now_ms).await;
        }
        // Off a terminal without bars, one line per interval keeps the log alive.
        let f = &self.f;
        if !self.bars
            && (self.degraded.is_some() || f.phase() != MigrationPhase::Running)
            && now_ms >= self.last_heartbeat_ms + 10_000
        {
            self.last_heartbeat_ms = now_ms;
            let state = f.state();
            let streaming_ms = state
                .and_then(|s| s.start_timestamp.as_ref())
                .map(|_| f.started_ms.map_or(now_ms, |s| now_ms.saturating_sub(s)));
            stderr_line(&text::heartbeat(
                now_ms,
                f.phase(),
                state.and_then(|s| s.mode.as_ref()),
                streaming_ms,
                self.budget,
            ));
        }
        Ok(())
    }

    /// Reads the metrics into a sample: drawn, checked against KubeVirt's progress timeout,
    /// and judged by the controller for advice.
    async fn sample(&mut self, now_ms: u64) {
        let mode = mode_of(self.f.state().and_then(|s| s.mode.as_ref()));
        let (namespace, name) = (self.namespace, self.name);
        match read_metrics(self.driver, &mut self.metrics, &self.f, namespace, name).await {
            Ok(m) if !m.is_empty() => {
                let sample = sample_from(&m, now_ms, mode);
                self.view.sample(&sample);
                // Post-copy and a paused guest are never aborted for lack of progress.
                if mode == Mode::PreCopy {
                    let f = &mut self.f;
                    let timeout = f
                        .state()
                        .and_then(|s| s.migration_configuration.as_ref())
                        .and_then(|c| c.progress_timeout)
                        .unwrap_or(f.progress_timeout);
                    if let Some(stall) = f.progress.observe(now_ms, sample.remaining(), timeout) {
                        self.view.event_at(now_ms, &stall.text());
                    }
                }
                // The controller's judgement, timed from the start of streaming.
                let streaming = JobSample {
                    elapsed_ms: now_ms.saturating_sub(self.f.started_ms.unwrap_or(now_ms)),
                    ..sample
                };
                if let Some(advice) = self.advisor.observe(&streaming) {
                    self.view.event_at(now_ms, &text::advice(&advice));
                }
            }
            Ok(_) => {}
            Err(MetricsUnavailable(why)) => {
                self.view.event_at(
                    now_ms,
                    &format!("no progress bars: {why}; following the phases only"),
                );
                self.degraded = Some(why);
            }
        }
    }
}

impl Observer for Following<'_> {
    async fn settle(&mut self, mirror: &Mirror) -> Result<bool> {
        let key: Key = (self.namespace.to_string(), self.vmim_name.clone());
        let vmi_key: Key = (self.namespace.to_string(), self.name.to_string());
        if let Some(m) = mirror.vmim_last(&key) {
            self.f.vmim = Some(m.clone());
        }
        self.f.vmim_deleted = mirror.vmim_gone(&key);
        self.f.vmi = mirror.vmi_last(&vmi_key).cloned();

        let now_ms = self.now_ms();
        report_changes(
            &mut self.f,
            &mut self.view,
            now_ms,
            self.target_pod.as_ref(),
            self.budget,
        );
        self.remove_policy_after_hand_off(now_ms).await;
        let f = &mut self.f;
        if f.vmim_deleted || f.phase().is_final() {
            // The VMIM's watch can report the end before the VMI's: read the VMI once more.
            if let Ok(Some(fresh)) = crate::cluster::get_as::<VirtualMachineInstance>(
                self.driver.live(),
                Kind::VirtualMachineInstance,
                Some(self.namespace),
                self.name,
            )
            .await
            {
                f.vmi = Some(fresh);
                report_changes(
                    f,
                    &mut self.view,
                    now_ms,
                    self.target_pod.as_ref(),
                    self.budget,
                );
            }
            return Ok(true);
        }
        Ok(!self.wait && handed_off(f))
    }

    async fn tick(&mut self) -> Result<()> {
        self.on_tick().await
    }
}

/// The end: summary, and on failure the diagnosis `vmctl explain` gives.
#[allow(clippy::too_many_arguments)]
async fn finish(
    ctx: &Context,
    guest_memory: Option<u64>,
    view: &mut ProgressView,
    f: &Followed,
    namespace: &str,
    name: &str,
    elapsed_ms: u64,
    plan: &MigrationPlan,
) -> Result<i32> {
    let state = f.state().cloned();
    let aborted = state
        .as_ref()
        .is_some_and(|s| s.abort_requested && s.abort_status == Some(AbortStatus::Succeeded));
    let observed = match f.phase() {
        MigrationPhase::Succeeded => Outcome::Succeeded,
        _ if aborted => Outcome::Aborted,
        _ if f.vmim_deleted => Outcome::Aborted,
        _ => Outcome::Failed,
    };
    // Anything but a success is explained exactly as `vmctl explain` explains it, and the
    // verdict is the diagnosis's, so the two never disagree.
    let diagnosis = if observed == Outcome::Succeeded {
        None
    } else {
        diagnose(ctx, f.vmim.as_ref(), name).await
    };
    let outcome = match diagnosis.as_ref().map(|d| d.diagnosis.outcome) {
        Some(TriageOutcome::Aborted) => Outcome::Aborted,
        Some(TriageOutcome::Failed) => Outcome::Failed,
        Some(TriageOutcome::Succeeded) => Outcome::Succeeded,
        _ => observed,
    };
    let vmim_name = f
        .vmim
        .as_ref()
        .map(|m| m.name().to_string())
        .unwrap_or_default();
    let message = match outcome {
        Outcome::Succeeded => format!(
            "{namespace}/{name} runs on {} now ({} → {})",
            state
                .as_ref()
                .and_then(|s| s.target_node.clone())
                .unwrap_or_else(|| "the target".into()),
            state
                .as_ref()
                .and_then(|s| s.source_node.clone())
                .unwrap_or_default(),
            state
                .as_ref()
                .and_then(|s| s.target_node.clone())
                .unwrap_or_default()
        ),
        Outcome::Aborted if f.vmim_deleted && !aborted => {
            format!("the migration {vmim_name} was deleted (aborted) while vmctl followed it")
        }
        _ => match &diagnosis {
            Some(d) => d.diagnosis.summary.clone(),
            None => state
                .as_ref()
                .and_then(|s| s.failure_reason.clone())
                .map(|r| r.trim_end().to_string())
                .unwrap_or_else(|| "the migration failed".into()),
        },
    };
    let last = view.last_sample().cloned();
    let summary = Summary {
        outcome: Some(outcome),
        cause: diagnosis.as_ref().map(|d| d.diagnosis.cause.to_string()),
        message,
        total_ms: elapsed_ms,
        downtime_ms: None,
        data_processed: last.as_ref().map_or(0, |s| s.data_processed),
        // The guest's memory as the VMI declares it: the metrics' total counts every pass.
        memory_total: guest_memory.unwrap_or(0),
        iterations: None,
        final_mode: mode_of(state.as_ref().and_then(|s| s.mode.as_ref())),
        postcopy_requests: None,
        events: view.events().to_vec(),
    };
    if ctx.output.is_structured() {
        view.close();
        let mut report = json!({
            "apiVersion": crate::model::VMCTL_API_VERSION,
            "kind": "MigrationResult",
            "namespace": namespace,
            "vmi": name,
            "migration": vmim_name,
            "method": plan.method,
            "outcome": outcome.as_str(),
            "summary": summary,
            "sourceNode": state.as_ref().and_then(|s| s.source_node.clone()),
            "targetNode": state.as_ref().and_then(|s| s.target_node.clone()),
            "sourcePod": state.as_ref().and_then(|s| s.source_pod.clone()),
            "targetPod": state.as_ref().and_then(|s| s.target_pod.clone()),
            "migrationPolicy": state.as_ref().and_then(|s| s.migration_policy_name.clone()),
            "phases": f.phases.iter().filter(|(k, _)| !k.ends_with('|')).map(|(k, at)| json!({
                "phase": k.split('|').next().unwrap_or(""), "atMs": at})).collect::<Vec<_>>(),
            "diagnosis": diagnosis.as_ref().map(|d| &d.diagnosis),
        });
        crate::render::with_warnings(&mut report, ctx.warnings());
        write_stdout(&structured(ctx.output, &report)?)?;
    } else {
        view.finish(&summary);
        if let Some(report) = &diagnosis {
            write_stdout("\nWhy (vmctl explain):\n")?;
            write_stdout(&crate::render::explain::render_table(
                report,
                ctx.style,
                ctx.output == OutputFormat::Wide,
                "",
            ))?;
        }
    }
    Ok(match outcome {
        Outcome::Succeeded => exit::OK,
        _ => exit::FINDING,
    })
}

/// The diagnosis `vmctl explain` gives, from the evidence read the same way (the same
/// code, with its tolerance of what a namespaced user may not read); None when even the
/// VMI's namespace cannot be read.
async fn diagnose(
    ctx: &Context,
    last_seen: Option<&VirtualMachineInstanceMigration>,
    name: &str,
) -> Option<crate::triage::report::ExplainReport> {
    let last_seen = last_seen?;
    let mut notes = Vec::new();
    let mut evidence =
        match crate::evidence::evidence_for_migration(ctx, last_seen, name, &mut notes).await {
            Ok(e) => e,
            Err(e) => {
                stderr_line(&text::no_evidence(&e.to_string()));
                return None;
            }
        };
    // The migration ran for a while: measure from now, not from when vmctl started.
    if ctx.clock == ClockSource::System {
        evidence.now = k8s_openapi::jiff::Timestamp::now();
    }
    Some(crate::triage::report::build_report(
        &evidence,
        false,
        &ctx.source_description(),
        notes,
    ))
}

fn render_plan(plan: &MigrationPlan, style: Style) -> String {
    let mut out = format!(
        "{} {}/{}: pre-flight passed: {}\n",
        style.paint("dry run:", Tone::Strong),
        plan.namespace,
        plan.vmi,
        plan.preflight.explanation
    );
    if let Some(b) = plan.preflight.budget_seconds.filter(|b| *b > 0) {
        out.push_str(&format!("completion budget: {}\n", fmt::duration(b as i64)));
    }
    for n in &plan.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    if let Some(p) = &plan.policy_proof {
        out.push_str(&format!("temporary MigrationPolicy wins because {p}\n"));
    }
    out.push_str(&format!(
        "would {} (nothing was changed):\n",
        match plan.method {
            "migrate-subresource" => "call the migrate subresource (as virtctl migrate does)",
            _ => "create",
        }
    ));
    for o in &plan.objects {
        out.push_str("---\n");
        out.push_str(&serde_yaml::to_string(o).unwrap_or_default());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_selectors_and_targets_parse() {
        assert_eq!(parse_vm_target("vm/a").unwrap(), "a");
        assert_eq!(parse_vm_target("a").unwrap(), "a");
        assert!(parse_vm_target("pod/a").is_err());
    }
}
