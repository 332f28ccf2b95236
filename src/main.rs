use std::process::ExitCode;

use clap::Parser;

use vmctl::cli::Cli;
use vmctl::commands;
use vmctl::error::{Error, exit};

// Reading a large snapshot is allocation-bound; see benches/plan_drain.sh.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
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
    let printable = vmctl::render::fmt::printable;
    eprintln!("error: {}", printable(&err.to_string()));
    for hint in err.hints() {
        eprintln!("hint: {}", printable(hint));
    }
    let code = err.exit_code();
    ExitCode::from(u8::try_from(code).unwrap_or(exit::INTERNAL as u8))
}
