#!/usr/bin/env bash
# config/ is accepted by the real apiserver (hack/check-manifests.sh: server-side dry run of
# every document, RBAC, CRD behaviour), and the daemon runs with the ConfigMap's configuration.
. "$(dirname "$0")/lib.sh"

[ -x "$ROOT/hack/check-manifests.sh" ] || fail "hack/check-manifests.sh is missing"
step "hack/check-manifests.sh $E2E_CLUSTER"
if "$ROOT/hack/check-manifests.sh" "$E2E_CLUSTER" >"$T/check-manifests.log" 2>&1; then
  ok "$(tail -n 1 "$T/check-manifests.log")"
else
  fail "hack/check-manifests.sh failed:
$(grep -A1 'FAIL' "$T/check-manifests.log" | head -n 40)
$(tail -n 3 "$T/check-manifests.log")"
fi

step "the daemon runs with the configuration of config/scheduler-configmap.yaml"
cm="$(api POST "/api/v1/namespaces/lahar-system/configmaps?dryRun=All" "$(cat "$ROOT/config/scheduler-configmap.yaml")" application/yaml)" ||
  fail "dry run of config/scheduler-configmap.yaml failed"
q 'o["data"]["volcano-scheduler.conf"]' <<<"$cm" >"$T/volcano-scheduler.conf"
make_nodes manifests 1 cpu=4
start_scheduler lahar --scheduler-conf="$T/volcano-scheduler.conf"
make_podgroup job 2
make_pods job 2 cpu=1
wait_until 30 "gang job bound" bound_is 2 job-
