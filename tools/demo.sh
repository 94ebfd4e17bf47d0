#!/usr/bin/env bash
# Sets up, builds and runs a real demo campaign: a GPU problem when a CUDA device is present,
# else the host softmax problem on the host evaluator. Extra args go to `arcd run`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Only what the demo runs: arcd, the arc-eval worker it starts, and arc-replay (not the tests).
bash "$root/tools/build.sh" arcd arc-eval arc-replay
echo "demo: built in ${SECONDS} s"
build=${BUILD_DIR:-$root/build}
campaign=$root/problems/host/softmax/campaign.toml
# A GPU the driver can see: the bf16 softmax on the CUDA evaluator instead.
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  campaign=$root/problems/gpu/softmax_bf16/campaign.toml
fi
run_dir=$root/runs/demo-$(date +%Y%m%d-%H%M%S)
"$build/tools/arcd" run "$campaign" --run-dir "$run_dir" "$@"
"$build/tools/arc-replay" verify "$run_dir"
echo "run directory: $run_dir (report: $run_dir/report.md)"
