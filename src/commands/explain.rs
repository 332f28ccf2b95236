//! `vmctl explain` (being built).

use crate::cli::ExplainArgs;
use crate::context::Context;
use crate::error::{Error, Result};

pub async fn run(_ctx: &Context, _args: &ExplainArgs) -> Result<i32> {
    Err(Error::Internal("not implemented yet".into()))
}
