"""Per-topic scores of every instance of every system, for non-deterministic systems (Jayasinghe et al. 2014; docs/measures/nondeterministic.md).

Where instances come from:

    instances/<system>/<instance>.run[.gz|.bz2]   one run per instance, evaluated with ir_measures (cached)
    scores.csv with an `instance` column          rows system,topic,score,instance[,measure]
    runs/<system>.run, or scores.csv rows         a deterministic system: one instance, named `run`
                                                  (or its `instance` value in scores.csv)

The topic set is the collection's (docs/measures/index.md, Scores): an instance lacking a topic scores 0 on it and is
listed in `missing`; instance topics absent from the qrels are dropped with a warning. A folder
`instances/<system>/` that holds a single run is a deterministic system (one instance, instance
variance 0) and `notes` says so; an empty one is an error.

>>> scores = evaluate_instances(load_collection("demo"), "nDCG@10", ["bm25", "sampled-a"])  # doctest: +SKIP
>>> scores.n_instances()                                                                       # doctest: +SKIP
{'bm25': 1, 'sampled-a': 10}
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from riskreport.errors import InputFormatError, ParameterError, RiskReportError, UnknownNameError
from riskreport.io.collection import Collection, load_collection
from riskreport.io.trec import read_scores
from riskreport.measures.evaluation import CollectionWarning, TidyScores, available_systems
from riskreport.measures.measure_names import measure_labels, resolve_measure
from riskreport.measures.params import ReportParameters, resolve_parameters
from riskreport.measures.run_files import evaluate_runs
from riskreport.measures.systems import empty_instances_folder
from riskreport.measures.topics import collection_topic_set, natural_sort, require_common_topics
from riskreport.progress import Progress
from riskreport.stats.instance_risk import INSTANCE_COLUMNS, instance_risk, risk_agreement, single_instance_tests  # noqa: F401 - importable from here as before

SINGLE_RUN = "run"  # instance name of a deterministic system given by runs/<system>.run
SCORE_COLUMNS = ["system", "instance", "topic", "score"]
NONDETERMINISTIC_SOURCES = ("instances", "scores-instances")


@dataclass(frozen=True)
class InstanceScores(TidyScores):
    """Per-topic scores of the instances of systems, for one measure.

    `scores` is tidy (`system, instance, topic, score`) over the complete grid of each
    system's instances x the topic set; `missing` lists the (system, instance, topic) cells
    absent from the input and scored 0; `extra` the instance topics outside the qrels that
    were dropped; `notes` the documented repairs (e.g. a single-run instances folder).
    """

    measure: str
    scores: pd.DataFrame
    missing: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["system", "instance", "topic"]))
    extra: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["system", "instance", "topic"]))
    notes: tuple[str, ...] = ()

    def instances(self, system: str) -> list[str]:
        return list(dict.fromkeys(self.scores.loc[self.scores["system"] == system, "instance"]))

    def n_instances(self) -> dict[str, int]:
        return {s: len(self.instances(s)) for s in self.systems}

    def deterministic(self, system: str) -> bool:
        """A system with a single instance is deterministic (its instance variance is 0, Jayasinghe et al. 2014; docs/measures/nondeterministic.md)."""
        return len(self.instances(system)) == 1

    def matrix(self, system: str) -> pd.DataFrame:
        """Instances x topics matrix of one system (rows in instance order, columns in topic order)."""
        rows = self.scores[self.scores["system"] == system]
        return rows.pivot(index="instance", columns="topic", values="score").loc[self.instances(system), self.topics]

    def pooled(self) -> pd.DataFrame:
        """Systems x topics matrix of the per-topic mean over each system's instances."""
        table = self.scores.groupby(["system", "topic"], sort=False)["score"].mean().unstack("topic")
        return table.loc[self.systems, self.topics]

    def summary(self) -> pd.DataFrame:
        """Per system: instances, whether deterministic, mean score and the sd of instance means."""
        means = self.scores.groupby(["system", "instance"], sort=False)["score"].mean()
        rows = []
        for system in self.systems:
            values = means.loc[system]
            missing = self.missing[self.missing["system"] == system]
            rows.append(
                {
                    "system": system,
                    "instances": len(values),
                    "kind": "deterministic" if len(values) == 1 else "non-deterministic",
                    "mean": values.mean(),
                    "sd of instance means": values.std(ddof=1) if len(values) > 1 else 0.0,
                    "min instance mean": values.min(),
                    "max instance mean": values.max(),
                    "missing instance–topic cells (scored 0)": len(missing),
                }
            )
        return pd.DataFrame(rows)


