#!/usr/bin/env bash
# What goes wrong around an operator, with Kubeflow's training-operator and Lahar as Volcano's
# scheduler: pods that arrive before their PodGroup, a PyTorchJob naming a queue that does not
# exist, a PyTorchJob deleted while it is being placed, the operator restarting mid-job. Each job
# ends bound whole or cleanly waiting with an Event that says why, never half-bound, and a job
# already running beside them is not disturbed.
. "$(dirname "$0")/lib.sh"

make_nodes gpu 2 cpu=16 gpu=4
start_training_operator
start_scheduler lahar --scheduler-name=volcano
# Kubernetes' garbage collector, so that a deleted PyTorchJob takes its pods and PodGroup with it.
start_controller_manager garbagecollector

step "a job running beside everything that follows"
make_pytorchjob bystander 1 gpu=1
wait_until 60 "both pods of bystander bound" bound_is 2 bystander-
bystander_nodes="$(pods | q 'sorted(name(p) + "@" + get(p, "spec.nodeName") for p in items(o) if name(p).startswith("bystander-"))')"

step "pods that arrive before their PodGroup wait for it, then start whole"
make_pods early 2 gpu=1 cpu=1 scheduler=volcano
holds_for 3 "no pod of early is bound without its PodGroup" bound_is 0 early-
make_podgroup early 2
wait_until 30 "both pods of early bound once the PodGroup exists" bound_is 2 early-

step "a PyTorchJob naming a queue that does not exist waits with the reason; other jobs go on"
make_pytorchjob lost 1 gpu=1 queue=no-such-queue
wait_until 30 "the operator created PodGroup lost" pg_exists lost
wait_until 30 "PodGroup lost says its queue does not exist" pg_condition_matches lost Unschedulable '^True\|.*no-such-queue|QueueNotFound'
wait_until 30 "an Event on PodGroup lost says why" has_event PodGroup lost Unschedulable
log "condition: $(pg_condition lost Unschedulable)"
assert_eq "$(count_bound lost-)" 0 "no pod of lost is bound"

step "a PyTorchJob deleted while it is being placed: no pod of it stays, nothing half-bound"
make_pytorchjob gone 3 gpu=1
wait_until 30 "the operator created pods of gone (Lahar is placing them)" \
  eval '[ "$(pods | q "sum(1 for p in items(o) if name(p).startswith(\"gone-\"))")" -ge 1 ]'
delete "$PTJ_API/gone"
gone_cleared() { [ "$(pods | q 'sum(1 for p in items(o) if name(p).startswith("gone-") and not get(p, "metadata.deletionTimestamp"))')" = 0 ]; }
wait_until 60 "every pod of gone is deleted (or being deleted)" gone_cleared
wait_until 60 "PodGroup gone is deleted with its job" eval '! pg_exists gone'

step "the operator restarts mid-job: the job ends bound whole, each pod once"
make_pytorchjob steady 3 gpu=1
wait_until 30 "the operator created PodGroup steady" pg_exists steady
stop_process training-operator
sleep 1
start_training_operator
wait_until 60 "all 4 pods of steady bound" bound_is 4 steady-
holds_for 3 "steady has exactly its 4 pods (the restarted operator made no second copy)" \
  eval '[ "$(pods | q "sum(1 for p in items(o) if name(p).startswith(\"steady-\"))")" = 4 ]'
wait_until 30 "PodGroup steady is Running" pg_phase_is steady Running

step "nothing else was disturbed"
assert_eq "$(pods | q 'sorted(name(p) + "@" + get(p, "spec.nodeName") for p in items(o) if name(p).startswith("bystander-"))')" \
  "$bystander_nodes" "bystander's pods are where they were"
assert_eq "$(count_bound early-)" 2 "early still runs whole"
assert_eq "$(metric lahar 'lahar_pod_evictions_total')" "" "no pod was evicted"
check "no node is overcommitted" no_overcommit
