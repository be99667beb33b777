#!/usr/bin/env bash
# Network topology (spec 3.3) on the real control plane: HyperNode objects created through the
# apiserver, watched by the daemon with plugin network-topology-aware enabled.
#  - On Lahar's HyperNode CRD (config/crd/): two tier-1 leaves of 4 kwok nodes; a hard tier-1
#    gang is bound inside one leaf. A HyperNode whose regex does not compile is logged and gets
#    one InvalidHyperNode Event (not one per session); a HyperNode that does not decode is
#    logged by name and skipped. A hard tier-2 gang too big for a leaf waits, naming the most
#    free leaf and the broken HyperNode, and is bound as soon as a spine holding both leaves is
#    created (no restart).
#  - On Volcano's HyperNode CRD, as Volcano installs it (../shared/fixtures): Lahar's CRD is
#    deleted under the running daemon, which goes on without HyperNodes; Volcano's CRD is then
#    installed and the daemon picks it up: a hard gang that waited for it is bound inside one
#    leaf. The exit trap puts Lahar's CRD back for the tests that follow.
. "$(dirname "$0")/lib.sh"

FIXTURES="$("$ROOT/hack/fixtures-dir.sh")/volcano" || fail "Volcano's fixtures not found"
VOLCANO_HN_CRD="$FIXTURES/crds/topology.volcano.sh_hypernodes.yaml"
LAHAR_HN_CRD="$ROOT/config/crd/topology.volcano.sh_hypernodes.yaml"
HN_CRD="$CRD_API/hypernodes.topology.volcano.sh"
[ -f "$VOLCANO_HN_CRD" ] || fail "Volcano's HyperNode CRD not found: $VOLCANO_HN_CRD"
[ -f "$LAHAR_HN_CRD" ] || fail "Lahar's HyperNode CRD not found: $LAHAR_HN_CRD (hack/gen-manifests.sh)"

# make_hypernode NAME TIER MEMBERS (a YAML flow sequence), labelled for cleanup.
make_hypernode() {
  create <<EOF
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata:
  name: $1
  labels: {$E2E_LABEL: $NS}
spec:
  tier: $2
  members: $3
EOF
}
make_leaves() {
  make_hypernode leaf-0 1 '[{type: Node, selector: {regexMatch: {pattern: "^l0-"}}}]'
  make_hypernode leaf-1 1 "[$(for i in 0 1 2 3; do printf '{type: Node, selector: {exactMatch: {name: l1-%s}}},' "$i"; done)]"
}
# make_hard_podgroup NAME MIN TIER: a PodGroup whose pods must share a HyperNode of tier <= TIER.
make_hard_podgroup() {
  create <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: $1
spec:
  minMember: $2
  networkTopology: {mode: hard, highestTierAllowed: $3}
EOF
}
# leaves_of PREFIX: the distinct leaves (l0, l1) of the nodes the pods PREFIX-* are bound to.
leaves_of() {
  get "$POD_API" | q '" ".join(sorted({get(p, "spec.nodeName").split("-")[0] for p in items(o) if name(p).startswith(a[0] + "-") and bound(p)}))' "$1"
}
in_one_leaf() { # PREFIX
  local leaves
  leaves="$(leaves_of "$1")"
  [ -n "$leaves" ] && [ "${leaves// /}" = "$leaves" ] || { echo "pods of $1 are on leaves: $leaves"; return 1; }
}
# hypernode_events NAME REASON: how many Events of REASON are about HyperNode NAME as it is now
# (its uid: Events outlive the objects they are about).
hypernode_events() {
  local uid
  uid="$(get "$HN_API/$1" | q 'get(o, "metadata.uid")')" || return 1
  events HyperNode "$1" all | q 'sum(1 for e in items(o) if get(e, "reason") == a[0] and get(e, "involvedObject.uid") == a[1])' "$2" "$uid"
}
has_hypernode_event() { [ "$(hypernode_events "$1" "$2")" -ge 1 ]; }
crd_absent() { ! api GET "$HN_CRD" >/dev/null 2>&1; }
test_diagnose() {
  echo "hypernodes of this test:"
  api GET "$HN_API?labelSelector=$E2E_LABEL%3D$NS" 2>&1 | dump hypernodes
}

# Lahar's CRD (config/crd/) installed, or put back over whatever is installed (PUT, keeping the
# objects; the exit trap deletes this test's): for the tests that follow, and for
# hack/check-manifests.sh, which compares the installed CRD with config/crd/.
LAHAR_CRD_BACK=1
restore_lahar_crd() {
  [ "$LAHAR_CRD_BACK" = 0 ] || return 0
  local installed="{}" body i
  crd_absent || installed="$(get "$HN_CRD")" || return 1
  body="$(python3 -c '
import json, sys, yaml
crd = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d)
version = json.loads(sys.argv[2]).get("metadata", {}).get("resourceVersion")
if version:
    crd["metadata"]["resourceVersion"] = version
print(json.dumps(crd))' "$LAHAR_HN_CRD" "$installed")" || return 1
  if [ "$installed" = "{}" ]; then
    api POST "$CRD_API" "$body" >/dev/null || return 1
  else
    api PUT "$HN_CRD" "$body" >/dev/null || return 1
  fi
  LAHAR_CRD_BACK=1
  for ((i = 0; i < 60; i++)); do
    crd_established hypernodes.topology.volcano.sh && return 0
    sleep 0.5
  done
  return 1
}
# Run by lib.sh's exit trap.
test_cleanup() { restore_lahar_crd || echo "could not put Lahar's HyperNode CRD back ($LAHAR_HN_CRD)"; }