def from_table(table: pd.DataFrame, measure: str = "", topics: Sequence[str] | None = None) -> InstanceScores:
    """InstanceScores from a tidy table `system, instance, topic, score` (no repair, no evaluation).

    Cells absent from the table stay absent (an incomplete design, which `riskreport.stats.mixed`
    fits with statsmodels MixedLM); `topics` fixes the topic order.
    """
    missing_columns = [c for c in SCORE_COLUMNS if c not in table.columns]
    if missing_columns:
        raise RiskReportError(
            f"an instance score table needs the columns {', '.join(SCORE_COLUMNS)}; "
            f"missing {', '.join(missing_columns)}"
        )
    data = table[SCORE_COLUMNS].copy()
    for column in ("system", "instance", "topic"):
        data[column] = data[column].astype(str)
    data["score"] = data["score"].astype(float)
    order = list(topics) if topics is not None else natural_sort(data["topic"].unique())
    data = _sort(data, order)
    return InstanceScores(measure, data.reset_index(drop=True))


def evaluate_instances(
    collection: Collection | str,
    measure: str,
    systems: Iterable[str] | None = None,
    *,
    jobs: int | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: Progress | None = None,
) -> InstanceScores:
    """Per-topic `measure` of every instance of every (or the given) system of `collection`.

    Deterministic systems (runs/, or scores.csv without several instances) are one instance.
    Runs are evaluated like `riskreport.evaluate` (parallel, cached on disk).
    """
    if not isinstance(collection, Collection):
        collection = load_collection(collection)
    measure = resolve_measure(collection, measure)
    known = available_systems(collection, measure, instances=True)
    wanted = list(known) if systems is None else list(dict.fromkeys(systems))
    for system in wanted:
        if system not in known:
            raise UnknownNameError("system", system, list(known))
    notes: list[str] = []
    runs: dict[str, Path] = {}
    run_keys: dict[str, tuple[str, str]] = {}
    for system in wanted:
        if known[system] == "run":
            runs[system] = collection.runs[system]
            run_keys[system] = (system, SINGLE_RUN)
        elif known[system] == "instances":
            files = collection.instances[system]
            if not files:
                raise empty_instances_folder(collection, system)
            if len(files) == 1:
                notes.append(
                    f"instances/{system}/ holds a single run ({next(iter(files.values())).name}): "
                    f"{system} is treated as deterministic (one instance, instance variance 0)."
                )
            for instance, path in files.items():
                key = f"{system}/{instance}"
                runs[key] = path
                run_keys[key] = (system, instance)
    parts: list[pd.DataFrame] = []
    present: list[pd.DataFrame] = []
    if runs:
        raw = evaluate_runs(
            collection.qrels_file(),
            runs,
            [measure],
            jobs=jobs,
            cache_dir=cache_dir,
            use_cache=use_cache,
            progress=progress,
        )[measure]
        for frame in (raw.values, raw.run_topics):
            keys = frame["system"].map(run_keys)
            frame = frame.assign(system=keys.str[0], instance=keys.str[1])
            (parts if "score" in frame else present).append(frame)
    table_systems = [s for s in wanted if known[s] in ("scores", "scores-instances")]
    if table_systems:
        rows = _table_rows(collection, measure, table_systems)
        parts.append(rows)
        present.append(rows[["system", "instance", "topic"]])
    return _assemble(collection, measure, wanted, parts, present, notes)


def _table_rows(collection: Collection, measure: str, systems: list[str]) -> pd.DataFrame:
    """scores.csv rows of `systems` for `measure`; a system without instance names is one instance `run`."""
    scores = collection.scores_file()
    table = read_scores(scores)
    table = table[table["measure"].isin(measure_labels(collection, measure)) & table["system"].isin(systems)]
    for system, names in table.groupby("system")["instance"]:
        named = set(names)
        if "" in named and len(named) > 1:
            raise InputFormatError(
                scores,
                f"system {system!r} has rows with and without an instance",
                expected="an instance on every row of a non-deterministic system",
            )
    table = table.assign(instance=table["instance"].replace("", SINGLE_RUN))
    return table[SCORE_COLUMNS].reset_index(drop=True)


