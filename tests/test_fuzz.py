"""Fuzzing the readers: any file content either loads or raises the project's own error, never another one."""

from __future__ import annotations

import bz2
import gzip

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from riskreport.errors import RiskReportError
from riskreport.io.trec import read_qrels, read_run, read_scores

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

TOKENS = st.sampled_from(
    [
        "1",
        "2",
        "10",
        "Q0",
        "0",
        "-2",
        "d1",
        "d2",
        "doc-9",
        "3.5",
        "-0.5",
        "1e400",
        "nan",
        "inf",
        "NaN",
        "+1",
        "1.0",
        "99999999999999999999",
        "x",
        "",
        '"',
        "'",
        "#",
        "é",
        "\ufeff",
        "\x0c",
        "\x00",
        "\xa0",
        "tag",
        "system",
        "topic",
        "score",
        "measure",
        "instance",
        ",",
    ]
)
SPACES = st.sampled_from([" ", "  ", "\t", " \t "])
ENDINGS = st.sampled_from(["\n", "\r\n", "\r", ""])


@st.composite
def whitespace_lines(draw, columns: int) -> str:
    """Mostly well-formed lines of `columns` tokens, with the occasional wrong count or odd token."""
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        count = draw(st.sampled_from([columns] * 4 + [0, columns - 1, columns + 1]))
        tokens = draw(st.lists(TOKENS, min_size=count, max_size=count))
        lines.append(draw(SPACES).join(tokens) + draw(ENDINGS))
    return "".join(lines)


@st.composite
def csv_text(draw) -> str:
    header = draw(
        st.sampled_from(
            [
                "system,topic,score",
                "system,topic,score,measure",
                "system,topic,score,instance",
                "topic,system,score",
                "system,topic",
                "system,topic,score,score",
                "",
                "a;b;c",
            ]
        )
    )
    rows = [",".join(draw(st.lists(TOKENS, min_size=2, max_size=5))) for _ in range(draw(st.integers(0, 6)))]
    return "\n".join([header] + rows) + draw(ENDINGS)


def _contents(text_strategy):
    """Bytes: the text as UTF-8 or Latin-1, or arbitrary bytes."""
    return st.one_of(
        text_strategy.map(lambda t: t.encode("utf-8")),
        text_strategy.map(lambda t: t.encode("latin-1", errors="replace")),
        st.binary(max_size=300),
    )


def _load_or_own_error(reader, path, data: bytes, compress=None, cut: int = 0):
    if compress is not None:
        data = compress(data)
        data = data[: len(data) - cut] if cut else data
    path.write_bytes(data)
    try:
        table = reader(path)
    except RiskReportError:
        return None
    assert len(table) > 0
    return table


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@FUZZ
@given(data=_contents(whitespace_lines(6)))
def test_read_run(folder, data):
    run = _load_or_own_error(read_run, folder / "a.run", data)
    if run is not None:
        assert list(run.columns) == ["query_id", "doc_id", "score"]
        assert np.isfinite(run["score"].to_numpy()).all()
        assert not run.duplicated(["query_id", "doc_id"]).any()


@FUZZ
@given(data=_contents(whitespace_lines(4)))
def test_read_qrels(folder, data):
    qrels = _load_or_own_error(read_qrels, folder / "qrels.txt", data)
    if qrels is not None:
        assert list(qrels.columns) == ["query_id", "doc_id", "relevance"]
        assert qrels["relevance"].dtype == np.int64


@FUZZ
@given(data=_contents(csv_text()))
def test_read_scores(folder, data):
    scores = _load_or_own_error(read_scores, folder / "scores.csv", data)
    if scores is not None:
        assert list(scores.columns) == ["system", "topic", "score", "measure", "instance"]
        assert (scores["score"] >= 0).all() and np.isfinite(scores["score"].to_numpy()).all()


@FUZZ
@given(
    data=_contents(whitespace_lines(6)), compress=st.sampled_from([gzip.compress, bz2.compress]), cut=st.integers(0, 40)
)
def test_read_compressed_run(folder, data, compress, cut):
    suffix = ".gz" if compress is gzip.compress else ".bz2"
    _load_or_own_error(read_run, folder / f"a.run{suffix}", data, compress, cut)
