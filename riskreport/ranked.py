"""A run's ranked lists as flat numpy arrays: the shared core of riskreport's native measures.

One convention for every native measure (`riskreport.gdeval`, `riskreport.rbp`) and for the
per-rank gains of the Bayesian rank model (`riskreport.bayes.rbp_rank_gains`): documents are
ranked per topic by score descending, equal scores by docno descending (byte order; gdeval's
`runOrder`, SPEC §1); the run file's own rank column is ignored. Everything is vectorised over
the rows of a run: no Python loop over topics or tied groups.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


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

    def head(self, depth: int | None) -> "RankedRun":
        """The first `depth` documents of each topic (all of them for None)."""
        if depth is None:
            return self
        keep = self.rank < depth
        return RankedRun(self.topics, self.topic[keep], self.docno[keep], self.score[keep], self.rank[keep])

    def tie_groups(self) -> np.ndarray:
        """Per row, the id (0, 1, ...) of its run of equal scores within its topic."""
        new = np.r_[True, (self.topic[1:] != self.topic[:-1]) | (self.score[1:] != self.score[:-1])]
        return np.cumsum(new) - 1

    def lookup(self, judgments: dict[tuple[str, str], float], default: float = 0) -> np.ndarray:
        """Per row, `judgments[(topic, docno)]`, `default` for a document the judgments do not hold."""
        names = self.topics[self.topic]
        return np.fromiter((judgments.get(key, default) for key in zip(names.tolist(), self.docno.tolist())),
                           dtype=float, count=len(names))


def rank_run(topics: np.ndarray, docnos: np.ndarray, scores: np.ndarray) -> RankedRun:
    """Sort a run's rows by topic, score descending, docno descending; number the ranks per topic."""
    codes, names = pd.factorize(np.asarray(topics, dtype=object))
    scores = np.asarray(scores, dtype=float)
    docnos = np.asarray(docnos, dtype=object)
    order = np.lexsort((-scores, codes))
    codes, scores, docnos = codes[order], scores[order], docnos[order]
    same = (codes[1:] == codes[:-1]) & (scores[1:] == scores[:-1])
    if same.any():
        docnos = _docnos_descending_within_ties(codes, scores, docnos, same)
    starts = np.r_[0, np.flatnonzero(np.diff(codes)) + 1] if len(codes) else np.zeros(0, dtype=int)
    rank = np.arange(len(codes)) - np.repeat(starts, np.diff(np.r_[starts, len(codes)]))
    return RankedRun(np.asarray(names, dtype=object), codes, docnos, scores, rank)


def _docnos_descending_within_ties(codes: np.ndarray, scores: np.ndarray, docnos: np.ndarray,
                                   same: np.ndarray) -> np.ndarray:
    """Reorder docnos descending inside each run of equal (topic, score); only tied rows are sorted."""
    tied = np.r_[same, False] | np.r_[False, same]                    # rows in a group of two or more
    rows = np.flatnonzero(tied)
    group = np.cumsum(np.r_[True, ~same])[rows]                       # group id of each tied row
    key = pd.factorize(docnos[rows], sort=True)[0]                    # str order = UTF-8 byte order
    docnos = docnos.copy()
    docnos[rows] = docnos[rows][np.lexsort((-key, group))]
    return docnos


def run_arrays(run) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(topic, docno, score) arrays of a run given as ir_measures accepts it (dict of dicts, DataFrame, ...)."""
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
    table = run
    return (table["query_id"].astype(str).to_numpy(dtype=object), table["doc_id"].astype(str).to_numpy(dtype=object),
            table["score"].to_numpy(dtype=float))
