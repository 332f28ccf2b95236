//! Fuzzing on stable Rust (issue 11 part 7): a mutation fuzzer with a fixed seed, run as an
//! ordinary test so CI runs it (`cargo test`), and for long by `benches/fuzz.sh`.
//!
//! cargo-fuzz needs a nightly toolchain, which CI cannot install (only crates.io and Debian
//! packages are reachable), so this is a test-harness fuzzer: it mutates the files of
//! `examples/` (bit flips, truncation, splicing, YAML/JSON tokens, duplicated lines and keys,
//! huge numbers, control bytes, deep nesting, alias bombs) with a small PRNG. Every case is
//! reproducible from (seed, iteration): each iteration seeds its own generator.
//!
//! Two targets:
//! - `reader`: in process, `parse_text_into` on the mutated text, then every object decoded
//!   (`RawFiles::value`, labels) and a `SnapshotSource` built from it. It must return (Ok or
//!   Err), never panic, never take more than `READER_HANG` for one input, and keep no more
//!   than `text_bound` of object text (aliases cannot blow an input up).
//! - `commands`: the built binary on a mutated copy of `examples/cluster` or
//!   `examples/incidents`, `--from DIR --now 2026-12-03T10:00:00Z` with `status`,
//!   `plan-drain NODE` or `explain NAME`, as a table or `-o json`. A run must end within
//!   `RUN_TIMEOUT` (else: a hang), exit with a documented code (0..=6), print no "panicked",
//!   stay under `MEMORY_BOUND_KB` of peak RSS (GNU time) (and under an address-space limit, so a blow-up
//!   aborts instead of eating the machine), print valid JSON for `-o json`, and write no raw
//!   control character (C0 but `\n`/`\t`, DEL, C1) to stdout for `explain` and for `-o json`.
//!   The same holds for `status`/`plan-drain` tables (every table cell is escaped by
//!   render::table); `VMCTL_FUZZ_STRICT_TABLES=0` only counts them instead.
//!
//! Knobs (environment): `VMCTL_FUZZ_SEED` (a number, or `random`; default fixed),
//! `VMCTL_FUZZ_ITERATIONS` (reader inputs, default 5000), `VMCTL_FUZZ_RUNS` (pipeline runs,
//! default 300), `VMCTL_FUZZ_START` (first iteration: with ITERATIONS/RUNS=1 it replays one
//! case), `VMCTL_FUZZ_STRICT_TABLES=0`, `VMCTL_FUZZ_OUT` (where failing inputs go, default
//! `target/fuzz-failures`). A failing input is written there, shrunk, and its path is in the
//! assertion message.

use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use vmctl::cluster::Kind;
use vmctl::cluster::files::{RawFiles, parse_text_into};
use vmctl::cluster::snapshot::SnapshotSource;

const DEFAULT_SEED: u64 = 0x766d_6374_6c5f_6675; // "vmctl_fu"
const DEFAULT_READER_ITERATIONS: u64 = 5000;
const DEFAULT_PIPELINE_RUNS: u64 = 300;
/// One input to the reader: examples are a few kB, so seconds mean a hang (or worse than
/// linear work).
const READER_HANG: Duration = Duration::from_secs(20);
/// An input slower than this is kept (not failed) for a look.
const SLOW_NOTE: Duration = Duration::from_secs(1);
/// One run of the binary (a debug build reads the examples in about 0.2 s).
const RUN_TIMEOUT: Duration = Duration::from_secs(20);
/// Peak resident memory of one run on a mutated example directory (a few hundred kB of
/// YAML; a normal run peaks at about 40 MB). Measured with GNU time, when installed.
const MEMORY_BOUND_KB: i64 = 512 * 1024;
/// Address-space limit of each run (a normal run works under 256 MiB): the memory bound that
/// holds without GNU time too; a run that needs more aborts, and that fails the case.
const ADDRESS_SPACE_LIMIT: u64 = 1 << 30;
const NOW: &str = "2026-12-03T10:00:00Z";
/// Shrinking a pipeline failure runs the binary: at most this many times.
const SHRINK_RUNS: usize = 150;

// ---------------------------------------------------------------------------------------
// Configuration and the generator.

struct Config {
    seed: u64,
    start: u64,
    reader_iterations: u64,
    pipeline_runs: u64,
    strict_tables: bool,
    out: PathBuf,
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

fn config() -> Config {
    let seed = match std::env::var("VMCTL_FUZZ_SEED").as_deref() {
        Ok("random") => {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1);
            nanos ^ u64::from(std::process::id()).rotate_left(32)
        }
        _ => env_u64("VMCTL_FUZZ_SEED").unwrap_or(DEFAULT_SEED),
    };
    Config {
        seed,
        start: env_u64("VMCTL_FUZZ_START").unwrap_or(0),
        reader_iterations: env_u64("VMCTL_FUZZ_ITERATIONS").unwrap_or(DEFAULT_READER_ITERATIONS),
        pipeline_runs: env_u64("VMCTL_FUZZ_RUNS").unwrap_or(DEFAULT_PIPELINE_RUNS),
        // Every table cell is escaped now (render::table): strict unless asked otherwise.
        strict_tables: std::env::var("VMCTL_FUZZ_STRICT_TABLES").as_deref() != Ok("0"),
        out: std::env::var_os("VMCTL_FUZZ_OUT")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-failures")),
    }
}

/// SplitMix64: tiny, fast, and the same everywhere.
struct Rng(u64);

