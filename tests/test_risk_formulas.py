"""The report's risk tables (riskreport.stats.risk), each column against its definition computed here by
hand or in a plain loop (Wang et al. 2012; Dinçer, Macdonald & Ounis 2014, 2016; docs/measures): small
dyadic scores, so that boundaries (a relative loss of exactly 0.2, a TR_i exactly at t_crit) are exact.

test_risk checks the worked examples and invariants; these are the fast, exact tests of the mutation
pass (docs/development.md), each able to fail on a wrong constant, sign or comparison."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from riskreport.errors import ParameterError, UnknownNameError
from riskreport.stats import risk

# baseline b and four challengers over five topics; all values dyadic (exact in binary)
B = [0.5, 0.25, 0.625, 0.0, 0.75]
ROWS = {
    "s1": [0.75, 0.0, 0.5, 0.125, 0.75],  # Δ = (.25, −.25, −.125, .125, 0): relative losses 1 and exactly 0.2
    "b": B,
    "s2": [0.5, 0.5, 0.0, -0.5, 0.25],  # a negative score where the baseline has 0: not a relative loss
    "copy": B,  # SE = 0: TRisk undefined; FReward = 0: no risk/reward ratio
    "up": [0.625, 0.25, 0.75, 0.5, 1.0],  # never loses: FRisk = 0
}
MATRIX = pd.DataFrame(list(ROWS.values()), index=list(ROWS), columns=[f"t{i}" for i in range(1, 6)])
NAMES = ["s1", "s2", "copy", "up"]


def value(delta, alpha):
    """The linear value function l_α(Δ)."""
    return delta if delta >= 0 else (1 + alpha) * delta


def direct_risk(s, b, alpha):
    """One row of the risk table from the definitions, in a loop over topics."""
    delta = [x - y for x, y in zip(s, b)]
    x = [value(d, alpha) for d in delta]
    c = len(x)
    mean = sum(x) / c
    sd = math.sqrt(sum((v - mean) ** 2 for v in x) / (c - 1))
    loo = [(sum(x) - v) / (c - 1) for v in x]
    jack = math.sqrt((c - 1) / c * sum((m - sum(loo) / c) ** 2 for m in loo))
    se = sd / math.sqrt(c)
    t = mean / se if se > 0 else math.nan
    frisk = sum(max(0.0, -d) for d in delta) / c
    freward = sum(max(0.0, d) for d in delta) / c
    return {
        "urisk": mean,
        "trisk": t,
        "p_value": 2 * stats.t.sf(abs(t), c - 1) if se > 0 else math.nan,
        "se": se,
        "se_jackknife": jack,
        "wins": sum(d > 0 for d in delta),
        "losses": sum(d < 0 for d in delta),
        "ties": sum(d == 0 for d in delta),
        "frisk": frisk,
        "freward": freward,
        "risk_reward": frisk / freward if freward > 0 else math.nan,
        "loss20": sum(y > 0 and (y - v) / y > 0.2 for v, y in zip(s, b)),
    }


def test_risk_table_columns_equal_their_definitions():
    table = risk.risk_table(MATRIX, "b", [0, 3], "AP", correction="none")
    assert table.columns.tolist() == risk.RISK_COLUMNS + ["risk_reward", "p_adjusted", "verdict", "note"]
    assert table["system"].tolist() == NAMES * 2 and table["alpha"].tolist() == [0.0] * 4 + [3.0] * 4
    assert (table["baseline"] == "b").all() and (table["measure"] == "AP").all()
    for _, row in table.iterrows():
        expected = direct_risk(ROWS[row["system"]], B, row["alpha"])
        for column, value in expected.items():
            assert row[column] == pytest.approx(value, rel=1e-12, abs=1e-15, nan_ok=True), (row["system"], column)
    assert table.set_index("system").loc["s1", "loss20"].tolist() == [1, 1]  # 0.125/0.625 = 0.2 is not > 0.2
    assert table.set_index("system").loc["s2", "loss20"].tolist() == [2, 2]
    assert (table["p_adjusted"].fillna(-1) == table["p_value"].fillna(-1)).all()  # correction "none"


@pytest.mark.parametrize("correction, method", [("holm", "holm"), ("bh", "fdr_bh")])
def test_risk_table_adjusts_p_per_alpha_and_applies_the_rule_at_sig_level(correction, method):
    table = risk.risk_table(MATRIX, "b", [0, 1], correction=correction, sig_level=0.6)
    for _, group in table.groupby("alpha"):
        defined = group["p_value"].notna()
        expected = multipletests(group.loc[defined, "p_value"], method=method)[1]
        assert group.loc[defined, "p_adjusted"].tolist() == pytest.approx(expected.tolist(), rel=1e-12)
        assert group.loc[~defined, "p_adjusted"].isna().all()
    expected = [
        "undefined" if np.isnan(p) else ("risk" if u < 0 else "reward") if p < 0.6 else "inconclusive"
        for u, p in zip(table["urisk"], table["p_adjusted"])
    ]
    assert table["verdict"].tolist() == expected and set(expected) >= {"undefined", "reward"}
    assert table["note"].tolist() == [risk.SE_ZERO_NOTE if v == "undefined" else "" for v in expected]


def test_risk_table_notes_one_topic_and_two_topics():
    one = risk.risk_table(MATRIX[["t1"]], "b", [0])
    assert one["verdict"].tolist() == ["undefined"] * 4 and one["note"].tolist() == [risk.ONE_TOPIC_NOTE] * 4
    two = risk.risk_table(MATRIX[["t1", "t2"]], "b", [0]).set_index("system")
    assert two.loc["copy", "note"] == risk.SE_ZERO_NOTE and two.loc["s1", "note"] == ""


def test_risk_table_with_several_baselines_adjusts_across_the_family():
    table = risk.risk_table(MATRIX, ["b", "up"], [0, 2], "AP", sig_level=0.3, correction="holm")
    first = risk.risk_table(MATRIX, "b", [0, 2], "AP", correction="none")
    second = risk.risk_table(MATRIX, "up", [0, 2], "AP", correction="none")
    assert table["baseline"].tolist() == ["b"] * 8 + ["up"] * 8
    assert table["p_value"].tolist() == pytest.approx(pd.concat([first, second])["p_value"].tolist(), nan_ok=True)
    for _, group in table.groupby("alpha"):
        defined = group["p_value"].notna()
        expected = multipletests(group.loc[defined, "p_value"], method="holm")[1]
        assert group.loc[defined, "p_adjusted"].tolist() == pytest.approx(expected.tolist(), rel=1e-12)
    significant = table["p_adjusted"] < 0.3
    assert table["verdict"].tolist() == [
        "undefined" if np.isnan(p) else ("risk" if u < 0 else "reward") if s else "inconclusive"
        for u, p, s in zip(table["urisk"], table["p_adjusted"], significant)
    ]
    assert significant.any() and (~significant & table["p_adjusted"].notna()).any()


def direct_topic(x, alpha_row):
    """TR_i = x_i/s_x, TJ_i = (ψ_i − ψ̄)/s_ψ with ψ_i = c·x̄ − (c−1)·x̄_(i), in a loop."""
    c = len(x)
    mean = sum(x) / c
    sd = math.sqrt(sum((v - mean) ** 2 for v in x) / (c - 1))
    psi = [c * mean - (c - 1) * (sum(x) - v) / (c - 1) for v in x]
    psi_mean = sum(psi) / c
    psi_sd = math.sqrt(sum((p - psi_mean) ** 2 for p in psi) / (c - 1))
    return [v / sd for v in x], [(p - psi_mean) / psi_sd for p in psi]


def test_topic_risk_tr_and_tj_equal_their_definitions():
    matrix = MATRIX.loc[["s1", "b", "s2", "up"]]
    table = risk.topic_risk(matrix, "b", [0, 2], "AP")
    assert table.columns.tolist() == risk.TOPIC_COLUMNS + ["flag"]
    assert (table["baseline"] == "b").all() and (table["measure"] == "AP").all()
    assert table["topic"].tolist() == list(matrix.columns) * 6
    for (alpha, system), rows in table.groupby(["alpha", "system"]):
        delta = [s - b for s, b in zip(ROWS[system], B)]
        x = [value(d, alpha) for d in delta]
        tr, tj = direct_topic(x, alpha)
        assert rows["delta"].tolist() == delta and rows["x"].tolist() == x
        assert rows["tr"].tolist() == pytest.approx(tr, rel=1e-12) and rows["tj"].tolist() == pytest.approx(
            tj, rel=1e-12
        )
    critical = stats.t.ppf(0.975, 4)
    flags = np.select(
        [(table["tr"] < -critical) | (table["tj"] < -critical), (table["tr"] > critical) | (table["tj"] > critical)],
        ["loss", "gain"],
        "",
    )
    assert table["flag"].tolist() == flags.tolist()


def test_topic_risk_of_a_row_with_mean_zero_and_of_two_topics():
    matrix = pd.DataFrame([[0.5, 0.25, 0.75, 0.5], [0.25, 0.5, 0.5, 0.75]], index=["s", "b"])  # Δ sums to 0
    table = risk.topic_risk(matrix, "b", [0])
    x = [0.25, -0.25, 0.25, -0.25]
    tr, tj = direct_topic(x, 0)
    assert table["tr"].tolist() == pytest.approx(tr, rel=1e-12) and table["tj"].tolist() == pytest.approx(tj, rel=1e-12)
    two = risk.topic_risk(matrix[[0, 1]], "b", [0])  # x = (.25, −.25): TJ = ±1/√2
    assert two["tj"].tolist() == pytest.approx([2**-0.5, -(2**-0.5)], rel=1e-12)


def test_topic_flags_are_strict_at_the_critical_value(monkeypatch):
    matrix = pd.DataFrame([[0.5, 0.25, 0.75, 0.5], [0.25, 0.5, 0.5, 0.75]], index=["s", "b"])
    x = np.array([0.25, -0.25, 0.25, -0.25])
    edge = float((x / x.std(ddof=1))[0])  # every |TR_i| = |TJ_i| = this value
    seen = []
    monkeypatch.setattr(risk, "t_critical", lambda level, c: seen.append((level, c)) or edge)
    assert (risk.topic_risk(matrix, "b", [0], sig_level=0.01)["flag"] == "").all()
    assert seen == [(0.01, 4)]
    monkeypatch.setattr(risk, "t_critical", lambda level, c: np.nextafter(edge, 0))
    assert risk.topic_risk(matrix, "b", [0])["flag"].tolist() == ["gain", "loss", "gain", "loss"]


def test_topic_risk_is_undefined_for_noise_one_topic_and_several_baselines():
    noise = pd.DataFrame([[2.0, 2.0, 2.0, 2.0], [0.0, 2e-15, 0.0, 2e-15]], index=["s", "b"])  # sd ≈ 1e-15 at mean 2
    table = risk.topic_risk(noise, "b", [0])
    assert table["tr"].isna().all() and table["tj"].isna().all() and (table["flag"] == "").all()
    one = risk.topic_risk(MATRIX[["t1"]], "b", [0, 1])
    assert one["tr"].isna().all() and one["tj"].isna().all() and len(one) == 8
    both = risk.topic_risk(MATRIX, ["b", "up"], [0], "AP")
    assert both["baseline"].tolist() == ["b"] * 20 + ["up"] * 20
    pd.testing.assert_frame_equal(both.iloc[20:].reset_index(drop=True), risk.topic_risk(MATRIX, "up", [0], "AP"))


def test_spread_threshold_scales_with_root_c_and_the_mean():
    """NaN where sd ≤ 1e-15·√c·max(1, |mean|): four topics, so √c = 2."""
    centred = np.array([1, -1, 1, -1]) * 1.5e-15 * np.sqrt(3 / 4)  # sd 1.5e-15: above 1e-15, below 2e-15
    assert centred.std(ddof=1) == pytest.approx(1.5e-15)
    assert np.isnan(risk._spread(centred[None])).all()
    assert risk._spread(centred[None] * 2)[0, 0] == pytest.approx(3e-15)  # sd 3e-15 > 2e-15
    ulp = np.spacing(3.0)
    shifted = -3.0 + np.array([4, -4, 4, -4]) * ulp  # sd ≈ 2.05e-15 at mean −3: above 2e-15, below 6e-15
    assert 2e-15 < shifted.std(ddof=1) < 6e-15
    assert np.isnan(risk._spread(shifted[None])).all()
    assert risk._spread(np.ones((3, 2, 1))).shape == (3, 2, 1) and np.isnan(risk._spread(np.ones((3, 2, 1)))).all()


def test_standing_out_at_its_boundaries():
    delta = [-0.05, -0.05, 0.05, 0.05, -0.04, 0.04, -0.5, 0.5, -0.5, 0.5]
    tj = [-2.1, -2.0, 2.1, 2.0, -9.0, 9.0, 2.5, -2.5, -2.0, 2.0]
    assert risk.standing_out(delta, tj, 2.0).tolist() == [
        "loss",
        "",  # TJ = −t is not beyond it
        "gain",
        "",
        "",  # |Δ| below the practical size
        "",
        "",  # a loss with TJ > t and a gain with TJ < −t: the sign of Δ decides
        "",
        "",
        "",
    ]
    assert risk.standing_out(pd.Series([-0.02]), pd.Series([-3.0]), 2.0, min_delta=0.02).tolist() == ["loss"]
    assert risk.MIN_TOPIC_DELTA == 0.05


def test_tstar_references_equal_their_definitions():
    matrix = MATRIX.loc[["s1", "b", "s2", "up"]]
    table = risk.tstar_table(
        matrix, [0, 2], "AP", references=("mean", "median", "max", "baselines"), baselines=["b", "up"]
    )
    assert table.columns.tolist() == risk.TSTAR_COLUMNS and (table["measure"] == "AP").all()
    values = matrix.to_numpy()
    references = {
        "mean": values.mean(axis=0),
        "median": np.median(values, axis=0),
        "max": values.max(axis=0),
        "baselines": (values[1] + values[3]) / 2,
    }
    assert table["reference"].tolist() == [r for r in references for _ in range(8)]
    for _, row in table.iterrows():
        expected = direct_risk(matrix.loc[row["system"]], references[row["reference"]], row["alpha"])
        for column in ("urisk", "trisk", "p_value"):
            assert row[column] == pytest.approx(expected[column], rel=1e-12, abs=1e-15), (row["reference"], column)


def test_tstar_rejects_unknown_references_and_baselines_without_names():
    with pytest.raises(UnknownNameError) as caught:
        risk.tstar_table(MATRIX, [0], references=("mean", "mode"))
    assert str(caught.value) == (
        "Unknown T*Risk reference 'mode'. Available T*Risk references: mean, median, max, baselines."
    )
    with pytest.raises(UnknownNameError) as caught:
        risk.tstar_table(MATRIX, [0], references=("baselines",))
    assert str(caught.value) == (
        "Unknown baseline ''. Available baselines: s1, b, s2, copy, up. "
        'The T*Risk reference "baselines" needs baselines=[...].'
    )
    default = risk.tstar_table(MATRIX, [1])
    assert default["reference"].unique().tolist() == ["mean", "median", "max"]


X = np.array([[0.5, 0.25, 0.0], [0.25, 0.75, 1.0]])  # 2 systems x 3 topics, N = 2.75


def test_expected_matrix_zscores_zrisk_and_georisk_by_hand():
    e = [[0.75 * 0.75 / 2.75, 0.75 * 1.0 / 2.75, 0.75 * 1.0 / 2.75], [2.0 * 0.75 / 2.75, 2.0 / 2.75, 2.0 / 2.75]]
    np.testing.assert_allclose(risk.expected_matrix(X), e, rtol=1e-14)
    z = [[(x - m) / math.sqrt(m) for x, m in zip(xs, ms)] for xs, ms in zip(X, e)]
    np.testing.assert_allclose(risk.zscores(X), z, rtol=1e-14)
    zr = [[sum(value(v, alpha) for v in row) for row in z] for alpha in (0, 1.5)]
    np.testing.assert_allclose(risk.zrisk(X, [0, 1.5]), zr, rtol=1e-14)
    geo = [[math.sqrt(sum(X[i]) / 3 * stats.norm.cdf(zr[a][i] / 3)) for i in range(2)] for a in range(2)]
    np.testing.assert_allclose(risk.georisk(X, [0, 1.5]), geo, rtol=1e-14)


def test_zero_totals_give_zero_expectations_and_z():
    assert risk.expected_matrix(np.zeros((2, 3))).tolist() == [[0.0] * 3] * 2
    x = np.array([[0.5, 0.0, -0.0], [0.0, 0.0, 0.0], [0.25, 0.0, 0.5]])
    z = risk.zscores(x)
    e = risk.expected_matrix(x)
    assert z[1].tolist() == [0.0] * 3 and z[:, 1].tolist() == [0.0] * 3
    assert z[0, 0] == pytest.approx((0.5 - e[0, 0]) / math.sqrt(e[0, 0]), rel=1e-14)
    cells = risk.zero_expectation_cells(pd.DataFrame(x, index=list("abc"), columns=["t1", "t2", "t3"]))
    assert list(zip(cells["system"], cells["topic"])) == [
        ("a", "t2"),
        ("b", "t1"),
        ("b", "t2"),
        ("b", "t3"),
        ("c", "t2"),
    ]


def test_georisk_table_ranks_with_ties_at_the_minimum():
    matrix = pd.DataFrame([[0.5, 0.25, 0.0], [0.25, 0.75, 1.0], [0.0, 0.25, 0.5]], index=["p", "q", "r"])
    table = risk.georisk_table(matrix, np.array([0, 4]), "AP")
    assert table.columns.tolist() == risk.GEORISK_COLUMNS + ["rank_mean", "rank_georisk"]
    assert table["alpha"].tolist() == [0.0] * 3 + [4.0] * 3 and (table["measure"] == "AP").all()
    values = matrix.to_numpy()
    assert table["mean"].tolist() == pytest.approx(values.mean(axis=1).tolist() * 2, rel=1e-14)
    assert table["zrisk"].tolist() == pytest.approx(risk.zrisk(values, [0, 4]).reshape(-1).tolist(), rel=1e-14)
    assert table["georisk"].tolist() == pytest.approx(risk.georisk(values, [0, 4]).reshape(-1).tolist(), rel=1e-14)
    assert table["rank_mean"].tolist() == [2, 1, 2] * 2  # p and r tie on 0.25: both 2nd
    for _, group in table.groupby("alpha"):
        order = (-group["georisk"]).rank(method="min").astype(int)
        assert group["rank_georisk"].tolist() == order.tolist()
    assert table["rank_georisk"].dtype.kind == "i"


def test_zrisk_single_is_the_challengers_row_of_the_two_row_pool():
    single = risk.zrisk_single(MATRIX, "b", [0, 2])
    assert single.columns.tolist() == ["system", "baseline", "alpha", "zrisk"] and (single["baseline"] == "b").all()
    for _, row in single.iterrows():
        pair = MATRIX.loc[[row["system"], "b"]].to_numpy()
        assert row["zrisk"] == pytest.approx(risk.zrisk(pair, [row["alpha"]])[0, 0], rel=1e-14, abs=1e-15)
    assert single.set_index(["system", "alpha"]).loc[("s1", 0.0), "zrisk"] != pytest.approx(
        risk.zrisk(MATRIX.loc[["s1", "b"]].to_numpy(), [0])[0, 1]
    )
    alone = risk.zrisk_single(MATRIX.loc[["b"]], "b", [0, 1])
    assert len(alone) == 0 and alone.columns.tolist() == ["system", "baseline", "alpha", "zrisk"]


def test_risk_adjusted_scores_by_hand():
    table = risk.risk_adjusted_scores(MATRIX, "b", [0, 2])
    assert table.columns.tolist() == ["system", "topic", "alpha", "score"] and len(table) == 2 * 5 * 5
    for _, row in table.iterrows():
        s, b = MATRIX.loc[row["system"], row["topic"]], MATRIX.loc["b", row["topic"]]
        assert row["score"] == s - max(row["alpha"] * (b - s), 0.0)
    s1 = table[(table["system"] == "s1") & (table["alpha"] == 2.0)]["score"].to_numpy()
    assert (s1 - np.array(B)).mean() == pytest.approx(direct_risk(ROWS["s1"], B, 2.0)["urisk"], rel=1e-14)


def test_to_convention_negates_every_risk_column_and_swaps_the_interval():
    columns = ["urisk", "trisk", "zrisk", "georisk", "tr", "tj", "x", "effect"]
    table = pd.DataFrame({"system": ["a"], "alpha": [2.0], "ci_low": [-0.5], "ci_high": [0.25], "wins": [3]})
    for i, column in enumerate(columns):
        table[column] = [0.5 + i]
    minus = risk.to_convention(table, "minus")
    assert [minus[column].iloc[0] for column in columns] == [-(0.5 + i) for i in range(len(columns))]
    assert minus["ci_low"].iloc[0] == -0.25 and minus["ci_high"].iloc[0] == 0.5 and minus["wins"].iloc[0] == 3
    assert minus.columns.tolist()[:3] == ["system", "alpha", "r"] and minus["r"].iloc[0] == 3.0
    assert table["urisk"].iloc[0] == 0.5 and "r" not in table  # the input is left alone
    standard = risk.to_convention(table)
    assert standard is not table and standard.equals(table)
    only_low = risk.to_convention(table[["system", "ci_low"]], "minus")
    assert only_low["ci_low"].iloc[0] == -0.5 and "r" not in only_low
    with pytest.raises(ParameterError, match="convention"):
        risk.to_convention(table, "plus")


def test_smooth_table_is_the_mean_smooth_value():
    table = risk.smooth_table(MATRIX, "b")
    assert table.columns.tolist() == ["system", "smooth_urisk"] and table["system"].tolist() == NAMES
    for system, value in zip(table["system"], table["smooth_urisk"]):
        deltas = [s - b for s, b in zip(ROWS[system], B)]
        expected = sum(1.38426 * d**3 - 0.51659 * d**2 + 0.11578 * d for d in deltas) / len(deltas)
        assert value == pytest.approx(expected, rel=1e-13, abs=1e-16)


def test_defaults_measure_and_sig_level_and_a_fresh_index():
    table = risk.risk_table(MATRIX, "b", [0, 1])
    assert (table["measure"] == "").all() and table.index.tolist() == list(range(8))
    assert table["verdict"].tolist() == risk.rule_verdicts(table["urisk"], table["p_adjusted"], 0.05).tolist()
    assert "inconclusive" in set(table["verdict"])  # a p-value above 0.05 (below 1.05)
    for default in (
        risk.topic_risk(MATRIX, "b", [0]),
        risk.tstar_table(MATRIX, [0]),
        risk.georisk_table(MATRIX, [0]),
        risk.risk_table(MATRIX, ["b", "up"], [0]),
    ):
        assert (default["measure"] == "").all() and default.index.tolist() == list(range(len(default)))
    several = risk.risk_table(MATRIX, ["b", "up"], [0], "AP")
    assert (several["measure"] == "AP").all()


def test_topic_risk_with_several_baselines_keeps_sig_level():
    both = risk.topic_risk(MATRIX, ["b", "up"], [0], "AP", sig_level=0.5)
    assert both.index.tolist() == list(range(40))
    parts = [risk.topic_risk(MATRIX, b, [0], "AP", sig_level=0.5) for b in ("b", "up")]
    pd.testing.assert_frame_equal(both, pd.concat(parts, ignore_index=True))
    assert both["flag"].tolist() != risk.topic_risk(MATRIX, ["b", "up"], [0], "AP")["flag"].tolist()


def test_topic_flags_from_tr_alone_or_tj_alone(monkeypatch):
    # Δ = (.5, .25, .25, 0): s_x = √(.125/3), TR = Δ/s_x = (2.45, 1.22, 1.22, 0), TJ = (Δ − .25)/s_x = (1.22, 0, 0, −1.22)
    matrix = pd.DataFrame([[0.75, 0.5, 0.5, 0.25], [0.25, 0.25, 0.25, 0.25]], index=["s", "b"])
    monkeypatch.setattr(risk, "t_critical", lambda level, c: 2.0)
    assert risk.topic_risk(matrix, "b", [0])["flag"].tolist() == ["gain", "", "", ""]  # TR only
    monkeypatch.setattr(risk, "t_critical", lambda level, c: 1.0)
    assert risk.topic_risk(matrix, "b", [0])["flag"].tolist() == ["gain", "gain", "gain", "loss"]  # TJ only: topic 4


def test_spread_noise_is_judged_row_by_row_and_includes_the_threshold():
    rows = np.array([[[1, -1, 1, -1], [100, 100.5, 100, 100.5]]]) * np.array([3e-15 * np.sqrt(3 / 4), 1])[:, None]
    spread = risk._spread(rows)  # shape (1, 2, 4): the first row's tolerance is 2e-15, not that of a mean of 50
    assert spread.shape == (1, 2, 1) and spread[0, :, 0].tolist() == pytest.approx([3e-15, np.sqrt(1 / 12)])
    edge = np.array([1, -1, 1, -1]) * 1.7320508075688775e-15
    assert edge.std(ddof=1) == 2e-15  # exactly 1e-15·√4: constant up to float noise
    assert np.isnan(risk._spread(edge[None])).all()


def test_standing_out_needs_a_win_or_a_loss_even_without_a_practical_size():
    assert risk.standing_out([0.0, 0.0, -0.01], [-3.0, 3.0, -3.0], 2.0, min_delta=0.0).tolist() == ["", "", "loss"]


def test_georisk_ranks_of_three_way_ties_are_the_minimum():
    matrix = pd.DataFrame([[0.5, 0.25], [0.25, 0.5], [0.5, 0.25], [0.5, 0.25], [1.0, 1.0]], index=list("pqrst"))
    table = risk.georisk_table(matrix, [0])
    assert table["rank_mean"].tolist() == [2, 2, 2, 2, 1] and table["rank_mean"].dtype.kind == "i"
    assert table["rank_georisk"].tolist()[:4].count(table["rank_georisk"][0]) == 3  # p, r, s tie
    assert table["rank_georisk"][0] == 1 + (table["georisk"] > table["georisk"][0]).sum()


def test_zscore_is_zero_where_the_expectation_is_zero_even_for_negative_scores():
    x = np.array([[0.25, -0.25, 0.0], [0.5, 0.25, 0.75]])  # S_1 = 0: e_1j = 0, although x_11 ≠ 0
    assert risk.expected_matrix(x)[0].tolist() == [0.0, 0.0, 0.0]
    assert risk.zscores(x)[0].tolist() == [0.0, 0.0, 0.0]
