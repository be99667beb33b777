#!/usr/bin/env bash
# Writes the plain manifests under config/ from the Helm chart (deploy/helm/lahar), for users
# without Helm: `helm template lahar --namespace lahar-system` with the default values and the
# namespace created, one file per concern, and the chart's CRDs copied to config/crd/.
#
# Usage: hack/gen-manifests.sh [--check]
#   --check  write nothing; exit 1 naming each file of config/ that differs from the chart's
#            rendering (run by test/e2e/test_helm.sh).
# Helm comes from hack/build-control-plane.sh helm (built from Go modules once per machine).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CHART="$ROOT/deploy/helm/lahar"
CHECK=0
case "${1:-}" in
  --check) CHECK=1 ;;
  "") ;;
  *) echo "gen-manifests: unknown argument: $1 (usage: hack/gen-manifests.sh [--check])" >&2; exit 2 ;;
esac
HELM="${HELM:-$("$ROOT/hack/build-control-plane.sh" helm)}"

OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
mkdir -p "$OUT/crd"

# render FILE TEMPLATE...: the templates' documents, in that order, under a header.
render() {
  local file="$1" t args=()
  shift
  for t in "$@"; do args+=(--show-only "templates/$t"); done
  {
    echo "# Generated from the Helm chart deploy/helm/lahar by hack/gen-manifests.sh: edit the"
    echo "# chart and run it again, not this file. Installs into namespace lahar-system."
    "$HELM" template lahar "$CHART" --namespace lahar-system --set createNamespace=true "${args[@]}" |
      grep -v '^# Source: '
  } >"$OUT/$file"
}
render rbac.yaml namespace.yaml serviceaccount.yaml rbac.yaml
render deployment.yaml deployment.yaml service.yaml
render scheduler-configmap.yaml configmap.yaml
cp "$CHART"/crds/*.yaml "$OUT/crd/"

if [ "$CHECK" = 1 ]; then
  stale=0
  for f in rbac.yaml deployment.yaml scheduler-configmap.yaml $(cd "$OUT" && ls crd/*.yaml); do
    if ! cmp -s "$OUT/$f" "$ROOT/config/$f"; then
      echo "gen-manifests: config/$f is not what the chart renders (run hack/gen-manifests.sh)" >&2
      stale=1
    fi
  done
  for f in "$ROOT"/config/crd/*.yaml; do
    [ -f "$OUT/crd/$(basename "$f")" ] || { echo "gen-manifests: config/crd/$(basename "$f") is not in the chart's crds/" >&2; stale=1; }
  done
  [ "$stale" = 0 ] && echo "gen-manifests: config/ is in sync with deploy/helm/lahar"
  exit "$stale"
fi
cp "$OUT"/*.yaml "$ROOT/config/"
rm -f "$ROOT"/config/crd/*.yaml
cp "$OUT"/crd/*.yaml "$ROOT/config/crd/"
echo "gen-manifests: wrote config/rbac.yaml, config/deployment.yaml, config/scheduler-configmap.yaml, config/crd/"
