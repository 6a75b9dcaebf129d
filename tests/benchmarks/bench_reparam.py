"""Benchmark: the intercept and group effects parameterised as brms does (the old layout rule) against the
zero-sum parameterisation that `fit` samples (`models.build_pymc_model`, `sampling.layout`).

Side by side in one run, per data set, family and layout: the same sampler (nutpie, numba backend, 2 chains,
the same warm-up and draws, target_accept 0.9), and

- ESS per draw: the smallest bulk and tail ESS over r_sys, b, sd_sys, sd_top, divided by the draws;
- gradients per draw (nutpie's `n_steps`, post warm-up) and per ESS (warm-up included);
- µs of CPU per gradient (process CPU time of sampling / every gradient, warm-up included);
- wall and CPU seconds of sampling (compile apart), divergences, and the load average.

Layouts: "rule" is what `fit` samples (`sampling.layout`: each group's deviations u centred unless its
data barely inform it); "zero_sum" centres both groups' u, "zero_sum_noncentred" scales both by sd,
"systems_scaled" scales the systems' only; "+low_rank" after one of them adapts a low-rank mass matrix.
"old" is the model and layout rule of the commit `--reference` (default: the last commit before the
zero-sum parameterisation; read with `git show`, so it runs unchanged in this checkout): brms's non-centred
r = sd·z with a diagonal mass matrix, or, above a predicted intercept–effect correlation of 0.75 (the
demo's few systems), a low-rank mass matrix and the groups whose data dominate their prior centred.

Data sets: `demo` (riskreport's demo collection, its default measure), `zoib42` (TREC-COVID's 42 pooled
runs), `covid107` (all 107 runs of round1_data.csv), `web2012` (TREC Web 2012, 8 runs × 50 topics, ERR@20)
and `campaign` (generated 110 × 249, as bench_bayes_reuse.py); `demo_a10` and `zoib42_a10` are the BRisk⁻
scores of the demo and ZOiB-42 at α = 10 (thesis Eq. 4.5; weak topic effects, where a centred form makes
a funnel). The ../shared ones are skipped when absent. Not collected by the test run. The old layout on
the campaign mixes so slowly (an intercept ESS of 6 in 400 draws, issue 32) that it runs only with
`--old-campaign`, for `--campaign-draws` warm-up iterations and draws.

    python tests/benchmarks/bench_reparam.py [--data demo zoib42 ...] [--families zoib gaussian]
        [--layouts old rule zero_sum zero_sum_noncentred systems_scaled zero_sum+low_rank]
        [--tune 500] [--draws 500] [--json out.json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"
REFERENCE = "0c23c47"  # the last commit with brms's parameterisation and the centred/low-rank layout rule
NAMES = ("b", "sd_sys", "sd_top", "r_sys")
sys.path.insert(0, str(Path(__file__).resolve().parent))


def old_module(name: str, reference: str):
    """riskreport.bayes.`name` as it was at `reference` (git show), imported under another name."""
    source = subprocess.run(
        ["git", "show", f"{reference}:riskreport/bayes/{name}.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"riskreport_old_{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"riskreport_old_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def data_sets(names) -> dict:
    """{name: BayesData} of the data sets asked for that are present."""
    from bench_bayes_reuse import generated

    import riskreport as rr
    from riskreport import bayes
    from riskreport.bayes.posterior.brisk import adjusted_data

    out = {}
    covid = SHARED / "trec-covid-round1"
    for name in names:
        if name in ("demo", "demo_a10"):
            p = rr.resolve_parameters("demo")
            matrix = rr.evaluate(p.collection, p.measure, p.systems).matrix()
            out[name] = adjusted_data(matrix, p.baseline, 10.0) if name == "demo_a10" else bayes.scores_data(matrix)
        elif name in ("zoib42", "covid107", "zoib42_a10") and covid.is_dir():
            scores = pd.read_csv(covid / "round1_data.csv")
            pooled = pd.read_csv(covid / "round1_pooled.csv")
            pool = set(pooled.loc[pooled["pooled"] == 1, "system"])
            systems = [s for s in scores["system"].unique() if name == "covid107" or s in pool]
            out[name] = bayes.scores_data(scores, systems=systems)
            if name == "zoib42_a10":  # the BRisk⁻ scores at α = 10 (thesis Eq. 4.5), baseline BM25R2 as in the report
                matrix = scores[scores["system"].isin(systems)].pivot(index="system", columns="topic", values="score")
                out[name] = adjusted_data(matrix, "bm25_baseline", 10.0)
        elif name == "web2012" and (SHARED / "trec-web-2012").is_dir():
            p = rr.resolve_parameters(str(SHARED / "trec-web-2012"), measure="ERR@20", baseline="indriCASP")
            out[name] = bayes.scores_data(rr.evaluate(p.collection, p.measure, p.systems).matrix())
        elif name == "campaign":
            out[name] = bayes.scores_data(generated(np.random.default_rng(0), 110, 249))
    return out


def old_layout(old_scores, model: str, data) -> tuple[tuple[bool, bool], bool]:
    """The reference commit's `sampling.layout`: (centred groups, low-rank mass matrix)."""
    strong = old_scores.intercept_correlation(data) > 0.75
    if not strong or model == "skew_normal":
        return (False, False), strong
    kappa = old_scores.group_strength(data)
    return (kappa[0] > 0.5, kappa[1] > 0.5), strong


