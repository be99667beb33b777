#!/usr/bin/env bash
# Gang scheduling is all-or-nothing: a PodGroup of 3 pods × 3 cpu on 2 nodes × 4 cpu (room for
# only 2 of them) gets no pod bound, says why (PodGroup condition, pod conditions, an Event),
# and starts whole as soon as a third node arrives.
. "$(dirname "$0")/lib.sh"

make_nodes gang 2 cpu=4
start_scheduler lahar
make_podgroup job 3 "" "{cpu: \"9\"}"
make_pods job 3 cpu=3

step "only 2 of the 3 pods fit: none is bound, and the PodGroup says why"
wait_until 30 "PodGroup job has condition Unschedulable=True" pg_has_condition job Unschedulable True
# Refused at admission (enqueue): the cluster's free cpu (8) is less than the gang's 9. (Until
# all three pods exist the gang is short of pods, which the condition says first.)
wait_until 30 "its message names the resource that is short" \
  pg_condition_matches job Unschedulable '^True\|NotEnoughResources\|cluster: free cpu 8, needs 9$'
log "condition: $(pg_condition job Unschedulable)"

holds_for 3 "no pod of job is bound" bound_is 0 job-
for i in 0 1 2; do
  wait_until 15 "pod job-$i has condition PodScheduled=False" pod_condition_is "job-$i" PodScheduled False
done
log "job-0 PodScheduled: $(pod_condition job-0 PodScheduled)"
wait_until 15 "an Event about PodGroup job (reason Unschedulable) explains the wait" has_event PodGroup job Unschedulable
log "event: $(events PodGroup job | q '[get(e, "type") + " " + get(e, "reason") + ": " + get(e, "message") for e in items(o)]')"
assert_eq "$(events PodGroup job | q 'any(get(e, "type") == "Warning" and get(e, "reason") == "Unschedulable" for e in items(o))')" true \
  "the Event is a Warning"

step "a third node arrives: the whole gang starts"
make_nodes gang-extra 1 cpu=4
wait_until 30 "all 3 pods of job bound" bound_is 3 job-
wait_until 30 "PodGroup job phase Running" pg_phase_is job Running
check "no node is overcommitted" no_overcommit

step "/metrics after the session passes Prometheus' own linter (promtool check metrics)"
command -v promtool >/dev/null || fail "promtool is not installed (hack/install-deps.sh installs Debian's prometheus)"
http lahar /metrics >"$T/metrics.txt" || fail "could not read /metrics"
promtool check metrics <"$T/metrics.txt" >"$T/promtool.log" 2>&1 || fail "promtool check metrics found problems:
$(cat "$T/promtool.log")"
assert_ge "$(grep -c '^# TYPE' "$T/metrics.txt")" 10 "metric families exposed"
ok "promtool check metrics: no problems in $(grep -c '^# TYPE' "$T/metrics.txt") metric families"
