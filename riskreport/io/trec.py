"""Readers for the files of a collection: TREC qrels, TREC runs, per-topic score tables.

Each reader returns a tidy DataFrame and checks the file as it goes: a malformed file
raises `InputFormatError` naming the file, the line and what was expected, never a
traceback from deep inside pandas. Compressed files (`.gz`, `.bz2`) are read transparently.
A file is read into memory once, so that NUL bytes, invalid UTF-8 and wrong column counts
are located by line wherever they are.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import re
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from riskreport.errors import InputFormatError

RUN_COLUMNS = ["query_id", "q0", "doc_id", "rank", "score", "tag"]
QRELS_COLUMNS = ["query_id", "iteration", "doc_id", "relevance"]
SCORE_COLUMNS = ["system", "topic", "score", "measure", "instance"]
RUN_FORMAT = "6 whitespace-separated columns: topic Q0 docno rank score tag"
QRELS_FORMAT = "4 whitespace-separated columns: topic iteration docno relevance"
SCORES_FORMAT = "a CSV header system,topic,score[,measure][,instance]"
RANK_GAIN_COLUMNS = ["system", "topic", "rank", "score"]
RANK_GAINS_FORMAT = "a CSV header system,topic,rank,score"
SYSTEM_LIST_FORMAT = (
    "one system id per line, or a CSV whose header has a 'system' column (and optionally a 'pooled' column of 0/1)"
)
LINE_BREAK = re.compile(rb"\r\n|\n|\r")  # what pandas' C parser ends a line on
FIELD_GAP = re.compile(rb"[ \t]+")
MAX_DIGITS = 18  # integers that fit int64


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
        or b"\x00" in data
        or any(bad in data for bad in (b"\t", b"  ", b"\r", b"\n ", b" \n", b"\x0b", b"\x0c"))
        or data[:1] == b" "
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


def read_scores(path: str | Path) -> pd.DataFrame:
    """Read a per-topic score table (CSV with header `system,topic,score[,measure][,instance]`).

    Returns columns `system, topic, score, measure, instance`; `measure` and `instance`
    are empty strings where the file has no such column. Scores must be finite and ≥ 0
    (every ir_measures measure is): a negative score is most likely a difference from a
    baseline, which riskreport computes itself.
    """
    path = Path(path)
    table = _read_csv_table(path, SCORES_FORMAT, _check_header)
    for column in ("system", "topic", "measure", "instance"):
        table[column] = table[column].str.strip() if column in table.columns else ""
    for column in ("system", "topic"):
        empty = table[column] == ""
        if empty.any():
            raise InputFormatError(path, f"empty {column}", line=int(table.loc[empty, "line"].iloc[0]))
    table["score"] = table["score"].str.strip()
    _require_numeric(table, path, "score", "a finite number ≥ 0 in column 'score'")
    negative = table["score"] < 0
    if negative.any():
        row = table[negative].iloc[0]
        raise InputFormatError(
            path,
            f"score {row['score']:g} is negative",
            line=int(row["line"]),
            expected="a score ≥ 0, as every ir_measures measure is; give each system's own "
            "score, not its difference from the baseline",
        )
    _reject_duplicates(
        table, path, ["system", "instance", "measure", "topic"], "system {system} has two scores for topic {topic}"
    )
    return table[SCORE_COLUMNS].reset_index(drop=True)


def read_system_list(path: str | Path) -> list[str]:
    """Read a list of systems (a model's pool, a report's challengers) from a file.

    Either one system id per line (blank lines and `#` comments ignored), or a CSV whose header
    names a `system` column; with a `pooled` column (0 or 1, like TREC-COVID's `round1_pooled.csv`)
    only the rows marked 1 are listed. Other columns are ignored; a system listed twice counts once.
    """
    path = Path(path)
    text = _decode(path, _read_bytes(path), SYSTEM_LIST_FORMAT).lstrip("\ufeff")
    lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), start=1)]
    lines = [(number, line) for number, line in lines if line and not line.startswith("#")]
    if not lines:
        raise InputFormatError(path, "the file lists no system", expected=SYSTEM_LIST_FORMAT)
    header = [field.strip() for field in lines[0][1].split(",")]
    if "system" not in header:
        for number, line in lines:
            if "," in line:
                raise InputFormatError(
                    path,
                    f"{line!r} has a comma but the first line is not a CSV header naming a 'system' column",
                    line=number,
                    expected=SYSTEM_LIST_FORMAT,
                )
        return list(dict.fromkeys(line for _, line in lines))
    systems = []
    for number, line in lines[1:]:
        fields = [field.strip() for field in line.split(",")]
        if len(fields) != len(header):
            raise InputFormatError(
                path,
                f"{len(fields)} field(s) instead of {len(header)}",
                line=number,
                expected=f"one value per column of the header {','.join(header)}",
            )
        row = dict(zip(header, fields))
        if not row["system"]:
            raise InputFormatError(path, "empty system", line=number, expected="a system id in column 'system'")
        if "pooled" in row and row["pooled"] not in ("0", "1"):
            raise InputFormatError(
                path,
                f"pooled is {row['pooled']!r}",
                line=number,
                expected="0 or 1 in column 'pooled' (1: the system is in the pool)",
            )
        if row.get("pooled", "1") == "1":
            systems.append(row["system"])
    if not systems:
        why = "no row has pooled = 1" if "pooled" in header else "the file has a header but no data rows"
        raise InputFormatError(path, why, expected="at least one system")
    return list(dict.fromkeys(systems))


def read_rank_gains(path: str | Path) -> pd.DataFrame:
    """Read per-rank gains (the data of BHM-ZOiB-Rank): a CSV with header `system,topic,rank,score`.

    `rank` is a whole number ≥ 1 and `score` (the gain at that rank, e.g. RBP's (1 − p)·p^(k−1)·rel)
    a number in [0, 1); a (system, topic, rank) given twice is an error naming both lines.
    """
    path = Path(path)

    def check(path, header):
        missing = [c for c in RANK_GAIN_COLUMNS if c not in header]
        if missing:
            raise InputFormatError(
                path,
                f"missing column(s) {', '.join(missing)}; found {', '.join(map(repr, header))}",
                line=1,
                expected=RANK_GAINS_FORMAT,
            )

    table = _read_csv_table(path, RANK_GAINS_FORMAT, check)
    for column in ("system", "topic"):
        table[column] = table[column].str.strip()
    _require_integer(table, path, "rank", "a whole number ≥ 1 in column 'rank'")
    if (table["rank"] < 1).any():
        raise InputFormatError(
            path,
            "rank 0",
            line=int(table.loc[table["rank"] < 1, "line"].iloc[0]),
            expected="a whole number ≥ 1 in column 'rank'",
        )
    _require_numeric(table, path, "score", "a gain in [0, 1) in column 'score'")
    outside = (table["score"] < 0) | (table["score"] >= 1)
    if outside.any():
        row = table[outside].iloc[0]
        raise InputFormatError(
            path,
            f"gain {row['score']:g} is outside [0, 1)",
            line=int(row["line"]),
            expected="a per-rank gain in [0, 1) in column 'score'",
        )
    _reject_duplicates(
        table, path, ["system", "topic", "rank"], "system {system} has two gains at rank {rank} of topic {topic}"
    )
    return table[RANK_GAIN_COLUMNS].reset_index(drop=True)


def _read_csv_table(path: Path, expected: str, check_header) -> pd.DataFrame:
    """The rows of a CSV file with a header, as text, with their line numbers (column `line`); blank lines skipped."""
    text = _decode(path, _read_bytes(path), expected)
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    try:
        header = [c.strip() for c in next(reader, [])]
        if not any(header):
            raise InputFormatError(path, "the file is empty", expected=expected)
        check_header(path, header)
        rows, lines = [], []
        for row in reader:
            if not any(field.strip() for field in row):
                continue  # blank line
            if len(row) != len(header):
                raise InputFormatError(
                    path,
                    f"{len(row)} field(s) instead of {len(header)}",
                    line=reader.line_num,
                    expected=f"one value per column of the header {','.join(header)}",
                )
            rows.append(row)
            lines.append(reader.line_num)
    except csv.Error as error:
        raise InputFormatError(
            path, f"cannot parse the CSV ({error})", line=reader.line_num, expected=expected
        ) from None
    if not rows:
        raise InputFormatError(path, "the file has a header but no data rows", expected="one row per system and topic")
    table = pd.DataFrame(rows, columns=header)
    table["line"] = lines
    return table


def _check_header(path: Path, header: list[str]) -> None:
    duplicated = sorted({c for c in header if header.count(c) > 1})
    if duplicated:
        raise InputFormatError(
            path,
            f"column(s) {', '.join(map(repr, duplicated))} appear twice in the header",
            line=1,
            expected=SCORES_FORMAT,
        )
    missing = [c for c in ("system", "topic", "score") if c not in header]
    if missing:
        raise InputFormatError(
            path,
            f"missing column(s) {', '.join(missing)}; found {', '.join(map(repr, header))}",
            line=1,
            expected=SCORES_FORMAT + ", comma-separated",
        )
    unknown = [c for c in header if c not in SCORE_COLUMNS]
    if unknown:
        raise InputFormatError(
            path,
            f"unknown column(s) {', '.join(map(repr, unknown))}",
            line=1,
            expected=f"columns among {', '.join(SCORE_COLUMNS)}",
        )


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


def _read_bytes(path: Path) -> bytes:
    """The (decompressed) content of a file, or a clear error for a missing, truncated or corrupt one."""
    if not path.is_file():
        raise InputFormatError(path, "no such file")
    try:
        with _open_binary(path) as handle:
            return handle.read()
    except (EOFError, OSError, zlib.error, ValueError) as error:
        raise InputFormatError(path, f"cannot read the file ({error}); is it truncated or corrupt?") from None


def _open_binary(path: Path):
    name = path.name.lower()
    if name.endswith(".gz"):
        return gzip.open(path, "rb")
    if name.endswith(".bz2"):
        return bz2.open(path, "rb")
    return open(path, "rb")


def _check_text(path: Path, data: bytes, expected: str) -> None:
    """Binary content (a NUL byte anywhere) is an error naming its line."""
    if not data:
        raise InputFormatError(path, "the file is empty", expected=expected)
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InputFormatError(path, "binary content (NUL bytes)", line=_line_of(data, nul), expected="a text file")


def _decode(path: Path, data: bytes, expected: str) -> str:
    _check_text(path, data, expected)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _not_utf8(path, data) from None


def _not_utf8(path: Path, data: bytes) -> InputFormatError:
    try:
        data.decode("utf-8")
        line = None
    except UnicodeDecodeError as error:
        line = _line_of(data, error.start)
    return InputFormatError(path, "not UTF-8 text", line=line, expected="UTF-8 text")


def _line_of(data: bytes, offset: int) -> int:
    return len(LINE_BREAK.findall(data, 0, offset)) + 1


def _column_count_error(path: Path, data: bytes, columns: int, expected: str) -> InputFormatError | None:
    """The first line whose number of fields is not `columns` (blank lines aside), if any."""
    for number, line in enumerate(LINE_BREAK.split(data), start=1):
        fields = [f for f in FIELD_GAP.split(line) if f]
        if fields and len(fields) != columns:
            found = f"{len(fields)} columns" if len(fields) > columns else f"{len(fields)} column(s)"
            return InputFormatError(path, f"{found} instead of {columns}", line=number, expected=expected)
    return None


def _shown(value) -> str:
    return repr(str(value))


def _require_numeric(table: pd.DataFrame, path, column: str, expected: str) -> None:
    values = table[column]
    if not pd.api.types.is_float_dtype(values) and not pd.api.types.is_integer_dtype(values):
        values = pd.to_numeric(values.astype(str), errors="coerce")
    bad = ~np.isfinite(values.to_numpy(dtype=float))
    if bad.any():
        row = table[bad].iloc[0]
        raise InputFormatError(
            path, f"{_shown(row[column])} is not a finite number", line=int(row["line"]), expected=expected
        )
    table[column] = values.astype(float)


def _require_integer(table: pd.DataFrame, path, column: str, expected: str, signed: bool = False) -> None:
    values = table[column]
    if pd.api.types.is_signed_integer_dtype(values):
        bad = values < 0 if not signed else pd.Series(False, index=values.index)
    elif pd.api.types.is_float_dtype(values):  # the C parser read every value as a number: whole ones pass
        number = values.to_numpy()
        with np.errstate(invalid="ignore"):
            bad = ~(np.isfinite(number) & (number == np.round(number)) & (np.abs(number) < 2.0**62))
        if not signed:
            bad |= number < 0
    else:  # text or uint64: check the digits
        values = values.astype(str)
        bad = ~values.str.fullmatch((r"[+-]?" if signed else r"\+?") + rf"\d{{1,{MAX_DIGITS}}}")
    if bad.any():
        row = table[bad].iloc[0]
        raise InputFormatError(
            path,
            f"{_shown(row[column])} is not {'an integer' if signed else 'a non-negative integer'}",
            line=int(row["line"]),
            expected=expected,
        )
    table[column] = values.astype(np.int64)


def _reject_duplicates(table: pd.DataFrame, path, key: list[str], what: str) -> None:
    duplicated = table.duplicated(key, keep=False)
    if duplicated.any():
        first = table[duplicated].iloc[0]
        same = table[duplicated & (table[key] == first[key]).all(axis=1)]
        lines = same["line"].tolist()[:2]
        raise InputFormatError(
            path,
            what.format(**first[key].to_dict()) + f" (lines {lines[0]} and {lines[1]})",
            line=lines[1],
            expected="each pair once",
        )
