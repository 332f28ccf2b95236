#!/usr/bin/env bash
# `vmctl record` and `vmctl history` at fleet size (issue 28), whole commands over HTTP:
#
#   bash benches/record.sh            # N=10000 migrations; RUNS=7 history runs per query
#
# - generates a cluster of N VMIs (benches/gen_cluster.rs) and gives each VMI one finished
#   migration (a VMIM Succeeded, one in six Failed with a failure reason, ended over the
#   last six days), served by the fake API server (benches/fake_apiserver.rs, LATENCY ms per
#   response, default 0);
# - starts `vmctl record -A` on an empty SQLite journal: its first LIST holds N migrations
#   that ended while it was "down", so it diagnoses and commits all of them; the time until
#   the journal holds N records (polled with `vmctl history`) and the recorder's peak RSS;
# - restarts it: nothing is written twice (N records still), time until it says it is
#   recording;
# - times whole `vmctl history` commands on the N records (process start to exit, median of
#   RUNS): the default table (the newest 50 and the totals of all N), every record as JSON,
#   node/NAME, vm/NAME, --cause, --failed; and `explain` of a migration from the journal.
# Results: target/bench/record/record.md (also printed). The journal's own queries, without
# a process around them, are benches/journal_sqlite.rs (`journal-bench`).
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-10000}
RUNS=${RUNS:-7}
LATENCY=${LATENCY:-0}
OUT=target/bench/record
mkdir -p "$OUT"
rm -f "$OUT"/j.sqlite* "$OUT"/kc

cargo build --release --quiet --bin vmctl --example gen-cluster --example fake-apiserver
BIN=target/release/vmctl

target/release/examples/gen-cluster --vmis "$N" --nodes $((N / 20 > 2 ? N / 20 : 3)) \
  --out "$OUT/cluster.json" 2>"$OUT/gen.err"

# One finished migration per VMI.
python3 - "$OUT/cluster.json" "$OUT/ended.json" <<'PY'
import json, sys, datetime, random
src, dst = sys.argv[1], sys.argv[2]
doc = json.load(open(src))
now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
rnd = random.Random(28)
items = doc["items"]
vmis = [o for o in items if o.get("kind") == "VirtualMachineInstance"]
nodes = sorted({(o.get("status") or {}).get("nodeName") or "node-0" for o in vmis})
def ts(t): return t.strftime("%Y-%m-%dT%H:%M:%SZ")
for i, vmi in enumerate(vmis):
    meta = vmi["metadata"]
    ended = now - datetime.timedelta(seconds=rnd.randint(60, 6 * 86400))
    took = rnd.randint(8, 600)
    created = ended - datetime.timedelta(seconds=took + 5)
    started = ended - datetime.timedelta(seconds=took)
    failed = i % 6 == 0
    phase = "Failed" if failed else "Succeeded"
    src_node = (vmi.get("status") or {}).get("nodeName") or nodes[0]
    tgt_node = nodes[(nodes.index(src_node) + 1) % len(nodes)] if src_node in nodes else nodes[0]
    uid = "bench-%08d-0000-4000-8000-000000000000" % i
    state = {
        "migrationUid": uid, "sourceNode": src_node, "targetNode": tgt_node,
        "sourcePod": "virt-launcher-%s-src" % meta["name"],
        "targetPod": "virt-launcher-%s-tgt" % meta["name"],
        "startTimestamp": ts(started), "endTimestamp": ts(ended),
        "completed": not failed, "failed": failed, "mode": "PreCopy",
    }
    if failed:
        state["failureReason"] = ("Live migration failed: virError(Code=1, Domain=10, "
            "Message='operation failed: migration out job: unexpectedly failed')")
    items.append({
        "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
        "metadata": {"name": "%s-mig" % meta["name"], "namespace": meta["namespace"],
                     "uid": uid, "creationTimestamp": ts(created)},
        "spec": {"vmiName": meta["name"]},
        "status": {"phase": phase, "migrationState": state,
                   "phaseTransitionTimestamps": [
                       {"phase": "Pending", "phaseTransitionTimestamp": ts(created)},
                       {"phase": "Running", "phaseTransitionTimestamp": ts(started)},
                       {"phase": phase, "phaseTransitionTimestamp": ts(ended)}]},
    })
json.dump(doc, open(dst, "w"))
first = vmis[0]["metadata"]
print(f"{len(vmis)} migrations; vm {first['namespace']}/{first['name']}", file=sys.stderr)
open(sys.argv[2] + ".vm", "w").write(f"{first['namespace']} {first['name']}\n")
PY
read -r VM_NS VM_NAME <"$OUT/ended.json.vm"

target/release/examples/fake-apiserver --from "$OUT/ended.json" --latency-ms "$LATENCY" \
  --kubeconfig "$OUT/kc" >"$OUT/server.out" 2>&1 &
SERVER=$!
RECORDER=
cleanup() {
  [ -n "$RECORDER" ] && kill "$RECORDER" 2>/dev/null || true
  kill "$SERVER" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 600); do [ -s "$OUT/kc" ] && break; sleep 0.1; done

