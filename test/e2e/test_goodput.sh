#!/usr/bin/env bash
# Goodput (spec 3.2) on a live cluster: the daemon reads PodGroup annotation lahar.sh/throughput.
# `flat` reports that its second worker added nothing: it stays at one pod while `plain` (no
# reports) grows to all four of its pods. When `flat`'s reports change to linear (one PATCH, as
# a training script would send), it grows, one size past its largest report and no further. A
# PodGroup whose annotation does not parse gets a Warning Event naming the bad pair and is
# scheduled as if it reported nothing. Cooldown 0s so that no step waits for it.
. "$(dirname "$0")/lib.sh"

elastic_conf "enqueue, allocate, preempt-elastic-workers, elastic-scale, backfill"
make_nodes goodput 3 cpu=4
start_scheduler lahar --scheduler-conf="$T/volcano-scheduler.conf"
annotated_podgroup() { # NAME THROUGHPUT
  create <<PG
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: $1
  annotations: {lahar.sh/throughput: "$2"}
spec:
  minMember: 1
PG
}
annotated_podgroup flat "1=10,2=10"
make_podgroup plain 1
annotated_podgroup bad "1=ten"
make_pods flat 4 cpu=1
make_pods plain 4 cpu=1
make_pods bad 2 cpu=1

step "plain (no reports) grows to 4 pods; flat stays at 1, its 2nd worker reported no gain"
wait_until 60 "all 4 pods of plain bound" bound_is 4 plain-
wait_until 30 "flat's min bound" bound_is 1 flat-
holds_for 3 "flat stays at one pod with 7 cpu free" bound_is 1 flat-

step "a bad annotation: Warning Event InvalidAnnotation on PodGroup bad, and bad is scheduled all the same"
wait_until 30 "an InvalidAnnotation Event on PodGroup bad" has_event PodGroup bad InvalidAnnotation
check "the Event names the bad pair" event_says PodGroup bad InvalidAnnotation '"1=ten": the throughput is not a finite non-negative number'
wait_until 30 "both pods of bad bound (as a job without reports)" bound_is 2 bad-
invalid_annotation_events() { events PodGroup bad | q 'sum(1 for e in items(o) if get(e, "reason") == "InvalidAnnotation")'; }
holds_for 3 "one InvalidAnnotation Event, though bad's status is written since" \
  eval '[ "$(invalid_annotation_events)" = 1 ]'

step "flat reports linear throughput: it grows to 3 pods, one past its largest report, and no further"
patch "$PG_API/flat" '{"metadata":{"annotations":{"lahar.sh/throughput":"1=10,2=20"}}}'
wait_until 60 "flat has 3 pods bound" bound_is 3 flat-
holds_for 3 "flat stays at 3 pods until it reports size 3" bound_is 3 flat-
check "no node is overcommitted" no_overcommit
