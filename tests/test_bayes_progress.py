"""The Bayesian report's progress lines (`bayes.fit_progress`): the time left of a running fit from its ESS growth,
and the lines a report shows while a long fit samples."""

from __future__ import annotations

import pytest

from riskreport.bayes import fit_progress


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
