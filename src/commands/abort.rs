//! `vmctl abort`: through KubeVirt or libvirt.

use crate::cli::{AbortArgs, GlobalArgs};
use crate::context::Context;
use crate::error::Result;

pub async fn run_kubevirt(ctx: &'static Context, args: &AbortArgs) -> Result<i32> {
    super::abort_kubevirt::run(ctx, args).await
}

pub async fn run_libvirt(global: &GlobalArgs, args: &AbortArgs) -> Result<i32> {
    super::abort_libvirt::run(global, args).await
}
