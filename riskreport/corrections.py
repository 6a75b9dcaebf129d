"""Multiple-comparison corrections across the challengers of a report: p-values and CI levels."""
from __future__ import annotations

from typing import Sequence

import numpy as np
from statsmodels.stats.multitest import multipletests

from .params import check_report_options

CORRECTIONS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh", "none": None}


def adjust_pvalues(p_values: np.ndarray, method: str = "holm") -> np.ndarray:
    """p-values adjusted for multiple comparisons (statsmodels `multipletests`); NaN stays NaN."""
    check_report_options({"correction": method})
    p_values = np.asarray(p_values, dtype=float)
    adjusted = p_values.copy()
    finite = np.isfinite(p_values)
    if CORRECTIONS[method] and finite.any():
        adjusted[finite] = multipletests(p_values[finite], method=CORRECTIONS[method])[1]
    return adjusted


def adjusted_levels(levels: Sequence[float], correction: str, k: int) -> np.ndarray:
    """CI levels after the correction: 1 − (1 − level)/k under Bonferroni, unchanged otherwise."""
    levels = np.asarray(levels, dtype=float)
    return 1 - (1 - levels) / max(k, 1) if correction == "bonferroni" else levels
