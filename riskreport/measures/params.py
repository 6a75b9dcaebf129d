"""Report parameters: defaults from `collection.toml`, checked before any notebook starts."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard, cast

import pandas as pd

from riskreport.errors import ParameterError, UnknownNameError
from riskreport.io.collection import Collection, load_collection
from riskreport.io.trec import read_system_list
from riskreport.measures.evaluation import available_systems
from riskreport.measures.measure_names import canonical_measure, resolve_measure, score_table
from riskreport.measures.topics import collection_topics
from riskreport.options import CONVENTIONS, MAX_BOOTSTRAP_SAMPLES, check_alphas, check_options  # noqa: F401 - re-exported

DEFAULT_MEASURE = "nDCG@10"
DEFAULT_ALPHAS = (0.0, 1.0, 5.0, 10.0)


@dataclass(frozen=True)
class ReportParameters:
    """The effective parameters of a report, every default resolved: the one value `rr.analyse`, `riskreport run`
    and a batch job resolve their inputs into, in one pass (`resolve_parameters`), and that everything downstream
    takes. `topics` is the collection's topic set for the measure; `table` its score table (None without one),
    read once here and handed to `evaluate` so that no step reads it again."""

    collection: Collection
    measure: str
    baseline: str
    alphas: list[float]
    systems: list[str]
    sig_level: float = 0.05
    extra: dict = field(default_factory=dict)  # systems_file, absent: when the systems came from a file
    known: list = field(default_factory=list)  # every system of the collection with scores for the measure
    baselines: list = field(default_factory=list)  # every baseline when there are several (`baseline` is the first)
    topics: list = field(default_factory=list)
    table: pd.DataFrame | None = field(default=None, compare=False, repr=False)

    @property
    def challengers(self) -> list[str]:
        return [s for s in self.systems if s != self.baseline]

    @property
    def all_baselines(self) -> list[str]:
        """The baselines of the report: `baselines` when there are several, else `[baseline]`."""
        return list(self.baselines) or [self.baseline]


def resolve_parameters(
    collection: str | Collection,
    *,
    measure: str | None = None,
    baseline: str | Sequence[str] | None = None,
    alphas: Sequence[float] | None = None,
    systems: Sequence[str] | str | os.PathLike | None = None,
    sig_level: float = 0.05,
    instances: bool = False,
) -> ReportParameters:
    """Fill defaults from the collection and check every value; raise a clear error otherwise.

    With `instances=True` the non-deterministic systems (instances/, or scores.csv rows with
    several instances) count as systems too (templates on non-deterministic systems).
    A system named twice in `systems` counts once; a collection whose qrels have no relevant
    document is an error here, before any run is evaluated. `systems` may also be the path of a
    file listing them (`choose_systems`); `extra` then holds `systems_file` and the `absent` runs.
    `baseline` may name several baselines (a list): the first is `baseline`, all are `baselines`.

    >>> p = resolve_parameters("demo")            # doctest: +SKIP
    >>> p.baseline, p.measure, p.alphas            # doctest: +SKIP
    ('bm25', 'nDCG@10', [0.0, 1.0, 2.0, 5.0, 10.0])
    """
    if not isinstance(collection, Collection):
        collection = load_collection(collection)
    table = None if collection.scores is None else score_table(collection)  # read once, here
    measure = resolve_measure(collection, measure, fallback=DEFAULT_MEASURE, table=table)
    known = list(available_systems(collection, measure, instances=instances, table=table))
    if not known:
        raise ParameterError(
            f"Collection {collection.name!r} has no system with {measure} scores ({_no_systems(collection)})."
        )
    several = [] if baseline is None or isinstance(baseline, str) else list(dict.fromkeys(baseline))
    if not isinstance(baseline, str) and baseline is not None and not several:
        raise ParameterError("baseline: an empty list; give one baseline or several.")
    baseline = several[0] if several else baseline or collection.default_baseline or known[0]
    for name in several or [cast(str, baseline)]:
        if name not in known:
            raise UnknownNameError(
                "baseline", name, known, hint=f"(systems of collection {collection.name!r} with {measure} scores)"
            )
    alphas = check_alphas(
        DEFAULT_ALPHAS
        if alphas is None and not collection.default_alphas
        else alphas
        if alphas is not None
        else collection.default_alphas
    )
    topics = collection_topics(collection, measure, table)  # a clear error now, not in a template cell
    chosen, absent = (known, []) if systems is None else choose_systems(systems, known)
    extra = {"systems_file": str(systems), "absent": absent} if is_system_file(systems) else {}
    baseline = cast(str, baseline)
    chosen = [b for b in several or [baseline] if b not in chosen] + list(chosen)
    if len(chosen) < 2:
        raise ParameterError(f"A risk report needs the baseline and at least one other system; got {chosen}.")
    check_report_options({"sig_level": sig_level})
    return ReportParameters(
        collection,
        measure,
        baseline,
        alphas,
        list(dict.fromkeys(chosen)),
        float(sig_level),
        extra,
        known,
        several if len(several) > 1 else [],
        topics,
        table,
    )


def _no_systems(collection: Collection) -> str:
    """Why a collection has no system: what its runs/ folder and its score table hold."""
    runs = collection.path / "runs"
    if not runs.is_dir():
        where = "no runs/ folder"
    else:
        where = f"{runs} holds no run files, named <system>.run or <system>.txt (.gz/.bz2)"
    table = "no scores.csv" if collection.scores is None else f"{collection.scores.name} has no rows for this measure"
    return f"{where}, and {table}"


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


def check_report_options(parameters: dict, params: ReportParameters | None = None) -> dict:
    """`riskreport.options.check_options`, and each measure of `other_measures`/`measures` parsed by
    ir_measures (an unknown measure is named before any run is evaluated)."""
    check_options(parameters, params)
    for name in ("other_measures", "measures"):
        for measure in parameters.get(name) or ():
            canonical_measure(measure)
    return parameters
