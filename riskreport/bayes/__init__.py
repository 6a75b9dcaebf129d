"""Bayesian risk over many systems (Benham's thesis 'Inferential Risk Measures', Ch. 4–5; docs/measures/bayesian.md).

Models (`models`), sampling to a target ESS with an on-disk cache of the draws (`sampling`),
and the measures and rules on the fits (`measures`): system effects and dominance, BRisk⁻,
PPDRisk⁻, WAIC/PSIS-LOO and diagnostics. Tables use the standard convention (higher is better).

>>> from riskreport import bayes
>>> data = bayes.scores_data(table, systems=pool)                     # doctest: +SKIP
>>> zoib = bayes.fit("zoib", data, target_ess=10_000, seed=2026)      # doctest: +SKIP
>>> bayes.system_effects(zoib)                                        # doctest: +SKIP
>>> bayes.ppdrisk_table(zoib, "bm25_baseline", alphas=[0, 1])         # doctest: +SKIP
"""

from riskreport.bayes.measures import (
    BRISK_COLUMNS,
    MODEL_COLUMNS,
    PPDRISK_COLUMNS,
    SYSTEM_COLUMNS,
    brisk_table,
    diagnostics_table,
    dominance_pairs,
    effects_rbo,
    model_table,
    paired_table,
    ppdrisk_draws,
    ppdrisk_table,
    predictive_overlay,
    system_effects,
)
from riskreport.bayes.models import (
    LABELS,
    MODELS,
    BayesData,
    brms_priors,
    describe_prior,
    paired_data,
    rbp_rank_gains,
    scores_data,
)
from riskreport.bayes.sampling import BayesFit, FitCache, fit

__all__ = [
    "BRISK_COLUMNS",
    "MODEL_COLUMNS",
    "PPDRISK_COLUMNS",
    "SYSTEM_COLUMNS",
    "LABELS",
    "MODELS",
    "BayesData",
    "BayesFit",
    "FitCache",
    "brisk_table",
    "brms_priors",
    "describe_prior",
    "diagnostics_table",
    "dominance_pairs",
    "effects_rbo",
    "fit",
    "model_table",
    "paired_data",
    "paired_table",
    "ppdrisk_draws",
    "ppdrisk_table",
    "predictive_overlay",
    "rbp_rank_gains",
    "scores_data",
    "system_effects",
]
