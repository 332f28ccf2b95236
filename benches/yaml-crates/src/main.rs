//! `yaml-crates gen DIR`: writes the bad-input corpus into DIR.
//! `yaml-crates read serde_yaml|saphyr-default|saphyr-vmctl FILE`: reads every document of
//! FILE into a `serde_json::Value` and prints `ok: N documents, M bytes of JSON` or the error's
//! first line (exit 1). A panic exits 101; a stack overflow aborts (SIGABRT/SIGSEGV): the
//! script (benches/yaml.sh) runs each read in a process of its own.
//! `yaml-crates to-yaml IN.json OUT.yaml [--list]`: a JSON List as multi-document YAML (or one
//! List document).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

/// vmctl's options (src/cluster/yaml.rs): kept in step by hand.
fn vmctl_options(len: usize) -> serde_saphyr::Options {
    let per_byte = len.saturating_add(1024);
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_reader_input_bytes: None,
            max_events: per_byte.saturating_mul(4),
            max_nodes: per_byte.saturating_mul(4),
            max_total_scalar_bytes: per_byte.saturating_mul(4),
            max_documents: per_byte,
            max_depth: 128,
            flow_nesting_limit: 128,
            max_aliases: 10_000,
            max_anchors: 10_000,
            max_merge_keys: 10_000,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: per_byte,
        },
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::PassThrough,
        null_as_string: true,
        strict_booleans: true,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
        non_finite_float_policy: serde_saphyr::NonFiniteFloatPolicy::PassThrough,
        with_snippet: false,
    }
}

fn read(which: &str, path: &str) -> Result<(usize, usize), String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let text = String::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    let docs: Vec<Value> = match which {
        "serde_yaml" => {
            let mut docs = Vec::new();
            for doc in serde_yaml::Deserializer::from_str(&text) {
                docs.push(Value::deserialize(doc).map_err(|e| e.to_string())?);
            }
            docs
        }
        "saphyr-default" => serde_saphyr::from_multiple(&text).map_err(|e| e.to_string())?,
        "saphyr-vmctl" => {
            serde_saphyr::from_multiple_with_options(&text, vmctl_options(text.len()))
                .map_err(|e| e.to_string())?
        }
        other => return Err(format!("unknown reader {other}")),
    };
    let json: usize = docs.iter().map(|d| d.to_string().len()).sum();
    Ok((docs.len(), json))
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).expect("write corpus file");
}

fn laughs(levels: usize, fan: usize) -> String {
    let mut t = String::from("kind: Node\nmetadata: {name: n}\nl0: &l0 [lol");
    t.push_str(&",lol".repeat(fan - 1));
    t.push_str("]\n");
    for i in 1..=levels {
        let refs = vec![format!("*l{}", i - 1); fan].join(",");
        let _ = writeln!(t, "l{i}: &l{i} [{refs}]");
    }
    t
}

