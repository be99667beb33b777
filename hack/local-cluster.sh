#!/usr/bin/env bash
# A real Kubernetes control plane on 127.0.0.1 for Lahar's e2e tests and
# benchmarks: etcd, kube-apiserver, and kwok playing the kubelets of nodes
# annotated `kwok.x-k8s.io/node: fake` (and the lifecycle of their pods).
#
# Usage: hack/local-cluster.sh up [DIR]    start; prints the kubeconfig path last
#        hack/local-cluster.sh down [DIR]  stop everything started in DIR
#        hack/local-cluster.sh status [DIR]
#        hack/local-cluster.sh restart-apiserver [DIR]  stop kube-apiserver and
#                                  start it again (same flags, port, etcd data)
#
# DIR defaults to $LAHAR_CLUSTER_DIR or ~/.cache/lahar/cluster. After `up` it
# holds: kubeconfig (token auth, CA embedded), env (shell assignments:
# LAHAR_API_URL, LAHAR_API_TOKEN, LAHAR_API_CA, LAHAR_KUBECONFIG, ports),
# kube-apiserver.cmd (its command line, NUL-separated, for restart-apiserver),
# pki/ (ca.crt, apiserver.crt, admin.crt/key with O=system:masters for
# client-certificate auth, sa.key/sa.pub), *.log, *.pid, etcd data.
#
# Binaries come from hack/build-control-plane.sh (built once per machine into
# ~/.cache/lahar/bin). Nothing listens on anything but 127.0.0.1.
#
# Environment:
#   LAHAR_CLUSTER_TIMEOUT   seconds to wait for each component (default 180)
#   LAHAR_AUTHZ_MODE        --authorization-mode (default RBAC)
#   LAHAR_APISERVER_ARGS    extra kube-apiserver flags (word-split)
#   LAHAR_KWOK_STAGES       kwok stage files, relative to kwok's kustomize/stage
#                           (default: node/fast/node-initialize.yaml and
#                           pod/fast/{pod-ready,pod-complete,pod-delete}.yaml);
#                           hack/kwok/*.yaml are always added.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${LAHAR_CACHE:-$HOME/.cache/lahar}"
CMD="${1:-}"
DIR="${2:-${LAHAR_CLUSTER_DIR:-$CACHE/cluster}}"
TIMEOUT="${LAHAR_CLUSTER_TIMEOUT:-180}"
case "$DIR" in /*) ;; *) DIR="$PWD/$DIR" ;; esac
COMPONENTS=(etcd kube-apiserver kwok)

say() { echo "local-cluster: $*" >&2; }
die() { echo "local-cluster: error: $*" >&2; exit 1; }

# pid of component $1 if it is running (and is the process we started).
alive_pid() {
  local f="$DIR/$1.pid" pid
  [ -f "$f" ] || return 1
  pid="$(cat "$f")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  # Guard against a recycled pid: the process must be ours, from this DIR.
  if [ -r "/proc/$pid/cmdline" ] && ! tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$DIR"; then
    return 1
  fi
  echo "$pid"
}

stop_all() {
  local c pid i
  for c in kwok kube-apiserver etcd; do
    if pid="$(alive_pid "$c")"; then
      kill "$pid" 2>/dev/null || true
      for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
      say "stopped $c (pid $pid)"
    fi
    rm -f "$DIR/$c.pid"
  done
}

# A port on 127.0.0.1 that nothing listens on and that we have not taken yet, below the
# kernel's ephemeral range: a port in it may be held by an outgoing connection, which the
# connect test below does not see but a listener's bind refuses.
TAKEN=" "
EPHEMERAL_LOW="$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)"
[ "${EPHEMERAL_LOW:-0}" -gt 12000 ] 2>/dev/null || EPHEMERAL_LOW=32768
free_port() {
  local p i
  for i in $(seq 1 200); do
    p=$((10000 + RANDOM % (EPHEMERAL_LOW - 10000)))
    case "$TAKEN" in *" $p "*) continue ;; esac
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      TAKEN="$TAKEN$p "
      echo "$p"
      return 0
    fi
  done
  die "no free port found on 127.0.0.1"
}

# Dies with a one-line error and the tail of the log if component $1 exited.
check_alive() {
  local c="$1"
  if ! alive_pid "$c" >/dev/null; then
    local code="" i
    for i in 1 2 3 4 5; do [ -f "$DIR/$c.exit" ] && break; sleep 0.2; done
    [ -f "$DIR/$c.exit" ] && code=" (exit code $(cat "$DIR/$c.exit"))"
    echo "local-cluster: error: $c exited during startup$code; last lines of $DIR/$c.log:" >&2
    tail -n 25 "$DIR/$c.log" 2>/dev/null | sed 's/^/  | /' >&2 || true
    stop_all
    exit 1
  fi
}

# wait_for COMPONENT DESCRIPTION COMMAND...: polls COMMAND until it succeeds.
wait_for() {
  local c="$1" what="$2" start
  shift 2
  start=$(date +%s)
  until "$@" >/dev/null 2>&1; do
    check_alive "$c"
    if [ $(( $(date +%s) - start )) -ge "$TIMEOUT" ]; then
      echo "local-cluster: error: $c not $what after ${TIMEOUT}s; last lines of $DIR/$c.log:" >&2
      tail -n 25 "$DIR/$c.log" 2>/dev/null | sed 's/^/  | /' >&2 || true
      stop_all
      exit 1
    fi
    sleep 0.5
  done
}

# start NAME CMD...: runs CMD in the background (own session), log and pid in DIR.
start() {
  local c="$1" i
  shift
  rm -f "$DIR/$c.exit" "$DIR/$c.pid"
  # A small wrapper records the component's pid (not its own) and exit code.
  setsid bash -c '"${@:2}" >>"$0/$1.log" 2>&1 & child=$!; echo $child >"$0/$1.pid.tmp"; mv "$0/$1.pid.tmp" "$0/$1.pid"; wait $child; echo $? >"$0/$1.exit"' \
    "$DIR" "$c" "$@" </dev/null >/dev/null 2>&1 &
  for i in $(seq 1 100); do
    [ -s "$DIR/$c.pid" ] && break
    sleep 0.1
  done
}

api_get() { # path -> body on stdout; fails on HTTP errors
  curl -sfS --max-time 10 --cacert "$DIR/pki/ca.crt" -H "Authorization: Bearer $TOKEN" \
    "https://127.0.0.1:$API_PORT$1"
}
readyz_ok() { [ "$(api_get /readyz)" = ok ]; }
etcd_ok() { curl -sf --max-time 5 "http://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"'; }
kwok_ok() { [ "$(curl -sf --max-time 5 "http://127.0.0.1:$KWOK_PORT/healthz")" = ok ]; }

gen_pki() {
  local pki="$DIR/pki"
  mkdir -p "$pki"
  (
    cd "$pki"
    exec 2>openssl.log
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
      -subj "/CN=lahar-local-ca" -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
    cat >apiserver.ext <<'EOF'
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.0.0.1
EOF
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver"
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile apiserver.ext -out apiserver.crt
    printf '%s\n' 'basicConstraints=CA:FALSE' 'keyUsage=critical,digitalSignature,keyEncipherment' \
      'extendedKeyUsage=clientAuth' >client.ext
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr -subj "/O=system:masters/CN=lahar-admin"
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile client.ext -out admin.crt
    openssl genrsa -out sa.key 2048
    openssl rsa -in sa.key -pubout -out sa.pub
    chmod 600 ./*.key
  ) || die "openssl failed; see $pki/openssl.log"
}

write_kubeconfig() {
  local ca
  ca="$(base64 <"$DIR/pki/ca.crt" | tr -d '\n')"
  cat >"$DIR/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: lahar-local
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $ca
users:
- name: admin
  user:
    token: $TOKEN
- name: admin-cert
  user:
    client-certificate: $DIR/pki/admin.crt
    client-key: $DIR/pki/admin.key
contexts:
- name: lahar-local
  context:
    cluster: lahar-local
    user: admin
- name: lahar-local-cert
  context:
    cluster: lahar-local
    user: admin-cert
current-context: lahar-local
EOF
  cat >"$DIR/env" <<EOF
LAHAR_KUBECONFIG=$DIR/kubeconfig
LAHAR_API_URL=https://127.0.0.1:$API_PORT
LAHAR_API_TOKEN=$TOKEN
LAHAR_API_CA=$DIR/pki/ca.crt
LAHAR_ETCD_URL=http://127.0.0.1:$ETCD_PORT
LAHAR_KWOK_URL=http://127.0.0.1:$KWOK_PORT
EOF
}

# Installs config/crd/*.yaml (one object per document), if that folder exists.
install_crds() {
  local crd_dir="$ROOT/config/crd" f doc names=() out name code
  if [ ! -d "$crd_dir" ]; then
    say "no $crd_dir yet: skipping CRDs"
    return 0
  fi
  local tmp="$DIR/crd-docs"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  for f in "$crd_dir"/*.yaml "$crd_dir"/*.yml; do
    [ -f "$f" ] || continue
    awk -v dir="$tmp" -v base="$(basename "$f")" '
      BEGIN { n = 0; out = sprintf("%s/%s.%03d", dir, base, n) }
      /^---[ \t]*$/ { n++; out = sprintf("%s/%s.%03d", dir, base, n); next }
      { print > out }' "$f"
  done
  for doc in "$tmp"/*; do
    [ -f "$doc" ] || continue
    grep -q '^kind:[[:space:]]*CustomResourceDefinition' "$doc" || continue
    out="$(curl -sS --max-time 30 --cacert "$DIR/pki/ca.crt" -H "Authorization: Bearer $TOKEN" \
      -H 'Content-Type: application/yaml' -X POST --data-binary "@$doc" -w '\n%{http_code}' \
      "https://127.0.0.1:$API_PORT/apis/apiextensions.k8s.io/v1/customresourcedefinitions")" ||
      die "cannot reach kube-apiserver to install $doc"
    code="${out##*$'\n'}"
    if [ "$code" != 201 ] && [ "$code" != 409 ]; then
      die "installing CRD from ${doc##*/} failed (HTTP $code): $(echo "${out%$'\n'*}" | grep -o '"message":"[^"]*"' | head -1)"
    fi
    name="$(echo "${out%$'\n'*}" | tr -d ' \n' | grep -o '"name":"[^"]*"' | head -1 | cut -d'"' -f4)" || true
    [ -n "$name" ] && names+=("$name")
  done
  for name in "${names[@]}"; do
    wait_for kube-apiserver "establishing CRD $name" crd_established "$name"
  done
  say "installed ${#names[@]} CRD(s) from $crd_dir"
}
crd_established() {
  api_get "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/$1" | tr -d ' \n' |
    grep -q '"type":"Established","status":"True"'
}

