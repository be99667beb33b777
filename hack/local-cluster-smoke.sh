#!/usr/bin/env bash
# Smoke check of hack/local-cluster.sh: brings a cluster up in a scratch
# directory, talks to it with plain curl (token + CA from DIR/env), makes kwok
# play a fake node and its pods, checks that our own kwok Stage
# (hack/kwok/pod-complete-stage.yaml) completes an annotated pod, that nothing
# listens beyond 127.0.0.1, that a dying component is reported, and brings it
# down. Ends with "N passed, N failed"; exits non-zero if any check failed.
#
# Usage: hack/local-cluster-smoke.sh [DIR]   (default: a fresh mktemp -d,
#        removed again if every check passed)
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LC="$ROOT/hack/local-cluster.sh"
if [ $# -ge 1 ]; then
  DIR="$1"
  OWN_DIR=0
else
  DIR="$(mktemp -d "${TMPDIR:-/tmp}/lahar-smoke.XXXXXX")"
  OWN_DIR=1
fi
TIMEOUT="${LAHAR_SMOKE_TIMEOUT:-60}"
PASSED=0
FAILED=0

pass() { PASSED=$((PASSED + 1)); echo "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*"; }
check() { # check DESCRIPTION COMMAND...
  local what="$1"
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
finish() {
  "$LC" down "$DIR" >/dev/null 2>&1 || true
  # A scratch directory is removed when everything passed, kept (logs) otherwise.
  if [ "$FAILED" = 0 ] && [ "$OWN_DIR" = 1 ]; then rm -rf "$DIR"; fi
  [ "$FAILED" = 0 ] || echo "logs kept in $DIR"
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" = 0 ]
  exit $?
}

# --- up --------------------------------------------------------------------
t0=$(date +%s)
if KUBECONFIG_PATH="$("$LC" up "$DIR")"; then
  pass "local-cluster.sh up ($(( $(date +%s) - t0 ))s, kubeconfig $KUBECONFIG_PATH)"
else
  fail "local-cluster.sh up"
  finish
fi
check "kubeconfig written where up said" test -s "$KUBECONFIG_PATH"
# shellcheck disable=SC1091
. "$DIR/env"

api() { # api METHOD PATH [JSON] -> body, then the HTTP code on the last line
  local args=(-sS --max-time 20 --cacert "$LAHAR_API_CA" -H "Authorization: Bearer $LAHAR_API_TOKEN"
    -X "$1" -w '\n%{http_code}')
  [ $# -ge 3 ] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
  curl "${args[@]}" "$LAHAR_API_URL$2"
}
code_of() { tail -n 1 <<<"$1"; }
body_of() { sed '$d' <<<"$1"; }
# wait_until SECONDS COMMAND...: polls every 0.5 s.
wait_until() {
  local limit=$1 start
  shift
  start=$(date +%s)
  until "$@"; do
    [ $(( $(date +%s) - start )) -ge "$limit" ] && return 1
    sleep 0.5
  done
}

# --- API basics ------------------------------------------------------------
out="$(api GET /version)"
check "GET /version answers v1.34.x over TLS with the token ($(body_of "$out" | grep -o '"gitVersion": *"[^"]*"' | tr -d ' '))" \
  grep -q '"gitVersion": *"v1\.34\.' <<<"$out"
check "client-certificate auth (pki/admin.crt, O=system:masters)" \
  test "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$LAHAR_API_CA" --cert "$DIR/pki/admin.crt" \
    --key "$DIR/pki/admin.key" "$LAHAR_API_URL/api/v1/nodes")" = 200
code="$(curl -s -o /dev/null -w '%{http_code}' --cacert "$LAHAR_API_CA" "$LAHAR_API_URL/api/v1/nodes")"
check "anonymous request refused (HTTP $code)" test "$code" = 401 -o "$code" = 403
check "default namespace exists" test "$(code_of "$(api GET /api/v1/namespaces/default)")" = 200

# --- nothing listens beyond 127.0.0.1 --------------------------------------
# Listening TCP sockets of our components, from /proc (no ss/netstat needed).
listeners_ok() {
  local pid inodes="" bad=0 n=0 f
  for f in "$DIR"/etcd.pid "$DIR"/kube-apiserver.pid "$DIR"/kwok.pid; do
    pid="$(cat "$f")"
    inodes="$inodes $(find /proc/"$pid"/fd -maxdepth 1 -type l -printf '%l\n' 2>/dev/null |
      sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' | tr '\n' ' ')"
  done
  while read -r _ local _ st _ _ _ _ _ inode _; do
    [ "$st" = 0A ] || continue
    case " $inodes " in *" $inode "*) ;; *) continue ;; esac
    n=$((n + 1))
    case "${local%:*}" in
      0100007F | 00000000000000000000000001000000) ;;
      *) bad=$((bad + 1)); echo "  listening on non-loopback address ${local}" ;;
    esac
  done < <(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -v local_address)
  echo "  $n listening sockets of etcd, kube-apiserver, kwok"
  [ "$n" -ge 3 ] && [ "$bad" = 0 ]
}
check "etcd, kube-apiserver and kwok listen on 127.0.0.1 only" listeners_ok

