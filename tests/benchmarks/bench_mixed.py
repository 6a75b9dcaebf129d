"""Benchmark: the exact fast path of the Jayasinghe et al. 2014; docs/measures/nondeterministic.md mixed model against statsmodels MixedLM.

2 algorithms x 40 instances x 150 topics (12,000 scores): the fast path (`riskreport.stats.mixed.fit_pair`,
from the tidy table) and the reference (`fit_mixedlm`, statsmodels MixedLM with `vc_formula`),
side by side, with their estimates compared; then 2 x 100 x 150 (30,000 scores) with the fast
path alone. Scores are simulated from the model itself (topic, topic x system, instance and
residual effects).

    python tests/benchmarks/bench_mixed.py [--instances 40] [--topics 150] [--large 100] [--repeats 5]

Targets: >= 20x faster than MixedLM at 12,000 scores with equal estimates (|difference| <= 1e-4);
< 3 s at 30,000 scores.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd

from riskreport.stats import mixed

VARIANCES = {"topic": 0.03, "topic_system": 0.005, "instance": 0.0003, "residual": 0.004}


def simulate(instances: int, topics: int, seed: int = 2026) -> pd.DataFrame:
    """Tidy `system, instance, topic, score` of two non-deterministic algorithms (effect +0.02)."""
    rng = np.random.default_rng(seed)
    topic = rng.normal(0, np.sqrt(VARIANCES["topic"]), topics)
    parts = []
    for system, shift in (("new", 0.02), ("old", 0.0)):
        y = (
            0.4
            + shift
            + topic
            + rng.normal(0, np.sqrt(VARIANCES["topic_system"]), topics)
            + rng.normal(0, np.sqrt(VARIANCES["instance"]), (instances, 1))
            + rng.normal(0, np.sqrt(VARIANCES["residual"]), (instances, topics))
        )
        parts.append(
            pd.DataFrame(
                {
                    "system": system,
                    "instance": np.repeat([str(m) for m in range(instances)], topics),
                    "topic": np.tile([str(t) for t in range(topics)], instances),
                    "score": y.ravel(),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def timed(function, repeats: int = 1):
    """(result, best wall time of `repeats` runs)."""
    best, result = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - started)
    return result, best


def differences(fast: mixed.MixedFit, reference: mixed.MixedFit) -> dict[str, float]:
    pairs = {
        "effect": (fast.effect, reference.effect),
        "se": (fast.se, reference.se),
        **{f"var_{c}": (fast.variances[c], reference.variances[c]) for c in mixed.COMPONENTS},
    }
    return {name: abs(a - b) for name, (a, b) in pairs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=40)
    parser.add_argument("--topics", type=int, default=150)
    parser.add_argument("--large", type=int, default=100, help="instances per algorithm of the fast-path-only design")
    parser.add_argument("--repeats", type=int, default=5, help="fast-path repeats (best time is reported)")
    args = parser.parse_args()

    scores = simulate(args.instances, args.topics)
    mixed.fit_pair(simulate(3, 10), "new", "old")  # warm-up (imports)
    fast, fast_time = timed(lambda: mixed.fit_pair(scores, "new", "old"), args.repeats)
    reference, reference_time = timed(lambda: mixed.fit_pair(scores, "new", "old", method="mixedlm"))
    diff = differences(fast, reference)
    agree = max(diff.values()) <= 1e-4
    print(f"2 x {args.instances} instances x {args.topics} topics = {len(scores):,} scores; {os.cpu_count()} cores")
    print(f"{'statsmodels MixedLM (reference)':<36} {reference_time:9.3f} s   1.0x   {reference.note or 'converged'}")
    print(
        f"{'riskreport balanced REML (fast path)':<36} {fast_time:9.3f} s   {reference_time / fast_time:,.0f}x faster"
        f"   (target >= 20x)"
    )
    print(f"{'':<36} {'fast':>12} {'MixedLM':>12} {'|diff|':>10}")
    for name in diff:
        a = getattr(fast, name) if name in ("effect", "se") else fast.variances[name[4:]]
        b = getattr(reference, name) if name in ("effect", "se") else reference.variances[name[4:]]
        print(f"  {name:<34} {a:12.7f} {b:12.7f} {diff[name]:10.1e}")
    print(f"  estimates {'agree' if agree else 'DIFFER'} (max |diff| {max(diff.values()):.1e}; target <= 1e-4)")

    single = simulate(args.instances, args.topics, seed=3)
    single = single[(single["system"] == "new") | (single["instance"] == "0")]  # a deterministic baseline
    fit, single_time = timed(lambda: mixed.fit_pair(single, "new", "old"), args.repeats)
    print(
        f"\n{args.instances} instances vs a deterministic baseline x {args.topics} topics (k_1 != k_2: the bounded "
        f"optimiser): {single_time:.3f} s; effect {fit.effect:+.4f} ± {fit.se:.4f}"
    )

    large = simulate(args.large, args.topics, seed=7)
    fit, large_time = timed(lambda: mixed.fit_pair(large, "new", "old"), args.repeats)
    print(
        f"2 x {args.large} instances x {args.topics} topics = {len(large):,} scores, fast path alone: "
        f"{large_time:.3f} s (target < 3 s); effect {fit.effect:+.4f} ± {fit.se:.4f}"
    )


if __name__ == "__main__":
    main()
