#!/usr/bin/env bash
# A Queue's capability is a hard ceiling: with capability cpu 4, of two gangs of 4 × 1 cpu only
# one runs, though the nodes have room for both; the other waits with a condition, and the
# Queue's status.allocated shows the 4 cpu in use.
. "$(dirname "$0")/lib.sh"

QUEUE="cap-$NS"
make_nodes capq 2 cpu=8
make_queue "$QUEUE" 1 '{cpu: "4"}'
start_scheduler lahar
make_podgroup a 4 "$QUEUE"
make_podgroup b 4 "$QUEUE"
make_pods a 4 cpu=1
make_pods b 4 cpu=1

step "one gang runs, the other waits for the queue"
wait_until 30 "one gang of queue $QUEUE has its 4 pods bound" bound_is 4
if [ "$(count_bound a-)" = 4 ]; then running=a waiting=b; else running=b waiting=a; fi
assert_eq "$(count_bound "$running-")" 4 "gang $running is bound"
wait_until 30 "PodGroup $waiting has condition Unschedulable=True" pg_has_condition "$waiting" Unschedulable True
log "condition: $(pg_condition "$waiting" Unschedulable)"
holds_for 3 "gang $waiting stays unbound (queue capability cpu 4 is used up)" bound_is 0 "$waiting-"

step "the Queue's status.allocated shows 4 cpu"
allocated_cpu() { get "$Q_API/$QUEUE" | q 'get(o, "status.allocated.cpu")'; }
wait_until 30 "Queue $QUEUE status.allocated.cpu is 4 (or 4000m)" \
  eval '[[ "$(allocated_cpu)" =~ ^(4|4000m)$ ]]'
check "no node is overcommitted" no_overcommit
expect "metric lahar_queue_allocated{queue=\"$QUEUE\",resource=\"cpu\"} is 4" \
  eval '[ "$(metric lahar "lahar_queue_allocated{queue=\"$QUEUE\",resource=\"cpu\"}")" = 4 ]'
