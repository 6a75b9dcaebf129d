"""The layout shared by the figures: the templates' style, panels as a FacetGrid lays them out (from one
`plt.subplots` call), topic tick labels, bars drawn as one collection, a tight layout applied once, and how to
read a risk axis (`sign_note`)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

STYLE_RC = {"axes.titley": 1.0}  # titles sit just above the axes (no axes of ours has top ticks): matplotlib
# then skips placing each title above the x tick labels of every axes at each draw


def tight_layout(fig, **options) -> None:
    """Lay `fig` out as `Figure.tight_layout` does, once, without leaving a layout engine on the figure.

    After `fig.tight_layout()` a figure keeps a placeholder engine, and matplotlib then draws the whole
    figure one extra time in every `savefig` (four formats: four extra draws). `options` as tight_layout's.
    """
    from matplotlib.layout_engine import TightLayoutEngine

    TightLayoutEngine(**options).execute(fig)


def set_style() -> None:
    """The templates' look: seaborn's whitegrid theme in the notebook context, with `STYLE_RC`."""
    sns.set_theme(style="whitegrid", context="notebook", rc=STYLE_RC)


def topic_ticks(ax, labels, limit: int = 80, axis: str = "x", first: int = 0) -> None:
    """Topic ids as tick labels (every k-th when there are more than `limit`), the i-th at position `first + i`."""
    labels = [str(t) for t in labels]
    step = max(1, int(np.ceil(len(labels) / limit)))
    positions = list(range(0, len(labels), step))
    size = 7 if len(labels) <= 40 else 5
    ticks, names = [first + i for i in positions], [labels[i] for i in positions]
    if axis == "x":
        ax.set_xticks(ticks, names, rotation=90, fontsize=size)
    else:
        ax.set_yticks(ticks, names, fontsize=size)
    ax.grid(False, axis=axis)  # a grid line at every other bar is clutter, not a guide


def panels(
    n: int,
    col_wrap: int,
    height: float,
    aspect: float,
    sharey: bool = True,
    sharex: bool = False,
    rows: int | None = None,
):
    """A figure of `n` panels, `col_wrap` to a row (or `rows` rows), each `height` × `height·aspect` inches.

    The layout of a seaborn FacetGrid (shared axes, tick labels on the outer panels only, no top and
    right spines, unused cells hidden) from one `plt.subplots` call: FacetGrid re-runs the layout
    engine at every step, which cost seconds per figure. Share x only where every panel has the
    same x values: a shared axis shares one formatter, so panels sorted by their own values would
    all show the last panel's labels. Returns the figure and the `n` panels in reading order.
    """
    ncols = -(-n // rows) if rows else max(1, min(col_wrap, n))
    nrows = rows or -(-n // ncols)
    fig, grid = plt.subplots(
        nrows, ncols, figsize=(ncols * height * aspect, nrows * height), sharey=sharey, sharex=sharex, squeeze=False
    )
    axes = list(grid.flat)
    for i, ax in enumerate(axes):
        if i >= n:
            ax.set_visible(False)
        else:
            ax.spines[["top", "right"]].set_visible(False)
            if sharex and i + ncols >= n:  # the lowest panel of its column: its tick labels show
                ax.xaxis.set_tick_params(labelbottom=True)
    return fig, axes[:n]


def label_panels(axes, ncols: int, xlabel: str, ylabel: str) -> None:
    """Axis labels as a FacetGrid sets them: x under the last panel of each column, y left of each row.

    An axis left without a label is not placed at each draw (matplotlib otherwise measures every
    tick label of it again, for nothing: a large share of drawing a many-panel figure).
    """
    for i, ax in enumerate(axes):
        for axis, text, shown in ((ax.yaxis, ylabel, i % ncols == 0), (ax.xaxis, xlabel, i + ncols >= len(axes))):
            axis.set_label_text(text if shown else "")
            if not shown:
                axis.set_label_coords(0.5, 0.5)


def bars(ax, x, height, width: float, colors):
    """Bars from 0 to `height` centred on `x`, as `Axes.bar` draws them without edges, but as one
    collection: hundreds of bars per panel draw, and write as SVG and PDF, many times faster."""
    from matplotlib.collections import PolyCollection

    x, height = np.asarray(x, dtype=float), np.asarray(height, dtype=float)
    colors = np.asarray(list(colors), dtype=object)
    shown = np.isfinite(x) & np.isfinite(height)
    x, height, colors = x[shown], height[shown], colors[shown]
    left, right, zero = x - width / 2, x + width / 2, np.zeros_like(height)
    corners = np.stack(
        [np.column_stack(c) for c in ((left, zero), (left, height), (right, height), (right, zero))], axis=1
    )
    collection = PolyCollection(
        corners,  # type: ignore[arg-type]  # an (N, 4, 2) array: matplotlib's fast path
        facecolors=list(colors),
        edgecolors="none",
        linewidths=0,
    )
    collection.sticky_edges.y.append(0)
    ax.add_collection(collection, autolim=True)
    ax.autoscale_view()
    return collection


def sign_note(convention: str) -> str:
    """How to read a risk axis in the chosen convention."""
    return "< 0: risk, > 0: reward" if convention == "standard" else "minus convention: > 0 risk, < 0 reward"
