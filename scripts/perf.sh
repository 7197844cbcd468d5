#!/usr/bin/env bash
# Host performance of the engine on the message-mesh bench (the workload of
# SST's MessageMesh test). Runs each size several times and prints the median
# events per second (with the range over the runs: min-max), graph build time
# and peak memory, and kbsim's speed as a
# share of the hand-written floor (benchmarks/floor_mesh.cpp, the same
# workload without a framework); then the AHBM model's own workloads (events,
# run phase and whole process, events per second), runs split over 2 ranks of
# mpirun against one process, the engine micro-benchmarks with distinct
# timestamps, and the data pass against the timing pass on a 512^3 composite
# GEMM.
#
#   bash scripts/perf.sh
#
# Environment: KBSIM_BIN (default build/bin/kbsim), KBSIM_PERF_RUNS (default 5).
# The targets printed beside the results are goals, not pass/fail checks.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${KBSIM_BIN:-$REPO/build/bin/kbsim}"
FLOOR="$(dirname "$BIN")/kbsim_floor_mesh"
BENCH="$(dirname "$BIN")/kbsim_benchmarks"
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
  "200x200:0.2us 200 200  200 -"
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
    if [[ $stop -gt 0 && -x "$FLOOR" ]]; then  # the floor, run the same number of times
      "$FLOOR" "$x" "$y" "$stop" >"$out.floor"
      printf '%s\t%s\n' "$name" "$out.floor" >>"$WORK/floor.tsv"
    fi
  done
done
: >>"$WORK/floor.tsv"

SIPS6="--set system.sips.count=6 --set system.sips.topology=torus_2d --set system.sips.w=3 --set system.sips.h=2"
SIPS16="--set system.sips.count=16 --set system.sips.topology=torus_2d --set system.sips.w=4 --set system.sips.h=4"

# The AHBM model's workloads: events, run phase and whole process (start to exit), events per second.
AHBM="$WORK/ahbm.tsv"
: >"$AHBM"
WORKLOADS=(
  "probe|--bench probe"
  "pe-dma-perf|--bench pe-dma-perf"
  "composite-512^3|--bench matmul-composite --param M=512 --param K=512 --param N=512"
  "composite-1024^3|--bench matmul-composite --param M=1024 --param K=1024 --param N=1024"
  "allreduce-6sip-96KB|--bench ccl-allreduce $SIPS6"
  "allreduce-16sip-96KB|--bench ccl-allreduce $SIPS16"
  "fidelity|--bench fidelity"
  "milestone-ccl-j2|--bench milestone-ccl -j 2"
  "llama-decode-2sip|--bench llama-layer --param phase=decode --set system.sips.count=2"
  "llama-prefill128-2sip|--bench llama-layer --param phase=prefill --param seq=128 --set system.sips.count=2"
)
# KBSIM_PERF_FLAT=1: the same workloads with every flit its own event (KBSIM_FLIT_BY_FLIT=1), for a before/after
# of flit trains on one build.
[[ "${KBSIM_PERF_FLAT:-0}" == 1 ]] && export KBSIM_FLIT_BY_FLIT=1
for w in "${WORKLOADS[@]}"; do
  name="${w%%|*}"
  read -r -a args <<<"${w#*|}"
  printf '==> %-20s %d runs\n' "$name" "$RUNS"
  for ((i = 1; i <= RUNS; i++)); do
    out="$WORK/ahbm-$name-$i"
    t0=$EPOCHREALTIME
    "$BIN" run "${args[@]}" --out "$out" >"$out.log" 2>&1 || {
      echo "perf.sh: $name run $i failed; its output:" >&2
      cat "$out.log" >&2
      exit 1
    }
    printf '%s\t%s\t%s\t%s\n' "$name" "$out/results.json" "$t0" "$EPOCHREALTIME" >>"$AHBM"
  done
done

# Runs split over 2 ranks of mpirun against one process, paired (the order alternates), run phase: the AHBM
# allreduce (with the reference's PHYs and with pipelined ones), and message-mesh without and with a promised send
# delay (docs/scale-out.md, "Lookahead").
SPLIT="$WORK/split.tsv"
: >"$SPLIT"
# The same allreduces with UCIe PHYs whose 8 ns is a per-flit pipeline, which they promise (docs/model.md, "Transit
# nodes"): the cuts at the PHYs get 8.1-8.2 ns of lookahead instead of 0.1-0.2.
PIPELINED=""
for phy in cube.components.ucie sip.io_chiplets.io0.components.io_ucie; do
  PIPELINED+=" --set $phy.attrs.overhead_ns=0 --set $phy.attrs.pipeline_ns=8"