impl Rng {
    fn for_case(seed: u64, target: u64, iteration: u64) -> Self {
        let mut r = Rng(seed ^ target.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        r.0 ^= iteration.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        r.next();
        r
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// 0..n (n > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

// ---------------------------------------------------------------------------------------
// Seeds and the mutator.

struct Seed {
    name: String,
    /// `.yaml` or `.json`.
    ext: &'static str,
    bytes: Vec<u8>,
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// Every YAML file of `examples/`, each also as JSON (the reader's other parser), the
/// explain fixtures of `tests/fixtures/explain/`, and a vmctl snapshot file.
fn seeds() -> Vec<Seed> {
    let mut seeds = Vec::new();
    for dir in ["cluster", "incidents"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(examples().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let name = format!("{dir}/{}", path.file_name().unwrap().to_string_lossy());
            let value: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
            seeds.push(Seed {
                name: name.replace(".yaml", ".json"),
                ext: "json",
                bytes: serde_json::to_vec_pretty(&value).unwrap(),
            });
            seeds.push(Seed {
                name,
                ext: "yaml",
                bytes: text.into_bytes(),
            });
        }
    }
    // The explain fixtures (reader only: the commands mutate examples/), as they are.
    let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/explain")];
    let mut fixtures = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml") {
                fixtures.push(path);
            }
        }
    }
    fixtures.sort();
    for path in fixtures {
        seeds.push(Seed {
            name: format!("fixtures/{}", path.display()),
            ext: "yaml",
            bytes: std::fs::read(&path).unwrap(),
        });
    }
    // A vmctl snapshot file (what `vmctl snapshot` writes), small.
    seeds.push(Seed {
        name: "snapshot.yaml".into(),
        ext: "yaml",
        bytes: b"apiVersion: vmctl/v1alpha1\nkind: Snapshot\ncapturedAt: 2026-11-29T03:00:00Z\nobjects:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: node-1, labels: {a: b}}\n- apiVersion: kubevirt.io/v1\n  kind: VirtualMachineInstance\n  metadata: {name: vm-1, namespace: prod}\n  status: {nodeName: node-1, phase: Running}\n".to_vec(),
    });
    seeds
}

/// Bits of YAML and JSON syntax, values that are edge cases for a number, a quantity or a
/// time, and control characters.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ": ",
    "- ",
    "\"",
    "'",
    "#",
    "|\n",
    ">-\n",
    "? ",
    "&a ",
    "*a",
    "!!binary ",
    "!!str ",
    "!!map ",
    "<<: *a\n",
    "---\n",
    "...\n",
    "%YAML 1.2\n",
    "\\",
    "\\u0000",
    "\\ud800",
    "\"\\u001b[31mred\"",
    "\"\\u009b2J\"",
    "null",
    "~",
    "true",
    "no",
    "1e400",
    "-1e400",
    "-0",
    "18446744073709551616",
    "-9223372036854775809",
    "99999999999999999999999999999",
    ".nan",
    ".inf",
    "-.inf",
    "NaN",
    "0x7f",
    "0o777",
    "1_000",
    "\u{1b}[2J",
    "\u{1b}]0;title\u{7}",
    "\r",
    "\r\n",
    "\u{0}",
    "\u{7f}",
    "\u{85}",
    "\u{9b}",
    "\u{202e}",
    "\u{feff}",
    "\u{2028}",
    "\t",
    "2026-13-45T99:99:99Z",
    "9999-12-31T23:59:59Z",
    "0000-01-01T00:00:00Z",
    "2026-11-29T03:00:00Z",
    "2026-11-29T03:00:00.999999999+14:00",
    "kind: List\n",
    "items:\n",
    "items: []\n",
    "items: ~\n",
    "metadata:\n",
    "name: ",
    "namespace: ",
    "labels: {a: b}\n",
    "status: {}\n",
    "phase: Running",
    "nodeName: node-3",
    "memory: 99999999999Ei",
    "memory: -1Gi",
    "cpu: 1e9",
    "cpu: 0.0000001m",
    "memory: 1.5.5Gi",
    "apiVersion: v1\n",
    "kind: VirtualMachineInstance\n",
    "kind: VirtualMachineInstanceMigration\n",
    "kind: Node\n",
    "kind: Snapshot\n",
    "apiVersion: vmctl/v1alpha1\n",
    "\"kind\": \"List\", ",
    "\"items\": [",
    "\"metadata\": {}",
    "\"name\": \"\"",
    "\"name\": null",
    "\"name\": 7",
    "\"labels\": []",
    "\"status\": []",
    "count: 18446744073709551615",
    "count: -5",
    "completionTimeoutPerGiB: 0",
    "progressTimeout: -1",
    "bandwidthPerMigration: 0",
    "unschedulableTimeout: 99999999999999",
];

/// Values that are valid YAML and JSON and edge cases for what vmctl reads.
const VALUES: &[&str] = &[
    "null",
    "true",
    "false",
    "0",
    "-1",
    "1e400",
    "-0",
    "18446744073709551616",
    "-9223372036854775809",
    "99999999999999999999999999999",
    "0.5",
    "[]",
    "{}",
    "\"\"",
    "\" \"",
    "\"-1Gi\"",
    "\"99999999999Ei\"",
    "\"0.0000001m\"",
    "\"1.5.5Gi\"",
    "\"1e9\"",
    "\"64Pi\"",
    "\"2026-13-45T99:99:99Z\"",
    "\"9999-12-31T23:59:59Z\"",
    "\"0000-01-01T00:00:00Z\"",
    "\"1970-01-01T00:00:00Z\"",
    "\"2026-12-03T10:00:00Z\"",
    "\"2026-12-03T10:00:00.5+14:00\"",
    "\"Running\"",
    "\"Failed\"",
    "\"Succeeded\"",
    "\"Pending\"",
    "\"Unknown\"",
    "\"True\"",
    "\"False\"",
    "\"LiveMigrate\"",
    "\"None\"",
    "\"PostCopy\"",
    "\"node-3\"",
    "\"node-9\"",
    "\"prod\"",
    "\"kube-system\"",
    "[\"a\", 1, null]",
    "{\"a\": {\"b\": []}}",
    "\"very-long-name-very-long-name-very-long-name-very-long-name-very-long-name-very-long\"",
];

/// Fields whose values the tables show.
const SHOWN_FIELDS: &[&str] = &[
    "name\": ", " name: ", "phase", "reason", "message", "nodeName", "Strategy", "type", "mode",
    "Version",
];

