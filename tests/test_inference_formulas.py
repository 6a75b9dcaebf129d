"""Paired tests, diagnostics and Tukey HSD (riskreport.stats.inference), each against its definition computed
here in a plain loop: the exact binomial sign test, Wilcoxon's W⁺ with its exact null distribution or its
tie-corrected normal approximation, the sign-flip randomisation test by enumerating every flip, the two-way
ANOVA error term of Tukey's HSD (docs/measures/inference.md).

test_inference checks the worked examples and scipy agreement on larger inputs; these are the fast, exact
tests of the mutation pass (docs/development.md), each able to fail on a wrong constant, sign or comparison."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from riskreport.stats import inference as inf
from riskreport.stats import resampling
from riskreport.stats.risk import risk_adjusted


def binomial_p(wins, losses):
    """min(1, 2·P(X ≤ min(wins, losses))), X ~ Bin(wins + losses, 1/2), by summing the binomial terms."""
    n = wins + losses
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(math.comb(n, k) for k in range(min(wins, losses) + 1)) / 2**n)


def test_sign_test_is_the_exact_binomial_test():
    x = np.array(
        [
            [0.5, -0.25, 0.25, 0.0, 0.125, 0.5, 0.75, 0.25],  # 6 wins, 1 loss, 1 tie
            [-0.5, -0.25, -0.25, -0.5, -0.125, 0.5, 0.0, 0.0],  # 1 win, 5 losses
            [0.5, -0.5, 0.25, -0.25, 0.0, 0.0, 0.0, 0.0],  # 2 and 2: 2·P(X ≤ 2) > 1, capped
            [0.0] * 8,  # no wins or losses: p = 1
        ]
    )
    wins, p = inf.sign_test(x)
    assert wins.tolist() == [6.0, 1.0, 2.0, 0.0] and wins.dtype == float
    expected = [binomial_p(6, 1), binomial_p(1, 5), 1.0, 1.0]
    assert expected[:2] == pytest.approx([16 / 128, 14 / 64])
    assert p.tolist() == pytest.approx(expected, rel=1e-13)
    cube_wins, cube_p = inf.sign_test(np.stack([x, -x]))  # any leading shape; losses and wins swap
    assert cube_wins.tolist() == [[6, 1, 2, 0], [1, 5, 2, 0]] and cube_p.reshape(-1).tolist() == pytest.approx(
        expected * 2
    )


def direct_ranks(values):
    """Average ranks of |v| among the non-zero values, by counting."""
    magnitude = [abs(v) for v in values]
    return [sum(m < a for m in magnitude) + (sum(m == a for m in magnitude) + 1) / 2 for a in magnitude]


def exact_wilcoxon_p(w_plus, n):
    """Two-sided exact p from the null distribution of W⁺ (every sign of ranks 1..n equally likely)."""
    counts = [0] * (n * (n + 1) // 2 + 1)
    counts[0] = 1
    for r in range(1, n + 1):
        for s in range(len(counts) - 1, r - 1, -1):
            counts[s] += counts[s - r]
    low = int(min(w_plus, n * (n + 1) / 2 - w_plus))
    return min(1.0, 2 * sum(counts[: low + 1]) / 2**n)


def permutation_wilcoxon_p(w_plus, ranks):
    """Two-sided p of W⁺ over every sign of the (average) ranks: 2·min(P(W ≤ w), P(W ≥ w)), capped at 1."""
    sums = np.array(list(itertools.product([0, 1], repeat=len(ranks)))) @ np.asarray(ranks)
    return min(1.0, 2 * min((sums <= w_plus).mean(), (sums >= w_plus).mean()))


def normal_wilcoxon_p(w_plus, magnitudes):
    """z = (W⁺ − n(n+1)/4) / √(n(n+1)(2n+1)/24 − Σ(t³ − t)/48), the tie groups t of |x|; p = 2·(1 − Φ(|z|))."""
    n = len(magnitudes)
    ties = sum(t**3 - t for t in (magnitudes.count(m) for m in set(magnitudes)))
    z = (w_plus - n * (n + 1) / 4) / math.sqrt(n * (n + 1) * (2 * n + 1) / 24 - ties / 48)
    return 2 * stats.norm.sf(abs(z))


def wilcoxon_rows():
    """Rows of 60 topics padded with zeros: the boundaries between scipy's exact or permutation p and the
    normal approximation computed in bulk (n = 50 / 51 without ties, n = 13 / 14 with ties)."""
    signs = np.tile([1.0, -1.0, -1.0, 1.0, 1.0, -1.0, 1.0], 9)[:60]
    distinct = np.arange(1, 61) * 0.01 * signs
    rows = np.zeros((7, 60))
    rows[0, :50] = distinct[:50]  # n = 50, no ties: exact
    rows[1, :51] = distinct[:51]  # n = 51: normal
    tied = np.array([0.1, -0.1 + 3e-11, 0.2, 0.2, -0.3, 0.4, 0.5, -0.5, 0.6, 0.7, 0.8, 0.9, -1.0, 1.1])
    rows[2, :13] = tied[:13]  # n = 13 with ties: scipy's permutation p
    rows[3, :14] = tied  # n = 14 with ties: normal, tie-corrected (0.1 and −0.1 + 3e-11 tie once rounded)
    rows[4, ::2] = np.round(np.sin(np.arange(30)) * 0.4, 1)  # ties and zeros: normal
    rows[6, :55] = np.round(np.linspace(-0.9, 0.95, 55), 1)  # n = 54 with ties (the largest too), last: normal
    return rows  # row 5: all zeros


def test_wilcoxon_statistic_and_p_against_their_definitions():
    rows = wilcoxon_rows()
    w_plus, p = inf.wilcoxon_test(rows[None])
    assert w_plus.shape == p.shape == (1, 7)
    w_plus, p = w_plus.reshape(-1), p.reshape(-1)
    for i in (0, 1, 2, 3, 4, 6):
        nonzero = [v for v in np.round(rows[i], 10) if v != 0]
        ranks = direct_ranks(nonzero)
        assert w_plus[i] == sum(r for r, v in zip(ranks, nonzero) if v > 0), i
        if i == 0:
            expected = exact_wilcoxon_p(w_plus[i], 50)
        elif i == 2:
            expected = permutation_wilcoxon_p(w_plus[i], ranks)  # as scipy for n ≤ 13 with ties
        else:
            expected = normal_wilcoxon_p(w_plus[i], [abs(v) for v in nonzero])
        assert p[i] == pytest.approx(expected, rel=1e-12), i
    assert (w_plus[5], p[5]) == (0.0, 1.0)
    assert p[2] != pytest.approx(normal_wilcoxon_p(w_plus[2], [abs(v) for v in np.round(rows[2, :13], 10)]), rel=1e-3)
    assert p[0] != pytest.approx(normal_wilcoxon_p(w_plus[0], list(np.abs(rows[0, :50]))), rel=1e-6)


def test_wilcoxon_of_a_small_row_uses_the_exact_distribution():
    x = np.array([[0.5, -0.25, 0.75, 1.0, -0.125, 0.0, 0.375]])  # n = 6, no ties: W⁺ = 3 + 5 + 6 + 4 = 18
    w_plus, p = inf.wilcoxon_test(x)
    assert w_plus.tolist() == [18.0] and p.tolist() == pytest.approx([exact_wilcoxon_p(18, 6)], rel=1e-13)
    assert exact_wilcoxon_p(18, 6) == pytest.approx(2 * 5 / 64)  # W⁻ = 3: sums ≤ 3 of 1..6 are {}, 1, 2, 3, 1+2


def test_sign_flips_enumerate_every_vector_then_sample():
    flips, exact = inf.sign_flips(3, 8, np.random.default_rng(0))  # 2^3 = 8 ≤ 8: exact
    assert exact and flips.tolist() == [list(v)[::-1] for v in itertools.product([1.0, -1.0], repeat=3)]
    flips, exact = inf.sign_flips(3, 7, np.random.default_rng(4))
    drawn = np.array([-1.0, 1.0])[np.random.default_rng(4).integers(0, 2, size=(7, 3))]
    assert not exact and flips.tolist() == drawn.tolist()


def test_sign_flips_and_randomisation_in_blocks_are_drawn_at_once(monkeypatch):
    drawn = np.array([-1.0, 1.0])[np.random.default_rng(9).integers(0, 2, size=(33, 6))]
    x = np.random.default_rng(2).normal(0, 0.3, (3, 6))
    whole = inf.randomisation_test(x, samples=33, seed=9)
    monkeypatch.setattr(resampling, "DRAWS_AT_ONCE", 13)  # blocks of 2 sign vectors of 6 topics, the last one short
    flips, exact = inf.sign_flips(6, 33, np.random.default_rng(9))
    assert not exact and flips.tolist() == drawn.tolist()
    assert inf.randomisation_test(x, samples=33, seed=9).tolist() == whole.tolist()
    hits = [sum(abs((f * row).mean()) >= abs(row.mean()) - 1e-12 for f in drawn) for row in x]
    assert whole.tolist() == pytest.approx([(1 + h) / 34 for h in hits], rel=1e-14)


def enumerated_p(x):
    """#{|mean of the flipped x| ≥ |mean x|} / 2^c over every sign vector (dyadic x: means exact)."""
    observed = abs(sum(x))
    hits = sum(
        abs(sum(s * v for s, v in zip(signs, x))) >= observed for signs in itertools.product([1, -1], repeat=len(x))
    )
    return hits / 2 ** len(x)


