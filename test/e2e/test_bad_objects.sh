#!/usr/bin/env bash
# Bad objects give conditions or Events, never a crash: a PodGroup whose minMember exceeds its
# pods, a PodGroup in a queue that does not exist, a Queue whose capability overflows.
. "$(dirname "$0")/lib.sh"

BADQ="bad-$NS"
make_nodes bad 2 cpu=8
start_scheduler lahar

step "a Queue with capability cpu 1e999 (a valid quantity that overflows)"
make_queue "$BADQ" 1 '{cpu: "1e999"}'
wait_until 30 "an Event about Queue $BADQ with reason InvalidSpec" has_event Queue "$BADQ" InvalidSpec all
log "event: $(events Queue "$BADQ" all | q '[get(e, "type") + " " + get(e, "reason") + ": " + get(e, "message") for e in items(o)]')"
check "scheduler still running" scheduler_alive lahar

step "a PodGroup with minMember 5 and 2 pods"
make_podgroup short 5
make_pods short 2 cpu=1
wait_until 30 "PodGroup short has condition Unschedulable=True naming NotEnoughPods" \
  pg_condition_matches short Unschedulable '^True\|.*NotEnoughPods'
log "condition: $(pg_condition short Unschedulable)"

step "a PodGroup in queue nosuchqueue"
make_podgroup lost 1 nosuchqueue
make_pods lost 1 cpu=1
wait_until 30 "PodGroup lost has condition Unschedulable with reason QueueNotFound" \
  pg_condition_matches lost Unschedulable '^[^|]*\|QueueNotFound\|'
log "condition: $(pg_condition lost Unschedulable)"
holds_for 3 "no pod of short or lost is bound" eval 'bound_is 0 short- && bound_is 0 lost-'

step "the scheduler is fine"
check "scheduler still running" scheduler_alive lahar
check "scheduler /healthz is ok" healthz_ok lahar
make_pod normal cpu=1
wait_until 30 "an ordinary pod is still bound" is_bound normal
