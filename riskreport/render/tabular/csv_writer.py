"""Tables as CSV files: `write_csv` writes what `DataFrame.to_csv(index=False, float_format=CSV_FLOAT)` writes,
byte for byte, several times faster (every table of a report goes through it)."""

from __future__ import annotations

import contextlib
import gzip
import io
from pathlib import Path

import pandas as pd

CSV_FLOAT = "%.10g"
COMPRESSED = frozenset({"topics"})  # tables that grow with the topics (× systems × α): written gzip-compressed


def table_file(name: str) -> str:
    """The file name of a report table: `<name>.csv`, or `<name>.csv.gz` for the per-topic table (60 MB as text
    for 30 systems × 6,980 topics; pandas reads either, `pd.read_csv("tables/topics.csv.gz")`)."""
    return f"{name}.csv.gz" if name in COMPRESSED else f"{name}.csv"


def write_csv(table: pd.DataFrame, path: Path) -> Path:
    """`table.to_csv(path, index=False, float_format=CSV_FLOAT)`, byte for byte, several times faster; a path
    ending in `.gz` is gzip-compressed (no time stamp or name inside: the same table, the same bytes).

    pandas formats every float in Python one call at a time; here each column's distinct values are
    formatted once (α, Δ and system names repeat across a long table) and rows are joined as text.
    Columns of other kinds than float, int, bool and text fall back to pandas. A table of `KEPT_ROWS` rows or more
    is kept in the riskreport cache as written (`io.cache`, kind `csv`, keyed by a digest of its content): the next
    report that writes the same table copies the bytes (a warm campaign's per-topic table: 572,000 rows).
    """
    path = Path(path)
    key = _written_key(table, path) if len(table) >= KEPT_ROWS else None
    kept = _kept_file(key) if key else None
    if kept is not None:  # written before, the same table: the same bytes
        path.write_bytes(kept)
        return path
    _write(table, path)
    if key:
        _keep_file(key, path)
    return path


KEPT_ROWS = 10_000  # a table this long (a campaign's per-topic, Tukey, bootstrap and verdict tables) is kept as written


LINES_AT_ONCE = 100_000  # rows joined, encoded and written (compressed) at a time


def _write(table: pd.DataFrame, path: Path) -> None:
    """The table's CSV text, `LINES_AT_ONCE` rows at a time; a `.gz` file's blocks are compressed by a thread while
    the next block is formatted (zlib releases the GIL: a campaign's per-topic table, 43 MB of text, took 0.7 s
    of compression on top of its formatting). The text is what pandas writes; the compressed bytes are the same
    for the same table, though not those of a writer that divides the text otherwise (deflate's output depends
    on how its input is divided)."""
    found = [_csv_column(table[c]) for c in table.columns] if table.shape[1] > 1 else [None]
    columns = [c for c in found if c is not None]
    if len(columns) < len(found):
        with _opened(Path(path)) as handle:
            table.to_csv(handle, index=False, float_format=CSV_FLOAT)
        return
    header = ",".join(_csv_quoted([str(c) for c in table.columns])) + "\n"
    with _binary(Path(path)) as write:
        write(header.encode("utf-8"))
        for start in range(0, len(table), LINES_AT_ONCE):
            block = zip(*(c[start : start + LINES_AT_ONCE] for c in columns))
            write(("\n".join(map(",".join, block)) + "\n").encode("utf-8"))


def _written_key(table: pd.DataFrame, path: Path) -> str | None:
    """The cache key of `table` written as `path`'s kind of file: a digest of its column names, dtypes and values
    (numbers by their bytes: -0.0 is not 0.0), or None for a column of another kind."""
    import hashlib

    import numpy as np

    from riskreport.io.cache import cache_key
    from riskreport.io.fingerprint import code_digest, versions

    digest = hashlib.sha256()
    for name in table.columns:
        column = table[name]
        digest.update(f"\x1e{name}\x1f{column.dtype}\x1f".encode())
        if isinstance(column.dtype, np.dtype) and column.dtype.kind in "biuf":
            digest.update(np.ascontiguousarray(column.to_numpy()).tobytes())
        elif pd.api.types.is_string_dtype(column.dtype):
            codes, uniques = pd.factorize(column, use_na_sentinel=True)  # missing: code -1
            texts = list(uniques)
            if not all(isinstance(v, str) for v in texts):
                return None
            digest.update(np.asarray(codes, dtype=np.int64).tobytes())  # each row's value, by its first row
            digest.update("".join(f"{len(v)}:{v}" for v in texts).encode())
        else:
            return None
    return cache_key("csv", table=digest.hexdigest(), file=path.suffix, code=code_digest(), pandas=versions("pandas"))


def _kept_file(key: str) -> bytes | None:
    from riskreport.io.cache import Cache

    hit = Cache("csv").get_arrays(key)
    return None if hit is None or "text" not in hit[0] else hit[0]["text"].tobytes()


def _keep_file(key: str, path: Path) -> None:
    import numpy as np

    from riskreport.io.cache import Cache

    Cache("csv").put_arrays(key, {"text": np.frombuffer(path.read_bytes(), dtype=np.uint8)}, {"file": path.name})


@contextlib.contextmanager
def _binary(path: Path):
    """A function that writes bytes to `path`, gzip-compressed as `_opened` does when it ends in `.gz`, there by a
    thread, block after block in order; every block is written when the context ends."""
    if path.suffix != ".gz":
        with open(path, "wb") as handle:
            yield handle.write
        return
    from concurrent.futures import ThreadPoolExecutor

    with (
        open(path, "wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=1) as binary,
        ThreadPoolExecutor(1, thread_name_prefix="riskreport-gzip") as compressing,
    ):
        pending = []
        try:
            yield lambda data: pending.append(compressing.submit(binary.write, data))
        finally:
            for future in pending:
                future.result()  # in order; the first error raised


@contextlib.contextmanager
def _opened(path: Path):
    """A text file to write, gzip-compressed when `path` ends in `.gz` (no name or time stamp in the header)."""
    if path.suffix != ".gz":
        with open(path, "w", encoding="utf-8", newline="") as handle:
            yield handle
        return
    with (
        open(path, "wb") as raw,
        gzip.GzipFile(
            filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=1
        ) as binary,  # 9: 12x the CPU, 10 % smaller
        io.TextIOWrapper(binary, encoding="utf-8", newline="") as text,
    ):
        yield text


def _csv_column(column: pd.Series) -> list[str] | None:
    """The CSV text of each value of a column (as pandas writes it), or None for a kind pandas must write."""
    import numpy as np

    kind = column.dtype.kind
    if kind not in "fiubO" and not pd.api.types.is_string_dtype(column.dtype):
        return None
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    values = list(uniques)
    if kind == "f":
        text = [CSV_FLOAT % v for v in values]
    elif kind in "iub":
        text = [str(v) for v in values]
    elif all(isinstance(v, str) for v in values):
        text = _csv_quoted(values)
    else:  # text mixed with numbers or other objects
        return None
    return np.asarray(text + [""], dtype=object)[codes].tolist()  # code −1 (missing): empty


def _csv_quoted(values: list[str]) -> list[str]:
    """Quote as the csv module's QUOTE_MINIMAL does (pandas' default): fields holding , " \r or \n."""
    return ['"' + v.replace('"', '""') + '"' if any(ch in v for ch in ',"\r\n') else v for v in values]
