"""BHM-ZOiB's log-density and its gradient written out in numba: the reference `bench_likelihood.py` times
against PyMC's graph (issue 32, point 2). Not used by riskreport: it was 1.18× (27,390 scores) and 1.28–1.35×
(1,260) as fast as PyMC's interior-only graph per gradient, not the 2× that would justify a second
implementation of the model; log Γ and ψ of the two beta shapes dominate both.

The same density as `models.build_pymc_model("zoib", ...)` in the zero-sum parameterisation (checked by the
benchmark against PyMC's value and gradient, numba backend, at random points), over the same unconstrained
vector in the same order (`free_layout`): log sd_sys, log sd_top, the intercept the data see b′ (`b_data`),
per group the mean m_g ~ N(0, sd_g/√n_g) and the n_g − 1 free coordinates of u_g ~ ZeroSumNormal(sd_g)
(PyMC's zero-sum transform), log φ, logit zoi, logit coi; b's Student-t prior at b = b′ − m_sys − m_top.
The interior scores' Beta terms are fused in one loop: log Γ and ψ of μφ and (1 − μ)φ from one shifted
Stirling series each, the two shifts sharing one log and one division.

`logp_callback` and `expand_callback` have the C signatures of nutpie's numba callbacks; every size and
array comes through the `user_data` buffer (`pack`), so they depend on neither the data nor the shapes.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import types

HEADER = 16  # buffer: [length, n_inner, n_sys, n_top, n0, n1, b_loc, b_scale, sd_scale, unused…], then the data
LOG_2PI_HALF = HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
NU = 3.0  # the Student-t degrees of freedom of brms's default priors
GAMMA_SHAPE = GAMMA_RATE = 0.01  # φ ~ Gamma(0.01, 0.01)
_SIGNATURE_LOGP = types.int64(
    types.uint64,
    types.CPointer(types.double),
    types.CPointer(types.double),
    types.CPointer(types.double),
    types.voidptr,
)
_SIGNATURE_EXPAND = types.int64(
    types.uint64, types.uint64, types.CPointer(types.double), types.CPointer(types.double), types.voidptr
)


@numba.njit(inline="always")
def digamma(x):
    """ψ(x), x > 0: the recurrence ψ(x) = ψ(x + 1) − 1/x up to x ≥ 6, then the asymptotic series (error < 1e-13)."""
    shift = 0.0
    while x < 6.0:
        shift -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (
        -1.0 / 12
        + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132 + f * (691.0 / 32760 - f / 12)))))
    )
    return shift + math.log(x) - 0.5 / x + series


@numba.njit(inline="always")
def _shift(x):
    """(z, P, P′) with z = x + k ≥ 7 and P = x(x + 1)⋯(x + k − 1): log Γ(x) = log Γ(z) − log P, ψ(x) = ψ(z) − P′/P."""
    p, d = 1.0, 0.0
    while x < 7.0:
        d = d * x + p
        p *= x
        x += 1.0
    return x, p, d


@numba.njit(inline="always")
def _stirling(z):
    """(log Γ(z), ψ(z)) for z ≥ 7 by their asymptotic series (error < 1e-14)."""
    r = 1.0 / z
    f = r * r
    log_z = math.log(z)
    lgamma = (
        (z - 0.5) * log_z
        - z
        + HALF_LOG_2PI
        + r
        * (
            1.0 / 12
            + f
            * (-1.0 / 360 + f * (1.0 / 1260 + f * (-1.0 / 1680 + f * (1.0 / 1188 + f * (-691.0 / 360360 + f / 156)))))
        )
    )
    psi = (
        log_z
        - 0.5 * r
        + f
        * (
            -1.0 / 12
            + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132 + f * (691.0 / 32760 - f / 12)))))
        )
    )
    return lgamma, psi


@numba.njit(inline="always")
def softplus(x):
    """log(1 + eˣ) without overflow."""
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


@numba.njit(inline="always")
def student_t(x, nu, loc, scale):
    """(log density, d/dx) of Student-t(ν, loc, scale) at x."""
    z = (x - loc) / scale
    value = (
        math.lgamma(0.5 * (nu + 1))
        - math.lgamma(0.5 * nu)
        - 0.5 * math.log(nu * math.pi)
        - math.log(scale)
        - 0.5 * (nu + 1) * math.log1p(z * z / nu)
    )
    return value, -(nu + 1) * z / (scale * (nu + z * z))


@numba.njit(inline="always")
def _inflation(x, grad, o, hits, misses):
    """hits·log p + misses·log(1 − p) with p = logit⁻¹(x[o]) ~ Beta(1, 1) and the Jacobian p(1 − p); its gradient."""
    z = x[o]
    p = 1.0 / (1.0 + math.exp(-z))
    grad[o] = (hits + 1.0) * (1.0 - p) - (misses + 1.0) * p
    return -(hits + 1.0) * softplus(-z) - (misses + 1.0) * softplus(z)


@numba.njit
def _group(x, grad, o_sd, o_m, o_u, n, u, sums, scale):
    """Prior terms of one group (sd ~ half-Student-t, m, u) given dℓ/du_j of the likelihood in `sums`; writes the
    gradient of log sd, m and the free u coordinates; returns (log density, dℓ/dm from b's prior excluded)."""
    log_sd = x[o_sd]
    sd = math.exp(log_sd)
    m = x[o_m]
    t_value, t_grad = student_t(sd, NU, 0.0, scale)
    value = math.log(2.0) + t_value + log_sd  # half-Student-t with the log transform's Jacobian
    d_log_sd = t_grad * sd + 1.0
    # m ~ N(0, sd/√n)
    value += -LOG_2PI_HALF - log_sd + 0.5 * math.log(n) - 0.5 * n * m * m / (sd * sd)
    d_log_sd += -1.0 + n * m * m / (sd * sd)
    grad[o_m] = -n * m / (sd * sd)
    # u ~ ZeroSumNormal(sd): −Σu²/(2sd²) − (n − 1)(log √(2π) + log sd); u = PyMC's zero-sum extension of the free z
    squares = 0.0
    for j in range(n):
        squares += u[j] * u[j]
        sums[j] -= u[j] / (sd * sd)
    value += -0.5 * squares / (sd * sd) - (n - 1) * (LOG_2PI_HALF + log_sd)
    d_log_sd += -(n - 1) + squares / (sd * sd)
    grad[o_sd] = d_log_sd
    root = math.sqrt(n)
    head = 0.0
    for j in range(n - 1):
        head += sums[j]
    for j in range(n - 1):  # dℓ/dz_j = g_j − Σ_{k<n−1} g_k / (√n + n) − g_{n−1}/√n
        grad[o_u + j] = sums[j] - head / (root + n) - sums[n - 1] / root
    return value


@numba.njit(inline="always")
def _extend(x, o_u, n, u):
    """PyMC's zero-sum backward transform: n values summing to 0 from the n − 1 free coordinates x[o_u:]."""
    total = 0.0
    for j in range(n - 1):
        total += x[o_u + j]
    root = math.sqrt(n)
    norm = total / (root + n)
    for j in range(n - 1):
        u[j] = x[o_u + j] - norm
    u[n - 1] = -total / root


@numba.njit
def log_density(x, grad, buffer):
    """log p(x) + its gradient into `grad`, for the unconstrained `x` in `layout`'s order and the data in `buffer`."""
    n_in, n_sys, n_top = int(buffer[1]), int(buffer[2]), int(buffer[3])
    n0, n1 = buffer[4], buffer[5]
    o_sd_sys, o_sd_top, o_b = 0, 1, 2
    o_m_sys, o_u_sys = 3, 4
    o_m_top = o_u_sys + n_sys - 1
    o_u_top = o_m_top + 1
    o_phi = o_u_top + n_top - 1
    o_zoi, o_coi = o_phi + 1, o_phi + 2
    u_sys, u_top = np.empty(n_sys), np.empty(n_top)
    _extend(x, o_u_sys, n_sys, u_sys)
    _extend(x, o_u_top, n_top, u_top)
    b_data, phi = x[o_b], math.exp(x[o_phi])
    log_y = buffer[HEADER : HEADER + n_in]
    log1m_y = buffer[HEADER + n_in : HEADER + 2 * n_in]
    system = buffer[HEADER + 2 * n_in : HEADER + 3 * n_in]
    topic = buffer[HEADER + 3 * n_in : HEADER + 4 * n_in]
    g_sys, g_top = np.zeros(n_sys), np.zeros(n_top)
    value, g_b, g_phi = 0.0, 0.0, 0.0
    for i in range(n_in):  # the interior scores: Beta(μφ, (1 − μ)φ), μ = logit⁻¹(η)
        s, t = int(system[i]), int(topic[i])
        mu = 1.0 / (1.0 + math.exp(-(b_data + u_sys[s] + u_top[t])))
        a = mu * phi
        c = phi - a
        z_a, p_a, d_a = _shift(a)
        z_c, p_c, d_c = _shift(c)
        lgamma_a, psi_a = _stirling(z_a)
        lgamma_c, psi_c = _stirling(z_c)
        inverse = 1.0 / (p_a * p_c)
        psi_a -= d_a * p_c * inverse  # one log and one division for both shifts
        psi_c -= d_c * p_a * inverse
        value += (a - 1.0) * log_y[i] + (c - 1.0) * log1m_y[i] - lgamma_a - lgamma_c + math.log(p_a * p_c)
        d_eta = a * (1.0 - mu) * (log_y[i] - log1m_y[i] - psi_a + psi_c)
        g_sys[s] += d_eta
        g_top[t] += d_eta
        g_b += d_eta
        g_phi += mu * (log_y[i] - psi_a) + (1.0 - mu) * (log1m_y[i] - psi_c)
    value += n_in * math.lgamma(phi)
    g_phi += n_in * digamma(phi)
    # φ ~ Gamma(0.01, 0.01), log transform
    value += GAMMA_SHAPE * math.log(GAMMA_RATE) - math.lgamma(GAMMA_SHAPE) + GAMMA_SHAPE * x[o_phi] - GAMMA_RATE * phi
    grad[o_phi] = g_phi * phi + GAMMA_SHAPE - GAMMA_RATE * phi
    # zoi, coi ~ Beta(1, 1) (density 1), logodds transform: Jacobian log p + log(1 − p)
    value += _inflation(x, grad, o_zoi, n0 + n1, float(n_in)) + _inflation(x, grad, o_coi, n1, n0)
    value += _group(x, grad, o_sd_sys, o_m_sys, o_u_sys, n_sys, u_sys, g_sys, buffer[8])
    value += _group(x, grad, o_sd_top, o_m_top, o_u_top, n_top, u_top, g_top, buffer[8])
    # b ~ Student-t(3, loc, scale) at b = b′ − m_sys − m_top
    t_value, t_grad = student_t(b_data - x[o_m_sys] - x[o_m_top], NU, buffer[6], buffer[7])
    value += t_value
    grad[o_b] = g_b + t_grad
    grad[o_m_sys] -= t_grad
    grad[o_m_top] -= t_grad
    return value


@numba.cfunc(_SIGNATURE_LOGP)
def logp_callback(dim, x_, grad_, logp_, user_data_):
    """nutpie's log-density callback: 0, or 3 / 4 for a non-finite gradient / value (as nutpie's own)."""
    header = numba.carray(user_data_, HEADER, np.float64)
    buffer = numba.carray(user_data_, int(header[0]), np.float64)
    x, grad, logp = numba.carray(x_, dim), numba.carray(grad_, dim), numba.carray(logp_, 1)
    value = log_density(x, grad, buffer)
    logp[0] = value
    for j in range(dim):
        if not math.isfinite(grad[j]):
            return 3
    return 0 if math.isfinite(value) else 4


@numba.cfunc(_SIGNATURE_EXPAND)
def expand_callback(dim, expanded, x_, out_, user_data_):
    """nutpie's expand callback: x, then b, sd_sys, sd_top, r_sys, r_top, φ, zoi, coi (`stored_layout`)."""
    header = numba.carray(user_data_, HEADER, np.float64)
    n_sys, n_top = int(header[2]), int(header[3])
    x, out = numba.carray(x_, dim), numba.carray(out_, expanded)
    if expanded != dim + 6 + n_sys + n_top:
        return -1
    out[:dim] = x
    u_sys, u_top = np.empty(n_sys), np.empty(n_top)
    _extend(x, 4, n_sys, u_sys)
    o_m_top = 4 + n_sys - 1
    _extend(x, o_m_top + 1, n_top, u_top)
    o_phi = o_m_top + n_top
    k = dim
    out[k] = x[2] - x[3] - x[o_m_top]  # b = b′ − m_sys − m_top
    out[k + 1], out[k + 2] = math.exp(x[0]), math.exp(x[1])
    k += 3
    for j in range(n_sys):
        out[k + j] = x[3] + u_sys[j]
    k += n_sys
    for j in range(n_top):
        out[k + j] = x[o_m_top] + u_top[j]
    k += n_top
    out[k] = math.exp(x[o_phi])
    out[k + 1] = 1.0 / (1.0 + math.exp(-x[o_phi + 1]))
    out[k + 2] = 1.0 / (1.0 + math.exp(-x[o_phi + 2]))
    return 0


FREE = ("sd_sys_log__", "sd_top_log__", "b_data", "m_sys", "u_sys_zerosum__", "m_top", "u_top_zerosum__")
FREE_FAMILY = ("phi_log__", "zoi_logodds__", "coi_logodds__")


def free_layout(n_sys: int, n_top: int) -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of the unconstrained vector, in PyMC's order for `models.build_pymc_model("zoib", ...)`."""
    sizes = {"u_sys_zerosum__": (n_sys - 1,), "u_top_zerosum__": (n_top - 1,)}
    return [(name, sizes.get(name, ())) for name in FREE + FREE_FAMILY]


def stored_layout(n_sys: int, n_top: int) -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of what `expand_callback` writes after the unconstrained vector: the stored variables."""
    return [("b", ()), ("sd_sys", ()), ("sd_top", ()), ("r_sys", (n_sys,)), ("r_top", (n_top,))] + [
        (name, ()) for name in ("phi", "zoi", "coi")
    ]


def pack(inputs: dict, n_sys: int, n_top: int) -> np.ndarray:
    """The `user_data` buffer of the callbacks from `models.model_inputs("zoib", ...)` (a header, then log y,
    log(1 − y), system and topic of the interior scores)."""
    n_in = len(inputs["log_y"])
    header = np.zeros(HEADER)
    header[1:9] = [
        n_in,
        n_sys,
        n_top,
        inputs["n0"],
        inputs["n1"],
        inputs["b_loc"],
        inputs["b_scale"],
        inputs["sd_scale"],
    ]
    buffer = np.concatenate(
        [header, inputs["log_y"], inputs["log1m_y"], inputs["system"].astype(float), inputs["topic"].astype(float)]
    )
    buffer[0] = len(buffer)
    buffer.flags.writeable = False
    return buffer
