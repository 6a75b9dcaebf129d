"""Scores coded for a Bayesian model, and what their two-way ANOVA moments predict about the posterior.

`BayesData` holds y with system and topic codes (and ranks for BHM-ZOiB-Rank); `scores_data` codes
a tidy table or a systems × topics matrix, `paired_data` one challenger's topic differences, and
`rbp_rank_gains` the per-rank RBP gains of runs (Benham's thesis 'Inferential Risk Measures',
Ch. 5). `group_strength` tells the sampler how to lay the model out (`sampling.layout`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from riskreport.errors import ParameterError


@dataclass(frozen=True)
class BayesData:
    """Scores in long format, coded for a model: y, system and topic codes, optional rank."""

    y: np.ndarray
    system: np.ndarray  # codes into `systems`
    topic: np.ndarray  # codes into `topics`
    systems: tuple
    topics: tuple
    rank: np.ndarray | None = None
    meta: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.y)

    def digest(self) -> str:
        """SHA-256 of the data (values, codes and labels): part of the cache key of a fit."""
        h = hashlib.sha256()
        for array in (self.y, self.system, self.topic) + ((self.rank,) if self.rank is not None else ()):
            h.update(np.ascontiguousarray(array, dtype=float).tobytes())
        h.update(repr((self.systems, self.topics)).encode())
        return h.hexdigest()

    def ranks(self) -> np.ndarray:
        """The rank of each score (BHM-ZOiB-Rank's covariate); an error when the data has none."""
        if self.rank is None:
            raise ParameterError("BHM-ZOiB-Rank needs per-rank gains: a scores table with a `rank` column.")
        return self.rank


def scores_data(scores: pd.DataFrame, systems=None) -> BayesData:
    """Code a tidy `system, topic, score[, rank]` table (or a systems × topics matrix) for a model.

    `systems` restricts and orders the systems (the model's pool); topics keep their order of appearance.
    """
    if "score" not in scores.columns:  # a matrix: systems x topics
        scores = scores.stack().rename("score").rename_axis(["system", "topic"]).reset_index()
    table = scores.copy()
    table["system"], table["topic"] = table["system"].astype(str), table["topic"].astype(str)
    if systems is not None:
        systems = list(dict.fromkeys(systems))
        missing = sorted(set(systems) - set(table["system"]))
        if missing:
            raise ParameterError(f"No scores for system(s) {', '.join(missing)} in the model's data.")
        table = table[table["system"].isin(systems)]
    else:
        systems = list(dict.fromkeys(table["system"]))
    topics = list(dict.fromkeys(table["topic"]))
    y = table["score"].to_numpy(dtype=float)
    if not np.all(np.isfinite(y)):
        raise ParameterError("The model's scores must be finite numbers.")
    rank = table["rank"].to_numpy(dtype=float) if "rank" in table.columns else None
    return BayesData(
        y=y,
        system=pd.Categorical(table["system"], categories=systems).codes.astype(np.int64),
        topic=pd.Categorical(table["topic"], categories=topics).codes.astype(np.int64),
        systems=tuple(systems),
        topics=tuple(topics),
        rank=rank,
    )


def paired_data(d: np.ndarray, system: str, topics) -> BayesData:
    """Data of a paired model: one challenger's d_j = −l_r(Δ_j) over the topics."""
    d = np.asarray(d, dtype=float)
    return BayesData(
        y=d,
        system=np.zeros(len(d), dtype=np.int64),
        topic=np.arange(len(d)),
        systems=(system,),
        topics=tuple(map(str, topics)),
    )


def anova_moments(data: BayesData) -> tuple[float, float, float] | None:
    """Two-way ANOVA moments of the cell means (ranks averaged): (sd_sys², sd_top², σ²), or None for paired data
    or an incomplete grid. The starting point of the sampler's layout (`group_strength`)."""
    n_sys, n_top = len(data.systems), len(data.topics)
    if n_sys < 2 or n_top < 2:
        return None
    sums, counts = np.zeros((n_sys, n_top)), np.zeros((n_sys, n_top))
    np.add.at(sums, (data.system, data.topic), data.y)
    np.add.at(counts, (data.system, data.topic), 1)
    if np.any(counts == 0):
        return None
    cells = sums / counts
    sys_means, top_means = cells.mean(axis=1), cells.mean(axis=0)
    residual = cells - sys_means[:, None] - top_means[None, :] + cells.mean()
    sigma2 = float((residual**2).sum()) / ((n_sys - 1) * (n_top - 1))
    return (
        max(float(sys_means.var(ddof=1)) - sigma2 / n_top, 0.0),
        max(float(top_means.var(ddof=1)) - sigma2 / n_sys, 0.0),
        sigma2,
    )


def group_strength(data: BayesData) -> tuple[float, float]:
    """How much the data dominate each group's prior: κ = sd² / (sd² + σ²/n), n the scores per group member
    (topics for a system, systems for a topic). κ near 1: each effect is fixed by its data, and the centred
    zero-sum deviations u of `models.build_pymc_model` sample well; near 0 (e.g. topic effects of Eq. 4.5 scores at
    α = 10, sd_top ≪ σ/√S) u = sd·z_u does. (0, 0) without moments."""
    moments = anova_moments(data)
    if moments is None:
        return 0.0, 0.0
    sd_sys2, sd_top2, sigma2 = moments
    noise_sys, noise_top = sigma2 / len(data.topics), sigma2 / len(data.systems)
    return (
        sd_sys2 / (sd_sys2 + noise_sys) if sd_sys2 + noise_sys > 0 else 0.0,
        sd_top2 / (sd_top2 + noise_top) if sd_top2 + noise_top > 0 else 0.0,
    )


def rbp_rank_gains(runs: dict, qrels: pd.DataFrame, topics, p: float = 0.8, depth: int = 10) -> pd.DataFrame:
    """Per-rank RBP gains g_ijk = (1 − p)·p^(k−1)·rel/rel_max of each run (the data of BHM-ZOiB-Rank).

    `runs` maps a system to its `query_id, doc_id, score` table (`trec.read_run`); ranks follow score
    descending, then docno descending (docs/measures/index.md, Scores; `riskreport.measures.ranked`, as the native RBP provider); unjudged,
    non-relevant and spam documents gain 0; a topic a run lacks (or ranks fewer than `depth` documents
    for) has gain 0 at the missing ranks. Tidy `system, topic, rank, score` for ranks 1..`depth` of every
    system and topic.
    """
    if not 0 < p < 1 or depth < 1:
        raise ParameterError(f"RBP gains need 0 < p < 1 and depth ≥ 1, got p = {p!r}, depth = {depth!r}.")
    from riskreport.measures.ranked import rank_run, run_arrays
    from riskreport.measures.rbp import rank_gains

    judgments = dict(
        zip(zip(qrels["query_id"].astype(str), qrels["doc_id"].astype(str)), qrels["relevance"].astype(float))
    )
    top = float(qrels["relevance"].max()) if len(qrels) and qrels["relevance"].max() > 0 else 1.0
    topics = [str(t) for t in topics]
    frames = []
    for system, run in runs.items():
        ranked = rank_run(*run_arrays(run), depth)
        found = rank_gains(ranked, judgments, p, depth, scale=top)
        row = {t: i for i, t in enumerate(ranked.topics.tolist())}
        gains = np.zeros((len(topics), depth))
        present = [i for i, t in enumerate(topics) if t in row]
        gains[present] = found[[row[topics[i]] for i in present]]
        frames.append(
            pd.DataFrame(
                {
                    "system": system,
                    "topic": np.repeat(topics, depth),
                    "rank": np.tile(np.arange(1, depth + 1), len(topics)),
                    "score": gains.reshape(-1),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)[["system", "topic", "rank", "score"]]
