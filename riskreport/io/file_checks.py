"""What the file readers share: a file's bytes read once (decompressed), and the checks that name what is wrong
with them by line: NUL bytes, invalid UTF-8, wrong column counts, non-numeric or non-integer values, duplicates."""

from __future__ import annotations

import bz2
import gzip
import re
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from riskreport.errors import InputFormatError

LINE_BREAK = re.compile(rb"\r\n|\n|\r")  # what pandas' C parser ends a line on
FIELD_GAP = re.compile(rb"[ \t]+")
MAX_DIGITS = 18  # integers that fit int64


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
