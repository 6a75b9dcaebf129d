"""`Judged@k` natively: the share of a run's first k documents that the qrels judge (any grade).

Equal to ir_measures' `judged` provider (OpenNIR's judgment rate), vectorised: documents ranked by
score descending, equal scores by docno *ascending* (that provider's order, kept so the values do not
change); the denominator is k, or the number of documents the run ranks for the topic when it ranks
fewer (all of them without a cutoff); a run topic is scored when the qrels judge it at all. riskreport
reports it beside a measure at that measure's cutoff (`evaluation.judged_fraction`).
"""

from __future__ import annotations

import numpy as np
from ir_measures import measures, providers
from ir_measures.providers.base import NOT_PROVIDED, Any
from ir_measures.util import QrelsConverter

from riskreport.measures.ranked import NativeEvaluator, rank_run, run_arrays, text_list


class NativeJudgedProvider(providers.Provider):
    """Judged@k in numpy."""

    NAME = "riskreport_judged"
    SUPPORTED_MEASURES = [measures._Judged(cutoff=Any())]

    def _evaluator(self, measure_list, qrels):
        table = QrelsConverter(qrels).as_pd_dataframe()
        topics = text_list(table["query_id"])
        judged = dict.fromkeys(zip(topics, text_list(table["doc_id"])), 1.0)
        return NativeJudgedEvaluator(list(measure_list), judged, set(topics))


class NativeJudgedEvaluator(NativeEvaluator):
    def __init__(self, measure_list, judged: dict, qrels_topics: set[str]):
        super().__init__(measure_list, qrels_topics)
        self.judged = judged

    def topic_values(self, run):
        arrays = run_arrays(run)
        for measure in self.measures:
            depth = None if measure["cutoff"] is NOT_PROVIDED else int(measure["cutoff"])
            ranked = rank_run(*arrays, depth, docnos_descending=False)
            count = np.bincount(ranked.topic, ranked.lookup(self.judged), minlength=len(ranked.topics))
            ranked_docs = np.bincount(ranked.topic, minlength=len(ranked.topics))
            scored = np.flatnonzero([topic in self.qrel_qids for topic in ranked.topics.tolist()])
            yield measure, [str(t) for t in ranked.topics[scored]], (count[scored] / ranked_docs[scored]).tolist()


NATIVE = NativeJudgedProvider()
providers.register(NATIVE)
