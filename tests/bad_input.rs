//! Bad input gets one clear line naming the file (and line), a non-zero exit, no panic.

use std::path::Path;
use std::process::{Command, Output};

fn vmctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .output()
        .expect("run vmctl")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_one_line_error(o: &Output, code: i32, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    // Warnings about the input may come first; then one error line (and its hint).
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        err.lines().all(|l| l.starts_with("error: ")
            || l.starts_with("warning: ")
            || l.starts_with("hint: ")),
        "{err}"
    );
    let first = errors[0];
    for n in needles {
        assert!(first.contains(n), "{first:?} lacks {n:?}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn malformed_yaml_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "vmis.yaml",
        "apiVersion: v1\nkind: List\nitems:\n- metadata: {name: x}}\n- metadata: {name: y}\n",
    );
    let o = vmctl(&["--from", &f, "status"]);
    assert_one_line_error(&o, 4, &[&format!("{f}:4:"), "invalid YAML"]);
}

#[test]
fn malformed_json_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "vmis.json",
        "{\n  \"kind\": \"List\",\n  \"items\": [,]\n}\n",
    );
    let o = vmctl(&["--from", &f, "status"]);
    assert_one_line_error(&o, 4, &[&format!("{f}:3:"), "invalid JSON"]);
}

#[test]
fn a_file_of_the_wrong_kind_says_what_it_found() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
    );
    let o = vmctl(&["--from", &f, "status"]);
    assert_one_line_error(
        &o,
        4,
        &[&f, "no object of a kind vmctl reads", "Deployment"],
    );
}

#[test]
fn an_empty_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let o = vmctl(&["--from", &d, "status"]);
    assert_one_line_error(&o, 4, &[&d, "no .yaml, .yml or .json file"]);
}

#[test]
fn a_missing_file_is_refused() {
    let o = vmctl(&["--from", "/nonexistent/cluster.yaml", "status"]);
    assert_one_line_error(
        &o,
        4,
        &["/nonexistent/cluster.yaml", "no such file or directory"],
    );
}

#[test]
fn a_field_of_the_wrong_type_names_the_object_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "vmi.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: vm-a, namespace: prod}\nspec: {domain: {memory: {guest: lots}}}\n",
    );
    // A command that needs the object fails naming it (status skips it, see below).
    let o = vmctl(&["--from", &f, "explain", "-n", "prod", "vm/vm-a"]);
    assert_one_line_error(
        &o,
        4,
        &[
            &f,
            "VirtualMachineInstance prod/vm-a",
            "spec.domain.memory.guest: invalid quantity",
        ],
    );
}

#[test]
fn a_bad_selector_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "n.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n",
    );
    let o = vmctl(&["--from", &f, "status", "-l", "a in b"]);
    assert_one_line_error(&o, 2, &["invalid selector"]);
}

