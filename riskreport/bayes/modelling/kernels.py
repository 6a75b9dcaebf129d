"""The models' log-densities with their gradients, written out in numba: what nutpie samples.

One C callback per model family (Gaussian, skew-normal, beta) computes the log-density and its gradient of
its models of `models.MODELS` (the model is a number in the data buffer), and one expands an unconstrained
point into the variables a fit stores; every size and array reaches them through one float64 buffer (`pack`),
so they depend on neither the data nor its shape. numba compiles them once per machine and keeps the machine
code in the riskreport cache (`io.cache.use_numba_cache`, `cache=True`, `_cached`): a later process loads it in
well under a second, for any data. The terms they add up are in `_kernel_terms`.

The density is the one of `models.build_pymc_model(..., exact=True)` (the zero-sum parameterisation, the
same unconstrained vector in `free_layout`'s order), checked against PyMC's `logp` and `dlogp` at random
points (tests/test_bayes_models.py); PyMC stays the reference model. Two exact shortcuts:

- The Gaussian models depend on the data only through sufficient statistics: Σy², Σy, the per-system and
  per-topic sums and counts and the system × topic counts C, so with η = b′ + u_s + u_t
  Σ(y − η)² = Σy² − 2Σyη + Ση² costs O(S·T) once, not O(scores) (BHM-Gaussian), or O(1) (Paired-Gaussian).
- zoi, coi (BHM-ZOiB) and zi (BHM-ZOiB-Rank) are not in the vector: with Beta(1, 1) priors they enter only
  through the counts of 0s, 1s and interior scores, independent of everything else, so their posterior is
  exactly Beta(1 + n0 + n1, 1 + n_inner) × Beta(1 + n1, 1 + n0) (zi: Beta(1 + n0, 1 + n_inner)), drawn
  directly (`models.exact_draws`).

The interior scores' Beta terms are fused in one loop: log Γ and ψ of μφ and (1 − μ)φ from one shifted
Stirling series each, the two shifts sharing one log and one division (tests/benchmarks/bench_bayes_gradient.py).
"""

from __future__ import annotations

import math
import sys
import threading

import numba
import numpy as np
from numba import types

from riskreport.bayes.modelling import _kernel_terms
from riskreport.bayes.modelling._kernel_terms import (
    HALF_LOG_2PI,
    HEADER,
    _beta,
    _deviations,
    _gaussian,
    _group,
    _half_t_log,
    _skew_normal,
    _skew_prior,
    _student_t,
)
from riskreport.io.cache import use_numba_cache

use_numba_cache()  # the machine code goes to the riskreport cache, never beside this file

CODES = {"gaussian": 0, "skew_normal": 1, "zoib": 2, "zoib_rank": 3, "paired_gaussian": 4, "paired_skew_normal": 5}
_SIGNATURE_LOGP = types.int64(
    types.uint64, types.CPointer(types.double), types.CPointer(types.double), types.CPointer(types.double),
    types.CPointer(types.double),
)  # fmt: skip
_SIGNATURE_EXPAND = types.int64(
    types.uint64, types.uint64, types.CPointer(types.double), types.CPointer(types.double),
    types.CPointer(types.double),
)  # fmt: skip


# ------------------------------------------------------------------------------------------------------ the densities
@numba.njit(error_model="numpy")
def log_density(x, grad, buffer):
    """log p(x) + its gradient into `grad`, for the unconstrained `x` (`free_layout`) and the data in `buffer`."""
    code = int(buffer[1])
    if code == 0 or code == 4:
        return gaussian_density(x, grad, buffer)
    if code == 1 or code == 5:
        return skew_normal_density(x, grad, buffer)
    return beta_density(x, grad, buffer)


@numba.njit(error_model="numpy")
def gaussian_density(x, grad, buffer):
    """`log_density` of BHM-Gaussian (code 0) and Paired-Gaussian (4): from sufficient statistics."""
    if int(buffer[1]) == 4:
        return _paired(x, grad, buffer, 4)
    n_sys, n_top, o_f, u_sys, u_top, g_sys, g_top = _effects(x, buffer)
    value, g_b, g_sigma = _gaussian(x[2], u_sys, u_top, n_sys, n_top, x[o_f], buffer, g_sys, g_top)
    term, slope = _half_t_log(x[o_f], buffer[10])
    grad[o_f] = g_sigma + slope
    return _effect_priors(x, grad, buffer, value + term, g_b, u_sys, u_top, g_sys, g_top)


