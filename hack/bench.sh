#!/usr/bin/env bash
# Benchmarks (not part of the tests; timings are reported, never asserted), then a table of
# each figure beside issue 12's target. Well under 15 minutes on a 2-core machine.
#   1. session_bench: one session placing 5,000 gangs x 10 pods on 5,000 nodes, against a
#      first-fit baseline measured in the same run (test/bench/session_bench.cc).
#   2. session_bench --backlog: 5,000 nodes, 10,000 waiting gangs that fit nowhere and one new
#      job that fits; the second session, with and without the sessions' memory (WaitMemo).
#   3. lahar-sim on the synthetic bench-week trace (1,000 nodes, 10,000 jobs, JSON form), the
#      whole week.
#   4. lahar-sim on the whole Microsoft Philly trace (56 nodes, JSON form): its load, then all
#      of it (82,247 jobs over 135 days).
#   5. With CALLGRIND=1: instruction counts of a smaller session (stable on noisy machines).
set -euo pipefail
cd "$(dirname "$0")/.."
hack/install-deps.sh
NINJA_TARGETS="session_bench ui_bench lahar-sim" hack/build.sh build-release -DCMAKE_BUILD_TYPE=Release -DLAHAR_TESTS=OFF
mkdir -p out/bench
sim=build-release/bin/lahar-sim

# cpu SECONDS and peak KB of a command, into $cpu and $peak.
measure() {
  /usr/bin/time -f "%U %M" -o out/bench/time.txt "$@" >/dev/null 2>out/bench/stderr.txt
  read -r cpu peak <out/bench/time.txt
}

echo "== session benchmark"
build-release/bin/session_bench --repeat 3 | tee out/bench/session.txt
echo "== backlog session"
build-release/bin/session_bench --nodes 5000 --backlog 10000 --repeat 3 | tee out/bench/backlog.txt
echo "== the daemon's /ui at 1,000 queues and 50,000 waiting jobs"
build-release/bin/ui_bench --queues 1000 --jobs 50000 | tee out/bench/ui.txt

week=out/bench/bench-week.json
[ -f "$week" ] || python3 hack/traces/synthetic.py bench-week --seed 1 --format json -o "$week"
echo "== lahar-sim, bench-week, the whole week"
measure "$sim" run "$week"
week_cpu=$cpu
tail -n 1 out/bench/stderr.txt

philly=out/bench/philly-full.json
csv="$(hack/fixtures-dir.sh 2>/dev/null || true)"
csv="${csv%/fixtures}/traces/philly.csv"
if [ ! -f "$philly" ] && [ -f "$csv" ]; then
  python3 hack/traces/philly_to_scenario.py --input "$csv" --nodes 56 --format json -o "$philly"
fi
philly_cpu="-" philly_peak="-" load_cpu="-" load_peak="-"
if [ -f "$philly" ]; then
  echo "== lahar-sim, whole Philly trace: load, then all of it"
  measure "$sim" run "$philly" --until 1s
  load_cpu=$cpu load_peak=$((peak / 1024))
  measure "$sim" run "$philly"
  philly_cpu=$cpu philly_peak=$((peak / 1024))
  tail -n 1 out/bench/stderr.txt
fi

echo
echo "| work | target | measured |"
echo "|---|---|---|"
echo "| bench-week, whole week | < 10 s CPU | ${week_cpu} s CPU |"
echo "| whole Philly trace, load | < 2 s, < 200 MB | ${load_cpu} s, ${load_peak} MB |"
echo "| whole Philly trace | < 60 s CPU, < 500 MB | ${philly_cpu} s CPU, ${philly_peak} MB |"
backlog_ms=$(awk '/^session:/ {print $2}' out/bench/backlog.txt)
backlog_base_ms=$(awk '/^baseline:/ {print $2}' out/bench/backlog.txt)
pods_per_s=$(awk '/^session:/ {print $(NF-4)}' out/bench/session.txt)
first_fit_ratio=$(awk '/^ratio:/ {print $4}' out/bench/session.txt)
echo "| one session: 5,000 nodes, 10,000 gangs that cannot fit, 1 new job | < 5 ms | ${backlog_ms} ms (${backlog_base_ms} ms without the sessions' memory) |"
echo "| session_bench (empty cluster, everything placeable) | no slower than before | ${pods_per_s} pods/s, ${first_fit_ratio} the bare first-fit loop's time per pod |"

if [ "${CALLGRIND:-0}" = 1 ]; then
  echo "== callgrind: 1,000 nodes, 1,000 gangs"
  valgrind --tool=callgrind --callgrind-out-file=out/bench/callgrind.out \
    build-release/bin/session_bench --nodes 1000 --gangs 1000 --repeat 1 2>&1 | grep -E "refs|pods/s"
fi
