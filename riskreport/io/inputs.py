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

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from riskreport.errors import InputFormatError, ParameterError, RiskReportError
from riskreport.io.collection import COLLECTION_NAME, Collection, _find_runs, _is_run_file, load_collection, system_id
from riskreport.io.trec import read_qrels, read_scores

IRDS_PREFIX = "irds:"
RUN_FRAME = "columns qid, docno and score or rank (PyTerrier), or query_id, doc_id, score"
QRELS_FRAME = "columns qid, docno, label (PyTerrier), query_id, doc_id, relevance (ir_datasets) or q_id, doc_id, score"
SCORES_FRAME = "a long frame with columns system, topic and value (or score), or a systems × topics matrix"
SYSTEM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
ALIASES = {"query_id": ("query_id", "qid", "q_id", "topic"), "doc_id": ("doc_id", "docno", "docid"),
           "relevance": ("relevance", "label", "rel", "score")}


# ---------------------------------------------------------------------------------------------
# Collections

def collection_from(*, runs=None, qrels=None, scores=None, measure: str | None = None, baseline: str | None = None,
                    alphas=None, title: str | None = None, name: str = "inputs",
                    folder: str | os.PathLike | None = None) -> Collection:
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
        raise ParameterError("runs need qrels to be evaluated: pass qrels= (a file, an ir_datasets id, a frame, "
                             "a ranx Qrels or a {qid: {docno: relevance}} mapping).")
    files: dict[str, str | Path] = {}
    if qrels is not None:
        files["qrels.txt"] = qrels_text(qrels_frame(qrels))
    for system, run in (runs_input(runs) if runs is not None else {}).items():
        if isinstance(run, Path):                                        # linked under its own suffixes (.run.gz)
            files[f"runs/{system}{run.name[len(system_id(run)):]}"] = run
        else:
            files[f"runs/{system}.run"] = run_text(run, system)
    if scores is not None:
        table = scores_frame(scores, measure)
        measure = _single_measure(table) or measure
        files["scores.csv"] = table.to_csv(index=False, float_format="%.17g")
    config = {"title": title, "measure": measure, "baseline": baseline,
              "alphas": [float(a) for a in alphas] if alphas is not None else None}
    files["collection.toml"] = "".join(f"{key} = {json.dumps(value, ensure_ascii=False)}\n"
                                       for key, value in config.items() if value is not None)
    return load_collection(_write_folder(files, name, folder))


def with_qrels(collection: str | os.PathLike, qrels) -> str:
    """The path of a collection with the runs (and collection.toml) of `collection` — a collection
    folder, a collection name or a bare folder of TREC runs — and the qrels `qrels` (a file or an
    ir_datasets id): what `riskreport run --qrels` and a job's `qrels` key use."""
    folder = Path(str(collection)).expanduser()
    source = None if folder.is_dir() and not (folder / "runs").is_dir() else _loaded(collection)
    runs = source.runs if source is not None else _run_folder(folder)
    config = source.config if source is not None else {}
    built = collection_from(runs=runs, qrels=qrels, name=source.name if source is not None else folder.resolve().name,
                            title=config.get("title"), measure=config.get("measure"),
                            baseline=config.get("baseline"), alphas=config.get("alphas"))
    return str(built.path)


def _loaded(collection) -> Collection:
    try:
        return load_collection(collection)
    except RiskReportError as error:
        if "no qrels file" not in str(error) and "not a collection" not in str(error):
            raise
        path = Path(str(collection)).expanduser() / "runs"
        return Collection(name=path.parent.resolve().name, path=path.parent.resolve(), qrels=None,
                          runs=_run_folder(path))


def _write_folder(files: dict[str, str | Path], name: str, folder) -> Path:
    """Write `files` (relative path → text, or a file to link) into `folder`, or into a folder of the cache
    named by their digest; atomically (a temporary sibling renamed into place)."""
    digest = hashlib.sha256()
    for relative, content in sorted(files.items()):
        digest.update(relative.encode() + b"\0")
        digest.update(content.encode() if isinstance(content, str) else _file_key(content))
    if folder is None:
        from riskreport.io.cache import default_cache_dir
        target = default_cache_dir() / "inputs" / digest.hexdigest()[:24] / name
        if (target / ".complete").is_file():
            return target
    else:
        target = Path(folder).expanduser().resolve()
        if target.exists() and any(target.iterdir()):
            raise ParameterError(f"{target} is not empty: collection_from writes a new collection folder there.")
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        for relative, content in files.items():
            path = work / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str):
                path.write_text(content, encoding="utf-8")
            else:
                path.symlink_to(content.resolve())
        (work / ".complete").write_text(digest.hexdigest())
        if target.exists():
            target.rmdir()
        os.replace(work, target)
    except FileExistsError:              # written meanwhile by another process: the same content
        shutil.rmtree(work, ignore_errors=True)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return target


