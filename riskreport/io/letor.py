"""Learning-to-rank data in the LETOR / SVMlight format, and folders of folds in the MSLR layout.

One document per line, `label qid:Q f:v f:v … [# comment]` (MSLR-WEB10K/30K, LETOR 3.0/4.0, Yahoo!
LTR, Istella): `label` a non-negative whole relevance grade, `Q` a whole-number query id, `f` a
feature id ≥ 1 and `v` its value; features a line omits are 0. Every document of a query must be
on consecutive lines (learning-to-rank libraries read a query as one block).

`read_letor` parses a file with a compiled two-pass scanner (numba): the first pass checks every
line and sizes the arrays, the second fills them, so a malformed line is reported (file, line,
column, what was expected) before anything is allocated. `read_folds` reads the MSLR layout
(`Fold1/train.txt`, `vali.txt`, `test.txt`, …), or a folder that holds `train.txt`/`test.txt`
itself (one fold).
"""

from __future__ import annotations

import gzip
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputFormatError, RiskReportError
from .data_folders import make_demo, read_settings, resolve_data_folder

SPLITS = ("train", "vali", "test")
SUFFIXES = (".txt", ".txt.gz", ".svmlight", ".svm")
MAX_FEATURE = 1_000_000  # a larger id is a typo (a dense matrix of that width would not fit)
DEMO = "demo-letor"  # the synthetic demo's name (io.letor_demo)
CONFIG = "letor.toml"  # title, description and report defaults of a data folder (optional)
CONFIG_KEYS = {"title", "description", "baseline", "alphas", "trees", "leaves", "learning_rate", "min_data_in_leaf"}
PROBLEMS = {  # scanner status -> (problem, what was expected)
    1: (
        "the relevance label is not a number",
        "a non-negative whole number such as 0, 1 or 4 at the start of the line",
    ),
    2: ("the relevance label is not a non-negative whole number", "a grade such as 0, 1 or 4"),
    3: ("no query id after the label", "'qid:<whole number>' as the second field"),
    4: ("a feature field is not '<id>:<value>'", "fields such as 7:0.25 after the query id"),
    5: ("a feature id is not a whole number ≥ 1", f"an id between 1 and {MAX_FEATURE:,} before ':'"),
    6: ("a feature value is not a number", "a number after ':' such as 0.25, -3 or 1e-4"),
    7: ("feature ids do not increase along the line", "ids in increasing order, each at most once (as SVMlight)"),
    8: (
        "a feature value is too large for a 32-bit float (it would be read as infinity)",
        "a finite number of magnitude at most 3.4e38 (features are stored as 32-bit floats)",
    ),
}


@dataclass(frozen=True)
class LetorData:
    """One LETOR file: a dense feature matrix and the query blocks.

    `features[:, f - 1]` holds feature `f` of the file; `bounds[q]:bounds[q + 1]` are the rows of
    the q-th query, whose id is `query_ids[q]`; `lines` the line number of each row (for messages).
    """

    path: Path
    labels: np.ndarray  # (n,) int32
    features: np.ndarray  # (n, F) float32
    query_ids: np.ndarray  # (Q,) int64, in file order
    bounds: np.ndarray  # (Q + 1,) int64
    lines: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, np.int64))

    @property
    def n_documents(self) -> int:
        return int(self.labels.shape[0])

    @property
    def n_queries(self) -> int:
        return int(self.query_ids.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.features.shape[1])

    @property
    def group_sizes(self) -> np.ndarray:
        """Documents per query, in order (LightGBM's `group`)."""
        return np.diff(self.bounds)

    @property
    def qid_per_document(self) -> np.ndarray:
        return np.repeat(self.query_ids, self.group_sizes)

    def feature(self, number: int) -> np.ndarray:
        """Column of feature `number` (numbered as in the file, from 1); zeros beyond the widest line."""
        if not 1 <= number:
            raise RiskReportError(f"Feature ids start at 1 (as in LETOR files), got {number}.")
        if number > self.n_features:
            return np.zeros(self.n_documents, np.float32)
        return self.features[:, number - 1]

    def with_width(self, width: int) -> LetorData:
        """The same data with `width` feature columns (zero-padded), so that folds share one width."""
        if width == self.n_features:
            return self
        if width < self.n_features:
            raise RiskReportError(f"{self.path}: cannot narrow {self.n_features} features to {width}.")
        wide = np.zeros((self.n_documents, width), np.float32)
        wide[:, : self.n_features] = self.features
        return LetorData(self.path, self.labels, wide, self.query_ids, self.bounds, self.lines)

    def select(self, queries: np.ndarray) -> LetorData:
        """The queries at positions `queries` (in that order), as a new `LetorData`."""
        queries = np.asarray(queries, dtype=np.int64)
        starts, ends = self.bounds[queries], self.bounds[queries + 1]
        rows = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)]) if len(queries) else np.zeros(0, int)
        bounds = np.concatenate([[0], np.cumsum(ends - starts)]).astype(np.int64)
        return LetorData(
            self.path,
            self.labels[rows],
            self.features[rows],
            self.query_ids[queries],
            bounds,
            self.lines[rows] if len(self.lines) else self.lines,
        )


