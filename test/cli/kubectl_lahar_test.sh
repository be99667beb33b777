#!/usr/bin/env bash
# kubectl-lahar (spec 7) on a snapshot file: `why` gives the reason and what would let the job
# start, `queues` the tree; an unknown job, an unreachable daemon and a file that is not a
# snapshot are clear errors with a non-zero exit. Usage: kubectl_lahar_test.sh PATH/TO/kubectl-lahar
set -u
kl="$1"
data="$(dirname "$0")/data"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
check() {  # check NAME COMMAND...: the command succeeds
  local name="$1"
  shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL $name: $(cat "$work/out" "$work/err" 2>/dev/null)"; failed=$((failed + 1)); fi
}

"$kl" why default/second --snapshot "$data/capped_snapshot.yaml" >"$work/out" 2>"$work/err"
check "why exits 0" [ $? -eq 0 ]
check "why names the job, its queue and state" grep -q "^job default/second (queue capped): Inqueue, 0 of its min 1 pods placed, 1 pending$" "$work/out"
check "why gives the reason in the words of spec 7" grep -q "^waiting (queue-limit): queue capped: capability cpu 4, allocated 4, needs 4$" "$work/out"
check "why says what would let it start" grep -q "^  - queue capped's jobs free 4 cpu$" "$work/out"

"$kl" why default/first --snapshot "$data/capped_snapshot.yaml" >"$work/out" 2>"$work/err"
check "a running job is not waiting" grep -q "^not waiting$" "$work/out"

"$kl" queues --snapshot "$data/capped_snapshot.yaml" >"$work/out" 2>"$work/err"
check "queues exits 0 with a header" grep -q "^QUEUE  *WEIGHT  *WAITING  *cpu ALLOCATED/DESERVED$" "$work/out"
check "queues shows capped's waiting job and allocation" grep -Eq "^capped  +1  +1 \(1 queue-limit\)  +4/4$" "$work/out"

"$kl" why default/nope --snapshot "$data/capped_snapshot.yaml" >"$work/out" 2>"$work/err"
check "an unknown job exits 1" [ $? -eq 1 ]
check "an unknown job is named" grep -q "no job default/nope" "$work/err"
"$kl" why default/second --endpoint http://127.0.0.1:1 >"$work/out" 2>"$work/err"
check "an unreachable daemon exits 1" [ $? -eq 1 ]
check "an unreachable daemon: the address tried is named" grep -q "cannot reach the daemon at http://127.0.0.1:1" "$work/err"
printf 'nodes:\n- name: n\n  allocatable: {cpu: "4"}\njobs: []\n' >"$work/scenario.yaml"
"$kl" queues --snapshot "$work/scenario.yaml" >"$work/out" 2>"$work/err"
check "a file that is not a snapshot exits 1" [ $? -eq 1 ]
check "a file that is not a snapshot is called so" grep -q "not a snapshot" "$work/err"
"$kl" why second >"$work/out" 2>"$work/err"
check "why without a namespace is refused" [ $? -eq 2 ]

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
