"""Native Judged@k: equal to ir_measures' judged provider, ties at the cutoff included."""

from __future__ import annotations

import random

import ir_measures
import pandas as pd
import pytest

from riskreport.io.trec import read_qrels, read_run
from riskreport.measures.judged import NATIVE

MEASURES = [ir_measures.parse_measure(m) for m in ("Judged@1", "Judged@5", "Judged@20", "Judged")]


def assert_equal_to_ir_measures(qrels, runs) -> int:
    reference, native = ir_measures.judged.evaluator(MEASURES, qrels), NATIVE.evaluator(MEASURES, qrels)
    compared = 0
    for run in runs:
        expected = {(m.query_id, str(m.measure)): m.value for m in reference.iter_calc(run)}
        ours = {(m.query_id, str(m.measure)): m.value for m in native.iter_calc(run)}
        assert ours == expected
        compared += len(expected)
    return compared


@pytest.mark.parametrize("seed", range(4))
def test_equal_to_ir_measures_on_generated_runs_with_ties(seed):
    rng = random.Random(seed)
    topics = [str(t) for t in range(1, 7)]
    docs = [f"d{i:02d}" for i in range(50)]
    qrels = pd.DataFrame(
        [(t, d, rng.choice([-2, 0, 1, 2])) for t in topics for d in rng.sample(docs, 20)],
        columns=["query_id", "doc_id", "relevance"],
    )
    runs = [
        {
            t: {d: float(rng.choice([1, 2, 2, 3])) for d in rng.sample(docs, rng.randint(1, 40))}
            for t in rng.sample(topics + ["99"], 5)
        }
        for _ in range(5)
    ]
    assert assert_equal_to_ir_measures(qrels, runs) > 0


def test_equal_to_ir_measures_on_trec_web_2012(web2012):
    qrels = read_qrels(web2012 / "qrels.adhoc.txt")
    runs = []
    for path in sorted((web2012 / "runs").glob("*.run.gz"))[:3]:
        table, run = read_run(path), {}
        for topic, docno, score in zip(table["query_id"], table["doc_id"], table["score"]):
            run.setdefault(topic, {})[docno] = score
        runs.append(run)
    assert assert_equal_to_ir_measures(qrels, runs) == 3 * 50 * len(MEASURES)
