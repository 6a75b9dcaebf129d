"""The generative model of the SYNTHETIC demo collection (`riskreport.io.demo` writes it; its design, the sizes
and systems, is `riskreport.io.demo_design`).

Generative model (one topic = `N_DOCS` latent documents):

* graded relevance 0..3 with a topic-dependent share of relevant documents;
* a system ranks the documents of a topic by `skill * relevance + noise`, where the skill is
  the system's mean skill plus a topic difficulty shared by all systems plus a
  system-topic interaction, and the noise is partly shared with the baseline (systems that
  look at the same evidence make the same mistakes);
* qrels come from a pool: the top `POOL_DEPTH` documents of the pooled systems plus a few
  random extra judgements, so systems outside the pool retrieve unjudged documents;
* an instance of a non-deterministic system perturbs that system's mean ranking by an
  instance random effect on its skill (shared by all topics) plus per-document noise. A
  skill offset is calibrated by Monte Carlo so that the population mean difference in
  nDCG@10 against the baseline is the documented `true_effect`.

Pure numpy/pandas on a `numpy.random.Generator`: every random stream is derived from the seed and a
name, so the collection is byte-identical for a given seed.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from riskreport.io.demo_design import (  # noqa: F401 - importable from here as before
    ALPHAS,
    BASELINE,
    CUTOFF,
    DEMO_SYSTEMS,
    DESCRIPTION,
    DIFFICULTY_SD,
    DOCNOS,
    EXTRA_JUDGED,
    FAILURE_SKILL,
    GRADE_PROBS,
    INSTANCE_NOISE,
    INTERACTION_SD,
    MC_INSTANCES,
    MEASURE,
    N_DOCS,
    N_INSTANCES,
    N_TOPICS,
    POOL_DEPTH,
    RICHNESS,
    RUN_DEPTH,
    RUN_TAG,
    SCORE_DECIMALS,
    TITLE,
    TOPIC_IDS,
    DemoSystem,
)


@dataclass(frozen=True)
class DemoCollection:
    """Everything `write_collection` writes: qrels, runs, instances and calibration results."""

    seed: int
    qrels: pd.DataFrame
    runs: dict[str, pd.DataFrame]
    instances: dict[str, list[pd.DataFrame]]
    calibration: dict[str, dict[str, float]] = field(default_factory=dict)


def stream(seed: int, name: str) -> np.random.Generator:
    """An independent random stream per (seed, name), so adding a system shifts no other."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def latent_relevance(rng: np.random.Generator) -> np.ndarray:
    """Graded relevance (topics x documents), mostly 0, at least one relevant doc per topic."""
    richness = rng.uniform(*RICHNESS, size=(N_TOPICS, 1))
    relevant = rng.random((N_TOPICS, N_DOCS)) < richness
    relevant[np.arange(N_TOPICS), rng.integers(N_DOCS, size=N_TOPICS)] = True
    grades = rng.choice([1, 2, 3], size=(N_TOPICS, N_DOCS), p=GRADE_PROBS)
    return np.where(relevant, grades, 0).astype(np.int64)


