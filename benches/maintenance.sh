#!/usr/bin/env bash
# plan-maintenance at fleet size (issues 14 and 26): the rollout of every node, two at a time
# (with the comparison run of the other strategy it always makes), on generated clusters of
# 100, 250, 500 and 1,000 nodes with 20 VMIs per node, offline; each wall time next to
# `jq length` on the same file in the same run. The targets (issue 26): ≤ 0.5× jq at 500
# nodes / 10,000 VMIs and at 1,000 nodes / 20,000 VMIs, and a flat cost per node from 100 to
# 1,000 nodes (one target search is kept for the whole rollout; a batch costs its own VMIs,
# pods and PDBs). Best of RUNS runs (wall); the CPU time (user + sys) of that run is printed
# too, since the wall time of a loaded machine says more about the machine.
#
#   bash benches/maintenance.sh          # writes target/bench/maintenance.md
#   SIZES="100 1000" RUNS=5 bash benches/maintenance.sh
set -uo pipefail
cd "$(dirname "$0")/.."
B=target/bench
mkdir -p "$B"
RUNS=${RUNS:-3}
SIZES=${SIZES:-100 250 500 1000}
VMCTL=target/release/vmctl
GEN=target/release/examples/gen-cluster
cargo build --release --quiet --bin vmctl --example gen-cluster || exit 2

best() { # "wall cpu" of the run with the best wall time of RUNS runs of a command, seconds
  local best="" cpu="" out w c i
  for ((i = 0; i < RUNS; i++)); do
    out=$(/usr/bin/time -f "%e %U %S" "$@" 2>&1 > /dev/null | tail -1)
    w=${out%% *}
    c=$(awk -v u="$(echo "$out" | cut -d' ' -f2)" -v s="$(echo "$out" | cut -d' ' -f3)" 'BEGIN { printf "%.2f", u + s }')
    if [ -z "$best" ] || awk -v a="$w" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best=$w
      cpu=$c
    fi
  done
  echo "$best $cpu"
}

md=$B/maintenance.md
{
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, best of $RUNS"
  echo
  echo "| nodes | VMIs | jq length (cpu) | plan-maintenance --all --max-unavailable 2 (cpu) | ratio (cpu ratio) | µs per node (cpu) | batches, migrations |"
  echo "|---|---|---|---|---|---|---|"
} > "$md"
for nodes in $SIZES; do
  vmis=$((nodes * 20))
  f=$B/maint-$nodes.json
  $GEN --vmis "$vmis" --nodes "$nodes" --seed 42 --compact --out "$f" 2> /dev/null || exit 2
  read -r jq_wall jq_cpu < <(best jq length "$f")
  read -r wall cpu < <(best "$VMCTL" --from "$f" plan-maintenance --all --max-unavailable 2 -o json)
  facts=$("$VMCTL" --from "$f" plan-maintenance --all --max-unavailable 2 -o json 2> /dev/null |
    jq -r '"\(.totals.batches) batches, \(.totals.migrations) migrations"')
  ratio=$(awk -v a="$wall" -v b="$jq_wall" 'BEGIN { printf "%.2f", a / b }')
  cpu_ratio=$(awk -v a="$cpu" -v b="$jq_cpu" 'BEGIN { printf "%.2f", a / b }')
  per=$(awk -v w="$wall" -v n="$nodes" 'BEGIN { printf "%.0f", w * 1e6 / n }')
  per_cpu=$(awk -v w="$cpu" -v n="$nodes" 'BEGIN { printf "%.0f", w * 1e6 / n }')
  echo "| $nodes | $vmis | $jq_wall s ($jq_cpu s) | $wall s ($cpu s) | ${ratio}× (${cpu_ratio}×) | $per ($per_cpu) | $facts |" >> "$md"
  echo "nodes=$nodes vmis=$vmis jq=${jq_wall}s plan-maintenance=${wall}s ratio=${ratio} µs/node=${per} cpu: ${jq_cpu}s ${cpu}s ${cpu_ratio} ${per_cpu}µs/node" >&2
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$md"
cat "$md"