fn gen_corpus(dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    write(dir, "laughs-9x9.yaml", laughs(9, 9).as_bytes());
    // One 1 MiB scalar, then 100,000 aliases of it: 1.3 MB of text, 100 GB of strings.
    let mut t = format!(
        "kind: Node\nmetadata: {{name: n}}\nbig: &big {}\nrefs: [",
        "x".repeat(1 << 20)
    );
    t.push_str(&vec!["*big"; 100_000].join(","));
    t.push_str("]\n");
    write(dir, "alias-of-huge-scalar.yaml", t.as_bytes());
    for n in [10_000usize, 100_000, 1_000_000] {
        let k = n / 1000;
        write(
            dir,
            &format!("deep-seq-{k}k.yaml"),
            format!("kind: Node\nspec: {}", "[".repeat(n)).as_bytes(),
        );
        write(
            dir,
            &format!("deep-map-{k}k.yaml"),
            format!("kind: Node\nspec: {}", "{a: ".repeat(n)).as_bytes(),
        );
        write(
            dir,
            &format!("deep-block-{k}k.yaml"),
            format!("kind: Node\nspec:\n{}x\n", "- ".repeat(n)).as_bytes(),
        );
        // Closed, so a parser without a depth limit could accept it.
        write(
            dir,
            &format!("deep-seq-closed-{k}k.yaml"),
            format!("kind: Node\nspec: {}{}\n", "[".repeat(n), "]".repeat(n)).as_bytes(),
        );
    }
    // Huge scalars: a 64 MiB plain value, a 64 MiB double-quoted one, a 2 kB key.
    write(
        dir,
        "scalar-64m-plain.yaml",
        format!(
            "kind: Node\nmetadata: {{name: n}}\nnote: {}\n",
            "x".repeat(64 << 20)
        )
        .as_bytes(),
    );
    write(
        dir,
        "scalar-64m-quoted.yaml",
        format!(
            "kind: Node\nmetadata: {{name: n}}\nnote: \"{}\"\n",
            "\\u0041".repeat(64 << 20 >> 3)
        )
        .as_bytes(),
    );
    write(
        dir,
        "long-key.yaml",
        format!(
            "kind: Node\nmetadata: {{name: n}}\n{}: 1\n",
            "k".repeat(2048)
        )
        .as_bytes(),
    );
    // Many documents: 1,000,000 empty ones, and 200,000 small objects.
    write(
        dir,
        "docs-1m-empty.yaml",
        "---\n".repeat(1_000_000).as_bytes(),
    );
    let mut t = String::new();
    for i in 0..200_000 {
        let _ = write!(
            t,
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n"
        );
    }
    write(dir, "docs-200k-nodes.yaml", t.as_bytes());
    // Invalid UTF-8, control bytes, BOMs.
    write(
        dir,
        "invalid-utf8.yaml",
        b"kind: Node\nmetadata: {name: \xff\xfe}\n",
    );
    write(
        dir,
        "nul-byte.yaml",
        b"kind: Node\nmetadata: {name: a\x00b}\n",
    );
    write(
        dir,
        "esc-byte.yaml",
        b"kind: Node\nmetadata: {name: a\x1b[2Jb}\n",
    );
    write(
        dir,
        "bom-leading.yaml",
        "\u{feff}kind: Node\nmetadata: {name: n}\n".as_bytes(),
    );
    write(
        dir,
        "bom-inside.yaml",
        "kind: Node\nmetadata: {name: \u{feff}n}\n".as_bytes(),
    );
    write(
        dir,
        "bom-per-document.yaml",
        "\u{feff}kind: Node\nmetadata: {name: a}\n---\n\u{feff}kind: Node\nmetadata: {name: b}\n"
            .as_bytes(),
    );
    // Tags, merge keys, duplicate keys.
    write(dir, "tags.yaml", b"kind: Node\nmetadata: {name: !!str n, labels: {a: !custom x, b: !!binary aGk=}}\nspec: !!map {x: !!int \"7\"}\n");
    write(
        dir,
        "tag-python.yaml",
        b"kind: Node\nmetadata: {name: n}\nx: !!python/object/apply:os.system [\"true\"]\n",
    );
    write(
        dir,
        "tag-int-huge.yaml",
        format!(
            "kind: Node\nmetadata: {{name: !!int {}}}\n",
            "9".repeat(1_000_000)
        )
        .as_bytes(),
    );
    write(dir, "merge-keys.yaml", b"base: &base {app: web, tier: a}\nkind: Node\nmetadata:\n  name: n\n  labels:\n    <<: *base\n    tier: b\n");
    write(
        dir,
        "duplicate-keys.yaml",
        b"kind: Node\nmetadata: {name: a, name: b}\n",
    );
    // YAML 1.1 scalars: what each reader makes of them.
    write(dir, "yaml11-scalars.yaml", b"kind: Node\nmetadata:\n  name: n\n  labels: {'on': on, 'off': off, 'yes': yes, 'no': no, 'y': y, 'True': True, 'octal': 0755, 'octal12': 0o755, 'hex': 0x1F, 'under': 1_000, 'tilde': ~, 'null': null, 'empty': , 'big': 99999999999999999999, 'exp': 1e3, 'inf': .inf, 'nan': .nan, 'over': 1e400, 'time': 2026-11-29T03:00:00Z, 'date': 2026-11-29, 'sexa': 1:20}\n");
}

fn to_yaml(input: &str, output: &str, list: bool) {
    let text = std::fs::read_to_string(input).expect("read JSON");
    let value: Value = serde_json::from_str(&text).expect("parse JSON");
    let mut out = std::io::BufWriter::new(std::fs::File::create(output).expect("create"));
    if list {
        serde_yaml::to_writer(&mut out, &value).expect("write YAML");
    } else {
        for item in value["items"].as_array().expect("a List") {
            out.write_all(b"---\n").expect("write");
            serde_yaml::to_writer(&mut out, item).expect("write YAML");
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("gen") if args.len() == 3 => gen_corpus(Path::new(&args[2])),
        Some("to-yaml") if args.len() >= 4 => to_yaml(
            &args[2],
            &args[3],
            args.get(4).is_some_and(|a| a == "--list"),
        ),
        Some("read") if args.len() == 4 => match read(&args[2], &args[3]) {
            Ok((docs, json)) => println!("ok: {docs} documents, {json} bytes of JSON"),
            Err(e) => {
                println!("error: {}", e.lines().next().unwrap_or(""));
                std::process::exit(1);
            }
        },
        Some("show") if args.len() == 4 => match read_show(&args[2], &args[3]) {
            Ok(s) => println!("{s}"),
            Err(e) => println!("error: {e}"),
        },
        _ => {
            eprintln!(
                "usage: yaml-crates gen DIR | read READER FILE | show READER FILE | to-yaml IN OUT [--list]"
            );
            std::process::exit(2);
        }
    }
}

fn read_show(which: &str, path: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let v: Value = match which {
        "serde_yaml" => serde_yaml::from_str(&text).map_err(|e| e.to_string())?,
        "saphyr-default" => serde_saphyr::from_str(&text).map_err(|e| e.to_string())?,
        _ => serde_saphyr::from_str_with_options(&text, vmctl_options(text.len()))
            .map_err(|e| e.to_string())?,
    };
    Ok(v.to_string())
}
