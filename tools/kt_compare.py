#!/usr/bin/env python3
"""Kernel Tuner's strategies against KernelArc's search on the same recorded measurements.

Run by tools/kernel_tuner_compare.sh inside a private virtual environment that holds Kernel
Tuner (never a dependency of KernelArc). Two subcommands:

  kt_compare.py kt CACHE.json --seeds N --budget B [--strategies a,b] [--jobs J] -o OUT.json
      runs each strategy once per seed 1..N in Kernel Tuner's simulation mode on a cache written
      by `arc-replay export --format kernel-tuner`, with max_fevals B, and writes per strategy the
      unique evaluations each seed needed to reach 90/95/99% of the best configuration in the
      cache (time <= best / q), the median over seeds with a bootstrap 95% interval.

  kt_compare.py table KT.json [--arc NAME=ABLATE.json]... [--title T]
      prints one Markdown table: the Kernel Tuner strategies, then KernelArc's configurations
      from `arc-replay ablate --json` (run with --target-score = the cache's best point, so that
      both count candidates to the same target).

The statistics are those of replay/reach.h: a seed that never reaches the target is censored
(needs more than any budget); the median is linear between order statistics; the interval is
the 2.5% and 97.5% quantiles of the medians of 2,000 resamples of the seeds drawn with
splitmix64; a censored median or bound prints as "-".
"""

import argparse
import json
import math
import multiprocessing
import os
import random
import sys
import warnings

QUANTILES = (0.90, 0.95, 0.99)
CENSORED = 1e18
CENSORED_FROM = 1e17
RESAMPLES = 2000
# A run that asks only for configurations it has already evaluated this many times in a row is
# ended as if its budget were spent: some strategies (greedy_ils from a configuration with no
# valid neighbour, simulated_annealing outside verbose mode) can otherwise loop forever.
STALL_LIMIT = 10000

MASK = (1 << 64) - 1


def splitmix64(state):
    """One step of splitmix64 (base/rng.h): returns (output, new state)."""
    x = (state + 0x9E3779B97F4A7C15) & MASK
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31), x


