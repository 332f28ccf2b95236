//! The `-o html` reports in a real browser (issue 27 §3): headless Chromium (Debian's
//! `chromium`) loads each report from a file and dumps the DOM it built; the diagnosis, the
//! tables and the charts (inline SVG: the time axis's marks, the sparklines' polylines) are
//! in it, and the page asked the network for nothing.
//!
//! Chromium runs behind a proxy on loopback that answers 404 and logs every request, even
//! for loopback (`--proxy-bypass-list=<-loopback>`): a request the page made would reach
//! it (a control page with an external image proves that it does). Chromium's own
//! background requests (its updater, accounts) are told apart by their hosts.
//!
//! Without chromium (`$CHROMIUM`, else /usr/bin/chromium) the cases print `SKIPPED`, unless
//! `CI` or `VMCTL_REQUIRE_CHROMIUM=1` is set: then a missing browser fails them. Its own
//! main() (harness = false), so that the skip is printed, not captured.

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;

fn required() -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    ci || std::env::var("VMCTL_REQUIRE_CHROMIUM").is_ok_and(|v| v == "1")
}

/// The browser: `$CHROMIUM`, else /usr/bin/chromium, if it is a file.
fn chromium() -> Result<PathBuf, String> {
    let path = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "chromium not found at {} (set CHROMIUM, or install Debian's chromium)",
            path.display()
        ))
    }
}

type Case = fn(&Path);

fn main() -> ExitCode {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let cases: [(&str, Case); 4] = [
        (
            "the_proxy_sees_a_request_a_page_makes",
            the_proxy_sees_a_request_a_page_makes,
        ),
        (
            "the_explain_report_renders_with_its_diagnosis_and_time_axis",
            the_explain_report_renders_with_its_diagnosis_and_time_axis,
        ),
        (
            "the_plan_drain_report_renders_with_its_verdict_and_rows",
            the_plan_drain_report_renders_with_its_verdict_and_rows,
        ),
        (
            "sparklines_render_as_polylines_with_their_labels",
            sparklines_render_as_polylines_with_their_labels,
        ),
    ];
    let wanted: Vec<_> = cases
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f)))
        .collect();
    if wanted.is_empty() {
        return ExitCode::SUCCESS;
    }
    let browser = match chromium() {
        Ok(b) => b,
        Err(why) if required() => {
            println!(
                "FAILED: the headless Chromium cases: {why}; CI / VMCTL_REQUIRE_CHROMIUM=1 require it"
            );
            return ExitCode::FAILURE;
        }
        Err(why) => {
            println!(
                "SKIPPED: the headless Chromium cases ({} of them): {why}",
                wanted.len()
            );
            return ExitCode::SUCCESS;
        }
    };
    let mut failed = Vec::new();
    for (name, case) in wanted {
        let t0 = Instant::now();
        match std::panic::catch_unwind(|| case(&browser)) {
            Ok(()) => println!("test {name} ... ok ({:.1} s)", t0.elapsed().as_secs_f64()),
            Err(_) => {
                println!(
                    "test {name} ... FAILED ({:.1} s)",
                    t0.elapsed().as_secs_f64()
                );
                failed.push(*name);
            }
        }
    }
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        println!("failed: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}

/// A proxy on loopback that answers every request 404 and logs its request line.
struct Proxy {
    port: u16,
    log: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    fn start() -> Proxy {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let seen = log.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut head = [0u8; 4096];
                let n = stream.read(&mut head).unwrap_or(0);
                let line = String::from_utf8_lossy(&head[..n])
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string();
                seen.lock().unwrap().push(line);
                let _ = stream.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        });
        Proxy { port, log }
    }

    /// The requests that are not Chromium's own background traffic (its component
    /// updater, network time, accounts: Google's service hosts).
    fn page_requests(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|line| {
                let target = line.split_whitespace().nth(1).unwrap_or("");
                let host = target
                    .split("://")
                    .nth(1)
                    .unwrap_or(target)
                    .split(['/', ':'])
                    .next()
                    .unwrap_or("");
                ![
                    ".google.com",
                    ".googleapis.com",
                    ".gvt1.com",
                    ".gstatic.com",
                ]
                .iter()
                .any(|own| host.ends_with(own))
            })
            .cloned()
            .collect()
    }
}

/// Runs chromium headless on `page` with `extra` (`--dump-dom`, `--screenshot=…`) behind
/// `proxy`; its stdout. Killed after 90 s.
fn browse(browser: &Path, proxy: &Proxy, page: &Path, extra: &[String]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("stdout");
    let out = std::fs::File::create(&out_path).unwrap();
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--no-pings",
            "--hide-scrollbars",
            "--proxy-bypass-list=<-loopback>",
        ])
        .arg(format!("--proxy-server=127.0.0.1:{}", proxy.port))
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium exited with {status}");
            break;
        }
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish in 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::read_to_string(out_path).unwrap()
}

/// A report vmctl wrote, as a file.
fn report(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let out = vmctl(args);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        both(&out)
    );
    let path = dir.join(name);
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

fn cluster() -> String {
    example_cluster().display().to_string()
}

fn the_proxy_sees_a_request_a_page_makes(browser: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("control.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><p>control</p><img src=\"http://report.invalid/x.png\"/></body></html>",
    )
    .unwrap();
    let proxy = Proxy::start();
    let dom = browse(browser, &proxy, &page, &["--dump-dom".into()]);
    assert!(dom.contains("<p>control</p>"), "{dom}");
    let asked = proxy.page_requests();
    assert!(
        asked.iter().any(|l| l.contains("report.invalid/x.png")),
        "the control page's image was not seen: {asked:?}"
    );
}