#[test]
fn an_unknown_vm_suggests_close_names() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "vmi.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: database-01, namespace: prod}\n",
    );
    let o = vmctl(&["--from", &f, "status", "databse-01"]);
    assert_one_line_error(&o, 3, &["\"databse-01\" not found"]);
    assert!(
        stderr(&o).contains("did you mean database-01?"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_unreachable_cluster_names_the_resource_and_verb() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = write(
        dir.path(),
        "kubeconfig",
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:9'}\ncontexts:\n- name: c\n  context: {cluster: c, user: u, namespace: default}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: t}\n",
    );
    let o = vmctl(&[
        "--kubeconfig",
        &kubeconfig,
        "--request-timeout",
        "2",
        "status",
    ]);
    assert_one_line_error(
        &o,
        5,
        &["list", "cannot reach the API server at http://127.0.0.1:9"],
    );
}

#[test]
fn a_missing_kubeconfig_is_named() {
    let o = vmctl(&["--kubeconfig", "/nonexistent/kubeconfig", "status"]);
    assert_one_line_error(
        &o,
        4,
        &["/nonexistent/kubeconfig", "cannot read kubeconfig"],
    );
    // Once (issue 33: kube's text repeated it as `from '"/nonexistent/kubeconfig"'`).
    let err = stderr(&o);
    assert_eq!(err.matches("/nonexistent/kubeconfig").count(), 1, "{err}");
}

/// Issue 33: kube's text named the path twice, the second time as a quoted Rust string
/// (`failed to read kubeconfig from '"/x"'`), and a YAML error kept its source excerpt as
/// literal `\n`s.
#[test]
fn a_kubeconfig_problem_is_one_plain_line() {
    let home = tempfile::tempdir().unwrap();
    let run = |kubeconfig: &str| {
        Command::new(env!("CARGO_BIN_EXE_vmctl"))
            .arg("status")
            .env("NO_COLOR", "1")
            .env("HOME", home.path())
            .env("KUBECONFIG", kubeconfig)
            .env_remove("KUBERNETES_SERVICE_HOST")
            .output()
            .expect("run vmctl")
    };
    let o = run("/nonexistent/kc");
    assert_one_line_error(&o, 5, &["kubeconfig /nonexistent/kc: no such file"]);
    assert_eq!(
        stderr(&o).matches("/nonexistent/kc").count(),
        1,
        "{}",
        stderr(&o)
    );
    let bad = write(home.path(), "kc", "garbage: [\n");
    let o = run(&bad);
    assert_one_line_error(&o, 5, &["is not valid YAML: line 1 column 10"]);
    assert!(!stderr(&o).contains("\\n"), "{}", stderr(&o));
    let o = vmctl(&["--kubeconfig", &bad, "status"]);
    assert_one_line_error(&o, 4, &[&bad, "kubeconfig is not valid YAML"]);
    assert!(!stderr(&o).contains("\\n"), "{}", stderr(&o));
}

/// Issue 33: `--context nope` said only `failed to load current context: nope`; kubectl
/// does not list the contexts either. vmctl names them, the closest first.
#[test]
fn an_unknown_context_lists_the_contexts_that_exist() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = write(
        dir.path(),
        "kubeconfig",
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:9'}\ncontexts:\n- name: prod-east\n  context: {cluster: c, user: u}\n- name: staging\n  context: {cluster: c, user: u}\ncurrent-context: staging\nusers:\n- name: u\n  user: {token: t}\n",
    );
    let o = vmctl(&[
        "--kubeconfig",
        &kubeconfig,
        "--context",
        "prod-est",
        "status",
    ]);
    assert_one_line_error(
        &o,
        2,
        &[
            "--context \"prod-est\": no such context",
            "did you mean \"prod-east\"?",
            "it has: prod-east, staging",
        ],
    );
    // Through KUBECONFIG, the same answer.
    let o = Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args(["--context", "nope", "status"])
        .env("NO_COLOR", "1")
        .env("KUBECONFIG", &kubeconfig)
        .output()
        .expect("run vmctl");
    assert_one_line_error(&o, 2, &["--context \"nope\"", "it has: prod-east, staging"]);
}

// ---------------------------------------------------------------- reading is safe (issue 11)

/// A one-VMI cluster directory, enough for `status` to succeed.
fn small_cluster(dir: &Path) {
    write(
        dir,
        "vmis.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: a, namespace: ns, uid: u1}\nstatus: {phase: Running, nodeName: n1}\n",
    );
}

#[test]
fn a_fifo_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    small_cluster(dir.path());
    let fifo = dir.path().join("pipe.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    // Inside a directory, and as --from itself: both refused at once.
    let o = vmctl(&["--from", &dir.path().display().to_string(), "status"]);
    assert_one_line_error(
        &o,
        4,
        &["pipe.yaml", "a FIFO (named pipe)", "regular files"],
    );
    let o = vmctl(&["--from", &fifo.display().to_string(), "status"]);
    assert_one_line_error(&o, 4, &["a FIFO (named pipe)"]);
}

