"""The Bayesian report at a campaign's scale (`bayes.presentation.verdict_summary`, `render.bayes.verdict_matrix`):
every challenger a rule flags comes first and is shown without a click, and 110 systems × 4 α stay under 8,000 px
at 1400 px wide in headless Chromium."""

from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd
import pytest
from conftest import find_browser, markup_page, measured

from riskreport.bayes.report import presentation
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
    risky = [(summary.loc[summary["alpha"] == a, "verdict"] == "risk").sum() for a in ALPHAS]  # PPDRisk⁻ or both
    assert risky[0] == 0 and risky[1] > 12
    counts = ", ".join(f"α = {a:g} ({n} of 110)" if n else f"α = {a:g} (none)" for a, n in zip(ALPHAS, risky))
    assert f"Risk</b> under at least one rule at {counts}: " in named
    assert "−PPDRisk⁻ median" in markup and "data-page='12'" in markup
    assert "FAILED" not in markup and "no verdict" not in markup
    late = brisk["alpha"] >= 5  # BRisk⁻'s fits at α = 5 and 10 failed: its two rules give no verdict there
    brisk.loc[late, ["verdict_overlap", "verdict_difference", "diagnostics"]] = ["no verdict"] * 2 + ["FAILED: x"]
    markup = bplots.verdict_matrix(ppdrisk, brisk, "standard", "nDCG@10", "bm25").markup
    assert "No verdict from the fits that failed their checks (see above and Diagnostics): BRisk⁻&#x27;s at α = 5, 10."
    assert "BRisk⁻&#x27;s at α = 5, 10 failed its checks: no verdict comes from it (see Diagnostics)." in markup
    assert "α = 5 no verdict: overlap draw-wise" in markup  # the rules without a verdict, beside PPDRisk⁻&#x27;s


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


# ------------------------------------------------ a fit that fails its checks gives no verdict (issue 38, point 5)

SYSTEMS = ("base", "worse", "same")
TOPICS = tuple(str(t) for t in range(20))


def _fit(
    model="gaussian", divergences=0, rhat=1.001, ess=(12_000.0, 11_000.0), target_accept=0.9, retry=None, gap=-0.3
):
    """A BayesFit of made-up draws in which `worse` lies `gap` below `base` (clearly: a risk verdict, when the fit
    passes) and `same` beside it; its checks fail as asked (`divergences`, `rhat`, `ess` bulk and tail against
    10,000)."""
    from riskreport.bayes.fitting.fits import BayesFit
    from riskreport.bayes.modelling.scores import scores_data

    rng = np.random.default_rng(3)
    matrix = pd.DataFrame(rng.uniform(0.2, 0.8, (3, len(TOPICS))), index=list(SYSTEMS), columns=list(TOPICS))
    chains, draws = 2, 400
    r_sys = np.array([0.0, gap, 0.0]) + rng.normal(0, 0.01, (chains, draws, 3))
    values = {
        "b": rng.normal(0.5, 0.01, (chains, draws)),
        "r_sys": r_sys,
        "r_top": rng.normal(0, 0.01, (chains, draws, len(TOPICS))),
        "sigma": np.full((chains, draws), 0.01),  # BHM-Gaussian's
        "phi": np.full((chains, draws), 2000.0),  # BHM-ZOiB's (logit scale), no exact 0s or 1s
        "zoi": np.zeros((chains, draws)),
        "coi": np.full((chains, draws), 0.5),
    }
    target = 10_000
    diagnostics = {
        "draws": chains * draws,
        "chains": chains,
        "divergences": divergences,
        "max_rhat": rhat,
        "min_ess_bulk": ess[0],
        "min_ess_tail": ess[1],
        "target_ess": target,
        "rhat_ok": rhat < 1.01,
        "ess_ok": min(ess) >= target,
        "divergences_ok": divergences == 0,
        "per_parameter": {f"r_sys[{i}]": (rhat, ess[0], ess[1]) for i in range(3)},
    }
    diagnostics["ok"] = diagnostics["rhat_ok"] and diagnostics["ess_ok"] and diagnostics["divergences_ok"]
    failed = [("R̂ ≥ 1.01", "rhat_ok"), (f"ESS < {target:,}", "ess_ok"), ("divergent transitions", "divergences_ok")]
    diagnostics["problems"] = "; ".join(what for what, flag in failed if not diagnostics[flag])  # as `diagnose`
    settings = {"target_accept": target_accept, "max_draws": 72_000, "tune": 300, "target_ess": target}
    settings.update({"retry": retry} if retry else {})
    data = scores_data(matrix)
    return BayesFit(model, data, {}, values, settings, diagnostics, {}, 1.0, {}), matrix


