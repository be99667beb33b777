#!/usr/bin/env bash
# kube-apiserver restarts under a running scheduler: the scheduler stays up, its watches
# resume, and nodes, PodGroups and pods created afterwards are scheduled.
. "$(dirname "$0")/lib.sh"

make_nodes apir 2 cpu=8
start_scheduler lahar
make_podgroup before 2
make_pods before 2 cpu=1
wait_until 30 "gang before bound" bound_is 2 before-

step "restart kube-apiserver"
"$ROOT/hack/local-cluster.sh" restart-apiserver "$E2E_CLUSTER" >"$T/restart-apiserver.log" 2>&1 ||
  fail "hack/local-cluster.sh restart-apiserver failed: $(tail -n 5 "$T/restart-apiserver.log")"
ok "kube-apiserver restarted ($(grep -c . "$T/restart-apiserver.log") lines in $T/restart-apiserver.log)"
check "scheduler still running" scheduler_alive lahar

step "objects created after the restart are scheduled"
make_nodes apir-new 1 cpu=8
make_podgroup after 2
make_pods after 2 cpu=1
make_pod pinned cpu=1 on=apir-new-0
wait_until 60 "gang after bound" bound_is 2 after-
wait_until 30 "pod pinned bound to the node created after the restart" is_bound pinned
assert_eq "$(pod_node pinned)" apir-new-0 "pinned is on apir-new-0"
check "scheduler still running" scheduler_alive lahar
check "scheduler /healthz is ok" healthz_ok lahar
check "no node is overcommitted" no_overcommit
