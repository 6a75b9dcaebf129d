"""Inference on risk (docs/measures/inference.md): paired tests, Tukey HSD and diagnostics here, bootstrap
CIs in `riskreport.stats.bootstrap` (offered here too: templates call `rr.inference.bootstrap_table`).

Every function works on the risk-adjusted differences x = l_α(Δ) of all challengers at all α
at once (arrays shaped (alphas, systems, topics)). Sign convention: standard (higher is better).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import cast

import numpy as np
import pandas as pd
from scipy import stats

from riskreport.stats.bootstrap import (
    BOOTSTRAP_COLUMNS,
    CI_METHODS,
    MEMORY_BUDGET,
    acceleration,
    bootstrap_distribution,
    bootstrap_moments,
    bootstrap_table,
    ci_verdict,
    confidence_intervals,
    resample_counts,
)
from riskreport.stats.corrections import adjust_pvalues
from riskreport.stats.resampling import all_flips, flip_blocks
from riskreport.stats.risk import (
    FLOAT_NOISE,
    baselines_of,
    challenger_deltas,
    family_adjusted,
    long_frame,
    risk_adjusted,
    risk_adjusted_scores,
    several,
    trisk,
)
from riskreport.stats.studentized_range import studentized_range_ppf, studentized_range_sf

__all__ = [
    "TESTS",
    "TEST_COLUMNS",
    "sign_test",
    "wilcoxon_test",
    "sign_flips",
    "randomisation_test",
    "risk_randomisation_test",
    "statistic_direction",
    "tests_table",
    "diagnostics_table",
    "tukey_hsd",
    # the bootstrap, whose home was this module before it was split
    "BOOTSTRAP_COLUMNS",
    "CI_METHODS",
    "MEMORY_BUDGET",
    "acceleration",
    "bootstrap_distribution",
    "bootstrap_moments",
    "bootstrap_table",
    "ci_verdict",
    "confidence_intervals",
    "resample_counts",
]

TESTS = ("t", "sign", "wilcoxon", "randomisation")
TEST_COLUMNS = [
    "system",
    "baseline",
    "measure",
    "alpha",
    "test",
    "statistic",
    "direction",
    "p_value",
    "p_adjusted",
    "correction",
]


# ---------------------------------------------------------------------------------------------
# Paired tests


def sign_test(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact two-sided sign test, zeros dropped: (wins, p = min(1, 2·P(X ≤ min(wins, losses))))."""
    wins, losses = (x > 0).sum(axis=-1), (x < 0).sum(axis=-1)
    n = wins + losses
    p = np.where(n > 0, np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(wins, losses), n, 0.5)), 1.0)
    return wins.astype(float), p


