"""Report parameters: defaults from `collection.toml`, checked before any notebook starts.

One pass: a report's inputs are resolved into one `ReportParameters` from what io read of its collection, once
(`riskreport.io.collection_data.read_collection`), by `parameters_from`; the measure and its score-table rows
(`measure_names`), the systems (`systems`), the α grid and the topic set (`topics`), in that order."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import pandas as pd

from riskreport.errors import ParameterError, UnknownNameError
from riskreport.io.collection import Collection, load_collection
from riskreport.io.collection_data import CollectionData, read_collection
from riskreport.measures.measure_names import measure_rows, report_measure
from riskreport.measures.report_options import check_report_options  # noqa: F401 - re-exported
from riskreport.measures.systems import (  # noqa: F401 - re-exported
    SYSTEM_FILE_SUFFIXES,
    choose_systems,
    collection_systems,
    is_system_file,
    no_systems,
)
from riskreport.measures.topics import report_topics
from riskreport.options import CONVENTIONS, MAX_BOOTSTRAP_SAMPLES, check_alphas, check_options  # noqa: F401 - re-exported

DEFAULT_MEASURE = "nDCG@10"
DEFAULT_ALPHAS = (0.0, 1.0, 5.0, 10.0)


@dataclass(frozen=True)
class ReportParameters:
    """The effective parameters of a report, every default resolved: the one value `rr.analyse`, `riskreport run`
    and a batch job resolve their inputs into, in one pass (`parameters_from`), and that everything downstream
    takes. `topics` is the collection's topic set for the measure; `table` its score table (None without one),
    read once by io and handed to `evaluate` so that no step reads it again."""

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
    return parameters_from(
        read_collection(collection),
        measure=measure,
        baseline=baseline,
        alphas=alphas,
        systems=systems,
        sig_level=sig_level,
        instances=instances,
    )


def parameters_from(
    data: CollectionData,
    *,
    measure: str | None = None,
    baseline: str | Sequence[str] | None = None,
    alphas: Sequence[float] | None = None,
    systems: Sequence[str] | str | os.PathLike | None = None,
    sig_level: float = 0.05,
    instances: bool = False,
) -> ReportParameters:
    """`resolve_parameters` from what io read of the collection (`read_collection`): nothing is read here."""
    collection, table = data.collection, data.table
    measure = report_measure(collection, measure, DEFAULT_MEASURE, table)
    rows = measure_rows(collection, measure, table)
    known = list(collection_systems(collection, rows, instances))
    if not known:
        raise no_systems(collection, measure)
    several = [] if baseline is None or isinstance(baseline, str) else list(dict.fromkeys(baseline))
    if not isinstance(baseline, str) and baseline is not None and not several:
        raise ParameterError("baseline: an empty list; give one baseline or several.")
    baseline = several[0] if several else baseline or collection.default_baseline or known[0]
    for name in several or [cast(str, baseline)]:
        if name not in known:
            raise UnknownNameError(
                "baseline", name, known, hint=f"(systems of collection {collection.name!r} with {measure} scores)"
            )
    chosen, absent = (known, []) if systems is None else choose_systems(systems, known)
    extra = {"systems_file": str(systems), "absent": absent} if is_system_file(systems) else {}
    alphas = check_alphas(
        DEFAULT_ALPHAS
        if alphas is None and not collection.default_alphas
        else alphas
        if alphas is not None
        else collection.default_alphas
    )
    topics = report_topics(collection, data.qrels, rows)  # a clear error now, not in a template cell
    baseline = cast(str, baseline)
    chosen = [b for b in several or [baseline] if b not in chosen] + list(chosen)
    if len(chosen) < 2:
        raise ParameterError(f"A risk report needs the baseline and at least one other system; got {chosen}.")
    check_options({"sig_level": sig_level})
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
