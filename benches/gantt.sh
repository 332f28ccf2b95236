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
# Environment: RUNS (default 5). Needs GNU time (apt-get install -y time).
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
B=target/bench
mkdir -p "$B"
VMCTL=target/release/vmctl
GEN=target/release/examples/gen-cluster
COST=target/release/examples/gantt-cost
command -v /usr/bin/time > /dev/null || { echo "missing GNU time: apt-get install -y time" >&2; exit 2; }
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

# "WALL CPU" in ms of one run of: vmctl --from FILE ARGS... (CPU: user + system, which a
# busy machine disturbs far less than the wall time).
once() {
  COLUMNS=120 LC_ALL=C.UTF-8 NO_COLOR=1 /usr/bin/time -f '%e %U %S' -o "$B/gantt.time" \
    "$VMCTL" --from "$FILE" "$@" > "$B/gantt.out" 2> /dev/null
  # The last line: a non-zero exit (will-block) adds a line before it.
  tail -n 1 "$B/gantt.time" | awk '{ printf "%d %d\n", $1 * 1000, ($2 + $3) * 1000 }'
}

# "NEVER_WALL NEVER_CPU ALWAYS_WALL ALWAYS_CPU": the fastest of RUNS runs each, the two
# interleaved (never, always, never…) so a busy moment weighs on both alike.
fastest_pair() {
  local nw="" nc="" aw="" ac="" w c
  for _ in $(seq "$RUNS"); do
    read -r w c < <(once "$@" --chart never)
    if [ -z "$nw" ] || [ "$w" -lt "$nw" ]; then nw=$w; fi
    if [ -z "$nc" ] || [ "$c" -lt "$nc" ]; then nc=$c; fi
    read -r w c < <(once "$@" --chart always)
    if [ -z "$aw" ] || [ "$w" -lt "$aw" ]; then aw=$w; fi
    if [ -z "$ac" ] || [ "$c" -lt "$ac" ]; then ac=$c; fi
  done
  echo "$nw $nc $aw $ac"
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
  echo "| command | --chart never: wall, CPU | --chart always: wall, CPU | the chart adds (CPU) | chart lines |"
  echo "| --- | --- | --- | --- | --- |"
} >> "$md"
while IFS='|' read -r name args; do
  # shellcheck disable=SC2086
  read -r nw nc aw ac < <(fastest_pair $args)
  lines=$(awk '/: ETA /{on=1} on' "$B/gantt.out" | wc -l)
  echo "| $name | $nw ms, $nc ms | $aw ms, $ac ms | $((ac - nc)) ms | $lines |" >> "$md"
done <<ROWS
plan-drain (1 node)|plan-drain node-7
plan-drain (10 nodes)|plan-drain node-1 node-2 node-3 node-4 node-5 node-6 node-7 node-8 node-9 node-10
plan-drain (half the nodes, about 5,000 VMIs)|plan-drain $half_nodes
plan-drain (every node, 10,000 VMIs)|plan-drain $all_nodes
plan-maintenance --all (500 batches)|plan-maintenance --all
ROWS
cat "$md"
