"""The models' likelihoods on posterior draws (riskreport.bayes.modelling.likelihood) against their definitions, cell by cell:
the linear predictor summed by hand, the log-densities from scipy.stats with brms's parameterisations written out
here, and the replicates' distributions by Kolmogorov–Smirnov distances and point-mass frequencies (fixed seeds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from riskreport.bayes.modelling import likelihood, scores

MODELS = ("gaussian", "skew_normal", "zoib", "paired_gaussian", "paired_skew_normal", "zoib_rank")
D = 4  # draws


def cells(with_one=True):
    """Two systems × three topics, twice over, with scores at 0 and (unless `with_one`) at 1, and ranks."""
    y = np.array([0.0, 0.2, 0.5, 1.0 if with_one else 0.9, 0.7, 0.05, 0.3, 0.0, 0.95, 0.4, 0.6, 0.15])
    return scores.BayesData(
        y=y,
        system=np.array([0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1]),
        topic=np.array([0, 1, 2, 0, 1, 2, 2, 1, 0, 1, 2, 0]),
        systems=("a", "b"),
        topics=("1", "2", "3"),
        rank=np.array([1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 5.0, 4.0, 6.0, 4.0, 6.0, 5.0]),
    )


def draws():
    """Per-draw parameters that differ between draws, so that a draw's value cannot stand in for another's."""
    rng = np.random.default_rng(5)
    return {
        "b": rng.normal(0, 0.5, D),
        "r_sys": rng.normal(0, 0.4, (D, 2)),
        "r_top": rng.normal(0, 0.4, (D, 3)),
        "beta": np.array([0.3, -0.2, 0.1, 0.5]),
        "sigma": np.array([0.3, 0.5, 0.2, 1.1]),
        "alpha": np.array([2.0, -1.5, 0.0, 4.0]),
        "phi": np.array([8.0, 2.5, 20.0, 0.7]),
        "zoi": np.array([0.1, 0.3, 0.05, 0.6]),
        "coi": np.array([0.4, 0.2, 0.7, 0.5]),
        "zi": np.array([0.2, 0.05, 0.4, 0.3]),
    }


def eta_by_hand(model, data, d, s, n):
    """η of draw s at cell n, from the model's definition (docs/measures/bayesian.md)."""
    if model.startswith("paired"):
        return d["b"][s]
    eta = d["b"][s] + d["r_sys"][s, data.system[n]] + d["r_top"][s, data.topic[n]]
    if model == "zoib_rank":
        eta += d["beta"][s] * (data.rank[n] - data.rank.mean())
    return eta


def brms_skew_normal(mu, sigma, lam):
    """(ξ, ω): brms's skew normal with mean μ and sd σ (Bürkner 2017), written out."""
    delta = lam / math.sqrt(1 + lam * lam)
    omega = sigma / math.sqrt(1 - 2 * delta * delta / math.pi)
    return mu - omega * delta * math.sqrt(2 / math.pi), omega


def log_density_by_hand(model, y, eta, d, s):
    if model in ("gaussian", "paired_gaussian"):
        return stats.norm.logpdf(y, eta, d["sigma"][s])
    if model in ("skew_normal", "paired_skew_normal"):
        xi, omega = brms_skew_normal(eta, d["sigma"][s], d["alpha"][s])
        return stats.skewnorm.logpdf(y, d["alpha"][s], xi, omega)
    mu, phi = 1 / (1 + math.exp(-eta)), d["phi"][s]
    beta = stats.beta.logpdf(y, mu * phi, (1 - mu) * phi)
    if model == "zoib":
        zoi, coi = d["zoi"][s], d["coi"][s]
        return {0.0: math.log(zoi * (1 - coi)), 1.0: math.log(zoi * coi)}.get(y, math.log(1 - zoi) + beta)
    return math.log(d["zi"][s]) if y == 0 else math.log(1 - d["zi"][s]) + beta


@pytest.mark.parametrize("model", MODELS)
def test_linear_predictor_and_log_likelihood_cell_by_cell(model):
    data, d = cells(with_one=model != "zoib_rank"), draws()
    eta = likelihood.linear_predictor(model, data, d)
    loglik = likelihood.log_likelihood(model, data, d)
    assert eta.shape == loglik.shape == (D, data.n)
    for s in range(D):
        for n in range(data.n):
            expected = eta_by_hand(model, data, d, s, n)
            assert eta[s, n] == pytest.approx(expected, rel=1e-13, abs=1e-15)
            assert loglik[s, n] == pytest.approx(log_density_by_hand(model, data.y[n], expected, d, s), rel=1e-11)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("index", [slice(2, 9), np.array([7, 0, 3, 11]), np.array([5])])
def test_a_subset_of_observations_is_those_columns(model, index):
    """`index` picks observations: the columns of the whole result, in its order (the rank covariate still centred
    on every observation's mean rank)."""
    data, d = cells(with_one=model != "zoib_rank"), draws()
    whole = likelihood.log_likelihood(model, data, d)
    np.testing.assert_array_equal(likelihood.log_likelihood(model, data, d, index), whole[:, index])
    eta = likelihood.linear_predictor(model, data, d, index)
    np.testing.assert_array_equal(eta, likelihood.linear_predictor(model, data, d)[:, index])
    assert likelihood.predict(model, data, d, np.random.default_rng(0), index).shape == eta.shape


