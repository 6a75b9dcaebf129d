"""ERR@k and nDCG(dcg='exp-log2')@k exactly as the TREC Web track's gdeval.pl computes them, natively.

gdeval (TREC 2013/2014 Web track; ir_measures ships version 1.2a as its `gdeval` provider) is
the official script of `ERR@20` and `nDCG@20` with exponential gains. This module follows it
line by line, vectorised over topics:

- qrels: only judgments > 0 count (spam −2 and non-relevant 0 are gain 0, like unjudged
  documents); grades above 4 (`$MAX_JUDGMENT`) are an error, as in gdeval.
- a topic is scored only when the qrels give it a judgment > 0 (gdeval's `%seen`);
- ranking: by score descending, ties by docno descending (byte order), as gdeval's `runOrder`;
  the run's own ranks are ignored;
- DCG@k = Σ_{i<k} (2^g_i − 1) / ln(i + 2), nDCG@k = DCG@k / ideal DCG@k, the ideal ranking being
  the topic's judgments > 0 sorted by grade;
- ERR@k = Σ_{i<k} r_i/(i + 1) · Π_{j<i} (1 − r_j), r_i = (2^g_i − 1) / 2^4.

gdeval prints each value with 5 decimals; this provider returns full precision (sums taken in
gdeval's order), so riskreport's URisk agrees with gdeval to the precision gdeval prints.
Registered as the ir_measures provider `riskreport_gdeval`; `riskreport.measures.evaluation` puts it ahead
of ir_measures' Perl provider unless `RISKREPORT_GDEVAL=perl`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from ir_measures import measures, providers
from ir_measures.providers.base import NOT_PROVIDED, Any, Choices
from ir_measures.util import QrelsConverter

from riskreport.measures.ranked import NativeEvaluator, judgment_dict, rank_run, run_arrays, text_list

MAX_JUDGMENT = 4  # gdeval's maximum grade: ERR's gains are divided by 2^4


def ranked_gains(
    topics: np.ndarray, docnos: np.ndarray, scores: np.ndarray, judgments: Mapping[tuple[str, str], int], k: int
) -> tuple[np.ndarray, np.ndarray]:
    """(topic ids, gains matrix topics × k) of a run in gdeval's order, padded with gain 0.

    Rows are ranked by score descending and docno descending (gdeval's `runOrder`, `riskreport.measures.ranked`);
    only the first `k` of each topic are looked up in `judgments` ({(topic, docno): grade > 0}).
    """
    ranked = rank_run(topics, docnos, scores, k)
    gains = np.zeros((len(ranked.topics), k))
    gains[ranked.topic, ranked.rank] = ranked.lookup(judgments)
    return ranked.topics, gains


def dcg(gains: np.ndarray) -> np.ndarray:
    """Σ_i (2^g_i − 1)/ln(i + 2) along the last axis, summed in order (as gdeval's `dcg`)."""
    terms = (np.exp2(gains) - 1) / np.log(np.arange(gains.shape[-1]) + 2)
    return np.cumsum(terms, axis=-1)[..., -1] if gains.shape[-1] else np.zeros(gains.shape[:-1])


def err(gains: np.ndarray) -> np.ndarray:
    """Σ_i r_i/(i + 1)·Π_{j<i}(1 − r_j), r = (2^g − 1)/2^4 (gdeval's `err`), along the last axis."""
    if not gains.shape[-1]:
        return np.zeros(gains.shape[:-1])
    r = (np.exp2(gains) - 1) / 2.0**MAX_JUDGMENT
    decay = np.cumprod(np.concatenate([np.ones(gains.shape[:-1] + (1,)), 1 - r[..., :-1]], axis=-1), axis=-1)
    return np.cumsum(r * decay / (np.arange(gains.shape[-1]) + 1), axis=-1)[..., -1]


class NativeGdevalProvider(providers.Provider):
    """gdeval's ERR@k and nDCG(dcg='exp-log2')@k, computed in numpy (no Perl, full precision)."""

    NAME = "riskreport_gdeval"
    SUPPORTED_MEASURES = [
        measures._nDCG(
            cutoff=Any(required=True), dcg=Choices("exp-log2"), gains=Choices(NOT_PROVIDED), judged_only=Choices(False)
        ),
        measures._ERR(cutoff=Any(required=True)),
    ]

    def _evaluator(self, measure_list, qrels):
        table = QrelsConverter(qrels).as_pd_dataframe()
        grades = pd.to_numeric(table["relevance"])
        if (grades > MAX_JUDGMENT).any():
            raise ValueError(
                f"gdeval's ERR and nDCG take grades up to {MAX_JUDGMENT}; the qrels have {int(grades.max())}"
            )
        positive = table[grades > 0]
        judgments = judgment_dict(positive, pd.to_numeric(positive["relevance"]).astype(int))
        return NativeGdevalEvaluator(list(measure_list), judgments, positive, set(text_list(table["query_id"])))


class NativeGdevalEvaluator(NativeEvaluator):
    def __init__(self, measure_list, judgments: dict, positive: pd.DataFrame, qrels_topics: set[str]):
        super().__init__(measure_list, qrels_topics)  # as every provider: topics a run lacks score the default
        self.judgments = judgments
        self.cutoffs = sorted({m["cutoff"] for m in measure_list})
        ideal = positive.assign(query_id=positive["query_id"].astype(str), grade=pd.to_numeric(positive["relevance"]))
        ideal = ideal.sort_values(["query_id", "grade"], ascending=[True, False], kind="stable")
        self.ideal = {
            k: {
                topic: float(dcg(group["grade"].to_numpy(dtype=float)[:k][None, :])[0])
                for topic, group in ideal.groupby("query_id", sort=False)
            }
            for k in self.cutoffs
        }

    def topic_values(self, run):
        topics, docnos, scores = run_arrays(run)
        if not len(topics):
            return
        for k in self.cutoffs:
            names, gains = ranked_gains(topics, docnos, scores, self.judgments, k)
            scored = np.flatnonzero([name in self.ideal[k] for name in names])
            kept = [str(name) for name in names[scored]]
            values: dict[str | None, np.ndarray] = {"nDCG": dcg(gains), "ERR": err(gains)}  # by measure.NAME
            for measure in self.measures:
                if measure["cutoff"] != k:
                    continue
                value = values[measure.NAME][scored]
                if measure.NAME == "nDCG":
                    value = value / np.array([self.ideal[k][topic] for topic in kept], dtype=float)
                yield measure, kept, value.tolist()


NATIVE = NativeGdevalProvider()
providers.register(NATIVE)
