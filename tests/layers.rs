//! No module imports upward (issue 12): each layer of `docs/ARCHITECTURE.md` names only the
//! layers below it. Read from the source text: every `crate::<module>` a file mentions.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layer of a top-level module, lowest first. Modules of one layer may use each other.
fn layer(module: &str) -> Option<u8> {
    Some(match module {
        "text" | "error" | "names" => 0,
        "model" => 1,
        "cluster" | "journal" => 2,
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

/// Source text with comments, string and char literals blanked out (so that a path inside a
/// message or a doc comment is not an import) and every `#[cfg(test)]` item removed.
fn code_of(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == b'/' && next == Some(b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && next == Some(b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == b'r'
            && (next == Some(b'"') || next == Some(b'#'))
            && !b[..i]
                .last()
                .is_some_and(|p| p.is_ascii_alphanumeric() || *p == b'_')
        {
            // A raw string r"…" / r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            j += 1;
            let closing: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            while j < b.len() && !b[j..].starts_with(&closing) {
                j += 1;
            }
            i = j + closing.len();
            out.push_str("\"\"");
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\'', '"') or a lifetime ('a).
            let close = if next == Some(b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map(|p| i + 3 + p)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 3)
            } else {
                std::str::from_utf8(&b[i + 1..])
                    .ok()
                    .and_then(|rest| rest.chars().next())
                    .filter(|ch| !ch.is_ascii() && b.get(i + 1 + ch.len_utf8()) == Some(&b'\''))
                    .map(|ch| i + 2 + ch.len_utf8())
            };
            match close {
                Some(end) => {
                    out.push_str("' '");
                    i = end;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let ch_len = std::str::from_utf8(&b[i..])
                .ok()
                .and_then(|s| s.chars().next())
                .map_or(1, char::len_utf8);
            out.push_str(std::str::from_utf8(&b[i..i + ch_len]).unwrap_or(" "));
            i += ch_len;
        }
    }
    strip_test_items(&out)
}

/// Removes each `#[cfg(test)]` item: up to its `;` or its balanced `{…}`.
fn strip_test_items(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (k, ch) in item.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The paths a `use` tree or an expression names from `at` on: `a::b::{c, d::e}` gives
/// `[a,b,c]` and `[a,b,d,e]`.
fn path_tree(code: &[u8], mut at: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix;
    loop {
        while code.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        if code.get(at) == Some(&b'{') {
            at += 1;
            loop {
                at = path_tree(code, at, path.clone(), out);
                while code
                    .get(at)
                    .is_some_and(|c| c.is_ascii_whitespace() || *c == b',')
                {
                    at += 1;
                }
                match code.get(at) {
                    Some(b'}') => return at + 1,
                    None => return at,
                    _ => {}
                }
            }
        }
        let start = at;
        while code
            .get(at)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            at += 1;
        }
        if at > start {
            path.push(String::from_utf8_lossy(&code[start..at]).into_owned());
        }
        let mut look = at;
        while code.get(look).is_some_and(u8::is_ascii_whitespace) {
            look += 1;
        }
        if at > start && code[look..].starts_with(b"::") {
            at = look + 2;
        } else {
            out.push(path);
            return at;
        }
    }
}

/// A file's module path: `policy/drain/mod.rs` is `policy::drain`, `lib.rs` the root.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        parts.clear();
    }
    parts
}

/// The modules (files) a file names items of, resolved to the longest module that is a file.
/// A file using its own ancestors (`super::Thing` from the `mod.rs` above it) is not counted:
/// that is how a module shares its types with its children.
fn file_edges(
    module: &[String],
    code: &str,
    files: &BTreeSet<Vec<String>>,
) -> BTreeSet<Vec<String>> {
    let children: BTreeSet<String> = code
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = match l.strip_prefix("pub") {
                Some(r) if r.starts_with('(') => r.split_once(')').map_or(r, |(_, r)| r).trim(),
                Some(r) => r.trim(),
                None => l,
            };
            l.strip_prefix("mod ")
                .and_then(|r| r.strip_suffix(';'))
                .map(|n| n.trim().to_string())
        })
        .collect();
    let bytes = code.as_bytes();
    let mut edges = BTreeSet::new();
    let mut at = 0;
    while let Some(found) = code[at..].find("::") {
        let sep = at + found;
        at = sep + 2;
        // The identifier before this `::`, if it begins a path.
        let mut start = sep;
        while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
            start -= 1;
        }
        if start == sep || (start > 0 && bytes[start - 1] == b':') {
            continue;
        }
        let head = &code[start..sep];
        let base: Vec<String> = match head {
            "crate" => Vec::new(),
            "super" => module[..module.len().saturating_sub(1)].to_vec(),
            "self" => module.to_vec(),
            child if children.contains(child) => {
                let mut m = module.to_vec();
                m.push(child.to_string());
                m
            }
            _ => continue,
        };
        let mut paths = Vec::new();
        at = path_tree(bytes, at, Vec::new(), &mut paths);
        for path in paths {
            let mut full = base.clone();
            let mut path = path.as_slice();
            while path.first().is_some_and(|p| p == "super") {
                full.pop();
                path = &path[1..];
            }
            full.extend(path.iter().cloned());
            let Some(target) = (0..=full.len())
                .rev()
                .map(|k| full[..k].to_vec())
                .find(|m| files.contains(m))
            else {
                continue;
            };
            if target.is_empty() || target == module || module.starts_with(&target) {
                continue;
            }
            edges.insert(target);
        }
    }
    edges
}

