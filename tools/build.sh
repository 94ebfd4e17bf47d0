#!/usr/bin/env bash
# Configures and builds KernelArc into build/ (BUILD_DIR overrides).
#   tools/build.sh                          everything, tests included
#   tools/build.sh arcd arc-eval arc-replay only these ninja targets and what they depend on
# Arguments starting with '-' go to cmake (e.g. -DCMAKE_BUILD_TYPE=Debug); the others are
# ninja targets.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
cmake_args=()
targets=()
for a in "$@"; do
  case $a in
    -*) cmake_args+=("$a") ;;
    *) targets+=("$a") ;;
  esac
done
bash "$root/tools/setup.sh"
cmake -S "$root" -B "$build" -G Ninja "${cmake_args[@]}" >/dev/null
ninja -C "$build" -j"$(nproc)" "${targets[@]}"
