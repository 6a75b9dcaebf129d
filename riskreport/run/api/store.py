"""An `Analysis`'s slow tables kept with the evaluations: computed once per content, read back on the next report.

A campaign's report spends most of its statistics on the bootstrap (5 intervals x 2 levels x 21 α x 109
challengers from 10,000 resamples), the paired tests, the mixed model and the diagnostics; a report of the
same scores with the same parameters gives the same tables. (The per-topic and Tukey tables are computed in
a fraction of a second and would take 50 MB a campaign: they are not stored; their CSV files are, as
written, by `render.csv_writer`.) Each is stored in the
riskreport cache (`riskreport.io.cache`, kind `tables`) under a key made of everything it depends on: the
scores themselves (the matrix's values, systems and topics), the baselines, α grid, measure and every option
the computation reads, the versions of numpy, scipy, pandas and statsmodels, and a digest of riskreport's own
source (a changed formula is a new key, never a stale table). A stored table is read back column for column
as it was computed (`frame_arrays`, `arrays_frame`: the same values, dtypes and order); a missing, damaged or
unwritable entry costs the computation again, nothing else (`io.cache`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np
import pandas as pd

KIND = "tables"
FORMAT = 2  # of a stored frame (`frame_arrays`): text as codes into its distinct values
LIBRARIES = ("numpy", "scipy", "pandas", "statsmodels")  # what the tables are computed with


def matrix_digest(matrix: pd.DataFrame) -> str:
    """SHA-256 of a score matrix (systems x topics): its values, system names and topic ids, in order."""
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(matrix.to_numpy(dtype=float)).tobytes())
    digest.update("\x1f".join(map(str, matrix.index)).encode())
    digest.update(b"\x1e")
    digest.update("\x1f".join(map(str, matrix.columns)).encode())
    return digest.hexdigest()


def frame_arrays(frame: pd.DataFrame) -> tuple[dict[str, np.ndarray], dict] | None:
    """A frame as named arrays (no Python objects: read back without pickle) and JSON metadata; None for a frame
    with a column of another kind (it is then not stored)."""
    arrays, columns = {}, []
    for i, name in enumerate(frame.columns):
        column = frame[name]
        dtype = str(column.dtype)
        if isinstance(column.dtype, np.dtype) and column.dtype.kind in "biuf":
            arrays[f"c{i}"] = column.to_numpy()
            kind = "number"
        elif pd.api.types.is_string_dtype(column.dtype) or column.dtype == object:
            codes, uniques = pd.factorize(column, use_na_sentinel=True)  # a long table repeats its names
            values = list(uniques)
            if not all(isinstance(v, str) for v in values):
                return None
            arrays[f"c{i}"] = codes.astype(np.int32)  # -1: missing
            arrays[f"u{i}"] = np.asarray(values or [""], dtype=str)[: len(values)]
            kind = "text"
        else:
            return None
        columns.append({"name": name, "dtype": dtype, "kind": kind})
    if not all(isinstance(c["name"], str) for c in columns):
        return None
    return arrays, {"format": FORMAT, "rows": len(frame), "columns": columns}


def arrays_frame(arrays: dict[str, np.ndarray], meta: dict) -> pd.DataFrame:
    """The frame `frame_arrays` stored."""
    data = {}
    for i, column in enumerate(meta["columns"]):
        values = arrays[f"c{i}"]
        if column["kind"] == "text":
            uniques = np.append(arrays[f"u{i}"].astype(object), np.nan)
            data[column["name"]] = pd.Series(uniques[values], dtype=column["dtype"])  # code -1: the NaN appended
        else:
            data[column["name"]] = pd.Series(values, dtype=column["dtype"])
    frame = pd.DataFrame(data, columns=[c["name"] for c in meta["columns"]])
    return frame if len(frame) == meta["rows"] else frame.iloc[:0]


def stored(name: str, parts: dict, compute: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """The table `name` whose value depends on `parts` (besides riskreport's code and the libraries): read from
    the cache, or `compute()`d and kept there."""
    from riskreport.io.cache import Cache, cache_key
    from riskreport.io.fingerprint import code_digest, versions

    cache = Cache(KIND)
    key = cache_key(KIND, name=name, code=code_digest(), versions=versions(*LIBRARIES), **parts)
    hit = cache.get_arrays(key)
    if hit is not None and hit[1].get("format") == FORMAT:
        frame = arrays_frame(*hit)
        if len(frame) == hit[1]["rows"]:
            return frame
    frame = compute()
    packed = frame_arrays(frame)
    if packed is not None:
        cache.put_arrays(key, *packed)
    return frame
