"""The single-baseline risk measures on arrays (Wang et al. 2012; Dinçer, Macdonald & Ounis 2014;
docs/measures/single-baseline.md): per-topic differences Δ, the risk-adjusted differences l_α(Δ), URisk, TRisk
with its jackknife SE, the report's verdict rule, and `long_frame`, which lays such arrays out as a tidy table.
`riskreport.stats.risk` builds its tables from these and exports them all under its own name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import special  # Student t as scipy.stats computes it (stdtr, stdtrit), without importing scipy.stats

from riskreport.errors import UnknownNameError
from riskreport.stats.corrections import adjust_pvalues

FLOAT_NOISE = 1e-15  # relative size below which a spread is float noise, not variation (TRisk undefined)


def long_frame(
    axes: dict[str, Sequence | np.ndarray], columns: Sequence[str] | None = None, **values: ArrayLike
) -> pd.DataFrame:
    """A tidy table over the product of `axes`, first axis slowest (numpy's C order).

    One key column per axis; one column per value: an array shaped like the axes (e.g. (α,
    system, topic)), or like their trailing part (repeated over the leading axes: per-system
    values for every α), or a scalar. `columns` orders the result (default: axes, then values).

    >>> long_frame({"alpha": [0, 1], "system": ["a", "b"]}, wins=[3, 4])["wins"].tolist()
    [3, 4, 3, 4]
    """
    shape = tuple(len(labels) for labels in axes.values())
    positions = np.indices(shape).reshape(len(shape), -1)
    table = {
        name: np.asarray(labels, dtype=object if not len(labels) else None)[index]
        for (name, labels), index in zip(axes.items(), positions)
    }
    for name, value in values.items():
        value = np.asarray(value)
        table[name] = np.broadcast_to(value, shape).reshape(-1) if value.ndim else value
    frame = pd.DataFrame(table)
    return frame[list(columns)] if columns is not None else frame


def deltas(matrix: pd.DataFrame, baseline: str | pd.Series) -> pd.DataFrame:
    """Per-topic differences Δ_j = x_sj − x_bj against a baseline system (or a per-topic Series)."""
    reference = system_row(matrix, baseline) if isinstance(baseline, str) else baseline
    return matrix - reference


def system_row(matrix: pd.DataFrame, system: str, role: str = "baseline") -> pd.Series:
    """The scores of one system (a row of the systems x topics `matrix`); `UnknownNameError` if it has none."""
    if system not in matrix.index:
        hint = (
            "The matrix looks transposed: rows must be systems and columns topics (use matrix.T)."
            if system in matrix.columns
            else "(rows of the systems x topics matrix)"
        )
        raise UnknownNameError(role, system, [str(s) for s in matrix.index], hint=hint)
    return matrix.loc[system]


def challengers(matrix: pd.DataFrame, baseline: str) -> list[str]:
    """The systems of `matrix` other than `baseline`, in matrix order (the baseline must be a row)."""
    system_row(matrix, baseline)
    return [s for s in matrix.index if s != baseline]


def challenger_deltas(
    matrix: pd.DataFrame, baseline: str, alphas: Sequence[float] = ()
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """What every single-baseline analysis starts from: the challengers, their Δ (S, T) against
    `baseline`, and the risk-adjusted differences l_α(Δ) (A, S, T) at `alphas`."""
    names = challengers(matrix, baseline)
    delta = deltas(matrix, baseline).loc[names].to_numpy(dtype=float)
    return names, delta, risk_adjusted(delta, [float(a) for a in alphas])


def risk_adjusted(delta: np.ndarray, alphas: Sequence[float]) -> np.ndarray:
    """Linear value function l_α(Δ) = Δ if Δ ≥ 0 else (1+α)·Δ (Wang et al. 2012; Dinçer, Macdonald & Ounis 2014; docs/measures/single-baseline.md).

    `delta` has shape (..., topics); the result has shape (len(alphas), ..., topics).
    """
    delta = np.asarray(delta, dtype=float)
    weights = 1.0 + np.asarray(alphas, dtype=float).reshape((-1,) + (1,) * delta.ndim)
    return np.where(delta < 0, weights * delta, delta)


def smooth_value(delta: np.ndarray) -> np.ndarray:
    """Smooth value function s(Δ) = 1.38426Δ³ − 0.51659Δ² + 0.11578Δ (thesis Eq. 3.6).

    Fitted for ERR@20 against indriCASP at r = 2 (α = 1) only; an overlay, not a default.
    """
    delta = np.asarray(delta, dtype=float)
    return 1.38426 * delta**3 - 0.51659 * delta**2 + 0.11578 * delta


def urisk(delta: np.ndarray, alphas: Sequence[float]) -> np.ndarray:
    """URisk_α = mean_j l_α(Δ_j) (Wang et al. 2012; gdeval `-riskAlpha`), shape (alphas, ...)."""
    return risk_adjusted(delta, alphas).mean(axis=-1)


def win_loss_ties(delta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts of Δ > 0, Δ < 0 and Δ = 0 along the topic axis."""
    delta = np.asarray(delta, dtype=float)
    return (delta > 0).sum(axis=-1), (delta < 0).sum(axis=-1), (delta == 0).sum(axis=-1)


def leave_one_out_means(x: np.ndarray) -> np.ndarray:
    """x̄_(i): the mean without topic i, for every topic (last axis)."""
    c = x.shape[-1]
    return (x.sum(axis=-1, keepdims=True) - x) / (c - 1)


def jackknife_se(x: np.ndarray) -> np.ndarray:
    """Tukey's jackknife SE of the mean: sqrt((c−1)/c · Σ_i (x̄_(i) − x̄_(·))²) (Dinçer et al. 2014, Eq. 14).

    Equals sd(x)/√c exactly for a mean; reports show both as a validity check.
    """
    c = x.shape[-1]
    if c < 2:
        return np.full(x.shape[:-1], np.nan)
    loo = leave_one_out_means(x)
    return np.sqrt((c - 1) / c * ((loo - loo.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1))


def t_critical(sig_level: float, n_topics: int) -> float:
    """Two-sided critical value of Student t with c − 1 degrees of freedom."""
    return float(special.stdtrit(n_topics - 1, 1 - sig_level / 2))  # scipy.stats.t.ppf


def trisk(x: np.ndarray) -> dict[str, np.ndarray]:
    """TRisk of risk-adjusted differences x (..., topics): URisk / SE with SE = sd(x)/√c (Dinçer et al. 2014, Eq. 10).

    Returns `urisk`, `se`, `se_jackknife`, `trisk` and the two-sided `p_value` (t, c − 1 df);
    where SE = 0 TRisk and p are NaN (undefined), never ±inf.
    """
    c = x.shape[-1]
    mean = x.mean(axis=-1)
    if c < 2:  # one topic: no spread to estimate
        undefined = np.full(mean.shape, np.nan)
        return {"urisk": mean, "se": undefined, "se_jackknife": undefined, "trisk": undefined, "p_value": undefined}
    se = x.std(axis=-1, ddof=1) / np.sqrt(c)
    defined = se > FLOAT_NOISE * np.maximum(1.0, np.abs(mean))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(defined, mean / np.where(defined, se, 1.0), np.nan)
    p = np.where(defined, 2 * special.stdtr(c - 1, -np.abs(np.nan_to_num(t))), np.nan)  # scipy.stats.t.sf
    return {"urisk": mean, "se": se, "se_jackknife": jackknife_se(x), "trisk": t, "p_value": p}


def rule_verdicts(direction, p_adjusted, sig_level: float) -> np.ndarray:
    """A test's verdict per row: `risk`/`reward` when `p_adjusted` < `sig_level` and the test's own statistic
    points down/up (`direction`: its sign, e.g. URisk or TRisk for the report's rule), `undefined` where the
    p-value is (TRisk undefined), else `inconclusive`."""
    direction, p = np.asarray(direction, dtype=float), np.asarray(p_adjusted, dtype=float)
    significant = p < sig_level
    return np.select(
        [np.isnan(p), significant & (direction < 0), significant & (direction > 0)],
        ["undefined", "risk", "reward"],
        "inconclusive",
    )


def several(baseline) -> bool:
    """Whether `baseline` names several baselines (a list, tuple or array) rather than one system label."""
    return isinstance(baseline, (list, tuple, pd.Index, np.ndarray))


def baselines_of(baseline: str | Sequence[str]) -> list[str]:
    """The baselines of a comparison: one name, or several (each once, in order)."""
    names: list[str] = list(dict.fromkeys(baseline)) if several(baseline) else [cast(str, baseline)]
    if not names:
        raise UnknownNameError("baseline", "", [], hint="Give at least one baseline.")
    return names


def family_adjusted(table: pd.DataFrame, column: str, correction: str, by: Sequence[str]) -> np.ndarray:
    """The p-values of `column` adjusted with `correction` within each group of `by` (e.g. per α across every
    baseline's challengers: the whole family of comparisons at once)."""
    adjusted = np.full(len(table), np.nan)
    for rows in table.groupby(list(by), sort=False).indices.values():
        adjusted[rows] = adjust_pvalues(table[column].to_numpy(dtype=float)[rows], correction)
    return adjusted
