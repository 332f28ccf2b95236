#!/usr/bin/env bash
# Fleet-scale benchmark (issue 9): vmctl side by side with a reference on the same data,
# reported as ratios (not absolute times) against the targets, PASS/FAIL per line.
#
#   bash benches/fleet.sh [--100k] [--no-live] [--no-watch] [--no-top] [--only-top]
#
# - generates a 10,000-VMI / 500-node cluster (and with --100k a 100,000-VMI / 5,000-node
#   one) with benches/gen_cluster.rs into target/bench/ (realistic objects: see
#   benches/fleet/gen.rs);
# - offline (`--from FILE`): wall time against `jq length` on the same file, peak RSS
#   against the file's size, for `status -A`, `status -A -o json`, `plan-drain` (1 node and
#   10 nodes) and `explain vm/NAME`;
# - live, against the fake API server (benches/fake_apiserver.rs) over HTTP with 0 and 50 ms
#   latency per response: wall time against `kubectl get virtualmachineinstances -A -o json`
#   on the same server, and the requests each command made;
# - `status --watch -A` off a terminal at 50 ms: time to its first line, then LISTs and
#   requests per minute while it idles.
# - `top -A` at 50 ms, in a detached 200×60 tmux session: time until the first frame with
#   the cluster's data is on screen (polled with `tmux capture-pane`), the requests made
#   until then, then LISTs and watches while it idles, then `q` and its exit code.
#   `--only-top` runs just that and its reference (`kubectl get vmi -A` at 50 ms): no
#   offline runs, no 0 ms server, no other live command, no `status --watch`.
# Results: target/bench/fleet.md (markdown), also printed.
#
# Environment: RUNS (offline runs per command, the fastest counts; default 3), CAP (seconds
# before a command counts as hung; default 120), IDLE (seconds of watch idling; default 20),
# MEM_CAP_KB (virtual memory cap for each 100k command; default 12 GB),
# FLEET_FORMAT=kubectl (4-space indentation as kubectl writes it; default: one compact item
# per line, the same objects in 40% of the bytes).
# Needs: jq, kubectl, curl, GNU time, timeout (apt-get install -y jq kubectl curl time
# coreutils; kubectl may come from the Kubernetes apt repository instead); tmux for `top`
# (without it the `top` rows are skipped, said in the report).
set -uo pipefail
cd "$(dirname "$0")/.."

big=0 live=1 watch=1 top=1 only_top=0
for a in "$@"; do
  case "$a" in
    --100k) big=1 ;;
    --no-live) live=0 ;;
    --no-watch) watch=0 ;;
    --no-top) top=0 ;;
    --only-top) only_top=1 ;;
    *) echo "usage: bash benches/fleet.sh [--100k] [--no-live] [--no-watch] [--no-top] [--only-top]" >&2; exit 2 ;;
  esac
done
if [ "$only_top" -eq 1 ]; then big=0 live=1 watch=0 top=1; fi
for tool in jq kubectl curl /usr/bin/time timeout; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y jq kubectl curl time coreutils" >&2; exit 2; }
done
RUNS=${RUNS:-3}
CAP=${CAP:-120}
IDLE=${IDLE:-20}
B=target/bench
mkdir -p "$B"
VMCTL=target/release/vmctl
GEN=target/release/examples/gen-cluster
SERVER=target/release/examples/fake-apiserver

cargo build --release --quiet --bin vmctl --example gen-cluster --example fake-apiserver || exit 2

