#!/usr/bin/env bash
# The scheduler is killed (SIGKILL) in the middle of placing 100 gangs of 4 pods and started
# again: the new process rebuilds its state from the apiserver, binds exactly the pods the first
# one had not bound (no pod twice: no bind conflict), completes the gangs, overcommits no node.
# The 25 nodes × 16 cpu hold exactly the 400 pods × 1 cpu, so a pod counted twice or missed
# would show as an overcommitted node or a pod left pending.
. "$(dirname "$0")/lib.sh"

GANGS=100
PODS=$((GANGS * 4))
# A limited client rate keeps the first scheduler busy binding long enough to be killed midway.
FLAGS=(--kube-api-qps=50 --kube-api-burst=50)

make_nodes restart 25 cpu=16 memory=64Gi
step "$GANGS gangs × 4 pods × 1 cpu"
for ((g = 0; g < GANGS; g++)); do
  printf '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"g%03d","namespace":"%s"},"spec":{"minMember":4}}\n' "$g" "$NS"
done >"$T/podgroups.json"
post_many "$T/podgroups.json"
for ((g = 0; g < GANGS; g++)); do
  for i in 0 1 2 3; do pod_json "$(printf 'g%03d-%d' "$g" "$i")" "group=$(printf 'g%03d' "$g")" cpu=1 memory=1Gi; done
done >"$T/pods.json"
post_many "$T/pods.json"
ok "$GANGS PodGroups and $PODS pods created"

step "first scheduler: killed as soon as it has bound some pods"
start_scheduler first "${FLAGS[@]}"
wait_until 60 "the first scheduler has bound some pods" bound_at_least 1
stop_scheduler first KILL
sleep 1
killed_at="$(count_bound)"
partial="$(pods | q 'sum(1 for n in collections.Counter(group(p) for p in items(o) if bound(p)).values() if n < 4)')"
log "pods bound when it died: $killed_at of $PODS ($partial gangs partly bound)"
[ "$killed_at" -lt "$PODS" ] || log "note: every pod was bound before the kill landed; the restart below only re-checks"

step "second scheduler: finishes the job from the apiserver's state"
start_scheduler second "${FLAGS[@]}"
wait_until 150 "all $PODS pods bound" bound_is "$PODS"
conflicts="$(metric second 'lahar_binds_total{result="conflict"}')"
assert_eq "${conflicts:-0}" 0 "second scheduler: lahar_binds_total{result=\"conflict\"} (no pod bound twice)"
success="$(metric second 'lahar_binds_total{result="success"}')"
assert_eq "${success:-0}" $((PODS - killed_at)) "second scheduler bound exactly the pods the first had not"
log "second scheduler: binds with errors (retried): $(metric second 'lahar_binds_total{result="error"}' || true)"
check "no node is overcommitted" no_overcommit
all_running() { [ "$(get "$PG_API" | q 'sum(1 for g in items(o) if get(g, "status.phase") == "Running")')" = "$GANGS" ]; }
wait_until 60 "all $GANGS PodGroups phase Running" all_running
