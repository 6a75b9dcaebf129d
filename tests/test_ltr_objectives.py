"""The LambdaMART objectives: each ΔM′ rule on a hand-computed case, α = 0 equals LambdaMART, a brute-force
gradient, GeoRisk's consistency, and training against LightGBM's own `lambdarank`."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from riskreport.errors import ParameterError, UnknownNameError
from riskreport.ltr import _lambdas
from riskreport.ltr.objectives import NAMES, georisk_state, make_objective, ndcg_per_query, objective_key

# Two queries, each two documents labelled 1 and 0 and already in the right order (scores 1, 0):
# NDCG@10 = 1; swapping them gives 1/log2(3), so the signed ΔM of the pair is −(1 − 1/log2 3). The hand cases use
# ndcg="exact" (no LightGBM normalisation), so that a gradient is ρ·ΔM′ and nothing else.
LABELS = np.array([1, 0, 1, 0])
BOUNDS = np.array([0, 2, 4])
SCORES = np.array([1.0, 0.0, 1.0, 0.0])
DM = 1 - 1 / math.log2(3)  # 0.369070 = |ΔM|
RHO = 1 / (1 + math.e)  # ρ = 1/(1 + exp(σ(s_hi − s_lo))), σ = 1, s_hi − s_lo = 1
PLAIN = RHO * DM  # 0.099258: LambdaMART's |λ| for each document


def high_gradients(name, baselines=None, alpha=0.0):
    """−λ of the relevant document of each query (LightGBM's gradient is negative for it)."""
    grad, _ = make_objective(name, LABELS, BOUNDS, baselines, alpha, ndcg="exact")(SCORES)
    return -grad[[0, 2]]


def test_plain_lambdamart_by_hand():
    grad, hess = make_objective("lambdamart", LABELS, BOUNDS, ndcg="exact")(SCORES)
    assert grad == pytest.approx([-PLAIN, PLAIN, -PLAIN, PLAIN], abs=1e-12)
    assert hess == pytest.approx([RHO * (1 - RHO) * DM] * 4, abs=1e-12)  # 0.072564


def test_u_cro_weighs_a_swap_that_would_drop_below_the_baseline():
    # query 1: 1 − 0.369 = 0.631 < M_b = 0.8, so ΔM′ = ΔM·(1 + α); query 2: 0.631 ≥ 0.5, ΔM′ = ΔM
    assert high_gradients("u-cro", [0.8, 0.5], alpha=1.0) == pytest.approx([2 * PLAIN, PLAIN], abs=1e-12)


def test_t_saro_adapts_alpha_to_the_query_s_standard_score():
    # δ = 1 − [0.8, 0.6] = [0.2, 0.4] ≥ 0, so l_α(δ) = δ; SE = sd/√2 = 0.1; TR = [2, 4];
    # α′ = [1 − Φ(TR)]·5 = [0.113751, 0.000158]; only query 1 would drop below its baseline.
    assert high_gradients("t-saro", [0.8, 0.6], alpha=5.0) == pytest.approx([1.113751 * PLAIN, PLAIN], abs=1e-7)


def test_t_faro_scales_every_query():
    assert high_gradients("t-faro", [0.8, 0.6], alpha=5.0) == pytest.approx(
        [1.113751 * PLAIN, 1.000158 * PLAIN], abs=1e-7
    )


def test_t_star_faro_uses_the_mean_of_the_baselines():
    # per-query means [1.0, 0.8]: δ = [0, 0.2], SE = 0.1, TR = [0, 2], α′ = [0.5, 0.022750] at α = 1
    rows = [[1.0, 0.6], [1.0, 1.0]]
    assert high_gradients("t*-faro", rows, alpha=1.0) == pytest.approx([1.5 * PLAIN, 1.022750 * PLAIN], abs=1e-7)


def test_georisk_by_hand():
    # learner [1, 1], baseline [0.5, 0.5], α = 1, c = 2: S = 2, N = 3, T_j = 1.5, e_j = 1, z_j = 0, ZRisk = 0,
    # GeoRisk = sqrt(1 · Φ(0)) = 0.707107. Swapping query 1's pair (d = −0.369070): S' = 1.630930,
    # N' = 2.630930, T' = 1.130930, e' = 0.701070, z' = −0.083770, l_1(z') = −0.167540,
    # GeoRisk' = sqrt(0.815465 · Φ(−0.083770)) = 0.616856; ΔM′ = c·|ΔGeoRisk| = 2 · 0.090250 = 0.180501.
    assert high_gradients("georisk", [0.5, 0.5], alpha=1.0) == pytest.approx([RHO * 0.180501] * 2, abs=1e-6)


def random_queries(seed, n_queries=12, max_docs=25, ties=True):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_docs, size=n_queries)
    bounds = np.r_[0, np.cumsum(sizes)]
    labels = rng.integers(0, 5, size=bounds[-1]) * (rng.random(bounds[-1]) < 0.6)
    scores = np.round(rng.normal(size=bounds[-1]), 1 if ties else 8)  # rounding makes ties
    return labels, bounds, scores


