"""Bootstrap confidence intervals of URisk (docs/measures/inference.md): Student-t, basic, percentile,
bootstrap-t and BCa, for every challenger and α at once.

One set of bootstrap resamples serves every system and α (arrays shaped (alphas, systems, topics)); it is
drawn from a seeded generator and processed in chunks so memory stays bounded (100,000 draws x 100 systems
x 6 α fit in a few hundred MB). Sign convention: standard (higher is better); a CI entirely below 0 is a
significant risk, entirely above 0 a significant reward.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import special, stats

from riskreport.stats.corrections import adjusted_levels
from riskreport.stats.resampling import DrawnWeights, Weights, count_blocks, weight_rows
from riskreport.stats.risk import baselines_of, challenger_deltas, risk_adjusted, several, system_row

CI_METHODS = ("student_t", "basic", "percentile", "bootstrap_t", "bca")


BOOTSTRAP_COLUMNS = [
    "system",
    "baseline",
    "measure",
    "alpha",
    "method",
    "level",
    "adjusted_level",
    "ci_low",
    "ci_high",
    "verdict",
]


MEMORY_BUDGET = 64_000_000  # floats held at once for bootstrap statistics (~512 MB)


def resample_counts(n_topics: int, samples: int, rng: np.random.Generator) -> np.ndarray:
    """One set of bootstrap resamples as counts: row b says how often each topic was drawn (B x c).

    Drawn in blocks of resamples (`riskreport.stats.resampling.count_blocks`); the generator yields the
    same numbers in blocks as in one call, so the counts are the same. The report's own tables never hold
    the counts: they stream the weights (`DrawnWeights`).
    """
    counts = np.empty((samples, n_topics))
    for start, block in count_blocks(n_topics, samples, rng):
        counts[start : start + len(block)] = block
    return counts


def resample_weights(counts: np.ndarray) -> np.ndarray:
    """The counts as the weights of a bootstrap mean, c x B: x @ weights are the B resampled means of x."""
    return np.ascontiguousarray(counts.T) / counts.shape[1]


def drawn_weights(n_topics: int, samples: int, rng: np.random.Generator) -> np.ndarray:
    """`resample_weights(resample_counts(n_topics, samples, rng))`, value for value, without holding the counts:
    each block of resamples is divided into place (c x B held whole; `DrawnWeights` holds one block)."""
    weights = np.empty((n_topics, samples))
    for start, block in count_blocks(n_topics, samples, rng):
        weights[:, start : start + len(block)] = block.T / n_topics
    return weights


def bootstrap_moments(
    x: np.ndarray,
    counts: np.ndarray | None,
    chunk: int | None = None,
    with_se: bool = True,
    weights: Weights | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Bootstrap means (and standard errors, if `with_se`) of x (..., c) for every resample: arrays (..., B).

    Computed as matrix products with the resample weights, in chunks over the leading rows so memory
    stays within `MEMORY_BUDGET` floats, and block by block over the resamples. `weights`:
    `resample_weights(counts)` (or `drawn_weights`) when the caller holds them already (`counts` then None),
    or a `DrawnWeights` stream, regenerated from its seed for each chunk of rows (one chunk unless the rows'
    B means exceed the budget), so that no c x B array is held.
    """
    lead = x.shape[:-1]
    flat = x.reshape(-1, x.shape[-1])
    source = resample_weights(cast(np.ndarray, counts)) if weights is None else weights
    c, samples = source.shape
    rows = chunk or max(1, MEMORY_BUDGET // (2 * samples))
    if flat.shape[0] <= rows and not with_se and not isinstance(source, DrawnWeights):  # one block: no copy
        return (flat @ source).reshape(lead + (samples,)), None
    means = np.empty((flat.shape[0], samples))
    ses = np.empty((flat.shape[0], samples)) if with_se else None
    for start in range(0, flat.shape[0], rows):
        block = flat[start : start + rows]
        squares = block**2 if ses is not None else None
        for first, w in weight_rows(source):  # w: k resamples x c topics
            columns = slice(first, first + len(w))
            m = (w @ block.T).T
            means[start : start + rows, columns] = m
            if ses is not None:
                variance = (w @ cast(np.ndarray, squares).T).T
                variance -= m**2
                np.maximum(variance, 0.0, out=variance)
                ses[start : start + rows, columns] = np.sqrt(variance * (c / (c - 1) / c)) if c > 1 else np.nan
    return means.reshape(lead + (samples,)), None if ses is None else ses.reshape(lead + (samples,))


def _order_quantiles(values: np.ndarray, qs: list[np.ndarray], valid: np.ndarray | None = None) -> list[np.ndarray]:
    """Linear-interpolated quantiles (numpy's default) of each row of `values` (R, B), a different
    q per row for each array in `qs`; one partial sort (np.partition) per row instead of a full sort.
    `valid` (R,): the quantiles of each row's first `valid` order statistics (its other values +inf: what
    `_quantiles` computes of a sorted row with NaNs last); NaN where a row has none."""
    samples = values.shape[-1]
    last = np.full(len(values), samples - 1) if valid is None else np.maximum(valid - 1, 0)
    positions = [np.clip(q, 0, 1) * last for q in qs]
    lows = [np.floor(p).astype(int) for p in positions]
    highs = [np.minimum(low + 1, last) for low in lows]
    kth = np.concatenate([np.stack(lows, axis=1), np.stack(highs, axis=1)], axis=1)  # (R, 2Q)
    picked = np.empty(kth.shape)

    def select(rows: range) -> None:
        for r in rows:
            picked[r] = np.partition(values[r], np.unique(kth[r]))[kth[r]]

    select(range(len(values)))
    n = len(qs)
    with np.errstate(invalid="ignore"):  # a row without valid values (+inf only): NaN below
        out = [
            picked[:, i] * (1 - (positions[i] - lows[i])) + picked[:, n + i] * (positions[i] - lows[i])
            for i in range(n)
        ]
    return out if valid is None else [np.where(valid > 0, q, np.nan) for q in out]


def _quantiles(ordered: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Linear-interpolated quantiles of rows already sorted along the last axis (NaNs last, ignored),
    a different q per row (as numpy's default percentile)."""
    valid = np.isfinite(ordered).sum(axis=-1)
    position = np.clip(q, 0, 1) * np.maximum(valid - 1, 0)
    low = np.floor(position).astype(int)
    high = np.minimum(low + 1, np.maximum(valid - 1, 0))
    frac = position - low
    take = lambda idx: np.take_along_axis(ordered, idx[..., None], axis=-1)[..., 0]  # noqa: E731
    return take(low) * (1 - frac) + take(high) * frac


def acceleration(x: np.ndarray) -> np.ndarray:
    """BCa acceleration a = Σ L³ / (6 (Σ L²)^{3/2}) from leave-one-out jackknife influence values L."""
    c = x.shape[-1]
    loo = (x.sum(axis=-1, keepdims=True) - x) / (c - 1)
    influence = loo.mean(axis=-1, keepdims=True) - loo
    denominator = 6 * (influence**2).sum(axis=-1) ** 1.5
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, (influence**3).sum(axis=-1) / np.where(denominator > 0, denominator, 1), 0.0)


def bias_correction(means: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """BCa bias correction z0 = Φ⁻¹(#{θ*_b < θ̂}/B) (Efron & Tibshirani 1993, §14.3) of each row of
    bootstrap means (..., B) around θ̂ (..., 1).

    The share is kept within [0.5/B, 1 − 0.5/B] so that z0 stays finite when no (or every) θ*_b
    falls below θ̂.
    """
    samples = means.shape[-1]
    share = np.clip((means < theta).sum(axis=-1) / samples, 0.5 / samples, 1 - 0.5 / samples)
    return special.ndtri(share)


def confidence_intervals(
    x: np.ndarray,
    levels: Sequence[float] | np.ndarray,
    counts: np.ndarray | None,
    methods: Sequence[str] = CI_METHODS,
    workers: int = 1,
    weights: Weights | None = None,
) -> dict[str, np.ndarray]:
    """CIs of the mean of x (..., c) for each method and level: {method: array (..., levels, 2)}.

    Student-t, basic, percentile, bootstrap-t and BCa (Efron & Tibshirani 1993; R `boot`;
    docs/measures/inference.md: z0 = Φ⁻¹(#{θ* < θ̂}/B), acceleration from the jackknife, one α̃ per tail, limits
    are percentiles of θ*). Where x does not vary every interval is [θ̂, θ̂]. The bootstrap means (and SEs)
    of as many rows as `MEMORY_BUDGET` allows are computed in one pass over the resamples (`weights`: an
    array c x B, or a `DrawnWeights` stream that never holds c x B), then their intervals in ~8 MB chunks
    of rows; `workers` threads process the chunks (numpy releases the GIL). The caller decides how many:
    one by default.
    """
    lead, c = x.shape[:-1], x.shape[-1]
    flat = x.reshape(-1, c)
    level_grid = np.asarray(levels, dtype=float)
    source = resample_weights(cast(np.ndarray, counts)) if weights is None else weights  # once, for every block
    samples = source.shape[1]
    workers = max(1, int(workers))
    with_se = "bootstrap_t" in methods
    group = max(1, MEMORY_BUDGET // (4 * (1 + with_se) * samples))  # rows whose B means (and SEs) are held at once
    rows = max(1, min(group // workers, 1_000_000 // samples))  # ~8 MB blocks
    parts = []
    for g in range(0, len(flat), group):
        xs = flat[g : g + group]
        if c < 2:  # one topic: no interval (NaN, verdict inconclusive)
            parts.append({m: np.full((len(xs), len(level_grid), 2), np.nan) for m in CI_METHODS if m in methods})
            continue
        means, ses = bootstrap_moments(xs, None, with_se=with_se, weights=source)
        chunks = [slice(i, i + rows) for i in range(0, len(xs), rows)]
        arguments = [(xs[r], level_grid, methods, means[r], None if ses is None else ses[r]) for r in chunks]
        with ThreadPoolExecutor(min(workers, len(chunks))) as pool:  # numpy releases the GIL
            parts += pool.map(lambda args: _interval_chunk(*args), arguments)
    return {m: np.concatenate([p[m] for p in parts]).reshape(lead + (len(level_grid), 2)) for m in parts[0]}


def _interval_chunk(
    x: np.ndarray, levels: np.ndarray, methods, means: np.ndarray, ses: np.ndarray | None
) -> dict[str, np.ndarray]:
    """The intervals of rows x (R, c) from their bootstrap means (R, B) and, for bootstrap-t, SEs (R, B)."""
    c = x.shape[-1]
    theta = x.mean(axis=-1)[:, None]  # (R, 1)
    se = (x.std(axis=-1, ddof=1) / np.sqrt(c))[:, None]
    lower_q, upper_q = (1 - levels) / 2, (1 + levels) / 2  # (L,)
    out: dict[str, np.ndarray] = {}
    if "student_t" in methods:
        half = stats.t.ppf(upper_q, c - 1) * se
        out["student_t"] = np.stack([theta - half, theta + half], -1)
    if ses is not None:  # computed when the bootstrap-t interval is asked for
        with np.errstate(divide="ignore", invalid="ignore"):  # SE* = 0: no t*, ordered last (+inf) and not counted
            t_star = np.where(ses > 0, (means - theta) / np.where(ses > 0, ses, 1), np.inf)
        each = [np.full(len(x), q) for q in (*lower_q, *upper_q)]  # the order statistics of `_quantiles`, by partition
        t_q = _order_quantiles(t_star, each, valid=(ses > 0).sum(axis=-1))
        t_lo, t_hi = np.stack(t_q[: len(levels)], -1), np.stack(t_q[len(levels) :], -1)
        out["bootstrap_t"] = np.stack([theta - t_hi * se, theta - t_lo * se], -1)
        del t_star
    wanted: dict[str, np.ndarray] = {}  # name -> q per row (R,)
    for i in range(len(levels)):
        if "percentile" in methods or "basic" in methods:
            wanted[f"lo{i}"] = np.full(len(x), lower_q[i])
            wanted[f"hi{i}"] = np.full(len(x), upper_q[i])
    if "bca" in methods:
        z0 = bias_correction(means, theta)
        a = acceleration(x)
        for i in range(len(levels)):
            for name, q in (("bca_lo", lower_q[i]), ("bca_hi", upper_q[i])):
                z = z0 + special.ndtri(q)
                wanted[f"{name}{i}"] = special.ndtr(z0 + z / (1 - a * z))
    if wanted:
        values = dict(zip(wanted, _order_quantiles(means, list(wanted.values()))))
        level_stack = lambda prefix: np.stack([values[f"{prefix}{i}"] for i in range(len(levels))], -1)  # noqa: E731
        if "percentile" in methods or "basic" in methods:
            lo, hi = level_stack("lo"), level_stack("hi")
            if "percentile" in methods:
                out["percentile"] = np.stack([lo, hi], -1)
            if "basic" in methods:
                out["basic"] = np.stack([2 * theta - hi, 2 * theta - lo], -1)
        if "bca" in methods:
            out["bca"] = np.stack([level_stack("bca_lo"), level_stack("bca_hi")], -1)
    constant = (se == 0)[..., None]
    return {m: np.where(constant, theta[..., None], out[m]) for m in CI_METHODS if m in out and m in methods}


def ci_verdict(low: ArrayLike, high: ArrayLike) -> np.ndarray:
    """`risk` when the CI is entirely below 0, `reward` when entirely above, else `inconclusive`."""
    low, high = np.asarray(low), np.asarray(high)
    return np.select([high < 0, low > 0], ["risk", "reward"], "inconclusive")


def bootstrap_table(
    matrix: pd.DataFrame,
    baseline: str | Sequence[str],
    alphas: Sequence[float],
    measure: str = "",
    levels: Sequence[float] = (0.95, 0.999),
    samples: int = 10_000,
    seed: int = 2026,
    correction: str = "holm",
    methods: Sequence[str] = CI_METHODS,
    workers: int = 1,
    family: int | None = None,
) -> pd.DataFrame:
    """Tidy CIs of URisk (the mean risk-adjusted difference) per challenger, α, method and level.

    Columns `BOOTSTRAP_COLUMNS`; `adjusted_level` is the level actually used (Bonferroni
    widens it to 1 − (1 − level)/k for k comparisons: the challengers, or `family`). `workers`:
    threads of `confidence_intervals`. Several baselines: each one's rows in turn, Bonferroni over
    every baseline's challengers.
    """
    if several(baseline):
        names = baselines_of(baseline)
        k = (len(matrix) - 1) * len(names)
        return pd.concat(
            [
                bootstrap_table(
                    matrix, b, alphas, measure, levels, samples, seed, correction, methods, workers, family=k
                )
                for b in names
            ],
            ignore_index=True,
        )
    challengers, _, x = challenger_deltas(matrix, cast(str, baseline), alphas)  # (A, S, T)
    alphas = [float(a) for a in alphas]
    used = adjusted_levels(levels, correction, family or len(challengers))
    weights = DrawnWeights(x.shape[-1], samples, seed)  # streamed: memory flat in the number of topics
    intervals = confidence_intervals(x, used, None, methods, workers, weights=weights)
    parts = []
    for method, ci in intervals.items():  # ci: (A, S, L, 2)
        a_idx, s_idx, l_idx = np.meshgrid(range(len(alphas)), range(len(challengers)), range(len(used)), indexing="ij")
        parts.append(
            pd.DataFrame(
                {
                    "system": np.asarray(challengers)[s_idx.ravel()],
                    "baseline": baseline,
                    "measure": measure,
                    "alpha": np.asarray(alphas)[a_idx.ravel()],
                    "method": method,
                    "level": np.asarray(levels, dtype=float)[l_idx.ravel()],
                    "adjusted_level": used[l_idx.ravel()],
                    "ci_low": ci[..., 0].ravel(),
                    "ci_high": ci[..., 1].ravel(),
                }
            )
        )
    table = pd.concat(parts, ignore_index=True)
    table["verdict"] = ci_verdict(table["ci_low"], table["ci_high"])
    return table


def bootstrap_distribution(
    matrix: pd.DataFrame, baseline: str, system: str, alpha: float, samples: int = 10_000, seed: int = 2026
) -> np.ndarray:
    """The bootstrap means of one challenger's URisk_α, from the same resamples as `bootstrap_table`."""
    delta = system_row(matrix, system, "system") - system_row(matrix, baseline)
    x = risk_adjusted(delta.to_numpy(dtype=float), [alpha])[0]
    return bootstrap_moments(x, None, with_se=False, weights=DrawnWeights(x.shape[-1], samples, seed))[0]
