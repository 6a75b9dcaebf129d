"""riskreport.bayes.diagnosis.convergence: R̂ and bulk/tail ESS equal to ArviZ's (computed here) to 1e-9 relative."""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest

from riskreport.bayes.diagnosis import convergence
from riskreport.bayes.diagnosis.diagnostics import _min_ess, diagnose
from riskreport.errors import ParameterError

RTOL = 1e-9


def ar1(rng: np.random.Generator, rho: float, shape: tuple[int, ...]) -> np.ndarray:
    """AR(1) chains along axis 1: x_t = ρ x_{t−1} + ε_t."""
    noise = rng.normal(size=shape)
    x = np.empty(shape)
    x[:, 0] = noise[:, 0]
    for t in range(1, shape[1]):
        x[:, t] = rho * x[:, t - 1] + noise[:, t]
    return x


def arviz_values(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(R̂, bulk ESS, tail ESS) per parameter by ArviZ."""
    dataset = az.convert_to_dataset({"x": values})
    return (
        az.rhat(dataset)["x"].values,
        az.ess(dataset, method="bulk")["x"].values,
        az.ess(dataset, method="tail")["x"].values,
    )


def _cases() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20210101)
    near_constant = 1 + 1e-12 * rng.normal(size=(4, 999, 2))
    near_constant[..., 1] = 0.5  # and a constant
    with_nan = rng.normal(size=(4, 100, 2))
    with_nan[1, 5, 0] = np.nan
    return {
        "iid normal, 4 chains": rng.normal(size=(4, 1000, 3)),
        "AR(1) rho 0.9, odd draws": ar1(rng, 0.9, (4, 2001, 2)),
        "AR(1) rho 0.99, odd draws": ar1(rng, 0.99, (4, 2001, 2)),
        "AR(1) rho -0.5 (antithetic)": ar1(rng, -0.5, (2, 600, 2)),
        "four distinct values (ties)": rng.integers(0, 4, size=(4, 500, 3)).astype(float),
        "rare ones (tail indicator constant)": (rng.random((4, 300, 2)) < 0.03).astype(float),
        "1 chain": ar1(rng, 0.5, (1, 1001, 3)),
        "near-constant and constant": near_constant,
        "a NaN draw": with_nan,
        "scalar parameter, 4 chains": ar1(rng, 0.7, (4, 777)),
        "scalar parameter, 1 chain": rng.normal(size=(1, 1000)),
        "matrix parameter": rng.normal(size=(3, 200, 2, 3)),
        "float32 draws": rng.normal(size=(4, 1001, 3)).astype(np.float32),
        "integer draws": rng.integers(-3, 3, size=(4, 400, 2)),
        "no parameter": np.zeros((4, 100, 0)),
        "3 draws (too few)": rng.normal(size=(2, 3, 2)),
    }


CASES = _cases()


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # ArviZ's R̂ of a constant: 0 / 0
@pytest.mark.parametrize("name", list(CASES))
def test_equal_to_arviz(name):
    values = CASES[name]
    expected = arviz_values(values)
    together = convergence.rhat_ess(values)
    apart = (convergence.rhat_rank(values), convergence.ess_bulk(values), convergence.ess_tail(values))
    for what, want, got_together, got_apart in zip(("R̂", "bulk ESS", "tail ESS"), expected, together, apart):
        assert got_together.shape == got_apart.shape == want.shape == values.shape[2:], what
        np.testing.assert_allclose(got_together, want, rtol=RTOL, atol=0, err_msg=f"{name}: {what}")
        np.testing.assert_allclose(got_apart, want, rtol=RTOL, atol=0, err_msg=f"{name}: {what}")


@pytest.mark.parametrize("name", list(CASES))
def test_mean_ess_equal_to_arviz(name):
    values = CASES[name]
    if name == "near-constant and constant":  # 1 ± 1e-12: ArviZ's own mean ESS moves 1 % when 1 is subtracted
        values = values - 1  # (rounding of the chain means); the rank-normalised ESS does not see it
    want = az.ess(az.convert_to_dataset({"x": values}), method="mean")["x"].values
    got = convergence.ess_mean(values)
    assert got.shape == want.shape == values.shape[2:]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=0, err_msg=name)


@pytest.mark.parametrize("draws", range(4, 16))
def test_short_chains_equal_to_arviz(draws):
    """Geyer's sequences stop at the last lag pair within the draws: every boundary of a short chain."""
    rng = np.random.default_rng(draws)
    values = np.concatenate([ar1(rng, rho, (3, draws, 2)) for rho in (-0.6, 0.0, 0.8)], axis=2)
    for want, got in zip(arviz_values(values), convergence.rhat_ess(values)):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=0)


