"""Evaluation: topic set, missing and extra topics, gdeval conventions, cache, parallelism."""

import os
import warnings

import pytest
from conftest import write_qrels, write_run

from riskreport.io.collection import load_collection
from riskreport.io.trec import read_scores
from riskreport.measures.evaluation import CollectionWarning, evaluate, evaluate_runs, judged_fraction


def test_topic_set_missing_and_extra(tiny_collection, cache_dir):
    col = load_collection(tiny_collection)
    with pytest.warns(CollectionWarning, match="absent from the qrels were dropped"):
        scores = evaluate(col, "P@2")
    assert scores.topics == ["1", "2", "3", "4"]  # topic 5 has no relevant document
    matrix = scores.matrix()
    assert matrix.loc["base"].tolist() == [0.5] * 4
    assert matrix.loc["good"].tolist() == [1.0, 1.0, 0.5, 1.0]
    assert matrix.loc["risky"].tolist() == [1.0, 1.0, 0.0, 0.0]  # topic 3 missing: scored 0
    assert scores.missing.values.tolist() == [["risky", "3"]]
    assert scores.extra.values.tolist() == [["risky", "99"]]


def _gdeval_fixture(tmp_path, tied: bool):
    write_qrels(tmp_path / "qrels.txt", [("1", "d1", 2), ("1", "d2", 1), ("1", "d3", 0), ("1", "d4", -2)])
    scores = (1.0, 1.0) if tied else (2.0, 1.0)
    return evaluate_runs(
        tmp_path / "qrels.txt",
        {
            "s": write_run(
                tmp_path / "runs" / "s.run",
                [("1", "d2", scores[0]), ("1", "d1", scores[1]), ("1", "d4", 0.5), ("1", "d3", 0.1)],
            )
        },
        ["ERR@20", "nDCG(dcg='exp-log2')@20"],
        use_cache=False,
    )


@pytest.mark.parametrize("tied", [False, True])
def test_err_and_ndcg_gdeval_conventions(tmp_path, tied):
    # d2 (grade 1) then d1 (grade 2); spam (-2) counts as non-relevant. With tied scores gdeval orders by
    # docno descending, which also puts d2 first. ERR = 1/16 + (15/16)(3/16)/2 = 0.150390625;
    # nDCG = (1 + 3/log2 3) / (3 + 1/log2 3) = 0.796711.
    result = _gdeval_fixture(tmp_path, tied)
    assert result["ERR@20"].values["score"].tolist() == [pytest.approx(0.15039, abs=1e-5)]
    assert result["nDCG(dcg='exp-log2')@20"].values["score"].tolist() == [pytest.approx(0.79671, abs=1e-5)]


