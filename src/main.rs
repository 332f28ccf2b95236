use std::process::ExitCode;

// Reading a large snapshot is allocation-bound; see benches/plan_drain.sh.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    vmctl::entry::main()
}