def test_a_fit_with_divergences_gives_no_verdict_and_its_cells_say_why():
    """TREC Web 2012 (ERR@20, indriCASP): BHM-ZOiB had 4 divergences, yet PPDRisk⁻ from it said risk."""
    from riskreport.bayes.posterior.brisk import brisk_table
    from riskreport.bayes.posterior.ppdrisk import ppdrisk_table

    good, matrix = _fit()
    failed, _ = _fit(divergences=4)
    passed = ppdrisk_table(good, "base", [0.0, 1.0])
    assert set(passed.loc[passed["system"] == "worse", "verdict"]) == {"risk"}  # the intervals do say risk
    ppd = ppdrisk_table(failed, "base", [0.0, 1.0])
    assert set(ppd["verdict"]) == {"no verdict"} and set(ppd["diagnostics"]) == {"FAILED: 4 divergences"}
    shown = presentation.ppdrisk_display(ppd, "minus")
    assert set(shown["verdict"]) == {"no verdict: fit failed (4 divergences)"}
    brisk, _ = brisk_table(matrix, "base", [0.0], "gaussian", unadjusted=failed)
    assert set(brisk["verdict_overlap"]) == set(brisk["verdict_difference"]) == {"no verdict"}
    page = presentation.brisk_display(brisk)
    assert set(page["overlap rule"]) == set(page["draw-wise rule"]) == {"no verdict: fit failed (4 divergences)"}
    ok, _ = brisk_table(matrix, "base", [0.0], "gaussian", unadjusted=good)
    assert ok.set_index("system").loc["worse", "verdict_difference"] == "risk"


def test_the_remedy_fits_the_kind_of_failure():
    from riskreport.bayes.fitting.sampling import retry_record
    from riskreport.bayes.posterior.measures import failure, remedy, retry_note

    diverged, _ = _fit(divergences=4, target_accept=0.9)
    assert failure(diverged) == "4 divergences"
    assert remedy(diverged) == "raise target_accept to 0.95 (-p target_accept 0.95)"
    retry = {"from_target_accept": 0.8, "divergences": 7, "to_target_accept": 0.95}
    again, _ = _fit(divergences=1, target_accept=0.95, retry=retry)
    assert retry_note(again) == "sampled again at target_accept 0.95 after 7 divergences at 0.8"
    assert failure(again) == "1 divergence" and remedy(again) == (
        "sampled again at target_accept 0.95 after 7 divergences at 0.8, it still diverged: "
        "raise target_accept to 0.99 (-p target_accept 0.99)"
    )
    ceiling, _ = _fit(divergences=2, target_accept=0.99)  # the last step: 0.9, 0.95, 0.99
    assert "target_accept" not in remedy(ceiling).split(":")[-1] and "another" in remedy(ceiling)
    steps = zip((0.8, 0.95, 0.99), (4, 1, 2))
    ladder = retry_record([{"target_accept": accept, "divergences": n} for accept, n in steps])
    top, _ = _fit(divergences=2, target_accept=0.99, retry=ladder)  # the sampler's own ladder ran to its end
    assert retry_note(top) == "sampled again at target_accept 0.95 and 0.99 after 4 divergences at 0.8 and 1 at 0.95"
    assert failure(top) == "2 divergences" and remedy(top) == (
        retry_note(top) + ", it still diverged: the model does not suit these scores; report another (models, "
        "family, ppd_model)"
    )
    short, _ = _fit(ess=(9_000.0, 4_000.0))  # 800 draws reached a tail ESS of 4,000: 2,200 draws reach 10,000 (+10 %)
    assert failure(short) == "tail ESS 4,000 < 10,000"
    assert remedy(short).startswith("raise max_draws to 73,000 (-p max_draws 73000)")  # at least max_draws + 1,000
    unmixed, _ = _fit(rhat=1.05, ess=(900.0, 800.0))
    assert failure(unmixed) == "R̂ 1.050 ≥ 1.01; tail ESS 800 < 10,000"
    assert remedy(unmixed) == "sample longer: a longer warm-up (-p tune 600) and more draws (-p max_draws 144000)"
    unmixed, _ = _fit(rhat=1.05, ess=(100.0, 40.0))  # 800 draws to 40: 200,000 for 10,000, and 10 % more
    assert remedy(unmixed) == "sample longer: a longer warm-up (-p tune 600) and more draws (-p max_draws 220000)"
    both, _ = _fit(divergences=3, ess=(100.0, 100.0))
    assert remedy(both).startswith("raise target_accept to 0.95") and "-p max_draws" in remedy(both)
    passed, _ = _fit()
    assert failure(passed) == remedy(passed) == retry_note(passed) == ""


