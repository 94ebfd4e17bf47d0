#!/usr/bin/env bash
# Builds a knob sweep of the gemm_bf16 stream family (tools/probes/stream_probe.cu, nvcc for sm_90a,
# in parallel) and, where a GPU is present, runs every configuration on the skinny shapes of
# gemm_bf16 and attn_out_proj_bf16 (or SHAPES="M N K ..."), beside cuBLASLt, then prints the five
# fastest configurations per shape. Usage: stream_probe.sh [build|run|all]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${PROBE_DIR:-$root/build-probes}/stream
what=${1:-all}
shapes=${SHAPES:-"16 4096 4096 64 4096 4096 32 8192 8192"}
configs=()
for nt in 16 32 64; do for warps in 128 256 512; do for unroll in 1 2 4; do for tm in 16 64; do
  configs+=("$nt $warps $unroll $tm")
done; done; done; done
if [[ $what != run ]]; then
  mkdir -p "$out"
  printf '%s\n' "${configs[@]}" | xargs -P "$(nproc)" -L 1 bash -c '
    nvcc -O3 -std=c++17 -arch=sm_90a -I "'"$root"'/cuda/include" -I "'"$root"'/problems/gpu/common/gemm/families" \
      -I "'"$root"'/problems/gpu/common/gemm/include" -DARC_RESIDUAL=0 \
      -DTILE_N=$0 -DTHREADS=$1 -DUNROLL=$2 -DTILE_M=$3 "'"$root"'/tools/probes/stream_probe.cu" \
      -o "'"$out"'/stream_probe_$0_$1_$2_$3" -lcublasLt'
fi
if [[ $what != build ]]; then
  # shellcheck disable=SC2086
  for b in "$out"/stream_probe_*; do "$b" $shapes; done | tee "$out/results.txt"
  echo "fastest per shape:"
  awk '/ ok$/ {for (i = 1; i <= NF; ++i) if ($i == "stream") print $1, $2, $3, $(i + 1) + 0, $0}' "$out/results.txt" |
    sort -k1,1 -k2,2 -k3,3 -k4,4n | awk '{key = $1 " " $2 " " $3; if (++seen[key] <= 5) {$1 = $2 = $3 = $4 = ""; print}}'
fi