/// Quoted strings holding control characters as escapes (valid in YAML and JSON).
const ESCAPED_CONTROLS: &[&str] = &[
    "\"\\u001b[31mred\\u001b[0m\"",
    "\"a\\rb\"",
    "\"a\\nb\"",
    "\"x\\u0007\\u0008\\u007f\"",
    "\"\\u009b2J\\u0085\"",
    "\"\\u001b]0;title\\u0007\"",
    "\"\\u0000\"",
    "\"\\u202e\\u200b\"",
];

/// An alias bomb (each level repeats the previous nine times).
const ALIAS_BOMB: &str = "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n";

const INTERESTING_BYTES: &[u8] = &[
    0x00, 0x07, 0x08, 0x0b, 0x0c, 0x0d, 0x1b, 0x7f, 0x80, 0xc2, 0x9b, 0xff, b'"', b'\'', b':',
    b'{', b'}', b'[', b']', b'-', b' ', b'\n', b'\t', b'#', b'&', b'*', b'!', b'|', b'>', b'%',
    b'@', b'`', b',', b'?', b'0', b'9',
];

/// Line boundaries of `b`: (start, end) of each line, end past its `\n`.
fn lines(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        if c == b'\n' {
            out.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < b.len() {
        out.push((start, b.len()));
    }
    out
}

/// A random range of `b` (maybe empty), mostly short.
fn range(rng: &mut Rng, len: usize) -> (usize, usize) {
    let start = rng.below(len + 1);
    let max = if rng.chance(80) { 64 } else { len.max(1) };
    let end = (start + rng.below(max + 1)).min(len);
    (start, end)
}

/// Mutations that mostly keep the file readable (so the commands get past the reader):
/// tokens, duplicated lines, new values, huge numbers, control characters.
const GENTLE: &[usize] = &[8, 11, 16, 16, 17, 17, 17];

fn mutate_once(rng: &mut Rng, b: &mut Vec<u8>, seeds: &[Seed], gentle: bool) {
    let len = b.len();
    let op = if gentle {
        *rng.pick(GENTLE)
    } else {
        rng.below(18)
    };
    match op {
        0 if len > 0 => {
            let i = rng.below(len);
            b[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            b[i] = *rng.pick(INTERESTING_BYTES);
        }
        2 => {
            let (s, e) = range(rng, len);
            b.drain(s..e);
        }
        3 => b.truncate(rng.below(len + 1)),
        4 => {
            let (s, e) = range(rng, len);
            let chunk = b[s..e].to_vec();
            let at = rng.below(b.len() + 1);
            b.splice(at..at, chunk);
        }
        5 => {
            // Splice in a piece of another seed.
            let other = &rng.pick(seeds).bytes;
            let (s, e) = range(rng, other.len());
            let at = rng.below(len + 1);
            b.splice(at..at, other[s..e].iter().copied());
        }
        6 | 7 => {
            let token = rng.pick(TOKENS).as_bytes();
            let at = rng.below(len + 1);
            b.splice(at..at, token.iter().copied());
        }
        8 => {
            // A whole line twice: duplicate keys, duplicate list items.
            let ls = lines(b);
            if !ls.is_empty() {
                let (s, e) = *rng.pick(&ls);
                let line = b[s..e].to_vec();
                b.splice(e..e, line);
            }
        }
        9 => {
            // Shift a line's indentation.
            let ls = lines(b);
            if !ls.is_empty() {
                let (s, _) = *rng.pick(&ls);
                if rng.chance(50) {
                    let indents: [&[u8]; 3] = [b"  ", b" ", b"\t"];
                    let indent = *rng.pick(&indents);
                    b.splice(s..s, indent.iter().copied());
                } else if b.get(s) == Some(&b' ') {
                    b.remove(s);
                }
            }
        }
        10 => {
            // Replace the value after `: ` on a line.
            let ls = lines(b);
            if !ls.is_empty() {
                let (s, e) = *rng.pick(&ls);
                if let Some(colon) = b[s..e].windows(2).position(|w| w == b": ") {
                    let vs = s + colon + 2;
                    let ve = if b[e - 1] == b'\n' { e - 1 } else { e };
                    let token = rng.pick(TOKENS).as_bytes().to_vec();
                    b.splice(vs..ve.max(vs), token);
                }
            }
        }
        11 => {
            // A run of digits becomes huge or negative.
            if let Some(i) = (0..8)
                .map(|_| rng.below(len.max(1)))
                .find(|&i| b.get(i).is_some_and(u8::is_ascii_digit))
            {
                let end = b[i..]
                    .iter()
                    .position(|c| !c.is_ascii_digit())
                    .map_or(len, |p| i + p);
                let withs: [&[u8]; 6] = [
                    b"99999999999999999999999999999999",
                    b"18446744073709551616",
                    b"-1",
                    b"0",
                    b"1e308",
                    b"4294967296",
                ];
                let with = *rng.pick(&withs);
                b.splice(i..end, with.iter().copied());
            }
        }
        12 => {
            // Deep nesting, sometimes past the reader's flow-depth limit (1000).
            let depth = *rng.pick(&[10usize, 127, 129, 200, 999, 1001, 3000]);
            let pairs: [(&[u8], &[u8]); 4] = [
                (b"[", b"]"),
                (b"{a: ", b"}"),
                (b"{\"a\": ", b"}"),
                (b"- ", b""),
            ];
            let (open, close) = *rng.pick(&pairs);
            let mut nest = open.repeat(depth);
            nest.extend(close.repeat(depth));
            let at = rng.below(len + 1);
            b.splice(at..at, nest);
        }
        13 => {
            // Deep block nesting: one more indented key per line.
            let depth = *rng.pick(&[50usize, 129, 300]);
            let mut nest = Vec::new();
            for d in 0..depth {
                nest.extend(b" ".repeat(d));
                nest.extend(b"k:\n");
            }
            let at = lines(b).first().map_or(0, |_| rng.below(len + 1));
            b.splice(at..at, nest);
        }
        14 => {
            // An alias bomb of 9^levels nodes (vmctl's alias budget stops it: src/cluster/yaml.rs).
            let levels = 3 + rng.below(5);
            let bomb: Vec<&str> = ALIAS_BOMB.lines().take(levels).collect();
            let at = rng.below(len + 1);
            b.splice(at..at, (bomb.join("\n") + "\n").bytes());
        }
        17 => {
            // A value becomes another valid value: edge cases that still parse.
            let ls = lines(b);
            if !ls.is_empty() {
                let (s, e) = *rng.pick(&ls);
                if let Some(colon) = b[s..e].windows(2).position(|w| w == b": ") {
                    let vs = s + colon + 2;
                    let ve = if b[e - 1] == b'\n' { e - 1 } else { e };
                    let ve = if b[vs..ve].ends_with(b",") {
                        ve - 1
                    } else {
                        ve
                    };
                    let token = rng.pick(VALUES).as_bytes().to_vec();
                    b.splice(vs..ve.max(vs), token);
                }
            }
        }
        16 => {
            // A value becomes a quoted string with escaped control characters: still valid
            // YAML and JSON, so they reach the output. Half the time a field that tables
            // show (a name, a phase, a reason, a message).
            let mut ls = lines(b);
            if rng.chance(50) {
                let shown = |l: &[u8]| {
                    SHOWN_FIELDS
                        .iter()
                        .any(|f| l.windows(f.len()).any(|w| w == f.as_bytes()))
                };
                let some: Vec<_> = ls
                    .iter()
                    .copied()
                    .filter(|&(s, e)| shown(&b[s..e]))
                    .collect();
                if !some.is_empty() {
                    ls = some;
                }
            }
            if !ls.is_empty() {
                let (s, e) = *rng.pick(&ls);
                if let Some(colon) = b[s..e].windows(2).position(|w| w == b": ") {
                    let vs = s + colon + 2;
                    let ve = if b[e - 1] == b'\n' { e - 1 } else { e };
                    let ve = if b[vs..ve].ends_with(b",") {
                        ve - 1
                    } else {
                        ve
                    };
                    let token = rng.pick(ESCAPED_CONTROLS).as_bytes().to_vec();
                    b.splice(vs..ve.max(vs), token);
                }
            }
        }
        _ => {
            // Control characters in a string value (a name, a message).
            let ls = lines(b);
            if !ls.is_empty() {
                let (s, e) = *rng.pick(&ls);
                let at = s + rng.below(e - s + 1);
                let controls: [&[u8]; 7] = [
                    b"\x1b[31m",
                    b"\x1b]0;x\x07",
                    b"\r",
                    b"\x08",
                    b"\x7f",
                    "\u{9b}".as_bytes(),
                    b"\x00",
                ];
                let ctl = *rng.pick(&controls);
                b.splice(at..at, ctl.iter().copied());
            }
        }
    }
}

/// 1 to 5 mutations of `seed`, the result kept within a few times the seed's size.
fn mutate(rng: &mut Rng, seed: &[u8], seeds: &[Seed]) -> Vec<u8> {
    mutate_with(rng, seed, seeds, false)
}

fn mutate_with(rng: &mut Rng, seed: &[u8], seeds: &[Seed], gentle: bool) -> Vec<u8> {
    let mut b = seed.to_vec();
    let cap = seed.len() * 4 + 64 * 1024;
    for _ in 0..=rng.below(5) {
        mutate_once(rng, &mut b, seeds, gentle);
        b.truncate(cap);
    }
    b
}

/// Shrinks `input` while `fails` holds: whole lines first, then byte ranges, halving.
fn shrink(input: &[u8], budget: usize, mut fails: impl FnMut(&[u8]) -> bool) -> Vec<u8> {
    let mut best = input.to_vec();
    let mut tries = 0;
    // Lines, in chunks of decreasing size.
    let mut chunk = lines(&best).len().max(1) / 2;
    while chunk >= 1 && tries < budget {
        let mut i = 0;
        loop {
            let ls = lines(&best);
            if i >= ls.len() || tries >= budget {
                break;
            }
            let end = ls[(i + chunk).min(ls.len()) - 1].1;
            let mut cand = best[..ls[i].0].to_vec();
            cand.extend_from_slice(&best[end..]);
            tries += 1;
            if fails(&cand) {
                best = cand;
            } else {
                i += chunk;
            }
        }
        chunk /= 2;
    }
    // Bytes.
    let mut chunk = best.len() / 2;
    while chunk >= 1 && tries < budget {
        let mut i = 0;
        while i < best.len() && tries < budget {
            let end = (i + chunk).min(best.len());
            let mut cand = best[..i].to_vec();
            cand.extend_from_slice(&best[end..]);
            tries += 1;
            if fails(&cand) {
                best = cand;
            } else {
                i += chunk;
            }
        }
        chunk /= 2;
    }
    best
}

fn save(cfg: &Config, case: &str, files: &[(&str, &[u8])], why: &str) -> PathBuf {
    let dir = cfg.out.join(case);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    std::fs::write(dir.join("WHY.txt"), why).unwrap();
    dir
}

// ---------------------------------------------------------------------------------------
// Target 1: the snapshot reader, in process.

/// What the reader may keep for an input of `n` bytes: its objects' JSON text is at most
/// this long (YAML rewritten as compact JSON is shorter than the YAML, but for aliases,
/// which vmctl bounds by the file's size).
fn text_bound(n: usize) -> usize {
    16 * n + (1 << 20)
}

/// Reads `text` as a file named `name`, decodes every object and builds a source from it.
fn read_everything(name: &str, text: String) {
    let path = Path::new(name);
    let mut raw = RawFiles::default();
    let n = text.len();
    if parse_text_into(path, text, &mut raw).is_err() {
        return;
    }
    let kept: usize = raw.entries.iter().map(|e| raw.text(e).len()).sum();
    assert!(
        kept <= text_bound(n),
        "memory: {n} bytes of input made {kept} bytes of object text"
    );
    for entry in &raw.entries {
        let _ = raw.value(entry);
        let _ = raw.labels(entry);
        let _ = raw.describe(entry);
        let _ = entry.header.newest_timestamp();
    }
    let source = SnapshotSource::from_raw(path, raw);
    let _ = source.newest_timestamp();
    for kind in Kind::ALL {
        let _ = source.entries(kind).len();
    }
}

/// None when the reader copes with the input, else why not.
fn reader_fails(name: &str, bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let started = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| read_everything(name, text)));
    let took = started.elapsed();
    match result {
        Err(e) => {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Some(format!("panicked: {msg}"))
        }
        Ok(()) if took > READER_HANG => Some(format!("took {took:?} (> {READER_HANG:?})")),
        Ok(()) => None,
    }
}

