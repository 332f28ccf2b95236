#!/bin/bash
# benches/libvirt_migrate.sh - `virsh migrate --live --p2p` vs `vmctl migrate`, side by side in
# one run, on the two-daemon lab (tests/lab/lab.sh; LAB.md's recipe: TCG, 256 MiB guest with
# a 160 MiB working set).
#
#   (a) an idle guest (working set written once, then idle): N runs each, fresh guest per
#       run, wall time of the command; vmctl should be within 5% of virsh.
#   (b) a busy guest (64 MiB/s dirtied) over a 32 MiB/s bandwidth cap, 30 ms max downtime:
#       virsh without post-copy (capped at VIRSH_CAP seconds, then domjobabort);
#       `virsh migrate --postcopy --postcopy-after-precopy` vs vmctl --allow-postcopy, N runs
#       each, wall time: vmctl/virsh, and vmctl's wall against memory/bandwidth (8 s) and
#       against libvirt's job; and vmctl with nothing allowed (how fast it proves
#       non-convergence and gives up).
#
# vmctl starts at once (issue 33: no dirty-rate measurement before the start unless
# --measure) and its summary's totalMs is the operator's wait (jobMs: libvirt's job).
#
# usage: benches/libvirt_migrate.sh            (root; brings the lab up if it is not)
#   RUNS=5  VIRSH_CAP=300  LAB=/tmp/vmctl-lab  VMCTL=path/to/vmctl (default: a release
#   build with --features libvirt)  KEEP_LAB=1 (leave the lab up afterwards)  IDLE_ONLY=1
#
# vmctl uses KubeVirt's flags, which include PERSIST_DEST (the destination defines the
# domain): (a) also times `virsh migrate --live --p2p --persistent`, the same work.
set -euo pipefail
cd "$(dirname "$0")/.."
export LAB=${LAB:-/tmp/vmctl-lab}
RUNS=${RUNS:-5}
VIRSH_CAP=${VIRSH_CAP:-300}
LABSH=tests/lab/lab.sh

if [[ -z ${VMCTL:-} ]]; then
    cargo build --release --quiet --features libvirt
    VMCTL=${CARGO_TARGET_DIR:-target}/release/vmctl
fi
started_lab=0
if ! [[ -S $LAB/src/sock/libvirt-sock && -S $LAB/dst/sock/libvirt-sock ]]; then
    "$LABSH" up >&2
    started_lab=1
fi
[[ ${KEEP_LAB:-0} == 1 || $started_lab == 0 ]] || trap '"$LABSH" down >&2' EXIT
"$LABSH" daemons >&2
eval "$("$LABSH" env)"

now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc; }
median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m}'; }
state() { virsh -q -c "$1" domstate "$DOM" 2>/dev/null | head -1 || true; }
# a top-level field of vmctl's -o json report (no jq needed)
field() { grep -m1 -o "^  \"$1\": *[^,]*" <<<"$2" | sed 's/^[^:]*: *//; s/"//g' || echo "?"; }
fresh() { "$LABSH" guest "$1" "$2" 256 >/dev/null 2>"$LAB/fresh.err" || { cat "$LAB/fresh.err" >&2; return 1; }; }

results=()
row() { results+=("$(printf '%-36s %-40s %s' "$1" "$2" "$3")"); }

# ---- (a) idle guest -------------------------------------------------------------------
virsh_t=() persist_t=() vmctl_t=()
for i in $(seq "$RUNS"); do
    fresh 160 0
    t0=$(now)
    virsh -q -c "$SRC_URI" migrate --live --p2p "$DOM" "$DST_URI" >/dev/null
    virsh_t+=("$(secs "$t0" "$(now)")")
    [[ $(state "$DST_URI") == running ]] || { echo "virsh run $i: guest not running on dst" >&2; exit 1; }

    fresh 160 0
    t0=$(now)
    virsh -q -c "$SRC_URI" migrate --live --p2p --persistent "$DOM" "$DST_URI" >/dev/null
    persist_t+=("$(secs "$t0" "$(now)")")
    [[ $(state "$DST_URI") == running ]] || { echo "virsh --persistent run $i: guest not running on dst" >&2; exit 1; }

    fresh 160 0
    t0=$(now)
    "$VMCTL" migrate "$DOM" --connect "$SRC_URI" --to "$DST_URI" >/dev/null 2>&1
    vmctl_t+=("$(secs "$t0" "$(now)")")
    [[ $(state "$DST_URI") == running ]] || { echo "vmctl run $i: guest not running on dst" >&2; exit 1; }
    echo "idle run $i: virsh ${virsh_t[-1]} s, virsh --persistent ${persist_t[-1]} s, vmctl ${vmctl_t[-1]} s" >&2
