"""Checks shared by the input adapters: column aliases, numbers, unique keys, system names, duck-typed ranx."""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from riskreport.errors import InputFormatError, ParameterError

ALIASES = {
    "query_id": ("query_id", "qid", "q_id", "topic"),
    "doc_id": ("doc_id", "docno", "docid"),
    "relevance": ("relevance", "label", "rel", "score"),
}

SYSTEM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


def _is_ranx(obj, kind: str) -> bool:
    """A ranx Run or Qrels, by its class name and `to_dict` (ranx is not a dependency)."""
    return type(obj).__name__ == kind and callable(getattr(obj, "to_dict", None))


def _mapping(values, what: str) -> Mapping:
    if not isinstance(values, Mapping):
        raise ParameterError(
            f"{what}: expected a nested mapping {{qid: {{key: value}}}}, found {type(values).__name__} inside."
        )
    return values


def _renamed(frame: pd.DataFrame, wanted: tuple[str, ...], what: str, expected: str) -> pd.DataFrame:
    """The `wanted` columns of `frame` under their riskreport names, found under any of their aliases."""
    out: dict[str, str] = {}
    for name in wanted:
        column = next((c for c in ALIASES[name] if c in frame.columns and c not in out.values()), None)
        if column is None:
            raise InputFormatError(what, f"no {name} column among {list(frame.columns)[:8]}", expected=expected)
        out[name] = column
    table = pd.DataFrame({name: frame[column].to_numpy() for name, column in out.items()})
    for name in ("query_id", "doc_id"):
        if name in table:
            if table[name].isna().any():
                raise InputFormatError(what, f"an empty {out[name]}", expected=expected)
            table[name] = table[name].astype(str)
            if table[name].str.contains(r"\s", regex=True).any():
                raise InputFormatError(what, f"a {out[name]} holds white space", expected="ids without spaces")
    return table


def _numbers(column: pd.Series, what: str, name: str, expected: str) -> pd.Series:
    values = pd.to_numeric(column, errors="coerce").astype(float)
    bad = ~np.isfinite(values.to_numpy())
    if bad.any():
        raise InputFormatError(what, f"{name} {column[bad].iloc[0]!r} is not a finite number", expected=expected)
    return values


def _unique(table: pd.DataFrame, key: list[str], what: str, problem: str) -> None:
    twice = table.duplicated(key)
    if twice.any():
        raise InputFormatError(what, problem.format(**table[twice].iloc[0].to_dict()))


def _system(name: str) -> str:
    if not SYSTEM_NAME.fullmatch(name):
        raise ParameterError(f"system name {name!r}: expected letters, digits, '.', '_', '+' or '-' (it names a file).")
    return name
