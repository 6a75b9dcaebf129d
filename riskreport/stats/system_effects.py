"""Every deterministic system against the baseline at each α (the `mixed_systems` table of the risk report):
system effects from `score ~ system + (1 | topic)` on the risk-adjusted scores of Benham's thesis (Eq. 4.5), in
closed form for a complete design or with statsmodels MixedLM. The model of non-deterministic systems (instances
nested in systems) is `riskreport.stats.mixed`, which exports these too."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from riskreport.stats.corrections import adjust_pvalues
from riskreport.stats.risk import challengers as risk_challengers
from riskreport.stats.risk import risk_adjusted_scores

SYSTEM_EFFECT_COLUMNS = ["system", "measure", "alpha", "effect", "se", "ci_low", "ci_high", "p_value", "p_adjusted"]


def mixed_systems(
    matrix: pd.DataFrame,
    baseline: str,
    alphas: Sequence[float],
    measure: str = "",
    correction: str = "holm",
    level: float = 0.95,
    method: str = "auto",
) -> pd.DataFrame:
    """System effects against the baseline from `score ~ system + (1 | topic)` on the thesis Eq. 4.5
    risk-adjusted scores at each α (the frequentist counterpart of the thesis's Bayesian model).

    `method="statsmodels"` fits statsmodels MixedLM (REML); `"auto"` uses its closed form for a
    complete systems x topics design (one score per cell), which gives the same REML estimates:
    effect = mean difference, SE = √(2σ²/c) with σ² the REML residual variance. z-based p and CI
    as statsmodels reports them; p adjusted across challengers with `correction`. Columns `SYSTEM_EFFECT_COLUMNS`.
    """
    scores = risk_adjusted_scores(matrix, baseline, alphas)
    challengers = risk_challengers(matrix, baseline)
    z = stats.norm.ppf(0.5 + level / 2)
    parts = []
    for alpha, frame in scores.groupby("alpha", sort=True):
        if method == "statsmodels":
            effect, se = _mixedlm_effects(frame, baseline, challengers)
        else:
            effect, se = _balanced_effects(
                frame["score"].to_numpy().reshape(matrix.shape), list(matrix.index), baseline, challengers
            )
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(se > 0, 2 * stats.norm.sf(np.abs(effect / np.where(se > 0, se, 1))), np.nan)
        parts.append(
            pd.DataFrame(
                {
                    "system": challengers,
                    "measure": measure,
                    "alpha": alpha,
                    "effect": effect,
                    "se": se,
                    "ci_low": effect - z * se,
                    "ci_high": effect + z * se,
                    "p_value": p,
                    "p_adjusted": adjust_pvalues(p, correction),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def _balanced_effects(x: np.ndarray, systems: list, baseline: str, challengers: list):
    """REML for a complete two-way layout with a random topic intercept, in closed form."""
    k, c = x.shape
    resid = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + x.mean()
    ss_error = (resid**2).sum()
    ss_topic = k * ((x.mean(axis=0) - x.mean()) ** 2).sum()
    df_error, df_topic = (k - 1) * (c - 1), c - 1
    ms_error = ss_error / df_error if df_error else 0.0
    ms_topic = ss_topic / df_topic if df_topic else 0.0
    # REML = ANOVA estimates inside the parameter space; on the boundary (topic variance 0) the
    # topic and error sums of squares pool.
    sigma2 = ms_error if ms_topic >= ms_error else (ss_error + ss_topic) / (df_error + df_topic)
    if df_error == 0:  # one topic: the residual variance cannot be estimated
        sigma2 = np.nan
    means = x.mean(axis=1)
    index = {s: i for i, s in enumerate(systems)}
    effect = np.array([means[index[s]] - means[index[baseline]] for s in challengers])
    se = np.full(len(challengers), np.sqrt(2 * sigma2 / c))
    return effect, se


def _mixedlm_effects(frame: pd.DataFrame, baseline: str, challengers: list):
    import statsmodels.formula.api as smf

    data = frame.assign(system=pd.Categorical(frame["system"], categories=[baseline] + challengers))
    model = smf.mixedlm("score ~ C(system)", data, groups=data["topic"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fit = model.fit(reml=True)
        except np.linalg.LinAlgError:  # singular at the boundary (topic variance 0): derivative-free
            fit = model.fit(reml=True, method="powell")
    names = [f"C(system)[T.{s}]" for s in challengers]
    return fit.fe_params[names].to_numpy(), fit.bse_fe[names].to_numpy()
