"""LaTeX versions of the report's tables (effectiveness, risk, GeoRisk, bootstrap, several measures)."""

from __future__ import annotations

import re

import pandas as pd

from riskreport.measures.params import ReportParameters
from riskreport.render.tabular.html import significance_marks, styled


def _mark_frame(table: pd.DataFrame, column: str, verdicts: pd.Series) -> pd.DataFrame:
    return pd.DataFrame({column: verdicts.map({"risk": "▼", "reward": "▲"}).fillna("").to_numpy()}, index=table.index)


def _legend(params: ReportParameters, correction: str) -> str:
    adjusted = "unadjusted" if correction == "none" else f"{correction}-adjusted across the challengers"
    return (
        f"▲/▼: significantly better/worse than {params.baseline} (two-sided paired t-test on the risk-adjusted "
        f"differences, p < {params.sig_level:g}, {adjusted})."
    )


def tex_label(params: ReportParameters, name: str) -> str:
    """`tab:<collection>:<name>`: labels of two reports' tables do not clash in one paper."""
    return f"tab:{re.sub(r'[^A-Za-z0-9.-]+', '-', params.collection.name)}:{name}"


def effectiveness_latex(effectiveness: pd.DataFrame, params: ReportParameters, correction: str) -> dict:
    """Arguments of `latex.latex_table` for the effectiveness table (marks: the rule at α = 0)."""
    table = (
        effectiveness.sort_values("mean", ascending=False)[["system", "mean", "median", "sd", "delta"]]
        .rename(columns={"delta": "Δ"})
        .reset_index(drop=True)
    )
    ordered = effectiveness.sort_values("mean", ascending=False).reset_index(drop=True)
    verdict = pd.Series(
        ["reward" if m == "▲" else "risk" if m == "▼" else "" for m in significance_marks(ordered, params.sig_level)]
    )
    return dict(
        table=table,
        caption=f"{params.measure} per system; Δ against {params.baseline}.",
        label=tex_label(params, "effectiveness"),
        best={"mean": "max", "median": "max"},
        marks=_mark_frame(table, "mean", verdict),
        legend=_legend(params, correction),
    )


def risk_latex(risk: pd.DataFrame, summary: pd.DataFrame, params: ReportParameters, correction: str) -> dict:
    """Arguments of `latex.latex_table` for URisk and TRisk per α (rows riskiest first, marks from the rule)."""
    order = list(dict.fromkeys(summary["system"]))
    alphas = sorted(risk["alpha"].unique())
    urisk = risk.pivot(index="system", columns="alpha", values="urisk").reindex(order)
    trisk = risk.pivot(index="system", columns="alpha", values="trisk").reindex(order)
    verdict = summary.pivot(index="system", columns="alpha", values="verdict").reindex(order)
    table = (
        pd.concat([urisk.rename(columns=lambda a: f"α={a:g}"), trisk.rename(columns=lambda a: f"α={a:g} ")], axis=1)
        .rename_axis("system")
        .reset_index()
    )
    marks = pd.DataFrame(
        {f"α={a:g}": verdict[a].map({"risk": "▼", "reward": "▲"}).fillna("").to_numpy() for a in alphas},
        index=table.index,
    )
    return dict(
        table=table,
        caption=f"URisk and TRisk of {params.measure} against {params.baseline} per α (higher is better).",
        label=tex_label(params, "risk"),
        best={f"α={a:g}": "max" for a in alphas},
        marks=marks,
        legend=_legend(params, correction),
        column_groups=[("", 1), ("URisk", len(alphas)), ("TRisk", len(alphas))],
    )


def georisk_latex(analysis, params: ReportParameters) -> dict:
    """Arguments of `latex.latex_table` for GeoRisk per α over the pool (best first)."""
    wide = analysis.geo.pivot(index="system", columns="alpha", values="georisk")
    means = analysis.geo.drop_duplicates("system").set_index("system")["mean"]
    top = wide.columns.max()
    wide = wide.sort_values(top, ascending=False)
    table = (
        pd.concat([means.reindex(wide.index).rename("mean"), wide.rename(columns=lambda a: f"α={a:g}")], axis=1)
        .rename_axis("system")
        .reset_index()
    )
    return dict(
        table=table,
        caption=f"GeoRisk of {params.measure} over a pool of {len(analysis.matrix)} systems "
        "(Dinçer et al. 2016; higher is better).",
        label=tex_label(params, "georisk"),
        best={c: "max" for c in table.columns if c != "system"},
        column_groups=[("", 2), ("GeoRisk", len(wide.columns))],
    )


