"""A run's ranked lists as flat numpy arrays: the shared core of riskreport's native measures.

One convention for every native measure (`riskreport.measures.gdeval`, `riskreport.measures.rbp`) and for the
per-rank gains of the Bayesian rank model (`riskreport.bayes.rbp_rank_gains`): documents are
ranked per topic by score descending, equal scores by docno descending (byte order; gdeval's
`runOrder`, docs/measures/index.md, Scores); the run file's own rank column is ignored. Everything is vectorised over
the rows of a run: no Python loop over topics or tied groups.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from ir_measures import Metric, providers


@dataclass(frozen=True)
class RankedRun:
    """Rows of a run in ranking order: topic by topic, each topic's documents best first.

    `topics` holds the topic ids (in order of first appearance); `topic[i]` indexes it, `rank[i]`
    is the 0-based rank of row i within its topic, `score` and `docno` are the row's own.
    """

    topics: np.ndarray
    topic: np.ndarray
    docno: np.ndarray
    score: np.ndarray
    rank: np.ndarray

    def head(self, depth: int | None) -> RankedRun:
        """The first `depth` documents of each topic (all of them for None)."""
        if depth is None:
            return self
        keep = self.rank < depth
        return RankedRun(self.topics, self.topic[keep], self.docno[keep], self.score[keep], self.rank[keep])

    def tie_groups(self) -> np.ndarray:
        """Per row, the id (0, 1, ...) of its run of equal scores within its topic."""
        new = np.r_[True, (self.topic[1:] != self.topic[:-1]) | (self.score[1:] != self.score[:-1])]
        return np.cumsum(new) - 1

    def lookup(self, judgments: Mapping[tuple[str, str], float], default: float = 0) -> np.ndarray:
        """Per row, `judgments[(topic, docno)]`, `default` for a document the judgments do not hold."""
        names = self.topics[self.topic]
        return np.fromiter(
            (judgments.get(key, default) for key in zip(names.tolist(), self.docno.tolist())),
            dtype=float,
            count=len(names),
        )


def rank_run(topics, docnos, scores: np.ndarray, depth: int | None = None, docnos_descending: bool = True) -> RankedRun:
    """Rank a run's rows by topic, score descending, docno descending; keep the first `depth` per topic.

    `topics` and `docnos` are arrays of text (numpy or pandas). A run file is usually written topic
    by topic, best first: then no sort is needed. Equal scores are ordered by docno only where it
    matters, i.e. within the first `depth` ranks of a topic and for the group of equal scores that
    the cutoff cuts through; only the docnos kept become Python strings.
    (`docnos_descending=False` orders equal scores by docno ascending, as ir_measures' Judged provider.)
    """
    codes, names = pd.factorize(topics)
    scores = np.asarray(scores, dtype=float)
    boundary = np.r_[True, codes[1:] != codes[:-1]] if len(codes) else np.zeros(0, dtype=bool)
    in_order = len(codes) == 0 or (
        np.count_nonzero(boundary) == len(names) and not np.any((scores[1:] > scores[:-1]) & ~boundary[1:])
    )
    rows = np.arange(len(codes)) if in_order else np.lexsort((-scores, codes))
    codes, scores = codes[rows], scores[rows]
    rank = _ranks(codes)
    if depth is not None:  # the first `depth`, and the ties of the depth-th score
        last = np.full(len(names), -np.inf)
        at_depth = rank == depth - 1
        last[codes[at_depth]] = scores[at_depth]
        keep = (rank < depth) | (scores == last[codes])
        rows, codes, scores = rows[keep], codes[keep], scores[keep]
        rank = _ranks(codes)
    docnos = np.asarray(docnos[rows] if len(rows) < len(docnos) or not in_order else docnos, dtype=object)
    same = (codes[1:] == codes[:-1]) & (scores[1:] == scores[:-1])
    if same.any():
        docnos = _order_ties(docnos, same, docnos_descending)
    return RankedRun(np.asarray(names, dtype=object), codes, docnos, scores, rank).head(depth)


def _ranks(codes: np.ndarray) -> np.ndarray:
    """0-based position of each row within its run of equal (consecutive) codes."""
    if not len(codes):
        return np.zeros(0, dtype=np.int64)
    starts = np.r_[0, np.flatnonzero(np.diff(codes)) + 1]
    return np.arange(len(codes)) - np.repeat(starts, np.diff(np.r_[starts, len(codes)]))


def _order_ties(docnos: np.ndarray, same: np.ndarray, descending: bool) -> np.ndarray:
    """Reorder docnos (descending or ascending) inside each run of equal (topic, score) rows; `same[i]`
    says row i + 1 ties with row i. Only tied rows are sorted."""
    tied = np.r_[same, False] | np.r_[False, same]  # rows in a group of two or more
    rows = np.flatnonzero(tied)
    group = np.cumsum(np.r_[True, ~same])[rows]  # group id of each tied row
    key = pd.factorize(docnos[rows], sort=True)[0]  # str order = UTF-8 byte order
    docnos = docnos.copy()
    docnos[rows] = docnos[rows][np.lexsort((-key if descending else key, group))]
    return docnos


class NativeEvaluator(providers.Evaluator, ABC):
    """An ir_measures evaluator of riskreport's (gdeval, Judged, RBP): a run's values come a measure at a time as
    lists (`topic_values`), which `riskreport.measures.run_files` takes as they are; `_iter_calc` yields them
    one `Metric` at a time for ir_measures' own callers."""

    @abstractmethod
    def topic_values(self, run) -> Iterator[tuple[Any, list[str], list[float]]]:
        """(measure, topics, values) for each measure, the topics among those of the run that it scores."""

    def _iter_calc(self, run):
        for measure, topics, values in self.topic_values(run):
            for topic, value in zip(topics, values):
                yield Metric(query_id=topic, measure=measure, value=value)


def text_list(column: pd.Series) -> list[str]:
    """A column as a list of Python str: pandas' arrow-backed text yields its values one by one about 20x slower
    than it converts them all at once (1.7 s for a 300,000-line qrels file's two columns)."""
    return column.astype(str).tolist()


def judgment_dict(table: pd.DataFrame, values) -> dict[tuple[str, str], Any]:
    """{(query_id, doc_id): value} of a qrels table, `values` aligned with its rows."""
    return dict(zip(zip(text_list(table["query_id"]), text_list(table["doc_id"])), values.tolist()))


def run_arrays(run) -> tuple[Any, Any, np.ndarray]:
    """(topics, docnos, scores) of a run given as ir_measures accepts it (dict of dicts, DataFrame, ...);
    topics and docnos are arrays of text, kept as they are for a DataFrame (converted only where needed)."""
    if isinstance(run, dict):
        topics, docnos, scores = [], [], []
        for topic, ranking in run.items():
            topics += [str(topic)] * len(ranking)
            docnos += ranking.keys()
            scores += ranking.values()
        return np.asarray(topics, dtype=object), np.asarray(docnos, dtype=object), np.asarray(scores, dtype=float)
    if not isinstance(run, pd.DataFrame):
        from ir_measures.util import RunConverter

        run = RunConverter(run).as_pd_dataframe()
    text = [run[c] if pd.api.types.is_string_dtype(run[c]) else run[c].astype(str) for c in ("query_id", "doc_id")]
    return text[0].array, text[1].array, run["score"].to_numpy(dtype=float)