def _assemble(
    collection: Collection,
    measure: str,
    systems: list[str],
    parts: list[pd.DataFrame],
    present: list[pd.DataFrame],
    notes: list[str],
) -> InstanceScores:
    """The topic set (docs/measures/index.md, Scores) on every instance: absent cells score 0, topics outside the qrels are dropped."""
    values = pd.concat(parts, ignore_index=True)
    present_cells = pd.concat(present, ignore_index=True).drop_duplicates()
    topics, judged = collection_topic_set(collection, present_cells["topic"])
    if collection.scores is not None:
        for (system, instance), found in present_cells.groupby(["system", "instance"])["topic"]:
            if system not in collection.runs and system not in collection.instances:  # from scores.csv
                require_common_topics(collection.scores, found, topics, collection.qrels, f"{system}/{instance}")
    extra = present_cells[~present_cells["topic"].isin(judged)].reset_index(drop=True)
    if not extra.empty:
        warnings.warn(
            f"{len(extra)} instance topic(s) absent from the qrels were dropped "
            f"(systems: {', '.join(sorted(extra['system'].unique()))})",
            CollectionWarning,
            stacklevel=3,
        )  # points at the caller of evaluate*
    instances = present_cells[["system", "instance"]].drop_duplicates()
    grid = pd.DataFrame(
        [
            (s, i, t)
            for s in systems
            for i in natural_sort(instances.loc[instances["system"] == s, "instance"])
            for t in topics
        ],
        columns=["system", "instance", "topic"],
    )
    cells = grid.merge(present_cells[["system", "instance", "topic"]], how="left", indicator=True)
    missing = cells.loc[cells["_merge"] == "left_only", ["system", "instance", "topic"]].reset_index(drop=True)
    scores = grid.merge(values.drop_duplicates(["system", "instance", "topic"]), how="left")
    scores["score"] = scores["score"].astype(float).fillna(0.0)
    if not missing.empty:
        notes.append(
            f"{len(missing)} instance–topic cell(s) absent from the input score 0 (docs/measures/index.md, Scores): "
            + "; ".join(
                f"{s}/{i}: {len(g)} topic(s)" for (s, i), g in missing.groupby(["system", "instance"], sort=False)
            )
            + "."
        )
    return InstanceScores(measure, scores[SCORE_COLUMNS], missing, extra, tuple(notes))


def _sort(data: pd.DataFrame, topics: list[str]) -> pd.DataFrame:
    systems = {s: n for n, s in enumerate(dict.fromkeys(data["system"]))}
    instance_order = {i: n for n, i in enumerate(natural_sort(data["instance"].unique()))}
    topic_order = {t: n for n, t in enumerate(topics)}
    keys = pd.DataFrame(
        {
            "s": data["system"].map(systems),
            "i": data["instance"].map(instance_order),
            "t": data["topic"].map(topic_order),
        }
    )
    return data.loc[keys.sort_values(["s", "i", "t"], kind="stable").index]


def nondeterministic_systems(collection: Collection, measure: str) -> list[str]:
    """Systems given as several instances (instances/<system>/, or scores.csv with an instance column)."""
    return [
        s
        for s, source in available_systems(collection, measure, instances=True).items()
        if source in NONDETERMINISTIC_SOURCES
    ]


def resolve_instance_parameters(
    collection: str | Collection,
    *,
    measure: str | None = None,
    baseline: str | None = None,
    alphas: Sequence[float] | None = None,
    systems: Sequence[str] | str | os.PathLike | None = None,
    sig_level: float = 0.05,
) -> ReportParameters:
    """`resolve_parameters` for templates on non-deterministic systems.

    Without `systems`, the report covers the baseline and every non-deterministic system of
    the collection (a clear error when there is none); given systems may be deterministic too.
    """
    p = resolve_parameters(
        collection,
        measure=measure,
        baseline=baseline,
        alphas=alphas,
        systems=systems,
        sig_level=sig_level,
        instances=True,
    )
    topics = p.topics
    if len(topics) < 2:
        raise ParameterError(
            f"Collection {p.collection.name!r} has {len(topics)} topic ({', '.join(topics)}): the "
            "mixed-effects model of non-deterministic systems needs at least 2 topics."
        )
    if systems is not None:
        return p
    chosen = [s for s in nondeterministic_systems(p.collection, p.measure) if s != p.baseline]
    if not chosen:
        raise ParameterError(
            f"Collection {p.collection.name!r} has no non-deterministic system other than the baseline "
            f"{p.baseline!r}: put several runs of a system in instances/<system>/<instance>.run, or give "
            "scores.csv an instance column, or name the systems to compare with `systems`."
        )
    return resolve_parameters(
        p.collection,
        measure=p.measure,
        baseline=p.baseline,
        alphas=p.alphas,
        systems=chosen,
        sig_level=sig_level,
        instances=True,
    )
