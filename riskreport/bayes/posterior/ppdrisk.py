"""PPDRisk⁻ (Benham's thesis 'Inferential Risk Measures', Ch. 5; docs/measures/bayesian.md): URisk of posterior
predictive replicates against the baseline's, per α, computed in chunks of draws (bounded memory), and the
predictive overlay of replicated against observed scores.

Tables are tidy and in the project's standard convention: PPDRisk⁻ = −ppd_urisk (positive = risk).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from riskreport.bayes.fitting.fits import BayesFit
from riskreport.bayes.modelling.likelihood import predict
from riskreport.bayes.modelling.models import LABELS
from riskreport.bayes.posterior.measures import checked, diagnostics_note, interval_tails, verdict
from riskreport.errors import ParameterError
from riskreport.stats.risk import risk_adjusted

PPDRISK_COLUMNS = [
    "system",
    "baseline",
    "measure",
    "model",
    "alpha",
    "ppd_urisk_median",
    "ppd_urisk_mean",
    "ppd_urisk_low",
    "ppd_urisk_high",
    "verdict",
    "diagnostics",
]


def cell_index(result: BayesFit) -> np.ndarray:
    """(systems, topics) → observation index; every system must have exactly one score per topic."""
    data = result.data
    index = np.full((len(data.systems), len(data.topics)), -1)
    index[data.system, data.topic] = np.arange(data.n)
    counts = np.zeros_like(index)
    np.add.at(counts, (data.system, data.topic), 1)
    if np.any(counts != 1):
        raise ParameterError("PPDRisk⁻ needs exactly one score per system and topic in the model's data.")
    return index


def ppdrisk_draws(
    result: BayesFit,
    baseline: str,
    alphas: Sequence[float],
    challengers: Sequence[str] | None = None,
    seed: int = 2026,
    chunk: int = 2000,
) -> tuple[np.ndarray, list[str]]:
    """Draws of −PPDRisk⁻_α = mean_j l_α(ỹ[d,c,j] − ỹ[d,h,j]) (thesis Ch. 5; docs/measures/bayesian.md), shape (alphas, draws, challengers).

    One replicate ỹ per posterior draw and observed cell, independent across cells, made `chunk`
    draws at a time: memory stays bounded by chunk × observations whatever the number of draws.
    """
    systems = list(result.data.systems)
    if baseline not in systems:
        raise ParameterError(f"The baseline {baseline!r} is not in the model's pool.")
    challengers = [s for s in (challengers or systems) if s != baseline]
    cells = cell_index(result)
    h, cols = systems.index(baseline), [systems.index(s) for s in challengers]
    draws = result.flat_draws()
    total = len(draws["b"])
    out = np.empty((len(alphas), total, len(challengers)))
    rng = np.random.default_rng(seed)
    for start in range(0, total, chunk):
        part = {name: values[start : start + chunk] for name, values in draws.items()}
        replicate = predict(result.model, result.data, part, rng)[:, cells]  # (d, S, T)
        delta = replicate[:, cols, :] - replicate[:, [h], :]
        out[:, start : start + chunk, :] = risk_adjusted(delta, alphas).mean(axis=-1)
    return out, challengers


def ppdrisk_table(
    result: BayesFit,
    baseline: str,
    alphas: Sequence[float],
    measure: str = "",
    level: float = 0.95,
    challengers: Sequence[str] | None = None,
    seed: int = 2026,
    draws: tuple[np.ndarray, list[str]] | None = None,
) -> pd.DataFrame:
    """PPDRisk⁻ per challenger and α in the standard convention: `ppd_urisk` = −PPDRisk⁻.

    Point estimate: the median over draws (and the mean); interval: equal-tailed at `level`.
    `verdict` is `risk` when the interval lies below 0 (PPDRisk⁻ above 0), `reward` above; `no verdict` when the
    fit failed its checks (`diagnostics` says what failed).
    """
    lo, hi = interval_tails(level)
    values, names = draws or ppdrisk_draws(result, baseline, alphas, challengers, seed)
    low, high = np.quantile(values, [lo, hi], axis=1)
    return pd.DataFrame(
        {
            "system": np.tile(names, len(alphas)),
            "baseline": baseline,
            "measure": measure,
            "model": result.model,
            "alpha": np.repeat([float(a) for a in alphas], len(names)),
            "ppd_urisk_median": np.median(values, axis=1).reshape(-1),
            "ppd_urisk_mean": values.mean(axis=1).reshape(-1),
            "ppd_urisk_low": low.reshape(-1),
            "ppd_urisk_high": high.reshape(-1),
            "verdict": checked(verdict(low, high).reshape(-1), result),
            "diagnostics": diagnostics_note(result),
        }
    )


def predictive_overlay(result: BayesFit, replicates: int = 40, seed: int = 2026) -> pd.DataFrame:
    """`replicates` posterior predictive data sets (evenly spaced draws) beside the observed scores.

    Tidy `model, source, replicate, score`: source `observed` (replicate −1) or `predicted`.
    """
    draws = result.flat_draws()
    picks = np.linspace(0, len(draws["b"]) - 1, replicates).astype(int)
    predicted = predict(result.model, result.data, {k: v[picks] for k, v in draws.items()}, np.random.default_rng(seed))
    n = result.data.n
    return pd.DataFrame(
        {
            "model": result.model,
            "label": LABELS[result.model],
            "source": ["observed"] * n + ["predicted"] * predicted.size,
            "replicate": np.concatenate([np.full(n, -1), np.repeat(np.arange(replicates), n)]),
            "score": np.concatenate([result.data.y, predicted.reshape(-1)]),
        }
    )
