#!/usr/bin/env bash
# Set up kbsim on a Debian 12 machine: install missing packages, build, and run
# the main job or the test suite.
#
#   bash scripts/setup.sh deps            install missing Debian packages only
#   bash scripts/setup.sh build           deps + configure + build
#   bash scripts/setup.sh run  [ARGS...]  build, then `kbsim run --out kbsim-out [ARGS...]`
#   bash scripts/setup.sh test [ARGS...]  build, then ctest [ARGS...]
#
# Environment:
#   KBSIM_BUILD_DIR   build directory (default: <repo>/build)
#   KBSIM_CMAKE_ARGS  extra arguments for the cmake configure step, split on
#                     whitespace; a -DCMAKE_BUILD_TYPE here overrides Release
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${KBSIM_BUILD_DIR:-$REPO/build}"
JOBS="$(nproc 2>/dev/null || echo 2)"

# What building and running kbsim needs: the first README command installs only these (the Python package is
# built with Debian's interpreter and pybind11; a Session needs numpy and greenlet, progress bars tqdm).
RUN_PACKAGES=(
  build-essential g++ cmake ninja-build
  libboost-dev libboost-context-dev libyaml-cpp-dev rapidjson-dev libcli11-dev
  libfmt-dev libspdlog-dev libeigen3-dev libcpp-httplib-dev libmimalloc-dev
  python3 python3-dev pybind11-dev python3-numpy python3-greenlet python3-tqdm
)
# What the test suite, the benchmarks and split runs over MPI add (the second command): GoogleTest and
# GoogleMock, Google Benchmark, headless Chromium for the viewer's browser tests, OpenMPI, the SVG renderer and
# zlib the figure tests read PNGs with, pytest and pandas for the Python package's suites, matplotlib, nbclient and
# ipykernel for the Python examples (the notebook runs headless).
TEST_PACKAGES=(
  git pkg-config librange-v3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  chromium libopenmpi-dev openmpi-bin librsvg2-bin zlib1g-dev
  python3-pytest python3-pandas python3-matplotlib python3-nbclient python3-nbformat python3-ipykernel
)
PACKAGES=("${RUN_PACKAGES[@]}")

say() { printf '==> %s\n' "$*"; }
die() {
  printf 'setup.sh: error: %s\n' "$*" >&2
  exit 1
}

usage() {
  cat <<'EOF'
usage: bash scripts/setup.sh COMMAND [ARGS...]

  deps   install the Debian packages running kbsim needs (only those missing)
  build  also install what the tests need, then configure and build everything
         (Release): kbsim, the plugins, the SDK, the tests and the benchmarks
  run    install what running needs, build only kbsim, its plugins and the SDK
         (no tests or benchmarks), then the main job on the default AHBM
         system: `kbsim probe`, the pe-dma-perf bench (writes
         kbsim-out/results.json), a 512^3 matmul-composite checked by the data
         pass, with its timeline (kbsim-out/matmul/results.json, trace.json), a
         verified allreduce and tensor-parallel MLP, the GEMM and GQA milestone
         sweeps with their figures (kbsim-out/milestone-*/index.html), and the
         fidelity report against the reference's figures (kbsim-out/fidelity);
         with ARGS, run `kbsim run ARGS` instead, e.g. --bench message-mesh
  test   build everything, then run the whole test suite with ctest (ARGS go
         to ctest)
  lint   install clang-format and clang-tidy; fail on any C++ file that
         clang-format would change (.clang-format), and on any clang-tidy
         finding (.clang-tidy) in the C++ files changed by the last 10 commits
         (KBSIM_LINT_BASE: another base commit)
  fuzz   install clang, build the libFuzzer harnesses of the configuration
         loaders (build-fuzz/) and run each for KBSIM_FUZZ_SECONDS (default
         60) from the repository's own files; fails on a crash, a leak or a
         sanitizer report (the input is kept in build-fuzz/findings)

environment: KBSIM_BUILD_DIR (default <repo>/build), KBSIM_CMAKE_ARGS
EOF
}

