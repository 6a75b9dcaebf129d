"""Convergence diagnostics (R̂, bulk and tail ESS; `riskreport.bayes.diagnosis.convergence`) and model
choice (WAIC, PSIS-LOO; `riskreport.bayes.diagnosis.psis`) of a fit's draws."""

from __future__ import annotations

import math

import numpy as np

from riskreport.bayes.diagnosis.convergence import ess_bulk, ess_mean, ess_tail, rhat_ess
from riskreport.bayes.modelling.scores import BayesData

RHAT_MAX = 1.01


MAX_LOGLIK_VALUES = 30_000_000  # draws × observations held at once for WAIC/LOO (240 MB); more draws are thinned


def _min_ess(values: np.ndarray) -> tuple[float, float]:
    """The smallest bulk and tail ESS over the parameters of `values` (chains, draws, *parameter shape)."""
    return float(np.min(ess_bulk(values))), float(np.min(ess_tail(values)))


def _columns(values: np.ndarray) -> np.ndarray:
    """Draws (chains, draws, *parameter shape) as (chains, draws, parameters), C order."""
    return values.reshape(values.shape[:2] + (-1,))


def diagnose(draws: dict, effects: str, target_ess: int, divergences: int) -> dict:
    """R̂ (rank-normalised split), bulk and tail ESS per parameter, and the pass/fail flags of the thesis 'Inferential Risk Measures' (docs/measures/bayesian.md).

    Passes when every R̂ < 1.01, every system effect has bulk and tail ESS ≥ `target_ess`
    and no transition diverged. `per_parameter` maps `name[i]` to (rhat, ess_bulk, ess_tail).
    """
    names = [n for n in draws if not n.startswith("z_")]
    rhat, bulk, tail = rhat_ess(np.concatenate([_columns(draws[n]) for n in names], axis=2))
    labels = [
        name if draws[name].ndim == 2 else f"{name}[{i}]"
        for name in names
        for i in range(_columns(draws[name]).shape[2])
    ]
    per_parameter = {label: (float(r), float(eb), float(et)) for label, r, eb, et in zip(labels, rhat, bulk, tail)}
    effect_keys = [k for k in per_parameter if k == effects or k.startswith(effects + "[")]
    max_rhat = max(v[0] for v in per_parameter.values())
    min_bulk = min(per_parameter[k][1] for k in effect_keys)
    min_tail = min(per_parameter[k][2] for k in effect_keys)
    result = {
        "draws": int(draws["b"].size),
        "chains": int(draws["b"].shape[0]),
        "divergences": int(divergences),
        "max_rhat": max_rhat,
        "min_ess_bulk": min_bulk,
        "min_ess_tail": min_tail,
        "target_ess": int(target_ess),
        "rhat_ok": bool(max_rhat < RHAT_MAX),
        "ess_ok": bool(min(min_bulk, min_tail) >= target_ess),
        "divergences_ok": divergences == 0,
        "per_parameter": per_parameter,
    }
    result["ok"] = result["rhat_ok"] and result["ess_ok"] and result["divergences_ok"]
    failed = [
        what
        for what, flag in (
            ("R̂ ≥ 1.01", "rhat_ok"),
            (f"ESS < {target_ess:,}", "ess_ok"),
            ("divergent transitions", "divergences_ok"),
        )
        if not result[flag]
    ]
    result["problems"] = "; ".join(failed)
    return result


def information_criteria(model: str, data: BayesData, draws: dict) -> dict:
    """WAIC and PSIS-LOO on the deviance scale from the pointwise log-likelihood (`riskreport.bayes.diagnosis.psis`,
    equal to ArviZ's `waic` and `loo` with the relative efficiency `arviz.loo` takes from the intercept's mean ESS).

    When draws × observations exceed `MAX_LOGLIK_VALUES` the draws are thinned evenly (the count used is reported).
    """
    from riskreport.bayes.diagnosis.psis import loo_waic
    from riskreport.bayes.modelling.likelihood import log_likelihood

    chains, per_chain = draws["b"].shape[:2]
    step = max(1, math.ceil(chains * per_chain * data.n / MAX_LOGLIK_VALUES))
    kept = {name: values[:, ::step] for name, values in draws.items()}
    flat = {name: v.reshape((-1,) + v.shape[2:]) for name, v in kept.items()}
    loglik = log_likelihood(model, data, flat).reshape(chains, -1, data.n)
    loo, waic = loo_waic(loglik, _relative_efficiency(kept["b"]))
    return {
        "waic": -2 * waic.elpd,
        "waic_se": 2 * waic.se,
        "p_waic": waic.p,
        "loo": -2 * loo.elpd,
        "loo_se": 2 * loo.se,
        "p_loo": loo.p,
        "pareto_k_above_0_7": int((loo.pareto_k > 0.7).sum()),
        "loglik_draws": int(loglik.shape[0] * loglik.shape[1]),
        "pointwise": {"elpd_loo_i": loo.pointwise, "elpd_waic_i": waic.pointwise, "pareto_k": loo.pareto_k},
    }


def _relative_efficiency(intercept: np.ndarray) -> float:
    """r_eff of PSIS as `arviz.loo` sets it for a posterior holding only the intercept: its mean ESS / draws (1 for
    one chain)."""
    if intercept.shape[0] == 1:
        return 1.0
    return float(ess_mean(intercept)) / intercept.size