@pytest.mark.parametrize("lam", [-4.0, -0.5, 0.0, 1.0, 3.0])
def test_skew_normal_location_has_the_brms_mean_and_sd(lam):
    mu, sigma = 0.3, 0.2
    xi, omega, delta = likelihood.skew_normal_location(mu, sigma, lam)
    assert delta == pytest.approx(lam / math.sqrt(1 + lam**2), rel=1e-14, abs=1e-16)
    assert (xi, omega) == pytest.approx(brms_skew_normal(mu, sigma, lam), rel=1e-14)
    mean, var = stats.skewnorm.stats(lam, loc=xi, scale=omega, moments="mv")
    assert (mean, math.sqrt(var)) == pytest.approx((mu, sigma), rel=1e-12)


def one_cell_draws(size, **parameters):
    """`size` draws of one observation with η = b and the family parameters held fixed."""
    d = {name: np.full(size, value) for name, value in parameters.items()}
    d["r_sys"], d["r_top"] = np.zeros((size, 1)), np.zeros((size, 1))
    return d


ONE = scores.BayesData(
    y=np.array([0.5]), system=np.zeros(1, int), topic=np.zeros(1, int), systems=("a",), topics=("1",)
)
SIZE = 100_000


def same_cells(n: int) -> scores.BayesData:
    """`n` observations of one system on one topic at rank 1 (the same η for every cell)."""
    return scores.BayesData(
        y=np.full(n, 0.5),
        system=np.zeros(n, int),
        topic=np.zeros(n, int),
        systems=("a",),
        topics=("1",),
        rank=np.ones(n),
    )


KS = 0.01  # the Kolmogorov–Smirnov distance of 100,000 draws from their own distribution is below 0.0055 at p = 0.999


def ks_distance(sample, cdf):
    return stats.kstest(sample, cdf).statistic


def test_gaussian_replicates_are_normal():
    y = likelihood.predict("gaussian", ONE, one_cell_draws(SIZE, b=0.4, sigma=0.3), np.random.default_rng(1))
    assert ks_distance(y.ravel(), stats.norm(0.4, 0.3).cdf) < KS


@pytest.mark.parametrize("lam", [-4.0, 2.0])
def test_skew_normal_replicates_follow_the_brms_skew_normal(lam):
    d = one_cell_draws(SIZE, b=0.3, sigma=0.2, alpha=lam)
    y = likelihood.predict("skew_normal", ONE, d, np.random.default_rng(2))
    xi, omega = brms_skew_normal(0.3, 0.2, lam)
    assert ks_distance(y.ravel(), stats.skewnorm(lam, xi, omega).cdf) < KS


def test_zoib_replicates_are_the_mixture():
    """P(0) = zoi (1 − coi), P(1) = zoi coi, and Beta(μφ, (1 − μ)φ) in between, μ = logistic(η)."""
    d = one_cell_draws(SIZE, b=0.8, phi=6.0, zoi=0.3, coi=0.25)
    y = likelihood.predict("zoib", ONE, d, np.random.default_rng(3)).ravel()
    assert (y == 0).mean() == pytest.approx(0.3 * 0.75, abs=0.005)
    assert (y == 1).mean() == pytest.approx(0.3 * 0.25, abs=0.005)
    mu = 1 / (1 + math.exp(-0.8))
    assert ks_distance(y[(y > 0) & (y < 1)], stats.beta(mu * 6.0, (1 - mu) * 6.0).cdf) < KS


def test_zero_inflated_replicates_are_the_mixture():
    data = same_cells(1)
    d = one_cell_draws(SIZE, b=-0.5, beta=1.0, phi=3.0, zi=0.2)
    y = likelihood.predict("zoib_rank", data, d, np.random.default_rng(4)).ravel()
    assert (y == 0).mean() == pytest.approx(0.2, abs=0.005) and not (y == 1).any()
    mu = 1 / (1 + math.exp(0.5))
    assert ks_distance(y[y > 0], stats.beta(mu * 3.0, (1 - mu) * 3.0).cdf) < KS


@pytest.mark.parametrize("model", MODELS)
def test_replicates_are_independent_across_cells(model):
    """Cells with the same η get their own draws: two such cells' replicates are uncorrelated, not equal."""
    size = 20_000
    data = same_cells(2)
    d = one_cell_draws(size, b=0.2, beta=0.0, sigma=0.3, alpha=2.0, phi=4.0, zoi=0.3, coi=0.5, zi=0.3)
    y = likelihood.predict(model, data, d, np.random.default_rng(6))
    assert y.shape == (size, 2)
    assert abs(np.corrcoef(y[:, 0], y[:, 1])[0, 1]) < 0.03


@pytest.mark.parametrize("model", ["zoib", "zoib_rank"])
def test_beta_replicates_stay_inside_the_interval_for_tiny_precision(model):
    """For φ → 0 a Beta draw rounds to 0 or 1; the interior part is kept strictly inside (0, 1), so that only the
    point masses give 0 and 1."""
    d = one_cell_draws(20_000, b=0.0, beta=0.0, phi=1e-3, zoi=0.0, coi=0.5, zi=0.0)
    data = same_cells(1)
    y = likelihood.predict(model, data, d, np.random.default_rng(7))
    assert np.all((y > 0) & (y < 1))
    assert y.min() == 1e-300 and y.max() == 1 - 1e-16  # rounded draws are clipped to these, both sides occur
