"""The bad-input matrix (issue 7, README "Bad input"): one test per row, at the level a user meets it.

Each row either raises a `RiskReportError` whose message names the file (and line) and what was
expected, or is handled as the README documents. A few rows go through `riskreport run` and check
exit code 1 with a one-paragraph message and no traceback.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import math
import re
import warnings

import numpy as np
import pytest
from conftest import write_qrels, write_run

import riskreport as rr
from riskreport.errors import InputFormatError, ParameterError, RiskReportError
from riskreport.io.collection import load_collection
from riskreport.io.trec import read_qrels, read_run, read_scores
from riskreport.measures.evaluation import evaluate
from riskreport.measures.params import check_alphas, resolve_parameters
from riskreport.run.cli.commands import main
from riskreport.stats import inference, mixed, risk
from riskreport.stats.instances import resolve_instance_parameters

RUN = "1 Q0 d1 1 2.5 t\n1 Q0 d2 2 1.5 t\n2 Q0 d1 1 1.0 t\n"


def _evaluate(root, systems=None):
    return evaluate(load_collection(root), "P@2", systems, jobs=1)


def _raises(call, path, line=None, match=""):
    """`call()` raises an InputFormatError naming `path` (and `line`) whose message matches `match`."""
    with pytest.raises(InputFormatError, match=match) as info:
        call()
    assert info.value.path.name == path.name, str(info.value)
    assert info.value.line == line, str(info.value)
    assert str(info.value).startswith(f"{info.value.path}" + (f", line {line}: " if line else ": "))
    return info.value


def _scores_csv(root, text):
    root.mkdir(parents=True, exist_ok=True)
    (root / "scores.csv").write_text(text)
    return root / "scores.csv"


# ---- one function per row of the matrix -------------------------------------------------------


def empty_run(tmp_path, tiny):
    """Error: an empty run is a failed copy or submission, not a system that found nothing."""
    (tiny / "runs" / "empty.run").write_text("")
    _raises(lambda: _evaluate(tiny), tiny / "runs" / "empty.run", match="the file is empty")
    (tiny / "runs" / "empty.run").write_text("\n  \n")
    _raises(lambda: _evaluate(tiny), tiny / "runs" / "empty.run", match="no data lines")
    assert _evaluate(tiny, ["base", "good"]).systems == ["base", "good"]  # the others still work


def run_with_only_unknown_topics(tmp_path, tiny):
    """Error naming the run: sharing no topic with the qrels, it would score 0 everywhere."""
    write_run(tiny / "runs" / "other.run", [("201", "d", 2), ("202", "d", 1)])
    with pytest.raises(
        RiskReportError,
        match=r"other\.run: none of its 2 topic\(s\) \(201, 202\) is among the 4 "
        r"topics of qrels\.txt with a relevant document \(1, 2, 3, 4\)",
    ):
        _evaluate(tiny)
    write_run(tiny / "runs" / "other.run", [("201", "d", 2), ("4", "4-r1", 1)])  # one known topic: scored
    with pytest.warns(rr.evaluation.CollectionWarning, match="absent from the qrels were dropped"):
        scores = _evaluate(tiny)
    assert scores.matrix().loc["other"].tolist() == [0.0, 0.0, 0.0, 0.5]
    (tiny / "runs" / "other.run").unlink()
    _scores_csv(tiny, "system,topic,score\ntable,301,0.5\n")  # the same for scores.csv
    with pytest.raises(RiskReportError, match=r"scores\.csv: none of the 1 topic\(s\) of system 'table' \(301\)"):
        _evaluate(tiny)


def qrels_with_no_relevant_documents(tmp_path, tiny):
    """Error naming the qrels, raised by resolve_parameters before any run is evaluated."""
    write_qrels(tiny / "qrels.txt", [("1", "1-r1", 0), ("2", "2-r1", -2)])
    _raises(lambda: resolve_parameters(tiny), tiny / "qrels.txt", match="no topic has a relevant document")
    _raises(lambda: _evaluate(tiny), tiny / "qrels.txt", match="no topic has a relevant document")


def non_numeric_score_or_relevance(tmp_path, tiny):
    """Error with file and line: the value and the column expected."""
    run = tmp_path / "a.run"
    run.write_text(RUN.replace("1.5", "high"))
    _raises(lambda: read_run(run), run, 2, r"'high' is not a finite number \(expected a number in column 5")
    run.write_text(RUN.replace("d2 2 1.5", "d2 two 1.5"))
    _raises(lambda: read_run(run), run, 2, "'two' is not a non-negative integer")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n1 0 d2 relevant\n")
    _raises(lambda: read_qrels(qrels), qrels, 2, r"'relevant' is not an integer \(expected an integer relevance")
    qrels.write_text("1 0 d1 1\n1 0 d2 1.5\n")
    _raises(lambda: read_qrels(qrels), qrels, 2, "'1.5' is not an integer")
    qrels.write_text("1 0 d1 99999999999999999999\n")  # no OverflowError
    _raises(lambda: read_qrels(qrels), qrels, 1, "is not an integer")
    scores = _scores_csv(tmp_path / "s", "system,topic,score\na,1,0.5\na,2,high\n")
    _raises(lambda: read_scores(scores), scores, 3, "'high' is not a finite number")
    (tiny / "runs" / "base.run").write_text(RUN.replace("2.5", "x"))  # met through a collection
    _raises(lambda: _evaluate(tiny), tiny / "runs" / "base.run", 1, "'x' is not a finite number")


def wrong_column_count(tmp_path, tiny):
    """Error with file and line, wherever the line is (first line too: no column taken as an index)."""
    run = tmp_path / "a.run"
    for text, line, found in [
        (RUN.replace("1 Q0 d2 2 1.5 t", "1 Q0 d2 2 1.5"), 2, r"5 column\(s\) instead of 6"),
        ("1 Q0 d1 1 2.5 t extra\n" + RUN, 1, "7 columns instead of 6"),
        (RUN + "2 Q0 d2 2 0.5 t x y\n", 4, "8 columns instead of 6"),
    ]:
        run.write_text(text)
        _raises(lambda: read_run(run), run, line, found + r" \(expected 6 whitespace-separated columns")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1 extra\n1 0 d2 0\n")
    _raises(lambda: read_qrels(qrels), qrels, 1, "5 columns instead of 4")
    scores = _scores_csv(tmp_path / "s", "system,topic,score\na,1,0.5,x\n")
    _raises(lambda: read_scores(scores), scores, 2, r"4 field\(s\) instead of 3")
    _scores_csv(tmp_path / "s", "system,topic\na,1\n")
    _raises(lambda: read_scores(scores), scores, 1, "missing column.*score")
    _scores_csv(tmp_path / "s", "system,topic,score,instnace\na,1,0.5,1\n")
    _raises(lambda: read_scores(scores), scores, 1, "unknown column.*'instnace'")
    _scores_csv(tmp_path / "s", "system,topic,score,score\na,1,0.5,0.4\n")
    _raises(lambda: read_scores(scores), scores, 1, "'score' appear twice")


def binary_or_non_utf8_file(tmp_path, tiny):
    """Error naming the file and, for a NUL byte or invalid UTF-8, the line (anywhere in the file)."""
    run = tmp_path / "a.run"
    run.write_bytes(b"\x00\x01\x02garbage")
    _raises(lambda: read_run(run), run, 1, r"binary content \(NUL bytes\)")
    run.write_bytes(RUN.encode() * 1000 + b"9 Q0 d\x009 1 1 t\n")  # far beyond the first 8 KB
    _raises(lambda: read_run(run), run, 3001, "binary content")
    run.write_bytes(RUN.encode("utf-16"))
    _raises(lambda: read_run(run), run, 1, "binary content")
    run.write_bytes(b"1 Q0 d1 1 1 t\n1 Q0 caf\xe9 2 0.5 t\n")
    _raises(lambda: read_run(run), run, 2, r"not UTF-8 text \(expected UTF-8 text\)")
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(b"1 0 d1 1\n1 0 d2 0\n1 0 \xff\xfe 1\n")
    _raises(lambda: read_qrels(qrels), qrels, 3, "not UTF-8")
    scores = tmp_path / "scores.csv"
    scores.write_bytes(b"system,topic,score\ncaf\xe9,1,0.5\n")
    _raises(lambda: read_scores(scores), scores, 2, "not UTF-8")
    scores.write_bytes(b"system,topic,score\na,1,0.5\x00\n")
    _raises(lambda: read_scores(scores), scores, 2, "binary content")


def truncated_gz(tmp_path, tiny):
    """Error naming the file: truncated or corrupt compressed data (also .bz2, or text named .gz)."""
    gz = tiny / "runs" / "cut.run.gz"
    gz.write_bytes(gzip.compress(RUN.encode() * 200)[:-40])
    _raises(lambda: read_run(gz), gz, None, "truncated or corrupt")
    _raises(lambda: _evaluate(tiny), gz, None, "truncated or corrupt")
    corrupt = tmp_path / "bad.run.gz"
    data = bytearray(gzip.compress(RUN.encode() * 200))
    data[30:40] = b"\xff" * 10
    corrupt.write_bytes(bytes(data))
    _raises(lambda: read_run(corrupt), corrupt, None, "truncated or corrupt")
    bz = tmp_path / "cut.run.bz2"
    bz.write_bytes(bz2.compress(RUN.encode() * 200)[:-30])
    _raises(lambda: read_run(bz), bz, None, "truncated or corrupt")
    plain = tmp_path / "plain.txt.gz"
    plain.write_text(RUN)
    _raises(lambda: read_run(plain), plain, None, r"Not a gzipped file.*truncated or corrupt")


def duplicate_docnos(tmp_path, tiny):
    """Error naming both lines; two files of one system id are an error naming both files."""
    run = tmp_path / "a.run"
    run.write_text(RUN + "1 Q0 d1 3 0.5 t\n")
    _raises(lambda: read_run(run), run, 4, r"document d1 ranked twice for topic 1 \(lines 1 and 4\)")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n2 0 d1 0\n1 0 d1 2\n")
    _raises(lambda: read_qrels(qrels), qrels, 3, r"document d1 judged twice for topic 1 \(lines 1 and 3\)")
    scores = _scores_csv(tmp_path / "s", "system,topic,score\na,1,0.5\nb,1,0.5\na,1,0.25\n")
    _raises(lambda: read_scores(scores), scores, 4, r"system a has two scores for topic 1 \(lines 2 and 4\)")
    write_run(tiny / "runs" / "good.run", [("1", "1-r1", 1)])  # beside good.run.gz
    with pytest.raises(InputFormatError, match="two run files name the system 'good': good.run and good.run.gz"):
        load_collection(tiny)


def nan_or_negative_scores_in_scores_csv(tmp_path, tiny):
    """Error with line: NaN, empty and infinite scores, and negative ones (every ir_measures measure is ≥ 0)."""
    for value, shown in [("NaN", "'NaN'"), ("nan", "'nan'"), ("", "''"), ("inf", "'inf'"), ("1e999", "'1e999'")]:
        scores = _scores_csv(tmp_path / "s", f"system,topic,score\na,1,0.5\na,2,{value}\n")
        _raises(functools.partial(read_scores, scores), scores, 3, f"{shown} is not a finite number")
    scores = _scores_csv(tmp_path / "s", "system,topic,score\na,1,0.5\nb,1,-0.125\n")
    error = _raises(lambda: read_scores(scores), scores, 3, "score -0.125 is negative")
    assert "every ir_measures measure" in str(error)
    scores = _scores_csv(tmp_path / "s", "system,topic,score\na,1,0\nb,1,-0\n")  # zero is a score
    assert read_scores(scores)["score"].tolist() == [0.0, 0.0]


def baseline_missing_topics(tmp_path, tiny):
    """Handled (docs/measures/index.md, Scores): the baseline scores 0 on the topics its run lacks, listed in `missing`."""
    write_run(tiny / "runs" / "base.run", [(t, f"{t}-r1", 3) for t in ("1", "2", "4")])
    with pytest.warns(rr.evaluation.CollectionWarning):  # risky's topic 99 is dropped
        scores = _evaluate(tiny)
    assert scores.matrix().loc["base", "3"] == 0.0
    assert ("base", "3") in set(map(tuple, scores.missing[["system", "topic"]].to_numpy()))
    table = risk.risk_table(scores.matrix(), "base", [0, 5])
    assert table["urisk"].notna().all()


def one_topic_only(tmp_path, tiny):
    """Handled: loads and evaluates; TRisk, SE, p, intervals, tests undefined (NaN) with a reason, no crash
    and no RuntimeWarning; the mixed model of non-deterministic systems is refused (it needs 2 topics)."""
    write_qrels(tiny / "qrels.txt", [("1", "1-r1", 2), ("1", "1-r2", 1), ("2", "2-n1", 0)])
    with pytest.warns(rr.evaluation.CollectionWarning):  # topics 2-4 of the runs are dropped
        matrix = _evaluate(tiny).matrix()
    assert list(matrix.columns) == ["1"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        table = risk.risk_table(matrix, "base", [0, 5])
        assert table["trisk"].isna().all() and table["p_value"].isna().all() and table["se"].isna().all()
        assert (table["verdict"] == "undefined").all() and (table["note"] == risk.ONE_TOPIC_NOTE).all()
        assert table["urisk"].notna().all()
        assert risk.topic_risk(matrix, "base", [0])[["tr", "tj"]].isna().all().all()
        boot = inference.bootstrap_table(matrix, "base", [0, 5], samples=200)
        assert boot[["ci_low", "ci_high"]].isna().all().all() and (boot["verdict"] == "inconclusive").all()
        assert len(inference.bootstrap_distribution(matrix, "base", "good", 5, samples=50)) == 50
        tests = inference.tests_table(matrix, "base", [0, 5], samples=200)
        assert tests.loc[tests["test"] == "t", "p_value"].isna().all()
        assert inference.diagnostics_table(matrix, "base", [0])[["skewness", "d_z"]].isna().all().all()
        tukey = inference.tukey_hsd(matrix, "base", [0, 5])
        assert tukey["p_value"].isna().all() and not tukey["significant"].any()
        assert mixed.mixed_systems(matrix, "base", [0])[["se", "p_value"]].isna().all().all()
        rr.effectiveness_table(matrix, "base")
    (tiny / "instances" / "nd" / "1.run").parent.mkdir(parents=True)
    for name in ("1.run", "2.run"):
        write_run(tiny / "instances" / "nd" / name, [("1", "1-r1", 1)])
    with pytest.raises(ParameterError, match="has 1 topic .*needs at least 2 topics"):
        resolve_instance_parameters(tiny)


def two_systems_with_identical_scores(tmp_path, tiny):
    """Handled: against the baseline TRisk is undefined (SE = 0) with its note, tests and d_z NaN, the
    interval is [0, 0]; also a constant shift (SE = 0 up to float noise) gives no spurious 10^15 statistics."""
    (tiny / "runs" / "copy.run").write_bytes((tiny / "runs" / "base.run").read_bytes())
    (tiny / "runs" / "twin.run").write_bytes((tiny / "runs" / "risky.txt").read_bytes())
    with pytest.warns(rr.evaluation.CollectionWarning):
        matrix = _evaluate(tiny).matrix()
    table = risk.risk_table(matrix, "base", [0, 5]).set_index(["system", "alpha"])
    assert np.isnan(table.loc[("copy", 5.0), "trisk"]) and table.loc[("copy", 5.0), "urisk"] == 0
    assert table.loc[("copy", 5.0), "note"] == risk.SE_ZERO_NOTE
    assert table.loc["twin"].equals(table.loc["risky"])
    tests = inference.tests_table(matrix, "base", [0], samples=200).set_index(["system", "test"])
    assert np.isnan(tests.loc[("copy", "t"), "p_value"]) and tests.loc[("copy", "sign"), "p_value"] == 1
    boot = inference.bootstrap_table(matrix, "base", [0], samples=200)
    assert (boot.loc[boot["system"] == "copy", ["ci_low", "ci_high"]] == 0).all().all()
    tukey = inference.tukey_hsd(matrix, "base", [0]).set_index(["system_a", "system_b"])
    assert tukey.loc[("base", "copy"), "diff"] == 0 and tukey.loc[("base", "copy"), "p_value"] == pytest.approx(1)
    shifted = matrix.loc[["base"]].copy()
    shifted.loc["shift"] = matrix.loc["base"] + 0.1  # Δ = 0.1 on every topic
    assert math.isnan(inference.tests_table(shifted, "base", [0], samples=100)["statistic"].iloc[0])
    assert risk.risk_table(shifted, "base", [0])["verdict"].iloc[0] == "undefined"
    assert inference.diagnostics_table(shifted, "base", [0])["d_z"].isna().all()
    assert risk.topic_risk(shifted, "base", [0])["flag"].eq("").all()


def alpha_negative_or_not_a_number(tmp_path, tiny):
    """Error: a ParameterError (CLI, job files, Python) or an error naming collection.toml."""
    for alphas in ([-1], [0, -0.5], [float("nan")], [float("inf")], ["x"], "10", [], [True], object()):
        with pytest.raises(ParameterError, match="alphas must be"):
            check_alphas(alphas)
    with pytest.raises(ParameterError, match="alphas must be"):
        resolve_parameters(tiny, alphas=[-1])
    for text in ("[-1]", "[nan]", "[inf]", "[]", '["1"]', "5"):
        (tiny / "collection.toml").write_text(f"alphas = {text}\n")
        _raises(lambda: load_collection(tiny), tiny / "collection.toml", None, "alphas = .*non-negative numbers")
    assert check_alphas([5, 0, 1, 1]) == [0.0, 1.0, 5.0]


def system_name_given_twice(tmp_path, tiny):
    """Handled: a name repeated in `systems` counts once (first position kept); two files or sources
    giving one system id are an error naming both."""
    assert resolve_parameters(tiny, systems=["good", "good", "base"]).systems == ["good", "base"]
    assert resolve_parameters(tiny, systems="risky,good,risky").systems == ["base", "risky", "good"]
    assert _evaluate(tiny, ["good", "good"]).systems == ["good"]
    with pytest.raises(ParameterError, match="systems must be a list"):
        resolve_parameters(tiny, systems=5)
    _scores_csv(tiny, "system,topic,score\ngood,1,0.5\n")
    with pytest.raises(InputFormatError, match="scores.csv: system 'good' has both a run file and scores"):
        resolve_parameters(tiny)


def collection_with_a_single_system(tmp_path, tiny):
    """Error: a risk report needs the baseline and one other system."""
    for name in ("good.run.gz", "risky.txt"):
        (tiny / "runs" / name).unlink()
    with pytest.raises(ParameterError, match=r"needs the baseline and at least one other system; got \['base'\]"):
        resolve_parameters(tiny)
    assert _evaluate(tiny).systems == ["base"]  # evaluating it is fine


def empty_instances_folder(tmp_path, tiny):
    """Handled / error: an empty instances/ is ignored (no non-deterministic system, which the
    nondeterministic template refuses clearly); an empty instances/<system>/ is an error for templates
    on non-deterministic systems, raised before any run is evaluated."""
    (tiny / "instances").mkdir()
    assert resolve_parameters(tiny).systems == ["base", "good", "risky"]
    with pytest.raises(ParameterError, match="no non-deterministic system other than the baseline"):
        resolve_instance_parameters(tiny)
    (tiny / "instances" / "nd").mkdir()
    (tiny / "instances" / "nd" / "notes.md").write_text("not a run")
    assert resolve_parameters(tiny).systems == ["base", "good", "risky"]  # risk_report ignores instances/
    _raises(
        lambda: resolve_instance_parameters(tiny),
        tiny / "instances" / "nd",
        None,
        r"the folder holds no run files \(expected one run file per instance",
    )


MATRIX = {
    "empty run": empty_run,
    "run with only unknown topics": run_with_only_unknown_topics,
    "qrels with no relevant documents": qrels_with_no_relevant_documents,
    "non-numeric score or relevance": non_numeric_score_or_relevance,
    "wrong column count": wrong_column_count,
    "binary or non-UTF-8 file": binary_or_non_utf8_file,
    "truncated .gz": truncated_gz,
    "duplicate docnos": duplicate_docnos,
    "NaN or negative scores in scores.csv": nan_or_negative_scores_in_scores_csv,
    "baseline missing topics": baseline_missing_topics,
    "one topic only": one_topic_only,
    "two systems with identical scores": two_systems_with_identical_scores,
    "alpha negative or not a number": alpha_negative_or_not_a_number,
    "a system name given twice": system_name_given_twice,
    "a collection with a single system": collection_with_a_single_system,
    "an empty instances/ folder": empty_instances_folder,
}


@pytest.mark.parametrize("row", MATRIX.values(), ids=MATRIX.keys())
def test_bad_input_matrix(row, tmp_path, tiny_collection, cache_dir):
    row(tmp_path, tiny_collection)


# ---- as the command line reports them ----------------------------------------------------------


def _break_empty_run(root):
    (root / "runs" / "empty.run").write_text("")
    return [], r"runs/empty\.run: the file is empty \(expected 6 whitespace-separated columns"


def _break_unknown_topics(root):
    write_run(root / "runs" / "other.run", [("201", "d", 1)])
    return [], r"runs/other\.run: none of its 1 topic\(s\) \(201\) is among the 4 topics of qrels\.txt"


def _break_no_relevant(root):
    write_qrels(root / "qrels.txt", [("1", "1-r1", 0)])
    return [], r"qrels\.txt: no topic has a relevant document"


def _break_single_system(root):
    (root / "runs" / "good.run.gz").unlink()
    (root / "runs" / "risky.txt").unlink()
    return [], r"needs the baseline and at least one other system"


def _break_bad_line(root):
    (root / "runs" / "risky.txt").write_text("1 Q0 d1 1 2.5 t\n1 Q0 d2 2 x t\n")
    return [], r"runs/risky\.txt, line 2: 'x' is not a finite number"


CLI_CASES = {
    "empty run": _break_empty_run,
    "run with only unknown topics": _break_unknown_topics,
    "qrels with no relevant documents": _break_no_relevant,
    "single system": _break_single_system,
    "non-numeric score": _break_bad_line,
}


@pytest.mark.parametrize("break_it", CLI_CASES.values(), ids=CLI_CASES.keys())
def test_cli_exit_1_with_file_and_line(break_it, tiny_collection, cache_dir, tmp_path, capsys):
    args, message = break_it(tiny_collection)
    out = tmp_path / "report"
    assert main(["run", "--collection", str(tiny_collection), "--out", str(out), "--quiet"] + args) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith("riskreport: error: ") and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1, captured.err
    assert re.search(message, captured.err), captured.err
    assert not out.exists() and captured.out == ""


@pytest.mark.parametrize(
    "name, available, expected",
    [
        ("BM25", ["bm25", "bm25-copy-a", "dense"], "bm25"),
        ("ndcg@10", ["ERR@20", "nDCG@10", "Judged@10", "AP"], "nDCG@10"),
        ("NDCG@20", ["ERR@20", "nDCG@10", "nDCG@20"], "nDCG@20"),
        ("bm52", ["BM25", "dense"], "BM25"),
        ("zzz", ["bm25"], None),
    ],
)
def test_suggestions_ignore_case(name, available, expected):
    from riskreport.errors import UnknownNameError, suggestion

    assert suggestion(name, available) == expected
    message = str(UnknownNameError("baseline", name, available))
    assert (f"Did you mean {expected!r}?" in message) if expected else "Did you mean" not in message


def test_measure_suggestion_ignores_case():
    from riskreport.errors import UnknownNameError
    from riskreport.measures.evaluation import canonical_measure

    with pytest.raises(UnknownNameError, match=r"Did you mean 'nDCG@10'\?"):
        canonical_measure("ndcg@10")


def test_fast_reader_gives_the_careful_readers_tables(tmp_path, monkeypatch):
    import pandas as pd

    from riskreport.io import trec

    run = tmp_path / "a.run"
    run.write_text("1 Q0 d1 1 2.5 t\n1 Q0 d2 2 2.5 t\n\n2 Q0 d1 1 -1e3 t\n")
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 d1 2\n1 0 d2 -2\n2 0 d1 0\n")
    fast = trec.read_run(run), trec.read_qrels(qrels)
    assert trec._read_single_spaced(run, trec.RUN_COLUMNS, {"rank": "int64", "score": "float64"}) is not None
    monkeypatch.setattr(trec, "_read_single_spaced", lambda *args: None)  # the careful reader only
    careful = trec.read_run(run), trec.read_qrels(qrels)
    for ours, theirs in zip(fast, careful):
        pd.testing.assert_frame_equal(ours, theirs)