done
SPLITS=(
  "allreduce-6sip|--bench ccl-allreduce $SIPS6"
  "allreduce-16sip|--bench ccl-allreduce $SIPS16"
  "allreduce-6sip-pipe|--bench ccl-allreduce $SIPS6 $PIPELINED"
  "allreduce-16sip-pipe|--bench ccl-allreduce $SIPS16 $PIPELINED"
  "mesh-100x100|--bench message-mesh --param x=100 --param y=100 --param stop_ns=1000"
  "mesh-100x100-delay3|--bench message-mesh --param x=100 --param y=100 --param stop_ns=1000 --param delay_ns=3"
)
if command -v mpirun >/dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  for w in "${SPLITS[@]}"; do
    name="${w%%|*}"
    read -r -a args <<<"${w#*|}"
    printf '==> split %-18s 1 process and mpirun -np 2, %d pairs\n' "$name" "$RUNS"
    for ((i = 1; i <= RUNS; i++)); do
      for who in $( ((i % 2)) && echo "one two" || echo "two one"); do
        out="$WORK/split-$name-$who-$i"
        if [[ $who == one ]]; then
          "$BIN" run "${args[@]}" --out "$out" >"$out.log" 2>&1
        else
          mpirun -q --oversubscribe -np 2 "$BIN" run "${args[@]}" --out "$out" >"$out.log" 2>&1
        fi || {
          echo "perf.sh: split $name ($who) run $i failed; its output:" >&2
          cat "$out.log" >&2
          exit 1
        }
        printf '%s\t%s\t%s\t%s\n' "$name" "$who" "$i" "$out/results.json" >>"$SPLIT"
      done
    done
  done
fi

# The engine alone, events with distinct timestamps (Google Benchmark: every repetition, for the median and range).
ENGINE="$WORK/engine.json"
echo '{}' >"$ENGINE"
if [[ -x "$BENCH" ]]; then
  echo "==> engine micro-benchmarks, distinct timestamps"
  "$BENCH" --benchmark_filter='DistinctTimestamps' --benchmark_repetitions="$RUNS" --benchmark_format=json \
    >"$ENGINE" 2>/dev/null || echo '{}' >"$ENGINE"
fi

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

# A bench run from Python (kbsim.run, in process) against the same run of the command, paired: each pair runs
# back to back, alternating which goes first; whole-call wall times and the run phase's (results.json).
PYPKG="$(dirname "$BIN")/../python"
PYTHON_COST="$WORK/python.txt"
if [[ -x /usr/bin/python3 && -d "$PYPKG/kbsim" ]]; then
  printf '==> kbsim.run against kbsim run, %d pairs per bench\n' "$RUNS"
  PYTHONPATH="$PYPKG" /usr/bin/python3 - "$BIN" "$RUNS" "$WORK" "$REPO" >"$PYTHON_COST" <<'PY' || echo "(the Python comparison failed)" >"$PYTHON_COST"
import json, os, statistics, subprocess, sys, time
import kbsim
binary, runs, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cases = [("pe-dma-perf", {}), ("message-mesh 32x32", {"x": 32, "y": 32, "stop_ns": 10000})]
print("bench                  command wall s     Python wall s      run phase cmd / Python    Python / command")
for name, params in cases:
    bench = name.split()[0]
    cmd, py, cmd_run, py_run, ratios = [], [], [], [], []
    for i in range(runs):
        order = ("cli", "py") if i % 2 == 0 else ("py", "cli")
        pair = {}
        for who in order:
            out = os.path.join(work, "py-{}-{}-{}".format(bench, who, i))
            t = time.perf_counter()
            if who == "cli":
                args = [binary, "run", "--bench", bench, "--out", out]
                for k, v in params.items():
                    args += ["--param", "{}={}".format(k, v)]
                subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
            else:
                kbsim.run(bench, params=params, out=out, quiet=True, progress=False)
            pair[who] = time.perf_counter() - t
            with open(os.path.join(out, "results.json")) as f:
                (cmd_run if who == "cli" else py_run).append(json.load(f)["wall_time_s"])
        cmd.append(pair["cli"])
        py.append(pair["py"])
        ratios.append(pair["py"] / pair["cli"])
    def m(v):
        return "{:.3f} ({:.3f}-{:.3f})".format(statistics.median(v), min(v), max(v))
    print("{:<22} {:<18} {:<18} {:.3f} / {:.3f}            {:.2f} ({:.2f}-{:.2f})".format(
        name, m(cmd), m(py), statistics.median(cmd_run), statistics.median(py_run), statistics.median(ratios),
        min(ratios), max(ratios)))
