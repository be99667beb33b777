#!/usr/bin/env bash
# The Helm chart (deploy/helm/lahar) as users install it: helm lint passes; config/ is what the
# chart renders; its manifests with non-default values (schedulerName volcano, a ServiceMonitor)
# pass the apiserver's server-side dry run; `helm install` into the cluster creates every object,
# and Kubernetes' own controller manager and scheduler run the Deployment's two replicas on kwok
# nodes (Ready, on different nodes); `helm uninstall` removes them. Helm 4 from Go modules
# (hack/build-control-plane.sh helm); the chart is apiVersion v2, which Helm 3 reads as well.
. "$(dirname "$0")/lib.sh"

HELM="$("$ROOT/hack/build-control-plane.sh" helm)" || fail "could not build helm"
CHART="$ROOT/deploy/helm/lahar"
RELEASE="$NS"                 # cluster-scoped names (ClusterRole ...) are <release>-scheduler
FULL="$RELEASE-scheduler"
helm() { "$HELM" --kubeconfig "$LAHAR_KUBECONFIG" "$@"; }
test_cleanup() { helm uninstall "$RELEASE" --namespace "$NS" >/dev/null 2>&1 || true; }

step "helm lint --strict"
helm lint --strict "$CHART" >"$T/lint.log" 2>&1 || fail "helm lint failed:
$(cat "$T/lint.log")"
ok "$(tail -n 1 "$T/lint.log")"

step "config/ holds what the chart renders (hack/gen-manifests.sh --check)"
HELM="$HELM" "$ROOT/hack/gen-manifests.sh" --check >"$T/gen.log" 2>&1 || fail "config/ is out of date:
$(cat "$T/gen.log")"
ok "$(cat "$T/gen.log")"

step "rendered with schedulerName=volcano and a ServiceMonitor: what the values say, accepted by the apiserver (dry run)"
helm template "$RELEASE" "$CHART" --namespace "$NS" --set schedulerName=volcano \
  --set serviceMonitor.enabled=true --set replicas=3 >"$T/volcano.yaml" 2>"$T/template.err" ||
  fail "helm template failed: $(cat "$T/template.err")"
python3 - "$T/volcano.yaml" "$T/volcano.jsonl" "$T/volcano-summary.json" <<'PY'
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
with open(sys.argv[2], "w") as out:
    for d in docs:
        if d["kind"] != "ServiceMonitor":   # its CRD belongs to the prometheus-operator
            out.write(json.dumps(d) + "\n")
dep = next(d for d in docs if d["kind"] == "Deployment")
mon = next((d for d in docs if d["kind"] == "ServiceMonitor"), {})
json.dump({"kinds": sorted(d["kind"] for d in docs),
           "args": dep["spec"]["template"]["spec"]["containers"][0]["args"],
           "replicas": dep["spec"]["replicas"],
           "monitorPort": (mon.get("spec", {}).get("endpoints") or [{}])[0].get("port", "")},
          open(sys.argv[3], "w"))
PY
summary="$(cat "$T/volcano-summary.json")"
assert_eq "$(q '" ".join(o["kinds"])' <<<"$summary")" \
  "ClusterRole ClusterRoleBinding ConfigMap Deployment Role RoleBinding Service ServiceAccount ServiceMonitor" \
  "the kinds rendered (no Namespace unless createNamespace)"
assert_eq "$(q '"--scheduler-name=volcano" in o["args"]' <<<"$summary")" true "the scheduler takes Volcano's pods (--scheduler-name=volcano)"
assert_eq "$(q "\"--leader-elect-namespace=$NS\" in o[\"args\"]" <<<"$summary")" true "leader election in the release's namespace"
assert_eq "$(q 'o["replicas"]' <<<"$summary")" 3 "replicas from the values"
assert_eq "$(q 'o["monitorPort"]' <<<"$summary")" metrics "the ServiceMonitor scrapes the metrics port"
help="$("$LAHAR_SCHEDULER" --help)"
for flag in $(q '[a.split("=")[0] for a in o["args"]]' <<<"$summary"); do
  grep -qE -- "(^|[ ,])$flag([ ,]|$)" <<<"$help" || fail "the Deployment passes $flag, which lahar-scheduler --help does not list"
