"""The parameterisations of `bayes.models` are one model: log-densities equal up to a constant at mapped points,
and (on TREC-COVID's 42 pooled runs, when ../shared is present) the same posterior within Monte Carlo error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import SHARED_DATA

from riskreport import bayes
from riskreport.bayes.modelling import models

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


def _log_densities(model: str, centred: tuple[bool, bool], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(differences, densities): log p(θ) + const of the zero-sum parameterisation (groups `centred` or scaled by
    sd) minus brms's, and the former, at 6 random points θ mapped between them (the change of variables written
    out: brms's r = sd·z has Jacobian sd^n per group; the zero-sum m = sd/√n·z_m has sd, and a scaled group's
    u = sd·z_u sd^(n−1), up to constants)."""
    rng = np.random.default_rng(seed)
    data = _data(model, rng)
    priors = models.brms_priors(model, data.y)
    new = models.build_pymc_model(model, data, priors, centred)
    old = models.build_pymc_model(model, data, priors, effects="brms")
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
        sizes, sds = (len(data.systems), len(data.topics)), (sd_sys, sd_top)
        jacobian = sum(n * np.log(sd) for n, sd in zip(sizes, sds))  # brms: dr = sd·dz per effect
        scaled = sum(  # zero-sum: dm = sd/√n·dz_m always, du = sd·dz_u (n − 1 coordinates) for a scaled group
            np.log(sd) + (0.0 if centre else (n - 1) * np.log(sd)) for n, sd, centre in zip(sizes, sds, centred)
        )
        point_density = new_logp(point) - scaled
        differences.append(point_density - (old_logp(mapped) - jacobian))
        densities.append(point_density)
    return np.array(differences), np.array(densities)


@pytest.mark.parametrize("centred", [(True, True), (False, False), (True, False)])
@pytest.mark.parametrize("model", HIERARCHICAL)
def test_log_density_equals_brms_up_to_a_constant(model, centred):
    differences, densities = _log_densities(model, centred, seed=HIERARCHICAL.index(model))
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
    """b, sd_sys, sd_top, every r_sys, φ and zoi, coi (drawn from their exact Beta posterior by `fit`, sampled by
    NUTS in the brms model): mean and 5/50/95 % quantiles within 4.5·√(MCSE_new² + MCSE_brms²) (a false alarm
    for one of 192 comparisons has probability about 1e-3 when the posteriors are equal)."""
    import nutpie

    scores = pd.read_csv(COVID / "round1_data.csv")
    pooled = pd.read_csv(COVID / "round1_pooled.csv")
    pool = set(pooled.loc[pooled["pooled"] == 1, "system"])
    data = bayes.scores_data(scores, systems=[s for s in scores["system"].unique() if s in pool])
    new = bayes.fit("zoib", data, target_ess=4000, seed=2026, criteria=False, use_cache=False, progress=None)
    brms = models.build_pymc_model("zoib", data, models.brms_priors("zoib", data.y), effects="brms")
    compiled = nutpie.compile_pymc_model(brms, backend="numba", var_names=models.free_variables("zoib"))
    trace = nutpie.sample(compiled, draws=2000, tune=1000, chains=4, seed=2026, progress_bar=False, target_accept=0.9)
    compared = 0
    for name in ("b", "sd_sys", "sd_top", "r_sys", "phi", "zoi", "coi"):
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
    assert compared == 4 * (3 + 42 + 3)


# ------------------------------------------------------ the numba kernels nutpie samples (bayes/modelling/kernels.py)

KERNEL_LAYOUTS = [(True, True), (False, True), (True, False)]


def _kernel_data(model: str, rng: np.random.Generator, missing: bool) -> bayes.BayesData:
    """`_data`, or for a paired model 20 topic differences; `missing`: every 4th cell dropped and 3 cells twice
    ("sparse": only every 3rd cell kept, and 3 cells twice)."""
    if model.startswith("paired"):
        y = rng.normal(0.1, 0.3, 20)
        return bayes.BayesData(y, np.zeros(20, int), np.arange(20), ("a",), tuple(range(20)))
    data = _data(model, rng)
    if not missing:
        return data
    kept = (lambda i: i % 3 == 0) if missing == "sparse" else (lambda i: i % 4 != 1)
    keep = np.r_[[i for i in range(data.n) if kept(i)], [3, 6, 9]]
    rank = None if data.rank is None else data.rank[keep]
    return bayes.BayesData(data.y[keep], data.system[keep], data.topic[keep], data.systems, data.topics, rank)


