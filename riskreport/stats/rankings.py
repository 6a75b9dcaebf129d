"""Rankings of systems: orderings, rank-biased overlap and Kendall τ between them, per α."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def rank_agreement(effectiveness: pd.DataFrame, risk: pd.DataFrame, geo: pd.DataFrame) -> pd.DataFrame:
    """Kendall τ per α between the orderings of the challengers by mean, URisk_α and GeoRisk_α."""
    rows = []
    means = effectiveness.set_index("system")["mean"]
    for alpha, at in risk.groupby("alpha", sort=True):
        u = at.set_index("system")["urisk"]
        g = geo[geo["alpha"] == alpha].set_index("system")["georisk"].reindex(u.index)
        m = means.reindex(u.index)
        rows.append(
            {
                "alpha": alpha,
                "tau_mean_urisk": _tau(m, u),
                "tau_mean_georisk": _tau(m, g),
                "tau_urisk_georisk": _tau(u, g),
            }
        )
    return pd.DataFrame(rows)


def _tau(a: pd.Series, b: pd.Series) -> float:
    if len(a) < 2:
        return float("nan")
    from scipy import stats  # here: the command line reads verdicts through this package without scipy.stats

    return float(stats.kendalltau(a.to_numpy(), b.to_numpy()).statistic)


def rbo(ranking_a: Sequence, ranking_b: Sequence, p: float = 0.9) -> tuple[float, float]:
    """Rank-biased overlap of two rankings (Webber, Moffat & Zobel 2010): (RBO_min, RBO_residual).

    RBO_min (Eq. 11) is the overlap seen to the evaluated depth; the residual (Eq. 30) is what the
    unseen tails could add, so RBO lies in [min, min + residual].
    """
    a, b = list(ranking_a), list(ranking_b)
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    s, n_long = len(short), len(long_)
    if s == 0:
        return 0.0, 1.0
    depth = np.arange(1, n_long + 1)
    seen_a: set = set()
    seen_b: set = set()
    seen: list[int] = []
    for d in range(n_long):
        if d < s:
            seen_a.add(short[d])
        seen_b.add(long_[d])
        seen.append(len(seen_a & seen_b))
    overlap = np.asarray(seen, dtype=float)
    x_s = overlap[s - 1]
    weights = p ** depth[:s] / depth[:s]
    rbo_min = (1 - p) / p * ((weights * (overlap[:s] - x_s)).sum() - x_s * np.log(1 - p))
    x_l = overlap[-1]
    f = int(n_long + s - x_l)
    d_all = np.arange(1, f + 1)
    w_all = p**d_all / d_all
    term1 = s * w_all[s:f].sum()
    term2 = n_long * w_all[n_long:f].sum()
    term3 = x_l * (np.log(1 / (1 - p)) - w_all.sum())
    residual = p**s + p**n_long - p**f - (1 - p) / p * (term1 + term2 + term3)
    return float(rbo_min), float(max(residual, 0.0))


def riskiest_first(table: pd.DataFrame, column: str = "urisk") -> list[str]:
    """Systems from the riskiest to the safest: by `column` (URisk, or another risk-adjusted score where higher
    is better) at the largest α of the tidy `table`, ties by id: the order of every report's rows and figures."""
    top = table[table["alpha"] == table["alpha"].max()]
    return top.sort_values([column, "system"])["system"].tolist()


def ordering(values: pd.Series) -> list:
    """System ids from best to worst (ties broken by id)."""
    frame = values.rename("value").reset_index()
    frame.columns = ["system", "value"]
    return frame.sort_values(["value", "system"], ascending=[False, True])["system"].tolist()


def rbo_table(orderings: dict[str, dict[float, list]], p: float = 0.9) -> pd.DataFrame:
    """RBO between named orderings per α: {name: {alpha: ranking}} -> rows `alpha, a, b, rbo_min, rbo_residual`."""
    names = list(orderings)
    rows = []
    for alpha in sorted(set.intersection(*(set(o) for o in orderings.values()))):
        for i, first in enumerate(names):
            for second in names[i + 1 :]:
                low, residual = rbo(orderings[first][alpha], orderings[second][alpha], p)
                rows.append({"alpha": alpha, "a": first, "b": second, "rbo_min": low, "rbo_residual": residual})
    return pd.DataFrame(rows)


def orderings(
    effectiveness: pd.DataFrame, risk: pd.DataFrame, geo: pd.DataFrame, others: dict[str, pd.DataFrame] | None = None
) -> dict[str, dict[float, list]]:
    """Orderings of the challengers of `risk` at each of its α, the input of `rbo_table`: by mean
    effectiveness, by URisk_α, by GeoRisk_α and by the mean under each other measure
    (`others`: {measure: `effectiveness_table`}); GeoRisk orders the challengers it scored."""
    challengers = list(dict.fromkeys(risk["system"]))
    alphas = sorted(set(risk["alpha"]))
    by_mean = lambda table: ordering(table.set_index("system")["mean"].loc[challengers])  # noqa: E731
    result = {
        "mean": dict.fromkeys(alphas, by_mean(effectiveness)),
        "URisk": {a: ordering(t.set_index("system")["urisk"]) for a, t in risk.groupby("alpha")},
        "GeoRisk": {
            a: ordering(t.set_index("system")["georisk"].reindex(challengers).dropna()) for a, t in geo.groupby("alpha")
        },
    }
    for measure, table in (others or {}).items():
        result[f"mean {measure}"] = dict.fromkeys(alphas, by_mean(table))
    return result
