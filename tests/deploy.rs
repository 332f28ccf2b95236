//! The container image and the Job (issue 16): the Dockerfile is linted here (CI has no
//! container engine; `.ci/run` runs its build stage, deploy/build-release.sh, as a plain
//! script), and built for real where a Docker or Podman engine answers. The Job itself runs
//! in tests/rbac.rs (in-cluster configuration, TLS, a token).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One Dockerfile instruction: keyword (upper case), its text with continuations joined.
#[derive(Debug)]
struct Instruction {
    keyword: String,
    text: String,
}

fn instructions(dockerfile: &str) -> Vec<Instruction> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in dockerfile.lines() {
        let trimmed = line.trim();
        if current.is_empty() && (trimmed.is_empty() || trimmed.starts_with('#')) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head);
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                let (keyword, text) = current.split_once(' ').unwrap_or((&current, ""));
                out.push(Instruction {
                    keyword: keyword.to_ascii_uppercase(),
                    text: text.trim().to_string(),
                });
                current.clear();
            }
        }
    }
    assert!(current.is_empty(), "the Dockerfile ends in a continuation");
    out
}

/// A stage: `FROM image [AS name]` and what follows it.
#[derive(Debug)]
struct Stage {
    image: String,
    name: Option<String>,
    body: Vec<Instruction>,
}

fn stages(all: Vec<Instruction>) -> Vec<Stage> {
    let mut stages: Vec<Stage> = Vec::new();
    for i in all {
        if i.keyword == "FROM" {
            let words: Vec<&str> = i.text.split_whitespace().collect();
            let name = match words.as_slice() {
                [_, as_, name] if as_.eq_ignore_ascii_case("as") => Some(name.to_string()),
                [_] => None,
                other => panic!("FROM {other:?}: expected `FROM image [AS name]`"),
            };
            stages.push(Stage {
                image: words[0].to_string(),
                name,
                body: Vec::new(),
            });
        } else {
            let stage = stages.last_mut().unwrap_or_else(|| {
                panic!("{} before the first FROM", i.keyword);
            });
            stage.body.push(i);
        }
    }
    stages
}

fn dockerfile() -> Vec<Stage> {
    let text = std::fs::read_to_string(Path::new(ROOT).join("Dockerfile")).unwrap();
    stages(instructions(&text))
}

#[test]
fn the_dockerfile_builds_in_one_stage_and_runs_in_a_small_non_root_one() {
    let stages = dockerfile();
    assert_eq!(stages.len(), 2, "{stages:#?}");
    let (build, runtime) = (&stages[0], &stages[1]);
    // Every base image names a version: no `latest`, no tag-less image.
    for stage in &stages {
        let tag = stage
            .image
            .rsplit_once(':')
            .map(|(_, t)| t)
            .unwrap_or_else(|| panic!("{}: no tag", stage.image));
        assert!(tag != "latest" && !tag.contains('/'), "{}", stage.image);
    }
    // The build stage: Rust on Debian 12, running the script CI runs.
    assert_eq!(build.name.as_deref(), Some("build"));
    assert!(build.image.contains("/rust:") && build.image.ends_with("-bookworm"));
    let rust: Vec<u32> = build
        .image
        .rsplit_once(':')
        .unwrap()
        .1
        .trim_end_matches("-bookworm")
        .split('.')
        .map(|n| n.parse().unwrap())
        .collect();
    assert!(
        rust >= vec![1, 85],
        "edition 2024 needs Rust 1.85: {}",
        build.image
    );
    assert!(
        build
            .body
            .iter()
            .any(|i| i.keyword == "RUN" && i.text == "deploy/build-release.sh /out"),
        "{build:#?}"
    );
    // The runtime: the same Debian release's glibc, distroless, as a non-root user.
    assert!(
        runtime.image.starts_with("gcr.io/distroless/cc-debian12:"),
        "{}",
        runtime.image
    );
    let user = runtime
        .body
        .iter()
        .rfind(|i| i.keyword == "USER")
        .expect("USER");
    assert!(!["root", "0", "root:root", "0:0"].contains(&user.text.as_str()));
    // What it copies comes from the build stage, from where the script installs.
    let copies: Vec<&Instruction> = runtime
        .body
        .iter()
        .filter(|i| i.keyword == "COPY")
        .collect();
    assert!(!copies.is_empty());
    for copy in &copies {
        assert!(copy.text.starts_with("--from=build /out/"), "{copy:?}");
    }
    assert!(copies.iter().any(|c| c.text.ends_with(" /usr/local/bin/")));
    // ENTRYPOINT in exec form (a JSON array: signals reach vmctl, no shell in the image).
    let entry = runtime
        .body
        .iter()
        .rfind(|i| i.keyword == "ENTRYPOINT")
        .expect("ENTRYPOINT");
    let entry: Vec<String> = serde_json::from_str(&entry.text).expect("ENTRYPOINT [\"…\"]");
    assert_eq!(entry, ["/usr/local/bin/vmctl"]);
    // The build context leaves the target directory out.
    let ignore = std::fs::read_to_string(Path::new(ROOT).join(".dockerignore")).unwrap();
    assert!(ignore.lines().any(|l| l.trim() == "target/"));
}

