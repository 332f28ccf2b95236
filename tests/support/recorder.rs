//! `vmctl record` as the record tests run it (tests/record.rs, tests/drill_record.rs): the
//! real binary against a kubeconfig, its output collected line by line while it runs, the
//! simulator's quick script. Nothing is timed: every wait is for a line, with a bound.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::kubevirt_sim::Script;

/// The bound of every wait (against a hang, not a timing).
pub const WAIT: Duration = Duration::from_secs(60);

/// The simulator's quick migrations: one tick per phase, four running.
pub fn fast() -> Script {
    Script {
        phase_ticks: 1,
        running_ticks: 4,
        ..Script::default()
    }
}

/// The lines of `stream`, read on a thread of their own as they come.
pub fn collect(stream: impl std::io::Read + Send + 'static) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&lines);
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            sink.lock().unwrap().push(line);
        }
    });
    lines
}

/// A running `vmctl record -A`; killed when dropped.
pub struct Recorder {
    child: Child,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    /// `vmctl --kubeconfig K record -A --journal J` with colour off, none of the caller's
    /// KUBECONFIG / VMCTL_JOURNAL / VMCTL_CLUSTER_NAME, and `extra_env`; returns once it
    /// says it records. `vmctl` is the test's `env!("CARGO_BIN_EXE_vmctl")` (not known
    /// here: the benches include this module too).
    pub fn start(
        vmctl: &str,
        kubeconfig: &Path,
        journal: &str,
        extra_env: &[(&str, &str)],
    ) -> Recorder {
        let mut cmd = Command::new(vmctl);
        cmd.arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["record", "-A", "--journal", journal])
            .env("NO_COLOR", "1")
            .env_remove("KUBECONFIG")
            .env_remove("VMCTL_JOURNAL")
            .env_remove("VMCTL_CLUSTER_NAME")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdout = collect(child.stdout.take().unwrap());
        let stderr = collect(child.stderr.take().unwrap());
        let r = Recorder {
            child,
            stdout,
            stderr,
        };
        r.wait_for("the start", |r| r.err().contains("recording migrations"));
        r
    }

    pub fn out(&self) -> String {
        self.stdout.lock().unwrap().join("\n")
    }

    pub fn err(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    pub fn both(&self) -> String {
        format!("stdout:\n{}\nstderr:\n{}", self.out(), self.err())
    }

    pub fn wait_for(&self, what: &str, f: impl Fn(&Recorder) -> bool) {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if f(self) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("timed out waiting for {what}\n{}", self.both());
    }

    /// Until a line names `migration` (recorded).
    pub fn wait_recorded(&self, migration: &str) {
        self.wait_for(migration, |r| {
            r.out()
                .lines()
                .any(|l| l.contains(&format!(" {migration} ")))
        });
    }

    /// Sends `sig` (`-TERM`, `-INT`, `-KILL`) and waits for the exit: its code, None when
    /// killed by a signal.
    pub fn signal(&mut self, sig: &str) -> Option<i32> {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
        let sent = Instant::now();
        while sent.elapsed() < Duration::from_secs(30) {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the collecting threads read to the end.
                std::thread::sleep(Duration::from_millis(200));
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("still running 30 s after {sig}\n{}", self.both());
    }

    /// SIGTERM, and it exits 0.
    pub fn stop(&mut self) {
        let code = self.signal("-TERM");
        assert_eq!(code, Some(0), "{}", self.both());
    }

    pub fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
