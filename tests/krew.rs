//! The krew manifest (issue 16, item 1): `deploy/krew/vmctl.yaml` against krew's own
//! validation rules (ported from kubernetes-sigs/krew: `internal/index/validation/validate.go`,
//! `internal/installation/semver`, and `cmd/validate-krew-manifest`: every platform used, none
//! overlapping), and an install of a freshly packed archive done the way `krew install
//! --manifest=… --archive=…` does it (`internal/installation/install.go`, `move.go`,
//! `internal/download/downloader.go`): checksum, extraction of regular files and directories
//! only, the `files` operations, the `bin` link in `KREW_ROOT/bin`. Then the real kubectl finds
//! the plugin there and runs it. The archive is packed by `deploy/krew/package.sh` from the
//! debug binaries of this test run (no second release build in CI).

mod common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::*;
use serde::Deserialize;

const CURRENT_API_VERSION: &str = "krew.googlecontainertools.github.com/v1alpha2";
const PLUGIN_KIND: &str = "Plugin";
const VERSION: &str = env!("CARGO_PKG_VERSION");

// ---- krew's types (pkg/index/types.go) ----

// Stricter than krew (which ignores unknown fields): a misspelt field here is a bug.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Plugin {
    api_version: String,
    kind: String,
    metadata: Metadata,
    spec: PluginSpec,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Metadata {
    name: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PluginSpec {
    #[serde(default)]
    version: String,
    #[serde(default)]
    short_description: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    caveats: String,
    #[serde(default)]
    homepage: String,
    #[serde(default)]
    platforms: Vec<Platform>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Platform {
    #[serde(default)]
    uri: String,
    #[serde(default)]
    sha256: String,
    selector: Option<Selector>,
    files: Option<Vec<FileOperation>>,
    #[serde(default)]
    bin: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Selector {
    match_labels: Option<BTreeMap<String, String>>,
    match_expressions: Option<Vec<Requirement>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Requirement {
    key: String,
    operator: String,
    #[serde(default)]
    values: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileOperation {
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
}

fn parse_manifest(text: &str) -> Plugin {
    serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("the manifest does not parse: {e}"))
}

// ---- krew's validation (internal/index/validation/validate.go) ----

const WINDOWS_FORBIDDEN: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

/// `^[\w-]+$` (Go's `\w` is ASCII `[0-9A-Za-z_]`), and no Windows device name.
fn is_safe_plugin_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !WINDOWS_FORBIDDEN
            .iter()
            .any(|f| f.eq_ignore_ascii_case(name))
}

/// `^[a-f0-9]{64}$`.
fn is_valid_sha256(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// krew's `semver.Parse`: a leading `v`, then a semantic version.
fn parse_version(s: &str) -> Result<semver::Version, String> {
    let rest = s
        .strip_prefix('v')
        .ok_or_else(|| format!("version string {s:?} not starting with 'v'"))?;
    semver::Version::parse(rest).map_err(|e| format!("failed to parse plugin version: {e}"))
}

fn validate_plugin(name: &str, p: &Plugin) -> Result<(), String> {
    if p.api_version != CURRENT_API_VERSION {
        return Err(format!(
            "plugin manifest has apiVersion={:?}, not supported in this version of krew",
            p.api_version
        ));
    }
    if p.kind != PLUGIN_KIND {
        return Err(format!(
            "plugin manifest has kind={:?}, but only {PLUGIN_KIND:?} is supported",
            p.kind
        ));
    }
    if !is_safe_plugin_name(name) {
        return Err(format!("the plugin name {name:?} is not allowed"));
    }
    if p.metadata.name != name {
        return Err(format!(
            "plugin should be named {name:?}, not {:?}",
            p.metadata.name
        ));
    }
    if p.spec.short_description.is_empty() {
        return Err("should have a short description".into());
    }
    if p.spec.short_description.contains(['\r', '\n']) {
        return Err("should not have line breaks in short description".into());
    }
    if p.spec.platforms.is_empty() {
        return Err("should have a platform specified".into());
    }
    if p.spec.version.is_empty() {
        return Err("should have a version specified".into());
    }
    parse_version(&p.spec.version)?;
    for (i, platform) in p.spec.platforms.iter().enumerate() {
        validate_platform(platform)
            .map_err(|e| format!("platform [{i}] is badly constructed: {e}"))?;
    }
    Ok(())
}

fn validate_platform(p: &Platform) -> Result<(), String> {
    if p.uri.is_empty() {
        return Err("`uri` has to be set".into());
    }
    if p.sha256.is_empty() {
        return Err("`sha256` sum has to be set".into());
    }
    if !is_valid_sha256(&p.sha256) {
        return Err(format!("`sha256` value {} is not valid", p.sha256));
    }
    if p.bin.is_empty() {
        return Err("`bin` has to be set".into());
    }
    if let Some(files) = &p.files {
        if files.is_empty() {
            return Err("`files` has to be unspecified or non-empty".into());
        }
        for op in files {
            if op.from.is_empty() {
                return Err("`files`: `from` field has to be set".into());
            }
            if op.to.is_empty() {
                return Err("`files`: `to` field has to be set".into());
            }
        }
    }
    validate_selector(p.selector.as_ref())
}

fn validate_selector(sel: Option<&Selector>) -> Result<(), String> {
    let sel = sel.ok_or("nil selector is not supported")?;
    let expressions = sel.match_expressions.as_deref().unwrap_or_default();
    if sel.match_labels.is_none() && expressions.is_empty() {
        return Err("empty selector is not supported".into());
    }
    let keys = sel
        .match_labels
        .iter()
        .flat_map(|m| m.keys())
        .chain(expressions.iter().map(|e| &e.key));
    for key in keys {
        if key != "os" && key != "arch" {
            return Err(format!("key {key:?} not supported"));
        }
    }
    if sel.match_labels.as_ref().is_some_and(BTreeMap::is_empty) {
        return Err("`matchLabels` specified but empty".into());
    }
    if sel.match_expressions.as_ref().is_some_and(Vec::is_empty) {
        return Err("`matchExpressions` specified but empty".into());
    }
    Ok(())
}

/// `metav1.LabelSelectorAsSelector(sel).Matches({os, arch})`; an invalid selector matches
/// nothing (as `selectorMatchesOSArch`).
fn selector_matches(sel: Option<&Selector>, os: &str, arch: &str) -> bool {
    let Some(sel) = sel else {
        // LabelSelectorAsSelector(nil) is labels.Nothing().
        return false;
    };
    let label = |key: &str| match key {
        "os" => Some(os),
        "arch" => Some(arch),
        _ => None,
    };
    let labels_match = sel
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| label(k) == Some(v.as_str()));
    let expressions_match = sel.match_expressions.iter().flatten().all(|e| {
        let value = label(&e.key);
        match e.operator.as_str() {
            "In" => !e.values.is_empty() && value.is_some_and(|v| e.values.iter().any(|x| x == v)),
            "NotIn" => {
                !e.values.is_empty() && value.is_none_or(|v| !e.values.iter().any(|x| x == v))
            }
            "Exists" => e.values.is_empty() && value.is_some(),
            "DoesNotExist" => e.values.is_empty() && value.is_none(),
            _ => false,
        }
    });
    labels_match && expressions_match
}

/// The `<os, arch>` pairs krew supports (`cmd/validate-krew-manifest`'s `allPlatforms`).
const ALL_PLATFORMS: [(&str, &str); 11] = [
    ("windows", "386"),
    ("windows", "amd64"),
    ("windows", "arm64"),
    ("linux", "386"),
    ("linux", "amd64"),
    ("linux", "arm"),
    ("linux", "arm64"),
    ("linux", "ppc64le"),
    ("darwin", "386"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
];

/// `validate-krew-manifest` without its install step: the file is `<name>.yaml`, the plugin
/// is valid, every platform matches a supported `<os, arch>`, none is matched twice.
fn validate_manifest_file(path: &Path, p: &Plugin) -> Result<(), String> {
    if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
        return Err(format!(
            "expected manifest extension \".yaml\": {}",
            path.display()
        ));
    }
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or("no file name")?;
    validate_plugin(name, p).map_err(|e| format!("plugin validation error: {e}"))?;
    for (i, platform) in p.spec.platforms.iter().enumerate() {
        if !ALL_PLATFORMS
            .iter()
            .any(|(os, arch)| selector_matches(platform.selector.as_ref(), os, arch))
        {
            return Err(format!(
                "spec.platform[{i}]'s selector doesn't match any supported platforms"
            ));
        }
    }
    for (os, arch) in ALL_PLATFORMS {
        let matching: Vec<usize> = (0..p.spec.platforms.len())
            .filter(|&i| selector_matches(p.spec.platforms[i].selector.as_ref(), os, arch))
            .collect();
        if matching.len() > 1 {
            return Err(format!(
                "multiple spec.platforms (at indexes {matching:?}) have overlapping selectors that select {os}/{arch}"
            ));
        }
    }
    Ok(())
}

fn manifest_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/krew/vmctl.yaml")
}

#[test]
fn the_committed_manifest_passes_krews_validation() {
    let path = manifest_path();
    let text = std::fs::read_to_string(&path).unwrap();
    let plugin = parse_manifest(&text);
    validate_manifest_file(&path, &plugin).unwrap();

    // vmctl's own expectations.
    assert_eq!(
        plugin.spec.version,
        format!("v{VERSION}"),
        "the version follows Cargo.toml"
    );
    assert!(!plugin.spec.homepage.is_empty() && !plugin.spec.description.is_empty());
    assert!(
        plugin.spec.caveats.contains("vmctl-readonly") && plugin.spec.caveats.contains("rbac.yaml"),
        "{}",
        plugin.spec.caveats
    );
    for (os, arch) in [
        ("linux", "amd64"),
        ("linux", "arm64"),
        ("darwin", "amd64"),
        ("darwin", "arm64"),
    ] {
        let platform = plugin
            .spec
            .platforms
            .iter()
            .find(|p| selector_matches(p.selector.as_ref(), os, arch))
            .unwrap_or_else(|| panic!("no platform for {os}/{arch}"));
        assert_eq!(platform.bin, "kubectl-vmctl");
        assert!(
            platform
                .uri
                .ends_with(&format!("/v{VERSION}/vmctl-v{VERSION}-{os}-{arch}.tar.gz")),
            "{}",
            platform.uri
        );
        let files: Vec<&str> = platform
            .files
            .iter()
            .flatten()
            .map(|f| f.from.as_str())
            .collect();
        for file in ["kubectl-vmctl", "kubectl_complete-vmctl", "vmctl"] {
            assert!(files.contains(&file), "{os}/{arch} lacks {file}: {files:?}");
        }
    }
    // The version in the caveats' paths follows too.
    assert!(
        !text.contains("/store/vmctl/v") || text.contains(&format!("/store/vmctl/v{VERSION}/"))
    );
}

#[test]
fn krews_rules_refuse_what_krew_refuses() {
    let good = parse_manifest(&std::fs::read_to_string(manifest_path()).unwrap());
    let path = manifest_path();
    let broken = |change: &dyn Fn(&mut Plugin)| {
        let mut p = good.clone();
        change(&mut p);
        validate_manifest_file(&path, &p).err().unwrap_or_default()
    };
    type Change = Box<dyn Fn(&mut Plugin)>;
    let cases: Vec<(&str, Change)> = vec![
        (
            "apiVersion",
            Box::new(|p| p.api_version = "krew.googlecontainertools.github.com/v1alpha1".into()),
        ),
        ("kind", Box::new(|p| p.kind = "Plugins".into())),
        (
            "should be named",
            Box::new(|p| p.metadata.name = "vm-ctl".into()),
        ),
        (
            "short description",
            Box::new(|p| p.spec.short_description.clear()),
        ),
        (
            "line breaks",
            Box::new(|p| p.spec.short_description.push('\n')),
        ),
        (
            "not starting with 'v'",
            Box::new(|p| p.spec.version = VERSION.into()),
        ),
        (
            "parse plugin version",
            Box::new(|p| p.spec.version = "v1.2".into()),
        ),
        (
            "should have a platform",
            Box::new(|p| p.spec.platforms.clear()),
        ),
        (
            "`sha256` value",
            Box::new(|p| p.spec.platforms[0].sha256 = "ABC".repeat(21) + "A"),
        ),
        ("`uri`", Box::new(|p| p.spec.platforms[1].uri.clear())),
        ("`bin`", Box::new(|p| p.spec.platforms[2].bin.clear())),
        (
            "unspecified or non-empty",
            Box::new(|p| p.spec.platforms[0].files = Some(vec![])),
        ),
        (
            "`to` field",
            Box::new(|p| {
                if let Some(f) = p.spec.platforms[0].files.as_mut() {
                    f[0].to.clear();
                }
            }),
        ),
        (
            "nil selector",
            Box::new(|p| p.spec.platforms[0].selector = None),
        ),
        (
            "empty selector",
            Box::new(|p| p.spec.platforms[0].selector = Some(Selector::default())),
        ),
        (
            "not supported",
            Box::new(|p| {
                if let Some(Selector {
                    match_labels: Some(m),
                    ..
                }) = p.spec.platforms[0].selector.as_mut()
                {
                    m.insert("distro".into(), "debian".into());
                }
            }),
        ),
        (
            "doesn't match any supported",
            Box::new(|p| {
                if let Some(Selector {
                    match_labels: Some(m),
                    ..
                }) = p.spec.platforms[0].selector.as_mut()
                {
                    m.insert("os".into(), "plan9".into());
                }
            }),
        ),
        (
            "overlapping selectors",
            Box::new(|p| {
                p.spec.platforms[1].selector = Some(Selector {
                    match_labels: None,
                    match_expressions: Some(vec![Requirement {
                        key: "os".into(),
                        operator: "In".into(),
                        values: vec!["linux".into()],
                    }]),
                });
            }),
        ),
    ];
    for (expected, change) in cases {
        let e = broken(change.as_ref());
        assert!(
            e.contains(expected),
            "expected an error with {expected:?}, got {e:?}"
        );
    }
    assert!(
        !is_safe_plugin_name("com1")
            && !is_safe_plugin_name("a/b")
            && is_safe_plugin_name("get_all-x")
    );
}

// ---- krew install --manifest=… --archive=… ----

/// krew's `os/arch` for this machine.
fn host_platform() -> (&'static str, &'static str) {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    (os, arch)
}

fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `downloader.suspiciousPath`.
fn suspicious(path: &str) -> Option<String> {
    if path.contains("..") {
        return Some(format!(
            "refusing to unpack archive with suspicious entry {path:?}"
        ));
    }
    if path.starts_with('/') || path.starts_with('\\') {
        return Some(format!(
            "refusing to unpack archive with absolute entry {path:?}"
        ));
    }
    None
}

/// `extractTARGZ`: directories and regular files only, nothing suspicious. The gzip layer is
/// the system's `gzip -dc` (an unoptimised inflate of ~200 MB of debug binaries is slow).
fn extract_tar_gz(archive: &Path, into: &Path) -> Result<(), String> {
    let mut gunzip = Command::new("gzip")
        .arg("-dc")
        .arg(archive)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("gzip: {e}"))?;
    let stdout = gunzip.stdout.take().ok_or("gzip: no stdout")?;
    let mut tar = tar::Archive::new(stdout);
    let entries = tar
        .entries()
        .map_err(|e| format!("tar extraction error: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("tar extraction error: {e}"))?;
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let kind = entry.header().entry_type();
        if name == "pax_global_header" || kind == tar::EntryType::XGlobalHeader {
            continue;
        }
        if let Some(e) = suspicious(&name) {
            return Err(e);
        }
        let path = into.join(&name);
        match kind {
            tar::EntryType::Directory => {
                std::fs::create_dir_all(&path).map_err(|e| e.to_string())?;
            }
            tar::EntryType::Regular => {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
                }
                let mode = entry.header().mode().map_err(|e| e.to_string())?;
                let mut bytes = Vec::new();
                entry.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
                std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
                    .map_err(|e| e.to_string())?;
            }
            other => {
                return Err(format!(
                    "unable to handle file type {other:?} for {name:?} in tar"
                ));
            }
        }
    }
    let status = gunzip.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("gzip -dc {}: {status}", archive.display()));
    }
    Ok(())
}

