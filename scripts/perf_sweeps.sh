#!/usr/bin/env bash
# Wall time of the milestone sweeps as a user runs them (whole command,
# including plugin loading and writing the folder): milestone-gemm and
# milestone-gqa with every core, milestone-ccl serially (-j 1) and with every
# core, and the speed-up of the parallel run. Prints median (min-max).
#
#   bash scripts/perf_sweeps.sh
#
# Environment: KBSIM_BIN (default build/bin/kbsim), KBSIM_PERF_RUNS (default 3).
# Targets on 2 cores (goals, not checks): gemm and gqa < 10 s, ccl < 60 s.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${KBSIM_BIN:-$REPO/build/bin/kbsim}"
RUNS="${KBSIM_PERF_RUNS:-3}"
[[ -x "$BIN" ]] || {
  echo "perf_sweeps.sh: $BIN not found; build first (bash scripts/setup.sh build) or set KBSIM_BIN" >&2
  exit 1
}
WORK="$(mktemp -d "${TMPDIR:-/tmp}/kbsim-sweeps.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# Print "median (min-max)" of the wall seconds of RUNS runs of `kbsim run ARGS`; the median goes to $WORK/last.
time_runs() {
  local label=$1
  shift
  local times=()
  for ((i = 1; i <= RUNS; i++)); do
    local t0 t1
    t0=$(date +%s.%N)
    "$BIN" run "$@" --out "$WORK/out" >"$WORK/log" 2>&1 || {
      echo "perf_sweeps.sh: $label failed; its output:" >&2
      cat "$WORK/log" >&2
      exit 1
    }
    t1=$(date +%s.%N)
    times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')")
    rm -rf "$WORK/out"
  done
  printf '%s\n' "${times[@]}" | sort -g >"$WORK/sorted"
  local med min max
  med=$(sed -n "$(((RUNS + 1) / 2))p" "$WORK/sorted")
  min=$(head -1 "$WORK/sorted")
  max=$(tail -1 "$WORK/sorted")
  echo "$med" >"$WORK/last"
  printf '  %-34s %7.2f s  (%.2f-%.2f, %d runs)\n' "$label" "$med" "$min" "$max" "$RUNS"
}

echo "==> $BIN, $(nproc) cores, wall time per whole command"
time_runs "milestone-gemm (-j $(nproc))" --bench milestone-gemm
time_runs "milestone-gqa (-j $(nproc))" --bench milestone-gqa
time_runs "milestone-ccl -j 1" --bench milestone-ccl -j 1
serial=$(cat "$WORK/last")
time_runs "milestone-ccl (-j $(nproc))" --bench milestone-ccl
parallel=$(cat "$WORK/last")
printf '  milestone-ccl speed-up of -j %d over -j 1: %.2fx\n' "$(nproc)" "$(awk -v s="$serial" -v p="$parallel" 'BEGIN { print s / p }')"
