#!/usr/bin/env bash
# The GPU benchmark: a campaign per GPU problem (problems/gpu/*/campaign.toml, 100 candidates
# each unless --budget says otherwise) on the CUDA evaluator, then one table: per problem and
# shape the baseline (the problem's seed) and best time, the speedup, the achieved TB/s or
# TFLOP/s, and the SOL fraction (SOL bound / best time). Method: docs/performance.md.
#   tools/gpu_bench.sh [--budget N] [--out DIR] [PROBLEM...]      (PROBLEM: a folder name)
# Runs from a build (build/tools) or a bundle (tools/bundle.sh: arcd on PATH via env.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
budget=100
out=$root/runs/gpu-bench-$(date +%Y%m%d-%H%M%S)
problems=()
while [ $# -gt 0 ]; do
  case $1 in
    --budget) budget=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) problems+=("$1"); shift ;;
  esac
done
if [ ${#problems[@]} -eq 0 ]; then
  for d in "$root"/problems/gpu/*/; do
    [ -f "$d/campaign.toml" ] && problems+=("$(basename "$d")")  # common/: shared sources
  done
fi
arcd=$(command -v arcd || true)
[ -n "$arcd" ] || arcd=${BUILD_DIR:-$root/build}/tools/arcd
mkdir -p "$out"
for p in "${problems[@]}"; do
  start=$(date +%s)
  "$arcd" run "$root/problems/gpu/$p/campaign.toml" --budget "$budget" --run-dir "$out/$p" \
    --quiet --json > "$out/$p.json" 2> "$out/$p.err" || echo "$p: arcd exited $? (see $out/$p.err)"
  echo "$p: $(( $(date +%s) - start )) s"
done
python3 "$root/tools/gpu_bench_report.py" "$root" "$out" "${problems[@]}" | tee "$out/report.txt"