#[test]
fn a_device_is_refused() {
    let o = vmctl(&["--from", "/dev/zero", "status"]);
    assert_one_line_error(&o, 4, &["/dev/zero", "a device"]);
}

#[test]
fn symlink_loops_and_second_ways_to_a_file_are_read_once() {
    let dir = tempfile::tempdir().unwrap();
    small_cluster(dir.path());
    std::os::unix::fs::symlink("..", dir.path().join("loop")).unwrap();
    std::os::unix::fs::symlink(".", dir.path().join("self")).unwrap();
    std::os::unix::fs::symlink("vmis.yaml", dir.path().join("again.yaml")).unwrap();
    let o = vmctl(&[
        "--from",
        &dir.path().display().to_string(),
        "status",
        "-o",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let text = v.to_string();
    assert_eq!(
        text.matches("\"name\":\"a\"").count(),
        1,
        "one VM, read once: {text}"
    );
}

#[test]
fn the_input_size_is_limited_and_the_limit_can_be_raised() {
    let dir = tempfile::tempdir().unwrap();
    small_cluster(dir.path());
    let d = dir.path().display().to_string();
    let o = vmctl(&["--from", &d, "--max-input-size", "100", "status"]);
    assert_one_line_error(&o, 4, &["larger than 100 B in all", "--max-input-size"]);
    let o = vmctl(&["--from", &d, "--max-input-size", "1Mi", "status"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = vmctl(&["--from", &d, "--max-input-size", "lots", "status"]);
    assert_one_line_error(&o, 2, &["--max-input-size \"lots\""]);
}

#[test]
fn deep_yaml_flow_nesting_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "deep.yaml",
        &format!(
            "kind: VirtualMachineInstance\nspec: {}\n",
            "[".repeat(100_000)
        ),
    );
    // Refused at the 101st level (libyaml took quadratic time on this: benches/yaml.sh).
    let o = vmctl(&["--from", &f, "status"]);
    assert_one_line_error(
        &o,
        4,
        &[&format!("{f}:2:"), "nested deeper than 100 levels"],
    );
}

#[test]
fn durations_are_checked_not_wrapped() {
    for (flag, needle) in [
        ("213503982334602d", "longer than the 30 days"),
        ("18446744073709551615", "longer than the 30 days"),
        ("0s", "a timeout of 0"),
    ] {
        let o = vmctl(&[
            "--from",
            "examples/cluster",
            "-n",
            "dev",
            "migrate",
            "devbox-alice",
            "--dry-run",
            "--timeout",
            flag,
        ]);
        assert_one_line_error(&o, 2, &[needle]);
    }
    let o = vmctl(&[
        "--request-timeout",
        "0",
        "--from",
        "examples/cluster",
        "status",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn a_yaml_alias_bomb_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from(
        "kind: VirtualMachineInstance\nmetadata: {name: x}\na0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n",
    );
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 9].join(",");
        text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    text.push_str("spec: *a9\n");
    let f = write(dir.path(), "laughs.yaml", &text);
    let o = vmctl(&["--from", &f, "status"]);
    assert_one_line_error(
        &o,
        4,
        &[
            "laughs.yaml",
            "invalid YAML: aliases repeat more values than the file holds",
        ],
    );
}

/// An alias budget that grows with the document (serde_yaml's: 100 repetitions per event) let
/// an alias bomb in a 100 kB document make a 1.2 GB tree (found by tests/fuzz.rs). vmctl's
/// budget (no more values than a few times the file's bytes) refuses it early.
#[test]
fn an_alias_bomb_in_a_large_document_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec:\n");
    for i in 0..10_000 {
        text.push_str(&format!("  k{i}: v\n"));
    }
    text.push_str("  a0: &a0 [x,x,x,x,x,x,x,x,x]\n");
    for i in 1..8 {
        let refs = vec![format!("*a{}", i - 1); 9].join(",");
        text.push_str(&format!("  a{i}: &a{i} [{refs}]\n"));
    }
    let f = write(dir.path(), "laughs.yaml", &text);
    let o = vmctl(&["--from", &f, "status"]);
    assert_one_line_error(
        &o,
        4,
        &[
            "laughs.yaml",
            "aliases repeat more values than the file holds",
        ],
    );
}

#[test]
fn a_tenant_string_shaped_like_a_time_is_not_the_clock() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "vmis.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata:\n  name: a\n  namespace: ns\n  creationTimestamp: \"2026-11-29T02:00:00Z\"\n  labels: {stamp: \"2999-01-01T00:00:00Z\"}\n  annotations: {note: \"2999-01-01T00:00:00Z\"}\nstatus:\n  phase: Running\n  nodeName: n1\n  reason: \"2999-01-01T00:00:00Z\"\n",
    );
    let o = vmctl(&[
        "--from",
        &dir.path().display().to_string(),
        "status",
        "-o",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["asOf"], "2026-11-29T02:00:00Z", "{v:#}");
}

#[test]
fn a_misspelled_kind_and_a_duplicate_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    small_cluster(dir.path());
    write(
        dir.path(),
        "more.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstanceMigratoin\nmetadata: {name: m, namespace: ns}\n---\n\
         apiVersion: pool.kubevirt.io/v1alpha1\nkind: VirtualMachinePool\nmetadata: {name: p, namespace: ns}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: a, namespace: ns, uid: u1}\nstatus: {phase: Running, nodeName: n2}\n",
    );
    let o = vmctl(&["--from", &dir.path().display().to_string(), "status"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("kind \"VirtualMachineInstanceMigratoin\" skipped: vmctl does not read that kind (did you mean VirtualMachineInstanceMigration?)"),
        "{err}"
    );
    assert!(!err.contains("VirtualMachinePool"), "not a typo: {err}");
    assert!(
        err.contains("VirtualMachineInstance ns/a is there twice"),
        "{err}"
    );
    assert!(err.contains("the later is used"), "{err}");
}

#[test]
fn a_raw_control_character_is_located_and_an_event_is_an_event() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "vmis.yaml",
        "kind: VirtualMachineInstance\nmetadata:\n  name: a\n  namespace: \"x\u{1b}y\"\n",
    );
    let o = vmctl(&["--from", &f, "status"]);
    assert_one_line_error(
        &o,
        4,
        &[&format!("{f}:4:16"), "control character U+001B", "\\u001b"],
    );
    // The error line itself carries no raw control byte.
    assert!(!stderr(&o).contains('\u{1b}'));

    let f = write(
        dir.path(),
        "events.yaml",
        "apiVersion: v1\nkind: EventList\nitems:\n- {kind: Event, metadata: {namespace: x}}\n",
    );
    let o = vmctl(&["--from", &f, "status"]);
    assert_one_line_error(&o, 4, &["an Event has no metadata.name"]);
}

