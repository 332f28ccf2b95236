//! `vmctl history`: migrations from the journal (issue 28): what failed, why, how long, per
//! node and per cause, with totals.
//!
//! gather (one journal query: the window, without the records' detail) → decide
//! (`policy::history`, pure) → render (`render::history`). No cluster is contacted, so
//! `commands::run` calls this without a `Context`: the scope comes from `-n`/`-A` or the
//! kubeconfig file (`context::offline_scope`), the clock from `--now` or this machine.

use k8s_openapi::jiff::Timestamp;

use crate::cli::{Cli, HistoryArgs, HistoryOutcome};
use crate::context::{offline_scope, parse_time};
use crate::error::{Error, Result, exit};
use crate::journal::{Access, Journal, JournalSpec};
use crate::model::journal::{HistoryQuery, RecordOutcome};
use crate::names::{Takes, Target, parse_target as parse_named, suggest};
use crate::render::history::{Searched, document, render_table};
use crate::render::{OutputFormat, Style, structured, write_stdout};

/// What `history` was asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistoryTarget {
    Vm(String),
    Node(String),
    Migration(String),
}

impl HistoryTarget {
    fn as_text(&self) -> String {
        match self {
            HistoryTarget::Vm(n) => format!("vm/{n}"),
            HistoryTarget::Node(n) => format!("node/{n}"),
            HistoryTarget::Migration(n) => format!("migration/{n}"),
        }
    }
}

/// `NAME`, `vm/NAME`, `vmi/NAME` (a VM), `node/NAME`, `migration/NAME` (`vmim/NAME`).
pub fn parse_target(text: &str) -> Result<HistoryTarget> {
    let forms = "a VM (NAME, vm/NAME, vmi/NAME), node/NAME or migration/NAME";
    if let Some((kind, name)) = text.split_once('/')
        && matches!(kind, "node" | "nodes" | "no")
    {
        if name.is_empty() || name.contains('/') {
            return Err(Error::usage(format!("{text:?} is not {forms}")));
        }
        return Ok(HistoryTarget::Node(name.to_string()));
    }
    match parse_named(text, Takes::VmFirst, "history") {
        Ok(Target::Vmi(n)) => Ok(HistoryTarget::Vm(n)),
        Ok(Target::Migration(n)) => Ok(HistoryTarget::Migration(n)),
        Err(_) => Err(Error::usage(format!("{text:?}: history takes {forms}"))),
    }
}

/// `--cause`: an id of the catalogue; a typo is a usage error naming the closest ids.
pub fn check_cause(cause: &str) -> Result<String> {
    if crate::triage::Cause::by_id(cause).is_some() {
        return Ok(cause.to_string());
    }
    let close = suggest(cause, crate::triage::CATALOGUE.iter().map(|r| r.cause.id));
    let hint = if close.is_empty() {
        " (vmctl explain --help lists the causes)".to_string()
    } else {
        format!(": did you mean {}?", close.join(", "))
    };
    Err(Error::usage(format!(
        "--cause {cause:?} is not a cause vmctl knows{hint}"
    )))
}

fn outcome(args: &HistoryArgs) -> Option<RecordOutcome> {
    if args.failed {
        return Some(RecordOutcome::Failed);
    }
    args.outcome.map(|o| match o {
        HistoryOutcome::Succeeded => RecordOutcome::Succeeded,
        HistoryOutcome::Failed => RecordOutcome::Failed,
        HistoryOutcome::Aborted => RecordOutcome::Aborted,
        HistoryOutcome::Vanished => RecordOutcome::Vanished,
    })
}

