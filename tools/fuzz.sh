#!/usr/bin/env bash
# Builds the libFuzzer targets with clang into build-fuzz/ and runs each for SECONDS (default
# 60) from its seed corpus in tests/fuzz/corpus/. Exit non-zero if any target finds a crash.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
bash "$root/tools/setup.sh" fuzz
build=${BUILD_DIR:-$root/build-fuzz}
# -O1 -g1, as tools/sanitize.sh: about half the compile time of -O2 -g.
CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja -DARC_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" >/dev/null
ninja -C "$build" fuzz_event_decoder fuzz_campaign_parser fuzz_problem_parser fuzz_protocol
status=0
for t in event_decoder campaign_parser problem_parser protocol; do
  corpus=$(mktemp -d)
  cp "$root/tests/fuzz/corpus/${t%%_*}"/* "$corpus"/ 2>/dev/null || true
  echo "fuzz_$t: ${seconds}s"
  if ! "$build/tests/fuzz_$t" -max_total_time="$seconds" -max_len=65536 -timeout=10 -artifact_prefix="$build/" \
       -print_final_stats=1 "$corpus" 2>&1 | grep -E "^stat::|ERROR|SUMMARY|Test unit|terminate|what\(\)|error while loading" | head -20; then
    status=1
  fi
  rm -rf "$corpus"
done
exit $status
