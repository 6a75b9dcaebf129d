"""riskreport.bayes.diagnosis.psis against ArviZ: PSIS weights, PSIS-LOO and WAIC equal `arviz.psislw`, `arviz.loo` and
`arviz.waic` (scale "log") to 1e-9 relative (k to 1e-9 absolute), computed here on the same log-likelihoods; and
`information_criteria`, which uses them, against the ArviZ route it replaced."""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pandas as pd
import pytest

from riskreport import bayes
from riskreport.bayes.diagnosis import diagnostics, psis
from riskreport.errors import ParameterError

RTOL = 1e-9


def arviz_criteria(log_lik: np.ndarray, r_eff: float | None = None, posterior: np.ndarray | None = None):
    """`arviz.loo` and `arviz.waic` (log scale, pointwise) of a (chains, draws, n) log-likelihood."""
    chains, draws = log_lik.shape[:2]
    b = posterior if posterior is not None else np.zeros((chains, draws))
    idata = az.from_dict(posterior={"b": b}, log_likelihood={"y": log_lik})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return az.loo(idata, scale="log", pointwise=True, reff=r_eff), az.waic(idata, scale="log", pointwise=True)


def assert_equal_to_arviz(log_lik: np.ndarray, r_eff: float) -> psis.Loo:
    ref_loo, ref_waic = arviz_criteria(log_lik, r_eff)
    loo, waic = psis.loo_waic(log_lik, r_eff)
    for ours, theirs in ((loo.elpd, "elpd_loo"), (loo.se, "se"), (loo.p, "p_loo")):
        assert ours == pytest.approx(float(ref_loo[theirs]), rel=RTOL), theirs
    for ours, theirs in ((waic.elpd, "elpd_waic"), (waic.se, "se"), (waic.p, "p_waic")):
        assert ours == pytest.approx(float(ref_waic[theirs]), rel=RTOL), theirs
    np.testing.assert_allclose(loo.pointwise, np.asarray(ref_loo["loo_i"]), rtol=RTOL)
    np.testing.assert_allclose(waic.pointwise, np.asarray(ref_waic["waic_i"]), rtol=RTOL)
    np.testing.assert_allclose(loo.pareto_k, np.asarray(ref_loo["pareto_k"]), rtol=0, atol=1e-9)
    single_loo, single_waic = psis.loo(log_lik, r_eff), psis.waic(log_lik)
    assert (single_loo.elpd, single_waic.elpd) == (loo.elpd, waic.elpd)
    return loo


def normal_log_lik(chains: int, draws: int, y: np.ndarray, scale: float = 1.0, seed: int = 0) -> np.ndarray:
    """log N(y_i | μ_s, σ_s) for draws of (μ, σ) near a posterior of y ~ N(μ, σ), as AR(1) chains (r_eff ≠ 1)."""
    rng = np.random.default_rng(seed)
    noise = rng.normal(size=(2, chains, draws))
    for t in range(1, draws):
        noise[:, :, t] = 0.5 * noise[:, :, t - 1] + np.sqrt(0.75) * noise[:, :, t]
    mu = noise[0] / np.sqrt(len(y))
    sigma = scale * np.exp(0.1 * noise[1])
    z = (y - mu[..., None]) / sigma[..., None]
    return -0.5 * z**2 - np.log(sigma[..., None]) - 0.5 * np.log(2 * np.pi)


@pytest.fixture(scope="module")
def y() -> np.ndarray:
    return np.random.default_rng(7).normal(size=60)


def test_normal_model_with_several_chains(y):
    loo = assert_equal_to_arviz(normal_log_lik(4, 1000, y), r_eff=0.71)
    assert np.all(loo.pareto_k < 0.5)


def test_heavy_tails_give_k_above_0_7(y):
    outlying = y.copy()
    outlying[:4] = [6.0, -7.5, 9.0, 12.0]
    loo = assert_equal_to_arviz(normal_log_lik(4, 1000, outlying, scale=0.4, seed=1), r_eff=1.0)
    assert np.sum(loo.pareto_k > 0.7) >= 3


def test_few_draws(y):
    loo = assert_equal_to_arviz(normal_log_lik(2, 100, y, seed=2), r_eff=0.83)
    assert psis.tail_length(200, 0.83) == 40 and np.all(np.isfinite(loo.pareto_k))  # S/5 is the smaller bound


def test_constant_log_likelihood_is_not_smoothed(y):
    log_lik = normal_log_lik(3, 400, y, seed=3)
    log_lik[..., 5] = -1.25
    loo = assert_equal_to_arviz(log_lik, r_eff=0.9)
    assert loo.pareto_k[5] == np.inf and loo.pointwise[5] == pytest.approx(-1.25, rel=1e-12)


