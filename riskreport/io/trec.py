"""Readers for the files of a collection: TREC qrels, TREC runs, per-topic score tables (`riskreport.io.score_files`).

Each reader returns a tidy DataFrame and checks the file as it goes: a malformed file
raises `InputFormatError` naming the file, the line and what was expected, never a
traceback from deep inside pandas. Compressed files (`.gz`, `.bz2`) are read transparently.
A file is read into memory once, so that NUL bytes, invalid UTF-8 and wrong column counts
are located by line wherever they are.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from riskreport.errors import InputFormatError
from riskreport.io.file_checks import (
    _check_text,
    _column_count_error,
    _not_utf8,
    _read_bytes,
    _reject_duplicates,
    _require_integer,
    _require_numeric,
)
from riskreport.io.score_files import (
    RANK_GAIN_COLUMNS,
    RANK_GAINS_FORMAT,
    SCORE_COLUMNS,
    SCORES_FORMAT,
    SYSTEM_LIST_FORMAT,
    read_rank_gains,
    read_scores,
    read_system_list,
)

# The CSV readers (riskreport.io.score_files) are importable from here as before
__all__ = [
    "QRELS_COLUMNS",
    "QRELS_FORMAT",
    "RANK_GAIN_COLUMNS",
    "RANK_GAINS_FORMAT",
    "RUN_COLUMNS",
    "RUN_FORMAT",
    "SCORES_FORMAT",
    "SCORE_COLUMNS",
    "SYSTEM_LIST_FORMAT",
    "read_qrels",
    "read_rank_gains",
    "read_run",
    "read_scores",
    "read_system_list",
]

RUN_COLUMNS = ["query_id", "q0", "doc_id", "rank", "score", "tag"]
QRELS_COLUMNS = ["query_id", "iteration", "doc_id", "relevance"]
RUN_FORMAT = "6 whitespace-separated columns: topic Q0 docno rank score tag"
QRELS_FORMAT = "4 whitespace-separated columns: topic iteration docno relevance"


def read_run(path: str | Path) -> pd.DataFrame:
    """Read a TREC run file into columns `query_id, doc_id, score`.

    The run tag (column 6) is ignored: systems are named by their file, because tags
    are often shared by several runs. A (topic, docno) pair ranked twice is an error
    naming both lines.
    """
    fast = _read_run_fast(Path(path))
    if fast is not None:
        return fast
    table = _read_whitespace_table(path, RUN_COLUMNS, RUN_FORMAT, text=("query_id", "q0", "doc_id", "tag"))
    _require_numeric(table, path, "score", "a number in column 5 (score)")
    _require_integer(table, path, "rank", "a non-negative integer in column 4 (rank)")
    _reject_duplicates(table, path, ["query_id", "doc_id"], "document {doc_id} ranked twice for topic {query_id}")
    return table[["query_id", "doc_id", "score"]].reset_index(drop=True)


def _read_run_fast(path: Path) -> pd.DataFrame | None:
    """A well-formed run at native speed (see `_read_single_spaced`); None when the careful reader must read it."""
    table = _read_single_spaced(path, RUN_COLUMNS, {"rank": "int64", "score": "float64"})
    if table is None:
        return None
    score, rank = table["score"].to_numpy(), table["rank"].to_numpy()
    if not np.isfinite(score).all() or (rank < 0).any():
        return None
    run = pd.DataFrame(
        {
            "query_id": pd.Series(table["query_id"], dtype="str"),
            "doc_id": pd.Series(table["doc_id"], dtype="str"),
            "score": score,
        }
    )
    return None if _has_duplicate_pairs(run) else run


def _read_single_spaced(path: Path, names: list[str], numeric: dict[str, str]):
    """The common case at native speed: a file whose fields are separated by single spaces, parsed by
    pyarrow into a table (the `numeric` columns typed, the others text). None for anything else (tabs,
    runs of spaces, CR, a value of the wrong type, a missing field, no pyarrow), which the careful reader
    then reads, locating any error by line."""
    try:
        import pyarrow as pa
        from pyarrow import csv as pa_csv
    except ImportError:
        return None
    data = _read_bytes(path)
    if (
        not data
        or any(bad in data for bad in (b"\x00", b"\t", b"\r", b"\x0b", b"\x0c"))
        or data[:1] == b" "
        or _irregular_spaces(data)
    ):
        return None
    types = {name: getattr(pa, numeric.get(name, "string"))() for name in names}
    try:
        table = pa_csv.read_csv(
            pa.py_buffer(data),
            read_options=pa_csv.ReadOptions(column_names=names),
            parse_options=pa_csv.ParseOptions(delimiter=" ", quote_char=False),
            convert_options=pa_csv.ConvertOptions(
                column_types=types, strings_can_be_null=False, quoted_strings_can_be_null=False
            ),
        )
    except (pa.ArrowException, ValueError):
        return None
    if not table.num_rows or any(table[name].null_count for name in numeric):
        return None
    return table


def _irregular_spaces(data: bytes, block: int = 1 << 20) -> bool:
    """Whether `data` holds two spaces in a row, or a space beside a line break (b"  ", b"\\n ", b" \\n"), found
    in numpy a block at a time: 8 ms for an 8.7 MB run where searching it for each of the three pairs took 24 ms."""
    codes = np.frombuffer(data, dtype=np.uint8)
    for start in range(0, max(len(codes) - 1, 0), block):
        part = codes[start : start + block + 1]  # one byte of overlap: a pair across two blocks
        space, gap = part == 32, (part == 32) | (part == 10)
        if np.any(gap[1:] & gap[:-1] & (space[1:] | space[:-1])):
            return True
    return False


def _has_duplicate_pairs(table: pd.DataFrame) -> bool:
    """Whether a (query_id, doc_id) pair occurs twice."""
    topic = pd.factorize(table["query_id"])[0].astype(np.int64)
    doc = pd.factorize(table["doc_id"])[0].astype(np.int64)
    return bool(pd.Series(topic * (int(doc.max()) + 1) + doc).duplicated().any())


def read_qrels(path: str | Path) -> pd.DataFrame:
    """Read TREC qrels into columns `query_id, doc_id, relevance` (int; spam −2 kept as is)."""
    fast = _read_single_spaced(Path(path), QRELS_COLUMNS, {"relevance": "int64"})
    if fast is not None:
        qrels = pd.DataFrame(
            {
                "query_id": pd.Series(fast["query_id"], dtype="str"),
                "doc_id": pd.Series(fast["doc_id"], dtype="str"),
                "relevance": fast["relevance"].to_numpy(),
            }
        )
        if not _has_duplicate_pairs(qrels):
            return qrels
    table = _read_whitespace_table(path, QRELS_COLUMNS, QRELS_FORMAT, text=("query_id", "iteration", "doc_id"))
    _require_integer(table, path, "relevance", "an integer relevance grade in column 4", signed=True)
    _reject_duplicates(table, path, ["query_id", "doc_id"], "document {doc_id} judged twice for topic {query_id}")
    return table[["query_id", "doc_id", "relevance"]].reset_index(drop=True)


def _read_whitespace_table(path: str | Path, names: list[str], expected: str, text: tuple[str, ...]) -> pd.DataFrame:
    """Read a whitespace-separated file with a 1-based `line` column.

    `text` columns are read as strings; the others are left to the C parser, which gives a
    numeric column when every value is a number (the fast path) and text otherwise, so the
    checks below find and report the first bad line.
    """
    path = Path(path)
    data = _read_bytes(path)
    _check_text(path, data, expected)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)  # a line with extra columns, not data lost
            table = pd.read_csv(
                io.BytesIO(data),
                sep=r"\s+",
                header=None,
                names=names,
                index_col=False,
                dtype={c: str for c in text},
                skip_blank_lines=False,
                keep_default_na=False,
                na_values=[""],
                encoding="utf-8",
                comment=None,
                quoting=3,
            )
    except pd.errors.EmptyDataError:
        raise InputFormatError(path, "the file is empty", expected=expected) from None
    except UnicodeDecodeError:
        raise _not_utf8(path, data) from None
    except (pd.errors.ParserError, pd.errors.ParserWarning, ValueError, OverflowError) as error:
        raise _column_count_error(path, data, len(names), expected) or InputFormatError(
            path, f"cannot parse the file ({error})", expected=expected
        ) from None
    table["line"] = table.index + 1
    if table[names[0]].isna().any():  # blank lines
        table = table[table[names].notna().any(axis=1)]
    if table.empty:
        raise InputFormatError(path, "the file has no data lines", expected=expected)
    short = table[names[-1]].isna()
    if short.any():
        row = table[short].iloc[0]
        fields = int(row[names].notna().sum())
        raise InputFormatError(
            path, f"{fields} column(s) instead of {len(names)}", line=int(row["line"]), expected=expected
        )
    return table
