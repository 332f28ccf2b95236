#!/usr/bin/env bash
# Benchmark: `vmctl plan-drain` on a synthetic 10,000-VMI / 500-node cluster read from one JSON
# snapshot, against `jq length` merely reading the same file. Prints wall time (hyperfine) and
# peak memory (GNU time). Needs: jq, hyperfine, time (Debian packages of those names).
#
#   bash benches/plan_drain.sh [VMIS] [NODES]
set -euo pipefail
cd "$(dirname "$0")/.."
vmis=${1:-10000}
nodes=${2:-500}
for tool in jq hyperfine /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y jq hyperfine time" >&2; exit 2; }
done

cargo build --release --quiet --bin vmctl --example gen-cluster
mkdir -p target/bench
file=target/bench/cluster-${vmis}-${nodes}.json
target/release/examples/gen-cluster --vmis "$vmis" --nodes "$nodes" --seed 42 > "$file"
echo "snapshot: $file ($(du -h "$file" | cut -f1), $vmis VMIs, $nodes nodes)"

# node-7 carries about vmis/nodes VMIs; 10 nodes at once is a rack's maintenance window.
one="target/release/vmctl --from $file plan-drain node-7 -o json"
ten="target/release/vmctl --from $file plan-drain node-1 node-2 node-3 node-4 node-5 node-6 node-7 node-8 node-9 node-10 -o json"
hyperfine --warmup 1 --runs 10 -i \
  -n "vmctl plan-drain (1 node)" "$one" \
  -n "vmctl plan-drain (10 nodes)" "$ten" \
  -n "jq length" "jq length $file"

for cmd in "$one" "$ten" "jq length $file"; do
  /usr/bin/time -f "peak RSS %M KB, %e s: $cmd" $cmd > /dev/null || true
done
