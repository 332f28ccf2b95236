//! `vmctl completions SHELL` and `vmctl man`: generated from the clap definition.

use std::path::Path;

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::error::{Error, Result, exit};

pub fn completion_script(shell: clap_complete::Shell) -> String {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "vmctl", &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

pub fn completions(args: &CompletionsArgs) -> Result<i32> {
    crate::render::write_document(&completion_script(args.shell))?;
    Ok(exit::OK)
}

/// Every man page: `vmctl.1` and `vmctl-<command>.1`, as (file name, roff text).
pub fn man_pages() -> Result<Vec<(String, String)>> {
    let command = Cli::command();
    let mut pages = Vec::new();
    pages.push(("vmctl.1".to_string(), render_man(&command)?));
    for sub in command.get_subcommands() {
        let name = format!("vmctl-{}", sub.get_name());
        let sub = sub
            .clone()
            .name(name.clone())
            .bin_name(name.replace('-', " "));
        pages.push((format!("{name}.1"), render_man(&sub)?));
    }
    Ok(pages)
}

fn render_man(command: &clap::Command) -> Result<String> {
    let man = clap_mangen::Man::new(command.clone());
    let mut buf = Vec::new();
    man.render(&mut buf)
        .map_err(|e| Error::Internal(format!("rendering the man page: {e}")))?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

pub fn man(args: &ManArgs) -> Result<i32> {
    let pages = man_pages()?;
    match &args.dir {
        None => {
            if let Some((_, text)) = pages.first() {
                crate::render::write_document(text)?;
            }
        }
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| {
                Error::bad_input(dir.display(), format!("cannot create directory: {e}"))
            })?;
            for (name, text) in pages {
                let path = Path::new(dir).join(name);
                std::fs::write(&path, text)
                    .map_err(|e| Error::bad_input(path.display(), format!("cannot write: {e}")))?;
            }
        }
    }
    Ok(exit::OK)
}