def _kernel_and_reference(model: str, centred, missing: bool, seed: int):
    """(kernel buffer, free layout, PyMC model with exact=True, its logp and dlogp in double precision, data)."""
    import pytensor

    from riskreport.bayes.modelling import kernels

    rng = np.random.default_rng(seed)
    data = _kernel_data(model, rng, missing)
    priors = models.brms_priors(model, data.y)
    inputs = models.model_inputs(model, data, priors)
    sizes = (len(data.systems), len(data.topics))
    # PyTensor keeps a Python float constant such as 2.0 in float32 by default (pt.sqrt(2) is float32): PyMC's
    # Student-t and skew-normal constants are then off by ~1e-8. numpy's casting keeps them double.
    with pytensor.config.change_flags(cast_policy="numpy+floatX"):
        reference = models.build_pymc_model(model, data, priors, centred, exact=True)
        # FAST_COMPILE evaluates ψ with scipy; PyTensor's C ψ is accurate to ~1e-10 only
        logp = reference.compile_logp(mode="FAST_COMPILE")
        dlogp = reference.compile_dlogp(mode="FAST_COMPILE")
    layout = kernels.free_layout(model, *sizes, centred)
    buffer = kernels.pack(model, inputs, *sizes, centred)
    return buffer, layout, reference, logp, dlogp, rng


def _point(layout, x: np.ndarray) -> dict:
    point, start = {}, 0
    for name, shape in layout:
        size = int(np.prod(shape))
        point[name] = x[start : start + size].reshape(shape)
        start += size
    return point


@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("centred", KERNEL_LAYOUTS)
@pytest.mark.parametrize("model", models.MODELS)
def test_kernel_log_density_and_gradient_equal_pymc(model, centred, missing):
    """The numba log-density and gradient nutpie samples equal PyMC's `logp` and `dlogp` of the same model
    (`build_pymc_model(exact=True)`) at 6 random points to 1e-10 relative (the gradient relative to its largest
    component). PyMC's Gaussian is per score: this is also the check of the sufficient statistics, with
    missing and repeated cells."""

    buffer, layout, reference, logp, dlogp, rng = _kernel_and_reference(model, centred, missing, seed=len(model))
    assert sorted(v.name for v in reference.value_vars) == sorted(name for name, _ in layout)
    _equal_at_random_points(buffer, layout, reference, logp, dlogp, rng, 6)


def _equal_at_random_points(buffer, layout, reference, logp, dlogp, rng, points: int) -> None:
    from riskreport.bayes.modelling import kernels

    size = sum(int(np.prod(shape)) for _, shape in layout)
    for _ in range(points):
        x = rng.normal(0, 0.7, size)
        grad = np.zeros(size)
        value = kernels.log_density(x, grad, buffer)
        point = _point(layout, x)
        expected = logp(point)
        parts = _point([(v.name, point[v.name].shape) for v in reference.value_vars], dlogp(point))  # PyMC's order
        expected_grad = np.concatenate([np.ravel(parts[name]) for name, _ in layout])
        assert value == pytest.approx(expected, rel=1e-10)
        assert np.max(np.abs(grad - expected_grad)) <= 1e-10 * np.max(np.abs(expected_grad))


@pytest.mark.parametrize("centred", KERNEL_LAYOUTS[:2])
def test_gaussian_kernel_on_a_sparse_design_equals_pymc(centred):
    """Most cells empty: the Gaussian kernel's counts are then the sparse cells themselves (`kernels.cell_counts`
    with base 0), the other branch of the test above's (base 1: all cells but a few)."""
    from riskreport.bayes.modelling import kernels

    buffer, layout, reference, logp, dlogp, rng = _kernel_and_reference("gaussian", centred, "sparse", seed=11)
    start = kernels.HEADER + 2 * (int(buffer[3]) + int(buffer[4]))
    assert buffer[start] == 0.0 and buffer[start + 1] > 0
    _equal_at_random_points(buffer, layout, reference, logp, dlogp, rng, 4)


