//! On a terminal `vmctl migrate` draws progress bars (and colour); off a terminal it prints
//! plain lines. The pseudo-terminal comes from util-linux `script` (Debian's bsdutils).

mod common;
mod support;

use std::process::Command;
use std::sync::Arc;

use support::FakeApiServer;
use support::kubevirt_sim::{self, KubeVirtSim, Script};

fn slow_script() -> Script {
    // Long enough streaming for several redraws of the bars.
    Script {
        running_ticks: 30,
        ..Script::default()
    }
}

#[test]
fn a_terminal_gets_bars_not_plain_lines() {
    let server = Arc::new(FakeApiServer::start_blocking(kubevirt_sim::cluster(
        "v1.8.4",
    )));
    let _sim = KubeVirtSim::start(&server, slow_script());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let cmd = format!(
        "{} --kubeconfig {} -n prod migrate db-01 --timeout 60s",
        env!("CARGO_BIN_EXE_vmctl"),
        kubeconfig.display()
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env_remove("NO_COLOR")
        .env_remove("KUBECONFIG")
        .output()
        .expect("script(1) from bsdutils must be installed");
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{screen}");
    assert!(
        screen.contains("\u{1b}["),
        "no terminal control sequences: {screen}"
    );
    assert!(screen.contains("elapsed"), "no elapsed bar: {screen}");
    assert!(
        screen.contains(" left of "),
        "no remaining-data bar: {screen}"
    );
    assert!(
        !screen.contains("migration active, transferred"),
        "plain lines belong off a terminal: {screen}"
    );
}

#[test]
fn a_pipe_gets_plain_lines_without_colour() {
    let server = Arc::new(FakeApiServer::start_blocking(kubevirt_sim::cluster(
        "v1.8.4",
    )));
    let _sim = KubeVirtSim::start(&server, slow_script());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let out = common::vmctl([
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
        "-n",
        "prod",
        "migrate",
        "db-01",
        "--timeout",
        "60s",
    ]);
    let text = format!("{}{}", common::stdout(&out), common::stderr(&out));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("migration active, transferred"), "{text}");
    assert!(!text.contains("\u{1b}["), "{text}");
}

/// Issue 27: under the bars, sparklines of remaining memory and of the transfer rate against
/// the dirty rate (Unicode blocks with a UTF-8 locale, an ASCII ramp without); the summary
/// on a terminal keeps the remaining-memory sparkline.
#[test]
fn a_terminal_gets_sparklines_under_the_bars() {
    for (lang, glyph) in [("C.UTF-8", '█'), ("C", '#')] {
        let server = Arc::new(FakeApiServer::start_blocking(kubevirt_sim::cluster(
            "v1.8.4",
        )));
        let _sim = KubeVirtSim::start(&server, slow_script());
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = server.write_kubeconfig(dir.path());
        let cmd = format!(
            "stty cols 120 rows 40; {} --kubeconfig {} -n prod migrate db-01 --timeout 60s",
            env!("CARGO_BIN_EXE_vmctl"),
            kubeconfig.display()
        );
        let out = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .env("NO_COLOR", "1")
            .env_remove("KUBECONFIG")
            .env_remove("LC_ALL")
            .env_remove("LC_CTYPE")
            .env("LANG", lang)
            .output()
            .expect("script(1) from bsdutils must be installed");
        let screen = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{screen}");
        for line in ["  memory left  ", "  sending      ", "  dirtying     "] {
            assert!(screen.contains(line), "{lang}: no {line:?}: {screen}");
        }
        let memory = screen
            .split("  memory left  ")
            .nth(1)
            .unwrap_or_default()
            .chars()
            .next();
        assert_eq!(memory, Some(glyph), "{lang}: {screen}");
        assert!(
            screen.contains(&format!("  memory left:    {glyph}")),
            "{lang}: the summary's sparkline: {screen}"
        );
        if lang == "C" {
            assert!(!screen.contains('█'), "{screen}");
        }
    }
}
