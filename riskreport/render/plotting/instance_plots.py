"""Figures of non-deterministic systems: the spread of their instances per topic, the mixed-model effects
with their equivalence margin, and risk against α per instance."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from riskreport.render.plotting.plot_layout import tight_layout

INSTANCE_COLOURS = {"instances": "#9ecae1", "pooled": "#08519c", "baseline": "#d95f02"}


def instance_spread(scores: pd.DataFrame, baseline: str, measure: str):
    """Per-topic spread of effectiveness across instances (Jayasinghe et al. 2014, Fig. 1).

    One panel per system, topics sorted by the baseline's score: a box per topic over the
    system's instances (whiskers at 1.5 IQR) and the baseline as a diamond (its mean over
    instances when it has several). `scores` is tidy: `system, instance, topic, score`.
    """
    base = scores[scores["system"] == baseline].groupby("topic", sort=False)["score"].mean()
    order = base.sort_values(ascending=False, kind="stable").index.tolist()
    systems = [s for s in dict.fromkeys(scores["system"]) if s != baseline]
    fig, axes = plt.subplots(
        len(systems), 1, figsize=(13, 2.6 * len(systems) + 0.8), sharex=True, sharey=True, squeeze=False
    )
    for ax, system in zip(axes[:, 0], systems):
        data = scores[scores["system"] == system]
        sns.boxplot(
            data=data,
            x="topic",
            y="score",
            order=order,
            color=INSTANCE_COLOURS["instances"],
            whis=1.5,
            fliersize=2,
            linewidth=0.7,
            ax=ax,
        )
        ax.scatter(
            range(len(order)),
            base.loc[order],
            marker="D",
            s=14,
            color=INSTANCE_COLOURS["baseline"],
            zorder=3,
            label=baseline,
        )
        ax.set_title(
            f"{system}: {data['instance'].nunique()} instances per topic (boxes); {baseline}: diamonds",
            loc="left",
            fontsize="medium",
        )
        ax.set_ylabel(measure)
        ax.set_xlabel("")
    last = axes[-1, 0]
    last.set_xlabel(f"topic, sorted by {baseline}'s {measure}")
    last.tick_params(axis="x", labelrotation=90, labelsize=7)
    fig.suptitle("Per-topic effectiveness across instances: a tall box is a topic on which instances disagree", y=1.0)
    tight_layout(fig)
    return axes[:, 0]


def effect_intervals(mixed: pd.DataFrame, measure: str, sig_level: float, ax=None):
    """Each system's effect against the baseline, its intervals and the margin ±δ0 (Jayasinghe et al. 2014, Fig. 2).

    `mixed` is `riskreport.stats.mixed.mixed_table(...)`: thick bar = the 100(1−2·sig)% interval of
    the equivalence tests (`tost_low`, `tost_high`), thin line = the 100(1−sig)% interval, dot =
    effect; the shaded band is the equivalence region (−δ0, δ0); the verdict is written at the right.
    """
    n = len(mixed)
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.55 * n + 1.8))
    delta0 = float(mixed["delta0"].iloc[0])
    baseline = mixed["baseline"].iloc[0]
    ax.axvspan(-delta0, delta0, color="#d9f0e3", label=f"equivalence region ±δ0 = ±{delta0:g}")
    ax.axvline(0, color="black", linewidth=0.6)
    for level in (-delta0, delta0):
        ax.axvline(level, color="#1b9e77", linestyle="--", linewidth=0.8)
    for i, row in enumerate(mixed.itertuples()):
        ax.plot(
            [row.ci_low, row.ci_high],
            [i, i],
            color=INSTANCE_COLOURS["pooled"],
            linewidth=1.2,
            label=f"{100 * (1 - sig_level):g}% interval" if i == 0 else None,
        )
        ax.plot(
            [row.tost_low, row.tost_high],
            [i, i],
            color=INSTANCE_COLOURS["pooled"],
            linewidth=6,
            alpha=0.55,
            solid_capstyle="butt",
            label=f"{100 * (1 - 2 * sig_level):g}% interval (equivalence)" if i == 0 else None,
        )
        ax.plot(row.effect, i, "o", color="black", markersize=4)
        ax.annotate(row.verdict, xy=(1.02, i), xycoords=("axes fraction", "data"), va="center")
    ax.set_yticks(range(n), mixed["system"])
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlabel(f"effect on {measure}: system − {baseline} (> 0: better than {baseline})")
    ax.set_title("System effects of the mixed model against the equivalence margin", loc="left", pad=26)
    ax.legend(frameon=False, bbox_to_anchor=(0, 1.0), loc="lower left", ncol=3, fontsize="small")
    return ax


def instance_risk_lines(
    instances: pd.DataFrame,
    pooled: pd.DataFrame,
    y: str,
    baseline: str,
    measure: str,
    critical: float | None = None,
    col_wrap: int = 3,
) -> sns.FacetGrid:
    """URisk or TRisk (`y`) against α: one thin line per instance, the pooled system in bold, one panel per system.

    `instances` is `riskreport.stats.instance_risk.instance_risk(...)`, `pooled` is `risk_agreement(...)`
    (column `pooled_<y>`); `critical` draws the ±t lines (TRisk). Standard convention: < 0 is risk.
    """
    n = instances["system"].nunique()
    grid = sns.FacetGrid(instances, col="system", col_wrap=min(col_wrap, n), height=3.2, aspect=1.4, sharey=True)
    grid.map_dataframe(
        sns.lineplot, x="alpha", y=y, units="instance", estimator=None, color=INSTANCE_COLOURS["instances"], linewidth=1
    )
    for system, ax in grid.axes_dict.items():
        part = pooled[pooled["system"] == system]
        ax.plot(
            part["alpha"],
            part[f"pooled_{y}"],
            color=INSTANCE_COLOURS["pooled"],
            linewidth=2.5,
            marker="o",
            markersize=4,
            label="pooled (mean over instances)",
        )
        ax.axhline(0, color="black", linewidth=0.6)
        for level in (-critical, critical) if critical is not None else ():
            ax.axhline(level, color="black", linestyle="--", linewidth=0.8)
    label = {"urisk": "URisk", "trisk": "TRisk"}.get(y, y)
    grid.set_titles("{col_name}")
    grid.set_axis_labels("α (losses weigh 1 + α)", f"{label} vs {baseline} (< 0: risk)")
    grid.axes.flat[0].legend(frameon=False, fontsize="small", loc="lower left")
    dashed = f"; dashed: ±t critical value ({critical:.3f})" if critical is not None else ""
    grid.figure.suptitle(
        f"{label} of {measure}: each instance (thin) and the pooled system (bold) against α{dashed}", y=1.03
    )
    return grid