def test_randomisation_test_enumerates_every_flip():
    x = np.array([[0.5, 0.25, -0.125, 0.75, 0.0, 0.25], [0.25, -0.25, 0.5, -0.5, 0.125, 0.0], [0.0] * 6])
    p = inf.randomisation_test(x, samples=64)  # 2^6 = 64: exact
    assert p.tolist() == [enumerated_p(list(row)) for row in x]
    assert p[2] == 1.0 and p[1] == 1.0  # mean 0 (and flips reaching |mean| exactly, as for row 1's ±0.125)
    assert inf.randomisation_test(x[None, :2], samples=64).shape == (1, 2)


def test_sampled_randomisation_p_counts_the_observed_as_one_flip():
    x = np.array([[0.5, 0.25, -0.125, 0.75, 0.0, 0.25, 0.5], [0.25, -0.25, 0.5, -0.5, 0.125, 0.0, -0.75]])
    flips, exact = inf.sign_flips(7, 50, np.random.default_rng(31))  # 2^7 > 50: sampled
    hits = [sum(abs((f * row).mean()) >= abs(row.mean()) - 1e-12 for f in flips) for row in x]
    expected = [(1 + h) / (1 + 50) for h in hits]
    assert not exact and inf.randomisation_test(x, samples=50, seed=31).tolist() == pytest.approx(expected, rel=1e-14)
    assert inf.randomisation_test(x, samples=50).tolist() != pytest.approx(expected, rel=1e-14)  # seed 2026


