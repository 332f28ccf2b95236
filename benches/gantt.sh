#!/usr/bin/env bash
# What the plan-drain / plan-maintenance chart (issue 27, `--chart`) costs at fleet size.
#
#   bash benches/gantt.sh
#
# 1. The chart by itself (benches/gantt_cost.rs, release build): the model, the text at 120
#    columns and the SVG at 1,200 px for a synthetic 10,000-VMI drain in 2,000 waves and a
#    500-batch rollout, fastest of 20 runs.
# 2. The whole command with and without it, offline on the 10,000-VMI / 500-node cluster of
#    benches/gen_cluster.rs (the one benches/fleet.sh measures): `plan-drain` of 1 node, of
#    10 nodes, of half of them and of every node (all 10,000 VMIs in one plan: the chart
#    folds to a row per run of waves and per reason), and `plan-maintenance --all` (500 batches), each `--chart never` against
#    `--chart always` (COLUMNS=120, a UTF-8 locale), interleaved, fastest of RUNS. On a
#    shared machine the run-to-run spread (hundreds of ms) hides what part 1 measures;
#    the column says what this machine could tell apart.
# Results: target/bench/gantt.md (markdown), also printed.
#
# Environment: RUNS (default 5). Needs GNU date (nanoseconds).
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
B=target/bench
mkdir -p "$B"
VMCTL=target/release/vmctl
GEN=target/release/examples/gen-cluster
COST=target/release/examples/gantt-cost
cargo build --release --quiet --bin vmctl --example gen-cluster --example gantt-cost || exit 2

md=$B/gantt.md
{
  echo "## The chart by itself (fastest of 20)"
  echo
  $COST --runs 20 | sed 's/^/- /'
} > "$md"

FILE=$B/fleet-10000-compact.json
if [ ! -s "$FILE" ]; then
  echo "gantt: generating 10,000 VMIs / 500 nodes -> $FILE" >&2
  $GEN --vmis 10000 --nodes 500 --seed 42 --compact --out "$FILE" 2> /dev/null || exit 2
fi

# one wall time in ms of: vmctl --from FILE ARGS...
once() {
  local t0 t1
  t0=$(date +%s%N)
  COLUMNS=120 LC_ALL=C.UTF-8 NO_COLOR=1 "$VMCTL" --from "$FILE" "$@" > "$B/gantt.out" 2> /dev/null
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 ))
}

# "NEVER ALWAYS": the fastest of RUNS runs each, the two interleaved (never, always, never…)
# so a busy moment of the machine weighs on both alike.
fastest_pair() {
  local never="" always="" ms
  for _ in $(seq "$RUNS"); do
    ms=$(once "$@" --chart never)
    if [ -z "$never" ] || [ "$ms" -lt "$never" ]; then never=$ms; fi
    ms=$(once "$@" --chart always)
    if [ -z "$always" ] || [ "$ms" -lt "$always" ]; then always=$ms; fi
  done
  echo "$never $always"
}

all_nodes=$(seq -f 'node-%g' 0 499 | tr '\n' ' ')
half_nodes=$(seq -f 'node-%g' 0 249 | tr '\n' ' ')
# The generator's node names: check one exists, else take them from the file.
if ! grep -q '"name":"node-7"' "$FILE"; then
  echo "gantt: the generator's node names changed: fix benches/gantt.sh" >&2
  exit 2
fi
{
  echo
  echo "## The whole command, offline, 10,000 VMIs / 500 nodes (fastest of $RUNS)"
  echo
  echo "| command | --chart never | --chart always | the chart adds | chart lines |"
  echo "| --- | --- | --- | --- | --- |"
} >> "$md"
while IFS='|' read -r name args; do
  # shellcheck disable=SC2086
  read -r never always < <(fastest_pair $args)
  lines=$(awk '/: ETA /{on=1} on' "$B/gantt.out" | wc -l)
  echo "| $name | $never ms | $always ms | $((always - never)) ms | $lines |" >> "$md"
done <<ROWS
plan-drain (1 node)|plan-drain node-7
plan-drain (10 nodes)|plan-drain node-1 node-2 node-3 node-4 node-5 node-6 node-7 node-8 node-9 node-10
plan-drain (half the nodes, about 5,000 VMIs)|plan-drain $half_nodes
plan-drain (every node, 10,000 VMIs)|plan-drain $all_nodes
plan-maintenance --all (500 batches)|plan-maintenance --all
ROWS
cat "$md"
