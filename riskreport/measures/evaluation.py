"""Per-topic effectiveness with `ir_measures`, in parallel over runs, cached on disk.

The score matrix of docs/measures/index.md, Scores: topics are those of the qrels with at least one relevant
document; a run lacking such a topic scores 0 on it (as `trec_eval -c` / `gdeval -c`)
and is reported; run topics absent from the qrels are dropped with a warning.

The cache is keyed by the *content* of the qrels and the run (SHA-256), the canonical
measure string and the ir_measures version, so a changed file is always re-evaluated. Each
entry carries its key and a checksum of its content: a truncated, edited or misplaced entry
is a miss (recomputed and rewritten, with a warning naming the file), never served.
"""
from __future__ import annotations

import functools
import os
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import ir_measures
import pandas as pd

from riskreport.io.cache import Cache, cache_key, default_cache_dir  # noqa: F401 - default_cache_dir: public here before
from riskreport.io.collection import Collection
from riskreport.errors import InputFormatError, ParameterError, RiskReportError, UnknownNameError
from riskreport.io.processes import exit_with_parent
from riskreport.io.provenance import file_digest
from riskreport.io.trec import read_qrels, read_run, read_scores

CACHE_FORMAT = 3
Progress = Callable[[str], None]   # how long work reports what it is doing (one line of text at a time)


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


def gdeval_provider() -> str:
    """Which implementation computes gdeval's ERR@k and nDCG(dcg='exp-log2')@k.

    `native` (default): `riskreport.measures.gdeval`, numpy, full precision; `perl`: ir_measures' gdeval.pl
    provider (values rounded to 5 decimals), chosen with `RISKREPORT_GDEVAL=perl`.
    """
    choice = os.environ.get("RISKREPORT_GDEVAL", "native").strip().lower() or "native"
    if choice not in ("native", "perl"):
        raise RiskReportError(f"RISKREPORT_GDEVAL={choice!r}: expected native (the default) or perl.")
    return choice


def native_providers() -> list:
    """riskreport's own ir_measures providers, in the order they are tried: gdeval's ERR and
    nDCG(dcg='exp-log2') (unless `RISKREPORT_GDEVAL=perl`), RBP and Judged."""
    from riskreport.measures import gdeval
    from riskreport.measures import judged
    from riskreport.measures import rbp
    return ([] if gdeval_provider() == "perl" else [gdeval.NATIVE]) + [rbp.NATIVE, judged.NATIVE]


def measure_pipeline():
    """The ir_measures providers riskreport evaluates with: its native ones first (`native_providers`),
    then ir_measures' own, in ir_measures' order."""
    from ir_measures import providers
    return providers.FallbackProvider(native_providers() + list(ir_measures.DefaultPipeline.providers))


SCORE = "score"   # the label of a score table's values when neither the table nor the user names a measure


def canonical_measure(measure: str) -> str:
    """The canonical ir_measures string of `measure`, every parameter given kept, or a clear error.

    ir_measures' own string leaves out parameters equal to their default (`RBP(p=0.8)` prints
    as `RBP`); a report's labels keep what the user wrote. `score`, the label of an unnamed
    score column, is returned as it is.

    >>> canonical_measure("RBP(p=0.8)"), canonical_measure("nDCG@10"), canonical_measure("score")
    ('RBP(p=0.8)', 'nDCG@10', 'score')
    """
    text = str(measure).strip()
    if text == SCORE:
        return SCORE
    try:
        parsed = ir_measures.parse_measure(text)
    except (ValueError, NameError, SyntaxError, TypeError, AttributeError) as error:
        raise UnknownNameError(
            "measure", text, ["ERR@20", "nDCG@10", "nDCG(dcg='exp-log2')@20", "AP", "P@10", "RR",
                              "RBP(p=0.8)", "Judged@10"],
            hint=f"ir_measures could not parse it ({error}); any measure string ir_measures parses works.") from None
    return _measure_string(parsed)


def _measure_string(parsed) -> str:
    """ir_measures' `Measure.__repr__` without its omission of parameters equal to their default."""
    def value(v):
        return "{" + ",".join(f"{k}:{x}" for k, x in sorted(v.items()) if k != x) + "}" if isinstance(v, dict) else repr(v)
    params = ",".join(f"{k}={value(v)}" for k, v in parsed.params.items() if k != parsed.AT_PARAM)
    text = f"{parsed.__name__}({params})" if params else parsed.__name__
    return f"{text}@{parsed.params[parsed.AT_PARAM]}" if parsed.AT_PARAM in parsed.params else text