md=$B/fleet.md
rows=$B/fleet.rows
: > "$rows"
server_pid=""
watch_pid=""
top_socket=""
cleanup() {
  [ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
  [ -n "$top_socket" ] && tmux -L "$top_socket" -f /dev/null kill-server 2>/dev/null
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
}
trap cleanup EXIT

# ---- helpers ----

log() { echo "fleet: $*" >&2; }

# row MEASUREMENT VMCTL REFERENCE RATIO TARGET RESULT
row() { printf '| %s | %s | %s | %s | %s | %s |\n' "$@" >> "$rows"; }

# ratio A B -> A/B with 3 decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }'; }

# verdict RATIO MAX [strict] -> PASS when RATIO <= MAX (< MAX when strict)
verdict() {
  awk -v r="$1" -v m="$2" -v s="${3:-}" 'BEGIN {
    if (r == "n/a" || r == "") { print "FAIL"; exit }
    if ((s == "strict" && r < m) || (s != "strict" && r <= m)) print "PASS"; else print "FAIL" }'
}

human_kb() { awk -v k="$1" 'BEGIN { if (k >= 1048576) printf "%.2f GB", k / 1048576; else printf "%.0f MB", k / 1024 }'; }

# measure RUNS CMD... -> sets WALL (fastest, s), RSS (peak, KB), RC (last exit code;
# 124 when it ran out of CAP seconds). Exit 1 is a finding (a drain that would block), not
# an error.
measure() {
  local runs=$1; shift
  WALL="" RSS=0 RC=0
  local i out
  out=$(mktemp)
  for ((i = 0; i < runs; i++)); do
    (
      # A memory cap (virtual, KB) so a 100k run cannot take the machine down: over it the
      # command fails (reported as its exit code, FAIL) instead.
      [ -n "${MEM_CAP:-}" ] && ulimit -v "$MEM_CAP"
      exec /usr/bin/time -f "%e %M" -o "$out" timeout "$CAP" "$@"
    ) > /dev/null 2> "$B/last.err"
    RC=$?
    if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then RC=124; WALL=$CAP; break; fi
    local w r
    read -r w r < <(tail -1 "$out")
    if [ -z "$WALL" ] || awk -v a="$w" -v b="$WALL" 'BEGIN { exit !(a < b) }'; then WALL=$w; fi
    [ "${r:-0}" -gt "$RSS" ] && RSS=$r
  done
  rm -f "$out"
}

# shown WALL RC -> "12.3 s", "timeout > 120 s" or "exit N"
shown() {
  if [ "$2" -eq 124 ]; then echo "timeout > ${CAP} s"
  elif [ "$2" -gt 1 ]; then echo "exit $2 ($1 s)"
  else echo "$1 s"; fi
}

# ---- data ----

declare -A FILE SIZE EXPLAIN_NS EXPLAIN_NAME NODES OFFLINE_WALL
sizes=(10000)
[ "$big" -eq 1 ] && sizes+=(100000)
format_flag=--compact
[ "${FLEET_FORMAT:-}" = kubectl ] && format_flag=""
for n in "${sizes[@]}"; do
  NODES[$n]=$((n / 20))
  FILE[$n]=$B/fleet-$n${format_flag:+-compact}.json
  [ "$only_top" -eq 1 ] && continue
  log "generating $n VMIs / ${NODES[$n]} nodes -> ${FILE[$n]}"
  $GEN --vmis "$n" --nodes "${NODES[$n]}" --seed 42 $format_flag --out "${FILE[$n]}" 2> "$B/gen-$n.txt" || exit 2
  cat "$B/gen-$n.txt" >&2
  SIZE[$n]=$(stat -c %s "${FILE[$n]}")
  read -r _ _ EXPLAIN_NS[$n] EXPLAIN_NAME[$n] < <(grep '^explain-target: failed-migration' "$B/gen-$n.txt")
done

commands() { # NAME|ARGS for a size
  local n=$1
  echo "status -A|status -A"
  echo "status -A -o json|status -A -o json"
  echo "plan-drain (1 node)|plan-drain node-7 -o json"
  echo "plan-drain (10 nodes)|plan-drain node-1 node-2 node-3 node-4 node-5 node-6 node-7 node-8 node-9 node-10 -o json"
  echo "drain --dry-run (1 node)|drain node-7 --dry-run --ignore-daemonsets --delete-emptydir-data --force --allow-shutdowns --force-partial -o json"
  echo "explain vm/${EXPLAIN_NAME[$n]}|explain vm/${EXPLAIN_NAME[$n]} -n ${EXPLAIN_NS[$n]}"
}