/// Go's `filepath.Clean(p) == p` for a relative path.
fn is_clean(p: &str) -> bool {
    p == "."
        || (!p.is_empty()
            && !p.ends_with('/')
            && !p.contains("//")
            && Path::new(p)
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::ParentDir)))
}

/// `path` stays under `base` (`pathutil.IsSubPath`), lexically.
fn is_sub_path(base: &Path, path: &Path) -> bool {
    let mut depth: i64 = 0;
    for c in path
        .strip_prefix(base)
        .map(Path::components)
        .into_iter()
        .flatten()
    {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    path.starts_with(base)
}

/// A `*`/`?` glob of one path segment (the patterns krew's manifests use for `from`).
fn glob_matches(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some('?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

/// `findMoveTargets`: a direct move when `from` names a file, else a glob; every move stays
/// inside both directories.
fn move_targets(
    from_dir: &Path,
    to_dir: &Path,
    op: &FileOperation,
) -> Result<Vec<(PathBuf, PathBuf)>, String> {
    if !is_clean(&op.to) {
        return Err(format!("the provided path is not clean: {:?}", op.to));
    }
    let direct = from_dir.join(&op.from);
    if direct.exists() {
        let to = if op.to == "." {
            to_dir.join(direct.file_name().ok_or("no file name")?)
        } else {
            to_dir.join(&op.to)
        };
        if !is_sub_path(from_dir, &direct) || !is_sub_path(to_dir, &to) {
            return Err(format!(
                "can't move, move target {direct:?} -> {to:?} is out of bounds"
            ));
        }
        return Ok(vec![(direct, to)]);
    }
    let (dir, pattern) = match op.from.rsplit_once('/') {
        Some((dir, pattern)) => (from_dir.join(dir), pattern),
        None => (from_dir.to_path_buf(), op.from.as_str()),
    };
    let new_dir = to_dir.join(&op.to);
    let mut moves = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if glob_matches(pattern, &name) {
            let to = new_dir.join(&name);
            if !is_sub_path(from_dir, &entry.path()) || !is_sub_path(to_dir, &to) {
                return Err(format!("can't move, move target {name:?} is not a subpath"));
            }
            moves.push((entry.path(), to));
        }
    }
    if moves.is_empty() {
        return Err(format!(
            "no files in the plugin archive matched the glob pattern={}",
            op.from
        ));
    }
    Ok(moves)
}

/// `krew install --manifest=… --archive=…` for `<os, arch>` under `krew_root`: the link it
/// makes in `KREW_ROOT/bin`.
fn krew_install(
    plugin: &Plugin,
    archive: &Path,
    krew_root: &Path,
    os: &str,
    arch: &str,
) -> Result<PathBuf, String> {
    validate_plugin(&plugin.metadata.name, plugin)?;
    let platform = plugin
        .spec
        .platforms
        .iter()
        .find(|p| selector_matches(p.selector.as_ref(), os, arch))
        .ok_or_else(|| {
            format!(
                "plugin {:?} does not offer installation for this platform",
                plugin.metadata.name
            )
        })?;
    let bytes = std::fs::read(archive).map_err(|e| format!("{}: {e}", archive.display()))?;
    let sum = sha256_hex(&bytes);
    if sum != platform.sha256 {
        return Err(format!(
            "checksum does not match, want: {}, got {sum}",
            platform.sha256
        ));
    }
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Err("the archive is not gzip (zip archives are not simulated)".into());
    }
    drop(bytes);
    let staging = krew_root.join("downloads");
    std::fs::create_dir_all(&staging).map_err(|e| e.to_string())?;
    extract_tar_gz(archive, &staging)?;

    let install_dir = krew_root
        .join("store")
        .join(&plugin.metadata.name)
        .join(&plugin.spec.version);
    std::fs::create_dir_all(&install_dir).map_err(|e| e.to_string())?;
    let default_files = vec![FileOperation {
        from: "*".into(),
        to: ".".into(),
    }];
    for op in platform.files.as_ref().unwrap_or(&default_files) {
        for (from, to) in move_targets(&staging, &install_dir, op)? {
            if let Some(dir) = to.parent() {
                std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
            }
            std::fs::rename(&from, &to).map_err(|e| format!("move {from:?} -> {to:?}: {e}"))?;
        }
    }
    let bin = install_dir.join(&platform.bin);
    if !is_sub_path(&install_dir, &bin) {
        return Err(format!("the path {bin:?} does not extend {install_dir:?}"));
    }
    if !bin.is_file() {
        return Err(format!(
            "can't create symbolic link, source binary ({bin:?}) cannot be found in extracted archive"
        ));
    }
    let bin_dir = krew_root.join("bin");
    std::fs::create_dir_all(&bin_dir).map_err(|e| e.to_string())?;
    let link = bin_dir.join(format!(
        "kubectl-{}",
        plugin.metadata.name.replace('-', "_")
    ));
    std::os::unix::fs::symlink(&bin, &link).map_err(|e| e.to_string())?;
    Ok(link)
}

fn package_sh(args: &[&str], env: &[(&str, &str)]) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/krew/package.sh");
    let out = Command::new("bash")
        .arg(script)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(out.status.success(), "package.sh {args:?}: {}", both(&out));
    out
}