print("(medians and ranges; the command's wall includes starting a process and loading its plugins, which an")
print(" interpreter that imported kbsim pays once per run too: kbsim.run loads the plugins as the command does)")

# A bench written in Python (a plugin file) against its C++ twin, and the start-up of a run beside a directory of
# Python plugins, indexed (no interpreter starts) or not (discovery runs every file).
examples = os.path.join(sys.argv[4], "examples", "python_plugins")
indexed, unindexed = os.path.join(work, "py-indexed"), os.path.join(work, "py-unindexed")
import shutil
for d in (indexed, unindexed):
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(examples, d)
subprocess.run([binary, "list", "--write-index", indexed], check=True)
gemm = ["--param", "M=512", "--param", "K=512", "--param", "N=512"]
torus = ["--param", "n_elem=4096", "--set", "system.sips.count=6", "--set", "system.sips.topology=torus_2d",
         "--set", "system.sips.w=3", "--set", "system.sips.h=2"]
pairs = [("py-tp-mlp / tp-mlp", ["--bench", "py-tp-mlp", "--plugins", indexed], ["--bench", "tp-mlp"]),
         ("py-matmul-composite / matmul-composite, 512^3",
          ["--bench", "py-matmul-composite", "--plugins", indexed, *gemm], ["--bench", "matmul-composite", *gemm]),
         ("py_ring_allreduce / ring_allreduce, 6-SIP torus",
          ["--bench", "ccl-allreduce", "--plugins", indexed, "--set", "ccl.algorithm=py_ring_allreduce", *torus],
          ["--bench", "ccl-allreduce", "--set", "ccl.algorithm=ring_allreduce", *torus]),
         ("pe-dma-perf, Python plugins indexed / none", ["--bench", "pe-dma-perf", "--plugins", indexed],
          ["--bench", "pe-dma-perf"]),
         ("pe-dma-perf, Python plugins not indexed / none", ["--bench", "pe-dma-perf", "--plugins", unindexed],
          ["--bench", "pe-dma-perf"])]
# The SDK guide's pinger (a test plugin: only in a build with the tests) against py.pinger, 100000 pings.
cpp_pinger = os.path.join(os.path.dirname(binary), "..", "tests", "plugins", "pinger")
if os.path.isdir(cpp_pinger):
    comps = os.path.join(work, "pingers-components.yaml")
    with open(comps, "w") as f:
        f.write("components:\n  acme.pinger: { library: test_pinger, type: acme_pinger }\n"
                "  py.pinger: { library: pinger.py, type: py_pinger }\n")
    topo = {}
    for impl in ("py.pinger", "acme.pinger"):
        topo[impl] = os.path.join(work, impl + ".yaml")
        with open(topo[impl], "w") as f:
            f.write("nodes:\n  - {{ id: a, impl: {0}, params: {{ send_to: b, count: 100000, interval_ns: 0.5 }} }}\n"
                    "  - {{ id: b, impl: {0} }}\nedges:\n  - {{ src: a, dst: b, bandwidth_gbs: 64, latency_ns: 1,"
                    " bidir: true }}\n".format(impl))
    pairs.append(("py.pinger / acme.pinger (the guide's), 100000 pings",
                  ["--plugins", indexed, "--plugins", cpp_pinger, "--components", comps, "--topology",
                   topo["py.pinger"]],
                  ["--plugins", indexed, "--plugins", cpp_pinger, "--components", comps, "--topology",
                   topo["acme.pinger"]]))
print()
print("Python plugins, paired (A / B)                     A wall s           B wall s           wall A/B"
      "            run phase A/B       M events/s A / B")
for name, a, b in pairs:
    walls = {"a": [], "b": []}
    runs_ = {"a": [], "b": []}
    rates = {"a": [], "b": []}
    for i in range(runs):
        for who in (("a", "b") if i % 2 == 0 else ("b", "a")):
            out = os.path.join(work, "plug-{}-{}".format(who, i))
            t = time.perf_counter()
            subprocess.run([binary, "run", *(a if who == "a" else b), "--out", out], check=True,
                           stdout=subprocess.DEVNULL)
            walls[who].append(time.perf_counter() - t)
            with open(os.path.join(out, "results.json")) as f:
                r = json.load(f)
                runs_[who].append(r["wall_time_s"])
                rates[who].append(r["events"] / r["wall_time_s"] / 1e6 if r["wall_time_s"] > 0 else 0.0)
    wr = [x / y for x, y in zip(walls["a"], walls["b"])]
    rr = [x / y for x, y in zip(runs_["a"], runs_["b"])]
    print("{:<50} {:<18} {:<18} {:.2f} ({:.2f}-{:.2f})   {:.2f} ({:.2f}-{:.2f})   {:.2f} / {:.2f}".format(
        name, m(walls["a"]), m(walls["b"]), statistics.median(wr), min(wr), max(wr), statistics.median(rr),
        min(rr), max(rr), statistics.median(rates["a"]), statistics.median(rates["b"])))
