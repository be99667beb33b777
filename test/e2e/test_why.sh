#!/usr/bin/env bash
# Why is my job waiting (spec 7): a gang held by its queue's capability shows the same reason
# in its PodGroup condition, in /debug/explain, in `kubectl lahar why` and on /ui; the page is
# loaded in headless Chromium, its queue table and the job's reason read from the DOM, and a
# screenshot written beside the test's logs.
. "$(dirname "$0")/lib.sh"

QUEUE="why-$NS"
KUBECTL_LAHAR="${KUBECTL_LAHAR:-$ROOT/build/bin/kubectl-lahar}"
make_nodes why 2 cpu=8
make_queue "$QUEUE" 1 '{cpu: "4"}'
start_scheduler lahar
make_podgroup a 4 "$QUEUE"
make_pods a 4 cpu=1
wait_until 30 "gang a has its 4 pods bound" bound_is 4 a-
make_podgroup b 4 "$QUEUE"
make_pods b 4 cpu=1

step "the waiting gang's condition gives the reason"
wait_until 30 "PodGroup b has condition Unschedulable=True" pg_has_condition b Unschedulable True
condition="$(pg_condition b Unschedulable)"
log "condition: $condition"
message="${condition#*|*|}"
assert_eq "$message" "queue $QUEUE: capability cpu 4, allocated 4, needs 4" "the condition's message"

step "/debug/explain gives the same reason, with what would let it start"
explain="$(http lahar "/debug/explain?job=$NS/b")"
log "explain: $explain"
assert_eq "$(q 'o["reason"]' <<<"$explain")" "$message" "/debug/explain's reason"
assert_eq "$(q 'o["kind"]' <<<"$explain")" "queue-limit" "/debug/explain's kind"
assert_eq "$(q 'o["whatWouldLetItStart"][0]' <<<"$explain")" "queue $QUEUE's jobs free 4 cpu" "what would let it start"

step "kubectl lahar why and queues say the same"
why="$("$KUBECTL_LAHAR" why "$NS/b" --endpoint "http://127.0.0.1:${SCHED_PORT[lahar]}")"
log "kubectl lahar why: $why"
check "kubectl lahar why gives the reason" grep -qxF "waiting (queue-limit): $message" <<<"$why"
queues="$("$KUBECTL_LAHAR" queues --endpoint "http://127.0.0.1:${SCHED_PORT[lahar]}")"
log "kubectl lahar queues:"$'\n'"$queues"
check "kubectl lahar queues shows the queue with its waiting job" grep -Eq "^$QUEUE +1 +1 \(1 queue-limit\) +4/" <<<"$queues"

step "/ui in headless Chromium: the queue table and the job's reason, from the DOM"
ui="http://127.0.0.1:${SCHED_PORT[lahar]}/ui"
chrome_flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
              --disable-component-update --disable-sync --user-data-dir="$T/chromium")
timeout 60 chromium "${chrome_flags[@]}" --dump-dom "$ui" >"$T/ui-dom.html" 2>"$T/chromium.log"
check "the page has a row for queue $QUEUE" grep -q "<tr data-queue=\"$QUEUE\">" "$T/ui-dom.html"
check "the page lists $NS/b with its reason" \
  python3 -c 'import re,sys; d=open(sys.argv[1]).read(); m=re.search(r"<tr data-job=\"%s\">.*?<td class=\"reason\">(.*?)</td>" % re.escape(sys.argv[2]), d, re.S); sys.exit(0 if m and m.group(1) == sys.argv[3] else 1)' \
  "$T/ui-dom.html" "$NS/b" "$message"
timeout 60 chromium "${chrome_flags[@]}" --window-size=1400,900 --screenshot="$T/ui.png" "$ui" >>"$T/chromium.log" 2>&1
check "a screenshot of the page is written ($T/ui.png)" test -s "$T/ui.png"