def test_risk_randomisation_test_flips_the_risk_adjusted_differences():
    delta = np.array([[0.5, 0.25, -0.125, 0.75, 0.0, 0.25], [0.25, -0.25, 0.5, -0.5, 0.125, -0.375]])
    alphas = [0, 1, 3]
    p = inf.risk_randomisation_test(delta, alphas, samples=64)
    expected = [[enumerated_p([v if v >= 0 else (1 + a) * v for v in row]) for row in delta] for a in alphas]
    assert p.tolist() == expected and len({tuple(r) for r in expected}) > 1  # p moves with α
    sampled = inf.risk_randomisation_test(delta, alphas, samples=40, seed=3)
    assert sampled.tolist() == inf.randomisation_test(risk_adjusted(delta, alphas), samples=40, seed=3).tolist()


def test_randomisation_in_memory_chunks_gives_the_same_p(monkeypatch):
    delta = np.random.default_rng(6).normal(0, 0.3, (9, 7))
    whole = inf.risk_randomisation_test(delta, [0, 2], samples=100, seed=1)
    monkeypatch.setattr(inf, "MEMORY_BUDGET", 2 * 128 * 4)  # 4 systems per chunk of 128 flips x 2 parts
    assert inf.risk_randomisation_test(delta, [0, 2], samples=100, seed=1).tolist() == whole.tolist()


MATRIX = pd.DataFrame(
    [
        [0.5, 0.25, 0.625, 0.125, 0.75, 0.25, 0.5, 0.375],
        [0.75, 0.0, 0.5, 0.125, 0.75, 0.5, 0.25, 0.5],
        [0.5, 0.5, 0.0, 0.25, 0.25, 0.75, 0.0, 0.125],
        [0.625, 0.25, 0.75, 0.5, 1.0, 0.375, 0.625, 0.5],
    ],
    index=["b", "s1", "s2", "up"],
    columns=[f"t{i}" for i in range(8)],
)