@pytest.mark.parametrize("mode", ["exact", "lightgbm"])
@pytest.mark.parametrize("name", ["u-cro", "t-saro", "t-faro", "t*-faro"])
def test_alpha_zero_is_lambdamart_exactly(name, mode):
    labels, bounds, scores = random_queries(7)
    baselines = np.random.default_rng(3).random((3, len(bounds) - 1))
    plain = make_objective("lambdamart", labels, bounds, ndcg=mode)(scores)
    risky = make_objective(name, labels, bounds, baselines, alpha=0.0, ndcg=mode)
    for _ in range(3):  # T-SARO/T-FARO freeze SE after the first iteration
        assert all(np.array_equal(a, b) for a, b in zip(risky(scores), plain))


def brute_force_lambdas(labels, bounds, scores, k, mode, sigma=1.0, weight=None):
    """Gradients by swapping every pair and re-scoring the query, one pair at a time, in plain Python; `weight(q, ΔM)`
    gives ΔM′/|ΔM| of a swap that changes query q's NDCG by ΔM (default 1: LambdaMART)."""
    grad, hess = np.zeros(len(scores)), np.zeros(len(scores))

    def dcg(gains_in_order, cutoff):
        return sum(g / math.log2(r + 2) for r, g in enumerate(gains_in_order[:cutoff]))

    for q, (start, end) in enumerate(itertools.pairwise(bounds)):
        rows = list(range(start, end))
        ranked = sorted(rows, key=lambda r: -scores[r])  # stable: ties keep row order
        ideal = dcg(sorted((2.0 ** labels[r] - 1 for r in rows), reverse=True), k)
        if ideal == 0:
            continue
        cutoff = k if mode == "exact" else len(rows)  # lightgbm: DCG over every rank / IDCG@k
        now = dcg([2.0 ** labels[r] - 1 for r in ranked], cutoff) / ideal
        pairs, lambdas = [], {r: 0.0 for r in rows}
        hessians = dict(lambdas)
        for i, j in itertools.combinations(range(len(ranked)), 2):
            a, b = ranked[i], ranked[j]
            if labels[a] == labels[b] or i >= k:
                continue
            swapped = list(ranked)
            swapped[i], swapped[j] = b, a
            signed = dcg([2.0 ** labels[r] - 1 for r in swapped], cutoff) / ideal - now
            if signed == 0:
                continue
            delta = abs(signed) * (weight(q, signed) if weight else 1.0)
            high, low = (a, b) if labels[a] > labels[b] else (b, a)
            gap = scores[high] - scores[low]
            if mode == "lightgbm" and scores[ranked[0]] != scores[ranked[-1]]:
                delta /= 0.01 + abs(gap)
            rho = 1 / (1 + math.exp(sigma * gap))
            pairs.append((high, low, sigma * rho * delta, sigma**2 * rho * (1 - rho) * delta))
        for high, low, lam, h in pairs:
            lambdas[high] -= lam
            lambdas[low] += lam
            hessians[high] += h
            hessians[low] += h
        total = 2 * sum(p[2] for p in pairs)
        factor = math.log2(1 + total) / total if mode == "lightgbm" and total > 0 else 1.0
        for r in rows:
            grad[r], hess[r] = lambdas[r] * factor, hessians[r] * factor
    return grad, hess