# ---- offline ----

for n in "${sizes[@]}"; do
  [ "$only_top" -eq 1 ] && break
  f=${FILE[$n]}
  runs=$RUNS
  MEM_CAP=""
  if [ "$n" -gt 10000 ]; then runs=1; MEM_CAP=${MEM_CAP_KB:-12582912}; fi
  size_kb=$((SIZE[$n] / 1024))
  log "offline $n: jq length"
  measure "$runs" jq length "$f"
  jq_wall=$WALL jq_rss=$RSS
  row "offline $n: jq length (reference)" "-" "$(shown "$jq_wall" "$RC"), $(human_kb "$jq_rss")" "-" \
    "file $(human_kb "$size_kb"), $((SIZE[$n] / n)) B/VMI" "-"
  while IFS='|' read -r name args; do
    log "offline $n: $name"
    # shellcheck disable=SC2086
    measure "$runs" "$VMCTL" --from "$f" $args
    OFFLINE_WALL["$n $name"]=$WALL
    r=$(ratio "$WALL" "$jq_wall")
    target="-" result="-"
    if [ "$RC" -gt 1 ]; then r="n/a"; fi
    case "$n:$name" in
      10000:plan-drain*|"10000:drain --dry-run"*) target="≤ 0.25× jq"; result=$(verdict "$r" 0.25) ;;
      "10000:status -A -o json") target="≤ 0.5× jq"; result=$(verdict "$r" 0.5) ;;
    esac
    if [ "$n" -gt 10000 ]; then
      base=${OFFLINE_WALL["10000 $name"]:-}
      growth=$(ratio "$WALL" "$base")
      [ "$RC" -gt 1 ] && growth="n/a"
      target="finishes, ≤ 12× the 10k time (${growth}×)"
      if [ "$RC" -le 1 ]; then result=$(verdict "$growth" 12); else result=FAIL; fi
    fi
    row "offline $n: $name, wall vs jq" "$(shown "$WALL" "$RC")" "$jq_wall s" "$r" "$target" "$result"
    rss_ratio=$(ratio "$RSS" "$size_kb")
    target="-" result="-"
    case "$n:$name" in
      10000:plan-drain*|"10000:drain --dry-run"*) target="< 3× file"; result=$(verdict "$rss_ratio" 3 strict) ;;
    esac
    if [ "$n" -gt 10000 ]; then target="< 3× file"; result=$(verdict "$rss_ratio" 3 strict); fi
    [ "$RC" -eq 124 ] && { rss_ratio="n/a (timeout)"; result=FAIL; }
    [ "$RC" -gt 1 ] && [ "$RC" -ne 124 ] && [ "$result" != "-" ] && result=FAIL
    [ "$RC" -gt 1 ] && [ "$RC" -ne 124 ] && grep -qi "memory\|alloc" "$B/last.err" && RSS="over the ${MEM_CAP}-KB cap"
    row "offline $n: $name, peak RSS vs file" "$( [[ "$RSS" =~ ^[0-9]+$ ]] && human_kb "$RSS" || echo "$RSS")" "$(human_kb "$size_kb")" "$rss_ratio" "$target" "$result"
  done < <(commands "$n")
done

# ---- live ----

debug() { curl -s -m 30 "$url/debug/$1" ${2:+-X "$2"}; }