#[test]
fn the_script_of_the_build_stage_installs_what_the_runtime_stage_copies() {
    let script = std::fs::read_to_string(Path::new(ROOT).join("deploy/build-release.sh")).unwrap();
    assert!(script.contains("cargo build --release --locked --bins"));
    assert!(script.contains("install_bin vmctl"));
    assert!(script.contains("ln -sf vmctl \"$out/bin/kubectl-vmctl\""));
    // Both names the image and the kubectl plugin need.
    let bins: Vec<String> = std::fs::read_dir(Path::new(ROOT).join("src/bin"))
        .unwrap()
        .map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    assert!(bins.iter().any(|b| b == "kubectl-vmctl"), "{bins:?}");
}

/// Every shared library the default build links is one distroless's cc-debian12 image has
/// (glibc, libgcc; the TLS is rustls and the allocator static), so the binary starts there.
#[test]
fn the_default_build_links_only_what_the_runtime_image_has() {
    let Ok(out) = Command::new("ldd")
        .arg(env!("CARGO_BIN_EXE_vmctl"))
        .output()
    else {
        eprintln!("SKIPPED: no ldd on this machine");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let in_image = [
        "linux-vdso.so.1",
        "libc.so.6",
        "libm.so.6",
        "libgcc_s.so.1",
        "libdl.so.2",
        "libpthread.so.0",
        "librt.so.1",
        "ld-linux-x86-64.so.2",
        "ld-linux-aarch64.so.1",
        "libstdc++.so.6",
        "libssl.so.3",
        "libcrypto.so.3",
    ];
    let mut linked = 0;
    for line in text.lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let file = name.rsplit('/').next().unwrap_or(name);
        assert!(
            in_image.contains(&file),
            "vmctl links {file}, which distroless/cc-debian12 does not have:\n{text}"
        );
        linked += 1;
    }
    assert!(linked >= 2, "ldd said: {text}");
}

