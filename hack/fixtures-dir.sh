#!/usr/bin/env bash
# Prints the folder of shared/fixtures (real files from other projects, never copied into the
# repo): $LAHAR_FIXTURES_DIR, else <repo>/../shared/fixtures, else /work/shared/fixtures (where
# the project's shared folder lives when the repo is cloned elsewhere, as CI does). The same
# order as LAHAR_FIXTURE_DIR in CMakeLists.txt. Exits 1 with the places it looked.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
for dir in "${LAHAR_FIXTURES_DIR:-}" "$root/../shared/fixtures" /work/shared/fixtures; do
  if [ -n "$dir" ] && [ -d "$dir/volcano" ]; then
    (cd "$dir" && pwd)
    exit 0
  fi
done
echo "fixtures-dir: no shared/fixtures in \$LAHAR_FIXTURES_DIR, $root/../shared/fixtures or /work/shared/fixtures" >&2
exit 1
