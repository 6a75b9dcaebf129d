"""The terms of the models' log-densities and their gradients, in numba: special functions, the group effects'
priors, the likelihoods (`kernels` assembles them into nutpie's callbacks; tests/test_bayes_models.py checks the
sums against PyMC). Every function uses IEEE arithmetic (`error_model="numpy"`): a division by zero gives ±inf and
nutpie rejects the point, never a Python exception inside a C callback.
"""

from __future__ import annotations

import math

import numba
import numpy as np

HEADER = 16
"""buffer[0:16]: length, model code, n (scores in the loop), n_sys, n_top, centred sys, centred top, b_loc,
b_scale, sd_scale, sigma_scale, N (all scores), Σy², Σy, unused; then the model's data (`pack`)."""
HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
LOG_2 = math.log(2.0)
NU = 3.0  # the Student-t degrees of freedom of brms's default priors
GAMMA_SHAPE = GAMMA_RATE = 0.01  # φ ~ Gamma(0.01, 0.01)
SQRT_2_PI = math.sqrt(2.0 / math.pi)
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
ALPHA_SD = 4.0  # λ ~ N(0, 4)


# ------------------------------------------------------------------------------------------------ special functions
@numba.njit(inline="always", error_model="numpy")
def _shift(x):
    """(z, P, P′) with z = x + 7 and P = x(x + 1)⋯(x + 6): log Γ(x) = log Γ(z) − log P, ψ(x) = ψ(z) − P′/P.

    Always seven steps, unrolled without a branch on x (measured faster than shifting only up to 7, whose trip
    count depends on x: tests/benchmarks/bench_likelihood.py); x above 1e6 is not shifted (P would overflow)."""
    if x > 1e6:
        return x, 1.0, 0.0
    p, d = x, 1.0
    for k in range(1, 7):
        t = x + k
        d = d * t + p
        p *= t
    return x + 7.0, p, d


@numba.njit(inline="always", error_model="numpy")
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


@numba.njit(inline="always", error_model="numpy")
def _lgamma_digamma(x):
    """(log Γ(x), ψ(x)) for x > 0, through `_shift` and `_stirling` (relative error < 2e-14 on [1e-6, 1e4])."""
    z, p, d = _shift(x)
    lgamma, psi = _stirling(z)
    return lgamma - math.log(p), psi - d / p


@numba.njit(inline="always", error_model="numpy")
def _log_erfc_neg(w):
    """(log(1 + erf w), its derivative) = (log erfc(−w), 2/√π·e^(−w²)/erfc(−w)); asymptotic below w = −26."""
    if w > -26.0:
        tail = math.erfc(-w)
        return math.log(tail), TWO_OVER_SQRT_PI * math.exp(-w * w) / tail
    x = -w  # erfc(x) = e^(−x²)/(x√π)·(1 − 1/(2x²) + 3/(4x⁴) − 15/(8x⁶) + 105/(16x⁸))
    f = 1.0 / (x * x)
    series = 1.0 + f * (-0.5 + f * (0.75 + f * (-1.875 + f * 6.5625)))
    return -x * x - math.log(x * math.sqrt(math.pi)) + math.log(series), 2.0 * x / series


@numba.njit(inline="always", error_model="numpy")
def _student_t(x, loc, scale):
    """(log density, d/dx) of Student-t(3, loc, scale) at x."""
    z = (x - loc) / scale
    value = (
        math.lgamma(0.5 * (NU + 1))
        - math.lgamma(0.5 * NU)
        - 0.5 * math.log(NU * math.pi)
        - math.log(scale)
        - 0.5 * (NU + 1) * math.log1p(z * z / NU)
    )
    return value, -(NU + 1) * z / (scale * (NU + z * z))


@numba.njit(inline="always", error_model="numpy")
def _half_t_log(log_x, scale):
    """(log density, d/d log x) of x = exp(log_x) ~ half-Student-t(3, 0, scale), the log transform's Jacobian in."""
    x = math.exp(log_x)
    value, slope = _student_t(x, 0.0, scale)
    return LOG_2 + value + log_x, slope * x + 1.0


# ------------------------------------------------------------------------------------------------------ group effects
@numba.njit(inline="always", error_model="numpy")
def _extend(x, o, n, out):
    """PyMC's zero-sum backward transform: n values summing to 0 from the n − 1 free coordinates x[o:]."""
    total = 0.0
    for j in range(n - 1):
        total += x[o + j]
    root = math.sqrt(n)
    norm = total / (root + n)
    for j in range(n - 1):
        out[j] = x[o + j] - norm
    out[n - 1] = -total / root