def read_letor(path: str | os.PathLike, width: int | None = None) -> LetorData:
    """Read a LETOR / SVMlight ranking file (plain or .gz); `InputFormatError` naming the line otherwise.

    >>> data = read_letor("Fold1/train.txt")          # doctest: +SKIP
    >>> data.n_queries, data.n_features
    (6000, 136)
    """
    path = Path(path)
    buffer = _read_bytes(path)
    status, line, column, rows, widest = _scan(
        buffer, False, _EMPTY_I32, _EMPTY_I64, _EMPTY_I64, _EMPTY_F32, MAX_FEATURE
    )
    if status:
        _raise(path, buffer, status, line, column)
    if rows == 0:
        raise _no_document_lines(path)
    labels, qids, lines = np.empty(rows, np.int32), np.empty(rows, np.int64), np.empty(rows, np.int64)
    features = np.zeros((rows, max(widest, width or 0)), np.float32)
    _scan(buffer, True, labels, qids, lines, features, MAX_FEATURE)
    query_ids, bounds = query_blocks(path, qids, lines)
    return LetorData(path, labels, features, query_ids, bounds, lines)


def query_blocks(path: Path, qids: np.ndarray, lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Query ids in file order and their row bounds; an error if a query's lines are not consecutive."""
    starts = np.flatnonzero(np.r_[True, qids[1:] != qids[:-1]])
    ids = qids[starts]
    order = np.argsort(ids, kind="stable")
    repeated = np.flatnonzero(ids[order][1:] == ids[order][:-1])
    if len(repeated):
        first, again = starts[order[repeated[0]]], starts[order[repeated[0] + 1]]
        gap = int(starts[np.searchsorted(starts, first, side="right")])
        raise InputFormatError(
            path,
            f"query {ids[order[repeated[0]]]} appears again after other queries "
            f"(its lines start at line {lines[first]} and stop before line {lines[gap]})",
            line=int(lines[again]),
            expected="every line of a query on consecutive lines (sort the file by query id)",
        )
    return ids, np.r_[starts, len(qids)].astype(np.int64)


def _read_bytes(path: Path) -> np.ndarray:
    try:
        raw = path.read_bytes()
        raw = gzip.decompress(raw) if path.name.endswith(".gz") else raw
    except FileNotFoundError:
        raise RiskReportError(f"LETOR file {path} does not exist.") from None
    except (OSError, EOFError, gzip.BadGzipFile) as error:
        raise InputFormatError(path, f"cannot be read ({error})") from None
    return np.frombuffer(raw + b"\n", dtype=np.uint8)


def _raise(path: Path, buffer: np.ndarray, status: int, line: int, column: int) -> None:
    problem, expected = PROBLEMS[status]
    text = _line_text(buffer, line)
    shown = text if len(text) <= 60 else text[:57] + "…"
    raise InputFormatError(path, f"{problem} at column {column} ({shown!r})", line=line, expected=expected)


def _line_text(buffer: np.ndarray, line: int) -> str:
    breaks = np.flatnonzero(buffer == 10)
    start = 0 if line == 1 else int(breaks[line - 2]) + 1
    return bytes(buffer[start : int(breaks[line - 1])]).decode("utf-8", "replace").rstrip("\r")


_EMPTY_I32, _EMPTY_I64, _EMPTY_F32 = np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros((0, 0), np.float32)


def _scan(*args):
    from ._letor_scan import scan  # numba: imported when a file is read, not when a folder is planned

    return scan(*args)


_LABEL = re.compile(rb"(?:^|\n)[ \t]*([^\s#]+)")


def _no_document_lines(path: Path) -> InputFormatError:
    """The error of a LETOR file without a document line (empty, or only blank and comment lines)."""
    return InputFormatError(path, "no document lines", expected="lines such as '2 qid:10 1:0.5 2:0.1'")


def has_relevant_label(path: Path, block: int = 1 << 24) -> bool:
    """Whether some line of a LETOR file has a label above 0, read block by block and stopped at the first one
    (a check before anything is trained: only a file without one is read whole). A label that is not a
    number counts as relevant here: the reader, not this check, reports it with its line. A file without a
    document line is its own error (`InputFormatError`, as the reader's), not a file without relevant ones."""
    opener = gzip.open if path.name.endswith(".gz") else open
    seen = False
    try:
        with opener(path, "rb") as stream:
            tail, chunk = b"", b"-"
            while chunk:
                chunk = stream.read(block)
                text = tail + chunk
                cut = text.rfind(b"\n") + 1 if chunk else len(text)  # whole lines; at the end the last one too
                labels = [match[1] for match in _LABEL.finditer(text[:cut])]
                tail, seen = text[cut:], seen or bool(labels)
                if any(_relevant(label) for label in labels):
                    return True
    except (OSError, EOFError):  # unreadable: the reader says how, with the file
        return True
    if not seen:
        raise _no_document_lines(path)
    return False


def _relevant(label: bytes) -> bool:
    try:
        return float(label) > 0
    except ValueError:
        return True


# ---- folds and data folders ----------------------------------------------------------------------


@dataclass(frozen=True)
class Fold:
    """The files of one fold: `train` and `test` (required), `vali` (optional)."""

    name: str
    files: dict[str, Path]

    def read(self, width: int | None = None) -> dict[str, LetorData]:
        """Every split of the fold, at one feature width (the widest of its files, or `width`)."""
        data = {split: read_letor(path) for split, path in self.files.items()}
        widest = max([d.n_features for d in data.values()] + [width or 0])
        return {split: d.with_width(widest) for split, d in data.items()}


@dataclass(frozen=True)
class LetorFolder:
    """A folder of LETOR folds (MSLR layout) with an optional `letor.toml` (title, description, baseline, alphas)."""

    name: str
    path: Path
    folds: dict[str, Fold]
    config: dict = field(default_factory=dict)

    @property
    def location(self) -> Path:
        return self.path

    @property
    def title(self) -> str:
        return self.config.get("title", self.name)

    @property
    def description(self) -> str:
        return self.config.get("description", "")

    def files(self) -> list[Path]:
        """Every input file, for hashing and provenance."""
        found = [p for fold in self.folds.values() for p in fold.files.values()]
        config = self.path / CONFIG
        return sorted(found + ([config] if config.is_file() else []))


def find_split(folder: Path, split: str) -> Path | None:
    """`<split>.txt` (or .txt.gz, .svmlight, .svm) in `folder`, if there is one."""
    for suffix in SUFFIXES:
        candidate = folder / f"{split}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def find_folds(path: Path) -> dict[str, Fold]:
    """Folds `Fold<n>/` of an MSLR-layout folder, else the folder itself as one fold named after it."""
    folds = {}
    for folder in sorted(path.glob("Fold*"), key=lambda p: (len(p.name), p.name)):
        if folder.is_dir():
            folds[folder.name] = _fold(folder, folder.name)
    if not folds and find_split(path, "train") is not None:
        folds[path.name] = _fold(path, path.name)
    if not folds:
        raise RiskReportError(
            f"{path} holds no LETOR folds: expected Fold1/train.txt, Fold1/test.txt (and "
            "vali.txt), … as in MSLR-WEB10K, or train.txt and test.txt in the folder itself."
        )
    return folds


def _fold(folder: Path, name: str) -> Fold:
    files = {split: find_split(folder, split) for split in SPLITS}
    missing = [split for split in ("train", "test") if files[split] is None]
    if missing:
        raise RiskReportError(
            f"{folder}: fold {name} has no {' and no '.join(f'{m}.txt' for m in missing)} "
            "(a fold needs train.txt and test.txt; vali.txt is optional)."
        )
    return Fold(name, {split: p for split, p in files.items() if p is not None})


def load_letor_folder(spec: str | os.PathLike) -> LetorFolder:
    """A LETOR data folder by name (a folder under a data directory, as collections) or by path."""
    path = resolve_data_folder(spec, DEMO, _make_demo)
    return LetorFolder(path.name, path, find_folds(path), _read_config(path / CONFIG))


def demo_path() -> Path:
    """Where the synthetic learning-to-rank demo lives: beside the demo collection (data/ of a checkout, else the
    user data folder)."""
    from .collection import demo_path as collection_demo

    return collection_demo().parent / DEMO


def _make_demo() -> Path:
    """The shipped demo, made on first use where the package may write (as the demo collection is)."""
    from .letor_demo import generate_letor_demo

    return make_demo(demo_path(), "learning-to-rank demo", generate_letor_demo, "riskreport demo")


def choose_folds(folder: LetorFolder, names: list[str] | None) -> list[Fold]:
    """The folds named (all when None), in the folder's order; an error naming the folds there are."""
    from ..errors import UnknownNameError

    if names is None:
        return list(folder.folds.values())
    for name in names:
        if name not in folder.folds:
            raise UnknownNameError("fold", name, list(folder.folds), hint=f"(folds of {folder.path})")
    return [folder.folds[name] for name in dict.fromkeys(names)]


def _read_config(path: Path) -> dict:
    return read_settings(path, CONFIG_KEYS)


def write_letor(
    path: str | os.PathLike, labels: np.ndarray, query_ids: np.ndarray, features: np.ndarray, decimals: int = 4
) -> Path:
    """Write documents (rows in query blocks) as a LETOR file: `label qid:Q 1:v 2:v …`, every feature."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ids = np.arange(1, features.shape[1] + 1)
    with open(path, "w", encoding="ascii", newline="\n") as handle:
        for label, qid, row in zip(labels, query_ids, features):
            values = " ".join(f"{f}:{v:.{decimals}f}" for f, v in zip(ids, row))
            handle.write(f"{int(label)} qid:{int(qid)} {values}\n")
    return path


def read_run_scores(path: str | os.PathLike):
    """Per-query scores of existing runs, as baselines: a CSV `system,topic,score` with `topic` a LETOR query id
    (a whole number) and `score` the run's NDCG@k on it. Returns the table; errors name the file and line."""
    import pandas as pd

    path = Path(path)
    try:
        frame = pd.read_csv(path, dtype={"system": str})
    except FileNotFoundError:
        raise RiskReportError(f"Run scores file {path} does not exist.") from None
    except (OSError, ValueError, pd.errors.ParserError) as error:
        raise InputFormatError(path, f"not a readable CSV ({error})") from None
    missing = {"system", "topic", "score"} - set(frame.columns)
    if missing:
        raise InputFormatError(
            path,
            f"no column(s) {', '.join(sorted(missing))}",
            line=1,
            expected="a header system,topic,score (topic: the LETOR query id, score: its NDCG@k)",
        )
    topic = pd.to_numeric(frame["topic"], errors="coerce")
    score = pd.to_numeric(frame["score"], errors="coerce")
    bad = np.flatnonzero(topic.isna() | (topic % 1 != 0) | score.isna())
    if len(bad):
        row = frame.iloc[bad[0]]
        raise InputFormatError(
            path,
            f"topic {row['topic']!r}, score {row['score']!r}",
            line=int(bad[0]) + 2,
            expected="a whole-number query id and a numeric score",
        )
    return frame.assign(topic=topic.astype(np.int64), score=score.astype(float))
