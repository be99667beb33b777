#!/usr/bin/env bash
# Reclaim between two queues (default configuration): queue A borrows the whole cluster with two
# rigid gangs while queue B is idle; when B submits a gang, exactly one of A's gangs is evicted
# whole through pods/eviction with reason "reclaimed-for <ns>/want", B's gang starts, and A keeps
# its deserved half.
. "$(dirname "$0")/lib.sh"

QA="ra-$NS" QB="rb-$NS"
make_nodes reclaim 2 cpu=4
make_queue "$QA" 1
make_queue "$QB" 1
start_scheduler lahar
make_podgroup a 4 "$QA"
make_podgroup b 4 "$QA"
make_pods a 4 cpu=1
make_pods b 4 cpu=1

step "queue $QA borrows all 8 cpu with two gangs while $QB is idle"
wait_until 60 "all 8 pods of $QA bound" bound_is 8
# kwok reports the pods Running; reclaim only takes from jobs that run.
wait_until 30 "a-0 and b-0 are Running" eval 'pod_phase_is a-0 Running && pod_phase_is b-0 Running'

step "queue $QB submits a gang of 4: one of $QA's gangs is taken back whole"
make_podgroup want 4 "$QB"
make_pods want 4 cpu=1
wait_until 60 "want's 4 pods bound" bound_is 4 want-
left_a="$(count_bound a-)" left_b="$(count_bound b-)"
log "bound after reclaim: a=$left_a b=$left_b"
if [ "$left_a" = 4 ]; then victim=b; else victim=a; fi
assert_eq "$(count_bound "$victim-")" 0 "the victim gang $victim lost all its pods (never cut below its min)"
kept=$([ "$victim" = a ] && echo b || echo a)
assert_eq "$(count_bound "$kept-")" 4 "gang $kept kept its 4 pods ($QA keeps its deserved half)"
wait_until 15 "Evicted Event on $victim-0 says reclaimed-for $NS/want" event_says Pod "$victim-0" Evicted "reclaimed-for $NS/want"
wait_until 15 "Evicted Event on PodGroup $victim says 4 pods, reclaimed-for $NS/want" \
  event_says PodGroup "$victim" Evicted "4 pods evicted by lahar-scheduler: reclaimed-for $NS/want"
expect "metric lahar_pod_evictions_total{reason=\"reclaimed-for\"} is 4" \
  eval '[ "$(metric lahar "lahar_pod_evictions_total{reason=\"reclaimed-for\"}")" = 4 ]'
holds_for 3 "nothing more is evicted: want and $kept stay bound" \
  eval 'bound_is 4 want- && bound_is 4 "$kept-"'
check "no node is overcommitted" no_overcommit