@numba.njit(error_model="numpy")
def _deviations(x, o_sd, o_u, n, centred, out):
    """u of one group (its zero-sum deviations): the free coordinates extended, times sd when scaled."""
    _extend(x, o_u, n, out)
    if not centred:
        sd = math.exp(x[o_sd])
        for j in range(n):
            out[j] *= sd


@numba.njit(error_model="numpy")
def _group(x, grad, o_sd, o_m, o_u, n, centred, u, g_u, scale, t_slope):
    """Prior terms of one group given dℓ/du (`g_u`, the likelihood's) and the slope of b's prior (`t_slope`):
    sd ~ half-Student-t (log transform), z_m ~ N(0, 1) with m = sd/√n·z_m, u ~ ZeroSumNormal(sd) (centred) or
    u = sd·z_u with z_u ~ ZeroSumNormal(1); writes the gradient of log sd, z_m and the free u coordinates."""
    log_sd = x[o_sd]
    sd = math.exp(log_sd)
    value, d_log_sd = _half_t_log(log_sd, scale)
    z_m = x[o_m]
    root = math.sqrt(n)
    value += -HALF_LOG_2PI - 0.5 * z_m * z_m
    grad[o_m] = -z_m - t_slope * sd / root  # b = b′ − m_sys − m_top
    d_log_sd -= t_slope * sd / root * z_m
    squares = 0.0
    if centred:
        for j in range(n):
            squares += u[j] * u[j]
            g_u[j] -= u[j] / (sd * sd)
        value += -0.5 * squares / (sd * sd) - (n - 1) * (HALF_LOG_2PI + log_sd)
        d_log_sd += squares / (sd * sd) - (n - 1)
    else:  # the likelihood sees u = sd·z: dℓ/dz = sd·dℓ/du, dℓ/dlog sd = Σ dℓ/du·u
        for j in range(n):
            d_log_sd += g_u[j] * u[j]
            z = u[j] / sd
            squares += z * z
            g_u[j] = sd * g_u[j] - z
        value += -0.5 * squares - (n - 1) * HALF_LOG_2PI
    grad[o_sd] = d_log_sd
    head = 0.0
    for j in range(n - 1):
        head += g_u[j]
    for j in range(n - 1):  # through the zero-sum transform: g_j − Σ_{k<n−1} g_k/(√n + n) − g_{n−1}/√n
        grad[o_u + j] = g_u[j] - head / (root + n) - g_u[n - 1] / root
    return value


# --------------------------------------------------------------------------------------------------------- likelihoods
@numba.njit(error_model="numpy")
def _gaussian(c, u_sys, u_top, n_sys, n_top, log_sigma, buffer, g_sys, g_top):
    """(log-likelihood, dℓ/db′, dℓ/dlog σ) of y ~ N(b′ + u_s + u_t, σ) from the sufficient statistics; adds dℓ/du."""
    n, syy, sy = buffer[11], buffer[12], buffer[13]
    o = HEADER
    sums_sys, counts_sys = buffer[o : o + n_sys], buffer[o + n_sys : o + 2 * n_sys]
    o += 2 * n_sys
    sums_top, counts_top = buffer[o : o + n_top], buffer[o + n_top : o + 2 * n_top]
    o += 2 * n_top
    base, k = buffer[o], int(buffer[o + 1])  # the counts C_st = base + W_st, W sparse (`kernels.cell_counts`)
    listed = buffer[o + 2 : o + 2 + 3 * k]
    total_sys, total_top = 0.0, 0.0
    for s in range(n_sys):
        total_sys += u_sys[s]
    for t in range(n_top):
        total_top += u_top[t]
    rows = np.full(n_sys, base * total_top)  # Σ_t C_st u_t
    across = np.full(n_top, base * total_sys)  # Σ_s C_st u_s
    for j in range(k):
        s, t, w = int(listed[3 * j]), int(listed[3 * j + 1]), listed[3 * j + 2]
        rows[s] += w * u_top[t]
        across[t] += w * u_sys[s]
    cross = 0.0  # Σ_st C_st u_s u_t
    for s in range(n_sys):
        cross += u_sys[s] * rows[s]
        g_sys[s] = sums_sys[s] - counts_sys[s] * (c + u_sys[s]) - rows[s]  # residual sums, / σ² below
    sum_eta = n * c
    y_eta = c * sy
    squares = n * c * c + 2.0 * cross
    for s in range(n_sys):
        sum_eta += counts_sys[s] * u_sys[s]
        y_eta += sums_sys[s] * u_sys[s]
        squares += counts_sys[s] * u_sys[s] * (u_sys[s] + 2.0 * c)
    for t in range(n_top):
        g_top[t] = sums_top[t] - counts_top[t] * (c + u_top[t]) - across[t]
        sum_eta += counts_top[t] * u_top[t]
        y_eta += sums_top[t] * u_top[t]
        squares += counts_top[t] * u_top[t] * (u_top[t] + 2.0 * c)
    q = syy - 2.0 * y_eta + squares
    precision = math.exp(-2.0 * log_sigma)
    for s in range(n_sys):
        g_sys[s] *= precision
    for t in range(n_top):
        g_top[t] *= precision
    value = -0.5 * q * precision - n * (log_sigma + HALF_LOG_2PI)
    return value, (sy - sum_eta) * precision, q * precision - n


