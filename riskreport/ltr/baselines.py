"""Baselines of risk-sensitive learning to rank: a feature of the data, models learned on held-out
queries, or per-query scores of existing runs.

Dinçer, Macdonald & Ounis (SIGIR 2014, §6) learn against one baseline, the ranking by BM25 on the
whole document (MSLR-WEB10K feature 110). Their 2016 paper (§6) holds 2,000 queries out, learns
several baselines on them (GBRT, LambdaMART, a linear model, AdaRank), and learns T*-FARO and
GeoRisk against all of them at once. A baseline here scores documents (`scores`) or gives one
score per query (`per_query`, from runs); `ndcg` turns either into NDCG@k per query.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import ParameterError, RiskReportError, UnknownNameError
from ..io.letor import LetorData, read_run_scores
from .objectives import ndcg_per_query
from .params import LEARNED_MIN_DATA

LEARNED = ("gbrt", "lambdamart", "linear")  # learned baselines this module can pre-learn
LEARNED_NAMES = {"gbrt": "GBRT", "lambdamart": "LambdaMART-b", "linear": "Linear"}


@dataclass(frozen=True)
class Baseline:
    """A named baseline: `scorer(features) -> scores`, or fixed `per_query` NDCG keyed by query id."""

    name: str
    kind: str  # feature, learned or run
    scorer: Callable[[np.ndarray], np.ndarray] | None = None
    per_query: dict = field(default_factory=dict)
    feature: int | None = None

    def ndcg(self, data: LetorData, k: int = 10) -> np.ndarray:
        """NDCG@k of every query of `data` (NaN without a relevant document; a query a run lacks scores 0)."""
        if self.scorer is None:
            valid = np.isfinite(ndcg_per_query(np.zeros(data.n_documents), data.labels, data.bounds, k))
            scores = np.array([self.per_query.get(int(q), 0.0) for q in data.query_ids], dtype=float)
            return np.where(valid, scores, np.nan)
        return ndcg_per_query(self.scorer(data.features), data.labels, data.bounds, k)


def feature_baseline(number: int, name: str | None = None) -> Baseline:
    """The ranking by one feature (numbered as in the LETOR file, from 1), descending; ties in file order."""
    if isinstance(number, bool) or not isinstance(number, (int, np.integer)) or number < 1:
        raise ParameterError(f"A feature baseline needs a feature id ≥ 1 (as in the LETOR file), got {number!r}.")
    column = int(number) - 1

    def scorer(features: np.ndarray) -> np.ndarray:
        return features[:, column].astype(float) if column < features.shape[1] else np.zeros(len(features))

    return Baseline(name or f"feature {number}", "feature", scorer, feature=int(number))


def best_feature(data: LetorData, k: int = 10) -> int:
    """The single feature whose ranking has the best mean NDCG@k on `data` (a stand-in for BM25 when the
    data do not name their features); ties: the lowest id."""
    means = [np.nanmean(feature_baseline(f).ndcg(data, k)) for f in range(1, data.n_features + 1)]
    return int(np.nanargmax(means)) + 1


def parse_baseline(spec: str | int, train: LetorData, k: int = 10) -> Baseline:
    """The single baseline of a report: `feature:N` (or N), or `best` (the best single feature on `train`)."""
    text = str(spec).strip().lower()
    if text == "best":
        number = best_feature(train, k)
        return feature_baseline(number, f"feature {number} (best single feature)")
    digits = text.removeprefix("feature:").strip()
    if not digits.isdigit():
        raise ParameterError(
            f"baseline must be 'feature:<id>' (e.g. feature:110, BM25 of MSLR-WEB10K) or 'best', got {spec!r}."
        )
    return feature_baseline(int(digits))


def hold_out(data: LetorData, share: float | None, seed: int) -> tuple[LetorData, LetorData]:
    """(held-out queries, the rest): a seeded random choice of `params.held_out_queries(n, share)` queries (`share`
    None: the 2016 paper's 20 %, at most its 2,000 queries), for learning baselines (2016 §6)."""
    from .params import held_out_queries

    if share is not None and not 0 < share < 1:
        raise ParameterError(f"held_out must be a share of the training queries between 0 and 1, got {share!r}.")
    n = data.n_queries
    if n < 2:
        raise RiskReportError(f"{data.path}: {n} training query leaves none to learn on after holding queries out.")
    chosen = np.sort(np.random.default_rng(seed).permutation(n)[: held_out_queries(n, share)])
    rest = np.setdiff1d(np.arange(n), chosen)
    return data.select(chosen), data.select(rest)


def learned_baseline(
    kind: str,
    held_out: LetorData,
    seed: int = 2026,
    trees: int = 100,
    leaves: int = 31,
    learning_rate: float = 0.1,
    min_data_in_leaf: int | None = None,
    threads: int = 0,
) -> Baseline:
    """A baseline learned on `held_out`: `gbrt` (LightGBM regression on the labels), `lambdamart` (LightGBM's
    `lambdarank`), or `linear` (ridge regression on standardised features). `min_data_in_leaf` None: LightGBM's
    default 20, at most a tenth of the held-out documents (a few dozen held-out documents can still be split)."""
    if kind not in LEARNED:
        raise UnknownNameError("learned baseline", kind, list(LEARNED))
    if kind == "linear":
        return Baseline(LEARNED_NAMES[kind], "learned", _ridge(held_out.features, held_out.labels))
    import lightgbm as lgb

    min_data = min_data_in_leaf or max(1, min(LEARNED_MIN_DATA, held_out.n_documents // 10))
    params = {
        "objective": "regression" if kind == "gbrt" else "lambdarank",
        "num_leaves": leaves,
        "learning_rate": learning_rate,
        "min_data_in_leaf": min_data,
        "seed": seed,
        "deterministic": True,
        "verbose": -1,
        "num_threads": threads,
    }
    group = None if kind == "gbrt" else held_out.group_sizes
    dataset = lgb.Dataset(held_out.features, held_out.labels, group=group, params={"verbose": -1})
    with lightgbm_errors(f"the learned baseline {LEARNED_NAMES[kind]}", held_out, min_data):
        booster = lgb.train(params, dataset, num_boost_round=trees)
    return Baseline(LEARNED_NAMES[kind], "learned", lambda features: np.asarray(booster.predict(features), float))


@contextmanager
def lightgbm_errors(what: str, data: LetorData, min_data_in_leaf: int):
    """LightGBM's refusal of training data as one line naming the parameter: it refuses data on which no feature can
    be split with `min_data_in_leaf` documents on each side (`Check failed: (train_data->num_features()) > (0)`)."""
    import lightgbm as lgb

    # no split can leave that many documents on each side: said here, before LightGBM prints its own fatal line
    if 2 * min_data_in_leaf > data.n_documents:
        raise ParameterError(_too_large(what, data, min_data_in_leaf))
    try:
        yield
    except lgb.basic.LightGBMError as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if "num_features" in reason:
            raise ParameterError(
                f"LightGBM finds no feature it can split in the training data of {what} ({data.n_documents:,} "
                f"documents of {data.n_queries:,} queries, {data.path.name}): every feature is constant, or has too "
                f"few documents on one side of each split for min_data_in_leaf={min_data_in_leaf}; give a smaller "
                "min_data_in_leaf, or check the file's features."
            ) from None
        raise ParameterError(
            f"LightGBM refused the training data of {what} ({data.n_documents:,} documents of {data.n_queries:,} "
            f"queries, min_data_in_leaf={min_data_in_leaf}): {reason}"
        ) from None


def _too_large(what: str, data: LetorData, min_data_in_leaf: int) -> str:
    return (
        f"min_data_in_leaf={min_data_in_leaf} is too large for {what}: on {data.n_documents:,} training documents of "
        f"{data.n_queries:,} queries ({data.path.name}) LightGBM finds no feature it can split with {min_data_in_leaf} "
        f"documents on each side; give a smaller min_data_in_leaf (e.g. -p min_data_in_leaf "
        f"{max(1, data.n_documents // 100)}), or leave it unset to scale it to the data."
    )


def _ridge(features: np.ndarray, labels: np.ndarray, penalty: float = 1.0) -> Callable[[np.ndarray], np.ndarray]:
    """Ridge regression of the labels on standardised features (a linear ranker; closed form)."""
    mean, sd = features.mean(axis=0), features.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    x = (features - mean) / sd
    coef = np.linalg.solve(x.T @ x + penalty * np.eye(x.shape[1]), x.T @ (labels - labels.mean()))

    def scorer(new: np.ndarray) -> np.ndarray:
        return ((new[:, : len(coef)] - mean) / sd) @ coef

    return scorer


def run_baselines(table: pd.DataFrame | str) -> list[Baseline]:
    """Baselines from per-query scores of existing runs: a table, or the path of a CSV (`io.letor.read_run_scores`),
    with `system, topic, score`: `topic` the LETOR query id, `score` the run's NDCG@k on it."""
    frame = read_run_scores(table) if isinstance(table, str) else table
    return [
        Baseline(str(system), "run", per_query=dict(zip(rows["topic"].astype(int), rows["score"].astype(float))))
        for system, rows in frame.groupby("system", sort=False)
    ]


def baseline_matrix(baselines: list[Baseline], data: LetorData, k: int = 10) -> np.ndarray:
    """(baselines, queries) NDCG@k of every baseline on `data`: what the objectives learn against."""
    return np.vstack([b.ndcg(data, k) for b in baselines]) if baselines else np.zeros((0, data.n_queries))
