"""Several baselines in one report: tables per baseline, one family of comparisons, one verdict rule (issue 24)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import riskreport as rr
from riskreport.render import report
from riskreport.stats import significance
from riskreport.stats.corrections import adjust_pvalues
from riskreport.stats.risk import trisk

BASELINES = ["bm25", "dense-a"]
ALPHAS = [0.0, 5.0]


@pytest.fixture(scope="module")
def demo():
    p = rr.resolve_parameters("demo", measure="nDCG@10", baseline=BASELINES, alphas=ALPHAS)
    return p, rr.evaluate(p.collection, p.measure, p.systems).matrix()


def test_parameters_name_every_baseline(demo):
    p, _ = demo
    assert p.baseline == "bm25" and p.all_baselines == BASELINES and "dense-a" in p.systems
    assert rr.resolve_parameters("demo").all_baselines == ["bm25"]
    with pytest.raises(rr.UnknownNameError, match="Unknown baseline 'dense-x'"):
        rr.resolve_parameters("demo", baseline=["bm25", "dense-x"])


def test_risk_table_per_baseline_corrected_as_one_family(demo):
    p, matrix = demo
    risk = rr.risk_table(matrix, BASELINES, ALPHAS, p.measure)
    assert list(dict.fromkeys(risk["baseline"])) == BASELINES and len(risk) == 2 * 2 * (len(matrix) - 1)
    for baseline in BASELINES:  # each baseline's numbers are its single-baseline numbers
        alone = rr.risk_table(matrix, baseline, ALPHAS, p.measure, correction="none")
        part = risk[risk["baseline"] == baseline].reset_index(drop=True)
        pd.testing.assert_frame_equal(
            part[["system", "alpha", "urisk", "trisk", "p_value"]],
            alone[["system", "alpha", "urisk", "trisk", "p_value"]],
        )
    for alpha in ALPHAS:  # Holm over both baselines' 20 comparisons at once
        at = risk[risk["alpha"] == alpha]
        assert at["p_adjusted"].to_numpy() == pytest.approx(adjust_pvalues(at["p_value"].to_numpy()), nan_ok=True)
    single = rr.risk_table(matrix, "bm25", ALPHAS, p.measure).set_index(["system", "alpha"])["p_adjusted"]
    family = risk[risk["baseline"] == "bm25"].set_index(["system", "alpha"])["p_adjusted"]
    assert (family.dropna() >= single.reindex(family.index).dropna() - 1e-15).all()  # a larger family: stricter
    assert (family.dropna() > single.reindex(family.index).dropna()).any()


def test_report_rule_agrees_with_risk_table_and_effectiveness(demo):
    p, matrix = demo
    risk = rr.risk_table(matrix, BASELINES, ALPHAS, p.measure)
    tests = rr.inference.tests_table(matrix, BASELINES, ALPHAS, p.measure, samples=200)
    boot = rr.inference.bootstrap_table(matrix, BASELINES, ALPHAS, p.measure, samples=200, correction="bonferroni")
    assert (boot["adjusted_level"].round(8).isin([round(1 - 0.05 / 20, 8), round(1 - 0.001 / 20, 8)])).all()
    table, summary = significance.report_verdicts(risk, tests, boot, p.sig_level)
    assert set(table["baseline"]) == set(BASELINES) and len(summary) == len(risk)
    ours = risk.set_index(["system", "baseline", "alpha"])["verdict"]
    rule = summary.set_index(["system", "baseline", "alpha"])["verdict"]
    assert (ours.sort_index() == rule.sort_index()).all()
    effectiveness = rr.effectiveness_table(matrix, "bm25", p.measure, baselines=BASELINES).set_index("system")
    at0 = summary[(summary["baseline"] == "bm25") & (summary["alpha"] == 0)].set_index("system")
    assert effectiveness["p_adjusted"].reindex(at0.index).to_numpy() == pytest.approx(
        at0["p_adjusted"].to_numpy(), nan_ok=True
    )


def test_tstar_against_the_mean_of_the_baselines(demo):
    p, matrix = demo
    table = rr.tstar_table(matrix, ALPHAS, p.measure, references=("mean", "baselines"), baselines=BASELINES)
    assert set(table["reference"]) == {"mean", "baselines"}
    reference = matrix.loc[BASELINES].mean(axis=0).to_numpy()
    delta = matrix.loc["risky-llm"].to_numpy() - reference
    x = np.where(delta < 0, 6 * delta, delta)
    row = table[(table["reference"] == "baselines") & (table["system"] == "risky-llm") & (table["alpha"] == 5)]
    assert row["trisk"].iloc[0] == pytest.approx(trisk(x)["trisk"])
    with pytest.raises(rr.UnknownNameError, match="needs baselines"):
        rr.tstar_table(matrix, ALPHAS, references=("baselines",))
    analysis = rr.pools.pool_analysis(matrix, "bm25", ALPHAS, p.measure, baselines=BASELINES)
    assert "baselines" in set(analysis.tstar["reference"])


def test_verdict_matrix_has_a_column_group_per_baseline(demo):
    p, matrix = demo
    risk = rr.risk_table(matrix, BASELINES, ALPHAS, p.measure)
    tests = rr.inference.tests_table(matrix, BASELINES, ALPHAS, p.measure, samples=200)
    _, summary = significance.report_verdicts(risk, tests, None, p.sig_level)
    markup = report.verdict_matrix(summary).markup
    assert "rr-verdict-groups" in markup
    for baseline in BASELINES:
        assert f'colspan="2">{baseline}</th>' in markup
    assert markup.count(">α = 5</th>") == 2 and " ×" in markup and "—" in markup  # a baseline vs itself: —
    single = report.verdict_matrix(report.for_baseline(summary, "bm25")).markup
    assert "rr-verdict-groups" not in single and "colspan" not in single
    note = report.baselines_note(BASELINES, len(p.systems)).markup
    assert "family of 20 comparisons" in note
