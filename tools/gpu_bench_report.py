#!/usr/bin/env python3
"""The GPU benchmark's table, from the summaries `arcd run --json` printed (tools/gpu_bench.sh).

Per problem and workload: baseline and best median time, speedup, achieved throughput (TB/s
from the cost model's bytes for memory-bound problems, TFLOP/s from its flops for GEMMs) and
the SOL fraction = SOL bound / best time (1.0 = at the bound from the measured peaks).
usage: gpu_bench_report.py ROOT OUT PROBLEM...
"""
import json
import math
import re
import sys
import tomllib
from pathlib import Path


def cost(expr, axes):
    if not re.fullmatch(r"[\w\s\+\-\*/\(\),\.]*", expr):
        raise ValueError(f"unexpected cost expression {expr!r}")
    names = dict(axes)
    names.update(cdiv=lambda a, b: -(-a // b), min=min, max=max)
    return float(eval(expr, {"__builtins__": {}}, names))  # checked above: arithmetic only


def main():
    root, out, problems = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
    speedups, device = {}, "?"
    header = (f"{'problem':<20} {'workload':<26} {'baseline':>11} {'best':>11} {'speedup':>8} "
              f"{'achieved':>14} {'SOL frac':>8}")
    print(header)
    print("-" * len(header))
    for p in problems:
        problem = tomllib.loads((root / "problems" / "gpu" / p / "problem.toml").read_text())
        summary_file = out / f"{p}.json"
        try:
            s = json.loads(summary_file.read_text())
        except (OSError, json.JSONDecodeError) as e:
            print(f"{p:<20} no summary ({e})")
            continue
        device = s.get("device", device)
        gemm = problem.get("kernel_type") == "gemm"
        workloads = {w["name"]: w["axes"] for w in problem["workloads"]}
        best = s.get("best", {})
        for w in s.get("workloads", []):
            axes = workloads.get(w["name"], {})
            base, bst, sol = w["baseline_ns"], w["best_ns"], w["sol_ns"]
            if bst <= 0 or base <= 0:
                print(f"{p:<20} {w['name']:<26} no measurement ({s.get('stop_reason', '')[:60]})")
                continue
            if gemm:
                achieved = f"{cost(problem['cost']['flops'], axes) / bst / 1e3:8.1f} TFLOP/s"
            else:
                achieved = f"{cost(problem['cost']['bytes'], axes) / bst / 1e3:9.2f} TB/s"
            frac = sol / bst if bst > 0 else 0
            speedups.setdefault(p, []).append(w["speedup"])
            print(f"{p:<20} {w['name']:<26} {base/1e3:9.1f}us {bst/1e3:9.1f}us "
                  f"{w['speedup']:7.3f}x {achieved:>14} {frac:8.3f}")
        print(f"{p:<20} {'geomean':<26} {'':>11} {'':>11} "
              f"{math.exp(sum(map(math.log, speedups.get(p, [1]))) / max(1, len(speedups.get(p, [1])))):7.3f}x"
              f"   candidates {s.get('candidates')}, keeps {s.get('keeps')}, best by "
              f"{best.get('agent', '?')} ({best.get('move', '?')})")
    print(f"\ndevice: {device}")


if __name__ == "__main__":
    main()