done
short() { printf '%.2f ' "$@"; }
vm=$(printf '%s\n' "${virsh_t[@]}" | median)
pm=$(printf '%s\n' "${persist_t[@]}" | median)
cm=$(printf '%s\n' "${vmctl_t[@]}" | median)
row "(a) idle guest, no cap" "virsh migrate --live --p2p" "median ${vm} s of $RUNS ($(short "${virsh_t[@]}"))"
row "" "virsh migrate --live --p2p --persistent" "median ${pm} s of $RUNS ($(short "${persist_t[@]}"))"
row "" "vmctl migrate" "median ${cm} s of $RUNS ($(short "${vmctl_t[@]}")); vmctl/virsh = $(echo "scale=3; $cm / $vm" | bc), vmctl/virsh --persistent = $(echo "scale=3; $cm / $pm" | bc)"

# ---- (b) busy guest over a bandwidth cap ------------------------------------------------
if [[ ${IDLE_ONLY:-0} == 1 ]]; then printf '%s\n' "${results[@]}"; exit 0; fi
target=$(echo "scale=1; 1.3 * 256 / 32" | bc)
fresh 160 64
virsh -q -c "$SRC_URI" migrate-setmaxdowntime "$DOM" 30 >/dev/null
t0=$(now)
virsh -q -c "$SRC_URI" migrate --live --p2p --bandwidth 32 "$DOM" "$DST_URI" >/dev/null 2>&1 &
mig=$!
while kill -0 "$mig" 2>/dev/null && (($(echo "$(now) - $t0 < $VIRSH_CAP" | bc))); do sleep 1; done
if kill -0 "$mig" 2>/dev/null; then
    virsh -q -c "$SRC_URI" domjobabort "$DOM" >/dev/null 2>&1 || true
    wait "$mig" || true
    row "(b) 64 MiB/s dirtied, 32 MiB/s cap" "virsh migrate --live --p2p" \
        "not finished after ${VIRSH_CAP} s (aborted; guest on src: $(state "$SRC_URI"))"
else
    rc=0; wait "$mig" || rc=$?
    row "(b) 64 MiB/s dirtied, 32 MiB/s cap" "virsh migrate --live --p2p" \
        "ended after $(secs "$t0" "$(now)") s, rc=$rc"
fi

vpc_t=() cpc_t=() cpc_job=()
for i in $(seq "$RUNS"); do
    fresh 160 64
    virsh -q -c "$SRC_URI" migrate-setmaxdowntime "$DOM" 30 >/dev/null
    t0=$(now)
    virsh -q -c "$SRC_URI" migrate --live --p2p --persistent --postcopy --postcopy-after-precopy \
        --bandwidth 32 "$DOM" "$DST_URI" >/dev/null
    vpc_t+=("$(secs "$t0" "$(now)")")
    [[ $(state "$DST_URI") == running ]] || { echo "virsh --postcopy run $i: guest not running on dst" >&2; exit 1; }

    fresh 160 64
    t0=$(now)
    rc=0
    out=$("$VMCTL" migrate "$DOM" --connect "$SRC_URI" --to "$DST_URI" --bandwidth 32 \
        --max-downtime 30 --allow-postcopy -o json 2>/dev/null) || rc=$?
    cpc_t+=("$(secs "$t0" "$(now)")")
    cpc_job+=("$(echo "scale=2; $(field jobMs "$out") / 1000" | bc 2>/dev/null || echo 0)")
    [[ $rc == 0 && $(state "$DST_URI") == running ]] || { echo "vmctl --allow-postcopy run $i: rc=$rc, guest not running on dst" >&2; exit 1; }
    echo "busy run $i: virsh --postcopy ${vpc_t[-1]} s, vmctl --allow-postcopy ${cpc_t[-1]} s (libvirt job ${cpc_job[-1]} s, totalMs $(field totalMs "$out"))" >&2
done
vpm=$(printf '%s\n' "${vpc_t[@]}" | median)
cpm=$(printf '%s\n' "${cpc_t[@]}" | median)
cjm=$(printf '%s\n' "${cpc_job[@]}" | median)
row "" "virsh migrate --postcopy-after-precopy" "median ${vpm} s of $RUNS ($(short "${vpc_t[@]}"))"
row "" "vmctl migrate --allow-postcopy" \
    "median ${cpm} s of $RUNS ($(short "${cpc_t[@]}")); vmctl/virsh = $(echo "scale=3; $cpm / $vpm" | bc), vmctl/(memory/bandwidth 8 s) = $(echo "scale=3; $cpm / 8" | bc), vmctl/libvirt job = $(echo "scale=3; $cpm / $cjm" | bc) (job median ${cjm} s; target <= ${target} s)"

fresh 160 64
t0=$(now)
rc=0
out=$("$VMCTL" migrate "$DOM" --connect "$SRC_URI" --to "$DST_URI" --bandwidth 32 \
    --max-downtime 30 -o json 2>/dev/null) || rc=$?
wall=$(secs "$t0" "$(now)")
cause=$(field cause "$out")
row "" "vmctl migrate (nothing allowed)" \
    "rc=$rc, gave up after ${wall} s: ${cause} (KubeVirt's budget: 150 s); guest on src: $(state "$SRC_URI")"

echo
echo "libvirt $(virsh -c "$SRC_URI" version 2>/dev/null | awk '/Using library/ {print $4}'), QEMU $(qemu-system-x86_64 --version | awk 'NR==1 {print $4}'), TCG, $(nproc) CPUs"
printf '%s\n' "${results[@]}"
