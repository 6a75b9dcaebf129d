"""Figures of the Bayesian risk report; each takes tidy tables and returns the matplotlib Axes (or Figure)."""

from __future__ import annotations

import html

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from riskreport.bayes.models import LABELS
from riskreport.bayes.presentation import RULES, methods_text, verdict_summary
from riskreport.render.palette import VERDICT_COLOURS
from riskreport.render.plot_layout import panels, tight_layout
from riskreport.render.report import HTML
from riskreport.render.tables import verdict_matrix as frequentist_matrix

RISK, REWARD, NEUTRAL = VERDICT_COLOURS["risk"], VERDICT_COLOURS["reward"], VERDICT_COLOURS["inconclusive"]
BASE = "#1f3b73"  # the baseline's posterior interval
FOREST_OPEN_UP_TO = 40  # systems up to which a forest plot is open on the page; above, it is one click away
COL_WRAP = 3  # panels per row of a figure with one panel per α: five in a row were too small on a 1400 px page


def forest(effects: pd.DataFrame, baseline: str, level: float = 0.95, ax=None):
    """System effects of one model with their intervals, best at the top; the baseline in blue, and the
    systems whose interval lies entirely above (green) or below (orange) the baseline's marked."""
    table = effects.sort_values("effect_median")
    base = table[table["system"] == baseline].iloc[0] if baseline in set(table["system"]) else None
    ax = ax or plt.subplots(figsize=(8, max(3, 0.22 * len(table) + 1)))[1]
    for y, row in enumerate(table.itertuples()):
        color = NEUTRAL
        if row.system == baseline:
            color = BASE
        elif base is not None and row.effect_low > base.effect_high:
            color = REWARD
        elif base is not None and row.effect_high < base.effect_low:
            color = RISK
        ax.plot([row.effect_low, row.effect_high], [y, y], color=color, lw=2)
        ax.plot(row.effect_median, y, "o", color=color, ms=4)
    if base is not None:
        ax.axvspan(base.effect_low, base.effect_high, color=BASE, alpha=0.08)
    ax.set_yticks(range(len(table)), table["system"], fontsize=8)
    ax.set_xlabel(f"system effect r_sys (posterior median, {level:.0%} interval); left = worse")
    ax.set_title(f"{LABELS.get(table['model'].iloc[0], table['model'].iloc[0])}: system effects")
    return ax


def forest_collapsed(systems: int) -> bool:
    """Whether the forest plots of `systems` systems are collapsed on the page: above `FOREST_OPEN_UP_TO` each
    is taller than a screen (0.22 in a system), and the verdict matrix and the tables already name every
    system a rule flags."""
    return systems > FOREST_OPEN_UP_TO


def predictive_overlay(overlay: pd.DataFrame, bins: int = 40):
    """Observed score density (black) against posterior predictive replicates (thin lines), one panel per model."""
    models = list(dict.fromkeys(overlay["model"]))
    fig, axes = plt.subplots(1, len(models), figsize=(5.5 * len(models), 3.8), squeeze=False)
    for ax, model in zip(axes[0], models):
        part = overlay[overlay["model"] == model]
        edges = np.histogram_bin_edges(part["score"], bins=bins)
        for _replicate, rows in part[part["source"] == "predicted"].groupby("replicate"):
            density, _ = np.histogram(rows["score"], bins=edges, density=True)
            ax.stairs(density, edges, color="#6baed6", alpha=0.25, lw=0.8)
        observed, _ = np.histogram(part.loc[part["source"] == "observed", "score"], bins=edges, density=True)
        ax.stairs(observed, edges, color="black", lw=1.6, label="observed")
        ax.set_title(LABELS.get(model, model))
        ax.set_xlabel("score")
        ax.set_ylabel("density")
        ax.legend(loc="upper right", fontsize=8)
    tight_layout(fig)
    return fig


def ppdrisk_densities(
    values: np.ndarray,
    systems: list,
    alphas,
    ppdrisk: pd.DataFrame,
    shown: list,
    convention: str = "standard",
    sample: int = 4000,
    seed: int = 0,
):
    """Densities of PPDRisk⁻ draws per α (thesis Fig. 5.9 style): one line per shown challenger, risk verdicts in orange;
    `COL_WRAP` panels to a row.

    `values` (alphas, draws, systems) are −PPDRisk⁻ draws (standard convention); `convention="minus"`
    flips them to PPDRisk⁻ (positive = risk).
    """
    sign = -1.0 if convention == "minus" else 1.0
    rng = np.random.default_rng(seed)
    picks = rng.choice(values.shape[1], size=min(sample, values.shape[1]), replace=False)
    fig, axes = panels(len(alphas), COL_WRAP, height=3.8, aspect=5.5 / 3.8, sharey=False)
    verdicts = ppdrisk.set_index(["alpha", "system"])["verdict"]
    for k, (ax, alpha) in enumerate(zip(axes, alphas)):
        for system in shown:
            draws = sign * values[k, picks, systems.index(system)]
            grid = np.linspace(draws.min(), draws.max(), 200)
            density = _kde(draws, grid)
            verdict = verdicts.get((float(alpha), system), "inconclusive")
            color = {"risk": RISK, "reward": REWARD}.get(verdict, NEUTRAL)
            ax.plot(
                grid,
                density,
                color=color,
                lw=1.4 if verdict != "inconclusive" else 0.8,
                label=system if verdict != "inconclusive" else None,
            )
        ax.axvline(0, color="black", lw=0.8, ls="--")
        name = "PPDRisk⁻ (right of 0 = risk)" if convention == "minus" else "−PPDRisk⁻ (left of 0 = risk)"
        ax.set_xlabel(f"{name}, r = {1 + float(alpha):g}")
        ax.set_ylabel("density")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="upper right")
    tight_layout(fig)
    return fig