@numba.njit(error_model="numpy")
def skew_normal_density(x, grad, buffer):
    """`log_density` of BHM-Skew-Normal (code 1) and Paired-Skew-Normal (5)."""
    if int(buffer[1]) == 5:
        return _paired(x, grad, buffer, 5)
    n_sys, n_top, o_f, u_sys, u_top, g_sys, g_top = _effects(x, buffer)
    value, g_b = _per_score(x, grad, buffer, 1, int(buffer[2]), o_f, x[2], u_sys, u_top, g_sys, g_top)
    return _effect_priors(x, grad, buffer, value, g_b, u_sys, u_top, g_sys, g_top)


@numba.njit(error_model="numpy")
def beta_density(x, grad, buffer):
    """`log_density` of BHM-ZOiB (code 2) and BHM-ZOiB-Rank (3): their interior scores, φ, β."""
    n_sys, n_top, o_f, u_sys, u_top, g_sys, g_top = _effects(x, buffer)
    code = int(buffer[1])
    value, g_b = _per_score(x, grad, buffer, code, int(buffer[2]), o_f, x[2], u_sys, u_top, g_sys, g_top)
    return _effect_priors(x, grad, buffer, value, g_b, u_sys, u_top, g_sys, g_top)


@numba.njit(error_model="numpy")
def _effects(x, buffer):
    """(n_sys, n_top, offset of the family's parameters, u_sys, u_top, zeros for dℓ/du_sys, dℓ/du_top)."""
    n_sys, n_top = int(buffer[3]), int(buffer[4])
    o_m_top = 3 + n_sys
    u_sys, u_top = np.empty(n_sys), np.empty(n_top)
    _deviations(x, 0, 4, n_sys, buffer[5] > 0.5, u_sys)
    _deviations(x, 1, o_m_top + 1, n_top, buffer[6] > 0.5, u_top)
    return n_sys, n_top, o_m_top + n_top, u_sys, u_top, np.zeros(n_sys), np.zeros(n_top)


@numba.njit(error_model="numpy")
def _effect_priors(x, grad, buffer, value, g_b, u_sys, u_top, g_sys, g_top):
    """`value` plus the priors of b and both groups, given the likelihood's dℓ/db′ and dℓ/du; writes their gradient."""
    n_sys, n_top = u_sys.size, u_top.size
    o_m_top = 3 + n_sys
    m_sys = math.exp(x[0]) / math.sqrt(n_sys) * x[3]
    m_top = math.exp(x[1]) / math.sqrt(n_top) * x[o_m_top]
    b_value, t_slope = _student_t(x[2] - m_sys - m_top, buffer[7], buffer[8])  # b's prior at b = b′ − m_sys − m_top
    grad[2] = g_b + t_slope
    value += b_value
    value += _group(x, grad, 0, 3, 4, n_sys, buffer[5] > 0.5, u_sys, g_sys, buffer[9], t_slope)
    value += _group(x, grad, 1, o_m_top, o_m_top + 1, n_top, buffer[6] > 0.5, u_top, g_top, buffer[9], t_slope)
    return value


@numba.njit(error_model="numpy")
def _per_score(x, grad, buffer, code, n, o_f, c, u_sys, u_top, g_sys, g_top):
    """(log-likelihood with the family's priors, dℓ/db′) of the skew-normal (code 1) and beta (2, 3) models;
    adds dℓ/du to g_sys, g_top and writes the family's gradient."""
    first = HEADER + (n if code == 1 else 2 * n)  # system codes, then topic codes, after y or log y, log(1 − y)
    system, topic = buffer[first : first + n], buffer[first + n : first + 2 * n]
    ranks = buffer[first + 2 * n : first + 3 * n] if code == 3 else buffer[0:0]
    eta = np.empty(n)
    for i in range(n):
        eta[i] = c + u_sys[int(system[i])] + u_top[int(topic[i])]
    if code == 3:  # ZOiB-Rank: + β·(rank − mean rank)
        for i in range(n):
            eta[i] += x[o_f + 1] * ranks[i]
    g_eta = np.empty(n)
    if code == 1:
        value, g_sigma, g_lam = _skew_normal(eta, buffer, n, x[o_f], x[o_f + 1], g_eta)
        grad[o_f], grad[o_f + 1] = g_sigma, g_lam
        value += _skew_prior(grad, o_f, x[o_f], x[o_f + 1], buffer[10])
    else:
        value, g_phi = _beta(eta, buffer, n, x[o_f], g_eta)
        grad[o_f] = g_phi
    g_b, g_beta = 0.0, 0.0
    for i in range(n):
        g_sys[int(system[i])] += g_eta[i]
        g_top[int(topic[i])] += g_eta[i]
        g_b += g_eta[i]
    if code == 3:
        for i in range(n):
            g_beta += g_eta[i] * ranks[i]
        grad[o_f + 1] = g_beta  # β is flat
    return value, g_b


