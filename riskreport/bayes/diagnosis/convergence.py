"""Convergence diagnostics of MCMC draws, vectorised over parameters: the rank-normalised split R̂ and the bulk and
tail effective sample sizes of Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization, folding,
and localization: an improved R̂ for assessing convergence of MCMC", Bayesian Analysis 16(2), 667–718, with the
autocorrelations truncated by Geyer's (1992) initial positive and monotone sequences.

Every function takes draws shaped (chains, draws, *parameter shape) and returns one value per parameter, shaped like
the parameter (`()` for draws shaped (chains, draws)). The definitions, down to their edge cases, are those of ArviZ
0.23 (`arviz.rhat`, `arviz.ess(method="bulk" | "tail")`), computed for all parameters at once (the autocovariances
by FFT along the draws, Geyer's sequences as array operations over lags and parameters); the values equal ArviZ's
to 1e-9 relative (tested):

- each chain is split into halves (the middle draw of an odd count is dropped);
- rank normalisation: average ranks r over all split chains of a parameter (S values), z = Φ⁻¹((r − 3/8) / (S + 1/4));
- bulk ESS: the ESS of the rank-normalised split chains; tail ESS: the smaller ESS of the indicators draw ≤ q
  at the 5 % and 95 % quantiles q (type 7, over all draws, before the split); mean ESS (`arviz.ess(method="mean")`,
  which sets the relative efficiency of PSIS-LOO): the ESS of the split chains themselves;
- R̂: the larger of the split R̂ of the rank-normalised draws and of the rank-normalised draws folded about
  their median, |draw − median|;
- a parameter with a NaN draw, or fewer than 4 draws per chain, gives NaN (R̂ also needs 2 chains); a sequence
  whose range is below float resolution (1e-15: a constant, or an indicator that is always true) has ESS = its
  size, chains × draws after the split; R̂ of a constant is NaN (0 / 0).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import fft, special

from riskreport.errors import ParameterError

MIN_DRAWS = 4  # per chain; fewer gives NaN
BLOM_OFFSET = 3 / 8  # the fractional offset of the rank normalisation (Blom 1958)
TAIL_PROBS = (0.05, 0.95)  # the quantiles whose indicators give the tail ESS
RESOLUTION = float(np.finfo(float).resolution)  # a sequence whose range is below this is constant


def ess_bulk(values: ArrayLike) -> np.ndarray:
    """Bulk effective sample size per parameter: the ESS of the rank-normalised split chains."""
    x, shape = _parameters(values)
    if _too_short(x):
        return np.full(shape, np.nan)
    return _shaped(_ess(_z_scale(_split_chains(x))), _invalid(x, min_chains=1), shape)


def ess_mean(values: ArrayLike) -> np.ndarray:
    """Effective sample size of the mean per parameter: the ESS of the split chains (float64), not rank-normalised."""
    x, shape = _parameters(values)
    if _too_short(x):
        return np.full(shape, np.nan)
    return _shaped(_ess(_split_chains(x).astype(float)), _invalid(x, min_chains=1), shape)


def ess_tail(values: ArrayLike) -> np.ndarray:
    """Tail effective sample size per parameter: the smaller ESS of the indicators at the 5 % and 95 % quantiles."""
    x, shape = _parameters(values)
    if _too_short(x):
        return np.full(shape, np.nan)
    return _shaped(_tail_ess(x), _invalid(x, min_chains=1), shape)


def rhat_rank(values: ArrayLike) -> np.ndarray:
    """Rank-normalised split R̂ per parameter: the larger of the bulk and the folded (tail) R̂."""
    x, shape = _parameters(values)
    if _too_short(x):
        return np.full(shape, np.nan)
    return _shaped(_rank_rhat(*_z_scales(_split_chains(x))), _invalid(x, min_chains=2), shape)


def rhat_ess(values: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(R̂, bulk ESS, tail ESS) per parameter, as `rhat_rank`, `ess_bulk` and `ess_tail`, ranking the draws once."""
    x, shape = _parameters(values)
    if _too_short(x):
        return np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    z, folded = _z_scales(_split_chains(x))
    invalid = _invalid(x, min_chains=1)
    return (
        _shaped(_rank_rhat(z, folded), _invalid(x, min_chains=2), shape),
        _shaped(_ess(z), invalid, shape),
        _shaped(_tail_ess(x), invalid, shape),
    )