start_server() { # SIZE LATENCY_MS
  local n=$1 latency=$2
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  kc=$B/kubeconfig-$n-$latency
  rm -f "$kc"
  $SERVER --vmis "$n" --nodes "${NODES[$n]}" --seed 42 --latency-ms "$latency" --kubeconfig "$kc" \
    > "$B/server-$n-$latency.log" 2>&1 &
  server_pid=$!
  local i
  for ((i = 0; i < 600; i++)); do
    [ -f "$kc" ] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$B/server-$n-$latency.log" >&2; return 1; }
    sleep 0.5
  done
  url=$(awk '/server:/ { print $2 }' "$kc")
  log "$(cat "$B/server-$n-$latency.log")"
}

# lists_per_kind -> "pods:1 virtualmachineinstances:2 ..." (distinct LIST queries per kind)
lists_per_kind() {
  jq -r '[.lines[] | select(startswith("list ")) | split(" ")[2] | split("?") as $p
          | {kind: ($p[0] | split("/") | last),
             query: ([($p[1] // "") | split("&")[] | select(. != "" and (startswith("limit=") or startswith("continue=")) == false)] | sort | join("&"))}]
         | group_by(.kind) | map("\(.[0].kind):\(map(.query) | unique | length)") | join(" ")'
}

# measure_top SIZE: `vmctl top -A` in a detached tmux session against the server at 50 ms
# (url, kc, REF50 set). The first frame *with the cluster's data*: the header ("N migrations
# in flight") is drawn at once, over a "listing VMIs, migrations and launcher pods..." note
# until every kind is listed and the KubeVirt CR read; the frame without that note is the
# first built from the lists. Polled every 50 ms, so it is late by up to that.
measure_top() {
  local n=$1
  if ! command -v tmux > /dev/null; then
    row "live $n @ 50 ms: top -A" "not run: tmux is not installed" "-" "-" "-" "-"
    return
  fi
  log "live $n @ 50 ms: top -A in tmux (first frame, then ${IDLE} s idle, then q)"
  top_socket=vmctl-fleet-top-$$
  local tm=(tmux -L "$top_socket" -f /dev/null)
  local rc_file=$B/top.rc err=$B/top.err screen=$B/top.screen
  rm -f "$rc_file"
  : > "$err"
  debug reset POST > /dev/null
  local start now elapsed first="" s
  start=$(date +%s.%N)
  "${tm[@]}" new-session -d -s top -x 200 -y 60 -c "$PWD" \
    "env TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 $VMCTL --kubeconfig $kc top -A 2> $err; echo \$? > $rc_file"
  while :; do
    s=$("${tm[@]}" capture-pane -p -t top 2> /dev/null)
    now=$(date +%s.%N)
    elapsed=$(awk -v a="$now" -v b="$start" 'BEGIN { printf "%.2f", a - b }')
    if grep -q "migrations in flight" <<< "$s" && ! grep -q "listing VMIs" <<< "$s"; then
      first=$elapsed
      printf '%s\n' "$s" > "$screen"
      break
    fi
    [ -f "$rc_file" ] && break
    awk -v e="$elapsed" -v c="$CAP" 'BEGIN { exit !(e >= c) }' && break
    sleep 0.05
  done
  local startup target="≤ 2× kubectl get vmi -A" r result
  startup=$(debug requests | jq -r '"\(.requests) requests (\(.lists) LISTs, \(.watches) watches)"')
  if [ -n "$first" ]; then
    r=$(ratio "$first" "$REF50")
    row "live $n @ 50 ms: top -A, time to the first frame with data" "$first s; $startup" "$REF50 s" "$r" "$target" "$(verdict "$r" 2)"
  elif [ -f "$rc_file" ]; then
    row "live $n @ 50 ms: top -A, time to the first frame with data" "exited $(cat "$rc_file"): $(tail -1 "$err")" "$REF50 s" "n/a" "$target" "FAIL"
  else
    row "live $n @ 50 ms: top -A, time to the first frame with data" "no frame after $elapsed s; $startup" "$REF50 s" "n/a" "$target" "FAIL"
  fi
  if [ ! -f "$rc_file" ]; then
    debug reset POST > /dev/null
    sleep "$IDLE"
    local idle lists watches reqs note=""
    result=PASS
    idle=$(debug requests)
    lists=$(jq -r .lists <<< "$idle")
    watches=$(jq -r .watches <<< "$idle")
    reqs=$(jq -r .requests <<< "$idle")
    [ "$lists" -ne 0 ] && result=FAIL
    [ -z "$first" ] && { result=FAIL; note=" (still starting: no frame with data yet)"; }
    row "live $n @ 50 ms: top -A, idle ${IDLE} s$note" "$lists LISTs, $watches watches, $reqs requests" "-" "-" "0 LISTs while idle" "$result"
    "${tm[@]}" send-keys -t top q
    local i
    for ((i = 0; i < 100; i++)); do [ -f "$rc_file" ] && break; sleep 0.1; done
  fi
  local rc
  rc=$(cat "$rc_file" 2> /dev/null || echo "none (still running 10 s after q)")
  if [ "$rc" = 0 ]; then result=PASS; else result=FAIL; fi
  row "live $n @ 50 ms: top -A, q" "exit $rc" "-" "-" "exit 0" "$result"
  "${tm[@]}" kill-server 2> /dev/null
  top_socket=""
}

if [ "$live" -eq 1 ]; then
  n=10000
  kube_cache=$B/kubectl-cache
  latencies=(0 50)
  [ "$only_top" -eq 1 ] && latencies=(50)
  for latency in "${latencies[@]}"; do
    start_server "$n" "$latency" || { row "live $n @ ${latency} ms" "server failed" "-" "-" "-" "FAIL"; continue; }
    # Warm kubectl's discovery cache, then time the reference.
    kubectl --kubeconfig "$kc" --cache-dir "$kube_cache" get virtualmachineinstances -A -o json > /dev/null 2>&1
    debug reset POST > /dev/null
    measure 1 kubectl --kubeconfig "$kc" --cache-dir "$kube_cache" get virtualmachineinstances -A -o json
    ref=$WALL
    ref_requests=$(debug requests | jq -r '"\(.requests) requests, \(.lists) LISTs"')
    row "live $n @ ${latency} ms: kubectl get vmi -A -o json (reference)" "-" "$(shown "$ref" "$RC"), $ref_requests" "-" "-" "-"
    [ "$latency" -eq 50 ] && REF50=$ref
    while IFS='|' read -r name args; do
      [ "$only_top" -eq 1 ] && break
      [ "$name" = "status -A -o json" ] && continue
      log "live $n @ ${latency} ms: $name"
      debug reset POST > /dev/null
      # shellcheck disable=SC2086
      measure 1 "$VMCTL" --kubeconfig "$kc" $args
      counts=$(debug requests)
      requests=$(jq -r '"\(.requests) requests: \(.by | to_entries | map("\(.value) \(.key)") | join(", "))"' <<< "$counts")
      per_kind=$(lists_per_kind <<< "$counts")
      r=$(ratio "$WALL" "$ref")
      [ "$RC" -gt 1 ] && r="n/a"
      target="-" result="-"
      case "$name" in
        "status -A") target="≤ 0.3× kubectl"; result=$(verdict "$r" 0.3) ;;
        plan-drain*)
          # VMIs are read with two narrow label queries (on the drained nodes, and
          # migrating into them: one page each) instead of one LIST of every VMI; VMs and
          # pods with one query per namespace plus one for any other namespace, at once,
          # instead of one LIST whose pages wait on each other (src/cluster/source.rs
          # list_split_by_namespace).
          target="≤ 0.1× kubectl, one LIST query per kind (VMIs: on + into the nodes; VMs, pods: per namespace + the rest)"
          result=$(verdict "$r" 0.1)
          if sed -E 's/virtualmachineinstances:2//; s/(^| )(pods|virtualmachines):[0-9]+//g' <<< "$per_kind" | grep -qE ':([2-9]|[1-9][0-9])'; then result=FAIL; fi ;;
      esac
      row "live $n @ ${latency} ms: $name" "$(shown "$WALL" "$RC"); $requests; LIST queries per kind: $per_kind" "$ref s" "$r" "$target" "$result"
    done < <(commands "$n")

    if [ "$watch" -eq 1 ] && [ "$latency" -eq 50 ]; then
      log "live $n @ ${latency} ms: status --watch -A (first line, then ${IDLE} s idle)"
      debug reset POST > /dev/null
      out=$B/watch.out
      : > "$out"
      start=$(date +%s.%N)
      "$VMCTL" --kubeconfig "$kc" status --watch -A > "$out" 2> "$B/watch.err" < /dev/null &
      watch_pid=$!
      first=""
      while :; do
        now=$(date +%s.%N)
        elapsed=$(awk -v a="$now" -v b="$start" 'BEGIN { printf "%.2f", a - b }')
        if [ -s "$out" ]; then first=$elapsed; break; fi
        kill -0 "$watch_pid" 2>/dev/null || break
        awk -v e="$elapsed" -v c="$CAP" 'BEGIN { exit !(e >= c) }' && break
        sleep 0.1
      done
      startup=$(debug requests | jq -r '"\(.requests) requests (\(.lists) LISTs, \(.watches) watches)"')
      if [ -n "$first" ]; then
        r=$(ratio "$first" "$REF50")
        row "live $n @ 50 ms: status --watch -A, time to first line" "$first s; $startup" "$REF50 s" "$r" "≤ 2× kubectl get vmi -A" "$(verdict "$r" 2)"
      elif kill -0 "$watch_pid" 2>/dev/null; then
        row "live $n @ 50 ms: status --watch -A, time to first line" "no line after $elapsed s; $startup" "$REF50 s" "n/a" "≤ 2× kubectl get vmi -A" "FAIL"
      else
        row "live $n @ 50 ms: status --watch -A, time to first line" "exited: $(tail -1 "$B/watch.err")" "$REF50 s" "n/a" "≤ 2× kubectl get vmi -A" "FAIL"
      fi
      if kill -0 "$watch_pid" 2>/dev/null; then
        debug reset POST > /dev/null
        sleep "$IDLE"
        idle=$(debug requests)
        lists=$(jq -r .lists <<< "$idle")
        reqs=$(jq -r .requests <<< "$idle")
        per_min_l=$(awk -v l="$lists" -v s="$IDLE" 'BEGIN { printf "%.1f", l * 60 / s }')
        per_min_r=$(awk -v l="$reqs" -v s="$IDLE" 'BEGIN { printf "%.1f", l * 60 / s }')
        note=""
        [ -z "$first" ] && note=" (still starting: no first line yet)"
        result=PASS
        [ "$lists" -ne 0 ] && result=FAIL
        [ -z "$first" ] && result=FAIL
        row "live $n @ 50 ms: status --watch -A, idle ${IDLE} s$note" "$per_min_l LISTs/min, $per_min_r requests/min" "-" "-" "0 LISTs while idle" "$result"
        kill "$watch_pid" 2>/dev/null
        wait "$watch_pid" 2>/dev/null
      fi
      watch_pid=""
    fi

    if [ "$top" -eq 1 ] && [ "$latency" -eq 50 ]; then
      measure_top "$n"
    fi
  done
fi

# ---- report ----

{
  echo "# vmctl fleet benchmark"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) · $(git rev-parse --short HEAD 2>/dev/null) · $(nproc) cores · RUNS=$RUNS CAP=${CAP}s · format ${FLEET_FORMAT:-compact}"
  echo
  echo "| measurement | vmctl | reference | ratio | target | result |"
  echo "| --- | --- | --- | --- | --- | --- |"
  cat "$rows"
  echo
  echo "PASS: $(grep -c '| PASS |$' "$rows") · FAIL: $(grep -c '| FAIL |$' "$rows")"
} > "$md"
cat "$md"
