"""Readers for the CSV files of a collection: per-topic score tables, per-rank gains and system lists.

Like the TREC readers (`riskreport.io.trec`, which exports these too), each checks its file as it goes and
raises `InputFormatError` naming the file, the line and what was expected."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd

from riskreport.errors import InputFormatError
from riskreport.io.file_checks import _decode, _read_bytes, _reject_duplicates, _require_integer, _require_numeric

SCORE_COLUMNS = ["system", "topic", "score", "measure", "instance"]
SCORES_FORMAT = "a CSV header system,topic,score[,measure][,instance]"
RANK_GAIN_COLUMNS = ["system", "topic", "rank", "score"]
RANK_GAINS_FORMAT = "a CSV header system,topic,rank,score"
SYSTEM_LIST_FORMAT = (
    "one system id per line, or a CSV whose header has a 'system' column (and optionally a 'pooled' column of 0/1)"
)


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


def looks_like_scores(path: Path) -> bool:
    """Whether a CSV file's header is a score table's (`SCORE_COLUMNS`, system, topic and score among them): only the
    first line is read, to suggest the file where a folder without a collection is given (its rows are checked
    when it is read)."""
    try:
        with path.open("r", encoding="utf-8", errors="replace", newline="") as handle:
            header = [c.strip() for c in next(csv.reader([handle.readline().lstrip("\ufeff")]), [])]
        _check_header(path, header)
    except (OSError, csv.Error, InputFormatError):
        return False
    return True


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