def _result(ppd_fit, brisk_fits, alphas=(0.0, 5.0)):
    """A `BayesianRisk` of made-up fits: BHM-Gaussian compared and reused for BRisk⁻ at α = 0, `ppd_fit` the
    PPDRisk⁻ model (BHM-ZOiB)."""
    from riskreport.bayes.report.analysis import BayesianRisk, all_diagnostics

    fits = {"gaussian": brisk_fits[0], "zoib": ppd_fit}
    brisk = pd.DataFrame({"system": "worse", "alpha": list(alphas)})
    empty = pd.DataFrame()
    return BayesianRisk(
        fits=fits,
        models=empty,
        systems=empty,
        dominance=empty,
        rbo=empty,
        diagnostics=all_diagnostics(fits, brisk_fits, alphas),
        overlay=empty,
        brisk=brisk,
        brisk_fits=list(brisk_fits),
        ppdrisk=empty,
        ppd_draws=np.zeros((0, 0, 0)),
        ppd_systems=[],
        ppd_model="zoib",
        settings={"models": ["gaussian", "zoib"], "family": "gaussian", "level": 0.95},
    )


def test_the_failed_fits_are_named_with_what_they_serve_and_the_terminal_says_so(capfd):
    good, _ = _fit()
    zoib, _ = _fit("zoib", divergences=4)
    unmixed, _ = _fit(rhat=1.02)
    result = _result(zoib, [good, unmixed])
    failures = presentation.fit_failures(result)
    assert [(f.fit, f.uses) for f in failures] == [
        ("BHM-ZOiB", ("the model comparison", "PPDRisk⁻")),
        ("BHM-Gaussian for BRisk⁻ at α = 5", ("BRisk⁻ at α = 5",)),
    ]
    assert failures[0].sentence() == (
        "BHM-ZOiB failed its checks (4 divergences): no verdict comes from it (PPDRisk⁻) and its WAIC, PSIS-LOO and "
        "system effects are not to be trusted. To change: raise target_accept to 0.95 (-p target_accept 0.95)."
    )
    capfd.readouterr()
    lines = presentation.warn_failed(result)  # the template's last call: stderr, the terminal of `riskreport run`
    err = capfd.readouterr().err
    assert lines == [f"warning: {f.sentence()}" for f in failures]
    assert err == "".join(f"riskreport: bayes: {line}\n" for line in lines)
    assert "-p tune 600" in err.splitlines()[1]
    assert presentation.warn_failed(_result(good, [good, good]), say=lambda line: pytest.fail(line)) == []
    ranked = _result(good, [good, good])
    ranked.fits["zoib_rank"] = _fit("zoib_rank", ess=(100.0, 90.0))[0]
    (rank,) = presentation.fit_failures(ranked)
    assert rank.sentence().startswith(
        "BHM-ZOiB-Rank failed its checks (tail ESS 90 < 10,000): BHM-ZOiB-Rank's system effects and parameters are "
        "not to be trusted. To change: raise max_draws to"
    )
    box = bplots.failed_fits(failures).markup  # section 8, under the diagnostics table
    assert box.startswith("<div class='rr-warning'><strong>Fits that failed their checks</strong>")
    assert all(html.escape(f.sentence()) in box for f in failures) and bplots.failed_fits([]).markup == ""


def test_section_8_says_which_fit_was_sampled_again_and_why():
    retry = {"from_target_accept": 0.8, "divergences": 4, "to_target_accept": 0.9}
    again, _ = _fit("zoib", target_accept=0.9, retry=retry)
    good, _ = _fit(target_accept=0.8)
    table = _result(again, [good, good]).diagnostics
    row = table.set_index("fit").loc["BHM-ZOiB"]
    assert row["retry"] == "sampled again at target_accept 0.9 after 4 divergences at 0.8"
    assert row["target_accept"] == 0.9 and row["diagnostics"] == "ok"
    assert set(table.loc[table["fit"] != "BHM-ZOiB", "retry"]) == {""}
    assert "Sampled again after divergent transitions: BHM-ZOiB (sampled again at target_accept 0.9 after 4" in (
        presentation.retried_text([again, good])
    )
    assert presentation.asked_target_accept(again) == presentation.asked_target_accept(good) == 0.8
    attempts = [{"target_accept": 0.8, "divergences": 4}, {"target_accept": 0.95, "divergences": 2}]
    attempts.append({"target_accept": 0.99, "divergences": 0})
    ladder = {"from_target_accept": 0.8, "divergences": 4, "to_target_accept": 0.99, "attempts": attempts}
    twice, _ = _fit("zoib", target_accept=0.99, retry=ladder)
    row = _result(twice, [good, good]).diagnostics.set_index("fit").loc["BHM-ZOiB"]
    assert row["retry"] == "sampled again at target_accept 0.95 and 0.99 after 4 divergences at 0.8 and 2 at 0.95"
    assert row["target_accept"] == 0.99 and row["diagnostics"] == "ok"
    assert (
        presentation.retried_text([twice]) == f" Sampled again after divergent transitions: BHM-ZOiB ({row['retry']})."
    )
    assert presentation.asked_target_accept(twice) == 0.8


