#!/usr/bin/env bash
# Builds KernelArc with AddressSanitizer + UndefinedBehaviorSanitizer into build-asan/ (BUILD_DIR
# overrides) and runs every test binary under them. Sanitizer reports, the arc-eval workers'
# included (their stderr is /dev/null), are written to build-asan/sanitizer-logs/; any report
# fails the run.
#
# What runs: every test of every binary except the long end-to-end campaigns listed in `slow`
# below (each takes 8-50 s in the plain build and 2-3x that under the sanitizers; they run in
# the plain build of tools/test.sh). docs/reliability.md has the times that set this line.
# Under ASan the worker has no address-space limit (ASan reserves terabytes of shadow), so the
# tests that need one skip, saying so.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-asan}
bash "$root/tools/setup.sh"
# -O1 -g1 (line tables for the reports' stack traces) compiles in 0.44x the CPU time of
# RelWithDebInfo's -O2 -g under the sanitizers (docs/reliability.md).
cmake -S "$root" -B "$build" -G Ninja -DARC_SANITIZE=address,undefined \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" >/dev/null
ninja -C "$build" -j"$(nproc)"

slow='HostCampaign|FamiliesMatchReference|Lockstep\.|Async\.|HostEvaluatorShipped|CrashResume'
slow+='|Hostile\.|Cli\.RunJson|Shells\.WholeCampaign|ShippedGpuFamilies|GuardPower\.HostAa'
logs="$build/sanitizer-logs"
rm -rf "$logs"
mkdir -p "$logs"
export ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1:abort_on_error=0:strict_string_checks=1"
# OpenSSL's own per-thread state is not KernelArc's to free (tools/lsan.supp says why).
export LSAN_OPTIONS="suppressions=$root/tools/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1"
status=0
ctest --test-dir "$build" --output-on-failure -j2 --timeout 900 -E "$slow" || status=1
if compgen -G "$logs/*" >/dev/null; then
  echo "sanitize: reports in $logs:"
  head -n 60 "$logs"/*
  status=1
fi
exit $status