pub async fn run(cli: &Cli, args: &HistoryArgs) -> Result<i32> {
    let global = &cli.global;
    let target = args.target.as_deref().map(parse_target).transpose()?;
    let cause = args.cause.as_deref().map(check_cause).transpose()?;
    let scope = offline_scope(global, "history")?;
    if global.kubeconfig.is_some() || global.context.is_some() {
        // Said, not ignored: they narrowed the journal to a namespace before issue 33.
        crate::say!(
            "warning: history reads the journal only: --kubeconfig and --context narrow nothing there (-n NAMESPACE for one namespace, --cluster NAME for one cluster)"
        );
    }
    let now = match &global.now {
        Some(t) => parse_time(t, "--now")?,
        None => Timestamp::now(),
    };
    let spec = JournalSpec::resolve(global.journal.as_deref())?;
    if spec == JournalSpec::Off {
        return Err(Error::usage(
            "history reads the journal: with --journal off there is nothing to read",
        ));
    }
    let journal = Journal::open(&spec, Access::Read).await?;
    let now_ms = now.as_millisecond();
    // Whole seconds, as the window is printed ("since 2026-12-06T09:05:35Z"): the filter is
    // what the line says.
    let since_ms = now_ms
        .saturating_sub(i64::try_from(args.since.as_millis()).unwrap_or(i64::MAX))
        .div_euclid(1000)
        .saturating_mul(1000);
    let mut query = HistoryQuery {
        namespace: scope.namespace().map(str::to_string),
        since_ms: Some(since_ms),
        cause: cause.clone(),
        outcome: outcome(args),
        cluster: args.cluster.clone(),
        ..HistoryQuery::default()
    };
    match &target {
        Some(HistoryTarget::Vm(n)) => query.vm = Some(n.clone()),
        Some(HistoryTarget::Node(n)) => query.node = Some(n.clone()),
        Some(HistoryTarget::Migration(n)) => query.migration = Some(n.clone()),
        None => {}
    }
    let records = journal.query(&query).await?;
    let limit = (args.limit > 0).then_some(args.limit);
    let report = crate::policy::history::report(records, now_ms, limit);
    let searched = Searched {
        namespace: query.namespace.clone(),
        target: target.as_ref().map(HistoryTarget::as_text),
        since: Timestamp::from_millisecond(since_ms)
            .map(|t| t.to_string())
            .unwrap_or_default(),
        window: crate::text::age(i64::try_from(args.since.as_secs()).unwrap_or(i64::MAX)),
        cause,
        outcome: query.outcome.map(|o| o.as_str().to_string()),
        limit,
        cluster: query.cluster.clone(),
    };
    let described = journal.describe();
    let text = match global.output {
        OutputFormat::Json | OutputFormat::Yaml => structured(
            global.output,
            &document(&report, &searched, &described, now.to_string()),
        )?,
        OutputFormat::Table | OutputFormat::Wide | OutputFormat::Html | OutputFormat::Name => {
            render_table(
                &report,
                &searched,
                &described,
                Style::detect(global.no_color),
                global.output == OutputFormat::Wide,
            )
        }
    };
    write_stdout(&text)?;
    Ok(if report.has_failures() {
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
        let t = |s: &str| parse_target(s).ok();
        assert_eq!(t("db"), Some(HistoryTarget::Vm("db".into())));
        assert_eq!(t("vm/db"), Some(HistoryTarget::Vm("db".into())));
        assert_eq!(t("vmi/db"), Some(HistoryTarget::Vm("db".into())));
        assert_eq!(t("node/n1"), Some(HistoryTarget::Node("n1".into())));
        assert_eq!(t("migration/m"), Some(HistoryTarget::Migration("m".into())));
        for bad in ["node/", "pod/x", "vm/", "a/b/c", "node/a/b"] {
            assert_eq!(t(bad), None, "{bad}");
        }
    }

    #[test]
    fn causes_are_checked_against_the_catalogue() {
        assert_eq!(check_cause("not-converging").unwrap(), "not-converging");
        let e = check_cause("not-convergin").unwrap_err();
        assert_eq!(e.exit_code(), exit::USAGE);
        assert!(
            e.to_string().contains("did you mean not-converging?"),
            "{e}"
        );
    }
}
