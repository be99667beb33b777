#!/usr/bin/env bash
# Builds the binaries of Lahar's local test control plane from Go modules and
# caches them outside the work tree, keyed by version, so that only the first
# run on a machine pays:
#
#   kube-apiserver, kube-scheduler, from k8s.io/kubernetes      (hack/tools/k8s)
#   kube-controller-manager
#   etcd                            from go.etcd.io/etcd/server/v3 (hack/tools/etcd)
#   kwok                            from sigs.k8s.io/kwok/cmd/kwok (hack/tools/kwok)
#   helm                            from helm.sh/helm/v4/cmd/helm (hack/tools/helm)
#   training-operator               from github.com/kubeflow/training-operator
#                                   (hack/tools/training-operator), with its CRDs
#                                   into $LAHAR_CACHE/share/training-operator-<version>/crds/
#
# into $LAHAR_CACHE/bin/<name>-<version> (LAHAR_CACHE defaults to
# ~/.cache/lahar), plus kwok's stage files into
# $LAHAR_CACHE/share/kwok-<version>/stage/. The versions are read from the
# wrapper modules' go.mod files. The Go build and module caches live under
# $LAHAR_CACHE/go while building, removed once every tool is built.
#
# Usage: hack/build-control-plane.sh [--env] [NAME...]
#   NAME   any of kube-apiserver kube-scheduler kube-controller-manager etcd kwok helm
#          training-operator
#          (default: kube-apiserver kube-scheduler etcd kwok)
#   --env  print only shell assignments (KUBE_APISERVER=..., ETCD=..., KWOK=...,
#          KUBE_SCHEDULER=..., KUBE_CONTROLLER_MANAGER=..., KWOK_STAGE_DIR=..., HELM=...,
#          TRAINING_OPERATOR=...,
#          TRAINING_OPERATOR_CRDS=...), for eval; build output goes to stderr.
#
# LAHAR_GO_NICE=1 builds at nice 10 with GOMAXPROCS=1 and `go build -p 1`, for
# machines whose cores are shared.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/hack/tools"
CACHE="${LAHAR_CACHE:-$HOME/.cache/lahar}"
BIN="$CACHE/bin"

ENV_ONLY=0
NAMES=()
for a in "$@"; do
  case "$a" in
    --env) ENV_ONLY=1 ;;
    -h|--help) sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    kube-apiserver|kube-scheduler|kube-controller-manager|etcd|kwok|helm|training-operator) NAMES+=("$a") ;;
    *) echo "build-control-plane: unknown argument: $a" >&2; exit 2 ;;
  esac
done
[ ${#NAMES[@]} -gt 0 ] || NAMES=(kube-apiserver kube-scheduler etcd kwok)

log() { echo "build-control-plane: $*" >&2; }
die() { log "error: $*"; exit 1; }

# Version of MODULE required by the go.mod in DIR (not its replace lines).
modver() {
  awk -v m="$2" '
    /=>/ { next }
    { sub(/^require[ \t]+/, "") }
    $1 == m { print $2; exit }' "$1/go.mod"
}

K8S_VERSION="$(modver "$TOOLS/k8s" k8s.io/kubernetes)"
ETCD_VERSION="$(modver "$TOOLS/etcd" go.etcd.io/etcd/server/v3)"
KWOK_VERSION="$(modver "$TOOLS/kwok" sigs.k8s.io/kwok)"
HELM_VERSION="$(modver "$TOOLS/helm" helm.sh/helm/v4)"
OPERATOR_VERSION="$(modver "$TOOLS/training-operator" github.com/kubeflow/training-operator)"
[ -n "$K8S_VERSION" ] && [ -n "$ETCD_VERSION" ] && [ -n "$KWOK_VERSION" ] &&
  [ -n "$HELM_VERSION" ] && [ -n "$OPERATOR_VERSION" ] ||
  die "cannot read versions from $TOOLS/*/go.mod"

path_of() {
  case "$1" in
    kube-apiserver|kube-scheduler|kube-controller-manager) echo "$BIN/$1-$K8S_VERSION" ;;
    etcd) echo "$BIN/etcd-$ETCD_VERSION" ;;
    kwok) echo "$BIN/kwok-$KWOK_VERSION" ;;
    helm) echo "$BIN/helm-$HELM_VERSION" ;;
    training-operator) echo "$BIN/training-operator-$OPERATOR_VERSION" ;;
  esac
}
KWOK_STAGE_DIR="$CACHE/share/kwok-$KWOK_VERSION/stage"
OPERATOR_CRDS="$CACHE/share/training-operator-$OPERATOR_VERSION/crds"

need_build() {
  local n
  for n in "${NAMES[@]}"; do
    [ -x "$(path_of "$n")" ] || return 0
    if [ "$n" = kwok ] && [ ! -d "$KWOK_STAGE_DIR/pod" ]; then return 0; fi
    if [ "$n" = training-operator ] && [ ! -d "$OPERATOR_CRDS" ]; then return 0; fi
  done
  return 1
}

