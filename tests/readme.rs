//! The README shows what the binary prints (issue 33: its chart was made with flags its caption
//! did not show). Each picture is made again here from the command printed above it.

mod common;

use common::*;

/// The README's text between the first line after `marker` that starts a fence of `lang` and
/// the fence's end.
fn block_after(readme: &str, marker: &str, lang: &str) -> String {
    let from = readme
        .find(marker)
        .unwrap_or_else(|| panic!("README lacks {marker:?}"));
    let rest = &readme[from..];
    let open = format!("```{lang}\n");
    let start = rest.find(&open).expect("a fenced block") + open.len();
    let end = rest[start..].find("```").expect("the fence's end") + start;
    rest[start..end].to_string()
}

#[test]
fn the_rolling_upgrade_chart_is_what_its_command_prints() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let marker = "A rolling upgrade on a 100-column terminal";
    let command = block_after(&readme, marker, "sh");
    let args: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(args[0], "vmctl", "{command}");
    // The caption's terminal: 100 columns, UTF-8; `--chart always` stands in for the terminal.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(&args[1..])
        .args(["--chart", "always"])
        .env("COLUMNS", "100")
        .env("LANG", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .env("VMCTL_JOURNAL", "off")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let printed = stdout(&out);
    let chart = block_after(&readme, marker, "text");
    assert!(
        printed.contains(&chart),
        "the README's chart is not in what {command:?} prints at 100 columns:\n{printed}"
    );
}
