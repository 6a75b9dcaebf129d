"""Figures of the Bayesian risk report; each takes tidy tables and returns the matplotlib Axes (or Figure)."""

from __future__ import annotations

import html
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from riskreport.bayes.modelling.models import LABELS
from riskreport.bayes.posterior.measures import NO_VERDICT
from riskreport.bayes.report.presentation import FLAGS, RULES, FitFailure, methods_text, verdict_summary
from riskreport.render.pages.report import HTML
from riskreport.render.plotting.palette import VERDICT_COLOURS
from riskreport.render.plotting.plot_layout import panels, tight_layout
from riskreport.render.tabular.html import _alpha_label, _signed, fixed, interactive
from riskreport.render.tabular.tables import VERDICT_ANCHOR, _by_verdict
from riskreport.render.tabular.tables import VERDICT_COLOURS as CELL_COLOURS

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
            flagged = verdict in ("risk", "reward")  # not inconclusive, nor `no verdict` (a failed fit)
            ax.plot(
                grid,
                density,
                color={"risk": RISK, "reward": REWARD}.get(verdict, NEUTRAL),
                lw=1.4 if flagged else 0.8,
                label=system if flagged else None,
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


def verdict_matrix(
    ppdrisk: pd.DataFrame,
    brisk: pd.DataFrame,
    convention: str,
    measure: str,
    baseline: str,
    failures: Sequence[FitFailure] | None = None,
) -> HTML:
    """The report's headline and verdict matrix: the fits that failed their checks, which fit and what to change
    (`failures`, `presentation.fit_failures`; without them, the failed fits the tables' diagnostics name); every
    challenger a rule flags, named in two lines (risk, reward; riskiest first) with how many at each α; then
    challengers × α, each cell PPDRisk⁻'s verdict and median with how many of the rules that give a verdict agree,
    12 rows a page, flagged challengers first (the frequentist report's layout, `render.tables.verdict_matrix`).

    A rule whose fit failed gives no verdict: its cells say so in words, are not coloured and are not counted.
    """
    summary = verdict_summary(ppdrisk, brisk)
    value = "PPDRisk⁻" if convention == "minus" else "−PPDRisk⁻"
    instead = (
        " Where PPDRisk⁻'s fit failed its checks a cell gives BRisk⁻'s verdict instead (the overlap rule's, with how "
        "many of its two rules agree) and no median."
    )
    failed = summary.attrs["failed"]
    caption = (
        f"Verdicts per challenger and α on {measure} against {baseline}: PPDRisk⁻'s verdict, the {value} median "
        f"and (rules agreeing/rules giving a verdict, of {', '.join(RULES[:1])} and BRisk⁻'s {' and '.join(RULES[1:])} "
        "rules); the last column names the rules that disagree. Challengers flagged by a rule at some α come first, "
        "riskiest first."
        + (instead if (summary["by"] != RULES[0]).any() else "")
        + (
            f" No verdict from the fits that failed their checks (see above and Diagnostics): {'; '.join(failed)}."
            if failed
            else ""
        )
    )
    total = summary["system"].nunique()
    lines = "".join(headline(kind, summary, total, convention) for kind in FLAGS)
    flagged = f"<ul class='rr-flagged'>{lines}</ul>"
    first = summary.attrs["risk"] + [s for s in summary.attrs["reward"] if s not in summary.attrs["risk"]]
    return HTML(
        failed_fits(failures, summary.attrs["failed"], HEADLINE_WARNING).markup
        + flagged
        + _matrix(summary, convention, caption, first)
    )


def headline(kind: str, summary: pd.DataFrame, total: int, convention: str) -> str:
    """One line of the headline: how many challengers a rule calls `kind` at each α (`no verdict` at an α where
    every rule's fit failed), then their names, riskiest first; a challenger the other line names too carries the
    α (and, where both fall at one α, the rules) at which it is `kind`."""
    at, other = summary.attrs["at"][kind], summary.attrs["at"][FLAGS[1 - FLAGS.index(kind)]]
    judged = set(summary.attrs["judged"])
    counts = []
    for alpha in sorted(summary["alpha"].unique()):
        n = sum(any(a == alpha for a, _ in cells) for cells in at.values())
        said = "no verdict" if alpha not in judged else f"{n} of {total}" if n else "none"
        counts.append(f"{_alpha_label(alpha, convention)} ({said})")
    names = [name + _separated(at[name], other.get(name), convention) for name in summary.attrs[kind]]
    same = {count.rpartition(" (")[2] for count in counts}
    if not names and len(same) == 1:  # the same at every α: none, or no verdict (every rule's fit failed)
        return f"<li><b>{kind.capitalize()}</b> under at least one rule: {same.pop().rstrip(')')} at any α</li>"
    return (
        f"<li><b>{kind.capitalize()}</b> under at least one rule at {html.escape(', '.join(counts))}"
        f"{': ' + html.escape(', '.join(names)) if names else ''}</li>"
    )


def _separated(cells: list, other: list | None, convention: str) -> str:
    """` (α = 5, 10)`: the α at which a challenger named in both lines is flagged so, with the rules where the other
    line's verdict falls at the same α; empty for a challenger named in one line only."""
    if not other:
        return ""
    clash = {alpha for alpha, _ in other}
    items = [f"{alpha:g}" if alpha not in clash else f"{alpha:g} by {' and '.join(rules)}" for alpha, rules in cells]
    if convention == "minus":
        items = [f"{alpha + 1:g}" + item.removeprefix(f"{alpha:g}") for (alpha, _), item in zip(cells, items)]
    return f" ({'r' if convention == 'minus' else 'α'} = {', '.join(items)})"


HEADLINE_WARNING = (
    "<strong>A fit failed its checks, so some rules give no verdict</strong> (their cells say so, uncoloured, and the "
    "counts below leave them out):"
)
DIAGNOSTICS_WARNING = "<strong>Fits that failed their checks</strong>, what follows and what to change:"


def failed_fits(
    failures: Sequence[FitFailure] | None, failed: Sequence[str] = (), intro: str = DIAGNOSTICS_WARNING
) -> HTML:
    """A warning box: each fit that failed its checks, what failed, the verdicts it gives none of and what to change;
    without `failures`, the failed fits the tables name (`failed`). `intro` opens it (HTML; the headline's says the
    counts leave them out). Empty when all passed."""
    if failures is not None:
        items = [failure.sentence() for failure in failures]
    else:
        items = [f"{name} failed its checks: no verdict comes from it (see Diagnostics)." for name in failed]
    if not items:
        return HTML("")
    return HTML(
        f"<div class='rr-warning'>{intro}<ul>"
        + "".join(f"<li>{html.escape(item)}</li>" for item in items)
        + "</ul></div>"
    )


VERDICT_TEXT = {"risk": "▼ risk", "reward": "▲ reward", "inconclusive": "inconclusive"}


def _matrix(summary: pd.DataFrame, convention: str, caption: str, first: list[str]) -> str:
    """Challengers × α of `verdict_summary`: each cell a verdict with the −PPDRisk⁻ median (or PPDRisk⁻'s in the
    minus convention) and (agree/rules with a verdict), coloured, on one line; a cell without a verdict says why."""
    labels = {alpha: _alpha_label(alpha, convention) for alpha in sorted(summary["alpha"].unique())}
    order = list(dict.fromkeys(summary["system"]))
    text = [
        why
        or (
            f"{VERDICT_TEXT[v]} {fixed(u, 4, signed=True)} ({a}/{m})"
            if by == RULES[0]
            else f"{VERDICT_TEXT[v]} ({a}/{m}, no {RULES[0]})"
        )
        for v, by, u, a, m, why in zip(
            summary["verdict"],
            summary["by"],
            _signed(summary["urisk"], convention),
            summary["agree"],
            summary["methods"],
            summary["why"],
        )
    ]
    cells = summary.assign(cell=text, label=summary["alpha"].map(labels))
    wide = cells.pivot(index="system", columns="label", values="cell").reindex(index=order, columns=labels.values())
    verdicts = cells.pivot(index="system", columns="label", values="verdict").reindex_like(wide)
    notes = {
        system: "; ".join(f"{labels[a]} {_by_verdict(d)}" for a, d in zip(g["alpha"], g["disagree"]))
        for system, g in summary[summary["disagree"] != ""].groupby("system", sort=False)
    }
    wide = wide.fillna("").assign(**{"rules that disagree": [notes.get(s, "") for s in order]}).reset_index()
    paint = verdicts.map(_cell_style).reset_index(drop=True).reindex(columns=wide.columns, fill_value="")
    style = (
        wide.style.hide(axis="index")
        .format(escape="html")
        .format_index(escape="html", axis=1)
        .set_properties(**{"text-align": "left"})
        .apply(lambda frame: paint.set_axis(frame.index, axis=0), axis=None)
        .set_caption(html.escape(caption))
    )
    return (
        f"<div id='{VERDICT_ANCHOR}' class='rr-verdict-matrix'>"
        + interactive(style, page_size=12, flagged=first).markup
        + "</div>"
    )


def _cell_style(verdict) -> str:
    """A verdict cell's background (none without a verdict) on one line; a cell without a verdict wraps its reason."""
    if not isinstance(verdict, str):
        return ""
    if verdict == NO_VERDICT:
        return "white-space: normal"
    return f"{CELL_COLOURS[verdict]}; white-space: nowrap" if verdict in CELL_COLOURS else "white-space: nowrap"
