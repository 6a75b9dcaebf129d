"""Bootstrap CIs, part by part against their definitions (docs/measures/inference.md).

test_inference compares whole BCa intervals with scipy within Monte Carlo error, which a 20 % error
in the acceleration passes; these tests check each part exactly: the acceleration against a direct
leave-one-out jackknife, z0 against a direct count, the corrected levels and limits against the
formula, and the resample counts and moments against explicit resamples.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from riskreport.errors import UnknownNameError
from riskreport.stats import bootstrap as bs
from riskreport.stats.risk import risk_adjusted


def jackknife_acceleration(x: np.ndarray) -> float:
    """a = Σ (θ̄₍.₎ − θ̂₍ᵢ₎)³ / (6 (Σ (θ̄₍.₎ − θ̂₍ᵢ₎)²)^{3/2}), θ̂₍ᵢ₎ the mean without topic i (a loop)."""
    leave_one_out = np.array([np.delete(x, i).mean() for i in range(len(x))])
    influence = leave_one_out.mean() - leave_one_out
    return float((influence**3).sum() / (6 * ((influence**2).sum()) ** 1.5))


def test_acceleration_of_a_hand_example():
    # x = (0, 0, 3): θ̂₍ᵢ₎ = (1.5, 1.5, 0), influence (−0.5, −0.5, 1): a = 0.75 / (6 · 1.5^1.5) = 1 / (6^1.5)
    assert bs.acceleration(np.array([0.0, 0.0, 3.0])) == pytest.approx(6**-1.5, rel=1e-14)
    assert bs.acceleration(np.array([3.0, 0.0, 0.0])) == pytest.approx(6**-1.5, rel=1e-14)  # order-free
    assert bs.acceleration(np.array([0.0, 3.0, 3.0])) == pytest.approx(-(6**-1.5), rel=1e-14)  # mirrored: −a


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_acceleration_equals_a_direct_jackknife(seed):
    rng = np.random.default_rng(seed)
    x = rng.exponential(1.0, size=(4, 23)) * rng.choice([-1, 1], size=(4, 1))  # skewed either way
    a = bs.acceleration(x)
    assert a.shape == (4,)
    assert a.tolist() == pytest.approx([jackknife_acceleration(row) for row in x], rel=1e-12)
    # for the mean the influence is (x_i − x̄)/(c − 1), so a is the sample skewness / (6 √c)
    assert a.tolist() == pytest.approx((stats.skew(x, axis=-1) / (6 * np.sqrt(x.shape[-1]))).tolist(), rel=1e-12)


def test_acceleration_of_constant_rows_is_zero():
    assert bs.acceleration(np.array([[2.0, 2.0, 2.0], [0.0, 0.0, 1.0]])).tolist() == [
        0.0,
        pytest.approx(jackknife_acceleration(np.array([0.0, 0.0, 1.0]))),
    ]


def test_bias_correction_is_the_normal_quantile_of_a_direct_count():
    means = np.array([[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], [1.0, 1.0, 2.0, 3.0, 0.0, 1.0, 5.0, 1.0]])
    theta = np.array([[0.45], [1.0]])
    below = [sum(m < t for m in row) for row, t in zip(means, theta[:, 0])]  # 4 and 1 (ties are not below)
    assert below == [4, 1]
    assert bs.bias_correction(means, theta).tolist() == pytest.approx(
        [stats.norm.ppf(4 / 8), stats.norm.ppf(1 / 8)], rel=1e-14, abs=1e-14
    )


def test_bias_correction_stays_finite_at_the_extremes():
    means = np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]])
    z0 = bs.bias_correction(means, np.array([[0.0], [9.0]]))  # none below; all below
    assert z0.tolist() == pytest.approx([stats.norm.ppf(0.5 / 4), stats.norm.ppf(1 - 0.5 / 4)], rel=1e-14)


def bca_by_the_formula(x: np.ndarray, counts: np.ndarray, level: float) -> list[float]:
    """BCa limits of the mean written out: z0 by counting, a by the jackknife loop, α̃ per tail, np.percentile."""
    means = counts @ x / len(x)
    z0 = stats.norm.ppf(np.mean(means < x.mean()))
    a = jackknife_acceleration(x)
    limits = []
    for q in ((1 - level) / 2, (1 + level) / 2):
        z = z0 + stats.norm.ppf(q)
        limits.append(float(np.percentile(means, 100 * stats.norm.cdf(z0 + z / (1 - a * z)))))
    return limits


@pytest.mark.parametrize("level", [0.8, 0.95])
def test_bca_limits_equal_the_formula(level):
    rng = np.random.default_rng(11)
    x = rng.exponential(1.0, size=(3, 17)) - 1.0  # skewed: a ≈ 0.03, so a 20 % error moves the limits
    x[1] = -x[1]
    counts = bs.resample_counts(17, 4_000, np.random.default_rng(4))
    ci = bs.confidence_intervals(x, [level], counts, methods=("bca",))["bca"][:, 0]
    for row, interval in zip(x, ci):
        assert interval.tolist() == pytest.approx(bca_by_the_formula(row, counts, level), rel=1e-10, abs=1e-12)


def test_resample_counts_are_draws_with_replacement():
    counts = bs.resample_counts(9, 50, np.random.default_rng(3))
    draws = np.random.default_rng(3).integers(0, 9, size=(50, 9))
    assert counts.shape == (50, 9) and (counts.sum(axis=1) == 9).all()
    assert counts.tolist() == [np.bincount(row, minlength=9).tolist() for row in draws]


@pytest.mark.parametrize("chunk", [None, 1])
def test_bootstrap_moments_equal_explicit_resamples(chunk):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 3, 8))
    draws = rng.integers(0, 8, size=(30, 8))
    counts = np.array([np.bincount(row, minlength=8) for row in draws], dtype=float)
    means, ses = bs.bootstrap_moments(x, counts, chunk=chunk)
    assert means.shape == ses.shape == (2, 3, 30)
    resampled = x[..., draws]  # (2, 3, 30, 8)
    assert means == pytest.approx(resampled.mean(axis=-1), rel=1e-12)
    assert ses == pytest.approx(resampled.std(axis=-1, ddof=1) / np.sqrt(8), rel=1e-9, abs=1e-12)
    only_means, none = bs.bootstrap_moments(x, counts, chunk=chunk, with_se=False)
    assert none is None and only_means == pytest.approx(means, rel=1e-14)


def test_ci_verdict_is_strict_at_zero():
    low = [-0.5, -0.1, 0.0, 0.2, 0.5, -0.3, 1.5]
    high = [-0.2, 0.1, 0.3, 0.5, 2.0, 0.0, 2.5]
    assert bs.ci_verdict(low, high).tolist() == [
        "risk",
        "inconclusive",
        "inconclusive",
        "reward",
        "reward",
        "inconclusive",
        "reward",
    ]


def test_table_and_distribution_defaults_are_the_documented_resamples():
    """10,000 resamples from seed 2026, shared by `bootstrap_table` and `bootstrap_distribution`."""
    rng = np.random.default_rng(9)
    matrix = pd.DataFrame(rng.random((3, 12)), index=["b", "s", "t"])
    x = risk_adjusted((matrix.loc["s"] - matrix.loc["b"]).to_numpy(), [2.0])[0]
    counts = bs.resample_counts(12, 10_000, np.random.default_rng(2026))
    expected = (counts @ x) / 12
    assert bs.bootstrap_distribution(matrix, "b", "s", 2.0) == pytest.approx(expected, rel=1e-12)
    table = bs.bootstrap_table(matrix, "b", [2.0], methods=("percentile",), levels=[0.9])
    row = table[table["system"] == "s"].iloc[0]
    assert [row["ci_low"], row["ci_high"]] == pytest.approx(np.percentile(expected, [5, 95]).tolist(), rel=1e-12)
    assert row["measure"] == "" and row["adjusted_level"] == 0.9  # Holm leaves the CI level alone
    with pytest.raises(UnknownNameError, match="Unknown system 'u'"):
        bs.bootstrap_distribution(matrix, "b", "u", 2.0)


def test_several_baselines_share_one_bonferroni_family():
    matrix = pd.DataFrame(np.random.default_rng(4).random((4, 10)), index=["a", "b", "c", "d"])
    table = bs.bootstrap_table(matrix, ["a", "b"], [0, 1], levels=[0.9], samples=200, correction="bonferroni")
    assert table.groupby("baseline")["system"].unique().map(sorted).to_dict() == {
        "a": ["b", "c", "d"],
        "b": ["a", "c", "d"],
    }
    assert table["adjusted_level"].unique().tolist() == pytest.approx([1 - 0.1 / 6])  # 3 challengers x 2 baselines
    assert table.index.equals(pd.RangeIndex(len(table)))
    alone = bs.bootstrap_table(matrix, "b", [0, 1], levels=[0.9], samples=200, correction="bonferroni", family=6)
    assert table[table["baseline"] == "b"].reset_index(drop=True).equals(alone)


def test_quantile_helpers_equal_numpy_percentiles():
    rng = np.random.default_rng(8)
    values = rng.normal(size=(3, 41))
    q = np.array([0.025, 0.5, 0.975])
    ordered = np.sort(values, axis=-1)
    expected = [np.percentile(row, 100 * qi) for row, qi in zip(values, q)]
    assert bs._quantiles(ordered, q).tolist() == pytest.approx(expected, rel=1e-13)
    assert bs._order_quantiles(values, [q, q[::-1]])[0].tolist() == pytest.approx(expected, rel=1e-13)
    with_nan = np.sort(np.where(rng.random((3, 41)) < 0.2, np.nan, values), axis=-1)  # NaNs sort last
    expected = [np.nanpercentile(row, 100 * qi) for row, qi in zip(with_nan, q)]
    assert bs._quantiles(with_nan, q).tolist() == pytest.approx(expected, rel=1e-13)
    outside = np.array([-0.5, 1.5, 0.0])  # clipped to the smallest and largest value
    assert bs._quantiles(ordered, outside).tolist() == [ordered[0, 0], ordered[1, -1], ordered[2, 0]]
    assert bs._order_quantiles(values, [outside])[0].tolist() == [ordered[0, 0], ordered[1, -1], ordered[2, 0]]


def test_order_quantiles_interpolate_between_the_two_largest_values():
    """q close to 1 with few resamples: the position falls between the last two order statistics."""
    values = np.random.default_rng(3).normal(size=(2, 10))
    q = np.array([0.995, 0.95])  # positions 8.955 and 8.55 of 0..9
    expected = [np.percentile(row, 100 * qi) for row, qi in zip(values, q)]
    assert bs._order_quantiles(values, [q])[0].tolist() == pytest.approx(expected, rel=1e-13)
    assert bs._quantiles(np.sort(values, axis=-1), q).tolist() == pytest.approx(expected, rel=1e-13)


def test_table_rows_match_their_alpha_system_and_level():
    rng = np.random.default_rng(12)
    matrix = pd.DataFrame(rng.random((4, 11)), index=["b", "s", "t", "u"])
    alphas, levels = [0.0, 2.0], [0.8, 0.95]
    table = bs.bootstrap_table(matrix, "b", alphas, levels=levels, samples=300, seed=3)
    assert table.index.equals(pd.RangeIndex(len(table)))
    counts = bs.resample_counts(11, 300, np.random.default_rng(3))
    x = risk_adjusted((matrix.loc[["s", "t", "u"]] - matrix.loc["b"]).to_numpy(), alphas)
    direct = bs.confidence_intervals(x, levels, counts)
    assert len(table) == len(direct) * 2 * 3 * 2
    for row in table.itertuples():
        a, s, level = alphas.index(row.alpha), ["s", "t", "u"].index(row.system), levels.index(row.level)
        assert [row.ci_low, row.ci_high] == pytest.approx(direct[row.method][a, s, level].tolist(), rel=1e-12)


def test_bootstrap_t_equals_its_definition():
    """[θ̂ − t*_(1−q/2)·SE, θ̂ − t*_(q/2)·SE], t* the quantiles of (θ* − θ̂)/SE* (resamples with SE* = 0 left out)."""
    rng = np.random.default_rng(6)
    x = np.round(rng.exponential(1.0, size=(2, 9)), 1)  # rounded: some resamples repeat one value (SE* = 0)
    counts = bs.resample_counts(9, 3_000, np.random.default_rng(2))
    ci = bs.confidence_intervals(x, [0.9], counts, methods=("bootstrap_t",))["bootstrap_t"][:, 0]
    for row, interval in zip(x, ci):
        resamples = [np.repeat(row, c.astype(int)) for c in counts]
        means = np.array([r.mean() for r in resamples])
        ses = np.array([r.std(ddof=1) / 3 for r in resamples])
        t_star = (means - row.mean())[ses > 0] / ses[ses > 0]
        se = row.std(ddof=1) / 3
        lo, hi = np.percentile(t_star, [5, 95])
        assert interval.tolist() == pytest.approx([row.mean() - hi * se, row.mean() - lo * se], rel=1e-9)


def test_many_workers_and_memory_chunks_leave_the_intervals_alone():
    x = np.random.default_rng(7).normal(size=(5, 8))
    counts = bs.resample_counts(8, 4_000, np.random.default_rng(1))
    one = bs.confidence_intervals(x, [0.9], counts)
    many = bs.confidence_intervals(x, [0.9], counts, workers=32)  # the memory budget, not 1 MB, sets the chunks
    assert all(np.array_equal(one[m], many[m]) for m in bs.CI_METHODS)


def test_intervals_keep_the_leading_shape_and_need_two_topics():
    counts = bs.resample_counts(2, 50, np.random.default_rng(0))
    two = bs.confidence_intervals(np.array([[[0.1, 0.4]] * 3] * 2), [0.8, 0.9], counts)
    assert sorted(two) == sorted(bs.CI_METHODS)
    assert all(ci.shape == (2, 3, 2, 2) and np.isfinite(ci).all() for ci in two.values())
    one = bs.confidence_intervals(np.zeros((4, 1)), [0.9], bs.resample_counts(1, 50, np.random.default_rng(0)))
    assert sorted(one) == sorted(bs.CI_METHODS)
    assert all(ci.shape == (4, 1, 2) and np.isnan(ci).all() for ci in one.values())
    only = bs.confidence_intervals(np.zeros((4, 1)), [0.9], counts[:, :1], methods=("bca",))
    assert list(only) == ["bca"]


# Without bootstrap-t no SE is needed, and the resample means are one product x @ weights; with it they are
# computed block by block as (weights @ x.T).T beside the squares. BLAS may sum the two products in another order
# (which depends on the machine and its threads): they agree to a few ulps (2.2e-16 was seen on a fresh clone),
# not bit for bit. 1e-12 is far below any digit a report prints and far above float64 rounding.
ACROSS_PRODUCTS = 1e-12


def test_each_method_alone_equals_its_part_of_all():
    x = np.random.default_rng(13).normal(size=(3, 10))
    counts = bs.resample_counts(10, 500, np.random.default_rng(2))
    every = bs.confidence_intervals(x, [0.8, 0.95], counts)
    for method in bs.CI_METHODS:
        alone = bs.confidence_intervals(x, [0.8, 0.95], counts, methods=(method,))
        assert list(alone) == [method]
        np.testing.assert_allclose(alone[method], every[method], rtol=ACROSS_PRODUCTS, atol=ACROSS_PRODUCTS)


def test_bootstrap_moments_in_chunks_of_more_rows_than_topics_and_few_topics():
    x = np.vstack([np.random.default_rng(3).normal(size=(5, 3)), np.full((1, 3), 0.1)])  # 6 rows, 3 topics
    draws = np.random.default_rng(4).integers(0, 3, size=(40, 3))
    counts = np.array([np.bincount(row, minlength=3) for row in draws], dtype=float)
    for chunk in (1, 4):
        means, ses = bs.bootstrap_moments(x, counts, chunk=chunk)
        assert means == pytest.approx(x[:, draws].mean(axis=-1), rel=1e-12)
        assert ses[:5] == pytest.approx(x[:5, draws].std(axis=-1, ddof=1) / np.sqrt(3), rel=1e-9)
        assert np.isfinite(ses[5]).all() and (ses[5] < 1e-7).all()  # a constant row: rounding never gives NaN
    draws = np.random.default_rng(4).integers(0, 7, size=(40, 7))
    counts = np.array([np.bincount(row, minlength=7) for row in draws], dtype=float)
    constant = bs.bootstrap_moments(np.full((1, 7), 0.55), counts)[1]  # E[x²] − E[x]² rounds below 0 here
    assert np.isfinite(constant).all() and (constant < 1e-7).all()
    two = bs.bootstrap_moments(np.array([[0.0, 1.0]]), np.array([[1.0, 1.0], [2.0, 0.0]]))[1]
    assert two[0].tolist() == pytest.approx([0.5, 0.0])  # sd of (0, 1) is 1/√2; SE = 1/2
    one = bs.bootstrap_moments(np.array([[0.3]]), np.array([[1.0], [1.0]]))
    assert one[0].tolist() == [[0.3, 0.3]] and np.isnan(one[1]).all()


def test_several_levels_equal_each_level_alone():
    x = np.random.default_rng(21).normal(size=(3, 9))
    counts = bs.resample_counts(9, 400, np.random.default_rng(5))
    both = bs.confidence_intervals(x, [0.8, 0.95], counts)
    for i, level in enumerate([0.8, 0.95]):
        alone = bs.confidence_intervals(x, [level], counts)
        assert all(np.array_equal(both[m][:, i], alone[m][:, 0]) for m in bs.CI_METHODS)


def test_bootstrap_t_leaves_out_resamples_without_spread_and_quantiles_of_one_value():
    x = np.array([[0.0, 0.0, 1.0]])  # a third of the resamples draw only zeros: SE* = 0, no t*
    counts = bs.resample_counts(3, 2_000, np.random.default_rng(8))
    ci = bs.confidence_intervals(x, [0.9], counts, methods=("bootstrap_t",))["bootstrap_t"][0, 0]
    resamples = [np.repeat(x[0], c.astype(int)) for c in counts]
    means, ses = np.array([r.mean() for r in resamples]), np.array([r.std(ddof=1) / np.sqrt(3) for r in resamples])
    t_star = (means - x.mean())[ses > 0] / ses[ses > 0]
    lo, hi = np.percentile(t_star, [5, 95])
    se = x.std(ddof=1) / np.sqrt(3)
    assert ci.tolist() == pytest.approx([x.mean() - hi * se, x.mean() - lo * se], rel=1e-9)
    one = np.array([[0.4, np.nan, np.nan], [np.nan, np.nan, np.nan]])  # one finite value; none
    assert bs._quantiles(one, np.array([0.9, 0.5]))[0] == 0.4