#[test]
fn a_packed_archive_installs_as_krew_installs_it_and_kubectl_runs_it() {
    let work = tempfile::tempdir().unwrap();
    let dist = work.path().join("dist");
    let dist_arg = dist.to_str().unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_vmctl")).parent().unwrap();
    let packed = package_sh(
        &["--bin-dir", bin_dir.to_str().unwrap(), "--out", dist_arg],
        &[("GZIP_LEVEL", "1")],
    );
    // "SUM  PATH", as sha256sum prints it.
    let line = stdout(&packed);
    let (printed_sum, archive) = line
        .trim()
        .split_once("  ")
        .unwrap_or_else(|| panic!("{line}"));
    let archive = PathBuf::from(archive);
    let (os, arch) = host_platform();
    assert_eq!(
        archive.file_name().and_then(|n| n.to_str()),
        Some(format!("vmctl-v{VERSION}-{os}-{arch}.tar.gz").as_str())
    );
    assert_eq!(printed_sum, sha256_hex(&std::fs::read(&archive).unwrap()));

    // The manifest rendered for that archive: its sum, the release URL of RELEASE_BASE_URL.
    let base = "https://releases.example.test/vmctl";
    let rendered = stdout(&package_sh(
        &["render", "--out", dist_arg],
        &[("RELEASE_BASE_URL", base)],
    ));
    let manifest_file = work.path().join("vmctl.yaml");
    std::fs::write(&manifest_file, &rendered).unwrap();
    let plugin = parse_manifest(&rendered);
    validate_manifest_file(&manifest_file, &plugin).unwrap();
    for platform in &plugin.spec.platforms {
        assert!(
            platform.uri.starts_with(&format!("{base}/v{VERSION}/")),
            "{}",
            platform.uri
        );
        let ours = selector_matches(platform.selector.as_ref(), os, arch);
        assert_eq!(platform.sha256 == printed_sum, ours, "{}", platform.uri);
    }

    // The committed manifest's placeholder sum is refused, as krew would.
    let committed = parse_manifest(&std::fs::read_to_string(manifest_path()).unwrap());
    let refused = krew_install(&committed, &archive, &work.path().join("refused"), os, arch);
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("checksum does not match")),
        "{refused:?}"
    );

    let krew_root = work.path().join("krew");
    let link = krew_install(&plugin, &archive, &krew_root, os, arch).unwrap();
    assert_eq!(link, krew_root.join("bin/kubectl-vmctl"));
    let store = krew_root.join(format!("store/vmctl/v{VERSION}"));
    for file in [
        "kubectl-vmctl",
        "kubectl_complete-vmctl",
        "vmctl",
        "README.md",
    ] {
        assert!(store.join(file).is_file(), "{file} not installed");
    }
    // krew-index's validation also wants a licence file among the installed files.
    if Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("LICENSE")
        .is_file()
    {
        assert!(store.join("LICENSE").is_file(), "LICENSE not installed");
    }
    // The caveats' completion step.
    std::os::unix::fs::symlink(
        store.join("kubectl_complete-vmctl"),
        krew_root.join("bin/kubectl_complete-vmctl"),
    )
    .unwrap();

    // kubectl with only KREW_ROOT/bin (and its own directory) on PATH.
    let kubectl = kubectl_binary();
    let mut path = vec![krew_root.join("bin")];
    path.extend(kubectl.parent().map(Path::to_path_buf));
    let path = std::env::join_paths(path).unwrap();
    let run = |args: &[&str]| {
        Command::new(&kubectl)
            .args(args)
            .env("PATH", &path)
            .env("NO_COLOR", "1")
            .env_remove("KUBECONFIG")
            .output()
            .unwrap()
    };
    let list = run(&["plugin", "list"]);
    assert!(
        stdout(&list).contains(&link.display().to_string()),
        "{}",
        both(&list)
    );
    assert!(!both(&list).contains("warning"), "{}", both(&list));

    let cluster = example_cluster();
    let cluster = cluster.to_str().unwrap();
    let status = run(&["vmctl", "--from", cluster, "status"]);
    assert_eq!(status.status.code(), Some(0), "{}", both(&status));
    assert_eq!(
        stdout(&status),
        stdout(&vmctl(["--from", cluster, "status"]))
    );
}