def resolve_measure(collection: Collection, measure: str | None = None, fallback: str = "nDCG@10") -> str:
    """The measure a report on `collection` uses, and its label.

    Given: the label of a score table's rows as it is (a score-table collection may name any
    measure), else its canonical ir_measures string. Not given: the collection's default
    (collection.toml); else, for a collection of score tables only, the one measure its table
    holds (`score` when it has no `measure` column), and an error naming them when it holds
    several; else `fallback`.
    """
    tables_only = not collection.runs and not collection.instances and collection.scores is not None
    labels = score_table_measures(collection) if tables_only else []
    if measure is None:
        measure = collection.default_measure
    if measure is None:
        if not labels:
            return canonical_measure(fallback)
        if len(labels) > 1:
            raise ParameterError(f"{collection.scores} holds scores of {len(labels)} measures ({', '.join(labels)}): "
                                 "choose one with --measure (or `measure` in collection.toml).")
        return labels[0]
    if str(measure).strip() in labels:
        return str(measure).strip()
    try:
        return canonical_measure(measure)
    except UnknownNameError as error:
        if not labels:
            raise
        raise UnknownNameError("measure", str(measure), labels, hint=f"(the measures of {collection.scores})") from error


def score_table_measures(collection: Collection) -> list[str]:
    """The measures a collection's score table holds: its `measure` labels, rows without one
    counted as the collection's default measure, else as `score`."""
    if collection.scores is None:
        return []
    labels = _score_table(collection)["measure"].unique().tolist()
    blank = canonical_measure(collection.default_measure) if collection.default_measure else SCORE
    return list(dict.fromkeys(blank if label == "" else label for label in labels))


def judged_measure(measure: str, default_depth: int = 1000) -> str:
    """`Judged@k` at the cutoff of `measure` (its rank depth when it has none)."""
    cutoff = ir_measures.parse_measure(measure).params.get("cutoff") or default_depth
    return f"Judged@{cutoff}"


def topic_set(qrels: pd.DataFrame) -> list[str]:
    """Topics of the qrels with at least one relevant document, in natural order."""
    return natural_sort(qrels.loc[qrels["relevance"] > 0, "query_id"].unique())


def qrels_topics(path: str | Path) -> tuple[list[str], set[str]]:
    """(topic set, judged topics) of a qrels file; parsed once per content in a process."""
    topics, judged = _qrels_topics(str(path), file_digest(Path(path)))
    return list(topics), set(judged)


@functools.lru_cache(maxsize=16)
def _qrels_topics(path: str, digest: str) -> tuple[tuple[str, ...], frozenset]:
    qrels = read_qrels(path)
    return tuple(topic_set(qrels)), frozenset(qrels["query_id"])


def collection_topics(collection: Collection, measure: str | None = None) -> list[str]:
    """The topic set of a collection (docs/measures/index.md, Scores): qrels topics with a relevant document or, without
    qrels, the topics of scores.csv (rows of `measure` when given). An error when it is empty."""
    if collection.qrels is not None:
        topics = qrels_topics(collection.qrels)[0]
    else:
        table = _score_table(collection)
        if measure is not None:
            table = table[table["measure"].isin(measure_labels(collection, resolve_measure(collection, measure)))]
        topics = natural_sort(table["topic"].unique())
    if not topics and collection.qrels is not None:
        raise no_relevant_documents(collection.qrels)
    return topics


def empty_instances_folder(collection: Collection, system: str) -> InputFormatError:
    return InputFormatError(collection.path / "instances" / system, "the folder holds no run files",
                            expected="one run file per instance, e.g. instances/<system>/1.run.gz")


def no_relevant_documents(qrels: Path) -> InputFormatError:
    return InputFormatError(qrels, "no topic has a relevant document (relevance > 0), so there is nothing to evaluate",
                            expected="at least one judgment with relevance ≥ 1")


