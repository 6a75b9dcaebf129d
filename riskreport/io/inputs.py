"""Inputs where users have them, turned into the collection folder a report reads.

A report reads a collection folder (qrels, `runs/`, `scores.csv`, `collection.toml`). Users often
hold their data in another shape; `collection_from` writes such a folder from any of these, so that
the API, `riskreport run` and a notebook evaluate them with the same readers, checks and cache:

- runs: a folder of TREC run files; a mapping system → run, each a TREC run file, a PyTerrier
  result frame (`qid, docno` and `score` or `rank`), a ranx `Run` or a pytrec_eval-style
  `{qid: {docno: score}}`; ranx Runs alone (each named by its `name`); one frame with a `name`
  (or `system`) column holding several systems, as PyTerrier's `Experiment` names them.
- qrels: a TREC qrels file; an `ir_datasets` id (`"irds:trec-robust04"`, or the bare id when no such
  file exists), read with `ir_datasets.load(id).qrels_iter()`; a ranx `Qrels`; a frame
  (`qid, docno, label` as PyTerrier, `query_id, doc_id, relevance` as ir_datasets); a pytrec_eval-style
  `{qid: {docno: relevance}}`.
- per-topic scores: a long frame `system, topic, value` (or `score`; optional `measure`), a
  systems × topics matrix, or per system the per-query output of `trec_eval -q` (a file, or a folder
  of them named after their systems), of ir_measures (`iter_calc` results or its `-q` text) or of
  pytrec_eval (`evaluate` results `{qid: {measure: value}}`).

ranx and PyTerrier are recognised by their attributes (duck typing): neither is a dependency.
ir_datasets is the optional extra `riskreport[irds]`. Every problem is an `InputFormatError` or a
`ParameterError` that names the input and what was expected.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from riskreport.errors import InputFormatError, ParameterError
from riskreport.io.cache import write_folder
from riskreport.io.collection import COLLECTION_NAME, Collection, _is_run_file, load_collection, run_folder, system_id
from riskreport.io.input_frames import ALIASES, _is_ranx, _mapping, _numbers, _renamed, _system, _unique
from riskreport.io.irds import IRDS_PREFIX, irds_knows, irds_qrels
from riskreport.io.score_inputs import _single_measure, scores_frame
from riskreport.io.trec import read_qrels
from riskreport.options import check_alphas

RUN_FRAME = "columns qid, docno and score or rank (PyTerrier), or query_id, doc_id, score"


QRELS_FRAME = "columns qid, docno, label (PyTerrier), query_id, doc_id, relevance (ir_datasets) or q_id, doc_id, score"


def collection_from(
    *,
    runs=None,
    qrels=None,
    scores=None,
    measure: str | None = None,
    baseline: str | None = None,
    alphas=None,
    title: str | None = None,
    name: str = "inputs",
    folder: str | os.PathLike | None = None,
) -> Collection:
    """A collection folder written from `runs`, `qrels` and/or per-topic `scores` (see the module), loaded.

    `measure`, `baseline`, `alphas` and `title` become its collection.toml; `measure` also picks one
    measure of per-topic output holding several. Without `folder` the collection goes under the
    riskreport cache, in a folder named by the digest of its content (the same inputs give the same
    folder, so evaluation is cached across calls). Run files given as paths are linked, not copied.
    """
    if not COLLECTION_NAME.fullmatch(name):
        raise ParameterError(f"name {name!r}: expected letters, digits, '.', '_' or '-', not starting with '.'")
    if runs is None and scores is None:
        raise ParameterError("collection_from needs runs (with qrels) or per-topic scores.")
    if runs is not None and qrels is None:
        raise ParameterError(
            "runs need qrels to be evaluated: pass qrels= (a file, an ir_datasets id, a frame, "
            "a ranx Qrels or a {qid: {docno: relevance}} mapping)."
        )
    files: dict[str, str | Path] = {}
    if qrels is not None:
        files["qrels.txt"] = qrels_text(qrels_frame(qrels))
    for system, run in (runs_input(runs) if runs is not None else {}).items():
        if isinstance(run, Path):  # linked under its own suffixes (.run.gz)
            files[f"runs/{system}{run.name[len(system_id(run)) :]}"] = run
        else:
            files[f"runs/{system}.run"] = run_text(run, system)
    if scores is not None:
        table = scores_frame(scores, measure)
        measure = _single_measure(table) or measure
        files["scores.csv"] = table.to_csv(index=False, float_format="%.17g")
    config = {
        "title": title,
        "measure": measure,
        "baseline": baseline,
        "alphas": check_alphas(alphas) if alphas is not None else None,
    }
    files["collection.toml"] = "".join(
        f"{key} = {json.dumps(value, ensure_ascii=False)}\n" for key, value in config.items() if value is not None
    )
    return load_collection(write_folder(files, name, folder))


def analysed_collection(
    collection, runs, qrels, scores, *, measure, baseline, alphas, title
) -> tuple[Collection, str | None]:
    """(collection, title) of `rr.analyse`'s inputs, the collection loaded: `collection` itself when it names one
    (with `qrels` replacing its qrels), else a collection folder of the runs or scores given (as the first argument
    or as `runs=`/`scores=`), titled after what they are unless `title` is given."""
    if not isinstance(collection, (str, os.PathLike)):  # runs or scores themselves, as the keywords take them
        if runs is not None or scores is not None:
            raise ParameterError(
                f"analyse: the first argument is a {type(collection).__name__} and runs= or scores= is given too; "
                "give the inputs once."
            )
        runs, scores = given_inputs(collection, qrels)
    if runs is not None or scores is not None:
        title = title or input_title(runs, scores)  # in params.json too
        built = collection_from(
            runs=runs,
            qrels=qrels,
            scores=scores,
            measure=measure,
            baseline=baseline if isinstance(baseline, str) else None,
            alphas=alphas,
            title=title,
        )
        return built, title
    return given_collection(collection, qrels), title


def given_inputs(inputs, qrels=None) -> tuple[object, object]:
    """`(runs, scores)` for inputs given without saying which: a run frame (`qid, docno` or `query_id, doc_id`
    columns, as PyTerrier's), a ranx Run (or several) and, with `qrels`, a mapping are runs; any other frame
    or mapping is per-topic scores (a long frame, a matrix, {system: per-query output})."""
    if isinstance(inputs, pd.DataFrame):
        documents = any(c in inputs.columns for c in ALIASES["doc_id"])
        return (inputs, None) if documents else (None, inputs)
    if _is_ranx(inputs, "Run") or (
        isinstance(inputs, (list, tuple)) and inputs and all(_is_ranx(r, "Run") for r in inputs)
    ):
        return inputs, None
    if isinstance(inputs, Mapping):
        return (inputs, None) if qrels is not None else (None, inputs)
    raise ParameterError(
        f"inputs: got {type(inputs).__name__}; expected a collection name or path, a result or score frame, "
        "a ranx Run or a mapping {system: run or per-query output}."
    )


def input_title(runs, scores) -> str:
    """A report title for inputs given in Python: what they are (`per-topic scores from a DataFrame`)."""
    given = runs if runs is not None else scores
    if isinstance(given, (str, os.PathLike)):
        what = Path(given).name
    elif isinstance(given, pd.DataFrame):
        what = "a DataFrame"
    elif isinstance(given, Mapping):
        what = "a mapping"
    else:
        what = "ranx Runs" if isinstance(given, (list, tuple)) else f"a {type(given).__name__}"
    return f"{'runs' if runs is not None else 'per-topic scores'} from {what}"


def with_qrels(collection: str | os.PathLike, qrels) -> str:
    """The path of a collection with the runs (and collection.toml) of `collection` — a collection
    folder, a collection name or a bare folder of TREC runs — and the qrels `qrels` (a file or an
    ir_datasets id): what `riskreport run --qrels` and a job's `qrels` key use."""
    return str(given_collection(collection, qrels).path)


def given_collection(collection: str | os.PathLike, qrels=None) -> Collection:
    """The collection `collection` names, loaded; with `qrels`, a collection of its runs and settings and those
    qrels, written (`with_qrels`). The qrels are read first, the collection's runs then found once, and the folder
    written from them is the collection returned (built from what was written, not looked up again)."""
    text = None if qrels is None else qrels_text(qrels_frame(qrels))
    source = load_collection(collection, runs_only=qrels is not None)
    if text is None:
        return source
    config = {key: source.config[key] for key in ("title", "measure", "baseline", "alphas") if key in source.config}
    config.update({"alphas": check_alphas(config["alphas"])} if "alphas" in config else {})
    runs = {system: f"runs/{path.name}" for system, path in source.runs.items()}  # linked under their own names
    settings = "".join(f"{key} = {json.dumps(value, ensure_ascii=False)}\n" for key, value in config.items())
    files: dict[str, str | Path] = {
        "qrels.txt": text,
        **{runs[s]: path for s, path in source.runs.items()},
        "collection.toml": settings,
    }
    folder = write_folder(files, source.name).resolve()
    return Collection(
        name=folder.name,
        path=folder,
        qrels=folder / "qrels.txt",
        runs={system: folder / relative for system, relative in runs.items()},
        config=config,
    )


def runs_input(runs) -> dict[str, Path | pd.DataFrame]:
    """Each system's run: a TREC file (Path) or a frame `query_id, doc_id, score`, keyed by system."""
    if isinstance(runs, (str, os.PathLike)):
        return run_folder(Path(runs).expanduser())
    if isinstance(runs, pd.DataFrame):
        column = next((c for c in ("name", "system", "run") if c in runs.columns), None)
        if column is None:
            raise ParameterError(
                "one result frame holds several systems only with a column naming them (name or "
                "system); pass {system: frame} otherwise."
            )
        return {
            _system(str(s)): run_frame(part.drop(columns=column), f"runs[{s!r}]")
            for s, part in runs.groupby(column, sort=False)
        }
    if _is_ranx(runs, "Run"):
        runs = [runs]
    if isinstance(runs, Mapping):
        items = list(runs.items())
    elif isinstance(runs, Iterable) and all(_is_ranx(r, "Run") for r in runs):
        items = [(getattr(r, "name", None), r) for r in runs]
        if any(not n for n, _ in items):
            raise ParameterError("a ranx Run without a name: give Run(..., name='system') or pass {system: run}.")
    else:
        raise ParameterError(
            f"runs: got {type(runs).__name__}; expected a folder of TREC runs, {{system: run}}, "
            "ranx Runs or one result frame with a name column."
        )
    out: dict[str, Path | pd.DataFrame] = {}
    for system, run in items:
        system = _system(str(system))
        if system in out:
            raise ParameterError(f"runs: the system {system!r} is given twice.")
        out[system] = (
            _run_file(Path(run).expanduser())
            if isinstance(run, (str, os.PathLike))
            else run_frame(run, f"runs[{system!r}]")
        )
    return out


def _run_file(path: Path) -> Path:
    if not _is_run_file(path):
        raise InputFormatError(path, "not a run file", expected="an existing <system>.run or .txt file (.gz/.bz2)")
    return path


def run_frame(run, what: str = "run") -> pd.DataFrame:
    """A run as columns `query_id, doc_id, score` from a PyTerrier/ranx frame, a ranx Run or `{qid: {docno: score}}`."""
    if hasattr(run, "to_dict") and not isinstance(run, (pd.DataFrame, Mapping)):  # ranx Run
        run = run.to_dict()
    if isinstance(run, Mapping):
        rows = [(str(q), str(d), s) for q, docs in run.items() for d, s in _mapping(docs, what).items()]
        run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    if not isinstance(run, pd.DataFrame):
        raise ParameterError(
            f"{what}: got {type(run).__name__}; expected a TREC run file, a result frame ({RUN_FRAME}), "
            "a ranx Run or {qid: {docno: score}}."
        )
    table = _renamed(run, ("query_id", "doc_id"), what, RUN_FRAME)
    if "score" in run.columns:
        score = _numbers(run["score"], what, "score", RUN_FRAME)
    elif "rank" in run.columns:
        score = -_numbers(run["rank"], what, "rank", RUN_FRAME)  # rank 1 first: the highest score
    else:
        raise InputFormatError(what, "no score or rank column", expected=RUN_FRAME)
    table["score"] = score
    _unique(table, ["query_id", "doc_id"], what, "document {doc_id} ranked twice for topic {query_id}")
    return table


def run_text(run: pd.DataFrame, system: str) -> str:
    """A TREC run file's text: per topic by decreasing score, ranks from 1, scores at full precision."""
    ordered = run.sort_values(["query_id", "score"], ascending=[True, False], kind="stable")
    rank = ordered.groupby("query_id", sort=False).cumcount() + 1
    return "".join(
        f"{q} Q0 {d} {r} {s!r} {system}\n"
        for q, d, r, s in zip(ordered["query_id"], ordered["doc_id"], rank, ordered["score"].astype(float))
    )


def qrels_frame(qrels) -> pd.DataFrame:
    """Qrels as columns `query_id, doc_id, relevance` (int) from a file, an ir_datasets id, a frame, a ranx Qrels
    or `{qid: {docno: relevance}}`."""
    if isinstance(qrels, (str, os.PathLike)):
        text = str(qrels)
        path = Path(text).expanduser()
        if path.is_file():
            return read_qrels(path)
        if text.startswith(IRDS_PREFIX) or irds_knows(text):
            return irds_qrels(text.removeprefix(IRDS_PREFIX))
        raise InputFormatError(
            path,
            "no such qrels file",
            expected="a TREC qrels file, or an ir_datasets id "
            "(irds:<id>; ir_datasets must be installed: pip install 'riskreport[irds]')",
        )
    if hasattr(qrels, "to_dict") and not isinstance(qrels, (pd.DataFrame, Mapping)):  # ranx Qrels
        qrels = qrels.to_dict()
    if isinstance(qrels, Mapping):
        rows = [(str(q), str(d), r) for q, docs in qrels.items() for d, r in _mapping(docs, "qrels").items()]
        qrels = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
    if not isinstance(qrels, pd.DataFrame):
        raise ParameterError(
            f"qrels: got {type(qrels).__name__}; expected a qrels file, an ir_datasets id, a frame "
            f"({QRELS_FRAME}), a ranx Qrels or {{qid: {{docno: relevance}}}}."
        )
    table = _renamed(qrels, ("query_id", "doc_id", "relevance"), "qrels", QRELS_FRAME)
    grades = _numbers(table["relevance"], "qrels", "relevance", "integer relevance grades")
    if (grades != np.round(grades)).any():
        raise InputFormatError("qrels", "a relevance grade is not a whole number", expected="integer grades")
    table["relevance"] = grades.astype(np.int64)
    _unique(table, ["query_id", "doc_id"], "qrels", "document {doc_id} judged twice for topic {query_id}")
    return table


def qrels_text(qrels: pd.DataFrame) -> str:
    return "".join(f"{q} 0 {d} {int(r)}\n" for q, d, r in zip(qrels["query_id"], qrels["doc_id"], qrels["relevance"]))