/// The real build, where an engine answers (not on CI's machines: no Docker daemon there).
#[test]
fn the_image_builds_where_a_container_engine_runs() {
    let engine = ["docker", "podman"].into_iter().find(|e| {
        Command::new(e)
            .arg("info")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    });
    let Some(engine) = engine else {
        eprintln!(
            "SKIPPED: no Docker or Podman engine answers `info` here (the Dockerfile is linted above, and .ci/run runs its build stage's script)"
        );
        return;
    };
    let tag = "vmctl-test:build";
    let build = Command::new(engine)
        .args(["build", "-t", tag, "."])
        .current_dir(ROOT)
        .status()
        .unwrap();
    assert!(build.success());
    let run = Command::new(engine)
        .args(["run", "--rm", tag, "--version"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", common::stderr(&run));
    assert!(String::from_utf8_lossy(&run.stdout).starts_with("vmctl "));
}

/// deploy/record.yaml: `vmctl record` as one Deployment replica (Recreate: SQLite on a
/// ReadWriteOnce volume is one writer's), non-root, its journal on the PVC the file defines,
/// under a ServiceAccount bound to a read-only ClusterRole of the same file (tests/record.rs
/// checks that role against the requests the recorder makes).
#[test]
fn the_recorder_runs_as_one_recreated_non_root_replica_with_its_journal_on_a_pvc() {
    use clap::Parser;
    use serde_json::Value;

    let text = std::fs::read_to_string(Path::new(ROOT).join("deploy/record.yaml")).unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    let of_kind = |kind: &str| {
        let found: Vec<&Value> = docs.iter().filter(|d| d["kind"] == kind).collect();
        assert_eq!(found.len(), 1, "one {kind} in deploy/record.yaml");
        found[0]
    };
    let deployment = of_kind("Deployment");
    let namespace = deployment["metadata"]["namespace"].as_str().unwrap();
    assert_eq!(deployment["spec"]["replicas"], 1);
    assert_eq!(deployment["spec"]["strategy"]["type"], "Recreate");
    let pod = &deployment["spec"]["template"]["spec"];
    // The selector selects the template.
    for (k, v) in deployment["spec"]["selector"]["matchLabels"]
        .as_object()
        .unwrap()
    {
        assert_eq!(&deployment["spec"]["template"]["metadata"]["labels"][k], v);
    }

    // Who it runs as, bound to what, granting only reads.
    let sa = of_kind("ServiceAccount");
    assert_eq!(pod["serviceAccountName"], sa["metadata"]["name"]);
    assert_eq!(sa["metadata"]["namespace"], namespace);
    let binding = of_kind("ClusterRoleBinding");
    assert!(binding["subjects"].as_array().unwrap().iter().any(|s| {
        s["kind"] == "ServiceAccount"
            && s["name"] == sa["metadata"]["name"]
            && s["namespace"] == namespace
    }));
    let role = of_kind("ClusterRole");
    assert_eq!(binding["roleRef"]["kind"], "ClusterRole");
    assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
    for rule in role["rules"].as_array().unwrap() {
        for verb in rule["verbs"].as_array().unwrap() {
            assert!(
                ["get", "list", "watch"].contains(&verb.as_str().unwrap()),
                "a write in the recorder's role: {rule}"
            );
        }
        for res in rule["resources"].as_array().unwrap() {
            assert!(
                !res.as_str().unwrap().contains('*') && !res.as_str().unwrap().contains('/'),
                "no wildcard or subresource: {rule}"
            );
        }
    }

    // What it runs: vmctl's own arguments (the image's ENTRYPOINT is vmctl), which parse.
    let containers = pod["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    let container = &containers[0];
    assert!(container.get("command").is_none());
    let args: Vec<&str> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args,
        ["record", "-A", "--journal", "/var/lib/vmctl/journal.sqlite"]
    );
    let cli = vmctl::cli::Cli::try_parse_from(std::iter::once("vmctl").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("deploy/record.yaml's args do not parse: {e}"));
    assert!(matches!(cli.command, vmctl::cli::Command::Record(_)));

    // The journal's directory is the PVC's mount; the PVC is ReadWriteOnce.
    let mount = container["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mountPath"] == "/var/lib/vmctl")
        .expect("/var/lib/vmctl is mounted");
    let volume = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == mount["name"])
        .expect("the mounted volume");
    let pvc = of_kind("PersistentVolumeClaim");
    assert_eq!(
        volume["persistentVolumeClaim"]["claimName"],
        pvc["metadata"]["name"]
    );
    assert_eq!(pvc["metadata"]["namespace"], namespace);
    assert_eq!(pvc["spec"]["accessModes"][0], "ReadWriteOnce");

    // Non-root, nothing written but the volume, bounded.
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert!(
        pod["securityContext"]["fsGroup"].is_u64(),
        "the volume is writable by the user"
    );
    let sc = &container["securityContext"];
    assert_eq!(sc["readOnlyRootFilesystem"], true);
    assert_eq!(sc["allowPrivilegeEscalation"], false);
    assert_eq!(sc["capabilities"]["drop"][0], "ALL");
    assert!(container["resources"]["requests"]["memory"].is_string());
    assert!(container["resources"]["limits"]["memory"].is_string());
}