def _file_key(path: Path) -> bytes:
    stat = path.stat()
    return f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()


# ---------------------------------------------------------------------------------------------
# Runs

def runs_input(runs) -> dict[str, Path | pd.DataFrame]:
    """Each system's run: a TREC file (Path) or a frame `query_id, doc_id, score`, keyed by system."""
    if isinstance(runs, (str, os.PathLike)):
        return _run_folder(Path(runs).expanduser())
    if isinstance(runs, pd.DataFrame):
        column = next((c for c in ("name", "system", "run") if c in runs.columns), None)
        if column is None:
            raise ParameterError("one result frame holds several systems only with a column naming them (name or "
                                 "system); pass {system: frame} otherwise.")
        return {_system(str(s)): run_frame(part.drop(columns=column), f"runs[{s!r}]")
                for s, part in runs.groupby(column, sort=False)}
    if _is_ranx(runs, "Run"):
        runs = [runs]
    if isinstance(runs, Mapping):
        items = list(runs.items())
    elif isinstance(runs, Iterable) and all(_is_ranx(r, "Run") for r in runs):
        items = [(getattr(r, "name", None), r) for r in runs]
        if any(not n for n, _ in items):
            raise ParameterError("a ranx Run without a name: give Run(..., name='system') or pass {system: run}.")
    else:
        raise ParameterError(f"runs: got {type(runs).__name__}; expected a folder of TREC runs, {{system: run}}, "
                             "ranx Runs or one result frame with a name column.")
    out: dict[str, Path | pd.DataFrame] = {}
    for system, run in items:
        system = _system(str(system))
        if system in out:
            raise ParameterError(f"runs: the system {system!r} is given twice.")
        out[system] = (_run_file(Path(run).expanduser()) if isinstance(run, (str, os.PathLike))
                       else run_frame(run, f"runs[{system!r}]"))
    return out


def _run_folder(folder: Path) -> dict[str, Path]:
    if not folder.is_dir():
        raise InputFormatError(folder, "not a folder of TREC runs", expected="a folder of run files")
    runs = _find_runs(folder)
    if not runs:
        raise InputFormatError(folder, "no run files", expected="files named <system>.run or <system>.txt, "
                                                                 "optionally .gz/.bz2")
    return runs


def _run_file(path: Path) -> Path:
    if not _is_run_file(path):
        raise InputFormatError(path, "not a run file", expected="an existing <system>.run or .txt file (.gz/.bz2)")
    return path


def _system(name: str) -> str:
    if not SYSTEM_NAME.fullmatch(name):
        raise ParameterError(f"system name {name!r}: expected letters, digits, '.', '_', '+' or '-' (it names a file).")
    return name


def run_frame(run, what: str = "run") -> pd.DataFrame:
    """A run as columns `query_id, doc_id, score` from a PyTerrier/ranx frame, a ranx Run or `{qid: {docno: score}}`."""
    if hasattr(run, "to_dict") and not isinstance(run, (pd.DataFrame, Mapping)):          # ranx Run
        run = run.to_dict()
    if isinstance(run, Mapping):
        rows = [(str(q), str(d), s) for q, docs in run.items() for d, s in _mapping(docs, what).items()]
        run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    if not isinstance(run, pd.DataFrame):
        raise ParameterError(f"{what}: got {type(run).__name__}; expected a TREC run file, a result frame ({RUN_FRAME}), "
                             "a ranx Run or {qid: {docno: score}}.")
    table = _renamed(run, ("query_id", "doc_id"), what, RUN_FRAME)
    if "score" in run.columns:
        score = _numbers(run["score"], what, "score", RUN_FRAME)
    elif "rank" in run.columns:
        score = -_numbers(run["rank"], what, "rank", RUN_FRAME)         # rank 1 first: the highest score
    else:
        raise InputFormatError(what, "no score or rank column", expected=RUN_FRAME)
    table["score"] = score
    _unique(table, ["query_id", "doc_id"], what, "document {doc_id} ranked twice for topic {query_id}")
    return table


