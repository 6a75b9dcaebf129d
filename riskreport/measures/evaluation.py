"""Per-topic effectiveness of a collection's systems: `evaluate` (runs evaluated with `ir_measures`, in
parallel and cached: `riskreport.measures.run_files`; score tables read as they are).

The score matrix of docs/measures/index.md, Scores: topics are those of the qrels with at least one relevant
document (`riskreport.measures.topics`); a run lacking such a topic scores 0 on it (as `trec_eval -c` /
`gdeval -c`) and is reported; run topics absent from the qrels are dropped with a warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from riskreport.errors import UnknownNameError
from riskreport.io.cache import default_cache_dir
from riskreport.io.collection import Collection
from riskreport.measures.measure_names import (
    SCORE,
    canonical_measure,
    judged_measure,
    measure_labels,
    measure_pipeline,
    measure_rows,
    resolve_measure,
    score_table,
    score_table_measures,
)
from riskreport.measures.run_files import RunScores, evaluate_runs
from riskreport.measures.systems import collection_systems
from riskreport.measures.topics import (
    collection_topic_set,
    collection_topics,
    natural_sort,
    qrels_topics,
    require_common_topics,
)
from riskreport.progress import Progress

# What this module offers, with the names whose home it was before it was split (runner.py, report.py,
# params.py and notebooks import them from here).
__all__ = [
    "CollectionWarning",
    "TidyScores",
    "TopicScores",
    "evaluate",
    "available_systems",
    "judged_fraction",
    "Progress",
    "SCORE",
    "canonical_measure",
    "judged_measure",
    "measure_pipeline",
    "resolve_measure",
    "score_table_measures",
    "collection_topics",
    "natural_sort",
    "evaluate_runs",
    "RunScores",
    "default_cache_dir",
]


class CollectionWarning(UserWarning):
    """Input was accepted with a documented repair (e.g. run topics absent from the qrels dropped)."""


class TidyScores:
    """Systems and topics, in input order, of a tidy `scores` table (`system, ..., topic, score`)."""

    scores: pd.DataFrame

    @property
    def systems(self) -> list[str]:
        return list(dict.fromkeys(self.scores["system"]))

    @property
    def topics(self) -> list[str]:
        return list(dict.fromkeys(self.scores["topic"]))


@dataclass(frozen=True)
class TopicScores(TidyScores):
    """Per-topic scores of every system for one measure.

    `scores` is tidy (`system, topic, score`) over the complete topic set; `missing` lists
    the (system, topic) pairs absent from a run and scored 0; `extra` lists run topics
    absent from the qrels, which were dropped.
    """

    measure: str
    scores: pd.DataFrame
    missing: pd.DataFrame
    extra: pd.DataFrame

    def matrix(self) -> pd.DataFrame:
        """Systems x topics matrix X (rows in system order, columns in topic order)."""
        table = self.scores.pivot(index="system", columns="topic", values="score")
        return table.loc[self.systems, self.topics]


def evaluate(
    collection: Collection,
    measure: str,
    systems: Iterable[str] | None = None,
    *,
    jobs: int | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: Progress | None = None,
    table: pd.DataFrame | None = None,
) -> TopicScores:
    """Per-topic `measure` of every (or the given) deterministic system of `collection`.

    Runs are evaluated with ir_measures in `jobs` processes (default: all cores); results
    come from, and go to, the on-disk cache unless `use_cache=False`. `table`: the collection's score table when
    the caller holds it (`ReportParameters.table`), not read again.

    >>> scores = evaluate(load_collection("demo"), "nDCG@10")   # doctest: +SKIP
    >>> scores.matrix().mean(axis=1)                            # doctest: +SKIP
    """
    if table is None and collection.scores is not None:
        table = score_table(collection)  # read once, for every step below
    measure = resolve_measure(collection, measure, table=table)
    known = available_systems(collection, measure, table=table)
    wanted = list(known) if systems is None else list(dict.fromkeys(systems))  # a name given twice counts once
    for system in wanted:
        if system not in known:
            raise UnknownNameError("system", system, list(known))
    parts = []
    run_systems = [s for s in wanted if known[s] == "run"]
    if run_systems:
        parts.append(
            evaluate_runs(
                collection.qrels_file(),
                {s: collection.runs[s] for s in run_systems},
                [measure],
                jobs=jobs,
                cache_dir=cache_dir,
                use_cache=use_cache,
                progress=progress,
            )[measure]
        )
    table_systems = [s for s in wanted if known[s] == "scores"]
    if table_systems:
        parts.append(_scores_from_table(collection, measure, table_systems, table))
    return _assemble(parts, collection, wanted)


def available_systems(
    collection: Collection, measure: str | None = None, instances: bool = False, table: pd.DataFrame | None = None
) -> dict[str, str]:
    """System id -> source of the systems of a collection (`systems.collection_systems`): for `measure` (None:
    every row of its score table); `table`: its score table when the caller holds it (read here otherwise)."""
    if table is None and collection.scores is not None:
        table = score_table(collection)
    rows = table if measure is None else measure_rows(collection, measure, table)
    return collection_systems(collection, rows, instances)


def _scores_from_table(
    collection: Collection, measure: str, systems: list[str], table: pd.DataFrame | None = None
) -> RunScores:
    table = score_table(collection) if table is None else table
    table = table[table["measure"].isin(measure_labels(collection, measure, table)) & table["system"].isin(systems)]
    values = table[["system", "topic", "score"]].reset_index(drop=True)
    return RunScores(measure, values, values[["system", "topic"]])


def _assemble(parts: list[RunScores], collection: Collection, systems: list[str]) -> TopicScores:
    """Apply the topic set: fill topics missing from a system with 0, drop topics outside the qrels."""
    measure = parts[0].measure if parts else ""
    values = pd.concat([p.values for p in parts], ignore_index=True)
    present = pd.concat([p.run_topics for p in parts], ignore_index=True)
    topics, judged_topics = collection_topic_set(collection, present["topic"])
    for system, found in present.groupby("system")["topic"]:
        require_common_topics(
            collection.runs.get(system) or collection.scores_file(),
            found,
            topics,
            collection.qrels,
            None if system in collection.runs else system,
        )
    extra = present[~present["topic"].isin(judged_topics)].drop_duplicates().reset_index(drop=True)
    if not extra.empty:
        warnings.warn(
            f"{len(extra)} run topic(s) absent from the qrels were dropped "
            f"(systems: {', '.join(sorted(extra['system'].unique()))})",
            CollectionWarning,
            stacklevel=3,
        )  # points at the caller of evaluate*
    grid = pd.MultiIndex.from_product([systems, topics], names=["system", "topic"])
    present_pairs = pd.MultiIndex.from_frame(present[["system", "topic"]].drop_duplicates())
    missing = grid.difference(present_pairs, sort=False).to_frame(index=False)
    scores = (
        values.drop_duplicates(["system", "topic"])
        .set_index(["system", "topic"])["score"]
        .reindex(grid, fill_value=0.0)
        .reset_index()
    )
    scores["score"] = scores["score"].astype(float).fillna(0.0)
    order = {t: i for i, t in enumerate(topics)}
    missing = missing.sort_values(["system", "topic"], key=lambda c: c.map(order) if c.name == "topic" else c)
    return TopicScores(measure, scores, missing.reset_index(drop=True), extra)


def judged_fraction(
    collection: Collection, measure: str, systems: Iterable[str] | None = None, **options: Any
) -> pd.DataFrame:
    """Per system the mean ir_measures `Judged@k` at the cutoff of `measure`, over the topics it ranks.

    Unjudged documents count as non-relevant, which biases comparisons against a pooled
    baseline; a low judged fraction warns of that.
    """
    runs = {s: p for s, p in collection.runs.items() if systems is None or s in set(systems)}
    if not runs:
        return pd.DataFrame(columns=["system", "measure", "judged"])
    judged = judged_measure(canonical_measure(measure))
    qrels = collection.qrels_file()
    raw = evaluate_runs(qrels, runs, [judged], **options)[judged].values
    raw = raw[raw["topic"].isin(qrels_topics(qrels)[0])]
    table = raw.groupby("system", sort=False)["score"].mean().rename("judged").reset_index()
    table.insert(1, "measure", judged)
    return table
