//! `kubectl-vmctl`: vmctl as a kubectl plugin (`kubectl vmctl <command>`), the same program
//! as `vmctl` (see `vmctl::entry`).

use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    vmctl::entry::main()
}