#[test]
fn one_malformed_object_costs_itself_in_status_not_the_fleet_view() {
    let dir = tempfile::tempdir().unwrap();
    small_cluster(dir.path());
    write(
        dir.path(),
        "broken.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: broken, namespace: ns, labels: {kubevirt.io/nodeName: n1}}\nstatus: {phase: Running, nodeName: n1, migrationState: {startTimestamp: yesterday}}\n",
    );
    let d = dir.path().display().to_string();
    let o = vmctl(&["--from", &d, "status", "-o", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["vmis"].as_array().map(Vec::len), Some(1), "{v:#}");
    let skipped = v["skipped"].to_string();
    assert!(
        skipped.contains("VirtualMachineInstance ns/broken") && skipped.contains("status."),
        "{skipped}"
    );
    assert!(
        stderr(&o).contains("warning: skipped, it does not decode:"),
        "{}",
        stderr(&o)
    );
    // A command that needs the object names it as the reason instead.
    write(
        dir.path(),
        "nodes.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n",
    );
    let o = vmctl(&["--from", &d, "plan-drain", "n1"]);
    assert_one_line_error(
        &o,
        4,
        &[
            "VirtualMachineInstance ns/broken",
            r#"status.migrationState.startTimestamp: "yesterday" is not an RFC 3339 time"#,
        ],
    );
}

/// The warnings of a `-o json` document (`warnings[]`, as strings or `{message}` objects).
fn json_warnings(v: &serde_json::Value) -> Vec<String> {
    v["warnings"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|w| match w.as_str() {
                    Some(s) => s.to_string(),
                    None => w["message"].as_str().unwrap_or_default().to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_time_field_that_is_not_a_time_is_warned_about_and_other_rfc3339_forms_count() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "vmis.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata:\n  name: a\n  namespace: ns\n  creationTimestamp: \"2026-11-29T02:00:00Z\"\nstatus:\n  phase: Running\n  nodeName: n1\n---\n\
         apiVersion: v1\nkind: Event\nmetadata: {name: e1, namespace: ns}\ninvolvedObject: {kind: VirtualMachineInstance, name: a, namespace: ns}\nreason: X\nmessage: m\n\
         eventTime: \"2026-11-29T04:30:00.123456+01:00\"\nlastTimestamp: \"2026-13-45T00:00:00Z\"\n",
    );
    let d = dir.path().display().to_string();
    for cmd in [
        vec!["status", "-o", "json"],
        vec!["explain", "vm/a", "-n", "ns", "-o", "json"],
    ] {
        let mut args = vec!["--from", d.as_str()];
        args.extend(cmd.iter().copied());
        let o = vmctl(&args);
        let err = stderr(&o);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{cmd:?}: {err}");
        let said = "Event ns/e1: lastTimestamp \"2026-13-45T00:00:00Z\" is not an RFC 3339 time";
        assert!(err.contains(said), "{cmd:?}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        // The MicroTime with an offset is the newest time: 03:30 UTC, to the second. The
        // impossible month is not a clock.
        assert_eq!(v["asOf"], "2026-11-29T03:30:00Z", "{cmd:?}");
        assert!(
            json_warnings(&v).iter().any(|w| w.contains(said)),
            "{cmd:?}: {:?}",
            v["warnings"]
        );
    }
}

#[test]
fn unknown_enum_values_are_warned_about_once_per_value_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..3 {
        text.push_str(&format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {{name: v{i}, namespace: ns, uid: u{i}, labels: {{kubevirt.io/nodeName: n1}}}}\n\
             spec: {{evictionStrategy: LiveMigrate}}\nstatus: {{phase: Hibernating, nodeName: n1}}\n---\n"
        ));
    }
    text.push_str(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstanceMigration\nmetadata: {name: m, namespace: ns, labels: {kubevirt.io/vmi-name: v0}}\nspec: {vmiName: v0}\nstatus: {phase: Exploded}\n---\n\
         apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n",
    );
    write(dir.path(), "all.yaml", &text);
    let d = dir.path().display().to_string();
    let phase = "VirtualMachineInstance ns/v0 and 2 more: status.phase \"Hibernating\" is not a value this vmctl knows";
    let vmim = "VirtualMachineInstanceMigration ns/m: status.phase \"Exploded\" is not a value this vmctl knows";
    for (cmd, wanted) in [
        (vec!["status", "-o", "json"], vec![phase, vmim]),
        (vec!["plan-drain", "n1", "-o", "json"], vec![phase, vmim]),
        (
            vec!["explain", "vm/v0", "-n", "ns", "-o", "json"],
            vec![vmim],
        ),
    ] {
        let mut args = vec!["--from", d.as_str()];
        args.extend(cmd.iter().copied());
        let o = vmctl(&args);
        let err = stderr(&o);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{cmd:?}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let in_json = json_warnings(&v);
        for w in wanted {
            assert_eq!(err.matches(w).count(), 1, "{cmd:?}: {err}");
            assert_eq!(
                in_json.iter().filter(|j| j.contains(w)).count(),
                1,
                "{cmd:?}: {in_json:?}"
            );
        }
    }
}

#[test]
fn status_names_a_temporary_policy_vmctl_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    let policy = |name: &str, created: &str| {
        format!(
            "apiVersion: migrations.kubevirt.io/v1alpha1\nkind: MigrationPolicy\nmetadata:\n  name: {name}\n  creationTimestamp: \"{created}\"\n  labels: {{app.kubernetes.io/managed-by: vmctl}}\n  annotations: {{vmctl.io/migration-of: ns/a}}\nspec: {{allowPostCopy: true}}\n---\n"
        )
    };
    let text = format!(
        "{}{}{}apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstanceMigration\nmetadata:\n  name: live\n  namespace: ns\n  creationTimestamp: \"2026-11-29T02:59:00Z\"\n  annotations: {{vmctl.io/temporary-migration-policy: vmctl-ns-a-busy}}\nspec: {{vmiName: a}}\nstatus: {{phase: Running}}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {{name: a, namespace: ns, creationTimestamp: \"2026-11-29T03:00:00Z\"}}\nstatus: {{phase: Running, nodeName: n1}}\n",
        policy("vmctl-ns-a-old", "2026-11-29T01:00:00Z"),
        policy("vmctl-ns-a-busy", "2026-11-29T02:58:00Z"),
        policy("vmctl-ns-a-new", "2026-11-29T02:59:30Z"),
    );
    write(dir.path(), "all.yaml", &text);
    let d = dir.path().display().to_string();
    let o = vmctl(&["--from", &d, "status", "-o", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let leftovers: Vec<&serde_json::Value> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "leftover-policy")
        .collect();
    // The one in use by a migration in flight, and the one just made, are not leftovers.
    assert_eq!(leftovers.len(), 1, "{:#}", v["warnings"]);
    assert_eq!(leftovers[0]["vmi"], "ns/a");
    let m = leftovers[0]["message"].as_str().unwrap();
    assert!(
        m.contains("MigrationPolicy vmctl-ns-a-old was made by vmctl 2h00m ago")
            && m.contains("it still allows post-copy")
            && m.ends_with("kubectl delete migrationpolicy vmctl-ns-a-old"),
        "{m}"
    );
    // The table shows it under Attention; another namespace's view does not judge it.
    let o = vmctl(&["--from", &d, "status"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.contains("kubectl delete migrationpolicy vmctl-ns-a-old"),
        "{out}"
    );
    let o = vmctl(&["--from", &d, "-n", "other", "status", "-o", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        !v["warnings"].to_string().contains("leftover-policy"),
        "{v:#}"
    );
}

#[test]
fn a_megabyte_value_is_not_echoed_by_a_yaml_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "big.yaml",
        &format!(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: !!int {}\n",
            "9".repeat(1_000_000)
        ),
    );
    let o = vmctl(&["--from", &f, "status"]);
    assert_one_line_error(&o, 4, &["big.yaml:4:", "invalid YAML: invalid u64"]);
    assert!(stderr(&o).len() < 400, "{}", stderr(&o).len());
}

#[test]
fn kubernetes_flags_are_refused_with_connect_not_ignored() {
    for args in [
        vec![
            "-n",
            "prod",
            "migrate",
            "vm",
            "--connect",
            "qemu:///a",
            "--to",
            "qemu:///b",
        ],
        vec![
            "abort",
            "vm",
            "--connect",
            "qemu:///a",
            "--now",
            "2026-11-29T03:00:00Z",
        ],
        vec![
            "--from",
            "examples/cluster",
            "abort",
            "vm",
            "--connect",
            "qemu:///a",
        ],
    ] {
        let o = vmctl(&args);
        assert_one_line_error(&o, 2, &["has no meaning with --connect"]);
    }
}

/// Issue 33 item 10: a must-gather directory holds files that are not Kubernetes objects
/// beside its dumps. Each is skipped with one warning that counts them; the rest is read.
/// A file that looks like Kubernetes but is broken still refuses the directory, naming it.
#[test]
fn a_directory_skips_files_that_hold_no_kubernetes_object_and_says_how_many() {
    let dir = tempfile::tempdir().unwrap();
    small_cluster(dir.path());
    // A config file, a plain list, a JSON scalar and JSON without kind: none of them
    // Kubernetes; a log and a text file are not even .yaml/.json.
    write(
        dir.path(),
        "gather-config.yaml",
        "since: 2h\nnamespaces: [prod]\n",
    );
    write(
        dir.path(),
        "images.yaml",
        "- quay.io/kubevirt/virt-launcher:v1.8.4\n",
    );
    write(dir.path(), "version.json", "\"v1.8.4\"\n");
    write(dir.path(), "meta.json", "{\"collected\": \"2026-11-29\"}\n");
    write(dir.path(), "virt-handler.log", "{level: info}\n");
    write(dir.path(), "notes.txt", "kind: Node\n");
    let d = dir.path().display().to_string();
    let o = vmctl(&["--from", &d, "status", "-A"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("ns "), "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    for needle in [
        "skipped 4 of 5 .yaml/.yml/.json files that hold no Kubernetes object",
        "gather-config.yaml",
        "images.yaml",
        "meta.json",
        "version.json",
    ] {
        assert!(warnings[0].contains(needle), "{needle:?}: {err}");
    }
    // Named alone, such a file is still refused (nothing else to read).
    let f = dir.path().join("gather-config.yaml").display().to_string();
    assert_one_line_error(
        &vmctl(&["--from", &f, "status"]),
        4,
        &[&f, "neither `kind` nor `items`"],
    );
    // A document that looks like Kubernetes but is broken is an error naming file and field.
    write(
        dir.path(),
        "broken.yaml",
        "apiVersion: kubevirt.io/v1\nmetadata: {name: vm-b, namespace: ns}\n",
    );
    assert_one_line_error(
        &vmctl(&["--from", &d, "status"]),
        4,
        &["broken.yaml", "neither `kind` nor `items`"],
    );
    std::fs::remove_file(dir.path().join("broken.yaml")).unwrap();
    write(
        dir.path(),
        "broken.json",
        "{\"kind\": \"VirtualMachineInstance\", \"metadata\": {\"namespace\": \"ns\"}}",
    );
    assert_one_line_error(
        &vmctl(&["--from", &d, "status"]),
        4,
        &["broken.json", "has no metadata.name"],
    );
}

/// Issue 33 (tried cold): `--from DIR abort VM` said "pick it with -n NAMESPACE, not -A" to
/// someone who never passed -A: a snapshot has no namespace of its own.
#[test]
fn a_namespace_asked_of_a_snapshot_does_not_blame_a_flag_not_given() {
    for command in [
        &["abort", "pg-orders-01", "--dry-run"][..],
        &["migrate", "pg-orders-01", "--dry-run"][..],
    ] {
        let mut args = vec!["--from", "examples/cluster"];
        args.extend_from_slice(command);
        let o = Command::new(env!("CARGO_BIN_EXE_vmctl"))
            .args(&args)
            .env("NO_COLOR", "1")
            .env("VMCTL_JOURNAL", "off")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("run vmctl");
        assert_one_line_error(
            &o,
            2,
            &["-n NAMESPACE", "--from has no namespace of its own"],
        );
        assert!(!stderr(&o).contains("not -A"), "{}", stderr(&o));
    }
}
