#!/usr/bin/env bash
# The daemon benchmark of issue 4 (not a test: timings are reported, never asserted).
#
# On a real control plane (hack/local-cluster.sh: etcd, kube-apiserver, kwok) with --nodes kwok
# nodes, schedules --gangs x --size pods per round, one round per scheduler, one after another
# on the same cluster, and reports pods/s:
#   lahar@PERIOD    build/bin/lahar-scheduler (--schedule-period PERIOD) on --gangs PodGroups
#                   (minMember --size) of --size pods each (schedulerName lahar)
#   kube-scheduler  kube-scheduler v1.34 (hack/build-control-plane.sh) on as many plain pods
#                   (schedulerName default-scheduler), profiles default
#   ceiling         test/bench/bind_ceiling.cc: lists the pending pods and only posts bindings
#                   (round-robin over the nodes), no scheduling
# A round may end in :W to use W concurrent binding requests instead of --bind-workers
# (lahar@1s:64, ceiling:64); Lahar is compared with the ceiling of the same W.
# All with the same client QPS/burst; Lahar and the ceiling with the same number of concurrent
# binding requests (--bind-workers). Every pod requests cpu 1, memory 1Gi.
#
# Each round: create the pods (and PodGroups) in a namespace of their own while no scheduler
# runs (bind_ceiling create, 16 parallel requests), wait until the cluster is quiet (kwok works
# through its backlog of the previous round for a while: marking pods Running, finishing
# deletions; --settle S is the least wait, quiet means kwok under 5% and kube-apiserver under
# 40% of a core for 3 s in a row, at most --settle-max 300 s), start the scheduler
# and time from its start until every pod is bound (bind_ceiling measure: a watch on the
# namespace's pods with fieldSelector spec.nodeName!=, so the time of each binding is known
# without polling lists), stop it, delete the round's pods (grace 0). Reported: seconds and
# pods/s from the scheduler's start; time to the first binding (startup: informer sync, first
# session); pods/s after the first binding (N / (all bound - first bound)); ratios of Lahar to
# the ceiling and to kube-scheduler.
#
# Usage: hack/bench-daemon.sh [--nodes 1000] [--gangs 1000] [--size 10] [--qps 5000]
#          [--burst 10000] [--bind-workers 16] [--rounds lahar@1s,lahar@100ms,kube-scheduler,ceiling]
#          [--repeat 1] [--settle 5] [--settle-max 300] [--timeout 900] [--out out/bench-daemon]
#          [--cluster-dir ~/.cache/lahar/bench-cluster] [--no-build]
#   quick run:  hack/bench-daemon.sh --nodes 100 --gangs 100
# --repeat N runs the list of rounds N times (the machine's noise shows); the summary takes the
# median of each round's figures.
#
# Output: a table on stdout, OUT/result.json, and per round in OUT/<namespace>.*: the
# scheduler's log (lines prefixed with seconds since its start), the measurement (.json, with a
# timeline of bound pods every 0.5 s), its /metrics when the last pod was bound (kube-scheduler
# serves them on 127.0.0.1 with /metrics allowed without authorization), the CPU seconds the
# scheduler, kube-apiserver, etcd and kwok used until all pods were bound, and what
# kube-apiserver served meanwhile (requests by verb and resource, watch events by resource; from
# its /metrics before the start and after the last binding). The cluster is brought up in
# --cluster-dir and always torn down.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

NODES=1000
GANGS=1000
SIZE=10
QPS=5000
BURST=10000
BIND_WORKERS=16
ROUNDS="lahar@1s,lahar@100ms,kube-scheduler,ceiling"
SETTLE=5
SETTLE_MAX=300
TIMEOUT=900
OUT=out/bench-daemon
CLUSTER_DIR="${LAHAR_CACHE:-$HOME/.cache/lahar}/bench-cluster"
BUILD=1
REPEAT=1

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) NODES="$2"; shift ;;
    --gangs) GANGS="$2"; shift ;;
    --size) SIZE="$2"; shift ;;
    --qps) QPS="$2"; shift ;;
    --burst) BURST="$2"; shift ;;
    --bind-workers) BIND_WORKERS="$2"; shift ;;
    --rounds) ROUNDS="$2"; shift ;;
    --settle) SETTLE="$2"; shift ;;
    --settle-max) SETTLE_MAX="$2"; shift ;;
    --repeat) REPEAT="$2"; shift ;;
    --timeout) TIMEOUT="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    --cluster-dir) CLUSTER_DIR="$2"; shift ;;
    --no-build) BUILD=0 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "bench-daemon: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