def test_the_cell_counts_are_the_design_in_either_form():
    """`kernels.cell_counts`: base·J + W rebuilds the system × topic counts of complete, gapped and sparse designs."""
    from riskreport.bayes.modelling import kernels

    rng = np.random.default_rng(4)
    for keep in (1.0, 0.8, 0.2):
        cells = np.argwhere(rng.random((7, 9)) < keep)
        cells = np.vstack([cells, cells[:2]])  # two cells twice
        counts = np.zeros((7, 9))
        np.add.at(counts, (cells[:, 0], cells[:, 1]), 1.0)
        encoded = kernels.cell_counts(cells[:, 0], cells[:, 1], 7, 9)
        base, k = encoded[0], int(encoded[1])
        rebuilt = np.full((7, 9), base)
        s, t, w = encoded[2:].reshape(k, 3).T
        rebuilt[s.astype(int), t.astype(int)] += w
        assert np.array_equal(rebuilt, counts) and len(encoded) == 2 + 3 * k
        assert base == (1.0 if keep > 0.5 else 0.0) and k <= counts.size / 2 + 2


@pytest.mark.parametrize("model", ["gaussian", "skew_normal", "zoib_rank", "paired_skew_normal"])
def test_kernel_expands_to_the_stored_variables_of_pymc(model):
    """What nutpie stores from a point (b, sd, r_sys, r_top, the family's parameters) is PyMC's deterministics."""
    from riskreport.bayes.modelling import kernels

    centred = (True, False)
    buffer, layout, reference, _, _, rng = _kernel_and_reference(model, centred, False, seed=3)
    stored = kernels.stored_layout(model, int(buffer[3]), int(buffer[4]))
    expanded = {var.name: var for var in reference.unobserved_value_vars}
    natural = reference.compile_fn(
        [expanded[name] for name, _ in stored], inputs=reference.value_vars, on_unused_input="ignore", point_fn=True
    )
    size = sum(int(np.prod(shape)) for _, shape in layout)
    for _ in range(3):
        x = rng.normal(0, 0.7, size)
        out = np.zeros(sum(int(np.prod(shape)) for _, shape in stored))
        kernels.expand(x, out, buffer)
        assert np.allclose(out, np.concatenate([np.ravel(v) for v in natural(_point(layout, x))]), rtol=1e-12)


def _grid_moments(model: str, name: str, data: bayes.BayesData) -> tuple[float, float]:
    """Posterior mean and sd of `name` (zoi, coi or zi) by quadrature of the full PyMC model's density in that
    parameter, every other one held fixed (it is independent of them a posteriori)."""
    priors = models.brms_priors(model, data.y)
    full = models.build_pymc_model(model, data, priors)
    logp = full.compile_logp(jacobian=False)
    point = full.initial_point()
    grid = np.linspace(1e-6, 1 - 1e-6, 20001)
    key = f"{name}_logodds__"
    densities = np.array([logp({**point, key: np.log(p / (1 - p))}) for p in grid[::100]])
    coarse = grid[::100]
    weights = np.exp(densities - densities.max())
    fine = np.exp(np.interp(grid, coarse, np.log(weights + 1e-300)))
    mean = np.trapezoid(grid * fine, grid) / np.trapezoid(fine, grid)
    second = np.trapezoid(grid**2 * fine, grid) / np.trapezoid(fine, grid)
    return float(mean), float(np.sqrt(second - mean**2))


@pytest.mark.parametrize("model", ["zoib", "zoib_rank"])
def test_exact_draws_follow_the_models_posterior(model):
    """zoi, coi (zi) drawn from their exact Beta posterior: the draws' mean and sd equal those of the PyMC model's
    density in that parameter (by quadrature) within 4 Monte Carlo errors; the counts swapped (a wrong formula)
    are many errors away."""
    rng = np.random.default_rng(5)
    data = _data(model, rng)
    draws = models.exact_draws(model, data.y, (4, 5000), np.random.default_rng(1))
    y = data.y
    wrong_y = np.where(y == 0, 0.5, np.where((y > 0) & (y < 1), 0.0, y))  # n0 and n_inner swapped
    wrong = models.exact_draws(model, wrong_y, (4, 5000), np.random.default_rng(1))
    assert set(draws) == set(models.EXACT[model])
    for name, values in draws.items():
        mean, sd = _grid_moments(model, name, data)
        error = sd / np.sqrt(values.size)  # independent draws
        assert abs(values.mean() - mean) < 4 * error, name
        assert values.std() == pytest.approx(sd, rel=0.05), name
        assert abs(wrong[name].mean() - mean) > 20 * error, name