@pytest.mark.parametrize("mode", ["exact", "lightgbm"])
@pytest.mark.parametrize("k", [3, 10])
def test_gradients_equal_a_brute_force_computation(mode, k):
    labels, bounds, scores = random_queries(11 + k)
    grad, hess = make_objective("lambdamart", labels, bounds, k=k, ndcg=mode)(scores)
    expected_grad, expected_hess = brute_force_lambdas(labels, bounds, scores, k, mode)
    # lightgbm mode does LightGBM's arithmetic (ρ from its 2^20-bin sigmoid table, float32 sums): 1e-4 of the exact
    tolerance = {"rtol": 1e-10, "atol": 1e-13} if mode == "exact" else {"rtol": 1e-4, "atol": 1e-6}
    np.testing.assert_allclose(grad, expected_grad, **tolerance)
    np.testing.assert_allclose(hess, expected_hess, **tolerance)
    assert np.abs(grad).sum() > 0


def exact_georisk(model, baselines, alpha):
    """GeoRisk of the learner (row 0) recomputed from the whole matrix (riskreport.risk, Dinçer et al. 2016)."""
    from riskreport.stats.risk import georisk

    return georisk(np.vstack([model, baselines]), [alpha])[0, 0]


@pytest.mark.parametrize("seed", range(20))
def test_georisk_swap_is_consistent(seed):
    """An improving swap (d > 0) never lowers GeoRisk, a worsening one never raises it, and ΔM′ grows with d."""
    rng = np.random.default_rng(seed)
    c = int(rng.integers(2, 60))
    model, baselines = rng.random(c), rng.random((int(rng.integers(1, 5)), c)) * rng.random()
    alpha = float(rng.choice([0.0, 1.0, 5.0, 20.0]))
    column, lz, geo = georisk_state(model, baselines, alpha)
    j = int(rng.integers(c))
    moves = np.linspace(-model[j], 1 - model[j], 41)
    values = np.array([_lambdas.geo_value(d, model[j], column[j], lz[j], geo) for d in moves])
    assert np.all(np.diff(values) >= -1e-15)
    g0 = _lambdas.geo_value(0.0, model[j], column[j], lz[j], geo)
    assert g0 == pytest.approx(exact_georisk(model, baselines, alpha), rel=1e-12)
    assert np.all(values[moves > 0] >= g0) and np.all(values[moves < 0] <= g0)


def test_recomputing_the_whole_matrix_would_not_be_consistent():
    """Why one swap moves only query j's terms: recomputed over the whole matrix, GeoRisk can fall when the learner
    improves on one query (every other expectation e_ij grows with S), in about a third of random cases; the
    incremental ΔM′ never does."""
    falls = 0
    for seed in range(30):
        rng = np.random.default_rng(seed)
        c = int(rng.integers(2, 60))
        model, baselines = rng.random(c), rng.random((int(rng.integers(1, 5)), c)) * rng.random()
        alpha, j = float(rng.choice([0.0, 1.0, 5.0, 20.0])), int(rng.integers(c))
        moves = np.linspace(-model[j], 1 - model[j], 21)
        exact = []
        for d in moves:
            moved = model.copy()
            moved[j] += d
            exact.append(exact_georisk(moved, baselines, alpha))
        falls += bool(np.any(np.diff(exact) < -1e-12))
        column, lz, geo = georisk_state(model, baselines, alpha)
        incremental = [_lambdas.geo_value(d, model[j], column[j], lz[j], geo) for d in moves]
        assert np.all(np.diff(incremental) >= -1e-15)
    assert falls >= 5


