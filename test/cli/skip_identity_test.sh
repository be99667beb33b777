#!/usr/bin/env bash
# Sessions skip work that cannot turn out differently (WaitMemo); `lahar-sim run --no-skip`
# tries everything. The events must be byte-identical either way, on every bundled example and
# trace slice, on the first 30 days of the whole Microsoft Philly trace (when the shared traces
# are there; LAHAR_PHILLY_DAYS=0 leaves it out), and on Philly work must have been skipped:
# evicting runs, and waiting jobs parked (judged by their class).
# Usage: skip_identity_test.sh PATH/TO/lahar-sim
set -u
sim="$1"
root="$(cd "$(dirname "$0")/../.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

# same NAME FILE [ARGS...]: both runs, compared.
same() {
  local name="$1" file="$2"
  shift 2
  if ! "$sim" run "$file" "$@" --out "$work/skip" >/dev/null 2>"$work/err" ||
     ! "$sim" run "$file" "$@" --no-skip --out "$work/full" >/dev/null 2>>"$work/err"; then
    echo "FAIL $name: lahar-sim failed: $(cat "$work/err")"
    failed=$((failed + 1))
  elif ! cmp -s "$work/skip/events.jsonl" "$work/full/events.jsonl"; then
    echo "FAIL $name: events.jsonl differs with --no-skip: $(cmp "$work/skip/events.jsonl" "$work/full/events.jsonl")"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
}

for file in "$root"/config/examples/*.yaml "$root"/config/examples/traces/*.yaml "$root"/test/scenarios/*/*.yaml; do
  [ -f "$file" ] || continue
  same "$(basename "$(dirname "$file")")/$(basename "$file")" "$file"
done

days="${LAHAR_PHILLY_DAYS:-30}"
fixtures=$("$root/hack/fixtures-dir.sh" 2>/dev/null) || fixtures=""
philly="${fixtures%/fixtures}/traces/philly.csv"
if [ "$days" != 0 ] && [ -n "$fixtures" ] && [ -f "$philly" ]; then
  python3 "$root/hack/traces/philly_to_scenario.py" --input "$philly" --nodes 56 --format json \
    -o "$work/philly.json" >/dev/null 2>&1 || { echo "FAIL philly: conversion failed"; failed=$((failed + 1)); }
  if [ -f "$work/philly.json" ]; then
    same "philly, first ${days} days" "$work/philly.json" --until "$((days * 24))h"
    # The memo must have done something on a month of backlog.
    if ! grep -qE ", [1-9][0-9]* of [0-9]+ evicting runs skipped as unchanged, " "$work/err"; then
      echo "FAIL philly: no evicting run was skipped: $(tail -n 2 "$work/err")"
      failed=$((failed + 1))
    fi
    # Its backlog of alike jobs must have been parked, some sessions run again with parked jobs
    # back (a parked session that would admit one), and none parked with --no-skip (the second run).
    parked='sessions judged parked jobs by their class \(([0-9]+) of them run again with parked jobs back\)$'
    skipping=$(grep -E "${parked}" "$work/err" | head -n 1)
    trying=$(grep -E "${parked}" "$work/err" | tail -n 1)
    if ! grep -qE ", [1-9][0-9]* ${parked}" <<<"$skipping" || grep -qE "\(0 of them run again" <<<"$skipping" ||
       ! grep -qE ", 0 ${parked}" <<<"$trying"; then
      echo "FAIL philly: parking was not exercised, or ran with --no-skip: $(cat "$work/err")"
      failed=$((failed + 1))
    fi
  fi
else
  echo "skipped: the whole Philly trace (no shared traces/philly.csv, or LAHAR_PHILLY_DAYS=0)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
