# Helpers for Lahar's end-to-end tests; every test/e2e/test_*.sh sources this file.
#
# test/e2e/run.sh runs each test with:
#   E2E_CLUSTER  the cluster directory of `hack/local-cluster.sh up` (its env file gives
#                LAHAR_API_URL, LAHAR_API_TOKEN, LAHAR_API_CA, LAHAR_KUBECONFIG)
#   NS           the test's own namespace (created by run.sh)
#   T            the test's own directory (scheduler logs, scratch files)
#
# Nodes, Queues and HyperNodes are cluster-scoped: the helpers label them lahar.sh/e2e=$NS, and
# the exit trap deletes them, every pod and PodGroup of $NS, and stops the schedulers the test
# started. A test may define test_cleanup (run by the exit trap) and test_diagnose (more
# diagnostics after a failure).
# Anything that fails (fail, a check, a wait_until timeout, an API error) ends the test with a
# message and a dump of the schedulers' logs and the test's objects.
set -euo pipefail
set -o errtrace

E2E="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$E2E/../.." && pwd)"
: "${E2E_CLUSTER:?run the tests through test/e2e/run.sh}" "${NS:?}" "${T:?}"
# shellcheck disable=SC1091
. "$E2E_CLUSTER/env"
export LAHAR_API_URL LAHAR_API_TOKEN LAHAR_API_CA NS
LAHAR_SCHEDULER="${LAHAR_SCHEDULER:-$ROOT/build/bin/lahar-scheduler}"
E2E_LABEL=lahar.sh/e2e
POD_API=/api/v1/namespaces/$NS/pods
PG_API=/apis/scheduling.volcano.sh/v1beta1/namespaces/$NS/podgroups
Q_API=/apis/scheduling.volcano.sh/v1beta1/queues
HN_API=/apis/topology.volcano.sh/v1alpha1/hypernodes
NODE_API=/api/v1/nodes
mkdir -p "$T"

log() { echo "[$(date +%H:%M:%S)] $*"; }
step() { echo; log "== $*"; }

# --- failing ---------------------------------------------------------------------------------
REPORTED=0
LAST_ERR=""
EXPECT_FAILED=()
trap 'LAST_ERR="line $LINENO: $BASH_COMMAND"' ERR

# fail MESSAGE: ends the test with MESSAGE and the diagnostics.
fail() {
  echo
  echo "FAIL: $*"
  if [ ${#EXPECT_FAILED[@]} -gt 0 ]; then
    echo "(and earlier, expectations not met:"
    printf '  - %s\n' "${EXPECT_FAILED[@]}"
    echo ")"
  fi
  REPORTED=1
  diagnose
  exit 1
}

# diagnose: schedulers' log tails and the state of the test's objects.
diagnose() {
  local s
  echo "---------------- diagnostics (namespace $NS, logs in $T) ----------------"
  for s in "${!SCHED_PID[@]}"; do
    echo "scheduler $s (pid ${SCHED_PID[$s]}, port ${SCHED_PORT[$s]}, $(scheduler_alive "$s" && echo running || echo "not running")): end of $T/$s.log (repeated lines counted)"
    log_tail "$T/$s.log" 40
  done
  for s in "${!PROC_PID[@]}"; do
    echo "$s (pid ${PROC_PID[$s]}, $(kill -0 "${PROC_PID[$s]}" 2>/dev/null && echo running || echo "not running")): end of $T/$s.log"
    log_tail "$T/$s.log" 25
  done
  echo "pods of $NS:"
  api GET "$POD_API" 2>&1 | dump pods | head -n 60
  echo "podgroups of $NS:"
  api GET "$PG_API" 2>&1 | dump podgroups | head -n 40
  echo "queues of this test:"
  api GET "$Q_API?labelSelector=$E2E_LABEL%3D$NS" 2>&1 | dump queues
  echo "nodes of this test:"
  api GET "$NODE_API?labelSelector=$E2E_LABEL%3D$NS" 2>&1 | dump nodes | head -n 30
  echo "events of $NS (last 25):"
  api GET "/api/v1/namespaces/$NS/events" 2>&1 | dump events
  [ "$(type -t test_diagnose)" = function ] && test_diagnose
  echo "--------------------------------------------------------------------------"
}
dump() { python3 "$E2E/kube.py" dump "$1" 2>&1 || true; }
# log_tail FILE N: the last N lines of FILE after collapsing runs of identical lines.
log_tail() {
  awk 'function out() { if (n > 1) printf "  | (%d times) %s\n", n, prev; else if (n) printf "  | %s\n", prev }
    $0 == prev { n++; next } { out(); prev = $0; n = 1 } END { out() }' "$1" 2>/dev/null | tail -n "$2" | cut -c1-400
}

# --- assertions ------------------------------------------------------------------------------
ok() { log "ok: $*"; }

# check DESCRIPTION COMMAND...: COMMAND must succeed (its output is shown if it does not).
check() {
  local what="$1" out
  shift
  if out="$("$@" 2>&1)"; then ok "$what"; else fail "$what${out:+
  $out}"; fi
}
# expect DESCRIPTION COMMAND...: like check, but the test goes on when COMMAND fails, and fails
# at its end (for details such as the wording of a message, so one run shows them all).
expect() {
  local what="$1" out
  shift
  if out="$("$@" 2>&1)"; then
    ok "$what"
  else
    EXPECT_FAILED+=("$what")
    log "FAILED (the test goes on): $what${out:+: $out}"
  fi
}
# check_not DESCRIPTION COMMAND...: COMMAND must fail.
check_not() {
  local what="$1"
  shift
  if "$@" >/dev/null 2>&1; then fail "$what"; else ok "$what"; fi
}
assert_eq() { # ACTUAL EXPECTED DESCRIPTION
  [ "$1" = "$2" ] || fail "$3: got '$1', want '$2'"
  ok "$3 ($1)"
}
assert_ge() { # ACTUAL MIN DESCRIPTION (numbers; empty counts as 0)
  awk -v a="${1:-0}" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }' || fail "$3: got '${1:-<absent>}', want >= $2"
  ok "$3 (${1:-0})"
}
assert_match() { # TEXT EXTENDED-REGEX DESCRIPTION (case-insensitive)
  grep -Eiq -- "$2" <<<"$1" || fail "$3: '$1' does not match /$2/"
  ok "$3"
}

