//! End-to-end tests of `vmctl migrate|abort|explain --connect` on REAL libvirt: two libvirt
//! daemons on this machine as two hosts and a small guest that dirties memory at a chosen
//! rate (tests/lab/lab.sh; LAB.md's recipe). No mocks.
//!
//! A plain test binary (`harness = false`): the cases share one lab and must run one after
//! the other, and a skip must be *printed*, which libtest would swallow. It runs:
//! - always: the checks that need no libvirt (dry run, the build without libvirt support);
//! - with `--features libvirt` and `VMCTL_LIBVIRT_LAB=<lab dir>` (set by `.ci/run` once
//!   `tests/lab/lab.sh up` brought the lab up): the lab cases;
//! - otherwise it prints `SKIPPED: ...` and why.
//!
//! `cargo test --features libvirt --test libvirt_e2e [-- NAME...]` runs the cases whose name
//! contains one of the NAMEs.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The vmctl under test: this build's, or `VMCTL_E2E_BIN` (`.ci/run` runs the lab cases on a
/// copy of the libvirt build while `cargo test` rebuilds target/debug/vmctl without it).
fn bin() -> String {
    std::env::var("VMCTL_E2E_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_vmctl").to_string())
}
const DOM: &str = "labvm";

type CaseResult = Result<(), String>;

