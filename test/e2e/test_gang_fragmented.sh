#!/usr/bin/env bash
# Gang placement is a transaction: 3 pods × 3 cpu on 2 nodes × 5 cpu. The cluster as a whole has
# room (10 >= 9 cpu), so the job is admitted, but only 2 of its pods fit (one a node): the
# scheduler must roll the 2 placements back, bind none, and say which resource is short. A third
# node lets the whole gang start.
. "$(dirname "$0")/lib.sh"

make_nodes frag 2 cpu=5
start_scheduler lahar
make_podgroup job 3
make_pods job 3 cpu=3

step "admitted, but only 2 of the 3 pods fit: none is bound"
wait_until 30 "PodGroup job has condition Unschedulable=True" pg_has_condition job Unschedulable True
log "condition: $(pg_condition job Unschedulable)"
expect "its message mentions 'unschedulable'" pg_condition_matches job Unschedulable '\|.*\|.*unschedulable'
expect "its message names the short resource (cpu)" pg_condition_matches job Unschedulable '\|.*\|.*cpu'
holds_for 5 "no pod of job is bound (the two placements that fit are not committed)" bound_is 0 job-
wait_until 15 "pod job-0 has condition PodScheduled=False" pod_condition_is job-0 PodScheduled False
log "job-0 PodScheduled: $(pod_condition job-0 PodScheduled)"
wait_until 15 "an Event about PodGroup job (reason Unschedulable)" has_event PodGroup job Unschedulable
log "events: $(events PodGroup job | q '[get(e, "type") + " " + get(e, "reason") + ": " + get(e, "message") for e in items(o)]')"

step "a third node arrives: the whole gang starts"
make_nodes frag-extra 1 cpu=5
wait_until 30 "all 3 pods of job bound" bound_is 3 job-
check "one pod per node (3 cpu each on 5-cpu nodes)" \
  eval '[ "$(pods | q "len(set(get(p, \"spec.nodeName\") for p in items(o)))")" = 3 ]'
wait_until 30 "PodGroup job phase Running" pg_phase_is job Running
check "no node is overcommitted" no_overcommit
