"""Run files evaluated with `ir_measures`, in parallel over runs, cached on disk.

The cache is keyed by the *content* of the qrels and the run (SHA-256), the canonical
measure string and the ir_measures version, so a changed file is always re-evaluated. Each
entry carries its key and a checksum of its content: a truncated, edited or misplaced entry
is a miss (recomputed and rewritten, with a warning naming the file), never served.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import ir_measures
import pandas as pd

from riskreport.errors import RiskReportError
from riskreport.io.cache import Cache, cache_key
from riskreport.io.processes import exit_with_parent, ignore_interrupts
from riskreport.io.provenance import file_digest
from riskreport.io.trec import read_run
from riskreport.measures.measure_names import canonical_measure, gdeval_provider, measure_pipeline
from riskreport.measures.topics import no_relevant_documents, parsed_qrels, require_common_topics, topics_of_qrels
from riskreport.progress import Progress

CACHE_FORMAT = 3


def evaluate_runs(
    qrels_path: Path,
    runs: dict[str, Path],
    measures: list[str],
    *,
    jobs: int | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: Progress | None = None,
) -> dict[str, RunScores]:
    """Evaluate run files against one qrels file: measure -> RunScores (raw, before the topic set)."""
    measures = [canonical_measure(m) for m in measures]
    cache = ScoreCache(Path(cache_dir) if cache_dir else None) if use_cache else None
    qrels_digest = file_digest(qrels_path)
    results: dict[str, dict] = {}
    todo: dict[str, tuple[Path, str]] = {}
    for system, path in runs.items():
        run_digest = file_digest(path)
        cached = cache.get_all(qrels_digest, run_digest, measures) if cache else None
        if cached is not None:
            results[system] = cached
        else:
            todo[system] = (path, run_digest)
    if progress:
        progress(f"{len(runs)} run(s): {len(runs) - len(todo)} cached, {len(todo)} to evaluate")
    topics = list(topics_of_qrels(str(qrels_path), qrels_digest)[0])
    if not topics:
        raise no_relevant_documents(qrels_path)
    if todo:
        qrels = parsed_qrels(str(qrels_path), qrels_digest)
        # Only topic-set topics are scored (docs/measures/index.md, Scores); topics judged all non-relevant are left out, which also
        # avoids a pytrec_eval segfault on topics whose only judgments are negative (e.g. spam -2).
        qrels = qrels[qrels["query_id"].isin(topics)]
        for system, result in _evaluate_files(qrels, {s: p for s, (p, _) in todo.items()}, measures, jobs, progress):
            results[system] = result
            if cache:
                cache.put_all(qrels_digest, todo[system][1], result)
    for system, path in runs.items():
        require_common_topics(path, results[system]["run_topics"], topics, qrels_path)
    return {m: RunScores.from_results(m, {s: results[s] for s in runs}) for m in measures}


@dataclass(frozen=True)
class RunScores:
    """Raw per-topic values of runs for one measure: `system, topic, score` and the topics each run has."""

    measure: str
    values: pd.DataFrame
    run_topics: pd.DataFrame

    @classmethod
    def from_results(cls, measure: str, results: dict[str, dict]) -> RunScores:
        values = pd.DataFrame(
            [(s, t, v) for s, r in results.items() for t, v in zip(*r[measure])], columns=["system", "topic", "score"]
        )
        topics = pd.DataFrame(
            [(s, t) for s, r in results.items() for t in r["run_topics"]], columns=["system", "topic"]
        )
        return cls(measure, values, topics)


def _evaluate_files(
    qrels: pd.DataFrame, runs: dict[str, Path], measures: list[str], jobs: int | None, progress: Progress | None
):
    """Yield (system, result) for each run, in worker processes when there is more than one run."""
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(runs)))
    if jobs == 1:
        _init_worker(qrels, measures, worker=False)
        for done, (system, path) in enumerate(runs.items(), start=1):
            yield system, _evaluate_file(path)
            if progress:
                progress(f"evaluated {done}/{len(runs)}: {system}")
        return
    with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(qrels, measures)) as pool:
        futures = {pool.submit(_evaluate_file, path): system for system, path in runs.items()}
        for done, future in enumerate(as_completed(futures), start=1):
            system = futures[future]
            try:
                result = future.result()
            except BaseException as error:
                for other in futures:
                    other.cancel()
                if isinstance(error, BrokenProcessPool):  # a worker died (e.g. a crash inside pytrec_eval)
                    raise RiskReportError(
                        f"an evaluation process died while evaluating {runs[system]} "
                        f"({error}); evaluate it alone to see why."
                    ) from None
                raise
            if progress:
                progress(f"evaluated {done}/{len(runs)}: {system}")
            yield system, result


_WORKER: dict = {}


def _init_worker(qrels: pd.DataFrame, measures: list[str], worker: bool = True) -> None:
    if worker:  # a pool process ends with the process that started it (e.g. a batch killed with -9)
        exit_with_parent()
        ignore_interrupts()  # Ctrl-C reaches the whole process group: the parent stops the pool, quietly
    parsed = [ir_measures.parse_measure(m) for m in measures]
    _WORKER["measures"] = dict(zip(parsed, measures))
    evaluator = measure_pipeline().evaluator(parsed, qrels)
    _WORKER["evaluator"] = evaluator
    _WORKER["native"] = all(_is_native(e) for e in getattr(evaluator, "evaluators", [evaluator]))


def _is_native(evaluator) -> bool:
    """riskreport's providers take a run as a table (`query_id, doc_id, score`) at numpy speed."""
    from riskreport.measures import gdeval, judged, rbp

    return isinstance(evaluator, (gdeval.NativeGdevalEvaluator, rbp.NativeRBPEvaluator, judged.NativeJudgedEvaluator))