# wait_until TIMEOUT DESCRIPTION COMMAND...: polls COMMAND (every 0.5 s) until it succeeds;
# fails the test after TIMEOUT seconds, or at once if a scheduler the test started has died.
wait_until() {
  local limit="$1" what="$2" start=$SECONDS s
  shift 2
  until "$@" >/dev/null 2>&1; do
    for s in "${!SCHED_PID[@]}"; do
      scheduler_alive "$s" || fail "scheduler $s exited ($(scheduler_exit "$s")) while waiting for: $what"
    done
    if [ $((SECONDS - start)) -ge "$limit" ]; then
      fail "timed out after ${limit}s waiting for: $what"
    fi
    sleep 0.5
  done
  ok "$what (after $((SECONDS - start))s)"
}

# holds_for SECONDS DESCRIPTION COMMAND...: COMMAND keeps succeeding for SECONDS.
holds_for() {
  local secs="$1" what="$2" start=$SECONDS out
  shift 2
  while [ $((SECONDS - start)) -lt "$secs" ]; do
    out="$("$@" 2>&1)" || fail "$what: no longer true after $((SECONDS - start))s${out:+
  $out}"
    sleep 0.5
  done
  ok "$what (for ${secs}s)"
}

# --- the API ---------------------------------------------------------------------------------
# api METHOD PATH [BODY [CONTENT-TYPE]]: the response body on stdout; on HTTP >= 400 the
# apiserver's message on stderr and status 1.
api() {
  local method="$1" path="$2" out code
  local args=(-sS --max-time 30 --cacert "$LAHAR_API_CA" -H "Authorization: Bearer $LAHAR_API_TOKEN"
    -H 'Accept: application/json' -X "$method" -w '\n%{http_code}')
  [ $# -ge 3 ] && args+=(-H "Content-Type: ${4:-application/json}" --data-binary "$3")
  if ! out="$(curl "${args[@]}" "$LAHAR_API_URL$path" 2>&1)"; then
    echo "e2e: $method $path: ${out##*$'\n'}" >&2
    return 1
  fi
  code="${out##*$'\n'}"
  out="${out%$'\n'*}"
  if [ "$code" -ge 400 ]; then
    echo "e2e: $method $path: HTTP $code: $(q 'o.get("message", o)' <<<"$out" 2>/dev/null || head -c 300 <<<"$out")" >&2
    return 1
  fi
  printf '%s\n' "$out"
}
get() { api GET "$1"; }
delete() { api DELETE "$1" >/dev/null; }
patch() { api PATCH "$1" "$2" "${3:-application/merge-patch+json}" >/dev/null; }

# q EXPR [ARG...]: a Python expression on the JSON on stdin (`o`; ARGs in `a`; helpers get,
# cond, qty, bound, name, items from kube.py).
q() { python3 "$E2E/kube.py" q "$@"; }

# create <<EOF ... EOF: creates the YAML object on stdin (in $NS when namespaced). Nodes and
# Queues made this way should carry the label lahar.sh/e2e: $NS so that they are cleaned up.
create() {
  local body kind
  body="$(cat)"
  kind="$(sed -n 's/^kind:[[:space:]]*\([A-Za-z]*\).*/\1/p' <<<"$body" | head -n 1)"
  api POST "$(collection "$kind")" "$body" application/yaml >/dev/null || fail "could not create this $kind:
$body"
}
collection() {
  case "$1" in
    Node) echo "$NODE_API" ;;
    Pod) echo "$POD_API" ;;
    PodGroup) echo "$PG_API" ;;
    Queue) echo "$Q_API" ;;
    HyperNode) echo "$HN_API" ;;
    ConfigMap) echo "/api/v1/namespaces/$NS/configmaps" ;;
    PriorityClass) echo /apis/scheduling.k8s.io/v1/priorityclasses ;;
    PyTorchJob) echo "$PTJ_API" ;;
    PodDisruptionBudget) echo "/apis/policy/v1/namespaces/$NS/poddisruptionbudgets" ;;
    *) fail "create: kind '$1' unknown to lib.sh" ;;
  esac
}
# post_many FILE: creates the JSON objects in FILE (one a line) over one connection.
post_many() { python3 "$E2E/kube.py" post-many <"$1" >/dev/null || fail "creating the objects of $1 failed (see above)"; }

