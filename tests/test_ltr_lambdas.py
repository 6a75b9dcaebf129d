"""The numba kernels of the LambdaMART objectives (riskreport.ltr._lambdas), each against its definition written out in
plain Python: discounts, ideal DCG, stable ranking and NDCG@k, GeoRisk's one-query update (Dinçer et al. 2016, Eq. 6),
the ΔM′ weights, and LightGBM's sigmoid table (rank_objective.hpp)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from riskreport.ltr import _lambdas
from riskreport.ltr.objectives import georisk_state


def test_discounts_are_one_over_log2_of_rank_plus_one():
    assert _lambdas.discounts(5).tolist() == pytest.approx([1 / math.log2(r + 1) for r in range(1, 6)], rel=1e-15)
    assert _lambdas.discounts(1).tolist() == [1.0]


def dcg(gains, k):
    return sum(g / math.log2(r + 2) for r, g in enumerate(gains[:k]))


QUERIES = {  # gains per query: ties, no relevant document, a single document, more documents than k
    "gains": [3.0, 0.0, 7.0, 1.0, 0.0, 0.0, 0.0, 1.0, 15.0, 3.0, 3.0, 0.0, 1.0, 7.0, 0.0],
    "bounds": [0, 4, 6, 7, 15],
}


@pytest.mark.parametrize("k", [1, 2, 3, 8, 20])
def test_ideal_dcg_of_every_query(k):
    gains, bounds = np.array(QUERIES["gains"]), np.array(QUERIES["bounds"], dtype=np.int64)
    expected = [dcg(sorted(gains[s:e], reverse=True), k) for s, e in zip(bounds[:-1], bounds[1:])]
    assert _lambdas.ideal_dcg(gains, bounds, k).tolist() == pytest.approx(expected, rel=1e-14, abs=0)


@pytest.mark.parametrize("k", [1, 3, 20])
def test_rank_queries_sorts_stably_and_gives_ndcg(k):
    gains, bounds = np.array(QUERIES["gains"]), np.array(QUERIES["bounds"], dtype=np.int64)
    scores = np.array([0.5, 0.9, 0.5, -1.0, 2.0, 2.0, 0.3, 0.1, 0.2, 0.2, 0.7, 0.2, -0.5, 0.2, 0.0])
    ideal = _lambdas.ideal_dcg(gains, bounds, k)
    inverse = np.where(ideal > 0, 1 / np.where(ideal > 0, ideal, 1), 0.0)
    order, ndcg = np.full(len(gains), -1, np.int64), np.empty(len(bounds) - 1)
    _lambdas.rank_queries(scores, gains, bounds, inverse, k, order, ndcg)
    for q, (s, e) in enumerate(zip(bounds[:-1], bounds[1:])):
        ranked = sorted(range(e - s), key=lambda r: -scores[s + r])  # Python's sort is stable: ties in row order
        assert order[s:e].tolist() == ranked
        if ideal[q] > 0:
            assert ndcg[q] == pytest.approx(dcg([gains[s + r] for r in ranked], k) / ideal[q], rel=1e-14)
        else:
            assert math.isnan(ndcg[q])


def georisk_one_query_moved(model, baselines, alpha, j, d):
    """GeoRisk_α of the learner (Dinçer et al. 2016, Eq. 6) when its score on query j moves by d: S, N and T_j move
    by d; z_j is recomputed, the other queries' z keep their values before the move."""
    x = np.vstack([model, baselines])
    total, grand, columns = x[0].sum(), x.sum(), x.sum(axis=0)

    def lz(value, column, s, n):
        e = s * column / n
        z = (value - e) / math.sqrt(e) if e > 0 else 0.0
        return z if z >= 0 else (1 + alpha) * z

    c = len(model)
    zrisk = sum(lz(model[i], columns[i], total, grand) for i in range(c) if i != j)
    zrisk += lz(model[j] + d, columns[j] + d, total + d, grand + d)
    return math.sqrt(max(total + d, 0) / c * stats.norm.cdf(zrisk / c))


