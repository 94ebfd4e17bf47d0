#!/usr/bin/env python3
"""The fastest points of a sweep per workload, beside the seed's time.

Usage: skinny_top.py ARC_REPLAY RUN_DIR WORKLOAD [WORKLOAD...]
Reads each workload's medians through `arc-replay export --format kernel-tuner --workload W`
(docs/export.md) and prints, per workload, the seed's time (the cuBLASLt family's default
point) and the eight fastest points of the other families with their ratio seed / point."""
import json
import subprocess
import sys


def main() -> int:
    replay, run_dir, workloads = sys.argv[1], sys.argv[2], sys.argv[3:]
    for w in workloads:
        text = subprocess.run([replay, "export", run_dir, "--format", "kernel-tuner", "--workload", w],
                              check=True, capture_output=True, text=True).stdout
        cache = json.loads(text)
        keys = cache["tune_params_keys"]
        points = []
        seed = None
        for entry in cache["cache"].values():
            t = entry.get("time")
            if not isinstance(t, (int, float)):
                continue
            knobs = {k: entry[k] for k in keys if entry.get(k) not in (None, "n/a")}
            if knobs.get("family") == "cublaslt":
                seed = t if seed is None else min(seed, t)
                continue
            points.append((t, knobs))
        points.sort(key=lambda p: p[0])
        print(f"{w}: seed {seed * 1e3:.2f} us, {len(points)} points" if seed else f"{w}: no seed time")
        for t, knobs in points[:8]:
            ratio = f"{seed / t:.3f}x" if seed else "-"
            print(f"  {t * 1e3:8.2f} us  {ratio}  " + " ".join(f"{k}={v}" for k, v in knobs.items() if k != "family"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
