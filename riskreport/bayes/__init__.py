"""Bayesian risk over many systems (Benham's thesis 'Inferential Risk Measures', Ch. 4–5; docs/measures/bayesian.md).

Models (`models`) of scores coded for them (`scores`), sampling to a target ESS (`sampling`,
`FitOptions`) with an on-disk cache of the draws (`fits`) and of the compiled models (`compiled`),
and the measures and rules on the fits: system effects, dominance, WAIC/PSIS-LOO and diagnostics
(`measures`; R̂ and ESS computed by `convergence`, WAIC and PSIS-LOO by `psis`), BRisk⁻ (`brisk`), PPDRisk⁻ (`ppdrisk`); the report's analysis (`analysis`) and its
words and display tables (`presentation`). Tables use the standard convention (higher is better).

>>> from riskreport import bayes
>>> data = bayes.scores_data(table, systems=pool)                     # doctest: +SKIP
>>> zoib = bayes.fit("zoib", data, target_ess=10_000, seed=2026)      # doctest: +SKIP
>>> bayes.system_effects(zoib)                                        # doctest: +SKIP
>>> bayes.ppdrisk_table(zoib, "bm25_baseline", alphas=[0, 1])         # doctest: +SKIP
"""

from riskreport.bayes.brisk import BRISK_COLUMNS, brisk_table, paired_table
from riskreport.bayes.fits import BayesFit, FitCache
from riskreport.bayes.measures import (
    MODEL_COLUMNS,
    SYSTEM_COLUMNS,
    diagnostics_table,
    dominance_pairs,
    effects_rbo,
    model_table,
    system_effects,
)
from riskreport.bayes.models import LABELS, MODELS, brms_priors, describe_prior
from riskreport.bayes.ppdrisk import PPDRISK_COLUMNS, ppdrisk_draws, ppdrisk_table, predictive_overlay
from riskreport.bayes.sampling import FitOptions, fit
from riskreport.bayes.scores import BayesData, paired_data, rbp_rank_gains, scores_data

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
    "FitOptions",
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