export VMCTL_JOURNAL="$OUT/j.sqlite"
matched() {
  # (history exits 1 when a failed migration matched: the document is there all the same)
  local doc
  doc=$("$BIN" history -A --since 30d --limit 1 -o json 2>/dev/null || true)
  python3 -c 'import json,sys; print(json.load(sys.stdin)["matched"])' <<<"$doc" 2>/dev/null || echo 0
}
now_s() { date +%s.%N; }

# 1. Record N migrations.
t0=$(now_s)
"$BIN" --kubeconfig "$OUT/kc" record -A >"$OUT/record.out" 2>"$OUT/record.err" &
RECORDER=$!
got=0
for _ in $(seq 1200); do
  got=$(matched)
  [ "$got" -ge "$N" ] && break
  sleep 0.5
done
t1=$(now_s)
rss_kb=$(awk '/VmHWM/ {print $2}' "/proc/$RECORDER/status" 2>/dev/null || echo 0)
kill -TERM "$RECORDER"; wait "$RECORDER" || true; RECORDER=
record_s=$(python3 -c "print(f'{$t1 - $t0:.1f}')")
rss_mb=$(( rss_kb / 1024 ))
size_mb=$(python3 -c "import os; print(f'{os.path.getsize(\"$OUT/j.sqlite\") / 1e6:.1f}')")
wal_mb=$(python3 -c "import os; p='$OUT/j.sqlite-wal'; print(f'{os.path.getsize(p) / 1e6:.1f}' if os.path.exists(p) else '0')")

# 2. Restart: nothing twice.
t0=$(now_s)
"$BIN" --kubeconfig "$OUT/kc" record -A >"$OUT/restart.out" 2>"$OUT/restart.err" &
RECORDER=$!
for _ in $(seq 3000); do grep -q "recording migrations" "$OUT/restart.err" && break; sleep 0.05; done
t1=$(now_s)
sleep 2
kill -TERM "$RECORDER"; wait "$RECORDER" || true; RECORDER=
restart_s=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
after=$(matched)
written_again=$(grep -c . "$OUT/restart.out" || true)

# 3. Whole history (and explain) commands, median of RUNS.
median_ms() {
  local times=()
  for _ in $(seq "$RUNS"); do
    local a b
    a=$(now_s); "$@" >/dev/null 2>&1 || true; b=$(now_s)
    times+=("$(python3 -c "print(($b - $a) * 1000)")")
  done
  python3 -c "import statistics,sys; print(f'{statistics.median(map(float, sys.argv[1:])):.0f}')" "${times[@]}"
}
doc=$("$BIN" history -A --failed --limit 1 -o json 2>/dev/null || true)
CAUSE=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["byCause"][0]["cause"])' <<<"$doc" 2>/dev/null || echo unknown)
NODE=$(python3 -c "import json; d=json.load(open('$OUT/ended.json')); print(next(o['status']['migrationState']['sourceNode'] for o in d['items'] if o['kind']=='VirtualMachineInstanceMigration' and 'migrationState' in (o.get('status') or {})))")
rows=(
  "history -A --since 7d (table: newest 50, totals of all)|$BIN history -A --since 7d"
  "history -A --since 7d --limit 0 -o json (every record)|$BIN history -A --since 7d --limit 0 -o json"
  "history node/$NODE --since 7d|$BIN history node/$NODE -A --since 7d"
  "history vm/$VM_NAME -n $VM_NS|$BIN history vm/$VM_NAME -n $VM_NS"
  "history -A --cause $CAUSE|$BIN history -A --cause $CAUSE"
  "history -A --failed|$BIN history -A --failed"
  "explain $VM_NAME-mig (gone: from the journal; --from a snapshot without it)|$BIN --from $OUT/empty.json -n $VM_NS explain $VM_NAME-mig"
)
# A snapshot without the migration (a List with only its namespace: explain needs something
# to read), so explain answers from the journal.
echo "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$VM_NS\"}}]}" >"$OUT/empty.json"
explained=$("$BIN" --from "$OUT/empty.json" -n "$VM_NS" explain "$VM_NAME-mig" 2>&1 || true)
case "$explained" in
  "from the journal"*) ;;
  *) echo "explain did not answer from the journal: $explained" >&2; exit 1 ;;
esac
{
  echo "# vmctl record and history at $N migrations ($(date -u +%F), $(nproc) cores, latency ${LATENCY} ms)"
  echo
  echo "| measurement | result |"
  echo "|---|---|"
  echo "| record: a first LIST with $got ended migrations → all in the journal | ${record_s} s (polled every 0.5 s), peak RSS ${rss_mb} MB, journal ${size_mb} MB (WAL ${wal_mb} MB) |"
  echo "| record restarted: until it records again | ${restart_s} s; records after: $after; lines written again: $written_again |"
  for row in "${rows[@]}"; do
    label=${row%%|*}; cmd=${row#*|}
    # shellcheck disable=SC2086
    echo "| \`${label}\` (whole command, median of $RUNS) | $(median_ms $cmd) ms |"
  done
} | tee "$OUT/record.md"
