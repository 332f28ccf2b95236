//! deploy/rbac.yaml allows what vmctl asks for: every request the read-only commands make is
//! allowed by `vmctl-readonly`, every request migrate and abort make by `vmctl-operator`
//! (checked against the fake API server's request log, as the API server's RBAC would).

mod common;
mod support;

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use serde::Deserialize;
use support::kubevirt_sim::{self, KubeVirtSim, Script};
use support::{FakeApiServer, RecordedRequest};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    #[serde(default)]
    api_groups: Vec<String>,
    #[serde(default)]
    resources: Vec<String>,
    #[serde(default)]
    non_resource_u_r_ls: Vec<String>,
    #[serde(default)]
    verbs: Vec<String>,
}

fn role(name: &str) -> Vec<Rule> {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/rbac.yaml"),
    )
    .unwrap();
    for v in serde_saphyr::from_multiple::<serde_json::Value>(&text).unwrap() {
        if v["kind"] == "ClusterRole" && v["metadata"]["name"] == name {
            // The key as written: nonResourceURLs.
            let rules = v["rules"].as_array().unwrap();
            return rules
                .iter()
                .map(|r| {
                    let list = |k: &str| -> Vec<String> {
                        r[k].as_array()
                            .map(|s| {
                                s.iter()
                                    .filter_map(|x| x.as_str().map(str::to_string))
                                    .collect()
                            })
                            .unwrap_or_default()
                    };
                    Rule {
                        api_groups: list("apiGroups"),
                        resources: list("resources"),
                        non_resource_u_r_ls: list("nonResourceURLs"),
                        verbs: list("verbs"),
                    }
                })
                .collect();
        }
    }
    panic!("no ClusterRole {name} in deploy/rbac.yaml");
}

/// (apiGroup, resource[/subresource]) of a request, as RBAC sees it; None for
/// non-resource URLs.
fn rbac_target(r: &RecordedRequest) -> Option<(String, String)> {
    let parts: Vec<&str> = r.path.split('/').filter(|p| !p.is_empty()).collect();
    let (group, rest) = match parts.as_slice() {
        ["api", "v1", rest @ ..] if !rest.is_empty() => (String::new(), rest.to_vec()),
        ["apis", group, _version, rest @ ..] if !rest.is_empty() => {
            (group.to_string(), rest.to_vec())
        }
        _ => return None,
    };
    let rest: Vec<&str> = match rest.as_slice() {
        ["namespaces", _ns, tail @ ..] if !tail.is_empty() => tail.to_vec(),
        other => other.to_vec(),
    };
    let resource = match rest.as_slice() {
        [plural] | [plural, _] => plural.to_string(),
        // Only the first segment after the name is the subresource.
        [plural, _name, sub, ..] => format!("{plural}/{sub}"),
        [] => return None,
    };
    Some((group, resource))
}

fn allowed(rules: &[Rule], r: &RecordedRequest) -> bool {
    match rbac_target(r) {
        Some((group, resource)) => rules.iter().any(|rule| {
            rule.verbs.iter().any(|v| v == r.verb || v == "*")
                && rule.api_groups.iter().any(|g| *g == group || g == "*")
                && rule.resources.iter().any(|x| *x == resource || x == "*")
        }),
        None => rules.iter().any(|rule| {
            rule.verbs.iter().any(|v| v == "get")
                && rule
                    .non_resource_u_r_ls
                    .iter()
                    .any(|u| match u.strip_suffix('*') {
                        Some(prefix) => r.path.starts_with(prefix),
                        None => *u == r.path,
                    })
        }),
    }
}

fn check(role_name: &str, requests: &[RecordedRequest]) {
    let rules = role(role_name);
    let denied: Vec<String> = requests
        .iter()
        .filter(|r| !allowed(&rules, r))
        .map(|r| format!("{} ({} {:?})", r.line(), r.verb, rbac_target(r)))
        .collect();
    assert!(
        denied.is_empty(),
        "{role_name} does not allow:\n{}",
        denied.join("\n")
    );
}