def test_ess_follows_the_autocorrelation():
    """Independent of ArviZ: ESS ≈ N for independent draws, ≈ N (1 − ρ)/(1 + ρ) for AR(1) draws."""
    rng = np.random.default_rng(7)
    size = 4 * 5000
    assert 0.9 * size < convergence.ess_bulk(rng.normal(size=(4, 5000))) < 1.1 * size
    expected = size * 0.1 / 1.9
    assert 0.7 * expected < convergence.ess_bulk(ar1(rng, 0.9, (4, 5000))) < 1.3 * expected
    shifted = ar1(rng, 0.0, (4, 2000))
    shifted[0] += 3.0  # one chain elsewhere: R̂ far above 1
    assert convergence.rhat_rank(shifted) > 1.3
    assert np.isnan(convergence.rhat_rank(rng.normal(size=(1, 2000))))


def test_draws_need_chains_and_draws_axes():
    with pytest.raises(ParameterError, match=r"\(chains, draws, \*parameter shape\); got shape \(10,\)"):
        convergence.ess_bulk(np.zeros(10))


def _zoib_like(rng: np.random.Generator) -> dict:
    draws = {name: ar1(rng, 0.6, (4, 503)) for name in ("b", "sd_sys", "sd_top", "phi", "zoi", "coi")}
    draws |= {"z_sys": rng.normal(size=(4, 503, 5)), "z_top": rng.normal(size=(4, 503, 4))}
    draws["r_sys"] = ar1(rng, 0.95, (4, 503, 5))
    draws["r_top"] = ar1(rng, 0.3, (4, 503, 4))
    return draws


def test_diagnose_equals_arviz():
    draws = _zoib_like(np.random.default_rng(3))
    result = diagnose(draws, "r_sys", target_ess=400, divergences=0)
    expected = {}
    for name in ("b", "sd_sys", "sd_top", "phi", "zoi", "coi", "r_sys", "r_top"):
        for i, values in enumerate(zip(*(np.atleast_1d(v) for v in arviz_values(draws[name])))):
            expected[name if draws[name].ndim == 2 else f"{name}[{i}]"] = values
    assert list(result["per_parameter"]) == list(expected)
    for label, want in expected.items():
        np.testing.assert_allclose(result["per_parameter"][label], want, rtol=RTOL, atol=0, err_msg=label)
    effects = np.array([expected[f"r_sys[{i}]"] for i in range(5)])
    assert result["min_ess_bulk"] == pytest.approx(effects[:, 1].min(), rel=RTOL)
    assert result["min_ess_tail"] == pytest.approx(effects[:, 2].min(), rel=RTOL)
    assert result["max_rhat"] == pytest.approx(max(v[0] for v in expected.values()), rel=RTOL)
    assert _min_ess(draws["r_sys"]) == pytest.approx((effects[:, 1].min(), effects[:, 2].min()), rel=RTOL)


def arviz_tau(rho: np.ndarray, draws: int) -> float:
    """τ by ArviZ 0.23's loops (`arviz.stats.diagnostics._ess`), transcribed to read the autocorrelations `rho`:
    Geyer's initial positive sequence (stop at the first pair sum ≤ 0, keep a pair whose sum is ≥ 0), the last
    even term when positive, then the initial monotone sequence by averaging."""
    kept = np.zeros(draws)
    kept[0] = even = 1.0
    kept[1] = odd = rho[1]
    t = 1
    while t < draws - 3 and even + odd > 0.0:
        even, odd = rho[t + 1], rho[t + 2]
        if even + odd >= 0:
            kept[t + 1], kept[t + 2] = even, odd
        t += 2
    last = t - 2
    if even > 0:
        kept[last + 1] = even
    t = 1
    while t <= last - 2:
        if kept[t + 1] + kept[t + 2] > kept[t - 1] + kept[t]:
            kept[t + 1] = kept[t + 2] = (kept[t - 1] + kept[t]) / 2.0
        t += 2
    return -1.0 + 2.0 * kept[: last + 1].sum() + kept[last + 1 : last + 2].sum()


