"""Figures as data, drawn here or on the other core: `FigureJob` (a plot function of `riskreport.render` and its
arguments), the background worker's start (`prepare_worker`) and `PendingFigure`, what a page shows while the worker
draws.

A report's figures take about half of its kernel's time, and on two cores the other core is idle while the
kernel runs (the command line only waits for it). `Page.show` therefore hands a figure to the background process
of its `FigureWriter` when that process is free, and goes on with the tables; the figure's place in the notebook
is filled when the page finishes (`update_display`: papermill keeps the final output). The worker draws with the
kernel's `rcParams`, so its PNG is the same, byte for byte, as the one drawn here.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

RC_NOT_SENT = ("backend", "interactive", "figure.hooks")  # the worker's own: Agg, not interactive, no hooks


def figure_of(obj):
    """The matplotlib Figure behind a Figure, Axes, array of Axes or seaborn grid."""
    import numpy as np

    if hasattr(obj, "savefig") and not hasattr(obj, "axes_dict"):
        return obj
    if hasattr(obj, "figure"):
        return obj.figure
    return np.asarray(obj).flat[0].figure


@dataclass(frozen=True)
class FigureJob:
    """A figure as data: `function(*args, **kwargs)` draws it (a module-level plot function, so the job pickles
    by reference, with its data frames). Calling the job draws the figure in this process and returns it."""

    function: Callable[..., Any]
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)

    def __call__(self):
        return figure_of(self.function(*self.args, **self.kwargs))


def style_snapshot() -> dict:
    """This process's matplotlib settings, as the worker applies them before it draws (`figures.draw_files`)."""
    import matplotlib as mpl

    return {k: v for k, v in mpl.rcParams.items() if k not in RC_NOT_SENT}


def prepare_worker() -> None:
    """The background process's start: end with its parent, and import the plotting libraries before any
    figure comes, while the kernel computes its first tables."""
    from riskreport.io.processes import exit_with_parent

    exit_with_parent()
    import matplotlib

    matplotlib.use("Agg")
    import riskreport.render.plotting.plots  # noqa: F401 - seaborn, pandas and the plot functions, imported ahead


class PendingFigure:
    """A figure being drawn in the background, as a page shows it: displayed, it leaves a place in the notebook
    (`display_id`) that `Page.finish` fills; its `markup` (to put it beside another figure, say) waits for it.

    `embed` makes the page's HTML of the PNG; `fallback` draws the figure in this process and returns its PNG, for
    when the background process failed (ended, killed): a plot function's own error is then raised here."""

    def __init__(self, future: Future, embed: Callable[[bytes], Any], fallback: Callable[[], bytes]):
        self.future, self._embed, self._fallback = future, embed, fallback
        self.display_id = f"riskreport-figure-{uuid.uuid4().hex}"
        self.displayed = False
        self._png: bytes | None = None

    @property
    def png(self) -> bytes:
        """The page's copy of the figure's PNG (waits until it is drawn)."""
        if self._png is None:
            try:
                self._png = self.future.result()[0]
            except Exception:  # noqa: BLE001 - the background process failed: drawn here instead
                self._png = self._fallback()
        return self._png

    @property
    def html(self):
        """The figure's HTML (waits until it is drawn)."""
        return self._embed(self.png)

    @property
    def markup(self) -> str:
        return self.html.markup

    def _repr_html_(self) -> str:
        return self.markup

    def _ipython_display_(self) -> None:
        from IPython.display import HTML, display

        display(HTML("<p class='rr-caption'>(the figure is being drawn)</p>"), display_id=self.display_id)
        self.displayed = True

    def fill(self) -> None:
        """Put the drawn figure in the place it was displayed (`update_display`)."""
        from IPython.display import update_display

        if self.displayed:
            update_display(self.html, display_id=self.display_id)