# elastic_conf ACTIONS: writes $T/volcano-scheduler.conf, the default plugins running ACTIONS
# with elastic.cooldown 0s so that no step waits for a cooldown.
elastic_conf() {
  cat >"$T/volcano-scheduler.conf" <<CONF
actions: "$1"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: elastic
    arguments:
      elastic.cooldown: 0s
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
CONF
}

# --- objects ---------------------------------------------------------------------------------
# make_nodes PREFIX N [cpu=4] [memory=32Gi] [gpu=0] [pods=110]: kwok nodes PREFIX-0..N-1
# (label kubernetes.io/hostname), waits until they are Ready.
make_nodes() {
  local prefix="$1" n="$2" cpu=4 memory=32Gi gpu="" pods=110 kv i alloc
  shift 2
  for kv in "$@"; do
    case "$kv" in
      cpu=* | memory=* | gpu=* | pods=*) local "${kv%%=*}=${kv#*=}" ;;
      *) fail "make_nodes: unknown argument $kv" ;;
    esac
  done
  alloc="{\"cpu\":\"$cpu\",\"memory\":\"$memory\",\"pods\":\"$pods\"${gpu:+,\"nvidia.com/gpu\":\"$gpu\"}}"
  for ((i = 0; i < n; i++)); do
    printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","annotations":{"kwok.x-k8s.io/node":"fake"},"labels":{"kubernetes.io/hostname":"%s","type":"kwok","%s":"%s"}},"status":{"allocatable":%s,"capacity":%s}}\n' \
      "$prefix-$i" "$prefix-$i" "$E2E_LABEL" "$NS" "$alloc" "$alloc"
  done >"$T/nodes-$prefix.json"
  post_many "$T/nodes-$prefix.json"
  wait_until 30 "$n node(s) $prefix-* with cpu=$cpu memory=$memory${gpu:+ gpu=$gpu} pods=$pods are Ready" nodes_ready "$prefix" "$n"
}
nodes_ready() { # PREFIX N
  [ "$(get "$NODE_API?labelSelector=$E2E_LABEL%3D$NS" |
    q 'sum(1 for n in items(o) if name(n).startswith(a[0] + "-") and cond(n, "Ready").get("status") == "True")' "$1")" = "$2" ]
}