def _evaluate_file(path: Path) -> dict:
    """Read and check one run, evaluate every measure: {measure: (topics, values), 'run_topics': [...]}"""
    table = read_run(path)
    run: pd.DataFrame | dict[str, dict[str, float]]
    if _WORKER["native"]:
        run = table
        run_topics = set(pd.unique(table["query_id"]).tolist())
    else:  # ir_measures converts a dict far faster than a DataFrame
        nested: dict[str, dict[str, float]] = {}
        for topic, docno, score in zip(table["query_id"].tolist(), table["doc_id"].tolist(), table["score"].tolist()):
            nested.setdefault(topic, {})[docno] = score
        run, run_topics = nested, set(nested)
    out: dict = {m: ([], []) for m in _WORKER["measures"].values()}
    try:
        for measure, topics, values in _native_values(run) if _WORKER["native"] else _metric_values(run):
            topics_out, values_out = out[_WORKER["measures"][measure]]
            for topic, value in zip(topics, values):
                if topic in run_topics:  # some providers also score topics the run lacks
                    topics_out.append(str(topic))
                    values_out.append(float(value))
    except Exception as error:  # noqa: BLE001 - providers raise many kinds (CalledProcessError, ...)
        raise RiskReportError(f"{path}: ir_measures could not evaluate {', '.join(out)} on this run: {error}") from None
    out["run_topics"] = sorted(run_topics)
    return out


def _metric_values(run):
    """(measure, topics, values) of each metric ir_measures yields."""
    for metric in _WORKER["evaluator"].iter_calc(run):
        yield metric.measure, [metric.query_id], [metric.value]


def _native_values(run: pd.DataFrame):
    """(measure, topics, values) of riskreport's own evaluators, the values ir_measures' `iter_calc` yields (a
    measure's values, then its default for each qrels topic it did not score, in topic order) without a `Metric`
    per value: ir_measures hashes a measure by its text, 3 µs, several times for every value it yields."""
    for evaluator in getattr(_WORKER["evaluator"], "evaluators", [_WORKER["evaluator"]]):
        scored = {measure: (topics, values) for measure, topics, values in evaluator.topic_values(run)}
        for measure in evaluator.measures:
            topics, values = scored.get(measure, ([], []))
            missing = sorted(set(evaluator.qrel_qids).difference(topics))
            yield measure, topics + missing, values + [measure.DEFAULT] * len(missing)


class ScoreCache:
    """Per-topic values of evaluated runs in the riskreport cache (`riskreport.io.cache`, kind `scores`):
    one entry per (qrels, run, measure) content, holding `measure`, `topics`, `values`, `run_topics`."""

    def __init__(self, root: Path | None = None):
        self.cache = Cache("scores", root)

    def _key(self, qrels_digest: str, run_digest: str, measure: str) -> str:
        return cache_key(
            "scores",
            format=CACHE_FORMAT,
            ir_measures=ir_measures.__version__,
            gdeval=gdeval_provider(),  # the two gdeval providers differ in rounding
            qrels=qrels_digest,
            run=run_digest,
            measure=measure,
        )

    def get_all(self, qrels_digest: str, run_digest: str, measures: list[str]) -> dict | None:
        result: dict = {}
        for measure in measures:
            entry = self.cache.get(self._key(qrels_digest, run_digest, measure))
            if not _whole(entry, measure):
                return None
            result[measure] = (entry["topics"], entry["values"])
            result["run_topics"] = entry["run_topics"]
        return result

    def put_all(self, qrels_digest: str, run_digest: str, result: dict) -> None:
        for measure, (topics, values) in ((m, e) for m, e in result.items() if m != "run_topics"):
            self.cache.put(
                self._key(qrels_digest, run_digest, measure),
                {
                    "measure": measure,
                    "topics": list(topics),
                    "values": [float(v) for v in values],
                    "run_topics": list(result["run_topics"]),
                },
            )


def _whole(entry: Any, measure: str) -> TypeGuard[dict]:
    return (
        isinstance(entry, dict)
        and entry.get("measure") == measure
        and len(entry.get("topics", ())) == len(entry.get("values", ()))
        and "run_topics" in entry
    )
