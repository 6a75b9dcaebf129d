"""Benchmark: the sampler settings (target_accept × warm-up) by gradients per tail ESS, warm-up included.

For each model and data set, and each target_accept × warm-up per chain of the grid, one nutpie run of
`--chains` chains × `--draws` draws each of the model riskreport samples (`compiled.compiled_model`: the numba
kernels), seeded. Printed per cell: leapfrog steps per draw after warm-up, the warm-up's share of all gradients,
the smallest tail and bulk ESS over the system effects (ArviZ), gradients per unit of the smallest tail ESS
(the binding target of a fit; every gradient counted, warm-up included), divergences, CPU µs per gradient,
CPU seconds. The settings change the sampler, not the posterior: the cheapest cell without divergences wins.

Data: ZOiB-42 / Gaussian-42 (TREC-COVID round 1's 42 pooled runs, ../shared).

    python tests/benchmarks/bench_bayes_settings.py [--models zoib gaussian] [--data covid42 covid107 demo]
        [--target-accept 0.8 0.85 0.9] [--tune 300 1000] [--chains 4] [--draws 1500]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
COVID = ROOT.parent / "shared" / "data" / "trec-covid-round1"


def datasets(names) -> dict:
    from riskreport import bayes

    out = {}
    if "covid42" in names and COVID.is_dir():
        scores = pd.read_csv(COVID / "round1_data.csv")
        pooled = pd.read_csv(COVID / "round1_pooled.csv")
        pool = set(pooled.loc[pooled["pooled"] == 1, "system"])
        out["covid42"] = bayes.scores_data(scores, systems=[s for s in scores["system"].unique() if s in pool])
    if "covid107" in names and COVID.is_dir():
        out["covid107"] = bayes.scores_data(pd.read_csv(COVID / "round1_data.csv"))
    if "demo" in names:  # the shipped demo collection at its default measure, as `riskreport run bayesian_risk`
        import riskreport as rr

        demo = rr.load_collection("demo")
        out["demo"] = bayes.scores_data(rr.evaluate(demo, demo.default_measure or "nDCG@10").matrix())
    unknown = sorted(set(names) - set(out))
    if unknown:
        raise SystemExit(f"no such data set here: {', '.join(unknown)} (covid42 and covid107 need ../shared)")
    return out


def cell(model: str, data, target_accept: float, tune: int, chains: int, draws: int, seed: int) -> dict:
    """One nutpie run; its gradients per tail ESS and the rest (module docstring)."""
    import arviz as az
    import nutpie

    from riskreport.bayes.fitting.compiled import compiled_model
    from riskreport.bayes.fitting.sampling import layout
    from riskreport.bayes.modelling.models import brms_priors

    compiled = compiled_model(model, data, brms_priors(model, data.y), lambda message: None, layout(data))
    started = time.process_time()
    trace = nutpie.sample(
        compiled, draws=draws, tune=tune, chains=chains, cores=chains, seed=seed, target_accept=target_accept,
        save_warmup=True, progress_bar=False,
    )  # fmt: skip
    cpu = time.process_time() - started
    stats = trace.sample_stats
    warm = trace.warmup_sample_stats
    steps_after = int(stats["n_steps"].sum())
    steps_warm = int(warm["n_steps"].sum())
    effects = "b" if model.startswith("paired") else "r_sys"
    tail = float(np.min(az.ess(trace.posterior[effects], method="tail")[effects].values))
    bulk = float(np.min(az.ess(trace.posterior[effects], method="bulk")[effects].values))
    total = steps_after + steps_warm
    return {
        "steps_per_draw": steps_after / (chains * draws),
        "warm_share": steps_warm / total,
        "tail": tail,
        "bulk": bulk,
        "per_tail_ess": total / tail,
        "divergences": int(stats["diverging"].sum()),
        "us_per_gradient": cpu / total * 1e6,
        "cpu": cpu,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["zoib", "gaussian"])
    parser.add_argument("--data", nargs="+", default=["covid42"])
    parser.add_argument("--target-accept", nargs="+", type=float, default=[0.8, 0.85, 0.9])
    parser.add_argument("--tune", nargs="+", type=int, default=[300, 1000])
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--draws", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}", flush=True)
    print(
        "| data | model | target_accept | warm-up | steps/draw | warm-up share | min tail / bulk ESS "
        "| gradients per tail ESS | divergences | µs/gradient | CPU s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, data in datasets(args.data).items():
        for model in args.models:
            for target_accept in args.target_accept:
                for tune in args.tune:
                    r = cell(model, data, target_accept, tune, args.chains, args.draws, args.seed)
                    print(
                        f"| {name} | {model} | {target_accept} | {tune} | {r['steps_per_draw']:.1f} "
                        f"| {r['warm_share']:.0%} | {r['tail']:,.0f} / {r['bulk']:,.0f} | {r['per_tail_ess']:.1f} "
                        f"| {r['divergences']} | {r['us_per_gradient']:.1f} | {r['cpu']:.1f} |",
                        flush=True,
                    )
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