def _parameters(values: ArrayLike) -> tuple[np.ndarray, tuple[int, ...]]:
    """The draws as a C-ordered array (parameters, chains, draws), and the parameter shape. Floating draws keep
    their precision (ArviZ folds float32 draws about their median in float32); others become float64."""
    array = np.asarray(values)
    if not np.issubdtype(array.dtype, np.floating):
        array = array.astype(float)
    if array.ndim < 2:
        raise ParameterError(f"draws must be shaped (chains, draws, *parameter shape); got shape {array.shape}")
    shape = array.shape[2:]
    flat = array.reshape(array.shape[:2] + (math.prod(shape),))
    return np.ascontiguousarray(np.moveaxis(flat, 2, 0)), shape


def _too_short(x: np.ndarray) -> bool:
    """No parameter (nothing to compute), or no chain or fewer than `MIN_DRAWS` draws per chain (all NaN)."""
    return len(x) == 0 or x.shape[1] < 1 or x.shape[2] < MIN_DRAWS


def _invalid(x: np.ndarray, min_chains: int) -> np.ndarray:
    """Per parameter: too few chains for the diagnostic, or a NaN draw."""
    if x.shape[1] < min_chains:
        return np.ones(len(x), dtype=bool)
    return np.isnan(x).any(axis=(1, 2))


