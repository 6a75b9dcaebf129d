"""The Jayasinghe et al. 2014; docs/measures/nondeterministic.md mixed-effects model: exact fast path against the algebra and statsmodels MixedLM, verdicts, per-instance risk."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from riskreport.errors import ParameterError, RiskReportError
from riskreport.stats import instances, mixed, reml
from riskreport.stats.risk import risk_table


def design(
    k1: int,
    k2: int,
    n_topics: int,
    seed: int,
    topic=0.03,
    interaction=0.005,
    instance=0.0003,
    residual=0.004,
    effect=0.02,
) -> tuple[np.ndarray, np.ndarray]:
    """Two instances x topics matrices simulated from the Jayasinghe et al. 2014; docs/measures/nondeterministic.md model (a single instance has no instance effect)."""
    rng = np.random.default_rng(seed)
    t = rng.normal(0, np.sqrt(topic), n_topics)
    out = []
    for shift, k in ((effect, k1), (0.0, k2)):
        s = rng.normal(0, np.sqrt(instance), (k, 1)) if k > 1 else np.zeros((1, 1))
        out.append(
            0.4
            + shift
            + t
            + rng.normal(0, np.sqrt(interaction), n_topics)
            + s
            + rng.normal(0, np.sqrt(residual), (k, n_topics))
        )
    return out[0], out[1]


def tidy(challenger: np.ndarray, baseline: np.ndarray) -> pd.DataFrame:
    rows = [
        (name, str(m + 1), str(n + 1), value)
        for name, y in (("new", challenger), ("old", baseline))
        for (m, n), value in np.ndenumerate(y)
    ]
    return pd.DataFrame(rows, columns=["system", "instance", "topic", "score"])


def dense_reml(challenger, baseline, theta):
    """REML log-likelihood, GLS effect and its SE from the full covariance matrix (the textbook formulas)."""
    k1, n_topics = challenger.shape
    k2 = baseline.shape[0]
    y = np.concatenate([challenger.ravel(), baseline.ravel()])
    system = np.r_[np.zeros(challenger.size), np.ones(baseline.size)].astype(int)
    topic = np.r_[np.tile(np.arange(n_topics), k1), np.tile(np.arange(n_topics), k2)]
    instance = np.r_[np.repeat(np.arange(k1), n_topics), k1 + np.repeat(np.arange(k2), n_topics)]
    random_instance = np.r_[np.full(challenger.size, k1 > 1), np.full(baseline.size, k2 > 1)]
    same = lambda v: v[:, None] == v[None, :]  # noqa: E731
    a, b, s, e = theta
    v = (
        a * same(topic)
        + b * (same(topic) & same(system))
        + s * (same(instance) & np.outer(random_instance, random_instance))
        + e * np.eye(len(y))
    )
    x = np.c_[np.ones_like(y), 1.0 - system]
    vi = np.linalg.inv(v)
    xtvx = x.T @ vi @ x
    beta = np.linalg.solve(xtvx, x.T @ vi @ y)
    r = y - x @ beta
    loglik = -0.5 * (np.linalg.slogdet(v)[1] + np.linalg.slogdet(xtvx)[1] + r @ vi @ r)
    return loglik, beta[1], np.sqrt(np.linalg.inv(xtvx)[1, 1])


@pytest.mark.parametrize("k1,k2,n_topics", [(3, 1, 6), (1, 4, 5), (4, 3, 5), (2, 2, 4), (1, 1, 7)])
def test_strata_likelihood_is_the_exact_reml_likelihood(k1, k2, n_topics):
    challenger, baseline = design(k1, k2, n_topics, seed=k1 * 10 + k2)
    strata = reml.strata(challenger, baseline)
    offsets = []
    for theta in np.random.default_rng(0).uniform(0.001, 0.05, (4, 4)):
        loglik, beta, se = dense_reml(challenger, baseline, theta)
        offsets.append(loglik + 0.5 * reml.reml_objective(theta, strata)[0])
        assert beta == pytest.approx(challenger.mean() - baseline.mean(), abs=1e-12)  # GLS = difference of means
        fit_var = (
            theta[2] * ((k1 > 1) / k1 + (k2 > 1) / k2)
            + 2 * theta[1] / n_topics
            + theta[3] * (1 / k1 + 1 / k2) / n_topics
        )
        assert se == pytest.approx(np.sqrt(fit_var), rel=1e-10)
    assert np.ptp(offsets) < 1e-9  # equal up to a constant


def test_gradient_is_analytic():
    strata = reml.strata(*design(5, 2, 12, seed=3))
    theta = np.array([0.02, 0.004, 0.0005, 0.003])
    _, grad = reml.reml_objective(theta, strata)
    for i in range(4):
        step = np.zeros(4)
        step[i] = 1e-8
        numeric = (reml.reml_objective(theta + step, strata)[0] - reml.reml_objective(theta - step, strata)[0]) / 2e-8
        assert grad[i] == pytest.approx(numeric, rel=1e-5, abs=1e-3)


@pytest.mark.parametrize("seed", [1, 2])
def test_closed_form_equals_the_optimiser(seed):
    strata = reml.strata(*design(6, 6, 40, seed=seed))
    closed = reml.anova_estimates(strata)
    assert closed is not None
    np.testing.assert_allclose(reml.reml_variances(strata, closed_form=False), closed, rtol=1e-6, atol=1e-10)


DESIGNS = [  # (k1, k2, topics, seed): deterministic baseline or challenger, equal and unequal instance counts
    (10, 1, 50, 1),
    (1, 6, 30, 4),
    (5, 5, 30, 2),
    (8, 3, 40, 3),
    (20, 20, 100, 11),
]


@pytest.mark.parametrize("k1,k2,n_topics,seed", DESIGNS)
def test_fast_path_equals_statsmodels_mixedlm(k1, k2, n_topics, seed):
    scores = tidy(*design(k1, k2, n_topics, seed))
    fast = mixed.fit_pair(scores, "new", "old")
    reference = mixed.fit_pair(scores, "new", "old", method="mixedlm")
    assert (fast.method, reference.method) == (mixed.BALANCED, mixed.MIXEDLM)
    assert fast.n_instances == reference.n_instances == (k1, k2) and fast.df == n_topics - 1
    assert fast.effect == pytest.approx(reference.effect, abs=1e-10)
    assert fast.se == pytest.approx(reference.se, abs=1e-4, rel=1e-3)
    for component in mixed.COMPONENTS:
        assert fast.variances[component] == pytest.approx(reference.variances[component], abs=1e-4, rel=1e-2), component
    if k1 == 1 or k2 == 1:
        assert fast.variances["instance"] > 0  # estimated from the non-deterministic side alone


def _objective(fit, strata):
    return reml.reml_objective(
        np.array([fit.variances[c] for c in ("topic", "topic_system", "instance", "residual")]), strata
    )[0]


def test_boundary_estimate_is_zero_and_matches_mixedlm():
    challenger, baseline = design(4, 4, 30, seed=2, instance=0.0)
    strata = reml.strata(challenger, baseline)
    assert reml.anova_estimates(strata) is None  # ANOVA instance estimate < 0: the bounded optimiser
    scores = tidy(challenger, baseline)
    fast, reference = mixed.fit_pair(scores, "new", "old"), mixed.fit_mixedlm(scores, "new", "old")
    assert fast.variances["instance"] == 0.0
    assert fast.se == pytest.approx(reference.se, abs=1e-4)
    for component in mixed.COMPONENTS:
        assert fast.variances[component] == pytest.approx(reference.variances[component], abs=1e-4)
    assert _objective(fast, strata) <= _objective(reference, strata) + 1e-9


def test_fast_path_beats_a_mixedlm_fit_that_fails_to_converge():
    challenger, baseline = design(4, 4, 30, seed=0, instance=0.0)
    strata = reml.strata(challenger, baseline)
    scores = tidy(challenger, baseline)
    fast, reference = mixed.fit_pair(scores, "new", "old"), mixed.fit_mixedlm(scores, "new", "old")
    assert "converge" in reference.note  # the reference says so ("did not / failed to converge", by version) ...
    assert _objective(fast, strata) < _objective(reference, strata) - 0.1  # ... and the exact fit is the REML optimum


def test_single_instances_reduce_to_the_paired_t_test():
    challenger, baseline = design(1, 1, 25, seed=5)
    fit = mixed.fit_pair(tidy(challenger, baseline), "new", "old")
    paired = stats.ttest_rel(challenger[0], baseline[0])
    assert fit.t == pytest.approx(paired.statistic, rel=1e-6)
    assert fit.p_value == pytest.approx(paired.pvalue, rel=1e-5)
    assert np.isnan(fit.variances["residual"]) and "paired t-test" in fit.note


def test_incomplete_design_falls_back_to_mixedlm_and_says_so():
    scores = tidy(*design(4, 1, 20, seed=6))
    holes = scores.drop(index=[3, 17, 40])
    fit = mixed.fit_pair(holes, "new", "old")
    assert fit.method == mixed.MIXEDLM and "incomplete design (3 of 100 instance–topic cells" in fit.note
    assert np.isfinite(fit.effect) and fit.se > 0
    with pytest.raises(RiskReportError, match="complete design"):
        mixed.fit_pair(holes, "new", "old", method="balanced")
    table = mixed.mixed_table(holes, "old")
    assert table.loc[0, "method"] == mixed.MIXEDLM and table.loc[0, "note"].startswith("incomplete design")


def test_mixed_table_columns_and_intervals():
    scores = tidy(*design(6, 1, 30, seed=7))
    table = mixed.mixed_table(scores, "old", "nDCG@10", sig_level=0.05, delta0=0.01)
    assert list(table.columns[: len(mixed.MIXED_COLUMNS)]) == mixed.MIXED_COLUMNS
    row = table.iloc[0]
    critical = stats.t.ppf(0.975, 29)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        (row["effect"] - critical * row["se"], row["effect"] + critical * row["se"])
    )
    assert row["tost_high"] - row["effect"] == pytest.approx(stats.t.ppf(0.95, 29) * row["se"])
    assert row["p_value"] == pytest.approx(2 * stats.t.sf(abs(row["effect"] / row["se"]), 29))
    assert sum(row[f"share_{c}"] for c in mixed.COMPONENTS) == pytest.approx(1.0)
    assert row["var_instance"] > 0 and row["df"] == 29 and row["verdict"] in mixed.VERDICTS


@pytest.mark.parametrize(
    "effect,se,expected",
    [
        (0.001, 0.002, "equivalent"),  # 90% interval inside (−0.01, 0.01)
        (0.008, 0.001, "equivalent"),  # significantly > 0 but inside the margin: still equivalent
        (0.05, 0.01, "better"),  # 95% interval above 0
        (-0.05, 0.01, "worse"),  # 95% interval below 0
        (0.008, 0.009, "not_worse"),  # 90% lower end > −δ0, 95% interval straddles 0
        (-0.005, 0.02, "inconclusive"),  # straddles −δ0
        (0.0, float("nan"), "inconclusive"),
    ],
)
def test_verdicts(effect, se, expected):
    assert mixed.equivalence_verdicts([effect], [se], [49], 0.05, 0.01)[0] == expected


@settings(max_examples=200, deadline=None)
@given(
    effect=st.floats(-0.1, 0.1),
    se=st.floats(1e-4, 0.05),
    df=st.integers(2, 200),
    sig=st.sampled_from([0.01, 0.05, 0.1]),
    delta0=st.floats(0.001, 0.05),
)
def test_verdicts_follow_the_intervals(effect, se, df, sig, delta0):
    verdict = mixed.equivalence_verdicts([effect], [se], [df], sig, delta0)[0]
    lo, hi = effect + np.array([-1, 1]) * stats.t.ppf(1 - sig, df) * se
    low, high = effect + np.array([-1, 1]) * stats.t.ppf(1 - sig / 2, df) * se
    equivalent = -delta0 < lo and hi < delta0
    assert (verdict == "equivalent") == equivalent
    assert (verdict == "better") == (not equivalent and low > 0)
    assert (verdict == "worse") == (not equivalent and high < 0)
    assert (verdict == "not_worse") == (not equivalent and not low > 0 and not high < 0 and lo > -delta0)


def test_parameters_are_checked():
    scores = tidy(*design(3, 1, 10, seed=8))
    with pytest.raises(ParameterError, match="delta0"):
        mixed.mixed_table(scores, "old", delta0=0)
    with pytest.raises(ParameterError, match="method"):
        mixed.fit_pair(scores, "new", "old", method="fast")
    with pytest.raises(RiskReportError, match="no instance scores"):
        mixed.fit_pair(scores, "nope", "old")


def test_single_instance_tests_count_significant_instances():
    challenger, baseline = design(8, 1, 30, seed=9, effect=0.03, instance=0.002)
    tests = instances.single_instance_tests(tidy(challenger, baseline), "old")
    p = np.array([stats.ttest_rel(row, baseline[0]).pvalue for row in challenger])
    effects = challenger.mean(axis=1) - baseline.mean()
    row = tests.iloc[0]
    assert row["instances"] == 8 and row["effect_min"] == pytest.approx(effects.min())
    assert row["share_p05"] == pytest.approx(np.mean(p < 0.05)) and row["share_p10"] == pytest.approx(np.mean(p < 0.10))
    assert row["better_p05"] == int(((p < 0.05) & (effects > 0)).sum())
    assert 0 < row["share_p10"] < 1  # this design makes single-instance verdicts disagree


def test_instance_risk_is_risk_table_per_instance_and_pooled_agreement():
    challenger, baseline = design(5, 3, 20, seed=10, effect=0.0)
    scores = tidy(challenger, baseline)
    alphas = [0.0, 1.0, 5.0]
    per_instance = instances.instance_risk(scores, "old", alphas, "AP", sig_level=0.05)
    assert list(per_instance.columns[: len(instances.INSTANCE_COLUMNS)]) == instances.INSTANCE_COLUMNS
    assert len(per_instance) == 5 * 3
    pooled_baseline = baseline.mean(axis=0)  # a non-deterministic baseline enters as its mean
    matrix = pd.DataFrame(np.vstack([challenger, pooled_baseline]), index=[*"12345", "b"])
    expected = risk_table(matrix, "b", alphas, sig_level=0.05)
    merged = per_instance.merge(expected, left_on=["instance", "alpha"], right_on=["system", "alpha"])
    np.testing.assert_allclose(merged["urisk_x"], merged["urisk_y"])
    np.testing.assert_allclose(merged["trisk_x"], merged["trisk_y"])
    assert (per_instance["significant"] == (per_instance["p_value"] < 0.05)).all()
    agreement = instances.risk_agreement(scores, "old", alphas, "AP")
    pooled = risk_table(pd.DataFrame([challenger.mean(axis=0), pooled_baseline], index=["new", "b"]), "b", alphas)
    assert agreement["pooled_urisk"].to_numpy() == pytest.approx(pooled["urisk"].to_numpy())
    for row in agreement.itertuples():
        verdicts = per_instance.loc[per_instance["alpha"] == row.alpha, "verdict"]
        assert row.share_differs == pytest.approx((verdicts != row.pooled_verdict).mean())
        assert row.risk + row.reward + row.inconclusive == 5
