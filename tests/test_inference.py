"""Inference: bootstrap CIs against scipy, paired tests on docs/measures (worked examples), corrections, coverage, RBO, mixed model."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from test_risk import MATRIX, B, S

from riskreport.stats import corrections, mixed, rankings
from riskreport.stats import inference as inf
from riskreport.stats.risk import risk_adjusted

DELTA = np.subtract(S, B)


@pytest.mark.parametrize("alpha", [0, 4])
def test_bca_agrees_with_scipy(alpha):
    x = risk_adjusted(DELTA, [alpha])[0]
    ours = inf.bootstrap_table(MATRIX, "b", [alpha], levels=[0.95], samples=20_000, seed=5)
    ours = ours[ours["method"] == "bca"].iloc[0]
    theirs = stats.bootstrap((x,), np.mean, n_resamples=20_000, method="BCa", confidence_level=0.95, random_state=6)
    spread = inf.bootstrap_distribution(MATRIX, "b", "s", alpha, samples=20_000, seed=5).std()
    # Monte Carlo error plus one step of the discrete bootstrap grid (0.1·(1+α)/15) from ties at θ̂
    assert abs(ours["ci_low"] - theirs.confidence_interval.low) <= 0.12 * spread
    assert abs(ours["ci_high"] - theirs.confidence_interval.high) <= 0.12 * spread
    assert ours["verdict"] == "risk"


def test_percentile_basic_student_t_definitions():
    x = risk_adjusted(DELTA, [1])[0]
    counts = inf.resample_counts(15, 5_000, np.random.default_rng(3))
    means = (counts @ x) / 15
    ci = inf.confidence_intervals(x[None, :], [0.9], counts)
    lo, hi = np.percentile(means, [5, 95])
    assert ci["percentile"][0, 0].tolist() == pytest.approx([lo, hi])
    assert ci["basic"][0, 0].tolist() == pytest.approx([2 * x.mean() - hi, 2 * x.mean() - lo])
    half = stats.t.ppf(0.95, 14) * x.std(ddof=1) / np.sqrt(15)
    assert ci["student_t"][0, 0].tolist() == pytest.approx([x.mean() - half, x.mean() + half])


def test_bca_coverage_simulation():
    """BCa 90% intervals of the mean of skewed (exponential) samples of 30 cover the truth ~90% of the time."""
    rng = np.random.default_rng(42)
    trials, n = 300, 30
    x = rng.exponential(1.0, size=(trials, n)) - 1.0  # true mean 0, skewed
    counts = inf.resample_counts(n, 2_000, np.random.default_rng(7))
    ci = inf.confidence_intervals(x, [0.9], counts, methods=("bca",))["bca"][:, 0]
    coverage = ((ci[:, 0] <= 0) & (ci[:, 1] >= 0)).mean()
    assert 0.84 <= coverage <= 0.95  # binomial sd ≈ 0.017


def test_identical_system_gives_degenerate_inconclusive_intervals():
    matrix = pd.DataFrame([B, B], index=["copy", "b"])
    table = inf.bootstrap_table(matrix, "b", [0, 3], samples=500)
    assert (table["ci_low"] == 0).all() and (table["ci_high"] == 0).all()
    assert (table["verdict"] == "inconclusive").all()


def test_spec_sign_wilcoxon_t():
    wins, p = inf.sign_test(DELTA)
    assert (wins, p) == (3, pytest.approx(0.0922852, abs=5e-8))
    w_plus, _ = inf.wilcoxon_test(DELTA[None, :])
    assert w_plus[0] == 14
    table = inf.tests_table(MATRIX, "b", [0, 4], correction="none").set_index(["test", "alpha"])
    assert table.loc[("t", 0.0), "statistic"] == pytest.approx(-2.584718, abs=5e-7)
    assert table.loc[("t", 0.0), "p_value"] == pytest.approx(0.0216103, abs=5e-8)
    assert table.loc[("t", 4.0), "p_value"] == pytest.approx(0.00287271, abs=5e-9)
    rounded = np.round(DELTA, 10)  # docs/measures/inference.md: round before ranking, or float noise breaks ties
    assert table.loc[("wilcoxon", 0.0), "p_value"] == pytest.approx(stats.wilcoxon(rounded[rounded != 0]).pvalue)


def test_randomisation_test_is_exact_for_small_c():
    x = DELTA[:12]
    exact = stats.permutation_test((x,), np.mean, permutation_type="samples", n_resamples=np.inf).pvalue
    assert inf.randomisation_test(x[None, :], samples=10_000)[0] == pytest.approx(exact)
    flips, is_exact = inf.sign_flips(12, 10_000, np.random.default_rng(0))
    assert is_exact and len(flips) == 4096 and len({tuple(f) for f in flips}) == 4096


@pytest.mark.parametrize("topics, samples", [(12, 10_000), (40, 3_000)])  # exact enumeration, then sampled flips
def test_risk_randomisation_over_the_alpha_grid_equals_the_test_at_each_alpha(topics, samples):
    rng = np.random.default_rng(topics)
    delta = np.round(rng.normal(0, 0.2, (7, topics)), 2)  # rounded: ties in |Δ| and zeros, as real scores give
    delta[3] = 0.0  # a system identical to the baseline
    delta[4] = np.abs(delta[4])  # one that never loses
    alphas = [0, 1, 2.5, 10]
    x = risk_adjusted(delta, alphas)
    assert np.array_equal(
        inf.risk_randomisation_test(delta, alphas, samples, seed=5), inf.randomisation_test(x, samples, seed=5)
    )


@pytest.mark.parametrize("correction, method", [("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")])
def test_corrections_match_statsmodels(correction, method):
    rng = np.random.default_rng(8)
    matrix = pd.DataFrame(rng.random((6, 25)), index=list("abcdef"))
    table = inf.tests_table(matrix, "a", [0, 2], correction=correction, samples=2_000)
    for (_, _), group in table.groupby(["test", "alpha"]):
        assert group["p_adjusted"].tolist() == pytest.approx(multipletests(group["p_value"], method=method)[1])


def test_bonferroni_widens_ci_levels():
    table = inf.bootstrap_table(
        pd.DataFrame(np.random.default_rng(1).random((5, 20))),
        0,
        [0],
        levels=[0.95],
        samples=1_000,
        correction="bonferroni",
    )
    assert table["adjusted_level"].unique().tolist() == pytest.approx([1 - 0.05 / 4])
    assert corrections.adjusted_levels([0.95], "holm", 4).tolist() == [0.95]


def test_memory_bounded_chunks_give_same_result():
    x = np.random.default_rng(2).random((3, 7, 40))
    counts = inf.resample_counts(40, 3_000, np.random.default_rng(1))
    whole = inf.bootstrap_moments(x, counts)[0]
    chunked = inf.bootstrap_moments(x, counts, chunk=2)[0]
    np.testing.assert_allclose(whole, chunked)


def test_diagnostics_and_effect_size():
    table = inf.diagnostics_table(MATRIX, "b", [0, 4]).set_index("alpha")
    x0 = DELTA
    assert table.loc[0.0, "d_z"] == pytest.approx(x0.mean() / x0.std(ddof=1))
    assert table.loc[4.0, "skewness"] == pytest.approx(stats.skew(risk_adjusted(DELTA, [4])[0], bias=False))
    assert table.loc[0.0, "shapiro_p"] == pytest.approx(stats.shapiro(x0).pvalue)


def test_tukey_hsd_matches_two_way_anova(cache_dir):
    rng = np.random.default_rng(4)
    matrix = pd.DataFrame(rng.random((4, 30)) + np.array([[0], [0.1], [0.3], [0]]), index=list("abcd"))
    table = inf.tukey_hsd(matrix, "a", [0])
    x = matrix.to_numpy()
    resid = x - x.mean(1, keepdims=True) - x.mean(0, keepdims=True) + x.mean()
    mse = (resid**2).sum() / (3 * 29)
    row = table[(table["system_a"] == "c") & (table["system_b"] == "d")].iloc[0]
    q = abs(row["diff"]) / np.sqrt(mse / 30)
    assert row["p_value"] == pytest.approx(stats.studentized_range.sf(q, 4, 87), abs=2e-4)
    assert row["significant"] and len(table) == 6


def test_rbo_bounds():
    low, residual = rankings.rbo(list("abcdef"), list("abcdef"))
    assert low + residual == pytest.approx(1.0)
    low2, _ = rankings.rbo(list("abcdef"), list("fedcba"))
    assert low2 < low
    disjoint, res = rankings.rbo(list("abc"), list("xyz"))
    assert disjoint == 0 and 0 < res < 1
    table = rankings.rbo_table({"mean": {0.0: list("abc")}, "urisk": {0.0: list("acb")}})
    assert table.columns.tolist() == ["alpha", "a", "b", "rbo_min", "rbo_residual"]


def test_mixed_closed_form_equals_statsmodels():
    rng = np.random.default_rng(9)
    topic = rng.normal(0, 0.2, 40)
    matrix = pd.DataFrame(
        np.clip(0.4 + topic + rng.normal(0, 0.1, (5, 40)) + np.arange(5)[:, None] * 0.03, 0, 1), index=list("abcde")
    )
    fast = mixed.mixed_systems(matrix, "a", [0, 1])
    slow = mixed.mixed_systems(matrix, "a", [0, 1], method="statsmodels")
    np.testing.assert_allclose(fast["effect"], slow["effect"], atol=1e-8)
    np.testing.assert_allclose(fast["se"], slow["se"], atol=1e-4)
    assert fast.columns.tolist() == mixed.SYSTEM_EFFECT_COLUMNS


def test_threads_are_the_callers_choice_and_do_not_change_intervals():
    x = np.random.default_rng(3).normal(size=(2500, 12))  # 3 chunks of 1,000 rows at 1,000 resamples
    counts = inf.resample_counts(12, 1000, np.random.default_rng(1))
    one, three = (inf.confidence_intervals(x, [0.9, 0.99], counts, workers=w) for w in (1, 3))
    assert all(np.array_equal(one[m], three[m], equal_nan=True) for m in one)


@pytest.mark.parametrize("c", [5, 14, 51, 120])
def test_wilcoxon_equals_scipy_row_by_row(c):
    rng = np.random.default_rng(c)
    x = np.round(rng.normal(0.05, 0.3, (2, 30, c)), 2)  # ties and zeros
    x[0, :4] = 0
    x[1] = rng.normal(size=(30, c))  # no ties
    w_plus, p = inf.wilcoxon_test(x)
    for idx in np.ndindex(x.shape[:-1]):
        nonzero = x[idx][x[idx] != 0]
        if not len(nonzero):
            assert (w_plus[idx], p[idx]) == (0.0, 1.0)
            continue
        assert w_plus[idx] == stats.rankdata(np.abs(nonzero))[nonzero > 0].sum()
        assert p[idx] == pytest.approx(stats.wilcoxon(nonzero, zero_method="wilcox").pvalue, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("topics, samples", [(7, 1000), (6980, 40), (3, 5)])
def test_resamples_drawn_in_blocks_are_the_ones_drawn_at_once(topics, samples, monkeypatch):
    """Blocks of resamples (bounded memory for 6,980 topics) give exactly the former counts and sign vectors."""
    from riskreport.stats import bootstrap, resampling

    monkeypatch.setattr(resampling, "DRAWS_AT_ONCE", 2 * topics + 1)  # several blocks, the last one short
    rng = np.random.default_rng(11)
    draws = rng.integers(0, topics, size=(samples, topics))
    cells = (np.arange(samples)[:, None] * topics + draws).reshape(-1)
    at_once = np.bincount(cells, minlength=samples * topics).reshape(samples, topics).astype(np.float64)
    assert np.array_equal(bootstrap.resample_counts(topics, samples, np.random.default_rng(11)), at_once)
    flips = np.random.default_rng(5).choice([-1.0, 1.0], size=(samples, topics))
    if 2**topics > samples:
        assert np.array_equal(inf.sign_flips(topics, samples, np.random.default_rng(5))[0], flips)
    x = np.random.default_rng(2).normal(size=(3, topics))
    counts = bootstrap.resample_counts(topics, samples, np.random.default_rng(11))
    shared = bootstrap.bootstrap_moments(x, counts, weights=bootstrap.resample_weights(counts))
    assert all(np.array_equal(a, b) for a, b in zip(shared, bootstrap.bootstrap_moments(x, counts)))
    drawn = bootstrap.drawn_weights(topics, samples, np.random.default_rng(11))  # without the counts held
    assert np.array_equal(drawn, bootstrap.resample_weights(counts)) and drawn.flags.c_contiguous