print("(the whole process's wall includes starting the interpreter when a Python plugin is loaded; the run phase")
print(" is the bench's own: a Python bench's calls cost a hand-over between two threads each)")

# The host time of one tl call of a Python kernel: a kernel of N tl.cycles(1) calls on one PE, against N = 0.
calls_dir = os.path.join(work, "py-calls")
os.makedirs(calls_dir, exist_ok=True)
with open(os.path.join(calls_dir, "calls.py"), "w") as f:
    f.write("import kbsim\n\n"
            "@kbsim.kernel('perf_cycles', 'n tl.cycles(1) calls')\n"
            "def cycles(tl, n):\n"
            "    for _ in range(n):\n"
            "        tl.cycles(1)\n\n"
            "@kbsim.bench('perf-tl-calls', 'one launch of perf_cycles', params=[kbsim.Param('n', 0, 'calls')])\n"
            "def bench(ctx):\n"
            "    ctx.runtime.launch('perf_cycles', ctx.params['n']).wait()\n")
n_calls = 20000
per_call = []
for i in range(runs):
    walls = {}
    for n in ((0, n_calls) if i % 2 == 0 else (n_calls, 0)):
        out = os.path.join(work, "calls-{}-{}".format(n, i))
        subprocess.run([binary, "run", "--bench", "perf-tl-calls", "--plugins", calls_dir, "--param",
                        "n={}".format(n), "--out", out], check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(out, "results.json")) as f:
            walls[n] = json.load(f)["wall_time_s"]
    per_call.append((walls[n_calls] - walls[0]) / n_calls * 1e6)
print("a Python kernel's tl call (tl.cycles(1), run phase with {} calls against none): {:.2f} us ({:.2f}-{:.2f})"
      .format(n_calls, statistics.median(per_call), min(per_call), max(per_call)))
PY
fi

python3 - "$TABLE" "$DATA" "$WORK/floor.tsv" "$AHBM" "$ENGINE" "$SPLIT" <<'EOF'
import json, statistics, sys

def get(doc, path):
    for key in path.split("."):
        if not isinstance(doc, dict) or key not in doc:
            return None
        doc = doc[key]
    return doc

def values(files, path):
    vals = [get(json.load(open(f)), path) for f in files]
    return [v for v in vals if isinstance(v, (int, float))]

def median(files, path):
    vals = values(files, path)
    return statistics.median(vals) if vals else None

def fmt(v, scale, digits):
    return "missing" if v is None else f"{v / scale:.{digits}f}"

def spread(vals, scale, digits):
    """The median and, over several runs, the range: "12.3 (11.9-12.8)"."""
    if not vals:
        return "missing"
    if not any(vals):
        return "-"  # (no events: a build-only case)
    m = fmt(statistics.median(vals), scale, digits)
    return m if len(vals) == 1 else f"{m} ({fmt(min(vals), scale, digits)}-{fmt(max(vals), scale, digits)})"

print(f"{'case':<12} {'Mevents/s (min-max)':>22} {'build s':>9} {'peak MB':>9}  target")
cases = {}  # insertion-ordered: name -> (target, [results.json, ...])
for line in open(sys.argv[1]):
    name, target, path = line.rstrip("\n").split("\t")
    cases.setdefault(name, (target, []))[1].append(path)
for name, (target, files) in cases.items():
    eps = spread(values(files, "events_per_s"), 1e6, 2)
    build = median(files, "host.build_wall_s")
    rss = median(files, "host.peak_rss_mb")
    print(f"{name:<12} {eps:>22} {fmt(build, 1, 3):>9} {fmt(rss, 1, 1):>9}  {target}")
print("(medians, with the range over the runs; 300x300 with stop_ns=0 measures building a 90,000-node graph)")

# kbsim against the floor: events per second of the run phase (wall time less the graph build) of each.
floors = {}
for line in open(sys.argv[3]):
    name, path = line.rstrip("\n").split("\t")
    fields = open(path).read().split()
    floors.setdefault(name, []).append(float(fields[fields.index("events_per_s") + 1]))