fn main() -> ExitCode {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |name: &str| filters.is_empty() || filters.iter().any(|f| name.contains(f));
    let mut failed = Vec::new();
    let mut passed = 0;
    let mut run = |name: &str, case: &dyn Fn() -> CaseResult| {
        if !wanted(name) {
            return;
        }
        let t0 = Instant::now();
        match case() {
            Ok(()) => {
                passed += 1;
                println!("test {name} ... ok ({:.1} s)", t0.elapsed().as_secs_f64());
            }
            Err(why) => {
                println!(
                    "test {name} ... FAILED ({:.1} s)\n{why}\n",
                    t0.elapsed().as_secs_f64()
                );
                failed.push(name.to_string());
            }
        }
    };

    run(
        "dry_run_prints_flags_and_parameters",
        &dry_run_prints_flags_and_parameters,
    );
    run(
        "without_libvirt_support_says_so",
        &without_libvirt_support_says_so,
    );

    match lab() {
        Err(why) => println!("SKIPPED: libvirt end-to-end cases: {why}"),
        Ok(lab) => {
            let t0 = Instant::now();
            run("unknown_domain_and_unreachable_hosts", &|| {
                unknown_domain_and_unreachable_hosts(&lab)
            });
            run("idle_guest_migrates_and_keeps_running", &|| {
                idle_guest_migrates_and_keeps_running(&lab)
            });
            run("busy_guest_does_not_converge_and_is_aborted_early", &|| {
                busy_guest_is_aborted_early(&lab)
            });
            run("predictions_hold_on_the_lab", &|| {
                predictions_hold_on_the_lab(&lab)
            });
            run("busy_guest_completes_with_postcopy", &|| {
                busy_guest_completes_with_postcopy(&lab)
            });
            run("busy_guest_completes_with_auto_converge", &|| {
                busy_guest_completes_with_auto_converge(&lab)
            });
            run("busy_guest_completes_when_paused", &|| {
                busy_guest_completes_when_paused(&lab)
            });
            run("abort_returns_the_guest_to_the_source", &|| {
                abort_returns_the_guest_to_the_source(&lab)
            });
            run("ctrl_c_aborts_cleanly", &|| ctrl_c_aborts_cleanly(&lab));
            run("timeout_aborts_and_says_so", &|| {
                timeout_aborts_and_says_so(&lab)
            });
            run("abort_is_refused_in_postcopy", &|| {
                abort_is_refused_in_postcopy(&lab)
            });
            run("destination_daemon_killed_is_a_connection_failure", &|| {
                destination_killed(&lab)
            });
            run("postcopy_network_fails_guest_split_not_running", &|| {
                postcopy_broken(&lab, Break::Network)
            });
            run("postcopy_destination_qemu_killed_guest_lost", &|| {
                postcopy_broken(&lab, Break::DestinationQemu)
            });
            run(
                "postcopy_destination_daemon_killed_guest_whole_there",
                &|| postcopy_broken(&lab, Break::DestinationDaemon),
            );
            run(
                "postcopy_follow_of_a_source_still_sending_stops_on_ctrl_c",
                &|| postcopy_broken(&lab, Break::DestinationDaemonThenCtrlC),
            );
            run("paused_guest_runs_again_after_ctrl_c", &|| {
                paused_guest_runs_again_after_ctrl_c(&lab)
            });
            run("parallel_connections_migrate_both_ways", &|| {
                parallel_connections(&lab)
            });
            run("terminal_sparklines_and_explain_charts", &|| {
                terminal_sparklines_and_explain_charts(&lab)
            });
            println!(
                "libvirt end-to-end cases took {:.0} s",
                t0.elapsed().as_secs_f64()
            );
        }
    }

    println!(
        "\nlibvirt_e2e: {passed} passed, {} failed{}",
        failed.len(),
        if failed.is_empty() {
            String::new()
        } else {
            format!(": {}", failed.join(", "))
        }
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

// ---------------------------------------------------------------------------------------
// The lab

struct Lab {
    dir: PathBuf,
    script: PathBuf,
    src: String,
    dst: String,
    /// The migration ports (`migration_port_min..=max` of each side's qemu.conf): the
    /// destination's QEMU listens on `dst_ports`; `lab.sh` derives both from its PORT_BASE.
    src_ports: (u16, u16),
    dst_ports: (u16, u16),
}

/// `migration_port_min`/`_max` of a side's qemu.conf, as lab.sh wrote it.
fn migration_ports(dir: &Path, side: &str) -> Result<(u16, u16), String> {
    let path = dir.join(side).join("etc/libvirt/qemu.conf");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let value = |key: &str| {
        text.lines()
            .filter_map(|l| l.strip_prefix(key))
            .find_map(|rest| rest.trim().strip_prefix('=')?.trim().parse::<u16>().ok())
            .ok_or_else(|| format!("no {key} in {}", path.display()))
    };
    Ok((value("migration_port_min")?, value("migration_port_max")?))
}

/// The lab, if this run can use one; else why not.
fn lab() -> Result<Lab, String> {
    if !cfg!(feature = "libvirt") {
        return Err("this test binary was built without `--features libvirt` \
                    (run `cargo test --features libvirt --test libvirt_e2e` on a machine with the lab up)"
            .into());
    }
    let Some(dir) = std::env::var_os("VMCTL_LIBVIRT_LAB") else {
        return Err("VMCTL_LIBVIRT_LAB is not set: bring the lab up with \
                    `LAB=/tmp/vmctl-lab tests/lab/lab.sh up` (root, Debian bookworm; see .ci/run) \
                    and set VMCTL_LIBVIRT_LAB=/tmp/vmctl-lab"
            .into());
    };
    let dir = PathBuf::from(dir);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lab/lab.sh");
    let sock = |side: &str| dir.join(side).join("sock/libvirt-sock");
    if !sock("src").exists() || !sock("dst").exists() {
        // Set deliberately but not up: that is a failure of the setup, not a skip.
        panic!(
            "VMCTL_LIBVIRT_LAB={} but the lab's daemons are not up (no {}); run `tests/lab/lab.sh up`",
            dir.display(),
            sock("src").display()
        );
    }
    let uri = |side: &str| format!("qemu+unix:///system?socket={}", sock(side).display());
    let ports = |side: &str| migration_ports(&dir, side).unwrap_or_else(|e| panic!("{e}"));
    Ok(Lab {
        src: uri("src"),
        dst: uri("dst"),
        src_ports: ports("src"),
        dst_ports: ports("dst"),
        script,
        dir,
    })
}

impl Lab {
    fn sh(&self, args: &[&str]) -> CaseResult {
        // LAB and PORT_BASE name this lab (another may run on the machine): PORT_BASE is the
        // source's first migration port, whatever this process's environment says.
        let out = Command::new(&self.script)
            .args(args)
            .env("LAB", &self.dir)
            .env("PORT_BASE", self.src_ports.0.to_string())
            .output()
            .map_err(|e| format!("lab.sh {args:?}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "lab.sh {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// A fresh guest on the source: `wss` MiB working set dirtied at `rate` MiB/s.
    fn guest(&self, wss: u32, rate: u32) -> CaseResult {
        self.sh(&["daemons"])?;
        self.sh(&["guest", &wss.to_string(), &rate.to_string(), "256"])
    }

    /// Waits until the source runs a migration job (vmctl starts it at once; with
    /// `--measure S`, after S s of measuring), then `settle` more: a case that breaks a migration must break a running one.
    fn migration_running(&self, settle: Duration) -> CaseResult {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(30) {
            let info = Command::new("virsh")
                .args(["-q", "-c", &self.src, "domjobinfo", DOM])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
                .unwrap_or_default();
            if info.contains("Unbounded") {
                std::thread::sleep(settle);
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err("no migration job on the source after 30 s".into())
    }

    fn state(&self, uri: &str) -> String {
        Command::new("virsh")
            .args(["-q", "-c", uri, "domstate", DOM])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    }

    /// `virsh domstate --reason` on `uri` (`paused (post-copy failed)`), or virsh's error.
    fn state_reason(&self, uri: &str) -> String {
        Command::new("virsh")
            .args(["-q", "-c", uri, "domstate", "--reason", DOM])
            .output()
            .map(|o| {
                let out = String::from_utf8_lossy(&o.stdout).trim().to_string();
                if out.is_empty() {
                    String::from_utf8_lossy(&o.stderr).trim().to_string()
                } else {
                    out
                }
            })
            .unwrap_or_default()
    }

    /// The PID in a pid file of the lab (`dst/daemon.pid`, `dst/run/qemu/labvm.pid`).
    fn pid(&self, rel: &str) -> Result<String, String> {
        std::fs::read_to_string(self.dir.join(rel))
            .map(|p| p.trim().to_string())
            .map_err(|e| format!("{rel}: {e}"))
    }

    /// SIGKILLs the lab's QEMU of `side` (`src`, `dst`), if its pid file names one that
    /// really is this lab's QEMU (no PID-reuse accident).
    fn kill_qemu(&self, side: &str) -> CaseResult {
        let pid = self.pid(&format!("{side}/run/qemu/{DOM}.pid"))?;
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        let lab = format!("{}/", self.dir.display());
        ensure(
            cmdline.contains("qemu-system") && cmdline.contains(&lab),
            || format!("pid {pid} of {side}/run/qemu is not this lab's QEMU"),
        )?;
        kill("-KILL", &pid)
    }

    /// The heartbeat over `wait`: (before, after).
    fn beats_over(&self, wait: Duration) -> (u64, u64) {
        let b1 = self.last_beat();
        std::thread::sleep(wait);
        (b1, self.last_beat())
    }

    /// The heartbeat now and once it rose, or after `max`: a TCG guest on a loaded machine
    /// can miss a beat or two (for a check that it still runs; one that it stopped waits a
    /// fixed time with [`Lab::beats_over`]).
    fn beats_within(&self, max: Duration) -> (u64, u64) {
        let b1 = self.last_beat();
        let until = Instant::now() + max;
        loop {
            std::thread::sleep(Duration::from_millis(250));
            let b2 = self.last_beat();
            if b2 > b1 || Instant::now() >= until {
                return (b1, b2);
            }
        }
    }

    fn console(&self) -> String {
        std::fs::read(self.dir.join(format!("console-{DOM}.log")))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    fn last_beat(&self) -> u64 {
        self.console()
            .lines()
            .rev()
            .filter_map(|l| l.strip_prefix("beat "))
            .find_map(|l| l.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    /// The guest runs where it should (`src`/`dst` states), its heartbeat keeps rising and
    /// its kernel did not crash.
    fn check_guest(&self, src_state: &str, dst_state: &str) -> CaseResult {
        let b1 = self.last_beat();
        std::thread::sleep(Duration::from_millis(2500));
        let b2 = self.last_beat();
        let (s, d) = (self.state(&self.src), self.state(&self.dst));
        let mut problems = Vec::new();
        if !s.starts_with(src_state) {
            problems.push(format!("source state {s:?}, expected {src_state:?}"));
        }
        if !d.starts_with(dst_state) {
            problems.push(format!("destination state {d:?}, expected {dst_state:?}"));
        }
        if b2 <= b1 {
            problems.push(format!("guest heartbeat stopped ({b1} -> {b2})"));
        }
        let console = self.console();
        if ["Kernel panic", "BUG:", "Oops"]
            .iter()
            .any(|p| console.contains(p))
        {
            problems.push("guest kernel crashed (see the console log)".into());
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

// ---------------------------------------------------------------------------------------
// Running vmctl

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Run {
    fn json(&self) -> Result<serde_json::Value, String> {
        serde_json::from_str(&self.stdout).map_err(|e| format!("stdout is not JSON ({e}):\n{self}"))
    }

    /// The JSON lines of `--progress json`.
    fn lines(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    fn summary_line(&self) -> Result<serde_json::Value, String> {
        self.lines()
            .into_iter()
            .find(|v| v["type"] == "summary")
            .ok_or_else(|| format!("no summary line:\n{self}"))
    }

    fn expect_code(&self, code: i32) -> CaseResult {
        if self.code == code {
            Ok(())
        } else {
            Err(format!(
                "exit code {} (expected {code}):\n{self}",
                self.code
            ))
        }
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The end is what tells: keep the last 6000 bytes of each stream.
        let tail = |s: &str| {
            let cut = s.len().saturating_sub(6000);
            let cut = (cut..s.len())
                .find(|i| s.is_char_boundary(*i))
                .unwrap_or(s.len());
            if cut > 0 {
                format!("[... {cut} bytes ...]{}", &s[cut..])
            } else {
                s.to_string()
            }
        };
        write!(
            f,
            "--- exit {} after {:.1} s\n--- stdout\n{}\n--- stderr\n{}",
            self.code,
            self.took.as_secs_f64(),
            tail(&self.stdout),
            tail(&self.stderr)
        )
    }
}

fn vmctl_cmd(args: &[&str]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// `vmctl migrate` of the busy guest under a 32 MiB/s cap and 30 ms max downtime, with
/// auto-converge (so it keeps going until something ends it), plus `extra` flags.
fn busy_migration<'a>(lab: &'a Lab, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "migrate",
        DOM,
        "--connect",
        &lab.src,
        "--to",
        &lab.dst,
        "--bandwidth",
        "32",
        "--max-downtime",
        "30",
        "--auto-converge",
    ];
    args.extend_from_slice(extra);
    args
}

/// Runs vmctl to its end, killing it after `limit` (a hang is a failure, not a stuck CI).
fn vmctl(args: &[&str], limit: Duration) -> Result<Run, String> {
    let child = vmctl_cmd(args)
        .spawn()
        .map_err(|e| format!("starting vmctl: {e}"))?;
    finish(child, Instant::now(), limit)
}

/// Waits for `child`, reading its output as it comes (a full pipe would block vmctl).
fn finish(mut child: Child, t0: Instant, limit: Duration) -> Result<Run, String> {
    fn drain<R: std::io::Read + Send + 'static>(
        pipe: Option<R>,
    ) -> std::thread::JoinHandle<String> {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut text);
            }
            text
        })
    }
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let mut hung = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if t0.elapsed() > limit => {
                hung = true;
                let _ = child.kill();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => return Err(format!("waiting for vmctl: {e}")),
        }
    };
    let run = Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        took: t0.elapsed(),
    };
    if hung {
        return Err(format!(
            "vmctl did not finish within {} s:\n{run}",
            limit.as_secs()
        ));
    }
    Ok(run)
}

/// `vmctl explain DOMAIN --connect URI -o json`: the cause id.
fn explain_cause(uri: &str) -> Result<String, String> {
    let r = vmctl(
        &["explain", DOM, "--connect", uri, "-o", "json"],
        Duration::from_secs(30),
    )?;
    let doc = r.json()?;
    doc["cause"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("explain without a cause:\n{r}"))
}

fn ensure(cond: bool, what: impl FnOnce() -> String) -> CaseResult {
    if cond { Ok(()) } else { Err(what()) }
}

// ---------------------------------------------------------------------------------------
// Cases that need no libvirt

fn dry_run_prints_flags_and_parameters() -> CaseResult {
    let r = vmctl(
        &[
            "migrate",
            DOM,
            "--connect",
            "qemu:///a",
            "--to",
            "qemu+ssh://b/system",
            "--allow-postcopy",
            "--bandwidth",
            "32",
            "--max-downtime",
            "500",
            "--dry-run",
        ],
        Duration::from_secs(20),
    )?;
    r.expect_code(0)?;
    for want in [
        "VIR_MIGRATE_LIVE | VIR_MIGRATE_PEER2PEER | VIR_MIGRATE_PERSIST_DEST | VIR_MIGRATE_POSTCOPY (0x800b)",
        "32 MiB/s in pre-copy",
        "300 ms at the start, raised up to 500 ms",
        "switch to post-copy, else raise the max downtime",
    ] {
        ensure(r.stdout.contains(want), || {
            format!("missing {want:?}:\n{r}")
        })?;
    }
    let r = vmctl(
        &[
            "migrate",
            DOM,
            "--connect",
            "qemu:///a",
            "--to",
            "qemu:///b",
            "--dry-run",
            "-o",
            "json",
        ],
        Duration::from_secs(20),
    )?;
    r.expect_code(0)?;
    let doc = r.json()?;
    ensure(
        doc["kind"] == "LibvirtMigrationPlan" && doc["plan"]["flags"] == 11,
        || format!("dry-run JSON:\n{r}"),
    )
}

fn without_libvirt_support_says_so() -> CaseResult {
    if cfg!(feature = "libvirt") {
        return Ok(()); // this build has it; the lab cases cover the rest
    }
    for args in [
        vec![
            "migrate",
            DOM,
            "--connect",
            "qemu:///a",
            "--to",
            "qemu:///b",
        ],
        vec!["abort", DOM, "--connect", "qemu:///a"],
    ] {
        let r = vmctl(&args, Duration::from_secs(20))?;
        r.expect_code(2)?;
        ensure(r.stderr.contains("built without libvirt support"), || {
            format!("{args:?}:\n{r}")
        })?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Lab cases

fn unknown_domain_and_unreachable_hosts(lab: &Lab) -> CaseResult {
    let r = vmctl(
        &[
            "migrate",
            "no-such-vm",
            "--connect",
            &lab.src,
            "--to",
            &lab.dst,
        ],
        Duration::from_secs(30),
    )?;
    r.expect_code(3)?;
    let nowhere = format!(
        "qemu+unix:///system?socket={}",
        lab.dir.join("nowhere/libvirt-sock").display()
    );
    let r = vmctl(
        &["migrate", DOM, "--connect", &nowhere, "--to", &lab.dst],
        Duration::from_secs(30),
    )?;
    r.expect_code(5)?;
    let r = vmctl(
        &["abort", DOM, "--connect", &nowhere],
        Duration::from_secs(30),
    )?;
    r.expect_code(5)?;
    // The source is fine but cannot reach the destination: nothing sent, exit 5.
    lab.guest(160, 16)?;
    let r = vmctl(
        &[
            "migrate",
            DOM,
            "--connect",
            &lab.src,
            "--to",
            &nowhere,
            "-o",
            "json",
        ],
        Duration::from_secs(60),
    )?;
    r.expect_code(5)?;
    ensure(r.json()?["cause"] == "connection-failure", || {
        format!("{r}")
    })?;
    // Nothing to abort.
    let r = vmctl(
        &["abort", DOM, "--connect", &lab.src],
        Duration::from_secs(30),
    )?;
    r.expect_code(1)?;
    ensure(r.stdout.contains("nothing to abort"), || format!("{r}"))?;
    lab.check_guest("running", "")
}

fn idle_guest_migrates_and_keeps_running(lab: &Lab) -> CaseResult {
    lab.guest(160, 16)?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let journal = dir.path().join("journal.sqlite").display().to_string();
    let r = vmctl(
        &[
            "migrate",
            DOM,
            "--connect",
            &lab.src,
            "--to",
            &lab.dst,
            "-o",
            "json",
            "--journal",
            &journal,
        ],
        Duration::from_secs(120),
    )?;
    r.expect_code(0)?;
    let doc = r.json()?;
    ensure(
        doc["outcome"] == "succeeded" && doc["kind"] == "LibvirtMigration",
        || format!("{r}"),
    )?;
    // Issue 33: it starts at once (nothing is measured before the start), and the total it
    // reports is the time the operator waited, libvirt's job time beside it.
    ensure(
        !r.stderr.contains("measuring the guest's dirty rate"),
        || format!("measured before the start:\n{r}"),
    )?;
    let total = doc["totalMs"].as_u64().unwrap_or(0);
    let job = doc["jobMs"].as_u64().unwrap_or(u64::MAX);
    let waited = r.took.as_millis() as u64;
    ensure(
        total <= waited && total + 300 >= waited && job <= total,
        || format!("totalMs {total}, jobMs {job}, waited {waited} ms:\n{r}"),
    )?;
    ensure(
        doc["message"]
            .as_str()
            .is_some_and(|m| m.contains("runs on lab-dst")),
        || format!("{r}"),
    )?;
    // Started at once, an idle guest's job (about 0.4 s) can end before the first sample:
    // then no mode line is printed, and the summary's final mode says it.
    ensure(
        r.stderr.contains("mode: pre-copy")
            || (doc["finalMode"] == "pre-copy"
                && doc["events"].as_array().is_some_and(|e| e.is_empty())),
        || format!("{r}"),
    )?;
    lab.check_guest("shut off", "running")?;
    let cause = explain_cause(&lab.src)?;
    ensure(cause == "succeeded", || {
        format!("explain on the source: {cause}")
    })?;
    // The run is in the journal (issue 28): `history` lists it with the data sent.
    let h = vmctl(
        &["history", "-A", "--journal", &journal, "-o", "json"],
        Duration::from_secs(30),
    )?;
    h.expect_code(0)?;
    let hist = h.json()?;
    let rec = &hist["records"][0];
    ensure(
        hist["matched"] == 1
            && rec["platform"] == "libvirt"
            && rec["vm"] == DOM
            && rec["outcome"] == "succeeded"
            && rec["recordedBy"] == "migrate"
            && rec["dataProcessedBytes"].as_i64() == doc["dataProcessed"].as_i64()
            && rec["dataProcessedBytes"].as_i64().is_some_and(|b| b > 0),
        || format!("{h}\n{r}"),
    )
}

fn busy_guest_is_aborted_early(lab: &Lab) -> CaseResult {
    // 64 MiB/s dirtied over a 32 MiB/s cap with 30 ms of downtime: pre-copy cannot converge.
    lab.guest(160, 64)?;
    let plain = |extra: &[&'static str]| -> Vec<String> {
        let mut args: Vec<String> = [
            "migrate",
            DOM,
            "--connect",
            &lab.src,
            "--to",
            &lab.dst,
            "--bandwidth",
            "32",
            "--max-downtime",
            "30",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    // The dry run predicts it, with what would make it complete.
    let dry = plain(&["--dry-run", "-o", "json"]);
    let r = vmctl(
        &dry.iter().map(String::as_str).collect::<Vec<_>>(),
        Duration::from_secs(60),
    )?;
    r.expect_code(0)?;
    let p = &r.json()?["prediction"];
    ensure(p["converges"] == false && p["completes"] == false, || {
        format!("{r}")
    })?;
    ensure(p["dirtyRateSource"] == "measured-before-start", || {
        format!("{r}")
    })?;
    ensure(
        p["dirtyRateBps"].as_u64().is_some_and(|d| d > 32 << 20),
        || format!("{r}"),
    )?;
    ensure(p["bandwidthBps"] == 32u64 << 20, || format!("{r}"))?;
    let flags: Vec<String> = p["alternatives"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| x["flags"][0].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    ensure(flags.contains(&"--allow-postcopy".to_string()), || {
        format!("{r}")
    })?;
    // Started at once (the default), the prediction comes from pass 1 and the controller
    // proves non-convergence from the pass starts, then aborts.
    let run = plain(&["-o", "json"]);
    let r = vmctl(
        &run.iter().map(String::as_str).collect::<Vec<_>>(),
        Duration::from_secs(200),
    )?;
    r.expect_code(1)?;
    let doc = r.json()?;
    ensure(doc["cause"] == "not-converging", || format!("{r}"))?;
    ensure(
        !r.stderr.contains("measuring the guest's dirty rate"),
        || format!("{r}"),
    )?;
    ensure(r.stderr.contains("prediction (from pass 1: "), || {
        format!("no prediction from pass 1:\n{r}")
    })?;
    // From the dirty set pass 2 starts with (each page once: a lower bound), in the report.
    ensure(
        doc["prediction"]["dirtyRateSource"] == "libvirt"
            && doc["prediction"]["dirtyRateBps"]
                .as_u64()
                .is_some_and(|d| d > 8 << 20),
        || format!("{r}"),
    )?;
    ensure(r.took < Duration::from_secs(40), || {
        format!("took too long:\n{r}")
    })?;
    lab.check_guest("running", "")?;
    // With --measure: nothing the flags allow completes it, refused before anything starts.
    let run = plain(&["--measure", "3"]);
    let r = vmctl(
        &run.iter().map(String::as_str).collect::<Vec<_>>(),
        Duration::from_secs(60),
    )?;
    r.expect_code(1)?;
    ensure(r.stdout.contains("migration refused (not started)"), || {
        format!("{r}")
    })?;
    ensure(r.stdout.contains("--allow-postcopy"), || format!("{r}"))?;
    ensure(!r.stderr.contains("mode: pre-copy"), || {
        format!("started anyway:\n{r}")
    })?;
    lab.check_guest("running", "")?;
    // --force: the controller proves it at pass 2's start (the rate measured before the
    // start and libvirt's agree) and aborts.
    let forced = plain(&["--measure", "3", "--force"]);
    let r = vmctl(
        &forced.iter().map(String::as_str).collect::<Vec<_>>(),
        Duration::from_secs(200),
    )?;
    r.expect_code(1)?;
    ensure(r.stdout.contains("migration failed"), || format!("{r}"))?;
    ensure(r.stdout.contains("cause:          not-converging"), || {
        format!("{r}")
    })?;
    ensure(r.stderr.contains("not converging: "), || format!("{r}"))?;
    // Proven and acted on long before KubeVirt's 150 s budget.
    ensure(r.took < Duration::from_secs(40), || {
        format!("took too long:\n{r}")
    })?;
    // Off a terminal: one greppable line per second, with the measured rate in pass 1.
    let lines: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("migration active, transferred "))
        .collect();
    ensure(lines.len() >= 6, || {
        format!("only {} status lines:\n{r}", lines.len())
    })?;
    ensure(lines[0].contains("(measured before start), pass 1"), || {
        format!("{r}")
    })?;
    lab.check_guest("running", "")?;
    let cause = explain_cause(&lab.src)?;
    ensure(cause == "not-converging", || format!("explain: {cause}"))?;
    // vmctl's record keeps the migration's progress (issue 27): explain documents it.
    let doc = vmctl(
        &["explain", DOM, "--connect", &lab.src, "-o", "json"],
        Duration::from_secs(30),
    )?
    .json()?;
    let points = doc["progressSeries"]["points"]
        .as_array()
        .map_or(0, Vec::len);
    ensure((6..=120).contains(&points), || {
        format!("{points} progress points in the record:\n{doc}")
    })
}

/// Issue 15: the prediction before the start holds on the lab. A guest dirtying 4 MiB/s
/// over a 32 MiB/s cap is predicted to converge and does, within 25 % of the predicted time;
/// the busy guest's samples carry the rate measured before the start from the first one.
fn predictions_hold_on_the_lab(lab: &Lab) -> CaseResult {
    lab.guest(160, 4)?;
    let args = [
        "migrate",
        DOM,
        "--connect",
        &lab.src,
        "--to",
        &lab.dst,
        "--bandwidth",
        "32",
        // Page sampling is noisy (128 pages of this guest): ten one-second readings, not three.
        "--measure",
        "10",
        "-o",
        "json",
    ];
    let r = vmctl(&args, Duration::from_secs(120))?;
    r.expect_code(0)?;
    let doc = r.json()?;
    ensure(doc["outcome"] == "succeeded", || format!("{r}"))?;
    let p = &doc["prediction"];
    ensure(
        p["converges"] == true && p["dirtyRateSource"] == "measured-before-start",
        || format!("{r}"),
    )?;
    let predicted = p["predictedSeconds"].as_f64().unwrap_or(0.0);
    // The migration's own time (totalMs also counts the 10 s of measuring).
    let took = doc["jobMs"].as_f64().unwrap_or(0.0) / 1000.0;
    ensure((predicted - took).abs() <= 0.25 * took, || {
        format!("predicted {predicted} s, took {took} s:\n{r}")
    })?;
    println!("    4 MiB/s over 32 MiB/s: predicted {predicted} s, took {took:.1} s");
    lab.check_guest("shut off", "running")?;

    // The busy guest, with post-copy allowed (so it completes) and --measure: its first
    // samples carry the rate measured before the start, non-zero, never an unlabelled 0.
    lab.guest(160, 64)?;
    let args = [
        "migrate",
        DOM,
        "--connect",
        &lab.src,
        "--to",
        &lab.dst,
        "--bandwidth",
        "32",
        "--max-downtime",
        "30",
        "--allow-postcopy",
        "--measure",
        "3",
        "--progress",
        "json",
    ];
    let r = vmctl(&args, Duration::from_secs(120))?;
    r.expect_code(0)?;
    let samples: Vec<serde_json::Value> = r
        .lines()
        .into_iter()
        .filter(|l| l["type"] == "sample")
        .collect();
    let first = samples.first().ok_or_else(|| format!("no samples:\n{r}"))?;
    ensure(
        first["elapsedMs"].as_u64().is_some_and(|ms| ms < 3000),
        || format!("{r}"),
    )?;
    ensure(
        first["dirtyRateSource"] == "measured-before-start"
            && first["dirtyRateBps"].as_u64().is_some_and(|d| d > 16 << 20),
        || format!("first sample: {first}\n{r}"),
    )?;
    ensure(
        samples.iter().all(|s| s["dirtyRateSource"] != "unknown"),
        || format!("a sample with an unknown rate:\n{r}"),
    )?;
    ensure(
        samples.iter().any(|s| s["dirtyRateSource"] == "libvirt"),
        || format!("libvirt's own rate never showed:\n{r}"),
    )?;
    lab.check_guest("shut off", "running")
}

fn busy_guest_completes_with_postcopy(lab: &Lab) -> CaseResult {
    lab.guest(160, 64)?;
    let r = vmctl(
        &[
            "migrate",
            DOM,
            "--connect",
            &lab.src,
            "--to",
            &lab.dst,
            "--bandwidth",
            "32",
            "--max-downtime",
            "30",
            "--allow-postcopy",
            "--progress",
            "json",
        ],
        Duration::from_secs(200),
    )?;
    r.expect_code(0)?;
    let summary = r.summary_line()?;
    ensure(
        summary["outcome"] == "succeeded" && summary["finalMode"] == "post-copy",
        || format!("{r}"),
    )?;
    let switched = r.lines().iter().any(|v| {
        v["type"] == "event"
            && v["text"]
                .as_str()
                .is_some_and(|t| t.contains("switch to post-copy"))
    });
    ensure(switched, || format!("no post-copy decision:\n{r}"))?;
    // Started at once: the prediction came from pass 1, before the switch.
    let texts: Vec<String> = r
        .lines()
        .iter()
        .filter(|v| v["type"] == "event")
        .filter_map(|v| v["text"].as_str().map(str::to_string))
        .collect();
    let predicted = texts
        .iter()
        .position(|t| t.starts_with("prediction (from pass 1: "));
    let switch = texts.iter().position(|t| t.contains("switch to post-copy"));
    ensure(predicted.is_some() && predicted < switch, || {
        format!("no prediction from pass 1 before the switch:\n{r}")
    })?;
    // 256 MiB over 32 MiB/s is 8 s; the issue's bar is 1.3x that.
    let job = summary["jobMs"].as_u64().unwrap_or(u64::MAX);
    ensure(job <= 10_400, || format!("took {job} ms (> 10.4 s):\n{r}"))?;
    // Issue 33: nothing is measured before the start, and the summary's total is the wait.
    // What the operator waits beyond libvirt's job is libvirt's own finish (the destination
    // resumes the guest: 1.4-2 s here, as long with `virsh migrate --postcopy`), not vmctl's:
    // before, 3 s of measuring came on top.
    ensure(
        !texts
            .iter()
            .any(|t| t.starts_with("measuring the guest's dirty rate")),
        || format!("measured before the start:\n{r}"),
    )?;
    let total = summary["totalMs"].as_u64().unwrap_or(0);
    let waited = r.took.as_millis() as u64;
    ensure(
        total <= waited && total + 300 >= waited && waited <= job + 3000,
        || format!("waited {waited} ms, totalMs {total}, jobMs {job}:\n{r}"),
    )?;
    lab.check_guest("shut off", "running")?;
    let cause = explain_cause(&lab.src)?;
    ensure(cause == "succeeded", || format!("explain: {cause}"))
}

fn busy_guest_completes_with_auto_converge(lab: &Lab) -> CaseResult {
    lab.guest(160, 64)?;
    let r = vmctl(
        &busy_migration(lab, &["--progress", "json"]),
        Duration::from_secs(240),
    )?;
    r.expect_code(0)?;
    let summary = r.summary_line()?;
    ensure(
        summary["outcome"] == "succeeded" && summary["finalMode"] == "pre-copy",
        || format!("{r}"),
    )?;
    let max_throttle = r
        .lines()
        .iter()
        .filter_map(|v| v["throttlePercent"].as_u64())
        .max()
        .unwrap_or(0);
    ensure(max_throttle >= 20, || format!("no throttle seen:\n{r}"))?;
    lab.check_guest("shut off", "running")
}

fn abort_returns_the_guest_to_the_source(lab: &Lab) -> CaseResult {
    lab.guest(160, 64)?;
    // A migration that keeps going (auto-converge: the controller waits for it).
    let t0 = Instant::now();
    let mut migrating = vmctl_cmd(&busy_migration(lab, &["-o", "json"]))
        .spawn()
        .map_err(|e| e.to_string())?;
    if let Err(e) = lab.migration_running(Duration::from_secs(2)) {
        let _ = migrating.kill();
        return Err(e);
    }
    let abort = vmctl(
        &["abort", DOM, "--connect", &lab.src],
        Duration::from_secs(90),
    )?;
    let migrate = finish(migrating, t0, Duration::from_secs(120))?;
    abort.expect_code(0)?;
    ensure(
        abort
            .stdout
            .contains("the guest runs on the source (lab-src) again"),
        || format!("{abort}"),
    )?;
    migrate.expect_code(1)?;
    ensure(migrate.json()?["cause"] == "aborted-by-request", || {
        format!("{migrate}")
    })?;
    lab.check_guest("running", "")?;
    let again = vmctl(
        &["abort", DOM, "--connect", &lab.src],
        Duration::from_secs(30),
    )?;
    again.expect_code(1)?;
    let cause = explain_cause(&lab.src)?;
    ensure(cause == "aborted-by-request", || {
        format!("explain: {cause}")
    })
}

fn ctrl_c_aborts_cleanly(lab: &Lab) -> CaseResult {
    lab.guest(160, 64)?;
    let t0 = Instant::now();
    let mut child = vmctl_cmd(&busy_migration(lab, &[]))
        .spawn()
        .map_err(|e| e.to_string())?;
    if let Err(e) = lab.migration_running(Duration::from_secs(2)) {
        let _ = child.kill();
        return Err(e);
    }
    let pid = child.id().to_string();
    let sent = Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .map_err(|e| e.to_string())?;
    ensure(sent.success(), || "kill -INT failed".into())?;
    let interrupted_at = t0.elapsed();
    let r = finish(child, t0, Duration::from_secs(120))?;
    r.expect_code(130)?;
    ensure(r.stderr.contains("Ctrl-C: aborting the migration"), || {
        format!("{r}")
    })?;
    ensure(r.stdout.contains("migration aborted"), || format!("{r}"))?;
    ensure(
        r.stdout.contains("runs on the source (lab-src) again"),
        || format!("{r}"),
    )?;
    ensure(r.took - interrupted_at < Duration::from_secs(20), || {
        format!("slow to stop:\n{r}")
    })?;
    lab.check_guest("running", "")
}

fn destination_killed(lab: &Lab) -> CaseResult {
    lab.guest(160, 64)?;
    let t0 = Instant::now();
    let mut child = vmctl_cmd(&busy_migration(lab, &["-o", "json"]))
        .spawn()
        .map_err(|e| e.to_string())?;
    if let Err(e) = lab.migration_running(Duration::from_secs(1)) {
        let _ = child.kill();
        return Err(e);
    }
    let pid = std::fs::read_to_string(lab.dir.join("dst/daemon.pid"))
        .map_err(|e| format!("dst daemon pid: {e}"))?;
    let killed = Command::new("kill")
        .args(["-KILL", pid.trim()])
        .status()
        .map_err(|e| e.to_string())?;
    ensure(killed.success(), || {
        "kill -KILL of the dst daemon failed".into()
    })?;
    let r = finish(child, t0, Duration::from_secs(150));
    // Whatever happened, bring the destination back for what follows.
    let restarted = lab.sh(&["daemons"]);
    let r = r?;
    restarted?;
    r.expect_code(1)?;
    let doc = r.json()?;
    ensure(doc["cause"] == "connection-failure", || format!("{r}"))?;
    ensure(
        doc["message"]
            .as_str()
            .is_some_and(|m| m.contains("runs on the source (lab-src) again")),
        || format!("{r}"),
    )?;
    lab.check_guest("running", "")?;
    let cause = explain_cause(&lab.src)?;
    ensure(cause == "connection-failure", || {
        format!("explain: {cause}")
    })
}

fn timeout_aborts_and_says_so(lab: &Lab) -> CaseResult {
    lab.guest(160, 64)?;
    let r = vmctl(
        &busy_migration(lab, &["--timeout", "5s"]),
        Duration::from_secs(90),
    )?;
    r.expect_code(6)?;
    ensure(r.stderr.contains("--timeout reached: aborting"), || {
        format!("{r}")
    })?;
    lab.check_guest("running", "")
}

/// A post-copy migration driven by virsh (post-copy throttled so it lasts): `vmctl abort`
/// must refuse, and the migration must still complete.
fn abort_is_refused_in_postcopy(lab: &Lab) -> CaseResult {
    lab.guest(160, 64)?;
    let mut virsh = Command::new("virsh")
        .args([
            "-q",
            "-c",
            &lab.src,
            "migrate",
            "--live",
            "--p2p",
            "--postcopy",
            "--postcopy-after-precopy",
            "--bandwidth",
            "32",
            "--postcopy-bandwidth",
            "1",
            DOM,
            &lab.dst,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("virsh migrate: {e}"))?;
    let t0 = Instant::now();
    let mut in_postcopy = false;
    while t0.elapsed() < Duration::from_secs(60) {
        let reason = Command::new("virsh")
            .args(["-q", "-c", &lab.src, "domstate", "--reason", DOM])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
            .unwrap_or_default();
        if reason.contains("post-copy") {
            in_postcopy = true;
            break;
        }
        if matches!(virsh.try_wait(), Ok(Some(_))) {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let abort = if in_postcopy {
        Some(vmctl(
            &["abort", DOM, "--connect", &lab.src],
            Duration::from_secs(30),
        ))
    } else {
        None
    };
    // Let virsh finish whatever happened.
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Ok(Some(status)) = virsh.try_wait() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = virsh.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    ensure(in_postcopy, || {
        "the virsh migration never showed post-copy".into()
    })?;
    let abort = abort.ok_or("no abort ran")??;
    abort.expect_code(1)?;
    ensure(abort.stdout.contains("refusing to abort"), || {
        format!("{abort}")
    })?;
    ensure(status.is_some_and(|s| s.success()), || {
        "the post-copy migration did not complete after the refused abort".into()
    })?;
    lab.check_guest("shut off", "running")
}

fn busy_guest_completes_when_paused(lab: &Lab) -> CaseResult {
    lab.guest(160, 64)?;
    let r = vmctl(
        &[
            "migrate",
            DOM,
            "--connect",
            &lab.src,
            "--to",
            &lab.dst,
            "--bandwidth",
            "32",
            "--max-downtime",
            "30",
            "--allow-pause",
            "-o",
            "json",
        ],
        Duration::from_secs(200),
    )?;
    r.expect_code(0)?;
    let doc = r.json()?;
    let paused = doc["events"].as_array().is_some_and(|events| {
        events.iter().any(|e| {
            e["text"]
                .as_str()
                .is_some_and(|t| t.contains("pause the guest"))
        })
    });
    ensure(paused, || format!("no pause decision:\n{r}"))?;
    // Paused by vmctl on the source, running on the destination afterwards.
    lab.check_guest("shut off", "running")
}

// ---------------------------------------------------------------------------------------
// Post-copy that breaks, a paused guest after a failure, parallel connections

/// How a post-copy migration is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Break {
    /// The QEMU-to-QEMU stream is reset (`ss -K` on the destination's migration ports): a
    /// failing network.
    Network,
    /// The destination's QEMU is killed (SIGKILL): a crashed destination.
    DestinationQemu,
    /// The destination's libvirtd is killed (SIGKILL); its QEMU lives on.
    DestinationDaemon,
    /// As `DestinationDaemon`, with post-copy slow (1 MiB/s), and Ctrl-C while vmctl follows
    /// the source still sending: vmctl stops watching at once and says what was left.
    DestinationDaemonThenCtrlC,
}

fn kill(signal: &str, pid: &str) -> CaseResult {
    let ok = Command::new("kill")
        .args([signal, pid])
        .status()
        .map_err(|e| format!("kill {signal} {pid}: {e}"))?;
    ensure(ok.success(), || format!("kill {signal} {pid} failed"))
}

/// Resets the TCP connections of the lab's migration stream (the destination's QEMU listens
/// on `dst_ports`; the other lab on this machine uses other ports). Err when none was found,
/// or this kernel cannot (`ss -K` needs CONFIG_INET_DIAG_DESTROY).
fn cut_migration_stream(lab: &Lab) -> CaseResult {
    let (lo, hi) = lab.dst_ports;
    let filter =
        format!("( dport >= :{lo} and dport <= :{hi} ) or ( sport >= :{lo} and sport <= :{hi} )");
    let count = || {
        Command::new("ss")
            .args(["-Htn", "state", "established", &filter])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).lines().count())
            .unwrap_or(0)
    };
    let before = count();
    ensure(before > 0, || {
        format!("no migration connection on ports {lo}-{hi} to cut")
    })?;
    let _ = Command::new("ss")
        .args(["-K", "-tn", "state", "established", &filter])
        .output();
    let after = count();
    ensure(after == 0, || {
        format!(
            "`ss -K` left {after} of {before} migration connections \
             (a kernel without CONFIG_INET_DIAG_DESTROY?)"
        )
    })
}

/// A busy guest migrated with post-copy allowed and post-copy throttled to 1 MiB/s (so that
/// it lasts seconds, not one); once vmctl switched, the migration is broken `how`. vmctl must
/// say where the guest is. The lab is put back afterwards, whatever happened.
fn postcopy_broken(lab: &Lab, how: Break) -> CaseResult {
    let result = postcopy_broken_run(lab, how);
    // A destination QEMU left waiting for pages would take `virsh destroy` 12 s to stop.
    let _ = lab.kill_qemu("dst");
    // Both daemons up (the killed one restarted), a fresh guest on the source.
    let restored = lab.guest(160, 16);
    result?;
    restored
}

fn postcopy_broken_run(lab: &Lab, how: Break) -> CaseResult {
    lab.guest(160, 64)?;
    // Post-copy slow enough to break in the middle: ~150 MiB is left at the switch. With only
    // the destination's daemon killed the QEMUs stream on to the end, so that case runs at
    // 4 MiB/s (~40 s) rather than 1 (~150 s: a CI run once took longer than vmctl's watch
    // then followed a source still sending).
    let postcopy_bandwidth = match how {
        Break::DestinationDaemon => "4",
        Break::Network | Break::DestinationQemu | Break::DestinationDaemonThenCtrlC => "1",
    };
    let t0 = Instant::now();
    let mut child = vmctl_cmd(&[
        "migrate",
        DOM,
        "--connect",
        &lab.src,
        "--to",
        &lab.dst,
        "--bandwidth",
        "32",
        "--max-downtime",
        "30",
        "--allow-postcopy",
        "--postcopy-bandwidth",
        postcopy_bandwidth,
        "--progress",
        "json",
    ])
    .spawn()
    .map_err(|e| format!("starting vmctl: {e}"))?;
    // vmctl switches when pre-copy cannot converge (after ~7 s here): the source says so.
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut in_postcopy = false;
    while Instant::now() < deadline {
        if lab.state_reason(&lab.src).contains("post-copy") {
            in_postcopy = true;
            break;
        }
        if matches!(child.try_wait(), Ok(Some(_))) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let ctrl_c_stop = Arc::new(AtomicBool::new(false));
    let broken = if in_postcopy {
        match how {
            Break::Network => cut_migration_stream(lab),
            Break::DestinationQemu => lab.kill_qemu("dst"),
            Break::DestinationDaemon => kill("-KILL", &lab.pid("dst/daemon.pid")?),
            Break::DestinationDaemonThenCtrlC => {
                kill("-KILL", &lab.pid("dst/daemon.pid")?).map(|()| {
                    // Ctrl-C every 500 ms until vmctl ends (while `finish` reads its output):
                    // those before libvirt fails the call are refused (post-copy), the first
                    // one after stops the watch.
                    let pid = child.id().to_string();
                    let stop = Arc::clone(&ctrl_c_stop);
                    std::thread::spawn(move || {
                        let until = Instant::now() + Duration::from_secs(60);
                        while Instant::now() < until && !stop.load(Ordering::SeqCst) {
                            let _ = kill("-INT", &pid);
                            std::thread::sleep(Duration::from_millis(500));
                        }
                    });
                })
            }
        }
    } else {
        Ok(())
    };
    let r = finish(child, t0, Duration::from_secs(240));
    ctrl_c_stop.store(true, Ordering::SeqCst);
    let r = r?;
    ensure(in_postcopy, || {
        format!("the source never showed post-copy:\n{r}")
    })?;
    broken.map_err(|e| format!("breaking the migration ({how:?}): {e}\n{r}"))?;
    r.expect_code(1)?;
    let summary = r.summary_line()?;
    let message = summary["message"].as_str().unwrap_or_default().to_string();
    let says = |texts: &[&str]| {
        ensure(texts.iter().all(|t| message.contains(t)), || {
            format!("the message does not say {texts:?}:\n{r}")
        })
    };
    ensure(
        summary["outcome"] == "failed" && summary["finalMode"] == "post-copy",
        || format!("{r}"),
    )?;
    let watched = r.lines().iter().any(|v| {
        v["type"] == "event"
            && v["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("libvirt failed the migration in post-copy"))
    });
    ensure(watched, || format!("no post-copy failure event:\n{r}"))?;
    let (src, dst) = (lab.state_reason(&lab.src), lab.state_reason(&lab.dst));
    let (b1, b2) = lab.beats_over(Duration::from_millis(2500));
    let state = || format!("source {src:?}, destination {dst:?}, beats {b1} -> {b2}\n{r}");
    match how {
        Break::Network if dst.starts_with("shut off") => {
            // The cut reached the destination's QEMU while it was still loading what the
            // source sent (seen on a loaded machine: "load of migration failed: Input/output
            // error"): it exits instead of pausing, and the guest is lost as when it is
            // killed. The message must say what the two sides show, not what was hoped for.
            ensure(summary["cause"] == "postcopy-failed", || format!("{r}"))?;
            says(&["the guest is lost", "Nothing can resume it", "start labvm"])?;
            ensure(!message.contains("--postcopy-resume"), || format!("{r}"))?;
            ensure(src == "paused (post-copy failed)", state)?;
            ensure(b2 == b1, || format!("the guest still beats: {}", state()))?;
        }
        Break::Network => {
            // Split: CPUs on the destination, the rest of the memory on the source.
            ensure(summary["cause"] == "postcopy-failed", || format!("{r}"))?;
            says(&[
                "NOT running anywhere whole",
                "the rest of its memory is only on lab-src (paused, post-copy failed)",
                "migrate --live --p2p --postcopy --postcopy-resume labvm",
                "destroy labvm",
            ])?;
            ensure(
                src == "paused (post-copy failed)" && dst.ends_with("(post-copy failed)"),
                state,
            )?;
            ensure(b2 == b1, || format!("the guest still beats: {}", state()))?;
        }
        Break::DestinationQemu => {
            // Lost: the destination's half is gone; nothing can resume it.
            ensure(summary["cause"] == "postcopy-failed", || format!("{r}"))?;
            says(&["the guest is lost", "Nothing can resume it", "start labvm"])?;
            ensure(!message.contains("--postcopy-resume"), || format!("{r}"))?;
            ensure(
                src == "paused (post-copy failed)" && !dst.starts_with("running"),
                state,
            )?;
            ensure(b2 == b1, || format!("the guest still beats: {}", state()))?;
        }
        Break::DestinationDaemon => {
            // The QEMUs streamed on: everything was sent; the guest runs whole in the
            // destination's QEMU, whose daemon is dead.
            ensure(summary["cause"] == "connection-failure", || format!("{r}"))?;
            says(&[
                "the source's QEMU had sent all of the guest's memory",
                "should run whole on",
            ])?;
            ensure(src == "shut off (migrated)", state)?;
            // 20 s: a TCG guest on a loaded 2-core machine can take a while after the
            // switch (10 s was seen to fall short once in CI, with the guest whole).
            let (b1, b2) = lab.beats_within(Duration::from_secs(20));
            ensure(b2 > b1, || {
                format!(
                    "the guest does not beat in 20 s ({b1} -> {b2}): {}",
                    state()
                )
            })?;
        }
        Break::DestinationDaemonThenCtrlC => {
            // Stopped watching while the source still sent (~150 MiB at 1 MiB/s), saying
            // what was left (and the pace, once 2 s of it were seen).
            ensure(summary["cause"] == "postcopy-failed", || format!("{r}"))?;
            says(&[
                "when vmctl stopped watching (Ctrl-C) after",
                "the source's QEMU was still sending the guest's memory",
                " MiB left",
                "domjobinfo labvm",
            ])?;
        }
    }
    if !matches!(
        how,
        Break::DestinationDaemon | Break::DestinationDaemonThenCtrlC
    ) {
        let cause = explain_cause(&lab.src)?;
        ensure(cause == "postcopy-failed", || {
            format!("explain on the source: {cause}")
        })?;
    }
    Ok(())
}

/// `--allow-pause`: vmctl pauses the busy guest, then Ctrl-C aborts the migration. The guest
/// must run on the source again, and vmctl must say who resumed it (libvirt does, as the job
/// ends: it resumes a guest that ran before the migration).
fn paused_guest_runs_again_after_ctrl_c(lab: &Lab) -> CaseResult {
    lab.guest(160, 64)?;
    let t0 = Instant::now();
    let mut child = vmctl_cmd(&[
        "migrate",
        DOM,
        "--connect",
        &lab.src,
        "--to",
        &lab.dst,
        "--bandwidth",
        "32",
        "--max-downtime",
        "30",
        "--allow-pause",
        "-o",
        "json",
    ])
    .spawn()
    .map_err(|e| format!("starting vmctl: {e}"))?;
    // The source reads `paused (migrating)` once vmctl paused it.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut paused = false;
    while Instant::now() < deadline {
        if lab.state_reason(&lab.src).starts_with("paused") {
            paused = true;
            break;
        }
        if matches!(child.try_wait(), Ok(Some(_))) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let interrupted = if paused {
        kill("-INT", &child.id().to_string())
    } else {
        Ok(())
    };
    let r = finish(child, t0, Duration::from_secs(120))?;
    ensure(paused, || {
        format!("the source never showed the guest paused:\n{r}")
    })?;
    interrupted?;
    r.expect_code(130)?;
    let doc = r.json()?;
    let event = |text: &str| {
        doc["events"].as_array().is_some_and(|events| {
            events
                .iter()
                .any(|e| e["text"].as_str().is_some_and(|t| t.contains(text)))
        })
    };
    ensure(event("pause the guest"), || {
        format!("no pause decision:\n{r}")
    })?;
    ensure(
        event("resumed the guest on the source (vmctl had paused it)"),
        || format!("no word of the resume:\n{r}"),
    )?;
    ensure(
        doc["stoppedBy"] == "interrupt" && doc["cause"] == "aborted-by-request",
        || format!("{r}"),
    )?;
    ensure(
        doc["message"]
            .as_str()
            .is_some_and(|m| m.contains("runs on the source (lab-src) again")),
        || format!("{r}"),
    )?;
    lab.check_guest("running", "")
}

/// QEMU's version on `uri` (`virsh version`: "Running hypervisor: QEMU 10.0.2").
fn qemu_version(uri: &str) -> Option<(u32, u32)> {
    let out = Command::new("virsh")
        .args(["-c", uri, "version"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let v = text
        .lines()
        .find_map(|l| l.split_once("Running hypervisor: QEMU "))?
        .1;
    let mut parts = v.trim().split('.').map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next()??))
}

/// `--parallel 2` (multifd) there and back; post-copy with it is refused before starting
/// where QEMU cannot combine them (10.0 and older).
fn parallel_connections(lab: &Lab) -> CaseResult {
    lab.guest(160, 16)?;
    let there = vmctl(
        &[
            "migrate",
            DOM,
            "--connect",
            &lab.src,
            "--to",
            &lab.dst,
            "--parallel",
            "2",
            "-o",
            "json",
        ],
        Duration::from_secs(120),
    )?;
    there.expect_code(0)?;
    let doc = there.json()?;
    let flags = doc["plan"]["flagNames"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    ensure(
        doc["outcome"] == "succeeded"
            && doc["plan"]["parallelConnections"] == 2
            && flags.iter().any(|f| f == "VIR_MIGRATE_PARALLEL"),
        || format!("{there}"),
    )?;
    lab.check_guest("shut off", "running")?;
    let back = [
        "migrate",
        DOM,
        "--connect",
        &lab.dst,
        "--to",
        &lab.src,
        "--parallel",
        "2",
    ];
    match qemu_version(&lab.dst) {
        Some(v) if v < (10, 1) => {
            let refused = vmctl(
                &[&back[..], &["--allow-postcopy"]].concat(),
                Duration::from_secs(60),
            )?;
            refused.expect_code(2)?;
            ensure(
                refused
                    .stderr
                    .contains("cannot combine post-copy with parallel connections (multifd)"),
                || format!("{refused}"),
            )?;
            // Refused before anything happened: the guest still runs where it was.
            let (s, d) = (lab.state(&lab.src), lab.state(&lab.dst));
            ensure(s == "shut off" && d == "running", || {
                format!("after the refusal: source {s:?}, destination {d:?}")
            })?;
        }
        v => println!("  (QEMU {v:?} on the lab: post-copy with --parallel not checked)"),
    }
    let r = vmctl(&back, Duration::from_secs(120))?;
    r.expect_code(0)?;
    lab.check_guest("running", "shut off")
}

// ---------------------------------------------------------------------------------------
// Pictures (issue 27)

/// A shell word: `s` in single quotes (the lab's URIs hold `?` and `=`).
fn shell_word(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `vmctl migrate` of the guest from `from` to `to` under a 32 MiB/s cap on a 120x40
/// pseudo-terminal (util-linux `script`, as tests/cli_migrate_tty.rs does for KubeVirt) with
/// `LANG=lang`; the terminal's output, raw, is kept in the lab as `migrate-tty-LANG.raw`.
fn migrate_on_a_terminal(lab: &Lab, from: &str, to: &str, lang: &str) -> Result<Run, String> {
    let cmd = format!(
        "stty cols 120 rows 40; exec {} migrate {DOM} --connect {} --to {} --bandwidth 32",
        shell_word(&bin()),
        shell_word(from),
        shell_word(to)
    );
    let child = Command::new("script")
        .args(["-qfec", &cmd, "/dev/null"])
        .env("NO_COLOR", "1")
        .env("COLUMNS", "120")
        .env("LANG", lang)
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting script(1) (util-linux): {e}"))?;
    let run = finish(child, Instant::now(), Duration::from_secs(120))?;
    let _ = std::fs::write(lab.dir.join(format!("migrate-tty-{lang}.raw")), &run.stdout);
    Ok(run)
}

/// The sparkline after the last `label` (the last frame): its cells, up to the two spaces
/// before the value.
fn last_sparkline<'a>(screen: &'a str, label: &str) -> &'a str {
    let rest = screen.rsplit_once(label).map_or("", |(_, rest)| rest);
    rest.split_once("  ").map_or(rest, |(cells, _)| cells)
}

const UNICODE_RAMP: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
const ASCII_RAMP: [char; 8] = ['_', '.', '-', '~', '=', '+', '*', '#'];

/// The terminal view of one migration: the sparkline lines under the bars (`memory left`
/// with several samples, pass marks, `sending`/`dirtying`), all drawn in `ramp`, and the
/// summary's `memory left:` row.
fn check_sparklines(r: &Run, lang: &str, ramp: &[char; 8]) -> CaseResult {
    check_sparklines_in(r, lang, ramp, true)
}

/// [`check_sparklines`], with or without the summary's row (`explain` has none).
fn check_sparklines_in(r: &Run, lang: &str, ramp: &[char; 8], summary: bool) -> CaseResult {
    let screen = &r.stdout;
    let drawn = |label: &str, min: usize| {
        let cells = last_sparkline(screen, label);
        ensure(
            cells.chars().count() >= min && cells.chars().all(|c| ramp.contains(&c)),
            || format!("{lang}: {label:?} is not a sparkline of {ramp:?}: {cells:?}\n{r}"),
        )
    };
    // A migration of several seconds: the last frame has several samples.
    drawn("  memory left  ", 3)?;
    drawn("  sending      ", 3)?;
    drawn("  dirtying     ", 3)?;
    let marks = screen
        .rsplit_once("  pass         ")
        .map_or("", |(_, rest)| rest);
    ensure(
        marks.trim_start().starts_with(|c: char| c.is_ascii_digit()),
        || format!("{lang}: no pass marks under the bars:\n{r}"),
    )?;
    if summary {
        drawn("  memory left:    ", 3)?;
    }
    Ok(())
}

/// Issue 27 on the lab: `vmctl migrate` on a terminal draws the sparklines under the bars
/// (Unicode blocks with a UTF-8 locale, ASCII with `LANG=C`) and its summary keeps one; the
/// record it leaves gives `explain --connect` its Progress sparklines, `-o html` its SVG
/// charts and `-o json` its `progressSeries`. 8 MiB/s dirtied over a 32 MiB/s cap converges
/// in a few passes (a saw-tooth): there under UTF-8, back under `LANG=C`. The terminal's raw
/// output is left in the lab (`migrate-tty-*.raw`), the page as `explain.html`
/// (docs/pictures/migrate-sparklines-lab.txt and explain-libvirt-lab.html were made from them).
fn terminal_sparklines_and_explain_charts(lab: &Lab) -> CaseResult {
    lab.guest(160, 8)?;
    let r = migrate_on_a_terminal(lab, &lab.src, &lab.dst, "C.UTF-8")?;
    r.expect_code(0)?;
    check_sparklines(&r, "C.UTF-8", &UNICODE_RAMP)?;
    lab.check_guest("shut off", "running")?;

    // A migration that succeeded leaves vmctl's record where the guest now runs.
    let html = vmctl(
        &["explain", DOM, "--connect", &lab.dst, "-o", "html"],
        Duration::from_secs(30),
    )?;
    html.expect_code(0)?;
    let _ = std::fs::write(lab.dir.join("explain.html"), &html.stdout);
    let page = &html.stdout;
    ensure(page.starts_with("<!DOCTYPE html>"), || format!("{html}"))?;
    ensure(page.matches("<polyline").count() >= 2, || {
        format!("no SVG charts in the page:\n{html}")
    })?;
    ensure(
        page.contains(r#"id="diagnosis""#)
            && page.contains("SUCCEEDED")
            && page.contains(DOM)
            && page.contains("lab-dst"),
        || format!("no diagnosis of {DOM} on lab-dst in the page:\n{html}"),
    )?;
    ensure(!page.contains("<script"), || format!("{html}"))?;
    let mut text = vmctl_cmd(&["explain", DOM, "--connect", &lab.dst]);
    text.env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE");
    let text = finish(
        text.spawn().map_err(|e| format!("starting vmctl: {e}"))?,
        Instant::now(),
        Duration::from_secs(30),
    )?;
    text.expect_code(0)?;
    ensure(text.stdout.contains("\nProgress (vmctl's record"), || {
        format!("no Progress section:\n{text}")
    })?;
    check_sparklines_in(&text, "explain", &UNICODE_RAMP, false)?;
    let json = vmctl(
        &["explain", DOM, "--connect", &lab.dst, "-o", "json"],
        Duration::from_secs(30),
    )?;
    let doc = json.json()?;
    ensure(doc["cause"] == "succeeded", || format!("{json}"))?;
    let points = doc["progressSeries"]["points"]
        .as_array()
        .map_or(0, Vec::len);
    ensure((3..=120).contains(&points), || {
        format!("{points} progress points in the record:\n{json}")
    })?;

    // Back under LANG=C: the same lines in ASCII, no block or box character anywhere.
    let r = migrate_on_a_terminal(lab, &lab.dst, &lab.src, "C")?;
    r.expect_code(0)?;
    check_sparklines(&r, "C", &ASCII_RAMP)?;
    ensure(
        !r.stdout
            .contains(|c| ('\u{2500}'..='\u{259f}').contains(&c)),
        || format!("LANG=C: a block or box-drawing character:\n{r}"),
    )?;
    lab.check_guest("running", "shut off")
}