# autocorrelations whose pair sums Pₖ = ρ₂ₖ + ρ₂ₖ₊₁ hit 0 exactly: where the sequence stops, and its last term
EDGE_RHOS = {
    "P1 = 0, even term < 0": [1.0, 0.5, -0.25, 0.25, 0.5, 0.5, 0.125, 0.0, 0.0, 0.0],
    "P1 = 0, even term > 0": [1.0, 0.5, 0.25, -0.25, 0.5, 0.5, 0.125, 0.0, 0.0, 0.0],
    "P2 = 0, even term 0": [1.0, 0.5, 0.5, 0.25, 0.0, 0.0, 0.25, 0.25, 0.0, 0.0],
    "P2 < 0, even term > 0": [1.0, 0.5, 0.5, 0.25, 0.125, -0.25, 0.25, 0.25, 0.0, 0.0],
    "P1 rises (monotone)": [1.0, 0.25, 0.5, 0.5, 0.25, 0.125, -0.5, 0.0, 0.0, 0.0],
    "never ends": [1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
}


@pytest.mark.parametrize("name", list(EDGE_RHOS))
def test_geyer_sequences_equal_arviz_s_loops_at_their_edges(name):
    rho = np.array(EDGE_RHOS[name])
    tau, unfinished = convergence._geyer_tau(rho[None], len(rho))
    assert tau[0] == pytest.approx(arviz_tau(rho, len(rho)), rel=1e-14)
    assert not unfinished[0]  # every lag within the draws was given


def test_geyer_sequences_equal_arviz_s_loops_on_random_autocorrelations():
    rng = np.random.default_rng(11)
    for draws in (4, 5, 6, 7, 20, 21, 101):
        rho = np.concatenate(([[1.0]] * 200, 0.9 ** np.arange(1, draws) + rng.normal(0, 0.2, (200, draws - 1))), axis=1)
        rho = np.round(rho, 2)  # rounding makes some pair sums exactly 0
        taus, unfinished = convergence._geyer_tau(rho, draws)
        np.testing.assert_allclose(taus, [arviz_tau(r, draws) for r in rho], rtol=1e-12)
        assert not unfinished.any()


def test_geyer_sequences_report_which_need_more_lags():
    """Given lags 0 … 9 of 41 draws: a sequence that ended within them is finished, one that did not is not."""
    ended = np.array(EDGE_RHOS["P1 = 0, even term < 0"])
    going = np.array(EDGE_RHOS["never ends"])
    _, unfinished = convergence._geyer_tau(np.stack([ended, going]), 41)
    assert unfinished.tolist() == [False, True]
    _, unfinished = convergence._geyer_tau(np.full((1, 21), 0.5), 21)  # every lag of 21 draws: nothing more to get
    assert unfinished.tolist() == [False]


def test_float32_draws_are_folded_in_float32_as_arviz_does():
    """The median of two neighbouring float32 values rounds to one of them in float32, which changes which draws tie
    in |draw − median|: the folded R̂ differs from float64 arithmetic, and equals ArviZ's."""
    rng = np.random.default_rng(4)
    one, ulp = np.float32(1), np.float32(2.0**-23)
    near = rng.permutation(np.repeat([one, one + ulp], 50)).reshape(2, 50)  # chains 0, 1 close to the median
    far = rng.permutation(np.repeat([one - ulp, one + 2 * ulp], 50)).reshape(2, 50)  # chains 2, 3 farther
    values = np.concatenate([near, far]).astype(np.float32)[..., None]  # median 1 + ulp/2: 1 in float32
    want = arviz_values(values)[0]
    np.testing.assert_allclose(convergence.rhat_rank(values), want, rtol=RTOL, atol=0)
    # in float64, chains 0, 1 fold to ulp/2 and chains 2, 3 to 3 ulp/2: separated, a far larger folded R̂
    assert convergence.rhat_rank(values.astype(float))[0] > 1.5 * want[0]


def test_a_range_of_exactly_the_float_resolution_is_not_constant():
    """ArviZ's constant test is `max − min < resolution` (1e-15): a range of exactly 1e-15 is a sequence."""
    rng = np.random.default_rng(8)
    values = np.where(rng.random((4, 200, 1)) < 0.5, 0.0, convergence.RESOLUTION)
    assert np.ptp(values) == convergence.RESOLUTION
    np.testing.assert_allclose(convergence.ess_mean(values), az.ess(values[..., 0], method="mean"), rtol=RTOL)
    assert convergence.ess_mean(values)[0] != values.size


def test_no_chain_gives_nan():
    for function in (convergence.ess_bulk, convergence.ess_mean, convergence.ess_tail, convergence.rhat_rank):
        assert np.isnan(function(np.zeros((0, 100, 2)))).all()
    assert all(np.isnan(v).all() and v.shape == (2,) for v in convergence.rhat_ess(np.zeros((0, 100, 2))))
