"""Native RBP: equal to trectools' RBP (fixture), to first principles, and evaluated without trectools."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest

from riskreport.measures.evaluation import evaluate, measure_pipeline
from riskreport.measures.rbp import NATIVE

FIXTURES = Path(__file__).parent / "fixtures"
_spec = importlib.util.spec_from_file_location("rbp_reference", FIXTURES / "rbp_reference.py")
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


def per_topic(measures: list[str], qrels: pd.DataFrame, run: dict) -> dict:
    evaluator = NATIVE.evaluator([ir_measures.parse_measure(m) for m in measures], qrels)
    names = {ir_measures.parse_measure(m): m for m in measures}
    return {(m.query_id, names[m.measure]): m.value for m in evaluator.iter_calc(run) if m.query_id in run}


def qrels_frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def test_equal_to_trectools_on_generated_runs_with_ties_spam_and_missing_topics():
    expected = pd.read_csv(FIXTURES / "rbp_trectools.csv", dtype={"system": str, "topic": str})
    ours = []
    for seed in reference.SEEDS:
        rows, runs = reference.collection(seed)
        for system, run in runs.items():
            ours += [
                (seed, system, t, m, v) for (t, m), v in per_topic(reference.MEASURES, qrels_frame(rows), run).items()
            ]
    ours = pd.DataFrame(ours, columns=["seed", "system", "topic", "measure", "ours"])
    both = expected.merge(ours, on=["seed", "system", "topic", "measure"], how="outer")
    assert len(both) == len(expected) == len(ours) == 868 and not both.isna().any().any()
    assert (both["value"] > 0).sum() > 700  # the comparison is not among zeros
    assert np.abs(both["value"] - both["ours"]).max() < 1e-12


def test_rbp_from_first_principles():
    qrels = qrels_frame([("1", "a", 3), ("1", "b", 1), ("1", "c", -2), ("1", "d", 2), ("2", "x", 1)])
    run = {"1": {"a": 5.0, "u": 4.0, "b": 3.0, "d": 3.0, "c": 3.0, "e": 1.0}, "3": {"z": 1.0}}
    p = 0.8
    w = [(1 - p) * p**k for k in range(6)]  # ranks a, u, then the tie {b, d, c}, e
    tie = (w[2] + w[3] + w[4]) / 3
    values = per_topic(["RBP(p=0.8)", "RBP(p=0.8,rel=2)", "RBP(p=0.8)@3", "RBP(p=0.8,rel=0)"], qrels, run)
    assert values[("1", "RBP(p=0.8)")] == pytest.approx(3 * w[0] + tie * (1 + 2 + 0), rel=1e-14)
    assert values[("1", "RBP(p=0.8,rel=2)")] == pytest.approx(w[0] + tie, rel=1e-14)
    # @3 keeps one of the tied documents: docno descending puts d (grade 2) first; it takes the tie's own discount
    assert values[("1", "RBP(p=0.8)@3")] == pytest.approx(3 * w[0] + 2 * w[2], rel=1e-14)
    # rel=0: every judged document is relevant (spam clipped to 0 ≥ 0), no unjudged one (u, e)
    assert values[("1", "RBP(p=0.8,rel=0)")] == pytest.approx(w[0] + 3 * tie, rel=1e-14)
    assert ("3", "RBP(p=0.8)") not in values  # a run topic absent from the qrels is not scored
    assert per_topic(["RBP(p=0.8)"], qrels, {"2": {"y": 1.0}}) == {("2", "RBP(p=0.8)"): 0.0}


@pytest.mark.parametrize("seed", range(3))
def test_uncut_rbp_does_not_depend_on_the_order_of_ties(seed):
    rng = random.Random(seed)
    rows, runs = reference.collection(seed)
    qrels = qrels_frame(rows)
    for run in runs.values():
        shuffled = {}
        for topic, ranking in run.items():
            items = list(ranking.items())
            rng.shuffle(items)
            shuffled[topic] = {d: s for d, s in items}
        renamed = {t: {f"{d}-{rng.random()}": s for d, s in r.items()} for t, r in run.items()}
        measures = ["RBP(p=0.9)", "RBP(p=0.8)@10"]  # at a cutoff, docno descending decides the ties
        assert per_topic(measures, qrels, shuffled) == pytest.approx(per_topic(measures, qrels, run))
        assert set(per_topic(["RBP(p=0.9)"], qrels, renamed).values()) == {0.0}  # renamed: nothing judged


def test_persistence_outside_0_1_is_refused():
    for p in ("1.0", "0.0"):
        with pytest.raises(ValueError, match="between 0 and 1"):
            NATIVE.evaluator([ir_measures.parse_measure(f"RBP(p={p})")], qrels_frame([("1", "a", 1)]))


def test_riskreport_evaluates_rbp_without_trectools(tiny_collection, cache_dir):
    from riskreport.io.collection import load_collection

    assert NATIVE in measure_pipeline().providers[:2]
    scores = evaluate(load_collection(str(tiny_collection)), "RBP(p=0.5)")
    matrix = scores.matrix()
    # good ranks 1-r1 (grade 2) then 1-r2 (grade 1): 0.5·2 + 0.25·1
    assert matrix.loc["good", "1"] == pytest.approx(1.25)
    assert matrix.loc["risky", "3"] == 0.0 and ("risky", "3") in set(map(tuple, scores.missing.values))


def test_per_rank_gains_of_the_bayesian_rank_model_add_up_to_rbp_at_their_depth():
    """`bayes.rbp_rank_gains` ranks each run with `ranked.rank_run(topics, docnos, scores, depth)`: the gains of
    ranks 1..depth add up to RBP@depth of the native provider (binary qrels: grade/max grade = relevance), and
    a relevant document below the depth gains nothing."""
    from riskreport import bayes

    rng = np.random.default_rng(11)
    topics, depth, p = ["1", "2", "3"], 5, 0.8
    run = pd.DataFrame(
        [(t, f"d{t}-{i}", float(s)) for t in topics for i, s in enumerate(rng.permutation(12))],
        columns=["query_id", "doc_id", "score"],
    )
    qrels = qrels_frame(
        [(t, f"d{t}-{i}", int(rng.random() < 0.5)) for t in topics for i in range(12)] + [("1", "d1-best", 1)]
    )  # a relevant document the run does not rank
    gains = bayes.rbp_rank_gains({"s": run}, qrels, topics, p=p, depth=depth)
    assert sorted(set(gains["rank"])) == list(range(1, depth + 1))
    by_topic = gains.groupby("topic")["score"].sum()
    nested = {t: dict(zip(part["doc_id"], part["score"])) for t, part in run.groupby("query_id")}
    native = per_topic([f"RBP(p={p})@{depth}"], qrels, nested)
    for topic in topics:
        assert by_topic[topic] == pytest.approx(native[(topic, f"RBP(p={p})@{depth}")], abs=1e-12)
    worst = run.loc[run.groupby("query_id")["score"].idxmin()]  # ranked 12th: beyond the depth
    qrels_worst = qrels_frame([(t, d, 1) for t, d in zip(worst["query_id"], worst["doc_id"])])
    assert bayes.rbp_rank_gains({"s": run}, qrels_worst, topics, p=p, depth=depth)["score"].sum() == 0


def test_rbp_parts_from_first_principles():
    """One tied pair in the whole run (the tie shortcut must not fire), a depth applied by `rbp` itself,
    and `rank_gains`' default scale."""
    from riskreport.measures import rbp as native
    from riskreport.measures.ranked import rank_run

    ranked = rank_run(np.array(["1", "1", "1"]), np.array(["b", "a", "c"]), np.array([2.0, 2.0, 1.0]))
    judgments = {("1", "a"): 1.0, ("1", "b"): 0.0, ("1", "c"): 2.0}
    tie = (0.5 + 0.25) / 2  # ranks 0 and 1 at p = 0.5 share their mean discount
    assert native.discounts(ranked, 0.5).tolist() == pytest.approx([tie, tie, 0.125])
    assert native.rbp(ranked, judgments, 0.5).tolist() == pytest.approx([tie + 2 * 0.125])
    assert native.rbp(ranked, judgments, 0.5, depth=1).tolist() == pytest.approx([0.0])  # b (docno descending)
    assert native.rbp(ranked, judgments, 0.5, rel=2).tolist() == pytest.approx([0.125])
    assert native.rank_gains(ranked, judgments, 0.5, 3)[0].tolist() == pytest.approx([0.0, 0.25, 0.25])
    assert native.rank_gains(ranked, judgments, 0.5, 3, scale=2.0)[0].tolist() == pytest.approx([0.0, 0.125, 0.125])
    assert native.rank_gains(ranked, judgments, 0.5, 2)[0].tolist() == pytest.approx([0.0, 0.25])  # cut at 2
