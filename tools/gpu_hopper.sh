#!/usr/bin/env bash
# The Hopper GEMM family on a GPU (docs/performance.md, "The Hopper GEMM family"): every
# mechanism checked for correctness, the family against cuBLASLt's default in pairs, and
# campaigns whose best is confirmed in pairs. Run from the source tree with the binaries on PATH
# (the bundle's env.sh) or built in build/:
#   tools/gpu_hopper.sh OUT_DIR [PART...]
#   PART: mechanisms | pairs | campaigns (default: these three) | sweep | bulk-mechanisms |
#         bulk-pairs | skinny-sweep
# BUDGET (default 60) candidates per campaign; PROBLEMS (default "gemm_bf16 attn_out_proj_bf16
# gemm_fp8") the campaigns' problems; ROUNDS (default 3) the confirmation's pairs. `sweep`
# records SAMPLE (default 300) seeded points (SEED, default 2) of gemm_bf16's hopper family on
# every local GPU with a light evaluation (1 round, 3 warm-ups, 10 repetitions), and packs the
# log with the problem version it measured for tests/data/sweeps/ (replay answers several sweeps
# at once, so samples of different seeds add up). bulk-mechanisms and bulk-pairs do for the
# bulk-copy skinny family (bulk.cu) what mechanisms and pairs do for the Hopper family.
# `skinny-sweep` records SAMPLE (default 120) seeded points of FAMILY (default bulk) on the
# skinny workloads alone (m or tokens <= 128, the shipped evaluation) of PROBLEM (default
# gemm_bf16) and prints each workload's fastest points beside the seed's time
# (tools/skinny_top.py). Each part writes OUT_DIR/<part>.txt;
# OUT_DIR/report.txt collects the lines that matter. The parts are independent, so a part that
# needs more than one call's time runs in a call of its own.
set -u
out=${1:?usage: tools/gpu_hopper.sh OUT_DIR [mechanisms|pairs|campaigns]...}
shift
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(mechanisms pairs campaigns)
budget=${BUDGET:-60}
rounds=${ROUNDS:-3}
read -r -a problems <<< "${PROBLEMS:-gemm_bf16 attn_out_proj_bf16 gemm_fp8}"
root=$(cd "$(dirname "$0")/.." && pwd)
tool() { command -v "$1" || echo "${BUILD_DIR:-$root/build}/$2/$1"; }
cuda_test=$(tool cuda_test tests)
arcd=$(tool arcd tools)
mkdir -p "$out"
report=$out/report.txt
say() { echo "$*" | tee -a "$report"; }
skipped() { grep -q '\[  SKIPPED \]' "$1" && say "  skipped: $(grep -m1 -i 'no gpu\|skip' "$1")"; }
say "$(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

