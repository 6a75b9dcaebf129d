"""riskreport.ltr.objectives beyond the gradients (tests/test_ltr_objectives.py): defaults, spellings and checks of the
options, when T-SARO/T-FARO freeze SE, what `last` keeps, threads, GeoRisk's state against Dinçer et al. (2016)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from riskreport.errors import ParameterError, UnknownNameError
from riskreport.ltr.objectives import (
    PARALLEL_ROWS,
    RiskObjective,
    georisk_state,
    make_objective,
    ndcg_per_query,
    objective_key,
    urisk_se,
)

LABELS = np.array([1, 0, 1, 0])
BOUNDS = np.array([0, 2, 4])


def test_defaults():
    objective = make_objective("u-cro", LABELS, BOUNDS, [0.5, 0.5])
    assert (objective.alpha, objective.k, objective.ndcg, objective.sigma, objective.se_iteration) == (
        0.0,
        10,
        "lightgbm",
        1.0,
        1,
    )
    assert objective.iteration == 0 and objective.se is None and objective.last == {}
    assert RiskObjective("u-cro", LABELS, BOUNDS, [0.5, 0.5]).alpha == 0.0
    labels = np.array([0] * 10 + [3])  # the relevant document at rank 11: NDCG@10 = 0, NDCG@11 > 0
    scores = -np.arange(11.0)
    assert ndcg_per_query(scores, labels, [0, 11])[0] == ndcg_per_query(scores, labels, [0, 11], k=10)[0] == 0.0


def test_every_spelling_of_the_names():
    spellings = {
        "lambdamart": ["LambdaMART", "lambdarank", "LambdaRank"],
        "u-cro": ["U-CRO", "ucro", "u_cro"],
        "t-saro": ["T-SARO", "tsaro", "t_saro"],
        "t-faro": ["tfaro", "T-FARO"],
        "t*-faro": ["T*-FARO", "t*faro", "tstar-faro", "TSTAR_FARO", "tstarfaro"],
        "georisk": ["GeoRisk", " georisk "],
    }
    for key, names in spellings.items():
        assert [objective_key(name) for name in names] == [key] * len(names)
    with pytest.raises(UnknownNameError, match=r"^Unknown objective 'lambda'\. Did you mean 'lambdamart'\?"):
        objective_key("lambda")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"k": 0}, r"^k \(the NDCG cutoff\) must be ≥ 1, got 0\.$"),
        ({"ndcg": "trec"}, r"^ndcg must be one of exact, lightgbm, got 'trec'\.$"),
        ({"sigma": 0.0}, r"^sigma must be a positive number, got 0\.0\.$"),
        ({"sigma": -1.0}, r"^sigma must be a positive number"),
        ({"sigma": math.inf}, r"^sigma must be a positive number"),
        ({"alpha": math.nan}, r"^alpha must be a finite number ≥ 0"),
    ],
)
def test_bad_options(options, message):
    with pytest.raises(ParameterError, match=message):
        make_objective("u-cro", LABELS, BOUNDS, [0.5, 0.5], **options)


def test_smallest_options_are_accepted():
    grad, _ = make_objective("lambdamart", LABELS, BOUNDS, k=1, sigma=1e-3)(np.array([0.0, 1.0, 1.0, 0.0]))
    assert grad[0] < 0 < grad[1]


def test_wrong_number_of_predictions():
    with pytest.raises(
        ParameterError, match=r"^LambdaMART: 3 predictions for 4 training rows \(the objective was built"
    ):
        make_objective("lambdamart", LABELS, BOUNDS)(np.zeros(3))


@pytest.mark.parametrize("name", ["t-saro", "t-faro"])
def test_se_is_recomputed_until_after_the_first_tree_then_kept(name):
    """Calls 1 and 2 (before any tree, after the first) compute SE from the current NDCG; later calls keep the second."""
    labels, bounds = np.array([2, 0, 1, 1, 0, 2, 0, 1, 0]), np.array([0, 3, 6, 9])
    baselines = np.array([0.9, 0.6, 0.7])
    objective = make_objective(name, labels, bounds, baselines, alpha=2.0)
    calls = [np.array(s, dtype=float) for s in ([1, 2, 3] * 3, [3, 2, 1] * 3, [2, 3, 1] * 3, [1, 3, 2] * 3)]
    seen = []
    for scores in calls:
        objective(scores)
        seen.append(objective.se)
    expected = [urisk_se(ndcg_per_query(s, labels, bounds) - baselines, 2.0) for s in calls[:2]]
    assert seen == pytest.approx([expected[0], expected[1], expected[1], expected[1]], rel=1e-14)
    assert expected[0] != pytest.approx(expected[1]) and objective.iteration == 4
    later = make_objective(name, labels, bounds, baselines, alpha=2.0, se_iteration=2)
    for scores in calls:
        later(scores)
    assert later.se == pytest.approx(urisk_se(ndcg_per_query(calls[2], labels, bounds) - baselines, 2.0), rel=1e-14)


def test_last_keeps_the_inputs_of_the_latest_call():
    labels, bounds, base = np.array([2, 0, 1, 0, 1, 0]), np.array([0, 3, 6]), np.array([[0.9, 0.2], [0.5, 0.6]])
    scores = np.array([0.1, 0.5, 0.2, 0.3, 0.0, 0.9])
    objective = make_objective("t*-faro", labels, bounds, base, alpha=1.0, k=3)
    objective(scores)
    assert set(objective.last) == {"model", "alpha", "base"}
    np.testing.assert_array_equal(objective.last["model"], ndcg_per_query(scores, labels, bounds, k=3))
    np.testing.assert_array_equal(objective.last["base"], [0.7, 0.4])
    assert np.all(objective.last["alpha"] > 0)


def test_one_thread_below_parallel_rows():
    assert make_objective("lambdamart", LABELS, BOUNDS).threads == 1
    assert make_objective("lambdamart", LABELS, BOUNDS, threads=3).threads == 3
    many = np.zeros(PARALLEL_ROWS, int)
    assert make_objective("lambdamart", many, np.array([0, PARALLEL_ROWS])).threads is None
    assert make_objective("lambdamart", many[:-1], np.array([0, PARALLEL_ROWS - 1])).threads == 1


def test_a_single_query_and_no_query():
    """The discount table covers the longest query, also when there is only one; no query gives empty results."""
    labels, scores = np.array([0, 1, 2, 0, 1]), np.array([0.5, 0.4, 0.3, 0.2, 0.1])
    for mode in ("exact", "lightgbm"):
        grad, _ = make_objective("lambdamart", labels, np.array([0, 5]), ndcg=mode)(scores)
        assert grad[2] < 0 and grad[0] > 0
    grad, hess = make_objective("lambdamart", np.zeros(0, int), np.array([0]))(np.zeros(0))
    assert grad.shape == hess.shape == (0,)


def georisk_terms_by_hand(model, baselines, alpha):
    """(T_j, l_α(z_j), S, N, ZRisk, c) of Dinçer et al. (2016), Eqs. 3–6, over the queries with a learner's NDCG."""
    valid = [j for j in range(len(model)) if math.isfinite(model[j])]
    x = np.array([[model[j] for j in valid], *[[row[j] for j in valid] for row in baselines]])
    total, grand = x[0].sum(), x.sum()
    columns, lz = x.sum(axis=0), []
    for j in range(len(valid)):
        e = total * columns[j] / grand if grand > 0 else 0.0
        z = (x[0, j] - e) / math.sqrt(e) if e > 0 else 0.0
        lz.append(z if z >= 0 else (1 + alpha) * z)
    return columns, np.array(lz), total, grand, sum(lz), max(len(valid), 1)


