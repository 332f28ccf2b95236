//! The committed completions and man pages must match the clap definition.
//! Regenerate with `VMCTL_BLESS=1 cargo test --test generated`.

use std::path::Path;

use clap_complete::Shell;
use vmctl::commands::generate::{completion_script, man_pages};

fn completion_files() -> Vec<(String, String)> {
    [
        (Shell::Bash, "vmctl.bash"),
        (Shell::Zsh, "_vmctl"),
        (Shell::Fish, "vmctl.fish"),
        (Shell::PowerShell, "_vmctl.ps1"),
        (Shell::Elvish, "vmctl.elv"),
    ]
    .into_iter()
    .map(|(shell, name)| (format!("completions/{name}"), completion_script(shell)))
    .collect()
}

fn check(files: Vec<(String, String)>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("VMCTL_BLESS").is_some();
    let mut stale = Vec::new();
    for (rel, expected) in files {
        let path = root.join(&rel);
        let actual = std::fs::read_to_string(&path).unwrap_or_default();
        if actual != expected {
            if bless {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, expected).unwrap();
            } else {
                stale.push(rel);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files: {stale:?}; run `VMCTL_BLESS=1 cargo test --test generated` and commit them"
    );
}

#[test]
fn completions_are_current() {
    check(completion_files());
}

#[test]
fn man_pages_are_current() {
    let pages = man_pages().expect("man pages render");
    assert!(pages.iter().any(|(name, _)| name == "vmctl-status.1"));
    check(
        pages
            .into_iter()
            .map(|(name, text)| (format!("man/{name}"), text))
            .collect(),
    );
}

#[test]
fn the_man_page_documents_exit_codes() {
    let pages = man_pages().expect("man pages render");
    let main = &pages[0].1;
    for code in ["bad input", "cluster error", "not found", "interrupted"] {
        assert!(
            main.contains(code),
            "vmctl.1 lacks the exit code for {code:?}"
        );
    }
}

/// Issue 33 item 10: every command's page says its exit codes (`snapshot`, `completions`,
/// `man` and `top` had none).
#[test]
fn every_command_page_has_an_exit_code_section() {
    let pages = man_pages().expect("man pages render");
    let missing: Vec<&str> = pages
        .iter()
        .filter(|(_, text)| !text.contains("EXIT CODES"))
        .map(|(name, _)| name.as_str())
        .collect();
    assert!(missing.is_empty(), "no EXIT CODES section: {missing:?}");
}
