//! `vmctl explain NAME`: which plane failed a migration, why, the evidence, and what to do.
//!
//! gather (`evidence`: find the migration or VMI, read everything about it at once) →
//! decide (`triage::diagnose` into `triage::report`, pure) → render (`render::explain`).

use crate::cli::ExplainArgs;
use crate::context::Context;
use crate::error::{Result, exit};
use crate::evidence::{gather, resolve};
use crate::names::Target;
use crate::render::explain::render_table;
use crate::render::{OutputFormat, structured, write_stdout};
use crate::triage::report::build_report;

/// `explain`'s target: a bare name is a migration.
pub fn parse_target(text: &str) -> Result<Target> {
    crate::names::parse_target(text, crate::names::Takes::MigrationFirst, "explain")
}

pub async fn run(ctx: &Context, args: &ExplainArgs) -> Result<i32> {
    let target = parse_target(&args.target)?;
    let resolved = resolve(ctx, &target).await?;
    if let Some(note) = &resolved.note {
        crate::say!("note: {note}");
    }
    let mut notes = Vec::new();
    let evidence = gather(ctx, resolved, &mut notes).await?;
    for w in crate::model::unknown::warnings(
        &evidence.vmi,
        evidence.migrations.iter().chain(
            evidence
                .migration
                .iter()
                .filter(|m| !evidence.migrations.iter().any(|o| o.name() == m.name())),
        ),
        &evidence.kubevirt,
    ) {
        ctx.warn(w);
    }
    let mut report = build_report(&evidence, args.history, &ctx.source_description(), notes);
    report.warnings = ctx.warnings();
    let text = match ctx.output {
        OutputFormat::Json | OutputFormat::Yaml => structured(ctx.output, &report)?,
        OutputFormat::Table | OutputFormat::Wide => render_table(
            &report,
            ctx.style,
            ctx.output == OutputFormat::Wide,
            ctx.clock.note(),
        ),
    };
    write_stdout(&text)?;
    Ok(if report.diagnosis.outcome.is_finding() {
        exit::FINDING
    } else {
        exit::OK
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse() {
        assert_eq!(parse_target("m1").unwrap(), Target::Migration("m1".into()));
        assert_eq!(
            parse_target("migration/m1").unwrap(),
            Target::Migration("m1".into())
        );
        assert_eq!(
            parse_target("vmim/m1").unwrap(),
            Target::Migration("m1".into())
        );
        assert_eq!(parse_target("vm/a").unwrap(), Target::Vmi("a".into()));
        assert_eq!(parse_target("vmi/a").unwrap(), Target::Vmi("a".into()));
        assert!(parse_target("pod/a").is_err());
        assert!(parse_target("vm/").is_err());
        assert!(parse_target("a/b/c").is_err());
    }
}