def test_tests_table_rows_are_the_tests_of_each_challenger():
    table = inf.tests_table(MATRIX, "b", [0, 2], "AP", correction="bh", samples=100, seed=8)
    assert table.columns.tolist() == inf.TEST_COLUMNS
    assert table["test"].tolist() == [t for t in inf.TESTS for _ in range(6)]
    assert table["system"].tolist() == ["s1", "s2", "up"] * 8 and table["alpha"].tolist() == ([0.0] * 3 + [2.0] * 3) * 4
    assert (table["baseline"] == "b").all() and (table["measure"] == "AP").all() and (table["correction"] == "bh").all()
    delta = (MATRIX.loc[["s1", "s2", "up"]] - MATRIX.loc["b"]).to_numpy()
    x = risk_adjusted(delta, [0, 2])
    t = stats.ttest_1samp(x, 0, axis=-1)
    expected = {
        "t": (t.statistic, t.pvalue),
        "sign": inf.sign_test(x),
        "wilcoxon": inf.wilcoxon_test(x),
        "randomisation": (x.mean(axis=-1), inf.randomisation_test(x, samples=100, seed=8)),
    }
    for test, (statistic, p) in expected.items():
        rows = table[table["test"] == test]
        assert rows["statistic"].tolist() == pytest.approx(statistic.reshape(-1).tolist(), rel=1e-12), test
        assert rows["p_value"].tolist() == pytest.approx(p.reshape(-1).tolist(), rel=1e-12), test
    for _, group in table.groupby(["test", "alpha"]):
        assert group["p_adjusted"].tolist() == pytest.approx(
            multipletests(group["p_value"], method="fdr_bh")[1].tolist()
        )


def test_tests_table_with_several_baselines_adjusts_across_the_family():
    table = inf.tests_table(MATRIX, ["b", "up"], [1], "AP", correction="holm", samples=100, seed=8)
    first = inf.tests_table(MATRIX, "b", [1], "AP", correction="none", samples=100, seed=8)
    second = inf.tests_table(MATRIX, "up", [1], "AP", correction="none", samples=100, seed=8)
    assert table["baseline"].tolist() == ["b"] * 12 + ["up"] * 12 and (table["correction"] == "holm").all()
    assert table["p_value"].tolist() == pd.concat([first, second])["p_value"].tolist()
    for _, group in table.groupby("test"):
        assert group["p_adjusted"].tolist() == pytest.approx(multipletests(group["p_value"], method="holm")[1].tolist())


def unbiased_skew_kurtosis(x):
    """G1 = √(n(n−1))/(n−2) · m3/m2^{3/2}, G2 = (n−1)/((n−2)(n−3)) · ((n+1)·m4/m2² − 3(n−1)), m_k central moments."""
    n, mean = len(x), sum(x) / len(x)
    m2, m3, m4 = (sum((v - mean) ** k for v in x) / n for k in (2, 3, 4))
    g1 = math.sqrt(n * (n - 1)) / (n - 2) * m3 / m2**1.5
    g2 = (n - 1) / ((n - 2) * (n - 3)) * ((n + 1) * m4 / m2**2 - 3 * (n - 1))
    return g1, g2


def test_diagnostics_equal_their_definitions():
    table = inf.diagnostics_table(MATRIX, "b", [0, 3])
    assert table.columns.tolist() == ["system", "alpha", "skewness", "excess_kurtosis", "shapiro_w", "shapiro_p", "d_z"]
    for _, row in table.iterrows():
        delta = (MATRIX.loc[row["system"]] - MATRIX.loc["b"]).tolist()
        x = [d if d >= 0 else (1 + row["alpha"]) * d for d in delta]
        skew, kurt = unbiased_skew_kurtosis(x)
        mean = sum(x) / len(x)
        sd = math.sqrt(sum((v - mean) ** 2 for v in x) / (len(x) - 1))
        shapiro = stats.shapiro(x)
        assert [row["skewness"], row["excess_kurtosis"], row["d_z"]] == pytest.approx(
            [skew, kurt, mean / sd], rel=1e-10
        )
        assert [row["shapiro_w"], row["shapiro_p"]] == pytest.approx([shapiro.statistic, shapiro.pvalue], rel=1e-12)


