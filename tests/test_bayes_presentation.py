"""The Bayesian report at a campaign's scale (`bayes.presentation.verdict_summary`, `render.bayes.verdict_matrix`):
every challenger a rule flags comes first and is shown without a click, and 110 systems × 4 α stay under 8,000 px
at 1400 px wide in headless Chromium."""

from __future__ import annotations

import numpy as np
import pandas as pd
from conftest import find_browser, markup_page, measured

from riskreport.bayes import presentation
from riskreport.render import bayes as bplots

ALPHAS = (0.0, 1.0, 5.0, 10.0)


def _tables(n: int, seed: int = 4) -> tuple[pd.DataFrame, pd.DataFrame]:
    """PPDRisk⁻ and BRisk⁻ tables of `n` challengers: about a quarter risky, a tenth rewarding."""
    rng = np.random.default_rng(seed)
    systems = [f"run-{i:03d}" for i in range(n)]
    rows = []
    for s in systems:
        kind = rng.choice(["risk", "reward", "inconclusive"], p=[0.25, 0.1, 0.65])
        for a in ALPHAS:
            median = {"risk": -0.05, "reward": 0.04, "inconclusive": 0.0}[kind] * (1 + a / 10) + rng.normal(0, 0.002)
            rows.append((s, a, median, kind if a > 0 or kind != "risk" else "inconclusive"))
    frame = pd.DataFrame(rows, columns=["system", "alpha", "ppd_urisk_median", "verdict"])
    ppdrisk = frame.assign(diagnostics="ok")
    brisk = frame[["system", "alpha"]].assign(
        verdict_overlap=np.where(frame["verdict"] == "risk", "inconclusive", frame["verdict"]),
        verdict_difference=frame["verdict"],
        diagnostics="ok",
    )
    return ppdrisk, brisk


def test_flagged_challengers_come_first_riskiest_first_with_the_rules_that_disagree():
    ppdrisk = pd.DataFrame(
        {
            "system": ["a", "a", "b", "b", "c", "c"],
            "alpha": [0.0, 5.0] * 3,
            "ppd_urisk_median": [0.0, 0.01, -0.01, -0.04, 0.02, 0.03],
            "verdict": ["inconclusive", "inconclusive", "inconclusive", "risk", "reward", "reward"],
            "diagnostics": ["ok", "ok", "ok", "ok", "ok", "FAILED: ESS < 10,000"],
        }
    )
    brisk = ppdrisk[["system", "alpha"]].assign(
        verdict_overlap=["inconclusive", "risk", "inconclusive", "inconclusive", "reward", "reward"],
        verdict_difference=["inconclusive", "risk", "risk", "risk", "reward", "reward"],
        diagnostics="ok",
    )
    summary = presentation.verdict_summary(ppdrisk, brisk)
    assert list(dict.fromkeys(summary["system"])) == ["b", "a", "c"]  # b riskiest; a flagged by BRisk⁻ only
    assert summary.attrs["flagged"] == 3
    row = summary.set_index(["system", "alpha"])
    assert row.loc[("b", 5.0), "agree"] == 2 and row.loc[("b", 5.0), "disagree"] == "overlap: inconclusive"
    assert row.loc[("a", 5.0), "verdict"] == "inconclusive" and row.loc[("a", 5.0), "agree"] == 1
    assert row.loc[("c", 5.0), "disagree"] == "" and summary.attrs["failed"] == ["PPDRisk⁻'s fit"]
    assert row.loc[("b", 5.0), "urisk"] == -0.04 and set(row["methods"]) == {3}


def test_the_verdict_matrix_shows_every_flagged_challenger_at_once():
    ppdrisk, brisk = _tables(110)
    summary = presentation.verdict_summary(ppdrisk, brisk)
    flagged = summary.attrs["flagged"]
    markup = bplots.verdict_matrix(ppdrisk, brisk, "standard", "nDCG@10", "bm25").markup
    first = list(dict.fromkeys(summary["system"]))[:flagged]
    assert 12 < flagged < 110 and set(first) == set(summary.attrs["risk"]) | set(summary.attrs["reward"])
    assert set(first) == set(summary.loc[summary["verdict"] != "inconclusive", "system"]) | set(
        brisk.loc[brisk["verdict_difference"] != "inconclusive", "system"]
    )
    named = markup[: markup.index("<div id='verdict-matrix'")]  # before the paged matrix: no click needed
    assert all(system in named for system in first) and not any(
        system in named for system in set(summary["system"]) - set(first)
    )
    assert f"Risk</b> under at least one rule at some α ({len(summary.attrs['risk'])} of 110): " in named
    assert "−PPDRisk⁻ median" in markup and "data-page='12'" in markup
    assert "FAILED" not in markup
    brisk.loc[brisk["alpha"] >= 5, "diagnostics"] = "FAILED: ESS < 10,000"
    markup = bplots.verdict_matrix(ppdrisk, brisk, "standard", "nDCG@10", "bm25").markup
    assert (
        "FAILED their checks, so these verdicts are not to be trusted (see Diagnostics): BRisk⁻&#x27;s at α = 5, 10."
        in markup
    )


def test_the_verdict_matrix_of_110_systems_stays_under_8000_px_at_1400_px(tmp_path):
    """The frequentist report's rule (issue 24) for the Bayesian report's matrix and its list of flagged systems."""
    browser = find_browser()
    ppdrisk, brisk = _tables(110, seed=9)
    ppdrisk.loc[ppdrisk["verdict"] == "inconclusive", "verdict"] = "risk"  # worst case: every challenger flagged
    markup = bplots.verdict_matrix(ppdrisk, brisk, "minus", "nDCG@10", "bm25").markup
    (width, height, scroll), dom = measured(
        browser, tmp_path, markup_page(markup), "document.body", "--virtual-time-budget=2000"
    )
    print(
        f"Bayesian verdicts (flagged list and matrix, every row) 110 x 4: {width} x {height} px, page {scroll} px wide"
    )
    assert height < 8000 and scroll <= 1400, (width, height, scroll)
    assert dom.count("<tr>") >= 110