def quantile(values, q):
    """Linear interpolation between order statistics (base/stats.h quantile)."""
    s = sorted(values)
    if not s:
        return 0.0
    pos = q * (len(s) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def reach_stats(needed, resamples=RESAMPLES, seed=0x7EAC0000):
    """needed: per seed, the candidates needed (-1: never). As replay/reach.cc reach_stats."""
    v = [CENSORED if n < 0 else float(n) for n in needed]
    out = {"seeds": len(v), "reached": sum(1 for n in needed if n >= 0)}

    def cut(m):
        return None if m >= CENSORED_FROM else m

    out["median"] = cut(quantile(v, 0.5)) if v else None
    medians = []
    state = seed
    for _ in range(resamples if v else 0):
        draw = []
        for _ in range(len(v)):
            r, state = splitmix64(state)
            draw.append(v[r % len(v)])
        medians.append(quantile(draw, 0.5))
    out["low"] = cut(quantile(medians, 0.025)) if medians else None
    out["high"] = cut(quantile(medians, 0.975)) if medians else None
    return out


def load_cache(path):
    with open(path) as f:
        cache = json.load(f)
    for field in ("tune_params_keys", "tune_params", "cache", "kernel_name", "problem_size"):
        if field not in cache:
            sys.exit(f"kt_compare: {path}: field '{field}' missing: expected a Kernel Tuner cache "
                     "written by arc-replay export --format kernel-tuner")
    times = [e["time"] for e in cache["cache"].values() if isinstance(e.get("time"), (int, float))]
    if not times:
        sys.exit(f"kt_compare: {path}: field 'cache': expected at least one measured configuration")
    cache["_best"] = min(times)
    return cache


_CACHE = None


def _init(path):
    """Each worker process reads the cache once; tune_kernel reads it again from `path`."""
    global _CACHE
    _CACHE = load_cache(path)
    _CACHE["_path"] = path
    # The search space: the cache's configurations as tuples in tune_params_keys order, sorted by
    # their values' positions in tune_params (the order of the product of the values).
    keys = _CACHE["tune_params_keys"]
    position = {k: {json.dumps(v): i for i, v in enumerate(_CACHE["tune_params"][k])} for k in keys}
    configs = [tuple(e[k] for k in keys) for e in _CACHE["cache"].values()]
    configs.sort(key=lambda c: tuple(position[k][json.dumps(v)] for k, v in zip(keys, c)))
    _CACHE["_space"] = configs


def run_one(task):
    """One strategy at one seed; returns the unique configurations in evaluation order."""
    strategy, seed, budget = task
    import numpy as np
    import kernel_tuner
    from kernel_tuner.runners import simulation
    from kernel_tuner.searchspace import Searchspace

    cache = _CACHE
    keys = cache["tune_params_keys"]
    tune_params = {k: cache["tune_params"][k] for k in keys}
    valid = set(cache["cache"].keys())

    def in_cache(p):
        # The space is exactly what the sweep measured (failed configurations included).
        return ",".join(str(p[k]) for k in keys) in valid

    state = {"stall": 0, "stalled": False, "trace": [], "crashed": None}
    original = simulation.SimulationRunner.run

    def guarded(self, parameter_space, tuning_options):
        before = len(self.visited_results)
        results = original(self, parameter_space, tuning_options)
        # What the runner was asked, in order: the run's trace even if the strategy then fails.
        state["trace"].extend(r for r in results if r is not None)
        if len(self.visited_results) == before:
            state["stall"] += max(1, len(parameter_space))
            if state["stall"] >= STALL_LIMIT:
                tuning_options.budget.max_fevals = tuning_options.budget.num_fevals
                state["stalled"] = True
        else:
            state["stall"] = 0
        return results

    # Kernel Tuner builds a space by enumerating the product of every parameter's values under
    # the restrictions (6.6e12 combinations for a gemm sample with 19 parameters): it is given
    # instead the list that enumeration would find, the configurations in the cache.
    space = cache["_space"]
    built = (list(space), {c: i for i, c in enumerate(space)}, len(space))
    original_build = Searchspace._Searchspace__build_searchspace
    Searchspace._Searchspace__build_searchspace = lambda self, names, threads, solver: built
    simulation.SimulationRunner.run = guarded
    random.seed(seed)
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kernel_tuner.tune_kernel(
                cache["kernel_name"], "// simulation: nothing is compiled",
                cache["problem_size"], [], tune_params, restrictions=[in_cache],
                cache=cache["_path"], simulation_mode=True, strategy=strategy,
                strategy_options={"max_fevals": budget}, quiet=True, verbose=False)
    except Exception as e:  # noqa: BLE001 - a strategy's own failure ends its run
        state["crashed"] = f"{type(e).__name__}: {e}"
    finally:
        simulation.SimulationRunner.run = original
        Searchspace._Searchspace__build_searchspace = original_build
    order, seen = [], set()
    for r in state["trace"]:
        key = ",".join(str(r[k]) for k in keys)
        if key in seen:
            continue
        seen.add(key)
        t = r.get("time")
        ok = "__error__" not in r and isinstance(t, (int, float))
        order.append(t if ok else None)
    return {"strategy": strategy, "seed": seed, "times": order[:budget],
            "stalled": state["stalled"], "crashed": state["crashed"]}


def summarize(runs, best, budget):
    crashes = sorted({r["crashed"] for r in runs if r["crashed"]})
    out = {"seeds": len(runs), "stalled": sum(1 for r in runs if r["stalled"]),
           "crashed": sum(1 for r in runs if r["crashed"]), "crash_reasons": crashes,
           "evaluations_mean": sum(len(r["times"]) for r in runs) / len(runs)}
    for q in QUANTILES:
        needed = []
        for r in runs:
            n = -1
            for i, t in enumerate(r["times"]):
                if t is not None and t <= best / q:
                    n = i + 1
                    break
            needed.append(n)
        out[f"{q:.2f}"] = reach_stats(needed)
    # The best found within the budget as a fraction of the best known (geometric mean).
    fractions = []
    for r in runs:
        found = [t for t in r["times"][:budget] if t is not None]
        fractions.append(best / min(found) if found else 1e-9)
    out["fraction_of_best_geomean"] = math.exp(sum(math.log(f) for f in fractions) / len(fractions))
    return out


def cmd_kt(a):
    cache = load_cache(a.cache)
    strategies = [s for s in a.strategies.split(",") if s]
    tasks = [(s, seed, a.budget) for s in strategies for seed in range(1, a.seeds + 1)]
    jobs = max(1, min(a.jobs or os.cpu_count() or 1, len(tasks)))
    path = os.path.abspath(a.cache)
    with multiprocessing.get_context("fork").Pool(jobs, initializer=_init, initargs=(path,)) as pool:
        runs = pool.map(run_one, tasks, chunksize=4)
    report = {"cache": path, "space": len(cache["cache"]), "best_ms": cache["_best"],
              "budget": a.budget, "seeds": a.seeds, "strategies": {}}
    meta = cache.get("kernelarc", {})
    if meta.get("baseline_time"):
        report["target_score"] = meta["baseline_time"] / cache["_best"]
    measured = [e["time"] for e in cache["cache"].values() if isinstance(e.get("time"), (int, float))]
    report["points_within"] = {f"{q:.2f}": sum(1 for t in measured if t <= cache["_best"] / q)
                               for q in QUANTILES}
    for s in strategies:
        mine = [r for r in runs if r["strategy"] == s]
        report["strategies"][s] = summarize(mine, cache["_best"], a.budget)
        if a.raw:
            report["strategies"][s]["runs"] = mine
    with open(a.output, "w") as f:
        json.dump(report, f, indent=1)
    print(f"kt_compare: {len(tasks)} runs on {a.cache} -> {a.output}", file=sys.stderr)


def fmt(n):
    if n is None:
        return "-"
    return f"{round(n, 1):g}"


def cmd_table(a):
    with open(a.kt) as f:
        kt = json.load(f)
    title = a.title or os.path.basename(kt["cache"])
    print(f"**{title}**: {kt['space']} configurations, {kt['points_within']['0.95']} within 95% of "
          f"the best point; budget {kt['budget']}, {kt['seeds']} seeds"
          + (f"; target score {kt['target_score']:.4f}x" if "target_score" in kt else "") + "\n")
    print("| search | to 95% of the best point, median [95% CI] | seeds reaching 95% "
          "| to 90/95/99% | best @budget / best point | evaluations used, mean |")
    print("|---|---|---:|---|---:|---:|")
    for name, s in kt["strategies"].items():
        r = s["0.95"]
        print(f"| Kernel Tuner {name} | {fmt(r['median'])} [{fmt(r['low'])}, {fmt(r['high'])}] | "
              f"{r['reached']}/{r['seeds']} | "
              + "/".join(fmt(s[f'{q:.2f}']['median']) for q in QUANTILES)
              + f" | {s['fraction_of_best_geomean']:.4f} | {s['evaluations_mean']:.1f}"
              + (f" ({s['stalled']} stalled)" if s.get("stalled") else "")
              + (f" ({s['crashed']} crashed)" if s.get("crashed") else "") + " |")
    for spec in a.arc or []:
        label, _, path = spec.partition("=")
        with open(path) as f:
            ab = json.load(f)
        target = ab.get("target", ab["best_known"])
        for c in ab["configs"]:
            med = c["candidates_to_reach"]["0.95"]
            lo, hi = c.get("candidates_to_reach_ci95", {}).get("0.95", [None, None])
            reaching = c.get("seeds_reaching", {}).get("0.95")
            final = [row[-1] for row in c["best_at_per_seed"]]
            frac = math.exp(sum(math.log(x / target) for x in final) / len(final))
            print(f"| KernelArc {c['name']} ({label}) | {fmt(med)} [{fmt(lo)}, {fmt(hi)}] | "
                  f"{reaching if reaching is not None else '?'}/{ab['seeds']} | "
                  + "/".join(fmt(c["candidates_to_reach"][f"{q:.2f}"]) for q in QUANTILES)
                  + f" | {frac:.4f} | {c['candidates'] / ab['seeds']:.1f} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    k = sub.add_parser("kt", help="run Kernel Tuner's strategies in simulation mode")
    k.add_argument("cache")
    k.add_argument("--seeds", type=int, default=200)
    k.add_argument("--budget", type=int, default=200)
    k.add_argument("--strategies",
                   default="random_sample,genetic_algorithm,simulated_annealing,greedy_ils")
    k.add_argument("--jobs", type=int, default=0, help="processes (default: one per core)")
    k.add_argument("--raw", action="store_true", help="keep every run's evaluations in the JSON")
    k.add_argument("-o", "--output", required=True)
    t = sub.add_parser("table", help="print the comparison as a Markdown table")
    t.add_argument("kt")
    t.add_argument("--arc", action="append", help="LABEL=ABLATE.json (repeatable)")
    t.add_argument("--title")
    a = p.parse_args()
    if a.cmd == "kt":
        if a.seeds < 1 or a.budget < 1:
            sys.exit("kt_compare: --seeds and --budget: expected positive integers")
        cmd_kt(a)
    else:
        cmd_table(a)


if __name__ == "__main__":
    main()
