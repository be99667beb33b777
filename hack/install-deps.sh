#!/usr/bin/env bash
# Installs Lahar's build and test dependencies from Debian packages. Idempotent; needs root
# (or sudo) only when something is missing.
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache pkg-config
  libboost-dev libboost-system-dev libssl-dev
  rapidjson-dev libyaml-cpp-dev libabsl-dev catch2
  libmimalloc-dev            # the programs' malloc (see CMakeLists.txt)
  clang libclang-rt-14-dev   # libFuzzer and the sanitizer runtimes
  python3 valgrind
  chromium                   # the /ui page is checked in headless Chromium (e2e)
  buildah ca-certificates    # the OCI image (hack/image.sh)
  prometheus                 # promtool checks /metrics (e2e)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "installing: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${missing[@]}" >/dev/null
