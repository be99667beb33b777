#!/usr/bin/env bash
# Benchmarks (not part of the tests; timings are reported, never asserted).
#   1. One session placing 5,000 gangs x 10 pods on 5,000 nodes, against a baseline loop
#      measured in the same run (test/bench/session_bench.cc).
#   2. lahar-sim on a week-long synthetic trace: 1,000 nodes, 10,000 jobs.
#   3. With CALLGRIND=1: instruction counts of a smaller session (stable on noisy machines).
set -euo pipefail
cd "$(dirname "$0")/.."
hack/install-deps.sh
NINJA_TARGETS="session_bench lahar-sim" hack/build.sh build-release -DCMAKE_BUILD_TYPE=Release -DLAHAR_TESTS=OFF

echo "== session benchmark"
build-release/bin/session_bench --repeat 3

echo "== lahar-sim, one simulated week (1,000 nodes, 10,000 jobs)"
trace=out/bench/bench-week.yaml
mkdir -p out/bench
[ -f "$trace" ] || python3 hack/traces/synthetic.py bench-week --seed 1 -o "$trace"
start=$(date +%s.%N)
build-release/bin/lahar-sim run "$trace" --out out/bench/week
end=$(date +%s.%N)
echo "wall time: $(python3 -c "print(round($end - $start, 1))") s"

if [ "${CALLGRIND:-0}" = 1 ]; then
  echo "== callgrind: 1,000 nodes, 1,000 gangs"
  valgrind --tool=callgrind --callgrind-out-file=out/bench/callgrind.out \
    build-release/bin/session_bench --nodes 1000 --gangs 1000 --repeat 1 2>&1 | grep -E "refs|pods/s"
fi