/// The reader's input number `it`: (file name, bytes, which seed).
fn reader_case(seed: u64, it: u64, seeds: &[Seed]) -> (String, Vec<u8>, String) {
    let mut rng = Rng::for_case(seed, 1, it);
    let from = rng.pick(seeds);
    // Mostly the seed's own syntax; sometimes the other extension.
    let ext = if rng.chance(90) {
        from.ext
    } else if from.ext == "json" {
        "yaml"
    } else {
        "json"
    };
    let input = mutate(&mut rng, &from.bytes, seeds);
    (format!("input.{ext}"), input, from.name.clone())
}

#[test]
fn fuzz_snapshot_reader() {
    let cfg = config();
    let seeds = seeds();
    eprintln!(
        "fuzz reader: seed {:#x}, iterations {}..{}",
        cfg.seed,
        cfg.start,
        cfg.start + cfg.reader_iterations
    );
    // A watchdog: the current input, when one iteration began, and whether all is done.
    let current: Arc<Mutex<(String, Vec<u8>, u64)>> = Arc::default();
    let began = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let clock = Instant::now();
    let worker = {
        let (current, began, done) = (current.clone(), began.clone(), done.clone());
        let cfg = config();
        std::thread::spawn(move || {
            let mut failures = Vec::new();
            let mut slowest = (Duration::ZERO, 0u64, 0usize);
            for it in cfg.start..cfg.start + cfg.reader_iterations {
                let (name, input, from) = reader_case(cfg.seed, it, &seeds);
                *current.lock().unwrap() = (name.clone(), input.clone(), it);
                began.store(clock.elapsed().as_millis() as u64 + 1, Ordering::SeqCst);
                let t = Instant::now();
                let failed = reader_fails(&name, &input);
                let took = t.elapsed();
                began.store(0, Ordering::SeqCst);
                if took > slowest.0 {
                    slowest = (took, it, input.len());
                }
                if let Some(why) = failed {
                    let kind = why.split(':').next().unwrap_or("").to_string();
                    let small = shrink(&input, 2000, |cand| {
                        reader_fails(&name, cand)
                            .is_some_and(|w| w.split(':').next() == Some(kind.as_str()))
                    });
                    let dir = save(
                        &cfg,
                        &format!("reader-{:x}-{it}", cfg.seed),
                        &[(&name, &input), (&format!("min-{name}"), &small)],
                        &format!(
                            "{why}\nseed {:#x} iteration {it} (from {})\nreplay: VMCTL_FUZZ_SEED={:#x} VMCTL_FUZZ_START={it} VMCTL_FUZZ_ITERATIONS=1 cargo test --test fuzz fuzz_snapshot_reader\n",
                            cfg.seed, from, cfg.seed
                        ),
                    );
                    failures.push(format!("{why} -> {}", dir.display()));
                    if failures.len() >= 20 {
                        break;
                    }
                }
            }
            done.store(true, Ordering::SeqCst);
            (failures, slowest)
        })
    };
    while !done.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
        let b = began.load(Ordering::SeqCst);
        let now = clock.elapsed().as_millis() as u64 + 1;
        if b != 0 && now.saturating_sub(b) > READER_HANG.as_millis() as u64 * 2 {
            let (name, input, it) = current.lock().map(|c| c.clone()).unwrap_or_default();
            let dir = save(
                &cfg,
                &format!("reader-hang-{:x}-{it}", cfg.seed),
                &[(&name, &input)],
                &format!("hang: one input ran over {:?}\n", READER_HANG * 2),
            );
            panic!("the reader hangs on {} (iteration {it})", dir.display());
        }
    }
    let (failures, slowest) = worker.join().unwrap();
    eprintln!(
        "fuzz reader: slowest input {:?} (iteration {}, {} bytes)",
        slowest.0, slowest.1, slowest.2
    );
    if slowest.0 > SLOW_NOTE {
        // Not a failure (under READER_HANG), but worth a look: keep it.
        let (name, input, _) = reader_case(cfg.seed, slowest.1, &self::seeds());
        let dir = save(
            &cfg,
            &format!("reader-slowest-{:x}-{}", cfg.seed, slowest.1),
            &[(&name, &input)],
            &format!("slowest input: {:?} (not a failure)\n", slowest.0),
        );
        eprintln!("fuzz reader: slowest input kept in {}", dir.display());
    }
    assert!(
        failures.is_empty(),
        "the reader failed on {} input(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// Target 2: the commands, on the built binary.

#[derive(Clone, Debug)]
struct RunCase {
    example: &'static str,
    /// Files replaced in the copy: (file name, bytes).
    mutated: Vec<(String, Vec<u8>)>,
    args: Vec<String>,
}

struct RunResult {
    /// Exit code, or None when killed by a signal.
    code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    /// 0 when not measured.
    max_rss_kb: i64,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Where GNU time is: it measures a run's peak RSS from a small parent of its own (a child
/// forked from this test process would count this process's memory as its own peak).
const GNU_TIME: &str = "/usr/bin/time";

/// Runs the binary on `dir` in a process group of its own, with a timeout and an
/// address-space limit, and its peak RSS measured by GNU time when that is installed.
fn run_vmctl(dir: &Path, args: &[String]) -> RunResult {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let out_path = dir.join(".stdout");
    let err_path = dir.join(".stderr");
    let rss_path = dir.join(".rss");
    let _ = std::fs::remove_file(&rss_path);
    let timed = Path::new(GNU_TIME).exists();
    let mut cmd = if timed {
        let mut c = Command::new(GNU_TIME);
        c.arg("-f").arg("%M").arg("-o").arg(&rss_path);
        c.arg(env!("CARGO_BIN_EXE_vmctl"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_vmctl"))
    };
    cmd.arg("--from")
        .arg(dir.join("snap"))
        .arg("--now")
        .arg(NOW)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .process_group(0);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: ADDRESS_SPACE_LIMIT,
                rlim_max: ADDRESS_SPACE_LIMIT,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn vmctl");
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for vmctl") {
            break status;
        }
        if started.elapsed() > RUN_TIMEOUT && !timed_out {
            timed_out = true;
            // SAFETY: kill(2) on our child's process group (GNU time and vmctl).
            unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // GNU time exits 128+N for a child killed by signal N, and says so.
    let rss = std::fs::read_to_string(&rss_path).unwrap_or_default();
    let mut signal = status.signal();
    if let Some(line) = rss.lines().find(|l| l.contains("terminated by signal")) {
        signal = line.rsplit(' ').next().and_then(|n| n.trim().parse().ok());
    }
    RunResult {
        code: if signal.is_some() {
            None
        } else {
            status.code()
        },
        signal,
        timed_out,
        max_rss_kb: rss
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .next_back()
            .unwrap_or(0),
        stdout: std::fs::read(&out_path).unwrap_or_default(),
        stderr: std::fs::read(&err_path).unwrap_or_default(),
    }
}

/// Characters that act on a terminal: C0 but `\n` and `\t`, DEL, and C1.
fn control_chars(out: &[u8]) -> Vec<char> {
    String::from_utf8_lossy(out)
        .chars()
        .filter(|&c| c.is_control() && c != '\n' && c != '\t')
        .collect()
}

/// Failures of a run (empty: fine), and whether its table printed control characters (the
/// known, not yet failing case).
fn judge(case: &RunCase, r: &RunResult, strict_tables: bool) -> (Vec<String>, bool) {
    let mut bad = Vec::new();
    let stderr = String::from_utf8_lossy(&r.stderr);
    if r.timed_out {
        bad.push(format!("hang: still running after {RUN_TIMEOUT:?}"));
    }
    if let Some(sig) = r.signal.filter(|_| !r.timed_out) {
        bad.push(format!("killed by signal {sig}"));
    }
    if stderr.contains("panicked") || r.code == Some(101) {
        let line = stderr
            .lines()
            .find(|l| l.contains("panicked"))
            .unwrap_or("exit 101");
        bad.push(format!("panic: {line}"));
    } else if let Some(code) = r.code.filter(|c| !(0..=6).contains(c)) {
        bad.push(format!("exit code {code} is not documented"));
    }
    if r.max_rss_kb > MEMORY_BOUND_KB {
        bad.push(format!(
            "memory: peak RSS {} MiB > {} MiB",
            r.max_rss_kb / 1024,
            MEMORY_BOUND_KB / 1024
        ));
    }
    let json = case.args.iter().any(|a| a == "json");
    let explain = case.args.first().is_some_and(|a| a == "explain");
    let ctl = control_chars(&r.stdout);
    let mut table_ctl = false;
    if !ctl.is_empty() {
        if json || explain || strict_tables {
            bad.push(format!("control characters on stdout: {ctl:?}"));
        } else {
            table_ctl = true;
        }
    }
    if json
        && !r.stdout.is_empty()
        && let Err(e) = serde_json::from_slice::<serde_json::Value>(&r.stdout)
    {
        bad.push(format!("-o json printed invalid JSON: {e}"));
    }
    (bad, table_ctl)
}

/// Copies `examples/NAME` into `dir/snap` with the case's files replaced.
fn lay_out(dir: &Path, case: &RunCase) {
    let snap = dir.join("snap");
    let _ = std::fs::remove_dir_all(&snap);
    std::fs::create_dir_all(&snap).unwrap();
    for entry in std::fs::read_dir(examples().join(case.example)).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            std::fs::copy(&path, snap.join(path.file_name().unwrap())).unwrap();
        }
    }
    for (name, bytes) in &case.mutated {
        std::fs::write(snap.join(name), bytes).unwrap();
    }
}

/// The migration names of an example, for `explain`.
fn migration_names(example: &str) -> Vec<String> {
    let raw = vmctl::cluster::files::read_raw(&examples().join(example)).unwrap();
    let mut names: Vec<String> = raw
        .entries
        .iter()
        .filter(|e| e.kind == Kind::VirtualMachineInstanceMigration)
        .map(|e| e.name().to_string())
        .collect();
    names.sort();
    names
}

fn make_case(rng: &mut Rng, seeds: &[Seed], names: &[(&'static str, Vec<String>)]) -> RunCase {
    let (example, migrations) = rng.pick(names);
    let mine: Vec<&Seed> = seeds
        .iter()
        .filter(|s| s.ext == "yaml" && s.name.starts_with(&format!("{example}/")))
        .collect();
    let mut mutated = Vec::new();
    // Mostly mutations that keep the files readable: the commands are the target here.
    let gentle = rng.chance(85);
    for _ in 0..1 + usize::from(rng.chance(25)) {
        let seed = *rng.pick(&mine);
        let file = seed.name.rsplit('/').next().unwrap_or("x.yaml").to_string();
        // Sometimes the same objects as JSON, under a .json name beside the YAML one.
        if rng.chance(15) {
            let json = seeds
                .iter()
                .find(|s| s.name == seed.name.replace(".yaml", ".json"))
                .unwrap_or(seed);
            let bytes = mutate_with(rng, &json.bytes, seeds, gentle);
            mutated.push((format!("{}.json", file.trim_end_matches(".yaml")), bytes));
            // Without the YAML twin, or both files hold the same objects.
            mutated.push((file, Vec::new()));
        } else {
            let bytes = mutate_with(rng, &seed.bytes, seeds, gentle);
            mutated.push((file, bytes));
        }
    }
    let mut args: Vec<String> = match rng.below(3) {
        0 => vec!["status".into()],
        1 => vec![
            "plan-drain".into(),
            rng.pick(&["node-1", "node-2", "node-3", "node-4", "nope"])
                .to_string(),
        ],
        _ => vec!["explain".into(), rng.pick(migrations).clone()],
    };
    if rng.chance(40) {
        args.extend(["-o".into(), "json".into()]);
    }
    RunCase {
        example,
        mutated,
        args,
    }
}

fn describe(case: &RunCase) -> String {
    let mut s = format!(
        "vmctl --from examples/{} --now {NOW} {}\nmutated: ",
        case.example,
        case.args.join(" ")
    );
    for (name, bytes) in &case.mutated {
        let _ = write!(s, "{name} ({} bytes) ", bytes.len());
    }
    s
}

#[test]
fn fuzz_commands() {
    let cfg = config();
    let seeds = seeds();
    let names = vec![
        ("cluster", migration_names("cluster")),
        ("incidents", migration_names("incidents")),
    ];
    let work = tempfile::tempdir().unwrap();
    eprintln!(
        "fuzz commands: seed {:#x}, runs {}..{}",
        cfg.seed,
        cfg.start,
        cfg.start + cfg.pipeline_runs
    );
    let mut failures = Vec::new();
    let mut table_ctl = Vec::new();
    let mut codes = std::collections::BTreeMap::<String, u64>::new();
    let mut max_rss = 0;
    let mut refused = std::collections::BTreeMap::<String, u64>::new();
    for it in cfg.start..cfg.start + cfg.pipeline_runs {
        let mut rng = Rng::for_case(cfg.seed, 2, it);
        let case = make_case(&mut rng, &seeds, &names);
        lay_out(work.path(), &case);
        let r = run_vmctl(work.path(), &case.args);
        max_rss = max_rss.max(r.max_rss_kb);
        *codes
            .entry(r.code.map_or("signal".into(), |c| c.to_string()))
            .or_default() += 1;
        if r.code == Some(4) {
            // What the reader refused, without the file and the position.
            let err = String::from_utf8_lossy(&r.stderr);
            let first = err.lines().next().unwrap_or("").to_string();
            let reason: String = first
                .rsplit(": ")
                .next()
                .unwrap_or("")
                .chars()
                .take(40)
                .collect();
            *refused.entry(reason).or_default() += 1;
        }
        let (bad, ctl) = judge(&case, &r, cfg.strict_tables);
        if ctl {
            table_ctl.push(format!("{} (iteration {it})", case.args.join(" ")));
        }
        if bad.is_empty() {
            continue;
        }
        // Shrink while the same kind of failure stays: files put back as they are in
        // examples/, then each mutated file cut down.
        let kind = bad[0].split(':').next().unwrap_or("").to_string();
        let budget = if kind == "hang" { 3 } else { SHRINK_RUNS };
        let mut spent = 0;
        let fails_same = |c: &RunCase| {
            lay_out(work.path(), c);
            let r = run_vmctl(work.path(), &c.args);
            judge(c, &r, cfg.strict_tables)
                .0
                .iter()
                .any(|b| b.split(':').next() == Some(kind.as_str()))
        };
        let mut small = case.clone();
        let mut i = 0;
        while i < small.mutated.len() && small.mutated.len() > 1 && spent < budget {
            let mut c = small.clone();
            c.mutated.remove(i);
            spent += 1;
            if fails_same(&c) {
                small = c;
            } else {
                i += 1;
            }
        }
        for i in 0..small.mutated.len() {
            if small.mutated[i].1.is_empty() || spent >= budget {
                continue;
            }
            let left = (budget - spent) / (small.mutated.len() - i);
            let shrunk = shrink(&small.mutated[i].1, left, |cand| {
                let mut c = small.clone();
                c.mutated[i].1 = cand.to_vec();
                fails_same(&c)
            });
            spent += left;
            small.mutated[i].1 = shrunk;
        }
        let case_name = format!("commands-{:x}-{it}", cfg.seed);
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        for (name, bytes) in &case.mutated {
            files.push((format!("input/{name}"), bytes.clone()));
        }
        for (name, bytes) in &small.mutated {
            files.push((format!("min/{name}"), bytes.clone()));
        }
        let dir = cfg.out.join(&case_name);
        for sub in ["input", "min"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        let refs: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        let why = format!(
            "{}\n{}\nseed {:#x} iteration {it}\nreproduce: copy examples/{} to a directory, put the files of min/ (or input/) in it (an empty file stands for a removed one), and run the command on it with --from; or VMCTL_FUZZ_SEED={:#x} VMCTL_FUZZ_START={it} VMCTL_FUZZ_RUNS=1 cargo test --test fuzz fuzz_commands\nstderr:\n{}",
            bad.join("\n"),
            describe(&case),
            cfg.seed,
            case.example,
            cfg.seed,
            String::from_utf8_lossy(&r.stderr)
        );
        let dir = save(&cfg, &case_name, &refs, &why);
        failures.push(format!("{} -> {}", bad.join("; "), dir.display()));
        if failures.len() >= 10 {
            break;
        }
    }
    eprintln!(
        "fuzz commands: exit codes {codes:?}, largest peak RSS {} MiB",
        max_rss / 1024
    );
    let mut refused: Vec<_> = refused.into_iter().collect();
    refused.sort_by_key(|r| std::cmp::Reverse(r.1));
    refused.truncate(8);
    eprintln!("fuzz commands: bad input (exit 4), most common: {refused:?}");
    if !table_ctl.is_empty() {
        eprintln!(
            "fuzz commands: {} status/plan-drain table(s) printed raw control characters (VMCTL_FUZZ_STRICT_TABLES=0: counted, not failed), e.g. {}",
            table_ctl.len(),
            table_ctl
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    assert!(
        failures.is_empty(),
        "the commands failed on {} input(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// The hostile YAML corpus (issue 16, item 4; all of it, with serde_yaml beside it, in
// benches/yaml.sh): each file through the built binary, which must refuse it with one line
// naming the file (or read it, where it is valid YAML) within bounded memory, never abort.

/// Peak RSS of one hostile file (the largest is 16 MiB; a normal run peaks at ~40 MB). The old
/// reader needed more than 8 GB for `alias-of-huge-scalar` and aborted.
const HOSTILE_MEMORY_BOUND_KB: i64 = 256 * 1024;

fn hostile_corpus() -> Vec<(&'static str, Vec<u8>, Option<&'static str>)> {
    let mut laughs = String::from(
        "kind: Node\nmetadata: {name: n}\nl0: &l0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n",
    );
    for i in 1..=9 {
        let refs = vec![format!("*l{}", i - 1); 9].join(",");
        laughs.push_str(&format!("l{i}: &l{i} [{refs}]\n"));
    }
    let mut huge_alias = format!(
        "kind: Node\nmetadata: {{name: n}}\nbig: &big {}\nrefs: [",
        "x".repeat(1 << 20)
    );
    huge_alias.push_str(&vec!["*big"; 100_000].join(","));
    huge_alias.push_str("]\n");
    let nodes = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n";
    const DEEP: &str = "nested deeper than 100 levels";
    vec![
        ("laughs-9x9", laughs.into_bytes(), Some("aliases repeat more values than the file holds")),
        ("alias-of-huge-scalar", huge_alias.into_bytes(), Some("aliases repeat more values than the file holds")),
        ("deep-block", format!("kind: Node\nspec:\n{}x\n", "- ".repeat(1_000_000)).into_bytes(), Some(DEEP)),
        ("deep-flow", format!("kind: Node\nspec: {}", "[".repeat(1_000_000)).into_bytes(), Some(DEEP)),
        ("deep-map", format!("kind: Node\nspec: {}", "{a: ".repeat(100_000)).into_bytes(), Some(DEEP)),
        ("deep-closed", format!("kind: Node\nspec: {}{}\n", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(), Some(DEEP)),
        ("empty-documents", "---\n".repeat(100_000).into_bytes(), Some("no object of a kind vmctl reads")),
        ("invalid-utf8", b"kind: Node\nmetadata: {name: \xff\xfe}\n".to_vec(), Some("valid UTF-8")),
        ("nul", b"kind: Node\nmetadata: {name: a\x00b}\n".to_vec(), Some("control character U+0000")),
        ("bom-inside", "kind: Node\nmetadata: {name: \u{feff}n}\n".into(), Some("BOM")),
        ("long-key", format!("{nodes}{}: 1\n", "k".repeat(2048)).into_bytes(), Some("invalid YAML")),
        ("huge-int-tag", format!("kind: Node\nmetadata: {{name: !!int {}}}\n", "9".repeat(1_000_000)).into_bytes(), Some("invalid YAML")),
        // Valid: read.
        ("bom-leading", format!("\u{feff}{nodes}").into_bytes(), None),
        ("merge-dup-tags", format!("base: &b {{app: web}}\n{nodes}  labels:\n    <<: *b\n    x: !custom y\n    z: !!binary aGk=\n    x: again\n").into_bytes(), None),
        ("scalar-16m", format!("{nodes}  annotations: {{note: {}}}\n", "x".repeat(16 << 20)).into_bytes(), None),
        ("many-documents", format!("---\n{nodes}").repeat(20_000).into_bytes(), None),
    ]
}

#[test]
fn hostile_yaml_is_refused_in_bounded_memory() {
    let mut failures = Vec::new();
    for (name, bytes, refused) in hostile_corpus() {
        let dir = tempfile::tempdir().unwrap();
        let snap = dir.path().join("snap");
        std::fs::create_dir(&snap).unwrap();
        let file = snap.join(format!("{name}.yaml"));
        std::fs::write(&file, &bytes).unwrap();
        let r = run_vmctl(dir.path(), &["status".to_string()]);
        let stderr = String::from_utf8_lossy(&r.stderr);
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("error: "))
            .collect();
        let mut wrong = Vec::new();
        if r.signal.is_some() || r.timed_out {
            wrong.push(format!(
                "killed (signal {:?}, timed out {})",
                r.signal, r.timed_out
            ));
        }
        if r.max_rss_kb > HOSTILE_MEMORY_BOUND_KB {
            wrong.push(format!("peak RSS {} MiB", r.max_rss_kb / 1024));
        }
        match refused {
            Some(needle) => {
                // A file without objects is said of the directory it is in.
                let named_path = if needle.starts_with("no object") {
                    snap.display().to_string()
                } else {
                    file.display().to_string()
                };
                let named = errors.len() == 1
                    && errors[0].contains(&named_path)
                    && errors[0].contains(needle);
                if r.code != Some(4) || !named {
                    wrong.push(format!(
                        "exit {:?}, wanted 4 and one error naming the file and {needle:?}",
                        r.code
                    ));
                }
            }
            None => {
                if r.code != Some(0) {
                    wrong.push(format!("exit {:?}, wanted 0", r.code));
                }
            }
        }
        eprintln!(
            "hostile {name}: exit {:?}, peak RSS {} MiB",
            r.code,
            r.max_rss_kb / 1024
        );
        if !wrong.is_empty() {
            let head: String = stderr.chars().take(300).collect();
            failures.push(format!("{name}: {} ({head})", wrong.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