for part in "${parts[@]}"; do
  case $part in
    mechanisms | bulk-mechanisms)
      test=HopperFamilyMechanismsAreCorrect
      [ "$part" = mechanisms ] || test=BulkFamilyMechanismsAreCorrect
      "$cuda_test" --gtest_filter="CudaEvaluatorTest.$test" > "$out/$part.txt" 2>&1
      say "$part: exit $? ($(grep -c ' us ' "$out/$part.txt") workload runs)"
      skipped "$out/$part.txt"
      grep -E 'Failure|WRONG|ERROR|error:' "$out/$part.txt" | head -20 | tee -a "$report"
      ;;
    pairs | bulk-pairs)
      test=HopperAgainstCublasltInPairs
      [ "$part" = pairs ] || test=BulkAgainstCublasltInPairs
      "$cuda_test" --gtest_filter="CudaEvaluatorTest.$test" > "$out/$part.txt" 2>&1
      say "$part: exit $?"
      skipped "$out/$part.txt"
      grep -E '^(gemm|attn)|cuBLASLt/|geometric|Failure' "$out/$part.txt" | tee -a "$report"
      ;;
    skinny-sweep)
      family=${FAMILY:-bulk}
      problem=${PROBLEM:-gemm_bf16}
      sample=${SAMPLE:-120}
      seed=${SEED:-1}
      sk=$out/skinny-$problem
      mkdir -p "$sk/$problem"
      cp -r "$root/problems/gpu/common" "$sk/"
      # The problem without its workloads of m > 128 (three lines each: header, name, axes).
      awk '/^\[\[workloads\]\]/ {hold = $0; next}
           hold != "" && /^name = / {name = $0; next}
           hold != "" && /^axes = / {m = $0; sub(/^[^=]*= *\{ *[a-z_]+ = /, "", m); sub(/,.*/, "", m)
             if (m + 0 <= 128) print hold "\n" name "\n" $0; hold = ""; next}
           {print}' "$root/problems/gpu/$problem/problem.toml" > "$sk/$problem/problem.toml"
      sed -e "s|^problem = .*|problem = \"$sk/$problem/problem.toml\"|" \
        "$root/problems/gpu/$problem/campaign.toml" > "$sk/campaign.toml"
      t0=$(date +%s)
      "$arcd" sweep "$sk/$problem" --family "$family" --sample "$sample" --seed "$seed" \
        --campaign "$sk/campaign.toml" --run-dir "$out/skinny-$problem-$family" --quiet \
        > "$out/skinny-sweep-$problem.txt" 2>&1
      rc=$?
      say "skinny-sweep $problem $family: exit $rc, $(($(date +%s) - t0)) s; $(tail -1 "$out/skinny-sweep-$problem.txt")"
      if [ $rc -eq 0 ]; then
        mapfile -t names < <(sed -n '/^\[\[workloads\]\]/{n;s/^name = "\(.*\)"/\1/p}' "$sk/$problem/problem.toml")
        python3 "$root/tools/skinny_top.py" "$(tool arc-replay tools)" "$out/skinny-$problem-$family" \
          "${names[@]}" | tee -a "$report"
      fi
      ;;
    campaigns)
      for p in "${problems[@]}"; do
        t0=$(date +%s)
        "$arcd" run "$root/problems/gpu/$p/campaign.toml" --budget "$budget" --run-dir "$out/$p" \
          --quiet --json > "$out/$p.json" 2> "$out/$p.err"
        say "campaign $p: exit $?, $(($(date +%s) - t0)) s"
        "$arcd" confirm "$out/$p" --rounds "$rounds" > "$out/$p-confirm.txt" 2>&1
        say "confirm $p: exit $?"
        tee -a "$report" < "$out/$p-confirm.txt"
      done
      ;;
    sweep)
      sample=${SAMPLE:-300}
      seed=${SEED:-2}
      name=h200-gemm_bf16-hopper-sweep-s$seed
      camp=$out/sweep-campaign.toml
      sed -e "s|^problem = .*|problem = \"$root/problems/gpu/gemm_bf16/problem.toml\"|" \
        -e 's/^rounds = .*/rounds = 1/' -e 's/^warmup = .*/warmup = 3/' \
        -e 's/^repetitions = .*/repetitions = 10/' \
        "$root/problems/gpu/gemm_bf16/campaign.toml" > "$camp"
      t0=$(date +%s)
      "$arcd" sweep "$root/problems/gpu/gemm_bf16" --family hopper --sample "$sample" \
        --seed "$seed" --campaign "$camp" --run-dir "$out/$name" --quiet > "$out/sweep.txt" 2>&1
      rc=$?
      say "sweep: exit $rc, $(($(date +%s) - t0)) s; $(tail -1 "$out/sweep.txt")"
      if [ $rc -eq 0 ]; then
        mkdir -p "$out/$name/problem"
        cp -r "$root/problems/gpu/gemm_bf16" "$root/problems/gpu/common" "$out/$name/problem/"
        tar -czf "$out/$name.tar.gz" -C "$out" "$name/log" "$name/problem"
        say "packed $out/$name.tar.gz"
      fi
      ;;
    *) say "unknown part '$part': expected mechanisms, pairs, campaigns, sweep, bulk-mechanisms, bulk-pairs or skinny-sweep"; exit 2 ;;
  esac
done
