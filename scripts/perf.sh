#!/usr/bin/env bash
# Host performance of the engine on the message-mesh bench (the workload of
# SST's MessageMesh test). Runs each size several times and prints the median
# events per second, graph build time and peak memory, then the data pass
# against the timing pass on a 512^3 composite GEMM.
#
#   bash scripts/perf.sh
#
# Environment: KBSIM_BIN (default build/bin/kbsim), KBSIM_PERF_RUNS (default 5).
# The targets printed beside the results are goals, not pass/fail checks.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${KBSIM_BIN:-$REPO/build/bin/kbsim}"
RUNS="${KBSIM_PERF_RUNS:-5}"

[[ -x "$BIN" ]] || {
  echo "perf.sh: $BIN not found; build first (bash scripts/setup.sh build) or set KBSIM_BIN" >&2
  exit 1
}
command -v python3 >/dev/null || {
  echo "perf.sh: python3 is needed to read results.json" >&2
  exit 1
}

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kbsim-perf.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# name  x  y  stop_ns  target
CASES=(
  "8x8:10us      8   8 10000 >=29M events/s"
  "32x32:10us   32  32 10000 >=13M events/s"
  "100x100:1us 100 100  1000 >=6.7M events/s"
  "300x300:0   300 300     0 build <2s, <500MB"
)

echo "==> $BIN, $RUNS runs per case, $(nproc) cores"
TABLE="$WORK/table.tsv"
: >"$TABLE"
for c in "${CASES[@]}"; do
  read -r name x y stop target <<<"$c"
  printf '==> %-12s x=%s y=%s stop_ns=%s, %d runs\n' "$name" "$x" "$y" "$stop" "$RUNS"
  for ((i = 1; i <= RUNS; i++)); do
    out="$WORK/$name-$i"
    "$BIN" run --bench message-mesh --param "x=$x" --param "y=$y" --param "stop_ns=$stop" \
      --out "$out" >"$out.log" 2>&1 || {
      echo "perf.sh: $name run $i failed; its output:" >&2
      cat "$out.log" >&2
      exit 1
    }
    printf '%s\t%s\t%s\n' "$name" "$target" "$out/results.json" >>"$TABLE"
  done
done

# The data pass against the timing pass on a 512^3 composite GEMM on one PE.
DATA="$WORK/data.tsv"
: >"$DATA"
printf '==> matmul-composite 512^3, timing pass alone and with --verify-data, %d runs each\n' "$RUNS"
for mode in timing data; do
  for ((i = 1; i <= RUNS; i++)); do
    out="$WORK/mm-$mode-$i"
    extra=()
    [[ $mode == data ]] && extra=(--verify-data)
    "$BIN" run --bench matmul-composite --param M=512 --param K=512 --param N=512 "${extra[@]}" \
      --out "$out" >"$out.log" 2>&1 || {
      echo "perf.sh: matmul-composite ($mode) run $i failed; its output:" >&2
      cat "$out.log" >&2
      exit 1
    }
    printf '%s\t%s\n' "$mode" "$out/results.json" >>"$DATA"
  done
done

python3 - "$TABLE" "$DATA" <<'EOF'
import json, statistics, sys

def get(doc, path):
    for key in path.split("."):
        if not isinstance(doc, dict) or key not in doc:
            return None
        doc = doc[key]
    return doc

def median(files, path):
    vals = [get(json.load(open(f)), path) for f in files]
    vals = [v for v in vals if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None

def fmt(v, scale, digits):
    return "missing" if v is None else f"{v / scale:.{digits}f}"

print(f"{'case':<12} {'Mevents/s':>10} {'build s':>9} {'peak MB':>9}  target")
cases = {}  # insertion-ordered: name -> (target, [results.json, ...])
for line in open(sys.argv[1]):
    name, target, path = line.rstrip("\n").split("\t")
    cases.setdefault(name, (target, []))[1].append(path)
for name, (target, files) in cases.items():
    eps = median(files, "events_per_s")
    build = median(files, "host.build_wall_s")
    rss = median(files, "host.peak_rss_mb")
    print(f"{name:<12} {fmt(eps, 1e6, 2):>10} {fmt(build, 1, 3):>9} {fmt(rss, 1, 1):>9}  {target}")
print("(medians; 300x300 with stop_ns=0 measures building a 90,000-node graph)")

runs = {"timing": [], "data": []}
for line in open(sys.argv[2]):
    mode, path = line.rstrip("\n").split("\t")
    runs[mode].append(path)
timing = median(runs["timing"], "wall_time_s")
data = median(runs["data"], "data_pass.wall_time_s")
print(f"matmul-composite 512^3: timing pass {fmt(timing, 1e-3, 1)} ms, data pass {fmt(data, 1e-3, 1)} ms"
      + (f", ratio {data / timing:.2f}" if timing and data is not None else "") + " (medians)")
EOF
