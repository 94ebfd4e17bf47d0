#!/usr/bin/env bash
# KernelArc's search against Kernel Tuner's strategies on the same recorded measurements
# (docs/replay-science.md, "KernelArc against Kernel Tuner on the same recorded data").
#   tools/kernel_tuner_compare.sh [--seeds N] [--budget B] [--workload W] [--campaign FILE]
#                                 [--strategies LIST] [--arc-config NAME:CHANGES]... [--jobs J]
#                                 [--out DIR] [--space full|measured] [--no-kernelarc] SWEEP...
# Per SWEEP (a sweep or a run directory; each holds one problem's measurements):
#   1. arc-replay export SWEEP --format kernel-tuner [--workload W]      -> OUT/NAME.cache.json
#   2. Kernel Tuner in simulation mode on that cache: each strategy of LIST (default
#      random_sample,genetic_algorithm,simulated_annealing,greedy_ils) once per seed 1..N
#      (default 200) with max_fevals B (default 200)                     -> OUT/NAME.kt.json
#   3. arc-replay ablate CAMPAIGN --from SWEEP, the same seeds and budget, counting candidates to
#      the same target (--target-score: the cache's best point over its baseline), each
#      --arc-config (ablate's --config; default: the campaign as shipped, "kernelarc:", and its
#      first agent alone, "one-agent:agents=1"), once answered exactly (--exact) and once
#      resampled per seed -> OUT/NAME.arc-exact.json, OUT/NAME.arc-resampled.json; --space
#      (ablate's --space, default full): measured for a sampled sweep, so that the agents
#      propose only what it measured
#      (skipped with --workload, whose objective is one workload's time while KernelArc scores
#      every workload, and with --no-kernelarc)
#   4. the comparison as a Markdown table                               -> stdout and OUT/NAME.md
# CAMPAIGN (--campaign): default the campaign.toml of the sweep's problem folder.
# Kernel Tuner lives in a private virtual environment, installed from PyPI on first use
# ($KT_VENV, default ~/.cache/kernelarc/kernel-tuner-$KT_VERSION; KT_VERSION default 1.5.0);
# it is no dependency of KernelArc. arc-replay: $ARC_REPLAY, else on PATH, else build/tools.
# OUT (--out): default runs/kernel-tuner-TIME. --jobs: processes for Kernel Tuner's runs and
# campaigns run at once by ablate (default: one per core). Exit status: 0 when every sweep was
# compared, 1 when one failed (the others still ran), 2 for bad arguments.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seeds=200
budget=200
workload=
campaign=
strategies=random_sample,genetic_algorithm,simulated_annealing,greedy_ils
jobs=0
out=$root/runs/kernel-tuner-$(date +%Y%m%d-%H%M%S)
kernelarc=1
space=full
arc_configs=()
sweeps=()
while [ $# -gt 0 ]; do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --workload) workload=$2; shift 2 ;;
    --campaign) campaign=$2; shift 2 ;;
    --strategies) strategies=$2; shift 2 ;;
    --arc-config) arc_configs+=("$2"); shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-kernelarc) kernelarc=0; shift ;;
    --space) space=$2; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    -*) echo "kernel_tuner_compare.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) sweeps+=("$1"); shift ;;
  esac
done
[ ${#arc_configs[@]} -gt 0 ] || arc_configs=(kernelarc: one-agent:agents=1)
config_flags=()
for c in "${arc_configs[@]}"; do config_flags+=(--config "$c"); done
[ ${#sweeps[@]} -gt 0 ] || { echo "kernel_tuner_compare.sh: expected SWEEP... (see --help)" >&2; exit 2; }
for n in "$seeds" "$budget" "$jobs"; do
  [[ $n =~ ^[0-9]+$ ]] || { echo "kernel_tuner_compare.sh: --seeds, --budget, --jobs: expected a number, got '$n'" >&2; exit 2; }
done
arc_replay=${ARC_REPLAY:-$(command -v arc-replay || echo "${BUILD_DIR:-$root/build}/tools/arc-replay")}
[ -x "$arc_replay" ] || { echo "kernel_tuner_compare.sh: no arc-replay at $arc_replay (set ARC_REPLAY)" >&2; exit 2; }

kt_version=${KT_VERSION:-1.5.0}
venv=${KT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/kernelarc/kernel-tuner-$kt_version}
if ! "$venv/bin/python" -c "import kernel_tuner" 2>/dev/null; then
  echo "kernel_tuner_compare.sh: installing kernel_tuner==$kt_version into $venv" >&2
  python3 -m venv "$venv" && "$venv/bin/pip" install --quiet "kernel_tuner==$kt_version" || {
    echo "kernel_tuner_compare.sh: could not install kernel_tuner==$kt_version into $venv" >&2
    exit 1
  }
fi
py=$venv/bin/python
jobs_flag=()
[ "$jobs" = 0 ] || jobs_flag=(--jobs "$jobs")
mkdir -p "$out"

status=0
for sweep in "${sweeps[@]}"; do
  name=$(basename "$sweep")${workload:+-$workload}
  cache=$out/$name.cache.json
  echo "== $sweep" >&2
  wflag=()
  [ -z "$workload" ] || wflag=(--workload "$workload")
  if ! "$arc_replay" export "$sweep" --format kernel-tuner "${wflag[@]}" -o "$cache"; then
    status=1
    continue
  fi
  if ! "$py" "$root/tools/kt_compare.py" kt "$cache" --seeds "$seeds" --budget "$budget" \
      --strategies "$strategies" "${jobs_flag[@]}" -o "$out/$name.kt.json"; then
    status=1
    continue
  fi
  arc=()
  if [ "$kernelarc" = 1 ] && [ -z "$workload" ]; then
    read -r target problem_dir < <("$py" -c '
import json, sys
c = json.load(open(sys.argv[1]))
m = c["kernelarc"]
best = min(e["time"] for e in c["cache"].values() if isinstance(e["time"], (int, float)))
print(m["baseline_time"] / best if m.get("baseline_time") else 0, m.get("problem_dir", ""))
' "$cache")
    camp=$campaign
    if [ -z "$camp" ]; then
      camp=$problem_dir/campaign.toml
      [ -f "$camp" ] || camp=$(ls "$root"/problems/*/"$(basename "$problem_dir")"/campaign.toml 2>/dev/null | head -1)
    fi
    if [ "$target" = 0 ] || [ ! -f "$camp" ]; then
      echo "kernel_tuner_compare.sh: $sweep: no measured baseline or no campaign ('$camp'): KernelArc's figure skipped" >&2
      status=1
    else
      for mode in exact resampled; do
        exact=()
        [ "$mode" = resampled ] || exact=(--exact)
        if "$arc_replay" ablate "$camp" --from "$sweep" --seeds "$seeds" --budgets "$budget" \
            "${config_flags[@]}" --target-score "$target" --space "$space" \
            "${exact[@]}" "${jobs_flag[@]}" --json "$out/$name.arc-$mode.json" > "$out/$name.arc-$mode.txt"; then
          arc+=(--arc "$mode=$out/$name.arc-$mode.json")
        else
          status=1
        fi
      done
    fi
  fi
  "$py" "$root/tools/kt_compare.py" table "$out/$name.kt.json" "${arc[@]}" --title "$name" |
    tee "$out/$name.md"
  echo
done
exit $status
