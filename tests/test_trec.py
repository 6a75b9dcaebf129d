"""Readers: malformed lines are reported with file, line and expectation."""

import bz2
import gzip

import pytest

from riskreport.errors import InputFormatError
from riskreport.io.trec import read_qrels, read_run, read_scores

GOOD_RUN = "1 Q0 d1 1 2.5 tagA\n1 Q0 d2 2 1.5 tagA\n2 Q0 d1 1 0.3 tagA\n"


def test_read_run_columns_and_values(tmp_path):
    path = tmp_path / "a.run"
    path.write_text(GOOD_RUN)
    run = read_run(path)
    assert list(run.columns) == ["query_id", "doc_id", "score"]
    assert run["query_id"].tolist() == ["1", "1", "2"]
    assert run["score"].tolist() == [2.5, 1.5, 0.3]


@pytest.mark.parametrize("opener, suffix", [(gzip.open, ".gz"), (bz2.open, ".bz2")])
def test_compressed_runs(tmp_path, opener, suffix):
    path = tmp_path / f"a.run{suffix}"
    with opener(path, "wt") as handle:
        handle.write(GOOD_RUN)
    assert len(read_run(path)) == 3


def test_blank_lines_keep_line_numbers(tmp_path):
    path = tmp_path / "a.run"
    path.write_text("1 Q0 d1 1 2.5 t\n\n1 Q0 d2 2 x t\n")
    with pytest.raises(InputFormatError, match=r"a\.run, line 3: 'x' is not a finite number"):
        read_run(path)


@pytest.mark.parametrize(
    "line, problem",
    [
        ("1 Q0 d9 3 1.0", r"line 2: 5 column\(s\) instead of 6"),
        ("1 Q0 d9 3 1.0 t extra", r"line 2: 7 columns instead of 6"),
        ("1 Q0 d9 three 1.0 t", r"line 2: 'three' is not a non-negative integer"),
        ("1 Q0 d9 3 nan t", r"line 2: 'nan' is not a finite number"),
    ],
)
def test_malformed_run_lines(tmp_path, line, problem):
    path = tmp_path / "bad.run"
    path.write_text(f"1 Q0 d1 1 2.5 t\n{line}\n2 Q0 d1 1 1 t\n")
    with pytest.raises(InputFormatError, match=problem) as info:
        read_run(path)
    assert info.value.line == 2 and info.value.path == path


def test_duplicate_document_names_both_lines(tmp_path):
    path = tmp_path / "dup.run"
    path.write_text("1 Q0 d1 1 3 t\n1 Q0 d2 2 2 t\n2 Q0 d1 1 1 t\n1 Q0 d1 3 1 t\n")
    with pytest.raises(InputFormatError, match=r"document d1 ranked twice for topic 1 \(lines 1 and 4\)"):
        read_run(path)


def test_empty_binary_non_utf8_and_truncated(tmp_path):
    empty = tmp_path / "empty.run"
    empty.write_text("")
    with pytest.raises(InputFormatError, match="empty"):
        read_run(empty)
    binary = tmp_path / "bin.run"
    binary.write_bytes(b"\x00\x01\x02garbage")
    with pytest.raises(InputFormatError, match="binary"):
        read_run(binary)
    latin = tmp_path / "latin.run"
    latin.write_bytes(b"1 Q0 d1 1 1 t\n1 Q0 caf\xe9 2 0.5 t\n")
    with pytest.raises(InputFormatError, match=r"line 2: not UTF-8"):
        read_run(latin)
    truncated = tmp_path / "cut.run.gz"
    truncated.write_bytes(gzip.compress(GOOD_RUN.encode() * 200)[:-40])
    with pytest.raises(InputFormatError, match="truncated or corrupt"):
        read_run(truncated)


def test_qrels(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("1 0 d1 2\n1 0 d2 -2\n2 0 d1 0\n")
    qrels = read_qrels(path)
    assert qrels["relevance"].tolist() == [2, -2, 0]
    path.write_text("1 0 d1 2\n1 0 d2 high\n")
    with pytest.raises(InputFormatError, match=r"line 2: 'high' is not an integer"):
        read_qrels(path)
    path.write_text("1 0 d1 2\n1 0 d1 1\n")
    with pytest.raises(InputFormatError, match=r"judged twice .* \(lines 1 and 2\)"):
        read_qrels(path)


def test_scores_table(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("system,topic,score\na,1,0.5\nb,1,0.25\n")
    table = read_scores(path)
    assert table[["system", "topic", "score"]].values.tolist() == [["a", "1", 0.5], ["b", "1", 0.25]]
    path.write_text("system,topic,score\na,1,0.5\na,1,0.6\n")
    with pytest.raises(InputFormatError, match=r"two scores for topic 1 \(lines 2 and 3\)"):
        read_scores(path)
    path.write_text("system,topic,value\na,1,0.5\n")
    with pytest.raises(InputFormatError, match="missing column"):
        read_scores(path)
    path.write_text("system,topic,score\na,1,high\n")
    with pytest.raises(InputFormatError, match=r"line 2: 'high'"):
        read_scores(path)