def require_common_topics(path: Path, found: Iterable[str], topics: Iterable[str], qrels: Path | None,
                          system: str | None = None) -> None:
    """A run (or scores of a system) sharing no topic with the topic set is an error, not all zeros:
    it is almost always a run of another collection, or the wrong qrels file."""
    found, topics = set(map(str, found)), set(topics)
    if found and topics and not found & topics:
        whose = f"the {len(found)} topic(s) of system {system!r}" if system else f"its {len(found)} topic(s)"
        raise RiskReportError(
            f"{path}: none of {whose} ({_preview(found)}) is among the {len(topics)} topics of "
            f"{qrels.name if qrels else 'the collection'} with a relevant document ({_preview(topics)}). Is it a run "
            "of another collection, or the wrong qrels file? Remove it, or use the qrels it was made for.")


def _preview(values: Iterable[str], limit: int = 5) -> str:
    values = natural_sort(values)
    return ", ".join(values[:limit]) + (", …" if len(values) > limit else "")


def natural_sort(values: Iterable[str]) -> list[str]:
    values = list(values)
    if all(str(v).isdigit() for v in values):
        return sorted(values, key=int)
    return sorted(values)


def evaluate(collection: Collection, measure: str, systems: Iterable[str] | None = None, *,
             jobs: int | None = None, cache_dir: str | Path | None = None, use_cache: bool = True,
             progress: Progress | None = None) -> TopicScores:
    """Per-topic `measure` of every (or the given) deterministic system of `collection`.

    Runs are evaluated with ir_measures in `jobs` processes (default: all cores); results
    come from, and go to, the on-disk cache unless `use_cache=False`.

    >>> scores = evaluate(load_collection("demo"), "nDCG@10")   # doctest: +SKIP
    >>> scores.matrix().mean(axis=1)                            # doctest: +SKIP
    """
    measure = resolve_measure(collection, measure)
    known = available_systems(collection, measure)
    wanted = list(known) if systems is None else list(dict.fromkeys(systems))   # a name given twice counts once
    for system in wanted:
        if system not in known:
            raise UnknownNameError("system", system, list(known))
    parts = []
    run_systems = [s for s in wanted if known[s] == "run"]
    if run_systems:
        parts.append(evaluate_runs(collection.qrels, {s: collection.runs[s] for s in run_systems}, [measure],
                                   jobs=jobs, cache_dir=cache_dir, use_cache=use_cache, progress=progress)[measure])
    table_systems = [s for s in wanted if known[s] == "scores"]
    if table_systems:
        parts.append(_scores_from_table(collection, measure, table_systems))
    return _assemble(parts, collection, wanted)


def available_systems(collection: Collection, measure: str | None = None,
                      instances: bool = False) -> dict[str, str]:
    """System id -> source of the systems of a collection.

    Sources: `run` (runs/), `scores` (scores.csv, one instance), and with `instances=True` also
    the non-deterministic systems: `instances` (instances/<system>/) and `scores-instances`
    (scores.csv with several instances).
    """
    systems = {s: "run" for s in collection.runs}
    if instances:
        for system in collection.instances:
            if system in systems:
                raise InputFormatError(collection.path / "instances" / system,
                                       f"system {system!r} has both runs/{system} and instances/{system}/",
                                       expected="a system either in runs/ or in instances/")
            if not collection.instances[system]:
                raise empty_instances_folder(collection, system)
            systems[system] = "instances"
    if collection.scores is not None:
        table = _score_table(collection)
        if measure is not None:
            table = table[table["measure"].isin(measure_labels(collection, measure))]
        for system, count in table.groupby("system")["instance"].nunique().items():
            if system in systems:
                raise InputFormatError(collection.scores, f"system {system!r} has both a run file and scores")
            if count <= 1:
                systems[system] = "scores"
            elif instances:
                systems[system] = "scores-instances"
    return dict(sorted(systems.items(), key=lambda kv: kv[0].lower()))


def evaluate_runs(qrels_path: Path, runs: dict[str, Path], measures: list[str], *, jobs: int | None = None,
                  cache_dir: str | Path | None = None, use_cache: bool = True,
                  progress: Progress | None = None) -> dict[str, "RunScores"]:
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
    topics = list(_qrels_topics(str(qrels_path), qrels_digest)[0])
    if not topics:
        raise no_relevant_documents(qrels_path)
    if todo:
        qrels = read_qrels(qrels_path)
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
    def from_results(cls, measure: str, results: dict[str, dict]) -> "RunScores":
        values = pd.DataFrame(
            [(s, t, v) for s, r in results.items() for t, v in zip(*r[measure])],
            columns=["system", "topic", "score"])
        topics = pd.DataFrame([(s, t) for s, r in results.items() for t in r["run_topics"]],
                              columns=["system", "topic"])
        return cls(measure, values, topics)


