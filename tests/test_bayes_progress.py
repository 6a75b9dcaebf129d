"""The Bayesian report's progress lines (`bayes.fit_progress`): the time left of a running fit from its ESS growth,
and the lines a report shows while a long fit samples."""

from __future__ import annotations

import pandas as pd
import pytest

from riskreport.bayes.fitting import fit_progress


def test_time_left_follows_the_ess_growth_rate():
    assert fit_progress.time_left([(10.0, 0.0), (30.0, 2_000.0)], 10_000) == pytest.approx(80.0)  # 100 ESS/s
    assert fit_progress.time_left([(10.0, 0.0), (20.0, 500.0), (30.0, 2_000.0)], 10_000) == pytest.approx(80.0)
    assert fit_progress.time_left([(5.0, 900.0), (15.0, 1_000.0)], 1_000) == 0.0  # met (R̂ still to pass)
    assert fit_progress.time_left([(30.0, 2_000.0)], 10_000) is None  # one look: no rate yet
    assert fit_progress.time_left([(10.0, 2_000.0), (30.0, 1_900.0)], 10_000) is None  # no growth


def test_durations_read_as_people_say_them():
    assert [fit_progress.duration(s) for s in (45, 96, 7_200)] == ["45 s", "1.6 min", "2.0 h"]


def test_a_report_shows_a_long_fits_lines_numbered():
    lines: list[str] = []
    progress = fit_progress.FitProgress(4, lines.append)
    progress("BHM-ZOiB: compiling the model (27,390 scores, 110 systems)")  # not shown
    progress(f"{fit_progress.RUNNING}warm-up: 400 of 1,000 iterations per chain")
    progress(
        f"{fit_progress.RUNNING}8,000 draws so far, min ESS bulk 3,100 / tail 2,900 of 10,000 (40 s, about 2.0 min left)"
    )
    assert lines[1] == "fit 1/4: warm-up: 400 of 1,000 iterations per chain"
    assert lines[2].startswith("fit 1/4: 8,000 draws so far, min ESS bulk 3,100") and lines[2].endswith("2.0 min left)")
    assert len(lines) == 3


def test_a_running_fit_says_its_draws_ess_and_time_left_or_what_it_waits_for():
    line = fit_progress.running_line(8_000, 3_100.4, 2_900.0, 10_000, 40.2, 120.0, None)
    assert (
        line
        == f"{fit_progress.RUNNING}8,000 draws so far, min ESS bulk 3,100 / tail 2,900 of 10,000 (40 s, about 2.0 min left)"
    )
    assert fit_progress.running_line(800, 90, 80, 100, 5, None, None).endswith("(5 s, time left: after the next check)")
    waiting = fit_progress.running_line(900, 436, 186, 100, 49, 0.0, 1.024)
    assert "ESS target is met, max R̂ 1.024 is not below 1.01 yet" in waiting and "left" not in waiting


def test_a_batch_says_where_its_slowest_chain_is_and_when_the_next_check_comes_from_its_rate():
    """While a batch samples: the warm-up or draws so far and the time to the next ESS check, measured from the
    slowest chain's iterations per second since the batch started (not guessed)."""
    import time

    from riskreport.bayes.fitting import stopping

    run = stopping._Run(lambda message: None, 300, None, time.time() - 10.0)  # 150 iterations in 10 s: 15 per s
    warm = run._line(150, 0, 500)
    assert warm.startswith(f"{fit_progress.RUNNING}warm-up: 150 of 300 iterations per chain (10 s, ")
    assert warm.endswith("the next ESS check in about 43 s)")  # (300 + 500 − 150) / 15
    drawing = run._line(450, 150, 500)  # 45 per s: 350 iterations to go
    assert (
        drawing
        == f"{fit_progress.RUNNING}150 draws per chain, the next ESS check at 500 (10 s, the next ESS check in about 8 s)"
    )


def test_a_fit_says_a_line_before_it_samples(monkeypatch):
    """The first line of a fit comes before any sampling (the model loaded or compiled, the batch starting), in the
    one running format a report shows."""
    import numpy as np

    from riskreport import bayes

    rng = np.random.default_rng(2)
    data = bayes.scores_data(pd.DataFrame(rng.normal(0.5, 0.1, (4, 9))))
    lines: list[str] = []
    bayes.fit(
        "gaussian", data, target_ess=200, chains=2, seed=3, use_cache=False, criteria=False, progress=lines.append
    )
    running = [line for line in lines if line.startswith(fit_progress.RUNNING)]
    sampled = next(k for k, line in enumerate(lines) if "min ESS" in line)  # the first line with draws sampled
    assert "(0 s" in running[0] and lines.index(running[0]) < sampled
    assert any("batch 1, 2 chains: 300 warm-up iterations each" in line for line in running)
