"""Multiple baselines (Dinçer, Macdonald & Ounis 2016; docs/measures/multiple-baselines.md): ZRisk, GeoRisk and T*Risk over a pool of systems, as a report shows them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from riskreport.stats.risk import georisk_table, to_convention, tstar_table, zero_expectation_cells, zrisk_single


@dataclass
class PoolAnalysis:
    """The pool's score matrix and its tables: `geo` (`georisk_table`), `single` (ZRisk of each challenger
    against the baseline alone), `tstar` (`tstar_table`) and `zero_cells` (cells whose z is set to 0)."""

    matrix: pd.DataFrame
    geo: pd.DataFrame
    single: pd.DataFrame
    tstar: pd.DataFrame
    zero_cells: pd.DataFrame


def pool_analysis(
    matrix: pd.DataFrame,
    baseline: str,
    alphas: Sequence[float],
    measure: str = "",
    pool_matrix: pd.DataFrame | None = None,
    baselines: Sequence[str] | None = None,
) -> PoolAnalysis:
    """ZRisk/GeoRisk (Dinçer et al. 2016) and T*Risk (Dinçer et al. 2014, §5) over `pool_matrix` (default:
    the report's `matrix`), and single-baseline ZRisk of the report's challengers against `baseline`.
    With several `baselines` (all in the pool), T*Risk also takes the per-topic mean of the baselines as
    its reference ("baselines", Dinçer, Macdonald & Ounis 2016)."""
    pool = matrix if pool_matrix is None else pool_matrix
    several = baselines is not None and len(baselines) > 1 and all(b in pool.index for b in baselines)
    references = ("mean", "median", "max", "baselines") if several else ("mean", "median", "max")
    return PoolAnalysis(
        pool,
        georisk_table(pool, alphas, measure),
        zrisk_single(matrix, baseline, alphas),
        tstar_table(pool, alphas, measure, references, list(baselines or []) if several else None),
        zero_expectation_cells(pool),
    )


def georisk_wide(analysis: PoolAnalysis, baseline: str, convention: str = "standard") -> pd.DataFrame:
    """One row per pool system (best GeoRisk at the largest α first): mean and its rank once, then per α
    GeoRisk, its rank, ZRisk over the pool and ZRisk against `baseline` alone."""
    geo = to_convention(analysis.geo, convention)
    single = to_convention(analysis.single, convention)
    merged = geo.merge(
        single[["system", "alpha", "zrisk"]].rename(columns={"zrisk": "zrisk_single"}),
        on=["system", "alpha"],
        how="left",
    )
    top = merged[merged["alpha"] == merged["alpha"].max()].sort_values(["rank_georisk", "system"])
    order = top["system"].tolist()
    label = (lambda a: f"r = {a + 1:g}") if convention == "minus" else (lambda a: f"α = {a:g}")
    once = top.set_index("system")[["mean", "rank_mean"]].rename(columns={"rank_mean": "rank (mean)"})
    parts = [once]
    for alpha, at in merged.groupby("alpha", sort=True):  # GeoRisk with its rank in one cell: 5 α fit 1400 px
        at = at.set_index("system").reindex(order)
        parts.append(
            pd.DataFrame(
                {
                    f"GeoRisk (rank) {label(alpha)}": [
                        f"{g:.4f} ({r})" for g, r in zip(at["georisk"], at["rank_georisk"])
                    ],
                    f"ZRisk {label(alpha)}": _two_decimals(at["zrisk"]),
                    f"ZRisk vs {baseline} {label(alpha)}": _two_decimals(at["zrisk_single"]),
                },
                index=order,
            )
        )
    return pd.concat(parts, axis=1).rename_axis("system").reset_index()


def _two_decimals(values: pd.Series) -> list[str]:
    return ["–" if v != v else "0.00" if round(v, 2) == 0 else f"{v:+.2f}" for v in values]  # never -0.00


def tstar_wide(analysis: PoolAnalysis, convention: str = "standard") -> pd.DataFrame:
    """T*Risk per pool system (rows) and reference × α (columns `mean α = 0`, ...)."""
    shown = to_convention(analysis.tstar, convention)
    label = (lambda a: f"r = {a + 1:g}") if convention == "minus" else (lambda a: f"α = {a:g}")
    shown = shown.assign(column=[f"{r} {label(a)}" for r, a in zip(shown["reference"], shown["alpha"])])
    columns = list(dict.fromkeys(shown.sort_values(["reference", "alpha"], kind="stable")["column"]))
    wide = shown.pivot(index="system", columns="column", values="trisk")
    return (
        wide.reindex(index=list(dict.fromkeys(shown["system"])), columns=columns)
        .round(5)
        .rename_axis("system")
        .reset_index()
        .rename_axis(None, axis=1)
    )


def figure_pool(
    analysis: PoolAnalysis, shown: Sequence[str], baseline: str, alphas: np.ndarray, measure: str = ""
) -> pd.DataFrame:
    """GeoRisk on a fine α grid for the systems a figure draws (`shown` and the baseline, when in the pool)."""
    systems = [s for s in dict.fromkeys([*shown, baseline]) if s in analysis.matrix.index]
    fine = georisk_table(analysis.matrix, alphas, measure)
    return fine[fine["system"].isin(systems)]
