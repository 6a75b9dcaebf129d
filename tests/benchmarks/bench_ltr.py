"""Benchmark: seconds per boosting round of every risk-sensitive objective beside LightGBM's built-in `lambdarank`.

A generated set shaped like MSLR-WEB10K (10,000 queries of about 120 documents, 136 features, labels
0–4 with MSLR's skew; about 1.2 M documents at `--scale 1`), the tree parameters of Dinçer et al.
2016 (50 leaves, learning rate 0.1, 1500 documents per leaf), the same LightGBM data set and
threads for every objective. The custom objectives use LightGBM's lambdarank conventions
(`ndcg="lightgbm"`, truncation 10, norm), so the built-in objective at
`lambdarank_truncation_level=10` is the like-for-like reference.

The machine may be shared, so the load changes while the benchmark runs: every objective has its own
booster on the one data set, and the rounds are interleaved (round r of every objective, in a rotated
order, before round r + 1 of any), so that each objective meets the same load. Each objective's figure is
the median of its rounds (after one warm-up round: numba loads or compiles its kernels); the ratio to
`lambdarank` is the median of the per-round ratios against the `lambdarank` round of the same pass. The
gradients alone are timed likewise on fixed scores. The load average is printed before and after.

    python tests/benchmarks/bench_ltr.py [--scale 1.0] [--rounds 10] [--threads 2]

Target: every risk objective ≤ 1.5× `lambdarank` per round.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from riskreport.ltr.objectives import NAMES, make_objective, ndcg_per_query

GRADE_PROBS = (0.52, 0.32, 0.13, 0.02, 0.01)


def mslr_shaped(scale: float, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(features float32, labels, query bounds) of about 10,000·scale queries, 120 documents each on average."""
    rng = np.random.default_rng(seed)
    sizes = np.clip(rng.poisson(120, max(2, int(10_000 * scale))), 2, 1000)
    bounds = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    labels = rng.choice(len(GRADE_PROBS), size=bounds[-1], p=GRADE_PROBS).astype(np.int32)
    features = rng.standard_normal((bounds[-1], 136), dtype=np.float32)
    features[:, :20] += labels[:, None] * rng.uniform(0.1, 0.6, 20).astype(np.float32)
    return features, labels, bounds


def boosters(dataset, objectives: dict, params: dict) -> dict:
    """One booster per objective (name -> (booster, fobj or None)), each after its warm-up round."""
    import lightgbm as lgb

    out = {}
    for name, objective in objectives.items():
        custom = callable(objective)
        booster = lgb.Booster({**params, "objective": "none" if custom else objective}, dataset)
        fobj = objective if custom else None
        booster.update(fobj=fobj)  # warm-up: numba kernels load or compile
        out[name] = (booster, fobj)
    return out


def interleaved_rounds(boosters: dict, rounds: int) -> dict[str, list[float]]:
    """Seconds of every `Booster.update` (gradients + one tree): pass r times round r of every objective, the
    order rotated by one each pass."""
    names = list(boosters)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            booster, fobj = boosters[name]
            started = time.perf_counter()
            booster.update(fobj=fobj)
            seconds[name].append(time.perf_counter() - started)
    return seconds


def gradient_seconds(objectives: dict, scores: np.ndarray, repeats: int = 5) -> dict[str, float]:
    """Median seconds of one gradient computation of every custom objective on fixed scores (interleaved)."""
    custom = {name: o for name, o in objectives.items() if callable(o)}
    seconds: dict[str, list[float]] = {name: [] for name in custom}
    for _ in range(repeats):
        for name, objective in custom.items():
            started = time.perf_counter()
            objective(scores)
            seconds[name].append(time.perf_counter() - started)
    return {name: float(np.median(values)) for name, values in seconds.items()}


def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"


def main() -> None:
    import lightgbm as lgb

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="share of MSLR-WEB10K's 10,000 queries")
    parser.add_argument("--rounds", type=int, default=10, help="timed boosting rounds per objective")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--alpha", type=float, default=1.0)
    args = parser.parse_args()

    features, labels, bounds = mslr_shaped(args.scale)
    print(
        f"{len(bounds) - 1:,} queries, {len(labels):,} documents x {features.shape[1]} features; "
        f"{args.rounds} interleaved rounds, {args.threads} threads, α = {args.alpha:g}; load average {load_average()}"
    )
    dataset = lgb.Dataset(
        features, labels, group=np.diff(bounds), free_raw_data=False, params={"verbose": -1, "max_bin": 255}
    )
    dataset.construct()
    params = {
        "num_leaves": 50,
        "learning_rate": 0.1,
        "min_data_in_leaf": 1500,
        "num_threads": args.threads,
        "verbose": -1,
        "seed": 1,
        "deterministic": True,
        "lambdarank_truncation_level": 10,
        "lambdarank_norm": True,
    }
    baselines = np.vstack([ndcg_per_query(features[:, 20 + b], labels, bounds) for b in range(3)])
    objectives: dict = {"lambdarank": "lambdarank"}
    for key, name in NAMES.items():
        rows = None if key == "lambdamart" else baselines
        objectives[name] = make_objective(key, labels, bounds, rows, args.alpha, threads=args.threads)
    seconds = interleaved_rounds(boosters(dataset, objectives, params), args.rounds)
    gradients = gradient_seconds(objectives, np.random.default_rng(2).standard_normal(len(labels)))
    reference = np.array(seconds["lambdarank"])
    print(f"load average after: {load_average()}")
    print(f"{'objective':<12} {'median s/round':>15} {'× lambdarank':>13} {'range ×':>12} {'gradients s':>12}")
    for name, values in seconds.items():
        ratios = np.array(values) / reference
        print(
            f"{name:<12} {np.median(values):15.3f} {np.median(ratios):13.2f} "
            f"{ratios.min():5.2f}–{ratios.max():<5.2f} {gradients.get(name, float('nan')):12.3f}"
        )


if __name__ == "__main__":
    main()