# pod_json NAME [cpu=Q] [memory=Q] [gpu=N] [group=PODGROUP] [scheduler=lahar] [node=NODE]
#   [on=NODE] [label=KEY:VALUE] [priorityclass=NAME] [gates=NAME,NAME...]: one pod as JSON
#   (limits = requests, terminationGracePeriodSeconds 0); node= binds it already (spec.nodeName),
#   on= asks for that node (nodeSelector kubernetes.io/hostname), gates= sets
#   spec.schedulingGates.
pod_json() {
  local name="$1" cpu="" memory="" gpu="" group="" scheduler=lahar node="" on="" label="" priorityclass="" gates=""
  local kv res="" ann="" bind="" labels="" gate
  shift
  for kv in "$@"; do
    case "$kv" in
      cpu=* | memory=* | gpu=* | group=* | scheduler=* | node=* | on=* | label=* | priorityclass=* | gates=*) local "${kv%%=*}=${kv#*=}" ;;
      *) fail "pod_json: unknown argument $kv" ;;
    esac
  done
  [ -n "$cpu" ] && res="$res\"cpu\":\"$cpu\","
  [ -n "$memory" ] && res="$res\"memory\":\"$memory\","
  [ -n "$gpu" ] && res="$res\"nvidia.com/gpu\":\"$gpu\","
  res="{${res%,}}"
  [ -n "$group" ] && ann="\"scheduling.k8s.io/group-name\":\"$group\""
  [ -n "$node" ] && bind="\"nodeName\":\"$node\","
  [ -n "$on" ] && bind="$bind\"nodeSelector\":{\"kubernetes.io/hostname\":\"$on\"},"
  [ -n "$priorityclass" ] && bind="$bind\"priorityClassName\":\"$priorityclass\","
  if [ -n "$gates" ]; then
    bind="$bind\"schedulingGates\":["
    for gate in ${gates//,/ }; do bind="$bind{\"name\":\"$gate\"},"; done
    bind="${bind%,}],"
  fi
  [ -n "$label" ] && labels="\"${label%%:*}\":\"${label#*:}\""
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"%s","labels":{%s},"annotations":{%s}},"spec":{"schedulerName":"%s",%s"terminationGracePeriodSeconds":0,"containers":[{"name":"main","image":"lahar.sh/e2e:1","resources":{"requests":%s,"limits":%s}}]}}\n' \
    "$name" "$NS" "$labels" "$ann" "$scheduler" "$bind" "$res" "$res"
}
# make_pod NAME [key=value...]: see pod_json (no group unless group= is given).
make_pod() {
  pod_json "$@" >"$T/pod-$1.json"
  post_many "$T/pod-$1.json"
}
# make_pods PREFIX N [key=value...]: pods PREFIX-0..N-1 of PodGroup PREFIX (unless group=).
make_pods() {
  local prefix="$1" n="$2" i
  shift 2
  for ((i = 0; i < n; i++)); do pod_json "$prefix-$i" "group=$prefix" "$@"; done >"$T/pods-$prefix.json"
  post_many "$T/pods-$prefix.json"
}

# make_podgroup NAME MIN [QUEUE] [MIN-RESOURCES as a YAML flow map, e.g. '{cpu: "4"}']
#   [PRIORITY-CLASS]
make_podgroup() {
  create <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: $1
spec:
  minMember: $2
${3:+  queue: $3}
${4:+  minResources: $4}
${5:+  priorityClassName: $5}
EOF
}
# make_queue NAME WEIGHT [CAPABILITY as a YAML flow map, e.g. '{cpu: "4"}']
make_queue() {
  create <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: $1
  labels: {$E2E_LABEL: $NS}
spec:
  weight: $2
  reclaimable: true
${3:+  capability: $3}
EOF
}

# make_priority_class NAME VALUE: a PriorityClass labelled for this test (cleanup deletes it).
make_priority_class() {
  create <<EOF
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: $1, labels: {$E2E_LABEL: $NS}}
value: $2
EOF
}

