#!/usr/bin/env bash
# Builds Lahar. Usage: hack/build.sh [BUILD_DIR] [extra cmake args...]
#   hack/build.sh                         # build/ (RelWithDebInfo, gcc)
#   hack/build.sh build-asan -DLAHAR_SANITIZE=ON
set -euo pipefail
cd "$(dirname "$0")/.."
# Clones in other folders (CI) share the compiler cache: paths are hashed relative to here.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
dir="${1:-build}"
shift || true
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
else
  cmake "$dir" "$@" >/dev/null
fi
# shellcheck disable=SC2086  # a space-separated list of targets
ninja -C "$dir" ${NINJA_TARGETS:-all}
