"""Compiled kernels of the LambdaMART objectives (numba, parallel over queries; no Python loop per pair).

`rank_queries` sorts every query by score and gives its NDCG@k; `pair_gradients` accumulates the
pair gradients with |ΔM| replaced by ΔM′ (`objectives` explains the rules and chooses the inputs).
Sorting is stable (ties keep file order), as LightGBM's `lambdarank` sorts.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..io.cache import use_numba_cache

use_numba_cache()  # the machine code goes to the riskreport cache, not beside this file

PLAIN, CONDITIONAL, SCALED, GEORISK = 0, 1, 2, 3  # how ΔM becomes ΔM′ (objectives.KINDS)


@njit(cache=True)
def discounts(n):
    """1 / log2(rank + 1) for ranks 1..n (index 0 is rank 1)."""
    return 1.0 / np.log2(np.arange(n) + 2.0)


@njit(cache=True, parallel=True)
def ideal_dcg(gains, bounds, k):
    """DCG@k of the ideal ranking of every query."""
    n_queries = bounds.shape[0] - 1
    out = np.zeros(n_queries)
    discount = discounts(max(k, 1))
    for q in prange(n_queries):
        ideal = -np.sort(-gains[bounds[q] : bounds[q + 1]])
        for r in range(min(k, ideal.shape[0])):
            out[q] += ideal[r] * discount[r]
    return out


@njit(cache=True, parallel=True)
def rank_queries(scores, gains, bounds, inverse_ideal, k, order, ndcg):
    """Fill `order` (each query's rows by descending score, stable, as offsets in the query) and `ndcg`
    (NDCG@k per query; NaN for a query without a relevant document)."""
    discount = discounts(max(k, 1))
    for q in prange(bounds.shape[0] - 1):
        start, end = bounds[q], bounds[q + 1]
        local = np.argsort(-scores[start:end], kind="mergesort")
        order[start:end] = local
        dcg = 0.0
        for r in range(min(k, end - start)):
            dcg += gains[start + local[r]] * discount[r]
        ndcg[q] = dcg * inverse_ideal[q] if inverse_ideal[q] > 0 else np.nan


@njit(cache=True)
def geo_value(d, x, column, lz, geo):
    """GeoRisk_α of the learner when its score on one query moves from x by d (Dinçer et al. 2016, Eq. 6).

    `column` is the query's column total T_j, `lz` the learner's l_α(z_j) there; `geo` holds S (the
    learner's total), N (grand total), Z (its ZRisk), c (queries) and α. Only query j's terms are
    recomputed: S, T_j and N move by d, the other queries' z summands are kept (O(1) per swap).
    """
    total, grand, zrisk, c, alpha = geo[0] + d, geo[1] + d, geo[2], geo[3], geo[4]
    expected = total * (column + d) / grand if grand > 0 else 0.0
    z = (x + d - expected) / math.sqrt(expected) if expected > 0 else 0.0
    z = z if z >= 0 else (1.0 + alpha) * z
    phi = 0.5 * math.erfc(-(zrisk - lz + z) / c / math.sqrt(2.0))
    return math.sqrt(max(total, 0.0) / c * phi)


@njit(cache=True)
def weight(kind, signed, q, alpha, model, base, column, lz, geo, g0):
    """ΔM′/|ΔM| of a pair whose swap changes the query's NDCG by `signed`."""
    if kind == CONDITIONAL:
        return 1.0 if model[q] + signed >= base[q] else 1.0 + alpha[q]
    if kind == SCALED:
        return 1.0 + alpha[q]
    if kind == GEORISK:
        return abs(geo_value(signed, model[q], column[q], lz[q], geo) - g0) / abs(signed) * geo[5]
    return 1.0


SIGMOID_BINS = 1024 * 1024  # LightGBM's sigmoid table (rank_objective.hpp): 2^20 bins over ±50/σ/2
LIGHTGBM_NORM_OFFSET = 0.009999999776482582  # LightGBM's 0.01f, as the double it becomes


@njit(cache=True)
def lightgbm_sigmoid(gap, sigma):
    """1/(1 + exp(σ·gap)) read from LightGBM's table (the entry its `GetSigmoid` returns), so that the
    lightgbm mode computes LightGBM's gradients to the bit."""
    low = -50.0 / sigma / 2.0
    factor = SIGMOID_BINS / (-2.0 * low)
    if gap <= low:
        index = 0
    elif gap >= -low:
        index = SIGMOID_BINS - 1
    else:
        index = int((gap - low) * factor)
    return 1.0 / (1.0 + math.exp((index / factor + low) * sigma))


@njit(cache=True, parallel=True)
def pair_gradients(
    scores,
    gains,
    labels,
    bounds,
    order,
    inverse_ideal,
    truncation,
    cutoff,
    lightgbm,
    sigma,
    kind,
    alpha,
    model,
    base,
    column,
    lz,
    geo,
    grad,
    hess,
    discount,
    g32,
    h32,
):
    """LambdaMART gradients (LightGBM's sign: minimised) with |ΔM| replaced by ΔM′ = |ΔM|·`weight`.

    Pairs: the document at rank i < `truncation` with every lower-ranked one of another label.
    Discounts are 0 from rank `cutoff` on (the exact change of NDCG@cutoff) unless `cutoff` exceeds
    the query. With `lightgbm`, LightGBM's `lambdarank` arithmetic (`lambdarank_norm`): ΔM′ divided by
    0.01 + |s_hi − s_lo|, ρ from its sigmoid table, λs summed in float32 and scaled by
    log2(1 + Σλ)/Σλ per query, so that α = 0 gives LightGBM's own gradients.
    Work space from the caller, so that no query allocates: `discount` (`discounts` of the longest query),
    `g32`, `h32` (float32, one entry per row; used in the lightgbm mode).
    """
    g0 = geo_value(0.0, 0.0, 0.0, 0.0, geo) if kind == GEORISK else 0.0
    for q in prange(bounds.shape[0] - 1):
        start, end = bounds[q], bounds[q + 1]
        grad[start:end] = 0.0
        hess[start:end] = 0.0
        if inverse_ideal[q] <= 0:
            continue
        n = end - start
        last = min(cutoff, n)  # ranks from `last` on have discount 0
        if kind == GEORISK:
            g0 = geo_value(0.0, model[q], column[q], lz[q], geo)
        spread = scores[start + order[start]] != scores[start + order[end - 1]]
        if lightgbm:
            g32[start:end] = 0.0
            h32[start:end] = 0.0
        total = 0.0
        for i in range(min(n - 1, truncation)):
            a = start + order[start + i]
            d_i = discount[i] if i < last else 0.0
            for j in range(i + 1, n):
                b = start + order[start + j]
                d_j = discount[j] if j < last else 0.0
                if labels[a] == labels[b] or d_i == d_j:
                    continue
                signed = (gains[b] - gains[a]) * (d_i - d_j) * inverse_ideal[q]
                delta = abs(signed) * weight(kind, signed, q, alpha, model, base, column, lz, geo, g0)
                high, low = (a, b) if labels[a] > labels[b] else (b, a)
                gap = scores[high] - scores[low]
                if lightgbm:
                    if spread:
                        delta /= LIGHTGBM_NORM_OFFSET + abs(gap)
                    rho = lightgbm_sigmoid(gap, sigma)
                    lam = rho * (sigma * delta)
                    h = rho * (1.0 - rho) * (sigma * sigma * delta)
                    g32[high] -= np.float32(lam)
                    g32[low] += np.float32(lam)
                    h32[high] += np.float32(h)
                    h32[low] += np.float32(h)
                else:
                    rho = 1.0 / (1.0 + math.exp(sigma * gap))
                    lam = sigma * rho * delta
                    h = sigma * sigma * rho * (1.0 - rho) * delta
                    grad[high] -= lam
                    grad[low] += lam
                    hess[high] += h
                    hess[low] += h
                total += 2.0 * lam
        if lightgbm:
            factor = math.log2(1.0 + total) / total if total > 0 else 1.0
            for r in range(start, end):
                grad[r] = np.float32(g32[r] * factor) if total > 0 else g32[r]
                hess[r] = np.float32(h32[r] * factor) if total > 0 else h32[r]
