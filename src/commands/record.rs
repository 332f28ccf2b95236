//! `vmctl record`: watch the cluster, journal every migration's end (issue 28; being built).

use crate::cli::RecordArgs;
use crate::context::Context;
use crate::error::{Error, Result};

pub async fn run(_ctx: &'static Context, _args: &RecordArgs) -> Result<i32> {
    Err(Error::usage("vmctl record: not built yet"))
}
