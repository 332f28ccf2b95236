//! `vmctl migrate VM` through KubeVirt, the steps its recipe (`commands::migrate_kubevirt`)
//! names: gather (the VMI, its VM, migrations, nodes, pods, quotas, policies), decide
//! (`policy::preflight`, the temporary policy, the dirty-rate prediction, the plan), render
//! a refusal or a dry run, and act (create the policy, start the migration). Following it
//! to its end is `operate::migrate`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::migrate::{MigrationPlan, Started, cleanup_policy};
use crate::cli::MigrateArgs;
use crate::cluster::{Kind, Query, Source, get_as, list_as};
use crate::context::{AnySource, Context};
use crate::error::{Error, Result, exit};
use crate::migration::kubevirt::{KubeVirtDriver, POLICY_ANNOTATION, VMIM_GENERATE_NAME};
use crate::model::vmim::VMI_NAME_LABEL;
use crate::model::{
    KubeVirt, MigrationPolicy, Namespace, Node, ObjectMeta, Pod, ResourceQuota, VirtualMachine,
    VirtualMachineInstance, VirtualMachineInstanceMigration,
};
use crate::policy::migration_policy::{effective_config, matching_policy};
use crate::policy::preflight::{Preflight, PreflightInputs, TemporaryPolicy, temporary_policy};
use crate::render::follow::{self as text};
use crate::render::{
    OutputFormat, Style, Tone, stderr_line, stderr_text, structured, write_stdout,
};
use crate::text as fmt;

// ---------------------------------------------------------------- gather

pub(crate) struct Gathered {
    /// Where the migration is asked for (`-n`), and the VMI's name.
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) vmi: VirtualMachineInstance,
    pub(crate) vm: Option<VirtualMachine>,
    pub(crate) inputs: PreflightInputs,
}

pub(crate) async fn gather(
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
        namespace: namespace.to_string(),
        name: name.to_string(),
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
            now: None,
        },
        vmi,
        vm,
    })
}

// ---------------------------------------------------------------- decide

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
    // The labels the policy selects: the VMI's, less the one KubeVirt sets at the hand-off
    // (`preflight::temporary_policy`).
    let mut selector = g.vmi.metadata.labels.clone().unwrap_or_default();
    selector.remove(crate::policy::preflight::MIGRATION_TARGET_NODE_LABEL);
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

/// The pre-flight said no: say why and what would fix it; nothing was created.
pub(crate) fn refused(
    ctx: &Context,
    id: &str,
    pre: &crate::policy::preflight::Preflight,
) -> Result<i32> {
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
            (doc.as_object_mut(), serde_json::to_value(pre))
        {
            map.extend(fields);
        }
        crate::render::with_warnings(&mut doc, ctx.warnings());
        crate::render::write_document(&structured(ctx.output, &doc)?)?;
        stderr_text(&crate::text::printable_lines(&text));
    } else {
        write_stdout(&text)?;
    }
    Ok(exit::FINDING)
}

/// The migration configuration in force, and the temporary policy `--allow-postcopy` /
/// `--allow-auto-converge` need when it does not allow them already.
pub(crate) struct Policies {
    pub(crate) notes: Vec<String>,
    pub(crate) current: crate::model::kubevirt::EffectiveMigrationConfig,
    pub(crate) temporary: Option<TemporaryPolicy>,
    pub(crate) want_post_copy: bool,
    pub(crate) want_auto_converge: bool,
}

/// `None`: no policy vmctl may create would win (said on stdout; nothing was created).
pub(crate) async fn policies(
    ctx: &Context,
    args: &MigrateArgs,
    g: &Gathered,
    namespace: &str,
    id: &str,
) -> Result<Option<Policies>> {
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
        let others = others_selected_alike(&ctx.source, g, namespace).await?;
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
                // The refusal names cluster objects (policies, nodes): escaped.
                write_stdout(&crate::text::printable_lines(&format!(
                    "{id} not migrated: {}\n  fix: {}\n  nothing was created.\n",
                    refusal.message, refusal.fix
                )))?;
                return Ok(None);
            }
        }
    } else {
        None
    };

    Ok(Some(Policies {
        notes,
        current,
        temporary,
        want_post_copy,
        want_auto_converge,
    }))
}

