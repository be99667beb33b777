#!/usr/bin/env bash
# Runs every test: unit and action tests (ctest), the simulator's golden checks, the trace
# converters' tests, the daemon's end-to-end suite against a real kube-apiserver + etcd + kwok
# (built from Go modules once per machine into ~/.cache/lahar), the unit tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer, and a short libFuzzer run of each fuzz target.
#   LAHAR_QUICK=1 hack/test.sh   # skip the sanitizer build and the fuzzers
#   LAHAR_E2E=0 hack/test.sh     # skip the end-to-end suite
set -euo pipefail
cd "$(dirname "$0")/.."
hack/install-deps.sh
jobs=$(nproc)

echo "== build (gcc, RelWithDebInfo)"
hack/build.sh build
echo "== ctest"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== trace converters"
python3 -m unittest discover -s hack/traces -p 'test_*.py' -q

if [ "${LAHAR_E2E:-1}" != 0 ]; then
  echo "== e2e: lahar-scheduler on a real control plane"
  test/e2e/run.sh
fi

echo "== the OCI image (buildah): lahar-scheduler and lahar-sim run inside it"
hack/image.sh --smoke

export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$PWD/hack/ubsan.supp"

if [ "${LAHAR_QUICK:-0}" != 1 ]; then
  echo "== build (clang, AddressSanitizer + UndefinedBehaviorSanitizer)"
  # Shared libraries: the test binaries share one copy of the engine (3 GB less disk).
  CC=clang CXX=clang++ hack/build.sh build-asan -DLAHAR_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DBUILD_SHARED_LIBS=ON
  echo "== ctest under sanitizers"
  ctest --test-dir build-asan --output-on-failure -j "$jobs"

  echo "== fuzz (libFuzzer, ${LAHAR_FUZZ_SECONDS:-30}s each)"
  fuzzers="quantity_fuzz object_stream_fuzz scenario_fuzz config_fuzz"
  NINJA_TARGETS="$fuzzers" CC=clang CXX=clang++ hack/build.sh build-fuzz -DLAHAR_FUZZ=ON -DLAHAR_TESTS=OFF
  for fuzzer in $fuzzers; do
    target="build-fuzz/bin/$fuzzer"
    name=$(basename "$target" _fuzz)
    corpus="test/fuzz/corpus/$name"
    work=$(mktemp -d)
    cp -r "$corpus"/. "$work"/ 2>/dev/null || true
    # A fixed seed keeps CI reproducible; LAHAR_FUZZ_SEED=0 lets libFuzzer pick one.
    "$target" -seed="${LAHAR_FUZZ_SEED:-1}" -max_total_time="${LAHAR_FUZZ_SECONDS:-30}" -print_final_stats=0 "$work" 2>&1 | tail -n 2
    rm -rf "$work"
  done
fi

echo "== all tests passed"
