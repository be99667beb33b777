#!/usr/bin/env bash
# Kubeflow's training-operator (v1.8.1, --gang-scheduler-name=volcano) with Lahar in the place
# of Volcano's scheduler (--scheduler-name volcano), nothing else changed: a PyTorchJob of 1
# master + 3 workers asking for GPUs gets its PodGroup from the operator and all 4 pods bound
# together; a second such job, on a cluster with room for one, waits whole (its PodGroup held at
# admission, so the operator creates no pod), says why, and starts whole when the first completes.
. "$(dirname "$0")/lib.sh"

make_nodes gpu 2 cpu=8 gpu=2
start_training_operator
start_scheduler lahar --scheduler-name=volcano

step "PyTorchJob first (1 master + 3 workers, 1 GPU each): the operator's PodGroup, all 4 pods bound"
make_pytorchjob first 3 gpu=1 duration=12s
wait_until 30 "the operator created PodGroup first" pg_exists first
pg="$(get "$PG_API/first")"
assert_eq "$(q 'get(o, "spec.minMember")' <<<"$pg")" 4 "its minMember is the job's 4 replicas"
assert_eq "$(q 'qty(get(o, "spec.minResources")["nvidia.com/gpu"])' <<<"$pg")" 4 "its minResources name the 4 GPUs"
wait_until 60 "all 4 pods of first bound" bound_is 4 first-
assert_eq "$(pods | q 'sorted({get(p, "spec.schedulerName") for p in items(o) if name(p).startswith("first-")})')" volcano \
  "the operator's pods ask for schedulerName volcano (which Lahar serves)"
assert_eq "$(pods | q 'sorted(name(p) for p in items(o) if name(p).startswith("first-"))' | tr '\n' ' ')" \
  "first-master-0 first-worker-0 first-worker-1 first-worker-2 " "master and workers are the pods bound"
wait_until 30 "PodGroup first is Running" pg_phase_is first Running
check "no node is overcommitted" no_overcommit

step "PyTorchJob second, the same size, while first runs: it waits whole and says why"
make_pytorchjob second 3 gpu=1
wait_until 30 "the operator created PodGroup second" pg_exists second
wait_until 30 "PodGroup second says why it waits (Unschedulable, the GPUs it needs)" \
  pg_condition_matches second Unschedulable '^True\|.*nvidia.com/gpu'
log "condition: $(pg_condition second Unschedulable)"
holds_for 3 "no pod of second is bound while first runs" bound_is 0 second-
assert_eq "$(pg_phase second)" Pending "PodGroup second is held at admission (Pending: the operator creates no pod yet)"

step "first completes (kwok ends its pods): second starts whole"
wait_until 60 "PyTorchJob first Succeeded" ptj_has_condition first Succeeded
wait_until 60 "all 4 pods of second bound" bound_is 4 second-
wait_until 30 "PodGroup second is Running" pg_phase_is second Running
check "no node is overcommitted" no_overcommit
