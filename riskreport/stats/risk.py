"""Risk-sensitive measures (Dinçer, Macdonald & Ounis 2014; docs/measures/single-baseline.md; Dinçer, Macdonald & Ounis 2016; docs/measures/multiple-baselines.md), vectorised over systems x α x topics.

Sign convention ("standard", used by every function and CSV): higher is better. A negative
URisk/TRisk/ZRisk means the challenger loses to the baseline once losses are weighted by
(1 + α); GeoRisk lies in [0, 1] for scores in [0, 1], higher is better. `to_convention`
turns a table into the thesis's minus family (positive = risk) for display only.

Sources: Wang et al. SIGIR 2012 (URisk, FRisk/FReward); Dinçer, Macdonald & Ounis SIGIR 2014
(TRisk, jackknife SE, exploratory TR_i/TJ_i, T*Risk) and SIGIR 2016 (ZRisk, GeoRisk); Benham,
PhD thesis 2023 (minus family, smooth value function Eq. 3.6, risk-adjusted scores Eq. 4.5).

The measures on arrays (Δ, l_α, URisk, TRisk, the verdict rule) live in `riskreport.stats.risk_measures` and are
importable from here too; this module builds the report's tables from them, and ZRisk, GeoRisk and T*Risk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import numpy as np
import pandas as pd
from scipy import special

from riskreport.errors import UnknownNameError
from riskreport.options import CONVENTIONS, check_options  # noqa: F401 - CONVENTIONS: rr.risk.CONVENTIONS
from riskreport.stats.corrections import adjust_pvalues
from riskreport.stats.risk_measures import (
    FLOAT_NOISE,
    baselines_of,
    challenger_deltas,
    challengers,
    deltas,  # noqa: F401 - rr.risk.deltas as before
    family_adjusted,
    jackknife_se,  # noqa: F401 - rr.risk.jackknife_se as before
    leave_one_out_means,
    long_frame,
    risk_adjusted,
    rule_verdicts,
    several,
    smooth_value,
    system_row,
    t_critical,
    trisk,
    urisk,  # noqa: F401 - rr.risk.urisk as before
    win_loss_ties,
)

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
SE_ZERO_NOTE = "SE = 0 (the risk-adjusted differences do not vary): TRisk is undefined"
ONE_TOPIC_NOTE = "one topic only: the SE needs at least 2 topics, so TRisk is undefined"


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


MIN_TOPIC_DELTA = 0.05  # the practical size a topic's |Δ| needs to stand out on the page (measure units)


def standing_out(
    delta: np.ndarray | pd.Series, tj: np.ndarray | pd.Series, critical: float, min_delta: float = MIN_TOPIC_DELTA
) -> np.ndarray:
    """The page's rule for a topic that stands out (exploratory, Dinçer et al. 2014, §4), in the table and the
    figure alike: `loss` where the challenger loses on the topic (Δ_i < 0) by at least `min_delta` and TJ_i < −t,
    `gain` where it wins by at least `min_delta` and TJ_i > t, '' elsewhere. Standard convention.

    TJ_i = (x_i − x̄)/s_x (the jackknife pseudo-value of a mean is x_i) says how far a topic lies from the
    challenger's mean, in units of its spread, not whether it matters: a system that ties the baseline on all
    but one topic has s_x ≈ 0, so a loss of 0.008 reaches TJ = −6.9; and a smaller gain than average of a strong
    system has TJ < 0. Hence a practical size and the sign of Δ as well. The statistical `flag` of `topic_risk`
    (TR_i or TJ_i beyond ±t) stays in tables/topics.csv.
    """
    delta, tj = np.asarray(delta, dtype=float), np.asarray(tj, dtype=float)
    large = np.abs(delta) >= min_delta
    return np.select(
        [large & (delta < 0) & (tj < -critical), large & (delta > 0) & (tj > critical)], ["loss", "gain"], ""
    )


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
    return np.sqrt(x.mean(axis=1) * special.ndtr(zrisk(x, alphas) / c))


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