def test_cache_is_keyed_by_content(tiny_collection, cache_dir):
    col = load_collection(tiny_collection)
    messages = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CollectionWarning)
        first = evaluate(col, "P@2", progress=messages.append).matrix()
        again = evaluate(col, "P@2", progress=messages.append).matrix()
        assert messages[0].endswith("0 cached, 3 to evaluate") and messages[-1].endswith("3 cached, 0 to evaluate")
        assert again.equals(first)
        # change the baseline run: same size, same mtime, different content -> re-evaluated
        run = tiny_collection / "runs" / "base.run"
        stat = run.stat()
        run.write_text(run.read_text().replace("1-n1", "1-r2"))
        os.utime(run, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        messages.clear()
        changed = evaluate(col, "P@2", progress=messages.append).matrix()
    assert messages[0].endswith("2 cached, 1 to evaluate")
    assert changed.loc["base", "1"] == 1.0 and first.loc["base", "1"] == 0.5


def test_parallel_equals_sequential(tiny_collection, tmp_path):
    col = load_collection(tiny_collection)
    runs = dict(col.runs)
    one = evaluate_runs(col.qrels, runs, ["P@2", "nDCG@3"], jobs=1, use_cache=False)
    two = evaluate_runs(col.qrels, runs, ["P@2", "nDCG@3"], jobs=2, use_cache=False)
    for measure in one:
        a = one[measure].values.sort_values(["system", "topic"]).reset_index(drop=True)
        b = two[measure].values.sort_values(["system", "topic"]).reset_index(drop=True)
        assert a.equals(b)


def test_malformed_run_in_collection_names_file(tiny_collection, cache_dir):
    (tiny_collection / "runs" / "base.run").write_text("1 Q0 d1 1 1 t\n1 Q0 d2 x 1 t\n")
    with pytest.raises(Exception, match=r"base\.run, line 2: 'x' is not a non-negative integer"):
        evaluate(load_collection(tiny_collection), "P@2", jobs=2)


def test_judged_fraction(tiny_collection, cache_dir):
    judged = judged_fraction(load_collection(tiny_collection), "P@2").set_index("system")["judged"]
    assert judged["base"] == pytest.approx(1.0)  # Judged@2: r1 and n1 are judged
    assert judged["risky"] == pytest.approx((1 + 1 + 0.5) / 3)


def test_scores_csv_collection(tmp_path, cache_dir):
    root = tmp_path / "covid"
    root.mkdir()
    (root / "scores.csv").write_text("system,topic,score\na,1,0.5\na,2,0.1\nb,1,0.25\n")
    (root / "collection.toml").write_text('measure = "RBP(p=0.8)"\nbaseline = "a"\n')
    scores = evaluate(load_collection(root), "RBP(p=0.8)")
    assert scores.matrix().loc["b"].tolist() == [0.25, 0.0]
    assert scores.missing.values.tolist() == [["b", "2"]]
    assert len(read_scores(root / "scores.csv")) == 3


def test_bare_score_table_is_a_collection(tmp_path, cache_dir):
    table = tmp_path / "campaign" / "round1.csv"
    table.parent.mkdir()
    table.write_text("system,topic,score\na,1,0.5\na,2,0.1\nb,1,0.25\nb,2,0.3\n")
    col = load_collection(table)
    assert col.name == "round1" and col.location == table and col.files() == [table]  # named after the file
    assert evaluate(col, "RBP(p=0.8)").matrix().loc["b"].tolist() == [0.25, 0.3]


def test_bare_score_table_is_labelled_score_and_says_why(tmp_path, cache_dir):
    """Issue 13 point 6: no `measure` column and no --measure gives `score`, not riskreport's nDCG@10 default,
    and the report says which baseline and measure it chose, and why."""
    from riskreport.measures.params import resolve_parameters
    from riskreport.render import report

    table = tmp_path / "round1.csv"
    table.write_text("system,topic,score\nzeta,1,0.5\nzeta,2,0.1\nAlpha,1,0.25\nAlpha,2,0.3\n")
    p = resolve_parameters(table)
    assert (p.measure, p.baseline) == ("score", "Alpha")
    notes = " ".join(report.choice_notes(p, baseline_given=False, measure_given=False))
    assert "Alpha is the first system of the collection in alphabetical order" in notes
    assert "score is the label of the values of round1.csv, which has no `measure` column" in notes
    assert resolve_parameters(table, measure="RBP(p=0.8)").measure == "RBP(p=0.8)"
    assert report.choice_notes(resolve_parameters(table, baseline="zeta", measure="AP"), True, True) == []


def test_score_table_measures_default_and_errors(tmp_path, cache_dir):
    from riskreport.errors import ParameterError, UnknownNameError
    from riskreport.measures.params import resolve_parameters

    one = tmp_path / "one.csv"
    one.write_text("system,topic,score,measure\na,1,0.5,my_metric\nb,1,0.25,my_metric\n")
    assert resolve_parameters(one).measure == "my_metric"  # any label, not only ir_measures strings
    assert evaluate(load_collection(one), "my_metric").matrix().loc["b"].tolist() == [0.25]
    two = tmp_path / "two.csv"
    two.write_text("system,topic,score,measure\na,1,0.5,AP\nb,1,0.25,AP\na,1,0.4,RBP\nb,1,0.2,RBP\n")
    with pytest.raises(ParameterError, match=r"two.csv holds scores of 2 measures \(AP, RBP\): choose one"):
        resolve_parameters(two)
    # ir_measures reads `RBP` and `RBP(p=0.8)` as one measure; the label keeps the parameter the user gave
    p = resolve_parameters(two, measure="RBP(p=0.8)")
    assert p.measure == "RBP(p=0.8)"
    assert evaluate(p.collection, p.measure).matrix().loc["b"].tolist() == [0.2]
    with pytest.raises(UnknownNameError, match="AP"):
        resolve_parameters(two, measure="ap")


def test_measure_labels_keep_parameters_equal_to_a_default():
    from riskreport.measures.evaluation import canonical_measure

    assert canonical_measure("RBP(p=0.8)") == "RBP(p=0.8)"  # ir_measures prints it as `RBP`
    assert canonical_measure(canonical_measure("RBP(rel=2,p=0.8)")) == "RBP(rel=2,p=0.8)"
    assert canonical_measure(" nDCG(dcg='exp-log2')@20 ") == "nDCG(dcg='exp-log2')@20"
    assert canonical_measure("RBP") == "RBP"
