"""Bayesian risk over many systems (Benham's thesis 'Inferential Risk Measures', Ch. 4–5; docs/measures/bayesian.md).

Five floors, each importing only those below it (the import-linter contract in pyproject.toml):
`report` (the report's analysis and its words and display tables) -> `posterior` (the measures and rules on the
fits: system effects, dominance, WAIC/PSIS-LOO, BRisk⁻, PPDRisk⁻) -> `fitting` (sampling to a target ESS with
`FitOptions`, the chains and when to stop, the compiled model, the on-disk cache of the draws) -> `diagnosis` (R̂,
ESS, WAIC and PSIS-LOO of the draws) -> `modelling` (scores coded for the models, the models, their numba
log-densities and their likelihoods). Tables use the standard convention (higher is better). Each module is also
reached by its short name (`MODULES`): `bayes.analysis`, `from riskreport.bayes import presentation`.

>>> from riskreport import bayes
>>> data = bayes.scores_data(table, systems=pool)                     # doctest: +SKIP
>>> zoib = bayes.fit("zoib", data, target_ess=10_000, seed=2026)      # doctest: +SKIP
>>> bayes.system_effects(zoib)                                        # doctest: +SKIP
>>> bayes.ppdrisk_table(zoib, "bm25_baseline", alphas=[0, 1])         # doctest: +SKIP
"""

from riskreport.bayes.fitting.fits import BayesFit, FitCache
from riskreport.bayes.fitting.sampling import FitOptions, fit
from riskreport.bayes.modelling.models import LABELS, MODELS, brms_priors, describe_prior
from riskreport.bayes.modelling.scores import BayesData, paired_data, rbp_rank_gains, scores_data
from riskreport.bayes.posterior.brisk import BRISK_COLUMNS, brisk_table, paired_table
from riskreport.bayes.posterior.measures import (
    MODEL_COLUMNS,
    SYSTEM_COLUMNS,
    diagnostics_table,
    dominance_pairs,
    effects_rbo,
    model_table,
    system_effects,
)
from riskreport.bayes.posterior.ppdrisk import PPDRISK_COLUMNS, ppdrisk_draws, ppdrisk_table, predictive_overlay
from riskreport.short_names import short_module

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

# Each module by its short name (`bayes.measures`, `from riskreport.bayes import analysis`), imported on first use.
MODULES = {
    **{m: f"report.{m}" for m in ("analysis", "presentation")},
    **{m: f"posterior.{m}" for m in ("measures", "brisk", "ppdrisk")},
    **{
        m: f"fitting.{m}" for m in ("sampling", "stopping", "chains", "dask_chains", "compiled", "fit_progress", "fits")
    },
    **{m: f"diagnosis.{m}" for m in ("convergence", "psis", "diagnostics")},
    **{m: f"modelling.{m}" for m in ("scores", "models", "likelihood", "kernels")},
}


def __getattr__(name: str):
    return short_module(__name__, MODULES, name)