def wilcoxon_test(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wilcoxon signed-rank test, zeros dropped, x rounded to 10 decimals first: (W⁺, two-sided p).

    As `scipy.stats.wilcoxon(nonzero, zero_method="wilcox")` row by row: where scipy uses its normal
    approximation (more than 50 non-zero differences, or more than 13 with ties) the statistic, tie
    correction and p-value are computed here for every row at once; the few small rows (exact or
    permutation p-values) go to scipy.
    """
    rounded = np.round(x, 10)
    flat = rounded.reshape(-1, rounded.shape[-1])
    rows, c = flat.shape
    n = np.count_nonzero(flat, axis=-1)
    magnitude = np.where(flat != 0, np.abs(flat), -1.0)  # zeros rank below everything
    ranks = stats.rankdata(magnitude, axis=-1) - (c - n)[:, None]  # ranks among the non-zero ones
    w_plus = np.where(flat > 0, ranks, 0.0).sum(axis=-1)
    ordered = np.sort(magnitude, axis=-1)
    new_value = np.ones((rows, c), dtype=bool)
    new_value[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    starts = np.flatnonzero(new_value.reshape(-1))
    sizes = np.diff(np.r_[starts, rows * c]).astype(float)
    nonzero_run = ordered.reshape(-1)[starts] >= 0
    ties = np.bincount(starts[nonzero_run] // c, (sizes**3 - sizes)[nonzero_run], minlength=rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt((n * (n + 1.0) * (2.0 * n + 1.0) - ties / 2) / 24)
        z = (w_plus - n * (n + 1.0) / 4) / se
    p = 2 * stats.norm.sf(np.abs(z))
    for i in np.flatnonzero((n <= 50) & ((n <= 13) | (ties == 0))):  # scipy's exact or permutation p
        nonzero = flat[i][flat[i] != 0]
        p[i] = stats.wilcoxon(nonzero, zero_method="wilcox").pvalue if len(nonzero) else 1.0
    p[n == 0] = 1.0
    return w_plus.reshape(x.shape[:-1]), p.reshape(x.shape[:-1])


def sign_flips(n_topics: int, samples: int, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """Sign vectors for the randomisation test: all 2^c when 2^c ≤ samples (exact), else `samples` random ones
    (`rng.choice([-1, 1], (B, c))`). The test itself streams them (`_randomisation`); this holds them whole."""
    if 2**n_topics <= samples:
        return all_flips(n_topics), True
    flips = np.empty((samples, n_topics))
    for start, block in flip_blocks(n_topics, samples, rng):
        flips[start : start + len(block)] = block
    return flips, False


def randomisation_test(x: np.ndarray, samples: int = 10_000, seed: int = 2026) -> np.ndarray:
    """Two-sided sign-flip randomisation test of mean(x) = 0; exact when 2^c ≤ samples.

    Exact: p = #{|mean*| ≥ |mean|}/2^c. Sampled: p = (1 + #{...})/(1 + samples).
    """
    flat = x.reshape(-1, x.shape[-1])
    return _randomisation(flat[None], np.ones((1, 1)), flat.mean(axis=-1)[None], samples, seed).reshape(x.shape[:-1])


def risk_randomisation_test(
    delta: np.ndarray, alphas: Sequence[float], samples: int = 10_000, seed: int = 2026
) -> np.ndarray:
    """`randomisation_test` of the risk-adjusted differences l_α(Δ) at every α, shape (A, S), from Δ (S, T).

    Flipping signs is linear, and l_α(Δ) = max(Δ, 0) + (1+α)·min(Δ, 0): the flipped means at every α
    come from the two products max(Δ, 0)·F and min(Δ, 0)·F, one pair for the whole α grid instead of
    one product per α (21× fewer multiplications for a 21-value grid). Same sign vectors, same p-values.
    """
    delta = np.asarray(delta, dtype=float)
    grid = np.asarray(alphas, dtype=float)
    parts = np.stack([np.maximum(delta, 0.0), np.minimum(delta, 0.0)])  # (2, S, T): gains, losses
    weights = np.column_stack([np.ones_like(grid), 1.0 + grid])  # (A, 2)
    return _randomisation(parts, weights, risk_adjusted(delta, alphas).mean(axis=-1), samples, seed)


def _randomisation(parts: np.ndarray, weights: np.ndarray, observed: np.ndarray, samples: int, seed: int) -> np.ndarray:
    """p-values (A, S) of the `observed` means (A, S) of Σ_k weights[a, k]·parts[k] under sign flips of the
    topics: parts (K, S, T) are flipped together and each flipped product is shared by every row a.

    The sign vectors are streamed a block at a time (`riskreport.stats.resampling`), so memory does not
    grow with samples x topics; the count of extreme flipped means is summed over the blocks.
    """
    c = parts.shape[-1]
    exact = 2**c <= samples
    blocks = iter([(0, all_flips(c))]) if exact else flip_blocks(c, samples, np.random.default_rng(seed))
    flipped = 2**c if exact else samples
    extreme = np.zeros(observed.shape)
    for _, flips in blocks:
        step = max(1, MEMORY_BUDGET // (len(flips) * len(parts)))
        for start in range(0, observed.shape[1], step):
            part = slice(start, start + step)
            products = [(flips @ p[part].T).T / c for p in parts]  # flips k x c: rows keep the product fast
            for a, row in enumerate(weights):
                means = sum(w * product for w, product in zip(row, products))
                extreme[a, part] += (np.abs(means) >= np.abs(observed[a, part])[:, None] - 1e-12).sum(axis=1)
    return extreme / flipped if exact else (1 + extreme) / (1 + flipped)


def statistic_direction(test: str, statistic: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Where a test's own statistic points, per row of x (..., topics): +1 the challenger is better, −1 worse, 0
    neither (or undefined). A significant test reads its direction from here, never from another statistic.

    t: the sign of TRisk (0 where undefined); sign test: wins against losses (zeros dropped), whatever the size of
    the differences, so the same at every α; Wilcoxon: W⁺ against W⁻ = n(n + 1)/2 − W⁺ (n non-zero differences
    after the test's rounding); randomisation: the sign of the mean (URisk).
    """
    statistic = np.asarray(statistic, dtype=float)
    if test == "sign":
        return np.sign(statistic - (x < 0).sum(axis=-1))  # wins − losses
    if test == "wilcoxon":
        n = np.count_nonzero(np.round(x, 10), axis=-1)
        return np.sign(2 * statistic - n * (n + 1) / 2)
    return np.sign(np.nan_to_num(statistic))


def tests_table(
    matrix: pd.DataFrame,
    baseline: str | Sequence[str],
    alphas: Sequence[float],
    measure: str = "",
    correction: str = "holm",
    samples: int = 10_000,
    seed: int = 2026,
) -> pd.DataFrame:
    """Paired tests of every challenger at every α (columns `TEST_COLUMNS`).

    t-test (statistic TRisk), sign test (wins), Wilcoxon (W⁺), randomisation (mean); p-values
    adjusted across the challengers for each α and test with `correction`. `direction` is where the
    test's own statistic points (`statistic_direction`): a significant test is a risk when it is −1. Several baselines:
    each one's rows in turn, adjusted across the whole family (every baseline's challengers).
    """
    if several(baseline):
        table = pd.concat(
            [tests_table(matrix, b, alphas, measure, "none", samples, seed) for b in baselines_of(baseline)],
            ignore_index=True,
        )
        table["p_adjusted"] = family_adjusted(table, "p_value", correction, ["test", "alpha"])
        table["correction"] = correction
        return table
    challengers, delta, x = challenger_deltas(matrix, cast(str, baseline), alphas)
    alphas = [float(a) for a in alphas]
    paired_t = trisk(x)  # t = TRisk, undefined (NaN) where SE = 0 or one topic
    results = {
        "t": (paired_t["trisk"], paired_t["p_value"]),
        "sign": sign_test(x),
        "wilcoxon": wilcoxon_test(x),
        "randomisation": (x.mean(axis=-1), risk_randomisation_test(delta, alphas, samples, seed)),
    }
    parts = []
    for test, (statistic, p) in results.items():
        direction = statistic_direction(test, statistic, x)
        adjusted = adjust_pvalues(p, correction)  # per α, across challengers
        parts.append(
            long_frame(
                {"alpha": alphas, "system": challengers},
                TEST_COLUMNS,
                baseline=baseline,
                measure=measure,
                test=test,
                statistic=statistic,
                direction=direction,
                p_value=p,
                p_adjusted=adjusted,
                correction=correction,
            )
        )
    return pd.concat(parts, ignore_index=True)


# ---------------------------------------------------------------------------------------------
# Diagnostics, Tukey HSD


def diagnostics_table(matrix: pd.DataFrame, baseline: str, alphas: Sequence[float]) -> pd.DataFrame:
    """Shape of the risk-adjusted differences per challenger and α: skewness, excess kurtosis,
    Shapiro–Wilk W and p, and the effect size d_z = mean/sd (at α = 0: mean(Δ)/sd(Δ))."""
    challengers, _, x = challenger_deltas(matrix, baseline, alphas)
    alphas = [float(a) for a in alphas]
    c = x.shape[-1]
    sd = x.std(axis=-1, ddof=1) if c > 1 else np.full(x.shape[:-1], np.nan)
    varies = sd > FLOAT_NOISE * np.sqrt(c) * np.maximum(1.0, np.abs(x.mean(axis=-1)))  # as TRisk: not float noise
    skew, kurt = np.full(varies.shape, np.nan), np.full(varies.shape, np.nan)
    if varies.any():
        skew[varies] = stats.skew(x[varies], axis=-1, bias=False)
        kurt[varies] = stats.kurtosis(x[varies], axis=-1, bias=False)
    d_z = np.where(varies, x.mean(axis=-1) / np.where(varies, sd, 1), np.nan)
    shapiro = np.full(x.shape[:-1] + (2,), np.nan)
    for idx in zip(*np.nonzero(varies)):
        if x.shape[-1] >= 3:
            result = stats.shapiro(x[idx])
            shapiro[idx] = (result.statistic, result.pvalue)
    return long_frame(
        {"alpha": alphas, "system": challengers},
        ["system", "alpha", "skewness", "excess_kurtosis", "shapiro_w", "shapiro_p", "d_z"],
        skewness=skew,
        excess_kurtosis=kurt,
        shapiro_w=shapiro[..., 0],
        shapiro_p=shapiro[..., 1],
        d_z=d_z,
    )


@functools.lru_cache(maxsize=32)
def _studentized_range_grid(k: int, df: float) -> tuple[np.ndarray, np.ndarray]:
    grid = np.concatenate([np.linspace(0, 8, 81), np.linspace(8.25, 16, 32)])
    return grid, np.clip(studentized_range_sf(grid, k, df), 1e-300, 1)


@functools.lru_cache(maxsize=32)
def _studentized_range_critical(level: float, k: int, df: float) -> float:
    return studentized_range_ppf(level, k, df)


def _studentized_range_sf(q: np.ndarray, k: int, df: float) -> np.ndarray:
    """P(Q > q) of the studentized range, interpolated (in log space) on a dense grid of exact values."""
    from scipy.interpolate import PchipInterpolator

    grid, values = _studentized_range_grid(int(k), float(df))
    q = np.asarray(q, dtype=float)
    out = np.exp(PchipInterpolator(grid, np.log(values))(np.clip(q, 0, grid[-1])))
    return np.where(q > grid[-1], 0.0, np.minimum(out, 1.0))


def tukey_hsd(matrix: pd.DataFrame, baseline: str, alphas: Sequence[float], sig_level: float = 0.05) -> pd.DataFrame:
    """All-pairs Tukey HSD on the risk-adjusted scores (thesis Eq. 4.5) at each α, with the error term
    of the two-way (system + topic) ANOVA: MSE = SS_residual / ((k − 1)(c − 1)).

    Columns `alpha, system_a, system_b, diff, ci_low, ci_high, p_value, significant`; diff =
    mean_a − mean_b. p-values interpolate the studentized range (`stats.studentized_range`, equal to scipy's
    within 1e-11) on a grid (|error| < 2e-4).
    """
    scores = risk_adjusted_scores(matrix, baseline, alphas)
    systems = list(matrix.index)
    k, c = matrix.shape
    df = (k - 1) * (c - 1)  # 0 for one topic: no error term, NaN intervals
    critical = _studentized_range_critical(1 - sig_level, k, df) if df > 0 else np.nan
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    ia, ib = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    parts = []
    for alpha, frame in scores.groupby("alpha", sort=True):
        x = frame["score"].to_numpy().reshape(k, c)
        resid = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + x.mean()
        mse = (resid**2).sum() / df if df > 0 else np.nan
        means = x.mean(axis=1)
        diff = means[ia] - means[ib]
        half = critical * np.sqrt(mse / c)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.abs(diff) / np.sqrt(mse / c) if mse > 0 else np.where(diff != 0, np.inf, 0.0)
        p = _studentized_range_sf(q, k, df) if df > 0 else np.full(len(diff), np.nan)
        parts.append(
            pd.DataFrame(
                {
                    "alpha": alpha,
                    "system_a": np.asarray(systems)[ia],
                    "system_b": np.asarray(systems)[ib],
                    "diff": diff,
                    "ci_low": diff - half,
                    "ci_high": diff + half,
                    "p_value": p,
                }
            )
        )
    table = pd.concat(parts, ignore_index=True)
    table["significant"] = (table["ci_low"] > 0) | (table["ci_high"] < 0)
    return table
