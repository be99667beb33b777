#!/usr/bin/env bash
# Two schedulers with leader election on a Lease: exactly one leads and binds; when it is
# killed, the other takes the Lease over and binds.
. "$(dirname "$0")/lib.sh"

LE=(--leader-elect=true --leader-elect-namespace="$NS" --leader-elect-lease-duration=4s
  --leader-elect-renew-deadline=3s --leader-elect-retry-period=1s)
LEASE="/apis/coordination.k8s.io/v1/namespaces/$NS/leases/lahar"
make_nodes le 2 cpu=8
start_scheduler one "${LE[@]}"
start_scheduler two "${LE[@]}"

leaders() { local s; for s in one two; do scheduler_alive "$s" && [ "$(metric "$s" lahar_leader)" = 1 ] && echo "$s"; done; return 0; }
one_leader() { [ "$(leaders | wc -l)" = 1 ]; }
identity() { grep -o 'identity=[^ ,]*' "$T/$1.log" | head -n 1 | cut -d= -f2 | tr -d '"'; }
holder() { get "$LEASE" | q 'get(o, "spec.holderIdentity")'; }

step "exactly one scheduler leads, and the Lease names it"
wait_until 30 "exactly one scheduler has lahar_leader 1" one_leader
leader="$(leaders)"
if [ "$leader" = one ]; then follower=two; else follower=one; fi
log "leader: $leader ($(identity "$leader")), follower: $follower ($(identity "$follower"))"
[ -n "$(identity one)" ] && [ -n "$(identity two)" ] || fail "a scheduler's log has no identity=..."
[ "$(identity one)" != "$(identity two)" ] || fail "both schedulers have identity $(identity one)"
assert_eq "$(holder)" "$(identity "$leader")" "Lease lahar's holderIdentity"
follower_leader="$(metric "$follower" lahar_leader)"
assert_eq "${follower_leader:-0}" 0 "follower's lahar_leader (0 or absent)"

step "only the leader binds"
make_podgroup first 2
make_pods first 2 cpu=1
wait_until 30 "gang first bound" bound_is 2 first-
binds="$(metric "$follower" lahar_binds_total)"
assert_eq "${binds:-0}" 0 "follower's lahar_binds_total"
assert_ge "$(metric "$leader" 'lahar_binds_total{result="success"}')" 2 "leader's lahar_binds_total{result=\"success\"}"

step "the leader is killed: the follower takes over"
stop_scheduler "$leader" KILL
wait_until 20 "$follower becomes the leader (lahar_leader 1)" metric_ge "$follower" lahar_leader 1
wait_until 10 "Lease lahar names $follower" eval '[ "$(holder)" = "$(identity "$follower")" ]'
make_podgroup second 2
make_pods second 2 cpu=1
wait_until 30 "gang second bound by the new leader" bound_is 2 second-
assert_ge "$(metric "$follower" 'lahar_binds_total{result="success"}')" 2 "new leader's lahar_binds_total{result=\"success\"}"