def _evaluate_files(qrels: pd.DataFrame, runs: dict[str, Path], measures: list[str], jobs: int | None,
                    progress: Progress | None):
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
                if isinstance(error, BrokenProcessPool):   # a worker died (e.g. a crash inside pytrec_eval)
                    raise RiskReportError(f"an evaluation process died while evaluating {runs[system]} "
                                          f"({error}); evaluate it alone to see why.") from None
                raise
            if progress:
                progress(f"evaluated {done}/{len(runs)}: {system}")
            yield system, result


_WORKER: dict = {}


def _init_worker(qrels: pd.DataFrame, measures: list[str], worker: bool = True) -> None:
    if worker:   # a pool process ends with the process that started it (e.g. a batch killed with -9)
        exit_with_parent()
    parsed = [ir_measures.parse_measure(m) for m in measures]
    _WORKER["measures"] = dict(zip(parsed, measures))
    evaluator = measure_pipeline().evaluator(parsed, qrels)
    _WORKER["evaluator"] = evaluator
    _WORKER["native"] = all(_is_native(e) for e in getattr(evaluator, "evaluators", [evaluator]))


def _is_native(evaluator) -> bool:
    """riskreport's providers take a run as a table (`query_id, doc_id, score`) at numpy speed."""
    from riskreport.measures import gdeval
    from riskreport.measures import judged
    from riskreport.measures import rbp
    return isinstance(evaluator, (gdeval.NativeGdevalEvaluator, rbp.NativeRBPEvaluator, judged.NativeJudgedEvaluator))


def _evaluate_file(path: Path) -> dict:
    """Read and check one run, evaluate every measure: {measure: (topics, values), 'run_topics': [...]}"""
    table = read_run(path)
    if _WORKER["native"]:
        run = table
        run_topics = set(pd.unique(table["query_id"]).tolist())
    else:                                       # ir_measures converts a dict far faster than a DataFrame
        run: dict[str, dict[str, float]] = {}
        for topic, docno, score in zip(table["query_id"].tolist(), table["doc_id"].tolist(), table["score"].tolist()):
            run.setdefault(topic, {})[docno] = score
        run_topics = set(run)
    out: dict = {m: ([], []) for m in _WORKER["measures"].values()}
    try:
        for metric in _WORKER["evaluator"].iter_calc(run):
            if metric.query_id not in run_topics:  # some providers also score topics the run lacks
                continue
            topics, values = out[_WORKER["measures"][metric.measure]]
            topics.append(str(metric.query_id))
            values.append(float(metric.value))
    except Exception as error:  # ir_measures providers raise many kinds (CalledProcessError, ValueError, ...)
        raise RiskReportError(f"{path}: ir_measures could not evaluate {', '.join(out)} on this run: {error}") from None
    out["run_topics"] = sorted(run_topics)
    return out


class ScoreCache:
    """Per-topic values of evaluated runs in the riskreport cache (`riskreport.io.cache`, kind `scores`):
    one entry per (qrels, run, measure) content, holding `measure`, `topics`, `values`, `run_topics`."""

    def __init__(self, root: Path | None = None):
        self.cache = Cache("scores", root)

    def _key(self, qrels_digest: str, run_digest: str, measure: str) -> str:
        return cache_key("scores", format=CACHE_FORMAT, ir_measures=ir_measures.__version__,
                         gdeval=gdeval_provider(),       # the two gdeval providers differ in rounding
                         qrels=qrels_digest, run=run_digest, measure=measure)

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
            self.cache.put(self._key(qrels_digest, run_digest, measure),
                           {"measure": measure, "topics": list(topics), "values": [float(v) for v in values],
                            "run_topics": list(result["run_topics"])})


def _whole(entry, measure: str) -> bool:
    return (isinstance(entry, dict) and entry.get("measure") == measure
            and len(entry.get("topics", ())) == len(entry.get("values", ())) and "run_topics" in entry)


def _score_table(collection: Collection) -> pd.DataFrame:
    """The collection's score table, parsed once per content in a process (a copy: callers may change it)."""
    return _parsed_scores(str(collection.scores), file_digest(collection.scores)).copy()


@functools.lru_cache(maxsize=4)
def _parsed_scores(path: str, digest: str) -> pd.DataFrame:
    return read_scores(path)