# --- a kwok node -----------------------------------------------------------
NODE=lahar-smoke-node
node_json='{"apiVersion":"v1","kind":"Node","metadata":{"name":"'$NODE'",
  "annotations":{"kwok.x-k8s.io/node":"fake"},
  "labels":{"type":"kwok","kubernetes.io/hostname":"'$NODE'"}},
  "status":{"allocatable":{"cpu":"32","memory":"256Gi","pods":"110"},
            "capacity":{"cpu":"32","memory":"256Gi","pods":"110"}}}'
check "POST a Node annotated kwok.x-k8s.io/node=fake" \
  test "$(code_of "$(api POST /api/v1/nodes "$node_json")")" = 201
node_ready() { api GET "/api/v1/nodes/$NODE" | tr -d ' \n' | grep -q '"type":"Ready","status":"True"'; }
t0=$(date +%s)
check "kwok marks the node Ready" wait_until "$TIMEOUT" node_ready
echo "  (after $(( $(date +%s) - t0 ))s)"
other_json='{"apiVersion":"v1","kind":"Node","metadata":{"name":"lahar-smoke-unmanaged"}}'
api POST /api/v1/nodes "$other_json" >/dev/null
sleep 2
check "kwok leaves a node without the annotation alone" \
  bash -c '! grep -q "\"type\":\"Ready\"" <<<"$1"' _ "$(api GET /api/v1/nodes/lahar-smoke-unmanaged | tr -d ' \n')"

# --- pods on it ------------------------------------------------------------
pod_json() { # name [annotations-json]
  local ann="${2:-}"
  [ -n "$ann" ] || ann='{}'
  echo '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"'"$1"'","namespace":"default",
    "annotations":'"$ann"'},
    "spec":{"nodeName":"'$NODE'","containers":[{"name":"main","image":"lahar.sh/fake:1",
      "resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]}}'
}
pod_phase() { api GET "/api/v1/namespaces/default/pods/$1" | tr -d ' \n' | grep -o '"phase":"[A-Za-z]*"' | cut -d'"' -f4; }
phase_is() { [ "$(pod_phase "$1")" = "$2" ]; }

check "POST a pod bound to the node (spec.nodeName)" \
  test "$(code_of "$(api POST /api/v1/namespaces/default/pods "$(pod_json smoke-running)")")" = 201
t0=$(date +%s)
check "kwok runs it (phase Running)" wait_until "$TIMEOUT" phase_is smoke-running Running
echo "  (after $(( $(date +%s) - t0 ))s)"

check "POST a pod annotated lahar.sh/sim-duration=3s" \
  test "$(code_of "$(api POST /api/v1/namespaces/default/pods "$(pod_json smoke-done '{"lahar.sh/sim-duration":"3s"}')")")" = 201
check "it runs first" wait_until "$TIMEOUT" phase_is smoke-done Running
t0=$(date +%s)
check "our Stage completes it (phase Succeeded)" wait_until "$TIMEOUT" phase_is smoke-done Succeeded
dt=$(( $(date +%s) - t0 ))
check "not before its duration (${dt}s after Running, want >= 2s)" test "$dt" -ge 2
out="$(api GET /api/v1/namespaces/default/pods/smoke-done | tr -d ' \n')"
check "its container terminated with exit code 0, reason Completed" \
  grep -q '"terminated":{"exitCode":0,.*"reason":"Completed"' <<<"$out"
check "the pod without the annotation is still Running" phase_is smoke-running Running

check "DELETE the running pod" \
  test "$(code_of "$(api DELETE /api/v1/namespaces/default/pods/smoke-running)")" = 200
pod_gone() { [ "$(code_of "$(api GET /api/v1/namespaces/default/pods/smoke-running)")" = 404 ]; }
check "kwok finishes its deletion (no kubelet needed)" wait_until "$TIMEOUT" pod_gone

# --- down ------------------------------------------------------------------
pids="$(cat "$DIR"/*.pid 2>/dev/null)"
"$LC" down "$DIR" >/dev/null 2>&1
none_left() { local p; for p in $pids; do kill -0 "$p" 2>/dev/null && return 1; done; return 0; }
check "down stops etcd, kube-apiserver and kwok" none_left
check "the API is gone after down" \
  bash -c '! curl -s --max-time 3 --cacert "$1" "$2/readyz" >/dev/null' _ "$LAHAR_API_CA" "$LAHAR_API_URL"

# --- a component that dies is reported -------------------------------------
err="$(LAHAR_APISERVER_ARGS=--lahar-no-such-flag LAHAR_CLUSTER_TIMEOUT=60 "$LC" up "$DIR/broken" 2>&1 >/dev/null)"
rc=$?
echo "$err" | head -n 3 | sed 's/^/  /'
check "up fails when kube-apiserver dies" test "$rc" != 0
check "with a one-line error naming it and the tail of its log" \
  bash -c 'grep -q "^local-cluster: error: kube-apiserver exited" <<<"$1" && grep -q "^  | .*lahar-no-such-flag" <<<"$1"' _ "$err"
check "and leaves nothing running" bash -c '! "$1" status "$2" >/dev/null 2>&1 && ! ls "$2"/*.pid >/dev/null 2>&1' _ "$LC" "$DIR/broken"
"$LC" down "$DIR/broken" >/dev/null 2>&1

finish