@numba.njit(error_model="numpy")
def _skew_normal(eta_of, buffer, n_scores, log_sigma, lam, g_eta):
    """(log-likelihood, dℓ/dlog σ, dℓ/dλ) of brms's skew-normal (mean η, sd σ, shape λ); writes dℓ/dη_i."""
    y = buffer[HEADER : HEADER + n_scores]
    sigma = math.exp(log_sigma)
    delta = lam / math.sqrt(1.0 + lam * lam)
    k = math.sqrt(1.0 - 2.0 * delta * delta / math.pi)
    omega = sigma / k
    offset = delta * SQRT_2_PI  # z = (y − η)/ω + δ√(2/π)
    value, sum_gz, sum_gz_r, sum_hz = 0.0, 0.0, 0.0, 0.0
    scale = lam / math.sqrt(2.0)
    for i in range(n_scores):
        r = y[i] - eta_of[i]
        z = r / omega + offset
        h, slope = _log_erfc_neg(scale * z)
        value += h - 0.5 * z * z
        gz = -z + slope * scale
        sum_gz += gz
        sum_gz_r += gz * r
        sum_hz += slope * z
        g_eta[i] = -gz / omega
    value -= n_scores * (math.log(omega) + HALF_LOG_2PI)
    d_omega = -n_scores / omega - sum_gz_r / (omega * omega)
    d_delta = SQRT_2_PI * sum_gz + d_omega * sigma * (2.0 * delta / math.pi) / (k * k * k)
    d_lam = sum_hz / math.sqrt(2.0) + d_delta / (1.0 + lam * lam) ** 1.5
    return value, d_omega * omega, d_lam


@numba.njit(error_model="numpy")
def _beta(eta_of, buffer, n_in, log_phi, g_eta):
    """(log-likelihood, dℓ/dlog φ) of the interior scores ~ Beta(μφ, (1 − μ)φ), μ = logit⁻¹(η); writes dℓ/dη_i."""
    log_y = buffer[HEADER : HEADER + n_in]
    log1m_y = buffer[HEADER + n_in : HEADER + 2 * n_in]
    phi = math.exp(log_phi)
    value, g_phi = 0.0, 0.0
    for i in range(n_in):
        mu = 1.0 / (1.0 + math.exp(-eta_of[i]))
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
        g_eta[i] = a * (1.0 - mu) * (log_y[i] - log1m_y[i] - psi_a + psi_c)
        g_phi += mu * (log_y[i] - psi_a) + (1.0 - mu) * (log1m_y[i] - psi_c)
    lgamma_phi, psi_phi = _lgamma_digamma(phi)
    value += n_in * lgamma_phi
    g_phi += n_in * psi_phi
    # φ ~ Gamma(0.01, 0.01), log transform
    value += GAMMA_SHAPE * math.log(GAMMA_RATE) - math.lgamma(GAMMA_SHAPE) + GAMMA_SHAPE * log_phi - GAMMA_RATE * phi
    return value, g_phi * phi + GAMMA_SHAPE - GAMMA_RATE * phi


@numba.njit(error_model="numpy")
def _skew_prior(grad, o_sigma, log_sigma, lam, sigma_scale):
    """σ ~ half-Student-t (log transform) and λ ~ N(0, 4): value, and their slopes added to grad."""
    value, slope = _half_t_log(log_sigma, sigma_scale)
    grad[o_sigma] += slope
    grad[o_sigma + 1] += -lam / (ALPHA_SD * ALPHA_SD)
    return value - 0.5 * (lam / ALPHA_SD) ** 2 - HALF_LOG_2PI - math.log(ALPHA_SD)