@pytest.mark.parametrize("seed", range(8))
def test_geo_value_is_the_one_query_update(seed):
    """Scores of every size: seeds 4–7 scaled down so that the grand total N is below 1."""
    rng = np.random.default_rng(seed)
    c = int(rng.integers(1, 8))
    scale = 1.0 if seed < 4 else 0.05
    model, baselines = scale * rng.random(c), scale * rng.random((int(rng.integers(1, 4)), c))
    assert (model.sum() + baselines.sum() < 1) == (seed >= 4)
    alpha = float(rng.choice([0.0, 1.0, 5.0]))
    column, lz, geo = georisk_state(model, baselines, alpha)
    for j in range(c):
        for d in (-model[j], -0.3 * model[j], 0.0, 0.2, 1 - model[j]):
            want = georisk_one_query_moved(model, baselines, alpha, j, d)
            assert _lambdas.geo_value(d, model[j], column[j], lz[j], geo) == pytest.approx(want, rel=1e-12)


def test_geo_value_of_one_query_is_georisk_of_the_moved_matrix():
    """With one query every term is that query's: the update is GeoRisk recomputed from the whole moved matrix."""
    from riskreport.stats.risk import georisk

    model, baselines = np.array([0.4]), np.array([[0.7], [0.2]])
    for alpha in (0.0, 2.0):
        column, lz, geo = georisk_state(model, baselines, alpha)
        for d in (-0.4, -0.1, 0.3):
            exact = georisk(np.vstack([model + d, baselines]), [alpha])[0, 0]
            assert _lambdas.geo_value(d, model[0], column[0], lz[0], geo) == pytest.approx(exact, rel=1e-12)


def test_geo_value_edges():
    """Every score 0 (no expectation): z = 0; a move below a total of 0 (rounding) gives 0, not NaN."""
    column, lz, geo = georisk_state(np.zeros(3), np.zeros((2, 3)), 1.0)
    assert _lambdas.geo_value(0.0, 0.0, column[0], lz[0], geo) == 0.0
    column, lz, geo = georisk_state(np.array([0.2, 0.1]), np.array([[0.5, 0.5]]), 1.0)
    assert _lambdas.geo_value(-0.5, 0.2, column[0], lz[0], geo) == 0.0
    # a query every system scores 0 on (learner moved there): no expectation, z = 0
    model, baselines = np.array([0.5, 0.25]), np.array([[0.4, 0.0]])
    column, lz, geo = georisk_state(model, baselines, 1.0)
    want = georisk_one_query_moved(model, baselines, 1.0, 1, -0.25)
    assert _lambdas.geo_value(-0.25, 0.25, column[1], lz[1], geo) == pytest.approx(want, rel=1e-14)
    assert want == pytest.approx(math.sqrt(0.5 / 2 * stats.norm.cdf(lz[0] / 2)), rel=1e-14)  # S + d = 0.5, c = 2


def test_weights_of_each_kind():
    """ΔM′/|ΔM|: plain 1; conditional 1 unless M_m + ΔM < M_b (then 1 + α′, equality keeping 1); scaled 1 + α′;
    GeoRisk c·|ΔGeoRisk|/|ΔM|."""
    alpha, model, base = np.array([0.5, 2.0]), np.array([0.75, 0.5]), np.array([0.5, 0.25])
    zeros, no_geo = np.zeros(2), np.zeros(6)

    def weight(kind, signed, q, geo=no_geo, column=zeros, lz=zeros, g0=0.0):
        return _lambdas.weight(kind, signed, q, alpha, model, base, column, lz, geo, g0)

    assert weight(_lambdas.PLAIN, -0.5, 0) == 1.0
    assert weight(_lambdas.CONDITIONAL, -0.25, 0) == 1.0  # 0.75 − 0.25 = 0.5 = M_b: not below
    assert weight(_lambdas.CONDITIONAL, -0.375, 0) == 1.5
    assert weight(_lambdas.CONDITIONAL, -0.375, 1) == 3.0
    assert weight(_lambdas.CONDITIONAL, 0.25, 1) == 1.0
    assert weight(_lambdas.SCALED, 0.25, 0) == 1.5 and weight(_lambdas.SCALED, -0.25, 1) == 3.0
    column, lz, geo = georisk_state(model, np.array([base]), 1.0)
    g0 = _lambdas.geo_value(0.0, model[1], column[1], lz[1], geo)
    for signed in (-0.25, 0.125):
        moved = _lambdas.geo_value(signed, model[1], column[1], lz[1], geo)
        want = abs(moved - g0) / abs(signed) * 2  # c = 2 queries
        assert weight(_lambdas.GEORISK, signed, 1, geo, column, lz, g0) == pytest.approx(want, rel=1e-14)


