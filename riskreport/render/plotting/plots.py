"""Figures for the templates: seaborn over tidy DataFrames, each returning its Axes or grid.

Axis labels state the sign convention: Δ and URisk are challenger minus baseline, so
values below 0 are losses (risk) and above 0 are wins (reward).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from riskreport.render.plotting.inference_plots import (
    bootstrap_density,
    bootstrap_focus,
    bootstrap_qq,
    ci_by_alpha,
    diagnostics_by_alpha,
    forest,
)
from riskreport.render.plotting.instance_plots import (
    INSTANCE_COLOURS,
    effect_intervals,
    instance_risk_lines,
    instance_spread,
)
from riskreport.render.plotting.palette import RISK_COLOURS, VERDICT_COLOURS, Palette, palette_for
from riskreport.render.plotting.plot_layout import (
    STYLE_RC,
    bars,
    label_panels,
    panels,
    set_style,
    sign_note,
    tight_layout,
    topic_ticks,
)
from riskreport.stats.rankings import riskiest_first
from riskreport.stats.risk import MIN_TOPIC_DELTA, standing_out

# Every figure of the templates (`from riskreport import plots`), those of other modules included.
__all__ = [
    "Palette",
    "RISK_COLOURS",
    "VERDICT_COLOURS",
    "STYLE_RC",
    "set_style",
    "tight_layout",
    "topic_ticks",
    "panels",
    "label_panels",
    "bars",
    "topic_deltas",
    "alpha_lines",
    "urisk_by_alpha",
    "sign_note",
    "trisk_by_alpha",
    "topic_tj",
    "delta_heatmap",
    "delta_boxplots",
    "georisk_by_alpha",
    "value_functions",
    "ci_by_alpha",
    "bootstrap_density",
    "bootstrap_focus",
    "bootstrap_qq",
    "diagnostics_by_alpha",
    "forest",
    "INSTANCE_COLOURS",
    "instance_spread",
    "effect_intervals",
    "instance_risk_lines",
]


def topic_deltas(deltas: pd.DataFrame, baseline: str, measure: str, col_wrap: int = 3):
    """Per-topic Δ = challenger − baseline, topics sorted by Δ, one panel per challenger; returns the Figure.

    `deltas` is tidy: `system, topic, delta`. Each panel's tick labels are its own topics, in its order.
    """
    data = deltas.copy()
    data["rank"] = data.groupby("system")["delta"].rank(method="first", ascending=False)
    data["outcome"] = np.select([data["delta"] > 0, data["delta"] < 0], ["win", "loss"], "tie")
    systems = list(dict.fromkeys(data["system"]))
    fig, axes = panels(len(systems), col_wrap, height=2.4, aspect=1.6)
    for ax, (system, part) in zip(axes, data.groupby("system", sort=False)):
        part = part.sort_values("rank")
        bars(ax, part["rank"], part["delta"], 1.0, part["outcome"].map(RISK_COLOURS))
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_title(system)
        topic_ticks(ax, part["topic"].tolist(), limit=40, first=1)
    label_panels(axes, min(col_wrap, len(systems)), "topic, sorted by Δ", f"Δ {measure}")
    fig.suptitle(
        f"Per-topic difference Δ {measure} against {baseline} (above 0: challenger wins; below 0: loses)", y=1.02
    )
    tight_layout(fig)
    return fig


def alpha_lines(
    data: pd.DataFrame,
    y: str,
    ylabel: str,
    title: str,
    ax=None,
    marker: str | None = None,
    zero_line: bool = True,
    palette: Palette | None = None,
):
    """One line per system of column `y` against α (colours and markers from `palette`), legend outside."""
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4.5))
    palette = palette_for(data["system"].unique(), palette)
    dense = data["alpha"].nunique() > 12
    for system, part in data.sort_values("alpha").groupby("system", sort=False):
        style = dict(palette.get(system, {"color": "#777777", "marker": "o"}))
        ax.plot(
            part["alpha"],
            part[y],
            label=system,
            markevery=max(1, len(part) // 6) if dense else 1,
            markersize=4,
            **style,
        )
    if zero_line:
        ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xlabel("α (losses weigh 1 + α)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(title="system", bbox_to_anchor=(1.02, 1), loc="upper left", frameon=False, fontsize="small")
    return ax


def urisk_by_alpha(
    risk: pd.DataFrame,
    baseline: str,
    measure: str,
    convention: str = "standard",
    ax=None,
    palette: Palette | None = None,
):
    """URisk against α, one line per challenger (`risk` tidy: `system, alpha, urisk`)."""
    return alpha_lines(
        risk,
        "urisk",
        f"URisk of {measure} vs {baseline}\n({sign_note(convention)})",
        f"URisk against α (baseline {baseline})",
        ax=ax,
        marker="o",
        palette=palette,
    )


def trisk_by_alpha(
    fine: pd.DataFrame,
    critical: float,
    baseline: str,
    measure: str,
    convention: str = "standard",
    ax=None,
    palette: Palette | None = None,
):
    """TRisk against α, one line per challenger, with the ±t critical lines (Dinçer et al. 2014, Fig. 1).

    `fine` is tidy `system, alpha, trisk` (already in `convention`).
    """
    ax = alpha_lines(
        fine,
        "trisk",
        f"TRisk of {measure} vs {baseline}\n({sign_note(convention)})",
        f"TRisk against α; dashed: ±t critical value ({critical:.3f})",
        ax=ax,
        palette=palette,
    )
    for level in (-critical, critical):
        ax.axhline(level, color="black", linestyle="--", linewidth=0.8)
    return ax


def topic_tj(
    topics: pd.DataFrame,
    critical: float,
    baseline: str,
    measure: str,
    convention: str = "standard",
    col_wrap: int = 3,
    min_delta: float = MIN_TOPIC_DELTA,
):
    """Per-topic TJ_i bars at one α per row, one panel per challenger, ±t critical lines (Dinçer et al. 2014, Fig. 2).

    `topics` is tidy `system, topic, alpha, delta, x, tj` (already in `convention`); topics keep the collection's
    order, panels go from the riskiest challenger (lowest URisk, the mean of x, at the largest α) to the safest, as
    in every figure. A bar is coloured by the rule of the page's table of topics that stand out
    (`risk.standing_out`: TJ_i beyond ±t, Δ of the same sign, |Δ| ≥ `min_delta`). Returns the Figure.
    """
    data = topics.copy()
    sign = -1.0 if convention == "minus" else 1.0  # the rule and the order read the standard convention
    order = list(dict.fromkeys(data["topic"]))
    data["position"] = data["topic"].map({t: i for i, t in enumerate(order)})
    kind = standing_out(data["delta"], sign * data["tj"], critical, min_delta)
    data["colour"] = np.select([kind == "loss", kind == "gain"], [RISK_COLOURS["loss"], RISK_COLOURS["win"]], "#9ecae1")
    urisk = (sign * data["x"]).groupby([data["system"], data["alpha"]]).mean().rename("urisk").reset_index()
    systems = riskiest_first(urisk)
    alphas = list(dict.fromkeys(data["alpha"]))
    by_row = len(alphas) > 1
    cells = [(alpha, system) for alpha in alphas for system in systems]
    fig, axes = panels(len(cells), col_wrap, height=2.4, aspect=1.7, sharex=True, rows=len(alphas) if by_row else None)
    groups = dict(list(data.groupby(["alpha", "system"], sort=False)))
    ncols = len(systems) if by_row else min(col_wrap, len(systems))
    for i, (ax, (alpha, system)) in enumerate(zip(axes, cells)):
        part = groups.get((alpha, system), data.iloc[:0])
        bars(ax, part["position"], part["tj"], 0.9, part["colour"])
        ax.set_title(f"{system}, α = {alpha:g}" if by_row else system)
        for level in (-critical, critical):
            ax.axhline(level, color="black", linestyle="--", linewidth=0.7)
        if i + ncols >= len(cells):  # the lowest panel of its column shows the shared ticks' labels (their size and
            topic_ticks(ax, order, limit=40)  # rotation are each panel's); above it they are hidden, not set again
        else:
            ax.grid(False, axis="x")
    label_panels(axes, ncols, "topic", "TJ_i")
    fig.suptitle(
        f"Per-topic risk TJ_i of {measure} against {baseline} ({sign_note(convention)}); dashed: ±t "
        f"critical ({critical:.3f}); coloured where the topic stands out: orange a loss, green a gain of |Δ| ≥ "
        f"{min_delta:g}",
        y=1.02,
    )
    tight_layout(fig)
    return fig


def delta_heatmap(deltas: pd.DataFrame, baseline: str, measure: str, systems: list[str] | None = None, ax=None):
    """System × topic heatmap of Δ = challenger − baseline (orange loss, white 0, green win, as every figure):
    where the risk sits.

    `deltas` is tidy `system, topic, delta`; rows in the order of `systems` (default: as given),
    topics from the largest summed loss over the rows shown (left) to the largest gain (right).
    """
    wide = deltas.pivot(index="system", columns="topic", values="delta")
    wide = wide.reindex(systems or list(dict.fromkeys(deltas["system"])))
    wide = wide[wide.sum(axis=0).sort_values(kind="stable").index]
    if ax is None:
        _, ax = plt.subplots(figsize=(min(16, 3 + 0.22 * wide.shape[1]), 1.2 + 0.32 * len(wide)))
    limit = float(np.nanmax(np.abs(wide.to_numpy()))) or 1.0
    from matplotlib.colors import LinearSegmentedColormap

    colours = LinearSegmentedColormap.from_list("loss_win", [RISK_COLOURS["loss"], "#ffffff", RISK_COLOURS["win"]])
    image = ax.imshow(wide.to_numpy(), cmap=colours, vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
    topic_ticks(ax, list(wide.columns), limit=90)
    ax.set_yticks(range(len(wide)), wide.index, fontsize=8)
    ax.set_xlabel("topic (largest summed loss left, largest gain right)")
    ax.grid(False)
    bar = ax.figure.colorbar(image, ax=ax, fraction=0.03, pad=0.01)
    bar.set_label(f"Δ {measure} (< 0: loss)")
    ax.set_title(f"Δ {measure} against {baseline} per system and topic (orange: loss, green: win)")
    return ax


def delta_boxplots(deltas: pd.DataFrame, baseline: str, measure: str, ax=None):
    """Per-topic Δ per challenger as box plots with 1.5 IQR whiskers; points beyond are outlier topics (thesis Fig. 3.3)."""
    n = deltas["system"].nunique()
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.45 * n + 1.2))
    sns.boxplot(data=deltas, x="delta", y="system", whis=1.5, color="#c6dbef", fliersize=3, ax=ax)
    ax.axvline(0, color="black", linewidth=0.6)
    ax.set_xlabel(f"Δ {measure} = challenger − {baseline} (< 0: loss)")
    ax.set_ylabel("")
    ax.set_title("Distribution of per-topic differences; whiskers at 1.5 IQR, dots are outlying topics")
    return ax


def georisk_by_alpha(
    geo: pd.DataFrame, measure: str, convention: str = "standard", ax=None, palette: Palette | None = None
):
    """GeoRisk against α, one line per system (Dinçer et al. 2016, Fig. 3); the baseline drawn on top."""
    higher = "higher is better" if convention == "standard" else "minus convention: lower is better"
    return alpha_lines(
        geo,
        "georisk",
        f"GeoRisk of {measure} ({higher})",
        "GeoRisk against α over the baseline pool",
        ax=ax,
        zero_line=False,
        palette=palette,
    )


def value_functions(alphas, smooth, ax=None):
    """The linear value functions l_α(Δ) of the grid and, optionally, the smooth s(Δ) (thesis Eq. 3.6)."""
    from riskreport.stats.risk import risk_adjusted

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    delta = np.linspace(-1, 1, 201)
    for alpha, values in zip(alphas, risk_adjusted(delta, alphas)):
        ax.plot(delta, values, label=f"l_α, α = {alpha:g}")
    if smooth is not None:
        ax.plot(delta, smooth(delta), color="black", linestyle="--", label="s(Δ), thesis Eq. 3.6")
    ax.axhline(0, color="black", linewidth=0.5)
    ax.axvline(0, color="black", linewidth=0.5)
    ax.set_xlabel("Δ = challenger − baseline")
    ax.set_ylabel("risk-adjusted value (< 0: loss)")
    ax.set_title("Value functions")
    ax.legend(frameon=False, fontsize="small")
    return ax
