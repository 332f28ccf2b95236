//! `vmctl migrate`: through KubeVirt (`migrate_kubevirt`) or libvirt (`migrate_libvirt`).

use crate::cli::{GlobalArgs, MigrateArgs};
use crate::context::Context;
use crate::error::Result;

pub async fn run_kubevirt(ctx: &'static Context, args: &MigrateArgs) -> Result<i32> {
    super::migrate_kubevirt::run(ctx, args).await
}

pub async fn run_libvirt(global: &GlobalArgs, args: &MigrateArgs) -> Result<i32> {
    super::migrate_libvirt::run(global, args).await
}