def run_text(run: pd.DataFrame, system: str) -> str:
    """A TREC run file's text: per topic by decreasing score, ranks from 1, scores at full precision."""
    ordered = run.sort_values(["query_id", "score"], ascending=[True, False], kind="stable")
    rank = ordered.groupby("query_id", sort=False).cumcount() + 1
    return "".join(f"{q} Q0 {d} {r} {s!r} {system}\n"
                   for q, d, r, s in zip(ordered["query_id"], ordered["doc_id"], rank, ordered["score"].astype(float)))


# ---------------------------------------------------------------------------------------------
# Qrels

def qrels_frame(qrels) -> pd.DataFrame:
    """Qrels as columns `query_id, doc_id, relevance` (int) from a file, an ir_datasets id, a frame, a ranx Qrels
    or `{qid: {docno: relevance}}`."""
    if isinstance(qrels, (str, os.PathLike)):
        text = str(qrels)
        path = Path(text).expanduser()
        if path.is_file():
            return read_qrels(path)
        if text.startswith(IRDS_PREFIX) or _irds_knows(text):
            return irds_qrels(text.removeprefix(IRDS_PREFIX))
        raise InputFormatError(path, "no such qrels file", expected="a TREC qrels file, or an ir_datasets id "
                               "(irds:<id>; ir_datasets must be installed: pip install 'riskreport[irds]')")
    if hasattr(qrels, "to_dict") and not isinstance(qrels, (pd.DataFrame, Mapping)):        # ranx Qrels
        qrels = qrels.to_dict()
    if isinstance(qrels, Mapping):
        rows = [(str(q), str(d), r) for q, docs in qrels.items() for d, r in _mapping(docs, "qrels").items()]
        qrels = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
    if not isinstance(qrels, pd.DataFrame):
        raise ParameterError(f"qrels: got {type(qrels).__name__}; expected a qrels file, an ir_datasets id, a frame "
                             f"({QRELS_FRAME}), a ranx Qrels or {{qid: {{docno: relevance}}}}.")
    table = _renamed(qrels, ("query_id", "doc_id", "relevance"), "qrels", QRELS_FRAME)
    grades = _numbers(table["relevance"], "qrels", "relevance", "integer relevance grades")
    if (grades != np.round(grades)).any():
        raise InputFormatError("qrels", "a relevance grade is not a whole number", expected="integer grades")
    table["relevance"] = grades.astype(np.int64)
    _unique(table, ["query_id", "doc_id"], "qrels", "document {doc_id} judged twice for topic {query_id}")
    return table


def _irds_knows(dataset_id: str) -> bool:
    """Whether ir_datasets is installed and has a dataset of this id (a bare id, without `irds:`)."""
    try:
        import ir_datasets
        ir_datasets.registry[dataset_id]
    except (ImportError, KeyError):
        return False
    return True


def irds_qrels(dataset_id: str) -> pd.DataFrame:
    """The qrels of an ir_datasets dataset (`ir_datasets.load(id).qrels_iter()`), or a clear error when
    ir_datasets is missing, does not know the id, or cannot provide the qrels offline."""
    try:
        import ir_datasets
    except ImportError:
        raise ParameterError(f"qrels {dataset_id!r} name an ir_datasets dataset, and ir_datasets is not installed: "
                             "pip install 'riskreport[irds]' (or give a TREC qrels file).") from None
    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError:
        raise ParameterError(f"qrels {dataset_id!r}: neither a file nor a dataset ir_datasets knows "
                             "(see https://ir-datasets.com for the ids).") from None
    if not dataset.has_qrels():
        raise ParameterError(f"qrels {dataset_id!r}: this ir_datasets dataset has no qrels (pick a dataset with "
                             "judgments, e.g. one ending in the topic set's name).")
    try:
        rows = [(q.query_id, q.doc_id, q.relevance) for q in dataset.qrels_iter()]
    except Exception as error:  # noqa: BLE001 - ir_datasets raises many kinds (download, HTTP, missing file) for one reason
        home = os.environ.get("IR_DATASETS_HOME", "~/.ir_datasets")
        raise RiskReportError(
            f"qrels {dataset_id!r} are not available offline: ir_datasets could not read them from {home} "
            f"({type(error).__name__}: {str(error)[:200]}). Fetch them once with network access "
            f"(`ir_datasets export {dataset_id} qrels > qrels.txt`) and give that file, or set IR_DATASETS_HOME "
            "to where they were downloaded.") from None
    if not rows:
        raise ParameterError(f"qrels {dataset_id!r}: ir_datasets returned no judgments.")
    table = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"]).astype({"query_id": str, "doc_id": str})
    return table.drop_duplicates(["query_id", "doc_id"], keep="last").reset_index(drop=True)


