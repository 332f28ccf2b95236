//! `vmctl abort`: through KubeVirt or libvirt.

use crate::cli::{AbortArgs, GlobalArgs};
use crate::context::Context;
use crate::error::{Error, Result};

pub async fn run_kubevirt(ctx: &'static Context, args: &AbortArgs) -> Result<i32> {
    super::abort_kubevirt::run(ctx, args).await
}

pub async fn run_libvirt(_global: &GlobalArgs, _args: &AbortArgs) -> Result<i32> {
    Err(Error::Internal(
        "abort through libvirt is not implemented yet".into(),
    ))
}
