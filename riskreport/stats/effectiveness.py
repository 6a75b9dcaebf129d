"""Mean effectiveness per system and paired t-tests against the baseline."""

from __future__ import annotations

import numpy as np
import pandas as pd

from riskreport.stats.corrections import adjust_pvalues
from riskreport.stats.risk import system_row, trisk


def effectiveness_table(
    matrix: pd.DataFrame, baseline: str, measure: str = "", correction: str = "holm", baselines: list[str] | None = None
) -> pd.DataFrame:
    """`system, measure, mean, median, sd, n_topics, delta, t, p_value, p_adjusted` per system.

    The paired t-test compares each challenger with `baseline` over the topics (two-sided);
    p-values are adjusted across the challengers with `correction` (Holm by default). The
    baseline row and systems identical to it (no variance in Δ) have no test (NaN). With several
    `baselines` (`baseline` among them) the adjustment covers every baseline's challengers, as the
    report's rule does, and the rows compare with `baseline`.
    """
    values = matrix.to_numpy(dtype=float)
    base = system_row(matrix, baseline).to_numpy(dtype=float)
    delta = values - base
    test = trisk(delta)  # the paired t-test is TRisk at α = 0; undefined (NaN) where Δ does not vary
    t, p = test["trisk"].copy(), test["p_value"].copy()
    is_baseline = matrix.index == baseline
    t[is_baseline] = p[is_baseline] = np.nan
    table = pd.DataFrame(
        {
            "system": matrix.index,
            "measure": measure,
            "mean": values.mean(axis=1),
            "median": np.median(values, axis=1),
            "sd": values.std(axis=1, ddof=1) if values.shape[1] > 1 else np.nan,
            "n_topics": values.shape[1],
            "delta": delta.mean(axis=1),
            "t": t,
            "p_value": p,
        }
    )
    table["p_adjusted"] = _family_adjusted(matrix, baseline, table["p_value"].to_numpy(), correction, baselines)
    table["correction"] = correction
    return table.reset_index(drop=True)


def _family_adjusted(
    matrix: pd.DataFrame, baseline: str, p: np.ndarray, correction: str, baselines: list[str] | None
) -> np.ndarray:
    """`p` (against `baseline`) adjusted with the p-values against every other of `baselines` in one family."""
    others = [b for b in dict.fromkeys(baselines or []) if b != baseline]
    if not others:
        return adjust_pvalues(p, correction)
    values = matrix.to_numpy(dtype=float)
    family = [p] + [_paired_p(values, system_row(matrix, b).to_numpy(dtype=float), matrix.index == b) for b in others]
    return adjust_pvalues(np.concatenate(family), correction)[: len(p)]


def _paired_p(values: np.ndarray, base: np.ndarray, is_baseline: np.ndarray) -> np.ndarray:
    p = trisk(values - base)["p_value"].copy()
    p[is_baseline] = np.nan
    return p


def multi_measure_table(collection, measures, systems, baseline: str, correction: str = "holm") -> pd.DataFrame:
    """Mean effectiveness of every system under several measures, tidy: `system, measure, mean, delta,
    p_value, p_adjusted` (paired t-test against `baseline`, adjusted across the challengers per measure)."""
    from riskreport.measures.evaluation import evaluate

    parts = []
    for measure in dict.fromkeys(measures):
        matrix = evaluate(collection, measure, systems).matrix()
        table = effectiveness_table(matrix, baseline, measure, correction)
        parts.append(table[["system", "measure", "mean", "delta", "p_value", "p_adjusted"]])
    return pd.concat(parts, ignore_index=True)
