#!/usr/bin/env bash
# Pods of other schedulers count against nodes: on a 4-cpu node holding a default-scheduler
# pod of 3 cpu, a lahar pod of 2 cpu stays pending while one of 1 cpu is bound.
. "$(dirname "$0")/lib.sh"

make_nodes foreign 1 cpu=4
make_pod other cpu=3 scheduler=default-scheduler node=foreign-0
wait_until 30 "the default-scheduler pod runs on foreign-0" pod_phase_is other Running
start_scheduler lahar

make_pod big cpu=2
make_pod small cpu=1
wait_until 30 "lahar pod small (1 cpu) is bound" is_bound small
assert_eq "$(pod_node small)" foreign-0 "small is on foreign-0"
holds_for 3 "lahar pod big (2 cpu) is not bound (only 1 cpu is free)" not_bound big
wait_until 15 "pod big has condition PodScheduled=False" pod_condition_is big PodScheduled False
log "big PodScheduled: $(pod_condition big PodScheduled)"
check "no node is overcommitted" no_overcommit