PODS=$((GANGS * SIZE))
IFS=, read -r -a ROUND_LIST <<<"$ROUNDS"
for r in "${ROUND_LIST[@]}"; do
  case "${r%%:*}" in lahar | lahar@* | kube-scheduler | ceiling) ;; *) echo "bench-daemon: unknown round $r" >&2; exit 2 ;; esac
done

log() { echo "[$(date +%H:%M:%S)] bench-daemon: $*" >&2; }

if [ "$BUILD" = 1 ]; then
  log "building lahar-scheduler and bind_ceiling (build/)"
  NINJA_TARGETS="-j2 lahar-scheduler bind_ceiling" hack/build.sh build >&2
fi
LAHAR="$ROOT/build/bin/lahar-scheduler"
BC="$ROOT/build/bin/bind_ceiling"
[ -x "$LAHAR" ] && [ -x "$BC" ] || { echo "bench-daemon: build/bin/lahar-scheduler or bind_ceiling missing" >&2; exit 1; }
KUBE_SCHEDULER=""
eval "$(hack/build-control-plane.sh --env kube-scheduler)"
[ -x "$KUBE_SCHEDULER" ] || { echo "bench-daemon: no kube-scheduler binary" >&2; exit 1; }

mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
rm -f "$OUT"/round-* "$OUT"/rounds.txt* "$OUT/result.json" "$OUT/kube-scheduler.yaml"

MEASURE_PID=""
cleanup() {
  local rc=$?
  if [ -n "$MEASURE_PID" ] && kill -0 "$MEASURE_PID" 2>/dev/null; then
    kill -TERM "$MEASURE_PID" 2>/dev/null || true  # it stops the scheduler under test
    wait "$MEASURE_PID" 2>/dev/null || true
  fi
  log "tearing the cluster down"
  hack/local-cluster.sh down "$CLUSTER_DIR" >&2 2>&1 || true
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "bringing the cluster up in $CLUSTER_DIR"
hack/local-cluster.sh up "$CLUSTER_DIR" >"$OUT/cluster-up.log" 2>&1 || {
  cat "$OUT/cluster-up.log" >&2
  exit 1
}
# shellcheck disable=SC1091
. "$CLUSTER_DIR/env"
KC="$LAHAR_KUBECONFIG"
COMMON=(--kubeconfig "$KC" --qps "$QPS" --burst "$BURST")

log "creating $NODES kwok nodes (cpu 32, memory 256Gi, pods 110)"
"$BC" nodes "${COMMON[@]}" --workers 16 --count "$NODES" --prefix bench-node --cpu 32 --memory 256Gi --pods 110

# CPU seconds (user + system) process PID has used; 0 if it is gone.
cpu_of() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || { echo 0; return; }
  stat="${stat##*) }"
  awk -v t="$(getconf CLK_TCK)" '{ printf "%.3f", ($12 + $13) / t }' <<<"$stat"
}

