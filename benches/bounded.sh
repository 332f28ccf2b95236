#!/usr/bin/env bash
# What the bounded reading of every API answer (src/cluster/bounded.rs) costs: the same
# commands, by an old vmctl (without the layer) and this one, against the fake API server
# with a 10,000-VMI fleet at 0 ms latency. Wall time (median of RUNS) and peak RSS.
#
#   bash benches/bounded.sh OLD_VMCTL
#
# OLD_VMCTL: a release vmctl built from a commit before the layer (e.g. 1bcc930:
#   git worktree add --detach /tmp/old 1bcc930 && cd /tmp/old && cargo build --release).
# Needs: jq, GNU time (apt-get install -y jq time).
set -uo pipefail
cd "$(dirname "$0")/.."
OLD=${1:?usage: bash benches/bounded.sh OLD_VMCTL}
RUNS=${RUNS:-7}
B=target/bench
mkdir -p "$B"
cargo build --release --quiet --bin vmctl --example fake-apiserver || exit 2
NEW=target/release/vmctl
kc=$B/kubeconfig-bounded
rm -f "$kc"
target/release/examples/fake-apiserver --vmis 10000 --nodes 500 --seed 42 --latency-ms 0 \
  --kubeconfig "$kc" > "$B/server-bounded.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for ((i = 0; i < 600; i++)); do [ -f "$kc" ] && break; sleep 0.5; done
[ -f "$kc" ] || { cat "$B/server-bounded.log" >&2; exit 1; }

# median wall seconds and max RSS (MiB) of RUNS runs of "$@"
measure() {
  local walls=() rss=0 i out w r
  for ((i = 0; i < RUNS; i++)); do
    # exit 1 is a finding (plan-drain: something blocks), not a failure
    /usr/bin/time -o "$B/bounded.time" -f "%e %M" "$@" > /dev/null 2> "$B/bounded.err"; rc=$?; [ "$rc" -le 1 ] \
      || { echo "failed: $* ($(head -c 300 "$B/bounded.err"))" >&2; return 1; }
    read -r w r < <(tail -1 "$B/bounded.time")  # after "Command exited with non-zero status 1"
    walls+=("$w")
    ((r > rss)) && rss=$r
  done
  printf '%s %d\n' "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(((RUNS + 1) / 2))p")" $((rss / 1024))
}

printf '| command | old: median s, peak MiB | new: median s, peak MiB |\n|---|---|---|\n'
while IFS='|' read -r name args; do
  # shellcheck disable=SC2086
  o=$(measure "$OLD" --kubeconfig "$kc" $args)
  # shellcheck disable=SC2086
  n=$(measure "$NEW" --kubeconfig "$kc" $args)
  printf '| %s | %s | %s |\n' "$name" "$o" "$n"
done <<'CMDS'
status -A|status -A
status -A -o json|status -A -o json
snapshot -A -o json -|snapshot -A -o json -
plan-drain (1 node)|plan-drain node-7 -o json
CMDS
