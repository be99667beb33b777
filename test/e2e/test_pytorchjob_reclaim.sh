#!/usr/bin/env bash
# PyTorchJobs in two Queues with reclaim (Kubeflow's training-operator, runPolicy.schedulingPolicy.
# queue): queue A's elastic job borrows every GPU while queue B is idle; when B submits a job,
# reclaim takes back A's elastic workers (highest index first, never below A's min) through
# pods/eviction, and B's job starts whole.
. "$(dirname "$0")/lib.sh"

QA="pa-$NS" QB="pb-$NS"
make_nodes gpu 1 cpu=16 gpu=4
make_queue "$QA" 1
make_queue "$QB" 1
start_training_operator
# reclaim is the only evicting action: it, not preempt-elastic-workers, must take them back.
elastic_conf "enqueue, allocate, reclaim, elastic-scale, backfill"
start_scheduler lahar --scheduler-name=volcano --scheduler-conf="$T/volcano-scheduler.conf"

step "queue $QA's elastic job borrows all 4 GPUs while $QB is idle"
make_pytorchjob borrower 4 gpu=1 elastic=2:4 queue="$QA"
wait_until 30 "the operator created PodGroup borrower in queue $QA" eval '[ "$(pg_get borrower "get(o, \"spec.queue\")")" = "$QA" ]'
wait_until 60 "all 4 workers of borrower bound" bound_is 4 borrower-
wait_until 30 "they run" eval 'pod_phase_is borrower-worker-3 Running'

step "queue $QB submits a job of 2 GPUs: reclaim takes back $QA's highest-index workers"
make_pytorchjob owner 1 gpu=1 queue="$QB"
wait_until 60 "both pods of owner bound" bound_is 2 owner-
check "borrower keeps workers 0 and 1" eval 'is_bound borrower-worker-0 && is_bound borrower-worker-1'
assert_eq "$(count_bound borrower-)" 2 "borrower runs at its min, its deserved half"
wait_until 15 "Evicted Event on PodGroup borrower says reclaimed-for $NS/owner" \
  event_says PodGroup borrower Evicted "reclaimed-for $NS/owner"
check "no node is overcommitted" no_overcommit
