//! `vmctl plan-drain` (being built).

use crate::cli::PlanDrainArgs;
use crate::context::Context;
use crate::error::{Error, Result};

pub async fn run(_ctx: &Context, _args: &PlanDrainArgs) -> Result<i32> {
    Err(Error::Internal("not implemented yet".into()))
}