done
ok "every flag the Deployment passes is one lahar-scheduler knows"
python3 "$E2E/kube.py" post-many --dry-run <"$T/volcano.jsonl" >"$T/dry.log" 2>&1 ||
  fail "the apiserver refused a rendered object (server-side dry run): $(cat "$T/dry.log")"
ok "$(cat "$T/dry.log") objects accepted by a server-side dry run with strict field validation"

step "helm install: every object created; CRDs already present are left alone"
make_nodes helm 2 cpu=4
start_controller_manager deployment,replicaset
eval "$("$ROOT/hack/build-control-plane.sh" --env kube-scheduler)"
start_process kube-scheduler "$KUBE_SCHEDULER" --kubeconfig="$LAHAR_KUBECONFIG" \
  --authentication-kubeconfig="$LAHAR_KUBECONFIG" --authorization-kubeconfig="$LAHAR_KUBECONFIG" \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(free_port)" --cert-dir="$T/sched-certs"
crd_state() { get "$CRD_API/podgroups.scheduling.volcano.sh" | q 'get(o, "metadata.uid") + "/" + str(get(o, "metadata.generation"))'; }
crd_before="$(crd_state)"
helm install "$RELEASE" "$CHART" --namespace "$NS" --wait --timeout 120s >"$T/install.log" 2>&1 ||
  fail "helm install failed: $(cat "$T/install.log")"
ok "helm install $RELEASE: $(grep -m1 '^STATUS' "$T/install.log")"
assert_eq "$(crd_state)" "$crd_before" "the PodGroup CRD already installed is the same object, its spec unchanged (uid/generation)"
for path in "/api/v1/namespaces/$NS/serviceaccounts/$FULL" \
  "/apis/rbac.authorization.k8s.io/v1/clusterroles/$FULL" \
  "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/$FULL" \
  "/apis/rbac.authorization.k8s.io/v1/namespaces/$NS/roles/$FULL-leader-election" \
  "/apis/rbac.authorization.k8s.io/v1/namespaces/$NS/rolebindings/$FULL-leader-election" \
  "/api/v1/namespaces/$NS/configmaps/$FULL-config" \
  "/apis/apps/v1/namespaces/$NS/deployments/$FULL" \
  "/api/v1/namespaces/$NS/services/$FULL"; do
  get "$path" >/dev/null || fail "helm install did not create ${path##*/} ($path)"
done
ok "ServiceAccount, ClusterRole(Binding), Role(Binding), ConfigMap, Deployment and Service $FULL* exist"
assert_eq "$(get "/apis/apps/v1/namespaces/$NS/deployments/$FULL" | q 'get(o, "status.readyReplicas")')" 2 \
  "the Deployment has 2 ready replicas (helm install --wait)"
pods_json="$(get "$POD_API?labelSelector=app.kubernetes.io%2Finstance%3D$RELEASE")"
assert_eq "$(q 'sum(1 for p in items(o) if get(p, "status.phase") == "Running")' <<<"$pods_json")" 2 "2 scheduler pods Running (kwok)"
assert_eq "$(q 'len({get(p, "spec.nodeName") for p in items(o)})' <<<"$pods_json")" 2 "on 2 different nodes (anti-affinity)"
assert_eq "$(q 'all(get(p, "spec.serviceAccountName") == a[0] for p in items(o))' "$FULL" <<<"$pods_json")" true \
  "running as ServiceAccount $FULL"
conf="$(get "/api/v1/namespaces/$NS/configmaps/$FULL-config" | q 'o["data"]["volcano-scheduler.conf"]')"
assert_match "$conf" 'actions: "enqueue, allocate, preempt-elastic-workers, reclaim, preempt, elastic-scale, backfill"' \
  "the ConfigMap holds the default configuration"

step "helm uninstall removes what it installed"
helm uninstall "$RELEASE" --namespace "$NS" --wait --timeout 60s >"$T/uninstall.log" 2>&1 ||
  fail "helm uninstall failed: $(cat "$T/uninstall.log")"
gone() { ! api GET "$1" >/dev/null 2>&1; }
wait_until 30 "the Deployment is gone" gone "/apis/apps/v1/namespaces/$NS/deployments/$FULL"
wait_until 30 "the ClusterRole is gone" gone "/apis/rbac.authorization.k8s.io/v1/clusterroles/$FULL"
wait_until 30 "the ClusterRoleBinding is gone" gone "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/$FULL"
