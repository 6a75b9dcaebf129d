"""Risk measures: docs/measures (worked examples) worked examples, degenerate cases and invariants."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from riskreport.stats.risk import (
    RISK_COLUMNS,
    TOPIC_COLUMNS,
    expected_matrix,
    georisk,
    georisk_table,
    jackknife_se,
    risk_adjusted,
    risk_adjusted_scores,
    risk_table,
    smooth_value,
    to_convention,
    topic_risk,
    tstar_table,
    urisk,
    win_loss_ties,
    zero_expectation_cells,
    zrisk,
    zrisk_single,
    zscores,
)

# Thesis Table 2.9 (docs/measures (worked examples); topic 10's Δ is −0.8)
S = [0.4, 0.5, 0.1, 0.2, 0.2, 0.2, 0.0, 0.4, 0.3, 0.0, 0.5, 0.1, 0.4, 0.0, 0.1]
B = [0.1, 0.1, 0.7, 0.8, 0.6, 0.6, 0.7, 0.3, 0.3, 0.8, 0.7, 0.1, 0.5, 0.1, 0.8]
MATRIX = pd.DataFrame([S, B], index=["s", "b"], columns=[str(i) for i in range(1, 16)])


def test_spec_worked_example_urisk_trisk():
    table = risk_table(MATRIX, "b", [0, 1, 4, 9], "ERR@20")
    assert list(table.columns[: len(RISK_COLUMNS)]) == RISK_COLUMNS
    table = table.set_index("alpha")
    assert table["urisk"].tolist() == pytest.approx([-0.25333, -0.56, -1.48, -3.01333], abs=5e-6)
    assert table["trisk"].tolist() == pytest.approx([-2.58472, -3.19882, -3.60450, -3.74366], abs=5e-6)
    assert table.loc[0.0, "p_value"] == pytest.approx(0.0216103, abs=5e-8)
    assert table.loc[4.0, "p_value"] == pytest.approx(0.00287271, abs=5e-9)
    assert table.loc[4.0, "se"] * np.sqrt(15) == pytest.approx(1.590238, abs=5e-7)
    assert table["se_jackknife"].tolist() == pytest.approx(table["se"].tolist(), rel=1e-12)
    assert table.loc[0.0, ["wins", "losses", "ties"]].tolist() == [3, 10, 2]
    assert table.loc[0.0, "verdict"] == "risk"
    delta = np.subtract(S, B)
    assert table.loc[0.0, "frisk"] == pytest.approx(np.maximum(0, -delta).mean())
    assert table.loc[0.0, "freward"] == pytest.approx(np.maximum(0, delta).mean())
    base = np.array(B)
    assert table.loc[0.0, "loss20"] == int(((base > 0) & (-delta / np.where(base > 0, base, 1) > 0.2)).sum())


def test_identical_system_has_undefined_trisk():
    matrix = pd.DataFrame([B, B], index=["copy", "b"])
    row = risk_table(matrix, "b", [0, 5]).iloc[0]
    assert row["urisk"] == 0 and np.isnan(row["trisk"]) and np.isnan(row["p_value"])
    assert row["verdict"] == "undefined" and "SE = 0" in row["note"]
    topics = topic_risk(matrix, "b", [1])
    assert topics["tr"].isna().all() and (topics["flag"] == "").all()


def test_topic_risk_pseudo_values_and_flags():
    table = topic_risk(MATRIX, "b", [0, 4], "ERR@20", sig_level=0.05)
    assert list(table.columns[: len(TOPIC_COLUMNS)]) == TOPIC_COLUMNS
    at4 = table[table["alpha"] == 4.0]
    x = risk_adjusted(np.subtract(S, B), [4])[0]
    assert at4["x"].tolist() == pytest.approx(x.tolist())
    assert at4["tr"].tolist() == pytest.approx((x / x.std(ddof=1)).tolist())
    assert at4["tj"].tolist() == pytest.approx(((x - x.mean()) / x.std(ddof=1)).tolist())  # ψ_i = x_i for a mean
    critical = stats.t.ppf(0.975, 14)
    expected = np.where(
        (x / x.std(ddof=1) < -critical) | ((x - x.mean()) / x.std(ddof=1) < -critical),
        "loss",
        np.where((x / x.std(ddof=1) > critical) | ((x - x.mean()) / x.std(ddof=1) > critical), "gain", ""),
    )
    assert at4["flag"].tolist() == expected.tolist()
    assert "loss" in set(at4["flag"])  # topic 10 (Δ = −0.8 → x = −4.0) is a significant loss


def test_tstar_against_max_is_never_a_reward():
    matrix = pd.DataFrame(np.random.default_rng(1).random((4, 12)), index=list("abcd"))
    table = tstar_table(matrix, [0, 2], "AP")
    assert set(table["reference"]) == {"mean", "median", "max"}
    assert (table.loc[table["reference"] == "max", "urisk"] <= 0).all()
    mean0 = table[(table["reference"] == "mean") & (table["alpha"] == 0)]
    assert mean0["urisk"].sum() == pytest.approx(0, abs=1e-12)  # deviations from the mean cancel


def test_zrisk_georisk_hand_example():
    x = np.array([[0.2, 0.4], [0.6, 0.8]])
    e = expected_matrix(x)
    np.testing.assert_allclose(e, [[0.6 * 0.8 / 2.0, 0.6 * 1.2 / 2.0], [1.4 * 0.8 / 2.0, 1.4 * 1.2 / 2.0]])
    z = (x - e) / np.sqrt(e)
    np.testing.assert_allclose(zrisk(x, [0, 1]), [z.sum(axis=1), np.where(z < 0, 2 * z, z).sum(axis=1)])
    g = georisk(x, [1])[0]
    assert g.tolist() == pytest.approx(np.sqrt(x.mean(axis=1) * stats.norm.cdf(zrisk(x, [1])[0] / 2)).tolist())


def test_zero_totals_and_pool_of_one():
    matrix = pd.DataFrame(
        [[0.5, 0.0, 0.2], [0.0, 0.0, 0.0], [0.3, 0.0, 0.4]], index=["a", "zero", "c"], columns=["1", "2", "3"]
    )
    assert np.isfinite(zscores(matrix.to_numpy())).all()
    cells = zero_expectation_cells(matrix)
    assert set(cells["system"]) == {"a", "zero", "c"} and "2" in set(cells["topic"])
    assert len(cells) == 5  # the zero system's 3 topics and topic 2 for the other two
    one = georisk_table(matrix.loc[["a"]], [0, 5])
    assert one["zrisk"].tolist() == pytest.approx([0, 0]) and one["georisk"].tolist() == pytest.approx(
        [np.sqrt(matrix.loc["a"].mean() / 2)] * 2
    )


def test_single_baseline_zrisk_matches_two_row_pool():
    single = zrisk_single(MATRIX, "b", [0, 4]).set_index("alpha")["zrisk"]
    assert single.tolist() == pytest.approx(zrisk(MATRIX.to_numpy(), [0, 4])[:, 0].tolist())


def test_risk_adjusted_scores_give_urisk():
    adjusted = risk_adjusted_scores(MATRIX, "b", [0, 4])
    s4 = adjusted[(adjusted["system"] == "s") & (adjusted["alpha"] == 4.0)]["score"].to_numpy()
    assert (s4 - np.array(B)).mean() == pytest.approx(-1.48)
    b4 = adjusted[(adjusted["system"] == "b") & (adjusted["alpha"] == 4.0)]["score"].to_numpy()
    assert b4.tolist() == pytest.approx(B)


def test_minus_convention_and_smooth_value():
    table = risk_table(MATRIX, "b", [1])
    minus = to_convention(table, "minus")
    assert minus["urisk"].iloc[0] == pytest.approx(0.56) and minus["r"].iloc[0] == 2.0
    assert minus["trisk"].iloc[0] == pytest.approx(3.19882, abs=5e-6)
    assert to_convention(table, "standard").equals(table)
    with pytest.raises(ValueError):
        to_convention(table, "plus")
    assert smooth_value(np.array([0.0, 0.5])).tolist() == pytest.approx(
        [0.0, 1.38426 * 0.125 - 0.51659 * 0.25 + 0.11578 * 0.5]
    )


scores = arrays(np.float64, st.tuples(st.integers(2, 5), st.integers(2, 30)), elements=st.floats(0, 1, allow_nan=False))
alpha_lists = st.lists(st.floats(0, 50, allow_nan=False), min_size=2, max_size=6)


@settings(max_examples=60, deadline=None)
@given(scores, alpha_lists)
def test_urisk_invariants(x, alphas):
    delta = x - x[:1]
    values = urisk(delta, [0.0] + sorted(alphas))
    np.testing.assert_allclose(values[0], delta.mean(axis=1), atol=1e-12)  # URisk_0 = mean difference
    assert np.all(np.diff(values, axis=0) <= 1e-12)  # non-increasing in α
    wins, losses, ties = win_loss_ties(delta)
    assert np.all(wins + losses + ties == x.shape[1])


@settings(max_examples=60, deadline=None)
@given(scores, alpha_lists)
def test_jackknife_equals_se_and_georisk_bounds(x, alphas):
    adjusted = risk_adjusted(x - x[:1], alphas)
    np.testing.assert_allclose(
        jackknife_se(adjusted), adjusted.std(axis=-1, ddof=1) / np.sqrt(x.shape[1]), rtol=1e-9, atol=1e-12
    )
    g = georisk(x, alphas)
    assert np.all((g >= 0) & (g <= 1))
    e = expected_matrix(x)
    np.testing.assert_allclose(e.sum(axis=1), x.sum(axis=1), atol=1e-9)  # rows of e sum to S_i
    np.testing.assert_allclose(e.sum(axis=0), x.sum(axis=0), atol=1e-9)
