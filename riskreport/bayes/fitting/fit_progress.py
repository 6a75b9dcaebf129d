"""The Bayesian report's progress: one line on stderr each time a fit ends (fits done, time left)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from riskreport.progress import Progress, stderr_printer

stderr_progress = stderr_printer(
    "riskreport: bayes: "
)  # the default progress of `fit`: the terminal, never the notebook

if TYPE_CHECKING:
    from riskreport.bayes.fitting.fits import BayesFit


class FitProgress:
    """The progress of a report's fits in one line each time a fit ends: fits done of all, and the time left.

    Passed as `progress` to `fit`, it swallows the per-fit lines (compiling, batches, ESS) except a
    warning that a fit stopped at `max_draws` and the lines of a long fit (`stopping`: at most one
    every 15 s, with its draws, ESS so far and time left), which it numbers; the time left of the
    report is the mean wall time of the fits sampled so far times the fits left (cached fits take no
    time).
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
        elif message.startswith(RUNNING):
            self.say(f"fit {self.done + 1}/{self.total}: {message.removeprefix(RUNNING)}")

    def fit_done(self, result: BayesFit) -> None:
        self.done += 1
        self.sampled += not result.cached
        elapsed = time.time() - self.started
        left = self.total - self.done
        rate = elapsed / max(self.sampled, 1)
        tail = f", about {duration(rate * left)} left" if left and self.sampled else ""
        self.say(
            f"{self.done}/{self.total} fits done ({result.label}"
            + (", cached" if result.cached else f", {result.seconds:.0f} s")
            + f"), {elapsed:.0f} s so far{tail}"
        )


RUNNING = "… "  # the start of the lines a running fit says (`stopping`)


def time_left(looks: list[tuple[float, float]], target: float) -> float | None:
    """Seconds until the ESS reaches `target`, at its growth rate from the first to the last of the `looks`
    (seconds, ESS): ESS grows about linearly with the draws of a mixing chain. None with fewer than two looks
    or no growth."""
    if len(looks) < 2:
        return None
    (t0, e0), (t1, e1) = looks[0], looks[-1]
    if t1 <= t0 or e1 <= e0:
        return None
    return max(0.0, (target - e1) / ((e1 - e0) / (t1 - t0)))


def running_line(
    draws: int, bulk: float, tail: float, target: int, seconds: float, left: float | None, rhat: float | None
) -> str:
    """A running fit's progress at a checkpoint: its draws, the smallest bulk and tail ESS of the system effects, and
    the time left (`time_left`), or, once the ESS target is met, the R̂ it waits for (`rhat`)."""
    if rhat is not None:
        after = f"{seconds:.0f} s; the ESS target is met, max R̂ {rhat:.3f} is not below 1.01 yet: sampling on"
    elif left is not None:
        after = f"{seconds:.0f} s, about {duration(left)} left"
    else:
        after = f"{seconds:.0f} s, time left: after the next check"
    return f"{RUNNING}{draws:,} draws so far, min ESS bulk {bulk:,.0f} / tail {tail:,.0f} of {target:,} ({after})"


def duration(seconds: float) -> str:
    """A duration as people say it: 45 s, 1.6 min, 2.1 h."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"
