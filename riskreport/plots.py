"""Figures for the templates: seaborn over tidy DataFrames, each returning its Axes or grid.

Axis labels state the sign convention: Δ and URisk are challenger minus baseline, so
values below 0 are losses (risk) and above 0 are wins (reward).
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

RISK_COLOURS = {"win": "#1b9e77", "loss": "#d95f02", "tie": "#999999"}


def topic_deltas(deltas: pd.DataFrame, baseline: str, measure: str, col_wrap: int = 3) -> sns.FacetGrid:
    """Per-topic Δ = challenger − baseline, topics sorted by Δ, one panel per challenger.

    `deltas` is tidy: `system, topic, delta`.
    """
    data = deltas.copy()
    data["rank"] = data.groupby("system")["delta"].rank(method="first", ascending=False)
    data["outcome"] = np.select([data["delta"] > 0, data["delta"] < 0], ["win", "loss"], "tie")
    n = data["system"].nunique()
    grid = sns.FacetGrid(data, col="system", col_wrap=min(col_wrap, n), height=2.4, aspect=1.6, sharey=True)
    grid.map_dataframe(_delta_bars)
    grid.set_titles("{col_name}")
    grid.set_axis_labels("topics, sorted by Δ", f"Δ {measure} (vs {baseline})")
    for ax in grid.axes.flat:
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_xticks([])
    grid.figure.suptitle(f"Per-topic difference against {baseline} (above 0: challenger wins; below 0: loses)",
                         y=1.02)
    return grid


def _delta_bars(data: pd.DataFrame, **_) -> None:
    ax = plt.gca()
    ax.bar(data["rank"], data["delta"], width=1.0, color=data["outcome"].map(RISK_COLOURS), linewidth=0)


def urisk_by_alpha(risk: pd.DataFrame, baseline: str, measure: str, ax=None):
    """URisk against α, one line per challenger (`risk` tidy: `system, alpha, urisk`)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4.5))
    sns.lineplot(data=risk, x="alpha", y="urisk", hue="system", marker="o", ax=ax)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xlabel("α (losses weigh 1 + α)")
    ax.set_ylabel(f"URisk of {measure} vs {baseline}\n(< 0: riskier than the baseline)")
    ax.set_title(f"URisk against α (baseline {baseline})")
    ax.legend(title="system", bbox_to_anchor=(1.02, 1), loc="upper left", frameon=False)
    return ax