def qrels_text(qrels: pd.DataFrame) -> str:
    return "".join(f"{q} 0 {d} {int(r)}\n" for q, d, r in zip(qrels["query_id"], qrels["doc_id"], qrels["relevance"]))


# ---------------------------------------------------------------------------------------------
# Per-topic scores

def scores_frame(scores, measure: str | None = None) -> pd.DataFrame:
    """Per-topic scores as the columns of a score table, `system, topic, score, measure`.

    `scores`: a long frame or a matrix, a CSV score table, trec_eval `-q` output (a file, or a folder
    of files named after their systems), or {system: per-query output} (a trec_eval/ir_measures file,
    ir_measures `iter_calc` results, or pytrec_eval `{qid: {measure: value}}`). `measure` keeps
    the rows of one measure when the output holds several.
    """
    if isinstance(scores, pd.DataFrame):
        table = _frame_scores(scores)
    elif isinstance(scores, (str, os.PathLike)):
        table = _path_scores(Path(scores).expanduser())
    elif isinstance(scores, Mapping):
        table = pd.concat([_query_scores(output, _system(str(system))) for system, output in scores.items()],
                          ignore_index=True) if scores else pd.DataFrame()
    else:
        raise ParameterError(f"scores: got {type(scores).__name__}; expected {SCORES_FRAME}, a score table or "
                             "trec_eval -q output, or {system: per-query output}.")
    if table.empty:
        raise ParameterError("scores: no per-topic values found.")
    table = _pick_measure(table, measure)
    for system in dict.fromkeys(table["system"]):
        _system(system)
    _check_scores(table)
    return table[["system", "topic", "score", "measure"]].reset_index(drop=True)


def _frame_scores(frame: pd.DataFrame) -> pd.DataFrame:
    value = next((c for c in ("value", "score") if c in frame.columns), None)
    if {"system", "topic"} <= set(frame.columns) and value is not None:            # long
        table = frame.rename(columns={value: "score"})
        table = table.assign(system=table["system"].astype(str), topic=table["topic"].astype(str))
        if "measure" not in table:
            table["measure"] = ""
        return table.assign(measure=table["measure"].fillna("").astype(str).map(_measure_label))
    if all(pd.api.types.is_numeric_dtype(t) for t in frame.dtypes) and len(frame.columns):      # systems × topics
        long = frame.rename_axis(index="system", columns="topic").stack(future_stack=True).rename("score").reset_index()
        return long.assign(system=long["system"].astype(str), topic=long["topic"].astype(str), measure="")
    raise InputFormatError("scores", f"columns {list(frame.columns)[:8]}", expected=SCORES_FRAME)


def _path_scores(path: Path) -> pd.DataFrame:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        if not files:
            raise InputFormatError(path, "no files", expected="one trec_eval -q output per system")
        return pd.concat([_query_scores(p, _system(system_id(p).split(".")[0])) for p in files], ignore_index=True)
    if not path.is_file():
        raise InputFormatError(path, "no such file", expected="a score table or trec_eval -q output")
    if path.suffix.lower() == ".csv":
        table = read_scores(path)
        return table.assign(measure=table["measure"].map(_measure_label))
    return _query_scores(path, _system(system_id(path).split(".")[0]))


def _query_scores(output, system: str) -> pd.DataFrame:
    """One system's per-query values as `system, topic, score, measure`."""
    if isinstance(output, (str, os.PathLike)):
        rows = _per_query_lines(Path(output).expanduser())
    elif isinstance(output, Mapping):                                           # pytrec_eval
        rows = [(str(q), m, v) for q, values in output.items() for m, v in _mapping(values, system).items()]
    elif isinstance(output, Iterable):                                          # ir_measures iter_calc
        rows = []
        for item in output:
            if not all(hasattr(item, a) for a in ("query_id", "measure", "value")):
                raise ParameterError(f"scores[{system!r}]: got {type(item).__name__} items; expected ir_measures "
                                     "Metric(query_id, measure, value) results.")
            rows.append((str(item.query_id), str(item.measure), item.value))
    else:
        raise ParameterError(f"scores[{system!r}]: got {type(output).__name__}; expected a trec_eval or ir_measures "
                             "-q output file, iter_calc results or {qid: {measure: value}}.")
    table = pd.DataFrame(rows, columns=["topic", "measure", "score"])
    table = table[table["topic"] != "all"]
    return table.assign(system=system, measure=table["measure"].map(_measure_label))


