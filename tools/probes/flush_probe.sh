#!/usr/bin/env bash
# Builds tools/probes/flush_probe.cu for sm_90a with nvcc in a few skinny-family configurations
# (into build-probes/) and, where a GPU is present, runs each at m = 16 and 64 (n = k = 4096):
# cuBLASLt default plan, the skinny family and a plain read of w, timed with CUDA events after
# no flush, the worker's memset flush, a read-only flush, and both. Usage: flush_probe.sh [build|run|all]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${PROBE_DIR:-$root/build-probes}
what=${1:-all}
configs=("8 256 4" "8 512 8" "16 256 8" "8 1024 4")
if [[ $what != run ]]; then
  mkdir -p "$out"
  for c in "${configs[@]}"; do
    read -r tn th un <<<"$c"
    nvcc -O3 -std=c++17 -arch=sm_90a -I "$root/cuda/include" -I "$root/problems/gpu/common/gemm/families" \
      -I "$root/problems/gpu/common/gemm/include" -DARC_RESIDUAL=0 \
      -DFAMILY_NAME=\"skinny_${tn}_${th}_${un}\" -DTILE_M=16 -DTILE_N="$tn" -DTHREADS="$th" -DUNROLL="$un" \
      "$root/tools/probes/flush_probe.cu" -o "$out/flush_probe_${tn}_${th}_${un}" -lcublasLt
  done
fi
if [[ $what != build ]]; then
  for b in "$out"/flush_probe_*; do
    for m in 16 64; do "$b" "$m" 4096 4096; done
  done
fi
