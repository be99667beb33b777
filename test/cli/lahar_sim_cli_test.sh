#!/usr/bin/env bash
# lahar-sim on bad input: a non-zero exit (never a crash), and exactly one line on stderr that
# names the culprit. Usage: lahar_sim_cli_test.sh PATH/TO/lahar-sim
set -u
sim="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

# expect NAME WANT_EXIT PATTERN -- ARGS...
expect() {
  local name="$1" want="$2" pattern="$3"
  shift 4
  "$sim" "$@" >"$work/out" 2>"$work/err"
  local got=$?
  local lines
  lines=$(wc -l <"$work/err")
  if [ "$got" -ne "$want" ] || [ "$lines" -ne 1 ] || ! grep -qE -- "$pattern" "$work/err"; then
    echo "FAIL $name: exit $got (want $want), $lines stderr lines, stderr: $(cat "$work/err")"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
}

scenario() { printf '%s\n' "$2" >"$work/$1"; }

# outcome NAME: counts the check just run as passed when it exited 0, else fails it with NAME
# and what the program printed.
outcome() {
  if [ $? -eq 0 ]; then
    passed=$((passed + 1))
  else
    echo "FAIL $1: $(cat "$work/out" "$work/err")"
    failed=$((failed + 1))
  fi
}

scenario good.yaml 'nodes:
- name: n
  allocatable: {cpu: "4"}
jobs:
- name: j
  duration: 1m
  tasks: [{name: w, replicas: 1, resources: {cpu: "1"}}]'
