"""Native gdeval measures: equal to ir_measures' gdeval.pl provider to the 5 decimals it prints."""

from __future__ import annotations

import random
import shutil

import ir_measures
import numpy as np
import pandas as pd
import pytest

from riskreport.io.trec import read_qrels, read_run
from riskreport.measures.evaluation import evaluate, measure_pipeline
from riskreport.measures.gdeval import NATIVE, dcg, err

MEASURES = [
    ir_measures.parse_measure(m) for m in ("ERR@20", "nDCG(dcg='exp-log2')@20", "ERR@5", "nDCG(dcg='exp-log2')@10")
]
needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="perl (gdeval.pl) is not installed")


def per_topic(evaluator, run) -> dict:
    return {(m.query_id, str(m.measure)): m.value for m in evaluator.iter_calc(run)}


def assert_as_gdeval_prints(qrels, runs) -> int:
    perl, native = ir_measures.gdeval.evaluator(MEASURES, qrels), NATIVE.evaluator(MEASURES, qrels)
    compared = 0
    for run in runs:
        expected, ours = per_topic(perl, run), per_topic(native, run)
        assert ours.keys() == expected.keys()
        for key, value in expected.items():
            assert float(f"{ours[key]:.5f}") == value, (key, ours[key], value)
        compared += len(expected)
    return compared


def as_dict(table: pd.DataFrame) -> dict:
    run: dict = {}
    for topic, docno, score in zip(table["query_id"], table["doc_id"], table["score"]):
        run.setdefault(topic, {})[docno] = score
    return run


@needs_perl
def test_equal_to_gdeval_on_trec_web_2012(web2012):
    qrels = read_qrels(web2012 / "qrels.adhoc.txt")
    runs = [as_dict(read_run(path)) for path in sorted((web2012 / "runs").glob("*.run.gz"))]
    assert assert_as_gdeval_prints(qrels, runs) == 8 * 50 * len(MEASURES)


@needs_perl
@pytest.mark.parametrize("seed", range(6))
def test_equal_to_gdeval_on_generated_runs_with_ties_spam_and_missing_topics(seed):
    rng = random.Random(seed)
    topics = [str(t) for t in range(1, 9)]
    docs = [f"doc-{i:03d}" for i in range(60)]
    qrels = pd.DataFrame(
        [(t, d, rng.choice([-2, 0, 0, 1, 2, 3, 4])) for t in topics for d in rng.sample(docs, 30)],
        columns=["query_id", "doc_id", "relevance"],
    )
    qrels = pd.concat([qrels, pd.DataFrame([("9", "doc-000", 0), ("9", "doc-001", -2)], columns=qrels.columns)])
    runs = []
    for _ in range(4):
        run = {}
        for topic in rng.sample(topics + ["9", "77"], 7):  # some topics missing, extras
            chosen = rng.sample(docs, rng.randint(1, 40))
            run[topic] = {d: float(rng.choice([1, 2, 2, 3, 0.5, -1.25])) for d in chosen}  # many ties
        runs.append(run)
    assert assert_as_gdeval_prints(qrels, runs) > 0


def test_formulas_on_a_hand_example():
    gains = np.array([[3, 0, 4, 1]], dtype=float)
    r = (2 ** gains[0] - 1) / 16
    expected_err = (
        r[0]
        + (1 - r[0]) * r[1] / 2
        + (1 - r[0]) * (1 - r[1]) * r[2] / 3
        + (1 - r[0]) * (1 - r[1]) * (1 - r[2]) * r[3] / 4
    )
    assert err(gains)[0] == pytest.approx(expected_err, rel=1e-15)
    assert dcg(gains)[0] == pytest.approx(7 / np.log(2) + 15 / np.log(4) + 1 / np.log(5), rel=1e-15)


def test_ties_break_by_docno_descending():
    qrels = pd.DataFrame([("1", "a", 4), ("1", "b", 1)], columns=["query_id", "doc_id", "relevance"])
    native = NATIVE.evaluator([ir_measures.parse_measure("ERR@1")], qrels)
    [metric] = native.iter_calc({"1": {"a": 1.0, "b": 1.0}})  # b ranks first: docno descending
    assert metric.value == pytest.approx(1 / 16)


def test_grades_above_4_are_refused():
    qrels = pd.DataFrame([("1", "a", 5)], columns=["query_id", "doc_id", "relevance"])
    with pytest.raises(ValueError, match="grades up to 4"):
        NATIVE.evaluator([ir_measures.parse_measure("ERR@20")], qrels)


def test_riskreport_evaluates_gdeval_measures_natively_unless_asked(monkeypatch, tiny_collection, cache_dir):
    from riskreport.io.collection import load_collection

    pipeline = measure_pipeline()
    assert pipeline.providers[0] is NATIVE
    collection = load_collection(str(tiny_collection))
    native = evaluate(collection, "ERR@20").matrix()
    monkeypatch.setenv("RISKREPORT_GDEVAL", "perl")
    assert NATIVE not in measure_pipeline().providers
    if shutil.which("perl"):
        perl = evaluate(collection, "ERR@20").matrix()  # its own cache entries: no mix-up
        assert (native.round(5) == perl).all().all() and not native.equals(perl) or native.equals(perl)


def test_dcg_and_err_along_the_last_axis_of_any_shape_and_at_depth_zero():
    gains = np.array([2.0, 0.0, 1.0])
    expected_dcg = 3 / np.log(2) + 1 / np.log(4)  # (2^g − 1)/ln(i + 2)
    r = (np.exp2(gains) - 1) / 16
    expected_err = r[0] + (1 - r[0]) * r[1] / 2 + (1 - r[0]) * (1 - r[1]) * r[2] / 3
    assert float(dcg(gains)) == pytest.approx(expected_dcg, rel=1e-14)
    assert float(err(gains)) == pytest.approx(expected_err, rel=1e-14)
    cube = np.broadcast_to(gains, (2, 4, 3))
    assert dcg(cube).shape == err(cube).shape == (2, 4)
    assert np.allclose(dcg(cube), expected_dcg, rtol=1e-14) and np.allclose(err(cube), expected_err, rtol=1e-14)
    for empty in (np.zeros((2, 4, 0)), np.zeros((3, 0))):
        assert dcg(empty).shape == err(empty).shape == empty.shape[:-1]
        assert not dcg(empty).any() and not err(empty).any()
