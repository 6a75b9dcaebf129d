"""Risk-sensitive measures against a single baseline (SPEC §2), vectorised over systems x α.

Sign convention ("standard"): higher is better; a negative URisk means the challenger
loses to the baseline once losses are weighted by (1 + α).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd


def deltas(matrix: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Per-topic differences Δ_j = x_sj − x_bj of every system against `baseline` (systems x topics)."""
    return matrix - matrix.loc[baseline]


def risk_adjusted(delta: np.ndarray, alphas: Sequence[float]) -> np.ndarray:
    """Linear value function l_α(Δ) = Δ if Δ ≥ 0 else (1+α)·Δ (Wang et al. 2012; SPEC §2).

    `delta` has shape (..., topics); the result has shape (len(alphas), ..., topics).
    """
    delta = np.asarray(delta, dtype=float)
    weights = 1.0 + np.asarray(alphas, dtype=float).reshape((-1,) + (1,) * delta.ndim)
    return np.where(delta < 0, weights * delta, delta)


def urisk(delta: np.ndarray, alphas: Sequence[float]) -> np.ndarray:
    """URisk_α = mean_j l_α(Δ_j) (Wang et al. 2012, Eq. 2; gdeval `-riskAlpha`), shape (alphas, ...)."""
    return risk_adjusted(delta, alphas).mean(axis=-1)


def win_loss_ties(delta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts of Δ > 0, Δ < 0 and Δ = 0 along the topic axis."""
    delta = np.asarray(delta, dtype=float)
    return (delta > 0).sum(axis=-1), (delta < 0).sum(axis=-1), (delta == 0).sum(axis=-1)


def urisk_table(matrix: pd.DataFrame, baseline: str, alphas: Sequence[float], measure: str = "") -> pd.DataFrame:
    """Tidy `system, baseline, measure, alpha, urisk, wins, losses, ties` for every challenger and α.

    `matrix` is systems x topics (e.g. `TopicScores.matrix()`); the baseline row is left out.
    """
    challengers = [s for s in matrix.index if s != baseline]
    delta = deltas(matrix, baseline).loc[challengers].to_numpy()
    alphas = [float(a) for a in alphas]
    values = urisk(delta, alphas)                       # (alphas, systems)
    wins, losses, ties = win_loss_ties(delta)
    n_alpha, n_sys = len(alphas), len(challengers)
    return pd.DataFrame({
        "system": np.tile(challengers, n_alpha),
        "baseline": baseline,
        "measure": measure,
        "alpha": np.repeat(alphas, n_sys),
        "urisk": values.reshape(-1),
        "wins": np.tile(wins, n_alpha),
        "losses": np.tile(losses, n_alpha),
        "ties": np.tile(ties, n_alpha),
    })
