"""REML of the model of `riskreport.stats.mixed` on a complete design, through its orthogonal strata.

For a complete design, where every instance of both systems has a
score on the same T topics (k_1 and k_2 instances, which may differ). Then the data split into
orthogonal strata, the eigenspaces of the covariance V, and REML factorises:

    instance x topic contrasts   (k_l − 1)(T − 1) dims   variance σ²_ε
    instance contrasts           k_l − 1 dims            σ²_ε + T·σ²_s       (non-deterministic l)
    topic contrasts              T − 1 pairs (w_1, w_2)  Σ = σ²_t·J + σ²_at·I + σ²_ε·diag(1/k_1, 1/k_2)
    the two system means         absorbed by the fixed effects

so −2·ℓ_REML = df_E·log σ²_ε + SS_E/σ²_ε + df_I·log(σ²_ε + T·σ²_s) + SS_I/(σ²_ε + T·σ²_s)
+ (T − 1)·log|Σ| + tr(Σ⁻¹S) + const, a function of six sums of squares computed in one pass.
With k_1 = k_2, Σ diagonalises along (1, 1) and (1, −1) and the REML estimates are the ANOVA
closed forms when those are ≥ 0; otherwise the four variances are found by L-BFGS-B with the
analytic gradient under the bounds ≥ 0. The GLS effect is the difference of the system means
(V leaves the column space of the design invariant), with
Var = σ²_s·(δ_1/k_1 + δ_2/k_2) + 2σ²_at/T + σ²_ε·(1/k_1 + 1/k_2)/T, δ_l = 1 for non-deterministic l.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import optimize


@dataclass(frozen=True)
class Strata:
    """Sufficient statistics of a complete design (module docstring)."""

    n_topics: int
    k: tuple[int, int]
    means: tuple[float, float]
    ss_residual: float
    df_residual: int
    ss_instance: float
    df_instance: int
    cross: np.ndarray = field(repr=False)  # S: 2 x 2 cross-products of the centred per-topic instance means


def strata(first: np.ndarray, second: np.ndarray) -> Strata:
    """Sums of squares of the orthogonal strata of two complete instances x topics matrices."""
    ss_e = ss_i = 0.0
    df_e = df_i = 0
    topic_means, means = [], []
    n_topics = first.shape[1]
    for y in (first, second):
        k = y.shape[0]
        row, column, grand = y.mean(axis=1, keepdims=True), y.mean(axis=0), y.mean()
        ss_e += float(((y - row - column + grand) ** 2).sum())
        ss_i += float(n_topics * ((row - grand) ** 2).sum())
        df_e += (k - 1) * (n_topics - 1)
        df_i += k - 1
        topic_means.append(column - grand)
        means.append(float(grand))
    centred = np.array(topic_means)
    return Strata(
        n_topics, (first.shape[0], second.shape[0]), (means[0], means[1]), ss_e, df_e, ss_i, df_i, centred @ centred.T
    )


def reml_objective(theta: np.ndarray, st: Strata) -> tuple[float, np.ndarray]:
    """−2·ℓ_REML (up to a constant) and its gradient in (σ²_topic, σ²_topic_system, σ²_instance, σ²_residual)."""
    a, b, s, e = theta
    k1, k2 = st.k
    value, grad = 0.0, np.zeros(4)
    if st.df_residual > 0:
        value += st.df_residual * np.log(e) + st.ss_residual / e
        grad[3] += st.df_residual / e - st.ss_residual / e**2
    if st.df_instance > 0:
        phi = e + st.n_topics * s
        value += st.df_instance * np.log(phi) + st.ss_instance / phi
        d = st.df_instance / phi - st.ss_instance / phi**2
        grad[2] += st.n_topics * d
        grad[3] += d
    s11, s22 = a + b + e / k1, a + b + e / k2
    det = s11 * s22 - a * a
    if not det > 0:
        return np.inf, grad
    inverse = np.array([[s22, -a], [-a, s11]]) / det
    value += (st.n_topics - 1) * np.log(det) + float((inverse * st.cross).sum())
    m = (st.n_topics - 1) * inverse - inverse @ st.cross @ inverse
    grad += [m.sum(), np.trace(m), 0.0, m[0, 0] / k1 + m[1, 1] / k2]
    return float(value), grad


def anova_estimates(st: Strata) -> np.ndarray | None:
    """ANOVA = REML estimates for k_1 = k_2 when all are ≥ 0, else None."""
    if st.k[0] != st.k[1]:
        return None
    k, t1 = st.k[0], st.n_topics - 1
    e = st.ss_residual / st.df_residual if st.df_residual else 0.0
    s = (st.ss_instance / st.df_instance - e) / st.n_topics if st.df_instance else 0.0
    ms_sum = (st.cross[0, 0] + st.cross[1, 1] + 2 * st.cross[0, 1]) / 2 / t1
    ms_diff = (st.cross[0, 0] + st.cross[1, 1] - 2 * st.cross[0, 1]) / 2 / t1
    theta = np.array([(ms_sum - ms_diff) / 2, ms_diff - e / k, s, e])
    return theta if (theta >= 0).all() and (st.df_residual == 0 or e > 0) else None


def start_values(st: Strata) -> np.ndarray:
    """Moment estimates, clipped into the interior: the optimiser's starting point."""
    k1, k2 = st.k
    t1 = st.n_topics - 1
    e = st.ss_residual / st.df_residual if st.df_residual else 0.0
    s = (st.ss_instance / st.df_instance - e) / st.n_topics if st.df_instance else 0.0
    sigma = st.cross / t1
    a = sigma[0, 1]
    b = (sigma[0, 0] - e / k1 + sigma[1, 1] - e / k2) / 2 - a
    total = max(np.trace(sigma) / 2, 1e-300)
    return np.maximum([a, b, s, e], 0.05 * total)


def reml_variances(st: Strata, closed_form: bool = True) -> np.ndarray:
    """REML estimates of (σ²_topic, σ²_topic_system, σ²_instance, σ²_residual) of a complete design.

    The ANOVA closed form where it applies (k_1 = k_2, estimates ≥ 0), else the bounded optimiser.
    """
    exact = anova_estimates(st) if closed_form else None
    if exact is not None:
        return exact
    scale = max(float(np.trace(st.cross)) / 2 / (st.n_topics - 1), st.ss_residual / max(st.df_residual, 1), 1e-300)
    scaled = Strata(
        st.n_topics,
        st.k,
        st.means,
        st.ss_residual / scale,
        st.df_residual,
        st.ss_instance / scale,
        st.df_instance,
        st.cross / scale,
    )
    tiny = 1e-12
    bounds = [
        (0.0, None),
        (tiny if st.df_residual == 0 else 0.0, None),  # Σ must stay positive definite
        (0.0, None) if st.df_instance else (0.0, 0.0),
        (tiny, None) if st.df_residual else (0.0, 0.0),
    ]  # σ²_ε not identifiable: fixed at 0
    lower, upper = zip(*[(lo, np.inf if hi is None else hi) for lo, hi in bounds])
    start = np.clip(start_values(st) / scale, lower, upper)
    result = optimize.minimize(
        reml_objective,
        start,
        args=(scaled,),
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 2000},
    )
    return np.where(result.x <= tiny * 10, 0.0, result.x) * scale
