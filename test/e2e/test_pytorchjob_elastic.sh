#!/usr/bin/env bash
# An elastic PyTorchJob (elasticPolicy min 2 / max 4 workers, runPolicy.schedulingPolicy.minAvailable
# 2) from Kubeflow's training-operator: on a busy cluster it runs at its min, with its lowest-index
# workers; it grows into the capacity a finished job leaves; a new job that needs room takes its
# highest-index workers first and never cuts it below its min.
. "$(dirname "$0")/lib.sh"

make_nodes gpu 1 cpu=16 gpu=4
start_training_operator
elastic_conf "enqueue, allocate, preempt-elastic-workers, reclaim, preempt, elastic-scale, backfill"
start_scheduler lahar --scheduler-name=volcano --scheduler-conf="$T/volcano-scheduler.conf"

step "a rigid job takes 2 of the 4 GPUs for a while"
make_pytorchjob busy 1 gpu=1 duration=10s
wait_until 60 "both pods of busy bound" bound_is 2 busy-

step "the elastic job runs at its min: workers 0 and 1"
make_pytorchjob el 4 gpu=1 elastic=2:4
wait_until 30 "the operator created PodGroup el" pg_exists el
assert_eq "$(pg_get el 'get(o, "spec.minMember")')" 2 "PodGroup el's minMember is the elastic min"
wait_until 60 "2 workers of el bound" bound_is 2 el-
holds_for 2 "no more than 2 workers of el while busy runs" bound_is 2 el-
check "the lowest-index workers are the ones placed (el-worker-0, el-worker-1)" eval 'is_bound el-worker-0 && is_bound el-worker-1'

step "busy completes: el grows to its max"
wait_until 60 "PyTorchJob busy Succeeded" ptj_has_condition busy Succeeded
wait_until 60 "all 4 workers of el bound" bound_is 4 el-
check "no node is overcommitted" no_overcommit

step "a new job needs 2 GPUs: el gives up its highest-index workers, and stays at or above its min"
make_pytorchjob urgent 1 gpu=1
wait_until 60 "both pods of urgent bound" bound_is 2 urgent-
check "el-worker-0 and el-worker-1 kept running" eval 'is_bound el-worker-0 && is_bound el-worker-1'
assert_eq "$(count_bound el-)" 2 "el runs at its min"
check "no node is overcommitted" no_overcommit
