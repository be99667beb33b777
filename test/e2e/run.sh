#!/usr/bin/env bash
# Lahar's end-to-end tests: build/bin/lahar-scheduler against a real control plane
# (kube-apiserver + etcd + kwok playing the nodes, from hack/local-cluster.sh; no mocks).
#
# Usage: test/e2e/run.sh [test_x.sh ...]     (default: every test/e2e/test_*.sh)
#
# Brings a cluster up in a fresh directory under ${LAHAR_E2E_DIR:-~/.cache/lahar/e2e}, runs each
# test in its own namespace (and its own directory for logs), prints PASS/FAIL with the duration
# per test and the failing test's output, tears the cluster down, exits 1 if any test failed.
# The run's directory is removed when every test passed, kept (logs) otherwise.
#
# Environment:
#   LAHAR_SCHEDULER        the daemon (default build/bin/lahar-scheduler)
#   LAHAR_E2E_DIR          where runs go (default ~/.cache/lahar/e2e)
#   LAHAR_E2E_TIMEOUT      seconds per test before it is killed (default 240)
#   LAHAR_E2E_KEEP=1       keep the run directory even when everything passed
#   LAHAR_E2E_VERBOSE=1    show each test's output as it runs
#   LAHAR_E2E_VERBOSITY    the schedulers' -v (default 2)
set -uo pipefail

E2E="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$E2E/../.." && pwd)"
LC="$ROOT/hack/local-cluster.sh"
export LAHAR_SCHEDULER="${LAHAR_SCHEDULER:-$ROOT/build/bin/lahar-scheduler}"
TIMEOUT="${LAHAR_E2E_TIMEOUT:-240}"

die() { echo "e2e: error: $*" >&2; exit 2; }

[ -x "$LAHAR_SCHEDULER" ] || die "$LAHAR_SCHEDULER not found (or not executable): build the daemon first"
command -v curl >/dev/null || die "curl is required"
command -v python3 >/dev/null || die "python3 is required"

