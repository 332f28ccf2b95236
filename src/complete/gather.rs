//! The I/O of completion: the entry points (`vmctl __complete ...` and the
//! `kubectl_complete-vmctl` binary), and the names read from the source the command would
//! read, bounded in time. Whatever fails, stdout carries only the protocol: no candidates
//! and directive 4 (no file completion); a short reason goes to stderr, which the shell's
//! completion script discards.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::CommandFactory;
use serde_json::Value;

use super::{Completions, Found, MAX_CANDIDATES, Names, NamesRequest, Plan, SourceFlags};
use crate::cli::{Cli, GlobalArgs};
use crate::cluster::{Kind, Query, Source};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::render::OutputFormat;

/// Reading names from the source, all of it (connecting, listing, a snapshot's parse), ends
/// within this: a TAB must not hang the shell.
pub const DEADLINE: Duration = Duration::from_secs(3);

/// The words cobra's scripts and kubectl put before the command line: `__complete`, or
/// `__completeNoDesc` for values without descriptions. `Some(descriptions)` when `word` is
/// one of them.
pub fn request_word(word: &OsString) -> Option<bool> {
    match word.to_str() {
        Some("__complete") => Some(true),
        Some("__completeNoDesc") => Some(false),
        _ => None,
    }
}

/// `kubectl_complete-vmctl WORDS...`: kubectl (1.26+) runs it with the words after
/// `kubectl vmctl`, the last one being completed. A leading `__complete` is accepted too, so
/// the same binary answers the `kubectl vmctl __complete "$@"` script convention.
pub fn plugin_main() -> ExitCode {
    let mut args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let descriptions = match args.first().and_then(request_word) {
        Some(descriptions) => {
            args.remove(0);
            descriptions
        }
        None => true,
    };
    run(&args, descriptions)
}

/// Answers one completion request: `words` are the words after the program name (and after
/// `__complete`), the last one the word being completed. Always exits 0: kubectl ignores the
/// output of a completion program that fails.
pub fn run(words: &[OsString], descriptions: bool) -> ExitCode {
    let mut words: Vec<String> = words
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    if words.is_empty() {
        words.push(String::new());
    }
    let completions = match super::plan(&Cli::command(), &words) {
        Plan::Done(c) => c,
        Plan::Names(request) => names_within(&request, DEADLINE),
    };
    let text = super::render(&completions, descriptions);
    // A closed pipe is the reader's business, not an error.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    ExitCode::SUCCESS
}

/// The candidates for `request`, read on a thread of their own: when `deadline` passes
/// first, none (the thread ends with the process).
fn names_within(request: &NamesRequest, deadline: Duration) -> Completions {
    let (tx, rx) = std::sync::mpsc::channel();
    let thread_request = request.clone();
    let spawned = std::thread::Builder::new()
        .name("complete".into())
        .spawn(move || {
            let result = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| Error::Internal(format!("starting the async runtime: {e}")))
                .and_then(|rt| rt.block_on(gather(&thread_request)));
            let _ = tx.send(result);
        });
    if let Err(e) = spawned {
        say(&format!("cannot start a thread: {e}"));
        return Completions::none();
    }
    match rx.recv_timeout(deadline) {
        Ok(Ok(found)) => {
            let (completions, left) = super::finish(request, found, MAX_CANDIDATES);
            if left.unprintable > 0 {
                say(&format!(
                    "{} name(s) with control characters or spaces left out",
                    left.unprintable
                ));
            }
            if left.beyond_limit > 0 {
                say(&format!(
                    "{} more name(s) beyond the first {MAX_CANDIDATES}: type more of the name",
                    left.beyond_limit
                ));
            }
            completions
        }
        Ok(Err(e)) => {
            say(&e.to_string());
            Completions::none()
        }
        Err(_) => {
            say(&format!(
                "no names within {} s: nothing offered",
                deadline.as_secs()
            ));
            Completions::none()
        }
    }
}

/// One line on stderr, escaped (an error may quote a file or the API server).
fn say(message: &str) {
    eprintln!("vmctl completion: {}", crate::text::printable(message));
}

