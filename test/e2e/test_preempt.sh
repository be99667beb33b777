#!/usr/bin/env bash
# Preemption by PriorityClass inside one queue (default configuration): a gang of equal priority
# waits and evicts nothing; a gang of higher priority evicts the whole low-priority gang through
# pods/eviction with reason "preempted-for <ns>/urgent" and starts.
. "$(dirname "$0")/lib.sh"

LOW="low-$NS" HIGH="high-$NS"
make_nodes preempt 1 cpu=4
make_priority_class "$LOW" 10
make_priority_class "$HIGH" 1000
start_scheduler lahar
make_podgroup low 4 "" "" "$LOW"
make_pods low 4 cpu=1 priorityclass="$LOW"

step "the low-priority gang fills the node"
wait_until 60 "low's 4 pods bound" bound_is 4 low-
wait_until 30 "low-0 is Running" pod_phase_is low-0 Running

step "a gang of the same priority waits and evicts nothing"
make_podgroup peer 2 "" "" "$LOW"
make_pods peer 2 cpu=1 priorityclass="$LOW"
wait_until 30 "PodGroup peer has condition Unschedulable=True" pg_has_condition peer Unschedulable True
holds_for 3 "low keeps its 4 pods and peer stays unbound" eval 'bound_is 4 low- && bound_is 0 peer-'
delete "$PG_API/peer"
for i in 0 1; do delete "$POD_API/peer-$i"; done

step "a higher-priority gang takes the whole low-priority gang"
make_podgroup urgent 2 "" "" "$HIGH"
make_pods urgent 2 cpu=1 priorityclass="$HIGH"
wait_until 60 "urgent's 2 pods bound" bound_is 2 urgent-
wait_until 30 "all of low's pods are gone (the gang is taken whole, never left below its min)" bound_is 0 low-
wait_until 15 "Evicted Event on low-0 says preempted-for $NS/urgent" event_says Pod low-0 Evicted "preempted-for $NS/urgent"
wait_until 15 "Evicted Event on PodGroup low says 4 pods, preempted-for $NS/urgent" \
  event_says PodGroup low Evicted "4 pods evicted by lahar-scheduler: preempted-for $NS/urgent"
# Back to Pending, and admitted again at once (Inqueue, as Volcano does: it names no
# minResources), to wait for the pods its controller would recreate.
wait_until 15 "PodGroup low is no longer Running (Pending, or Inqueue again)" eval '[[ "$(pg_phase low)" =~ ^(Pending|Inqueue)$ ]]'
expect "metric lahar_pod_evictions_total{reason=\"preempted-for\"} is 4" \
  eval '[ "$(metric lahar "lahar_pod_evictions_total{reason=\"preempted-for\"}")" = 4 ]'
check "no node is overcommitted" no_overcommit