def test_georisk_at_alpha_zero_keeps_lambdamart_s_signs_and_order():
    """Per pair, GeoRisk's ΔM′ has ΔM's sign, and within a query a larger |ΔM| of the same sign gets a larger ΔM′."""
    labels, bounds, scores = random_queries(2, n_queries=8, ties=False)
    base = np.random.default_rng(1).random(len(bounds) - 1)
    plain = make_objective("lambdamart", labels, bounds)(scores)[0]
    geo = make_objective("georisk", labels, bounds, base, alpha=0.0)(scores)[0]
    single = np.diff(bounds) == 2  # one pair per query: the gradient is that pair's
    rows = np.concatenate([np.arange(s, e) for s, e, one in zip(bounds[:-1], bounds[1:], single) if one] or [[]])
    assert np.array_equal(np.sign(plain[rows.astype(int)]), np.sign(geo[rows.astype(int)]))
    model, baselines = np.random.default_rng(4).random(30), np.random.default_rng(6).random((2, 30))
    column, lz, state = georisk_state(model, baselines, 0.0)
    moves = np.array([0.01, 0.05, 0.2, 0.4])
    for j in range(30):
        gains = [_lambdas.geo_value(d, model[j], column[j], lz[j], state) for d in moves]
        assert np.all(np.diff(gains) > 0)


def test_objective_names_and_bad_arguments():
    assert [objective_key(n) for n in ("LambdaMART", "ucro", "T-SARO", "tfaro", "tstar_faro", "GeoRisk")] == list(NAMES)
    with pytest.raises(UnknownNameError, match="Did you mean 'u-cro'"):
        objective_key("u-cr")
    with pytest.raises(ParameterError, match="learns against a baseline"):
        make_objective("u-cro", LABELS, BOUNDS)
    with pytest.raises(ParameterError, match="alpha"):
        make_objective("u-cro", LABELS, BOUNDS, [0.5, 0.5], alpha=-1)
    with pytest.raises(ParameterError, match="3 queries"):
        make_objective("u-cro", LABELS, BOUNDS, [0.5, 0.5, 0.5], alpha=1)
    with pytest.raises(ParameterError, match="5 predictions for 4"):
        make_objective("lambdamart", LABELS, BOUNDS)(np.zeros(5))


def test_ndcg_per_query_by_hand():
    # query 1: labels (2, 0, 1) scored (0.5, 1, 0.2): DCG = 0 + 3/log2 3 + 1/2, ideal 3 + 1/log2 3; query 2: no relevant
    got = ndcg_per_query([0.5, 1.0, 0.2, 0.3], [2, 0, 1, 0], [0, 3, 4], k=10)
    assert got[0] == pytest.approx((3 / math.log2(3) + 0.5) / (3 + 1 / math.log2(3)), abs=1e-12)
    assert math.isnan(got[1])
    assert ndcg_per_query([0.5, 1.0, 0.2], [2, 0, 1], [0, 3], k=1)[0] == 0.0


def risk_weight(name, model, baselines, alpha):
    """ΔM′/|ΔM| of each objective from its definition (docs/ltr.md): M_m the learner's NDCG@k per query (NaN: no
    relevant document), M_b the baseline's (T*-FARO: the baselines' mean)."""
    from test_ltr_lambdas import georisk_one_query_moved

    base = baselines.mean(axis=0) if name == "t*-faro" else baselines[0]
    valid = np.isfinite(model)
    delta = (model - base)[valid]
    adjusted = np.where(delta < 0, (1 + alpha) * delta, delta)
    se = adjusted.std(ddof=1) / math.sqrt(len(adjusted))
    adaptive = np.full(len(model), np.nan)
    adaptive[valid] = (1 - stats.norm.cdf(delta / se)) * alpha  # α′_j = [1 − Φ(δ_j / SE)]·α

    def weight(q, signed):
        if name == "u-cro":
            return 1.0 if model[q] + signed >= base[q] else 1 + alpha
        if name == "t-saro":
            return 1.0 if model[q] + signed >= base[q] else 1 + adaptive[q]
        if name in ("t-faro", "t*-faro"):
            return 1 + adaptive[q]
        j = int(valid[:q].sum())  # GeoRisk over the queries with an NDCG
        kept, rows = model[valid], baselines[:, valid]
        moved = georisk_one_query_moved(kept, rows, alpha, j, signed)
        return len(kept) * abs(moved - georisk_one_query_moved(kept, rows, alpha, j, 0.0)) / abs(signed)

    return weight