def row(name, data, model, layout, args, old) -> dict:
    import nutpie

    from riskreport.bayes.diagnosis.convergence import ess_bulk, ess_tail
    from riskreport.bayes.fitting import sampling
    from riskreport.bayes.modelling import models

    priors = models.brms_priors(model, data.y)
    low_rank, centred = False, (False, False)
    if layout == "old":
        centred, low_rank = old_layout(old["scores"], model, data)
        pymc_model = old["models"].build_pymc_model(model, data, priors, centred)
        names = old["models"].free_variables(model, centred)
    else:
        fixed = {"zero_sum": (True, True), "zero_sum_noncentred": (False, False), "systems_scaled": (False, True)}
        centred = fixed.get(layout.removesuffix("+low_rank")) or sampling.layout(data)
        low_rank = layout.endswith("+low_rank")
        pymc_model = models.build_pymc_model(model, data, priors, centred)
        names = models.free_variables(model)
    started = time.time()
    compiled = nutpie.compile_pymc_model(pymc_model, backend="numba", var_names=names)
    compile_s = time.time() - started
    draws = args.campaign_draws if name == "campaign" and layout == "old" else args.draws
    tune = args.campaign_draws if name == "campaign" and layout == "old" else args.tune
    load_before = os.getloadavg()[0]
    wall, cpu = time.time(), time.process_time()
    trace = nutpie.sample(
        compiled,
        draws=draws,
        tune=tune,
        chains=2,
        cores=2,
        seed=args.seed,
        save_warmup=True,
        progress_bar=False,
        target_accept=0.9,
        low_rank_modified_mass_matrix=low_rank,
    )
    wall, cpu = time.time() - wall, time.process_time() - cpu
    posterior = trace.posterior
    values = {n: np.asarray(posterior[n]) for n in NAMES if n in posterior}
    if "r_sys" not in values:  # the reference's non-centred systems: r = sd·z
        values["r_sys"] = values["sd_sys"][..., None] * np.asarray(posterior["z_sys"])
    ess, worst = min((float(np.min(f(v))), n) for n, v in values.items() for f in (ess_bulk, ess_tail))
    steps = np.asarray(trace.sample_stats["n_steps"])
    warm = np.asarray(trace.warmup_sample_stats["n_steps"])
    gradients = float(steps.sum() + warm.sum())
    total = steps.size
    return {
        "data": name,
        "n": int(data.n),
        "model": model,
        "layout": layout
        + (f" (centred {centred}, {'low-rank' if low_rank else 'diag'})" if layout == "old" else "")
        + (f" (centred {centred})" if layout == "rule" else ""),
        "draws": int(total),
        "worst": worst,
        "ess_per_draw": ess / total,
        "grads_per_draw": float(steps.mean()),
        "grads_per_ess": gradients / ess,
        "us_per_grad": 1e6 * cpu / gradients,
        "wall_s": wall,
        "cpu_s": cpu,
        "compile_s": compile_s,
        "divergences": int(np.asarray(trace.sample_stats["diverging"]).sum()),
        "load": (load_before, os.getloadavg()[0]),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=["demo", "demo_a10", "zoib42", "web2012", "covid107", "campaign"])
    parser.add_argument("--families", nargs="+", default=["zoib", "gaussian"])
    parser.add_argument("--layouts", nargs="+", default=["old", "rule"])
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--old-campaign", action="store_true", help="also the old layout on the campaign (long)")
    parser.add_argument("--campaign-draws", type=int, default=150, help="warm-up and draws of the old layout there")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--reference", default=REFERENCE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    old = {name: old_module(name, args.reference) for name in ("models", "scores")} if "old" in args.layouts else {}
    rows = []
    print(
        f"{'data':9} {'model':8} {'layout':42} {'ESS/draw':>8} {'grad/draw':>9} {'grad/ESS':>8} {'µs/grad':>8} "
        f"{'wall s':>7} {'CPU s':>7} {'div':>4} load"
    )
    for name, data in data_sets(args.data).items():
        for model in args.families:
            if model == "zoib" and (np.any(data.y < 0) or np.any(data.y > 1)):
                continue
            for layout in args.layouts:
                if name == "campaign" and layout == "old" and not args.old_campaign:
                    continue
                r = row(name, data, model, layout, args, old)
                rows.append(r)
                print(
                    f"{r['data']:9} {r['model']:8} {r['layout']:42} {r['ess_per_draw']:8.3f} {r['grads_per_draw']:9.1f} "
                    f"{r['grads_per_ess']:8.1f} {r['us_per_grad']:8.1f} {r['wall_s']:7.1f} {r['cpu_s']:7.1f} "
                    f"{r['divergences']:4d} {r['load'][0]:.1f}–{r['load'][1]:.1f} {r['worst']}",
                    flush=True,
                )
                if args.json:
                    args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