# --- reading state ---------------------------------------------------------------------------
pods() { get "$POD_API"; }
# count_bound [PREFIX]: pods of $NS (whose name starts with PREFIX) with a spec.nodeName.
count_bound() { pods | q 'sum(1 for p in items(o) if bound(p) and name(p).startswith(a[0]))' "${1:-}"; }
bound_is() { [ "$(count_bound "${2:-}")" = "$1" ]; }        # N [PREFIX]
bound_at_least() { [ "$(count_bound "${2:-}")" -ge "$1" ]; } # N [PREFIX]
pod_node() { get "$POD_API/$1" | q 'get(o, "spec.nodeName")'; }
is_bound() { [ -n "$(pod_node "$1")" ]; }
not_bound() { ! is_bound "$1"; }
pod_exists() { api GET "$POD_API/$1" >/dev/null 2>&1; }
# pod_condition POD TYPE: "status|reason|message" of that condition of the pod.
pod_condition() { get "$POD_API/$1" | q '"|".join(cond(o, a[0]).get(k, "") for k in ("status", "reason", "message"))' "$2"; }
pod_phase_is() { [ "$(get "$POD_API/$1" | q 'get(o, "status.phase")')" = "$2" ]; } # POD PHASE
pod_condition_is() { [ "$(pod_condition "$1" "$2" | cut -d'|' -f1)" = "$3" ]; }    # POD TYPE STATUS
# pg_get NAME EXPR: a Python expression on PodGroup NAME (`o`).
pg_get() { get "$PG_API/$1" | q "$2"; }
pg_phase() { pg_get "$1" 'get(o, "status.phase")'; }
# pg_condition_matches NAME TYPE EXTENDED-REGEX: "status|reason|message" matches (any case).
pg_condition_matches() { pg_condition "$1" "$2" | grep -Eiq -- "$3"; }
pg_phase_is() { [ "$(pg_phase "$1")" = "$2" ]; } # NAME PHASE
# pg_condition NAME TYPE: "status|reason|message" of that condition of PodGroup NAME.
pg_condition() { get "$PG_API/$1" | q '"|".join(cond(o, a[0]).get(k, "") for k in ("status", "reason", "message"))' "$2"; }
# pg_has_condition NAME TYPE STATUS [REASON-REGEX] [MESSAGE-REGEX]
pg_has_condition() {
  local c st re msg
  c="$(pg_condition "$1" "$2")" || return 1
  IFS='|' read -r st re msg <<<"$c"
  [ "$st" = "$3" ] && grep -Eq -- "${4:-.}" <<<"$re" && grep -Eiq -- "${5:-.}" <<<"$msg"
}
# events KIND NAME [NAMESPACE]: the core/v1 Events about that object, as a List (NAMESPACE "all"
# for every namespace; events about cluster-scoped objects may land in any namespace).
events() {
  local where="/api/v1/namespaces/${3:-$NS}/events"
  [ "${3:-}" = all ] && where=/api/v1/events
  get "$where?fieldSelector=involvedObject.kind%3D$1,involvedObject.name%3D$2"
}
# has_event KIND NAME REASON [NAMESPACE]
has_event() { [ "$(events "$1" "$2" "${4:-}" | q 'sum(1 for e in items(o) if get(e, "reason") == a[0])' "$3")" -ge 1 ]; }
# event_says KIND NAME REASON TEXT: an Event of that reason whose message contains TEXT.
event_says() {
  [ "$(events "$1" "$2" | q 'sum(1 for e in items(o) if get(e, "reason") == a[0] and a[1] in get(e, "message"))' "$3" "$4")" -ge 1 ]
}
# no_overcommit: no node of this test holds pods (of any namespace, not terminated) requesting
# more cpu, memory, nvidia.com/gpu or pods than its allocatable.
no_overcommit() {
  get "$NODE_API?labelSelector=$E2E_LABEL%3D$NS" >"$T/nodes.json" &&
    get /api/v1/pods >"$T/allpods.json" &&
    python3 "$E2E/kube.py" overcommit "$T/nodes.json" "$T/allpods.json"
}