# Waits at least --settle seconds, then until kwok and kube-apiserver have been quiet for 3 s in a
# row (at most --settle-max seconds): the previous round's leftovers must not run into the next.
settle() {
  local start=$SECONDS quiet=0 kwok api k0 a0 k1 a1
  kwok="$(cat "$CLUSTER_DIR/kwok.pid")"
  api="$(cat "$CLUSTER_DIR/kube-apiserver.pid")"
  sleep "$SETTLE"
  while [ $((SECONDS - start)) -lt "$SETTLE_MAX" ]; do
    k0="$(cpu_of "$kwok")" a0="$(cpu_of "$api")"
    sleep 1
    k1="$(cpu_of "$kwok")" a1="$(cpu_of "$api")"
    if awk -v k="$k1" -v K="$k0" -v a="$a1" -v A="$a0" 'BEGIN { exit !(k - K < 0.05 && a - A < 0.4) }'; then
      quiet=$((quiet + 1))
      [ "$quiet" -ge 3 ] && { log "cluster quiet after $((SECONDS - start)) s"; return 0; }
    else
      quiet=0
    fi
  done
  log "warning: cluster still busy after ${SETTLE_MAX} s (kwok or kube-apiserver); going on"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

cat >"$OUT/kube-scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $KC
  qps: $QPS
  burst: $BURST
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
EOF

apiserver_metrics() { # FILE
  curl -sS --max-time 30 --cacert "$LAHAR_API_CA" -H "Authorization: Bearer $LAHAR_API_TOKEN" \
    "$LAHAR_API_URL/metrics" >"$1" || true
}

# measure ROUND NS ON-DONE CMD...: times CMD until all of NS's pods are bound (JSON in
# OUT/NS.json); ON-DONE runs then, with CMD still running.
measure() {
  local round="$1" ns="$2" on_done="$3"
  shift 3
  apiserver_metrics "$OUT/$ns.apiserver-before"
  on_done="${on_done:+$on_done; }curl -sS --max-time 30 --cacert '$LAHAR_API_CA' -H 'Authorization: Bearer $LAHAR_API_TOKEN' '$LAHAR_API_URL/metrics' >'$OUT/$ns.apiserver-after'"
  local cpu_of=() c
  for c in kube-apiserver etcd kwok; do
    [ -s "$CLUSTER_DIR/$c.pid" ] && cpu_of+=(--cpu-of "$c=$(cat "$CLUSTER_DIR/$c.pid")")
  done
  echo "# $*" >"$OUT/$ns.log"
  "$BC" measure "${COMMON[@]}" --namespace "$ns" --expect "$PODS" --timeout "$TIMEOUT" "${cpu_of[@]}" \
    --log "$OUT/$ns.log" --out "$OUT/$ns.json" --on-done "$on_done" -- "$@" >/dev/null &
  MEASURE_PID=$!
  local rc=0
  wait "$MEASURE_PID" || rc=$?
  MEASURE_PID=""
  [ "$rc" = 0 ] || log "round $round did not complete (see $OUT/$ns.json and $OUT/$ns.log)"
}

i=0
for ((rep = 0; rep < REPEAT; rep++)); do
for round in "${ROUND_LIST[@]}"; do
  i=$((i + 1))
  workers="$BIND_WORKERS"
  case "$round" in *:*) workers="${round##*:}" ;; esac
  ns="round-$i-${round//[@:]/-}"
  ns="${ns,,}"
  scheduler=default-scheduler
  podgroups=()
  case "$round" in lahar*) scheduler=lahar; podgroups=(--podgroups) ;; esac
  log "round $i: $round: creating $PODS pods${podgroups:+ in $GANGS PodGroups} in namespace $ns"
  "$BC" create "${COMMON[@]}" --workers 16 --namespace "$ns" --gangs "$GANGS" --size "$SIZE" \
    --scheduler "$scheduler" "${podgroups[@]}"
  settle
  port="$(free_port)"
  case "$round" in
    lahar*)
      period="${round%%:*}"
      period="${period#lahar}"
      period="${period#@}"
      period="${period:-1s}"
      log "round $i: lahar-scheduler --schedule-period=$period --bind-workers=$workers"
      measure "$round" "$ns" "curl -sS --max-time 10 http://127.0.0.1:$port/metrics >'$OUT/$ns.metrics'" \
        "$LAHAR" --kubeconfig="$KC" --leader-elect=false --listen-address="127.0.0.1:$port" \
        --kube-api-qps="$QPS" --kube-api-burst="$BURST" --bind-workers="$workers" \
        --schedule-period="$period" -v=1
      ;;
    kube-scheduler*)
      log "round $i: kube-scheduler ($(basename "$KUBE_SCHEDULER"))"
      mkdir -p "$OUT/kube-scheduler-certs"
      measure "$round" "$ns" "curl -sSk --max-time 10 https://127.0.0.1:$port/metrics >'$OUT/$ns.metrics'" \
        "$KUBE_SCHEDULER" --config="$OUT/kube-scheduler.yaml" --bind-address=127.0.0.1 --secure-port="$port" \
        --cert-dir="$OUT/kube-scheduler-certs" --authentication-skip-lookup \
        --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics
      ;;
    ceiling*)
      log "round $i: bind_ceiling bind --workers $workers"
      measure "$round" "$ns" "" "$BC" bind "${COMMON[@]}" --namespace "$ns" --workers "$workers"
      ;;
  esac
  echo "$round $ns $workers" >>"$OUT/rounds.txt.tmp"
  log "round $i: $(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print("%s/%s bound in %s s (first after %s s): %s pods/s; cpu s %s; peak MB %s" % (r["bound"], r["expected"],
      r["seconds"], r["first_bind_seconds"], r["pods_per_second"], r["cpu_seconds"], r.get("command_peak_mb")))' "$OUT/$ns.json" 2>/dev/null || echo "no result")"
  log "round $i: deleting the pods of $ns"
  "$BC" clean "${COMMON[@]}" --workers 16 --namespace "$ns"