def _per_query_lines(path: Path) -> list[tuple[str, str, float]]:
    """Rows (topic, measure, value) of `trec_eval -q` (measure, topic, value) or ir_measures `-q` (topic, measure,
    value) output; summary rows (topic `all`) and non-numeric rows (runid) are skipped."""
    text = path.read_text(encoding="utf-8", errors="strict")
    rows, order = [], None
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 3:
            raise InputFormatError(path, f"{len(fields)} fields", line=number,
                                   expected="3 whitespace-separated columns (trec_eval -q: measure topic value; "
                                            "ir_measures -q: topic measure value)")
        order = order or _column_order(fields)
        first, second, value = fields
        topic, measure = (second, first) if order == "trec_eval" else (first, second)
        if topic == "all" or first == "runid":
            continue
        try:
            rows.append((topic, measure, float(value)))
        except ValueError:
            raise InputFormatError(path, f"value {value!r} is not a number", line=number) from None
    return rows


def _column_order(fields: list[str]) -> str:
    return "trec_eval" if _trec_measure(fields[0]) or fields[1] == "all" or fields[0] == "runid" else "ir_measures"


def _trec_measure(name: str) -> str | None:
    import ir_measures
    try:
        parsed = ir_measures.parse_trec_measure(name)
    except Exception:  # noqa: BLE001 - ir_measures raises several kinds for a name it does not read
        return None
    return str(parsed[0]) if len(parsed) == 1 else None


def _measure_label(label: str) -> str:
    """A measure label in ir_measures' spelling: `ndcg_cut_10` → `nDCG@10`; other labels as they are."""
    if not label:
        return ""
    return _trec_measure(label) or label


def _pick_measure(table: pd.DataFrame, measure: str | None) -> pd.DataFrame:
    labels = list(dict.fromkeys(table["measure"]))
    if measure is None:
        if len([label for label in labels if label]) > 1:
            raise ParameterError(f"scores hold {len(labels)} measures ({', '.join(labels[:10])}): choose one with "
                                 "measure=.")
        return table
    import ir_measures
    wanted = {measure, _measure_label(measure)}
    try:
        wanted.add(str(ir_measures.parse_measure(measure)))
    except Exception:  # noqa: BLE001 - ir_measures raises several kinds for a label it does not read
        pass
    kept = table[table["measure"].isin(wanted) | (table["measure"] == "")]
    if kept.empty:
        raise ParameterError(f"scores hold no values of {measure!r}; they hold {', '.join(labels[:10])}.")
    return kept.assign(measure=measure if (kept["measure"] == "").all() else kept["measure"])


def _single_measure(table: pd.DataFrame) -> str | None:
    labels = [label for label in dict.fromkeys(table["measure"]) if label]
    return labels[0] if len(labels) == 1 else None


def _check_scores(table: pd.DataFrame) -> None:
    values = _numbers(table["score"], "scores", "value", "finite numbers ≥ 0")
    if (values < 0).any():
        row = table[values < 0].iloc[0]
        raise InputFormatError("scores", f"system {row['system']}, topic {row['topic']}: value {row['score']} is "
                               "negative", expected="each system's own score ≥ 0, not a difference from a baseline")
    table["score"] = values
    _unique(table, ["system", "measure", "topic"], "scores", "system {system} has two values for topic {topic}")


# ---------------------------------------------------------------------------------------------
# Shared checks

def _is_ranx(obj, kind: str) -> bool:
    """A ranx Run or Qrels, by its class name and `to_dict` (ranx is not a dependency)."""
    return type(obj).__name__ == kind and callable(getattr(obj, "to_dict", None))


def _mapping(values, what: str) -> Mapping:
    if not isinstance(values, Mapping):
        raise ParameterError(f"{what}: expected a nested mapping {{qid: {{key: value}}}}, found "
                             f"{type(values).__name__} inside.")
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