# --- the scheduler ---------------------------------------------------------------------------
declare -A SCHED_PID=() SCHED_PORT=()

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_scheduler NAME [FLAG...]: starts build/bin/lahar-scheduler in the background with
# --kubeconfig, --listen-address=127.0.0.1:<free port>, and unless FLAGs say otherwise
# --leader-elect=false --schedule-period=200ms -v=2; log in $T/NAME.log. Waits for /healthz.
start_scheduler() {
  local name="$1" port flags=() f
  shift
  [ -x "$LAHAR_SCHEDULER" ] || fail "$LAHAR_SCHEDULER does not exist (build it first)"
  [ -z "${SCHED_PID[$name]:-}" ] || ! scheduler_alive "$name" || fail "scheduler $name already running"
  port="$(free_port)"
  flags=(--kubeconfig="$LAHAR_KUBECONFIG" --listen-address="127.0.0.1:$port")
  has_flag --leader-elect "$@" || flags+=(--leader-elect=false)
  has_flag --schedule-period "$@" || flags+=(--schedule-period=200ms)
  has_flag -v "$@" || has_flag --log-level "$@" || flags+=(-v="${LAHAR_E2E_VERBOSITY:-2}")
  echo "# $LAHAR_SCHEDULER ${flags[*]} $*" >>"$T/$name.log"
  rm -f "$T/$name.pid" "$T/$name.exit"
  # A wrapper records the scheduler's pid (NAME.pid) and, when it ends, its status (NAME.exit).
  bash -c '"${@:2}" >>"$1.log" 2>&1 </dev/null & echo $! >"$1.pid.tmp"; mv "$1.pid.tmp" "$1.pid"; wait $!; echo $? >"$1.exit"' \
    _ "$T/$name" "$LAHAR_SCHEDULER" "${flags[@]}" "$@" >/dev/null 2>&1 &
  for ((f = 0; f < 50; f++)); do [ -s "$T/$name.pid" ] && break; sleep 0.1; done
  SCHED_PID[$name]="$(cat "$T/$name.pid" 2>/dev/null)"
  [ -n "${SCHED_PID[$name]}" ] || fail "could not start $LAHAR_SCHEDULER"
  SCHED_PORT[$name]=$port
  log "started scheduler $name (pid ${SCHED_PID[$name]}, http://127.0.0.1:$port): ${flags[*]} $*"
  wait_until 30 "scheduler $name answers /healthz with ok" healthz_ok "$name"
}
has_flag() { # FLAG ARG...: some ARG is FLAG or FLAG=...
  local f="$1" a
  shift
  for a in "$@"; do case "$a" in "$f" | "$f"=*) return 0 ;; esac; done
  return 1
}
# scheduler_alive NAME: the process runs (its wrapper has not recorded its end).
scheduler_alive() {
  local pid="${SCHED_PID[$1]:-}"
  [ -n "$pid" ] && [ ! -e "$T/$1.exit" ] && kill -0 "$pid" 2>/dev/null
}
scheduler_exit() { # NAME: how it ended
  local rc="" i
  for ((i = 0; i < 30; i++)); do [ -s "$T/$1.exit" ] && break; sleep 0.1; done
  rc="$(cat "$T/$1.exit" 2>/dev/null)"
  if [ -z "$rc" ]; then echo "exit status unknown"
  elif [ "$rc" -gt 128 ]; then echo "killed by signal $((rc - 128))"
  else echo "exit code $rc"; fi
}
# stop_scheduler NAME [SIGNAL]: sends SIGNAL (default TERM), waits up to 10 s, then KILLs.
stop_scheduler() {
  local name="$1" sig="${2:-TERM}" pid="${SCHED_PID[$1]:-}" i
  [ -n "$pid" ] || fail "stop_scheduler: no scheduler $name"
  kill -s "$sig" "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do scheduler_alive "$name" || break; sleep 0.1; done
  if scheduler_alive "$name"; then
    log "scheduler $name still running 10s after SIG$sig: KILL"
    kill -9 "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do scheduler_alive "$name" || break; sleep 0.1; done
  fi
  log "stopped scheduler $name (SIG$sig, $(scheduler_exit "$name"))"
  unset "SCHED_PID[$name]"
  rm -f "$T/$name.pid"
}
# http NAME PATH: GET from the scheduler's listen address.
http() { curl -sS --max-time 5 "http://127.0.0.1:${SCHED_PORT[$1]}$2"; }
healthz_ok() { [ "$(http "$1" /healthz)" = ok ]; }
# metric NAME SERIES: the value of SERIES (e.g. 'lahar_binds_total{result="conflict"}'; labels
# given must match, others are summed over) in NAME's /metrics; nothing if absent.
metric() {
  local text
  text="$(http "$1" /metrics)" || return 1
  python3 "$E2E/kube.py" metric "$2" <<<"$text"
}
metric_ge() { # NAME SERIES MIN
  local v
  v="$(metric "$1" "$2")" && [ -n "$v" ] && awk -v a="$v" -v b="$3" 'BEGIN { exit !(a >= b) }'
}

# --- other programs (operators, Kubernetes' own controllers) ----------------------------------
declare -A PROC_PID=()
# start_process NAME CMD...: runs CMD in the background, output in $T/NAME.log; stopped when
# the test ends (and shown by diagnose).
start_process() {
  local name="$1"
  shift
  echo "# $*" >>"$T/$name.log"
  "$@" >>"$T/$name.log" 2>&1 </dev/null &
  PROC_PID[$name]=$!
  log "started $name (pid ${PROC_PID[$name]}, log $T/$name.log)"
}
# stop_process NAME: TERM, then KILL after 10 s.
stop_process() {
  local pid="${PROC_PID[$1]:-}" i
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  unset "PROC_PID[$1]"
  log "stopped $1"
}
process_alive() { kill -0 "${PROC_PID[$1]:-0}" 2>/dev/null; }
# start_controller_manager CONTROLLERS: Kubernetes' kube-controller-manager (built by
# hack/build-control-plane.sh) running only CONTROLLERS (e.g. deployment,replicaset or
# garbagecollector) against the test cluster.
start_controller_manager() {
  local KUBE_CONTROLLER_MANAGER
  eval "$("$ROOT/hack/build-control-plane.sh" --env kube-controller-manager)"
  start_process kube-controller-manager "$KUBE_CONTROLLER_MANAGER" --kubeconfig="$LAHAR_KUBECONFIG" \
    --authentication-kubeconfig="$LAHAR_KUBECONFIG" --authorization-kubeconfig="$LAHAR_KUBECONFIG" \
    --controllers="$1" --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(free_port)" \
    --cert-dir="$T/kcm-certs" --use-service-account-credentials=false
}

