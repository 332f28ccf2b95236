#!/usr/bin/env bash
# plan-maintenance at fleet size (issue 14): the rollout of every node, two at a time, on
# generated clusters of 100, 250 and 500 nodes with 20 VMIs per node, offline; each wall time
# next to `jq length` on the same file in the same run (the target at 500 nodes / 10,000 VMIs:
# ≤ 1× jq), and the cost per (nodes × VMIs per node) to show it grows linearly.
#
#   bash benches/maintenance.sh          # writes target/bench/maintenance.md
set -uo pipefail
cd "$(dirname "$0")/.."
B=target/bench
mkdir -p "$B"
RUNS=${RUNS:-3}
VMCTL=target/release/vmctl
GEN=target/release/examples/gen-cluster
cargo build --release --quiet --bin vmctl --example gen-cluster || exit 2

best() { # best wall time of RUNS runs of a command, seconds
  local best="" w i
  for ((i = 0; i < RUNS; i++)); do
    w=$(/usr/bin/time -f "%e" "$@" 2>&1 > /dev/null | tail -1)
    if [ -z "$best" ] || awk -v a="$w" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$w; fi
  done
  echo "$best"
}

md=$B/maintenance.md
{
  echo "| nodes | VMIs | jq length | plan-maintenance --all --max-unavailable 2 | ratio | per node×(VMIs/node), µs | batches, migrations |"
  echo "|---|---|---|---|---|---|---|"
} > "$md"
for nodes in 100 250 500; do
  vmis=$((nodes * 20))
  f=$B/maint-$nodes.json
  $GEN --vmis "$vmis" --nodes "$nodes" --seed 42 --compact --out "$f" 2> /dev/null || exit 2
  jq_wall=$(best jq length "$f")
  wall=$(best "$VMCTL" --from "$f" plan-maintenance --all --max-unavailable 2 -o json)
  facts=$("$VMCTL" --from "$f" plan-maintenance --all --max-unavailable 2 -o json 2> /dev/null |
    jq -r '"\(.totals.batches) batches, \(.totals.migrations) migrations"')
  ratio=$(awk -v a="$wall" -v b="$jq_wall" 'BEGIN { printf "%.2f", a / b }')
  per=$(awk -v w="$wall" -v n="$nodes" 'BEGIN { printf "%.1f", w * 1e6 / (n * 20) }')
  echo "| $nodes | $vmis | $jq_wall s | $wall s | ${ratio}× | $per | $facts |" >> "$md"
  echo "nodes=$nodes vmis=$vmis jq=${jq_wall}s plan-maintenance=${wall}s ratio=${ratio}" >&2
done
cat "$md"
