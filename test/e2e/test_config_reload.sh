#!/usr/bin/env bash
# --scheduler-conf is reloaded when a mounted ConfigMap changes (the kubelet swaps the ..data
# symlink): a bad file (unknown plugin) is refused and reported (log, metric), the last good
# configuration stays in force and pods keep being bound; a good file is then taken.
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
# put_config VERSION TEXT: writes TEXT into ..VERSION/ and re-points ..data at it atomically
# (rename of a new symlink), then removes the old version, as the kubelet's atomic writer does.
put_config() {
  local old=""
  [ -L "$CONF/..data" ] && old="$(readlink "$CONF/..data")"
  mkdir "$CONF/..$1"
  printf '%s\n' "$2" >"$CONF/..$1/volcano-scheduler.conf"
  ln -s "..$1" "$CONF/..data_tmp"
  mv -T "$CONF/..data_tmp" "$CONF/..data"
  [ -e "$CONF/volcano-scheduler.conf" ] || ln -s ..data/volcano-scheduler.conf "$CONF/volcano-scheduler.conf"
  if [ -n "$old" ]; then rm -rf "${CONF:?}/$old"; fi
  log "config now ..$1 (via ..data -> $(readlink "$CONF/..data"))"
}

put_config 2026_01_01_00_00_00.000000001 "$GOOD"
make_nodes reload 1 cpu=16
start_scheduler lahar --scheduler-conf="$CONF/volcano-scheduler.conf"
make_pod first cpu=1
wait_until 30 "pod first bound" is_bound first
failures="$(metric lahar 'lahar_config_reloads_total{result="failure"}')"
assert_eq "${failures:-0}" 0 "no reload failure yet"

step "a bad configuration (unknown plugin nosuchplugin) is refused"
sleep 1  # a file time stamp that differs from the first version's
put_config 2026_01_01_00_01_00.000000002 "${GOOD/name: nodeorder/name: nosuchplugin}"
wait_until 30 "lahar_config_reloads_total{result=\"failure\"} >= 1" \
  metric_ge lahar 'lahar_config_reloads_total{result="failure"}' 1
wait_until 10 "the scheduler's log names nosuchplugin" grep -q nosuchplugin "$T/lahar.log"
log "log: $(grep nosuchplugin "$T/lahar.log" | head -n 1 | cut -c1-300)"
check "scheduler still running" scheduler_alive lahar
check "scheduler /healthz is ok" healthz_ok lahar
make_pod second cpu=1
wait_until 30 "pod second bound under the last good configuration" is_bound second

step "a good configuration is taken"
successes="$(metric lahar 'lahar_config_reloads_total{result="success"}')"
put_config 2026_01_01_00_02_00.000000003 "${GOOD/name: nodeorder/name: binpack}"
wait_until 30 "lahar_config_reloads_total{result=\"success\"} grew (was ${successes:-absent})" \
  metric_ge lahar 'lahar_config_reloads_total{result="success"}' $((${successes:-0} + 1))
make_pod third cpu=1
wait_until 30 "pod third bound" is_bound third
failures="$(metric lahar 'lahar_config_reloads_total{result="failure"}')"
log "lahar_config_reloads_total{result=\"failure\"} at the end: $failures (one bad file was written)"
