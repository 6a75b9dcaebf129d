"""Figures of a report's inference: bootstrap intervals of URisk against α, a bootstrap distribution and its Q–Q
plot against t, the shape of the risk-adjusted differences against α, and the forest plot of the mixed model's
system effects. Exported by `riskreport.render.plotting.plots` with every other figure."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from riskreport.render.plotting.palette import VERDICT_COLOURS, Palette, palette_for
from riskreport.render.plotting.plot_layout import label_panels, panels, sign_note, tight_layout


def ci_by_alpha(intervals: pd.DataFrame, baseline: str, measure: str, convention: str = "standard", col_wrap: int = 4):
    """Confidence interval of URisk against α, one panel per challenger, coloured by `verdict`; returns the Figure.

    `intervals` is tidy `system, alpha, ci_low, ci_high, verdict` for one method and level; pass
    the report's rule verdict as `verdict` so the colours agree with every other mark.
    """
    from matplotlib.collections import LineCollection

    colours = VERDICT_COLOURS
    data = intervals.assign(mid=(intervals["ci_low"] + intervals["ci_high"]) / 2)
    systems = list(dict.fromkeys(data["system"]))
    fig, axes = panels(len(systems), col_wrap, height=2.3, aspect=1.3, sharey=False, sharex=True)
    for ax, (system, part) in zip(axes, data.groupby("system", sort=False)):
        alpha = part["alpha"].to_numpy(dtype=float)
        segments = np.stack(
            [np.column_stack([alpha, part["ci_low"]]), np.column_stack([alpha, part["ci_high"]])], axis=1
        )
        lines = LineCollection(
            segments,  # type: ignore[arg-type]  # an (N, 2, 2) array, as matplotlib documents
            colors=[colours[v] for v in part["verdict"]],
            linewidths=3,
        )
        ax.add_collection(lines, autolim=True)
        ax.plot(alpha, part["mid"], linestyle="none", marker="o", markersize=3, color="black")
        ax.axhline(0, color="black", linewidth=0.6)
        ax.autoscale_view()
        ax.set_title(system)
    label_panels(axes, min(col_wrap, len(systems)), "α", "URisk CI")
    fig.suptitle(
        f"Confidence interval of URisk of {measure} against {baseline} per α "
        f"({sign_note(convention)}; colour: the report's verdict — orange risk, green reward, "
        "grey inconclusive)",
        y=1.02,
    )
    tight_layout(fig)
    return fig


def bootstrap_density(means: np.ndarray, intervals: pd.DataFrame, theta: float, title: str, ax=None):
    """Bootstrap distribution of URisk with the five intervals beneath it (thesis Fig. 3.9).

    `intervals` holds `method, ci_low, ci_high` for one level.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4.5))
    if np.std(means) == 0:  # one topic, or no variation: nothing to draw but the value
        ax.text(0.5, 0.5, "the bootstrap distribution is a single value", transform=ax.transAxes, ha="center")
        ax.set_title(title)
        return ax
    sns.histplot(means, bins=60, stat="density", color="#c6dbef", edgecolor="white", ax=ax)
    sns.kdeplot(means, color="#08519c", ax=ax)
    top = ax.get_ylim()[1]
    step = top * 0.07
    for i, row in enumerate(intervals.itertuples()):
        y = -step * (i + 1)
        ax.plot([row.ci_low, row.ci_high], [y, y], linewidth=3)
        ax.text(row.ci_high, y, f"  {row.method}", va="center", fontsize="small")
    ax.axvline(theta, color="black", linestyle="--", linewidth=0.8, label="observed URisk")
    ax.axvline(0, color="black", linewidth=0.6)
    ax.set_ylim(-step * (len(intervals) + 1), top)
    ax.set_xlabel("bootstrap URisk (< 0: risk)")
    ax.set_ylabel("density")
    ax.set_title(title)
    ax.legend(frameon=False, loc="upper left")
    return ax


