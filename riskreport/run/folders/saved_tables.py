"""The tables of a previous report, read for a comparison (`changes.saved_side`) and checked as a whole first:
each file complete (a CSV ends with a line break: a truncated copy does not), its columns, every row's cells (text
where text is expected, numbers where numbers are, a verdict one of the four), and the tables against each other
and against params.json (every (challenger, baseline) at every α of the report's grid, in the verdicts and the risk
table alike; the same systems in the verdicts and the effectiveness table). Whatever is wrong is an
`InputFormatError` naming the file (and the line) and what was expected, raised before anything runs."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from riskreport.errors import InputFormatError
from riskreport.stats.significance import KEY, RULE

TEXT_COLUMNS = {
    "system",
    "baseline",
    "measure",
    "topic",
    "method",
    "kind",
    "verdict",
    "test",
    "correction",
    "reference",
    "system_a",
    "system_b",
}
VERDICTS = ("risk", "reward", "inconclusive", "undefined")


@dataclass(frozen=True)
class TableSpec:
    """What a table must hold: text columns never empty, numbers (`required` ones never empty)."""

    text: tuple[str, ...]
    required: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        return self.text + self.required + self.numbers


SPECS = {
    "verdicts.csv": TableSpec(("system", "baseline", "method", "verdict"), ("alpha",), ("statistic",)),
    "risk.csv": TableSpec(("system", "baseline"), ("alpha",), ("urisk",)),
    "effectiveness.csv": TableSpec(("system",), ("mean", "n_topics"), ("sd",)),
}


def read_checked(path: Path, what: str) -> pd.DataFrame:
    """`path` (one of `SPECS`) read as `read_table` reads it, once checked; `what` is the
    expectation the error names ("the tables/verdicts.csv of a risk_report report")."""
    spec = SPECS[path.name]
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputFormatError(path, f"cannot be read ({error.strerror or error})", expected=what) from None
    if not data.strip():
        raise InputFormatError(path, "is empty", expected=what)
    if not data.endswith(b"\n"):
        raise InputFormatError(
            path, "is truncated: its last line is incomplete (the file does not end with a line break)", expected=what
        )
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (ValueError, UnicodeDecodeError) as error:  # pandas' ParserError and EmptyDataError are ValueErrors
        raise InputFormatError(path, f"is not a readable CSV table ({error})", expected=what) from None
    missing = [c for c in spec.columns if c not in raw.columns]
    if missing:
        raise InputFormatError(
            path,
            f"has no column {', '.join(repr(c) for c in missing)} (its columns: {', '.join(map(str, raw.columns))})",
            expected=f"{what}, with columns {', '.join(spec.columns)}",
        )
    if not len(raw):
        raise InputFormatError(path, "has a header but no rows", expected=what)
    _check_cells(path, raw, spec, what)
    return read_table(path)


def _check_cells(path: Path, raw: pd.DataFrame, spec: TableSpec, what: str) -> None:
    for n, row in enumerate(raw.itertuples(index=False), start=2):  # line 1 is the header
        cells = row._asdict() if hasattr(row, "_asdict") else dict(zip(raw.columns, row))
        for column in spec.text + spec.required:
            if not str(cells[column]).strip():
                raise InputFormatError(path, f"no value in column {column!r}", line=n, expected=what)
        for column in spec.required + spec.numbers:
            value = str(cells[column]).strip()
            if value and not _number(value):
                raise InputFormatError(path, f"{column} {value!r} is not a number", line=n, expected=what)
        if "verdict" in spec.text and cells["verdict"] not in VERDICTS:
            raise InputFormatError(
                path, f"verdict {cells['verdict']!r} is none of {', '.join(VERDICTS)}", line=n, expected=what
            )


def _number(text: str) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return not math.isnan(value) or text.lower() == "nan"


def check_consistent(
    folder: Path, verdicts: pd.DataFrame, risk: pd.DataFrame | None, effectiveness: pd.DataFrame | None, record: dict
) -> None:
    """The tables of one report agree with each other and with its params.json (see the module)."""
    tables = folder / "tables"
    rule = verdicts[verdicts["method"] == RULE]
    if not len(rule):
        raise InputFormatError(
            tables / "verdicts.csv",
            f"has no row of the report's rule (method {RULE!r})",
            expected="the verdicts of a risk_report report",
        )
    keys = _keys(rule)
    for method, rows in verdicts.groupby("method", sort=False):  # each test judges every key the rule judges
        _same(tables / "verdicts.csv", _keys(rows), keys, f"a row of method {method!r} per key of the rule {RULE!r}")
    grid = (record.get("parameters") or {}).get("alphas")
    if isinstance(grid, list) and grid:
        alphas = {round(float(a), 9) for a in grid}
        pairs = {(s, b) for s, b, _ in keys}
        expected = {(s, b, a) for s, b in pairs for a in alphas}
        _same(tables / "verdicts.csv", keys, expected, f"every α of the report's grid ({_alphas(alphas)})")
    if risk is not None:
        _same(tables / "risk.csv", _keys(risk), keys, "a row per (challenger, baseline, α) of tables/verdicts.csv")
    if effectiveness is not None:
        systems = set(rule["system"].astype(str)) | set(rule["baseline"].astype(str))
        listed = set(effectiveness["system"].astype(str))
        if systems - listed:
            raise InputFormatError(
                tables / "effectiveness.csv",
                f"lacks system(s) {_names(systems - listed)} of tables/verdicts.csv",
                expected="a row per system of the report",
            )
        if listed - systems:
            raise InputFormatError(
                tables / "verdicts.csv",
                f"lacks the verdicts of system(s) {_names(listed - systems)} of tables/effectiveness.csv",
                expected="the verdicts of every challenger of the report",
            )


def _keys(table: pd.DataFrame) -> set[tuple[str, str, float]]:
    return {
        (str(s), str(b), round(float(a), 9))
        for s, b, a in table[KEY].itertuples(index=False, name=None)  # noqa: B905 - three columns
    }


def _same(path: Path, found: set, expected: set, what: str) -> None:
    lacking, extra = sorted(expected - found), sorted(found - expected)
    if lacking:
        raise InputFormatError(
            path, f"lacks {len(lacking)} row(s), e.g. {_key(lacking[0])}", expected=f"{what}: incomplete or truncated"
        )
    if extra:
        raise InputFormatError(
            path, f"has {len(extra)} row(s) no other table has, e.g. {_key(extra[0])}", expected=what
        )


def _key(key: tuple) -> str:
    return f"{key[0]} vs {key[1]} at α = {key[2]:g}"


def _alphas(alphas) -> str:
    return ", ".join(f"{a:g}" for a in sorted(alphas))


def _names(names: set[str]) -> str:
    shown = sorted(names)
    return ", ".join(repr(n) for n in shown[:5]) + (f" and {len(shown) - 5} more" if len(shown) > 5 else "")


def read_table(path: Path) -> pd.DataFrame:
    """A table as `write_csv` wrote it: text columns as text (a system named `NA` stays `NA`), numbers as numbers."""
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    for column in table.columns:
        if column in TEXT_COLUMNS:
            continue
        values = table[column]
        if set(values) <= {"True", "False"} and len(values):
            table[column] = values == "True"
        else:
            table[column] = pd.to_numeric(values.replace("", np.nan))
    return table