done
done
mv "$OUT/rounds.txt.tmp" "$OUT/rounds.txt"

python3 - "$OUT" "$NODES" "$GANGS" "$SIZE" "$QPS" "$BURST" "$BIND_WORKERS" <<'EOF'
import json, os, re, statistics, sys
out, nodes, gangs, size, qps, burst, workers = sys.argv[1:]
rounds = []
for line in open(os.path.join(out, "rounds.txt")):
    name, ns, bind_workers = line.split()
    try:
        r = json.load(open(os.path.join(out, ns + ".json")))
    except (OSError, ValueError):
        r = {"outcome": "no result"}
    r.pop("timeline", None)  # kept in OUT/<namespace>.json
    r["round"], r["namespace"] = name, ns
    if not name.startswith("kube-scheduler"):
        r["bind_workers"] = int(bind_workers)
    metrics = os.path.join(out, ns + ".metrics")
    if os.path.exists(metrics):
        pattern = (r"lahar_(binds_total|schedule_attempts_total|session_duration_seconds_(sum|count)|status_writes_total)"
                   r"|scheduler_schedule_attempts_total|scheduler_pod_scheduling_sli_duration_seconds_(sum|count)")
        r["metrics"] = {m.rsplit(" ", 1)[0]: float(m.rsplit(" ", 1)[1]) for m in open(metrics)
                        if re.match(pattern, m)}
    # What kube-apiserver served during the round.
    def series(path, name):
        values = {}
        try:
            for m in open(path):
                if m.startswith(name + "{"):
                    labels = dict(re.findall(r'(\w+)="([^"]*)"', m[len(name):m.rindex("}") + 1]))
                    values[tuple(sorted(labels.items()))] = float(m.rsplit(" ", 1)[1])
        except OSError:
            pass
        return values
    before, after = (os.path.join(out, ns + ".apiserver-" + w) for w in ("before", "after"))
    if os.path.exists(after):
        served = {}
        for name, keys in (("apiserver_request_total", ("verb", "resource", "subresource")),
                           ("apiserver_watch_events_total", ("resource",)),
                           ("apiserver_watch_events_sizes_sum", ("resource",))):
            b, a = series(before, name), series(after, name)
            for labels, value in a.items():
                d = dict(labels)
                key = name.replace("apiserver_", "") + " " + " ".join(d.get(k, "") for k in keys).strip()
                served[key] = served.get(key, 0) + value - b.get(labels, 0)
        r["apiserver"] = {k: round(v) for k, v in sorted(served.items()) if v >= 1}
    rounds.append(r)

def num(v):
    return v if isinstance(v, (int, float)) else None

def ratio(a, b):
    return round(a / b, 3) if a and b else None