def topic_skill(system: DemoSystem, difficulty: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per-topic skill: mean skill + shared topic difficulty + system-topic interaction."""
    return system.skill + difficulty + rng.normal(0, INTERACTION_SD, size=N_TOPICS)


def ranking_keys(
    skill: np.ndarray, relevance: np.ndarray, common_noise: np.ndarray, noise_share: float, rng: np.random.Generator
) -> np.ndarray:
    """Ranking score of every document: skill * relevance + (partly shared) unit noise."""
    own_noise = rng.standard_normal(relevance.shape)
    noise = np.sqrt(noise_share) * common_noise + np.sqrt(1 - noise_share) * own_noise
    return skill[:, None] * relevance + noise


def ndcg_at_k(keys: np.ndarray, gains: np.ndarray, k: int = CUTOFF) -> np.ndarray:
    """nDCG@k (trec_eval: linear gains, log2 discount) of rankings by descending `keys`.

    The last axis is documents; `gains` (topics x documents) broadcasts against `keys`
    and also gives the ideal ranking, as the qrels do for trec_eval.
    """
    discount = 1 / np.log2(np.arange(2, k + 2))
    top = np.argpartition(-keys, k, axis=-1)[..., :k]
    top = np.take_along_axis(top, np.argsort(-np.take_along_axis(keys, top, -1), axis=-1), -1)
    dcg = (np.take_along_axis(np.broadcast_to(gains, keys.shape), top, -1) * discount).sum(-1)
    ideal = (-np.sort(-gains, axis=-1)[..., :k] * discount).sum(-1)
    return dcg / ideal


def failure_topics(baseline_ndcg: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of `n` topics, drawn among the half on which the baseline does best."""
    strong = np.argsort(-baseline_ndcg, kind="stable")[: N_TOPICS // 2]
    return np.sort(rng.choice(strong, size=n, replace=False))


def top_documents(keys: np.ndarray, depth: int = RUN_DEPTH) -> tuple[np.ndarray, np.ndarray]:
    """Document indices and keys of the top `depth` documents by descending key."""
    order = np.argsort(-keys, axis=-1, kind="stable")[..., :depth]
    return order, np.take_along_axis(keys, order, -1)


def swap_adjacent(ranking: np.ndarray, system: DemoSystem, rng: np.random.Generator) -> np.ndarray:
    """A near-copy of `ranking`: `system.swaps` adjacent swaps within the top `swap_depth`."""
    copy = ranking.copy()
    n_topics = N_TOPICS if system.swapped_topics is None else system.swapped_topics
    for topic in rng.choice(N_TOPICS, size=n_topics, replace=False):
        for position in rng.integers(system.swap_depth - 1, size=system.swaps):
            copy[topic, [position, position + 1]] = copy[topic, [position + 1, position]]
    return copy


def judged_pool(pooled_rankings: list[np.ndarray], relevance: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Judged documents (topics x documents mask): the pool plus random extra judgements.

    If a topic's pool holds no relevant document, its most relevant document is judged too,
    so every topic of the qrels has a relevant document.
    """
    judged = np.zeros((N_TOPICS, N_DOCS), dtype=bool)
    rows = np.arange(N_TOPICS)[:, None]
    for ranking in pooled_rankings:
        judged[rows, ranking[:, :POOL_DEPTH]] = True
    extra = np.argsort(rng.random((N_TOPICS, N_DOCS)), axis=-1)[:, :EXTRA_JUDGED]
    judged[rows, extra] = True
    unanswered = ~(judged & (relevance > 0)).any(axis=1)
    judged[unanswered, np.argmax(relevance[unanswered], axis=1)] = True
    return judged


def qrels_frame(relevance: np.ndarray, judged: np.ndarray) -> pd.DataFrame:
    """TREC qrels rows `query_id iteration doc_id relevance` of the judged documents."""
    topic, doc = np.nonzero(judged)
    return pd.DataFrame(
        {"query_id": TOPIC_IDS[topic], "iteration": 0, "doc_id": DOCNOS[topic, doc], "relevance": relevance[topic, doc]}
    )


def strictly_decreasing(scores: np.ndarray, decimals: int = SCORE_DECIMALS) -> np.ndarray:
    """Round scores (descending along the last axis) and separate ties by one last digit."""
    step = 10.0**-decimals
    offset = np.arange(scores.shape[-1]) * step
    rounded = np.round(scores, decimals)
    return np.round(np.minimum.accumulate(rounded + offset, axis=-1) - offset, decimals)


def run_frame(ranking: np.ndarray, scores: np.ndarray, missing_topics: tuple[str, ...] = ()) -> pd.DataFrame:
    """TREC run rows `query_id q0 doc_id rank score tag` from per-topic rankings."""
    depth = ranking.shape[1]
    topic = np.repeat(np.arange(N_TOPICS), depth)
    run = pd.DataFrame(
        {
            "query_id": TOPIC_IDS[topic],
            "q0": "Q0",
            "doc_id": DOCNOS[topic, ranking.ravel()],
            "rank": np.tile(np.arange(1, depth + 1), N_TOPICS),
            "score": strictly_decreasing(scores).ravel(),
            "tag": RUN_TAG,
        }
    )
    return run[~run["query_id"].isin(missing_topics)].reset_index(drop=True)


def instance_keys(
    mean_keys: np.ndarray, relevance: np.ndarray, offset: float, skill_sd: float, n: int, rng: np.random.Generator
) -> np.ndarray:
    """Ranking keys of `n` instances (instances x topics x documents) around `mean_keys`.

    Instance i adds `(offset + u_i) * relevance` with u_i ~ N(0, skill_sd) (the instance
    random effect, shared by all topics) and per-document noise (per-topic variation).
    """
    shift = offset + rng.normal(0, skill_sd, size=(n, 1, 1))
    return mean_keys + shift * relevance + INSTANCE_NOISE * rng.standard_normal((n,) + mean_keys.shape)


def calibrate_offset(
    mean_keys: np.ndarray,
    relevance: np.ndarray,
    gains: np.ndarray,
    system: DemoSystem,
    baseline_mean: float,
    rng: np.random.Generator,
) -> tuple[float, float, float]:
    """Skill offset giving the system's `true_effect` over Monte Carlo instances.

    Common random numbers make the effect a monotone-ish step function of the offset,
    solved by bisection. The offset moves only relevant documents, so only they and the
    top `CUTOFF` non-relevant documents can reach the top `CUTOFF`: the search runs on
    those candidates. Returns (offset, Monte Carlo effect, Monte Carlo instance sd).
    """
    zero = instance_keys(mean_keys, relevance, 0.0, system.instance_skill_sd, MC_INSTANCES, rng)
    n_candidates = (relevance > 0).sum(axis=1).max() + CUTOFF
    candidates = np.argpartition(np.where(relevance > 0, -np.inf, -zero), n_candidates, axis=-1)
    candidates = candidates[..., :n_candidates]
    candidate_relevance = np.take_along_axis(np.broadcast_to(relevance, zero.shape), candidates, -1)
    candidate_gains = np.take_along_axis(np.broadcast_to(gains, zero.shape), candidates, -1)
    zero = np.take_along_axis(zero, candidates, -1)

    def effects(offset: float) -> np.ndarray:
        return ndcg_at_k(zero + offset * candidate_relevance, candidate_gains).mean(axis=1) - baseline_mean

    low, high = -2.0, 2.0
    for _ in range(16):
        middle = (low + high) / 2
        low, high = (middle, high) if effects(middle).mean() < system.true_effect else (low, middle)
    offset = (low + high) / 2
    sample = effects(offset)
    return offset, float(sample.mean()), float(sample.std(ddof=1))


def system_keys(seed: int, relevance: np.ndarray) -> dict[str, np.ndarray]:
    """Ranking keys (topics x documents) of every system that is not a near-copy.

    The risky system fails on topics where the baseline (generated first) does well.
    """
    difficulty = stream(seed, "difficulty").normal(0, DIFFICULTY_SD, size=N_TOPICS)
    common_noise = stream(seed, "common-noise").standard_normal((N_TOPICS, N_DOCS))
    keys: dict[str, np.ndarray] = {}
    for name, system in DEMO_SYSTEMS.items():
        if system.swaps == 0:
            rng = stream(seed, name)
            skill = topic_skill(system, difficulty, rng)
            if system.failing_topics:
                baseline_ndcg = ndcg_at_k(keys[BASELINE], relevance)
                skill[failure_topics(baseline_ndcg, system.failing_topics, rng)] = FAILURE_SKILL
            keys[name] = ranking_keys(skill, relevance, common_noise, system.noise_share, rng)
    return keys


def build_collection(seed: int = 2026) -> DemoCollection:
    """The whole demo collection as DataFrames, from `seed` alone."""
    relevance = latent_relevance(stream(seed, "relevance"))

    keys = system_keys(seed, relevance)
    baseline_ranking, baseline_scores = top_documents(keys[BASELINE])
    rankings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name, system in DEMO_SYSTEMS.items():
        if system.swaps:
            rankings[name] = swap_adjacent(baseline_ranking, system, stream(seed, name)), baseline_scores
        elif system.deterministic:
            rankings[name] = top_documents(keys[name])

    pooled = [rankings[name][0] for name, system in DEMO_SYSTEMS.items() if system.pooled]
    judged = judged_pool(pooled, relevance, stream(seed, "pool"))
    gains = np.where(judged, relevance, 0)
    baseline_mean = float(ndcg_at_k(keys[BASELINE], gains).mean())

    runs = {name: run_frame(*rankings[name], DEMO_SYSTEMS[name].missing_topics) for name in rankings}
    instances: dict[str, list[pd.DataFrame]] = {}
    calibration: dict[str, dict[str, float]] = {}
    for name, system in DEMO_SYSTEMS.items():
        if not system.deterministic:
            offset, effect, sd = calibrate_offset(
                keys[name], relevance, gains, system, baseline_mean, stream(seed, f"{name}/calibration")
            )
            drawn = instance_keys(
                keys[name], relevance, offset, system.instance_skill_sd, N_INSTANCES, stream(seed, f"{name}/instances")
            )
            instances[name] = [run_frame(*top_documents(k)) for k in drawn]
            calibration[name] = {"offset": offset, "effect": effect, "sd": sd}
    return DemoCollection(seed, qrels_frame(relevance, judged), runs, instances, calibration)
