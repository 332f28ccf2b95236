//! `vmctl migrate DOMAIN --connect SRC_URI --to DST_URI`: a libvirt live migration, driven
//! and watched by vmctl.
//!
//! parse (the flags into a [`Request`] and a `migration::plan::Plan`) → a dry run (gather:
//! the guest's memory and dirty rate; decide: the prediction; render) or the migration
//! (gather: the libvirt driver; decide: the controller, in the one loop; render: the progress
//! view and the summary). The steps are in `operate::migrate_libvirt`.

use crate::cli::{GlobalArgs, MigrateArgs};
use crate::error::{Error, Result};
use crate::migration::plan;
use crate::operate::migrate_libvirt::{Request, drive, dry_run, prediction};

/// How long `--dry-run` measures the dirty rate, by default.
const DEFAULT_MEASURE_SECS: u32 = 3;

pub async fn run(global: &GlobalArgs, args: &MigrateArgs) -> Result<i32> {
    let started = std::time::Instant::now();
    let mut req = request(global, args)?;
    req.started = started;
    if args.dry_run {
        let predicted = prediction(&req).await;
        return dry_run(&req, predicted);
    }
    drive(req).await
}

fn request<'a>(global: &GlobalArgs, args: &'a MigrateArgs) -> Result<Request<'a>> {
    let ctx = crate::context::LibvirtContext::new(global)?;
    let src = args
        .connect
        .as_deref()
        .ok_or_else(|| Error::usage("--connect SRC_URI is required for a libvirt migration"))?;
    let dst = args
        .to
        .as_deref()
        .ok_or_else(|| Error::usage("--to DST_URI is required with --connect"))?;
    if args.no_wait {
        return Err(Error::usage(
            "--no-wait does not apply to a libvirt migration: vmctl drives it and must stay \
             to steer it (use `virsh migrate` to fire and forget)",
        ));
    }
    let progress_json = args.progress == Some(crate::cli::ProgressFormat::Json);
    let plan = plan::plan(&plan::Options {
        allow_postcopy: args.allow_postcopy,
        allow_auto_converge: args.allow_auto_converge,
        allow_pause: args.allow_pause,
        bandwidth_mib: args.bandwidth,
        postcopy_bandwidth_mib: args.postcopy_bandwidth,
        max_downtime_ms: args.max_downtime,
        completion_timeout_per_gib: args.completion_timeout_per_gib,
        progress_timeout_secs: args.progress_timeout,
        parallel: args.parallel,
    })
    .map_err(Error::usage)?;
    let timeout = args.timeout;
    // A migration starts at once and is predicted from its first pass; the dirty rate is
    // measured up front only when asked (--measure), or for a dry run (unless --no-measure).
    let measure_secs = match (args.dry_run, args.no_measure) {
        (_, true) => None,
        (true, false) => Some(args.measure.unwrap_or(DEFAULT_MEASURE_SECS)),
        (false, false) => args.measure,
    };
    Ok(Request {
        measure_secs,
        force: args.force,
        domain: &args.target,
        src,
        dst,
        plan,
        timeout,
        progress_json,
        output: ctx.output,
        style: ctx.style,
        journal: global.journal.clone(),
        started: std::time::Instant::now(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::time::Duration;

    fn args(line: &[&str]) -> (GlobalArgs, MigrateArgs) {
        let cli = crate::cli::Cli::try_parse_from(line).unwrap_or_else(|e| panic!("{e}"));
        match cli.command {
            crate::cli::Command::Migrate(a) => (cli.global, a),
            _ => panic!("not migrate"),
        }
    }

    #[test]
    fn request_validates_the_flags() {
        // An unknown progress format is refused by the parser, before anything runs.
        let parsed = crate::cli::Cli::try_parse_from([
            "vmctl",
            "migrate",
            "vm",
            "--connect",
            "qemu:///a",
            "--to",
            "qemu:///b",
            "--progress",
            "yaml",
        ]);
        let e = parsed.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.contains("invalid value 'yaml' for '--progress <FORMAT>'"),
            "{e}"
        );
        let (g, a) = args(&[
            "vmctl",
            "migrate",
            "vm",
            "--connect",
            "qemu:///a",
            "--to",
            "qemu:///b",
            "--no-wait",
        ]);
        assert!(request(&g, &a).is_err_and(|e| e.to_string().contains("--no-wait")));
        let (g, a) = args(&[
            "vmctl",
            "migrate",
            "vm",
            "--connect",
            "qemu:///a",
            "--to",
            "qemu:///b",
            "--allow-postcopy",
            "--bandwidth",
            "32",
            "--timeout",
            "5m",
        ]);
        let r = request(&g, &a).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.timeout, Some(Duration::from_secs(300)));
        // Nothing is measured before the start unless asked.
        assert_eq!(r.measure_secs, None);
        assert_eq!(r.plan.bandwidth_mib, Some(32));
        assert!(r.plan.flag_names.contains(&"VIR_MIGRATE_POSTCOPY"));
    }

    #[test]
    fn the_dirty_rate_is_measured_up_front_only_when_asked() {
        let base = [
            "vmctl",
            "migrate",
            "vm",
            "--connect",
            "qemu:///a",
            "--to",
            "qemu:///b",
        ];
        let measure = |extra: &[&str]| {
            let line: Vec<&str> = base.iter().chain(extra).copied().collect();
            let (g, a) = args(&line);
            request(&g, &a)
                .unwrap_or_else(|e| panic!("{e}"))
                .measure_secs
        };
        // A migration starts at once: the prediction comes from its first pass.
        assert_eq!(measure(&[]), None);
        assert_eq!(measure(&["--measure", "2"]), Some(2));
        assert_eq!(measure(&["--no-measure"]), None);
        // A dry run measures (3 s by default) unless told not to.
        assert_eq!(measure(&["--dry-run"]), Some(3));
        assert_eq!(measure(&["--dry-run", "--measure", "5"]), Some(5));
        assert_eq!(measure(&["--dry-run", "--no-measure"]), None);
    }
}
