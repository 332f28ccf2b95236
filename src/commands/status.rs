//! `vmctl status [VM...]`: one screen that answers "what is going on with my VMs".

use crate::cli::StatusArgs;
use crate::context::Context;
use crate::error::{Result, exit};
use crate::render::{OutputFormat, write_stdout, write_structured};

pub use crate::operate::status::{gather, slim_pod, vmi_selector};
pub use crate::policy::status::{
    MigrationRow, StatusInputs, StatusReport, Warning, build_report, build_report_with,
    filter_names, leftover_warning,
};
pub use crate::render::status::{phase_words, render_table, route};

pub async fn run(ctx: &Context, args: &StatusArgs) -> Result<i32> {
    let (mut inputs, skipped, policies, drain_facts) = gather(ctx, args).await?;
    let leftovers = crate::policy::preflight::leftover_temporary_policies(
        &policies,
        &inputs.vmims,
        ctx.now,
        ctx.scope.namespace(),
    );
    filter_names(&mut inputs, &args.names)?;
    let mut report = build_report_with(
        &inputs,
        drain_facts.as_ref(),
        ctx.now,
        &ctx.source_description(),
    );
    report
        .warnings
        .extend(leftovers.iter().map(leftover_warning));
    for s in &skipped {
        ctx.warn(format!("skipped, it does not decode: {s}"));
    }
    report.skipped = skipped;
    report.namespace = ctx.scope.namespace().map(str::to_string);
    // What was said about the input on stderr, for the document too (not the table's
    // Attention list: stderr already has it).
    let input_warnings = ctx.warnings();
    // The objects are no longer needed: free them before rendering (peak memory, issue 9).
    drop(inputs);
    let text = match ctx.output {
        OutputFormat::Html => return Err(OutputFormat::html_refused()),
        OutputFormat::Name => crate::render::status::render_names(&report),
        OutputFormat::Json | OutputFormat::Yaml => {
            report
                .warnings
                .extend(input_warnings.into_iter().map(|message| Warning {
                    vmi: String::new(),
                    kind: "input".into(),
                    message,
                }));
            write_structured(ctx.output, &report)?;
            return Ok(exit::OK);
        }
        OutputFormat::Table | OutputFormat::Wide => render_table(
            &report,
            ctx.style,
            ctx.output == OutputFormat::Wide,
            ctx.clock.note(),
        ),
    };
    write_stdout(&text)?;
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Pod;
    use crate::policy::status::{StatusInputs, build_report};
    use k8s_openapi::jiff::Timestamp;
    use serde_json::Value;

    /// The report on slimmed pods is the report on whole pods (if `build_report` starts
    /// reading another pod field, `slim_pod` must keep it).
    #[test]
    fn slim_pods_make_the_same_report() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cluster");
        let found = crate::cluster::files::read_path(&dir).unwrap();
        let of = |kind: &str| -> Vec<Value> {
            found
                .objects
                .iter()
                .map(|o| o.value.clone())
                .filter(|v| v["kind"] == kind)
                .collect()
        };
        let pods: Vec<Pod> = of("Pod")
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap())
            .collect();
        assert!(
            pods.iter()
                .any(|p| p.spec.as_ref().is_some_and(|s| !s.containers.is_empty()))
        );
        let mut inputs = StatusInputs {
            vmis: of("VirtualMachineInstance")
                .into_iter()
                .map(|v| serde_json::from_value(v).unwrap())
                .collect(),
            vmims: of("VirtualMachineInstanceMigration")
                .into_iter()
                .map(|v| serde_json::from_value(v).unwrap())
                .collect(),
            pods,
            kubevirt: of("KubeVirt")
                .into_iter()
                .map(|v| serde_json::from_value(v).unwrap())
                .next(),
            loops: Default::default(),
            nodes: Vec::new(),
        };
        let now: Timestamp = "2026-11-29T03:00:00Z".parse().unwrap();
        let whole = serde_json::to_value(build_report(&inputs, now, "test")).unwrap();
        assert!(!whole["migrations"].as_array().unwrap().is_empty());
        inputs.pods.iter_mut().for_each(slim_pod);
        let slim = serde_json::to_value(build_report(&inputs, now, "test")).unwrap();
        assert_eq!(whole, slim);
    }
}
