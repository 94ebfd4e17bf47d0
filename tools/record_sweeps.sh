#!/usr/bin/env bash
# Records on a CUDA machine the measurements that compositional replay is checked against
# (docs/replay-science.md, "Compositional replay"): sweeps of GPU problems' search spaces and
# the live campaigns to compare counterfactual ones with. Each part becomes a run directory
# under the work folder, then one gzipped tarball in --out holding, per run directory, its log
# (and for a campaign summary.json and report.md), ready to unpack under tests/data/sweeps/.
#   tools/record_sweeps.sh [--out DIR] [--work DIR] [--tag TAG] [--seed N] [--problems DIR]
#                          [PART...]
#   PART: sweep:PROBLEM        the whole space of problems/gpu/PROBLEM (--problems: another
#                              folder of problems, e.g. problems/host to try this script)
#         sweep:PROBLEM:N      a seeded sample of N candidates (--seed; the seed is always in)
#         run:PROBLEM[:BUDGET] PROBLEM's campaign.toml, live (default budget: the
#                              campaign's own)
#   default parts: sweep:softmax_bf16 sweep:rmsnorm_bf16 sweep:gemm_bf16:48
#                  run:softmax_bf16 run:rmsnorm_bf16 run:gemm_bf16
# Output in --out (default runs/record-TIME): TAG-PROBLEM-sweep[N].tar.gz or TAG-PROBLEM-live.tar.gz
# per part (TAG default h200), and record.txt (device, commands, exit codes, seconds, sizes).
# The work folder (default: a fresh one under /tmp) keeps the run directories.
# Runs from a build (build/tools) or a bundle (tools/bundle.sh: `. bundle/env.sh` puts arcd on
# PATH). Exit status: 0 when every part succeeded, 1 otherwise (the others still ran).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/runs/record-$(date +%Y%m%d-%H%M%S)
work=
tag=h200
seed=1
problems=$root/problems/gpu
parts=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --problems) problems=$(cd "$2" && pwd); shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    -*) echo "record_sweeps.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) parts+=("$1"); shift ;;
  esac
done
[ ${#parts[@]} -gt 0 ] || parts=(sweep:softmax_bf16 sweep:rmsnorm_bf16 sweep:gemm_bf16:48
                                 run:softmax_bf16 run:rmsnorm_bf16 run:gemm_bf16)
arcd=$(command -v arcd || true)
[ -n "$arcd" ] || arcd=${BUILD_DIR:-$root/build}/tools/arcd
[ -x "$arcd" ] || { echo "record_sweeps.sh: no arcd on PATH nor at $arcd" >&2; exit 2; }
[ -n "$work" ] || work=$(mktemp -d /tmp/arc-record.XXXXXX)
mkdir -p "$out" "$work"
record=$out/record.txt
{
  echo "# tools/record_sweeps.sh $(date -u +%Y-%m-%dT%H:%M:%SZ), seed $seed, tag $tag"
  echo "# $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo 'no git') $(uname -srm)"
  command -v nvidia-smi >/dev/null &&
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
} >> "$record"

status=0
for part in "${parts[@]}"; do
  IFS=: read -r kind problem arg <<< "$part"
  dir=$problems/$problem
  if [ ! -d "$dir" ]; then
    echo "$part: no folder $dir" | tee -a "$record" >&2
    status=1
    continue
  fi
  case $kind in
    sweep)
      name=$tag-$problem-sweep${arg}
      cmd=("$arcd" sweep "$dir" --run-dir "$work/$name" --seed "$seed" --quiet)
      [ -n "$arg" ] && cmd+=(--sample "$arg")
      keep=(log) ;;
    run)
      name=$tag-$problem-live
      cmd=("$arcd" run "$dir/campaign.toml" --run-dir "$work/$name" --seed "$seed" --quiet --json)
      [ -n "$arg" ] && cmd+=(--budget "$arg")
      keep=(log summary.json report.md) ;;
    *)
      echo "$part: expected sweep:PROBLEM[:N] or run:PROBLEM[:BUDGET]" | tee -a "$record" >&2
      status=1
      continue ;;
  esac
  rm -rf "${work:?}/$name"
  start=$(date +%s)
  "${cmd[@]}" > "$work/$name.out" 2> "$work/$name.err"
  rc=$?
  seconds=$(( $(date +%s) - start ))
  [ $rc -eq 0 ] || status=1
  files=()
  for k in "${keep[@]}"; do [ -e "$work/$name/$k" ] && files+=("$name/$k"); done
  size=-
  if [ ${#files[@]} -gt 0 ]; then
    tar -C "$work" -czf "$out/$name.tar.gz" "${files[@]}"
    size=$(du -k "$out/$name.tar.gz" | cut -f1)K
  fi
  {
    echo "$part: exit $rc, ${seconds} s, $name.tar.gz $size: ${cmd[*]#"$root"/}"
    [ "$kind" = run ] || tail -n 1 "$work/$name.out" | cut -c1-300
    [ $rc -eq 0 ] || tail -n 5 "$work/$name.err" | cut -c1-300
  } | tee -a "$record"
done
exit $status