def measure_labels(collection: Collection, measure: str) -> set[str]:
    """Labels in the score table's `measure` column that mean `measure`: itself, a label ir_measures
    reads as the same measure (`RBP` for `RBP(p=0.8)`), and '' (rows without a label, which carry
    the collection's default measure, else whichever measure the report names)."""
    labels = {measure}
    default = collection.default_measure
    if default is None or canonical_measure(default) == measure:
        labels.add("")
    if collection.scores is not None and measure != SCORE:
        labels |= {label for label in _score_table(collection)["measure"].unique() if _same_measure(label, measure)}
    return labels


@functools.lru_cache(maxsize=256)
def _same_measure(label: str, measure: str) -> bool:
    try:
        return label != "" and ir_measures.parse_measure(label) == ir_measures.parse_measure(measure)
    except Exception:      # a label ir_measures does not parse (a score table may name any measure)
        return False


def _scores_from_table(collection: Collection, measure: str, systems: list[str]) -> RunScores:
    table = _score_table(collection)
    table = table[table["measure"].isin(measure_labels(collection, measure)) & table["system"].isin(systems)]
    values = table[["system", "topic", "score"]].reset_index(drop=True)
    return RunScores(measure, values, values[["system", "topic"]])


def collection_topic_set(collection: Collection, present: Iterable[str]) -> tuple[list[str], set[str]]:
    """The topic set (docs/measures/index.md, Scores) and the judged topics: from the qrels, or, without qrels, the topics scored."""
    if collection.qrels is not None:
        topics, judged = qrels_topics(collection.qrels)
    else:
        topics = natural_sort(pd.unique(pd.Series(list(present), dtype=object)))
        judged = set(topics)
    if not topics:
        raise no_relevant_documents(collection.qrels)
    return topics, judged


def _assemble(parts: list[RunScores], collection: Collection, systems: list[str]) -> TopicScores:
    """Apply the topic set: fill topics missing from a system with 0, drop topics outside the qrels."""
    measure = parts[0].measure if parts else ""
    values = pd.concat([p.values for p in parts], ignore_index=True)
    present = pd.concat([p.run_topics for p in parts], ignore_index=True)
    topics, judged_topics = collection_topic_set(collection, present["topic"])
    for system, found in present.groupby("system")["topic"]:
        require_common_topics(collection.runs.get(system, collection.scores), found, topics, collection.qrels,
                              None if system in collection.runs else system)
    extra = present[~present["topic"].isin(judged_topics)].drop_duplicates().reset_index(drop=True)
    if not extra.empty:
        warnings.warn(f"{len(extra)} run topic(s) absent from the qrels were dropped "
                      f"(systems: {', '.join(sorted(extra['system'].unique()))})", CollectionWarning)
    grid = pd.MultiIndex.from_product([systems, topics], names=["system", "topic"])
    present_pairs = pd.MultiIndex.from_frame(present[["system", "topic"]].drop_duplicates())
    missing = grid.difference(present_pairs, sort=False).to_frame(index=False)
    scores = (values.drop_duplicates(["system", "topic"]).set_index(["system", "topic"])["score"]
              .reindex(grid, fill_value=0.0).reset_index())
    scores["score"] = scores["score"].astype(float).fillna(0.0)
    order = {t: i for i, t in enumerate(topics)}
    missing = missing.sort_values(["system", "topic"], key=lambda c: c.map(order) if c.name == "topic" else c)
    return TopicScores(measure, scores, missing.reset_index(drop=True), extra)


def judged_fraction(collection: Collection, measure: str, systems: Iterable[str] | None = None,
                    **options) -> pd.DataFrame:
    """Per system the mean ir_measures `Judged@k` at the cutoff of `measure`, over the topics it ranks.

    Unjudged documents count as non-relevant, which biases comparisons against a pooled
    baseline; a low judged fraction warns of that.
    """
    runs = {s: p for s, p in collection.runs.items() if systems is None or s in set(systems)}
    if not runs:
        return pd.DataFrame(columns=["system", "measure", "judged"])
    judged = judged_measure(canonical_measure(measure))
    raw = evaluate_runs(collection.qrels, runs, [judged], **options)[judged].values
    raw = raw[raw["topic"].isin(qrels_topics(collection.qrels)[0])]
    table = raw.groupby("system", sort=False)["score"].mean().rename("judged").reset_index()
    table.insert(1, "measure", judged)
    return table
