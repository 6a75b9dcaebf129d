"""Benchmark: seconds per boosting round of every risk-sensitive objective beside LightGBM's built-in `lambdarank`.

A generated set shaped like MSLR-WEB10K (10,000 queries of about 120 documents, 136 features, labels
0–4 with MSLR's skew; about 1.2 M documents at `--scale 1`), the tree parameters of Dinçer et al.
2016 (50 leaves, learning rate 0.1, 1500 documents per leaf), the same LightGBM data set and
threads for every objective. The custom objectives use LightGBM's lambdarank conventions
(`ndcg="lightgbm"`, truncation 10, norm), so the built-in objective at
`lambdarank_truncation_level=10` is the like-for-like reference. Each objective is timed once, after
one warm-up round (numba compiles its kernels once per process); the gradient time alone is timed
on the same scores; `lambdarank` is timed before and after the objectives, the mean is the reference.

    python tests/benchmarks/bench_ltr.py [--scale 1.0] [--rounds 10] [--threads 2]

Target: every risk objective ≤ 1.5× `lambdarank` per round. Timings are noisy on a shared machine.
"""

from __future__ import annotations

import argparse
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


def seconds_per_round(dataset, objective, params: dict, rounds: int) -> float:
    """Seconds per `Booster.update` (gradients + one tree), after one warm-up round."""
    import lightgbm as lgb

    custom = callable(objective)
    booster = lgb.Booster({**params, "objective": "none" if custom else objective}, dataset)
    fobj = objective if custom else None
    booster.update(fobj=fobj)  # warm-up: numba kernels load or compile
    started = time.perf_counter()
    for _ in range(rounds):
        booster.update(fobj=fobj)
    return (time.perf_counter() - started) / rounds


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
        f"{args.rounds} rounds, {args.threads} threads, α = {args.alpha:g}"
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
    before = seconds_per_round(dataset, "lambdarank", params, args.rounds)
    rows = []
    scores = np.random.default_rng(2).standard_normal(len(labels))
    for key, name in NAMES.items():
        objective = make_objective(
            key, labels, bounds, None if key == "lambdamart" else baselines, args.alpha, threads=args.threads
        )
        per_round = seconds_per_round(dataset, objective, params, args.rounds)
        started = time.perf_counter()
        objective(scores)
        rows.append((name, per_round, time.perf_counter() - started))
    after = seconds_per_round(dataset, "lambdarank", params, args.rounds)
    reference = (before + after) / 2  # the machine's load drifts: lambdarank timed before and after
    print(f"lambdarank: {before:.3f} s/round before the objectives, {after:.3f} after; reference {reference:.3f}")
    print(f"{'objective':<12} {'s/round':>8} {'× lambdarank':>13} {'gradients s':>12}")
    for name, per_round, gradients in rows:
        print(f"{name:<12} {per_round:8.3f} {per_round / reference:13.2f} {gradients:12.3f}")


if __name__ == "__main__":
    main()
