#!/usr/bin/env bash
# The YAML crates on a bad-input corpus and on a fleet-size file (issue 16, item 4):
# serde_yaml 0.9 (deprecated, libyaml) against serde-saphyr (kube 5's), each read in a process
# of its own (a stack overflow aborts the process), under a timeout and an address-space cap.
# And vmctl itself (`--from FILE status`) on the same files.
#
#   bash benches/yaml.sh [--no-vmctl] [--no-fleet]
#
# The corpus (benches/yaml-crates: `yaml-crates gen`): alias bombs (9 levels of 9; 100,000
# aliases of a 1 MiB scalar), nesting 10k/100k/1M deep (`[`, `{a: `, `- `, closed `[...]`),
# 64 MiB scalars, a 2 kB key, 1M empty and 200k small documents, invalid UTF-8, NUL/ESC bytes,
# BOMs, tags, merge keys, duplicate keys, YAML 1.1 scalars; the fleet: benches/gen_cluster.rs's
# 10,000-VMI cluster as multi-document YAML and as one List document (~130 MB each).
# Results: target/bench/yaml.md. Per case: outcome (ok / error's first line / PANIC / killed by
# signal / TIMEOUT), peak RSS (GNU time), wall time.
# Environment: VMCTL and GEN (a vmctl binary and a gen-cluster to use instead of release
# builds), CAP (seconds; default 120), MEM_CAP_KB (address space; default 8 GiB),
# CORPUS (where the files go; default /tmp/vmctl-yaml-corpus, removed at the end unless KEEP=1).
set -uo pipefail
cd "$(dirname "$0")/.."
vmctl=1 fleet=1
for a in "$@"; do
  case "$a" in
    --no-vmctl) vmctl=0 ;;
    --no-fleet) fleet=0 ;;
    *) echo "usage: bash benches/yaml.sh [--no-vmctl] [--no-fleet]" >&2; exit 2 ;;
  esac
done
CAP=${CAP:-120}
MEM_CAP_KB=${MEM_CAP_KB:-8388608}
CORPUS=${CORPUS:-/tmp/vmctl-yaml-corpus}
B=target/bench
mkdir -p "$B" "$CORPUS"
YC=target/yaml-crates/release/yaml-crates
CARGO_TARGET_DIR=target/yaml-crates cargo build --release --quiet \
  --manifest-path benches/yaml-crates/Cargo.toml || exit 2
if [ -z "${VMCTL:-}" ]; then
  cargo build --release --quiet --bin vmctl || exit 2
  VMCTL=target/release/vmctl
fi
if [ -z "${GEN:-}" ]; then
  cargo build --release --quiet --example gen-cluster || exit 2
  GEN=target/release/examples/gen-cluster
fi

"$YC" gen "$CORPUS"
files=("$CORPUS"/*.yaml)
if [ "$fleet" = 1 ]; then
  if [ ! -s "$CORPUS/fleet/cluster-10k-docs.yaml" ]; then
    mkdir -p "$CORPUS/fleet"
    "$GEN" --vmis 10000 --out "$CORPUS/fleet/c.json" 2>/dev/null
    "$YC" to-yaml "$CORPUS/fleet/c.json" "$CORPUS/fleet/cluster-10k-docs.yaml"
    "$YC" to-yaml "$CORPUS/fleet/c.json" "$CORPUS/fleet/cluster-10k-list.yaml" --list
    rm -f "$CORPUS/fleet/c.json"
  fi
  files+=("$CORPUS/fleet/cluster-10k-docs.yaml" "$CORPUS/fleet/cluster-10k-list.yaml")
fi

# run LABEL CMD...: one row cell "outcome | rss MB | seconds".
run() {
  local out rc rss secs sig
  out=$( (ulimit -v "$MEM_CAP_KB"; exec timeout -s KILL "$CAP" /usr/bin/time -f '%M %e' -o "$B/.yaml-time" "$@") 2>"$B/.yaml-err")
  rc=$?
  read -r rss secs < <(grep -E '^[0-9]+ [0-9.]+$' "$B/.yaml-time" | tail -1)
  sig=$(grep -o 'terminated by signal [0-9]*' "$B/.yaml-time" | grep -o '[0-9]*$')
  local what
  if [ "$rc" = 137 ] && [ -z "$sig" ]; then what="TIMEOUT (${CAP} s)"; rss=?; secs=">$CAP";
  elif [ -n "$sig" ]; then what="KILLED by signal $sig"; [ "$sig" = 6 ] && what="ABORT (signal 6)"; [ "$sig" = 11 ] && what="SEGV (stack overflow?)";
  elif [ "$rc" = 101 ] || grep -q panicked "$B/.yaml-err"; then what="PANIC: $(grep -m1 -o "panicked.*" "$B/.yaml-err" | cut -c1-70)";
  else what=$( { head -c 300 <<<"$out"; grep -m1 '^error' "$B/.yaml-err"; } | grep -m1 -E '^(ok|error)' | cut -c1-110); [ -z "$what" ] && what="exit $rc"
  fi
  what=${what//|/\\|}
  case "$rss" in ''|*[!0-9]*) ;; *) rss=$(( rss / 1024 )) ;; esac
  printf '%s | %s | %s' "$what" "${rss:-?}" "$secs"
}

md=$B/yaml.md
{
  echo "| file | size | reader | outcome | peak RSS MB | s |"
  echo "|---|---|---|---|---|---|"
} > "$md"
for f in "${files[@]}"; do
  name=$(basename "$f")
  size=$(stat -c %s "$f")
  for reader in serde_yaml saphyr-default saphyr-vmctl; do
    echo "| $name | $size | $reader | $(run "$YC" read "$reader" "$f") |" | tee -a "$md"
  done
  if [ "$vmctl" = 1 ]; then
    echo "| $name | $size | vmctl status | $(run "$VMCTL" --from "$f" status -A -o json) |" | tee -a "$md"
  fi
done
echo "results: $md"
[ "${KEEP:-0}" = 1 ] || rm -rf "$CORPUS"