# The default configuration (config/examples/elastic.conf) with the plugin added.
sed -e '/^ *- name: nodeorder$/a\  - name: network-topology-aware' "$ROOT/config/examples/elastic.conf" >"$T/topology.conf"
grep -q 'name: network-topology-aware' "$T/topology.conf" || fail "could not add the plugin to $T/topology.conf"

step "Lahar's HyperNode CRD: two leaves of 4 nodes, a hard tier-1 gang inside one"
# hack/local-cluster.sh installs config/crd/; a cluster from before it had this CRD gets it here.
if crd_absent; then
  LAHAR_CRD_BACK=0
  restore_lahar_crd || fail "could not install $LAHAR_HN_CRD"
fi
wait_until 30 "CRD hypernodes.topology.volcano.sh is Established" crd_established hypernodes.topology.volcano.sh
make_nodes l0 4 cpu=4
make_nodes l1 4 cpu=4
make_leaves
start_scheduler lahar --scheduler-conf="$T/topology.conf"
make_hard_podgroup compact 4 1
make_pods compact 4 cpu=1
wait_until 30 "all 4 pods of compact bound" bound_is 4 compact-
check "compact's pods are inside one leaf" in_one_leaf compact
log "compact is on leaf $(leaves_of compact)"

step "a broken HyperNode (a regex that does not compile): a log line and one Event, once"
make_hypernode broken 1 '[{type: Node, selector: {regexMatch: {pattern: "^n["}}}]'
wait_until 15 "a Warning Event InvalidHyperNode about HyperNode broken" has_hypernode_event broken InvalidHyperNode
log "event: $(events HyperNode broken all | q '[get(e, "type") + " " + get(e, "reason") + ": " + get(e, "message") for e in items(o)][-1]')"
check "the daemon logged it" grep -Eq 'W \[topology\] HyperNode broken: .*does not compile' "$T/lahar.log"
# The tier is beyond what Lahar reads (the schema has no maximum): logged by name and skipped.
make_hypernode too-high 2000000 '[{type: HyperNode, selector: {exactMatch: {name: leaf-0}}}]'
wait_until 15 "the daemon logged the HyperNode it cannot decode, by name" grep -q 'ignoring HyperNode too-high' "$T/lahar.log"
holds_for 2 "still one InvalidHyperNode Event and one log line (sessions every 200ms)" \
  eval '[ "$(hypernode_events broken InvalidHyperNode)" = 1 ] && [ "$(grep -c "HyperNode broken: " "$T/lahar.log")" = 1 ]'

step "a hard tier-2 gang too big for a leaf waits; the spine created under it starts it"
make_hard_podgroup wide 10 2
make_pods wide 10 cpu=2
wait_until 30 "PodGroup wide waits within one tier-2 hypernode" \
  pg_condition_matches wide Unschedulable 'within one tier-2 hypernode; the (most free|largest) is leaf-[01] with 16'
log "condition: $(pg_condition wide Unschedulable)"
expect "the reason names the broken HyperNode" pg_condition_matches wide Unschedulable 'HyperNode broken .*does not compile'
check "no pod of wide is bound" bound_is 0 wide-
make_hypernode spine 2 '[{type: HyperNode, selector: {exactMatch: {name: leaf-0}}}, {type: HyperNode, selector: {exactMatch: {name: leaf-1}}}]'
wait_until 30 "all 10 pods of wide bound once the spine exists (no restart)" bound_is 10 wide-
check "no node is overcommitted" no_overcommit
snapshot_hypernodes() { http lahar /debug/snapshot | q '" ".join(sorted(name(i) for i in items(o) if i.get("kind") == "HyperNode"))'; }
assert_eq "$(snapshot_hypernodes)" "broken leaf-0 leaf-1 spine" "the HyperNodes in /debug/snapshot (for lahar-sim)"

step "Volcano's HyperNode CRD, installed under the running daemon"
api DELETE "$POD_API?gracePeriodSeconds=0" >/dev/null
api DELETE "$PG_API" >/dev/null
LAHAR_CRD_BACK=0
api DELETE "$HN_CRD" >/dev/null || fail "could not delete Lahar's HyperNode CRD"
wait_until 30 "Lahar's HyperNode CRD is gone" crd_absent
wait_until 20 "the daemon goes on without HyperNodes" grep -q 'hypernodes: not served' "$T/lahar.log"
check "the daemon is running" scheduler_alive lahar
sed '/^---[ \t]*$/d' "$VOLCANO_HN_CRD" >"$T/volcano-hypernodes-crd.yaml"
install_crd "$T/volcano-hypernodes-crd.yaml"
assert_eq "$(get "$HN_CRD" | q 'get(o, "metadata.annotations").get("helm.sh/resource-policy", "")')" keep \
  "the installed CRD is Volcano's"
# 4 pods of 3 cpu on nodes of 4: one pod per node, all four nodes of one leaf.
make_hard_podgroup volcano 4 1
make_pods volcano 4 cpu=3
make_leaves
wait_until 30 "the daemon finds the CRD installed" grep -q 'hypernodes is served now' "$T/lahar.log"
wait_until 30 "all 4 pods of volcano bound" bound_is 4 volcano-
check "volcano's pods are inside one leaf" in_one_leaf volcano
log "volcano is on leaf $(leaves_of volcano)"
check "no node is overcommitted" no_overcommit