/// The dirty-rate prediction before the start, in words and as data.
#[derive(Default)]
pub(crate) struct PreStartAdvice {
    prediction: Option<crate::migration::predict::Prediction>,
    convergence: Option<crate::policy::drain::convergence::Convergence>,
    lines: Vec<String>,
}

/// Reads the VMI's guest dirty rate (one virt-handler page through the pod proxy, its pod
/// taken from the pods already listed, or one `--prometheus` query) and predicts the
/// migration under the configuration it will run with (the temporary policy's, when vmctl
/// makes one). Advice only: what cannot be read is one line, and nothing is refused. Not on a
/// snapshot without `--prometheus` (nothing to read).
pub(crate) async fn predict_before_start(
    ctx: &Context,
    args: &MigrateArgs,
    g: &Gathered,
    temporary: Option<&TemporaryPolicy>,
) -> PreStartAdvice {
    use crate::migration::dirty_rate::{self, Handler, MetricsFrom};
    use crate::migration::kubevirt_metrics::GUEST_DIRTY_RATE;
    use crate::policy::drain::convergence::{self, Setting};

    let live = match &ctx.source {
        AnySource::Live(l) => Some(l),
        AnySource::Snapshot(_) => None,
    };
    let from = match (&args.prometheus, live) {
        (Some(url), _) => MetricsFrom::Prometheus(url.clone()),
        (None, Some(_)) => MetricsFrom::Handler,
        (None, None) => return PreStartAdvice::default(),
    };
    let said = |why: String| PreStartAdvice {
        lines: vec![format!("none ({why})")],
        ..PreStartAdvice::default()
    };
    let vmi = &g.vmi;
    let Some(memory) = vmi.guest_memory().map(|q| q.bytes()) else {
        return said("the VMI's memory size is unknown".into());
    };
    let kubevirt = g.inputs.kubevirt.as_ref();
    let kubevirt_namespace = dirty_rate::kubevirt_namespace(kubevirt);
    let node = vmi.status.node_name.clone().unwrap_or_default();
    let pods = dirty_rate::handler_pods(
        &g.inputs.pods,
        &kubevirt_namespace,
        std::slice::from_ref(&node),
    );
    let handler = match (&from, pods.get(&node)) {
        (MetricsFrom::Handler, None) => {
            return said(format!(
                "no running virt-handler pod on {node} to read {GUEST_DIRTY_RATE} from"
            ));
        }
        (_, Some(pod)) => Handler::Pod(pod),
        (_, None) => Handler::Node(&node),
    };
    let reading = match dirty_rate::for_vmi(
        live,
        &from,
        kubevirt,
        handler,
        vmi.namespace(),
        vmi.name(),
    )
    .await
    {
        Ok(r) => r,
        Err(crate::migration::kubevirt::MetricsUnavailable(why)) => return said(why),
    };
    if !reading.metric_present {
        return said(format!(
            "{} has no {GUEST_DIRTY_RATE} (KubeVirt v1.6+)",
            reading.from
        ));
    }
    let policy = match temporary {
        Some(t) => Some(&t.policy),
        None => matching_policy(vmi, g.inputs.namespace.as_ref(), &g.inputs.policies)
            .and_then(|m| g.inputs.policies.iter().find(|p| p.name() == m.name)),
    };
    let config = effective_config(kubevirt, policy);
    let (prediction, convergence) = convergence::judge(&Setting {
        memory,
        dirty: reading.guest_bps,
        config: &config,
        policy: policy.map(MigrationPolicy::name),
        policy_sets_bandwidth: policy.is_some_and(|p| p.spec.bandwidth_per_migration.is_some()),
        assumed_bandwidth: None,
    });
    let mut lines = vec![format!(
        "{} (dirty rate from {}; a hint: it may read low)",
        convergence.finding, reading.from
    )];
    if convergence.completes == Some(false)
        && convergence
            .alternatives
            .iter()
            .any(|a| a.starts_with("allowPostCopy") || a.starts_with("allowAutoConverge"))
    {
        lines.push(
            "vmctl migrate --allow-postcopy / --allow-auto-converge set these for this migration alone (a temporary MigrationPolicy); this migration goes ahead as asked".into(),
        );
    }
    PreStartAdvice {
        prediction: Some(prediction),
        convergence: Some(convergence),
        lines,
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

/// The pre-flight's words without its estimate, and the one predicted time, labelled: the
/// target pod's start plus the memory transfer (the dirty-rate prediction's when there is
/// one, else memory over bandwidth). Never two bare times (issue 33).
fn preflight_and_predicted(plan: &MigrationPlan) -> (String, Option<String>) {
    use crate::policy::drain::SETUP_SECONDS;
    let pre = &plan.preflight;
    let Some(estimate) = pre.plan.as_ref().and_then(|p| p.estimate_seconds) else {
        return (pre.explanation.clone(), None);
    };
    let words = pre.explanation.replacen(
        &format!(", about {}", fmt::duration(estimate as i64)),
        "",
        1,
    );
    let transfer = match &plan.prediction {
        // Predicted not to complete: no time is predicted (the prediction says so).
        Some(p) if p.completes == Some(false) => return (words, None),
        Some(p) if p.predicted_seconds.is_some() => (
            p.predicted_seconds.unwrap_or(0.0).ceil() as u64,
            "the prediction from the guest's dirty rate above",
        ),
        _ => (
            estimate.saturating_sub(SETUP_SECONDS),
            "the guest's memory over the bandwidth",
        ),
    };
    let total = SETUP_SECONDS + transfer.0;
    (
        words,
        Some(format!(
            "predicted: about {} in all ({} to create and start the target pod, then {} to move the memory: {})",
            fmt::duration(total as i64),
            fmt::duration(SETUP_SECONDS as i64),
            fmt::duration(transfer.0 as i64),
            transfer.1
        )),
    )
}

fn render_plan(plan: &MigrationPlan, style: Style) -> String {
    let (words, predicted) = preflight_and_predicted(plan);
    let mut out = format!(
        "{} {}/{}: pre-flight passed: {}\n",
        style.paint("dry run:", Tone::Strong),
        plan.namespace,
        plan.vmi,
        words
    );
    for l in &plan.prediction_lines {
        out.push_str(&text::prediction(l));
        out.push('\n');
    }
    if let Some(p) = predicted {
        out.push_str(&p);
        out.push('\n');
    }
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
        out.push_str(&crate::render::to_yaml(o).unwrap_or_default());
    }
    out
}

impl Gathered {
    /// KubeVirt's namespace (virt-handler's pods are there), `kubevirt` when unknown.
    pub(crate) fn kubevirt_namespace(&self) -> String {
        self.inputs
            .kubevirt
            .as_ref()
            .and_then(|k| k.metadata.namespace.clone())
            .unwrap_or_else(|| "kubevirt".to_string())
    }
}

/// The plan: what vmctl will create (or call), with the pre-flight, the temporary policy's
/// proof, the notes and the prediction.
pub(crate) fn migration_plan(
    ctx: &Context,
    g: &Gathered,
    pre: &Preflight,
    policies: &Policies,
    advice: PreStartAdvice,
    added: &BTreeMap<String, String>,
) -> MigrationPlan {
    let (namespace, name) = (g.namespace.as_str(), g.name.as_str());
    let method = if g.vm.is_some() {
        "migrate-subresource"
    } else {
        "create-vmim"
    };
    let temporary = policies.temporary.as_ref();
    let policy_name = temporary.map(|t| t.policy.name().to_string());
    MigrationPlan {
        api_version: crate::model::VMCTL_API_VERSION,
        kind: "MigrationPlan",
        namespace: namespace.to_string(),
        vmi: name.to_string(),
        method,
        preflight: pre.clone(),
        objects: plan_objects(g, namespace, name, added, temporary, policy_name.as_deref()),
        policy_proof: temporary.map(|t| t.proof.clone()),
        notes: policies.notes.clone(),
        prediction: advice.prediction,
        convergence: advice.convergence,
        prediction_lines: advice.lines,
        warnings: ctx.warnings(),
    }
}

/// `--dry-run`: the plan, as JSON or as text; nothing is changed.
pub(crate) fn dry_run(ctx: &Context, plan: &MigrationPlan) -> Result<i32> {
    let text = match ctx.output {
        OutputFormat::Json => structured(OutputFormat::Json, plan)?,
        _ => render_plan(plan, ctx.style),
    };
    write_stdout(&text)?;
    Ok(exit::OK)
}

/// Starts the migration: the prediction and the notes first (advice before anything is
/// created), then the temporary policy, then the migration (removing the policy again when
/// the start fails). `None`: started with `--no-wait` and nothing to follow (said on stdout).
pub(crate) async fn start(
    ctx: &Context,
    args: &MigrateArgs,
    driver: &KubeVirtDriver<'_>,
    g: &Gathered,
    plan: &MigrationPlan,
    policies: &Policies,
) -> Result<Option<Started>> {
    let (namespace, name) = (plan.namespace.as_str(), plan.vmi.as_str());
    let pre = &plan.preflight;
    // A prediction that could not be made names a metric and where it was looked for:
    // detail for -v (the dry run and -o json carry it always).
    if plan.prediction.is_some() || args.verbose {
        for l in &plan.prediction_lines {
            stderr_line(&text::prediction(l));
        }
    }
    for n in &plan.notes {
        stderr_line(&text::note(n));
    }
    if args.allow_postcopy || policies.current.allow_post_copy {
        stderr_line(&text::post_copy_warning(
            ctx.style,
            pre.target.as_deref(),
            pre.source.as_deref(),
        ));
    }

    let started = Instant::now();
    let policy_name = policies
        .temporary
        .as_ref()
        .map(|t| t.policy.name().to_string());
    if let Some(t) = &policies.temporary {
        driver.create_policy(&t.policy).await?;
        let allows: Vec<&str> = [
            policies.want_post_copy.then_some("allowPostCopy"),
            policies.want_auto_converge.then_some("allowAutoConverge"),
        ]
        .into_iter()
        .flatten()
        .collect();
        stderr_line(&text::policy_created(t.policy.name(), &allows, &t.proof));
    }
    let added = args.node_selector.clone().unwrap_or_default();
    let created = start_migration(driver, g, namespace, name, &added, policy_name.as_deref()).await;
    let vmim = match created {
        Ok(v) => v,
        Err(e) => {
            if let Some(p) = &policy_name {
                cleanup_policy(driver, p).await;
            }
            return Err(e);
        }
    };
    let vmim_name = vmim.name().to_string();
    let created_vmim = plan.method == "create-vmim";
    stderr_line(&text::migration_created(
        namespace,
        &vmim_name,
        created_vmim,
        &format!("{namespace}/{name}"),
        pre.source.as_deref(),
        pre.target.as_deref(),
    ));
    let abort_cmd = format!("vmctl abort migration/{vmim_name} -n {namespace}");
    if args.no_wait && policy_name.is_none() {
        write_stdout(&crate::text::printable_lines(&format!(
            "{namespace}/{vmim_name}\n  follow: vmctl status --watch -n {namespace}\n  abort:  {abort_cmd}\n"
        )))?;
        return Ok(None);
    }
    Ok(Some(Started {
        vmim,
        at: started,
        policy: policy_name,
        created_vmim,
        abort_cmd,
    }))
}
