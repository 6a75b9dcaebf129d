"""Multiple-comparison corrections (riskreport.stats.corrections) against statsmodels and their definitions:
the default, `none`, NaN, empty and single rows, a bad name, and the CI levels."""

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from riskreport.errors import ParameterError
from riskreport.stats import corrections

P = np.array([[0.01, 0.04, 0.03, 0.2, 0.04], [0.5, 0.001, np.nan, 0.02, 0.02]])


@pytest.mark.parametrize("method, theirs", [("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")])
def test_rows_equal_statsmodels_with_nan_left_out(method, theirs):
    adjusted = corrections.adjust_pvalues(P, method)
    assert adjusted[0].tolist() == pytest.approx(multipletests(P[0], method=theirs)[1].tolist(), rel=1e-14)
    finite = np.isfinite(P[1])
    assert np.isnan(adjusted[1, 2])
    assert adjusted[1, finite].tolist() == pytest.approx(multipletests(P[1, finite], method=theirs)[1].tolist())


def test_default_none_empty_and_single_rows():
    assert corrections.adjust_pvalues(P[0]).tolist() == corrections.adjust_pvalues(P[0], "holm").tolist()
    unchanged = corrections.adjust_pvalues(P, "none")
    assert np.array_equal(unchanged, P, equal_nan=True) and unchanged is not P
    assert corrections.adjust_pvalues(np.empty((2, 0)), "holm").shape == (2, 0)
    assert corrections.adjust_pvalues([0.3], "bh").tolist() == [0.3]


def test_a_bad_correction_names_the_parameter():
    with pytest.raises(ParameterError, match="^correction must be one of holm, bonferroni, bh, none, got 'hochberg'"):
        corrections.adjust_pvalues(P, "hochberg")


def test_ci_levels_widen_only_under_bonferroni():
    assert corrections.adjusted_levels([0.95, 0.999], "bonferroni", 4).tolist() == pytest.approx([0.9875, 0.99975])
    assert corrections.adjusted_levels([0.95], "bonferroni", 0).tolist() == pytest.approx([0.95])  # k < 1 counts as 1
    assert corrections.adjusted_levels([0.95], "holm", 4).tolist() == [0.95]