def brisk_intervals(brisk: pd.DataFrame, shown: list, convention: str = "standard"):
    """Draw-wise intervals of r_sys[c] − r_sys[h] on the risk-adjusted scores per α; colour = the thesis's overlap verdict;
    `COL_WRAP` panels to a row."""
    sign = -1.0 if convention == "minus" else 1.0
    alphas = sorted(brisk["alpha"].unique())
    height = max(3, 0.25 * len(shown) + 1)
    fig, axes = panels(len(alphas), COL_WRAP, height=height, aspect=5.5 / height, sharey=True)
    for ax, alpha in zip(axes, alphas):
        part = brisk[(brisk["alpha"] == alpha) & brisk["system"].isin(shown)].set_index("system").reindex(shown)
        for y, (_system, row) in enumerate(part.iterrows()):
            color = {"risk": RISK, "reward": REWARD}.get(row["verdict_overlap"], NEUTRAL)
            low, high = sorted((sign * row["diff_low"], sign * row["diff_high"]))
            ax.plot([low, high], [y, y], color=color, lw=2)
            ax.plot(sign * row["diff_mean"], y, "o", color=color, ms=4)
        ax.axvline(0, color="black", lw=0.8, ls="--")
        ax.set_yticks(range(len(shown)), shown, fontsize=8)
        side = "right of 0 = risk" if convention == "minus" else "left of 0 = risk"
        ax.set_xlabel(f"challenger − baseline effect, α = {alpha:g} ({side})")
    tight_layout(fig)
    return fig


def _kde(values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    from scipy import stats

    if np.ptp(values) == 0:
        return np.zeros_like(grid)
    return stats.gaussian_kde(values)(grid)


def methods_html(result, n_topics: int) -> HTML:
    """The methods paragraph of the Bayesian report (`bayes.presentation.methods_text`) as HTML."""
    return HTML(f"<p>{html.escape(methods_text(result, n_topics))}</p>")


def verdict_matrix(ppdrisk: pd.DataFrame, brisk: pd.DataFrame, convention: str, measure: str, baseline: str) -> HTML:
    """Every challenger a rule flags, named in two lines (risk, reward; riskiest first), then challengers × α, each
    cell PPDRisk⁻'s verdict and median with how many of the three rules agree: the frequentist report's verdict
    matrix (`render.tables.verdict_matrix`, 12 rows a page), flagged challengers first."""
    summary = verdict_summary(ppdrisk, brisk)
    value = "PPDRisk⁻" if convention == "minus" else "−PPDRisk⁻"
    caption = (
        f"Verdicts per challenger and α on {measure} against {baseline}: PPDRisk⁻'s verdict, the {value} median "
        f"and (rules agreeing/{len(RULES)}: {', '.join(RULES[:1])}, BRisk⁻'s {' and '.join(RULES[1:])} rules); the "
        f"last column names the rules that disagree. Challengers flagged by a rule at some α come first, riskiest "
        "first."
        + (
            f" FAILED their checks, so these verdicts are not to be trusted (see Diagnostics): {'; '.join(failed)}."
            if (failed := summary.attrs["failed"])
            else ""
        )
    )
    total = summary["system"].nunique()
    lines = "".join(
        f"<li><b>{html.escape(kind)}</b> under at least one rule at some α ({len(names)} of {total}): "
        f"{html.escape(', '.join(names)) if names else 'none'}</li>"
        for kind, names in (("Risk", summary.attrs["risk"]), ("Reward", summary.attrs["reward"]))
    )
    flagged = f"<ul class='rr-flagged'>{lines}</ul>"
    first = summary.attrs["risk"] + [s for s in summary.attrs["reward"] if s not in summary.attrs["risk"]]
    matrix = frequentist_matrix(summary, convention, caption, page_size=12, one_line=True, first=first)
    return HTML(flagged + matrix.markup)