# --- Kubeflow's training-operator --------------------------------------------------------------
PTJ_API=/apis/kubeflow.org/v1/namespaces/$NS/pytorchjobs
CRD_API=/apis/apiextensions.k8s.io/v1/customresourcedefinitions
# install_crd FILE: creates the CRD in FILE unless it exists; waits until it is Established.
install_crd() {
  local name
  name="$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["metadata"]["name"])' "$1")"
  if ! api GET "$CRD_API/$name" >/dev/null 2>&1; then
    # "@FILE": curl reads the body from the file (a CRD, half a megabyte, is too long for an
    # argument); another test may have installed it in between.
    api POST "$CRD_API" "@$1" application/yaml >/dev/null || api GET "$CRD_API/$name" >/dev/null ||
      fail "could not install CRD $name from $1"
  fi
  wait_until 30 "CRD $name is Established" crd_established "$name"
}
crd_established() { [ "$(get "$CRD_API/$1" | q 'cond(o, "Established").get("status", "")')" = True ]; }

# start_training_operator: Kubeflow's training-operator (built from its Go module by
# hack/build-control-plane.sh) for the PyTorchJobs of $NS, with --gang-scheduler-name=volcano:
# it creates a Volcano PodGroup per job and the job's pods (schedulerName volcano) once the
# PodGroup is Inqueue. Its webhook certificate lives in a Secret of $NS (MY_POD_NAMESPACE),
# which it fills itself; its metrics are off and its probes on a free port.
start_training_operator() {
  local TRAINING_OPERATOR TRAINING_OPERATOR_CRDS
  eval "$("$ROOT/hack/build-control-plane.sh" --env training-operator)"
  install_crd "$TRAINING_OPERATOR_CRDS/kubeflow.org_pytorchjobs.yaml"
  api GET "/api/v1/namespaces/$NS/secrets/training-operator-webhook-cert" >/dev/null 2>&1 ||
    api POST "/api/v1/namespaces/$NS/secrets" \
      '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"training-operator-webhook-cert"}}' >/dev/null ||
    fail "could not create the operator's webhook Secret"
  OPERATOR_PROBE_PORT="$(free_port)"
  # Readiness is read from this start's lines of the log (a restarted operator appends to it).
  OPERATOR_LOG_FROM=$(($(wc -l <"$T/training-operator.log" 2>/dev/null || echo 0) + 1))
  start_process training-operator env MY_POD_NAMESPACE="$NS" "$TRAINING_OPERATOR" --kubeconfig="$LAHAR_KUBECONFIG" \
    --gang-scheduler-name=volcano --namespace="$NS" --enable-scheme=pytorchjob --metrics-bind-address=0 \
    --health-probe-bind-address="127.0.0.1:$OPERATOR_PROBE_PORT" --webhook-server-port="$(free_port)" \
    --zap-log-level=info --zap-devel=false
  # It writes its serving certificate into the Secret and waits for a kubelet to mount it in its
  # certificate folder (fixed: /tmp/k8s-webhook-server/serving-certs); here the test does that.
  wait_until 30 "the operator wrote its webhook certificate into Secret training-operator-webhook-cert" operator_cert_written
  mkdir -p /tmp/k8s-webhook-server/serving-certs
  get "/api/v1/namespaces/$NS/secrets/training-operator-webhook-cert" | python3 -c '
import base64, json, sys
data = json.load(sys.stdin)["data"]
for key in ("tls.crt", "tls.key", "ca.crt"):
    if key in data:
        open("/tmp/k8s-webhook-server/serving-certs/" + key, "wb").write(base64.b64decode(data[key]))'
  wait_until 60 "the training-operator is ready (certificates in place, controllers started)" operator_ready
}
operator_cert_written() {
  [ "$(get "/api/v1/namespaces/$NS/secrets/training-operator-webhook-cert" | q '"tls.crt" in (o.get("data") or {})')" = true ]
}
operator_ready() {
  [ "$(curl -s --max-time 2 "http://127.0.0.1:$OPERATOR_PROBE_PORT/readyz")" = ok ] &&
    tail -n "+$OPERATOR_LOG_FROM" "$T/training-operator.log" | grep -q 'Starting workers.*pytorchjob'
}

# make_pytorchjob NAME WORKERS [master=1] [gpu=1] [cpu=1] [queue=Q] [duration=DUR]
#   [elastic=MIN:MAX] [priorityclass=NAME]: a PyTorchJob of kubeflow.org/v1 as users write one
#   (Master + Worker replica specs, or, with elastic=, workers only with an elasticPolicy and
#   runPolicy.schedulingPolicy.minAvailable MIN). duration= makes kwok complete its pods that
#   long after they run (lahar.sh/sim-duration).
make_pytorchjob() {
  local name="$1" workers="$2" master=1 gpu=1 cpu=1 queue="" duration="" elastic="" priorityclass="" kv
  shift 2
  for kv in "$@"; do
    case "$kv" in
      master=* | gpu=* | cpu=* | queue=* | duration=* | elastic=* | priorityclass=*) local "${kv%%=*}=${kv#*=}" ;;
      *) fail "make_pytorchjob: unknown argument $kv" ;;
    esac
  done
  python3 - "$name" "$workers" "$master" "$gpu" "$cpu" "$queue" "$duration" "$elastic" "$priorityclass" >"$T/ptj-$name.json" <<'PY'
