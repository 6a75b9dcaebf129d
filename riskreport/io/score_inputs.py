"""Per-topic scores where users have them: long frames, systems × topics matrices, score tables, `trec_eval -q`
and ir_measures `-q` output, pytrec_eval results and ir_measures `iter_calc` results."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from riskreport.errors import InputFormatError, ParameterError
from riskreport.io.collection import system_id
from riskreport.io.input_frames import _mapping, _numbers, _system, _unique
from riskreport.io.trec import read_scores

SCORES_FRAME = "a long frame with columns system, topic and value (or score), or a systems × topics matrix"


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
        table = (
            pd.concat(
                [_query_scores(output, _system(str(system))) for system, output in scores.items()], ignore_index=True
            )
            if scores
            else pd.DataFrame()
        )
    else:
        raise ParameterError(
            f"scores: got {type(scores).__name__}; expected {SCORES_FRAME}, a score table or "
            "trec_eval -q output, or {system: per-query output}."
        )
    if table.empty:
        raise ParameterError("scores: no per-topic values found.")
    table = _pick_measure(table, measure)
    for system in dict.fromkeys(table["system"]):
        _system(system)
    _check_scores(table)
    return table[["system", "topic", "score", "measure"]].reset_index(drop=True)


def _frame_scores(frame: pd.DataFrame) -> pd.DataFrame:
    value = next((c for c in ("value", "score") if c in frame.columns), None)
    if {"system", "topic"} <= set(frame.columns) and value is not None:  # long
        table = frame.rename(columns={value: "score"})
        table = table.assign(system=table["system"].astype(str), topic=table["topic"].astype(str))
        if "measure" not in table:
            table["measure"] = ""
        return table.assign(measure=table["measure"].fillna("").astype(str).map(_measure_label))
    if all(pd.api.types.is_numeric_dtype(t) for t in frame.dtypes) and len(frame.columns):  # systems × topics
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
    elif isinstance(output, Mapping):  # pytrec_eval
        rows = [(str(q), m, v) for q, values in output.items() for m, v in _mapping(values, system).items()]
    elif isinstance(output, Iterable):  # ir_measures iter_calc
        rows = []
        for item in output:
            if not all(hasattr(item, a) for a in ("query_id", "measure", "value")):
                raise ParameterError(
                    f"scores[{system!r}]: got {type(item).__name__} items; expected ir_measures "
                    "Metric(query_id, measure, value) results."
                )
            rows.append((str(item.query_id), str(item.measure), item.value))
    else:
        raise ParameterError(
            f"scores[{system!r}]: got {type(output).__name__}; expected a trec_eval or ir_measures "
            "-q output file, iter_calc results or {qid: {measure: value}}."
        )
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
            raise InputFormatError(
                path,
                f"{len(fields)} fields",
                line=number,
                expected="3 whitespace-separated columns (trec_eval -q: measure topic value; "
                "ir_measures -q: topic measure value)",
            )
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
            raise ParameterError(
                f"scores hold {len(labels)} measures ({', '.join(labels[:10])}): choose one with measure=."
            )
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
        raise InputFormatError(
            "scores",
            f"system {row['system']}, topic {row['topic']}: value {row['score']} is negative",
            expected="each system's own score ≥ 0, not a difference from a baseline",
        )
    table["score"] = values
    _unique(table, ["system", "measure", "topic"], "scores", "system {system} has two values for topic {topic}")
