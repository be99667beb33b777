#!/usr/bin/env bash
# Pods with spec.schedulingGates are never bound while a gate remains, though there is room: the
# PodGroup's condition, its Event and the pods' PodScheduled condition say which gates hold the
# gang. Removing the gates is an update of the pod (a PATCH; gates can only be removed): the
# daemon sees each one, and the gang starts once the last gate is gone. A lone gated pod (no
# PodGroup) is told on a FailedScheduling Event and bound once ungated. No binding is ever
# attempted for a gated pod.
. "$(dirname "$0")/lib.sh"

make_nodes gates 2 cpu=4
start_scheduler lahar
make_podgroup job 2
pod_json job-0 group=job cpu=1 gates=example.com/quota,example.com/data-ready >"$T/pods-job.json"
pod_json job-1 group=job cpu=1 gates=example.com/quota >>"$T/pods-job.json"
post_many "$T/pods-job.json"
make_pod solo cpu=1 gates=example.com/quota

gates_of() { get "$POD_API/$1" | q '",".join(g["name"] for g in get(o, "spec.schedulingGates") or [])'; }
assert_eq "$(gates_of job-0)" "example.com/quota,example.com/data-ready" "job-0 was created with its two gates"

step "room for the whole gang, but every pod is gated: the PodGroup says which gates"
wait_until 30 "PodGroup job is Unschedulable for its scheduling gates" \
  pg_has_condition job Unschedulable True '^SchedulingGated$' '^2 pods have scheduling gates: example\.com/data-ready, example\.com/quota$'
log "condition: $(pg_condition job Unschedulable)"
# The default period is 200 ms: 4 s is some 20 sessions that leave the pods alone.
holds_for 4 "no pod of job, nor solo, is bound" bound_is 0
wait_until 15 "an Event on PodGroup job names the gates" \
  event_says PodGroup job Unschedulable "2 pods have scheduling gates: example.com/data-ready, example.com/quota"
wait_until 15 "pod job-0's PodScheduled condition names the gates" \
  eval 'pod_condition job-0 PodScheduled | grep -q "^False|SchedulingGated|2 pods have scheduling gates"'
log "job-0 PodScheduled: $(pod_condition job-0 PodScheduled)"
wait_until 15 "a FailedScheduling Event on the lone pod solo names its gate" \
  event_says Pod solo FailedScheduling "1 pod has scheduling gates: example.com/quota"

step "one gate off job-0 (PATCH): seen, and the gang still waits for the rest"
patch "$POD_API/job-0" '{"spec":{"schedulingGates":[{"name":"example.com/quota"}]}}'
assert_eq "$(gates_of job-0)" "example.com/quota" "job-0 keeps one gate"
wait_until 15 "the condition no longer names example.com/data-ready" \
  pg_has_condition job Unschedulable True '^SchedulingGated$' '^2 pods have scheduling gates: example\.com/quota$'
patch "$POD_API/job-0" '{"spec":{"schedulingGates":null}}'
wait_until 15 "the condition counts one gated pod" \
  pg_has_condition job Unschedulable True '^SchedulingGated$' '^1 pod has scheduling gates: example\.com/quota$'
holds_for 2 "job-0 has no gate left, yet the gang is not bound in part" bound_is 0 job-

step "the last gate goes: the whole gang starts, and so does the lone pod"
patch "$POD_API/job-1" '{"spec":{"schedulingGates":[]}}'
patch "$POD_API/solo" '{"spec":{"schedulingGates":null}}'
wait_until 30 "both pods of job bound" bound_is 2 job-
wait_until 30 "pod solo bound" is_bound solo
wait_until 30 "PodGroup job phase Running" pg_phase_is job Running
wait_until 15 "PodGroup job condition Scheduled" pg_has_condition job Scheduled True
check "no node is overcommitted" no_overcommit
# The apiserver refuses to bind a gated pod: had the daemon tried, these would not add up.
assert_eq "$(metric lahar 'lahar_binds_total')" 3 "bindings posted, all of them after the gates went"
assert_eq "$(metric lahar 'lahar_binds_total{result="success"}')" 3 "bindings that succeeded"