def lightgbm_table_entry(gap, sigma):
    """LightGBM's GetSigmoid (rank_objective.hpp): a 2^20-entry table of 1/(1 + exp(σ·s)) over s in [−25/σ, 25/σ),
    entry i at s = i/factor + min, looked up at int((gap − min)·factor), the ends clamped."""
    bins, low = 1024 * 1024, -50.0 / sigma / 2.0
    factor = bins / (-2.0 * low)
    index = 0 if gap <= low else bins - 1 if gap >= -low else int((gap - low) * factor)
    return 1.0 / (1.0 + math.exp((index / factor + low) * sigma))


@pytest.mark.parametrize("sigma", [1.0, 2.5])
def test_lightgbm_sigmoid_is_the_table_entry(sigma):
    low = -25.0 / sigma
    gaps = [2 * low, low, low + 1e-9, -1.0, -1e-7, 0.0, 1e-7, 0.3, 7.0, -low - 1e-9, -low, -3 * low]
    for gap in gaps:
        got = _lambdas.lightgbm_sigmoid(gap, sigma)
        assert got == lightgbm_table_entry(gap, sigma)
        assert got == pytest.approx(1 / (1 + math.exp(sigma * gap)), rel=1e-4, abs=1e-10)  # within a bin of ρ
    assert _lambdas.lightgbm_sigmoid(0.0, sigma) == 0.5  # the bin that starts at 0


def lambdas(labels, bounds, scores, mode, **options):
    from riskreport.ltr.objectives import make_objective

    return make_objective("lambdamart", np.array(labels), np.array(bounds), ndcg=mode, **options)(np.array(scores))


def test_lightgbm_mode_sigma_enters_gradient_and_hessian():
    """σ ≠ 1 in LightGBM's arithmetic: λ = σρ·ΔM′, h = σ²ρ(1 − ρ)·ΔM′ (ρ from the table), as the brute force."""
    from test_ltr_objectives import brute_force_lambdas, random_queries

    labels, bounds, scores = random_queries(3, n_queries=5)
    grad, hess = lambdas(labels, bounds, scores, "lightgbm", sigma=2.5, k=5)
    want_grad, want_hess = brute_force_lambdas(labels, bounds, scores, 5, "lightgbm", sigma=2.5)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-3, atol=1e-6)  # the table's bins are σ times coarser in ρ
    np.testing.assert_allclose(hess, want_hess, rtol=1e-3, atol=1e-6)


def test_lightgbm_mode_query_without_a_pair():
    """A query with a relevant document but no pair of different labels (one document; all labels equal) has
    Σλ = 0: its gradients are 0, with no normalisation log2(1 + Σλ)/Σλ = 0/0."""
    grad, hess = lambdas([2, 1, 1, 1, 0], [0, 1, 3, 5], [0.3, 0.5, 0.1, 0.2, 0.4], "lightgbm")
    assert grad[:3].tolist() == hess[:3].tolist() == [0.0, 0.0, 0.0]
    assert grad[3] < 0 < grad[4]