up() {
  local c
  for c in "${COMPONENTS[@]}"; do
    if alive_pid "$c" >/dev/null; then
      die "$c is already running from $DIR (run: $0 down $DIR)"
    fi
  done
  command -v openssl >/dev/null || die "openssl is required"
  command -v curl >/dev/null || die "curl is required"

  local bins
  bins="$("$ROOT/hack/build-control-plane.sh" --env kube-apiserver etcd kwok)" ||
    die "building the control plane failed (hack/build-control-plane.sh)"
  local KUBE_APISERVER ETCD KWOK KWOK_STAGE_DIR
  eval "$bins"

  umask 077
  mkdir -p "$DIR"
  DIR="$(cd "$DIR" && pwd)"
  # Whatever fails from here on (or an interrupt) stops what was started.
  UP_OK=0
  trap 'if [ "$UP_OK" != 1 ]; then stop_all; fi' EXIT
  trap 'exit 130' INT TERM
  rm -rf "$DIR/etcd-data" "$DIR/pki" "$DIR"/*.log "$DIR"/*.exit "$DIR/kubeconfig" "$DIR/env"

  ETCD_PORT="$(free_port)"
  ETCD_PEER_PORT="$(free_port)"
  API_PORT="$(free_port)"
  KWOK_PORT="$(free_port)"
  TOKEN="$(openssl rand -hex 24)"

  gen_pki
  printf '%s,lahar-admin,lahar-admin,"system:masters"\n' "$TOKEN" >"$DIR/pki/tokens.csv"

  say "starting etcd on 127.0.0.1:$ETCD_PORT"
  start etcd "$ETCD" \
    --name lahar-local \
    --data-dir "$DIR/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "lahar-local=http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster-state new \
    --unsafe-no-fsync \
    --log-level warn
  wait_for etcd healthy etcd_ok

  say "starting kube-apiserver on 127.0.0.1:$API_PORT"
  # The command line is kept in DIR so that restart-apiserver can run it again.
  # shellcheck disable=SC2086
  local api_cmd=("$KUBE_APISERVER" \
    --bind-address=127.0.0.1 \
    --secure-port="$API_PORT" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --cert-dir="$DIR/pki" \
    --tls-cert-file="$DIR/pki/apiserver.crt" \
    --tls-private-key-file="$DIR/pki/apiserver.key" \
    --client-ca-file="$DIR/pki/ca.crt" \
    --token-auth-file="$DIR/pki/tokens.csv" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$DIR/pki/sa.pub" \
    --service-account-signing-key-file="$DIR/pki/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 \
    --authorization-mode="${LAHAR_AUTHZ_MODE:-RBAC}" \
    --disable-admission-plugins=ServiceAccount,TaintNodesByCondition \
    --endpoint-reconciler-type=none \
    --profiling=false \
    ${LAHAR_APISERVER_ARGS:-})
  printf '%s\0' "${api_cmd[@]}" >"$DIR/kube-apiserver.cmd"
  start kube-apiserver "${api_cmd[@]}"
  wait_for kube-apiserver "ready (/readyz)" readyz_ok

  write_kubeconfig

  # kwok's own stages (shipped in its module) plus ours from hack/kwok/.
  local stages="$DIR/kwok-stages.yaml" s
  : >"$stages"
  for s in ${LAHAR_KWOK_STAGES:-node/fast/node-initialize.yaml pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml}; do
    [ -f "$KWOK_STAGE_DIR/$s" ] || die "kwok stage $KWOK_STAGE_DIR/$s not found"
    { echo "---"; cat "$KWOK_STAGE_DIR/$s"; echo; } >>"$stages"
  done
  local kwok_cfg=(-c "$stages")
  for s in "$ROOT"/hack/kwok/*.yaml; do
    [ -f "$s" ] && kwok_cfg+=(-c "$s")
  done

  say "starting kwok (health on 127.0.0.1:$KWOK_PORT)"
  start kwok "$KWOK" \
    --kubeconfig="$DIR/kubeconfig" \
    --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --server-address="127.0.0.1:$KWOK_PORT" \
    --node-ip=127.0.0.1 \
    --cidr=10.64.0.0/12 \
    "${kwok_cfg[@]}"
  wait_for kwok healthy kwok_ok

  install_crds

  for c in "${COMPONENTS[@]}"; do check_alive "$c"; done
  UP_OK=1
  say "up: API https://127.0.0.1:$API_PORT (token and CA in $DIR/env); stop with: $0 down $DIR"
  echo "$DIR/kubeconfig"
}

# Stops kube-apiserver and starts it again with the command line `up` used (same
# port, certificates and etcd), then waits for /readyz. etcd and kwok keep running.
restart_apiserver() {
  [ -f "$DIR/kube-apiserver.cmd" ] && [ -f "$DIR/env" ] ||
    die "no cluster started by '$0 up' in $DIR (kube-apiserver.cmd or env missing)"
  local cmd=() pid i LAHAR_API_URL="" LAHAR_API_TOKEN=""
  mapfile -d '' cmd <"$DIR/kube-apiserver.cmd"
  # shellcheck disable=SC1091
  . "$DIR/env"
  API_PORT="${LAHAR_API_URL##*:}"
  TOKEN="$LAHAR_API_TOKEN"
  if pid="$(alive_pid kube-apiserver)"; then
    # Its graceful shutdown waits on open watches for 15 s or more: 5 s, then KILL.
    kill "$pid" 2>/dev/null || true
    for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
    for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    say "stopped kube-apiserver (pid $pid)"
  else
    say "kube-apiserver was not running"
  fi
  rm -f "$DIR/kube-apiserver.pid"
  # The wrapper writes the exit file just after the process ends; let it, so
  # that it does not land after the new process started.
  for i in $(seq 1 20); do [ -f "$DIR/kube-apiserver.exit" ] && break; sleep 0.1; done
  say "starting kube-apiserver on 127.0.0.1:$API_PORT again"
  start kube-apiserver "${cmd[@]}"
  wait_for kube-apiserver "ready (/readyz)" readyz_ok
  say "kube-apiserver ready again (pid $(cat "$DIR/kube-apiserver.pid"))"
}

case "$CMD" in
  up) up ;;
  restart-apiserver)
    [ -d "$DIR" ] || die "no cluster directory $DIR"
    DIR="$(cd "$DIR" && pwd)"
    restart_apiserver
    ;;
  down)
    if [ -d "$DIR" ]; then
      DIR="$(cd "$DIR" && pwd)"
      stop_all
    fi
    say "down ($DIR)"
    ;;
  status)
    [ -d "$DIR" ] && DIR="$(cd "$DIR" && pwd)"
    rc=0
    for c in "${COMPONENTS[@]}"; do
      if pid="$(alive_pid "$c")"; then echo "$c running (pid $pid)"; else echo "$c stopped"; rc=1; fi
    done
    exit $rc
    ;;
  *) sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