/// The global flags a command on this line would run with; the request timeout is the
/// completion's deadline.
fn global_args(flags: &SourceFlags) -> GlobalArgs {
    GlobalArgs {
        from: flags.from.clone(),
        max_input_size: flags
            .max_input_size
            .clone()
            .unwrap_or_else(|| "2Gi".to_string()),
        kubeconfig: flags.kubeconfig.clone(),
        context: flags.context.clone(),
        namespace: flags.namespace.clone(),
        all_namespaces: flags.all_namespaces,
        output: OutputFormat::Table,
        no_color: true,
        request_timeout: DEADLINE.as_secs(),
        journal: None,
        now: None,
    }
}

/// Reads the names `request` wants. Read-only: lists, nothing else.
pub async fn gather(request: &NamesRequest) -> Result<Vec<Found>> {
    if request.wanted.iter().all(|w| w.names == Names::Contexts) {
        let names = contexts(&request.source)?;
        return Ok(request
            .wanted
            .iter()
            .map(|w| Found {
                wanted: w.clone(),
                names: names.clone(),
            })
            .collect());
    }
    let ctx = Context::new(&global_args(&request.source)).await?;
    let mut found = Vec::new();
    for wanted in &request.wanted {
        let names = match wanted.names {
            Names::Nodes => nodes(&ctx).await?,
            Names::Vmis => in_scope(&ctx, Kind::VirtualMachineInstance).await?,
            Names::Migrations => in_scope(&ctx, Kind::VirtualMachineInstanceMigration).await?,
            Names::Namespaces => namespaces(&ctx).await?,
            Names::Contexts => contexts(&request.source)?,
        };
        found.push(Found {
            wanted: wanted.clone(),
            names,
        });
    }
    Ok(found)
}

fn name_of(value: &Value) -> Option<String> {
    value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn text_at<'v>(value: &'v Value, pointer: &str) -> &'v str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Node names; a cordoned node says so.
async fn nodes(ctx: &Context) -> Result<Vec<(String, String)>> {
    let nodes = ctx.source.list(Kind::Node, &Query::all()).await?;
    Ok(nodes
        .iter()
        .filter_map(|n| {
            let cordoned = n.pointer("/spec/unschedulable") == Some(&Value::Bool(true));
            let note = if cordoned { "cordoned" } else { "" };
            name_of(n).map(|name| (name, note.to_string()))
        })
        .collect())
}

/// VMIs or migrations in the command's scope, described by namespace and phase.
async fn in_scope(ctx: &Context, kind: Kind) -> Result<Vec<(String, String)>> {
    let objects = ctx.source.list(kind, &ctx.scope.query()).await?;
    Ok(objects
        .iter()
        .filter_map(|o| {
            let namespace = text_at(o, "/metadata/namespace");
            let phase = text_at(o, "/status/phase");
            let description = match (namespace, phase) {
                ("", p) => p.to_string(),
                (ns, "") => format!("in {ns}"),
                (ns, p) => format!("{p} in {ns}"),
            };
            name_of(o).map(|name| (name, description))
        })
        .collect())
}

/// Namespaces; a snapshot without Namespace objects gives those its VMIs are in.
async fn namespaces(ctx: &Context) -> Result<Vec<(String, String)>> {
    let listed = ctx.source.list(Kind::Namespace, &Query::all()).await?;
    let mut names: Vec<(String, String)> = listed
        .iter()
        .filter_map(|n| name_of(n).map(|name| (name, String::new())))
        .collect();
    if names.is_empty() {
        let vmis = ctx
            .source
            .list(Kind::VirtualMachineInstance, &Query::all())
            .await?;
        names = vmis
            .iter()
            .map(|v| (text_at(v, "/metadata/namespace").to_string(), String::new()))
            .filter(|(ns, _)| !ns.is_empty())
            .collect();
    }
    Ok(names)
}

/// The kubeconfig's contexts (`--kubeconfig`, else `$KUBECONFIG`, else `~/.kube/config`),
/// described by their cluster.
fn contexts(flags: &SourceFlags) -> Result<Vec<(String, String)>> {
    let kubeconfig = match &flags.kubeconfig {
        Some(path) => kube::config::Kubeconfig::read_from(path),
        None => kube::config::Kubeconfig::read(),
    }
    .map_err(|e| Error::usage(format!("cannot read the kubeconfig: {e}")))?;
    Ok(kubeconfig
        .contexts
        .into_iter()
        .map(|c| {
            let cluster = c
                .context
                .map(|ctx| format!("cluster {}", ctx.cluster))
                .unwrap_or_default();
            (c.name, cluster)
        })
        .collect())
}