fn the_explain_report_renders_with_its_diagnosis_and_time_axis(browser: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let from = cluster();
    let page = report(
        dir.path(),
        "explain.html",
        &[
            "--from",
            &from,
            "--now",
            EXAMPLE_NOW,
            "explain",
            "-n",
            "prod",
            "vm/pg-reporting-01",
            "--history",
            "-o",
            "html",
        ],
    );
    let proxy = Proxy::start();
    let dom = browse(browser, &proxy, &page, &["--dump-dom".into()]);
    for text in [
        "FAILED · data-plane · postcopy-failed",
        "The migration failed after it had switched to post-copy",
        "Next steps",
        "status.migrationState.failureReason",
        "History of VMI prod/pg-reporting-01",
    ] {
        assert!(dom.contains(text), "the rendered page lacks {text:?}");
    }
    // The time axis: an svg with the axis line, a mark (circle) per burst of events, the
    // tick labels and the start.
    assert!(dom.contains("<svg class=\"axis\""), "{dom}");
    assert!(dom.contains("time axis of 22 events over 5m33s"), "{dom}");
    assert!(dom.matches("<circle ").count() >= 3, "{dom}");
    assert!(dom.contains(">+5m00s</text>"), "{dom}");
    assert!(dom.contains(">2026-11-29 02:20:30 UTC</text>"), "{dom}");
    // Nothing in the DOM refers outside the file, and the page asked for nothing.
    let lower = dom.to_ascii_lowercase();
    for bad in [
        "<script", "<img", "<link", "<iframe", " src=", " href=", "url(",
    ] {
        assert!(!lower.contains(bad), "{bad} in the rendered DOM");
    }
    assert_eq!(proxy.page_requests(), Vec::<String>::new());

    // A screenshot at 1000 pixels wide: a PNG of that width.
    let png = dir.path().join("explain.png");
    browse(
        browser,
        &proxy,
        &page,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1000,1400".into(),
        ],
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let width = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
    assert_eq!(width, 1000);
    assert!(bytes.len() > 20_000, "an empty page? {} bytes", bytes.len());
    assert_eq!(proxy.page_requests(), Vec::<String>::new());
}

fn the_plan_drain_report_renders_with_its_verdict_and_rows(browser: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let from = cluster();
    let page = report(
        dir.path(),
        "plan.html",
        &[
            "--from",
            &from,
            "--now",
            EXAMPLE_NOW,
            "plan-drain",
            "node-3",
            "-o",
            "html",
        ],
    );
    let proxy = Proxy::start();
    let dom = browse(browser, &proxy, &page, &["--dump-dom".into()]);
    for text in [
        "Drain of node-3: WILL BLOCK",
        "prod/legacy-erp-01",
        "blocks-drain",
        "dev/loadgen-01 → node-2",
        "PodDisruptionBudget prod/sip-gateway-pdb",
        "Waves on a time axis",
    ] {
        assert!(dom.contains(text), "the rendered page lacks {text:?}");
    }
    assert_eq!(proxy.page_requests(), Vec::<String>::new());
}

/// The sparklines of recorded samples (`render::svg::sparklines_svg`), in the page they
/// appear in, as Chromium draws them.
fn sparklines_render_as_polylines_with_their_labels(browser: &Path) {
    use vmctl::migration::classify::{CompletedJob, DomainStatus, JobEnd, classify};
    use vmctl::render::html::explain::{libvirt, pass_charts};

    let job = CompletedJob {
        end: JobEnd::Failed,
        error_message: Some("operation failed: migration out job: cancelled".into()),
        iteration: Some(4),
        ..Default::default()
    };
    let d = classify(&job, DomainStatus::Running).diagnosis("web-01", "src", DomainStatus::Running);
    let mib = |n: f64| n * 1024.0 * 1024.0;
    let remaining = [
        (1.0, mib(4096.0)),
        (2.0, mib(1800.0)),
        (3.0, mib(1500.0)),
        (4.0, mib(1490.0)),
    ];
    let dirty = [
        (1.0, mib(80.0)),
        (2.0, mib(95.0)),
        (3.0, mib(110.0)),
        (4.0, mib(120.0)),
    ];
    let sent = [
        (1.0, mib(110.0)),
        (2.0, mib(112.0)),
        (3.0, mib(111.0)),
        (4.0, mib(112.0)),
    ];
    let html = libvirt(
        &d,
        &job,
        ["web-01", "src", "qemu+ssh://src/system"],
        "2026-12-04T10:00:00Z",
        &pass_charts(&remaining, &dirty, &sent),
    );
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("libvirt.html");
    std::fs::write(&page, html).unwrap();
    let proxy = Proxy::start();
    let dom = browse(browser, &proxy, &page, &["--dump-dom".into()]);
    assert_eq!(dom.matches("<polyline ").count(), 3, "{dom}");
    for text in [
        "Remaining memory per pass",
        ">4.0 GiB</text>",
        ">1.5 GiB</text>",
        ">120.0 MiB/s</text>",
        ">80.0 MiB/s</text>",
        ">dirty rate</text>",
        ">throughput</text>",
        "Job statistics",
    ] {
        assert!(
            dom.contains(text),
            "the rendered page lacks {text:?}: {dom}"
        );
    }
    assert_eq!(proxy.page_requests(), Vec::<String>::new());
}
