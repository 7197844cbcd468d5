#!/usr/bin/env bash
# sdk.out_of_tree: what a vendor does, end to end, against an installed kbsim.
#   1. install this build into a temporary prefix;
#   2. configure and build examples/vendor_switch against that prefix only;
#   3. the INSTALLED kbsim lists the vendor component and describes it;
#   4. a traffic run with sw0 = vendor.switch records the implementation and gives
#      a different latency from the default topology (sw0 = builtin.switch);
#   5. the vendor's component test (the SDK's harness, GoogleMock neighbours)
#      passes, and fails when built with a wrong expectation;
#   6. the SDK guide (sdk/README.md) followed verbatim: its pinger is built,
#      listed and run with the generic `system` bench;
#   7. examples/ccl_tree, a CCL algorithm, is built the same way; its tests pass
#      (its wiring, and a verified all_reduce run by the installed kbsim), it is
#      listed beside the built-in algorithms, and swapping it in changes the
#      time and not the values.
# Usage: out_of_tree.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
example="$src/examples/vendor_switch"
cmake=${CMAKE:-cmake}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
vendor="$tmp/vendor"
kbsim="$prefix/bin/kbsim"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Run a step with its output in a log; on failure show the command and the log.
step() {
  local name=$1
  shift
  echo "== $name"
  local rc=0
  "$@" >"$tmp/$name.log" 2>&1 || rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "FAIL: $name: exit code $rc from: $*" >&2
    sed 's/^/  | /' "$tmp/$name.log" >&2
    exit 1
  fi
}

step install "$cmake" --install "$build" --prefix "$prefix"
[[ -x "$kbsim" ]] || fail "install: $kbsim was not installed"
[[ -f "$prefix/lib/cmake/kbsim/kbsimConfig.cmake" ]] || fail "install: no CMake package in $prefix/lib/cmake/kbsim"

step configure "$cmake" -S "$example" -B "$vendor" -G Ninja -DCMAKE_PREFIX_PATH="$prefix"
step build "$cmake" --build "$vendor"
[[ -f "$vendor/libvendor_switch.so" ]] || fail "build: $vendor/libvendor_switch.so was not produced"
ctest="$(dirname "$(command -v "$cmake")")/ctest"
step vendor_test "$ctest" --test-dir "$vendor" --output-on-failure
grep -q "100% tests passed" "$tmp/vendor_test.log" || fail "the vendor's component test did not pass"

# The same test with a wrong expectation must fail: its mock neighbour is not blind.
step configure_wrong "$cmake" -S "$example" -B "$tmp/vendor_wrong" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_FLAGS=-DVENDOR_SWITCH_WRONG_EXPECTATION
step build_wrong "$cmake" --build "$tmp/vendor_wrong"
if "$ctest" --test-dir "$tmp/vendor_wrong" >"$tmp/vendor_wrong.log" 2>&1; then
  fail "the vendor's component test passed with a wrong expected time"
fi
grep -q "ThePipelineDelaysEveryFlitButNotTheStream" "$tmp/vendor_wrong.log" ||
  fail "the wrong expectation did not fail the expected test: $(cat "$tmp/vendor_wrong.log")"

step list "$kbsim" list components --plugins "$vendor"
grep -q '^ *vendor_switch ' "$tmp/list.log" ||
  fail "'kbsim list components --plugins $vendor' does not list vendor_switch; it printed:
$(cat "$tmp/list.log")"

step info "$kbsim" info vendor_switch --plugins "$vendor"
grep -q 'pipeline_ns' "$tmp/info.log" ||
  fail "'kbsim info vendor_switch' does not show the parameter pipeline_ns; it printed:
$(cat "$tmp/info.log")"

step run_vendor "$kbsim" run --bench traffic --plugins "$vendor" \
  --components "$example/components.yaml" --topology "$example/topology.yaml" --out "$tmp/out"
step run_default "$kbsim" run --bench traffic --topology "$src/examples/topologies/two_switch.yaml" --out "$tmp/out_default"

python3 - "$tmp/out/results.json" "$tmp/out_default/results.json" <<'EOF'
import json, os, sys

def load(path):
    if not os.path.isfile(path):
        sys.exit(f"FAIL: {path} was not written")
    with open(path) as f:
        return json.load(f)

vendor, default = load(sys.argv[1]), load(sys.argv[2])
impl = vendor.get("implementations", {}).get("vendor.switch")
if impl is None:
    sys.exit(f"FAIL: results.json has no implementations['vendor.switch']; it has {sorted(vendor.get('implementations', {}))}")
if impl.get("type") != "vendor_switch":
    sys.exit(f"FAIL: vendor.switch resolved to {impl}, expected type vendor_switch")
if "vendor.switch" in default.get("implementations", {}):
    sys.exit("FAIL: the default topology run unexpectedly used vendor.switch")