# The median of each figure over the repeats of a round.
names = list(dict.fromkeys(r["round"] for r in rounds))
summary = {}
for name in names:
    of = [r for r in rounds if r["round"] == name]
    s = {"runs": len(of), "complete": sum(1 for r in of if r.get("outcome") == "complete"),
         "bind_workers": of[0].get("bind_workers")}
    for key in ("seconds", "pods_per_second", "first_bind_seconds", "pods_per_second_after_first_bind"):
        values = [num(r.get(key)) for r in of if num(r.get(key)) is not None]
        s[key] = round(statistics.median(values), 3) if values else None
    summary[name] = s
kube = summary.get("kube-scheduler")
for name, s in summary.items():
    if name.startswith("lahar"):
        # The ceiling with as many concurrent bindings.
        ceiling = next((c for n, c in summary.items()
                        if n.startswith("ceiling") and c["bind_workers"] == s["bind_workers"]), None)
        for other, label in ((ceiling, "ceiling"), (kube, "kube_scheduler")):
            if other:
                s[f"ratio_to_{label}"] = ratio(s["pods_per_second"], other["pods_per_second"])
                s[f"ratio_to_{label}_after_first_bind"] = ratio(s["pods_per_second_after_first_bind"],
                                                                 other["pods_per_second_after_first_bind"])
result = {"nodes": int(nodes), "gangs": int(gangs), "gang_size": int(size), "pods": int(gangs) * int(size),
          "qps": float(qps), "burst": int(burst), "bind_workers": int(workers), "summary": summary, "rounds": rounds}
json.dump(result, open(os.path.join(out, "result.json"), "w"), indent=2)

def f(v, fmt="{:.1f}"):
    return fmt.format(v) if isinstance(v, (int, float)) else "-"
print(f"\n{int(gangs) * int(size)} pods ({gangs} gangs x {size}) on {nodes} kwok nodes; client qps {float(qps):g} "
      f"burst {burst}; {workers} binding workers (Lahar, ceiling) unless the round says :W\n")
print(f"{'round':<16} {'bound':>11} {'seconds':>8} {'pods/s':>7} {'1st bind s':>10} {'pods/s after 1st':>16}   "
      f"{'CPU s: sched':>12} {'apiserver':>9} {'etcd':>5} {'kwok':>5} {'sched MB':>8}")
for r in rounds:
    cpu = r.get("cpu_seconds", {})
    print(f"{r['round']:<16} {str(r.get('bound', '-')) + '/' + str(r.get('expected', '-')):>11} "
          f"{f(r.get('seconds'), '{:.2f}'):>8} {f(r.get('pods_per_second')):>7} "
          f"{f(r.get('first_bind_seconds'), '{:.2f}'):>10} {f(r.get('pods_per_second_after_first_bind')):>16}   "
          f"{f(cpu.get('command')):>12} {f(cpu.get('kube-apiserver')):>9} {f(cpu.get('etcd')):>5} {f(cpu.get('kwok')):>5} "
          f"{f(r.get('command_peak_mb')):>8}")
lahar = [n for n in summary if n.startswith("lahar")]
if lahar:
    runs = max(s["runs"] for s in summary.values())
    print(f"\nLahar against the others{' (medians of ' + str(runs) + ' runs)' if runs > 1 else ''}:")
    print(f"{'':<16} {'pods/s':>7} {'/ceiling':>9} {'/kube-scheduler':>16} {'after 1st bind: /ceiling':>25} "
          f"{'/kube-scheduler':>16}")
    for n in lahar:
        s = summary[n]
        print(f"{n:<16} {f(s['pods_per_second']):>7} {f(s.get('ratio_to_ceiling'), '{:.2f}'):>9} "
              f"{f(s.get('ratio_to_kube_scheduler'), '{:.2f}'):>16} "
              f"{f(s.get('ratio_to_ceiling_after_first_bind'), '{:.2f}'):>25} "
              f"{f(s.get('ratio_to_kube_scheduler_after_first_bind'), '{:.2f}'):>16}")
print(f"\nresult: {os.path.join(out, 'result.json')}")
EOF
gzip -f "$OUT"/*.apiserver-before "$OUT"/*.apiserver-after 2>/dev/null || true  # kept for digging, compressed
