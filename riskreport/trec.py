"""Readers for the files of a collection: TREC qrels, TREC runs, per-topic score tables.

Each reader returns a tidy DataFrame and checks the file as it goes: a malformed file
raises `InputFormatError` naming the file, the line and what was expected, never a
traceback from deep inside pandas. Compressed files (`.gz`, `.bz2`) are read transparently.
"""
from __future__ import annotations

import bz2
import gzip
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import InputFormatError

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
    table = _read_whitespace_table(path, RUN_COLUMNS, RUN_FORMAT, text=("query_id", "q0", "doc_id", "tag"))
    _require_numeric(table, path, "score", "a number in column 5 (score)")
    _require_integer(table, path, "rank", "a non-negative integer in column 4 (rank)")
    _reject_duplicates(table, path, ["query_id", "doc_id"], "document {doc_id} ranked twice for topic {query_id}")
    return table[["query_id", "doc_id", "score"]].reset_index(drop=True)


def read_qrels(path: str | Path) -> pd.DataFrame:
    """Read TREC qrels into columns `query_id, doc_id, relevance` (int; spam −2 kept as is)."""
    table = _read_whitespace_table(path, QRELS_COLUMNS, QRELS_FORMAT, text=("query_id", "iteration", "doc_id"))
    _require_integer(table, path, "relevance", "an integer relevance grade in column 4", signed=True)
    _reject_duplicates(table, path, ["query_id", "doc_id"], "document {doc_id} judged twice for topic {query_id}")
    return table[["query_id", "doc_id", "relevance"]].reset_index(drop=True)


def read_scores(path: str | Path) -> pd.DataFrame:
    """Read a per-topic score table (CSV with header `system,topic,score[,measure][,instance]`).

    Returns columns `system, topic, score, measure, instance`; `measure` and `instance`
    are empty strings where the file has no such column.
    """
    path = Path(path)
    _sniff(path)
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, skip_blank_lines=True,
                            encoding="utf-8")
    except pd.errors.EmptyDataError:
        raise InputFormatError(path, "the file is empty", expected="a CSV header system,topic,score") from None
    except (pd.errors.ParserError, UnicodeDecodeError, EOFError, OSError) as error:
        raise _parser_failure(path, error, "CSV with columns system,topic,score[,measure][,instance]") from None
    table.columns = [str(c).strip() for c in table.columns]
    missing = [c for c in ("system", "topic", "score") if c not in table.columns]
    if missing:
        raise InputFormatError(path, f"missing column(s) {', '.join(missing)}; found {', '.join(table.columns)}",
                               line=1, expected="a header with system,topic,score[,measure][,instance]")
    table["line"] = table.index + 2
    for column in ("system", "topic", "measure", "instance"):
        table[column] = table[column].str.strip() if column in table.columns else ""
    for column in ("system", "topic"):
        empty = table[column] == ""
        if empty.any():
            raise InputFormatError(path, f"empty {column}", line=int(table.loc[empty, "line"].iloc[0]))
    _require_numeric(table, path, "score", "a number in column 'score'")
    _reject_duplicates(table, path, ["system", "instance", "measure", "topic"],
                       "system {system} has two scores for topic {topic}")
    return table[["system", "topic", "score", "measure", "instance"]].reset_index(drop=True)


