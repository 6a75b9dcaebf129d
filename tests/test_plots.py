"""The figures: right labels on every panel, and no hidden extra drawing work."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from riskreport.render import figures, plots  # noqa: E402


@pytest.fixture
def deltas():
    rng = np.random.default_rng(7)
    systems = [f"s{i}" for i in range(7)]
    topics = [f"t{j:02d}" for j in range(30)]
    return pd.DataFrame([(s, t, rng.normal()) for s in systems for t in topics], columns=["system", "topic", "delta"])


def _labels(ax):
    return {round(x): label.get_text() for x, label in zip(ax.get_xticks(), ax.get_xticklabels())}


def test_each_delta_panel_names_its_own_topics_under_their_bars(deltas):
    fig = plots.topic_deltas(deltas, "base", "nDCG@10")
    try:
        shown = [ax for ax in fig.axes if ax.get_visible()]
        assert [ax.get_title() for ax in shown] == [f"s{i}" for i in range(7)]
        for ax in shown:
            own = deltas[deltas["system"] == ax.get_title()].sort_values("delta", ascending=False)["topic"].tolist()
            labels = _labels(ax)
            assert labels and all(own[x - 1] == name for x, name in labels.items())  # bar x = rank, from 1
    finally:
        plt.close(fig)


def test_shared_topic_axis_shows_its_labels_on_the_lowest_panel_of_each_column(deltas):
    rise = deltas["system"].str[1:].astype(int)  # s0 the riskiest: the panels keep s0 ... s6
    topics = deltas.assign(tj=deltas["delta"], x=deltas["delta"] + rise, alpha=5.0)
    fig = plots.topic_tj(topics, 2.0, "base", "nDCG@10")
    try:
        shown = [ax for ax in fig.axes if ax.get_visible()]
        with_labels = [
            ax.get_title()
            for ax in shown
            if any(label.get_visible() for label in ax.get_xticklabels())
            and ax.xaxis.get_tick_params().get("labelbottom", True)
        ]
        assert with_labels == ["s4", "s5", "s6"]  # 3 columns: s6 alone in the last row, s4 and s5 above gaps
        for ax in shown[4:]:
            assert _labels(ax)[0] == "t00"
            assert {label.get_rotation() for label in ax.get_xticklabels()} == {90.0}
            assert not any(line.get_visible() for line in ax.get_xgridlines())
    finally:
        plt.close(fig)


def test_figures_keep_no_layout_engine_so_each_format_is_drawn_once(deltas):
    fig = plots.topic_deltas(deltas, "base", "nDCG@10")
    try:
        assert fig.get_layout_engine() is None  # fig.tight_layout() would leave one: an extra draw per savefig
        box = figures.tight_bbox(fig)
        assert 0 < box.width and 0 < box.height
    finally:
        plt.close(fig)


def test_topic_figure_and_table_mark_the_same_topics_riskiest_first():
    """Issue 33, point 8: one rule for the figure's colours and the table (TJ beyond ±t, a loss or gain of at least
    0.05); a tiny loss of a system that ties the baseline does not stand out, however large its TJ; panels go
    riskiest first, as in Figure 1."""
    from riskreport.render import report
    from riskreport.render.plotting.palette import RISK_COLOURS

    rows = [
        ("copy", "t1", -0.008, -6.93),  # bm25-copy-c's topic 26: TJ far beyond, Δ tiny
        ("copy", "t2", 0.0, 0.15),
        ("strong", "t1", 0.30, 2.5),  # a gain beyond +t
        ("strong", "t2", 0.12, -2.5),  # a smaller gain than its mean: TJ < -t but no loss
        ("weak", "t1", -0.40, -2.2),  # a loss beyond -t
        ("weak", "t2", -0.01, 0.8),
    ]
    topics = pd.DataFrame(rows, columns=["system", "topic", "delta", "tj"]).assign(x=lambda t: t["delta"], alpha=5.0)
    table = report.significant_topics(topics, 2.0)
    assert table.to_dict("list") == {
        "system": ["weak", "strong"],
        "alpha": [5.0, 5.0],
        "losses (topic: Δ)": ["t1: -0.40", ""],
        "gains (topic: Δ)": ["", "t1: +0.30"],
    }
    fig = plots.topic_tj(topics, 2.0, "base", "nDCG@10")
    try:
        panels = [ax for ax in fig.axes if ax.get_visible()]
        assert [ax.get_title() for ax in panels] == ["weak", "copy", "strong"]  # lowest mean x first
        from matplotlib.collections import PolyCollection

        coloured = {
            (ax.get_title(), topic): matplotlib.colors.to_hex(colour)
            for ax in panels
            for collection in ax.collections
            if isinstance(collection, PolyCollection)
            for topic, colour in zip(["t1", "t2"], collection.get_facecolors())
        }
        assert (
            coloured[("weak", "t1")] == RISK_COLOURS["loss"].lower()
            and coloured[("strong", "t1")] == RISK_COLOURS["win"].lower()
        )
        assert {key for key, colour in coloured.items() if colour != "#9ecae1"} == {("weak", "t1"), ("strong", "t1")}
    finally:
        plt.close(fig)


def test_bayesian_figures_of_five_alphas_wrap_three_panels_to_a_row():
    """Issue 33, point 12: the Bayesian report's per-α figures (BRisk⁻ intervals, PPDRisk⁻ densities) put 5 α
    in two rows of at most 3 panels, not 5 in a row (each panel then a fifth of a 1400 px page)."""
    from riskreport.render import bayes as bplots

    alphas, systems = [0.0, 1.0, 2.0, 5.0, 10.0], ["base", "a", "b"]
    rng = np.random.default_rng(1)
    brisk = pd.DataFrame(
        [(s, a, "risk", -0.2, -0.1, -0.15) for s in systems[1:] for a in alphas],
        columns=["system", "alpha", "verdict_overlap", "diff_low", "diff_high", "diff_mean"],
    )
    ppdrisk = pd.DataFrame(
        [(a, s, "inconclusive") for a in alphas for s in systems], columns=["alpha", "system", "verdict"]
    )
    figures_drawn = [
        bplots.brisk_intervals(brisk, systems[1:]),
        bplots.ppdrisk_densities(rng.normal(size=(5, 200, 3)), systems, alphas, ppdrisk, systems[1:]),
    ]
    try:
        for fig in figures_drawn:
            shown = [ax for ax in fig.axes if ax.get_visible()]
            columns = {round(ax.get_position().x0, 2) for ax in shown}
            rows = {round(ax.get_position().y0, 2) for ax in shown}
            assert len(shown) == 5 and len(columns) == 3 and len(rows) == 2
            assert fig.get_size_inches()[0] <= 17  # at most 3 panels of 5.5 in
    finally:
        for fig in figures_drawn:
            plt.close(fig)