#[test]
fn krew_extraction_refuses_links_and_escapes() {
    let work = tempfile::tempdir().unwrap();
    // A tar with a symlink: krew handles regular files and directories only.
    let payload = work.path().join("payload");
    std::fs::create_dir(&payload).unwrap();
    std::fs::write(payload.join("kubectl-vmctl"), "#!/bin/sh\n").unwrap();
    std::os::unix::fs::symlink("kubectl-vmctl", payload.join("vmctl")).unwrap();
    let archive = work.path().join("links.tar.gz");
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "cd {} && tar -cf - kubectl-vmctl vmctl | gzip -1 > {}",
            payload.display(),
            archive.display()
        ))
        .status()
        .unwrap();
    assert!(status.success());
    let e = extract_tar_gz(&archive, &work.path().join("out")).unwrap_err();
    assert!(e.contains("unable to handle file type"), "{e}");

    assert!(suspicious("../etc/passwd").is_some());
    assert!(suspicious("/etc/passwd").is_some());
    assert!(suspicious("bin/kubectl-vmctl").is_none());
    assert!(is_clean(".") && is_clean("bin") && !is_clean("./bin") && !is_clean("bin/"));
    let from = work.path().join("from");
    let to = work.path().join("to");
    std::fs::create_dir_all(&from).unwrap();
    std::fs::write(from.join("a"), "").unwrap();
    let escape = FileOperation {
        from: "a".into(),
        to: "../outside".into(),
    };
    assert!(move_targets(&from, &to, &escape).is_err());
    let glob = FileOperation {
        from: "*".into(),
        to: ".".into(),
    };
    assert_eq!(
        move_targets(&from, &to, &glob).unwrap(),
        [(from.join("a"), to.join("a"))]
    );
    assert!(glob_matches("kubectl-*", "kubectl-vmctl") && !glob_matches("kubectl-*", "vmctl"));
}