@numba.njit(error_model="numpy")
def _paired(x, grad, buffer, code):
    """The intercept-only models: b ~ Student-t, σ ~ half-Student-t (log), y ~ N(b, σ) from n, Σy, Σy² (code 4) or
    brms's skew-normal(b, σ, λ) with λ ~ N(0, 4) (code 5)."""
    b = x[0]
    value, slope_b = _student_t(b, buffer[7], buffer[8])
    grad[0] = slope_b
    if code == 4:
        n, syy, sy = buffer[11], buffer[12], buffer[13]
        precision = math.exp(-2.0 * x[1])
        q = syy - 2.0 * b * sy + n * b * b
        value += -0.5 * q * precision - n * (x[1] + HALF_LOG_2PI)
        grad[0] += (sy - n * b) * precision
        term, slope = _half_t_log(x[1], buffer[10])
        grad[1] = q * precision - n + slope
        return value + term
    n = int(buffer[2])
    eta, g_eta = np.full(n, b), np.empty(n)
    likelihood, g_sigma, g_lam = _skew_normal(eta, buffer, n, x[1], x[2], g_eta)
    grad[1], grad[2] = g_sigma, g_lam
    grad[0] += g_eta.sum()
    return value + likelihood + _skew_prior(grad, 1, x[1], x[2], buffer[10])


@numba.njit(error_model="numpy")
def expand(x, out, buffer):
    """The stored variables of `x` into `out` (`stored_layout`): b, sd_sys, sd_top, r_sys, r_top, the family's."""
    code = int(buffer[1])
    if code >= 4:
        out[0], out[1] = x[0], math.exp(x[1])
        if code == 5:
            out[2] = x[2]
        return
    n_sys, n_top = int(buffer[3]), int(buffer[4])
    o_m_top = 3 + n_sys
    o_f = o_m_top + n_top
    sd_sys, sd_top = math.exp(x[0]), math.exp(x[1])
    m_sys, m_top = sd_sys / math.sqrt(n_sys) * x[3], sd_top / math.sqrt(n_top) * x[o_m_top]
    out[0], out[1], out[2] = x[2] - m_sys - m_top, sd_sys, sd_top
    _deviations(x, 0, 4, n_sys, buffer[5] > 0.5, out[3 : 3 + n_sys])
    _deviations(x, 1, o_m_top + 1, n_top, buffer[6] > 0.5, out[3 + n_sys : 3 + n_sys + n_top])
    for j in range(n_sys):
        out[3 + j] += m_sys
    for j in range(n_top):
        out[3 + n_sys + j] += m_top
    k = 3 + n_sys + n_top
    out[k] = math.exp(x[o_f])  # σ or φ
    if code == 1 or code == 3:
        out[k + 1] = x[o_f + 1]  # λ or β


@numba.njit(inline="always", error_model="numpy")
def _finish(value, grad, logp):
    """nutpie's return code: 0, or 3 / 4 for a non-finite gradient / value (as nutpie's own callbacks)."""
    logp[0] = value
    for j in range(grad.size):
        if not math.isfinite(grad[j]):
            return 3
    return 0 if math.isfinite(value) else 4


@numba.njit(inline="always", error_model="numpy")
def _views(dim, x_, grad_, logp_, user_data_):
    header = numba.carray(user_data_, HEADER)
    return (
        numba.carray(x_, dim),
        numba.carray(grad_, dim),
        numba.carray(logp_, 1),
        numba.carray(user_data_, int(header[0])),
    )