def test_a_failed_fit_neither_colours_the_verdict_matrix_nor_counts_in_the_headline():
    """TREC Web 2012: PPDRisk⁻ from a fit with 4 divergences said risk where BRisk⁻'s two rules did not, and the
    headline read 'Risk under at least one rule at some α (7 of 7)' with orange cells."""
    from riskreport.bayes.posterior.brisk import brisk_table
    from riskreport.bayes.posterior.ppdrisk import ppdrisk_table

    zoib, matrix = _fit("zoib", divergences=4)
    gaussian, _ = _fit(gap=0.0)  # BRisk⁻: no difference, inconclusive
    alphas = [0.0, 1.0]
    ppd = ppdrisk_table(zoib, "base", alphas)
    brisk, brisk_fits = brisk_table(matrix, "base", [0.0], "gaussian", unadjusted=gaussian)
    brisk = pd.concat([brisk, brisk.assign(alpha=1.0)], ignore_index=True)
    markup = bplots.verdict_matrix(ppd, brisk, "standard", "ERR@20", "base").markup
    colours = set(re.findall(r"background-color: (#[0-9a-f]{6})", markup))
    assert colours.isdisjoint({"#fde0d2", "#d9f0e3"}), colours  # neither risk nor reward is painted
    assert "<b>Risk</b> under at least one rule: none at any α" in markup
    assert "inconclusive (2/2, no PPDRisk⁻)" in markup  # BRisk⁻'s verdict, from the fit that passed
    result = _result(zoib, [gaussian, gaussian], alphas)
    markup = bplots.verdict_matrix(ppd, brisk, "standard", "ERR@20", "base", presentation.fit_failures(result)).markup
    warning = markup[: markup.index("<ul class='rr-flagged'>")]
    assert "rr-warning" in warning and "BHM-ZOiB failed its checks (4 divergences)" in warning
    assert "no verdict comes from it (PPDRisk⁻)" in warning and "raise target_accept to 0.95" in warning
    brisk[["verdict_overlap", "verdict_difference", "diagnostics"]] = ["no verdict", "no verdict", "FAILED: R̂ 1.1"]
    markup = bplots.verdict_matrix(ppd, brisk, "standard", "ERR@20", "base").markup
    assert "<b>Risk</b> under at least one rule: no verdict at any α" in markup  # not 'none': no rule judged
    assert "no verdict: fits failed (PPDRisk⁻: 4 divergences; BRisk⁻: R̂ 1.1)" in markup
    assert "PPDRisk⁻&#x27;s fit failed its checks: no verdict comes from it (see Diagnostics)." in markup


def test_the_headline_gives_the_alpha_of_every_count_and_separates_risk_from_reward():
    """All 107 TREC-COVID runs: 'Risk … (88 of 106)' and 'Reward … (39 of 106)' without the α, the two lists
    overlapping."""
    ppdrisk = pd.DataFrame(
        {
            "system": ["crowd", "crowd", "crowd", "steady", "steady", "steady", "both", "both", "both"],
            "alpha": [0.0, 5.0, 10.0] * 3,
            "ppd_urisk_median": [0.02, -0.01, -0.03, -0.02, -0.03, -0.05, 0.01, 0.0, -0.01],
            "verdict": ["reward", "inconclusive", "risk", "inconclusive", "risk", "risk"] + ["reward"] * 3,
            "diagnostics": "ok",
        }
    )
    brisk = ppdrisk[["system", "alpha"]].assign(
        verdict_overlap="inconclusive",
        verdict_difference=["reward", "inconclusive", "risk", "inconclusive", "risk", "risk", "inconclusive"]
        + ["risk"] * 2,
        diagnostics="ok",
    )
    markup = bplots.verdict_matrix(ppdrisk, brisk, "standard", "nDCG@10", "bm25").markup
    risk, reward = re.findall(r"<li>(.*?)</li>", markup)[:2]
    assert "<b>Risk</b> under at least one rule at α = 0 (none), α = 5 (2 of 3), α = 10 (3 of 3): " in risk
    assert "<b>Reward</b> under at least one rule at α = 0 (2 of 3), α = 5 (1 of 3), α = 10 (1 of 3): " in reward
    assert risk.endswith(": steady, crowd (α = 10), both (α = 5 by draw-wise, 10 by draw-wise)")
    assert reward.endswith(": crowd (α = 0), both (α = 0, 5 by PPDRisk⁻, 10 by PPDRisk⁻)")
    minus = bplots.verdict_matrix(ppdrisk, brisk, "minus", "nDCG@10", "bm25").markup
    assert "crowd (r = 11)" in minus and "at r = 1 (none), r = 6 (2 of 3)" in minus