def test_diagnostics_are_undefined_without_variation_or_topics():
    ulp = np.spacing(3.0)
    rows = {
        "b": [0.0] * 4,
        "centred": list(np.array([1, -1, 1, -1]) * 1.5e-15 * np.sqrt(3 / 4)),  # sd 1.5e-15 ≤ 1e-15·√4: noise
        "wider": list(np.array([1, -1, 1, -1]) * 3e-15 * np.sqrt(3 / 4)),  # sd 3e-15 > 2e-15: varies
        "shifted": list(-3.0 + np.array([4, -4, 4, -4]) * ulp),  # sd 2.05e-15 ≤ 1e-15·√4·|−3|: noise
        "varies": [0.5, -0.25, 0.25, 0.0],
    }
    table = inf.diagnostics_table(pd.DataFrame(list(rows.values()), index=list(rows)), "b", [0]).set_index("system")
    assert table["d_z"].isna().tolist() == [True, False, True, False]
    assert table["skewness"].isna().tolist() == [True, False, True, False]
    assert table["shapiro_w"].isna().tolist() == [True, False, True, False]
    assert table.loc["wider", "d_z"] == 0.0 and table.loc["varies", "d_z"] == pytest.approx(
        0.125 / math.sqrt(0.3125 / 3)
    )
    two = inf.diagnostics_table(MATRIX[["t0", "t1"]], "b", [0])  # d_z needs 2 topics, Shapiro–Wilk 3
    assert two["d_z"].notna().all() and two["shapiro_w"].isna().all() and two["shapiro_p"].isna().all()
    one = inf.diagnostics_table(MATRIX[["t0"]], "b", [0])
    assert one[["skewness", "excess_kurtosis", "shapiro_w", "d_z"]].isna().all().all()


def two_way_mse(x):
    """SS_residual / ((k − 1)(c − 1)) of the two-way (system + topic) ANOVA, in a loop."""
    k, c = len(x), len(x[0])
    grand = sum(map(sum, x)) / (k * c)
    rows = [sum(r) / c for r in x]
    cols = [sum(x[i][j] for i in range(k)) / k for j in range(c)]
    return sum((x[i][j] - rows[i] - cols[j] + grand) ** 2 for i in range(k) for j in range(c)) / ((k - 1) * (c - 1))


def test_tukey_hsd_against_the_anova_and_scipys_studentized_range(cache_dir):
    table = inf.tukey_hsd(MATRIX, "b", [0, 2], sig_level=0.1)
    assert table.columns.tolist() == [
        "alpha",
        "system_a",
        "system_b",
        "diff",
        "ci_low",
        "ci_high",
        "p_value",
        "significant",
    ]
    assert list(zip(table["system_a"], table["system_b"]))[:6] == list(itertools.combinations(MATRIX.index, 2))
    critical = stats.studentized_range.ppf(0.9, 4, 21)
    for alpha, group in table.groupby("alpha"):
        base = MATRIX.loc["b"].tolist()
        x = [[s - max(alpha * (b - s), 0.0) for s, b in zip(MATRIX.loc[name], base)] for name in MATRIX.index]
        scale = math.sqrt(two_way_mse(x) / 8)
        for _, row in group.iterrows():
            diff = sum(x[MATRIX.index.get_loc(row["system_a"])]) / 8 - sum(x[MATRIX.index.get_loc(row["system_b"])]) / 8
            assert row["diff"] == pytest.approx(diff, rel=1e-12, abs=1e-15)
            assert [row["ci_low"], row["ci_high"]] == pytest.approx([diff - critical * scale, diff + critical * scale])
            assert row["p_value"] == pytest.approx(stats.studentized_range.sf(abs(diff) / scale, 4, 21), abs=2e-4)
            assert row["significant"] == (row["ci_low"] > 0 or row["ci_high"] < 0)
    assert table["significant"].any() and not table["significant"].all()