RISKY = ["u-cro", "t-saro", "t-faro", "t*-faro", "georisk"]


@pytest.mark.parametrize("mode", ["exact", "lightgbm"])
@pytest.mark.parametrize("name", RISKY)
def test_risk_sensitive_gradients_equal_a_brute_force_computation(name, mode):
    """Every pair's ΔM′ from the objective's definition, the query re-scored after each swap in plain Python."""
    labels, bounds, scores = random_queries(5, n_queries=10)
    baselines = np.random.default_rng(9).random((3, len(bounds) - 1)) * 0.8
    alpha, k = 2.0, 5
    model = ndcg_per_query(scores, labels, bounds, k)
    assert np.isnan(model).any() and (model < baselines[0]).any()  # queries without an NDCG, and below the baseline
    grad, hess = make_objective(name, labels, bounds, baselines, alpha, k=k, ndcg=mode)(scores)
    weight = risk_weight(name, model, baselines, alpha)
    expected_grad, expected_hess = brute_force_lambdas(labels, bounds, scores, k, mode, weight=weight)
    tolerance = {"rtol": 1e-10, "atol": 1e-13} if mode == "exact" else {"rtol": 1e-4, "atol": 1e-6}
    np.testing.assert_allclose(grad, expected_grad, **tolerance)
    np.testing.assert_allclose(hess, expected_hess, **tolerance)
    plain = make_objective("lambdamart", labels, bounds, k=k, ndcg=mode)(scores)[0]
    assert not np.allclose(grad, plain)  # the risk weights did something


@pytest.mark.parametrize("name", ["lambdamart", *RISKY])
def test_hessian_is_the_derivative_of_the_gradient(name):
    """exact mode: a document's Hessian is d(gradient)/d(its score) by central differences, the ranking (and so every
    ΔM′) unchanged by the small step; σ = 1.7 so that σ enters both."""
    labels, bounds, scores = random_queries(8, n_queries=6, ties=False)
    baselines = np.random.default_rng(2).random((2, len(bounds) - 1))
    options = dict(k=4, ndcg="exact", sigma=1.7)
    rows = None if name == "lambdamart" else baselines

    def gradient(s):
        return make_objective(name, labels, bounds, rows, 1.5, **options)(s)

    _, hess = gradient(scores)
    step = 1e-6
    for row in range(len(scores)):
        up, down = scores.copy(), scores.copy()
        up[row] += step
        down[row] -= step
        derivative = (gradient(up)[0][row] - gradient(down)[0][row]) / (2 * step)
        assert derivative == pytest.approx(hess[row], rel=1e-5, abs=1e-9)


def test_adaptive_alpha_and_its_standard_error():
    """α′_j = [1 − Φ(δ_j/SE)]·α; SE = sd(l_α(δ))/√c over the defined δ (1 or none: 0), and SE = 0 gives TR = ±∞."""
    from riskreport.ltr.objectives import adaptive_alpha, risk_adjusted, urisk_se

    delta = np.array([0.2, -0.1, np.nan, 0.05, -0.3])
    adjusted = np.array([0.2, -0.3, 0.05, -0.9])  # α = 2
    assert risk_adjusted(np.array([-0.5, 0.0, 0.5]), 2.0).tolist() == [-1.5, 0.0, 0.5]
    assert urisk_se(delta, 2.0) == pytest.approx(adjusted.std(ddof=1) / 2, rel=1e-14)
    assert urisk_se(np.array([0.3, np.nan]), 2.0) == 0.0 and urisk_se(np.array([np.nan]), 2.0) == 0.0
    got = adaptive_alpha(delta, 0.25, 2.0)
    np.testing.assert_allclose(got[[0, 1, 3, 4]], (1 - stats.norm.cdf(delta[[0, 1, 3, 4]] / 0.25)) * 2.0, rtol=1e-14)
    assert got[2] == 1.0  # no δ (a query without an NDCG, which gets no gradient): TR = 0
    assert adaptive_alpha(np.array([0.1, -0.1, 0.0, np.nan]), 0.0, 3.0).tolist() == [0.0, 3.0, 1.5, 1.5]
