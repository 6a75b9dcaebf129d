"""Benchmark: every risk table of the report, vectorised, against a straightforward pandas loop.

100 systems x 50 topics x 21 α values: risk_table (URisk, TRisk, SEs, wins/losses, FRisk,
FReward, loss20), topic_risk (TR_i, TJ_i), georisk_table (ZRisk, GeoRisk), tstar_table
(mean/median/max references). The reference computes the same numbers with one pandas/scipy
call per system and α; both results are compared before timing is reported.

    python tests/benchmarks/bench_risk.py [--systems 100] [--topics 50] [--alphas 21]

Target: < 0.5 s and >= 20x faster than the loop.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd
from scipy import stats

from riskreport.stats.risk import georisk_table, risk_table, topic_risk, tstar_table


def vectorised(matrix: pd.DataFrame, alphas) -> dict:
    return {
        "risk": risk_table(matrix, "s000", alphas),
        "topics": topic_risk(matrix, "s000", alphas),
        "georisk": georisk_table(matrix, alphas),
        "tstar": tstar_table(matrix, alphas),
    }


def loop(matrix: pd.DataFrame, alphas) -> dict:
    """The straightforward way: one pandas Series per system and α."""
    base = matrix.loc["s000"]
    c = matrix.shape[1]
    risk_rows, topic_rows, tstar_rows, geo_rows = [], [], [], []
    for system in matrix.index.drop("s000"):
        delta = matrix.loc[system] - base
        for alpha in alphas:
            x = delta.where(delta >= 0, (1 + alpha) * delta)
            se = x.std() / np.sqrt(c)
            loo = pd.Series([x.drop(topic).mean() for topic in x.index], index=x.index)
            jack = np.sqrt((c - 1) / c * ((loo - loo.mean()) ** 2).sum())
            t = x.mean() / se
            risk_rows.append((system, alpha, x.mean(), t, 2 * stats.t.sf(abs(t), c - 1), se, jack))
            pseudo = c * x.mean() - (c - 1) * loo
            for topic in x.index:
                topic_rows.append(
                    (system, topic, alpha, x[topic] / x.std(), (pseudo[topic] - pseudo.mean()) / pseudo.std())
                )
    for name, reference in (("mean", matrix.mean()), ("median", matrix.median()), ("max", matrix.max())):
        for system in matrix.index:
            delta = matrix.loc[system] - reference
            for alpha in alphas:
                x = delta.where(delta >= 0, (1 + alpha) * delta)
                tstar_rows.append((system, name, alpha, x.mean(), x.mean() / (x.std() / np.sqrt(c))))
    total = matrix.values.sum()
    for system in matrix.index:
        for alpha in alphas:
            z_sum = 0.0
            for topic in matrix.columns:
                e = matrix.loc[system].sum() * matrix[topic].sum() / total
                z = (matrix.loc[system, topic] - e) / np.sqrt(e) if e > 0 else 0.0
                z_sum += z if z >= 0 else (1 + alpha) * z
            geo_rows.append((system, alpha, z_sum, np.sqrt(matrix.loc[system].mean() * stats.norm.cdf(z_sum / c))))
    return {"risk": risk_rows, "topics": topic_rows, "tstar": tstar_rows, "georisk": geo_rows}


def check(fast: dict, slow: dict) -> None:
    risk = fast["risk"]
    np.testing.assert_allclose(
        risk.sort_values(["system", "alpha"])[["urisk", "trisk", "p_value", "se", "se_jackknife"]],
        np.array(sorted(slow["risk"]))[:, 2:].astype(float),
        rtol=1e-8,
        atol=1e-12,
    )
    geo = fast["georisk"].sort_values(["system", "alpha"])[["zrisk", "georisk"]].to_numpy()
    np.testing.assert_allclose(geo, np.array(sorted(slow["georisk"]))[:, 2:].astype(float), rtol=1e-8)
    assert len(fast["topics"]) == len(slow["topics"]) and len(fast["tstar"]) == len(slow["tstar"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=100)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--alphas", type=int, default=21)
    args = parser.parse_args()
    rng = np.random.default_rng(11)
    matrix = pd.DataFrame(
        rng.beta(0.8, 2.0, (args.systems, args.topics)),
        index=[f"s{i:03d}" for i in range(args.systems)],
        columns=[str(t) for t in range(1, args.topics + 1)],
    )
    alphas = np.linspace(0, 20, args.alphas)
    vectorised(matrix, alphas)  # warm-up (imports, caches)
    started = time.perf_counter()
    fast = vectorised(matrix, alphas)
    fast_time = time.perf_counter() - started
    started = time.perf_counter()
    slow = loop(matrix, alphas)
    slow_time = time.perf_counter() - started
    check(fast, slow)
    print(f"{args.systems} systems x {args.topics} topics x {args.alphas} α; {os.cpu_count()} cores; results agree")
    print(f"{'pandas loop (per system, per α)':<36} {slow_time:8.3f} s   1.0x")
    print(
        f"{'riskreport (vectorised)':<36} {fast_time:8.3f} s   {slow_time / fast_time:.0f}x faster   "
        f"(target < 0.5 s, >= 20x)"
    )


if __name__ == "__main__":
    main()
