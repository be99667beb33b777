#!/usr/bin/env bash
# Lahar on Volcano's PodGroup CRD exactly as Volcano installs it (../shared/fixtures), which has
# no status subresource, with Volcano's Helm configuration and --scheduler-name volcano: a gang
# of volcano pods is bound whole and its PodGroup status (phase Running, the Scheduled condition)
# is written into the PodGroup itself, as is the condition of a gang that cannot fit. Lahar's CRD
# is then put back under the running daemon, which finds out and writes through the status
# subresource again. The exit trap puts Lahar's CRD back in any case, for the tests that follow.
. "$(dirname "$0")/lib.sh"

FIXTURES="$("$ROOT/hack/fixtures-dir.sh")/volcano" || fail "Volcano's fixtures not found"
VOLCANO_CRD="$FIXTURES/crds/scheduling.volcano.sh_podgroups.yaml"
VOLCANO_CONF="$FIXTURES/volcano-scheduler.conf"
CRD_API=/apis/apiextensions.k8s.io/v1/customresourcedefinitions/podgroups.scheduling.volcano.sh
[ -f "$VOLCANO_CRD" ] && [ -f "$VOLCANO_CONF" ] || fail "Volcano's fixtures not found under $FIXTURES"

crd_version() { get "$CRD_API" | q 'o["metadata"]["resourceVersion"]'; }
crd_established() { [ "$(get "$CRD_API" | q 'cond(o, "Established").get("status")')" = True ]; }
# Whether discovery lists podgroups/status: what the daemon goes by.
discovery_has_status() {
  [ "$(get /apis/scheduling.volcano.sh/v1beta1 | q 'any(r["name"] == "podgroups/status" for r in o["resources"])')" = true ]
}
discovery_lacks_status() { ! discovery_has_status; }

# Lahar's CRD as installed, to put back: its metadata's name, labels and annotations, and spec.
get "$CRD_API" |
  q '{"apiVersion": o["apiVersion"], "kind": o["kind"], "spec": o["spec"], "metadata": {k: v for k, v in o["metadata"].items() if k in ("name", "labels", "annotations")}}' \
    >"$T/lahar-crd.json"
LAHAR_CRD_BACK=0
# restore_lahar_crd: PUT of Lahar's CRD over whatever is installed (once), then waits until it
# is served. Also run by the exit trap, where it must not fail the test itself.
restore_lahar_crd() {
  [ "$LAHAR_CRD_BACK" = 0 ] || return 0
  local rv
  rv="$(crd_version)" || return 1
  api PUT "$CRD_API" "$(q 'dict(o, metadata=dict(o["metadata"], resourceVersion=a[0]))' "$rv" <"$T/lahar-crd.json")" \
    >/dev/null || return 1
  LAHAR_CRD_BACK=1
  local i
  for ((i = 0; i < 60; i++)); do
    crd_established && discovery_has_status && return 0
    sleep 0.5
  done
  return 1
}
trap 'rc=$?; set +e; trap - ERR; restore_lahar_crd || echo "could not put Lahar PodGroup CRD back (see $T/lahar-crd.json)"; (exit $rc); cleanup' EXIT

step "Volcano's PodGroup CRD replaces Lahar's (PUT with its resourceVersion)"
awk -v rv="$(crd_version)" '/^---[ \t]*$/ && !started { next } { started = 1; print }
  /^metadata:/ && !done { printf "  resourceVersion: \"%s\"\n", rv; done = 1 }' "$VOLCANO_CRD" >"$T/volcano-crd.yaml"
api PUT "$CRD_API" "$(cat "$T/volcano-crd.yaml")" application/yaml >/dev/null || fail "PUT of Volcano's CRD refused"
wait_until 30 "podgroups.scheduling.volcano.sh Established" crd_established
wait_until 30 "API discovery no longer lists podgroups/status" discovery_lacks_status
assert_eq "$(get "$CRD_API" | q 'o["spec"]["versions"][0].get("subresources")')" "{}" "the installed CRD's subresources"

step "Volcano's configuration and scheduler name"
make_nodes volcano 2 cpu=4
start_scheduler lahar --scheduler-name=volcano --scheduler-conf="$VOLCANO_CONF"
make_podgroup job 3
make_pods job 3 cpu=2 scheduler=volcano
wait_until 30 "all 3 pods of job bound" bound_is 3 job-
wait_until 30 "PodGroup job status.phase Running (written into the PodGroup itself)" pg_phase_is job Running
wait_until 15 "PodGroup job has condition Scheduled=True" pg_has_condition job Scheduled True
log "status: $(pg_get job 'o.get("status")')"
assert_eq "$(pg_get job 'o["spec"]["minMember"]')" 3 "the status writes left spec.minMember alone"
check "no node is overcommitted" no_overcommit
expect "the daemon's log says podgroups has no status subresource" \
  grep -Eq 'resources with a status subresource: queues;' "$T/lahar.log"
check_not "no status write failed" grep -Eq 'W \[status\] PodGroup' "$T/lahar.log"

make_podgroup big 2
make_pods big 2 cpu=3 scheduler=volcano
wait_until 30 "PodGroup big (2 x 3 cpu, 2 cpu free) has condition Unschedulable=True" \
  pg_has_condition big Unschedulable True
log "condition: $(pg_condition big Unschedulable)"
check "no pod of big is bound" bound_is 0 big-

step "Lahar's CRD back under the running daemon: status goes through the subresource again"
restore_lahar_crd || fail "could not put Lahar's PodGroup CRD back"
ok "Lahar's CRD is served again, with podgroups/status"
make_podgroup after 1
make_pods after 1 cpu=1 scheduler=volcano
wait_until 30 "pod after-0 bound" bound_is 1 after-
wait_until 30 "PodGroup after status.phase Running (through podgroups/status)" pg_phase_is after Running
wait_until 10 "the daemon's log says podgroups has a status subresource again" \
  grep -q 'podgroups now has a status subresource' "$T/lahar.log"
