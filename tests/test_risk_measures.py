"""The array-level risk measures (riskreport.stats.risk_measures), each part against its definition:
the verdict rule at its boundaries, the t critical value, the baselines, family-wise adjustment."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from riskreport.errors import UnknownNameError
from riskreport.stats import risk_measures as rm


def test_t_critical_has_c_minus_one_degrees_of_freedom():
    assert rm.t_critical(0.05, 10) == pytest.approx(stats.t.ppf(0.975, 9), rel=1e-14)
    assert rm.t_critical(0.01, 3) == pytest.approx(9.924843200918272, rel=1e-12)  # t_{0.995, 2}


def test_rule_verdicts_at_the_boundaries():
    urisk = [-0.1, 0.1, -0.1, 0.1, 0.0, 0.5, -0.5, 0.2, -0.2]
    p = [0.01, 0.01, 0.05, 0.05, 0.01, np.nan, 0.2, 0.049, 0.049]
    assert rm.rule_verdicts(urisk, p, 0.05).tolist() == [
        "risk",
        "reward",
        "inconclusive",  # p = level: not below it
        "inconclusive",
        "inconclusive",  # significant, but URisk = 0 has no direction
        "undefined",
        "inconclusive",
        "reward",
        "risk",
    ]


def test_baselines_of_keeps_order_and_drops_repeats():
    assert rm.baselines_of("b") == ["b"] and rm.baselines_of("bm25") == ["bm25"]
    assert rm.baselines_of(("b", "a", "b")) == ["b", "a"]
    assert rm.baselines_of(np.array(["x", "y"])) == ["x", "y"]
    with pytest.raises(UnknownNameError) as caught:
        rm.baselines_of([])
    assert str(caught.value) == "Unknown baseline ''. Available baselines: (none). Give at least one baseline."


@pytest.mark.parametrize("correction, method", [("holm", "holm"), ("bh", "fdr_bh")])
def test_family_adjusted_adjusts_within_each_group_only(correction, method):
    rng = np.random.default_rng(3)
    table = pd.DataFrame(
        {"alpha": [1, 0, 1, 0, 1, 0, 1], "baseline": list("aabbabb"), "p": rng.uniform(0, 0.1, 7)}
    )  # groups interleaved, and not in sorted order
    adjusted = rm.family_adjusted(table, "p", correction, ["alpha"])
    for _, group in table.groupby("alpha"):
        expected = multipletests(group["p"], method=method)[1]
        assert adjusted[group.index].tolist() == pytest.approx(expected.tolist(), rel=1e-12)
    by_two = rm.family_adjusted(table, "p", correction, ("alpha", "baseline"))
    for _, group in table.groupby(["alpha", "baseline"]):
        expected = multipletests(group["p"], method=method)[1]
        assert by_two[group.index].tolist() == pytest.approx(expected.tolist(), rel=1e-12)
    table.loc[6, "alpha"] = np.nan  # a row in no group keeps NaN
    adjusted = rm.family_adjusted(table, "p", correction, ["alpha"])
    assert adjusted.dtype == float and np.isnan(adjusted[6]) and np.isfinite(adjusted[:6]).all()


def test_trisk_with_one_and_two_topics():
    one = rm.trisk(np.array([[0.3], [-0.2]]))
    assert sorted(one) == ["p_value", "se", "se_jackknife", "trisk", "urisk"]
    assert one["urisk"].tolist() == [0.3, -0.2]
    for key in ("se", "se_jackknife", "trisk", "p_value"):
        assert one[key].shape == (2,) and np.isnan(one[key]).all()
    two = rm.trisk(np.array([0.1, 0.3]))  # sd = 0.1·√2, SE = 0.1, TRisk = 2 with 1 df
    assert [float(two[k]) for k in ("urisk", "se", "se_jackknife", "trisk", "p_value")] == pytest.approx(
        [0.2, 0.1, 0.1, 2.0, 2 * stats.t.sf(2.0, 1)], rel=1e-12
    )


def test_system_row_names_the_role_and_a_transposed_matrix():
    matrix = pd.DataFrame([[0.1, 0.2], [0.3, 0.4]], index=["a", "b"], columns=["t1", "t2"])
    assert rm.system_row(matrix, "b").tolist() == [0.3, 0.4]
    with pytest.raises(UnknownNameError) as caught:
        rm.system_row(matrix, "t1", "system")
    assert str(caught.value) == (
        "Unknown system 't1'. Available systems: a, b. "
        "The matrix looks transposed: rows must be systems and columns topics (use matrix.T)."
    )
    with pytest.raises(UnknownNameError) as caught:
        rm.system_row(matrix, "c")
    assert str(caught.value) == "Unknown baseline 'c'. Available baselines: a, b. (rows of the systems x topics matrix)"


def test_trisk_float_noise_threshold_is_relative_to_max_one_and_the_mean():
    # SE 1.5e-15 around a mean of 0 is variation (TRisk 0, p 1); around a mean of 2 it is noise (undefined)
    small = rm.trisk(np.array([[1.5e-15, -1.5e-15], [2 + 1.5e-15, 2 - 1.5e-15]]))
    assert small["trisk"][0] == 0.0 and small["p_value"][0] == pytest.approx(1.0)
    assert np.isnan(small["trisk"][1]) and np.isnan(small["p_value"][1])


def test_long_frame_lays_out_arrays_trailing_values_and_scalars():
    frame = rm.long_frame(
        {"alpha": [0, 1], "system": ["a", "b", "c"]},
        urisk=np.arange(6).reshape(2, 3),  # one per (α, system)
        wins=[3, 4, 5],  # per system, repeated for each α
        measure="ndcg",
    )
    assert frame.columns.tolist() == ["alpha", "system", "urisk", "wins", "measure"]
    assert frame["alpha"].dtype.kind == "i" and frame["alpha"].tolist() == [0, 0, 0, 1, 1, 1]
    assert frame["system"].tolist() == list("abcabc")
    assert frame["urisk"].tolist() == [0, 1, 2, 3, 4, 5] and frame["wins"].tolist() == [3, 4, 5, 3, 4, 5]
    assert frame["measure"].tolist() == ["ndcg"] * 6
    ordered = rm.long_frame({"system": ["a"]}, ["x", "system"], x=[1.5])
    assert ordered.columns.tolist() == ["x", "system"]
    empty = rm.long_frame({"system": []}, x=[])
    assert len(empty) == 0 and empty["system"].dtype == object


def test_counts_and_jackknife_along_the_last_axis_of_any_shape():
    delta = np.array([0.2, -0.1, 0.0, 0.3, -0.4, 0.0, 0.1])
    assert [int(v) for v in rm.win_loss_ties(delta)] == [3, 2, 2]
    cube = np.stack([np.stack([delta, -delta, np.zeros(7)])] * 2)  # (2, 3, 7)
    wins, losses, ties = rm.win_loss_ties(cube)
    assert wins.tolist() == [[3, 2, 0]] * 2 and losses.tolist() == [[2, 3, 0]] * 2 and ties.tolist() == [[2, 2, 7]] * 2
    x = np.random.default_rng(1).normal(size=(2, 3, 6))
    loo = rm.leave_one_out_means(x)
    assert loo[1, 2, 4] == pytest.approx(np.delete(x[1, 2], 4).mean(), rel=1e-13)
    assert rm.jackknife_se(x) == pytest.approx(x.std(axis=-1, ddof=1) / np.sqrt(6), rel=1e-12)
    one = rm.jackknife_se(np.ones((2, 3, 1)))
    assert one.shape == (2, 3) and np.isnan(one).all()
