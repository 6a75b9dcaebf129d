"""The studentized range distribution (Tukey HSD's reference), by fixed Gauss–Legendre quadrature over a
whole vector of q at once.

For k means and ν error degrees of freedom, Q = range(Z_1..Z_k) / S with S² ~ χ²_ν / ν, and

    P(Q ≤ q) = ∫ f_S(s) · R(q s) ds,    R(w) = k ∫ φ(z) [Φ(z + w) − Φ(z)]^(k−1) dz,

R being the distribution of the range of k standard normals (ν = ∞; Lund & Lund 1983, the formula
`scipy.stats.studentized_range` integrates). scipy integrates each q on its own, adaptively (`nquad`,
absolute tolerance 1e-11): about 10 ms a value, a second for the 113 values of a Tukey table. Here the same
double integral is a tensor product of fixed rules: z on [−8.5, 8.5] (φ is below 1e-16 beyond), in panels of
width 1/2 with 8 nodes each; s through t = log s between S's quantiles 1e-15 and 1 − 1e-15, in panels of 8 nodes at equal steps of
log-odds, 16 of them, doubled until two rules agree within 1e-11 on up to 12 of the q asked for (few degrees of
freedom and many systems make R(q s) steep in s: up to 512 panels there); the coarser of the two agreeing rules
then serves every q: 0.1 s for Tukey's grid of 113 values. The tests hold it to scipy's own values within scipy's tolerance
(1e-11 on P) over k = 2..200 and ν = 1..10⁶, ν = ∞ included, and to a brute-force `quad` where they differ.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special, stats

ASYMPTOTIC_DF = 100_000  # from here on S is taken as 1 (scipy's switch to the single integral, too)
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(8)
_S_PANELS = (16, 32, 64, 128, 256, 512)  # doubled until two rules agree within TOLERANCE
TOLERANCE = 1e-11  # scipy's absolute tolerance on P


def _composite(edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of Gauss–Legendre panels (8 nodes each) between consecutive `edges`."""
    half = np.diff(edges)[:, None] / 2
    nodes = (edges[:-1, None] + half) + half * _NODES[None, :]
    return nodes.ravel(), (half * _WEIGHTS[None, :]).ravel()


_Z, _Z_WEIGHTS = _composite(np.linspace(-8.5, 8.5, 35))  # 34 panels of width 1/2
_PHI_Z = _Z_WEIGHTS * np.exp(-(_Z**2) / 2) / np.sqrt(2 * np.pi)  # φ(z) dz at every node
_CDF_Z = special.ndtr(_Z)


def range_cdf(w: np.ndarray, k: int) -> np.ndarray:
    """R(w) = P(range of k standard normals ≤ w), elementwise (w ≥ 0)."""
    w = np.asarray(w, dtype=float)
    inner = np.clip(special.ndtr(_Z + w[..., None]) - _CDF_Z, 0.0, 1.0)
    with np.errstate(divide="ignore"):
        powered = np.exp((k - 1) * np.log(inner))  # 0 where the difference is 0
    return np.clip(k * powered @ _PHI_Z, 0.0, 1.0)


def _scale_rule(df: float, panels: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes s and weights f_S(s) ds of the rule over S = sqrt(χ²_ν / ν), in t = log s: panels between S's
    quantiles at equal steps of log-odds from 1e-15 to 1 − 1e-15, so each panel holds a like share of S's
    mass and of its tails."""
    odds = special.expit(np.linspace(special.logit(1e-15), special.logit(1 - 1e-15), panels + 1))
    t, weights = _composite(np.log(stats.chi.ppf(odds, df) / np.sqrt(df)))
    s = np.exp(t)
    log_density = stats.chi.logpdf(s * np.sqrt(df), df) + 0.5 * np.log(df) + t  # f_S(s) · ds/dt
    return s, weights * np.exp(log_density)


def studentized_range_cdf(q, k: int, df: float) -> np.ndarray:
    """P(Q ≤ q) for the studentized range of `k` means with `df` error degrees of freedom, elementwise."""
    q = np.atleast_1d(np.asarray(q, dtype=float))
    out = np.zeros(q.shape)
    inside = np.isfinite(q) & (q > 0)
    out[np.isposinf(q)] = 1.0
    if df >= ASYMPTOTIC_DF:
        out[inside] = range_cdf(q[inside], k)
        return out
    values = q[inside]
    out[inside] = _mixture(values, k, *_scale_rule(df, _panels(values, k, df)))
    return np.clip(out, 0.0, 1.0)


def _panels(values: np.ndarray, k: int, df: float) -> int:
    """The fewest panels of the rule over S (`_S_PANELS`) at which doubling changes P by less than `TOLERANCE`,
    tried on up to 12 of the q in `values` spread over their range: few degrees of freedom and many means make
    R(q s) steep in s and ask for more."""
    probe = np.unique(np.quantile(values, np.linspace(0, 1, 12))) if len(values) > 12 else values
    previous = None
    for panels in _S_PANELS:
        current = _mixture(probe, k, *_scale_rule(df, panels))
        if previous is not None and np.max(np.abs(current - previous), initial=0.0) < TOLERANCE:
            return panels // 2
        previous = current
    return _S_PANELS[-1]


def _mixture(values: np.ndarray, k: int, s: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """∫ f_S(s) R(q s) ds at each q of `values`, by the rule (s, weights), a chunk of q at a time."""
    chunk = max(1, 2**21 // (len(s) * len(_Z)))  # ~16 MB of temporaries at a time
    parts = [range_cdf(values[i : i + chunk, None] * s[None, :], k) @ weights for i in range(0, len(values), chunk)]
    return np.concatenate(parts) if parts else np.zeros(0)


def studentized_range_sf(q, k: int, df: float) -> np.ndarray:
    """P(Q > q), elementwise: 1 − `studentized_range_cdf` (as scipy computes it, too)."""
    return 1.0 - studentized_range_cdf(q, k, df)


def studentized_range_ppf(level: float, k: int, df: float) -> float:
    """The q with P(Q ≤ q) = `level` (0 < level < 1): Tukey HSD's critical value."""
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    high = 1.0
    while studentized_range_cdf(high, k, df)[0] < level:
        high *= 2
    return float(optimize.brentq(lambda q: studentized_range_cdf(q, k, df)[0] - level, 0.0, high, xtol=1e-14))
