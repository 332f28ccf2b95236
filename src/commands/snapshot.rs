//! `vmctl snapshot FILE`: capture every kind vmctl reads into one file that `--from` reads
//! back. This is how an operator hands an incident to a colleague.
//!
//! The lists come from `cluster::snapshot_write::capture`, what goes into the file is
//! `policy::snapshot::select_items`, the text is `render::snapshot`, and the file is written
//! whole or not at all (`cluster::snapshot_write::write_file`).

use crate::cli::SnapshotArgs;
use crate::cluster::snapshot_write::{Snapshot, SnapshotScope, capture, write_file};
use crate::cluster::{Query, Source};
use crate::context::Context;
use crate::error::{Result, exit};
use crate::policy::snapshot::{count_kinds, left_out, select_items};
use crate::render::snapshot::{document, file_format, wrote};

/// `namespace`: `-n` as given. Not the context's scope: a capture is whole by default (every
/// namespace, as `--from` reads it), whatever the kubeconfig context's namespace; `-n NS`
/// narrows every namespaced kind alike, and the file and stderr say what it left out.
pub async fn run(ctx: &Context, args: &SnapshotArgs, namespace: Option<&str>) -> Result<i32> {
    let node = args.node.as_deref();

    // ---- gather
    let (captured, version) = tokio::join!(
        capture(&ctx.source, Query::namespace(namespace), node),
        ctx.source.server_version()
    );
    let captured = captured?;
    let server_version = match version {
        Ok(v) => v.map(|v| v.git_version),
        Err(e) => {
            ctx.warn(format!(
                "could not read the API server's version ({e}); the snapshot does not record it"
            ));
            None
        }
    };

    // ---- decide
    let items = select_items(captured, namespace, node);
    let counts = count_kinds(&items);
    let left_out = left_out(namespace, node);
    for sentence in &left_out {
        ctx.warn(sentence.clone());
    }
    let scope = SnapshotScope {
        namespace: namespace.map(str::to_string),
        node: args.node.clone(),
        left_out,
    };
    let snapshot = Snapshot::new(
        ctx.now.to_string(),
        server_version,
        ctx.source_description(),
        scope,
        items,
    );

    // ---- render
    let text = document(file_format(ctx.output, &args.file), &snapshot)?;
    if args.file.as_os_str() == "-" {
        crate::render::write_document(&text)?;
    } else {
        write_file(&args.file, &text)?;
        crate::say!(
            "{}",
            wrote(&args.file.display().to_string(), namespace, &counts)
        );
    }
    Ok(exit::OK)
}
