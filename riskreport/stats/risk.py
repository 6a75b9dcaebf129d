"""Risk-sensitive measures (Dinçer, Macdonald & Ounis 2014; docs/measures/single-baseline.md; Dinçer, Macdonald & Ounis 2016; docs/measures/multiple-baselines.md), vectorised over systems x α x topics.

Sign convention ("standard", used by every function and CSV): higher is better. A negative
URisk/TRisk/ZRisk means the challenger loses to the baseline once losses are weighted by
(1 + α); GeoRisk lies in [0, 1] for scores in [0, 1], higher is better. `to_convention`
turns a table into the thesis's minus family (positive = risk) for display only.

Sources: Wang et al. SIGIR 2012 (URisk, FRisk/FReward); Dinçer, Macdonald & Ounis SIGIR 2014
(TRisk, jackknife SE, exploratory TR_i/TJ_i, T*Risk) and SIGIR 2016 (ZRisk, GeoRisk); Benham,
PhD thesis 2023 (minus family, smooth value function Eq. 3.6, risk-adjusted scores Eq. 4.5).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from riskreport.errors import UnknownNameError
from riskreport.options import CONVENTIONS, check_options  # noqa: F401 - CONVENTIONS: rr.risk.CONVENTIONS
from riskreport.stats.corrections import adjust_pvalues

RISK_COLUMNS = [
    "system",
    "baseline",
    "measure",
    "alpha",
    "urisk",
    "trisk",
    "p_value",
    "se",
    "se_jackknife",
    "wins",
    "losses",
    "ties",
    "frisk",
    "freward",
    "loss20",
]
TOPIC_COLUMNS = ["system", "baseline", "measure", "topic", "alpha", "delta", "x", "tr", "tj"]
GEORISK_COLUMNS = ["system", "measure", "alpha", "mean", "zrisk", "georisk"]
TSTAR_COLUMNS = ["system", "reference", "measure", "alpha", "urisk", "trisk", "p_value"]
FLOAT_NOISE = 1e-15  # relative size below which a spread is float noise, not variation (TRisk undefined)
SE_ZERO_NOTE = "SE = 0 (the risk-adjusted differences do not vary): TRisk is undefined"
ONE_TOPIC_NOTE = "one topic only: the SE needs at least 2 topics, so TRisk is undefined"


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
    return float(stats.t.ppf(1 - sig_level / 2, n_topics - 1))


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
    p = np.where(defined, 2 * stats.t.sf(np.abs(np.nan_to_num(t)), c - 1), np.nan)
    return {"urisk": mean, "se": se, "se_jackknife": jackknife_se(x), "trisk": t, "p_value": p}


def rule_verdicts(urisk, p_adjusted, sig_level: float) -> np.ndarray:
    """The report's rule per row: `risk`/`reward` when `p_adjusted` < `sig_level` (direction: the sign of
    URisk), `undefined` where the p-value is (TRisk undefined), else `inconclusive`."""
    urisk, p = np.asarray(urisk, dtype=float), np.asarray(p_adjusted, dtype=float)
    significant = p < sig_level
    return np.select(
        [np.isnan(p), significant & (urisk < 0), significant & (urisk > 0)],
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


def risk_table(
    matrix: pd.DataFrame,
    baseline: str | Sequence[str],
    alphas: Sequence[float],
    measure: str = "",
    sig_level: float = 0.05,
    correction: str = "holm",
) -> pd.DataFrame:
    """Single-baseline risk of every challenger at every α, tidy (columns `RISK_COLUMNS` + extras).

    URisk (Wang et al. 2012), TRisk with its two-sided p and parametric/jackknife SE
    (Dinçer et al. 2014), wins/losses/ties, FRisk = mean max(0, −Δ), FReward = mean max(0, Δ),
    `risk_reward` = FRisk/FReward, `loss20` = topics with x_b > 0 and (x_b − x_s)/x_b > 0.2.
    Extras: `p_adjusted` (TRisk's p adjusted across the challengers at each α with `correction`),
    `verdict` and `note` (why TRisk is undefined, when it is).

    `verdict` is the report's one rule (`riskreport.significance`): `risk`/`reward` when
    `p_adjusted` < `sig_level` (direction: the sign of URisk), `undefined` when TRisk is, else
    `inconclusive`; so it equals the report's verdicts.csv for the same challengers and
    `correction`. `correction="none"` gives the unadjusted verdict of each comparison alone.

    Several baselines (`baseline=["bm25", "dense"]`, Dinçer, Macdonald & Ounis 2016): the rows of
    each baseline one after the other, and the p-values adjusted across the whole family (every
    baseline's challengers) at each α.
    """
    if several(baseline):
        parts = [risk_table(matrix, b, alphas, measure, sig_level, "none") for b in baselines_of(baseline)]
        table = pd.concat(parts, ignore_index=True)
        table["p_adjusted"] = family_adjusted(table, "p_value", correction, ["alpha"])
        table["verdict"] = rule_verdicts(table["urisk"], table["p_adjusted"], sig_level)
        return table
    challengers, delta, x = challenger_deltas(matrix, cast(str, baseline), alphas)  # (S, T), (A, S, T)
    base = matrix.loc[baseline].to_numpy(dtype=float)
    alphas = [float(a) for a in alphas]
    result = trisk(x)  # each (A, S)
    wins, losses, ties = win_loss_ties(delta)
    frisk, freward = np.maximum(0, -delta).mean(axis=1), np.maximum(0, delta).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        relative_loss = np.where(base > 0, -delta / np.where(base > 0, base, 1.0), 0.0)
        ratio = np.where(freward > 0, frisk / np.where(freward > 0, freward, 1.0), np.nan)
    loss20 = (relative_loss > 0.2).sum(axis=1)
    table = long_frame(
        {"alpha": alphas, "system": challengers},
        RISK_COLUMNS + ["risk_reward"],
        baseline=baseline,
        measure=measure,
        **{k: result[k] for k in ("urisk", "trisk", "p_value", "se", "se_jackknife")},
        wins=wins,
        losses=losses,
        ties=ties,
        frisk=frisk,
        freward=freward,
        loss20=loss20,
        risk_reward=ratio,
    )
    table["p_adjusted"] = adjust_pvalues(result["p_value"], correction).reshape(-1)  # per α, across challengers
    table["verdict"] = rule_verdicts(table["urisk"], table["p_adjusted"], sig_level)
    table["note"] = np.where(
        table["verdict"] == "undefined", ONE_TOPIC_NOTE if delta.shape[1] < 2 else SE_ZERO_NOTE, ""
    )
    return table


def topic_risk(
    matrix: pd.DataFrame,
    baseline: str | Sequence[str],
    alphas: Sequence[float],
    measure: str = "",
    sig_level: float = 0.05,
) -> pd.DataFrame:
    """Exploratory per-topic risk (Dinçer et al. 2014, §4): TR_i = x_i / s_x and TJ_i = (ψ_i − ψ̄)/s_ψ.

    ψ_i = c·x̄ − (c−1)·x̄_(i) are the jackknife pseudo-values (Dinçer, Macdonald & Ounis 2014; docs/measures/single-baseline.md erratum: not the paper's
    Eq. 23). `flag` is `loss` when TR_i or TJ_i < −t_crit, `gain` when > t_crit, else ''.
    Columns `TOPIC_COLUMNS` + `flag`; NaN where s_x = 0 (up to float noise) or there is one topic.
    Several baselines: each one's rows in turn.
    """
    if several(baseline):
        return pd.concat(
            [topic_risk(matrix, b, alphas, measure, sig_level) for b in baselines_of(baseline)], ignore_index=True
        )
    challengers, delta, x = challenger_deltas(matrix, cast(str, baseline), alphas)  # (S, T), (A, S, T)
    alphas = [float(a) for a in alphas]
    c = x.shape[-1]
    spread = _spread(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        pseudo = c * x.mean(axis=-1, keepdims=True) - (c - 1) * leave_one_out_means(x)
        tr = x / spread
        pseudo_sd = np.where(np.isnan(spread), np.nan, pseudo.std(axis=-1, ddof=1, keepdims=True) if c > 1 else np.nan)
        tj = (pseudo - pseudo.mean(axis=-1, keepdims=True)) / pseudo_sd
    table = long_frame(
        {"alpha": alphas, "system": challengers, "topic": list(matrix.columns)},
        TOPIC_COLUMNS,
        baseline=baseline,
        measure=measure,
        delta=delta,
        x=x,
        tr=tr,
        tj=tj,
    )
    critical = t_critical(sig_level, c)
    low = (table["tr"] < -critical) | (table["tj"] < -critical)
    high = (table["tr"] > critical) | (table["tj"] > critical)
    table["flag"] = np.select([low, high], ["loss", "gain"], "")
    return table


def _spread(x: np.ndarray) -> np.ndarray:
    """sd of x along topics (keepdims); NaN for one topic, or where x is constant up to float noise
    (the tolerance of `trisk`: SE ≤ FLOAT_NOISE · max(1, |mean|))."""
    c = x.shape[-1]
    if c < 2:
        return np.full(x.shape[:-1] + (1,), np.nan)
    sd = x.std(axis=-1, ddof=1, keepdims=True)
    noise = FLOAT_NOISE * np.sqrt(c) * np.maximum(1.0, np.abs(x.mean(axis=-1, keepdims=True)))
    return np.where(sd > noise, sd, np.nan)


TSTAR_REFERENCES = ("mean", "median", "max", "baselines")


def tstar_table(
    matrix: pd.DataFrame,
    alphas: Sequence[float],
    measure: str = "",
    references: Sequence[str] = ("mean", "median", "max"),
    baselines: Sequence[str] | None = None,
) -> pd.DataFrame:
    """T*Risk: URisk/TRisk of every system against the per-topic mean, median or max of all systems,
    or (`"baselines"`) the per-topic mean of the given `baselines` only.

    The unbiased baseline Mean_q of Dinçer et al. 2014 (§5); "mean of the baselines per topic" is the
    multiple-baseline choice of Dinçer, Macdonald & Ounis 2016. Columns `TSTAR_COLUMNS`.
    """
    alphas = [float(a) for a in alphas]
    values = matrix.to_numpy(dtype=float)
    unknown = [r for r in references if r not in TSTAR_REFERENCES]
    if unknown:
        raise UnknownNameError("T*Risk reference", unknown[0], list(TSTAR_REFERENCES))
    if "baselines" in references and not baselines:
        raise UnknownNameError(
            "baseline",
            "",
            [str(s) for s in matrix.index],
            hint='The T*Risk reference "baselines" needs baselines=[...].',
        )
    rows = [system_row(matrix, b) for b in baselines_of(baselines)] if baselines else []
    reducers: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "mean": lambda v: v.mean(axis=0),
        "median": lambda v: np.median(v, axis=0),
        "max": lambda v: v.max(axis=0),
        "baselines": lambda _: np.mean([r.to_numpy(float) for r in rows], axis=0),
    }
    parts = []
    for reference in references:
        result = trisk(risk_adjusted(values - reducers[reference](values), alphas))
        parts.append(
            long_frame(
                {"alpha": alphas, "system": list(matrix.index)},
                TSTAR_COLUMNS,
                reference=reference,
                measure=measure,
                **{k: result[k] for k in ("urisk", "trisk", "p_value")},
            )
        )
    return pd.concat(parts, ignore_index=True)


def expected_matrix(x: np.ndarray) -> np.ndarray:
    """e_ij = S_i·T_j / N, the expectation under independence (Dinçer et al. 2016, Eq. 3; Dinçer, Macdonald & Ounis 2016; docs/measures/multiple-baselines.md)."""
    x = np.asarray(x, dtype=float)
    total = x.sum()
    if total == 0:
        return np.zeros_like(x)
    return np.outer(x.sum(axis=1), x.sum(axis=0)) / total


def zscores(x: np.ndarray) -> np.ndarray:
    """z_ij = (x_ij − e_ij)/√e_ij, and 0 where e_ij = 0 (a topic or system with total 0)."""
    x = np.asarray(x, dtype=float)
    e = expected_matrix(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(e > 0, (x - e) / np.sqrt(np.where(e > 0, e, 1.0)), 0.0)


def zrisk(x: np.ndarray, alphas: Sequence[float]) -> np.ndarray:
    """ZRisk_α(i) = Σ_j [z_ij if z_ij ≥ 0 else (1+α)·z_ij] (Dinçer et al. 2016, Eq. 5), shape (alphas, systems)."""
    return risk_adjusted(zscores(x), alphas).sum(axis=-1)


def georisk(x: np.ndarray, alphas: Sequence[float]) -> np.ndarray:
    """GeoRisk_α(i) = sqrt((S_i/c) · Φ(ZRisk_α(i)/c)) (Dinçer et al. 2016, Eq. 6), shape (alphas, systems)."""
    x = np.asarray(x, dtype=float)
    c = x.shape[1]
    return np.sqrt(x.mean(axis=1) * stats.norm.cdf(zrisk(x, alphas) / c))


def georisk_table(matrix: pd.DataFrame, alphas: Sequence[float] | np.ndarray, measure: str = "") -> pd.DataFrame:
    """ZRisk and GeoRisk of every system of `matrix` (the baseline pool), with ranks per α.

    Columns `GEORISK_COLUMNS` + `rank_mean`, `rank_georisk` (1 = best).
    """
    alphas = [float(a) for a in alphas]
    values = matrix.to_numpy(dtype=float)
    table = long_frame(
        {"alpha": alphas, "system": list(matrix.index)},
        GEORISK_COLUMNS,
        measure=measure,
        mean=values.mean(axis=1),
        zrisk=zrisk(values, alphas),
        georisk=georisk(values, alphas),
    )
    table["rank_mean"] = table.groupby("alpha")["mean"].rank(ascending=False, method="min").astype(int)
    table["rank_georisk"] = table.groupby("alpha")["georisk"].rank(ascending=False, method="min").astype(int)
    return table


def zrisk_single(matrix: pd.DataFrame, baseline: str, alphas: Sequence[float]) -> pd.DataFrame:
    """Single-baseline ZRisk: ZRisk of each challenger on the two-row matrix {challenger, baseline}."""
    alphas = [float(a) for a in alphas]
    names = challengers(matrix, baseline)
    rows = [zrisk(matrix.loc[[system, baseline]].to_numpy(dtype=float), alphas)[:, 0] for system in names]
    values = np.array(rows).T if rows else np.zeros((len(alphas), 0))
    return long_frame(
        {"alpha": alphas, "system": names}, ["system", "baseline", "alpha", "zrisk"], baseline=baseline, zrisk=values
    )


def zero_expectation_cells(matrix: pd.DataFrame) -> pd.DataFrame:
    """The (system, topic) cells with e_ij = 0, whose z is set to 0 (Dinçer, Macdonald & Ounis 2016; docs/measures/multiple-baselines.md)."""
    e = expected_matrix(matrix.to_numpy(dtype=float))
    rows, cols = np.nonzero(e == 0)
    return pd.DataFrame({"system": matrix.index[rows], "topic": matrix.columns[cols]})


def risk_adjusted_scores(matrix: pd.DataFrame, baseline: str, alphas: Sequence[float]) -> pd.DataFrame:
    """Absolute risk-adjusted challenger scores s'_j = s_j − max{α·(b_j − s_j), 0} (thesis Eq. 4.5).

    Tidy `system, topic, alpha, score` for every system (the baseline's own scores are
    unchanged); mean(s' − b) = URisk_α.
    """
    grid = np.asarray([float(a) for a in alphas])
    values = matrix.to_numpy(dtype=float)
    base = system_row(matrix, baseline).to_numpy(dtype=float)
    adjusted = values - np.maximum(grid[:, None, None] * (base - values), 0.0)  # (A, S, T)
    return long_frame(
        {"alpha": grid, "system": list(matrix.index), "topic": list(matrix.columns)},
        ["system", "topic", "alpha", "score"],
        score=adjusted,
    )


def to_convention(table: pd.DataFrame, convention: str = "standard") -> pd.DataFrame:
    """Display copy of a risk table in the `standard` (higher is better) or `minus` convention.

    Minus family (thesis): URisk⁻_r = −URisk_{r−1}, TRisk⁻ = −TRisk, ZRisk⁻ = −ZRisk,
    GeoRisk⁻ = −GeoRisk, with r = 1 + α: positive = risk, lower is better.
    """
    check_options({"convention": convention})
    if convention == "standard":
        return table.copy()
    out = table.copy()
    for column in ("urisk", "trisk", "zrisk", "georisk", "tr", "tj", "x", "effect"):
        if column in out:
            out[column] = -out[column]
    if "ci_low" in out and "ci_high" in out:
        out["ci_low"], out["ci_high"] = -table["ci_high"], -table["ci_low"]
    if "alpha" in out:
        out.insert(list(out.columns).index("alpha") + 1, "r", out["alpha"] + 1.0)
    return out


def smooth_table(matrix: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Mean smooth value mean_j s(Δ_j) of every challenger (thesis Eq. 3.6): `system, smooth_urisk`."""
    names, delta, _ = challenger_deltas(matrix, baseline)
    return pd.DataFrame({"system": names, "smooth_urisk": smooth_value(delta).mean(axis=1)})
