"""Mean effectiveness per system and paired t-tests against the baseline."""
from __future__ import annotations

import numpy as np
import pandas as pd

from riskreport.stats.corrections import adjust_pvalues
from riskreport.stats.risk import system_row, trisk


def effectiveness_table(matrix: pd.DataFrame, baseline: str, measure: str = "",
                        correction: str = "holm") -> pd.DataFrame:
    """`system, measure, mean, median, sd, n_topics, delta, t, p_value, p_adjusted` per system.

    The paired t-test compares each challenger with `baseline` over the topics (two-sided);
    p-values are adjusted across the challengers with `correction` (Holm by default). The
    baseline row and systems identical to it (no variance in Δ) have no test (NaN).
    """
    values = matrix.to_numpy(dtype=float)
    base = system_row(matrix, baseline).to_numpy(dtype=float)
    delta = values - base
    test = trisk(delta)        # the paired t-test is TRisk at α = 0; undefined (NaN) where Δ does not vary
    t, p = test["trisk"].copy(), test["p_value"].copy()
    is_baseline = matrix.index == baseline
    t[is_baseline] = p[is_baseline] = np.nan
    table = pd.DataFrame({
        "system": matrix.index,
        "measure": measure,
        "mean": values.mean(axis=1),
        "median": np.median(values, axis=1),
        "sd": values.std(axis=1, ddof=1) if values.shape[1] > 1 else np.nan,
        "n_topics": values.shape[1],
        "delta": delta.mean(axis=1),
        "t": t,
        "p_value": p,
    })
    table["p_adjusted"] = adjust_pvalues(table["p_value"].to_numpy(), correction)
    table["correction"] = correction
    return table.reset_index(drop=True)


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
