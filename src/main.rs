use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

use vmctl::cli::Cli;
use vmctl::commands;
use vmctl::error::{Error, exit};

// Reading a large snapshot is allocation-bound; see benches/plan_drain.sh.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
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

fn report(err: &Error) -> ExitCode {
    // Errors quote names and messages from the cluster and from files: escaped, one line.
    let printable = vmctl::text::printable;
    eprintln!("error: {}", printable(&err.to_string()));
    for hint in err.hints() {
        eprintln!("hint: {}", printable(hint));
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
    let printable = vmctl::text::printable;
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
    eprintln!("error: {}", printable(&message));
    for hint in hints {
        eprintln!("hint: {}", printable(&hint));
    }
    ExitCode::from(exit::USAGE as u8)
}
