"""Multiple-comparison corrections across the challengers of a report: p-values and CI levels."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from riskreport.options import CORRECTIONS, check_options  # noqa: F401 - CORRECTIONS: rr.corrections.CORRECTIONS


def adjust_pvalues(p_values: np.ndarray, method: str = "holm") -> np.ndarray:
    """p-values adjusted for multiple comparisons along the last axis (each row on its own); NaN stays NaN
    and does not count as a comparison.

    The same values as statsmodels' `multipletests` (`holm`, `bonferroni`, `fdr_bh`), which the tests
    check, vectorised over rows (e.g. every α at once); statsmodels' Holm also runs a full garbage
    collection per call, which in a report's kernel costs a tenth of a second each time.
    """
    check_options({"correction": method})
    p_values = np.asarray(p_values, dtype=float)
    if CORRECTIONS[method] is None or p_values.size == 0:
        return p_values.copy()
    order = np.argsort(p_values, axis=-1, kind="stable")  # NaN sorts last
    ranked = np.take_along_axis(p_values, order, axis=-1)
    n = np.isfinite(p_values).sum(axis=-1, keepdims=True)
    i = np.arange(p_values.shape[-1])  # 0-based position among the sorted
    if method == "bonferroni":
        adjusted = ranked * n
    elif method == "holm":
        adjusted = np.fmax.accumulate(ranked * (n - i), axis=-1)
    else:  # Benjamini–Hochberg
        raw = ranked * n / np.where(i < n, i + 1, 1)
        adjusted = np.flip(np.fmin.accumulate(np.flip(np.where(i < n, raw, np.inf), -1), axis=-1), -1)
    adjusted = np.where(np.isfinite(ranked), np.minimum(adjusted, 1.0), np.nan)
    out = np.empty_like(adjusted)
    np.put_along_axis(out, order, adjusted, axis=-1)
    return out


def adjusted_levels(levels: Sequence[float], correction: str, k: int) -> np.ndarray:
    """CI levels after the correction: 1 − (1 − level)/k under Bonferroni, unchanged otherwise."""
    grid = np.asarray(levels, dtype=float)
    return 1 - (1 - grid) / max(k, 1) if correction == "bonferroni" else grid