if need_build; then
  command -v go >/dev/null || die "go is not installed (needed once to build the control plane into $BIN)"
  mkdir -p "$BIN" "$CACHE/go/build" "$CACHE/go/mod" "$CACHE/share"
  export GOCACHE="$CACHE/go/build" GOMODCACHE="$CACHE/go/mod"
  export GOFLAGS="-mod=mod -buildvcs=false"
  # The Go checksum database answers 404 for some k8s.io/kubernetes v1.34
  # patches; hack/tools/k8s/go.sum pins that module's hash instead, and the
  # go command still checks the download against it.
  export GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}k8s.io/kubernetes"
  NICE=()
  PFLAG=()
  if [ "${LAHAR_GO_NICE:-0}" = 1 ]; then
    NICE=(nice -n 10)
    PFLAG=(-p 1)
    export GOMAXPROCS=1
  fi

  # One build at a time per cache (parallel test runs share it).
  exec 9>"$CACHE/.build.lock"
  if command -v flock >/dev/null; then flock 9; fi

  # go build MODDIR NAME PKG [LDFLAGS]: builds PKG into $BIN/NAME-VERSION.
  gobuild() {
    local dir="$1" name="$2" pkg="$3" ld="${4:-}" out t0 t1
    out="$(path_of "$name")"
    if [ -x "$out" ]; then return 0; fi
    log "building $name -> $out (first run on this machine: this takes a while)"
    t0=$(date +%s)
    (cd "$dir" && "${NICE[@]}" go build "${PFLAG[@]}" -trimpath -ldflags "-s -w $ld" -o "$out.tmp.$$" "$pkg") >&2 ||
      { rm -f "$out.tmp.$$"; die "go build $pkg failed"; }
    mv -f "$out.tmp.$$" "$out"
    t1=$(date +%s)
    log "built $name in $((t1 - t0))s"
  }

  # copy_from_module MODDIR MODULE SUBDIR DEST: files shipped in a module, copied out of the
  # read-only module cache.
  copy_from_module() {
    local src
    src="$(cd "$1" && go list -m -f '{{.Dir}}' "$2")/$3"
    [ -d "$src" ] || die "$3 not found in module $2 ($src)"
    rm -rf "$4.tmp.$$"
    mkdir -p "$4.tmp.$$"
    cp -R "$src/." "$4.tmp.$$/"
    chmod -R u+w "$4.tmp.$$"
    rm -rf "$4"
    mv "$4.tmp.$$" "$4"
  }

  K8S_LD="-X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
  K8S_LD+=" -X k8s.io/component-base/version.gitMajor=$(echo "$K8S_VERSION" | sed -E 's/^v([0-9]+)\..*/\1/')"
  K8S_LD+=" -X k8s.io/component-base/version.gitMinor=$(echo "$K8S_VERSION" | sed -E 's/^v[0-9]+\.([0-9]+)\..*/\1/')"
  K8S_LD+=" -X k8s.io/component-base/version.gitTreeState=clean"

  for n in "${NAMES[@]}"; do
    case "$n" in
      kube-apiserver) gobuild "$TOOLS/k8s" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$K8S_LD" ;;
      kube-scheduler) gobuild "$TOOLS/k8s" kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$K8S_LD" ;;
      kube-controller-manager)
        gobuild "$TOOLS/k8s" kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$K8S_LD" ;;
      etcd) gobuild "$TOOLS/etcd" etcd go.etcd.io/etcd/server/v3 ;;
      kwok)
        gobuild "$TOOLS/kwok" kwok sigs.k8s.io/kwok/cmd/kwok
        [ -d "$KWOK_STAGE_DIR/pod" ] || copy_from_module "$TOOLS/kwok" sigs.k8s.io/kwok kustomize/stage "$KWOK_STAGE_DIR"
        ;;
      helm) gobuild "$TOOLS/helm" helm helm.sh/helm/v4/cmd/helm "-X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" ;;
      training-operator)
        gobuild "$TOOLS/training-operator" training-operator github.com/kubeflow/training-operator/cmd/training-operator.v1
        [ -d "$OPERATOR_CRDS" ] ||
          copy_from_module "$TOOLS/training-operator" github.com/kubeflow/training-operator manifests/base/crds "$OPERATOR_CRDS"
        ;;
    esac
  done
fi

# The binaries and copied files are what is kept. Go's build and module caches (7 GB for all
# seven tools) would only fill the disk: a CI run once failed for want of it. Once every tool is
# built they go (a version bump downloads and builds again); LAHAR_KEEP_GO_CACHE=1 keeps them.
all_built=1
for n in kube-apiserver kube-scheduler kube-controller-manager etcd kwok helm training-operator; do
  [ -x "$(path_of "$n")" ] || all_built=0
done
[ -d "$KWOK_STAGE_DIR/pod" ] && [ -d "$OPERATOR_CRDS" ] || all_built=0
if [ "$all_built" = 1 ] && [ -d "$CACHE/go" ] && [ "${LAHAR_KEEP_GO_CACHE:-0}" != 1 ]; then
  log "every tool is built: removing Go's build and module caches ($(du -sh "$CACHE/go" | cut -f1))"
  chmod -R u+w "$CACHE/go" 2>/dev/null || true  # the module cache is read-only
  rm -rf "$CACHE/go" || log "warning: could not remove $CACHE/go"
fi

for n in "${NAMES[@]}"; do
  var="$(echo "$n" | tr 'a-z-' 'A-Z_')"
  if [ "$ENV_ONLY" = 1 ]; then
    printf '%s=%q\n' "$var" "$(path_of "$n")"
  else
    echo "$(path_of "$n")"
  fi
done
if [[ " ${NAMES[*]} " == *" kwok "* ]]; then
  if [ "$ENV_ONLY" = 1 ]; then printf 'KWOK_STAGE_DIR=%q\n' "$KWOK_STAGE_DIR"; else echo "$KWOK_STAGE_DIR"; fi
fi
if [[ " ${NAMES[*]} " == *" training-operator "* ]]; then
  if [ "$ENV_ONLY" = 1 ]; then printf 'TRAINING_OPERATOR_CRDS=%q\n' "$OPERATOR_CRDS"; else echo "$OPERATOR_CRDS"; fi
fi
