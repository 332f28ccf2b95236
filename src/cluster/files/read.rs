//! Finding and reading the files named by `--from`: a file or a directory tree, regular files
//! only, each once however many symlinks lead to it, within `--max-input-size` in all.

use std::fs;
use std::path::{Path, PathBuf};

use super::{FileObjects, Parsed, RawFiles, parse_text};
use crate::error::{Error, Result};

fn is_object_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

/// How much `--from` may read: the whole input, in bytes (`--max-input-size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    pub max_bytes: u64,
}

/// 2 GiB: a 100k-VMI fleet as compact JSON is about 1.1 GB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 2 << 30;

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            max_bytes: DEFAULT_MAX_INPUT_BYTES,
        }
    }
}

/// What a path is, when it is not a regular file or a directory.
fn special_kind(meta: &fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    let _ = meta;
    "not a regular file"
}

fn not_regular(path: &Path, meta: &fs::Metadata) -> Error {
    Error::bad_input(
        path.display(),
        format!(
            "{}: vmctl reads only regular files and directories",
            special_kind(meta)
        ),
    )
}

/// Directories and files already visited, by canonical path: a second way to the same
/// directory or file (`self -> .`, `again.yaml -> vmis.yaml`) is read once, and a symlinked
/// directory is followed only when it stays inside the directory named by --from (so
/// `loop -> ..` is neither a loop nor a way out).
#[derive(Default)]
struct Visited {
    root: PathBuf,
    dirs: std::collections::HashSet<PathBuf>,
    files: std::collections::HashSet<PathBuf>,
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>, visited: &mut Visited) -> Result<()> {
    let entries = fs::read_dir(dir)
        .map_err(|e| Error::bad_input(dir.display(), format!("cannot read directory: {e}")))?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        // Follows symlinks; a dangling one matters only when it names an object file.
        let Ok(meta) = fs::metadata(&path) else {
            if is_object_file(&path) {
                return Err(Error::bad_input(
                    path.display(),
                    "cannot read: a symlink to nothing",
                ));
            }
            continue;
        };
        if meta.is_dir() {
            let canonical = fs::canonicalize(&path).map_err(|e| {
                Error::bad_input(path.display(), format!("cannot read: {}", io_reason(&e)))
            })?;
            if canonical.starts_with(&visited.root) && visited.dirs.insert(canonical) {
                collect_files(&path, out, visited)?;
            }
        } else if is_object_file(&path) {
            if !meta.is_file() {
                return Err(not_regular(&path, &meta));
            }
            let canonical = fs::canonicalize(&path).map_err(|e| {
                Error::bad_input(path.display(), format!("cannot read: {}", io_reason(&e)))
            })?;
            if visited.files.insert(canonical) {
                out.push(path);
            }
        }
    }
    Ok(())
}

/// Reads a file or, recursively, a directory of YAML/JSON files, every object as a tree.
pub fn read_path(path: &Path) -> Result<FileObjects> {
    read_raw(path)?.into_objects()
}

/// [`read_raw_with`] the default limits.
pub fn read_raw(path: &Path) -> Result<RawFiles> {
    read_raw_with(path, ReadLimits::default())
}

/// Reads a file or, recursively, a directory of YAML/JSON files: their text, and an entry
/// per object. Only regular files are read (a FIFO or a device is refused, not waited on),
/// each file once however many symlinks lead to it, and no more than `limits.max_bytes` in all.
pub fn read_raw_with(path: &Path, limits: ReadLimits) -> Result<RawFiles> {
    let meta = fs::metadata(path)
        .map_err(|e| Error::bad_input(path.display(), format!("cannot read: {}", io_reason(&e))))?;
    let mut found = RawFiles::default();
    let mut budget = limits.max_bytes;
    if meta.is_dir() {
        let mut files = Vec::new();
        let mut visited = Visited::default();
        let root = fs::canonicalize(path).map_err(|e| {
            Error::bad_input(path.display(), format!("cannot read: {}", io_reason(&e)))
        })?;
        visited.dirs.insert(root.clone());
        visited.root = root;
        collect_files(path, &mut files, &mut visited)?;
        if files.is_empty() {
            return Err(Error::bad_input(
                path.display(),
                "directory holds no .yaml, .yml or .json file",
            ));
        }
        found.object_files = files.len();
        for file in &files {
            // A file of the directory with no Kubernetes object in it is skipped (with a
            // warning, `SnapshotSource`), not a reason to reject the whole directory.
            if let Parsed::NotKubernetes(_) =
                read_limited_into(file, &mut found, &mut budget, limits)?
            {
                found.skipped_files.push(file.clone());
            }
        }
        if found.entries.is_empty() {
            return Err(Error::bad_input(
                path.display(),
                format!(
                    "no object of a kind vmctl reads in {} file(s){}",
                    files.len(),
                    skipped_note(&found)
                ),
            ));
        }
    } else {
        if !meta.is_file() {
            return Err(not_regular(path, &meta));
        }
        // A file named alone is read whole or refused.
        if let Parsed::NotKubernetes(e) = read_limited_into(path, &mut found, &mut budget, limits)?
        {
            return Err(e);
        }
        if found.entries.is_empty() {
            return Err(Error::bad_input(
                path.display(),
                format!("no object of a kind vmctl reads{}", skipped_note(&found)),
            ));
        }
    }
    Ok(found)
}

fn too_large(path: &Path, limits: ReadLimits) -> Error {
    Error::bad_input(
        path.display(),
        format!(
            "the input is larger than {} in all: vmctl stops reading there (raise the limit with --max-input-size, e.g. --max-input-size 8Gi)",
            crate::text::bytes(limits.max_bytes)
        ),
    )
}

/// Reads one regular file, at most `budget` bytes (what is left of the limit).
fn read_limited_into(
    path: &Path,
    found: &mut RawFiles,
    budget: &mut u64,
    limits: ReadLimits,
) -> Result<Parsed> {
    use std::io::Read;
    let cannot = |e: std::io::Error| {
        Error::bad_input(path.display(), format!("cannot read: {}", io_reason(&e)))
    };
    let file = fs::File::open(path).map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    if meta.len() > *budget {
        return Err(too_large(path, limits));
    }
    // The exact size up front, as fs::read_to_string does: growing by doubling would cost up
    // to twice the file at the peak (measured: 10k VMIs, 343 MB RSS instead of 245 MB).
    let mut text = String::new();
    text.try_reserve_exact(
        usize::try_from(meta.len())
            .unwrap_or(usize::MAX)
            .saturating_add(1),
    )
    .map_err(|e| Error::bad_input(path.display(), format!("cannot read: {e}")))?;
    let read = file
        .take(budget.saturating_add(1))
        .read_to_string(&mut text)
        .map_err(cannot)? as u64;
    if read > *budget {
        return Err(too_large(path, limits));
    }
    *budget -= read;
    parse_text(path, text, found)
}

fn skipped_note(found: &RawFiles) -> String {
    let mut notes = Vec::new();
    if !found.skipped_kinds.is_empty() {
        let mut kinds = found.skipped_kinds.clone();
        kinds.sort();
        kinds.dedup();
        notes.push(format!("found only {}", kinds.join(", ")));
    }
    if !found.skipped_files.is_empty() {
        notes.push(format!(
            "{} file(s) hold no Kubernetes object",
            found.skipped_files.len()
        ));
    }
    if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join("; "))
    }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}