# The tests to run.
TESTS=()
if [ $# -gt 0 ]; then
  for arg in "$@"; do
    t="$(basename "$arg")"
    [ -f "$E2E/$t" ] || t="test_${t#test_}"
    [ -f "$E2E/$t" ] || t="${t%.sh}.sh"
    [ -f "$E2E/$t" ] || die "no test $arg in $E2E (see test/e2e/test_*.sh)"
    TESTS+=("$t")
  done
else
  for t in "$E2E"/test_*.sh; do TESTS+=("$(basename "$t")"); done
fi

BASE="${LAHAR_E2E_DIR:-$HOME/.cache/lahar/e2e}"
RUN="$BASE/run-$(date +%Y%m%d-%H%M%S)-$$"
CLUSTER="$RUN/cluster"
mkdir -p "$RUN" || die "cannot create $RUN"
RUN="$(cd "$RUN" && pwd)"
CLUSTER="$RUN/cluster"

api() { # METHOD PATH [JSON]: quiet; status 0 on HTTP < 400
  local args=(-sS -o /dev/null -w '%{http_code}' --max-time 30 --cacert "$LAHAR_API_CA"
    -H "Authorization: Bearer $LAHAR_API_TOKEN" -X "$1")
  [ $# -ge 3 ] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
  local code
  code="$(curl "${args[@]}" "$LAHAR_API_URL$2" 2>/dev/null)" || return 1
  [ "$code" -lt 400 ]
}

FAILED=()
finish() {
  local rc=$?
  trap - EXIT INT TERM
  "$LC" down "$CLUSTER" >"$RUN/cluster-down.log" 2>&1 || true
  if [ ${#FAILED[@]} -eq 0 ] && [ "$rc" = 0 ] && [ "${LAHAR_E2E_KEEP:-0}" != 1 ]; then
    rm -rf "$RUN"
  else
    echo "logs: $RUN"
  fi
  exit "$rc"
}
trap finish EXIT
TEST_PID=""
interrupted() {
  echo "e2e: interrupted"
  # The running test (under timeout, in its own process group) cleans up on TERM.
  if [ -n "$TEST_PID" ]; then
    kill -TERM "$TEST_PID" 2>/dev/null
    wait "$TEST_PID" 2>/dev/null
    sweep "$dir"
  fi
  FAILED+=(interrupted)
  exit 130
}
trap interrupted INT TERM

# --- the cluster -----------------------------------------------------------------------------
t0=$SECONDS
# Everything the tests run, built once per machine (and first, so that no test's time limit
# includes a Go build): the control plane, Kubernetes' controller manager and scheduler (the
# Helm test runs the chart's Deployment), Helm, Kubeflow's training-operator.
echo "e2e: building (first run on a machine) or finding the tools in ${LAHAR_CACHE:-$HOME/.cache/lahar}/bin"
if ! "$ROOT/hack/build-control-plane.sh" kube-apiserver etcd kwok kube-scheduler kube-controller-manager \
  helm training-operator >"$RUN/tools.log" 2>&1; then
  echo "e2e: error: hack/build-control-plane.sh failed; its output:" >&2
  tail -n 40 "$RUN/tools.log" | sed 's/^/  | /' >&2
  FAILED+=(tools)
  exit 1
fi
echo "e2e: tools ready in $((SECONDS - t0))s"
echo "e2e: bringing a cluster up in $CLUSTER"
if ! "$LC" up "$CLUSTER" >"$RUN/cluster-up.log" 2>&1; then
  echo "e2e: error: hack/local-cluster.sh up failed; its output:" >&2
  sed 's/^/  | /' "$RUN/cluster-up.log" >&2
  FAILED+=(cluster)
  exit 1
fi
# shellcheck disable=SC1091
. "$CLUSTER/env"
export LAHAR_API_URL LAHAR_API_TOKEN LAHAR_API_CA
echo "e2e: cluster up in $((SECONDS - t0))s ($LAHAR_API_URL); scheduler $LAHAR_SCHEDULER"

# --- the tests -------------------------------------------------------------------------------
# Anything a test left behind (its trap normally removes it): schedulers, nodes, queues,
# HyperNodes.
sweep() {
  local dir="$1" f pid
  for f in "$dir"/*.pid; do
    [ -f "$f" ] || continue
    pid="$(cat "$f")"
    if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "lahar-scheduler"; then
      echo "  (killing scheduler pid $pid left by the test)"
      kill -9 "$pid" 2>/dev/null
    fi
    rm -f "$f"
  done
  api DELETE "/api/v1/nodes?labelSelector=lahar.sh%2Fe2e" || true
  api DELETE "/apis/scheduling.volcano.sh/v1beta1/queues?labelSelector=lahar.sh%2Fe2e" || true
  api DELETE "/apis/topology.volcano.sh/v1alpha1/hypernodes?labelSelector=lahar.sh%2Fe2e" || true
}

PASSED=0
for t in "${TESTS[@]}"; do
  name="${t%.sh}"
  short="$(echo "${name#test_}" | tr '_A-Z' '-a-z' | cut -c1-40)"
  ns="e2e-$short-$(printf '%04x' $((RANDOM % 65536)))"
  dir="$RUN/$name"
  mkdir -p "$dir"
  if ! api POST /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}"; then
    echo "FAIL  $name (could not create namespace $ns)"
    FAILED+=("$name")
    continue
  fi
  start=$SECONDS
  # In the background so that an interrupt reaches the trap above at once.
  if [ "${LAHAR_E2E_VERBOSE:-0}" = 1 ]; then
    E2E_CLUSTER="$CLUSTER" NS="$ns" T="$dir" timeout -k 10 "$TIMEOUT" bash "$E2E/$t" > >(tee "$dir/output.log") 2>&1 &
  else
    E2E_CLUSTER="$CLUSTER" NS="$ns" T="$dir" timeout -k 10 "$TIMEOUT" bash "$E2E/$t" >"$dir/output.log" 2>&1 &
  fi
  TEST_PID=$!
  wait "$TEST_PID"
  rc=$?
  TEST_PID=""
  took=$((SECONDS - start))
  [ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "FAIL: killed after ${TIMEOUT}s (LAHAR_E2E_TIMEOUT)" >>"$dir/output.log"
  sweep "$dir"
  if [ "$rc" = 0 ]; then
    printf 'PASS  %-28s %4ss\n' "$name" "$took"
    PASSED=$((PASSED + 1))
  else
    printf 'FAIL  %-28s %4ss   (namespace %s, logs in %s)\n' "$name" "$took" "$ns" "$dir"
    FAILED+=("$name")
    if [ "${LAHAR_E2E_VERBOSE:-0}" != 1 ]; then
      # The failure and its diagnostics, preceded by the steps that led there.
      python3 - "$dir/output.log" <<'EOF'
import sys
lines = open(sys.argv[1], errors="replace").read().splitlines()
fail_at = next((i for i, l in enumerate(lines) if l.startswith("FAIL: ")), None)
if fail_at is None:
    shown = lines[-60:]
else:
    shown = lines[max(0, fail_at - 12):fail_at + 150]
for l in shown:
    print("    " + l[:400])
EOF
    fi
  fi
done

echo
echo "e2e: ${PASSED} passed, ${#FAILED[@]} failed${FAILED[*]:+ (${FAILED[*]})} in $((SECONDS - t0))s"
[ ${#FAILED[@]} -eq 0 ]