/// The file-level import circles: strongly connected sets of files (Tarjan).
fn circles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a [String], (usize, usize)>,
        stack: Vec<&'a [String]>,
        next: usize,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a [String]) {
            let own = self.next;
            self.next += 1;
            self.index.insert(v, (own, own));
            self.stack.push(v);
            let edges = self.edges;
            for w in edges.get(v).into_iter().flatten() {
                let w = w.as_slice();
                match self.index.get(w).copied() {
                    None => {
                        self.visit(w);
                        let low_w = self.index[w].1;
                        let e = self.index.get_mut(v).unwrap();
                        e.1 = e.1.min(low_w);
                    }
                    Some((idx_w, _)) if self.stack.contains(&w) => {
                        let e = self.index.get_mut(v).unwrap();
                        e.1 = e.1.min(idx_w);
                    }
                    Some(_) => {}
                }
            }
            let (idx, low) = self.index[v];
            if idx == low {
                let mut set = Vec::new();
                while let Some(w) = self.stack.pop() {
                    set.push(w.join("::"));
                    if w == v {
                        break;
                    }
                }
                if set.len() > 1 {
                    set.sort();
                    self.found.push(set);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        stack: Vec::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v.as_slice()) {
            walk.visit(v);
        }
    }
    walk.found
}

fn crate_edges(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut paths = Vec::new();
    rust_files(src, &mut paths);
    let files: Vec<(Vec<String>, PathBuf)> = paths
        .into_iter()
        .filter(|p| !p.strip_prefix(src).unwrap().starts_with("bin"))
        .map(|p| (module_of(p.strip_prefix(src).unwrap()), p))
        .collect();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(m, _)| m.clone()).collect();
    files
        .iter()
        .map(|(m, p)| {
            let code = code_of(&std::fs::read_to_string(p).unwrap());
            (m.clone(), file_edges(m, &code, &modules))
        })
        .collect()
}

/// Issue 26: no two files depend on each other, directly or round a longer loop. A child
/// may use the `mod.rs` above it (`super::Thing`), and a module names its children; any other
/// loop means one of the files should give the shared piece to a file below both.
#[test]
fn no_file_level_import_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = crate_edges(&src);
    assert!(edges.len() > 150, "only {} files read", edges.len());
    let edge_count: usize = edges.values().map(BTreeSet::len).sum();
    assert!(
        edge_count > 500,
        "only {edge_count} imports seen: is the parser blind?"
    );
    let found = circles(&edges);
    assert!(
        found.is_empty(),
        "file-level import circles:\n{}",
        found
            .iter()
            .map(|c| c.join(" <-> "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_circle_checker_sees_circles_through_use_trees_children_and_super() {
    let files: BTreeSet<Vec<String>> = ["a", "a::b", "a::c", "a::d", "e"]
        .iter()
        .map(|m| m.split("::").map(str::to_string).collect())
        .collect();
    let m = |s: &str| -> Vec<String> { s.split("::").map(str::to_string).collect() };
    let mut edges = BTreeMap::new();
    // a (mod.rs) declares b and calls into it; b uses its parent (allowed) and, through a
    // grouped use, c; c names d only in a comment, a string and its tests, and calls back
    // into b: the one loop, b <-> c.
    let a = code_of("mod b;\nmod c;\npub fn f() { b::g(); }\n");
    let b = code_of("use super::{Thing, c::{self, h}};\nuse crate::e::E;\n");
    let c = code_of(
        "// crate::a::d::x\nconst S: &str = \"crate::a::d::y\";\nconst Q: char = '\"';\nfn k<'a>() { super::b::g(); }\n#[cfg(test)]\nmod tests { use crate::a::d::z; }\n",
    );
    let d = code_of("fn z() {}\n");
    let e = code_of("fn r() { crate::a::d::z(); }\n");
    for (name, code) in [
        ("a", &a),
        ("a::b", &b),
        ("a::c", &c),
        ("a::d", &d),
        ("e", &e),
    ] {
        edges.insert(m(name), file_edges(&m(name), code, &files));
    }
    assert_eq!(edges[&m("a")], BTreeSet::from([m("a::b")]));
    assert_eq!(edges[&m("a::b")], BTreeSet::from([m("a::c"), m("e")]));
    assert_eq!(edges[&m("a::c")], BTreeSet::from([m("a::b")]), "{c}");
    assert_eq!(edges[&m("e")], BTreeSet::from([m("a::d")]));
    assert_eq!(
        circles(&edges),
        vec![vec!["a::b".to_string(), "a::c".to_string()]]
    );
    // Without c's call back into b there is no loop: the parent-child pairs are not loops.
    edges.insert(m("a::c"), BTreeSet::new());
    assert!(circles(&edges).is_empty());
}

/// Issue 26: a command reads like its recipe (parse, gather, decide, render); what it does
/// lives in `operate/` and the layers below. A file past 250 lines has grown a step of its own.
#[test]
fn commands_are_thin() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/commands");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    assert!(files.len() > 10, "only {} command files", files.len());
    let fat: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).unwrap().lines().count();
            (lines > 250).then(|| format!("{}: {lines} lines", f.display()))
        })
        .collect();
    assert!(
        fat.is_empty(),
        "commands over 250 lines:\n{}",
        fat.join("\n")
    );
}