def test_ties_shorten_the_tail(y):
    """Rounded log-likelihoods tie: each observation's tail is shorter than M by its own amount, some 4 or less."""
    log_lik = np.round(normal_log_lik(2, 500, y, scale=0.5, seed=4), 1)
    few = np.arange(500)[:, None] + np.arange(2)[None, :] / 10  # distinct per draw and chain
    log_lik[..., 0] = np.where(few < 3, -2.0 - few, 0.0).T  # 6 log ratios above a tied rest: a tail of 6
    log_lik[..., 1] = np.where(few < 2, -2.0 - few, 0.0).T  # 4 above a tied rest: not smoothed
    loo = assert_equal_to_arviz(log_lik, r_eff=1.0)
    assert np.isfinite(loo.pareto_k[0]) and loo.pareto_k[1] == np.inf


def test_tail_stops_at_the_smallest_normal_float():
    """Log weights more than 708 below the largest start the tail at log(tiny), as in ArviZ."""
    rng = np.random.default_rng(5)
    log_lik = -rng.normal(0, 1, (2, 150, 8))
    log_lik[:, 10:, :3] += 900 + rng.normal(0, 5, (2, 140, 3))  # only 20 draws per observation near the top
    loo = assert_equal_to_arviz(log_lik, r_eff=1.0)
    assert np.all(np.isfinite(loo.pareto_k))


def test_log_weights_equal_psislw(y):
    log_ratios = -normal_log_lik(4, 250, y, scale=0.7, seed=6).reshape(1000, -1).T
    weights, k = psis.psis_log_weights(log_ratios, r_eff=0.6)
    ref_weights, ref_k = az.psislw(log_ratios.copy(), reff=0.6)
    np.testing.assert_allclose(weights, ref_weights, rtol=RTOL, atol=1e-12)
    np.testing.assert_allclose(k, ref_k, rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.exp(weights).sum(axis=1), 1.0, rtol=1e-12)


def test_bad_shapes_are_named():
    with pytest.raises(ParameterError, match="at least 2 draws"):
        psis.loo(np.zeros(10))
    with pytest.raises(ParameterError, match=r"shape \(1, 1, 5\)"):
        psis.waic(np.zeros((1, 1, 5)))
    with pytest.raises(ParameterError, match="at least 2 draws"):
        psis.psis_log_weights(np.zeros((3, 1)))


