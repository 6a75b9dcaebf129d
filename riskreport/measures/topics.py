"""The topic set of a collection (docs/measures/index.md, Scores): the qrels topics with a relevant document
or, without qrels, the topics scored; and the errors that name a run or table sharing no topic with it."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from riskreport.errors import InputFormatError, RiskReportError
from riskreport.io.collection import Collection
from riskreport.io.provenance import file_digest, parsed
from riskreport.io.trec import read_qrels
from riskreport.measures.measure_names import measure_rows, resolve_measure, score_table


def topic_set(qrels: pd.DataFrame) -> list[str]:
    """Topics of the qrels with at least one relevant document, in natural order."""
    return natural_sort(qrels.loc[qrels["relevance"] > 0, "query_id"].unique())


def qrels_topics(path: str | Path) -> tuple[list[str], set[str]]:
    """(topic set, judged topics) of a qrels file; parsed once per content in a process."""
    topics, judged = topics_of_qrels(str(path), file_digest(Path(path)))
    return list(topics), set(judged)


@functools.lru_cache(maxsize=16)
def topics_of_qrels(path: str, digest: str) -> tuple[tuple[str, ...], frozenset]:
    qrels = parsed_qrels(path, digest)
    return tuple(topic_set(qrels)), frozenset(qrels["query_id"].unique().tolist())


def parsed_qrels(path: str, digest: str) -> pd.DataFrame:
    """The qrels file of that content (`digest`), read once in a process for its topics and its evaluation, as
    `riskreport.io.collection_data` reads it (shared: callers must not change it)."""
    return parsed(Path(path), read_qrels)


def collection_topics(
    collection: Collection, measure: str | None = None, table: pd.DataFrame | None = None
) -> list[str]:
    """The topic set of a collection (`report_topics`), of `measure` when given; `table`: its score table when the
    caller holds it (read here otherwise)."""
    qrels = None if collection.qrels is None else parsed_qrels(str(collection.qrels), file_digest(collection.qrels))
    if qrels is None:
        table = score_table(collection) if table is None else table
        if measure is not None:
            table = measure_rows(collection, resolve_measure(collection, measure, table=table), table)
    return report_topics(collection, qrels, table)


def report_topics(collection: Collection, qrels: pd.DataFrame | None, rows: pd.DataFrame | None) -> list[str]:
    """The topic set of a collection (docs/measures/index.md, Scores) from what was read of it: the topics of its
    `qrels` with a relevant document or, without qrels, the topics of its score table's `rows` (those of the
    report's measure). An error when it is empty."""
    if qrels is not None:
        topics = topic_set(qrels)
    else:
        topics = natural_sort(rows["topic"].unique()) if rows is not None else []
    if not topics and collection.qrels is not None:
        raise no_relevant_documents(collection.qrels)
    return topics


def no_relevant_documents(qrels: Path) -> InputFormatError:
    return InputFormatError(
        qrels,
        "no topic has a relevant document (relevance > 0), so there is nothing to evaluate",
        expected="at least one judgment with relevance ≥ 1",
    )


def require_common_topics(
    path: Path, found: Iterable[str], topics: Iterable[str], qrels: Path | None, system: str | None = None
) -> None:
    """A run (or scores of a system) sharing no topic with the topic set is an error, not all zeros:
    it is almost always a run of another collection, or the wrong qrels file."""
    found, topics = set(map(str, found)), set(topics)
    if found and topics and not found & topics:
        whose = f"the {len(found)} topic(s) of system {system!r}" if system else f"its {len(found)} topic(s)"
        raise RiskReportError(
            f"{path}: none of {whose} ({_preview(found)}) is among the {len(topics)} topics of "
            f"{qrels.name if qrels else 'the collection'} with a relevant document ({_preview(topics)}). Is it a run "
            "of another collection, or the wrong qrels file? Remove it, or use the qrels it was made for."
        )


def _preview(values: Iterable[str], limit: int = 5) -> str:
    values = natural_sort(values)
    return ", ".join(values[:limit]) + (", …" if len(values) > limit else "")


def natural_sort(values: Iterable[str]) -> list[str]:
    values = list(values)
    if all(str(v).isdigit() for v in values):
        return sorted(values, key=int)
    return sorted(values)


def collection_topic_set(collection: Collection, present: Iterable[str]) -> tuple[list[str], set[str]]:
    """The topic set (docs/measures/index.md, Scores) and the judged topics: from the qrels, or, without qrels, the topics scored."""
    if collection.qrels is not None:
        topics, judged = qrels_topics(collection.qrels)
        if not topics:
            raise no_relevant_documents(collection.qrels)
        return topics, judged
    topics = natural_sort(pd.unique(pd.Series(list(present), dtype=object)))
    if not topics:
        raise InputFormatError(
            collection.scores or collection.path,
            "no topic has a score, so there is nothing to evaluate",
            expected="rows system,topic,score",
        )
    return topics, set(topics)
