//! No module imports upward (issue 12): each layer of `docs/ARCHITECTURE.md` names only the
//! layers below it. Read from the source text: every `crate::<module>` a file mentions.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layer of a top-level module, lowest first. Modules of one layer may use each other.
fn layer(module: &str) -> Option<u8> {
    Some(match module {
        "text" | "error" | "names" => 0,
        "model" => 1,
        "cluster" => 2,
        // The pure floors and the drivers: they may use each other (migration::classify
        // speaks triage's causes, the follower runs the controller), never what is above.
        "policy" | "triage" | "migration" => 3,
        "render" => 4,
        "context" | "evidence" | "cli" => 5,
        // Following what a command started: the follower, the renderers and the context.
        "operate" => 6,
        "commands" => 7,
        _ => return None,
    })
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules a file names as `crate::<module>`, outside its tests.
fn used_modules(text: &str) -> BTreeSet<String> {
    // Test modules may build whatever they need.
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    let mut used = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            used.insert(name);
        }
    }
    used
}

#[test]
fn no_module_imports_upward() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut upward = Vec::new();
    let mut judged = 0;
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let top = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        let Some(own) = layer(&top) else { continue };
        judged += 1;
        let text = std::fs::read_to_string(file).unwrap();
        for used in used_modules(&text) {
            if let Some(theirs) = layer(&used)
                && theirs > own
            {
                upward.push(format!("{} ({top}) uses crate::{used}", rel.display()));
            }
        }
    }
    assert!(
        judged > 100,
        "only {judged} files judged: is the layer map current?"
    );
    assert!(upward.is_empty(), "upward imports:\n{}", upward.join("\n"));
}

#[test]
fn the_checker_sees_an_upward_import() {
    let used = used_modules(
        "use crate::render::fmt;\nfn f() { crate::commands::x(); }\n#[cfg(test)]\nmod tests { use crate::cli; }",
    );
    assert_eq!(
        used.into_iter().collect::<Vec<_>>(),
        vec!["commands".to_string(), "render".to_string()]
    );
}