def bootstrap_qq(means: np.ndarray, n_topics: int, ax=None):
    """Q-Q plot of standardised bootstrap means against Student t with c − 1 df."""
    from scipy import stats

    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 4.5))
    if np.std(means) == 0 or n_topics < 2:
        ax.text(0.5, 0.5, "no spread to compare", transform=ax.transAxes, ha="center")
        return ax
    standardised = np.sort((means - means.mean()) / means.std(ddof=1))
    probabilities = (np.arange(1, len(standardised) + 1) - 0.5) / len(standardised)
    theoretical = stats.t.ppf(probabilities, n_topics - 1)
    ax.scatter(theoretical, standardised, s=4, color="#08519c")
    limit = max(abs(theoretical).max(), abs(standardised).max())
    ax.plot([-limit, limit], [-limit, limit], color="black", linewidth=0.8)
    ax.set_xlabel(f"t quantiles ({n_topics - 1} df)")
    ax.set_ylabel("standardised bootstrap means")
    ax.set_title("Q-Q: bootstrap means vs t (a bent line = skew)")
    return ax


def bootstrap_focus(means: np.ndarray, intervals: pd.DataFrame, theta: float, title: str, n_topics: int):
    """The focus system's bootstrap distribution with its intervals (`bootstrap_density`) beside its Q-Q plot
    against t (`bootstrap_qq`), in one figure."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5), gridspec_kw={"width_ratios": [2, 1]})
    bootstrap_density(means, intervals, theta, title, ax=axes[0])
    bootstrap_qq(means, n_topics, ax=axes[1])
    tight_layout(fig)
    return fig


def diagnostics_by_alpha(diagnostics: pd.DataFrame, palette: Palette | None = None):
    """Skewness, excess kurtosis and Shapiro–Wilk p of the risk-adjusted differences against α."""
    palette = palette_for(diagnostics["system"].unique(), palette)
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    lines = list(diagnostics.sort_values("alpha").groupby("system", sort=False))
    for ax, column, label in zip(
        axes,
        ("skewness", "excess_kurtosis", "shapiro_p"),
        ("skewness (< 0: long loss tail)", "excess kurtosis", "Shapiro–Wilk p (log scale)"),
    ):
        for system, part in lines:  # plain lines: seaborn's lineplot aggregates first, for nothing here
            ax.plot(
                part["alpha"],
                part[column],
                label=system,
                marker="o",
                markersize=4,
                linewidth=1.4,
                color=palette.colour(system),
            )
        ax.set_xlabel("α")
        ax.set_ylabel(label)
    axes[0].axhline(0, color="black", linewidth=0.6)
    axes[2].set_yscale("log")
    axes[2].axhline(0.05, color="black", linestyle="--", linewidth=0.8)
    axes[-1].legend(title="system", bbox_to_anchor=(1.02, 1), loc="upper left", frameon=False, fontsize="small")
    fig.suptitle("Shape of the risk-adjusted differences against α (Shapiro–Wilk p below the dashed line: not normal)")
    tight_layout(fig)
    return axes


def forest(effects: pd.DataFrame, baseline: str, measure: str, ax=None):
    """Forest plot of the mixed model's system effects against the baseline, one colour per α."""
    n = effects["system"].nunique()
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.5 * n + 1.5))
    systems = list(dict.fromkeys(effects["system"]))
    alphas = sorted(effects["alpha"].unique())
    offsets = np.linspace(-0.3, 0.3, len(alphas)) if len(alphas) > 1 else [0.0]
    palette = sns.color_palette("viridis", len(alphas))
    for offset, colour, alpha in zip(offsets, palette, alphas):
        part = effects[effects["alpha"] == alpha].set_index("system").loc[systems]
        y = np.arange(len(systems)) + offset
        ax.errorbar(
            part["effect"],
            y,
            xerr=[part["effect"] - part["ci_low"], part["ci_high"] - part["effect"]],
            fmt="o",
            color=colour,
            markersize=3,
            linewidth=1,
            label=f"α = {alpha:g}",
        )
    ax.set_yticks(range(len(systems)), systems)
    ax.axvline(0, color="black", linewidth=0.6)
    ax.invert_yaxis()
    ax.set_xlabel(f"effect on risk-adjusted {measure} vs {baseline} (< 0: worse)")
    ax.set_title("Mixed model score ~ system + (1 | topic): system effects with CIs")
    ax.legend(frameon=False, bbox_to_anchor=(1.02, 1), loc="upper left")
    return ax
