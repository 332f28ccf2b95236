#!/usr/bin/env bash
# Long fuzz runs (issue 11 part 7): the fuzzer of tests/fuzz.rs, with more iterations and a
# random seed by default. `cargo test` runs it briefly with a fixed seed; this runs it long.
#
#   bash benches/fuzz.sh [ITERATIONS] [SEED]
#
# ITERATIONS: reader inputs (default 100000); the commands get ITERATIONS/20 runs of the
#   binary (each about 0.1-0.2 s in a debug build). SEED: a number (decimal or 0x...) to
#   replay a run, or `random` (default).
# Environment: VMCTL_FUZZ_RUNS (commands runs, overrides ITERATIONS/20),
#   VMCTL_FUZZ_STRICT_TABLES=1 (also fail on raw control characters in status/plan-drain
#   tables), VMCTL_FUZZ_OUT (default target/fuzz-failures), ONLY=reader|commands (one target).
# Failing inputs go to $VMCTL_FUZZ_OUT/<target>-<seed>-<iteration>/: the input as found,
# a shrunk one (min-* or min/), and WHY.txt (what failed, and how to replay that case).
# The seed is printed first: note it to replay a run.
set -euo pipefail
cd "$(dirname "$0")/.."

ITERATIONS=${1:-100000}
SEED=${2:-random}
if [ "$SEED" = random ]; then
  SEED=0x$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
fi
export VMCTL_FUZZ_SEED=$SEED
export VMCTL_FUZZ_ITERATIONS=$ITERATIONS
export VMCTL_FUZZ_RUNS=${VMCTL_FUZZ_RUNS:-$((ITERATIONS / 20))}
export VMCTL_FUZZ_OUT=${VMCTL_FUZZ_OUT:-$PWD/target/fuzz-failures}
case "${ONLY:-}" in
  reader) FILTER=fuzz_snapshot_reader; export VMCTL_FUZZ_RUNS=0 ;;
  commands) FILTER=fuzz_commands; export VMCTL_FUZZ_ITERATIONS=0 ;;
  *) FILTER=fuzz_ ;;
esac

echo "fuzz: seed $VMCTL_FUZZ_SEED, $VMCTL_FUZZ_ITERATIONS reader inputs, $VMCTL_FUZZ_RUNS command runs; failures in $VMCTL_FUZZ_OUT"
command -v /usr/bin/time >/dev/null || echo "fuzz: GNU time is not installed (apt-get install time): peak RSS is not measured, only the address-space limit holds" >&2
status=0
cargo test --locked --test fuzz -- "$FILTER" --nocapture --test-threads 2 || status=$?
echo "fuzz: seed $VMCTL_FUZZ_SEED: $([ $status = 0 ] && echo no failure || echo "FAILED, see $VMCTL_FUZZ_OUT")"
exit $status