fn run(server: &FakeApiServer, args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let mut all: Vec<String> = vec!["--kubeconfig".into(), kubeconfig.display().to_string()];
    all.extend(args.iter().map(|s| s.to_string()));
    vmctl(all)
}

#[test]
fn the_read_only_commands_need_only_the_read_only_role() {
    let server = FakeApiServer::start_blocking(kubevirt_sim::cluster("v1.8.4"));
    let snapshot = tempfile::tempdir().unwrap();
    let file = snapshot.path().join("s.yaml");
    for args in [
        vec!["status", "-A"],
        vec!["status", "-n", "prod", "db-01", "-o", "json"],
        vec!["plan-drain", "node-1"],
        vec!["explain", "vm/db-01", "-n", "prod"],
        vec!["snapshot", "-A", file.to_str().unwrap()],
    ] {
        let out = run(&server, &args);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // status --watch, until Ctrl-C.
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let child = Command::new(env!("CARGO_BIN_EXE_vmctl"))
        .args([
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "status",
            "--watch",
            "-A",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(server.wait_for_watches(3, Duration::from_secs(10)));
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let _ = child.wait_with_output();
    let requests = server.requests();
    assert!(requests.len() > 10);
    assert!(requests.iter().any(|r| r.is_watch()));
    check("vmctl-readonly", &requests);
}

#[test]
fn migrate_and_abort_need_only_the_operator_role() {
    let mut objects = kubevirt_sim::cluster("v1.8.4");
    for o in objects.iter_mut() {
        if o["kind"] == "VirtualMachineInstance" && o["metadata"]["name"] == "batch-01" {
            o["status"]["evacuationNodeName"] = serde_json::json!("node-1");
        }
    }
    let server = Arc::new(FakeApiServer::start_blocking(objects));
    let sim = KubeVirtSim::start(&server, Script::default());
    let ok_run = |args: &[&str]| {
        let mut all = vec!["-n", "prod"];
        all.extend_from_slice(args);
        let out = run(&server, &all);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
    };
    ok_run(&["migrate", "db-01", "--allow-postcopy"]);
    // Cancel batch-01's evacuation first: a successful migration clears the mark itself.
    ok_run(&["abort", "--evacuation", "batch-01"]);
    ok_run(&["migrate", "batch-01", "--allow-auto-converge"]);
    sim.set_script(Script {
        hold_running: true,
        ..Script::default()
    });
    ok_run(&["migrate", "db-01", "--no-wait"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline
        && !server
            .objects(vmctl::cluster::Kind::VirtualMachineInstanceMigration)
            .iter()
            .any(|m| m["status"]["phase"] == "Running")
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    ok_run(&["abort", "db-01"]);
    let requests = server.requests();
    for (method, what) in [
        ("PUT", "/migrate"),
        ("POST", "/virtualmachineinstancemigrations"),
        ("PATCH", "/virtualmachineinstancemigrations/"),
        ("DELETE", "/virtualmachineinstancemigrations/"),
        ("POST", "/migrationpolicies"),
        ("DELETE", "/migrationpolicies/"),
        ("PUT", "/evacuate/cancel"),
        ("GET", "/proxy/metrics"),
    ] {
        assert!(
            requests
                .iter()
                .any(|r| r.method.as_str() == method && r.path.contains(what)),
            "no {method} {what} in the log"
        );
    }
    check("vmctl-operator", &requests);
    // And the read-only role would refuse the mutations.
    let rules = role("vmctl-readonly");
    assert!(requests.iter().any(|r| !allowed(&rules, r)));
}

#[test]
fn drain_needs_only_the_drainer_role_and_its_dry_run_only_the_read_only_role() {
    let server = Arc::new(FakeApiServer::start_blocking(kubevirt_sim::drain_cluster()));
    let _sim = KubeVirtSim::start(
        &server,
        Script {
            running_ticks: 8,
            ..Script::default()
        },
    );
    let flags = [
        "drain",
        "node-1",
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--allow-shutdowns",
    ];
    let mut dry = flags.to_vec();
    dry.push("--dry-run");
    let out = run(&server, &dry);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    check("vmctl-readonly", &server.requests());

    server.reset_requests();
    let out = run(&server, &flags);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let requests = server.requests();
    for (method, what) in [("PATCH", "/nodes/node-1"), ("POST", "/eviction")] {
        assert!(
            requests
                .iter()
                .any(|r| r.method.as_str() == method && r.path.contains(what)),
            "no {method} {what} in the log"
        );
    }
    check("vmctl-drainer", &requests);
    // The read-only role would refuse the cordon and the evictions.
    let rules = role("vmctl-readonly");
    assert!(requests.iter().any(|r| !allowed(&rules, r)));
}

/// The Job of deploy/job.yaml, run as a pod runs it: no kubeconfig, the in-cluster
/// configuration (KUBERNETES_SERVICE_HOST/PORT, and the token, CA and namespace at the fixed
/// path /var/run/secrets/kubernetes.io/serviceaccount/, put there in a private mount
/// namespace), against an API server that speaks TLS and demands the token. Its output is a
/// snapshot that reads back as the cluster, and every request it made is one the ServiceAccount's
/// role (bound in job.yaml) allows.
#[test]
fn the_job_runs_in_cluster_under_the_read_only_service_account() {
    // A private mount namespace needs root (CI runs as root); elsewhere, say so and stop.
    let unshare_ok = Command::new("unshare")
        .args(["--mount", "true"])
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !unshare_ok {
        eprintln!("SKIPPED: `unshare --mount` is not permitted here (needs root)");
        return;
    }
    let job = JobSpec::read();
    // The binding in job.yaml names a ClusterRole deploy/rbac.yaml defines.
    assert_eq!(job.service_account, "vmctl-readonly");
    assert_eq!(job.bound_role, "vmctl-readonly");
    assert_eq!(job.args, ["snapshot", "-A", "-o", "json", "-"]);

    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cluster");
    let objects = vmctl::cluster::files::read_path(&example)
        .unwrap()
        .objects
        .into_iter()
        .map(|o| o.value)
        .collect();
    let server = FakeApiServer::start_tls_blocking(objects, "job-token");

    let run_as_pod = |token: &str, ca: &str| {
        let sa = tempfile::tempdir().unwrap();
        std::fs::write(sa.path().join("token"), token).unwrap();
        std::fs::write(sa.path().join("ca.crt"), ca).unwrap();
        std::fs::write(sa.path().join("namespace"), &job.namespace).unwrap();
        let home = tempfile::tempdir().unwrap();
        // /var/run is /run on Debian: a tmpfs over it, in this process's namespace only.
        let run = std::fs::canonicalize("/var/run").unwrap();
        let script = "mount -t tmpfs tmpfs \"$RUN\" && \
                      mkdir -p \"$RUN/secrets/kubernetes.io/serviceaccount\" && \
                      cp \"$SA\"/* \"$RUN/secrets/kubernetes.io/serviceaccount/\" && \
                      exec \"$@\"";
        let mut command = Command::new("unshare");
        command
            .args([
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                script,
                "sh",
            ])
            .arg(env!("CARGO_BIN_EXE_vmctl"))
            .args(&job.args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("RUN", &run)
            .env("SA", sa.path())
            .env("KUBERNETES_SERVICE_HOST", "127.0.0.1")
            .env("KUBERNETES_SERVICE_PORT", server.addr().port().to_string());
        for (name, value) in &job.env {
            command.env(name, value);
        }
        command.output().unwrap()
    };

    let ca = server.ca_pem().unwrap().to_string();
    let out = run_as_pod("job-token", &ca);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert!(requests.len() > 5, "{requests:?}");
    assert!(requests.iter().all(|r| r.status != 401));
    assert!(requests.iter().all(|r| {
        r.headers
            .iter()
            .any(|(k, v)| k == "authorization" && v == "Bearer job-token")
    }));
    check(&job.bound_role, &requests);

    // The log is the snapshot: it reads back as the cluster it was taken of.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("snapshot.json");
    std::fs::write(&file, &out.stdout).unwrap();
    assert!(
        out.stdout
            .starts_with(b"{\"apiVersion\":\"vmctl/v1alpha1\",\"kind\":\"Snapshot\"")
    );
    // At one clock; the header (capture time, path) differs by design, the rest must not.
    let status_of = |from: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_vmctl"))
            .args(["--from", from, "status", "-A"])
            .env("NO_COLOR", "1")
            .env("VMCTL_NOW", "2026-11-29T03:00:00Z")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out).lines().skip(2).collect::<Vec<_>>().join("\n")
    };
    let from_snapshot = status_of(file.to_str().unwrap());
    assert!(from_snapshot.contains("pg-orders-01"), "{from_snapshot}");
    assert_eq!(from_snapshot, status_of("examples/cluster"));

    // A token the API server does not know: 401, said as the pod's problem, not a kubeconfig's.
    let out = run_as_pod("expired", &ca);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("service account token was refused"), "{err}");
    assert!(!err.contains("kubeconfig"), "{err}");

    // A CA that did not sign the server's certificate: the TLS handshake fails, and the hint
    // names what to check in a pod.
    let other = FakeApiServer::start_tls_blocking(Vec::new(), "x");
    let out = run_as_pod("job-token", other.ca_pem().unwrap());
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("ca.crt"), "{err}");
}

/// What deploy/job.yaml runs and as whom.
struct JobSpec {
    namespace: String,
    service_account: String,
    /// The ClusterRole the job's ClusterRoleBinding binds the ServiceAccount to.
    bound_role: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

impl JobSpec {
    fn read() -> JobSpec {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/job.yaml"),
        )
        .unwrap();
        let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text).unwrap();
        let of_kind = |kind: &str| {
            docs.iter()
                .find(|d| d["kind"] == kind)
                .unwrap_or_else(|| panic!("no {kind} in deploy/job.yaml"))
        };
        let job = of_kind("Job");
        let pod = &job["spec"]["template"]["spec"];
        let service_account = pod["serviceAccountName"].as_str().unwrap().to_string();
        let namespace = job["metadata"]["namespace"].as_str().unwrap().to_string();
        let sa = of_kind("ServiceAccount");
        assert_eq!(sa["metadata"]["name"], service_account.as_str());
        assert_eq!(sa["metadata"]["namespace"], namespace.as_str());
        let binding = of_kind("ClusterRoleBinding");
        assert!(
            binding["subjects"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["kind"] == "ServiceAccount"
                    && s["name"] == service_account.as_str()
                    && s["namespace"] == namespace.as_str()),
            "the ClusterRoleBinding does not bind {namespace}/{service_account}"
        );
        assert_eq!(binding["roleRef"]["kind"], "ClusterRole");
        let bound_role = binding["roleRef"]["name"].as_str().unwrap().to_string();
        let container = &pod["containers"][0];
        // The image's ENTRYPOINT is vmctl: the Job passes only the arguments.
        assert!(container.get("command").is_none());
        let args = container["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        let env = container["env"]
            .as_array()
            .map(|e| {
                e.iter()
                    .map(|v| {
                        (
                            v["name"].as_str().unwrap().to_string(),
                            v["value"].as_str().unwrap().to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        // Read-only all the way down: no write to the root filesystem, no privilege.
        assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
        assert_eq!(
            container["securityContext"]["allowPrivilegeEscalation"],
            false
        );
        assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
        JobSpec {
            namespace,
            service_account,
            bound_role,
            args,
            env,
        }
    }
}