@pytest.mark.parametrize(
    "model",
    [[0.1, 0.05, 0.0, 0.2], [0.1, np.nan, np.nan, np.nan], [0.5, 0.0, np.nan, 0.3]],
    ids=["small scores (N < 1), a zero column", "one query", "a zero column"],
)
def test_georisk_state_by_hand(model):
    model = np.array(model)
    baselines = np.array([[0.05, 0.1, 0.0, 0.1], [0.02, 0.2, 0.0, 0.05]])
    column, lz, geo = georisk_state(model, baselines, 2.0)
    columns, terms, total, grand, zrisk, c = georisk_terms_by_hand(model, baselines, 2.0)
    valid = np.isfinite(model)
    np.testing.assert_allclose(column[valid], columns, rtol=1e-14)
    np.testing.assert_allclose(lz[valid], terms, rtol=1e-14, atol=1e-15)
    assert np.all(lz[~valid] == 0)
    assert geo.tolist() == pytest.approx([total, grand, zrisk, c, 2.0, c], rel=1e-14)
    value = math.sqrt(total / c * stats.norm.cdf(zrisk / c))  # GeoRisk_α, Eq. 6
    from riskreport.ltr import _lambdas

    j = int(np.argmax(valid))
    assert _lambdas.geo_value(0.0, model[j], column[j], lz[j], geo) == pytest.approx(value, rel=1e-13)