def _logp_gaussian(dim, x_, grad_, logp_, user_data_):
    x, grad, logp, buffer = _views(dim, x_, grad_, logp_, user_data_)
    return _finish(gaussian_density(x, grad, buffer), grad, logp)


def _logp_skew_normal(dim, x_, grad_, logp_, user_data_):
    x, grad, logp, buffer = _views(dim, x_, grad_, logp_, user_data_)
    return _finish(skew_normal_density(x, grad, buffer), grad, logp)


def _logp_beta(dim, x_, grad_, logp_, user_data_):
    x, grad, logp, buffer = _views(dim, x_, grad_, logp_, user_data_)
    return _finish(beta_density(x, grad, buffer), grad, logp)


def _expand(dim, expanded, x_, out_, user_data_):
    header = numba.carray(user_data_, HEADER)
    expand(numba.carray(x_, dim), numba.carray(out_, expanded), numba.carray(user_data_, int(header[0])))
    return 0


_DENSITIES = {"gaussian": _logp_gaussian, "skew_normal": _logp_skew_normal, "beta": _logp_beta}
_CALLBACKS: dict = {}
_LOCK = threading.Lock()  # a background `sampling.prepare` and a fit never compile the same callback twice


def _cached(signature, function):
    """numba's `cfunc` of `function`, kept in numba's cache under a name that holds the SHA-256 of this module's and
    `_kernel_terms`' source: numba checks only the stamp of the file that defines a cached function, so a change
    to the terms it calls would otherwise load stale machine code."""
    import hashlib
    from pathlib import Path

    source = b"".join(Path(str(module.__file__)).read_bytes() for module in (_kernel_terms, sys.modules[__name__]))
    function.__qualname__ = f"{function.__name__}_{hashlib.sha256(source).hexdigest()[:16]}"
    return numba.cfunc(signature, cache=True, error_model="numpy")(function)


def _family(model: str) -> str:
    return "beta" if model.startswith("zoib") else model.removeprefix("paired_")


def ready(model: str) -> bool:
    """Whether `model`'s callbacks are in this process already (`callbacks` then returns at once)."""
    return _family(model) in _CALLBACKS and "expand" in _CALLBACKS


def callbacks(model: str):
    """(log-density callback, expand callback) of `model`: numba `cfunc`s, compiled at the first call on this
    machine (a few seconds) and loaded from the riskreport cache after (`cache=True`). One log-density serves
    both models of a family (`gaussian`, `skew_normal`, `beta`), for every data shape."""
    family = _family(model)
    with _LOCK:
        if family not in _CALLBACKS:
            _CALLBACKS[family] = _cached(_SIGNATURE_LOGP, _DENSITIES[family])
        if "expand" not in _CALLBACKS:
            _CALLBACKS["expand"] = _cached(_SIGNATURE_EXPAND, _expand)
    return _CALLBACKS[family], _CALLBACKS["expand"]


# ------------------------------------------------------------------------------------------------- layouts and data
FAMILY_FREE = {
    "gaussian": ["sigma_log__"],
    "skew_normal": ["sigma_log__", "alpha"],
    "zoib": ["phi_log__"],
    "zoib_rank": ["phi_log__", "beta"],
    "paired_gaussian": ["b", "sigma_log__"],
    "paired_skew_normal": ["b", "sigma_log__", "alpha"],
}


def free_layout(model: str, n_sys: int, n_top: int, centred=(True, True)) -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of the unconstrained vector: PyMC's value variables of `build_pymc_model(..., exact=True)`."""
    if model.startswith("paired"):
        return [(name, ()) for name in FAMILY_FREE[model]]
    groups = []
    for group, n, centre in (("sys", n_sys, centred[0]), ("top", n_top, centred[1])):
        groups += [(f"z_m_{group}", ()), (f"{'u' if centre else 'z_u'}_{group}_zerosum__", (n - 1,))]
    return (
        [("sd_sys_log__", ()), ("sd_top_log__", ()), ("b_data", ())]
        + groups
        + [(name, ()) for name in FAMILY_FREE[model]]
    )


