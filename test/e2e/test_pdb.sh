#!/usr/bin/env bash
# A PodDisruptionBudget that forbids an eviction is respected (default configuration, no pdb
# plugin: the apiserver's pods/eviction refuses it). A high-priority gang would preempt a
# low-priority gang whose pods a budget with minAvailable 2 covers: the eviction is refused, no
# pod of the low gang goes, the high gang waits, and Warning Events on the pod and on the
# waiting PodGroup say why. The refused pod is not asked for again every session.
. "$(dirname "$0")/lib.sh"

LOW="pdb-low-$NS" HIGH="pdb-high-$NS"
make_nodes pdb 1 cpu=4
make_priority_class "$LOW" 10
make_priority_class "$HIGH" 1000
create <<PDB
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: keep-low}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: low}}
PDB
start_scheduler lahar
make_podgroup low 2 "" "" "$LOW"
make_pods low 2 cpu=2 priorityclass="$LOW" label=app:low

step "the low-priority gang, covered by the budget, fills the node"
wait_until 60 "low's 2 pods bound" bound_is 2 low-
wait_until 30 "low-0 and low-1 are Running" eval 'pod_phase_is low-0 Running && pod_phase_is low-1 Running'

step "a higher-priority gang arrives: the budget refuses the eviction and it waits"
make_podgroup urgent 2 "" "" "$HIGH"
make_pods urgent 2 cpu=2 priorityclass="$HIGH"
wait_until 10 "a Warning Event EvictionRefused on PodGroup urgent (a refusal is not retried like throttling)" has_event PodGroup urgent EvictionRefused
log "event: $(events PodGroup urgent | q '[get(e, "message") for e in items(o) if get(e, "reason") == "EvictionRefused"][:1]')"
check "an EvictionRefused Event on a pod of low" \
  eval 'has_event Pod low-0 EvictionRefused || has_event Pod low-1 EvictionRefused'
holds_for 5 "low keeps both pods and urgent stays unbound" eval 'bound_is 2 low- && bound_is 0 urgent-'
refused="$(metric lahar lahar_pod_evictions_refused_total)"
log "lahar_pod_evictions_refused_total: $refused"
assert_ge "${refused:-0}" 1 "the refusal is counted"
# 5 s at 200 ms per session: asking again every session would be 25 refusals per pod.
expect "the refused pods are not asked for again every session (at most 4 refusals)" \
  eval '[ "$(metric lahar lahar_pod_evictions_refused_total)" -le 4 ]'
check "no node is overcommitted" no_overcommit