def _shaped(result: np.ndarray, invalid: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    result = np.array(result, dtype=float)
    result[invalid] = np.nan
    return result.reshape(shape)


def _split_chains(x: np.ndarray) -> np.ndarray:
    """(parameters, 2 × chains, draws // 2): the first halves of the chains, then their second halves."""
    draws = x.shape[2]
    half = draws // 2
    return np.concatenate((x[:, :, :half], x[:, :, draws - half :]), axis=1)


def _sorted(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each parameter's chains and draws flattened and sorted: (sorted values (parameters, S), and for each of them
    its index in `x.ravel()`)."""
    flat = x.reshape(len(x), -1)
    order = np.argsort(flat, axis=1)
    order += np.arange(0, flat.size, flat.shape[1])[:, None]
    return x.ravel()[order], order


def _normal_scores(ordered: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Rank normalisation Φ⁻¹((r − 3/8) / (S + 1/4)) of sorted values (r: the average rank of a tie group, S values
    per parameter), written to the flat positions `index` of the result."""
    size = ordered.shape[1]
    # one normal quantile per possible rank r = k / 2: a tie group's average rank is a half-integer
    quantiles = special.ndtri((np.arange(2, 2 * size + 1) / 2 - BLOM_OFFSET) / (size - 2 * BLOM_OFFSET + 1))
    scores = np.empty(ordered.shape)
    scores[:] = quantiles[::2]  # untied: rank = position
    rows, left = np.nonzero(ordered[:, 1:] == ordered[:, :-1])  # tied pairs (left, left + 1)
    if rows.size:
        pair = rows * size + left
        starts = np.concatenate(([True], np.diff(pair) != 1))  # runs of adjacent tied pairs: one tie group each
        group = np.cumsum(starts) - 1
        first, last = left[starts][group], left[np.concatenate((starts[1:], [True]))][group] + 1
        scores[rows, left] = scores[rows, left + 1] = quantiles[first + last]  # rank (first + last) / 2 + 1
    z = np.empty(ordered.size)
    z[index] = scores
    return z


def _z_scale(x: np.ndarray) -> np.ndarray:
    """Rank normalisation over each parameter's chains and draws (parameters, chains, draws)."""
    return _normal_scores(*_sorted(x)).reshape(x.shape)


def _z_scales(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rank normalisations of x and of |x − median| over each parameter's chains and draws, from one sort."""
    ordered, index = _sorted(x)
    return _normal_scores(ordered, index).reshape(x.shape), _folded_scores(ordered, index).reshape(x.shape)


def _folded_scores(ordered: np.ndarray, index: np.ndarray) -> np.ndarray:
    """`_normal_scores` of |value − median| from the sorted values and their flat positions `index`."""
    size = ordered.shape[1]
    middle = ordered[:, size // 2] if size % 2 else ordered[:, size // 2 - 1 : size // 2 + 1].mean(axis=1)
    folded = np.abs(ordered - middle[:, None])  # falls then rises: two sorted runs, which a stable sort merges
    refold = np.argsort(folded, axis=1, kind="stable")
    refold += np.arange(0, folded.size, size)[:, None]
    return _normal_scores(folded.ravel()[refold], index.ravel()[refold])


def _rhat(z: np.ndarray) -> np.ndarray:
    """Split R̂ of (parameters, chains, draws): √((B/W + n − 1) / n), B = n × the variance of the chain means."""
    draws = z.shape[2]
    between = draws * z.mean(axis=2).var(axis=1, ddof=1)
    within = z.var(axis=2, ddof=1).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt((between / within + draws - 1) / draws)


def _rank_rhat(z: np.ndarray, folded: np.ndarray) -> np.ndarray:
    """The larger of the R̂ of the rank-normalised draws `z` and of the rank-normalised |draw − median|."""
    bulk, tail = _rhat(z), _rhat(folded)
    return np.where(tail > bulk, tail, bulk)  # Python's max(bulk, tail): NaN bulk stays NaN


def _tail_ess(x: np.ndarray) -> np.ndarray:
    """min(ESS of draw ≤ q05, ESS of draw ≤ q95), quantiles over all draws of each parameter, ESS on split chains."""
    flat = x.reshape(len(x), -1)
    size = flat.shape[1]
    positions = [_type7_position(size, prob) for prob in TAIL_PROBS]
    part = np.partition(flat, sorted({i for k, _ in positions for i in (k - 1, k)}), axis=1)
    part = part.astype(float, copy=False)  # as SciPy's: float32 draws give float64 quantiles
    quantiles = [(1.0 - gamma) * part[:, k - 1] + gamma * part[:, k] for k, gamma in positions]
    indicators = np.concatenate([(x <= q[:, None, None]).astype(float) for q in quantiles])
    low, high = np.split(_ess(_split_chains(indicators)), 2)
    return np.where(high < low, high, low)  # Python's min(low, high)


def _type7_position(size: int, prob: float) -> tuple[int, float]:
    """(k, γ) of the type 7 quantile (1 − γ) x₍ₖ₎ + γ x₍ₖ₊₁₎ of `size` sorted values (Hyndman & Fan 1996), as
    SciPy's `mquantiles(alphap=1, betap=1)` computes it."""
    alpha = beta = 1  # plotting positions of type 7: m = α + p (1 − α − β), SciPy's arithmetic
    aleph = size * prob + (alpha + prob * (1.0 - alpha - beta))
    k = int(np.floor(np.clip(aleph, 1, size - 1)))
    return k, float(np.clip(aleph - k, 0, 1))


def _mean_autocovariance(x: np.ndarray, lags: int) -> np.ndarray:
    """(parameters, lags): the mean over chains of each chain's autocovariances at lags 0 … lags − 1, by FFT along
    the draws zero-padded to a 5-smooth length ≥ draws + lags (no wrap-around below lag `lags`)."""
    draws = x.shape[-1]
    length = fft.next_fast_len(draws + lags, real=True)
    centred = x - x.mean(axis=-1, keepdims=True)
    transform = np.fft.rfft(centred, n=length, axis=-1)
    parts = transform.view(float)  # real and imaginary parts, interleaved
    squares = np.einsum("pcf,pcf->pf", parts, parts)  # summed over chains: the FFT is linear
    power = (squares[:, ::2] + squares[:, 1::2]) / x.shape[1]  # the mean |F|² over chains
    return np.fft.irfft(power, n=length, axis=-1)[..., :lags] / draws


def _ess(x: np.ndarray) -> np.ndarray:
    """ESS of (parameters, chains, draws): chains × draws / τ, τ by Geyer's initial monotone sequence, at least
    1 / log10(chains × draws); a sequence with a range below float resolution has ESS chains × draws.

    The autocorrelations are first computed up to lag draws / 8 (a shorter FFT), then, for the parameters whose
    sequence has not ended there, up to every lag."""
    draws = x.shape[2]
    ess, unfinished = _ess_to_lag(x, min(draws, max(MIN_DRAWS, draws // 8)))
    if unfinished.any():
        ess[unfinished] = _ess_to_lag(x[unfinished], draws)[0]
    ess[np.ptp(x, axis=(1, 2)) < RESOLUTION] = x.shape[1] * draws
    return ess


def _ess_to_lag(x: np.ndarray, lags: int) -> tuple[np.ndarray, np.ndarray]:
    """`_ess` from the autocorrelations below lag `lags`, and which parameters' sequences need more lags."""
    _, chains, draws = x.shape
    size = chains * draws
    acov = _mean_autocovariance(x, lags)
    mean_var = acov[:, 0] * draws / (draws - 1.0)
    var_plus = mean_var * (draws - 1.0) / draws
    if chains > 1:
        var_plus = var_plus + x.mean(axis=2).var(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (mean_var[:, None] - acov) / var_plus[:, None]
        rho[:, 0] = 1.0
        tau, unfinished = _geyer_tau(rho, draws)
        floor = 1 / np.log10(size)
        ess = size / np.where(floor > tau, floor, tau)  # Python's max(tau, floor): NaN stays NaN
    ess[np.isnan(rho[:, 1])] = np.nan
    return ess, unfinished


def _geyer_tau(rho: np.ndarray, draws: int) -> tuple[np.ndarray, np.ndarray]:
    """τ = −1 + 2 Σ P̃ₖ (k < K) + ρ₂ₖ from the autocorrelations `rho` (parameters, lags ≤ draws), Pₖ = ρ₂ₖ + ρ₂ₖ₊₁,
    and which parameters need more lags than `rho` holds.

    K: the first pair with Pₖ ≤ 0, or the last pair within the draws (2K < draws − 2); P̃ₖ = min(P₀ … Pₖ), the
    initial monotone sequence; ρ₂ₖ is added when positive or when Pₖ ≥ 0 (ArviZ's and Stan's last term).
    """
    count, lags = rho.shape
    within_draws = max(0, (draws - 3) // 2)
    pairs = min(within_draws, max(0, (lags - 2) // 2))
    sums = rho[:, 0 : 2 * pairs + 2 : 2] + rho[:, 1 : 2 * pairs + 2 : 2]  # P₀ … P_pairs
    positive = sums[:, :pairs] > 0
    if pairs:
        stop = np.where(positive.all(axis=1), pairs, np.argmin(positive, axis=1))
    else:
        stop = np.zeros(count, dtype=int)
    monotone = np.minimum.accumulate(sums[:, :pairs], axis=1)
    total = np.where(np.arange(pairs) < stop[:, None], monotone, 0.0).sum(axis=1)
    rows = np.arange(count)
    even = rho[rows, 2 * stop]
    last = np.where((even > 0) | (sums[rows, stop] >= 0), even, 0.0)
    return -1.0 + 2.0 * total + last, (stop == pairs) & (pairs < within_draws)
