"""Rank-biased precision (Moffat & Zobel, TOIS 2008), natively: `RBP(p=0.8)`, `RBP(p=0.8,rel=2)`, `RBP(p=0.9)@100`.

ir_measures parses RBP but in a fresh install cannot evaluate it on a run (its providers are the
optional trectools and cwl_eval packages). This provider computes it in numpy, vectorised over a
run's rows, with ir_measures' definition of the measure and the semantics of its trectools
provider (`TrecEval.get_rbp(p, depth, binary_topical_relevance=False, average_ties=True)`):

    RBP_p = Σ_{k ≤ depth} (1 − p)·p^(k−1)·g_k

- **gain g_k**: without `rel`, graded: the judged grade, negative grades (spam −2) as 0, so RBP
  can exceed 1 with grades above 1 (as trectools); with `rel=r`, binary: 1 when the grade is ≥ r
  (ir_measures: "minimum relevance score to be considered relevant (inclusive)"), else 0. An
  unjudged document gains 0 (RBP's lower bound; no residual is reported).
- **ranking**: score descending; the run file's ranks are ignored. Documents with equal scores
  share the mean discount of the ranks they occupy (trectools' `average_ties`), so the value does
  not depend on how ties are ordered; which tied documents fall within a cutoff `@k` is decided by
  docno descending (`riskreport.measures.ranked`, docs/measures/index.md, Scores). (trectools keeps the input order there, and
  averages a group of equal scores that straddles two topics as one group; cwl_eval, ir_measures'
  other RBP provider, averages no ties and divides by 1 − p^1000.)
- **depth**: the cutoff `@k` when given, else every document of the run.
- **topics**: every run topic that the qrels hold is scored (0 when nothing relevant is retrieved);
  qrels topics that the run lacks get ir_measures' default (0), which riskreport replaces by its
  own rule (docs/measures/index.md, Scores: a run lacking a topic of the topic set scores 0 and is reported).

Registered as the ir_measures provider `riskreport_rbp`; `riskreport.measures.evaluation.measure_pipeline`
puts it ahead of ir_measures' providers, so users only name the measure.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from ir_measures import measures, providers
from ir_measures.providers.base import NOT_PROVIDED, Any
from ir_measures.util import QrelsConverter

from riskreport.measures.ranked import NativeEvaluator, RankedRun, judgment_dict, rank_run, run_arrays, text_list


def discounts(ranked: RankedRun, p: float) -> np.ndarray:
    """(1 − p)·p^rank per row (rank 0-based), averaged over each group of equal scores in a topic."""
    weight = (1 - p) * np.power(p, ranked.rank.astype(float))
    group = ranked.tie_groups()
    if len(group) == 0 or group[-1] == len(group) - 1:  # no ties
        return weight
    return (np.bincount(group, weight) / np.bincount(group))[group]


def gains(grades: np.ndarray, rel: int | None) -> np.ndarray:
    """Gain per grade (NaN: unjudged, gain 0): graded max(grade, 0) without `rel`, else 1 for grade ≥ rel (binary).

    As in ir_measures' providers, negative grades count as 0 before the threshold, so `rel=0` makes
    every judged document relevant, spam included, and no unjudged one.
    """
    grades = np.asarray(grades, dtype=float)
    clipped = np.maximum(np.nan_to_num(grades, nan=0.0), 0)
    return clipped if rel is None else ((clipped >= rel) & ~np.isnan(grades)).astype(float)


def rbp(ranked: RankedRun, judgments: dict, p: float, rel: int | None = None, depth: int | None = None) -> np.ndarray:
    """RBP_p per topic of `ranked.topics` (`judgments`: {(topic, docno): grade}, every judged document)."""
    top = ranked.head(depth)
    return np.bincount(
        top.topic, discounts(top, p) * gains(top.lookup(judgments, np.nan), rel), minlength=len(top.topics)
    )


def rank_gains(ranked: RankedRun, judgments: dict, p: float, depth: int, scale: float = 1.0) -> np.ndarray:
    """Per-rank RBP gains (1 − p)·p^(k−1)·max(grade, 0)/`scale`, topics × `depth` (0 past a topic's last document).

    Unlike `rbp`, tied documents keep their own rank's discount (docno descending): these are
    per-rank observations (BHM-ZOiB-Rank, the thesis 'Inferential Risk Measures', Ch. 4–5; docs/measures/bayesian.md), not a sum.
    """
    top = ranked.head(depth)
    out = np.zeros((len(top.topics), depth))
    out[top.topic, top.rank] = (
        (1 - p) * np.power(p, top.rank.astype(float)) * gains(top.lookup(judgments), None) / scale
    )
    return out


class NativeRBPProvider(providers.Provider):
    """RBP(p)[@k] and RBP(p, rel=r)[@k] in numpy (see the module docstring for the conventions)."""

    NAME = "riskreport_rbp"
    SUPPORTED_MEASURES = [measures._RBP(cutoff=Any(), p=Any(), rel=Any())]

    def _evaluator(self, measure_list, qrels):
        for measure in measure_list:
            if not 0 < measure["p"] < 1:
                raise ValueError(f"{measure}: RBP's persistence p must lie strictly between 0 and 1")
        table = QrelsConverter(qrels).as_pd_dataframe()
        judgments = judgment_dict(table, pd.to_numeric(table["relevance"]).astype(float))
        return NativeRBPEvaluator(list(measure_list), judgments, set(text_list(table["query_id"])))


class NativeRBPEvaluator(NativeEvaluator):
    def __init__(self, measure_list, judgments: dict, qrels_topics: set[str]):
        super().__init__(measure_list, qrels_topics)
        self.judgments = judgments

    def topic_values(self, run):
        arrays = run_arrays(run)
        ranked: dict = {}  # one ranking per cutoff
        for measure in self.measures:
            rel = None if measure["rel"] is NOT_PROVIDED else int(measure["rel"])
            depth = None if measure["cutoff"] is NOT_PROVIDED else int(measure["cutoff"])
            if depth not in ranked:
                ranked[depth] = rank_run(*arrays, depth)
            values = np.asarray(rbp(ranked[depth], self.judgments, float(measure["p"]), rel, depth), dtype=float)
            scored = np.flatnonzero([topic in self.qrel_qids for topic in ranked[depth].topics.tolist()])
            yield measure, [str(t) for t in ranked[depth].topics[scored]], values[scored].tolist()


NATIVE = NativeRBPProvider()
providers.register(NATIVE)
