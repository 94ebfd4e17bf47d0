#!/usr/bin/env bash
# Campaigns on every GPU of a node against one GPU (docs/distributed.md; the figures go to
# docs/performance.md, "Workers on GPUs"). Run from the source tree with the binaries on PATH
# (the bundle's env.sh):
#   tools/gpu_workers.sh OUT_DIR [BUDGET] [PROBLEMS...]     (default: 100, softmax_bf16 gemm_bf16)
# For each problem: `arcd run --workers auto` (one worker per GPU) and the same campaign with one
# worker, the wall time of each, the workers and devices the evaluations name, whether any pair
# mixes devices or any evaluation another device model, and `arc-replay verify`. Then, with two
# GPUs or more, a worker per GPU served by `arc-eval --serve` and one of them SIGKILLed mid-run:
# the campaign must finish on the others with nothing lost. Always: two workers on one GPU must
# be refused. Writes OUT_DIR/report.txt.
set -u
out=${1:?usage: tools/gpu_workers.sh OUT_DIR [BUDGET] [PROBLEMS...]}
budget=${2:-100}
shift $(($# >= 2 ? 2 : $#))
problems=("$@")
[ ${#problems[@]} -gt 0 ] || problems=(softmax_bf16 gemm_bf16)
mkdir -p "$out"
report=$out/report.txt
: > "$report"
say() { echo "$*" | tee -a "$report"; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
say "gpus: $ngpu ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | xargs))"
secret=$out/worker.secret
rm -f "$secret"
arc-eval --new-secret "$secret" >/dev/null

# What a run's log says about its workers and devices, one line.
describe() {
  arc-replay show "$1" --events --json | python3 -c '
import json, re, sys
workers, devices, models, mixed, evals, pairs, seen, twice = {}, set(), set(), 0, 0, 0, set(), 0
for line in sys.stdin:
    e = json.loads(line); p = e["payload"]
    if e["type"] == "CandidateEvaluated":
        evals += 1
        twice += p["candidate_hash"] in seen; seen.add(p["candidate_hash"])
        workers[p["worker"]] = workers.get(p["worker"], 0) + 1
        devices.add(p["device"]); models.add(re.sub(r"GPU-[0-9a-f-]+", "GPU-*", p["device"]))
        if not p["worker"] or not p["device"]: mixed += 1
    elif e["type"] == "PairMeasured":
        pairs += 1
        if not p["worker"] or not p["device"]: mixed += 1
    elif e["type"] == "WorkerChanged":
        print("  ", p["worker"], p["state"], p["reason"][:100], "live", p["live"])
print("  evaluations %d by %s (%d of a candidate evaluated before); pairs %d; devices %d, "
      "device models %d; without worker/device %d" % (evals, workers, twice, pairs, len(devices),
      len(models), mixed))'
}

run_campaign() {  # NAME PROBLEM WORKERS...
  local name=$1 problem=$2; shift 2
  local t0=$(date +%s.%N)
  arcd run "problems/gpu/$problem/campaign.toml" --budget "$budget" --run-dir "$out/$name" \
    --quiet --json "$@" > "$out/$name.json" 2> "$out/$name.err"
  local rc=$? t1=$(date +%s.%N)
  local v; v=$(arc-replay verify "$out/$name" 2>&1 | tail -1)
  say "$name: exit $rc, $(python3 -c "print('%.1f' % ($t1 - $t0))") s wall; verify: $v"
  describe "$out/$name" | tee -a "$report"
}

for p in "${problems[@]}"; do
  run_campaign "$p-auto" "$p" --workers auto
  run_campaign "$p-one" "$p" --workers local:0
done

# Two workers on one GPU: refused before anything runs.
a_log=$out/same-a.out; b_log=$out/same-b.out
arc-eval --serve 127.0.0.1:0 --backend cuda --device 0 --secret-file "$secret" > "$a_log" 2>&1 &
pa=$!
arc-eval --serve 127.0.0.1:0 --backend cuda --device 0 --secret-file "$secret" > "$b_log" 2>&1 &
pb=$!
for _ in $(seq 100); do grep -q serving "$a_log" && grep -q serving "$b_log" && break; sleep 0.2; done
ea=$(sed -n 's/^arc-eval: serving on \([^ ]*\).*/\1/p' "$a_log")
eb=$(sed -n 's/^arc-eval: serving on \([^ ]*\).*/\1/p' "$b_log")
# One of them alone: a CUDA campaign on a remote worker.
run_campaign "${problems[0]}-remote" "${problems[0]}" --workers "$ea" --worker-secret "$secret"
arcd run "problems/gpu/${problems[0]}/campaign.toml" --budget 4 --run-dir "$out/same-gpu" --quiet \
  --workers "$ea,$eb" --worker-secret "$secret" > /dev/null 2> "$out/same-gpu.err"
say "two workers on GPU 0 ($ea, $eb): exit $? — $(tail -1 "$out/same-gpu.err")"
kill "$pa" "$pb" 2>/dev/null; wait "$pa" "$pb" 2>/dev/null

# A worker per GPU, one killed mid-run.
if [ "$ngpu" -ge 2 ]; then
  eps=(); pids=()
  for d in $(seq 0 $((ngpu - 1))); do
    arc-eval --serve 127.0.0.1:0 --backend cuda --device "$d" --secret-file "$secret" \
      > "$out/serve-$d.out" 2>&1 &
    pids+=($!)
  done
  for d in $(seq 0 $((ngpu - 1))); do
    for _ in $(seq 150); do grep -q serving "$out/serve-$d.out" && break; sleep 0.2; done
    eps+=("$(sed -n 's/^arc-eval: serving on \([^ ]*\).*/\1/p' "$out/serve-$d.out")")
  done
  list=$(IFS=,; echo "${eps[*]}")
  p=${problems[0]}
  t0=$(date +%s.%N)
  arcd run "problems/gpu/$p/campaign.toml" --budget "$budget" --run-dir "$out/$p-kill" --quiet \
    --json --workers "$list" --worker-secret "$secret" > "$out/$p-kill.json" 2> "$out/$p-kill.err" &
  arcd_pid=$!
  # Kill the second GPU's worker once it has made 5 evaluations.
  for _ in $(seq 600); do
    n=$(arc-replay show "$out/$p-kill" --events 2>/dev/null | grep -c "CandidateEvaluated.*worker=${eps[1]}" || true)
    [ "${n:-0}" -ge 5 ] && break
    sleep 0.5
  done
  kill -9 "${pids[1]}"
  say "killed the worker of GPU 1 (${eps[1]}) after $n of its evaluations"
  wait "$arcd_pid"
  rc=$?
  t1=$(date +%s.%N)
  say "$p-kill: exit $rc, $(python3 -c "print('%.1f' % ($t1 - $t0))") s wall; verify: $(arc-replay verify "$out/$p-kill" 2>&1 | tail -1)"
  describe "$out/$p-kill" | tee -a "$report"
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
else
  say "one GPU: the kill-one-of-several-GPUs run needs two (skipped)"
fi