def _read_whitespace_table(path: str | Path, names: list[str], expected: str, text: tuple[str, ...]) -> pd.DataFrame:
    """Read a whitespace-separated file with a 1-based `line` column.

    `text` columns are read as strings; the others are left to the C parser, which gives a
    numeric column when every value is a number (the fast path) and text otherwise, so the
    checks below find and report the first bad line.
    """
    path = Path(path)
    _sniff(path)
    try:
        table = pd.read_csv(path, sep=r"\s+", header=None, names=names, dtype={c: str for c in text},
                            skip_blank_lines=False, keep_default_na=False, na_values=[""],
                            encoding="utf-8", comment=None, quoting=3)
    except pd.errors.EmptyDataError:
        raise InputFormatError(path, "the file is empty", expected=expected) from None
    except (pd.errors.ParserError, UnicodeDecodeError, EOFError, OSError, ValueError) as error:
        raise _parser_failure(path, error, expected) from None
    table["line"] = table.index + 1
    if table[names[0]].isna().any():                          # blank lines
        table = table[table[names].notna().any(axis=1)]
    if table.empty:
        raise InputFormatError(path, "the file has no data lines", expected=expected)
    short = table[names[-1]].isna()
    if short.any():
        row = table[short].iloc[0]
        fields = int(row[names].notna().sum())
        raise InputFormatError(path, f"{fields} column(s) instead of {len(names)}", line=int(row["line"]),
                               expected=expected)
    return table


def _sniff(path: Path) -> None:
    """Fail early, with a clear message, on missing, binary or corrupt compressed files."""
    if not path.is_file():
        raise InputFormatError(path, "no such file")
    try:
        with _open_binary(path) as handle:
            head = handle.read(8192)
    except (EOFError, OSError) as error:
        raise InputFormatError(path, f"cannot read the file ({error}); is it truncated or corrupt?") from None
    if b"\x00" in head:
        raise InputFormatError(path, "binary content (NUL bytes)", expected="a text file")


def _open_binary(path: Path):
    name = path.name.lower()
    if name.endswith(".gz"):
        return gzip.open(path, "rb")
    if name.endswith(".bz2"):
        return bz2.open(path, "rb")
    return open(path, "rb")


def _parser_failure(path: Path, error: Exception, expected: str) -> InputFormatError:
    if isinstance(error, UnicodeDecodeError):
        return InputFormatError(path, "not UTF-8 text", line=_first_undecodable_line(path), expected="UTF-8 text")
    if isinstance(error, (EOFError, OSError)):
        return InputFormatError(path, f"cannot read the file ({error}); is it truncated or corrupt?")
    match = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(error))
    if match:
        return InputFormatError(path, f"{match.group(3)} columns instead of {match.group(1)}",
                                line=int(match.group(2)), expected=expected)
    return InputFormatError(path, f"cannot parse the file ({error})", expected=expected)


def _first_undecodable_line(path: Path) -> int | None:
    with _open_binary(path) as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return number
    return None


def _require_numeric(table: pd.DataFrame, path, column: str, expected: str) -> None:
    values = table[column]
    if not pd.api.types.is_float_dtype(values) and not pd.api.types.is_integer_dtype(values):
        values = pd.to_numeric(values.astype(str), errors="coerce")
    bad = ~np.isfinite(values.to_numpy(dtype=float))
    if bad.any():
        row = table[bad].iloc[0]
        raise InputFormatError(path, f"{row[column]!r} is not a finite number", line=int(row["line"]),
                               expected=expected)
    table[column] = values.astype(float)


def _require_integer(table: pd.DataFrame, path, column: str, expected: str, signed: bool = False) -> None:
    values = table[column]
    if pd.api.types.is_integer_dtype(values):
        bad = values < 0 if not signed else pd.Series(False, index=values.index)
    else:
        pattern = r"-?\d+" if signed else r"\d+"
        bad = ~values.astype(str).str.fullmatch(pattern)
    if bad.any():
        row = table[bad].iloc[0]
        raise InputFormatError(path, f"{row[column]!r} is not {'an integer' if signed else 'a non-negative integer'}",
                               line=int(row["line"]), expected=expected)
    table[column] = table[column].astype(int)


def _reject_duplicates(table: pd.DataFrame, path, key: list[str], what: str) -> None:
    duplicated = table.duplicated(key, keep=False)
    if duplicated.any():
        first = table[duplicated].iloc[0]
        same = table[duplicated & (table[key] == first[key]).all(axis=1)]
        lines = same["line"].tolist()[:2]
        raise InputFormatError(path, what.format(**first[key].to_dict()) + f" (lines {lines[0]} and {lines[1]})",
                               line=lines[1], expected="each pair once")