scenario empty.yaml ''
scenario syntax.yaml 'nodes:
- name: n
  allocatable: {cpu: "4"
jobs: []'
scenario quantity.yaml 'nodes:
- name: n
  allocatable: {cpu: "4x"}'
scenario negative.yaml 'nodes:
- name: n
  allocatable: {cpu: "4"}
jobs:
- name: j
  tasks: [{name: w, replicas: -2, resources: {cpu: "1"}}]'
scenario duplicate.yaml 'nodes:
- name: n
  allocatable: {cpu: "4"}
- name: n
  allocatable: {cpu: "4"}'
scenario unknown-key.yaml 'nodes:
- name: n
  alocatable: {cpu: "4"}'
scenario gated.yaml 'nodes:
- name: n
  allocatable: {cpu: "4"}
jobs:
- name: j
  duration: 1m
  tasks: [{name: w, replicas: 1, resources: {cpu: "1"}, schedulingGates: [example.com/quota]}]
events:
- at: 1m
  ungate: {job: j}'
scenario ungate-unknown-job.yaml 'nodes:
- name: n
  allocatable: {cpu: "4"}
jobs:
- name: j
  tasks: [{name: w, replicas: 1, resources: {cpu: "1"}, schedulingGates: [example.com/quota]}]
events:
- at: 1m
  ungate: {job: k}'
scenario ungate-unknown-gate.yaml 'nodes:
- name: n
  allocatable: {cpu: "4"}
jobs:
- name: j
  tasks: [{name: w, replicas: 1, resources: {cpu: "1"}, schedulingGates: [example.com/quota]}]
events:
- at: 1m
  ungate: {job: j, gate: example.com/qouta}'
printf 'actions: "enqueue, alocate"\ntiers: []\n' >"$work/bad-action.conf"
printf 'actions: "allocate"\ntiers:\n- plugins:\n  - name: gangg\n' >"$work/bad-plugin.conf"
printf 'actions: "allocate"\ntiers:\n- plugins:\n  - name: elastic\n    arguments:\n      elastic.cooldown: soon\n' >"$work/bad-arg.conf"
head -c 3000 /dev/urandom >"$work/binary.yaml"


"$sim" --help >/dev/null 2>&1 && passed=$((passed + 1)) || { echo "FAIL help"; failed=$((failed + 1)); }
expect missing-file 1 "cannot read .*nope.yaml" -- run "$work/nope.yaml"
expect empty-file 1 "empty.yaml: file is empty" -- run "$work/empty.yaml"
expect syntax-error 1 "syntax.yaml: YAML syntax error at line [0-9]+" -- run "$work/syntax.yaml"
expect bad-quantity 1 "line 3: nodes\[0\]\.allocatable\.cpu: invalid quantity \"4x\"" -- run "$work/quantity.yaml"
expect negative-count 1 "replicas: negative value -2" -- run "$work/negative.yaml"
expect duplicate-name 1 "duplicate node name \"n\"" -- run "$work/duplicate.yaml"
expect unknown-key 1 "unknown key \"alocatable\"" -- run "$work/unknown-key.yaml"
expect unknown-action 1 "unknown action \"alocate\" \(valid actions: .*allocate" -- run "$work/good.yaml" --config "$work/bad-action.conf"
expect unknown-plugin 1 "unknown plugin \"gangg\" \(valid plugins: .*gang" -- run "$work/good.yaml" --config "$work/bad-plugin.conf"
expect bad-argument 1 "elastic.cooldown: invalid duration \"soon\"" -- run "$work/good.yaml" --config "$work/bad-arg.conf"
expect binary-garbage 1 "binary.yaml" -- run "$work/binary.yaml"
expect bad-flag 2 "unknown flag --frobnicate" -- run "$work/good.yaml" --frobnicate
expect bad-until 2 "--until: invalid duration" -- run "$work/good.yaml" --until tomorrow
expect compare-one-config 2 "compare needs at least two --config" -- compare "$work/good.yaml" --config "$work/bad-arg.conf"
expect ungate-unknown-job 1 "ungate-unknown-job.yaml: line 8: events\[0\]: ungate of unknown job \"k\"" -- run "$work/ungate-unknown-job.yaml"
expect ungate-unknown-gate 1 "line 9: events\[0\]\.ungate\.gate: job default/j has no scheduling gate \"example.com/qouta\"" -- run "$work/ungate-unknown-gate.yaml"

# A gated job binds only once its ungate event (at 60s) has removed the gate.
if "$sim" run "$work/gated.yaml" --out "$work/gated-out" >/dev/null 2>&1 &&
   grep -q '"type":"ungate","job":"default/j","pods":1' "$work/gated-out/events.jsonl" &&
   grep -q '{"t":60.0,"type":"bind","pod":"default/j-w-0"' "$work/gated-out/events.jsonl"; then
  passed=$((passed + 1))
else
  echo "FAIL gated job binds at its ungate event: $(cat "$work/gated-out/events.jsonl" 2>&1)"
  failed=$((failed + 1))
fi

# A good run writes the three outputs.
if "$sim" run "$work/good.yaml" --out "$work/out-dir" >/dev/null 2>&1 &&
   [ -s "$work/out-dir/events.jsonl" ] && [ -s "$work/out-dir/summary.json" ] && [ -s "$work/out-dir/report.html" ]; then
  passed=$((passed + 1))
else
  echo "FAIL good run with --out"
  failed=$((failed + 1))
fi

# A scenario read from a pipe (no size to read it in one go) runs as from a file.
"$sim" run <(cat "$work/good.yaml") >"$work/out" 2>"$work/err"
[ $? -eq 0 ] && grep -q "jobs completed" "$work/out"
outcome "scenario from a pipe"

# An --out that cannot be a folder (it lies under a file) is refused before the run, naming it.
expect out-under-a-file 1 "cannot create .*good\.yaml/out" -- run "$work/good.yaml" --out "$work/good.yaml/out"

# compare: one folder per configuration (labelled by file name) and one report side by side.
printf 'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins:\n  - name: gang\n- plugins:\n  - name: predicates\n' >"$work/plain.conf"
printf 'actions: "enqueue, allocate, elastic-scale, preempt-elastic-workers, backfill"\ntiers:\n- plugins:\n  - name: gang\n  - name: elastic\n- plugins:\n  - name: predicates\n' >"$work/elastic.conf"
if "$sim" compare "$work/good.yaml" --config "$work/plain.conf" --config "$work/elastic.conf" --out "$work/cmp" >"$work/out" 2>&1 &&
   [ -s "$work/cmp/plain.conf/events.jsonl" ] && [ -s "$work/cmp/elastic.conf/summary.json" ] &&
   grep -q "plain.conf" "$work/cmp/report.html" && grep -q "elastic.conf" "$work/cmp/report.html" &&
   grep -q "plain.conf.*elastic.conf" "$work/out"; then
  passed=$((passed + 1))
else
  echo "FAIL compare writes one folder per configuration: $(cat "$work/out")"
  failed=$((failed + 1))
fi

# A run ends with one line on stderr: how much was simulated, how fast, how many jobs completed
# (progress lines come only when stderr is a terminal).
if "$sim" run "$work/good.yaml" >"$work/out" 2>"$work/err" && [ "$(wc -l <"$work/err")" -eq 1 ] &&
   grep -qE "^lahar-sim: default: .* simulated in [0-9.]+s .*, [0-9]+/[0-9]+ jobs completed, [0-9]+ sessions, [0-9]+ of [0-9]+ evicting runs skipped as unchanged, [0-9]+ sessions judged parked jobs by their class \([0-9]+ of them run again with parked jobs back\)$" "$work/err"; then
  passed=$((passed + 1))
else
  echo "FAIL a run ends with its one-line figure on stderr: $(cat "$work/err")"
  failed=$((failed + 1))
fi

# `plugins` prints the README's compatibility table, which must not drift from the registry.
readme="$(dirname "$0")/../../README.md"
sed -n '/<!-- lahar-sim plugins: begin -->/,/<!-- lahar-sim plugins: end -->/p' "$readme" | sed '1d;$d' >"$work/readme-table"
if "$sim" plugins >"$work/table" 2>"$work/err" && [ -s "$work/table" ] && diff -u "$work/readme-table" "$work/table" >"$work/diff"; then
  passed=$((passed + 1))
else
  echo "FAIL README's compatibility table differs from \`lahar-sim plugins\` (paste its output between the markers): $(head -c 2000 "$work/diff")"
  failed=$((failed + 1))
fi

# A key Volcano defines for behaviour Lahar lacks: the run goes on, with a warning naming it.
printf 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n  - name: nodeorder\n    arguments:\n      imagelocality.weight: 2\n' >"$work/volcano.conf"
"$sim" run "$work/good.yaml" --config "$work/volcano.conf" >"$work/out" 2>"$work/err" &&
   grep -q "warning: .*volcano.conf: plugin nodeorder: argument imagelocality.weight" "$work/err"
outcome "a Volcano key Lahar ignores is a warning on stderr"

# explain (spec 7): an unknown job or a missing one is a clear error; a job that cannot start
# is explained with its reason and what would let it start.
expect explain-unknown-job 1 "no job default/nope in .*good.yaml" -- explain "$work/good.yaml" nope
expect explain-no-job 2 "explain takes a FILE and a JOB" -- explain "$work/good.yaml"
expect explain-bad-at 2 "--at: invalid duration" -- explain "$work/good.yaml" j --at soon
scenario toobig.yaml 'nodes:
- name: n
  allocatable: {cpu: "4"}
jobs:
- name: big
  duration: 1m
  tasks: [{name: w, replicas: 1, resources: {cpu: "8"}}]'
"$sim" explain "$work/toobig.yaml" default/big --at 10s >"$work/out" 2>"$work/err" &&
   grep -q "^at 10.0s: job default/big (queue default): " "$work/out" &&
   grep -q "^waiting (admission): cluster: free cpu 4, needs 8$" "$work/out" &&
   grep -q "^  - 4 cpu more comes free in the cluster$" "$work/out"
outcome "explain says why default/big waits and what would let it start"

# A run that stops with a job that can never start says so, per kind, and the table names the
# most common reason (spec 7).
"$sim" run "$work/toobig.yaml" >"$work/out" 2>"$work/err" &&
   grep -q "stopped with 1 job that can never start (nothing left can change): admission 1$" "$work/err" &&
   grep -Eq "^never started +1 \(admission\)$" "$work/out" &&
   grep -q "^never started, most often: admission: cluster: free cpu 4, needs 8$" "$work/out"
outcome "a run that cannot start a job says why"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