@pytest.mark.parametrize("thinned", [False, True])
def test_information_criteria_equal_the_arviz_route(monkeypatch, thinned):
    """The returned dict: the same keys and values as `az.waic`/`az.loo` on the posterior of the intercept."""
    rng = np.random.default_rng(8)
    data = bayes.scores_data(pd.DataFrame(rng.random((5, 12)), index=[f"s{i}" for i in range(5)]))
    chains, per_chain = 3, 400
    draws = {
        "b": 0.5 + 0.05 * np.cumsum(rng.normal(size=(chains, per_chain)), axis=1) / 20,
        "r_sys": rng.normal(0, 0.05, (chains, per_chain, 5)),
        "r_top": rng.normal(0, 0.2, (chains, per_chain, 12)),
        "sigma": np.exp(rng.normal(np.log(0.3), 0.1, (chains, per_chain))),
    }
    if thinned:
        monkeypatch.setattr(diagnostics, "MAX_LOGLIK_VALUES", chains * per_chain * data.n // 2)
    result = diagnostics.information_criteria("gaussian", data, draws)
    kept = per_chain // 2 if thinned else per_chain
    assert result["loglik_draws"] == chains * kept
    from riskreport.bayes.modelling.likelihood import log_likelihood

    step = per_chain // kept
    flat = {name: v[:, ::step].reshape((-1,) + v.shape[2:]) for name, v in draws.items()}
    log_lik = log_likelihood("gaussian", data, flat).reshape(chains, -1, data.n)
    ref_loo, ref_waic = arviz_criteria(log_lik, posterior=draws["b"][:, ::step])
    expected = {
        "waic": -2 * float(ref_waic["elpd_waic"]),
        "waic_se": 2 * float(ref_waic["se"]),
        "p_waic": float(ref_waic["p_waic"]),
        "loo": -2 * float(ref_loo["elpd_loo"]),
        "loo_se": 2 * float(ref_loo["se"]),
        "p_loo": float(ref_loo["p_loo"]),
    }
    assert set(result) == set(expected) | {"pareto_k_above_0_7", "loglik_draws", "pointwise"}
    assert {name: result[name] for name in expected} == pytest.approx(expected, rel=RTOL)
    assert result["pareto_k_above_0_7"] == int((np.asarray(ref_loo["pareto_k"]) > 0.7).sum())
    np.testing.assert_allclose(result["pointwise"]["elpd_loo_i"], np.asarray(ref_loo["loo_i"]), rtol=RTOL)
    np.testing.assert_allclose(result["pointwise"]["elpd_waic_i"], np.asarray(ref_waic["waic_i"]), rtol=RTOL)
    np.testing.assert_allclose(result["pointwise"]["pareto_k"], np.asarray(ref_loo["pareto_k"]), rtol=0, atol=1e-9)


def test_shapes_defaults_and_the_smallest_inputs(y):
    """Any leading shape, exactly 2 draws, r_eff = 1 by default, and every too-small shape named."""
    assert psis.tail_length(1000) == 95 and psis.tail_length(1000, 2.0) == 68  # ⌈3√(S/r_eff)⌉ below S/5
    ratios = -normal_log_lik(2, 500, y[:6], seed=3).reshape(1000, -1).T  # (6, 1000)
    weights, k = psis.psis_log_weights(ratios)
    assert np.array_equal(weights, psis.psis_log_weights(ratios, 1.0)[0])
    cube_weights, cube_k = psis.psis_log_weights(ratios.reshape(2, 3, 1000))
    assert cube_weights.shape == (2, 3, 1000) and cube_k.shape == (2, 3)
    np.testing.assert_allclose(cube_weights.reshape(6, 1000), weights, rtol=1e-13)
    np.testing.assert_allclose(cube_k.reshape(6), k, rtol=1e-13)
    one_weights, one_k = psis.psis_log_weights(ratios[0])
    assert one_weights.shape == (1000,) and one_k.shape == () and one_k == pytest.approx(k[0], rel=1e-13)
    two = psis.psis_log_weights(np.array([0.0, np.log(3.0)]))[0]  # 2 draws: the weights normalised, 1/4 and 3/4
    assert np.exp(two).tolist() == pytest.approx([0.25, 0.75])
    log_lik = normal_log_lik(2, 500, y[:6], seed=3)
    assert psis.loo(log_lik).elpd == psis.loo(log_lik, 1.0).elpd == psis.loo_waic(log_lik)[0].elpd
    assert psis.waic(log_lik.reshape(1000, 6)).elpd == pytest.approx(psis.waic(log_lik).elpd, rel=1e-13)
    for bad in [(3, 0), (2, 3, 0), (1, 4)]:
        with pytest.raises(ParameterError, match="at least 2 draws"):
            psis.waic(np.zeros(bad))
    with pytest.raises(ParameterError, match="at least 2 draws"):
        psis.psis_log_weights(np.float64(1.0))


def test_the_shortest_smoothed_tail_has_five_draws():
    """25 draws: M = ⌈min(25/5, 3·√25)⌉ = 5, the shortest tail PSIS smooths (ArviZ: more than 4)."""
    assert psis.tail_length(25) == 5
    log_ratios = np.random.default_rng(4).standard_t(3, size=(3, 25))
    weights, k = psis.psis_log_weights(log_ratios)
    ref_weights, ref_k = az.psislw(log_ratios.copy(), reff=1.0)
    assert np.isfinite(k).all()
    np.testing.assert_allclose(weights, ref_weights, rtol=RTOL, atol=1e-12)
    np.testing.assert_allclose(k, ref_k, rtol=0, atol=1e-9)


def test_gpd_quantiles_at_k_zero_and_sigma_zero():
    """k = 0 is the exponential limit −log(1 − p); σ ≤ 0 has no quantiles (NaN)."""
    p = (np.arange(1, 5) - 0.5) / 4
    quantiles = psis._gpd_quantiles(4, np.array([0.0, 0.5, 0.5]), np.array([2.0, 2.0, 0.0]))
    assert quantiles[0].tolist() == pytest.approx((-2 * np.log1p(-p)).tolist(), rel=1e-14)
    assert quantiles[1].tolist() == pytest.approx((2 * ((1 - p) ** -0.5 - 1) / 0.5).tolist(), rel=1e-13)
    assert np.isnan(quantiles[2]).all()


def test_smallest_log_likelihoods_and_the_message():
    rng = np.random.default_rng(1)
    assert np.isfinite(psis.waic(rng.normal(size=(10, 1))).elpd)  # one observation
    assert np.isfinite(psis.waic(rng.normal(size=(2, 5))).elpd)  # two draws
    weights, k = psis.psis_log_weights(rng.normal(size=(2, 1, 30)))
    assert weights.shape == (2, 1, 30) and k.shape == (2, 1)
    with pytest.raises(ParameterError, match=r"^the pointwise log-likelihood needs the observations on its last"):
        psis.waic(np.zeros((1, 5)))
