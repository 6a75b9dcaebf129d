"""Effectiveness table: paired t-test against the baseline, Holm correction."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from test_risk import B, S

from riskreport.stats.corrections import adjust_pvalues
from riskreport.stats.effectiveness import effectiveness_table


def test_spec_paired_t():
    matrix = pd.DataFrame([S, B], index=["s", "b"])
    row = effectiveness_table(matrix, "b").set_index("system").loc["s"]
    assert row["t"] == pytest.approx(-2.584718, abs=5e-7)
    assert row["p_value"] == pytest.approx(0.0216103, abs=5e-8)
    assert row["delta"] == pytest.approx(-0.253333, abs=5e-7)


def test_holm_matches_statsmodels_and_baseline_has_no_test():
    rng = np.random.default_rng(3)
    matrix = pd.DataFrame(rng.random((5, 20)), index=list("abcde"))
    matrix.loc["e"] = matrix.loc["a"]  # identical to the baseline: no test
    table = effectiveness_table(matrix, "a").set_index("system")
    assert np.isnan(table.loc["a", "p_value"]) and np.isnan(table.loc["e", "t"])
    raw = [stats.ttest_rel(matrix.loc[s], matrix.loc["a"]).pvalue for s in "bcd"]
    assert table.loc[list("bcd"), "p_value"].tolist() == pytest.approx(raw)
    assert table.loc[list("bcd"), "p_adjusted"].tolist() == pytest.approx(multipletests(raw, method="holm")[1])
    assert table.loc["b", "mean"] == pytest.approx(matrix.loc["b"].mean())
    assert table.loc["b", "sd"] == pytest.approx(matrix.loc["b"].std(ddof=1))


def test_adjust_pvalues_methods():
    p = np.array([0.01, 0.04, np.nan, 0.03])
    assert np.isnan(adjust_pvalues(p, "bh")[2])
    assert adjust_pvalues(p, "none")[[0, 1, 3]].tolist() == [0.01, 0.04, 0.03]
    assert adjust_pvalues(p, "bonferroni")[0] == pytest.approx(0.03)
    with pytest.raises(ValueError):
        adjust_pvalues(p, "sidak-ish")


@pytest.mark.parametrize("method", ["holm", "bonferroni", "bh"])
def test_adjust_pvalues_equals_statsmodels_row_by_row(method):
    from riskreport.stats.corrections import CORRECTIONS

    rng = np.random.default_rng(3)
    p = rng.random((40, 17)) ** 3
    p[::3, 2] = p[::3, 5]  # ties
    p[::4, [1, 7]] = np.nan  # NaN: not a comparison
    ours = adjust_pvalues(p, method)
    for row, adjusted in zip(p, ours):
        finite = np.isfinite(row)
        assert np.isnan(adjusted[~finite]).all()
        assert adjusted[finite] == pytest.approx(multipletests(row[finite], method=CORRECTIONS[method])[1], abs=1e-15)