if floors:
    print(f"\n{'case':<14} {'kbsim M/s (min-max)':>22} {'floor M/s (min-max)':>24} {'kbsim/floor':>12}")
    for name, (target, files) in cases.items():
        if name not in floors:
            continue
        runs_eps = []
        for f in files:
            d = json.load(open(f))
            run_s = d["wall_time_s"] - d["host"]["build_wall_s"]
            runs_eps.append(d["events"] / run_s if run_s > 0 else 0)
        k, fl = statistics.median(runs_eps), statistics.median(floors[name])
        print(f"{name:<14} {spread(runs_eps, 1e6, 2):>22} {spread(floors[name], 1e6, 2):>24} {100 * k / fl:>11.1f}%")
    print("(run phase only; the share is of the medians; the floor is benchmarks/floor_mesh.cpp)")

ahbm, whole = {}, {}
for line in open(sys.argv[4]):
    name, path, t0, t1 = line.rstrip("\n").split("\t")
    ahbm.setdefault(name, []).append(path)
    whole.setdefault(name, []).append(float(t1) - float(t0))
print(f"\n{'AHBM workload':<22} {'events':>10} {'engine ev':>10} {'ev/KB':>7} {'run phase s (min-max)':>22} "
      f"{'whole s (min-max)':>20} {'build s':>8} {'M events/s (min-max)':>22} {'peak MB':>8}")
for name, files in ahbm.items():
    ev = median(files, "events")
    engine = median(files, "host.engine_events")
    # Events per simulated KB moved: the engine's events over the bytes every link carried.
    moved = sum(link["bytes"] for link in json.load(open(files[0])).get("links", []))
    per_kb = engine / (moved / 1024) if moved else float("nan")
    print(f"{name:<22} {fmt(ev, 1, 0):>10} {fmt(engine, 1, 0):>10} {per_kb:>7.2f} "
          f"{spread(values(files, 'wall_time_s'), 1, 3):>22} {spread(whole[name], 1, 3):>20} "
          f"{fmt(median(files, 'host.build_wall_s'), 1, 3):>8} {spread(values(files, 'events_per_s'), 1e6, 2):>22} "
          f"{fmt(median(files, 'host.peak_rss_mb'), 1, 0):>8}")
print("(events: what the flit-by-flit model runs; engine ev: what the engine ran, a flit train taken whole being "
      "one; ev/KB: engine events per KB the links carried)")
print("(goals: composite-1024^3 >= 15 M events/s, allreduce-6sip-96KB >= 10 M events/s; the whole process is start "
      "to exit)")

split = {}  # name -> {pair: {"one": results.json, "two": results.json}}
for line in open(sys.argv[6]):
    name, who, pair, path = line.rstrip("\n").split("\t")
    split.setdefault(name, {}).setdefault(pair, {})[who] = path
if split:
    print(f"\n{'split over 2 ranks':<22} {'one process s':>20} {'2 ranks s':>20} {'speed-up (min-max)':>20} "
          f"{'lookahead ns':>13} {'windows':>9}")
    for name, pairs in split.items():
        one = [json.load(open(p["one"]))["wall_time_s"] for p in pairs.values()]
        twos = [json.load(open(p["two"])) for p in pairs.values()]
        two = [d["wall_time_s"] for d in twos]
        system = (get(twos[0], "host.split.systems") or [{}])[0]
        ratio = [a / b for a, b in zip(one, two) if b > 0]
        print(f"{name:<22} {spread(one, 1, 3):>20} {spread(two, 1, 3):>20} {spread(ratio, 1, 2):>20} "
              f"{system.get('lookahead_ns', '-'):>13} {system.get('windows', '-'):>9}")
    print("(run phase, paired; the speed-up is one process over 2 ranks, pair by pair)")

engine = {}  # run name -> items/s of each repetition
for b in json.load(open(sys.argv[5])).get("benchmarks", []):
    if b.get("run_type", "iteration") == "iteration":
        engine.setdefault(b.get("run_name", b["name"]), []).append(b["items_per_second"])
for name, rates in engine.items():
    print(f"engine {name:<32} {spread(rates, 1e6, 2):>22} M events/s")

runs = {"timing": [], "data": []}
for line in open(sys.argv[2]):
    mode, path = line.rstrip("\n").split("\t")
    runs[mode].append(path)
timing = median(runs["timing"], "wall_time_s")
data = median(runs["data"], "data_pass.wall_time_s")
print(f"matmul-composite 512^3: timing pass {fmt(timing, 1e-3, 1)} ms, data pass {fmt(data, 1e-3, 1)} ms"
      + (f", ratio {data / timing:.2f}" if timing and data is not None else "") + " (medians)")
EOF
if [[ -s "$PYTHON_COST" ]]; then
  echo
  echo "kbsim.run (Python, in process) against kbsim run (the command), and Python plugins, paired:"
  cat "$PYTHON_COST"
fi