def test_tukey_hsd_without_residual_or_topics(cache_dir):
    # 4 systems x 2 topics, each a shift of the others by a multiple of 1/4: the residuals are exactly 0
    exact = pd.DataFrame([[0.25, 0.5], [0.5, 0.75], [0.25, 0.5], [0.0, 0.25]], index=["b", "up", "same", "down"])
    x = exact.to_numpy()
    assert (x - x.mean(1, keepdims=True) - x.mean(0, keepdims=True) + x.mean() == 0).all()
    table = inf.tukey_hsd(exact, "b", [0])  # MSE = 0: a difference is infinitely many SEs away, none is 0 of them
    assert table["diff"].tolist() == [-0.25, 0.0, 0.25, 0.25, 0.5, 0.25]
    assert table["p_value"].tolist() == [0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert table["ci_low"].tolist() == table["diff"].tolist() == table["ci_high"].tolist()
    assert table["significant"].tolist() == [True, False, True, True, True, True]  # [0, 0] does not exclude 0
    one = inf.tukey_hsd(exact[[0]], "b", [0, 1])  # one topic: no error term
    assert len(one) == 12 and one.index.tolist() == list(range(12)) and one["p_value"].dtype == float
    assert one[["ci_low", "ci_high", "p_value"]].isna().all().all() and not one["significant"].any()


def test_studentized_range_sf_interpolates_scipy_and_ends_at_zero(cache_dir):
    q = np.array([-1.0, 0.0, 0.5, 2.0, 3.7, 7.9, 8.1, 12.0, 15.9, 16.0, 16.5, np.inf])
    ours = inf._studentized_range_sf(q, 3, 10)
    assert ours[1:10].tolist() == pytest.approx(stats.studentized_range.sf(q[1:10], 3, 10).tolist(), abs=2e-4)
    assert ours[0] == pytest.approx(1.0) and ours[-2:].tolist() == [0.0, 0.0] and ours.max() <= 1.0
    assert ours[2] == pytest.approx(stats.studentized_range.sf(0.5, 3, 10), rel=1e-6)  # on the grid: scipy's value


def test_studentized_range_values_are_computed_once_per_shape(cache_dir, monkeypatch):
    inf._studentized_range_grid.cache_clear()
    inf._studentized_range_critical.cache_clear()
    grid, values = inf._studentized_range_grid(3, 10.0)
    critical = inf._studentized_range_critical(0.95, 3, 10.0)
    assert critical == pytest.approx(stats.studentized_range.ppf(0.95, 3, 10), rel=1e-10)
    assert len(grid) == 113 and grid[80] == 8.0 and grid[-1] == 16.0 and values.min() >= 1e-300
    monkeypatch.setattr(inf, "studentized_range_sf", None)  # a second call of the same shape integrates nothing
    monkeypatch.setattr(inf, "studentized_range_ppf", None)
    assert inf._studentized_range_critical(0.95, 3, 10.0) == critical
    assert inf._studentized_range_grid(3, 10.0) is inf._studentized_range_grid(3, 10.0)
    inf._studentized_range_grid.cache_clear()
    inf._studentized_range_critical.cache_clear()
    assert not (cache_dir / "scipy").exists()  # nothing slow enough to keep on disk


def test_exact_randomisation_divides_by_two_to_the_c_not_by_samples():
    x = np.array([[0.5, 0.25, -0.125, 0.75, 0.0, 0.25]])
    assert inf.randomisation_test(x, samples=100).tolist() == [enumerated_p(list(x[0]))]  # 2^6 = 64 < 100: exact


def test_defaults_are_10000_flips_from_seed_2026_holm_and_no_measure():
    delta = np.random.default_rng(12).normal(0.05, 0.3, (2, 14))  # 2^14 > 10,000: sampled
    flips, exact = inf.sign_flips(14, 10_000, np.random.default_rng(2026))
    assert not exact
    x = risk_adjusted(delta, [0, 1])
    hits = (np.abs(x @ flips.T / 14) >= np.abs(x.mean(axis=-1))[..., None] - 1e-12).sum(axis=-1)
    expected = (1 + hits) / 10_001
    expected = expected.reshape(-1)
    assert inf.randomisation_test(x).reshape(-1).tolist() == pytest.approx(expected.tolist(), rel=1e-14)
    assert inf.risk_randomisation_test(delta, [0, 1]).reshape(-1).tolist() == pytest.approx(
        expected.tolist(), rel=1e-14
    )
    matrix = pd.DataFrame(np.vstack([np.full(14, 0.5), 0.5 + delta]), index=["b", "s", "t"])
    table = inf.tests_table(matrix, "b", [0, 1])
    assert (table["measure"] == "").all() and (table["correction"] == "holm").all()
    assert table.index.tolist() == list(range(16))
    randomisation = table[table["test"] == "randomisation"]
    assert randomisation["p_value"].tolist() == pytest.approx(expected.tolist(), rel=1e-14)
    for _, group in table.groupby(["test", "alpha"]):
        assert group["p_adjusted"].tolist() == pytest.approx(multipletests(group["p_value"], method="holm")[1].tolist())
    several = inf.tests_table(matrix, ["b", "t"], [0], "AP", samples=100)
    assert (several["measure"] == "AP").all() and several.index.tolist() == list(range(16))


def test_diagnostics_of_one_challenger_three_topics_and_the_noise_edge():
    one = inf.diagnostics_table(MATRIX.loc[["b", "s1"], ["t0", "t1", "t2", "t3"]], "b", [0])  # 1 challenger
    x = (MATRIX.loc["s1"] - MATRIX.loc["b"]).to_numpy()[:4]
    assert one["shapiro_w"].tolist() == pytest.approx([stats.shapiro(x).statistic], rel=1e-12)
    assert one["d_z"].tolist() == pytest.approx([x.mean() / x.std(ddof=1)], rel=1e-12)
    three = inf.diagnostics_table(MATRIX[["t0", "t1", "t2"]], "b", [0])  # Shapiro–Wilk from 3 topics
    assert three["shapiro_p"].notna().all()
    edge = pd.DataFrame([[0.0] * 4, list(np.array([1, -1, 1, -1]) * 1.7320508075688775e-15)], index=["b", "s"])
    assert edge.loc["s"].std(ddof=1) == 2e-15  # exactly 1e-15·√4: float noise, as in TRisk
    assert inf.diagnostics_table(edge, "b", [0])["d_z"].isna().all()
    wide = inf.diagnostics_table(MATRIX[["t0"]], "b", [0, 1])  # 2 α x 3 challengers, one topic: all NaN
    assert len(wide) == 6 and wide[["skewness", "excess_kurtosis", "shapiro_w", "shapiro_p", "d_z"]].isna().all().all()
    for column in ("skewness", "excess_kurtosis", "shapiro_w", "shapiro_p", "d_z"):
        assert wide[column].dtype == float and one[column].dtype == float


def test_tukey_hsd_defaults_sorted_alphas_and_one_degree_of_freedom(cache_dir):
    table = inf.tukey_hsd(MATRIX, "b", [2, 0])  # α in the order given: the table is sorted by α
    assert table["alpha"].tolist() == [0.0] * 6 + [2.0] * 6
    first = table.iloc[0]
    x = MATRIX.to_numpy()
    scale = math.sqrt(two_way_mse(x.tolist()) / 8)
    assert first["ci_high"] - first["diff"] == pytest.approx(stats.studentized_range.ppf(0.95, 4, 21) * scale)
    small = inf.tukey_hsd(MATRIX.loc[["b", "s1"], ["t0", "t1"]], "b", [0])  # k = c = 2: df = 1
    diff = (0.5 + 0.25 - 0.75 - 0.0) / 2
    resid = np.array([[0.5, 0.25], [0.75, 0.0]])
    resid = resid - resid.mean(1, keepdims=True) - resid.mean(0, keepdims=True) + resid.mean()
    half = stats.studentized_range.ppf(0.95, 2, 1) * math.sqrt((resid**2).sum() / 2)
    assert small[["diff", "ci_low", "ci_high"]].iloc[0].tolist() == pytest.approx([diff, diff - half, diff + half])
    q = abs(diff) / math.sqrt((resid**2).sum() / 2)
    assert small["p_value"].iloc[0] == pytest.approx(stats.studentized_range.sf(q, 2, 1), abs=2e-4)


def test_studentized_range_tail_is_relative_and_each_shape_has_its_own_entry(cache_dir):
    inf._studentized_range_critical.cache_clear()
    assert inf._studentized_range_critical(0.95, 3, 10.0) == pytest.approx(stats.studentized_range.ppf(0.95, 3, 10))
    assert inf._studentized_range_critical(0.95, 3, 12.0) == pytest.approx(stats.studentized_range.ppf(0.95, 3, 12))
    assert inf._studentized_range_critical(0.9, 3, 12.0) == pytest.approx(stats.studentized_range.ppf(0.9, 3, 12))
    tail = inf._studentized_range_sf(np.array([15.9, 16.0]), 3, 10)  # ~1.4e-6: 0 would pass an absolute check
    assert tail.tolist() == pytest.approx(stats.studentized_range.sf([15.9, 16.0], 3, 10).tolist(), rel=1e-2)
    assert tail[1] == pytest.approx(stats.studentized_range.sf(16.0, 3, 10), rel=1e-9)  # the last grid point