# Run a command as root: directly when we are root, through sudo otherwise.
as_root() {
  if [[ "$(id -u)" -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "need root to run '$*' (not root and no sudo); install these packages first: ${MISSING[*]}"
  fi
}

MISSING=()

deps() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    say "no dpkg-query: not a Debian system, skipping the package check"
    return 0
  fi
  say "checking ${#PACKAGES[@]} Debian packages"
  MISSING=()
  local pkg status
  for pkg in "${PACKAGES[@]}"; do
    status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
    [[ "$status" == "install ok installed" ]] || MISSING+=("$pkg")
  done
  if [[ ${#MISSING[@]} -eq 0 ]]; then
    say "all packages present"
    return 0
  fi
  say "installing: ${MISSING[*]}"
  as_root apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${MISSING[@]}"
}

# Configure the build directory: `configure full` with the tests and benchmarks, `configure lean` without them
# for a new directory (an existing one keeps what it has: a lean build only builds less of it).
configure() {
  local extra=() options=()
  if [[ -n "${KBSIM_CMAKE_ARGS:-}" ]]; then
    read -r -a extra <<<"$KBSIM_CMAKE_ARGS"
  fi
  local gen=()
  # Pick Ninja for a new build directory; an existing one keeps its generator.
  [[ -f "$BUILD_DIR/CMakeCache.txt" ]] || gen=(-G Ninja)
  if [[ $1 == full ]]; then
    options=(-DKBSIM_BUILD_TESTS=ON -DKBSIM_BUILD_BENCHMARKS=ON)
  elif [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
    options=(-DKBSIM_BUILD_TESTS=OFF -DKBSIM_BUILD_BENCHMARKS=OFF)
  fi
  say "configuring $BUILD_DIR ${options[*]:-} ${extra[*]:-}"
  cmake -S "$REPO" -B "$BUILD_DIR" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release "${options[@]}" "${extra[@]}"
}

# Everything: kbsim, the plugins, the SDK, the tests and the benchmarks.
build() {
  PACKAGES+=("${TEST_PACKAGES[@]}")
  deps
  configure full
  say "building everything with $JOBS jobs"
  cmake --build "$BUILD_DIR" -j "$JOBS"
}

# What running needs: the kbsim executable, the plugins (indexed) and the SDK's harness library.
build_runtime() {
  deps
  configure lean
  say "building kbsim, its plugins and the SDK with $JOBS jobs"
  cmake --build "$BUILD_DIR" -j "$JOBS" --target kbsim_runtime
}

run() {
  build_runtime
  local bin="$BUILD_DIR/bin/kbsim"
  [[ -x "$bin" ]] || die "the build did not produce $bin"
  if [[ $# -gt 0 ]]; then
    say "running: kbsim run --out $REPO/kbsim-out $*"
    "$bin" run --out "$REPO/kbsim-out" "$@"
  else
    # The main job on the default AHBM system: every memory path, the PE DMA
    # bench, a 512^3 composite GEMM on one PE, verified, with its timeline, an
    # allreduce over both SIPs, verified, the tensor-parallel MLP, verified, a
    # Llama-70B decoder layer's decode step over both SIPs, the GEMM and GQA milestone
    # sweeps with their figures (verified), and every
    # figure the reference measured against this system.
    say "running: kbsim probe"
    "$bin" probe
    say "running: kbsim run --bench pe-dma-perf --out $REPO/kbsim-out"
    "$bin" run --bench pe-dma-perf --out "$REPO/kbsim-out"
    local mm=(--bench matmul-composite --param M=512 --param K=512 --param N=512 --verify-data)
    say "running: kbsim run ${mm[*]} --trace $REPO/kbsim-out/matmul/trace.json --out $REPO/kbsim-out/matmul"
    mkdir -p "$REPO/kbsim-out/matmul"
    "$bin" run "${mm[@]}" --trace "$REPO/kbsim-out/matmul/trace.json" --out "$REPO/kbsim-out/matmul"
    say "results: $REPO/kbsim-out/matmul/results.json; timeline: $REPO/kbsim-out/matmul/trace.json (ui.perfetto.dev)"
    say "running: kbsim run --bench ccl-allreduce --verify-data --out $REPO/kbsim-out/allreduce"
    "$bin" run --bench ccl-allreduce --verify-data --out "$REPO/kbsim-out/allreduce"
    say "running: kbsim run --bench tp-mlp --verify-data --out $REPO/kbsim-out/tp-mlp"
    "$bin" run --bench tp-mlp --verify-data --out "$REPO/kbsim-out/tp-mlp"
    say "running: kbsim run --bench llama-layer --out $REPO/kbsim-out/llama-layer"
    "$bin" run --bench llama-layer --out "$REPO/kbsim-out/llama-layer"
    for m in gemm gqa; do
      say "running: kbsim run --bench milestone-$m --verify-data --out $REPO/kbsim-out/milestone-$m"
      "$bin" run --bench "milestone-$m" --verify-data --out "$REPO/kbsim-out/milestone-$m"
      say "figures: $REPO/kbsim-out/milestone-$m/index.html"
    done
    say "running: kbsim run --bench fidelity --out $REPO/kbsim-out/fidelity"
    "$bin" run --bench fidelity --out "$REPO/kbsim-out/fidelity"
  fi
  say "results: $REPO/kbsim-out/results.json"
}

run_tests() {
  build
  say "running the test suite ($JOBS jobs)"
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" "$@"
  say "all tests passed"
}

# The project's C++ habits: clang-format on every file, clang-tidy on the files a change touched (a header counts
# through the .cpp of the same name beside it), against a compile database of its own (clang, no precompiled headers).
lint() {
  PACKAGES+=(clang clang-format clang-tidy git)
  deps
  cd "$REPO"
  say "clang-format: every C++ file, as .clang-format says"
  git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run --Werror ||
    die "clang-format would change the files above: run clang-format -i on them"
  local base="${KBSIM_LINT_BASE:-HEAD~10}" files=() f
  git rev-parse -q --verify "$base^{commit}" >/dev/null || base="$(git rev-list --max-parents=0 HEAD | tail -n1)"
  while IFS= read -r f; do
    [[ $f == *.hpp && -f ${f%.hpp}.cpp ]] && f="${f%.hpp}.cpp"
    [[ $f == *.cpp && -f $f && $f != tests/fuzz/* && $f != examples/* ]] && files+=("$f")
  done < <(git diff --name-only "$base" -- '*.cpp' '*.hpp' | sort -u)
  mapfile -t files < <(printf '%s\n' "${files[@]}" | sort -u | sed '/^$/d')
  if [[ ${#files[@]} -eq 0 ]]; then
    say "clang-tidy: no C++ file changed since $base"
    return 0
  fi
  local dir="$REPO/build-lint"
  CXX=clang++ cmake -S "$REPO" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON >/dev/null
  say "clang-tidy: ${#files[@]} files changed since $(git rev-parse --short "$base")"
  if ! printf '%s\n' "${files[@]}" | xargs -P "$JOBS" -n 4 clang-tidy -p "$dir" --quiet >"$dir/clang-tidy.log" 2>&1; then
    grep -v 'warnings\? generated\.$' "$dir/clang-tidy.log" >&2
    die "clang-tidy found the problems above (.clang-tidy lists its checks)"
  fi
  say "no formatting change, no clang-tidy finding"
}

# libFuzzer harnesses of the configuration loaders (tests/fuzz), each run for
# a bounded time from a corpus seeded with the repository's own files.
fuzz() {
  PACKAGES+=(clang)
  deps
  local dir="$REPO/build-fuzz" seconds="${KBSIM_FUZZ_SECONDS:-60}"
  say "configuring $dir (clang, libFuzzer, ASan + UBSan)"
  CXX=clang++ cmake -S "$REPO" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKBSIM_FUZZ=ON >/dev/null
  cmake --build "$dir" -j "$JOBS" --target fuzz_topology fuzz_components
  mkdir -p "$dir/findings"
  local name seeds corpus
  for name in topology components; do
    corpus="$dir/corpus-$name"
    seeds="$dir/seeds-$name"
    rm -rf "$seeds" && mkdir -p "$corpus" "$seeds"
    if [[ $name == topology ]]; then
      cp "$REPO/topology.yaml" "$REPO"/examples/topologies/*.yaml "$seeds/"
      printf '%s\n#set\nsystem.sips.count=4\nsystem.sips.topology=torus_2d\n' "$(cat "$REPO/topology.yaml")" >"$seeds/with_set.yaml"
    else
      cp "$REPO/components.yaml" "$seeds/"
    fi
    say "fuzzing the $name loader for ${seconds} s"
    ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
      "$dir/bin/fuzz_$name" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=16384 \
      -print_final_stats=1 -artifact_prefix="$dir/findings/$name-" "$corpus" "$seeds" 2>"$dir/fuzz-$name.log" ||
      die "the $name loader failed under the fuzzer: see $dir/fuzz-$name.log and $dir/findings/"
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$dir/fuzz-$name.log" | sed 's/^/    /'
  done
  say "no crash, leak or sanitizer report"
}

main() {
  local cmd="${1:-}"
  [[ $# -gt 0 ]] && shift
  case "$cmd" in
    deps) deps ;;
    build) build ;;
    run) run "$@" ;;
    test) run_tests "$@" ;;
    fuzz) fuzz ;;
    lint) lint ;;
    -h | --help | help)
      usage
      exit 0
      ;;
    *)
      usage >&2
      exit 2
      ;;
  esac
}

main "$@"