def stored_layout(model: str, n_sys: int, n_top: int) -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of what `expand` writes: the variables a fit stores, but those drawn exactly (`models.EXACT`)."""
    family = {"gaussian": ["sigma"], "skew_normal": ["sigma", "alpha"], "zoib": ["phi"], "zoib_rank": ["phi", "beta"]}
    if model.startswith("paired"):
        return [(name, ()) for name in ["b", "sigma"] + (["alpha"] if model.endswith("skew_normal") else [])]
    return [("b", ()), ("sd_sys", ()), ("sd_top", ()), ("r_sys", (n_sys,)), ("r_top", (n_top,))] + [
        (name, ()) for name in family[model]
    ]


def pack(model: str, inputs: dict, n_sys: int, n_top: int, centred=(True, True)) -> np.ndarray:
    """The callbacks' buffer from `models.model_inputs(model, ...)`: the header, then the model's data."""
    code = CODES[model]
    header = np.zeros(HEADER)
    header[1] = code
    header[3:11] = [n_sys, n_top, centred[0], centred[1], inputs["b_loc"], inputs["b_scale"],
                    inputs.get("sd_scale", 0.0), inputs.get("sigma_scale", 0.0)]  # fmt: skip
    if "y" in inputs:
        y = np.asarray(inputs["y"], dtype=float)
        header[2], header[11:14] = len(y), [len(y), float(y @ y), float(y.sum())]
    if code == 0:
        system, topic = inputs["system"], inputs["topic"]
        parts = [
            np.bincount(system, y, n_sys),
            np.bincount(system, None, n_sys).astype(float),
            np.bincount(topic, y, n_top),
            np.bincount(topic, None, n_top).astype(float),
            cell_counts(system, topic, n_sys, n_top),
        ]
    elif code in (1, 5):
        parts = [y] + ([inputs["system"].astype(float), inputs["topic"].astype(float)] if code == 1 else [])
    elif code == 4:
        parts = []
    else:
        header[2] = len(inputs["log_y"])
        parts = [inputs["log_y"], inputs["log1m_y"], inputs["system"].astype(float), inputs["topic"].astype(float)]
        if code == 3:
            parts.append(inputs["rank_centred"])
    buffer = np.concatenate([header, *[np.asarray(p, dtype=float) for p in parts]])
    buffer[0] = len(buffer)
    buffer.flags.writeable = False
    return buffer


def cell_counts(system: np.ndarray, topic: np.ndarray, n_sys: int, n_top: int) -> np.ndarray:
    """The system × topic counts C as the Gaussian kernel reads them: C = base·J + W with J all ones and W sparse,
    `[base, k, s_1, t_1, w_1, …, s_k, t_k, w_k]`; base 1 when most cells are filled (a complete design: k = 0), else
    0 (W = C). Its products with the effects, Σ_t C_st u_t and Σ_s C_st u_s, then cost O(S + T + k), not O(S·T)."""
    cells = np.zeros((n_sys, n_top))
    np.add.at(cells, (system, topic), 1.0)
    base = 1.0 if np.count_nonzero(cells != 1.0) < np.count_nonzero(cells) else 0.0
    s, t = np.nonzero(cells != base)
    listed = np.column_stack([s, t, cells[s, t] - base]).ravel()
    return np.concatenate([[base, float(len(s))], listed])


def initial_point(model: str, inputs: dict, layout: list, seed: int) -> np.ndarray:
    """A chain's start: the priors' support points (sd and σ at their scale, b′ at b's location, φ = 1, the rest 0)
    on the unconstrained scale, jittered by U(−1, 1) as PyMC's `jitter_rvs` does; seeded."""
    start = {
        "sd_sys_log__": np.log(inputs.get("sd_scale", 1.0)),
        "sd_top_log__": np.log(inputs.get("sd_scale", 1.0)),
        "sigma_log__": np.log(inputs.get("sigma_scale", 1.0)),
        "b_data": inputs["b_loc"],
        "b": inputs["b_loc"],
    }
    rng = np.random.default_rng(seed)
    flat = np.concatenate([np.full(int(np.prod(shape)), start.get(name, 0.0)) for name, shape in layout])
    return flat + rng.uniform(-1.0, 1.0, flat.size)
