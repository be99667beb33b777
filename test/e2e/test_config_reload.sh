#!/usr/bin/env bash
# --scheduler-conf is reloaded when a mounted ConfigMap changes (the kubelet swaps the ..data
# symlink). Each bad file (an unknown plugin, an action named twice, an empty tier, a plugin
# argument of the wrong type, a file that is not YAML) is refused and reported: the log and a
# Warning Event (reason ConfigRejected, on the scheduler's Lease here, as no POD_NAME is set)
# name the line, a metric counts it; the last good configuration stays in force and pods keep
# being bound. A good file is then taken.
. "$(dirname "$0")/lib.sh"

CONF="$T/config"  # laid out as the kubelet lays out a ConfigMap volume
mkdir -p "$CONF"
GOOD='actions: "enqueue, allocate, elastic-scale, preempt-elastic-workers, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: elastic
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder'
VERSION=0
# put_config TEXT: writes TEXT into a new ..VERSION/ and re-points ..data at it atomically
# (rename of a new symlink), then removes the old version, as the kubelet's atomic writer does.
put_config() {
  local old="" v
  VERSION=$((VERSION + 1))
  v="2026_01_01_00_00_00.$(printf '%09d' "$VERSION")"
  [ -L "$CONF/..data" ] && old="$(readlink "$CONF/..data")"
  mkdir "$CONF/..$v"
  printf '%s\n' "$1" >"$CONF/..$v/volcano-scheduler.conf"
  ln -s "..$v" "$CONF/..data_tmp"
  mv -T "$CONF/..data_tmp" "$CONF/..data"
  [ -e "$CONF/volcano-scheduler.conf" ] || ln -s ..data/volcano-scheduler.conf "$CONF/volcano-scheduler.conf"
  if [ -n "$old" ]; then rm -rf "${CONF:?}/$old"; fi
  log "config now ..$v (via ..data -> $(readlink "$CONF/..data"))"
}
failures() { metric lahar 'lahar_config_reloads_total{result="failure"}'; }
# rejected_event_says REGEX: a ConfigRejected Event whose message matches (Python regex). The
# Events go to the leader-election Lease (lahar in $NS), which need not exist.
rejected_event_says() {
  [ "$(events Lease lahar | q 'sum(1 for e in items(o) if get(e, "reason") == "ConfigRejected" and re.search(a[0], get(e, "message")))' "$1")" -ge 1 ]
}

put_config "$GOOD"
make_nodes reload 1 cpu=16
start_scheduler lahar --scheduler-conf="$CONF/volcano-scheduler.conf" --leader-elect-namespace="$NS"
make_pod first cpu=1
wait_until 30 "pod first bound" is_bound first
assert_eq "$(failures)" "" "no reload failure yet"

# refused WHAT LINE PATTERN TEXT: TEXT is refused; the log line and the Event name `line LINE`
# and match PATTERN (extended regex); a new pod is bound under the last good configuration.
BAD=0
refused() {
  local what="$1" line="$2" pattern="$3" text="$4" pod
  BAD=$((BAD + 1))
  pod="pod-$BAD"
  step "a bad configuration ($what) is refused"
  put_config "$text"
  wait_until 30 "lahar_config_reloads_total{result=\"failure\"} >= $BAD" \
    metric_ge lahar 'lahar_config_reloads_total{result="failure"}' "$BAD"
  wait_until 10 "the scheduler's log says the reload was refused at line $line ($pattern)" \
    grep -Eq "reload refused.*line $line\b.*$pattern" "$T/lahar.log"
  log "log: $(grep -E "reload refused.*line $line\b" "$T/lahar.log" | tail -n 1 | cut -c1-300)"
  wait_until 15 "a ConfigRejected Event on Lease $NS/lahar names line $line ($pattern)" \
    rejected_event_says "line $line\b.*$pattern"
  log "event: $(events Lease lahar | q '[get(e, "message") for e in items(o) if re.search(a[0], get(e, "message"))][-1]' "line $line\b" | cut -c1-300)"
  assert_eq "$(metric lahar lahar_config_last_reload_successful)" 0 "lahar_config_last_reload_successful"
  check "scheduler still running" scheduler_alive lahar
  make_pod "$pod" cpu=1
  wait_until 30 "pod $pod bound under the last good configuration" is_bound "$pod"
}

refused "unknown plugin nosuchplugin" 11 nosuchplugin "${GOOD/name: nodeorder/name: nosuchplugin}"
refused "an action named twice" 1 'allocate.*twice' "${GOOD/\"enqueue, allocate,*\"/\"enqueue, allocate, allocate\"}"
refused "an empty tier" 7 'tier' "${GOOD/- plugins:
  - name: drf/- plugins: []
- plugins:
  - name: drf}"
refused "elastic.cooldown: abc" 8 'elastic.cooldown.*abc' "${GOOD/  - name: elastic/  - name: elastic
    arguments:
      elastic.cooldown: abc}"
refused "not YAML" 2 'column [0-9]+' "${GOOD/\"enqueue*backfill\"/[unclosed}"

step "a good configuration is taken"
successes="$(metric lahar 'lahar_config_reloads_total{result="success"}')"
put_config "${GOOD/name: nodeorder/name: binpack}"
wait_until 30 "lahar_config_reloads_total{result=\"success\"} grew (was ${successes:-absent})" \
  metric_ge lahar 'lahar_config_reloads_total{result="success"}' $((${successes:-0} + 1))
assert_eq "$(metric lahar lahar_config_last_reload_successful)" 1 "lahar_config_last_reload_successful"
make_pod last cpu=1
wait_until 30 "pod last bound" is_bound last
assert_eq "$(failures)" "$BAD" "lahar_config_reloads_total{result=\"failure\"}: one per bad file"
