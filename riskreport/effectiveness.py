"""Mean effectiveness per system and paired t-tests against the baseline."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

CORRECTIONS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh", "none": None}


def adjust_pvalues(p_values: np.ndarray, method: str = "holm") -> np.ndarray:
    """p-values adjusted for multiple comparisons (statsmodels `multipletests`); NaN stays NaN."""
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r}; expected one of {', '.join(CORRECTIONS)}")
    p_values = np.asarray(p_values, dtype=float)
    adjusted = p_values.copy()
    finite = np.isfinite(p_values)
    if CORRECTIONS[method] and finite.any():
        adjusted[finite] = multipletests(p_values[finite], method=CORRECTIONS[method])[1]
    return adjusted


def effectiveness_table(matrix: pd.DataFrame, baseline: str, measure: str = "",
                        correction: str = "holm") -> pd.DataFrame:
    """`system, measure, mean, median, sd, n_topics, delta, t, p_value, p_adjusted` per system.

    The paired t-test compares each challenger with `baseline` over the topics (two-sided);
    p-values are adjusted across the challengers with `correction` (Holm by default). The
    baseline row and systems identical to it (no variance in Δ) have no test (NaN).
    """
    values = matrix.to_numpy(dtype=float)
    base = matrix.loc[baseline].to_numpy(dtype=float)
    delta = values - base
    with np.errstate(invalid="ignore", divide="ignore"):
        test = stats.ttest_rel(values, np.broadcast_to(base, values.shape), axis=1)
    t = np.where(delta.std(axis=1) > 0, test.statistic, np.nan)
    p = np.where(np.isfinite(t), test.pvalue, np.nan)
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
