#!/usr/bin/env bash
# The first thing to run: builds lahar-sim and replays a bundled example in which a new gang
# job arrives in a cluster full of elastic workers, comparing Lahar's elastic configuration with
# the same cluster without elastic scaling. Writes the report to out/demo/report.html.
set -euo pipefail
cd "$(dirname "$0")/.."
hack/install-deps.sh
NINJA_TARGETS=lahar-sim hack/build.sh build
scenario="${1:-config/examples/departments-elastic.yaml}"
build/bin/lahar-sim compare "$scenario" \
  --config config/examples/elastic.conf \
  --config config/examples/no-elastic.conf \
  --out out/demo
echo
echo "Open out/demo/report.html in a browser for the charts."
