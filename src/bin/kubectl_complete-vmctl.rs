//! `kubectl_complete-vmctl`: kubectl's plugin completion (kubectl 1.26+). On TAB after
//! `kubectl vmctl `, kubectl runs this from PATH with the words after the plugin name and
//! reads cobra's `__complete` answer (see `vmctl::complete`).

use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    vmctl::complete::gather::plugin_main()
}