def latency(r, which):
    try:
        return r["metrics"]["endpoints"][0]["latency_min_ns"]
    except (KeyError, IndexError) as e:
        sys.exit(f"FAIL: {which} results.json has no metrics.endpoints[0].latency_min_ns ({e!r})")

lv, ld = latency(vendor, "vendor"), latency(default, "default")
if lv == ld:
    sys.exit(f"FAIL: latency_min_ns is {lv} ns with vendor.switch and with builtin.switch; expected them to differ")
print(f"latency_min_ns: vendor.switch {lv} ns, builtin.switch {ld} ns")
EOF
# The SDK guide, followed verbatim: its files are the code blocks of sdk/README.md.
acme="$tmp/acme"
python3 - "$src/sdk/README.md" "$acme" <<'EOF'
import os, re, sys
text = open(sys.argv[1]).read()
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
def block_after(marker, lang):
    at = text.index(marker)
    return re.compile(r"```" + lang + r"\n(.*?)```", re.S).search(text, at).group(1)
files = {
    "pinger.cpp": block_after("`acme/pinger.cpp`", "cpp"),
    "CMakeLists.txt": block_after("`acme/CMakeLists.txt`", "cmake"),
}
for lang, body in re.findall(r"```(\w+)\n(.*?)```", text, re.S):
    first = body.splitlines()[0] if body else ""
    if lang == "yaml" and first.startswith("# acme/"):
        files[first.split()[1].rstrip(":")[len("acme/"):]] = body
for name in ("components.yaml", "pingers.yaml"):
    if name not in files:
        sys.exit(f"FAIL: sdk/README.md has no '# acme/{name}' block")
for name, body in files.items():
    with open(os.path.join(out, name), "w") as f:
        f.write(body)
EOF
step guide_configure "$cmake" -S "$acme" -B "$tmp/acme-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix"
step guide_build "$cmake" --build "$tmp/acme-build"
step guide_list "$kbsim" list components --plugins "$tmp/acme-build"
grep -q acme_pinger "$tmp/guide_list.log" || fail "the guide's pinger is not listed"
cd "$tmp"
step guide_run "$kbsim" run --plugins acme-build --components acme/components.yaml \
  --topology acme/pingers.yaml --out "$tmp/guide-out"
python3 - "$tmp/guide-out/results.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
a, b = r["components"]["a"], r["components"]["b"]
if a["sent"] != 4 or b["received"] != 4:
    sys.exit(f"FAIL: the guide's pingers: a sent {a['sent']}, b received {b['received']}; expected 4 and 4")
if b["latency_mean_ns"] != 2.0:  # 64 B at 64 GB/s (1 ns) plus the 1 ns wire
    sys.exit(f"FAIL: the guide's ping latency is {b['latency_mean_ns']} ns, expected 2")
print("the SDK guide's pinger: 4 pings, 2 ns each")
EOF
# A CCL author's algorithm, out of tree.
tree="$tmp/tree"
step tree_configure "$cmake" -S "$src/examples/ccl_tree" -B "$tree" -G Ninja -DCMAKE_PREFIX_PATH="$prefix"
step tree_build "$cmake" --build "$tree"
step tree_test "$ctest" --test-dir "$tree" --output-on-failure
grep -q "100% tests passed, 0 tests failed out of 2" "$tmp/tree_test.log" || fail "tree_allreduce's tests did not pass"
step tree_list "$kbsim" list ccl --plugins "$tree"
grep -q tree_allreduce "$tmp/tree_list.log" || fail "tree_allreduce is not listed"
step tree_run "$kbsim" run --bench ccl-allreduce --plugins "$tree" --set ccl.algorithm=tree_allreduce \
  --param n_elem=1024 --verify-data --out "$tmp/tree-out"
step lrab_run "$kbsim" run --bench ccl-allreduce --param n_elem=1024 --verify-data --out "$tmp/lrab-out"
python3 - "$tmp/tree-out/results.json" "$tmp/lrab-out/results.json" <<'EOF2'
import json, sys
t, l = (json.load(open(p))["metrics"] for p in sys.argv[1:3])
if t["algorithm"] != "tree_allreduce" or l["algorithm"] != "lrab_hierarchical_allreduce":
    sys.exit(f"FAIL: the runs used {t['algorithm']} and {l['algorithm']}")
if t["crit_ns"] == l["crit_ns"]:
    sys.exit(f"FAIL: tree_allreduce and lrab both take {t['crit_ns']} ns")
print(f"tree_allreduce {t['crit_ns']} ns, lrab_hierarchical_allreduce {l['crit_ns']} ns, both verified")
EOF2
echo "PASS: out-of-tree vendor_switch built against the installed SDK, listed, described and run; the SDK guide's pinger built and run as it says; the out-of-tree tree_allreduce built, tested, listed and swapped in"
