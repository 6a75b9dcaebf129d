"""Benchmark: WAIC and PSIS-LOO by riskreport.bayes.diagnosis.psis against ArviZ's `waic` and `loo`, side by side.

The pointwise log-likelihood is a BHM-ZOiB one of the TREC-COVID shape (42 systems × 30 topics = 1,260 scores)
on synthetic data, evaluated by riskreport's own likelihood on 4 AR(1) chains of draws around the data's
parameters (so the intercept's ESS, and r_eff, are below the draw count as in a real fit). ArviZ is timed the way
`information_criteria` called it before (InferenceData, `az.waic`, `az.loo` with r_eff from the intercept), ours
as it calls it now (r_eff, then `loo_waic`); both are compared before the seconds are reported. The machine may
be shared: every timing is repeated and the median printed.

    python tests/benchmarks/bench_psis.py [--draws 4000 4167] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
import pandas as pd
from scipy import special

from riskreport import bayes
from riskreport.bayes.diagnosis.diagnostics import _relative_efficiency
from riskreport.bayes.diagnosis.psis import loo_waic
from riskreport.bayes.modelling.likelihood import log_likelihood

SYSTEMS, TOPICS, CHAINS = 42, 30, 4
RHO = -0.05  # successive draws slightly anticorrelated: r_eff about 1.1, as the intercept of the cached NUTS fits


def zoib_log_lik(per_chain: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(chains, draws, 1,260) ZOiB log-likelihood and the intercept's draws (chains, draws)."""
    rng = np.random.default_rng(seed)
    r_sys, r_top = rng.normal(0, 0.3, SYSTEMS), rng.normal(0, 0.8, TOPICS)
    mu = special.expit(-0.5 + r_sys[:, None] + r_top[None, :])
    y = rng.beta(mu * 4, (1 - mu) * 4)
    inflated = rng.random(mu.shape) < 0.15
    y[inflated] = (rng.random(inflated.sum()) < 0.2).astype(float)
    data = bayes.scores_data(pd.DataFrame(y, index=[f"s{i}" for i in range(SYSTEMS)]))

    def chain(*shape: int, sd: float) -> np.ndarray:  # AR(1)
        noise = rng.normal(size=(CHAINS, per_chain, *shape))
        for t in range(1, per_chain):
            noise[:, t] = RHO * noise[:, t - 1] + np.sqrt(1 - RHO**2) * noise[:, t]
        return sd * noise

    draws = {
        "b": -0.5 + chain(sd=0.1),
        "r_sys": r_sys + chain(SYSTEMS, sd=0.05),
        "r_top": r_top + chain(TOPICS, sd=0.1),
        "phi": 4 * np.exp(chain(sd=0.05)),
        "zoi": special.expit(special.logit(0.15) + chain(sd=0.1)),
        "coi": special.expit(special.logit(0.2) + chain(sd=0.2)),
    }
    flat = {name: values.reshape((-1,) + values.shape[2:]) for name, values in draws.items()}
    return log_likelihood("zoib", data, flat).reshape(CHAINS, per_chain, data.n), draws["b"]


def arviz_route(log_lik: np.ndarray, intercept: np.ndarray):
    import arviz as az

    idata = az.from_dict(posterior={"b": intercept}, log_likelihood={"y": log_lik})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return az.waic(idata, scale="log", pointwise=True), az.loo(idata, scale="log", pointwise=True)


def ours(log_lik: np.ndarray, intercept: np.ndarray):
    loo, waic = loo_waic(log_lik, _relative_efficiency(intercept))
    return waic, loo


def timed(function, *args, repeats: int):
    seconds, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function(*args)
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds), seconds, result


def differences(reference, result) -> dict:
    (ref_waic, ref_loo), (waic, loo) = reference, result

    def rel(ours, theirs) -> float:
        theirs = np.asarray(theirs, dtype=float)
        return float(np.max(np.abs(np.asarray(ours) - theirs) / np.abs(theirs)))

    return {
        "elpd/se/p (relative)": max(
            rel(loo.elpd, ref_loo["elpd_loo"]),
            rel(loo.se, ref_loo["se"]),
            rel(loo.p, ref_loo["p_loo"]),
            rel(waic.elpd, ref_waic["elpd_waic"]),
            rel(waic.se, ref_waic["se"]),
            rel(waic.p, ref_waic["p_waic"]),
        ),
        "elpd_loo_i (relative)": rel(loo.pointwise, ref_loo["loo_i"]),
        "elpd_loo_i (absolute)": float(np.max(np.abs(loo.pointwise - np.asarray(ref_loo["loo_i"])))),
        "elpd_waic_i (relative)": rel(waic.pointwise, ref_waic["waic_i"]),
        "elpd_waic_i (absolute)": float(np.max(np.abs(waic.pointwise - np.asarray(ref_waic["waic_i"])))),
        "pareto k (absolute)": float(np.max(np.abs(loo.pareto_k - np.asarray(ref_loo["pareto_k"])))),
        "k > 0.7 (ours, ArviZ)": (int((loo.pareto_k > 0.7).sum()), int((np.asarray(ref_loo["pareto_k"]) > 0.7).sum())),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, nargs="+", default=[4000, 4167], help="draws per chain (4 chains)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import arviz  # noqa: F401  (imported before timing, as it is in a fit after the diagnostics)

    for per_chain in args.draws:
        log_lik, intercept = zoib_log_lik(per_chain)
        reference_s, reference_all, reference = timed(arviz_route, log_lik, intercept, repeats=args.repeats)
        ours_s, ours_all, result = timed(ours, log_lik, intercept, repeats=args.repeats)
        print(f"{CHAINS} × {per_chain:,} × {log_lik.shape[-1]:,} (r_eff {_relative_efficiency(intercept):.3f})")
        print(f"  ArviZ waic + loo: {reference_s:6.2f} s (median of {', '.join(f'{s:.2f}' for s in reference_all)})")
        print(f"  riskreport psis:  {ours_s:6.2f} s (median of {', '.join(f'{s:.2f}' for s in ours_all)})")
        print(f"  ratio ArviZ / ours: {reference_s / ours_s:.1f}×")
        for name, value in differences(reference, result).items():
            print(f"  max difference, {name}: {value if isinstance(value, tuple) else f'{value:.2e}'}")


if __name__ == "__main__":
    main()
