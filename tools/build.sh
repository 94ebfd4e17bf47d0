#!/usr/bin/env bash
# Configures and builds KernelArc into build/ (BUILD_DIR overrides; extra args go to cmake).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bash "$root/tools/setup.sh"
cmake -S "$root" -B "$build" -G Ninja "$@" >/dev/null
ninja -C "$build" -j"$(nproc)"
