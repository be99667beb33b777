#!/usr/bin/env bash
# Elastic workers are placed last and evicted first: a job with min 2 and 6 pods fills two
# 4-cpu nodes with its 4 elastic workers beside its min; when a gang of 4 arrives, the scheduler
# evicts the workers with the highest index (elastic-5, elastic-4), never the min (elastic-0,
# elastic-1), and the new gang starts. Cooldown 0s so that no step waits for it.
. "$(dirname "$0")/lib.sh"

elastic_conf "enqueue, allocate, elastic-scale, preempt-elastic-workers, backfill"
make_nodes elastic 2 cpu=4
start_scheduler lahar --scheduler-conf="$T/volcano-scheduler.conf"
make_podgroup elastic 2
make_pods elastic 6 cpu=1

step "min 2 + 4 elastic workers: all 6 pods of elastic bound (6 of 8 cpu)"
wait_until 60 "all 6 pods of elastic bound" bound_is 6 elastic-
before="$(metric lahar lahar_pod_evictions_total)"
log "lahar_pod_evictions_total before: ${before:-<absent>}"

step "newjob (min 4 × 1 cpu) arrives with 2 cpu free: elastic-5 and elastic-4 are evicted"
make_podgroup newjob 4
make_pods newjob 4 cpu=1
# elastic pods still there (not deleted, not being deleted)
elastic_left() { pods | q '[name(p) for p in items(o) if name(p).startswith("elastic-") and not get(p, "metadata.deletionTimestamp")]'; }
gone_order=""
start=$SECONDS
until bound_is 4 newjob-; do
  left=" $(elastic_left | tr '\n' ' ')"
  for i in 5 4 3 2 1 0; do  # pods gone in the same poll are recorded highest index first
    if [[ "$left" != *" elastic-$i "* && "$gone_order" != *"elastic-$i"* ]]; then
      gone_order="$gone_order elastic-$i"
      log "elastic-$i evicted (after $((SECONDS - start))s)"
    fi
  done
  case "$gone_order" in *elastic-0* | *elastic-1*) fail "a pod of elastic's min was evicted (evicted so far:$gone_order)" ;; esac
  [ $((SECONDS - start)) -lt 60 ] || fail "timed out after 60s waiting for newjob's 4 pods to be bound (evicted so far:${gone_order:- none})"
  scheduler_alive lahar || fail "scheduler lahar exited ($(scheduler_exit lahar))"
  sleep 0.3
done
ok "newjob's 4 pods bound (after $((SECONDS - start))s)"
assert_eq "$(elastic_left | tr '\n' ' ')" "elastic-0 elastic-1 elastic-2 elastic-3 " \
  "elastic keeps its min and workers 2-3"
case "$gone_order" in
  " elastic-4 elastic-5") fail "elastic-4 was evicted before elastic-5 (highest index goes first)" ;;
  *) ok "evicted highest index first:$gone_order" ;;
esac
wait_until 15 "lahar_pod_evictions_total grew by at least 2" \
  metric_ge lahar lahar_pod_evictions_total $((${before:-0} + 2))
log "evictions by reason: $(http lahar /metrics | grep '^lahar_pod_evictions_total' | tr '\n' ' ')"
holds_for 3 "newjob stays bound and elastic-0..3 stay" \
  eval 'bound_is 4 newjob- && [ "$(elastic_left | tr "\n" " ")" = "elastic-0 elastic-1 elastic-2 elastic-3 " ]'
check "no node is overcommitted" no_overcommit
