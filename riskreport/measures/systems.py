"""Which systems: those a collection has for a measure (its runs, instances and score-table rows), and those a
report compares (`systems`, `pool`: ids, or a file listing them)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TypeGuard

import pandas as pd

from riskreport.errors import InputFormatError, ParameterError, UnknownNameError
from riskreport.io.collection import Collection
from riskreport.io.trec import read_system_list


def collection_systems(collection: Collection, rows: pd.DataFrame | None, instances: bool = False) -> dict[str, str]:
    """System id -> source of the systems of a collection, `rows` being its score table's rows for the measure
    (None: it has no score table).

    Sources: `run` (runs/), `scores` (scores.csv, one instance), and with `instances=True` also
    the non-deterministic systems: `instances` (instances/<system>/) and `scores-instances`
    (scores.csv with several instances).
    """
    systems = {s: "run" for s in collection.runs}
    if instances:
        for system in collection.instances:
            if system in systems:
                raise InputFormatError(
                    collection.path / "instances" / system,
                    f"system {system!r} has both runs/{system} and instances/{system}/",
                    expected="a system either in runs/ or in instances/",
                )
            if not collection.instances[system]:
                raise empty_instances_folder(collection, system)
            systems[system] = "instances"
    if rows is not None:
        for system, count in rows.groupby("system")["instance"].nunique().items():
            if system in systems:
                raise InputFormatError(collection.scores_file(), f"system {system!r} has both a run file and scores")
            if count <= 1:
                systems[system] = "scores"
            elif instances:
                systems[system] = "scores-instances"
    return dict(sorted(systems.items(), key=lambda kv: kv[0].lower()))


def empty_instances_folder(collection: Collection, system: str) -> InputFormatError:
    return InputFormatError(
        collection.path / "instances" / system,
        "the folder holds no run files",
        expected="one run file per instance, e.g. instances/<system>/1.run.gz",
    )


def no_systems(collection: Collection, measure: str) -> ParameterError:
    """The error for a collection with no system with `measure` scores, saying what its runs/ folder and its score
    table hold."""
    runs = collection.path / "runs"
    if not runs.is_dir():
        where = "no runs/ folder"
    else:
        where = f"{runs} holds no run files, named <system>.run or <system>.txt (.gz/.bz2)"
    table = "no scores.csv" if collection.scores is None else f"{collection.scores.name} has no rows for this measure"
    return ParameterError(f"Collection {collection.name!r} has no system with {measure} scores ({where}, and {table}).")


SYSTEM_FILE_SUFFIXES = (".csv", ".txt", ".tsv", ".lst", ".list")


def is_system_file(value: object) -> TypeGuard[str | os.PathLike]:
    """Whether a `systems`/`pool` value means a file listing systems rather than ids: a path object, or text
    with a path separator, a list-file suffix (.csv, .txt, ...) or naming an existing file."""
    if isinstance(value, os.PathLike):
        return True
    if not isinstance(value, str):
        return False
    return os.sep in value or value.lower().endswith(SYSTEM_FILE_SUFFIXES) or Path(value).expanduser().is_file()


def choose_systems(
    value: str | os.PathLike | Sequence[str], known: Sequence[str], name: str = "system"
) -> tuple[list[str], list[str]]:
    """The systems a `systems` or `pool` value names, and those a file lists that `known` lacks.

    `value`: a list of ids, comma-separated text, or the path of a file (`trec.read_system_list`:
    one id per line, or a CSV with a `system` column and an optional 0/1 `pooled` column). An id
    given directly must be in `known`; a file may list runs the collection lacks (a TREC pool list
    names every run of the track): they are returned as absent, for the report to say, unless the
    file lists none of `known`, which is an error naming the file.
    """
    if not is_system_file(value):
        chosen = _as_list(value)
        for system in chosen:
            if system not in known:
                raise UnknownNameError(name, system, list(known))
        return list(dict.fromkeys(chosen)), []
    path = Path(value).expanduser()
    listed = read_system_list(path)
    present = set(known)
    chosen = [s for s in listed if s in present]
    if not chosen:
        shown = ", ".join(listed[:5]) + (", …" if len(listed) > 5 else "")
        raise ParameterError(
            f"{path}: none of the {len(listed)} system(s) it lists ({shown}) is in the collection "
            f"(systems: {', '.join(list(known)[:10])}{', …' if len(known) > 10 else ''}). Is it the "
            "list of another collection?"
        )
    return chosen, [s for s in listed if s not in present]


def _as_list(systems) -> list[str]:
    if isinstance(systems, str):
        return [s.strip() for s in systems.split(",") if s.strip()]
    if not isinstance(systems, (list, tuple)) or not all(isinstance(s, str) for s in systems):
        raise ParameterError(f"systems must be a list of system ids, got {systems!r}.")
    return list(systems)
