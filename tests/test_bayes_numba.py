"""BHM-ZOiB's likelihood as PyMC evaluates it (interior scores only) and as `bayes.zoib_numba` writes it out:
the same values and gradients as the references, at random points."""

from __future__ import annotations

import ctypes

import numpy as np
import pandas as pd
import pytest
from scipy import special

from riskreport import bayes
from riskreport.bayes import likelihood, models


def _data(systems: int = 5, topics: int = 7, seed: int = 0) -> bayes.BayesData:
    """Beta scores with exact 0s and 1s."""
    rng = np.random.default_rng(seed)
    rows = [(f"s{s}", f"t{t}", float(rng.beta(2, 3))) for s in range(systems) for t in range(topics)]
    table = pd.DataFrame(rows, columns=["system", "topic", "score"])
    table.loc[::9, "score"] = 0.0
    table.loc[4::11, "score"] = 1.0
    return bayes.scores_data(table)


def test_interior_beta_terms_equal_the_pointwise_log_likelihood():
    """The graph's likelihood (Beta terms for 0 < y < 1 only, counts for the 0s and 1s) is Σ log p(y_n | θ)."""
    data = _data()
    priors = models.brms_priors("zoib", data.y)
    model = models.build_pymc_model("zoib", data, priors)
    stored = ["b", "r_sys", "r_top", "phi", "zoi", "coi"]
    outputs = model.replace_rvs_by_values([model[name] for name in stored])
    total = model.logp(vars=[term for term in model.potentials if term.name.startswith("obs")])
    function = model.compile_fn([total, *outputs], inputs=model.value_vars, on_unused_input="ignore", point_fn=True)
    rng = np.random.default_rng(3)
    for _ in range(4):
        point = {name: rng.normal(0, 0.7, np.shape(value)) for name, value in model.initial_point().items()}
        value, *draw = function(point)
        draws = {name: np.asarray(v)[None] for name, v in zip(stored, draw, strict=True)}
        expected = likelihood.log_likelihood("zoib", data, draws).sum()
        assert value == pytest.approx(expected, rel=1e-12)


def test_digamma_matches_scipy():
    from riskreport.bayes import zoib_numba

    x = np.geomspace(1e-6, 1e4, 3001)
    ours = np.array([zoib_numba.digamma(v) for v in x])
    assert np.allclose(ours, special.digamma(x), rtol=1e-12, atol=1e-11)


def _callback(function, n_dim, buffer, x):
    grad, logp = np.zeros(n_dim), np.zeros(1)
    pointer = ctypes.POINTER(ctypes.c_double)
    code = function.ctypes(
        n_dim, x.ctypes.data_as(pointer), grad.ctypes.data_as(pointer), logp.ctypes.data_as(pointer), buffer.ctypes.data
    )
    return code, logp[0], grad


@pytest.mark.parametrize("shape", [(5, 7), (3, 40)])
def test_numba_log_density_and_gradient_equal_pymcs(shape):
    """At random points: the gradient equal to PyMC's to 1e-10 relative, the value up to one constant.

    PyMC's graph is compiled as nutpie compiles it (numba backend, scipy's ψ): PyTensor's C backend
    computes ψ with Bernardo's AS 103 and its 10-digit constants, 1e-10-relative off itself.

    The constant (|c| < 1e-6) is PyTensor's: it casts the Python float constants of the Student-t and
    half-Student-t normalisers (ν/2.0) to float32, so log Γ(3/2) is computed in single precision; this
    module's value agrees with scipy.stats (checked here on the b prior).
    """
    from riskreport.bayes import zoib_numba

    data = _data(*shape, seed=shape[1])
    priors = models.brms_priors("zoib", data.y)
    model = models.build_pymc_model("zoib", data, priors)
    inputs = models.model_inputs("zoib", data, priors)
    native = zoib_numba.native_model(model, inputs, *shape, lambda *args: None)
    assert native is not None, [v.name for v in model.value_vars]
    function = model.logp_dlogp_function(ravel_inputs=True, mode="NUMBA")
    function.set_extra_values({})
    rng = np.random.default_rng(1)
    differences = []
    for _ in range(8):
        x = rng.normal(0, 0.8, native.n_dim)
        value, grad = function(x)
        code, ours, our_grad = _callback(zoib_numba.logp_callback, native.n_dim, native.user_data, x)
        assert code == 0
        assert np.allclose(our_grad, grad, rtol=1e-10, atol=1e-10 * np.max(np.abs(grad)))
        differences.append(ours - value)
    assert np.ptp(differences) < 1e-10 * abs(value) and abs(differences[0]) < 1e-6


def test_expand_gives_the_stored_variables_as_pymc_does():
    from riskreport.bayes import zoib_numba

    data = _data()
    priors = models.brms_priors("zoib", data.y)
    model = models.build_pymc_model("zoib", data, priors)
    native = zoib_numba.native_model(model, models.model_inputs("zoib", data, priors), 5, 7, lambda *args: None)
    names = [name for name, _ in zoib_numba.stored_layout(5, 7)]
    outputs = model.replace_rvs_by_values([model[n] for n in names])
    function = model.compile_fn(outputs, inputs=model.value_vars, on_unused_input="ignore", point_fn=True)
    x = np.random.default_rng(2).normal(0, 0.8, native.n_dim)
    point, start = {}, 0
    for name, shape in zoib_numba.free_layout(5, 7):
        size = int(np.prod(shape))
        point[name] = x[start : start + size].reshape(shape)
        start += size
    out = np.zeros(native.n_expanded)
    pointer = ctypes.POINTER(ctypes.c_double)
    code = zoib_numba.expand_callback.ctypes(
        native.n_dim,
        native.n_expanded,
        x.ctypes.data_as(pointer),
        out.ctypes.data_as(pointer),
        native.user_data.ctypes.data,
    )
    assert code == 0 and np.array_equal(out[: native.n_dim], x)
    names_stored, slices, _ = native.shape_info
    for name, expected in zip(names, function(point), strict=True):
        assert np.allclose(out[slices[names_stored.index(name)]], expected, rtol=1e-13, atol=1e-14), name