import json, sys
name, workers, master, gpu, cpu, queue, duration, elastic, pc = sys.argv[1:]
def replica(n):
    res = {"cpu": cpu, "memory": "1Gi"}
    if gpu != "0":
        res["nvidia.com/gpu"] = gpu
    tmpl = {"spec": {"containers": [{"name": "pytorch", "image": "registry.example/pytorch-mnist:1.0",
                                     "resources": {"requests": res, "limits": res}}]}}
    if duration:
        tmpl["metadata"] = {"annotations": {"lahar.sh/sim-duration": duration}}
    return {"replicas": int(n), "restartPolicy": "OnFailure", "template": tmpl}
specs = {}
if not elastic and master != "0":
    specs["Master"] = replica(master)
specs["Worker"] = replica(workers)
spec = {"pytorchReplicaSpecs": specs, "runPolicy": {}}
policy = {}
if queue:
    policy["queue"] = queue
if pc:
    policy["priorityClass"] = pc
if elastic:
    lo, hi = elastic.split(":")
    spec["elasticPolicy"] = {"minReplicas": int(lo), "maxReplicas": int(hi), "rdzvBackend": "c10d"}
    policy["minAvailable"] = int(lo)
if policy:
    spec["runPolicy"]["schedulingPolicy"] = policy
print(json.dumps({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": name}, "spec": spec}))
PY
  api POST "$PTJ_API" "$(cat "$T/ptj-$name.json")" >/dev/null || fail "could not create PyTorchJob $name: $(cat "$T/ptj-$name.json")"
}
# ptj_has_condition NAME TYPE: the PyTorchJob has condition TYPE (Created, Running, Succeeded, ...) True.
ptj_has_condition() {
  [ "$(get "$PTJ_API/$1" | q 'any(c.get("type") == a[0] and c.get("status") == "True" for c in get(o, "status.conditions") or [])' "$2")" = true ]
}
pg_exists() { api GET "$PG_API/$1" >/dev/null 2>&1; }

# --- cleanup ---------------------------------------------------------------------------------
cleanup() {
  local rc=$? s
  set +e
  trap - ERR
  if [ "$rc" -eq 0 ] && [ ${#EXPECT_FAILED[@]} -gt 0 ]; then
    echo
    echo "FAIL: ${#EXPECT_FAILED[@]} expectation(s) not met:"
    printf '  - %s\n' "${EXPECT_FAILED[@]}"
    diagnose
    rc=1
  elif [ "$rc" -ne 0 ] && [ "$REPORTED" != 1 ]; then
    echo
    echo "FAIL: test aborted (exit code $rc)${LAST_ERR:+ at $LAST_ERR}"
    diagnose
  fi
  for s in "${!SCHED_PID[@]}"; do
    kill -9 "${SCHED_PID[$s]}" 2>/dev/null
    rm -f "$T/$s.pid"
  done
  for s in "${!PROC_PID[@]}"; do kill -9 "${PROC_PID[$s]}" 2>/dev/null; done
  api DELETE "$PTJ_API" >/dev/null 2>&1
  [ "$(type -t test_cleanup)" = function ] && test_cleanup
  wait 2>/dev/null
  api DELETE "$POD_API?gracePeriodSeconds=0" >/dev/null 2>&1
  api DELETE "$PG_API" >/dev/null 2>&1
  api DELETE "/apis/coordination.k8s.io/v1/namespaces/$NS/leases" >/dev/null 2>&1
  api DELETE "$NODE_API?labelSelector=$E2E_LABEL%3D$NS" >/dev/null 2>&1
  api DELETE "$Q_API?labelSelector=$E2E_LABEL%3D$NS" >/dev/null 2>&1
  api DELETE "$HN_API?labelSelector=$E2E_LABEL%3D$NS" >/dev/null 2>&1
  api DELETE "/apis/scheduling.k8s.io/v1/priorityclasses?labelSelector=$E2E_LABEL%3D$NS" >/dev/null 2>&1
  api DELETE "/apis/policy/v1/namespaces/$NS/poddisruptionbudgets" >/dev/null 2>&1
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
