//! `vmctl history`: migrations from the journal (issue 28; being built).

use crate::cli::{Cli, HistoryArgs};
use crate::error::{Error, Result};

pub async fn run(_cli: &Cli, _args: &HistoryArgs) -> Result<i32> {
    Err(Error::usage("vmctl history: not built yet"))
}
