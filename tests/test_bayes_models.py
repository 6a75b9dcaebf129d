"""The parameterisations of `bayes.models` are one model: log-densities equal up to a constant at mapped points,
and (on TREC-COVID's 42 pooled runs, when ../shared is present) the same posterior within Monte Carlo error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import SHARED_DATA

from riskreport import bayes
from riskreport.bayes import models

COVID = SHARED_DATA / "trec-covid-round1"
HIERARCHICAL = ("gaussian", "skew_normal", "zoib", "zoib_rank")


def _data(model: str, rng: np.random.Generator) -> bayes.BayesData:
    """5 systems × 7 topics (× 3 ranks for ZOiB-Rank) with exact 0s and 1s where the family allows them."""
    rows = [
        (f"s{s}", f"t{t}", k, float(rng.beta(2, 3)))
        for s in range(5)
        for t in range(7)
        for k in range(1, 4 if model == "zoib_rank" else 2)
    ]
    table = pd.DataFrame(rows, columns=["system", "topic", "rank", "score"])
    table.loc[::9, "score"] = 0.0
    if model == "zoib":
        table.loc[4::11, "score"] = 1.0
    return bayes.scores_data(table if model == "zoib_rank" else table.drop(columns="rank"))


def _log_densities(model: str, effects: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(differences, densities): log p(θ) + const of `effects`' parameterisation minus brms's, and the former, at
    6 random points θ mapped between them (the change of variables written out: brms's r = sd·z has Jacobian
    sd^n per group; the non-centred zero-sum form's m = sd/√n·z_m, u = sd·z_u the same up to a constant)."""
    rng = np.random.default_rng(seed)
    data = _data(model, rng)
    priors = models.brms_priors(model, data.y)
    new = models.build_pymc_model(model, data, priors, effects)
    old = models.build_pymc_model(model, data, priors, "brms")
    new_logp, old_logp = new.compile_logp(), old.compile_logp()
    expanded = {var.name: var for var in new.unobserved_value_vars}  # in terms of the (transformed) value variables
    outputs = [expanded[name] for name in ("b", "sd_sys", "sd_top", "r_sys", "r_top")]
    natural = new.compile_fn(outputs, inputs=new.value_vars, on_unused_input="ignore", point_fn=True)
    differences, densities = [], []
    for _ in range(6):
        point = {name: rng.normal(0, 0.7, np.shape(value)) for name, value in new.initial_point().items()}
        b, sd_sys, sd_top, r_sys, r_top = natural(point)
        mapped = {name: value for name, value in point.items() if name in {v.name for v in old.value_vars}}
        mapped.update({"b": b, "z_sys": r_sys / sd_sys, "z_top": r_top / sd_top})
        jacobian = len(data.systems) * np.log(sd_sys) + len(data.topics) * np.log(sd_top)  # dr = sd·dz per effect
        if effects == "zero_sum_noncentred":  # its m and u are sd-scaled too: the same Jacobian as brms's
            point_density = new_logp(point) - jacobian
        else:
            point_density = new_logp(point)
        differences.append(point_density - (old_logp(mapped) - jacobian))
        densities.append(point_density)
    return np.array(differences), np.array(densities)


@pytest.mark.parametrize("effects", ["zero_sum", "zero_sum_noncentred"])
@pytest.mark.parametrize("model", HIERARCHICAL)
def test_log_density_equals_brms_up_to_a_constant(model, effects):
    differences, densities = _log_densities(model, effects, seed=HIERARCHICAL.index(model))
    assert np.ptp(differences) < 1e-8, differences
    assert np.ptp(densities) > 1.0  # the points are far apart: a constant difference is not one point six times


# ---------------------------------------------------------------- the same posterior on ZOiB-42 (../shared)

QUANTITIES = ("mean", 0.05, 0.5, 0.95)


def _summaries(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values, MCSEs) of the mean and the 5/50/95 % quantiles of `draws` (chains, draws, parameters), ArviZ's MCSE."""
    import arviz as az

    dataset = az.convert_to_dataset({"x": draws})
    values, errors = [], []
    for quantity in QUANTITIES:
        if quantity == "mean":
            values.append(draws.mean(axis=(0, 1)))
            errors.append(az.mcse(dataset, method="mean")["x"].values)
        else:
            values.append(np.quantile(draws, quantity, axis=(0, 1)))
            errors.append(az.mcse(dataset, method="quantile", prob=quantity)["x"].values)
    return np.concatenate(values), np.concatenate(errors)


@pytest.mark.skipif(not COVID.is_dir(), reason="../shared TREC-COVID data not present")
def test_zoib42_posterior_equals_brms_parameterisation_within_monte_carlo_error():
    """b, sd_sys, sd_top and every r_sys: mean and 5/50/95 % quantiles within 4.5·√(MCSE_new² + MCSE_brms²)
    (a false alarm for one of 180 comparisons has probability about 1e-3 when the posteriors are equal)."""
    import nutpie

    scores = pd.read_csv(COVID / "round1_data.csv")
    pooled = pd.read_csv(COVID / "round1_pooled.csv")
    pool = set(pooled.loc[pooled["pooled"] == 1, "system"])
    data = bayes.scores_data(scores, systems=[s for s in scores["system"].unique() if s in pool])
    new = bayes.fit("zoib", data, target_ess=4000, seed=2026, criteria=False, use_cache=False, progress=None)
    brms = models.build_pymc_model("zoib", data, models.brms_priors("zoib", data.y), "brms")
    compiled = nutpie.compile_pymc_model(brms, backend="numba", var_names=models.free_variables("zoib"))
    trace = nutpie.sample(compiled, draws=2000, tune=1000, chains=4, seed=2026, progress_bar=False, target_accept=0.9)
    compared = 0
    for name in ("b", "sd_sys", "sd_top", "r_sys"):
        old_draws = np.asarray(trace.posterior[name])
        shape = old_draws.shape[:2] + (-1,)
        value_new, mcse_new = _summaries(new.draws[name].reshape(new.draws[name].shape[:2] + (-1,)))
        value_old, mcse_old = _summaries(old_draws.reshape(shape))
        tolerance = 4.5 * np.sqrt(mcse_new**2 + mcse_old**2)
        assert np.all(np.abs(value_new - value_old) <= tolerance), (
            name,
            np.max(np.abs(value_new - value_old) / tolerance),
        )
        compared += value_new.size
    assert compared == 4 * (3 + 42)
