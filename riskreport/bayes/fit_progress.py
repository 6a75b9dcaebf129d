"""The Bayesian report's progress: one line on stderr each time a fit ends (fits done, time left)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from riskreport.progress import Progress, stderr_printer

stderr_progress = stderr_printer(
    "riskreport: bayes: "
)  # the default progress of `fit`: the terminal, never the notebook

if TYPE_CHECKING:
    from riskreport.bayes.fits import BayesFit


class FitProgress:
    """The progress of a report's fits in one line each time a fit ends: fits done of all, and the time left.

    Passed as `progress` to `fit`, it swallows the per-fit lines (compiling, batches, ESS) except a
    warning that a fit stopped at `max_draws`; the time left is the mean wall time of the fits
    sampled so far times the fits left (cached fits take no time).
    """

    def __init__(self, total: int, say: Progress = stderr_progress, cached: int = 0):
        self.total, self.say, self.done, self.sampled = total, say, 0, 0
        self.started = time.time()
        self.say(
            f"{total} Bayesian fit{'s' if total != 1 else ''} to run"
            + (f" ({cached} cached)" if cached else "")
            + ": progress after each"
        )

    def __call__(self, message: str) -> None:
        if "reached before the ESS target" in message:
            self.say(message)

    def fit_done(self, result: BayesFit) -> None:
        self.done += 1
        self.sampled += not result.cached
        elapsed = time.time() - self.started
        left = self.total - self.done
        rate = elapsed / max(self.sampled, 1)
        tail = f", about {_duration(rate * left)} left" if left and self.sampled else ""
        self.say(
            f"{self.done}/{self.total} fits done ({result.label}"
            + (", cached" if result.cached else f", {result.seconds:.0f} s")
            + f"), {elapsed:.0f} s so far{tail}"
        )


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"
