//! The program's entry, shared by the two names it is installed under: `vmctl` and
//! `kubectl-vmctl` (run by kubectl as `kubectl vmctl ...`, its plugin mechanism: any
//! `kubectl-NAME` on PATH). Help, usage and errors name the way it was invoked.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches};

use crate::cli::Cli;
use crate::commands;
use crate::error::{Error, exit};
use crate::render::stderr_line;

/// How the program was invoked, from the file name of argv[0]: `kubectl-vmctl` (a binary
/// or a link of that name) is `kubectl vmctl`, anything else `vmctl`.
pub fn invoked_as(argv0: Option<&OsString>) -> &'static str {
    let name = argv0
        .map(std::path::Path::new)
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.starts_with("kubectl-vmctl") {
        "kubectl vmctl"
    } else {
        "vmctl"
    }
}

/// Parses `args` (argv[0] first) as the program invoked that way.
pub fn parse(args: Vec<OsString>) -> Result<Cli, clap::Error> {
    let name = invoked_as(args.first());
    let mut command = Cli::command().bin_name(name);
    let matches = command.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut command))
}

/// The whole program: parse, run, report; the exit code.
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    // Installed (or linked) as `kubectl_complete-vmctl`: kubectl's plugin completion.
    let program = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if program.starts_with("kubectl_complete-vmctl") {
        return crate::complete::gather::plugin_main();
    }
    // `vmctl __complete WORDS...`: cobra's completion protocol (see `crate::complete`),
    // answered before clap sees the line, so it appears in no help, man page or script.
    if let Some(descriptions) = args.get(1).and_then(crate::complete::gather::request_word) {
        return crate::complete::gather::run(&args[2..], descriptions);
    }
    let cli = match parse(args) {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    // Tables fit the terminal when stdout is one (issue 33): decided once, here.
    crate::render::table::fit_to_terminal(std::io::IsTerminal::is_terminal(&std::io::stdout()));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return report(&Error::Internal(format!("starting the async runtime: {e}"))),
    };
    match runtime.block_on(commands::run(cli)) {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(err) => report(&err),
    }
}

/// A message for stderr: escaped ([`crate::text::printable`]); [`stderr_line`] writes it in
/// the locale's charset, wrapped to a terminal.
fn stderr_words(text: &str) -> String {
    crate::text::printable(text)
}

fn report(err: &Error) -> ExitCode {
    // Errors quote names and messages from the cluster and from files: escaped, one line,
    // in ASCII where the locale is not UTF-8.
    let printable = stderr_words;
    stderr_line(&format!("error: {}", printable(&err.to_string())));
    for hint in err.hints() {
        stderr_line(&format!("hint: {}", printable(hint)));
    }
    let code = err.exit_code();
    ExitCode::from(u8::try_from(code).unwrap_or(exit::INTERNAL as u8))
}

/// A command line clap refuses: one `error:` line (the value escaped: it may hold any byte),
/// clap's tips as `hint:` lines, exit 2. Help and version print as clap prints them.
fn usage_error(e: clap::Error) -> ExitCode {
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit()
    }
    let printable = stderr_words;
    let text = e.render().to_string();
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("invalid arguments");
    let mut message = first.strip_prefix("error: ").unwrap_or(first).to_string();
    let mut hints = Vec::new();
    for line in lines.map(str::trim) {
        if let Some(tip) = line.strip_prefix("tip: ") {
            hints.push(tip.to_string());
        } else if line.starts_with("For more information") {
            hints.push(line.replacen("For", "for", 1));
        } else if line.starts_with("Usage:") {
            // The usage line repeats what --help says.
        } else if !line.is_empty() {
            // The arguments a "not provided" error lists, one per line.
            message.push(' ');
            message.push_str(line);
        }
    }
    stderr_line(&format!("error: {}", printable(&message)));
    for hint in hints {
        stderr_line(&format!("hint: {}", printable(&hint)));
    }
    ExitCode::from(exit::USAGE as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_follows_argv0() {
        let name = |s: &str| invoked_as(Some(&OsString::from(s)));
        assert_eq!(name("/usr/local/bin/kubectl-vmctl"), "kubectl vmctl");
        assert_eq!(name("kubectl-vmctl.exe"), "kubectl vmctl");
        assert_eq!(name("/usr/bin/vmctl"), "vmctl");
        assert_eq!(invoked_as(None), "vmctl");
        let parsed = parse(vec!["kubectl-vmctl".into(), "status".into()]);
        assert!(parsed.is_ok());
        let e = parse(vec!["kubectl-vmctl".into(), "plan-drain".into()])
            .err()
            .map(|e| e.render().to_string())
            .unwrap_or_default();
        assert!(e.contains("Usage: kubectl vmctl plan-drain"), "{e}");
    }
}