def bootstrap_latex(boot: pd.DataFrame, summary: pd.DataFrame, params: ReportParameters, method: str = "bca") -> dict:
    """Arguments of `latex.latex_table` for the `method` intervals at the first level per α; marks from the rule,
    † where the interval's own verdict differs."""
    order = list(dict.fromkeys(summary["system"]))
    level = boot["level"].min()
    part = boot[(boot["method"] == method) & (boot["level"] == level)]
    part = part.merge(
        summary[["system", "alpha", "verdict"]].rename(columns={"verdict": "rule"}), on=["system", "alpha"]
    )
    part = part.assign(
        cell=[f"[{lo:.4f}, {hi:.4f}]" for lo, hi in zip(part["ci_low"], part["ci_high"])],
        mark=[
            {"risk": "▼", "reward": "▲"}.get(r, "")
            + ("" if v == r or (v == "inconclusive" and r == "undefined") else "†")
            for v, r in zip(part["verdict"], part["rule"])
        ],
    )
    cells = part.pivot(index="system", columns="alpha", values="cell").reindex(order)
    marks = part.pivot(index="system", columns="alpha", values="mark").reindex(order)
    table = cells.rename(columns=lambda a: f"α={a:g}").rename_axis("system").reset_index()
    mark_frame = marks.rename(columns=lambda a: f"α={a:g}").reset_index(drop=True).fillna("")
    return dict(
        table=table,
        caption=f"{'BCa' if method == 'bca' else method} {level:g} intervals of URisk "
        f"of {params.measure} against {params.baseline} per α.",
        label=tex_label(params, "bootstrap"),
        marks=mark_frame,
        legend="▲/▼: the report's verdict (paired t-test, adjusted); †: the interval's own verdict differs.",
    )


def multi_measure_styled(multi: pd.DataFrame, sig_level: float, caption: str | None = None):
    """Mean per system (rows) and measure (columns) with ▲/▼ against the baseline (the rule at α = 0)."""
    marked = multi.assign(
        cell=[
            f"{m:.4f}{' ▲' if p < sig_level and d > 0 else ' ▼' if p < sig_level and d < 0 else ''}"
            for m, d, p in zip(multi["mean"], multi["delta"], multi["p_adjusted"])
        ]
    )
    wide = marked.pivot(index="system", columns="measure", values="cell")
    wide = wide.reindex(index=list(dict.fromkeys(multi["system"])), columns=list(dict.fromkeys(multi["measure"])))
    return styled(wide.rename_axis("system").reset_index().rename_axis(None, axis=1), caption=caption)


def multi_measure_latex(multi: pd.DataFrame, params: ReportParameters, correction: str) -> dict:
    """Arguments of `latex.latex_table` for the multi-measure table: one column group (mean, Δ) per measure."""
    measures = list(dict.fromkeys(multi["measure"]))
    systems = list(dict.fromkeys(multi["system"]))
    columns, marks = {}, {}
    for i, measure in enumerate(measures):
        part = multi[multi["measure"] == measure].set_index("system").reindex(systems)
        space = " " * i  # column names must differ; the group header names the measure
        columns[f"mean{space}"] = part["mean"].to_numpy()
        columns[f"Δ{space}"] = part["delta"].to_numpy()
        marks[f"mean{space}"] = [
            "▲" if p < params.sig_level and d > 0 else "▼" if p < params.sig_level and d < 0 else ""
            for d, p in zip(part["delta"], part["p_adjusted"])
        ]
    table = pd.DataFrame({"system": systems, **columns})
    return dict(
        table=table,
        caption=f"Mean effectiveness per measure; Δ against {params.baseline}.",
        label=tex_label(params, "measures"),
        best={c: "max" for c in columns if c.startswith("mean")},
        marks=pd.DataFrame(marks, index=table.index),
        legend=_legend(params, correction),
        column_groups=[("", 1)] + [(m, 2) for m in measures],
    )
