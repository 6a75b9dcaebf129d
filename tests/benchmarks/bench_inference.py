"""Benchmark: vectorised BCa intervals against a loop of scipy.stats.bootstrap.

100 challengers x 6 α x 50 topics, B = 10,000 resamples, BCa at levels 0.95 and 0.999.
riskreport draws one set of resamples for every (system, α) pair and computes both levels
from it; the reference calls `scipy.stats.bootstrap(method="BCa")` once per pair and level.
The reference is timed on a subset of pairs and scaled to all 600 pairs (said in the output).
Peak memory (max RSS of a child process) is reported for B = 100,000.

    python tests/benchmarks/bench_inference.py [--pairs-timed 12]

Target: < 5 s on 2 cores and >= 50x faster; memory bounded for B = 100,000.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np
from scipy import stats

from riskreport.stats.inference import confidence_intervals, resample_counts
from riskreport.stats.risk import risk_adjusted

LEVELS = (0.95, 0.999)


def data(systems: int = 100, topics: int = 50, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.beta(0.8, 2.0, topics)
    runs = np.clip(base + rng.normal(0.02, 0.15, (systems, topics)), 0, 1)
    return risk_adjusted(runs - base, np.array([0, 1, 2, 5, 10, 20]))  # (6, 100, 50)


def ours(x: np.ndarray, samples: int) -> float:
    started = time.perf_counter()
    counts = resample_counts(x.shape[-1], samples, np.random.default_rng(1))
    confidence_intervals(x, LEVELS, counts, methods=("bca",))
    return time.perf_counter() - started


def scipy_loop(x: np.ndarray, samples: int, pairs: int) -> float:
    flat = x.reshape(-1, x.shape[-1])
    chosen = np.random.default_rng(0).choice(len(flat), pairs, replace=False)
    started = time.perf_counter()
    for row in flat[chosen]:
        for level in LEVELS:
            stats.bootstrap((row,), np.mean, n_resamples=samples, method="BCa", confidence_level=level, random_state=1)
    return (time.perf_counter() - started) * len(flat) / pairs


def peak_memory_child(samples: int) -> float:
    code = (
        f"import resource, sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
        "from bench_inference import data, ours; "
        f"t = ours(data(), {samples}); "
        "print(t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds, megabytes = map(float, out.stdout.split())
    return seconds, megabytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs-timed", type=int, default=12, help="pairs timed with scipy, then scaled")
    args = parser.parse_args()
    x = data()
    pairs = x.shape[0] * x.shape[1]
    ours(x[:, :2], 1_000)  # warm-up
    fast = float(np.median([ours(x, 10_000) for _ in range(3)]))  # median of 3 runs
    slow = scipy_loop(x, 10_000, args.pairs_timed)
    print(
        f"{x.shape[1]} systems x {x.shape[0]} α x {x.shape[2]} topics = {pairs} pairs, B = 10,000, "
        f"BCa at {LEVELS}; {os.cpu_count()} cores"
    )
    print(f"{'scipy.stats.bootstrap loop':<32} {slow:8.2f} s   (timed on {args.pairs_timed} pairs, scaled to {pairs})")
    print(f"{'riskreport (vectorised)':<32} {fast:8.2f} s   {slow / fast:.0f}x faster   (target < 5 s, >= 50x)")
    seconds, megabytes = peak_memory_child(100_000)
    print(f"{'riskreport, B = 100,000':<32} {seconds:8.2f} s   peak memory (max RSS) {megabytes:.0f} MB")


if __name__ == "__main__":
    main()