def test_lightgbm_mode_spread_is_the_query_s_own_top_and_bottom_score():
    """LightGBM divides ΔM′ by 0.01 + |gap| unless every score of the query ties: query 2's top document is its second
    row and its bottom score equals the row before the query (the last of query 1); the spread is query 2's own."""
    from test_ltr_objectives import brute_force_lambdas

    labels, bounds, scores = [1, 0, 2, 0, 2, 1], [0, 3, 6], [0.5, 0.3, 0.1, 0.1, 0.9, 0.1]
    grad, hess = lambdas(labels, bounds, scores, "lightgbm")
    want_grad, want_hess = brute_force_lambdas(np.array(labels), np.array(bounds), np.array(scores), 10, "lightgbm")
    np.testing.assert_allclose(grad, want_grad, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(hess, want_hess, rtol=1e-4, atol=1e-7)


def lightgbm_lambdas(labels, bounds, scores, k, sigma=1.0):
    """LightGBM's `lambdarank` gradients (rank_objective.hpp, `lambdarank_norm`) transcribed in its arithmetic: pair
    weights |Δgain|·|Δdiscount|/IDCG@k over 0.01 + |gap|, ρ from the sigmoid table, λ and h summed in float32 per
    document in pair order, then scaled by log2(1 + Σλ)/Σλ (Σλ in double) and cast to float32."""
    grad, hess = np.zeros(len(scores)), np.zeros(len(scores))
    for start, end in zip(bounds[:-1], bounds[1:]):
        ranked = sorted(range(start, end), key=lambda r: -scores[r])
        gains = {r: 2.0 ** labels[r] - 1.0 for r in ranked}
        ideal = dcg(sorted(gains.values(), reverse=True), k)
        if ideal == 0:
            continue
        inverse, n = 1.0 / ideal, end - start
        g32, h32 = {r: np.float32(0) for r in ranked}, {r: np.float32(0) for r in ranked}
        spread, total = scores[ranked[0]] != scores[ranked[-1]], 0.0
        for i in range(min(n - 1, k)):
            for j in range(i + 1, n):
                a, b = ranked[i], ranked[j]
                if labels[a] == labels[b]:
                    continue
                high, low = (a, b) if labels[a] > labels[b] else (b, a)
                gap = scores[high] - scores[low]
                delta = abs((gains[b] - gains[a]) * (1 / math.log2(i + 2) - 1 / math.log2(j + 2)) * inverse)
                if spread:
                    delta /= 0.009999999776482582 + abs(gap)  # 0.01f
                rho = lightgbm_table_entry(gap, sigma)
                lam, h = rho * (sigma * delta), rho * (1.0 - rho) * (sigma * sigma * delta)
                g32[high], g32[low] = np.float32(g32[high] - np.float32(lam)), np.float32(g32[low] + np.float32(lam))
                h32[high], h32[low] = np.float32(h32[high] + np.float32(h)), np.float32(h32[low] + np.float32(h))
                total += 2.0 * lam
        factor = math.log2(1.0 + total) / total if total > 0 else 1.0
        for r in ranked:
            grad[r] = np.float32(float(g32[r]) * factor) if total > 0 else g32[r]
            hess[r] = np.float32(float(h32[r]) * factor) if total > 0 else h32[r]
    return grad, hess


@pytest.mark.parametrize("k", [3, 10])
def test_lightgbm_mode_is_lightgbm_s_arithmetic_to_the_bit(k):
    """The float32 sums, table sigmoid and normalisation change gradients by about 1e-7 relative, below what the
    float64 brute force (tests/test_ltr_objectives.py) tells apart: here they are compared bit for bit."""
    from test_ltr_objectives import random_queries

    labels, bounds, scores = random_queries(21, n_queries=8, ties=False)
    grad, hess = lambdas(labels, bounds, scores, "lightgbm", k=k)
    want_grad, want_hess = lightgbm_lambdas(labels, bounds, scores, k)
    assert np.array_equal(grad, want_grad) and np.array_equal(hess, want_hess)
