//! `vmctl drain NODE...`: the plan `plan-drain` makes, checked; then cordon, evictions like
//! kubectl drain, every VM's evacuation followed, a diagnosis where one fails
//! (`operate::drain` does it all; this is the recipe's entry).

use crate::cli::DrainArgs;
use crate::context::Context;
use crate::error::Result;

pub async fn run(ctx: &'static Context, args: &DrainArgs) -> Result<i32> {
    crate::operate::drain::run(ctx, args).await
}
