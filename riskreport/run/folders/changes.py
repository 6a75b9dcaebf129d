"""Changes since a previous report, on disk: the tables a comparison needs, read from a report folder
(`saved_side`) or taken from an `Analysis` (`analysis_side`), and `compare` (`stats.changes.changes_table`).

The previous report of a batch job is what its `latest` link pointed at when the job started
(`previous_report`); `riskreport run --compare-with FOLDER` names one; `Analysis.compare(other)` takes a
folder or another `Analysis`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path, PurePath

import pandas as pd

from riskreport.errors import InputFormatError
from riskreport.run.folders.saved_tables import check_consistent, read_checked
from riskreport.stats.changes import Changes, changes_table, count_changes, rule_summary

TABLES = ("verdicts.csv", "risk.csv", "effectiveness.csv")  # what a comparison reads of a previous report


@dataclass(frozen=True)
class Side:
    """One report of a comparison: its rule verdicts (`stats.changes.rule_summary`), effectiveness table,
    input file hashes (each file by its path in the collection, `collection_files`), effective parameters, name,
    finish time and collection's name."""

    verdicts: pd.DataFrame
    effectiveness: pd.DataFrame | None
    files: dict[str, str]
    parameters: dict
    name: str
    finished: str | None = None
    collection: str | None = None


def compare(before: Side, after: Side) -> Changes:
    """What changed from `before` to `after`."""
    table = changes_table(
        before.verdicts,
        after.verdicts,
        before.effectiveness,
        after.effectiveness,
        before.files,
        after.files,
        _common(before.parameters, after.parameters),
        _common(after.parameters, before.parameters),
        before.collection,
        after.collection,
    )
    return Changes(table, before.name, before.finished, count_changes(table))


def _common(parameters: dict, other: dict) -> dict:
    """The parameters both reports record (a template's new parameter is not a change of this report)."""
    return {k: v for k, v in parameters.items() if k in other}


def saved_side(folder: str | os.PathLike) -> Side:
    """A report folder (by `riskreport run`, a batch or `Analysis.save`) as one side of a comparison, checked as a
    whole (`saved_tables`): a folder that is not a complete risk report raises `InputFormatError` naming the file
    and what is wrong."""
    folder = Path(folder)
    params = folder / "params.json"
    try:
        record = json.loads(params.read_text(encoding="utf-8"))
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as error:
        raise InputFormatError(
            params, f"no report to compare with ({type(error).__name__}: {error})", expected="a report folder"
        ) from None
    tables = folder / "tables"
    for name in TABLES:
        if not (tables / name).is_file():
            raise InputFormatError(
                tables / name,
                "missing: only a complete risk_report report can be compared with",
                expected=f"the tables/{name} of a risk_report report",
            )
    read = {name: read_checked(tables / name, f"the tables/{name} of a risk_report report") for name in TABLES}
    check_consistent(folder, read["verdicts.csv"], read["risk.csv"], read["effectiveness.csv"], record)
    collection = record.get("collection") or {}
    return Side(
        rule_summary(read["verdicts.csv"], read["risk.csv"]),
        read["effectiveness.csv"],
        collection_files(collection.get("files_sha256") or {}, collection.get("path")),
        dict(record.get("parameters") or {}),
        _name(folder, record),
        record.get("finished_utc"),
        collection.get("name"),
    )


def collection_files(files: dict[str, str], root: str | os.PathLike | None) -> dict[str, str]:
    """File → SHA-256 with each file named by its path in the collection folder `root` (`runs/a.run`,
    `instances/x/1.run.gz`); a file outside it (a systems list given as a path) keeps its full path."""
    if root is None:
        return dict(files)
    base = PurePath(root)
    named = {}
    for path, digest in files.items():
        try:
            named[PurePath(path).relative_to(base).as_posix()] = digest
        except ValueError:
            named[str(path)] = digest
    return named


def analysis_side(analysis) -> Side:
    """An `Analysis` (computed or loaded) as one side of a comparison."""
    from riskreport.io.provenance import file_hashes

    record = analysis.record or {}
    collection = record.get("collection") or {}
    files = collection.get("files_sha256")
    if files is None:
        files = file_hashes(analysis.params.collection.files())
    name = _name(analysis.folder, record) if analysis.folder is not None else "the other analysis"
    return Side(
        rule_summary(analysis.table("verdicts"), analysis.table("risk")),
        analysis.table("effectiveness"),
        collection_files(files, collection.get("path") or analysis.params.collection.path),
        dict(record.get("parameters") or analysis.parameters),
        name,
        record.get("finished_utc"),
        collection.get("name") or analysis.params.collection.name,
    )


def _name(folder: Path, record: dict) -> str:
    """How the section names a report: `job <name>, report <stamp>` or its folder."""
    return f"job {record['job']}, report {folder.name}" if record.get("job") else str(folder)


def previous_report(parent: Path) -> Path | None:
    """The complete report `latest` in `parent` points at (a batch job's previous report), if any."""
    latest = parent / "latest"
    try:
        record = json.loads((latest / "params.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return latest.resolve() if isinstance(record, dict) and record.get("status") == "ok" else None


def previous_of(folder: str | os.PathLike | None) -> dict | None:
    """What params.json records of the report compared with (`folder`, `name`, `finished_utc`), checked: a folder
    that is not a complete risk report raises `InputFormatError` before anything runs (None: no comparison)."""
    if folder is None:
        return None
    side = saved_side(folder)
    return {"folder": str(Path(folder).resolve()), "name": side.name, "finished_utc": side.finished}


def job_previous(parent: Path, say) -> dict | None:
    """`previous_of` the report a batch job's `latest` points at, if any: None for a report of a template without
    verdicts (nothing to compare); a damaged one is not compared with, and `say` names the file and what is wrong
    (the new report becomes `latest`, so the next run compares again)."""
    folder = previous_report(parent)
    if folder is None or not (folder / "tables" / "verdicts.csv").is_file():
        return None
    try:
        return previous_of(folder)
    except InputFormatError as error:
        say(f"warning: not compared with its previous report: {error}")
        return None
